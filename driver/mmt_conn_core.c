// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_conn_core.c - the connection object of the protocol
 * (driver/mmt_proto.h), whatever fabric carries it: its one state machine
 * and its references, the dispatch of what arrives (a message or a
 * write's notice) into its inboxes, the waits on them, the works it runs,
 * and the prologue of the connection fd's ioctls that name a PMO
 *
 * Model: drivers/infiniband/ulp/rtrs (one state enum with one transition
 * function).
 */
#include <linux/file.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/wait.h>

#include "mmt_proto.h"

/* ------------------------------------------------------------ state */

/*
 * Every connection of this node (credential renewals, device removal),
 * and mmt_listeners of the RDMA fabric (mmt_cm_rdma.c).
 */
DEFINE_MUTEX(mmt_conn_mutex);
LIST_HEAD(mmt_conns);

static const u8 mmt_conn_next[] = {
	[MMT_CONN_NEW] = BIT(MMT_CONN_RESOLVING) | BIT(MMT_CONN_CONNECTING) |
			 BIT(MMT_CONN_DEAD),
	[MMT_CONN_RESOLVING] = BIT(MMT_CONN_CONNECTING) | BIT(MMT_CONN_DEAD),
	[MMT_CONN_CONNECTING] = BIT(MMT_CONN_LIVE) | BIT(MMT_CONN_DEAD),
	[MMT_CONN_LIVE] = BIT(MMT_CONN_DEAD),
	[MMT_CONN_DEAD] = 0,
};

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

/**
 * mmt_conn_unlist() - take @conn off mmt_conns (its owner is done with it)
 * @conn: a connection set up with mmt_conn_setup()
 *
 * Idempotent.  Context: process; takes mmt_conn_mutex.
 */
void mmt_conn_unlist(struct mmt_conn *conn)
{
	mutex_lock(&mmt_conn_mutex);
	list_del_init(&conn->node);
	mutex_unlock(&mmt_conn_mutex);
}

/*
 * kref release of a connection: frees its inboxes and its secrets, then
 * the fabric frees it (struct mmt_fabric_ops.release).
 */
void mmt_conn_free(struct kref *ref)
{
	struct mmt_conn *conn = container_of(ref, struct mmt_conn, ref);
	struct list_head *boxes[] = {
		&conn->tx_inbox, &conn->rx_inbox, &conn->hs_inbox,
		&conn->cred_inbox, &conn->query_inbox, &conn->res_inbox,
	};
	struct mmt_inbox_item *it, *tmp;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(boxes); i++)
		list_for_each_entry_safe(it, tmp, boxes[i], node)
			kfree(it);
	kfree(conn->cred_buf);
	memzero_explicit(conn->hs_secret, sizeof(conn->hs_secret));
	mutex_destroy(&conn->tx_mutex);
	mutex_destroy(&conn->rx_mutex);
	mutex_destroy(&conn->key_mutex);
	mutex_destroy(&conn->ka_mutex);
	mutex_destroy(&conn->res_mutex);
	memzero_explicit(conn->chan_root, sizeof(conn->chan_root));
	conn->fab->release(conn);
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

/* Send a message of @type that carries only @gen, @index and @err. */
int mmt_tx_send_simple(struct mmt_conn *conn, u8 type, u32 gen,
		       u32 index, int err)
{
	struct mmt_wire_msg w = {};

	w.type = type;
	w.gen = cpu_to_le32(gen);
	w.index = cpu_to_le32(index);
	w.err = cpu_to_le32(-err);
	return conn->fab->post_msg(conn, &w);
}

/* ------------------------------------------------------------ arrivals */

/*
 * Queue @it in the inbox its type goes to, or refuse it: a handshake
 * message where no handshake runs, key agreement or a renewal on a
 * connection that is not attested, or a full inbox.  A refusal fails the
 * connection (-EPROTO).  Any context (a completion handler).
 */
static int mmt_conn_dispatch(struct mmt_conn *conn, struct mmt_inbox_item *it)
{
	struct list_head *box;
	unsigned long flags;
	bool hs, ka, cred, query;

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
		return -EPROTO;
	}
	conn->inbox_len++;
	list_add_tail(&it->node, box);
	if (cred)
		mmt_conn_queue(conn, &conn->cred_rx_work);
	if (query)
		mmt_conn_queue(conn, &conn->query_work);
	wake_up_all(&conn->wq);
	spin_unlock_irqrestore(&conn->lock, flags);
	return 0;
}

/**
 * mmt_conn_received() - a message arrived
 * @conn: the connection it arrived on
 * @buf: its bytes as the fabric received them (struct mmt_wire_msg)
 * @len: their number
 *
 * Decode and check the message (mmt_wire_decode()) and queue it in its
 * inbox, waking its reader.  Called by a fabric for every message the
 * peer posted, in the order they were posted.  Context: any (softirq for
 * RDMA completions); does not sleep.
 *
 * Return: 0; -ENOMEM or -EPROTO (malformed, or not expected on this
 * connection), after which the connection is DEAD.
 */
int mmt_conn_received(struct mmt_conn *conn, const void *buf, u32 len)
{
	struct mmt_inbox_item *it;
	int err;

	/*
	 * Completion context: GFP_ATOMIC, and no user task to charge (not
	 * __GFP_ACCOUNT): the item is the connection's until it is taken
	 * off its inbox.
	 */
	it = kzalloc(sizeof(*it), GFP_ATOMIC);
	if (!it) {
		mmt_conn_fail(conn, -ENOMEM);
		return -ENOMEM;
	}
	err = mmt_wire_decode(buf, len, &it->msg);
	if (err) {
		pr_info_ratelimited("conn %llx: bad message: %d\n",
				    conn->conn_id, err);
		kfree(it);
		mmt_conn_fail(conn, -EPROTO);
		return -EPROTO;
	}
	mmt_conn_fault_msg(&it->msg);
	return mmt_conn_dispatch(conn, it);
}

/**
 * mmt_conn_notice() - a closure's writes landed
 * @conn: the connection they arrived on
 * @notice: the notice the writer attached (the immediate data of RDMA's
 *	last write): (gen & 0xff) << MMT_IMM_INDEX_BITS | index
 *
 * Queue it as a DONE message in the receiving side's inbox.  Called by a
 * fabric once every byte of the writes before the notice is in place.
 * Context: any; does not sleep.
 *
 * Return: 0; -ENOMEM or -EPROTO (the inbox is full), after which the
 * connection is DEAD.
 */
int mmt_conn_notice(struct mmt_conn *conn, u32 notice)
{
	struct mmt_inbox_item *it;

	it = kzalloc(sizeof(*it), GFP_ATOMIC);
	if (!it) {
		mmt_conn_fail(conn, -ENOMEM);
		return -ENOMEM;
	}
	it->msg.type = MMT_MSG_DONE;
	it->msg.gen = notice >> MMT_IMM_INDEX_BITS;
	it->msg.index = notice & (MMT_CONN_MAX_CLOSURES - 1);
	return mmt_conn_dispatch(conn, it);
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
		conn->fab->shutdown(conn);
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
 * Stop the connection's works for good: none is queued after, and each
 * queued one gives its reference back.  Context: process.
 */
void mmt_conn_stop_works(struct mmt_conn *conn)
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
