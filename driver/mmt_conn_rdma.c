// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_conn_rdma.c - the RDMA connection object: its state and
 * references, the prologue of the connection fd's ioctls that name a PMO,
 * its verbs resources (PD, CQ, RC QP, receive ring) and their teardown,
 * the completions, the posting of messages, the inboxes and the waits on
 * them, DMA mapping of the buffers the NIC reads and writes
 */
#include <linux/file.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/scatterlist.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/wait.h>

#include "mmt_rdma.h"

/* ------------------------------------------------------------ state */

static const u8 mmt_conn_next[] = {
	[MMT_CONN_NEW] = BIT(MMT_CONN_RESOLVING) | BIT(MMT_CONN_CONNECTING) |
			 BIT(MMT_CONN_DEAD),
	[MMT_CONN_RESOLVING] = BIT(MMT_CONN_CONNECTING) | BIT(MMT_CONN_DEAD),
	[MMT_CONN_CONNECTING] = BIT(MMT_CONN_LIVE) | BIT(MMT_CONN_DEAD),
	[MMT_CONN_LIVE] = BIT(MMT_CONN_DEAD),
	[MMT_CONN_DEAD] = 0,
};

/* Protects mmt_conns and mmt_listeners (mmt_cm_rdma.c): device removal. */
DEFINE_MUTEX(mmt_conn_mutex);
LIST_HEAD(mmt_conns);

/*
 * The one transition function.  Entering DEAD records @err (the first
 * reason wins), entering LIVE @reached_live; every waiter is woken.
 * Caller holds conn->lock.
 */
int mmt_conn_set_state(struct mmt_conn *conn, enum mmt_conn_state to,
		       int err)
{
	lockdep_assert_held(&conn->lock);
	if (!(mmt_conn_next[conn->state] & BIT(to)))
		return -EINVAL;
	conn->state = to;
	if (to == MMT_CONN_LIVE)
		conn->reached_live = true;
	if (to == MMT_CONN_DEAD)
		conn->err = err ? err : -ECONNRESET;
	wake_up_all(&conn->wq);
	return 0;
}

/*
 * Mark the connection failed (any context); no-op if already DEAD.
 * Return: true if this call made it DEAD.
 */
bool mmt_conn_fail(struct mmt_conn *conn, int err)
{
	unsigned long flags;
	bool ret;

	spin_lock_irqsave(&conn->lock, flags);
	ret = !mmt_conn_set_state(conn, MMT_CONN_DEAD, err);
	spin_unlock_irqrestore(&conn->lock, flags);
	return ret;
}

/* The connection's state, and its error in *@err if @err is not NULL. */
enum mmt_conn_state mmt_conn_state(struct mmt_conn *conn, int *err)
{
	enum mmt_conn_state s;
	unsigned long flags;

	spin_lock_irqsave(&conn->lock, flags);
	s = conn->state;
	if (err)
		*err = conn->err;
	spin_unlock_irqrestore(&conn->lock, flags);
	return s;
}

/* Whether the connection ever entered LIVE (it may be DEAD since). */
bool mmt_conn_reached_live(struct mmt_conn *conn)
{
	unsigned long flags;
	bool ret;

	spin_lock_irqsave(&conn->lock, flags);
	ret = conn->reached_live;
	spin_unlock_irqrestore(&conn->lock, flags);
	return ret;
}

/*
 * Test builds ("connect delay MS", "agree delay MS" of debugfs
 * mmt/conn_fault): hold this MMT_IOC_CONNECT (@agree false) or
 * MMT_IOC_CONN_KEY_AGREE until the peer's close arrived, at most the armed
 * delay, so that the close wins the race with the state check that
 * follows.  Nothing otherwise.
 */
void mmt_conn_fault_hold(struct mmt_conn *conn, bool agree)
{
	u32 ms = mmt_conn_fault_delay(agree);

	if (ms)
		wait_event_timeout(conn->wq, mmt_conn_state(conn, NULL) ==
				   MMT_CONN_DEAD, msecs_to_jiffies(ms));
}

/*
 * Test builds (debugfs mmt/conn_fault), once the peer's hello arrived:
 * "hs verify delay MS" makes the check of its credential sleep MS ms;
 * "hs reflect" replaces the peer's hello (*@peer, *@peer_len) and the node
 * id of its rdma_cm hello (*@hello_node) with this node's own, as a relay
 * that cross-feeds two connections to this node's own listener delivers
 * them.  Return: 0 or -ENOMEM.  Nothing otherwise.
 */
int mmt_conn_fault_hs(struct mmt_hs *hs, u8 **peer, u32 *peer_len,
		      u16 *hello_node)
{
#ifdef MMT_DEBUG
	hs->test_verify_ms = mmt_conn_fault_hs_delay();
#endif
	if (!mmt_conn_fault_hs_reflect())
		return 0;
	kfree(*peer);
	*peer = kmemdup(hs->own, hs->own_len, GFP_KERNEL);
	if (!*peer)
		return -ENOMEM;
	*peer_len = hs->own_len;
	*hello_node = mmt_node_id();
	return 0;
}

/* kref release of a connection: frees its inboxes, its secrets and it. */
void mmt_conn_free(struct kref *ref)
{
	struct mmt_conn *conn = container_of(ref, struct mmt_conn, ref);
	struct mmt_inbox_item *it, *tmp;

	list_for_each_entry_safe(it, tmp, &conn->tx_inbox, node)
		kfree(it);
	list_for_each_entry_safe(it, tmp, &conn->rx_inbox, node)
		kfree(it);
	list_for_each_entry_safe(it, tmp, &conn->hs_inbox, node)
		kfree(it);
	list_for_each_entry_safe(it, tmp, &conn->cred_inbox, node)
		kfree(it);
	list_for_each_entry_safe(it, tmp, &conn->query_inbox, node)
		kfree(it);
	list_for_each_entry_safe(it, tmp, &conn->res_inbox, node)
		kfree(it);
	kfree(conn->cred_buf);
	memzero_explicit(conn->hs_secret, sizeof(conn->hs_secret));
	mutex_destroy(&conn->setup_mutex);
	mutex_destroy(&conn->tx_mutex);
	mutex_destroy(&conn->rx_mutex);
	mutex_destroy(&conn->post_mutex);
	mutex_destroy(&conn->key_mutex);
	mutex_destroy(&conn->ka_mutex);
	mutex_destroy(&conn->res_mutex);
	memzero_explicit(conn->chan_root, sizeof(conn->chan_root));
	kfree(conn);
}

/*
 * The channel root of the connection's key (MMT_IOC_CONN_SET_KEY), or NULL
 * if none was set.  Set once and never changed afterwards: the acquire
 * pairs with the release in mmt_conn_set_key().
 */
const u8 *mmt_conn_root(struct mmt_conn *conn)
{
	/* pairs with smp_store_release() in mmt_conn_set_key() */
	return smp_load_acquire(&conn->has_key) ? conn->chan_root : NULL;
}

/* Drop a reference to @conn; the last one frees it (mmt_conn_free()). */
void mmt_conn_put(struct mmt_conn *conn)
{
	kref_put(&conn->ref, mmt_conn_free);
}

/*
 * Queue one of the connection's works (@cred_rx_work, @cred_tx_work)
 * unless it was destroyed; a queued work holds a reference.  Caller
 * holds conn->lock (any context).
 */
void mmt_conn_queue(struct mmt_conn *conn, struct work_struct *work)
{
	lockdep_assert_held(&conn->lock);
	if (conn->works_stopped)
		return;
	kref_get(&conn->ref);
	if (!queue_work(system_wq, work))
		kref_put(&conn->ref, mmt_conn_free);	/* never the last */
}

/*
 * The prologue of the ioctls on a connection fd that name a PMO: the PMO
 * behind @pmo_fd, then @mutex, the call's (MMT_IOC_SEND/RECV and
 * MMT_IOC_MIGRATE_SEND/RECV: the direction's, one transfer or migration
 * per direction at a time; key agreement's, resolve's), interruptibly.
 * On 0 the caller holds both (mmt_conn_op_end() drops them) and
 * mmt_conn_op_live() says whether the connection can carry the call.
 * Errors, nothing held: -EBADF (not an fd), -ENOTTY (not a PMO fd),
 * -EINTR (a signal while waiting for the mutex).
 */
int mmt_conn_op_begin(int pmo_fd, struct mutex *mutex,
		      struct mmt_conn_op *op)
{
	op->f = fdget(pmo_fd);
	if (!fd_file(op->f))
		return -EBADF;
	op->pmo = mmt_pmo_from_file(fd_file(op->f));
	op->mutex = mutex;
	if (!op->pmo) {
		fdput(op->f);
		return -ENOTTY;
	}
	if (mutex_lock_interruptible(op->mutex)) {
		fdput(op->f);
		return -EINTR;
	}
	return 0;
}

/*
 * 0 if the connection is LIVE; else -ETIMEDOUT (it timed out),
 * -EKEYEXPIRED (attested: a credential expired), -EKEYREJECTED (attested:
 * a renewal the peer sent was refused), -ECONNRESET.
 */
int mmt_conn_op_live(struct mmt_conn *conn)
{
	int cerr;

	if (mmt_conn_state(conn, &cerr) == MMT_CONN_LIVE)
		return 0;
	if (cerr == -ETIMEDOUT || cerr == -EKEYEXPIRED ||
	    (cerr == -EKEYREJECTED && conn->hs_done))
		return cerr;
	return -ECONNRESET;
}

/* The epilogue of mmt_conn_op_begin(): drop the mutex and the PMO. */
void mmt_conn_op_end(struct mmt_conn_op *op)
{
	mutex_unlock(op->mutex);
	fdput(op->f);
}

/* ------------------------------------------------------------ completions */

static void mmt_conn_post_recv(struct mmt_conn *conn, struct mmt_rx_buf *b)
{
	struct ib_sge sge = {
		.addr = b->dma,
		.length = MMT_WIRE_MSG_BYTES,
		.lkey = conn->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe = &b->cqe,
		.sg_list = &sge,
		.num_sge = 1,
	};
	int err;

	ib_dma_sync_single_for_device(conn->dev, b->dma, MMT_WIRE_MSG_BYTES,
				      DMA_FROM_DEVICE);
	err = ib_post_recv(conn->qp, &wr, NULL);
	if (err)
		mmt_conn_fail(conn, -ECONNRESET);
}

/* Receive completion (softirq): queue the message, repost the buffer. */
static void mmt_conn_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct mmt_rx_buf *b = container_of(wc->wr_cqe, struct mmt_rx_buf,
					    cqe);
	struct mmt_conn *conn = b->conn;
	struct mmt_inbox_item *it;
	struct list_head *box;
	unsigned long flags;
	int err = 0;
	bool hs, ka, cred, query;

	if (wc->status != IB_WC_SUCCESS) {
		/*
		 * Flushed before the connection was ever LIVE: rdma_cm moved
		 * the QP to error for a reject or a failed handshake, and its
		 * event (REJECTED, CONNECT_ERROR, ...) carries the reason;
		 * failing here first would report ECONNRESET instead.
		 */
		if (wc->status == IB_WC_WR_FLUSH_ERR &&
		    !test_bit(MMT_CONN_WAS_LIVE, &conn->stages))
			return;
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			pr_info_ratelimited("conn %llx: receive failed: %s\n",
					    conn->conn_id,
					    ib_wc_status_msg(wc->status));
		mmt_conn_fail(conn, -ECONNRESET);
		return;
	}
	/*
	 * Completion context: GFP_ATOMIC, and no user task to charge (not
	 * __GFP_ACCOUNT): the item is the connection's until it is taken
	 * off its inbox.
	 */
	it = kzalloc(sizeof(*it), GFP_ATOMIC);
	if (!it) {
		mmt_conn_fail(conn, -ENOMEM);
		return;
	}
	if (wc->opcode == IB_WC_RECV_RDMA_WITH_IMM) {
		u32 imm = be32_to_cpu(wc->ex.imm_data);

		it->msg.type = MMT_MSG_DONE;
		it->msg.gen = imm >> MMT_IMM_INDEX_BITS;
		it->msg.index = imm & (MMT_CONN_MAX_CLOSURES - 1);
	} else {
		ib_dma_sync_single_for_cpu(conn->dev, b->dma,
					   MMT_WIRE_MSG_BYTES, DMA_FROM_DEVICE);
		err = mmt_wire_decode(b->buf, wc->byte_len, &it->msg);
		if (!err)
			mmt_conn_fault_msg(&it->msg);
	}
	if (err) {
		pr_info_ratelimited("conn %llx: bad message: %d\n",
				    conn->conn_id, err);
		kfree(it);
		mmt_conn_fail(conn, -EPROTO);
		return;
	}
	hs = it->msg.type == MMT_MSG_HS_HELLO ||
	     it->msg.type == MMT_MSG_HS_CONFIRM;
	ka = it->msg.type == MMT_MSG_AGREE ||
	     it->msg.type == MMT_MSG_AGREE_CONFIRM;
	cred = it->msg.type == MMT_MSG_CRED;
	query = it->msg.type == MMT_MSG_MIG_QUERY;
	switch (it->msg.type) {
	case MMT_MSG_GRANT:
	case MMT_MSG_ACK:
	case MMT_MSG_NACK:
		box = &conn->tx_inbox;
		break;
	case MMT_MSG_HS_HELLO:
	case MMT_MSG_HS_CONFIRM:
	case MMT_MSG_AGREE:
	case MMT_MSG_AGREE_CONFIRM:
		box = &conn->hs_inbox;
		break;
	case MMT_MSG_CRED:
		box = &conn->cred_inbox;
		break;
	case MMT_MSG_MIG_QUERY:
		box = &conn->query_inbox;
		break;
	case MMT_MSG_MIG_STATEMENT:
		box = &conn->res_inbox;
		break;
	default:
		box = &conn->rx_inbox;
		break;
	}
	spin_lock_irqsave(&conn->lock, flags);
	/*
	 * The handshake's messages only on an attested connection until
	 * its handshake is done here, key agreement's only on an attested
	 * connection.  Others may arrive before this side marked the
	 * handshake done (the peer finished first and went on at once):
	 * they wait in their inbox, which nothing reads before the fd
	 * exists, and that needs the handshake done.  A renewed credential
	 * only on an attested connection; one that arrives before this side
	 * marked the handshake done waits until it is.
	 */
	if ((hs && !(conn->attested && !conn->hs_done)) ||
	    ((ka || cred) && !conn->attested) ||
	    conn->inbox_len >= MMT_INBOX_MAX) {
		spin_unlock_irqrestore(&conn->lock, flags);
		kfree(it);
		mmt_conn_fail(conn, -EPROTO);
		return;
	}
	conn->inbox_len++;
	list_add_tail(&it->node, box);
	if (cred)
		mmt_conn_queue(conn, &conn->cred_rx_work);
	if (query)
		mmt_conn_queue(conn, &conn->query_work);
	wake_up_all(&conn->wq);
	spin_unlock_irqrestore(&conn->lock, flags);
	mmt_conn_post_recv(conn, b);
}

/* A message SEND: struct mmt_wire_msg with its own mapping. */
struct mmt_tx_msg {
	struct ib_cqe cqe;
	struct mmt_conn *conn;
	u64 dma;
	struct mmt_wire_msg w;
};

static void mmt_conn_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct mmt_tx_msg *m = container_of(wc->wr_cqe, struct mmt_tx_msg,
					    cqe);

	struct mmt_conn *conn = m->conn;

	if (wc->status != IB_WC_SUCCESS) {
		atomic_inc(&conn->msgs_failed);
		mmt_conn_fail(conn, -ECONNRESET);
	}
	ib_dma_unmap_single(conn->dev, m->dma, sizeof(m->w), DMA_TO_DEVICE);
	kfree(m);
	if (atomic_dec_and_test(&conn->msgs_out))
		wake_up_all(&conn->wq);
}

/* Count what a refused rkey looks like from the writer's side. */
static void mmt_conn_count_wc(const struct ib_wc *wc)
{
	if (wc->status == IB_WC_REM_ACCESS_ERR)
		atomic64_inc(&mmt_stats.remote_access_errors);
}

static void mmt_conn_wait_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct mmt_wait_cqe *w = container_of(wc->wr_cqe, struct mmt_wait_cqe,
					      cqe);

	w->status = wc->status;
	if (wc->status != IB_WC_SUCCESS) {
		mmt_conn_count_wc(wc);
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			pr_info_ratelimited("conn %llx: WR %d failed: %s\n",
					    w->conn->conn_id, wc->opcode,
					    ib_wc_status_msg(wc->status));
		mmt_conn_fail(w->conn, -ECONNRESET);
	}
	if (w->sq_counted) {
		w->sq_counted = false;
		if (atomic_dec_and_test(&w->conn->writes_out))
			wake_up_all(&w->conn->wq);
	}
	complete(&w->done);
}

/* Set up @w for WRs of @conn, idle (its completion done). */
void mmt_wait_cqe_init(struct mmt_wait_cqe *w, struct mmt_conn *conn)
{
	w->cqe.done = mmt_conn_wait_done;
	w->conn = conn;
	init_completion(&w->done);
	complete(&w->done);	/* idle: nothing outstanding */
}

/* Unsignaled WRs completing with an error still reach this. */
static void mmt_conn_silent_done(struct ib_cq *cq, struct ib_wc *wc)
{
	if (wc->status != IB_WC_SUCCESS) {
		mmt_conn_count_wc(wc);
		mmt_conn_fail(cq->cq_context, -ECONNRESET);
	}
}

struct ib_cqe mmt_silent_cqe = { .done = mmt_conn_silent_done };

/* A timeout in ms of the uAPI (0: the default) in jiffies. */
unsigned long mmt_timeout(u32 ms)
{
	return msecs_to_jiffies(ms ? ms : MMT_DEFAULT_TIMEOUT_MS);
}

/* No message SEND or write chain is outstanding, or the connection is DEAD. */
bool mmt_conn_sq_idle(struct mmt_conn *conn)
{
	return (!atomic_read(&conn->msgs_out) &&
		!atomic_read(&conn->writes_out)) ||
	       mmt_conn_state(conn, NULL) == MMT_CONN_DEAD;
}

/*
 * Post one message, optionally behind @chain (REG_MRs that must execute
 * first).  The message buffer is freed on completion.
 *
 * A chain is posted only once every SEND and RDMA write posted before it
 * on this QP (by either direction: a transfer may run each way at once)
 * has completed, with @post_mutex held so that nothing is posted in
 * between: rxe (6.1) re-executes the local operations that sit behind a
 * WR it retransmits, and a second REG_MR of a valid MR fails ("not free")
 * and breaks the QP.  The wait costs about one round trip per grant.
 */
int mmt_conn_send_msg(struct mmt_conn *conn,
		      const struct mmt_wire_msg *w,
		      struct ib_send_wr *chain,
		      struct ib_send_wr *chain_last)
{
	struct mmt_tx_msg *m;
	struct ib_sge sge;
	struct ib_send_wr wr = {};
	int err;

	/*
	 * Charged to the caller's group (a transfer's messages); a work
	 * item's (credential renewal, a migration query's answer) runs in
	 * a kernel thread of no group, so nothing is charged there.
	 */
	m = kmalloc(sizeof(*m), GFP_KERNEL_ACCOUNT);
	if (!m)
		return -ENOMEM;
	m->w = *w;
	m->w.magic = cpu_to_le32(MMT_WIRE_MSG_MAGIC);
	m->conn = conn;
	m->cqe.done = mmt_conn_send_done;
	/*
	 * Nothing of the device (the mapping, the PD) is touched before
	 * NO_POST is checked under post_mutex: after mmt_conn_shutdown() a
	 * teardown may have freed the PD and the device may be gone (device
	 * removal tears down a connection whose handshake or key agreement
	 * had not started yet, and neither waits for the other).
	 */
	mutex_lock(&conn->post_mutex);
	if (test_bit(MMT_CONN_NO_POST, &conn->stages)) {
		mutex_unlock(&conn->post_mutex);
		kfree(m);
		return -ECONNRESET;	/* see mmt_conn_shutdown() */
	}
	m->dma = ib_dma_map_single(conn->dev, &m->w, sizeof(m->w),
				   DMA_TO_DEVICE);
	if (ib_dma_mapping_error(conn->dev, m->dma)) {
		mutex_unlock(&conn->post_mutex);
		kfree(m);
		return -ENOMEM;
	}
	sge.addr = m->dma;
	sge.length = sizeof(m->w);
	sge.lkey = conn->pd->local_dma_lkey;
	wr.wr_cqe = &m->cqe;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	if (chain_last)
		chain_last->next = &wr;
	if (chain && !wait_event_timeout(conn->wq, mmt_conn_sq_idle(conn),
					 mmt_timeout(0))) {
		err = -ETIMEDOUT;
	} else if (chain && mmt_conn_state(conn, NULL) == MMT_CONN_DEAD) {
		err = -ECONNRESET;
	} else {
		atomic_inc(&conn->msgs_out);
		err = ib_post_send(conn->qp, chain ? chain : &wr, NULL);
		if (err) {
			atomic_dec(&conn->msgs_out);
			mmt_conn_fail(conn, -ECONNRESET);
		}
	}
	if (err)
		ib_dma_unmap_single(conn->dev, m->dma, sizeof(m->w),
				    DMA_TO_DEVICE);
	mutex_unlock(&conn->post_mutex);
	if (err)
		kfree(m);
	return err;
}

/* Send a message of @type that carries only @gen, @index and @err. */
int mmt_tx_send_simple(struct mmt_conn *conn, u8 type, u32 gen,
		       u32 index, int err)
{
	struct mmt_wire_msg w = {};

	w.type = type;
	w.gen = cpu_to_le32(gen);
	w.index = cpu_to_le32(index);
	w.err = cpu_to_le32(-err);
	return mmt_conn_send_msg(conn, &w, NULL, NULL);
}

static void mmt_conn_qp_event(struct ib_event *ev, void *ctx)
{
	struct mmt_conn *conn = ctx;

	pr_info_ratelimited("conn %llx: QP event %s\n", conn->conn_id,
			    ib_event_msg(ev->event));
	if (ev->event == IB_EVENT_QP_ACCESS_ERR)
		atomic64_inc(&mmt_stats.remote_access_errors);
	switch (ev->event) {
	case IB_EVENT_QP_FATAL:
	case IB_EVENT_QP_REQ_ERR:
	case IB_EVENT_QP_ACCESS_ERR:
	case IB_EVENT_DEVICE_FATAL:
		mmt_conn_fail(conn, -ECONNRESET);
		break;
	default:
		break;
	}
}

/* ------------------------------------------------------------ resources */

static void mmt_conn_free_ring(struct mmt_conn *conn)
{
	int i;

	if (!conn->rxb)
		return;
	for (i = 0; i < MMT_RQ_DEPTH; i++) {
		struct mmt_rx_buf *b = &conn->rxb[i];

		if (b->buf && b->dma)
			ib_dma_unmap_single(conn->dev, b->dma,
					    MMT_WIRE_MSG_BYTES,
					    DMA_FROM_DEVICE);
		kfree(b->buf);
	}
	kfree(conn->rxb);
	conn->rxb = NULL;
}

/*
 * Create PD, CQ, QP and the receive ring on @id's device, and post the
 * receives.  Caller holds conn->setup_mutex.  On error everything made
 * here is undone.
 */
int mmt_conn_create_qp(struct mmt_conn *conn, struct rdma_cm_id *id)
{
	struct ib_device *dev = id->device;
	struct ib_qp_init_attr attr = {};
	int i, err;

	lockdep_assert_held(&conn->setup_mutex);
	if (!(dev->attrs.device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS))
		return -EOPNOTSUPP;
	conn->dev = dev;
	conn->max_sge = min_t(u32, dev->attrs.max_send_sge, MMT_MAX_SGE);
	/*
	 * 511, not 512: Soft-RoCE in Linux 6.1 keeps an MR's pages in maps
	 * of 256 and rxe_mr_copy() reads the pointer of the map after the
	 * one a write ends in, past the array when the write ends on the
	 * last page of a full last map (KASAN: slab-out-of-bounds, seen on
	 * the debug guest kernel with 2 MiB closures; rxe's MR code was
	 * rewritten in 6.4).  An MR of 511 pages never fills its last map.
	 */
	conn->max_pages = min_t(u32, dev->attrs.max_fast_reg_page_list_len,
				MMT_MR_PAGES);
	if (!conn->max_sge || !conn->max_pages)
		return -EOPNOTSUPP;
	conn->pd = ib_alloc_pd(dev, 0);
	if (IS_ERR(conn->pd)) {
		err = PTR_ERR(conn->pd);
		conn->pd = NULL;
		return err;
	}
	conn->cq = ib_alloc_cq(dev, conn, MMT_SQ_DEPTH + MMT_RQ_DEPTH + 2, 0,
			       IB_POLL_SOFTIRQ);
	if (IS_ERR(conn->cq)) {
		err = PTR_ERR(conn->cq);
		conn->cq = NULL;
		goto err_pd;
	}
	attr.event_handler = mmt_conn_qp_event;
	attr.qp_context = conn;
	attr.send_cq = conn->cq;
	attr.recv_cq = conn->cq;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	attr.cap.max_send_wr = MMT_SQ_DEPTH + 1;	/* +1 for ib_drain_qp */
	attr.cap.max_recv_wr = MMT_RQ_DEPTH + 1;	/* +1 for ib_drain_qp */
	attr.cap.max_send_sge = conn->max_sge;
	attr.cap.max_recv_sge = 1;
	err = rdma_create_qp(id, conn->pd, &attr);
	if (err)
		goto err_cq;
	conn->qp = id->qp;

	conn->rxb = kcalloc(MMT_RQ_DEPTH, sizeof(*conn->rxb),
			    GFP_KERNEL_ACCOUNT);
	if (!conn->rxb) {
		err = -ENOMEM;
		goto err_qp;
	}
	for (i = 0; i < MMT_RQ_DEPTH; i++) {
		struct mmt_rx_buf *b = &conn->rxb[i];

		b->conn = conn;
		b->cqe.done = mmt_conn_recv_done;
		b->buf = kzalloc(MMT_WIRE_MSG_BYTES, GFP_KERNEL_ACCOUNT);
		if (!b->buf) {
			err = -ENOMEM;
			goto err_ring;
		}
		b->dma = ib_dma_map_single(dev, b->buf, MMT_WIRE_MSG_BYTES,
					   DMA_FROM_DEVICE);
		if (ib_dma_mapping_error(dev, b->dma)) {
			b->dma = 0;
			err = -ENOMEM;
			goto err_ring;
		}
	}
	for (i = 0; i < MMT_RQ_DEPTH; i++) {
		struct ib_sge sge = {
			.addr = conn->rxb[i].dma,
			.length = MMT_WIRE_MSG_BYTES,
			.lkey = conn->pd->local_dma_lkey,
		};
		struct ib_recv_wr wr = {
			.wr_cqe = &conn->rxb[i].cqe,
			.sg_list = &sge,
			.num_sge = 1,
		};

		err = ib_post_recv(conn->qp, &wr, NULL);
		if (err)
			goto err_ring;
	}
	set_bit(MMT_CONN_ALLOCATED, &conn->stages);
	return 0;

err_ring:
	rdma_destroy_qp(id);
	conn->qp = NULL;
	ib_free_cq(conn->cq);
	conn->cq = NULL;
	mmt_conn_free_ring(conn);
	goto err_pd;
err_qp:
	rdma_destroy_qp(id);
	conn->qp = NULL;
err_cq:
	ib_free_cq(conn->cq);
	conn->cq = NULL;
err_pd:
	ib_dealloc_pd(conn->pd);
	conn->pd = NULL;
	return err;
}

/*
 * Stop the connection: disconnect and drain once (every posted WR has
 * completed or been flushed afterwards, so no more remote writes can land
 * and no local buffer is in use by the NIC).  Context: process.
 *
 * From here on mmt_conn_send_msg() posts nothing (-ECONNRESET): a message
 * the other direction posted after the drain (a NACK of an offer already
 * in its inbox, say) would be flushed by the NIC at some later time, and
 * if teardown freed the CQ first its completion, which frees the buffer,
 * would never run (kmemleak found such a NACK under mmt-fuzz).  The bit
 * is set under post_mutex, so a message is either posted before the drain
 * (and flushed by it) or refused.
 */
void mmt_conn_shutdown(struct mmt_conn *conn)
{
	mutex_lock(&conn->post_mutex);
	set_bit(MMT_CONN_NO_POST, &conn->stages);
	mutex_unlock(&conn->post_mutex);
	mutex_lock(&conn->setup_mutex);
	if (conn->cm_id && test_bit(MMT_CONN_CONNECT_SENT, &conn->stages) &&
	    !test_and_set_bit(MMT_CONN_DRAINED, &conn->stages)) {
		rdma_disconnect(conn->cm_id);
		if (test_bit(MMT_CONN_WAS_LIVE, &conn->stages) && conn->qp)
			ib_drain_qp(conn->qp);
	}
	mutex_unlock(&conn->setup_mutex);
}

/*
 * Release every verbs resource and the cm id (idempotent; safe at every
 * stage).  Order as nvme-rdma: disconnect and drain, QP, CQ, ring, PD,
 * then the id (outside setup_mutex: rdma_destroy_id() waits for our
 * handlers).  Context: process; never from an rdma_cm handler.
 */
void mmt_conn_teardown(struct mmt_conn *conn, int err)
{
	struct rdma_cm_id *id;

	mmt_conn_fail(conn, err);
	mutex_lock(&conn->tx_mutex);	/* wait for a transfer to unwind */
	mutex_lock(&conn->rx_mutex);
	mmt_conn_shutdown(conn);
	mutex_lock(&conn->setup_mutex);
	if (test_and_clear_bit(MMT_CONN_ALLOCATED, &conn->stages)) {
		rdma_destroy_qp(conn->cm_id);
		conn->qp = NULL;
		ib_free_cq(conn->cq);
		conn->cq = NULL;
		mmt_conn_free_ring(conn);
		ib_dealloc_pd(conn->pd);
		conn->pd = NULL;
	}
	id = conn->cm_id;
	conn->cm_id = NULL;
	mutex_unlock(&conn->setup_mutex);
	mutex_unlock(&conn->rx_mutex);
	mutex_unlock(&conn->tx_mutex);
	if (id)
		rdma_destroy_id(id);
}

/*
 * Stop the connection's works for good: none is queued after, and each
 * queued one gives its reference back.  Context: process.
 */
static void mmt_conn_stop_works(struct mmt_conn *conn)
{
	unsigned long flags;

	spin_lock_irqsave(&conn->lock, flags);
	conn->works_stopped = true;
	spin_unlock_irqrestore(&conn->lock, flags);
	if (cancel_work_sync(&conn->cred_rx_work))
		mmt_conn_put(conn);
	if (cancel_work_sync(&conn->cred_tx_work))
		mmt_conn_put(conn);
	if (cancel_delayed_work_sync(&conn->expire_work))
		mmt_conn_put(conn);
	if (cancel_work_sync(&conn->query_work))
		mmt_conn_put(conn);
}

/* Final teardown by the owner: works, resources, global list, reference. */
void mmt_conn_destroy(struct mmt_conn *conn)
{
	mmt_conn_stop_works(conn);
	mmt_conn_teardown(conn, -ECONNRESET);
	mutex_lock(&mmt_conn_mutex);
	list_del_init(&conn->node);
	mutex_unlock(&mmt_conn_mutex);
	mmt_conn_put(conn);
}

/* ------------------------------------------------------------ mapping */

/* Map @len bytes at @addr (vmalloc'd or kmalloc'd) for DMA into @s. */
int mmt_map(struct mmt_conn *conn, void *addr, size_t len,
	    struct mmt_sgl *s)
{
	unsigned int off = offset_in_page(addr);
	unsigned int n = DIV_ROUND_UP(off + len, PAGE_SIZE);
	struct page **pages;
	u8 *p = (u8 *)addr - off;
	unsigned int i;
	int err;

	memset(s, 0, sizeof(*s));
	/* in the caller's task: sized by the PMO's geometry (its closures) */
	pages = kvmalloc_array(n, sizeof(*pages), MMT_GFP_USER_SIZED);
	if (!pages)
		return -ENOMEM;
	for (i = 0; i < n; i++, p += PAGE_SIZE)
		pages[i] = is_vmalloc_addr(p) ? vmalloc_to_page(p) :
						virt_to_page(p);
	err = sg_alloc_table_from_pages_segment(&s->sgt, pages, n, off, len,
						ib_dma_max_seg_size(conn->dev),
						MMT_GFP_USER_SIZED);
	kvfree(pages);
	if (err)
		return err;
	s->nents = ib_dma_map_sg(conn->dev, s->sgt.sgl, s->sgt.orig_nents,
				 DMA_BIDIRECTIONAL);
	if (!s->nents) {
		sg_free_table(&s->sgt);
		return -ENOMEM;
	}
	return 0;
}

/* Undo mmt_map(); nothing if @s is not mapped. */
void mmt_unmap(struct mmt_conn *conn, struct mmt_sgl *s)
{
	if (!s->nents)
		return;
	ib_dma_unmap_sg(conn->dev, s->sgt.sgl, s->sgt.orig_nents,
			DMA_BIDIRECTIONAL);
	sg_free_table(&s->sgt);
	s->nents = 0;
}

/* ------------------------------------------------------------ waiting */

/* Pop the first message of @box, or NULL. */
struct mmt_inbox_item *mmt_inbox_pop(struct mmt_conn *conn,
				     struct list_head *box)
{
	struct mmt_inbox_item *it = NULL;
	unsigned long flags;

	spin_lock_irqsave(&conn->lock, flags);
	if (!list_empty(box)) {
		it = list_first_entry(box, struct mmt_inbox_item, node);
		list_del(&it->node);
		conn->inbox_len--;
	}
	spin_unlock_irqrestore(&conn->lock, flags);
	return it;
}

/* @box has a message or the connection is DEAD: a wait on conn->wq ends. */
bool mmt_inbox_ready(struct mmt_conn *conn, struct list_head *box)
{
	unsigned long flags;
	bool ret;

	spin_lock_irqsave(&conn->lock, flags);
	ret = !list_empty(box) || conn->state == MMT_CONN_DEAD;
	spin_unlock_irqrestore(&conn->lock, flags);
	return ret;
}

/*
 * Wait for the next message of @box.  Messages come before the death of
 * the connection is noticed, so a verdict that arrived is never lost.
 * Return: the item, or ERR_PTR of -ECONNRESET (the connection's error),
 * -ETIMEDOUT or -EINTR.
 */
struct mmt_inbox_item *mmt_inbox_wait(struct mmt_conn *conn,
				      struct list_head *box,
				      unsigned long timeout)
{
	struct mmt_inbox_item *it;
	long left;
	int err;

	/*
	 * A signal wins even over queued messages (the wait below returns
	 * at once while the condition holds, without looking at signals):
	 * a killed receiver must stop mid-transfer.
	 */
	if (signal_pending(current))
		return ERR_PTR(-EINTR);
	left = wait_event_interruptible_timeout(conn->wq,
						mmt_inbox_ready(conn, box),
						timeout);
	it = mmt_inbox_pop(conn, box);
	if (it)
		return it;
	if (left < 0)
		return ERR_PTR(-EINTR);
	if (mmt_conn_state(conn, &err) == MMT_CONN_DEAD) {
		/*
		 * A message the peer sent just before it went away may
		 * still sit in the CQ: after the drain every completion
		 * has been handled.
		 */
		mmt_conn_shutdown(conn);
		it = mmt_inbox_pop(conn, box);
		if (it)
			return it;
		return ERR_PTR(err == -ETIMEDOUT ? -ETIMEDOUT : -ECONNRESET);
	}
	return ERR_PTR(-ETIMEDOUT);
}

static bool mmt_conn_msgs_done(struct mmt_conn *conn)
{
	return !atomic_read(&conn->msgs_out) ||
	       mmt_conn_state(conn, NULL) == MMT_CONN_DEAD;
}

/*
 * At the end of a transfer: wait until the peer has our last messages
 * (their SENDs completed), so closing the connection right after the
 * ioctl cannot flush an ACK or END the peer still needs.
 */
void mmt_conn_flush_msgs(struct mmt_conn *conn, unsigned long timeout)
{
	wait_event_timeout(conn->wq, mmt_conn_msgs_done(conn), timeout);
}

/*
 * Wait for a signaled WR; a dead connection's drain completes it.  An idle
 * struct mmt_wait_cqe has its completion done (count 1): waiting leaves it
 * so; reinit_completion() arms it right before the WR is posted.
 */
int mmt_wait_wr(struct mmt_conn *conn, struct mmt_wait_cqe *w,
		unsigned long timeout)
{
	if (!wait_for_completion_timeout(&w->done, timeout)) {
		mmt_conn_fail(conn, -ETIMEDOUT);
		mmt_conn_shutdown(conn);
		wait_for_completion(&w->done);
	}
	complete(&w->done);
	return w->status == IB_WC_SUCCESS ? 0 : -ECONNRESET;
}

/* After mmt_conn_shutdown(): every WR has completed or been flushed. */
void mmt_wait_idle(struct mmt_wait_cqe *w)
{
	wait_for_completion(&w->done);
	complete(&w->done);
}

/* Hand the CPU's writes to @s over to the device before they are posted. */
void mmt_sync_for_device(struct mmt_conn *conn, struct mmt_sgl *s)
{
	if (!ib_uses_virt_dma(conn->dev))
		dma_sync_sg_for_device(conn->dev->dma_device, s->sgt.sgl,
				       s->sgt.orig_nents, DMA_BIDIRECTIONAL);
}
