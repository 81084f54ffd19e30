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
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apps.h"
#include "apps_net.h"
#include "libmmt.h"

#define WC_MAGIC	0x3130304357544d4dull	/* "MMTWC001" */
#define WC_HDR		24	/* magic, records, payload bytes (u64 LE) */
#define MMTA_MAX_RANKS	64


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

/* this program's settings; the job's are in mmta_net (apps_net.h) */
static struct {
	int n;			/* mappers = reducers */
	unsigned int compute;
	const char *out, *check;	/* --out, --check */
	int json;			/* --json */
} g = {
	.compute = 1,
};

/* the job's: rank, size, MPI or not, PMO levels (apps_net.h) */
#define net mmta_net






/* ---- the data plane: one mmt connection per (mapper, reducer) */

/*
 * Reducer r listens on data_port + m for mapper m; the mappers connect
 * after a barrier.  @conn[i]: the connection to reducer i (a mapper) or
 * from mapper i (a reducer).
 */
static void connect_all(int devfd, int *conn)
{
	int peers[MMTA_MAX_RANKS], accept[MMTA_MAX_RANKS], i;

	for (i = 0; i < g.n; i++) {
		peers[i] = net.rank < g.n ? g.n + i : i;
		accept[i] = net.rank >= g.n;
	}
	mmta_step(1, "connections: listen, then %d", g.n);
	mmta_connect(devfd, g.n, peers, accept, conn);
	mmta_step(1, "connections: made");
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
			mmta_die("out of memory");
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
		mmta_die("the bucket of mapper %d has no header", m);
	recs = get64(p + 8);
	pay = get64(p + 16);
	if (pay != len - WC_HDR)
		mmta_die("the bucket of mapper %d: %llu payload bytes, %zu sent", m,
		    (unsigned long long)pay, len - WC_HDR);
	for (i = 0; i < recs; i++) {
		if (len - off < 4)
			mmta_die("the bucket of mapper %d: record %llu cut", m,
			    (unsigned long long)i);
		wl = p[off] | p[off + 1] << 8 | p[off + 2] << 16 |
		     (uint64_t)p[off + 3] << 24;
		off += 4;
		if (!wl || len - off < wl + 8)
			mmta_die("the bucket of mapper %d: record %llu cut", m,
			    (unsigned long long)i);
		if (mmta_fnv1a(p + off, wl) % g.n != (uint64_t)(net.rank - g.n))
			mmta_die("the bucket of mapper %d: a word of another reducer", m);
		mmta_wc_add(wc, (const char *)p + off, wl, get64(p + off + wl));
		off += wl + 8;
	}
	if (off != len)
		mmta_die("the bucket of mapper %d: %zu bytes after the records", m,
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
		mmta_die("%s: %s", g.check, strerror(errno));
	while ((n = getline(&line, &cap, f)) > 0 && !bad) {
		sp = strchr(line, ' ');
		if (!sp)
			mmta_die("%s: not a WordCount output", g.check);
		if (mmta_fnv1a(line, sp - line) % g.n != (uint64_t)(net.rank - g.n))
			continue;
		bad = k >= wc->used || wc->tab[k].len != (size_t)(sp - line) ||
		      memcmp(wc->tab[k].word, line, wc->tab[k].len) ||
		      strtoull(sp + 1, NULL, 10) != wc->tab[k].count;
		if (bad)
			fprintf(stderr, "mmt-wordcount: reducer %d: differs from %s at its word %zu (%.*s)\n",
				net.rank - g.n, g.check, k, (int)(sp - line), line);
		k++;
	}
	free(line);
	fclose(f);
	if (!bad && k != wc->used) {
		fprintf(stderr, "mmt-wordcount: reducer %d: %zu words, %s has %zu\n",
			net.rank - g.n, wc->used, g.check, k);
		bad = 1;
	}
	return bad;
}

static void write_share(const struct mmta_wc *wc, const char *channel)
{
	char path[4096];
	FILE *f;
	size_t i;

	snprintf(path, sizeof(path), "%s.%s.%d", g.out, channel, net.rank - g.n);
	f = fopen(path, "w");
	if (!f)
		mmta_die("%s: %s", path, strerror(errno));
	for (i = 0; i < wc->used; i++)
		fprintf(f, "%s %llu\n", wc->tab[i].word,
			(unsigned long long)wc->tab[i].count);
	if (fclose(f))
		mmta_die("%s: %s", path, strerror(errno));
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
	struct bucket bk[MMTA_MAX_RANKS];
	uint64_t sizes[MMTA_MAX_RANKS] = { 0 }, allsz[MMTA_MAX_RANKS * MMTA_MAX_RANKS];
	struct mmta_wc wc;
	struct mmt_xfer x;
	double t0, t1, t2, t3, t;
	size_t i;
	int r, e, fd, me = net.rank % g.n;
	unsigned int k;

	mmta_wc_init(&wc);
	mmta_step(1, "%s: barrier before the run", mmta_chan_names[channel]);
	mmta_ctl_barrier();
	t0 = mmta_now();
	if (net.rank < g.n) {		/* map: files me, me + n, ... */
		uint64_t bytes = 0;

		for (i = me; i < nfiles; i += g.n) {
			if (mmta_wc_file(&wc, files[i], &bytes))
				mmta_die("%s: cannot read", files[i]);
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
					mmta_die("%s: cannot read", files[i]);
			mmta_wc_free(&scratch);
		}
		t = mmta_now();
		pack(&wc, bk);
		st.pack = mmta_now() - t;
		for (r = 0; r < g.n; r++)
			sizes[r] = bk[r].len;
	}
	/* the end of the map; the buckets' sizes */
	mmta_step(0, "%s: allgather (bucket sizes)", mmta_chan_names[channel]);
	mmta_ctl_allgather(sizes, sizeof(uint64_t) * g.n, allsz);
	t1 = mmta_now();
	if (net.rank < g.n) {
		for (r = 0; r < g.n; r++) {
			t = mmta_now();
			fd = mmta_make_pmo(devfd, bk[r].len, channel, 0);
			if (mmtu_pmo_write_all(fd, bk[r].buf, bk[r].len, 0) < 0)
				mmta_die("write the bucket into its PMO: %s",
				    mmtu_strerror(errno));
			st.setup += mmta_now() - t;
			t = mmta_now();
			memset(&x, 0, sizeof(x));
			mmta_step(0, "%s: send bucket to rank %d",
				  mmta_chan_names[channel], g.n + r);
			e = mmtu_send(conn[r], fd, channel, 0, net.timeout_ms, &x);
			if (e < 0)
				mmta_die("send bucket %d on the %s channel: %s", r,
				    mmta_chan_names[channel], mmtu_strerror(e));
			st.wire += mmta_now() - t;
			st.kernel_s += x.ns / 1e9;
			st.shuffle_bytes += (double)bk[r].len;
			st.pmo_bytes += (double)mmta_pmo_round(bk[r].len);
			close(fd);
			free(bk[r].buf);
		}
	} else {
		for (r = 0; r < g.n; r++) {
			uint64_t len = allsz[r * g.n + me];

			t = mmta_now();
			fd = mmta_make_pmo(devfd, len, channel, 1);
			st.setup += mmta_now() - t;
			t = mmta_now();
			memset(&x, 0, sizeof(x));
			mmta_step(0, "%s: receive from rank %d",
				  mmta_chan_names[channel], r);
			e = mmtu_recv(conn[r], fd, channel, 0, net.timeout_ms, &x);
			if (e < 0)
				mmta_die("receive from mapper %d on the %s channel: %s",
				    r, mmta_chan_names[channel], mmtu_strerror(e));
			st.wire += mmta_now() - t;
			st.kernel_s += x.ns / 1e9;
			t = mmta_now();
			bk[r].buf = malloc(len ? len : 1);
			bk[r].len = len;
			if (!bk[r].buf)
				mmta_die("out of memory");
			if (mmtu_pmo_read_all(fd, bk[r].buf, len, 0) < 0)
				mmta_die("read the bucket of mapper %d: %s", r,
				    mmtu_strerror(errno));
			st.readout += mmta_now() - t;
			close(fd);
			st.shuffle_bytes += (double)len;
			st.pmo_bytes += (double)mmta_pmo_round(len);
		}
	}
	mmta_step(0, "%s: barrier after the shuffle", mmta_chan_names[channel]);
	mmta_ctl_barrier();			/* the end of the shuffle */
	t2 = mmta_now();
	if (net.rank >= g.n) {		/* reduce: merge, sort, check, write */
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
			write_share(&wc, mmta_chan_names[channel]);
	}
	mmta_step(1, "%s: barrier at the end of the job",
		  mmta_chan_names[channel]);
	mmta_ctl_barrier();			/* the end of the job */
	t3 = mmta_now();
	mmta_wc_free(&wc);
	ph->e2e = t3 - t0;
	ph->map = t1 - t0;
	ph->shuffle = t2 - t1;
	ph->reduce = t3 - t2;
	mmta_step(0, "%s: allgather (timings)", mmta_chan_names[channel]);
	mmta_ctl_allgather(&st, sizeof(st), all);
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
	int n = g.n, s = net.size;
	double comm = ph->e2e > 0 ? ph->shuffle / ph->e2e : 0;

	if (g.json) {
		printf("%s    {\"channel\": \"%s\", \"e2e_s\": %.6f, \"map_s\": %.6f, \"shuffle_s\": %.6f, \"reduce_s\": %.6f, \"comm_share\": %.4f,\n",
		       first ? "" : ",\n", mmta_chan_names[channel], ph->e2e,
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
	       mmta_chan_names[channel], ph->e2e, ph->map, ph->shuffle, ph->reduce,
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
"         [--out PREFIX] [--check REF] [--repeat N] [--warmup N]\n"
"         [--compute-per-byte K] [--json] PATH...\n"
"  2n ranks: 0..n-1 map, n..2n-1 reduce.  Without MPI, --rank and --peers\n"
"  (rank 0 first; its --ctl-port carries the control messages).  Data moves\n"
"  over mmt connections to the --addrs (default: the --peers) on --port + m.\n");
	exit(code);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		MMTA_OPTIONS,
		{ "compute-per-byte", required_argument, NULL, 'K' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct mmta_opts o = { .repeat = 1 };
	int c, devfd, r, i;
	int conn[MMTA_MAX_RANKS];
	struct wc_stats all[MMTA_MAX_RANKS], best[8][MMTA_MAX_RANKS];
	struct phases ph, bph[8] = { 0 };
	struct mmta_kept kept = { 0 };
	int j;
	int k;
	int bad;
	char **files;
	size_t nfiles;

	net.prog = "mmt-wordcount";
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (mmta_opt(&o, c, optarg))
			continue;
		switch (c) {
		case 'K':
			g.compute = mmta_num("compute-per-byte", optarg, 1, 1000);
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
	mmta_opts_done(&o);
	g.out = o.out;
	g.check = o.check;
	g.json = o.json;
	mmta_net_start(&argc, &argv, o.peers, o.addrs);
	if (net.size < 2 || net.size % 2) {
		fprintf(stderr, "mmt-wordcount: %d ranks: want an even number (n mappers, n reducers)\n",
			net.size);
		return 2;
	}
	g.n = net.size / 2;

	devfd = mmta_open_dev(&o);
	if (net.rank < g.n) {
		if (mmta_list_files(argv + optind, argc - optind, &files, &nfiles))
			mmta_die("cannot list the input");
	} else {
		files = NULL;
		nfiles = 0;
	}
	mmta_net_ctl();
	connect_all(devfd, conn);
	if (net.rank == 0 && g.json)
		printf("{\"app\": \"wordcount\", \"mappers\": %d, \"reducers\": %d, \"levels\": %u, \"control\": \"%s\", \"repeat\": %u, \"warmup\": %u, \"compute_per_byte\": %u, \"runs\": [\n",
		       g.n, g.n, net.levels, net.mpi ? "mpi" : "tcp", o.repeat,
		       o.warmup, g.compute);
	else if (net.rank == 0)
		printf("M%dR%d, %u-level MMTs, control plane %s, best of %u; times in s\n"
		       "channel      e2e       map   shuffle    reduce   comm   shuffle-B    send-s  krecv-s  result\n",
		       g.n, g.n, net.levels, net.mpi ? "MPI" : "TCP", o.repeat);
	r = 0;
	/*
	 * --warmup rounds first (checked, not reported), then --repeat
	 * rounds over the channels in a rotated order: every run checked,
	 * per channel the fastest reported, or the first that differs
	 */
	for (k = -(int)o.warmup; k < (int)o.repeat; k++) {
		for (j = 0; j < o.nchan; j++) {
			i = mmta_round_channel(&o, k, j);
			run(devfd, conn, o.channels[i], files, nfiles, &ph, all);
			bad = RSUM(all, mismatch, g.n, net.size) > 0;
			r |= bad;
			if (k < 0)
				continue;
			if (mmta_keep(&kept, i, bad, ph.e2e)) {
				bph[i] = ph;
				memcpy(best[i], all, sizeof(all));
			}
		}
	}
	for (i = 0; i < o.nchan && net.rank == 0; i++)
		report(o.channels[i], &bph[i], best[i], i == 0, i == o.nchan - 1);
	fflush(stdout);
	if (files)
		mmta_free_list(files, nfiles);
	for (i = 0; i < g.n; i++)
		close(conn[i]);
	close(devfd);
	mmta_net_finish();
	return r;
}
