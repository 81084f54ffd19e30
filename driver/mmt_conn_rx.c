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

/*
 * Eager receive on the I/O workers.  An eager MMT-channel receive checks
 * every tree node and data MAC of each closure before it accepts it; the
 * closures are independent subtrees, so with io_workers above 1 (0: the
 * CPUs online) those full checks run on the I/O workers' queue
 * (driver/mmt_pmo_io.c), several closures of the window at once, while
 * everything that orders closures stays in the receive's task and in
 * closure order:
 *
 *  - on a closure's DONE, under the PMO's lock: the receive rules 1 to 7
 *    in their order and the top-level nodes (mmt_conn_rx_begin()), the
 *    replay and reorder rules against the closure before it as if that
 *    one were accepted already (it is refused otherwise, and then this
 *    one is never committed);
 *  - on a worker, without the lock: mmt_closure_eager_verify() with the
 *    worker's own scratch and context (struct mmt_rx_verifier), on the
 *    private copy of the nodes and the data and MACs in place (the
 *    registration is invalidated: nothing writes them any more);
 *  - in closure order, in the receive's task (mmt_rx_par_settle()): the
 *    verdict applied under the PMO's lock (mmt_conn_rx_end(): WAITING ->
 *    VALID, the last root counter and GUA move on), then the ACK, then the
 *    next GRANT, as the serial receive sends them after each DONE.
 *
 * A closure refused (at its rules, its full check or its commit) stops
 * the receive as in the serial path: every later closure gets -ECANCELED
 * and none of them is committed, though their rules may have passed.
 * io_workers 1, a window of one slot, or a lazy or plain receive takes
 * the serial path (mmt_conn_rx_check()) unchanged.
 *
 * A secure-channel receive uses the same machinery (the slots' @pending,
 * @queued, @verdict, @checked and mmt_rx_par_settle()), with no eager
 * flag needed since every message is checked whole: on a closure's DONE,
 * its message is opened on a worker (mmt_conn_sec_decrypt(): copy into the
 * worker's private memory, decrypt, check the tag) with the worker's own
 * GCM context of the transfer's key and binding; then, in closure order
 * in the receive's task, mmt_conn_sec_commit() checks the index against
 * the transfer's own context's sequence state (-ESTALE for one not above
 * the last opened, as mmt_chan_open() refuses it in the serial receive),
 * takes it as opened and writes the plaintext into the PMO under its
 * lock; then the ACK and the next GRANT.  No message is opened before its
 * DONE, and a worker's context opens increasing indices only (closure i
 * on worker i % @par_max), so its own sequence check never refuses.
 */

/**
 * mmt_rx_verifier_crypto() - a worker's context for keying @ksalt
 * @rx: the receive, its keying root copied (@rx->have_key)
 * @v: the worker's tools, used by no full check at the moment
 * @ksalt: MMT_KSALT_BYTES keying salt of the closure to check
 *
 * The cached one, or one made from @rx->key_root (the PMO's key root as
 * the receive began: the same subkeys as the PMO's contexts, and nothing
 * the PMO's lock guards); when all entries are taken the oldest goes.
 *
 * Context: process, the receive's task; may sleep.
 * Return: the context, or mmt_crypto_alloc_root()'s ERR_PTR (-ENOMEM, the
 * crypto API's errors).
 */
static struct mmt_crypto *mmt_rx_verifier_crypto(struct mmt_rx *rx,
						 struct mmt_rx_verifier *v,
						 const u8 *ksalt)
{
	u32 k, free = ARRAY_SIZE(v->crypto);
	struct mmt_crypto *nc;

	for (k = 0; k < ARRAY_SIZE(v->crypto); k++) {
		if (!v->crypto[k]) {
			free = min(free, k);
			continue;
		}
		if (!memcmp(mmt_crypto_ksalt(v->crypto[k]), ksalt,
			    MMT_KSALT_BYTES))
			return v->crypto[k];
	}
	nc = mmt_crypto_alloc_root(rx->key_root, ksalt);
	if (IS_ERR(nc))
		return nc;
	if (free == ARRAY_SIZE(v->crypto)) {
		free = v->next;
		v->next = (v->next + 1) % ARRAY_SIZE(v->crypto);
		mmt_crypto_free(v->crypto[free]);
	}
	v->crypto[free] = nc;
	return nc;
}

/**
 * mmt_rx_par_setup() - decide whether a receive checks or opens its
 * closures on the I/O workers, and set it up
 * @rx: the receive, its slots allocated (mmt_rx_alloc()); MMT channel:
 *	its copy of the keying root taken; secure: its context @rx->chan made
 * @id: secure: the binding @rx->chan was made with (mmt_conn_sec_alloc()),
 *	for the workers' contexts; NULL otherwise
 *
 * Parallel when io_workers (mmt_io_nworkers()) and the window both allow
 * two closures or more, the receive is an eager MMT-channel one into a
 * keyed PMO or a secure-channel one, and each worker's tools can be had
 * (scratch; secure: a context of the transfer's key and a private copy of
 * one message); otherwise (also when out of memory, or when the key went
 * meanwhile: a keyed PMO invalidated since @rx->chan was made, whose
 * workers' contexts might hold another key) the receive stays serial.
 *
 * Context: process; may sleep; takes the PMO's lock (secure, keyed PMO:
 * mmt_conn_sec_alloc()).
 */
static void mmt_rx_par_setup(struct mmt_rx *rx,
			     const struct mmt_conn_sec_id *id)
{
	bool sec = rx->channel == MMT_CHANNEL_SECURE;
	size_t sbytes = mmt_scratch_bytes(&rx->pmo->params);
	u32 n, i;

	if (sec ? !rx->chan || !id :
	    !rx->eager || rx->channel != MMT_CHANNEL_MMT || rx->plain ||
	    !rx->have_key)
		return;
	n = min_t(u32, mmt_io_nworkers(), rx->nslots);
	if (n < 2)
		return;
	rx->vers = kcalloc(n, sizeof(*rx->vers), GFP_KERNEL_ACCOUNT);
	if (!rx->vers)
		return;
	for (i = 0; i < n; i++) {
		struct mmt_rx_verifier *v = &rx->vers[i];

		if (!sec) {
			v->scratch = kvzalloc(sbytes, MMT_GFP_USER_SIZED);
			if (!v->scratch)
				break;
			continue;
		}
		v->priv = kvmalloc(rx->region_bytes, MMT_GFP_USER_SIZED);
		if (!v->priv)
			break;
		v->chan = mmt_conn_sec_alloc(rx->pmo, rx->plain,
					     mmt_conn_root(rx->conn), id);
		if (IS_ERR(v->chan)) {
			v->chan = NULL;
			kvfree(v->priv);
			v->priv = NULL;
			break;
		}
	}
	rx->par_max = i;
	rx->par = i >= 2;
	/*
	 * A keyed PMO's channel key is the one of rx->chan unless the PMO was
	 * invalidated (and maybe keyed again) since: then the workers'
	 * contexts may hold another key, and the serial receive answers
	 * as it answers a lost PMO.  (A connection's root is set once.)
	 */
	if (rx->par && sec && !rx->plain) {
		mutex_lock(&rx->pmo->lock);
		if (rx->pmo->rx_lost)
			rx->par = false;
		mutex_unlock(&rx->pmo->lock);
	}
	if (!rx->par)
		mmt_rx_par_free(rx);
}

/**
 * mmt_rx_par_free() - end an eager receive's work on the I/O workers
 * @rx: the receive
 *
 * Waits for every full check or open still running, frees every closure
 * begun and not settled (its MMT stays WAITING; the holds on keyings go
 * with the receive, mmt_conn_rx_finish()), then the workers' contexts
 * (which wipes their subkeys and keys), scratch and private copies.
 * Nothing when the receive is serial.
 *
 * Context: process; may sleep; no lock held.
 */
void mmt_rx_par_free(struct mmt_rx *rx)
{
	size_t sbytes;
	u32 i, k;

	for (i = 0; i < rx->nslots; i++) {
		struct mmt_rx_slot *s = &rx->slots[i];

		if (s->queued)
			wait_for_completion(&s->checked);
		s->queued = false;
		if (s->began)
			mmt_closure_eager_free(&s->pc);
		s->began = false;
		s->opened = false;
		s->pending = false;
	}
	if (!rx->vers)
		return;
	sbytes = mmt_scratch_bytes(&rx->pmo->params);
	for (i = 0; i < rx->par_max; i++) {
		struct mmt_rx_verifier *v = &rx->vers[i];

		for (k = 0; k < ARRAY_SIZE(v->crypto); k++)
			mmt_crypto_free(v->crypto[k]);
		if (v->scratch)
			kvfree_sensitive(v->scratch, sbytes);
		mmt_chan_crypto_free(v->chan);	/* wipes the key */
		if (v->priv)
			kvfree_sensitive(v->priv, rx->region_bytes);
	}
	kfree(rx->vers);
	rx->vers = NULL;
	rx->par = false;
}

/**
 * mmt_rx_verify_work() - the full check of one closure, on an I/O worker
 * @work: the @work of a struct mmt_rx_slot
 *
 * Sets the slot's @verdict, then completes @checked, which the receive's
 * task waits on before it reads the verdict.
 *
 * Context: a kworker of the I/O workers' queue, or the receive's task
 * when nothing could be queued; may sleep.  The slot's closure, context
 * and scratch are this call's alone until it completes.
 */
static void mmt_rx_verify_work(struct work_struct *work)
{
	struct mmt_rx_slot *s = container_of(work, struct mmt_rx_slot, work);

	s->verdict = mmt_closure_eager_verify(&s->pc, s->vc, s->v->scratch);
	/* complete() orders the verdict before the waiter's read of it */
	complete(&s->checked);
}

/**
 * mmt_rx_open_work() - open one secure-channel message, on an I/O worker
 * @work: the @work of a struct mmt_rx_slot, @rx, @index and @v set
 *
 * mmt_conn_sec_decrypt() of the slot's bounce (invalidated: nothing
 * writes it any more, and it is granted again only after this closure's
 * ACK) into the worker's private copy with the worker's context; sets the
 * slot's @verdict, then completes @checked.
 *
 * Context: a kworker of the I/O workers' queue, or the receive's task
 * when nothing could be queued; may sleep; no lock.  The slot and its
 * worker's tools are this call's alone until it completes.
 */
static void mmt_rx_open_work(struct work_struct *work)
{
	struct mmt_rx_slot *s = container_of(work, struct mmt_rx_slot, work);

	s->verdict = mmt_conn_sec_decrypt(s->rx->pmo, s->v->chan, s->rx->gen,
					  s->index, s->bounce, s->v->priv);
	/* complete() orders the verdict and text before the waiter's read */
	complete(&s->checked);
}

/**
 * mmt_rx_par_open() - start the open of a secure-channel closure's message
 * @rx: a secure-channel receive on the I/O workers
 * @s: the closure's slot, invalidated, @s->index its closure
 *
 * On the worker tools of its place in the window (at most @rx->par_max
 * closures are pending, with consecutive indices, so no two share them,
 * and each worker's context sees increasing indices).
 *
 * Context: process, the receive's task; may sleep.
 */
static void mmt_rx_par_open(struct mmt_rx *rx, struct mmt_rx_slot *s)
{
	s->rx = rx;
	s->v = &rx->vers[s->index % rx->par_max];
	s->verdict = 0;
	s->opened = true;
	init_completion(&s->checked);
	INIT_WORK(&s->work, mmt_rx_open_work);
	s->queued = true;
	if (!mmt_io_queue(&s->work))
		mmt_rx_open_work(&s->work);
}

/**
 * mmt_rx_par_check() - start the full check of a begun closure
 * @rx: the receive
 * @s: the closure's slot, @s->pc begun
 *
 * On the worker tools of its place in the window (at most @rx->par_max
 * closures are pending, with consecutive indices, so no two share them).
 * If no context of the closure's keying can be made for them, the check
 * runs here under the PMO's lock with the PMO's own scratch and the
 * closure's context, as the serial receive runs it.
 *
 * Context: process, the receive's task; may sleep.
 * Return: 0 (@s->queued, or @s->verdict set); -EINTR if a fatal signal
 * came while it waited for the PMO's lock.
 */
static int mmt_rx_par_check(struct mmt_rx *rx, struct mmt_rx_slot *s)
{
	struct mmt_pmo *pmo = rx->pmo;
	struct mmt_crypto *c;

	s->v = &rx->vers[s->index % rx->par_max];
	c = mmt_rx_verifier_crypto(rx, s->v, s->pc.ksalt);
	if (IS_ERR(c)) {
		if (mutex_lock_killable(&pmo->lock))
			return -EINTR;
		s->verdict = pmo->rx_lost ? -EPERM :
			     mmt_closure_eager_verify(&s->pc, s->pc.c,
						      pmo->scratch);
		mutex_unlock(&pmo->lock);
		return 0;
	}
	s->vc = c;
	s->verdict = 0;
	init_completion(&s->checked);
	INIT_WORK(&s->work, mmt_rx_verify_work);
	s->queued = true;
	if (!mmt_io_queue(&s->work))
		mmt_rx_verify_work(&s->work);
	return 0;
}

/**
 * mmt_rx_par_settle() - send the verdicts that are due, in closure order
 * @rx: an eager receive on the I/O workers
 * @all: wait for every pending closure
 *
 * From the oldest pending closure on: waits for its full check when it
 * must (@all: the receive has no message to handle, or took the END;
 * @rx->par_max closures pending, so none more can start; or every
 * granted closure is pending, so no DONE can come before a GRANT), else
 * stops at the first still running.  Each settled closure gets what the
 * serial receive gives it after its DONE: -ECANCELED once an earlier one
 * was refused, else its verdict applied (MMT channel: mmt_conn_rx_end();
 * secure: mmt_conn_sec_commit(), the sequence check on the transfer's
 * context and the write); then its ACK and, unless the END was taken
 * (@rx->par_end), the next GRANT.
 *
 * Context: process, the receive's task; may sleep.
 * Return: 0; -EINTR (a fatal signal while it waited for the PMO's lock:
 * the receive is aborted, as for the serial -EINTR); or the fabric's
 * error from an ACK or GRANT.
 */
static int mmt_rx_par_settle(struct mmt_rx *rx, bool all)
{
	while (rx->acked < rx->done) {
		struct mmt_rx_slot *s = &rx->slots[rx->acked % rx->nslots];
		bool must = all || rx->done - rx->acked >= rx->par_max ||
			    rx->granted == rx->done;
		int verdict, err;

		if (s->queued) {
			if (!must && !completion_done(&s->checked))
				break;
			wait_for_completion(&s->checked);
			s->queued = false;
		}
		verdict = s->verdict;
		if (s->began) {
			s->began = false;
			verdict = mmt_conn_rx_end(rx->pmo, s->index, &s->pc,
						  rx->stop ? -ECANCELED :
						  verdict);
			if (verdict == -EINTR)
				return -EINTR;
		}
		if (s->opened) {
			s->opened = false;
			if (!rx->stop)
				verdict = mmt_conn_sec_commit(rx->pmo, rx->plain,
							      rx->chan, s->index,
							      verdict,
							      s->v->priv);
			if (verdict == -EINTR)
				return -EINTR;
		}
		if (rx->stop)
			verdict = -ECANCELED;
		s->pending = false;
		rx->acked++;
		err = mmt_rx_send_ack(rx, s->index, 0, &verdict);
		if (!verdict)
			rx->accepted++;
		else if (!rx->stop)
			rx->stop = verdict;
		if (err)
			return err;
		if (!rx->stop && !rx->par_end && rx->granted < rx->n) {
			err = mmt_rx_grant(rx, s, rx->granted);
			if (err)
				return err;
			rx->granted++;
		}
	}
	return 0;
}

/**
 * mmt_rx_par_done() - a DONE of a receive on the I/O workers
 * @rx: the receive
 * @s: the closure's slot, invalidated, @rx->done counted
 * @index: the closure
 *
 * The closure's rules and top nodes in order (mmt_conn_rx_begin()), after
 * the closure before it as if that one were accepted; its full check on a
 * worker (secure channel: the open of its message, mmt_rx_par_open());
 * then the verdicts that are due (mmt_rx_par_settle()).  After a
 * refusal, of this receive or of a pending closure's rules, nothing more
 * is begun.
 *
 * Context: process, the receive's task; may sleep.
 * Return: 0, -EINTR, or mmt_rx_par_settle()'s errors.
 */
static int mmt_rx_par_done(struct mmt_rx *rx, struct mmt_rx_slot *s,
			   u32 index)
{
	const struct mmt_closure_eager *prev = NULL;
	u8 head[MMT_CONN_HEAD_BYTES];
	int err;

	s->pending = true;
	s->began = false;
	s->opened = false;
	s->queued = false;
	if (rx->stop || rx->par_fail) {
		s->verdict = -ECANCELED;
	} else if (rx->channel == MMT_CHANNEL_SECURE) {
		mmt_rx_par_open(rx, s);
	} else {
		if (index > rx->acked) {
			const struct mmt_rx_slot *p =
				&rx->slots[(index - 1) % rx->nslots];

			prev = p->began ? &p->pc : NULL;
		}
		memcpy(head, s->head, sizeof(head));
		mmt_conn_fault_rx(rx->pmo, index, head);
		err = mmt_conn_rx_begin(rx->pmo, index, rx->gen, rx->nonce,
					head, rx->conn->peer_node, prev,
					&s->pc);
		if (err == -EINTR) {
			s->pending = false;
			return -EINTR;
		}
		s->verdict = err;
		if (err) {
			rx->par_fail = true;
		} else {
			s->began = true;
			err = mmt_rx_par_check(rx, s);
			if (err)
				return err;
		}
	}
	return mmt_rx_par_settle(rx, false);
}

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

	mmt_rx_par_free(rx);
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
	if (rx->par)
		return mmt_rx_par_done(rx, s, m->index);
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
	if (!err && rx->channel != MMT_CHANNEL_SECURE)
		mmt_rx_par_setup(rx, NULL);
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
		} else {
			mmt_rx_par_setup(rx, &id);
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
		/*
		 * par: nothing to handle now, so the verdicts of the pending
		 * closures go out before the receive waits for the network, as
		 * the serial receive's do
		 */
		if (rx->par && rx->acked < rx->done &&
		    !mmt_inbox_ready(conn, &conn->rx_inbox)) {
			err = mmt_rx_par_settle(rx, true);
			if (err)
				goto out_abort;
		}
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
	/* par: the verdicts still due, in order, before the END's result */
	if (rx->par) {
		rx->par_end = true;
		err = mmt_rx_par_settle(rx, true);
		if (err)
			goto out_abort;
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
