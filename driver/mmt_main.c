// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_main.c - module init and exit, the /dev/mmt misc device, the node id
 * and the GUA allocator
 *
 * The module is the trusted memory controller of the software MMT (Feng et
 * al., HPCA 2023): users reach secure memory only through /dev/mmt.
 */
#include <linux/bits.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/spinlock.h>
#include <linux/timekeeping.h>

#include "mmt_internal.h"
#include "mmt.h"

#define CREATE_TRACE_POINTS
#include "mmt_trace.h"

/* GUA = node id (16 bits) << 42 | sequence (42 bits): 58 bits, paper III. */
#define MMT_GUA_SEQ_BITS	(MMT_GUA_BITS - MMT_NODE_ID_BITS)
#define MMT_GUA_SEQ_MAX		((1ull << MMT_GUA_SEQ_BITS) - 1)

/*
 * A GUA must never repeat under one keying (docs/ENGINE.md, "Keying salt"
 * and "GUA uniqueness"): keyings are made and used within one load, and
 * within a load the sequence only grows.  It starts at the wall clock in
 * milliseconds (2^42 ms is 139 years) so that GUAs read as rising over
 * time; nothing depends on the clock for uniqueness, so a burst may run
 * ahead of it freely.
 */

/* mmt_gua_lock protects the node id and the GUA sequence. */
static DEFINE_SPINLOCK(mmt_gua_lock);
static u16 mmt_node;
static bool mmt_node_unassigned;	/* attested mode, no credential yet */
static u64 mmt_gua_seq;

/**
 * mmt_node_id() - this node's id (16 bits of every GUA)
 *
 * Context: any.
 * Return: the id, 1 until MMT_IOC_SET_NODE_ID.
 */
u16 mmt_node_id(void)
{
	u16 id;

	spin_lock(&mmt_gua_lock);
	id = mmt_node;
	spin_unlock(&mmt_gua_lock);
	return id;
}

/**
 * mmt_set_node_id() - set this node's id
 * @id: 1..65535
 *
 * Context: any.
 * Return: 0, or -EINVAL for an id out of range.
 */
int mmt_set_node_id(u32 id)
{
	if (!id || id > U16_MAX)
		return -EINVAL;
	spin_lock(&mmt_gua_lock);
	mmt_node = id;
	mmt_node_unassigned = false;
	spin_unlock(&mmt_gua_lock);
	return 0;
}

/**
 * mmt_node_id_unassign() - no GUA until mmt_set_node_id() (attested mode
 * entered: the node id the module had was no authority's)
 * @unassigned: true to hold GUAs back; false to let them go (the id as it
 *	was: module exit, KUnit)
 *
 * Context: any.
 */
void mmt_node_id_unassign(bool unassigned)
{
	spin_lock(&mmt_gua_lock);
	mmt_node_unassigned = unassigned;
	spin_unlock(&mmt_gua_lock);
}

/**
 * mmt_gua_alloc() - a new global unique address
 * @gua: (out) node id << 42 | sequence
 *
 * Context: any.
 * Return: 0; -EOVERFLOW when the 42-bit sequence is exhausted; -ENOKEY in
 * attested mode before a credential gave the node its id (so no GUA, and
 * no pad, ever carries an id the authority did not assign).
 */
int mmt_gua_alloc(u64 *gua)
{
	u64 now = ktime_get_real_ns() / NSEC_PER_MSEC;
	u64 next;
	int err = 0;

	spin_lock(&mmt_gua_lock);
	next = max(mmt_gua_seq + 1, now);
	if (mmt_node_unassigned) {
		err = -ENOKEY;
	} else if (next > MMT_GUA_SEQ_MAX) {
		err = -EOVERFLOW;
	} else {
		mmt_gua_seq = next;
		*gua = (u64)mmt_node << MMT_GUA_SEQ_BITS | next;
	}
	spin_unlock(&mmt_gua_lock);
	return err;
}

static const struct file_operations mmt_dev_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = mmt_dev_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice mmt_miscdev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "mmt",
	.fops = &mmt_dev_fops,
	.mode = 0600,
};

/*
 * The character device is registered last and deregistered first, so no
 * user can reach a half-initialized or half-torn-down module.  PMO fds hold
 * a module reference, so none is left at exit.
 */
static int __init mmt_init(void)
{
	bool simd;
	int err;

	/*
	 * The SIMD data MAC hash (NH, then GF(2^64)) must give the portable
	 * code's values (the format, the golden vector, other nodes): refuse
	 * to load rather than seal data that no other node could open.
	 */
	err = mmt_nh_selftest();
	if (err) {
		pr_err("SIMD data MAC hash self-test failed: %d\n", err);
		return err;
	}
	simd = mmt_nh_simd_begin();
	mmt_nh_simd_end(simd);
	pr_info("data MAC hash: %s\n",
		simd ? "NH with AVX2, GF(2^64) with PCLMULQDQ" : "portable C");
	mmt_node = 1;
	mmt_gua_seq = 0;	/* the first GUA is the clock's */
	mmt_loopback_init();
	mmt_attest_init();	/* the node key, measured into IMA */
	mmt_stats_init();
	err = mmt_conn_init();
	if (err) {
		pr_err("cannot register the RDMA client: %d\n", err);
		mmt_stats_exit();
		mmt_attest_exit();
		return err;
	}
	err = misc_register(&mmt_miscdev);
	if (err) {
		pr_err("cannot register /dev/mmt: %d\n", err);
		mmt_conn_exit();
		mmt_stats_exit();
		mmt_attest_exit();
		return err;
	}
	pr_info("software MMT controller %s loaded (API %u)\n",
		MMT_MODULE_VERSION, MMT_API_VERSION);
	return 0;
}

static void __exit mmt_exit(void)
{
	misc_deregister(&mmt_miscdev);
	mmt_ckpt_exit();	/* every checkpoint image made is dead */
	mmt_attest_exit();
	mmt_conn_exit();
	mmt_stats_exit();
	pr_info("unloaded\n");
}

module_init(mmt_init);
module_exit(mmt_exit);

MODULE_DESCRIPTION("Software Migratable Merkle Tree secure-memory controller");
MODULE_AUTHOR("The MMT project");
MODULE_LICENSE("GPL");
MODULE_VERSION(MMT_MODULE_VERSION);
