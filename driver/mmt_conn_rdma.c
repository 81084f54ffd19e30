// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_conn_rdma.c - a connection's verbs resources (PD, CQ, RC QP,
 * receive ring) and their teardown, the completions (what arrives goes to
 * mmt_conn_received() and mmt_conn_notice() of driver/mmt_conn_core.c),
 * the posting of messages, the waits on signaled WRs, DMA mapping of the
 * buffers the NIC reads and writes
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

/* ------------------------------------------------------------ completions */

static void mmt_conn_post_recv(struct mmt_conn *conn, struct mmt_rx_buf *b)
{
	struct ib_sge sge = {
		.addr = b->dma,
		.length = MMT_WIRE_MSG_BYTES,
		.lkey = mmt_rdma(conn)->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe = &b->cqe,
		.sg_list = &sge,
		.num_sge = 1,
	};
	int err;

	ib_dma_sync_single_for_device(mmt_rdma(conn)->dev, b->dma, MMT_WIRE_MSG_BYTES,
				      DMA_FROM_DEVICE);
	err = ib_post_recv(mmt_rdma(conn)->qp, &wr, NULL);
	if (err)
		mmt_conn_fail(conn, -ECONNRESET);
}

/**
 * mmt_rdma_bad_arrival() - a protocol error of the fabric
 * @conn: the connection it arrived on
 * @what: what arrived where the connection's provider does not use it
 *	(for the log line)
 *
 * Fails the connection with -EPROTO and logs why (rate-limited).
 *
 * Context: the receive completion (softirq); does not sleep.
 * Return: -EPROTO.
 */
static int mmt_rdma_bad_arrival(struct mmt_conn *conn, const char *what)
{
	pr_info_ratelimited("conn %llx: %s on a%s connection: protocol error\n",
			    conn->conn_id, what,
			    mmt_rdma(conn)->iwarp ? "n iWARP" : " RoCE");
	mmt_conn_fail(conn, -EPROTO);
	return -EPROTO;
}

/**
 * mmt_listener_ready() - hand a connection taken in to MMT_IOC_ACCEPT
 * @conn: a connection of a listener, established (on iWARP: and the
 *	connecting side's first message arrived, mmt_rdma_half_ready())
 *
 * Moves it from the listener's pending list to its ready list and wakes
 * the accepting threads; nothing if the listener's release took it off.
 *
 * Context: any; does not sleep.
 */
void mmt_listener_ready(struct mmt_conn *conn)
{
	struct mmt_rdma_conn *rc = mmt_rdma(conn);
	struct mmt_listener *l = rc->listener;
	unsigned long flags;

	spin_lock_irqsave(&l->lock, flags);
	/* Not if the listener's release took it off already. */
	if (!list_empty(&rc->lnode)) {
		list_move_tail(&rc->lnode, &l->ready);
		wake_up_all(&l->wq);
	}
	spin_unlock_irqrestore(&l->lock, flags);
}

/**
 * mmt_rdma_half_ready() - one of the two things an iWARP connection taken
 *	in by a listener waits for has happened
 * @conn: the accepting side's connection, on an iWARP device
 *
 * iWARP's rule: the accepting side sends nothing before the connecting
 * side's first message arrived (an early message would reach the
 * connecting side's MPA negotiation as extra data and break it), so the
 * connection waits in the listener's pending list until both its
 * ESTABLISHED event and the connecting side's MMT_MSG_START are in;
 * whichever comes second hands it to MMT_IOC_ACCEPT
 * (mmt_listener_ready()).
 *
 * Context: any (the rdma_cm handler, or the receive completion in
 * softirq); does not sleep.
 */
void mmt_rdma_half_ready(struct mmt_conn *conn)
{
	if (test_and_set_bit(MMT_CONN_HALF_READY, &mmt_rdma(conn)->stages))
		mmt_listener_ready(conn);
}

/* MMT_MSG_STARTs a connecting side posts: the first and its repeats */
#define MMT_RDMA_STARTS		4

/**
 * mmt_rdma_send_start() - post MMT_MSG_START and schedule its repeat
 * @conn: the connecting side's connection, on an iWARP device, whose QP
 *	is ready to send (ESTABLISHED)
 *
 * The first START goes out before the connection enters LIVE, so it
 * precedes anything the user posts.  It is posted again 100 ms, 400 ms
 * and 1.6 s later: Soft-iWARP (siw, Linux 6.1) does not notice data that
 * reaches the accepting side between its MPA reply and the hand-over of
 * the socket to the QP until more data arrives, so a START (and an OFFER
 * right behind it) can sit there unread and the accepting side would
 * never hand the connection out; any later arrival releases them.  The
 * accepting side takes the repeats as no-ops.
 *
 * Context: process (the rdma_cm handler or the work); may sleep.  A
 * failed post fails the connection.
 */
void mmt_rdma_send_start(struct mmt_conn *conn)
{
	struct mmt_rdma_conn *rc = mmt_rdma(conn);
	struct mmt_wire_msg *w;
	int err;

	w = kzalloc(sizeof(*w), GFP_KERNEL);
	if (!w) {
		mmt_conn_fail(conn, -ENOMEM);
		return;
	}
	w->type = MMT_MSG_START;
	err = mmt_rdma_send_msg(conn, w, NULL, NULL);
	kfree(w);
	if (err) {
		mmt_conn_fail(conn, err);
		return;
	}
	if (++rc->starts < MMT_RDMA_STARTS)
		schedule_delayed_work(&rc->start_work,
				      msecs_to_jiffies(100 << (2 * (rc->starts - 1))));
}

/**
 * mmt_rdma_start_again() - the repeat of MMT_MSG_START
 * @work: &struct mmt_rdma_conn.start_work
 *
 * Cancelled (synchronously) by mmt_rdma_teardown() before the
 * connection's resources go.
 *
 * Context: a workqueue (process); may sleep.
 */
void mmt_rdma_start_again(struct work_struct *work)
{
	struct mmt_rdma_conn *rc = container_of(to_delayed_work(work),
						struct mmt_rdma_conn,
						start_work);

	if (mmt_conn_state(&rc->conn, NULL) == MMT_CONN_LIVE)
		mmt_rdma_send_start(&rc->conn);
}

/**
 * mmt_rdma_fabric_msg() - take a message that belongs to the fabric
 * @conn: the connection it arrived on
 * @buf: the received bytes (struct mmt_wire_msg)
 * @len: how many
 *
 * On an iWARP connection a closure's notice arrives as MMT_MSG_NOTICE
 * (handed to mmt_conn_notice() as an immediate would be) and the
 * connecting side's first message as MMT_MSG_START (mmt_conn.h).
 *
 * Context: the receive completion (softirq).
 * Return: -ENOMSG if the message is the protocol's (the caller hands it
 * to mmt_conn_received()); 0 if it was taken; -EPROTO if it breaks the
 * fabric's rules (the connection is then DEAD); mmt_conn_notice()'s
 * error.
 */
static int mmt_rdma_fabric_msg(struct mmt_conn *conn, const void *buf,
			       u32 len)
{
	const struct mmt_wire_msg *w = buf;
	struct mmt_rdma_conn *rc = mmt_rdma(conn);

	if (len < offsetof(struct mmt_wire_msg, segs) ||
	    le32_to_cpu(w->magic) != MMT_WIRE_MSG_MAGIC ||
	    (w->type != MMT_MSG_NOTICE && w->type != MMT_MSG_START))
		return -ENOMSG;
	if (!rc->iwarp)
		return mmt_rdma_bad_arrival(conn, w->type == MMT_MSG_NOTICE ?
					    "a NOTICE message" :
					    "a START message");
	if (w->type == MMT_MSG_NOTICE)
		return mmt_conn_notice(conn, le32_to_cpu(w->index));
	if (!rc->listener)
		return mmt_rdma_bad_arrival(conn, "a START to the connecting side");
	/* the repeats of mmt_rdma_send_start() change nothing */
	if (!test_and_set_bit(MMT_CONN_STARTED, &rc->stages))
		mmt_rdma_half_ready(conn);
	return 0;
}

/* Receive completion (softirq): hand the message over, repost the buffer. */
static void mmt_conn_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct mmt_rx_buf *b = container_of(wc->wr_cqe, struct mmt_rx_buf,
					    cqe);
	struct mmt_conn *conn = b->conn;
	int err;

	if (wc->status != IB_WC_SUCCESS) {
		/*
		 * Flushed before the connection was ever LIVE: rdma_cm moved
		 * the QP to error for a reject or a failed handshake, and its
		 * event (REJECTED, CONNECT_ERROR, ...) carries the reason;
		 * failing here first would report ECONNRESET instead.
		 */
		if (wc->status == IB_WC_WR_FLUSH_ERR &&
		    !test_bit(MMT_CONN_WAS_LIVE, &mmt_rdma(conn)->stages))
			return;
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			pr_info_ratelimited("conn %llx: receive failed: %s\n",
					    conn->conn_id,
					    ib_wc_status_msg(wc->status));
		mmt_conn_fail(conn, -ECONNRESET);
		return;
	}
	if (wc->opcode == IB_WC_RECV_RDMA_WITH_IMM) {
		if (mmt_rdma(conn)->iwarp)
			err = mmt_rdma_bad_arrival(conn, "immediate data");
		else
			err = mmt_conn_notice(conn,
					      be32_to_cpu(wc->ex.imm_data));
	} else {
		ib_dma_sync_single_for_cpu(mmt_rdma(conn)->dev, b->dma,
					   MMT_WIRE_MSG_BYTES, DMA_FROM_DEVICE);
		err = mmt_rdma_fabric_msg(conn, b->buf, wc->byte_len);
		if (err == -ENOMSG)
			err = mmt_conn_received(conn, b->buf, wc->byte_len);
	}
	if (!err)
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
	ib_dma_unmap_single(mmt_rdma(conn)->dev, m->dma, sizeof(m->w), DMA_TO_DEVICE);
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
	struct mmt_rdma_wait *w = container_of(wc->wr_cqe, struct mmt_rdma_wait,
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
void mmt_rdma_wait_init(struct mmt_rdma_wait *w, struct mmt_conn *conn)
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

struct ib_cqe mmt_rdma_silent_cqe = { .done = mmt_conn_silent_done };

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
int mmt_rdma_send_msg(struct mmt_conn *conn,
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
	/* test builds: a peer that breaks the fabric's rules */
	if (w->type != MMT_MSG_START)
		m->w.type = mmt_conn_fault_wire(w->type);
	m->conn = conn;
	m->cqe.done = mmt_conn_send_done;
	/*
	 * Nothing of the device (the mapping, the PD) is touched before
	 * NO_POST is checked under post_mutex: after mmt_rdma_shutdown() a
	 * teardown may have freed the PD and the device may be gone (device
	 * removal tears down a connection whose handshake or key agreement
	 * had not started yet, and neither waits for the other).
	 */
	mutex_lock(&mmt_rdma(conn)->post_mutex);
	if (test_bit(MMT_CONN_NO_POST, &mmt_rdma(conn)->stages)) {
		mutex_unlock(&mmt_rdma(conn)->post_mutex);
		kfree(m);
		return -ECONNRESET;	/* see mmt_rdma_shutdown() */
	}
	m->dma = ib_dma_map_single(mmt_rdma(conn)->dev, &m->w, sizeof(m->w),
				   DMA_TO_DEVICE);
	if (ib_dma_mapping_error(mmt_rdma(conn)->dev, m->dma)) {
		mutex_unlock(&mmt_rdma(conn)->post_mutex);
		kfree(m);
		return -ENOMEM;
	}
	sge.addr = m->dma;
	sge.length = sizeof(m->w);
	sge.lkey = mmt_rdma(conn)->pd->local_dma_lkey;
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
		err = ib_post_send(mmt_rdma(conn)->qp, chain ? chain : &wr, NULL);
		if (err) {
			atomic_dec(&conn->msgs_out);
			mmt_conn_fail(conn, -ECONNRESET);
		}
	}
	if (err)
		ib_dma_unmap_single(mmt_rdma(conn)->dev, m->dma, sizeof(m->w),
				    DMA_TO_DEVICE);
	mutex_unlock(&mmt_rdma(conn)->post_mutex);
	if (err)
		kfree(m);
	return err;
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
	struct mmt_rdma_conn *rc = mmt_rdma(conn);
	int i;

	if (!rc->rxb)
		return;
	for (i = 0; i < MMT_RQ_DEPTH; i++) {
		struct mmt_rx_buf *b = &rc->rxb[i];

		if (b->buf && b->dma)
			ib_dma_unmap_single(rc->dev, b->dma,
					    MMT_WIRE_MSG_BYTES,
					    DMA_FROM_DEVICE);
		kfree(b->buf);
	}
	kfree(rc->rxb);
	rc->rxb = NULL;
}

/*
 * Create PD, CQ, QP and the receive ring on @id's device, and post the
 * receives.  Caller holds mmt_rdma(conn)->setup_mutex.  On error everything made
 * here is undone.
 */
int mmt_rdma_create_qp(struct mmt_conn *conn, struct rdma_cm_id *id)
{
	struct mmt_rdma_conn *rc = mmt_rdma(conn);
	struct ib_device *dev = id->device;
	struct ib_qp_init_attr attr = {};
	int i, err;

	lockdep_assert_held(&rc->setup_mutex);
	if (!(dev->attrs.device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS))
		return -EOPNOTSUPP;
	rc->dev = dev;
	/*
	 * iWARP has no immediate data and wants the connecting side to send
	 * first (svcrdma and the NFS client decide with the same test).
	 */
	rc->iwarp = rdma_protocol_iwarp(dev, id->port_num);
	rc->max_sge = min_t(u32, dev->attrs.max_send_sge, MMT_MAX_SGE);
	/*
	 * 511, not 512: Soft-RoCE in Linux 6.1 keeps an MR's pages in maps
	 * of 256 and rxe_mr_copy() reads the pointer of the map after the
	 * one a write ends in, past the array when the write ends on the
	 * last page of a full last map (KASAN: slab-out-of-bounds, seen on
	 * the debug guest kernel with 2 MiB closures; rxe's MR code was
	 * rewritten in 6.4).  An MR of 511 pages never fills its last map.
	 */
	rc->max_pages = min_t(u32, dev->attrs.max_fast_reg_page_list_len,
			      MMT_MR_PAGES);
	if (!rc->max_sge || !rc->max_pages)
		return -EOPNOTSUPP;
	rc->pd = ib_alloc_pd(dev, 0);
	if (IS_ERR(rc->pd)) {
		err = PTR_ERR(rc->pd);
		rc->pd = NULL;
		return err;
	}
	rc->cq = ib_alloc_cq(dev, conn, MMT_SQ_DEPTH + MMT_RQ_DEPTH + 2, 0,
			     IB_POLL_SOFTIRQ);
	if (IS_ERR(rc->cq)) {
		err = PTR_ERR(rc->cq);
		rc->cq = NULL;
		goto err_pd;
	}
	attr.event_handler = mmt_conn_qp_event;
	attr.qp_context = conn;
	attr.send_cq = rc->cq;
	attr.recv_cq = rc->cq;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	attr.cap.max_send_wr = MMT_SQ_DEPTH + 1;	/* +1 for ib_drain_qp */
	attr.cap.max_recv_wr = MMT_RQ_DEPTH + 1;	/* +1 for ib_drain_qp */
	attr.cap.max_send_sge = rc->max_sge;
	attr.cap.max_recv_sge = 1;
	err = rdma_create_qp(id, rc->pd, &attr);
	if (err)
		goto err_cq;
	rc->qp = id->qp;

	rc->rxb = kcalloc(MMT_RQ_DEPTH, sizeof(*rc->rxb),
			  GFP_KERNEL_ACCOUNT);
	if (!rc->rxb) {
		err = -ENOMEM;
		goto err_qp;
	}
	for (i = 0; i < MMT_RQ_DEPTH; i++) {
		struct mmt_rx_buf *b = &rc->rxb[i];

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
			.addr = rc->rxb[i].dma,
			.length = MMT_WIRE_MSG_BYTES,
			.lkey = rc->pd->local_dma_lkey,
		};
		struct ib_recv_wr wr = {
			.wr_cqe = &rc->rxb[i].cqe,
			.sg_list = &sge,
			.num_sge = 1,
		};

		err = ib_post_recv(rc->qp, &wr, NULL);
		if (err)
			goto err_ring;
	}
	set_bit(MMT_CONN_ALLOCATED, &rc->stages);
	return 0;

err_ring:
	rdma_destroy_qp(id);
	rc->qp = NULL;
	ib_free_cq(rc->cq);
	rc->cq = NULL;
	mmt_conn_free_ring(conn);
	goto err_pd;
err_qp:
	rdma_destroy_qp(id);
	rc->qp = NULL;
err_cq:
	ib_free_cq(rc->cq);
	rc->cq = NULL;
err_pd:
	ib_dealloc_pd(rc->pd);
	rc->pd = NULL;
	return err;
}

/*
 * iWARP: move @qp to the error state before rdma_disconnect(), which
 * flushes every send WR posted and not yet completed.  rdma_disconnect()
 * is graceful on iWARP (iw_cm_disconnect() asks for SQD); siw (6.1 and
 * 6.12) then enters CLOSING and drops the socket without flushing the
 * send WRs its transmit thread has not started, and its later move to
 * ERROR (ib_drain_qp()) flushes only the one in progress: the drain's
 * marker completes ahead of them and their completions never come (a
 * closure posted just before a transfer's abort would keep its sender
 * waiting forever).  From RTS to ERROR siw flushes the whole send queue.  On
 * RoCE rdma_disconnect() itself moves the QP to ERROR.
 */
static void mmt_rdma_qp_error(struct ib_qp *qp)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

	/* a QP already in ERROR (the peer closed first) is left so */
	ib_modify_qp(qp, &attr, IB_QP_STATE);
}

/*
 * Stop the connection: disconnect and drain once (every posted WR has
 * completed or been flushed afterwards, so no more remote writes can land
 * and no local buffer is in use by the NIC).  Context: process.
 *
 * From here on mmt_rdma_send_msg() posts nothing (-ECONNRESET): a message
 * the other direction posted after the drain (a NACK of an offer already
 * in its inbox, say) would be flushed by the NIC at some later time, and
 * if teardown freed the CQ first its completion, which frees the buffer,
 * would never run (kmemleak found such a NACK under mmt-fuzz).  The bit
 * is set under post_mutex, so a message is either posted before the drain
 * (and flushed by it) or refused.
 */
void mmt_rdma_shutdown(struct mmt_conn *conn)
{
	struct mmt_rdma_conn *rc = mmt_rdma(conn);

	mutex_lock(&rc->post_mutex);
	set_bit(MMT_CONN_NO_POST, &rc->stages);
	mutex_unlock(&rc->post_mutex);
	mutex_lock(&rc->setup_mutex);
	if (rc->cm_id && test_bit(MMT_CONN_CONNECT_SENT, &rc->stages) &&
	    !test_and_set_bit(MMT_CONN_DRAINED, &rc->stages)) {
		bool live = test_bit(MMT_CONN_WAS_LIVE, &rc->stages) && rc->qp;

		if (live && rc->iwarp)
			mmt_rdma_qp_error(rc->qp);
		rdma_disconnect(rc->cm_id);
		if (live)
			ib_drain_qp(rc->qp);
	}
	mutex_unlock(&rc->setup_mutex);
}

/*
 * Release every verbs resource and the cm id (idempotent; safe at every
 * stage).  Order as nvme-rdma: disconnect and drain, QP, CQ, ring, PD,
 * then the id (outside setup_mutex: rdma_destroy_id() waits for our
 * handlers).  Context: process; never from an rdma_cm handler.
 */
void mmt_rdma_teardown(struct mmt_conn *conn, int err)
{
	struct mmt_rdma_conn *rc = mmt_rdma(conn);
	struct rdma_cm_id *id;

	mmt_conn_fail(conn, err);
	cancel_delayed_work_sync(&rc->start_work);	/* iWARP: START again */
	mutex_lock(&conn->tx_mutex);	/* wait for a transfer to unwind */
	mutex_lock(&conn->rx_mutex);
	mmt_rdma_shutdown(conn);
	mutex_lock(&rc->setup_mutex);
	if (test_and_clear_bit(MMT_CONN_ALLOCATED, &rc->stages)) {
		rdma_destroy_qp(rc->cm_id);
		rc->qp = NULL;
		ib_free_cq(rc->cq);
		rc->cq = NULL;
		mmt_conn_free_ring(conn);
		ib_dealloc_pd(rc->pd);
		rc->pd = NULL;
	}
	id = rc->cm_id;
	rc->cm_id = NULL;
	mutex_unlock(&rc->setup_mutex);
	mutex_unlock(&conn->rx_mutex);
	mutex_unlock(&conn->tx_mutex);
	if (id)
		rdma_destroy_id(id);
	/* an ESTABLISHED handler that ran meanwhile may have armed it */
	cancel_delayed_work_sync(&rc->start_work);
}

/*
 * Free an RDMA connection once its last reference is gone
 * (struct mmt_fabric_ops.release): teardown released its resources.
 */
void mmt_rdma_release(struct mmt_conn *conn)
{
	struct mmt_rdma_conn *rc = mmt_rdma(conn);

	mutex_destroy(&rc->setup_mutex);
	mutex_destroy(&rc->post_mutex);
	kfree(rc);
}

/* Final teardown by the owner: works, resources, global list, reference. */
void mmt_rdma_destroy(struct mmt_conn *conn)
{
	mmt_conn_stop_works(conn);
	mmt_rdma_teardown(conn, -ECONNRESET);
	mmt_conn_unlist(conn);
	mmt_conn_put(conn);
}

/* ------------------------------------------------------------ mapping */

/* Map @len bytes at @addr (vmalloc'd or kmalloc'd) for DMA into @s. */
int mmt_rdma_map(struct mmt_conn *conn, void *addr, size_t len,
		 struct mmt_rdma_sgl *s)
{
	unsigned int off = offset_in_page(addr);
	unsigned int n = DIV_ROUND_UP(off + len, PAGE_SIZE);
	struct page **pages;
	u8 *p = (u8 *)addr - off;
	unsigned int i, seg;
	int err;

	memset(s, 0, sizeof(*s));
	/* in the caller's task: sized by the PMO's geometry (its closures) */
	pages = kvmalloc_array(n, sizeof(*pages), MMT_GFP_USER_SIZED);
	if (!pages)
		return -ENOMEM;
	for (i = 0; i < n; i++, p += PAGE_SIZE)
		pages[i] = is_vmalloc_addr(p) ? vmalloc_to_page(p) :
						virt_to_page(p);
	seg = ib_dma_max_seg_size(mmt_rdma(conn)->dev);
	if (mmt_conn_fault_map_pages())	/* test builds: fragmented memory */
		seg = PAGE_SIZE;
	err = sg_alloc_table_from_pages_segment(&s->sgt, pages, n, off, len,
						seg, MMT_GFP_USER_SIZED);
	kvfree(pages);
	if (err)
		return err;
	s->nents = ib_dma_map_sg(mmt_rdma(conn)->dev, s->sgt.sgl, s->sgt.orig_nents,
				 DMA_BIDIRECTIONAL);
	if (!s->nents) {
		sg_free_table(&s->sgt);
		return -ENOMEM;
	}
	return 0;
}

/* Undo mmt_rdma_map(); nothing if @s is not mapped. */
void mmt_rdma_unmap(struct mmt_conn *conn, struct mmt_rdma_sgl *s)
{
	if (!s->nents)
		return;
	ib_dma_unmap_sg(mmt_rdma(conn)->dev, s->sgt.sgl, s->sgt.orig_nents,
			DMA_BIDIRECTIONAL);
	sg_free_table(&s->sgt);
	s->nents = 0;
}

/* ------------------------------------------------------------ waiting */

/*
 * Wait for a signaled WR; a dead connection's drain completes it.  An idle
 * struct mmt_rdma_wait has its completion done (count 1): waiting leaves it
 * so; reinit_completion() arms it right before the WR is posted.
 */
int mmt_rdma_wait_wr(struct mmt_conn *conn, struct mmt_rdma_wait *w,
		     unsigned long timeout)
{
	if (!wait_for_completion_timeout(&w->done, timeout)) {
		mmt_conn_fail(conn, -ETIMEDOUT);
		mmt_rdma_shutdown(conn);
		wait_for_completion(&w->done);
	}
	complete(&w->done);
	return w->status == IB_WC_SUCCESS ? 0 : -ECONNRESET;
}

/* After mmt_rdma_shutdown(): every WR has completed or been flushed. */
void mmt_rdma_wait_idle(struct mmt_rdma_wait *w)
{
	wait_for_completion(&w->done);
	complete(&w->done);
}

/* Hand the CPU's writes to @s over to the device before they are posted. */
void mmt_rdma_sync_for_device(struct mmt_conn *conn, struct mmt_rdma_sgl *s)
{
	if (!ib_uses_virt_dma(mmt_rdma(conn)->dev))
		dma_sync_sg_for_device(mmt_rdma(conn)->dev->dma_device, s->sgt.sgl,
				       s->sgt.orig_nents, DMA_BIDIRECTIONAL);
}
