// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_delegate.c - MMT closure delegation, sender side, over any transport
 *
 * DESIGN.md section 5 and the paper's section IV: for each MMT of the
 * sending PMO, closure by closure: VALID -> SENDING (read-only), build the
 * closure (the root is sealed with AES-GCM, the header as associated
 * data), hand it to the transport, which delivers it and returns the
 * receiver's verdict; then SENDING -> INVALID (transfer) or -> VALID (copy).
 * A rejected closure returns the MMT to VALID with its data intact, under
 * a fresh GUA in transfer mode (mmt_delegate_settle()).
 *
 * The PMO's lock is not held while the transport runs: SENDING is what
 * keeps the MMT unchanged meanwhile (writes, keying and invalidation refuse
 * it), so a transport may sleep, and two PMOs delegating to each other
 * cannot deadlock.
 */
#include <linux/file.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "mmt_internal.h"
#include "mmt_trace.h"
#include "mmt_transport.h"
#include "mmt.h"

/* Re-encrypt @m under a fresh GUA of @pmo's own keying. */
static int mmt_delegate_regua(struct mmt_pmo *pmo, struct mmt *m)
{
	u64 gua;
	int err;

	err = mmt_gua_alloc(&gua);
	if (!err)
		err = mmt_regua(m, pmo->crypto, gua);
	return err;
}

/**
 * mmt_delegate_regua_due() - re-encrypt an MMT under a fresh GUA if a
 * failed transfer left that to do
 * @pmo: the PMO, keyed
 * @m: one of its MMTs
 *
 * After a failed transfer the receiver may hold a writable copy under the
 * MMT's GUA (a lost ack, a forged rejection), so the owner must not write
 * or seal under it again: mmt_delegate_settle() marks the MMT
 * @m->root.regua_due and re-encrypts it under a fresh GUA.  When that
 * fails (its memory fails verification, the usual reason the receiver
 * refused it; or GUAs ran out) the mark stays: the MMT stays VALID and
 * readable, and the owner's next write or send calls this again, which
 * succeeds once the memory verifies.  Nothing that verifies is lost.
 *
 * Context: process; caller holds @pmo->lock.
 * Return: 0 (done, or nothing to do); -EOVERFLOW from the GUA allocator;
 * mmt_regua()'s errors, -EBADMSG above all (nothing changed but a GUA
 * drawn).
 */
int mmt_delegate_regua_due(struct mmt_pmo *pmo, struct mmt *m)
{
	lockdep_assert_held(&pmo->lock);
	return m->root.regua_due ? mmt_delegate_regua(pmo, m) : 0;
}

/**
 * mmt_delegate_build() - seal closure @i for a connection; the MMT goes
 * VALID -> SENDING
 * @src: the sending PMO
 * @i: which MMT
 * @conn_id: the connection's id (bound into the header)
 * @gen: the transfer's generation on that connection (bound into the
 *	header: the receiver accepts only closures of the transfer it is in)
 * @rx_nonce: MMT_RX_NONCE_BYTES, the nonce of the receive the closure is
 *	for (bound into the header)
 * @peer_node: the receiver's node id
 * @copy: copy mode
 * @buf: (out) the whole closure (mmt_closure_build()), or with @len 0 only
 *	its head (header and sealed root, MMT_CLOSURE_HDR_BYTES +
 *	MMT_SEALED_ROOT_BYTES: mmt_closure_build_head()) when the sections
 *	are sent from the PMO's own memory
 * @len: bytes at @buf, or 0 for the head only
 *
 * Root counters and GUAs rise strictly along a transfer (the receiver's
 * replay and reorder rules), so the MMT's counter is first raised to the
 * last one this PMO sent, and an MMT whose GUA is not above the last one
 * this PMO sent (re-encrypted under a fresh GUA after a failed transfer,
 * or sent before in copy mode), or that is still due for that
 * re-encryption (mmt_delegate_regua_due()), is re-encrypted under a fresh
 * one first: DESIGN.md re-assigns GUAs anyway.  The header's seq is the
 * MMT's index, which binds the closure to its slot at the receiver.
 *
 * Context: process; caller holds @src->lock.
 * Return: 0; -EBUSY if the PMO is being migrated live; -EPERM if the MMT
 * is not VALID or is read-only, or the PMO has no key; -EOVERFLOW from the
 * GUA allocator; -EBADMSG if a
 * needed re-encryption finds the MMT corrupted (nothing changed);
 * mmt_closure_build()'s errors (the MMT is VALID again).
 */
int mmt_delegate_build(struct mmt_pmo *src, u32 i, u64 conn_id, u64 gen,
		       const u8 *rx_nonce, u16 peer_node, bool copy, u8 *buf,
		       size_t len)
{
	struct mmt *m = &src->mmts[i];
	struct mmt_closure_hdr h = {
		.version = MMT_CLOSURE_VERSION,
		.flags = copy ? MMT_CLOSURE_F_COPY : 0,
		.sender_node = mmt_node_id(),
		.receiver_node = peer_node,
		.conn_id = conn_id,
		.seq = i,
		.gen = gen,
	};
	int err;

	lockdep_assert_held(&src->lock);
	memcpy(h.rx_nonce, rx_nonce, MMT_RX_NONCE_BYTES);
	if (src->mig)
		return -EBUSY;	/* a live migration owns it */
	if (src->mig_unknown)
		return -EUCLEAN;	/* it may live at a destination */
	if (!src->crypto || m->root.state != MMT_VALID || m->root.read_only)
		return -EPERM;
	if (m->root.regua_due || m->root.gua <= src->tx_last_gua) {
		err = mmt_delegate_regua(src, m);
		if (err)
			return err;
	}
	err = mmt_root_transition(&m->root, MMT_SENDING);
	if (err)
		return err;
	if (m->root.root_counter < src->tx_root_counter)
		m->root.root_counter = src->tx_root_counter;
	if (len)
		err = mmt_closure_build(m, &h, buf, len);
	else
		err = mmt_closure_build_head(m, &h, buf);
	if (err) {
		mmt_root_transition(&m->root, MMT_VALID);
		return err;
	}
	src->tx_root_counter = m->root.root_counter;
	src->tx_last_gua = m->root.gua;
	trace_mmt_seal(m->root.gua, m->root.root_counter, h.seq, i);
	return 0;
}

/**
 * mmt_delegate_settle() - settle SENDING closure @i after the verdict
 * @src: the sending PMO
 * @i: which MMT
 * @copy: copy mode
 * @err: 0 (the receiver accepted it) or any -errno
 *
 * Accepted: SENDING -> INVALID (transfer) or VALID (copy).  Rejected (a
 * verdict the receiver gave: the local transport's, or an authenticated
 * one over a connection) gives the MMT back to the sender, VALID, data
 * intact; in transfer mode it is re-encrypted under a fresh GUA before it
 * can be written again (DESIGN.md section 5), so no pad of the old one is
 * used again.  A closure whose outcome is unknown (a lost or forged
 * verdict) is not settled here but by mmt_delegate_unknown().  If the
 * re-encryption fails (the
 * MMT's own memory fails verification, or GUAs ran out) the MMT stays
 * VALID, readable, under its old GUA and marked regua_due: writes and
 * sends retry the re-encryption first (mmt_delegate_regua_due()).  In
 * copy mode the receiver's copy is read-only and nothing more is needed.
 * An MMT not SENDING is left alone.
 *
 * Context: process; caller holds @src->lock.
 */
void mmt_delegate_settle(struct mmt_pmo *src, u32 i, bool copy, int err)
{
	struct mmt *m = &src->mmts[i];

	lockdep_assert_held(&src->lock);
	if (m->root.state != MMT_SENDING)
		return;
	if (!err) {
		mmt_root_transition(&m->root, copy ? MMT_VALID : MMT_INVALID);
		atomic64_inc(&mmt_stats.closures_sent);
		return;
	}
	mmt_root_transition(&m->root, MMT_VALID);
	if (!copy) {
		m->root.regua_due = true;
		/* on failure it stays due: the next write or send retries */
		mmt_delegate_regua_due(src, m);
	}
}

/**
 * mmt_delegate_unknown() - a transfer ended with closures whose outcome
 *	the sender cannot know
 * @src: the sending PMO, keyed
 * @first: the first closure posted whose verdict did not come or did not
 *	authenticate (the earlier ones are settled)
 * @end: one past the last closure posted
 * @b: the transfer's binding (connection, generation, both nodes, the
 *	sender's direction, the receive's nonce and the sender's nonce), for
 *	the receiver's statement (mmt_resolve())
 *
 * The receiver may have taken in any prefix of closures @first..@end - 1
 * and lost only the ACKs (DESIGN.md section 5, "or it stays read-only
 * until it does"): each of them goes SENDING -> VALID and is due for a
 * fresh GUA, and the whole PMO becomes read-only, MMT_PMO_INFO_MIG_UNKNOWN
 * (writes, sends, migration and keying fail with -EUCLEAN), until the
 * receiver's authenticated statement (MMT_IOC_MIGRATE_RESOLVE: the
 * closures it took in become INVALID here, the rest writable) or its
 * owner (MMT_IOC_PMO_MIG_RESOLVE with MMT_MIG_RESOLVE_FORCE, or
 * MMT_IOC_PMO_INVALIDATE) resolves it.  So there is one writable copy of
 * each closure at every instant, whatever was lost.
 *
 * Context: process; takes @src->lock.
 */
void mmt_delegate_unknown(struct mmt_pmo *src, u32 first, u32 end,
			  const struct mmt_bind *b)
{
	u32 i;

	mutex_lock(&src->lock);
	for (i = first; i < end && i < src->closures; i++) {
		struct mmt_root *r = &src->mmts[i].root;

		if (r->state != MMT_SENDING)
			continue;
		mmt_root_transition(r, MMT_VALID);
		r->regua_due = true;
	}
	src->mig_unknown = true;
	src->xfer_unknown = true;
	src->xfer_first = first;
	src->xfer_end = end;
	src->mig_bind = *b;
	mutex_unlock(&src->lock);
	atomic64_inc(&mmt_stats.xfer_unknown);
}

/**
 * mmt_delegate() - delegate every closure of a PMO through a transport
 * @src: the sending PMO
 * @t: the connection
 * @copy: copy mode (the receiver gets a read-only copy, the sender keeps
 *	ownership); otherwise transfer
 * @sent: (out) closures delivered and accepted
 *
 * Context: process; takes @src->lock around each build (killable) and
 * settle step, never across @t->ops->deliver(); may sleep.
 * Return: 0; -ENOMEM; -EPERM if an MMT is not VALID or is read-only;
 * mmt_closure_build()'s errors; -EINTR if a fatal signal came while it
 * waited for the lock to build a closure (that closure untouched); or the
 * transport's verdict for the first closure that failed (earlier closures
 * stay delivered).
 */
int mmt_delegate(struct mmt_pmo *src, struct mmt_transport *t, bool copy,
		 u64 *sent)
{
	size_t len = mmt_closure_bytes(&src->params);
	u8 *buf;
	u32 i;
	int err = 0;

	*sent = 0;
	buf = kvmalloc(len, MMT_GFP_USER_SIZED);
	if (!buf)
		return -ENOMEM;
	for (i = 0; i < src->closures; i++) {
		/* a pwrite() whose buffer faults slowly may hold it */
		if (mutex_lock_killable(&src->lock)) {
			err = -EINTR;
			break;
		}
		err = mmt_delegate_build(src, i, t->conn_id, t->gen,
					 t->rx_nonce, t->peer_node, copy, buf,
					 len);
		mutex_unlock(&src->lock);
		if (err)
			break;

		err = t->ops->deliver(t, i, buf, len);

		mutex_lock(&src->lock);
		mmt_delegate_settle(src, i, copy, err);
		mutex_unlock(&src->lock);
		if (err)
			break;
		(*sent)++;
	}
	kvfree(buf);
	return err;
}
