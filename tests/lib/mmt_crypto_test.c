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

/* Context with all three subkeys set to @key (16 bytes), freed in exit. */
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
	c = mmt_crypto_alloc_raw(sub);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(c));
	test->priv = c;
	return c;
}

static void mmt_crypto_exit(struct kunit *test)
{
	if (test->priv)
		mmt_crypto_free(test->priv);
	test->priv = NULL;
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
	mmt_crypto_free(c);
	test->priv = NULL;

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
static void alloc_derives_subkeys(struct kunit *test)
{
	static const char *const info[] = {
	    "mmt v1 enc", "mmt v1 mac", "mmt v1 seal"
	};
	u8 key[32], sub[3 * 16];
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
		for (i = 0; i < 3; i++) {
			int err;

			err = mmt_crypto_hkdf_sha256(key, k,
						     (const u8 *)"mmt-v1 salt",
						     11, (const u8 *)info[i],
						     strlen(info[i]),
						     sub + 16 * i, 16);
			KUNIT_ASSERT_EQ(test, err, 0);
		}
		c = mmt_crypto_alloc(key, k);
		KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(c));
		raw = mmt_crypto_alloc_raw(sub);
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
					     MMT_HASH_KEYS * 8), 0);
		KUNIT_EXPECT_EQ(test, mmt_crypto_seal(c, in, in, 16, in + 16,
						      16, a), 0);
		KUNIT_EXPECT_EQ(test, mmt_crypto_seal(raw, in, in, 16, in + 16,
						      16, b), 0);
		KUNIT_EXPECT_EQ(test, memcmp(a, b, 32), 0);
		mmt_crypto_free(raw);
		mmt_crypto_free(c);
	}
}

static void alloc_bad_key(struct kunit *test)
{
	u8 key[33] = { 0 };
	struct mmt_crypto *c;

	c = mmt_crypto_alloc(key, 15);
	KUNIT_EXPECT_TRUE(test, IS_ERR(c));
	KUNIT_EXPECT_EQ(test, PTR_ERR(c), -EINVAL);
	c = mmt_crypto_alloc(key, 24);
	KUNIT_EXPECT_EQ(test, PTR_ERR(c), -EINVAL);
	c = mmt_crypto_alloc(key, 33);
	KUNIT_EXPECT_EQ(test, PTR_ERR(c), -EINVAL);
	c = mmt_crypto_alloc(NULL, 16);
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

	a = mmt_crypto_alloc(k1, 16);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(a));
	test->priv = a;
	b = mmt_crypto_alloc(k2, 16);
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

static struct kunit_case mmt_crypto_cases[] = {
	KUNIT_CASE(ecb_kat),
	KUNIT_CASE(ecb_bad_args),
	KUNIT_CASE_PARAM(gcm_kat, gcm_gen_params),
	KUNIT_CASE(gcm_bad_tag),
	KUNIT_CASE_PARAM(hkdf_kat, hkdf_gen_params),
	KUNIT_CASE(alloc_derives_subkeys),
	KUNIT_CASE(alloc_bad_key),
	KUNIT_CASE(hash_key_sane),
	{}
};

static struct kunit_suite mmt_crypto_suite = {
	.name = "mmt_crypto",
	.exit = mmt_crypto_exit,
	.test_cases = mmt_crypto_cases,
};

kunit_test_suites(&mmt_crypto_suite);
