// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_conn_mig.c - live migration over a connection (docs/MIGRATION.md):
 * MMT_IOC_MIGRATE_SEND's source and MMT_IOC_MIGRATE_RECV's destination on
 * the transport-neutral engine of mmt_migrate.c, MIGRATE_INFO, FINISH and
 * ABORT, and the resolve of transfers of unknown outcome (MIG_QUERY
 * answered, MIG_STATEMENT read)
 */
#include <crypto/algapi.h>
#include <linux/delay.h>
#include <linux/list.h>
#include <linux/random.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/wait.h>

#include "mmt_proto.h"

/* ------------------------------------------------------------ migration */

/*
 * Live migration over the connection (docs/MIGRATION.md): the source's
 * window slots hold snapshots of the closures in flight (sealed by
 * mmt_mig_snap() when their GRANT arrives), so the PMO's MMTs stay VALID
 * and writable; the destination grants what WANT asks for, in place, as
 * MMT_IOC_RECV does, and checks each closure under the migration rules.
 */

/*
 * mmt_inbox_wait() that also returns -ECANCELED once MMT_MIG_REQ_ABORT
 * is set on @mig (MMT_IOC_MIGRATE_ABORT wakes conn->wq).
 */
static struct mmt_inbox_item *mmt_mig_inbox_wait(struct mmt_conn *conn,
						 struct list_head *box,
						 unsigned long timeout,
						 struct mmt_mig *mig)
{
	if (test_bit(MMT_MIG_REQ_ABORT, &mig->req))
		return ERR_PTR(-ECANCELED);
	if (!mmt_inbox_ready(conn, box) &&
	    !wait_event_interruptible_timeout(conn->wq,
					      mmt_inbox_ready(conn, box) ||
					      test_bit(MMT_MIG_REQ_ABORT,
						       &mig->req), timeout))
		return ERR_PTR(-ETIMEDOUT);
	if (test_bit(MMT_MIG_REQ_ABORT, &mig->req))
		return ERR_PTR(-ECANCELED);
	return mmt_inbox_wait(conn, box, timeout);
}

/* A source window slot: one closure in flight, as a snapshot. */
struct mmt_mtx_slot {
	bool busy;		/* WANT sent, ACK not yet in */
	bool posted;		/* its GRANT came: writes posted */
	u32 index;
	u64 rc;			/* root counter sealed into it */
	u8 *snap;		/* data | MACs | nodes of the closure */
	u8 *head;		/* header + sealed root */
	struct mmt_fab_src *src;	/* the fabric's: its writes */
};

/* The source's migration transport over a connection. */
struct mmt_mtx {
	struct mmt_mig_xport t;
	struct mmt_conn *conn;
	struct mmt_pmo *pmo;
	unsigned long timeout;
	unsigned long wait_from;	/* jiffies: waiting for an answer since */
	bool offered;		/* the OFFER left: failures end the connection */
	bool have_nonce;
	u32 nslots;
	u32 inflight;
	size_t region_bytes;
	struct mmt_mtx_slot slots[MMT_MIGRATE_WINDOW_MAX];
};

static void mmt_mtx_free(struct mmt_mtx *mtx)
{
	struct mmt_conn *conn = mtx->conn;
	u32 i;

	for (i = 0; i < mtx->nslots; i++) {
		struct mmt_mtx_slot *s = &mtx->slots[i];

		conn->fab->src_free(s->src);
		if (s->head)
			mmt_mig_extra(mtx->t.mig, -MMT_CONN_HEAD_BYTES);
		kfree(s->head);
		if (s->snap) {
			kvfree(s->snap);
			mmt_mig_extra(mtx->t.mig, -(ssize_t)mtx->region_bytes);
		}
	}
}

static int mmt_mtx_alloc(struct mmt_mtx *mtx, u32 window)
{
	const struct mmt_params *p = &mtx->pmo->params;
	struct mmt_conn *conn = mtx->conn;
	u32 i;

	mtx->nslots = min_t(u32, window, mtx->pmo->closures);
	mtx->region_bytes = mmt_conn_region_bytes(p, MMT_CHANNEL_MMT);
	for (i = 0; i < mtx->nslots; i++) {
		struct mmt_mtx_slot *s = &mtx->slots[i];
		struct mmt_fab_src *src;

		s->head = kzalloc(MMT_CONN_HEAD_BYTES, GFP_KERNEL_ACCOUNT);
		if (!s->head)
			return -ENOMEM;
		mmt_mig_extra(mtx->t.mig, MMT_CONN_HEAD_BYTES);
		s->snap = kvmalloc(mtx->region_bytes, MMT_GFP_USER_SIZED);
		if (!s->snap)
			return -ENOMEM;
		mmt_mig_extra(mtx->t.mig, mtx->region_bytes);
		src = conn->fab->src_alloc(conn, s->head, s->snap,
					   mtx->region_bytes);
		if (IS_ERR(src))
			return PTR_ERR(src);
		s->src = src;
	}
	return 0;
}

static struct mmt_mtx_slot *mmt_mtx_slot(struct mmt_mtx *mtx, u32 index)
{
	u32 i;

	for (i = 0; i < mtx->nslots; i++)
		if (mtx->slots[i].busy && mtx->slots[i].index == index)
			return &mtx->slots[i];
	return NULL;
}

/* GRANT of a closure we want: snapshot and seal it, post its writes. */
static int mmt_mtx_grant(struct mmt_mtx *mtx, const struct mmt_msg *m)
{
	struct mmt_mtx_slot *s = mmt_mtx_slot(mtx, m->index);
	const struct mmt_wire_msg *w = &m->wire;
	u32 nsegs = w->nsegs, notice;
	int err;

	if (!s || s->posted || nsegs < 2 || w->head_seg != nsegs - 1 ||
	    le32_to_cpu(w->segs[nsegs - 1].len) != MMT_CONN_HEAD_BYTES)
		return -EPROTO;
	if (!mtx->have_nonce) {
		memcpy(mtx->t.rx_nonce, w->nonce, MMT_RX_NONCE_BYTES);
		mtx->have_nonce = true;
		mmt_mig_set_nonce(mtx->t.mig, w->nonce);
	} else if (memcmp(mtx->t.rx_nonce, w->nonce, MMT_RX_NONCE_BYTES)) {
		return -EPROTO;
	}
	err = mmt_mig_snap(&mtx->t, m->index, s->head, 0, s->snap);
	if (err)
		return err;
	s->rc = mtx->t.mig->s.sent_rc[m->index];	/* the ACK's tag covers it */
	notice = ((u32)mtx->t.gen & 0xff) << MMT_IMM_INDEX_BITS | m->index;
	s->posted = true;
	return mtx->conn->fab->src_write(s->src, mtx->region_bytes, w->segs,
					 nsegs - 1, &w->segs[nsegs - 1],
					 notice);
}

/*
 * Does an ACK authenticate: the receive's nonce, the tag of its verdict
 * (and of @root_counter, the one sealed into the closure acknowledged: 0
 * for the COMMIT's answer)?
 */
static bool mmt_mtx_ack_genuine(struct mmt_mtx *mtx, const struct mmt_msg *m,
				u64 root_counter)
{
	struct mmt_bind b;

	if (!mtx->have_nonce)
		return false;
	mmt_mig_xport_bind(&mtx->t, &b);
	return mmt_conn_ack_genuine(mtx->pmo, &b, m, root_counter);
}

/* The verdict on a closure: its slot is free again. */
static int mmt_mtx_ack(struct mmt_mtx *mtx, const struct mmt_msg *m)
{
	struct mmt_mtx_slot *s = mmt_mtx_slot(mtx, m->index);
	int err;

	if (!s || !s->posted)
		return -EPROTO;
	if (!m->err && !mmt_mtx_ack_genuine(mtx, m, s->rc)) {
		if (fatal_signal_pending(current))
			return -EINTR;	/* not a forgery */
		atomic64_inc(&mmt_stats.ack_forged);
		return -EPROTO;
	}
	/* the fabric is done with the snapshot before it is reused */
	err = mtx->conn->fab->src_wait(s->src, mtx->timeout);
	if (err)
		return err;	/* the write failed: the connection is ended */
	s->busy = false;
	s->posted = false;
	mtx->inflight--;
	return m->err;
}

/*
 * Handle the next message for the source.  *@commit_ack, if not NULL,
 * takes the answer to the COMMIT, only one that authenticates: anything
 * else is counted (ack_forged) and dropped, and the source goes on
 * waiting.  Once the handover started (@mtx->t.deadline set) every wait,
 * whatever arrives meanwhile (stray messages of another generation, forged
 * answers), counts against that one deadline.
 */
static int mmt_mtx_pump(struct mmt_mtx *mtx, struct mmt_msg *commit_ack)
{
	struct mmt_conn *conn = mtx->conn;
	unsigned long timeout = mtx->timeout;
	struct mmt_inbox_item *it;
	int err;

	if (mtx->t.deadline) {
		if (time_after_eq(jiffies, mtx->t.deadline))
			return -ETIMEDOUT;
		timeout = mtx->t.deadline - jiffies;
	} else {
		/*
		 * Pre-copy: one timeout for each answer, from the moment
		 * the source starts waiting for it; stray messages do not
		 * restart it.
		 */
		if (!mtx->wait_from)
			mtx->wait_from = jiffies ?: 1;
		if (time_after_eq(jiffies, mtx->wait_from + mtx->timeout))
			return -ETIMEDOUT;
		timeout = mtx->wait_from + mtx->timeout - jiffies;
	}
	it = mmt_mig_inbox_wait(conn, &conn->tx_inbox, timeout, mtx->t.mig);
	if (IS_ERR(it))
		return PTR_ERR(it);
	if (it->msg.gen != (u32)mtx->t.gen) {
		kfree(it);	/* left over from an earlier transfer */
		return 0;
	}
	if (it->msg.type == MMT_MSG_GRANT || it->msg.type == MMT_MSG_ACK)
		mtx->wait_from = 0;	/* an answer: the next wait starts now */
	switch (it->msg.type) {
	case MMT_MSG_NACK:
		/* the offer refused (before any grant), or a protocol error */
		err = it->msg.err ? it->msg.err : -EPROTO;
		if (mtx->have_nonce)
			err = -EPROTO;
		break;
	case MMT_MSG_GRANT:
		err = mmt_mtx_grant(mtx, &it->msg);
		break;
	case MMT_MSG_ACK:
		if (it->msg.index == MMT_MIG_COMMIT_INDEX && commit_ack) {
			err = 0;
			if (!mmt_mtx_ack_genuine(mtx, &it->msg, 0)) {
				if (fatal_signal_pending(current)) {
					err = -EINTR;	/* not a forgery */
					break;
				}
				/* not final: a genuine one may follow */
				atomic64_inc(&mmt_stats.ack_forged);
				break;
			}
			*commit_ack = it->msg;
			commit_ack->type = MMT_MSG_COMMIT;
		} else {
			err = mmt_mtx_ack(mtx, &it->msg);
		}
		break;
	default:
		err = -EPROTO;
		break;
	}
	kfree(it);
	return err;
}

static int mmt_mtx_send(struct mmt_mig_xport *t, u32 index)
{
	struct mmt_mtx *mtx = container_of(t, struct mmt_mtx, t);
	struct mmt_mtx_slot *s = NULL;
	u32 i;
	int err;

	while (mtx->inflight == mtx->nslots) {
		err = mmt_mtx_pump(mtx, NULL);
		if (err)
			return err;
	}
	for (i = 0; i < mtx->nslots && !s; i++)
		if (!mtx->slots[i].busy)
			s = &mtx->slots[i];
	if (!s)
		return -EPROTO;
	s->busy = true;
	s->posted = false;
	s->index = index;
	mtx->inflight++;
	return mmt_tx_send_simple(mtx->conn, MMT_MSG_WANT, t->gen, index, 0);
}

static int mmt_mtx_flush(struct mmt_mig_xport *t)
{
	struct mmt_mtx *mtx = container_of(t, struct mmt_mtx, t);
	int err;

	while (mtx->inflight) {
		err = mmt_mtx_pump(mtx, NULL);
		if (err)
			return err;
	}
	return 0;
}

static int mmt_mtx_commit(struct mmt_mig_xport *t, const u8 *digest,
			  const u8 *tag, bool *known)
{
	struct mmt_mtx *mtx = container_of(t, struct mmt_mtx, t);
	struct mmt_fault_commit f;
	struct mmt_msg ack = {};
	struct mmt_wire_msg w = {};
	int err;

	*known = true;
	/* test build: a WANT the destination must not grant into a COMMIT */
	if (mmt_conn_fault_commit(true, &f) && f.want != U32_MAX)
		mmt_tx_send_simple(mtx->conn, MMT_MSG_WANT, t->gen, f.want, 0);
	w.type = MMT_MSG_COMMIT;
	w.gen = cpu_to_le32(t->gen);
	w.index = cpu_to_le32(mtx->pmo->closures);
	w.nsegs = 2;
	memcpy(w.nonce, t->rx_nonce, MMT_RX_NONCE_BYTES);
	memcpy(w.tag, tag, MMT_WIRE_TAG_BYTES);
	memcpy(w.segs, digest, MMT_SHA256_BYTES);
	err = mtx->conn->fab->post_msg(mtx->conn, &w);
	if (err)
		return err;	/* never left */
	*known = false;
	/* only a genuine answer ends the wait (mmt_mtx_pump()) */
	while (ack.type != MMT_MSG_COMMIT) {
		err = mmt_mtx_pump(mtx, &ack);
		if (err)
			return err;
	}
	*known = true;
	return ack.err;
}

/* The source's checks passed: the OFFER, with the window. */
static int mmt_mtx_start(struct mmt_mig_xport *t)
{
	struct mmt_mtx *mtx = container_of(t, struct mmt_mtx, t);
	struct mmt_wire_msg w;

	mmt_wire_offer_fill(&w, mtx->pmo, MMT_CHANNEL_MMT, false, false);
	w.flags = cpu_to_le32(MMT_WIRE_OFFER_MIGRATE);
	w.gen = cpu_to_le32(t->gen);
	w.index = cpu_to_le32(mtx->nslots);
	memcpy(w.nonce, t->tx_nonce, sizeof(w.nonce));
	mtx->offered = true;
	return mtx->conn->fab->post_msg(mtx->conn, &w);
}

static const struct mmt_mig_xport_ops mmt_mtx_ops = {
	.start = mmt_mtx_start,
	.send = mmt_mtx_send,
	.flush = mmt_mtx_flush,
	.commit = mmt_mtx_commit,
};

/* A migration ends, its record stays for MMT_IOC_MIGRATE_INFO. */
static void mmt_conn_mig_end(struct mmt_mig *mig)
{
	spin_lock(&mig->lock);
	mig->running = false;
	spin_unlock(&mig->lock);
	wake_up_all(&mig->wq);
}

static void mmt_conn_mig_begin(struct mmt_conn *conn, struct mmt_mig *mig,
			       bool source)
{
	unsigned long flags;

	mmt_mig_reset(mig, source);
	spin_lock_irqsave(&conn->lock, flags);
	conn->mig_last = mig;
	spin_unlock_irqrestore(&conn->lock, flags);
	wake_up_all(&conn->wq);
}

/* MMT_IOC_MIGRATE_SEND, under tx_mutex: see uapi/mmt.h. */
static int mmt_conn_do_migrate_send(struct mmt_conn *conn,
				    struct mmt_pmo *pmo,
				    const struct mmt_migrate *a, bool *started)
{
	struct mmt_mig *mig = &conn->mig_tx;
	struct mmt_mig_params prm = {
		.downtime_limit_ns = (u64)(a->downtime_limit_ms ?:
					   MMT_MIGRATE_DOWNTIME_MS) * 1000000,
		.max_rounds = a->max_rounds ?: MMT_MIGRATE_ROUNDS,
	};
	struct mmt_mtx *mtx;
	bool refused;
	u32 i;
	int err;

	if (pmo->closures >= MMT_CONN_MAX_CLOSURES)
		return -E2BIG;
	if (conn->tx_gen == U32_MAX)
		return -EOVERFLOW;
	mtx = kzalloc(sizeof(*mtx), GFP_KERNEL_ACCOUNT);
	if (!mtx)
		return -ENOMEM;
	mmt_conn_mig_begin(conn, mig, true);
	*started = true;
	mmt_mig_extra(mig, sizeof(*mtx));	/* the window's bookkeeping */
	mtx->t.ops = &mmt_mtx_ops;
	mtx->t.mig = mig;
	mtx->t.conn_id = conn->conn_id;
	mtx->t.gen = ++conn->tx_gen;
	mtx->t.peer_node = conn->peer_node;
	mtx->t.dir = conn->accepted ? 1 : 0;
	get_random_bytes_wait(mtx->t.tx_nonce, sizeof(mtx->t.tx_nonce));
	mtx->t.window = a->window ?: MMT_MIGRATE_WINDOW;
	mtx->conn = conn;
	mtx->pmo = pmo;
	mtx->timeout = mmt_timeout(a->timeout_ms);
	mtx->t.timeout = mtx->timeout;
	err = mmt_mtx_alloc(mtx, mtx->t.window);
	if (err)
		mmt_mig_done(mig, err);
	else
		err = mmt_migrate_run(pmo, &mtx->t, &prm);
	/*
	 * A handover refused at the round limit came after a round whose
	 * every closure had its verdict: nothing is in flight, so the END
	 * tells the destination (its receive fails with ECANCELED, every MMT
	 * WAITING) and the connection stays up.
	 */
	spin_lock(&mig->lock);
	refused = err == -ETIME && mig->info.stop == MMT_MIG_STOP_ROUNDS;
	spin_unlock(&mig->lock);
	if (err && mtx->offered)
		pr_info_ratelimited("conn %llx: migration failed: %d\n",
				    conn->conn_id, err);
	if (!err || refused) {
		mmt_tx_send_simple(conn, MMT_MSG_END, mtx->t.gen, 0, 0);
		for (i = 0; i < mtx->nslots; i++)
			mtx->conn->fab->src_idle(mtx->slots[i].src);
		mmt_conn_flush_msgs(conn, mtx->timeout);
	} else if (mtx->offered) {
		/* no write in flight may outlive the snapshots: end it */
		mmt_conn_fail(conn, err == -ETIMEDOUT ? err : -ECONNRESET);
		conn->fab->shutdown(conn);
		for (i = 0; i < mtx->nslots; i++)
			mtx->conn->fab->src_idle(mtx->slots[i].src);
	}
	mmt_mtx_free(mtx);
	kfree(mtx);
	mmt_mig_extra(mig, -(ssize_t)sizeof(*mtx));
	mmt_conn_mig_end(mig);
	return err;
}

/* Wait for a migration's OFFER; check it.  Returns it or an ERR_PTR. */
static struct mmt_inbox_item *mmt_mrx_offer(struct mmt_conn *conn,
					    struct mmt_pmo *pmo,
					    const struct mmt_migrate *a,
					    unsigned long timeout,
					    struct mmt_mig *mig)
{
	u32 window = a->window ?: MMT_MIGRATE_WINDOW_MAX;
	struct mmt_inbox_item *it;
	struct mmt_msg offer;
	u32 flags;
	int err;

	for (;;) {
		it = mmt_mig_inbox_wait(conn, &conn->rx_inbox, timeout, mig);
		if (IS_ERR(it))
			return it;
		if (it->msg.type == MMT_MSG_OFFER)
			break;
		kfree(it);
	}
	offer = it->msg;
	flags = le32_to_cpu(offer.wire.flags);
	offer.wire.flags = cpu_to_le32(flags & ~MMT_WIRE_OFFER_MIGRATE);
	if (!(flags & MMT_WIRE_OFFER_MIGRATE))
		err = -EPROTO;
	else
		err = mmt_wire_offer_check(&offer, pmo, MMT_CHANNEL_MMT, false);
	if (!err && pmo->closures >= MMT_CONN_MAX_CLOSURES)
		err = -E2BIG;
	if (!err && (!offer.index || offer.index > window))
		err = -E2BIG;
	if (!err && offer.gen <= conn->rx_gen)
		err = -ESTALE;
	if (!err)
		conn->rx_gen = offer.gen;
	if (err) {
		mmt_tx_send_simple(conn, MMT_MSG_NACK, offer.gen, 0, err);
		kfree(it);
		mmt_conn_flush_msgs(conn, timeout);
		return ERR_PTR(err);
	}
	return it;
}

static struct mmt_rx_slot *mmt_mrx_slot(struct mmt_rx *rx, u32 index,
					bool granted)
{
	u32 i;

	for (i = 0; i < rx->nslots; i++)
		if (rx->slots[i].granted == granted &&
		    (!granted || rx->slots[i].index == index))
			return &rx->slots[i];
	return NULL;
}

/* Is any slot still registered for remote write? */
static bool mmt_mrx_granted(const struct mmt_rx *rx)
{
	u32 i;

	for (i = 0; i < rx->nslots; i++)
		if (rx->slots[i].granted)
			return true;
	return false;
}

/* A closure landed in slot @s: invalidate, check, ack. */
static int mmt_mrx_done(struct mmt_rx *rx, const struct mmt_msg *m,
			struct mmt_mig *mig)
{
	struct mmt_rx_slot *s = mmt_mrx_slot(rx, m->index, true);
	u8 head[MMT_CONN_HEAD_BYTES];
	int verdict, err;
	u64 rc = 0;

	if (!s || m->gen != (rx->gen & 0xff))
		return -EPROTO;
	err = mmt_rx_invalidate(rx, s);
	if (err)
		return err;
	if (rx->stop) {
		verdict = -ECANCELED;
	} else {
		memcpy(head, s->head, sizeof(head));
		mmt_conn_fault_rx(rx->pmo, m->index, head);
		verdict = mmt_conn_rx_check(rx->pmo, m->index, rx->gen,
					    rx->nonce, head,
					    rx->conn->peer_node, rx->eager);
	}
	/* killed waiting for the PMO's lock: nothing checked, no verdict */
	if (verdict == -EINTR)
		return -EINTR;
	if (!verdict) {
		/* the acceptance names the closure's root counter (round) */
		mutex_lock(&rx->pmo->lock);
		rc = rx->pmo->mmts[m->index].root.root_counter;
		mutex_unlock(&rx->pmo->lock);
	}
	err = mmt_rx_send_ack(rx, m->index, rc, &verdict);
	if (!verdict)
		mmt_mig_rx_account(mig, mmt_closure_bytes(&rx->pmo->params));
	else if (!rx->stop)
		rx->stop = verdict;
	return err;
}

/*
 * Test builds ("commit stray N MS", driver/mmt_conn_fault.c): @n stray
 * messages to the source, @ms apart, before the COMMIT is answered:
 * alternately a refusal of the COMMIT whose tag does not authenticate and
 * an ACK of an earlier generation.  The source must drop them all, and they
 * must not stretch its handover's deadline.
 */
static void mmt_mrx_strays(struct mmt_rx *rx, u32 n, u32 ms)
{
	struct mmt_wire_msg w = {};
	u32 i;

	w.type = MMT_MSG_ACK;
	w.index = cpu_to_le32(MMT_MIG_COMMIT_INDEX);
	w.err = cpu_to_le32(EBADMSG);
	memcpy(w.nonce, rx->nonce, sizeof(w.nonce));
	for (i = 0; i < n; i++) {
		w.gen = cpu_to_le32(i & 1 ? rx->gen - 1 : rx->gen);
		get_random_bytes(w.tag, sizeof(w.tag));
		if (mmt_conn_state(rx->conn, NULL) != MMT_CONN_LIVE ||
		    rx->conn->fab->post_msg(rx->conn, &w) ||
		    msleep_interruptible(ms))
			break;
	}
}

/*
 * The COMMIT: check it against what landed, answer with a tagged ACK.  It
 * is refused (EPROTO) while a slot is still granted: that MMT's memory is
 * registered for remote write, so it must not become VALID (the source
 * flushes every closure before its COMMIT; WANT is not authenticated).
 */
static int mmt_mrx_commit(struct mmt_rx *rx, const struct mmt_msg *m,
			  bool *committed)
{
	const struct mmt_wire_msg *w = &m->wire;
	struct mmt_fault_commit f;
	u8 digest[MMT_SHA256_BYTES];
	struct mmt_bind b = {
		.conn_id = rx->conn->conn_id,
		.gen = rx->gen,
		.sender_node = rx->conn->peer_node,
		.receiver_node = mmt_node_id(),
		.dir = rx->conn->accepted ? 0 : 1,	/* the source's */
	};
	int verdict;

	memcpy(b.rx_nonce, rx->nonce, sizeof(b.rx_nonce));
	memcpy(b.tx_nonce, rx->tx_nonce, sizeof(b.tx_nonce));
	memcpy(digest, w->segs, sizeof(digest));
	if (!mmt_conn_fault_commit(false, &f)) {
		f.no_ack = false;
	} else if (f.drop) {
		/* test build: the COMMIT lost with the link */
		*committed = false;
		mmt_conn_fail(rx->conn, -ECONNRESET);
		return -ECONNRESET;
	} else if (f.strays) {
		mmt_mrx_strays(rx, f.strays, f.stray_ms);
	}
	if (rx->stop)
		verdict = -ECANCELED;
	else if (mmt_mrx_granted(rx))
		verdict = -EPROTO;	/* a slot is still registered */
	else if (m->index != rx->n || w->nsegs != 2 ||
		 crypto_memneq(w->nonce, rx->nonce, MMT_RX_NONCE_BYTES))
		verdict = -EBADMSG;
	else
		verdict = mmt_mig_rx_commit(rx->pmo, &b, digest, w->tag);
	if (verdict) {
		mmt_stats_reject(verdict);
		if (!rx->stop)
			rx->stop = verdict;
	}
	*committed = !verdict;
	if (*committed && f.no_ack) {
		/* test build: the ACK's send fails as a post does */
		mmt_conn_fail(rx->conn, -ECONNRESET);
		return -ECONNRESET;
	}
	return mmt_rx_send_ack(rx, MMT_MIG_COMMIT_INDEX, 0, &verdict);
}

/* MMT_IOC_MIGRATE_RECV, under rx_mutex: see uapi/mmt.h. */
static int mmt_conn_do_migrate_recv(struct mmt_conn *conn,
				    struct mmt_pmo *pmo,
				    const struct mmt_migrate *a, bool *started)
{
	unsigned long timeout = mmt_timeout(a->timeout_ms);
	struct mmt_mig *mig = &conn->mig_rx;
	bool committed = false, end = false;
	struct mmt_inbox_item *it;
	struct mmt_rx *rx;
	struct mmt_bind b = {
		.conn_id = conn->conn_id,
		.sender_node = conn->peer_node,
		.receiver_node = mmt_node_id(),
		.dir = conn->accepted ? 0 : 1,	/* the source's */
	};
	u8 nonce[MMT_RX_NONCE_BYTES];
	size_t extra;
	u32 i, window;
	int err;

	mmt_conn_mig_begin(conn, mig, false);
	*started = true;
	it = mmt_mrx_offer(conn, pmo, a, timeout, mig);
	if (IS_ERR(it)) {
		err = PTR_ERR(it);
		mmt_mig_done(mig, err);
		mmt_conn_mig_end(mig);
		return err;
	}
	window = it->msg.index;
	get_random_bytes_wait(nonce, sizeof(nonce));
	memcpy(b.rx_nonce, nonce, sizeof(b.rx_nonce));
	memcpy(b.tx_nonce, it->msg.wire.nonce, sizeof(b.tx_nonce));
	b.gen = it->msg.gen;
	err = mmt_mig_rx_start(pmo, mig, &b);
	rx = err ? NULL : kzalloc(sizeof(*rx), GFP_KERNEL_ACCOUNT);
	if (!err && !rx) {
		mmt_mig_rx_end(pmo);
		err = -ENOMEM;
	}
	if (err) {
		mmt_tx_send_simple(conn, MMT_MSG_NACK, it->msg.gen, 0, err);
		kfree(it);
		mmt_conn_flush_msgs(conn, timeout);
		mmt_mig_done(mig, err);
		mmt_conn_mig_end(mig);
		return err;
	}
	rx->conn = conn;
	rx->pmo = pmo;
	rx->channel = MMT_CHANNEL_MMT;
	rx->eager = a->flags & MMT_MIGRATE_EAGER;
	rx->gen = it->msg.gen;
	memcpy(rx->nonce, nonce, sizeof(nonce));
	memcpy(rx->tx_nonce, it->msg.wire.nonce, sizeof(rx->tx_nonce));
	rx->n = pmo->closures;
	rx->window = window;
	kfree(it);
	mmt_mig_set_nonce(mig, nonce);
	err = mmt_rx_alloc(rx);
	/* what this receive holds besides the PMO: W head slots, its record */
	extra = sizeof(*rx) + (size_t)rx->nslots * MMT_CONN_HEAD_BYTES;
	mmt_mig_extra(mig, extra);
	if (err) {
		mmt_tx_send_simple(conn, MMT_MSG_NACK, rx->gen, 0, err);
		mmt_conn_flush_msgs(conn, timeout);
		goto out;
	}
	while (!end && !committed) {
		struct mmt_rx_slot *s;

		it = mmt_mig_inbox_wait(conn, &conn->rx_inbox, timeout, mig);
		if (IS_ERR(it)) {
			err = PTR_ERR(it);
			goto out_abort;
		}
		if (it->msg.gen != rx->gen && it->msg.type != MMT_MSG_DONE) {
			kfree(it);	/* an earlier transfer's */
			continue;
		}
		switch (it->msg.type) {
		case MMT_MSG_WANT:
			err = 0;
			if (rx->stop)
				break;	/* failing: nothing more is granted */
			s = mmt_mrx_slot(rx, 0, false);
			if (it->msg.index >= rx->n || !s ||
			    mmt_mrx_slot(rx, it->msg.index, true))
				err = -EPROTO;
			else
				err = mmt_rx_grant(rx, s, it->msg.index);
			break;
		case MMT_MSG_DONE:
			err = mmt_mrx_done(rx, &it->msg, mig);
			break;
		case MMT_MSG_COMMIT:
			err = mmt_mrx_commit(rx, &it->msg, &committed);
			break;
		case MMT_MSG_END:
			end = true;
			err = 0;
			break;
		default:
			err = -EPROTO;
			break;
		}
		kfree(it);
		if (err)
			goto out_abort;
	}
	for (i = 0; i < rx->nslots; i++) {
		err = mmt_rx_invalidate(rx, &rx->slots[i]);
		if (err)
			goto out_abort;
	}
	err = committed ? 0 : rx->stop ?: -ECANCELED;
	mmt_conn_flush_msgs(conn, timeout);
	goto out;

out_abort:
	pr_info_ratelimited("conn %llx: migration receive aborted: %d\n",
			    conn->conn_id, err);
	if (err != -ETIMEDOUT && err != -ECANCELED)
		err = err == -EINTR ? -EINTR : -ECONNRESET;
	mmt_conn_fail(conn, err == -ETIMEDOUT ? err : -ECONNRESET);
	conn->fab->shutdown(conn);
	for (i = 0; i < rx->nslots; i++)
		conn->fab->sink_idle(rx->slots[i].sink);
	if (rx->stop && err == -ECONNRESET)
		err = rx->stop;	/* a rejection ended it */
	/*
	 * Committed, then the ACK could not be sent or a slot not be
	 * invalidated: the PMO is VALID and writable here whatever happened
	 * to the connection (the source, without an answer, stays read-only
	 * until its owner resolves it), so the receive succeeded.
	 */
	if (committed)
		err = 0;
out:
	mmt_mig_rx_end(pmo);
	mmt_rx_free(rx);
	kfree(rx);
	mmt_mig_extra(mig, -(ssize_t)extra);
	if (!committed || err)
		mmt_mig_done(mig, err ?: -ECANCELED);
	else
		mmt_mig_done(mig, 0);
	mmt_conn_mig_end(mig);
	return err;
}

/* MMT_IOC_MIGRATE_SEND and MMT_IOC_MIGRATE_RECV: see uapi/mmt.h. */
int mmt_conn_migrate(struct mmt_conn *conn, void __user *uarg,
		     bool send)
{
	struct mmt_migrate_info info;
	struct mmt_ckpt *park = NULL;
	struct mmt_migrate a;
	struct mmt_conn_op op;
	u32 usize, isize = 0;
	bool started = false;
	int err;

	err = mmt_copy_in(&a, sizeof(a), uarg, MMT_MIGRATE_SIZE_VER0, &usize);
	if (err)
		return err;
	err = mmt_conn_migrate_args(&a, send);
	if (err)
		return err;
	if (a.info) {
		/*
		 * the figures' struct: its size now, and that it can be
		 * written (what was read goes back), so a bad one costs
		 * nothing; once the migration committed, its figures
		 * failing to go out must not turn it into a failure
		 */
		err = mmt_copy_in(&info, sizeof(info), u64_to_user_ptr(a.info),
				  MMT_MIGRATE_INFO_SIZE_VER0, &isize);
		if (!err && mmt_copy_out(u64_to_user_ptr(a.info), &info,
					 sizeof(info), isize))
			err = -EFAULT;
		if (err)
			return err;
	}
	err = mmt_conn_op_begin(a.pmo_fd,
				send ? &conn->tx_mutex : &conn->rx_mutex, &op);
	if (err)
		return err;
	if (a.flags & MMT_MIGRATE_PARK) {
		/* everything that could fail, before anything is received */
		park = mmt_ckpt_park_begin();
		if (IS_ERR(park)) {
			mmt_conn_op_end(&op);
			return PTR_ERR(park);
		}
	}
	err = mmt_conn_op_live(conn);
	if (!err && send)
		err = mmt_conn_do_migrate_send(conn, op.pmo, &a, &started);
	else if (!err)
		err = mmt_conn_do_migrate_recv(conn, op.pmo, &a, &started);
	if (park) {
		/* committed: parked under the receive's nonce, in this call */
		mmt_mig_get_info(&conn->mig_rx, &info);
		mmt_ckpt_park_end(park, err ? NULL : fd_file(op.f), info.nonce);
	}
	mmt_conn_op_end(&op);
	if (a.info) {
		/* never the figures of an earlier migration */
		if (started)
			mmt_mig_get_info(send ? &conn->mig_tx : &conn->mig_rx,
					 &info);
		else
			mmt_mig_info_unstarted(&info, send, err);
		/*
		 * committed is final (uapi/mmt.h): 0 even if the caller
		 * unmapped or write-protected @info meanwhile (the figures
		 * stay with MMT_IOC_MIGRATE_INFO)
		 */
		if (mmt_copy_out(u64_to_user_ptr(a.info), &info, sizeof(info),
				 isize) && !err &&
		    info.phase != MMT_MIG_PHASE_COMMITTED)
			err = -EFAULT;
	}
	return err;
}

/* MMT_IOC_MIGRATE_INFO: see uapi/mmt.h. */
int mmt_conn_migrate_info(struct mmt_conn *conn, void __user *uarg)
{
	struct mmt_migrate_info info;
	struct mmt_mig *mig;
	unsigned long flags;
	u32 usize;
	int err;

	err = mmt_copy_in(&info, sizeof(info), uarg,
			  MMT_MIGRATE_INFO_SIZE_VER0, &usize);
	if (err)
		return err;
	if (info.flags || info.phase || info.round || info.error ||
	    info.reserved0 || memchr_inv(info.nonce, 0, sizeof(info.nonce)) ||
	    info.stop || info.throttle_pct || info.throttle_ns)
		return -EINVAL;
	spin_lock_irqsave(&conn->lock, flags);
	mig = conn->mig_last;
	spin_unlock_irqrestore(&conn->lock, flags);
	if (!mig)
		return -ENOENT;
	mmt_mig_get_info(mig, &info);
	return mmt_copy_out(uarg, &info, sizeof(info), usize);
}

/*
 * @query_work: answer the peer's MMT_MSG_MIG_QUERY messages, in order,
 * from this node's record of its migration receives (mmt_mig_statement()):
 * the outcome, with its tag when final.  On an attested connection only
 * once the handshake is done (queued again then).  Nothing is kept of a
 * query: the peer learns what any holder of the nonce could.
 */
void mmt_conn_mig_query(struct work_struct *work)
{
	struct mmt_conn *conn = container_of(work, struct mmt_conn,
					     query_work);
	struct mmt_inbox_item *it;
	unsigned long flags;
	u32 closures;

	for (;;) {
		struct mmt_wire_msg w = {};

		spin_lock_irqsave(&conn->lock, flags);
		it = (!conn->attested || conn->hs_done) ?
		     list_first_entry_or_null(&conn->query_inbox,
					      struct mmt_inbox_item, node) :
		     NULL;
		if (it) {
			list_del(&it->node);
			conn->inbox_len--;
		}
		spin_unlock_irqrestore(&conn->lock, flags);
		if (!it)
			break;
		w.type = MMT_MSG_MIG_STATEMENT;
		memcpy(w.nonce, it->msg.wire.nonce, sizeof(w.nonce));
		w.index = cpu_to_le32(mmt_rx_statement(w.nonce, w.tag,
						       &closures));
		w.closures = cpu_to_le32(closures);
		kfree(it);
		if (conn->fab->post_msg(conn, &w))
			break;	/* no answer now; the next query runs the work */
		atomic64_inc(&mmt_stats.statements_sent);
	}
	mmt_conn_put(conn);
}

/*
 * The destination's statement on the receive @nonce, until @deadline
 * (jiffies): the first final one whose tag verifies is applied to @pmo
 * (mmt_resolve()).  A final one that does not verify is counted and
 * ignored, as are statements on other receives.  Pending and "no record"
 * carry no tag: anyone on the path could send them, so they end nothing;
 * the wait goes on for a final one, and only at @deadline does the last
 * of them count (-EINPROGRESS, -ENODATA; -ETIMEDOUT if none came).
 */
static int mmt_conn_res_wait(struct mmt_conn *conn, struct mmt_pmo *pmo,
			     const u8 *nonce, unsigned long deadline,
			     u32 *outcome)
{
	struct mmt_inbox_item *it;
	int err, last = -ETIMEDOUT;
	long left;

	for (;;) {
		left = (long)(deadline - jiffies);
		if (left <= 0)
			return last;
		it = mmt_inbox_wait(conn, &conn->res_inbox, left);
		if (IS_ERR(it)) {
			err = PTR_ERR(it);
			return err == -ETIMEDOUT ? last : err;
		}
		if (crypto_memneq(it->msg.wire.nonce, nonce,
				  MMT_RX_NONCE_BYTES)) {
			kfree(it);
			continue;	/* another query's */
		}
		if (it->msg.index != MMT_MIG_OUTCOME_COMMITTED &&
		    it->msg.index != MMT_MIG_OUTCOME_ABORTED &&
		    it->msg.index != MMT_MIG_OUTCOME_ENDED) {
			if (it->msg.index == MMT_MIG_OUTCOME_PENDING) {
				*outcome = MMT_MIG_OUTCOME_PENDING;
				last = -EINPROGRESS;
			} else {
				*outcome = MMT_MIG_OUTCOME_UNKNOWN;
				last = -ENODATA;
			}
			kfree(it);
			continue;
		}
		err = mmt_resolve(pmo, nonce, it->msg.index,
				  le32_to_cpu(it->msg.wire.closures),
				  it->msg.wire.tag);
		if (err == -EBADMSG) {
			atomic64_inc(&mmt_stats.resolve_forged);
			pr_info_ratelimited("conn %llx: a statement on a migration's or transfer's outcome that does not authenticate\n",
					    conn->conn_id);
			kfree(it);
			continue;
		}
		if (!err) {
			*outcome = it->msg.index;
			atomic64_inc(&mmt_stats.resolves);
		}
		kfree(it);
		return err;
	}
}

/**
 * mmt_conn_migrate_resolve() - MMT_IOC_MIGRATE_RESOLVE (see uapi/mmt.h)
 * @conn: a connection to the destination node of the migration or
 *	transfer of unknown outcome
 * @uarg: user pointer to struct mmt_migrate_resolve
 *
 * MMT_MSG_MIG_QUERY with the receive nonce of the PMO's migration of
 * unknown outcome, then the destination's statement
 * (mmt_conn_res_wait()).
 *
 * Context: process; sleeps; takes @conn->res_mutex, the PMO's lock.
 * Return: 0 or the errors of uapi/mmt.h.
 */
int mmt_conn_migrate_resolve(struct mmt_conn *conn, void __user *uarg)
{
	u8 nonce[MMT_RX_NONCE_BYTES];
	struct mmt_migrate_resolve a;
	struct mmt_inbox_item *it;
	struct mmt_wire_msg w = {};
	unsigned long deadline;
	struct mmt_conn_op op;
	u32 usize, outcome = MMT_MIG_OUTCOME_UNKNOWN;
	int err;

	err = mmt_copy_in(&a, sizeof(a), uarg, MMT_MIGRATE_RESOLVE_SIZE_VER0,
			  &usize);
	if (err)
		return err;
	if (a.flags || a.outcome || a.reserved0 || a.reserved[0] ||
	    a.reserved[1] || a.timeout_ms > 600000)
		return -EINVAL;
	err = mmt_conn_op_begin(a.pmo_fd, &conn->res_mutex, &op);
	if (err)
		return err;
	deadline = jiffies + mmt_timeout(a.timeout_ms);
	err = mmt_mig_unknown_nonce(op.pmo, nonce);
	if (!err)
		err = mmt_conn_op_live(conn);
	if (err)
		goto out;
	/* statements left from an earlier call that timed out */
	while ((it = mmt_inbox_pop(conn, &conn->res_inbox)))
		kfree(it);
	w.type = MMT_MSG_MIG_QUERY;
	memcpy(w.nonce, nonce, sizeof(w.nonce));
	err = conn->fab->post_msg(conn, &w);
	if (!err)
		err = mmt_conn_res_wait(conn, op.pmo, nonce, deadline,
					&outcome);
	a.outcome = outcome;
	if ((!err || err == -ENODATA || err == -EINPROGRESS) &&
	    mmt_copy_out(uarg, &a, sizeof(a), usize) && !err)
		err = -EFAULT;
out:
	mmt_conn_op_end(&op);
	return err;
}

/* MMT_IOC_MIGRATE_FINISH and MMT_IOC_MIGRATE_ABORT: see uapi/mmt.h. */
int mmt_conn_migrate_req(struct mmt_conn *conn, unsigned long arg,
			 unsigned int bit)
{
	struct mmt_mig *migs[2] = { &conn->mig_tx, &conn->mig_rx };
	int i, n = bit == MMT_MIG_REQ_FINISH ? 1 : 2, err = -ENOENT;

	if (arg)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		spin_lock(&migs[i]->lock);
		if (migs[i]->running) {
			set_bit(bit, &migs[i]->req);
			err = 0;
		}
		spin_unlock(&migs[i]->lock);
	}
	wake_up_all(&conn->wq);
	return err;
}
