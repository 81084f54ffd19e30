/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mmt_fabric.h - what the connection protocol asks of the fabric below it
 *
 * The protocol of a connection (DESIGN.md section 5, the messages of
 * mmt_conn.h: OFFER, GRANT, the closure's writes and their notice, the
 * verdict, END; the attested handshake's messages; migration's rounds) is
 * written against these operations and nothing else of the fabric: post a
 * message, register a receive area for one grant and invalidate it, write
 * a closure into a grant with a completion notice, shut the traffic down;
 * what arrives the fabric hands to mmt_conn_received() and
 * mmt_conn_notice() (driver/mmt_proto.h).  The RDMA fabric
 * (driver/mmt_fabric_rdma.c: an RC QP's SENDs, RDMA writes with
 * immediate data, fast registration) implements them; connection set-up
 * and teardown (rdma_cm, the QP and CQ, device removal) stay with it.  The
 * loopback fabric (driver/mmt_fabric_loop.c) implements them between two
 * connections of one node, for KUnit.
 *
 * Model: drivers/nvme/host/fabrics.h and struct nvme_ctrl_ops (one
 * protocol, fabrics below it).
 *
 * Ordering the protocol relies on: the notice of a write (RoCE: its
 * immediate data; iWARP, which has none: a SEND of MMT_MSG_NOTICE posted
 * right after the writes on the same QP) reaches the peer after every
 * byte the write put into the grant,
 * and messages and writes posted on one connection arrive in the order
 * they were posted (an RC QP's order).
 */
#ifndef MMT_FABRIC_H
#define MMT_FABRIC_H

#include <linux/types.h>

struct mmt_conn;
struct mmt_wire_msg;
struct mmt_wire_seg;
struct mmt_fab_src;
struct mmt_fab_sink;

/**
 * struct mmt_fabric_ops - a fabric's operations, called by the protocol
 * @name: short name for logs ("rdma")
 * @post_msg: post one protocol message @w (struct mmt_wire_msg of
 *	mmt_conn.h; the fabric sets its magic); the fabric copies it, so @w
 *	may be reused at once.  Return 0 once posted (delivery is not
 *	waited for), -ENOMEM, or -ECONNRESET if the connection cannot post
 *	(shut down, or the post failed: the connection is then DEAD).
 *	Process context; may sleep; no PMO lock held.
 * @src_alloc: a sender's window slot that writes from @head (an
 *	MMT_CONN_HEAD_BYTES header slot, or NULL: no head segment) and, when
 *	no body is mapped with @src_map, from @fixed (@fixed_len bytes, or
 *	NULL), both kmalloc'd or vmalloc'd and kept by the caller until
 *	@src_free.  Return the slot or ERR_PTR(-ENOMEM).  Process context.
 * @src_map: map @len bytes at @body (a PMO's memory, kept unchanged by the
 *	caller until the write completes) as the source of the next write,
 *	in place of @fixed.  Return 0 or -ENOMEM (nothing posted).
 *	Process context.
 * @src_write: write @len bytes (the mapped body, else @fixed, as the CPU
 *	left them) into the grant's @nsegs segments @segs in order, then,
 *	when the slot has a head, the head into @head_seg; the notice
 *	@notice follows them (the peer learns the index and the generation
 *	from it; RDMA: the last write's immediate data on RoCE, a SEND
 *	after the writes on iWARP).  Return 0 once posted; -EPROTO if the
 *	segments do not hold exactly @len bytes, if the slot has nothing to
 *	write from, or if @head_seg and the slot's head are not both given
 *	or both absent (nothing posted); -ENOMEM (nothing posted); or the
 *	post's error (the connection is then DEAD).  On an error the slot
 *	is idle.
 *	Process context; may sleep.
 * @src_wait: wait up to @timeout jiffies for the slot's write to complete
 *	and release its body mapping; on timeout the connection is failed
 *	and shut down, and the wait goes on until the fabric let go of the
 *	buffers.  Return 0 if the write completed, -ECONNRESET if it failed
 *	or was flushed.  An idle slot returns at once.  Process context.
 * @src_idle: after the connection was shut down: wait (without limit)
 *	until the fabric let go of the slot's buffers.  Process context.
 * @src_free: release an idle slot (NULL is allowed).  Process context.
 * @sink_alloc: a receiver's window slot able to take @len bytes and, when
 *	@head is not NULL, an MMT_CONN_HEAD_BYTES head at @head (kept by the
 *	caller until @sink_free).  Return the slot, ERR_PTR(-E2BIG) if
 *	@len needs more segments than a GRANT carries (MMT_WIRE_MAX_SEGS), or
 *	ERR_PTR(-ENOMEM) (or the fabric's error).  Process context.
 * @sink_grant: make @len bytes at @area (and the head) writable by the
 *	peer, under keys never advertised before on this connection, fill
 *	@w's segments (@w->segs, @w->nsegs, @w->head_seg: the head last) and
 *	post @w, which the caller filled otherwise, once the area is
 *	writable.  Return 0, -E2BIG, -ENOMEM, -EINVAL (the area cannot be
 *	registered), -ETIMEDOUT (RDMA: the send queue did not go idle for
 *	the registration) or @post_msg's error.  Process context; may sleep.
 * @sink_invalidate: revoke the peer's access to the slot's area and head
 *	and wait until it is revoked: after this no write of the peer lands
 *	there, and the CPU sees every byte that landed.  Return 0, -ENOMEM,
 *	-ECONNRESET, or the post's error (the connection is then DEAD).  Process context; may sleep.
 * @sink_idle: as @src_idle, for a receiver's slot.
 * @sink_free: release a slot (NULL is allowed).  Process context.
 * @shutdown: stop the connection's traffic for good (the caller failed
 *	it first, mmt_conn_fail()): nothing is posted after, and once it
 *	returns every message and write posted has completed or been
 *	flushed, and every arrival has been handed to mmt_conn_received()
 *	or mmt_conn_notice() (RDMA: a connection that never became LIVE
 *	had nothing posted that needs a drain).  Idempotent.  Process context; may sleep.
 * @destroy: the owner is done with the connection (its fd is released):
 *	stop its works (mmt_conn_stop_works()), shut it down, release the
 *	fabric's resources and drop the owner's reference.  Process
 *	context; may sleep.
 * @release: free @conn, which the fabric allocated inside its own
 *	struct (mmt_conn_setup()), with whatever the fabric keeps there: the
 *	last reference is gone and the protocol has freed its part.  Any
 *	context a reference is dropped in; does not sleep.
 *
 * The fabric counts what it posted and has not completed in the
 * connection's @msgs_out and @writes_out, and the messages that failed in
 * @msgs_failed (struct mmt_conn), waking conn->wq when they change; a
 * fabric that completes every post before returning leaves them at 0.
 */
struct mmt_fabric_ops {
	const char *name;
	int (*post_msg)(struct mmt_conn *conn, const struct mmt_wire_msg *w);
	struct mmt_fab_src *(*src_alloc)(struct mmt_conn *conn, void *head,
					 void *fixed, size_t fixed_len);
	int (*src_map)(struct mmt_fab_src *s, void *body, size_t len);
	int (*src_write)(struct mmt_fab_src *s, size_t len,
			 const struct mmt_wire_seg *segs, u32 nsegs,
			 const struct mmt_wire_seg *head_seg, u32 notice);
	int (*src_wait)(struct mmt_fab_src *s, unsigned long timeout);
	void (*src_idle)(struct mmt_fab_src *s);
	void (*src_free)(struct mmt_fab_src *s);
	struct mmt_fab_sink *(*sink_alloc)(struct mmt_conn *conn, size_t len,
					   void *head);
	int (*sink_grant)(struct mmt_fab_sink *s, void *area, size_t len,
			  struct mmt_wire_msg *w);
	int (*sink_invalidate)(struct mmt_fab_sink *s);
	void (*sink_idle)(struct mmt_fab_sink *s);
	void (*sink_free)(struct mmt_fab_sink *s);
	void (*shutdown)(struct mmt_conn *conn);
	void (*destroy)(struct mmt_conn *conn);
	void (*release)(struct mmt_conn *conn);
};

/* driver/mmt_fabric_rdma.c */
extern const struct mmt_fabric_ops mmt_rdma_fabric;

/* driver/mmt_fabric_loop.c */
int mmt_loop_pair(struct mmt_conn **a, struct mmt_conn **b);
typedef void (*mmt_loop_wire_hook)(void *priv, u32 notice, u8 *dst,
				   u32 len);
void mmt_loop_set_hook(struct mmt_conn *conn, mmt_loop_wire_hook hook,
		       void *priv);

#endif /* MMT_FABRIC_H */
