// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_geometry_test.c - mmt_params_init() (suite mmt_geometry): exact sizes
 * of the paper's geometries (HPCA 2023 Table V: 128 KiB / 2 MiB / 32 MiB
 * closures), invariants over levels 1..4 x block sizes 64..4096, and every
 * invalid input.
 */
#include <kunit/test.h>

#include "mmt_lib.h"

struct geo_exact {
	unsigned int levels, log_bs;
	u32 blocks;
	u64 data_bytes;
	u32 level_nodes[MMT_MAX_LEVELS];
	u32 node_count, node_size;
	u64 nodes_bytes, macs_bytes, meta_bytes;
};

/*
 * Worked out by hand from docs/ENGINE.md: node = 8 (major) + 64 (minors of
 * the widest level, arity 64) + 8 (MAC) = 80 bytes; meta = MACs + nodes +
 * 96-byte header (format v2) + 128-byte sealed root.
 */
static const struct geo_exact geo_exact[] = {
	/* 1 level: 64 blocks, the top node only (in the root) */
	{ 1, 6, 64, 4096, { 1 }, 0, 80, 0, 512, 512 + 224 },
	/* 2 levels, 64 B: 64 x 32 blocks = 128 KiB */
	{ 2, 6, 2048, 131072, { 32, 1 }, 32, 80, 2560, 16384,
	  16384 + 2560 + 224 },
	/* 3 levels, 64 B: 2 MiB; metadata 304608 B = 14.52 % of data */
	{ 3, 6, 32768, 2097152, { 512, 16, 1 }, 528, 80, 42240, 262144,
	  262144 + 42240 + 224 },
	/* 4 levels, 64 B: 32 MiB */
	{ 4, 6, 524288, 33554432, { 8192, 256, 16, 1 }, 8464, 80, 677120,
	  4194304, 4194304 + 677120 + 224 },
	/* 3 levels, 4 KiB blocks: 128 MiB, MACs 0.2 % */
	{ 3, 12, 32768, 134217728, { 512, 16, 1 }, 528, 80, 42240, 262144,
	  262144 + 42240 + 224 },
};

static void geo_exact_desc(const struct geo_exact *g, char *desc)
{
	sprintf(desc, "levels=%u block=%u", g->levels, 1u << g->log_bs);
}

KUNIT_ARRAY_PARAM(geo_exact, geo_exact, geo_exact_desc);

static void exact_sizes(struct kunit *test)
{
	const struct geo_exact *g = test->param_value;
	struct mmt_params p;
	unsigned int l;

	KUNIT_ASSERT_EQ(test, mmt_params_init(&p, g->levels, NULL, g->log_bs),
			0);
	KUNIT_EXPECT_EQ(test, p.levels, g->levels);
	KUNIT_EXPECT_EQ(test, p.block_size, 1u << g->log_bs);
	KUNIT_EXPECT_EQ(test, p.blocks, g->blocks);
	KUNIT_EXPECT_EQ(test, p.data_bytes, g->data_bytes);
	for (l = 0; l < g->levels; l++)
		KUNIT_EXPECT_EQ(test, p.level_nodes[l], g->level_nodes[l]);
	KUNIT_EXPECT_EQ(test, p.node_count, g->node_count);
	KUNIT_EXPECT_EQ(test, p.node_size, g->node_size);
	KUNIT_EXPECT_EQ(test, p.nodes_bytes, g->nodes_bytes);
	KUNIT_EXPECT_EQ(test, p.macs_bytes, g->macs_bytes);
	KUNIT_EXPECT_EQ(test, p.meta_bytes, g->meta_bytes);
}

/* The paper's ~14 % metadata at 64-byte blocks, 3 levels (DESIGN.md 2). */
static void metadata_ratio(struct kunit *test)
{
	struct mmt_params p;

	KUNIT_ASSERT_EQ(test, mmt_params_init(&p, 3, NULL, 6), 0);
	/* 304608 / 2097152 = 14.52 %: between 14.5 and 14.6 % */
	KUNIT_EXPECT_GE(test, p.meta_bytes * 1000, p.data_bytes * 145);
	KUNIT_EXPECT_LT(test, p.meta_bytes * 1000, p.data_bytes * 146);
}

struct geo_any {
	unsigned int levels, log_bs;
};

static const struct geo_any geo_any[] = {
	{ 1, 6 }, { 1, 7 }, { 1, 8 }, { 1, 9 }, { 1, 10 }, { 1, 11 }, { 1, 12 },
	{ 2, 6 }, { 2, 7 }, { 2, 8 }, { 2, 9 }, { 2, 10 }, { 2, 11 }, { 2, 12 },
	{ 3, 6 }, { 3, 7 }, { 3, 8 }, { 3, 9 }, { 3, 10 }, { 3, 11 }, { 3, 12 },
	{ 4, 6 }, { 4, 7 }, { 4, 8 }, { 4, 9 }, { 4, 10 }, { 4, 11 }, { 4, 12 },
};

static void geo_any_desc(const struct geo_any *g, char *desc)
{
	sprintf(desc, "levels=%u block=%u", g->levels, 1u << g->log_bs);
}

KUNIT_ARRAY_PARAM(geo_any, geo_any, geo_any_desc);

/* Defaults 64/32/16/16: data = 2^(6+5+4+4 [:levels] + log_bs) bytes. */
static void invariants(struct kunit *test)
{
	static const unsigned int cum[] = { 6, 11, 15, 19 };
	const struct geo_any *g = test->param_value;
	struct mmt_params p;
	unsigned int l;
	u32 start = 0;

	KUNIT_ASSERT_EQ(test, mmt_params_init(&p, g->levels, NULL, g->log_bs),
			0);
	KUNIT_EXPECT_EQ(test, p.log_blocks, cum[g->levels - 1]);
	KUNIT_EXPECT_EQ(test, p.blocks, 1u << cum[g->levels - 1]);
	KUNIT_EXPECT_EQ(test, p.data_bytes,
			1ull << (cum[g->levels - 1] + g->log_bs));
	KUNIT_EXPECT_EQ(test, p.level_nodes[g->levels - 1], 1u);
	for (l = 0; l < g->levels; l++) {
		KUNIT_EXPECT_EQ(test, p.level_nodes[l],
				p.blocks >> cum[l]);
		KUNIT_EXPECT_EQ(test, p.level_start[l], start);
		if (l + 1 < g->levels)
			start += p.level_nodes[l];
	}
	KUNIT_EXPECT_EQ(test, p.node_count, start);
	KUNIT_EXPECT_EQ(test, p.node_size, 80u);
	KUNIT_EXPECT_EQ(test, p.macs_bytes, (u64)p.blocks * 8);
	KUNIT_EXPECT_EQ(test, p.nodes_bytes, (u64)p.node_count * 80);
	KUNIT_EXPECT_EQ(test, p.meta_bytes,
			p.macs_bytes + p.nodes_bytes + 96 + 128);
	for (l = g->levels; l < MMT_MAX_LEVELS; l++)
		KUNIT_EXPECT_EQ(test, p.level_nodes[l], 0u);
}

static void custom_arity(struct kunit *test)
{
	static const u8 a83[] = { 3, 2 };	/* arity 8 then 4 */
	static const u8 a_max[] = { 6, 6, 4, 4 };	/* 2^20 blocks */
	static const u8 a_one[] = { 1, 1, 1, 1 };
	struct mmt_params p;

	KUNIT_ASSERT_EQ(test, mmt_params_init(&p, 2, a83, 6), 0);
	KUNIT_EXPECT_EQ(test, p.blocks, 32u);
	KUNIT_EXPECT_EQ(test, p.data_bytes, 2048ull);
	KUNIT_EXPECT_EQ(test, p.level_nodes[0], 4u);
	KUNIT_EXPECT_EQ(test, p.node_count, 4u);
	KUNIT_EXPECT_EQ(test, p.node_size, 8u + 8 + 8);	/* 8 minors */
	KUNIT_EXPECT_EQ(test, p.nodes_bytes, 96ull);

	KUNIT_ASSERT_EQ(test, mmt_params_init(&p, 4, a_max, 12), 0);
	KUNIT_EXPECT_EQ(test, p.blocks, 1u << 20);
	KUNIT_EXPECT_EQ(test, p.data_bytes, 1ull << 32);
	KUNIT_EXPECT_EQ(test, p.level_start[1], 1u << 14);
	KUNIT_EXPECT_EQ(test, p.level_start[2], (1u << 14) + (1u << 8));

	KUNIT_ASSERT_EQ(test, mmt_params_init(&p, 4, a_one, 6), 0);
	KUNIT_EXPECT_EQ(test, p.blocks, 16u);
	KUNIT_EXPECT_EQ(test, p.node_size, 24u);	/* 2 minors -> 8 */
	KUNIT_EXPECT_EQ(test, p.node_count, 8u + 4 + 2);
}

struct geo_bad {
	const char *name;
	unsigned int levels, log_bs;
	u8 arity[MMT_MAX_LEVELS];
	bool defaults;
};

static const struct geo_bad geo_bad[] = {
	{ "levels=0", 0, 6, {}, true },
	{ "levels=5", 5, 6, { 1, 1, 1, 1 }, false },
	{ "levels=huge", 0xffffffffu, 6, {}, true },
	{ "block=32", 3, 5, {}, true },
	{ "block=8192", 3, 13, {}, true },
	{ "block=0", 3, 0, {}, true },
	{ "arity=1", 2, 6, { 0, 5 }, false },
	{ "arity=128", 2, 6, { 7, 5 }, false },
	{ "top arity=1", 3, 6, { 6, 5, 0 }, false },
	{ "2^21 blocks", 4, 6, { 6, 6, 5, 4 }, false },
	{ "2^24 blocks", 4, 12, { 6, 6, 6, 6 }, false },
};

static void geo_bad_desc(const struct geo_bad *g, char *desc)
{
	strcpy(desc, g->name);
}

KUNIT_ARRAY_PARAM(geo_bad, geo_bad, geo_bad_desc);

static void invalid_input(struct kunit *test)
{
	const struct geo_bad *g = test->param_value;
	struct mmt_params p, zero;

	memset(&p, 0xff, sizeof(p));
	memset(&zero, 0, sizeof(zero));
	KUNIT_EXPECT_EQ(test, mmt_params_init(&p, g->levels,
					      g->defaults ? NULL : g->arity,
					      g->log_bs), -EINVAL);
	KUNIT_EXPECT_EQ(test, memcmp(&p, &zero, sizeof(p)), 0);
}

/* Arities beyond @levels are not read; a good call clears old contents. */
static void ignores_unused(struct kunit *test)
{
	static const u8 a[] = { 6, 5, 0, 99 };
	struct mmt_params p;

	memset(&p, 0xff, sizeof(p));
	KUNIT_ASSERT_EQ(test, mmt_params_init(&p, 2, a, 6), 0);
	KUNIT_EXPECT_EQ(test, p.log_arity[2], 0);
	KUNIT_EXPECT_EQ(test, p.log_arity[3], 0);
	KUNIT_EXPECT_EQ(test, p.level_nodes[2], 0u);
	KUNIT_EXPECT_EQ(test, p.level_start[3], 0u);
	KUNIT_EXPECT_EQ(test, p.level_start[1], 32u);
}

static struct kunit_case mmt_geometry_cases[] = {
	KUNIT_CASE_PARAM(exact_sizes, geo_exact_gen_params),
	KUNIT_CASE(metadata_ratio),
	KUNIT_CASE_PARAM(invariants, geo_any_gen_params),
	KUNIT_CASE(custom_arity),
	KUNIT_CASE_PARAM(invalid_input, geo_bad_gen_params),
	KUNIT_CASE(ignores_unused),
	{}
};

static struct kunit_suite mmt_geometry_suite = {
	.name = "mmt_geometry",
	.test_cases = mmt_geometry_cases,
};

kunit_test_suites(&mmt_geometry_suite);
