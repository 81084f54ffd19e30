/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mmt_compat.h - the one place where the engine differs between the kernel
 * and user space.  Everything in lib/ includes this (through mmt_lib.h) and
 * nothing else from the environment, except the two crypto backends.
 *
 * Kernel: the real headers.  User space: minimal stand-ins with the kernel's
 * names and semantics for exactly what the engine uses, on top of libc and
 * libcrypto (OPENSSL_cleanse, CRYPTO_memcmp).
 */
#ifndef MMT_COMPAT_H
#define MMT_COMPAT_H

#ifdef __KERNEL__

#ifndef pr_fmt
#define pr_fmt(fmt) "mmt: " fmt
#endif

#include <linux/types.h>
#include <linux/errno.h>
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/minmax.h>
#include <linux/printk.h>
#include <linux/string.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/mm.h>
#include <linux/log2.h>
#include <linux/math64.h>
#include <linux/bitops.h>
#include <linux/build_bug.h>
#include <crypto/algapi.h>
#include "mmt_kcompat.h"

#else /* !__KERNEL__ */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int64_t s64;

#define GFP_KERNEL	0u
#define GFP_KERNEL_ACCOUNT	0u

#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)

#define BIT(n)		(1ul << (n))

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif
#define BUILD_BUG_ON(cond)	_Static_assert(!(cond), "BUILD_BUG_ON: " #cond)
#ifndef static_assert
#define static_assert(expr, ...) __static_assert(expr, ##__VA_ARGS__, #expr)
#define __static_assert(expr, msg, ...) _Static_assert(expr, msg)
#endif

#define U8_MAX		((u8)~0U)
#define U16_MAX		((u16)~0U)
#define U32_MAX		((u32)~0U)
#define U64_MAX		((u64)~0ULL)
#define S64_MAX		((s64)(U64_MAX >> 1))

#define min(a, b)							\
	({ typeof(a) _a = (a); typeof(b) _b = (b); _a < _b ? _a : _b; })
#define max(a, b)							\
	({ typeof(a) _a = (a); typeof(b) _b = (b); _a > _b ? _a : _b; })
#define min_t(t, a, b)	min((t)(a), (t)(b))
#define max_t(t, a, b)	max((t)(a), (t)(b))

#define MAX_ERRNO	4095
#define IS_ERR_VALUE(x)	((unsigned long)(x) >= (unsigned long)-MAX_ERRNO)

static inline void *ERR_PTR(long error)
{
	return (void *)error;
}

static inline long PTR_ERR(const void *ptr)
{
	return (long)ptr;
}

static inline bool IS_ERR(const void *ptr)
{
	return IS_ERR_VALUE((unsigned long)ptr);
}

static inline bool IS_ERR_OR_NULL(const void *ptr)
{
	return !ptr || IS_ERR(ptr);
}

static inline u64 div64_u64(u64 dividend, u64 divisor)
{
	return dividend / divisor;
}

static inline bool is_power_of_2(unsigned long n)
{
	return n != 0 && (n & (n - 1)) == 0;
}

static inline int ilog2(unsigned long n)
{
	return n ? (int)(sizeof(long) * 8 - 1) - __builtin_clzl(n) : -1;
}

/*
 * Unaligned little/big-endian accessors: memcpy compiles to one load or
 * store; the swap is only there on big-endian hosts.
 */
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define mmt_le16(x)	__builtin_bswap16(x)
#define mmt_le32(x)	__builtin_bswap32(x)
#define mmt_le64(x)	__builtin_bswap64(x)
#define mmt_be64(x)	(x)
#else
#define mmt_le16(x)	(x)
#define mmt_le32(x)	(x)
#define mmt_le64(x)	(x)
#define mmt_be64(x)	__builtin_bswap64(x)
#endif

static inline u16 get_unaligned_le16(const void *p)
{
	u16 v;

	memcpy(&v, p, sizeof(v));
	return mmt_le16(v);
}

static inline u32 get_unaligned_le32(const void *p)
{
	u32 v;

	memcpy(&v, p, sizeof(v));
	return mmt_le32(v);
}

static inline u64 get_unaligned_le64(const void *p)
{
	u64 v;

	memcpy(&v, p, sizeof(v));
	return mmt_le64(v);
}

static inline u64 get_unaligned_be64(const void *p)
{
	u64 v;

	memcpy(&v, p, sizeof(v));
	return mmt_be64(v);
}

static inline void put_unaligned_le16(u16 v, void *p)
{
	v = mmt_le16(v);
	memcpy(p, &v, sizeof(v));
}

static inline void put_unaligned_le32(u32 v, void *p)
{
	v = mmt_le32(v);
	memcpy(p, &v, sizeof(v));
}

static inline void put_unaligned_le64(u64 v, void *p)
{
	v = mmt_le64(v);
	memcpy(p, &v, sizeof(v));
}

static inline void put_unaligned_be64(u64 v, void *p)
{
	v = mmt_be64(v);
	memcpy(p, &v, sizeof(v));
}

static inline void *kmalloc(size_t size, unsigned int gfp)
{
	(void)gfp;
	return malloc(size ? size : 1);
}

static inline void *kzalloc(size_t size, unsigned int gfp)
{
	(void)gfp;
	return calloc(1, size ? size : 1);
}

static inline void *kvmalloc(size_t size, unsigned int gfp)
{
	return kmalloc(size, gfp);
}

static inline void *kvzalloc(size_t size, unsigned int gfp)
{
	return kzalloc(size, gfp);
}

static inline void kfree(const void *p)
{
	free((void *)p);
}

static inline void kvfree(const void *p)
{
	free((void *)p);
}

static inline void kfree_sensitive(const void *p)
{
	free((void *)p);
}

/* vmalloc'd memory in the kernel (PMOs): tests use it to cover that path. */
static inline void *vzalloc(size_t size)
{
	return calloc(1, size ? size : 1);
}

static inline void vfree(const void *p)
{
	free((void *)p);
}

static inline void memzero_explicit(void *p, size_t n)
{
	OPENSSL_cleanse(p, n);
}

static inline int crypto_memneq(const void *a, const void *b, size_t n)
{
	return CRYPTO_memcmp(a, b, n) != 0;
}

/*
 * Logging: errors go to stderr; integrity failures (ratelimited in the
 * kernel) only when MMT_LOG is set in the environment, so that tamper tests
 * stay quiet.
 */
static inline bool mmt_compat_log_enabled(void)
{
	static int enabled = -1;

	if (enabled < 0)
		enabled = !!getenv("MMT_LOG");
	return enabled;
}

#define pr_err(fmt, ...)	fprintf(stderr, "mmt: " fmt, ##__VA_ARGS__)
#define pr_warn(fmt, ...)	fprintf(stderr, "mmt: " fmt, ##__VA_ARGS__)
#define pr_info(fmt, ...)	do { } while (0)
#define pr_info_once(fmt, ...)	do { } while (0)
#define pr_debug(fmt, ...)	do { } while (0)
#define pr_err_ratelimited(fmt, ...)					\
	do {								\
		if (mmt_compat_log_enabled())				\
			fprintf(stderr, "mmt: " fmt, ##__VA_ARGS__);	\
	} while (0)

#endif /* __KERNEL__ */

/*
 * 128-bit accumulator for the Carter-Wegman hash.  Named apart from any
 * u128 the kernel headers may define in later versions.
 */
typedef unsigned __int128 mmt_u128;

#endif /* MMT_COMPAT_H */
