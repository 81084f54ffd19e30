// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_loop_test.c - suite mmt_loop: the connection protocol
 * (driver/mmt_proto.h) run unchanged over the loopback fabric
 * (driver/mmt_fabric_loop.c) between two connections of one node: a
 * sender in the test's task (mmt_conn_do_send(), MMT_IOC_SEND's code), a
 * receiver in a kthread (mmt_conn_do_recv(), MMT_IOC_RECV's), and what
 * the fabric does with a write to an area the receiver did not grant.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/err.h>
#include <linux/kthread.h>
#include <linux/slab.h>

#include "mmt_proto.h"

/* 2 levels, arities 8 and 4, 64-byte blocks: 2 KiB closures. */
static const u8 mmt_loop_log_arity[MMT_MAX_LEVELS] = { 3, 2 };
#define MMT_LOOP_CLOSURES	5

static const u8 mmt_loop_key[16] = {
	0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27,
	0x28, 0x29, 0x2a, 0x2b, 0x2c, 0x2d, 0x2e, 0x2f,
};

struct mmt_loop_ctx {
	struct mmt_conn *a;	/* connecting end: sends */
	struct mmt_conn *b;	/* accepting end: receives */
	struct mmt_pmo *src;
	struct mmt_pmo *dst;
	struct mmt_pmo *old;	/* a PMO a test is done with */
	u8 *plain;
	u8 *out;
};

/* A receive in its own task. */
struct mmt_loop_rx {
	struct mmt_conn *conn;
	struct mmt_pmo *pmo;
	struct mmt_xfer x;
	int err;
	struct completion done;
};

static int mmt_loop_rx_fn(void *data)
{
	struct mmt_loop_rx *r = data;

	mutex_lock(&r->conn->rx_mutex);
	r->err = mmt_conn_do_recv(r->conn, r->pmo, &r->x);
	mutex_unlock(&r->conn->rx_mutex);
	complete(&r->done);
	return 0;
}

static struct mmt_pmo *mmt_loop_pmo(struct kunit *test)
{
	struct mmt_params p;
	struct mmt_pmo *pmo;

	KUNIT_ASSERT_EQ(test, mmt_params_init(&p, 2, mmt_loop_log_arity, 6),
			0);
	pmo = mmt_pmo_alloc(&p, MMT_LOOP_CLOSURES);
	KUNIT_ASSERT_FALSE(test, IS_ERR(pmo));
	return pmo;
}

/*
 * A new receiving PMO in ctx->dst, keyed with the test key: WAITING with
 * @receive, else VALID (zeros).  The caller freed or kept the old one.
 */
static void mmt_loop_new_dst(struct kunit *test, bool receive)
{
	struct mmt_loop_ctx *ctx = test->priv;

	ctx->dst = NULL;	/* exit frees nothing twice if the next fails */
	ctx->dst = mmt_loop_pmo(test);
	KUNIT_ASSERT_EQ(test, mmt_pmo_set_key(ctx->dst, mmt_loop_key, 16,
					      receive), 0);
}

static int mmt_loop_test_init(struct kunit *test)
{
	struct mmt_loop_ctx *ctx;
	u64 cb;
	u32 i;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx);
	test->priv = ctx;
	KUNIT_ASSERT_EQ(test, mmt_loop_pair(&ctx->a, &ctx->b), 0);
	ctx->src = mmt_loop_pmo(test);
	ctx->plain = kunit_kzalloc(test, ctx->src->bytes, GFP_KERNEL);
	ctx->out = kunit_kzalloc(test, ctx->src->bytes, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx->plain);
	KUNIT_ASSERT_NOT_NULL(test, ctx->out);
	for (i = 0; i < ctx->src->bytes; i++)
		ctx->plain[i] = i * 7 + (i >> 9);
	KUNIT_ASSERT_EQ(test, mmt_pmo_set_key(ctx->src, mmt_loop_key, 16,
					      false), 0);
	cb = ctx->src->params.data_bytes;
	for (i = 0; i < ctx->src->closures; i++)
		KUNIT_ASSERT_EQ(test, mmt_write(&ctx->src->mmts[i], 0,
						ctx->plain + i * cb, cb), 0);
	mmt_loop_new_dst(test, true);
	return 0;
}

static void mmt_loop_test_exit(struct kunit *test)
{
	struct mmt_loop_ctx *ctx = test->priv;

	if (!ctx)
		return;
	if (ctx->a)
		ctx->a->fab->destroy(ctx->a);
	if (ctx->b)
		ctx->b->fab->destroy(ctx->b);
	if (ctx->src)
		mmt_pmo_free(ctx->src);
	if (ctx->dst)
		mmt_pmo_free(ctx->dst);
	if (ctx->old)
		mmt_pmo_free(ctx->old);
}

static int mmt_loop_read_all(struct mmt_pmo *pmo, u8 *out)
{
	u64 cb = pmo->params.data_bytes;
	u32 i;
	int err;

	for (i = 0; i < pmo->closures; i++) {
		err = mmt_read(&pmo->mmts[i], 0, out + i * cb, cb);
		if (err)
			return err;
	}
	return 0;
}

/*
 * One transfer of ctx->src to ctx->dst on @channel with the sender's
 * @tx_flags and the receiver's @rx_flags; the receive's result in
 * *@rx_err, the send's returned.
 */
static int mmt_loop_xfer(struct kunit *test, u32 channel, u32 tx_flags,
			 u32 rx_flags, int *rx_err, struct mmt_xfer *xs_out)
{
	struct mmt_loop_ctx *ctx = test->priv;
	struct mmt_xfer xs = {
		.size = sizeof(xs),
		.channel = channel,
		.flags = tx_flags,
		.timeout_ms = 5000,
	};
	struct mmt_loop_rx *r;
	struct task_struct *t;
	int err;

	r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	r->conn = ctx->b;
	r->pmo = ctx->dst;
	r->x.size = sizeof(r->x);
	r->x.channel = channel;
	r->x.flags = rx_flags;
	r->x.timeout_ms = 5000;
	init_completion(&r->done);
	t = kthread_run(mmt_loop_rx_fn, r, "mmt_loop_rx");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	mutex_lock(&ctx->a->tx_mutex);
	err = mmt_conn_do_send(ctx->a, ctx->src, &xs);
	mutex_unlock(&ctx->a->tx_mutex);
	wait_for_completion(&r->done);
	*rx_err = r->err;
	if (err)
		KUNIT_EXPECT_LE(test, r->x.closures, (u64)MMT_LOOP_CLOSURES);
	else
		KUNIT_EXPECT_EQ(test, r->x.closures, (u64)MMT_LOOP_CLOSURES);
	if (xs_out)
		*xs_out = xs;
	return err;
}

/*
 * Every closure arrived: dst VALID with the data byte-exact; src INVALID
 * (moved) or VALID (@copy).
 */
static void mmt_loop_check_arrived(struct kunit *test, bool copy)
{
	struct mmt_loop_ctx *ctx = test->priv;
	u32 i;

	for (i = 0; i < MMT_LOOP_CLOSURES; i++) {
		KUNIT_EXPECT_EQ(test, ctx->src->mmts[i].root.state,
				copy ? MMT_VALID : MMT_INVALID);
		KUNIT_EXPECT_EQ(test, ctx->dst->mmts[i].root.state, MMT_VALID);
	}
	KUNIT_ASSERT_EQ(test, mmt_loop_read_all(ctx->dst, ctx->out), 0);
	KUNIT_EXPECT_EQ(test, memcmp(ctx->out, ctx->plain, ctx->src->bytes),
			0);
}

/* MMT_IOC_SEND and MMT_IOC_RECV's code, delegation: the MMTs move. */
static void mmt_loop_delegate(struct kunit *test)
{
	struct mmt_loop_ctx *ctx = test->priv;
	struct mmt_xfer xs;
	int rx_err;

	KUNIT_EXPECT_EQ(test, mmt_loop_xfer(test, MMT_CHANNEL_MMT, 0, 0,
					    &rx_err, &xs), 0);
	KUNIT_EXPECT_EQ(test, rx_err, 0);
	KUNIT_EXPECT_EQ(test, xs.closures, (u64)MMT_LOOP_CLOSURES);
	KUNIT_EXPECT_EQ(test, ctx->a->tx_gen, 1U);
	mmt_loop_check_arrived(test, false);
	/* the old owner cannot read; the new one writes */
	KUNIT_EXPECT_EQ(test, mmt_read(&ctx->src->mmts[2], 0, ctx->out, 1),
			-EPERM);
	KUNIT_EXPECT_EQ(test, mmt_write(&ctx->dst->mmts[2], 5, "z", 1), 0);
	KUNIT_EXPECT_EQ(test, mmt_conn_state(ctx->a, NULL), MMT_CONN_LIVE);
	KUNIT_EXPECT_EQ(test, mmt_conn_state(ctx->b, NULL), MMT_CONN_LIVE);
}

/* Copy mode with eager verification: the sender keeps a readable copy. */
static void mmt_loop_copy_eager(struct kunit *test)
{
	struct mmt_loop_ctx *ctx = test->priv;
	int rx_err;

	KUNIT_EXPECT_EQ(test, mmt_loop_xfer(test, MMT_CHANNEL_MMT,
					    MMT_XFER_COPY, MMT_XFER_EAGER,
					    &rx_err, NULL), 0);
	KUNIT_EXPECT_EQ(test, rx_err, 0);
	mmt_loop_check_arrived(test, true);
	KUNIT_ASSERT_EQ(test, mmt_loop_read_all(ctx->src, ctx->out), 0);
	KUNIT_EXPECT_EQ(test, memcmp(ctx->out, ctx->plain, ctx->src->bytes),
			0);
}

/*
 * The secure channel on keyed PMOs (both VALID), with the connection's
 * key set on both ends.
 */
static void mmt_loop_secure(struct kunit *test)
{
	struct mmt_loop_ctx *ctx = test->priv;
	u8 root[MMT_CHAN_ROOT_BYTES];
	int rx_err;

	KUNIT_ASSERT_EQ(test, mmt_chan_root_key(mmt_loop_key, 16, root), 0);
	memcpy(ctx->a->chan_root, root, sizeof(root));
	smp_store_release(&ctx->a->has_key, true);
	memcpy(ctx->b->chan_root, root, sizeof(root));
	smp_store_release(&ctx->b->has_key, true);
	memzero_explicit(root, sizeof(root));
	/* the secure channel writes through the receiver's controller */
	mmt_pmo_free(ctx->dst);
	mmt_loop_new_dst(test, false);
	KUNIT_EXPECT_EQ(test, mmt_loop_xfer(test, MMT_CHANNEL_SECURE, 0, 0,
					    &rx_err, NULL), 0);
	KUNIT_EXPECT_EQ(test, rx_err, 0);
	/* a copy: both ends VALID with the same bytes */
	mmt_loop_check_arrived(test, true);
}

/*
 * A second transfer on the same pair takes the next generation: the MMTs,
 * delegated on from their new owner to a third PMO, arrive byte-exact.
 */
static void mmt_loop_twice(struct kunit *test)
{
	struct mmt_loop_ctx *ctx = test->priv;
	int rx_err;

	KUNIT_ASSERT_EQ(test, mmt_loop_xfer(test, MMT_CHANNEL_MMT, 0, 0,
					    &rx_err, NULL), 0);
	KUNIT_ASSERT_EQ(test, rx_err, 0);
	/* on, from the new owner to a third PMO, WAITING */
	ctx->old = ctx->src;
	ctx->src = ctx->dst;
	mmt_loop_new_dst(test, true);
	KUNIT_EXPECT_EQ(test, mmt_loop_xfer(test, MMT_CHANNEL_MMT, 0, 0,
					    &rx_err, NULL), 0);
	KUNIT_EXPECT_EQ(test, rx_err, 0);
	KUNIT_EXPECT_EQ(test, ctx->a->tx_gen, 2U);
	KUNIT_EXPECT_EQ(test, ctx->b->rx_gen, 2U);
	mmt_loop_check_arrived(test, false);
}

/*
 * The fabric itself: a grant's area takes the peer's write byte-exact and
 * its notice; once invalidated, a write naming its segments is a remote
 * access error that fails both ends and lands nothing.
 */
static void mmt_loop_revoked_grant(struct kunit *test)
{
	struct mmt_loop_ctx *ctx = test->priv;
	const struct mmt_fabric_ops *fab = ctx->a->fab;
	struct mmt_inbox_item *it;
	struct mmt_fab_sink *sink;
	struct mmt_fab_src *src;
	struct mmt_wire_msg *w;
	u8 *area, *data;
	int err;

	area = kunit_kzalloc(test, 4096, GFP_KERNEL);
	data = kunit_kzalloc(test, 4096, GFP_KERNEL);
	w = kunit_kzalloc(test, sizeof(*w), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, area);
	KUNIT_ASSERT_NOT_NULL(test, data);
	KUNIT_ASSERT_NOT_NULL(test, w);
	memset(data, 0x5a, 4096);

	sink = fab->sink_alloc(ctx->b, 4096, NULL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(sink));
	w->type = MMT_MSG_GRANT;
	w->gen = cpu_to_le32(1);
	KUNIT_ASSERT_EQ(test, fab->sink_grant(sink, area, 4096, w), 0);
	/* the GRANT reached the sender's inbox */
	it = mmt_inbox_pop(ctx->a, &ctx->a->tx_inbox);
	KUNIT_ASSERT_NOT_NULL(test, it);
	KUNIT_EXPECT_EQ(test, it->msg.type, (u32)MMT_MSG_GRANT);
	kfree(it);

	src = fab->src_alloc(ctx->a, NULL, data, 4096);
	KUNIT_ASSERT_FALSE(test, IS_ERR(src));
	/* the segments must hold exactly the bytes written */
	KUNIT_EXPECT_EQ(test, fab->src_write(src, 4095, w->segs, w->nsegs,
					     NULL, 7), -EPROTO);
	KUNIT_EXPECT_EQ(test, fab->src_write(src, 4096, w->segs, w->nsegs,
					     NULL, 7), 0);
	KUNIT_EXPECT_EQ(test, fab->src_wait(src, HZ), 0);
	KUNIT_EXPECT_EQ(test, memcmp(area, data, 4096), 0);
	it = mmt_inbox_pop(ctx->b, &ctx->b->rx_inbox);
	KUNIT_ASSERT_NOT_NULL(test, it);
	KUNIT_EXPECT_EQ(test, it->msg.type, (u32)MMT_MSG_DONE);
	KUNIT_EXPECT_EQ(test, it->msg.index, 7U);
	kfree(it);

	KUNIT_EXPECT_EQ(test, fab->sink_invalidate(sink), 0);
	memset(area, 0, 4096);
	err = fab->src_write(src, 4096, w->segs, w->nsegs, NULL, 8);
	KUNIT_EXPECT_EQ(test, err, -ECONNRESET);
	KUNIT_EXPECT_PTR_EQ(test, memchr_inv(area, 0, 4096), NULL);
	KUNIT_EXPECT_NULL(test, mmt_inbox_pop(ctx->b, &ctx->b->rx_inbox));
	KUNIT_EXPECT_EQ(test, mmt_conn_state(ctx->a, &err), MMT_CONN_DEAD);
	KUNIT_EXPECT_EQ(test, err, -ECONNRESET);
	KUNIT_EXPECT_EQ(test, mmt_conn_state(ctx->b, &err), MMT_CONN_DEAD);
	KUNIT_EXPECT_EQ(test, err, -ECONNRESET);
	fab->src_free(src);
	fab->sink_free(sink);
}

/* Closing one end fails the other, which then posts nothing. */
static void mmt_loop_close(struct kunit *test)
{
	struct mmt_loop_ctx *ctx = test->priv;
	struct mmt_wire_msg *w;
	int err;

	w = kunit_kzalloc(test, sizeof(*w), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, w);
	ctx->a->fab->destroy(ctx->a);
	ctx->a = NULL;
	KUNIT_EXPECT_EQ(test, mmt_conn_state(ctx->b, &err), MMT_CONN_DEAD);
	KUNIT_EXPECT_EQ(test, err, -ECONNRESET);
	w->type = MMT_MSG_END;
	KUNIT_EXPECT_EQ(test, ctx->b->fab->post_msg(ctx->b, w), -ECONNRESET);
}

/* Two pairs never share a connection id. */
static void mmt_loop_ids(struct kunit *test)
{
	struct mmt_loop_ctx *ctx = test->priv;
	struct mmt_conn *c, *d;

	KUNIT_EXPECT_EQ(test, ctx->a->conn_id, ctx->b->conn_id);
	KUNIT_EXPECT_FALSE(test, ctx->a->accepted);
	KUNIT_EXPECT_TRUE(test, ctx->b->accepted);
	KUNIT_ASSERT_EQ(test, mmt_loop_pair(&c, &d), 0);
	KUNIT_EXPECT_NE(test, c->conn_id, ctx->a->conn_id);
	c->fab->destroy(c);
	d->fab->destroy(d);
}

static struct kunit_case mmt_loop_cases[] = {
	KUNIT_CASE(mmt_loop_ids),
	KUNIT_CASE(mmt_loop_delegate),
	KUNIT_CASE(mmt_loop_copy_eager),
	KUNIT_CASE(mmt_loop_secure),
	KUNIT_CASE(mmt_loop_twice),
	KUNIT_CASE(mmt_loop_revoked_grant),
	KUNIT_CASE(mmt_loop_close),
	{}
};

static struct kunit_suite mmt_loop_suite = {
	.name = "mmt_loop",
	.init = mmt_loop_test_init,
	.exit = mmt_loop_test_exit,
	.test_cases = mmt_loop_cases,
};

kunit_test_suite(mmt_loop_suite);
