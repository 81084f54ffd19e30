// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_ckpt.c - checkpoint and restore of a PMO (CRIU; docs/CRIU.md)
 *
 * A checkpoint is a live migration (driver/mmt_migrate.c,
 * docs/MIGRATION.md) whose transport writes each sealed closure into the
 * caller's buffer (the image) and whose destination is a record the
 * module keeps: the COMMIT's digest and tag and the PMO's keying (keying
 * root, channel root, keying salt; never the MMT key).  The record's
 * COMMIT is "accepted" once it is on the module's list, so the source
 * PMO goes INVALID as after any committed migration: the image is the one
 * copy.  A restore is the destination side: a new PMO under the record's
 * keying, every closure of the image received into it as a migration
 * receive (mmt_mig_rx_*(): rules 4c, 6m, 7m, eager verification), the
 * record's COMMIT checked against what landed, then VALID.  Only a
 * successful restore consumes the record, so an image is good once.
 *
 * With MMT_CKPT_PENDING the COMMIT's answer is withheld: the record is
 * made, but the source ends as a migration whose outcome is unknown
 * (docs/MIGRATION.md section 7: VALID, readable, not writable, every MMT
 * due for a fresh GUA) until its owner says how the dump ended:
 * MMT_IOC_PMO_INVALIDATE (it succeeded: the image is the one copy) or
 * MMT_IOC_PMO_MIG_RESOLVE, which drops the record (mmt_ckpt_cancel())
 * before the PMO is writable again, and refuses if a restore consumed it.
 *
 * A migration between nodes (MMT_IOC_MIGRATE_RECV with MMT_MIGRATE_PARK,
 * docs/CRIU.md section 6) leaves a *parked* record at the destination: it
 * holds a reference to the committed PMO's file instead of a COMMIT to
 * check, and is named by the receive's nonce.  MMT_IOC_RESTORE with no
 * buffer gives that file a new fd, once, when no other fd refers to it.
 *
 * Each record remembers its maker: the euid and user namespace of the
 * caller that checkpointed or parked.  The handle is no secret (it is in
 * every closure header and every GRANT), so a restore by anyone else
 * (another euid, or the same uid in another user namespace) needs
 * CAP_SYS_ADMIN, not only CAP_CHECKPOINT_RESTORE: EPERM otherwise, and
 * the record stays for its maker.
 *
 * Locking: mmt_ckpt_lock (a mutex) around the list and each record's
 * @busy flag.  It nests inside a PMO's lock (MMT_IOC_PMO_MIG_RESOLVE);
 * no PMO lock is taken while it is held.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/file.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/user_namespace.h>

#include "mmt_internal.h"
#include "mmt_transport.h"
#include "mmt.h"

/**
 * struct mmt_ckpt - a checkpoint waiting for its one restore
 * @node: on mmt_ckpts
 * @busy: a restore of it runs (under mmt_ckpt_lock)
 * @bind: what its COMMIT tag is bound to: a random connection id,
 *	generation 1, this node as sender and receiver, direction 0, the
 *	receive nonce (= the handle) and the source's nonce
 * @digest: the COMMIT digest (mmt_mig_src_digest(): GUA and root counter
 *	of the last closure of every index sealed into the image)
 * @tag: the COMMIT tag (mmt_mig_commit_tag())
 * @params: the PMO's geometry
 * @closures: its closures
 * @key_len: its MMT key's length
 * @key_root: its keying root (mmt_key_root() of the key)
 * @chan_root: its channel root
 * @ksalt: the keying salt of its own keying
 * @tx_root_counter: its last root counter sealed as a sender
 * @tx_last_gua: the GUA of its last closure sent
 * @parked: a parked record (MMT_MIGRATE_PARK): a reference to the
 *	committed PMO's file; only @node and @bind.rx_nonce (the handle) are
 *	set then.  NULL for a checkpoint's record
 * @owner: the euid of the caller that made it (checkpoint or park)
 * @owner_ns: that caller's user namespace (a reference is held)
 */
struct mmt_ckpt {
	struct list_head node;
	bool busy;
	struct file *parked;
	kuid_t owner;
	struct user_namespace *owner_ns;
	struct mmt_bind bind;
	u8 digest[MMT_SHA256_BYTES];
	u8 tag[MMT_MIG_TAG_BYTES];
	struct mmt_params params;
	u32 closures;
	u32 key_len;
	u8 key_root[MMT_KEY_ROOT_BYTES];
	u8 chan_root[MMT_CHAN_ROOT_BYTES];
	u8 ksalt[MMT_KSALT_BYTES];
	u64 tx_root_counter;
	u64 tx_last_gua;
};

static LIST_HEAD(mmt_ckpts);
static DEFINE_MUTEX(mmt_ckpt_lock);	/* mmt_ckpts, each record's @busy */
/* records on mmt_ckpts: mmt_stats.ckpt_records (debugfs mmt/stats) */

/* The caller checkpoints or restores for others: CRIU, as root. */
static bool mmt_ckpt_capable(void)
{
	return capable(CAP_CHECKPOINT_RESTORE) || capable(CAP_SYS_ADMIN);
}

/* The caller makes @c: it is @c's owner (mmt_ckpt_may_restore()). */
static void mmt_ckpt_set_owner(struct mmt_ckpt *c)
{
	c->owner = current_euid();
	c->owner_ns = get_user_ns(current_user_ns());
}

/*
 * May the caller restore @c?  Its owner may; anyone else (another euid,
 * or the same uid in another user namespace) only with CAP_SYS_ADMIN:
 * CAP_CHECKPOINT_RESTORE and the handle, which is no secret, are not
 * enough to take another user's PMO.  The caller holds mmt_ckpt_lock
 * (the owner is set before the record is on the list and never changes).
 */
static bool mmt_ckpt_may_restore(const struct mmt_ckpt *c)
{
	lockdep_assert_held(&mmt_ckpt_lock);
	if (uid_eq(c->owner, current_euid()) &&
	    c->owner_ns == current_user_ns())
		return true;
	return capable(CAP_SYS_ADMIN);
}

static void mmt_ckpt_free(struct mmt_ckpt *c)
{
	if (c->owner_ns)
		put_user_ns(c->owner_ns);
	if (c->parked)
		fput(c->parked);	/* its PMO goes with its last file */
	kfree_sensitive(c);	/* the keying roots */
}

/* The record under @handle, or NULL.  Caller holds mmt_ckpt_lock. */
static struct mmt_ckpt *mmt_ckpt_find(const u8 *handle)
{
	struct mmt_ckpt *c;

	lockdep_assert_held(&mmt_ckpt_lock);
	list_for_each_entry(c, &mmt_ckpts, node)
		if (!memcmp(c->bind.rx_nonce, handle, MMT_CKPT_HANDLE_BYTES))
			return c;
	return NULL;
}

/**
 * struct mmt_ckpt_xport - the image transport of one checkpoint
 * @t: the migration transport (conn_id, gen, nonces, peer = this node)
 * @ubuf: the caller's buffer: closure i at i x @len
 * @kbuf: one sealed closure, @len bytes
 * @len: mmt_closure_bytes() of the PMO
 * @rec: the record, filled in by the COMMIT
 * @pending: MMT_CKPT_PENDING: the source ends read-only, not INVALID
 */
struct mmt_ckpt_xport {
	struct mmt_mig_xport t;
	u8 __user *ubuf;
	u8 *kbuf;
	size_t len;
	struct mmt_ckpt *rec;
	bool pending;
};

/*
 * Seal closure @index and write it to its place in the image: sealed
 * under the PMO's lock, copied out after it, in steps (a closure may be
 * large); a fatal signal fails the checkpoint with -EINTR, the PMO
 * intact.
 */
static int mmt_ckpt_send(struct mmt_mig_xport *t, u32 index)
{
	struct mmt_ckpt_xport *x = container_of(t, struct mmt_ckpt_xport, t);
	int err;

	err = mmt_mig_snap(t, index, x->kbuf, x->len, NULL);
	if (!err)
		err = mmt_copy_to_user_steps(x->ubuf + (size_t)index * x->len,
					     x->kbuf, x->len);
	return err;
}

static int mmt_ckpt_flush(struct mmt_mig_xport *t)
{
	return 0;	/* every closure is in the image when send returns */
}

/*
 * The COMMIT: the record takes the digest, the tag and the PMO's keying
 * and goes on the list; from then on a restore may consume it, so only
 * now may the source give the PMO up.  Any failure here is known: the
 * record is not on the list, the image cannot be restored.  Pending
 * (MMT_CKPT_PENDING): the answer is withheld, -EINPROGRESS with the
 * outcome unknown, so mmt_migrate_run() leaves the source read-only; the
 * PMO learns its record's handle first, under its lock, so that no
 * resolve can miss the record.
 */
static int mmt_ckpt_commit(struct mmt_mig_xport *t, const u8 *digest,
			   const u8 *tag, bool *known)
{
	struct mmt_ckpt_xport *x = container_of(t, struct mmt_ckpt_xport, t);
	struct mmt_pmo *src = t->mig->pmo;
	struct mmt_ckpt *c = x->rec;
	int err = 0;

	*known = true;
	mmt_mig_xport_bind(t, &c->bind);
	memcpy(c->digest, digest, sizeof(c->digest));
	memcpy(c->tag, tag, sizeof(c->tag));
	mutex_lock(&src->lock);
	c->params = src->params;
	c->closures = src->closures;
	c->key_len = src->key_len;
	memcpy(c->key_root, src->key_root, sizeof(c->key_root));
	memcpy(c->chan_root, src->chan_root, sizeof(c->chan_root));
	memcpy(c->ksalt, mmt_crypto_ksalt(src->crypto), sizeof(c->ksalt));
	c->tx_root_counter = src->tx_root_counter;
	c->tx_last_gua = src->tx_last_gua;
	if (x->pending) {
		memcpy(src->ckpt_handle, c->bind.rx_nonce,
		       sizeof(src->ckpt_handle));
		src->ckpt_pending = true;
	}
	mutex_unlock(&src->lock);

	mutex_lock(&mmt_ckpt_lock);
	if (atomic64_read(&mmt_stats.ckpt_records) >= MMT_CKPT_MAX) {
		err = -ENOSPC;
	} else {
		list_add_tail(&c->node, &mmt_ckpts);
		atomic64_inc(&mmt_stats.ckpt_records);
		x->rec = NULL;	/* the list's now */
	}
	mutex_unlock(&mmt_ckpt_lock);
	if (err && x->pending) {
		mutex_lock(&src->lock);
		src->ckpt_pending = false;
		mutex_unlock(&src->lock);
	} else if (x->pending) {
		*known = false;
		err = -EINPROGRESS;	/* the source waits for its owner */
	}
	return err;
}

static const struct mmt_mig_xport_ops mmt_ckpt_ops = {
	.send = mmt_ckpt_send,
	.flush = mmt_ckpt_flush,
	.commit = mmt_ckpt_commit,
};

/**
 * mmt_ckpt_checkpoint() - MMT_IOC_PMO_CHECKPOINT: hand a PMO over to an
 * image and a record of this module
 * @pmo: the PMO: keyed, every MMT VALID and writable
 * @uarg: user pointer to struct mmt_checkpoint
 *
 * mmt_migrate_run() over the image transport, with the default downtime
 * and round limits (a frozen owner converges after round 1).  On success
 * every MMT is INVALID (with MMT_CKPT_PENDING: VALID, read-only, until
 * the owner invalidates or resolves the PMO) and the record waits for
 * MMT_IOC_RESTORE; on any error the PMO is as before (the COMMIT cannot
 * be lost: it is a list insertion) and no record exists.
 *
 * Context: process; sleeps; takes mmt_ckpt_lock, the PMO's lock around
 * each step.
 * Return: 0; the errors listed in uapi/mmt.h.
 */
int mmt_ckpt_checkpoint(struct mmt_pmo *pmo, void __user *uarg)
{
	struct mmt_mig_params prm = {
		.downtime_limit_ns = MMT_MIG_DOWNTIME_NS,
		.max_rounds = MMT_MIG_MAX_ROUNDS,
	};
	struct mmt_ckpt_xport x = { };
	struct mmt_checkpoint a;
	struct mmt_mig *mig = NULL;
	u64 need;
	u32 usize;
	int err;

	if (!mmt_ckpt_capable())
		return -EPERM;
	err = mmt_copy_in(&a, sizeof(a), uarg, MMT_CHECKPOINT_SIZE_VER0,
			  &usize);
	if (err)
		return err;
	if ((a.flags & ~MMT_CKPT_PENDING) || a.reserved0 || a.reserved[0] ||
	    a.reserved[1] ||
	    memchr_inv(a.handle, 0, sizeof(a.handle)) || a.closures ||
	    a.closure_len)
		return -EINVAL;
	x.len = mmt_closure_bytes(&pmo->params);
	need = (u64)pmo->closures * x.len;
	if (a.buf_len != (a.buf ? need : 0))
		return -EINVAL;
	a.size = sizeof(a);
	a.closures = pmo->closures;
	a.closure_len = x.len;
	if (!a.buf)	/* sizes only */
		return mmt_copy_out(uarg, &a, sizeof(a), usize);

	x.ubuf = u64_to_user_ptr(a.buf);
	/* charged to the caller's memory cgroup, the record for its life */
	x.kbuf = kvmalloc(x.len, MMT_GFP_USER_SIZED);
	x.rec = kzalloc(sizeof(*x.rec), GFP_KERNEL_ACCOUNT);
	mig = kzalloc(sizeof(*mig), GFP_KERNEL_ACCOUNT);
	if (!x.kbuf || !x.rec || !mig) {
		err = -ENOMEM;
		goto out;
	}
	mmt_ckpt_set_owner(x.rec);
	mmt_mig_init(mig, true);
	x.t.ops = &mmt_ckpt_ops;
	x.t.mig = mig;
	x.t.conn_id = get_random_u64();
	x.t.gen = 1;
	/* the nonces are all that keep one checkpoint's closures from
	 * another's: wait for the RNG to be seeded (boot only)
	 */
	err = get_random_bytes_wait(x.t.rx_nonce, sizeof(x.t.rx_nonce));
	if (!err)
		err = get_random_bytes_wait(x.t.tx_nonce,
					    sizeof(x.t.tx_nonce));
	if (err)
		goto out;
	x.t.peer_node = mmt_node_id();
	x.t.window = 1;
	x.pending = a.flags & MMT_CKPT_PENDING;
	memcpy(a.handle, x.t.rx_nonce, sizeof(a.handle));
	/*
	 * The answer first: once the PMO is handed over nothing may fail.
	 * On a later error the handle names no record (restores of it fail
	 * with ESTALE).
	 */
	err = mmt_copy_out(uarg, &a, sizeof(a), usize);
	if (err)
		goto out;

	err = mmt_migrate_run(pmo, &x.t, &prm);
	if (err == -EINPROGRESS && x.pending && !x.rec)
		err = 0;	/* the record is made, the source read-only */
out:
	if (x.rec)
		mmt_ckpt_free(x.rec);
	kfree(mig);
	kvfree(x.kbuf);
	return err;
}

/*
 * Receive the image's closures into @pmo (keyed with the record's keying,
 * every MMT WAITING) as a migration destination, then the COMMIT.  On
 * error every MMT is WAITING again.
 */
static int mmt_ckpt_receive(struct mmt_pmo *pmo, const struct mmt_ckpt *c,
			    const u8 __user *ubuf)
{
	size_t len = mmt_closure_bytes(&c->params);
	struct mmt_mig *mig;
	u8 *kbuf;
	u32 i;
	int err;

	kbuf = kvmalloc(len, MMT_GFP_USER_SIZED);
	mig = kzalloc(sizeof(*mig), GFP_KERNEL_ACCOUNT);
	if (!kbuf || !mig) {
		err = -ENOMEM;
		goto out;
	}
	mmt_mig_init(mig, false);
	mig->no_record = true;	/* a restore may be tried again: not final */
	err = mmt_mig_rx_start(pmo, mig, &c->bind);
	if (err)
		goto out;
	for (i = 0; i < c->closures && !err; i++) {
		if (fatal_signal_pending(current))
			err = -EINTR;
		else
			err = mmt_copy_from_user_steps(kbuf,
						       ubuf + (size_t)i * len,
						       len);
		if (!err)
			err = mmt_mig_rx_closure(pmo, i, kbuf, len, true);
		cond_resched();
	}
	if (!err)
		err = mmt_mig_rx_commit(pmo, &c->bind, c->digest, c->tag);
	mmt_mig_rx_end(pmo);	/* not committed: LANDING -> WAITING */
out:
	kfree(mig);
	kvfree(kbuf);
	return err;
}

/*
 * MMT_IOC_RESTORE of a parked record @c: a new fd for its PMO's file,
 * consuming the record (freed on success).  The caller holds
 * mmt_ckpt_lock throughout, so no other restore or park sees the record
 * half consumed; the file's count cannot rise meanwhile (no fd refers to
 * it when it is 1: only the record does).
 */
static int mmt_ckpt_unpark(struct mmt_ckpt *c, struct mmt_restore *a,
			   void __user *uarg, u32 usize)
{
	struct file *file = c->parked;
	int fd;

	lockdep_assert_held(&mmt_ckpt_lock);
	if (a->buf || a->buf_len)
		return -EINVAL;	/* a parked PMO has no image to read */
	if (file_count(file) > 1)
		return -EBUSY;	/* its receiver (or a child) still holds it */
	fd = get_unused_fd_flags(O_RDWR |
				 (a->flags & MMT_PMO_CLOEXEC ? O_CLOEXEC : 0));
	if (fd < 0)
		return fd;
	a->size = sizeof(*a);
	a->fd = fd;
	if (mmt_copy_out(uarg, a, sizeof(*a), usize)) {
		put_unused_fd(fd);
		return -EFAULT;
	}
	/* consumed: the file is the fd's now */
	list_del(&c->node);
	atomic64_dec(&mmt_stats.ckpt_records);
	c->parked = NULL;
	mmt_ckpt_free(c);
	fd_install(fd, file);
	return 0;
}

/**
 * mmt_ckpt_park_begin() - make ready a record for MMT_MIGRATE_PARK
 *
 * Before the receive starts, so that nothing can fail once it commits:
 * the capability check, the record's memory and its place under
 * MMT_CKPT_MAX (counted in mmt_stats.ckpt_records from now on).
 *
 * Context: process; takes mmt_ckpt_lock.
 * Return: the record, for mmt_ckpt_park_end(); ERR_PTR(-EPERM) without
 * CAP_CHECKPOINT_RESTORE or CAP_SYS_ADMIN, ERR_PTR(-ENOMEM),
 * ERR_PTR(-ENOSPC) with MMT_CKPT_MAX records waiting.
 */
struct mmt_ckpt *mmt_ckpt_park_begin(void)
{
	struct mmt_ckpt *c;

	if (!mmt_ckpt_capable())
		return ERR_PTR(-EPERM);
	c = kzalloc(sizeof(*c), GFP_KERNEL_ACCOUNT);
	if (!c)
		return ERR_PTR(-ENOMEM);
	mutex_lock(&mmt_ckpt_lock);
	if (atomic64_read(&mmt_stats.ckpt_records) >= MMT_CKPT_MAX) {
		mutex_unlock(&mmt_ckpt_lock);
		kfree(c);
		return ERR_PTR(-ENOSPC);
	}
	atomic64_inc(&mmt_stats.ckpt_records);	/* its place */
	mutex_unlock(&mmt_ckpt_lock);
	mmt_ckpt_set_owner(c);	/* the receiver: the one who may restore */
	return c;
}

/**
 * mmt_ckpt_park_end() - park a committed PMO, or give the place back
 * @c: from mmt_ckpt_park_begin()
 * @file: the committed PMO's file (a reference is taken), or NULL if the
 *	receive failed (the record is freed)
 * @handle: MMT_CKPT_HANDLE_BYTES, the receive's nonce (unused if @file is
 *	NULL)
 *
 * Context: process; takes mmt_ckpt_lock.  Cannot fail.
 */
void mmt_ckpt_park_end(struct mmt_ckpt *c, struct file *file,
		       const u8 *handle)
{
	if (file) {
		c->parked = get_file(file);
		memcpy(c->bind.rx_nonce, handle, MMT_CKPT_HANDLE_BYTES);
	}
	mutex_lock(&mmt_ckpt_lock);
	if (file)
		list_add_tail(&c->node, &mmt_ckpts);
	else
		atomic64_dec(&mmt_stats.ckpt_records);
	mutex_unlock(&mmt_ckpt_lock);
	if (!file)
		mmt_ckpt_free(c);
}

/**
 * mmt_ckpt_restore() - MMT_IOC_RESTORE: a new PMO from an image, consuming
 * its record
 * @uarg: user pointer to struct mmt_restore
 *
 * The record is claimed (@busy) while the PMO is made and the image
 * received; it is consumed only once the new PMO is VALID and its fd is
 * about to be installed, and given back on any error (nothing of the
 * image is kept then: the new PMO is freed).
 *
 * Context: process; sleeps; takes mmt_ckpt_lock, then (not nested) the
 * new PMO's lock around each step.
 * Return: 0; the errors listed in uapi/mmt.h.
 */
int mmt_ckpt_restore(void __user *uarg)
{
	struct mmt_restore a;
	bool unparked = false;
	struct mmt_ckpt *c;
	struct mmt_pmo *pmo;
	struct file *file;
	u32 usize;
	int fd, err;

	if (!mmt_ckpt_capable())
		return -EPERM;
	err = mmt_copy_in(&a, sizeof(a), uarg, MMT_RESTORE_SIZE_VER0, &usize);
	if (err)
		return err;
	if ((a.flags & ~MMT_PMO_CLOEXEC) || a.fd || a.reserved0 ||
	    a.reserved[0] || a.reserved[1])
		return -EINVAL;

	mutex_lock(&mmt_ckpt_lock);
	c = mmt_ckpt_find(a.handle);
	if (!c)
		err = -ESTALE;
	else if (!mmt_ckpt_may_restore(c))
		err = -EPERM;	/* another user's record: it stays theirs */
	else if (c->busy)
		err = -EBUSY;
	else if (c->parked)
		unparked = true;
	else if (a.buf_len != (u64)c->closures * mmt_closure_bytes(&c->params))
		err = -EINVAL;
	else
		c->busy = true;
	if (unparked)
		err = mmt_ckpt_unpark(c, &a, uarg, usize);
	mutex_unlock(&mmt_ckpt_lock);
	if (err || unparked)
		return err;

	pmo = mmt_pmo_alloc(&c->params, c->closures);
	if (IS_ERR(pmo)) {
		err = PTR_ERR(pmo);
		pmo = NULL;
		goto fail;
	}
	err = mmt_pmo_set_keying(pmo, c->key_root, c->chan_root, c->ksalt,
				 c->key_len);
	if (!err)
		err = mmt_ckpt_receive(pmo, c, u64_to_user_ptr(a.buf));
	if (err)
		goto fail;
	mutex_lock(&pmo->lock);
	pmo->tx_root_counter = c->tx_root_counter;
	pmo->tx_last_gua = c->tx_last_gua;
	mutex_unlock(&pmo->lock);

	fd = mmt_pmo_file(pmo, a.flags & MMT_PMO_CLOEXEC, &file);
	if (fd < 0) {
		err = fd;
		goto fail;
	}
	a.size = sizeof(a);
	a.fd = fd;
	if (mmt_copy_out(uarg, &a, sizeof(a), usize)) {
		put_unused_fd(fd);
		fput(file);	/* frees the PMO */
		pmo = NULL;
		err = -EFAULT;
		goto fail;
	}
	/* consumed: no second PMO is ever made from this image */
	mutex_lock(&mmt_ckpt_lock);
	list_del(&c->node);
	atomic64_dec(&mmt_stats.ckpt_records);
	mutex_unlock(&mmt_ckpt_lock);
	mmt_ckpt_free(c);
	fd_install(fd, file);
	return 0;

fail:
	if (pmo)
		mmt_pmo_free(pmo);
	mutex_lock(&mmt_ckpt_lock);
	c->busy = false;
	mutex_unlock(&mmt_ckpt_lock);
	return err;
}

/**
 * mmt_ckpt_cancel() - drop the record of a pending checkpoint
 * @handle: MMT_CKPT_HANDLE_BYTES, the record's handle
 *
 * For MMT_IOC_PMO_MIG_RESOLVE of a PMO checkpointed with
 * MMT_CKPT_PENDING: once this returns 0 no restore can make a PMO from
 * the image, so the source may be written again.
 *
 * Context: process; takes mmt_ckpt_lock (the caller may hold a PMO's
 * lock).
 * Return: 0 (dropped); -ESTALE if there is no such record (a restore
 * consumed it: the image's PMO lives on elsewhere); -EBUSY if a restore
 * of it runs.
 */
int mmt_ckpt_cancel(const u8 *handle)
{
	struct mmt_ckpt *c;
	int err = 0;

	mutex_lock(&mmt_ckpt_lock);
	c = mmt_ckpt_find(handle);
	if (!c || c->parked) {
		err = -ESTALE;
	} else if (c->busy) {
		err = -EBUSY;
	} else {
		list_del(&c->node);
		atomic64_dec(&mmt_stats.ckpt_records);
		mmt_ckpt_free(c);
	}
	mutex_unlock(&mmt_ckpt_lock);
	return err;
}

/**
 * mmt_ckpt_exit() - drop every record at module unload
 *
 * Every image made before can no longer be restored (ESTALE after the
 * next load): no freshness state outlives the module, so none can be
 * reset by a reload (docs/CRIU.md).
 *
 * Context: process; /dev/mmt is gone, no ioctl runs.
 */
void mmt_ckpt_exit(void)
{
	struct mmt_ckpt *c, *tmp;

	mutex_lock(&mmt_ckpt_lock);
	list_for_each_entry_safe(c, tmp, &mmt_ckpts, node) {
		list_del(&c->node);
		mmt_ckpt_free(c);
	}
	atomic64_set(&mmt_stats.ckpt_records, 0);
	mutex_unlock(&mmt_ckpt_lock);
}
