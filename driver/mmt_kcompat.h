/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mmt_kcompat.h - the kernel API differences between the kernel series the
 * module supports (6.1 and 6.12, README "Kernels")
 *
 * The one place where the module's C code depends on the kernel version.
 * Each shim covers only what the module uses, is keyed on a feature test
 * where the kernel offers one (a macro) and on LINUX_VERSION_CODE
 * otherwise, and names the upstream change that made it necessary.
 * Kernel builds only: the driver's files include it (directly or through
 * mmt_internal.h), the engine's through lib/mmt_compat.h.  The one Kbuild difference
 * (what $(src) holds) is handled in tests/kunit/Kbuild.
 */
#ifndef MMT_KCOMPAT_H
#define MMT_KCOMPAT_H

#include <linux/file.h>
#include <linux/version.h>

/*
 * get_unaligned_le32() and friends: 6.12's "move asm/unaligned.h to
 * linux/unaligned.h" removed <asm/unaligned.h>, which 6.1 has only.  (By
 * version: sparse and checkpatch do not take __has_include(<...>).)
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

/*
 * fd_file(): 6.12's "introduce fd_file(), convert all accessors to it."
 * and "struct fd: representation change" made struct fd opaque (one word,
 * no ->file); 6.1 has the member and not the accessor.
 */
#ifndef fd_file
#define fd_file(f)	((f).file)
#endif

#endif /* MMT_KCOMPAT_H */
