// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_tx_rdma.c - the sending side of a transfer (MMT_IOC_SEND):
 * OFFER, RDMA writes of each closure into the receiver's grants, ACKs, END
 * and the abort of a transfer its connection failed under
 */
#include <linux/ktime.h>
#include <linux/random.h>
#include <linux/scatterlist.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include "mmt_rdma.h"

/* ------------------------------------------------------------ sender */

struct mmt_tx_slot {
	bool busy;		/* closure posted, not yet acked */
	u32 index;
	struct mmt_sgl region;	/* MMT, plain: the PMO's closure memory */
	struct mmt_sgl bounce_map;	/* secure: the bounce buffer */
	u8 *bounce;		/* secure: ciphertext + tag */
	u8 *head;		/* MMT: header + sealed root */
	u64 head_dma;
	struct mmt_wait_cqe wcqe;	/* the WRITE_WITH_IMM */
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

		mmt_unmap(conn, &s->region);
		mmt_unmap(conn, &s->bounce_map);
		if (s->head_dma)
			ib_dma_unmap_single(conn->dev, s->head_dma,
					    MMT_CONN_HEAD_BYTES,
					    DMA_TO_DEVICE);
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
	int err;

	tx->nslots = min_t(u32, MMT_CONN_WINDOW, tx->n);
	if (tx->channel == MMT_CHANNEL_MMT) {
		tx->region_bytes = p->data_bytes + p->macs_bytes +
				   p->nodes_bytes;
	} else if (tx->channel == MMT_CHANNEL_SECURE) {
		tx->region_bytes = p->data_bytes + MMT_CONN_SEC_TAG_BYTES;
	} else {
		tx->region_bytes = p->data_bytes;
	}
	for (i = 0; i < tx->nslots; i++) {
		struct mmt_tx_slot *s = &tx->slots[i];

		mmt_wait_cqe_init(&s->wcqe, conn);
		if (tx->channel == MMT_CHANNEL_PLAIN)
			continue;	/* straight from the PMO's memory */
		if (tx->channel == MMT_CHANNEL_MMT) {
			s->head = kzalloc(MMT_CONN_HEAD_BYTES,
					  GFP_KERNEL_ACCOUNT);
			if (!s->head)
				return -ENOMEM;
			s->head_dma = ib_dma_map_single(conn->dev, s->head,
							MMT_CONN_HEAD_BYTES,
							DMA_TO_DEVICE);
			if (ib_dma_mapping_error(conn->dev, s->head_dma)) {
				s->head_dma = 0;
				return -ENOMEM;
			}
		} else {
			s->bounce = kvzalloc(tx->region_bytes,
					     MMT_GFP_USER_SIZED);
			if (!s->bounce)
				return -ENOMEM;
			err = mmt_map(conn, s->bounce, tx->region_bytes,
				      &s->bounce_map);
			if (err)
				return err;
		}
	}
	return 0;
}

/*
 * Build the RDMA writes of @len bytes from @local (mapped) to the remote
 * segments @segs, split at segment boundaries and at conn->max_sge SGEs.
 * The last WR is a WRITE_WITH_IMM with @imm, signaled with @wait, unless
 * @head_sge is given: then a last WRITE_WITH_IMM of that SGE goes to
 * @head_seg.  Everything is posted at once.
 */
int mmt_tx_post_writes(struct mmt_conn *conn, struct mmt_sgl *local,
		       size_t len, const struct mmt_wire_seg *segs,
		       u32 nsegs, struct ib_sge *head_sge,
		       const struct mmt_wire_seg *head_seg, u32 imm,
		       struct mmt_wait_cqe *wait)
{
	u32 max_wr = local->nents + nsegs + 2;
	struct ib_rdma_wr *wrs;
	struct ib_sge *sges;
	struct scatterlist *sg = local->sgt.sgl;
	u32 sg_left = local->nents, nwr = 0, nsge = 0, seg = 0;
	u64 sg_off = 0, seg_off = 0, total = 0;
	int err;

	for (seg = 0; seg < nsegs; seg++) {
		if (!segs[seg].len)
			return -EPROTO;	/* zero-length SGEs are refused */
		total += le32_to_cpu(segs[seg].len);
	}
	if (total != len)
		return -EPROTO;
	/*
	 * Charged to the caller's group, but without __GFP_RETRY_MAYFAIL:
	 * a failure here comes after the closure was counted as posted.
	 */
	wrs = kcalloc(max_wr, sizeof(*wrs), GFP_KERNEL_ACCOUNT);
	sges = kcalloc(local->nents + nsegs + 1, sizeof(*sges),
		       GFP_KERNEL_ACCOUNT);
	if (!wrs || !sges) {
		err = -ENOMEM;
		goto out;
	}
	seg = 0;
	while (total) {
		struct ib_rdma_wr *w = &wrs[nwr];
		u64 seg_left = le32_to_cpu(segs[seg].len) - seg_off;

		w->wr.opcode = IB_WR_RDMA_WRITE;
		w->wr.wr_cqe = &mmt_silent_cqe;
		w->wr.sg_list = &sges[nsge];
		w->remote_addr = le64_to_cpu(segs[seg].addr) + seg_off;
		w->rkey = le32_to_cpu(segs[seg].rkey);
		while (seg_left && w->wr.num_sge < conn->max_sge) {
			u64 ent = sg_dma_len(sg) - sg_off;
			u64 take = min(ent, seg_left);

			sges[nsge].addr = sg_dma_address(sg) + sg_off;
			sges[nsge].length = take;
			sges[nsge].lkey = conn->pd->local_dma_lkey;
			nsge++;
			w->wr.num_sge++;
			seg_left -= take;
			seg_off += take;
			total -= take;
			sg_off += take;
			if (sg_off == sg_dma_len(sg) && --sg_left) {
				sg = sg_next(sg);
				sg_off = 0;
			}
		}
		if (!seg_left) {
			seg++;
			seg_off = 0;
		}
		if (nwr)
			wrs[nwr - 1].wr.next = &w->wr;
		nwr++;
	}
	if (head_sge) {
		struct ib_rdma_wr *w = &wrs[nwr];

		w->wr.opcode = IB_WR_RDMA_WRITE_WITH_IMM;
		w->wr.sg_list = head_sge;
		w->wr.num_sge = 1;
		w->remote_addr = le64_to_cpu(head_seg->addr);
		w->rkey = le32_to_cpu(head_seg->rkey);
		if (nwr)
			wrs[nwr - 1].wr.next = &w->wr;
		nwr++;
	}
	wrs[nwr - 1].wr.opcode = IB_WR_RDMA_WRITE_WITH_IMM;
	wrs[nwr - 1].wr.ex.imm_data = cpu_to_be32(imm);
	wrs[nwr - 1].wr.send_flags = IB_SEND_SIGNALED;
	wrs[nwr - 1].wr.wr_cqe = &wait->cqe;
	/* counted until its completion: see mmt_conn_send_msg() */
	mutex_lock(&conn->post_mutex);
	atomic_inc(&conn->writes_out);
	wait->sq_counted = true;
	err = ib_post_send(conn->qp, &wrs[0].wr, NULL);
	if (err) {
		wait->sq_counted = false;
		atomic_dec(&conn->writes_out);
		mmt_conn_fail(conn, -ECONNRESET);
	}
	mutex_unlock(&conn->post_mutex);
out:
	kfree(wrs);
	kfree(sges);
	return err;
}

/* A GRANT for closure @m->index arrived: build and post it. */
static int mmt_tx_grant(struct mmt_tx *tx, const struct mmt_msg *m)
{
	struct mmt_conn *conn = tx->conn;
	struct mmt_pmo *pmo = tx->pmo;
	const struct mmt_wire_msg *w = &m->wire;
	struct mmt_tx_slot *s = &tx->slots[m->index % tx->nslots];
	u32 nsegs = w->nsegs, imm;
	struct ib_sge head_sge;
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
	/* The slot's previous WRITE_WITH_IMM must have completed. */
	err = mmt_wait_wr(conn, &s->wcqe, mmt_timeout(0));
	if (err)
		return err;
	mmt_unmap(conn, &s->region);
	imm = (tx->gen & 0xff) << MMT_IMM_INDEX_BITS | m->index;
	reinit_completion(&s->wcqe.done);
	if (tx->channel == MMT_CHANNEL_MMT) {
		u8 *mem = pmo->mem + (size_t)m->index * pmo->stride;

		err = mmt_conn_tx_build(pmo, conn->conn_id, tx->gen,
					tx->rx_nonce, conn->peer_node,
					m->index, tx->copy, s->head);
		if (!err) {
			err = mmt_map(conn, mem, tx->region_bytes, &s->region);
			if (err)
				mmt_conn_tx_settle(pmo, m->index, tx->copy,
						   -ECANCELED);
		}
		if (err) {
			complete(&s->wcqe.done);
			return err;
		}
		ib_dma_sync_single_for_device(conn->dev, s->head_dma,
					      MMT_CONN_HEAD_BYTES,
					      DMA_TO_DEVICE);
		head_sge.addr = s->head_dma;
		head_sge.length = MMT_CONN_HEAD_BYTES;
		head_sge.lkey = conn->pd->local_dma_lkey;
		s->busy = true;
		s->index = m->index;
		tx->posted++;
		err = mmt_tx_post_writes(conn, &s->region, tx->region_bytes,
					 w->segs, nsegs - 1, &head_sge,
					 &w->segs[nsegs - 1], imm,
					 &s->wcqe);
	} else if (tx->channel == MMT_CHANNEL_PLAIN) {
		/* plain memory: its bytes as they are, no bounce, no crypto */
		err = mmt_map(conn, pmo->mmts[m->index].data, tx->region_bytes,
			      &s->region);
		if (err) {
			complete(&s->wcqe.done);
			return err;
		}
		s->busy = true;
		s->index = m->index;
		tx->posted++;
		err = mmt_tx_post_writes(conn, &s->region, tx->region_bytes,
					 w->segs, nsegs, NULL, NULL, imm,
					 &s->wcqe);
	} else {
		err = mmt_conn_sec_seal(pmo, tx->plain, tx->chan, tx->gen,
					m->index, s->bounce);
		if (err) {
			complete(&s->wcqe.done);
			return err;
		}
		mmt_sync_for_device(conn, &s->bounce_map);
		s->busy = true;
		s->index = m->index;
		tx->posted++;
		err = mmt_tx_post_writes(conn, &s->bounce_map, tx->region_bytes,
					 w->segs, nsegs, NULL, NULL, imm,
					 &s->wcqe);
	}
	if (err)
		complete(&s->wcqe.done);	/* nothing was posted */
	return err;
}

/* The transfer's binding as its ACKs and the receiver's statement name it. */
static void mmt_tx_bind(struct mmt_tx *tx, struct mmt_bind *b)
{
	memset(b, 0, sizeof(*b));
	b->conn_id = tx->conn->conn_id;
	b->gen = tx->gen;
	b->sender_node = mmt_node_id();
	b->receiver_node = tx->conn->peer_node;
	b->dir = tx->conn->listener ? 1 : 0;
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
	/* The NIC is done with the slot's buffers before the MMT changes. */
	mmt_wait_wr(tx->conn, &s->wcqe, mmt_timeout(0));
	mmt_unmap(tx->conn, &s->region);
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
	mmt_conn_shutdown(tx->conn);
	for (i = 0; i < tx->nslots; i++)
		mmt_wait_idle(&tx->slots[i].wcqe);
	for (i = tx->acked; i < tx->posted; i++) {
		mmt_unmap(tx->conn, &tx->slots[i % tx->nslots].region);
		if (tx->channel == MMT_CHANNEL_MMT && tx->copy)
			mmt_conn_tx_settle(tx->pmo, i, tx->copy, err);
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
			.dir = conn->listener ? 1 : 0,
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
	err = mmt_conn_send_msg(conn, &w, NULL, NULL);
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
		mmt_wait_idle(&tx->slots[i].wcqe);
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
