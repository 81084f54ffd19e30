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

/**
 * mmt_copy_in() - copy a size-versioned ioctl argument from user space
 * @karg: kernel copy, @ksize bytes
 * @ksize: size of the kernel's struct in bytes
 * @uarg: user pointer; its first __u32 is the caller's struct size
 * @min_size: the command's *_SIZE_VER0
 * @usize: (out) the caller's struct size, for the copy back
 *
 * Context: process context, may fault.
 * Return: 0; -EFAULT if @uarg cannot be read; -EINVAL if the caller's size
 * is below @min_size; -E2BIG if it is above PAGE_SIZE, or larger than
 * @ksize with non-zero bytes past it.
 */
int mmt_copy_in(void *karg, size_t ksize, void __user *uarg,
		size_t min_size, u32 *usize)
{
	if (get_user(*usize, (u32 __user *)uarg))
		return -EFAULT;
	if (*usize < min_size)
		return -EINVAL;
	if (*usize > PAGE_SIZE)
		return -E2BIG;
	return copy_struct_from_user(karg, ksize, uarg, *usize);
}

/**
 * mmt_copy_out() - copy an ioctl result back, no more than the caller knows
 * @uarg: user pointer
 * @karg: kernel struct, @ksize bytes, fully initialized
 * @ksize: size of the kernel's struct in bytes
 * @usize: the caller's struct size from mmt_copy_in()
 *
 * Return: 0, or -EFAULT.
 */
int mmt_copy_out(void __user *uarg, const void *karg, size_t ksize,
		 u32 usize)
{
	if (copy_to_user(uarg, karg, min_t(size_t, ksize, usize)))
		return -EFAULT;
	return 0;
}

/**
 * mmt_copy_to_user_steps() - copy a large kernel buffer out in steps
 * @to: user pointer
 * @from: kernel buffer of @len bytes
 * @len: bytes to copy (a closure: up to 2 GiB)
 *
 * Steps of at most MMT_UCOPY_STEP bytes, each a copy_to_user(), with
 * cond_resched() between them: one call never keeps the CPU for the whole
 * buffer.  A fatal signal between two steps ends the copy.
 *
 * Context: process; may sleep (a step may fault).
 * Return: 0; -EFAULT if a step could not be written; -EINTR on a fatal
 * signal (the steps before it were copied).
 */
int mmt_copy_to_user_steps(void __user *to, const void *from, size_t len)
{
	size_t done = 0, n;

	while (done < len) {
		if (done) {
			cond_resched();
			if (fatal_signal_pending(current))
				return -EINTR;
		}
		n = min_t(size_t, len - done, MMT_UCOPY_STEP);
		if (copy_to_user(to + done, from + done, n))
			return -EFAULT;
		done += n;
	}
	return 0;
}

/**
 * mmt_copy_from_user_steps() - copy a large user buffer in, in steps
 * @to: kernel buffer of @len bytes
 * @from: user pointer
 * @len: bytes to copy (a closure: up to 2 GiB)
 *
 * As mmt_copy_to_user_steps(), in the other direction.
 *
 * Context: process; may sleep (a step may fault).
 * Return: 0; -EFAULT if a step could not be read; -EINTR on a fatal
 * signal.
 */
int mmt_copy_from_user_steps(void *to, const void __user *from, size_t len)
{
	size_t done = 0, n;

	while (done < len) {
		if (done) {
			cond_resched();
			if (fatal_signal_pending(current))
				return -EINTR;
		}
		n = min_t(size_t, len - done, MMT_UCOPY_STEP);
		if (copy_from_user(to + done, from + done, n))
			return -EFAULT;
		done += n;
	}
	return 0;
}

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
