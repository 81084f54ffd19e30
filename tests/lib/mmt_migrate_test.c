// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite mmt_migrate: the transport-independent engine of live
 * migration (lib/mmt_migrate.c, docs/MIGRATION.md): dirty tracking by root
 * counter, rounds and the expected downtime, the migration receive rules
 * (closures land in LANDING MMTs, per-index replay and GUA rules), the
 * COMMIT digest and tag, the destination's commit and abort.  A whole
 * migration of four closures under a writer, byte-exact.  Runs in user
 * space (OpenSSL backend) and on UML (kernel crypto API).
 */
#include <kunit/test.h>
#include "mmt_lib.h"
#include "mmt.h"
#include "mmt_golden.h"

#define MMT_MT_N	4	/* closures of the test PMO */

struct mmt_mt_ctx {
	struct mmt_params p;
	struct mmt_crypto *c;		/* golden key and salt: both ends */
	u8 key_root[MMT_KEY_ROOT_BYTES];
	struct mmt src[MMT_MT_N];
	struct mmt dst[MMT_MT_N];
	u8 *plain;			/* what the source holds, N closures */
	u8 *buf;			/* one closure */
	size_t len;
	struct mmt_rx_rules rx;
	struct mmt_mig_src s;
};

static void mmt_mt_mem(struct kunit *test, struct mmt_mt_ctx *x, struct mmt *m)
{
	m->p = &x->p;
	m->crypto = x->c;
	m->data = kunit_kzalloc(test, x->p.data_bytes, GFP_KERNEL);
	m->macs = kunit_kzalloc(test, x->p.macs_bytes, GFP_KERNEL);
	m->nodes = kunit_kzalloc(test, x->p.nodes_bytes, GFP_KERNEL);
	m->scratch = kunit_kzalloc(test, mmt_scratch_bytes(&x->p), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, m->data);
	KUNIT_ASSERT_NOT_NULL(test, m->macs);
	KUNIT_ASSERT_NOT_NULL(test, m->nodes);
	KUNIT_ASSERT_NOT_NULL(test, m->scratch);
}

static int mmt_mt_init(struct kunit *test)
{
	struct mmt_mt_ctx *x = kunit_kzalloc(test, sizeof(*x), GFP_KERNEL);
	u32 i, cb;

	if (!x)
		return -ENOMEM;
	test->priv = x;
	KUNIT_ASSERT_EQ(test, mmt_params_init(&x->p, MMT_GOLDEN_LEVELS,
					      mmt_golden_log_arity,
					      MMT_GOLDEN_LOG_BLOCK), 0);
	x->c = mmt_crypto_alloc(mmt_golden_key, 16, mmt_golden_ksalt);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(x->c));
	KUNIT_ASSERT_EQ(test, mmt_key_root(mmt_golden_key, 16, x->key_root),
			0);
	cb = x->p.data_bytes;
	x->plain = kunit_kzalloc(test, (size_t)cb * MMT_MT_N, GFP_KERNEL);
	x->len = mmt_closure_bytes(&x->p);
	x->buf = kunit_kzalloc(test, x->len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, x->plain);
	KUNIT_ASSERT_NOT_NULL(test, x->buf);
	for (i = 0; i < cb * MMT_MT_N; i++)
		x->plain[i] = (u8)(i * 13 + (i >> 9));
	for (i = 0; i < MMT_MT_N; i++) {
		mmt_mt_mem(test, x, &x->src[i]);
		KUNIT_ASSERT_EQ(test, mmt_format(&x->src[i],
						 MMT_GOLDEN_GUA + i), 0);
		KUNIT_ASSERT_EQ(test, mmt_root_transition(&x->src[i].root,
							  MMT_VALID), 0);
		KUNIT_ASSERT_EQ(test, mmt_write(&x->src[i], 0,
						x->plain + (size_t)i * cb, cb),
				0);
		mmt_mt_mem(test, x, &x->dst[i]);
		KUNIT_ASSERT_EQ(test, mmt_root_transition(&x->dst[i].root,
							  MMT_WAITING), 0);
	}
	x->rx.self_node = MMT_GOLDEN_RECEIVER;
	x->rx.conn_id = MMT_GOLDEN_CONN_ID;
	x->rx.gen = MMT_GOLDEN_GEN;
	memcpy(x->rx.rx_nonce, mmt_golden_rx_nonce, MMT_RX_NONCE_BYTES);
	x->rx.migrate = true;
	x->rx.check_seq = true;
	KUNIT_ASSERT_EQ(test, mmt_mig_src_init(&x->s, MMT_MT_N, 5,
					       MMT_MIG_DOWNTIME_NS), 0);
	return 0;
}

static void mmt_mt_exit(struct kunit *test)
{
	struct mmt_mt_ctx *x = test->priv;

	if (!x)
		return;
	mmt_mig_src_free(&x->s);
	if (!IS_ERR_OR_NULL(x->c))
		mmt_crypto_free(x->c);
}

/* Seal source closure @i into x->buf as the driver does (stays VALID). */
static void mmt_mt_seal(struct kunit *test, u32 i)
{
	struct mmt_mt_ctx *x = test->priv;
	struct mmt_closure_hdr h;

	mmt_golden_hdr(&h);
	h.flags = 0;
	h.seq = i;
	KUNIT_ASSERT_EQ(test, mmt_closure_build(&x->src[i], &h, x->buf,
						x->len), 0);
	mmt_mig_sent(&x->s, i, &x->src[i].root);
}

/* Land x->buf into destination MMT @i under the migration rules. */
static int mmt_mt_land(struct mmt_mt_ctx *x, u32 i)
{
	x->rx.expect_seq = i;
	return mmt_closure_receive(&x->dst[i], &x->rx, x->buf, x->len, false);
}

static void mmt_mt_send(struct kunit *test, u32 i)
{
	mmt_mt_seal(test, i);
	KUNIT_ASSERT_EQ(test, mmt_mt_land(test->priv, i), 0);
}

/* The writer: closure @i's bytes at @off change, in the log and the MMT. */
static void mmt_mt_write(struct kunit *test, u32 i, u32 off, u8 v)
{
	struct mmt_mt_ctx *x = test->priv;
	u8 b[40];

	memset(b, v, sizeof(b));
	memcpy(x->plain + (size_t)i * x->p.data_bytes + off, b, sizeof(b));
	KUNIT_ASSERT_EQ(test, mmt_write(&x->src[i], off, b, sizeof(b)), 0);
}

/* The binding of the golden migration, with @rx_nonce for the receive. */
static void mmt_mt_bind(struct mmt_bind *b, const u8 *rx_nonce)
{
	memset(b, 0, sizeof(*b));
	b->conn_id = MMT_GOLDEN_CONN_ID;
	b->gen = MMT_GOLDEN_GEN;
	b->sender_node = MMT_GOLDEN_SENDER;
	b->receiver_node = MMT_GOLDEN_RECEIVER;
	b->dir = 0;
	memcpy(b->rx_nonce, rx_nonce, MMT_RX_NONCE_BYTES);
	memset(b->tx_nonce, 0x5a, MMT_RX_NONCE_BYTES);
}

/* The source tags for @nonce; the destination checks for its receive. */
static int mmt_mt_commit(struct mmt_mt_ctx *x, const u8 *nonce)
{
	u8 digest[MMT_SHA256_BYTES], tag[MMT_MIG_TAG_BYTES];
	struct mmt_bind sb, db;
	int err;

	mmt_mt_bind(&sb, nonce);
	mmt_mt_bind(&db, x->rx.rx_nonce);
	err = mmt_mig_src_digest(&x->s, digest);
	if (!err)
		err = mmt_mig_commit_tag(x->key_root, &sb, MMT_MT_N, digest,
					 tag);
	if (!err)
		err = mmt_mig_dst_commit(x->dst, MMT_MT_N, x->key_root, &db,
					 digest, tag);
	return err;
}

static void mmt_mt_expect_state(struct kunit *test, struct mmt *m,
				enum mmt_state st)
{
	u32 i;

	for (i = 0; i < MMT_MT_N; i++)
		KUNIT_EXPECT_EQ(test, m[i].root.state, st);
}

/* Every closure dirty first, clean once sealed, dirty after a write. */
static void mmt_migrate_dirty(struct kunit *test)
{
	struct mmt_mt_ctx *x = test->priv;
	u32 i;

	KUNIT_EXPECT_EQ(test, mmt_mig_scan(&x->s, x->src), (u32)MMT_MT_N);
	for (i = 0; i < MMT_MT_N; i++)
		mmt_mt_seal(test, i);
	KUNIT_EXPECT_EQ(test, mmt_mig_scan(&x->s, x->src), 0u);
	mmt_mt_write(test, 2, 100, 0x5a);
	KUNIT_EXPECT_TRUE(test, mmt_mig_dirty(&x->s, 2, &x->src[2].root));
	KUNIT_EXPECT_FALSE(test, mmt_mig_dirty(&x->s, 1, &x->src[1].root));
	KUNIT_EXPECT_EQ(test, mmt_mig_scan(&x->s, x->src), 1u);
	/* a read changes nothing */
	KUNIT_EXPECT_EQ(test, mmt_read(&x->src[1], 0, x->buf, 64), 0);
	KUNIT_EXPECT_EQ(test, mmt_mig_scan(&x->s, x->src), 1u);
	KUNIT_EXPECT_EQ(test, x->s.dirty_syncs, 4u);
	KUNIT_EXPECT_EQ(test, x->s.closures_sent, (u64)MMT_MT_N);
}

/* Rounds, the per-closure time and the decision to hand over. */
static void mmt_migrate_converge(struct kunit *test)
{
	struct mmt_mig_src s;

	KUNIT_ASSERT_EQ(test, mmt_mig_src_init(&s, 100, 3, 1000), 0);
	/* round 0: go on, even when asked to finish */
	KUNIT_EXPECT_EQ(test, mmt_mig_decide(&s, true), MMT_MIG_STOP_NONE);
	KUNIT_EXPECT_EQ(test, mmt_mig_expected_downtime(&s), U64_MAX);
	mmt_mig_round_begin(&s);
	s.round_sent = 100;
	mmt_mig_round_end(&s, 5000);
	KUNIT_EXPECT_EQ(test, s.closure_ns, 50ull);
	s.dirty = 30;			/* as a scan would find */
	KUNIT_EXPECT_EQ(test, mmt_mig_expected_downtime(&s), 1500ull);
	KUNIT_EXPECT_EQ(test, mmt_mig_decide(&s, false), MMT_MIG_STOP_NONE);
	KUNIT_EXPECT_EQ(test, s.stop, MMT_MIG_STOP_NONE);
	KUNIT_EXPECT_EQ(test, mmt_mig_decide(&s, true), MMT_MIG_STOP_FINISH);
	KUNIT_EXPECT_EQ(test, s.stop, MMT_MIG_STOP_FINISH);
	s.dirty = 20;			/* 1000 <= 1000 */
	KUNIT_EXPECT_EQ(test, mmt_mig_decide(&s, true),
			MMT_MIG_STOP_CONVERGED);
	s.dirty = 0;
	KUNIT_EXPECT_EQ(test, mmt_mig_decide(&s, false), MMT_MIG_STOP_CLEAN);
	s.dirty = 90;
	mmt_mig_round_begin(&s);
	mmt_mig_round_end(&s, 7);	/* sent nothing: estimate kept */
	KUNIT_EXPECT_EQ(test, s.closure_ns, 50ull);
	KUNIT_EXPECT_EQ(test, mmt_mig_decide(&s, false), MMT_MIG_STOP_NONE);
	mmt_mig_round_begin(&s);
	/* the round limit with 4500 ns expected against 1000: refused */
	KUNIT_EXPECT_EQ(test, mmt_mig_decide(&s, false), MMT_MIG_STOP_ROUNDS);
	KUNIT_EXPECT_EQ(test, s.stop, MMT_MIG_STOP_ROUNDS);
	/* ... unless the user forces it, or it fits after all */
	KUNIT_EXPECT_EQ(test, mmt_mig_decide(&s, true), MMT_MIG_STOP_FINISH);
	s.dirty = 20;
	KUNIT_EXPECT_EQ(test, mmt_mig_decide(&s, false),
			MMT_MIG_STOP_CONVERGED);
	s.dirty = 0;
	KUNIT_EXPECT_EQ(test, mmt_mig_expected_downtime(&s), 0ull);
	s.dirty = 7;
	s.closure_ns = U64_MAX / 2;
	KUNIT_EXPECT_EQ(test, mmt_mig_expected_downtime(&s), U64_MAX);
	mmt_mig_src_free(&s);
	KUNIT_EXPECT_EQ(test, mmt_mig_src_init(&s, 0, 3, 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, mmt_mig_src_init(&s, 3, 0, 1), -EINVAL);
}

/*
 * One round that sent @sent closures, after which @dirty are dirty
 * (each closure 1 ms: with a limit of 1 ns the handover is not due).
 */
static u32 mmt_mt_round(struct mmt_mig_src *s, u32 sent, u32 dirty)
{
	mmt_mig_round_begin(s);
	s->round_sent = sent;
	mmt_mig_round_end(s, (u64)sent * 1000000);
	s->dirty = dirty;
	return mmt_mig_decide(s, false);
}

/*
 * Auto-converge: a writer dirtying every closure in every round is
 * throttled at the second such round (20 %), 10 % more every second
 * round after, at most 99 %; at the round limit the handover is refused.
 * Rounds that converge enough (dirty at most half of what they sent)
 * raise nothing.
 */
static void mmt_migrate_throttle(struct kunit *test)
{
	static const u32 want[] = { 0, 20, 20, 30, 30, 40, 40, 50, 50, 60, 60,
				    70, 70, 80, 80, 90, 90, 99, 99, 99, 99 };
	struct mmt_mig_src s;
	u32 k;

	KUNIT_ASSERT_EQ(test, mmt_mig_src_init(&s, 16, 30, 1), 0);
	for (k = 0; k < ARRAY_SIZE(want); k++) {
		KUNIT_EXPECT_EQ(test, mmt_mt_round(&s, 16, 16), MMT_MIG_STOP_NONE);
		KUNIT_EXPECT_EQ_MSG(test, s.throttle_pct, want[k],
				    "after round %u", s.round);
	}
	while (s.round < 29)
		KUNIT_EXPECT_EQ(test, mmt_mt_round(&s, 16, 16), MMT_MIG_STOP_NONE);
	KUNIT_EXPECT_EQ(test, s.throttle_pct, 99u);
	KUNIT_EXPECT_EQ(test, mmt_mt_round(&s, 16, 16), MMT_MIG_STOP_ROUNDS);
	KUNIT_EXPECT_EQ(test, s.round, 30u);
	KUNIT_EXPECT_EQ(test, s.throttle_pct, 99u);
	mmt_mig_src_free(&s);

	/* 8 dirty of 16 sent is not above the 50 % trigger: no throttle */
	KUNIT_ASSERT_EQ(test, mmt_mig_src_init(&s, 16, 30, 1), 0);
	for (k = 0; k < 10; k++)
		KUNIT_EXPECT_EQ(test, mmt_mt_round(&s, 16, 8),
				MMT_MIG_STOP_NONE);
	KUNIT_EXPECT_EQ(test, s.throttle_pct, 0u);
	/* 9 of 16 is: the second such round throttles */
	KUNIT_EXPECT_EQ(test, mmt_mt_round(&s, 16, 9), MMT_MIG_STOP_NONE);
	KUNIT_EXPECT_EQ(test, s.throttle_pct, 0u);
	KUNIT_EXPECT_EQ(test, mmt_mt_round(&s, 16, 9), MMT_MIG_STOP_NONE);
	KUNIT_EXPECT_EQ(test, s.throttle_pct, 20u);
	/* nothing dirty: hand over, the throttle stays as it was */
	KUNIT_EXPECT_EQ(test, mmt_mt_round(&s, 9, 0), MMT_MIG_STOP_CLEAN);
	KUNIT_EXPECT_EQ(test, s.throttle_pct, 20u);
	mmt_mig_src_free(&s);
}

/*
 * The sleep of a throttled write: p / (100 - p) times the write's own
 * time, never more than the downtime limit; none without a throttle.
 */
static void mmt_migrate_throttle_ns(struct kunit *test)
{
	struct mmt_mig_src s;

	KUNIT_ASSERT_EQ(test, mmt_mig_src_init(&s, 4, 30, 1000000), 0);
	KUNIT_EXPECT_EQ(test, mmt_mig_throttle_ns(&s, 5000), 0ull);
	s.throttle_pct = 20;
	KUNIT_EXPECT_EQ(test, mmt_mig_throttle_ns(&s, 4000), 1000ull);
	KUNIT_EXPECT_EQ(test, mmt_mig_throttle_ns(&s, 0), 0ull);
	s.throttle_pct = 50;
	KUNIT_EXPECT_EQ(test, mmt_mig_throttle_ns(&s, 4000), 4000ull);
	s.throttle_pct = 99;
	KUNIT_EXPECT_EQ(test, mmt_mig_throttle_ns(&s, 4000), 396000ull);
	/* capped at the limit: 99 x 20 us would be 1.98 ms */
	KUNIT_EXPECT_EQ(test, mmt_mig_throttle_ns(&s, 20000), 1000000ull);
	KUNIT_EXPECT_EQ(test, mmt_mig_throttle_ns(&s, U64_MAX), 1000000ull);
	s.throttle_pct = 100;		/* never 100 %: a writer always runs */
	KUNIT_EXPECT_EQ(test, mmt_mig_throttle_ns(&s, 1000), 99000ull);
	mmt_mig_src_free(&s);
}

/*
 * A whole migration: round 1 sends every closure, a writer dirties two,
 * round 2 re-sends them (one written again meanwhile: round 3), commit:
 * the destination is VALID, writable, byte-exact with the writer's log.
 */
static void mmt_migrate_rounds(struct kunit *test)
{
	struct mmt_mt_ctx *x = test->priv;
	u32 cb = x->p.data_bytes, i;
	u8 *out;

	out = kunit_kzalloc(test, cb, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, out);
	mmt_mig_round_begin(&x->s);
	for (i = 0; i < MMT_MT_N; i++) {
		mmt_mt_send(test, i);
		if (i == 1)
			mmt_mt_write(test, 0, 8, 0x11);	/* already sent */
		if (i == 2)
			mmt_mt_write(test, 3, 600, 0x22);	/* not yet */
	}
	mmt_mt_expect_state(test, x->dst, MMT_LANDING);
	KUNIT_EXPECT_EQ(test, mmt_mig_scan(&x->s, x->src), 1u);
	/* LANDING: neither readable nor writable */
	KUNIT_EXPECT_EQ(test, mmt_read(&x->dst[1], 0, out, 64), -EPERM);
	KUNIT_EXPECT_EQ(test, mmt_write(&x->dst[1], 0, out, 64), -EPERM);

	mmt_mt_write(test, 2, 64, 0x33);
	KUNIT_EXPECT_EQ(test, mmt_mig_scan(&x->s, x->src), 2u);
	mmt_mig_round_begin(&x->s);
	for (i = 0; i < MMT_MT_N; i++) {
		if (!mmt_mig_dirty(&x->s, i, &x->src[i].root))
			continue;
		mmt_mt_send(test, i);
		mmt_mt_write(test, 2, 1000, 0x44);
	}
	KUNIT_EXPECT_EQ(test, x->s.round_sent, 2u);
	/* a commit now would name the old closure 2: refused */
	KUNIT_EXPECT_EQ(test, mmt_mig_scan(&x->s, x->src), 1u);
	mmt_mig_round_begin(&x->s);
	mmt_mt_send(test, 2);
	KUNIT_EXPECT_EQ(test, mmt_mig_scan(&x->s, x->src), 0u);
	KUNIT_ASSERT_EQ(test, mmt_mt_commit(x, mmt_golden_rx_nonce), 0);
	mmt_mt_expect_state(test, x->dst, MMT_VALID);
	for (i = 0; i < MMT_MT_N; i++) {
		KUNIT_EXPECT_FALSE(test, x->dst[i].root.read_only);
		KUNIT_ASSERT_EQ(test, mmt_read(&x->dst[i], 0, out, cb), 0);
		KUNIT_EXPECT_EQ(test, memcmp(out, x->plain + (size_t)i * cb,
					     cb), 0);
		KUNIT_EXPECT_EQ(test, x->dst[i].root.gua,
				x->src[i].root.gua);
	}
	/* the one writable copy */
	KUNIT_EXPECT_EQ(test, mmt_write(&x->dst[0], 0, out, 64), 0);
	/* a second commit: nothing is LANDING any more */
	KUNIT_EXPECT_EQ(test, mmt_mt_commit(x, mmt_golden_rx_nonce), -ESTALE);
}

/* Rule 6m: per index, an older or equal root counter is a replay. */
static void mmt_migrate_stale(struct kunit *test)
{
	struct mmt_mt_ctx *x = test->priv;
	u8 *old = kunit_kzalloc(test, x->len, GFP_KERNEL);
	struct mmt_root before;

	KUNIT_ASSERT_NOT_NULL(test, old);
	mmt_mt_seal(test, 1);
	memcpy(old, x->buf, x->len);
	mmt_mt_write(test, 1, 0, 0x77);
	mmt_mt_send(test, 1);
	before = x->dst[1].root;
	/* the older closure of index 1, replayed */
	memcpy(x->buf, old, x->len);
	KUNIT_EXPECT_EQ(test, mmt_mt_land(x, 1), -ESTALE);
	/* the same closure twice */
	mmt_mt_seal(test, 1);
	memcpy(old, x->buf, x->len);
	KUNIT_EXPECT_EQ(test, mmt_mt_land(x, 1), 0);
	before = x->dst[1].root;
	memcpy(x->buf, old, x->len);
	KUNIT_EXPECT_EQ(test, mmt_mt_land(x, 1), -ESTALE);
	KUNIT_EXPECT_EQ(test, memcmp(&before, &x->dst[1].root,
				     sizeof(before)), 0);
	/* the floor holds for a first landing too */
	x->rx.min_root_counter = U64_MAX - 1;
	mmt_mt_seal(test, 0);
	KUNIT_EXPECT_EQ(test, mmt_mt_land(x, 0), -ESTALE);
	KUNIT_EXPECT_EQ(test, x->dst[0].root.state, MMT_WAITING);
}

/* Rule 7m: a landed index keeps its GUA; other rules are unchanged. */
static void mmt_migrate_rules(struct kunit *test)
{
	struct mmt_mt_ctx *x = test->priv;
	u8 nonce[MMT_RX_NONCE_BYTES];

	mmt_mt_send(test, 0);
	KUNIT_ASSERT_EQ(test, mmt_regua(&x->src[0], NULL, MMT_GOLDEN_GUA + 99),
			0);
	mmt_mt_seal(test, 0);
	KUNIT_EXPECT_EQ(test, mmt_mt_land(x, 0), -EILSEQ);
	/* indices in any order: no cross-index GUA rule */
	mmt_mt_send(test, 3);
	mmt_mt_send(test, 1);
	/* a closure in another index's slot */
	mmt_mt_seal(test, 2);
	KUNIT_EXPECT_EQ(test, mmt_mt_land(x, 3), -EILSEQ);
	/* a closure of another receive (another destination) */
	memcpy(nonce, x->rx.rx_nonce, sizeof(nonce));
	x->rx.rx_nonce[0] ^= 1;
	KUNIT_EXPECT_EQ(test, mmt_mt_land(x, 2), -ESTALE);
	memcpy(x->rx.rx_nonce, nonce, sizeof(nonce));
	/* tampered */
	x->buf[MMT_CLOSURE_HDR_BYTES + 40] ^= 4;
	KUNIT_EXPECT_EQ(test, mmt_mt_land(x, 2), -EBADMSG);
	x->buf[MMT_CLOSURE_HDR_BYTES + 40] ^= 4;
	KUNIT_EXPECT_EQ(test, mmt_mt_land(x, 2), 0);
	/* outside a migration receive a LANDING MMT takes nothing */
	x->rx.migrate = false;
	mmt_mt_seal(test, 2);
	KUNIT_EXPECT_EQ(test, mmt_mt_land(x, 2), -EPERM);
}

/* COMMIT: a tag that does not authenticate, a state that differs. */
static void mmt_migrate_commit_checks(struct kunit *test)
{
	struct mmt_mt_ctx *x = test->priv;
	u8 digest[MMT_SHA256_BYTES], tag[MMT_MIG_TAG_BYTES];
	u8 nonce[MMT_RX_NONCE_BYTES];
	struct mmt_bind b;
	u32 i;

	for (i = 0; i < MMT_MT_N - 1; i++)
		mmt_mt_send(test, i);
	/* the source never sent closure 3: no digest */
	KUNIT_EXPECT_EQ(test, mmt_mig_src_digest(&x->s, digest), -ESTALE);
	/* sealed but lost on the way: the destination lacks it */
	mmt_mt_seal(test, 3);
	KUNIT_EXPECT_EQ(test, mmt_mt_commit(x, mmt_golden_rx_nonce), -ESTALE);
	KUNIT_ASSERT_EQ(test, mmt_mt_land(x, 3), 0);
	/* a newer closure 1 sealed, the older one landed: refused */
	mmt_mt_write(test, 1, 0, 9);
	mmt_mt_seal(test, 1);
	KUNIT_EXPECT_EQ(test, mmt_mt_commit(x, mmt_golden_rx_nonce), -ESTALE);
	mmt_mt_expect_state(test, x->dst, MMT_LANDING);
	KUNIT_ASSERT_EQ(test, mmt_mt_land(x, 1), 0);
	/* a COMMIT for another receive */
	memcpy(nonce, mmt_golden_rx_nonce, sizeof(nonce));
	nonce[15] ^= 0x80;
	KUNIT_EXPECT_EQ(test, mmt_mt_commit(x, nonce), -EBADMSG);
	/* tampered digest or tag */
	mmt_mt_bind(&b, mmt_golden_rx_nonce);
	KUNIT_ASSERT_EQ(test, mmt_mig_src_digest(&x->s, digest), 0);
	KUNIT_ASSERT_EQ(test, mmt_mig_commit_tag(x->key_root, &b, MMT_MT_N,
						 digest, tag), 0);
	tag[3] ^= 1;
	KUNIT_EXPECT_EQ(test, mmt_mig_dst_commit(x->dst, MMT_MT_N, x->key_root,
						 &b, digest, tag), -EBADMSG);
	tag[3] ^= 1;
	digest[31] ^= 1;
	KUNIT_EXPECT_EQ(test, mmt_mig_dst_commit(x->dst, MMT_MT_N, x->key_root,
						 &b, digest, tag), -EBADMSG);
	digest[31] ^= 1;
	/* another generation on the connection */
	b.gen++;
	KUNIT_EXPECT_EQ(test, mmt_mig_dst_commit(x->dst, MMT_MT_N, x->key_root,
						 &b, digest, tag), -EBADMSG);
	/*
	 * Review H2: the tag binds the direction and both ends' nonces.  A
	 * tag made for the other direction of the connection (the nodes
	 * swapped, the other side connected), or for another source nonce,
	 * does not authenticate here.
	 */
	mmt_mt_bind(&b, mmt_golden_rx_nonce);
	b.dir = 1;
	KUNIT_EXPECT_EQ(test, mmt_mig_dst_commit(x->dst, MMT_MT_N, x->key_root,
						 &b, digest, tag), -EBADMSG);
	mmt_mt_bind(&b, mmt_golden_rx_nonce);
	b.sender_node = MMT_GOLDEN_RECEIVER;
	b.receiver_node = MMT_GOLDEN_SENDER;
	KUNIT_EXPECT_EQ(test, mmt_mig_dst_commit(x->dst, MMT_MT_N, x->key_root,
						 &b, digest, tag), -EBADMSG);
	mmt_mt_bind(&b, mmt_golden_rx_nonce);
	b.tx_nonce[7] ^= 0x10;
	KUNIT_EXPECT_EQ(test, mmt_mig_dst_commit(x->dst, MMT_MT_N, x->key_root,
						 &b, digest, tag), -EBADMSG);
	mmt_mt_expect_state(test, x->dst, MMT_LANDING);
	mmt_mt_bind(&b, mmt_golden_rx_nonce);
	KUNIT_EXPECT_EQ(test, mmt_mig_dst_commit(x->dst, MMT_MT_N, x->key_root,
						 &b, digest, tag), 0);
	mmt_mt_expect_state(test, x->dst, MMT_VALID);
}

/* Abort: what landed is dropped, nothing readable; a new receive works. */
static void mmt_migrate_abort(struct kunit *test)
{
	struct mmt_mt_ctx *x = test->priv;
	u8 *out = kunit_kzalloc(test, 64, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, out);
	mmt_mt_send(test, 0);
	mmt_mt_send(test, 2);
	KUNIT_EXPECT_EQ(test, mmt_mig_dst_abort(x->dst, MMT_MT_N), 2u);
	mmt_mt_expect_state(test, x->dst, MMT_WAITING);
	KUNIT_EXPECT_EQ(test, mmt_read(&x->dst[0], 0, out, 64), -EPERM);
	KUNIT_EXPECT_EQ(test, mmt_mig_dst_abort(x->dst, MMT_MT_N), 0u);
	/* the source is untouched: VALID, writable, byte-exact */
	mmt_mt_write(test, 0, 0, 0x66);
	KUNIT_EXPECT_EQ(test, mmt_read(&x->src[0], 0, out, 64), 0);
	KUNIT_EXPECT_EQ(test, memcmp(out, x->plain, 64), 0);
	/* a digest of a destination with nothing landed */
	KUNIT_EXPECT_EQ(test, mmt_mig_dst_digest(x->dst, MMT_MT_N, out),
			-ESTALE);
}

/*
 * mmt_bind_tag(), which the COMMIT and ACK tags share: the COMMIT's tag is
 * HKDF-SHA256 (RFC 5869, its vectors in mmt_crypto) over the preimage
 * docs/MIGRATION.md section 5 writes out, built here byte by byte; the
 * lengths it refuses leave a zero tag.
 */
static void mmt_migrate_bind_tag(struct kunit *test)
{
	static const char label[] = "mmt v3 commit";
	static const char salt[] = "mmt-v3 commit";
	struct mmt_mt_ctx *x = test->priv;
	u8 info[sizeof(label) - 1 + MMT_BIND_BYTES + 4 + MMT_SHA256_BYTES];
	u8 digest[MMT_SHA256_BYTES], okm[32], tag[MMT_MIG_TAG_BYTES];
	u8 wide[33];	/* a tag_len of 33 is zeroed in full on -EINVAL */
	u8 fields[MMT_BIND_TAG_FIELDS_MAX + 1] = { 0 };
	struct mmt_bind b;
	u8 *p = info;
	u32 i;

	for (i = 0; i < sizeof(digest); i++)
		digest[i] = 0xc0 + i;
	mmt_mt_bind(&b, mmt_golden_rx_nonce);
	memcpy(p, label, sizeof(label) - 1);
	p += sizeof(label) - 1;
	put_unaligned_le64(b.conn_id, p);
	put_unaligned_le64(b.gen, p + 8);
	put_unaligned_le16(b.sender_node, p + 16);
	put_unaligned_le16(b.receiver_node, p + 18);
	p[20] = b.dir;
	memcpy(p + 21, b.rx_nonce, MMT_RX_NONCE_BYTES);
	memcpy(p + 21 + MMT_RX_NONCE_BYTES, b.tx_nonce, MMT_RX_NONCE_BYTES);
	p += MMT_BIND_BYTES;
	put_unaligned_le32(MMT_MT_N, p);
	memcpy(p + 4, digest, sizeof(digest));
	KUNIT_ASSERT_EQ(test, mmt_crypto_hkdf_sha256(x->key_root,
						     MMT_KEY_ROOT_BYTES,
						     (const u8 *)salt,
						     sizeof(salt) - 1, info,
						     sizeof(info), okm,
						     sizeof(okm)), 0);
	KUNIT_ASSERT_EQ(test, mmt_mig_commit_tag(x->key_root, &b, MMT_MT_N,
						 digest, tag), 0);
	KUNIT_EXPECT_EQ(test, memcmp(tag, okm, sizeof(tag)), 0);
	/* out of range: -EINVAL, the tag zeroed */
	memset(tag, 0xee, sizeof(tag));
	KUNIT_EXPECT_EQ(test, mmt_bind_tag(x->key_root, salt, label, &b,
					   fields, sizeof(fields), tag,
					   sizeof(tag)), -EINVAL);
	for (i = 0; i < sizeof(tag); i++)
		KUNIT_EXPECT_EQ(test, tag[i], 0);
	KUNIT_EXPECT_EQ(test, mmt_bind_tag(x->key_root, salt,
					   "seventeen bytes!!", &b, fields, 4,
					   tag, sizeof(tag)), -EINVAL);
	KUNIT_EXPECT_EQ(test, mmt_bind_tag(x->key_root, salt, label, &b,
					   fields, 4, tag, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, mmt_bind_tag(x->key_root, salt, label, &b,
					   fields, 4, wide, 33), -EINVAL);
	KUNIT_EXPECT_EQ(test, mmt_bind_tag(x->key_root, salt, label, &b,
					   fields, 4, wide, 32), 0);
}

/* The digest names every index, GUA and counter, in order. */
static void mmt_migrate_digest(struct kunit *test)
{
	struct mmt_mt_ctx *x = test->priv;
	u8 a[MMT_SHA256_BYTES], b[MMT_SHA256_BYTES];
	u32 i;

	for (i = 0; i < MMT_MT_N; i++)
		mmt_mt_send(test, i);
	KUNIT_ASSERT_EQ(test, mmt_mig_src_digest(&x->s, a), 0);
	KUNIT_ASSERT_EQ(test, mmt_mig_dst_digest(x->dst, MMT_MT_N, b), 0);
	KUNIT_EXPECT_EQ(test, memcmp(a, b, sizeof(a)), 0);
	x->s.sent_rc[2]++;
	KUNIT_ASSERT_EQ(test, mmt_mig_src_digest(&x->s, b), 0);
	KUNIT_EXPECT_NE(test, memcmp(a, b, sizeof(a)), 0);
	x->s.sent_rc[2]--;
	x->s.sent_gua[1] ^= 1;
	KUNIT_ASSERT_EQ(test, mmt_mig_src_digest(&x->s, b), 0);
	KUNIT_EXPECT_NE(test, memcmp(a, b, sizeof(a)), 0);
	x->s.sent_gua[1] ^= 1;
	/* fewer closures: another preimage */
	KUNIT_ASSERT_EQ(test, mmt_mig_dst_digest(x->dst, MMT_MT_N - 1, b), 0);
	KUNIT_EXPECT_NE(test, memcmp(a, b, sizeof(a)), 0);
}

/* FIPS 180-2 B.1: SHA-256("abc"), through the crypto interface */
static void mmt_migrate_sha256_kat(struct kunit *test)
{
	static const u8 want[MMT_SHA256_BYTES] = {
		0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea,
		0x41, 0x41, 0x40, 0xde, 0x5d, 0xae, 0x22, 0x23,
		0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17, 0x7a, 0x9c,
		0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad,
	};
	struct mmt_sha256_ctx c;
	u8 out[MMT_SHA256_BYTES];

	KUNIT_ASSERT_EQ(test, mmt_crypto_sha256((const u8 *)"abc", 3, out), 0);
	KUNIT_EXPECT_EQ(test, memcmp(out, want, sizeof(out)), 0);
	/* streamed (the COMMIT digest), in pieces: the same */
	memset(out, 0, sizeof(out));
	KUNIT_ASSERT_EQ(test, mmt_crypto_sha256_init(&c), 0);
	KUNIT_EXPECT_EQ(test, mmt_crypto_sha256_update(&c, (const u8 *)"a", 1),
			0);
	KUNIT_EXPECT_EQ(test, mmt_crypto_sha256_update(&c, (const u8 *)"", 0),
			0);
	KUNIT_EXPECT_EQ(test, mmt_crypto_sha256_update(&c, (const u8 *)"bc",
						       2), 0);
	KUNIT_ASSERT_EQ(test, mmt_crypto_sha256_final(&c, out), 0);
	KUNIT_EXPECT_EQ(test, memcmp(out, want, sizeof(out)), 0);
}

static struct kunit_case mmt_migrate_cases[] = {
	KUNIT_CASE(mmt_migrate_sha256_kat),
	KUNIT_CASE(mmt_migrate_dirty),
	KUNIT_CASE(mmt_migrate_converge),
	KUNIT_CASE(mmt_migrate_throttle),
	KUNIT_CASE(mmt_migrate_throttle_ns),
	KUNIT_CASE(mmt_migrate_rounds),
	KUNIT_CASE(mmt_migrate_stale),
	KUNIT_CASE(mmt_migrate_rules),
	KUNIT_CASE(mmt_migrate_commit_checks),
	KUNIT_CASE(mmt_migrate_abort),
	KUNIT_CASE(mmt_migrate_digest),
	KUNIT_CASE(mmt_migrate_bind_tag),
	{}
};

static struct kunit_suite mmt_migrate_suite = {
	.name = "mmt_migrate",
	.init = mmt_mt_init,
	.exit = mmt_mt_exit,
	.test_cases = mmt_migrate_cases,
};

kunit_test_suites(&mmt_migrate_suite);
