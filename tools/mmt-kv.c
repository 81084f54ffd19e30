// SPDX-License-Identifier: GPL-2.0
/*
 * mmt-kv.c - a small key-value store whose data lives only in a PMO, served
 * over TCP, that migrates live to another node (docs/MIGRATION.md, "The
 * key-value demo"; `make demo-migrate`).
 *
 *   mmt-kv src -a PEER [options]   serve on TCP port -p from a new keyed PMO;
 *                                  after -S requests, migrate the PMO to PEER
 *                                  (rdma_cm port -m) while serving on; once
 *                                  a write fails with EPERM (the PMO moved),
 *                                  answer "MOVED" and exit
 *   mmt-kv dst [options]           listen on rdma_cm port -m, receive the
 *                                  migration into a receive PMO, then serve
 *                                  the same store on TCP port -p until QUIT
 *   mmt-kv client -a A -b B [opts] PUT/GET against A, follow MOVED to B (it
 *                                  retries the connect until B serves),
 *                                  then check every key against B
 *
 * The store: an open-addressing hash table (FNV-1a, linear probing) of
 * 128-byte slots filling the whole PMO; every slot is read with pread() and
 * written with pwrite() through the module, so nothing of the store is kept
 * in the server's own memory.  A zero slot is empty (a keyed PMO reads as
 * zeros until written).
 *
 * The wire: one request per line, one answer per line.
 *   PUT key value   -> OK | ERR errno | MOVED addr k=v...
 *   GET key         -> VAL value | NONE | ERR errno | MOVED addr k=v...
 *   QUIT            -> BYE (the server exits)
 * "MOVED" carries the migration's figures as the source reports them
 * (MMT_IOC_MIGRATE_INFO): downtime_ms, expected_ms, total_ms, setup_ms,
 * rounds, closures_sent, bytes_sent, peak_extra.  A write refused with EPERM
 * did not happen: the client sends it again to B.  A write is acknowledged
 * only by "OK"; the client logs the value of every acknowledged write.
 *
 * The measurement mode (no client): `src -W PCT -S 0` migrates at once while
 * a writer thread dirties PCT % of the closures (one byte each) every time
 * a round starts (POLLPRI / MMT_IOC_MIGRATE_INFO); `dst -Q` exits after the
 * commit.  Both print the peak growth of the kernel's Slab + VmallocUsed
 * (/proc/meminfo, sampled every 10 ms during the migration) beside the
 * module's own peak_extra_bytes.
 *
 * Options: -p TCP port (7700), -m rdma_cm port (7701), -M PMO MiB (8),
 * -l MMT levels (2: 128 KiB closures), -t the table's KiB (the first
 * part of the PMO; default the whole PMO: both ends must agree), -i node id, -d downtime limit ms
 * (0: the module's 300), -r round limit (0: the module's), -w window,
 * -S requests before migrating (200), -W PCT, -Q; client: -N requests at B
 * after the move (200), -k keys (2000), -u microseconds between requests
 * (0), -T seconds at most (120).
 *
 * Exit: 0 ok; 1 usage; 2 error; 3 a check failed (client: a value differs).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "mmt.h"
#include "libmmt.h"

#define SLOT_BYTES	128
#define KEY_MAX		55
#define VAL_MAX		63
#define SLOT_USED	0x4b56u

/* One slot of the table, as stored in the PMO. */
struct slot {
	uint16_t used;
	uint8_t klen, vlen;
	char key[KEY_MAX + 1];
	char val[VAL_MAX + 1 - 4];
	uint8_t pad[SLOT_BYTES - 4 - (KEY_MAX + 1) - (VAL_MAX + 1 - 4)];
};

_Static_assert(sizeof(struct slot) == SLOT_BYTES, "slot size");

static const uint8_t demo_key[16] = "mmt-kv-demo-key";

struct opts {
	const char *a, *b;
	unsigned int port, mport, mib, levels, node, downtime, rounds, window;
	unsigned int start_after, pct, quit_after, n_b, keys, us, secs;
	unsigned int table_kib;
};

static struct opts o = {
	.port = 7700, .mport = 7701, .mib = 8, .levels = 2, .start_after = 200,
	.n_b = 200, .keys = 2000, .secs = 120,
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "mmt-kv: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(2);
}

/* ------------------------------------------------------------ the store */

static int pmo = -1;
static uint64_t nslots;

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 1099511628211ull;
	return h;
}

/*
 * Find @key's slot, or the empty slot where it would go.  Returns the slot
 * index with *found set, or -errno (pread failed: EPERM once the PMO moved),
 * or -ENOSPC (the table is full).
 */
static int64_t kv_find(const char *key, struct slot *s, int *found)
{
	uint64_t i = fnv1a(key) % nslots, n;
	ssize_t r;

	for (n = 0; n < nslots; n++, i = (i + 1) % nslots) {
		r = pread(pmo, s, sizeof(*s), i * SLOT_BYTES);
		if (r < 0)
			return -errno;
		if (r != sizeof(*s))
			return -EIO;
		if (s->used != SLOT_USED) {
			*found = 0;
			return i;
		}
		if (!strncmp(s->key, key, sizeof(s->key))) {
			*found = 1;
			return i;
		}
	}
	return -ENOSPC;
}

static int kv_put(const char *key, const char *val)
{
	struct slot s;
	int found;
	int64_t i = kv_find(key, &s, &found);
	ssize_t r;

	if (i < 0)
		return i;
	memset(&s, 0, sizeof(s));
	s.used = SLOT_USED;
	s.klen = strlen(key);
	s.vlen = strlen(val);
	memcpy(s.key, key, s.klen);
	memcpy(s.val, val, s.vlen);
	r = pwrite(pmo, &s, sizeof(s), i * SLOT_BYTES);
	if (r < 0)
		return -errno;
	return r == sizeof(s) ? 0 : -EIO;
}

/* 1 found (@val filled), 0 not there, -errno */
static int kv_get(const char *key, char *val)
{
	struct slot s;
	int found;
	int64_t i = kv_find(key, &s, &found);

	if (i < 0)
		return i;
	if (!found)
		return 0;
	memcpy(val, s.val, s.vlen);
	val[s.vlen] = 0;
	return 1;
}

static uint64_t pmo_bytes(void)
{
	return (uint64_t)o.mib << 20;
}

static int pmo_new(int dev, uint64_t key_flags)
{
	struct mmt_geometry g = { .levels = o.levels };
	int fd, err;

	fd = mmtu_pmo_create(dev, pmo_bytes(), &g, 0, NULL);
	if (fd < 0)
		die("MMT_IOC_PMO_CREATE", fd);
	err = mmtu_pmo_set_key(fd, demo_key, sizeof(demo_key), key_flags);
	if (err)
		die("MMT_IOC_PMO_SET_KEY", err);
	nslots = pmo_bytes() / SLOT_BYTES;
	if (o.table_kib && ((uint64_t)o.table_kib << 10) / SLOT_BYTES < nslots)
		nslots = ((uint64_t)o.table_kib << 10) / SLOT_BYTES;
	return fd;
}

/* --------------------------------------- kernel memory (/proc/meminfo) */

static long long meminfo_kb(void)
{
	char line[128];
	long long v, sum = 0;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Slab: %lld", &v) == 1 ||
		    sscanf(line, "VmallocUsed: %lld", &v) == 1)
			sum += v;
	}
	fclose(f);
	return sum;
}

struct sampler {
	pthread_t t;
	volatile int stop;
	long long base_kb, peak_kb;
};

static void *sampler_main(void *arg)
{
	struct sampler *s = arg;

	while (!s->stop) {
		long long v = meminfo_kb();

		if (v > s->peak_kb)
			s->peak_kb = v;
		usleep(10000);
	}
	return NULL;
}

static void sampler_start(struct sampler *s)
{
	s->stop = 0;
	s->base_kb = s->peak_kb = meminfo_kb();
	pthread_create(&s->t, NULL, sampler_main, s);
}

static long long sampler_stop(struct sampler *s)
{
	s->stop = 1;
	pthread_join(s->t, NULL);
	return (s->peak_kb - s->base_kb) * 1024;
}

/* ------------------------------------------------------ the migration */

static struct mmt_migrate_info mig_info;
static int mig_ret = 1;		/* 1: not run yet */
static int mig_conn = -1;
static pthread_t mig_thread;
static int mig_started;
static struct sampler mig_mem;
static long long mig_kmem;

static void info_line(const char *who, const struct mmt_migrate_info *i,
		      int ret)
{
	printf("%s: migration %s%s%s: rounds %u, dirty syncs %llu, closures "
	       "sent %llu of %llu, bytes %llu, total %.1f ms, setup %.1f ms, "
	       "downtime %.1f ms (expected %.1f ms), peak extra %llu bytes "
	       "(module), kernel Slab+VmallocUsed peak growth %lld bytes\n",
	       who, ret ? "FAILED " : "committed", ret ? strerror(-ret) : "",
	       ret && (i->flags & MMT_MIG_F_OUTCOME_UNKNOWN) ?
	       " (outcome unknown)" : "",
	       i->round, (unsigned long long)i->dirty_syncs,
	       (unsigned long long)i->closures_sent,
	       (unsigned long long)i->closures,
	       (unsigned long long)i->bytes_sent, i->total_ns / 1e6,
	       i->setup_ns / 1e6, i->downtime_ns / 1e6,
	       i->expected_downtime_ns / 1e6,
	       (unsigned long long)i->peak_extra_bytes, mig_kmem);
	fflush(stdout);
}

/*
 * The writer of the measurement mode: PCT % of the closures (rounded up)
 * written in every pre-copy round, spread over the round: by the time the
 * round has sent a fraction f of the closures it started with (the dirty
 * count of the last sync; all of them in round 1), f * PCT % of the
 * closures were written, one byte each in a random closure.
 */
static void *pct_writer_main(void *arg)
{
	uint64_t closure = mmtu_geometry_closure_bytes(
		&(struct mmt_geometry){ .levels = o.levels });
	uint64_t closures = pmo_bytes() / closure, want, done = 0;
	uint64_t cs0 = 0, d0 = 1;
	uint32_t x = 2463534242u, seen = 0;
	struct mmt_migrate_info i;
	struct pollfd p;

	(void)arg;
	want = (closures * o.pct + 99) / 100;
	for (;;) {
		uint64_t goal;

		p.fd = mig_conn;
		p.events = POLLPRI;
		poll(&p, 1, 2);
		memset(&i, 0, sizeof(i));
		i.size = sizeof(i);
		if (mmtu_migrate_info(mig_conn, &i))
			continue;
		if (i.phase >= MMT_MIG_PHASE_HANDOVER)
			break;
		if (i.phase != MMT_MIG_PHASE_PRECOPY || !i.round)
			continue;
		if (i.round != seen) {
			seen = i.round;
			cs0 = i.closures_sent;
			d0 = i.dirty ? i.dirty : 1;
			done = 0;
		}
		goal = want * (i.closures_sent - cs0) / d0;
		if (goal > want)
			goal = want;
		if (!done && want)
			goal = goal ? goal : 1;	/* one early in each round */
		for (; done < goal; done++) {
			uint8_t b = x;

			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			if (pwrite(pmo, &b, 1, (x % closures) * closure +
				   (x >> 8) % closure) != 1)
				return NULL;
		}
	}
	return NULL;
}

static void *mig_main(void *arg)
{
	struct mmt_conn_addr addr;
	int dev = *(int *)arg, err, tries;
	pthread_t w;

	err = mmtu_parse_addr(o.a, o.mport, &addr);
	if (err)
		die("peer address", err);
	for (tries = 0; tries < 100; tries++) {
		mig_conn = mmtu_connect(dev, &addr, 10000, 0, NULL);
		if (mig_conn != -ECONNREFUSED)
			break;
		usleep(100000);
	}
	if (mig_conn < 0) {
		mig_ret = mig_conn;
		return NULL;
	}
	if (o.pct)
		pthread_create(&w, NULL, pct_writer_main, NULL);
	sampler_start(&mig_mem);
	mig_info.size = sizeof(mig_info);
	mig_ret = mmtu_migrate_send(mig_conn, pmo, o.downtime, o.rounds,
				    o.window, 30000, &mig_info);
	mig_kmem = sampler_stop(&mig_mem);
	if (o.pct)
		pthread_join(w, NULL);
	info_line("src", &mig_info, mig_ret);
	return NULL;
}

/* ------------------------------------------------------- the server */

static int tcp_listen(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(o.port) };
	int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		die("socket", errno);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 4))
		die("bind/listen", errno);
	return fd;
}

/* Read one line (without its newline) into @buf; 0 at EOF, -1 on error. */
static int read_line(int fd, char *buf, size_t len, char *rb, size_t *rl)
{
	char *nl;
	ssize_t r;

	for (;;) {
		nl = memchr(rb, '\n', *rl);
		if (nl) {
			size_t n = nl - rb;

			if (n >= len)
				n = len - 1;
			memcpy(buf, rb, n);
			buf[n] = 0;
			*rl -= nl + 1 - rb;
			memmove(rb, nl + 1, *rl);
			return 1;
		}
		if (*rl >= 4096)
			return -1;
		r = read(fd, rb + *rl, 4096 - *rl);
		if (r <= 0)
			return r < 0 ? -1 : 0;
		*rl += r;
	}
}

static int write_str(int fd, const char *s)
{
	size_t n = strlen(s);
	ssize_t r;

	while (n) {
		r = write(fd, s, n);
		if (r <= 0)
			return -1;
		s += r;
		n -= r;
	}
	return 0;
}

static void moved_line(char *out, size_t len)
{
	const struct mmt_migrate_info *i = &mig_info;

	snprintf(out, len, "MOVED %s downtime_ms=%.1f expected_ms=%.1f "
		 "total_ms=%.1f setup_ms=%.1f rounds=%u closures_sent=%llu "
		 "bytes_sent=%llu peak_extra=%llu kmem_growth=%lld\n",
		 o.a, i->downtime_ns / 1e6, i->expected_downtime_ns / 1e6,
		 i->total_ns / 1e6, i->setup_ns / 1e6, i->round,
		 (unsigned long long)i->closures_sent,
		 (unsigned long long)i->bytes_sent,
		 (unsigned long long)i->peak_extra_bytes, mig_kmem);
}

/*
 * Serve clients one at a time.  @src: start the migration after
 * o.start_after requests; answer MOVED once the PMO moved, then return.
 */
static int serve(int dev, int src)
{
	char rb[4096], line[256], out[512], val[VAL_MAX + 1];
	unsigned long long served = 0;
	int lfd = tcp_listen(), cfd, r, one = 1;
	size_t rl;

	printf("%s: serving on TCP port %u, %llu slots of %d bytes in a "
	       "%u MiB PMO\n", src ? "src" : "dst", o.port,
	       (unsigned long long)nslots, SLOT_BYTES, o.mib);
	fflush(stdout);
	for (;;) {
		if (src && !mig_started && served >= o.start_after) {
			mig_started = 1;
			pthread_create(&mig_thread, NULL, mig_main, &dev);
		}
		if (src && o.pct && mig_started) {
			/* measurement mode: no client */
			pthread_join(mig_thread, NULL);
			return mig_ret ? 2 : 0;
		}
		cfd = accept(lfd, NULL, NULL);
		if (cfd < 0)
			die("accept", errno);
		setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		rl = 0;
		while ((r = read_line(cfd, line, sizeof(line), rb, &rl)) > 0) {
			char *k = line + 4, *v;
			int err = 0;

			if (src && !mig_started && served >= o.start_after) {
				mig_started = 1;
				pthread_create(&mig_thread, NULL, mig_main,
					       &dev);
			}
			served++;
			if (!strncmp(line, "PUT ", 4) &&
			    (v = strchr(k, ' '))) {
				*v++ = 0;
				if (strlen(k) > KEY_MAX || strlen(v) > VAL_MAX - 4)
					err = -EINVAL;
				else
					err = kv_put(k, v);
				if (!err)
					snprintf(out, sizeof(out), "OK\n");
			} else if (!strncmp(line, "GET ", 4)) {
				err = kv_get(k, val);
				if (err > 0)
					snprintf(out, sizeof(out), "VAL %s\n",
						 val);
				else if (!err)
					snprintf(out, sizeof(out), "NONE\n");
				err = err < 0 ? err : 0;
			} else if (!strcmp(line, "QUIT")) {
				write_str(cfd, "BYE\n");
				printf("%s: QUIT after %llu requests\n",
				       src ? "src" : "dst", served);
				close(cfd);
				close(lfd);
				return 0;
			} else {
				err = -EINVAL;
			}
			if (err == -EPERM && src && mig_started) {
				/* the PMO moved: the write did not happen */
				pthread_join(mig_thread, NULL);
				if (!mig_ret) {
					moved_line(out, sizeof(out));
					write_str(cfd, out);
					printf("src: moved after %llu requests; "
					       "told the client: %s", served,
					       out);
					close(cfd);
					close(lfd);
					return 0;
				}
			}
			if (err)
				snprintf(out, sizeof(out), "ERR %d\n", -err);
			if (write_str(cfd, out))
				break;
		}
		close(cfd);
		if (src && mig_started && !mig_ret) {
			/* moved while no request was pending */
			pthread_join(mig_thread, NULL);
			return 0;
		}
	}
}

static int cmd_src(void)
{
	int dev = mmtu_open(), err;

	if (dev < 0)
		die("/dev/mmt", dev);
	if (!o.a) {
		fprintf(stderr, "mmt-kv src: -a PEER is required\n");
		return 1;
	}
	if (o.node && (err = mmtu_set_node_id(dev, o.node)))
		die("MMT_IOC_SET_NODE_ID", err);
	pmo = pmo_new(dev, 0);
	err = serve(dev, 1);
	if (mig_ret)
		fprintf(stderr, "src: the store did not move (%s)\n",
			mig_ret == 1 ? "no migration" : strerror(-mig_ret));
	return err ? err : mig_ret ? 2 : 0;
}

static int cmd_dst(void)
{
	struct mmt_migrate_info i = { .size = sizeof(i) };
	struct mmt_conn_addr addr;
	int dev = mmtu_open(), lfd, conn, err;

	if (dev < 0)
		die("/dev/mmt", dev);
	if (o.node && (err = mmtu_set_node_id(dev, o.node)))
		die("MMT_IOC_SET_NODE_ID", err);
	pmo = pmo_new(dev, MMT_KEY_RECEIVE);
	err = mmtu_parse_addr(NULL, o.mport, &addr);
	if (err)
		die("address", err);
	lfd = mmtu_listen(dev, &addr, 1, 0);
	if (lfd < 0)
		die("MMT_IOC_LISTEN", lfd);
	printf("dst: waiting for the migration on rdma_cm port %u\n", o.mport);
	fflush(stdout);
	conn = mmtu_accept(lfd, 600000, 0, NULL);
	if (conn < 0)
		die("MMT_IOC_ACCEPT", conn);
	sampler_start(&mig_mem);
	err = mmtu_migrate_recv(conn, pmo, 0, 0, 30000, &i);
	mig_kmem = sampler_stop(&mig_mem);
	info_line("dst", &i, err);
	if (err)
		return 2;
	if (o.quit_after)
		return 0;
	return serve(dev, 0);
}

/* ------------------------------------------------------- the client */

struct conn {
	int fd;
	char rb[4096];
	size_t rl;
};

static int tcp_connect(const char *host, int retry_secs)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(o.port) };
	double end = now() + retry_secs;
	int fd, one = 1;

	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
		return -EINVAL;
	for (;;) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0)
			return -errno;
		if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
				   sizeof(one));
			return fd;
		}
		close(fd);
		if (now() > end)
			return -ETIMEDOUT;
		usleep(20000);
	}
}

/* Send @req, read the answer line into @ans; -1 if the connection broke */
static int rpc(struct conn *c, const char *req, char *ans, size_t len)
{
	if (write_str(c->fd, req))
		return -1;
	return read_line(c->fd, ans, len, c->rb, &c->rl) > 0 ? 0 : -1;
}

static void value_of(char *v, size_t len, unsigned int key, uint64_t seq)
{
	snprintf(v, len, "v%u-%llu", key, (unsigned long long)seq);
}

static double field(const char *s, const char *name)
{
	const char *p = strstr(s, name);

	return p ? atof(p + strlen(name)) : -1;
}

static int cmd_client(void)
{
	uint64_t *log, seq = 0, acked = 0, at_a = 0, at_b = 0, puts = 0;
	uint64_t gets = 0, retried = 0, bad = 0;
	char req[256], ans[512], want[64], moved[512] = "";
	double t0, last, gap = 0, gap_at = 0, end;
	const char *where = "A";
	int on_b = 0, gap_move = 0;
	uint32_t x = 88172645u;
	struct conn c = { 0 };
	unsigned int k;

	if (!o.a || !o.b) {
		fprintf(stderr, "mmt-kv client: -a A and -b B are required\n");
		return 1;
	}
	log = calloc(o.keys, sizeof(*log));
	if (!log)
		die("calloc", ENOMEM);
	c.fd = tcp_connect(o.a, 30);
	if (c.fd < 0)
		die("connect to A", c.fd);
	t0 = last = now();
	end = t0 + o.secs;
	while (!on_b || at_b < o.n_b) {
		int is_get, crossed = 0;

		if (now() > end) {
			printf("client: NOT MOVED: %.0f s passed (%llu requests"
			       " at A)\n", now() - t0,
			       (unsigned long long)at_a);
			return 3;
		}
		if (o.us)
			usleep(o.us);
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		k = x % o.keys;
		is_get = (x >> 24) % 4 == 0 && log[k];
		seq++;
		if (is_get) {
			snprintf(req, sizeof(req), "GET k%u\n", k);
		} else {
			value_of(want, sizeof(want), k, seq);
			snprintf(req, sizeof(req), "PUT k%u %s\n", k, want);
		}
again:
		if (rpc(&c, req, ans, sizeof(ans))) {
			/* A went away without MOVED: go to B and retry */
			close(c.fd);
			crossed = 1;
			retried++;
			printf("client: the connection to %s broke; retrying "
			       "at B (%s)\n", where, o.b);
			c = (struct conn){ 0 };
			c.fd = tcp_connect(o.b, 60);
			if (c.fd < 0)
				die("connect to B", c.fd);
			on_b = 1;
			where = "B";
			goto again;
		}
		if (!strncmp(ans, "MOVED ", 6)) {
			if (on_b) {
				printf("client: MOVED from B?\n");
				return 3;
			}
			snprintf(moved, sizeof(moved), "%s", ans);
			printf("client: A answered %s\n", ans);
			close(c.fd);
			c = (struct conn){ 0 };
			c.fd = tcp_connect(o.b, 60);
			if (c.fd < 0)
				die("connect to B", c.fd);
			on_b = 1;
			where = "B";
			crossed = 1;
			retried++;
			goto again;
		}
		if (is_get) {
			gets++;
			value_of(want, sizeof(want), k, log[k]);
			if (strncmp(ans, "VAL ", 4) || strcmp(ans + 4, want)) {
				printf("client: GET k%u at %s: '%s', logged "
				       "'%s'\n", k, where, ans, want);
				bad++;
			}
		} else {
			if (strcmp(ans, "OK")) {
				printf("client: PUT k%u at %s: '%s'\n", k,
				       where, ans);
				return 3;
			}
			puts++;
			log[k] = seq;
		}
		acked++;
		if (on_b)
			at_b++;
		else
			at_a++;
		{
			double t = now();

			if (t - last > gap) {
				gap = t - last;
				gap_at = last - t0;
				gap_move = crossed;
			}
			last = t;
		}
	}
	printf("client: %llu requests acknowledged (%llu PUT, %llu GET) in "
	       "%.1f s: %llu at A, %llu at B; %llu request(s) sent again at B"
	       "\n", (unsigned long long)acked, (unsigned long long)puts,
	       (unsigned long long)gets, now() - t0,
	       (unsigned long long)at_a, (unsigned long long)at_b,
	       (unsigned long long)retried);
	/* the final check: every key against B's store */
	{
		uint64_t ok = 0, none = 0;

		for (k = 0; k < o.keys; k++) {
			snprintf(req, sizeof(req), "GET k%u\n", k);
			if (rpc(&c, req, ans, sizeof(ans)))
				die("GET at B", EPIPE);
			if (!log[k]) {
				if (strcmp(ans, "NONE")) {
					printf("client: k%u never written, B "
					       "has '%s'\n", k, ans);
					bad++;
				} else {
					none++;
				}
				continue;
			}
			value_of(want, sizeof(want), k, log[k]);
			if (strncmp(ans, "VAL ", 4) || strcmp(ans + 4, want)) {
				printf("client: k%u: B has '%s', the last "
				       "acknowledged write was '%s'\n", k,
				       ans, want);
				bad++;
			} else {
				ok++;
			}
		}
		printf("client: check at B: %llu keys hold their last "
		       "acknowledged value, %llu never written are absent, "
		       "%llu wrong\n", (unsigned long long)ok,
		       (unsigned long long)none, (unsigned long long)bad);
	}
	rpc(&c, "QUIT\n", ans, sizeof(ans));
	close(c.fd);
	printf("client: longest gap between acknowledged requests %.1f ms "
	       "(at t=%.2f s, %s)\n", gap * 1e3, gap_at,
	       gap_move ? "across the move: A's last answer to B's first" :
	       "not across the move");
	if (moved[0])
		printf("client: migration as A reported it: downtime %.1f ms "
		       "(expected %.1f ms), total %.1f ms, setup %.1f ms, "
		       "rounds %.0f, bytes %.0f\n",
		       field(moved, "downtime_ms="),
		       field(moved, "expected_ms="), field(moved, "total_ms="),
		       field(moved, "setup_ms="), field(moved, "rounds="),
		       field(moved, "bytes_sent="));
	else
		printf("client: no MOVED answer from A (the connection broke)"
		       "\n");
	printf("client: %s\n", bad ? "FAILED" : "every key checked");
	free(log);
	return bad ? 3 : 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: mmt-kv src -a PEER [-p TCP] [-m RDMA] [-M MiB] [-t KiB] [-l L] "
		"[-i ID] [-d MS] [-r N] [-w W] [-S N] [-W PCT]\n"
		"       mmt-kv dst [-p TCP] [-m RDMA] [-M MiB] [-t KiB] [-l L] [-i ID] "
		"[-Q]\n"
		"       mmt-kv client -a A -b B [-p TCP] [-N N] [-k KEYS]"
		" [-u US] [-T S]\n");
	exit(1);
}

int main(int argc, char **argv)
{
	const char *cmd;
	int c;

	if (argc < 2)
		usage();
	cmd = argv[1];
	optind = 2;
	while ((c = getopt(argc, argv, "a:b:p:m:M:l:i:d:r:w:S:W:QN:k:u:T:t:"))
	       != -1) {
		unsigned int v = optarg ? strtoul(optarg, NULL, 0) : 0;

		switch (c) {
		case 'a': o.a = optarg; break;
		case 'b': o.b = optarg; break;
		case 'p': o.port = v; break;
		case 'm': o.mport = v; break;
		case 'M': o.mib = v; break;
		case 'l': o.levels = v; break;
		case 'i': o.node = v; break;
		case 'd': o.downtime = v; break;
		case 'r': o.rounds = v; break;
		case 'w': o.window = v; break;
		case 'S': o.start_after = v; break;
		case 'W': o.pct = v; break;
		case 'Q': o.quit_after = 1; break;
		case 'N': o.n_b = v; break;
		case 'k': o.keys = v; break;
		case 'u': o.us = v; break;
		case 'T': o.secs = v; break;
		case 't': o.table_kib = v; break;
		default: usage();
		}
	}
	if (!o.mib || !o.keys || o.pct > 100)
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(cmd, "src"))
		return cmd_src();
	if (!strcmp(cmd, "dst"))
		return cmd_dst();
	if (!strcmp(cmd, "client"))
		return cmd_client();
	usage();
	return 1;
}
