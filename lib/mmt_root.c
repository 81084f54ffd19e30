// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_root.c - the trusted MMT root: its state machine and its sealed form.
 *
 * Every state change of an MMT goes through mmt_root_transition(), which
 * checks it against one table (DESIGN.md section 1; docs/ENGINE.md "MMT
 * states").  The sealed root is the root serialized little-endian and
 * protected with AES-128-GCM under the sealing subkey, with the closure
 * header as associated data, so that it can cross an untrusted network
 * (paper section IV-B, "MMT closure"; DESIGN.md section 3).
 *
 * Locking: none; the caller serializes access to the root (see mmt_lib.h).
 */
#include "mmt_lib.h"

/*
 * mmt_transitions[from][to] - the only allowed state changes.  Events:
 *	INVALID -> VALID	create / format
 *	INVALID -> WAITING	post a receive buffer
 *	VALID   -> SENDING	delegation starts (read-only until it completes)
 *	SENDING -> VALID	copy-mode delegation done, or rollback on failure
 *	SENDING -> INVALID	transfer-mode delegation done (acked)
 *	WAITING -> VALID	closure accepted
 *	WAITING -> INVALID	receive cancelled
 *	VALID   -> INVALID	invalidate / reclaim
 *	WAITING -> LANDING	first closure of a migration accepted
 *	LANDING -> VALID	migration committed (docs/MIGRATION.md)
 *	LANDING -> WAITING	migration aborted: what landed is dropped
 *	LANDING -> INVALID	receive PMO invalidated / freed
 * Everything else, including a transition to the same state, is refused.
 */
static const bool mmt_transitions[MMT_NR_STATES][MMT_NR_STATES] = {
	[MMT_INVALID] = { [MMT_VALID] = true, [MMT_WAITING] = true },
	[MMT_VALID] = { [MMT_SENDING] = true, [MMT_INVALID] = true },
	[MMT_SENDING] = { [MMT_VALID] = true, [MMT_INVALID] = true },
	[MMT_WAITING] = { [MMT_VALID] = true, [MMT_INVALID] = true,
			  [MMT_LANDING] = true },
	[MMT_LANDING] = { [MMT_VALID] = true, [MMT_WAITING] = true,
			  [MMT_INVALID] = true },
};

static const char * const mmt_state_names[MMT_NR_STATES] = {
	[MMT_INVALID] = "INVALID",
	[MMT_VALID] = "VALID",
	[MMT_SENDING] = "SENDING",
	[MMT_WAITING] = "WAITING",
	[MMT_LANDING] = "LANDING",
};

/**
 * mmt_root_transition() - change the state of an MMT root
 * @r: root; @r->state must be a valid enum mmt_state
 * @to: new state
 *
 * The single place where an MMT changes state (DESIGN.md section 1), checked
 * against the table above.  Entering INVALID, WAITING or LANDING also clears
 * @r->read_only (the MMT no longer holds a received copy) and
 * @r->regua_due (nothing is left to re-encrypt); the caller sets
 * @r->read_only after WAITING -> VALID for a copy-mode closure.
 *
 * Context: any; the caller serializes access to @r.
 * Return: 0, or -EINVAL if @to or @r->state is not a state or the table
 * does not allow the change (same-state included); @r is then unchanged.
 */
int mmt_root_transition(struct mmt_root *r, enum mmt_state to)
{
	unsigned int from = r->state;

	if (from >= MMT_NR_STATES || (unsigned int)to >= MMT_NR_STATES)
		return -EINVAL;
	if (!mmt_transitions[from][to])
		return -EINVAL;
	r->state = to;
	if (to == MMT_INVALID || to == MMT_WAITING || to == MMT_LANDING) {
		r->read_only = false;
		r->regua_due = false;
	}
	return 0;
}

/**
 * mmt_state_name() - printable name of a state
 * @s: state
 *
 * Context: any.
 * Return: "INVALID", "VALID", "SENDING", "WAITING", "LANDING", or "UNKNOWN"
 * for a value that is not a state.
 */
const char *mmt_state_name(enum mmt_state s)
{
	if ((unsigned int)s >= MMT_NR_STATES)
		return "UNKNOWN";
	return mmt_state_names[s];
}

/*
 * Sealed root, MMT_SEALED_ROOT_BYTES (128) bytes, all integers little-endian
 * (docs/ENGINE.md "Sealed root"):
 *	0	nonce (12): 96-bit LE integer GUA << 38 | root counter, in clear
 *	12	ciphertext of the 100-byte root plaintext below
 *	112	GCM tag (16)
 * Root plaintext:
 *	0	gua		u64 (< 2^58; equal to the nonce's)
 *	8	root_counter	u64 (1..2^38 - 1; equal to the nonce's)
 *	16	flags		u32, must be 0 (none defined in v1)
 *	20	top_minors	u32, minors in the top node = its arity
 *	24	top.major	u64 (< 2^33)
 *	32	top.minor[64]	u8 each (<= 127); entries >= top_minors are 0
 *	96	reserved	4 bytes, 0
 */
#define MMT_SR_NONCE		0
#define MMT_SR_CT		MMT_ROOT_NONCE_BYTES
#define MMT_ROOT_PT_BYTES	100
#define MMT_SR_TAG		(MMT_SR_CT + MMT_ROOT_PT_BYTES)
#define MMT_SR_END		(MMT_SR_TAG + MMT_GCM_TAG_BYTES)

#define MMT_PT_GUA		0
#define MMT_PT_COUNTER		8
#define MMT_PT_FLAGS		16
#define MMT_PT_TOP_MINORS	20
#define MMT_PT_MAJOR		24
#define MMT_PT_MINOR		32
#define MMT_PT_RESERVED		(MMT_PT_MINOR + (1u << MMT_MAX_LOG_ARITY))

/**
 * mmt_root_nonce() - the AES-GCM nonce of a sealed root
 * @gua: global unique address, < 2^MMT_GUA_BITS
 * @root_counter: root counter, <= MMT_ROOT_COUNTER_MAX
 * @nonce: (out) MMT_ROOT_NONCE_BYTES bytes: the 96-bit integer
 *	@gua << 38 | @root_counter, little-endian
 *
 * Distinct (@gua, @root_counter) pairs in range give distinct nonces; bits
 * out of range are dropped, so callers check the ranges first.
 *
 * Context: any.
 */
void mmt_root_nonce(u64 gua, u64 root_counter, u8 *nonce)
{
	u64 lo = (root_counter & MMT_ROOT_COUNTER_MAX) |
		 (gua << MMT_ROOT_COUNTER_BITS);

	put_unaligned_le64(lo, nonce);
	put_unaligned_le32((u32)((gua & MMT_GUA_MASK) >>
				 (64 - MMT_ROOT_COUNTER_BITS)), nonce + 8);
}

static void mmt_root_nonce_decode(const u8 *nonce, u64 *gua, u64 *ctr)
{
	u64 lo = get_unaligned_le64(nonce);
	u64 hi = get_unaligned_le32(nonce + 8);

	*ctr = lo & MMT_ROOT_COUNTER_MAX;
	*gua = (lo >> MMT_ROOT_COUNTER_BITS) |
	       (hi << (64 - MMT_ROOT_COUNTER_BITS));
}

static bool mmt_all_zero(const u8 *b, size_t n)
{
	u8 acc = 0;

	while (n--)
		acc |= *b++;
	return !acc;
}

static unsigned int mmt_top_minors(const struct mmt_params *p)
{
	return 1u << p->log_arity[p->levels - 1];
}

/**
 * mmt_root_seal() - bump the root counter and seal the root
 * @r: root to seal; @r->root_counter is incremented first
 * @p: geometry of the MMT (gives the top node's arity)
 * @c: the MMT's crypto (MMT_SUBKEY_SEAL is used)
 * @ad: associated data, the encoded closure header (docs/ENGINE.md)
 * @ad_len: bytes of @ad
 * @out: (out) MMT_SEALED_ROOT_BYTES bytes of sealed root
 *
 * AES-128-GCM (NIST SP 800-38D) with a 96-bit nonce built from the GUA and
 * the bumped root counter (mmt_root_nonce()), so no nonce repeats under a
 * key while each GUA has a single writer.  The counter stays bumped even if
 * the cipher then fails: a nonce that may have been used is never reused.
 *
 * Context: may sleep (kernel crypto API).
 * Return: 0; -ENOKEY if @c is NULL; -EINVAL if @r->gua does not fit in 58
 * bits or a top counter is out of range; -EOVERFLOW if the root counter is
 * already MMT_ROOT_COUNTER_MAX (nothing changed); or the crypto error.
 */
int mmt_root_seal(struct mmt_root *r, const struct mmt_params *p,
		  struct mmt_crypto *c, const u8 *ad, size_t ad_len, u8 *out)
{
	unsigned int i, minors = mmt_top_minors(p);
	u8 pt[MMT_ROOT_PT_BYTES];
	u8 nonce[MMT_ROOT_NONCE_BYTES];
	int ret;

	BUILD_BUG_ON(MMT_SR_END > MMT_SEALED_ROOT_BYTES);
	BUILD_BUG_ON(MMT_PT_RESERVED + 4 != MMT_ROOT_PT_BYTES);

	if (!c)
		return -ENOKEY;
	if (r->gua & ~MMT_GUA_MASK || r->top.major > MMT_MAJOR_MAX)
		return -EINVAL;
	for (i = 0; i < minors; i++)
		if (r->top.minor[i] > MMT_MINOR_MAX)
			return -EINVAL;
	if (r->root_counter >= MMT_ROOT_COUNTER_MAX)
		return -EOVERFLOW;
	r->root_counter++;

	memset(pt, 0, sizeof(pt));
	put_unaligned_le64(r->gua, pt + MMT_PT_GUA);
	put_unaligned_le64(r->root_counter, pt + MMT_PT_COUNTER);
	put_unaligned_le32(0, pt + MMT_PT_FLAGS);
	put_unaligned_le32(minors, pt + MMT_PT_TOP_MINORS);
	put_unaligned_le64(r->top.major, pt + MMT_PT_MAJOR);
	memcpy(pt + MMT_PT_MINOR, r->top.minor, minors);

	mmt_root_nonce(r->gua, r->root_counter, nonce);
	memset(out, 0, MMT_SEALED_ROOT_BYTES);
	memcpy(out + MMT_SR_NONCE, nonce, sizeof(nonce));
	ret = mmt_crypto_seal(c, nonce, ad, ad_len, pt, sizeof(pt),
			      out + MMT_SR_CT);
	memzero_explicit(pt, sizeof(pt));
	return ret;
}

/**
 * mmt_root_unseal() - authenticate and decode a sealed root
 * @p: geometry the root must match (the top node's arity)
 * @c: the MMT's crypto (MMT_SUBKEY_SEAL is used)
 * @ad: associated data, the encoded closure header as received
 * @ad_len: bytes of @ad
 * @in: MMT_SEALED_ROOT_BYTES bytes of sealed root; read once into a private
 *	copy, so it may live in untrusted memory
 * @r: (out) gua, root_counter and top; state MMT_INVALID, read_only false.
 *	Written only on success.
 *
 * Context: may sleep (kernel crypto API).
 * Return: 0; -ENOKEY if @c is NULL; -ENOMEM if the cipher could not get
 * memory; -EBADMSG if the tag does not verify (any change to the nonce,
 * ciphertext, tag or @ad; any other cipher error is reported the same way)
 * or the authenticated plaintext does not decode (nonce and plaintext
 * disagree, counters out of range, top arity not @p's, reserved bits set).
 */
int mmt_root_unseal(const struct mmt_params *p, struct mmt_crypto *c,
		    const u8 *ad, size_t ad_len, const u8 *in,
		    struct mmt_root *r)
{
	unsigned int i, minors = mmt_top_minors(p);
	u8 sr[MMT_SEALED_ROOT_BYTES];
	u8 pt[MMT_ROOT_PT_BYTES];
	struct mmt_root dec;
	u64 gua, ctr;
	int ret;

	if (!c)
		return -ENOKEY;
	memcpy(sr, in, sizeof(sr));
	ret = mmt_crypto_unseal(c, sr + MMT_SR_NONCE, ad, ad_len,
				sr + MMT_SR_CT, MMT_ROOT_PT_BYTES, pt);
	if (ret) {
		if (ret != -ENOMEM)
			ret = -EBADMSG;
		goto out;
	}

	ret = -EBADMSG;
	mmt_root_nonce_decode(sr + MMT_SR_NONCE, &gua, &ctr);
	memset(&dec, 0, sizeof(dec));
	dec.state = MMT_INVALID;
	dec.gua = get_unaligned_le64(pt + MMT_PT_GUA);
	dec.root_counter = get_unaligned_le64(pt + MMT_PT_COUNTER);
	dec.top.major = get_unaligned_le64(pt + MMT_PT_MAJOR);
	if (dec.gua != gua || dec.root_counter != ctr || !ctr)
		goto out;
	if (get_unaligned_le32(pt + MMT_PT_FLAGS) ||
	    get_unaligned_le32(pt + MMT_PT_TOP_MINORS) != minors ||
	    dec.top.major > MMT_MAJOR_MAX ||
	    !mmt_all_zero(pt + MMT_PT_MINOR + minors,
			  MMT_ROOT_PT_BYTES - MMT_PT_MINOR - minors))
		goto out;
	for (i = 0; i < minors; i++) {
		dec.top.minor[i] = pt[MMT_PT_MINOR + i];
		if (dec.top.minor[i] > MMT_MINOR_MAX)
			goto out;
	}
	*r = dec;
	ret = 0;
out:
	memzero_explicit(pt, sizeof(pt));
	return ret;
}
