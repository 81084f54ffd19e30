// SPDX-License-Identifier: GPL-2.0
/*
 * mmt-soak.c - the workload of the fault soak (make soak, tests/soak/):
 * one agent per guest, each holding token PMOs that its writer keeps
 * writing and its migrator moves live to the other guests, while the
 * nemesis (tests/guest/g-soak.sh) injects faults.  The agent reports what
 * it sees; tests/soak/check.py decides.
 *
 * Usage: mmt-soak -i NODE -N NODES -p PORT -t SECONDS [-T TOKENS]
 *		   [-s SEED] [-P PLANT]
 *
 * A token is a keyed PMO of 4 closures of 128 KiB under one key all
 * agents share, named by the id in its first record.  Records are 64
 * bytes: le64 token id, le64 seq, 48 bytes derived from both (a
 * plaintext check).  The writer writes record (id, seq + 1) at offset 0
 * and in closure (seq + 1) % 4, then, once both pwrite()s returned, counts
 * seq + 1 as acknowledged.  The migrator picks a token and a peer at
 * random every 1-3 s and migrates it live (MMT_IOC_MIGRATE_SEND); an
 * outcome it cannot know is resolved on the destination's statement
 * (MMT_IOC_MIGRATE_RESOLVE over new connections); without a final
 * statement it stays read-only.  With -P force an unknown outcome is
 * resolved by force at once (the planted violation: a resolve without
 * evidence).  Receivers accept connections and take migrations in.
 *
 * Lines on stdout, "soak KIND MS NODE ...", MS the wall clock in ms:
 *   S MS NODE TOK STATE SEQ INST  once a second per token held: STATE W
 *			      (writable), F (handing over: writers frozen),
 *			      R (outcome unknown: read-only), I (INVALID);
 *			      INST this agent's number for this copy (two
 *			      copies of one token on one node differ)
 *   C MS NODE TOK SEQ NONCE   a migration into this node committed; SEQ the
 *			      record read, NONCE its receive nonce (hex)
 *   L MS NODE TOK ACKED NONCE RESULT PEER  a migration from this node to
 *			      node PEER ended: ACKED the highest seq
 *			      acknowledged before it; RESULT committed,
 *			      failed, unknown, resolved-committed,
 *			      resolved-aborted, forced
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
	_Atomic int moving;	/* the migrator has it */
	_Atomic int frozen;	/* its handover runs */
	_Atomic int unknown;	/* outcome unknown: read-only */
};

static struct tok toks[TOK_MAX];
static pthread_mutex_t toks_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static int dev, node, nodes, port, plant_force;
static double t_end;
static _Atomic unsigned int n_inst;
static _Atomic unsigned long n_writes, n_mig, n_commit, n_fail, n_unknown,
	n_res_commit, n_res_abort, n_forced, n_in, n_errors;

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

static char pmo_state(struct tok *t)
{
	struct mmt_mmt_info m[TOK_CLOSURES];
	struct mmt_pmo_info q = { .size = sizeof(q) };
	unsigned int i, valid = 0;

	q.mmt_count = TOK_CLOSURES;
	q.mmts = (uintptr_t)m;
	if (ioctl(t->pmo, MMT_IOC_PMO_INFO, &q))
		return '?';
	for (i = 0; i < q.mmt_count; i++)
		valid += m[i].state == MMT_STATE_VALID;
	if (valid != TOK_CLOSURES)
		return 'I';
	if (q.flags & MMT_PMO_INFO_MIG_UNKNOWN)
		return 'R';
	return atomic_load(&t->frozen) ? 'F' : 'W';
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
		atomic_store(&t->moving, 0);
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
			pthread_mutex_lock(&t->lk);
			fd = t->used && !atomic_load(&t->unknown) ?
			     dup(t->pmo) : -1;
			s = atomic_load(&t->seq) + 1;
			id = t->id;
			pthread_mutex_unlock(&t->lk);
			if (fd < 0)
				continue;
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

static int listen_on(void)
{
	struct mmt_listen l = { .size = sizeof(l) };

	l.addr.family = AF_INET;
	l.addr.port = port;
	l.backlog = 8;
	return ioctl(dev, MMT_IOC_LISTEN, &l) ? -1 : l.fd;
}

static void *acceptor_main(void *arg)
{
	int lfd = -1;

	(void)arg;
	while (now() < t_end) {
		struct mmt_connect c = { .size = sizeof(c), .timeout_ms = 1000 };
		pthread_t t;

		if (lfd < 0 && (lfd = listen_on()) < 0) {
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
		if (pthread_create(&t, NULL, conn_main,
				   (void *)(intptr_t)c.fd))
			close(c.fd);
		else
			pthread_detach(t);
	}
	return NULL;
}

/* ------------------------------------------------------------ migrator */

static int connect_to(int peer, unsigned int timeout_ms)
{
	struct mmt_connect c = { .size = sizeof(c) };
	char ip[32];

	c.timeout_ms = timeout_ms;
	c.addr.family = AF_INET;
	c.addr.port = port;
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

/* The source's outcome is unknown: ask the destination until it says. */
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
		int c = connect_to(peer, 3000), r, err;

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
		 * no record, or still running: no evidence (untagged); the
		 * token stays read-only (after a reload of the destination
		 * it is lost with it)
		 */
		(void)err;
		sleep(1);
	}
	return "unknown";
}

static void *migrator_main(void *arg)
{
	unsigned int seed = *(unsigned int *)arg;

	while (now() < t_end - 5) {
		struct mmt_migrate a = { .size = sizeof(a) };
		struct mmt_migrate_info info = { .size = sizeof(info) };
		struct freezer f = { 0 };
		const char *res;
		struct tok *t = NULL;
		char nonce[33];
		pthread_t ft;
		int i, k, peer, conn, r;
		uint64_t acked;

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
		conn = connect_to(peer, 3000);
		if (conn < 0)
			continue;
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
		out("L %lld %d %llu %llu %s %s %d", wall_ms(), node,
		    (unsigned long long)t->id, (unsigned long long)acked,
		    nonce, res, peer);
		if (!strcmp(res, "committed") ||
		    !strcmp(res, "resolved-committed")) {
			pthread_mutex_lock(&toks_lock);
			pthread_mutex_lock(&t->lk);
			t->used = 0;
			close(t->pmo);
			pthread_mutex_unlock(&t->lk);
			pthread_mutex_unlock(&toks_lock);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned int seed = 1, ntok = 2, secs = 60;
	pthread_t w, rep, acc, mig;
	int c, i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	while ((c = getopt(argc, argv, "i:N:p:t:T:s:P:")) != -1) {
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
		case 'P':
			plant_force = !strcmp(optarg, "force");
			break;
		default:
			return 2;
		}
	}
	if (node < 1 || nodes < 2 || node > nodes || !port || ntok > TOK_MAX) {
		fprintf(stderr, "usage: mmt-soak -i NODE -N NODES -p PORT -t SECONDS [-T TOKENS] [-s SEED] [-P force]\n");
		return 2;
	}
	dev = open("/dev/mmt", O_RDWR);
	if (dev < 0) {
		perror("/dev/mmt");
		return 1;
	}
	for (i = 0; i < TOK_MAX; i++)
		pthread_mutex_init(&toks[i].lk, NULL);
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
	pthread_create(&acc, NULL, acceptor_main, NULL);
	pthread_create(&mig, NULL, migrator_main, &seed);
	pthread_join(mig, NULL);
	pthread_join(w, NULL);
	pthread_join(rep, NULL);
	pthread_join(acc, NULL);
	out("O %lld %d writes %lu", wall_ms(), node, n_writes);
	out("O %lld %d migrations %lu", wall_ms(), node, n_mig);
	out("O %lld %d committed %lu", wall_ms(), node, n_commit);
	out("O %lld %d failed %lu", wall_ms(), node, n_fail);
	out("O %lld %d unknown %lu", wall_ms(), node, n_unknown);
	out("O %lld %d resolved_committed %lu", wall_ms(), node, n_res_commit);
	out("O %lld %d resolved_aborted %lu", wall_ms(), node, n_res_abort);
	out("O %lld %d forced %lu", wall_ms(), node, n_forced);
	out("O %lld %d received %lu", wall_ms(), node, n_in);
	out("O %lld %d errors %lu", wall_ms(), node, n_errors);
	return 0;
}
