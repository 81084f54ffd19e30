// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_delegate_test.c - suite mmt_delegate: PMOs and closure delegation
 * over the loopback transport, through the driver's own code path
 * (driver/mmt_pmo.c, mmt_delegate.c, mmt_loopback.c).  KUnit only: it
 * needs the driver, which the user-space build does not have.
 */
#include <kunit/test.h>
#include <linux/slab.h>

#include "mmt_internal.h"
#include "mmt_transport.h"

/* 2 levels, arities 8 and 4, 64-byte blocks: 2 KiB closures. */
static const u8 mmt_test_log_arity[MMT_MAX_LEVELS] = { 3, 2 };
#define MMT_TEST_CLOSURES 3

static const u8 mmt_test_key[16] = {
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
	0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
};

struct mmt_delegate_ctx {
	struct mmt_pmo *src;
	struct mmt_pmo *dst;
	u8 *plain;	/* what src holds */
	u8 *out;
};

static struct mmt_pmo *mmt_test_pmo(struct kunit *test)
{
	struct mmt_params p;
	struct mmt_pmo *pmo;

	KUNIT_ASSERT_EQ(test, mmt_params_init(&p, 2, mmt_test_log_arity, 6),
			0);
	pmo = mmt_pmo_alloc(&p, MMT_TEST_CLOSURES);
	KUNIT_ASSERT_FALSE(test, IS_ERR(pmo));
	return pmo;
}

static int mmt_delegate_init(struct kunit *test)
{
	struct mmt_delegate_ctx *ctx;
	u32 i;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx);
	test->priv = ctx;
	ctx->src = mmt_test_pmo(test);
	ctx->dst = mmt_test_pmo(test);
	ctx->plain = kunit_kzalloc(test, ctx->src->bytes, GFP_KERNEL);
	ctx->out = kunit_kzalloc(test, ctx->src->bytes, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx->plain);
	KUNIT_ASSERT_NOT_NULL(test, ctx->out);
	for (i = 0; i < ctx->src->bytes; i++)
		ctx->plain[i] = i * 7 + (i >> 8);

	KUNIT_ASSERT_EQ(test, mmt_pmo_set_key(ctx->src, mmt_test_key, 16,
					      false), 0);
	for (i = 0; i < ctx->src->closures; i++)
		KUNIT_ASSERT_EQ(test, mmt_write(&ctx->src->mmts[i], 0,
			ctx->plain + i * ctx->src->params.data_bytes,
			ctx->src->params.data_bytes), 0);
	return 0;
}

static void mmt_delegate_exit(struct kunit *test)
{
	struct mmt_delegate_ctx *ctx = test->priv;

	if (ctx && ctx->src)
		mmt_pmo_free(ctx->src);
	if (ctx && ctx->dst)
		mmt_pmo_free(ctx->dst);
}

/* Reads every closure of @pmo into @out; returns the first error. */
static int mmt_test_read_all(struct mmt_pmo *pmo, u8 *out)
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

static void mmt_expect_states(struct kunit *test, struct mmt_pmo *pmo,
			      enum mmt_state state, bool read_only)
{
	u32 i;

	for (i = 0; i < pmo->closures; i++) {
		KUNIT_EXPECT_EQ(test, pmo->mmts[i].root.state, state);
		KUNIT_EXPECT_EQ(test, pmo->mmts[i].root.read_only, read_only);
	}
}

static void mmt_delegate_transfer(struct kunit *test)
{
	struct mmt_delegate_ctx *ctx = test->priv;
	u64 sent = 99;

	KUNIT_ASSERT_EQ(test, mmt_pmo_set_key(ctx->dst, mmt_test_key, 16,
					      true), 0);
	mmt_expect_states(test, ctx->dst, MMT_WAITING, false);
	KUNIT_ASSERT_EQ(test, mmt_delegate_loopback(ctx->src, ctx->dst, false,
						    false, &sent), 0);
	KUNIT_EXPECT_EQ(test, sent, (u64)MMT_TEST_CLOSURES);
	mmt_expect_states(test, ctx->src, MMT_INVALID, false);
	mmt_expect_states(test, ctx->dst, MMT_VALID, false);
	KUNIT_ASSERT_EQ(test, mmt_test_read_all(ctx->dst, ctx->out), 0);
	KUNIT_EXPECT_EQ(test, memcmp(ctx->out, ctx->plain, ctx->src->bytes),
			0);
	/* The receiver owns it now: it can write, the sender cannot read. */
	KUNIT_EXPECT_EQ(test, mmt_write(&ctx->dst->mmts[0], 5, "x", 1), 0);
	KUNIT_EXPECT_EQ(test, mmt_read(&ctx->src->mmts[0], 0, ctx->out, 1),
			-EPERM);
}

static void mmt_delegate_copy(struct kunit *test)
{
	struct mmt_delegate_ctx *ctx = test->priv;
	u64 sent;

	KUNIT_ASSERT_EQ(test, mmt_pmo_set_key(ctx->dst, mmt_test_key, 16,
					      true), 0);
	KUNIT_ASSERT_EQ(test, mmt_delegate_loopback(ctx->src, ctx->dst, true,
						    true, &sent), 0);
	KUNIT_EXPECT_EQ(test, sent, (u64)MMT_TEST_CLOSURES);
	mmt_expect_states(test, ctx->src, MMT_VALID, false);
	mmt_expect_states(test, ctx->dst, MMT_VALID, true);
	KUNIT_ASSERT_EQ(test, mmt_test_read_all(ctx->dst, ctx->out), 0);
	KUNIT_EXPECT_EQ(test, memcmp(ctx->out, ctx->plain, ctx->src->bytes),
			0);
	KUNIT_EXPECT_EQ(test, mmt_write(&ctx->dst->mmts[0], 0, "x", 1),
			-EPERM);
	KUNIT_EXPECT_EQ(test, mmt_write(&ctx->src->mmts[0], 0, "x", 1), 0);
}

static void mmt_delegate_wrong_key(struct kunit *test)
{
	struct mmt_delegate_ctx *ctx = test->priv;
	u64 gua0 = ctx->src->mmts[0].root.gua;
	u64 gua1 = ctx->src->mmts[1].root.gua;
	u8 other[16];
	u64 sent = 99;

	memset(other, 0x5a, sizeof(other));
	KUNIT_ASSERT_EQ(test, mmt_pmo_set_key(ctx->dst, other, 16, true), 0);
	KUNIT_EXPECT_EQ(test, mmt_delegate_loopback(ctx->src, ctx->dst, false,
						    false, &sent), -EBADMSG);
	KUNIT_EXPECT_EQ(test, sent, 0ull);
	/* Nothing lost: the sender is VALID with its data, the receiver waits. */
	mmt_expect_states(test, ctx->src, MMT_VALID, false);
	mmt_expect_states(test, ctx->dst, MMT_WAITING, false);
	KUNIT_ASSERT_EQ(test, mmt_test_read_all(ctx->src, ctx->out), 0);
	KUNIT_EXPECT_EQ(test, memcmp(ctx->out, ctx->plain, ctx->src->bytes),
			0);
	/*
	 * A rejection is not authenticated: in transfer mode the sender
	 * re-encrypts the MMT it tried under a fresh GUA; the others were
	 * never sent and keep theirs.
	 */
	KUNIT_EXPECT_NE(test, ctx->src->mmts[0].root.gua, gua0);
	KUNIT_EXPECT_EQ(test, ctx->src->mmts[1].root.gua, gua1);
}

/* A transport that delivers closure i into the receiver's MMT i + 1. */
static int mmt_swap_deliver(struct mmt_transport *t, u32 index,
			    const u8 *buf, size_t len)
{
	struct mmt_pmo *dst = t->priv;

	return mmt_pmo_receive(dst, (index + 1) % dst->closures, buf, len,
			       false);
}

static const struct mmt_transport_ops mmt_swap_ops = {
	.name = "swap",
	.deliver = mmt_swap_deliver,
};

static void mmt_delegate_wrong_slot(struct kunit *test)
{
	struct mmt_delegate_ctx *ctx = test->priv;
	struct mmt_transport t = {
		.ops = &mmt_swap_ops, .priv = ctx->dst, .conn_id = 9,
	};
	u64 gua0 = ctx->src->mmts[0].root.gua, sent = 99;

	KUNIT_ASSERT_EQ(test, mmt_pmo_set_key(ctx->dst, mmt_test_key, 16,
					      true), 0);
	t.peer_node = ctx->dst->rx.self_node;
	ctx->dst->rx.conn_id = 9;
	/* Copy mode: the closure for MMT 0 must not land in MMT 1. */
	KUNIT_EXPECT_EQ(test, mmt_delegate(ctx->src, &t, true, &sent),
			-EILSEQ);
	KUNIT_EXPECT_EQ(test, sent, 0ull);
	mmt_expect_states(test, ctx->src, MMT_VALID, false);
	mmt_expect_states(test, ctx->dst, MMT_WAITING, false);
	KUNIT_EXPECT_EQ(test, ctx->src->mmts[0].root.gua, gua0);
	KUNIT_EXPECT_EQ(test, ctx->dst->rx.last_gua, 0ull);
}

static void mmt_delegate_replay_minimum(struct kunit *test)
{
	struct mmt_delegate_ctx *ctx = test->priv;
	u64 sent;

	KUNIT_ASSERT_EQ(test, mmt_pmo_set_key(ctx->dst, mmt_test_key, 16,
					      true), 0);
	ctx->dst->rx.min_root_counter = 1000;
	KUNIT_EXPECT_EQ(test, mmt_delegate_loopback(ctx->src, ctx->dst, false,
						    false, &sent), -ESTALE);
	KUNIT_EXPECT_EQ(test, sent, 0ull);
	mmt_expect_states(test, ctx->src, MMT_VALID, false);
	mmt_expect_states(test, ctx->dst, MMT_WAITING, false);
}

/* After a rejected transfer the sender can delegate again. */
static void mmt_delegate_retry(struct kunit *test)
{
	struct mmt_delegate_ctx *ctx = test->priv;
	u64 sent;

	KUNIT_ASSERT_EQ(test, mmt_pmo_set_key(ctx->dst, mmt_test_key, 16,
					      true), 0);
	ctx->dst->rx.min_root_counter = 1000;
	KUNIT_ASSERT_EQ(test, mmt_delegate_loopback(ctx->src, ctx->dst, false,
						    false, &sent), -ESTALE);
	/* MMT 0 now has the newest GUA, above MMT 1's and 2's ... */
	KUNIT_EXPECT_GT(test, ctx->src->mmts[0].root.gua,
			ctx->src->mmts[1].root.gua);
	/* ... yet a new connection takes all of them, in order. */
	ctx->dst->rx.min_root_counter = 0;
	KUNIT_ASSERT_EQ(test, mmt_delegate_loopback(ctx->src, ctx->dst, false,
						    true, &sent), 0);
	KUNIT_EXPECT_EQ(test, sent, (u64)MMT_TEST_CLOSURES);
	mmt_expect_states(test, ctx->src, MMT_INVALID, false);
	KUNIT_ASSERT_EQ(test, mmt_test_read_all(ctx->dst, ctx->out), 0);
	KUNIT_EXPECT_EQ(test, memcmp(ctx->out, ctx->plain, ctx->src->bytes),
			0);
}

/* A transport that delivers, then reports the ack lost. */
static int mmt_lost_ack_deliver(struct mmt_transport *t, u32 index,
				const u8 *buf, size_t len)
{
	int err = mmt_pmo_receive(t->priv, index, buf, len, false);

	return err ? err : -ECONNRESET;
}

static const struct mmt_transport_ops mmt_lost_ack_ops = {
	.name = "lost-ack",
	.deliver = mmt_lost_ack_deliver,
};

static void mmt_delegate_lost_ack(struct kunit *test)
{
	struct mmt_delegate_ctx *ctx = test->priv;
	struct mmt_transport t = {
		.ops = &mmt_lost_ack_ops, .priv = ctx->dst, .conn_id = 7,
	};
	u64 old_gua = ctx->src->mmts[0].root.gua, sent;

	KUNIT_ASSERT_EQ(test, mmt_pmo_set_key(ctx->dst, mmt_test_key, 16,
					      true), 0);
	t.peer_node = ctx->dst->rx.self_node;
	ctx->dst->rx.conn_id = 7;
	KUNIT_EXPECT_EQ(test, mmt_delegate(ctx->src, &t, false, &sent),
			-ECONNRESET);
	KUNIT_EXPECT_EQ(test, sent, 0ull);
	/* The receiver accepted closure 0 and owns a writable copy ... */
	KUNIT_EXPECT_EQ(test, ctx->dst->mmts[0].root.state, MMT_VALID);
	KUNIT_EXPECT_EQ(test, ctx->dst->mmts[0].root.gua, old_gua);
	/* ... so the sender got its MMT back under a fresh GUA. */
	KUNIT_EXPECT_EQ(test, ctx->src->mmts[0].root.state, MMT_VALID);
	KUNIT_EXPECT_NE(test, ctx->src->mmts[0].root.gua, old_gua);
	KUNIT_ASSERT_EQ(test, mmt_test_read_all(ctx->src, ctx->out), 0);
	KUNIT_EXPECT_EQ(test, memcmp(ctx->out, ctx->plain, ctx->src->bytes),
			0);
}

/*
 * The sender's own memory fails verification: an eager receiver refuses
 * the closure, and the sender cannot re-encrypt the MMT under a fresh GUA
 * (regua verifies everything first).  It stays VALID and readable under
 * its old GUA, due for a fresh one: no write or send under the old GUA
 * (the receiver might hold a writable copy), each retry fails with
 * -EBADMSG and changes nothing.  Once the memory verifies again the next
 * write re-encrypts it first and goes through, and it delegates again.
 */
static void mmt_delegate_own_memory_bad(struct kunit *test)
{
	struct mmt_delegate_ctx *ctx = test->priv;
	struct mmt *m = &ctx->src->mmts[0];
	u64 cb = ctx->src->params.data_bytes, gua0 = m->root.gua, sent;

	KUNIT_ASSERT_EQ(test, mmt_pmo_set_key(ctx->dst, mmt_test_key, 16,
					      true), 0);
	m->data[100] ^= 0x40;	/* block 1 of MMT 0, in untrusted memory */
	KUNIT_EXPECT_EQ(test, mmt_delegate_loopback(ctx->src, ctx->dst, false,
						    true, &sent), -EBADMSG);
	KUNIT_EXPECT_EQ(test, sent, 0ull);
	KUNIT_EXPECT_EQ(test, m->root.state, MMT_VALID);
	KUNIT_EXPECT_FALSE(test, m->root.read_only);
	KUNIT_EXPECT_TRUE(test, m->root.regua_due);
	KUNIT_EXPECT_EQ(test, m->root.gua, gua0);
	/* readable: the block before the bad one */
	KUNIT_EXPECT_EQ(test, mmt_read(m, 0, ctx->out, 64), 0);
	KUNIT_EXPECT_EQ(test, memcmp(ctx->out, ctx->plain, 64), 0);
	/* not writable or sendable under the old GUA, nothing changes */
	KUNIT_EXPECT_EQ(test, mmt_write(m, 0, "x", 1), -EPERM);
	mutex_lock(&ctx->src->lock);
	KUNIT_EXPECT_EQ(test, mmt_delegate_regua_due(ctx->src, m), -EBADMSG);
	mutex_unlock(&ctx->src->lock);
	KUNIT_EXPECT_EQ(test, mmt_delegate_loopback(ctx->src, ctx->dst, false,
						    true, &sent), -EBADMSG);
	KUNIT_EXPECT_EQ(test, sent, 0ull);
	KUNIT_EXPECT_TRUE(test, m->root.regua_due);
	KUNIT_EXPECT_EQ(test, m->root.gua, gua0);
	mmt_expect_states(test, ctx->dst, MMT_WAITING, false);
	/* the memory is back: re-encrypted under a fresh GUA, then written */
	m->data[100] ^= 0x40;
	mutex_lock(&ctx->src->lock);
	KUNIT_EXPECT_EQ(test, mmt_delegate_regua_due(ctx->src, m), 0);
	mutex_unlock(&ctx->src->lock);
	KUNIT_EXPECT_FALSE(test, m->root.regua_due);
	KUNIT_EXPECT_GT(test, m->root.gua, gua0);
	KUNIT_EXPECT_EQ(test, mmt_write(m, 5, "x", 1), 0);
	ctx->plain[5] = 'x';
	/* and nothing is lost: every closure delegates, byte-exact */
	KUNIT_ASSERT_EQ(test, mmt_delegate_loopback(ctx->src, ctx->dst, false,
						    true, &sent), 0);
	KUNIT_EXPECT_EQ(test, sent, (u64)MMT_TEST_CLOSURES);
	KUNIT_ASSERT_EQ(test, mmt_test_read_all(ctx->dst, ctx->out), 0);
	KUNIT_EXPECT_EQ(test, memcmp(ctx->out, ctx->plain, 3 * cb), 0);
}

/*
 * A transport whose receiver is invalidated, and keyed again (WAITING),
 * before closure 1 arrives: the receive has lost its PMO and refuses the
 * rest with -EPERM.  Its rules went with the key, and before rx_lost the
 * wiped connection id refused them with -EXDEV, which a local delegation
 * does not document (mmt-fuzz --cases found it).
 */
static int mmt_rekey_deliver(struct mmt_transport *t, u32 index,
			     const u8 *buf, size_t len)
{
	struct mmt_pmo *dst = t->priv;

	if (index == 1 && (mmt_pmo_wipe(dst) ||
			   mmt_pmo_set_key(dst, mmt_test_key, 16, true)))
		return -EIO;	/* the test's own steps failed */
	return mmt_pmo_receive(dst, index, buf, len, false);
}

static const struct mmt_transport_ops mmt_rekey_ops = {
	.name = "rekey",
	.deliver = mmt_rekey_deliver,
};

static void mmt_delegate_invalidated_receive(struct kunit *test)
{
	struct mmt_delegate_ctx *ctx = test->priv;
	struct mmt_transport t = {
		.ops = &mmt_rekey_ops, .priv = ctx->dst, .conn_id = 7,
	};
	u64 sent = 99;

	KUNIT_ASSERT_EQ(test, mmt_pmo_set_key(ctx->dst, mmt_test_key, 16,
					      true), 0);
	/* the receive holds the PMO, as mmt_loopback_connect() does it */
	mutex_lock(&ctx->dst->lock);
	ctx->dst->receiving = true;
	mmt_pmo_rx_start(ctx->dst, 7, ctx->dst->rx.self_node);
	mutex_unlock(&ctx->dst->lock);
	t.peer_node = ctx->dst->rx.self_node;
	KUNIT_EXPECT_EQ(test, mmt_delegate(ctx->src, &t, true, &sent), -EPERM);
	KUNIT_EXPECT_EQ(test, sent, 1ull);
	/* the receiver is WAITING under its new keying, the sender VALID */
	mmt_expect_states(test, ctx->dst, MMT_WAITING, false);
	mmt_expect_states(test, ctx->src, MMT_VALID, false);
	/* that receive over, a new one takes every closure */
	mutex_lock(&ctx->dst->lock);
	ctx->dst->receiving = false;
	mutex_unlock(&ctx->dst->lock);
	KUNIT_ASSERT_EQ(test, mmt_delegate_loopback(ctx->src, ctx->dst, false,
						    false, &sent), 0);
	KUNIT_EXPECT_EQ(test, sent, (u64)MMT_TEST_CLOSURES);
	KUNIT_ASSERT_EQ(test, mmt_test_read_all(ctx->dst, ctx->out), 0);
	KUNIT_EXPECT_EQ(test, memcmp(ctx->out, ctx->plain, ctx->src->bytes),
			0);
}

static void mmt_delegate_refuses(struct kunit *test)
{
	struct mmt_delegate_ctx *ctx = test->priv;
	u64 sent;

	/* Receiver not WAITING (no key): the first closure is refused. */
	KUNIT_EXPECT_EQ(test, mmt_delegate_loopback(ctx->src, ctx->dst, false,
						    false, &sent), -EPERM);
	mmt_expect_states(test, ctx->src, MMT_VALID, false);
	/* Keyed twice: -EBUSY, the first key stays. */
	KUNIT_EXPECT_EQ(test, mmt_pmo_set_key(ctx->src, mmt_test_key, 16,
					      false), -EBUSY);
	KUNIT_EXPECT_EQ(test, mmt_pmo_set_key(ctx->dst, mmt_test_key, 24,
					      false), -EINVAL);
	mmt_expect_states(test, ctx->dst, MMT_INVALID, false);
}

static struct kunit_case mmt_delegate_cases[] = {
	KUNIT_CASE(mmt_delegate_transfer),
	KUNIT_CASE(mmt_delegate_copy),
	KUNIT_CASE(mmt_delegate_wrong_key),
	KUNIT_CASE(mmt_delegate_wrong_slot),
	KUNIT_CASE(mmt_delegate_replay_minimum),
	KUNIT_CASE(mmt_delegate_retry),
	KUNIT_CASE(mmt_delegate_lost_ack),
	KUNIT_CASE(mmt_delegate_own_memory_bad),
	KUNIT_CASE(mmt_delegate_refuses),
	KUNIT_CASE(mmt_delegate_invalidated_receive),
	{}
};

static struct kunit_suite mmt_delegate_suite = {
	.name = "mmt_delegate",
	.init = mmt_delegate_init,
	.exit = mmt_delegate_exit,
	.test_cases = mmt_delegate_cases,
};

kunit_test_suites(&mmt_delegate_suite);
