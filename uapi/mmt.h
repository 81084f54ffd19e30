/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * mmt.h - user API of the software MMT controller (/dev/mmt)
 *
 * The only header user programs include.  Conventions (botching-up-ioctls,
 * Documentation/driver-api/ioctl.rst): fixed-width fields, explicit padding,
 * sizes multiples of 8, __u64 for pointers, unknown flag bits and non-zero
 * reserved fields rejected with -EINVAL, unknown commands -ENOTTY, output
 * structs zeroed by the kernel before they are filled in.
 *
 * Every ioctl starts its struct with @size, the size in bytes of the struct
 * as the caller knows it (the MMT_*_SIZE_VER0 value of the header it was
 * built with).  The kernel accepts an older, shorter struct (missing fields
 * read as zero) and a newer, longer one whose extra bytes are all zero
 * (otherwise -E2BIG), as copy_struct_from_user() does.
 */
#ifndef _UAPI_LINUX_MMT_H
#define _UAPI_LINUX_MMT_H

#include <linux/const.h>
#include <linux/ioctl.h>
#include <linux/types.h>

/* Version of this interface; bumped only for additions. */
#define MMT_API_VERSION		1

/* Feature bits reported by MMT_IOC_QUERY (none yet beyond the query). */
#define MMT_FEAT_QUERY		_BITULL(0)

/**
 * struct mmt_query - MMT_IOC_QUERY argument: version and features
 * @size: (in) sizeof(struct mmt_query) as the caller knows it;
 *	at least MMT_QUERY_SIZE_VER0
 * @flags: (in) must be 0
 * @api_version: (out) MMT_API_VERSION of the running module
 * @closure_version: (out) closure wire-format version the module speaks
 * @features: (out) MMT_FEAT_* bits the module supports
 * @node_id: (out) this node's id (16 bits used; 0 until set)
 * @reserved: (in) must be 0; (out) zero
 * @module_version: (out) NUL-terminated module version string
 */
struct mmt_query {
	__u32 size;
	__u32 flags;
	__u32 api_version;
	__u32 closure_version;
	__u64 features;
	__u32 node_id;
	__u32 reserved;
	char module_version[32];
};

#define MMT_QUERY_SIZE_VER0	64

/*
 * ioctl type 0xB7 (not used by any in-tree driver in ioctl-number.rst).
 */
#define MMT_IOC_MAGIC		0xB7

/**
 * MMT_IOC_QUERY - report the module's API version and features
 *
 * On /dev/mmt.  Context: process; takes no lock.
 *
 * Return: 0 on success; -1 with errno set to:
 * * EFAULT - the argument could not be read or written
 * * EINVAL - @size below MMT_QUERY_SIZE_VER0, or @flags or @reserved non-zero
 * * E2BIG - @size above the page size, or larger than the kernel's struct
 *   with non-zero bytes past it
 */
#define MMT_IOC_QUERY		_IOWR(MMT_IOC_MAGIC, 0x00, struct mmt_query)

#endif /* _UAPI_LINUX_MMT_H */
