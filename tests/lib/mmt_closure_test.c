// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite mmt_closure: closure format v1 end to end.  Build on a sender
 * MMT, receive into a WAITING MMT, read back byte-exact; tamper with every
 * class of closure byte (header, sealed root, a tree node at each level, a
 * data MAC, a ciphertext byte) lazily and eagerly; replay, reorder, wrong
 * version, geometry, length, connection and receiver; the lost-ack regua
 * flow of DESIGN.md section 5; the golden vector.  After every rejection
 * the receive MMT and the replay state must be unchanged, byte for byte.
 *
 * The receive cases run once per entry point of the one set of receive
 * rules: suite mmt_closure through mmt_closure_receive() (the closure in a
 * buffer), suite mmt_closure_inplace through
 * mmt_closure_receive_inplace() (the head in a private copy, the sections
 * written into the receive MMT's memory first, as the RDMA transport does,
 * and the sender node checked).  Each case states what it expects of both;
 * they differ only where the buffer's length is the input (in place, the
 * length is the receive MMT's closure size).  Suite
 * mmt_closure_eager_split runs the in-place cases again with every eager
 * receive split as the driver's eager receive on the I/O workers splits it
 * (mmt_closure_eager_begin(), _verify() with a scratch of its own,
 * _commit()), expecting exactly the in-place results.
 */
#include <kunit/test.h>
#include "mmt_lib.h"
#include "mmt_golden.h"
#include "mmt_golden_vector.h"

#define MMT_CT_MAX_CRYPTO	8
#define MMT_CT_HEAD		(MMT_CLOSURE_HDR_BYTES + MMT_SEALED_ROOT_BYTES)
/* an expectation for an entry point the case does not apply to */
#define MMT_CT_NA		1

struct mmt_ct_snap {
	u8 *data, *macs, *nodes;
	size_t data_cap, macs_cap, nodes_cap;
	struct mmt_root root;
	struct mmt_crypto *crypto;
	struct mmt_rx_rules rx;
};

struct mmt_ct_ctx {
	struct mmt_crypto *c[MMT_CT_MAX_CRYPTO];
	unsigned int nr;
	struct mmt_crypto *shared;	/* golden key, for most MMTs */
	struct mmt_ct_snap snap;	/* reused: allocations are counted */
	bool inplace;		/* mmt_closure_receive_inplace() */
	bool split;		/* eager: mmt_closure_eager_begin() etc. */
	int sender;		/* its expected sender */
	u8 head[MMT_CT_HEAD];	/* its private head copy */
};

struct mmt_ct_geo {
	const char *name;
	u8 levels;
	u8 log_arity[MMT_MAX_LEVELS];
	u8 log_block;
};

static const struct mmt_ct_geo mmt_ct_geos[] = {
	{ "1L-a5-b64", 1, { 5 }, 6 },
	{ "2L-a3.2-b64", 2, { 3, 2 }, 6 },	/* golden geometry */
	{ "2L-a6.5-b64", 2, { 6, 5 }, 6 },	/* paper's 2 levels, 128 KiB */
	{ "3L-a3.2.2-b128", 3, { 3, 2, 2 }, 7 },
	{ "3L-a2.1.2-b4096", 3, { 2, 1, 2 }, 12 },
	{ "4L-a2.1.1.2-b64", 4, { 2, 1, 1, 2 }, 6 },
};

static void mmt_ct_geo_desc(const struct mmt_ct_geo *g, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s", g->name);
}

KUNIT_ARRAY_PARAM(mmt_ct_geo, mmt_ct_geos, mmt_ct_geo_desc);

static const struct mmt_ct_geo mmt_ct_golden_geo = {
	"golden", MMT_GOLDEN_LEVELS, { 3, 2 }, MMT_GOLDEN_LOG_BLOCK
};

static int mmt_ct_init(struct kunit *test)
{
	struct mmt_ct_ctx *x = kunit_kzalloc(test, sizeof(*x), GFP_KERNEL);

	if (!x)
		return -ENOMEM;
	x->sender = MMT_CLOSURE_ANY_SENDER;
	test->priv = x;
	return 0;
}

/* In place, the sender is checked as the driver does (rule 5b). */
static int mmt_ct_init_inplace(struct kunit *test)
{
	struct mmt_ct_ctx *x;
	int ret = mmt_ct_init(test);

	if (ret)
		return ret;
	x = test->priv;
	x->inplace = true;
	x->sender = MMT_GOLDEN_SENDER;
	return 0;
}

/*
 * In place, with every eager check split as the driver's eager receive on
 * the I/O workers splits it (begin, verify with a scratch of its own,
 * commit): the same result as mmt_closure_receive_inplace() in every case.
 */
static int mmt_ct_init_split(struct kunit *test)
{
	struct mmt_ct_ctx *x;
	int ret = mmt_ct_init_inplace(test);

	if (ret)
		return ret;
	x = test->priv;
	x->split = true;
	return 0;
}

static void mmt_ct_exit(struct kunit *test)
{
	struct mmt_ct_ctx *x = test->priv;
	unsigned int i;

	for (i = 0; x && i < x->nr; i++)
		mmt_crypto_free(x->c[i]);
}

static struct mmt_crypto *mmt_ct_crypto(struct kunit *test, const u8 *key,
					const u8 *ksalt)
{
	struct mmt_ct_ctx *x = test->priv;
	struct mmt_crypto *c;

	KUNIT_ASSERT_LT(test, x->nr, MMT_CT_MAX_CRYPTO);
	c = mmt_crypto_alloc(key, 16, ksalt);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(c));
	x->c[x->nr++] = c;
	return c;
}

/* A zeroed INVALID MMT of geometry @g keyed with @key (NULL: shared). */
static struct mmt *mmt_ct_new(struct kunit *test, const struct mmt_ct_geo *g,
			      const u8 *key)
{
	struct mmt_ct_ctx *x = test->priv;
	struct mmt_params *p;
	struct mmt *m;

	p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_ASSERT_NOT_NULL(test, m);
	KUNIT_ASSERT_EQ(test, mmt_params_init(p, g->levels, g->log_arity,
					      g->log_block), 0);
	m->p = p;
	if (key) {
		m->crypto = mmt_ct_crypto(test, key, MMT_TEST_KSALT);
	} else {
		if (!x->shared)
			x->shared = mmt_ct_crypto(test, mmt_golden_key,
						  mmt_golden_ksalt);
		m->crypto = x->shared;
	}
	m->data = kunit_kzalloc(test, p->data_bytes, GFP_KERNEL);
	m->macs = kunit_kzalloc(test, p->macs_bytes, GFP_KERNEL);
	m->nodes = kunit_kzalloc(test, p->nodes_bytes, GFP_KERNEL);
	m->scratch = kunit_kzalloc(test, mmt_scratch_bytes(p), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, m->data);
	KUNIT_ASSERT_NOT_NULL(test, m->macs);
	KUNIT_ASSERT_NOT_NULL(test, m->nodes);
	KUNIT_ASSERT_NOT_NULL(test, m->scratch);
	return m;
}

static bool mmt_ct_all_zero(const u8 *b, size_t len)
{
	while (len--)
		if (*b++)
			return false;
	return true;
}

static void mmt_ct_pattern(u8 *b, size_t len, unsigned int seed)
{
	u32 x = 0x9e3779b9u * (seed + 1);
	size_t i;

	for (i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		b[i] = (u8)x;
	}
}

/* Sender: formatted under @gua, VALID, holding pattern @seed (in @pt). */
static struct mmt *mmt_ct_sender(struct kunit *test,
				 const struct mmt_ct_geo *g, u64 gua,
				 unsigned int seed, u8 **pt)
{
	struct mmt *m = mmt_ct_new(test, g, NULL);

	*pt = kunit_kzalloc(test, m->p->data_bytes, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, *pt);
	mmt_ct_pattern(*pt, m->p->data_bytes, seed);
	KUNIT_ASSERT_EQ(test, mmt_format(m, gua), 0);
	if (m->root.state == MMT_INVALID)
		KUNIT_ASSERT_EQ(test, mmt_root_transition(&m->root, MMT_VALID),
				0);
	KUNIT_ASSERT_EQ(test, m->root.state, MMT_VALID);
	KUNIT_ASSERT_EQ(test, mmt_write(m, 0, *pt, m->p->data_bytes), 0);
	return m;
}

/* Receiver: a WAITING MMT of geometry @g with the same key. */
static struct mmt *mmt_ct_receiver(struct kunit *test,
				   const struct mmt_ct_geo *g)
{
	struct mmt *m = mmt_ct_new(test, g, NULL);

	memset(m->data, 0xd1, m->p->data_bytes);
	memset(m->macs, 0xd2, m->p->macs_bytes);
	memset(m->nodes, 0xd3, m->p->nodes_bytes);
	KUNIT_ASSERT_EQ(test, mmt_root_transition(&m->root, MMT_WAITING), 0);
	return m;
}

static void mmt_ct_rx(struct mmt_rx_rules *rx)
{
	memset(rx, 0, sizeof(*rx));
	rx->self_node = MMT_GOLDEN_RECEIVER;
	rx->conn_id = MMT_GOLDEN_CONN_ID;
	rx->gen = MMT_GOLDEN_GEN;
	memcpy(rx->rx_nonce, mmt_golden_rx_nonce, MMT_RX_NONCE_BYTES);
}

/* Build a closure of @m (VALID -> SENDING) with header @flags; returns it. */
static u8 *mmt_ct_build(struct kunit *test, struct mmt *m, u32 flags,
			size_t *len)
{
	struct mmt_closure_hdr h;
	u8 *buf;

	*len = mmt_closure_bytes(m->p);
	KUNIT_ASSERT_GT(test, *len, (size_t)0);
	/* one spare byte for the overlong tests */
	buf = kunit_kzalloc(test, *len + 1, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	mmt_golden_hdr(&h);
	h.flags = flags;
	if (m->root.state == MMT_VALID)
		KUNIT_ASSERT_EQ(test, mmt_root_transition(&m->root,
							  MMT_SENDING), 0);
	KUNIT_ASSERT_EQ(test, mmt_closure_build(m, &h, buf, *len), 0);
	return buf;
}

static u8 *mmt_ct_cap(struct kunit *test, u8 *b, size_t *cap, size_t n)
{
	if (n <= *cap)
		return b;
	b = kunit_kzalloc(test, n, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, b);
	*cap = n;
	return b;
}

/* Everything a rejected closure must leave alone. */
static struct mmt_ct_snap *mmt_ct_snap(struct kunit *test, const struct mmt *m,
				       const struct mmt_rx_rules *rx)
{
	struct mmt_ct_ctx *x = test->priv;
	struct mmt_ct_snap *s = &x->snap;

	s->data = mmt_ct_cap(test, s->data, &s->data_cap, m->p->data_bytes);
	s->macs = mmt_ct_cap(test, s->macs, &s->macs_cap, m->p->macs_bytes);
	s->nodes = mmt_ct_cap(test, s->nodes, &s->nodes_cap,
			      m->p->nodes_bytes + 1);
	memcpy(s->data, m->data, m->p->data_bytes);
	memcpy(s->macs, m->macs, m->p->macs_bytes);
	memcpy(s->nodes, m->nodes, m->p->nodes_bytes);
	s->root = m->root;
	s->crypto = m->crypto;
	s->rx = *rx;
	return s;
}

static void mmt_ct_expect_same(struct kunit *test, const struct mmt *m,
			       const struct mmt_rx_rules *rx,
			       const struct mmt_ct_snap *s, const char *what)
{
	KUNIT_EXPECT_EQ_MSG(test, memcmp(m->data, s->data, m->p->data_bytes),
			    0, "data changed after %s", what);
	KUNIT_EXPECT_EQ_MSG(test, memcmp(m->macs, s->macs, m->p->macs_bytes),
			    0, "macs changed after %s", what);
	KUNIT_EXPECT_EQ_MSG(test,
			    memcmp(m->nodes, s->nodes, m->p->nodes_bytes), 0,
			    "nodes changed after %s", what);
	KUNIT_EXPECT_EQ_MSG(test, m->root.state, s->root.state, "%s", what);
	KUNIT_EXPECT_TRUE_MSG(test, m->crypto == s->crypto,
			      "crypto changed after %s", what);
	KUNIT_EXPECT_EQ_MSG(test, m->root.state, MMT_WAITING, "%s", what);
	KUNIT_EXPECT_EQ_MSG(test, m->root.read_only, s->root.read_only, "%s",
			    what);
	KUNIT_EXPECT_EQ_MSG(test, m->root.gua, s->root.gua, "%s", what);
	KUNIT_EXPECT_EQ_MSG(test, m->root.root_counter, s->root.root_counter,
			    "%s", what);
	KUNIT_EXPECT_EQ_MSG(test, m->root.top.major, s->root.top.major, "%s",
			    what);
	KUNIT_EXPECT_EQ_MSG(test, memcmp(m->root.top.minor, s->root.top.minor,
					 sizeof(m->root.top.minor)), 0,
			    "top minors changed after %s", what);
	KUNIT_EXPECT_EQ_MSG(test, rx->self_node, s->rx.self_node, "%s", what);
	KUNIT_EXPECT_EQ_MSG(test, rx->conn_id, s->rx.conn_id, "%s", what);
	KUNIT_EXPECT_EQ_MSG(test, rx->gen, s->rx.gen, "%s", what);
	KUNIT_EXPECT_EQ_MSG(test, rx->min_root_counter,
			    s->rx.min_root_counter, "%s", what);
	KUNIT_EXPECT_EQ_MSG(test, rx->last_root_counter,
			    s->rx.last_root_counter, "%s", what);
	KUNIT_EXPECT_EQ_MSG(test, rx->last_gua, s->rx.last_gua, "%s", what);
}

/*
 * The transport.  In place: the head goes to a private copy (returned) and
 * the sections, as far as the bytes at @buf reach, into @m's own memory, as
 * the RDMA transport writes them into the receive PMO.  From a buffer:
 * nothing moves, @buf is returned.
 */
static const u8 *mmt_ct_land(struct kunit *test, struct mmt *m,
			     const u8 *buf, size_t len)
{
	struct mmt_ct_ctx *x = test->priv;
	u8 *const sec[3] = { m->nodes, m->macs, m->data };
	const size_t sec_len[3] = {
		m->p->nodes_bytes, m->p->macs_bytes, m->p->data_bytes
	};
	unsigned int i;
	size_t n;

	if (!x->inplace || !buf)
		return buf;
	KUNIT_ASSERT_GE(test, len, (size_t)MMT_CT_HEAD);
	memcpy(x->head, buf, MMT_CT_HEAD);
	buf += MMT_CT_HEAD;
	len -= MMT_CT_HEAD;
	for (i = 0; i < ARRAY_SIZE(sec); i++) {
		n = min(len, sec_len[i]);
		memcpy(sec[i], buf, n);
		buf += n;
		len -= n;
	}
	return x->head;
}

/* The check, through the suite's entry point; @b from mmt_ct_land(). */
static int mmt_ct_check(struct kunit *test, struct mmt *m,
			struct mmt_rx_rules *rx, const u8 *b, size_t len,
			bool eager)
{
	struct mmt_ct_ctx *x = test->priv;

	if (x->inplace && x->split && eager) {
		struct mmt_closure_eager pc;
		u8 *scratch;
		int ret;

		ret = mmt_closure_eager_begin(m, rx, b, x->sender, NULL, &pc);
		if (ret)
			return ret;
		scratch = kunit_kzalloc(test, mmt_scratch_bytes(m->p),
					GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, scratch);
		ret = mmt_closure_eager_verify(&pc, pc.c, scratch);
		if (!ret)
			ret = mmt_closure_eager_commit(m, rx, &pc);
		mmt_closure_eager_free(&pc);
		return ret;
	}
	if (x->inplace)
		return mmt_closure_receive_inplace(m, rx, b, x->sender, eager);
	return mmt_closure_receive(m, rx, b, len, eager);
}

/* Deliver the closure at @buf to @m and check it. */
static int mmt_ct_recv(struct kunit *test, struct mmt *m,
		       struct mmt_rx_rules *rx, const u8 *buf, size_t len,
		       bool eager)
{
	return mmt_ct_check(test, m, rx, mmt_ct_land(test, m, buf, len), len,
			    eager);
}

/*
 * Receive expecting @want from a buffer and @want_inplace in place
 * (MMT_CT_NA: the case does not apply there); on failure check that
 * nothing changed (in place: nothing after the transport's writes).
 */
static void mmt_ct_expect_rx2(struct kunit *test, struct mmt *m,
			      struct mmt_rx_rules *rx, const u8 *buf,
			      size_t len, bool eager, int want,
			      int want_inplace, const char *what)
{
	struct mmt_ct_ctx *x = test->priv;
	struct mmt_ct_snap *s;
	const u8 *b;
	int ret;

	if (x->inplace)
		want = want_inplace;
	if (want == MMT_CT_NA)
		return;
	b = mmt_ct_land(test, m, buf, len);
	s = mmt_ct_snap(test, m, rx);
	ret = mmt_ct_check(test, m, rx, b, len, eager);
	KUNIT_EXPECT_EQ_MSG(test, ret, want, "%s (%s, %s)", what,
			    eager ? "eager" : "lazy",
			    x->inplace ? "in place" : "buffer");
	if (ret)
		mmt_ct_expect_same(test, m, rx, s, what);
}

/* The same expectation for both entry points. */
static void mmt_ct_expect_rx(struct kunit *test, struct mmt *m,
			     struct mmt_rx_rules *rx, const u8 *buf,
			     size_t len, bool eager, int want,
			     const char *what)
{
	mmt_ct_expect_rx2(test, m, rx, buf, len, eager, want, want, what);
}

static void mmt_ct_expect_plain(struct kunit *test, struct mmt *m,
				const u8 *pt)
{
	u8 *out = kunit_kzalloc(test, m->p->data_bytes, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, out);
	KUNIT_ASSERT_EQ(test, mmt_read(m, 0, out, m->p->data_bytes), 0);
	KUNIT_EXPECT_EQ(test, memcmp(out, pt, m->p->data_bytes), 0);
	kunit_kfree(test, out);
}

/* ------------------------------------------------------- round trips */

static void mmt_closure_roundtrip(struct kunit *test)
{
	const struct mmt_ct_geo *g = test->param_value;
	struct mmt_rx_rules rx;
	unsigned int eager;

	for (eager = 0; eager < 2; eager++) {
		struct mmt *s, *r;
		u8 *pt, *buf, *blk;
		size_t len;
		u64 ctr;

		s = mmt_ct_sender(test, g, MMT_GOLDEN_GUA + eager, eager, &pt);
		buf = mmt_ct_build(test, s, 0, &len);
		ctr = s->root.root_counter;
		r = mmt_ct_receiver(test, g);
		mmt_ct_rx(&rx);
		KUNIT_ASSERT_EQ(test, mmt_ct_recv(test, r, &rx, buf, len,
						  eager), 0);
		KUNIT_EXPECT_EQ(test, r->root.state, MMT_VALID);
		KUNIT_EXPECT_FALSE(test, r->root.read_only);
		KUNIT_EXPECT_EQ(test, r->root.gua, s->root.gua);
		KUNIT_EXPECT_EQ(test, r->root.root_counter, ctr);
		KUNIT_EXPECT_EQ(test, r->root.top.major, s->root.top.major);
		KUNIT_EXPECT_EQ(test, memcmp(r->root.top.minor,
					     s->root.top.minor,
					     sizeof(s->root.top.minor)), 0);
		KUNIT_EXPECT_EQ(test, rx.last_root_counter, ctr);
		KUNIT_EXPECT_EQ(test, rx.last_gua, s->root.gua);
		mmt_ct_expect_plain(test, r, pt);
		KUNIT_EXPECT_EQ(test, mmt_verify_all(r), 0);
		/* the sender hands over (transfer) */
		KUNIT_EXPECT_EQ(test, mmt_root_transition(&s->root,
							  MMT_INVALID), 0);

		/* the new owner writes on and counts up from there */
		blk = kunit_kzalloc(test, r->p->block_size, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, blk);
		memset(blk, 0x77, r->p->block_size);
		KUNIT_ASSERT_EQ(test, mmt_write(r, r->p->data_bytes -
						r->p->block_size, blk,
						r->p->block_size), 0);
		memcpy(pt + r->p->data_bytes - r->p->block_size, blk,
		       r->p->block_size);
		mmt_ct_expect_plain(test, r, pt);
		KUNIT_EXPECT_GE(test, r->root.root_counter, ctr);
	}
}

/* send back: the receiver delegates what it got, the counter keeps rising */
static void mmt_closure_send_back(struct kunit *test)
{
	const struct mmt_ct_geo *g = &mmt_ct_golden_geo;
	struct mmt_rx_rules rx1, rx2;
	struct mmt *a, *b, *a2;
	u8 *pt, *buf, *buf2;
	size_t len;
	u64 ctr;

	a = mmt_ct_sender(test, g, MMT_GOLDEN_GUA, 3, &pt);
	buf = mmt_ct_build(test, a, 0, &len);
	b = mmt_ct_receiver(test, g);
	mmt_ct_rx(&rx1);
	KUNIT_ASSERT_EQ(test, mmt_ct_recv(test, b, &rx1, buf, len, false),
			0);
	KUNIT_ASSERT_EQ(test, mmt_root_transition(&a->root, MMT_INVALID), 0);
	ctr = b->root.root_counter;
	buf2 = mmt_ct_build(test, b, 0, &len);
	KUNIT_EXPECT_GT(test, b->root.root_counter, ctr);
	a2 = mmt_ct_receiver(test, g);
	mmt_ct_rx(&rx2);
	KUNIT_ASSERT_EQ(test, mmt_ct_recv(test, a2, &rx2, buf2, len, true),
			0);
	KUNIT_EXPECT_EQ(test, a2->root.gua, (u64)MMT_GOLDEN_GUA);
	mmt_ct_expect_plain(test, a2, pt);
}

static void mmt_closure_copy_mode(struct kunit *test)
{
	const struct mmt_ct_geo *g = &mmt_ct_golden_geo;
	struct mmt_closure_hdr h;
	struct mmt_rx_rules rx;
	struct mmt *s, *r;
	u8 *pt, *buf, *out;
	size_t len;

	s = mmt_ct_sender(test, g, MMT_GOLDEN_GUA, 1, &pt);
	buf = mmt_ct_build(test, s, MMT_CLOSURE_F_COPY, &len);
	r = mmt_ct_receiver(test, g);
	mmt_ct_rx(&rx);
	KUNIT_ASSERT_EQ(test, mmt_ct_recv(test, r, &rx, buf, len, false), 0);
	KUNIT_EXPECT_EQ(test, r->root.state, MMT_VALID);
	KUNIT_EXPECT_TRUE(test, r->root.read_only);
	mmt_ct_expect_plain(test, r, pt);
	/* a read-only copy is neither written nor delegated further */
	KUNIT_EXPECT_EQ(test, mmt_write(r, 0, pt, 64), -EPERM);
	out = kunit_kzalloc(test, len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, out);
	mmt_golden_hdr(&h);
	KUNIT_EXPECT_EQ(test, mmt_closure_build(r, &h, out, len), -EPERM);
	mmt_ct_expect_plain(test, r, pt);
	/* the owner is back to VALID and keeps writing */
	KUNIT_EXPECT_EQ(test, mmt_root_transition(&s->root, MMT_VALID), 0);
	KUNIT_EXPECT_EQ(test, mmt_write(s, 0, pt, 64), 0);
}

/* the sections of a closure are exactly the sender's memory */
static void mmt_closure_layout(struct kunit *test)
{
	const struct mmt_ct_geo *g = test->param_value;
	struct mmt_closure_hdr h;
	const struct mmt_params *p;
	struct mmt *s;
	u8 *pt, *buf;
	size_t len, off;

	s = mmt_ct_sender(test, g, MMT_GOLDEN_GUA, 2, &pt);
	p = s->p;
	buf = mmt_ct_build(test, s, MMT_CLOSURE_F_COPY, &len);
	KUNIT_EXPECT_EQ(test, len, (size_t)(MMT_CT_HEAD + p->nodes_bytes +
					    p->macs_bytes + p->data_bytes));
	KUNIT_ASSERT_EQ(test, mmt_closure_parse_hdr(buf, len, &h), 0);
	KUNIT_EXPECT_EQ(test, h.version, 4);
	KUNIT_EXPECT_EQ(test, h.flags, MMT_CLOSURE_F_COPY);
	KUNIT_EXPECT_EQ(test, h.sender_node, MMT_GOLDEN_SENDER);
	KUNIT_EXPECT_EQ(test, h.receiver_node, MMT_GOLDEN_RECEIVER);
	KUNIT_EXPECT_EQ(test, h.conn_id, MMT_GOLDEN_CONN_ID);
	KUNIT_EXPECT_EQ(test, h.seq, (u64)MMT_GOLDEN_SEQ);
	KUNIT_EXPECT_EQ(test, h.levels, g->levels);
	KUNIT_EXPECT_EQ(test, h.log_block_size, g->log_block);
	KUNIT_EXPECT_EQ(test, memcmp(h.log_arity, g->log_arity,
				     MMT_MAX_LEVELS), 0);
	KUNIT_EXPECT_EQ(test, h.sealed_len, (u32)MMT_SEALED_ROOT_BYTES);
	KUNIT_EXPECT_EQ(test, (u64)h.nodes_len, p->nodes_bytes);
	KUNIT_EXPECT_EQ(test, (u64)h.macs_len, p->macs_bytes);
	KUNIT_EXPECT_EQ(test, (u64)h.data_len, p->data_bytes);
	/* magic and hdr_len on the wire */
	KUNIT_EXPECT_EQ(test, memcmp(buf, "MMTC", 4), 0);
	KUNIT_EXPECT_EQ(test, buf[6], MMT_CLOSURE_HDR_BYTES);
	off = MMT_CT_HEAD;
	KUNIT_EXPECT_EQ(test, memcmp(buf + off, s->nodes, p->nodes_bytes), 0);
	off += p->nodes_bytes;
	KUNIT_EXPECT_EQ(test, memcmp(buf + off, s->macs, p->macs_bytes), 0);
	off += p->macs_bytes;
	KUNIT_EXPECT_EQ(test, memcmp(buf + off, s->data, p->data_bytes), 0);
	/* the ciphertext is not the plaintext */
	KUNIT_EXPECT_NE(test, memcmp(buf + off, pt, p->data_bytes), 0);
}

static void mmt_closure_build_errors(struct kunit *test)
{
	const struct mmt_ct_geo *g = &mmt_ct_golden_geo;
	struct mmt_closure_hdr h;
	struct mmt_crypto *c;
	struct mmt *s;
	u8 *pt, *buf;
	size_t len;
	u64 ctr;

	s = mmt_ct_sender(test, g, MMT_GOLDEN_GUA, 4, &pt);
	len = mmt_closure_bytes(s->p);
	buf = kunit_kzalloc(test, len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	mmt_golden_hdr(&h);
	ctr = s->root.root_counter;

	KUNIT_EXPECT_EQ(test, mmt_closure_build(s, &h, buf, len - 1),
			-ENOSPC);
	KUNIT_EXPECT_EQ(test, mmt_closure_build(s, &h, NULL, len), -ENOSPC);
	h.flags = 2;
	KUNIT_EXPECT_EQ(test, mmt_closure_build(s, &h, buf, len), -EINVAL);
	h.flags = 0;
	c = s->crypto;
	s->crypto = NULL;
	KUNIT_EXPECT_EQ(test, mmt_closure_build(s, &h, buf, len), -ENOKEY);
	s->crypto = c;
	KUNIT_EXPECT_EQ(test, s->root.root_counter, ctr);
	KUNIT_EXPECT_TRUE(test, mmt_ct_all_zero(buf, len));

	/* counter exhausted: regua (or reformat) first */
	s->root.root_counter = MMT_ROOT_COUNTER_MAX;
	KUNIT_EXPECT_EQ(test, mmt_closure_build(s, &h, buf, len), -EOVERFLOW);
	KUNIT_EXPECT_EQ(test, s->root.root_counter, MMT_ROOT_COUNTER_MAX);
	s->root.root_counter = ctr;

	KUNIT_EXPECT_EQ(test, mmt_closure_build(s, &h, buf, len), 0);
	KUNIT_EXPECT_EQ(test, s->root.root_counter, ctr + 1);
	KUNIT_ASSERT_EQ(test, mmt_root_transition(&s->root, MMT_INVALID), 0);
	KUNIT_EXPECT_EQ(test, mmt_closure_build(s, &h, buf, len), -EPERM);
	KUNIT_ASSERT_EQ(test, mmt_root_transition(&s->root, MMT_WAITING), 0);
	KUNIT_EXPECT_EQ(test, mmt_closure_build(s, &h, buf, len), -EPERM);
	KUNIT_EXPECT_EQ(test, s->root.root_counter, ctr + 1);
}

/* ------------------------------------------------------- tampering */

/* Put @r back to WAITING with a fresh @rx (after an accepted closure). */
static void mmt_ct_rearm(struct kunit *test, struct mmt *r,
			 struct mmt_rx_rules *rx)
{
	if (r->root.state == MMT_VALID)
		KUNIT_ASSERT_EQ(test, mmt_root_transition(&r->root,
							  MMT_INVALID), 0);
	if (r->root.state == MMT_INVALID)
		KUNIT_ASSERT_EQ(test, mmt_root_transition(&r->root,
							  MMT_WAITING), 0);
	KUNIT_ASSERT_EQ(test, r->root.state, MMT_WAITING);
	mmt_ct_rx(rx);
}

/*
 * A closure byte that is only checked on access: the lazy receive accepts,
 * reading block @blk (or everything, @blk < 0) fails with -EBADMSG; the
 * eager receive rejects with -EBADMSG and changes nothing.
 */
static void mmt_ct_late_tamper(struct kunit *test, struct mmt *r,
			       const u8 *buf, size_t len, long blk,
			       const char *what)
{
	const struct mmt_params *p = r->p;
	struct mmt_rx_rules rx;
	u8 *out;

	out = kunit_kzalloc(test, p->data_bytes, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, out);
	mmt_ct_rearm(test, r, &rx);
	mmt_ct_expect_rx(test, r, &rx, buf, len, true, -EBADMSG, what);
	mmt_ct_expect_rx(test, r, &rx, buf, len, false, 0, what);
	if (blk < 0)
		KUNIT_EXPECT_EQ_MSG(test, mmt_read(r, 0, out, p->data_bytes),
				    -EBADMSG, "%s", what);
	else
		KUNIT_EXPECT_EQ_MSG(test, mmt_read(r, (u64)blk * p->block_size,
						   out, p->block_size),
				    -EBADMSG, "%s", what);
	KUNIT_EXPECT_EQ_MSG(test, mmt_verify_all(r), -EBADMSG, "%s", what);
	kunit_kfree(test, out);
}

static void mmt_closure_tamper(struct kunit *test)
{
	const struct mmt_ct_geo *g = test->param_value;
	const struct mmt_params *p;
	struct mmt_rx_rules rx;
	struct mmt *s, *r;
	unsigned int i, eager, level;
	u8 *pt, *buf, *out;
	size_t len, off;
	u32 blk, other;

	s = mmt_ct_sender(test, g, MMT_GOLDEN_GUA, 5, &pt);
	buf = mmt_ct_build(test, s, 0, &len);
	p = s->p;
	r = mmt_ct_receiver(test, g);
	out = kunit_kzalloc(test, p->block_size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, out);
	mmt_ct_rx(&rx);

	/* sealed root: every byte (nonce, ciphertext, tag) */
	for (eager = 0; eager < 2; eager++) {
		for (i = 0; i < MMT_SEALED_ROOT_BYTES; i++) {
			buf[MMT_CLOSURE_HDR_BYTES + i] ^= 1u << (i & 7);
			mmt_ct_expect_rx(test, r, &rx, buf, len, eager,
					 -EBADMSG, "sealed root byte");
			buf[MMT_CLOSURE_HDR_BYTES + i] ^= 1u << (i & 7);
		}
	}

	/* tree nodes: first and last node of every untrusted level */
	for (level = 0; level + 1 < p->levels; level++) {
		u32 idx[2] = { 0, p->level_nodes[level] - 1 };
		unsigned int k;

		for (k = 0; k < 2; k++) {
			off = MMT_CT_HEAD + (size_t)(p->level_start[level] +
						  idx[k]) * p->node_size;
			buf[off] ^= 0x01;
			if (level == p->levels - 2u) {
				/* top tree nodes: checked at receive */
				mmt_ct_rearm(test, r, &rx);
				mmt_ct_expect_rx(test, r, &rx, buf, len, false,
						 -EBADMSG, "top tree node");
				mmt_ct_expect_rx(test, r, &rx, buf, len, true,
						 -EBADMSG, "top tree node");
			} else {
				mmt_ct_late_tamper(test, r, buf, len, -1,
						   "lower tree node");
			}
			buf[off] ^= 0x01;
		}
	}

	/* a data MAC, then a ciphertext byte, of a middle block */
	blk = p->blocks / 2 + 1;
	other = 0;
	off = MMT_CT_HEAD + p->nodes_bytes + (size_t)blk * MMT_MAC_BYTES + 3;
	buf[off] ^= 0x40;
	mmt_ct_late_tamper(test, r, buf, len, blk, "data MAC");
	KUNIT_EXPECT_EQ(test, mmt_read(r, (u64)other * p->block_size, out,
				       p->block_size), 0);
	KUNIT_EXPECT_EQ(test, memcmp(out, pt, p->block_size), 0);
	buf[off] ^= 0x40;

	off = MMT_CT_HEAD + p->nodes_bytes + p->macs_bytes +
	      (size_t)blk * p->block_size + p->block_size - 1;
	buf[off] ^= 0x02;
	mmt_ct_late_tamper(test, r, buf, len, blk, "ciphertext byte");
	KUNIT_EXPECT_EQ(test, mmt_read(r, (u64)other * p->block_size, out,
				       p->block_size), 0);
	KUNIT_EXPECT_EQ(test, memcmp(out, pt, p->block_size), 0);
	buf[off] ^= 0x02;

	/* untouched again: accepted eagerly, byte-exact */
	mmt_ct_rearm(test, r, &rx);
	KUNIT_EXPECT_EQ(test, mmt_ct_recv(test, r, &rx, buf, len, true), 0);
	mmt_ct_expect_plain(test, r, pt);
}

struct mmt_ct_hdr_flip {
	u8 off;
	u8 xor;
	int want;
};

/*
 * Every header byte with two different bit flips on the golden geometry
 * (2 levels, log arity {3, 2}, 64-byte blocks): the first check that
 * notices wins (mmt_closure_receive() kernel-doc).
 */
static int mmt_ct_hdr_want(unsigned int off, u8 xor)
{
	if (off < 4)
		return -EPROTO;
	if (off < 6)
		return -EPROTONOSUPPORT;
	if (off < 8)
		return -EMSGSIZE;
	if (off == 8 && xor == 0x01)
		return -EBADMSG;	/* the copy flag: authenticated */
	if (off < 12)
		return -EINVAL;		/* unknown flags */
	if (off < 14)
		return -EBADMSG;	/* sender node */
	if (off < 24)
		return -EXDEV;		/* receiver node, connection */
	if (off < 32)
		return -EBADMSG;	/* sequence number */
	if (off == 32)
		return -EMEDIUMTYPE;	/* levels 3 (no arity) or 130 */
	if (off < 36)		/* block 128, arity {2,2}, {3,3}: valid */
		return xor == 0x01 ? -EMSGSIZE : -EMEDIUMTYPE;
	if (off < 38)
		return -EMEDIUMTYPE;	/* arity above the levels */
	if (off == 38)
		return -EPROTONOSUPPORT;	/* suite */
	if (off < 40)
		return -EINVAL;		/* reserved */
	if (off < 56)
		return -EMSGSIZE;	/* section lengths */
	if (off < 64)
		return -ESTALE;		/* transfer generation */
	if (off < 80)
		return -EBADMSG;	/* keying salt: no context for it */
	return -ESTALE;			/* the receive's nonce */
}

static void mmt_closure_header_bytes(struct kunit *test)
{
	static const u8 xors[] = { 0x01, 0x80 };
	struct mmt_rx_rules rx;
	struct mmt_closure_hdr h;
	struct mmt *s, *r;
	unsigned int i, k;
	u8 *pt, *buf;
	size_t len;

	s = mmt_ct_sender(test, &mmt_ct_golden_geo, MMT_GOLDEN_GUA, 6, &pt);
	buf = mmt_ct_build(test, s, 0, &len);
	r = mmt_ct_receiver(test, &mmt_ct_golden_geo);
	mmt_ct_rx(&rx);
	for (i = 0; i < MMT_CLOSURE_HDR_BYTES; i++) {
		for (k = 0; k < ARRAY_SIZE(xors); k++) {
			int want = mmt_ct_hdr_want(i, xors[k]);
			int pw = want == -EBADMSG || want == -EXDEV ||
				 want == -ESTALE ? 0 : want;
			char what[40];

			snprintf(what, sizeof(what), "header byte %u ^ 0x%02x",
				 i, xors[k]);
			buf[i] ^= xors[k];
			KUNIT_EXPECT_EQ_MSG(test, mmt_closure_parse_hdr(buf, len,
									&h),
					    pw, "parse: %s", what);
			mmt_ct_expect_rx(test, r, &rx, buf, len, k, want, what);
			buf[i] ^= xors[k];
		}
	}
	mmt_ct_expect_rx(test, r, &rx, buf, len, true, 0, "intact header");
	mmt_ct_expect_plain(test, r, pt);
}

/* ------------------------------------------------------- protocol rules */

static void mmt_closure_replay(struct kunit *test)
{
	const struct mmt_ct_geo *g = &mmt_ct_golden_geo;
	struct mmt_rx_rules rx;
	struct mmt *s, *r;
	u8 *pt, *c1, *c2;
	size_t len;
	u64 ctr1;

	s = mmt_ct_sender(test, g, MMT_GOLDEN_GUA, 7, &pt);
	c1 = mmt_ct_build(test, s, 0, &len);
	ctr1 = s->root.root_counter;
	/* copy mode: the owner goes on writing and sends a newer closure */
	KUNIT_ASSERT_EQ(test, mmt_root_transition(&s->root, MMT_VALID), 0);
	KUNIT_ASSERT_EQ(test, mmt_write(s, 0, pt, 64), 0);
	c2 = mmt_ct_build(test, s, 0, &len);
	KUNIT_ASSERT_GT(test, s->root.root_counter, ctr1);

	r = mmt_ct_receiver(test, g);
	/* the minimum root counter of the receive buffer */
	mmt_ct_rx(&rx);
	rx.min_root_counter = ctr1;
	mmt_ct_expect_rx(test, r, &rx, c1, len, false, -ESTALE, "min counter");
	rx.min_root_counter = ctr1 - 1;
	mmt_ct_expect_rx(test, r, &rx, c1, len, false, 0, "above min");

	/* the same closure again, into a fresh WAITING MMT */
	mmt_ct_rearm(test, r, &rx);
	rx.last_root_counter = 0;
	KUNIT_ASSERT_EQ(test, mmt_ct_recv(test, r, &rx, c2, len, true), 0);
	KUNIT_ASSERT_EQ(test, mmt_root_transition(&r->root, MMT_INVALID), 0);
	KUNIT_ASSERT_EQ(test, mmt_root_transition(&r->root, MMT_WAITING), 0);
	mmt_ct_expect_rx(test, r, &rx, c2, len, true, -ESTALE, "replay");
	/* an older closure of the same MMT */
	mmt_ct_expect_rx(test, r, &rx, c1, len, false, -ESTALE, "older");
}

/*
 * Replay from an earlier transfer: a closure of an earlier transfer on the same
 * connection, replayed into slot 0 of a later receive whose replay floors
 * start at zero.  Only the transfer generation (rule 4c) tells it apart:
 * it carries the earlier gen and is -ESTALE, while the later transfer's
 * own closure is accepted.  Without rule 4c the stale closure was accepted.
 */
static void mmt_closure_earlier_transfer(struct kunit *test)
{
	const struct mmt_ct_geo *g = &mmt_ct_golden_geo;
	struct mmt_closure_hdr h;
	struct mmt_rx_rules rx;
	struct mmt *s, *r;
	u8 *pt, *old, *cur;
	size_t len;

	s = mmt_ct_sender(test, g, MMT_GOLDEN_GUA, 11, &pt);
	old = mmt_ct_build(test, s, MMT_CLOSURE_F_COPY, &len);	/* gen G */
	KUNIT_ASSERT_EQ(test, mmt_root_transition(&s->root, MMT_VALID), 0);
	pt[0] ^= 0xff;
	KUNIT_ASSERT_EQ(test, mmt_write(s, 0, pt, 64), 0);
	KUNIT_ASSERT_EQ(test, mmt_root_transition(&s->root, MMT_SENDING), 0);
	cur = kunit_kzalloc(test, len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, cur);
	mmt_golden_hdr(&h);
	h.gen = MMT_GOLDEN_GEN + 1;			/* the next transfer */
	KUNIT_ASSERT_EQ(test, mmt_closure_build(s, &h, cur, len), 0);

	r = mmt_ct_receiver(test, g);
	mmt_ct_rx(&rx);
	rx.gen = MMT_GOLDEN_GEN + 1;	/* floors at zero, as a new receive */
	rx.check_seq = true;
	rx.expect_seq = MMT_GOLDEN_SEQ;
	mmt_ct_expect_rx(test, r, &rx, old, len, false, -ESTALE,
			 "earlier transfer, same slot");
	mmt_ct_expect_rx(test, r, &rx, old, len, true, -ESTALE,
			 "earlier transfer, same slot (eager)");
	rx.gen = MMT_GOLDEN_GEN + 2;
	mmt_ct_expect_rx(test, r, &rx, cur, len, false, -ESTALE,
			 "closure of an older generation");
	rx.gen = MMT_GOLDEN_GEN;
	mmt_ct_expect_rx(test, r, &rx, cur, len, false, -ESTALE,
			 "closure of a newer generation");
	rx.gen = MMT_GOLDEN_GEN + 1;
	/* built for another receive (same generation: the other direction
	 * of the connection, or another receive into this PMO)
	 */
	rx.rx_nonce[15] ^= 1;
	mmt_ct_expect_rx(test, r, &rx, cur, len, false, -ESTALE,
			 "closure of another receive");
	rx.rx_nonce[15] ^= 1;
	mmt_ct_expect_rx(test, r, &rx, cur, len, true, 0, "this transfer");
	mmt_ct_expect_plain(test, r, pt);
}

struct mmt_ct_keying {
	struct mmt_rx_rules rx;		/* first: the callback gets &rx */
	struct kunit *test;
	const u8 *key;
	struct mmt_crypto *made;
	int calls;
	int fail;			/* return ERR_PTR(fail) if != 0 */
};

static struct mmt_crypto *mmt_ct_keying_fn(struct mmt_rx_rules *rx,
					   const u8 *ksalt)
{
	struct mmt_ct_keying *k = (struct mmt_ct_keying *)rx;	/* first */
	struct mmt_ct_ctx *x = k->test->priv;
	struct mmt_crypto *c;

	k->calls++;
	if (k->fail)
		return ERR_PTR(k->fail);
	if (x->nr >= MMT_CT_MAX_CRYPTO)
		return ERR_PTR(-ENOSPC);
	c = mmt_crypto_alloc(k->key, 16, ksalt);
	if (IS_ERR(c))
		return c;
	x->c[x->nr++] = c;
	k->made = c;
	return c;
}

/*
 * Keying salts: every keying has its own salt and subkeys.  A closure
 * sealed under another keying of the same key is -EBADMSG without a
 * keying callback; the callback's error is returned as is with nothing
 * changed; with a context for the salt it is accepted, the receive MMT
 * takes that context, and it decrypts byte-exact.  The same GUA and
 * counters under two keyings give different ciphertext.
 */
static void mmt_closure_keying_salt(struct kunit *test)
{
	const struct mmt_ct_geo *g = &mmt_ct_golden_geo;
	struct mmt_ct_keying k = { .test = test, .key = mmt_golden_key };
	struct mmt *s, *s2, *r;
	u8 *pt, *pt2, *buf, *buf2;
	size_t len, off;

	s = mmt_ct_sender(test, g, MMT_GOLDEN_GUA, 12, &pt);
	buf = mmt_ct_build(test, s, 0, &len);
	/* the same key, GUA and writes under another keying (test salt) */
	s2 = mmt_ct_new(test, g, mmt_golden_key);
	KUNIT_ASSERT_EQ(test, mmt_format(s2, MMT_GOLDEN_GUA), 0);
	if (s2->root.state == MMT_INVALID)
		KUNIT_ASSERT_EQ(test, mmt_root_transition(&s2->root,
							  MMT_VALID), 0);
	pt2 = kunit_kzalloc(test, s2->p->data_bytes, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pt2);
	memcpy(pt2, pt, s2->p->data_bytes);
	KUNIT_ASSERT_EQ(test, mmt_write(s2, 0, pt2, s2->p->data_bytes), 0);
	buf2 = mmt_ct_build(test, s2, 0, &len);
	KUNIT_EXPECT_EQ(test, s->root.root_counter, s2->root.root_counter);
	off = MMT_CT_HEAD + s->p->nodes_bytes + s->p->macs_bytes;
	KUNIT_EXPECT_NE(test, memcmp(buf + off, buf2 + off, 16), 0);
	KUNIT_EXPECT_EQ(test, memcmp(buf2 + 64, MMT_TEST_KSALT,
				     MMT_KSALT_BYTES), 0);
	KUNIT_EXPECT_EQ(test, memcmp(buf + 64, mmt_golden_ksalt,
				     MMT_KSALT_BYTES), 0);

	r = mmt_ct_receiver(test, g);		/* the golden keying */
	mmt_ct_rx(&k.rx);
	mmt_ct_expect_rx(test, r, &k.rx, buf2, len, false, -EBADMSG,
			 "another keying, no callback");
	k.rx.keying = mmt_ct_keying_fn;
	k.fail = -ENOMEM;
	mmt_ct_expect_rx(test, r, &k.rx, buf2, len, false, -ENOMEM,
			 "keying callback fails");
	KUNIT_EXPECT_EQ(test, k.calls, 1);
	k.fail = 0;
	/* the salt is authenticated: a flipped salt byte gets another key */
	buf2[64] ^= 1;
	mmt_ct_expect_rx(test, r, &k.rx, buf2, len, false, -EBADMSG,
			 "flipped keying salt");
	buf2[64] ^= 1;
	KUNIT_ASSERT_EQ(test, mmt_ct_recv(test, r, &k.rx, buf2, len, true), 0);
	KUNIT_EXPECT_TRUE(test, r->crypto == k.made);
	mmt_ct_expect_plain(test, r, pt2);
	/* the closure of the receive MMT's own keying needs no callback */
	mmt_ct_rearm(test, r, &k.rx);
	r->crypto = s->crypto;
	k.calls = 0;
	KUNIT_ASSERT_EQ(test, mmt_ct_recv(test, r, &k.rx, buf, len, false), 0);
	KUNIT_EXPECT_EQ(test, k.calls, 0);
	mmt_ct_expect_plain(test, r, pt);
}

/*
 * A received MMT is re-encrypted into its new owner's own keying: after
 * mmt_regua() with @to, it uses @to and a fresh GUA, reads byte-exact, and
 * its next closure names @to's salt.
 */
static void mmt_closure_regua_keying(struct kunit *test)
{
	const struct mmt_ct_geo *g = &mmt_ct_golden_geo;
	struct mmt_ct_keying k = { .test = test, .key = mmt_golden_key };
	struct mmt_ct_ctx *x = test->priv;
	struct mmt_closure_hdr h;
	struct mmt *s, *r;
	u8 *pt, *buf;
	size_t len;

	s = mmt_ct_new(test, g, mmt_golden_key);	/* test salt */
	KUNIT_ASSERT_EQ(test, mmt_format(s, MMT_GOLDEN_GUA), 0);
	if (s->root.state == MMT_INVALID)
		KUNIT_ASSERT_EQ(test, mmt_root_transition(&s->root,
							  MMT_VALID), 0);
	pt = kunit_kzalloc(test, s->p->data_bytes, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pt);
	mmt_ct_pattern(pt, s->p->data_bytes, 13);
	KUNIT_ASSERT_EQ(test, mmt_write(s, 0, pt, s->p->data_bytes), 0);
	buf = mmt_ct_build(test, s, 0, &len);
	r = mmt_ct_receiver(test, g);			/* golden salt */
	mmt_ct_rx(&k.rx);
	k.rx.keying = mmt_ct_keying_fn;
	KUNIT_ASSERT_EQ(test, mmt_ct_recv(test, r, &k.rx, buf, len, false), 0);
	KUNIT_ASSERT_TRUE(test, r->crypto == k.made);
	/* into the receiver's own keying: x->shared (golden salt) */
	KUNIT_ASSERT_EQ(test, mmt_regua(r, x->shared, MMT_GOLDEN_GUA + 9), 0);
	KUNIT_EXPECT_EQ(test, memcmp(mmt_crypto_ksalt(r->crypto),
				     mmt_golden_ksalt, MMT_KSALT_BYTES), 0);
	KUNIT_EXPECT_EQ(test, r->root.gua, MMT_GOLDEN_GUA + 9);
	mmt_ct_expect_plain(test, r, pt);
	KUNIT_ASSERT_EQ(test, mmt_root_transition(&r->root, MMT_SENDING), 0);
	mmt_golden_hdr(&h);
	KUNIT_ASSERT_EQ(test, mmt_closure_build(r, &h, buf, len), 0);
	KUNIT_EXPECT_EQ(test, memcmp(buf + 64, mmt_golden_ksalt,
				     MMT_KSALT_BYTES), 0);
}

static void mmt_closure_reorder(struct kunit *test)
{
	const struct mmt_ct_geo *g = &mmt_ct_golden_geo;
	struct mmt_rx_rules rx;
	struct mmt *a, *b, *r;
	u8 *pta, *ptb, *ca, *cb, *ca2;
	size_t len;

	/* a: older GUA but a higher root counter than b */
	a = mmt_ct_sender(test, g, MMT_GOLDEN_GUA, 8, &pta);
	a->root.root_counter += 1000;
	b = mmt_ct_sender(test, g, MMT_GOLDEN_GUA + 1, 9, &ptb);
	ca = mmt_ct_build(test, a, 0, &len);
	cb = mmt_ct_build(test, b, 0, &len);
	KUNIT_ASSERT_GT(test, a->root.root_counter, b->root.root_counter);

	/* swapped: b arrives first, then a */
	r = mmt_ct_receiver(test, g);
	mmt_ct_rx(&rx);
	KUNIT_ASSERT_EQ(test, mmt_ct_recv(test, r, &rx, cb, len, false), 0);
	mmt_ct_expect_plain(test, r, ptb);
	mmt_ct_rearm(test, r, &rx);
	rx.last_root_counter = b->root.root_counter;
	rx.last_gua = b->root.gua;
	mmt_ct_expect_rx(test, r, &rx, ca, len, false, -EILSEQ, "swapped");
	mmt_ct_expect_rx(test, r, &rx, ca, len, true, -EILSEQ, "swapped");

	/* the same GUA twice is refused as well: a needs a fresh GUA */
	rx.last_gua = a->root.gua;
	rx.last_root_counter = 0;
	mmt_ct_expect_rx(test, r, &rx, ca, len, false, -EILSEQ, "same GUA");

	/* in order: a, then b */
	mmt_ct_rx(&rx);
	KUNIT_ASSERT_EQ(test, mmt_ct_recv(test, r, &rx, ca, len, true), 0);
	mmt_ct_expect_plain(test, r, pta);
	KUNIT_ASSERT_EQ(test, mmt_root_transition(&r->root, MMT_INVALID), 0);
	KUNIT_ASSERT_EQ(test, mmt_root_transition(&r->root, MMT_WAITING), 0);
	/* b's counter is below a's: b must count past it (replay rule) */
	mmt_ct_expect_rx(test, r, &rx, cb, len, true, -ESTALE, "b after a");
	KUNIT_ASSERT_EQ(test, mmt_root_transition(&b->root, MMT_VALID), 0);
	b->root.root_counter = a->root.root_counter;
	ca2 = mmt_ct_build(test, b, 0, &len);
	KUNIT_ASSERT_EQ(test, mmt_ct_recv(test, r, &rx, ca2, len, true), 0);
	mmt_ct_expect_plain(test, r, ptb);
}

static void mmt_closure_bad_version(struct kunit *test)
{
	struct mmt_rx_rules rx;
	struct mmt_closure_hdr h;
	struct mmt *s, *r;
	u8 *pt, *buf;
	size_t len;

	s = mmt_ct_sender(test, &mmt_ct_golden_geo, MMT_GOLDEN_GUA, 10, &pt);
	buf = mmt_ct_build(test, s, 0, &len);
	r = mmt_ct_receiver(test, &mmt_ct_golden_geo);
	mmt_ct_rx(&rx);
	buf[4] = 1;	/* format v1: refused */
	KUNIT_EXPECT_EQ(test, mmt_closure_parse_hdr(buf, len, &h),
			-EPROTONOSUPPORT);
	mmt_ct_expect_rx(test, r, &rx, buf, len, true, -EPROTONOSUPPORT,
			 "version 1");
	buf[4] = 2;	/* format v2 (NH over 64-bit words): refused */
	KUNIT_EXPECT_EQ(test, mmt_closure_parse_hdr(buf, len, &h),
			-EPROTONOSUPPORT);
	mmt_ct_expect_rx(test, r, &rx, buf, len, false, -EPROTONOSUPPORT,
			 "version 2");
	buf[4] = 3;	/* format v3 (multilinear second stage): refused */
	KUNIT_EXPECT_EQ(test, mmt_closure_parse_hdr(buf, len, &h),
			-EPROTONOSUPPORT);
	mmt_ct_expect_rx(test, r, &rx, buf, len, false, -EPROTONOSUPPORT,
			 "version 3");
	buf[4] = 5;
	mmt_ct_expect_rx(test, r, &rx, buf, len, false, -EPROTONOSUPPORT,
			 "version 5");
	buf[4] = 0;
	mmt_ct_expect_rx(test, r, &rx, buf, len, false, -EPROTONOSUPPORT,
			 "version 0");
	buf[4] = 4;
	buf[5] = 1;
	mmt_ct_expect_rx(test, r, &rx, buf, len, false, -EPROTONOSUPPORT,
			 "version 260");
	buf[5] = 0;
	buf[0] = 'X';
	mmt_ct_expect_rx(test, r, &rx, buf, len, false, -EPROTO, "magic");
	buf[0] = 'M';
	mmt_ct_expect_rx(test, r, &rx, buf, len, false, 0, "restored");
}

static void mmt_closure_bad_geometry(struct kunit *test)
{
	static const struct mmt_ct_geo other = { "2L-a3.3", 2, { 3, 3 }, 6 };
	static const struct mmt_ct_geo blk = { "2L-a3.2-b128", 2, { 3, 2 }, 7 };
	struct mmt_rx_rules rx;
	struct mmt *s, *s2, *r;
	u8 *pt, *buf, *buf2;
	size_t len, len2;

	s = mmt_ct_sender(test, &other, MMT_GOLDEN_GUA, 11, &pt);
	buf = mmt_ct_build(test, s, 0, &len);
	s2 = mmt_ct_sender(test, &blk, MMT_GOLDEN_GUA, 12, &pt);
	buf2 = mmt_ct_build(test, s2, 0, &len2);
	r = mmt_ct_receiver(test, &mmt_ct_golden_geo);
	mmt_ct_rx(&rx);
	/*
	 * In place the length is the receive MMT's closure size, which the
	 * header's lengths of another size fail first (rule 2).
	 */
	mmt_ct_expect_rx2(test, r, &rx, buf, len, false, -EMEDIUMTYPE,
			  -EMSGSIZE, "other arity");
	mmt_ct_expect_rx2(test, r, &rx, buf2, len2, true, -EMEDIUMTYPE,
			  -EMSGSIZE, "other block size");
	/* a geometry that cannot exist: levels 0, 5; arity 7; block 2^13 */
	buf[32] = 0;
	mmt_ct_expect_rx(test, r, &rx, buf, len, false, -EMEDIUMTYPE,
			 "levels 0");
	buf[32] = 5;
	mmt_ct_expect_rx(test, r, &rx, buf, len, false, -EMEDIUMTYPE,
			 "levels 5");
	buf[32] = 2;
	buf[34] = 7;
	mmt_ct_expect_rx(test, r, &rx, buf, len, false, -EMEDIUMTYPE,
			 "arity 128");
	buf[34] = 3;
	buf[33] = 13;
	mmt_ct_expect_rx(test, r, &rx, buf, len, false, -EMEDIUMTYPE,
			 "block 8192");
}

/*
 * Rule 3 on its own: a valid header of another geometry with the same
 * closure size (2 levels of 8/8 minors and 3 levels of 16/2/2, 64-byte
 * blocks, 4992 bytes each) passes rule 2 at both entry points.
 */
static void mmt_closure_same_size_geometry(struct kunit *test)
{
	static const struct mmt_ct_geo a = { "2L-a3.3", 2, { 3, 3 }, 6 };
	static const struct mmt_ct_geo b = { "3L-a4.1.1", 3, { 4, 1, 1 }, 6 };
	struct mmt_rx_rules rx;
	struct mmt *s, *r;
	u8 *pt, *buf;
	size_t len;

	s = mmt_ct_sender(test, &a, MMT_GOLDEN_GUA, 17, &pt);
	buf = mmt_ct_build(test, s, 0, &len);
	r = mmt_ct_receiver(test, &b);
	KUNIT_ASSERT_EQ(test, mmt_closure_bytes(r->p), len);
	mmt_ct_rx(&rx);
	mmt_ct_expect_rx(test, r, &rx, buf, len, false, -EMEDIUMTYPE,
			 "same size, other geometry");
	mmt_ct_expect_rx(test, r, &rx, buf, len, true, -EMEDIUMTYPE,
			 "same size, other geometry");
}

static void mmt_closure_bad_length(struct kunit *test)
{
	struct mmt_rx_rules rx;
	struct mmt_closure_hdr h;
	struct mmt *s, *r;
	u8 *pt, *buf;
	size_t len;

	s = mmt_ct_sender(test, &mmt_ct_golden_geo, MMT_GOLDEN_GUA, 13, &pt);
	buf = mmt_ct_build(test, s, 0, &len);
	r = mmt_ct_receiver(test, &mmt_ct_golden_geo);
	mmt_ct_rx(&rx);
	/*
	 * A buffer's length is an input; in place it is the receive MMT's
	 * closure size, so these do not apply there (the header's lengths
	 * below do).
	 */
	mmt_ct_expect_rx2(test, r, &rx, buf, len - 1, true, -EMSGSIZE,
			  MMT_CT_NA, "truncated by one");
	mmt_ct_expect_rx2(test, r, &rx, buf, len + 1, true, -EMSGSIZE,
			  MMT_CT_NA, "one too long");
	mmt_ct_expect_rx2(test, r, &rx, buf, MMT_CLOSURE_HDR_BYTES, false,
			  -EMSGSIZE, MMT_CT_NA,
			  "header only");
	mmt_ct_expect_rx2(test, r, &rx, buf, MMT_CLOSURE_HDR_BYTES - 1, false,
			  -EMSGSIZE, MMT_CT_NA,
			  "short header");
	mmt_ct_expect_rx2(test, r, &rx, buf, 0, false, -EMSGSIZE, MMT_CT_NA,
			  "empty");
	mmt_ct_expect_rx(test, r, &rx, NULL, len, false, -EMSGSIZE, "NULL");
	KUNIT_EXPECT_EQ(test,
			mmt_closure_parse_hdr(buf, MMT_CLOSURE_HDR_BYTES - 1,
					      &h), -EMSGSIZE);
	KUNIT_EXPECT_EQ(test, mmt_closure_parse_hdr(NULL, 0, &h), -EMSGSIZE);
	/* hdr_len other than 96 */
	buf[6] = 64;
	mmt_ct_expect_rx(test, r, &rx, buf, len, false, -EMSGSIZE, "hdr_len");
	buf[6] = MMT_CLOSURE_HDR_BYTES;
	/* a section length that disagrees with the geometry */
	buf[52] ^= 0x40;	/* data_len */
	mmt_ct_expect_rx(test, r, &rx, buf, len, false, -EMSGSIZE,
			 "data_len");
	buf[52] ^= 0x40;
	buf[40] = 127;		/* sealed_len */
	mmt_ct_expect_rx(test, r, &rx, buf, len, false, -EMSGSIZE,
			 "sealed_len");
	buf[40] = 128;
	mmt_ct_expect_rx(test, r, &rx, buf, len, false, 0, "restored");
}

static void mmt_closure_wrong_peer(struct kunit *test)
{
	struct mmt_rx_rules rx;
	struct mmt *s, *r;
	u8 *pt, *buf;
	size_t len;

	s = mmt_ct_sender(test, &mmt_ct_golden_geo, MMT_GOLDEN_GUA, 14, &pt);
	buf = mmt_ct_build(test, s, 0, &len);
	r = mmt_ct_receiver(test, &mmt_ct_golden_geo);
	mmt_ct_rx(&rx);
	rx.self_node = MMT_GOLDEN_RECEIVER + 1;
	mmt_ct_expect_rx(test, r, &rx, buf, len, true, -EXDEV,
			 "for another node");
	mmt_ct_rx(&rx);
	rx.conn_id = MMT_GOLDEN_CONN_ID ^ (1ull << 63);
	mmt_ct_expect_rx(test, r, &rx, buf, len, false, -EXDEV,
			 "from another connection");
	mmt_ct_rx(&rx);
	mmt_ct_expect_rx(test, r, &rx, buf, len, false, 0, "right peer");
}

/* With check_seq, a closure only goes into the MMT its seq names. */
static void mmt_closure_wrong_slot(struct kunit *test)
{
	struct mmt_rx_rules rx;
	struct mmt *s, *r;
	u8 *pt, *buf;
	size_t len;

	s = mmt_ct_sender(test, &mmt_ct_golden_geo, MMT_GOLDEN_GUA, 16, &pt);
	buf = mmt_ct_build(test, s, 0, &len);
	r = mmt_ct_receiver(test, &mmt_ct_golden_geo);
	mmt_ct_rx(&rx);
	rx.check_seq = true;
	rx.expect_seq = MMT_GOLDEN_SEQ + 1;
	mmt_ct_expect_rx(test, r, &rx, buf, len, true, -EILSEQ,
			 "into another slot");
	rx.expect_seq = MMT_GOLDEN_SEQ - 1;
	mmt_ct_expect_rx(test, r, &rx, buf, len, false, -EILSEQ,
			 "into the slot before");
	rx.expect_seq = MMT_GOLDEN_SEQ;
	mmt_ct_expect_rx(test, r, &rx, buf, len, false, 0, "its own slot");
}

/*
 * In place, rule 5b: the authenticated sender must be the expected one.
 * It runs after the sealed root (5) and the slot (4b) and before replay
 * (6), so each pairing below shows which error wins.
 */
static void mmt_closure_wrong_sender(struct kunit *test)
{
	struct mmt_ct_ctx *x = test->priv;
	struct mmt_rx_rules rx;
	struct mmt *s, *r;
	u8 *pt, *buf;
	size_t len;

	s = mmt_ct_sender(test, &mmt_ct_golden_geo, MMT_GOLDEN_GUA, 18, &pt);
	buf = mmt_ct_build(test, s, 0, &len);
	r = mmt_ct_receiver(test, &mmt_ct_golden_geo);
	mmt_ct_rx(&rx);
	x->sender = MMT_GOLDEN_SENDER + 1;
	mmt_ct_expect_rx(test, r, &rx, buf, len, false, -EXDEV,
			 "from another sender");
	x->sender = MMT_GOLDEN_SENDER ^ 0x8000;
	mmt_ct_expect_rx(test, r, &rx, buf, len, true, -EXDEV,
			 "from another sender (high bit)");
	/* 5 before 5b */
	buf[MMT_CLOSURE_HDR_BYTES + 20] ^= 0x04;
	mmt_ct_expect_rx(test, r, &rx, buf, len, true, -EBADMSG,
			 "other sender, bad sealed root");
	buf[MMT_CLOSURE_HDR_BYTES + 20] ^= 0x04;
	/* 4b before 5b */
	rx.check_seq = true;
	rx.expect_seq = MMT_GOLDEN_SEQ + 1;
	mmt_ct_expect_rx(test, r, &rx, buf, len, false, -EILSEQ,
			 "other sender, other slot");
	/* 5b before 6 */
	mmt_ct_rx(&rx);
	rx.min_root_counter = ~0ull;
	mmt_ct_expect_rx(test, r, &rx, buf, len, false, -EXDEV,
			 "other sender, replay");
	x->sender = MMT_GOLDEN_SENDER;
	mmt_ct_expect_rx(test, r, &rx, buf, len, false, -ESTALE,
			 "right sender, replay");
	mmt_ct_rx(&rx);
	mmt_ct_expect_rx(test, r, &rx, buf, len, false, 0, "right sender");
	mmt_ct_expect_plain(test, r, pt);
	/* no sender rule at all */
	mmt_ct_rearm(test, r, &rx);
	x->sender = MMT_CLOSURE_ANY_SENDER;
	mmt_ct_expect_rx(test, r, &rx, buf, len, true, 0, "any sender");
	mmt_ct_expect_plain(test, r, pt);
}

static void mmt_closure_not_waiting(struct kunit *test)
{
	static const u8 other_key[16] = { 0xee };
	struct mmt_rx_rules rx;
	struct mmt *s, *r, *k;
	struct mmt_crypto *c;
	u8 *pt, *buf;
	size_t len;
	int ret;

	s = mmt_ct_sender(test, &mmt_ct_golden_geo, MMT_GOLDEN_GUA, 15, &pt);
	buf = mmt_ct_build(test, s, 0, &len);
	mmt_ct_rx(&rx);
	/* the sender itself is SENDING; an INVALID and a VALID MMT */
	KUNIT_EXPECT_EQ(test, mmt_ct_recv(test, s, &rx, buf, len, true),
			-EPERM);
	r = mmt_ct_new(test, &mmt_ct_golden_geo, NULL);
	KUNIT_EXPECT_EQ(test, mmt_ct_recv(test, r, &rx, buf, len, true),
			-EPERM);
	KUNIT_EXPECT_EQ(test, r->root.state, MMT_INVALID);
	KUNIT_ASSERT_EQ(test, mmt_root_transition(&r->root, MMT_VALID), 0);
	KUNIT_EXPECT_EQ(test, mmt_ct_recv(test, r, &rx, buf, len, true),
			-EPERM);
	KUNIT_EXPECT_EQ(test, r->root.state, MMT_VALID);
	KUNIT_EXPECT_EQ(test, rx.last_gua, 0ull);
	/* no key set */
	KUNIT_ASSERT_EQ(test, mmt_root_transition(&r->root, MMT_INVALID), 0);
	KUNIT_ASSERT_EQ(test, mmt_root_transition(&r->root, MMT_WAITING), 0);
	c = r->crypto;
	r->crypto = NULL;
	mmt_ct_expect_rx(test, r, &rx, buf, len, true, -ENOKEY, "no key");
	r->crypto = c;
	/* another key: the sealed root does not open */
	k = mmt_ct_new(test, &mmt_ct_golden_geo, other_key);
	KUNIT_ASSERT_EQ(test, mmt_root_transition(&k->root, MMT_WAITING), 0);
	mmt_ct_expect_rx(test, k, &rx, buf, len, true, -EBADMSG, "other key");
	ret = mmt_ct_recv(test, r, &rx, buf, len, true);
	KUNIT_EXPECT_EQ(test, ret, 0);
}

/*
 * DESIGN.md section 5, the lost ack: a transfer reaches the receiver, the
 * ack is lost, the sender takes its MMT back (SENDING -> VALID) and must
 * not write under the old GUA again: it regua()s first.  Its next closure
 * then carries a new GUA and every ciphertext block has new pads, so the
 * receiver's writable copy and the sender never share a (key, nonce).
 */
static void mmt_closure_lost_ack_regua(struct kunit *test)
{
	const struct mmt_ct_geo *g = &mmt_ct_golden_geo;
	const u64 new_gua = MMT_GOLDEN_GUA + 0x1000;
	struct mmt_rx_rules rx, rx2;
	struct mmt_root r1, r2;
	struct mmt *s, *r, *r2m;
	u8 *pt, *c1, *c2, *blk;
	size_t len, off;
	unsigned int i, same = 0;

	s = mmt_ct_sender(test, g, MMT_GOLDEN_GUA, 16, &pt);
	c1 = mmt_ct_build(test, s, 0, &len);
	r = mmt_ct_receiver(test, g);
	mmt_ct_rx(&rx);
	KUNIT_ASSERT_EQ(test, mmt_ct_recv(test, r, &rx, c1, len, true), 0);
	/* ack lost: the sender rolls back and re-keys the MMT's pads */
	KUNIT_ASSERT_EQ(test, mmt_root_transition(&s->root, MMT_VALID), 0);
	KUNIT_ASSERT_EQ(test, mmt_regua(s, NULL, new_gua), 0);
	KUNIT_EXPECT_EQ(test, s->root.gua, new_gua);
	mmt_ct_expect_plain(test, s, pt);
	KUNIT_EXPECT_EQ(test, mmt_verify_all(s), 0);

	/* both sides write: different GUAs, so different pads */
	blk = kunit_kzalloc(test, 64, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, blk);
	memset(blk, 0x42, 64);
	KUNIT_ASSERT_EQ(test, mmt_write(s, 0, blk, 64), 0);
	KUNIT_ASSERT_EQ(test, mmt_write(r, 0, blk, 64), 0);
	KUNIT_EXPECT_NE(test, memcmp(s->data, r->data, 64), 0);
	memcpy(pt, blk, 64);

	/* the sender's next closure: new GUA, new pads everywhere */
	c2 = mmt_ct_build(test, s, 0, &len);
	KUNIT_ASSERT_EQ(test, mmt_root_unseal(s->p, s->crypto, c1,
					      MMT_CLOSURE_HDR_BYTES,
					      c1 + MMT_CLOSURE_HDR_BYTES,
					      &r1), 0);
	KUNIT_ASSERT_EQ(test, mmt_root_unseal(s->p, s->crypto, c2,
					      MMT_CLOSURE_HDR_BYTES,
					      c2 + MMT_CLOSURE_HDR_BYTES,
					      &r2), 0);
	KUNIT_EXPECT_EQ(test, r1.gua, (u64)MMT_GOLDEN_GUA);
	KUNIT_EXPECT_EQ(test, r2.gua, new_gua);
	KUNIT_EXPECT_NE(test, memcmp(c1 + MMT_CLOSURE_HDR_BYTES,
				     c2 + MMT_CLOSURE_HDR_BYTES, 12), 0);	/* nonce */
	off = MMT_CT_HEAD + s->p->nodes_bytes + s->p->macs_bytes;
	for (i = 0; i < s->p->blocks; i++) {
		size_t b = off + (size_t)i * s->p->block_size;

		same += !memcmp(c1 + b, c2 + b, s->p->block_size);
	}
	KUNIT_EXPECT_EQ(test, same, 0u);

	/* and it is a good closure: a new receiver decrypts it */
	r2m = mmt_ct_receiver(test, g);
	mmt_ct_rx(&rx2);
	KUNIT_ASSERT_EQ(test, mmt_ct_recv(test, r2m, &rx2, c2, len, true), 0);
	mmt_ct_expect_plain(test, r2m, pt);
	/* on the first connection, the new GUA is newer: accepted too */
	mmt_ct_rearm(test, r, &rx);
	rx.last_gua = MMT_GOLDEN_GUA;
	rx.last_root_counter = r1.root_counter;
	KUNIT_EXPECT_EQ(test, mmt_ct_recv(test, r, &rx, c2, len, false), 0);
	mmt_ct_expect_plain(test, r, pt);
}

/*
 * A transfer failed and the sender could not re-encrypt the MMT under a
 * fresh GUA because its own memory fails verification: it stays VALID
 * under the old GUA, marked regua_due.  It reads, but neither writes nor
 * seals (the receiver might hold a writable copy under that GUA); a
 * mmt_regua() that fails changes nothing, one that succeeds (the memory
 * verifies again) clears the mark.  Entering INVALID or WAITING clears it.
 */
static void mmt_closure_regua_due(struct kunit *test)
{
	const struct mmt_ct_geo *g = &mmt_ct_golden_geo;
	struct mmt_closure_hdr h;
	struct mmt *s;
	size_t len;
	u8 *pt, *buf, *out;

	s = mmt_ct_sender(test, g, MMT_GOLDEN_GUA, 17, &pt);
	buf = mmt_ct_build(test, s, 0, &len);	/* VALID -> SENDING */
	KUNIT_ASSERT_EQ(test, mmt_root_transition(&s->root, MMT_VALID), 0);
	s->root.regua_due = true;
	s->data[70] ^= 1;			/* block 1 is bad */
	KUNIT_EXPECT_EQ(test, mmt_regua(s, NULL, MMT_GOLDEN_GUA + 1), -EBADMSG);
	KUNIT_EXPECT_TRUE(test, s->root.regua_due);
	KUNIT_EXPECT_EQ(test, s->root.gua, (u64)MMT_GOLDEN_GUA);
	out = kunit_kzalloc(test, 64, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, out);
	KUNIT_EXPECT_EQ(test, mmt_read(s, 0, out, 64), 0);
	KUNIT_EXPECT_EQ(test, memcmp(out, pt, 64), 0);
	KUNIT_EXPECT_EQ(test, mmt_write(s, 0, "x", 1), -EPERM);
	mmt_golden_hdr(&h);
	KUNIT_EXPECT_EQ(test, mmt_closure_build(s, &h, buf, len), -EPERM);
	KUNIT_EXPECT_EQ(test, mmt_closure_build_head(s, &h, buf), -EPERM);
	s->data[70] ^= 1;			/* the memory is back */
	KUNIT_ASSERT_EQ(test, mmt_regua(s, NULL, MMT_GOLDEN_GUA + 2), 0);
	KUNIT_EXPECT_FALSE(test, s->root.regua_due);
	mmt_ct_expect_plain(test, s, pt);
	KUNIT_EXPECT_EQ(test, mmt_write(s, 0, "x", 1), 0);
	s->root.regua_due = true;
	KUNIT_ASSERT_EQ(test, mmt_root_transition(&s->root, MMT_INVALID), 0);
	KUNIT_EXPECT_FALSE(test, s->root.regua_due);
}

/* ------------------------------------------------------- golden vector */

static void mmt_closure_golden(struct kunit *test)
{
	struct mmt_rx_rules rx;
	struct mmt *s, *r;
	u8 *pt, *buf;
	size_t len;

	KUNIT_ASSERT_EQ(test, memcmp(mmt_ct_golden_geo.log_arity,
				     mmt_golden_log_arity, MMT_GOLDEN_LEVELS),
			0);
	s = mmt_ct_new(test, &mmt_ct_golden_geo, NULL);
	len = mmt_closure_bytes(s->p);
	KUNIT_ASSERT_EQ(test, len, (size_t)sizeof(mmt_golden_closure));
	buf = kunit_kzalloc(test, len, GFP_KERNEL);
	pt = kunit_kzalloc(test, s->p->data_bytes, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_NOT_NULL(test, pt);
	KUNIT_ASSERT_EQ(test, mmt_golden_build(s, pt, buf, len), 0);
	KUNIT_EXPECT_EQ(test, memcmp(buf, mmt_golden_closure, len), 0);

	/* the vector itself is received, verified and decrypted */
	memcpy(buf, mmt_golden_closure, len);
	r = mmt_ct_receiver(test, &mmt_ct_golden_geo);
	mmt_ct_rx(&rx);
	KUNIT_ASSERT_EQ(test, mmt_ct_recv(test, r, &rx, buf, len, true), 0);
	KUNIT_EXPECT_EQ(test, r->root.gua, (u64)MMT_GOLDEN_GUA);
	mmt_ct_expect_plain(test, r, pt);
	mmt_ct_rearm(test, r, &rx);
	KUNIT_ASSERT_EQ(test, mmt_ct_recv(test, r, &rx, buf, len, false), 0);
	mmt_ct_expect_plain(test, r, pt);
}

/* The cases that receive: they run through both entry points. */
#define MMT_CT_RECEIVE_CASES						\
	KUNIT_CASE_PARAM(mmt_closure_roundtrip, mmt_ct_geo_gen_params),	\
	KUNIT_CASE_PARAM(mmt_closure_tamper, mmt_ct_geo_gen_params),	\
	KUNIT_CASE(mmt_closure_send_back),				\
	KUNIT_CASE(mmt_closure_copy_mode),				\
	KUNIT_CASE(mmt_closure_header_bytes),				\
	KUNIT_CASE(mmt_closure_replay),					\
	KUNIT_CASE(mmt_closure_earlier_transfer),			\
	KUNIT_CASE(mmt_closure_keying_salt),				\
	KUNIT_CASE(mmt_closure_regua_keying),				\
	KUNIT_CASE(mmt_closure_reorder),				\
	KUNIT_CASE(mmt_closure_bad_version),				\
	KUNIT_CASE(mmt_closure_bad_geometry),				\
	KUNIT_CASE(mmt_closure_same_size_geometry),			\
	KUNIT_CASE(mmt_closure_bad_length),				\
	KUNIT_CASE(mmt_closure_wrong_peer),				\
	KUNIT_CASE(mmt_closure_wrong_slot),				\
	KUNIT_CASE(mmt_closure_not_waiting),				\
	KUNIT_CASE(mmt_closure_lost_ack_regua),				\
	KUNIT_CASE(mmt_closure_regua_due),				\
	KUNIT_CASE(mmt_closure_golden)

static struct kunit_case mmt_closure_cases[] = {
	KUNIT_CASE_PARAM(mmt_closure_layout, mmt_ct_geo_gen_params),
	KUNIT_CASE(mmt_closure_build_errors),
	MMT_CT_RECEIVE_CASES,
	{}
};

static struct kunit_suite mmt_closure_suite = {
	.name = "mmt_closure",
	.init = mmt_ct_init,
	.exit = mmt_ct_exit,
	.test_cases = mmt_closure_cases,
};

static struct kunit_case mmt_closure_inplace_cases[] = {
	MMT_CT_RECEIVE_CASES,
	KUNIT_CASE(mmt_closure_wrong_sender),
	{}
};

static struct kunit_suite mmt_closure_inplace_suite = {
	.name = "mmt_closure_inplace",
	.init = mmt_ct_init_inplace,
	.exit = mmt_ct_exit,
	.test_cases = mmt_closure_inplace_cases,
};

static struct kunit_suite mmt_closure_eager_split_suite = {
	.name = "mmt_closure_eager_split",
	.init = mmt_ct_init_split,
	.exit = mmt_ct_exit,
	.test_cases = mmt_closure_inplace_cases,
};

kunit_test_suites(&mmt_closure_suite, &mmt_closure_inplace_suite,
		  &mmt_closure_eager_split_suite);
