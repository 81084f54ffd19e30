// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_nh.c - the data MAC's hash (format v4), portable C: its NH stage and
 * its second stage over GF(2^64), and the choice between them and the
 * SIMD code of lib/mmt_nh_avx2.c.
 *
 * Source: Black, Halevi, Krawczyk, Krovetz, Rogaway, "UMAC: Fast and Secure
 * Message Authentication", CRYPTO 1999 (NH, and its Toeplitz extension);
 * the pairing, the key shift and the second stage: docs/ENGINE.md,
 * "Carter-Wegman MACs".  Both files compute the same values:
 * tests/lib/mmt_nh_test.c checks them against each other and against a
 * transcription of the definition.
 */
#include "mmt_lib.h"

#if MMT_NH_HAVE_AVX2 && defined(__KERNEL__)
#include <asm/cpufeature.h>
#include <asm/fpu/api.h>
#endif

/*
 * Pass 0 and 1 of pair j of a unit, 32-bit words x = c_{16u+j} and
 * y = c_{16u+j+8}, with the unit's key words at @k (pass 0 at bytes 0..63,
 * pass 1 at bytes 64..127).
 */
static inline void mmt_nh_pair(u32 x, u32 y, const u8 *k, unsigned int j,
			       u64 *s)
{
	k += 4 * j;
	s[0] += (u64)(u32)(x + get_unaligned_le32(k)) *
		(u32)(y + get_unaligned_le32(k + 32));
	s[1] += (u64)(u32)(x + get_unaligned_le32(k + 64)) *
		(u32)(y + get_unaligned_le32(k + 96));
}

/*
 * One unit of 64 bytes held as eight 64-bit little-endian words w[0..7]:
 * 32-bit word 2i is the low half of w[i], 2i + 1 the high half, and word j
 * < 8 is paired with word j + 8.
 */
static inline void mmt_nh_unit(const u64 *w, const u8 *k, u64 *s)
{
	unsigned int i;

	for (i = 0; i < 4; i++) {
		mmt_nh_pair((u32)w[i], (u32)w[i + 4], k, 2 * i, s);
		mmt_nh_pair((u32)(w[i] >> 32), (u32)(w[i + 4] >> 32), k,
			    2 * i + 1, s);
	}
}

/* @x[i] ^ @y[i] (@y NULL: @x[i]) to the 8 little-endian words at @p */
static inline void mmt_nh_store(u8 *p, const u64 *x, const u64 *y)
{
	unsigned int i;

	for (i = 0; i < 8; i++)
		put_unaligned_le64(y ? x[i] ^ y[i] : x[i], p + 8 * i);
}

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
	u64 s[2] = { 0, 0 }, w[8], x[8];
	unsigned int i;
	size_t o;

	/* each input word is loaded once */
	for (o = 0; o < len; o += MMT_NH_UNIT, k += MMT_NH_UNIT) {
		mmt_nh_words(w, in + o);
		if (mode == MMT_NH_SEAL) {
			mmt_nh_words(x, pad + o);
			for (i = 0; i < 8; i++)
				w[i] ^= x[i];
			mmt_nh_store(dst + o, w, NULL);
		} else if (mode == MMT_NH_OPEN) {
			mmt_nh_words(x, pad + o);
			mmt_nh_store(dst + o, w, x);
		} else if (dst) {
			mmt_nh_store(dst + o, w, NULL);
		}
		mmt_nh_unit(w, k, s);
	}
	out[0] = s[0];
	out[1] = s[1];
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

/*
 * Bits at the positions of one class mod 5 of a 64-bit word: class k at
 * positions 5i + k.  Bit 64 + t of a 128-bit product is of class
 * (t + 4) mod 5, so the high word of class r uses mmt_gf_class[(r + 1) % 5].
 */
static const u64 mmt_gf_class[5] = {
	0x1084210842108421ull, 0x2108421084210842ull, 0x4210842108421084ull,
	0x8421084210842108ull, 0x0842108421084210ull,
};

/*
 * K_0 * Y_0 + K_1 * Y_1 over GF(2), unreduced, into (*lo, *hi), with
 * integer multiplies and no branch or table index on the values.  Each
 * operand is split into its 5 classes of bits mod 5 (at most 13 bits each),
 * so that in the integer product of a class i of K and a class j of Y, a
 * column of class (i + j) mod 5 sums at most 13 bit products: its parity,
 * the carry-less product's bit, is its lowest bit, and the carries go no
 * further than 3 columns up, i.e. into other classes, which are masked off
 * (after the XOR of all the products of a class, which commutes with it).
 */
static inline void mmt_clmul2(const u64 *k, u64 y0, u64 y1, u64 *lo,
			      u64 *hi)
{
	u64 zl[5] = { 0 }, zh[5] = { 0 }, ka[5], kb[5], ya[5], yb[5];
	unsigned int i, j, r;

	for (i = 0; i < 5; i++) {
		ka[i] = k[0] & mmt_gf_class[i];
		kb[i] = k[1] & mmt_gf_class[i];
		ya[i] = y0 & mmt_gf_class[i];
		yb[i] = y1 & mmt_gf_class[i];
	}
	/* unrolled: (i + j) % 5 is then a constant, and z in registers */
#pragma GCC unroll 5
	for (i = 0; i < 5; i++) {
#pragma GCC unroll 5
		for (j = 0; j < 5; j++) {
			mmt_u128 p = (mmt_u128)ka[i] * ya[j];
			mmt_u128 q = (mmt_u128)kb[i] * yb[j];

			r = (i + j) % 5;
			zl[r] ^= (u64)p ^ (u64)q;
			zh[r] ^= (u64)(p >> 64) ^ (u64)(q >> 64);
		}
	}
	*lo = 0;
	*hi = 0;
	for (r = 0; r < 5; r++) {
		*lo ^= zl[r] & mmt_gf_class[r];
		*hi ^= zh[r] & mmt_gf_class[(r + 1) % 5];
	}
}

void mmt_gf64_generic(const u64 *key, const u64 *nh, size_t n, u64 *out)
{
	size_t i;
	u64 lo, hi;

	for (i = 0; i < n; i++) {
		mmt_clmul2(key, nh[2 * i], nh[2 * i + 1], &lo, &hi);
		out[i] = mmt_gf64_reduce(lo, hi);
	}
}

#if MMT_NH_HAVE_AVX2 && defined(__KERNEL__)

bool mmt_nh_simd_begin(void)
{
	if (!boot_cpu_has(X86_FEATURE_AVX2) ||
	    !boot_cpu_has(X86_FEATURE_PCLMULQDQ) ||
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
	/* every thread computes the same value: relaxed atomics suffice */
	static int usable = -1;
	int u = __atomic_load_n(&usable, __ATOMIC_RELAXED);

	if (u < 0) {
		u = __builtin_cpu_supports("avx2") &&
		    __builtin_cpu_supports("pclmul") &&
		    !getenv("MMT_NH_GENERIC");
		__atomic_store_n(&usable, u, __ATOMIC_RELAXED);
	}
	return u;
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
	u64 h0[2 * 3], h1[2 * 3], g0[3], g1[3], x = 0x9e3779b97f4a7c15ull;
	unsigned int mode;
	size_t i, len, n;
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
	/*
	 * every length, as many blocks as fit (up to 3: the loops that keep a
	 * 64-byte block's key in registers), each mode and hash only (mode
	 * MMT_NH_OPEN + 1: MMT_NH_COPY without dst, a loop of its own)
	 */
	for (len = MMT_NH_UNIT; len <= max && !err; len += MMT_NH_UNIT) {
		n = min_t(size_t, 3, max / len);
		for (mode = MMT_NH_COPY; mode <= MMT_NH_OPEN + 1; mode++) {
			unsigned int mo = mode > MMT_NH_OPEN ? MMT_NH_COPY : mode;
			bool copy = mode <= MMT_NH_OPEN;

			mmt_nh_generic(key, copy ? d0 : NULL, in, pad, len, n,
				       mo, h0);
			/* the key's first words as K_0, K_1: any values do */
			mmt_gf64_generic((const u64 *)key, h0, n, g0);
			simd = mmt_nh_simd_begin();
			if (simd) {
				mmt_nh(simd, key, copy ? d1 : NULL, in, pad, len,
				       n, mo, h1);
				mmt_gf64(simd, (const u64 *)key, h1, n, g1);
			}
			mmt_nh_simd_end(simd);
			if (!simd)	/* FPU not usable here: nothing to do */
				continue;
			if (memcmp(h0, h1, 2 * n * sizeof(*h0)) ||
			    memcmp(g0, g1, n * sizeof(*g0)) ||
			    (copy && memcmp(d0, d1, n * len)))
				err = -EIO;
		}
	}
	kfree(buf);
	return err;
}
