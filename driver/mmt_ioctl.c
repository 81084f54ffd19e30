// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_ioctl.c - ioctl dispatch on /dev/mmt, one handler per command
 *
 * Conventions: Documentation/driver-api/ioctl.rst and botching-up-ioctls.rst.
 * Arguments are copied in with copy_struct_from_user() (size-versioned),
 * checked completely before anything changes, and output structs are zeroed
 * before they are filled in and copied out.
 */
#include <linux/build_bug.h>
#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/sched/signal.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "mmt_internal.h"
#include "mmt.h"

static_assert(sizeof(struct mmt_query) == MMT_QUERY_SIZE_VER0);
static_assert(sizeof(struct mmt_pmo_create) == MMT_PMO_CREATE_SIZE_VER0);
static_assert(sizeof(struct mmt_node_id) == MMT_NODE_ID_SIZE_VER0);
static_assert(sizeof(struct mmt_pmo_key) == MMT_PMO_KEY_SIZE_VER0);
static_assert(sizeof(struct mmt_pmo_counter) == MMT_PMO_COUNTER_SIZE_VER0);
static_assert(sizeof(struct mmt_pmo_info) == MMT_PMO_INFO_SIZE_VER0);
static_assert(sizeof(struct mmt_mmt_info) == 32);
static_assert(sizeof(struct mmt_delegate_local) ==
	      MMT_DELEGATE_LOCAL_SIZE_VER0);
static_assert(sizeof(struct mmt_pmo_debug) == MMT_PMO_DEBUG_SIZE_VER0);
static_assert(sizeof(struct mmt_geometry) == 8);
static_assert(sizeof(struct mmt_checkpoint) == MMT_CHECKPOINT_SIZE_VER0);
static_assert(sizeof(struct mmt_restore) == MMT_RESTORE_SIZE_VER0);
static_assert(sizeof(struct mmt_attest_blob) == MMT_ATTEST_BLOB_SIZE_VER0);
static_assert(sizeof(struct mmt_attest_info) == MMT_ATTEST_INFO_SIZE_VER0);

/*
 * MMT_IOC_QUERY: version and features; see uapi/mmt.h for the errors.
 */
static int mmt_ioc_query(void __user *uarg)
{
	struct mmt_query q;
	u32 usize;
	int err;

	err = mmt_copy_in(&q, sizeof(q), uarg, MMT_QUERY_SIZE_VER0, &usize);
	if (err)
		return err;
	if (q.flags || q.reserved)
		return -EINVAL;

	memset(&q, 0, sizeof(q));
	q.size = sizeof(q);
	q.api_version = MMT_API_VERSION;
	q.closure_version = MMT_CLOSURE_VERSION;
	q.features = MMT_FEAT_QUERY | MMT_FEAT_PMO | MMT_FEAT_LOCAL_DELEGATE |
		     MMT_FEAT_CHECKPOINT;
	q.features |= MMT_FEATURES_ATTEST;
	q.features |= MMT_FEATURES_DEBUG;
	q.features |= MMT_FEATURES_RDMA;
	q.node_id = mmt_node_id();
	strscpy(q.module_version, MMT_MODULE_VERSION,
		sizeof(q.module_version));
	return mmt_copy_out(uarg, &q, sizeof(q), usize);
}

/*
 * MMT_IOC_SET_NODE_ID: see uapi/mmt.h.
 */
static int mmt_ioc_set_node_id(void __user *uarg)
{
	struct mmt_node_id n;
	u32 usize;
	int err;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	err = mmt_copy_in(&n, sizeof(n), uarg, MMT_NODE_ID_SIZE_VER0, &usize);
	if (err)
		return err;
	if (n.flags || n.reserved)
		return -EINVAL;
	/* attested mode: the node id comes from a credential only */
	if (mmt_attest_mode())
		return -EBUSY;
	return mmt_set_node_id(n.node_id);
}

/**
 * mmt_dev_ioctl() - ioctl entry point of /dev/mmt
 * @file: the open /dev/mmt
 * @cmd: MMT_IOC_* command
 * @arg: user pointer to the command's struct
 *
 * Context: process context; takes no lock itself.
 * Return: the handler's result, or -ENOTTY for an unknown command.
 */
long mmt_dev_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case MMT_IOC_QUERY:
		return mmt_ioc_query(uarg);
	case MMT_IOC_PMO_CREATE:
		return mmt_pmo_create(uarg);
	case MMT_IOC_SET_NODE_ID:
		return mmt_ioc_set_node_id(uarg);
	case MMT_IOC_ATTEST_SET_AUTHORITY:
		return mmt_ioc_attest_set_authority(uarg);
	case MMT_IOC_ATTEST_SET_CRED: {
		long err = mmt_ioc_attest_set_cred(uarg);

		/* the peers of live attested connections get it too */
		if (!err)
			mmt_conn_cred_renewed();
		return err;
	}
	case MMT_IOC_RESTORE:
		return mmt_ckpt_restore(uarg);
	case MMT_IOC_ATTEST_INFO:
		return mmt_ioc_attest_info(uarg);
	case MMT_IOC_LISTEN:
		return mmt_conn_listen(uarg);
	case MMT_IOC_CONNECT:
		return mmt_conn_connect(uarg);
	default:
		return -ENOTTY;
	}
}
