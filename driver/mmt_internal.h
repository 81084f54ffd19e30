/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mmt_internal.h - declarations shared by the files of driver/
 */
#ifndef MMT_INTERNAL_H
#define MMT_INTERNAL_H

#undef pr_fmt
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/types.h>

/* Module version string reported by MMT_IOC_QUERY. */
#define MMT_MODULE_VERSION	"0.1.0"

struct file;

/* mmt_ioctl.c */
long mmt_dev_ioctl(struct file *file, unsigned int cmd, unsigned long arg);

#endif /* MMT_INTERNAL_H */
