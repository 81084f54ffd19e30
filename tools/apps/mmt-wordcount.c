// SPDX-License-Identifier: GPL-2.0
/*
 * mmt-wordcount - MapReduce WordCount across nodes (paper Figs. 12 and 13,
 * docs/PAPER.md, man/mmt-apps.1): n mappers count the words of their share
 * of the input files, partition the counts by word into n buckets and
 * shuffle bucket r to reducer r as a PMO over an mmt connection on the
 * channel the user picks (MMT_IOC_SEND/RECV: plain, secure or mmt); the
 * reducers merge and write their sorted shares.  The union of the shares
 * equals mmt-wordcount-ref word for word.
 *
 * Ranks 0..n-1 are the mappers, n..2n-1 the reducers (2n ranks).  The
 * control plane (barriers, the buckets' sizes, the timings) is MPI when
 * built as mmt-wordcount-mpi (mpicc -DMMTA_MPI), or a TCP star around
 * rank 0 given by --rank and --peers; the data never goes through it.
 *
 * Usage: see usage() below and man/mmt-apps.1.
 * Exit 0; 1 on a failure (a reducer's share differs from --check, a
 * transfer failed); 2 on a bad argument.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifdef MMTA_MPI
#include <mpi.h>
#endif

#include "apps.h"
#include "libmmt.h"

#define WC_MAGIC	0x3130304357544d4dull	/* "MMTWC001" */
#define WC_HDR		24	/* magic, records, payload bytes (u64 LE) */
#define MAX_RANKS	64

static const char *const chan_names[] = {
	[MMT_CHANNEL_MMT] = "mmt",
	[MMT_CHANNEL_SECURE] = "secure",
	[MMT_CHANNEL_PLAIN] = "plain",
};

/*
 * The timings and counts of one rank for one channel (all doubles: the
 * control plane gathers them as bytes; both ends are this program).
 */
struct wc_stats {
	double pack, setup, wire, readout;	/* shuffle parts, s */
	double kernel_s;	/* the kernel's send/recv time (mmt_xfer.ns) */
	double files, bytes, words;	/* mapper: its input */
	double shuffle_bytes;	/* payload sent or received */
	double pmo_bytes;	/* PMO bytes (whole closures) */
	double distinct;	/* reducer: words in its share */
	double checked;		/* reducer: 1 with --check */
	double mismatch;	/* reducer with --check: 1 if its share differs */
};

static struct {
	int rank, size, n;
	int tcp_fds[MAX_RANKS];	/* rank 0: one per other rank; else [0] */
	char *addrs[MAX_RANKS];	/* the ranks' data-plane addresses */
	unsigned int ctl_port, data_port, timeout_ms, levels, node_id;
	unsigned int repeat, compute;
	const char *out, *check, *key_file;
	uint8_t key[32];
	size_t key_len;
	int json, mpi;
} g = {
	.ctl_port = 7600, .data_port = 7700, .timeout_ms = 120000, .levels = 3,
	.repeat = 1, .compute = 1,
};

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "mmt-wordcount: rank %d: ", g.rank);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
#ifdef MMTA_MPI
	if (g.mpi)
		MPI_Abort(MPI_COMM_WORLD, 1);	/* the other ranks too */
#endif
	exit(1);
}

/* ---- control plane: MPI, or a TCP star around rank 0 */

static void full_io(int fd, void *buf, size_t len, int wr)
{
	char *p = buf;

	while (len) {
		ssize_t n = wr ? write(fd, p, len) : read(fd, p, len);

		if (n <= 0)
			die("control plane: %s", n ? strerror(errno) : "peer closed");
		p += n;
		len -= (size_t)n;
	}
}

static void tcp_init(void)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICHOST }, *ai;
	char port[16];
	int one = 1, fd, i, r;
	double t;

	snprintf(port, sizeof(port), "%u", g.ctl_port);
	if (g.rank == 0) {
		struct sockaddr_in6 sa = { .sin6_family = AF_INET6,
					   .sin6_port = htons(g.ctl_port) };
		int lfd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (lfd < 0 ||
		    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
		    bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) ||
		    listen(lfd, MAX_RANKS))
			die("control plane: listen on port %s: %s", port,
			    strerror(errno));
		for (i = 1; i < g.size; i++) {
			uint32_t who;

			fd = accept(lfd, NULL, NULL);
			if (fd < 0)
				die("control plane: accept: %s", strerror(errno));
			full_io(fd, &who, sizeof(who), 0);
			if (who == 0 || who >= (uint32_t)g.size || g.tcp_fds[who])
				die("control plane: a peer says it is rank %u", who);
			g.tcp_fds[who] = fd;
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		}
		close(lfd);
		return;
	}
	r = getaddrinfo(g.addrs[0], port, &hints, &ai);
	if (r)
		die("control plane: %s: %s", g.addrs[0], gai_strerror(r));
	/* rank 0 may not be listening yet: retry for two minutes */
	for (t = mmta_now();; usleep(200000)) {
		fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			die("control plane: socket: %s", strerror(errno));
		if (!connect(fd, ai->ai_addr, ai->ai_addrlen))
			break;
		close(fd);
		if (mmta_now() - t > 120)
			die("control plane: connect to %s:%s: %s", g.addrs[0],
			    port, strerror(errno));
	}
	freeaddrinfo(ai);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	r = g.rank;
	full_io(fd, &r, sizeof(uint32_t), 1);
	g.tcp_fds[0] = fd;
}

/* every rank's @len bytes of @mine, in rank order, into @all; a barrier */
static void ctl_allgather(const void *mine, size_t len, void *all)
{
	int i;

#ifdef MMTA_MPI
	if (g.mpi) {
		if (MPI_Allgather(mine, (int)len, MPI_BYTE, all, (int)len,
				  MPI_BYTE, MPI_COMM_WORLD) != MPI_SUCCESS)
			die("MPI_Allgather failed");
		return;
	}
#endif
	if (g.rank == 0) {
		memcpy(all, mine, len);
		for (i = 1; i < g.size; i++)
			full_io(g.tcp_fds[i], (char *)all + i * len, len, 0);
		for (i = 1; i < g.size; i++)
			full_io(g.tcp_fds[i], all, len * g.size, 1);
	} else {
		full_io(g.tcp_fds[0], (void *)mine, len, 1);
		full_io(g.tcp_fds[0], all, len * g.size, 0);
	}
}

static void ctl_barrier(void)
{
	char b = 0, all[MAX_RANKS];

	ctl_allgather(&b, 1, all);
}

/* ---- the data plane: one mmt connection per (mapper, reducer) */

/*
 * Reducer r listens on data_port + m for mapper m; the mappers connect
 * after a barrier.  @conn[i]: the connection to reducer i (a mapper) or
 * from mapper i (a reducer).
 */
static void connect_all(int devfd, int *conn)
{
	struct mmt_conn_addr a;
	int lfd[MAX_RANKS], i, me = g.rank % g.n, r;

	if (g.rank >= g.n) {
		for (i = 0; i < g.n; i++) {
			r = mmtu_parse_addr(NULL, g.data_port + i, &a);
			if (!r) {
				lfd[i] = mmtu_listen(devfd, &a, 4, 0);
				r = lfd[i];
			}
			if (r < 0)
				die("listen on port %u: %s", g.data_port + i,
				    mmtu_strerror(r));
		}
	}
	ctl_barrier();
	for (i = 0; i < g.n; i++) {
		if (g.rank < g.n) {
			r = mmtu_parse_addr(g.addrs[g.n + i], g.data_port + me, &a);
			if (r < 0)
				die("%s: not an address literal", g.addrs[g.n + i]);
			conn[i] = mmtu_connect(devfd, &a, g.timeout_ms, 0, NULL);
			r = conn[i];
			if (r < 0)
				die("connect to reducer %d (%s port %u): %s", i,
				    g.addrs[g.n + i], g.data_port + me,
				    mmtu_strerror(r));
		} else {
			conn[i] = mmtu_accept(lfd[i], g.timeout_ms, 0, NULL);
			r = conn[i];
			if (r < 0)
				die("accept from mapper %d: %s", i, mmtu_strerror(r));
			close(lfd[i]);
		}
		/* the secure channel on plain PMOs seals under this key */
		if (g.key_len) {
			r = mmtu_conn_set_key(conn[i], g.key, g.key_len);
			if (r < 0)
				die("connection key: %s", mmtu_strerror(r));
		}
	}
}

/* a PMO of at least @bytes, keyed for @channel: sender (@recv 0) or not */
static int make_pmo(int devfd, uint64_t bytes, unsigned int channel, int recv)
{
	struct mmt_geometry geo = { .levels = (uint8_t)g.levels };
	uint64_t cb = mmtu_geometry_closure_bytes(&geo);
	int fd, r;

	bytes = (bytes + cb - 1) / cb * cb;
	fd = mmtu_pmo_create(devfd, bytes, &geo, MMT_PMO_CLOEXEC, NULL);
	if (fd < 0)
		die("create a PMO of %llu bytes: %s", (unsigned long long)bytes,
		    mmtu_strerror(fd));
	if (channel == MMT_CHANNEL_MMT) {
		r = mmtu_pmo_set_key(fd, g.key, g.key_len,
				     recv ? MMT_KEY_RECEIVE : 0);
		if (r < 0)
			die("key a PMO: %s", mmtu_strerror(r));
	}
	return fd;
}

static uint64_t pmo_round(uint64_t bytes)
{
	struct mmt_geometry geo = { .levels = (uint8_t)g.levels };
	uint64_t cb = mmtu_geometry_closure_bytes(&geo);

	return (bytes + cb - 1) / cb * cb;
}

/* ---- map, shuffle, reduce */

static void put64(unsigned char *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

struct bucket {
	unsigned char *buf;
	size_t len, cap;
	uint64_t records;
};

static void bucket_put(struct bucket *b, const void *p, size_t n)
{
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2;
		b->buf = realloc(b->buf, b->cap);
		if (!b->buf)
			die("out of memory");
	}
	memcpy(b->buf + b->len, p, n);
	b->len += n;
}

/* bucket r: the header, then per word u32 length, the bytes, u64 count */
static void pack(const struct mmta_wc *wc, struct bucket *bk)
{
	unsigned char w[8];
	size_t i;
	int r;

	static const unsigned char hdr[WC_HDR];

	for (r = 0; r < g.n; r++) {
		memset(&bk[r], 0, sizeof(bk[r]));
		bucket_put(&bk[r], hdr, WC_HDR);
	}
	for (i = 0; i < wc->cap; i++) {
		const struct mmta_wc_ent *e = &wc->tab[i];
		struct bucket *b;

		if (!e->word)
			continue;
		b = &bk[mmta_fnv1a(e->word, e->len) % g.n];
		put64(w, e->len);
		bucket_put(b, w, 4);
		bucket_put(b, e->word, e->len);
		put64(w, e->count);
		bucket_put(b, w, 8);
		b->records++;
	}
	for (r = 0; r < g.n; r++) {
		put64(bk[r].buf, WC_MAGIC);
		put64(bk[r].buf + 8, bk[r].records);
		put64(bk[r].buf + 16, bk[r].len - WC_HDR);
	}
}

/* merge one received bucket of mapper @m into @wc; the records checked */
static void unpack(struct mmta_wc *wc, const unsigned char *p, size_t len,
		   int m)
{
	uint64_t recs, pay, i, wl;
	size_t off = WC_HDR;

	if (len < WC_HDR || get64(p) != WC_MAGIC)
		die("the bucket of mapper %d has no header", m);
	recs = get64(p + 8);
	pay = get64(p + 16);
	if (pay != len - WC_HDR)
		die("the bucket of mapper %d: %llu payload bytes, %zu sent", m,
		    (unsigned long long)pay, len - WC_HDR);
	for (i = 0; i < recs; i++) {
		if (len - off < 4)
			die("the bucket of mapper %d: record %llu cut", m,
			    (unsigned long long)i);
		wl = p[off] | p[off + 1] << 8 | p[off + 2] << 16 |
		     (uint64_t)p[off + 3] << 24;
		off += 4;
		if (!wl || len - off < wl + 8)
			die("the bucket of mapper %d: record %llu cut", m,
			    (unsigned long long)i);
		if (mmta_fnv1a(p + off, wl) % g.n != (uint64_t)(g.rank - g.n))
			die("the bucket of mapper %d: a word of another reducer", m);
		mmta_wc_add(wc, (const char *)p + off, wl, get64(p + off + wl));
		off += wl + 8;
	}
	if (off != len)
		die("the bucket of mapper %d: %zu bytes after the records", m,
		    len - off);
}

/*
 * --check REF: the words of the reference (mmt-wordcount-ref --out) that
 * fall in this reducer's bucket, in order, equal its sorted share
 */
static int check_share(const struct mmta_wc *wc)
{
	FILE *f = fopen(g.check, "r");
	char *line = NULL, *sp;
	size_t cap = 0, k = 0;
	ssize_t n;
	int bad = 0;

	if (!f)
		die("%s: %s", g.check, strerror(errno));
	while ((n = getline(&line, &cap, f)) > 0 && !bad) {
		sp = strchr(line, ' ');
		if (!sp)
			die("%s: not a WordCount output", g.check);
		if (mmta_fnv1a(line, sp - line) % g.n != (uint64_t)(g.rank - g.n))
			continue;
		bad = k >= wc->used || wc->tab[k].len != (size_t)(sp - line) ||
		      memcmp(wc->tab[k].word, line, wc->tab[k].len) ||
		      strtoull(sp + 1, NULL, 10) != wc->tab[k].count;
		if (bad)
			fprintf(stderr, "mmt-wordcount: reducer %d: differs from %s at its word %zu (%.*s)\n",
				g.rank - g.n, g.check, k, (int)(sp - line), line);
		k++;
	}
	free(line);
	fclose(f);
	if (!bad && k != wc->used) {
		fprintf(stderr, "mmt-wordcount: reducer %d: %zu words, %s has %zu\n",
			g.rank - g.n, wc->used, g.check, k);
		bad = 1;
	}
	return bad;
}

static void write_share(const struct mmta_wc *wc, const char *channel)
{
	char path[4096];
	FILE *f;
	size_t i;

	snprintf(path, sizeof(path), "%s.%s.%d", g.out, channel, g.rank - g.n);
	f = fopen(path, "w");
	if (!f)
		die("%s: %s", path, strerror(errno));
	for (i = 0; i < wc->used; i++)
		fprintf(f, "%s %llu\n", wc->tab[i].word,
			(unsigned long long)wc->tab[i].count);
	if (fclose(f))
		die("%s: %s", path, strerror(errno));
}

struct phases {
	double e2e, map, shuffle, reduce;
};

/* one run of the job on @channel; rank 0 gets every rank's stats */
static void run(int devfd, const int *conn, unsigned int channel,
		char **files, size_t nfiles, struct phases *ph,
		struct wc_stats *all)
{
	struct wc_stats st = { 0 };
	struct bucket bk[MAX_RANKS];
	uint64_t sizes[MAX_RANKS] = { 0 }, allsz[MAX_RANKS * MAX_RANKS];
	struct mmta_wc wc;
	struct mmt_xfer x;
	double t0, t1, t2, t3, t;
	size_t i;
	int r, e, fd, me = g.rank % g.n;
	unsigned int k;

	mmta_wc_init(&wc);
	ctl_barrier();
	t0 = mmta_now();
	if (g.rank < g.n) {		/* map: files me, me + n, ... */
		uint64_t bytes = 0;

		for (i = me; i < nfiles; i += g.n) {
			if (mmta_wc_file(&wc, files[i], &bytes))
				die("%s: cannot read", files[i]);
			st.files++;
		}
		st.bytes = (double)bytes;
		st.words = (double)wc.words;
		/* --compute-per-byte K: tokenize K times, count once */
		for (k = 1; k < g.compute; k++) {
			struct mmta_wc scratch;

			mmta_wc_init(&scratch);
			for (i = me; i < nfiles; i += g.n)
				if (mmta_wc_file(&scratch, files[i], NULL))
					die("%s: cannot read", files[i]);
			mmta_wc_free(&scratch);
		}
		t = mmta_now();
		pack(&wc, bk);
		st.pack = mmta_now() - t;
		for (r = 0; r < g.n; r++)
			sizes[r] = bk[r].len;
	}
	/* the end of the map; the buckets' sizes */
	ctl_allgather(sizes, sizeof(uint64_t) * g.n, allsz);
	t1 = mmta_now();
	if (g.rank < g.n) {
		for (r = 0; r < g.n; r++) {
			t = mmta_now();
			fd = make_pmo(devfd, bk[r].len, channel, 0);
			if (mmtu_pmo_write_all(fd, bk[r].buf, bk[r].len, 0) < 0)
				die("write the bucket into its PMO: %s",
				    mmtu_strerror(errno));
			st.setup += mmta_now() - t;
			t = mmta_now();
			memset(&x, 0, sizeof(x));
			e = mmtu_send(conn[r], fd, channel, 0, g.timeout_ms, &x);
			if (e < 0)
				die("send bucket %d on the %s channel: %s", r,
				    chan_names[channel], mmtu_strerror(e));
			st.wire += mmta_now() - t;
			st.kernel_s += x.ns / 1e9;
			st.shuffle_bytes += (double)bk[r].len;
			st.pmo_bytes += (double)pmo_round(bk[r].len);
			close(fd);
			free(bk[r].buf);
		}
	} else {
		for (r = 0; r < g.n; r++) {
			uint64_t len = allsz[r * g.n + me];

			t = mmta_now();
			fd = make_pmo(devfd, len, channel, 1);
			st.setup += mmta_now() - t;
			t = mmta_now();
			memset(&x, 0, sizeof(x));
			e = mmtu_recv(conn[r], fd, channel, 0, g.timeout_ms, &x);
			if (e < 0)
				die("receive from mapper %d on the %s channel: %s",
				    r, chan_names[channel], mmtu_strerror(e));
			st.wire += mmta_now() - t;
			st.kernel_s += x.ns / 1e9;
			t = mmta_now();
			bk[r].buf = malloc(len ? len : 1);
			bk[r].len = len;
			if (!bk[r].buf)
				die("out of memory");
			if (mmtu_pmo_read_all(fd, bk[r].buf, len, 0) < 0)
				die("read the bucket of mapper %d: %s", r,
				    mmtu_strerror(errno));
			st.readout += mmta_now() - t;
			close(fd);
			st.shuffle_bytes += (double)len;
			st.pmo_bytes += (double)pmo_round(len);
		}
	}
	ctl_barrier();			/* the end of the shuffle */
	t2 = mmta_now();
	if (g.rank >= g.n) {		/* reduce: merge, sort, check, write */
		for (r = 0; r < g.n; r++) {
			unpack(&wc, bk[r].buf, bk[r].len, r);
			free(bk[r].buf);
		}
		mmta_wc_sort(&wc);
		st.distinct = (double)wc.used;
		st.checked = !!g.check;
		if (g.check)
			st.mismatch = check_share(&wc);
		if (g.out)
			write_share(&wc, chan_names[channel]);
	}
	ctl_barrier();			/* the end of the job */
	t3 = mmta_now();
	mmta_wc_free(&wc);
	ph->e2e = t3 - t0;
	ph->map = t1 - t0;
	ph->shuffle = t2 - t1;
	ph->reduce = t3 - t2;
	ctl_allgather(&st, sizeof(st), all);
}

/* the largest, or the sum, of a field over the ranks @from..@to-1 */
static double field(const struct wc_stats *a, size_t off)
{
	double v;

	memcpy(&v, (const char *)a + off, sizeof(v));
	return v;
}

static double rmax(const struct wc_stats *a, size_t off, int from, int to)
{
	double m = 0;
	int i;

	for (i = from; i < to; i++)
		m = field(&a[i], off) > m ? field(&a[i], off) : m;
	return m;
}

static double rsum(const struct wc_stats *a, size_t off, int from, int to)
{
	double sum = 0;
	int i;

	for (i = from; i < to; i++)
		sum += field(&a[i], off);
	return sum;
}

#define RMAX(a, f, from, to)	rmax(a, offsetof(struct wc_stats, f), from, to)
#define RSUM(a, f, from, to)	rsum(a, offsetof(struct wc_stats, f), from, to)

static void report(unsigned int channel, const struct phases *ph,
		   const struct wc_stats *a, int first, int last)
{
	int n = g.n, s = g.size;
	double comm = ph->e2e > 0 ? ph->shuffle / ph->e2e : 0;

	if (g.json) {
		printf("%s    {\"channel\": \"%s\", \"e2e_s\": %.6f, \"map_s\": %.6f, \"shuffle_s\": %.6f, \"reduce_s\": %.6f, \"comm_share\": %.4f,\n",
		       first ? "" : ",\n", chan_names[channel], ph->e2e,
		       ph->map, ph->shuffle, ph->reduce, comm);
		printf("     \"shuffle_parts_s\": {\"pack\": %.6f, \"pmo_setup\": %.6f, \"send\": %.6f, \"recv\": %.6f, \"readout\": %.6f, \"kernel_send\": %.6f, \"kernel_recv\": %.6f},\n",
		       RMAX(a, pack, 0, n), RMAX(a, setup, 0, s),
		       RMAX(a, wire, 0, n), RMAX(a, wire, n, s),
		       RMAX(a, readout, n, s), RMAX(a, kernel_s, 0, n),
		       RMAX(a, kernel_s, n, s));
		printf("     \"shuffle_bytes\": %.0f, \"pmo_bytes\": %.0f, \"words\": %.0f, \"distinct\": %.0f, \"checked\": %s, \"match\": %s}",
		       RSUM(a, shuffle_bytes, 0, n), RSUM(a, pmo_bytes, 0, n),
		       RSUM(a, words, 0, n), RSUM(a, distinct, n, s),
		       RSUM(a, checked, n, s) == n ? "true" : "false",
		       RSUM(a, checked, n, s) != n ? "null" :
		       RSUM(a, mismatch, n, s) ? "false" : "true");
		if (last)
			printf("\n  ]\n}\n");
		return;
	}
	printf("%-7s %9.3f %9.3f %9.3f %9.3f %6.1f%% %11.0f %10.3f %10.3f %s\n",
	       chan_names[channel], ph->e2e, ph->map, ph->shuffle, ph->reduce,
	       100 * comm, RSUM(a, shuffle_bytes, 0, n),
	       RMAX(a, wire, 0, n), RMAX(a, kernel_s, n, s),
	       RSUM(a, checked, n, s) != n ? "-" :
	       RSUM(a, mismatch, n, s) ? "DIFFERS" : "equal");
}

static void usage(int code)
{
	fprintf(code ? stderr : stdout,
		"usage: mmt-wordcount [--rank R --peers A0,A1,...] [--addrs A0,A1,...]\n"
"         [--channel plain,secure,mmt] [--key-file FILE] [--levels L]\n"
"         [--ctl-port P] [--port P] [--timeout-ms MS] [--node-id N|rank]\n"
"         [--out PREFIX] [--check REF] [--repeat N] [--compute-per-byte K]\n"
"         [--json] PATH...\n"
"  2n ranks: 0..n-1 map, n..2n-1 reduce.  Without MPI, --rank and --peers\n"
"  (rank 0 first; its --ctl-port carries the control messages).  Data moves\n"
"  over mmt connections to the --addrs (default: the --peers) on --port + m.\n");
	exit(code);
}

static void split_list(char *s, char **out, int *n)
{
	char *tok, *save = NULL;

	*n = 0;
	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (*n == MAX_RANKS) {
			fprintf(stderr, "mmt-wordcount: at most %d ranks\n",
				MAX_RANKS);
			exit(2);
		}
		out[(*n)++] = tok;
	}
}

static unsigned int num(const char *opt, const char *s, unsigned long lo,
			unsigned long hi)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || !*s || *end || v < lo || v > hi) {
		fprintf(stderr, "mmt-wordcount: --%s %s: want %lu..%lu\n", opt,
			s, lo, hi);
		exit(2);
	}
	return (unsigned int)v;
}

static void load_key(const char *path)
{
	char buf[80];
	size_t len;
	int fd = open(path, O_RDONLY | O_CLOEXEC), r;
	ssize_t n;

	if (fd < 0) {
		fprintf(stderr, "mmt-wordcount: %s: %s\n", path, strerror(errno));
		exit(2);
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	len = n > 0 ? (size_t)n : 0;
	while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
		len--;
	r = mmtu_key_from_hex(buf, len, g.key, NULL);
	explicit_bzero(buf, sizeof(buf));
	if (r < 0) {
		fprintf(stderr, "mmt-wordcount: --key-file %s: want 32 or 64 hex digits\n",
			path);
		exit(2);
	}
	g.key_len = (size_t)r;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "rank", required_argument, NULL, 'r' },
		{ "peers", required_argument, NULL, 'P' },
		{ "addrs", required_argument, NULL, 'A' },
		{ "channel", required_argument, NULL, 'c' },
		{ "key-file", required_argument, NULL, 'k' },
		{ "levels", required_argument, NULL, 'l' },
		{ "ctl-port", required_argument, NULL, 'C' },
		{ "port", required_argument, NULL, 'p' },
		{ "timeout-ms", required_argument, NULL, 't' },
		{ "node-id", required_argument, NULL, 'i' },
		{ "out", required_argument, NULL, 'o' },
		{ "check", required_argument, NULL, 'x' },
		{ "repeat", required_argument, NULL, 'n' },
		{ "compute-per-byte", required_argument, NULL, 'K' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	char *peers[MAX_RANKS], *addrs[MAX_RANKS], *chans = NULL, *tok, *save;
	char *peer_arg = NULL, *addr_arg = NULL, chan_arg[] = "plain,secure,mmt";
	unsigned int channels[8];
	int npeers = 0, naddrs = 0, nchan = 0, c, devfd, r, i;
	int conn[MAX_RANKS];
	struct wc_stats all[MAX_RANKS], best[MAX_RANKS];
	struct phases ph, bph = { 0 };
	unsigned int k;
	int bad;
	char **files;
	size_t nfiles;

	g.rank = -1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			g.rank = (int)num("rank", optarg, 0, MAX_RANKS - 1);
			break;
		case 'P':
			peer_arg = optarg;
			break;
		case 'A':
			addr_arg = optarg;
			break;
		case 'c':
			chans = optarg;
			break;
		case 'k':
			g.key_file = optarg;
			break;
		case 'l':
			g.levels = num("levels", optarg, 1, 4);
			break;
		case 'C':
			g.ctl_port = num("ctl-port", optarg, 1, 65535);
			break;
		case 'p':
			g.data_port = num("port", optarg, 1, 65535 - MAX_RANKS);
			break;
		case 't':
			g.timeout_ms = num("timeout-ms", optarg, 1, 600000);
			break;
		case 'i':	/* "rank": rank + 1, the same argument for every rank */
			g.node_id = strcmp(optarg, "rank") ?
				    num("node-id", optarg, 1, 65535) : ~0u;
			break;
		case 'o':
			g.out = optarg;
			break;
		case 'x':
			g.check = optarg;
			break;
		case 'n':
			g.repeat = num("repeat", optarg, 1, 1000);
			break;
		case 'K':
			g.compute = num("compute-per-byte", optarg, 1, 1000);
			break;
		case 'j':
			g.json = 1;
			break;
		case 'h':
			usage(0);
			break;
		default:
			usage(2);
		}
	}
	if (optind == argc)
		usage(2);
	for (tok = strtok_r(chans ? chans : chan_arg, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		for (c = 0; c < 3 && strcmp(tok, chan_names[c]); c++)
			;
		if (c == 3 || nchan == 8) {
			fprintf(stderr, "mmt-wordcount: --channel %s: want plain, secure or mmt\n",
				tok);
			return 2;
		}
		channels[nchan++] = (unsigned int)c;
		if (c != MMT_CHANNEL_PLAIN && !g.key_file) {
			fprintf(stderr, "mmt-wordcount: the %s channel needs --key-file\n",
				tok);
			return 2;
		}
	}
	if (g.key_file)
		load_key(g.key_file);
	if (peer_arg)
		split_list(peer_arg, peers, &npeers);
	if (addr_arg)
		split_list(addr_arg, addrs, &naddrs);

#ifdef MMTA_MPI
	if (g.rank < 0 && !peer_arg) {
		MPI_Init(&argc, &argv);
		MPI_Comm_rank(MPI_COMM_WORLD, &g.rank);
		MPI_Comm_size(MPI_COMM_WORLD, &g.size);
		g.mpi = 1;
	}
#endif
	if (!g.mpi) {
		if (g.rank < 0 || !npeers || g.rank >= npeers) {
			fprintf(stderr, "mmt-wordcount: --rank R and --peers A0,A1,... (R below their number)%s\n",
#ifdef MMTA_MPI
				", or run it under mpiexec"
#else
				"; mmt-wordcount-mpi runs under mpiexec"
#endif
				);
			return 2;
		}
		g.size = npeers;
	}
	if (!naddrs && !g.mpi) {
		memcpy(addrs, peers, sizeof(peers));
		naddrs = npeers;
	}
	if (g.size < 2 || g.size % 2 || g.size > MAX_RANKS || naddrs != g.size) {
		fprintf(stderr, "mmt-wordcount: %d ranks, %d data addresses: want an even number of ranks (n mappers, n reducers) and one --addrs entry each\n",
			g.size, naddrs);
		return 2;
	}
	memcpy(g.addrs, addrs, sizeof(addrs));
	g.n = g.size / 2;

	devfd = mmtu_open();
	if (devfd < 0)
		die("/dev/mmt: %s", mmtu_strerror(devfd));
	if (g.node_id == ~0u)
		g.node_id = (unsigned int)g.rank + 1;
	if (g.node_id) {
		r = mmtu_set_node_id(devfd, g.node_id);
		if (r < 0)
			die("node id %u: %s", g.node_id, mmtu_strerror(r));
	}
	if (g.rank < g.n) {
		if (mmta_list_files(argv + optind, argc - optind, &files, &nfiles))
			die("cannot list the input");
	} else {
		files = NULL;
		nfiles = 0;
	}
	if (!g.mpi)
		tcp_init();
	connect_all(devfd, conn);
	if (g.rank == 0 && g.json)
		printf("{\"app\": \"wordcount\", \"mappers\": %d, \"reducers\": %d, \"levels\": %u, \"control\": \"%s\", \"repeat\": %u, \"compute_per_byte\": %u, \"runs\": [\n",
		       g.n, g.n, g.levels, g.mpi ? "mpi" : "tcp", g.repeat,
		       g.compute);
	else if (g.rank == 0)
		printf("M%dR%d, %u-level MMTs, control plane %s, best of %u; times in s\n"
		       "channel      e2e       map   shuffle    reduce   comm   shuffle-B    send-s  krecv-s  result\n",
		       g.n, g.n, g.levels, g.mpi ? "MPI" : "TCP", g.repeat);
	r = 0;
	for (i = 0; i < nchan; i++) {
		/* --repeat: every run checked, the fastest reported */
		for (k = 0; k < g.repeat; k++) {
			run(devfd, conn, channels[i], files, nfiles, &ph, all);
			bad = RSUM(all, mismatch, g.n, g.size) > 0;
			/* a run that differs is the one reported */
			if (!k || (!r && (bad || ph.e2e < bph.e2e))) {
				bph = ph;
				memcpy(best, all, sizeof(best));
			}
			r |= bad;
		}
		if (g.rank == 0)
			report(channels[i], &bph, best, i == 0, i == nchan - 1);
		fflush(stdout);
	}
	if (files)
		mmta_free_list(files, nfiles);
	for (i = 0; i < g.n; i++)
		close(conn[i]);
	close(devfd);
	explicit_bzero(g.key, sizeof(g.key));
#ifdef MMTA_MPI
	if (g.mpi)
		MPI_Finalize();
#endif
	return r;
}
