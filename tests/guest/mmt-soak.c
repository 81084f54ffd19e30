// SPDX-License-Identifier: GPL-2.0
/*
 * mmt-soak.c - the workload of the fault soak (make soak, tests/soak/):
 * one agent per guest, each holding token PMOs that its writer keeps
 * writing and its migrator moves live to the other guests, while the
 * nemesis (tests/guest/g-soak.sh) injects faults.  The agent reports what
 * it sees; tests/soak/check.py decides.
 *
 * Usage: mmt-soak -i NODE -N NODES -p PORT -t SECONDS [-T TOKENS]
 *		   [-s SEED] [-P PLANT] [-m MOVES]
 *
 * A token is a keyed PMO of 4 closures of 128 KiB under one key all
 * agents share, named by the id in its first record.  Records are 64
 * bytes: le64 token id, le64 seq, 48 bytes derived from both (a
 * plaintext check).  The writer writes record (id, seq + 1) at offset 0
 * and in closure (seq + 1) % 4, then, once both pwrite()s returned, counts
 * seq + 1 as acknowledged.  The migrator picks a token and a peer at
 * random every 1-3 s and does one of (-m, a comma-separated list of
 * migrate, delegate, checkpoint; default all three):
 *  - a live migration (MMT_IOC_MIGRATE_SEND, port PORT), the writer
 *    going on; an outcome it cannot know is resolved on the
 *    destination's statement (MMT_IOC_MIGRATE_RESOLVE over new
 *    connections); without a final statement it stays read-only.  With
 *    -P force an unknown outcome is resolved by force at once (the
 *    planted violation: a resolve without evidence);
 *  - a delegation (MMT_IOC_SEND, MMT channel, transfer mode, port
 *    PORT + 1), the writer paused: first record (id, seq + 1) is written
 *    into every closure, so that each closure the destination takes in
 *    names the token and the delegation; the destination receives lazily
 *    or eagerly (MMT_XFER_EAGER) at random.  A delegation that fails with
 *    verdicts lost leaves the PMO read-only (MMT_PMO_INFO_MIG_UNKNOWN),
 *    resolved as a migration's, on the destination's statement that its
 *    receive ended (then the closures it took in are INVALID here, the
 *    others writable), or by force at once with -P force;
 *  - a checkpoint (MMT_IOC_PMO_CHECKPOINT into a buffer, the writer going
 *    on), and its restore (MMT_IOC_RESTORE) as the new copy; half of them
 *    with MMT_CKPT_PENDING, which then either invalidate the PMO (the
 *    dump went through) and restore, or take it back
 *    (MMT_IOC_PMO_MIG_RESOLVE: the dump failed) and try to restore the
 *    image anyway, which must fail.  A second restore of an image
 *    restored must fail too.
 * Receivers accept connections and take migrations and delegations in.
 *
 * Lines on stdout, "soak KIND MS NODE ...", MS the wall clock in ms:
 *   S MS NODE TOK STATE SEQ INST  once a second per token held: STATE W
 *			      (writable), F (handing over: writers frozen),
 *			      R (outcome unknown: read-only), I (INVALID);
 *			      INST this agent's number for this copy (two
 *			      copies of one token on one node differ)
 *   C MS NODE TOK SEQ NONCE   a migration into this node committed; SEQ the
 *			      record read, NONCE its receive nonce (hex)
 *   L MS NODE TOK ACKED NONCE RESULT PEER START  a migration from this
 *			      node to node PEER ended: ACKED the highest seq
 *			      acknowledged before it; RESULT committed,
 *			      failed, unknown, resolved-committed,
 *			      resolved-aborted, forced; START the wall clock
 *			      in ms when it began
 *   D MS NODE TOK SEQ MASK RESULT PEER RESOLVE  a delegation from this
 *			      node to node PEER ended: SEQ the record (id, SEQ)
 *			      in every closure, MASK per closure this node's
 *			      MMT after it (and its resolve): 1 VALID and
 *			      writable, R VALID while the outcome is unknown
 *			      (read-only: the resolve gave up), 0 not VALID
 *			      ("0110", "RRRR"); RESULT ok or the errno's number;
 *			      RESOLVE - (the outcome known), resolved-ended (on
 *			      the destination's statement), forced, or unknown
 *			      (no final statement: the token dropped)
 *   X MS NODE TOK SEQ MASK RESULT MODE  a delegation into this node ended
 *			      with at least one closure taken in: MASK per
 *			      closure 1 if VALID here, RESULT ok or the errno's
 *			      number, MODE lazy or eager
 *   K MS NODE TOK ACKED RESULT SEQ  a checkpoint of this node ended: ACKED
 *			      the highest seq acknowledged before it; RESULT
 *			      restored (SEQ the record read), failed-ERRNO (no
 *			      checkpoint: the token kept), restore-ERRNO (the
 *			      restore failed: the token lost), taken-back (the
 *			      pending checkpoint resolved, its image not
 *			      restorable), again-restored / back-restored (a
 *			      second restore of the image, or one of an image
 *			      taken back, succeeded: two copies)
 *   E MS NODE TOK WHAT        a plaintext mismatch
 *   O MS NODE NAME COUNT      totals at the end
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "mmt.h"

#define TOK_MAX		64
#define TOK_CLOSURES	4
#define TOK_LEVELS	2
#define TOK_CB		(128u << 10)	/* closure bytes at levels 2 */
#define REC		64

static const unsigned char key[16] = "mmt-soak-key-16";

struct tok {
	pthread_mutex_t lk;	/* @used, @pmo's lifetime */
	int used;		/* slot holds a token */
	int pmo;
	uint64_t id;
	unsigned int inst;	/* this agent's number for this copy */
	_Atomic uint64_t seq;	/* last written */
	_Atomic uint64_t acked;	/* last acknowledged */
	pthread_mutex_t wlk;	/* held by the writer while it writes */
	_Atomic int paused;	/* the writer leaves it alone */
	_Atomic int frozen;	/* its handover runs */
	_Atomic int unknown;	/* outcome unknown: read-only */
};

static struct tok toks[TOK_MAX];
static pthread_mutex_t toks_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static int dev, node, nodes, port, plant_force;
static int moves = 7;	/* bit 0 migrate, 1 delegate, 2 checkpoint */
static double t_end;
static _Atomic unsigned int n_inst;
static _Atomic unsigned long n_writes, n_mig, n_commit, n_fail, n_unknown,
	n_res_commit, n_res_abort, n_res_ended, n_forced, n_in, n_errors,
	n_deleg, n_deleg_ok, n_deleg_unknown, n_deleg_in, n_ckpt, n_restored,
	n_taken_back;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static long long wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void out(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&out_lock);
	printf("soak ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
}

static unsigned int rnd(unsigned int *s, unsigned int n)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return n ? *s % n : *s;
}

static void rec_fill(unsigned char *r, uint64_t id, uint64_t seq)
{
	uint32_t x = (uint32_t)(id * 2654435761u) ^ (uint32_t)seq ^ 0x5eed;
	int i;

	memcpy(r, &id, 8);
	memcpy(r + 8, &seq, 8);
	for (i = 16; i < REC; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		r[i] = x;
	}
}

/* A record as read: consistent?  Its id and seq out. */
static int rec_check(const unsigned char *r, uint64_t *id, uint64_t *seq)
{
	unsigned char want[REC];

	memcpy(id, r, 8);
	memcpy(seq, r + 8, 8);
	rec_fill(want, *id, *seq);
	return !memcmp(want, r, REC);
}

static int pmo_new(int receive)
{
	struct mmt_pmo_create c = { .size = sizeof(c) };
	struct mmt_pmo_key k = { .size = sizeof(k), .key_len = 16 };

	c.geometry.levels = TOK_LEVELS;
	c.bytes = (uint64_t)TOK_CLOSURES * TOK_CB;
	if (ioctl(dev, MMT_IOC_PMO_CREATE, &c))
		return -1;
	memcpy(k.key, key, 16);
	k.flags = receive ? MMT_KEY_RECEIVE : 0;
	if (ioctl(c.fd, MMT_IOC_PMO_SET_KEY, &k)) {
		close(c.fd);
		return -1;
	}
	return c.fd;
}

/*
 * Bit i set if the PMO's MMT i is VALID; its MMT_PMO_INFO_* flags in
 * @flags.  -1 if MMT_IOC_PMO_INFO fails.
 */
static int pmo_valid(int pmo, unsigned int *flags)
{
	struct mmt_mmt_info m[TOK_CLOSURES];
	struct mmt_pmo_info q = { .size = sizeof(q) };
	unsigned int i;
	int mask = 0;

	q.mmt_count = TOK_CLOSURES;
	q.mmts = (uintptr_t)m;
	if (ioctl(pmo, MMT_IOC_PMO_INFO, &q))
		return -1;
	for (i = 0; i < q.mmt_count && i < TOK_CLOSURES; i++)
		if (m[i].state == MMT_STATE_VALID)
			mask |= 1 << i;
	*flags = q.flags;
	return mask;
}

static char pmo_state(struct tok *t)
{
	unsigned int flags;
	int mask = pmo_valid(t->pmo, &flags);

	if (mask < 0)
		return '?';
	if (mask != (1 << TOK_CLOSURES) - 1)
		return 'I';
	if (flags & MMT_PMO_INFO_MIG_UNKNOWN)
		return 'R';
	return atomic_load(&t->frozen) ? 'F' : 'W';
}

/*
 * pmo_valid()'s mask (0 if it fails), and as a string in @str: per MMT 1
 * if VALID and writable, R if VALID but the PMO's outcome is unknown
 * (MMT_PMO_INFO_MIG_UNKNOWN: read-only), 0 if not VALID.
 */
static unsigned int pmo_mask(int pmo, char *str)
{
	unsigned int i, flags = 0;
	int mask = pmo_valid(pmo, &flags);

	if (mask < 0)
		mask = 0;
	for (i = 0; i < TOK_CLOSURES; i++)
		str[i] = !(mask & (1 << i)) ? '0' :
			 flags & MMT_PMO_INFO_MIG_UNKNOWN ? 'R' : '1';
	str[TOK_CLOSURES] = 0;
	return mask;
}

/*
 * The records at the start of the closures of @mask must all be one
 * (id, seq), returned in @id and @seq: 0 if so; -1 if not, if a read
 * fails, or if @mask is empty.
 */
static int closures_check(int pmo, unsigned int mask, uint64_t *id,
			  uint64_t *seq)
{
	unsigned char r[REC];
	uint64_t i2, s2;
	unsigned int c, first = 1;

	for (c = 0; c < TOK_CLOSURES; c++) {
		if (!(mask & (1u << c)))
			continue;
		if (pread(pmo, r, REC, (off_t)c * TOK_CB) != REC ||
		    !rec_check(r, &i2, &s2))
			return -1;
		if (first) {
			*id = i2;
			*seq = s2;
			first = 0;
		} else if (i2 != *id || s2 != *seq) {
			return -1;
		}
	}
	return first ? -1 : 0;
}

static void tok_release(struct tok *t)
{
	pthread_mutex_lock(&toks_lock);
	pthread_mutex_lock(&t->lk);
	t->used = 0;
	close(t->pmo);
	pthread_mutex_unlock(&t->lk);
	pthread_mutex_unlock(&toks_lock);
}

static int tok_add(int pmo, uint64_t id, uint64_t seq)
{
	int i;

	pthread_mutex_lock(&toks_lock);
	for (i = 0; i < TOK_MAX && toks[i].used; i++)
		;
	if (i < TOK_MAX) {
		struct tok *t = &toks[i];

		pthread_mutex_lock(&t->lk);
		t->pmo = pmo;
		t->id = id;
		t->inst = atomic_fetch_add(&n_inst, 1) + 1;
		atomic_store(&t->seq, seq);
		atomic_store(&t->acked, seq);
		atomic_store(&t->paused, 0);
		atomic_store(&t->frozen, 0);
		atomic_store(&t->unknown, 0);
		t->used = 1;
		pthread_mutex_unlock(&t->lk);
	}
	pthread_mutex_unlock(&toks_lock);
	return i < TOK_MAX ? 0 : -1;
}

/* ------------------------------------------------------------ writer */

static void *writer_main(void *arg)
{
	unsigned char r[REC];
	int i;

	(void)arg;
	while (now() < t_end) {
		for (i = 0; i < TOK_MAX; i++) {
			struct tok *t = &toks[i];
			uint64_t s, id;
			int fd, ok, ok2;

			/*
			 * a pwrite() waits out a handover: on a dup of the
			 * fd, so that the lock that keeps the slot is held
			 * only briefly and a token released meanwhile is
			 * never confused with a new one under the same fd
			 */
			pthread_mutex_lock(&t->wlk);
			pthread_mutex_lock(&t->lk);
			fd = t->used && !atomic_load(&t->unknown) &&
			     !atomic_load(&t->paused) ? dup(t->pmo) : -1;
			s = atomic_load(&t->seq) + 1;
			id = t->id;
			pthread_mutex_unlock(&t->lk);
			if (fd < 0) {
				pthread_mutex_unlock(&t->wlk);
				continue;
			}
			rec_fill(r, id, s);
			ok = pwrite(fd, r, REC, 0) == REC;
			ok2 = ok && pwrite(fd, r, REC, (off_t)(s % TOK_CLOSURES) *
					   TOK_CB) == REC;
			close(fd);
			/* the slot may hold another token by now */
			pthread_mutex_lock(&t->lk);
			if (t->used && t->id == id) {
				if (ok)
					atomic_store(&t->seq, s);
				if (ok2) {
					atomic_store(&t->acked, s);
					atomic_fetch_add(&n_writes, 1);
				}
			}
			pthread_mutex_unlock(&t->lk);
			pthread_mutex_unlock(&t->wlk);
		}
		usleep(2000);
	}
	return NULL;
}

/* ------------------------------------------------------------ reporter */

static void *reporter_main(void *arg)
{
	int i;

	(void)arg;
	while (now() < t_end) {
		for (i = 0; i < TOK_MAX; i++) {
			pthread_mutex_lock(&toks[i].lk);
			if (toks[i].used)
				out("S %lld %d %llu %c %llu %u", wall_ms(), node,
				    (unsigned long long)toks[i].id,
				    pmo_state(&toks[i]),
				    (unsigned long long)atomic_load(&toks[i].acked),
				    toks[i].inst);
			pthread_mutex_unlock(&toks[i].lk);
		}
		usleep(1000000);
	}
	return NULL;
}

/* ------------------------------------------------------------ receiver */

static void hex(const unsigned char *b, char *s)
{
	int i;

	for (i = 0; i < 16; i++)
		sprintf(s + 2 * i, "%02x", b[i]);
}

/* Verify every record of a token just taken in. */
static int tok_verify(int pmo, uint64_t *id, uint64_t *seq)
{
	unsigned char r[REC];
	uint64_t i2, s2;
	unsigned int c;

	if (pread(pmo, r, REC, 0) != REC || !rec_check(r, id, seq))
		return -1;
	for (c = 0; c < TOK_CLOSURES; c++) {
		if (pread(pmo, r, REC, (off_t)c * TOK_CB) != REC)
			return -1;
		/* a closure never written holds zeros */
		if (!r[0] && !memcmp(r, r + 1, REC - 1))
			continue;
		if (!rec_check(r, &i2, &s2) || i2 != *id || s2 > *seq)
			return -1;
	}
	return 0;
}

static void *conn_main(void *arg)
{
	int conn = (int)(intptr_t)arg;

	for (;;) {
		struct mmt_migrate a = { .size = sizeof(a) };
		struct mmt_migrate_info info = { .size = sizeof(info) };
		uint64_t id, seq;
		char nonce[33];
		int pmo = pmo_new(1);

		if (pmo < 0)
			break;
		a.pmo_fd = pmo;
		a.timeout_ms = 30000;
		a.info = (uintptr_t)&info;
		if (ioctl(conn, MMT_IOC_MIGRATE_RECV, &a)) {
			close(pmo);
			if (errno == ETIMEDOUT || errno == ECANCELED ||
			    errno == EPROTO || errno == EBADMSG ||
			    errno == ESTALE)
				continue;
			break;	/* the connection ended */
		}
		atomic_fetch_add(&n_in, 1);
		hex(info.nonce, nonce);
		if (tok_verify(pmo, &id, &seq)) {
			out("E %lld %d ? plaintext %s", wall_ms(), node, nonce);
			atomic_fetch_add(&n_errors, 1);
			close(pmo);
			continue;
		}
		out("C %lld %d %llu %llu %s", wall_ms(), node,
		    (unsigned long long)id, (unsigned long long)seq, nonce);
		if (tok_add(pmo, id, seq)) {
			out("E %lld %d %llu no-slot %s", wall_ms(), node,
			    (unsigned long long)id, nonce);
			atomic_fetch_add(&n_errors, 1);
			close(pmo);
		}
	}
	close(conn);
	return NULL;
}

/* One delegation into this node per connection (port + 1). */
static void *deleg_main(void *arg)
{
	int conn = (int)(intptr_t)arg;
	struct mmt_xfer x = { .size = sizeof(x) };
	unsigned int seed = (unsigned int)wall_ms() ^ conn, mask;
	int pmo = pmo_new(1), eager, r, err;
	uint64_t id, seq;
	char ms[TOK_CLOSURES + 1], res[16];

	if (pmo < 0) {
		close(conn);
		return NULL;
	}
	eager = rnd(&seed, 2);
	x.pmo_fd = pmo;
	x.channel = MMT_CHANNEL_MMT;
	x.flags = eager ? MMT_XFER_EAGER : 0;
	x.timeout_ms = 30000;
	r = ioctl(conn, MMT_IOC_RECV, &x);
	err = errno;
	close(conn);
	mask = pmo_mask(pmo, ms);
	if (!mask) {	/* nothing taken in: nothing names the token */
		close(pmo);
		return NULL;
	}
	if (closures_check(pmo, mask, &id, &seq)) {
		out("E %lld %d ? delegated-plaintext %s", wall_ms(), node, ms);
		atomic_fetch_add(&n_errors, 1);
		close(pmo);
		return NULL;
	}
	if (r)
		snprintf(res, sizeof(res), "%d", err);
	else
		strcpy(res, "ok");
	out("X %lld %d %llu %llu %s %s %s", wall_ms(), node,
	    (unsigned long long)id, (unsigned long long)seq, ms, res,
	    eager ? "eager" : "lazy");
	if (r || mask != (1u << TOK_CLOSURES) - 1) {
		close(pmo);	/* a part: checked, dropped */
		return NULL;
	}
	atomic_fetch_add(&n_deleg_in, 1);
	if (tok_add(pmo, id, seq)) {
		out("E %lld %d %llu no-slot delegated", wall_ms(), node,
		    (unsigned long long)id);
		atomic_fetch_add(&n_errors, 1);
		close(pmo);
	}
	return NULL;
}

static int listen_on(int p)
{
	struct mmt_listen l = { .size = sizeof(l) };

	l.addr.family = AF_INET;
	l.addr.port = p;
	l.backlog = 8;
	return ioctl(dev, MMT_IOC_LISTEN, &l) ? -1 : l.fd;
}

/* arg 0: migrations on port, 1: delegations on port + 1 */
static void *acceptor_main(void *arg)
{
	int deleg = (int)(intptr_t)arg, lfd = -1;

	while (now() < t_end) {
		struct mmt_connect c = { .size = sizeof(c), .timeout_ms = 1000 };
		pthread_t t;

		if (lfd < 0 && (lfd = listen_on(port + deleg)) < 0) {
			sleep(1);	/* the device is away */
			continue;
		}
		if (ioctl(lfd, MMT_IOC_ACCEPT, &c)) {
			if (errno != ETIMEDOUT && errno != EINTR &&
			    errno != EAGAIN) {
				close(lfd);	/* dead: listen again */
				lfd = -1;
			}
			continue;
		}
		if (pthread_create(&t, NULL, deleg ? deleg_main : conn_main,
				   (void *)(intptr_t)c.fd))
			close(c.fd);
		else
			pthread_detach(t);
	}
	return NULL;
}

/* ------------------------------------------------------------ migrator */

static int connect_to(int peer, int p, unsigned int timeout_ms)
{
	struct mmt_connect c = { .size = sizeof(c) };
	char ip[32];

	c.timeout_ms = timeout_ms;
	c.addr.family = AF_INET;
	c.addr.port = p;
	snprintf(ip, sizeof(ip), "10.0.0.%d", peer);
	if (inet_pton(AF_INET, ip, c.addr.addr) != 1)
		return -1;
	return ioctl(dev, MMT_IOC_CONNECT, &c) ? -1 : c.fd;
}

struct freezer {
	struct tok *t;
	int conn;
	_Atomic int stop;
};

/* Marks the token F while its handover runs (the reporter's view). */
static void *freezer_main(void *arg)
{
	struct freezer *f = arg;

	while (!atomic_load(&f->stop)) {
		struct mmt_migrate_info i = { .size = sizeof(i) };

		if (!ioctl(f->conn, MMT_IOC_MIGRATE_INFO, &i))
			atomic_store(&f->t->frozen,
				     i.phase == MMT_MIG_PHASE_HANDOVER);
		usleep(5000);
	}
	return NULL;
}

/*
 * The source's outcome (a migration's or a delegation's) is unknown: ask
 * the destination until it says, for at most 300 s.
 */
static const char *resolve(struct tok *t, int peer)
{
	double t0 = now();

	atomic_store(&t->unknown, 1);
	if (plant_force) {
		if (!ioctl(t->pmo, MMT_IOC_PMO_MIG_RESOLVE,
			   MMT_MIG_RESOLVE_FORCE)) {
			atomic_fetch_add(&n_forced, 1);
			atomic_store(&t->unknown, 0);
			return "forced";
		}
	}
	while (now() - t0 < 300) {
		struct mmt_migrate_resolve rs = { .size = sizeof(rs) };
		int c = connect_to(peer, port, 3000), r, err;

		if (c < 0) {
			sleep(1);
			continue;
		}
		rs.pmo_fd = t->pmo;
		rs.timeout_ms = 3000;
		r = ioctl(c, MMT_IOC_MIGRATE_RESOLVE, &rs);
		err = errno;
		close(c);
		if (!r && rs.outcome == MMT_MIG_OUTCOME_COMMITTED) {
			atomic_fetch_add(&n_res_commit, 1);
			return "resolved-committed";
		}
		if (!r && rs.outcome == MMT_MIG_OUTCOME_ABORTED) {
			atomic_fetch_add(&n_res_abort, 1);
			atomic_store(&t->unknown, 0);
			return "resolved-aborted";
		}
		/*
		 * a delegation's receive ended: what it took in is INVALID
		 * here, the rest writable
		 */
		if (!r && rs.outcome == MMT_MIG_OUTCOME_ENDED) {
			atomic_fetch_add(&n_res_ended, 1);
			atomic_store(&t->unknown, 0);
			return "resolved-ended";
		}
		/*
		 * no record, or still running: no evidence (untagged); the
		 * token stays read-only (after a reload of the destination
		 * it is lost with it)
		 */
		(void)err;
		sleep(1);
	}
	return "unknown";
}

/* A live migration of @t to @peer; the writer goes on. */
static void migrate(struct tok *t, int peer)
{
	struct mmt_migrate a = { .size = sizeof(a) };
	struct mmt_migrate_info info = { .size = sizeof(info) };
	struct freezer f = { 0 };
	const char *res;
	char nonce[33];
	long long start = wall_ms();
	pthread_t ft;
	int conn, r;
	uint64_t acked;

	conn = connect_to(peer, port, 3000);
	if (conn < 0)
		return;
	a.pmo_fd = t->pmo;
	a.timeout_ms = 5000;
	a.downtime_limit_ms = 300;
	a.max_rounds = 5;
	a.info = (uintptr_t)&info;
	f.t = t;
	f.conn = conn;
	pthread_create(&ft, NULL, freezer_main, &f);
	atomic_fetch_add(&n_mig, 1);
	r = ioctl(conn, MMT_IOC_MIGRATE_SEND, &a);
	acked = atomic_load(&t->acked);
	atomic_store(&f.stop, 1);
	pthread_join(ft, NULL);
	atomic_store(&t->frozen, 0);
	close(conn);
	hex(info.nonce, nonce);
	if (!r) {
		atomic_fetch_add(&n_commit, 1);
		res = "committed";
	} else if (info.flags & MMT_MIG_F_OUTCOME_UNKNOWN) {
		atomic_fetch_add(&n_unknown, 1);
		res = resolve(t, peer);
	} else {
		atomic_fetch_add(&n_fail, 1);
		res = "failed";
	}
	out("L %lld %d %llu %llu %s %s %d %lld", wall_ms(), node,
	    (unsigned long long)t->id, (unsigned long long)acked,
	    nonce, res, peer, start);
	if (!strcmp(res, "committed") || !strcmp(res, "resolved-committed"))
		tok_release(t);
}

/* Pause the writer on @t until tok_resume(): no write in flight after. */
static void tok_pause(struct tok *t)
{
	atomic_store(&t->paused, 1);
	pthread_mutex_lock(&t->wlk);
	pthread_mutex_unlock(&t->wlk);
}

static void tok_resume(struct tok *t)
{
	atomic_store(&t->paused, 0);
}

/*
 * A delegation of @t to @peer (transfer mode); the writer paused, also
 * while an unknown outcome is resolved.  After it: delivered, the token
 * goes; nothing delivered (every MMT VALID and writable here), it stays;
 * a part delivered, or the outcome still unknown, the part kept here is
 * checked and dropped (the checker matches the two parts).
 */
static void delegate(struct tok *t, int peer)
{
	struct mmt_xfer x = { .size = sizeof(x) };
	unsigned char r[REC];
	char ms[TOK_CLOSURES + 1], res[16];
	const char *rsv = "-";
	unsigned int c, mask, flags;
	uint64_t s, id2, s2;
	int conn, ret, err;

	tok_pause(t);
	s = atomic_load(&t->seq) + 1;
	rec_fill(r, t->id, s);
	for (c = 0; c < TOK_CLOSURES; c++)
		if (pwrite(t->pmo, r, REC, (off_t)c * TOK_CB) != REC)
			break;
	if (c < TOK_CLOSURES) {
		tok_resume(t);	/* nothing changed hands */
		return;
	}
	atomic_store(&t->seq, s);
	atomic_store(&t->acked, s);
	conn = connect_to(peer, port + 1, 3000);
	if (conn < 0) {
		tok_resume(t);
		return;
	}
	atomic_fetch_add(&n_deleg, 1);
	x.pmo_fd = t->pmo;
	x.channel = MMT_CHANNEL_MMT;
	x.timeout_ms = 5000;
	ret = ioctl(conn, MMT_IOC_SEND, &x);
	err = errno;
	close(conn);
	/* verdicts lost: read-only until the destination says */
	if (ret && pmo_valid(t->pmo, &flags) >= 0 &&
	    (flags & MMT_PMO_INFO_MIG_UNKNOWN)) {
		atomic_fetch_add(&n_deleg_unknown, 1);
		rsv = resolve(t, peer);
	}
	mask = pmo_mask(t->pmo, ms);
	if (ret)
		snprintf(res, sizeof(res), "%d", err);
	else
		strcpy(res, "ok");
	out("D %lld %d %llu %llu %s %s %d %s", wall_ms(), node,
	    (unsigned long long)t->id, (unsigned long long)s, ms, res, peer,
	    rsv);
	if (!ret) {
		atomic_fetch_add(&n_deleg_ok, 1);
		tok_release(t);
		return;
	}
	if (strspn(ms, "1") == TOK_CLOSURES) {
		tok_resume(t);	/* writable again */
		return;
	}
	if (mask && (closures_check(t->pmo, mask, &id2, &s2) ||
		     id2 != t->id || s2 != s)) {
		out("E %lld %d %llu delegated-kept %s", wall_ms(), node,
		    (unsigned long long)t->id, ms);
		atomic_fetch_add(&n_errors, 1);
	}
	tok_release(t);
}

/* MMT_IOC_RESTORE of an image; the PMO's fd, or -1 with errno set. */
static int restore(const unsigned char *handle, void *buf, uint64_t len)
{
	struct mmt_restore rs = { .size = sizeof(rs) };

	memcpy(rs.handle, handle, MMT_CKPT_HANDLE_BYTES);
	rs.buf = (uintptr_t)buf;
	rs.buf_len = len;
	return ioctl(dev, MMT_IOC_RESTORE, &rs) ? -1 : rs.fd;
}

/*
 * A checkpoint of @t into a buffer and its restore as the token's new
 * copy (CRIU's way, in one process); the writer goes on until the
 * handover.  With MMT_CKPT_PENDING, at random the dump "went through"
 * (the PMO invalidated, the image restored) or "failed" (the PMO taken
 * back; its image must no longer restore).
 */
static void checkpoint(struct tok *t, unsigned int *seed)
{
	struct mmt_checkpoint ck = { .size = sizeof(ck) };
	int pending = rnd(seed, 2), back = 0, fd, fd2;
	uint64_t acked, len, id, seq = 0;
	const char *res = "restored";
	char e[24];
	void *buf;

	if (ioctl(t->pmo, MMT_IOC_PMO_CHECKPOINT, &ck))
		return;
	len = (uint64_t)ck.closures * ck.closure_len;
	buf = malloc(len);
	if (!buf)
		return;
	memset(&ck, 0, sizeof(ck));
	ck.size = sizeof(ck);
	ck.flags = pending ? MMT_CKPT_PENDING : 0;
	ck.buf = (uintptr_t)buf;
	ck.buf_len = len;
	atomic_fetch_add(&n_ckpt, 1);
	if (ioctl(t->pmo, MMT_IOC_PMO_CHECKPOINT, &ck)) {
		snprintf(e, sizeof(e), "failed-%d", errno);
		out("K %lld %d %llu %llu %s 0", wall_ms(), node,
		    (unsigned long long)t->id,
		    (unsigned long long)atomic_load(&t->acked), e);
		free(buf);
		return;
	}
	acked = atomic_load(&t->acked);
	if (pending) {
		atomic_store(&t->unknown, 1);	/* read-only until decided */
		usleep(rnd(seed, 1000000));
		back = rnd(seed, 2);
		if (back && !ioctl(t->pmo, MMT_IOC_PMO_MIG_RESOLVE, 0)) {
			atomic_store(&t->unknown, 0);
			atomic_fetch_add(&n_taken_back, 1);
			fd = restore(ck.handle, buf, len);
			if (fd >= 0) {
				close(fd);
				res = "back-restored";
			} else {
				res = "taken-back";
			}
			out("K %lld %d %llu %llu %s 0", wall_ms(), node,
			    (unsigned long long)t->id,
			    (unsigned long long)acked, res);
			free(buf);
			return;
		}
		ioctl(t->pmo, MMT_IOC_PMO_INVALIDATE);
	}
	usleep(rnd(seed, 1000000));
	fd = restore(ck.handle, buf, len);
	if (fd < 0) {
		snprintf(e, sizeof(e), "restore-%d", errno);
		res = e;
	} else if (tok_verify(fd, &id, &seq) || id != t->id) {
		out("E %lld %d %llu restored-plaintext", wall_ms(), node,
		    (unsigned long long)t->id);
		atomic_fetch_add(&n_errors, 1);
		close(fd);
		fd = -1;
		res = "restore-plaintext";
	} else {
		atomic_fetch_add(&n_restored, 1);
		fd2 = restore(ck.handle, buf, len);
		if (fd2 >= 0) {
			close(fd2);
			res = "again-restored";
		}
	}
	out("K %lld %d %llu %llu %s %llu", wall_ms(), node,
	    (unsigned long long)t->id, (unsigned long long)acked, res,
	    (unsigned long long)seq);
	free(buf);
	/* the restored PMO is the token's new copy (a new INST) */
	pthread_mutex_lock(&toks_lock);
	pthread_mutex_lock(&t->lk);
	close(t->pmo);
	if (fd >= 0) {
		t->pmo = fd;
		t->inst = atomic_fetch_add(&n_inst, 1) + 1;
		atomic_store(&t->seq, seq);
		atomic_store(&t->acked, seq);
		atomic_store(&t->unknown, 0);
	} else {
		t->used = 0;
	}
	pthread_mutex_unlock(&t->lk);
	pthread_mutex_unlock(&toks_lock);
}

static void *migrator_main(void *arg)
{
	unsigned int seed = *(unsigned int *)arg;

	while (now() < t_end - 5) {
		struct tok *t = NULL;
		int i, k, peer, what;

		usleep(1000000 + rnd(&seed, 2000000));
		pthread_mutex_lock(&toks_lock);
		k = rnd(&seed, TOK_MAX);
		for (i = 0; i < TOK_MAX; i++) {
			struct tok *c = &toks[(k + i) % TOK_MAX];

			if (c->used && !atomic_load(&c->unknown)) {
				t = c;
				break;
			}
		}
		pthread_mutex_unlock(&toks_lock);
		if (!t)
			continue;
		peer = 1 + rnd(&seed, nodes - 1);
		if (peer >= node)
			peer++;
		do
			what = rnd(&seed, 100);
		while (!(moves & (what < 55 ? 1 : what < 80 ? 2 : 4)));
		if (what < 55)
			migrate(t, peer);
		else if (what < 80)
			delegate(t, peer);
		else
			checkpoint(t, &seed);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned int seed = 1, ntok = 2, secs = 60;
	pthread_t w, rep, acc, acc2, mig;
	int c, i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	while ((c = getopt(argc, argv, "i:N:p:t:T:s:P:m:")) != -1) {
		switch (c) {
		case 'i':
			node = atoi(optarg);
			break;
		case 'N':
			nodes = atoi(optarg);
			break;
		case 'p':
			port = atoi(optarg);
			break;
		case 't':
			secs = atoi(optarg);
			break;
		case 'T':
			ntok = atoi(optarg);
			break;
		case 's':
			seed = atoi(optarg);
			break;
		case 'm':
			moves = (strstr(optarg, "migrate") ? 1 : 0) |
				(strstr(optarg, "delegate") ? 2 : 0) |
				(strstr(optarg, "checkpoint") ? 4 : 0);
			break;
		case 'P':
			plant_force = !strcmp(optarg, "force");
			break;
		default:
			return 2;
		}
	}
	if (node < 1 || nodes < 2 || node > nodes || !port || ntok > TOK_MAX ||
	    !moves) {
		fprintf(stderr, "usage: mmt-soak -i NODE -N NODES -p PORT -t SECONDS [-T TOKENS] [-s SEED] [-P force] [-m migrate,delegate,checkpoint]\n");
		return 2;
	}
	dev = open("/dev/mmt", O_RDWR);
	if (dev < 0) {
		perror("/dev/mmt");
		return 1;
	}
	for (i = 0; i < TOK_MAX; i++) {
		pthread_mutex_init(&toks[i].lk, NULL);
		pthread_mutex_init(&toks[i].wlk, NULL);
	}
	t_end = now() + secs;
	seed = seed * 7919 + node;
	for (i = 0; i < (int)ntok; i++) {
		uint64_t id = (uint64_t)node * 1000 + i +
			      ((uint64_t)wall_ms() % 1000000) * 100000;
		unsigned char r[REC];
		int pmo = pmo_new(0);

		rec_fill(r, id, 1);
		if (pmo < 0 || pwrite(pmo, r, REC, 0) != REC ||
		    tok_add(pmo, id, 1)) {
			perror("token");
			return 1;
		}
	}
	pthread_create(&w, NULL, writer_main, NULL);
	pthread_create(&rep, NULL, reporter_main, NULL);
	pthread_create(&acc, NULL, acceptor_main, (void *)(intptr_t)0);
	pthread_create(&acc2, NULL, acceptor_main, (void *)(intptr_t)1);
	pthread_create(&mig, NULL, migrator_main, &seed);
	pthread_join(mig, NULL);
	pthread_join(w, NULL);
	pthread_join(rep, NULL);
	pthread_join(acc, NULL);
	pthread_join(acc2, NULL);
	out("O %lld %d writes %lu", wall_ms(), node, n_writes);
	out("O %lld %d migrations %lu", wall_ms(), node, n_mig);
	out("O %lld %d committed %lu", wall_ms(), node, n_commit);
	out("O %lld %d failed %lu", wall_ms(), node, n_fail);
	out("O %lld %d unknown %lu", wall_ms(), node, n_unknown);
	out("O %lld %d resolved_committed %lu", wall_ms(), node, n_res_commit);
	out("O %lld %d resolved_aborted %lu", wall_ms(), node, n_res_abort);
	out("O %lld %d resolved_ended %lu", wall_ms(), node, n_res_ended);
	out("O %lld %d forced %lu", wall_ms(), node, n_forced);
	out("O %lld %d received %lu", wall_ms(), node, n_in);
	out("O %lld %d delegations %lu", wall_ms(), node, n_deleg);
	out("O %lld %d delegated %lu", wall_ms(), node, n_deleg_ok);
	out("O %lld %d delegations_unknown %lu", wall_ms(), node,
	    n_deleg_unknown);
	out("O %lld %d delegations_in %lu", wall_ms(), node, n_deleg_in);
	out("O %lld %d checkpoints %lu", wall_ms(), node, n_ckpt);
	out("O %lld %d restored %lu", wall_ms(), node, n_restored);
	out("O %lld %d taken_back %lu", wall_ms(), node, n_taken_back);
	out("O %lld %d errors %lu", wall_ms(), node, n_errors);
	return 0;
}
