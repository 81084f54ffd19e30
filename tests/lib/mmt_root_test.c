// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite mmt_root: the MMT state machine (every allowed and every
 * refused transition), the root nonce layout, sealing and unsealing the root
 * (round trip, a flipped bit anywhere in the sealed root or the associated
 * header, counter exhaustion).  Runs in user space (OpenSSL backend) and on
 * UML (kernel crypto API).
 */
#include <kunit/test.h>
#include "mmt_lib.h"

static const u8 mmt_root_test_key[16] = {
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
	0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
};

/* ------------------------------------------------------- transitions */

struct mmt_transition_case {
	enum mmt_state from;
	enum mmt_state to;
	int ret;
};

/* All 25 pairs: the documented table (mmt_root.c, docs/ENGINE.md). */
static const struct mmt_transition_case mmt_transition_cases[] = {
	{ MMT_INVALID, MMT_INVALID, -EINVAL },
	{ MMT_INVALID, MMT_VALID, 0 },		/* create / format */
	{ MMT_INVALID, MMT_SENDING, -EINVAL },
	{ MMT_INVALID, MMT_WAITING, 0 },	/* post receive */
	{ MMT_INVALID, MMT_LANDING, -EINVAL },
	{ MMT_VALID, MMT_INVALID, 0 },		/* invalidate */
	{ MMT_VALID, MMT_VALID, -EINVAL },
	{ MMT_VALID, MMT_SENDING, 0 },		/* delegate */
	{ MMT_VALID, MMT_WAITING, -EINVAL },
	{ MMT_VALID, MMT_LANDING, -EINVAL },
	{ MMT_SENDING, MMT_INVALID, 0 },	/* transfer done */
	{ MMT_SENDING, MMT_VALID, 0 },		/* copy done / rollback */
	{ MMT_SENDING, MMT_SENDING, -EINVAL },
	{ MMT_SENDING, MMT_WAITING, -EINVAL },
	{ MMT_SENDING, MMT_LANDING, -EINVAL },
	{ MMT_WAITING, MMT_INVALID, 0 },	/* receive cancelled */
	{ MMT_WAITING, MMT_VALID, 0 },		/* closure accepted */
	{ MMT_WAITING, MMT_SENDING, -EINVAL },
	{ MMT_WAITING, MMT_WAITING, -EINVAL },
	{ MMT_WAITING, MMT_LANDING, 0 },	/* migration: first landing */
	{ MMT_LANDING, MMT_INVALID, 0 },	/* receive PMO invalidated */
	{ MMT_LANDING, MMT_VALID, 0 },		/* migration committed */
	{ MMT_LANDING, MMT_SENDING, -EINVAL },
	{ MMT_LANDING, MMT_WAITING, 0 },	/* migration aborted */
	{ MMT_LANDING, MMT_LANDING, -EINVAL },
};

static void mmt_transition_desc(const struct mmt_transition_case *c,
				char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s->%s",
		 mmt_state_name(c->from), mmt_state_name(c->to));
}

KUNIT_ARRAY_PARAM(mmt_transition, mmt_transition_cases, mmt_transition_desc);

static void mmt_root_transition_table(struct kunit *test)
{
	const struct mmt_transition_case *c = test->param_value;
	struct mmt_root r;

	memset(&r, 0, sizeof(r));
	r.state = c->from;
	r.gua = 0x1234;
	r.root_counter = 99;
	r.read_only = c->from == MMT_VALID;
	KUNIT_EXPECT_EQ(test, mmt_root_transition(&r, c->to), c->ret);
	KUNIT_EXPECT_EQ(test, r.state, c->ret ? c->from : c->to);
	/* only the state (and read_only when leaving a copy) may change */
	KUNIT_EXPECT_EQ(test, r.gua, 0x1234ull);
	KUNIT_EXPECT_EQ(test, r.root_counter, 99ull);
	if (c->ret || c->to == MMT_VALID || c->to == MMT_SENDING)
		KUNIT_EXPECT_EQ(test, r.read_only, c->from == MMT_VALID);
	else
		KUNIT_EXPECT_FALSE(test, r.read_only);
}

static void mmt_root_transition_table_complete(struct kunit *test)
{
	unsigned int from, to, n = 0, allowed = 0;

	/* the case list covers every pair exactly once */
	for (from = 0; from < MMT_NR_STATES; from++) {
		for (to = 0; to < MMT_NR_STATES; to++) {
			unsigned int i, hits = 0;

			for (i = 0; i < ARRAY_SIZE(mmt_transition_cases); i++)
				if (mmt_transition_cases[i].from == from &&
				    mmt_transition_cases[i].to == to)
					hits++;
			KUNIT_EXPECT_EQ(test, hits, 1u);
			n++;
		}
	}
	for (from = 0; from < ARRAY_SIZE(mmt_transition_cases); from++)
		allowed += !mmt_transition_cases[from].ret;
	KUNIT_EXPECT_EQ(test, n, 25u);
	KUNIT_EXPECT_EQ(test, allowed, 12u);
}

static void mmt_root_transition_bad_state(struct kunit *test)
{
	struct mmt_root r;

	memset(&r, 0, sizeof(r));
	r.state = MMT_VALID;
	KUNIT_EXPECT_EQ(test, mmt_root_transition(&r, MMT_NR_STATES),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, mmt_root_transition(&r, (enum mmt_state)-1),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, r.state, MMT_VALID);
	r.state = MMT_NR_STATES;
	KUNIT_EXPECT_EQ(test, mmt_root_transition(&r, MMT_INVALID), -EINVAL);
	KUNIT_EXPECT_EQ(test, r.state, MMT_NR_STATES);
}

static void mmt_root_lifecycle(struct kunit *test)
{
	struct mmt_root r;

	/* sender: create, delegate (transfer) */
	memset(&r, 0, sizeof(r));
	KUNIT_ASSERT_EQ(test, mmt_root_transition(&r, MMT_VALID), 0);
	KUNIT_ASSERT_EQ(test, mmt_root_transition(&r, MMT_SENDING), 0);
	KUNIT_EXPECT_EQ(test, mmt_root_transition(&r, MMT_WAITING), -EINVAL);
	KUNIT_ASSERT_EQ(test, mmt_root_transition(&r, MMT_INVALID), 0);
	/* receiver: post, accept a copy, invalidate */
	KUNIT_ASSERT_EQ(test, mmt_root_transition(&r, MMT_WAITING), 0);
	KUNIT_ASSERT_EQ(test, mmt_root_transition(&r, MMT_VALID), 0);
	r.read_only = true;
	KUNIT_ASSERT_EQ(test, mmt_root_transition(&r, MMT_INVALID), 0);
	KUNIT_EXPECT_FALSE(test, r.read_only);
	KUNIT_EXPECT_EQ(test, r.state, MMT_INVALID);
}

static void mmt_root_state_names(struct kunit *test)
{
	KUNIT_EXPECT_STREQ(test, mmt_state_name(MMT_INVALID), "INVALID");
	KUNIT_EXPECT_STREQ(test, mmt_state_name(MMT_VALID), "VALID");
	KUNIT_EXPECT_STREQ(test, mmt_state_name(MMT_SENDING), "SENDING");
	KUNIT_EXPECT_STREQ(test, mmt_state_name(MMT_WAITING), "WAITING");
	KUNIT_EXPECT_STREQ(test, mmt_state_name(MMT_LANDING), "LANDING");
	KUNIT_EXPECT_STREQ(test, mmt_state_name(MMT_NR_STATES), "UNKNOWN");
}

/* ------------------------------------------------------- nonce */

static void mmt_root_nonce_layout(struct kunit *test)
{
	static const u8 ctr1[12] = { 1 };
	/* gua 1 is bit 38 of the 96-bit LE integer: byte 4, bit 6 */
	static const u8 gua1[12] = { 0, 0, 0, 0, 0x40 };
	/* highest GUA bit (57) is bit 95: byte 11, bit 7 */
	static const u8 guatop[12] = { [11] = 0x80 };
	static const u8 ones[12] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0xff, 0xff, 0xff, 0xff,
	};
	u8 n[12];

	mmt_root_nonce(0, 1, n);
	KUNIT_EXPECT_EQ(test, memcmp(n, ctr1, 12), 0);
	mmt_root_nonce(1, 0, n);
	KUNIT_EXPECT_EQ(test, memcmp(n, gua1, 12), 0);
	mmt_root_nonce(1ull << (MMT_GUA_BITS - 1), 0, n);
	KUNIT_EXPECT_EQ(test, memcmp(n, guatop, 12), 0);
	mmt_root_nonce(MMT_GUA_MASK, MMT_ROOT_COUNTER_MAX, n);
	KUNIT_EXPECT_EQ(test, memcmp(n, ones, 12), 0);
}

/* distinct (gua, counter) pairs around every carry boundary */
static void mmt_root_nonce_unique(struct kunit *test)
{
	static const u64 guas[] = {
		0, 1, 2, (1ull << 26) - 1, 1ull << 26, MMT_GUA_MASK - 1,
		MMT_GUA_MASK,
	};
	static const u64 ctrs[] = {
		0, 1, 2, 0xffffffffull, 1ull << 32, MMT_ROOT_COUNTER_MAX - 1,
		MMT_ROOT_COUNTER_MAX,
	};
	const unsigned int ng = ARRAY_SIZE(guas), nc = ARRAY_SIZE(ctrs);
	u8 (*n)[12];
	unsigned int i, j;

	n = kunit_kcalloc(test, ng * nc, 12, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, n);
	for (i = 0; i < ng * nc; i++)
		mmt_root_nonce(guas[i / nc], ctrs[i % nc], n[i]);
	for (i = 0; i < ng * nc; i++)
		for (j = i + 1; j < ng * nc; j++)
			KUNIT_EXPECT_NE_MSG(test, memcmp(n[i], n[j], 12), 0,
					    "pairs %u and %u", i, j);
}

/* ------------------------------------------------------- seal / unseal */

struct mmt_root_ctx {
	struct mmt_params p;
	struct mmt_crypto *c;
	struct mmt_root r;
	u8 ad[MMT_CLOSURE_HDR_BYTES];
	u8 *sealed;
};

static int mmt_root_test_init(struct kunit *test)
{
	static const u8 log_arity[] = { 3, 2 };
	struct mmt_root_ctx *x;
	unsigned int i;

	x = kunit_kzalloc(test, sizeof(*x), GFP_KERNEL);
	if (!x)
		return -ENOMEM;
	if (mmt_params_init(&x->p, 2, log_arity, 6))
		return -EINVAL;
	x->c = mmt_crypto_alloc(mmt_root_test_key, sizeof(mmt_root_test_key), MMT_TEST_KSALT);
	if (IS_ERR(x->c))
		return PTR_ERR(x->c);
	x->sealed = kunit_kzalloc(test, MMT_SEALED_ROOT_BYTES, GFP_KERNEL);
	if (!x->sealed) {
		mmt_crypto_free(x->c);
		return -ENOMEM;
	}
	x->r.state = MMT_SENDING;
	x->r.gua = (5ull << 42) | 0x123456;
	x->r.root_counter = 41;
	x->r.top.major = 0x1abcdef01ull;
	for (i = 0; i < 4; i++)
		x->r.top.minor[i] = (u8)(i * 37 + 1) & MMT_MINOR_MAX;
	for (i = 0; i < sizeof(x->ad); i++)
		x->ad[i] = (u8)(i * 13 + 5);
	test->priv = x;
	return 0;
}

static void mmt_root_test_exit(struct kunit *test)
{
	struct mmt_root_ctx *x = test->priv;

	if (x)
		mmt_crypto_free(x->c);
}

static void mmt_root_seal_roundtrip(struct kunit *test)
{
	struct mmt_root_ctx *x = test->priv;
	struct mmt_root out;
	u8 nonce[12];

	KUNIT_ASSERT_EQ(test, mmt_root_seal(&x->r, &x->p, x->c, x->ad,
					    sizeof(x->ad), x->sealed), 0);
	KUNIT_EXPECT_EQ(test, x->r.root_counter, 42ull);	/* bumped */
	mmt_root_nonce(x->r.gua, 42, nonce);
	KUNIT_EXPECT_EQ(test, memcmp(x->sealed, nonce, 12), 0);

	memset(&out, 0xa5, sizeof(out));
	KUNIT_ASSERT_EQ(test, mmt_root_unseal(&x->p, x->c, x->ad,
					      sizeof(x->ad), x->sealed, &out),
			0);
	KUNIT_EXPECT_EQ(test, out.state, MMT_INVALID);
	KUNIT_EXPECT_FALSE(test, out.read_only);
	KUNIT_EXPECT_EQ(test, out.gua, x->r.gua);
	KUNIT_EXPECT_EQ(test, out.root_counter, 42ull);
	KUNIT_EXPECT_EQ(test, out.top.major, x->r.top.major);
	KUNIT_EXPECT_EQ(test, memcmp(out.top.minor, x->r.top.minor,
				     sizeof(out.top.minor)), 0);
}

/* A second key context from the same key opens it (sender vs receiver). */
static void mmt_root_seal_other_ctx(struct kunit *test)
{
	struct mmt_root_ctx *x = test->priv;
	static const u8 other_key[16] = { 0xff };
	struct mmt_crypto *c2;
	struct mmt_root out;

	KUNIT_ASSERT_EQ(test, mmt_root_seal(&x->r, &x->p, x->c, x->ad,
					    sizeof(x->ad), x->sealed), 0);
	c2 = mmt_crypto_alloc(mmt_root_test_key, sizeof(mmt_root_test_key), MMT_TEST_KSALT);
	KUNIT_ASSERT_FALSE(test, IS_ERR(c2));
	KUNIT_EXPECT_EQ(test, mmt_root_unseal(&x->p, c2, x->ad, sizeof(x->ad),
					      x->sealed, &out), 0);
	mmt_crypto_free(c2);
	c2 = mmt_crypto_alloc(other_key, sizeof(other_key), MMT_TEST_KSALT);
	KUNIT_ASSERT_FALSE(test, IS_ERR(c2));
	KUNIT_EXPECT_EQ(test, mmt_root_unseal(&x->p, c2, x->ad, sizeof(x->ad),
					      x->sealed, &out), -EBADMSG);
	mmt_crypto_free(c2);
}

/* every bit position class of every byte of the sealed root */
static void mmt_root_seal_flip_sealed(struct kunit *test)
{
	struct mmt_root_ctx *x = test->priv;
	struct mmt_root out, before;
	unsigned int i, bit;

	KUNIT_ASSERT_EQ(test, mmt_root_seal(&x->r, &x->p, x->c, x->ad,
					    sizeof(x->ad), x->sealed), 0);
	memset(&out, 0x5a, sizeof(out));
	before = out;
	for (i = 0; i < MMT_SEALED_ROOT_BYTES; i++) {
		for (bit = 0; bit < 8; bit += 3) {
			int ret;

			x->sealed[i] ^= 1u << ((bit + i) & 7);
			ret = mmt_root_unseal(&x->p, x->c, x->ad,
					      sizeof(x->ad), x->sealed, &out);
			KUNIT_EXPECT_EQ_MSG(test, ret, -EBADMSG,
					    "sealed byte %u", i);
			x->sealed[i] ^= 1u << ((bit + i) & 7);
		}
	}
	/* out untouched by every failure */
	KUNIT_EXPECT_EQ(test, memcmp(&out, &before, sizeof(out)), 0);
	KUNIT_EXPECT_EQ(test, mmt_root_unseal(&x->p, x->c, x->ad,
					      sizeof(x->ad), x->sealed, &out),
			0);
}

/* every byte of the associated data (the closure header) */
static void mmt_root_seal_flip_ad(struct kunit *test)
{
	struct mmt_root_ctx *x = test->priv;
	struct mmt_root out;
	unsigned int i;

	KUNIT_ASSERT_EQ(test, mmt_root_seal(&x->r, &x->p, x->c, x->ad,
					    sizeof(x->ad), x->sealed), 0);
	for (i = 0; i < sizeof(x->ad); i++) {
		int ret;

		x->ad[i] ^= 0x80 >> (i & 7);
		ret = mmt_root_unseal(&x->p, x->c, x->ad, sizeof(x->ad),
				      x->sealed, &out);
		KUNIT_EXPECT_EQ_MSG(test, ret, -EBADMSG, "header byte %u", i);
		x->ad[i] ^= 0x80 >> (i & 7);
	}
	/* shorter associated data */
	KUNIT_EXPECT_EQ(test, mmt_root_unseal(&x->p, x->c, x->ad,
					      sizeof(x->ad) - 1, x->sealed,
					      &out), -EBADMSG);
	KUNIT_EXPECT_EQ(test, mmt_root_unseal(&x->p, x->c, x->ad,
					      sizeof(x->ad), x->sealed, &out),
			0);
}

/* the top node's arity is bound: another geometry cannot decode it */
static void mmt_root_seal_wrong_geometry(struct kunit *test)
{
	struct mmt_root_ctx *x = test->priv;
	static const u8 log_arity[] = { 3, 3 };
	struct mmt_params p2;
	struct mmt_root out;

	KUNIT_ASSERT_EQ(test, mmt_params_init(&p2, 2, log_arity, 6), 0);
	KUNIT_ASSERT_EQ(test, mmt_root_seal(&x->r, &x->p, x->c, x->ad,
					    sizeof(x->ad), x->sealed), 0);
	KUNIT_EXPECT_EQ(test, mmt_root_unseal(&p2, x->c, x->ad, sizeof(x->ad),
					      x->sealed, &out), -EBADMSG);
}

/* consecutive seals never reuse a nonce and never produce the same bytes */
static void mmt_root_seal_nonce_per_seal(struct kunit *test)
{
	struct mmt_root_ctx *x = test->priv;
	const unsigned int n = 64;
	u8 *all;
	unsigned int i, j;

	all = kunit_kzalloc(test, n * MMT_SEALED_ROOT_BYTES, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, all);
	for (i = 0; i < n; i++) {
		KUNIT_ASSERT_EQ(test,
				mmt_root_seal(&x->r, &x->p, x->c, x->ad,
					      sizeof(x->ad),
					      all + i * MMT_SEALED_ROOT_BYTES),
				0);
		KUNIT_EXPECT_EQ(test, x->r.root_counter, 42ull + i);
	}
	for (i = 0; i < n; i++) {
		for (j = i + 1; j < n; j++) {
			const u8 *a = all + i * MMT_SEALED_ROOT_BYTES;
			const u8 *b = all + j * MMT_SEALED_ROOT_BYTES;

			KUNIT_EXPECT_NE(test, memcmp(a, b, 12), 0);
		}
	}
}

static void mmt_root_seal_overflow(struct kunit *test)
{
	struct mmt_root_ctx *x = test->priv;
	struct mmt_root out;

	x->r.root_counter = MMT_ROOT_COUNTER_MAX - 1;
	KUNIT_ASSERT_EQ(test, mmt_root_seal(&x->r, &x->p, x->c, x->ad,
					    sizeof(x->ad), x->sealed), 0);
	KUNIT_EXPECT_EQ(test, x->r.root_counter, MMT_ROOT_COUNTER_MAX);
	KUNIT_ASSERT_EQ(test, mmt_root_unseal(&x->p, x->c, x->ad,
					      sizeof(x->ad), x->sealed, &out),
			0);
	KUNIT_EXPECT_EQ(test, out.root_counter, MMT_ROOT_COUNTER_MAX);

	memset(x->sealed, 0x33, MMT_SEALED_ROOT_BYTES);
	KUNIT_EXPECT_EQ(test, mmt_root_seal(&x->r, &x->p, x->c, x->ad,
					    sizeof(x->ad), x->sealed),
			-EOVERFLOW);
	KUNIT_EXPECT_EQ(test, x->r.root_counter, MMT_ROOT_COUNTER_MAX);
	KUNIT_EXPECT_EQ(test, x->sealed[0], 0x33);
	KUNIT_EXPECT_EQ(test, x->sealed[MMT_SEALED_ROOT_BYTES - 1], 0x33);

	/* a counter past the 38-bit field (never produced) is refused too */
	x->r.root_counter = MMT_ROOT_COUNTER_MAX + 5;
	KUNIT_EXPECT_EQ(test, mmt_root_seal(&x->r, &x->p, x->c, x->ad,
					    sizeof(x->ad), x->sealed),
			-EOVERFLOW);
	KUNIT_EXPECT_EQ(test, x->r.root_counter, MMT_ROOT_COUNTER_MAX + 5);
}

static void mmt_root_seal_bad_root(struct kunit *test)
{
	struct mmt_root_ctx *x = test->priv;
	struct mmt_root r;

	r = x->r;
	r.gua = MMT_GUA_MASK + 1;
	KUNIT_EXPECT_EQ(test, mmt_root_seal(&r, &x->p, x->c, x->ad,
					    sizeof(x->ad), x->sealed),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, r.root_counter, 41ull);
	r = x->r;
	r.top.minor[3] = MMT_MINOR_MAX + 1;
	KUNIT_EXPECT_EQ(test, mmt_root_seal(&r, &x->p, x->c, x->ad,
					    sizeof(x->ad), x->sealed),
			-EINVAL);
	r = x->r;
	r.top.major = MMT_MAJOR_MAX + 1;
	KUNIT_EXPECT_EQ(test, mmt_root_seal(&r, &x->p, x->c, x->ad,
					    sizeof(x->ad), x->sealed),
			-EINVAL);
	r = x->r;
	KUNIT_EXPECT_EQ(test, mmt_root_seal(&r, &x->p, NULL, x->ad,
					    sizeof(x->ad), x->sealed),
			-ENOKEY);
	KUNIT_EXPECT_EQ(test, r.root_counter, 41ull);
}

/* the extreme values survive the round trip (field widths) */
static void mmt_root_seal_extremes(struct kunit *test)
{
	struct mmt_root_ctx *x = test->priv;
	struct mmt_root out;
	unsigned int i;

	x->r.gua = MMT_GUA_MASK;
	x->r.root_counter = 0;
	x->r.top.major = MMT_MAJOR_MAX;
	for (i = 0; i < 4; i++)
		x->r.top.minor[i] = MMT_MINOR_MAX;
	KUNIT_ASSERT_EQ(test, mmt_root_seal(&x->r, &x->p, x->c, x->ad,
					    sizeof(x->ad), x->sealed), 0);
	KUNIT_ASSERT_EQ(test, mmt_root_unseal(&x->p, x->c, x->ad,
					      sizeof(x->ad), x->sealed, &out),
			0);
	KUNIT_EXPECT_EQ(test, out.gua, MMT_GUA_MASK);
	KUNIT_EXPECT_EQ(test, out.root_counter, 1ull);
	KUNIT_EXPECT_EQ(test, out.top.major, MMT_MAJOR_MAX);
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, out.top.minor[i], MMT_MINOR_MAX);
}

static struct kunit_case mmt_root_cases[] = {
	KUNIT_CASE_PARAM(mmt_root_transition_table, mmt_transition_gen_params),
	KUNIT_CASE(mmt_root_transition_table_complete),
	KUNIT_CASE(mmt_root_transition_bad_state),
	KUNIT_CASE(mmt_root_lifecycle),
	KUNIT_CASE(mmt_root_state_names),
	KUNIT_CASE(mmt_root_nonce_layout),
	KUNIT_CASE(mmt_root_nonce_unique),
	KUNIT_CASE(mmt_root_seal_roundtrip),
	KUNIT_CASE(mmt_root_seal_other_ctx),
	KUNIT_CASE(mmt_root_seal_flip_sealed),
	KUNIT_CASE(mmt_root_seal_flip_ad),
	KUNIT_CASE(mmt_root_seal_wrong_geometry),
	KUNIT_CASE(mmt_root_seal_nonce_per_seal),
	KUNIT_CASE(mmt_root_seal_overflow),
	KUNIT_CASE(mmt_root_seal_bad_root),
	KUNIT_CASE(mmt_root_seal_extremes),
	{}
};

static struct kunit_suite mmt_root_suite = {
	.name = "mmt_root",
	.init = mmt_root_test_init,
	.exit = mmt_root_test_exit,
	.test_cases = mmt_root_cases,
};

kunit_test_suites(&mmt_root_suite);
