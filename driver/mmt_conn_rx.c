// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_conn_rx.c - the receiving side of a transfer (MMT_IOC_RECV):
 * GRANTs of fast-registered window slots, invalidation after the sender's
 * notice, the check of each closure, ACKs and the receive's end
 */
#include <linux/ktime.h>
#include <linux/random.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>

#include "mmt_proto.h"

/* ------------------------------------------------------------ receiver */

/* The receive's binding, as its ACKs and its statement name it. */
static void mmt_rx_bind(struct mmt_rx *rx, struct mmt_bind *b)
{
	memset(b, 0, sizeof(*b));
	b->conn_id = rx->conn->conn_id;
	b->gen = rx->gen;
	b->sender_node = rx->conn->peer_node;
	b->receiver_node = mmt_node_id();
	b->dir = rx->conn->accepted ? 0 : 1;	/* the sender's */
	memcpy(b->rx_nonce, rx->nonce, sizeof(b->rx_nonce));
	memcpy(b->tx_nonce, rx->tx_nonce, sizeof(b->tx_nonce));
}

/* Free what mmt_rx_alloc() allocated (the slots, buffers). */
void mmt_rx_free(struct mmt_rx *rx)
{
	u32 i;

	for (i = 0; i < rx->nslots; i++) {
		struct mmt_rx_slot *s = &rx->slots[i];

		rx->conn->fab->sink_free(s->sink);
		kfree(s->head);
		if (s->bounce)	/* secure: ciphertext */
			kvfree_sensitive(s->bounce, rx->region_bytes);
	}
	if (rx->priv)
		kvfree_sensitive(rx->priv, rx->region_bytes);
	mmt_chan_crypto_free(rx->chan);
}

/* Allocate a receive's window slots and their buffers. */
int mmt_rx_alloc(struct mmt_rx *rx)
{
	const struct mmt_params *p = &rx->pmo->params;
	struct mmt_conn *conn = rx->conn;
	u32 i;

	rx->nslots = min_t(u32, rx->window ? rx->window : MMT_CONN_WINDOW,
			   rx->n);
	rx->region_bytes = mmt_conn_region_bytes(p, rx->channel);
	if (rx->channel == MMT_CHANNEL_SECURE) {
		rx->priv = kvmalloc(rx->region_bytes, MMT_GFP_USER_SIZED);
		if (!rx->priv)
			return -ENOMEM;
	}
	for (i = 0; i < rx->nslots; i++) {
		struct mmt_rx_slot *s = &rx->slots[i];
		struct mmt_fab_sink *sink;

		if (rx->channel == MMT_CHANNEL_MMT) {
			s->head = kzalloc(MMT_CONN_HEAD_BYTES,
					  GFP_KERNEL_ACCOUNT);
			if (!s->head)
				return -ENOMEM;
		} else if (rx->channel == MMT_CHANNEL_SECURE) {
			s->bounce = kvzalloc(rx->region_bytes,
					     MMT_GFP_USER_SIZED);
			if (!s->bounce)
				return -ENOMEM;
		}
		sink = conn->fab->sink_alloc(conn, rx->region_bytes, s->head);
		if (IS_ERR(sink))
			return PTR_ERR(sink);
		s->sink = sink;
	}
	return 0;
}

/* Make closure @index's receive area writable in @s and send its GRANT. */
int mmt_rx_grant(struct mmt_rx *rx, struct mmt_rx_slot *s, u32 index)
{
	struct mmt_pmo *pmo = rx->pmo;
	struct mmt_wire_msg *w;
	void *area;
	int err;

	w = kzalloc(sizeof(*w), GFP_KERNEL_ACCOUNT);
	if (!w)
		return -ENOMEM;
	w->type = MMT_MSG_GRANT;
	w->gen = cpu_to_le32(rx->gen);
	if (rx->channel == MMT_CHANNEL_MMT)
		memcpy(w->nonce, rx->nonce, sizeof(w->nonce));
	w->index = cpu_to_le32(index);
	w->bytes = cpu_to_le64(rx->region_bytes);
	/* MMT: the closure's sections; plain: its data; secure: a bounce */
	area = rx->channel == MMT_CHANNEL_SECURE ? (void *)s->bounce :
		pmo->mem + (size_t)index * pmo->stride;
	s->granted = true;
	s->index = index;
	err = rx->conn->fab->sink_grant(s->sink, area, rx->region_bytes, w);
	kfree(w);
	return err;
}

/*
 * Revoke the peer's access to @s and wait: after this no remote write can
 * land in the slot's memory, and the CPU sees what landed.
 */
int mmt_rx_invalidate(struct mmt_rx *rx, struct mmt_rx_slot *s)
{
	int err;

	if (!s->granted)
		return 0;
	err = rx->conn->fab->sink_invalidate(s->sink);
	if (!err)
		s->granted = false;
	return err;
}

/*
 * ACK(*@verdict) for closure @index; on the MMT channel with the receive's
 * nonce and a tag over both (mmt_conn_ack_tag()), so that only a holder of
 * the key can tell the sender its closure was accepted.  *@verdict is what
 * was sent (an acceptance may become -EPERM, below).
 */
int mmt_rx_send_ack(struct mmt_rx *rx, u32 index, u64 root_counter,
		    int *verdict)
{
	struct mmt_wire_msg w = {};
	int err;

	w.type = MMT_MSG_ACK;
	w.gen = cpu_to_le32(rx->gen);
	w.index = cpu_to_le32(index);
	if (rx->channel == MMT_CHANNEL_MMT) {
		struct mmt_bind b;

		mmt_rx_bind(rx, &b);
		memcpy(w.nonce, rx->nonce, sizeof(w.nonce));
		/*
		 * An acceptance the PMO can no longer prove (invalidated
		 * since the check: what it accepted is gone) becomes a
		 * rejection, -EPERM.
		 */
		if (!*verdict) {
			err = mmt_conn_ack_tag(rx->pmo, &b, index,
					       root_counter, 0, w.tag);
			if (err == -ENOKEY)
				*verdict = -EPERM;
			else if (err)
				return err;
		}
		/*
		 * A rejection is tagged too, from a transfer's own copy of
		 * the keying root (so also after the PMO lost its key), though
		 * the sender takes one without proof (mmt_tx_ack_genuine());
		 * a migration's goes untagged when the PMO has no key.
		 */
		if (*verdict && rx->have_key) {
			err = mmt_conn_ack_tag_root(rx->key_root, &b, index, 0,
						    *verdict, w.tag);
			if (err)
				return err;
		} else if (*verdict) {
			mmt_conn_ack_tag(rx->pmo, &b, index, 0, *verdict,
					 w.tag);
		}
	}
	w.err = cpu_to_le32(-*verdict);
	return rx->conn->fab->post_msg(rx->conn, &w);
}

/* A DONE notice for closure @index: invalidate, check, ack, grant next. */
static int mmt_rx_done(struct mmt_rx *rx, const struct mmt_msg *m)
{
	struct mmt_rx_slot *s = &rx->slots[m->index % rx->nslots];
	u8 head[MMT_CONN_HEAD_BYTES];
	int verdict, err;

	if (m->gen != (rx->gen & 0xff) || m->index != rx->done ||
	    !s->granted || s->index != m->index)
		return -EPROTO;
	err = mmt_rx_invalidate(rx, s);
	if (err)
		return err;
	rx->done++;
	if (rx->stop) {
		verdict = -ECANCELED;
	} else if (rx->channel == MMT_CHANNEL_MMT) {
		memcpy(head, s->head, sizeof(head));
		mmt_conn_fault_rx(rx->pmo, m->index, head);
		verdict = mmt_conn_rx_check(rx->pmo, m->index, rx->gen,
					    rx->nonce, head,
					    rx->conn->peer_node, rx->eager);
	} else if (rx->channel == MMT_CHANNEL_SECURE) {
		/* copy in, open; into a plain PMO or the controller */
		verdict = mmt_conn_sec_open(rx->pmo, rx->plain, rx->chan,
					    rx->gen, m->index, s->bounce,
					    rx->priv);
	} else {
		verdict = 0;	/* plain: the bytes are in place, unchecked */
	}
	/*
	 * Killed while waiting for the PMO's lock: the closure was not
	 * looked at, so there is no verdict to send; the receive is aborted
	 * as a kill during any of its waits is.
	 */
	if (verdict == -EINTR)
		return -EINTR;
	err = mmt_rx_send_ack(rx, m->index, 0, &verdict);
	if (!verdict)
		rx->accepted++;
	else if (!rx->stop)
		rx->stop = verdict;
	if (err)
		return err;
	if (!rx->stop && rx->granted < rx->n) {
		err = mmt_rx_grant(rx, s, rx->granted);
		if (err)
			return err;
		rx->granted++;
	}
	return 0;
}

/* MMT_IOC_RECV once mmt_conn_rx_prepare() took @pmo (@plain: no key). */
int mmt_conn_do_recv_prepared(struct mmt_conn *conn,
			      struct mmt_pmo *pmo, struct mmt_xfer *x,
			      bool plain)
{
	unsigned long timeout = mmt_timeout(x->timeout_ms);
	struct mmt_inbox_item *it;
	struct mmt_rx *rx;
	bool end, copy;
	u64 t0;
	u32 i;
	int err;

	/* Known before the offer: a plain PMO needs the connection's key. */
	if (x->channel == MMT_CHANNEL_SECURE && plain && !mmt_conn_root(conn))
		return -ENOKEY;
	/* Wait for an OFFER; anything else is left over from before. */
	for (;;) {
		it = mmt_inbox_wait(conn, &conn->rx_inbox, timeout);
		if (IS_ERR(it))
			return PTR_ERR(it);
		if (it->msg.type == MMT_MSG_OFFER)
			break;
		kfree(it);
	}
	t0 = ktime_get_ns();
	err = mmt_wire_offer_check(&it->msg, pmo, x->channel, plain);
	if (!err && pmo->closures >= MMT_CONN_MAX_CLOSURES)
		err = -E2BIG;
	/*
	 * Generations rise on the connection: an MMT closure carries its
	 * transfer's generation (rule 4c, so none of an earlier transfer is
	 * accepted) and a secure transfer's key is bound to it.  An offer
	 * that does not rise is a replay: -ESTALE.
	 */
	if (!err && it->msg.gen <= conn->rx_gen)
		err = -ESTALE;
	if (!err)
		conn->rx_gen = it->msg.gen;
	if (err) {
		mmt_tx_send_simple(conn, MMT_MSG_NACK, it->msg.gen, 0, err);
		kfree(it);
		mmt_conn_flush_msgs(conn, timeout);
		return err;
	}
	rx = kzalloc(sizeof(*rx), GFP_KERNEL_ACCOUNT);
	if (!rx) {
		mmt_tx_send_simple(conn, MMT_MSG_NACK, it->msg.gen, 0,
				   -ENOMEM);
		kfree(it);
		return -ENOMEM;
	}
	rx->conn = conn;
	rx->pmo = pmo;
	rx->channel = x->channel;
	rx->plain = plain;
	rx->eager = x->flags & MMT_XFER_EAGER;
	rx->gen = it->msg.gen;
	get_random_bytes_wait(rx->nonce, sizeof(rx->nonce));
	memcpy(rx->tx_nonce, it->msg.wire.nonce, sizeof(rx->tx_nonce));
	rx->n = pmo->closures;
	copy = le32_to_cpu(it->msg.wire.flags) & MMT_XFER_COPY;
	kfree(it);
	/*
	 * An MMT-channel receive is recorded while it runs and, once it can
	 * take nothing more in, with the closures it took in: a sender that
	 * lost the last ACKs asks for it (MMT_IOC_MIGRATE_RESOLVE).  A PMO
	 * invalidated while the OFFER was awaited (no key, or keyed again:
	 * not the sender's keying root) is refused now, with a NACK before
	 * any grant: its rejections could not be proven to the sender, whose
	 * PMO would stay read-only with nothing to resolve it.
	 */
	err = 0;
	if (rx->channel == MMT_CHANNEL_MMT && !plain) {
		if (mutex_lock_killable(&pmo->lock)) {
			err = -EINTR;
		} else {
			if (pmo->crypto && !pmo->rx_lost) {
				memcpy(rx->key_root, pmo->key_root,
				       sizeof(rx->key_root));
				rx->have_key = true;
			} else {
				err = -EPERM;
			}
			mutex_unlock(&pmo->lock);
		}
		/* A copy never leaves its sender in doubt: not recorded. */
		if (!err && !copy) {
			mmt_rx_record(rx->nonce, MMT_MIG_OUTCOME_PENDING, 0,
				      NULL);
			rx->record = true;
		}
	}
	if (!err)
		err = mmt_rx_alloc(rx);
	if (!err && rx->channel == MMT_CHANNEL_SECURE) {
		struct mmt_conn_sec_id id = {
			.conn_id = conn->conn_id,
			.sender_node = conn->peer_node,
			.receiver_node = mmt_node_id(),
			.dir = conn->accepted ? 0 : 1,	/* the sender's */
			.gen = rx->gen,
		};

		rx->chan = mmt_conn_sec_alloc(pmo, plain, mmt_conn_root(conn),
					      &id);
		if (IS_ERR(rx->chan)) {
			err = PTR_ERR(rx->chan);
			rx->chan = NULL;
		}
	}
	if (err) {
		mmt_tx_send_simple(conn, MMT_MSG_NACK, rx->gen, 0, err);
		mmt_conn_flush_msgs(conn, timeout);
		goto out;
	}
	for (i = 0; i < rx->nslots; i++) {
		err = mmt_rx_grant(rx, &rx->slots[i], rx->granted);
		if (err)
			goto out_abort;
		rx->granted++;
	}
	for (;;) {
		it = mmt_inbox_wait(conn, &conn->rx_inbox, timeout);
		if (IS_ERR(it)) {
			err = PTR_ERR(it);
			goto out_abort;
		}
		end = it->msg.type == MMT_MSG_END;
		if (end && it->msg.gen != rx->gen) {
			kfree(it);	/* an earlier transfer's END */
			continue;
		}
		if (end)
			err = it->msg.index == rx->done ? 0 : -EPROTO;
		else if (it->msg.type == MMT_MSG_DONE)
			err = mmt_rx_done(rx, &it->msg);
		else
			err = -EPROTO;
		kfree(it);
		if (err)
			goto out_abort;
		/* Every closure handled: no grant left, END not needed. */
		if (end || rx->done == rx->n)
			break;
	}
	/* The sender writes no more: withdraw what is still granted. */
	for (i = 0; i < rx->nslots; i++) {
		err = mmt_rx_invalidate(rx, &rx->slots[i]);
		if (err)
			goto out_abort;
	}
	err = rx->stop;
	if (!err && rx->accepted != rx->n)
		err = -ECANCELED;	/* the sender stopped early */
	x->closures = rx->accepted;
	x->bytes = (u64)rx->accepted * pmo->params.data_bytes;
	x->ns = ktime_get_ns() - t0;
	mmt_conn_flush_msgs(conn, timeout);
	goto out;

out_abort:
	pr_info_ratelimited("conn %llx: receive aborted after %u of %u closures: %d\n",
			    conn->conn_id, rx->done, rx->n, err);
	/* After the drain no write can land; the rest stays WAITING. */
	if (err != -ETIMEDOUT)
		err = err == -EINTR ? -EINTR : -ECONNRESET;
	mmt_conn_fail(conn, err == -EINTR ? -ECONNRESET : err);
	conn->fab->shutdown(conn);
	for (i = 0; i < rx->nslots; i++)
		conn->fab->sink_idle(rx->slots[i].sink);
	x->closures = rx->accepted;
	x->bytes = (u64)rx->accepted * pmo->params.data_bytes;
out:
	/* No DONE is handled after this point: the count is final. */
	if (rx->record) {
		struct mmt_bind b;

		mmt_rx_bind(rx, &b);
		mmt_xfer_record_end(rx->have_key ? rx->key_root : NULL, &b,
				    rx->accepted);
	}
	mmt_rx_free(rx);
	kfree_sensitive(rx);	/* the keying root's copy */
	return err;
}

/**
 * mmt_conn_do_recv() - receive one transfer into @pmo (MMT_IOC_RECV)
 * @conn: a LIVE connection; caller holds conn->rx_mutex
 * @pmo: the receiving PMO
 * @x: the call's argument, checked (mmt_conn_xfer_args()); its outputs
 *	are set
 *
 * The PMO is this receive's alone from mmt_conn_rx_prepare() to
 * mmt_conn_rx_finish(): another receive into it gets -EBUSY.
 *
 * Context: process; may sleep.
 * Return: 0, or the errors MMT_IOC_RECV lists in uapi/mmt.h.
 */
int mmt_conn_do_recv(struct mmt_conn *conn, struct mmt_pmo *pmo,
		     struct mmt_xfer *x)
{
	bool plain;
	int err;

	err = mmt_conn_rx_prepare(pmo, x->channel, conn->conn_id, &plain);
	if (err)
		return err;
	err = mmt_conn_do_recv_prepared(conn, pmo, x, plain);
	mmt_conn_rx_finish(pmo, plain);
	return err;
}
