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
#define MMT_MR_PAGES		511	/* pages per MR (mmt_conn_create_qp()) */
#define MMT_DEFAULT_BACKLOG	16

/* a peer may queue four receive rings of messages, no more */
static_assert(MMT_INBOX_MAX == 4 * MMT_RQ_DEPTH);

/* Stage bits of struct mmt_conn.stages: what teardown must undo. */
enum {
	MMT_CONN_ALLOCATED,	/* PD, CQ, QP, receive ring */
	MMT_CONN_CONNECT_SENT,	/* rdma_connect/rdma_accept called */
	MMT_CONN_WAS_LIVE,	/* reached LIVE: drain before destroying */
	MMT_CONN_DRAINED,	/* disconnected and drained */
	MMT_CONN_NO_POST,	/* shut down: no message is posted any more */
};

/* A receive buffer of the ring. */
struct mmt_rx_buf {
	struct ib_cqe cqe;
	struct mmt_conn *conn;
	void *buf;
	u64 dma;
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
struct mmt_sgl {
	struct sg_table sgt;
	int nents;		/* mapped entries; 0 = not mapped */
};

/* mmt_conn_rdma.c */
void mmt_wait_cqe_init(struct mmt_wait_cqe *w, struct mmt_conn *conn);
extern struct ib_cqe mmt_silent_cqe;
int mmt_conn_send_msg(struct mmt_conn *conn,
		      const struct mmt_wire_msg *w,
		      struct ib_send_wr *chain,
		      struct ib_send_wr *chain_last);
int mmt_conn_create_qp(struct mmt_conn *conn, struct rdma_cm_id *id);
void mmt_conn_shutdown(struct mmt_conn *conn);
void mmt_conn_teardown(struct mmt_conn *conn, int err);
void mmt_conn_destroy(struct mmt_conn *conn);
int mmt_map(struct mmt_conn *conn, void *addr, size_t len,
	    struct mmt_sgl *s);
void mmt_unmap(struct mmt_conn *conn, struct mmt_sgl *s);
int mmt_wait_wr(struct mmt_conn *conn, struct mmt_wait_cqe *w,
		unsigned long timeout);
void mmt_wait_idle(struct mmt_wait_cqe *w);
void mmt_sync_for_device(struct mmt_conn *conn, struct mmt_sgl *s);

#endif /* MMT_RDMA_H */
