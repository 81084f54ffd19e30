// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_loopback.c - the loopback transport: delegation between two PMOs of
 * one node, through the same code path remote delegation uses
 *
 * "Delivering" a closure copies nothing more than the closure buffer the
 * sender built: the receiver checks it exactly as it would check bytes an
 * RDMA write left in its receive buffer.
 */
#include <linux/atomic.h>
#include <linux/file.h>
#include <linux/random.h>

#include "mmt_internal.h"
#include "mmt_transport.h"
#include "mmt.h"

/* Connection ids; the first is random so ids differ across module loads. */
static atomic64_t mmt_loopback_conn_id;

static int mmt_loopback_deliver(struct mmt_transport *t, u32 index,
				const u8 *buf, size_t len)
{
	return mmt_pmo_receive(t->priv, index, buf, len, t->eager);
}

static const struct mmt_transport_ops mmt_loopback_ops = {
	.name = "loopback",
	.deliver = mmt_loopback_deliver,
};

/*
 * A new connection to @dst for one transfer: fresh id, generation 1 (the
 * connection carries no other transfer), a fresh receive nonce; the
 * reorder rule starts over.  @dst is this receive's until
 * mmt_loopback_disconnect() (-EBUSY if another receive holds it).
 *
 * The node id is read once: the sender addresses its closures to it and
 * the receiver expects it.  Read twice, an MMT_IOC_SET_NODE_ID between
 * the reads made every closure of the delegation -EXDEV ("another
 * receiver"), an errno MMT_IOC_PMO_DELEGATE_LOCAL does not have
 * (mmt-fuzz --cases found it).
 */
static int mmt_loopback_connect(struct mmt_transport *t, struct mmt_pmo *dst)
{
	u16 node = mmt_node_id();
	int err = 0;

	t->ops = &mmt_loopback_ops;
	t->priv = dst;
	t->peer_node = node;
	t->conn_id = atomic64_inc_return(&mmt_loopback_conn_id);
	t->gen = 1;
	get_random_bytes(t->rx_nonce, sizeof(t->rx_nonce));

	mutex_lock(&dst->lock);
	if (dst->receiving) {
		err = -EBUSY;
	} else {
		dst->receiving = true;
		mmt_pmo_rx_start(dst, t->conn_id, node);	/* rx_lost too */
		dst->rx.gen = t->gen;
		memcpy(dst->rx.rx_nonce, t->rx_nonce, sizeof(t->rx_nonce));
	}
	mutex_unlock(&dst->lock);
	return err;
}

static void mmt_loopback_disconnect(struct mmt_pmo *dst)
{
	mutex_lock(&dst->lock);
	dst->receiving = false;
	mutex_unlock(&dst->lock);
}

/**
 * mmt_delegate_loopback() - delegate every closure of @src to @dst over a
 * new loopback connection
 * @src: sending PMO, every MMT VALID
 * @dst: receiving PMO of the same geometry and size, every MMT WAITING
 * @copy: copy mode (default transfer)
 * @eager: the receiver verifies whole closures on receipt
 * @sent: (out) closures delivered and accepted
 *
 * Context: process; takes each PMO's lock in turn, never both; may sleep.
 * Return: 0; -EBUSY if another receive is filling @dst; or
 * mmt_delegate()'s errors.
 */
int mmt_delegate_loopback(struct mmt_pmo *src, struct mmt_pmo *dst,
			  bool copy, bool eager, u64 *sent)
{
	struct mmt_transport t = {};
	int err;

	*sent = 0;
	err = mmt_loopback_connect(&t, dst);
	if (err)
		return err;
	t.eager = eager;
	err = mmt_delegate(src, &t, copy, sent);
	mmt_loopback_disconnect(dst);
	return err;
}

/**
 * mmt_delegate_local() - MMT_IOC_PMO_DELEGATE_LOCAL
 * @src: the sending PMO
 * @uarg: user pointer to struct mmt_delegate_local
 *
 * Context: process; may sleep.
 * Return: 0; the errors listed in uapi/mmt.h.
 */
int mmt_delegate_local(struct mmt_pmo *src, void __user *uarg)
{
	struct mmt_delegate_local d;
	struct mmt_pmo *dst;
	struct fd f;
	u32 usize;
	int err;

	err = mmt_copy_in(&d, sizeof(d), uarg, MMT_DELEGATE_LOCAL_SIZE_VER0,
			  &usize);
	if (err)
		return err;
	if ((d.flags & ~(MMT_DELEGATE_COPY | MMT_DELEGATE_EAGER)) ||
	    d.closures || d.reserved[0] || d.reserved[1])
		return -EINVAL;
	f = fdget(d.dst_fd);
	if (!f.file)
		return -EBADF;
	dst = mmt_pmo_from_file(f.file);
	if (!dst) {
		err = -ENOTTY;
		goto out;
	}
	if (dst == src) {
		err = -EINVAL;
		goto out;
	}
	if (dst->bytes != src->bytes ||
	    memcmp(&dst->params, &src->params, sizeof(src->params))) {
		err = -EMEDIUMTYPE;
		goto out;
	}

	err = mmt_delegate_loopback(src, dst, d.flags & MMT_DELEGATE_COPY,
				    d.flags & MMT_DELEGATE_EAGER, &d.closures);
	d.size = sizeof(d);
	if (mmt_copy_out(uarg, &d, sizeof(d), usize) && !err)
		err = -EFAULT;
out:
	fdput(f);
	return err;
}

/**
 * mmt_loopback_init() - seed the connection ids
 *
 * Context: module init.
 */
void mmt_loopback_init(void)
{
	atomic64_set(&mmt_loopback_conn_id, get_random_u32());
}
