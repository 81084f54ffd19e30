// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_pmo.c - PMOs: pinned secure memory, its MMTs, and the PMO fd
 *
 * A PMO (physical memory object) is the unit a user allocates, owns and
 * configures (DESIGN.md sections 1, 4 and 6).  Its backing memory is the
 * "DRAM" of the software controller: it holds only ciphertext, data MACs
 * and tree nodes.  Users reach the plaintext only through pread()/pwrite()
 * on the PMO fd (mmt_pmo_io.c), which go through the engine
 * (lib/mmt_tree.c): writes encrypt and update counters, MACs and the path
 * to the root; reads verify the path and MACs, then decrypt.  The fd is
 * the capability: whoever holds it (also after passing it over a unix
 * socket) configures the PMO.
 *
 * A PMO without a key is plain, non-secure memory: its MMTs are INVALID
 * (DESIGN.md section 1), pread()/pwrite() copy its bytes as they are, and
 * the plain channel RDMA-writes them (driver/mmt_conn_tx.c).  Keying it
 * formats it; MMT_IOC_PMO_INVALIDATE zeroes it, so it never shows stale
 * ciphertext as plain bytes.
 */
#include <linux/cred.h>
#include <linux/anon_inodes.h>
#include <linux/capability.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/uio.h>
#include <linux/vmalloc.h>

#include "mmt_internal.h"
#include "mmt_trace.h"
#include "mmt.h"

static unsigned int max_pmo_mib = 4096;
module_param(max_pmo_mib, uint, 0644);
MODULE_PARM_DESC(max_pmo_mib,
		 "Most MiB of PMO data all users together may allocate (default 4096)");

static const struct file_operations mmt_pmo_fops;

/**
 * mmt_pmo_from_file() - the PMO behind a file, if it is a PMO fd
 * @file: any open file
 *
 * Context: any.
 * Return: the PMO, or NULL if @file is not a PMO fd.
 */
struct mmt_pmo *mmt_pmo_from_file(struct file *file)
{
	return file->f_op == &mmt_pmo_fops ? file->private_data : NULL;
}

static void mmt_pmo_uncharge(struct mmt_pmo *pmo)
{
	if (pmo->charged_mm) {
		account_locked_vm(pmo->charged_mm, pmo->charged_pages, false);
		mmdrop(pmo->charged_mm);
		pmo->charged_mm = NULL;
	}
}

/* Wipes the key and every MMT root; the caller holds @pmo->lock or owns it. */
static void mmt_pmo_drop_key(struct mmt_pmo *pmo)
{
	u32 i;

	mmt_pmo_io_slots_free(pmo);

	for (i = 0; i < pmo->closures; i++) {
		memzero_explicit(&pmo->mmts[i].root, sizeof(pmo->mmts[i].root));
		pmo->mmts[i].crypto = NULL;
	}
	if (pmo->crypto)
		mmt_crypto_free(pmo->crypto);
	pmo->crypto = NULL;
	for (i = 0; i < MMT_PMO_KEYINGS; i++) {
		mmt_crypto_free(pmo->rx_crypto[i]);
		pmo->rx_crypto[i] = NULL;
		pmo->rx_crypto_held[i] = 0;
	}
	pmo->key_len = 0;
	memzero_explicit(pmo->key_root, sizeof(pmo->key_root));
	memzero_explicit(pmo->chan_root, sizeof(pmo->chan_root));
	memset(&pmo->rx, 0, sizeof(pmo->rx));
	pmo->tx_root_counter = 0;
	pmo->tx_last_gua = 0;
	pmo->mig_unknown = false;
	pmo->xfer_unknown = false;
	pmo->ckpt_pending = false;
}

/**
 * mmt_pmo_free() - free a PMO: wipe its key, free its memory, uncharge it
 * @pmo: a PMO from mmt_pmo_alloc(), no longer reachable by anyone else
 *
 * Context: process.
 */
void mmt_pmo_free(struct mmt_pmo *pmo)
{
	if (pmo->mmts)
		mmt_pmo_drop_key(pmo);
	kvfree(pmo->mmts);
	if (pmo->scratch)
		kvfree_sensitive(pmo->scratch, mmt_scratch_bytes(&pmo->params));
	vfree(pmo->mem);
	if (pmo->mem_bytes) {
		atomic64_sub(pmo->bytes, &mmt_stats.pmo_bytes);
		atomic64_dec(&mmt_stats.pmos);
	}
	mmt_pmo_uncharge(pmo);
	mutex_destroy(&pmo->lock);
	kfree(pmo);
}

static int mmt_pmo_release(struct inode *inode, struct file *file)
{
	struct mmt_pmo *pmo = file->private_data;

	trace_mmt_pmo_destroy(pmo->bytes, pmo->closures);
	pr_debug("PMO of %llu bytes freed\n", pmo->bytes);
	mmt_pmo_free(pmo);
#ifdef MMT_PLANT_UAF
	/* planted for the debug kernel's test of the test (Kbuild) */
	pr_info("planted use after free: %llu\n", READ_ONCE(pmo->bytes));
#endif
	return 0;
}

/*
 * Charge @bytes of pinned memory to the caller's RLIMIT_MEMLOCK (skipped
 * with CAP_IPC_LOCK by account_locked_vm(), and for kernel threads) and
 * the PMO's data bytes to the module's limit.
 */
static int mmt_pmo_charge(struct mmt_pmo *pmo, size_t bytes)
{
	unsigned long pages = PAGE_ALIGN(bytes) >> PAGE_SHIFT;
	u64 limit = (u64)max_pmo_mib << 20;
	int err;

	/* Checked alone first: the counter is signed, the size is not. */
	if (pmo->bytes > limit)
		return -ENOSPC;
	if (atomic64_add_return(pmo->bytes, &mmt_stats.pmo_bytes) > limit) {
		atomic64_sub(pmo->bytes, &mmt_stats.pmo_bytes);
		return -ENOSPC;
	}
	if (!current->mm)	/* a kernel thread: nothing to charge */
		return 0;
	err = account_locked_vm(current->mm, pages, true);
	if (err) {
		atomic64_sub(pmo->bytes, &mmt_stats.pmo_bytes);
		return err;
	}
	mmgrab(current->mm);
	pmo->charged_mm = current->mm;
	pmo->charged_pages = pages;
	return 0;
}

/* Allocates the backing memory and the MMT views of a new PMO. */
static int mmt_pmo_alloc_mem(struct mmt_pmo *pmo)
{
	const struct mmt_params *p = &pmo->params;
	u32 i;
	int err;

	pmo->stride = PAGE_ALIGN(p->data_bytes + p->macs_bytes +
				 p->nodes_bytes);
	if (check_mul_overflow((size_t)pmo->closures, pmo->stride,
			       &pmo->mem_bytes)) {
		pmo->mem_bytes = 0;	/* nothing charged: see mmt_pmo_free() */
		return -EINVAL;
	}
	err = mmt_pmo_charge(pmo, pmo->mem_bytes);
	if (err) {
		pmo->mem_bytes = 0;
		return err;
	}
	atomic64_inc(&mmt_stats.pmos);
	/*
	 * Sizes come from user space: fail quietly rather than warn or call
	 * the OOM killer, and stay below kvmalloc's INT_MAX limit.  Every
	 * allocation is charged to the caller's memory cgroup
	 * (GFP_KERNEL_ACCOUNT): over memory.max, -ENOMEM (the ones sized by
	 * the user with __GFP_RETRY_MAYFAIL: the cgroup's OOM killer is not
	 * called).
	 */
	if ((u64)pmo->closures * sizeof(*pmo->mmts) > INT_MAX ||
	    (pmo->mem_bytes >> PAGE_SHIFT) > totalram_pages())
		return -ENOMEM;
	pmo->mem = __vmalloc(pmo->mem_bytes, GFP_KERNEL_ACCOUNT | __GFP_ZERO |
			     __GFP_NOWARN | __GFP_RETRY_MAYFAIL);
	pmo->mmts = kvcalloc(pmo->closures, sizeof(*pmo->mmts),
			     MMT_GFP_USER_SIZED);
	pmo->scratch = kvzalloc(mmt_scratch_bytes(p), GFP_KERNEL_ACCOUNT);
	if (!pmo->mem || !pmo->mmts || !pmo->scratch)
		return -ENOMEM;
	for (i = 0; i < pmo->closures; i++) {
		struct mmt *m = &pmo->mmts[i];

		m->p = p;
		m->data = pmo->mem + (size_t)i * pmo->stride;
		m->macs = m->data + p->data_bytes;
		m->nodes = m->macs + p->macs_bytes;
		m->scratch = pmo->scratch;
	}
	return 0;
}

/**
 * mmt_pmo_alloc() - allocate a PMO and its pinned backing memory
 * @p: geometry, checked by mmt_params_init()
 * @closures: number of MMTs, at least 1
 *
 * Every MMT starts INVALID, without a key.  The memory is charged to the
 * caller's RLIMIT_MEMLOCK, to the module's max_pmo_mib limit and, every
 * byte the PMO allocates (struct, MMT array, scratch, backing memory), to
 * the caller's memory cgroup.
 *
 * Context: process; may sleep.
 * Return: the PMO; ERR_PTR(-ENOMEM) (RLIMIT_MEMLOCK, the memory cgroup's
 * limit, or out of memory),
 * ERR_PTR(-ENOSPC) (module limit) or ERR_PTR(-EINVAL) (size overflow).
 */
struct mmt_pmo *mmt_pmo_alloc(const struct mmt_params *p, u32 closures)
{
	struct mmt_pmo *pmo;
	int err;

	pmo = kzalloc(sizeof(*pmo), GFP_KERNEL_ACCOUNT);
	if (!pmo)
		return ERR_PTR(-ENOMEM);
#ifdef MMT_PLANT_LEAK
	/* planted for the debug kernel's test of the test (Kbuild) */
	pr_info("planted leak at %p\n", kmalloc(192, GFP_KERNEL));
#endif
	mutex_init(&pmo->lock);
	init_waitqueue_head(&pmo->mig_wq);
	pmo->params = *p;
	pmo->closures = closures;
	pmo->bytes = (u64)closures * p->data_bytes;
	err = mmt_pmo_alloc_mem(pmo);
	if (err) {
		mmt_pmo_free(pmo);
		return ERR_PTR(err);
	}
	trace_mmt_pmo_create(pmo->bytes, pmo->closures, p->block_size);
	pr_debug("PMO of %llu bytes: %u closures of %llu bytes, %u-byte blocks, %u levels\n",
		 pmo->bytes, pmo->closures, p->data_bytes, p->block_size,
		 p->levels);
	return pmo;
}

/**
 * mmt_pmo_file() - an fd and a file for a PMO, not yet installed
 * @pmo: the PMO; the file owns it from here on (its release frees it)
 * @cloexec: the fd is O_CLOEXEC
 * @file: (out) the file
 *
 * The caller installs the fd with fd_install(), or gives both back with
 * put_unused_fd() and fput() (which frees the PMO).  On error the PMO is
 * still the caller's.
 *
 * Context: process; may sleep.
 * Return: the fd; -EMFILE; -ENOMEM or anon_inode_getfile()'s errors.
 */
int mmt_pmo_file(struct mmt_pmo *pmo, bool cloexec, struct file **file)
{
	int fd, flags = O_RDWR | (cloexec ? O_CLOEXEC : 0);

	fd = get_unused_fd_flags(flags);
	if (fd < 0)
		return fd;
	*file = anon_inode_getfile("[mmt-pmo]", &mmt_pmo_fops, pmo, flags);
	if (IS_ERR(*file)) {
		put_unused_fd(fd);
		return PTR_ERR(*file);
	}
	/*
	 * FMODE_NOWAIT: non-blocking I/O (RWF_NOWAIT, io_uring's first try)
	 * reaches mmt_pmo_io(), which answers -EAGAIN (uapi/mmt.h); without
	 * it the VFS refused RWF_NOWAIT with -EOPNOTSUPP
	 */
	(*file)->f_mode |= FMODE_PREAD | FMODE_PWRITE | FMODE_NOWAIT;
	return fd;
}

/**
 * mmt_pmo_create() - MMT_IOC_PMO_CREATE: allocate a PMO, return its fd
 * @uarg: user pointer to struct mmt_pmo_create
 *
 * Context: process; may sleep.
 * Return: 0 (the fd is in the argument); the errors listed in uapi/mmt.h.
 */
int mmt_pmo_create(void __user *uarg)
{
	struct mmt_pmo_create c;
	struct mmt_params p;
	struct mmt_pmo *pmo;
	struct file *file;
	int fd, err;
	u32 usize, closures;

	err = mmt_copy_in(&c, sizeof(c), uarg, MMT_PMO_CREATE_SIZE_VER0,
			  &usize);
	if (err)
		return err;
	if (c.fd)
		return -EINVAL;
	err = mmt_uapi_pmo_create(&c, &p, &closures);
	if (err)
		return err;
	pmo = mmt_pmo_alloc(&p, closures);
	if (IS_ERR(pmo))
		return PTR_ERR(pmo);

	fd = mmt_pmo_file(pmo, c.flags & MMT_PMO_CLOEXEC, &file);
	if (fd < 0) {
		err = fd;
		goto err_free;
	}

	c.size = sizeof(c);
	c.fd = fd;
	c.closure_bytes = pmo->params.data_bytes;
	c.meta_bytes = pmo->params.meta_bytes;
	mmt_uapi_geometry_out(&pmo->params, &c.geometry);
	if (mmt_copy_out(uarg, &c, sizeof(c), usize)) {
		put_unused_fd(fd);
		fput(file);	/* releases the PMO */
		return -EFAULT;
	}
	fd_install(fd, file);
	return 0;

err_free:
	mmt_pmo_free(pmo);
	return err;
}

/*
 * mmt_pmo_keying() - the receive rules' keying callback (struct
 * mmt_rx_rules, lib/mmt_lib.h): the context of @ksalt under the PMO's key,
 * for a received closure sealed under another keying than the PMO's own.
 * A cached one is reused; otherwise a free slot, or one no MMT uses any
 * more (a rejected closure's) and no closure of an eager receive holds
 * (mmt_pmo_keying_hold()), takes a new context.  Called with
 * @pmo->lock held (the receive path); may sleep.
 */
static struct mmt_crypto *mmt_pmo_keying(struct mmt_rx_rules *rx,
					 const u8 *ksalt)
{
	struct mmt_pmo *pmo = container_of(rx, struct mmt_pmo, rx);
	struct mmt_crypto *c;
	int i, slot = -1;
	u32 j;

	lockdep_assert_held(&pmo->lock);
	for (i = 0; i < MMT_PMO_KEYINGS; i++) {
		c = pmo->rx_crypto[i];
		if (c && !memcmp(mmt_crypto_ksalt(c), ksalt, MMT_KSALT_BYTES))
			return c;
	}
	for (i = 0; i < MMT_PMO_KEYINGS && slot < 0; i++) {
		c = pmo->rx_crypto[i];
		for (j = 0; c && j < pmo->closures; j++)
			if (pmo->mmts[j].crypto == c)
				break;
		if (!c || (j == pmo->closures && !pmo->rx_crypto_held[i]))
			slot = i;
	}
	if (slot < 0)
		return ERR_PTR(-ENOSPC);
	c = mmt_crypto_alloc_root(pmo->key_root, ksalt);
	if (IS_ERR(c))
		return c;
	mmt_crypto_free(pmo->rx_crypto[slot]);
	pmo->rx_crypto[slot] = c;
	return c;
}

/**
 * mmt_pmo_keying_hold() - hold, or let go, a received keying's context
 * for a closure checked but not yet committed
 * @pmo: the receive PMO
 * @c: the context the closure's check used: @pmo->crypto (nothing to
 *	hold: it lives as long as the key) or an entry of @pmo->rx_crypto
 * @hold: take a hold, else drop one
 *
 * An eager receive on the I/O workers (driver/mmt_conn_rx.c) checks a
 * closure's rules before the closures ahead of it are committed.  Once
 * committed, a closure's MMT points at its context and mmt_pmo_keying()
 * does not reuse that entry; the hold keeps it so in between, so a later
 * closure's keying gets the same answer (-ENOSPC included) as it would
 * in the serial receive.  After the key was dropped (@pmo->rx_lost) the
 * holds are gone with it and a drop does nothing.
 *
 * Context: process; the caller holds @pmo->lock.
 */
void mmt_pmo_keying_hold(struct mmt_pmo *pmo, struct mmt_crypto *c,
			 bool hold)
{
	u32 i;

	lockdep_assert_held(&pmo->lock);
	if (pmo->rx_lost || !c || c == pmo->crypto)
		return;
	for (i = 0; i < MMT_PMO_KEYINGS; i++) {
		if (pmo->rx_crypto[i] != c)
			continue;
		if (hold)
			pmo->rx_crypto_held[i]++;
		else if (pmo->rx_crypto_held[i])
			pmo->rx_crypto_held[i]--;
		return;
	}
}

/**
 * mmt_pmo_rx_start() - start the receive rules of a new receive
 * @pmo: the receive PMO, keyed; its receive is being claimed
 * @conn_id: the connection closures must name
 * @self_node: the receiver node id closures must name: the one the
 *	sender was told (the loopback transport reads it once for both)
 *
 * The floors (last root counter, last GUA) start over; the generation and
 * the nonce are set per closure by the transport.  Every WAITING MMT goes
 * back to the PMO's own context, so no context of an earlier receive
 * stays pinned by an MMT that no longer holds its data.
 *
 * Context: process; the caller holds @pmo->lock.
 */
void mmt_pmo_rx_start(struct mmt_pmo *pmo, u64 conn_id, u16 self_node)
{
	u32 i;

	lockdep_assert_held(&pmo->lock);
	pmo->rx_lost = false;
	pmo->rx.conn_id = conn_id;
	pmo->rx.self_node = self_node;
	pmo->rx.last_root_counter = 0;
	pmo->rx.last_gua = 0;
	for (i = 0; i < pmo->closures; i++)
		if (pmo->mmts[i].root.state == MMT_WAITING)
			pmo->mmts[i].crypto = pmo->crypto;
}

/*
 * Key @pmo from @pmo->key_root and @pmo->chan_root (set by the caller)
 * and @ksalt: its own keying context, then every MMT formatted VALID or,
 * with @receive, WAITING.  On error the key is dropped again (every MMT
 * INVALID, the roots wiped; without @receive the memory zeroed).  Caller
 * holds @pmo->lock; the PMO has no key.
 */
static int mmt_pmo_key_roots(struct mmt_pmo *pmo, const u8 *ksalt,
			     u32 key_len, bool receive)
{
	struct mmt_crypto *crypto;
	u32 i;
	int err = 0;

	lockdep_assert_held(&pmo->lock);
	crypto = mmt_crypto_alloc_root(pmo->key_root, ksalt);
	if (IS_ERR(crypto)) {
		memzero_explicit(pmo->key_root, sizeof(pmo->key_root));
		memzero_explicit(pmo->chan_root, sizeof(pmo->chan_root));
		return PTR_ERR(crypto);
	}
	pmo->crypto = crypto;
	pmo->key_len = key_len;
	pmo->rx.self_node = mmt_node_id();
	pmo->rx.keying = mmt_pmo_keying;
	for (i = 0; i < pmo->closures; i++) {
		struct mmt *m = &pmo->mmts[i];
		u64 gua;

		m->crypto = crypto;
		if (receive) {
			err = mmt_root_transition(&m->root, MMT_WAITING);
		} else {
			err = mmt_gua_alloc(&gua);
			if (!err)
				err = mmt_format(m, gua);
			if (!err)
				err = mmt_root_transition(&m->root, MMT_VALID);
		}
		if (err)
			break;
	}
	if (err) {
		mmt_pmo_drop_key(pmo);	/* every MMT back to INVALID */
		/* plain again: no formatted closure's ciphertext shows */
		if (!receive)
			memset(pmo->mem, 0, pmo->mem_bytes);
	} else {
		pr_debug("PMO keyed (AES-%u), %u MMTs %s\n", key_len * 8,
			 pmo->closures, receive ? "WAITING" : "VALID");
	}
	return err;
}

/**
 * mmt_pmo_set_key() - key a PMO and make its MMTs VALID or WAITING
 * @pmo: the PMO
 * @key: the MMT key, @key_len bytes (the caller wipes its copy)
 * @key_len: 16 or 32
 * @receive: make every MMT WAITING (ready for a closure) instead of
 *	formatting it to zero plaintext under a fresh GUA and making it VALID
 *
 * Every keying gets a fresh random keying salt (get_random_bytes()): the
 * subkeys are derived from the key and that salt, so no pad or sealing
 * nonce of this keying can equal one of any other keying of the same key,
 * on this node before or after a reload, or on another node with the same
 * node id (docs/ENGINE.md "Keying salt").  The key itself is not kept:
 * only its keying root and channel root.
 *
 * Keying a plain PMO (no key) replaces its bytes: formatting writes the
 * encryption of zeros over every closure; with @receive the memory keeps
 * what it held until a closure lands there, unreadable while WAITING.
 *
 * Context: process; takes @pmo->lock (killable); may sleep.
 * Return: 0; -EBUSY if the PMO has a key or a transfer uses it as plain
 * memory; -EINVAL for a bad @key_len; -ENOMEM; -EOVERFLOW if GUAs are
 * exhausted; -EINTR if a fatal signal came while it waited for the lock,
 * or a signal while it waited for the RNG to be seeded.  On error the PMO
 * is left without a key and every MMT INVALID (plain), as before; without
 * @receive its bytes are zero.
 */
int mmt_pmo_set_key(struct mmt_pmo *pmo, const u8 *key, u32 key_len,
		    bool receive)
{
	u8 ksalt[MMT_KSALT_BYTES];
	int err = 0;

	if (mutex_lock_killable(&pmo->lock))
		return -EINTR;
	if (pmo->crypto || pmo->plain_xfers) {
		err = -EBUSY;
		goto out_unlock;
	}
	err = mmt_key_root(key, key_len, pmo->key_root);
	if (err)
		goto out_unlock;
	/* the salt is all that keeps this keying's nonces apart: wait for
	 * the RNG to be seeded (boot only; interruptible)
	 */
	err = get_random_bytes_wait(ksalt, sizeof(ksalt));
	/* The secure channel's root: the MMT key itself is not kept. */
	if (!err)
		err = mmt_chan_root_key(key, key_len, pmo->chan_root);
	if (err) {
		memzero_explicit(pmo->key_root, sizeof(pmo->key_root));
		goto out_unlock;
	}
	err = mmt_pmo_key_roots(pmo, ksalt, key_len, receive);
out_unlock:
	mutex_unlock(&pmo->lock);
	return err;
}

/**
 * mmt_pmo_set_keying() - key a new PMO with another PMO's keying, every
 * MMT WAITING (MMT_IOC_RESTORE: the checkpointed PMO's keying)
 * @pmo: a PMO without a key
 * @key_root: MMT_KEY_ROOT_BYTES, mmt_key_root() of the MMT key
 * @chan_root: MMT_CHAN_ROOT_BYTES, mmt_chan_root_key() of the MMT key
 * @ksalt: MMT_KSALT_BYTES, the keying salt of the PMO's own keying
 * @key_len: 16 or 32, the MMT key's length
 *
 * The received closures then land under the PMO's own keying, and the
 * GUAs the PMO draws later are fresh under it as under any keying.  Only
 * the one record of a checkpoint, consumed once, ever keys a PMO so
 * (docs/CRIU.md): no two writable PMOs hold one keying.
 *
 * Context: process; takes @pmo->lock; may sleep.
 * Return: 0; -EBUSY if the PMO has a key; -ENOMEM.
 */
int mmt_pmo_set_keying(struct mmt_pmo *pmo, const u8 *key_root,
		       const u8 *chan_root, const u8 *ksalt, u32 key_len)
{
	int err = -EBUSY;

	mutex_lock(&pmo->lock);
	if (!pmo->crypto && !pmo->plain_xfers) {
		memcpy(pmo->key_root, key_root, sizeof(pmo->key_root));
		memcpy(pmo->chan_root, chan_root, sizeof(pmo->chan_root));
		err = mmt_pmo_key_roots(pmo, ksalt, key_len, true);
	}
	mutex_unlock(&pmo->lock);
	return err;
}

/* MMT_IOC_PMO_SET_KEY: see uapi/mmt.h. */
static int mmt_ioc_set_key(struct mmt_pmo *pmo, void __user *uarg)
{
	struct mmt_pmo_key k;
	u32 usize;
	int err;

	err = mmt_copy_in(&k, sizeof(k), uarg, MMT_PMO_KEY_SIZE_VER0, &usize);
	if (!err)
		err = mmt_uapi_key(&k);
	if (!err)
		err = mmt_pmo_set_key(pmo, k.key, k.key_len,
				      k.flags & MMT_KEY_RECEIVE);
	memzero_explicit(&k, sizeof(k));
	return err;
}

/* MMT_IOC_PMO_SET_ROOT_COUNTER: see uapi/mmt.h. */
static int mmt_pmo_set_root_counter(struct mmt_pmo *pmo, void __user *uarg)
{
	struct mmt_pmo_counter c;
	u32 usize, i;
	int err;

	err = mmt_copy_in(&c, sizeof(c), uarg, MMT_PMO_COUNTER_SIZE_VER0,
			  &usize);
	if (err)
		return err;
	if (c.flags || c.root_counter > MMT_ROOT_COUNTER_MAX)
		return -EINVAL;

	if (mutex_lock_killable(&pmo->lock))
		return -EINTR;
	err = pmo->crypto ? 0 : -EPERM;
	if (!err && (pmo->mig || pmo->mig_rx))
		err = -EBUSY;
	if (!err && pmo->mig_unknown)
		err = -EUCLEAN;
	for (i = 0; !err && i < pmo->closures; i++) {
		const struct mmt_root *r = &pmo->mmts[i].root;

		if (r->state == MMT_SENDING)
			err = -EPERM;
		else if (r->state == MMT_VALID && c.root_counter < r->root_counter)
			err = -EINVAL;
	}
	if (!err) {
		for (i = 0; i < pmo->closures; i++)
			if (pmo->mmts[i].root.state == MMT_VALID)
				pmo->mmts[i].root.root_counter = c.root_counter;
		pmo->rx.min_root_counter = c.root_counter;
	}
	mutex_unlock(&pmo->lock);
	return err;
}

/* MMT_IOC_PMO_INFO: see uapi/mmt.h. */
static int mmt_pmo_info(struct mmt_pmo *pmo, void __user *uarg)
{
	struct mmt_mmt_info *info = NULL;
	struct mmt_pmo_info q;
	u32 usize, i, n;
	int err;

	err = mmt_copy_in(&q, sizeof(q), uarg, MMT_PMO_INFO_SIZE_VER0, &usize);
	if (err)
		return err;
	if (q.flags || memchr_inv(q.reserved, 0, sizeof(q.reserved)))
		return -EINVAL;
	n = min(q.mmt_count, pmo->closures);
	if (n && !q.mmts)
		return -EFAULT;
	if (n) {
		info = kvcalloc(n, sizeof(*info), GFP_KERNEL_ACCOUNT);
		if (!info)
			return -ENOMEM;
	}

	if (mutex_lock_killable(&pmo->lock)) {
		kvfree(info);
		return -EINTR;
	}
	for (i = 0; i < n; i++) {
		const struct mmt_root *r = &pmo->mmts[i].root;

		info[i].state = r->state;
		info[i].flags = r->read_only ? MMT_INFO_READ_ONLY : 0;
		if (r->regua_due)
			info[i].flags |= MMT_INFO_REGUA_DUE;
		if (pmo->mmts[i].crypto && pmo->mmts[i].crypto != pmo->crypto)
			info[i].flags |= MMT_INFO_SENDER_KEYING;
		if (!pmo->crypto)
			info[i].flags |= MMT_INFO_PLAIN;
		info[i].gua = r->gua;
		info[i].root_counter = r->root_counter;
		info[i].top_major = r->top.major;
	}
	q.flags = pmo->mig_unknown ? MMT_PMO_INFO_MIG_UNKNOWN : 0;
	q.key_len = pmo->key_len;
	memset(q.ksalt, 0, sizeof(q.ksalt));
	if (pmo->crypto)
		memcpy(q.ksalt, mmt_crypto_ksalt(pmo->crypto), sizeof(q.ksalt));
	mutex_unlock(&pmo->lock);

	q.size = sizeof(q);
	q.bytes = pmo->bytes;
	mmt_uapi_geometry_out(&pmo->params, &q.geometry);
	q.block_size = pmo->params.block_size;
	q.closures = pmo->closures;
	q.closure_bytes = pmo->params.data_bytes;
	q.meta_bytes = pmo->params.meta_bytes;
	q.mmt_count = n;
	err = 0;
	if (n && copy_to_user(u64_to_user_ptr(q.mmts), info,
			      n * sizeof(*info)))
		err = -EFAULT;
	if (!err)
		err = mmt_copy_out(uarg, &q, sizeof(q), usize);
	kvfree(info);
	return err;
}

/**
 * mmt_pmo_wipe() - invalidate a PMO: every MMT INVALID, key and memory
 * wiped (MMT_IOC_PMO_INVALIDATE)
 * @pmo: the PMO
 *
 * A receive filling the PMO loses it: the receive rules go with the key,
 * and @pmo->rx_lost makes that receive refuse the rest of its closures
 * with -EPERM, even once the PMO is keyed again (before, they failed the
 * wiped rules' connection check, -EXDEV, which a local delegation does
 * not document; mmt-fuzz --cases found it).
 *
 * Context: process; takes @pmo->lock (killable).
 * Return: 0, or -EBUSY if an MMT is SENDING, a transfer uses the PMO as
 * plain memory or a migration uses it, or -EINTR if a fatal signal came
 * while it waited for the lock (nothing changed).
 */
int mmt_pmo_wipe(struct mmt_pmo *pmo)
{
	u32 i;
	int err = 0;

	if (mutex_lock_killable(&pmo->lock))
		return -EINTR;
	if (pmo->plain_xfers || pmo->mig || pmo->mig_rx)
		err = -EBUSY;
	for (i = 0; i < pmo->closures; i++)
		if (pmo->mmts[i].root.state == MMT_SENDING)
			err = -EBUSY;
	if (!err) {
		if (pmo->receiving)
			pmo->rx_lost = true;
		mmt_pmo_drop_key(pmo);
		memset(pmo->mem, 0, pmo->mem_bytes);
	}
	mutex_unlock(&pmo->lock);
	return err;
}

/**
 * mmt_pmo_mig_resolve() - MMT_IOC_PMO_MIG_RESOLVE: take a PMO back whose
 * checkpoint failed, or by force one whose migration's or transfer's
 * outcome is unknown
 * @pmo: the source of a migration that ended with
 *	MMT_MIG_F_OUTCOME_UNKNOWN, of a transfer whose last verdicts were lost
 *	(mmt_delegate_unknown()), or of a checkpoint made with
 *	MMT_CKPT_PENDING
 * @arg: 0 or MMT_MIG_RESOLVE_FORCE
 *
 * A pending checkpoint: the module knows itself: its record is dropped
 * first (mmt_ckpt_cancel()), and if a restore consumed it the PMO stays
 * read-only.  A migration or a transfer: only the destination knows
 * (MMT_IOC_MIGRATE_RESOLVE, mmt_mig_resolve()); with MMT_MIG_RESOLVE_FORCE
 * the owner's word is taken, counted and logged.  Either way the PMO is
 * writable again, every VALID MMT re-encrypted under a fresh GUA before
 * its next write or send (flagged so at the end of the migration), so no
 * pad is ever used twice even if the destination did commit.
 *
 * Context: process; takes @pmo->lock (killably), then the checkpoint
 * mutex.
 * Return: 0; -EINVAL if @arg is neither 0 nor MMT_MIG_RESOLVE_FORCE;
 * -ENOENT if the PMO has no unresolved migration or checkpoint;
 * -ENOTCONN if it is a migration's and @arg is 0; -ESTALE if its pending
 * checkpoint was restored; -EBUSY if a restore of it runs; -EINTR (a
 * fatal signal while waiting for the lock).
 */
int mmt_pmo_mig_resolve(struct mmt_pmo *pmo, unsigned long arg)
{
	bool forced = false, xfer = false;
	u32 i;
	int err = 0;

	if (arg && arg != MMT_MIG_RESOLVE_FORCE)
		return -EINVAL;
	if (mutex_lock_killable(&pmo->lock))
		return -EINTR;
	if (!pmo->mig_unknown)
		err = -ENOENT;
	else if (pmo->ckpt_pending)
		err = mmt_ckpt_cancel(pmo->ckpt_handle);
	else if (arg != MMT_MIG_RESOLVE_FORCE)
		err = -ENOTCONN;
	else
		forced = true;
	if (!err) {
		xfer = pmo->xfer_unknown;
		/* a transfer's closures in doubt are due since it ended */
		for (i = 0; !xfer && i < pmo->closures; i++)
			if (pmo->mmts[i].root.state == MMT_VALID)
				pmo->mmts[i].root.regua_due = true;
		pmo->mig_unknown = false;
		pmo->xfer_unknown = false;
		pmo->ckpt_pending = false;
		memset(&pmo->mig_bind, 0, sizeof(pmo->mig_bind));
	}
	mutex_unlock(&pmo->lock);
	if (forced) {
		atomic64_inc(&mmt_stats.resolves_forced);
		pr_warn_ratelimited("PMO of %u closures made writable by force after a %s of unknown outcome (uid %u): a second writable copy may exist at its destination\n",
				    pmo->closures,
				    xfer ? "transfer" : "migration",
				    from_kuid(&init_user_ns, current_euid()));
	}
	return err;
}

/* MMT_IOC_PMO_INVALIDATE: see uapi/mmt.h. */
static int mmt_pmo_invalidate(struct mmt_pmo *pmo, unsigned long arg)
{
	if (arg)
		return -EINVAL;
	return mmt_pmo_wipe(pmo);
}

#ifdef MMT_DEBUG
/* MMT_IOC_PMO_DEBUG (test builds only): see uapi/mmt.h. */
static int mmt_pmo_debug(struct mmt_pmo *pmo, void __user *uarg)
{
	const struct mmt_params *p = &pmo->params;
	struct mmt_pmo_debug d;
	u64 region_bytes;
	u32 usize;
	u8 *base;
	int err;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	err = mmt_copy_in(&d, sizeof(d), uarg, MMT_PMO_DEBUG_SIZE_VER0,
			  &usize);
	if (err)
		return err;
	if (d.reserved || !d.xor_mask || d.xor_mask > 0xff ||
	    d.closure >= pmo->closures)
		return -EINVAL;
	switch (d.region) {
	case MMT_DEBUG_DATA:
		region_bytes = p->data_bytes;
		base = pmo->mmts[d.closure].data;
		break;
	case MMT_DEBUG_MACS:
		region_bytes = p->macs_bytes;
		base = pmo->mmts[d.closure].macs;
		break;
	case MMT_DEBUG_NODES:
		region_bytes = p->nodes_bytes;
		base = pmo->mmts[d.closure].nodes;
		break;
	default:
		return -EINVAL;
	}
	if (d.offset >= region_bytes)
		return -EINVAL;
	if (mutex_lock_killable(&pmo->lock))
		return -EINTR;
	base[d.offset] ^= d.xor_mask;
	mutex_unlock(&pmo->lock);
	return 0;
}
#endif

/**
 * mmt_pmo_ioctl() - ioctl entry point of a PMO fd
 * @file: the PMO fd
 * @cmd: MMT_IOC_PMO_* command
 * @arg: user pointer to the command's struct (0 for INVALIDATE)
 *
 * Context: process; takes the PMO's lock in the handlers.
 * Return: the handler's result, or -ENOTTY for an unknown command.
 */
long mmt_pmo_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct mmt_pmo *pmo = file->private_data;
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case MMT_IOC_PMO_SET_KEY:
		return mmt_ioc_set_key(pmo, uarg);
	case MMT_IOC_PMO_SET_ROOT_COUNTER:
		return mmt_pmo_set_root_counter(pmo, uarg);
	case MMT_IOC_PMO_INFO:
		return mmt_pmo_info(pmo, uarg);
	case MMT_IOC_PMO_INVALIDATE:
		return mmt_pmo_invalidate(pmo, arg);
	case MMT_IOC_PMO_DELEGATE_LOCAL:
		return mmt_delegate_local(pmo, uarg);
	case MMT_IOC_PMO_MIG_RESOLVE:
		return mmt_pmo_mig_resolve(pmo, arg);
	case MMT_IOC_PMO_CHECKPOINT:
		return mmt_ckpt_checkpoint(pmo, uarg);
#ifdef MMT_DEBUG
	case MMT_IOC_PMO_DEBUG:
		return mmt_pmo_debug(pmo, uarg);
#endif
	default:
		return -ENOTTY;
	}
}

/**
 * mmt_pmo_receive() - check a closure delivered for MMT @index, and accept
 * it (the MMT becomes VALID) or reject it (nothing changes)
 * @pmo: the receiving PMO
 * @index: which MMT
 * @buf: the closure bytes as delivered (untrusted)
 * @len: bytes at @buf
 * @eager: verify the whole closure now instead of on each read
 *
 * Context: process; takes @pmo->lock.
 * Return: 0; -EINVAL for a bad @index; -EPERM if the PMO has no key, the
 * MMT is not WAITING or the PMO was invalidated during this receive
 * (@pmo->rx_lost); or mmt_closure_receive()'s rejection.
 */
int mmt_pmo_receive(struct mmt_pmo *pmo, u32 index, const u8 *buf,
		    size_t len, bool eager)
{
	u64 gua;
	int err;

	if (index >= pmo->closures)
		return -EINVAL;
	mutex_lock(&pmo->lock);
	pmo->rx.check_seq = true;
	pmo->rx.expect_seq = index;
	if (!pmo->crypto || pmo->rx_lost)
		err = -EPERM;
	else
		err = mmt_closure_receive(&pmo->mmts[index], &pmo->rx, buf,
					  len, eager);
	gua = pmo->mmts[index].root.gua;
	mutex_unlock(&pmo->lock);
	mmt_stats_receive(err, gua, index);
	return err;
}

static loff_t mmt_pmo_llseek(struct file *file, loff_t offset, int whence)
{
	struct mmt_pmo *pmo = file->private_data;

	return fixed_size_llseek(file, offset, whence, pmo->bytes);
}

static ssize_t mmt_pmo_read_iter(struct kiocb *iocb, struct iov_iter *to)
{
	return mmt_pmo_io(iocb, to, false);
}

static ssize_t mmt_pmo_write_iter(struct kiocb *iocb, struct iov_iter *from)
{
	return mmt_pmo_io(iocb, from, true);
}

static const struct file_operations mmt_pmo_fops = {
	.owner = THIS_MODULE,
	.release = mmt_pmo_release,
	.unlocked_ioctl = mmt_pmo_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = mmt_pmo_llseek,
	.read_iter = mmt_pmo_read_iter,
	.write_iter = mmt_pmo_write_iter,
};
