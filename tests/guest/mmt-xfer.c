// SPDX-License-Identifier: GPL-2.0
/*
 * mmt-xfer.c - guest test of connections: MMT_IOC_LISTEN/CONNECT/ACCEPT and
 * MMT_IOC_SEND/RECV over Soft-RoCE, MMT, secure and plain channels
 *
 * Built static by tests/guest/run.sh (gcc -static -I uapi).  One run is one
 * connection and one transfer of a PMO filled with a seeded pattern:
 *
 *   mmt-xfer recv [options]          listen on -p PORT, accept, receive
 *   mmt-xfer send -a ADDR [options]  connect (retrying while refused), send
 *
 * Options (both sides must agree on -n, -l, -c):
 *   -p PORT     port (default 7471)
 *   -a ADDR     peer address, IPv4 or IPv6 (send)
 *   -n N        closures (default 1)
 *   -l L        levels of the geometry (default 2: 128 KiB closures)
 *   -c CHAN     mmt | plain | secure | secure-ctl (default mmt).  The
 *               PMOs: mmt and secure-ctl keyed (secure-ctl: the secure
 *               channel through the controller), plain and secure plain
 *               memory (no key; secure: under the connection's key,
 *               MMT_IOC_CONN_SET_KEY, set on both sides)
 *   -Z          secure on plain PMOs: set no connection key
 *   -H MS       hold the connection MS ms after the transfer before
 *               closing it (a peer that fails locally, EPERM or ENOKEY,
 *               must not see the connection reset first: both sides of
 *               such a case hold)
 *   -O          the other side's kind of PMO: a keyed one for plain and
 *               secure, a plain one for secure-ctl (the transfer must be
 *               refused)
 *   -C          copy mode (send)
 *   -E          eager verification (recv)
 *   -s SEED     pattern seed (default 1)
 *   -t MS       timeout_ms of the ioctls (default 20000)
 *   -i ID       node id to set (default: none)
 *   -K MS       recv: receive in a child and SIGKILL it after MS ms
 *   -X ERRNO    expect the transfer to fail with this errno name
 *               (ECONNRESET, EOPNOTSUPP, ...); "reset-or-ok" accepts both;
 *               "NAME-or-reset" accepts NAME or ECONNRESET (the peer may
 *               close the connection before the receive ends)
 *   -R          send: after a failure, check every MMT is VALID (data
 *               intact) or INVALID (acked), and count them
 *   -N          send: connect once; -X names the connect's errno
 *   -B          both directions at once on the one connection: a child
 *               process sends (on the receiving side) or receives (on the
 *               sending side) a second PMO, pattern seed + 1000, copy mode
 *   -M N        recv: minimum root counter of the receive PMO (replay
 *               rule: every closure with a counter <= N is refused)
 *   -W MS       accept (recv) or connect (send), then idle MS ms without
 *               a transfer, and close
 *   -r N        N transfers in a row on the one connection, each of a new
 *               PMO (pattern seed + i), each read back byte-exact by the
 *               receiver; reports one check for the whole loop
 *   -b BYTES    data size that is not a closure multiple: the pattern
 *               fills the first BYTES of the PMO and the rest of its last
 *               closure is zero (both sides must agree)
 *   -k          recv: key the receive PMO (secure-ctl) or the connection
 *               (secure) with another key than the sender's (EBADMSG on
 *               the first closure)
 *   -V          recv: a child invalidates the receive PMO
 *               (MMT_IOC_PMO_INVALIDATE) as soon as its first closure is
 *               VALID, during the receive, which then fails on the
 *               receiver's side (EPERM there; the sender gets EREMOTEIO);
 *               checks that the child hit the transfer mid-way and that
 *               every MMT is INVALID afterwards
 *
 * Attacks (a test build of the module, MMT_DEBUG=1: debugfs mmt/conn_fault,
 * driver/mmt_conn_fault.c; tests/guest/rdma/README.md):
 *   -P          first a clean copy-mode transfer of the same PMO on the same
 *               connection (recv: into a second PMO, checked byte-exact)
 *   -f SPEC     arm the fault SPEC before that first transfer (repeatable)
 *   -F SPEC     arm the fault SPEC before the transfer (repeatable); after
 *               it, check that at least one fault fired
 *   -A I        the attack hits closure I: recv: exactly I accepted (with
 *               -X ECONNRESET: at most I and at least I - 3), each VALID and
 *               byte-exact, the rest WAITING; send: exactly I acked (not
 *               with ECONNRESET)
 *   -D NAME     the debugfs mmt/stats counter NAME grows by exactly 1 over
 *               the transfer (and a reject_* NAME: no other reject_* grows)
 *   -Q          transfer of unknown outcome (send -F "ack I drop": ACK I is
 *               lost on the wire): send: after the failure the PMO is
 *               MMT_PMO_INFO_MIG_UNKNOWN and a pwrite() fails with EUCLEAN;
 *               then MMT_IOC_MIGRATE_RESOLVE over a new connection to the
 *               same port: 0, outcome MMT_MIG_OUTCOME_ENDED; after it
 *               the INVALID MMTs are a prefix of more than the closures
 *               acked (the receiver took in the one whose ACK was lost),
 *               the others VALID, byte-exact and writable; a second
 *               resolve ENOENT.  recv: after the transfer, accept that
 *               connection on the same listener, hold it until the
 *               sender closes it, and check the module answered
 *               (statements_sent + 1)
 *   -L I        recv: closure I was tampered where the lazy check does not
 *               look (its data): the receive succeeds, reading closure I
 *               returns the bytes before the bad block, then fails with
 *               EBADMSG (-D's counter grows by one per read that met the
 *               bad block: 2, or 1 if it is the first), the others
 *               byte-exact
 *
 * Checks: the receiver reads the whole PMO back through the controller and
 * compares it byte for byte with the pattern; MMT states after the
 * transfer (receiver VALID, read-only in copy mode; sender INVALID in
 * transfer mode, VALID with the data intact in copy mode and after a
 * failure; plain PMOs: every MMT INVALID with MMT_INFO_PLAIN, key_len 0,
 * the sender's bytes intact; secure and plain channels, receiver, after a
 * failure: the
 * closures accepted read back as the pattern, the others still zero, and
 * for EBADMSG debugfs mmt/stats reject_badmsg grew by exactly one).  Output: "ok - ..." / "not ok - ..." lines and a summary line
 * with the figures; exit status: failed checks (0 = all passed), 2 on
 * usage or setup errors.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mmt.h"

static int failures;
static const char *role = "?";

static void check(int cond, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void check(int cond, const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (cond) {
		printf("ok - xfer %s: %s\n", role, buf);
	} else {
		failures++;
		printf("not ok - xfer %s: %s\n", role, buf);
	}
	fflush(stdout);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static const unsigned char test_key[16] = {
	0x4d, 0x4d, 0x54, 0x20, 0x74, 0x65, 0x73, 0x74,
	0x20, 0x6b, 0x65, 0x79, 0x20, 0x30, 0x30, 0x31,
};

/* The pattern: xorshift64 of (seed, 8-byte word index). */
/* -b: bytes of the PMO that hold data; the pattern is 0 from there on */
static uint64_t data_limit = UINT64_MAX;

static void pattern(unsigned char *buf, size_t len, uint64_t off,
		    uint64_t seed)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (off + i >= data_limit) {
			buf[i] = 0;
			continue;
		}
		uint64_t w = (off + i) / 8 + seed * 0x9e3779b97f4a7c15ull;

		w ^= w << 13;
		w ^= w >> 7;
		w ^= w << 17;
		buf[i] = (unsigned char)(w >> (((off + i) % 8) * 8));
	}
}

struct opts {
	const char *addr;
	unsigned int port;
	unsigned int closures;
	unsigned int levels;
	unsigned int channel;
	int keyed;		/* the PMOs have a key (mmt, secure-ctl) */
	int no_conn_key;
	unsigned int hold_ms;
	int resolve;
	int other_kind;
	int copy;
	int eager;
	uint64_t seed;
	unsigned int timeout_ms;
	unsigned int node_id;
	unsigned int kill_ms;
	const char *expect;
	int recheck;
	int connect_once;
	unsigned int idle_ms;
	unsigned long long min_counter;
	int both;
	unsigned int loops;
	int other_key;
	int pre;
	const char *pre_faults[8];
	int npre_faults;
	const char *faults[8];
	int nfaults;
	int attack_at;
	const char *counter;
	int lazy_bad;
	int invalidate;
};

#define FAULT_PATH	"/sys/kernel/debug/mmt/conn_fault"
#define STATS_PATH	"/sys/kernel/debug/mmt/stats"

/* Arm the fault @spec in debugfs mmt/conn_fault; 0 or -1. */
static int fault_arm(const char *spec)
{
	int fd = open(FAULT_PATH, O_WRONLY);
	ssize_t n = -1;

	if (fd >= 0) {
		n = write(fd, spec, strlen(spec));
		close(fd);
	}
	check(n == (ssize_t)strlen(spec), "arm fault \"%s\" (%s)", spec,
	      n < 0 ? strerror(errno) : "ok");
	return n == (ssize_t)strlen(spec) ? 0 : -1;
}

/*
 * The value of the line NAME of a debugfs file (@path), or with @prefix
 * the sum of every line starting with NAME; -1 if absent.
 */
static long long debugfs_value(const char *path, const char *name, int prefix)
{
	FILE *f = fopen(path, "r");
	char key[64];
	long long v, sum = -1;

	if (!f)
		return -1;
	while (fscanf(f, "%63s %lld", key, &v) == 2)
		if (prefix ? !strncmp(key, name, strlen(name)) :
		    !strcmp(key, name))
			sum = (sum < 0 ? 0 : sum) + v;
	fclose(f);
	return sum;
}

/* Arm @n faults; 0 or -1. */
static int faults_arm(const char *const *spec, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (fault_arm(spec[i]))
			return -1;
	return 0;
}

static int errno_of(const char *name)
{
	static const struct { const char *n; int e; } t[] = {
		{ "ECONNRESET", ECONNRESET }, { "EOPNOTSUPP", EOPNOTSUPP },
		{ "ETIMEDOUT", ETIMEDOUT }, { "ECONNREFUSED", ECONNREFUSED },
		{ "EMEDIUMTYPE", EMEDIUMTYPE }, { "EPERM", EPERM },
		{ "EINTR", EINTR }, { "EPROTO", EPROTO },
		{ "EBADMSG", EBADMSG }, { "EHOSTUNREACH", EHOSTUNREACH },
		{ "ESTALE", ESTALE }, { "ENETUNREACH", ENETUNREACH },
		{ "EILSEQ", EILSEQ }, { "EMSGSIZE", EMSGSIZE },
		{ "EPROTONOSUPPORT", EPROTONOSUPPORT }, { "EXDEV", EXDEV },
		{ "EREMOTEIO", EREMOTEIO }, { "ENOKEY", ENOKEY },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(t[i].n, name))
			return t[i].e;
	return -1;
}

static int pmo_create(int dev, const struct opts *o, uint64_t *bytes,
		      uint64_t *cbytes)
{
	struct mmt_pmo_create c;
	uint64_t closure = 1ull << (6 + 6 + 5 + (o->levels > 2 ? 4 : 0) +
				    (o->levels > 3 ? 4 : 0));

	if (o->levels < 2)
		closure = 1ull << 12;
	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.bytes = closure * o->closures;
	c.geometry.levels = o->levels;
	if (ioctl(dev, MMT_IOC_PMO_CREATE, &c)) {
		perror("MMT_IOC_PMO_CREATE");
		return -1;
	}
	if (c.closure_bytes != closure) {
		fprintf(stderr, "closure bytes %llu, expected %llu\n",
			(unsigned long long)c.closure_bytes,
			(unsigned long long)closure);
		close(c.fd);
		return -1;
	}
	*bytes = c.bytes;
	*cbytes = c.closure_bytes;
	return c.fd;
}

/* A plain PMO (no key) reads back as its bytes: nothing to do. */
static int pmo_key(int pmo, int receive, int other)
{
	struct mmt_pmo_key k;

	memset(&k, 0, sizeof(k));
	k.size = sizeof(k);
	k.key_len = sizeof(test_key);
	k.flags = receive ? MMT_KEY_RECEIVE : 0;
	memcpy(k.key, test_key, sizeof(test_key));
	if (other)
		k.key[15] ^= 0x80;
	if (ioctl(pmo, MMT_IOC_PMO_SET_KEY, &k)) {
		perror("MMT_IOC_PMO_SET_KEY");
		return -1;
	}
	return 0;
}

/* States of the first @n MMTs; returns the number read or -1. */
static int pmo_states(int pmo, struct mmt_mmt_info *m, unsigned int n)
{
	struct mmt_pmo_info q;

	memset(&q, 0, sizeof(q));
	q.size = sizeof(q);
	q.mmt_count = n;
	q.mmts = (uintptr_t)m;
	if (ioctl(pmo, MMT_IOC_PMO_INFO, &q)) {
		perror("MMT_IOC_PMO_INFO");
		return -1;
	}
	return q.mmt_count;
}

static int pmo_fill(int pmo, uint64_t bytes, uint64_t seed)
{
	size_t chunk = 1 << 20;
	unsigned char *buf = malloc(chunk);
	uint64_t off;

	if (!buf)
		return -1;
	for (off = 0; off < bytes; off += chunk) {
		size_t n = bytes - off < chunk ? bytes - off : chunk;

		pattern(buf, n, off, seed);
		if (pwrite(pmo, buf, n, off) != (ssize_t)n) {
			perror("pwrite");
			free(buf);
			return -1;
		}
	}
	free(buf);
	return 0;
}

/*
 * Compare closure range [first, last) with the pattern; returns the
 * number of mismatching closures (a read error counts as a mismatch).
 */
static unsigned int pmo_compare(int pmo, uint64_t cbytes, unsigned int first,
				unsigned int last, uint64_t seed,
				const struct mmt_mmt_info *only_valid)
{
	unsigned char *buf = malloc(cbytes), *want = malloc(cbytes);
	unsigned int i, bad = 0;

	if (!buf || !want) {
		free(buf);
		free(want);
		return last - first;
	}
	for (i = first; i < last; i++) {
		if (only_valid && only_valid[i].state != MMT_STATE_VALID)
			continue;
		pattern(want, cbytes, (uint64_t)i * cbytes, seed);
		if (pread(pmo, buf, cbytes, (uint64_t)i * cbytes) !=
		    (ssize_t)cbytes || memcmp(buf, want, cbytes)) {
			if (bad < 3)
				fprintf(stderr, "closure %u differs (%s)\n", i,
					strerror(errno));
			bad++;
		}
	}
	free(buf);
	free(want);
	return bad;
}

/* Closures [@first, @last) that do not read back as zeros. */
static unsigned int pmo_zero(int pmo, uint64_t cbytes, unsigned int first,
			     unsigned int last)
{
	unsigned char *buf = malloc(cbytes);
	unsigned int i, bad = 0;
	uint64_t j;

	if (!buf)
		return last - first;
	for (i = first; i < last; i++) {
		if (pread(pmo, buf, cbytes, (uint64_t)i * cbytes) !=
		    (ssize_t)cbytes) {
			bad++;
			continue;
		}
		for (j = 0; j < cbytes && !buf[j]; j++)
			;
		bad += j != cbytes;
	}
	free(buf);
	return bad;
}

/* A counter of debugfs mmt/stats, or -1. */
static int fill_addr(struct mmt_conn_addr *a, const char *s, unsigned int p)
{
	memset(a, 0, sizeof(*a));
	a->port = p;
	if (!s) {
		a->family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET, s, a->addr) == 1) {
		a->family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, s, a->addr) == 1) {
		a->family = AF_INET6;
		return 0;
	}
	return -1;
}

static void set_node(int dev, unsigned int id)
{
	struct mmt_node_id n;

	if (!id)
		return;
	memset(&n, 0, sizeof(n));
	n.size = sizeof(n);
	n.node_id = id;
	if (ioctl(dev, MMT_IOC_SET_NODE_ID, &n))
		perror("MMT_IOC_SET_NODE_ID");
}

static const char *chan_name(unsigned int c)
{
	return c == MMT_CHANNEL_MMT ? "mmt" : c == MMT_CHANNEL_PLAIN ?
		"plain" : "secure";
}

/* Does this side's PMO get a key? (-O: the other kind) */
static int side_keyed(const struct opts *o)
{
	return o->other_kind ? !o->keyed : o->keyed;
}

/* Key this side's PMO if it is to be keyed; 0 or -1. */
static int side_key(int pmo, const struct opts *o, int receive, int other)
{
	if (!side_keyed(o))
		return 0;
	return pmo_key(pmo, receive && o->channel == MMT_CHANNEL_MMT, other);
}

/*
 * Secure channel on plain PMOs: the connection's key (both sides the
 * test key; -k on the receiver: another one), unless -Z.
 */
static int conn_key(int conn, const struct opts *o, int other)
{
	struct mmt_conn_key k;

	if (o->channel != MMT_CHANNEL_SECURE || o->keyed || o->no_conn_key)
		return 0;
	memset(&k, 0, sizeof(k));
	k.size = sizeof(k);
	k.key_len = sizeof(test_key);
	memcpy(k.key, test_key, sizeof(test_key));
	if (other)
		k.key[15] ^= 0x80;
	if (ioctl(conn, MMT_IOC_CONN_SET_KEY, &k)) {
		perror("MMT_IOC_CONN_SET_KEY");
		return -1;
	}
	/* once per connection */
	check(ioctl(conn, MMT_IOC_CONN_SET_KEY, &k) == -1 && errno == EBUSY,
	      "MMT_IOC_CONN_SET_KEY a second time fails with EBUSY");
	return 0;
}

/*
 * Plain PMOs: every MMT INVALID with MMT_INFO_PLAIN and no key.  Returns
 * the number of MMTs that are not.
 */
static unsigned int plain_states(int pmo, unsigned int n)
{
	struct mmt_mmt_info *m = calloc(n, sizeof(*m));
	struct mmt_pmo_info q;
	unsigned int i, bad = n;

	memset(&q, 0, sizeof(q));
	q.size = sizeof(q);
	q.mmt_count = n;
	q.mmts = (uintptr_t)m;
	if (m && !ioctl(pmo, MMT_IOC_PMO_INFO, &q) && q.mmt_count == n &&
	    q.key_len == 0)
		for (i = 0, bad = 0; i < n; i++)
			bad += m[i].state != MMT_STATE_INVALID ||
			       !(m[i].flags & MMT_INFO_PLAIN);
	free(m);
	return bad;
}

/* The outcome of a transfer against -X. */
static int expect_outcome(const struct opts *o, int ret, int err,
			  const char *what)
{
	if (!o->expect) {
		check(ret == 0, "%s succeeds (%s)", what,
		      ret ? strerror(err) : "ok");
		return ret == 0;
	}
	if (!strcmp(o->expect, "reset-or-ok")) {
		check(ret == 0 || err == ECONNRESET,
		      "%s succeeds or fails with ECONNRESET (%s)", what,
		      ret ? strerror(err) : "ok");
		return ret == 0;
	}
	/* "NAME-or-reset": NAME, or ECONNRESET when the peer closes first */
	if (strlen(o->expect) > 9 &&
	    !strcmp(o->expect + strlen(o->expect) - 9, "-or-reset")) {
		char name[32];

		snprintf(name, sizeof(name), "%.*s",
			 (int)(strlen(o->expect) - 9), o->expect);
		check(ret == -1 && (err == errno_of(name) || err == ECONNRESET),
		      "%s fails with %s or ECONNRESET (%s)", what, name,
		      ret ? strerror(err) : "succeeded");
		return 0;
	}
	check(ret == -1 && err == errno_of(o->expect), "%s fails with %s (%s)",
	      what, o->expect, ret ? strerror(err) : "succeeded");
	return 0;
}

/*
 * The other direction on the same connection, in a child: send (or
 * receive) a second PMO with pattern seed + 1000 in copy mode.  Returns the
 * child's pid; the child exits with its failure count.
 */
static pid_t reverse_start(int dev, int conn, const struct opts *o, int send)
{
	struct mmt_xfer x;
	uint64_t bytes, cbytes;
	pid_t pid;
	int pmo, ret;

	fflush(stdout);
	pid = fork();
	if (pid)
		return pid;
	pmo = pmo_create(dev, o, &bytes, &cbytes);
	if (pmo < 0 || pmo_key(pmo, !send, 0) ||
	    (send && pmo_fill(pmo, bytes, o->seed + 1000)))
		_exit(2);
	memset(&x, 0, sizeof(x));
	x.size = sizeof(x);
	x.pmo_fd = pmo;
	x.channel = o->channel;
	x.flags = send ? MMT_XFER_COPY : 0;
	x.timeout_ms = o->timeout_ms;
	ret = ioctl(conn, send ? MMT_IOC_SEND : MMT_IOC_RECV, &x);
	check(ret == 0 && x.closures == o->closures,
	      "reverse direction: %s %u closures at the same time (%s)",
	      send ? "sent" : "received", o->closures,
	      ret ? strerror(errno) : "ok");
	if (!send)
		check(pmo_compare(pmo, cbytes, 0, o->closures, o->seed + 1000,
				  NULL) == 0,
		      "reverse direction: read back byte-exact");
	_exit(failures);
}

static void reverse_wait(pid_t pid)
{
	int status = 0;

	waitpid(pid, &status, 0);
	check(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "reverse direction child exits 0 (status %#x)", status);
}

/*
 * -r: o->loops transfers on @conn, each of a fresh PMO pair (sender: keyed
 * and filled with seed + i; receiver: keyed for receipt), closed after the
 * transfer; the receiver reads every one back.  Stops at the first error.
 */
static void xfer_loop(int dev, int conn, const struct opts *o, int send)
{
	unsigned int i, bad = 0;
	uint64_t bytes, cbytes;
	struct mmt_xfer x;
	const char *what = "ok";
	double t0 = now();
	int pmo, ret = 0;

	for (i = 0; i < o->loops && !ret && !bad; i++) {
		pmo = pmo_create(dev, o, &bytes, &cbytes);
		if (pmo < 0 || pmo_key(pmo, !send && o->channel ==
				       MMT_CHANNEL_MMT, 0) ||
		    (send && pmo_fill(pmo, bytes, o->seed + i))) {
			what = "PMO set-up failed";
			ret = -1;
			break;
		}
		memset(&x, 0, sizeof(x));
		x.size = sizeof(x);
		x.pmo_fd = pmo;
		x.channel = o->channel;
		x.flags = send && o->copy ? MMT_XFER_COPY : 0;
		x.timeout_ms = o->timeout_ms;
		ret = ioctl(conn, send ? MMT_IOC_SEND : MMT_IOC_RECV, &x);
		if (ret)
			what = strerror(errno);
		else if (x.closures != o->closures)
			bad++;
		else if (!send)
			bad += pmo_compare(pmo, cbytes, 0, o->closures,
					   o->seed + i, NULL);
		close(pmo);
	}
	check(!ret && !bad && i == o->loops,
	      "%u %s transfers of %u closures in a row on one connection%s (%u done, %u bad; %s)",
	      o->loops, chan_name(o->channel), o->closures,
	      send ? "" : ", each read back byte-exact", i, bad, what);
	printf("mmt-xfer %s: %u transfers in %.1f s\n", role, i, now() - t0);
}

/*
 * The checks of an attack (-F, -A, -D) after the transfer: @pmo is the
 * receive PMO, or -1 on the sending side.
 */
static void attack_checks(int pmo, uint64_t cbytes, const struct opts *o,
			  const struct mmt_xfer *x, int ret, long long fired0,
			  long long count0, long long rej0)
{
	unsigned int i, a = o->attack_at, got = x->closures, bad = 0;
	int reset = o->expect && !strcmp(o->expect, "ECONNRESET");
	int grow = 1;	/* what -D's counter must grow by */
	struct mmt_mmt_info *m;
	long long v;

	if (pmo >= 0 && !ret && o->lazy_bad >= 0) {
		unsigned char *buf = malloc(cbytes);
		ssize_t n = -1, good = 0;
		int e = 0;

		/*
		 * A short count of the good blocks first (uapi/mmt.h), then
		 * EBADMSG: two reads that each met the bad block, each
		 * counted in verify_fail.
		 */
		if (buf) {
			n = pread(pmo, buf, cbytes, o->lazy_bad * cbytes);
			e = errno;
			if (n >= 0 && (uint64_t)n < cbytes) {
				good = n;
				grow = 2;
				n = pread(pmo, buf, cbytes - good,
					  o->lazy_bad * cbytes + good);
				e = errno;
			}
			free(buf);
		}
		check(n == -1 && e == EBADMSG,
		      "reading the tampered closure %d fails with EBADMSG after %zd good bytes (%s)",
		      o->lazy_bad, good, n < 0 ? strerror(e) : "read it");
	}
	if (o->nfaults) {
		v = debugfs_value(FAULT_PATH, "fired", 0);
		check(v > fired0 && v - fired0 <= o->nfaults,
		      "the armed faults fired (%lld of %d)", v - fired0,
		      o->nfaults);
	}
	if (o->counter) {
		v = debugfs_value(STATS_PATH, o->counter, 0);
		check(count0 >= 0 && v == count0 + grow,
		      "debugfs mmt/stats %s grew by exactly %d (%lld -> %lld)",
		      o->counter, grow, count0, v);
		if (!strncmp(o->counter, "reject_", 7)) {
			v = debugfs_value(STATS_PATH, "reject_", 1);
			check(v == rej0 + 1,
			      "no other reject_* counter grew (sum %lld -> %lld)",
			      rej0, v);
		}
	}
	if (o->attack_at < 0 || !ret)
		return;
	if (pmo < 0) {
		if (!reset)
			check(got == a, "%u closures acked before the attacked one (%u)",
			      a, got);
		return;
	}
	if (reset)
		check(got <= a && got + 3 >= a,
		      "%u closures accepted before the connection broke (%u..%u)",
		      got, a > 3 ? a - 3 : 0, a);
	else
		check(got == a, "exactly the %u closures before the attacked one accepted (%u)",
		      a, got);
	m = calloc(o->closures, sizeof(*m));
	if (!m || pmo_states(pmo, m, o->closures) != (int)o->closures) {
		check(0, "MMT states readable");
		free(m);
		return;
	}
	for (i = 0; i < o->closures; i++)
		bad += m[i].state != (i < got ? MMT_STATE_VALID :
				      MMT_STATE_WAITING);
	check(!bad, "closures 0..%u VALID, %u..%u WAITING (%u wrong)",
	      got ? got - 1 : 0, got, o->closures - 1, bad);
	check(pmo_compare(pmo, cbytes, 0, got, o->seed, NULL) == 0,
	      "the %u closures accepted read back byte-exact", got);
	free(m);
}

/* -P, receiving side: a clean transfer into a second PMO first. */
static int pre_recv(int dev, int conn, const struct opts *o)
{
	struct mmt_xfer x;
	uint64_t bytes, cbytes;
	int pmo, ret;

	pmo = pmo_create(dev, o, &bytes, &cbytes);
	if (pmo < 0 || pmo_key(pmo, 1, 0) ||
	    faults_arm(o->pre_faults, o->npre_faults))
		return -1;
	memset(&x, 0, sizeof(x));
	x.size = sizeof(x);
	x.pmo_fd = pmo;
	x.channel = MMT_CHANNEL_MMT;
	x.timeout_ms = o->timeout_ms;
	ret = ioctl(conn, MMT_IOC_RECV, &x);
	check(ret == 0 && x.closures == o->closures,
	      "first transfer: %llu closures received (%s)",
	      (unsigned long long)x.closures, ret ? strerror(errno) : "ok");
	check(pmo_compare(pmo, cbytes, 0, o->closures, o->seed, NULL) == 0,
	      "first transfer: read back byte-exact");
	close(pmo);
	return ret ? -1 : 0;
}

/*
 * -V: in a child, wait until the first MMT of @pmo is VALID (the receive
 * has begun), then invalidate the PMO.  The child exits 0 if it did so
 * while closures were still to come, 1 if the receive was already over
 * (make the PMO larger), 2 on an error.
 */
static pid_t invalidator_start(int pmo, unsigned int n)
{
	struct mmt_mmt_info *m = calloc(n, sizeof(*m));
	double deadline = now() + 60;
	unsigned int i, valid;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid)
		return pid;
	if (!m)
		_exit(2);
	for (;;) {
		if (pmo_states(pmo, m, n) != (int)n)
			_exit(2);
		for (i = 0, valid = 0; i < n; i++)
			valid += m[i].state == MMT_STATE_VALID;
		if (valid)
			break;
		if (now() > deadline)
			_exit(2);
		usleep(500);
	}
	if (ioctl(pmo, MMT_IOC_PMO_INVALIDATE, 0))
		_exit(2);
	printf("mmt-xfer recv: invalidated the PMO with %u of %u closures VALID\n",
	       valid, n);
	fflush(stdout);
	_exit(valid < n ? 0 : 1);
}

/* -P, sending side: the same PMO in copy mode first (it stays VALID). */
static int pre_send(int conn, int pmo, const struct opts *o)
{
	struct mmt_xfer x;
	int ret;

	memset(&x, 0, sizeof(x));
	x.size = sizeof(x);
	x.pmo_fd = pmo;
	x.channel = MMT_CHANNEL_MMT;
	x.flags = MMT_XFER_COPY;
	x.timeout_ms = o->timeout_ms;
	ret = ioctl(conn, MMT_IOC_SEND, &x);
	check(ret == 0 && x.closures == o->closures,
	      "first transfer (copy): %llu closures sent (%s)",
	      (unsigned long long)x.closures, ret ? strerror(errno) : "ok");
	return ret ? -1 : 0;
}

static long long count_xfer(int dev, const struct opts *o, int conn,
			    int send, unsigned long long count);

/*
 * -Q, recv: accept the sender's second connection on @lfd and hold it
 * until the sender closes it; the module answers its resolve alone (it
 * may have done so before the accept: @sent is the count before the
 * transfer).
 */
static void recv_hold_resolve(int dev, const struct opts *o, int lfd,
			      uint64_t took, long long sent)
{
	struct mmt_connect c = { .size = sizeof(c), .timeout_ms = 60000 };
	struct pollfd pfd;
	int i;

	printf("mmt-xfer recv: took in %llu closures; waiting for the sender's resolve\n",
	       (unsigned long long)took);
	fflush(stdout);
	if (ioctl(lfd, MMT_IOC_ACCEPT, &c)) {
		check(0, "accept the resolve connection (%s)", strerror(errno));
		return;
	}
	/* the statement first: the sender asks, then takes the count */
	for (i = 0; i < 600; i++) {
		if (debugfs_value(STATS_PATH, "statements_sent", 0) > sent)
			break;
		usleep(100000);
	}
	count_xfer(dev, o, c.fd, 1, took);
	pfd.fd = c.fd;
	pfd.events = POLLIN;
	for (i = 0; i < 600; i++)
		if (poll(&pfd, 1, 100) > 0 && (pfd.revents & POLLHUP))
			break;
	check(debugfs_value(STATS_PATH, "statements_sent", 0) == sent + 1,
	      "its module answered the sender's resolve (statements_sent %lld -> %lld)",
	      sent, debugfs_value(STATS_PATH, "statements_sent", 0));
	close(c.fd);
}

static int do_recv(int dev, const struct opts *o)
{
	struct mmt_mmt_info *m;
	struct mmt_listen l;
	struct mmt_connect c;
	struct mmt_xfer x;
	uint64_t bytes, cbytes;
	unsigned int i, ok_state = 0;
	int pmo, conn, ret, err;
	long long fired0, count0 = 0, rej0 = 0;
	pid_t child = 0;
	double t0;
	struct pollfd pfd;
	long long badmsg, stmt0;

	stmt0 = debugfs_value(STATS_PATH, "statements_sent", 0);
	pmo = pmo_create(dev, o, &bytes, &cbytes);
	if (pmo < 0 || side_key(pmo, o, 1, o->other_key))
		return 2;
	if (o->min_counter) {
		struct mmt_pmo_counter rc = {
			.size = sizeof(rc), .root_counter = o->min_counter,
		};

		if (ioctl(pmo, MMT_IOC_PMO_SET_ROOT_COUNTER, &rc)) {
			perror("MMT_IOC_PMO_SET_ROOT_COUNTER");
			return 2;
		}
	}
	memset(&l, 0, sizeof(l));
	l.size = sizeof(l);
	if (fill_addr(&l.addr, o->addr, o->port))
		return 2;
	if (ioctl(dev, MMT_IOC_LISTEN, &l)) {
		perror("MMT_IOC_LISTEN");
		return 2;
	}
	printf("mmt-xfer recv: listening on port %u\n", o->port);
	fflush(stdout);
	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.timeout_ms = 60000;
	ret = ioctl(l.fd, MMT_IOC_ACCEPT, &c);
	check(ret == 0, "accept (%s)", ret ? strerror(errno) : "ok");
	if (ret)
		return failures;
	conn = c.fd;
	printf("mmt-xfer recv: peer node %u\n", c.peer_node);
	if (conn_key(conn, o, o->other_key))
		return failures + 1;
	if (o->loops) {
		xfer_loop(dev, conn, o, 0);
		close(conn);
		close(l.fd);
		close(pmo);
		return failures;
	}
	if (o->idle_ms) {
		usleep(o->idle_ms * 1000);
		close(conn);
		close(l.fd);
		return failures;
	}
	if (o->both)
		child = reverse_start(dev, conn, o, 1);
	if (o->pre && pre_recv(dev, conn, o))
		return failures + 1;
	if (faults_arm(o->faults, o->nfaults))
		return failures + 1;
	fired0 = debugfs_value(FAULT_PATH, "fired", 0);
	if (o->counter) {
		count0 = debugfs_value(STATS_PATH, o->counter, 0);
		rej0 = debugfs_value(STATS_PATH, "reject_", 1);
	}

	if (!o->expect) {
		pfd.fd = conn;
		pfd.events = POLLIN;
		ret = poll(&pfd, 1, o->timeout_ms);
		check(ret == 1 && (pfd.revents & POLLIN),
		      "poll reports POLLIN for the peer's offer");
	}

	memset(&x, 0, sizeof(x));
	x.size = sizeof(x);
	x.pmo_fd = pmo;
	x.channel = o->channel;
	x.flags = o->eager ? MMT_XFER_EAGER : 0;
	x.timeout_ms = o->timeout_ms;
	t0 = now();
	if (o->kill_ms) {
		pid_t pid = fork();
		int status;

		if (pid == 0) {
			ret = ioctl(conn, MMT_IOC_RECV, &x);
			_exit(ret ? 1 : 0);
		}
		usleep(o->kill_ms * 1000);
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		check(WIFSIGNALED(status), "receiver killed after %u ms (%s)",
		      o->kill_ms, WIFSIGNALED(status) ? "mid-transfer" :
		      "had finished: make the PMO larger");
		close(conn);
		close(l.fd);
		/* The MMTs not received are still WAITING: nothing lost. */
		m = calloc(o->closures, sizeof(*m));
		ret = pmo_states(pmo, m, o->closures);
		for (i = 0; ret > 0 && i < o->closures; i++)
			ok_state += m[i].state == MMT_STATE_WAITING ||
				    m[i].state == MMT_STATE_VALID;
		if (o->channel == MMT_CHANNEL_MMT)
			check(ok_state == o->closures,
			      "after the kill every MMT is WAITING or VALID");
		free(m);
		return failures;
	}
	if (o->invalidate) {
		pid_t pid = invalidator_start(pmo, o->closures);
		int status;

		ret = ioctl(conn, MMT_IOC_RECV, &x);
		err = errno;
		waitpid(pid, &status, 0);
		check(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "the PMO was invalidated during the receive (%s)",
		      WIFEXITED(status) && WEXITSTATUS(status) == 1 ?
		      "too late: make the PMO larger" : "child status");
		expect_outcome(o, ret, err, "MMT_IOC_RECV");
		m = calloc(o->closures, sizeof(*m));
		ret = pmo_states(pmo, m, o->closures);
		for (i = 0; ret > 0 && i < o->closures; i++)
			ok_state += m[i].state == MMT_STATE_INVALID;
		check(ok_state == o->closures,
		      "after the failure every MMT INVALID (%u), %llu accepted before",
		      ok_state, (unsigned long long)x.closures);
		free(m);
		close(conn);
		close(l.fd);
		close(pmo);
		return failures;
	}
	badmsg = debugfs_value(STATS_PATH, "reject_badmsg", 0);
	ret = ioctl(conn, MMT_IOC_RECV, &x);
	err = errno;
	attack_checks(pmo, cbytes, o, &x, ret, fired0, count0, rej0);
	if (ret && o->expect && o->channel != MMT_CHANNEL_MMT) {
		/* Stopped: what was accepted is there, the rest unchanged. */
		check(pmo_compare(pmo, cbytes, 0, x.closures, o->seed,
				  NULL) == 0 &&
		      pmo_zero(pmo, cbytes, x.closures, o->closures) == 0,
		      "after the failure %llu closures delivered, %llu unchanged",
		      (unsigned long long)x.closures,
		      (unsigned long long)(o->closures - x.closures));
		if (err == EBADMSG) {
			long long now_bad = debugfs_value(STATS_PATH,
							  "reject_badmsg", 0);

			check(now_bad == badmsg + 1,
			      "mmt/stats reject_badmsg %lld -> %lld", badmsg,
			      now_bad);
		}
	}
	if (ret && o->expect && o->channel == MMT_CHANNEL_MMT) {
		/* Refused: nothing accepted, every MMT still WAITING. */
		m = calloc(o->closures, sizeof(*m));
		ret = pmo_states(pmo, m, o->closures);
		for (i = 0; ret > 0 && i < o->closures; i++)
			ok_state += m[i].state == MMT_STATE_WAITING;
		check(ok_state == o->closures - x.closures,
		      "after the failure %u MMTs WAITING, %llu accepted",
		      ok_state, (unsigned long long)x.closures);
		free(m);
		ret = -1;
	}
	if (expect_outcome(o, ret, err, "MMT_IOC_RECV")) {
		double dt = now() - t0;

		check(x.closures == o->closures && x.bytes == bytes,
		      "received %llu closures, %llu bytes",
		      (unsigned long long)x.closures,
		      (unsigned long long)x.bytes);
		if (o->lazy_bad >= 0)
			check(pmo_compare(pmo, cbytes, 0, o->lazy_bad, o->seed,
					  NULL) == 0 &&
			      pmo_compare(pmo, cbytes, o->lazy_bad + 1,
					  o->closures, o->seed, NULL) == 0,
			      "every other closure reads back byte-exact");
		else
			check(pmo_compare(pmo, cbytes, 0, o->closures, o->seed,
					  NULL) == 0,
			      "%s channel: %u closures read back byte-exact",
			      chan_name(o->channel), o->closures);
		if (!side_keyed(o)) {
			check(plain_states(pmo, o->closures) == 0,
			      "plain PMO: every MMT INVALID, MMT_INFO_PLAIN, no key");
		} else {
			m = calloc(o->closures, sizeof(*m));
			ret = pmo_states(pmo, m, o->closures);
			for (i = 0; ret > 0 && i < o->closures; i++)
				ok_state += m[i].state == MMT_STATE_VALID &&
					    (o->channel != MMT_CHANNEL_MMT ||
					     !!(m[i].flags & MMT_INFO_READ_ONLY) ==
					     !!o->copy);
			check(ok_state == o->closures,
			      "every MMT VALID%s", o->copy ? ", read-only" : "");
			free(m);
		}
		printf("mmt-xfer recv: %s %s %u x %llu B: %.3f s (%llu ns in kernel)\n",
		       chan_name(o->channel), o->copy ? "copy" : "transfer",
		       o->closures, (unsigned long long)cbytes, dt,
		       (unsigned long long)x.ns);
	}
	if (child)
		reverse_wait(child);
	if (o->hold_ms)
		usleep(o->hold_ms * 1000);
	if (o->resolve)
		recv_hold_resolve(dev, o, l.fd, x.closures, stmt0);
	close(conn);
	close(l.fd);
	close(pmo);
	return failures;
}

/*
 * -Q: the receiver tells the sender, in band, how many closures its
 * receive took in: one plain closure (plain channel, no key) holding the
 * count, sent on the resolve connection once the statement was made, so
 * the sender checks the statement's effect against the receiver's own
 * count.  Returns the count, or -1.
 */
static long long count_xfer(int dev, const struct opts *o, int conn,
			    int send, unsigned long long count)
{
	struct opts o1 = *o;
	struct mmt_xfer x;
	uint64_t bytes, cbytes;
	unsigned char b[8];
	int pmo, ret, i;

	o1.closures = 1;
	pmo = pmo_create(dev, &o1, &bytes, &cbytes);
	if (pmo < 0)
		return -1;
	for (i = 0; i < 8; i++)
		b[i] = count >> (8 * i);
	if (send && pwrite(pmo, b, 8, 0) != 8) {
		close(pmo);
		return -1;
	}
	memset(&x, 0, sizeof(x));
	x.size = sizeof(x);
	x.pmo_fd = pmo;
	x.channel = MMT_CHANNEL_PLAIN;
	x.timeout_ms = 20000;
	ret = ioctl(conn, send ? MMT_IOC_SEND : MMT_IOC_RECV, &x);
	check(ret == 0, "the receiver's count, in band on the plain channel (%s)",
	      ret ? strerror(errno) : "ok");
	if (ret || (!send && pread(pmo, b, 8, 0) != 8)) {
		close(pmo);
		return -1;
	}
	close(pmo);
	for (count = 0, i = 7; i >= 0; i--)
		count = count << 8 | b[i];
	return (long long)count;
}

/*
 * -Q, send: the transfer failed with closures of unknown outcome (an ACK
 * lost): read-only until the receiver's statement resolves it, over a new
 * connection to the receiver's node; then one copy of each closure.
 */
static void send_resolve(int dev, const struct opts *o, int pmo,
			 uint64_t cbytes, uint64_t acked)
{
	struct mmt_pmo_info pi = { .size = sizeof(pi) };
	struct mmt_migrate_resolve rs;
	struct mmt_connect c;
	struct mmt_mmt_info *m = calloc(o->closures, sizeof(*m));
	unsigned int i, invalid = 0, prefix = 1;
	long long took;
	ssize_t r;
	int err, tries = 0;

	r = ioctl(pmo, MMT_IOC_PMO_INFO, &pi);
	check(!r && (pi.flags & MMT_PMO_INFO_MIG_UNKNOWN),
	      "after the lost ACK the PMO is MMT_PMO_INFO_MIG_UNKNOWN (flags %#x): the receiver may hold the closure",
	      r ? 0u : pi.flags);
	r = pwrite(pmo, "fork", 4, 0);
	err = errno;
	check(r < 0 && err == EUCLEAN,
	      "a write before the resolve fails with EUCLEAN (%s)",
	      r < 0 ? strerror(err) : "written: a second writable copy");
	r = ioctl(pmo, MMT_IOC_PMO_MIG_RESOLVE, 0);
	err = errno;
	check(r < 0 && err == ENOTCONN,
	      "MMT_IOC_PMO_MIG_RESOLVE on the owner's word: ENOTCONN (%s)",
	      r ? strerror(err) : "resolved");
	do {
		memset(&c, 0, sizeof(c));
		c.size = sizeof(c);
		c.timeout_ms = 5000;
		if (fill_addr(&c.addr, o->addr, o->port))
			return;
		r = ioctl(dev, MMT_IOC_CONNECT, &c);
		err = errno;
		if (r)
			usleep(200000);
	} while (r && ++tries < 50);
	check(r == 0, "a new connection to the receiver (%s)",
	      r ? strerror(err) : "ok");
	if (r || !m)
		return;
	memset(&rs, 0, sizeof(rs));
	rs.size = sizeof(rs);
	rs.pmo_fd = pmo;
	rs.timeout_ms = 20000;
	r = ioctl(c.fd, MMT_IOC_MIGRATE_RESOLVE, &rs);
	err = errno;
	check(r == 0 && rs.outcome == MMT_MIG_OUTCOME_ENDED,
	      "MMT_IOC_MIGRATE_RESOLVE: the receiver states its receive ended (%s, outcome %u)",
	      r ? strerror(err) : "0", rs.outcome);
	memset(&pi, 0, sizeof(pi));
	pi.size = sizeof(pi);
	check(!ioctl(pmo, MMT_IOC_PMO_INFO, &pi) && pi.flags == 0,
	      "resolved: no MMT_PMO_INFO_MIG_UNKNOWN (flags %#x)", pi.flags);
	if (pmo_states(pmo, m, o->closures) < 0)
		return;
	for (i = 0; i < o->closures; i++) {
		if (m[i].state == MMT_STATE_INVALID)
			prefix &= invalid++ == i;
		else
			prefix &= m[i].state == MMT_STATE_VALID;
	}
	took = count_xfer(dev, o, c.fd, 0, 0);
	check(prefix && invalid > acked && invalid == took,
	      "the %u closures the receiver took in (it says %lld) are INVALID here, a prefix beyond the %llu acked; the rest VALID",
	      invalid, took, (unsigned long long)acked);
	check(pmo_compare(pmo, cbytes, 0, o->closures, o->seed, m) == 0,
	      "every VALID MMT reads back byte-exact");
	if (invalid < o->closures) {
		off_t off = (off_t)invalid * cbytes;

		check(pwrite(pmo, "back", 4, off) == 4,
		      "closure %u is writable again", invalid);
	}
	memset(&rs, 0, sizeof(rs));
	rs.size = sizeof(rs);
	rs.pmo_fd = pmo;
	r = ioctl(c.fd, MMT_IOC_MIGRATE_RESOLVE, &rs);
	err = errno;
	check(r < 0 && err == ENOENT, "a second resolve: ENOENT (%s)",
	      r ? strerror(err) : "resolved");
	printf("mmt-xfer send: %llu acked, %u taken in by the receiver\n",
	       (unsigned long long)acked, invalid);
	close(c.fd);
	free(m);
}

static int do_send(int dev, const struct opts *o)
{
	struct mmt_mmt_info *m, *before;
	struct mmt_connect c;
	struct mmt_xfer x;
	uint64_t bytes, cbytes;
	unsigned int i, valid = 0, invalid = 0, regua = 0, regua_bad = 0;
	int pmo, ret, err, tries = 0;
	long long fired0, count0 = 0;
	pid_t child = 0;
	double t0, deadline = now() + 60;

	pmo = pmo_create(dev, o, &bytes, &cbytes);
	if (pmo < 0 || side_key(pmo, o, 0, 0) || pmo_fill(pmo, bytes, o->seed))
		return 2;
	for (;;) {
		memset(&c, 0, sizeof(c));
		c.size = sizeof(c);
		c.timeout_ms = 5000;
		if (fill_addr(&c.addr, o->addr, o->port) || !o->addr)
			return 2;
		ret = ioctl(dev, MMT_IOC_CONNECT, &c);
		err = errno;
		tries++;
		if (o->connect_once) {
			check(ret == -1 && o->expect &&
			      err == errno_of(o->expect),
			      "connect fails with %s (%s)", o->expect,
			      ret ? strerror(err) : "connected");
			return failures;
		}
		if (!ret || now() > deadline ||
		    (err != ECONNREFUSED && err != ETIMEDOUT &&
		     err != EHOSTUNREACH))
			break;
		usleep(200000);
	}
	check(ret == 0, "connect to %s port %u (%d tries; %s)", o->addr,
	      o->port, tries, ret ? strerror(err) : "ok");
	if (ret)
		return failures;
	printf("mmt-xfer send: peer node %u\n", c.peer_node);
	if (conn_key(c.fd, o, 0))
		return failures + 1;
	if (o->loops) {
		xfer_loop(dev, c.fd, o, 1);
		close(c.fd);
		close(pmo);
		return failures;
	}
	if (o->idle_ms) {
		usleep(o->idle_ms * 1000);
		close(c.fd);
		return failures;
	}
	if (o->both)
		child = reverse_start(dev, c.fd, o, 0);
	if (o->pre && pre_send(c.fd, pmo, o))
		return failures + 1;
	if (faults_arm(o->faults, o->nfaults))
		return failures + 1;
	fired0 = debugfs_value(FAULT_PATH, "fired", 0);
	if (o->counter)
		count0 = debugfs_value(STATS_PATH, o->counter, 0);

	memset(&x, 0, sizeof(x));
	x.size = sizeof(x);
	x.pmo_fd = pmo;
	x.channel = o->channel;
	x.flags = o->copy ? MMT_XFER_COPY : 0;
	x.timeout_ms = o->timeout_ms;
	before = calloc(o->closures, sizeof(*before));
	m = calloc(o->closures, sizeof(*m));
	if (!before || !m || pmo_states(pmo, before, o->closures) < 0)
		return 2;
	t0 = now();
	ret = ioctl(c.fd, MMT_IOC_SEND, &x);
	err = errno;
	attack_checks(-1, cbytes, o, &x, ret, fired0, count0, 0);
	if (pmo_states(pmo, m, o->closures) < 0)
		return 2;
	for (i = 0; i < o->closures; i++) {
		valid += m[i].state == MMT_STATE_VALID;
		invalid += m[i].state == MMT_STATE_INVALID;
		if (m[i].gua != before[i].gua) {
			regua++;
			regua_bad += m[i].state != MMT_STATE_VALID;
		}
	}
	if (expect_outcome(o, ret, err, "MMT_IOC_SEND")) {
		double dt = now() - t0;

		check(x.closures == o->closures, "sent %llu closures",
		      (unsigned long long)x.closures);
		if (!side_keyed(o))
			check(plain_states(pmo, o->closures) == 0 &&
			      !pmo_compare(pmo, cbytes, 0, o->closures,
					   o->seed, NULL),
			      "%s: the sender's plain PMO unchanged (INVALID, MMT_INFO_PLAIN), bytes intact",
			      chan_name(o->channel));
		else if (o->channel == MMT_CHANNEL_MMT && !o->copy)
			check(invalid == o->closures,
			      "transfer: every sender MMT INVALID (%u)",
			      invalid);
		else
			check(valid == o->closures &&
			      !pmo_compare(pmo, cbytes, 0, o->closures,
					   o->seed, NULL),
			      "%s: every sender MMT VALID, data intact",
			      o->copy ? "copy" : chan_name(o->channel));
		printf("mmt-xfer send: %s %s %u x %llu B: %.3f s (%llu ns in kernel)\n",
		       chan_name(o->channel), o->copy ? "copy" : "transfer",
		       o->closures, (unsigned long long)cbytes, dt,
		       (unsigned long long)x.ns);
	} else if (o->resolve) {
		send_resolve(dev, o, pmo, cbytes, x.closures);
	} else if (o->recheck && !side_keyed(o)) {
		check(plain_states(pmo, o->closures) == 0 &&
		      !pmo_compare(pmo, cbytes, 0, o->closures, o->seed, NULL),
		      "after the failure the plain PMO is unchanged, bytes intact");
		printf("mmt-xfer send: failed after %llu closures acked (%s)\n",
		       (unsigned long long)x.closures, strerror(err));
	} else if (o->recheck) {
		/* Failed: nothing is SENDING, nothing lost. */
		check(valid + invalid == o->closures,
		      "after the failure no MMT is SENDING (%u VALID, %u INVALID)",
		      valid, invalid);
		check(o->copy ? invalid == 0 : invalid == x.closures,
		      "INVALID MMTs are exactly the %llu acked",
		      (unsigned long long)x.closures);
		check(pmo_compare(pmo, cbytes, 0, o->closures, o->seed, m) == 0,
		      "every VALID sender MMT reads back byte-exact");
		/*
		 * Transfer mode: closures written but not acked may have
		 * reached the receiver (lost ack), so they were re-encrypted
		 * under a fresh GUA; at most the window (4).  Copy: none.
		 */
		/*
		 * After -P the build re-assigns every GUA (they must rise
		 * above the first transfer's), so the count says nothing.
		 */
		if (!o->pre)
			check(!regua_bad &&
			      (o->copy ? regua == 0 : regua <= 4),
			      "%u MMTs re-encrypted under a fresh GUA (%s)",
			      regua, o->copy ? "copy: none" :
			      "transfer: unacked, <= 4");
		printf("mmt-xfer send: failed after %llu closures acked (%s)\n",
		       (unsigned long long)x.closures, strerror(err));
	}
	if (child)
		reverse_wait(child);
	if (o->hold_ms)
		usleep(o->hold_ms * 1000);
	free(m);
	free(before);
	close(c.fd);
	close(pmo);
	return failures;
}

int main(int argc, char **argv)
{
	struct opts o = {
		.port = 7471, .closures = 1, .levels = 2, .seed = 1,
		.timeout_ms = 20000, .channel = MMT_CHANNEL_MMT, .keyed = 1,
		.attack_at = -1, .lazy_bad = -1,
	};
	int dev, opt, ret;

	if (argc < 2) {
		fprintf(stderr, "usage: mmt-xfer recv|send [options]\n");
		return 2;
	}
	role = argv[1];
	optind = 2;
	while ((opt = getopt(argc, argv,
			     "a:p:n:l:c:CEs:t:i:K:X:RNW:M:Bkr:PF:f:A:D:L:b:VZOH:Q")) != -1) {
		switch (opt) {
		case 'a':
			o.addr = optarg;
			break;
		case 'p':
			o.port = atoi(optarg);
			break;
		case 'n':
			o.closures = atoi(optarg);
			break;
		case 'l':
			o.levels = atoi(optarg);
			break;
		case 'c':
			o.channel = !strcmp(optarg, "plain") ?
				MMT_CHANNEL_PLAIN : !strncmp(optarg, "secure", 6) ?
				MMT_CHANNEL_SECURE : MMT_CHANNEL_MMT;
			o.keyed = o.channel == MMT_CHANNEL_MMT ||
				  !strcmp(optarg, "secure-ctl");
			break;
		case 'Z':
			o.no_conn_key = 1;
			break;
		case 'O':
			o.other_kind = 1;
			break;
		case 'H':
			o.hold_ms = atoi(optarg);
			break;
		case 'C':
			o.copy = 1;
			break;
		case 'E':
			o.eager = 1;
			break;
		case 's':
			o.seed = strtoull(optarg, NULL, 0);
			break;
		case 't':
			o.timeout_ms = atoi(optarg);
			break;
		case 'i':
			o.node_id = atoi(optarg);
			break;
		case 'K':
			o.kill_ms = atoi(optarg);
			break;
		case 'X':
			o.expect = optarg;
			break;
		case 'R':
			o.recheck = 1;
			break;
		case 'N':
			o.connect_once = 1;
			break;
		case 'V':
			o.invalidate = 1;
			break;
		case 'k':
			o.other_key = 1;
			break;
		case 'B':
			o.both = 1;
			break;
		case 'M':
			o.min_counter = strtoull(optarg, NULL, 0);
			break;
		case 'W':
			o.idle_ms = atoi(optarg);
			break;
		case 'r':
			o.loops = atoi(optarg);
			break;
		case 'P':
			o.pre = 1;
			break;
		case 'f':
			if (o.npre_faults == 8)
				return 2;
			o.pre_faults[o.npre_faults++] = optarg;
			break;
		case 'F':
			if (o.nfaults == 8)
				return 2;
			o.faults[o.nfaults++] = optarg;
			break;
		case 'A':
			o.attack_at = atoi(optarg);
			break;
		case 'D':
			o.counter = optarg;
			break;
		case 'L':
			o.lazy_bad = atoi(optarg);
			break;
		case 'Q':
			o.resolve = 1;
			break;
		case 'b':
			data_limit = strtoull(optarg, NULL, 0);
			break;
		default:
			return 2;
		}
	}
	dev = open("/dev/mmt", O_RDWR);
	if (dev < 0) {
		perror("/dev/mmt");
		return 2;
	}
	set_node(dev, o.node_id);
	{
		struct mmt_query q;

		memset(&q, 0, sizeof(q));
		q.size = sizeof(q);
		check(!ioctl(dev, MMT_IOC_QUERY, &q) &&
		      (q.features & MMT_FEAT_RDMA),
		      "MMT_IOC_QUERY reports MMT_FEAT_RDMA");
	}
	if (!strcmp(role, "recv"))
		ret = do_recv(dev, &o);
	else if (!strcmp(role, "send"))
		ret = do_send(dev, &o);
	else
		ret = 2;
	printf("mmt-xfer %s: %d failed\n", role, failures);
	return ret > 100 ? 100 : ret;
}
