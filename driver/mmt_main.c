// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_main.c - module init and exit, the /dev/mmt misc device
 *
 * The module is the trusted memory controller of the software MMT (Feng et
 * al., HPCA 2023): users reach secure memory only through /dev/mmt.
 */
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>

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
 * user can reach a half-initialized or half-torn-down module.
 */
static int __init mmt_init(void)
{
	int err;

	err = misc_register(&mmt_miscdev);
	if (err) {
		pr_err("cannot register /dev/mmt: %d\n", err);
		return err;
	}
	pr_info("software MMT controller %s loaded (API %u)\n",
		MMT_MODULE_VERSION, MMT_API_VERSION);
	return 0;
}

static void __exit mmt_exit(void)
{
	misc_deregister(&mmt_miscdev);
	pr_info("unloaded\n");
}

module_init(mmt_init);
module_exit(mmt_exit);

MODULE_DESCRIPTION("Software Migratable Merkle Tree secure-memory controller");
MODULE_AUTHOR("The MMT project");
MODULE_LICENSE("GPL");
MODULE_VERSION(MMT_MODULE_VERSION);
