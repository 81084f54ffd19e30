// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_uaccess.c - copies between user space and the module, below every
 * file that takes a user's argument or buffer
 *
 * Size-versioned ioctl arguments (Documentation/driver-api/ioctl.rst,
 * copy_struct_from_user()) and long user buffers, copied in steps with
 * cond_resched() and a fatal-signal check between them.
 */
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "mmt_internal.h"

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
