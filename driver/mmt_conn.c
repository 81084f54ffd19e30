// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_conn.c - the parts of connections that need no RDMA headers: message
 * decoding and checks, which PMOs each channel takes (plain PMOs: no key),
 * the sender's build and settle steps of pipelined delegation, the
 * receiver's in-place closure check, and the secure channel's seal and
 * open, on keyed PMOs through the controller and on plain PMOs straight
 * from and to their memory (DESIGN.md sections 1 and 5)
 *
 * The RDMA transport (driver/mmt_*_rdma.c) calls these; they are also
 * built into the KUnit module, which has no RDMA.  Without CONFIG_INFINIBAND
 * the connection ioctls are stubs returning -EOPNOTSUPP.
 */
#include <linux/errno.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "mmt_kcompat.h"
#include <crypto/algapi.h>
#include <crypto/sha2.h>

#include "mmt_conn.h"
#include "mmt_internal.h"
#include "mmt_trace.h"
#include "mmt.h"

static_assert(sizeof(struct mmt_wire_hello) == 24);
static_assert(sizeof(struct mmt_wire_seg) == 16);
static_assert(sizeof(struct mmt_wire_msg) == 80 + 16 * MMT_WIRE_MAX_SEGS);
static_assert(sizeof(struct mmt_xfer) == MMT_XFER_SIZE_VER0);
static_assert(sizeof(struct mmt_listen) == MMT_LISTEN_SIZE_VER0);
static_assert(sizeof(struct mmt_connect) == MMT_CONNECT_SIZE_VER0);
static_assert(sizeof(struct mmt_conn_key) == MMT_CONN_KEY_SIZE_VER0);
static_assert(sizeof(struct mmt_key_agree) == MMT_KEY_AGREE_SIZE_VER0);
static_assert(sizeof(struct mmt_migrate_resolve) == MMT_MIGRATE_RESOLVE_SIZE_VER0);
static_assert(sizeof(struct mmt_wire_hello_att) == 32);
static_assert(sizeof(struct mmt_migrate) == MMT_MIGRATE_SIZE_VER0);
static_assert(sizeof_field(struct mmt_migrate_info, nonce) == MMT_RX_NONCE_BYTES &&
	      MMT_RX_NONCE_BYTES == MMT_CKPT_HANDLE_BYTES);
static_assert(sizeof(struct mmt_migrate_info) == MMT_MIGRATE_INFO_SIZE_VER1);
/* the command's number stays that of the first version as the struct grows */
static_assert(_IOC_SIZE(MMT_IOC_MIGRATE_INFO) == MMT_MIGRATE_INFO_SIZE_VER0);
static_assert(2 * sizeof(struct mmt_wire_seg) == MMT_SHA256_BYTES);

/*
 * A peer's verdict (ACK, NACK) reaches the user as the errno of
 * MMT_IOC_SEND: the rejection reasons uapi/mmt.h documents pass as they
 * are; any other errno is a failure on the receiver's side that says
 * nothing about the closure (its PMO was invalidated during the receive:
 * -EPERM there; a registration failed; ...) and becomes -EREMOTEIO.
 */
static int mmt_wire_verdict(int err)
{
	switch (err) {
	case 0:
	case -EBADMSG:
	case -ESTALE:
	case -EILSEQ:
	case -EMSGSIZE:
	case -EPROTO:
	case -EPROTONOSUPPORT:
	case -EMEDIUMTYPE:
	case -EXDEV:
	case -E2BIG:
	case -ENOMEM:
	case -ENOENT:
	case -EOVERFLOW:
	case -ENOSPC:
	case -EBUSY:
		return err;
	default:
		return -EREMOTEIO;
	}
}

/**
 * mmt_wire_decode() - check and decode a received message
 * @buf: the bytes as received (untrusted; read once into @msg)
 * @len: bytes received
 * @msg: (out) decoded message; its err is 0 or one of the rejection
 *	reasons MMT_IOC_SEND documents (another errno from the peer, a
 *	failure on its side, becomes -EREMOTEIO); its wire_err the errno as
 *	sent (what an ACK's tag covers)
 *
 * Context: any (called from the completion handler).
 * Return: 0; -EMSGSIZE for a short message or too many segments; -EPROTO
 * for a bad magic, type or non-zero reserved field.
 */
int mmt_wire_decode(const void *buf, size_t len, struct mmt_msg *msg)
{
	struct mmt_wire_msg *w = &msg->wire;

	memset(msg, 0, sizeof(*msg));
	if (len < offsetof(struct mmt_wire_msg, segs))
		return -EMSGSIZE;
	memcpy(w, buf, min(len, sizeof(*w)));
	if (le32_to_cpu(w->magic) != MMT_WIRE_MSG_MAGIC || w->reserved0 ||
	    w->reserved1[0] || w->reserved1[1])
		return -EPROTO;
	if (w->type < MMT_MSG_OFFER || w->type > MMT_MSG_MIG_STATEMENT ||
	    w->type == MMT_MSG_DONE)
		return -EPROTO;
	if (w->nsegs > MMT_WIRE_MAX_SEGS ||
	    len < offsetof(struct mmt_wire_msg, segs) +
		  w->nsegs * sizeof(struct mmt_wire_seg))
		return -EMSGSIZE;
	msg->type = w->type;
	msg->gen = le32_to_cpu(w->gen);
	msg->index = le32_to_cpu(w->index);
	if (le32_to_cpu(w->err) > MAX_ERRNO)
		return -EPROTO;
	msg->wire_err = -(int)le32_to_cpu(w->err);
	msg->err = mmt_wire_verdict(msg->wire_err);
	return 0;
}

/**
 * mmt_conn_ack_tag() - the tag of an MMT-channel ACK
 * @pmo: a keyed PMO (the receive PMO on the receiver, the sending PMO on
 *	the sender: both hold the same MMT key, hence the same keying root)
 * @b: the transfer: connection, generation, sender and receiver node,
 *	direction, the receive's nonce and the sender's nonce (struct
 *	mmt_bind)
 * @index: the closure
 * @root_counter: a migration's acceptance: the root counter of the
 *	closure accepted (so an ACK of an earlier round's closure of the
 *	same index does not acknowledge a later one); 0 otherwise (a
 *	rejection, a COMMIT's answer, a transfer: one closure per index)
 * @verdict: 0 (accepted) or the negative errno of the rejection, as sent
 * @tag: (out) MMT_WIRE_TAG_BYTES
 *
 * The first 16 bytes of HKDF-SHA256 (RFC 5869) of the PMO's keying root,
 * salt "mmt-v3 ack", info "mmt v3 ack" || mmt_bind_encode(@b) || le32
 * index || le64 root_counter || le32 -verdict: a PRF of the verdict and of everything that
 * names the closure, its receive and its direction, keyed by the MMT key.
 * Only a holder of the key can say "accepted" for this closure of this
 * receive, so a forged, replayed or reflected acceptance (one made for
 * the other direction of the connection, whose generations run
 * independently) cannot make the sender give up its MMT
 * (docs/CONNECTIONS.md "Acknowledgements").
 *
 * The PMO's lock is taken killable: a pwrite() whose buffer faults slowly
 * may hold it.  Every caller treats a failure so that no second writable
 * copy can come of it: a receiver sends no acceptance, a sender believes
 * none.
 *
 * Context: process; takes @pmo->lock (killable); may sleep.
 * Return: 0; -ENOKEY if the PMO has no key; -EINTR if a fatal signal came
 * while it waited for the lock; or the crypto library's error (@tag
 * zeroed on every error).
 */
int mmt_conn_ack_tag(struct mmt_pmo *pmo, const struct mmt_bind *b,
		     u32 index, u64 root_counter, int verdict, u8 *tag)
{
	int err;

	if (mutex_lock_killable(&pmo->lock)) {
		memset(tag, 0, MMT_WIRE_TAG_BYTES);
		return -EINTR;
	}
	if (pmo->crypto)
		err = mmt_conn_ack_tag_root(pmo->key_root, b, index,
					    root_counter, verdict, tag);
	else
		err = -ENOKEY;
	mutex_unlock(&pmo->lock);
	if (err)
		memset(tag, 0, MMT_WIRE_TAG_BYTES);
	return err;
}

/**
 * mmt_conn_ack_tag_root() - mmt_conn_ack_tag() from a keying root
 * @key_root: MMT_KEY_ROOT_BYTES, the MMT key's keying root (a receive's
 *	own copy, taken when it started: its rejections stay provable after
 *	its PMO lost its key)
 * @b: as for mmt_conn_ack_tag()
 * @index: as for mmt_conn_ack_tag()
 * @root_counter: as for mmt_conn_ack_tag()
 * @verdict: as for mmt_conn_ack_tag()
 * @tag: (out) MMT_WIRE_TAG_BYTES
 *
 * Context: process; may sleep.
 * Return: 0; or the crypto library's error (@tag zeroed).
 */
int mmt_conn_ack_tag_root(const u8 *key_root, const struct mmt_bind *b,
			  u32 index, u64 root_counter, int verdict, u8 *tag)
{
	u8 fields[4 + 8 + 4];

	put_unaligned_le32(index, fields);
	put_unaligned_le64(root_counter, fields + 4);
	put_unaligned_le32(-verdict, fields + 12);
	return mmt_bind_tag(key_root, "mmt-v3 ack", "mmt v3 ack", b, fields,
			    sizeof(fields), tag, MMT_WIRE_TAG_BYTES);
}

/**
 * mmt_conn_ack_genuine() - does an MMT-channel ACK authenticate?
 * @pmo: the sending PMO (keyed: the same MMT key as the receiver's)
 * @b: the transfer as the sender sees it (its own nonce and direction,
 *	the receive's nonce from the GRANTs)
 * @m: the decoded ACK (untrusted)
 * @root_counter: what the sender sealed into the closure acknowledged
 *	(a migration's acceptance; 0 otherwise: mmt_conn_ack_tag())
 *
 * Its nonce must be the receive's and its tag mmt_conn_ack_tag() of the
 * verdict as it was sent (@m->wire_err, not the errno the user sees, so
 * a genuine refusal for a reason of the receiver's own, ECANCELED or
 * EPERM, authenticates too), and @m->err, the verdict the caller acts
 * on, must be what that verdict decodes to.
 *
 * Context: process; takes @pmo->lock; may sleep.
 * Return: true if it authenticates.
 */
bool mmt_conn_ack_genuine(struct mmt_pmo *pmo, const struct mmt_bind *b,
			  const struct mmt_msg *m, u64 root_counter)
{
	u8 tag[MMT_WIRE_TAG_BYTES];
	bool ok;

	if (m->err != mmt_wire_verdict(m->wire_err) ||
	    crypto_memneq(m->wire.nonce, b->rx_nonce, MMT_RX_NONCE_BYTES))
		return false;
	if (mmt_conn_ack_tag(pmo, b, m->index, root_counter, m->wire_err,
			     tag))
		return false;
	ok = !crypto_memneq(tag, m->wire.tag, sizeof(tag));
	memzero_explicit(tag, sizeof(tag));
	return ok;
}

/**
 * mmt_wire_offer_fill() - encode an OFFER for a PMO
 * @w: (out) the message; zeroed first
 * @pmo: the PMO to send
 * @channel: MMT_CHANNEL_*
 * @copy: copy mode
 * @plain: the PMO is plain memory (no key; mmt_conn_tx_check())
 *
 * Context: any.
 */
void mmt_wire_offer_fill(struct mmt_wire_msg *w, struct mmt_pmo *pmo,
			 u32 channel, bool copy, bool plain)
{
	const struct mmt_params *p = &pmo->params;

	memset(w, 0, sizeof(*w));
	w->magic = cpu_to_le32(MMT_WIRE_MSG_MAGIC);
	w->type = MMT_MSG_OFFER;
	w->channel = cpu_to_le32(channel);
	w->flags = cpu_to_le32((copy ? MMT_XFER_COPY : 0) |
			       (plain ? MMT_WIRE_OFFER_PLAIN : 0));
	w->closures = cpu_to_le32(pmo->closures);
	w->bytes = cpu_to_le64(pmo->bytes);
	w->levels = p->levels;
	w->log_block_size = p->log_block_size;
	memcpy(w->log_arity, p->log_arity, p->levels);
}

/**
 * mmt_wire_offer_check() - does an OFFER fit the receive PMO?
 * @offer: the decoded OFFER
 * @pmo: the receive PMO
 * @channel: the channel the receiver asked for
 * @plain: the receive PMO is plain memory (mmt_conn_rx_prepare())
 *
 * Context: any.
 * Return: 0; -EPROTO if the sender named another channel or unknown
 * flags; -EMEDIUMTYPE if geometry, size or closure count differ, or one
 * PMO is plain and the other keyed.
 */
int mmt_wire_offer_check(const struct mmt_msg *offer, struct mmt_pmo *pmo,
			 u32 channel, bool plain)
{
	const struct mmt_wire_msg *w = &offer->wire;
	const struct mmt_params *p = &pmo->params;
	u32 flags = le32_to_cpu(w->flags);
	unsigned int i;

	if (le32_to_cpu(w->channel) != channel ||
	    (flags & ~(MMT_XFER_COPY | MMT_WIRE_OFFER_PLAIN)))
		return -EPROTO;	/* a migration's offer too: MIGRATE_RECV's */
	if (!!(flags & MMT_WIRE_OFFER_PLAIN) != plain)
		return -EMEDIUMTYPE;
	if (le32_to_cpu(w->closures) != pmo->closures ||
	    le64_to_cpu(w->bytes) != pmo->bytes ||
	    w->levels != p->levels || w->log_block_size != p->log_block_size)
		return -EMEDIUMTYPE;
	for (i = 0; i < MMT_MAX_LEVELS; i++)
		if (w->log_arity[i] != (i < p->levels ? p->log_arity[i] : 0))
			return -EMEDIUMTYPE;
	return 0;
}

/**
 * mmt_conn_migrate_args() - check a struct mmt_migrate from user space
 * @mig: the struct mmt_migrate, copied in
 * @send: MMT_IOC_MIGRATE_SEND (else MMT_IOC_MIGRATE_RECV)
 *
 * Context: any.
 * Return: 0; -EINVAL for unknown flags (MMT_MIGRATE_EAGER and
 * MMT_MIGRATE_PARK are the receiver's), non-zero reserved fields, a timeout above 600000 ms, a
 * downtime limit above 600000 ms or rounds above 1000 (and either
 * non-zero on the receiver), or a window above MMT_MIGRATE_WINDOW_MAX.
 */
int mmt_conn_migrate_args(const void *mig, bool send)
{
	const struct mmt_migrate *m = mig;

	if ((m->flags & ~(MMT_MIGRATE_EAGER | MMT_MIGRATE_PARK)) ||
	    (send && (m->flags & (MMT_MIGRATE_EAGER | MMT_MIGRATE_PARK))) ||
	    m->timeout_ms > 600000 || m->downtime_limit_ms > 600000 ||
	    m->max_rounds > 1000 || m->window > MMT_MIGRATE_WINDOW_MAX ||
	    m->reserved0 || m->reserved[0] || m->reserved[1])
		return -EINVAL;
	if (!send && (m->downtime_limit_ms || m->max_rounds))
		return -EINVAL;
	return 0;
}

/**
 * mmt_conn_xfer_args() - check a struct mmt_xfer as copied in
 * @xfer: the argument of MMT_IOC_SEND or MMT_IOC_RECV
 *
 * Context: any.
 * Return: 0; -EINVAL for unknown flags, a channel out of range, a timeout
 * above 600000 ms or non-zero reserved or output fields.
 */
int mmt_conn_xfer_args(const void *xfer)
{
	const struct mmt_xfer *x = xfer;

	if ((x->flags & ~(MMT_XFER_COPY | MMT_XFER_EAGER)) ||
	    x->channel > MMT_CHANNEL_PLAIN || x->timeout_ms > 600000 ||
	    x->reserved0 || x->reserved[0] || x->reserved[1] || x->bytes ||
	    x->closures || x->ns)
		return -EINVAL;
	return 0;
}

/**
 * mmt_conn_key_args() - check a struct mmt_conn_key as copied in
 * @key: the argument of MMT_IOC_CONN_SET_KEY
 *
 * Context: any.
 * Return: 0; -EINVAL for non-zero flags, a key length other than 16 or
 * 32, or non-zero bytes of the key past it.
 */
int mmt_conn_key_args(const void *key)
{
	const struct mmt_conn_key *k = key;

	if (k->flags || (k->key_len != 16 && k->key_len != 32))
		return -EINVAL;
	if (memchr_inv(k->key + k->key_len, 0, sizeof(k->key) - k->key_len))
		return -EINVAL;
	return 0;
}

/**
 * mmt_conn_agree_args() - check an MMT_IOC_CONN_KEY_AGREE argument
 * @agree: struct mmt_key_agree as copied in
 *
 * Context: any.
 * Return: 0, or -EINVAL for flags other than MMT_KEY_RECEIVE, a key length
 * other than 16 or 32, a timeout above 600000 ms, a non-zero seq or
 * reserved field.
 */
int mmt_conn_agree_args(const void *agree)
{
	const struct mmt_key_agree *a = agree;

	if ((a->flags & ~MMT_KEY_RECEIVE) ||
	    (a->key_len != 16 && a->key_len != 32) ||
	    a->timeout_ms > 600000 || a->seq || a->reserved[0] ||
	    a->reserved[1])
		return -EINVAL;
	return 0;
}

/**
 * mmt_conn_id_derive() - the connection id from both sides' hello nonces
 * @conn_rand: the connecting side's 64 random bits (struct mmt_wire_hello)
 * @accept_rand: the accepting side's 64 random bits
 *
 * The first 8 bytes (little endian) of SHA-256("mmt v1 conn id" ||
 * le64 @conn_rand || le64 @accept_rand) (FIPS 180-4).  The id is bound
 * into every closure header (a closure of another connection is refused
 * with -EXDEV) and every secure-channel key (mmt_conn_sec_alloc()), so it
 * must differ between connections even when one side is an attacker:
 * with a fresh @accept_rand per connection request, a connecting peer
 * that replays a recorded hello still gets a new id, and an accepting
 * peer cannot steer the id to an earlier one either (it would need a
 * 64-bit SHA-256 preimage match for the @conn_rand it was given).  Ids of
 * honest pairs repeat only by a birthday collision (about 2^32
 * connections under one key).
 *
 * Context: any.
 * Return: the connection id.
 */
u64 mmt_conn_id_derive(u64 conn_rand, u64 accept_rand)
{
	static const char label[] = "mmt v1 conn id";
	u8 in[sizeof(label) - 1 + 16], out[SHA256_DIGEST_SIZE];
	u64 id;

	memcpy(in, label, sizeof(label) - 1);
	put_unaligned_le64(conn_rand, in + sizeof(label) - 1);
	put_unaligned_le64(accept_rand, in + sizeof(label) - 1 + 8);
	sha256(in, sizeof(in), out);
	id = get_unaligned_le64(out);
	memzero_explicit(out, sizeof(out));
	return id;
}

/*
 * Which PMOs a channel takes, on either side: the MMT channel keyed PMOs
 * only, the plain channel plain PMOs only (no key: "the plain channel
 * moves plain memory"), the secure channel both.  A plain PMO taken is
 * counted in plain_xfers until mmt_conn_xfer_end() (send) or
 * mmt_conn_rx_finish() (receive), so it can be neither keyed nor
 * invalidated under the transfer.  Caller holds pmo->lock.
 */
static int mmt_conn_take(struct mmt_pmo *pmo, u32 channel, bool *plain)
{
	bool is_plain = !pmo->crypto, plain_channel;

	plain_channel = channel == MMT_CHANNEL_PLAIN;
	if (channel != MMT_CHANNEL_SECURE && is_plain != plain_channel)
		return -EPERM;
	*plain = is_plain;
	if (is_plain)
		pmo->plain_xfers++;
	return 0;
}

/**
 * mmt_conn_tx_check() - may this PMO be sent on @channel?
 * @src: the PMO
 * @channel: MMT_CHANNEL_*
 * @plain: (out) the PMO is plain memory (no key): the plain channel and
 *	the secure channel read its bytes as they are
 *
 * MMT channel: a keyed PMO, every MMT VALID and writable (it will be
 * sealed).  Plain channel: a plain PMO.  Secure channel: a plain PMO, or
 * a keyed one with every MMT VALID (read through the controller).  A
 * plain PMO is held as such until mmt_conn_xfer_end(@src, true).
 *
 * Context: process; takes @src->lock (killable: a pwrite() whose buffer
 * faults slowly may hold it).
 * Return: 0; -EPERM (the MMT channel on a plain PMO, the plain channel on
 * a keyed one, an MMT in the wrong state); -E2BIG (secure and plain
 * channels) if one closure's data is above MMT_CHAN_MSG_MAX, the largest
 * AES-GCM message and bounce buffer; -EINTR if a fatal signal came while
 * it waited for the lock (nothing taken).
 */
int mmt_conn_tx_check(struct mmt_pmo *src, u32 channel, bool *plain)
{
	u32 i;
	int err;

	*plain = false;
	/* bounce buffers, grants: one closure's data each */
	if (channel != MMT_CHANNEL_MMT &&
	    src->params.data_bytes > MMT_CHAN_MSG_MAX)
		return -E2BIG;
	if (mutex_lock_killable(&src->lock))
		return -EINTR;
	if (src->mig || src->mig_rx) {
		mutex_unlock(&src->lock);
		return -EBUSY;	/* a live migration owns it */
	}
	if (src->mig_unknown) {
		mutex_unlock(&src->lock);
		return -EUCLEAN;	/* it may live at a destination */
	}
	err = mmt_conn_take(src, channel, plain);
	for (i = 0; !err && !*plain && i < src->closures; i++) {
		const struct mmt_root *r = &src->mmts[i].root;

		if (r->state != MMT_VALID ||
		    (channel == MMT_CHANNEL_MMT && r->read_only))
			err = -EPERM;
	}
	mutex_unlock(&src->lock);
	return err;
}

/**
 * mmt_conn_xfer_end() - a send no longer uses @pmo
 * @pmo: the PMO of a successful mmt_conn_tx_check()
 * @plain: what it reported: the plain PMO can be keyed and invalidated
 *	again once no transfer uses it
 *
 * Context: process; takes @pmo->lock.
 */
void mmt_conn_xfer_end(struct mmt_pmo *pmo, bool plain)
{
	if (!plain)
		return;
	mutex_lock(&pmo->lock);
	pmo->plain_xfers--;
	mutex_unlock(&pmo->lock);
}

/**
 * mmt_conn_tx_build() - seal closure @index for sending
 * @src: the sending PMO
 * @conn_id: the connection's id (closure header)
 * @gen: the transfer's generation (closure header)
 * @rx_nonce: MMT_RX_NONCE_BYTES, the receive's nonce from its grants
 *	(closure header)
 * @peer_node: the receiver's node id (closure header)
 * @index: which MMT
 * @copy: copy mode (the closure carries MMT_CLOSURE_F_COPY)
 * @head: (out) MMT_CONN_HEAD_BYTES: closure header and sealed root
 *
 * The MMT goes VALID -> SENDING; its nodes, MACs and ciphertext stay where
 * they are (in the PMO's memory) and are RDMA-written from there: SENDING
 * keeps them unchanged.  Counters, GUA order and the slot binding are
 * those of mmt_delegate_build(), which does the work.
 *
 * Context: process; takes @src->lock (killable); may sleep.
 * Return: 0 or mmt_delegate_build()'s errors (the MMT is VALID again);
 * -EINTR if a fatal signal came while it waited for the lock (the MMT
 * untouched).
 */
int mmt_conn_tx_build(struct mmt_pmo *src, u64 conn_id, u32 gen,
		      const u8 *rx_nonce, u16 peer_node, u32 index, bool copy,
		      u8 *head)
{
	int err;

	/* Only the head is built: the sections go from the PMO itself. */
	if (mutex_lock_killable(&src->lock))
		return -EINTR;
	err = mmt_delegate_build(src, index, conn_id, gen, rx_nonce, peer_node,
				 copy, head, 0);
	mutex_unlock(&src->lock);
	return err;
}

/**
 * mmt_conn_tx_settle() - settle closure @index after the receiver's verdict
 * @src: the sending PMO
 * @index: which MMT (SENDING)
 * @copy: copy mode
 * @err: 0 (accepted), the receiver's -errno (rejected), -ECANCELED (never
 *	checked by the receiver), or -ECONNRESET / -ETIMEDOUT (outcome
 *	unknown: the ack may have been lost)
 *
 * As mmt_delegate_settle(): accepted, SENDING -> INVALID (transfer) or
 * VALID (copy); otherwise back to VALID with the data intact, and in
 * transfer mode re-encrypted under a fresh GUA (a verdict from the network
 * is not authenticated).
 *
 * Context: process; takes @src->lock.
 */
void mmt_conn_tx_settle(struct mmt_pmo *src, u32 index, bool copy, int err)
{
	mutex_lock(&src->lock);
	mmt_delegate_settle(src, index, copy, err);
	mutex_unlock(&src->lock);
}

/**
 * mmt_conn_region_bytes() - the bytes one closure's writes carry
 * @p: the PMO's geometry
 * @channel: MMT_CHANNEL_*
 *
 * MMT channel: the closure's region in place (data, data MACs, tree
 * nodes; its head goes apart); secure channel: one AES-GCM message (the
 * data and its tag); plain channel: the data.
 *
 * Context: any.
 * Return: the byte count.
 */
size_t mmt_conn_region_bytes(const struct mmt_params *p, u32 channel)
{
	if (channel == MMT_CHANNEL_MMT)
		return p->data_bytes + p->macs_bytes + p->nodes_bytes;
	if (channel == MMT_CHANNEL_SECURE)
		return p->data_bytes + MMT_CONN_SEC_TAG_BYTES;
	return p->data_bytes;
}

/**
 * mmt_conn_rx_prepare() - check a receive PMO and start a receive
 * @pmo: the PMO
 * @channel: MMT_CHANNEL_MMT (keyed, every MMT WAITING), MMT_CHANNEL_PLAIN
 *	(a plain PMO: no key) or MMT_CHANNEL_SECURE (a plain PMO, or a keyed
 *	one with every MMT VALID and writable)
 * @conn_id: the connection's id: the receiver rules start over for it, as
 *	for a new loopback connection
 * @plain: (out) the PMO is plain memory, held as such until
 *	mmt_conn_rx_finish(@pmo, true)
 *
 * The PMO is then this receive's alone until mmt_conn_rx_finish(): the
 * receive rules (struct mmt_rx_rules in the PMO) belong to one receive.
 *
 * Context: process; takes @pmo->lock (killable).
 * Return: 0; -EPERM (the MMT channel on a plain PMO, the plain channel on
 * a keyed one, an MMT in the wrong state); -EBUSY if another receive (on
 * any connection, or a local delegation) is filling the PMO; -E2BIG
 * (secure and plain channels) if one closure's data is above
 * MMT_CHAN_MSG_MAX; -EINTR if a fatal signal came while it waited for the
 * lock (nothing started).
 */
int mmt_conn_rx_prepare(struct mmt_pmo *pmo, u32 channel, u64 conn_id,
			bool *plain)
{
	u32 i;
	int err;

	*plain = false;
	if (channel != MMT_CHANNEL_MMT &&
	    pmo->params.data_bytes > MMT_CHAN_MSG_MAX)
		return -E2BIG;
	if (mutex_lock_killable(&pmo->lock))
		return -EINTR;
	if (pmo->mig || pmo->mig_rx) {
		mutex_unlock(&pmo->lock);
		return -EBUSY;	/* a live migration owns it */
	}
	err = mmt_conn_take(pmo, channel, plain);
	if (!err && pmo->receiving)
		err = -EBUSY;
	for (i = 0; !err && !*plain && i < pmo->closures; i++) {
		const struct mmt_root *r = &pmo->mmts[i].root;

		if (channel == MMT_CHANNEL_MMT ? r->state != MMT_WAITING :
		    r->state != MMT_VALID || r->read_only)
			err = -EPERM;
	}
	if (!err && channel == MMT_CHANNEL_MMT)
		mmt_pmo_rx_start(pmo, conn_id, mmt_node_id());
	if (!err) {
		pmo->receiving = true;
		pmo->rx_lost = false;
	} else if (*plain) {
		pmo->plain_xfers--;	/* taken, then refused */
		*plain = false;
	}
	mutex_unlock(&pmo->lock);
	return err;
}

/**
 * mmt_conn_rx_finish() - end the receive mmt_conn_rx_prepare() started
 * @pmo: the receive PMO
 * @plain: what mmt_conn_rx_prepare() reported: the plain PMO can be keyed
 *	and invalidated again once no transfer uses it
 *
 * Context: process; takes @pmo->lock.
 */
void mmt_conn_rx_finish(struct mmt_pmo *pmo, bool plain)
{
	mutex_lock(&pmo->lock);
	pmo->receiving = false;
	/* no closure of the receive is pending any more */
	memset(pmo->rx_crypto_held, 0, sizeof(pmo->rx_crypto_held));
	if (plain)
		pmo->plain_xfers--;
	mutex_unlock(&pmo->lock);
}

/*
 * The receive rules of closure @index of the receive (@gen, @rx_nonce):
 * it fills only its own MMT (rule 4, seq) and belongs only to this receive
 * (rule 4c).  Caller holds @pmo->lock; the same for the serial check and
 * the I/O workers' begin, so the two apply the same rules.
 */
static void mmt_conn_rx_rules_set(struct mmt_pmo *pmo, u32 index, u32 gen,
				  const u8 *rx_nonce)
{
	lockdep_assert_held(&pmo->lock);
	pmo->rx.check_seq = true;
	pmo->rx.expect_seq = index;
	pmo->rx.gen = gen;
	memcpy(pmo->rx.rx_nonce, rx_nonce, MMT_RX_NONCE_BYTES);
}

/**
 * mmt_conn_rx_check() - check closure @index that landed in place
 * @pmo: the receive PMO; MMT @index WAITING, its memory no longer
 *	registered for remote access
 * @index: which MMT
 * @gen: the transfer's generation (from its offer): the closure must carry
 *	it (rule 4c, -ESTALE)
 * @rx_nonce: MMT_RX_NONCE_BYTES, this receive's nonce: the closure must
 *	carry it too (rule 4c, -ESTALE)
 * @head: MMT_CONN_HEAD_BYTES of closure header and sealed root, a private
 *	copy made after the registration was invalidated
 * @peer: the sender's node id from the connection's hello
 * @eager: verify every node and data MAC now, else the top nodes now and
 *	the rest on access
 *
 * mmt_closure_receive_inplace() applies the rules (docs/ENGINE.md,
 * "Receiving"): those of mmt_closure_receive() in the same order with the
 * same errors, with seq required to be @index (rule 4b), plus rule 5b:
 * after the root authenticates, the header's (authenticated) sender node
 * must be @peer (else -EXDEV).  The caller has invalidated the memory
 * registration first, so nothing can change the sections any more from
 * the network; eager, the tree nodes are checked and installed from a
 * private copy; lazy, the top-level nodes are checked in place (each read
 * once into scratch); the data and MACs stay in place (docs/CONNECTIONS.md
 * "Check, no TOCTOU").  On success the MMT is VALID (read-only for a copy).  On
 * error the MMT stays WAITING (its memory holds whatever the network
 * wrote, as before any receive).
 *
 * Context: process; takes @pmo->lock (killable); may sleep.
 * Return: 0; -EINVAL for a bad @index; -EPERM if @pmo was invalidated
 * during this receive (@pmo->rx_lost); or the -errno of the rule that
 * failed, or -ENOMEM; -EINTR if a fatal signal came while it waited for
 * the lock (nothing checked, the MMT still WAITING: no verdict to send).
 */
int mmt_conn_rx_check(struct mmt_pmo *pmo, u32 index, u32 gen,
		      const u8 *rx_nonce, const u8 *head, u16 peer, bool eager)
{
	u64 gua;
	int err;

	if (index >= pmo->closures)
		return -EINVAL;
	if (mutex_lock_killable(&pmo->lock))
		return -EINTR;
	mmt_conn_rx_rules_set(pmo, index, gen, rx_nonce);
	/* invalidated during this receive: refused, also if keyed again */
	if (pmo->rx_lost)
		err = -EPERM;
	else
		err = mmt_closure_receive_inplace(&pmo->mmts[index], &pmo->rx,
						  head, peer, eager);
	gua = pmo->mmts[index].root.gua;
	mutex_unlock(&pmo->lock);
	mmt_stats_receive(err, gua, index);
	return err;
}

/**
 * mmt_conn_rx_begin() - the in-order part of an eager receive's check of
 * closure @index, whose full check then runs on an I/O worker
 * @pmo: the receive PMO, as for mmt_conn_rx_check()
 * @index: which MMT
 * @gen: as for mmt_conn_rx_check()
 * @rx_nonce: as for mmt_conn_rx_check()
 * @head: as for mmt_conn_rx_check()
 * @peer: as for mmt_conn_rx_check()
 * @prev: the closure begun just before this one and not yet committed,
 *	or NULL (mmt_closure_eager_begin())
 * @pc: (out) the begun closure, on success; it holds its keying's
 *	context (mmt_pmo_keying_hold()) until mmt_conn_rx_end()
 *
 * Under @pmo->lock, as mmt_conn_rx_check() with @eager: the same receive
 * rules set up, the same -EPERM once the PMO was lost to this receive,
 * then rules 1 to 7 in their order and the top-level nodes
 * (mmt_closure_eager_begin()).  Nothing of the MMT or of the receive's
 * freshness state changes.  A failure is final for the closure and is
 * counted here, as mmt_conn_rx_check() counts it.
 *
 * Context: process; takes @pmo->lock (killable); may sleep.
 * Return: 0; -EINVAL for a bad @index; -EPERM (@pmo->rx_lost); the
 * -errno of the rule that failed; -ENOMEM; -EINTR if a fatal signal came
 * while it waited for the lock (nothing checked, not counted).
 */
int mmt_conn_rx_begin(struct mmt_pmo *pmo, u32 index, u32 gen,
		      const u8 *rx_nonce, const u8 *head, u16 peer,
		      const struct mmt_closure_eager *prev,
		      struct mmt_closure_eager *pc)
{
	u64 gua;
	int err;

	if (index >= pmo->closures)
		return -EINVAL;
	if (mutex_lock_killable(&pmo->lock))
		return -EINTR;
	mmt_conn_rx_rules_set(pmo, index, gen, rx_nonce);
	if (pmo->rx_lost)
		err = -EPERM;
	else
		err = mmt_closure_eager_begin(&pmo->mmts[index], &pmo->rx,
					      head, peer, prev, pc);
	if (!err)
		mmt_pmo_keying_hold(pmo, pc->c, true);
	gua = pmo->mmts[index].root.gua;
	mutex_unlock(&pmo->lock);
	if (err)
		mmt_stats_receive(err, gua, index);
	return err;
}

/**
 * mmt_conn_rx_end() - apply the verdict of a begun closure's full check,
 * in closure order
 * @pmo: the receive PMO
 * @index: the closure's MMT
 * @pc: from mmt_conn_rx_begin(); freed here in every case
 * @verdict: mmt_closure_eager_verify()'s result, or -ECANCELED to drop
 *	the closure unjudged (a closure before it was refused, so the
 *	serial receive would not have checked it: not counted)
 *
 * With @verdict 0 the closure is committed (mmt_closure_eager_commit():
 * WAITING -> VALID, the receive's last root counter and GUA move on),
 * unless the PMO was lost to this receive meanwhile (-EPERM), as
 * mmt_conn_rx_check() would have found it.  Any other @verdict leaves the
 * MMT WAITING and the freshness state as it was.  The closure's hold on
 * its keying's context is dropped; that of a closure dropped unjudged or
 * of a call cut short by a signal goes when the receive ends
 * (mmt_conn_rx_finish(): no closure of it is begun after a refused one).
 *
 * Context: process; takes @pmo->lock (killable; not for -ECANCELED);
 * may sleep.  The caller calls it for the begun closures in the order
 * they were begun, and for none after one that returned an error.
 * Return: 0 (committed); -EPERM; @verdict; -EINTR if a fatal signal came
 * while it waited for the lock (nothing committed, the MMT still WAITING:
 * the caller aborts the receive, as for mmt_conn_rx_check()'s -EINTR).
 */
int mmt_conn_rx_end(struct mmt_pmo *pmo, u32 index,
		    struct mmt_closure_eager *pc, int verdict)
{
	u64 gua;
	int err = verdict;

	if (verdict == -ECANCELED || mutex_lock_killable(&pmo->lock)) {
		/* its hold goes with the receive (mmt_conn_rx_finish()) */
		mmt_closure_eager_free(pc);
		return verdict == -ECANCELED ? verdict : -EINTR;
	}
	if (!err)
		err = pmo->rx_lost ? -EPERM :
		      mmt_closure_eager_commit(&pmo->mmts[index], &pmo->rx,
					       pc);
	mmt_pmo_keying_hold(pmo, pc->c, false);
	gua = pmo->mmts[index].root.gua;
	mutex_unlock(&pmo->lock);
	mmt_closure_eager_free(pc);
	mmt_stats_receive(err, gua, index);
	return err;
}

/*
 * Secure channel on a keyed PMO, sender: the plaintext of closure @index
 * read through the controller (the MMT verifies it) into @buf, data_bytes.
 * Returns 0, mmt_read()'s errors, or -EINTR (a fatal signal while it
 * waited for @pmo->lock, taken killable).
 */
static int mmt_conn_ctl_read(struct mmt_pmo *pmo, u32 index, u8 *buf)
{
	int err;

	if (mutex_lock_killable(&pmo->lock))
		return -EINTR;
	err = mmt_read(&pmo->mmts[index], 0, buf, pmo->params.data_bytes);
	mutex_unlock(&pmo->lock);
	if (!err)
		atomic64_add(pmo->params.data_bytes, &mmt_stats.bytes_read);
	return err;
}

/*
 * Secure channel on a keyed PMO, receiver: write the opened plaintext of
 * closure @index (@buf, data_bytes, private memory) through the controller.
 * Returns 0, -EPERM if the PMO was invalidated during this receive (also
 * if keyed again since: the transfer's data does not go into another
 * keying), mmt_write()'s errors, or -EINTR (a fatal signal while it
 * waited for @pmo->lock, taken killable: nothing written).
 */
static int mmt_conn_ctl_write(struct mmt_pmo *pmo, u32 index, const u8 *buf)
{
	int err;

	if (mutex_lock_killable(&pmo->lock))
		return -EINTR;
	err = pmo->rx_lost ? -EPERM :
	      mmt_write(&pmo->mmts[index], 0, buf, pmo->params.data_bytes);
	mutex_unlock(&pmo->lock);
	if (!err)
		atomic64_add(pmo->params.data_bytes, &mmt_stats.bytes_written);
	return err;
}

/* ------------------------------------------------------ secure channel */

/* AD of closure @index's message: le32 gen, le32 index. */
static void mmt_conn_sec_ad(u8 *ad, u32 gen, u32 index)
{
	put_unaligned_le32(gen, ad);
	put_unaligned_le32(index, ad + 4);
}

/**
 * mmt_conn_sec_alloc() - the AES-GCM context of one secure-channel transfer
 * @pmo: the sending or receiving PMO
 * @plain: the transfer took @pmo as plain memory (mmt_conn_tx_check(),
 *	mmt_conn_rx_prepare())
 * @conn_root: the connection's channel root key (MMT_IOC_CONN_SET_KEY),
 *	used when @plain; NULL if it has none
 * @id: what the transfer's key is bound to; the receiver passes the
 *	sender's view (sender and receiver node, the sender's direction)
 *
 * mmt_chan_crypto_alloc() of @pmo's channel root key (derived from the MMT
 * key at MMT_IOC_PMO_SET_KEY, docs/ENGINE.md), or for a plain PMO of
 * @conn_root (the same derivation from the connection's key), with the
 * binding
 * MMT_CONN_SEC_BIND_BYTES bytes, little-endian: le64 conn_id, le16
 * sender_node, le16 receiver_node, u8 dir, le32 gen.  Each transfer has a
 * context of its own that starts its sequence numbers at 0; the binding
 * differs for every transfer sealed under one key (gen is unique per
 * connection and direction, the connection id is new per connection:
 * mmt_conn_id_derive()), so no two contexts share a nonce space.  A
 * receiver whose PMO has another key (or another binding) derives another
 * key: the first message fails to open with -EBADMSG.
 *
 * Context: process; takes @pmo->lock (killable); may sleep.
 * Return: the context, ERR_PTR(-ENOKEY) if @plain and @conn_root is NULL,
 * ERR_PTR(-EPERM) if a keyed @pmo lost its key (invalidated),
 * ERR_PTR(-EINTR) if a fatal signal came while it waited for the lock, or
 * mmt_chan_crypto_alloc()'s errors.
 */
struct mmt_chan_crypto *mmt_conn_sec_alloc(struct mmt_pmo *pmo, bool plain,
					   const u8 *conn_root,
					   const struct mmt_conn_sec_id *id)
{
	u8 bind[MMT_CONN_SEC_BIND_BYTES];
	struct mmt_chan_crypto *c;

	put_unaligned_le64(id->conn_id, bind);
	put_unaligned_le16(id->sender_node, bind + 8);
	put_unaligned_le16(id->receiver_node, bind + 10);
	bind[12] = id->dir;
	put_unaligned_le32(id->gen, bind + 13);
	if (plain)
		return conn_root ? mmt_chan_crypto_alloc(conn_root,
							 MMT_CHAN_ROOT_BYTES,
							 bind, sizeof(bind)) :
				   ERR_PTR(-ENOKEY);
	if (mutex_lock_killable(&pmo->lock))
		return ERR_PTR(-EINTR);
	if (pmo->crypto)
		c = mmt_chan_crypto_alloc(pmo->chan_root, sizeof(pmo->chan_root),
					  bind, sizeof(bind));
	else
		c = ERR_PTR(-EPERM);
	mutex_unlock(&pmo->lock);
	return c;
}

/**
 * mmt_conn_sec_seal() - secure channel, sender: seal closure @index
 * @pmo: the sending PMO: plain, or keyed with MMT @index VALID
 * @plain: the transfer took @pmo as plain memory (mmt_conn_tx_check();
 *	it cannot be keyed meanwhile, while a keyed one can lose its key)
 * @c: the transfer's context (mmt_conn_sec_alloc())
 * @gen: the transfer's generation (AD)
 * @index: which MMT; also the message's sequence number
 * @msg: (out) data_bytes + MMT_CONN_SEC_TAG_BYTES: the ciphertext and tag
 *	(a registered bounce buffer, kmalloc'd or vmalloc'd)
 *
 * Plain PMO: AES-GCM straight from the PMO's memory into @msg (the paper's
 * secure channel on non-secure memory).  Keyed PMO: reads the plaintext
 * through the controller into @msg (the MMT verifies it), then seals it
 * in place.  Seq @index, AD (gen, index).  Indices must be sealed in
 * increasing order on one context.
 *
 * Context: process; takes @pmo->lock (killable); may sleep.
 * Return: 0; mmt_read()'s errors (-EBADMSG: the sender's own PMO failed
 * verification; -EPERM: it was invalidated); mmt_chan_seal()'s (-EINVAL:
 * @index not above the last one sealed); or -EINTR if a fatal signal came
 * while it waited for the lock (nothing sealed).  On error @msg holds no
 * plaintext.
 */
int mmt_conn_sec_seal(struct mmt_pmo *pmo, bool plain,
		      struct mmt_chan_crypto *c, u32 gen, u32 index, u8 *msg)
{
	size_t len = pmo->params.data_bytes;
	u8 ad[MMT_CONN_SEC_AD_BYTES];
	int err;

	if (index >= pmo->closures)
		return -EINVAL;
	mmt_conn_sec_ad(ad, gen, index);
	if (plain) {
		if (mutex_lock_killable(&pmo->lock))
			return -EINTR;
		err = mmt_chan_seal(c, index, ad, sizeof(ad),
				    pmo->mmts[index].data, msg, len);
		mutex_unlock(&pmo->lock);
		if (!err)
			atomic64_add(len, &mmt_stats.bytes_read);
		else
			memzero_explicit(msg, len + MMT_CONN_SEC_TAG_BYTES);
		return err;
	}
	err = mmt_conn_ctl_read(pmo, index, msg);
	if (err) {
		memzero_explicit(msg, len);
		return err;
	}
	err = mmt_chan_seal(c, index, ad, sizeof(ad), msg, msg, len);
	if (err)
		memzero_explicit(msg, len + MMT_CONN_SEC_TAG_BYTES);
	return err;
}

/**
 * mmt_conn_sec_open() - secure channel, receiver: open and write @index
 * @pmo: the receiving PMO: plain, or keyed with MMT @index VALID and
 *	writable
 * @plain: the transfer took @pmo as plain memory (mmt_conn_rx_prepare())
 * @c: the transfer's context, built with the sender's binding
 * @gen: the transfer's generation (AD)
 * @index: which MMT; also the message's sequence number
 * @msg: data_bytes + MMT_CONN_SEC_TAG_BYTES as received (the bounce, no
 *	longer remotely writable)
 * @priv: data_bytes + MMT_CONN_SEC_TAG_BYTES of private memory
 *	(kmalloc'd or vmalloc'd)
 *
 * Copies the message into @priv ("copy, decrypt", DESIGN.md section 1),
 * opens it there in place, and puts the plaintext into closure @index:
 * copied into the memory of a plain PMO, written through the controller
 * into a keyed one.  A message that does not open is counted in debugfs
 * mmt/stats by reason (reject_badmsg, reject_replay) and changes nothing
 * in @pmo.
 *
 * Context: process; takes @pmo->lock (killable); may sleep.
 * Return: 0; -EINVAL for @index out of range; -EBADMSG if the tag does not
 * match (tamper, wrong key, other transfer or index); -ESTALE if @index is
 * not above the last index opened on @c (replay, reorder); other errors
 * of mmt_chan_open(), or mmt_write()'s (-EPERM if a keyed @pmo was
 * invalidated; the MMT may be partly written on other errors); -EINTR if
 * a fatal signal came while it waited for the lock (nothing written: no
 * verdict to send).
 */
int mmt_conn_sec_open(struct mmt_pmo *pmo, bool plain,
		      struct mmt_chan_crypto *c, u32 gen, u32 index,
		      const u8 *msg, u8 *priv)
{
	int err;

	if (index >= pmo->closures)
		return -EINVAL;
	err = mmt_conn_sec_decrypt(pmo, c, gen, index, msg, priv);
	if (err) {
		mmt_stats_reject(err);
		return err;
	}
	return mmt_conn_sec_put(pmo, plain, index, priv);
}

/**
 * mmt_conn_sec_decrypt() - secure channel, receiver: open @index's message
 * @pmo: the receiving PMO (only its geometry is read: no lock needed)
 * @c: a context of the transfer's key and binding: the transfer's own, or
 *	an I/O worker's (mmt_conn_sec_alloc() with the same arguments)
 * @gen: the transfer's generation (AD)
 * @index: which MMT; also the message's sequence number
 * @msg: data_bytes + MMT_CONN_SEC_TAG_BYTES as received (the bounce, no
 *	longer remotely writable)
 * @priv: (out) data_bytes + MMT_CONN_SEC_TAG_BYTES of private memory
 *	(kmalloc'd or vmalloc'd): the plaintext in its first data_bytes on
 *	success, no plaintext on error
 *
 * The first half of mmt_conn_sec_open(): copy into @priv, open there in
 * place with @index's nonce and AD (gen, index).  Nothing in @pmo
 * changes, and nothing is counted: the caller counts a refusal it applies
 * (mmt_conn_sec_open(), mmt_conn_sec_commit()), so an open a stopped
 * receive never applies is not counted, as in the serial receive.
 *
 * Context: process; may sleep; no lock needed (@c and @priv are the
 * caller's alone).
 * Return: 0; -EINVAL for @index out of range; mmt_chan_open()'s errors
 * (-EBADMSG: tag mismatch; -ESTALE: @index not above the last opened on
 * @c).
 */
int mmt_conn_sec_decrypt(struct mmt_pmo *pmo, struct mmt_chan_crypto *c,
			 u32 gen, u32 index, const u8 *msg, u8 *priv)
{
	size_t len = pmo->params.data_bytes;
	u8 ad[MMT_CONN_SEC_AD_BYTES];

	if (index >= pmo->closures)
		return -EINVAL;
	memcpy(priv, msg, len + MMT_CONN_SEC_TAG_BYTES);
	mmt_conn_sec_ad(ad, gen, index);
	return mmt_chan_open(c, index, ad, sizeof(ad), priv, priv, len);
}

/**
 * mmt_conn_sec_put() - secure channel, receiver: write an opened closure
 * @pmo: the receiving PMO: plain, or keyed with MMT @index VALID and
 *	writable
 * @plain: the transfer took @pmo as plain memory (mmt_conn_rx_prepare())
 * @index: which MMT, below @pmo->closures
 * @priv: data_bytes of plaintext (mmt_conn_sec_decrypt()'s)
 *
 * The second half of mmt_conn_sec_open(): copied into the memory of a
 * plain PMO, written through the controller into a keyed one.
 *
 * Context: process; takes @pmo->lock (killable); may sleep.
 * Return: 0; mmt_write()'s errors (-EPERM if a keyed @pmo was
 * invalidated); -EINTR if a fatal signal came while it waited for the
 * lock (nothing written).
 */
int mmt_conn_sec_put(struct mmt_pmo *pmo, bool plain, u32 index,
		     const u8 *priv)
{
	size_t len = pmo->params.data_bytes;

	if (plain) {
		if (mutex_lock_killable(&pmo->lock))
			return -EINTR;
		memcpy(pmo->mmts[index].data, priv, len);
		mutex_unlock(&pmo->lock);
		atomic64_add(len, &mmt_stats.bytes_written);
		return 0;
	}
	return mmt_conn_ctl_write(pmo, index, priv);
}

/**
 * mmt_conn_sec_commit() - secure channel, receiver: a worker's open in order
 * @pmo: as for mmt_conn_sec_put()
 * @plain: as for mmt_conn_sec_put()
 * @c: the transfer's own context, whose sequence state orders the
 *	transfer's messages (mmt_chan_open() is not called on it meanwhile)
 * @index: the closure, the next one in closure order
 * @verdict: mmt_conn_sec_decrypt()'s result on a worker's context
 * @priv: the worker's plaintext of @index (data_bytes), when @verdict is 0
 *
 * What mmt_conn_sec_open() does after the crypto, with the sequence check
 * it makes before it, on @c: -EINVAL first (index out of range), then
 * -ESTALE unless @index is above the last index opened on @c (replay,
 * reorder: whatever the worker found), then the worker's error, each
 * counted in debugfs mmt/stats as the serial open counts it; on success
 * @index becomes the last opened one on @c and the plaintext goes into
 * @pmo (mmt_conn_sec_put()).  Called in closure order, so the result
 * is the serial receive's for the same messages.
 *
 * Context: process, the receive's task; takes @pmo->lock (killable); may
 * sleep.
 * Return: 0; -EINVAL; -ESTALE; @verdict; mmt_conn_sec_put()'s errors
 * (-EINTR: nothing written, no verdict to send).
 */
int mmt_conn_sec_commit(struct mmt_pmo *pmo, bool plain,
			struct mmt_chan_crypto *c, u32 index, int verdict,
			const u8 *priv)
{
	int err;

	if (verdict == -EINVAL)
		return verdict;
	err = mmt_chan_open_seq(c, index, !verdict);
	if (!err)
		err = verdict;
	if (err) {
		mmt_stats_reject(err);	/* as mmt_conn_sec_open() counts it */
		return err;
	}
	return mmt_conn_sec_put(pmo, plain, index, priv);
}

#ifndef MMT_RDMA
/* Built without CONFIG_INFINIBAND: no connections. */
int mmt_conn_listen(void __user *uarg)
{
	return -EOPNOTSUPP;
}

int mmt_conn_connect(void __user *uarg)
{
	return -EOPNOTSUPP;
}

int mmt_conn_init(void)
{
	return 0;
}

void mmt_conn_exit(void)
{
}
#endif
