// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_rx_eager_test.c - suite mmt_rx_eager: an eager MMT-channel receive
 * (MMT_XFER_EAGER) with the full checks of its closures on the I/O
 * workers (module parameter io_workers, driver/mmt_conn_rx.c), over the
 * loopback fabric: a sender in the test's task (mmt_conn_do_send()), a
 * receiver in a kthread (mmt_conn_do_recv()).  Every case runs with 1
 * worker (the serial receive, the reference), 2 and 4, and expects the
 * same: the same data, the same error for the same closure, the closures
 * before it accepted, it and every later one still WAITING.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/err.h>
#include <linux/kthread.h>
#include <linux/slab.h>

#include "mmt_proto.h"

/*
 * 3 levels, arities 8, 4 and 4, 64-byte blocks: 8 KiB closures whose
 * leaf nodes only the full check reads (the middle level is the top
 * level the in-order check reads).
 */
static const u8 mmt_rxe_log_arity[MMT_MAX_LEVELS] = { 3, 2, 2 };
#define MMT_RXE_CLOSURES	12
/* the closure the attacks aim at: past the first window */
#define MMT_RXE_K		5

static const u8 mmt_rxe_key[16] = {
	0x40, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47,
	0x48, 0x49, 0x4a, 0x4b, 0x4c, 0x4d, 0x4e, 0x4f,
};

static const unsigned int mmt_rxe_workers[] = { 1, 2, 4 };

static void mmt_rxe_desc(const unsigned int *w, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "io_workers=%u", *w);
}

KUNIT_ARRAY_PARAM(mmt_rxe, mmt_rxe_workers, mmt_rxe_desc);

/**
 * struct mmt_rxe_ctx - one case's connections and PMOs
 * @a: the connecting end, which sends
 * @b: the accepting end, which receives
 * @src: keyed, every closure written with @plain
 * @dst: keyed for receiving: every MMT WAITING
 * @plain: what @src holds
 * @out: what the cases read back
 * @workers: mmt_io_workers before the case, put back after it
 */
struct mmt_rxe_ctx {
	struct mmt_conn *a;
	struct mmt_conn *b;
	struct mmt_pmo *src;
	struct mmt_pmo *dst;
	u8 *plain;
	u8 *out;
	unsigned int workers;
};

/* A receive in its own task. */
struct mmt_rxe_rx {
	struct mmt_conn *conn;
	struct mmt_pmo *pmo;
	struct mmt_xfer x;
	int err;
	struct completion done;
};

static int mmt_rxe_rx_fn(void *data)
{
	struct mmt_rxe_rx *r = data;

	mutex_lock(&r->conn->rx_mutex);
	r->err = mmt_conn_do_recv(r->conn, r->pmo, &r->x);
	mutex_unlock(&r->conn->rx_mutex);
	complete(&r->done);
	return 0;
}

static struct mmt_pmo *mmt_rxe_pmo(struct kunit *test, bool receive)
{
	struct mmt_params p;
	struct mmt_pmo *pmo;

	KUNIT_ASSERT_EQ(test, mmt_params_init(&p, 3, mmt_rxe_log_arity, 6),
			0);
	pmo = mmt_pmo_alloc(&p, MMT_RXE_CLOSURES);
	KUNIT_ASSERT_FALSE(test, IS_ERR(pmo));
	KUNIT_ASSERT_EQ(test, mmt_pmo_set_key(pmo, mmt_rxe_key, 16, receive),
			0);
	return pmo;
}

static int mmt_rxe_init(struct kunit *test)
{
	const unsigned int *workers = test->param_value;
	struct mmt_rxe_ctx *ctx;
	u64 cb;
	u32 i;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx);
	test->priv = ctx;
	ctx->workers = mmt_io_workers;
	mmt_io_workers = workers ? *workers : 1;
	KUNIT_ASSERT_EQ(test, mmt_loop_pair(&ctx->a, &ctx->b), 0);
	ctx->src = mmt_rxe_pmo(test, false);
	ctx->dst = mmt_rxe_pmo(test, true);
	ctx->plain = kunit_kzalloc(test, ctx->src->bytes, GFP_KERNEL);
	ctx->out = kunit_kzalloc(test, ctx->src->bytes, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx->plain);
	KUNIT_ASSERT_NOT_NULL(test, ctx->out);
	for (i = 0; i < ctx->src->bytes; i++)
		ctx->plain[i] = i * 13 + (i >> 11);
	cb = ctx->src->params.data_bytes;
	for (i = 0; i < ctx->src->closures; i++)
		KUNIT_ASSERT_EQ(test, mmt_write(&ctx->src->mmts[i], 0,
						ctx->plain + i * cb, cb), 0);
	return 0;
}

static void mmt_rxe_exit(struct kunit *test)
{
	struct mmt_rxe_ctx *ctx = test->priv;

	if (!ctx)
		return;
	mmt_io_workers = ctx->workers;
	if (ctx->a)
		ctx->a->fab->destroy(ctx->a);
	if (ctx->b)
		ctx->b->fab->destroy(ctx->b);
	if (ctx->src)
		mmt_pmo_free(ctx->src);
	if (ctx->dst)
		mmt_pmo_free(ctx->dst);
}

/*
 * One eager transfer of ctx->src to ctx->dst (delegation); the receive's
 * result in *@rx_err and its closure count in *@rx_closures, the send's
 * result returned.
 */
static int mmt_rxe_xfer(struct kunit *test, int *rx_err, u64 *rx_closures)
{
	struct mmt_rxe_ctx *ctx = test->priv;
	struct mmt_xfer xs = {
		.size = sizeof(xs),
		.channel = MMT_CHANNEL_MMT,
		.timeout_ms = 10000,
	};
	struct mmt_rxe_rx *r;
	struct task_struct *t;
	int err;

	r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	r->conn = ctx->b;
	r->pmo = ctx->dst;
	r->x.size = sizeof(r->x);
	r->x.channel = MMT_CHANNEL_MMT;
	r->x.flags = MMT_XFER_EAGER;
	r->x.timeout_ms = 10000;
	init_completion(&r->done);
	t = kthread_run(mmt_rxe_rx_fn, r, "mmt_rxe_rx");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	mutex_lock(&ctx->a->tx_mutex);
	err = mmt_conn_do_send(ctx->a, ctx->src, &xs);
	mutex_unlock(&ctx->a->tx_mutex);
	wait_for_completion(&r->done);
	*rx_err = r->err;
	*rx_closures = r->x.closures;
	return err;
}

/*
 * Closures [0, @k) arrived: VALID and byte-exact at the receiver; [@k,
 * end) still WAITING, and the receive's floors those of closure @k - 1.
 */
static void mmt_rxe_check_upto(struct kunit *test, u32 k)
{
	struct mmt_rxe_ctx *ctx = test->priv;
	struct mmt_pmo *dst = ctx->dst;
	u64 cb = dst->params.data_bytes;
	u32 i;

	for (i = 0; i < MMT_RXE_CLOSURES; i++)
		KUNIT_EXPECT_EQ_MSG(test, dst->mmts[i].root.state,
				    i < k ? MMT_VALID : MMT_WAITING,
				    "closure %u", i);
	for (i = 0; i < k; i++) {
		KUNIT_ASSERT_EQ(test, mmt_read(&dst->mmts[i], 0,
					       ctx->out + i * cb, cb), 0);
		KUNIT_EXPECT_EQ_MSG(test, memcmp(ctx->out + i * cb,
						 ctx->plain + i * cb, cb), 0,
				    "closure %u", i);
	}
	if (k) {
		KUNIT_EXPECT_EQ(test, dst->rx.last_gua,
				dst->mmts[k - 1].root.gua);
		KUNIT_EXPECT_EQ(test, dst->rx.last_root_counter,
				dst->mmts[k - 1].root.root_counter);
	} else {
		KUNIT_EXPECT_EQ(test, dst->rx.last_gua, 0ULL);
	}
	/* no keying stays held after the receive */
	for (i = 0; i < MMT_PMO_KEYINGS; i++)
		KUNIT_EXPECT_EQ(test, dst->rx_crypto_held[i], 0U);
}

/* Closures of an eager receive holding a keying of @pmo's cache. */
static u32 mmt_rxe_held(struct mmt_pmo *pmo)
{
	u32 i, n = 0;

	for (i = 0; i < MMT_PMO_KEYINGS; i++)
		n += pmo->rx_crypto_held[i];
	return n;
}

/* Every closure arrives byte-exact; the sender gives them all up. */
static void mmt_rxe_all(struct kunit *test)
{
	struct mmt_rxe_ctx *ctx = test->priv;
	u64 closures;
	int rx_err;
	u32 i;

	KUNIT_EXPECT_EQ(test, mmt_rxe_xfer(test, &rx_err, &closures), 0);
	KUNIT_EXPECT_EQ(test, rx_err, 0);
	KUNIT_EXPECT_EQ(test, closures, (u64)MMT_RXE_CLOSURES);
	mmt_rxe_check_upto(test, MMT_RXE_CLOSURES);
	for (i = 0; i < MMT_RXE_CLOSURES; i++)
		KUNIT_EXPECT_EQ(test, ctx->src->mmts[i].root.state,
				MMT_INVALID);
	/* the new owner writes */
	KUNIT_EXPECT_EQ(test, mmt_write(&ctx->dst->mmts[7], 9, "z", 1), 0);
}

/*
 * A refusal of closure @k with @want: the receive and the send fail with
 * it, closures before @k are accepted, @k and later stay WAITING at the
 * receiver and VALID (not given up) at the sender.
 */
static void mmt_rxe_refused(struct kunit *test, u32 k, int want)
{
	struct mmt_rxe_ctx *ctx = test->priv;
	u64 closures;
	int rx_err, tx_err;
	u32 i;

	tx_err = mmt_rxe_xfer(test, &rx_err, &closures);
	KUNIT_EXPECT_EQ(test, rx_err, want);
	KUNIT_EXPECT_EQ(test, tx_err, want);
	KUNIT_EXPECT_EQ(test, closures, (u64)k);
	mmt_rxe_check_upto(test, k);
	for (i = k; i < MMT_RXE_CLOSURES; i++)
		KUNIT_EXPECT_EQ_MSG(test, ctx->src->mmts[i].root.state,
				    MMT_VALID, "closure %u", i);
}

/* A data MAC of closure k changed on the way: -EBADMSG at k. */
static void mmt_rxe_bad_mac(struct kunit *test)
{
	struct mmt_rxe_ctx *ctx = test->priv;

	ctx->src->mmts[MMT_RXE_K].macs[8 * 77 + 3] ^= 0x10;
	mmt_rxe_refused(test, MMT_RXE_K, -EBADMSG);
}

/* A data byte of closure k: only the full check sees it. */
static void mmt_rxe_bad_data(struct kunit *test)
{
	struct mmt_rxe_ctx *ctx = test->priv;

	ctx->src->mmts[MMT_RXE_K].data[64 * 100 + 5] ^= 0x01;
	mmt_rxe_refused(test, MMT_RXE_K, -EBADMSG);
}

/* A leaf node of closure k (below the top level): -EBADMSG at k. */
static void mmt_rxe_bad_leaf(struct kunit *test)
{
	struct mmt_rxe_ctx *ctx = test->priv;

	ctx->src->mmts[MMT_RXE_K].nodes[3] ^= 0x01;
	mmt_rxe_refused(test, MMT_RXE_K, -EBADMSG);
}

/* The last closure, whose refusal comes after all others are pending. */
static void mmt_rxe_bad_last(struct kunit *test)
{
	struct mmt_rxe_ctx *ctx = test->priv;

	ctx->src->mmts[MMT_RXE_CLOSURES - 1].macs[0] ^= 0x80;
	mmt_rxe_refused(test, MMT_RXE_CLOSURES - 1, -EBADMSG);
}

/* Two bad closures: the first one's error, nothing from the second on. */
static void mmt_rxe_bad_two(struct kunit *test)
{
	struct mmt_rxe_ctx *ctx = test->priv;

	ctx->src->mmts[MMT_RXE_K + 1].macs[8] ^= 0x01;
	ctx->src->mmts[MMT_RXE_K].nodes[0] ^= 0x01;
	mmt_rxe_refused(test, MMT_RXE_K, -EBADMSG);
}

/*
 * Closure k - 1 under a GUA above every later closure's (re-encrypted at
 * the sender before the transfer): the sender moves each later closure
 * to a fresh GUA above it before sealing, so the reorder rule, which the
 * receive checks for k against k - 1 while k - 1 may still be in its full
 * check, passes for all of them and every closure arrives.
 */
static void mmt_rxe_regua(struct kunit *test)
{
	struct mmt_rxe_ctx *ctx = test->priv;
	struct mmt *m = &ctx->src->mmts[MMT_RXE_K - 1];
	u64 closures, gua;
	int rx_err;

	KUNIT_ASSERT_EQ(test, mmt_gua_alloc(&gua), 0);
	KUNIT_ASSERT_EQ(test, mmt_regua(m, ctx->src->crypto, gua), 0);
	KUNIT_EXPECT_EQ(test, mmt_rxe_xfer(test, &rx_err, &closures), 0);
	KUNIT_EXPECT_EQ(test, rx_err, 0);
	KUNIT_EXPECT_EQ(test, closures, (u64)MMT_RXE_CLOSURES);
	mmt_rxe_check_upto(test, MMT_RXE_CLOSURES);
	KUNIT_EXPECT_GT(test, ctx->dst->mmts[MMT_RXE_K].root.gua, gua);
}

/*
 * The in-order check of closure 1 runs while closure 0 is not yet
 * committed: its replay and reorder rules compare with closure 0 as if
 * accepted (mmt_conn_rx_begin()'s @prev), so a sender that sealed 1
 * before 0 is refused at 1 as the serial receive refuses it (-ESTALE),
 * though against the receive's committed state alone it would pass.
 */
static void mmt_rxe_chain(struct kunit *test)
{
	struct mmt_rxe_ctx *ctx = test->priv;
	const struct mmt_params *p = &ctx->src->params;
	size_t region = p->data_bytes + p->macs_bytes + p->nodes_bytes;
	static const u8 nonce[MMT_RX_NONCE_BYTES] = { 0x31, 0x32 };
	u8 *head0, *head1;
	struct mmt_closure_eager *pc0, *pc1;
	const u64 id = 0x5151ull;
	bool plain;
	u32 i;

	head0 = kunit_kzalloc(test, MMT_CONN_HEAD_BYTES, GFP_KERNEL);
	head1 = kunit_kzalloc(test, MMT_CONN_HEAD_BYTES, GFP_KERNEL);
	pc0 = kunit_kzalloc(test, sizeof(*pc0), GFP_KERNEL);
	pc1 = kunit_kzalloc(test, sizeof(*pc1), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, head0);
	KUNIT_ASSERT_NOT_NULL(test, head1);
	KUNIT_ASSERT_NOT_NULL(test, pc0);
	KUNIT_ASSERT_NOT_NULL(test, pc1);
	KUNIT_ASSERT_EQ(test, mmt_conn_rx_prepare(ctx->dst, MMT_CHANNEL_MMT,
						  id, &plain), 0);
	/* sealed 1, then 0: 0 has the higher root counter (and GUA) */
	KUNIT_ASSERT_EQ(test, mmt_conn_tx_build(ctx->src, id, 3, nonce,
						mmt_node_id(), 1, false,
						head1), 0);
	KUNIT_ASSERT_EQ(test, mmt_conn_tx_build(ctx->src, id, 3, nonce,
						mmt_node_id(), 0, false,
						head0), 0);
	for (i = 0; i < 2; i++)
		memcpy(ctx->dst->mem + (size_t)i * ctx->dst->stride,
		       ctx->src->mem + (size_t)i * ctx->src->stride, region);

	KUNIT_ASSERT_EQ(test, mmt_conn_rx_begin(ctx->dst, 0, 3, nonce, head0,
						mmt_node_id(), NULL, pc0), 0);
	/* the sender's keying: a context of the cache, held while pending */
	KUNIT_EXPECT_PTR_NE(test, pc0->c, ctx->dst->crypto);
	KUNIT_EXPECT_EQ(test, mmt_rxe_held(ctx->dst), 1U);
	/* against the committed state only, 1 would pass its rules ... */
	KUNIT_ASSERT_EQ(test, mmt_conn_rx_begin(ctx->dst, 1, 3, nonce, head1,
						mmt_node_id(), NULL, pc1), 0);
	KUNIT_EXPECT_EQ(test, mmt_rxe_held(ctx->dst), 2U);
	KUNIT_EXPECT_EQ(test, mmt_conn_rx_end(ctx->dst, 1, pc1, -ECANCELED),
			-ECANCELED);
	/* an unjudged closure's hold goes with the receive */
	KUNIT_EXPECT_EQ(test, mmt_rxe_held(ctx->dst), 2U);
	/* ... but after 0 it is a replay, as the serial receive finds */
	KUNIT_EXPECT_EQ(test, mmt_conn_rx_begin(ctx->dst, 1, 3, nonce, head1,
						mmt_node_id(), pc0, pc1),
			-ESTALE);
	KUNIT_EXPECT_EQ(test, ctx->dst->mmts[1].root.state, MMT_WAITING);
	/* 0's commit: its MMT points at the context, no longer held */
	KUNIT_EXPECT_EQ(test, mmt_conn_rx_end(ctx->dst, 0, pc0, 0), 0);
	KUNIT_EXPECT_EQ(test, ctx->dst->mmts[0].root.state, MMT_VALID);
	KUNIT_EXPECT_EQ(test, mmt_rxe_held(ctx->dst), 1U);
	/* the serial receive agrees: 1 after 0 is -ESTALE */
	KUNIT_EXPECT_EQ(test, mmt_conn_rx_check(ctx->dst, 1, 3, nonce, head1,
						mmt_node_id(), true),
			-ESTALE);
	KUNIT_EXPECT_EQ(test, ctx->dst->mmts[1].root.state, MMT_WAITING);
	mmt_conn_rx_finish(ctx->dst, plain);
	KUNIT_EXPECT_EQ(test, mmt_rxe_held(ctx->dst), 0U);
}

/*
 * The PMO invalidated between a closure's begin and its commit (where
 * its full check runs; here the check runs after the invalidation, not
 * beside it): its verdict commits nothing (-EPERM, as
 * mmt_conn_rx_check() after the invalidation), and nothing freed with
 * the key is touched.
 */
static void mmt_rxe_lost(struct kunit *test)
{
	struct mmt_rxe_ctx *ctx = test->priv;
	const struct mmt_params *p = &ctx->src->params;
	size_t region = p->data_bytes + p->macs_bytes + p->nodes_bytes;
	static const u8 nonce[MMT_RX_NONCE_BYTES] = { 0x51 };
	struct mmt_closure_eager *pc;
	const u64 id = 0x7171ull;
	bool plain;
	u8 *head;

	head = kunit_kzalloc(test, MMT_CONN_HEAD_BYTES, GFP_KERNEL);
	pc = kunit_kzalloc(test, sizeof(*pc), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, head);
	KUNIT_ASSERT_NOT_NULL(test, pc);
	KUNIT_ASSERT_EQ(test, mmt_conn_rx_prepare(ctx->dst, MMT_CHANNEL_MMT,
						  id, &plain), 0);
	KUNIT_ASSERT_EQ(test, mmt_conn_tx_build(ctx->src, id, 6, nonce,
						mmt_node_id(), 0, false,
						head), 0);
	memcpy(ctx->dst->mem, ctx->src->mem, region);
	KUNIT_ASSERT_EQ(test, mmt_conn_rx_begin(ctx->dst, 0, 6, nonce, head,
						mmt_node_id(), NULL, pc), 0);
	KUNIT_ASSERT_EQ(test, mmt_pmo_wipe(ctx->dst), 0);
	KUNIT_EXPECT_TRUE(test, ctx->dst->rx_lost);
	KUNIT_EXPECT_EQ(test, mmt_conn_rx_end(ctx->dst, 0, pc, 0), -EPERM);
	KUNIT_EXPECT_EQ(test, ctx->dst->mmts[0].root.state, MMT_INVALID);
	KUNIT_EXPECT_EQ(test, ctx->dst->rx.last_gua, 0ULL);
	/* and the next closure is refused before any rule */
	KUNIT_EXPECT_EQ(test, mmt_conn_rx_begin(ctx->dst, 1, 6, nonce, head,
						mmt_node_id(), NULL, pc),
			-EPERM);
	mmt_conn_rx_finish(ctx->dst, plain);
}

/*
 * The full check refuses a closure whose data changed, and a context of
 * another keying outright; a refused closure commits nothing.
 */
static void mmt_rxe_verify(struct kunit *test)
{
	struct mmt_rxe_ctx *ctx = test->priv;
	const struct mmt_params *p = &ctx->src->params;
	size_t region = p->data_bytes + p->macs_bytes + p->nodes_bytes;
	static const u8 nonce[MMT_RX_NONCE_BYTES] = { 0x41 };
	static const u8 other[MMT_KSALT_BYTES] = { 0x99 };
	struct mmt_closure_eager *pc;
	struct mmt_crypto *c, *o;
	const u64 id = 0x6161ull;
	u8 *head, *scratch;
	bool plain;

	head = kunit_kzalloc(test, MMT_CONN_HEAD_BYTES, GFP_KERNEL);
	pc = kunit_kzalloc(test, sizeof(*pc), GFP_KERNEL);
	scratch = kunit_kzalloc(test, mmt_scratch_bytes(p), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, head);
	KUNIT_ASSERT_NOT_NULL(test, pc);
	KUNIT_ASSERT_NOT_NULL(test, scratch);
	KUNIT_ASSERT_EQ(test, mmt_conn_rx_prepare(ctx->dst, MMT_CHANNEL_MMT,
						  id, &plain), 0);
	KUNIT_ASSERT_EQ(test, mmt_conn_tx_build(ctx->src, id, 4, nonce,
						mmt_node_id(), 0, false,
						head), 0);
	memcpy(ctx->dst->mem, ctx->src->mem, region);
	KUNIT_ASSERT_EQ(test, mmt_conn_rx_begin(ctx->dst, 0, 4, nonce, head,
						mmt_node_id(), NULL, pc), 0);
	c = mmt_crypto_alloc_root(ctx->dst->key_root, pc->ksalt);
	o = mmt_crypto_alloc_root(ctx->dst->key_root, other);
	KUNIT_ASSERT_FALSE(test, IS_ERR(c));
	KUNIT_ASSERT_FALSE(test, IS_ERR(o));
	KUNIT_EXPECT_EQ(test, mmt_closure_eager_verify(pc, c, scratch), 0);
	KUNIT_EXPECT_EQ(test, mmt_closure_eager_verify(pc, o, scratch),
			-EINVAL);
	ctx->dst->mmts[0].data[4000] ^= 0x04;
	KUNIT_EXPECT_EQ(test, mmt_closure_eager_verify(pc, c, scratch),
			-EBADMSG);
	KUNIT_EXPECT_EQ(test, mmt_conn_rx_end(ctx->dst, 0, pc, -EBADMSG),
			-EBADMSG);
	KUNIT_EXPECT_EQ(test, ctx->dst->mmts[0].root.state, MMT_WAITING);
	KUNIT_EXPECT_EQ(test, ctx->dst->rx.last_gua, 0ULL);
	mmt_crypto_free(c);
	mmt_crypto_free(o);
	mmt_conn_rx_finish(ctx->dst, plain);
}

static struct kunit_case mmt_rxe_cases[] = {
	KUNIT_CASE(mmt_rxe_chain),
	KUNIT_CASE(mmt_rxe_verify),
	KUNIT_CASE(mmt_rxe_lost),
	KUNIT_CASE_PARAM(mmt_rxe_all, mmt_rxe_gen_params),
	KUNIT_CASE_PARAM(mmt_rxe_bad_mac, mmt_rxe_gen_params),
	KUNIT_CASE_PARAM(mmt_rxe_bad_data, mmt_rxe_gen_params),
	KUNIT_CASE_PARAM(mmt_rxe_bad_leaf, mmt_rxe_gen_params),
	KUNIT_CASE_PARAM(mmt_rxe_bad_last, mmt_rxe_gen_params),
	KUNIT_CASE_PARAM(mmt_rxe_bad_two, mmt_rxe_gen_params),
	KUNIT_CASE_PARAM(mmt_rxe_regua, mmt_rxe_gen_params),
	{}
};

static struct kunit_suite mmt_rxe_suite = {
	.name = "mmt_rx_eager",
	.init = mmt_rxe_init,
	.exit = mmt_rxe_exit,
	.test_cases = mmt_rxe_cases,
};

kunit_test_suite(mmt_rxe_suite);
