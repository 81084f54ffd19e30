// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_tree_test.c - the MMT data path (suites mmt_counters and mmt_tree):
 * byte-exact round trips, tamper detection at every position class with
 * the MMT unchanged afterwards, split-counter overflow and exhaustion,
 * nonce uniqueness, state and range checks, re-encryption under a new GUA.
 * Only the public engine API (mmt_lib.h) is used.
 */
#include <kunit/test.h>

#include "mmt_lib.h"

/* ------------------------------------------------------------ fixture */

struct geo {
	const char *name;
	unsigned int levels, log_bs;
	u8 arity[MMT_MAX_LEVELS];
	bool defaults;
};

static const struct geo tree_geos[] = {
	{ "1 level x8, 64 B", 1, 6, { 3 }, false },
	{ "2 levels 8/4, 64 B", 2, 6, { 3, 2 }, false },
	{ "3 levels 4/4/2, 64 B", 3, 6, { 2, 2, 1 }, false },
	{ "4 levels 2/2/2/2, 128 B", 4, 7, { 1, 1, 1, 1 }, false },
	{ "2 levels 4/4, 4 KiB", 2, 12, { 2, 2 }, false },
	{ "2 levels 8/2, 512 B", 2, 9, { 3, 1 }, false },
	/* runs long enough for the data MAC pads' CTR calls (pad_layout) */
	{ "2 levels 64/4, 64 B", 2, 6, { 6, 2 }, false },
};

static void geo_desc(const struct geo *g, char *desc)
{
	strcpy(desc, g->name);
}

KUNIT_ARRAY_PARAM(tree_geo, tree_geos, geo_desc);

struct fix {
	struct mmt_params p;
	struct mmt m;
	u8 *ref;	/* expected plaintext */
	u8 *buf;	/* data_bytes of read buffer */
	u64 rng;
};

struct snap {
	u8 *data, *macs, *nodes;
	struct mmt_root root;
};

static void tree_exit(struct kunit *test)
{
	struct fix *f = test->priv;

	if (f && f->m.crypto)
		mmt_crypto_free(f->m.crypto);
}

static u64 rnd(struct fix *f)
{
	f->rng ^= f->rng << 13;
	f->rng ^= f->rng >> 7;
	f->rng ^= f->rng << 17;
	return f->rng;
}

static void fill(struct fix *f, u8 *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (u8)rnd(f);
}

static struct fix *setup(struct kunit *test, const struct geo *g)
{
	static const u8 key[16] = "mmt test key 01";
	struct fix *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	struct mmt_crypto *c;

	KUNIT_ASSERT_NOT_NULL(test, f);
	test->priv = f;
	f->rng = 0x9e3779b97f4a7c15ull;
	KUNIT_ASSERT_EQ(test, mmt_params_init(&f->p, g->levels,
					      g->defaults ? NULL : g->arity,
					      g->log_bs), 0);
	c = mmt_crypto_alloc(key, sizeof(key), MMT_TEST_KSALT);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(c));
	f->m.crypto = c;
	f->m.p = &f->p;
	f->m.data = kunit_kzalloc(test, f->p.data_bytes, GFP_KERNEL);
	f->m.macs = kunit_kzalloc(test, f->p.macs_bytes, GFP_KERNEL);
	f->m.nodes = kunit_kzalloc(test, f->p.nodes_bytes + 1, GFP_KERNEL);
	f->m.scratch = kunit_kzalloc(test, mmt_scratch_bytes(&f->p),
				     GFP_KERNEL);
	f->ref = kunit_kzalloc(test, f->p.data_bytes, GFP_KERNEL);
	f->buf = kunit_kzalloc(test, f->p.data_bytes, GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, f->m.data && f->m.macs && f->m.nodes &&
			  f->m.scratch && f->ref && f->buf);
	f->m.root.state = MMT_VALID;
	KUNIT_ASSERT_EQ(test, mmt_format(&f->m, 0x123456789abull), 0);
	return f;
}

static void take(struct kunit *test, struct fix *f, struct snap *s)
{
	s->data = kunit_kmalloc(test, f->p.data_bytes, GFP_KERNEL);
	s->macs = kunit_kmalloc(test, f->p.macs_bytes, GFP_KERNEL);
	s->nodes = kunit_kmalloc(test, f->p.nodes_bytes + 1, GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, s->data && s->macs && s->nodes);
	memcpy(s->data, f->m.data, f->p.data_bytes);
	memcpy(s->macs, f->m.macs, f->p.macs_bytes);
	memcpy(s->nodes, f->m.nodes, f->p.nodes_bytes);
	s->root = f->m.root;
}

static bool same(struct fix *f, const struct snap *s)
{
	return !memcmp(s->data, f->m.data, f->p.data_bytes) &&
	       !memcmp(s->macs, f->m.macs, f->p.macs_bytes) &&
	       !memcmp(s->nodes, f->m.nodes, f->p.nodes_bytes) &&
	       !memcmp(&s->root, &f->m.root, sizeof(s->root));
}

/* Write through the engine and into the reference copy. */
static int wr(struct fix *f, u64 off, size_t len)
{
	u8 *src = f->buf;
	int err;

	fill(f, src, len);
	err = mmt_write(&f->m, off, src, len);
	if (!err)
		memcpy(f->ref + off, src, len);
	return err;
}

/* Read [off, off + len) and compare with the reference. */
static void check(struct kunit *test, struct fix *f, u64 off, size_t len)
{
	memset(f->buf, 0xee, len);
	KUNIT_ASSERT_EQ(test, mmt_read(&f->m, off, f->buf, len), 0);
	KUNIT_EXPECT_EQ_MSG(test, memcmp(f->buf, f->ref + off, len), 0,
			    "off %llu len %zu", (unsigned long long)off, len);
}

/* ------------------------------------------------------------ mmt_tree */

static void roundtrip(struct kunit *test)
{
	struct fix *f = setup(test, test->param_value);
	u64 n = f->p.data_bytes;
	u32 bs = f->p.block_size;
	unsigned int i;

	check(test, f, 0, n);	/* formatted: zeros */
	KUNIT_ASSERT_EQ(test, wr(f, 0, bs), 0);			/* aligned */
	check(test, f, 0, n);
	KUNIT_ASSERT_EQ(test, wr(f, bs + 3, 1), 0);		/* 1 byte */
	check(test, f, 0, n);
	KUNIT_ASSERT_EQ(test, wr(f, bs / 2, bs * 2), 0);	/* across */
	check(test, f, 0, n);
	KUNIT_ASSERT_EQ(test, wr(f, n - 1, 1), 0);		/* last byte */
	check(test, f, n - 1, 1);
	KUNIT_ASSERT_EQ(test, wr(f, 0, n), 0);			/* all */
	check(test, f, 0, n);
	for (i = 0; i < 200; i++) {
		u64 off = rnd(f) % n;
		size_t len = 1 + rnd(f) % min_t(u64, n - off, 3 * bs);

		KUNIT_ASSERT_EQ(test, wr(f, off, len), 0);
		off = rnd(f) % n;
		len = 1 + rnd(f) % (n - off);
		check(test, f, off, len);
	}
	check(test, f, 0, n);
	KUNIT_EXPECT_EQ(test, mmt_verify_all(&f->m), 0);
	KUNIT_EXPECT_EQ(test, f->m.root.root_counter, 205ull);
}

/* The paper's default geometry, 2 MiB, whole-MMT transfers. */
static void roundtrip_default(struct kunit *test)
{
	static const struct geo g = { "default", 3, 6, {}, true };
	struct fix *f = setup(test, &g);
	u64 n = f->p.data_bytes;
	u64 ctr;

	KUNIT_ASSERT_EQ(test, n, 2097152ull);
	KUNIT_ASSERT_EQ(test, wr(f, 0, n), 0);
	check(test, f, 0, n);
	KUNIT_ASSERT_EQ(test, wr(f, 12345, 70000), 0);
	check(test, f, 0, n);
	KUNIT_EXPECT_EQ(test, mmt_verify_all(&f->m), 0);
	KUNIT_ASSERT_EQ(test, mmt_block_counter(&f->m, 12345 / 64, &ctr), 0);
	KUNIT_EXPECT_EQ(test, ctr, 2ull);
	KUNIT_ASSERT_EQ(test, mmt_block_counter(&f->m, 32767, &ctr), 0);
	KUNIT_EXPECT_EQ(test, ctr, 1ull);
}

/*
 * One write call bumps each block's minor once and each ancestor's minor
 * for a touched child once (batching), and the root counter once.
 */
static void batch_counts(struct kunit *test)
{
	struct fix *f = setup(test, test->param_value);
	u32 b, j, top_arity = 1u << f->p.log_arity[f->p.levels - 1];
	u64 ctr;

	KUNIT_ASSERT_EQ(test, wr(f, 0, f->p.data_bytes), 0);
	for (b = 0; b < f->p.blocks; b++) {
		KUNIT_ASSERT_EQ(test, mmt_block_counter(&f->m, b, &ctr), 0);
		KUNIT_EXPECT_EQ(test, ctr, 1ull);
	}
	for (j = 0; j < top_arity; j++)
		KUNIT_EXPECT_EQ(test, f->m.root.top.minor[j], 1);
	KUNIT_EXPECT_EQ(test, f->m.root.top.major, 0ull);
	KUNIT_EXPECT_EQ(test, f->m.root.root_counter, 1ull);
	/* A second write touching only block 1: just its path moves. */
	KUNIT_ASSERT_EQ(test, wr(f, f->p.block_size, 1), 0);
	KUNIT_ASSERT_EQ(test, mmt_block_counter(&f->m, 1, &ctr), 0);
	KUNIT_EXPECT_EQ(test, ctr, 2ull);
	KUNIT_ASSERT_EQ(test, mmt_block_counter(&f->m, 0, &ctr), 0);
	KUNIT_EXPECT_EQ(test, ctr, 1ull);
	/* top child holding block 1: minor 2, its neighbour still 1 */
	j = 1u >> (f->p.log_blocks - f->p.log_arity[f->p.levels - 1]);
	KUNIT_EXPECT_EQ(test, f->m.root.top.minor[j], 2);
	KUNIT_EXPECT_EQ(test, f->m.root.top.minor[j ^ 1], 1);
}

/*
 * Flip one byte at @where, expect every access that depends on it to fail
 * with -EBADMSG and change nothing, then restore it.
 */
static void expect_tamper(struct kunit *test, struct fix *f, u8 *where,
			  u64 off, const char *what)
{
	struct snap s;
	u32 bs = f->p.block_size;
	u64 rmw = off - off % bs;	/* a partial write into that block */
	unsigned int i;
	int err;

	*where ^= 0x10;
	take(test, f, &s);
	memset(f->buf, 0xee, bs);
	err = mmt_read(&f->m, off, f->buf, 1);
	KUNIT_EXPECT_EQ_MSG(test, err, -EBADMSG, "%s: read", what);
	for (i = 0; i < bs; i++)
		if (f->buf[i] != (i ? 0xee : 0))
			break;
	KUNIT_EXPECT_EQ_MSG(test, i, bs, "%s: buffer not wiped", what);
	KUNIT_EXPECT_EQ_MSG(test, mmt_read(&f->m, 0, f->buf, f->p.data_bytes),
			    -EBADMSG, "%s: read all", what);
	KUNIT_EXPECT_EQ_MSG(test, mmt_write(&f->m, rmw + 1, "xy", 2),
			    -EBADMSG, "%s: write", what);
	KUNIT_EXPECT_EQ_MSG(test, mmt_write_check(&f->m, rmw + 1, 2),
			    -EBADMSG, "%s: write check", what);
	/* a write whose intact first block would succeed on its own */
	if (rmw >= bs)
		KUNIT_EXPECT_EQ_MSG(test, mmt_write(&f->m, rmw - bs / 2,
						    f->ref, bs),
				    -EBADMSG, "%s: write across", what);
	if (rmw >= bs)
		KUNIT_EXPECT_EQ_MSG(test, mmt_write_check(&f->m, rmw - bs / 2,
							  bs),
				    -EBADMSG, "%s: write check across", what);
	KUNIT_EXPECT_EQ_MSG(test, mmt_verify_all(&f->m), -EBADMSG, "%s: all",
			    what);
	KUNIT_EXPECT_EQ_MSG(test, mmt_regua(&f->m, NULL, 0x777), -EBADMSG,
			    "%s: regua", what);
	KUNIT_EXPECT_TRUE_MSG(test, same(f, &s), "%s: MMT changed", what);
	*where ^= 0x10;
	KUNIT_EXPECT_EQ_MSG(test, mmt_verify_all(&f->m), 0, "%s: restored",
			    what);
}

static void tamper(struct kunit *test)
{
	struct fix *f = setup(test, test->param_value);
	const struct mmt_params *p = &f->p;
	u32 bs = p->block_size, b = p->blocks - 3, i;
	unsigned int l;
	char what[64];

	for (i = 0; i < 20; i++)
		KUNIT_ASSERT_EQ(test, wr(f, rnd(f) % (p->data_bytes - 8), 8),
				0);
	KUNIT_ASSERT_EQ(test, wr(f, 0, p->data_bytes), 0);

	expect_tamper(test, f, f->m.data + (u64)b * bs + bs - 1,
		      (u64)b * bs, "ciphertext");
	expect_tamper(test, f, f->m.data + (u64)b * bs,
		      (u64)b * bs + bs - 1, "ciphertext byte 0");
	expect_tamper(test, f, f->m.macs + (u64)b * 8 + 7, (u64)b * bs,
		      "data MAC");
	for (l = 0; l + 1 < p->levels; l++) {
		/* the node on block b's path at level l */
		u32 shift = 0, k;
		u8 *node;

		for (k = 0; k <= l; k++)
			shift += p->log_arity[k];
		node = f->m.nodes + (u64)(p->level_start[l] + (b >> shift)) *
		       p->node_size;
		sprintf(what, "level %u major", l);
		expect_tamper(test, f, node + 1, (u64)b * bs, what);
		sprintf(what, "level %u minor", l);
		expect_tamper(test, f, node + 8 + ((b >> (shift -
				p->log_arity[l])) & ((1u << p->log_arity[l]) - 1)),
			      (u64)b * bs, what);
		sprintf(what, "level %u last counter byte", l);
		expect_tamper(test, f, node + p->node_size - 9, (u64)b * bs,
			      what);
		sprintf(what, "level %u MAC", l);
		expect_tamper(test, f, node + p->node_size - 1, (u64)b * bs,
			      what);
	}
	{
		u32 s = p->log_blocks - p->log_arity[p->levels - 1];

		expect_tamper(test, f, &f->m.root.top.minor[b >> s],
			      (u64)b * bs, "top minor");
		expect_tamper(test, f, (u8 *)&f->m.root.top.major,
			      (u64)b * bs, "top major");
		expect_tamper(test, f, (u8 *)&f->m.root.gua, (u64)b * bs,
			      "GUA");
	}
	check(test, f, 0, p->data_bytes);
	/* intact again: the check passes and changes nothing */
	{
		struct snap s;

		take(test, f, &s);
		KUNIT_EXPECT_EQ(test, mmt_write_check(&f->m, 0, p->data_bytes),
				0);
		KUNIT_EXPECT_EQ(test, mmt_write_check(&f->m, 3, bs), 0);
		KUNIT_EXPECT_TRUE(test, same(f, &s));
	}
}

/* Old untrusted memory (a consistent earlier state) is a replay. */
static void replay_and_swap(struct kunit *test)
{
	struct fix *f = setup(test, test->param_value);
	const struct mmt_params *p = &f->p;
	u32 bs = p->block_size;
	struct snap old, now;
	u8 mac[8];

	KUNIT_ASSERT_EQ(test, wr(f, 0, p->data_bytes), 0);
	take(test, f, &old);
	KUNIT_ASSERT_EQ(test, wr(f, 0, p->data_bytes), 0);
	take(test, f, &now);
	/* Roll back all untrusted memory; the root is newer. */
	memcpy(f->m.data, old.data, p->data_bytes);
	memcpy(f->m.macs, old.macs, p->macs_bytes);
	memcpy(f->m.nodes, old.nodes, p->nodes_bytes);
	KUNIT_EXPECT_EQ(test, mmt_read(&f->m, 0, f->buf, bs), -EBADMSG);
	KUNIT_EXPECT_EQ(test, mmt_verify_all(&f->m), -EBADMSG);
	/* Roll back one block and its MAC only. */
	memcpy(f->m.nodes, now.nodes, p->nodes_bytes);
	memcpy(f->m.data, now.data, p->data_bytes);
	memcpy(f->m.macs, now.macs, p->macs_bytes);
	memcpy(f->m.data + bs, old.data + bs, bs);
	memcpy(f->m.macs + 8, old.macs + 8, 8);
	KUNIT_EXPECT_EQ(test, mmt_read(&f->m, bs, f->buf, bs), -EBADMSG);
	memcpy(f->m.data + bs, now.data + bs, bs);
	memcpy(f->m.macs + 8, now.macs + 8, 8);
	/* Swap blocks 0 and 2 with their MACs (same counters). */
	memcpy(f->m.data, now.data + 2 * bs, bs);
	memcpy(f->m.data + 2 * bs, now.data, bs);
	memcpy(mac, f->m.macs, 8);
	memcpy(f->m.macs, f->m.macs + 16, 8);
	memcpy(f->m.macs + 16, mac, 8);
	KUNIT_EXPECT_EQ(test, mmt_read(&f->m, 0, f->buf, bs), -EBADMSG);
	KUNIT_EXPECT_EQ(test, mmt_read(&f->m, 2 * bs, f->buf, bs), -EBADMSG);
	memcpy(f->m.data, now.data, p->data_bytes);
	memcpy(f->m.macs, now.macs, p->macs_bytes);
	/*
	 * Swap blocks 0 and 1 with their MACs: one pair under one counter,
	 * whose two MAC pads are the two halves of one AES output (format v4;
	 * by ECB in small MMTs, by one CTR call in "2 levels 64/4").  The hash
	 * does not bind the block index, so only the halves tell them apart.
	 */
	memcpy(f->m.data, now.data + bs, bs);
	memcpy(f->m.data + bs, now.data, bs);
	memcpy(f->m.macs, now.macs + 8, 8);
	memcpy(f->m.macs + 8, now.macs, 8);
	KUNIT_EXPECT_EQ(test, mmt_read(&f->m, 0, f->buf, bs), -EBADMSG);
	KUNIT_EXPECT_EQ(test, mmt_read(&f->m, bs, f->buf, bs), -EBADMSG);
	KUNIT_EXPECT_EQ(test, mmt_verify_all(&f->m), -EBADMSG);
	memcpy(f->m.data, now.data, p->data_bytes);
	memcpy(f->m.macs, now.macs, p->macs_bytes);
	check(test, f, 0, p->data_bytes);
}

static void states(struct kunit *test)
{
	struct fix *f = setup(test, test->param_value);
	u32 bs = f->p.block_size;
	struct snap s;

	KUNIT_ASSERT_EQ(test, wr(f, 0, bs), 0);
	take(test, f, &s);
	f->m.root.state = MMT_INVALID;
	s.root.state = MMT_INVALID;
	KUNIT_EXPECT_EQ(test, mmt_write(&f->m, 0, "a", 1), -EPERM);
	KUNIT_EXPECT_EQ(test, mmt_read(&f->m, 0, f->buf, 1), -EPERM);
	KUNIT_EXPECT_EQ(test, mmt_write_check(&f->m, 0, 1), -EPERM);
	f->m.root.state = MMT_WAITING;
	s.root.state = MMT_WAITING;
	KUNIT_EXPECT_EQ(test, mmt_write(&f->m, 0, "a", 1), -EPERM);
	KUNIT_EXPECT_EQ(test, mmt_read(&f->m, 0, f->buf, 1), -EPERM);
	KUNIT_EXPECT_TRUE(test, same(f, &s));
	f->m.root.state = MMT_SENDING;
	s.root.state = MMT_SENDING;
	KUNIT_EXPECT_EQ(test, mmt_write(&f->m, 0, "a", 1), -EPERM);
	check(test, f, 0, bs);
	KUNIT_EXPECT_TRUE(test, same(f, &s));
	f->m.root.state = MMT_VALID;
	f->m.root.read_only = true;
	s.root.state = MMT_VALID;
	s.root.read_only = true;
	KUNIT_EXPECT_EQ(test, mmt_write(&f->m, 0, "a", 1), -EPERM);
	KUNIT_EXPECT_EQ(test, mmt_write(&f->m, 0, "a", 0), -EPERM);
	check(test, f, 0, bs);
	KUNIT_EXPECT_TRUE(test, same(f, &s));
	f->m.root.read_only = false;
	KUNIT_EXPECT_EQ(test, wr(f, 0, 1), 0);
	check(test, f, 0, bs);
}

static void ranges(struct kunit *test)
{
	struct fix *f = setup(test, test->param_value);
	u64 n = f->p.data_bytes;
	struct snap s;

	take(test, f, &s);
	KUNIT_EXPECT_EQ(test, mmt_write(&f->m, n, "a", 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, mmt_write(&f->m, n - 1, "ab", 2), -EINVAL);
	KUNIT_EXPECT_EQ(test, mmt_write(&f->m, 1, f->buf, (size_t)-1),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, mmt_write(&f->m, ~0ull, "a", 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, mmt_write(&f->m, n + 1, "a", 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, mmt_read(&f->m, n, f->buf, 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, mmt_read(&f->m, 8, f->buf, n), -EINVAL);
	KUNIT_EXPECT_EQ(test, mmt_read(&f->m, ~0ull - 2, f->buf, 4), -EINVAL);
	/* Length 0 is a no-op, also at the very end. */
	KUNIT_EXPECT_EQ(test, mmt_write(&f->m, n, "a", 0), 0);
	KUNIT_EXPECT_EQ(test, mmt_write(&f->m, 5, "a", 0), 0);
	KUNIT_EXPECT_EQ(test, mmt_read(&f->m, n, f->buf, 0), 0);
	KUNIT_EXPECT_TRUE(test, same(f, &s));
	KUNIT_EXPECT_EQ(test, mmt_block_counter(&f->m, f->p.blocks, &s.root.gua),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, mmt_format(&f->m, MMT_GUA_MASK + 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, mmt_regua(&f->m, NULL, MMT_GUA_MASK + 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, mmt_regua(&f->m, NULL, f->m.root.gua), -EINVAL);
	KUNIT_EXPECT_TRUE(test, same(f, &s));
}

static void regua(struct kunit *test)
{
	struct fix *f = setup(test, test->param_value);
	const struct mmt_params *p = &f->p;
	u32 b, bs = p->block_size;
	struct snap s;

	KUNIT_ASSERT_EQ(test, wr(f, 0, p->data_bytes), 0);
	KUNIT_ASSERT_EQ(test, wr(f, 3, bs), 0);
	take(test, f, &s);
	KUNIT_ASSERT_EQ(test, mmt_regua(&f->m, NULL, 0x2000000000001ull), 0);
	KUNIT_EXPECT_EQ(test, f->m.root.gua, 0x2000000000001ull);
	KUNIT_EXPECT_EQ(test, f->m.root.root_counter, s.root.root_counter);
	KUNIT_EXPECT_EQ(test, memcmp(&f->m.root.top, &s.root.top,
				     sizeof(s.root.top)), 0);
	for (b = 0; b < p->blocks; b++) {
		KUNIT_EXPECT_NE(test, memcmp(f->m.data + (u64)b * bs,
					     s.data + (u64)b * bs, 16), 0);
		KUNIT_EXPECT_NE(test, memcmp(f->m.macs + 8 * b,
					     s.macs + 8 * b, 8), 0);
	}
	if (p->levels > 1)
		KUNIT_EXPECT_NE(test, memcmp(f->m.nodes + p->node_size - 8,
					     s.nodes + p->node_size - 8, 8), 0);
	check(test, f, 0, p->data_bytes);
	KUNIT_EXPECT_EQ(test, mmt_verify_all(&f->m), 0);
	/* The old untrusted memory does not verify under the new GUA. */
	memcpy(f->m.data, s.data, bs);
	memcpy(f->m.macs, s.macs, 8);
	KUNIT_EXPECT_EQ(test, mmt_read(&f->m, 0, f->buf, 1), -EBADMSG);
}

/* ------------------------------------------------------------ counters */

/*
 * 200 writes to block 0: the leaf minor overflows at write 128, the leaf
 * major goes to 1 and every block of the leaf is re-encrypted; the same
 * happens to the leaf's parent minor.
 */
static void minor_overflow(struct kunit *test)
{
	struct fix *f = setup(test, test->param_value);
	const struct mmt_params *p = &f->p;
	u32 bs = p->block_size, leaf = 1u << p->log_arity[0], b;
	unsigned int i;
	u64 ctr;

	KUNIT_ASSERT_EQ(test, wr(f, 0, p->data_bytes), 0);	/* ctr 1 */
	for (i = 0; i < 199; i++) {
		/* alternate partial and whole writes to block 0 */
		KUNIT_ASSERT_EQ(test, wr(f, i & 1 ? 5 : 0, i & 1 ? 7 : bs), 0);
		if (i == 125 || i == 126 || i == 127)
			check(test, f, 0, (u64)leaf * bs);
	}
	check(test, f, 0, p->data_bytes);
	KUNIT_ASSERT_EQ(test, mmt_block_counter(&f->m, 0, &ctr), 0);
	/* 200 writes: 127 on major 0, then 73 on major 1 (minor 0..72) */
	KUNIT_EXPECT_EQ(test, ctr, (1ull << 7) | 72);
	for (b = 1; b < leaf; b++) {
		KUNIT_ASSERT_EQ(test, mmt_block_counter(&f->m, b, &ctr), 0);
		KUNIT_EXPECT_EQ(test, ctr, 1ull << 7);
	}
	if (leaf < p->blocks) {
		KUNIT_ASSERT_EQ(test, mmt_block_counter(&f->m, leaf, &ctr), 0);
		KUNIT_EXPECT_EQ(test, ctr, 1ull);
	}
	/* The top node's minor for block 0's subtree overflowed as well. */
	KUNIT_EXPECT_EQ(test, f->m.root.top.major, 1ull);
	KUNIT_EXPECT_EQ(test, f->m.root.top.minor[0], 72);
	KUNIT_EXPECT_EQ(test, f->m.root.root_counter, 200ull);
	KUNIT_EXPECT_EQ(test, mmt_verify_all(&f->m), 0);
}

/* Counter exhaustion: a major at MMT_MAJOR_MAX is never wrapped. */
static void major_exhausted(struct kunit *test)
{
	struct fix *f = setup(test, test->param_value);
	const struct mmt_params *p = &f->p;
	u32 bs = p->block_size;
	struct snap s;
	unsigned int i;
	u64 ctr;

	KUNIT_ASSERT_EQ(test, mmt_format_major(&f->m, 0x55, MMT_MAJOR_MAX), 0);
	KUNIT_EXPECT_EQ(test, mmt_format_major(&f->m, 0x55, MMT_MAJOR_MAX + 1),
			-EINVAL);
	check(test, f, 0, p->data_bytes);
	for (i = 0; i < MMT_MINOR_MAX; i++)
		KUNIT_ASSERT_EQ(test, wr(f, 0, bs), 0);
	KUNIT_ASSERT_EQ(test, mmt_block_counter(&f->m, 0, &ctr), 0);
	KUNIT_EXPECT_EQ(test, ctr, MMT_MAJOR_MAX << 7 | MMT_MINOR_MAX);
	take(test, f, &s);
	KUNIT_EXPECT_EQ(test, mmt_write(&f->m, 0, f->buf, bs), -EOVERFLOW);
	KUNIT_EXPECT_EQ(test, mmt_write(&f->m, 3, f->buf, 1), -EOVERFLOW);
	KUNIT_EXPECT_EQ(test, mmt_write(&f->m, 0, f->buf, p->data_bytes),
			-EOVERFLOW);
	KUNIT_EXPECT_EQ(test, mmt_write_check(&f->m, 0, p->data_bytes),
			-EOVERFLOW);
	KUNIT_EXPECT_EQ(test, mmt_write_check(&f->m, 3, 1), -EOVERFLOW);
	KUNIT_EXPECT_TRUE(test, same(f, &s));
	check(test, f, 0, p->data_bytes);
	/* Blocks whose counters have room still take writes. */
	KUNIT_EXPECT_EQ(test, wr(f, (u64)bs * (p->blocks - 1), bs), 0);
	check(test, f, 0, p->data_bytes);
}

/* The root counter (part of the sealing nonce) never wraps either. */
static void root_counter_exhausted(struct kunit *test)
{
	struct fix *f = setup(test, test->param_value);
	struct snap s;

	f->m.root.root_counter = MMT_ROOT_COUNTER_MAX - 1;
	KUNIT_ASSERT_EQ(test, wr(f, 0, 1), 0);
	KUNIT_EXPECT_EQ(test, f->m.root.root_counter, MMT_ROOT_COUNTER_MAX);
	take(test, f, &s);
	KUNIT_EXPECT_EQ(test, mmt_write(&f->m, 0, "a", 1), -EOVERFLOW);
	KUNIT_EXPECT_TRUE(test, same(f, &s));
	check(test, f, 0, f->p.data_bytes);
}

/* Bit fields of the nonce packers (docs/ENGINE.md). */
static u64 field(const u8 *n, unsigned int hi_bit, unsigned int bits)
{
	u64 v = 0;
	unsigned int i;

	for (i = 0; i < bits; i++) {
		unsigned int bit = hi_bit - i;	/* 127 = MSB of byte 0 */
		unsigned int byte = (127 - bit) / 8, sh = bit % 8;

		v = v << 1 | ((n[byte] >> sh) & 1);
	}
	return v;
}

static void nonce_layout(struct kunit *test)
{
	static const u8 all_ones[16] = {
		0x3f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	u8 n[16], o[16];
	unsigned int i;

	/* format v2: GUA (58) << 68 | counter (40) << 28 | off16 (28) */
	mmt_data_nonce(n, MMT_GUA_MASK, (1ull << 40) - 1, 0xfffffff);
	KUNIT_EXPECT_EQ(test, memcmp(n, all_ones, 16), 0);
	mmt_data_nonce(n, 0x2aaaaaaaaaaaaaaull, 0x123456789aull, 0xa5a5a5a);
	KUNIT_EXPECT_EQ(test, field(n, 125, 58), 0x2aaaaaaaaaaaaaaull);
	KUNIT_EXPECT_EQ(test, field(n, 67, 40), 0x123456789aull);
	KUNIT_EXPECT_EQ(test, field(n, 27, 28), 0xa5a5a5aull);
	KUNIT_EXPECT_EQ(test, field(n, 127, 2), 0ull);
	/* Fields never spill into each other: one bit each. */
	mmt_data_nonce(n, 1, 0, 0);
	KUNIT_EXPECT_EQ(test, field(n, 68, 1), 1ull);
	KUNIT_EXPECT_EQ(test, field(n, 67, 68), 0ull);
	mmt_data_nonce(n, 0, 1, 0);
	KUNIT_EXPECT_EQ(test, field(n, 28, 1), 1ull);
	KUNIT_EXPECT_EQ(test, field(n, 27, 28), 0ull);
	mmt_data_nonce(n, 0, 0, 1);
	KUNIT_EXPECT_EQ(test, field(n, 0, 1), 1ull);
	/* The top of off16 does not carry into the counter. */
	mmt_data_nonce(n, 0, 0, 0xfffffff);
	KUNIT_EXPECT_EQ(test, field(n, 67, 40), 0ull);
	for (i = 0; i < 16; i++)
		o[i] = 0;
	mmt_data_nonce(n, 0, 0, 0);
	KUNIT_EXPECT_EQ(test, memcmp(n, o, 16), 0);

	mmt_mac_nonce(n, 2, 0x155555555555555ull, 0xa5a5a5a, 0xfedcba9876ull);
	KUNIT_EXPECT_EQ(test, field(n, 127, 58), 0x155555555555555ull);
	KUNIT_EXPECT_EQ(test, field(n, 69, 28), 0xa5a5a5aull);
	KUNIT_EXPECT_EQ(test, field(n, 41, 40), 0xfedcba9876ull);
	KUNIT_EXPECT_EQ(test, field(n, 1, 2), 2ull);
	mmt_mac_nonce(n, 3, MMT_GUA_MASK, 0xfffffff, (1ull << 40) - 1);
	for (i = 0; i < 16; i++)
		KUNIT_EXPECT_EQ(test, n[i], 0xff);
	/* Domains separate data and node MACs with equal other fields. */
	mmt_mac_nonce(n, 1, 7, 9, 11);
	mmt_mac_nonce(o, 2, 7, 9, 11);
	KUNIT_EXPECT_NE(test, memcmp(n, o, 16), 0);
}

struct nonce_rec {
	u8 n[16];
};

/* Shell sort (no qsort in the kernel, no sort() in user space). */
static void sort_nonces(struct nonce_rec *r, unsigned int n)
{
	static const unsigned int gaps[] = { 701, 301, 132, 57, 23, 10, 4, 1 };
	unsigned int g, i, j;

	for (g = 0; g < ARRAY_SIZE(gaps); g++) {
		unsigned int gap = gaps[g];

		for (i = gap; i < n; i++) {
			struct nonce_rec t = r[i];

			for (j = i; j >= gap &&
			     memcmp(r[j - gap].n, t.n, 16) > 0; j -= gap)
				r[j] = r[j - gap];
			r[j] = t;
		}
	}
}

/*
 * Every new ciphertext of a block is made under a (block, counter) pair,
 * hence data nonces, never used before: over random writes with many minor
 * overflows and a GUA change, collect the nonces of every encryption event
 * (a block whose ciphertext changed) and check that there are no
 * duplicates and that no ciphertext changed without a new counter.
 */
static void nonce_unique(struct kunit *test)
{
	struct fix *f = setup(test, test->param_value);
	const struct mmt_params *p = &f->p;
	u32 bs = p->block_size, b, max_rec;
	u64 *last_ctr = kunit_kzalloc(test, p->blocks * 8, GFP_KERNEL);
	u8 *last_ct = kunit_kzalloc(test, p->data_bytes, GFP_KERNEL);
	struct nonce_rec *rec;
	unsigned int i, nrec = 0, events = 0, dup = 0;
	u64 max_ctr = 0;

	/*
	 * One record per (GUA, block, counter), as the nonce of sub-block 0:
	 * nonce_layout shows the sub-block field is separate, so unique
	 * triples mean unique nonces for every sub-block.
	 */
	max_rec = 2 * p->blocks + 400 * (3 + (1u << p->log_arity[0]));
	rec = kunit_kzalloc(test, (size_t)max_rec * sizeof(*rec), GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, last_ctr && last_ct && rec);
	memcpy(last_ct, f->m.data, p->data_bytes);
	for (b = 0; b < p->blocks; b++)		/* format: counter 0 */
		mmt_data_nonce(rec[nrec++].n, f->m.root.gua, 0,
			       b * (bs / 16));
	for (i = 0; i < 400; i++) {
		u64 off, len;

		if (i == 300) {
			KUNIT_ASSERT_EQ(test, mmt_regua(&f->m, NULL, 0x424242), 0);
		} else {
			/* mostly blocks 0 and 1, so that minors overflow */
			off = rnd(f) % 4 ? (rnd(f) % (2 * bs)) :
			      rnd(f) % p->data_bytes;
			len = 1 + rnd(f) % min_t(u64, p->data_bytes - off,
						 2 * bs);
			KUNIT_ASSERT_EQ(test, wr(f, off, len), 0);
		}
		for (b = 0; b < p->blocks; b++) {
			bool changed = memcmp(last_ct + (u64)b * bs,
					      f->m.data + (u64)b * bs, bs);
			u64 ctr;

			KUNIT_ASSERT_EQ(test, mmt_block_counter(&f->m, b, &ctr),
					0);
			if (!changed) {
				KUNIT_EXPECT_EQ(test, ctr, last_ctr[b]);
				continue;
			}
			/* new ciphertext: a new counter, or a new GUA */
			if (i != 300)
				KUNIT_EXPECT_GT(test, ctr, last_ctr[b]);
			events++;
			last_ctr[b] = ctr;
			max_ctr = max_t(u64, max_ctr, ctr);
			memcpy(last_ct + (u64)b * bs, f->m.data + (u64)b * bs,
			       bs);
			KUNIT_ASSERT_LT(test, nrec, max_rec);
			mmt_data_nonce(rec[nrec++].n, f->m.root.gua, ctr,
				       b * (bs / 16));
		}
	}
	/* some leaf major moved: the overflow path was exercised */
	KUNIT_EXPECT_GE(test, max_ctr, 1ull << 7);
	sort_nonces(rec, nrec);
	for (i = 1; i < nrec; i++)
		dup += !memcmp(rec[i - 1].n, rec[i].n, 16);
	KUNIT_EXPECT_EQ(test, dup, 0u);
	KUNIT_EXPECT_GT(test, events, 400u);
	check(test, f, 0, p->data_bytes);
}

/*
 * The engine's pads are AES_ENC(mmt_data_nonce()) under the ENC subkey, and
 * the pads of one block (one counter) are consecutive counter-mode blocks.
 * Checked on every block with the context's own ECB over nonces written
 * here, so the layout is pinned independently of the engine's nonce and
 * CTR code.  Plaintext is always zero, so the ciphertext is the pad:
 * pass 0, after a format (counter 0 everywhere: one CTR run per batch);
 * pass 1, block 1 written (counter 1); pass 2, everything written again
 * (block 1 at 2, the others at 1: in one batch a run of one block, shorter
 * than MMT_CTR_MIN_RUN at small blocks and so made by ECB, between CTR
 * runs); pass 3, every other block written (runs of one block); pass 4,
 * the odd blocks from 3 written (all at 2), then blocks 1 to N - 2 in one
 * write, one run with an odd first and an even last block (in the last
 * geometry 254 blocks: the two ends by ECB, 252 blocks by one CTR call);
 * pass 5, block 0 written until its minor overflows, so that
 * its leaf moves to major + 1 with all minors 0 and its blocks are one CTR
 * run again.
 *
 * In the same passes, the data MAC pads (format v4): every block's stored
 * tag XOR the hash of its ciphertext (mmt_nh_generic(), mmt_gf64_generic())
 * is the 8 bytes at 8 (b & 1) of the ECB encryption of the data nonce with
 * the pair index b >> 1 in the offset field and bit 126 set, under the ENC
 * subkey.  Runs of at least 64 blocks (only the last geometry has them)
 * come from CTR calls, the others from ECB over written nonces.
 */
static void pad_layout(struct kunit *test)
{
	struct fix *f = setup(test, test->param_value);
	const struct mmt_params *p = &f->p;
	u32 bs = p->block_size, nsub = bs / 16, b, s, bad, tbad;
	u8 *zero = kunit_kzalloc(test, p->data_bytes, GFP_KERNEL);
	u8 *n = kunit_kzalloc(test, 16, GFP_KERNEL);
	const u64 *key = mmt_crypto_hash_key(f->m.crypto);
	u64 ctr, want, h[2], g;
	int pass;

	KUNIT_ASSERT_TRUE(test, zero && n);
	for (pass = 0; pass < 6; pass++) {
		if (pass == 1)
			KUNIT_ASSERT_EQ(test, mmt_write(&f->m, bs, zero, bs), 0);
		if (pass == 2)
			KUNIT_ASSERT_EQ(test, mmt_write(&f->m, 0, zero,
							p->data_bytes), 0);
		for (b = 0; pass == 3 && b < p->blocks; b += 2)
			KUNIT_ASSERT_EQ(test, mmt_write(&f->m, (u64)b * bs,
							zero, bs), 0);
		for (b = 3; pass == 4 && b < p->blocks; b += 2)
			KUNIT_ASSERT_EQ(test, mmt_write(&f->m, (u64)b * bs,
							zero, bs), 0);
		if (pass == 4)
			KUNIT_ASSERT_EQ(test, mmt_write(&f->m, bs, zero,
							p->data_bytes - 2 * bs),
					0);
		for (b = 0; pass == 5 && b <= MMT_MINOR_MAX; b++)
			KUNIT_ASSERT_EQ(test, mmt_write(&f->m, 0, zero, bs), 0);
		for (b = 0, bad = 0, tbad = 0; b < p->blocks; b++) {
			KUNIT_ASSERT_EQ(test, mmt_block_counter(&f->m, b, &ctr),
					0);
			want = pass == 0 ? 0 : pass == 1 ? b == 1 :
			       1 + (b == 1) + (pass >= 3 && !(b % 2));
			/* pass 4: all but the first and the last at 3 */
			if (pass >= 4)
				want = 2 + (b && b < p->blocks - 1);
			/*
			 * pass 5: leaf 0 at major 1 with minors 0, but block 0,
			 * written twice more after the overflow
			 */
			if (pass == 5 && !(b >> p->log_arity[0]))
				want = (1ull << MMT_MINOR_BITS) + 2 * !b;
			KUNIT_EXPECT_EQ(test, ctr, want);
			mmt_nh_generic((const u8 *)(key + MMT_HASH_KEYS), NULL,
				       f->m.data + (size_t)b * bs, NULL, bs, 1,
				       MMT_NH_COPY, h);
			mmt_gf64_generic(key + MMT_HASH_KEYS + MMT_NH_KEYS, h,
					 1, &g);
			mmt_data_nonce(n, f->m.root.gua, ctr, b >> 1);
			n[0] |= 0x40;
			KUNIT_ASSERT_EQ(test, mmt_crypto_ecb(f->m.crypto,
							     MMT_SUBKEY_ENC,
							     n, n, 16), 0);
			tbad += get_unaligned_le64(n + 8 * (b & 1)) !=
				(get_unaligned_le64(f->m.macs +
						    MMT_MAC_BYTES * b) ^ g);
			for (s = 0; s < nsub; s++) {
				mmt_data_nonce(n, f->m.root.gua, ctr,
					       b * nsub + s);
				KUNIT_ASSERT_EQ(test,
						mmt_crypto_ecb(f->m.crypto,
							       MMT_SUBKEY_ENC,
							       n, n, 16), 0);
				bad += !!memcmp(n, f->m.data + (size_t)b * bs +
						16 * s, 16);
			}
		}
		KUNIT_EXPECT_EQ_MSG(test, bad, 0u, "pass %d", pass);
		KUNIT_EXPECT_EQ_MSG(test, tbad, 0u, "MAC pads, pass %d", pass);
	}
}

static struct kunit_case mmt_tree_cases[] = {
	KUNIT_CASE_PARAM(roundtrip, tree_geo_gen_params),
	KUNIT_CASE(roundtrip_default),
	KUNIT_CASE_PARAM(batch_counts, tree_geo_gen_params),
	KUNIT_CASE_PARAM(tamper, tree_geo_gen_params),
	KUNIT_CASE_PARAM(replay_and_swap, tree_geo_gen_params),
	KUNIT_CASE_PARAM(states, tree_geo_gen_params),
	KUNIT_CASE_PARAM(ranges, tree_geo_gen_params),
	KUNIT_CASE_PARAM(regua, tree_geo_gen_params),
	{}
};

static struct kunit_suite mmt_tree_suite = {
	.name = "mmt_tree",
	.exit = tree_exit,
	.test_cases = mmt_tree_cases,
};

static struct kunit_case mmt_counters_cases[] = {
	KUNIT_CASE_PARAM(minor_overflow, tree_geo_gen_params),
	KUNIT_CASE_PARAM(major_exhausted, tree_geo_gen_params),
	KUNIT_CASE_PARAM(root_counter_exhausted, tree_geo_gen_params),
	KUNIT_CASE(nonce_layout),
	KUNIT_CASE_PARAM(pad_layout, tree_geo_gen_params),
	KUNIT_CASE_PARAM(nonce_unique, tree_geo_gen_params),
	{}
};

static struct kunit_suite mmt_counters_suite = {
	.name = "mmt_counters",
	.exit = tree_exit,
	.test_cases = mmt_counters_cases,
};

kunit_test_suites(&mmt_tree_suite, &mmt_counters_suite);
