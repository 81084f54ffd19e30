// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_conn_tx.c - the sending side of a transfer (MMT_IOC_SEND):
 * OFFER, RDMA writes of each closure into the receiver's grants, ACKs, END
 * and the abort of a transfer its connection failed under
 */
#include <linux/ktime.h>
#include <linux/random.h>
#include <linux/scatterlist.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include "mmt_proto.h"

/* ------------------------------------------------------------ sender */

struct mmt_tx_slot {
	bool busy;		/* closure posted, not yet acked */
	u32 index;
	u8 *bounce;		/* secure: ciphertext + tag */
	u8 *head;		/* MMT: header + sealed root */
	struct mmt_fab_src *src;	/* the fabric's: its writes */
};

struct mmt_tx {
	struct mmt_conn *conn;
	struct mmt_pmo *pmo;
	u32 channel;
	bool copy;
	bool plain;		/* the PMO is plain memory (no key) */
	u32 gen;
	u8 rx_nonce[MMT_RX_NONCE_BYTES];	/* MMT: the receive's (GRANT) */
	u8 tx_nonce[MMT_RX_NONCE_BYTES];	/* this transfer's (OFFER) */
	bool have_nonce;
	u32 n;			/* closures */
	u32 nslots;
	size_t region_bytes;	/* bytes written per closure (sections) */
	struct mmt_chan_crypto *chan;	/* secure: this transfer's AES-GCM */
	struct mmt_tx_slot slots[MMT_CONN_WINDOW];
	u32 posted;
	u32 acked;
	u32 accepted;
	int stop;		/* first error: no more posting */
};

static void mmt_tx_free(struct mmt_tx *tx)
{
	struct mmt_conn *conn = tx->conn;
	u32 i;

	for (i = 0; i < tx->nslots; i++) {
		struct mmt_tx_slot *s = &tx->slots[i];

		conn->fab->src_free(s->src);
		kfree(s->head);
		if (s->bounce)
			kvfree_sensitive(s->bounce, tx->region_bytes);
	}
	mmt_chan_crypto_free(tx->chan);
}

static int mmt_tx_alloc(struct mmt_tx *tx)
{
	struct mmt_conn *conn = tx->conn;
	const struct mmt_params *p = &tx->pmo->params;
	u32 i;

	tx->nslots = min_t(u32, MMT_CONN_WINDOW, tx->n);
	tx->region_bytes = mmt_conn_region_bytes(p, tx->channel);
	for (i = 0; i < tx->nslots; i++) {
		struct mmt_tx_slot *s = &tx->slots[i];
		struct mmt_fab_src *src;

		if (tx->channel == MMT_CHANNEL_MMT) {
			s->head = kzalloc(MMT_CONN_HEAD_BYTES,
					  GFP_KERNEL_ACCOUNT);
			if (!s->head)
				return -ENOMEM;
		} else if (tx->channel == MMT_CHANNEL_SECURE) {
			s->bounce = kvzalloc(tx->region_bytes,
					     MMT_GFP_USER_SIZED);
			if (!s->bounce)
				return -ENOMEM;
		}
		/* MMT and plain: straight from the PMO's memory */
		src = conn->fab->src_alloc(conn, s->head, s->bounce,
					   tx->region_bytes);
		if (IS_ERR(src))
			return PTR_ERR(src);
		s->src = src;
	}
	return 0;
}

/* A GRANT for closure @m->index arrived: build and post it. */
static int mmt_tx_grant(struct mmt_tx *tx, const struct mmt_msg *m)
{
	struct mmt_conn *conn = tx->conn;
	struct mmt_pmo *pmo = tx->pmo;
	const struct mmt_wire_msg *w = &m->wire;
	struct mmt_tx_slot *s = &tx->slots[m->index % tx->nslots];
	const struct mmt_fabric_ops *fab = conn->fab;
	const struct mmt_wire_seg *head_seg = NULL;
	u32 nsegs = w->nsegs, notice;
	int err;

	if (m->index != tx->posted || m->index >= tx->n || s->busy || !nsegs)
		return -EPROTO;
	if (tx->channel == MMT_CHANNEL_MMT &&
	    (w->head_seg != nsegs - 1 ||
	     le32_to_cpu(w->segs[nsegs - 1].len) != MMT_CONN_HEAD_BYTES))
		return -EPROTO;
	/* One receive, one nonce: every closure is sealed for it. */
	if (tx->channel == MMT_CHANNEL_MMT) {
		if (!tx->have_nonce) {
			memcpy(tx->rx_nonce, w->nonce, sizeof(tx->rx_nonce));
			tx->have_nonce = true;
		} else if (memcmp(tx->rx_nonce, w->nonce,
				  sizeof(tx->rx_nonce))) {
			return -EPROTO;
		}
	}
	/* The slot's previous write must have completed. */
	err = fab->src_wait(s->src, mmt_timeout(0));
	if (err)
		return err;
	notice = (tx->gen & 0xff) << MMT_IMM_INDEX_BITS | m->index;
	if (tx->channel == MMT_CHANNEL_MMT) {
		u8 *mem = pmo->mem + (size_t)m->index * pmo->stride;

		err = mmt_conn_tx_build(pmo, conn->conn_id, tx->gen,
					tx->rx_nonce, conn->peer_node,
					m->index, tx->copy, s->head);
		if (err)
			return err;
		err = fab->src_map(s->src, mem, tx->region_bytes);
		if (err) {
			mmt_conn_tx_settle(pmo, m->index, tx->copy,
					   -ECANCELED);
			return err;
		}
		head_seg = &w->segs[--nsegs];
	} else if (tx->channel == MMT_CHANNEL_PLAIN) {
		/* plain memory: its bytes as they are, no bounce, no crypto */
		err = fab->src_map(s->src, pmo->mmts[m->index].data,
				   tx->region_bytes);
		if (err)
			return err;
	} else {
		err = mmt_conn_sec_seal(pmo, tx->plain, tx->chan, tx->gen,
					m->index, s->bounce);
		if (err)
			return err;
	}
	s->busy = true;
	s->index = m->index;
	tx->posted++;
	return fab->src_write(s->src, tx->region_bytes, w->segs, nsegs,
			      head_seg, notice);
}

/* The transfer's binding as its ACKs and the receiver's statement name it. */
static void mmt_tx_bind(struct mmt_tx *tx, struct mmt_bind *b)
{
	memset(b, 0, sizeof(*b));
	b->conn_id = tx->conn->conn_id;
	b->gen = tx->gen;
	b->sender_node = mmt_node_id();
	b->receiver_node = tx->conn->peer_node;
	b->dir = tx->conn->accepted ? 1 : 0;
	memcpy(b->rx_nonce, tx->rx_nonce, sizeof(b->rx_nonce));
	memcpy(b->tx_nonce, tx->tx_nonce, sizeof(b->tx_nonce));
}

/*
 * Is an MMT-channel acceptance genuine: the receive's nonce and the tag of
 * "accepted" for this closure under the PMO's key?  A rejection is taken
 * as it comes: a receiver under another key (EBADMSG) cannot make a tag
 * the sender can check, so no rejection can be required to prove itself
 * under the PMO's key.  The price: an on-path attacker who forges the
 * rejection of a closure the receiver took in leaves two copies, both
 * writable, under different GUAs (docs/ENGINE.md "Lost ack").
 */
static bool mmt_tx_ack_genuine(struct mmt_tx *tx, const struct mmt_msg *m)
{
	struct mmt_bind b;

	if (tx->channel != MMT_CHANNEL_MMT || m->err)
		return true;
	if (!tx->have_nonce)
		return false;
	mmt_tx_bind(tx, &b);
	return mmt_conn_ack_genuine(tx->pmo, &b, m, 0);
}

/* An ACK for the oldest posted closure arrived. */
static int mmt_tx_ack(struct mmt_tx *tx, const struct mmt_msg *m)
{
	struct mmt_tx_slot *s = &tx->slots[m->index % tx->nslots];

	if (m->index != tx->acked || !s->busy || s->index != m->index)
		return -EPROTO;
	/*
	 * A verdict that does not authenticate: outcome unknown.  The
	 * transfer is aborted, which leaves this closure of unknown outcome
	 * (mmt_tx_abort()), never settled as delivered or refused.
	 */
	if (!mmt_tx_ack_genuine(tx, m)) {
		/* killed while waiting for the PMO's lock: not a forgery */
		if (fatal_signal_pending(current))
			return -EINTR;
		pr_info_ratelimited("conn %llx: closure %u: a verdict that does not authenticate\n",
				    tx->conn->conn_id, m->index);
		atomic64_inc(&mmt_stats.ack_forged);
		return -EPROTO;
	}
	/* The fabric is done with the slot's buffers before the MMT changes. */
	tx->conn->fab->src_wait(s->src, mmt_timeout(0));
	if (tx->channel == MMT_CHANNEL_MMT)
		mmt_conn_tx_settle(tx->pmo, m->index, tx->copy, m->err);
	s->busy = false;
	tx->acked++;
	if (!m->err)
		tx->accepted++;
	else if (!tx->stop)
		tx->stop = m->err;
	return 0;
}

/*
 * The connection failed under a transfer: stop it (drain: the NIC no
 * longer touches any buffer), then settle every closure posted and not
 * acked.  Their outcome is unknown: the receiver may have taken them in
 * and lost only the ACKs.  In copy mode they go back to VALID (the
 * receiver's copy is read-only); in transfer mode the PMO stays read-only
 * until the receiver's statement or its owner resolves it
 * (mmt_delegate_unknown()).
 */
static void mmt_tx_abort(struct mmt_tx *tx, int err)
{
	struct mmt_bind b;
	u32 i;

	mmt_conn_fail(tx->conn, err);
	tx->conn->fab->shutdown(tx->conn);
	for (i = 0; i < tx->nslots; i++)
		tx->conn->fab->src_idle(tx->slots[i].src);
	if (tx->channel == MMT_CHANNEL_MMT && tx->copy) {
		for (i = tx->acked; i < tx->posted; i++)
			mmt_conn_tx_settle(tx->pmo, i, true, err);
	}
	if (tx->channel == MMT_CHANNEL_MMT && !tx->copy &&
	    tx->acked < tx->posted) {
		mmt_tx_bind(tx, &b);
		mmt_delegate_unknown(tx->pmo, tx->acked, tx->posted, &b);
		pr_info_ratelimited("conn %llx: transfer aborted with closures %u..%u of unknown outcome: the PMO is read-only until resolved\n",
				    tx->conn->conn_id, tx->acked,
				    tx->posted - 1);
	}
}

/* MMT_IOC_SEND of @pmo on @conn: the sending side of a transfer. */
int mmt_conn_do_send(struct mmt_conn *conn, struct mmt_pmo *pmo,
		     struct mmt_xfer *x)
{
	unsigned long timeout = mmt_timeout(x->timeout_ms);
	struct mmt_tx *tx;
	struct mmt_wire_msg w;
	bool end_sent = false, plain;
	u64 t0;
	u32 i;
	int err;

	if (pmo->closures >= MMT_CONN_MAX_CLOSURES)
		return -E2BIG;
	/* Generations never repeat on a connection: no wrap. */
	if (conn->tx_gen == U32_MAX)
		return -EOVERFLOW;
	err = mmt_conn_tx_check(pmo, x->channel, &plain);
	if (err)
		return err;
	tx = kzalloc(sizeof(*tx), GFP_KERNEL_ACCOUNT);
	if (!tx) {
		mmt_conn_xfer_end(pmo, plain);
		return -ENOMEM;
	}
	tx->conn = conn;
	tx->pmo = pmo;
	tx->plain = plain;
	tx->channel = x->channel;
	tx->copy = x->flags & MMT_XFER_COPY;
	tx->n = pmo->closures;
	tx->gen = ++conn->tx_gen;
	err = mmt_tx_alloc(tx);
	if (err)
		goto out;
	if (tx->channel == MMT_CHANNEL_SECURE) {
		struct mmt_conn_sec_id id = {
			.conn_id = conn->conn_id,
			.sender_node = mmt_node_id(),
			.receiver_node = conn->peer_node,
			.dir = conn->accepted ? 1 : 0,
			.gen = tx->gen,
		};

		tx->chan = mmt_conn_sec_alloc(pmo, plain, mmt_conn_root(conn),
					      &id);
		if (IS_ERR(tx->chan)) {
			err = PTR_ERR(tx->chan);
			tx->chan = NULL;
			goto out;
		}
	}

	t0 = ktime_get_ns();
	mmt_wire_offer_fill(&w, pmo, x->channel, tx->copy, plain);
	w.gen = cpu_to_le32(tx->gen);
	get_random_bytes_wait(tx->tx_nonce, sizeof(tx->tx_nonce));
	memcpy(w.nonce, tx->tx_nonce, sizeof(w.nonce));
	err = conn->fab->post_msg(conn, &w);
	if (err)
		goto out_abort;
	for (;;) {
		struct mmt_inbox_item *it;

		if (!end_sent && (tx->stop || tx->posted == tx->n)) {
			err = mmt_tx_send_simple(conn, MMT_MSG_END, tx->gen,
						 tx->posted, 0);
			if (err)
				goto out_abort;
			end_sent = true;
		}
		if (end_sent && tx->acked == tx->posted)
			break;
		it = mmt_inbox_wait(conn, &conn->tx_inbox, timeout);
		if (IS_ERR(it)) {
			err = PTR_ERR(it);
			goto out_abort;
		}
		err = 0;
		if (it->msg.gen != tx->gen) {
			kfree(it);	/* left over from an earlier transfer */
			continue;
		}
		switch (it->msg.type) {
		case MMT_MSG_NACK:
			err = it->msg.err ? it->msg.err : -EPROTO;
			if (tx->posted) {
				err = -EPROTO;
				break;
			}
			kfree(it);
			goto out;
		case MMT_MSG_GRANT:
			if (!tx->stop && !end_sent)
				err = mmt_tx_grant(tx, &it->msg);
			/*
			 * This closure could not be sealed, mapped (or,
			 * secure channel, read back): not sent, still
			 * VALID; stop cleanly and tell the receiver with
			 * END.
			 */
			if (err == -EPERM || err == -EOVERFLOW ||
			    err == -ENOMEM || err == -EBADMSG) {
				tx->stop = err;
				err = 0;
			}
			break;
		case MMT_MSG_ACK:
			err = mmt_tx_ack(tx, &it->msg);
			break;
		default:
			err = -EPROTO;
			break;
		}
		kfree(it);
		if (err)
			goto out_abort;
	}
	for (i = 0; i < tx->nslots; i++)
		conn->fab->src_idle(tx->slots[i].src);
	mmt_conn_flush_msgs(conn, timeout);	/* the END */
	err = tx->stop;
	x->closures = tx->accepted;
	x->bytes = (u64)tx->accepted * pmo->params.data_bytes;
	x->ns = ktime_get_ns() - t0;
	goto out;

out_abort:
	pr_info_ratelimited("conn %llx: send aborted after %u of %u closures: %d\n",
			    conn->conn_id, tx->acked, tx->n, err);
	/* The connection ends; the user sees why in uAPI terms. */
	if (err != -ETIMEDOUT && err != -EINTR)
		err = -ECONNRESET;
	mmt_tx_abort(tx, err == -EINTR ? -ECONNRESET : err);
	x->closures = tx->accepted;
	x->bytes = (u64)tx->accepted * pmo->params.data_bytes;
out:
	mmt_tx_free(tx);
	kfree(tx);
	mmt_conn_xfer_end(pmo, plain);
	return err;
}
