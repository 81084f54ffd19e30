// SPDX-License-Identifier: GPL-2.0
/*
 * mmt-fuzz.c - multi-threaded, seeded fuzzing of /dev/mmt, PMO, listener
 * and connection fds, in a guest, with a second guest as a live peer
 *
 * Several threads (--threads, default 4) share one table of fds: /dev/mmt
 * opens, PMOs in every state, listeners, connections (to the peer guest
 * and to this guest's own listeners over rxe), /dev/null.  Each step of a
 * thread is one of:
 *   - an ioctl of every number in uapi/mmt.h (and unknown ones) on an fd
 *     of the table, the right kind or not, with a valid struct that is
 *     then mutated at random: bits flipped, size 0, short, long with a
 *     zero or non-zero tail, reserved and output fields set, the argument
 *     moved to a bad or straddling address, fd fields (DELEGATE's dst_fd,
 *     SEND and RECV's pmo_fd) replaced by fds of other kinds or closed
 *     ones;
 *   - read, write, pread, pwrite, preadv2/pwritev2 (RWF flags), lseek;
 *   - io_uring reads and writes (raw syscalls, a ring per thread), a
 *     batch of up to 4, some forced to the kernel's workers (IOSQE_ASYNC);
 *     what still waits after 100 ms is cancelled (ur_reap());
 *   - close, dup, dup2 over another entry of the table, and fd passing
 *     (SCM_RIGHTS) through a socketpair that any thread sends into and
 *     any thread receives from;
 *   - a valid transfer (SEND or RECV of a PMO of the right kind for the
 *     channel: the thread's own one, which the table holds dups of, or a
 *     fresh one put in the table first, so the other threads race on
 *     it), a valid local delegation, a new PMO, /dev/mmt or /dev/null;
 *   - park and unpark (park_step(); docs/CRIU.md section 6): a migration
 *     over the thread's own connection to itself into a receiver with
 *     MMT_MIGRATE_PARK, restores of the handle while the receiver is
 *     open (EBUSY), with a buffer (EINVAL), from two threads at once
 *     (one fd, the other ESTALE), the restored PMO the sender's bytes;
 *     some valid migration receives park too, and MMT_IOC_RESTORE is
 *     fuzzed with the handles kept;
 *   - a signal (SIGUSR1, no SA_RESTART) to another thread, which
 *     interrupts what it is blocked in.
 * Half of the threads lean to connections (listen, accept, connect,
 * transfers, with timeouts up to 400 ms); the others pass timeouts of at
 * most 5 ms, or invalid ones.  PMOs are small (4 KiB closures, some of
 * 128 KiB), and what makes and keys PMOs is rare: on the debug kernel it
 * costs tens of times what an ioctl does (main_step()).  The output ends
 * with where the CPU went, per step and per call.
 *
 * With --peer-role the program is the peer guest's side: it listens on
 * ports 7700..7703, connects to the main guest's 7600..7603, and sends and
 * receives PMOs of the right kind on random connections, and closes them,
 * until its time is up or SIGINT/SIGTERM; the main guest's connection fds
 * see real peers come and go.  Its failing calls are checked the same way.
 *
 * Every failing call's errno must be one that uapi/mmt.h documents for
 * that call on that kind of fd: the table is tests/pmo/fuzz_errnos.h, the
 * rules that do not depend on the call (wrong kind: ENOTTY; closed:
 * EBADF; an fd another thread closed or replaced during the call: EBADF or
 * ENOTTY anywhere) are in fz_errno_ok().  Each unexpected (call, errno)
 * pair is reported once, with an example; a success on an fd that is not
 * open, and an fd a call returned that is not of the kind it should be,
 * are failures too.  At the end every fd is closed, and no fd may be left
 * that the program did not know of (one a failing call installed); every
 * PMO still parked is restored (park_drain()), and every handle must then
 * give ESTALE, with never a second fd for one handle; the device must
 * still work.  The guest scripts check the kernel log and that the
 * module unloads (a PMO left parked would hold it).
 *
 * A run ends after --calls calls (all threads together) or --time
 * seconds, whichever comes first; the output says which.  Thread i draws
 * from a PRNG seeded with the seed and i: --seed replays what each thread
 * asks, not how the threads interleave.
 *
 * --cases runs the fixed regression cases of what the fuzzer found
 * instead (run_cases()): a local delegation into a PMO a RECV is filling
 * (EBUSY, documented), local delegations while another thread changes
 * the node id, and into a receiver another thread invalidates and keys
 * again (neither may give EXDEV); then park and unpark on a connection
 * to itself (case_park(): every refusal's errno, racing restores, a
 * receiver killed after the commit, figures the receiver cannot write).
 *
 * To keep the guest alive the program drops CAP_IPC_LOCK and sets
 * RLIMIT_MEMLOCK (--memlock MiB, default 32), and RLIMIT_NOFILE to 256
 * (so fd numbers from 300 up are never open).
 *
 * Usage: mmt-fuzz [--calls N] [--min-calls N] [--time S] [--seed S]
 *                 [--threads N] [--memlock MIB] [--self IP] [--peer IP]
 *                 [--peer-role] [--cases]
 *   --self IP   this guest's address (listen there, connect to itself)
 *   --peer IP   the other guest's address
 *   --min-calls the check "calls issued" needs at least this many
 *               (default: half of --calls)
 *   --cases     the fixed regression cases of the findings (above), then
 *               exit; the first needs --self (a connection to itself)
 * Output: "ok"/"not ok" lines, "# mmt-fuzz: N calls in S s, seed X (...)"
 * and "mmt-fuzz: N passed, N failed".  Exit status 0 if every check
 * passed, 1 otherwise, 2 on setup failure.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/io_uring.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "pmo_test.h"
#include "fuzz_errnos.h"
#include "../guest/mmt_stat.h"

#define SLOTS		40	/* shared fd table */
#define FD_LIMIT	256	/* RLIMIT_NOFILE */
#define BAD_FD		300	/* never open: above FD_LIMIT */
#define MAX_THREADS	8
#define ARG_BYTES	8192	/* readable bytes of an argument buffer */
#define IO_BYTES	(256 * 1024)
#define PORT_MAIN	7600	/* the main guest listens on 7600..7603 */
#define PORT_PEER	7700	/* the peer guest on 7700..7703 */
#define NPORTS		4
#define T_MAX_MS	400	/* longest valid timeout the fuzzer passes */
#define NERR		135	/* errno histogram: 0 = success, 134 = other */
#define UR_ENTRIES	8
/* every entry of a batch is submitted, also after one that fails */
#define UR_FLAGS	IORING_SETUP_SUBMIT_ALL
#define UR_BATCH	4
#define UR_CANCEL	0xca9ce1ULL	/* user_data of a cancel */

static const char *prog = "mmt-fuzz";

static struct {
	uint64_t calls, min_calls, seed;
	unsigned int time_s, threads, memlock_mib;
	bool peer_role, cases, have_self, have_peer;
	struct in_addr self, peer;
} opt = {
	.calls = 100000, .min_calls = UINT64_MAX, .time_s = 300,
	.threads = 4, .memlock_mib = 32,
};

static const uint8_t key_a[16] = "mmt-fuzz key A!!";
static const uint8_t key_b[16] = "mmt-fuzz key B!!";
static const uint8_t key_c[32] = "mmt-fuzz key C (AES-256) !!!!!!";

/* ------------------------------------------------------------ state */

struct slot {
	int fd;
	enum fz_kind kind;
	bool peer;		/* a connection with the peer guest */
};

static struct slot tab[SLOTS];
static pthread_mutex_t tab_lock = PTHREAD_MUTEX_INITIALIZER;
/* bumped (under tab_lock) whenever the file behind a number may change */
static _Atomic unsigned int fdgen[FD_LIMIT];

static atomic_bool stop;
static atomic_int stop_why;		/* 1 calls, 2 time, 3 signal */
static atomic_ullong n_calls;
static atomic_ullong hist[C_NR][NERR];
static atomic_ullong call_cpu_ns[C_NR];	/* CPU of the calling thread */
static __thread double call_c0;		/* its CPU time before the call */
static atomic_ullong n_fd_new[K_NR];	/* fds the table took, by kind */
static atomic_ullong xfer_ok_peer, xfer_ok_self, peer_conns, mig_ok;
static atomic_ullong local_ok;
static atomic_ullong ur_cancelled;	/* io_uring requests cancelled */
static int dev0 = -1;			/* /dev/mmt for setup, not shared */
static int sv[2] = { -1, -1 };		/* fd passing: send 0, receive 1 */

struct unexpected {
	enum fz_call c;
	int err;
	uint64_t count;
	char example[200];
};
static pthread_mutex_t rep_lock = PTHREAD_MUTEX_INITIALIZER;
static struct unexpected unexp[64];
static int n_unexp;
static uint64_t n_bad_fd_kind;

/*
 * PMOs parked by a receive with MMT_MIGRATE_PARK (docs/CRIU.md section
 * 6), by handle (the receive's nonce): a slot is reserved before the
 * receive, so no parked PMO goes untracked (one that did would hold the
 * module at its rmmod).  @restored counts the fds restores gave for it:
 * never more than one, and exactly one once main() restored what is left
 */
#define PARKS		64
enum park_state { PK_FREE, PK_WAIT, PK_PARKED };
static struct {
	enum park_state state;
	unsigned int restored;
	uint8_t h[MMT_CKPT_HANDLE_BYTES];
} parks[PARKS];
static pthread_mutex_t park_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_ullong n_parked, n_unparked;
static atomic_ullong park_twice;	/* a second fd for one handle */
static atomic_ullong park_unknown;	/* an fd for a handle nobody parked */

/* what a thread owns */
struct th {
	int idx;
	pthread_t tid;
	struct pt_rng rng;
	uint8_t *arg;		/* ARG_BYTES, then a PROT_NONE page */
	uint8_t *io;		/* IO_BYTES, then a PROT_NONE page */
	struct iovec iov[UR_BATCH][2];
	struct pt_ring ur;
	bool conn_lean;		/* leans to connection calls */
	int xpmo;		/* its own transfer PMO, or -1 */
	int pk_l, pk_c, pk_a;	/* park_step()'s listener, connection to
				 * itself and its accepted end, or -1 */
	pid_t ktid;		/* for /proc/self/task/<ktid>/stack */
	const char *volatile op;	/* what it is doing, for a hang */
};

static struct th ths[MAX_THREADS];

static const char *const kind_name[K_NR] = {
	"closed fd", "/dev/mmt", "PMO fd", "listener fd", "connection fd",
	"/dev/null", "other file",
};

/* ------------------------------------------------------------ values */

static uint64_t below(struct th *th, uint64_t n)
{
	return pt_below(&th->rng, n);
}

static bool chance(struct th *th, unsigned int pct)
{
	return below(th, 100) < pct;
}

static uint32_t rnd_u32(struct th *th)
{
	static const uint32_t b[] = {
		0, 1, 2, 7, 8, 15, 16, 31, 32, 33, 63, 64, 65, 255, 256,
		4095, 4096, 4097, 65535, 65536, 600000, 600001, 0x7fffffff,
		0x80000000, 0xfffffffe, 0xffffffff,
	};

	if (below(th, 3))
		return b[below(th, sizeof(b) / sizeof(b[0]))];
	return (uint32_t)pt_rand(&th->rng);
}

static uint64_t rnd_u64(struct th *th)
{
	static const uint64_t b[] = {
		0, 1, 63, 64, 4096, 1ULL << 17, 1ULL << 21, (1ULL << 21) + 1,
		1ULL << 31, 1ULL << 32, (1ULL << 38) - 1, 1ULL << 38,
		1ULL << 40, 1ULL << 62, 1ULL << 63, ~0ULL, ~0ULL - 4095,
	};

	if (below(th, 3))
		return b[below(th, sizeof(b) / sizeof(b[0]))];
	return pt_rand(&th->rng) >> below(th, 64);
}

/* a size field for a struct of VER0 @v */
static uint32_t rnd_size(struct th *th, uint32_t v)
{
	switch (below(th, 9)) {
	case 0:
		return 0;
	case 1:
		return 1;
	case 2:
		return v - 1 - below(th, v - 1);
	case 3:
		return v + 8 * (1 + below(th, 8));
	case 4:
		return 4096;
	case 5:
		return 4097;
	case 6:
		return rnd_u32(th);
	default:
		return v;
	}
}

/*
 * An address the kernel cannot read or write, or that runs into the
 * PROT_NONE page after @buf (@len bytes of @bytes readable).  Never one of
 * this program's own mappings (the kernel would write there).
 */
static void *bad_ptr(struct th *th, uint8_t *buf, size_t bytes, size_t len)
{
	switch (below(th, 6)) {
	case 0:
		return NULL;
	case 1:
		return (void *)0xffff888000000000UL;	/* direct map */
	case 2:
		return (void *)0xffffffff81000000UL;	/* kernel text */
	case 3:
		return pt_bad_ptr();			/* PROT_NONE */
	case 4:						/* straddles */
		return buf + bytes - 1 - below(th, len ? len : 1);
	default:					/* non-canonical */
		return (void *)(uintptr_t)(pt_rand(&th->rng) | (1ULL << 63));
	}
}

/* a PMO shape: 4 KiB closures mostly, some 128 KiB ones */
static uint64_t rnd_shape(struct th *th, struct mmt_geometry *g)
{
	memset(g, 0, sizeof(*g));
	switch (below(th, 30)) {
	case 0:
		g->levels = 2;			/* 128 KiB closure */
		return 128 * 1024;
	case 1:
	case 2:
	case 3:
	case 4:
	case 5:
	case 6:
	case 7:
	case 8:
		g->levels = 1;			/* two 4 KiB closures */
		return 8192;
	default:
		g->levels = 1;			/* one 4 KiB closure */
		return 4096;
	}
}

/* one of the keys: A mostly (both guests key with it), B, a 32-byte C */
static const uint8_t *rnd_key(struct th *th, uint32_t *len)
{
	*len = 16;
	switch (below(th, 8)) {
	case 0:
		return key_b;
	case 1:
		*len = 32;
		return key_c;
	default:
		return key_a;
	}
}

/*
 * A timeout for a blocking call: up to T_MAX_MS in the threads that lean
 * to connections, up to 5 ms in the others (which should not sleep)
 */
static uint32_t rnd_timeout(struct th *th)
{
	if (!th->conn_lean)
		return 1 + below(th, 5);
	return 1 + below(th, chance(th, 80) ? T_MAX_MS / 4 : T_MAX_MS);
}

/*
 * A timeout field after mutation: invalid ones (above 600000) stay, valid
 * ones above T_MAX_MS and 0 (10 s) are cut back so no call blocks long.
 */
static void clamp_timeout(struct th *th, uint32_t *t)
{
	if (*t == 0 || (*t > T_MAX_MS && *t <= 600000))
		*t = rnd_timeout(th);
}

/* ------------------------------------------------------------ fd table */

struct tgt {
	int fd;
	enum fz_kind kind;
	unsigned int gen;
	bool peer;
};

static void tgt_bad(struct th *th, struct tgt *t)
{
	static const int bad[] = { -1, BAD_FD, BAD_FD + 77, INT_MAX, -100 };

	t->fd = bad[below(th, sizeof(bad) / sizeof(bad[0]))];
	t->kind = K_NONE;
	t->gen = 0;
	t->peer = false;
}

/* the number may name another file since it was picked */
static bool tgt_raced(const struct tgt *t)
{
	return t && t->fd >= 0 && t->fd < FD_LIMIT &&
	       atomic_load(&fdgen[t->fd]) != t->gen;
}

/* an fd of the table: of kind @want with probability @pct %, if any */
static void pick(struct th *th, enum fz_kind want, unsigned int pct,
		 struct tgt *t)
{
	unsigned int i, s, start = below(th, SLOTS);
	bool want_it = chance(th, pct);

	if (chance(th, 3)) {
		tgt_bad(th, t);
		return;
	}
	pthread_mutex_lock(&tab_lock);
	for (i = 0; want_it && i < SLOTS; i++) {
		s = (start + i) % SLOTS;
		if (tab[s].fd >= 0 && tab[s].kind == want)
			goto found;
	}
	for (i = 0; i < SLOTS; i++) {
		s = (start + i) % SLOTS;
		if (tab[s].fd >= 0)
			goto found;
	}
	pthread_mutex_unlock(&tab_lock);
	tgt_bad(th, t);
	return;
found:
	t->fd = tab[s].fd;
	t->kind = tab[s].kind;
	t->peer = tab[s].peer;
	t->gen = atomic_load(&fdgen[t->fd]);
	pthread_mutex_unlock(&tab_lock);
}

/* what /proc/self/fd/@fd names */
static enum fz_kind fd_kind(int fd)
{
	static const struct {
		const char *link;
		enum fz_kind kind;
	} names[] = {
		{ "anon_inode:[mmt-pmo]", K_PMO },
		{ "anon_inode:[mmt-conn]", K_CONN },
		{ "anon_inode:[mmt-listen]", K_LISTEN },
		{ "/dev/mmt", K_DEV },
		{ "/dev/null", K_NULL },
	};
	char path[64], link[128];
	unsigned int i;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return K_NONE;
	link[n] = 0;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(link, names[i].link))
			return names[i].kind;
	return K_OTHER;
}

static void check_close(struct th *th, int fd);

/* put a new fd (private to the caller until now) into the table */
static void tab_insert(struct th *th, int fd, enum fz_kind kind, bool peer)
{
	unsigned int i, s, start = below(th, SLOTS);
	int victim = -1;

	if (fd < 0)
		return;
	if (fd >= FD_LIMIT) {
		close(fd);
		return;
	}
	atomic_fetch_add(&n_fd_new[kind], 1);
	pthread_mutex_lock(&tab_lock);
	for (i = 0; i < SLOTS; i++) {
		s = (start + i) % SLOTS;
		if (tab[s].fd < 0)
			break;
	}
	if (i == SLOTS) {
		/* full: evict, sparing connections and listeners mostly,
		 * so they live long enough for transfers with the peer
		 */
		for (i = 0; i < 4; i++) {
			s = (start + i * 7) % SLOTS;
			if (tab[s].kind != K_CONN && tab[s].kind != K_LISTEN)
				break;
		}
		victim = tab[s].fd;
		atomic_fetch_add(&fdgen[victim], 1);
	}
	atomic_fetch_add(&fdgen[fd], 1);
	tab[s].fd = fd;
	tab[s].kind = kind;
	tab[s].peer = peer;
	pthread_mutex_unlock(&tab_lock);
	if (victim >= 0)
		check_close(th, victim);
}

/* take an entry out of the table (of kind @want if @pct says so) */
static int tab_take(struct th *th, enum fz_kind want, unsigned int pct,
		    enum fz_kind *kind)
{
	unsigned int i, s, start = below(th, SLOTS);
	bool want_it = chance(th, pct);
	int fd = -1;

	pthread_mutex_lock(&tab_lock);
	for (i = 0; i < 2 * SLOTS; i++) {
		s = (start + i) % SLOTS;
		if (tab[s].fd < 0)
			continue;
		if (i < SLOTS && want_it && tab[s].kind != want)
			continue;
		fd = tab[s].fd;
		*kind = tab[s].kind;
		atomic_fetch_add(&fdgen[fd], 1);
		tab[s].fd = -1;
		break;
	}
	pthread_mutex_unlock(&tab_lock);
	return fd;
}

/* take @t out of the table and close it, if it is still what was picked */
static void tab_drop(struct th *th, const struct tgt *t)
{
	unsigned int i;
	int fd = -1;

	if (t->fd < 0 || t->fd >= FD_LIMIT)
		return;
	pthread_mutex_lock(&tab_lock);
	for (i = 0; i < SLOTS; i++) {
		if (tab[i].fd != t->fd ||
		    atomic_load(&fdgen[t->fd]) != t->gen)
			continue;
		fd = tab[i].fd;
		atomic_fetch_add(&fdgen[fd], 1);
		tab[i].fd = -1;
		break;
	}
	pthread_mutex_unlock(&tab_lock);
	if (fd >= 0)
		check_close(th, fd);
}

static unsigned int tab_count(enum fz_kind kind)
{
	unsigned int i, n = 0;

	pthread_mutex_lock(&tab_lock);
	for (i = 0; i < SLOTS; i++)
		n += tab[i].fd >= 0 && tab[i].kind == kind;
	pthread_mutex_unlock(&tab_lock);
	return n;
}

/* CPU time of the calling thread, seconds */
static double thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ------------------------------------------------------------ checking */

static bool in_list(const int *l, int err)
{
	unsigned int i;

	for (i = 0; i < FZ_MAX_ERRS && l[i]; i++)
		if (l[i] == err)
			return true;
	return false;
}

/* details for the report of an unexpected errno */
struct detail {
	unsigned long cmd;
	const void *arg;
	uint32_t size;
	long long off;
	size_t len;
	int fd2;
	unsigned int flags;
};

/*
 * Is @err (0: success) right for call @c on @t (and its second fd @t2:
 * DELEGATE's dst_fd, SEND/RECV's pmo_fd)?  @vfs: the VFS may refuse the
 * call's flags itself (EOPNOTSUPP); @neg_off: an offset below 0 (the VFS
 * says EINVAL before it looks at the fd).
 */
static bool fz_errno_ok(enum fz_call c, const struct tgt *t,
			const struct tgt *t2, int err, bool vfs, bool neg_off)
{
	const struct fz_doc *d = &fz_doc[c];
	bool raced = tgt_raced(t) || tgt_raced(t2);
	bool io = c >= C_READ && c <= C_UR_WRITE;

	if (!err)	/* success: not on an fd that was never open */
		return t->kind != K_NONE || raced || c == C_RECVFD;
	if ((c == C_PREAD || c == C_PWRITE || c == C_PREADV2 ||
	     c == C_PWRITEV2) && neg_off)
		return err == EINVAL;
	if (raced && (err == EBADF || err == ENOTTY))
		return true;
	if (t->kind == K_NONE)	/* io_uring checks the buffer first */
		return err == EBADF || ((c == C_UR_READ || c == C_UR_WRITE) &&
					(err == EFAULT || err == EINVAL));
	if (io) {
		if (raced || t->kind != K_PMO)
			return true;	/* the VFS's business */
		if (vfs && err == EOPNOTSUPP)
			return true;
		return in_list(d->errs, err);
	}
	if (c == C_UNKNOWN)
		return err == ENOTTY;
	if (c < C_IOCTL_NR && !(d->kinds & FZ_KIND(t->kind)))
		return err == ENOTTY;
	return in_list(d->errs, err);
}

static void report(enum fz_call c, const struct tgt *t, int err,
		   const struct detail *dt, bool raced)
{
	struct unexpected *u;
	int i;

	pthread_mutex_lock(&rep_lock);
	for (i = 0; i < n_unexp; i++)
		if (unexp[i].c == c && unexp[i].err == err)
			break;
	if (i < n_unexp) {
		unexp[i].count++;
		pthread_mutex_unlock(&rep_lock);
		return;
	}
	if (n_unexp < (int)(sizeof(unexp) / sizeof(unexp[0]))) {
		u = &unexp[n_unexp++];
		u->c = c;
		u->err = err;
		u->count = 1;
		snprintf(u->example, sizeof(u->example),
			 "on %s %d%s, cmd 0x%lx, arg %p, size %u, off %lld, len %zu, fd2 %d, flags 0x%x",
			 kind_name[t->kind], t->fd, raced ? " (raced)" : "",
			 dt ? dt->cmd : 0, dt ? dt->arg : NULL,
			 dt ? dt->size : 0, dt ? dt->off : 0,
			 dt ? dt->len : 0, dt ? dt->fd2 : -1,
			 dt ? dt->flags : 0);
		printf("# unexpected: %s -> %s, %s\n", fz_doc[c].name,
		       err ? pt_errname(err) : "success", u->example);
	}
	pthread_mutex_unlock(&rep_lock);
}

/* count call @c with result @ret (errno @err) and check it */
static bool check(enum fz_call c, const struct tgt *t, const struct tgt *t2,
		  long ret, int err, bool vfs, bool neg_off,
		  const struct detail *dt)
{
	int e = ret >= 0 ? 0 : err;

	if (call_c0) {
		atomic_fetch_add_explicit(&call_cpu_ns[c], (uint64_t)
					  ((thread_cpu() - call_c0) * 1e9),
					  memory_order_relaxed);
		call_c0 = 0;
	}
	atomic_fetch_add_explicit(&n_calls, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&hist[c][e >= 0 && e < NERR ? e : NERR - 1],
				  1, memory_order_relaxed);
	if (fz_errno_ok(c, t, t2, e, vfs, neg_off))
		return true;
	report(c, t, e, dt, tgt_raced(t) || tgt_raced(t2));
	return false;
}

static void check_close(struct th *th, int fd)
{
	struct tgt t = { .fd = fd, .kind = K_OTHER };
	long ret;

	(void)th;
	t.gen = fd < FD_LIMIT ? atomic_load(&fdgen[fd]) : 0;
	ret = close(fd);
	check(C_CLOSE, &t, NULL, ret, errno, false, false, NULL);
}

/*
 * A call returned @fd as a new fd of kind @kind: it must be one, then it
 * goes into the table
 */
static void took_fd(struct th *th, int fd, enum fz_kind kind, bool peer)
{
	enum fz_kind k = fd_kind(fd);

	if (k != kind) {
		pthread_mutex_lock(&rep_lock);
		if (!n_bad_fd_kind++)
			printf("# unexpected: a call returned fd %d as a %s, but it is a %s\n",
			       fd, kind_name[kind], kind_name[k]);
		pthread_mutex_unlock(&rep_lock);
		if (k == K_NONE)
			return;
	}
	tab_insert(th, fd, k, peer);
}

/* ------------------------------------------------------------ PMOs */

/* a PMO made with valid calls on dev0: plain, keyed VALID or WAITING */
enum pmo_state { P_PLAIN, P_VALID, P_WAITING, P_ANY };

static int new_pmo(struct th *th, enum pmo_state st, uint64_t bytes,
		   const struct mmt_geometry *g, const uint8_t *key,
		   uint32_t key_len)
{
	int fd;

	fd = mmtu_pmo_create(dev0, bytes, g, chance(th, 50) ?
			     MMT_PMO_CLOEXEC : 0, NULL);
	if (fd < 0)
		return -1;
	if (st == P_VALID || st == P_WAITING) {
		if (mmtu_pmo_set_key(fd, key, key_len, st == P_WAITING ?
				     MMT_KEY_RECEIVE : 0)) {
			close(fd);
			return -1;
		}
	}
	if (st == P_VALID || st == P_PLAIN) {
		size_t n = bytes < 4096 ? bytes : 4096;

		pt_fill(&th->rng, th->io, n);
		mmtu_pmo_write_all(fd, th->io, n, below(th, bytes - n + 1));
	}
	return fd;
}

static int new_rnd_pmo(struct th *th)
{
	struct mmt_geometry g;
	uint64_t bytes = rnd_shape(th, &g);
	const uint8_t *key;
	uint32_t len;
	enum pmo_state st = below(th, 3);
	int fd;

	key = rnd_key(th, &len);
	fd = new_pmo(th, st, bytes, &g, key, len);
	if (fd >= 0 && st != P_PLAIN && chance(th, 15))
		mmtu_pmo_set_root_counter(fd, below(th, 4));
	return fd;
}

/* ------------------------------------------------------------ mutation */

/*
 * Mutate the struct of VER0 @v at @s (its first u32 the size): nothing
 * (about half the time), or one to three of: a bit flipped, a byte or an
 * aligned u32/u64 field set to a boundary value, the size set to 0, short
 * or long, a non-zero byte in the tail a long size says is there
 */
static void mutate(struct th *th, void *s, uint32_t v)
{
	uint8_t *b = s;
	unsigned int n = chance(th, 50) ? 0 : 1 + below(th, 3);
	uint32_t u32;
	uint64_t u64;
	size_t at;

	while (n--) {
		switch (below(th, 7)) {
		case 0:
		case 1:
			b[4 + below(th, v - 4)] ^= 1u << below(th, 8);
			break;
		case 2:
			b[below(th, v)] = rnd_u32(th);
			break;
		case 3:
			u32 = rnd_size(th, v);
			memcpy(b, &u32, 4);
			break;
		case 4:
			u32 = v + 8 * (1 + below(th, 4));
			memcpy(b, &u32, 4);
			if (chance(th, 60))
				b[v + below(th, u32 - v)] = 1 + below(th, 255);
			break;
		case 5:
			at = 4 * below(th, v / 4);
			u32 = rnd_u32(th);
			memcpy(b + at, &u32, 4);
			break;
		default:
			at = 8 * below(th, v / 8);
			u64 = rnd_u64(th);
			memcpy(b + at, &u64, 8);
			break;
		}
	}
}

/* ------------------------------------------------------------ addresses */

static void addr_v4(struct mmt_conn_addr *a, struct in_addr ip, uint16_t port)
{
	memset(a, 0, sizeof(*a));
	a->family = AF_INET;
	a->port = port;
	memcpy(a->addr, &ip, 4);
}

/*
 * A connection of this guest to itself on @port (--self), each wait at
 * most @ms: the listener in *@l (made if *@l < 0, else reused), the
 * connecting end in *@c and the accepted one in *@a, each -errno if not
 * made (a connecting end without its accepted one is closed).  True if
 * the connection is made.
 */
static bool self_conn(uint16_t port, unsigned int ms, int *l, int *c,
		      int *a)
{
	struct mmt_conn_addr addr;

	addr_v4(&addr, opt.self, port);
	*c = *a = -EBADF;
	if (*l < 0)
		*l = mmtu_listen(dev0, &addr, 0, MMT_CONN_CLOEXEC);
	if (*l >= 0)
		*c = mmtu_connect(dev0, &addr, ms, MMT_CONN_CLOEXEC, NULL);
	if (*c >= 0)
		*a = mmtu_accept(*l, ms, MMT_CONN_CLOEXEC, NULL);
	if (*c >= 0 && *a < 0) {
		close(*c);
		*c = -EBADF;
	}
	return *a >= 0;
}

/* close what self_conn() made (negative: not made) */
static void self_conn_close(int l, int c, int a)
{
	if (a >= 0)
		close(a);
	if (c >= 0)
		close(c);
	if (l >= 0)
		close(l);
}

/* a place to connect to: the peer, ourselves, nobody, or garbage */
static bool rnd_connect_addr(struct th *th, struct mmt_conn_addr *a)
{
	struct in_addr none = { .s_addr = htonl(0x0a000063) };	/* 10.0.0.99 */
	unsigned int r = below(th, 100);

	if (r < 45 && opt.have_peer) {
		addr_v4(a, opt.peer, (opt.peer_role ? PORT_MAIN : PORT_PEER) +
			below(th, NPORTS));
		return true;
	}
	if (r < 90 && opt.have_self) {
		addr_v4(a, opt.self, (opt.peer_role ? PORT_PEER : PORT_MAIN) +
			below(th, NPORTS));
		return false;
	}
	if (r < 93) {
		addr_v4(a, none, PORT_PEER);
		return false;
	}
	memset(a, 0, sizeof(*a));
	a->family = chance(th, 50) ? AF_INET : AF_INET6;
	a->port = below(th, 3) ? PORT_MAIN + below(th, 200) : rnd_u32(th);
	if (chance(th, 50))
		pt_fill(&th->rng, a->addr, a->family == AF_INET ? 4 : 16);
	if (a->family == AF_INET6 && chance(th, 30))
		a->addr[15] = 1;	/* ::1 */
	if (chance(th, 10))
		a->scope_id = rnd_u32(th);
	return false;
}

static void rnd_listen_addr(struct th *th, struct mmt_conn_addr *a)
{
	struct in_addr any = { .s_addr = 0 };
	unsigned int base = opt.peer_role ? PORT_PEER : PORT_MAIN;

	switch (below(th, 6)) {
	case 0:
		if (opt.have_self) {
			addr_v4(a, opt.self, base + below(th, NPORTS));
			break;
		}
		/* fall through */
	case 1:
	case 2:
	case 3:
		addr_v4(a, any, base + below(th, NPORTS));
		break;
	case 4:
		memset(a, 0, sizeof(*a));
		a->family = AF_INET6;		/* :: */
		a->port = base + below(th, NPORTS);
		break;
	default:
		rnd_connect_addr(th, a);	/* foreign, garbage */
		break;
	}
}

/* ------------------------------------------------------------ ioctls */

/*
 * The connection ioctls are more frequent in the threads that lean to
 * connections: 4 times (CONNECT twice: it costs about 80 ms of CPU on the
 * debug kernel)
 */
static unsigned int lean_factor(struct th *th, enum fz_call c)
{
	if (!th->conn_lean || c < C_LISTEN || c > C_MIG_ABORT)
		return 1;
	return c == C_CONNECT ? 2 : 4;
}

static enum fz_call rnd_ioctl_call(struct th *th)
{
	/* the blocking ones (CONNECT, ACCEPT, SEND, RECV) are rarer */
	static const uint8_t w[C_IOCTL_NR] = {
		[C_QUERY] = 6, [C_CREATE] = 6, [C_NODE_ID] = 4,
		[C_SET_KEY] = 3, [C_COUNTER] = 8, [C_INFO] = 10,
		[C_INVALIDATE] = 7, [C_DELEGATE] = 7, [C_DEBUG] = 6,
		[C_LISTEN] = 4, [C_CONNECT] = 1, [C_ACCEPT] = 2, [C_SEND] = 3,
		[C_RECV] = 3, [C_CONN_KEY] = 5, [C_MIG_SEND] = 2,
		[C_MIG_RECV] = 2, [C_MIG_INFO] = 4, [C_MIG_FINISH] = 3,
		[C_MIG_ABORT] = 3, [C_MIG_RESOLVE] = 4, [C_ATT_AUTH] = 2,
		[C_ATT_CRED] = 2, [C_ATT_INFO] = 3, [C_CKPT] = 3,
		[C_RESTORE] = 3, [C_KEY_AGREE] = 3, [C_MIG_RES] = 2,
		[C_UNKNOWN] = 6,
	};
	unsigned int total = 0, r, c;

	for (c = 0; c < C_IOCTL_NR; c++)
		total += w[c] * lean_factor(th, c);
	r = below(th, total);
	for (c = 0; c < C_IOCTL_NR; c++) {
		unsigned int x = w[c] * lean_factor(th, c);

		if (r < x)
			return c;
		r -= x;
	}
	return C_UNKNOWN;
}

/* ------------------------------------------------------------ parking */

/* a slot for a receive with MMT_MIGRATE_PARK, or -1 (all taken) */
static int park_reserve(void)
{
	int i;

	pthread_mutex_lock(&park_lock);
	for (i = 0; i < PARKS && parks[i].state != PK_FREE; i++)
		;
	if (i < PARKS)
		parks[i].state = PK_WAIT;
	pthread_mutex_unlock(&park_lock);
	return i < PARKS ? i : -1;
}

/* the receive of slot @i returned: parked under @h if @parked, else free */
static void park_end(int i, const uint8_t *h, bool parked)
{
	pthread_mutex_lock(&park_lock);
	if (parked) {
		memcpy(parks[i].h, h, MMT_CKPT_HANDLE_BYTES);
		parks[i].state = PK_PARKED;
		atomic_fetch_add(&n_parked, 1);
	} else {
		parks[i].state = PK_FREE;
	}
	pthread_mutex_unlock(&park_lock);
}

/* the handle of a parked PMO (maybe one restored already) in @h, or false */
static bool park_pick(struct th *th, uint8_t *h)
{
	unsigned int n = 0, k, i;

	pthread_mutex_lock(&park_lock);
	for (i = 0; i < PARKS; i++)
		n += parks[i].state == PK_PARKED;
	if (n) {
		k = below(th, n);
		for (i = 0; parks[i].state != PK_PARKED || k--; i++)
			;
		memcpy(h, parks[i].h, MMT_CKPT_HANDLE_BYTES);
	}
	pthread_mutex_unlock(&park_lock);
	return n;
}

/* a restore without a buffer gave an fd for the handle @h: count it */
static void park_got(const uint8_t *h)
{
	int i;

	pthread_mutex_lock(&park_lock);
	for (i = 0; i < PARKS; i++)
		if (parks[i].state == PK_PARKED &&
		    !memcmp(parks[i].h, h, MMT_CKPT_HANDLE_BYTES))
			break;
	if (i == PARKS)
		atomic_fetch_add(&park_unknown, 1);
	else if (parks[i].restored++)
		atomic_fetch_add(&park_twice, 1);
	else
		atomic_fetch_add(&n_unparked, 1);
	pthread_mutex_unlock(&park_lock);
}

/*
 * MMT_IOC_RESTORE of the parked handle @h on dev0, without a buffer (or
 * with one, which must be refused): the fd, or -errno
 */
static int park_restore(const uint8_t *h, bool with_buf)
{
	static uint8_t buf[64];
	struct mmt_restore r = { .size = MMT_RESTORE_SIZE_VER0 };

	memcpy(r.handle, h, MMT_CKPT_HANDLE_BYTES);
	if (with_buf) {
		r.buf = (uintptr_t)buf;
		r.buf_len = sizeof(buf);
	}
	return ioctl(dev0, MMT_IOC_RESTORE, &r) ? -errno : r.fd;
}

/* "an fd" or the errno's name, for messages */
static const char *fd_or_err(int ret)
{
	return ret >= 0 ? "an fd" : pt_errname(-ret);
}

/* one side of a valid migration, on its own thread or the caller's */
struct mig_side {
	int conn, pmo;
	uint64_t flags;
	uint32_t timeout_ms;
	int ret;			/* 0 or -errno */
	struct mmt_migrate_info mi;
};

static int mig_call(struct mig_side *s, bool send)
{
	struct mmt_migrate m = { .size = MMT_MIGRATE_SIZE_VER0 };

	memset(&s->mi, 0, sizeof(s->mi));
	s->mi.size = MMT_MIGRATE_INFO_SIZE_VER0;
	m.pmo_fd = s->pmo;
	m.flags = s->flags;
	m.timeout_ms = s->timeout_ms;
	m.info = (uintptr_t)&s->mi;
	s->ret = ioctl(s->conn, send ? MMT_IOC_MIGRATE_SEND :
		       MMT_IOC_MIGRATE_RECV, &m) ? -errno : 0;
	return s->ret;
}

static void *mig_sender(void *arg)
{
	mig_call(arg, true);
	return NULL;
}

/*
 * Migrate @tx->pmo over @tx->conn into @rx->pmo over @rx->conn (the two
 * ends of a connection of this guest to itself), the source on a thread
 * of its own: the receive's result (0 or -errno)
 */
static int park_migrate(struct mig_side *tx, struct mig_side *rx)
{
	pthread_t t;

	if (pthread_create(&t, NULL, mig_sender, tx)) {
		tx->ret = -EAGAIN;
		return rx->ret = -EAGAIN;
	}
	/* a receive that failed: the source need not wait out its timeout */
	if (mig_call(rx, false))
		ioctl(tx->conn, MMT_IOC_MIGRATE_ABORT, 0);
	pthread_join(t, NULL);
	return rx->ret;
}

/* two restores of one parked handle at once */
struct park_race {
	pthread_barrier_t *go;
	const uint8_t *h;
	int ret;			/* the fd, or -errno */
};

static void *park_racer(void *arg)
{
	struct park_race *r = arg;

	pthread_barrier_wait(r->go);
	r->ret = park_restore(r->h, false);
	return NULL;
}

/*
 * Restore the handle @h from this thread and another at once; the
 * results in @ret.  False if the thread could not be made.
 */
static bool park_race2(const uint8_t *h, int ret[2])
{
	pthread_barrier_t go;
	struct park_race r[2];
	pthread_t t;
	int i;

	pthread_barrier_init(&go, NULL, 2);
	for (i = 0; i < 2; i++)
		r[i] = (struct park_race){ .go = &go, .h = h, .ret = -EAGAIN };
	if (pthread_create(&t, NULL, park_racer, &r[1])) {
		pthread_barrier_destroy(&go);
		return false;
	}
	park_racer(&r[0]);
	pthread_join(t, NULL);
	pthread_barrier_destroy(&go);
	ret[0] = r[0].ret;
	ret[1] = r[1].ret;
	return true;
}

/* @fd's 4096 bytes at 0 are @data and every MMT is VALID */
static bool park_same(int fd, const uint8_t *data)
{
	uint8_t back[4096];
	struct pt_snap s;

	return mmtu_pmo_read_all(fd, back, sizeof(back), 0) == sizeof(back) &&
		!memcmp(back, data, sizeof(back)) && !pt_snap(fd, &s) &&
		pt_all_state(&s, MMT_STATE_VALID, 0);
}

static bool is_known_cmd(unsigned long cmd)
{
	static const unsigned long known[] = {
		MMT_IOC_QUERY, MMT_IOC_PMO_CREATE, MMT_IOC_SET_NODE_ID,
		MMT_IOC_PMO_SET_KEY, MMT_IOC_PMO_SET_ROOT_COUNTER,
		MMT_IOC_PMO_INFO, MMT_IOC_PMO_INVALIDATE,
		MMT_IOC_PMO_DELEGATE_LOCAL, MMT_IOC_PMO_DEBUG, MMT_IOC_LISTEN,
		MMT_IOC_CONNECT, MMT_IOC_ACCEPT, MMT_IOC_SEND, MMT_IOC_RECV,
		MMT_IOC_CONN_SET_KEY, MMT_IOC_MIGRATE_SEND,
		MMT_IOC_MIGRATE_RECV, MMT_IOC_MIGRATE_INFO,
		MMT_IOC_MIGRATE_FINISH, MMT_IOC_MIGRATE_ABORT,
		MMT_IOC_PMO_MIG_RESOLVE, MMT_IOC_ATTEST_SET_AUTHORITY,
		MMT_IOC_ATTEST_SET_CRED, MMT_IOC_ATTEST_INFO,
		MMT_IOC_PMO_CHECKPOINT, MMT_IOC_RESTORE,
		MMT_IOC_CONN_KEY_AGREE, MMT_IOC_MIGRATE_RESOLVE,
	};
	unsigned int i;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (cmd == known[i])
			return true;
	return false;
}

static void fuzz_ioctl(struct th *th)
{
	enum fz_call c = rnd_ioctl_call(th);
	struct tgt t, t2 = { .fd = -1, .kind = K_NONE };
	bool has_t2 = false, to_peer = false;
	struct detail dt = { .fd2 = -1 };
	uint8_t *a = th->arg;
	unsigned long cmd = 0;
	uint32_t v = 0, len;
	const uint8_t *key;
	void *p = a;
	long ret;
	int err;

	memset(a, 0, ARG_BYTES);
	switch (c) {
	case C_QUERY: {
		struct mmt_query *q = p;

		cmd = MMT_IOC_QUERY;
		v = q->size = MMT_QUERY_SIZE_VER0;
		pick(th, K_DEV, 90, &t);
		break;
	}
	case C_CREATE: {
		struct mmt_pmo_create *cr = p;

		cmd = MMT_IOC_PMO_CREATE;
		v = cr->size = MMT_PMO_CREATE_SIZE_VER0;
		cr->bytes = rnd_shape(th, &cr->geometry);
		cr->flags = chance(th, 50) ? MMT_PMO_CLOEXEC : 0;
		pick(th, K_DEV, 90, &t);
		break;
	}
	case C_NODE_ID: {
		struct mmt_node_id *n = p;

		cmd = MMT_IOC_SET_NODE_ID;
		v = n->size = MMT_NODE_ID_SIZE_VER0;
		n->node_id = chance(th, 70) ? 1 + below(th, 3) :
			1 + below(th, 65535);
		pick(th, K_DEV, 90, &t);
		break;
	}
	case C_SET_KEY: {
		struct mmt_pmo_key *k = p;

		cmd = MMT_IOC_PMO_SET_KEY;
		v = k->size = MMT_PMO_KEY_SIZE_VER0;
		key = rnd_key(th, &len);
		k->key_len = len;
		memcpy(k->key, key, len);
		k->flags = chance(th, 50) ? MMT_KEY_RECEIVE : 0;
		pick(th, K_PMO, 90, &t);
		break;
	}
	case C_COUNTER: {
		struct mmt_pmo_counter *cn = p;

		cmd = MMT_IOC_PMO_SET_ROOT_COUNTER;
		v = cn->size = MMT_PMO_COUNTER_SIZE_VER0;
		cn->root_counter = chance(th, 70) ? below(th, 64) :
			rnd_u64(th);
		pick(th, K_PMO, 90, &t);
		break;
	}
	case C_INFO: {
		struct mmt_pmo_info *in = p;

		cmd = MMT_IOC_PMO_INFO;
		v = in->size = MMT_PMO_INFO_SIZE_VER0;
		in->mmt_count = below(th, 5);
		in->mmts = (uintptr_t)(a + 4096);
		pick(th, K_PMO, 90, &t);
		break;
	}
	case C_INVALIDATE:
		cmd = MMT_IOC_PMO_INVALIDATE;
		p = chance(th, 90) ? NULL : (void *)(uintptr_t)rnd_u64(th);
		pick(th, K_PMO, 90, &t);
		break;
	case C_DELEGATE: {
		struct mmt_delegate_local *d = p;

		cmd = MMT_IOC_PMO_DELEGATE_LOCAL;
		v = d->size = MMT_DELEGATE_LOCAL_SIZE_VER0;
		pick(th, K_PMO, 90, &t);
		pick(th, K_PMO, 85, &t2);
		has_t2 = true;
		d->dst_fd = t2.fd;
		d->flags = below(th, 4);
		break;
	}
	case C_DEBUG: {
		struct mmt_pmo_debug *d = p;

		cmd = MMT_IOC_PMO_DEBUG;
		v = d->size = MMT_PMO_DEBUG_SIZE_VER0;
		d->region = below(th, 3);
		d->closure = below(th, 2);
		d->xor_mask = 1 + below(th, 255);
		d->offset = below(th, 4096);
		pick(th, K_PMO, 90, &t);
		break;
	}
	case C_LISTEN: {
		struct mmt_listen *l = p;

		cmd = MMT_IOC_LISTEN;
		v = l->size = MMT_LISTEN_SIZE_VER0;
		l->flags = chance(th, 50) ? MMT_CONN_CLOEXEC : 0;
		rnd_listen_addr(th, &l->addr);
		l->backlog = below(th, 17);
		pick(th, K_DEV, 90, &t);
		break;
	}
	case C_CONNECT: {
		struct mmt_connect *cn = p;

		cmd = MMT_IOC_CONNECT;
		v = cn->size = MMT_CONNECT_SIZE_VER0;
		cn->flags = chance(th, 50) ? MMT_CONN_CLOEXEC : 0;
		to_peer = rnd_connect_addr(th, &cn->addr);
		cn->timeout_ms = rnd_timeout(th);
		pick(th, K_DEV, 90, &t);
		break;
	}
	case C_ACCEPT: {
		struct mmt_connect *cn = p;

		cmd = MMT_IOC_ACCEPT;
		v = cn->size = MMT_CONNECT_SIZE_VER0;
		cn->flags = chance(th, 50) ? MMT_CONN_CLOEXEC : 0;
		cn->timeout_ms = rnd_timeout(th);
		pick(th, K_LISTEN, 90, &t);
		break;
	}
	case C_SEND:
	case C_RECV: {
		struct mmt_xfer *x = p;

		cmd = c == C_SEND ? MMT_IOC_SEND : MMT_IOC_RECV;
		v = x->size = MMT_XFER_SIZE_VER0;
		pick(th, K_CONN, 90, &t);
		pick(th, K_PMO, 85, &t2);
		has_t2 = true;
		x->pmo_fd = t2.fd;
		x->channel = below(th, 3);
		if (chance(th, 50))
			x->flags = c == C_SEND ? MMT_XFER_COPY : MMT_XFER_EAGER;
		x->timeout_ms = rnd_timeout(th);
		break;
	}
	case C_CONN_KEY: {
		struct mmt_conn_key *k = p;

		cmd = MMT_IOC_CONN_SET_KEY;
		v = k->size = MMT_CONN_KEY_SIZE_VER0;
		key = rnd_key(th, &len);
		k->key_len = len;
		memcpy(k->key, key, len);
		pick(th, K_CONN, 90, &t);
		break;
	}
	case C_MIG_SEND:
	case C_MIG_RECV: {
		struct mmt_migrate *m = p;
		struct mmt_migrate_info *mi = (void *)(a + 4096);

		cmd = c == C_MIG_SEND ? MMT_IOC_MIGRATE_SEND :
			MMT_IOC_MIGRATE_RECV;
		v = m->size = MMT_MIGRATE_SIZE_VER0;
		pick(th, K_CONN, 90, &t);
		pick(th, K_PMO, 85, &t2);
		has_t2 = true;
		m->pmo_fd = t2.fd;
		if (c == C_MIG_RECV && chance(th, 50))
			m->flags = MMT_MIGRATE_EAGER;
		m->timeout_ms = rnd_timeout(th);
		if (c == C_MIG_SEND) {
			m->downtime_limit_ms = chance(th, 50) ? 0 :
				below(th, 400);
			m->max_rounds = chance(th, 50) ? 0 : below(th, 6);
		}
		m->window = below(th, MMT_MIGRATE_WINDOW_MAX + 2);
		if (chance(th, 70)) {
			mi->size = MMT_MIGRATE_INFO_SIZE_VER0;
			m->info = (uintptr_t)mi;
		}
		break;
	}
	case C_MIG_INFO: {
		struct mmt_migrate_info *mi = p;

		cmd = MMT_IOC_MIGRATE_INFO;
		v = mi->size = MMT_MIGRATE_INFO_SIZE_VER0;
		pick(th, K_CONN, 90, &t);
		break;
	}
	case C_MIG_FINISH:
	case C_MIG_ABORT:
		cmd = c == C_MIG_FINISH ? MMT_IOC_MIGRATE_FINISH :
			MMT_IOC_MIGRATE_ABORT;
		p = chance(th, 90) ? NULL : (void *)(uintptr_t)rnd_u64(th);
		pick(th, K_CONN, 90, &t);
		break;
	case C_MIG_RESOLVE:
		cmd = MMT_IOC_PMO_MIG_RESOLVE;
		p = chance(th, 60) ? NULL : chance(th, 75) ?
		    (void *)(uintptr_t)MMT_MIG_RESOLVE_FORCE :
		    (void *)(uintptr_t)rnd_u64(th);
		pick(th, K_PMO, 90, &t);
		break;
	case C_MIG_RES: {
		struct mmt_migrate_resolve *rs = p;

		cmd = MMT_IOC_MIGRATE_RESOLVE;
		v = rs->size = MMT_MIGRATE_RESOLVE_SIZE_VER0;
		pick(th, K_CONN, 90, &t);
		pick(th, K_PMO, 85, &t2);
		has_t2 = true;
		rs->pmo_fd = t2.fd;
		rs->timeout_ms = rnd_timeout(th);
		break;
	}
	case C_ATT_AUTH:
	case C_ATT_CRED: {
		/*
		 * random bytes, a truncated or garbled DER or credential:
		 * never a valid one (attested mode would stop the keying
		 * the other calls need)
		 */
		struct mmt_attest_blob *b = p;
		uint8_t *data = a + 4096;
		uint32_t n = 1 + below(th, 600), i;

		cmd = c == C_ATT_AUTH ? MMT_IOC_ATTEST_SET_AUTHORITY :
			MMT_IOC_ATTEST_SET_CRED;
		v = b->size = MMT_ATTEST_BLOB_SIZE_VER0;
		for (i = 0; i < n; i++)
			data[i] = (uint8_t)rnd_u64(th);
		if (c == C_ATT_AUTH && chance(th, 50))
			data[0] = 0x30;		/* a DER SEQUENCE */
		b->data = (uintptr_t)data;
		b->len = chance(th, 90) ? n : (uint32_t)rnd_u64(th);
		pick(th, K_DEV, 90, &t);
		break;
	}
	case C_ATT_INFO: {
		struct mmt_attest_info *in = p;

		cmd = MMT_IOC_ATTEST_INFO;
		v = in->size = MMT_ATTEST_INFO_SIZE_VER0;
		pick(th, K_DEV, 90, &t);
		break;
	}
	case C_CKPT: {
		/*
		 * the size query, or a buffer the kernel cannot write (a
		 * checkpoint that gets that far fails with EFAULT and must
		 * leave the PMO as it was)
		 */
		struct mmt_checkpoint *ck = p;

		cmd = MMT_IOC_PMO_CHECKPOINT;
		v = ck->size = MMT_CHECKPOINT_SIZE_VER0;
		ck->flags = chance(th, 50) ? MMT_CKPT_PENDING : 0;
		if (chance(th, 50)) {
			ck->buf = (uintptr_t)bad_ptr(th, a + 4096, 4096, 64);
			ck->buf_len = rnd_u64(th) & ((1ULL << 26) - 1);
		}
		pick(th, K_PMO, 90, &t);
		break;
	}
	case C_RESTORE: {
		/*
		 * handles of no checkpoint: a zero or a random one; or of a
		 * parked PMO (park_step()), then mostly without a buffer
		 */
		struct mmt_restore *rs = p;
		bool parked = chance(th, 50) && park_pick(th, rs->handle);

		cmd = MMT_IOC_RESTORE;
		v = rs->size = MMT_RESTORE_SIZE_VER0;
		if (!parked && chance(th, 50))
			for (len = 0; len < MMT_CKPT_HANDLE_BYTES; len++)
				rs->handle[len] = (uint8_t)rnd_u64(th);
		if (!parked || chance(th, 20)) {
			rs->buf = (uintptr_t)(a + 4096);
			rs->buf_len = below(th, 4096);
		}
		rs->flags = chance(th, 50) ? MMT_PMO_CLOEXEC : 0;
		pick(th, K_DEV, 90, &t);
		break;
	}
	case C_KEY_AGREE: {
		struct mmt_key_agree *ka = p;

		cmd = MMT_IOC_CONN_KEY_AGREE;
		v = ka->size = MMT_KEY_AGREE_SIZE_VER0;
		pick(th, K_CONN, 90, &t);
		pick(th, K_PMO, 85, &t2);
		has_t2 = true;
		ka->pmo_fd = t2.fd;
		ka->key_len = chance(th, 80) ? (chance(th, 50) ? 16 : 32) :
			below(th, 64);
		if (chance(th, 50))
			ka->flags = MMT_KEY_RECEIVE;
		ka->timeout_ms = rnd_timeout(th);
		break;
	}
	default:
		c = C_UNKNOWN;
		do {
			cmd = _IOC(below(th, 4), MMT_IOC_MAGIC, below(th, 256),
				   below(th, 1 << 14));
		} while (is_known_cmd(cmd));
		pick(th, K_DEV, 0, &t);
		break;
	}

	if (v) {
		mutate(th, p, v);
		/* keep what the mutation may not break: no long sleeps,
		 * no big PMOs, no pointer into this program's memory
		 */
		switch (c) {
		case C_CONNECT:
		case C_ACCEPT:
			clamp_timeout(th, &((struct mmt_connect *)p)->timeout_ms);
			break;
		case C_SEND:
		case C_RECV:
			clamp_timeout(th, &((struct mmt_xfer *)p)->timeout_ms);
			break;
		case C_MIG_RES:
			clamp_timeout(th,
				      &((struct mmt_migrate_resolve *)p)->timeout_ms);
			break;
		case C_ATT_AUTH:
		case C_ATT_CRED: {
			struct mmt_attest_blob *b = p;

			if (b->data != (uintptr_t)(a + 4096))
				b->data = (uintptr_t)bad_ptr(th, a + 4096,
							     4096, 64);
			break;
		}
		case C_MIG_SEND:
		case C_MIG_RECV: {
			struct mmt_migrate *m = p;
			uint8_t *mi = a + 4096;

			clamp_timeout(th, &m->timeout_ms);
			/*
			 * a receive parks only where the handle is kept
			 * (mig_step(), park_step()): a parked PMO nobody
			 * restores would hold the module at its rmmod
			 */
			if (c == C_MIG_RECV)
				m->flags &= ~MMT_MIGRATE_PARK;
			if (m->info && m->info != (uintptr_t)mi)
				m->info = (uintptr_t)bad_ptr(th, mi, 4096,
							     MMT_MIGRATE_INFO_SIZE_VER0);
			break;
		}
		case C_CREATE: {
			struct mmt_pmo_create *cr = p;
			uint64_t cb = mmtu_geometry_closure_bytes(&cr->geometry);

			if (cb > 128 * 1024 && cr->bytes >= cb && chance(th, 90))
				cr->bytes = cb - 1;	/* EINVAL, not 2 MiB */
			else if (cb && cr->bytes > 512 * 1024 &&
				 cr->bytes <= 64ULL << 20 && chance(th, 90))
				cr->bytes = cb;
			break;
		}
		case C_CKPT: {
			/* the kernel writes there: never this program's memory */
			struct mmt_checkpoint *ck = p;

			if (ck->buf && (ck->buf < (uintptr_t)(a + 4096) ||
					ck->buf >= (uintptr_t)(a + ARG_BYTES)))
				ck->buf = (uintptr_t)bad_ptr(th, a + 4096,
							     4096, 64);
			break;
		}
		case C_INFO: {
			struct mmt_pmo_info *in = p;

			if (in->mmts != (uintptr_t)(a + 4096))
				in->mmts = (uintptr_t)bad_ptr(th, a + 4096,
							      4096, 32);
			break;
		}
		default:
			break;
		}
		/*
		 * A mutated fd field names another fd, of the table or not:
		 * its kind is not known, so it counts as raced (EBADF and
		 * ENOTTY are right for it, as they are documented for
		 * these fields anyway)
		 */
		if (has_t2) {
			int fd2 = c == C_DELEGATE ?
				((struct mmt_delegate_local *)p)->dst_fd :
				c == C_MIG_SEND || c == C_MIG_RECV ?
				((struct mmt_migrate *)p)->pmo_fd :
				((struct mmt_xfer *)p)->pmo_fd;

			if (fd2 != t2.fd) {
				t2.fd = fd2;
				t2.kind = K_OTHER;
				if (fd2 < 0 || fd2 >= FD_LIMIT)
					t2.kind = K_NONE;
				else
					t2.gen = atomic_load(&fdgen[fd2]) - 1;
			}
		}
		dt.size = *(uint32_t *)p;
	}
	/* sometimes move the argument to a bad or straddling address */
	if (c != C_INVALIDATE && c != C_MIG_FINISH && c != C_MIG_ABORT &&
	    c != C_MIG_RESOLVE && chance(th, 8)) {
		void *q = bad_ptr(th, a, ARG_BYTES, 64);

		if (q >= (void *)a && q < (void *)(a + ARG_BYTES))
			memmove(q, a, a + ARG_BYTES - (uint8_t *)q);
		p = q;
	}
	dt.cmd = cmd;
	dt.arg = p;
	dt.fd2 = has_t2 ? t2.fd : -1;
	th->op = fz_doc[c].name;
	call_c0 = thread_cpu();
	ret = ioctl(t.fd, cmd, p);
	err = errno;
	check(c, &t, has_t2 ? &t2 : NULL, ret, err, false, false, &dt);
	if (ret)
		return;
	switch (c) {
	case C_CREATE:
		took_fd(th, ((struct mmt_pmo_create *)p)->fd, K_PMO, false);
		break;
	case C_LISTEN:
		took_fd(th, ((struct mmt_listen *)p)->fd, K_LISTEN, false);
		break;
	case C_CONNECT:
	case C_ACCEPT: {
		struct mmt_connect *cn = p;
		bool peer = to_peer;

		if (c == C_ACCEPT)
			peer = opt.have_peer && cn->addr.family == AF_INET &&
				!memcmp(cn->addr.addr, &opt.peer, 4);
		if (peer)
			atomic_fetch_add(&peer_conns, 1);
		took_fd(th, cn->fd, K_CONN, peer);
		break;
	}
	case C_SEND:
	case C_RECV:
		atomic_fetch_add(t.peer ? &xfer_ok_peer : &xfer_ok_self, 1);
		break;
	case C_MIG_SEND:
	case C_MIG_RECV:
		atomic_fetch_add(&mig_ok, 1);
		break;
	case C_RESTORE:
		/* only a parked PMO's handle can restore here */
		park_got(((struct mmt_restore *)p)->handle);
		took_fd(th, ((struct mmt_restore *)p)->fd, K_PMO, false);
		break;
	default:
		break;
	}
}

/* ------------------------------------------------------------ I/O */

static size_t rnd_len(struct th *th)
{
	switch (below(th, 32)) {
	case 0:
		return below(th, IO_BYTES + 1);
	case 1:
	case 2:
	case 3:
		return 0;
	case 4:
	case 5:
	case 6:
		return 4096;
	default:
		return below(th, 9000);
	}
}

static long long rnd_off(struct th *th)
{
	switch (below(th, 10)) {
	case 0:
		return (long long)rnd_u64(th);
	case 1:
		return 4096 * below(th, 4) - below(th, 2);
	default:
		return below(th, 140 * 1024);
	}
}

/* a buffer of @len for I/O: the thread's, or a bad one */
static void *io_buf(struct th *th, size_t len, bool *good)
{
	*good = !chance(th, 6);
	if (*good)
		return th->io;
	return bad_ptr(th, th->io, IO_BYTES, len);
}

static void fuzz_io(struct th *th)
{
	static const int rwf[] = {
		0, RWF_NOWAIT, RWF_HIPRI, RWF_DSYNC, RWF_SYNC, RWF_APPEND,
		0x40000000,
	};
	enum fz_call c = C_READ + below(th, C_LSEEK - C_READ + 1);
	struct detail dt = { .fd2 = -1 };
	size_t len = rnd_len(th);
	long long off = rnd_off(th);
	struct iovec iov[2];
	bool good, vfs = false, neg = false;
	struct tgt t;
	void *buf;
	long ret;
	int flags = 0;

	pick(th, K_PMO, 90, &t);
	buf = io_buf(th, len, &good);
	if (good && (c == C_WRITE || c == C_PWRITE || c == C_PWRITEV2))
		pt_fill(&th->rng, th->io, len < 4096 ? len : 4096);
	iov[0].iov_base = buf;
	iov[0].iov_len = len / 2;
	iov[1].iov_base = (uint8_t *)buf + len / 2;
	iov[1].iov_len = len - len / 2;
	th->op = fz_doc[c].name;
	call_c0 = thread_cpu();
	switch (c) {
	case C_READ:
		ret = read(t.fd, buf, len);
		break;
	case C_WRITE:
		ret = write(t.fd, buf, len);
		break;
	case C_PREAD:
		neg = off < 0;
		ret = pread(t.fd, buf, len, off);
		break;
	case C_PWRITE:
		neg = off < 0;
		ret = pwrite(t.fd, buf, len, off);
		break;
	case C_PREADV2:
	case C_PWRITEV2:
		flags = rwf[below(th, sizeof(rwf) / sizeof(rwf[0]))];
		if (chance(th, 50))
			flags = 0;
		if (chance(th, 10))
			off = -1;	/* the file position */
		neg = off < -1;
		/* the VFS checks the flags against the file (RWF_NOWAIT:
		 * documented as EAGAIN, so not excused)
		 */
		vfs = flags && flags != RWF_NOWAIT;
		ret = c == C_PREADV2 ? preadv2(t.fd, iov, 2, off, flags) :
			pwritev2(t.fd, iov, 2, off, flags);
		break;
	default: {
		static const int whence[] = {
			SEEK_SET, SEEK_CUR, SEEK_END, SEEK_DATA, SEEK_HOLE, 7,
		};
		ret = lseek(t.fd, off, whence[below(th, 6)]);
		break;
	}
	}
	dt.off = off;
	dt.len = len;
	dt.arg = buf;
	dt.flags = flags;
	check(c, &t, NULL, ret, errno, vfs, neg, &dt);
}

/* ------------------------------------------------------------ io_uring */

static void ur_reap(struct th *th, unsigned int n, const struct tgt *t,
		    const struct detail *dt, const bool *write,
		    const bool *vfs);

/* a batch of 1..UR_BATCH reads and writes, waited for */
static void fuzz_uring(struct th *th)
{
	struct pt_ring *r = &th->ur;
	unsigned int n = 1 + below(th, UR_BATCH), i, tail, submitted = 0;
	struct tgt t[UR_BATCH];
	struct detail dt[UR_BATCH];
	bool write[UR_BATCH], vfs[UR_BATCH];
	long ret;

	if (r->fd < 0)
		return;
	tail = *r->sq_tail;
	for (i = 0; i < n; i++) {
		unsigned int idx = (tail + i) & *r->sq_mask;
		struct io_uring_sqe *sqe = &r->sqes[idx];
		size_t len = below(th, 10) ? below(th, 9000) :
			below(th, 65537);
		uint8_t *base = th->io + i * (IO_BYTES / UR_BATCH);
		bool good;

		/* rarely another file: a connection's parks (ur_reap()) */
		pick(th, K_PMO, 97, &t[i]);
		memset(sqe, 0, sizeof(*sqe));
		write[i] = chance(th, 50);
		switch (below(th, 3)) {
		case 0:
			sqe->opcode = write[i] ? IORING_OP_WRITEV :
				IORING_OP_READV;
			break;
		default:
			sqe->opcode = write[i] ? IORING_OP_WRITE :
				IORING_OP_READ;
			break;
		}
		good = !chance(th, 6);
		if (!good)
			base = bad_ptr(th, th->io, IO_BYTES, len);
		else if (len > IO_BYTES / UR_BATCH)
			len = IO_BYTES / UR_BATCH;
		if (sqe->opcode == IORING_OP_READV ||
		    sqe->opcode == IORING_OP_WRITEV) {
			th->iov[i][0].iov_base = base;
			th->iov[i][0].iov_len = len / 3;
			th->iov[i][1].iov_base = base + len / 3;
			th->iov[i][1].iov_len = len - len / 3;
			sqe->addr = (uintptr_t)th->iov[i];
			sqe->len = 2;
		} else {
			sqe->addr = (uintptr_t)base;
			sqe->len = len;
		}
		sqe->fd = t[i].fd;
		sqe->off = chance(th, 10) ? (uint64_t)-1 :
			(uint64_t)below(th, 140 * 1024);
		if (chance(th, 30))
			sqe->flags |= IOSQE_ASYNC;
		vfs[i] = false;
		if (chance(th, 10)) {
			sqe->rw_flags = chance(th, 50) ? RWF_NOWAIT : RWF_HIPRI;
			vfs[i] = true;
		}
		sqe->user_data = i;
		r->sq_array[idx] = idx;
		memset(&dt[i], 0, sizeof(dt[i]));
		dt[i].off = (long long)sqe->off;
		dt[i].len = len;
		dt[i].arg = base;
		dt[i].flags = sqe->flags | (unsigned int)sqe->rw_flags << 8;
		dt[i].fd2 = -1;
	}
	__atomic_store_n(r->sq_tail, tail + n, __ATOMIC_RELEASE);
	th->op = "io_uring_enter";
	/* submit all n (the kernel says how many it took) */
	while (submitted < n) {
		ret = syscall(__NR_io_uring_enter, r->fd, n - submitted, 0, 0,
			      NULL, 0);
		if (ret > 0)
			submitted += ret;
		else if ((ret < 0 && errno != EINTR && errno != EAGAIN &&
			  errno != EBUSY) || atomic_load(&stop))
			break;
	}
	if (submitted < n) {
		/* entries left in the ring: start over with a new one */
		printf("# %s: io_uring_enter took %u of %u entries (%s): a new ring\n",
		       prog, submitted, n, pt_errname(errno));
		close(r->fd);
		pt_ring_init(r, UR_ENTRIES, UR_FLAGS);
		return;
	}
	ur_reap(th, n, t, dt, write, vfs);
}

/*
 * Wait for the @n completions of a batch and check them.  A read or write
 * on a file that polls but has no read or write (a connection or
 * listener fd) waits in io_uring for the file to become ready, which may
 * never happen: what is still out after 100 ms is cancelled
 * (IORING_OP_ASYNC_CANCEL, any request), and completes with -ECANCELED.
 */
static void ur_reap(struct th *th, unsigned int n, const struct tgt *t,
		    const struct detail *dt, const bool *write,
		    const bool *vfs)
{
	struct pt_ring *r = &th->ur;
	struct __kernel_timespec ts = { .tv_nsec = 100 * 1000 * 1000 };
	struct io_uring_getevents_arg ga = {
		.sigmask_sz = _NSIG / 8,
		.ts = (uintptr_t)&ts,
	};
	unsigned int done = 0, want = n, head;
	bool cancelled = false;
	double t0 = pt_now();
	long ret;

	for (;;) {
		head = *r->cq_head;
		while (head != __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE)) {
			struct io_uring_cqe *cqe = &r->cqes[head & *r->cq_mask];
			unsigned int k = cqe->user_data;

			if (k < n) {
				int res = cqe->res;

				if (res == -ECANCELED)
					atomic_fetch_add(&ur_cancelled, 1);
				check(write[k] ? C_UR_WRITE : C_UR_READ, &t[k],
				      NULL, res, -res, vfs[k], false, &dt[k]);
			}
			head++;
			done++;
		}
		__atomic_store_n(r->cq_head, head, __ATOMIC_RELEASE);
		if (done >= want)
			return;
		ret = syscall(__NR_io_uring_enter, r->fd, 0, 1,
			      IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG,
			      &ga, sizeof(ga));
		/* signals (EINTR) do not restart the clock */
		if (ret >= 0 || (errno == EINTR && pt_now() - t0 < 0.1))
			continue;
		if (errno != ETIME && errno != EINTR) {
			printf("# %s: io_uring_enter: %s: a new ring\n", prog,
			       pt_errname(errno));
			break;
		}
		if (!cancelled) {
			unsigned int tail = *r->sq_tail;
			unsigned int idx = tail & *r->sq_mask;
			struct io_uring_sqe *sqe = &r->sqes[idx];

			memset(sqe, 0, sizeof(*sqe));
			sqe->opcode = IORING_OP_ASYNC_CANCEL;
			sqe->fd = -1;
			sqe->cancel_flags = IORING_ASYNC_CANCEL_ANY;
			sqe->user_data = UR_CANCEL;
			r->sq_array[idx] = idx;
			__atomic_store_n(r->sq_tail, tail + 1, __ATOMIC_RELEASE);
			if (syscall(__NR_io_uring_enter, r->fd, 1, 0, 0, NULL,
				    0) == 1) {
				want++;
				cancelled = true;
				continue;
			}
			printf("# %s: io_uring cancel: %s: a new ring\n", prog,
			       pt_errname(errno));
			break;
		}
		if (pt_now() - t0 >= 30) {
			printf("# %s: io_uring: %u of %u requests still out after a cancel and 30 s: a new ring\n",
			       prog, want - done, want);
			break;
		}
	}
	close(r->fd);
	pt_ring_init(r, UR_ENTRIES, UR_FLAGS);
}

/* ------------------------------------------------------------ fd ops */

static void op_close(struct th *th)
{
	enum fz_kind k;
	int fd = tab_take(th, K_CONN, th->conn_lean ? 30 : 5, &k);

	if (fd >= 0)
		check_close(th, fd);
}

static void op_dup(struct th *th)
{
	struct tgt t, t2;
	long ret;
	int err;

	pick(th, K_PMO, 30, &t);
	if (chance(th, 50)) {
		ret = chance(th, 50) ? dup(t.fd) :
			fcntl(t.fd, F_DUPFD_CLOEXEC, 3);
		err = errno;
		check(C_DUP, &t, NULL, ret, err, false, false, NULL);
		if (ret >= 0)
			tab_insert(th, ret, fd_kind(ret), t.peer);
		return;
	}
	/* dup2 over another entry: it leaves the table meanwhile */
	t2.fd = tab_take(th, K_PMO, 0, &t2.kind);
	if (t2.fd < 0)
		return;
	t2.gen = atomic_load(&fdgen[t2.fd]);
	if (t2.fd == t.fd)
		t.gen--;	/* taken out under us: as a race */
	/* dup3() of an fd onto itself is EINVAL, dup2() a no-op */
	ret = t.fd == t2.fd || chance(th, 50) ? dup2(t.fd, t2.fd) :
		dup3(t.fd, t2.fd, O_CLOEXEC);
	err = errno;
	check(C_DUP2, &t, NULL, ret, err, false, false, NULL);
	tab_insert(th, t2.fd, fd_kind(t2.fd), false);
}

static void op_sendfd(struct th *th)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(3 * sizeof(int))];
	} u;
	char byte = 'F';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = u.buf,
	};
	unsigned int n = 1 + below(th, 3), i;
	struct tgt t[3];
	struct cmsghdr *cm;
	int fds[3];
	long ret;
	int err;

	memset(&u, 0, sizeof(u));
	for (i = 0; i < n; i++) {
		pick(th, K_PMO, 40, &t[i]);
		fds[i] = t[i].fd;
	}
	msg.msg_controllen = CMSG_SPACE(n * sizeof(int));
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(n * sizeof(int));
	memcpy(CMSG_DATA(cm), fds, n * sizeof(int));
	ret = sendmsg(sv[0], &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
	err = errno;
	/* the worst of the fds decides what is right */
	for (i = 1; i < n; i++)
		if (t[i].kind == K_NONE || tgt_raced(&t[i]))
			t[0] = t[i];
	check(C_SENDFD, &t[0], NULL, ret, err, false, false, NULL);
}

static void op_recvfd(struct th *th)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(3 * sizeof(int))];
	} u;
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = u.buf,
		/* sometimes too small: the kernel closes what does not fit */
		.msg_controllen = chance(th, 10) ? CMSG_SPACE(sizeof(int)) :
			sizeof(u.buf),
	};
	struct tgt t = { .fd = sv[1], .kind = K_OTHER };
	struct cmsghdr *cm;
	long ret;
	int err;

	memset(&u, 0, sizeof(u));
	ret = recvmsg(sv[1], &msg, MSG_DONTWAIT |
		      (chance(th, 50) ? MSG_CMSG_CLOEXEC : 0));
	err = errno;
	check(C_RECVFD, &t, NULL, ret, err, false, false, NULL);
	if (ret <= 0)
		return;
	for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
		unsigned int i, n;
		int fd;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < n; i++) {
			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int),
			       sizeof(int));
			tab_insert(th, fd, fd_kind(fd), false);
		}
	}
}

/* a new PMO, /dev/mmt or /dev/null for the table */
static void op_refill(struct th *th)
{
	int fd;

	switch (below(th, 10)) {
	case 0:
		fd = open("/dev/mmt", O_RDWR | O_CLOEXEC);
		tab_insert(th, fd, K_DEV, false);
		break;
	case 1:
		fd = open("/dev/null", O_RDWR | O_CLOEXEC);
		tab_insert(th, fd, K_NULL, false);
		break;
	default:
		fd = new_rnd_pmo(th);
		tab_insert(th, fd, K_PMO, false);
		break;
	}
}

/* ------------------------------------------------------------ transfers */

/*
 * Make the thread's own transfer PMO (one 4 KiB closure) the right kind
 * for @channel on side @send: MMT channel keyed with key A (VALID to send,
 * WAITING to receive), plain channel plain, secure channel plain or keyed
 * VALID.  Valid calls, checked like the others: the table may hold dups
 * of it, which the other threads invalidate, key, send and close.
 * Reusing it spares a PMO's making and freeing per transfer (costly on
 * the debug kernel).  Returns its fd, or -1.
 */
static int xfer_own_pmo(struct th *th, unsigned int channel, bool send)
{
	static const struct mmt_geometry g = { .levels = 1 };
	struct tgt t = { .kind = K_PMO };
	struct mmt_mmt_info mi;
	struct mmt_pmo_info in;
	bool keyed, valid, waiting;
	long ret;

	if (th->xpmo < 0) {
		th->xpmo = mmtu_pmo_create(dev0, 4096, &g, MMT_PMO_CLOEXEC,
					   NULL);
		if (th->xpmo < 0)
			return -1;
	}
	t.fd = th->xpmo;
	t.gen = atomic_load(&fdgen[t.fd]);
	ret = mmtu_pmo_info(t.fd, &in, &mi, 1);
	check(C_INFO, &t, NULL, ret, -ret, false, false, NULL);
	if (ret)
		return -1;
	keyed = in.key_len != 0;
	valid = keyed && in.key_len == 16 && mi.state == MMT_STATE_VALID &&
		!(mi.flags & (MMT_INFO_READ_ONLY | MMT_INFO_SENDER_KEYING));
	waiting = keyed && in.key_len == 16 && mi.state == MMT_STATE_WAITING;
	/*
	 * Good as it is? (a plain PMO; a VALID one to send or for secure; a
	 * WAITING one to receive, as a receive that got nothing leaves it:
	 * keying costs more than all the rest on the debug kernel)
	 */
	if ((channel == MMT_CHANNEL_PLAIN && !keyed) ||
	    (channel == MMT_CHANNEL_SECURE && (!keyed || valid)) ||
	    (channel == MMT_CHANNEL_MMT && (send ? valid : waiting)))
		return t.fd;
	ret = mmtu_pmo_invalidate(t.fd);
	check(C_INVALIDATE, &t, NULL, ret, -ret, false, false, NULL);
	if (channel == MMT_CHANNEL_MMT) {
		ret = mmtu_pmo_set_key(t.fd, key_a, 16, send ? 0 :
				       MMT_KEY_RECEIVE);
		check(C_SET_KEY, &t, NULL, ret, -ret, false, false, NULL);
	}
	return t.fd;
}

/*
 * A PMO for a transfer on @channel (side @send): the thread's own one
 * mostly, a fresh one of another shape now and then (*@fresh: the caller
 * closes or shares it)
 */
static int xfer_pmo(struct th *th, unsigned int channel, bool send,
		    bool *fresh)
{
	struct mmt_geometry g;
	uint64_t bytes;
	enum pmo_state st;

	*fresh = chance(th, 10);
	if (!*fresh)
		return xfer_own_pmo(th, channel, send);
	bytes = rnd_shape(th, &g);
	if (channel == MMT_CHANNEL_MMT)
		st = send ? P_VALID : P_WAITING;
	else if (channel == MMT_CHANNEL_PLAIN)
		st = P_PLAIN;
	else
		st = chance(th, 50) ? P_PLAIN : P_VALID;
	return new_pmo(th, st, bytes, &g, key_a, 16);
}

static unsigned int rnd_channel(struct th *th)
{
	unsigned int r = below(th, 10);

	return r < 7 ? MMT_CHANNEL_MMT : r < 9 ? MMT_CHANNEL_PLAIN :
		MMT_CHANNEL_SECURE;
}

/*
 * A valid MMT_IOC_MIGRATE_SEND (@send) or MMT_IOC_MIGRATE_RECV of the PMO
 * @t2 on the connection @t, whose other end may be migrating too (the
 * peer guest's threads do the same).  A source left with an unknown
 * outcome is taken back by force (MMT_IOC_PMO_MIG_RESOLVE with
 * MMT_MIG_RESOLVE_FORCE: the peer's threads go on) or dropped, so
 * the thread's own PMO serves again.  Some receives park the PMO
 * (MMT_MIGRATE_PARK): its handle is kept, for the restores of
 * fuzz_ioctl() and main()'s at the end.
 */
static void mig_step(struct th *th, struct tgt *t, struct tgt *t2,
		     bool send, unsigned int max_ms)
{
	struct detail dt = { .fd2 = t2->fd };
	struct mmt_migrate_info mi;
	struct mmt_migrate m;
	int err, slot = -1;
	long ret;

	memset(&m, 0, sizeof(m));
	memset(&mi, 0, sizeof(mi));
	m.size = MMT_MIGRATE_SIZE_VER0;
	m.pmo_fd = t2->fd;
	m.timeout_ms = 20 + below(th, max_ms - 20);
	m.window = below(th, 5);
	if (send) {
		m.downtime_limit_ms = below(th, 3) ? 0 : 1 + below(th, 50);
		m.max_rounds = below(th, 4);
	} else {
		if (chance(th, 50))
			m.flags = MMT_MIGRATE_EAGER;
		/* parked once committed: the handle kept for a restore */
		if (chance(th, 30) && (slot = park_reserve()) >= 0)
			m.flags |= MMT_MIGRATE_PARK;
	}
	mi.size = MMT_MIGRATE_INFO_SIZE_VER0;
	m.info = (uintptr_t)&mi;
	dt.cmd = send ? MMT_IOC_MIGRATE_SEND : MMT_IOC_MIGRATE_RECV;
	dt.arg = &m;
	th->op = send ? "valid MIGRATE_SEND" : "valid MIGRATE_RECV";
	ret = ioctl(t->fd, dt.cmd, &m);
	err = errno;
	if (slot >= 0)
		park_end(slot, mi.nonce, !ret);
	check(send ? C_MIG_SEND : C_MIG_RECV, t, t2, ret, err, false, false,
	      &dt);
	if (!ret)
		atomic_fetch_add(&mig_ok, 1);
	/* parked: the thread's own PMO lets go of it (dups may still hold it) */
	if (!ret && slot >= 0 && t2->fd == th->xpmo) {
		close(th->xpmo);
		th->xpmo = -1;
	}
	if (ret && send && (mi.flags & MMT_MIG_F_OUTCOME_UNKNOWN)) {
		long r2;

		if (chance(th, 70)) {
			r2 = ioctl(t2->fd, MMT_IOC_PMO_MIG_RESOLVE,
				   MMT_MIG_RESOLVE_FORCE);
			check(C_MIG_RESOLVE, t2, NULL, r2, errno, false, false,
			      NULL);
		} else {
			r2 = mmtu_pmo_invalidate(t2->fd);
			check(C_INVALIDATE, t2, NULL, r2, -r2, false, false,
			      NULL);
		}
	}
	if (ret && (err == ECONNRESET || err == ETIMEDOUT) &&
	    (opt.peer_role || chance(th, 70)))
		tab_drop(th, t);
}

/* a park_step() check that failed: counted, the first 8 printed */
static atomic_ullong park_bad;
/* park_step()s: run, without a connection, whose migration failed */
static atomic_ullong park_steps, park_noconn, park_migfail;

static void __attribute__((format(printf, 1, 2))) park_fail(const char *fmt,
							     ...)
{
	va_list ap;

	if (atomic_fetch_add(&park_bad, 1) >= 8)
		return;
	pthread_mutex_lock(&rep_lock);
	printf("# park_step: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	pthread_mutex_unlock(&rep_lock);
}

/*
 * A restore of the parked handle @h (with a buffer if @with_buf) that
 * must fail with @want; a failed check if not (an fd it gave is counted
 * and closed)
 */
static void park_expect(const uint8_t *h, bool with_buf, int want,
			const char *what)
{
	int ret = park_restore(h, with_buf);

	if (ret == -want)
		return;
	park_fail("%s: %s, want %s", what, fd_or_err(ret), pt_errname(want));
	if (ret >= 0) {
		park_got(h);
		close(ret);
	}
}

/* the thread's own connection to itself (port PORT_MAIN + 20 + idx) */
static bool park_pair(struct th *th)
{
	if (th->pk_a >= 0)
		return true;
	return opt.have_self && self_conn(PORT_MAIN + 20 + th->idx, 2000,
					  &th->pk_l, &th->pk_c, &th->pk_a);
}

static void park_pair_drop(struct th *th)
{
	close(th->pk_a);
	close(th->pk_c);
	th->pk_a = th->pk_c = -1;
}

/*
 * Park and unpark (MMT_MIGRATE_PARK, docs/CRIU.md section 6) amid the
 * other threads: a one-closure PMO of random bytes migrated over the
 * thread's own connection to itself into a receiver that parks it (the
 * two nonces equal); a restore while the receiver's fd is open: EBUSY;
 * with a buffer: EINVAL.  A dup of the receiver goes into the table now
 * and then, where the other threads close, pass, read and write it.  The
 * receiver closed, two threads restore the handle at once: one fd and
 * ESTALE (EBUSY, or one fd, while the table's dup may hold the PMO;
 * main() restores it at the end); the restored PMO VALID and the
 * sender's bytes (unless shared); then the handle again: ESTALE.  The
 * restored fd joins the table.
 */
static void park_step(struct th *th)
{
	static const struct mmt_geometry g = { .levels = 1 };
	struct mig_side tx = { .timeout_ms = 3000 };
	struct mig_side rx = { .timeout_ms = 3000 };
	struct tgt t = { .kind = K_CONN }, t2 = { .kind = K_PMO };
	uint8_t data[4096];
	const uint8_t *h = rx.mi.nonce;
	int slot, r[2], won = -1, i;
	bool shared;

	atomic_fetch_add(&park_steps, 1);
	if (!park_pair(th)) {
		atomic_fetch_add(&park_noconn, 1);
		return;
	}
	if ((slot = park_reserve()) < 0)
		return;
	pt_fill(&th->rng, data, sizeof(data));
	tx.conn = th->pk_c;
	rx.conn = th->pk_a;
	tx.pmo = new_pmo(th, P_VALID, sizeof(data), &g, key_a, 16);
	rx.pmo = new_pmo(th, P_WAITING, sizeof(data), &g, key_a, 16);
	rx.flags = MMT_MIGRATE_PARK | (chance(th, 50) ? MMT_MIGRATE_EAGER : 0);
	if (tx.pmo < 0 || rx.pmo < 0 ||
	    mmtu_pmo_write_all(tx.pmo, data, sizeof(data), 0) != sizeof(data)) {
		park_end(slot, NULL, false);
		goto out;
	}
	th->op = "park_step: migrate";
	park_migrate(&tx, &rx);
	park_end(slot, h, !rx.ret);
	t.fd = tx.conn;
	t2.fd = tx.pmo;
	check(C_MIG_SEND, &t, &t2, tx.ret, -tx.ret, false, false, NULL);
	t.fd = rx.conn;
	t2.fd = rx.pmo;
	check(C_MIG_RECV, &t, &t2, rx.ret, -rx.ret, false, false, NULL);
	/*
	 * Committed, the source may still fail: its answer late or lost
	 * (the debug kernel under load), the outcome unknown to it; the
	 * connection is ended then.  The parked PMO is good all the same.
	 */
	if (rx.ret || tx.ret) {
		if (!tx.ret || (!rx.ret &&
				!(tx.mi.flags & MMT_MIG_F_OUTCOME_UNKNOWN)))
			park_fail("migration: send %s (flags %#x), receive %s",
				  pt_errname(-tx.ret), tx.mi.flags,
				  pt_errname(-rx.ret));
		/* ended by its timeout, a reset or a signal: a new connection */
		if (atomic_fetch_add(&park_migfail, 1) < 3)
			printf("# park_step: migration failed: send %s, receive %s\n",
			       pt_errname(-tx.ret), pt_errname(-rx.ret));
		park_pair_drop(th);
		if (rx.ret)
			goto out;
	}
	atomic_fetch_add(&mig_ok, 1);
	if (memcmp(tx.mi.nonce, rx.mi.nonce, sizeof(rx.mi.nonce)))
		park_fail("the source's nonce is not the receive's");
	shared = chance(th, 25);
	if (shared)
		tab_insert(th, fcntl(rx.pmo, F_DUPFD_CLOEXEC, 3), K_PMO, false);
	th->op = "park_step: restore";
	park_expect(h, false, EBUSY, "restore while the receiver is open");
	if (chance(th, 30))
		park_expect(h, true, EINVAL, "restore with a buffer");
	close(rx.pmo);
	rx.pmo = -1;
	if (!park_race2(h, r))
		goto out;
	for (i = 0; i < 2; i++) {
		if (r[i] < 0)
			continue;
		park_got(h);
		if (won >= 0)
			park_fail("two restores of one handle each got an fd");
		won = i;
	}
	for (i = 0; i < 2; i++) {
		/* ESTALE only after the other's fd; EBUSY only if shared */
		if (r[i] >= 0 || (r[i] == -ESTALE && won == !i) ||
		    (r[i] == -EBUSY && shared))
			continue;
		park_fail("racing restores: %s and %s%s", fd_or_err(r[0]),
			  fd_or_err(r[1]), shared ? " (a dup in the table)" : "");
	}
	if (won < 0)
		goto out;		/* the table's dup holds it: main() */
	if (!shared && !park_same(r[won], data))
		park_fail("the restored PMO is not VALID with the sender's bytes");
	park_expect(h, false, ESTALE, "restore after the fd was given");
	took_fd(th, r[won], K_PMO, false);
out:
	if (tx.pmo >= 0)
		close(tx.pmo);
	if (rx.pmo >= 0)
		close(rx.pmo);
}

/*
 * A valid SEND or RECV of a fresh PMO of the right kind on a connection
 * of the table; the PMO is in the table first (@share), where the other
 * threads race on it, or private
 */
static void xfer_step(struct th *th, bool share, unsigned int max_ms)
{
	unsigned int channel = rnd_channel(th);
	bool send = chance(th, 45);
	struct detail dt = { .fd2 = -1 };
	struct mmt_xfer x;
	struct tgt t, t2;
	bool fresh;
	long ret;
	int err, pfd;

	pick(th, K_CONN, 100, &t);
	/* rather a connection with the other guest */
	if (!t.peer && chance(th, 60))
		pick(th, K_CONN, 100, &t);
	if (t.kind != K_CONN) {
		/* none: wait for one (the peer guest must not spin) */
		usleep(opt.peer_role ? 50000 : 2000);
		return;
	}
	if (channel == MMT_CHANNEL_SECURE && chance(th, 30)) {
		ret = mmtu_conn_set_key(t.fd, key_a, 16);
		check(C_CONN_KEY, &t, NULL, ret, -ret, false, false, &dt);
	}
	pfd = xfer_pmo(th, channel, send, &fresh);
	if (pfd < 0)
		return;
	t2.fd = pfd;
	t2.kind = K_PMO;
	t2.peer = false;
	/* shared: the other threads race on it (a dup of our own one) */
	if (share && fresh)
		tab_insert(th, pfd, K_PMO, false);
	else if (share && chance(th, 30))
		tab_insert(th, fcntl(pfd, F_DUPFD_CLOEXEC, 3), K_PMO, false);
	t2.gen = atomic_load(&fdgen[pfd]);
	if (channel == MMT_CHANNEL_MMT && chance(th, 30)) {
		mig_step(th, &t, &t2, send, max_ms);
		if (fresh && !share)
			close(pfd);
		return;
	}
	memset(&x, 0, sizeof(x));
	x.size = MMT_XFER_SIZE_VER0;
	x.pmo_fd = pfd;
	x.channel = channel;
	if (chance(th, 50))
		x.flags = send ? MMT_XFER_COPY : MMT_XFER_EAGER;
	x.timeout_ms = 20 + below(th, max_ms - 20);
	dt.cmd = send ? MMT_IOC_SEND : MMT_IOC_RECV;
	dt.arg = &x;
	dt.fd2 = pfd;
	dt.flags = channel;
	th->op = send ? "valid SEND" : "valid RECV";
	ret = ioctl(t.fd, send ? MMT_IOC_SEND : MMT_IOC_RECV, &x);
	err = errno;
	check(send ? C_SEND : C_RECV, &t, &t2, ret, err, false, false, &dt);
	if (!ret)
		atomic_fetch_add(t.peer ? &xfer_ok_peer : &xfer_ok_self, 1);
	if (fresh && !share)
		close(pfd);
	/* a dead connection: hang up (the peer always, we mostly) */
	if (ret && (err == ECONNRESET || err == ETIMEDOUT) &&
	    (opt.peer_role || chance(th, 70)))
		tab_drop(th, &t);
}

/* a valid local delegation between two fresh PMOs of one 4 KiB closure */
static void local_step(struct th *th)
{
	struct mmt_geometry g = { .levels = 1 };
	uint64_t bytes = 4096;
	struct detail dt = { .fd2 = -1 };
	struct tgt t, t2;
	long ret;
	int err;

	t.fd = new_pmo(th, P_VALID, bytes, &g, key_a, 16);
	t2.fd = new_pmo(th, P_WAITING, bytes, &g, key_a, 16);
	if (t.fd < 0 || t2.fd < 0) {
		if (t.fd >= 0)
			close(t.fd);
		if (t2.fd >= 0)
			close(t2.fd);
		return;
	}
	t.kind = t2.kind = K_PMO;
	/* shared: others may invalidate, key, close or delegate them */
	tab_insert(th, t.fd, K_PMO, false);
	tab_insert(th, t2.fd, K_PMO, false);
	t.gen = atomic_load(&fdgen[t.fd]);
	t2.gen = atomic_load(&fdgen[t2.fd]);
	dt.cmd = MMT_IOC_PMO_DELEGATE_LOCAL;
	dt.fd2 = t2.fd;
	ret = mmtu_pmo_delegate_local(t.fd, t2.fd, below(th, 4), NULL);
	err = -ret;
	check(C_DELEGATE, &t, &t2, ret, err, false, false, &dt);
	if (!ret)
		atomic_fetch_add(&local_ok, 1);
}

/*
 * Valid connection calls of the connection-leaning threads (and the peer
 * guest's): listen on one of our ports while fewer than two listeners
 * exist, accept on a listener, connect to the other guest (or ourselves)
 */
static void conn_listen(struct th *th)
{
	struct detail dt = { .fd2 = -1 };
	struct mmt_conn_addr a;
	struct in_addr any = { .s_addr = 0 };
	struct tgt t = { .fd = dev0, .kind = K_DEV };
	long ret;

	if (tab_count(K_LISTEN) >= 2)
		return;
	addr_v4(&a, opt.have_self && chance(th, 50) ? opt.self : any,
		(opt.peer_role ? PORT_PEER : PORT_MAIN) + below(th, NPORTS));
	ret = mmtu_listen(dev0, &a, below(th, 17), MMT_CONN_CLOEXEC);
	check(C_LISTEN, &t, NULL, ret, -ret, false, false, &dt);
	if (ret >= 0)
		took_fd(th, ret, K_LISTEN, false);
}

static void conn_accept(struct th *th, unsigned int max_ms)
{
	struct detail dt = { .fd2 = -1 };
	struct mmt_connect out;
	struct tgt t;
	bool peer;
	long ret;

	pick(th, K_LISTEN, 100, &t);
	if (t.kind != K_LISTEN) {
		conn_listen(th);
		return;
	}
	memset(&out, 0, sizeof(out));
	ret = mmtu_accept(t.fd, 20 + below(th, max_ms - 20), 0, &out);
	check(C_ACCEPT, &t, NULL, ret, -ret, false, false, &dt);
	if (ret < 0)
		return;
	peer = opt.have_peer && out.addr.family == AF_INET &&
		!memcmp(out.addr.addr, &opt.peer, 4);
	if (peer)
		atomic_fetch_add(&peer_conns, 1);
	took_fd(th, ret, K_CONN, peer);
}

static void conn_connect(struct th *th, unsigned int max_ms)
{
	struct detail dt = { .fd2 = -1 };
	struct tgt t = { .fd = dev0, .kind = K_DEV };
	struct mmt_conn_addr a;
	bool peer = opt.have_peer &&
		(opt.peer_role || chance(th, 70) || !opt.have_self);
	long ret;

	if (!opt.have_peer && !opt.have_self)
		return;
	if (peer)
		addr_v4(&a, opt.peer, (opt.peer_role ? PORT_MAIN : PORT_PEER) +
			below(th, NPORTS));
	else
		addr_v4(&a, opt.self, (opt.peer_role ? PORT_PEER : PORT_MAIN) +
			below(th, NPORTS));
	ret = mmtu_connect(dev0, &a, 50 + below(th, max_ms - 50), 0, NULL);
	check(C_CONNECT, &t, NULL, ret, -ret, false, false, &dt);
	if (ret < 0)
		return;
	if (peer)
		atomic_fetch_add(&peer_conns, 1);
	took_fd(th, ret, K_CONN, peer);
}

/* ------------------------------------------------------------ threads */

static void on_signal(int sig)
{
	(void)sig;
}

static void on_stop(int sig)
{
	(void)sig;
	atomic_store(&stop_why, 3);
	atomic_store(&stop, true);
}

static void poke(struct th *th)
{
	unsigned int i = below(th, opt.threads);

	if (ths[i].tid && i != (unsigned int)th->idx)
		pthread_kill(ths[i].tid, SIGUSR1);
}

/* where the time goes: per kind of step, count and wall time */
#define NSTEPS 16
static struct {
	const char *name;
	atomic_ullong n, ns, cpu_ns;
} steps[NSTEPS];

static pthread_mutex_t steps_lock = PTHREAD_MUTEX_INITIALIZER;

static void step_account(const char *name, double t0, double c0)
{
	unsigned int i;

	for (i = 0; i < NSTEPS; i++) {
		const char *n = __atomic_load_n(&steps[i].name,
						__ATOMIC_ACQUIRE);

		if (!n) {
			pthread_mutex_lock(&steps_lock);
			if (!steps[i].name)
				__atomic_store_n(&steps[i].name, name,
						 __ATOMIC_RELEASE);
			pthread_mutex_unlock(&steps_lock);
			n = steps[i].name;
		}
		if (n == name || !strcmp(n, name))
			break;
	}
	if (i == NSTEPS)
		return;
	atomic_fetch_add(&steps[i].n, 1);
	atomic_fetch_add(&steps[i].ns, (uint64_t)((pt_now() - t0) * 1e9));
	atomic_fetch_add(&steps[i].cpu_ns,
			 (uint64_t)((thread_cpu() - c0) * 1e9));
}

#define STEP(th, fn, ...) do {					\
		double _t0 = pt_now(), _c0 = thread_cpu();	\
		(th)->op = #fn;					\
		fn(th, ##__VA_ARGS__);				\
		step_account(#fn, _t0, _c0);			\
	} while (0)

static void main_step(struct th *th)
{
	unsigned int r = below(th, 1000);

	if (th->conn_lean && r < 300) {
		if (r < 110)
			STEP(th, xfer_step, true, T_MAX_MS);
		else if (r < 160)
			STEP(th, conn_accept, 200);
		else if (r < 166)
			STEP(th, conn_connect, T_MAX_MS);
		else if (r < 187)
			STEP(th, conn_listen);
		else
			STEP(th, fuzz_ioctl);
		return;
	}
	/*
	 * The mix, per mille: mostly ioctls and I/O, whose argument checks
	 * are cheap; what makes and keys PMOs (refill, local delegations)
	 * costs tens of times more on the debug kernel, so it is rarer
	 */
	if (r < 480)
		STEP(th, fuzz_ioctl);
	else if (r < 903)
		STEP(th, fuzz_io);
	else if (r < 931)
		STEP(th, fuzz_uring);
	else if (r < 943)
		STEP(th, op_close);
	else if (r < 955)
		STEP(th, op_dup);
	else if (r < 967)
		STEP(th, op_sendfd);
	else if (r < 979)
		STEP(th, op_recvfd);
	else if (r < 986)
		STEP(th, op_refill);
	else if (r < 988)
		STEP(th, local_step);
	else if (r < 995 || th->conn_lean)
		STEP(th, xfer_step, true, th->conn_lean ? T_MAX_MS : 50);
	else if (r < 996 && chance(th, 30))
		STEP(th, park_step);
	else
		STEP(th, poke);
}

/* the peer guest: listen, accept, connect, send, receive, hang up */
static void peer_step(struct th *th)
{
	switch (th->idx % 4) {
	case 0:
		STEP(th, conn_listen);
		STEP(th, conn_accept, 600);
		return;
	case 1:		/* at most 8 connections, one new in 300 ms */
		if (tab_count(K_CONN) < 8 && opt.have_peer)
			STEP(th, conn_connect, 1000);
		usleep(300000);
		return;
	default:	/* transfers; hang up now and then */
		if (chance(th, 4))
			STEP(th, op_close);
		else
			STEP(th, xfer_step, false, 1500);
		/* lightly: the host's CPU is the main guest's */
		usleep(20000);
		return;
	}
}

static void *worker(void *arg)
{
	struct th *th = arg;

	th->ktid = gettid();
	while (!atomic_load(&stop)) {
		th->op = "step";
		if (atomic_load_explicit(&n_calls, memory_order_relaxed) >=
		    opt.calls) {
			int zero = 0;

			atomic_compare_exchange_strong(&stop_why, &zero, 1);
			atomic_store(&stop, true);
			break;
		}
		if (opt.peer_role)
			peer_step(th);
		else
			main_step(th);
	}
	return NULL;
}

/* ------------------------------------------------------------ setup */

static int setup_limits(void)
{
	struct rlimit rl;
	int ret;

	ret = pt_drop_cap(CAP_IPC_LOCK);
	if (ret)
		return ret;
	rl.rlim_cur = rl.rlim_max = (rlim_t)opt.memlock_mib << 20;
	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		return -errno;
	rl.rlim_cur = rl.rlim_max = FD_LIMIT;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		return -errno;
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: %s [--calls N] [--min-calls N] [--time S] [--seed S] [--threads N]\n"
		"       [--memlock MIB] [--self IP] [--peer IP] [--peer-role] [--cases]\n",
		prog);
	exit(2);
}

static void parse_args(int argc, char **argv)
{
	bool have_seed = false;
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--peer-role")) {
			opt.peer_role = true;
			continue;
		}
		if (!strcmp(a, "--cases")) {
			opt.cases = true;
			continue;
		}
		if (!v)
			usage();
		i++;
		if (!strcmp(a, "--calls"))
			opt.calls = strtoull(v, NULL, 0);
		else if (!strcmp(a, "--min-calls"))
			opt.min_calls = strtoull(v, NULL, 0);
		else if (!strcmp(a, "--time"))
			opt.time_s = strtoul(v, NULL, 0);
		else if (!strcmp(a, "--seed"))
			opt.seed = strtoull(v, NULL, 0), have_seed = true;
		else if (!strcmp(a, "--threads"))
			opt.threads = strtoul(v, NULL, 0);
		else if (!strcmp(a, "--memlock"))
			opt.memlock_mib = strtoul(v, NULL, 0);
		else if (!strcmp(a, "--self"))
			opt.have_self = inet_pton(AF_INET, v, &opt.self) == 1;
		else if (!strcmp(a, "--peer"))
			opt.have_peer = inet_pton(AF_INET, v, &opt.peer) == 1;
		else
			usage();
	}
	if (!opt.threads || opt.threads > MAX_THREADS)
		usage();
	if (opt.min_calls == UINT64_MAX)
		opt.min_calls = opt.calls / 2;
	if (!have_seed) {
		int fd = open("/dev/urandom", O_RDONLY);

		if (fd < 0 || read(fd, &opt.seed, sizeof(opt.seed)) !=
		    sizeof(opt.seed))
			opt.seed = (uint64_t)time(NULL);
		if (fd >= 0)
			close(fd);
		opt.seed &= 0xffffffffffffULL;	/* easier to type */
	}
	if (opt.peer_role) {
		prog = "mmt-fuzz peer";
		if (!opt.have_self)
			usage();
	}
}

/* every fd of this process but 0, 1, 2 and @keep that is still open */
static int leftover_fds(int keep, bool close_them)
{
	int fd, n = 0;

	for (fd = 3; fd < FD_LIMIT; fd++) {
		char path[64], link[128];
		ssize_t len;

		if (fd == keep || fcntl(fd, F_GETFD) < 0)
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		len = readlink(path, link, sizeof(link) - 1);
		link[len > 0 ? len : 0] = 0;
		printf("# fd %d left open: %s\n", fd, link);
		n++;
		if (close_them)
			close(fd);
	}
	return n;
}

static int run_cases(void);

/* CPU time of this process, all its threads, seconds */
static double proc_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* the guest's CPU ticks so far (/proc/stat "cpu": user, nice, system...) */
static void cpu_ticks(unsigned long long *v)
{
	FILE *f = fopen("/proc/stat", "r");

	memset(v, 0, 10 * sizeof(*v));
	if (!f)
		return;
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu",
		   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7],
		   &v[8], &v[9]) < 8)
		memset(v, 0, 10 * sizeof(*v));
	fclose(f);
}

/* print a file of /proc, each line a comment */
static void print_proc(const char *path)
{
	char line[256];
	FILE *f = fopen(path, "r");

	while (f && fgets(line, sizeof(line), f))
		printf("#   %s", line);
	if (f)
		fclose(f);
}

/*
 * What each thread does, and where every task of the process (the
 * threads, io_uring's workers) sleeps in the kernel
 */
static void stuck_threads(void)
{
	char path[300];
	struct dirent *de;
	unsigned int i;
	DIR *d;

	for (i = 0; i < opt.threads; i++) {
		struct pt_ring *r = &ths[i].ur;

		printf("# thread %u (tid %d): %s; ring fd %d: sq tail %u, cq head %u tail %u\n",
		       i, ths[i].ktid, ths[i].op, r->fd,
		       r->fd >= 0 ? *r->sq_tail : 0,
		       r->fd >= 0 ? *r->cq_head : 0,
		       r->fd >= 0 ? *r->cq_tail : 0);
		if (r->fd >= 0) {
			snprintf(path, sizeof(path), "/proc/self/fdinfo/%d",
				 r->fd);
			print_proc(path);
		}
	}
	d = opendir("/proc/self/task");
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm",
			 de->d_name);
		printf("# task %s:\n", de->d_name);
		print_proc(path);
		snprintf(path, sizeof(path), "/proc/self/task/%s/stack",
			 de->d_name);
		print_proc(path);
	}
	if (d)
		closedir(d);
}

/*
 * At the end, every fd closed: each parked PMO no restore took is
 * restored now (EBUSY for a few seconds at most: io_uring and unix
 * sockets drop their last references from work queues), then every
 * handle again, which must give ESTALE.  Nothing stays parked, so the
 * module unloads (the guest script's rmmod).
 */
static void park_drain(void)
{
	unsigned int i, now = 0, lost = 0, again = 0;
	double t0 = pt_now();
	int fd;

	for (i = 0; i < PARKS; i++) {
		if (parks[i].state != PK_PARKED || parks[i].restored)
			continue;
		while ((fd = park_restore(parks[i].h, false)) == -EBUSY &&
		       pt_now() - t0 < 10)
			usleep(50000);
		if (fd >= 0) {
			park_got(parks[i].h);
			now++;
			close(fd);
		} else if (!lost++) {
			printf("# parked PMO %u: restore at the end: %s\n", i,
			       pt_errname(-fd));
		}
	}
	for (i = 0; i < PARKS; i++) {
		if (parks[i].state != PK_PARKED)
			continue;
		fd = park_restore(parks[i].h, false);
		if (fd == -ESTALE)
			continue;
		if (!again++)
			printf("# parked PMO %u: restored again: %s\n", i,
			       fd >= 0 ? "an fd" : pt_errname(-fd));
		if (fd >= 0)
			close(fd);
	}
	printf("# parked PMOs: %llu parked, %llu restored during the run, %u at the end; park_step %llu times (%llu without a connection, %llu migrations failed)\n",
	       (unsigned long long)n_parked,
	       (unsigned long long)n_unparked - now, now,
	       (unsigned long long)park_steps,
	       (unsigned long long)park_noconn,
	       (unsigned long long)park_migfail);
	if (!opt.peer_role && opt.have_self)
		pt_result(n_parked > 0, "mmt-fuzz: PMOs parked during the run",
			  "none in %llu park steps",
			  (unsigned long long)park_steps);
	pt_result(!lost, "mmt-fuzz: every parked PMO restored, so none holds the module",
		  "%u not", lost);
	pt_result(!again && !park_twice && !park_unknown,
		  "mmt-fuzz: one fd per parked handle, then ESTALE",
		  "%u handles restored again, %llu second fds, %llu fds for no parked handle",
		  again, (unsigned long long)park_twice,
		  (unsigned long long)park_unknown);
	pt_result(!park_bad,
		  "mmt-fuzz: park and unpark amid the threads: exact errnos, the sender's bytes",
		  "%llu checks failed (the first above)",
		  (unsigned long long)park_bad);
}

int main(int argc, char **argv)
{
	unsigned long long v0[10], v1[10], all;
	double cpu0;
	struct sigaction sa;
	double t0, t1, last = 0;
	unsigned int i;
	int ret, e;
	char name[160];

	parse_args(argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;	/* no SA_RESTART: interrupts */
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	dev0 = mmtu_open();
	if (dev0 < 0 || socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC |
				   SOCK_NONBLOCK, 0, sv)) {
		printf("not ok - %s: setup: open /dev/mmt, socketpair (%s)\n",
		       prog, pt_errname(dev0 < 0 ? dev0 : -errno));
		return 2;
	}
	for (i = 0; i < SLOTS; i++)
		tab[i].fd = -1;
	for (i = 0; i < opt.threads; i++) {
		struct th *th = &ths[i];

		th->idx = i;
		pt_rng_seed(&th->rng, opt.seed * 0x9e3779b97f4a7c15ULL + i + 1);
		th->arg = pt_map_guarded(ARG_BYTES);
		th->io = pt_map_guarded(IO_BYTES);
		th->conn_lean = i < (opt.threads + 1) / 2;
		th->ur.fd = -1;
		th->xpmo = -1;
		th->pk_l = th->pk_c = th->pk_a = -1;
		if (!th->arg || !th->io) {
			printf("not ok - %s: setup: buffers\n", prog);
			return 2;
		}
		ret = pt_ring_init(&th->ur, UR_ENTRIES,
				   UR_FLAGS);
		if (ret && !i)
			printf("# %s: no io_uring (%s): its calls are left out\n",
			       prog, pt_errname(ret));
	}
	ret = setup_limits();
	if (ret) {
		printf("not ok - %s: drop CAP_IPC_LOCK, set RLIMIT_MEMLOCK and RLIMIT_NOFILE (%s)\n",
		       prog, pt_errname(ret));
		return 2;
	}
	if (opt.cases)
		return run_cases();

	/* a first table: PMOs of every kind, /dev/mmt, /dev/null */
	for (i = 0; i < SLOTS / 2; i++)
		op_refill(&ths[0]);
	tab_insert(&ths[0], open("/dev/mmt", O_RDWR | O_CLOEXEC), K_DEV,
		   false);
	tab_insert(&ths[0], open("/dev/null", O_RDWR | O_CLOEXEC), K_NULL,
		   false);

	printf("# %s: seed %" PRIu64 ", %" PRIu64 " calls or %u s, %u threads, memlock %u MiB, self %s, peer %s\n",
	       prog, opt.seed, opt.calls, opt.time_s, opt.threads,
	       opt.memlock_mib, opt.have_self ? inet_ntoa(opt.self) : "-",
	       opt.have_peer ? "set" : "-");
	cpu_ticks(v0);
	cpu0 = proc_cpu();
	t0 = pt_now();
	for (i = 0; i < opt.threads; i++)
		if (pthread_create(&ths[i].tid, NULL, worker, &ths[i])) {
			printf("not ok - %s: pthread_create\n", prog);
			return 2;
		}
	while (!atomic_load(&stop)) {
		usleep(100000);
		t1 = pt_now() - t0;
		if (t1 >= opt.time_s) {
			int zero = 0;

			atomic_compare_exchange_strong(&stop_why, &zero, 2);
			atomic_store(&stop, true);
		}
		if (t1 - last >= 10) {
			last = t1;
			printf("# %s: %llu calls, %.0f s\n", prog,
			       (unsigned long long)atomic_load(&n_calls), t1);
		}
	}
	/* wake what blocks (EINTR) until every thread is out */
	t1 = pt_now();
	for (i = 0; i < opt.threads; i++) {
		while (pthread_tryjoin_np(ths[i].tid, NULL) == EBUSY) {
			pthread_kill(ths[i].tid, SIGUSR1);
			usleep(20000);
			if (pt_now() - t1 > 30) {
				stuck_threads();
				snprintf(name, sizeof(name),
					 "%s: every thread ends when told to", prog);
				pt_result(false, name, "thread %u is stuck in %s",
					  i, ths[i].op);
				pt_summary(prog);
				fflush(stdout);
				_exit(1);
			}
		}
	}
	t1 = pt_now() - t0;
	cpu_ticks(v1);
	for (i = 0, all = 0; i < 8; i++)
		all += v1[i] - v0[i];
	printf("# guest CPU: busy %.0f %% of the run; ticks: user %llu, system %llu, irq %llu, softirq %llu, idle %llu; this program %.1f s\n",
	       all ? 100.0 * (all - (v1[3] - v0[3]) - (v1[4] - v0[4])) / all :
	       0.0, v1[0] + v1[1] - v0[0] - v0[1], v1[2] - v0[2],
	       v1[5] - v0[5], v1[6] - v0[6], v1[3] - v0[3],
	       proc_cpu() - cpu0);

	printf("# calls per call (success, then errno:count):\n");
	for (i = 0; i < C_NR; i++) {
		uint64_t n = atomic_load(&hist[i][0]);

		printf("#   %-22s cpu %.1f s, ok:%" PRIu64, fz_doc[i].name,
		       call_cpu_ns[i] / 1e9, n);
		for (e = 1; e < NERR; e++) {
			n = atomic_load(&hist[i][e]);
			if (n)
				printf(" %s:%" PRIu64, e == NERR - 1 ?
				       "other" : pt_errname(e), n);
		}
		printf("\n");
	}
	printf("# fds taken into the table: dev %llu, PMO %llu, listener %llu, connection %llu, null %llu, other %llu\n",
	       (unsigned long long)n_fd_new[K_DEV],
	       (unsigned long long)n_fd_new[K_PMO],
	       (unsigned long long)n_fd_new[K_LISTEN],
	       (unsigned long long)n_fd_new[K_CONN],
	       (unsigned long long)n_fd_new[K_NULL],
	       (unsigned long long)n_fd_new[K_OTHER]);
	for (i = 0; i < NSTEPS && steps[i].name; i++)
		printf("# step %-14s %8llu times, %7.1f s, %6.2f ms each; CPU %6.1f s, %6.2f ms each\n",
		       steps[i].name, (unsigned long long)steps[i].n,
		       steps[i].ns / 1e9, steps[i].n ?
		       steps[i].ns / 1e6 / steps[i].n : 0.0,
		       steps[i].cpu_ns / 1e9, steps[i].n ?
		       steps[i].cpu_ns / 1e6 / steps[i].n : 0.0);
	printf("# io_uring requests that waited for a file to poll ready and were cancelled: %llu\n",
	       (unsigned long long)ur_cancelled);
	printf("# transfers that succeeded: with the peer guest %llu, within this guest %llu; connections with the peer %llu; local delegations %llu; migrations %llu\n",
	       (unsigned long long)xfer_ok_peer,
	       (unsigned long long)xfer_ok_self,
	       (unsigned long long)peer_conns,
	       (unsigned long long)local_ok,
	       (unsigned long long)mig_ok);

	for (i = 0; i < (unsigned int)n_unexp; i++) {
		snprintf(name, sizeof(name), "%s: errno documented", prog);
		pt_result(false, name, "%s -> %s, %" PRIu64 " times; e.g. %s",
			  fz_doc[unexp[i].c].name,
			  unexp[i].err ? pt_errname(unexp[i].err) :
			  "success on a closed fd", unexp[i].count,
			  unexp[i].example);
	}
	snprintf(name, sizeof(name),
		 "%s: every errno is documented for its call and fd", prog);
	if (!n_unexp)
		pt_result(true, name, "-");
	snprintf(name, sizeof(name), "%s: every fd a call returned is of its kind",
		 prog);
	pt_result(!n_bad_fd_kind, name, "%" PRIu64 " were not",
		  n_bad_fd_kind);
	if (!opt.peer_role) {
		snprintf(name, sizeof(name), "%s: calls issued", prog);
		pt_result(atomic_load(&n_calls) >= opt.min_calls, name,
			  "%llu calls, want %" PRIu64,
			  (unsigned long long)n_calls, opt.min_calls);
		if (opt.have_peer) {
			snprintf(name, sizeof(name),
				 "%s: connections with the peer guest", prog);
			pt_result(peer_conns > 0, name, "none");
		}
	} else {
		snprintf(name, sizeof(name),
			 "%s: transfers with the main guest", prog);
		pt_result(xfer_ok_peer > 0, name, "none succeeded");
	}

	/* every fd closed: the table, the socketpair (and what is in it) */
	for (i = 0; i < SLOTS; i++)
		if (tab[i].fd >= 0)
			close(tab[i].fd);
	close(sv[0]);
	close(sv[1]);
	for (i = 0; i < opt.threads; i++) {
		if (ths[i].ur.fd >= 0)
			close(ths[i].ur.fd);
		if (ths[i].xpmo >= 0)
			close(ths[i].xpmo);
		if (ths[i].pk_a >= 0)
			park_pair_drop(&ths[i]);
		if (ths[i].pk_l >= 0)
			close(ths[i].pk_l);
	}
	snprintf(name, sizeof(name),
		 "%s: no fd left open that the program did not know of", prog);
	ret = leftover_fds(dev0, true);
	pt_result(!ret, name, "%d fds", ret);
	park_drain();
	ret = pt_device_works(dev0);
	snprintf(name, sizeof(name),
		 "%s: device works afterwards (query, create, key, write, read)",
		 prog);
	pt_result(!ret, name, "%s", pt_errname(ret));
	close(dev0);
	printf("# %s: %llu calls in %.1f s, seed %" PRIu64 " (ended by %s)\n",
	       prog, (unsigned long long)n_calls, t1, opt.seed,
	       stop_why == 1 ? "the call limit" : stop_why == 2 ?
	       "the time limit" : "a signal");
	pt_summary(prog);
	return pt_fail ? 1 : 0;
}

/* ------------------------------------------------------------ cases */

/*
 * The fixed regression cases of what the fuzzer found (--cases).  Each
 * checks the errno it gets against fuzz_errnos.h (the documented ones)
 * and against what the case must give.
 */

static atomic_bool case_stop;

/* case 1's receiver: waits for an offer that never comes */
struct case_recv {
	int conn, pmo;
	int ret;
};

static void *case_recv_thread(void *arg)
{
	struct case_recv *cr = arg;

	cr->ret = mmtu_recv(cr->conn, cr->pmo, MMT_CHANNEL_MMT, 0, 3000, NULL);
	return NULL;
}

static int case_pmo(enum pmo_state st, const uint8_t *key, unsigned int n)
{
	struct mmt_geometry g = { .levels = 1 };
	int fd = mmtu_pmo_create(dev0, 4096ULL * n, &g, 0, NULL);

	if (fd >= 0 && st != P_PLAIN &&
	    mmtu_pmo_set_key(fd, key, 16, st == P_WAITING ?
			     MMT_KEY_RECEIVE : 0)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/*
 * Case 1: MMT_IOC_PMO_DELEGATE_LOCAL into a PMO that a connection's
 * MMT_IOC_RECV is filling gets EBUSY, which uapi/mmt.h must document
 * (it did not), and changes nothing.  The receive waits for an offer on
 * a connection of this guest to itself.
 */
static void case_delegate_busy(void)
{
	struct case_recv cr = { .conn = -1, .pmo = -1 };
	struct pt_snap before, after;
	pthread_t th;
	int lfd = -1, cfd, afd, src, ret = 0, i;
	bool busy = false, started = false;

	self_conn(PORT_MAIN + 90, 5000, &lfd, &cfd, &afd);
	cr.pmo = case_pmo(P_WAITING, key_a, 2);
	src = case_pmo(P_VALID, key_b, 2);	/* another key: EBADMSG if
						 * it ever gets through */
	if (lfd < 0 || cfd < 0 || afd < 0 || cr.pmo < 0 || src < 0) {
		pt_result(false, "cases: DELEGATE_LOCAL into a PMO a RECV is filling",
			  "setup: listen %d connect %d accept %d PMOs %d %d",
			  lfd, cfd, afd, cr.pmo, src);
		goto out;
	}
	cr.conn = afd;
	pt_snap(cr.pmo, &before);
	started = !pthread_create(&th, NULL, case_recv_thread, &cr);
	/* until the receive holds the PMO (it waits 3 s for an offer) */
	for (i = 0; started && i < 40 && !busy; i++) {
		usleep(50000);
		ret = mmtu_pmo_delegate_local(src, cr.pmo, 0, NULL);
		busy = ret == -EBUSY;
	}
	if (started)
		pthread_join(th, NULL);
	pt_snap(cr.pmo, &after);
	pt_result(busy, "cases: DELEGATE_LOCAL into a PMO a RECV is filling -> EBUSY",
		  "last got %s", pt_errname(ret));
	pt_result(in_list(fz_doc[C_DELEGATE].errs, EBUSY),
		  "cases: EBUSY is documented for DELEGATE_LOCAL (uapi/mmt.h)",
		  "not in tests/pmo/fuzz_errnos.h");
	pt_result(pt_snap_eq(&before, &after) && cr.ret == -ETIMEDOUT,
		  "cases: the refused delegation changed nothing, the RECV timed out",
		  "%s -> %s, RECV %s", pt_states(&before), pt_states(&after),
		  pt_errname(cr.ret));
out:
	if (src >= 0)
		close(src);
	if (cr.pmo >= 0)
		close(cr.pmo);
	self_conn_close(lfd, cfd, afd);
}

/* case 2's second thread: flips the node id */
static void *case_node_flipper(void *arg)
{
	unsigned int id = 1;

	(void)arg;
	while (!atomic_load(&case_stop)) {
		id = id == 1 ? 2 : 1;
		mmtu_set_node_id(dev0, id);
		sched_yield();
	}
	return NULL;
}

/* count errnos of local delegations; false if one is not documented */
static bool case_errno(int ret, uint64_t *count, unsigned int *bad)
{
	int e = -ret;

	if (!ret)
		return true;
	if (e > 0 && e < NERR)
		count[e]++;
	if (in_list(fz_doc[C_DELEGATE].errs, e))
		return true;
	if (!(*bad)++)
		printf("# cases: DELEGATE_LOCAL -> %s (undocumented)\n",
		       pt_errname(e));
	return false;
}

static void case_print(const char *what, const uint64_t *count,
		       unsigned int n, double secs)
{
	int e;

	printf("# cases: %s: %u delegations in %.1f s, failures:", what, n,
	       secs);
	for (e = 1; e < NERR; e++)
		if (count[e])
			printf(" %s:%" PRIu64, pt_errname(e), count[e]);
	printf("\n");
}

/*
 * Case 2: local delegations while another thread changes the node id.
 * The receiver's rules and the closure's header took the id from two
 * reads, so a change between them refused the closure with EXDEV, an
 * errno MMT_IOC_PMO_DELEGATE_LOCAL does not have.
 */
static void case_node_id_race(void)
{
	uint64_t count[NERR] = { 0 };
	unsigned int n = 0, bad = 0;
	pthread_t th;
	double t0 = pt_now();

	atomic_store(&case_stop, false);
	if (pthread_create(&th, NULL, case_node_flipper, NULL)) {
		pt_result(false, "cases: delegations while the node id changes",
			  "pthread_create");
		return;
	}
	while (n < 1500 && pt_now() - t0 < 6) {
		int src = case_pmo(P_VALID, key_a, 1);
		int dst = case_pmo(P_WAITING, key_a, 1);

		if (src >= 0 && dst >= 0) {
			case_errno(mmtu_pmo_delegate_local(src, dst, 0, NULL),
				   count, &bad);
			n++;
		}
		if (src >= 0)
			close(src);
		if (dst >= 0)
			close(dst);
	}
	atomic_store(&case_stop, true);
	pthread_join(th, NULL);
	mmtu_set_node_id(dev0, 1);
	case_print("node id flipping", count, n, pt_now() - t0);
	pt_result(!bad && !count[EXDEV] && n,
		  "cases: delegations while the node id changes: no EXDEV, every errno documented",
		  "%" PRIu64 " EXDEV in %u, %u undocumented", count[EXDEV], n,
		  bad);
}

/* case 3's second thread: invalidates the receiver and keys it again */
static void *case_rekeyer(void *arg)
{
	int fd = *(int *)arg;

	while (!atomic_load(&case_stop)) {
		mmtu_pmo_invalidate(fd);
		mmtu_pmo_set_key(fd, key_a, 16, MMT_KEY_RECEIVE);
		usleep(200);
	}
	return NULL;
}

/*
 * Case 3: a receiver invalidated (and keyed again, WAITING) during a
 * local delegation into it.  Its receive rules were wiped with the key, so
 * the rest of the closures were refused with EXDEV (another connection);
 * the receive must refuse them with EPERM, as uapi/mmt.h says for an
 * invalidated receive.
 */
static void case_invalidated_receive(void)
{
	uint64_t count[NERR] = { 0 };
	unsigned int n = 0, bad = 0;
	pthread_t th;
	double t0 = pt_now();
	int dst = case_pmo(P_WAITING, key_a, 16);

	if (dst < 0) {
		pt_result(false, "cases: delegations into a receiver invalidated meanwhile",
			  "create");
		return;
	}
	atomic_store(&case_stop, false);
	if (pthread_create(&th, NULL, case_rekeyer, &dst)) {
		pt_result(false, "cases: delegations into a receiver invalidated meanwhile",
			  "pthread_create");
		close(dst);
		return;
	}
	while (n < 300 && pt_now() - t0 < 5) {
		int src = case_pmo(P_VALID, key_a, 16);

		if (src >= 0) {
			case_errno(mmtu_pmo_delegate_local(src, dst, 0, NULL),
				   count, &bad);
			n++;
			close(src);
		}
	}
	atomic_store(&case_stop, true);
	pthread_join(th, NULL);
	close(dst);
	case_print("receiver invalidated and keyed again", count, n,
		   pt_now() - t0);
	pt_result(!bad && !count[EXDEV] && n,
		  "cases: delegations into a receiver invalidated meanwhile: no EXDEV, every errno documented",
		  "%" PRIu64 " EXDEV in %u, %u undocumented", count[EXDEV], n,
		  bad);
}

/*
 * A child without CAP_CHECKPOINT_RESTORE and CAP_SYS_ADMIN: a restore of
 * the parked handle @h and a receive with
 * MMT_MIGRATE_PARK into a WAITING PMO of its own on @conn.  True if both
 * gave EPERM.
 */
static bool case_park_eperm(const uint8_t *h, int conn)
{
	struct mig_side rx = { .conn = conn, .flags = MMT_MIGRATE_PARK,
			       .timeout_ms = 100 };
	int st;
	pid_t pid = fork();

	if (!pid) {
		rx.pmo = case_pmo(P_WAITING, key_a, 1);
		if (rx.pmo < 0 || pt_drop_cap(CAP_CHECKPOINT_RESTORE) ||
		    pt_drop_cap(CAP_SYS_ADMIN))
			_exit(2);
		_exit(park_restore(h, false) == -EPERM &&
		      mig_call(&rx, false) == -EPERM ? 0 : 1);
	}
	return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
		!WEXITSTATUS(st);
}

/* a VALID one-closure PMO of the random bytes @data, or -1 */
static int case_src(struct pt_rng *rng, uint8_t *data)
{
	int fd = case_pmo(P_VALID, key_a, 1);

	pt_fill(rng, data, 4096);
	if (fd >= 0 && mmtu_pmo_write_all(fd, data, 4096, 0) != 4096) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/*
 * Case 5: a receiver process parks a migration and is killed (SIGKILL)
 * with its PMO's fd open; its exit closes the fd, the record stays, and
 * this process restores the PMO: VALID, the sender's bytes; the record
 * is gone after.
 */
static void case_park_dead(int cfd, int afd, struct pt_rng *rng, long rec0)
{
	struct mig_side tx = { .conn = cfd, .timeout_ms = 5000 };
	struct {
		int ret;
		uint8_t h[MMT_CKPT_HANDLE_BYTES];
	} msg = { .ret = -EIO };
	uint8_t data[4096];
	int p[2] = { -1, -1 }, st, fd = -EIO;
	bool sent = false, same = false;
	pthread_t t;
	pid_t pid = -1;
	double t0;

	tx.pmo = case_src(rng, data);
	if (tx.pmo >= 0 && !pipe(p))
		pid = fork();
	if (!pid) {
		struct mig_side rx = { .conn = afd, .timeout_ms = 5000,
				       .flags = MMT_MIGRATE_PARK };

		rx.pmo = case_pmo(P_WAITING, key_a, 1);
		msg.ret = rx.pmo < 0 ? -EBADF : mig_call(&rx, false);
		memcpy(msg.h, rx.mi.nonce, sizeof(msg.h));
		if (write(p[1], &msg, sizeof(msg)) != sizeof(msg))
			_exit(1);
		pause();	/* killed with the PMO's fd open */
		_exit(0);
	}
	if (p[1] >= 0)
		close(p[1]);
	if (pid > 0) {
		sent = !pthread_create(&t, NULL, mig_sender, &tx);
		if (read(p[0], &msg, sizeof(msg)) != sizeof(msg))
			msg.ret = -EIO;
		if (sent)
			pthread_join(t, NULL);
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
	if (p[0] >= 0)
		close(p[0]);
	t0 = pt_now();
	if (!msg.ret)
		while ((fd = park_restore(msg.h, false)) == -EBUSY &&
		       pt_now() - t0 < 5)
			usleep(20000);
	if (fd >= 0)
		same = park_same(fd, data);
	pt_result(sent && !msg.ret && !tx.ret && same &&
		  mmtg_stat("ckpt_records") == rec0,
		  "cases: park: the receiver killed after the commit; another process restores the PMO, the sender's bytes",
		  "fork %d, send %s, receive %s, restore %s, bytes %s, records %ld (want %ld)",
		  pid, pt_errname(-tx.ret), pt_errname(-msg.ret), fd_or_err(fd),
		  same ? "the same" : "differ", mmtg_stat("ckpt_records"),
		  rec0);
	if (fd >= 0)
		close(fd);
	if (tx.pmo >= 0)
		close(tx.pmo);
}


/* case 6's source: write-protects the receiver's figures, then sends */
struct case_wp {
	struct mig_side tx;
	void *page;
	long bytes;
};

static void *case_wp_sender(void *arg)
{
	struct case_wp *w = arg;

	usleep(500000);		/* the receive waits for the offer by now */
	mprotect(w->page, w->bytes, PROT_READ);
	mig_call(&w->tx, true);
	return NULL;
}

/*
 * Case 6: figures (@info) the receiver cannot write.  Read-only from the
 * start: a parking receive is refused with EFAULT at once, nothing
 * received, no record.  Write-protected while the receive waits for the
 * offer: the migration commits, and the receive returns 0, as a commit
 * is final (uapi/mmt.h); the handle, from the source's figures,
 * restores the sender's bytes.  (Before the fix the first waited for an
 * offer and gave ETIMEDOUT, the second gave EFAULT with the PMO
 * committed and parked.)
 */
static void case_park_info(int cfd, int afd, struct pt_rng *rng, long rec0)
{
	struct case_wp w = { .tx = { .conn = cfd, .timeout_ms = 5000 } };
	struct mmt_migrate m = { .size = MMT_MIGRATE_SIZE_VER0,
				 .flags = MMT_MIGRATE_PARK };
	struct mmt_migrate_info *mi;
	uint8_t data[4096];
	int dst, ret, fd = -EIO;
	bool sent = false, same = false;
	pthread_t t;
	double t0, dt;

	w.bytes = sysconf(_SC_PAGESIZE);
	w.page = mmap(NULL, w.bytes, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	dst = case_pmo(P_WAITING, key_a, 1);
	w.tx.pmo = case_src(rng, data);
	if (w.page == MAP_FAILED || dst < 0 || w.tx.pmo < 0) {
		pt_result(false, "cases: park: figures the receiver cannot write",
			  "setup: mmap, PMOs %d %d", dst, w.tx.pmo);
		goto out;
	}
	mi = w.page;
	mi->size = MMT_MIGRATE_INFO_SIZE_VER0;
	m.pmo_fd = dst;
	m.info = (uintptr_t)mi;
	m.timeout_ms = 2000;
	mprotect(w.page, w.bytes, PROT_READ);
	t0 = pt_now();
	ret = ioctl(afd, MMT_IOC_MIGRATE_RECV, &m) ? -errno : 0;
	dt = pt_now() - t0;
	pt_result(ret == -EFAULT && dt < 1 &&
		  mmtg_stat("ckpt_records") == rec0,
		  "cases: park: figures read-only: EFAULT at once, no record",
		  "%s after %.1f s, records %ld (want %ld)", pt_errname(-ret),
		  dt, mmtg_stat("ckpt_records"), rec0);

	mprotect(w.page, w.bytes, PROT_READ | PROT_WRITE);
	m.timeout_ms = 5000;
	sent = !pthread_create(&t, NULL, case_wp_sender, &w);
	ret = ioctl(afd, MMT_IOC_MIGRATE_RECV, &m) ? -errno : 0;
	if (sent)
		pthread_join(t, NULL);
	close(dst);
	dst = -1;
	if (sent && !w.tx.ret)
		fd = park_restore(w.tx.mi.nonce, false);
	if (fd >= 0)
		same = park_same(fd, data);
	pt_result(sent && !ret && !w.tx.ret && same &&
		  mmtg_stat("ckpt_records") == rec0,
		  "cases: park: figures write-protected during the receive: committed, 0, the PMO restores",
		  "receive %s, send %s, restore %s, bytes %s, records %ld (want %ld)",
		  pt_errname(-ret), pt_errname(-w.tx.ret), fd_or_err(fd),
		  same ? "the same" : "differ", mmtg_stat("ckpt_records"),
		  rec0);
	if (fd >= 0)
		close(fd);
out:
	if (dst >= 0)
		close(dst);
	if (w.tx.pmo >= 0)
		close(w.tx.pmo);
	if (w.page != MAP_FAILED)
		munmap(w.page, w.bytes);
}

/*
 * Case 4: park and unpark (MMT_IOC_MIGRATE_RECV with MMT_MIGRATE_PARK,
 * MMT_IOC_RESTORE without a buffer; docs/CRIU.md section 6) on a
 * connection of this guest to itself, with exact errnos and the
 * module's count of records (debugfs mmt/stats ckpt_records):
 *   - a parking receive that gets no offer: ETIMEDOUT, no record left;
 *   - CASE_PARK_ROUNDS (8) migrations parked, the two nonces equal, one
 *     record each; while the receiver's fd (or a dup of it) is open a
 *     restore gets EBUSY, a restore with a buffer or bad flags EINVAL, a
 *     caller without the capabilities EPERM (a receive with
 *     MMT_MIGRATE_PARK too), the record kept by each; the receiver
 *     closed, two threads restore the handle at once: exactly one fd,
 *     the other ESTALE; the PMO VALID, the sender's bytes, writable;
 *     the handle again: ESTALE; the record gone;
 *   - a receiver process that dies after the commit (SIGKILL, its fds
 *     closed by its exit): this process restores the PMO, the sender's
 *     bytes;
 *   - figures the receiver cannot write (case_park_info()).
 * Everything parked is restored and closed, and then every PMO is freed
 * (debugfs mmt/stats pmos as before): the module unloads.
 */
#define CASE_PARK_ROUNDS	8
static void case_park(void)
{
	struct pt_rng rng;
	uint8_t data[4096];
	int lfd = -1, cfd, afd, ret, r[2], k, won, busy = 0, inval = 0;
	int eperm = 0, race = 0, bytes = 0, stale = 0, nonce = 0, kept = 0;
	long rec0, pmos0;
	double t0 = pt_now();

	pt_rng_seed(&rng, opt.seed);
	pmos0 = mmtg_stat("pmos");
	self_conn(PORT_MAIN + 91, 5000, &lfd, &cfd, &afd);
	rec0 = mmtg_stat("ckpt_records");
	if (lfd < 0 || cfd < 0 || afd < 0 || rec0 < 0) {
		pt_result(false, "cases: park and unpark",
			  "setup: listen %d connect %d accept %d records %ld",
			  lfd, cfd, afd, rec0);
		goto out;
	}

	/* a parking receive with no offer: nothing kept */
	{
		struct mig_side rx = { .conn = afd, .flags = MMT_MIGRATE_PARK,
				       .timeout_ms = 200 };

		rx.pmo = case_pmo(P_WAITING, key_a, 1);
		ret = rx.pmo < 0 ? -EBADF : mig_call(&rx, false);
		pt_result(ret == -ETIMEDOUT &&
			  mmtg_stat("ckpt_records") == rec0,
			  "cases: park: a parking receive with no offer: ETIMEDOUT, no record",
			  "%s, records %ld -> %ld", pt_errname(-ret), rec0,
			  mmtg_stat("ckpt_records"));
		if (rx.pmo >= 0)
			close(rx.pmo);
	}

	for (k = 0; k < CASE_PARK_ROUNDS; k++) {
		struct mig_side tx = { .conn = cfd, .timeout_ms = 5000 };
		struct mig_side rx = { .conn = afd, .timeout_ms = 5000,
				       .flags = MMT_MIGRATE_PARK };
		const uint8_t *h = rx.mi.nonce;
		int dup;

		tx.pmo = case_src(&rng, data);
		rx.pmo = case_pmo(P_WAITING, key_a, 1);
		if (k & 1)
			rx.flags |= MMT_MIGRATE_EAGER;
		if (tx.pmo < 0 || rx.pmo < 0 || park_migrate(&tx, &rx) ||
		    tx.ret) {
			pt_result(false, "cases: park: a parked migration",
				  "round %d: PMOs %d %d, send %s, receive %s",
				  k, tx.pmo, rx.pmo, pt_errname(-tx.ret),
				  pt_errname(-rx.ret));
			if (tx.pmo >= 0)
				close(tx.pmo);
			if (rx.pmo >= 0)
				close(rx.pmo);
			goto out;
		}
		close(tx.pmo);
		nonce += !memcmp(tx.mi.nonce, rx.mi.nonce, 16) &&
			mmtg_stat("ckpt_records") == rec0 + 1;
		/* the receiver, then a dup of it, holds the PMO: EBUSY */
		dup = fcntl(rx.pmo, F_DUPFD_CLOEXEC, 3);
		ret = park_restore(h, false);
		busy += ret == -EBUSY;
		if (ret >= 0)
			close(ret);
		close(rx.pmo);
		ret = park_restore(h, false);
		busy += ret == -EBUSY;
		if (ret >= 0)
			close(ret);
		/* bad input: a buffer, bad flags; no capabilities */
		ret = park_restore(h, true);
		inval += ret == -EINVAL;
		if (ret >= 0)
			close(ret);
		{
			struct mmt_restore rs = { .size = MMT_RESTORE_SIZE_VER0,
						  .flags = 1u << 7 };

			memcpy(rs.handle, h, sizeof(rs.handle));
			ret = ioctl(dev0, MMT_IOC_RESTORE, &rs) ? -errno : rs.fd;
			inval += ret == -EINVAL;
			if (ret >= 0)
				close(ret);
		}
		eperm += case_park_eperm(h, afd);
		close(dup);
		kept += mmtg_stat("ckpt_records") == rec0 + 1;
		/* two restores at once: one fd, one ESTALE */
		if (!park_race2(h, r))
			r[0] = r[1] = -EAGAIN;
		won = r[0] >= 0 ? 0 : r[1] >= 0 ? 1 : -1;
		if (won >= 0 && r[!won] == -ESTALE)
			race++;
		else
			printf("# cases: park: round %d: racing restores: %s and %s\n",
			       k, fd_or_err(r[0]), fd_or_err(r[1]));
		if (r[0] >= 0 && r[1] >= 0)
			close(r[!won]);
		if (won < 0)
			continue;
		bytes += park_same(r[won], data) &&
			mmtu_pmo_write_all(r[won], data, 64, 100) == 64;
		ret = park_restore(h, false);
		stale += ret == -ESTALE && mmtg_stat("ckpt_records") == rec0;
		if (ret >= 0)
			close(ret);
		close(r[won]);
	}
	printf("# cases: park: %d rounds in %.1f s\n", CASE_PARK_ROUNDS,
	       pt_now() - t0);
	pt_result(nonce == CASE_PARK_ROUNDS,
		  "cases: park: each parked migration: the source's nonce is the handle, one record",
		  "%d of %d", nonce, CASE_PARK_ROUNDS);
	pt_result(busy == 2 * CASE_PARK_ROUNDS,
		  "cases: park: restore while the receiver or its dup is open: EBUSY",
		  "%d of %d", busy, 2 * CASE_PARK_ROUNDS);
	pt_result(inval == 2 * CASE_PARK_ROUNDS,
		  "cases: park: restore with a buffer, with bad flags: EINVAL",
		  "%d of %d", inval, 2 * CASE_PARK_ROUNDS);
	pt_result(eperm == CASE_PARK_ROUNDS,
		  "cases: park: without CAP_CHECKPOINT_RESTORE and CAP_SYS_ADMIN: restore and parking receive EPERM",
		  "%d of %d", eperm, CASE_PARK_ROUNDS);
	pt_result(kept == CASE_PARK_ROUNDS,
		  "cases: park: the refused restores kept the record",
		  "%d of %d", kept, CASE_PARK_ROUNDS);
	pt_result(race == CASE_PARK_ROUNDS,
		  "cases: park: two restores of one handle at once: one fd, the other ESTALE",
		  "%d of %d", race, CASE_PARK_ROUNDS);
	pt_result(bytes == CASE_PARK_ROUNDS,
		  "cases: park: the restored PMO VALID, the sender's bytes, writable",
		  "%d of %d", bytes, CASE_PARK_ROUNDS);
	pt_result(stale == CASE_PARK_ROUNDS,
		  "cases: park: the handle again: ESTALE, the record gone",
		  "%d of %d", stale, CASE_PARK_ROUNDS);
	case_park_dead(cfd, afd, &rng, rec0);
	case_park_info(cfd, afd, &rng, rec0);
	pt_result(mmtg_stat("pmos") == pmos0,
		  "cases: park: every PMO freed once its fds are closed (debugfs pmos)",
		  "%ld PMOs, %ld before", mmtg_stat("pmos"), pmos0);
out:
	self_conn_close(lfd, cfd, afd);
}

/* the fixed regression cases of findings (--cases) */
static int run_cases(void)
{
	prog = "mmt-fuzz --cases";
	if (opt.have_self)
		case_delegate_busy();
	else
		printf("# cases: no --self: no connection, case 1 left out\n");
	case_node_id_race();
	case_invalidated_receive();
	if (opt.have_self)
		case_park();
	else
		printf("# cases: no --self: no connection, cases 4 to 6 left out\n");
	close(dev0);
	pt_summary(prog);
	return pt_fail ? 1 : 0;
}
