// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_connfd.c - the connection object as its owner sees it: its set-up
 * (mmt_conn_setup(), for every fabric) and its fd: the ioctls (MMT_IOC_SEND,
 * MMT_IOC_RECV, MMT_IOC_CONN_SET_KEY, MMT_IOC_CONN_KEY_AGREE, the
 * MMT_IOC_MIGRATE_* ones) and its file operations
 */
#include <crypto/algapi.h>
#include <linux/fs.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/random.h>
#include <linux/slab.h>

#include "mmt_proto.h"

/* ------------------------------------------------------------ conn fd */

/**
 * mmt_conn_setup() - set up a new connection object
 * @conn: zeroed memory for it, in the fabric's own struct (the fabric's
 *	@release frees it once the last reference is gone)
 * @fab: the fabric it runs over (driver/mmt_fabric.h)
 *
 * Initializes the locks, inboxes and works, and adds @conn to mmt_conns
 * in state NEW with one reference, its owner's.
 *
 * Context: process; takes mmt_conn_mutex.
 */
void mmt_conn_setup(struct mmt_conn *conn, const struct mmt_fabric_ops *fab)
{
	kref_init(&conn->ref);
	INIT_LIST_HEAD(&conn->node);
	spin_lock_init(&conn->lock);
	init_waitqueue_head(&conn->wq);
	conn->fab = fab;
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
	err = conn->fab->post_msg(conn, w);
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
	bool initiator = !conn->accepted;
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
	struct mmt_conn *conn = file->private_data;

	conn->fab->destroy(conn);
	return 0;
}

const struct file_operations mmt_conn_fops = {
	.owner = THIS_MODULE,
	.release = mmt_conn_release,
	.unlocked_ioctl = mmt_conn_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.poll = mmt_conn_poll,
	.llseek = noop_llseek,
};
