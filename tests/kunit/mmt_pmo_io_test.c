// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_pmo_io_test.c - suite mmt_pmo_io: pread/pwrite of many closures
 * with the closures spread over the I/O workers (module parameter
 * io_workers), through the driver's own path (driver/mmt_pmo.c,
 * mmt_pmo_kread() and mmt_pmo_kwrite()).  With 1, 2 and 4 workers the
 * same writes from the same state must leave the same ciphertext, MACs,
 * nodes and roots, byte for byte, and the same errors and counts: the
 * serial path is the reference.  KUnit only: it needs the driver.
 */
#include <kunit/test.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "mmt_internal.h"
#include "mmt_transport.h"

/* 2 levels, arities 64 and 32, 64-byte blocks: 128 KiB closures (2 steps). */
static const u8 mmt_pio_log_arity[MMT_MAX_LEVELS] = { 6, 5 };
#define MMT_PIO_CLOSURES	6
/* The range: from inside closure 0 to inside the last one. */
#define MMT_PIO_HEAD		1000
#define MMT_PIO_TAIL		777

static const u8 mmt_pio_key[16] = {
	0x10, 0x21, 0x32, 0x43, 0x54, 0x65, 0x76, 0x87,
	0x98, 0xa9, 0xba, 0xcb, 0xdc, 0xed, 0xfe, 0x0f,
};

/**
 * struct mmt_pio_ctx - one case's PMO and the state it starts from
 * @pmo: keyed, every closure formatted
 * @mem0: @pmo's backing memory right after keying
 * @roots0: its roots then, one per closure
 * @mem1: the memory after the serial write (the reference)
 * @roots1: the roots after it
 * @plain: what the cases write, @pmo->bytes
 * @out: what they read back
 * @workers: mmt_io_workers before the case, put back after it
 */
struct mmt_pio_ctx {
	struct mmt_pmo *pmo;
	u8 *mem0;
	struct mmt_root *roots0;
	u8 *mem1;
	struct mmt_root *roots1;
	u8 *plain;
	u8 *out;
	unsigned int workers;
};

static int mmt_pio_init(struct kunit *test)
{
	struct mmt_pio_ctx *x;
	struct mmt_params p;
	u32 i;

	x = kunit_kzalloc(test, sizeof(*x), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, x);
	test->priv = x;
	x->workers = mmt_io_workers;
	KUNIT_ASSERT_EQ(test, mmt_params_init(&p, 2, mmt_pio_log_arity, 6), 0);
	x->pmo = mmt_pmo_alloc(&p, MMT_PIO_CLOSURES);
	KUNIT_ASSERT_FALSE(test, IS_ERR(x->pmo));
	KUNIT_ASSERT_EQ(test, mmt_pmo_set_key(x->pmo, mmt_pio_key, 16, false),
			0);
	x->mem0 = vmalloc(x->pmo->mem_bytes);
	x->mem1 = vmalloc(x->pmo->mem_bytes);
	x->plain = vmalloc(x->pmo->bytes);
	x->out = vmalloc(x->pmo->bytes);
	x->roots0 = kunit_kcalloc(test, MMT_PIO_CLOSURES, sizeof(*x->roots0),
				  GFP_KERNEL);
	x->roots1 = kunit_kcalloc(test, MMT_PIO_CLOSURES, sizeof(*x->roots1),
				  GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, x->mem0);
	KUNIT_ASSERT_NOT_NULL(test, x->mem1);
	KUNIT_ASSERT_NOT_NULL(test, x->plain);
	KUNIT_ASSERT_NOT_NULL(test, x->out);
	KUNIT_ASSERT_NOT_NULL(test, x->roots0);
	KUNIT_ASSERT_NOT_NULL(test, x->roots1);
	for (i = 0; i < x->pmo->bytes; i++)
		x->plain[i] = i * 13 + (i >> 9) + 1;
	memcpy(x->mem0, x->pmo->mem, x->pmo->mem_bytes);
	for (i = 0; i < MMT_PIO_CLOSURES; i++)
		x->roots0[i] = x->pmo->mmts[i].root;
	return 0;
}

static void mmt_pio_exit(struct kunit *test)
{
	struct mmt_pio_ctx *x = test->priv;

	if (!x)
		return;
	mmt_io_workers = x->workers;
	if (!IS_ERR_OR_NULL(x->pmo))
		mmt_pmo_free(x->pmo);
	vfree(x->mem0);
	vfree(x->mem1);
	vfree(x->plain);
	vfree(x->out);
}

/* Back to the state right after keying: same key, GUAs and counters. */
static void mmt_pio_restore(struct mmt_pio_ctx *x)
{
	u32 i;

	memcpy(x->pmo->mem, x->mem0, x->pmo->mem_bytes);
	for (i = 0; i < MMT_PIO_CLOSURES; i++)
		x->pmo->mmts[i].root = x->roots0[i];
}

static bool mmt_pio_root_eq(const struct mmt_root *a, const struct mmt_root *b)
{
	return a->state == b->state && a->read_only == b->read_only &&
	       a->regua_due == b->regua_due && a->gua == b->gua &&
	       a->root_counter == b->root_counter &&
	       !memcmp(&a->top, &b->top, sizeof(a->top));
}

static u64 mmt_pio_len(struct mmt_pio_ctx *x)
{
	return x->pmo->bytes - MMT_PIO_HEAD - MMT_PIO_TAIL;
}

/*
 * Write the range with @workers; the whole PMO's memory and roots must be
 * the serial write's (@x->mem1, @x->roots1), and it must read back with
 * 1, 2 and 4 workers.
 */
static void mmt_pio_write_with(struct kunit *test, struct mmt_pio_ctx *x,
			       unsigned int workers)
{
	struct mmt_pmo *pmo = x->pmo;
	u64 len = mmt_pio_len(x), batches = pmo->io_batches;
	static const unsigned int readers[] = { 1, 2, 4 };
	u32 i;

	mmt_pio_restore(x);
	mmt_io_workers = workers;
	KUNIT_ASSERT_EQ(test, mmt_pmo_kwrite(pmo, MMT_PIO_HEAD,
					     x->plain + MMT_PIO_HEAD, len,
					     false), (int)len);
	/* the parallel path ran, or the serial one did for 1 worker */
	if (workers > 1)
		KUNIT_EXPECT_GT(test, pmo->io_batches, batches);
	else
		KUNIT_EXPECT_EQ(test, pmo->io_batches, batches);
	if (workers == 1) {
		memcpy(x->mem1, pmo->mem, pmo->mem_bytes);
		for (i = 0; i < MMT_PIO_CLOSURES; i++)
			x->roots1[i] = pmo->mmts[i].root;
	}
	KUNIT_EXPECT_EQ_MSG(test, memcmp(pmo->mem, x->mem1, pmo->mem_bytes),
			    0, "ciphertext, MACs or nodes differ with %u workers",
			    workers);
	for (i = 0; i < MMT_PIO_CLOSURES; i++)
		KUNIT_EXPECT_TRUE_MSG(test,
				      mmt_pio_root_eq(&pmo->mmts[i].root,
						      &x->roots1[i]),
				      "root %u differs with %u workers", i,
				      workers);
	for (i = 0; i < ARRAY_SIZE(readers); i++) {
		mmt_io_workers = readers[i];
		memset(x->out, 0, pmo->bytes);
		KUNIT_EXPECT_EQ(test, mmt_pmo_kread(pmo, MMT_PIO_HEAD,
						    x->out, len), (ssize_t)len);
		KUNIT_EXPECT_EQ_MSG(test, memcmp(x->out, x->plain + MMT_PIO_HEAD,
						 len), 0,
				    "written with %u, read with %u workers",
				    workers, readers[i]);
	}
	/* the untouched head and tail still read as zeros */
	KUNIT_EXPECT_EQ(test, mmt_pmo_kread(pmo, 0, x->out, pmo->bytes),
			(ssize_t)pmo->bytes);
	KUNIT_EXPECT_PTR_EQ(test, memchr_inv(x->out, 0, MMT_PIO_HEAD), NULL);
	KUNIT_EXPECT_PTR_EQ(test, memchr_inv(x->out + pmo->bytes - MMT_PIO_TAIL,
					     0, MMT_PIO_TAIL), NULL);
}

/* 1, 2 and 4 workers: the same bytes everywhere, read back with each. */
static void mmt_pio_same_bytes(struct kunit *test)
{
	struct mmt_pio_ctx *x = test->priv;

	mmt_pio_write_with(test, x, 1);
	mmt_pio_write_with(test, x, 2);
	mmt_pio_write_with(test, x, 4);
	/* more workers than closures in the range, and a 2-closure range */
	mmt_pio_write_with(test, x, 16);
	mmt_io_workers = 4;
	KUNIT_EXPECT_EQ(test, mmt_pmo_kwrite(x->pmo, x->pmo->params.data_bytes
					     - 5, "0123456789", 10, false),
			10);
	KUNIT_EXPECT_EQ(test, mmt_pmo_kread(x->pmo, x->pmo->params.data_bytes
					    - 5, x->out, 10), 10);
	KUNIT_EXPECT_EQ(test, memcmp(x->out, "0123456789", 10), 0);
}

static const unsigned int mmt_pio_workers[] = { 1, 4 };

static void mmt_pio_workers_desc(const unsigned int *w, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%u workers", *w);
}

KUNIT_ARRAY_PARAM(mmt_pio_workers, mmt_pio_workers, mmt_pio_workers_desc);

/*
 * A read over a block corrupted in a middle closure returns exactly the
 * good bytes before that block, although the closures after it read
 * fine on other workers; the next read fails with EBADMSG.
 */
static void mmt_pio_read_corrupt(struct kunit *test)
{
	struct mmt_pio_ctx *x = test->priv;
	unsigned int workers = *(const unsigned int *)test->param_value;
	struct mmt_pmo *pmo = x->pmo;
	u64 cb = pmo->params.data_bytes, len = mmt_pio_len(x);
	u64 bad = 3 * cb + 5 * 64 + 3;	/* block 5 of closure 3 */
	u64 good = (bad & ~63ull) - MMT_PIO_HEAD;
	u64 batches = pmo->io_batches;

	mmt_io_workers = 1;
	KUNIT_ASSERT_EQ(test, mmt_pmo_kwrite(pmo, MMT_PIO_HEAD,
					     x->plain + MMT_PIO_HEAD, len,
					     false), (int)len);
	pmo->mmts[3].data[bad - 3 * cb] ^= 0x40;
	mmt_io_workers = workers;
	memset(x->out, 0, pmo->bytes);
	KUNIT_EXPECT_EQ(test, mmt_pmo_kread(pmo, MMT_PIO_HEAD, x->out, len),
			(ssize_t)good);
	KUNIT_EXPECT_EQ(test, memcmp(x->out, x->plain + MMT_PIO_HEAD, good),
			0);
	/* nothing after the good bytes was handed out */
	KUNIT_EXPECT_PTR_EQ(test, memchr_inv(x->out + good, 0, len - good),
			    NULL);
	KUNIT_EXPECT_EQ(test, mmt_pmo_kread(pmo, MMT_PIO_HEAD + good, x->out,
					    len - good), -EBADMSG);
	/* a node of closure 1 too: the read stops at closure 1 */
	pmo->mmts[1].nodes[0] ^= 1;
	KUNIT_EXPECT_EQ(test, mmt_pmo_kread(pmo, MMT_PIO_HEAD, x->out, len),
			(ssize_t)(cb - MMT_PIO_HEAD));
	KUNIT_EXPECT_EQ(test, mmt_pmo_kread(pmo, cb, x->out, len), -EBADMSG);
	/* the closures after the bad ones read fine */
	KUNIT_EXPECT_EQ(test, mmt_pmo_kread(pmo, 4 * cb, x->out, 2 * cb -
					    MMT_PIO_TAIL),
			(ssize_t)(2 * cb - MMT_PIO_TAIL));
	KUNIT_EXPECT_EQ(test, memcmp(x->out, x->plain + 4 * cb,
				     2 * cb - MMT_PIO_TAIL), 0);
	if (workers > 1)
		KUNIT_EXPECT_GT(test, pmo->io_batches, batches);
}

/*
 * Writes that fail in a middle closure return the bytes before it.  A
 * closure refused at once (read-only) stops the write before any later
 * closure is touched, with any number of workers; a path node that fails
 * verification leaves its closure unchanged and every later one either
 * untouched or written whole.
 */
static void mmt_pio_write_errors(struct kunit *test)
{
	struct mmt_pio_ctx *x = test->priv;
	unsigned int workers = *(const unsigned int *)test->param_value;
	struct mmt_pmo *pmo = x->pmo;
	u64 cb = pmo->params.data_bytes, len = mmt_pio_len(x);
	size_t stride = pmo->stride;
	u32 i;

	mmt_io_workers = workers;
	/* read-only closure 2: closures 2.. untouched */
	pmo->mmts[2].root.read_only = true;
	KUNIT_EXPECT_EQ(test, mmt_pmo_kwrite(pmo, MMT_PIO_HEAD,
					     x->plain + MMT_PIO_HEAD, len,
					     false), (int)(2 * cb - MMT_PIO_HEAD));
	KUNIT_EXPECT_EQ(test, memcmp(pmo->mem + 2 * stride, x->mem0 + 2 * stride,
				     pmo->mem_bytes - 2 * stride), 0);
	KUNIT_EXPECT_EQ(test, pmo->mmts[2].root.root_counter,
			x->roots0[2].root_counter);
	for (i = 3; i < MMT_PIO_CLOSURES; i++)
		KUNIT_EXPECT_TRUE(test, mmt_pio_root_eq(&pmo->mmts[i].root,
							&x->roots0[i]));
	KUNIT_EXPECT_EQ(test, mmt_pmo_kwrite(pmo, 2 * cb, "w", 1, false),
			-EPERM);
	pmo->mmts[2].root.read_only = false;
	KUNIT_EXPECT_EQ(test, mmt_pmo_kread(pmo, MMT_PIO_HEAD, x->out,
					    2 * cb - MMT_PIO_HEAD),
			(ssize_t)(2 * cb - MMT_PIO_HEAD));
	KUNIT_EXPECT_EQ(test, memcmp(x->out, x->plain + MMT_PIO_HEAD,
				     2 * cb - MMT_PIO_HEAD), 0);

	/*
	 * A corrupted node of closure 1 (leaf 0: the first step fails):
	 * EBADMSG there, its memory and root unchanged, and closures 2..5
	 * untouched although, with 4 workers, 2 and 3 were in its batch.
	 */
	mmt_pio_restore(x);
	pmo->mmts[1].nodes[0] ^= 1;
	memcpy(x->mem1, pmo->mem, pmo->mem_bytes);
	KUNIT_EXPECT_EQ(test, mmt_pmo_kwrite(pmo, MMT_PIO_HEAD,
					     x->plain + MMT_PIO_HEAD, len,
					     false), (int)(cb - MMT_PIO_HEAD));
	KUNIT_EXPECT_EQ(test, mmt_pmo_kwrite(pmo, cb, x->plain + cb, 2 * cb,
					     false), -EBADMSG);
	KUNIT_EXPECT_EQ(test, memcmp(pmo->mem + stride, x->mem1 + stride,
				     stride), 0);
	KUNIT_EXPECT_TRUE(test, mmt_pio_root_eq(&pmo->mmts[1].root,
						&x->roots0[1]));
	KUNIT_EXPECT_EQ(test, mmt_pmo_kread(pmo, MMT_PIO_HEAD, x->out,
					    cb - MMT_PIO_HEAD),
			(ssize_t)(cb - MMT_PIO_HEAD));
	KUNIT_EXPECT_EQ(test, memcmp(x->out, x->plain + MMT_PIO_HEAD,
				     cb - MMT_PIO_HEAD), 0);
	KUNIT_EXPECT_EQ(test, memcmp(pmo->mem + 2 * stride, x->mem0 + 2 * stride,
				     pmo->mem_bytes - 2 * stride), 0);
	for (i = 2; i < MMT_PIO_CLOSURES; i++)
		KUNIT_EXPECT_TRUE(test, mmt_pio_root_eq(&pmo->mmts[i].root,
							&x->roots0[i]));
	KUNIT_EXPECT_EQ(test, mmt_pmo_kread(pmo, 2 * cb, x->out, 2 * cb),
			(ssize_t)(2 * cb));
	KUNIT_EXPECT_PTR_EQ(test, memchr_inv(x->out, 0, 2 * cb), NULL);

	/*
	 * A corrupted node in the second step of closure 1: its first step
	 * is written, then EBADMSG; closures 2.. untouched.
	 */
	mmt_pio_restore(x);
	pmo->mmts[1].nodes[pmo->params.node_size * 16] ^= 1;
	KUNIT_EXPECT_EQ(test, mmt_pmo_kwrite(pmo, MMT_PIO_HEAD,
					     x->plain + MMT_PIO_HEAD, len,
					     false),
			(int)(cb + 64 * 1024 - MMT_PIO_HEAD));
	KUNIT_EXPECT_EQ(test, memcmp(pmo->mem + 2 * stride, x->mem0 + 2 * stride,
				     pmo->mem_bytes - 2 * stride), 0);
	KUNIT_EXPECT_EQ(test, mmt_pmo_kread(pmo, MMT_PIO_HEAD, x->out,
					    cb + 64 * 1024 - MMT_PIO_HEAD),
			(ssize_t)(cb + 64 * 1024 - MMT_PIO_HEAD));
	KUNIT_EXPECT_EQ(test, memcmp(x->out, x->plain + MMT_PIO_HEAD,
				     cb + 64 * 1024 - MMT_PIO_HEAD), 0);
}

/*
 * A closure due for a fresh GUA in the middle of a parallel write is
 * re-encrypted first (by the caller) and written; closures received
 * under another keying (their sender's salt) are read and written by the
 * workers with contexts of that keying.
 */
static void mmt_pio_regua_received(struct kunit *test)
{
	struct mmt_pio_ctx *x = test->priv;
	struct mmt_pmo *pmo = x->pmo, *dst;
	u64 len = mmt_pio_len(x), batches, sent = 0;
	struct mmt_params p;
	u32 i;

	mmt_io_workers = 4;
	pmo->mmts[2].root.regua_due = true;
	KUNIT_EXPECT_EQ(test, mmt_pmo_kwrite(pmo, MMT_PIO_HEAD,
					     x->plain + MMT_PIO_HEAD, len,
					     false), (int)len);
	KUNIT_EXPECT_FALSE(test, pmo->mmts[2].root.regua_due);
	KUNIT_EXPECT_NE(test, pmo->mmts[2].root.gua, x->roots0[2].gua);
	mmt_io_workers = 1;
	KUNIT_EXPECT_EQ(test, mmt_pmo_kread(pmo, MMT_PIO_HEAD, x->out, len),
			(ssize_t)len);
	KUNIT_EXPECT_EQ(test, memcmp(x->out, x->plain + MMT_PIO_HEAD, len), 0);

	KUNIT_ASSERT_EQ(test, mmt_params_init(&p, 2, mmt_pio_log_arity, 6), 0);
	dst = mmt_pmo_alloc(&p, MMT_PIO_CLOSURES);
	KUNIT_ASSERT_FALSE(test, IS_ERR(dst));
	KUNIT_ASSERT_EQ(test, mmt_pmo_set_key(dst, mmt_pio_key, 16, true), 0);
	KUNIT_ASSERT_EQ(test, mmt_delegate_loopback(pmo, dst, false, false,
						    &sent), 0);
	KUNIT_EXPECT_EQ(test, sent, (u64)MMT_PIO_CLOSURES);
	for (i = 0; i < MMT_PIO_CLOSURES; i++)
		KUNIT_EXPECT_PTR_NE(test, dst->mmts[i].crypto, dst->crypto);
	batches = dst->io_batches;
	mmt_io_workers = 4;
	memset(x->out, 0, pmo->bytes);
	KUNIT_EXPECT_EQ(test, mmt_pmo_kread(dst, MMT_PIO_HEAD, x->out, len),
			(ssize_t)len);
	KUNIT_EXPECT_EQ(test, memcmp(x->out, x->plain + MMT_PIO_HEAD, len), 0);
	/* other bytes written by 4 workers, read back by 1 */
	for (i = 0; i < len; i++)
		x->out[i] = ~x->plain[MMT_PIO_HEAD + i];
	KUNIT_EXPECT_EQ(test, mmt_pmo_kwrite(dst, MMT_PIO_HEAD, x->out, len,
					     false), (int)len);
	KUNIT_EXPECT_GT(test, dst->io_batches, batches);
	mmt_io_workers = 1;
	KUNIT_EXPECT_EQ(test, mmt_pmo_kread(dst, MMT_PIO_HEAD, x->plain, len),
			(ssize_t)len);
	KUNIT_EXPECT_EQ(test, memcmp(x->out, x->plain, len), 0);
	mmt_pmo_free(dst);
}

static struct kunit_case mmt_pio_cases[] = {
	KUNIT_CASE(mmt_pio_same_bytes),
	KUNIT_CASE_PARAM(mmt_pio_read_corrupt, mmt_pio_workers_gen_params),
	KUNIT_CASE_PARAM(mmt_pio_write_errors, mmt_pio_workers_gen_params),
	KUNIT_CASE(mmt_pio_regua_received),
	{}
};

static struct kunit_suite mmt_pio_suite = {
	.name = "mmt_pmo_io",
	.init = mmt_pio_init,
	.exit = mmt_pio_exit,
	.test_cases = mmt_pio_cases,
};

kunit_test_suites(&mmt_pio_suite);
