/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pmo_test.h - helpers shared by the guest test programs of tests/pmo/
 * (pmo-basic, ioctl-fuzz, pmo-rlimit, pmo-cycles): TAP-style result lines,
 * a seeded PRNG, PMO snapshots.  Header-only (static functions) so each
 * program is one .c file plus libmmt.c.
 *
 * Result lines: "ok - NAME" / "not ok - NAME (why)", counted in
 * pt_pass / pt_fail; pt_summary() prints "PROG: N passed, N failed".
 */
#ifndef PMO_TEST_H
#define PMO_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include <linux/io_uring.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "libmmt.h"

static int pt_pass, pt_fail;

/* pt_result() - print one result line; @why is printed on failure only */
static inline void __attribute__((format(printf, 3, 4)))
pt_result(bool cond, const char *name, const char *why, ...)
{
	va_list ap;

	if (cond) {
		pt_pass++;
		printf("ok - %s\n", name);
	} else {
		pt_fail++;
		printf("not ok - %s (", name);
		va_start(ap, why);
		vprintf(why, ap);
		va_end(ap);
		printf(")\n");
	}
	fflush(stdout);
}

/* errno name or number, for messages */
static inline const char *pt_errname(int err)
{
	static char buf[4][24];
	static int idx;
	const char *n;

	if (err < 0)
		err = -err;
	if (!err)
		return "0";
	n = strerrorname_np(err);
	if (n)
		return n;
	idx = (idx + 1) % 4;
	snprintf(buf[idx], sizeof(buf[idx]), "errno %d", err);
	return buf[idx];
}

/* pt_expect_ret() - @ret (0 or -errno) must equal @want (0 or -errno) */
static inline bool pt_expect_ret(long ret, int want, const char *name)
{
	pt_result(ret == want, name, "got %s, want %s",
		  ret < 0 ? pt_errname((int)ret) : "success",
		  want < 0 ? pt_errname(want) : "success");
	return ret == want;
}

/* pt_sys() - result of a raw syscall: 0 or -errno */
static inline long pt_sys(long ret)
{
	return ret < 0 ? -errno : ret;
}

static inline void pt_summary(const char *prog)
{
	printf("%s: %d passed, %d failed\n", prog, pt_pass, pt_fail);
	fflush(stdout);
}

static inline double pt_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* an address with nothing readable or writable behind it (a PROT_NONE page) */
static inline void *pt_bad_ptr(void)
{
	static void *p;

	if (!p) {
		p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
		if (p == MAP_FAILED)
			p = (void *)16;
	}
	return p;
}

/*
 * pt_drop_cap() - remove @cap from the effective and permitted sets (e.g.
 * CAP_IPC_LOCK, so RLIMIT_MEMLOCK applies to root); 0 or -errno
 */
static inline int pt_drop_cap(int cap)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -errno;
	d[cap / 32].effective &= ~(1u << (cap % 32));
	d[cap / 32].permitted &= ~(1u << (cap % 32));
	d[cap / 32].inheritable &= ~(1u << (cap % 32));
	if (syscall(SYS_capset, &h, d))
		return -errno;
	return 0;
}

/* ------------------------------------------------------------ PRNG */

/* xorshift64* (Vigna): fast, seeded, reproducible across runs */
struct pt_rng {
	uint64_t s;
};

static inline void pt_rng_seed(struct pt_rng *r, uint64_t seed)
{
	r->s = seed ? seed : 0x9e3779b97f4a7c15ULL;
}

static inline uint64_t pt_rand(struct pt_rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545f4914f6cdd1dULL;
}

/* uniform-ish in [0, n) for n > 0 */
static inline uint64_t pt_below(struct pt_rng *r, uint64_t n)
{
	return n ? pt_rand(r) % n : 0;
}

static inline void pt_fill(struct pt_rng *r, void *buf, size_t len)
{
	uint8_t *p = buf;
	uint64_t v;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		v = pt_rand(r);
		memcpy(p + i, &v, 8);
	}
	if (i < len) {
		v = pt_rand(r);
		memcpy(p + i, &v, len - i);
	}
}

static inline void *pt_malloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p) {
		printf("not ok - malloc %zu bytes\n", n);
		exit(2);
	}
	return p;
}

/* ------------------------------------------------------------ PMO snapshots */

#define PT_MAX_MMTS	64

/* What MMT_IOC_PMO_INFO reports, to compare before/after an operation. */
struct pt_snap {
	int ret;
	struct mmt_pmo_info info;
	struct mmt_mmt_info mmts[PT_MAX_MMTS];
};

static inline int pt_snap(int fd, struct pt_snap *s)
{
	memset(s, 0, sizeof(*s));
	s->ret = mmtu_pmo_info(fd, &s->info, s->mmts, PT_MAX_MMTS);
	if (!s->ret)
		s->info.mmts = 0;	/* the pointer differs between snaps */
	return s->ret;
}

static inline bool pt_snap_eq(const struct pt_snap *a, const struct pt_snap *b)
{
	return !a->ret && !b->ret && !memcmp(a, b, sizeof(*a));
}

/*
 * pt_snap_same() - equal but for root counters, which may only have grown
 * (a rejected delegation may have raised the sender's counter: sealing
 * needs a fresh counter and a counter never goes back), and GUAs, which
 * may only have been replaced by greater (fresh) ones (after a rejected
 * transfer the sender re-encrypts the MMT it tried under a fresh GUA: the
 * rejection is not authenticated); prints what differs
 */
static inline bool pt_snap_same(const struct pt_snap *a,
				const struct pt_snap *b, const char *what)
{
	struct pt_snap x = *b;
	uint32_t i;
	bool raised = false;

	if (a->ret || b->ret)
		return false;
	for (i = 0; i < PT_MAX_MMTS; i++) {
		if (x.mmts[i].root_counter < a->mmts[i].root_counter)
			return false;
		if (x.mmts[i].root_counter != a->mmts[i].root_counter)
			raised = true;
		x.mmts[i].root_counter = a->mmts[i].root_counter;
		if (x.mmts[i].gua < a->mmts[i].gua)
			return false;
		if (x.mmts[i].gua != a->mmts[i].gua)
			printf("# %s: MMT %u re-encrypted under a fresh GUA (allowed)\n",
			       what, i);
		x.mmts[i].gua = a->mmts[i].gua;
	}
	if (raised)
		printf("# %s: root counters raised (allowed)\n", what);
	return !memcmp(a, &x, sizeof(x));
}

/* every reported MMT in @state (and read-only as @ro, if @ro >= 0) */
static inline bool pt_all_state(const struct pt_snap *s, uint32_t state, int ro)
{
	uint32_t i;

	if (s->ret || !s->info.mmt_count)
		return false;
	for (i = 0; i < s->info.mmt_count; i++) {
		if (s->mmts[i].state != state)
			return false;
		if (ro >= 0 &&
		    !!(s->mmts[i].flags & MMT_INFO_READ_ONLY) != ro)
			return false;
	}
	return true;
}

/* "VALID,VALID,INVALID" (static buffer) for messages */
static inline const char *pt_states(const struct pt_snap *s)
{
	static char buf[4][256];
	static int idx;
	char *b;
	size_t used = 0;
	uint32_t i;

	idx = (idx + 1) % 4;
	b = buf[idx];
	b[0] = 0;
	if (s->ret) {
		snprintf(b, sizeof(buf[0]), "info failed: %s",
			 pt_errname(s->ret));
		return b;
	}
	for (i = 0; i < s->info.mmt_count && used < sizeof(buf[0]) - 16; i++)
		used += snprintf(b + used, sizeof(buf[0]) - used, "%s%s%s",
				 i ? "," : "", mmtu_state_str(s->mmts[i].state),
				 s->mmts[i].flags & MMT_INFO_READ_ONLY ?
				 "(ro)" : "");
	return b;
}

/* the number of open fds (to check that a failed call made none) */
static inline int pt_count_fds(void)
{
	int n = 0, fd;

	for (fd = 0; fd < 1024; fd++)
		if (fcntl(fd, F_GETFD) >= 0)
			n++;
	return n;
}

/*
 * pt_device_works() - the device still works after a fuzz run: query, a
 * fresh one-closure PMO keyed, 4 KiB written and read back byte-exact.
 * Returns 0 or a -errno (-EIO: short or different data).
 */
static inline int pt_device_works(int dev)
{
	static const uint8_t key[16] = "after-fuzz-key!!";
	struct mmt_geometry g = { .levels = 1 };
	uint8_t w[4096], r[4096];
	struct mmt_query q;
	int fd, ret;

	memset(w, 0x3c, sizeof(w));
	ret = mmtu_query(dev, &q);
	fd = mmtu_pmo_create(dev, 4096, &g, 0, NULL);
	ret = ret ? ret : fd < 0 ? fd : 0;
	if (!ret)
		ret = mmtu_pmo_set_key(fd, key, 16, 0);
	if (!ret && mmtu_pmo_write_all(fd, w, 4096, 0) != 4096)
		ret = -EIO;
	if (!ret && (mmtu_pmo_read_all(fd, r, 4096, 0) != 4096 ||
		     memcmp(w, r, 4096)))
		ret = -EIO;
	if (fd >= 0)
		close(fd);
	return ret;
}

/*
 * pt_map_guarded() - @bytes of anonymous memory followed by a PROT_NONE
 * page, so that a buffer the kernel reads or writes past its end faults
 * (EFAULT) instead of touching other memory.  Returns NULL on failure.
 */
static inline void *pt_map_guarded(size_t bytes)
{
	uint8_t *p = mmap(NULL, bytes + 4096, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED || mprotect(p + bytes, 4096, PROT_NONE))
		return NULL;
	return p;
}

/* The parts of an io_uring the PMO tests use (raw syscalls, no liburing). */
struct pt_ring {
	int fd;
	unsigned int *sq_tail, *sq_mask, *sq_array;
	unsigned int *cq_head, *cq_tail, *cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
};

/*
 * pt_ring_init() - io_uring_setup(@entries, @flags) and map its rings
 * into @r.  Returns 0, or a -errno (@r->fd is then -1).
 */
static inline int pt_ring_init(struct pt_ring *r, unsigned int entries,
			       unsigned int flags)
{
	struct io_uring_params p;
	uint8_t *sq, *cq;
	size_t sq_len, cq_len;

	memset(&p, 0, sizeof(p));
	p.flags = flags;
	r->fd = syscall(__NR_io_uring_setup, entries, &p);
	if (r->fd < 0) {
		r->fd = -1;
		return -errno;
	}
	sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned int);
	cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	sq = mmap(NULL, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		  r->fd, IORING_OFF_SQ_RING);
	cq = mmap(NULL, cq_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		  r->fd, IORING_OFF_CQ_RING);
	r->sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe),
		       PROT_READ | PROT_WRITE, MAP_SHARED, r->fd,
		       IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || r->sqes == MAP_FAILED) {
		close(r->fd);
		r->fd = -1;
		return -ENOMEM;
	}
	r->sq_tail = (unsigned int *)(sq + p.sq_off.tail);
	r->sq_mask = (unsigned int *)(sq + p.sq_off.ring_mask);
	r->sq_array = (unsigned int *)(sq + p.sq_off.array);
	r->cq_head = (unsigned int *)(cq + p.cq_off.head);
	r->cq_tail = (unsigned int *)(cq + p.cq_off.tail);
	r->cq_mask = (unsigned int *)(cq + p.cq_off.ring_mask);
	r->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
	return 0;
}

#endif /* PMO_TEST_H */
