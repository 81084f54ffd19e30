/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mmt_transport.h - how the closures of a delegation or a live migration
 * reach their receiver, one closure and its verdict at a time
 *
 * Local delegation (MMT_IOC_PMO_DELEGATE_LOCAL: mmt_delegate() with the
 * deliver operation of driver/mmt_loopback.c) hands each closure to the
 * receiving PMO's check and takes its verdict at once.  Live migration's
 * rounds and handover (driver/mmt_migrate.c) are written once against
 * struct mmt_mig_xport_ops below, which a connection (driver/mmt_conn_mig.c,
 * over any fabric) and the local migration (driver/mmt_loopback.c)
 * implement.  A connection's transfers (MMT_IOC_SEND, MMT_IOC_RECV) do not
 * use these: their messages, grants and writes go through the fabric
 * operations of driver/mmt_fabric.h.
 */
#ifndef MMT_TRANSPORT_H
#define MMT_TRANSPORT_H

#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>

#include "mmt.h"

struct mmt_pmo;
struct mmt_transport;

/**
 * struct mmt_transport_ops - operations of a transport
 * @name: short name for logs ("loopback")
 * @deliver: put closure @index (@len bytes at @buf, encoded by
 *	mmt_closure_build()) into the receiver's buffer for that MMT, have
 *	the receiver check it, and return its verdict: 0 accepted (the
 *	receiver's MMT is VALID), the receiver's -errno (rejected; the
 *	receiver's MMT is still WAITING), or -ECONNRESET / -ETIMEDOUT when the
 *	outcome is unknown (the ack was lost).  A remote verdict is not
 *	authenticated, so after any error in transfer mode the sender
 *	re-encrypts its MMT under a fresh GUA (mmt_delegate()).  Context:
 *	process; may sleep; called without any PMO lock held.
 */
struct mmt_transport_ops {
	const char *name;
	int (*deliver)(struct mmt_transport *t, u32 index, const u8 *buf,
		       size_t len);
};

/**
 * struct mmt_transport - one connection, one direction
 * @ops: its operations
 * @priv: the transport's own state
 * @conn_id: connection id, bound into every closure header (AEAD data)
 * @gen: transfer generation, bound into every closure header; unique per
 *	transfer on the connection, and the receiver expects exactly it
 * @rx_nonce: the receive's nonce, drawn by the receiver, bound into every
 *	closure header; the receiver expects exactly it
 * @peer_node: the receiver's node id
 * @eager: the receiver verifies whole closures on receipt
 */
struct mmt_transport {
	const struct mmt_transport_ops *ops;
	void *priv;
	u64 conn_id;
	u64 gen;
	u8 rx_nonce[MMT_RX_NONCE_BYTES];
	u16 peer_node;
	bool eager;
};

/* mmt_delegate.c */
int mmt_delegate(struct mmt_pmo *src, struct mmt_transport *t, bool copy,
		 u64 *sent);

/*
 * Live migration (docs/MIGRATION.md), written once in driver/mmt_migrate.c
 * against the operations below: the local migration (mmt_loopback.c) and
 * a connection's (mmt_conn_mig.c) implement them.
 */
struct mmt_mig;
struct mmt_mig_xport;
struct mmt_bind;

/**
 * struct mmt_mig_xport_ops - operations of a migration transport
 * @start: optional: the source's checks passed, tell the destination a
 *	migration comes (the OFFER); return 0 or why not.  Context: process;
 *	may sleep.
 * @send: put closure @index on its way: seal it with mmt_mig_snap() into a
 *	window slot (waiting for a free one, which collects verdicts) and
 *	send it.  Return 0, or the first failure: a verdict of the
 *	destination (rejection), the connection's error, -EINTR, or
 *	mmt_mig_snap()'s error.  Context: process; may sleep.
 * @flush: wait until every closure sent has its verdict; return 0 or the
 *	first failure as for @send.  Context: process; may sleep.
 * @commit: send COMMIT(@digest, @tag) after a successful @flush and wait
 *	for its answer.  Return 0 only for an authenticated acceptance
 *	(mmt_conn_ack_tag() with index MMT_MIG_COMMIT_INDEX); otherwise the
 *	failure, with *@known set only when the destination certainly did
 *	not commit (the COMMIT never left, or an authenticated refusal).
 *	Context: process; may sleep.
 */
struct mmt_mig_xport_ops {
	int (*start)(struct mmt_mig_xport *t);
	int (*send)(struct mmt_mig_xport *t, u32 index);
	int (*flush)(struct mmt_mig_xport *t);
	int (*commit)(struct mmt_mig_xport *t, const u8 *digest,
		      const u8 *tag, bool *known);
};

/**
 * struct mmt_mig_xport - one migration over one connection
 * @ops: its operations
 * @mig: the migration (figures, requests)
 * @conn_id: connection id (every closure header, the COMMIT tag)
 * @gen: the migration's generation on the connection
 * @rx_nonce: the destination's receive nonce
 * @tx_nonce: the source's nonce for this migration (drawn at random by
 *	the source, sent in its OFFER; every ACK and the COMMIT tag cover it)
 * @dir: 0 if the source connected, 1 if it accepted (loopback: 0)
 * @peer_node: the destination's node id
 * @window: closures in flight at most (1 on loopback)
 * @timeout: jiffies the whole handover may take (0: the transport waits
 *	for nothing, loopback)
 * @deadline: set by mmt_migrate_run() when the handover starts (jiffies
 *	+ @timeout): the transport fails every wait past it with -ETIMEDOUT,
 *	whatever arrives meanwhile; 0 before
 */
struct mmt_mig_xport {
	const struct mmt_mig_xport_ops *ops;
	struct mmt_mig *mig;
	u64 conn_id;
	u64 gen;
	u8 rx_nonce[MMT_RX_NONCE_BYTES];
	u8 tx_nonce[MMT_RX_NONCE_BYTES];
	u8 dir;
	u16 peer_node;
	u32 window;
	unsigned long timeout;
	unsigned long deadline;
};

void mmt_mig_xport_bind(const struct mmt_mig_xport *t, struct mmt_bind *b);

/* struct mmt_mig.req bits: asked for by another thread */
#define MMT_MIG_REQ_FINISH	0	/* hand over after the current closure */
#define MMT_MIG_REQ_ABORT	1	/* fail with -ECANCELED */

/**
 * struct mmt_mig - one live migration, either side
 * @lock: protects @info (read by MMT_IOC_MIGRATE_INFO from any thread)
 * @info: the figures, struct mmt_migrate_info of uapi/mmt.h
 * @events: bumped whenever @info changes (poll() reports POLLPRI while
 *	it differs from @events_seen)
 * @events_seen: @events at the last MMT_IOC_MIGRATE_INFO
 * @req: MMT_MIG_REQ_* bits, set by other threads
 * @wq: woken on every @events bump and request
 * @s: source: the engine's bookkeeping (lib/mmt_migrate.c)
 * @pmo: the PMO migrated (source) or migrated into (destination)
 * @t0: ktime_get_ns() at the start
 * @extra: bytes the migration holds now besides the PMO
 * @downtime_limit_ns: source: the limit
 * @running: an ioctl runs the migration (under @lock; connections)
 * @no_record: destination: the receive is a checkpoint's restore, not a
 *	migration: no record of its outcome is kept for
 *	MMT_IOC_MIGRATE_RESOLVE (set before mmt_mig_rx_start())
 */
struct mmt_mig {
	spinlock_t lock;	/* see above */
	struct mmt_migrate_info info;
	u32 events;
	u32 events_seen;
	unsigned long req;
	wait_queue_head_t wq;
	struct mmt_mig_src s;
	struct mmt_pmo *pmo;
	u64 t0;
	size_t extra;
	u64 downtime_limit_ns;
	bool running;
	bool no_record;
};

/**
 * struct mmt_mig_params - what the user asked for (struct mmt_migrate)
 * @downtime_limit_ns: hand over once the expected downtime is this or less
 * @max_rounds: pre-copy rounds at most
 * @eager: destination: verify whole closures on receipt
 */
struct mmt_mig_params {
	u64 downtime_limit_ns;
	u32 max_rounds;
	bool eager;
};

/* mmt_migrate.c */
void mmt_mig_init(struct mmt_mig *mig, bool source);
void mmt_mig_reset(struct mmt_mig *mig, bool source);
void mmt_mig_get_info(struct mmt_mig *mig, struct mmt_migrate_info *out);
void mmt_mig_set_nonce(struct mmt_mig *mig, const u8 *nonce);
void mmt_mig_request(struct mmt_mig *mig, unsigned int bit);
void mmt_mig_extra(struct mmt_mig *mig, ssize_t delta);
int mmt_mig_snap(struct mmt_mig_xport *t, u32 index, u8 *buf, size_t len,
		 u8 *region);
int mmt_migrate_run(struct mmt_pmo *src, struct mmt_mig_xport *t,
		    const struct mmt_mig_params *prm);
int mmt_mig_rx_start(struct mmt_pmo *pmo, struct mmt_mig *mig,
		     const struct mmt_bind *b);
int mmt_mig_rx_closure(struct mmt_pmo *pmo, u32 index, const u8 *buf,
		       size_t len, bool eager);
int mmt_mig_rx_commit(struct mmt_pmo *pmo, const struct mmt_bind *b,
		      const u8 *digest, const u8 *tag);
void mmt_mig_rx_end(struct mmt_pmo *pmo);
void mmt_mig_rx_account(struct mmt_mig *mig, u64 closure_bytes);
void mmt_mig_done(struct mmt_mig *mig, int err);
/* mmt_migrate.c: the outcome of receives, for MMT_IOC_MIGRATE_RESOLVE */
void mmt_mig_record(const u8 *nonce, u32 outcome, const u8 *tag);
void mmt_rx_record(const u8 *nonce, u32 outcome, u32 closures,
		   const u8 *tag);
void mmt_mig_record_end(struct mmt_pmo *pmo);
u32 mmt_mig_statement(const u8 *nonce, u8 *tag);
u32 mmt_rx_statement(const u8 *nonce, u8 *tag, u32 *closures);
int mmt_mig_unknown_nonce(struct mmt_pmo *pmo, u8 *nonce);
int mmt_mig_resolve(struct mmt_pmo *pmo, const u8 *nonce, u32 outcome,
		    const u8 *tag);
int mmt_resolve(struct mmt_pmo *pmo, const u8 *nonce, u32 outcome,
		u32 closures, const u8 *tag);
/* mmt_delegate.c: a transfer of unknown outcome, and its receiver's record */
void mmt_delegate_unknown(struct mmt_pmo *src, u32 first, u32 end,
			  const struct mmt_bind *b);
void mmt_xfer_record_end(const u8 *key_root, const struct mmt_bind *b,
			 u32 closures);
void mmt_mig_info_unstarted(struct mmt_migrate_info *out, bool source,
			    int err);

/* mmt_loopback.c: a migration between two PMOs of this node */
enum mmt_mig_lo_event {
	MMT_MIG_LO_DELIVER,	/* closure built, about to be delivered */
	MMT_MIG_LO_COMMIT,	/* COMMIT about to be delivered */
	MMT_MIG_LO_ACK,		/* the destination answered the COMMIT */
};

/**
 * typedef mmt_mig_lo_hook - a test's view of a loopback migration
 * @priv: the test's context
 * @mig: the migration (phase, round in its info)
 * @ev: where the migration is
 * @index: the closure (MMT_MIG_LO_DELIVER), else 0
 * @buf: the closure (DELIVER; may be changed or replaced in place), the
 *	COMMIT's digest (COMMIT), or the ACK's tag (ACK)
 * @len: bytes at @buf
 *
 * Return: 0 to go on; a -errno to fail there as a dying peer would
 * (DELIVER, COMMIT: not delivered; ACK: the answer is lost).
 */
typedef int (*mmt_mig_lo_hook)(void *priv, struct mmt_mig *mig,
			       enum mmt_mig_lo_event ev, u32 index, u8 *buf,
			       size_t len);

int mmt_migrate_loopback(struct mmt_pmo *src, struct mmt_pmo *dst,
			 const struct mmt_mig_params *prm,
			 struct mmt_mig *mig, struct mmt_mig *dmig,
			 mmt_mig_lo_hook hook, void *priv);

#endif /* MMT_TRANSPORT_H */
