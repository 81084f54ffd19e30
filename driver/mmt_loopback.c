// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_loopback.c - MMT_IOC_PMO_DELEGATE_LOCAL and local live migration:
 * delegation between two PMOs of one node, without a connection
 *
 * Each closure is built and settled by the sender's code a transfer uses
 * (mmt_delegate_build(), mmt_delegate_settle()) and checked by the same
 * closure check (lib/'s mmt_closure_receive()) on a buffer that holds
 * nothing more than the closure the sender built; its verdict comes back
 * at once, so there is no message, grant or window.  The connection
 * protocol between two connections of this node runs over the loopback
 * fabric instead (driver/mmt_fabric_loop.c).
 */
#include <linux/atomic.h>
#include <linux/file.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <crypto/algapi.h>

#include "mmt_conn.h"
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

	if (mutex_lock_killable(&dst->lock))
		return -EINTR;
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
 * Return: 0; -EBUSY if another receive is filling @dst; -EINTR if a fatal
 * signal came while it waited for @dst's lock (nothing changed); or
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
	if (!fd_file(f))
		return -EBADF;
	dst = mmt_pmo_from_file(fd_file(f));
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

/*
 * Live migration between two PMOs of this node (docs/MIGRATION.md):
 * every closure is sealed into one buffer (a window of 1) and delivered
 * to the destination's migration receive at once; a test hook sees each
 * step and can change a closure or fail a step as a dying peer would.
 */
struct mmt_mig_lo {
	struct mmt_mig_xport t;
	struct mmt_pmo *src;
	struct mmt_pmo *dst;
	struct mmt_mig *dmig;
	u8 *buf;
	size_t len;
	bool eager;
	mmt_mig_lo_hook hook;
	void *priv;
};

static int mmt_mig_lo_send(struct mmt_mig_xport *t, u32 index)
{
	struct mmt_mig_lo *lo = container_of(t, struct mmt_mig_lo, t);
	int err;

	err = mmt_mig_snap(t, index, lo->buf, lo->len, NULL);
	if (!err && lo->hook)
		err = lo->hook(lo->priv, t->mig, MMT_MIG_LO_DELIVER, index,
			       lo->buf, lo->len);
	if (err)
		return err;
	err = mmt_mig_rx_closure(lo->dst, index, lo->buf, lo->len, lo->eager);
	if (!err)
		mmt_mig_rx_account(lo->dmig, lo->len);
	return err;
}

static int mmt_mig_lo_flush(struct mmt_mig_xport *t)
{
	return 0;	/* every closure had its verdict in send */
}

/*
 * The COMMIT and its ACK.  A hook failure is a peer gone at that point:
 * the source cannot tell whether the COMMIT arrived (*@known false).
 */
static int mmt_mig_lo_commit(struct mmt_mig_xport *t, const u8 *digest,
			     const u8 *tag, bool *known)
{
	struct mmt_mig_lo *lo = container_of(t, struct mmt_mig_lo, t);
	u8 d[MMT_SHA256_BYTES], ack[MMT_WIRE_TAG_BYTES];
	u8 want[MMT_WIRE_TAG_BYTES];
	struct mmt_bind b;
	int verdict, err;

	*known = false;
	/* one node: the destination sees the same binding as the source */
	mmt_mig_xport_bind(t, &b);
	memcpy(d, digest, sizeof(d));
	if (lo->hook) {
		err = lo->hook(lo->priv, t->mig, MMT_MIG_LO_COMMIT, 0, d,
			       sizeof(d));
		if (err)
			return err;
	}
	verdict = mmt_mig_rx_commit(lo->dst, &b, d, tag);
	mmt_mig_done(lo->dmig, verdict);
	err = mmt_conn_ack_tag(lo->dst, &b, MMT_MIG_COMMIT_INDEX, 0, verdict,
			       ack);
	if (!err && lo->hook)
		err = lo->hook(lo->priv, t->mig, MMT_MIG_LO_ACK, 0, ack,
			       sizeof(ack));
	if (err)
		return err;
	/* the source believes only an answer that authenticates */
	err = mmt_conn_ack_tag(lo->src, &b, MMT_MIG_COMMIT_INDEX, 0, verdict,
			       want);
	if (err)
		return err;
	if (crypto_memneq(ack, want, sizeof(ack))) {
		atomic64_inc(&mmt_stats.ack_forged);
		return -ECONNRESET;
	}
	*known = true;
	return verdict;
}

static const struct mmt_mig_xport_ops mmt_mig_lo_ops = {
	.send = mmt_mig_lo_send,
	.flush = mmt_mig_lo_flush,
	.commit = mmt_mig_lo_commit,
};

/**
 * mmt_migrate_loopback() - migrate @src live into @dst over a new
 * loopback connection
 * @src: the source: keyed, every MMT VALID and writable
 * @dst: the destination: same geometry, size and key, every MMT WAITING
 * @prm: downtime limit, round limit, eager verification at @dst
 * @mig: (out) the source's record and figures (set up here)
 * @dmig: (out) the destination's record and figures (set up here)
 * @hook: a test's hook at every step, or NULL
 * @priv: passed to @hook
 *
 * A new connection id, generation 1 and a fresh receive nonce: the
 * destination starts a migration receive, mmt_migrate_run() runs, and the
 * receive ends (what landed without a commit goes back to WAITING).
 *
 * Context: process; may sleep; takes each PMO's lock in turn, never both.
 * Return: 0 (committed: @src INVALID, @dst VALID); -EMEDIUMTYPE if the
 * PMOs differ in geometry or size; -EINVAL if they are one PMO;
 * mmt_mig_rx_start()'s errors (for @dst); -ENOMEM; mmt_migrate_run()'s
 * errors.
 */
int mmt_migrate_loopback(struct mmt_pmo *src, struct mmt_pmo *dst,
			 const struct mmt_mig_params *prm,
			 struct mmt_mig *mig, struct mmt_mig *dmig,
			 mmt_mig_lo_hook hook, void *priv)
{
	struct mmt_mig_lo lo = {
		.t.ops = &mmt_mig_lo_ops,
		.t.mig = mig,
		.t.gen = 1,
		.t.window = 1,
		.src = src,
		.dst = dst,
		.dmig = dmig,
		.eager = prm->eager,
		.hook = hook,
		.priv = priv,
	};
	struct mmt_bind b;
	int err;

	mmt_mig_init(mig, true);
	mmt_mig_init(dmig, false);
	if (src == dst)
		err = -EINVAL;
	else if (dst->bytes != src->bytes ||
		 memcmp(&dst->params, &src->params, sizeof(src->params)))
		err = -EMEDIUMTYPE;
	else
		err = 0;
	if (err) {
		mmt_mig_done(dmig, err);
		mmt_mig_done(mig, err);
		return err;
	}
	lo.t.peer_node = mmt_node_id();
	lo.t.conn_id = atomic64_inc_return(&mmt_loopback_conn_id);
	get_random_bytes(lo.t.rx_nonce, sizeof(lo.t.rx_nonce));
	get_random_bytes(lo.t.tx_nonce, sizeof(lo.t.tx_nonce));
	/* one node: the destination sees the same binding as the source */
	mmt_mig_xport_bind(&lo.t, &b);
	err = mmt_mig_rx_start(dst, dmig, &b);
	if (err) {
		mmt_mig_done(mig, err);
		return err;
	}
	lo.len = mmt_closure_bytes(&src->params);
	lo.buf = kvmalloc(lo.len, MMT_GFP_USER_SIZED);
	if (!lo.buf) {
		err = -ENOMEM;
		mmt_mig_done(mig, err);
	} else {
		mmt_mig_extra(mig, lo.len);
		err = mmt_migrate_run(src, &lo.t, prm);
		kvfree(lo.buf);
		mmt_mig_extra(mig, -(ssize_t)lo.len);
	}
	mmt_mig_rx_end(dst);
	if (err && dmig->info.phase != MMT_MIG_PHASE_COMMITTED)
		mmt_mig_done(dmig, err);
	return err;
}
