// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_conn_test.c - suite mmt_conn: the parts of connections that need no
 * RDMA (driver/mmt_conn.c): message decoding and checks, the sender's
 * build and settle steps, the receiver's in-place closure check, which
 * PMOs each channel takes (plain PMOs: no key), and the secure channel's
 * seal and open of one closure between two keyed or two plain PMOs.
 *
 * The RDMA writes are simulated the way the transport does them
 * (driver/mmt_conn_tx.c): the sender's closure region (data, data MACs,
 * tree nodes, at index * stride) is copied into the receiver's PMO memory
 * at the same place, and the closure head (header + sealed root) into a
 * separate slot; then the receiver checks in place.  KUnit only.
 */
#include <kunit/test.h>
#include <linux/slab.h>

#include "mmt_conn.h"
#include "mmt_internal.h"
#include "mmt_transport.h"
#include "mmt.h"

/* 2 levels, arities 8 and 4, 64-byte blocks: 2 KiB closures. */
static const u8 mmt_conn_log_arity[MMT_MAX_LEVELS] = { 3, 2 };
#define MMT_CONN_TEST_CLOSURES 3
#define MMT_CONN_TEST_ID 0x1234abcdull
#define MMT_CONN_TEST_GEN 5	/* the transfer generation of the tests */

/* the receive nonce of the tests */
static const u8 mmt_conn_test_nonce[MMT_RX_NONCE_BYTES] = { 0x6e, 0x6f };
#define MMT_PEER mmt_node_id()

static const u8 mmt_conn_key[16] = {
	0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17,
	0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f,
};

struct mmt_conn_ctx {
	struct mmt_pmo *src;
	struct mmt_pmo *dst;
	u8 *plain;
	u8 *out;
	u8 head[MMT_CONN_HEAD_BYTES];
	bool dst_plain;	/* what mmt_conn_rx_prepare() said of dst */
};

static struct mmt_pmo *mmt_conn_pmo(struct kunit *test, u32 closures)
{
	struct mmt_params p;
	struct mmt_pmo *pmo;

	KUNIT_ASSERT_EQ(test, mmt_params_init(&p, 2, mmt_conn_log_arity, 6),
			0);
	pmo = mmt_pmo_alloc(&p, closures);
	KUNIT_ASSERT_FALSE(test, IS_ERR(pmo));
	return pmo;
}

static int mmt_conn_test_init(struct kunit *test)
{
	struct mmt_conn_ctx *ctx;
	u64 cb;
	u32 i;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx);
	test->priv = ctx;
	ctx->src = mmt_conn_pmo(test, MMT_CONN_TEST_CLOSURES);
	ctx->dst = mmt_conn_pmo(test, MMT_CONN_TEST_CLOSURES);
	ctx->plain = kunit_kzalloc(test, ctx->src->bytes, GFP_KERNEL);
	ctx->out = kunit_kzalloc(test, ctx->src->bytes, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx->plain);
	KUNIT_ASSERT_NOT_NULL(test, ctx->out);
	for (i = 0; i < ctx->src->bytes; i++)
		ctx->plain[i] = i * 13 + (i >> 7);
	KUNIT_ASSERT_EQ(test, mmt_pmo_set_key(ctx->src, mmt_conn_key, 16,
					      false), 0);
	cb = ctx->src->params.data_bytes;
	for (i = 0; i < ctx->src->closures; i++)
		KUNIT_ASSERT_EQ(test, mmt_write(&ctx->src->mmts[i], 0,
						ctx->plain + i * cb, cb), 0);
	KUNIT_ASSERT_EQ(test, mmt_pmo_set_key(ctx->dst, mmt_conn_key, 16,
					      true), 0);
	KUNIT_ASSERT_EQ(test, mmt_conn_rx_prepare(ctx->dst, MMT_CHANNEL_MMT,
						  MMT_CONN_TEST_ID,
						  &ctx->dst_plain), 0);
	KUNIT_EXPECT_FALSE(test, ctx->dst_plain);
	return 0;
}

static void mmt_conn_test_exit(struct kunit *test)
{
	struct mmt_conn_ctx *ctx = test->priv;

	if (ctx && ctx->src)
		mmt_pmo_free(ctx->src);
	if (ctx && ctx->dst)
		mmt_pmo_free(ctx->dst);
}

/* The RDMA writes of closure @i: the region in place, the head aside. */
static void mmt_conn_land(struct mmt_conn_ctx *ctx, u32 i)
{
	const struct mmt_params *p = &ctx->src->params;
	size_t off = (size_t)i * ctx->src->stride;

	memcpy(ctx->dst->mem + off, ctx->src->mem + off,
	       p->data_bytes + p->macs_bytes + p->nodes_bytes);
}

/* Build closure @i, land it, check it, settle it; returns the verdict. */
static int mmt_conn_one(struct kunit *test, u32 i, bool copy, bool eager)
{
	struct mmt_conn_ctx *ctx = test->priv;
	int verdict;

	KUNIT_ASSERT_EQ(test, mmt_conn_tx_build(ctx->src, MMT_CONN_TEST_ID,
						MMT_CONN_TEST_GEN,
						mmt_conn_test_nonce,
						mmt_node_id(), i, copy,
						ctx->head), 0);
	KUNIT_EXPECT_EQ(test, ctx->src->mmts[i].root.state, MMT_SENDING);
	mmt_conn_land(ctx, i);
	verdict = mmt_conn_rx_check(ctx->dst, i,
						MMT_CONN_TEST_GEN, mmt_conn_test_nonce, ctx->head, MMT_PEER, eager);
	mmt_conn_tx_settle(ctx->src, i, copy, verdict);
	return verdict;
}

static int mmt_conn_read_all(struct mmt_pmo *pmo, u8 *out)
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

static void mmt_conn_transfer(struct kunit *test)
{
	struct mmt_conn_ctx *ctx = test->priv;
	u32 i;

	for (i = 0; i < MMT_CONN_TEST_CLOSURES; i++) {
		KUNIT_EXPECT_EQ(test, mmt_conn_one(test, i, false, false), 0);
		KUNIT_EXPECT_EQ(test, ctx->src->mmts[i].root.state,
				MMT_INVALID);
		KUNIT_EXPECT_EQ(test, ctx->dst->mmts[i].root.state, MMT_VALID);
		KUNIT_EXPECT_FALSE(test, ctx->dst->mmts[i].root.read_only);
	}
	KUNIT_ASSERT_EQ(test, mmt_conn_read_all(ctx->dst, ctx->out), 0);
	KUNIT_EXPECT_EQ(test, memcmp(ctx->out, ctx->plain, ctx->src->bytes),
			0);
	/* The new owner writes; the old one cannot read. */
	KUNIT_EXPECT_EQ(test, mmt_write(&ctx->dst->mmts[1], 3, "y", 1), 0);
	KUNIT_EXPECT_EQ(test, mmt_read(&ctx->src->mmts[1], 0, ctx->out, 1),
			-EPERM);
}

static void mmt_conn_copy_eager(struct kunit *test)
{
	struct mmt_conn_ctx *ctx = test->priv;
	u32 i;

	for (i = 0; i < MMT_CONN_TEST_CLOSURES; i++) {
		KUNIT_EXPECT_EQ(test, mmt_conn_one(test, i, true, true), 0);
		KUNIT_EXPECT_EQ(test, ctx->src->mmts[i].root.state, MMT_VALID);
		KUNIT_EXPECT_TRUE(test, ctx->dst->mmts[i].root.read_only);
	}
	KUNIT_ASSERT_EQ(test, mmt_conn_read_all(ctx->dst, ctx->out), 0);
	KUNIT_EXPECT_EQ(test, memcmp(ctx->out, ctx->plain, ctx->src->bytes),
			0);
	KUNIT_EXPECT_EQ(test, mmt_write(&ctx->dst->mmts[0], 0, "x", 1),
			-EPERM);
	KUNIT_EXPECT_EQ(test, mmt_write(&ctx->src->mmts[0], 0, "x", 1), 0);
}

/* Tamper with the landed region: rejected, receiver WAITING, sender VALID. */
static void mmt_conn_tamper_region(struct kunit *test)
{
	struct mmt_conn_ctx *ctx = test->priv;
	const struct mmt_params *p = &ctx->src->params;
	struct mmt_root before;
	u8 *top_node;

	KUNIT_ASSERT_EQ(test, mmt_conn_tx_build(ctx->src, MMT_CONN_TEST_ID,
						MMT_CONN_TEST_GEN,
						mmt_conn_test_nonce,
						mmt_node_id(), 0, false,
						ctx->head), 0);
	mmt_conn_land(ctx, 0);
	/* the first node of the top untrusted level (level 0 of 2) */
	top_node = ctx->dst->mmts[0].nodes + p->level_start[0] * p->node_size;
	top_node[0] ^= 1;
	before = ctx->dst->mmts[0].root;
	KUNIT_EXPECT_EQ(test, mmt_conn_rx_check(ctx->dst, 0,
						MMT_CONN_TEST_GEN, mmt_conn_test_nonce, ctx->head,
						MMT_PEER, false), -EBADMSG);
	KUNIT_EXPECT_EQ(test, memcmp(&before, &ctx->dst->mmts[0].root,
				     sizeof(before)), 0);
	KUNIT_EXPECT_EQ(test, ctx->dst->mmts[0].root.state, MMT_WAITING);
	mmt_conn_tx_settle(ctx->src, 0, false, -EBADMSG);
	KUNIT_EXPECT_EQ(test, ctx->src->mmts[0].root.state, MMT_VALID);

	/* A data byte passes the lazy check but not the eager one. */
	KUNIT_ASSERT_EQ(test, mmt_conn_tx_build(ctx->src, MMT_CONN_TEST_ID,
						MMT_CONN_TEST_GEN,
						mmt_conn_test_nonce,
						mmt_node_id(), 0, false,
						ctx->head), 0);
	mmt_conn_land(ctx, 0);
	ctx->dst->mmts[0].data[5] ^= 0x80;
	KUNIT_EXPECT_EQ(test, mmt_conn_rx_check(ctx->dst, 0,
						MMT_CONN_TEST_GEN, mmt_conn_test_nonce, ctx->head,
						MMT_PEER, true),
			-EBADMSG);
	KUNIT_EXPECT_EQ(test, ctx->dst->mmts[0].root.state, MMT_WAITING);
	mmt_conn_tx_settle(ctx->src, 0, false, -EBADMSG);
	KUNIT_ASSERT_EQ(test, mmt_read(&ctx->src->mmts[0], 0, ctx->out,
				       p->data_bytes), 0);
	KUNIT_EXPECT_EQ(test, memcmp(ctx->out, ctx->plain, p->data_bytes), 0);
}

/* Tamper with the head: the engine's errors, nothing changes. */
static void mmt_conn_tamper_head(struct kunit *test)
{
	struct mmt_conn_ctx *ctx = test->priv;
	static const struct {
		u32 off;
		int err;
	} cases[] = {
		{ 0, -EPROTO },		/* magic */
		{ 4, -EPROTONOSUPPORT },	/* version */
		{ 16, -EXDEV },		/* conn_id */
		{ 24, -EILSEQ },	/* seq: names another MMT */
		{ 8, -EBADMSG },	/* flags: associated data */
		{ 56, -ESTALE },	/* transfer generation */
		{ 64, -EBADMSG },	/* keying salt: another keying */
		{ MMT_CLOSURE_HDR_BYTES + 20, -EBADMSG },	/* sealed root */
	};
	u8 good[MMT_CONN_HEAD_BYTES];
	unsigned int k;

	KUNIT_ASSERT_EQ(test, mmt_conn_tx_build(ctx->src, MMT_CONN_TEST_ID,
						MMT_CONN_TEST_GEN,
						mmt_conn_test_nonce,
						mmt_node_id(), 0, false,
						ctx->head), 0);
	mmt_conn_land(ctx, 0);
	memcpy(good, ctx->head, sizeof(good));
	for (k = 0; k < ARRAY_SIZE(cases); k++) {
		memcpy(ctx->head, good, sizeof(good));
		ctx->head[cases[k].off] ^= 1;
		KUNIT_EXPECT_EQ(test, mmt_conn_rx_check(ctx->dst, 0,
						MMT_CONN_TEST_GEN, mmt_conn_test_nonce, ctx->head,
							MMT_PEER, false),
				cases[k].err);
		KUNIT_EXPECT_EQ(test, ctx->dst->mmts[0].root.state,
				MMT_WAITING);
	}
	/* another sender than the hello's peer (authenticated field) */
	KUNIT_EXPECT_EQ(test, mmt_conn_rx_check(ctx->dst, 0,
						MMT_CONN_TEST_GEN, mmt_conn_test_nonce, good, MMT_PEER + 1,
						false), -EXDEV);
	KUNIT_EXPECT_EQ(test, mmt_conn_rx_check(ctx->dst, 0,
						MMT_CONN_TEST_GEN, mmt_conn_test_nonce, good, MMT_PEER,
						false), 0);
	mmt_conn_tx_settle(ctx->src, 0, false, 0);
}

/* Replay: an old head again, or a root counter not above the minimum. */
static void mmt_conn_replay(struct kunit *test)
{
	struct mmt_conn_ctx *ctx = test->priv;
	u8 first[MMT_CONN_HEAD_BYTES];

	KUNIT_ASSERT_EQ(test, mmt_conn_one(test, 0, true, false), 0);
	memcpy(first, ctx->head, sizeof(first));
	/*
	 * closure 0's head for MMT 1 (whose region holds closure 0's too):
	 * refused as another MMT's closure (its seq is 0)
	 */
	memcpy(ctx->dst->mem + ctx->src->stride, ctx->src->mem,
	       ctx->src->stride);
	KUNIT_EXPECT_EQ(test, mmt_conn_rx_check(ctx->dst, 1,
						MMT_CONN_TEST_GEN, mmt_conn_test_nonce, first, MMT_PEER,
						false),
			-EILSEQ);
	KUNIT_EXPECT_EQ(test, ctx->dst->mmts[1].root.state, MMT_WAITING);

	/* The minimum set by the owner of the receive PMO. */
	ctx->dst->rx.min_root_counter = 1ull << 30;
	KUNIT_ASSERT_EQ(test, mmt_conn_tx_build(ctx->src, MMT_CONN_TEST_ID,
						MMT_CONN_TEST_GEN,
						mmt_conn_test_nonce,
						mmt_node_id(), 1, true,
						ctx->head), 0);
	mmt_conn_land(ctx, 1);
	KUNIT_EXPECT_EQ(test, mmt_conn_rx_check(ctx->dst, 1,
						MMT_CONN_TEST_GEN, mmt_conn_test_nonce, ctx->head,
						MMT_PEER, false), -ESTALE);
	mmt_conn_tx_settle(ctx->src, 1, true, -ESTALE);
	KUNIT_EXPECT_EQ(test, ctx->src->mmts[1].root.state, MMT_VALID);
}

/*
 * Lost ack in transfer mode: the receiver accepted, the sender saw the
 * connection reset.  The sender's MMT is VALID with its data, under a
 * fresh GUA (so it never writes under the receiver's GUA again).
 */
static void mmt_conn_lost_ack(struct kunit *test)
{
	struct mmt_conn_ctx *ctx = test->priv;
	const struct mmt_params *p = &ctx->src->params;
	u64 gua = ctx->src->mmts[2].root.gua;

	KUNIT_ASSERT_EQ(test, mmt_conn_tx_build(ctx->src, MMT_CONN_TEST_ID,
						MMT_CONN_TEST_GEN,
						mmt_conn_test_nonce,
						mmt_node_id(), 2, false,
						ctx->head), 0);
	mmt_conn_land(ctx, 2);
	KUNIT_EXPECT_EQ(test, mmt_conn_rx_check(ctx->dst, 2,
						MMT_CONN_TEST_GEN, mmt_conn_test_nonce, ctx->head,
						MMT_PEER, false), 0);
	mmt_conn_tx_settle(ctx->src, 2, false, -ECONNRESET);
	KUNIT_EXPECT_EQ(test, ctx->src->mmts[2].root.state, MMT_VALID);
	KUNIT_EXPECT_FALSE(test, ctx->src->mmts[2].root.read_only);
	KUNIT_EXPECT_NE(test, ctx->src->mmts[2].root.gua, gua);
	KUNIT_EXPECT_EQ(test, ctx->dst->mmts[2].root.gua, gua);
	KUNIT_ASSERT_EQ(test, mmt_read(&ctx->src->mmts[2], 0, ctx->out,
				       p->data_bytes), 0);
	KUNIT_EXPECT_EQ(test, memcmp(ctx->out, ctx->plain + 2 * p->data_bytes,
				     p->data_bytes), 0);
	/*
	 * A copy-mode failure keeps the GUA: nobody else may write it.  (The
	 * build itself gave MMT 1 a fresh GUA: its old one was below MMT 2's,
	 * sent before, and GUAs rise along a transfer.)
	 */
	KUNIT_ASSERT_EQ(test, mmt_conn_tx_build(ctx->src, MMT_CONN_TEST_ID,
						MMT_CONN_TEST_GEN,
						mmt_conn_test_nonce,
						mmt_node_id(), 1, true,
						ctx->head), 0);
	gua = ctx->src->mmts[1].root.gua;
	mmt_conn_tx_settle(ctx->src, 1, true, -ECONNRESET);
	KUNIT_EXPECT_EQ(test, ctx->src->mmts[1].root.gua, gua);
}

/*
 * Replay from an earlier transfer, at the driver: copy-mode transfer 1 into receive
 * PMO A; a later transfer (next generation) into a new receive PMO B, with
 * the first transfer's recorded closure 0 presented as closure 0.  B's
 * replay floors start at zero, so only the generation rejects it
 * (-ESTALE); B stays WAITING, and the later transfer's own closure 0 is
 * then accepted.  Each slot: the earlier closure is refused in all.
 */
static void mmt_conn_earlier_transfer(struct kunit *test)
{
	struct mmt_conn_ctx *ctx = test->priv;
	u8 old[MMT_CONN_TEST_CLOSURES][MMT_CONN_HEAD_BYTES];
	struct mmt_pmo *b;
	bool plain;
	u32 i;

	for (i = 0; i < MMT_CONN_TEST_CLOSURES; i++) {
		KUNIT_ASSERT_EQ(test, mmt_conn_one(test, i, true, false), 0);
		memcpy(old[i], ctx->head, MMT_CONN_HEAD_BYTES);
	}
	/* the sender rewrites its data; a new receive PMO */
	KUNIT_ASSERT_EQ(test, mmt_write(&ctx->src->mmts[0], 0, "new", 3), 0);
	b = mmt_conn_pmo(test, MMT_CONN_TEST_CLOSURES);
	KUNIT_ASSERT_EQ(test, mmt_pmo_set_key(b, mmt_conn_key, 16, true), 0);
	KUNIT_ASSERT_EQ(test, mmt_conn_rx_prepare(b, MMT_CHANNEL_MMT,
						  MMT_CONN_TEST_ID, &plain), 0);
	for (i = 0; i < MMT_CONN_TEST_CLOSURES; i++) {
		u32 slot;

		for (slot = 0; slot < MMT_CONN_TEST_CLOSURES; slot++) {
			size_t off = (size_t)slot * ctx->src->stride;

			memcpy(b->mem + off, ctx->dst->mem +
			       (size_t)i * ctx->src->stride, ctx->src->stride);
			KUNIT_EXPECT_EQ_MSG(test,
					    mmt_conn_rx_check(b, slot,
							      MMT_CONN_TEST_GEN + 1, mmt_conn_test_nonce,
							      old[i], MMT_PEER,
							      false),
					    slot == i ? -ESTALE : -EILSEQ,
					    "closure %u into slot %u", i, slot);
			KUNIT_EXPECT_EQ(test, b->mmts[slot].root.state,
					MMT_WAITING);
		}
	}
	/* the later transfer's own closure 0 */
	KUNIT_ASSERT_EQ(test, mmt_conn_tx_build(ctx->src, MMT_CONN_TEST_ID,
						MMT_CONN_TEST_GEN + 1,
						mmt_conn_test_nonce,
						mmt_node_id(), 0, true,
						ctx->head), 0);
	memcpy(b->mem, ctx->src->mem, ctx->src->stride);
	KUNIT_EXPECT_EQ(test, mmt_conn_rx_check(b, 0, MMT_CONN_TEST_GEN + 1, mmt_conn_test_nonce,
						ctx->head, MMT_PEER, false), 0);
	mmt_conn_tx_settle(ctx->src, 0, true, 0);
	KUNIT_ASSERT_EQ(test, mmt_read(&b->mmts[0], 0, ctx->out, 3), 0);
	KUNIT_EXPECT_EQ(test, memcmp(ctx->out, "new", 3), 0);
	mmt_pmo_free(b);
}

/*
 * Keying salts across keyings, at the driver: two keyings of one key have distinct
 * keying salts (and subkeys); the receive PMO takes the sender's keying
 * for what it received, and after a failed transfer the re-encryption of
 * a received MMT moves it into its owner's own keying.
 */
static void mmt_conn_keyings(struct kunit *test)
{
	struct mmt_conn_ctx *ctx = test->priv;
	const struct mmt_params *p = &ctx->src->params;
	const u8 *ss = mmt_crypto_ksalt(ctx->src->crypto);
	const u8 *ds = mmt_crypto_ksalt(ctx->dst->crypto);

	u8 a[16] = {}, b[16] = {};

	KUNIT_EXPECT_NE(test, memcmp(ss, ds, MMT_KSALT_BYTES), 0);
	/* and so do their pads: the subkeys depend on the salt */
	KUNIT_ASSERT_EQ(test, mmt_crypto_ecb(ctx->src->crypto, MMT_SUBKEY_ENC,
					     a, a, 16), 0);
	KUNIT_ASSERT_EQ(test, mmt_crypto_ecb(ctx->dst->crypto, MMT_SUBKEY_ENC,
					     b, b, 16), 0);
	KUNIT_EXPECT_NE(test, memcmp(a, b, 16), 0);
	KUNIT_ASSERT_EQ(test, mmt_conn_one(test, 0, false, false), 0);
	KUNIT_EXPECT_TRUE(test, ctx->dst->mmts[0].crypto != ctx->dst->crypto);
	KUNIT_EXPECT_EQ(test, memcmp(mmt_crypto_ksalt(ctx->dst->mmts[0].crypto),
				     ss, MMT_KSALT_BYTES), 0);
	/* the next closure of the same keying reuses the context */
	KUNIT_ASSERT_EQ(test, mmt_conn_one(test, 1, false, false), 0);
	KUNIT_EXPECT_TRUE(test, ctx->dst->mmts[1].crypto ==
			  ctx->dst->mmts[0].crypto);
	/* B sends MMT 0 on and the transfer fails: regua into B's keying */
	KUNIT_ASSERT_EQ(test, mmt_conn_tx_build(ctx->dst, MMT_CONN_TEST_ID,
						MMT_CONN_TEST_GEN,
						mmt_conn_test_nonce,
						mmt_node_id(), 0, false,
						ctx->head), 0);
	mmt_conn_tx_settle(ctx->dst, 0, false, -ECONNRESET);
	KUNIT_EXPECT_EQ(test, ctx->dst->mmts[0].root.state, MMT_VALID);
	KUNIT_EXPECT_TRUE(test, ctx->dst->mmts[0].crypto == ctx->dst->crypto);
	KUNIT_ASSERT_EQ(test, mmt_read(&ctx->dst->mmts[0], 0, ctx->out,
				       p->data_bytes), 0);
	KUNIT_EXPECT_EQ(test, memcmp(ctx->out, ctx->plain, p->data_bytes), 0);
}

/*
 * Review finding 1 (reflection): the same connection id and generation
 * serve both directions, and two nodes may share a node id, so a closure
 * built for one receive fits any other receive of that generation on the
 * connection but for the receive's nonce: a closure built for another
 * nonce is -ESTALE and changes nothing; with its own nonce it is accepted.
 */
static void mmt_conn_other_receive(struct kunit *test)
{
	struct mmt_conn_ctx *ctx = test->priv;
	u8 other[MMT_RX_NONCE_BYTES];

	memcpy(other, mmt_conn_test_nonce, sizeof(other));
	other[7] ^= 0x80;
	KUNIT_ASSERT_EQ(test, mmt_conn_tx_build(ctx->src, MMT_CONN_TEST_ID,
						MMT_CONN_TEST_GEN, other,
						mmt_node_id(), 0, true,
						ctx->head), 0);
	mmt_conn_land(ctx, 0);
	KUNIT_EXPECT_EQ(test, mmt_conn_rx_check(ctx->dst, 0, MMT_CONN_TEST_GEN,
						mmt_conn_test_nonce, ctx->head,
						MMT_PEER, false), -ESTALE);
	KUNIT_EXPECT_EQ(test, ctx->dst->mmts[0].root.state, MMT_WAITING);
	KUNIT_EXPECT_EQ(test, mmt_conn_rx_check(ctx->dst, 0, MMT_CONN_TEST_GEN,
						other, ctx->head, MMT_PEER,
						false), 0);
	mmt_conn_tx_settle(ctx->src, 0, true, 0);
}

/*
 * Review finding 2: one receive at a time per PMO.  A second receive (RDMA
 * or a local delegation) is -EBUSY and leaves the first one's rules alone.
 */
static void mmt_conn_one_receive(struct kunit *test)
{
	struct mmt_conn_ctx *ctx = test->priv;
	u64 sent = 7;
	bool plain;

	/* the fixture's mmt_conn_rx_prepare() holds ctx->dst */
	KUNIT_EXPECT_EQ(test, mmt_conn_rx_prepare(ctx->dst, MMT_CHANNEL_MMT,
						  MMT_CONN_TEST_ID + 1, &plain),
			-EBUSY);
	KUNIT_EXPECT_EQ(test, ctx->dst->rx.conn_id, MMT_CONN_TEST_ID);
	KUNIT_EXPECT_EQ(test, mmt_delegate_loopback(ctx->src, ctx->dst, true,
						    false, &sent), -EBUSY);
	KUNIT_EXPECT_EQ(test, sent, 0ull);
	KUNIT_EXPECT_EQ(test, ctx->dst->rx.conn_id, MMT_CONN_TEST_ID);
	KUNIT_EXPECT_EQ(test, ctx->dst->mmts[0].root.state, MMT_WAITING);
	mmt_conn_rx_finish(ctx->dst, false);
	KUNIT_EXPECT_EQ(test, mmt_delegate_loopback(ctx->src, ctx->dst, true,
						    false, &sent), 0);
	KUNIT_EXPECT_EQ(test, sent, (u64)MMT_CONN_TEST_CLOSURES);
	KUNIT_EXPECT_FALSE(test, ctx->dst->receiving);
}

/*
 * Review finding 3: an ACK's tag says "accepted" only for this closure of
 * this receive under this key: it changes with the verdict, the closure,
 * the generation, the connection and the nonce, and another key gives
 * another tag.  Review H2: also with the direction, the two nodes and the
 * sender's nonce, so a tag made for the other direction of a connection
 * (reflected) or for another transfer of the same generation is refused.
 */
static void mmt_conn_ack_bind(struct mmt_bind *b)
{
	memset(b, 0, sizeof(*b));
	b->conn_id = 1;
	b->gen = 2;
	b->sender_node = 10;
	b->receiver_node = 20;
	b->dir = 0;
	memcpy(b->rx_nonce, mmt_conn_test_nonce, MMT_RX_NONCE_BYTES);
	memset(b->tx_nonce, 0xa5, MMT_RX_NONCE_BYTES);
}

static void mmt_conn_ack_tags(struct kunit *test)
{
	struct mmt_conn_ctx *ctx = test->priv;
	static const u8 other_key[16] = "another mmt key";
	u8 t0[MMT_WIRE_TAG_BYTES], t[MMT_WIRE_TAG_BYTES];
	struct mmt_bind b;
	struct mmt_pmo *k;

	mmt_conn_ack_bind(&b);
	KUNIT_ASSERT_EQ(test, mmt_conn_ack_tag(ctx->dst, &b, 3, 0, 0, t0), 0);
	/* the same key on the other side gives the same tag */
	KUNIT_ASSERT_EQ(test, mmt_conn_ack_tag(ctx->src, &b, 3, 0, 0, t), 0);
	KUNIT_EXPECT_EQ(test, memcmp(t, t0, sizeof(t)), 0);
	KUNIT_ASSERT_EQ(test, mmt_conn_ack_tag(ctx->dst, &b, 3, 0, -EBADMSG, t),
			0);
	KUNIT_EXPECT_NE(test, memcmp(t, t0, sizeof(t)), 0);
	KUNIT_ASSERT_EQ(test, mmt_conn_ack_tag(ctx->dst, &b, 4, 0, 0, t), 0);
	KUNIT_EXPECT_NE(test, memcmp(t, t0, sizeof(t)), 0);
	/*
	 * Review L3: a migration's acceptance names the root counter of the
	 * closure accepted: the ACK of round 1's closure 3 (counter 5) does
	 * not acknowledge round 2's (counter 9).
	 */
	KUNIT_ASSERT_EQ(test, mmt_conn_ack_tag(ctx->dst, &b, 3, 5, 0, t), 0);
	KUNIT_EXPECT_NE(test, memcmp(t, t0, sizeof(t)), 0);
	KUNIT_ASSERT_EQ(test, mmt_conn_ack_tag(ctx->dst, &b, 3, 9, 0, t0), 0);
	KUNIT_EXPECT_NE(test, memcmp(t, t0, sizeof(t)), 0);
	KUNIT_ASSERT_EQ(test, mmt_conn_ack_tag(ctx->dst, &b, 3, 0, 0, t0), 0);
	b.gen = 3;
	KUNIT_ASSERT_EQ(test, mmt_conn_ack_tag(ctx->dst, &b, 3, 0, 0, t), 0);
	KUNIT_EXPECT_NE(test, memcmp(t, t0, sizeof(t)), 0);
	mmt_conn_ack_bind(&b);
	b.conn_id = 9;
	KUNIT_ASSERT_EQ(test, mmt_conn_ack_tag(ctx->dst, &b, 3, 0, 0, t), 0);
	KUNIT_EXPECT_NE(test, memcmp(t, t0, sizeof(t)), 0);
	mmt_conn_ack_bind(&b);
	b.rx_nonce[0] ^= 1;
	KUNIT_ASSERT_EQ(test, mmt_conn_ack_tag(ctx->dst, &b, 3, 0, 0, t), 0);
	KUNIT_EXPECT_NE(test, memcmp(t, t0, sizeof(t)), 0);
	/* the other direction: the nodes swapped, the other side connected */
	mmt_conn_ack_bind(&b);
	b.sender_node = 20;
	b.receiver_node = 10;
	b.dir = 1;
	KUNIT_ASSERT_EQ(test, mmt_conn_ack_tag(ctx->dst, &b, 3, 0, 0, t), 0);
	KUNIT_EXPECT_NE(test, memcmp(t, t0, sizeof(t)), 0);
	/* ... each alone (nodes of one id: the direction byte decides) */
	mmt_conn_ack_bind(&b);
	b.dir = 1;
	KUNIT_ASSERT_EQ(test, mmt_conn_ack_tag(ctx->dst, &b, 3, 0, 0, t), 0);
	KUNIT_EXPECT_NE(test, memcmp(t, t0, sizeof(t)), 0);
	mmt_conn_ack_bind(&b);
	b.sender_node = 11;
	KUNIT_ASSERT_EQ(test, mmt_conn_ack_tag(ctx->dst, &b, 3, 0, 0, t), 0);
	KUNIT_EXPECT_NE(test, memcmp(t, t0, sizeof(t)), 0);
	mmt_conn_ack_bind(&b);
	b.receiver_node = 21;
	KUNIT_ASSERT_EQ(test, mmt_conn_ack_tag(ctx->dst, &b, 3, 0, 0, t), 0);
	KUNIT_EXPECT_NE(test, memcmp(t, t0, sizeof(t)), 0);
	/* another sender nonce: another transfer of the same generation */
	mmt_conn_ack_bind(&b);
	b.tx_nonce[15] ^= 0x40;
	KUNIT_ASSERT_EQ(test, mmt_conn_ack_tag(ctx->dst, &b, 3, 0, 0, t), 0);
	KUNIT_EXPECT_NE(test, memcmp(t, t0, sizeof(t)), 0);
	mmt_conn_ack_bind(&b);
	k = mmt_conn_pmo(test, 1);
	KUNIT_EXPECT_EQ(test, mmt_conn_ack_tag(k, &b, 3, 0, 0, t), -ENOKEY);
	KUNIT_ASSERT_EQ(test, mmt_pmo_set_key(k, other_key, 16, false), 0);
	KUNIT_ASSERT_EQ(test, mmt_conn_ack_tag(k, &b, 3, 0, 0, t), 0);
	KUNIT_EXPECT_NE(test, memcmp(t, t0, sizeof(t)), 0);
	mmt_pmo_free(k);
}

/* States the channels require on both sides. */
static void mmt_conn_states(struct kunit *test)
{
	struct mmt_conn_ctx *ctx = test->priv;
	bool plain = true;

	KUNIT_EXPECT_EQ(test, mmt_conn_tx_check(ctx->src, MMT_CHANNEL_MMT,
						&plain), 0);
	KUNIT_EXPECT_FALSE(test, plain);
	KUNIT_EXPECT_EQ(test, mmt_conn_tx_check(ctx->dst, MMT_CHANNEL_MMT,
						&plain), -EPERM);
	KUNIT_EXPECT_EQ(test, mmt_conn_rx_prepare(ctx->src, MMT_CHANNEL_MMT,
						  1, &plain), -EPERM);
	/* the fixture's receive holds ctx->dst */
	KUNIT_EXPECT_EQ(test, mmt_conn_rx_prepare(ctx->dst, MMT_CHANNEL_MMT,
						  1, &plain), -EBUSY);
	/* the plain channel moves plain memory: keyed PMOs are refused */
	KUNIT_EXPECT_EQ(test, mmt_conn_rx_prepare(ctx->dst, MMT_CHANNEL_PLAIN,
						  1, &plain), -EPERM);
	mmt_conn_rx_finish(ctx->dst, false);
	KUNIT_EXPECT_EQ(test, mmt_conn_rx_prepare(ctx->src, MMT_CHANNEL_PLAIN,
						  1, &plain), -EPERM);
	KUNIT_EXPECT_EQ(test, mmt_conn_tx_check(ctx->src, MMT_CHANNEL_PLAIN,
						&plain), -EPERM);
	KUNIT_EXPECT_EQ(test, mmt_conn_rx_prepare(ctx->src, MMT_CHANNEL_SECURE,
						  1, &plain), 0);
	KUNIT_EXPECT_FALSE(test, plain);
	mmt_conn_rx_finish(ctx->src, plain);
	/* a SENDING MMT can be neither sent again nor received into */
	KUNIT_ASSERT_EQ(test, mmt_conn_tx_build(ctx->src, 1, MMT_CONN_TEST_GEN,
						mmt_conn_test_nonce, 1, 0,
						false,
						ctx->head), 0);
	KUNIT_EXPECT_EQ(test, mmt_conn_tx_build(ctx->src, 1, MMT_CONN_TEST_GEN,
						mmt_conn_test_nonce, 1, 0,
						false,
						ctx->head), -EPERM);
	KUNIT_EXPECT_EQ(test, mmt_conn_tx_check(ctx->src, MMT_CHANNEL_SECURE,
						&plain), -EPERM);
	mmt_conn_tx_settle(ctx->src, 0, false, -ECANCELED);
	KUNIT_EXPECT_EQ(test, ctx->src->mmts[0].root.state, MMT_VALID);
	KUNIT_EXPECT_EQ(test, mmt_conn_rx_check(ctx->dst, 7,
						MMT_CONN_TEST_GEN, mmt_conn_test_nonce, ctx->head,
						MMT_PEER, false),
			-EINVAL);
}

/*
 * Plain PMOs (no key): the plain and secure channels take them, the MMT
 * channel does not; while a transfer holds one it can be neither keyed
 * nor invalidated (-EBUSY), and afterwards it can.
 */
static void mmt_conn_plain(struct kunit *test)
{
	struct mmt_pmo *pmo = mmt_conn_pmo(test, MMT_CONN_TEST_CLOSURES);
	bool plain = false, plain2 = false;

	KUNIT_EXPECT_EQ(test, mmt_conn_tx_check(pmo, MMT_CHANNEL_MMT, &plain),
			-EPERM);
	KUNIT_EXPECT_EQ(test, mmt_conn_rx_prepare(pmo, MMT_CHANNEL_MMT, 1,
						  &plain), -EPERM);
	KUNIT_ASSERT_EQ(test, mmt_conn_tx_check(pmo, MMT_CHANNEL_PLAIN,
						&plain), 0);
	KUNIT_EXPECT_TRUE(test, plain);
	KUNIT_ASSERT_EQ(test, mmt_conn_rx_prepare(pmo, MMT_CHANNEL_SECURE, 1,
						  &plain2), 0);
	KUNIT_EXPECT_TRUE(test, plain2);
	KUNIT_EXPECT_EQ(test, pmo->plain_xfers, 2u);
	KUNIT_EXPECT_EQ(test, mmt_pmo_set_key(pmo, mmt_conn_key, 16, false),
			-EBUSY);
	KUNIT_EXPECT_TRUE(test, !pmo->crypto);
	/* a second receive of the same PMO: refused, nothing held */
	KUNIT_EXPECT_EQ(test, mmt_conn_rx_prepare(pmo, MMT_CHANNEL_PLAIN, 1,
						  &plain2), -EBUSY);
	KUNIT_EXPECT_FALSE(test, plain2);
	KUNIT_EXPECT_EQ(test, pmo->plain_xfers, 2u);
	mmt_conn_xfer_end(pmo, plain);
	KUNIT_EXPECT_EQ(test, mmt_pmo_set_key(pmo, mmt_conn_key, 16, false),
			-EBUSY);
	mmt_conn_rx_finish(pmo, true);
	KUNIT_EXPECT_EQ(test, pmo->plain_xfers, 0u);
	/* keyed now: formatted, VALID; the plain channel refuses it */
	KUNIT_EXPECT_EQ(test, mmt_pmo_set_key(pmo, mmt_conn_key, 16, false),
			0);
	KUNIT_EXPECT_EQ(test, mmt_conn_tx_check(pmo, MMT_CHANNEL_PLAIN,
						&plain), -EPERM);
	mmt_pmo_free(pmo);
}

/* Secure channel: a second VALID PMO, every byte of its data @fill. */
static struct mmt_pmo *mmt_conn_sec_dst(struct kunit *test, const u8 *key,
					u8 fill)
{
	struct mmt_conn_ctx *ctx = test->priv;
	struct mmt_pmo *dst = mmt_conn_pmo(test, MMT_CONN_TEST_CLOSURES);
	u64 cb = dst->params.data_bytes;
	u32 i;

	KUNIT_ASSERT_EQ(test, mmt_pmo_set_key(dst, key, 16, false), 0);
	memset(ctx->out, fill, cb);
	for (i = 0; i < dst->closures; i++)
		KUNIT_ASSERT_EQ(test, mmt_write(&dst->mmts[i], 0, ctx->out,
						cb), 0);
	return dst;
}

/* Does closure @i of @pmo still hold @fill in every byte? */
static bool mmt_conn_sec_untouched(struct kunit *test, struct mmt_pmo *pmo,
				   u32 i, u8 fill)
{
	struct mmt_conn_ctx *ctx = test->priv;
	u64 cb = pmo->params.data_bytes, j;

	if (mmt_read(&pmo->mmts[i], 0, ctx->out, cb))
		return false;
	for (j = 0; j < cb; j++)
		if (ctx->out[j] != fill)
			return false;
	return true;
}

static const struct mmt_conn_sec_id mmt_conn_sec_id = {
	.conn_id = MMT_CONN_TEST_ID,
	.sender_node = 1,
	.receiver_node = 2,
	.dir = 0,
	.gen = 5,
};

/*
 * Secure channel, seal then open every closure between two PMOs keyed with
 * the same key: the message is not the plaintext, the receiver's data is
 * byte-exact, the root keys are equal (and differ for another key).
 */
static void mmt_conn_secure(struct kunit *test)
{
	static const u8 other_key[16] = { 1 };
	static const u8 other_root[MMT_CHAN_ROOT_BYTES] = { 2 };
	struct mmt_conn_ctx *ctx = test->priv;
	u64 cb = ctx->src->params.data_bytes;
	struct mmt_chan_crypto *tx, *rx;
	struct mmt_pmo *dst, *other;
	u8 *msg, *priv;
	u32 i;

	msg = kunit_kzalloc(test, cb + MMT_CONN_SEC_TAG_BYTES, GFP_KERNEL);
	priv = kunit_kzalloc(test, cb + MMT_CONN_SEC_TAG_BYTES, GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, msg && priv);
	dst = mmt_conn_sec_dst(test, mmt_conn_key, 0xee);
	other = mmt_conn_sec_dst(test, other_key, 0xee);
	KUNIT_EXPECT_EQ(test, memcmp(ctx->src->chan_root, dst->chan_root,
				     MMT_CHAN_ROOT_BYTES), 0);
	KUNIT_EXPECT_NE(test, memcmp(ctx->src->chan_root, other->chan_root,
				     MMT_CHAN_ROOT_BYTES), 0);
	/* a keyed PMO ignores the connection's root */
	tx = mmt_conn_sec_alloc(ctx->src, false, other_root, &mmt_conn_sec_id);
	rx = mmt_conn_sec_alloc(dst, false, NULL, &mmt_conn_sec_id);
	KUNIT_ASSERT_FALSE(test, IS_ERR(tx));
	KUNIT_ASSERT_FALSE(test, IS_ERR(rx));
	for (i = 0; i < MMT_CONN_TEST_CLOSURES; i++) {
		KUNIT_EXPECT_EQ(test, mmt_conn_sec_seal(ctx->src, false, tx, 5, i,
							msg), 0);
		KUNIT_EXPECT_NE(test, memcmp(msg, ctx->plain + i * cb, cb), 0);
		KUNIT_EXPECT_EQ(test, mmt_conn_sec_open(dst, false, rx, 5, i, msg,
							priv), 0);
	}
	KUNIT_EXPECT_EQ(test, mmt_conn_read_all(dst, ctx->out), 0);
	KUNIT_EXPECT_EQ(test, memcmp(ctx->out, ctx->plain, ctx->src->bytes),
			0);
	/* The sender's PMO is unchanged and VALID. */
	KUNIT_EXPECT_EQ(test, ctx->src->mmts[0].root.state, MMT_VALID);
	KUNIT_EXPECT_EQ(test, mmt_conn_read_all(ctx->src, ctx->out), 0);
	KUNIT_EXPECT_EQ(test, memcmp(ctx->out, ctx->plain, ctx->src->bytes),
			0);
	mmt_chan_crypto_free(tx);
	mmt_chan_crypto_free(rx);
	mmt_pmo_free(other);
	mmt_pmo_free(dst);
}

/*
 * Secure channel rejections, each leaving the receiver's closure as it
 * was: a tampered byte (EBADMSG, counted in mmt/stats), another key,
 * another binding or AD (EBADMSG), a replayed or reordered index (ESTALE);
 * the untampered message still opens afterwards; a plain PMO without a
 * connection key (ENOKEY).
 */
static void mmt_conn_secure_reject(struct kunit *test)
{
	static const u8 other_key[16] = { 1 };
	struct mmt_conn_ctx *ctx = test->priv;
	u64 cb = ctx->src->params.data_bytes;
	struct mmt_conn_sec_id id = mmt_conn_sec_id;
	struct mmt_chan_crypto *tx, *rx, *wrong, *bound;
	u8 *m0, *m1, *m2, *priv;
	struct mmt_pmo *dst, *other, *bare;
	s64 badmsg, stale;

	m0 = kunit_kzalloc(test, cb + MMT_CONN_SEC_TAG_BYTES, GFP_KERNEL);
	m1 = kunit_kzalloc(test, cb + MMT_CONN_SEC_TAG_BYTES, GFP_KERNEL);
	m2 = kunit_kzalloc(test, cb + MMT_CONN_SEC_TAG_BYTES, GFP_KERNEL);
	priv = kunit_kzalloc(test, cb + MMT_CONN_SEC_TAG_BYTES, GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, m0 && m1 && m2 && priv);
	dst = mmt_conn_sec_dst(test, mmt_conn_key, 0xee);
	other = mmt_conn_sec_dst(test, other_key, 0xee);
	tx = mmt_conn_sec_alloc(ctx->src, false, NULL, &id);
	rx = mmt_conn_sec_alloc(dst, false, NULL, &id);
	wrong = mmt_conn_sec_alloc(other, false, NULL, &id);
	id.dir = 1;	/* the other direction of the same connection */
	bound = mmt_conn_sec_alloc(dst, false, NULL, &id);
	KUNIT_ASSERT_FALSE(test, IS_ERR(tx) || IS_ERR(rx) || IS_ERR(wrong) ||
			   IS_ERR(bound));
	KUNIT_ASSERT_EQ(test, mmt_conn_sec_seal(ctx->src, false, tx, 5, 0, m0), 0);
	KUNIT_ASSERT_EQ(test, mmt_conn_sec_seal(ctx->src, false, tx, 5, 1, m1), 0);
	KUNIT_ASSERT_EQ(test, mmt_conn_sec_seal(ctx->src, false, tx, 5, 2, m2), 0);
	/* Sealing an index again on one context is refused (nonce reuse). */
	KUNIT_EXPECT_EQ(test, mmt_conn_sec_seal(ctx->src, false, tx, 5, 2, priv),
			-EINVAL);

	badmsg = atomic64_read(&mmt_stats.reject[MMT_REJ_BADMSG]);
	stale = atomic64_read(&mmt_stats.reject[MMT_REJ_STALE]);
	/* Tampered ciphertext byte, then tag byte. */
	m0[cb / 2] ^= 0x01;
	KUNIT_EXPECT_EQ(test, mmt_conn_sec_open(dst, false, rx, 5, 0, m0, priv),
			-EBADMSG);
	m0[cb / 2] ^= 0x01;
	m0[cb + 3] ^= 0x80;
	KUNIT_EXPECT_EQ(test, mmt_conn_sec_open(dst, false, rx, 5, 0, m0, priv),
			-EBADMSG);
	m0[cb + 3] ^= 0x80;
	KUNIT_EXPECT_TRUE(test, mmt_conn_sec_untouched(test, dst, 0, 0xee));
	KUNIT_EXPECT_EQ(test, atomic64_read(&mmt_stats.reject[MMT_REJ_BADMSG]),
			badmsg + 2);
	/* Another key; another binding; another AD (generation). */
	KUNIT_EXPECT_EQ(test, mmt_conn_sec_open(other, false, wrong, 5, 0, m0, priv),
			-EBADMSG);
	KUNIT_EXPECT_TRUE(test, mmt_conn_sec_untouched(test, other, 0, 0xee));
	KUNIT_EXPECT_EQ(test, mmt_conn_sec_open(dst, false, bound, 5, 0, m0, priv),
			-EBADMSG);
	KUNIT_EXPECT_EQ(test, mmt_conn_sec_open(dst, false, rx, 6, 0, m0, priv),
			-EBADMSG);
	/* A message of another index under this one's */
	KUNIT_EXPECT_EQ(test, mmt_conn_sec_open(dst, false, rx, 5, 0, m1, priv),
			-EBADMSG);
	KUNIT_EXPECT_TRUE(test, mmt_conn_sec_untouched(test, dst, 0, 0xee));
	KUNIT_EXPECT_TRUE(test, mmt_conn_sec_untouched(test, dst, 1, 0xee));
	/* Failed opens moved nothing: the genuine message still opens. */
	KUNIT_EXPECT_EQ(test, mmt_conn_sec_open(dst, false, rx, 5, 0, m0, priv), 0);
	KUNIT_EXPECT_FALSE(test, mmt_conn_sec_untouched(test, dst, 0, 0xee));
	/* Replay of 0, then 2 before 1: 1 is refused as reordered. */
	KUNIT_EXPECT_EQ(test, mmt_conn_sec_open(dst, false, rx, 5, 0, m0, priv),
			-ESTALE);
	KUNIT_EXPECT_EQ(test, mmt_conn_sec_open(dst, false, rx, 5, 2, m2, priv), 0);
	KUNIT_EXPECT_EQ(test, mmt_conn_sec_open(dst, false, rx, 5, 1, m1, priv),
			-ESTALE);
	KUNIT_EXPECT_TRUE(test, mmt_conn_sec_untouched(test, dst, 1, 0xee));
	KUNIT_EXPECT_EQ(test, atomic64_read(&mmt_stats.reject[MMT_REJ_STALE]),
			stale + 2);
	KUNIT_EXPECT_EQ(test, mmt_conn_sec_open(dst, false, rx, 5, 3, m1, priv),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, mmt_read(&dst->mmts[2], 0, ctx->out, cb), 0);
	KUNIT_EXPECT_EQ(test, memcmp(ctx->out, ctx->plain + 2 * cb, cb), 0);

	bare = mmt_conn_pmo(test, MMT_CONN_TEST_CLOSURES);
	/* a plain PMO and no connection key */
	KUNIT_EXPECT_EQ(test, PTR_ERR(mmt_conn_sec_alloc(bare, true, NULL, &id)),
			-ENOKEY);
	/* taken as keyed, the key gone since (invalidated) */
	KUNIT_EXPECT_EQ(test, PTR_ERR(mmt_conn_sec_alloc(bare, false, NULL,
							 &id)), -EPERM);
	mmt_pmo_free(bare);
	mmt_chan_crypto_free(tx);
	mmt_chan_crypto_free(rx);
	mmt_chan_crypto_free(wrong);
	mmt_chan_crypto_free(bound);
	mmt_pmo_free(other);
	mmt_pmo_free(dst);
}

/*
 * Secure channel on plain PMOs (no key): sealed straight from the sender
 * PMO's memory under the connection's root, opened into the receiver
 * PMO's memory; byte-exact, the message is not the plaintext; another
 * connection root fails (EBADMSG) and leaves the receiver's bytes as they
 * were; a keyed receiver ignores the connection root.
 */
static void mmt_conn_secure_plain(struct kunit *test)
{
	static const u8 root[MMT_CHAN_ROOT_BYTES] = { 7, 7, 7 };
	static const u8 other_root[MMT_CHAN_ROOT_BYTES] = { 8 };
	struct mmt_conn_ctx *ctx = test->priv;
	struct mmt_pmo *a = mmt_conn_pmo(test, MMT_CONN_TEST_CLOSURES);
	struct mmt_pmo *b = mmt_conn_pmo(test, MMT_CONN_TEST_CLOSURES);
	u64 cb = a->params.data_bytes;
	struct mmt_chan_crypto *tx, *rx, *wrong;
	u8 *msg, *priv;
	u32 i;

	msg = kunit_kzalloc(test, cb + MMT_CONN_SEC_TAG_BYTES, GFP_KERNEL);
	priv = kunit_kzalloc(test, cb + MMT_CONN_SEC_TAG_BYTES, GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, msg && priv);
	for (i = 0; i < a->closures; i++) {
		memcpy(a->mmts[i].data, ctx->plain + i * cb, cb);
		memset(b->mmts[i].data, 0xee, cb);
	}
	tx = mmt_conn_sec_alloc(a, true, root, &mmt_conn_sec_id);
	rx = mmt_conn_sec_alloc(b, true, root, &mmt_conn_sec_id);
	wrong = mmt_conn_sec_alloc(b, true, other_root, &mmt_conn_sec_id);
	KUNIT_ASSERT_FALSE(test, IS_ERR(tx) || IS_ERR(rx) || IS_ERR(wrong));
	KUNIT_ASSERT_EQ(test, mmt_conn_sec_seal(a, true, tx, 5, 0, msg), 0);
	KUNIT_EXPECT_NE(test, memcmp(msg, ctx->plain, cb), 0);
	KUNIT_EXPECT_EQ(test, mmt_conn_sec_open(b, true, wrong, 5, 0, msg, priv),
			-EBADMSG);
	KUNIT_EXPECT_PTR_EQ(test, memchr_inv(b->mmts[0].data, 0xee, cb), NULL);
	KUNIT_EXPECT_EQ(test, mmt_conn_sec_open(b, true, rx, 5, 0, msg, priv), 0);
	for (i = 1; i < a->closures; i++) {
		KUNIT_EXPECT_EQ(test, mmt_conn_sec_seal(a, true, tx, 5, i, msg), 0);
		KUNIT_EXPECT_EQ(test, mmt_conn_sec_open(b, true, rx, 5, i, msg, priv),
				0);
	}
	for (i = 0; i < a->closures; i++) {
		KUNIT_EXPECT_EQ(test, memcmp(b->mmts[i].data,
					     ctx->plain + i * cb, cb), 0);
		KUNIT_EXPECT_EQ(test, memcmp(a->mmts[i].data,
					     ctx->plain + i * cb, cb), 0);
	}
	mmt_chan_crypto_free(tx);
	mmt_chan_crypto_free(rx);
	mmt_chan_crypto_free(wrong);
	mmt_pmo_free(a);
	mmt_pmo_free(b);
}

static void mmt_conn_key_arg(struct kunit *test)
{
	struct mmt_conn_key k = { .size = sizeof(k), .key_len = 16 };

	KUNIT_EXPECT_EQ(test, mmt_conn_key_args(&k), 0);
	k.key_len = 32;
	KUNIT_EXPECT_EQ(test, mmt_conn_key_args(&k), 0);
	k.key_len = 24;
	KUNIT_EXPECT_EQ(test, mmt_conn_key_args(&k), -EINVAL);
	k.key_len = 16;
	k.key[16] = 1;
	KUNIT_EXPECT_EQ(test, mmt_conn_key_args(&k), -EINVAL);
	k.key[16] = 0;
	k.flags = 1;
	KUNIT_EXPECT_EQ(test, mmt_conn_key_args(&k), -EINVAL);
}

static void mmt_conn_wire(struct kunit *test)
{
	struct mmt_conn_ctx *ctx = test->priv;
	struct mmt_wire_msg *w = kunit_kzalloc(test, sizeof(*w), GFP_KERNEL);
	struct mmt_msg *m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	size_t fixed = offsetof(struct mmt_wire_msg, segs);
	struct mmt_bind b;

	KUNIT_ASSERT_NOT_NULL(test, w);
	KUNIT_ASSERT_NOT_NULL(test, m);
	mmt_wire_offer_fill(w, ctx->src, MMT_CHANNEL_MMT, true, false);
	w->gen = cpu_to_le32(7);
	KUNIT_ASSERT_EQ(test, mmt_wire_decode(w, sizeof(*w), m), 0);
	KUNIT_EXPECT_EQ(test, m->type, (u32)MMT_MSG_OFFER);
	KUNIT_EXPECT_EQ(test, m->gen, 7u);
	KUNIT_EXPECT_EQ(test, mmt_wire_offer_check(m, ctx->dst,
						   MMT_CHANNEL_MMT, false), 0);
	KUNIT_EXPECT_EQ(test, mmt_wire_offer_check(m, ctx->dst,
						   MMT_CHANNEL_PLAIN, false), -EPROTO);
	w->closures = cpu_to_le32(MMT_CONN_TEST_CLOSURES + 1);
	KUNIT_ASSERT_EQ(test, mmt_wire_decode(w, sizeof(*w), m), 0);
	KUNIT_EXPECT_EQ(test, mmt_wire_offer_check(m, ctx->dst,
						   MMT_CHANNEL_MMT, false),
			-EMEDIUMTYPE);
	w->closures = cpu_to_le32(MMT_CONN_TEST_CLOSURES);
	w->log_arity[3] = 1;
	KUNIT_ASSERT_EQ(test, mmt_wire_decode(w, sizeof(*w), m), 0);
	KUNIT_EXPECT_EQ(test, mmt_wire_offer_check(m, ctx->dst,
						   MMT_CHANNEL_MMT, false),
			-EMEDIUMTYPE);
	w->log_arity[3] = 0;
	/* the sender's PMO plain, the receiver's keyed (or the reverse) */
	mmt_wire_offer_fill(w, ctx->src, MMT_CHANNEL_SECURE, false, true);
	KUNIT_ASSERT_EQ(test, mmt_wire_decode(w, sizeof(*w), m), 0);
	KUNIT_EXPECT_EQ(test, mmt_wire_offer_check(m, ctx->dst,
						   MMT_CHANNEL_SECURE, false),
			-EMEDIUMTYPE);
	KUNIT_EXPECT_EQ(test, mmt_wire_offer_check(m, ctx->dst,
						   MMT_CHANNEL_SECURE, true), 0);
	mmt_wire_offer_fill(w, ctx->src, MMT_CHANNEL_SECURE, false, false);
	KUNIT_ASSERT_EQ(test, mmt_wire_decode(w, sizeof(*w), m), 0);
	KUNIT_EXPECT_EQ(test, mmt_wire_offer_check(m, ctx->dst,
						   MMT_CHANNEL_SECURE, true),
			-EMEDIUMTYPE);
	mmt_wire_offer_fill(w, ctx->src, MMT_CHANNEL_MMT, true, false);
	w->flags = cpu_to_le32(4);
	KUNIT_ASSERT_EQ(test, mmt_wire_decode(w, sizeof(*w), m), 0);
	KUNIT_EXPECT_EQ(test, mmt_wire_offer_check(m, ctx->dst,
						   MMT_CHANNEL_MMT, false), -EPROTO);
	w->flags = 0;

	/* malformed messages */
	KUNIT_EXPECT_EQ(test, mmt_wire_decode(w, fixed - 1, m), -EMSGSIZE);
	w->type = MMT_MSG_GRANT;
	w->nsegs = 2;
	KUNIT_EXPECT_EQ(test, mmt_wire_decode(w, fixed + 16, m), -EMSGSIZE);
	KUNIT_EXPECT_EQ(test, mmt_wire_decode(w, fixed + 32, m), 0);
	w->nsegs = MMT_WIRE_MAX_SEGS + 1;
	KUNIT_EXPECT_EQ(test, mmt_wire_decode(w, sizeof(*w), m), -EMSGSIZE);
	w->nsegs = 0;
	w->type = MMT_MSG_DONE;	/* never a SEND */
	KUNIT_EXPECT_EQ(test, mmt_wire_decode(w, sizeof(*w), m), -EPROTO);
	w->type = MMT_MSG_ACK;
	w->err = cpu_to_le32(EBADMSG);
	KUNIT_ASSERT_EQ(test, mmt_wire_decode(w, sizeof(*w), m), 0);
	KUNIT_EXPECT_EQ(test, m->err, -EBADMSG);
	/* a failure of the receiver's own, not a verdict on the closure */
	w->err = cpu_to_le32(EPERM);
	KUNIT_ASSERT_EQ(test, mmt_wire_decode(w, sizeof(*w), m), 0);
	KUNIT_EXPECT_EQ(test, m->err, -EREMOTEIO);
	w->err = cpu_to_le32(ECANCELED);
	KUNIT_ASSERT_EQ(test, mmt_wire_decode(w, sizeof(*w), m), 0);
	KUNIT_EXPECT_EQ(test, m->err, -EREMOTEIO);
	/*
	 * Review L2: the tag covers the verdict as sent, so a genuine
	 * refusal for a reason of the receiver's own (ECANCELED, EPERM)
	 * authenticates (and one with another verdict does not).
	 */
	KUNIT_EXPECT_EQ(test, m->wire_err, -ECANCELED);
	mmt_conn_ack_bind(&b);
	w->index = cpu_to_le32(MMT_MIG_COMMIT_INDEX);
	memcpy(w->nonce, b.rx_nonce, MMT_RX_NONCE_BYTES);
	KUNIT_ASSERT_EQ(test, mmt_conn_ack_tag(ctx->dst, &b,
					       MMT_MIG_COMMIT_INDEX, 0,
					       -ECANCELED, w->tag), 0);
	KUNIT_ASSERT_EQ(test, mmt_wire_decode(w, sizeof(*w), m), 0);
	KUNIT_EXPECT_TRUE(test, mmt_conn_ack_genuine(ctx->src, &b, m, 0));
	/* the verdict acted on must be the one the tag covers */
	m->err = 0;
	KUNIT_EXPECT_FALSE(test, mmt_conn_ack_genuine(ctx->src, &b, m, 0));
	w->err = cpu_to_le32(EPERM);
	KUNIT_ASSERT_EQ(test, mmt_wire_decode(w, sizeof(*w), m), 0);
	KUNIT_EXPECT_FALSE(test, mmt_conn_ack_genuine(ctx->src, &b, m, 0));
	KUNIT_ASSERT_EQ(test, mmt_conn_ack_tag(ctx->dst, &b,
					       MMT_MIG_COMMIT_INDEX, 0, -EPERM,
					       w->tag), 0);
	KUNIT_ASSERT_EQ(test, mmt_wire_decode(w, sizeof(*w), m), 0);
	KUNIT_EXPECT_TRUE(test, mmt_conn_ack_genuine(ctx->src, &b, m, 0));
	/* ... for this receive only */
	b.rx_nonce[1] ^= 1;
	KUNIT_EXPECT_FALSE(test, mmt_conn_ack_genuine(ctx->src, &b, m, 0));
	memset(w->nonce, 0, sizeof(w->nonce));
	memset(w->tag, 0, sizeof(w->tag));
	w->index = 0;
	w->err = cpu_to_le32(MAX_ERRNO + 1);
	KUNIT_EXPECT_EQ(test, mmt_wire_decode(w, sizeof(*w), m), -EPROTO);
	w->err = 0;
	w->reserved1[1] = 1;
	KUNIT_EXPECT_EQ(test, mmt_wire_decode(w, sizeof(*w), m), -EPROTO);
	w->reserved1[1] = 0;
	w->magic = 0;
	KUNIT_EXPECT_EQ(test, mmt_wire_decode(w, sizeof(*w), m), -EPROTO);
}

static void mmt_conn_xfer_arg(struct kunit *test)
{
	struct mmt_xfer x = { .size = sizeof(x) };

	KUNIT_EXPECT_EQ(test, mmt_conn_xfer_args(&x), 0);
	x.flags = 4;
	KUNIT_EXPECT_EQ(test, mmt_conn_xfer_args(&x), -EINVAL);
	x.flags = MMT_XFER_COPY;
	x.channel = 3;
	KUNIT_EXPECT_EQ(test, mmt_conn_xfer_args(&x), -EINVAL);
	x.channel = MMT_CHANNEL_PLAIN;
	x.timeout_ms = 600001;
	KUNIT_EXPECT_EQ(test, mmt_conn_xfer_args(&x), -EINVAL);
	x.timeout_ms = 600000;
	KUNIT_EXPECT_EQ(test, mmt_conn_xfer_args(&x), 0);
	x.closures = 1;
	KUNIT_EXPECT_EQ(test, mmt_conn_xfer_args(&x), -EINVAL);
	x.closures = 0;
	x.reserved[1] = 1;
	KUNIT_EXPECT_EQ(test, mmt_conn_xfer_args(&x), -EINVAL);
}

/* struct mmt_migrate checks; the migration's messages and offer. */
static void mmt_conn_migrate_arg(struct kunit *test)
{
	struct mmt_conn_ctx *ctx = test->priv;
	struct mmt_migrate a = { .size = sizeof(a) };
	struct mmt_wire_msg *w = kunit_kzalloc(test, sizeof(*w), GFP_KERNEL);
	struct mmt_msg *m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	struct mmt_mig mig;
	bool plain;

	KUNIT_ASSERT_NOT_NULL(test, w);
	KUNIT_ASSERT_NOT_NULL(test, m);
	KUNIT_EXPECT_EQ(test, mmt_conn_migrate_args(&a, true), 0);
	KUNIT_EXPECT_EQ(test, mmt_conn_migrate_args(&a, false), 0);
	a.flags = MMT_MIGRATE_EAGER;
	KUNIT_EXPECT_EQ(test, mmt_conn_migrate_args(&a, true), -EINVAL);
	KUNIT_EXPECT_EQ(test, mmt_conn_migrate_args(&a, false), 0);
	a.flags = MMT_MIGRATE_PARK;	/* the receiver's too */
	KUNIT_EXPECT_EQ(test, mmt_conn_migrate_args(&a, true), -EINVAL);
	KUNIT_EXPECT_EQ(test, mmt_conn_migrate_args(&a, false), 0);
	a.flags = MMT_MIGRATE_EAGER | MMT_MIGRATE_PARK;
	KUNIT_EXPECT_EQ(test, mmt_conn_migrate_args(&a, false), 0);
	a.flags = 4;
	KUNIT_EXPECT_EQ(test, mmt_conn_migrate_args(&a, false), -EINVAL);
	a.flags = 0;
	a.downtime_limit_ms = 600000;
	a.max_rounds = 1000;
	a.window = MMT_MIGRATE_WINDOW_MAX;
	a.timeout_ms = 600000;
	KUNIT_EXPECT_EQ(test, mmt_conn_migrate_args(&a, true), 0);
	/* the sender's knobs are not the receiver's */
	KUNIT_EXPECT_EQ(test, mmt_conn_migrate_args(&a, false), -EINVAL);
	a.downtime_limit_ms = 600001;
	KUNIT_EXPECT_EQ(test, mmt_conn_migrate_args(&a, true), -EINVAL);
	a.downtime_limit_ms = 1;
	a.max_rounds = 1001;
	KUNIT_EXPECT_EQ(test, mmt_conn_migrate_args(&a, true), -EINVAL);
	a.max_rounds = 1;
	a.window = MMT_MIGRATE_WINDOW_MAX + 1;
	KUNIT_EXPECT_EQ(test, mmt_conn_migrate_args(&a, true), -EINVAL);
	a.window = 1;
	a.timeout_ms = 600001;
	KUNIT_EXPECT_EQ(test, mmt_conn_migrate_args(&a, true), -EINVAL);
	a.timeout_ms = 0;
	a.reserved0 = 1;
	KUNIT_EXPECT_EQ(test, mmt_conn_migrate_args(&a, true), -EINVAL);
	a.reserved0 = 0;
	a.reserved[1] = 1;
	KUNIT_EXPECT_EQ(test, mmt_conn_migrate_args(&a, true), -EINVAL);

	/* WANT, COMMIT and the handshake's decode; nothing past them does */
	w->magic = cpu_to_le32(MMT_WIRE_MSG_MAGIC);
	w->type = MMT_MSG_WANT;
	w->index = cpu_to_le32(3);
	KUNIT_ASSERT_EQ(test, mmt_wire_decode(w, sizeof(*w), m), 0);
	KUNIT_EXPECT_EQ(test, m->type, (u32)MMT_MSG_WANT);
	KUNIT_EXPECT_EQ(test, m->index, 3u);
	w->type = MMT_MSG_COMMIT;
	w->nsegs = 2;
	KUNIT_ASSERT_EQ(test, mmt_wire_decode(w, sizeof(*w), m), 0);
	KUNIT_EXPECT_EQ(test, m->type, (u32)MMT_MSG_COMMIT);
	w->type = MMT_MSG_HS_CONFIRM;
	KUNIT_ASSERT_EQ(test, mmt_wire_decode(w, sizeof(*w), m), 0);
	KUNIT_EXPECT_EQ(test, m->type, (u32)MMT_MSG_HS_CONFIRM);
	w->type = MMT_MSG_AGREE_CONFIRM;
	KUNIT_ASSERT_EQ(test, mmt_wire_decode(w, sizeof(*w), m), 0);
	w->type = MMT_MSG_CRED;
	KUNIT_ASSERT_EQ(test, mmt_wire_decode(w, sizeof(*w), m), 0);
	KUNIT_EXPECT_EQ(test, m->type, (u32)MMT_MSG_CRED);
	w->type = MMT_MSG_MIG_QUERY;
	KUNIT_ASSERT_EQ(test, mmt_wire_decode(w, sizeof(*w), m), 0);
	KUNIT_EXPECT_EQ(test, m->type, (u32)MMT_MSG_MIG_QUERY);
	w->type = MMT_MSG_MIG_STATEMENT;
	KUNIT_ASSERT_EQ(test, mmt_wire_decode(w, sizeof(*w), m), 0);
	KUNIT_EXPECT_EQ(test, m->type, (u32)MMT_MSG_MIG_STATEMENT);
	w->type = MMT_MSG_MIG_STATEMENT + 1;
	KUNIT_EXPECT_EQ(test, mmt_wire_decode(w, sizeof(*w), m), -EPROTO);
	/* a transfer's receive refuses a migration's offer */
	mmt_wire_offer_fill(w, ctx->src, MMT_CHANNEL_MMT, false, false);
	w->flags = cpu_to_le32(MMT_WIRE_OFFER_MIGRATE);
	KUNIT_ASSERT_EQ(test, mmt_wire_decode(w, sizeof(*w), m), 0);
	KUNIT_EXPECT_EQ(test, mmt_wire_offer_check(m, ctx->dst,
						   MMT_CHANNEL_MMT, false), -EPROTO);
	/* a PMO being migrated takes no transfer either way */
	mmt_mig_init(&mig, true);
	mutex_lock(&ctx->src->lock);
	ctx->src->mig = &mig;
	mutex_unlock(&ctx->src->lock);
	KUNIT_EXPECT_EQ(test, mmt_conn_tx_check(ctx->src, MMT_CHANNEL_MMT,
						&plain), -EBUSY);
	KUNIT_EXPECT_EQ(test, mmt_conn_rx_prepare(ctx->src, MMT_CHANNEL_MMT, 1,
						  &plain), -EBUSY);
	mutex_lock(&ctx->src->lock);
	ctx->src->mig = NULL;
	mutex_unlock(&ctx->src->lock);
}

/*
 * The connection id: SHA-256 known answers computed independently
 * (Python hashlib over "mmt v1 conn id" || le64 || le64), and each side's
 * nonce changes it.
 */
static void mmt_conn_id(struct kunit *test)
{
	u64 c = 0x0123456789abcdefull, a = 0xfedcba9876543210ull;

	KUNIT_EXPECT_EQ(test, mmt_conn_id_derive(c, a), 0x9d19bfe17248091bull);
	KUNIT_EXPECT_EQ(test, mmt_conn_id_derive(0, 0), 0xdab00605d5f8d0a1ull);
	/* a replayed connect request gets a new id from the acceptor */
	KUNIT_EXPECT_NE(test, mmt_conn_id_derive(c, a),
			mmt_conn_id_derive(c, a + 1));
	KUNIT_EXPECT_NE(test, mmt_conn_id_derive(c, a),
			mmt_conn_id_derive(c + 1, a));
	KUNIT_EXPECT_NE(test, mmt_conn_id_derive(c, a),
			mmt_conn_id_derive(a, c));
}

static struct kunit_case mmt_conn_cases[] = {
	KUNIT_CASE(mmt_conn_id),
	KUNIT_CASE(mmt_conn_migrate_arg),
	KUNIT_CASE(mmt_conn_transfer),
	KUNIT_CASE(mmt_conn_copy_eager),
	KUNIT_CASE(mmt_conn_tamper_region),
	KUNIT_CASE(mmt_conn_tamper_head),
	KUNIT_CASE(mmt_conn_replay),
	KUNIT_CASE(mmt_conn_earlier_transfer),
	KUNIT_CASE(mmt_conn_keyings),
	KUNIT_CASE(mmt_conn_other_receive),
	KUNIT_CASE(mmt_conn_one_receive),
	KUNIT_CASE(mmt_conn_ack_tags),
	KUNIT_CASE(mmt_conn_lost_ack),
	KUNIT_CASE(mmt_conn_states),
	KUNIT_CASE(mmt_conn_plain),
	KUNIT_CASE(mmt_conn_secure),
	KUNIT_CASE(mmt_conn_secure_reject),
	KUNIT_CASE(mmt_conn_secure_plain),
	KUNIT_CASE(mmt_conn_key_arg),
	KUNIT_CASE(mmt_conn_wire),
	KUNIT_CASE(mmt_conn_xfer_arg),
	{}
};

static struct kunit_suite mmt_conn_suite = {
	.name = "mmt_conn",
	.init = mmt_conn_test_init,
	.exit = mmt_conn_test_exit,
	.test_cases = mmt_conn_cases,
};

kunit_test_suites(&mmt_conn_suite);
