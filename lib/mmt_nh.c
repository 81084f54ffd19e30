// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_nh.c - the NH stage of the data MAC (format v3), portable C, and the
 * choice between it and the AVX2 code of lib/mmt_nh_avx2.c.
 *
 * Source: Black, Halevi, Krawczyk, Krovetz, Rogaway, "UMAC: Fast and Secure
 * Message Authentication", CRYPTO 1999 (NH, and its Toeplitz extension);
 * the pairing and the key shift: docs/ENGINE.md, "Carter-Wegman MACs".
 * Both files compute the same sums: tests/lib/mmt_nh_test.c checks them
 * against each other and against a transcription of the definition.
 */
#include "mmt_lib.h"

#if MMT_NH_HAVE_AVX2 && defined(__KERNEL__)
#include <asm/cpufeature.h>
#include <asm/fpu/api.h>
#endif

/*
 * Pass 0 and 1 of the pair (x, y), 32-bit words x = c_{16u+j} and
 * y = c_{16u+j+8}, with the unit's key words at @k (pass 0 at bytes 0..63,
 * pass 1 at bytes 64..127).
 */
#define MMT_NH_PAIR(x, y, k, j)						\
do {									\
	s0 += (u64)(u32)((u32)(x) + get_unaligned_le32((k) + 4 * (j))) *	\
	      (u32)((u32)(y) + get_unaligned_le32((k) + 32 + 4 * (j)));	\
	s1 += (u64)(u32)((u32)(x) + get_unaligned_le32((k) + 64 + 4 * (j))) * \
	      (u32)((u32)(y) + get_unaligned_le32((k) + 96 + 4 * (j)));	\
} while (0)

/*
 * One unit of 64 bytes held as eight 64-bit little-endian words w0..w7:
 * 32-bit word 2i is the low half of wi, 2i + 1 the high half, and word j
 * < 8 is paired with word j + 8.
 */
#define MMT_NH_UNIT8(k)							\
do {									\
	MMT_NH_PAIR(w0, w4, k, 0); MMT_NH_PAIR(w0 >> 32, w4 >> 32, k, 1);	\
	MMT_NH_PAIR(w1, w5, k, 2); MMT_NH_PAIR(w1 >> 32, w5 >> 32, k, 3);	\
	MMT_NH_PAIR(w2, w6, k, 4); MMT_NH_PAIR(w2 >> 32, w6 >> 32, k, 5);	\
	MMT_NH_PAIR(w3, w7, k, 6); MMT_NH_PAIR(w3 >> 32, w7 >> 32, k, 7);	\
} while (0)

#define MMT_NH_LOAD(p)							\
do {									\
	w0 = get_unaligned_le64((p));					\
	w1 = get_unaligned_le64((p) + 8);				\
	w2 = get_unaligned_le64((p) + 16);				\
	w3 = get_unaligned_le64((p) + 24);				\
	w4 = get_unaligned_le64((p) + 32);				\
	w5 = get_unaligned_le64((p) + 40);				\
	w6 = get_unaligned_le64((p) + 48);				\
	w7 = get_unaligned_le64((p) + 56);				\
} while (0)

#define MMT_NH_STORE(p, x)						\
do {									\
	put_unaligned_le64(w0 ^ (x)[0], (p));				\
	put_unaligned_le64(w1 ^ (x)[1], (p) + 8);			\
	put_unaligned_le64(w2 ^ (x)[2], (p) + 16);			\
	put_unaligned_le64(w3 ^ (x)[3], (p) + 24);			\
	put_unaligned_le64(w4 ^ (x)[4], (p) + 32);			\
	put_unaligned_le64(w5 ^ (x)[5], (p) + 40);			\
	put_unaligned_le64(w6 ^ (x)[6], (p) + 48);			\
	put_unaligned_le64(w7 ^ (x)[7], (p) + 56);			\
} while (0)

/* the 8 little-endian words at @p, in @x */
static inline void mmt_nh_words(u64 *x, const u8 *p)
{
	unsigned int i;

	for (i = 0; i < 8; i++)
		x[i] = get_unaligned_le64(p + 8 * i);
}

/* One block: mmt_nh_generic() with n = 1. */
static inline void mmt_nh_block(const u8 *k, u8 *dst, const u8 *in,
				const u8 *pad, size_t len, unsigned int mode,
				u64 *out)
{
	static const u64 zero[8];
	u64 s0 = 0, s1 = 0, w0, w1, w2, w3, w4, w5, w6, w7, x[8];
	size_t o;

	/* one loop per mode: each input word is loaded once */
	for (o = 0; o < len; o += MMT_NH_UNIT, k += MMT_NH_UNIT) {
		MMT_NH_LOAD(in + o);
		if (mode == MMT_NH_SEAL) {
			mmt_nh_words(x, pad + o);
			w0 ^= x[0], w1 ^= x[1], w2 ^= x[2], w3 ^= x[3];
			w4 ^= x[4], w5 ^= x[5], w6 ^= x[6], w7 ^= x[7];
			MMT_NH_STORE(dst + o, zero);
		} else if (mode == MMT_NH_OPEN) {
			mmt_nh_words(x, pad + o);
			MMT_NH_STORE(dst + o, x);
		} else if (dst) {
			MMT_NH_STORE(dst + o, zero);
		}
		MMT_NH_UNIT8(k);
	}
	out[0] = s0;
	out[1] = s1;
}

void mmt_nh_generic(const u8 *key, u8 *dst, const u8 *in, const u8 *pad,
		    size_t len, size_t n, unsigned int mode, u64 *out)
{
	size_t i;

	for (i = 0; i < n; i++, in += len, out += 2) {
		mmt_nh_block(key, dst, in, pad, len, mode, out);
		if (dst)
			dst += len;
		if (pad)
			pad += len;
	}
}

#if MMT_NH_HAVE_AVX2 && defined(__KERNEL__)

bool mmt_nh_simd_begin(void)
{
	if (!boot_cpu_has(X86_FEATURE_AVX2) ||
	    !boot_cpu_has(X86_FEATURE_OSXSAVE) ||
	    !cpu_has_xfeatures(XFEATURE_MASK_SSE | XFEATURE_MASK_YMM, NULL) ||
	    !irq_fpu_usable())
		return false;
	kernel_fpu_begin();
	return true;
}

void mmt_nh_simd_end(bool simd)
{
	if (simd)
		kernel_fpu_end();
}

#elif MMT_NH_HAVE_AVX2

bool mmt_nh_simd_begin(void)
{
	static int usable = -1;	/* racy but idempotent: same value */

	if (usable < 0)
		usable = __builtin_cpu_supports("avx2") &&
			 !getenv("MMT_NH_GENERIC");
	return usable;
}

void mmt_nh_simd_end(bool simd)
{
}

#else

bool mmt_nh_simd_begin(void)
{
	return false;
}

void mmt_nh_simd_end(bool simd)
{
}

#endif

int mmt_nh_selftest(void)
{
	const size_t max = 1u << MMT_MAX_LOG_BLOCK;
	const size_t keylen = 8 * MMT_NH_KEYS;
	u8 *buf, *key, *in, *pad, *d0, *d1;
	u64 h0[2], h1[2], x = 0x9e3779b97f4a7c15ull;
	unsigned int mode;
	size_t i, len;
	bool simd;
	int err = 0;

	simd = mmt_nh_simd_begin();
	mmt_nh_simd_end(simd);
	if (!simd)
		return 0;
	buf = kmalloc(keylen + 4 * max, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	key = buf;
	in = key + keylen;
	pad = in + max;
	d0 = pad + max;
	d1 = d0 + max;
	for (i = 0; i < keylen + 2 * max; i++) {	/* xorshift64 */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[i] = (u8)(x >> 24);
	}
	for (len = MMT_NH_UNIT; len <= max && !err; len += MMT_NH_UNIT) {
		for (mode = MMT_NH_COPY; mode <= MMT_NH_OPEN; mode++) {
			mmt_nh_generic(key, d0, in, pad, len, 1, mode, h0);
			simd = mmt_nh_simd_begin();
			if (simd)
				mmt_nh(simd, key, d1, in, pad, len, 1, mode,
				       h1);
			mmt_nh_simd_end(simd);
			if (!simd)	/* FPU not usable here: nothing to do */
				continue;
			if (h0[0] != h1[0] || h0[1] != h1[1] ||
			    memcmp(d0, d1, len))
				err = -EIO;
		}
	}
	kfree(buf);
	return err;
}
