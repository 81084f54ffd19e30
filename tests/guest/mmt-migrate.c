// SPDX-License-Identifier: GPL-2.0
/*
 * mmt-migrate.c - guest test of live migration over Soft-RoCE:
 * MMT_IOC_MIGRATE_SEND/RECV/INFO/ABORT and POLLPRI (docs/MIGRATION.md)
 *
 * Built static by tests/guest/run.sh (gcc -static -I uapi).
 *
 *   mmt-migrate dst [options]          listen on -p PORT, accept, receive
 *   mmt-migrate src -a ADDR [options]  connect, migrate a PMO while a
 *                                      writer thread keeps writing
 *
 * The default case is a round trip: the source migrates its PMO to the
 * destination while its writer writes (the writer keeps a log of every
 * write that returned), then the destination migrates it back, and the
 * source compares what came back with the log, byte for byte.  The writer
 * must end with EPERM (the PMO moved), never write after the commit, and
 * its longest pwrite() is the pause it suffered.  Options (both sides
 * agree on -n, -l, -L):
 *   -p PORT   port (default 7601)
 *   -a ADDR   the destination's IPv4 address (src)
 *   -n N      closures (default 16)
 *   -l L      levels (default 2: 128 KiB closures)
 *   -w W      window (default 0: the module's)
 *   -d MS     downtime limit (src; default 0: the module's)
 *   -r N      round limit (src; default 0: the module's)
 *   -u US     the writer sleeps US microseconds between writes (default
 *             500); -u 0: no writer
 *   -i ID     node id to set
 *   -s SEED   pattern seed (default 1)
 *   -K N      die (_exit) once N closures were sent (src) or accepted
 *             (dst): the peer sees its migration fail
 *   -X ERRNO  expect the migration to fail with this errno name, and check
 *             the aftermath: src: every MMT VALID, the data the log, a
 *             write works; dst: every MMT WAITING, nothing readable
 *   -A N      src: MMT_IOC_MIGRATE_ABORT once round N began
 *   -f N      src: MMT_IOC_MIGRATE_FINISH once round N began: the handover
 *             is forced (the figures say MMT_MIG_STOP_FINISH)
 *   -T        dst: answer with MMT_IOC_RECV (a transfer), which refuses
 *             the migration's offer (EPROTO on both sides)
 *   -L N      N migrations in a row on one connection, each of a new PMO,
 *             there and back (no writer): the leak check's workload
 *   -t MS     timeout_ms (default 30000)
 *   -F FAULT  test build: arm FAULT in debugfs mmt/conn_fault before the
 *             migration (driver/mmt_conn_fault.c; repeatable, 4 at most)
 *   -G FAULT  dst, test build: arm FAULT once every fault armed before
 *             fired (e.g. -F "record 2" -G "present 2 2": closure 2 of
 *             round 1 replayed in place of a later closure 2)
 *   -H        src: die (_exit) as soon as the handover began (writers
 *             frozen): the destination must not commit
 *   -U        src, with -X: the COMMIT left and no answer authenticated:
 *             the outcome is unknown (MMT_MIG_F_OUTCOME_UNKNOWN); check
 *             every MMT VALID, the data the log, pwrite() refused with
 *             EUCLEAN (a writer too), MMT_PMO_INFO_MIG_UNKNOWN, another
 *             migration on the ended connection refused with figures of
 *             its own, then MMT_IOC_PMO_INVALIDATE (the destination
 *             committed): every MMT INVALID, the flag gone
 *   -C        dst: the receive commits although the connection then ends
 *             (no way back): 0, COMMITTED, every MMT VALID, the data the
 *             source's pattern byte for byte (the source runs -u 0),
 *             writable
 *   -D NAME:N the debugfs mmt/stats counter NAME grows by exactly N
 *   -W MS     the migration returns within MS ms of its start
 *   -Q PORT   src, with -U: resolve on the destination's statement over a
 *             new connection to PORT (MMT_IOC_MIGRATE_RESOLVE) instead of
 *             invalidating: MMT_IOC_PMO_MIG_RESOLVE refused first
 *             (ENOTCONN); -O says what the destination states; dst: then
 *             accept one connection on PORT and keep it until the source
 *             closes it (the module answers; statements_sent grows by 1)
 *   -O committed|aborted  src, with -Q: the statement expected
 *   -S        src: the writer sweeps: each write goes to the next closure,
 *             so every closure is dirty in every round (-u still paces it)
 *   -R        src, with -X ETIME: the handover is refused at the round
 *             limit: check the figures (MMT_MIG_STOP_ROUNDS, a throttle,
 *             no downtime, the writer never stopped), then migrate again
 *             on the same connection with a 600 s limit and no writer:
 *             committed.  dst, with -X ECANCELED: receive that second
 *             migration
 *   -P N:S    dst: once N closures were accepted, the node goes silent
 *             (eth0 down: no packet in or out, as if powered off) for S
 *             seconds, then eth0 up again
 *
 * A source with a writer prints a "# stall" line: the writer's longest
 * pwrite() during the migration against the downtime limit.
 * Prints "ok - ..." / "not ok - ..." lines and a progress line per round;
 * exits 0 only if every check passed.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <sys/socket.h>

#include "mmt.h"

static int failures;
static const char *role = "?";
static volatile int silent_done;	/* -P: eth0 is up again */

static void check(int cond, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void check(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%s - migrate %s: ", cond ? "ok" : "not ok", role);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!cond)
		failures++;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static const unsigned char key[16] = "mmt-migrate-key";

struct opts {
	const char *addr;
	unsigned int port, n, levels, window, downtime, rounds, writer_us;
	unsigned int node, seed, die, abort_round, finish_round, loops, timeout;
	int transfer, die_handover, unknown, committed_alone;
	unsigned int within_ms, resolve_port;
	const char *resolve_outcome;
	int sweep, refused;
	unsigned int silent_after, silent_s;
	const char *expect, *counter;
	const char *fault[4], *later[4];
	unsigned int nfault, nlater;
};

#define FAULT_FILE "/sys/kernel/debug/mmt/conn_fault"
#define STATS_FILE "/sys/kernel/debug/mmt/stats"

/* Arm one fault of the test build's hook (driver/mmt_conn_fault.c). */
static int arm(const char *f)
{
	int fd = open(FAULT_FILE, O_WRONLY);
	ssize_t r;

	if (fd < 0)
		return -1;
	r = write(fd, f, strlen(f));
	close(fd);
	return r == (ssize_t)strlen(f) ? 0 : -1;
}

/* -G: once every fault armed so far fired, arm the later ones. */
static void *later_main(void *arg)
{
	const struct opts *o = arg;
	char buf[4096];
	unsigned int i;

	for (;;) {
		int fd = open(FAULT_FILE, O_RDONLY);
		ssize_t r = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

		if (fd >= 0)
			close(fd);
		if (r > 0) {
			buf[r] = 0;
			if (!strncmp(buf, "armed 0\n", 8) ||
			    strstr(buf, "\narmed 0\n"))
				break;
		}
		usleep(1000);
	}
	for (i = 0; i < o->nlater; i++)
		check(!arm(o->later[i]), "armed '%s' once the earlier faults fired",
		      o->later[i]);
	return NULL;
}

/* -H: _exit as soon as the source's handover began. */
static void *handover_killer_main(void *arg)
{
	int conn = *(int *)arg;

	for (;;) {
		struct mmt_migrate_info i = { .size = sizeof(i) };

		if (!ioctl(conn, MMT_IOC_MIGRATE_INFO, &i) &&
		    i.phase == MMT_MIG_PHASE_HANDOVER) {
			printf("# %s: dying in the handover (round %u, %llu closures sent)\n",
			       role, i.round,
			       (unsigned long long)i.closures_sent);
			fflush(stdout);
			_exit(0);
		}
		usleep(500);
	}
	return NULL;
}

/* -D NAME:N: the counter NAME of debugfs mmt/stats, or -1. */
static long long counter_value(const char *spec)
{
	char line[256], name[64];
	long long v = -1, x;
	size_t len = strcspn(spec, ":");
	FILE *f;

	if (len >= sizeof(name))
		return -1;
	f = fopen(STATS_FILE, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %lld", name, &x) == 2 &&
		    strlen(name) == len && !strncmp(name, spec, len))
			v = x;
	fclose(f);
	return v;
}

static void counter_check(const char *spec, long long before)
{
	const char *colon = strchr(spec, ':');
	long long want = colon ? atoll(colon + 1) : 1;
	long long after = counter_value(spec);

	check(before >= 0 && after - before == want,
	      "debugfs mmt/stats %.*s grew by exactly %lld (%lld -> %lld)",
	      (int)strcspn(spec, ":"), spec, want, before, after);
}

/* -X: an errno name, or several separated by '|': is @err one of them? */
static int errno_is(const char *names, int err);

static int errno_of(const char *name)
{
	static const struct { const char *n; int e; } t[] = {
		{ "ECONNRESET", ECONNRESET }, { "ECANCELED", ECANCELED },
		{ "EPROTO", EPROTO }, { "ETIMEDOUT", ETIMEDOUT },
		{ "EPERM", EPERM }, { "EBADMSG", EBADMSG },
		{ "ESTALE", ESTALE }, { "EUCLEAN", EUCLEAN },
		{ "ETIME", ETIME },
	};
	unsigned int i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(t[i].n, name))
			return t[i].e;
	return -1;
}

static int errno_is(const char *names, int err)
{
	char buf[128], *tok, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", names);
	for (tok = strtok_r(buf, "|", &save); tok;
	     tok = strtok_r(NULL, "|", &save))
		if (errno_of(tok) == err)
			return 1;
	return 0;
}

static int pmo_new(int dev, const struct opts *o, int receive,
		   uint64_t *bytes)
{
	struct mmt_pmo_create c = { .size = sizeof(c) };
	struct mmt_pmo_key k = { .size = sizeof(k), .key_len = 16 };

	c.geometry.levels = o->levels;
	c.bytes = (uint64_t)o->n << (o->levels == 1 ? 12 :
				     o->levels == 2 ? 17 : 21);
	if (ioctl(dev, MMT_IOC_PMO_CREATE, &c)) {
		perror("MMT_IOC_PMO_CREATE");
		return -1;
	}
	memcpy(k.key, key, 16);
	k.flags = receive ? MMT_KEY_RECEIVE : 0;
	if (ioctl(c.fd, MMT_IOC_PMO_SET_KEY, &k)) {
		perror("MMT_IOC_PMO_SET_KEY");
		return -1;
	}
	*bytes = c.bytes;
	return c.fd;
}

/* Every MMT in @state?  Returns how many are. */
static unsigned int pmo_count(int pmo, unsigned int n, unsigned int state)
{
	struct mmt_mmt_info m[256];
	struct mmt_pmo_info q = { .size = sizeof(q) };
	unsigned int i, k = 0;

	q.mmt_count = n < 256 ? n : 256;
	q.mmts = (uintptr_t)m;
	if (ioctl(pmo, MMT_IOC_PMO_INFO, &q))
		return 0;
	for (i = 0; i < q.mmt_count; i++)
		k += m[i].state == state;
	return k;
}

/* The PMO's MMT_PMO_INFO_* flags, or ~0u. */
static unsigned int pmo_flags(int pmo)
{
	struct mmt_pmo_info q = { .size = sizeof(q) };

	return ioctl(pmo, MMT_IOC_PMO_INFO, &q) ? ~0u : q.flags;
}

static void pattern(unsigned char *b, uint64_t len, unsigned int seed)
{
	uint32_t x = 0x9e3779b9u * (seed + 1);
	uint64_t i;

	for (i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		b[i] = x;
	}
}

/* The source's owner: writes, keeps the log, stops when the PMO moves. */
struct writer {
	pthread_t t;
	int pmo;
	unsigned char *log;
	uint64_t bytes;
	unsigned int us;
	int sweep;
	uint64_t closure_bytes;
	volatile int stop;
	uint64_t writes;
	double max_pause;
	int err;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	uint32_t x = 12345;
	unsigned char buf[256];

	while (!w->stop) {
		uint64_t len, off;
		double t0;
		ssize_t r;
		unsigned int i;

		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		len = 1 + x % sizeof(buf);
		off = (x >> 8) % (w->bytes - len);
		if (w->sweep)	/* the next closure, wherever in it */
			off = w->writes % (w->bytes / w->closure_bytes) *
			      w->closure_bytes +
			      (x >> 8) % (w->closure_bytes - len);
		for (i = 0; i < len; i++)
			buf[i] = x + i;
		t0 = now();
		r = pwrite(w->pmo, buf, len, off);
		if (now() - t0 > w->max_pause)
			w->max_pause = now() - t0;
		if (r != (ssize_t)len) {
			w->err = r < 0 ? errno : EIO;
			break;
		}
		memcpy(w->log + off, buf, len);
		w->writes++;
		if (w->us)
			usleep(w->us);
	}
	return NULL;
}

/* Progress: a line per round, from MMT_IOC_MIGRATE_INFO on POLLPRI. */
struct progress {
	pthread_t t;
	int conn;
	volatile int stop;
	unsigned int abort_round, finish_round, lines, pri;
	int aborted, finished;
};

static void *progress_main(void *arg)
{
	struct progress *p = arg;
	unsigned int round = 0, phase = 0;

	while (!p->stop) {
		struct pollfd pfd = { .fd = p->conn, .events = POLLPRI };
		struct mmt_migrate_info i = { .size = sizeof(i) };

		if (poll(&pfd, 1, 100) <= 0 || !(pfd.revents & POLLPRI))
			continue;
		p->pri++;
		if (ioctl(p->conn, MMT_IOC_MIGRATE_INFO, &i))
			continue;
		if (i.round != round || i.phase != phase) {
			round = i.round;
			phase = i.phase;
			p->lines++;
			printf("# %s: round %u phase %u dirty %llu sent %llu closures, %llu bytes, expected downtime %.3f ms\n",
			       role, i.round, i.phase,
			       (unsigned long long)i.dirty,
			       (unsigned long long)i.closures_sent,
			       (unsigned long long)i.bytes_sent,
			       i.expected_downtime_ns / 1e6);
			fflush(stdout);
		}
		if (p->abort_round && i.round >= p->abort_round &&
		    !p->aborted && !ioctl(p->conn, MMT_IOC_MIGRATE_ABORT, 0))
			p->aborted = 1;
		if (p->finish_round && i.round >= p->finish_round &&
		    i.phase == MMT_MIG_PHASE_PRECOPY && !p->finished &&
		    !ioctl(p->conn, MMT_IOC_MIGRATE_FINISH, 0))
			p->finished = 1;
	}
	return NULL;
}

/*
 * eth0 up or down with SIOCSIFFLAGS: no child process, whose SIGCHLD
 * (blocked in a system() caller's thread, so queued to the process) would
 * interrupt the migration's ioctl in the main thread.
 */
static int link_set(int up)
{
	struct ifreq r;
	int fd = socket(AF_INET, SOCK_DGRAM, 0), ret = -1;

	if (fd < 0)
		return -1;
	memset(&r, 0, sizeof(r));
	snprintf(r.ifr_name, sizeof(r.ifr_name), "eth0");
	if (!ioctl(fd, SIOCGIFFLAGS, &r)) {
		if (up)
			r.ifr_flags |= IFF_UP;
		else
			r.ifr_flags &= ~IFF_UP;
		ret = ioctl(fd, SIOCSIFFLAGS, &r);
	}
	close(fd);
	return ret;
}

/* -P: once N closures were accepted, eth0 down for S seconds, then up. */
static void *silent_main(void *arg)
{
	const struct opts *o = ((void **)arg)[0];
	int conn = *(int *)((void **)arg)[1];

	for (;;) {
		struct mmt_migrate_info i = { .size = sizeof(i) };

		if (!ioctl(conn, MMT_IOC_MIGRATE_INFO, &i) &&
		    i.closures_sent >= o->silent_after)
			break;
		usleep(1000);
	}
	printf("# %s: silent (eth0 down) for %u s after %u closures\n", role,
	       o->silent_s, o->silent_after);
	fflush(stdout);
	check(!link_set(0), "eth0 down");
	sleep(o->silent_s);
	check(!link_set(1), "eth0 up");
	printf("# %s: eth0 up again\n", role);
	fflush(stdout);
	silent_done = 1;
	return NULL;
}

/* -K: _exit once N closures moved on this side. */
static void *killer_main(void *arg)
{
	const struct opts *o = ((void **)arg)[0];
	int conn = *(int *)((void **)arg)[1];

	for (;;) {
		struct mmt_migrate_info i = { .size = sizeof(i) };

		if (!ioctl(conn, MMT_IOC_MIGRATE_INFO, &i) &&
		    i.closures_sent >= o->die) {
			printf("# %s: dying after %llu closures\n", role,
			       (unsigned long long)i.closures_sent);
			fflush(stdout);
			_exit(0);
		}
		usleep(1000);
	}
	return NULL;
}

static int migrate(int conn, int pmo, const struct opts *o, int send,
		   struct mmt_migrate_info *info)
{
	struct mmt_migrate a = { .size = sizeof(a) };

	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	a.pmo_fd = pmo;
	a.timeout_ms = o->timeout;
	a.window = o->window;
	if (send) {
		a.downtime_limit_ms = o->downtime;
		a.max_rounds = o->rounds;
	}
	a.info = (uintptr_t)info;
	return ioctl(conn, send ? MMT_IOC_MIGRATE_SEND : MMT_IOC_MIGRATE_RECV,
		     &a);
}

static void summary(const char *what, const struct mmt_migrate_info *i)
{
	printf("# %s: %s: phase %u error %d rounds %u dirty syncs %llu closures %llu bytes %llu total %.3f ms setup %.3f ms downtime %.3f ms (expected %.3f ms) peak extra %llu bytes stop %u throttle %u %% (slept %.3f ms)%s\n",
	       role, what, i->phase, i->error, i->round,
	       (unsigned long long)i->dirty_syncs,
	       (unsigned long long)i->closures_sent,
	       (unsigned long long)i->bytes_sent, i->total_ns / 1e6,
	       i->setup_ns / 1e6, i->downtime_ns / 1e6,
	       i->expected_downtime_ns / 1e6,
	       (unsigned long long)i->peak_extra_bytes, i->stop,
	       i->throttle_pct, i->throttle_ns / 1e6,
	       i->flags & MMT_MIG_F_OUTCOME_UNKNOWN ? " OUTCOME_UNKNOWN" : "");
	fflush(stdout);
}

static int connect_to(int dev, const struct opts *o)
{
	struct mmt_connect c;
	double deadline = now() + 60;
	int ret, err;

	for (;;) {
		memset(&c, 0, sizeof(c));
		c.size = sizeof(c);
		c.timeout_ms = 5000;
		c.addr.family = AF_INET;
		c.addr.port = o->port;
		if (inet_pton(AF_INET, o->addr, c.addr.addr) != 1)
			return -1;
		ret = ioctl(dev, MMT_IOC_CONNECT, &c);
		err = errno;
		if (!ret)
			return c.fd;
		if (now() > deadline || (err != ECONNREFUSED &&
					 err != ETIMEDOUT &&
					 err != EHOSTUNREACH))
			break;
		usleep(200000);
	}
	check(0, "connect to %s port %u: %s", o->addr, o->port, strerror(err));
	return -1;
}

static int accept_one(int dev, const struct opts *o)
{
	struct mmt_listen l = { .size = sizeof(l) };
	struct mmt_connect c = { .size = sizeof(c) };

	l.addr.family = AF_INET;
	l.addr.port = o->port;
	if (ioctl(dev, MMT_IOC_LISTEN, &l)) {
		perror("MMT_IOC_LISTEN");
		return -1;
	}
	c.timeout_ms = 60000;
	if (ioctl(l.fd, MMT_IOC_ACCEPT, &c)) {
		check(0, "accept: %s", strerror(errno));
		return -1;
	}
	close(l.fd);
	return c.fd;
}

/* The expected failure and its aftermath; returns 1 if -X was given. */
static int expect_failure(const struct opts *o, int ret, int err, int pmo,
			  uint64_t bytes, const unsigned char *log)
{
	unsigned char *buf;

	if (!o->expect)
		return 0;
	check(ret == -1 && errno_is(o->expect, err),
	      "the migration fails with %s (%s)", o->expect,
	      ret ? strerror(err) : "succeeded");
	buf = malloc(bytes);
	if (!buf)
		return 1;
	if (log) {
		check(pmo_count(pmo, o->n, MMT_STATE_VALID) == o->n,
		      "source: every MMT VALID");
		check(pread(pmo, buf, bytes, 0) == (ssize_t)bytes &&
		      !memcmp(buf, log, bytes),
		      "source: its data is the writer's log, byte for byte");
		check(pwrite(pmo, "after", 5, 7) == 5,
		      "source: writable after the failed migration");
	} else {
		ssize_t r;

		check(pmo_count(pmo, o->n, MMT_STATE_WAITING) == o->n,
		      "destination: every MMT WAITING");
		r = pread(pmo, buf, 64, 0);
		err = errno;
		check(r < 0 && err == EPERM, "destination: nothing readable (%s)",
		      r < 0 ? strerror(err) : "read");
		r = pwrite(pmo, buf, 64, 0);
		err = errno;
		check(r < 0 && err == EPERM, "destination: nothing writable (%s)",
		      r < 0 ? strerror(err) : "written");
	}
	free(buf);
	return 1;
}

/*
 * -Q PORT -O committed|aborted: the source resolves its migration of
 * unknown outcome on the destination's statement, over a new connection
 * to PORT: not on its own word first (ENOTCONN); then committed (every
 * MMT INVALID) or aborted (writable again, its data intact).
 */
static void resolve_on_statement(int dev, const struct opts *o, int pmo,
				 uint64_t bytes, const struct writer *w)
{
	struct mmt_migrate_resolve rs;
	unsigned char *buf = malloc(bytes);
	int committed = o->resolve_outcome &&
			!strcmp(o->resolve_outcome, "committed");
	unsigned int want = committed ? MMT_MIG_OUTCOME_COMMITTED :
					MMT_MIG_OUTCOME_ABORTED;
	long long resolves = counter_value("resolves");
	struct opts o2 = *o;
	ssize_t r;
	int c2, err;

	r = ioctl(pmo, MMT_IOC_PMO_MIG_RESOLVE, 0);
	err = errno;
	check(r < 0 && err == ENOTCONN &&
	      pmo_flags(pmo) == MMT_PMO_INFO_MIG_UNKNOWN,
	      "source: MMT_IOC_PMO_MIG_RESOLVE on its own word: ENOTCONN, still unknown (%s, flags %#x)",
	      r ? strerror(err) : "resolved", pmo_flags(pmo));
	o2.port = o->resolve_port;
	c2 = connect_to(dev, &o2);
	if (c2 < 0 || !buf)
		return;
	memset(&rs, 0, sizeof(rs));
	rs.size = sizeof(rs);
	rs.pmo_fd = pmo;
	rs.timeout_ms = 20000;
	r = ioctl(c2, MMT_IOC_MIGRATE_RESOLVE, &rs);
	err = errno;
	check(r == 0 && rs.outcome == want,
	      "source: MMT_IOC_MIGRATE_RESOLVE over a new connection: the destination states %s (%s, outcome %u)",
	      committed ? "committed" : "aborted", r ? strerror(err) : "0",
	      rs.outcome);
	check(pmo_flags(pmo) == 0 &&
	      counter_value("resolves") == resolves + 1,
	      "source: resolved: no MMT_PMO_INFO_MIG_UNKNOWN (flags %#x), counted",
	      pmo_flags(pmo));
	if (committed) {
		check(pmo_count(pmo, o->n, MMT_STATE_INVALID) == o->n,
		      "source: every MMT INVALID: one copy, at the destination");
		r = pwrite(pmo, "after", 5, 7);
		check(r < 0 && errno == EPERM,
		      "source: a write fails with EPERM (%s)",
		      r < 0 ? strerror(errno) : "written");
	} else {
		check(pmo_count(pmo, o->n, MMT_STATE_VALID) == o->n &&
		      pread(pmo, buf, bytes, 0) == (ssize_t)bytes &&
		      !memcmp(buf, w->log, bytes),
		      "source: every MMT VALID, its data the writer's log, byte for byte");
		check(pwrite(pmo, "after", 5, 7) == 5 &&
		      pread(pmo, buf, 5, 7) == 5 && !memcmp(buf, "after", 5),
		      "source: writable again (the destination never committed)");
	}
	memset(&rs, 0, sizeof(rs));
	rs.size = sizeof(rs);
	rs.pmo_fd = pmo;
	r = ioctl(c2, MMT_IOC_MIGRATE_RESOLVE, &rs);
	err = errno;
	check(r < 0 && err == ENOENT,
	      "source: a second resolve: ENOENT (%s)",
	      r ? strerror(err) : "resolved");
	close(c2);
	free(buf);
}

/*
 * -Q PORT on the destination: accept one connection on PORT and keep it
 * until the source closes it; the module answers its resolve alone.
 */
static void hold_for_resolve(int dev, const struct opts *o)
{
	long long sent = counter_value("statements_sent");
	struct opts o2 = *o;
	struct pollfd pfd;
	int c2;

	o2.port = o->resolve_port;
	c2 = accept_one(dev, &o2);
	if (c2 < 0)
		return;
	pfd.fd = c2;
	pfd.events = POLLIN;
	for (int i = 0; i < 600; i++) {
		if (poll(&pfd, 1, 100) > 0 && (pfd.revents & POLLHUP))
			break;
	}
	check(counter_value("statements_sent") == sent + 1,
	      "destination: its module answered the source's resolve (statements_sent %lld -> %lld)",
	      sent, counter_value("statements_sent"));
	close(c2);
}

/*
 * -U: the source after a COMMIT that got no authenticated answer: VALID
 * and readable, not writable (EUCLEAN) until it is resolved: on the
 * destination's statement (-Q), or, the destination having committed, by
 * invalidating it.
 */
static void expect_unknown(int dev, const struct opts *o,
			   const struct mmt_migrate_info *info, int conn,
			   int pmo, uint64_t bytes, const struct writer *w)
{
	unsigned char *buf = malloc(bytes);
	struct mmt_migrate_info again;
	ssize_t r;
	int err;

	check(info->phase == MMT_MIG_PHASE_FAILED &&
	      (info->flags & MMT_MIG_F_OUTCOME_UNKNOWN),
	      "the figures say FAILED, outcome unknown (phase %u flags %#x)",
	      info->phase, info->flags);
	check(pmo_count(pmo, o->n, MMT_STATE_VALID) == o->n,
	      "source: every MMT VALID (readable)");
	check(pmo_flags(pmo) == MMT_PMO_INFO_MIG_UNKNOWN,
	      "source: MMT_IOC_PMO_INFO says MMT_PMO_INFO_MIG_UNKNOWN (flags %#x)",
	      pmo_flags(pmo));
	check(buf && pread(pmo, buf, bytes, 0) == (ssize_t)bytes &&
	      !memcmp(buf, w->log, bytes),
	      "source: its data is the writer's log, byte for byte");
	r = pwrite(pmo, "after", 5, 7);
	err = errno;
	check(r < 0 && err == EUCLEAN,
	      "source: not writable while the outcome is unknown (%s)",
	      r < 0 ? strerror(err) : "written");
	if (o->writer_us)
		check(w->err == EUCLEAN,
		      "writer: stopped by %s (EUCLEAN expected)",
		      w->err ? strerror(w->err) : "nothing");
	/*
	 * The connection ended: another migration is refused before it
	 * starts, and its figures are its own, never the failed one's
	 * (review L4: phase FAILED, its errno, nothing sent, no flag).
	 */
	r = migrate(conn, pmo, o, 1, &again);
	err = errno;
	check(r == -1 && (err == ECONNRESET || err == ETIMEDOUT) &&
	      again.phase == MMT_MIG_PHASE_FAILED && again.error == -err &&
	      again.round == 0 && again.closures_sent == 0 &&
	      again.bytes_sent == 0 &&
	      !(again.flags & MMT_MIG_F_OUTCOME_UNKNOWN),
	      "a migration on the ended connection: %s, its own figures (phase %u error %d round %u closures %llu flags %#x)",
	      r ? strerror(err) : "migrated", again.phase, again.error,
	      again.round, (unsigned long long)again.closures_sent,
	      again.flags);
	if (o->resolve_port) {
		resolve_on_statement(dev, o, pmo, bytes, w);
		free(buf);
		return;
	}
	check(!ioctl(pmo, MMT_IOC_PMO_INVALIDATE, 0),
	      "source: MMT_IOC_PMO_INVALIDATE (the destination committed)");
	check(pmo_count(pmo, o->n, MMT_STATE_INVALID) == o->n,
	      "source: every MMT INVALID: one copy, at the destination");
	check(pmo_flags(pmo) == 0,
	      "source: resolved: MMT_PMO_INFO_MIG_UNKNOWN cleared (flags %#x)",
	      pmo_flags(pmo));
	free(buf);
}

/*
 * -R: the handover refused at the round limit: why, what the writers
 * saw, and the connection still up: a second migration with a limit that
 * fits commits.
 */
static void refused_after(const struct opts *o,
			  const struct mmt_migrate_info *info, int conn,
			  int pmo, const struct writer *w)
{
	struct opts c = *o;
	struct mmt_migrate_info again;
	int ret;

	check(info->stop == MMT_MIG_STOP_ROUNDS && info->round == o->rounds,
	      "the figures say why: the round limit (stop %u, round %u of %u)",
	      info->stop, info->round, o->rounds);
	check(info->throttle_pct >= 20 && info->throttle_ns > 0,
	      "the writer was throttled: %u %%, %.3f ms of sleeps",
	      info->throttle_pct, info->throttle_ns / 1e6);
	check(info->downtime_ns == 0,
	      "the writers were never frozen (downtime %.3f ms)",
	      info->downtime_ns / 1e6);
	check(w->err == 0 && w->writes > 0,
	      "writer: %llu writes, none refused (%s)",
	      (unsigned long long)w->writes,
	      w->err ? strerror(w->err) : "no error");
	c.downtime = 600000;
	ret = migrate(conn, pmo, &c, 1, &again);
	check(ret == 0 && again.stop != MMT_MIG_STOP_ROUNDS,
	      "the connection stays up: migrated again with a 600 s limit (%s, stop %u)",
	      ret ? strerror(errno) : "committed", again.stop);
}

static int do_src(int dev, const struct opts *o)
{
	struct mmt_migrate_info info, back;
	struct writer w = { 0 };
	struct progress p = { 0 };
	unsigned char *buf;
	uint64_t bytes;
	int pmo, pmo2, conn, ret, err;
	long long count0 = 0;
	unsigned int i;
	double t0;
	pthread_t kt;
	void *karg[2];

	pmo = pmo_new(dev, o, 0, &bytes);
	if (pmo < 0)
		return 2;
	w.log = malloc(bytes);
	buf = malloc(bytes);
	if (!w.log || !buf)
		return 2;
	pattern(w.log, bytes, o->seed);
	if (pwrite(pmo, w.log, bytes, 0) != (ssize_t)bytes)
		return 2;
	conn = connect_to(dev, o);
	if (conn < 0)
		return failures;
	w.pmo = pmo;
	w.bytes = bytes;
	w.us = o->writer_us;
	w.sweep = o->sweep;
	w.closure_bytes = bytes / o->n;
	if (o->writer_us)
		pthread_create(&w.t, NULL, writer_main, &w);
	p.conn = conn;
	p.abort_round = o->abort_round;
	p.finish_round = o->finish_round;
	pthread_create(&p.t, NULL, progress_main, &p);
	if (o->die) {
		karg[0] = (void *)o;
		karg[1] = &conn;
		pthread_create(&kt, NULL, killer_main, karg);
	}
	if (o->die_handover)
		pthread_create(&kt, NULL, handover_killer_main, &conn);
	for (i = 0; i < o->nfault; i++)
		check(!arm(o->fault[i]), "armed '%s'", o->fault[i]);
	if (o->counter)
		count0 = counter_value(o->counter);
	usleep(20000);
	t0 = now();
	ret = migrate(conn, pmo, o, 1, &info);
	err = errno;
	t0 = now() - t0;
	if (o->within_ms)
		check(t0 * 1e3 < o->within_ms,
		      "the migration returned within %u ms (%.0f ms)",
		      o->within_ms, t0 * 1e3);
	if (o->writer_us) {
		if (ret)
			usleep(20000);	/* the writer goes on: source intact */
		w.stop = 1;
		pthread_join(w.t, NULL);
	}
	usleep(200000);
	p.stop = 1;
	pthread_join(p.t, NULL);
	summary("there", &info);
	if (o->writer_us)
		printf("# stall: limit %u ms, longest pwrite %.3f ms (%.2f x the limit), %llu writes, %s writer, rounds %u, throttle %u %%, throttle sleep %.3f ms, downtime %.3f ms, %s\n",
		       o->downtime ? o->downtime : MMT_MIGRATE_DOWNTIME_MS,
		       w.max_pause * 1e3,
		       w.max_pause * 1e3 /
		       (o->downtime ? o->downtime : MMT_MIGRATE_DOWNTIME_MS),
		       (unsigned long long)w.writes,
		       o->sweep ? "sweeping" : "random", info.round,
		       info.throttle_pct, info.throttle_ns / 1e6,
		       info.downtime_ns / 1e6,
		       ret ? strerror(err) : "committed");
	if (o->counter)
		counter_check(o->counter, count0);
	if (o->unknown) {
		check(ret == -1 && o->expect && err == errno_of(o->expect),
		      "the migration fails with %s (%s)", o->expect,
		      ret ? strerror(err) : "succeeded");
		expect_unknown(dev, o, &info, conn, pmo, bytes, &w);
		return failures;
	}
	if (expect_failure(o, ret, err, pmo, bytes, w.log)) {
		check(info.phase == MMT_MIG_PHASE_FAILED && info.error,
		      "the figures say FAILED (%d)", info.error);
		check(pmo_flags(pmo) == 0,
		      "source: the outcome is known: no MMT_PMO_INFO_MIG_UNKNOWN (flags %#x)",
		      pmo_flags(pmo));
		if (o->refused)
			refused_after(o, &info, conn, pmo, &w);
		return failures;
	}
	check(ret == 0, "migrated to the destination (%s)",
	      ret ? strerror(err) : "committed");
	if (ret)
		return failures;
	check(info.phase == MMT_MIG_PHASE_COMMITTED && info.round >= 2 &&
	      info.closures_sent >= o->n && info.downtime_ns &&
	      info.downtime_ns <= info.total_ns,
	      "figures: %u rounds, %llu closures sent, downtime %.3f ms of %.3f ms",
	      info.round, (unsigned long long)info.closures_sent,
	      info.downtime_ns / 1e6, info.total_ns / 1e6);
	check(p.lines >= 2 && p.pri >= 2,
	      "progress: %u lines from %u POLLPRI", p.lines, p.pri);
	if (o->finish_round)
		check(p.finished && info.stop == MMT_MIG_STOP_FINISH &&
		      info.round > o->finish_round,
		      "MMT_IOC_MIGRATE_FINISH in round %u forced the handover (stop %u, %u rounds)",
		      o->finish_round, info.stop, info.round);
	else
		check(info.stop == MMT_MIG_STOP_CONVERGED ||
		      info.stop == MMT_MIG_STOP_CLEAN,
		      "pre-copy ended converged or clean (stop %u)",
		      info.stop);
	check(pmo_count(pmo, o->n, MMT_STATE_INVALID) == o->n,
	      "source: every MMT INVALID after the commit");
	if (o->writer_us)
		check(w.err == EPERM && w.writes > 0,
		      "writer: %llu writes, then %s (the PMO moved); longest pause %.3f ms",
		      (unsigned long long)w.writes, strerror(w.err),
		      w.max_pause * 1e3);
	check(pwrite(pmo, "x", 1, 0) < 0 && errno == EPERM,
	      "source: a write after the commit fails with EPERM");
	ret = migrate(conn, pmo, o, 1, &info);
	check(ret == -1 && errno == EPERM,
	      "source: it cannot be migrated again (%s)",
	      ret ? strerror(errno) : "migrated");
	/* the way back: what came back is the log */
	pmo2 = pmo_new(dev, o, 1, &bytes);
	if (pmo2 < 0)
		return 2;
	ret = migrate(conn, pmo2, o, 0, &back);
	check(ret == 0, "migrated back (%s)", ret ? strerror(errno) : "ok");
	summary("back", &back);
	check(pread(pmo2, buf, bytes, 0) == (ssize_t)bytes &&
	      !memcmp(buf, w.log, bytes),
	      "what came back is the writer's log, byte for byte (%llu bytes)",
	      (unsigned long long)bytes);
	check(pwrite(pmo2, "y", 1, 0) == 1, "the PMO is writable here again");
	return failures;
}

static int do_dst(int dev, const struct opts *o)
{
	struct mmt_migrate_info info;
	struct mmt_xfer x = { .size = sizeof(x) };
	unsigned char *buf;
	uint64_t bytes;
	int pmo, conn, ret, err;
	long long count0 = 0;
	pthread_t kt;
	void *karg[2];

	pmo = pmo_new(dev, o, 1, &bytes);
	if (pmo < 0)
		return 2;
	buf = malloc(bytes);
	if (o->counter)
		count0 = counter_value(o->counter);
	conn = accept_one(dev, o);
	if (conn < 0 || !buf)
		return failures + 1;
	if (o->transfer) {
		x.pmo_fd = pmo;
		x.timeout_ms = o->timeout;
		ret = ioctl(conn, MMT_IOC_RECV, &x);
		check(ret == -1 && errno == EPROTO,
		      "a transfer's receive refuses a migration (%s)",
		      ret ? strerror(errno) : "accepted");
		usleep(500000);
		return failures;
	}
	if (o->die) {
		karg[0] = (void *)o;
		karg[1] = &conn;
		pthread_create(&kt, NULL, killer_main, karg);
	}
	if (o->silent_after) {
		karg[0] = (void *)o;
		karg[1] = &conn;
		pthread_create(&kt, NULL, silent_main, karg);
	}
	for (ret = 0; ret < (int)o->nfault; ret++)
		check(!arm(o->fault[ret]), "armed '%s'", o->fault[ret]);
	if (o->nlater)
		pthread_create(&kt, NULL, later_main, (void *)o);
	ret = migrate(conn, pmo, o, 0, &info);
	err = errno;
	summary("received", &info);
	if (o->counter)
		counter_check(o->counter, count0);
	if (expect_failure(o, ret, err, pmo, bytes, NULL)) {
		while (o->silent_after && !silent_done)
			usleep(100000);	/* eth0 up again for the next case */
		if (o->refused) {
			ret = migrate(conn, pmo, o, 0, &info);
			check(ret == 0,
			      "the connection stayed up: the second migration received (%s)",
			      ret ? strerror(errno) : "committed");
			usleep(500000);
		}
		if (o->resolve_port)
			hold_for_resolve(dev, o);
		return failures;
	}
	if (o->committed_alone) {
		unsigned char *want = malloc(bytes);

		check(ret == 0 && info.phase == MMT_MIG_PHASE_COMMITTED,
		      "committed: 0 and COMMITTED although the connection ended (%s, phase %u)",
		      ret ? strerror(err) : "0", info.phase);
		check(pmo_count(pmo, o->n, MMT_STATE_VALID) == o->n,
		      "destination: every MMT VALID");
		if (want)
			pattern(want, bytes, o->seed);
		check(want && pread(pmo, buf, bytes, 0) == (ssize_t)bytes &&
		      !memcmp(buf, want, bytes),
		      "destination: the source's data, byte for byte (%llu bytes)",
		      (unsigned long long)bytes);
		check(pwrite(pmo, "z", 1, 3) == 1,
		      "destination: writable (the one writable copy)");
		free(want);
		if (o->resolve_port)
			hold_for_resolve(dev, o);
		return failures;
	}
	check(ret == 0, "received the migration (%s)",
	      ret ? strerror(err) : "committed");
	check(pmo_count(pmo, o->n, MMT_STATE_VALID) == o->n,
	      "destination: every MMT VALID and writable");
	check(pread(pmo, buf, bytes, 0) == (ssize_t)bytes,
	      "destination: readable");
	/* send it back, no writer here */
	ret = migrate(conn, pmo, o, 1, &info);
	check(ret == 0, "migrated back to the source (%s)",
	      ret ? strerror(errno) : "ok");
	check(pmo_count(pmo, o->n, MMT_STATE_INVALID) == o->n,
	      "destination: every MMT INVALID once it went back");
	usleep(500000);
	return failures;
}

/* -L: N round trips on one connection, no writer. */
static int do_loops(int dev, const struct opts *o, int src)
{
	struct mmt_migrate_info info;
	unsigned int i, ok = 0;
	uint64_t bytes;
	int conn, a, b;

	conn = src ? connect_to(dev, o) : accept_one(dev, o);
	if (conn < 0)
		return failures + 1;
	for (i = 0; i < o->loops; i++) {
		a = pmo_new(dev, o, !src, &bytes);
		b = pmo_new(dev, o, src, &bytes);
		if (a < 0 || b < 0)
			break;
		if (!migrate(conn, a, o, src, &info) &&
		    !migrate(conn, b, o, !src, &info))
			ok++;
		close(a);
		close(b);
	}
	check(ok == o->loops, "%u of %u round trips on one connection", ok,
	      o->loops);
	usleep(300000);
	close(conn);
	return failures;
}

int main(int argc, char **argv)
{
	struct opts o = {
		.port = 7601, .n = 16, .levels = 2, .writer_us = 500,
		.seed = 1, .timeout = 30000,
	};
	int dev, c;

	if (argc < 2)
		return 2;
	role = argv[1];
	optind = 2;
	while ((c = getopt(argc, argv, "p:a:n:l:w:d:r:u:i:s:K:X:A:f:TL:t:F:G:HUCD:W:SRP:Q:O:")) != -1) {
		switch (c) {
		case 'p': o.port = atoi(optarg); break;
		case 'a': o.addr = optarg; break;
		case 'n': o.n = atoi(optarg); break;
		case 'l': o.levels = atoi(optarg); break;
		case 'w': o.window = atoi(optarg); break;
		case 'd': o.downtime = atoi(optarg); break;
		case 'r': o.rounds = atoi(optarg); break;
		case 'u': o.writer_us = atoi(optarg); break;
		case 'i': o.node = atoi(optarg); break;
		case 's': o.seed = atoi(optarg); break;
		case 'K': o.die = atoi(optarg); break;
		case 'X': o.expect = optarg; break;
		case 'A': o.abort_round = atoi(optarg); break;
		case 'f': o.finish_round = atoi(optarg); break;
		case 'T': o.transfer = 1; break;
		case 'L': o.loops = atoi(optarg); break;
		case 't': o.timeout = atoi(optarg); break;
		case 'F':
			if (o.nfault < 4)
				o.fault[o.nfault++] = optarg;
			break;
		case 'G':
			if (o.nlater < 4)
				o.later[o.nlater++] = optarg;
			break;
		case 'H': o.die_handover = 1; break;
		case 'U': o.unknown = 1; break;
		case 'C': o.committed_alone = 1; break;
		case 'D': o.counter = optarg; break;
		case 'W': o.within_ms = atoi(optarg); break;
		case 'Q': o.resolve_port = atoi(optarg); break;
		case 'O': o.resolve_outcome = optarg; break;
		case 'S': o.sweep = 1; break;
		case 'R': o.refused = 1; break;
		case 'P':
			if (sscanf(optarg, "%u:%u", &o.silent_after,
				   &o.silent_s) != 2)
				return 2;
			break;
		default: return 2;
		}
	}
	if (o.n > 256)
		return 2;
	dev = open("/dev/mmt", O_RDWR);
	if (dev < 0) {
		perror("/dev/mmt");
		return 2;
	}
	if (o.node) {
		struct mmt_node_id id = { .size = sizeof(id),
					  .node_id = o.node };

		if (ioctl(dev, MMT_IOC_SET_NODE_ID, &id))
			perror("MMT_IOC_SET_NODE_ID");
	}
	if (o.loops)
		return do_loops(dev, &o, !strcmp(role, "src")) ? 1 : 0;
	if (!strcmp(role, "src"))
		return do_src(dev, &o) ? 1 : 0;
	if (!strcmp(role, "dst"))
		return do_dst(dev, &o) ? 1 : 0;
	return 2;
}
