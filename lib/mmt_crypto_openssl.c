// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_crypto_openssl.c - the engine's crypto interface on OpenSSL libcrypto
 * (user-space build only: tests, benchmarks, fuzzing).  Same behaviour as
 * lib/mmt_crypto_kernel.c; see the kernel-doc in mmt_lib.h.
 *
 * AES-128-CTR for data pads, AES-128-ECB (padding off) for MAC pads and
 * hash keys, AES-128-GCM for sealing, HKDF-SHA256
 * (EVP_PKEY_HKDF) for the subkeys.  All EVP contexts are created and keyed
 * once in mmt_crypto_alloc() (secure channel: mmt_chan_crypto_alloc()).
 */
#include <openssl/evp.h>
#include <openssl/kdf.h>

#include "mmt_lib.h"

/**
 * struct mmt_crypto - user-space crypto context
 * @ecb: AES-128-ECB encryption contexts, keyed with the ENC and MAC subkeys
 * @ctr: AES-128-CTR encryption context, keyed with the ENC subkey
 * @gcm_enc: AES-128-GCM encryption context, keyed with the SEAL subkey
 * @gcm_dec: AES-128-GCM decryption context, same key
 * @bounce: decryption output, copied to the caller only if the tag is valid
 * @hash_key: Carter-Wegman hash keys, multilinear then NH (key material)
 * @ksalt: the keying salt the subkeys were derived with (not secret)
 */
struct mmt_crypto {
	EVP_CIPHER_CTX *ecb[2];
	EVP_CIPHER_CTX *ctr;
	EVP_CIPHER_CTX *gcm_enc;
	EVP_CIPHER_CTX *gcm_dec;
	u8 bounce[MMT_CRYPTO_SEAL_MAX];
	u64 hash_key[MMT_ALL_KEYS];
	u8 ksalt[MMT_KSALT_BYTES];
};

int mmt_crypto_hkdf_sha256(const u8 *ikm, size_t ikm_len, const u8 *salt,
			   size_t salt_len, const u8 *info, size_t info_len,
			   u8 *okm, size_t okm_len)
{
	EVP_PKEY_CTX *pctx;
	size_t out_len = okm_len;
	int err = -EIO;

	if (!okm_len || okm_len > 255 * 32 || !ikm_len)
		return -EINVAL;
	pctx = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, NULL);
	if (!pctx) {
		memzero_explicit(okm, okm_len);
		return -ENOMEM;
	}
	if (EVP_PKEY_derive_init(pctx) <= 0 ||
	    EVP_PKEY_CTX_set_hkdf_md(pctx, EVP_sha256()) <= 0 ||
	    EVP_PKEY_CTX_set1_hkdf_key(pctx, ikm, (int)ikm_len) <= 0)
		goto out;
	/* An absent salt defaults to HashLen zero bytes (RFC 5869 2.2). */
	if (salt_len &&
	    EVP_PKEY_CTX_set1_hkdf_salt(pctx, salt, (int)salt_len) <= 0)
		goto out;
	if (info_len &&
	    EVP_PKEY_CTX_add1_hkdf_info(pctx, info, (int)info_len) <= 0)
		goto out;
	if (EVP_PKEY_derive(pctx, okm, &out_len) <= 0 || out_len != okm_len)
		goto out;
	err = 0;
out:
	if (err)
		memzero_explicit(okm, okm_len);
	EVP_PKEY_CTX_free(pctx);
	return err;
}

int mmt_crypto_sha256(const u8 *data, size_t len, u8 *out)
{
	unsigned int n = 0;

	if (EVP_Digest(data, len, out, &n, EVP_sha256(), NULL) != 1 ||
	    n != MMT_SHA256_BYTES) {
		memzero_explicit(out, MMT_SHA256_BYTES);
		return -EIO;
	}
	return 0;
}

/* struct mmt_sha256_ctx: opaque[0] holds the EVP_MD_CTX pointer. */
static EVP_MD_CTX *mmt_ossl_md(struct mmt_sha256_ctx *c)
{
	EVP_MD_CTX *md;

	memcpy(&md, c->opaque, sizeof(md));
	return md;
}

int mmt_crypto_sha256_init(struct mmt_sha256_ctx *c)
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();

	memset(c, 0, sizeof(*c));
	if (!md)
		return -ENOMEM;
	if (EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1) {
		EVP_MD_CTX_free(md);
		return -EIO;
	}
	memcpy(c->opaque, &md, sizeof(md));
	return 0;
}

int mmt_crypto_sha256_update(struct mmt_sha256_ctx *c, const u8 *data,
			     size_t len)
{
	EVP_MD_CTX *md = mmt_ossl_md(c);

	return md && EVP_DigestUpdate(md, data, len) == 1 ? 0 : -EIO;
}

int mmt_crypto_sha256_final(struct mmt_sha256_ctx *c, u8 *out)
{
	EVP_MD_CTX *md = mmt_ossl_md(c);
	unsigned int n = 0;
	int err = -EIO;

	if (md && EVP_DigestFinal_ex(md, out, &n) == 1 &&
	    n == MMT_SHA256_BYTES)
		err = 0;
	EVP_MD_CTX_free(md);
	memset(c, 0, sizeof(*c));
	if (err)
		memzero_explicit(out, MMT_SHA256_BYTES);
	return err;
}

static EVP_CIPHER_CTX *mmt_ossl_cipher(const EVP_CIPHER *cipher,
				       const u8 *key, bool enc)
{
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();

	if (!ctx)
		return NULL;
	if (EVP_CipherInit_ex(ctx, cipher, NULL, key, NULL, enc) != 1 ||
	    EVP_CIPHER_CTX_set_padding(ctx, 0) != 1) {
		EVP_CIPHER_CTX_free(ctx);
		return NULL;
	}
	return ctx;
}

struct mmt_crypto *mmt_crypto_alloc_raw(const u8 *subkeys, const u8 *ksalt)
{
	const u8 *enc = subkeys + MMT_SUBKEY_ENC * MMT_SUBKEY_BYTES;
	const u8 *mac = subkeys + MMT_SUBKEY_MAC * MMT_SUBKEY_BYTES;
	const u8 *seal = subkeys + MMT_SUBKEY_SEAL * MMT_SUBKEY_BYTES;
	struct mmt_crypto *c;
	int err;

	c = kvzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return ERR_PTR(-ENOMEM);
	if (ksalt)
		memcpy(c->ksalt, ksalt, MMT_KSALT_BYTES);
	c->ecb[MMT_SUBKEY_ENC] = mmt_ossl_cipher(EVP_aes_128_ecb(), enc, true);
	c->ecb[MMT_SUBKEY_MAC] = mmt_ossl_cipher(EVP_aes_128_ecb(), mac, true);
	c->ctr = mmt_ossl_cipher(EVP_aes_128_ctr(), enc, true);
	c->gcm_enc = mmt_ossl_cipher(EVP_aes_128_gcm(), seal, true);
	c->gcm_dec = mmt_ossl_cipher(EVP_aes_128_gcm(), seal, false);
	if (!c->ecb[0] || !c->ecb[1] || !c->ctr || !c->gcm_enc ||
	    !c->gcm_dec) {
		mmt_crypto_free(c);
		return ERR_PTR(-ENOMEM);
	}
	err = mmt_hash_key_init(c, c->hash_key);
	if (err) {
		mmt_crypto_free(c);
		return ERR_PTR(err);
	}
	return c;
}

void mmt_crypto_free(struct mmt_crypto *c)
{
	if (IS_ERR_OR_NULL(c))
		return;
	/* EVP_CIPHER_CTX_free() cleanses the expanded keys. */
	EVP_CIPHER_CTX_free(c->ecb[0]);
	EVP_CIPHER_CTX_free(c->ecb[1]);
	EVP_CIPHER_CTX_free(c->ctr);
	EVP_CIPHER_CTX_free(c->gcm_enc);
	EVP_CIPHER_CTX_free(c->gcm_dec);
	memzero_explicit(c, sizeof(*c));
	kvfree(c);
}

const u64 *mmt_crypto_hash_key(const struct mmt_crypto *c)
{
	return c->hash_key;
}

const u8 *mmt_crypto_ksalt(const struct mmt_crypto *c)
{
	return c->ksalt;
}

int mmt_crypto_ecb(struct mmt_crypto *c, enum mmt_subkey k, const u8 *in,
		   u8 *out, size_t len)
{
	int outl;

	if ((k != MMT_SUBKEY_ENC && k != MMT_SUBKEY_MAC) ||
	    len % MMT_AES_BLOCK || len > MMT_CRYPTO_ECB_MAX)
		return -EINVAL;
	if (!len)
		return 0;
	if (EVP_EncryptUpdate(c->ecb[k], out, &outl, in, (int)len) != 1 ||
	    outl != (int)len)
		return -EIO;
	return 0;
}

/* The CTR source: keystream is the encryption of zeros (read-only). */
static const u8 mmt_ossl_zeros[MMT_CRYPTO_ECB_MAX];

int mmt_crypto_ctr_xor(struct mmt_crypto *c, const u8 *iv, const u8 *in,
		       u8 *out, size_t len)
{
	int outl;

	if (len % MMT_AES_BLOCK || len > MMT_CRYPTO_ECB_MAX)
		return -EINVAL;
	if (!len)
		return 0;
	/* A new IV resets the counter and the partial-block state. */
	if (EVP_EncryptInit_ex(c->ctr, NULL, NULL, NULL, iv) != 1 ||
	    EVP_EncryptUpdate(c->ctr, out, &outl, in, (int)len) != 1 ||
	    outl != (int)len)
		return -EIO;
	return 0;
}

int mmt_crypto_ctr(struct mmt_crypto *c, const u8 *iv, u8 *out, size_t len)
{
	return mmt_crypto_ctr_xor(c, iv, mmt_ossl_zeros, out, len);
}

int mmt_crypto_seal(struct mmt_crypto *c, const u8 *nonce12, const u8 *ad,
		    size_t ad_len, const u8 *pt, size_t pt_len, u8 *ct_tag)
{
	EVP_CIPHER_CTX *x = c->gcm_enc;
	int outl;

	if (ad_len > MMT_CRYPTO_SEAL_MAX ||
	    pt_len > MMT_CRYPTO_SEAL_MAX - ad_len)
		return -EINVAL;
	/* The default IV length of EVP_aes_128_gcm() is 12 bytes. */
	if (EVP_EncryptInit_ex(x, NULL, NULL, NULL, nonce12) != 1)
		return -EIO;
	if (ad_len && EVP_EncryptUpdate(x, NULL, &outl, ad, (int)ad_len) != 1)
		return -EIO;
	if (pt_len && (EVP_EncryptUpdate(x, ct_tag, &outl, pt,
					 (int)pt_len) != 1 ||
		       outl != (int)pt_len))
		return -EIO;
	if (EVP_EncryptFinal_ex(x, ct_tag + pt_len, &outl) != 1 ||
	    EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_GET_TAG, MMT_GCM_TAG_BYTES,
				ct_tag + pt_len) != 1)
		return -EIO;
	return 0;
}

int mmt_crypto_unseal(struct mmt_crypto *c, const u8 *nonce12, const u8 *ad,
		      size_t ad_len, const u8 *ct_tag, size_t ct_len, u8 *pt)
{
	EVP_CIPHER_CTX *x = c->gcm_dec;
	u8 tag[MMT_GCM_TAG_BYTES];
	int outl, err = 0;

	if (ad_len > MMT_CRYPTO_SEAL_MAX ||
	    ct_len > MMT_CRYPTO_SEAL_MAX - ad_len)
		return -EINVAL;
	memcpy(tag, ct_tag + ct_len, sizeof(tag));
	if (EVP_DecryptInit_ex(x, NULL, NULL, NULL, nonce12) != 1)
		return -EIO;
	if (ad_len && EVP_DecryptUpdate(x, NULL, &outl, ad, (int)ad_len) != 1)
		return -EIO;
	if (ct_len && (EVP_DecryptUpdate(x, c->bounce, &outl, ct_tag,
					 (int)ct_len) != 1 ||
		       outl != (int)ct_len))
		return -EIO;
	if (EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_SET_TAG, sizeof(tag),
				tag) != 1)
		return -EIO;
	if (EVP_DecryptFinal_ex(x, c->bounce + ct_len, &outl) != 1)
		err = -EBADMSG;
	else if (ct_len)
		memcpy(pt, c->bounce, ct_len);
	memzero_explicit(c->bounce, ct_len);
	return err;
}

/* ------------------------------------------------------ secure channel */

/**
 * struct mmt_chan_crypto - user-space secure-channel context
 * @enc: AES-128-GCM encryption context keyed with the channel key
 * @dec: AES-128-GCM decryption context, same key
 * @sealed: a seq has been sealed; @last_sealed is valid
 * @opened: a seq has been opened; @last_opened is valid
 * @last_sealed: last sealed seq; the next one must be above it
 * @last_opened: last opened seq; the next one must be above it
 * @iv: the nonce of the current message, salt || be64 seq
 */
struct mmt_chan_crypto {
	EVP_CIPHER_CTX *enc;
	EVP_CIPHER_CTX *dec;
	bool sealed;
	bool opened;
	u64 last_sealed;
	u64 last_opened;
	u8 iv[MMT_GCM_NONCE_BYTES];
};

struct mmt_chan_crypto *mmt_chan_crypto_alloc_raw(const u8 *key,
						  const u8 *salt)
{
	struct mmt_chan_crypto *c;

	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return ERR_PTR(-ENOMEM);
	memcpy(c->iv, salt, MMT_CHAN_SALT_BYTES);
	c->enc = mmt_ossl_cipher(EVP_aes_128_gcm(), key, true);
	c->dec = mmt_ossl_cipher(EVP_aes_128_gcm(), key, false);
	if (!c->enc || !c->dec) {
		mmt_chan_crypto_free(c);
		return ERR_PTR(-ENOMEM);
	}
	return c;
}

void mmt_chan_crypto_free(struct mmt_chan_crypto *c)
{
	if (IS_ERR_OR_NULL(c))
		return;
	/* EVP_CIPHER_CTX_free() cleanses the expanded keys. */
	EVP_CIPHER_CTX_free(c->enc);
	EVP_CIPHER_CTX_free(c->dec);
	memzero_explicit(c, sizeof(*c));
	kfree(c);
}

/* True if [a, a + alen) and [b, b + blen) overlap (and a != b). */
static bool mmt_chan_overlap(const u8 *a, size_t alen, const u8 *b,
			     size_t blen)
{
	return a != b && a < b + blen && b < a + alen;
}

/* Load @seq's nonce and the AD into @x (encrypting or decrypting). */
static int mmt_chan_start(struct mmt_chan_crypto *c, EVP_CIPHER_CTX *x,
			  u64 seq, const u8 *ad, size_t ad_len)
{
	int outl;

	put_unaligned_be64(seq, c->iv + MMT_CHAN_SALT_BYTES);
	/* The default IV length of EVP_aes_128_gcm() is 12 bytes. */
	if (EVP_CipherInit_ex(x, NULL, NULL, NULL, c->iv, -1) != 1)
		return -EIO;
	if (ad_len && EVP_CipherUpdate(x, NULL, &outl, ad, (int)ad_len) != 1)
		return -EIO;
	return 0;
}

int mmt_chan_seal(struct mmt_chan_crypto *c, u64 seq, const u8 *ad,
		  size_t ad_len, const u8 *pt, u8 *out, size_t len)
{
	EVP_CIPHER_CTX *x = c->enc;
	int outl, err;

	if (len > MMT_CHAN_MSG_MAX || ad_len > MMT_CHAN_AD_MAX ||
	    mmt_chan_overlap(pt, len, out, len + MMT_GCM_TAG_BYTES))
		return -EINVAL;
	if (c->sealed && c->last_sealed == U64_MAX)
		return -EOVERFLOW;
	if (c->sealed && seq <= c->last_sealed)
		return -EINVAL;
	/* Committed: this nonce is used up whatever happens next. */
	c->sealed = true;
	c->last_sealed = seq;
	err = mmt_chan_start(c, x, seq, ad, ad_len);
	if (!err && len && (EVP_EncryptUpdate(x, out, &outl, pt,
					      (int)len) != 1 ||
			    outl != (int)len))
		err = -EIO;
	if (!err && (EVP_EncryptFinal_ex(x, out + len, &outl) != 1 ||
		     EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_GET_TAG,
					 MMT_GCM_TAG_BYTES, out + len) != 1))
		err = -EIO;
	if (err)
		memzero_explicit(out, len + MMT_GCM_TAG_BYTES);
	return err;
}

int mmt_chan_open(struct mmt_chan_crypto *c, u64 seq, const u8 *ad,
		  size_t ad_len, const u8 *in, u8 *pt, size_t len)
{
	EVP_CIPHER_CTX *x = c->dec;
	u8 tag[MMT_GCM_TAG_BYTES];
	int outl, err;

	if (len > MMT_CHAN_MSG_MAX || ad_len > MMT_CHAN_AD_MAX ||
	    mmt_chan_overlap(in, len + MMT_GCM_TAG_BYTES, pt, len))
		return -EINVAL;
	if (c->opened && seq <= c->last_opened)
		return -ESTALE;
	/* Copied first: decrypting in place overwrites nothing past @len. */
	memcpy(tag, in + len, sizeof(tag));
	err = mmt_chan_start(c, x, seq, ad, ad_len);
	if (!err && len && (EVP_DecryptUpdate(x, pt, &outl, in,
					      (int)len) != 1 ||
			    outl != (int)len))
		err = -EIO;
	if (!err && EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_SET_TAG, sizeof(tag),
					tag) != 1)
		err = -EIO;
	/* GCM's final step writes no text; it checks the tag. */
	if (!err && EVP_DecryptFinal_ex(x, pt + len, &outl) != 1)
		err = -EBADMSG;
	if (err) {
		/* The text was decrypted before the tag was checked. */
		if (len)
			memzero_explicit(pt, len);
		return err;
	}
	c->opened = true;
	c->last_opened = seq;
	return 0;
}

int mmt_chan_open_seq(struct mmt_chan_crypto *c, u64 seq, bool take)
{
	if (c->opened && seq <= c->last_opened)
		return -ESTALE;
	if (!take)
		return 0;
	c->opened = true;
	c->last_opened = seq;
	return 0;
}
