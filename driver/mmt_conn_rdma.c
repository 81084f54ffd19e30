// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_conn_rdma.c - connections over in-kernel verbs: rdma_cm listen,
 * connect and accept; one RC QP per connection; the MMT, secure and plain
 * channels (DESIGN.md sections 1 and 5; the wire protocol is described in
 * mmt_conn.h)
 *
 * Models: drivers/nvme/host/rdma.c (stage bits, CQ with ib_cqe callbacks,
 * +1 WR for draining, FRWR registration, ib_client removal, teardown
 * order), drivers/infiniband/ulp/rtrs (one state enum with one transition
 * function, WRITE_WITH_IMM as the completion notice).
 *
 * Memory: the receiver registers exactly the closure regions it is waiting
 * for, one grant at a time (at most MMT_CONN_WINDOW), with fast
 * registration (IB_WR_REG_MR) under a fresh rkey each time (an MR is
 * replaced before its 8-bit key wraps), split into segments of at most
 * the device's max_fast_reg_page_list_len pages; after
 * the sender's completion notice it posts LOCAL_INV and waits for it
 * before it looks at a byte, so nothing can change what it checks.  No
 * global rkey is ever used.  The sender writes straight from its PMO
 * memory (MMT channel, SENDING keeps it unchanged; plain channel, a plain
 * PMO's bytes as they are) or from a bounce buffer holding the AES-GCM
 * message (secure channel), mapped with ib_dma_map_sg() and the PD's
 * local_dma_lkey.
 *
 * Receive area of closure i (MMT channel): the PMO's own memory for
 * closure i (data | data MACs | tree nodes, at i * stride, the same layout
 * on both sides), written in place, plus a 192-byte head slot in the
 * receiver's private memory for the closure header and sealed root (the
 * last segment of the grant, written with IMM).  Plain channel: the plain
 * receive PMO's memory for closure i's data, written in place; nothing to
 * check after invalidation.  Secure channel: a bounce buffer per window
 * slot for one AES-GCM message (data + 16-byte tag), copied into a private
 * buffer and opened there after invalidation, then copied into a plain PMO
 * or written through the controller into a keyed one (mmt_conn_sec_*()).
 *
 * Locking: conn->lock (spinlock) protects state, error and the two
 * inboxes, and is taken in the completion and rdma_cm handlers;
 * conn->setup_mutex protects the verbs resources, the stage bits and the
 * ownership of conn->cm_id; rdma_cm handlers may take it because nobody
 * waits for a handler while holding it (rdma_destroy_id(), which waits for
 * the handlers, is called after dropping it) or calls rdma_connect(), which
 * takes the id's handler_mutex that the handlers run under (the connect
 * path holds tx_mutex across it instead, which keeps a teardown away);
 * conn->tx_mutex and conn->rx_mutex serialize MMT_IOC_SEND and
 * MMT_IOC_RECV (one of each may run at the same time); conn->key_mutex
 * serializes MMT_IOC_CONN_SET_KEY (the key is set once and then only
 * read: mmt_conn_root()).  Order: tx_mutex,
 * rx_mutex, setup_mutex, then a PMO's lock; conn->post_mutex (every post of
 * a message or a write chain) is innermost and is never held with
 * setup_mutex or a PMO's lock.  mmt_conn_mutex protects the
 * global lists used by device removal.
 */
#include <crypto/algapi.h>
#include <linux/anon_inodes.h>
#include <linux/delay.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/kref.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/memcontrol.h>
#include <linux/module.h>
#include <linux/nsproxy.h>
#include <linux/poll.h>
#include <linux/random.h>
#include <linux/scatterlist.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/socket.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/wait.h>
#include <net/net_namespace.h>
#include <rdma/ib_cm.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "mmt_conn.h"
#include "mmt_internal.h"
#include "mmt_transport.h"
#include "mmt.h"

#define MMT_SQ_DEPTH		512	/* send WRs (+1 for the drain) */
#define MMT_RQ_DEPTH		64	/* receive WRs (+1 for the drain) */
#define MMT_MAX_SGE		16	/* SGEs per RDMA write */
#define MMT_MR_PAGES		511	/* pages per MR (mmt_conn_create_qp()) */
#define MMT_DEFAULT_TIMEOUT_MS	10000
#define MMT_DEFAULT_BACKLOG	16
#define MMT_INBOX_MAX		(4 * MMT_RQ_DEPTH)	/* queued messages */

/**
 * enum mmt_conn_state - life of a connection; changed only by
 * mmt_conn_set_state(), checked against mmt_conn_next[]
 * @MMT_CONN_NEW: allocated, no rdma_cm step taken
 * @MMT_CONN_RESOLVING: connect: resolving the address and the route
 * @MMT_CONN_CONNECTING: connect sent, or a request being accepted
 * @MMT_CONN_LIVE: established; transfers may run
 * @MMT_CONN_DEAD: failed or closed; @err says why
 */
enum mmt_conn_state {
	MMT_CONN_NEW,
	MMT_CONN_RESOLVING,
	MMT_CONN_CONNECTING,
	MMT_CONN_LIVE,
	MMT_CONN_DEAD,
};

static const u8 mmt_conn_next[] = {
	[MMT_CONN_NEW] = BIT(MMT_CONN_RESOLVING) | BIT(MMT_CONN_CONNECTING) |
			 BIT(MMT_CONN_DEAD),
	[MMT_CONN_RESOLVING] = BIT(MMT_CONN_CONNECTING) | BIT(MMT_CONN_DEAD),
	[MMT_CONN_CONNECTING] = BIT(MMT_CONN_LIVE) | BIT(MMT_CONN_DEAD),
	[MMT_CONN_LIVE] = BIT(MMT_CONN_DEAD),
	[MMT_CONN_DEAD] = 0,
};

/* Stage bits of struct mmt_conn.stages: what teardown must undo. */
enum {
	MMT_CONN_ALLOCATED,	/* PD, CQ, QP, receive ring */
	MMT_CONN_CONNECT_SENT,	/* rdma_connect/rdma_accept called */
	MMT_CONN_WAS_LIVE,	/* reached LIVE: drain before destroying */
	MMT_CONN_DRAINED,	/* disconnected and drained */
	MMT_CONN_NO_POST,	/* shut down: no message is posted any more */
};

/* What an rdma_cm_id's context points at. */
struct mmt_cm_ctx {
	bool listener;
};

struct mmt_conn;

/* A receive buffer of the ring. */
struct mmt_rx_buf {
	struct ib_cqe cqe;
	struct mmt_conn *conn;
	void *buf;
	u64 dma;
};

/* A message in an inbox. */
struct mmt_inbox_item {
	struct list_head node;
	struct mmt_msg msg;
};

/* A signaled WR a thread waits for. */
struct mmt_wait_cqe {
	struct ib_cqe cqe;
	struct mmt_conn *conn;
	struct completion done;
	int status;
	bool sq_counted;	/* a write chain counted in writes_out */
};

/**
 * struct mmt_conn - one connection (one RC QP)
 * @ctx: rdma_cm context tag (first member)
 * @ref: references: the owner (fd, listener queue) and temporary ones
 * @node: in mmt_conns (device removal)
 * @rm_node: in mmt_ib_remove()'s list of the connections on the device
 *	going away (under mmt_conn_mutex while it is built)
 * @lnode: in the listener's pending or ready list until accepted
 * @listener: the listener that created it (accepting side), or NULL
 * @lock: protects @state, @err, @reached_live, @routed, @tx_inbox,
 *	@rx_inbox, @hs_inbox, @hs_done
 * @state: enum mmt_conn_state
 * @err: why it is DEAD (negative errno)
 * @reached_live: it entered LIVE (it may be DEAD since): what
 *	MMT_IOC_CONNECT hands out even when the peer closed it at once.  Not
 *	the stage bit WAS_LIVE, which ESTABLISHED sets before the transition
 *	(the QP can carry messages: teardown drains it) even on a connection
 *	that died first, e.g. of a malformed message the peer sent before
 *	ESTABLISHED was handled
 * @routed: connect side: ROUTE_RESOLVED arrived
 * @wq: woken on every state change and message
 * @setup_mutex: protects the verbs resources, @stages and @cm_id
 * @stages: MMT_CONN_* stage bits
 * @cm_id: the rdma_cm id; NULL once destroyed (or handed to rdma_cm)
 * @dev: the device of the QP
 * @pd: protection domain
 * @cq: the one CQ (send and receive), IB_POLL_SOFTIRQ
 * @qp: the RC QP
 * @max_sge: SGEs per send WR
 * @max_pages: pages per fast-registration MR
 * @rxb: MMT_RQ_DEPTH receive buffers
 * @tx_inbox: messages for the sending side (GRANT, ACK, NACK)
 * @rx_inbox: messages for the receiving side (OFFER, DONE, END)
 * @inbox_len: messages in both inboxes (bounded: a peer cannot make us
 *	queue without limit)
 * @msgs_out: message SENDs posted and not completed yet
 * @msgs_failed: message SENDs that completed with an error or were
 *	flushed (never reset; counted before @msgs_out drops): whether a
 *	message reached the peer's NIC (mmt_conn_sends_ok())
 * @writes_out: RDMA write chains posted and not completed yet
 * @post_mutex: serializes posting to the send queue, so that a REG_MR is
 *	posted only when nothing before it is unacknowledged (see
 *	mmt_conn_send_msg())
 * @tx_mutex: one MMT_IOC_SEND at a time
 * @rx_mutex: one MMT_IOC_RECV at a time
 * @tx_gen: generation of the last transfer sent (under @tx_mutex); never
 *	wraps, so it is unique per connection and direction (the secure
 *	channel binds its keys to it)
 * @rx_gen: generation of the last OFFER taken (under @rx_mutex); every
 *	OFFER must be above it (else NACK ESTALE); an attacker can forge a
 *	high one, which only denies later transfers on this connection
 * @conn_rand: the connecting side's hello nonce (struct mmt_wire_hello)
 * @accept_rand: the accepting side's hello nonce
 * @conn_id: connection id (closure headers, secure-channel keys), from
 *	both sides' hello nonces (mmt_conn_id_derive()); set before LIVE; in
 *	attested mode replaced by the handshake's (mmt_hs_conn_id()) before
 *	the fd exists
 * @attested: the connection was made in attested mode: the handshake runs
 *	first (set at creation, never changed)
 * @hs_done: the attested handshake succeeded (under @lock); after it no
 *	handshake message is taken
 * @hs_inbox: handshake and key agreement messages (MMT_MSG_HS_*,
 *	MMT_MSG_AGREE*) not read yet
 * @ka_mutex: one MMT_IOC_CONN_KEY_AGREE at a time
 * @ka_seq: the number of the last key agreement (under @ka_mutex)
 * @hs_secret: the attested handshake's secret (zero otherwise); wiped when
 *	the connection is freed
 * @peer_cred: attested: the peer's credential the connection holds, the
 *	handshake's or the newest renewal the peer sent (under @lock)
 * @own_not_after: attested: the end of the validity of this node's
 *	credential the peer holds (under @lock)
 * @own_serial: attested: its serial (@cred_tx_work only, once the
 *	handshake is done)
 * @cred_inbox: attested: MMT_MSG_CRED chunks not read yet (under @lock)
 * @cred_buf: the renewal @cred_rx_work assembles (@cred_rx_work only)
 * @cred_len: its total length
 * @cred_got: its bytes received so far
 * @cred_rx_work: checks the peer's renewals (mmt_conn_cred_rx())
 * @cred_tx_work: sends this node's renewal (mmt_conn_cred_tx())
 * @expire_work: closes the connection when the peer's credential or
 *	this node's (as the peer holds it) expires (mmt_conn_expire())
 * @query_inbox: MMT_MSG_MIG_QUERY not answered yet (under @lock)
 * @query_work: answers them (mmt_conn_mig_query())
 * @res_inbox: MMT_MSG_MIG_STATEMENT not read yet (under @lock)
 * @res_mutex: one MMT_IOC_MIGRATE_RESOLVE at a time
 * @works_stopped: set at destroy (under @lock): no work is queued after
 * @peer_node: the peer's node id
 * @timeout_ms: connect timeout
 * @peer: the peer's address
 * @key_mutex: one MMT_IOC_CONN_SET_KEY at a time
 * @has_key: @chan_root is set (written once, under @key_mutex, with
 *	release semantics; read with acquire by mmt_conn_root())
 * @chan_root: the channel root of the connection's key (the secure channel
 *	on plain PMOs), wiped when the connection is freed
 * @mig_tx: the record of the last live migration sent (MMT_IOC_MIGRATE_*)
 * @mig_rx: the record of the last live migration received
 * @mig_last: @mig_tx or @mig_rx, whichever started last; NULL before any
 *	(under @lock): what MMT_IOC_MIGRATE_INFO and poll() report
 */
struct mmt_conn {
	struct mmt_cm_ctx ctx;
	struct kref ref;
	struct list_head node;
	struct list_head rm_node;
	struct list_head lnode;
	struct mmt_listener *listener;
	spinlock_t lock;		/* state, err, routed, inboxes */
	enum mmt_conn_state state;
	int err;
	bool reached_live;
	bool routed;
	wait_queue_head_t wq;
	struct mutex setup_mutex;	/* verbs resources, stages, cm_id */
	unsigned long stages;
	struct rdma_cm_id *cm_id;
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	u32 max_sge;
	u32 max_pages;
	struct mmt_rx_buf *rxb;
	struct list_head tx_inbox;
	struct list_head rx_inbox;
	u32 inbox_len;
	atomic_t msgs_out;
	atomic_t msgs_failed;
	atomic_t writes_out;
	struct mutex post_mutex;	/* ib_post_send of messages, writes */
	struct mutex tx_mutex;		/* one MMT_IOC_SEND at a time */
	struct mutex rx_mutex;		/* one MMT_IOC_RECV at a time */
	u32 tx_gen;
	u32 rx_gen;
	u64 conn_rand;
	u64 accept_rand;
	u64 conn_id;
	bool attested;
	bool hs_done;
	struct list_head hs_inbox;
	u8 hs_secret[MMT_HS_SECRET_BYTES];
	struct mutex ka_mutex;		/* MMT_IOC_CONN_KEY_AGREE */
	u64 ka_seq;
	struct mmt_cred peer_cred;
	u64 own_not_after;
	u64 own_serial;
	struct list_head cred_inbox;
	u8 *cred_buf;
	u32 cred_len;
	u32 cred_got;
	struct work_struct cred_rx_work;
	struct work_struct cred_tx_work;
	struct delayed_work expire_work;
	struct list_head query_inbox;
	struct work_struct query_work;
	struct list_head res_inbox;
	struct mutex res_mutex;		/* MMT_IOC_MIGRATE_RESOLVE */
	bool works_stopped;
	u16 peer_node;
	u32 timeout_ms;
	struct sockaddr_storage peer;
	struct mutex key_mutex;		/* MMT_IOC_CONN_SET_KEY */
	bool has_key;
	u8 chan_root[MMT_CHAN_ROOT_BYTES];
	struct mmt_mig mig_tx;
	struct mmt_mig mig_rx;
	struct mmt_mig *mig_last;
};

/**
 * struct mmt_listener - a listening rdma_cm id and its accept queue
 * @ctx: rdma_cm context tag (first member)
 * @node: in mmt_listeners (device removal)
 * @mutex: protects @cm_id against device removal
 * @cm_id: the listening id; NULL once destroyed
 * @lock: protects @pending, @ready, @count, @dead
 * @pending: connections being accepted (not established yet)
 * @ready: established connections waiting for MMT_IOC_ACCEPT
 * @count: connections in both lists
 * @backlog: most connections in both lists
 * @dead: the device went away
 * @wq: woken when @ready grows or the listener dies
 * @memcg: the memory cgroup of MMT_IOC_LISTEN's caller (a reference, put
 *	at the listener's release; NULL without CONFIG_MEMCG), charged for
 *	the connections taken in: rdma_cm's handler makes them in a kernel
 *	thread of no group
 */
struct mmt_listener {
	struct mmt_cm_ctx ctx;
	struct list_head node;
	struct mutex mutex;		/* cm_id vs device removal */
	struct rdma_cm_id *cm_id;
	spinlock_t lock;		/* pending, ready, count, dead */
	struct list_head pending;
	struct list_head ready;
	u32 count;
	u32 backlog;
	bool dead;
	wait_queue_head_t wq;
	struct mem_cgroup *memcg;	/* MMT_IOC_LISTEN's caller's */
};

static DEFINE_MUTEX(mmt_conn_mutex);
static LIST_HEAD(mmt_conns);
static LIST_HEAD(mmt_listeners);

static const struct file_operations mmt_conn_fops;
static const struct file_operations mmt_listen_fops;

static void mmt_conn_cred_rx(struct work_struct *work);
static void mmt_conn_cred_tx(struct work_struct *work);
static void mmt_conn_expire(struct work_struct *work);
static void mmt_conn_mig_query(struct work_struct *work);

/* ------------------------------------------------------------ state */

/*
 * The one transition function.  Entering DEAD records @err (the first
 * reason wins), entering LIVE @reached_live; every waiter is woken.
 * Caller holds conn->lock.
 */
static int mmt_conn_set_state(struct mmt_conn *conn, enum mmt_conn_state to,
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
static bool mmt_conn_fail(struct mmt_conn *conn, int err)
{
	unsigned long flags;
	bool ret;

	spin_lock_irqsave(&conn->lock, flags);
	ret = !mmt_conn_set_state(conn, MMT_CONN_DEAD, err);
	spin_unlock_irqrestore(&conn->lock, flags);
	return ret;
}

static enum mmt_conn_state mmt_conn_state(struct mmt_conn *conn, int *err)
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
static bool mmt_conn_reached_live(struct mmt_conn *conn)
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
static void mmt_conn_fault_hold(struct mmt_conn *conn, bool agree)
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
static int mmt_conn_fault_hs(struct mmt_hs *hs, u8 **peer, u32 *peer_len,
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

static void mmt_conn_free(struct kref *ref)
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
static const u8 *mmt_conn_root(struct mmt_conn *conn)
{
	/* pairs with smp_store_release() in mmt_conn_set_key() */
	return smp_load_acquire(&conn->has_key) ? conn->chan_root : NULL;
}

static void mmt_conn_put(struct mmt_conn *conn)
{
	kref_put(&conn->ref, mmt_conn_free);
}

/*
 * Charged to the caller's memory cgroup (GFP_KERNEL_ACCOUNT): the process
 * of MMT_IOC_CONNECT; for a connection a listener takes in, made in
 * rdma_cm's event handler (a kernel thread of no group), the listener
 * owner's, set active by mmt_listener_request().
 */
static struct mmt_conn *mmt_conn_alloc(void)
{
	struct mmt_conn *conn;

	conn = kzalloc(sizeof(*conn), GFP_KERNEL_ACCOUNT);
	if (!conn)
		return NULL;
	kref_init(&conn->ref);
	INIT_LIST_HEAD(&conn->node);
	INIT_LIST_HEAD(&conn->rm_node);
	INIT_LIST_HEAD(&conn->lnode);
	spin_lock_init(&conn->lock);
	init_waitqueue_head(&conn->wq);
	mutex_init(&conn->setup_mutex);
	mutex_init(&conn->post_mutex);
	mutex_init(&conn->tx_mutex);
	mutex_init(&conn->rx_mutex);
	mutex_init(&conn->key_mutex);
	mutex_init(&conn->ka_mutex);
	INIT_LIST_HEAD(&conn->tx_inbox);
	INIT_LIST_HEAD(&conn->rx_inbox);
	INIT_LIST_HEAD(&conn->hs_inbox);
	INIT_LIST_HEAD(&conn->cred_inbox);
	INIT_WORK(&conn->cred_rx_work, mmt_conn_cred_rx);
	INIT_WORK(&conn->cred_tx_work, mmt_conn_cred_tx);
	INIT_DELAYED_WORK(&conn->expire_work, mmt_conn_expire);
	INIT_LIST_HEAD(&conn->query_inbox);
	INIT_LIST_HEAD(&conn->res_inbox);
	INIT_WORK(&conn->query_work, mmt_conn_mig_query);
	mutex_init(&conn->res_mutex);
	mmt_mig_init(&conn->mig_tx, true);
	mmt_mig_init(&conn->mig_rx, false);
	conn->mig_tx.running = false;
	conn->mig_rx.running = false;
	conn->state = MMT_CONN_NEW;
	mutex_lock(&mmt_conn_mutex);
	list_add_tail(&conn->node, &mmt_conns);
	mutex_unlock(&mmt_conn_mutex);
	return conn;
}

/*
 * Queue one of the connection's works (@cred_rx_work, @cred_tx_work)
 * unless it was destroyed; a queued work holds a reference.  Caller
 * holds conn->lock (any context).
 */
static void mmt_conn_queue(struct mmt_conn *conn, struct work_struct *work)
{
	lockdep_assert_held(&conn->lock);
	if (conn->works_stopped)
		return;
	kref_get(&conn->ref);
	if (!queue_work(system_wq, work))
		kref_put(&conn->ref, mmt_conn_free);	/* never the last */
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

static void mmt_wait_cqe_init(struct mmt_wait_cqe *w, struct mmt_conn *conn)
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

static struct ib_cqe mmt_silent_cqe = { .done = mmt_conn_silent_done };

static unsigned long mmt_timeout(u32 ms)
{
	return msecs_to_jiffies(ms ? ms : MMT_DEFAULT_TIMEOUT_MS);
}

static bool mmt_conn_sq_idle(struct mmt_conn *conn)
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
static int mmt_conn_send_msg(struct mmt_conn *conn,
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
static int mmt_conn_create_qp(struct mmt_conn *conn, struct rdma_cm_id *id)
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
static void mmt_conn_shutdown(struct mmt_conn *conn)
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
static void mmt_conn_teardown(struct mmt_conn *conn, int err)
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
static void mmt_conn_destroy(struct mmt_conn *conn)
{
	mmt_conn_stop_works(conn);
	mmt_conn_teardown(conn, -ECONNRESET);
	mutex_lock(&mmt_conn_mutex);
	list_del_init(&conn->node);
	mutex_unlock(&mmt_conn_mutex);
	mmt_conn_put(conn);
}

/* ------------------------------------------------------------ hello */

/*
 * Fill a hello; return its length: 24 bytes (struct mmt_wire_hello) when
 * not @attested, as before attested mode existed, else 32 with the flag
 * and @err (a rejection's positive errno, or 0).
 */
static u8 mmt_hello_fill(struct mmt_wire_hello_att *a, u64 conn_rand,
			 u64 accept_rand, bool attested, int err)
{
	struct mmt_wire_hello *h = &a->h;

	memset(a, 0, sizeof(*a));
	h->magic = cpu_to_le32(MMT_WIRE_HELLO_MAGIC);
	h->version = cpu_to_le16(MMT_WIRE_VERSION);
	h->node_id = cpu_to_le16(mmt_node_id());
	h->conn_rand = cpu_to_le64(conn_rand);
	h->accept_rand = cpu_to_le64(accept_rand);
	if (!attested && !err)
		return sizeof(*h);
	a->flags = cpu_to_le32(attested ? MMT_HELLO_ATTESTED : 0);
	a->err = cpu_to_le32(err);
	return sizeof(*a);
}

/*
 * Parse a hello: a connect request's (@accept_rand NULL: its accept_rand
 * must be 0) or an accept reply's.  @attested: whether the peer says it is
 * in attested mode (struct mmt_wire_hello_att; a 24-byte hello is not).
 * Return: 0, or -EPROTO (version or garbage).
 */
static int mmt_hello_check(const void *data, u8 len, u16 *node,
			   u64 *conn_rand, u64 *accept_rand, bool *attested)
{
	struct mmt_wire_hello_att a = {};
	struct mmt_wire_hello *h = &a.h;

	if (!data || len < sizeof(*h))
		return -EPROTO;
	memcpy(&a, data, min_t(size_t, len, sizeof(a)));
	if (le32_to_cpu(h->magic) != MMT_WIRE_HELLO_MAGIC ||
	    le16_to_cpu(h->version) != MMT_WIRE_VERSION ||
	    (!accept_rand && h->accept_rand))
		return -EPROTO;
	*node = le16_to_cpu(h->node_id);
	*conn_rand = le64_to_cpu(h->conn_rand);
	if (accept_rand)
		*accept_rand = le64_to_cpu(h->accept_rand);
	*attested = le32_to_cpu(a.flags) & MMT_HELLO_ATTESTED;
	return 0;
}

static void mmt_conn_param(struct rdma_conn_param *p,
			   const struct mmt_wire_hello_att *h, u8 len)
{
	memset(p, 0, sizeof(*p));
	p->private_data = h;
	p->private_data_len = len;
	p->flow_control = 1;
	p->retry_count = 7;
	p->rnr_retry_count = 7;
}

/* ------------------------------------------------------------ handshake */

/* Pop the first message of @box, or NULL. */
static struct mmt_inbox_item *mmt_inbox_pop(struct mmt_conn *conn,
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

static bool mmt_inbox_ready(struct mmt_conn *conn, struct list_head *box)
{
	unsigned long flags;
	bool ret;

	spin_lock_irqsave(&conn->lock, flags);
	ret = !list_empty(box) || conn->state == MMT_CONN_DEAD;
	spin_unlock_irqrestore(&conn->lock, flags);
	return ret;
}

/*
 * The next handshake message (the caller kfree()s it), waiting until
 * @deadline (jiffies).  Return: 0; the connection's error once DEAD;
 * -ETIMEDOUT; -EINTR.
 */
static int mmt_conn_hs_next(struct mmt_conn *conn, unsigned long deadline,
			    struct mmt_inbox_item **out)
{
	struct mmt_inbox_item *it;
	bool drained = false;
	long left;
	int err;

	for (;;) {
		it = mmt_inbox_pop(conn, &conn->hs_inbox);
		if (it) {
			*out = it;
			return 0;
		}
		if (mmt_conn_state(conn, &err) != MMT_CONN_DEAD)
			err = 0;
		if (err && !drained) {
			/*
			 * The peer's last message may still sit in the CQ
			 * (its disconnect overtook the completion): after
			 * the drain every completion has been handled.
			 */
			mmt_conn_shutdown(conn);
			drained = true;
			continue;
		}
		if (err)
			return err;
		left = (long)(deadline - jiffies);
		if (left <= 0)
			return -ETIMEDOUT;
		left = wait_event_interruptible_timeout(conn->wq,
							mmt_inbox_ready(conn,
									&conn->hs_inbox),
							left);
		if (left < 0)
			return -EINTR;
	}
}

/*
 * Wait until every message this side posted has completed (the peer has
 * it), at most until @deadline: the caller may close the connection right
 * after, and the drain would flush a SEND still in flight (the peer's
 * handshake then saw its last message lost).  A connection that died
 * meanwhile (the peer, done, closed it at once) is no error.  Return: 0 or
 * -ETIMEDOUT.
 */
static int mmt_conn_sends_done(struct mmt_conn *conn, unsigned long deadline)
{
	long left = max_t(long, (long)(deadline - jiffies), 1);

	if (!wait_event_timeout(conn->wq, mmt_conn_sq_idle(conn), left))
		return -ETIMEDOUT;
	return 0;
}

/*
 * Wait until every message this side posted has completed, dead
 * connection or not, at most until @deadline, and say whether each did
 * so successfully since @failed0 (an earlier read of @msgs_failed): then
 * the peer's NIC has them.  A completed SEND is what counts, not the
 * connection's state: a peer that got our last message and closed the
 * connection at once may have done so before we look (its DISCONNECTED
 * overtakes nothing we need).  A peer gone silent leaves our SENDs to
 * the QP's retries, which end in an error.  Return: 0, -ETIMEDOUT, or
 * -ECONNRESET when one failed or was flushed.
 */
static int mmt_conn_sends_ok(struct mmt_conn *conn, unsigned long deadline,
			     int failed0)
{
	long left = max_t(long, (long)(deadline - jiffies), 1);

	if (!wait_event_timeout(conn->wq, !atomic_read(&conn->msgs_out),
				left))
		return -ETIMEDOUT;
	return atomic_read(&conn->msgs_failed) != failed0 ? -ECONNRESET : 0;
}

/* A refusal's errno as the peer sent it: its own verdicts, else refused */
static int mmt_conn_hs_refusal(const struct mmt_msg *m)
{
	int err = m->wire_err;

	return err == -EKEYREJECTED || err == -EKEYEXPIRED ? err :
	       -ECONNREFUSED;
}

/*
 * Receive the peer's hello (MMT_MSG_HS_HELLO chunks) into a kmalloc'ed
 * buffer.  Return: 0 with *@out and *@len; -EKEYREJECTED for a length
 * that cannot hold a share and a credential (or above MMT_HS_HELLO_MAX);
 * -EPROTO for chunks out of order or inconsistent; the peer's refusal
 * (mmt_conn_hs_refusal()); mmt_conn_hs_next()'s errors; -ENOMEM.
 */
static int mmt_conn_hs_recv_hello(struct mmt_conn *conn,
				  unsigned long deadline, u8 **out, u32 *len)
{
	struct mmt_inbox_item *it;
	u32 got = 0, total = 0, off, tot;
	u64 n;
	u8 *buf = NULL;
	int err = 0;

	while (!err && (!total || got < total)) {
		err = mmt_conn_hs_next(conn, deadline, &it);
		if (err)
			break;
		if (it->msg.type != MMT_MSG_HS_HELLO) {
			/* a confirm before the hello ended: a refusal */
			err = it->msg.wire_err ? mmt_conn_hs_refusal(&it->msg) :
						 -EPROTO;
			kfree(it);
			break;
		}
		off = it->msg.index;
		tot = le32_to_cpu(it->msg.wire.closures);
		n = le64_to_cpu(it->msg.wire.bytes);
		if (!total) {
			if (tot <= MMT_X25519_BYTES + MMT_CRED_BODY_LEN ||
			    tot > MMT_HS_HELLO_MAX) {
				err = -EKEYREJECTED;
			} else {
				total = tot;
				buf = kmalloc(total, GFP_KERNEL);
				if (!buf)
					err = -ENOMEM;
			}
		}
		if (!err && (off != got || tot != total || !n ||
			     n > MMT_HS_CHUNK || n > total - got ||
			     it->msg.wire.nsegs * 16 < n))
			err = -EPROTO;
		if (!err) {
			memcpy(buf + got, it->msg.wire.segs, n);
			got += n;
		}
		kfree(it);
	}
	if (err) {
		kfree(buf);
		return err;
	}
	*out = buf;
	*len = total;
	return 0;
}

/*
 * Send @len bytes of @buf as messages of @type (MMT_MSG_HS_HELLO,
 * MMT_MSG_CRED) in chunks of at most MMT_HS_CHUNK bytes in @w's segs:
 * @index = offset, @closures = total length, @bytes = bytes in this chunk.
 * @w: a message buffer of the caller's.  Return: 0 or
 * mmt_conn_send_msg()'s error.
 */
static int mmt_conn_send_chunks(struct mmt_conn *conn, struct mmt_wire_msg *w,
				u8 type, const u8 *buf, u32 len)
{
	u32 off, n;
	int err = 0;

	for (off = 0; !err && off < len; off += n) {
		n = min_t(u32, len - off, MMT_HS_CHUNK);
		memset(w, 0, sizeof(*w));
		w->type = type;
		w->index = cpu_to_le32(off);
		w->closures = cpu_to_le32(len);
		w->bytes = cpu_to_le64(n);
		w->nsegs = DIV_ROUND_UP(n, 16);
		memcpy(w->segs, buf + off, n);
		err = mmt_conn_send_msg(conn, w, NULL, NULL);
	}
	return err;
}

/* ------------------------------------------------------------ renewal */

/*
 * An attested connection lasts as long as both credentials its two sides
 * hold of each other (docs/ATTESTATION.md "Renewal on a live
 * connection"): when a node installs a newer credential it sends it to the
 * peer of each live attested connection (MMT_MSG_CRED, mmt_conn_cred_tx()),
 * the peer checks it (mmt_attest_peer_renew()) and holds it from then on
 * (mmt_conn_cred_rx()); at the end of the validity of the credential a side
 * holds of the peer, or of the one the peer holds of it, the side closes
 * the connection (mmt_conn_expire()).  A node whose credential is not
 * renewed (the authority refused it, or revoked the node) so loses every
 * attested connection when it expires, on both sides.
 */

/* Seconds between two checks of the expiry, at most (the clock may jump). */
#define MMT_CONN_EXPIRE_RECHECK	600

/* The end of the connection's validity, UNIX seconds.  Caller holds lock. */
static u64 mmt_conn_valid_until(struct mmt_conn *conn)
{
	lockdep_assert_held(&conn->lock);
	return min(conn->peer_cred.not_after, conn->own_not_after);
}

/*
 * Whether an attested connection's validity has ended (its last second
 * included, so that a peer whose clock runs a little ahead and closed
 * first is seen to have closed for the expiry).  Context: any.
 */
static bool mmt_conn_expired(struct mmt_conn *conn)
{
	unsigned long flags;
	bool ret;

	spin_lock_irqsave(&conn->lock, flags);
	ret = conn->hs_done &&
	      (u64)ktime_get_real_seconds() >= mmt_conn_valid_until(conn);
	spin_unlock_irqrestore(&conn->lock, flags);
	return ret;
}

/*
 * (Re)arm @expire_work for the end of the validity (one second after it:
 * the credential's last second is valid), or in MMT_CONN_EXPIRE_RECHECK
 * seconds if that is sooner; the queued work holds a reference.
 * Context: any (takes conn->lock).
 */
static void mmt_conn_expire_arm(struct mmt_conn *conn)
{
	u64 now = ktime_get_real_seconds(), end, delay = 0;
	unsigned long flags;

	spin_lock_irqsave(&conn->lock, flags);
	if (!conn->works_stopped && conn->hs_done) {
		end = mmt_conn_valid_until(conn);
		if (end >= now)
			delay = min_t(u64, end - now + 1,
				      MMT_CONN_EXPIRE_RECHECK);
		kref_get(&conn->ref);
		/* true: it was queued already, and holds its reference */
		if (mod_delayed_work(system_wq, &conn->expire_work,
				     delay * HZ))
			kref_put(&conn->ref, mmt_conn_free);	/* not last */
	}
	spin_unlock_irqrestore(&conn->lock, flags);
}

/*
 * Close an attested connection for its credentials: the reason (@err:
 * -EKEYEXPIRED, or -EKEYREJECTED for a renewal refused) is what its
 * transfers report; the peer sees the disconnect.  Context: process.
 */
static void mmt_conn_close_cred(struct mmt_conn *conn, int err)
{
	if (!mmt_conn_fail(conn, err))
		return;		/* closed already (the peer's close, say) */
	atomic64_inc(&mmt_stats.conns_expired);
	pr_info_ratelimited("conn %llx: node %u: %s: closed\n",
			    conn->conn_id, conn->peer_cred.node_id,
			    err == -EKEYEXPIRED ? "a credential expired" :
			    "its renewed credential was refused");
	mmt_conn_shutdown(conn);
}

static void mmt_conn_expire(struct work_struct *work)
{
	struct mmt_conn *conn = container_of(to_delayed_work(work),
					     struct mmt_conn, expire_work);

	if (mmt_conn_state(conn, NULL) != MMT_CONN_DEAD) {
		if (mmt_conn_expired(conn))
			mmt_conn_close_cred(conn, -EKEYEXPIRED);
		else
			mmt_conn_expire_arm(conn);	/* renewed, or early */
	}
	mmt_conn_put(conn);
}

/*
 * One MMT_MSG_CRED chunk of the renewal being assembled (the chunks of
 * MMT_MSG_HS_HELLO: @index = offset, @closures = total, @bytes = bytes
 * here).  Return: 1 when the renewal is complete, 0 for more, -EPROTO for
 * a malformed chunk, -ENOMEM.
 */
static int mmt_conn_cred_chunk(struct mmt_conn *conn, const struct mmt_msg *m)
{
	u32 off = m->index, tot = le32_to_cpu(m->wire.closures);
	u64 n = le64_to_cpu(m->wire.bytes);

	if (!conn->cred_buf) {
		if (off || tot <= MMT_CRED_BODY_LEN ||
		    tot > MMT_ATTEST_BLOB_MAX)
			return -EPROTO;
		conn->cred_buf = kmalloc(tot, GFP_KERNEL);
		if (!conn->cred_buf)
			return -ENOMEM;
		conn->cred_len = tot;
		conn->cred_got = 0;
	}
	if (off != conn->cred_got || tot != conn->cred_len || !n ||
	    n > MMT_HS_CHUNK || n > tot - off || m->wire.nsegs * 16 < n)
		return -EPROTO;
	memcpy(conn->cred_buf + off, m->wire.segs, n);
	conn->cred_got += n;
	return conn->cred_got == conn->cred_len;
}

/*
 * @cred_rx_work: the renewals the peer sent, in order, once the handshake
 * is done.  A renewal that verifies becomes the credential the connection
 * holds of the peer; one sent again (-ESTALE) is ignored, as is one that
 * arrives after this node left attested mode (-ENOKEY) or that could not
 * be checked for want of memory (the connection then ends at the old
 * expiry); any other refusal closes the connection.
 */
static void mmt_conn_cred_rx(struct work_struct *work)
{
	struct mmt_conn *conn = container_of(work, struct mmt_conn,
					     cred_rx_work);
	struct mmt_inbox_item *it;
	struct mmt_cred peer;
	unsigned long flags;
	int err = 0;

	while (!err) {
		spin_lock_irqsave(&conn->lock, flags);
		it = conn->hs_done ?
		     list_first_entry_or_null(&conn->cred_inbox,
					      struct mmt_inbox_item, node) :
		     NULL;
		if (it) {
			list_del(&it->node);
			conn->inbox_len--;
		}
		peer = conn->peer_cred;
		spin_unlock_irqrestore(&conn->lock, flags);
		if (!it)
			break;
		err = mmt_conn_cred_chunk(conn, &it->msg);
		kfree(it);
		if (err <= 0)
			continue;
		err = mmt_attest_peer_renew(conn->cred_buf, conn->cred_len,
					    ktime_get_real_seconds(), &peer);
		kfree(conn->cred_buf);
		conn->cred_buf = NULL;
		if (!err) {
			spin_lock_irqsave(&conn->lock, flags);
			conn->peer_cred = peer;
			spin_unlock_irqrestore(&conn->lock, flags);
			atomic64_inc(&mmt_stats.creds_renewed);
			mmt_conn_expire_arm(conn);
		} else if (err == -ESTALE || err == -ENOKEY ||
			   err == -ENOMEM) {
			err = 0;
		}
	}
	/* a malformed chunk, or none could be kept: as a bad message */
	if (err == -EPROTO || err == -ENOMEM)
		mmt_conn_fail(conn, err);
	else if (err)
		mmt_conn_close_cred(conn, err);
	mmt_conn_put(conn);
}

/*
 * @cred_tx_work: send this node's credential to the peer if it is newer
 * than the one the peer holds, in MMT_MSG_CRED chunks; once posted, the
 * connection lasts as long as the new one.
 */
static void mmt_conn_cred_tx(struct work_struct *work)
{
	struct mmt_conn *conn = container_of(work, struct mmt_conn,
					     cred_tx_work);
	struct mmt_wire_msg *w = NULL;
	struct mmt_cred c;
	unsigned long flags;
	u8 *file;
	u32 len;
	int err;

	err = mmt_attest_own_cred(&file, &len, &c);
	if (err || c.serial <= conn->own_serial ||
	    mmt_conn_state(conn, NULL) != MMT_CONN_LIVE)
		goto out;
	w = kzalloc(sizeof(*w), GFP_KERNEL);
	if (!w)
		goto out;
	err = mmt_conn_fault_cred(file, len);
	if (!err)
		err = mmt_conn_send_chunks(conn, w, MMT_MSG_CRED, file, len);
	if (!err) {
		conn->own_serial = c.serial;
		spin_lock_irqsave(&conn->lock, flags);
		conn->own_not_after = c.not_after;
		spin_unlock_irqrestore(&conn->lock, flags);
		atomic64_inc(&mmt_stats.creds_sent);
		mmt_conn_expire_arm(conn);
	}
out:
	kfree(w);
	kfree(file);
	mmt_conn_put(conn);
}

/**
 * mmt_conn_cred_renewed() - send this node's newly installed credential to
 *	the peer of every live attested connection
 *
 * Called after MMT_IOC_ATTEST_SET_CRED installed a credential; each
 * connection's @cred_tx_work sends it unless the peer holds it already.
 *
 * Context: process; takes mmt_conn_mutex.
 */
void mmt_conn_cred_renewed(void)
{
	struct mmt_conn *conn;
	unsigned long flags;

	mutex_lock(&mmt_conn_mutex);
	list_for_each_entry(conn, &mmt_conns, node) {
		spin_lock_irqsave(&conn->lock, flags);
		if (conn->hs_done && conn->state == MMT_CONN_LIVE)
			mmt_conn_queue(conn, &conn->cred_tx_work);
		spin_unlock_irqrestore(&conn->lock, flags);
	}
	mutex_unlock(&mmt_conn_mutex);
}

/*
 * mmt_conn_handshake() - the attested hello on a new connection, either
 * side (docs/ATTESTATION.md "The hello"; the crypto is mmt_handshake.c)
 *
 * Both sides send their hello (ephemeral share || credential) in chunks,
 * read the peer's, check its credential (signature, node id of the
 * rdma_cm hello, validity, binding), derive the handshake secret and the
 * tags, send their tag and check the peer's.  A side that refuses sends
 * a MMT_MSG_HS_CONFIRM carrying the errno, so the peer reports the same
 * reason (unauthenticated: it can only turn a failure into another).  On
 * success the connection id becomes mmt_hs_conn_id() and the handshake
 * secret is kept for MMT_IOC_CONN_SET_KEY.
 *
 * Context: process, before the connection's fd exists (connect) or is
 * handed out (accept); takes tx_mutex and rx_mutex (a teardown waits for
 * it, and wakes it by marking the connection DEAD); sleeps until
 * @timeout_ms (0: the default).
 * Return: 0; -ENOKEY without an own credential; -EKEYREJECTED for a peer
 * credential that does not verify or names another node id than the
 * rdma_cm hello, this node's own node id or node key (a reflection), a
 * node id bound to another key, a tag that does not
 * verify, a share of small order; -EKEYEXPIRED for an expired peer
 * credential; the peer's refusal (the same errnos, -ECONNREFUSED for
 * another); -EPROTO for a malformed handshake message; -ETIMEDOUT,
 * -EINTR, -ECONNRESET, -ENOMEM.  On error the connection is DEAD.
 */
static int mmt_conn_handshake(struct mmt_conn *conn, u32 timeout_ms)
{
	unsigned long deadline = jiffies + mmt_timeout(timeout_ms);
	struct mmt_inbox_item *it;
	struct mmt_wire_msg *w;
	unsigned long flags;
	struct mmt_hs *hs;
	u8 *peer = NULL;
	u32 peer_len = 0;
	u16 hello_node = conn->peer_node;
	int err, serr;
	u64 id;

	hs = kzalloc(sizeof(*hs), GFP_KERNEL);
	w = kzalloc(sizeof(*w), GFP_KERNEL);
	if (!hs || !w) {
		kfree(hs);
		kfree(w);
		mmt_conn_fail(conn, -ENOMEM);
		return -ENOMEM;
	}
	mutex_lock(&conn->tx_mutex);
	mutex_lock(&conn->rx_mutex);
	err = mmt_attest_hs_start(hs, !conn->listener, conn->conn_rand,
				  conn->accept_rand);
	if (!err)
		err = mmt_conn_send_chunks(conn, w, MMT_MSG_HS_HELLO, hs->own,
					   hs->own_len);
	if (!err)
		err = mmt_conn_hs_recv_hello(conn, deadline, &peer, &peer_len);
	if (!err)
		err = mmt_conn_fault_hs(hs, &peer, &peer_len, &hello_node);
	if (!err)
		err = mmt_hs_peer_hello(hs, peer, peer_len);
	if (!err)
		err = mmt_attest_hs_peer(hs, ktime_get_real_seconds(),
					 hello_node);
	if (!err)
		err = mmt_attest_hs_derive(hs);
	/* our tag, or our verdict on the peer */
	if (!err || err == -EKEYREJECTED || err == -EKEYEXPIRED) {
		memset(w, 0, sizeof(*w));
		w->type = MMT_MSG_HS_CONFIRM;
		if (err) {
			w->err = cpu_to_le32(-err);
		} else {
			w->nsegs = MMT_HS_SECRET_BYTES / 16;
			memcpy(w->segs, hs->tag_own, MMT_HS_SECRET_BYTES);
		}
		serr = mmt_conn_send_msg(conn, w, NULL, NULL);
		if (!err)
			err = serr;
	}
	if (!err) {
		err = mmt_conn_hs_next(conn, deadline, &it);
		if (!err) {
			if (it->msg.type != MMT_MSG_HS_CONFIRM)
				err = -EPROTO;
			else if (it->msg.wire_err)
				err = mmt_conn_hs_refusal(&it->msg);
			else if (it->msg.wire.nsegs * 16 < MMT_HS_SECRET_BYTES)
				err = -EPROTO;
			else
				err = mmt_hs_confirm(hs, (u8 *)it->msg.wire.segs);
			kfree(it);
		}
	}
	/*
	 * Done: the peer's tag verified.  A peer that closed the connection
	 * at once (its accept or connect returned first) is no failure of
	 * the handshake: the fd is handed out, and using it reports the
	 * reset, as for any connection the peer closed.
	 */
	if (!err)
		err = mmt_conn_sends_done(conn, deadline);
	if (!err)
		err = mmt_hs_conn_id(hs, &id);
	if (!err) {
		spin_lock_irqsave(&conn->lock, flags);
		conn->conn_id = id;
		memcpy(conn->hs_secret, hs->secret, sizeof(conn->hs_secret));
		conn->peer_cred = hs->peer_cred;
		conn->own_not_after = hs->own_cred.not_after;
		conn->own_serial = hs->own_cred.serial;
		conn->hs_done = true;
		/*
		 * Renewals the peer sent before this point, and one this
		 * node installed after its hello left (both works do
		 * nothing otherwise)
		 */
		mmt_conn_queue(conn, &conn->cred_rx_work);
		mmt_conn_queue(conn, &conn->cred_tx_work);
		mmt_conn_queue(conn, &conn->query_work);
		spin_unlock_irqrestore(&conn->lock, flags);
		mmt_conn_expire_arm(conn);
		atomic64_inc(&mmt_stats.hs_done);
	} else {
		if (err == -EKEYREJECTED || err == -EKEYEXPIRED)
			atomic64_inc(&mmt_stats.hs_rejected);
		pr_info_ratelimited("conn %llx: attested handshake failed: %d\n",
				    conn->conn_id, err);
		/*
		 * Let what we sent (our tag, our verdict) reach the peer
		 * before the teardown's drain could flush it: the peer then
		 * reports the same reason, not a reset.
		 */
		wait_event_timeout(conn->wq, mmt_conn_sq_idle(conn), HZ);
		mmt_conn_fail(conn, err);
	}
	mutex_unlock(&conn->rx_mutex);
	mutex_unlock(&conn->tx_mutex);
	kfree(peer);
	mmt_hs_clear(hs);
	kfree(hs);
	kfree(w);
	return err;
}

/* ------------------------------------------------------------ rdma_cm */

static void mmt_listener_ready(struct mmt_conn *conn)
{
	struct mmt_listener *l = conn->listener;
	unsigned long flags;

	spin_lock_irqsave(&l->lock, flags);
	/* Not if the listener's release took it off already. */
	if (!list_empty(&conn->lnode)) {
		list_move_tail(&conn->lnode, &l->ready);
		wake_up_all(&l->wq);
	}
	spin_unlock_irqrestore(&l->lock, flags);
}

static int mmt_conn_cm_event(struct mmt_conn *conn, struct rdma_cm_id *id,
			     struct rdma_cm_event *ev)
{
	unsigned long flags;
	u64 crand, arand;
	bool att;
	u16 node;
	int err;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		err = rdma_resolve_route(id, conn->timeout_ms);
		if (err)
			mmt_conn_fail(conn, -ENETUNREACH);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		spin_lock_irqsave(&conn->lock, flags);
		conn->routed = true;
		wake_up_all(&conn->wq);
		spin_unlock_irqrestore(&conn->lock, flags);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
		/* also when ARP/ND gave up (status -ETIMEDOUT): no host */
		mmt_conn_fail(conn, -EHOSTUNREACH);
		break;
	case RDMA_CM_EVENT_ROUTE_ERROR:
		mmt_conn_fail(conn, -ENETUNREACH);
		break;
	case RDMA_CM_EVENT_UNREACHABLE:
		mmt_conn_fail(conn, conn->listener ? -ECONNABORTED :
				    -EHOSTUNREACH);
		break;
	case RDMA_CM_EVENT_REJECTED:
		pr_info_ratelimited("conn %llx: %s: %s\n", conn->conn_id,
				    conn->listener ? "peer rejected our accept" :
				    "connect rejected",
				    rdma_reject_msg(id, ev->status));
		err = conn->listener ? -ECONNABORTED : -ECONNREFUSED;
		if (ev->status == IB_CM_REJ_CONSUMER_DEFINED) {
			u8 len = 0;
			const void *d = rdma_consumer_reject_data(id, ev, &len);
			struct mmt_wire_hello_att a = {};

			if (d && len >= sizeof(a.h)) {
				memcpy(&a, d, min_t(size_t, len, sizeof(a)));
				if (le32_to_cpu(a.h.magic) ==
				    MMT_WIRE_HELLO_MAGIC &&
				    le16_to_cpu(a.h.version) != MMT_WIRE_VERSION)
					err = -EPROTO;
				/* the modes differ (struct mmt_wire_hello_att) */
				else if (le32_to_cpu(a.h.magic) ==
					 MMT_WIRE_HELLO_MAGIC &&
					 le32_to_cpu(a.err) == EKEYREJECTED)
					err = -EKEYREJECTED;
			}
		}
		mmt_conn_fail(conn, err);
		break;
	case RDMA_CM_EVENT_CONNECT_ERROR:
		mmt_conn_fail(conn, conn->listener ? -ECONNABORTED :
				    -ECONNREFUSED);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (!conn->listener) {
			err = mmt_hello_check(ev->param.conn.private_data,
					      ev->param.conn.private_data_len,
					      &node, &crand, &arand, &att);
			if (!err && crand != conn->conn_rand)
				err = -EPROTO;
			if (!err && att != conn->attested)
				err = -EKEYREJECTED;
			if (err) {
				mmt_conn_fail(conn, err);
				break;
			}
			conn->peer_node = node;
			conn->accept_rand = arand;
			conn->conn_id = mmt_conn_id_derive(crand, arand);
		}
		set_bit(MMT_CONN_WAS_LIVE, &conn->stages);
		/* test builds: the connection died before it entered LIVE */
		if (!conn->listener && mmt_conn_fault_established())
			mmt_conn_fail(conn, -EPROTO);
		spin_lock_irqsave(&conn->lock, flags);
		err = mmt_conn_set_state(conn, MMT_CONN_LIVE, 0);
		spin_unlock_irqrestore(&conn->lock, flags);
		if (!err && conn->listener)
			mmt_listener_ready(conn);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		/*
		 * At the expiry both sides close, and the peer's close may
		 * come first: the reason, not a reset, and counted once
		 */
		if (!mmt_conn_expired(conn))
			mmt_conn_fail(conn, -ECONNRESET);
		else if (mmt_conn_fail(conn, -EKEYEXPIRED))
			atomic64_inc(&mmt_stats.conns_expired);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		/*
		 * The ib_client's remove() ran first and released whatever
		 * this connection had on the device.  An id with nothing
		 * else on the device (still resolving) is handed back to
		 * rdma_cm to destroy, so the removal never waits for us.
		 */
		mmt_conn_fail(conn, -ECONNRESET);
		mutex_lock(&conn->setup_mutex);
		if (conn->cm_id == id &&
		    !test_bit(MMT_CONN_ALLOCATED, &conn->stages)) {
			conn->cm_id = NULL;
			err = 1;
		} else {
			err = 0;
		}
		mutex_unlock(&conn->setup_mutex);
		return err;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
	default:
		break;
	}
	return 0;
}

static int mmt_listener_request(struct mmt_listener *l, struct rdma_cm_id *id,
				struct rdma_cm_event *ev);

static int mmt_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct mmt_cm_ctx *ctx = id->context;

	pr_debug("cm event %s (%d) on %p\n", rdma_event_msg(ev->event),
		 ev->status, id);
	if (ctx->listener) {
		struct mmt_listener *l = container_of(ctx, struct mmt_listener,
						      ctx);

		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
			return mmt_listener_request(l, id, ev);
		if (ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL) {
			unsigned long flags;
			int owned;

			/* A bound listener: rdma_cm destroys the id. */
			mutex_lock(&l->mutex);
			owned = l->cm_id == id;
			if (owned)
				l->cm_id = NULL;
			mutex_unlock(&l->mutex);
			spin_lock_irqsave(&l->lock, flags);
			l->dead = true;
			wake_up_all(&l->wq);
			spin_unlock_irqrestore(&l->lock, flags);
			return owned;
		}
		return 0;
	}
	return mmt_conn_cm_event(container_of(ctx, struct mmt_conn, ctx), id,
				 ev);
}

/*
 * Reject a connect request with our hello as reject data; @err a positive
 * errno for the connecting side (EKEYREJECTED: the modes differ), or 0.
 */
static void mmt_reject(struct rdma_cm_id *id, int err)
{
	struct mmt_wire_hello_att a;
	u8 len;

	len = mmt_hello_fill(&a, 0, 0, mmt_attest_mode(), err);
	rdma_reject(id, &a, len, IB_CM_REJ_CONSUMER_DEFINED);
}

/*
 * CONNECT_REQUEST on a new id: check the hello and the backlog, build the
 * connection and accept.  A non-zero return makes rdma_cm destroy @id.
 */
static int mmt_listener_request(struct mmt_listener *l, struct rdma_cm_id *id,
				struct rdma_cm_event *ev)
{
	struct rdma_conn_param param;
	struct mmt_wire_hello_att h;
	struct mem_cgroup *old_memcg;
	struct mmt_conn *conn;
	unsigned long flags;
	u64 crand, arand;
	bool att, ours;
	u32 state;
	u16 node;
	u8 len;
	int err;

	err = mmt_hello_check(ev->param.conn.private_data,
			      ev->param.conn.private_data_len, &node, &crand,
			      NULL, &att);
	if (err) {
		pr_info_ratelimited("rejecting a peer: bad hello\n");
		mmt_reject(id, 0);
		return err;
	}
	state = mmt_attest_state();
	ours = state != MMT_ATTEST_OFF;
	if (att != ours) {
		pr_info_ratelimited("rejecting a peer: %s\n", ours ?
				    "not in attested mode" :
				    "in attested mode, this node is not");
		atomic64_inc(&mmt_stats.hs_rejected);
		mmt_reject(id, EKEYREJECTED);
		return -EKEYREJECTED;
	}
	if (ours && state != MMT_ATTEST_ATTESTED) {
		pr_info_ratelimited("rejecting a peer: attested mode, no credential installed yet\n");
		mmt_reject(id, 0);
		return -ENOKEY;
	}
	spin_lock_irqsave(&l->lock, flags);
	if (l->dead || l->count >= l->backlog)
		err = -ECONNREFUSED;
	else
		l->count++;
	spin_unlock_irqrestore(&l->lock, flags);
	if (err) {
		mmt_reject(id, 0);
		return err;
	}
	/*
	 * This runs in rdma_cm's handler, a kernel thread: what the
	 * connection holds is charged to the listener owner's group.
	 */
	old_memcg = set_active_memcg(l->memcg);
	conn = mmt_conn_alloc();
	set_active_memcg(old_memcg);
	if (!conn) {
		err = -ENOMEM;
		goto err_count;
	}
	conn->listener = l;
	/* our fresh nonce: the id is new even for a replayed hello */
	arand = get_random_u64();
	conn->conn_rand = crand;
	conn->accept_rand = arand;
	conn->attested = ours;
	conn->conn_id = mmt_conn_id_derive(crand, arand);
	conn->peer_node = node;
	memcpy(&conn->peer, &id->route.addr.dst_addr, sizeof(conn->peer));
	spin_lock_irqsave(&conn->lock, flags);
	mmt_conn_set_state(conn, MMT_CONN_CONNECTING, 0);
	spin_unlock_irqrestore(&conn->lock, flags);

	mutex_lock(&conn->setup_mutex);
	old_memcg = set_active_memcg(l->memcg);
	err = mmt_conn_create_qp(conn, id);
	set_active_memcg(old_memcg);
	if (err) {
		mutex_unlock(&conn->setup_mutex);
		goto err_conn;
	}
	conn->cm_id = id;
	id->context = &conn->ctx;
	spin_lock_irqsave(&l->lock, flags);
	list_add_tail(&conn->lnode, &l->pending);
	spin_unlock_irqrestore(&l->lock, flags);
	len = mmt_hello_fill(&h, crand, arand, ours, 0);
	mmt_conn_param(&param, &h, len);
	err = rdma_accept(id, &param);
	if (!err)
		set_bit(MMT_CONN_CONNECT_SENT, &conn->stages);
	mutex_unlock(&conn->setup_mutex);
	if (err)
		mmt_conn_fail(conn, -ECONNABORTED);	/* reaped by accept */
	return 0;

err_conn:
	mutex_lock(&mmt_conn_mutex);
	list_del_init(&conn->node);
	mutex_unlock(&mmt_conn_mutex);
	mmt_conn_put(conn);
err_count:
	spin_lock_irqsave(&l->lock, flags);
	l->count--;
	spin_unlock_irqrestore(&l->lock, flags);
	mmt_reject(id, 0);
	return err;
}

/* ------------------------------------------------------------ addresses */

static int mmt_addr_in(const struct mmt_conn_addr *a,
		       struct sockaddr_storage *ss, bool listen)
{
	memset(ss, 0, sizeof(*ss));
	if (!a->port && !listen)
		return -EINVAL;
	if (a->family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		if (a->scope_id || memchr_inv(a->addr + 4, 0, 12))
			return -EINVAL;
		sin->sin_family = AF_INET;
		sin->sin_port = htons(a->port);
		memcpy(&sin->sin_addr, a->addr, 4);
		return 0;
	}
	if (a->family == AF_INET6) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(a->port);
		sin6->sin6_scope_id = a->scope_id;
		memcpy(&sin6->sin6_addr, a->addr, 16);
		return 0;
	}
	return -EINVAL;
}

static void mmt_addr_out(const struct sockaddr_storage *ss,
			 struct mmt_conn_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const void *)ss;

		a->family = AF_INET;
		a->port = ntohs(sin->sin_port);
		memcpy(a->addr, &sin->sin_addr, 4);
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const void *)ss;

		a->family = AF_INET6;
		a->port = ntohs(sin6->sin6_port);
		a->scope_id = sin6->sin6_scope_id;
		memcpy(a->addr, &sin6->sin6_addr, 16);
	}
}

static bool mmt_conn_routed(struct mmt_conn *conn)
{
	return READ_ONCE(conn->routed) ||
	       mmt_conn_state(conn, NULL) == MMT_CONN_DEAD;
}

static bool mmt_conn_connected(struct mmt_conn *conn)
{
	return mmt_conn_state(conn, NULL) != MMT_CONN_CONNECTING;
}

/*
 * Give a new fd for @conn to the user (MMT_IOC_CONNECT / _ACCEPT).  On
 * error the caller still owns @conn (and destroys it): the result is
 * copied out before the file exists, since the file's release would
 * destroy @conn too (and it did, after the caller: a use after free).
 */
static int mmt_conn_install(struct mmt_conn *conn, struct mmt_connect *c,
			    void __user *uarg, u32 usize)
{
	struct file *file;
	int fd, flags;

	flags = O_RDWR | ((c->flags & MMT_CONN_CLOEXEC) ? O_CLOEXEC : 0);
	fd = get_unused_fd_flags(flags);
	if (fd < 0)
		return fd;
	c->size = sizeof(*c);
	c->fd = fd;
	c->peer_node = conn->peer_node;
	if (mmt_copy_out(uarg, c, sizeof(*c), usize)) {
		put_unused_fd(fd);
		return -EFAULT;
	}
	file = anon_inode_getfile("[mmt-conn]", &mmt_conn_fops, conn, flags);
	if (IS_ERR(file)) {
		put_unused_fd(fd);
		return PTR_ERR(file);
	}
	fd_install(fd, file);
	return 0;
}

static int mmt_connect_args(struct mmt_connect *c, void __user *uarg,
			    u32 *usize)
{
	int err;

	err = mmt_copy_in(c, sizeof(*c), uarg, MMT_CONNECT_SIZE_VER0, usize);
	if (err)
		return err;
	if ((c->flags & ~MMT_CONN_CLOEXEC) || c->fd || c->peer_node ||
	    c->reserved0 || c->reserved1 || c->reserved[0] || c->reserved[1] ||
	    c->timeout_ms > 600000)
		return -EINVAL;
	return 0;
}

/**
 * mmt_conn_connect() - MMT_IOC_CONNECT
 * @uarg: user pointer to struct mmt_connect
 *
 * Context: process; sleeps up to the timeout.
 * Return: 0 (the fd is in the argument); the errors listed in uapi/mmt.h.
 */
int mmt_conn_connect(void __user *uarg)
{
	struct rdma_conn_param param;
	struct sockaddr_storage dst;
	struct mmt_wire_hello_att h;
	struct rdma_cm_id *id;
	struct mmt_connect c;
	struct mmt_conn *conn;
	unsigned long flags;
	u32 usize, state;
	long left;
	int err, cerr;
	u8 len;

	err = mmt_connect_args(&c, uarg, &usize);
	if (err)
		return err;
	err = mmt_addr_in(&c.addr, &dst, false);
	if (err)
		return err;
	state = mmt_attest_state();
	if (state == MMT_ATTEST_WAITING)
		return -ENOKEY;		/* attested mode, no credential */
	conn = mmt_conn_alloc();
	if (!conn)
		return -ENOMEM;
	conn->conn_rand = get_random_u64();
	conn->conn_id = conn->conn_rand;	/* logs, until established */
	conn->attested = state == MMT_ATTEST_ATTESTED;
	conn->timeout_ms = c.timeout_ms ? c.timeout_ms : MMT_DEFAULT_TIMEOUT_MS;
	memcpy(&conn->peer, &dst, sizeof(dst));

	id = rdma_create_id(current->nsproxy->net_ns, mmt_cm_handler,
			    &conn->ctx, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id)) {
		err = PTR_ERR(id);
		goto out_destroy;
	}
	mutex_lock(&conn->setup_mutex);
	conn->cm_id = id;
	mutex_unlock(&conn->setup_mutex);
	spin_lock_irqsave(&conn->lock, flags);
	mmt_conn_set_state(conn, MMT_CONN_RESOLVING, 0);
	spin_unlock_irqrestore(&conn->lock, flags);

	err = rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst,
				conn->timeout_ms);
	if (err) {
		err = err == -ENODEV ? -EHOSTUNREACH : err;
		goto out_destroy;
	}
	/* rdma_cm reports its own timeouts first (ADDR/ROUTE_ERROR) */
	left = wait_event_interruptible_timeout(conn->wq, mmt_conn_routed(conn),
						mmt_timeout(c.timeout_ms) + HZ);
	err = left < 0 ? -EINTR : !left ? -ETIMEDOUT : 0;
	if (!err && mmt_conn_state(conn, &cerr) == MMT_CONN_DEAD)
		err = cerr;
	if (err)
		goto out_destroy;

	/*
	 * Not setup_mutex across rdma_connect(): it takes the id's
	 * handler_mutex, and our rdma_cm handlers take setup_mutex under it
	 * (lockdep: a circular dependency).  tx_mutex keeps a teardown (device
	 * removal: the only one before the fd exists) from destroying the QP
	 * under rdma_connect() and from reading the stage bits meanwhile.
	 */
	mutex_lock(&conn->tx_mutex);
	mutex_lock(&conn->setup_mutex);
	err = conn->cm_id ? mmt_conn_create_qp(conn, id) : -ECONNRESET;
	if (!err) {
		spin_lock_irqsave(&conn->lock, flags);
		err = mmt_conn_set_state(conn, MMT_CONN_CONNECTING, 0);
		spin_unlock_irqrestore(&conn->lock, flags);
		if (err)
			err = conn->err;
	}
	mutex_unlock(&conn->setup_mutex);
	if (!err) {
		len = mmt_hello_fill(&h, conn->conn_rand, 0, conn->attested, 0);
		mmt_conn_param(&param, &h, len);
		err = rdma_connect(id, &param);
		if (!err)
			set_bit(MMT_CONN_CONNECT_SENT, &conn->stages);
	}
	mutex_unlock(&conn->tx_mutex);
	if (err)
		goto out_destroy;

	left = wait_event_interruptible_timeout(conn->wq,
						mmt_conn_connected(conn),
						mmt_timeout(c.timeout_ms));
	err = left < 0 ? -EINTR : !left ? -ETIMEDOUT : 0;
	if (!err && mmt_conn_reached_live(conn))
		mmt_conn_fault_hold(conn, false);
	/*
	 * Established (it entered LIVE), so it is handed out even if the
	 * peer has closed it since (as connect(2) does, and MMT_IOC_ACCEPT):
	 * a listener that accepts and closes at once may beat this thread to
	 * the check, and using the fd reports the reset.  Not a connection
	 * that died before it entered LIVE (WAS_LIVE may be set on it): its
	 * error is returned.  Not in attested mode: the handshake below has
	 * not run, and fails on a dead connection.
	 */
	if (!err && mmt_conn_state(conn, &cerr) != MMT_CONN_LIVE &&
	    (conn->attested || !mmt_conn_reached_live(conn)))
		err = cerr;
	if (!err && conn->attested)
		err = mmt_conn_handshake(conn, c.timeout_ms);
	if (err)
		goto out_destroy;

	mmt_addr_out(&conn->peer, &c.addr);
	err = mmt_conn_install(conn, &c, uarg, usize);
	if (err)
		goto out_destroy;
	return 0;

out_destroy:
	mmt_conn_destroy(conn);
	return err;
}

/* ------------------------------------------------------------ listener */

static void mmt_listener_kill(struct mmt_listener *l)
{
	struct rdma_cm_id *id;
	unsigned long flags;

	mutex_lock(&l->mutex);
	id = l->cm_id;
	l->cm_id = NULL;
	mutex_unlock(&l->mutex);
	if (id)
		rdma_destroy_id(id);
	spin_lock_irqsave(&l->lock, flags);
	l->dead = true;
	wake_up_all(&l->wq);
	spin_unlock_irqrestore(&l->lock, flags);
}

/* Take the first connection of @list off the listener, or NULL. */
static struct mmt_conn *mmt_listener_take(struct mmt_listener *l,
					  struct list_head *list,
					  bool dead_only)
{
	struct mmt_conn *conn, *found = NULL;
	unsigned long flags;

	spin_lock_irqsave(&l->lock, flags);
	list_for_each_entry(conn, list, lnode) {
		if (dead_only && mmt_conn_state(conn, NULL) != MMT_CONN_DEAD)
			continue;
		list_del_init(&conn->lnode);
		l->count--;
		found = conn;
		break;
	}
	spin_unlock_irqrestore(&l->lock, flags);
	return found;
}

static int mmt_listen_release(struct inode *inode, struct file *file)
{
	struct mmt_listener *l = file->private_data;
	struct mmt_conn *conn;

	mmt_listener_kill(l);	/* no new requests after this */
	while ((conn = mmt_listener_take(l, &l->pending, false)))
		mmt_conn_destroy(conn);
	while ((conn = mmt_listener_take(l, &l->ready, false)))
		mmt_conn_destroy(conn);
	mutex_lock(&mmt_conn_mutex);
	list_del(&l->node);
	mutex_unlock(&mmt_conn_mutex);
	mutex_destroy(&l->mutex);
	mem_cgroup_put(l->memcg);
	kfree(l);
	return 0;
}

static __poll_t mmt_listen_poll(struct file *file, poll_table *wait)
{
	struct mmt_listener *l = file->private_data;
	unsigned long flags;
	__poll_t mask = 0;

	poll_wait(file, &l->wq, wait);
	spin_lock_irqsave(&l->lock, flags);
	if (!list_empty(&l->ready))
		mask |= EPOLLIN | EPOLLRDNORM;
	if (l->dead)
		mask |= EPOLLERR | EPOLLHUP;
	spin_unlock_irqrestore(&l->lock, flags);
	return mask;
}

static bool mmt_listener_has(struct mmt_listener *l)
{
	unsigned long flags;
	bool ret;

	spin_lock_irqsave(&l->lock, flags);
	ret = !list_empty(&l->ready) || l->dead;
	spin_unlock_irqrestore(&l->lock, flags);
	return ret;
}

/* MMT_IOC_ACCEPT: see uapi/mmt.h. */
static int mmt_listen_accept(struct mmt_listener *l, void __user *uarg)
{
	struct mmt_connect c;
	struct mmt_conn *conn;
	long left;
	u32 usize;
	int err;

	err = mmt_connect_args(&c, uarg, &usize);
	if (err)
		return err;
	if (memchr_inv(&c.addr, 0, sizeof(c.addr)))
		return -EINVAL;
	/* Reap requests that failed during the handshake. */
	while ((conn = mmt_listener_take(l, &l->pending, true)))
		mmt_conn_destroy(conn);

	left = wait_event_interruptible_timeout(l->wq, mmt_listener_has(l),
						mmt_timeout(c.timeout_ms));
	if (left < 0)
		return -EINTR;
	if (!left)
		return -ETIMEDOUT;
	conn = mmt_listener_take(l, &l->ready, false);
	if (!conn)
		return -ECONNABORTED;	/* the listener's device went away */
	/*
	 * Established, so it is handed out even if the peer has gone
	 * since (as accept(2) does): using it reports the reset.  In
	 * attested mode the accepting side's half of the handshake runs
	 * here, in the caller's context; a failed one ends the connection.
	 */
	if (conn->attested) {
		err = mmt_conn_handshake(conn, c.timeout_ms);
		if (err) {
			mmt_conn_destroy(conn);
			return err;
		}
	}
	mmt_addr_out(&conn->peer, &c.addr);
	err = mmt_conn_install(conn, &c, uarg, usize);
	if (err)
		mmt_conn_destroy(conn);
	return err;
}

static long mmt_listen_ioctl(struct file *file, unsigned int cmd,
			     unsigned long arg)
{
	if (cmd != MMT_IOC_ACCEPT)
		return -ENOTTY;
	return mmt_listen_accept(file->private_data, (void __user *)arg);
}

static const struct file_operations mmt_listen_fops = {
	.owner = THIS_MODULE,
	.release = mmt_listen_release,
	.unlocked_ioctl = mmt_listen_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.poll = mmt_listen_poll,
	.llseek = noop_llseek,
};

/**
 * mmt_conn_listen() - MMT_IOC_LISTEN
 * @uarg: user pointer to struct mmt_listen
 *
 * Context: process; may sleep.
 * Return: 0 (the fd is in the argument); the errors listed in uapi/mmt.h.
 */
int mmt_conn_listen(void __user *uarg)
{
	struct sockaddr_storage ss;
	struct mmt_listener *l;
	struct rdma_cm_id *id;
	struct mmt_listen a;
	struct file *file;
	int fd, flags, err;
	u32 usize;

	err = mmt_copy_in(&a, sizeof(a), uarg, MMT_LISTEN_SIZE_VER0, &usize);
	if (err)
		return err;
	if ((a.flags & ~MMT_CONN_CLOEXEC) || a.fd || a.backlog > 128 ||
	    a.reserved[0] || a.reserved[1] || !a.addr.port)
		return -EINVAL;
	err = mmt_addr_in(&a.addr, &ss, true);
	if (err)
		return err;
	l = kzalloc(sizeof(*l), GFP_KERNEL_ACCOUNT);
	if (!l)
		return -ENOMEM;
	l->ctx.listener = true;
	mutex_init(&l->mutex);
	spin_lock_init(&l->lock);
	INIT_LIST_HEAD(&l->pending);
	INIT_LIST_HEAD(&l->ready);
	init_waitqueue_head(&l->wq);
	l->backlog = a.backlog ? a.backlog : MMT_DEFAULT_BACKLOG;
	/* put by the listener's release, after its id is destroyed */
	l->memcg = get_mem_cgroup_from_mm(current->mm);
	mutex_lock(&mmt_conn_mutex);
	list_add_tail(&l->node, &mmt_listeners);
	mutex_unlock(&mmt_conn_mutex);

	id = rdma_create_id(current->nsproxy->net_ns, mmt_cm_handler, &l->ctx,
			    RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id)) {
		err = PTR_ERR(id);
		goto err_free;
	}
	mutex_lock(&l->mutex);
	l->cm_id = id;
	mutex_unlock(&l->mutex);
	err = rdma_bind_addr(id, (struct sockaddr *)&ss);
	if (!err)
		err = rdma_listen(id, l->backlog);
	if (err) {
		if (err == -ENODEV)
			err = -EADDRNOTAVAIL;
		goto err_free;
	}

	flags = O_RDWR | ((a.flags & MMT_CONN_CLOEXEC) ? O_CLOEXEC : 0);
	fd = get_unused_fd_flags(flags);
	if (fd < 0) {
		err = fd;
		goto err_free;
	}
	file = anon_inode_getfile("[mmt-listen]", &mmt_listen_fops, l, flags);
	if (IS_ERR(file)) {
		put_unused_fd(fd);
		err = PTR_ERR(file);
		goto err_free;
	}
	a.size = sizeof(a);
	a.fd = fd;
	if (mmt_copy_out(uarg, &a, sizeof(a), usize)) {
		put_unused_fd(fd);
		fput(file);	/* releases the listener */
		return -EFAULT;
	}
	fd_install(fd, file);
	return 0;

err_free:
	mmt_listener_kill(l);
	mutex_lock(&mmt_conn_mutex);
	list_del(&l->node);
	mutex_unlock(&mmt_conn_mutex);
	mutex_destroy(&l->mutex);
	mem_cgroup_put(l->memcg);
	kfree(l);
	return err;
}

/* ------------------------------------------------------------ mapping */

/* A buffer mapped for DMA: vmalloc'd or kmalloc'd memory. */
struct mmt_sgl {
	struct sg_table sgt;
	int nents;		/* mapped entries; 0 = not mapped */
};

static int mmt_map(struct mmt_conn *conn, void *addr, size_t len,
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

static void mmt_unmap(struct mmt_conn *conn, struct mmt_sgl *s)
{
	if (!s->nents)
		return;
	ib_dma_unmap_sg(conn->dev, s->sgt.sgl, s->sgt.orig_nents,
			DMA_BIDIRECTIONAL);
	sg_free_table(&s->sgt);
	s->nents = 0;
}

/* ------------------------------------------------------------ waiting */

/*
 * Wait for the next message of @box.  Messages come before the death of
 * the connection is noticed, so a verdict that arrived is never lost.
 * Return: the item, or ERR_PTR of -ECONNRESET (the connection's error),
 * -ETIMEDOUT or -EINTR.
 */
static struct mmt_inbox_item *mmt_inbox_wait(struct mmt_conn *conn,
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
static void mmt_conn_flush_msgs(struct mmt_conn *conn, unsigned long timeout)
{
	wait_event_timeout(conn->wq, mmt_conn_msgs_done(conn), timeout);
}

/*
 * Wait for a signaled WR; a dead connection's drain completes it.  An idle
 * struct mmt_wait_cqe has its completion done (count 1): waiting leaves it
 * so; reinit_completion() arms it right before the WR is posted.
 */
static int mmt_wait_wr(struct mmt_conn *conn, struct mmt_wait_cqe *w,
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
static void mmt_wait_idle(struct mmt_wait_cqe *w)
{
	wait_for_completion(&w->done);
	complete(&w->done);
}

static void mmt_sync_for_device(struct mmt_conn *conn, struct mmt_sgl *s)
{
	if (!ib_uses_virt_dma(conn->dev))
		dma_sync_sg_for_device(conn->dev->dma_device, s->sgt.sgl,
				       s->sgt.orig_nents, DMA_BIDIRECTIONAL);
}

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
static int mmt_tx_post_writes(struct mmt_conn *conn, struct mmt_sgl *local,
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
 * Is an MMT-channel verdict genuine: the receive's nonce and the tag of
 * this verdict for this closure under the PMO's key?  In transfer mode a
 * rejection needs it as much as an acceptance: a forged rejection of a
 * closure the receiver took in would leave two writable copies.  In copy
 * mode the receiver's copy is read-only, so a rejection needs no proof.
 */
static bool mmt_tx_ack_genuine(struct mmt_tx *tx, const struct mmt_msg *m)
{
	struct mmt_bind b;

	if (tx->channel != MMT_CHANNEL_MMT || (m->err && tx->copy))
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

static int mmt_tx_send_simple(struct mmt_conn *conn, u8 type, u32 gen,
			      u32 index, int err)
{
	struct mmt_wire_msg w = {};

	w.type = type;
	w.gen = cpu_to_le32(gen);
	w.index = cpu_to_le32(index);
	w.err = cpu_to_le32(-err);
	return mmt_conn_send_msg(conn, &w, NULL, NULL);
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

static int mmt_conn_do_send(struct mmt_conn *conn, struct mmt_pmo *pmo,
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

/* ------------------------------------------------------------ receiver */

/*
 * Registrations of one MR before it is replaced: ib_inc_rkey() steps only
 * the rkey's low 8 bits, so a 257th registration would advertise the
 * rkey of the first again (docs/CONNECTIONS.md, "rkeys").
 */
#define MMT_RX_MR_REGS		256

struct mmt_rx_slot {
	bool granted;		/* registered and advertised */
	u32 index;
	struct mmt_sgl region;	/* PMO memory (MMT, plain) or the bounce */
	u8 *bounce;		/* secure: one closure's data + tag */
	u8 *head;		/* MMT: header + sealed root slot */
	struct scatterlist head_sg;
	bool head_mapped;
	struct ib_mr *mrs[MMT_WIRE_MAX_SEGS];
	u16 regs[MMT_WIRE_MAX_SEGS];	/* registrations of each MR */
	u32 nmrs;		/* MRs allocated */
	u32 nvalid;		/* MRs registered now */
	struct mmt_wait_cqe inv;
};

struct mmt_rx {
	struct mmt_conn *conn;
	struct mmt_pmo *pmo;
	u32 channel;
	bool eager;
	bool plain;		/* the PMO is plain memory (no key) */
	u32 gen;
	u8 nonce[MMT_RX_NONCE_BYTES];	/* MMT: this receive's, in GRANTs */
	u8 tx_nonce[MMT_RX_NONCE_BYTES];	/* the sender's (OFFER) */
	u32 n;
	u32 nslots;
	size_t region_bytes;
	u32 mrs_per_slot;
	struct mmt_chan_crypto *chan;	/* secure: the sender's AES-GCM */
	u8 *priv;		/* secure: private copy of one message */
	struct mmt_rx_slot slots[MMT_MIGRATE_WINDOW_MAX];
	u32 window;		/* slots wanted: 0 = MMT_CONN_WINDOW */
	u32 granted;		/* next closure to grant */
	u32 done;		/* DONE notices handled */
	u32 accepted;
	int stop;
	bool record;		/* MMT channel: the receive is recorded */
	bool have_key;		/* @key_root holds the PMO's, as it began */
	u8 key_root[MMT_KEY_ROOT_BYTES];
};

/* The receive's binding, as its ACKs and its statement name it. */
static void mmt_rx_bind(struct mmt_rx *rx, struct mmt_bind *b)
{
	memset(b, 0, sizeof(*b));
	b->conn_id = rx->conn->conn_id;
	b->gen = rx->gen;
	b->sender_node = rx->conn->peer_node;
	b->receiver_node = mmt_node_id();
	b->dir = rx->conn->listener ? 0 : 1;	/* the sender's */
	memcpy(b->rx_nonce, rx->nonce, sizeof(b->rx_nonce));
	memcpy(b->tx_nonce, rx->tx_nonce, sizeof(b->tx_nonce));
}

static void mmt_rx_free(struct mmt_rx *rx)
{
	struct mmt_conn *conn = rx->conn;
	u32 i, j;

	for (i = 0; i < rx->nslots; i++) {
		struct mmt_rx_slot *s = &rx->slots[i];

		mmt_unmap(conn, &s->region);
		if (s->head_mapped)
			ib_dma_unmap_sg(conn->dev, &s->head_sg, 1,
					DMA_BIDIRECTIONAL);
		for (j = 0; j < s->nmrs; j++)
			ib_dereg_mr(s->mrs[j]);
		kfree(s->head);
		if (s->bounce)	/* secure: ciphertext */
			kvfree_sensitive(s->bounce, rx->region_bytes);
	}
	if (rx->priv)
		kvfree_sensitive(rx->priv, rx->region_bytes);
	mmt_chan_crypto_free(rx->chan);
}

static int mmt_rx_alloc(struct mmt_rx *rx)
{
	const struct mmt_params *p = &rx->pmo->params;
	struct mmt_conn *conn = rx->conn;
	size_t chunk = (size_t)conn->max_pages * PAGE_SIZE;
	u32 i, j;

	rx->nslots = min_t(u32, rx->window ? rx->window : MMT_CONN_WINDOW,
			   rx->n);
	rx->region_bytes = rx->channel == MMT_CHANNEL_MMT ?
		p->data_bytes + p->macs_bytes + p->nodes_bytes : p->data_bytes;
	if (rx->channel == MMT_CHANNEL_SECURE) {
		rx->region_bytes += MMT_CONN_SEC_TAG_BYTES;
		rx->priv = kvmalloc(rx->region_bytes, MMT_GFP_USER_SIZED);
		if (!rx->priv)
			return -ENOMEM;
	}
	/* +1: ib_map_mr_sg may stop short of a full MR at an entry edge */
	rx->mrs_per_slot = DIV_ROUND_UP(rx->region_bytes, chunk) + 1 +
			   (rx->channel == MMT_CHANNEL_MMT);
	if (rx->mrs_per_slot > MMT_WIRE_MAX_SEGS)
		return -E2BIG;
	for (i = 0; i < rx->nslots; i++) {
		struct mmt_rx_slot *s = &rx->slots[i];

		mmt_wait_cqe_init(&s->inv, conn);
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
		for (j = 0; j < rx->mrs_per_slot; j++) {
			struct ib_mr *mr = ib_alloc_mr(conn->pd,
						       IB_MR_TYPE_MEM_REG,
						       conn->max_pages);

			if (IS_ERR(mr))
				return PTR_ERR(mr);
			s->mrs[s->nmrs++] = mr;
		}
	}
	return 0;
}

/*
 * MR @j of @s, for one more registration: after MMT_RX_MR_REGS of them
 * it is replaced by a new MR (a new MR index: the rkeys of the old one
 * are not advertised again, docs/CONNECTIONS.md).  The slot is not
 * granted (invalidated), so the old MR is free; the new one is allocated
 * first, so its index differs from the old one's.
 */
static struct ib_mr *mmt_rx_slot_mr(struct mmt_conn *conn,
				    struct mmt_rx_slot *s, u32 j)
{
	struct ib_mr *mr;

	if (s->regs[j] >= MMT_RX_MR_REGS) {
		mr = ib_alloc_mr(conn->pd, IB_MR_TYPE_MEM_REG,
				 conn->max_pages);
		if (IS_ERR(mr))
			return mr;
		ib_dereg_mr(s->mrs[j]);
		s->mrs[j] = mr;
		s->regs[j] = 0;
	}
	s->regs[j]++;
	return s->mrs[j];
}

/* Chain a REG_MR of @mr (fresh rkey, remote write) after @prev. */
static void mmt_rx_reg_wr(struct ib_reg_wr *r, struct ib_mr *mr,
			  struct ib_reg_wr *prev)
{
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	memset(r, 0, sizeof(*r));
	r->wr.opcode = IB_WR_REG_MR;
	r->wr.wr_cqe = &mmt_silent_cqe;
	r->mr = mr;
	r->key = mr->rkey;
	r->access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	if (prev)
		prev->wr.next = &r->wr;
}

/* Register closure @index's receive area in @s and send its GRANT. */
static int mmt_rx_grant(struct mmt_rx *rx, struct mmt_rx_slot *s, u32 index)
{
	struct mmt_conn *conn = rx->conn;
	struct mmt_pmo *pmo = rx->pmo;
	struct ib_reg_wr *regs;
	struct mmt_wire_msg *w;
	struct scatterlist *sg;
	unsigned int off = 0, prev_off;
	u32 has_head = rx->channel == MMT_CHANNEL_MMT;
	u32 left, nseg = 0;
	void *area;
	int err, n;

	/* MMT: the closure's sections; plain: its data; secure: a bounce */
	area = rx->channel == MMT_CHANNEL_SECURE ? (void *)s->bounce :
		pmo->mem + (size_t)index * pmo->stride;
	err = mmt_map(conn, area, rx->region_bytes, &s->region);
	if (err)
		return err;
	regs = kcalloc(MMT_WIRE_MAX_SEGS, sizeof(*regs), GFP_KERNEL_ACCOUNT);
	w = kzalloc(sizeof(*w), GFP_KERNEL_ACCOUNT);
	if (!regs || !w) {
		err = -ENOMEM;
		goto out;
	}
	sg = s->region.sgt.sgl;
	left = s->region.nents;
	while (left) {
		struct ib_mr *mr;

		if (nseg + has_head >= s->nmrs) {
			err = -E2BIG;
			goto out;
		}
		mr = mmt_rx_slot_mr(conn, s, nseg);
		if (IS_ERR(mr)) {
			err = PTR_ERR(mr);
			goto out;
		}
		/*
		 * Maps as many pages as the MR holds; an sg entry of
		 * physically contiguous pages may be split across MRs:
		 * then @n counts only the whole entries and @off says how
		 * far into the next one this MR got.
		 */
		prev_off = off;
		n = ib_map_mr_sg(mr, sg, left, &off, PAGE_SIZE);
		if (n < 0 || (!n && off == prev_off)) {
			err = n < 0 ? n : -EINVAL;
			goto out;
		}
		mmt_rx_reg_wr(&regs[nseg], mr, nseg ? &regs[nseg - 1] : NULL);
		w->segs[nseg].addr = cpu_to_le64(mr->iova);
		w->segs[nseg].rkey = cpu_to_le32(mr->rkey);
		w->segs[nseg].len = cpu_to_le32(mr->length);
		nseg++;
		left -= n;
		while (n--)
			sg = sg_next(sg);
	}
	if (rx->channel == MMT_CHANNEL_MMT) {
		struct ib_mr *mr = mmt_rx_slot_mr(conn, s, nseg);

		if (IS_ERR(mr)) {
			err = PTR_ERR(mr);
			goto out;
		}
		sg_init_one(&s->head_sg, s->head, MMT_CONN_HEAD_BYTES);
		if (ib_dma_map_sg(conn->dev, &s->head_sg, 1,
				  DMA_BIDIRECTIONAL) != 1) {
			err = -ENOMEM;
			goto out;
		}
		s->head_mapped = true;
		off = 0;
		n = ib_map_mr_sg(mr, &s->head_sg, 1, &off, PAGE_SIZE);
		if (n != 1) {
			err = n < 0 ? n : -EINVAL;
			goto out;
		}
		mmt_rx_reg_wr(&regs[nseg], mr, nseg ? &regs[nseg - 1] : NULL);
		w->segs[nseg].addr = cpu_to_le64(mr->iova);
		w->segs[nseg].rkey = cpu_to_le32(mr->rkey);
		w->segs[nseg].len = cpu_to_le32(mr->length);
		w->head_seg = nseg;
		nseg++;
	}
	w->type = MMT_MSG_GRANT;
	w->nsegs = nseg;
	w->gen = cpu_to_le32(rx->gen);
	if (rx->channel == MMT_CHANNEL_MMT)
		memcpy(w->nonce, rx->nonce, sizeof(w->nonce));
	w->index = cpu_to_le32(index);
	w->bytes = cpu_to_le64(rx->region_bytes);
	/* posted when the send queue is idle: see mmt_conn_send_msg() */
	s->nvalid = nseg;
	s->granted = true;
	s->index = index;
	err = mmt_conn_send_msg(conn, w, &regs[0].wr, &regs[nseg - 1].wr);
out:
	kfree(regs);
	kfree(w);
	return err;
}

/*
 * Invalidate every MR of @s and wait: after this no remote write can land
 * in the slot's memory, which is then unmapped for the CPU.
 */
static int mmt_rx_invalidate(struct mmt_rx *rx, struct mmt_rx_slot *s)
{
	struct mmt_conn *conn = rx->conn;
	struct ib_send_wr *wrs;
	u32 i;
	int err = 0;

	if (!s->granted)
		return 0;
	wrs = kcalloc(s->nvalid, sizeof(*wrs), GFP_KERNEL_ACCOUNT);
	if (!wrs)
		return -ENOMEM;
	for (i = 0; i < s->nvalid; i++) {
		wrs[i].opcode = IB_WR_LOCAL_INV;
		wrs[i].wr_cqe = &mmt_silent_cqe;
		wrs[i].ex.invalidate_rkey = s->mrs[i]->rkey;
		if (i)
			wrs[i - 1].next = &wrs[i];
	}
	wrs[s->nvalid - 1].send_flags = IB_SEND_SIGNALED;
	wrs[s->nvalid - 1].wr_cqe = &s->inv.cqe;
	reinit_completion(&s->inv.done);
	err = ib_post_send(conn->qp, wrs, NULL);
	kfree(wrs);
	if (err) {
		complete(&s->inv.done);
		mmt_conn_fail(conn, -ECONNRESET);
		return err;
	}
	err = mmt_wait_wr(conn, &s->inv, mmt_timeout(0));
	if (err)
		return err;
	s->granted = false;
	s->nvalid = 0;
	mmt_unmap(conn, &s->region);
	if (s->head_mapped) {
		ib_dma_unmap_sg(conn->dev, &s->head_sg, 1, DMA_BIDIRECTIONAL);
		s->head_mapped = false;
	}
	return 0;
}

/*
 * ACK(*@verdict) for closure @index; on the MMT channel with the receive's
 * nonce and a tag over both (mmt_conn_ack_tag()), so that only a holder of
 * the key can tell the sender its closure was accepted.  *@verdict is what
 * was sent (an acceptance may become -EPERM, below).
 */
static int mmt_rx_send_ack(struct mmt_rx *rx, u32 index, u64 root_counter,
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
		 * A transfer's sender believes only a tagged rejection
		 * (mmt_tx_ack_genuine()): it is tagged from the receive's
		 * own copy of the keying root, so it stays provable after
		 * the PMO lost its key.  A migration's goes untagged then
		 * (its source needs no proof of a rejection).
		 */
		if (*verdict && rx->have_key) {
			/* unprovable: end the receive, the sender asks */
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
	return mmt_conn_send_msg(rx->conn, &w, NULL, NULL);
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
static int mmt_conn_do_recv_prepared(struct mmt_conn *conn,
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
		/* A copy never leaves its sender in doubt: not recorded. */
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
			.dir = conn->listener ? 0 : 1,	/* the sender's */
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
	mmt_conn_shutdown(conn);
	for (i = 0; i < rx->nslots; i++)
		mmt_wait_idle(&rx->slots[i].inv);
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
	struct mmt_sgl snap_map;
	u8 *head;		/* header + sealed root */
	u64 head_dma;
	struct mmt_wait_cqe wcqe;	/* the WRITE_WITH_IMM */
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

		mmt_unmap(conn, &s->snap_map);
		if (s->head_dma)
			ib_dma_unmap_single(conn->dev, s->head_dma,
					    MMT_CONN_HEAD_BYTES, DMA_TO_DEVICE);
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
	int err;

	mtx->nslots = min_t(u32, window, mtx->pmo->closures);
	mtx->region_bytes = p->data_bytes + p->macs_bytes + p->nodes_bytes;
	for (i = 0; i < mtx->nslots; i++) {
		struct mmt_mtx_slot *s = &mtx->slots[i];

		mmt_wait_cqe_init(&s->wcqe, conn);
		s->head = kzalloc(MMT_CONN_HEAD_BYTES, GFP_KERNEL_ACCOUNT);
		if (!s->head)
			return -ENOMEM;
		mmt_mig_extra(mtx->t.mig, MMT_CONN_HEAD_BYTES);
		s->head_dma = ib_dma_map_single(conn->dev, s->head,
						MMT_CONN_HEAD_BYTES,
						DMA_TO_DEVICE);
		if (ib_dma_mapping_error(conn->dev, s->head_dma)) {
			s->head_dma = 0;
			return -ENOMEM;
		}
		s->snap = kvmalloc(mtx->region_bytes, MMT_GFP_USER_SIZED);
		if (!s->snap)
			return -ENOMEM;
		mmt_mig_extra(mtx->t.mig, mtx->region_bytes);
		err = mmt_map(conn, s->snap, mtx->region_bytes, &s->snap_map);
		if (err)
			return err;
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
	struct mmt_conn *conn = mtx->conn;
	u32 nsegs = w->nsegs, imm;
	struct ib_sge head_sge;
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
	ib_dma_sync_single_for_device(conn->dev, s->head_dma,
				      MMT_CONN_HEAD_BYTES, DMA_TO_DEVICE);
	mmt_sync_for_device(conn, &s->snap_map);
	head_sge.addr = s->head_dma;
	head_sge.length = MMT_CONN_HEAD_BYTES;
	head_sge.lkey = conn->pd->local_dma_lkey;
	imm = ((u32)mtx->t.gen & 0xff) << MMT_IMM_INDEX_BITS | m->index;
	reinit_completion(&s->wcqe.done);
	s->posted = true;
	err = mmt_tx_post_writes(conn, &s->snap_map, mtx->region_bytes,
				 w->segs, nsegs - 1, &head_sge,
				 &w->segs[nsegs - 1], imm, &s->wcqe);
	if (err)
		complete(&s->wcqe.done);	/* nothing was posted */
	return err;
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
	/* the NIC is done with the snapshot before it is reused */
	err = mmt_wait_wr(mtx->conn, &s->wcqe, mtx->timeout);
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
	err = mmt_conn_send_msg(mtx->conn, &w, NULL, NULL);
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
	return mmt_conn_send_msg(mtx->conn, &w, NULL, NULL);
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
	mtx->t.dir = conn->listener ? 1 : 0;
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
			mmt_wait_idle(&mtx->slots[i].wcqe);
		mmt_conn_flush_msgs(conn, mtx->timeout);
	} else if (mtx->offered) {
		/* no write in flight may outlive the snapshots: end it */
		mmt_conn_fail(conn, err == -ETIMEDOUT ? err : -ECONNRESET);
		mmt_conn_shutdown(conn);
		for (i = 0; i < mtx->nslots; i++)
			mmt_wait_idle(&mtx->slots[i].wcqe);
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
		    mmt_conn_send_msg(rx->conn, &w, NULL, NULL) ||
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
		.dir = rx->conn->listener ? 0 : 1,	/* the source's */
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
		.dir = conn->listener ? 0 : 1,	/* the source's */
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
	mmt_conn_shutdown(conn);
	for (i = 0; i < rx->nslots; i++)
		mmt_wait_idle(&rx->slots[i].inv);
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

/* What an ioctl on a connection fd that names a PMO holds: mmt_conn_op_begin(). */
struct mmt_conn_op {
	struct fd f;
	struct mmt_pmo *pmo;
	struct mutex *mutex;	/* the call's: tx_, rx_, ka_ or res_mutex */
};

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
static int mmt_conn_op_begin(int pmo_fd, struct mutex *mutex,
			     struct mmt_conn_op *op)
{
	op->f = fdget(pmo_fd);
	if (!op->f.file)
		return -EBADF;
	op->pmo = mmt_pmo_from_file(op->f.file);
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
static int mmt_conn_op_live(struct mmt_conn *conn)
{
	int cerr;

	if (mmt_conn_state(conn, &cerr) == MMT_CONN_LIVE)
		return 0;
	if (cerr == -ETIMEDOUT || cerr == -EKEYEXPIRED ||
	    (cerr == -EKEYREJECTED && conn->hs_done))
		return cerr;
	return -ECONNRESET;
}

static void mmt_conn_op_end(struct mmt_conn_op *op)
{
	mutex_unlock(op->mutex);
	fdput(op->f);
}

/* MMT_IOC_MIGRATE_SEND and MMT_IOC_MIGRATE_RECV: see uapi/mmt.h. */
static int mmt_conn_migrate(struct mmt_conn *conn, void __user *uarg,
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
		mmt_ckpt_park_end(park, err ? NULL : op.f.file, info.nonce);
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
static int mmt_conn_migrate_info(struct mmt_conn *conn, void __user *uarg)
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
static void mmt_conn_mig_query(struct work_struct *work)
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
		if (mmt_conn_send_msg(conn, &w, NULL, NULL))
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
static int mmt_conn_migrate_resolve(struct mmt_conn *conn, void __user *uarg)
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
	err = mmt_conn_send_msg(conn, &w, NULL, NULL);
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
static int mmt_conn_migrate_req(struct mmt_conn *conn, unsigned long arg,
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

/* ------------------------------------------------------------ conn fd */

/*
 * A receive into @pmo: the PMO is this receive's alone (-EBUSY for
 * another) from mmt_conn_rx_prepare() to mmt_conn_rx_finish().
 */
static int mmt_conn_do_recv(struct mmt_conn *conn, struct mmt_pmo *pmo,
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

/* MMT_IOC_SEND and MMT_IOC_RECV: see uapi/mmt.h. */
static int mmt_conn_xfer(struct mmt_conn *conn, void __user *uarg, bool send)
{
	struct mmt_conn_op op;
	struct mmt_xfer x;
	u32 usize;
	int err;

	err = mmt_copy_in(&x, sizeof(x), uarg, MMT_XFER_SIZE_VER0, &usize);
	if (err)
		return err;
	err = mmt_conn_xfer_args(&x);
	if (err)
		return err;
	/* COPY is the sender's choice, EAGER the receiver's */
	if (x.flags & (send ? MMT_XFER_EAGER : MMT_XFER_COPY))
		return -EINVAL;
	err = mmt_conn_op_begin(x.pmo_fd,
				send ? &conn->tx_mutex : &conn->rx_mutex, &op);
	if (err)
		return err;
	err = mmt_conn_op_live(conn);
	if (!err && send)
		err = mmt_conn_do_send(conn, op.pmo, &x);
	else if (!err)
		err = mmt_conn_do_recv(conn, op.pmo, &x);
	mmt_conn_op_end(&op);
	x.size = sizeof(x);
	if (mmt_copy_out(uarg, &x, sizeof(x), usize) && !err)
		err = -EFAULT;
	return err;
}

/* MMT_IOC_CONN_SET_KEY: see uapi/mmt.h. */
static int mmt_conn_set_key(struct mmt_conn *conn, void __user *uarg)
{
	u8 root[MMT_CHAN_ROOT_BYTES];
	struct mmt_conn_key k;
	u32 usize;
	int err;

	err = mmt_copy_in(&k, sizeof(k), uarg, MMT_CONN_KEY_SIZE_VER0, &usize);
	if (!err)
		err = mmt_conn_key_args(&k);
	if (!err)
		err = mmt_chan_root_key(k.key, k.key_len, root);
	memzero_explicit(&k, sizeof(k));
	/*
	 * Attested: the root is bound to the handshake secret too, so the
	 * channel keys hold only between the two attested ends of this
	 * connection, whoever else knows the key.
	 */
	if (!err && conn->attested) {
		static const char info[] = "mmt v1 attested chanroot";

		err = mmt_crypto_hkdf_sha256(root, sizeof(root),
					     conn->hs_secret,
					     sizeof(conn->hs_secret),
					     (const u8 *)info, sizeof(info) - 1,
					     root, sizeof(root));
	}
	if (err) {
		memzero_explicit(root, sizeof(root));
		return err;
	}
	mutex_lock(&conn->key_mutex);
	if (conn->has_key) {
		err = -EBUSY;
	} else {
		memcpy(conn->chan_root, root, sizeof(root));
		/* pairs with mmt_conn_root(): the root before the flag */
		smp_store_release(&conn->has_key, true);
	}
	mutex_unlock(&conn->key_mutex);
	memzero_explicit(root, sizeof(root));
	return err;
}

/*
 * Send an agreement message: @type, the agreement's number @seq, @len
 * (AGREE: the key length) and 32 bytes @data.
 */
static int mmt_conn_agree_send(struct mmt_conn *conn, u8 type, u64 seq,
			       u32 len, const u8 *data)
{
	struct mmt_wire_msg *w;
	int err;

	w = kzalloc(sizeof(*w), GFP_KERNEL_ACCOUNT);
	if (!w)
		return -ENOMEM;
	w->type = type;
	w->bytes = cpu_to_le64(seq);
	w->closures = cpu_to_le32(len);
	w->nsegs = MMT_X25519_BYTES / 16;
	memcpy(w->segs, data, MMT_X25519_BYTES);
	err = mmt_conn_send_msg(conn, w, NULL, NULL);
	kfree(w);
	return err;
}

/*
 * Receive the peer's agreement message of @type for agreement @seq (with
 * @len in closures) into @data.  Return: 0, -EPROTO for another type,
 * number or length, mmt_conn_hs_next()'s errors.
 */
static int mmt_conn_agree_recv(struct mmt_conn *conn, unsigned long deadline,
			       u8 type, u64 seq, u32 len, u8 *data)
{
	struct mmt_inbox_item *it;
	int err;

	err = mmt_conn_hs_next(conn, deadline, &it);
	if (err)
		return err;
	if (it->msg.type != type || le64_to_cpu(it->msg.wire.bytes) != seq ||
	    le32_to_cpu(it->msg.wire.closures) != len ||
	    it->msg.wire.nsegs * 16 < MMT_X25519_BYTES)
		err = -EPROTO;
	else
		memcpy(data, it->msg.wire.segs, MMT_X25519_BYTES);
	kfree(it);
	return err;
}

/**
 * mmt_conn_key_agree() - MMT_IOC_CONN_KEY_AGREE (see uapi/mmt.h)
 * @conn: an attested connection
 * @uarg: user pointer to struct mmt_key_agree
 *
 * Both sides: a fresh ephemeral X25519 key, AGREE(seq, share) both ways,
 * mmt_hs_agree() of the DH under the handshake secret, AGREE_CONFIRM(seq,
 * tag) both ways, then mmt_pmo_set_key() with the key, which is wiped.
 *
 * Context: process; sleeps; takes @conn->ka_mutex, the PMO's lock
 * (killable).
 * Return: 0 or the errors of uapi/mmt.h; a failure after the first
 * message ends the connection.
 */
static int mmt_conn_key_agree(struct mmt_conn *conn, void __user *uarg)
{
	u8 e_sk[MMT_X25519_BYTES], share[MMT_X25519_BYTES];
	u8 peer[MMT_X25519_BYTES], dh[MMT_X25519_BYTES];
	u8 key[32], tag_i[32], tag_r[32], tag[32];
	unsigned long deadline;
	struct mmt_key_agree a;
	struct mmt_conn_op op;
	struct mmt_pmo *pmo;
	bool initiator = !conn->listener;
	u32 usize;
	int err, failed0;

	err = mmt_copy_in(&a, sizeof(a), uarg, MMT_KEY_AGREE_SIZE_VER0,
			  &usize);
	if (!err)
		err = mmt_conn_agree_args(&a);
	if (err)
		return err;
	if (!conn->attested)
		return -ENOKEY;
	err = mmt_conn_op_begin(a.pmo_fd, &conn->ka_mutex, &op);
	if (err)
		return err;
	pmo = op.pmo;
	err = mmt_conn_op_live(conn);
	/* killable: a pwrite() whose buffer faults slowly may hold it */
	if (!err && mutex_lock_killable(&pmo->lock)) {
		err = -EINTR;
	} else if (!err) {
		if (pmo->crypto || pmo->plain_xfers)
			err = -EBUSY;
		mutex_unlock(&pmo->lock);
	}
	if (err)
		goto out_unlock;
	a.seq = ++conn->ka_seq;
	deadline = jiffies + mmt_timeout(a.timeout_ms);
	failed0 = atomic_read(&conn->msgs_failed);
	get_random_bytes(e_sk, sizeof(e_sk));
	err = mmt_x25519(e_sk, NULL, share);
	if (!err)
		err = mmt_conn_agree_send(conn, MMT_MSG_AGREE, a.seq, a.key_len,
					  share);
	if (!err)
		err = mmt_conn_agree_recv(conn, deadline, MMT_MSG_AGREE, a.seq,
					  a.key_len, peer);
	if (!err)
		err = mmt_x25519(e_sk, peer, dh);
	if (!err)
		err = mmt_hs_agree(conn->hs_secret, conn->conn_id, a.seq,
				   initiator ? share : peer,
				   initiator ? peer : share, dh, a.key_len,
				   key, tag_i, tag_r);
	if (!err)
		err = mmt_conn_agree_send(conn, MMT_MSG_AGREE_CONFIRM, a.seq, 0,
					  initiator ? tag_i : tag_r);
	if (!err)
		err = mmt_conn_agree_recv(conn, deadline, MMT_MSG_AGREE_CONFIRM,
					  a.seq, 0, tag);
	if (!err && crypto_memneq(tag, initiator ? tag_r : tag_i, sizeof(tag)))
		err = -EKEYREJECTED;
	if (!err)
		mmt_conn_fault_hold(conn, true);
	/*
	 * Our confirmation reached the peer: its SEND completed, whether or
	 * not the peer has closed the connection since (done, it may close
	 * it at once; this side must not then call the agreement failed
	 * while the peer's PMO is keyed)
	 */
	if (!err)
		err = mmt_conn_sends_ok(conn, deadline, failed0);
	if (err) {
		/* the two sides' agreement numbers may differ now */
		pr_info_ratelimited("conn %llx: key agreement %llu failed: %d\n",
				    conn->conn_id, a.seq, err);
		mmt_conn_fail(conn, err);
		goto out_wipe;
	}
	err = mmt_pmo_set_key(pmo, key, a.key_len, a.flags & MMT_KEY_RECEIVE);
	if (!err && mmt_copy_out(uarg, &a, sizeof(a), usize))
		err = -EFAULT;
out_wipe:
	memzero_explicit(e_sk, sizeof(e_sk));
	memzero_explicit(dh, sizeof(dh));
	memzero_explicit(key, sizeof(key));
	memzero_explicit(tag_i, sizeof(tag_i));
	memzero_explicit(tag_r, sizeof(tag_r));
out_unlock:
	mmt_conn_op_end(&op);
	return err;
}

static long mmt_conn_ioctl(struct file *file, unsigned int cmd,
			   unsigned long arg)
{
	struct mmt_conn *conn = file->private_data;

	switch (cmd) {
	case MMT_IOC_SEND:
		return mmt_conn_xfer(conn, (void __user *)arg, true);
	case MMT_IOC_RECV:
		return mmt_conn_xfer(conn, (void __user *)arg, false);
	case MMT_IOC_CONN_SET_KEY:
		return mmt_conn_set_key(conn, (void __user *)arg);
	case MMT_IOC_CONN_KEY_AGREE:
		return mmt_conn_key_agree(conn, (void __user *)arg);
	case MMT_IOC_MIGRATE_SEND:
		return mmt_conn_migrate(conn, (void __user *)arg, true);
	case MMT_IOC_MIGRATE_RECV:
		return mmt_conn_migrate(conn, (void __user *)arg, false);
	case MMT_IOC_MIGRATE_INFO:
		return mmt_conn_migrate_info(conn, (void __user *)arg);
	case MMT_IOC_MIGRATE_FINISH:
		return mmt_conn_migrate_req(conn, arg, MMT_MIG_REQ_FINISH);
	case MMT_IOC_MIGRATE_ABORT:
		return mmt_conn_migrate_req(conn, arg, MMT_MIG_REQ_ABORT);
	case MMT_IOC_MIGRATE_RESOLVE:
		return mmt_conn_migrate_resolve(conn, (void __user *)arg);
	default:
		return -ENOTTY;
	}
}

static __poll_t mmt_conn_poll(struct file *file, poll_table *wait)
{
	struct mmt_conn *conn = file->private_data;
	struct mmt_inbox_item *it;
	unsigned long flags;
	__poll_t mask = 0;

	poll_wait(file, &conn->wq, wait);
	poll_wait(file, &conn->mig_tx.wq, wait);
	poll_wait(file, &conn->mig_rx.wq, wait);
	spin_lock_irqsave(&conn->lock, flags);
	list_for_each_entry(it, &conn->rx_inbox, node) {
		if (it->msg.type == MMT_MSG_OFFER) {
			mask |= EPOLLIN | EPOLLRDNORM;
			break;
		}
	}
	if (conn->state == MMT_CONN_DEAD)
		mask |= EPOLLERR | EPOLLHUP;
	/* a migration's figures changed since MMT_IOC_MIGRATE_INFO */
	if (conn->mig_last &&
	    READ_ONCE(conn->mig_last->events) !=
	    READ_ONCE(conn->mig_last->events_seen))
		mask |= EPOLLPRI;
	spin_unlock_irqrestore(&conn->lock, flags);
	return mask;
}

static int mmt_conn_release(struct inode *inode, struct file *file)
{
	mmt_conn_destroy(file->private_data);
	return 0;
}

static const struct file_operations mmt_conn_fops = {
	.owner = THIS_MODULE,
	.release = mmt_conn_release,
	.unlocked_ioctl = mmt_conn_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.poll = mmt_conn_poll,
	.llseek = noop_llseek,
};

/* ------------------------------------------------------------ ib_client */

static int mmt_ib_add(struct ib_device *dev)
{
	return 0;
}

/*
 * A device goes away: release every resource on it before returning (the
 * core waits for them), as nvme_rdma_remove_one() does.  The fds stay
 * open and report the connection reset.
 */
static void mmt_ib_remove(struct ib_device *dev, void *client_data)
{
	struct mmt_conn *conn, *tmp;
	struct rdma_cm_id *id;
	struct mmt_listener *l;
	LIST_HEAD(victims);

	/*
	 * Nothing is allocated here: a removal must complete whatever the
	 * memory, so the connections are listed through their own rm_node
	 * and the listeners are taken one at a time.
	 */
	mutex_lock(&mmt_conn_mutex);
	list_for_each_entry(conn, &mmt_conns, node) {
		if (READ_ONCE(conn->dev) == dev) {
			kref_get(&conn->ref);
			list_add_tail(&conn->rm_node, &victims);
		}
	}
	mutex_unlock(&mmt_conn_mutex);
	/*
	 * Each listener's id is destroyed outside mmt_conn_mutex: its
	 * handler may be allocating a connection, which takes it.
	 */
	do {
		id = NULL;
		mutex_lock(&mmt_conn_mutex);
		list_for_each_entry(l, &mmt_listeners, node) {
			unsigned long flags;

			mutex_lock(&l->mutex);
			if (l->cm_id && l->cm_id->device == dev) {
				id = l->cm_id;
				l->cm_id = NULL;
				spin_lock_irqsave(&l->lock, flags);
				l->dead = true;
				wake_up_all(&l->wq);
				spin_unlock_irqrestore(&l->lock, flags);
			}
			mutex_unlock(&l->mutex);
			if (id)
				break;
		}
		mutex_unlock(&mmt_conn_mutex);
		if (id)
			rdma_destroy_id(id);
	} while (id);
	list_for_each_entry_safe(conn, tmp, &victims, rm_node) {
		list_del_init(&conn->rm_node);
		pr_info("conn %llx: device %s removed\n", conn->conn_id,
			dev_name(&dev->dev));
		mmt_conn_teardown(conn, -ECONNRESET);
		mmt_conn_put(conn);
	}
}

static struct ib_client mmt_ib_client = {
	.name = "mmt",
	.add = mmt_ib_add,
	.remove = mmt_ib_remove,
};

/**
 * mmt_conn_init() - register the ib_client (device removal)
 *
 * Context: module init.
 * Return: 0 or ib_register_client()'s error.
 */
int mmt_conn_init(void)
{
	return ib_register_client(&mmt_ib_client);
}

/**
 * mmt_conn_exit() - unregister the ib_client
 *
 * Context: module exit (no fd is open: each holds a module reference).
 */
void mmt_conn_exit(void)
{
	ib_unregister_client(&mmt_ib_client);
}
