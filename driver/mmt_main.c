// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_main.c - module init and exit, and the /dev/mmt misc device
 *
 * The module is the trusted memory controller of the software MMT (Feng et
 * al., HPCA 2023): users reach secure memory only through /dev/mmt.
 */
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>

#include "mmt_conn.h"
#include "mmt_internal.h"
#include "mmt.h"

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
/* debugfs mmt/ with its files, then what the attacker's hook keeps. */
static void mmt_debugfs_exit(void)
{
	mmt_stats_exit();
	mmt_conn_fault_exit();
}

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
	err = mmt_pmo_io_init();
	if (err) {
		pr_err("cannot create the I/O workers' queue: %d\n", err);
		return err;
	}
	mmt_node_init();
	mmt_loopback_init();
	mmt_attest_init();	/* the node key, measured into IMA */
	mmt_conn_fault_init(mmt_stats_init());	/* test builds: the attacker */
	err = mmt_conn_init();
	if (err) {
		pr_err("cannot register the RDMA client: %d\n", err);
		mmt_debugfs_exit();
		mmt_attest_exit();
		mmt_pmo_io_exit();
		return err;
	}
	err = misc_register(&mmt_miscdev);
	if (err) {
		pr_err("cannot register /dev/mmt: %d\n", err);
		mmt_conn_exit();
		mmt_debugfs_exit();
		mmt_attest_exit();
		mmt_pmo_io_exit();
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
	mmt_debugfs_exit();
	mmt_pmo_io_exit();
	pr_info("unloaded\n");
}

module_init(mmt_init);
module_exit(mmt_exit);

MODULE_DESCRIPTION("Software Migratable Merkle Tree secure-memory controller");
MODULE_AUTHOR("The MMT project");
MODULE_LICENSE("GPL");
MODULE_VERSION(MMT_MODULE_VERSION);
