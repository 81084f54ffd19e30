// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_rx_secure_test.c - suite mmt_rx_secure: a secure-channel receive
 * (one AES-128-GCM message per closure) with the opens of its messages on
 * the I/O workers (module parameter io_workers, driver/mmt_conn_rx.c),
 * over the loopback fabric: a sender in the test's task
 * (mmt_conn_do_send()), a receiver in a kthread (mmt_conn_do_recv()), an
 * attacker on the wire (mmt_loop_set_hook()).  Every case runs into a
 * keyed PMO and into a plain one, with 1 worker (the serial receive, the
 * reference), 2 and 4, and expects the same: the same data, the same
 * error for the same closure, the closures before it written, it and
 * every later one not.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/err.h>
#include <linux/kthread.h>
#include <linux/slab.h>

#include "mmt_fabric.h"
#include "mmt_proto.h"

/* 2 levels, arities 8 and 8, 64-byte blocks: 4 KiB closures. */
static const u8 mmt_rxs_log_arity[MMT_MAX_LEVELS] = { 3, 3 };
#define MMT_RXS_CLOSURES	12
/* the closure the attacks aim at: past the first window */
#define MMT_RXS_K		6
/* what every closure of the receiving PMO holds before a transfer */
#define MMT_RXS_FILL		0xa5

static const u8 mmt_rxs_key[16] = {
	0x50, 0x51, 0x52, 0x53, 0x54, 0x55, 0x56, 0x57,
	0x58, 0x59, 0x5a, 0x5b, 0x5c, 0x5d, 0x5e, 0x5f,
};

static const u8 mmt_rxs_conn_key[16] = {
	0x60, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67,
	0x68, 0x69, 0x6a, 0x6b, 0x6c, 0x6d, 0x6e, 0x6f,
};

/* io_workers and the receiving PMO's kind */
struct mmt_rxs_param {
	unsigned int workers;
	bool plain;
};

static const struct mmt_rxs_param mmt_rxs_params[] = {
	{ 1, false }, { 2, false }, { 4, false },
	{ 1, true }, { 2, true }, { 4, true },
};

static void mmt_rxs_desc(const struct mmt_rxs_param *p, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "io_workers=%u %s", p->workers,
		 p->plain ? "plain" : "keyed");
}

KUNIT_ARRAY_PARAM(mmt_rxs, mmt_rxs_params, mmt_rxs_desc);

/**
 * struct mmt_rxs_ctx - one case's connections, PMOs and wire attack
 * @a: the connecting end, which sends
 * @b: the accepting end, which receives
 * @src: keyed or plain as @dst, every closure written with @plain
 * @dst: keyed (every MMT VALID) or plain, MMT_RXS_FILL in every byte
 * @plain: what @src holds
 * @out: what the cases read back
 * @workers: mmt_io_workers before the case, put back after it
 * @attack: the wire hook's: 0 none, 1 flip a byte of closure @k's
 *	message, 2 replace it with closure @j's, 3 flip a byte of closures
 *	@k's and @k + 1's
 * @k: the closure attacked
 * @j: the closure replayed
 * @off: the byte flipped
 * @saved: closure @j's message as it went by (@msg_bytes)
 * @msg_bytes: one message's bytes: data and tag
 */
struct mmt_rxs_ctx {
	struct mmt_conn *a;
	struct mmt_conn *b;
	struct mmt_pmo *src;
	struct mmt_pmo *dst;
	u8 *plain;
	u8 *out;
	unsigned int workers;
	int attack;
	u32 k;
	u32 j;
	u32 off;
	u8 *saved;
	u32 msg_bytes;
};

/* A receive in its own task. */
struct mmt_rxs_rx {
	struct mmt_conn *conn;
	struct mmt_pmo *pmo;
	struct mmt_xfer x;
	int err;
	struct completion done;
};

static int mmt_rxs_rx_fn(void *data)
{
	struct mmt_rxs_rx *r = data;

	mutex_lock(&r->conn->rx_mutex);
	r->err = mmt_conn_do_recv(r->conn, r->pmo, &r->x);
	mutex_unlock(&r->conn->rx_mutex);
	complete(&r->done);
	return 0;
}

/* The attacker: what the sender's write put in the receiver's bounce. */
static void mmt_rxs_wire(void *priv, u32 notice, u8 *dst, u32 len)
{
	struct mmt_rxs_ctx *ctx = priv;
	u32 index = notice & (BIT(MMT_IMM_INDEX_BITS) - 1);

	if (len != ctx->msg_bytes)
		return;
	if (ctx->attack == 2 && index == ctx->j)
		memcpy(ctx->saved, dst, len);
	if (ctx->attack == 3 && (index == ctx->k || index == ctx->k + 1))
		dst[ctx->off] ^= 0x20;
	if (index != ctx->k)
		return;
	if (ctx->attack == 1)
		dst[ctx->off] ^= 0x20;
	else if (ctx->attack == 2)
		memcpy(dst, ctx->saved, len);
}

static struct mmt_pmo *mmt_rxs_pmo(struct kunit *test, bool keyed)
{
	struct mmt_params p;
	struct mmt_pmo *pmo;

	KUNIT_ASSERT_EQ(test, mmt_params_init(&p, 2, mmt_rxs_log_arity, 6),
			0);
	pmo = mmt_pmo_alloc(&p, MMT_RXS_CLOSURES);
	KUNIT_ASSERT_FALSE(test, IS_ERR(pmo));
	if (keyed)
		KUNIT_ASSERT_EQ(test, mmt_pmo_set_key(pmo, mmt_rxs_key, 16,
						      false), 0);
	return pmo;
}

static int mmt_rxs_init(struct kunit *test)
{
	const struct mmt_rxs_param *prm = test->param_value;
	u8 root[MMT_CHAN_ROOT_BYTES];
	struct mmt_rxs_ctx *ctx;
	u64 cb;
	u32 i;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx);
	test->priv = ctx;
	ctx->workers = mmt_io_workers;
	mmt_io_workers = prm ? prm->workers : 1;
	KUNIT_ASSERT_EQ(test, mmt_loop_pair(&ctx->a, &ctx->b), 0);
	/* the connection's key: a plain receiving PMO needs it */
	KUNIT_ASSERT_EQ(test, mmt_chan_root_key(mmt_rxs_conn_key, 16, root),
			0);
	memcpy(ctx->a->chan_root, root, sizeof(root));
	smp_store_release(&ctx->a->has_key, true);
	memcpy(ctx->b->chan_root, root, sizeof(root));
	smp_store_release(&ctx->b->has_key, true);
	memzero_explicit(root, sizeof(root));
	/* a plain receiving PMO takes only a plain sender's (-EMEDIUMTYPE) */
	ctx->src = mmt_rxs_pmo(test, !(prm && prm->plain));
	ctx->dst = mmt_rxs_pmo(test, !(prm && prm->plain));
	ctx->plain = kunit_kzalloc(test, ctx->src->bytes, GFP_KERNEL);
	ctx->out = kunit_kzalloc(test, ctx->src->bytes, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx->plain);
	KUNIT_ASSERT_NOT_NULL(test, ctx->out);
	cb = ctx->src->params.data_bytes;
	ctx->msg_bytes = cb + MMT_CONN_SEC_TAG_BYTES;
	ctx->saved = kunit_kzalloc(test, ctx->msg_bytes, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx->saved);
	for (i = 0; i < ctx->src->bytes; i++)
		ctx->plain[i] = i * 7 + (i >> 12) + 1;
	for (i = 0; i < ctx->src->closures; i++) {
		if (!ctx->src->crypto)
			memcpy(ctx->src->mmts[i].data, ctx->plain + i * cb, cb);
		else
			KUNIT_ASSERT_EQ(test, mmt_write(&ctx->src->mmts[i], 0,
							ctx->plain + i * cb,
							cb), 0);
	}
	/* what the receiver held before: a write of any kind shows */
	memset(ctx->out, MMT_RXS_FILL, cb);
	for (i = 0; i < ctx->dst->closures; i++) {
		if (!ctx->dst->crypto)
			memcpy(ctx->dst->mmts[i].data, ctx->out, cb);
		else
			KUNIT_ASSERT_EQ(test, mmt_write(&ctx->dst->mmts[i], 0,
							ctx->out, cb), 0);
	}
	mmt_loop_set_hook(ctx->a, mmt_rxs_wire, ctx);
	return 0;
}

static void mmt_rxs_exit(struct kunit *test)
{
	struct mmt_rxs_ctx *ctx = test->priv;

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
 * One secure-channel transfer of ctx->src to ctx->dst (a copy); the
 * receive's result in *@rx_err and its closure count in *@rx_closures,
 * the send's result returned.
 */
static int mmt_rxs_xfer(struct kunit *test, int *rx_err, u64 *rx_closures)
{
	struct mmt_rxs_ctx *ctx = test->priv;
	struct mmt_xfer xs = {
		.size = sizeof(xs),
		.channel = MMT_CHANNEL_SECURE,
		.timeout_ms = 10000,
	};
	struct mmt_rxs_rx *r;
	struct task_struct *t;
	int err;

	r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	r->conn = ctx->b;
	r->pmo = ctx->dst;
	r->x.size = sizeof(r->x);
	r->x.channel = MMT_CHANNEL_SECURE;
	r->x.timeout_ms = 10000;
	init_completion(&r->done);
	t = kthread_run(mmt_rxs_rx_fn, r, "mmt_rxs_rx");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	mutex_lock(&ctx->a->tx_mutex);
	err = mmt_conn_do_send(ctx->a, ctx->src, &xs);
	mutex_unlock(&ctx->a->tx_mutex);
	wait_for_completion(&r->done);
	*rx_err = r->err;
	*rx_closures = r->x.closures;
	return err;
}

/* What the receiving PMO holds in closure @i (plain: its memory). */
static void mmt_rxs_read(struct kunit *test, u32 i, u8 *out)
{
	struct mmt_pmo *dst = ((struct mmt_rxs_ctx *)test->priv)->dst;
	u64 cb = dst->params.data_bytes;

	if (!dst->crypto) {
		memcpy(out, dst->mmts[i].data, cb);
		return;
	}
	KUNIT_ASSERT_EQ(test, mmt_read(&dst->mmts[i], 0, out, cb), 0);
}

/* @len bytes of a closure hold MMT_RXS_FILL only: nothing was written. */
static bool mmt_rxs_untouched(const u8 *out, size_t len)
{
	return !memchr_inv(out, MMT_RXS_FILL, len);
}

/*
 * Closures [0, @k) arrived byte-exact at the receiver; [@k, end) hold
 * what they held before (MMT_RXS_FILL), nothing of their messages.
 */
static void mmt_rxs_check_upto(struct kunit *test, u32 k)
{
	struct mmt_rxs_ctx *ctx = test->priv;
	u64 cb = ctx->dst->params.data_bytes;
	u32 i;

	for (i = 0; i < MMT_RXS_CLOSURES; i++) {
		mmt_rxs_read(test, i, ctx->out + i * cb);
		if (i < k)
			KUNIT_EXPECT_EQ_MSG(test, memcmp(ctx->out + i * cb,
							 ctx->plain + i * cb,
							 cb), 0,
					    "closure %u", i);
		else
			KUNIT_EXPECT_TRUE_MSG(test,
					      mmt_rxs_untouched(ctx->out + i * cb,
								cb),
					      "closure %u", i);
	}
	/* the sender's copy stays as it was */
	for (i = 0; ctx->src->crypto && i < MMT_RXS_CLOSURES; i++)
		KUNIT_EXPECT_EQ_MSG(test, ctx->src->mmts[i].root.state,
				    MMT_VALID, "closure %u", i);
}

/* Every closure arrives byte-exact. */
static void mmt_rxs_all(struct kunit *test)
{
	u64 closures;
	int rx_err;

	KUNIT_EXPECT_EQ(test, mmt_rxs_xfer(test, &rx_err, &closures), 0);
	KUNIT_EXPECT_EQ(test, rx_err, 0);
	KUNIT_EXPECT_EQ(test, closures, (u64)MMT_RXS_CLOSURES);
	mmt_rxs_check_upto(test, MMT_RXS_CLOSURES);
}

/*
 * A refusal of closure @k with @want (-EBADMSG): the receive and the send
 * fail with it, closures before @k are written, @k and later are not.
 */
static void mmt_rxs_refused(struct kunit *test, u32 k, int want)
{
	s64 bad = atomic64_read(&mmt_stats.reject[MMT_REJ_BADMSG]);
	u64 closures;
	int rx_err, tx_err;

	tx_err = mmt_rxs_xfer(test, &rx_err, &closures);
	/* counted once, for k, as the serial receive counts it */
	KUNIT_EXPECT_EQ(test, atomic64_read(&mmt_stats.reject[MMT_REJ_BADMSG]),
			bad + 1);
	KUNIT_EXPECT_EQ(test, rx_err, want);
	KUNIT_EXPECT_EQ(test, tx_err, want);
	KUNIT_EXPECT_EQ(test, closures, (u64)k);
	mmt_rxs_check_upto(test, k);
}

/* A ciphertext byte of closure k changed on the wire: -EBADMSG at k. */
static void mmt_rxs_bad_data(struct kunit *test)
{
	struct mmt_rxs_ctx *ctx = test->priv;

	ctx->attack = 1;
	ctx->k = MMT_RXS_K;
	ctx->off = 1000;
	mmt_rxs_refused(test, MMT_RXS_K, -EBADMSG);
}

/* A tag byte of closure k: -EBADMSG at k. */
static void mmt_rxs_bad_tag(struct kunit *test)
{
	struct mmt_rxs_ctx *ctx = test->priv;

	ctx->attack = 1;
	ctx->k = MMT_RXS_K;
	ctx->off = ctx->msg_bytes - 3;
	mmt_rxs_refused(test, MMT_RXS_K, -EBADMSG);
}

/* The last closure, refused after all the others are pending. */
static void mmt_rxs_bad_last(struct kunit *test)
{
	struct mmt_rxs_ctx *ctx = test->priv;

	ctx->attack = 1;
	ctx->k = MMT_RXS_CLOSURES - 1;
	ctx->off = 0;
	mmt_rxs_refused(test, MMT_RXS_CLOSURES - 1, -EBADMSG);
}

/* The first closure: nothing is written. */
static void mmt_rxs_bad_first(struct kunit *test)
{
	struct mmt_rxs_ctx *ctx = test->priv;

	ctx->attack = 1;
	ctx->k = 0;
	ctx->off = 17;
	mmt_rxs_refused(test, 0, -EBADMSG);
}

/*
 * Closures k and k + 1 both changed: k's error, counted once (k + 1's open
 * may have run on a worker, but is never applied), nothing from k on.
 */
static void mmt_rxs_bad_two(struct kunit *test)
{
	struct mmt_rxs_ctx *ctx = test->priv;

	ctx->attack = 3;
	ctx->k = MMT_RXS_K;
	ctx->off = 200;
	mmt_rxs_refused(test, MMT_RXS_K, -EBADMSG);
}

/*
 * An earlier message replayed in closure k's place (another nonce and AD
 * than k's): -EBADMSG at k, as in the serial receive.
 */
static void mmt_rxs_replay(struct kunit *test)
{
	struct mmt_rxs_ctx *ctx = test->priv;

	ctx->attack = 2;
	ctx->j = MMT_RXS_K - 2;
	ctx->k = MMT_RXS_K;
	mmt_rxs_refused(test, MMT_RXS_K, -EBADMSG);
}

/* The message just before k in k's place: -EBADMSG at k. */
static void mmt_rxs_replay_prev(struct kunit *test)
{
	struct mmt_rxs_ctx *ctx = test->priv;

	ctx->attack = 2;
	ctx->j = MMT_RXS_K - 1;
	ctx->k = MMT_RXS_K;
	mmt_rxs_refused(test, MMT_RXS_K, -EBADMSG);
}

/*
 * The order is the transfer's own context's, whatever a worker's context
 * saw: a message a worker opened is taken in closure order only if its
 * index is above the last one opened on the transfer's context (-ESTALE
 * otherwise, as mmt_conn_sec_open() refuses it, and nothing is written),
 * and never twice.
 */
static void mmt_rxs_commit_order(struct kunit *test)
{
	const struct mmt_rxs_param *prm = test->param_value;
	struct mmt_rxs_ctx *ctx = test->priv;
	struct mmt_conn_sec_id id = {
		.conn_id = 0x4242,
		.sender_node = mmt_node_id(),
		.receiver_node = mmt_node_id(),
		.gen = 9,
	};
	struct mmt_chan_crypto *tx, *c, *w;
	u64 cb = ctx->src->params.data_bytes;
	bool plain = prm->plain;
	u8 *msg[4], *priv;
	u32 i;

	/* plain: both ends under the connection's key */
	tx = mmt_conn_sec_alloc(ctx->src, plain, ctx->a->chan_root, &id);
	c = mmt_conn_sec_alloc(ctx->dst, plain, ctx->b->chan_root, &id);
	w = mmt_conn_sec_alloc(ctx->dst, plain, ctx->b->chan_root, &id);
	KUNIT_ASSERT_FALSE(test, IS_ERR(tx));
	KUNIT_ASSERT_FALSE(test, IS_ERR(c));
	KUNIT_ASSERT_FALSE(test, IS_ERR(w));
	priv = kunit_kzalloc(test, ctx->msg_bytes, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, priv);
	for (i = 0; i < 4; i++) {
		msg[i] = kunit_kzalloc(test, ctx->msg_bytes, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, msg[i]);
		KUNIT_ASSERT_EQ(test, mmt_conn_sec_seal(ctx->src, plain, tx, 9,
							i, msg[i]), 0);
	}
	/* the serial receive opens 2 */
	KUNIT_EXPECT_EQ(test, mmt_conn_sec_open(ctx->dst, plain, c, 9, 2,
						msg[2], priv), 0);
	/* a worker opens 1: its own context has seen nothing ... */
	KUNIT_EXPECT_EQ(test, mmt_conn_sec_decrypt(ctx->dst, w, 9, 1, msg[1],
						   priv), 0);
	/* ... but 1 is not above 2 on the transfer's: refused, not written */
	KUNIT_EXPECT_EQ(test, mmt_conn_sec_commit(ctx->dst, plain, c, 1, 0,
						  priv), -ESTALE);
	/* the serial receive agrees */
	KUNIT_EXPECT_EQ(test, mmt_conn_sec_open(ctx->dst, plain, c, 9, 1,
						msg[1], priv), -ESTALE);
	/* a worker's failure on a stale index: -ESTALE first, as serial */
	KUNIT_EXPECT_EQ(test, mmt_conn_sec_commit(ctx->dst, plain, c, 2,
						  -EBADMSG, priv), -ESTALE);
	/* 3 in order: taken and written, then never again */
	KUNIT_EXPECT_EQ(test, mmt_conn_sec_decrypt(ctx->dst, w, 9, 3, msg[3],
						   priv), 0);
	KUNIT_EXPECT_EQ(test, mmt_conn_sec_commit(ctx->dst, plain, c, 3, 0,
						  priv), 0);
	KUNIT_EXPECT_EQ(test, mmt_conn_sec_commit(ctx->dst, plain, c, 3, 0,
						  priv), -ESTALE);
	/* index out of range first, as mmt_conn_sec_open() */
	KUNIT_EXPECT_EQ(test, mmt_conn_sec_commit(ctx->dst, plain, c, 1,
						  -EINVAL, priv), -EINVAL);
	for (i = 0; i < 4; i++) {
		mmt_rxs_read(test, i, ctx->out);
		if (i == 2 || i == 3)
			KUNIT_EXPECT_EQ_MSG(test, memcmp(ctx->out,
							 ctx->plain + i * cb,
							 cb), 0, "closure %u", i);
		else
			KUNIT_EXPECT_TRUE_MSG(test,
					      mmt_rxs_untouched(ctx->out, cb),
					      "closure %u", i);
	}
	mmt_chan_crypto_free(tx);
	mmt_chan_crypto_free(c);
	mmt_chan_crypto_free(w);
}

static struct kunit_case mmt_rxs_cases[] = {
	KUNIT_CASE_PARAM(mmt_rxs_all, mmt_rxs_gen_params),
	KUNIT_CASE_PARAM(mmt_rxs_bad_data, mmt_rxs_gen_params),
	KUNIT_CASE_PARAM(mmt_rxs_bad_tag, mmt_rxs_gen_params),
	KUNIT_CASE_PARAM(mmt_rxs_bad_first, mmt_rxs_gen_params),
	KUNIT_CASE_PARAM(mmt_rxs_bad_last, mmt_rxs_gen_params),
	KUNIT_CASE_PARAM(mmt_rxs_bad_two, mmt_rxs_gen_params),
	KUNIT_CASE_PARAM(mmt_rxs_replay, mmt_rxs_gen_params),
	KUNIT_CASE_PARAM(mmt_rxs_replay_prev, mmt_rxs_gen_params),
	KUNIT_CASE_PARAM(mmt_rxs_commit_order, mmt_rxs_gen_params),
	{}
};

static struct kunit_suite mmt_rxs_suite = {
	.name = "mmt_rx_secure",
	.init = mmt_rxs_init,
	.exit = mmt_rxs_exit,
	.test_cases = mmt_rxs_cases,
};

kunit_test_suite(mmt_rxs_suite);
