/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mmt_transport.h - how closure bytes reach a receiver
 *
 * Delegation (driver/mmt_delegate.c) is written once against this
 * interface: the loopback transport (driver/mmt_loopback.c) moves closures
 * between two PMOs of one node, so everything but RDMA is testable in KUnit
 * and in one guest; the RDMA transport will implement the same operation
 * with two one-sided writes and a completion notice (DESIGN.md section 5).
 */
#ifndef MMT_TRANSPORT_H
#define MMT_TRANSPORT_H

#include <linux/types.h>

struct mmt_pmo;
struct mmt_transport;

/**
 * struct mmt_transport_ops - operations of a transport
 * @name: short name for logs ("loopback", "rdma")
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

#endif /* MMT_TRANSPORT_H */
