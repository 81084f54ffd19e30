// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_nh_test.c - the data MAC's hash, format v4 (suite mmt_nh): its NH
 * stage, mmt_nh_generic() against a transcription of the definition in
 * docs/ENGINE.md ("Carter-Wegman MACs"), mmt_nh_avx2() against
 * mmt_nh_generic() over random bytes, lengths, block counts, modes and
 * alignments (user space on a CPU with AVX2; skipped elsewhere, e.g. on
 * UML); its second stage over GF(2^64), mmt_gf64_generic() against NIST SP
 * 800-38B's doubling and a schoolbook transcription, mmt_gf64_clmul()
 * against mmt_gf64_generic(); and mmt_nh_selftest().
 */
#include <kunit/test.h>

#include "mmt_lib.h"

#define NH_MAX		BIT(MMT_MAX_LOG_BLOCK)
#define NH_BLOCKS	3			/* most blocks per call here */
#define NH_BUF		(NH_BLOCKS * NH_MAX + 64)

static u8 nh_key[8 * MMT_NH_KEYS];
static u8 nh_in[NH_BUF], nh_pad[NH_BUF], nh_d0[NH_BUF], nh_ct[NH_BUF];
#if MMT_NH_HAVE_AVX2
static u8 nh_d1[NH_BUF];
#endif

static u64 nh_rand(u64 *x)	/* xorshift64 */
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void nh_fill(u8 *p, size_t len, u64 *x)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (u8)(nh_rand(x) >> 32);
}

/*
 * The definition, word by word: c_x the 32-bit little-endian words of the
 * ciphertext, L_x of the key; pair (16u + j, 16u + j + 8), pass p's key
 * shifted by 16 p words.
 */
static void nh_ref(const u8 *key, const u8 *c, size_t len, u64 out[2])
{
	size_t u, j, p;

	for (p = 0; p < MMT_NH_PASSES; p++) {
		u64 s = 0;

		for (u = 0; u < len / 64; u++) {
			for (j = 0; j < 8; j++) {
				size_t x = 16 * u + j, y = x + 8;
				u32 kx = get_unaligned_le32(key + 4 * (x + 16 * p));
				u32 ky = get_unaligned_le32(key + 4 * (y + 16 * p));
				u32 cx = get_unaligned_le32(c + 4 * x);
				u32 cy = get_unaligned_le32(c + 4 * y);

				s += (u64)(u32)(cx + kx) * (u32)(cy + ky);
			}
		}
		out[p] = s;
	}
}

/* what @mode must leave in dst, and the ciphertext it hashes (nh_ct) */
static void nh_expect(unsigned int mode, const u8 *in, const u8 *pad,
		      size_t bytes, u8 *want)
{
	size_t i;

	for (i = 0; i < bytes; i++) {
		u8 p = mode == MMT_NH_COPY ? 0 : pad[i];

		want[i] = in[i] ^ p;
		nh_ct[i] = mode == MMT_NH_SEAL ? in[i] ^ p : in[i];
	}
}

/* mmt_nh_generic() equals the definition; dst holds what the mode says. */
static void nh_generic_matches_definition(struct kunit *test)
{
	u64 x = 0x0123456789abcdefull, out[2 * NH_BLOCKS], ref[2];
	static u8 want[NH_BUF];
	unsigned int mode, bad = 0, cases = 0;
	size_t len, n, i, off;

	nh_fill(nh_key, sizeof(nh_key), &x);
	for (len = 64; len <= NH_MAX; len += 64) {
		n = 1 + len % NH_BLOCKS;
		off = len / 64 % 8;	/* misaligned by 0..7 bytes */
		nh_fill(nh_in, NH_BUF, &x);
		nh_fill(nh_pad, NH_BUF, &x);
		for (mode = MMT_NH_COPY; mode <= MMT_NH_OPEN; mode++) {
			memset(nh_d0, 0xa5, NH_BUF);
			nh_expect(mode, nh_in + off, nh_pad, n * len, want);
			mmt_nh_generic(nh_key, nh_d0 + off, nh_in + off,
				       mode == MMT_NH_COPY ? NULL : nh_pad,
				       len, n, mode, out);
			bad += memcmp(nh_d0 + off, want, n * len) != 0;
			for (i = 0; i < n; i++) {
				nh_ref(nh_key, nh_ct + i * len, len, ref);
				bad += out[2 * i] != ref[0] ||
				       out[2 * i + 1] != ref[1];
			}
			cases++;
		}
		/* hash only: the same sums, nothing written */
		mmt_nh_generic(nh_key, NULL, nh_in, NULL, len, 1,
			       MMT_NH_COPY, out);
		nh_ref(nh_key, nh_in, len, ref);
		bad += out[0] != ref[0] || out[1] != ref[1];
	}
	KUNIT_EXPECT_EQ(test, cases, 3u * (NH_MAX / 64));
	KUNIT_EXPECT_EQ(test, bad, 0u);
}

/* One changed bit of ciphertext or key changes a pass's sum. */
static void nh_sensitive(struct kunit *test)
{
	u64 x = 42, a[2], b[2];
	unsigned int bad = 0, bit;

	nh_fill(nh_key, sizeof(nh_key), &x);
	nh_fill(nh_in, NH_MAX, &x);
	mmt_nh_generic(nh_key, NULL, nh_in, NULL, NH_MAX, 1, MMT_NH_COPY, a);
	for (bit = 0; bit < 8 * NH_MAX; bit += 61) {
		nh_in[bit / 8] ^= 1u << (bit % 8);
		mmt_nh_generic(nh_key, NULL, nh_in, NULL, NH_MAX, 1,
			       MMT_NH_COPY, b);
		nh_in[bit / 8] ^= 1u << (bit % 8);
		bad += a[0] == b[0] || a[1] == b[1];
	}
	/* pass 1 uses key words 16.. : the last 64 bytes of key count */
	nh_key[4 * (NH_MAX / 4 + 15)] ^= 1;
	mmt_nh_generic(nh_key, NULL, nh_in, NULL, NH_MAX, 1, MMT_NH_COPY, b);
	KUNIT_EXPECT_EQ(test, a[0], b[0]);
	KUNIT_EXPECT_NE(test, a[1], b[1]);
	KUNIT_EXPECT_EQ(test, bad, 0u);
}

/*
 * mmt_nh_avx2() gives mmt_nh_generic()'s sums and bytes for random
 * lengths, block counts, modes and alignments (2000 calls).
 */
static void nh_simd_matches_generic(struct kunit *test)
{
#if MMT_NH_HAVE_AVX2
	u64 x = 0xfeedfacecafebeefull, o0[2 * NH_BLOCKS], o1[2 * NH_BLOCKS];
	unsigned int bad = 0, t, mode, a0, a1;
	size_t len, n, i;
	bool simd;

	simd = mmt_nh_simd_begin();
	mmt_nh_simd_end(simd);
	if (!simd)
		kunit_skip(test, "no AVX2 here (or MMT_NH_GENERIC set)");
	nh_fill(nh_key, sizeof(nh_key), &x);
	for (t = 0; t < 2000; t++) {
		len = 64 * (1 + nh_rand(&x) % (NH_MAX / 64));
		n = 1 + nh_rand(&x) % NH_BLOCKS;
		mode = nh_rand(&x) % 3;
		a0 = nh_rand(&x) % 64;
		a1 = nh_rand(&x) % 64;
		nh_fill(nh_in + a0, n * len, &x);
		nh_fill(nh_pad + a1, n * len, &x);
		memset(nh_d0, 0x5a, NH_BUF);
		memset(nh_d1, 0x5a, NH_BUF);
		mmt_nh_generic(nh_key, nh_d0 + a1, nh_in + a0, nh_pad + a1,
			       len, n, mode, o0);
		simd = mmt_nh_simd_begin();
		mmt_nh(simd, nh_key, nh_d1 + a1, nh_in + a0, nh_pad + a1,
		       len, n, mode, o1);
		mmt_nh_simd_end(simd);
		bad += memcmp(nh_d0, nh_d1, NH_BUF) != 0;
		for (i = 0; i < 2 * n; i++)
			bad += o0[i] != o1[i];
		if (mode == MMT_NH_COPY) {	/* and hash only */
			simd = mmt_nh_simd_begin();
			mmt_nh(simd, nh_key, NULL, nh_in + a0, NULL, len, n,
			       MMT_NH_COPY, o1);
			mmt_nh_simd_end(simd);
			for (i = 0; i < 2 * n; i++)
				bad += o0[i] != o1[i];
		}
	}
	KUNIT_EXPECT_EQ(test, bad, 0u);
#else
	kunit_skip(test, "no AVX2 code in this build");
#endif
}

#ifndef __KERNEL__
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#define NH_RACE_BLOCKS	16

/* 32-bit words, so that the writer's stores have the array's type */
static u32 nh_race_w[NH_RACE_BLOCKS * 16];
#define nh_race		((u8 *)nh_race_w)
static atomic_int nh_race_stop;
static atomic_long nh_race_flips;

/* flip word 0 of every block, again and again */
static void *nh_race_writer(void *arg)
{
	u32 *w;
	unsigned int b;

	while (!atomic_load_explicit(&nh_race_stop, memory_order_relaxed)) {
		for (b = 0; b < NH_RACE_BLOCKS; b++) {
			w = nh_race_w + 16 * b;
			__atomic_store_n(w, ~__atomic_load_n(w, __ATOMIC_RELAXED),
					 __ATOMIC_RELAXED);
		}
		atomic_fetch_add_explicit(&nh_race_flips, 1,
					  memory_order_relaxed);
	}
	return NULL;
}

static double nh_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/*
 * Hash only, with another thread flipping word 0 of each block (memory the
 * NIC or a racing writer changes under a check): each block's two sums
 * must be those of one value of the word, either one, never pass 0 of one
 * and pass 1 of the other, which a second load of the input (GCC folded
 * the loads into both passes' additions) gives.  Both codes; up to 1 s
 * each, stopping at the first mixed pair.  User space only (threads).
 */
static void nh_loads_input_once(struct kunit *test)
{
	u64 a[2], b[2], out[2 * NH_RACE_BLOCKS];
	unsigned long calls = 0, mixed = 0;
	unsigned int i, code;
	pthread_t t;
	double end;
	bool simd;

	for (i = 0; i < sizeof(nh_race_w); i++)
		nh_race[i] = (u8)(i * 17 + 3);
	for (i = 0; i < 128; i++)	/* L_0 .. L_31 */
		nh_key[i] = (u8)(i * 131 + 7);
	for (i = 1; i < NH_RACE_BLOCKS; i++)
		memcpy(nh_race + 64 * i, nh_race, 64);
	mmt_nh_generic(nh_key, NULL, nh_race, NULL, 64, 1, MMT_NH_COPY, a);
	nh_race_w[0] ^= 0xffffffffu;
	mmt_nh_generic(nh_key, NULL, nh_race, NULL, 64, 1, MMT_NH_COPY, b);
	nh_race_w[0] ^= 0xffffffffu;
	KUNIT_ASSERT_TRUE(test, a[0] != b[0] && a[1] != b[1]);
	atomic_store(&nh_race_stop, 0);
	atomic_store(&nh_race_flips, 0);
	KUNIT_ASSERT_EQ(test, pthread_create(&t, NULL, nh_race_writer, NULL),
			0);
	while (!atomic_load(&nh_race_flips))
		;
	for (code = 0; code < 2 && !mixed; code++) {
		simd = code ? mmt_nh_simd_begin() : false;
		end = nh_now() + 1;
		while (!mixed && (calls & 1023 || nh_now() < end)) {
			mmt_nh(simd, nh_key, NULL, nh_race, NULL, 64,
			       NH_RACE_BLOCKS, MMT_NH_COPY, out);
			calls++;
			for (i = 0; i < NH_RACE_BLOCKS; i++)
				mixed += !((out[2 * i] == a[0] &&
					    out[2 * i + 1] == a[1]) ||
					   (out[2 * i] == b[0] &&
					    out[2 * i + 1] == b[1]));
		}
		if (code)
			mmt_nh_simd_end(simd);
	}
	atomic_store(&nh_race_stop, 1);
	pthread_join(t, NULL);
	KUNIT_EXPECT_GT(test, calls, 0ul);
	KUNIT_EXPECT_EQ(test, mixed, 0ul);
}
#else
static void nh_loads_input_once(struct kunit *test)
{
	kunit_skip(test, "user space only (threads)");
}
#endif

/* ------------------------------------------------- second stage: GF(2^64) */

/*
 * The definition, bit by bit: the carry-less product of @a and @b (bit j the
 * coefficient of x^j), then the remainder of its long division by
 * x^64 + x^4 + x^3 + x + 1, from the top bit down.
 */
static u64 gf_ref(u64 a, u64 b)
{
	u64 lo = 0, hi = 0;
	int i;

	for (i = 0; i < 64; i++) {
		if (!(b >> i & 1))
			continue;
		lo ^= a << i;
		if (i)
			hi ^= a >> (64 - i);
	}
	for (i = 127; i >= 64; i--) {
		if (!(hi >> (i - 64) & 1))
			continue;
		/* subtract x^(i - 64) * (x^64 + x^4 + x^3 + x + 1) */
		hi ^= 1ull << (i - 64);
		if (i - 64 + 4 >= 64)
			hi ^= 0x1bull >> (128 - i);
		lo ^= 0x1bull << (i - 64);
	}
	return lo;
}

static u64 gf_one(u64 k0, u64 k1, u64 y0, u64 y1)
{
	u64 key[2] = { k0, k1 }, nh[2] = { y0, y1 }, out;

	mmt_gf64_generic(key, nh, 1, &out);
	return out;
}

/*
 * NIST SP 800-38B (CMAC) derives the subkeys of a 64-bit block cipher by
 * doubling in this field (R_64 = 0x1b): K2 = K1 * x.  Its TDEA examples give
 * (K1, K2) = (9198e9d3 14e6535f, 2331d3a6 29cca6a5) and (9d74e739 331796c0,
 * 3ae9ce72 662f2d9b), big-endian, i.e. bit j the coefficient of x^j.
 */
static void gf64_kat_cmac(struct kunit *test)
{
	static const u64 kat[][2] = {
		{ 0x9198e9d314e6535full, 0x2331d3a629cca6a5ull },
		{ 0x9d74e739331796c0ull, 0x3ae9ce72662f2d9bull },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(kat); i++) {
		KUNIT_EXPECT_EQ(test, gf_one(kat[i][0], 0, 2, 0), kat[i][1]);
		KUNIT_EXPECT_EQ(test, gf_one(2, 0, kat[i][0], 0), kat[i][1]);
		KUNIT_EXPECT_EQ(test, gf_one(0, kat[i][0], 0, 2), kat[i][1]);
		KUNIT_EXPECT_EQ(test, gf_ref(kat[i][0], 2), kat[i][1]);
		KUNIT_EXPECT_EQ(test, gf_one(kat[i][0], 0, 1, 0), kat[i][0]);
	}
	/* x^63 * x = x^64 = x^4 + x^3 + x + 1 */
	KUNIT_EXPECT_EQ(test, gf_one(1ull << 63, 0, 2, 0), 0x1bull);
}

/*
 * mmt_gf64_generic() is K_0 * Y_0 + K_1 * Y_1 by the definition, for random
 * values and the ones that fill every column (all ones, top bits), which
 * the portable code's carry argument must survive.
 */
static void gf64_generic_matches_definition(struct kunit *test)
{
	static const u64 edge[] = {
		0, 1, ~0ull, 1ull << 63, 0xf000000000000000ull,
		0x8421084210842108ull, 0x1084210842108421ull, ~0ull >> 1,
	};
	u64 x = 0x0123456789abcdefull, v[4];
	unsigned int bad = 0, t, i;

	for (t = 0; t < 20000; t++) {
		for (i = 0; i < 4; i++) {
			v[i] = nh_rand(&x);
			if (t < 4096)	/* every combination of edge values */
				v[i] = edge[(t >> (3 * i)) % ARRAY_SIZE(edge)];
		}
		bad += gf_one(v[0], v[1], v[2], v[3]) !=
		       (gf_ref(v[0], v[2]) ^ gf_ref(v[1], v[3]));
	}
	KUNIT_EXPECT_EQ(test, bad, 0u);
}

/* mmt_gf64_clmul() gives mmt_gf64_generic()'s values (random, 1-16). */
static void gf64_simd_matches_generic(struct kunit *test)
{
#if MMT_NH_HAVE_AVX2
	u64 x = 0x5151515151515151ull, key[2], nh[32], o0[16], o1[16];
	unsigned int bad = 0, t, i, n;
	bool simd;

	simd = mmt_nh_simd_begin();
	mmt_nh_simd_end(simd);
	if (!simd)
		kunit_skip(test, "no AVX2 and PCLMULQDQ here (or MMT_NH_GENERIC set)");
	for (t = 0; t < 2000; t++) {
		n = 1 + nh_rand(&x) % 16;
		key[0] = t ? nh_rand(&x) : ~0ull;
		key[1] = t ? nh_rand(&x) : ~0ull;
		for (i = 0; i < 2 * n; i++)
			nh[i] = t ? nh_rand(&x) : ~0ull;
		mmt_gf64_generic(key, nh, n, o0);
		simd = mmt_nh_simd_begin();
		mmt_gf64(simd, key, nh, n, o1);
		mmt_nh_simd_end(simd);
		for (i = 0; i < n; i++)
			bad += o0[i] != o1[i];
	}
	KUNIT_EXPECT_EQ(test, bad, 0u);
#else
	kunit_skip(test, "no SIMD code in this build");
#endif
}

/*
 * Without the SIMD code (UML, MMT_NH_GENERIC, no AVX2 or PCLMULQDQ) the
 * self-test compares nothing and returns 0: a skip, not a pass.
 */
static void nh_selftest_passes(struct kunit *test)
{
	bool simd = mmt_nh_simd_begin();

	mmt_nh_simd_end(simd);
	if (!simd)
		kunit_skip(test, "no SIMD code to compare here");
	KUNIT_EXPECT_EQ(test, mmt_nh_selftest(), 0);
}

static struct kunit_case mmt_nh_cases[] = {
	KUNIT_CASE(nh_generic_matches_definition),
	KUNIT_CASE(nh_sensitive),
	KUNIT_CASE(nh_simd_matches_generic),
	KUNIT_CASE(nh_loads_input_once),
	KUNIT_CASE(gf64_kat_cmac),
	KUNIT_CASE(gf64_generic_matches_definition),
	KUNIT_CASE(gf64_simd_matches_generic),
	KUNIT_CASE(nh_selftest_passes),
	{}
};

static struct kunit_suite mmt_nh_suite = {
	.name = "mmt_nh",
	.test_cases = mmt_nh_cases,
};

kunit_test_suites(&mmt_nh_suite);
