// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_closure.c - MMT closure format v4: build on the sender, parse and
 * check on the receiver (paper section IV-B; DESIGN.md section 5, steps 3-5).
 *
 * A closure is everything another node needs to decrypt and verify one MMT:
 *
 *	header (96) | sealed root (128) | tree nodes | data MACs | ciphertext
 *
 * all little-endian; the byte layout is in docs/ENGINE.md "Closure format
 * v3".  The header is the AEAD associated data of the sealed root, so every
 * header byte is authenticated.  Everything in a received closure is
 * untrusted and may change while it is being read (it sits in memory the
 * NIC writes): the receiver copies what it checks and installs only what it
 * checked, and a rejected closure changes nothing.  The receive rules are
 * written once (mmt_closure_accept()) and have two entry points: a closure
 * in a buffer (mmt_closure_receive()) and one whose sections the transport
 * wrote straight into the receive MMT (mmt_closure_receive_inplace(), the
 * RDMA transport's).
 *
 * Locking: none; the caller serializes access to the MMT and to the
 * connection's struct mmt_rx_rules (see mmt_lib.h).
 */
#include "mmt_lib.h"

/* Header offsets (docs/ENGINE.md "Closure format v4") */
#define MMT_H_MAGIC		0	/* u32 "MMTC" */
#define MMT_H_VERSION		4	/* u16, MMT_CLOSURE_VERSION */
#define MMT_H_HDR_LEN		6	/* u16, 96 */
#define MMT_H_FLAGS		8	/* u32, MMT_CLOSURE_F_* */
#define MMT_H_SENDER		12	/* u16 */
#define MMT_H_RECEIVER		14	/* u16 */
#define MMT_H_CONN_ID		16	/* u64 */
#define MMT_H_SEQ		24	/* u64 */
#define MMT_H_LEVELS		32	/* u8 */
#define MMT_H_LOG_BLOCK		33	/* u8 */
#define MMT_H_LOG_ARITY		34	/* u8[4], leaf level first */
#define MMT_H_SUITE		38	/* u8, MMT_CLOSURE_SUITE */
#define MMT_H_RESERVED1		39	/* 1 byte, 0 */
#define MMT_H_SEALED_LEN	40	/* u32 */
#define MMT_H_NODES_LEN		44	/* u32 */
#define MMT_H_MACS_LEN		48	/* u32 */
#define MMT_H_DATA_LEN		52	/* u32 */
#define MMT_H_GEN		56	/* u64, transfer generation */
#define MMT_H_KSALT		64	/* u8[16], keying salt */
#define MMT_H_RX_NONCE		80	/* u8[16], the receive's nonce */

#define MMT_CLOSURE_F_ALL	MMT_CLOSURE_F_COPY

static bool mmt_zero(const u8 *b, size_t n)
{
	u8 acc = 0;

	while (n--)
		acc |= *b++;
	return !acc;
}

/* Section lengths of @p, or false if one does not fit the u32 fields. */
static bool mmt_closure_lens(const struct mmt_params *p, u32 *nodes,
			     u32 *macs, u32 *data)
{
	const u64 lim = 0xffffffffull;

	if (p->nodes_bytes > lim || p->macs_bytes > lim ||
	    p->data_bytes > lim)
		return false;
	*nodes = (u32)p->nodes_bytes;
	*macs = (u32)p->macs_bytes;
	*data = (u32)p->data_bytes;
	return true;
}

/**
 * mmt_closure_bytes() - size of a closure of geometry @p
 * @p: geometry (from mmt_params_init())
 *
 * Context: any.
 * Return: MMT_CLOSURE_HDR_BYTES + MMT_SEALED_ROOT_BYTES + @p->nodes_bytes +
 * @p->macs_bytes + @p->data_bytes, or 0 if a section does not fit the
 * 32-bit length fields of format v2 (4 GiB of data: 2^20 blocks of 4 KiB).
 */
size_t mmt_closure_bytes(const struct mmt_params *p)
{
	u32 nodes, macs, data;

	if (!mmt_closure_lens(p, &nodes, &macs, &data))
		return 0;
	return (size_t)MMT_CLOSURE_HDR_BYTES + MMT_SEALED_ROOT_BYTES +
	       nodes + macs + data;
}

static void mmt_closure_encode(const struct mmt_closure_hdr *h, u8 *b)
{
	unsigned int i;

	memset(b, 0, MMT_CLOSURE_HDR_BYTES);
	put_unaligned_le32(MMT_CLOSURE_MAGIC, b + MMT_H_MAGIC);
	put_unaligned_le16(h->version, b + MMT_H_VERSION);
	put_unaligned_le16(MMT_CLOSURE_HDR_BYTES, b + MMT_H_HDR_LEN);
	put_unaligned_le32(h->flags, b + MMT_H_FLAGS);
	put_unaligned_le16(h->sender_node, b + MMT_H_SENDER);
	put_unaligned_le16(h->receiver_node, b + MMT_H_RECEIVER);
	put_unaligned_le64(h->conn_id, b + MMT_H_CONN_ID);
	put_unaligned_le64(h->seq, b + MMT_H_SEQ);
	b[MMT_H_LEVELS] = h->levels;
	b[MMT_H_LOG_BLOCK] = h->log_block_size;
	for (i = 0; i < MMT_MAX_LEVELS; i++)
		b[MMT_H_LOG_ARITY + i] = h->log_arity[i];
	b[MMT_H_SUITE] = h->suite;
	put_unaligned_le32(h->sealed_len, b + MMT_H_SEALED_LEN);
	put_unaligned_le32(h->nodes_len, b + MMT_H_NODES_LEN);
	put_unaligned_le32(h->macs_len, b + MMT_H_MACS_LEN);
	put_unaligned_le32(h->data_len, b + MMT_H_DATA_LEN);
	put_unaligned_le64(h->gen, b + MMT_H_GEN);
	memcpy(b + MMT_H_KSALT, h->ksalt, MMT_KSALT_BYTES);
	memcpy(b + MMT_H_RX_NONCE, h->rx_nonce, MMT_RX_NONCE_BYTES);
}

/*
 * Decode and check the header in @b (96 bytes, a private copy or the
 * caller's buffer) for a closure of @len bytes.  Every field is read once
 * into @h before it is checked.  On success @p holds the geometry.
 */
static int mmt_closure_decode(const u8 *b, size_t len,
			      struct mmt_closure_hdr *h, struct mmt_params *p)
{
	unsigned int i;
	u64 total;
	int ret;

	if (len < MMT_CLOSURE_HDR_BYTES)
		return -EMSGSIZE;
	memset(h, 0, sizeof(*h));
	if (get_unaligned_le32(b + MMT_H_MAGIC) != MMT_CLOSURE_MAGIC)
		return -EPROTO;
	h->version = get_unaligned_le16(b + MMT_H_VERSION);
	if (h->version != MMT_CLOSURE_VERSION)
		return -EPROTONOSUPPORT;
	if (get_unaligned_le16(b + MMT_H_HDR_LEN) != MMT_CLOSURE_HDR_BYTES)
		return -EMSGSIZE;
	h->suite = b[MMT_H_SUITE];
	if (h->suite != MMT_CLOSURE_SUITE)
		return -EPROTONOSUPPORT;
	h->flags = get_unaligned_le32(b + MMT_H_FLAGS);
	if (h->flags & ~MMT_CLOSURE_F_ALL)
		return -EINVAL;
	if (!mmt_zero(b + MMT_H_RESERVED1, MMT_H_SEALED_LEN - MMT_H_RESERVED1))
		return -EINVAL;
	h->sender_node = get_unaligned_le16(b + MMT_H_SENDER);
	h->receiver_node = get_unaligned_le16(b + MMT_H_RECEIVER);
	h->conn_id = get_unaligned_le64(b + MMT_H_CONN_ID);
	h->seq = get_unaligned_le64(b + MMT_H_SEQ);
	h->levels = b[MMT_H_LEVELS];
	h->log_block_size = b[MMT_H_LOG_BLOCK];
	for (i = 0; i < MMT_MAX_LEVELS; i++)
		h->log_arity[i] = b[MMT_H_LOG_ARITY + i];
	h->sealed_len = get_unaligned_le32(b + MMT_H_SEALED_LEN);
	h->nodes_len = get_unaligned_le32(b + MMT_H_NODES_LEN);
	h->macs_len = get_unaligned_le32(b + MMT_H_MACS_LEN);
	h->data_len = get_unaligned_le32(b + MMT_H_DATA_LEN);
	h->gen = get_unaligned_le64(b + MMT_H_GEN);
	memcpy(h->ksalt, b + MMT_H_KSALT, MMT_KSALT_BYTES);
	memcpy(h->rx_nonce, b + MMT_H_RX_NONCE, MMT_RX_NONCE_BYTES);

	/* Geometry: arities of levels that do not exist must be 0. */
	if (h->levels < 1 || h->levels > MMT_MAX_LEVELS)
		return -EMEDIUMTYPE;
	for (i = h->levels; i < MMT_MAX_LEVELS; i++)
		if (h->log_arity[i])
			return -EMEDIUMTYPE;
	ret = mmt_params_init(p, h->levels, h->log_arity, h->log_block_size);
	if (ret)
		return -EMEDIUMTYPE;

	if (h->sealed_len != MMT_SEALED_ROOT_BYTES ||
	    h->nodes_len != p->nodes_bytes || h->macs_len != p->macs_bytes ||
	    h->data_len != p->data_bytes)
		return -EMSGSIZE;
	total = (u64)MMT_CLOSURE_HDR_BYTES + h->sealed_len + h->nodes_len +
		h->macs_len + h->data_len;
	if ((u64)len != total)
		return -EMSGSIZE;
	return 0;
}

/**
 * mmt_closure_parse_hdr() - decode and check a closure header
 * @buf: the closure, @len bytes; only its first MMT_CLOSURE_HDR_BYTES are
 *	read (each once), and only if @len allows
 * @len: bytes of the whole closure
 * @h: (out) decoded header; written only on success
 *
 * Checks, in this order: @len >= 96 (else -EMSGSIZE); magic "MMTC" (else
 * -EPROTO); version 3 (else -EPROTONOSUPPORT, so v1 and v2 closures are
 * refused); hdr_len 96 (else -EMSGSIZE); suite MMT_CLOSURE_SUITE (else
 * -EPROTONOSUPPORT); no unknown flag and a zero reserved byte (else
 * -EINVAL); a valid geometry with zero arities above @levels (else
 * -EMEDIUMTYPE); each section length equal to what the geometry implies
 * and @len equal to 96 plus their sum (else -EMSGSIZE).  Never reads
 * outside @buf[0..@len).
 *
 * Context: any.
 * Return: 0 or the -errno above.
 */
int mmt_closure_parse_hdr(const u8 *buf, size_t len,
			  struct mmt_closure_hdr *h)
{
	struct mmt_closure_hdr dec;
	struct mmt_params p;
	int ret;

	if (!buf)
		return -EMSGSIZE;
	ret = mmt_closure_decode(buf, len, &dec, &p);
	if (ret)
		return ret;
	*h = dec;
	return 0;
}

/*
 * What building a closure of @m needs: a VALID or SENDING owner's MMT with
 * a key, known flags, and a geometry format v2 can describe.  Fills the
 * section lengths of @e.
 */
static int mmt_closure_can_build(const struct mmt *m,
				 const struct mmt_closure_hdr *h,
				 struct mmt_closure_hdr *e)
{
	if ((m->root.state != MMT_VALID && m->root.state != MMT_SENDING) ||
	    m->root.read_only || m->root.regua_due)
		return -EPERM;
	if (!m->crypto)
		return -ENOKEY;
	if (h->flags & ~MMT_CLOSURE_F_ALL)
		return -EINVAL;
	memset(e, 0, sizeof(*e));
	if (!mmt_closure_lens(m->p, &e->nodes_len, &e->macs_len, &e->data_len))
		return -E2BIG;
	return 0;
}

/**
 * mmt_closure_build() - serialize an MMT into a closure
 * @m: MMT to send; VALID or SENDING (normally SENDING, DESIGN.md section 5)
 * @h: header fields to send: @flags (0 or MMT_CLOSURE_F_COPY),
 *	@sender_node, @receiver_node, @conn_id, @seq.  The version, geometry
 *	and section lengths are taken from @m->p, not from @h.
 * @out: (out) mmt_closure_bytes(@m->p) bytes of closure
 * @out_len: bytes available at @out
 *
 * Encodes the header, seals the root with the header as associated data
 * (bumping @m->root.root_counter, see mmt_root_seal()), then copies the
 * tree nodes, data MACs and ciphertext.  The header and sealed root are
 * built in private memory and then copied, so @out may be memory others
 * can read or write.
 *
 * Context: may sleep (kernel crypto API).
 * Return: 0; -EPERM if @m is not VALID or SENDING, or is a read-only copy
 * (its GUA belongs to the owner, whose seals use the same nonces), or is
 * due for mmt_regua() (@m->root.regua_due: a writable copy may exist
 * under its GUA); -ENOKEY
 * without crypto; -EINVAL for unknown @h->flags; -E2BIG if the geometry is
 * too large for format v2; -ENOSPC if @out_len is short; -EOVERFLOW if the
 * root counter is exhausted (regua first); another -errno from the cipher.
 * Nothing is changed on error except the bumped counter after a cipher
 * failure.
 */
int mmt_closure_build(struct mmt *m, const struct mmt_closure_hdr *h,
		      u8 *out, size_t out_len)
{
	size_t off = MMT_CLOSURE_HDR_BYTES + MMT_SEALED_ROOT_BYTES;
	struct mmt_closure_hdr e;
	int ret;

	ret = mmt_closure_can_build(m, h, &e);
	if (ret)
		return ret;
	if (!out || out_len < mmt_closure_bytes(m->p))
		return -ENOSPC;
	ret = mmt_closure_build_head(m, h, out);
	if (ret)
		return ret;
	if (e.nodes_len)	/* 0 with one level: m->nodes may be NULL */
		memcpy(out + off, m->nodes, e.nodes_len);
	off += e.nodes_len;
	memcpy(out + off, m->macs, e.macs_len);
	off += e.macs_len;
	memcpy(out + off, m->data, e.data_len);
	return 0;
}

/**
 * mmt_closure_same_geometry() - does a decoded header describe @p's shape?
 * @h: a header from mmt_closure_parse_hdr() (levels already checked)
 * @p: the receive MMT's params
 *
 * Context: any.
 * Return: true if levels, block size and every arity match.
 */
bool mmt_closure_same_geometry(const struct mmt_closure_hdr *h,
			       const struct mmt_params *p)
{
	unsigned int i;

	if (h->levels != p->levels || h->log_block_size != p->log_block_size)
		return false;
	for (i = 0; i < p->levels; i++)
		if (h->log_arity[i] != p->log_arity[i])
			return false;
	return true;
}

/**
 * mmt_closure_rules() - receive rules 1 to 7, once, for every entry point
 * @m: the receive MMT
 * @rx: the connection's receive rules; not changed here
 * @head: the closure's head (header and sealed root), untrusted memory
 * @len: the closure's bytes
 * @sender: the node the header must name, or MMT_CLOSURE_ANY_SENDER
 * @last_rc: the root counter rule 6 compares with (the last accepted one)
 * @last_gua: the GUA rule 7 compares with (the last accepted one, 0: none)
 * @hb: (out) MMT_CLOSURE_HDR_BYTES: the private copy of the header
 * @h: (out) the decoded header
 * @root: (out) the unsealed root
 * @c: (out) the context of the closure's keying
 *
 * Context: the caller serializes access to @m and @rx; may sleep (the
 * keying callback, the kernel crypto API).
 * Return: 0, or the -errno of the first rule that fails (the table of
 * docs/ENGINE.md, "Receiving"); the outputs are meaningful only on 0.
 */
static int mmt_closure_rules(struct mmt *m, struct mmt_rx_rules *rx,
			     const u8 *head, size_t len, int sender,
			     u64 last_rc, u64 last_gua,
			     u8 *hb, struct mmt_closure_hdr *h,
			     struct mmt_root *root, struct mmt_crypto **c)
{
	struct mmt_params p;
	int ret;

	/* 1. the receive MMT (a migration lands again in a LANDING one) */
	if (m->root.state != MMT_WAITING &&
	    !(rx->migrate && m->root.state == MMT_LANDING))
		return -EPERM;
	if (!m->crypto)
		return -ENOKEY;
	/* 2. the header, from a private copy */
	if (!head || len < MMT_CLOSURE_HDR_BYTES)
		return -EMSGSIZE;
	memcpy(hb, head, MMT_CLOSURE_HDR_BYTES);
	ret = mmt_closure_decode(hb, len, h, &p);
	if (ret)
		return ret;
	/* 3. geometry */
	if (!mmt_closure_same_geometry(h, m->p))
		return -EMEDIUMTYPE;
	/* 4. this node, this connection, this MMT */
	if (h->receiver_node != rx->self_node || h->conn_id != rx->conn_id)
		return -EXDEV;
	if (rx->check_seq && h->seq != rx->expect_seq)
		return -EILSEQ;
	/*
	 * 4c. this receive: the receiver's fresh nonce and the transfer's
	 * generation, so no closure built for another receive (an earlier
	 * transfer, the other direction, another connection) in any slot
	 */
	if (h->gen != rx->gen ||
	    memcmp(h->rx_nonce, rx->rx_nonce, MMT_RX_NONCE_BYTES))
		return -ESTALE;
	/* 5. the sealed root (read once into a private copy), under the
	 * subkeys of the closure's keying
	 */
	*c = m->crypto;
	if (memcmp(h->ksalt, mmt_crypto_ksalt(*c), MMT_KSALT_BYTES)) {
		if (!rx->keying)
			return -EBADMSG;
		*c = rx->keying(rx, h->ksalt);
		if (IS_ERR(*c))
			return PTR_ERR(*c);
	}
	ret = mmt_root_unseal(m->p, *c, hb, MMT_CLOSURE_HDR_BYTES,
			      head + MMT_CLOSURE_HDR_BYTES, root);
	if (ret)
		return ret;
	/* 5b. the sender, now authenticated */
	if (sender != MMT_CLOSURE_ANY_SENDER && h->sender_node != sender)
		return -EXDEV;
	if (rx->migrate) {
		/* 6m, 7m: per index, against what landed (MIGRATION.md) */
		if (root->root_counter <= rx->min_root_counter ||
		    (m->root.state == MMT_LANDING &&
		     root->root_counter <= m->root.root_counter))
			return -ESTALE;
		if (m->root.state == MMT_LANDING && root->gua != m->root.gua)
			return -EILSEQ;
	} else {
		/* 6. replay */
		if (root->root_counter <= rx->min_root_counter ||
		    root->root_counter <= last_rc)
			return -ESTALE;
		/* 7. reorder */
		if (last_gua && root->gua <= last_gua)
			return -EILSEQ;
	}
	return 0;
}

/**
 * mmt_closure_install() - commit a closure that passed every rule and its
 * check
 * @m: the receive MMT, which takes the closure
 * @rx: the receive rules; take its root counter and GUA (not a migration)
 * @h: the closure's decoded header
 * @root: its unsealed root
 * @c: the context of its keying, which @m takes
 * @stage: the private, checked copy of the tree nodes, or NULL
 * @macs: the MACs to copy in, or NULL when they are in place
 * @data: the ciphertext to copy in (with @macs)
 *
 * Context: the caller serializes access to @m and @rx.
 * Return: 0, or mmt_root_transition()'s error with nothing changed.
 */
static int mmt_closure_install(struct mmt *m, struct mmt_rx_rules *rx,
			       const struct mmt_closure_hdr *h,
			       const struct mmt_root *root,
			       struct mmt_crypto *c, const u8 *stage,
			       const u8 *macs, const u8 *data)
{
	int ret = 0;

	/* Commit: nothing below can fail. */
	if (m->root.state != MMT_LANDING)
		ret = mmt_root_transition(&m->root, rx->migrate ? MMT_LANDING :
					  MMT_VALID);
	if (ret)
		return ret;
	if (stage && h->nodes_len)
		memcpy(m->nodes, stage, h->nodes_len);
	if (macs) {
		/* lazy: checked on access by mmt_read(), as hardware would */
		memcpy(m->macs, macs, h->macs_len);
		memcpy(m->data, data, h->data_len);
	}
	m->crypto = c;
	m->root.gua = root->gua;
	m->root.root_counter = root->root_counter;
	m->root.top = root->top;
	m->root.read_only = !rx->migrate && (h->flags & MMT_CLOSURE_F_COPY);
	if (!rx->migrate) {
		rx->last_root_counter = root->root_counter;
		rx->last_gua = root->gua;
	}
	return 0;
}

/*
 * The receive rules, once, for both entry points.  @head is the closure's
 * head (header and sealed root) in untrusted memory; with @in_place the
 * sections are already in @m's own memory, else they follow @head in the
 * caller's buffer (@len bytes in all).  @sender is the node the header
 * must name, or MMT_CLOSURE_ANY_SENDER.  The rules and what is staged are
 * in the kernel-doc of mmt_closure_receive() and
 * mmt_closure_receive_inplace().
 */
static int mmt_closure_accept(struct mmt *m, struct mmt_rx_rules *rx,
			      const u8 *head, size_t len, bool in_place,
			      int sender, bool eager)
{
	u8 hb[MMT_CLOSURE_HDR_BYTES];
	const u8 *sec = NULL;
	struct mmt_closure_hdr h;
	struct mmt_crypto *c;
	struct mmt_root root;
	size_t stage_len;
	struct mmt t;
	u8 *stage;
	int ret;

	/* 1. to 7. */
	ret = mmt_closure_rules(m, rx, head, len, sender,
				rx->last_root_counter, rx->last_gua, hb, &h,
				&root, &c);
	if (ret)
		return ret;

	/*
	 * 8. on a private copy: the tree nodes, and from a buffer with @eager
	 * the MACs and ciphertext too.  In place, the MACs and ciphertext
	 * are checked where they are (eager) or on access (lazy).  In place
	 * and lazy, nothing is staged: mmt_verify_top() copies each top-level
	 * node into scratch before its MAC is checked, and every access
	 * verifies the nodes on its path from the root again, so a private
	 * copy of all the nodes (42 KiB for a 2 MiB closure, copied there and
	 * back) would protect nothing more (docs/ENGINE.md "Receiving").
	 */
	if (!in_place)
		sec = head + MMT_CLOSURE_HDR_BYTES + MMT_SEALED_ROOT_BYTES;
	stage_len = in_place && !eager ? 0 : h.nodes_len;
	if (eager && !in_place)
		stage_len += (size_t)h.macs_len + h.data_len;
	stage = NULL;
	if (stage_len) {
		stage = kvmalloc(stage_len, GFP_KERNEL);
		if (!stage)
			return -ENOMEM;
		memcpy(stage, in_place ? m->nodes : sec, stage_len);
	}

	t = *m;
	t.crypto = c;
	t.root = root;
	t.root.state = MMT_VALID;
	t.root.read_only = true;
	t.nodes = in_place && !eager ? m->nodes : stage;
	if (!in_place) {
		t.macs = eager ? stage + h.nodes_len : NULL;
		t.data = eager ? stage + h.nodes_len + h.macs_len : NULL;
	}
	ret = eager ? mmt_verify_all(&t) : mmt_verify_top(&t);
	if (ret)
		goto out;

	ret = mmt_closure_install(m, rx, &h, &root, c, stage,
				  in_place ? NULL :
				  eager ? t.macs : sec + h.nodes_len,
				  in_place ? NULL :
				  eager ? t.data :
				  sec + h.nodes_len + h.macs_len);
out:
	kvfree(stage);
	return ret;
}

/**
 * mmt_closure_receive() - check a received closure and install it
 * @m: the receive MMT: WAITING, crypto set, geometry @m->p
 * @rx: the connection's replay and reorder state; updated on success
 * @buf: the closure, @len bytes, in untrusted memory: it is read into
 *	private copies before anything read from it is trusted
 * @len: bytes at @buf
 * @eager: verify every node and data MAC now (else only the top tree nodes
 *	now, and the rest on access by mmt_read())
 *
 * The rules, in this order (DESIGN.md section 5, step 4; docs/ENGINE.md
 * "Receiving"):
 *  1. @m WAITING (else -EPERM) with crypto (else -ENOKEY);
 *  2. the header parses (the errors of mmt_closure_parse_hdr(), with @len
 *     the closure's length; a NULL @buf is -EMSGSIZE);
 *  3. its geometry is @m's (else -EMEDIUMTYPE);
 *  4. it is for this node and connection: receiver_node == @rx->self_node
 *     and conn_id == @rx->conn_id (else -EXDEV); and with @rx->check_seq,
 *     for this MMT: seq == @rx->expect_seq (else -EILSEQ);
 *  4c. it is for this receive: gen == @rx->gen and rx_nonce ==
 *      @rx->rx_nonce (else -ESTALE);
 *  5. the sealed root authenticates with the header as associated data,
 *     under the subkeys of the header's keying salt: @m->crypto's if the
 *     salts are equal, else the context @rx->keying gives (without
 *     @rx->keying: -EBADMSG; its ERR_PTR is returned as is) (else
 *     -EBADMSG);
 *  6. replay: its root counter is greater than @rx->min_root_counter and
 *     @rx->last_root_counter (else -ESTALE);
 *  7. reorder: its GUA is greater than @rx->last_gua, once a closure has
 *     been accepted (@rx->last_gua != 0, so GUA 0 must not be assigned)
 *     (else -EILSEQ);
 *  8. on a private copy, the top tree nodes (level @levels - 2) verify
 *     against the unsealed root's top counters, or with @eager the whole
 *     closure does (mmt_verify_all()) (else -EBADMSG).
 * Only then are the nodes, MACs and ciphertext copied into @m, @m->crypto
 * becomes the keying's context, @m->root
 * takes the GUA, root counter and top counters of the closure, @m goes
 * WAITING -> VALID (read-only if the closure has MMT_CLOSURE_F_COPY), and
 * @rx records the root counter and GUA.  The rules are those of
 * mmt_closure_receive_inplace() (one implementation), which adds rule 5b
 * for callers that know the sender.
 *
 * Context: may sleep (kernel crypto API; one kvmalloc() of the tree nodes,
 * or with @eager of nodes, MACs and ciphertext).
 * Return: 0 or the -errno above, or -ENOMEM.  On error @m (data, MACs,
 * nodes, root) and @rx are unchanged.
 */
int mmt_closure_receive(struct mmt *m, struct mmt_rx_rules *rx,
			const u8 *buf, size_t len, bool eager)
{
	return mmt_closure_accept(m, rx, buf, len, false,
				  MMT_CLOSURE_ANY_SENDER, eager);
}

/**
 * mmt_closure_receive_inplace() - check a closure that landed in place
 * @m: the receive MMT: WAITING, crypto set, geometry @m->p.  Its nodes,
 *	MACs and data already hold the closure's sections, written there by
 *	the transport (RDMA), which can no longer write them
 * @rx: the connection's replay and reorder state; updated on success
 * @head: MMT_CLOSURE_HDR_BYTES + MMT_SEALED_ROOT_BYTES bytes: the closure
 *	header then the sealed root, as received; each byte is read once
 *	into a private copy, so it may be untrusted memory
 * @sender: the node id the (authenticated) header must name as its
 *	sender, e.g. the connection's peer, or MMT_CLOSURE_ANY_SENDER
 * @eager: verify every node and data MAC now (else only the top tree nodes
 *	now, and the rest on access by mmt_read())
 *
 * The rules, order and errors of mmt_closure_receive() (one
 * implementation), for a closure of mmt_closure_bytes(@m->p) bytes, plus
 * one that runs right after the sealed root authenticates (rule 5) and
 * before the replay rule (6):
 *  5b. with @sender other than MMT_CLOSURE_ANY_SENDER, the header's
 *      sender_node is @sender (else -EXDEV).
 * So a closure that names another sender and also fails rules 1-5 gets
 * the error of those; one that names another sender and is a replay gets
 * -EXDEV.  A header whose lengths describe another closure size, including
 * another geometry of another size, fails rule 2 with -EMSGSIZE.
 *
 * What is private and what stays in place (docs/CONNECTIONS.md "Check, no
 * TOCTOU"): the header and sealed root are checked from private copies;
 * with @eager the tree nodes are copied into a private stage, checked
 * there and installed from it.  Lazy, the top-level nodes are checked
 * where they are, each one copied into scratch before its MAC is checked
 * (mmt_verify_top()), and nothing is staged: every later access verifies
 * the nodes on its path from the sealed root's top counters again, so a
 * write to @m->nodes after the check (which the caller has excluded
 * anyway) can only make reads fail, never pass.  The data MACs and
 * ciphertext are not copied: with @eager mmt_verify_all() checks them
 * where they are, and in any case mmt_read() verifies every block it
 * reads.
 *
 * Context: may sleep (kernel crypto API; with @eager one kvmalloc() of the
 * tree nodes).
 * Return: 0 or the -errno of the rule that failed, or -ENOMEM.  On error
 * @m (data, MACs, nodes, root) and @rx are unchanged: @m stays WAITING and
 * its memory holds what the transport wrote.
 */
int mmt_closure_receive_inplace(struct mmt *m, struct mmt_rx_rules *rx,
				const u8 *head, int sender, bool eager)
{
	return mmt_closure_accept(m, rx, head, mmt_closure_bytes(m->p), true,
				  sender, eager);
}

/**
 * mmt_closure_eager_begin() - the in-order part of an eager in-place
 * receive whose full check runs elsewhere: the rules and the top nodes
 * @m: the receive MMT, as for mmt_closure_receive_inplace()
 * @rx: the connection's replay and reorder state; not changed here
 * @head: as for mmt_closure_receive_inplace()
 * @sender: as for mmt_closure_receive_inplace()
 * @prev: the closure of the same receive begun just before this one and
 *	not yet committed (its full check may still be running), or NULL
 *	if every earlier closure is committed.  Rules 6 and 7 then compare
 *	with @prev's root counter and GUA, the values @rx takes once @prev
 *	is committed, so that this closure is checked exactly as
 *	mmt_closure_receive_inplace() would check it after @prev
 * @pc: (out) what mmt_closure_eager_verify() and
 *	mmt_closure_eager_commit() need; set up only on success (then free
 *	it with mmt_closure_eager_free())
 *
 * Rules 1 to 7 of mmt_closure_receive_inplace(), in its order and with
 * its errors; then the tree nodes are copied into a private stage and the
 * top-level nodes are checked there against the unsealed root
 * (mmt_verify_top(), with @m->scratch).  Nothing of @m or @rx changes.
 * The caller must commit the closures it begins in the order it began
 * them, and none after one that fails (its check or its commit): the
 * checks of the later ones assumed it accepted.
 *
 * Context: the caller serializes access to @m, @rx and @m->scratch (the
 * driver holds the PMO's lock); may sleep (kernel crypto API; one
 * kvmalloc() of the tree nodes).
 * Return: 0, or the -errno of the rule that failed (those of
 * mmt_closure_receive_inplace(); -EBADMSG for a top node that does not
 * verify), or -ENOMEM; -EINVAL for a migration's rules (@rx->migrate),
 * which this split does not serve.
 */
int mmt_closure_eager_begin(struct mmt *m, struct mmt_rx_rules *rx,
			    const u8 *head, int sender,
			    const struct mmt_closure_eager *prev,
			    struct mmt_closure_eager *pc)
{
	u8 hb[MMT_CLOSURE_HDR_BYTES];
	struct mmt_closure_hdr h;
	struct mmt_crypto *c;
	struct mmt_root root;
	struct mmt t;
	u8 *stage = NULL;
	int ret;

	if (rx->migrate)
		return -EINVAL;	/* rules 6m, 7m land per index: serial */
	ret = mmt_closure_rules(m, rx, head, mmt_closure_bytes(m->p), sender,
				prev ? prev->t.root.root_counter :
				rx->last_root_counter,
				prev ? prev->t.root.gua : rx->last_gua,
				hb, &h, &root, &c);
	if (ret)
		return ret;
	if (h.nodes_len) {
		stage = kvmalloc(h.nodes_len, GFP_KERNEL);
		if (!stage)
			return -ENOMEM;
		memcpy(stage, m->nodes, h.nodes_len);
	}
	t = *m;
	t.crypto = c;
	t.root = root;
	t.root.state = MMT_VALID;
	t.root.read_only = true;
	t.nodes = stage;
	ret = mmt_verify_top(&t);
	if (ret) {
		kvfree(stage);
		return ret;
	}
	memset(pc, 0, sizeof(*pc));
	pc->t = t;
	pc->t.scratch = NULL;	/* the verifier brings its own */
	pc->t.crypto = NULL;	/* and its own context: @pc->ksalt's */
	pc->h = h;
	pc->c = c;
	memcpy(pc->ksalt, h.ksalt, MMT_KSALT_BYTES);
	pc->stage = stage;
	return 0;
}

/**
 * mmt_closure_eager_verify() - the full check of a begun closure: every
 * tree node and every data MAC
 * @pc: from mmt_closure_eager_begin()
 * @c: a context of @pc's keying (its salt @pc->ksalt, the same subkeys
 *	as the receive MMT's), used by no one else during the call
 * @scratch: mmt_scratch_bytes() of the geometry, used by no one else
 *	during the call
 *
 * mmt_verify_all() of the closure as it would be installed: the nodes
 * from @pc's private stage, the MACs and ciphertext where the transport
 * wrote them.  Reads only @pc and the receive MMT's data and MACs (memory
 * the transport can no longer write); writes only @scratch.  So calls
 * for different closures may run at once, each with its own @c and
 * @scratch, without the lock that serializes the receive MMT.
 *
 * Context: any task; may sleep (kernel crypto API).
 * Return: 0; -EBADMSG if a node or a block fails; -EINVAL if @c is not of
 * @pc's keying; or a crypto backend error.  Nothing but @scratch changes.
 */
int mmt_closure_eager_verify(const struct mmt_closure_eager *pc,
			     struct mmt_crypto *c, u8 *scratch)
{
	struct mmt t = pc->t;

	if (!c || !scratch ||
	    memcmp(mmt_crypto_ksalt(c), pc->ksalt, MMT_KSALT_BYTES))
		return -EINVAL;
	t.crypto = c;
	t.scratch = scratch;
	return mmt_verify_all(&t);
}

/**
 * mmt_closure_eager_commit() - install a begun closure whose full check
 * passed
 * @m: the receive MMT @pc was begun on
 * @rx: the connection's replay and reorder state; takes the closure's
 *	root counter and GUA
 * @pc: from mmt_closure_eager_begin(), its mmt_closure_eager_verify()
 *	returned 0; every closure begun before it is committed
 *
 * What mmt_closure_receive_inplace() does after its checks pass: the MMT
 * goes WAITING -> VALID (read-only for a copy), takes the staged nodes,
 * the closure's context, GUA, root counter and top counters, and @rx
 * records the root counter and GUA.  Rule 1 is checked again first: an
 * MMT no longer WAITING (the receive PMO was invalidated meanwhile) takes
 * nothing.
 *
 * Context: the caller serializes access to @m and @rx (the PMO's lock).
 * Return: 0, or -EPERM with @m and @rx unchanged.
 */
int mmt_closure_eager_commit(struct mmt *m, struct mmt_rx_rules *rx,
			     const struct mmt_closure_eager *pc)
{
	if (m->root.state != MMT_WAITING || rx->migrate)
		return -EPERM;
	return mmt_closure_install(m, rx, &pc->h, &pc->t.root, pc->c,
				   pc->stage, NULL, NULL);
}

/**
 * mmt_closure_eager_free() - free what mmt_closure_eager_begin() set up
 * @pc: a begun closure, committed or not; may be all zeros
 *
 * Context: may sleep.
 */
void mmt_closure_eager_free(struct mmt_closure_eager *pc)
{
	kvfree(pc->stage);
	memset(pc, 0, sizeof(*pc));
}

/**
 * mmt_closure_build_head() - seal an MMT and encode only the closure head
 * @m: MMT to send, as for mmt_closure_build()
 * @h: header fields, as for mmt_closure_build()
 * @out: (out) MMT_CLOSURE_HDR_BYTES + MMT_SEALED_ROOT_BYTES bytes: the
 *	header then the sealed root, exactly the first bytes
 *	mmt_closure_build() writes for the same MMT state
 *
 * For transports that send the tree nodes, data MACs and ciphertext
 * straight from the MMT's own memory (the RDMA transport writes them from
 * the PMO, driver/mmt_conn_tx.c), so nothing is copied but the head.
 * The MMT must stay unchanged until they are sent (it is SENDING).
 *
 * Context: may sleep (kernel crypto API).
 * Return: 0, or mmt_closure_build()'s errors but -ENOSPC.  Nothing is
 * changed on error except the bumped counter after a cipher failure.
 */
int mmt_closure_build_head(struct mmt *m, const struct mmt_closure_hdr *h,
			   u8 *out)
{
	const struct mmt_params *p = m->p;
	u8 hb[MMT_CLOSURE_HDR_BYTES];
	u8 sr[MMT_SEALED_ROOT_BYTES];
	struct mmt_closure_hdr e;
	int ret;

	ret = mmt_closure_can_build(m, h, &e);
	if (ret)
		return ret;
	e.version = MMT_CLOSURE_VERSION;
	e.flags = h->flags;
	e.sender_node = h->sender_node;
	e.receiver_node = h->receiver_node;
	e.conn_id = h->conn_id;
	e.seq = h->seq;
	e.gen = h->gen;
	memcpy(e.rx_nonce, h->rx_nonce, MMT_RX_NONCE_BYTES);
	memcpy(e.ksalt, mmt_crypto_ksalt(m->crypto), MMT_KSALT_BYTES);
	e.suite = MMT_CLOSURE_SUITE;
	e.levels = p->levels;
	e.log_block_size = p->log_block_size;
	memcpy(e.log_arity, p->log_arity, p->levels);
	e.sealed_len = MMT_SEALED_ROOT_BYTES;
	mmt_closure_encode(&e, hb);

	ret = mmt_root_seal(&m->root, p, m->crypto, hb, sizeof(hb), sr);
	if (ret)
		return ret;
	memcpy(out, hb, sizeof(hb));
	memcpy(out + sizeof(hb), sr, sizeof(sr));
	return 0;
}
