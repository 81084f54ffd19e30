/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mmt_proto.h - the connection protocol: the connection object and the
 * files that run the protocol over it, written against the fabric
 * operations of driver/mmt_fabric.h (DESIGN.md section 5; the messages
 * are in mmt_conn.h)
 *
 *	mmt_conn_core.c		the object: state, references, inboxes, the
 *				dispatch of what arrives, the ioctls' prologue
 *	mmt_conn_hs.c		the hello, the attested handshake, renewals
 *	mmt_conn_tx.c		a transfer's sender (MMT_IOC_SEND)
 *	mmt_conn_rx.c		a transfer's receiver (MMT_IOC_RECV)
 *	mmt_conn_mig.c		live migration over a connection, resolve
 *	mmt_connfd.c		the connection fd
 *
 * Nothing here needs the verbs headers: a fabric keeps its own state in
 * a struct that embeds struct mmt_conn (struct mmt_rdma_conn in
 * driver/mmt_rdma.h, struct mmt_loop_conn in driver/mmt_fabric_loop.c)
 * and frees it in its @release operation.
 *
 * Locking: conn->lock (spinlock) protects state, error and the inboxes,
 * and is taken in completion context; conn->tx_mutex and conn->rx_mutex
 * serialize MMT_IOC_SEND and MMT_IOC_RECV (one of each may run at the same
 * time); conn->key_mutex serializes MMT_IOC_CONN_SET_KEY (the key is set
 * once and then only read: mmt_conn_root()).  Order: tx_mutex, rx_mutex,
 * the fabric's locks, then a PMO's lock.
 */
#ifndef MMT_PROTO_H
#define MMT_PROTO_H

#include <linux/completion.h>
#include <linux/file.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/socket.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "mmt_conn.h"
#include "mmt_fabric.h"
#include "mmt_internal.h"
#include "mmt_transport.h"
#include "mmt.h"

#define MMT_DEFAULT_TIMEOUT_MS	10000
#define MMT_INBOX_MAX		256	/* queued messages */

struct mmt_hs;

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

/* A message in an inbox. */
struct mmt_inbox_item {
	struct list_head node;
	struct mmt_msg msg;
};

/**
 * struct mmt_conn - one connection: the protocol's state (a fabric keeps
 *	its own in a struct that embeds this one: struct mmt_rdma_conn)
 * @fab: the fabric's operations the protocol calls (driver/mmt_fabric.h)
 * @ref: references: the owner (fd, listener queue) and temporary ones
 * @node: in mmt_conns (device removal)
 * @accepted: this side accepted the connection (the sender's or the
 *	source's direction in every binding, struct mmt_bind.dir, follows
 *	from it)
 * @lock: protects @state, @err, @reached_live, @tx_inbox,
 *	@rx_inbox, @hs_inbox, @hs_done
 * @state: enum mmt_conn_state
 * @err: why it is DEAD (negative errno)
 * @reached_live: it entered LIVE (it may be DEAD since): what
 *	MMT_IOC_CONNECT hands out even when the peer closed it at once.  Not
 *	the stage bit WAS_LIVE, which ESTABLISHED sets before the transition
 *	(the QP can carry messages: teardown drains it) even on a connection
 *	that died first, e.g. of a malformed message the peer sent before
 *	ESTABLISHED was handled
 * @wq: woken on every state change and message
 * @tx_inbox: messages for the sending side (GRANT, ACK, NACK)
 * @rx_inbox: messages for the receiving side (OFFER, DONE, END)
 * @inbox_len: messages in both inboxes (bounded: a peer cannot make us
 *	queue without limit)
 * @msgs_out: message SENDs posted and not completed yet
 * @msgs_failed: message SENDs that completed with an error or were
 *	flushed (never reset; counted before @msgs_out drops): whether a
 *	message reached the peer's NIC (mmt_conn_sends_ok())
 * @writes_out: RDMA write chains posted and not completed yet
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
	const struct mmt_fabric_ops *fab;
	struct kref ref;
	struct list_head node;
	bool accepted;
	spinlock_t lock;		/* state, err, inboxes */
	enum mmt_conn_state state;
	int err;
	bool reached_live;
	wait_queue_head_t wq;
	struct list_head tx_inbox;
	struct list_head rx_inbox;
	u32 inbox_len;
	atomic_t msgs_out;
	atomic_t msgs_failed;
	atomic_t writes_out;
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
	struct mutex key_mutex;		/* MMT_IOC_CONN_SET_KEY */
	bool has_key;
	u8 chan_root[MMT_CHAN_ROOT_BYTES];
	struct mmt_mig mig_tx;
	struct mmt_mig mig_rx;
	struct mmt_mig *mig_last;
};

/*
 * An I/O worker's tools for the full check of one closure of an eager
 * receive (mmt_conn_rx.c, "eager receive on the I/O workers"): engine
 * scratch and contexts of the keyings met, made from the receive's own
 * copy of the keying root, so that no context or scratch the PMO's lock
 * guards is used without it (the closure's data and MACs are read in
 * place: untrusted memory, which an invalidation may zero meanwhile; the
 * commit then refuses the closure); for a secure-channel receive, the worker's own AES-GCM
 * context of the transfer's key and a private copy of one message.  One
 * closure at a time.
 */
struct mmt_rx_verifier {
	u8 *scratch;		/* mmt_scratch_bytes() of the geometry */
	struct mmt_crypto *crypto[MMT_PMO_KEYINGS + 1];	/* by keying salt */
	u32 next;		/* the entry a new context replaces when full */
	struct mmt_chan_crypto *chan;	/* secure: the transfer's key */
	u8 *priv;		/* secure: region_bytes, the opened message */
};

/*
 * A receiver's window slot: one closure granted at a time.  In an eager
 * receive on the I/O workers (@rx->par) it also holds its closure from
 * its DONE to its ACK (@pending): the verdict, known at once or once the
 * worker is done (@checked).
 */
struct mmt_rx_slot {
	bool granted;		/* its GRANT was sent (or tried) */
	u32 index;
	u8 *bounce;		/* secure: one closure's data + tag */
	u8 *head;		/* MMT: header + sealed root slot */
	struct mmt_fab_sink *sink;	/* the fabric's: its registration */
	bool pending;		/* par: DONE handled, no ACK sent yet */
	bool began;		/* par: @pc holds a begun closure */
	bool queued;		/* par: its full check was started */
	bool opened;		/* par, secure: opened on a worker, uncommitted */
	struct mmt_rx *rx;	/* par, secure: the receive, for the worker */
	int verdict;		/* par: known verdict, or the worker's */
	struct mmt_closure_eager pc;	/* par: mmt_conn_rx_begin()'s */
	struct mmt_crypto *vc;	/* par: the worker's context for @pc */
	struct mmt_rx_verifier *v;	/* par: the worker's tools */
	struct work_struct work;	/* par: the full check */
	struct completion checked;	/* par: the full check is done */
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
	bool par;		/* eager: full checks on the I/O workers */
	bool par_fail;		/* par: a pending closure was refused */
	u32 par_max;		/* par: closures pending at most, >= 2 */
	u32 acked;		/* par: the next closure to get its ACK */
	bool par_end;		/* par: END taken: no GRANT any more */
	struct mmt_rx_verifier *vers;	/* par: @par_max of them */
};

/* What an ioctl on a connection fd that names a PMO holds: mmt_conn_op_begin(). */
struct mmt_conn_op {
	struct fd f;
	struct mmt_pmo *pmo;
	struct mutex *mutex;	/* the call's: tx_, rx_, ka_ or res_mutex */
};

/* mmt_conn_core.c; mmt_conn_mutex protects mmt_conns, every connection */
extern struct mutex mmt_conn_mutex;
extern struct list_head mmt_conns;
void mmt_conn_unlist(struct mmt_conn *conn);
int mmt_conn_set_state(struct mmt_conn *conn, enum mmt_conn_state to,
		       int err);
bool mmt_conn_fail(struct mmt_conn *conn, int err);
enum mmt_conn_state mmt_conn_state(struct mmt_conn *conn, int *err);
bool mmt_conn_reached_live(struct mmt_conn *conn);
void mmt_conn_fault_hold(struct mmt_conn *conn, bool agree);
int mmt_conn_fault_hs(struct mmt_hs *hs, u8 **peer, u32 *peer_len,
		      u16 *hello_node);
void mmt_conn_free(struct kref *ref);
const u8 *mmt_conn_root(struct mmt_conn *conn);
void mmt_conn_put(struct mmt_conn *conn);
void mmt_conn_queue(struct mmt_conn *conn, struct work_struct *work);
int mmt_conn_op_begin(int pmo_fd, struct mutex *mutex,
		      struct mmt_conn_op *op);
int mmt_conn_op_live(struct mmt_conn *conn);
void mmt_conn_op_end(struct mmt_conn_op *op);
unsigned long mmt_timeout(u32 ms);
bool mmt_conn_sq_idle(struct mmt_conn *conn);
int mmt_tx_send_simple(struct mmt_conn *conn, u8 type, u32 gen,
		       u32 index, int err);
struct mmt_inbox_item *mmt_inbox_pop(struct mmt_conn *conn,
				     struct list_head *box);
bool mmt_inbox_ready(struct mmt_conn *conn, struct list_head *box);
struct mmt_inbox_item *mmt_inbox_wait(struct mmt_conn *conn,
				      struct list_head *box,
				      unsigned long timeout);
void mmt_conn_flush_msgs(struct mmt_conn *conn, unsigned long timeout);
void mmt_conn_stop_works(struct mmt_conn *conn);
int mmt_conn_received(struct mmt_conn *conn, const void *buf, u32 len);
int mmt_conn_notice(struct mmt_conn *conn, u32 notice);

/* mmt_conn_hs.c */
u8 mmt_hello_fill(struct mmt_wire_hello_att *a, u64 conn_rand,
		  u64 accept_rand, bool attested, int err);
int mmt_hello_check(const void *data, u8 len, u16 *node,
		    u64 *conn_rand, u64 *accept_rand, bool *attested);
int mmt_conn_hs_next(struct mmt_conn *conn, unsigned long deadline,
		     struct mmt_inbox_item **out);
int mmt_conn_sends_ok(struct mmt_conn *conn, unsigned long deadline,
		      int failed0);
/*
 * Seconds by which two nodes' clocks may differ when both close an
 * attested connection at its expiry: a peer's close that early is still
 * the expiry (mmt_conn_expired()).  Guests under emulation were seen
 * more than a second apart.
 */
#define MMT_CONN_CLOCK_SLACK	5
bool mmt_conn_expired(struct mmt_conn *conn, u64 slack);
void mmt_conn_expire(struct work_struct *work);
void mmt_conn_cred_rx(struct work_struct *work);
void mmt_conn_cred_tx(struct work_struct *work);
int mmt_conn_handshake(struct mmt_conn *conn, u32 timeout_ms);

/* mmt_conn_tx.c */
int mmt_conn_do_send(struct mmt_conn *conn, struct mmt_pmo *pmo,
		     struct mmt_xfer *x);

/* mmt_conn_rx.c */
void mmt_rx_free(struct mmt_rx *rx);
int mmt_rx_alloc(struct mmt_rx *rx);
void mmt_rx_par_free(struct mmt_rx *rx);
int mmt_rx_grant(struct mmt_rx *rx, struct mmt_rx_slot *s, u32 index);
int mmt_rx_invalidate(struct mmt_rx *rx, struct mmt_rx_slot *s);
int mmt_rx_send_ack(struct mmt_rx *rx, u32 index, u64 root_counter,
		    int *verdict);
int mmt_conn_do_recv_prepared(struct mmt_conn *conn,
			      struct mmt_pmo *pmo, struct mmt_xfer *x,
			      bool plain);
int mmt_conn_do_recv(struct mmt_conn *conn, struct mmt_pmo *pmo,
		     struct mmt_xfer *x);

/* mmt_conn_mig.c */
int mmt_conn_migrate(struct mmt_conn *conn, void __user *uarg,
		     bool send);
int mmt_conn_migrate_info(struct mmt_conn *conn, void __user *uarg);
void mmt_conn_mig_query(struct work_struct *work);
int mmt_conn_migrate_resolve(struct mmt_conn *conn, void __user *uarg);
int mmt_conn_migrate_req(struct mmt_conn *conn, unsigned long arg,
			 unsigned int bit);

/* mmt_connfd.c */
void mmt_conn_setup(struct mmt_conn *conn, const struct mmt_fabric_ops *fab);
extern const struct file_operations mmt_conn_fops;

#endif /* MMT_PROTO_H */
