// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_crypto_test.c - known-answer tests of the engine's crypto interface
 * (suite mmt_crypto).  Runs against OpenSSL in user space and against the
 * kernel crypto API under KUnit.  Every vector is typed in from the
 * standard named next to it, never produced by this code.
 */
#include <kunit/test.h>

#include "mmt_lib.h"

/*
 * Vectors are written as hex, split into pieces of at most 64 digits (a
 * NULL-terminated list) to keep lines short.
 */
#define HEXN 4
#define HEX(...)	((const char *const[HEXN]) { __VA_ARGS__ })

/* Decode the hex pieces @hex into @out; returns bytes. */
static size_t unhex(const char *const *hex, u8 *out)
{
	size_t n = 0, i, len;
	unsigned int k;

	for (k = 0; k < HEXN && hex[k]; k++) {
		len = strlen(hex[k]) / 2;
		for (i = 0; i < len; i++) {
			unsigned int v = 0, j;

			for (j = 0; j < 2; j++) {
				char ch = hex[k][2 * i + j];

				v <<= 4;
				if (ch >= '0' && ch <= '9')
					v |= ch - '0';
				else if (ch >= 'a' && ch <= 'f')
					v |= ch - 'a' + 10;
			}
			out[n++] = (u8)v;
		}
	}
	return n;
}

/*
 * Everything a case allocates outside kunit_kzalloc(), freed in exit even
 * when an assertion ends the case early.
 */
#define MAX_CHAN 4
#define MAX_VBUF 4
struct crypto_priv {
	struct mmt_crypto *c;
	struct mmt_chan_crypto *chan[MAX_CHAN];
	void *vbuf[MAX_VBUF];
};

static int mmt_crypto_init(struct kunit *test)
{
	test->priv = kunit_kzalloc(test, sizeof(struct crypto_priv),
				   GFP_KERNEL);
	return test->priv ? 0 : -ENOMEM;
}

static struct crypto_priv *priv(struct kunit *test)
{
	return test->priv;
}

/* Context with the given ENC, MAC and SEAL subkeys, freed in exit. */
static struct mmt_crypto *raw_ctx(struct kunit *test, const u8 *enc,
				  const u8 *mac, const u8 *seal)
{
	u8 *sub = kunit_kzalloc(test, MMT_NR_SUBKEYS * MMT_SUBKEY_BYTES,
				GFP_KERNEL);
	struct mmt_crypto *c;

	KUNIT_ASSERT_NOT_NULL(test, sub);
	memcpy(sub + MMT_SUBKEY_ENC * MMT_SUBKEY_BYTES, enc, 16);
	memcpy(sub + MMT_SUBKEY_MAC * MMT_SUBKEY_BYTES, mac, 16);
	memcpy(sub + MMT_SUBKEY_SEAL * MMT_SUBKEY_BYTES, seal, 16);
	c = mmt_crypto_alloc_raw(sub, NULL);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(c));
	priv(test)->c = c;
	return c;
}

/* Free the context of raw_ctx() early (to make another one). */
static void put_ctx(struct kunit *test)
{
	mmt_crypto_free(priv(test)->c);
	priv(test)->c = NULL;
}

static void mmt_crypto_exit(struct kunit *test)
{
	struct crypto_priv *p = priv(test);
	unsigned int i;

	if (!p)
		return;
	mmt_crypto_free(p->c);
	for (i = 0; i < MAX_CHAN; i++)
		mmt_chan_crypto_free(p->chan[i]);
	for (i = 0; i < MAX_VBUF; i++)
		vfree(p->vbuf[i]);
	memset(p, 0, sizeof(*p));
}

/* NIST SP 800-38A, Appendix F.1.1, ECB-AES128.Encrypt */
static const char *const *const sp800_38a_key = HEX("2b7e151628aed2a6abf7158809cf4f3c");
static const char *const *const sp800_38a_pt =
	HEX("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51",
	    "30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710");
static const char *const *const sp800_38a_ct =
	HEX("3ad77bb40d7a3660a89ecaf32466ef97f5d3d58503b9699de785895a96fdbaaf",
	    "43b1cd7f598ece23881b00e3ed0306887b0c785e27e8ad3f8223207104725dd4");

static void ecb_kat(struct kunit *test)
{
	u8 key[16], zero[16] = { 0 };
	u8 *pt = kunit_kzalloc(test, 64, GFP_KERNEL);
	u8 *ct = kunit_kzalloc(test, 64, GFP_KERNEL);
	u8 *out = kunit_kzalloc(test, 64, GFP_KERNEL);
	struct mmt_crypto *c;

	KUNIT_ASSERT_TRUE(test, pt && ct && out);
	unhex(sp800_38a_key, key);
	unhex(sp800_38a_pt, pt);
	unhex(sp800_38a_ct, ct);

	/* ENC subkey: all four blocks in one call, out of place. */
	c = raw_ctx(test, key, zero, zero);
	KUNIT_ASSERT_EQ(test, mmt_crypto_ecb(c, MMT_SUBKEY_ENC, pt, out, 64),
			0);
	KUNIT_EXPECT_EQ(test, memcmp(out, ct, 64), 0);
	put_ctx(test);

	/* MAC subkey, in place. */
	c = raw_ctx(test, zero, key, zero);
	memcpy(out, pt, 64);
	KUNIT_ASSERT_EQ(test, mmt_crypto_ecb(c, MMT_SUBKEY_MAC, out, out, 64),
			0);
	KUNIT_EXPECT_EQ(test, memcmp(out, ct, 64), 0);
	/* ENC subkey (zero key) gives something else: keys are separate. */
	memcpy(out, pt, 64);
	KUNIT_ASSERT_EQ(test, mmt_crypto_ecb(c, MMT_SUBKEY_ENC, out, out, 64),
			0);
	KUNIT_EXPECT_NE(test, memcmp(out, ct, 64), 0);
}

static void ecb_bad_args(struct kunit *test)
{
	u8 k[16] = { 1 };
	u8 *buf = kunit_kzalloc(test, MMT_CRYPTO_ECB_MAX + 16, GFP_KERNEL);
	struct mmt_crypto *c;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	c = raw_ctx(test, k, k, k);
	KUNIT_EXPECT_EQ(test, mmt_crypto_ecb(c, MMT_SUBKEY_ENC, buf, buf, 15),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, mmt_crypto_ecb(c, MMT_SUBKEY_SEAL, buf, buf, 16),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, mmt_crypto_ecb(c, MMT_SUBKEY_ENC, buf, buf,
					     MMT_CRYPTO_ECB_MAX + 16),
			-EINVAL);
	/* Nothing written by a rejected call; length 0 is a no-op. */
	KUNIT_EXPECT_EQ(test, buf[0], 0);
	KUNIT_EXPECT_EQ(test, mmt_crypto_ecb(c, MMT_SUBKEY_ENC, buf, buf, 0),
			0);
	KUNIT_EXPECT_EQ(test, buf[0], 0);
	/* The largest call works and changes every block. */
	KUNIT_EXPECT_EQ(test, mmt_crypto_ecb(c, MMT_SUBKEY_ENC, buf, buf,
					     MMT_CRYPTO_ECB_MAX), 0);
	KUNIT_EXPECT_EQ(test, memcmp(buf, buf + MMT_CRYPTO_ECB_MAX - 16, 16),
			0);	/* ECB: equal inputs, equal outputs */
	KUNIT_EXPECT_NE(test, buf[0] | buf[1] | buf[2] | buf[3], 0);
}

/* NIST SP 800-38A, Appendix F.5.1, CTR-AES128.Encrypt (same key and text) */
static const char *const *const sp800_38a_ctr_iv =
	HEX("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff");
static const char *const *const sp800_38a_ctr_ct =
	HEX("874d6191b620e3261bef6864990db6ce9806f66b7970fdff8617187bb9fffdff",
	    "5ae4df3edbd5d35e5b4f09020db03eab1e031dda2fbe03d1792170a0f3009cee");

/*
 * mmt_crypto_ctr() gives the keystream: XOR the standard's plaintext and it
 * is the standard's ciphertext (its counter blocks carry out of the last
 * byte).  mmt_crypto_ctr_xor() encrypts and decrypts (F.5.1, F.5.2), out of
 * place and in place.  Under the ENC subkey only; the IV is not changed.
 */
static void ctr_kat(struct kunit *test)
{
	u8 key[16], iv[16], iv0[16], zero[16] = { 0 };
	u8 *pt = kunit_kzalloc(test, 64, GFP_KERNEL);
	u8 *ct = kunit_kzalloc(test, 64, GFP_KERNEL);
	u8 *out = kunit_kzalloc(test, 64, GFP_KERNEL);
	struct mmt_crypto *c;
	int i;

	KUNIT_ASSERT_TRUE(test, pt && ct && out);
	unhex(sp800_38a_key, key);
	unhex(sp800_38a_pt, pt);
	unhex(sp800_38a_ctr_ct, ct);
	unhex(sp800_38a_ctr_iv, iv);
	memcpy(iv0, iv, 16);
	c = raw_ctx(test, key, zero, zero);
	KUNIT_ASSERT_EQ(test, mmt_crypto_ctr(c, iv, out, 64), 0);
	for (i = 0; i < 64; i++)
		out[i] ^= pt[i];
	KUNIT_EXPECT_EQ(test, memcmp(out, ct, 64), 0);
	KUNIT_ASSERT_EQ(test, mmt_crypto_ctr_xor(c, iv, pt, out, 64), 0);
	KUNIT_EXPECT_EQ(test, memcmp(out, ct, 64), 0);
	KUNIT_ASSERT_EQ(test, mmt_crypto_ctr_xor(c, iv, out, out, 64), 0);
	KUNIT_EXPECT_EQ(test, memcmp(out, pt, 64), 0);
	KUNIT_ASSERT_EQ(test, mmt_crypto_ctr_xor(c, iv, ct, out, 48), 0);
	KUNIT_EXPECT_EQ(test, memcmp(out, pt, 48), 0);
	KUNIT_EXPECT_EQ(test, memcmp(iv, iv0, 16), 0);
	/* The same key as MAC subkey only: the keystream is another one. */
	put_ctx(test);
	c = raw_ctx(test, zero, key, zero);
	KUNIT_ASSERT_EQ(test, mmt_crypto_ctr(c, iv, out, 64), 0);
	for (i = 0; i < 64; i++)
		out[i] ^= pt[i];
	KUNIT_EXPECT_NE(test, memcmp(out, ct, 64), 0);
}

/*
 * Long calls: mmt_crypto_ctr_xor() is @in XOR mmt_crypto_ctr()'s keystream
 * from the same IV, across the 2^64 carry of the counter block, in place
 * and out of place, for lengths up to MMT_CRYPTO_ECB_MAX and from a
 * static buffer (which the kernel build may have to take through its
 * bounce buffer, 1 KiB at a time, chaining the counter).
 */
static u8 ctr_xor_static[4096 + 48];

static void ctr_xor_long(struct kunit *test)
{
	static const u32 lens[] = { 16, 1040, 4096 + 48, MMT_CRYPTO_ECB_MAX };
	u8 k[16] = { 9, 8, 7 }, iv[16];
	u8 *ks = kunit_kzalloc(test, MMT_CRYPTO_ECB_MAX, GFP_KERNEL);
	u8 *in = kunit_kzalloc(test, MMT_CRYPTO_ECB_MAX, GFP_KERNEL);
	u8 *out = kunit_kzalloc(test, MMT_CRYPTO_ECB_MAX, GFP_KERNEL);
	struct mmt_crypto *c;
	unsigned int i, j;

	KUNIT_ASSERT_TRUE(test, ks && in && out);
	c = raw_ctx(test, k, k, k);
	put_unaligned_be64(0x0123456789abcdefull, iv);
	put_unaligned_be64(0xffffffffffffffc0ull, iv + 8);
	for (i = 0; i < MMT_CRYPTO_ECB_MAX; i++)
		in[i] = (u8)(i * 131 + 7);
	for (i = 0; i < sizeof(ctr_xor_static); i++)
		ctr_xor_static[i] = in[i];
	KUNIT_ASSERT_EQ(test, mmt_crypto_ctr(c, iv, ks, MMT_CRYPTO_ECB_MAX),
			0);
	for (j = 0; j < ARRAY_SIZE(lens); j++) {
		KUNIT_ASSERT_EQ(test, mmt_crypto_ctr_xor(c, iv, in, out,
							 lens[j]), 0);
		for (i = 0; i < lens[j]; i++)
			if (out[i] != (in[i] ^ ks[i]))
				break;
		KUNIT_EXPECT_EQ_MSG(test, i, lens[j], "%u bytes", lens[j]);
		KUNIT_ASSERT_EQ(test, mmt_crypto_ctr_xor(c, iv, out, out,
							 lens[j]), 0);
		KUNIT_EXPECT_EQ_MSG(test, memcmp(out, in, lens[j]), 0,
				    "in place, %u bytes", lens[j]);
	}
	KUNIT_ASSERT_EQ(test, mmt_crypto_ctr_xor(c, iv, ctr_xor_static, out,
						 sizeof(ctr_xor_static)), 0);
	for (i = 0; i < sizeof(ctr_xor_static); i++)
		if (out[i] != (in[i] ^ ks[i]))
			break;
	KUNIT_EXPECT_EQ(test, i, sizeof(ctr_xor_static));
	KUNIT_ASSERT_EQ(test, mmt_crypto_ctr_xor(c, iv, ctr_xor_static,
						 ctr_xor_static,
						 sizeof(ctr_xor_static)), 0);
	KUNIT_EXPECT_EQ(test, memcmp(ctr_xor_static, out,
				     sizeof(ctr_xor_static)), 0);
}

/*
 * Across the 32-bit and 64-bit boundaries of the counter block, and the
 * 128-bit wrap, the keystream is ECB (checked by ecb_kat) over the counter
 * incremented as one big-endian 128-bit integer, in both builds: the
 * kernel's by8 AES-NI code and OpenSSL's ctr32 code handle the carries on
 * their own paths.  Calls of 1 block to 48 blocks and one of
 * MMT_CRYPTO_ECB_MAX bytes (many pages) starting just below each boundary.
 */
static void ctr_carry(struct kunit *test)
{
	static const u64 starts[][2] = {
		{ 0x0123456789abcdefull, 0x00000000fffffffaull },	/* 2^32 */
		{ 0x0123456789abcdefull, 0xfffffffffffffff3ull },	/* 2^64 */
		{ 0xffffffffffffffffull, 0xfffffffffffffffeull },	/* 2^128 */
	};
	static const u32 lens[] = { 16, 48, 768, MMT_CRYPTO_ECB_MAX };
	u8 k[16] = { 7, 6, 5 }, iv[16];
	u8 *a = kunit_kzalloc(test, MMT_CRYPTO_ECB_MAX, GFP_KERNEL);
	u8 *b = kunit_kzalloc(test, MMT_CRYPTO_ECB_MAX, GFP_KERNEL);
	struct mmt_crypto *c;
	unsigned int i, j, n;

	KUNIT_ASSERT_TRUE(test, a && b);
	c = raw_ctx(test, k, k, k);
	for (i = 0; i < ARRAY_SIZE(starts); i++) {
		for (j = 0; j < ARRAY_SIZE(lens); j++) {
			u64 hi = starts[i][0], lo = starts[i][1];

			for (n = 0; n < lens[j] / 16; n++) {
				put_unaligned_be64(hi, b + 16 * n);
				put_unaligned_be64(lo, b + 16 * n + 8);
				if (!++lo)
					hi++;
			}
			KUNIT_ASSERT_EQ(test, mmt_crypto_ecb(c, MMT_SUBKEY_ENC,
							     b, b, lens[j]), 0);
			put_unaligned_be64(starts[i][0], iv);
			put_unaligned_be64(starts[i][1], iv + 8);
			KUNIT_ASSERT_EQ(test, mmt_crypto_ctr(c, iv, a, lens[j]),
					0);
			KUNIT_EXPECT_EQ_MSG(test, memcmp(a, b, lens[j]), 0,
					    "start %u, %u bytes", i, lens[j]);
		}
	}
}

static void ctr_bad_args(struct kunit *test)
{
	u8 k[16] = { 1 }, iv[16] = { 2 };
	u8 *buf = kunit_kzalloc(test, MMT_CRYPTO_ECB_MAX + 16, GFP_KERNEL);
	struct mmt_crypto *c;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	c = raw_ctx(test, k, k, k);
	KUNIT_EXPECT_EQ(test, mmt_crypto_ctr(c, iv, buf, 15), -EINVAL);
	KUNIT_EXPECT_EQ(test, mmt_crypto_ctr(c, iv, buf,
					     MMT_CRYPTO_ECB_MAX + 16), -EINVAL);
	KUNIT_EXPECT_EQ(test, mmt_crypto_ctr(c, iv, buf, 0), 0);
	KUNIT_EXPECT_EQ(test, mmt_crypto_ctr_xor(c, iv, buf, buf, 15), -EINVAL);
	KUNIT_EXPECT_EQ(test, mmt_crypto_ctr_xor(c, iv, buf, buf,
						 MMT_CRYPTO_ECB_MAX + 16),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, mmt_crypto_ctr_xor(c, iv, buf, buf, 0), 0);
	/* Nothing written by a rejected or empty call. */
	KUNIT_EXPECT_EQ(test, buf[0] | buf[15] | buf[MMT_CRYPTO_ECB_MAX], 0);
}

/*
 * The Galois/Counter Mode of Operation (GCM), McGrew and Viega, revised
 * 2005, Appendix B, AES-128 test cases 1-4.
 */
struct gcm_vec {
	const char *name;
	const char *const *key, *const *iv, *const *ad, *const *pt;
	const char *const *ct, *const *tag;
};

static const struct gcm_vec gcm_vecs[] = {
	{ "gcm-spec-tc1", HEX("00000000000000000000000000000000"),
	  HEX("000000000000000000000000"), HEX(""), HEX(""), HEX(""),
	  HEX("58e2fccefa7e3061367f1d57a4e7455a") },
	{ "gcm-spec-tc2", HEX("00000000000000000000000000000000"),
	  HEX("000000000000000000000000"), HEX(""),
	  HEX("00000000000000000000000000000000"),
	  HEX("0388dace60b6a392f328c2b971b2fe78"),
	  HEX("ab6e47d42cec13bdf53a67b21257bddf") },
	{ "gcm-spec-tc3", HEX("feffe9928665731c6d6a8f9467308308"),
	  HEX("cafebabefacedbaddecaf888"), HEX(""),
	  HEX("d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72",
	      "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255"),
	  HEX("42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e",
	      "21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091473f5985"),
	  HEX("4d5c2af327cd64a62cf35abd2ba6fab4") },
	{ "gcm-spec-tc4", HEX("feffe9928665731c6d6a8f9467308308"),
	  HEX("cafebabefacedbaddecaf888"),
	  HEX("feedfacedeadbeeffeedfacedeadbeefabaddad2"),
	  HEX("d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72",
	      "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39"),
	  HEX("42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e",
	      "21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091"),
	  HEX("5bc94fbc3221a5db94fae95ae7121a47") },
};

static void gcm_desc(const struct gcm_vec *v, char *desc)
{
	strcpy(desc, v->name);
}

KUNIT_ARRAY_PARAM(gcm, gcm_vecs, gcm_desc);

struct gcm_bufs {
	u8 key[16], iv[12], ad[64], pt[64], ct[80], out[80], back[80];
	size_t ad_len, pt_len;
};

static struct gcm_bufs *gcm_load(struct kunit *test, const struct gcm_vec *v)
{
	struct gcm_bufs *b = kunit_kzalloc(test, sizeof(*b), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, b);
	unhex(v->key, b->key);
	unhex(v->iv, b->iv);
	b->ad_len = unhex(v->ad, b->ad);
	b->pt_len = unhex(v->pt, b->pt);
	KUNIT_ASSERT_EQ(test, unhex(v->ct, b->ct), b->pt_len);
	KUNIT_ASSERT_EQ(test, unhex(v->tag, b->ct + b->pt_len), 16);
	return b;
}

static void gcm_kat(struct kunit *test)
{
	const struct gcm_vec *v = test->param_value;
	struct gcm_bufs *b = gcm_load(test, v);
	u8 zero[16] = { 0 };
	struct mmt_crypto *c = raw_ctx(test, zero, zero, b->key);

	KUNIT_ASSERT_EQ(test, mmt_crypto_seal(c, b->iv, b->ad, b->ad_len,
					      b->pt, b->pt_len, b->out), 0);
	KUNIT_EXPECT_EQ(test, memcmp(b->out, b->ct, b->pt_len + 16), 0);
	memset(b->back, 0xa5, sizeof(b->back));
	KUNIT_ASSERT_EQ(test, mmt_crypto_unseal(c, b->iv, b->ad, b->ad_len,
						b->ct, b->pt_len, b->back), 0);
	KUNIT_EXPECT_EQ(test, memcmp(b->back, b->pt, b->pt_len), 0);
	/* Nothing written past the plaintext. */
	KUNIT_EXPECT_EQ(test, b->back[b->pt_len], 0xa5);
}

/* Any flipped bit of tag, ciphertext, AD or nonce: -EBADMSG, pt intact. */
static void gcm_bad_tag(struct kunit *test)
{
	struct gcm_bufs *b = gcm_load(test, &gcm_vecs[3]);
	u8 zero[16] = { 0 }, guard[64];
	struct mmt_crypto *c = raw_ctx(test, zero, zero, b->key);
	size_t where[] = { b->pt_len, b->pt_len + 15, 0, b->pt_len - 1 };
	unsigned int i;

	memset(guard, 0x5a, sizeof(guard));
	for (i = 0; i < ARRAY_SIZE(where); i++) {
		memcpy(b->out, b->ct, b->pt_len + 16);
		b->out[where[i]] ^= 0x01;
		memset(b->back, 0x5a, 64);
		KUNIT_EXPECT_EQ(test, mmt_crypto_unseal(c, b->iv, b->ad,
							b->ad_len, b->out,
							b->pt_len, b->back),
				-EBADMSG);
		KUNIT_EXPECT_EQ(test, memcmp(b->back, guard, 64), 0);
	}
	b->ad[0] ^= 0x80;
	KUNIT_EXPECT_EQ(test, mmt_crypto_unseal(c, b->iv, b->ad, b->ad_len,
						b->ct, b->pt_len, b->back),
			-EBADMSG);
	b->ad[0] ^= 0x80;
	b->iv[11] ^= 1;
	KUNIT_EXPECT_EQ(test, mmt_crypto_unseal(c, b->iv, b->ad, b->ad_len,
						b->ct, b->pt_len, b->back),
			-EBADMSG);
	KUNIT_EXPECT_EQ(test, memcmp(b->back, guard, 64), 0);
	b->iv[11] ^= 1;
	/* The untouched input still opens: the context is not damaged. */
	KUNIT_EXPECT_EQ(test, mmt_crypto_unseal(c, b->iv, b->ad, b->ad_len,
						b->ct, b->pt_len, b->back), 0);
	KUNIT_EXPECT_EQ(test, memcmp(b->back, b->pt, b->pt_len), 0);
	/* Too long for the bounce buffer. */
	KUNIT_EXPECT_EQ(test, mmt_crypto_seal(c, b->iv, b->ad,
					      MMT_CRYPTO_SEAL_MAX, b->pt, 1,
					      b->out), -EINVAL);
}

/* RFC 5869, Appendix A, test cases 1-3 (HKDF-SHA256) */
struct hkdf_vec {
	const char *name;
	const char *const *ikm, *const *salt, *const *info, *const *okm;
};

static const struct hkdf_vec hkdf_vecs[] = {
	{ "rfc5869-a1",
	  HEX("0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b"),
	  HEX("000102030405060708090a0b0c"), HEX("f0f1f2f3f4f5f6f7f8f9"),
	  HEX("3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf",
	      "34007208d5b887185865") },
	{ "rfc5869-a2",
	  HEX("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
	      "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f",
	      "404142434445464748494a4b4c4d4e4f"),
	  HEX("606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f",
	      "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f",
	      "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf"),
	  HEX("b0b1b2b3b4b5b6b7b8b9babbbcbdbebfc0c1c2c3c4c5c6c7c8c9cacbcccdcecf",
	      "d0d1d2d3d4d5d6d7d8d9dadbdcdddedfe0e1e2e3e4e5e6e7e8e9eaebecedeeef",
	      "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff"),
	  HEX("b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c",
	      "59045a99cac7827271cb41c65e590e09da3275600c2f09b8367793a9aca3db71",
	      "cc30c58179ec3e87c14c01d5c1f3434f1d87") },
	{ "rfc5869-a3",
	  HEX("0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b"), HEX(""), HEX(""),
	  HEX("8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d",
	      "9d201395faa4b61a96c8") },
};

static void hkdf_desc(const struct hkdf_vec *v, char *desc)
{
	strcpy(desc, v->name);
}

KUNIT_ARRAY_PARAM(hkdf, hkdf_vecs, hkdf_desc);

static void hkdf_kat(struct kunit *test)
{
	const struct hkdf_vec *v = test->param_value;
	u8 *buf = kunit_kzalloc(test, 5 * 128, GFP_KERNEL);
	u8 *ikm, *salt, *info, *okm, *out;
	size_t ikm_len, salt_len, info_len, okm_len;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	ikm = buf;
	salt = buf + 128;
	info = buf + 256;
	okm = buf + 384;
	out = buf + 512;
	ikm_len = unhex(v->ikm, ikm);
	salt_len = unhex(v->salt, salt);
	info_len = unhex(v->info, info);
	okm_len = unhex(v->okm, okm);
	KUNIT_ASSERT_EQ(test, mmt_crypto_hkdf_sha256(ikm, ikm_len,
						     salt_len ? salt : NULL,
						     salt_len, info, info_len,
						     out, okm_len), 0);
	KUNIT_EXPECT_EQ(test, memcmp(out, okm, okm_len), 0);
	/* A shorter output is a prefix (RFC 5869 2.3). */
	memset(out, 0, 128);
	KUNIT_ASSERT_EQ(test, mmt_crypto_hkdf_sha256(ikm, ikm_len,
						     salt_len ? salt : NULL,
						     salt_len, info, info_len,
						     out, 16), 0);
	KUNIT_EXPECT_EQ(test, memcmp(out, okm, 16), 0);
	KUNIT_EXPECT_EQ(test, out[16], 0);
	KUNIT_EXPECT_EQ(test, mmt_crypto_hkdf_sha256(ikm, ikm_len, salt,
						     salt_len, info, info_len,
						     out, 255 * 32 + 1),
			-EINVAL);
}

/*
 * mmt_crypto_alloc() = HKDF-SHA256(key, "mmt-v1 salt", "mmt v1 <name>")
 * subkeys, checked through the ECB outputs of a raw context built from an
 * independent HKDF computation.
 */
/*
 * The format v2 schedule: root = HKDF(key, "mmt-v2 salt", "mmt v2 keyroot",
 * 32), subkey i = HKDF(root, "mmt-v2 keying", "mmt v2 enc" / "mac" /
 * "seal" || keying salt, 16).  Expected subkeys for key byte i = 7i + 1 and salt MMT_TEST_KSALT
 * computed independently with Python's hmac and hashlib.
 */
static const u8 v2_subkeys[2][48] = {
	{ 0x96, 0x28, 0xff, 0x6b, 0xcb, 0x24, 0x12, 0x3e, 0xe4, 0xd8, 0x94,
	  0x5f, 0xe8, 0xc3, 0x5e, 0x19, 0x79, 0xc5, 0x42, 0x93, 0x92, 0x4d,
	  0xaa, 0x2d, 0x01, 0x55, 0xc2, 0xa9, 0xb4, 0x0f, 0x13, 0x2d, 0xe2,
	  0x58, 0x96, 0x86, 0xa4, 0x24, 0x85, 0xb1, 0x9d, 0x0d, 0x97, 0xf3,
	  0xd0, 0xe7, 0xaa, 0x7f },
	{ 0x6b, 0xea, 0xd0, 0x38, 0xaf, 0x67, 0x23, 0xd8, 0xa3, 0xab, 0x6c,
	  0xac, 0x12, 0x10, 0x08, 0x87, 0x13, 0xe2, 0x07, 0x1f, 0x2e, 0xa0,
	  0xd7, 0x02, 0x60, 0x81, 0xd9, 0xc9, 0xdd, 0x82, 0x1d, 0xd0, 0xe0,
	  0x29, 0x5f, 0x99, 0x69, 0xe1, 0x0a, 0x66, 0xba, 0xd4, 0x4a, 0xf3,
	  0x46, 0xdf, 0x0d, 0x15 },
};

static void alloc_derives_subkeys(struct kunit *test)
{
	static const char *const labels[] = {
	    "mmt v2 enc", "mmt v2 mac", "mmt v2 seal"
	};
	u8 key[32], sub[3 * 16], root[MMT_KEY_ROOT_BYTES];
	u8 *in = kunit_kzalloc(test, 64, GFP_KERNEL);
	u8 *a = kunit_kzalloc(test, 64, GFP_KERNEL);
	u8 *b = kunit_kzalloc(test, 64, GFP_KERNEL);
	struct mmt_crypto *c, *raw;
	unsigned int i, k;

	KUNIT_ASSERT_TRUE(test, in && a && b);
	for (i = 0; i < sizeof(key); i++)
		key[i] = (u8)(i * 7 + 1);
	for (i = 0; i < 64; i++)
		in[i] = (u8)i;
	for (k = 16; k <= 32; k += 16) {
		KUNIT_ASSERT_EQ(test, mmt_key_root(key, k, root), 0);
		for (i = 0; i < 3; i++) {
			u8 info[32];
			size_t n = strlen(labels[i]);
			int err;

			memcpy(info, labels[i], n);
			memcpy(info + n, MMT_TEST_KSALT, MMT_KSALT_BYTES);
			err = mmt_crypto_hkdf_sha256(root, sizeof(root),
						     (const u8 *)"mmt-v2 keying",
						     13, info,
						     n + MMT_KSALT_BYTES,
						     sub + 16 * i, 16);
			KUNIT_ASSERT_EQ(test, err, 0);
		}
		KUNIT_EXPECT_EQ(test, memcmp(sub, v2_subkeys[k / 16 - 1],
					     sizeof(sub)), 0);
		c = mmt_crypto_alloc(key, k, MMT_TEST_KSALT);
		KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(c));
		raw = mmt_crypto_alloc_raw(sub, NULL);
		if (IS_ERR_OR_NULL(raw))
			mmt_crypto_free(c);
		KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(raw));
		for (i = MMT_SUBKEY_ENC; i <= MMT_SUBKEY_MAC; i++) {
			KUNIT_EXPECT_EQ(test, mmt_crypto_ecb(c, i, in, a, 64), 0);
			KUNIT_EXPECT_EQ(test, mmt_crypto_ecb(raw, i, in, b, 64),
					0);
			KUNIT_EXPECT_EQ(test, memcmp(a, b, 64), 0);
		}
		KUNIT_EXPECT_EQ(test, memcmp(mmt_crypto_hash_key(c),
					     mmt_crypto_hash_key(raw),
					     MMT_ALL_KEYS * 8), 0);
		KUNIT_EXPECT_EQ(test, mmt_crypto_seal(c, in, in, 16, in + 16,
						      16, a), 0);
		KUNIT_EXPECT_EQ(test, mmt_crypto_seal(raw, in, in, 16, in + 16,
						      16, b), 0);
		KUNIT_EXPECT_EQ(test, memcmp(a, b, 32), 0);
		KUNIT_EXPECT_EQ(test, memcmp(mmt_crypto_ksalt(c),
					     MMT_TEST_KSALT,
					     MMT_KSALT_BYTES), 0);
		mmt_crypto_free(raw);
		/* another keying salt: other subkeys (ENC pads differ) */
		raw = mmt_crypto_alloc_root(root, (const u8 *)"another ksalt..!");
		if (IS_ERR_OR_NULL(raw))
			mmt_crypto_free(c);
		KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(raw));
		KUNIT_EXPECT_EQ(test, mmt_crypto_ecb(c, MMT_SUBKEY_ENC, in, a,
						     64), 0);
		KUNIT_EXPECT_EQ(test, mmt_crypto_ecb(raw, MMT_SUBKEY_ENC, in,
						     b, 64), 0);
		KUNIT_EXPECT_NE(test, memcmp(a, b, 64), 0);
		mmt_crypto_free(raw);
		mmt_crypto_free(c);
	}
	memzero_explicit(root, sizeof(root));
}

static void alloc_bad_key(struct kunit *test)
{
	u8 key[33] = { 0 };
	struct mmt_crypto *c;

	c = mmt_crypto_alloc(key, 15, MMT_TEST_KSALT);
	KUNIT_EXPECT_TRUE(test, IS_ERR(c));
	KUNIT_EXPECT_EQ(test, PTR_ERR(c), -EINVAL);
	c = mmt_crypto_alloc(key, 24, MMT_TEST_KSALT);
	KUNIT_EXPECT_EQ(test, PTR_ERR(c), -EINVAL);
	c = mmt_crypto_alloc(key, 33, MMT_TEST_KSALT);
	KUNIT_EXPECT_EQ(test, PTR_ERR(c), -EINVAL);
	c = mmt_crypto_alloc(NULL, 16, MMT_TEST_KSALT);
	KUNIT_EXPECT_EQ(test, PTR_ERR(c), -EINVAL);
	mmt_crypto_free(NULL);	/* tolerated */
}

/* Hash key: below 2^61 - 1, key-dependent, no repeated values. */
static void hash_key_sane(struct kunit *test)
{
	u8 k1[16] = { 1 }, k2[16] = { 2 };
	struct mmt_crypto *a, *b;
	const u64 *ka, *kb;
	unsigned int i, same = 0, dup = 0;

	a = mmt_crypto_alloc(k1, 16, MMT_TEST_KSALT);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(a));
	priv(test)->c = a;
	b = mmt_crypto_alloc(k2, 16, MMT_TEST_KSALT);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(b));
	ka = mmt_crypto_hash_key(a);
	kb = mmt_crypto_hash_key(b);
	for (i = 0; i < MMT_HASH_KEYS; i++) {
		KUNIT_EXPECT_LT(test, ka[i], (1ull << 61) - 1);
		same += ka[i] == kb[i];
		if (i)
			dup += ka[i] == ka[i - 1];
	}
	KUNIT_EXPECT_EQ(test, same, 0u);
	KUNIT_EXPECT_EQ(test, dup, 0u);
	mmt_crypto_free(b);
}

/* ------------------------------------------------------ secure channel */

/* A channel context from a raw key and salt, freed in exit. */
static struct mmt_chan_crypto *chan_raw(struct kunit *test, const u8 *key,
					const u8 *salt)
{
	struct crypto_priv *p = priv(test);
	struct mmt_chan_crypto *ch;
	unsigned int i;

	for (i = 0; i < MAX_CHAN && p->chan[i]; i++)
		;
	KUNIT_ASSERT_LT(test, i, MAX_CHAN);
	ch = mmt_chan_crypto_alloc_raw(key, salt);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(ch));
	p->chan[i] = ch;
	return ch;
}

/* A zeroed vmalloc'd buffer (the kernel maps it page by page), freed in exit. */
static u8 *vbuf(struct kunit *test, size_t len)
{
	struct crypto_priv *p = priv(test);
	unsigned int i;

	for (i = 0; i < MAX_VBUF && p->vbuf[i]; i++)
		;
	KUNIT_ASSERT_LT(test, i, MAX_VBUF);
	p->vbuf[i] = vzalloc(len);
	KUNIT_ASSERT_NOT_NULL(test, p->vbuf[i]);
	return p->vbuf[i];
}

static size_t count_nonzero(const u8 *buf, size_t len)
{
	size_t i, n = 0;

	for (i = 0; i < len; i++)
		n += buf[i] != 0;
	return n;
}

static size_t count_ne(const u8 *buf, u8 v, size_t len)
{
	size_t i, n = 0;

	for (i = 0; i < len; i++)
		n += buf[i] != v;
	return n;
}

/*
 * The GCM spec's test cases 1-4 through the channel: IV = salt || be64 seq,
 * so IV cafebabefacedbaddecaf888 is salt cafebabe, seq 0xfacedbaddecaf888.
 * Out of place and in place, each on a fresh context (a seq seals once).
 */
static void chan_kat(struct kunit *test)
{
	const struct gcm_vec *v = test->param_value;
	struct gcm_bufs *b = gcm_load(test, v);
	u64 seq = get_unaligned_be64(b->iv + MMT_CHAN_SALT_BYTES);
	size_t n = b->pt_len;
	struct mmt_chan_crypto *tx, *rx;

	tx = chan_raw(test, b->key, b->iv);
	rx = chan_raw(test, b->key, b->iv);
	memset(b->out, 0xa5, sizeof(b->out));
	KUNIT_ASSERT_EQ(test, mmt_chan_seal(tx, seq, b->ad, b->ad_len, b->pt,
					    b->out, n), 0);
	KUNIT_EXPECT_EQ(test, memcmp(b->out, b->ct, n + 16), 0);
	if (n + 16 < sizeof(b->out))	/* nothing written past the tag */
		KUNIT_EXPECT_EQ(test, b->out[n + 16], 0xa5);
	memset(b->back, 0xa5, sizeof(b->back));
	KUNIT_ASSERT_EQ(test, mmt_chan_open(rx, seq, b->ad, b->ad_len, b->ct,
					    b->back, n), 0);
	KUNIT_EXPECT_EQ(test, memcmp(b->back, b->pt, n), 0);
	KUNIT_EXPECT_EQ(test, b->back[n], 0xa5);

	/* In place: the text buffer gets the tag appended, then opens back. */
	tx = chan_raw(test, b->key, b->iv);
	rx = chan_raw(test, b->key, b->iv);
	memset(b->out, 0xa5, sizeof(b->out));
	memcpy(b->out, b->pt, n);
	KUNIT_ASSERT_EQ(test, mmt_chan_seal(tx, seq, b->ad, b->ad_len, b->out,
					    b->out, n), 0);
	KUNIT_EXPECT_EQ(test, memcmp(b->out, b->ct, n + 16), 0);
	KUNIT_ASSERT_EQ(test, mmt_chan_open(rx, seq, b->ad, b->ad_len, b->out,
					    b->out, n), 0);
	KUNIT_EXPECT_EQ(test, memcmp(b->out, b->pt, n), 0);
}

/* Large messages: sizes and where the buffers come from. */
struct chan_big {
	const char *name;
	size_t len;	/* bytes of text */
	size_t off;	/* start offset into the allocation (not page-aligned) */
	bool vmalloc;	/* vzalloc'd (PMO memory) or kmalloc'd */
};

static const struct chan_big chan_bigs[] = {
	{ "1MiB-vmalloc", 1u << 20, 0, true },
	{ "1MiB-13-vmalloc-off5", (1u << 20) - 13, 5, true },
	{ "3pages+100-kmalloc-off3", 3 * 4096 + 100, 3, false },
};

static void chan_big_desc(const struct chan_big *v, char *desc)
{
	strcpy(desc, v->name);
}

KUNIT_ARRAY_PARAM(chan_big, chan_bigs, chan_big_desc);

/*
 * Round trip, then a flipped bit at the first, a middle and the last byte
 * of the text and the last byte of the tag: -EBADMSG with the output
 * zeroed every time, and the intact message still opens afterwards (a
 * failed open changes nothing); then its replay is refused.
 */
static void chan_large(struct kunit *test)
{
	const struct chan_big *v = test->param_value;
	size_t len = v->len, alloc = v->len + 16 + v->off, i, w;
	size_t where[] = { 0, len / 2, len - 1, len + 15 };
	u8 key[16], salt[4] = { 1, 2, 3, 4 }, ad[40];
	struct mmt_chan_crypto *tx, *rx;
	u8 *pt, *ct, *back;

	for (i = 0; i < 16; i++)
		key[i] = (u8)(0x40 + i);
	for (i = 0; i < sizeof(ad); i++)
		ad[i] = (u8)(0xa0 ^ i);
	if (v->vmalloc) {
		pt = vbuf(test, alloc);
		ct = vbuf(test, alloc);
		back = vbuf(test, alloc);
	} else {
		pt = kunit_kzalloc(test, alloc, GFP_KERNEL);
		ct = kunit_kzalloc(test, alloc, GFP_KERNEL);
		back = kunit_kzalloc(test, alloc, GFP_KERNEL);
		KUNIT_ASSERT_TRUE(test, pt && ct && back);
	}
	pt += v->off;
	ct += v->off;
	back += v->off;
	for (i = 0; i < len; i++)
		pt[i] = (u8)(i * 131 + (i >> 12));
	tx = chan_raw(test, key, salt);
	rx = chan_raw(test, key, salt);

	KUNIT_ASSERT_EQ(test, mmt_chan_seal(tx, 1, ad, sizeof(ad), pt, ct,
					    len), 0);
	/* Not the plaintext (a keystream byte is zero 1/256 of the time). */
	KUNIT_EXPECT_GT(test, count_ne(ct, 0, 64) + 0u, 48u);
	for (i = w = 0; i < len; i++)
		w += ct[i] == pt[i];
	KUNIT_EXPECT_LT(test, w, len / 64);

	for (w = 0; w < ARRAY_SIZE(where); w++) {
		ct[where[w]] ^= 0x10;
		memset(back, 0x5a, len);
		KUNIT_EXPECT_EQ(test, mmt_chan_open(rx, 1, ad, sizeof(ad), ct,
						    back, len), -EBADMSG);
		KUNIT_EXPECT_EQ(test, count_nonzero(back, len), 0u);
		ct[where[w]] ^= 0x10;
	}
	memset(back, 0x5a, len + 16);
	KUNIT_ASSERT_EQ(test, mmt_chan_open(rx, 1, ad, sizeof(ad), ct, back,
					    len), 0);
	KUNIT_EXPECT_EQ(test, memcmp(back, pt, len), 0);
	KUNIT_EXPECT_EQ(test, count_ne(back + len, 0x5a, 16), 0u);
	memset(back, 0x5a, len);
	KUNIT_EXPECT_EQ(test, mmt_chan_open(rx, 1, ad, sizeof(ad), ct, back,
					    len), -ESTALE);
	KUNIT_EXPECT_EQ(test, count_ne(back, 0x5a, len), 0u);
}

/*
 * Sequence numbers: a sealing context never reuses one (-EINVAL, output
 * untouched) and stops for good after U64_MAX (-EOVERFLOW); an opening
 * context refuses replays and older ones (-ESTALE, output untouched);
 * the seq is bound into the tag.
 */
static void chan_seq(struct kunit *test)
{
	u8 key[16] = { 9 }, salt[4] = { 0xca, 0xfe };
	u8 *pt = kunit_kzalloc(test, 64, GFP_KERNEL);
	u8 *m5 = kunit_kzalloc(test, 80, GFP_KERNEL);
	u8 *m6 = kunit_kzalloc(test, 80, GFP_KERNEL);
	u8 *mx = kunit_kzalloc(test, 80, GFP_KERNEL);
	u8 *back = kunit_kzalloc(test, 64, GFP_KERNEL);
	struct mmt_chan_crypto *tx, *rx;

	KUNIT_ASSERT_TRUE(test, pt && m5 && m6 && mx && back);
	memset(pt, 0x33, 64);
	tx = chan_raw(test, key, salt);
	rx = chan_raw(test, key, salt);

	/* 0 is a valid first seq, once. */
	KUNIT_EXPECT_EQ(test, mmt_chan_seal(tx, 0, NULL, 0, pt, mx, 64), 0);
	KUNIT_EXPECT_EQ(test, mmt_chan_seal(tx, 0, NULL, 0, pt, mx, 64),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, mmt_chan_seal(tx, 5, NULL, 0, pt, m5, 64), 0);
	memset(mx, 0x77, 80);
	KUNIT_EXPECT_EQ(test, mmt_chan_seal(tx, 5, NULL, 0, pt, mx, 64),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, mmt_chan_seal(tx, 4, NULL, 0, pt, mx, 64),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, count_ne(mx, 0x77, 80), 0u);
	KUNIT_EXPECT_EQ(test, mmt_chan_seal(tx, 6, NULL, 0, pt, m6, 64), 0);
	/* A fresh nonce per message: same text, other ciphertext and tag. */
	KUNIT_EXPECT_NE(test, memcmp(m5, m6, 64), 0);
	KUNIT_EXPECT_NE(test, memcmp(m5 + 64, m6 + 64, 16), 0);

	/* The seq is authenticated: m6 does not open as seq 7 (or 5). */
	KUNIT_EXPECT_EQ(test, mmt_chan_open(rx, 7, NULL, 0, m6, back, 64),
			-EBADMSG);
	KUNIT_EXPECT_EQ(test, mmt_chan_open(rx, 5, NULL, 0, m6, back, 64),
			-EBADMSG);
	/* Reorder: 6 first, then 5 is refused; replay of 6 is refused. */
	KUNIT_ASSERT_EQ(test, mmt_chan_open(rx, 6, NULL, 0, m6, back, 64), 0);
	KUNIT_EXPECT_EQ(test, memcmp(back, pt, 64), 0);
	memset(back, 0x77, 64);
	KUNIT_EXPECT_EQ(test, mmt_chan_open(rx, 5, NULL, 0, m5, back, 64),
			-ESTALE);
	KUNIT_EXPECT_EQ(test, mmt_chan_open(rx, 6, NULL, 0, m6, back, 64),
			-ESTALE);
	KUNIT_EXPECT_EQ(test, count_ne(back, 0x77, 64), 0u);

	/* The last seq: sealed once, then the context is used up. */
	KUNIT_EXPECT_EQ(test, mmt_chan_seal(tx, U64_MAX, NULL, 0, pt, mx, 64),
			0);
	KUNIT_EXPECT_EQ(test, mmt_chan_seal(tx, U64_MAX, NULL, 0, pt, m5, 64),
			-EOVERFLOW);
	KUNIT_EXPECT_EQ(test, mmt_chan_seal(tx, 7, NULL, 0, pt, m5, 64),
			-EOVERFLOW);
	KUNIT_ASSERT_EQ(test, mmt_chan_open(rx, U64_MAX, NULL, 0, mx, back,
					    64), 0);
	KUNIT_EXPECT_EQ(test, memcmp(back, pt, 64), 0);
	KUNIT_EXPECT_EQ(test, mmt_chan_open(rx, U64_MAX, NULL, 0, mx, back,
					    64), -ESTALE);
}

/*
 * mmt_chan_open_seq(): the sequence half of an open, for a receive that
 * opens on workers' contexts and orders on its own: a check leaves the
 * state alone, a take moves it, and neither passes an index not above
 * the last opened (by mmt_chan_open() or a take).
 */
static void chan_open_seq(struct kunit *test)
{
	u8 key[16] = { 9 }, salt[4] = { 1 };
	u8 *pt = kunit_kzalloc(test, 64, GFP_KERNEL);
	u8 *m3 = kunit_kzalloc(test, 80, GFP_KERNEL);
	u8 *back = kunit_kzalloc(test, 64, GFP_KERNEL);
	struct mmt_chan_crypto *tx, *rx, *w;

	KUNIT_ASSERT_TRUE(test, pt && m3 && back);
	tx = chan_raw(test, key, salt);
	rx = chan_raw(test, key, salt);
	w = chan_raw(test, key, salt);
	/* fresh: 0 passes; a check does not take it */
	KUNIT_EXPECT_EQ(test, mmt_chan_open_seq(rx, 0, false), 0);
	KUNIT_EXPECT_EQ(test, mmt_chan_open_seq(rx, 0, true), 0);
	KUNIT_EXPECT_EQ(test, mmt_chan_open_seq(rx, 0, false), -ESTALE);
	KUNIT_EXPECT_EQ(test, mmt_chan_open_seq(rx, 0, true), -ESTALE);
	KUNIT_EXPECT_EQ(test, mmt_chan_open_seq(rx, 2, false), 0);
	KUNIT_EXPECT_EQ(test, mmt_chan_open_seq(rx, 2, true), 0);
	/* a worker opens 3, the receive takes it; then 3 never again */
	KUNIT_ASSERT_EQ(test, mmt_chan_seal(tx, 3, NULL, 0, pt, m3, 64), 0);
	KUNIT_EXPECT_EQ(test, mmt_chan_open(w, 3, NULL, 0, m3, back, 64), 0);
	KUNIT_EXPECT_EQ(test, mmt_chan_open_seq(rx, 3, true), 0);
	KUNIT_EXPECT_EQ(test, mmt_chan_open(rx, 3, NULL, 0, m3, back, 64),
			-ESTALE);
	KUNIT_EXPECT_EQ(test, mmt_chan_open_seq(rx, 1, true), -ESTALE);
	/* and a take after an open: above it only */
	KUNIT_EXPECT_EQ(test, mmt_chan_open_seq(w, 3, true), -ESTALE);
	KUNIT_EXPECT_EQ(test, mmt_chan_open_seq(w, U64_MAX, true), 0);
	KUNIT_EXPECT_EQ(test, mmt_chan_open_seq(w, U64_MAX, false), -ESTALE);
}

/* The AD is authenticated: any change is -EBADMSG with the output zeroed. */
static void chan_ad(struct kunit *test)
{
	u8 key[16] = { 7 }, salt[4] = { 0 };
	u8 *ad = kunit_kzalloc(test, MMT_CHAN_AD_MAX, GFP_KERNEL);
	u8 *pt = kunit_kzalloc(test, 100, GFP_KERNEL);
	u8 *ct = kunit_kzalloc(test, 116, GFP_KERNEL);
	u8 *back = kunit_kzalloc(test, 100, GFP_KERNEL);
	struct mmt_chan_crypto *tx, *rx;
	size_t i;

	KUNIT_ASSERT_TRUE(test, ad && pt && ct && back);
	for (i = 0; i < MMT_CHAN_AD_MAX; i++)
		ad[i] = (u8)(i + 1);
	memset(pt, 0xee, 100);
	tx = chan_raw(test, key, salt);
	rx = chan_raw(test, key, salt);
	/* The largest AD is accepted. */
	KUNIT_ASSERT_EQ(test, mmt_chan_seal(tx, 3, ad, MMT_CHAN_AD_MAX, pt, ct,
					    100), 0);

	memset(back, 0x5a, 100);
	ad[MMT_CHAN_AD_MAX - 1] ^= 1;
	KUNIT_EXPECT_EQ(test, mmt_chan_open(rx, 3, ad, MMT_CHAN_AD_MAX, ct,
					    back, 100), -EBADMSG);
	KUNIT_EXPECT_EQ(test, count_nonzero(back, 100), 0u);
	ad[MMT_CHAN_AD_MAX - 1] ^= 1;
	memset(back, 0x5a, 100);
	KUNIT_EXPECT_EQ(test, mmt_chan_open(rx, 3, ad, MMT_CHAN_AD_MAX - 1, ct,
					    back, 100), -EBADMSG);
	KUNIT_EXPECT_EQ(test, count_nonzero(back, 100), 0u);
	memset(back, 0x5a, 100);
	KUNIT_EXPECT_EQ(test, mmt_chan_open(rx, 3, NULL, 0, ct, back, 100),
			-EBADMSG);
	KUNIT_EXPECT_EQ(test, count_nonzero(back, 100), 0u);
	KUNIT_ASSERT_EQ(test, mmt_chan_open(rx, 3, ad, MMT_CHAN_AD_MAX, ct,
					    back, 100), 0);
	KUNIT_EXPECT_EQ(test, memcmp(back, pt, 100), 0);
}

/* Rejected arguments: -EINVAL, nothing written, no seq consumed. */
static void chan_bad_args(struct kunit *test)
{
	u8 key[16] = { 5 }, salt[4] = { 0 };
	u8 *buf = kunit_kzalloc(test, 4096, GFP_KERNEL);
	u8 *back = kunit_kzalloc(test, 64, GFP_KERNEL);
	struct mmt_chan_crypto *tx, *rx;

	KUNIT_ASSERT_TRUE(test, buf && back);
	tx = chan_raw(test, key, salt);
	rx = chan_raw(test, key, salt);
	KUNIT_EXPECT_EQ(test, mmt_chan_seal(tx, 0, buf, MMT_CHAN_AD_MAX + 1,
					    buf, buf + 1024, 16), -EINVAL);
	KUNIT_EXPECT_EQ(test, mmt_chan_seal(tx, 0, NULL, 0, buf, buf + 1024,
					    MMT_CHAN_MSG_MAX + 1), -EINVAL);
	/* Partial overlap, either way round; in place is fine. */
	KUNIT_EXPECT_EQ(test, mmt_chan_seal(tx, 0, NULL, 0, buf, buf + 1, 64),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, mmt_chan_seal(tx, 0, NULL, 0, buf + 79, buf, 64),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, count_nonzero(buf, 4096), 0u);
	KUNIT_EXPECT_EQ(test, mmt_chan_open(rx, 0, buf, MMT_CHAN_AD_MAX + 1,
					    buf, back, 16), -EINVAL);
	KUNIT_EXPECT_EQ(test, mmt_chan_open(rx, 0, NULL, 0, buf, back,
					    MMT_CHAN_MSG_MAX + 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, mmt_chan_open(rx, 0, NULL, 0, buf, buf + 79, 64),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, mmt_chan_open(rx, 0, NULL, 0, buf + 1, buf, 64),
			-EINVAL);
	/* Seq 0 is still unused on both sides. */
	memset(buf, 0x11, 64);
	KUNIT_ASSERT_EQ(test, mmt_chan_seal(tx, 0, NULL, 0, buf, buf, 64), 0);
	KUNIT_ASSERT_EQ(test, mmt_chan_open(rx, 0, NULL, 0, buf, back, 64), 0);
	KUNIT_EXPECT_EQ(test, count_ne(back, 0x11, 64), 0u);
}

/*
 * mmt_chan_crypto_alloc(): key || salt = HKDF-SHA256(MMT key, "mmt-v1
 * salt", "mmt v1 channel" || bind), 16 + 4 bytes, checked against a raw
 * context built from an independent HKDF computation; another binding is
 * another key; bad arguments.
 */
static void chan_alloc(struct kunit *test)
{
	static const char info[] = "mmt v1 channelconn-7>";
	const u8 *salt = (const u8 *)"mmt-v1 salt";
	u8 key[32], okm[20];
	u8 *pt = kunit_kzalloc(test, 32, GFP_KERNEL);
	u8 *a = kunit_kzalloc(test, 48, GFP_KERNEL);
	u8 *b = kunit_kzalloc(test, 48, GFP_KERNEL);
	struct mmt_chan_crypto *ch, *raw, *other;
	struct crypto_priv *p = priv(test);
	unsigned int i, k;

	KUNIT_ASSERT_TRUE(test, pt && a && b);
	for (i = 0; i < sizeof(key); i++)
		key[i] = (u8)(i * 5 + 3);
	for (k = 16; k <= 32; k += 16) {
		KUNIT_ASSERT_EQ(test, mmt_crypto_hkdf_sha256(key, k, salt, 11,
							     (const u8 *)info,
							     strlen(info), okm,
							     sizeof(okm)), 0);
		ch = mmt_chan_crypto_alloc(key, k, (const u8 *)"conn-7>", 7);
		KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(ch));
		p->chan[0] = ch;
		raw = chan_raw(test, okm, okm + 16);
		KUNIT_ASSERT_EQ(test, mmt_chan_seal(ch, 42, pt, 8, pt, a, 32),
				0);
		KUNIT_ASSERT_EQ(test, mmt_chan_seal(raw, 42, pt, 8, pt, b, 32),
				0);
		KUNIT_EXPECT_EQ(test, memcmp(a, b, 48), 0);
		/* Another binding: another key, the message does not open. */
		other = mmt_chan_crypto_alloc(key, k, (const u8 *)"conn-8>", 7);
		KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(other));
		p->chan[2] = other;
		KUNIT_EXPECT_EQ(test, mmt_chan_open(other, 42, pt, 8, a, b, 32),
				-EBADMSG);
		for (i = 0; i < 3; i++) {
			mmt_chan_crypto_free(p->chan[i]);
			p->chan[i] = NULL;
		}
	}
	/* No binding: info is "mmt v1 channel" alone. */
	KUNIT_ASSERT_EQ(test, mmt_crypto_hkdf_sha256(key, 16, salt, 11,
						     (const u8 *)info, 14, okm,
						     sizeof(okm)), 0);
	ch = mmt_chan_crypto_alloc(key, 16, NULL, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(ch));
	p->chan[0] = ch;
	raw = chan_raw(test, okm, okm + 16);
	KUNIT_ASSERT_EQ(test, mmt_chan_seal(ch, 0, NULL, 0, pt, a, 32), 0);
	KUNIT_ASSERT_EQ(test, mmt_chan_seal(raw, 0, NULL, 0, pt, b, 32), 0);
	KUNIT_EXPECT_EQ(test, memcmp(a, b, 48), 0);

	KUNIT_EXPECT_EQ(test, PTR_ERR(mmt_chan_crypto_alloc(key, 24, NULL, 0)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mmt_chan_crypto_alloc(NULL, 16, NULL,
							    0)), -EINVAL);
	ch = mmt_chan_crypto_alloc(key, 16, key, MMT_CHAN_BIND_MAX + 1);
	KUNIT_EXPECT_EQ(test, PTR_ERR(ch), -EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mmt_chan_crypto_alloc(key, 16, NULL, 1)),
			-EINVAL);
	mmt_chan_crypto_free(NULL);	/* tolerated */
	mmt_chan_crypto_free(ERR_PTR(-EINVAL));
}

/*
 * mmt_chan_root_key() = HKDF-SHA256(key, "mmt-v1 salt", "mmt v1 chanroot"),
 * 32 bytes.  Expected values computed independently (Python hmac/hashlib,
 * RFC 5869) for key[i] = i * 7 + 1; the root differs from the channel key
 * of the MMT key itself with an empty binding; bad arguments.
 */
static void chan_root(struct kunit *test)
{
	static const u8 want16[MMT_CHAN_ROOT_BYTES] = {
		0x27, 0x18, 0x01, 0xaa, 0x32, 0x89, 0xab, 0x02,
		0x25, 0x8d, 0xb9, 0x7b, 0x4d, 0x21, 0xed, 0xc4,
		0x48, 0xca, 0x4b, 0x09, 0x96, 0xbb, 0x34, 0xbb,
		0xb8, 0x97, 0x64, 0xe1, 0x2d, 0x1e, 0xa4, 0x65,
	};
	static const u8 want32[MMT_CHAN_ROOT_BYTES] = {
		0xea, 0x9a, 0x3a, 0x2a, 0xb1, 0xe0, 0x0c, 0x6b,
		0x40, 0x9c, 0x0d, 0x6e, 0x87, 0xf2, 0x6b, 0xbf,
		0x4b, 0xcd, 0x1c, 0xf2, 0xce, 0x1b, 0xed, 0xdd,
		0xbc, 0x53, 0x1c, 0xcd, 0xbc, 0xb7, 0x77, 0x29,
	};
	u8 key[32], root[MMT_CHAN_ROOT_BYTES], okm[20];
	unsigned int i;

	for (i = 0; i < sizeof(key); i++)
		key[i] = (u8)(i * 7 + 1);
	KUNIT_ASSERT_EQ(test, mmt_chan_root_key(key, 16, root), 0);
	KUNIT_EXPECT_EQ(test, memcmp(root, want16, sizeof(root)), 0);
	KUNIT_ASSERT_EQ(test, mmt_chan_root_key(key, 32, root), 0);
	KUNIT_EXPECT_EQ(test, memcmp(root, want32, sizeof(root)), 0);
	/* Not the key || salt of mmt_chan_crypto_alloc(key, 32, NULL, 0). */
	KUNIT_ASSERT_EQ(test, mmt_crypto_hkdf_sha256(key, 32,
						     (const u8 *)"mmt-v1 salt",
						     11,
						     (const u8 *)"mmt v1 channel",
						     14, okm, sizeof(okm)), 0);
	KUNIT_EXPECT_NE(test, memcmp(root, okm, sizeof(okm)), 0);

	memset(root, 0x5a, sizeof(root));
	KUNIT_EXPECT_EQ(test, mmt_chan_root_key(key, 24, root), -EINVAL);
	KUNIT_EXPECT_EQ(test, mmt_chan_root_key(NULL, 16, root), -EINVAL);
	KUNIT_EXPECT_EQ(test, mmt_chan_root_key(key, 16, NULL), -EINVAL);
	for (i = 0; i < sizeof(root); i++)
		KUNIT_EXPECT_EQ(test, root[i], 0x5a);
}

static struct kunit_case mmt_crypto_cases[] = {
	KUNIT_CASE(ecb_kat),
	KUNIT_CASE(ecb_bad_args),
	KUNIT_CASE(ctr_kat),
	KUNIT_CASE(ctr_carry),
	KUNIT_CASE(ctr_xor_long),
	KUNIT_CASE(ctr_bad_args),
	KUNIT_CASE_PARAM(gcm_kat, gcm_gen_params),
	KUNIT_CASE(gcm_bad_tag),
	KUNIT_CASE_PARAM(hkdf_kat, hkdf_gen_params),
	KUNIT_CASE(alloc_derives_subkeys),
	KUNIT_CASE(alloc_bad_key),
	KUNIT_CASE(hash_key_sane),
	KUNIT_CASE_PARAM(chan_kat, gcm_gen_params),
	KUNIT_CASE_PARAM(chan_large, chan_big_gen_params),
	KUNIT_CASE(chan_seq),
	KUNIT_CASE(chan_open_seq),
	KUNIT_CASE(chan_ad),
	KUNIT_CASE(chan_bad_args),
	KUNIT_CASE(chan_alloc),
	KUNIT_CASE(chan_root),
	{}
};

static struct kunit_suite mmt_crypto_suite = {
	.name = "mmt_crypto",
	.init = mmt_crypto_init,
	.exit = mmt_crypto_exit,
	.test_cases = mmt_crypto_cases,
};

kunit_test_suites(&mmt_crypto_suite);
