// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_nh_avx2.c - mmt_nh_generic() (lib/mmt_nh.c) with AVX2: the same
 * sums and bytes, 64 bytes per step in two 256-bit vectors; and
 * mmt_gf64_generic() with PCLMULQDQ (format v4's second stage).
 *
 * GCC vector extensions, the vpmuludq and pclmulqdq builtins and a vector
 * shuffle, no <immintrin.h>, so that the same source builds in the kernel
 * and in user space, with GCC and with clang (the fuzz build).  Kernel
 * (x86-64, not UML): this file alone is built with -mavx2 -mpclmul
 * (Kbuild), and its two functions run only between mmt_nh_simd_begin() and
 * mmt_nh_simd_end(), i.e. inside kernel_fpu_begin(); nothing else may go in
 * this file.  User space: the functions carry target("avx2,pclmul") and
 * mmt_nh_simd_begin() asks the CPU first.
 *
 * The 32-bit words of a unit: vector a holds words 0..7, b words 8..15, so
 * lane j of a is paired with lane j of b (docs/ENGINE.md); vpmuludq
 * multiplies the even lanes of each 64-bit element, a shift by 32 brings
 * the odd ones down.  Pass 1's key is pass 0's shifted by 16 words.
 */
#include "mmt_lib.h"

/* sparse knows neither vector types nor the builtin: not for it */
#if MMT_NH_HAVE_AVX2 && !defined(__CHECKER__)

#ifdef __KERNEL__
#define MMT_AVX2		/* the whole file is -mavx2 -mpclmul (Kbuild) */
#else
#define MMT_AVX2		__attribute__((target("avx2,pclmul")))
#endif

/*
 * Lanes @i..@l of the concatenation of @x and @y: __builtin_shufflevector
 * (clang, GCC >= 12; the fuzz build is clang's), else GCC's
 * __builtin_shuffle.
 */
#ifdef __has_builtin
#if __has_builtin(__builtin_shufflevector)
#define MMT_HAVE_SHUFFLEVECTOR	1
#endif
#endif
#ifdef MMT_HAVE_SHUFFLEVECTOR
#define MMT_SHUFFLE(x, y, i, j, k, l) \
	__builtin_shufflevector(x, y, i, j, k, l)
#else
#define MMT_SHUFFLE(x, y, i, j, k, l) \
	__builtin_shuffle(x, y, (mmt_v4u64) { i, j, k, l })
#endif

typedef u32 mmt_v8u32 __attribute__((vector_size(32)));
typedef u64 mmt_v4u64 __attribute__((vector_size(32)));
typedef int mmt_v8si __attribute__((vector_size(32)));
/* unaligned, may alias anything: loads and stores of bytes */
typedef u32 mmt_v8u32_u __attribute__((vector_size(32), aligned(1),
				       may_alias));

static __always_inline MMT_AVX2 mmt_v8u32 mmt_ld(const u8 *p)
{
	return *(const mmt_v8u32_u *)p;
}

static __always_inline MMT_AVX2 void mmt_st(u8 *p, mmt_v8u32 v)
{
	*(mmt_v8u32_u *)p = v;
}

/*
 * An untrusted input vector, loaded once: the empty asm makes the value
 * opaque, so the compiler cannot fold the load into both passes' vpaddd
 * (GCC 12 did, in the hash-only loops), which would let memory that
 * changes under us (the NIC, a racing writer) show pass 0 and pass 1
 * different words, and then one pass's collision (2^-32) passes a check.
 */
static __always_inline MMT_AVX2 mmt_v8u32 mmt_ld_once(const u8 *p)
{
	mmt_v8u32 v = mmt_ld(p);

	__asm__("" : "+x"(v));
	return v;
}

/* lanes 0, 2, 4, 6 of @x and @y multiplied into four 64-bit products */
static __always_inline MMT_AVX2 mmt_v4u64 mmt_mul(mmt_v8u32 x,
						  mmt_v8u32 y)
{
	return (mmt_v4u64)__builtin_ia32_pmuludq256((mmt_v8si)x, (mmt_v8si)y);
}

/* odd lanes down to the even ones */
static __always_inline MMT_AVX2 mmt_v8u32 mmt_odd(mmt_v8u32 x)
{
	return (mmt_v8u32)((mmt_v4u64)x >> 32);
}

struct mmt_nh_acc {
	mmt_v4u64 e0, o0, e1, o1;	/* pass 0 and 1, even and odd lanes */
};

/* key words of one unit: pass 0 (a's, b's), pass 1 (a's, b's) */
struct mmt_nh_key {
	mmt_v8u32 a0, b0, a1, b1;
};

static __always_inline MMT_AVX2 void mmt_nh_key_ld(struct mmt_nh_key *k,
						   const u8 *p)
{
	k->a0 = mmt_ld(p);
	k->b0 = mmt_ld(p + 32);
	k->a1 = mmt_ld(p + 64);
	k->b1 = mmt_ld(p + 96);
}

static __always_inline MMT_AVX2 void mmt_nh_step(struct mmt_nh_acc *s,
						 const struct mmt_nh_key *k,
						 mmt_v8u32 a, mmt_v8u32 b)
{
	mmt_v8u32 x0 = a + k->a0, y0 = b + k->b0;
	mmt_v8u32 x1 = a + k->a1, y1 = b + k->b1;

	s->e0 += mmt_mul(x0, y0);
	s->o0 += mmt_mul(mmt_odd(x0), mmt_odd(y0));
	s->e1 += mmt_mul(x1, y1);
	s->o1 += mmt_mul(mmt_odd(x1), mmt_odd(y1));
}

/* The unit at @o of @in, with @dst and @pad as @mode says: a and b. */
static __always_inline MMT_AVX2 void mmt_nh_io(u8 *dst, const u8 *in,
					       const u8 *pad, size_t o,
					       unsigned int mode,
					       mmt_v8u32 *a, mmt_v8u32 *b)
{
	*a = mmt_ld_once(in + o);
	*b = mmt_ld_once(in + o + 32);
	if (mode == MMT_NH_SEAL) {
		*a ^= mmt_ld(pad + o);
		*b ^= mmt_ld(pad + o + 32);
		mmt_st(dst + o, *a);
		mmt_st(dst + o + 32, *b);
	} else if (mode == MMT_NH_OPEN) {
		mmt_st(dst + o, *a ^ mmt_ld(pad + o));
		mmt_st(dst + o + 32, *b ^ mmt_ld(pad + o + 32));
	} else if (dst) {
		mmt_st(dst + o, *a);
		mmt_st(dst + o + 32, *b);
	}
}

static __always_inline MMT_AVX2 void mmt_nh_out(const struct mmt_nh_acc *s,
						u64 *out)
{
	mmt_v4u64 t0 = s->e0 + s->o0, t1 = s->e1 + s->o1;
	/* r = (t0[0] + t0[1], t1[0] + t1[1], t0[2] + t0[3], t1[2] + t1[3]) */
	mmt_v4u64 r = MMT_SHUFFLE(t0, t1, 0, 4, 2, 6) +
		      MMT_SHUFFLE(t0, t1, 1, 5, 3, 7);

	out[0] = r[0] + r[2];
	out[1] = r[1] + r[3];
}

/*
 * @n blocks of @len bytes in one @mode (a constant after inlining, so that
 * each loop is specialized): 64-byte blocks keep their one unit of key in
 * registers.
 */
static __always_inline MMT_AVX2 void mmt_nh_blocks(const u8 *key, u8 *dst,
						   const u8 *in, const u8 *pad,
						   size_t len, size_t n,
						   unsigned int mode, u64 *out)
{
	struct mmt_nh_key k;
	mmt_v8u32 a, b;
	size_t i, o;

	if (len == MMT_NH_UNIT) {
		mmt_nh_key_ld(&k, key);
		for (i = 0; i < n; i++, in += len, out += 2) {
			struct mmt_nh_acc s = { { 0 }, { 0 }, { 0 }, { 0 } };

			mmt_nh_io(dst, in, pad, 0, mode, &a, &b);
			mmt_nh_step(&s, &k, a, b);
			mmt_nh_out(&s, out);
			if (dst)
				dst += len;
			if (pad)
				pad += len;
		}
		return;
	}
	for (i = 0; i < n; i++, in += len, out += 2) {
		struct mmt_nh_acc s = { { 0 }, { 0 }, { 0 }, { 0 } };

		for (o = 0; o < len; o += MMT_NH_UNIT) {
			mmt_nh_key_ld(&k, key + o);
			mmt_nh_io(dst, in, pad, o, mode, &a, &b);
			mmt_nh_step(&s, &k, a, b);
		}
		mmt_nh_out(&s, out);
		if (dst)
			dst += len;
		if (pad)
			pad += len;
	}
}

MMT_AVX2 void mmt_nh_avx2(const u8 *key, u8 *dst, const u8 *in,
			  const u8 *pad, size_t len, size_t n,
			  unsigned int mode, u64 *out)
{
	/* one copy of the loops per mode: each input vector is loaded once */
	if (mode == MMT_NH_SEAL)
		mmt_nh_blocks(key, dst, in, pad, len, n, MMT_NH_SEAL, out);
	else if (mode == MMT_NH_OPEN)
		mmt_nh_blocks(key, dst, in, pad, len, n, MMT_NH_OPEN, out);
	else if (dst)
		mmt_nh_blocks(key, dst, in, NULL, len, n, MMT_NH_COPY, out);
	else
		mmt_nh_blocks(key, NULL, in, NULL, len, n, MMT_NH_COPY, out);
}

typedef long long mmt_v2di __attribute__((vector_size(16)));

/*
 * K_0 * Y_0 + K_1 * Y_1 over GF(2) per block with two pclmulqdq (the low
 * halves, then the high halves, of (Y_0, Y_1) and (K_0, K_1)), then the
 * reduction mmt_gf64_generic() uses too.
 */
MMT_AVX2 void mmt_gf64_clmul(const u64 *key, const u64 *nh, size_t n,
			     u64 *out)
{
	const mmt_v2di k = { (long long)key[0], (long long)key[1] };
	size_t i;

	for (i = 0; i < n; i++) {
		mmt_v2di y = { (long long)nh[2 * i], (long long)nh[2 * i + 1] };
		mmt_v2di p = __builtin_ia32_pclmulqdq128(y, k, 0x00) ^
			     __builtin_ia32_pclmulqdq128(y, k, 0x11);

		out[i] = mmt_gf64_reduce((u64)p[0], (u64)p[1]);
	}
}

#endif /* MMT_NH_HAVE_AVX2 && !__CHECKER__ */
