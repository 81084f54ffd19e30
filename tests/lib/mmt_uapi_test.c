// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_uapi_test.c - suite mmt_uapi: argument rules of the ioctls
 * (lib/mmt_uapi.c), the checks the driver makes before changing anything.
 */
#include <kunit/test.h>

#include "mmt_uapi.h"

static void mmt_uapi_geometry_defaults(struct kunit *test)
{
	struct mmt_geometry g = {};
	struct mmt_params p;

	KUNIT_ASSERT_EQ(test, mmt_uapi_geometry(&g, &p), 0);
	KUNIT_EXPECT_EQ(test, p.levels, 3);
	KUNIT_EXPECT_EQ(test, p.block_size, 64u);
	KUNIT_EXPECT_EQ(test, p.data_bytes, 2ull << 20);

	g.levels = 2;
	KUNIT_ASSERT_EQ(test, mmt_uapi_geometry(&g, &p), 0);
	KUNIT_EXPECT_EQ(test, p.data_bytes, 128ull << 10);
	g.levels = 4;
	KUNIT_ASSERT_EQ(test, mmt_uapi_geometry(&g, &p), 0);
	KUNIT_EXPECT_EQ(test, p.data_bytes, 32ull << 20);
	g.levels = 1;
	KUNIT_ASSERT_EQ(test, mmt_uapi_geometry(&g, &p), 0);
	KUNIT_EXPECT_EQ(test, p.data_bytes, 64ull * 64);
}

static void mmt_uapi_geometry_explicit(struct kunit *test)
{
	struct mmt_geometry g = {
		.levels = 2, .log_block_size = 12, .log_arity = { 3, 2 },
	};
	struct mmt_params p;

	KUNIT_ASSERT_EQ(test, mmt_uapi_geometry(&g, &p), 0);
	KUNIT_EXPECT_EQ(test, p.data_bytes, 4096ull * 8 * 4);
	KUNIT_EXPECT_EQ(test, p.blocks, 32u);
}

/* Each bad geometry gets -EINVAL and a zeroed params struct. */
static const struct mmt_geometry mmt_bad_geometries[] = {
	{ .levels = 5 },
	{ .levels = 200 },
	{ .log_block_size = 5 },
	{ .log_block_size = 13 },
	{ .reserved = { 1, 0 } },
	{ .reserved = { 0, 1 } },
	{ .levels = 2, .log_arity = { 6 } },		/* partly given */
	{ .levels = 2, .log_arity = { 6, 5, 4 } },	/* past levels */
	{ .levels = 1, .log_arity = { 7 } },		/* arity 128 */
	{ .levels = 4, .log_arity = { 6, 6, 6, 6 } },	/* 2^24 blocks */
};

static void mmt_bad_geometry_desc(const struct mmt_geometry *g, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE,
		 "levels %u block %u arity %u/%u/%u/%u reserved %u/%u",
		 g->levels, g->log_block_size, g->log_arity[0], g->log_arity[1],
		 g->log_arity[2], g->log_arity[3], g->reserved[0],
		 g->reserved[1]);
}

KUNIT_ARRAY_PARAM(mmt_bad_geometry, mmt_bad_geometries, mmt_bad_geometry_desc);

static void mmt_uapi_geometry_bad(struct kunit *test)
{
	const struct mmt_geometry *g = test->param_value;
	struct mmt_params p, zero = {};

	memset(&p, 0xa5, sizeof(p));
	KUNIT_EXPECT_EQ(test, mmt_uapi_geometry(g, &p), -EINVAL);
	KUNIT_EXPECT_EQ(test, memcmp(&p, &zero, sizeof(p)), 0);
}

static void mmt_uapi_create(struct kunit *test)
{
	struct mmt_pmo_create c = { .size = sizeof(c), .bytes = 4ull << 20 };
	struct mmt_params p;
	u32 n = 0;

	KUNIT_ASSERT_EQ(test, mmt_uapi_pmo_create(&c, &p, &n), 0);
	KUNIT_EXPECT_EQ(test, n, 2u);

	c.bytes = 0;
	KUNIT_EXPECT_EQ(test, mmt_uapi_pmo_create(&c, &p, &n), -EINVAL);
	c.bytes = (2ull << 20) + 1;
	KUNIT_EXPECT_EQ(test, mmt_uapi_pmo_create(&c, &p, &n), -EINVAL);
	c.bytes = 1ull << 20;
	KUNIT_EXPECT_EQ(test, mmt_uapi_pmo_create(&c, &p, &n), -EINVAL);
	c.bytes = 2ull << 20;
	c.flags = MMT_PMO_CLOEXEC;
	KUNIT_EXPECT_EQ(test, mmt_uapi_pmo_create(&c, &p, &n), 0);
	c.flags = 1ull << 1;
	KUNIT_EXPECT_EQ(test, mmt_uapi_pmo_create(&c, &p, &n), -EINVAL);
	c.flags = 1ull << 63;
	KUNIT_EXPECT_EQ(test, mmt_uapi_pmo_create(&c, &p, &n), -EINVAL);
	c.flags = 0;
	c.reserved0 = 1;
	KUNIT_EXPECT_EQ(test, mmt_uapi_pmo_create(&c, &p, &n), -EINVAL);
	c.reserved0 = 0;
	c.reserved1 = 1;
	KUNIT_EXPECT_EQ(test, mmt_uapi_pmo_create(&c, &p, &n), -EINVAL);
	c.reserved1 = 0;
	c.reserved[3] = 1;
	KUNIT_EXPECT_EQ(test, mmt_uapi_pmo_create(&c, &p, &n), -EINVAL);
	c.reserved[3] = 0;
	/* 2^32 closures of 4 KiB (1 level, arity 64, 64-byte blocks) */
	c.geometry.levels = 1;
	c.bytes = 4096ull << 32;
	KUNIT_EXPECT_EQ(test, mmt_uapi_pmo_create(&c, &p, &n), -EINVAL);
	c.bytes = 4096ull * 0xffffffffull;
	KUNIT_EXPECT_EQ(test, mmt_uapi_pmo_create(&c, &p, &n), 0);
	KUNIT_EXPECT_EQ(test, n, 0xffffffffu);
}

static void mmt_uapi_key_rules(struct kunit *test)
{
	struct mmt_pmo_key k = { .size = sizeof(k), .key_len = 16 };

	memset(k.key, 0x11, 16);
	KUNIT_EXPECT_EQ(test, mmt_uapi_key(&k), 0);
	k.flags = MMT_KEY_RECEIVE;
	KUNIT_EXPECT_EQ(test, mmt_uapi_key(&k), 0);
	k.flags = 2;
	KUNIT_EXPECT_EQ(test, mmt_uapi_key(&k), -EINVAL);
	k.flags = 0;
	k.key[16] = 1;		/* a byte past key_len */
	KUNIT_EXPECT_EQ(test, mmt_uapi_key(&k), -EINVAL);
	k.key_len = 32;
	KUNIT_EXPECT_EQ(test, mmt_uapi_key(&k), 0);
	k.key_len = 24;
	KUNIT_EXPECT_EQ(test, mmt_uapi_key(&k), -EINVAL);
	k.key_len = 0;
	KUNIT_EXPECT_EQ(test, mmt_uapi_key(&k), -EINVAL);
	k.key_len = 0xffffffff;
	KUNIT_EXPECT_EQ(test, mmt_uapi_key(&k), -EINVAL);
}

static void mmt_uapi_geometry_roundtrip(struct kunit *test)
{
	struct mmt_geometry g = { .levels = 4 }, out;
	struct mmt_params p, q;

	KUNIT_ASSERT_EQ(test, mmt_uapi_geometry(&g, &p), 0);
	mmt_uapi_geometry_out(&p, &out);
	KUNIT_EXPECT_EQ(test, out.levels, 4);
	KUNIT_EXPECT_EQ(test, out.log_block_size, 6);
	KUNIT_EXPECT_EQ(test, out.log_arity[0], 6);
	KUNIT_EXPECT_EQ(test, out.log_arity[3], 4);
	KUNIT_ASSERT_EQ(test, mmt_uapi_geometry(&out, &q), 0);
	KUNIT_EXPECT_EQ(test, memcmp(&p, &q, sizeof(p)), 0);
}

static struct kunit_case mmt_uapi_cases[] = {
	KUNIT_CASE(mmt_uapi_geometry_defaults),
	KUNIT_CASE(mmt_uapi_geometry_explicit),
	KUNIT_CASE_PARAM(mmt_uapi_geometry_bad, mmt_bad_geometry_gen_params),
	KUNIT_CASE(mmt_uapi_create),
	KUNIT_CASE(mmt_uapi_key_rules),
	KUNIT_CASE(mmt_uapi_geometry_roundtrip),
	{}
};

static struct kunit_suite mmt_uapi_suite = {
	.name = "mmt_uapi",
	.test_cases = mmt_uapi_cases,
};

kunit_test_suites(&mmt_uapi_suite);
