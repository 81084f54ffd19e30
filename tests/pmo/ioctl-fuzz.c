// SPDX-License-Identifier: GPL-2.0
/*
 * ioctl-fuzz.c - bounded, seeded fuzzing of every /dev/mmt and PMO ioctl,
 * and of pread/pwrite on PMO fds, from user space in a guest
 *
 * Each iteration issues one call with random and boundary values: every
 * ioctl number of uapi/mmt.h plus unknown numbers of the same type; size
 * fields 0, 1, VER0 - 1, VER0, VER0 + 8 (tail zero or not), PAGE_SIZE + 1,
 * huge; flags with all bits; reserved fields non-zero; pointers NULL,
 * kernel addresses, unmapped, straddling into a PROT_NONE page; fds -1,
 * closed, reused, /dev/null, /dev/mmt itself, PMOs in every state; pread
 * and pwrite at random offsets and lengths.  A second thread closes fds
 * (and dup2()s /dev/null over them) concurrently with the main thread's
 * calls on them.
 *
 * It checks that every failure's errno is one that uapi/mmt.h documents for
 * that call on that kind of fd (EBADF for a closed fd, ENOTTY for another
 * kind of file), and that the program survives.  Each unexpected
 * (call, errno) pair is one failure, printed once with an example.  The
 * guest script checks the kernel log and that the module unloads.
 *
 * pread/pwrite are not documented in uapi/mmt.h; the allowed errnos are
 * those of DESIGN.md section 4 and the VFS: EPERM (MMT not readable or
 * writable in its state), EBADMSG (verification failed), EFAULT, EINVAL
 * (negative offset, /dev/mmt), ENOSPC (pwrite at the end), ENOMEM, and for
 * pwrite EOVERFLOW (root counter exhausted, lib/mmt_lib.h mmt_write()).
 *
 * To keep the guest alive, the program drops CAP_IPC_LOCK and sets
 * RLIMIT_MEMLOCK (--memlock MiB, default 32), so no random size can
 * allocate more than that.
 *
 * Usage: ioctl-fuzz [--iters N] [--seed S] [--memlock MIB] [--no-thread]
 * Output: "ok"/"not ok" lines, then "ioctl-fuzz: N passed, N failed".
 * Exit status 0 if no unexpected errno was seen, 1 otherwise, 2 on setup
 * failure.
 */
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/ioctl.h>
#include <sys/resource.h>

#include "pmo_test.h"

#define POOL		6	/* PMO fds owned by the main thread */
#define RACY		4	/* PMO fds the closer thread may close */
#define ARG_BYTES	8192	/* readable bytes of the argument buffer */
#define IO_BYTES	(256 * 1024)

enum kind { K_BAD, K_DEV, K_OTHER, K_PMO, K_RACY };

enum call {
	C_QUERY, C_CREATE, C_NODE_ID, C_SET_KEY, C_COUNTER, C_INFO,
	C_INVALIDATE, C_DELEGATE, C_DEBUG, C_UNKNOWN, C_PREAD, C_PWRITE,
	C_NR
};

static const char *const call_name[C_NR] = {
	"QUERY", "PMO_CREATE", "SET_NODE_ID", "PMO_SET_KEY",
	"PMO_SET_ROOT_COUNTER", "PMO_INFO", "PMO_INVALIDATE",
	"PMO_DELEGATE_LOCAL", "PMO_DEBUG", "unknown command", "pread",
	"pwrite",
};

/* errnos uapi/mmt.h documents per call (on the right kind of fd) */
static const int allowed[C_NR][16] = {
	[C_QUERY] = { EFAULT, EINVAL, E2BIG },
	[C_CREATE] = { EFAULT, EINVAL, E2BIG, ENOMEM, ENOSPC, EMFILE },
	[C_NODE_ID] = { EFAULT, EINVAL, E2BIG, EPERM },
	[C_SET_KEY] = { EFAULT, E2BIG, EINVAL, EBUSY, ENOTTY, ENOMEM,
			EOVERFLOW },
	[C_COUNTER] = { EFAULT, E2BIG, EINVAL, EPERM },
	[C_INFO] = { EFAULT, E2BIG, EINVAL, ENOMEM },
	[C_INVALIDATE] = { EINVAL, EBUSY },
	[C_DELEGATE] = { EFAULT, E2BIG, EINVAL, EBADF, ENOTTY, EMEDIUMTYPE,
			 EPERM, EBADMSG, ESTALE, EILSEQ, ENOMEM, EOVERFLOW },
	[C_DEBUG] = { EFAULT, E2BIG, EINVAL, EPERM, ENOTTY },
	[C_UNKNOWN] = { ENOTTY },
	[C_PREAD] = { EPERM, EBADMSG, EFAULT, EINVAL, ENOMEM, EAGAIN },
	[C_PWRITE] = { EPERM, EBADMSG, EFAULT, EINVAL, ENOSPC, ENOMEM,
		       EOVERFLOW, EAGAIN },
};

static bool on_dev(enum call c)
{
	return c == C_QUERY || c == C_CREATE || c == C_NODE_ID;
}

static struct pt_rng rng;
static int dev, nul;
static int pool[POOL];
static _Atomic int racy[RACY];
static atomic_bool stop;
static uint8_t *argbuf;		/* ARG_BYTES, then a PROT_NONE page */
static uint8_t *iobuf;		/* IO_BYTES, then a PROT_NONE page */
static uint64_t calls, fails_total;
static uint64_t hist[C_NR][135];

struct unexpected {
	enum call c;
	int err;
	uint64_t count;
};
static struct unexpected unexp[64];
static int n_unexp;

/* ------------------------------------------------------------ values */

static uint32_t rnd_u32(void)
{
	static const uint32_t b[] = {
		0, 1, 2, 7, 8, 15, 16, 31, 32, 33, 63, 64, 65, 255, 256,
		4095, 4096, 4097, 65535, 65536, 0x7fffffff, 0x80000000,
		0xfffffffe, 0xffffffff,
	};

	if (pt_below(&rng, 3))
		return b[pt_below(&rng, sizeof(b) / sizeof(b[0]))];
	return (uint32_t)pt_rand(&rng);
}

static uint64_t rnd_u64(void)
{
	static const uint64_t b[] = {
		0, 1, 63, 64, 4096, 1ULL << 17, 1ULL << 21, (1ULL << 21) + 1,
		1ULL << 31, 1ULL << 32, (1ULL << 38) - 1, 1ULL << 38,
		1ULL << 40, 1ULL << 62, 1ULL << 63, ~0ULL, ~0ULL - 4095,
	};

	if (pt_below(&rng, 3))
		return b[pt_below(&rng, sizeof(b) / sizeof(b[0]))];
	return pt_rand(&rng) >> pt_below(&rng, 64);
}

/* a size field for a struct of VER0 @v */
static uint32_t rnd_size(uint32_t v)
{
	switch (pt_below(&rng, 12)) {
	case 0:
		return 0;
	case 1:
		return 1;
	case 2:
		return v - 1;
	case 3:
		return v + 8;
	case 4:
		return 4096;
	case 5:
		return 4097;
	case 6:
		return rnd_u32();
	default:
		return v;
	}
}

/* a pointer for an ioctl argument of @len bytes; *good if argbuf */
static void *rnd_ptr(size_t len, bool *good)
{
	*good = false;
	switch (pt_below(&rng, 20)) {
	case 0:
		return NULL;
	case 1:
		return (void *)0xffff888000000000UL;	/* direct map */
	case 2:
		return (void *)0xffffffff81000000UL;	/* kernel text */
	case 3:
		return pt_bad_ptr();
	case 4:
		return argbuf + ARG_BYTES - 1 - pt_below(&rng, len);
	case 5:
		return (void *)(uintptr_t)pt_rand(&rng);
	case 6:
		return (void *)(uintptr_t)4095;
	default:
		*good = true;
		return argbuf;
	}
}

/* a PMO geometry, usually a cheap valid one */
static void rnd_geometry(struct mmt_geometry *g)
{
	memset(g, 0, sizeof(*g));
	switch (pt_below(&rng, 8)) {
	case 0:
		g->levels = rnd_u32();
		g->log_block_size = rnd_u32();
		g->log_arity[pt_below(&rng, 4)] = rnd_u32();
		g->reserved[pt_below(&rng, 2)] = pt_below(&rng, 2);
		break;
	case 1:
		g->levels = 2;
		break;
	case 2:
		g->levels = 2;
		g->log_arity[0] = 1 + pt_below(&rng, 6);
		g->log_arity[1] = 1 + pt_below(&rng, 6);
		g->log_block_size = 6 + pt_below(&rng, 7);
		break;
	default:
		g->levels = 1;
		break;
	}
}

/* ------------------------------------------------------------ fds */

static int rnd_pool_fd(void)
{
	return pool[pt_below(&rng, POOL)];
}

/* pick a target fd and say what kind of file it is */
static int rnd_fd(enum call c, enum kind *k)
{
	int fd;

	switch (pt_below(&rng, 16)) {
	case 0:
		*k = K_BAD;
		return -1;
	case 1:
		*k = K_BAD;
		return 900;		/* never opened */
	case 2:
		*k = K_BAD;
		return INT_MAX;
	case 3:
		*k = K_OTHER;
		return nul;
	case 4:				/* the wrong kind */
		if (!on_dev(c)) {
			*k = K_DEV;
			return dev;
		}
		fd = rnd_pool_fd();
		*k = fd < 0 ? K_BAD : K_PMO;
		return fd;
	case 5:
	case 6:
	case 7:
		*k = K_RACY;
		return atomic_load(&racy[pt_below(&rng, RACY)]);
	default:
		if (on_dev(c)) {
			*k = K_DEV;
			return dev;
		}
		fd = rnd_pool_fd();
		*k = fd < 0 ? K_BAD : K_PMO;
		return fd;
	}
}

/*
 * a new PMO, keyed (normal or receive, one of two keys) or not; mostly one
 * shape (one 4 KiB closure), so that random pairs can delegate; -1 on
 * failure
 */
static int new_pmo(void)
{
	static const uint8_t key[2][16] = { "fuzzkey-fuzzkey-", "other-key-other-" };
	struct mmt_geometry g = { .levels = 1 };
	int fd, n = 1;

	if (!pt_below(&rng, 4)) {
		g.levels = 1 + pt_below(&rng, 2);
		n = 1 + pt_below(&rng, 3);
	}
	fd = mmtu_pmo_create(dev, mmtu_geometry_closure_bytes(&g) * n, &g, 0,
			     NULL);
	if (fd < 0)
		return -1;
	switch (pt_below(&rng, 5)) {
	case 0:
		break;
	case 1:
	case 2:
		mmtu_pmo_set_key(fd, key[!pt_below(&rng, 4)], 16,
				 MMT_KEY_RECEIVE);
		if (!pt_below(&rng, 4))
			mmtu_pmo_set_root_counter(fd, pt_below(&rng, 4));
		break;
	default:
		mmtu_pmo_set_key(fd, key[!pt_below(&rng, 4)], 16, 0);
		break;
	}
	return fd;
}

static void refill(void)
{
	int i = pt_below(&rng, RACY), fd, expect = -1;

	if (atomic_load(&racy[i]) >= 0)
		return;
	fd = new_pmo();
	if (fd >= 0 && !atomic_compare_exchange_strong(&racy[i], &expect, fd))
		close(fd);
}

/* the closer: takes racy fds away and closes them (or dup2s over them) */
static void *closer(void *unused __attribute__((unused)))
{
	struct pt_rng r;
	struct mmt_pmo_info in;
	uint8_t b[64];
	int fd;

	pt_rng_seed(&r, rng.s ^ 0x5555);
	while (!atomic_load(&stop)) {
		if (pt_below(&r, 2))
			sched_yield();
		else
			usleep(pt_below(&r, 300));
		fd = atomic_load(&racy[pt_below(&r, RACY)]);
		/* also race on the same files from this thread */
		if (fd >= 0 && pt_below(&r, 2)) {
			mmtu_pmo_info(fd, &in, NULL, 0);
			(void)!pread(fd, b, sizeof(b), pt_below(&r, 8192));
			mmtu_pmo_delegate_local(fd,
				atomic_load(&racy[pt_below(&r, RACY)]),
				pt_below(&r, 4), NULL);
		}
		fd = atomic_exchange(&racy[pt_below(&r, RACY)], -1);
		if (fd < 0)
			continue;
		if (pt_below(&r, 2))
			dup2(nul, fd);	/* the number now is /dev/null */
		close(fd);
	}
	return NULL;
}

/* ------------------------------------------------------------ checking */

static bool errno_ok(enum call c, enum kind k, int err, bool neg_off)
{
	unsigned int i;

	/* the VFS rejects a negative offset before it looks at the fd */
	if ((c == C_PREAD || c == C_PWRITE) && neg_off)
		return err == EINVAL;
	if (k == K_RACY && (err == EBADF || err == ENOTTY))
		return true;
	if (k == K_BAD)
		return err == EBADF;
	if (c == C_PREAD || c == C_PWRITE) {
		if (k == K_OTHER || k == K_DEV)
			return true;	/* not our file: any VFS error */
	} else if (k == K_OTHER || (k == K_DEV) != on_dev(c) ||
		   c == C_UNKNOWN) {
		return err == ENOTTY;
	}
	for (i = 0; i < 12 && allowed[c][i]; i++)
		if (allowed[c][i] == err)
			return true;
	return false;
}

static const char *const kind_name[] = {
	"closed/invalid fd", "/dev/mmt", "/dev/null", "PMO fd",
	"racy fd",
};

static void check(enum call c, enum kind k, long ret, int err,
		  bool neg_off, const char *detail)
{
	int i;

	calls++;
	if (ret >= 0) {
		hist[c][0]++;
		if (k == K_BAD)
			err = 0;	/* success on a closed fd: report */
		else
			return;
	} else {
		hist[c][err > 0 && err < 134 ? err : 134]++;
	}
	if (errno_ok(c, k, err, neg_off))
		return;
	for (i = 0; i < n_unexp; i++)
		if (unexp[i].c == c && unexp[i].err == err)
			break;
	if (i < n_unexp) {
		unexp[i].count++;
		return;
	}
	fails_total++;
	printf("# unexpected: %s on %s -> %s (%s)\n", call_name[c],
	       kind_name[k], err ? pt_errname(err) : "success", detail);
	if (n_unexp < (int)(sizeof(unexp) / sizeof(unexp[0]))) {
		unexp[n_unexp].c = c;
		unexp[n_unexp].err = err;
		unexp[n_unexp].count = 1;
		n_unexp++;
	}
}

/* ------------------------------------------------------------ one call */

/* garbage past the struct, up to the size field (for the E2BIG paths) */
static void tail_garbage(void *arg, size_t struct_bytes, uint32_t size)
{
	size_t end = size < ARG_BYTES ? size : ARG_BYTES;

	if (end > struct_bytes && pt_below(&rng, 2))
		((uint8_t *)arg)[struct_bytes + pt_below(&rng,
					end - struct_bytes)] = 1;
}

static void fuzz_ioctl(void)
{
	enum call c = pt_below(&rng, C_UNKNOWN + 1);
	unsigned long cmd;
	char detail[96];
	enum kind k;
	bool good = true;
	void *p;
	long ret;
	int fd, created = -1;

	memset(argbuf, 0, ARG_BYTES);
	fd = rnd_fd(c, &k);
	p = argbuf;
	switch (c) {
	case C_QUERY:
		{;
		struct mmt_query *q = p;

		cmd = MMT_IOC_QUERY;
		q->size = rnd_size(MMT_QUERY_SIZE_VER0);
		if (!pt_below(&rng, 4))
			q->flags = rnd_u32();
		if (!pt_below(&rng, 4))
			q->reserved = rnd_u32();
		tail_garbage(q, sizeof(*q), q->size);
		break;
	}
	case C_CREATE:
		{;
		struct mmt_pmo_create *cr = p;

		cmd = MMT_IOC_PMO_CREATE;
		cr->size = rnd_size(MMT_PMO_CREATE_SIZE_VER0);
		rnd_geometry(&cr->geometry);
		cr->bytes = mmtu_geometry_closure_bytes(&cr->geometry) *
			(1 + pt_below(&rng, 3));
		if (!pt_below(&rng, 4))
			cr->bytes = rnd_u64();
		if (!pt_below(&rng, 3))
			cr->flags = pt_below(&rng, 2) ? MMT_PMO_CLOEXEC :
				rnd_u64();
		if (!pt_below(&rng, 6))
			cr->reserved0 = rnd_u32();
		if (!pt_below(&rng, 6))
			cr->reserved1 = rnd_u32();
		if (!pt_below(&rng, 6))
			cr->reserved[pt_below(&rng, 4)] = rnd_u64();
		if (!pt_below(&rng, 6))
			cr->fd = rnd_u32();
		tail_garbage(cr, sizeof(*cr), cr->size);
		break;
	}
	case C_NODE_ID:
		{;
		struct mmt_node_id *n = p;

		cmd = MMT_IOC_SET_NODE_ID;
		n->size = rnd_size(MMT_NODE_ID_SIZE_VER0);
		n->node_id = pt_below(&rng, 2) ? 1 + pt_below(&rng, 65535) :
			rnd_u32();
		if (!pt_below(&rng, 4))
			n->flags = rnd_u32();
		if (!pt_below(&rng, 4))
			n->reserved = rnd_u32();
		break;
	}
	case C_SET_KEY:
		{;
		struct mmt_pmo_key *kk = p;

		cmd = MMT_IOC_PMO_SET_KEY;
		kk->size = rnd_size(MMT_PMO_KEY_SIZE_VER0);
		kk->key_len = pt_below(&rng, 3) ? 16u << pt_below(&rng, 2) :
			rnd_u32();
		kk->flags = pt_below(&rng, 2) ? MMT_KEY_RECEIVE :
			pt_below(&rng, 2) ? 0 : rnd_u64();
		pt_fill(&rng, kk->key, kk->key_len < 32 ? kk->key_len : 32);
		if (!pt_below(&rng, 5))
			kk->key[pt_below(&rng, 32)] = 0xff;
		tail_garbage(kk, sizeof(*kk), kk->size);
		break;
	}
	case C_COUNTER:
		{;
		struct mmt_pmo_counter *cn = p;

		cmd = MMT_IOC_PMO_SET_ROOT_COUNTER;
		cn->size = rnd_size(MMT_PMO_COUNTER_SIZE_VER0);
		cn->root_counter = rnd_u64();
		if (!pt_below(&rng, 4))
			cn->flags = rnd_u32();
		break;
	}
	case C_INFO:
		{;
		struct mmt_pmo_info *in = p;

		cmd = MMT_IOC_PMO_INFO;
		in->size = rnd_size(MMT_PMO_INFO_SIZE_VER0);
		in->mmt_count = pt_below(&rng, 2) ? pt_below(&rng, 8) :
			rnd_u32();
		in->mmts = (uintptr_t)rnd_ptr(32 * 8, &good);
		if (good)
			in->mmts = (uintptr_t)(argbuf + 4096);
		if (!pt_below(&rng, 4))
			in->flags = rnd_u32();
		if (!pt_below(&rng, 6))
			in->reserved[pt_below(&rng, 4)] = rnd_u64();
		break;
	}
	case C_INVALIDATE:
		cmd = MMT_IOC_PMO_INVALIDATE;
		p = pt_below(&rng, 4) ? NULL : (void *)(uintptr_t)rnd_u64();
		break;
	case C_DELEGATE:
		{;
		struct mmt_delegate_local *d = p;
		enum kind dk;

		cmd = MMT_IOC_PMO_DELEGATE_LOCAL;
		d->size = rnd_size(MMT_DELEGATE_LOCAL_SIZE_VER0);
		d->dst_fd = pt_below(&rng, 2) ? rnd_fd(C_DELEGATE, &dk) :
			pool[pt_below(&rng, POOL)];
		d->flags = pt_below(&rng, 4) ? pt_below(&rng, 4) : rnd_u64();
		if (!pt_below(&rng, 6))
			d->reserved[pt_below(&rng, 2)] = rnd_u64();
		if (!pt_below(&rng, 8))
			d->closures = rnd_u64();
		tail_garbage(d, sizeof(*d), d->size);
		break;
	}
	case C_DEBUG:
		{;
		struct mmt_pmo_debug *d = p;

		cmd = MMT_IOC_PMO_DEBUG;
		d->size = rnd_size(MMT_PMO_DEBUG_SIZE_VER0);
		d->region = pt_below(&rng, 4) ? pt_below(&rng, 3) : rnd_u32();
		d->closure = pt_below(&rng, 2) ? pt_below(&rng, 3) : rnd_u32();
		d->xor_mask = pt_below(&rng, 2) ? 1 + pt_below(&rng, 255) :
			rnd_u32();
		d->offset = pt_below(&rng, 2) ? pt_below(&rng, 4096) :
			rnd_u64();
		if (!pt_below(&rng, 6))
			d->reserved = rnd_u64();
		break;
	}
	default:
		c = C_UNKNOWN;
		cmd = _IOC(pt_below(&rng, 4), MMT_IOC_MAGIC,
			   pt_below(&rng, 256), pt_below(&rng, 1 << 14));
		if (cmd == MMT_IOC_QUERY || cmd == MMT_IOC_PMO_CREATE ||
		    cmd == MMT_IOC_SET_NODE_ID || cmd == MMT_IOC_PMO_SET_KEY ||
		    cmd == MMT_IOC_PMO_SET_ROOT_COUNTER ||
		    cmd == MMT_IOC_PMO_INFO || cmd == MMT_IOC_PMO_INVALIDATE ||
		    cmd == MMT_IOC_PMO_DELEGATE_LOCAL ||
		    cmd == MMT_IOC_PMO_DEBUG)
			cmd ^= 1UL << 16;	/* another size: unknown */
		break;
	}
	/* sometimes move the argument to a bad or straddling address */
	if (c != C_INVALIDATE && !pt_below(&rng, 6)) {
		void *q = rnd_ptr(64, &good);

		if (!good && q >= (void *)argbuf &&
		    q < (void *)(argbuf + ARG_BYTES))
			memmove(q, argbuf, argbuf + ARG_BYTES - (uint8_t *)q);
		p = q;
	}
	ret = ioctl(fd, cmd, p);
	snprintf(detail, sizeof(detail), "fd %d, cmd 0x%lx, arg %p, size %u",
		 fd, cmd, p, good && p == argbuf ? *(uint32_t *)argbuf : 0);
	check(c, k, ret, ret < 0 ? errno : 0, false, detail);
	/* a PMO made by PMO_CREATE: keep it in the pool (a reused fd) */
	if (c == C_CREATE && ret == 0) {
		created = ((struct mmt_pmo_create *)p)->fd;
		if (created >= 0) {
			int i = pt_below(&rng, POOL);

			if (pool[i] >= 0)
				close(pool[i]);
			pool[i] = created;
		}
	}
}

static void fuzz_io(void)
{
	enum call c = pt_below(&rng, 2) ? C_PREAD : C_PWRITE;
	char detail[96];
	size_t len;
	off_t off;
	enum kind k;
	bool good;
	void *buf;
	ssize_t n;
	int fd;

	fd = rnd_fd(C_INFO, &k);
	len = pt_below(&rng, 3) ? pt_below(&rng, 9000) :
		pt_below(&rng, IO_BYTES + 1);
	off = pt_below(&rng, 2) ? (off_t)pt_below(&rng, 1 << 20) :
		(off_t)rnd_u64();
	buf = rnd_ptr(len, &good);
	if (good)
		buf = iobuf;
	if (c == C_PWRITE && good)
		pt_fill(&rng, iobuf, len < 4096 ? len : 4096);
	if (c == C_PREAD)
		n = pread(fd, buf, len, off);
	else
		n = pwrite(fd, buf, len, off);
	snprintf(detail, sizeof(detail), "fd %d, len %zu, off %lld, buf %p",
		 fd, len, (long long)off, buf);
	check(c, k, n, n < 0 ? errno : 0, off < 0, detail);
}

/* ------------------------------------------------------------ main */

int main(int argc, char **argv)
{
	uint64_t iters = 20000, seed = 1, memlock_mib = 32, i;
	bool thread = true;
	struct rlimit rl;
	pthread_t th;
	int j, ret;

	for (j = 1; j < argc; j++) {
		if (!strcmp(argv[j], "--iters") && j + 1 < argc)
			iters = strtoull(argv[++j], NULL, 0);
		else if (!strcmp(argv[j], "--seed") && j + 1 < argc)
			seed = strtoull(argv[++j], NULL, 0);
		else if (!strcmp(argv[j], "--memlock") && j + 1 < argc)
			memlock_mib = strtoull(argv[++j], NULL, 0);
		else if (!strcmp(argv[j], "--no-thread"))
			thread = false;
		else {
			fprintf(stderr, "usage: %s [--iters N] [--seed S] [--memlock MIB] [--no-thread]\n",
				argv[0]);
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	pt_rng_seed(&rng, seed);
	dev = mmtu_open();
	nul = open("/dev/null", O_RDWR | O_CLOEXEC);
	argbuf = pt_map_guarded(ARG_BYTES);
	iobuf = pt_map_guarded(IO_BYTES);
	if (dev < 0 || nul < 0 || !argbuf || !iobuf) {
		printf("not ok - ioctl-fuzz: setup (%s)\n", pt_errname(dev));
		return 2;
	}
	ret = pt_drop_cap(CAP_IPC_LOCK);
	rl.rlim_cur = rl.rlim_max = memlock_mib << 20;
	if (ret || setrlimit(RLIMIT_MEMLOCK, &rl)) {
		printf("not ok - ioctl-fuzz: drop CAP_IPC_LOCK, set RLIMIT_MEMLOCK (%s)\n",
		       pt_errname(ret ? ret : -errno));
		return 2;
	}
	for (j = 0; j < POOL; j++)
		pool[j] = new_pmo();
	for (j = 0; j < RACY; j++)
		atomic_store(&racy[j], new_pmo());
	if (thread && pthread_create(&th, NULL, closer, NULL)) {
		printf("not ok - ioctl-fuzz: pthread_create\n");
		return 2;
	}
	printf("# ioctl-fuzz: seed %" PRIu64 ", %" PRIu64 " iterations, closer thread %s\n",
	       seed, iters, thread ? "on" : "off");
	for (i = 0; i < iters; i++) {
		uint64_t r = pt_below(&rng, 100);

		if (r < 4) {
			j = pt_below(&rng, POOL);
			if (pool[j] >= 0)
				close(pool[j]);	/* its number may be reused */
			pool[j] = new_pmo();
		} else if (r < 8) {
			refill();
		} else if (r < 10) {
			j = pt_below(&rng, POOL);
			if (pool[j] >= 0)
				close(pool[j]);
			pool[j] = -1;	/* a closed fd, used as K_BAD */
		} else if (r < 78) {
			fuzz_ioctl();
		} else {
			fuzz_io();
		}
		if (i && !(i % 5000))
			printf("# %" PRIu64 " iterations, %" PRIu64 " calls\n",
			       i, calls);
	}
	atomic_store(&stop, true);
	if (thread)
		pthread_join(th, NULL);

	printf("# calls per command (success, then errno:count):\n");
	for (j = 0; j < C_NR; j++) {
		int e;

		printf("#   %-22s ok:%" PRIu64, call_name[j], hist[j][0]);
		for (e = 1; e < 135; e++)
			if (hist[j][e])
				printf(" %s:%" PRIu64, pt_errname(e),
				       hist[j][e]);
		printf("\n");
	}
	for (j = 0; j < n_unexp; j++)
		pt_result(false, "ioctl-fuzz: errno documented", "%s -> %s, %" PRIu64 " times",
			  call_name[unexp[j].c],
			  unexp[j].err ? pt_errname(unexp[j].err) :
			  "success on a closed fd", unexp[j].count);
	if (!n_unexp)
		pt_result(true, "ioctl-fuzz: every errno is documented for its call", "-");
	pt_result(calls > iters / 2, "ioctl-fuzz: calls issued",
		  "%" PRIu64 " calls", calls);

	/* the device still works */
	for (j = 0; j < POOL; j++)
		if (pool[j] >= 0)
			close(pool[j]);
	for (j = 0; j < RACY; j++) {
		int fd = atomic_exchange(&racy[j], -1);

		if (fd >= 0)
			close(fd);
	}
	ret = pt_device_works(dev);
	pt_result(!ret, "ioctl-fuzz: device works afterwards (query, create, key, write, read)",
		  "%s", pt_errname(ret));
	close(dev);
	close(nul);
	pt_summary("ioctl-fuzz");
	return pt_fail ? 1 : 0;
}
