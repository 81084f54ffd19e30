/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mmt_rdma.h - the RDMA transport's private declarations, shared by its
 * files (driver/mmt_*_rdma.c): connections over in-kernel verbs: rdma_cm
 * listen, connect and accept; one RC QP per connection; the MMT, secure
 * and plain channels (DESIGN.md sections 1 and 5; the wire protocol is
 * described in mmt_conn.h)
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
 * last segment of the grant, written last: with IMM on RoCE, followed by
 * the MMT_MSG_NOTICE SEND on iWARP).  Plain channel: the plain
 * receive PMO's memory for closure i's data, written in place; nothing to
 * check after invalidation.  Secure channel: a bounce buffer per window
 * slot for one AES-GCM message (data + 16-byte tag), copied into a private
 * buffer and opened there after invalidation, then copied into a plain PMO
 * or written through the controller into a keyed one (mmt_conn_sec_*()).
 *
 * Locking: conn->lock (spinlock) protects state, error and the two
 * inboxes, and is taken in the completion and rdma_cm handlers;
 * struct mmt_rdma_conn's setup_mutex protects the verbs resources, the
 * stage bits and the ownership of its cm_id; rdma_cm handlers may take it
 * because nobody
 * waits for a handler while holding it (rdma_destroy_id(), which waits for
 * the handlers, is called after dropping it) or calls rdma_connect(), which
 * takes the id's handler_mutex that the handlers run under (the connect
 * path holds tx_mutex across it instead, which keeps a teardown away);
 * conn->tx_mutex and conn->rx_mutex serialize MMT_IOC_SEND and
 * MMT_IOC_RECV (one of each may run at the same time); conn->key_mutex
 * serializes MMT_IOC_CONN_SET_KEY (the key is set once and then only
 * read: mmt_conn_root()).  Order: tx_mutex,
 * rx_mutex, setup_mutex, then a PMO's lock; post_mutex (every post of a
 * message or a write chain) is innermost and is never held with
 * setup_mutex or a PMO's lock.  mmt_conn_mutex protects the
 * global lists used by device removal.
 */
#ifndef MMT_RDMA_H
#define MMT_RDMA_H

#include <linux/completion.h>
#include <linux/file.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/scatterlist.h>
#include <linux/socket.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "mmt_conn.h"
#include "mmt_fabric.h"
#include "mmt_internal.h"
#include "mmt_proto.h"
#include "mmt_transport.h"
#include "mmt.h"

#define MMT_SQ_DEPTH		512	/* send WRs (+1 for the drain) */
#define MMT_RQ_DEPTH		64	/* receive WRs (+1 for the drain) */
#define MMT_MAX_SGE		16	/* SGEs per RDMA write */
#define MMT_MR_PAGES		511	/* pages per MR (mmt_rdma_create_qp()) */
#define MMT_DEFAULT_BACKLOG	16

/* a peer may queue four receive rings of messages, no more */
static_assert(MMT_INBOX_MAX == 4 * MMT_RQ_DEPTH);

/* Stage bits of struct mmt_rdma_conn.stages: what teardown must undo. */
enum {
	MMT_CONN_ALLOCATED,	/* PD, CQ, QP, receive ring */
	MMT_CONN_CONNECT_SENT,	/* rdma_connect/rdma_accept called */
	MMT_CONN_WAS_LIVE,	/* reached LIVE: drain before destroying */
	MMT_CONN_DRAINED,	/* disconnected and drained */
	MMT_CONN_NO_POST,	/* shut down: no message is posted any more */
	MMT_CONN_HALF_READY,	/* iWARP accept: ESTABLISHED or START seen */
	MMT_CONN_STARTED,	/* iWARP accept: the connector's START came */
};

/* What an rdma_cm_id's context points at. */
struct mmt_cm_ctx {
	bool listener;
};

/**
 * struct mmt_rdma_conn - a connection over RDMA: the protocol's object and
 *	the RDMA fabric's resources, which only the RDMA fabric's files touch
 * @ctx: rdma_cm context tag (first member)
 * @conn: the protocol's connection (driver/mmt_proto.h)
 * @rm_node: in mmt_ib_remove()'s list of the connections on the device
 *	going away (under mmt_conn_mutex while it is built)
 * @lnode: in the listener's pending or ready list until accepted
 * @listener: the listener that created it (accepting side), or NULL
 * @routed: connect side: ROUTE_RESOLVED arrived (under conn.lock)
 * @setup_mutex: protects the verbs resources, @stages and @cm_id
 * @stages: MMT_CONN_* stage bits
 * @cm_id: the rdma_cm id; NULL once destroyed (or handed to rdma_cm)
 * @dev: the device of the QP
 * @pd: protection domain
 * @cq: the one CQ (send and receive), IB_POLL_SOFTIRQ
 * @qp: the RC QP
 * @max_sge: SGEs per send WR
 * @max_pages: pages per fast-registration MR
 * @iwarp: the device's port speaks iWARP (rdma_protocol_iwarp()): no
 *	immediate data, so a closure's notice is a SEND (MMT_MSG_NOTICE)
 *	after its writes, and the connecting side sends first (MMT_MSG_START)
 * @start_work: iWARP, connecting side: posts MMT_MSG_START again
 *	(mmt_rdma_start_again())
 * @starts: MMT_MSG_STARTs posted
 * @rxb: MMT_RQ_DEPTH receive buffers
 * @post_mutex: serializes posting to the send queue, so that a REG_MR is
 *	posted only when nothing before it is unacknowledged (see
 *	mmt_rdma_send_msg())
 * @timeout_ms: connect timeout
 * @peer: the peer's address
 */
struct mmt_rdma_conn {
	struct mmt_cm_ctx ctx;
	struct mmt_conn conn;
	struct list_head rm_node;
	struct list_head lnode;
	struct mmt_listener *listener;
	bool routed;
	struct mutex setup_mutex;	/* verbs resources, stages, cm_id */
	unsigned long stages;
	struct rdma_cm_id *cm_id;
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	u32 max_sge;
	u32 max_pages;
	bool iwarp;
	struct delayed_work start_work;
	u32 starts;
	struct mmt_rx_buf *rxb;
	struct mutex post_mutex;	/* ib_post_send of messages, writes */
	u32 timeout_ms;
	struct sockaddr_storage peer;
};

/* The RDMA connection of @conn, a connection of the RDMA fabric. */
static inline struct mmt_rdma_conn *mmt_rdma(struct mmt_conn *conn)
{
	return container_of(conn, struct mmt_rdma_conn, conn);
}

/* A receive buffer of the ring. */
struct mmt_rx_buf {
	struct ib_cqe cqe;
	struct mmt_conn *conn;
	void *buf;
	u64 dma;
};

/* A signaled WR a thread waits for. */
struct mmt_rdma_wait {
	struct ib_cqe cqe;
	struct mmt_conn *conn;
	struct completion done;
	int status;
	bool sq_counted;	/* a write chain counted in writes_out */
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

/* A buffer mapped for DMA: vmalloc'd or kmalloc'd memory. */
struct mmt_rdma_sgl {
	struct sg_table sgt;
	int nents;		/* mapped entries; 0 = not mapped */
};

/* mmt_conn_rdma.c */
void mmt_rdma_wait_init(struct mmt_rdma_wait *w, struct mmt_conn *conn);
extern struct ib_cqe mmt_rdma_silent_cqe;
int mmt_rdma_send_msg(struct mmt_conn *conn,
		      const struct mmt_wire_msg *w,
		      struct ib_send_wr *chain,
		      struct ib_send_wr *chain_last);
int mmt_rdma_create_qp(struct mmt_conn *conn, struct rdma_cm_id *id);
void mmt_rdma_shutdown(struct mmt_conn *conn);
void mmt_rdma_teardown(struct mmt_conn *conn, int err);
void mmt_rdma_destroy(struct mmt_conn *conn);
void mmt_rdma_release(struct mmt_conn *conn);
int mmt_rdma_map(struct mmt_conn *conn, void *addr, size_t len,
		 struct mmt_rdma_sgl *s);
void mmt_rdma_unmap(struct mmt_conn *conn, struct mmt_rdma_sgl *s);
int mmt_rdma_wait_wr(struct mmt_conn *conn, struct mmt_rdma_wait *w,
		     unsigned long timeout);
void mmt_rdma_wait_idle(struct mmt_rdma_wait *w);
void mmt_rdma_sync_for_device(struct mmt_conn *conn, struct mmt_rdma_sgl *s);
void mmt_listener_ready(struct mmt_conn *conn);
void mmt_rdma_half_ready(struct mmt_conn *conn);
void mmt_rdma_send_start(struct mmt_conn *conn);
void mmt_rdma_start_again(struct work_struct *work);

#endif /* MMT_RDMA_H */
