// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_tree.c - the MMT data path: split counters, counter-mode encryption,
 * Carter-Wegman MACs for data blocks and tree nodes, verified reads,
 * atomic writes, eager verification and re-encryption under a new GUA.
 *
 * Source: Feng et al., HPCA 2023, sections III-IV (MMT, GUA-bound pads);
 * Yan et al., ISCA 2006 (split counters: 7-bit minors, shared major);
 * Gueron, "A Memory Encryption Engine Suitable for General Purpose
 * Processors", 2016 (Carter-Wegman MAC over ciphertext, address and
 * counter).  Bit layouts and the security argument: docs/ENGINE.md.
 *
 * Trust model: struct mmt_root, m->scratch and the caller's buffers are
 * trusted; m->data, m->macs and m->nodes are not (the NIC or a remote peer
 * may write them at any time).  Untrusted values are copied into trusted
 * memory and used only after their MAC has been checked against a trusted
 * counter.  Tree nodes are decoded top-down from the root into a trusted
 * staging array in m->scratch; writes update the staging copy and store
 * nodes back, with new MACs, only after every check has passed.
 */
#include "mmt_lib.h"

#define MMT_P61		((1ull << 61) - 1)	/* hash modulus, a prime */
#define MMT_PAD_AREA	65536			/* pad bytes per batch */
#define MMT_TAIL_WORDS	6			/* bound words after a node */
#define MMT_GF_KEY	(MMT_HASH_KEYS + MMT_NH_KEYS)	/* K_0, K_1 of a data MAC */
#define MMT_NODE_BUF	128			/* >= the largest node_size */
#define MMT_NH_CHUNK	16			/* blocks per mmt_nh() call */
/* Most blocks per batch: MMT_PAD_AREA / (64-byte block + MAC pad) */
#define MMT_BATCH_MAX	(MMT_PAD_AREA / (64 + MMT_AES_BLOCK))

enum mmt_domain {
	/* 1 was format v3's data MAC pads (ENC subkey since v4) */
	MMT_DOM_NODE = 2,	/* node MAC pads */
	MMT_DOM_HKEY = 3,	/* hash key derivation */
};

/* ------------------------------------------------------------ scratch */

/*
 * m->scratch: pads[MMT_PAD_AREA] | 2 x u64 counters[MMT_BATCH_MAX] | head
 * block | tail block | tmp block | node buffer | staging[node_count + 1]
 * (the top node last).
 */
size_t mmt_scratch_bytes(const struct mmt_params *p)
{
	return MMT_PAD_AREA + 2 * MMT_BATCH_MAX * sizeof(u64) +
	       3 * (size_t)p->block_size + MMT_NODE_BUF +
	       ((size_t)p->node_count + 1) * sizeof(struct mmt_node_ctr);
}

static u8 *mmt_pads(const struct mmt *m)
{
	return m->scratch;
}

static u64 *mmt_ctr0(const struct mmt *m)
{
	return (u64 *)(m->scratch + MMT_PAD_AREA);
}

static u64 *mmt_ctr1(const struct mmt *m)
{
	return mmt_ctr0(m) + MMT_BATCH_MAX;
}

static u8 *mmt_head(const struct mmt *m)
{
	return (u8 *)(mmt_ctr1(m) + MMT_BATCH_MAX);
}

static u8 *mmt_tailbuf(const struct mmt *m)
{
	return mmt_head(m) + m->p->block_size;
}

static u8 *mmt_tmp(const struct mmt *m)
{
	return mmt_tailbuf(m) + m->p->block_size;
}

static u8 *mmt_nodebuf(const struct mmt *m)
{
	return mmt_tmp(m) + m->p->block_size;
}

static struct mmt_node_ctr *mmt_stage(const struct mmt *m)
{
	return (struct mmt_node_ctr *)(mmt_nodebuf(m) + MMT_NODE_BUF);
}

/* Staging entry of node @i of level @l (the top node: l = levels - 1). */
static struct mmt_node_ctr *mmt_st(const struct mmt *m, unsigned int l,
				   u32 i)
{
	return mmt_stage(m) + m->p->level_start[l] + i;
}

/* log2 of the number of blocks a level-@l node covers */
static unsigned int mmt_cover_shift(const struct mmt_params *p,
				    unsigned int l)
{
	unsigned int s = 0, j;

	for (j = 0; j <= l; j++)
		s += p->log_arity[j];
	return s;
}

/* The 40-bit counter of child @j of node @c: major << 7 | minor[j]. */
static u64 mmt_child_ctr(const struct mmt_node_ctr *c, u32 j)
{
	return c->major << MMT_MINOR_BITS | c->minor[j];
}

static u64 mmt_block_ctr(const struct mmt *m, u32 b)
{
	const struct mmt_params *p = m->p;
	u32 mask = (1u << p->log_arity[0]) - 1;

	return mmt_child_ctr(mmt_st(m, 0, b >> p->log_arity[0]), b & mask);
}

/* Counter of node @i at level @l < top, held by its parent. */
static u64 mmt_parent_ctr(const struct mmt *m, unsigned int l, u32 i)
{
	unsigned int a = m->p->log_arity[l + 1];

	return mmt_child_ctr(mmt_st(m, l + 1, i >> a), i & ((1u << a) - 1));
}

/* ------------------------------------------------------------ nonces */

/* Data pad nonce, format v2: GUA (58) << 68 | counter (40) << 28 | off16 */
#define MMT_OFF16_BITS		28	/* byte offset / 16 < 2^20 * 2^12 / 16 */
#define MMT_CTR40_MASK		((1ull << 40) - 1)
#define MMT_CTR_LO_BITS		(64 - MMT_OFF16_BITS)	/* 36 in the low word */

void mmt_data_nonce(u8 *out, u64 gua, u64 ctr, u32 off16)
{
	u64 c = ctr & MMT_CTR40_MASK;

	put_unaligned_be64((gua & MMT_GUA_MASK) << 4 | c >> MMT_CTR_LO_BITS,
			   out);
	put_unaligned_be64((c & ((1ull << MMT_CTR_LO_BITS) - 1)) <<
			   MMT_OFF16_BITS |
			   (off16 & ((1u << MMT_OFF16_BITS) - 1)), out + 8);
}

void mmt_mac_nonce(u8 *out, unsigned int domain, u64 gua, u32 index,
		   u64 ctr)
{
	u64 hi, lo;

	hi = (gua & MMT_GUA_MASK) << 6 | (u64)(index & 0xfffffff) >> 22;
	lo = (u64)(index & 0x3fffff) << 42 | (ctr & ((1ull << 40) - 1)) << 2 |
	     (domain & 3);
	put_unaligned_be64(hi, out);
	put_unaligned_be64(lo, out + 8);
}

/* Index field of a node MAC: level (4 bits) | node index (24 bits). */
static u32 mmt_node_index(unsigned int l, u32 i)
{
	return (u32)l << 24 | i;
}

/* ------------------------------------------------------------ hash */

int mmt_hash_key_init(struct mmt_crypto *c, u64 *key)
{
	const size_t n = MMT_ALL_KEYS;
	u8 *buf;
	unsigned int i;
	int err;

	BUILD_BUG_ON(MMT_HASH_KEYS % 2 || MMT_NH_KEYS % 2 || MMT_GF_KEYS % 2);
	BUILD_BUG_ON(MMT_HASH_KEYS < (MMT_NODE_BUF - MMT_MAC_BYTES) / 4 +
		     MMT_TAIL_WORDS);
	BUILD_BUG_ON(2 * MMT_NH_KEYS < (1u << MMT_MAX_LOG_BLOCK) / 4 +
		     (MMT_NH_PASSES - 1) * MMT_NH_SHIFT);
	BUILD_BUG_ON(MMT_NODE_BUF < 16 + (1u << MMT_MAX_LOG_ARITY));
	BUILD_BUG_ON(MMT_PAD_AREA < 2 * ((1u << MMT_MAX_LOG_BLOCK) +
					 MMT_AES_BLOCK));
	BUILD_BUG_ON(MMT_PAD_AREA > MMT_CRYPTO_ECB_MAX);
	BUILD_BUG_ON(MMT_ALL_KEYS * 8 > MMT_CRYPTO_ECB_MAX);
	/* Heap, not stack: the kernel backend maps it into a scatterlist. */
	buf = kmalloc(n * 8, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	for (i = 0; i < n / 2; i++)
		mmt_mac_nonce(buf + 16 * i, MMT_DOM_HKEY, 0, i, 0);
	err = mmt_crypto_ecb(c, MMT_SUBKEY_MAC, buf, buf, n * 8);
	for (i = 0; !err && i < n; i++) {
		u64 v = get_unaligned_be64(buf + 8 * i);

		/*
		 * multilinear keys live in Z_p; NH keys are whole words, stored
		 * little-endian: bytes of 32-bit key words (mmt_nh()); K_0 and
		 * K_1 are elements of GF(2^64) as they are (mmt_gf64())
		 */
		if (i < MMT_HASH_KEYS)
			key[i] = v % MMT_P61;
		else if (i < MMT_GF_KEY)
			put_unaligned_le64(v, key + i);
		else
			key[i] = v;
	}
	memzero_explicit(buf, n * 8);
	kfree(buf);
	return err;
}

/*
 * @a mod 2^61 - 1, for @a < 2^125 (our sums stay below 2^122: see
 * mmt_hash_words() and mmt_dmac_tag()).
 */
static inline u64 mmt_reduce(mmt_u128 a)
{
	u64 r = ((u64)a & MMT_P61) + (u64)(a >> 61);	/* < 2^61 + 2^64 */

	r = (r & MMT_P61) + (r >> 61);			/* < 2^61 + 8 */
	if (r >= MMT_P61)
		r -= MMT_P61;
	return r;
}

/*
 * The bound words hashed after a node: GUA, index and counter, then the
 * domain, which is never 0, so two distinct messages of one domain are never
 * multiples of each other mod p (docs/ENGINE.md: forgery bound).
 */
static mmt_u128 mmt_hash_tail(const u64 *k, u64 gua, u32 index, u64 ctr,
			      u32 domain)
{
	mmt_u128 a;

	a = (mmt_u128)k[0] * (u32)gua + (mmt_u128)k[1] * (u32)(gua >> 32);
	a += (mmt_u128)k[2] * index;
	a += (mmt_u128)k[3] * (u32)ctr + (mmt_u128)k[4] * (u32)(ctr >> 32);
	a += (mmt_u128)k[5] * domain;
	return a;
}

/* Multilinear hash of @nwords (even) 32-bit LE words of @msg (nodes). */
static inline mmt_u128 mmt_hash_words(const u64 *k, const u8 *msg,
				      size_t nwords)
{
	mmt_u128 a0 = 0, a1 = 0;
	size_t i;

	for (i = 0; i < nwords; i += 2) {
		u64 w = get_unaligned_le64(msg + 4 * i);

		a0 += (mmt_u128)k[i] * (u32)w;
		a1 += (mmt_u128)k[i + 1] * (w >> 32);
	}
	return a0 + a1;
}

/* Node MAC tag of the encoded node in @buf (node_size - 8 bytes). */
static u64 mmt_node_tag(const struct mmt *m, const u8 *buf, u64 gua,
			unsigned int l, u32 i, u64 pctr, const u8 *pad16)
{
	u32 n = (m->p->node_size - MMT_MAC_BYTES) / 4;
	const u64 *k = mmt_crypto_hash_key(m->crypto);
	mmt_u128 h;

	h = mmt_hash_words(k, buf, n);
	h += mmt_hash_tail(k + n, gua, mmt_node_index(l, i), pctr,
			   MMT_DOM_NODE);
	return mmt_reduce(h) ^ get_unaligned_le64(pad16);
}

static bool mmt_tag_bad(u64 tag, const u8 *stored)
{
	u8 t[MMT_MAC_BYTES];

	put_unaligned_le64(tag, t);
	return crypto_memneq(t, stored, MMT_MAC_BYTES);
}

static void mmt_report(const struct mmt *m, u64 gua, int level, u32 index)
{
	if (level < 0)
		pr_err_ratelimited("integrity failure: GUA %llx data block %u\n",
				   (unsigned long long)gua, index);
	else
		pr_err_ratelimited("integrity failure: GUA %llx level %d node %u\n",
				   (unsigned long long)gua, level, index);
}

/* ------------------------------------------------------------ nodes */

/* Serialize counters of a level-@l node, MAC excluded. */
static void mmt_node_encode(const struct mmt_params *p, unsigned int l,
			    const struct mmt_node_ctr *c, u8 *buf)
{
	u32 arity = 1u << p->log_arity[l];

	memset(buf, 0, p->node_size - MMT_MAC_BYTES);
	put_unaligned_le64(c->major, buf);
	memcpy(buf + 8, c->minor, arity);
}

static int mmt_node_decode(const struct mmt_params *p, unsigned int l,
			   const u8 *buf, struct mmt_node_ctr *c)
{
	const u64 high = 0x0101010101010101ull * (u8)~MMT_MINOR_MAX;
	u32 len = p->node_size - MMT_MAC_BYTES - 8, j;	/* a multiple of 8 */
	u32 arity = min_t(u32, 1u << p->log_arity[l], len);
	const u8 *b = buf + 8;
	u64 bad = 0;

	memset(c, 0, sizeof(*c));
	c->major = get_unaligned_le64(buf);
	if (c->major > MMT_MAJOR_MAX)
		return -EBADMSG;
	/*
	 * Eight bytes at a time, without a branch per byte (every access
	 * decodes the nodes on its path): a minor above MMT_MINOR_MAX or a
	 * nonzero byte past the arity is an error, and on error @c is not to
	 * be used (as before)
	 */
	for (j = 0; j + 8 <= arity; j += 8) {
		u64 w = get_unaligned_le64(b + j);

		memcpy(c->minor + j, b + j, 8);
		bad |= w & high;
	}
	for (; j < arity; j++) {
		c->minor[j] = b[j];
		bad |= b[j] & (u8)~MMT_MINOR_MAX;
	}
	for (; j < len && (j & 7); j++)
		bad |= b[j];
	for (; j < len; j += 8)
		bad |= get_unaligned_le64(b + j);
	return bad ? -EBADMSG : 0;
}

static u8 *mmt_node_ptr(const struct mmt *m, unsigned int l, u32 i)
{
	return m->nodes + (size_t)(m->p->level_start[l] + i) * m->p->node_size;
}

/*
 * Copy nodes [lo, hi] of level @l (< top) from untrusted memory, check each
 * MAC against the parent's counter in staging, decode into staging.
 */
static int mmt_load_nodes(struct mmt *m, u64 gua, unsigned int l, u32 lo,
			  u32 hi)
{
	const struct mmt_params *p = m->p;
	u8 *pads = mmt_pads(m), *buf = mmt_nodebuf(m);
	u32 i, n, j;
	int err;

	for (i = lo; i <= hi; i += n) {
		n = min_t(u32, hi - i + 1, MMT_PAD_AREA / MMT_AES_BLOCK);
		for (j = 0; j < n; j++)
			mmt_mac_nonce(pads + 16 * j, MMT_DOM_NODE, gua,
				      mmt_node_index(l, i + j),
				      mmt_parent_ctr(m, l, i + j));
		err = mmt_crypto_ecb(m->crypto, MMT_SUBKEY_MAC, pads, pads,
				     16 * n);
		if (err)
			return err;
		for (j = 0; j < n; j++) {
			u32 x = i + j;
			u64 tag;

			memcpy(buf, mmt_node_ptr(m, l, x), p->node_size);
			tag = mmt_node_tag(m, buf, gua, l, x,
					   mmt_parent_ctr(m, l, x),
					   pads + 16 * j);
			if (mmt_tag_bad(tag, buf + p->node_size -
					MMT_MAC_BYTES) ||
			    mmt_node_decode(p, l, buf, mmt_st(m, l, x))) {
				mmt_report(m, gua, l, x);
				return -EBADMSG;
			}
		}
	}
	return 0;
}

/* Encode nodes [lo, hi] of level @l from staging, MAC them, store them. */
static int mmt_store_nodes(struct mmt *m, u64 gua, unsigned int l, u32 lo,
			   u32 hi)
{
	const struct mmt_params *p = m->p;
	u8 *pads = mmt_pads(m), *buf = mmt_nodebuf(m);
	u32 i, n, j;
	int err;

	for (i = lo; i <= hi; i += n) {
		n = min_t(u32, hi - i + 1, MMT_PAD_AREA / MMT_AES_BLOCK);
		for (j = 0; j < n; j++)
			mmt_mac_nonce(pads + 16 * j, MMT_DOM_NODE, gua,
				      mmt_node_index(l, i + j),
				      mmt_parent_ctr(m, l, i + j));
		err = mmt_crypto_ecb(m->crypto, MMT_SUBKEY_MAC, pads, pads,
				     16 * n);
		if (err)
			return err;
		for (j = 0; j < n; j++) {
			u32 x = i + j;
			u64 tag;

			mmt_node_encode(p, l, mmt_st(m, l, x), buf);
			tag = mmt_node_tag(m, buf, gua, l, x,
					   mmt_parent_ctr(m, l, x),
					   pads + 16 * j);
			put_unaligned_le64(tag, buf + p->node_size -
					   MMT_MAC_BYTES);
			memcpy(mmt_node_ptr(m, l, x), buf, p->node_size);
		}
	}
	return 0;
}

/*
 * Load and verify, into staging, the top node and every node on the paths
 * of blocks [b0, b1] (all of them if the range is the whole MMT).
 */
static int mmt_load_path(struct mmt *m, u64 gua, u32 b0, u32 b1)
{
	const struct mmt_params *p = m->p;
	int l, err;

	*mmt_st(m, p->levels - 1, 0) = m->root.top;
	for (l = p->levels - 2; l >= 0; l--) {
		unsigned int s = mmt_cover_shift(p, l);

		err = mmt_load_nodes(m, gua, l, b0 >> s, b1 >> s);
		if (err)
			return err;
	}
	return 0;
}

/* ------------------------------------------------------------ pads */

/*
 * Counters of blocks [@b, @b + @n) from staging into @ctr: one leaf
 * lookup per leaf, not per block.
 */
static void mmt_staged_ctrs(const struct mmt *m, u32 b, u32 n, u64 *ctr)
{
	unsigned int a = m->p->log_arity[0];
	u32 mask = (1u << a) - 1, i = 0, j, k, cnt;

	while (i < n) {
		const struct mmt_node_ctr *c = mmt_st(m, 0, (b + i) >> a);
		const u64 major = c->major << MMT_MINOR_BITS;

		/* the rest of this leaf's blocks, at most n - i */
		k = (b + i) & mask;
		cnt = min(n - i, mask + 1 - k);
		for (j = 0; j < cnt; j++)
			ctr[i + j] = major | c->minor[k + j];
		i += cnt;
	}
}

/*
 * Data pads of a run shorter than this many bytes come from ECB over the
 * nonces written out (one ECB call covers several such runs); longer runs
 * are one CTR call each, which writes no nonces.  Both give the same bytes.
 */
#define MMT_CTR_MIN_RUN	512

/* What mmt_gen_pads() makes */
#define MMT_PADS_DATA	1u	/* data pads, or data XOR pads */
#define MMT_PADS_MAC	2u	/* MAC pads */

/* @len bytes: dst = a ^ b (@dst may be @a or @b) */
static void mmt_xor(u8 *dst, const u8 *a, const u8 *b, size_t len)
{
	size_t i;

	for (i = 0; i < len; i += 8)
		put_unaligned_le64(get_unaligned_le64(a + i) ^
				   get_unaligned_le64(b + i), dst + i);
}

/*
 * mmt_gen_pads(): the data nonces written at [@from, @to) of @out become
 * pads (ECB under the ENC subkey); with @in, XORed into @dout at the same
 * offsets instead of being kept.
 */
static int mmt_ecb_run(struct mmt *m, u8 *out, u8 *from, u8 *to,
		       const u8 *in, u8 *dout)
{
	size_t o = from - out;
	int err;

	err = mmt_crypto_ecb(m->crypto, MMT_SUBKEY_ENC, from, from, to - from);
	if (!err && in)
		mmt_xor(dout + o, in + o, from, to - from);
	return err;
}

/*
 * The number of blocks from @i on (below @n) with @ctr[@i]'s counter.
 * Eight counters per test while they match (a whole write of a closure is
 * a few runs of hundreds of blocks, tested twice per batch, for the data
 * pads and the MAC pads); counters are not secret.
 */
static u32 mmt_run_len(const u64 *ctr, u32 i, u32 n)
{
	const u64 c = ctr[i];
	u32 r = 1;

	while (i + r + 8 <= n) {
		const u64 *q = ctr + i + r;

		if ((q[0] ^ c) | (q[1] ^ c) | (q[2] ^ c) | (q[3] ^ c) |
		    (q[4] ^ c) | (q[5] ^ c) | (q[6] ^ c) | (q[7] ^ c))
			break;
		r += 8;
	}
	while (i + r < n && ctr[i + r] == c)
		r++;
	return r;
}

/*
 * Data MAC pads, format v4 (docs/ENGINE.md, "Carter-Wegman MACs"): the pad
 * of block x under counter c is the 8 bytes at 8 (x & 1) of
 * AES_ENC(1 << 126 | GUA << 68 | c << 28 | x >> 1), i.e. the data nonce's
 * layout (mmt_data_nonce()) with the pair index x >> 1 in the offset field
 * and bit 126 set, which no data nonce has.  Two blocks of a pair under one
 * counter share one AES block, and a run of pairs under one counter is one
 * CTR stream.
 */
static void mmt_tpad_nonce(u8 *out, u64 gua, u64 ctr, u32 pair)
{
	mmt_data_nonce(out, gua, ctr, pair);
	out[0] |= 0x40;			/* bit 126 */
}

/*
 * The CTR part [*s, *e) of the run of @r blocks from index @i (block @b +
 * @i, one counter): whole pairs, at least MMT_CTR_MIN_RUN bytes of pads;
 * *s == *e: none (the run's pads come from ECB over written nonces).
 */
static void mmt_tpad_span(u32 b, u32 i, u32 r, u32 *s, u32 *e)
{
	u32 h = (b + i) & 1;		/* an odd first block: by ECB */
	u32 k = r > h ? (r - h) & ~1u : 0;

	*s = i + h;
	*e = *s + k;
	if (k * MMT_MAC_BYTES < MMT_CTR_MIN_RUN)
		*e = *s;
}

/*
 * The pads of blocks [@from, @to) of the batch (from block @b) whose nonces
 * were written at @mac + 16 k: one ECB call, then each block's half moved
 * down to @mac + 8 k, in increasing k, so that no nonce slot is overwritten
 * before it is read.
 */
static int mmt_tpad_ecb(struct mmt *m, u32 b, u8 *mac, u32 from, u32 to)
{
	int err;
	u32 k;

	err = mmt_crypto_ecb(m->crypto, MMT_SUBKEY_ENC, mac + 16 * from,
			     mac + 16 * from, 16 * (to - from));
	for (k = from; !err && k < to; k++)
		memmove(mac + MMT_MAC_BYTES * k,
			mac + 16 * k + 8 * ((b + k) & 1), MMT_MAC_BYTES);
	return err;
}

/*
 * Write the nonces of blocks [@from, @to) at @mac + 16 k, as part of the
 * ECB stretch that starts at *@ecb (the batch's n: none yet).
 */
static void mmt_tpad_nonces(u8 *mac, u64 gua, u32 b, const u64 *ctr,
			    u32 from, u32 to, u32 *ecb)
{
	u32 k;

	if (from < to)
		*ecb = min(*ecb, from);
	for (k = from; k < to; k++)
		mmt_tpad_nonce(mac + 16 * k, gua, ctr[k], (b + k) >> 1);
}

/*
 * The data MAC pads of the run of @r blocks from index @i of the batch
 * (block @b + @i, counter @ctr[@i]) into @mac (trusted scratch of 16 n
 * bytes for the batch's n blocks): pad k at @mac + 8 k.  A long run of
 * whole pairs is one mmt_crypto_ctr() call, written in place; the other
 * blocks (short runs, and the odd first and last block of a long run) have
 * their nonces written at @mac + 16 k and join the ECB stretch that starts
 * at *@ecb (n: none), which goes through mmt_tpad_ecb() before the next CTR
 * call writes over that area; the caller flushes the last stretch.
 */
static int mmt_tpad_run(struct mmt *m, u64 gua, u32 b, const u64 *ctr,
			u32 i, u32 r, u32 n, u8 *mac, u32 *ecb)
{
	u8 iv[MMT_AES_BLOCK];
	u32 s, e;
	int err;

	mmt_tpad_span(b, i, r, &s, &e);
	mmt_tpad_nonces(mac, gua, b, ctr, i, s, ecb);
	if (s < e) {
		/* the stretch so far, then the CTR run */
		if (*ecb < s) {
			err = mmt_tpad_ecb(m, b, mac, *ecb, s);
			if (err)
				return err;
		}
		*ecb = n;
		mmt_tpad_nonce(iv, gua, ctr[s], (b + s) >> 1);
		err = mmt_crypto_ctr(m->crypto, iv, mac + MMT_MAC_BYTES * s,
				     MMT_MAC_BYTES * (e - s));
		if (err)
			return err;
	}
	mmt_tpad_nonces(mac, gua, b, ctr, e, i + r, ecb);
	return 0;
}

/*
 * Pads for @n blocks from @b under (@gua, @ctr[i]), into @out (trusted
 * scratch): with MMT_PADS_DATA the data pads, n * block_size bytes, then
 * with MMT_PADS_MAC n data MAC pads of 8 bytes (mmt_tpad_run(); the area
 * holds 16 n bytes).
 *
 * With @in, the data pads are not kept: @dout (n * block_size bytes,
 * trusted) gets @in XOR the data pads, i.e. the ciphertext of plaintext
 * @in, or the plaintext of ciphertext @in (@dout may be @in; @out then
 * holds only the nonces of the short runs).
 *
 * A run of blocks with one counter has consecutive data nonces
 * (docs/ENGINE.md, "Data encryption: pads"), so its pads are one AES-CTR
 * stream, which the crypto library XORs into @in in the same pass; the
 * nonces of short runs are written out and encrypted with one ECB call per
 * stretch.  The runs are found once for both kinds of pad.
 */
static int mmt_gen_pads(struct mmt *m, u64 gua, u32 b, u32 n,
			const u64 *ctr, unsigned int what, u8 *out,
			const u8 *in, u8 *dout)
{
	const struct mmt_params *p = m->p;
	u32 bs = p->block_size, nsub = bs / MMT_AES_BLOCK, i, r, s;
	bool data = what & MMT_PADS_DATA, macs = what & MMT_PADS_MAC;
	u8 *mac = data ? out + (size_t)n * bs : out, *d, *ecb = NULL;
	u32 tecb = n;		/* first slot of the MAC pads' ECB stretch */
	u64 gdhi = (gua & MMT_GUA_MASK) << 4;
	u8 iv[MMT_AES_BLOCK];
	int err;

	for (i = 0; i < n; i += r) {
		/*
		 * mmt_data_nonce() of sub-block 0 of block b + i: off16 =
		 * x * nsub in the low bits; the run's later sub-blocks follow
		 * as lo + 1, lo + 2, ... with no carry out of the low 28 bits
		 */
		u64 hi = gdhi | ((ctr[i] & MMT_CTR40_MASK) >> MMT_CTR_LO_BITS);
		u64 lo = (ctr[i] & ((1ull << MMT_CTR_LO_BITS) - 1)) <<
			 MMT_OFF16_BITS | (u64)(b + i) * nsub;
		size_t o = (size_t)i * bs;

		r = mmt_run_len(ctr, i, n);
		if (macs) {
			err = mmt_tpad_run(m, gua, b, ctr, i, r, n, mac,
					   &tecb);
			if (err)
				return err;
		}
		if (!data)
			continue;
		d = out + o;
		if ((size_t)r * bs >= MMT_CTR_MIN_RUN) {
			if (ecb) {
				err = mmt_ecb_run(m, out, ecb, d, in, dout);
				if (err)
					return err;
				ecb = NULL;
			}
			put_unaligned_be64(hi, iv);
			put_unaligned_be64(lo, iv + 8);
			if (in)
				err = mmt_crypto_ctr_xor(m->crypto, iv, in + o,
							 dout + o,
							 (size_t)r * bs);
			else
				err = mmt_crypto_ctr(m->crypto, iv, d,
						     (size_t)r * bs);
			if (err)
				return err;
			continue;
		}
		if (!ecb)
			ecb = d;
		for (s = 0; s < r * nsub; s++, d += 16) {
			put_unaligned_be64(hi, d);
			put_unaligned_be64(lo + s, d + 8);
		}
	}
	if (ecb) {
		err = mmt_ecb_run(m, out, ecb, out + (size_t)n * bs, in, dout);
		if (err)
			return err;
	}
	return tecb < n ? mmt_tpad_ecb(m, b, mac, tecb, n) : 0;
}

/* Blocks per batch when each needs @copies sets of data and MAC pads. */
static u32 mmt_batch(const struct mmt_params *p, unsigned int copies)
{
	return min_t(u32, MMT_BATCH_MAX,
		     MMT_PAD_AREA / (copies * (p->block_size + MMT_AES_BLOCK)));
}

/* ------------------------------------------------------------ data */

/*
 * Data MAC of a block (docs/ENGINE.md, "Carter-Wegman MACs", format v4):
 * NH over the ciphertext, then K_0 * Y_0 + K_1 * Y_1 in GF(2^64) of the two
 * NH sums, XOR the block's MAC pad, which binds the GUA, the block and its
 * counter.
 */
struct mmt_dmac {
	const u8 *nh;		/* NH key words, little-endian (mmt_nh()) */
	const u64 *gf;		/* K_0, K_1 (mmt_gf64()) */
};

static void mmt_dmac_init(const struct mmt *m, struct mmt_dmac *d)
{
	const u64 *k = mmt_crypto_hash_key(m->crypto);

	d->nh = (const u8 *)(k + MMT_HASH_KEYS);
	d->gf = k + MMT_GF_KEY;
}

/* Nonzero differences of tags, compared once with crypto_memneq(). */
static bool mmt_diff_bad(u64 diff)
{
	static const u8 zero[MMT_MAC_BYTES];
	u8 d[MMT_MAC_BYTES];

	put_unaligned_le64(diff, d);
	return crypto_memneq(d, zero, MMT_MAC_BYTES);
}

/*
 * Check @n consecutive blocks from @b (MAC pads @mpads, 8 bytes apart) and
 * decrypt them with the data pads @dpads into @dst (trusted, n *
 * block_size bytes), in one pass over the untrusted ciphertext that loads
 * each word once, hashes it (NH; then GF(2^64) over the sums) and writes it
 * decrypted; @dpads NULL: copy the ciphertext into @dst (the caller
 * decrypts it there after this pass); @dst NULL: check only (@dpads
 * unused).  Returns the OR of the differences between computed and stored
 * tags, 0 if all match: the caller tests it with mmt_diff_bad() and wipes
 * @dst if it is not 0.  SIMD (mmt_nh_simd_begin()) for the whole batch.
 */
static u64 mmt_open_batch(const struct mmt *m, const struct mmt_dmac *d,
			  u32 b, u32 n, u8 *dst, const u8 *dpads,
			  const u8 *mpads)
{
	u32 bs = m->p->block_size, i, j, k;
	const u8 *ct = m->data + ((size_t)b << m->p->log_block_size);
	const u8 *mac = m->macs + (size_t)b * MMT_MAC_BYTES;
	unsigned int mode = dst && dpads ? MMT_NH_OPEN : MMT_NH_COPY;
	bool simd = mmt_nh_simd_begin();
	u64 diff = 0, h[2 * MMT_NH_CHUNK], g[MMT_NH_CHUNK];

	for (i = 0; i < n; i += k, ct += (size_t)k * bs) {
		k = min_t(u32, n - i, MMT_NH_CHUNK);
		mmt_nh(simd, d->nh, dst, ct, dpads, bs, k, mode, h);
		mmt_gf64(simd, d->gf, h, k, g);
		for (j = 0; j < k; j++)
			diff |= g[j] ^
				get_unaligned_le64(mpads +
						   MMT_MAC_BYTES * (i + j)) ^
				get_unaligned_le64(mac + 8 * (i + j));
		if (dst)
			dst += (size_t)k * bs;
		if (dpads)
			dpads += (size_t)k * bs;
	}
	mmt_nh_simd_end(simd);
	return diff;
}

/*
 * Encrypt @n consecutive blocks from @b of plaintext
 * @src (trusted, n * block_size bytes) with the data pads @dpads, storing
 * ciphertext and MACs (MAC pads @mpads, 8 bytes apart) in untrusted
 * memory, hashing the ciphertext as it is computed (never read back from
 * untrusted memory).  @src NULL: @dpads is already the ciphertext, in
 * trusted memory (the pads themselves for zeros, or mmt_gen_pads() with
 * @in).  SIMD (mmt_nh_simd_begin()) for the whole batch.
 */
static void mmt_seal_batch(struct mmt *m, const struct mmt_dmac *d, u32 b,
			   u32 n, const u8 *src, const u8 *dpads,
			   const u8 *mpads)
{
	u32 bs = m->p->block_size, i, j, k;
	u8 *ct = m->data + ((size_t)b << m->p->log_block_size);
	u8 *mac = m->macs + (size_t)b * MMT_MAC_BYTES;
	bool simd = mmt_nh_simd_begin();
	u64 h[2 * MMT_NH_CHUNK], g[MMT_NH_CHUNK];

	for (i = 0; i < n; i += k, ct += (size_t)k * bs,
	     dpads += (size_t)k * bs) {
		k = min_t(u32, n - i, MMT_NH_CHUNK);
		if (src) {
			mmt_nh(simd, d->nh, ct, src, dpads, bs, k,
			       MMT_NH_SEAL, h);
			src += (size_t)k * bs;
		} else {
			mmt_nh(simd, d->nh, ct, dpads, NULL, bs, k,
			       MMT_NH_COPY, h);
		}
		mmt_gf64(simd, d->gf, h, k, g);
		for (j = 0; j < k; j++)
			put_unaligned_le64(g[j] ^
					   get_unaligned_le64(mpads +
							      MMT_MAC_BYTES *
							      (i + j)),
					   mac + 8 * (i + j));
	}
	mmt_nh_simd_end(simd);
}

/* Check the MACs of blocks [b0, b1] against staging; no decryption. */
static int mmt_verify_blocks(struct mmt *m, u64 gua, u32 b0, u32 b1)
{
	u64 *ctr = mmt_ctr0(m);
	u8 *pads = mmt_pads(m);
	struct mmt_dmac d;
	u32 b, n;
	int err;

	mmt_dmac_init(m, &d);
	for (b = b0; b <= b1; b += n) {
		n = min_t(u32, b1 - b + 1, MMT_BATCH_MAX);
		mmt_staged_ctrs(m, b, n, ctr);
		err = mmt_gen_pads(m, gua, b, n, ctr, MMT_PADS_MAC, pads, NULL,
				   NULL);
		if (err)
			return err;
		if (mmt_diff_bad(mmt_open_batch(m, &d, b, n, NULL, NULL, pads))) {
			mmt_report(m, gua, -1, b);
			return -EBADMSG;
		}
	}
	return 0;
}

/*
 * Check block @b and decrypt it into @dst in one pass over
 * the untrusted ciphertext.  -EBADMSG leaves unverified plaintext in @dst:
 * callers wipe it.
 */
static int mmt_open_block(struct mmt *m, const struct mmt_dmac *d, u32 b,
			  u8 *dst, const u8 *data_pad, const u8 *mac_pad)
{
	if (mmt_diff_bad(mmt_open_batch(m, d, b, 1, dst, data_pad,
					mac_pad)))
		return -EBADMSG;
	return 0;
}

/*
 * Re-encrypt blocks [b0, b1] from (@gua, staged counter) to (@new_gua,
 * @new_ctr, or the staged counter if MMT_CTR_STAGED): each block is read
 * once into trusted memory and checked before it is converted, so that a
 * concurrent change of untrusted memory is never MACed.
 *
 * A block that fails this check was changed after the caller's own check
 * (pass 1): with @keep_going it is left as it is (bound to its old counter,
 * so it fails verification from now on) and the others are still
 * converted, so that the caller can commit the new counters and no
 * (GUA, block, counter) pad is ever used for two plaintexts; -EBADMSG is
 * returned at the end.  Without @keep_going the first failure stops.
 */
#define MMT_CTR_STAGED	(~0ull)

static int mmt_recrypt_blocks(struct mmt *m, struct mmt_crypto *to,
			      u64 gua, u64 new_gua, u64 new_ctr, u32 b0,
			      u32 b1, bool keep_going)
{
	const struct mmt_params *p = m->p;
	struct mmt t = *m;	/* the new pads' context: @to */
	u32 bs = p->block_size, b, n, i;
	u8 *pads = mmt_pads(m), *tmp = mmt_tmp(m);
	u64 *oc = mmt_ctr0(m), *nc = mmt_ctr1(m);
	struct mmt_dmac od, nd;
	int err = 0, bad = 0;

	t.crypto = to;
	mmt_dmac_init(m, &od);
	mmt_dmac_init(&t, &nd);
	for (b = b0; b <= b1; b += n) {
		u8 *op, *np;

		n = min_t(u32, b1 - b + 1, mmt_batch(p, 2));
		op = pads;
		np = pads + (size_t)n * (bs + MMT_AES_BLOCK);
		mmt_staged_ctrs(m, b, n, oc);
		for (i = 0; i < n; i++)
			nc[i] = new_ctr == MMT_CTR_STAGED ? oc[i] : new_ctr;
		err = mmt_gen_pads(m, gua, b, n, oc,
				   MMT_PADS_DATA | MMT_PADS_MAC, op, NULL, NULL);
		if (!err)
			err = mmt_gen_pads(&t, new_gua, b, n, nc,
					   MMT_PADS_DATA | MMT_PADS_MAC, np,
					   NULL, NULL);
		if (err)
			break;
		for (i = 0; i < n; i++) {
			u32 x = b + i;

			if (mmt_open_block(m, &od, x, tmp,
					   op + (size_t)i * bs,
					   op + (size_t)n * bs +
					   MMT_MAC_BYTES * i)) {
				mmt_report(m, gua, -1, x);
				bad = -EBADMSG;
				if (!keep_going)
					goto out;
				continue;
			}
			mmt_seal_batch(m, &nd, x, 1, tmp,
				       np + (size_t)i * bs,
				       np + (size_t)n * bs +
				       MMT_MAC_BYTES * i);
		}
	}
out:
	memzero_explicit(tmp, bs);
	return err ? err : bad;
}

/* ------------------------------------------------------------ checks */

/* Reads are allowed on VALID (incl. read-only copies) and SENDING MMTs. */
static int mmt_may_read(const struct mmt *m)
{
	if (m->root.state != MMT_VALID && m->root.state != MMT_SENDING)
		return -EPERM;
	return 0;
}

/*
 * Writes only on a VALID MMT the caller owns (not a read-only copy) and
 * whose GUA no one else may hold (not due for mmt_regua()).
 */
static int mmt_may_write(const struct mmt *m)
{
	if (m->root.state != MMT_VALID || m->root.read_only ||
	    m->root.regua_due)
		return -EPERM;
	return 0;
}

static int mmt_check_range(const struct mmt *m, u64 off, size_t len)
{
	if (off > m->p->data_bytes || len > m->p->data_bytes - off)
		return -EINVAL;
	return 0;
}

/*
 * mmt_write()'s checks before its pass 1, for it and mmt_write_check():
 * the state, the range and, for @len > 0, the root counter.
 */
static int mmt_write_checks(const struct mmt *m, u64 off, size_t len)
{
	int err;

	err = mmt_may_write(m);
	if (!err)
		err = mmt_check_range(m, off, len);
	if (err || !len)
		return err;
	/* The root counter is part of the sealing nonce: never wrap it. */
	if (m->root.root_counter >= MMT_ROOT_COUNTER_MAX)
		return -EOVERFLOW;
	return 0;
}

/* ------------------------------------------------------------ API */

int mmt_format_major(struct mmt *m, u64 gua, u64 major)
{
	const struct mmt_params *p = m->p;
	struct mmt_node_ctr *st = mmt_stage(m);
	u64 *ctr = mmt_ctr0(m);
	u8 *pads = mmt_pads(m);
	struct mmt_dmac d;
	u32 b, n, i;
	int l, err;

	if (gua > MMT_GUA_MASK || major > MMT_MAJOR_MAX)
		return -EINVAL;
	memset(st, 0, ((size_t)p->node_count + 1) * sizeof(*st));
	for (i = 0; i <= p->node_count; i++)
		st[i].major = major;
	mmt_dmac_init(m, &d);
	for (b = 0; b < p->blocks; b += n) {
		n = min_t(u32, p->blocks - b, mmt_batch(p, 1));
		mmt_staged_ctrs(m, b, n, ctr);
		err = mmt_gen_pads(m, gua, b, n, ctr,
				   MMT_PADS_DATA | MMT_PADS_MAC, pads, NULL,
				   NULL);
		if (err)
			return err;
		mmt_seal_batch(m, &d, b, n, NULL, pads,
			       pads + (size_t)n * p->block_size);
	}
	for (l = 0; l + 1 < p->levels; l++) {
		err = mmt_store_nodes(m, gua, l, 0, p->level_nodes[l] - 1);
		if (err)
			return err;
	}
	m->root.top = *mmt_st(m, p->levels - 1, 0);
	m->root.gua = gua;
	return 0;
}

int mmt_format(struct mmt *m, u64 gua)
{
	return mmt_format_major(m, gua, 0);
}

int mmt_verify_all(struct mmt *m)
{
	int err;

	err = mmt_load_path(m, m->root.gua, 0, m->p->blocks - 1);
	if (!err)
		err = mmt_verify_blocks(m, m->root.gua, 0, m->p->blocks - 1);
	return err;
}

int mmt_verify_top(struct mmt *m)
{
	const struct mmt_params *p = m->p;

	if (p->levels < 2)
		return 0;	/* no untrusted nodes */
	*mmt_st(m, p->levels - 1, 0) = m->root.top;
	return mmt_load_nodes(m, m->root.gua, p->levels - 2, 0,
			      p->level_nodes[p->levels - 2] - 1);
}

int mmt_block_counter(struct mmt *m, u32 block, u64 *ctr)
{
	int err;

	if (block >= m->p->blocks)
		return -EINVAL;
	err = mmt_load_path(m, m->root.gua, block, block);
	if (!err)
		*ctr = mmt_block_ctr(m, block);
	return err;
}

/*
 * The whole blocks of [@off, @off + @len) are [*w0, *w1] (none if *w0 >
 * *w1); the others of [b0, b1] (at most the first and the last) are
 * partial.
 */
static void mmt_whole(const struct mmt_params *p, u64 off, size_t len,
		      u32 *w0, u32 *w1)
{
	u64 end = (off + len) >> p->log_block_size;	/* first not whole */

	*w0 = (off + p->block_size - 1) >> p->log_block_size;
	*w1 = end ? end - 1 : 0;
	if (!end)
		*w0 = 1;	/* none */
}

int mmt_read(struct mmt *m, u64 off, void *buf, size_t len)
{
	const struct mmt_params *p = m->p;
	u32 bs = p->block_size, b0, b1, w0, w1, b, n, x, e;
	u64 gua = m->root.gua, *ctr = mmt_ctr0(m);
	u8 *pads = mmt_pads(m), *tmp = mmt_tmp(m), *out = buf;
	struct mmt_dmac d;
	int err;

	err = mmt_may_read(m);
	if (!err)
		err = mmt_check_range(m, off, len);
	if (err || !len)
		return err;
	b0 = off >> p->log_block_size;
	b1 = (off + len - 1) >> p->log_block_size;
	mmt_whole(p, off, len, &w0, &w1);
	err = mmt_load_path(m, gua, b0, b1);
	if (err)
		goto fail;
	mmt_dmac_init(m, &d);
	for (b = b0; b <= b1; b += n) {
		const u8 *mpads;
		u64 diff = 0;

		n = min_t(u32, b1 - b + 1, mmt_batch(p, 1));
		mpads = pads + (size_t)n * bs;
		mmt_staged_ctrs(m, b, n, ctr);
		if (b >= w0 && b + n - 1 <= w1) {
			/*
			 * whole blocks: one pass copies the ciphertext into
			 * @buf and hashes it, then the library decrypts it
			 * there (AES and XOR in one pass); wiped if it fails
			 */
			u8 *dst = out + (((u64)b << p->log_block_size) - off);

			err = mmt_gen_pads(m, gua, b, n, ctr, MMT_PADS_MAC,
					   pads, NULL, NULL);
			if (err)
				goto fail;
			diff = mmt_open_batch(m, &d, b, n, dst, NULL,
					      pads);
			err = mmt_gen_pads(m, gua, b, n, ctr, MMT_PADS_DATA,
					   pads, dst, dst);
			if (err)
				goto fail;
			if (mmt_diff_bad(diff)) {
				mmt_report(m, gua, -1, b);
				err = -EBADMSG;
				goto fail;
			}
			continue;
		}
		err = mmt_gen_pads(m, gua, b, n, ctr,
				   MMT_PADS_DATA | MMT_PADS_MAC, pads, NULL,
				   NULL);
		if (err)
			goto fail;
		/* decrypted before the verdict: wiped if it fails */
		for (x = b; x < b + n; x = e + 1) {
			u32 i = x - b;
			u64 start = (u64)x << p->log_block_size;

			if (x >= w0 && x <= w1) {	/* a run of whole blocks */
				e = min(w1, b + n - 1);
				diff |= mmt_open_batch(m, &d, x, e - x + 1,
						       out + (start - off),
						       pads + (size_t)i * bs,
						       mpads +
						       MMT_MAC_BYTES * i);
			} else {			/* partial, via tmp */
				u64 from = max(start, off);
				u64 to = min(start + bs, off + len);

				e = x;
				diff |= mmt_open_batch(m, &d, x, 1, tmp,
						       pads + (size_t)i * bs,
						       mpads +
						       MMT_MAC_BYTES * i);
				memcpy(out + (from - off), tmp + (from - start),
				       to - from);
			}
		}
		if (mmt_diff_bad(diff)) {
			mmt_report(m, gua, -1, b);
			err = -EBADMSG;
			goto fail;
		}
	}
	err = 0;
fail:
	/* partial blocks went through tmp */
	if ((off | len) & (bs - 1))
		memzero_explicit(tmp, bs);
	if (err)
		memset(buf, 0, len);
	return err;
}

/*
 * Does node @i of level @l overflow in this write, i.e. does one of its
 * children in [clo, chi] (the touched range one level down, or blocks) have
 * its minor at MMT_MINOR_MAX?
 */
static bool mmt_overflows(const struct mmt *m, unsigned int l, u32 i,
			  u32 clo, u32 chi)
{
	const struct mmt_node_ctr *c = mmt_st(m, l, i);
	unsigned int a = m->p->log_arity[l];
	u32 first = max(clo, i << a), last = min(chi, ((i + 1) << a) - 1), j;
	u32 mask = (1u << a) - 1;
	u64 hit = 0;

	BUILD_BUG_ON(MMT_MINOR_MAX != 0x7f);
	for (j = first; j <= last && (j & 7); j++)
		if (c->minor[j & mask] == MMT_MINOR_MAX)
			return true;
	/*
	 * Eight minors at a time: is any byte MMT_MINOR_MAX?  The tests of a
	 * whole node are ORed and tested once (a whole write asks this of
	 * every leaf, and an overflow is rare).
	 */
	for (; j <= last && last - j >= 7; j += 8) {
		u64 v = get_unaligned_le64(c->minor + (j & mask)) ^
			0x7f7f7f7f7f7f7f7full;

		hit |= (v - 0x0101010101010101ull) & ~v &
		       0x8080808080808080ull;
	}
	for (; j <= last; j++)
		if (c->minor[j & mask] == MMT_MINOR_MAX)
			return true;
	return hit;
}

/* Touched index range of level @l (l = -1: blocks) for blocks [b0, b1]. */
static void mmt_touched(const struct mmt_params *p, int l, u32 b0, u32 b1,
			u32 *lo, u32 *hi)
{
	unsigned int s = l < 0 ? 0 : mmt_cover_shift(p, l);

	*lo = b0 >> s;
	*hi = b1 >> s;
}

/* Verify and decrypt block @b (staged counter) into trusted @dst. */
static int mmt_open_one(struct mmt *m, u64 gua, u32 b, u8 *dst)
{
	u8 *pads = mmt_pads(m);
	u64 *ctr = mmt_ctr0(m);
	struct mmt_dmac d;
	int err;

	mmt_dmac_init(m, &d);
	mmt_staged_ctrs(m, b, 1, ctr);
	err = mmt_gen_pads(m, gua, b, 1, ctr, MMT_PADS_DATA | MMT_PADS_MAC,
			   pads, NULL, NULL);
	if (!err)
		err = mmt_open_block(m, &d, b, dst, pads,
				     pads + m->p->block_size);
	if (err == -EBADMSG)
		mmt_report(m, gua, -1, b);
	return err;
}

/*
 * Write pass 1: load and verify everything the write will read or re-MAC,
 * check counter headroom.  Fills @ll/@lh (the node ranges to store back per
 * level) and the head/tail plaintext buffers, and *@leaf_ovf: whether a
 * touched leaf overflows (pass 2 re-encrypts the rest of such leaves).
 * Changes nothing outside m->scratch.
 */
static int mmt_write_prepare(struct mmt *m, u64 off, size_t len, u32 b0,
			     u32 b1, u32 *ll, u32 *lh, bool *leaf_ovf)
{
	const struct mmt_params *p = m->p;
	unsigned int top = p->levels - 1;
	u64 gua = m->root.gua;
	u32 lo, hi, clo, chi, i, bs = p->block_size;
	int l, err;

	*mmt_st(m, top, 0) = m->root.top;
	for (l = top; l >= 0; l--) {
		bool any = false;

		/* Nodes of level l are in staging: check their headroom. */
		mmt_touched(p, l, b0, b1, &lo, &hi);
		mmt_touched(p, l - 1, b0, b1, &clo, &chi);
		for (i = lo; i <= hi; i++) {
			if (!mmt_overflows(m, l, i, clo, chi))
				continue;
			any = true;
			if (mmt_st(m, l, i)->major >= MMT_MAJOR_MAX)
				return -EOVERFLOW;
		}
		if (l == 0) {
			*leaf_ovf = any;
			break;
		}
		/* An overflowing parent re-MACs all its children. */
		if (any) {
			clo = clo >> p->log_arity[l] << p->log_arity[l];
			chi = ((chi >> p->log_arity[l]) + 1) <<
			      p->log_arity[l];
			chi--;
		}
		ll[l - 1] = clo;
		lh[l - 1] = chi;
		err = mmt_load_nodes(m, gua, l - 1, clo, chi);
		if (err)
			return err;
	}

	/* Old data an overflowing leaf re-encrypts must be authentic. */
	mmt_touched(p, 0, b0, b1, &lo, &hi);
	for (i = lo; *leaf_ovf && i <= hi; i++) {
		u32 first = i << p->log_arity[0];
		u32 last = first + (1u << p->log_arity[0]) - 1;

		if (!mmt_overflows(m, 0, i, b0, b1))
			continue;
		if (first < b0) {
			err = mmt_verify_blocks(m, gua, first, b0 - 1);
			if (err)
				return err;
		}
		if (last > b1) {
			err = mmt_verify_blocks(m, gua, b1 + 1, last);
			if (err)
				return err;
		}
	}

	/* Partial first and last blocks: verified old plaintext + new bytes */
	if (off & (bs - 1) || (b0 == b1 && len < bs)) {
		err = mmt_open_one(m, gua, b0, mmt_head(m));
		if (err)
			return err;
	}
	if (b1 != b0 && (off + len) & (bs - 1))
		return mmt_open_one(m, gua, b1, mmt_tailbuf(m));
	return 0;
}

/*
 * Re-encrypt the blocks of overflowing leaf @leaf that the write [b0, b1]
 * does not touch, from their staged counters to (major + 1) << 7.
 */
static int mmt_recrypt_leaf(struct mmt *m, u64 gua, u32 leaf, u32 b0,
			    u32 b1)
{
	unsigned int a = m->p->log_arity[0];
	u32 first = leaf << a, last = first + (1u << a) - 1;
	u64 nc = (mmt_st(m, 0, leaf)->major + 1) << MMT_MINOR_BITS;
	int err = 0, r;

	if (first < b0)
		err = mmt_recrypt_blocks(m, m->crypto, gua, gua, nc, first,
					 b0 - 1, true);
	if (err && err != -EBADMSG)
		return err;
	if (last > b1) {
		r = mmt_recrypt_blocks(m, m->crypto, gua, gua, nc, b1 + 1,
				       last, true);
		if (r)
			err = r;
	}
	return err;
}

/*
 * New counters of node @i of level @l, whose children [clo, chi] (one
 * level down, or blocks) are touched: on an overflow major + 1 and all
 * minors 0, else each touched child's minor + 1.  @c is updated in place.
 */
static void mmt_bump_node(const struct mmt *m, unsigned int l, u32 i,
			  u32 clo, u32 chi, struct mmt_node_ctr *c)
{
	unsigned int a = m->p->log_arity[l];
	u32 mask = (1u << a) - 1, j, last;

	if (mmt_overflows(m, l, i, clo, chi)) {
		c->major++;
		memset(c->minor, 0, sizeof(c->minor));
		return;
	}
	last = min(chi, ((i + 1) << a) - 1);
	/*
	 * No touched minor is at MMT_MINOR_MAX, so adding one to each of
	 * eight in one word carries out of none of them.
	 */
	for (j = max(clo, i << a); j <= last; ) {
		u32 k = j & mask;

		if (!(k & 7) && last - j >= 7) {
			put_unaligned_le64(get_unaligned_le64(c->minor + k) +
					   0x0101010101010101ull,
					   c->minor + k);
			j += 8;
			continue;
		}
		c->minor[k]++;
		j++;
	}
}

/* Bump the staged counters of every touched node, bottom-up. */
static void mmt_bump_counters(struct mmt *m, u32 b0, u32 b1)
{
	const struct mmt_params *p = m->p;
	unsigned int l;
	u32 lo, hi, clo, chi, i;

	for (l = 0; l < p->levels; l++) {
		mmt_touched(p, l, b0, b1, &lo, &hi);
		mmt_touched(p, (int)l - 1, b0, b1, &clo, &chi);
		for (i = lo; i <= hi; i++)
			mmt_bump_node(m, l, i, clo, chi, mmt_st(m, l, i));
	}
}

int mmt_write(struct mmt *m, u64 off, const void *buf, size_t len)
{
	const struct mmt_params *p = m->p;
	u32 ll[MMT_MAX_LEVELS], lh[MMT_MAX_LEVELS];
	u32 bs = p->block_size, b0, b1, w0, w1, lo, hi, b, n, i;
	struct mmt_node_ctr top;
	u64 gua = m->root.gua, *ctr = mmt_ctr0(m);
	const u8 *in = buf;
	u8 *pads = mmt_pads(m);
	struct mmt_dmac d;
	int l, err, bad = 0;
	bool leaf_ovf = true;

	err = mmt_write_checks(m, off, len);
	if (err || !len)
		return err;
	b0 = off >> p->log_block_size;
	b1 = (off + len - 1) >> p->log_block_size;

	/* Pass 1: nothing outside m->scratch changes. */
	err = mmt_write_prepare(m, off, len, b0, b1, ll, lh, &leaf_ovf);
	if (err)
		goto out;
	if (off & (bs - 1) || (b0 == b1 && len < bs)) {
		u32 o = off & (bs - 1);

		memcpy(mmt_head(m) + o, in, min_t(size_t, len, bs - o));
	}
	if (b1 != b0 && (off + len) & (bs - 1))
		memcpy(mmt_tailbuf(m), in + len - ((off + len) & (bs - 1)),
		       (off + len) & (bs - 1));

	/*
	 * Pass 2: commit.  Only a crypto library error can stop it (requests
	 * are preallocated and lengths valid: none is expected).  A block of
	 * an overflowing leaf changed in untrusted memory since pass 1 is not
	 * converted (it fails verification from now on, until overwritten),
	 * the rest of the write is committed all the same, so that the new
	 * counters are never used again, and -EBADMSG is returned.
	 */
	/*
	 * The trusted counters move first: if this pass stops half-way, the
	 * pads it used are never used again (a retry gets new counters, or
	 * the MMT fails verification: it fails closed).
	 */
	top = *mmt_st(m, p->levels - 1, 0);
	mmt_touched(p, (int)p->levels - 2, b0, b1, &lo, &hi);
	mmt_bump_node(m, p->levels - 1, 0, lo, hi, &top);
	m->root.top = top;
	m->root.root_counter++;

	mmt_touched(p, 0, b0, b1, &lo, &hi);
	for (i = lo; leaf_ovf && i <= hi; i++) {
		int r;

		if (!mmt_overflows(m, 0, i, b0, b1))
			continue;
		r = mmt_recrypt_leaf(m, gua, i, b0, b1);
		if (r == -EBADMSG) {
			bad = r;
		} else if (r) {
			err = r;
			goto out;
		}
	}
	mmt_bump_counters(m, b0, b1);

	mmt_dmac_init(m, &d);
	mmt_whole(p, off, len, &w0, &w1);
	for (b = b0; b <= b1; b += n) {
		const u8 *mpads, *pt;
		u32 x, e;

		n = min_t(u32, b1 - b + 1, mmt_batch(p, 1));
		mpads = pads + (size_t)n * bs;
		mmt_staged_ctrs(m, b, n, ctr);
		if (b >= w0 && b + n - 1 <= w1) {
			/*
			 * whole blocks: the library makes the ciphertext
			 * in scratch (AES and XOR in one pass), then one
			 * pass copies it out and hashes it
			 */
			pt = in + (((u64)b << p->log_block_size) - off);
			err = mmt_gen_pads(m, gua, b, n, ctr,
					   MMT_PADS_DATA | MMT_PADS_MAC, pads,
					   pt, pads);
			if (err)
				goto out;
			mmt_seal_batch(m, &d, b, n, NULL, pads, mpads);
			continue;
		}
		err = mmt_gen_pads(m, gua, b, n, ctr,
				   MMT_PADS_DATA | MMT_PADS_MAC, pads, NULL,
				   NULL);
		if (err)
			goto out;
		for (x = b; x < b + n; x = e + 1) {
			u32 i = x - b;

			if (x >= w0 && x <= w1) {	/* a run of whole blocks */
				e = min(w1, b + n - 1);
				pt = in + (((u64)x << p->log_block_size) - off);
			} else {	/* partial: merged in pass 1 */
				e = x;
				pt = x == b0 ? mmt_head(m) : mmt_tailbuf(m);
			}
			mmt_seal_batch(m, &d, x, e - x + 1, pt,
				       pads + (size_t)i * bs,
				       mpads + MMT_MAC_BYTES * i);
		}
	}
	for (l = 0; l + 1 < p->levels; l++) {
		err = mmt_store_nodes(m, gua, l, ll[l], lh[l]);
		if (err)
			goto out;
	}
	err = bad;
out:
	/* partial blocks: old plaintext in the head and tail buffers */
	if ((off | len) & (bs - 1))
		memzero_explicit(mmt_head(m), 2 * (size_t)bs);
	return err;
}

int mmt_write_check(struct mmt *m, u64 off, size_t len)
{
	const struct mmt_params *p = m->p;
	u32 ll[MMT_MAX_LEVELS], lh[MMT_MAX_LEVELS];
	bool leaf_ovf;
	int err;

	err = mmt_write_checks(m, off, len);
	if (err || !len)
		return err;
	err = mmt_write_prepare(m, off, len, off >> p->log_block_size,
				(off + len - 1) >> p->log_block_size, ll, lh,
				&leaf_ovf);
	/* partial blocks: old plaintext in the head and tail buffers */
	if ((off | len) & (p->block_size - 1))
		memzero_explicit(mmt_head(m), 2 * (size_t)p->block_size);
	return err;
}

int mmt_regua(struct mmt *m, struct mmt_crypto *to, u64 new_gua)
{
	const struct mmt_params *p = m->p;
	struct mmt t = *m;
	int l, err;

	if (!to)
		to = m->crypto;
	if (new_gua > MMT_GUA_MASK ||
	    (to == m->crypto && new_gua == m->root.gua))
		return -EINVAL;
	err = mmt_verify_all(m);
	if (err)
		return err;
	err = mmt_recrypt_blocks(m, to, m->root.gua, new_gua, MMT_CTR_STAGED,
				 0, p->blocks - 1, false);
	t.crypto = to;
	for (l = 0; !err && l + 1 < p->levels; l++)
		err = mmt_store_nodes(&t, new_gua, l, 0, p->level_nodes[l] - 1);
	if (err)
		return err;
	m->root.gua = new_gua;
	m->crypto = to;
	m->root.regua_due = false;
	return 0;
}
