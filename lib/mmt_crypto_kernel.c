// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_crypto_kernel.c - the engine's crypto interface on the kernel crypto
 * API: the only kernel file of the project that calls it.  Same behaviour as
 * lib/mmt_crypto_openssl.c; see the kernel-doc in mmt_lib.h.
 *
 * Everything is allocated in mmt_crypto_alloc(): one "ecb(aes)" skcipher
 * and request per ENC/MAC subkey, one "gcm(aes)" aead (16-byte tag) and
 * request, scatterlists for the largest ECB call and a bounce buffer for
 * sealing.  The hot path (mmt_crypto_ecb) allocates nothing and issues one
 * request per call, whatever the length (up to MMT_CRYPTO_ECB_MAX).
 *
 * HKDF-SHA256 (RFC 5869) on the "hmac(sha256)" shash, after
 * fs/crypto/hkdf.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/aead.h>
#include <crypto/hash.h>
#include <crypto/sha2.h>
#include <crypto/skcipher.h>
#include <linux/scatterlist.h>
#include <linux/vmalloc.h>

#include "mmt_lib.h"

#define MMT_ECB_SG_MAX	(MMT_CRYPTO_ECB_MAX / PAGE_SIZE + 2)
#define MMT_BOUNCE_BYTES (MMT_CRYPTO_SEAL_MAX + MMT_GCM_TAG_BYTES)

/**
 * struct mmt_crypto - kernel crypto context
 * @ecb: "ecb(aes)" transforms keyed with the ENC and MAC subkeys
 * @ecb_req: one preallocated request per @ecb transform
 * @gcm: "gcm(aes)" transform keyed with the SEAL subkey, authsize 16
 * @gcm_req: preallocated request for @gcm
 * @wait: completion for asynchronous requests (one request in flight)
 * @sg_in: source scatterlist of an ECB call, one entry per page touched
 * @sg_out: destination scatterlist of an ECB call
 * @sg_gcm: the single entry over @bounce
 * @iv: GCM nonce, in memory the request may keep a pointer to
 * @bounce: linear buffer for AD || text || tag (kmalloc'd with the context)
 * @hash_key: Carter-Wegman hash keys, multilinear then NH (key material)
 */
struct mmt_crypto {
	struct crypto_skcipher *ecb[2];
	struct skcipher_request *ecb_req[2];
	struct crypto_aead *gcm;
	struct aead_request *gcm_req;
	struct crypto_wait wait;
	struct scatterlist sg_in[MMT_ECB_SG_MAX];
	struct scatterlist sg_out[MMT_ECB_SG_MAX];
	struct scatterlist sg_gcm;
	u8 iv[MMT_GCM_NONCE_BYTES];
	u8 *bounce;
	u64 hash_key[MMT_HASH_KEYS + MMT_NH_KEYS];
};

static const char mmt_hkdf_salt[] = "mmt-v1 salt";
static const char *const mmt_hkdf_info[MMT_NR_SUBKEYS] = {
	[MMT_SUBKEY_ENC] = "mmt v1 enc",
	[MMT_SUBKEY_MAC] = "mmt v1 mac",
	[MMT_SUBKEY_SEAL] = "mmt v1 seal",
};

/* HKDF-Expand (RFC 5869 section 2.3) with @tfm keyed with the PRK. */
static int mmt_hkdf_expand(struct crypto_shash *tfm, const u8 *info,
			   size_t info_len, u8 *okm, size_t okm_len)
{
	SHASH_DESC_ON_STACK(desc, tfm);
	u8 t[SHA256_DIGEST_SIZE];
	const u8 *prev = NULL;
	u8 counter = 1;
	size_t i, n;
	int err = 0;

	desc->tfm = tfm;
	for (i = 0; i < okm_len; i += SHA256_DIGEST_SIZE, counter++) {
		err = crypto_shash_init(desc);
		if (!err && prev)
			err = crypto_shash_update(desc, prev,
						  SHA256_DIGEST_SIZE);
		if (!err && info_len)
			err = crypto_shash_update(desc, info, info_len);
		if (!err)
			err = crypto_shash_finup(desc, &counter, 1, t);
		if (err)
			break;
		n = min_t(size_t, okm_len - i, SHA256_DIGEST_SIZE);
		memcpy(okm + i, t, n);
		prev = okm + i;
	}
	memzero_explicit(t, sizeof(t));
	shash_desc_zero(desc);
	return err;
}

int mmt_crypto_hkdf_sha256(const u8 *ikm, size_t ikm_len, const u8 *salt,
			   size_t salt_len, const u8 *info, size_t info_len,
			   u8 *okm, size_t okm_len)
{
	static const u8 zero_salt[SHA256_DIGEST_SIZE];
	u8 prk[SHA256_DIGEST_SIZE];
	struct crypto_shash *tfm;
	int err;

	if (!okm_len || okm_len > 255 * SHA256_DIGEST_SIZE || !ikm_len)
		return -EINVAL;
	tfm = crypto_alloc_shash("hmac(sha256)", 0, 0);
	if (IS_ERR(tfm)) {
		memzero_explicit(okm, okm_len);
		return PTR_ERR(tfm);
	}
	pr_info_once("hkdf: %s\n", crypto_shash_driver_name(tfm));
	/* HKDF-Extract (2.2): PRK = HMAC(salt or HashLen zeros, IKM) */
	if (salt_len)
		err = crypto_shash_setkey(tfm, salt, salt_len);
	else
		err = crypto_shash_setkey(tfm, zero_salt, sizeof(zero_salt));
	if (!err)
		err = crypto_shash_tfm_digest(tfm, ikm, ikm_len, prk);
	if (!err)
		err = crypto_shash_setkey(tfm, prk, sizeof(prk));
	if (!err)
		err = mmt_hkdf_expand(tfm, info, info_len, okm, okm_len);
	if (err)
		memzero_explicit(okm, okm_len);
	memzero_explicit(prk, sizeof(prk));
	crypto_free_shash(tfm);
	return err;
}

static int mmt_ecb_setup(struct mmt_crypto *c, int i, const u8 *key)
{
	struct crypto_skcipher *tfm;
	int err;

	tfm = crypto_alloc_skcipher("ecb(aes)", 0, 0);
	if (IS_ERR(tfm))
		return PTR_ERR(tfm);
	c->ecb[i] = tfm;
	pr_info_once("pads: %s\n", crypto_skcipher_driver_name(tfm));
	err = crypto_skcipher_setkey(tfm, key, MMT_SUBKEY_BYTES);
	if (err)
		return err;
	c->ecb_req[i] = skcipher_request_alloc(tfm, GFP_KERNEL);
	if (!c->ecb_req[i])
		return -ENOMEM;
	skcipher_request_set_callback(c->ecb_req[i],
				      CRYPTO_TFM_REQ_MAY_SLEEP |
				      CRYPTO_TFM_REQ_MAY_BACKLOG,
				      crypto_req_done, &c->wait);
	return 0;
}

static int mmt_gcm_setup(struct mmt_crypto *c, const u8 *key)
{
	struct crypto_aead *tfm;
	int err;

	tfm = crypto_alloc_aead("gcm(aes)", 0, 0);
	if (IS_ERR(tfm))
		return PTR_ERR(tfm);
	c->gcm = tfm;
	pr_info_once("seal: %s\n", crypto_aead_driver_name(tfm));
	if (crypto_aead_ivsize(tfm) != MMT_GCM_NONCE_BYTES)
		return -EINVAL;
	err = crypto_aead_setkey(tfm, key, MMT_SUBKEY_BYTES);
	if (!err)
		err = crypto_aead_setauthsize(tfm, MMT_GCM_TAG_BYTES);
	if (err)
		return err;
	c->gcm_req = aead_request_alloc(tfm, GFP_KERNEL);
	if (!c->gcm_req)
		return -ENOMEM;
	aead_request_set_callback(c->gcm_req, CRYPTO_TFM_REQ_MAY_SLEEP |
				  CRYPTO_TFM_REQ_MAY_BACKLOG,
				  crypto_req_done, &c->wait);
	c->bounce = kzalloc(MMT_BOUNCE_BYTES, GFP_KERNEL);
	if (!c->bounce)
		return -ENOMEM;
	sg_init_one(&c->sg_gcm, c->bounce, MMT_BOUNCE_BYTES);
	return 0;
}

struct mmt_crypto *mmt_crypto_alloc_raw(const u8 *subkeys)
{
	struct mmt_crypto *c;
	int err;

	/* kmalloc'd: @iv is handed to the AEAD, which may DMA-map it. */
	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return ERR_PTR(-ENOMEM);
	crypto_init_wait(&c->wait);
	err = mmt_ecb_setup(c, MMT_SUBKEY_ENC,
			    subkeys + MMT_SUBKEY_ENC * MMT_SUBKEY_BYTES);
	if (!err)
		err = mmt_ecb_setup(c, MMT_SUBKEY_MAC,
				    subkeys + MMT_SUBKEY_MAC * MMT_SUBKEY_BYTES);
	if (!err)
		err = mmt_gcm_setup(c, subkeys +
				    MMT_SUBKEY_SEAL * MMT_SUBKEY_BYTES);
	if (!err)
		err = mmt_hash_key_init(c, c->hash_key);
	if (err) {
		mmt_crypto_free(c);
		return ERR_PTR(err);
	}
	return c;
}

struct mmt_crypto *mmt_crypto_alloc(const u8 *key, unsigned int key_len)
{
	u8 sub[MMT_NR_SUBKEYS * MMT_SUBKEY_BYTES];
	struct mmt_crypto *c;
	int i, err;

	if (!key || (key_len != 16 && key_len != 32))
		return ERR_PTR(-EINVAL);
	for (i = 0; i < MMT_NR_SUBKEYS; i++) {
		err = mmt_crypto_hkdf_sha256(key, key_len,
					     (const u8 *)mmt_hkdf_salt,
					     strlen(mmt_hkdf_salt),
					     (const u8 *)mmt_hkdf_info[i],
					     strlen(mmt_hkdf_info[i]),
					     sub + i * MMT_SUBKEY_BYTES,
					     MMT_SUBKEY_BYTES);
		if (err) {
			memzero_explicit(sub, sizeof(sub));
			return ERR_PTR(err);
		}
	}
	c = mmt_crypto_alloc_raw(sub);
	memzero_explicit(sub, sizeof(sub));
	return c;
}

void mmt_crypto_free(struct mmt_crypto *c)
{
	int i;

	if (IS_ERR_OR_NULL(c))
		return;
	/* Freeing a transform wipes its expanded key (crypto_destroy_tfm). */
	for (i = 0; i < 2; i++) {
		skcipher_request_free(c->ecb_req[i]);
		crypto_free_skcipher(c->ecb[i]);
	}
	aead_request_free(c->gcm_req);
	crypto_free_aead(c->gcm);
	kfree_sensitive(c->bounce);
	kfree_sensitive(c);
}

const u64 *mmt_crypto_hash_key(const struct mmt_crypto *c)
{
	return c->hash_key;
}

/*
 * Map @len bytes at @buf (kmalloc'd or vmalloc'd, never the stack) into
 * @sg, one entry per page.  Returns the number of entries used.
 */
static unsigned int mmt_map_sg(struct scatterlist *sg, const u8 *buf,
			       size_t len)
{
	unsigned int n = 0;

	sg_init_table(sg, MMT_ECB_SG_MAX);
	while (len) {
		size_t off = offset_in_page(buf);
		size_t chunk = min_t(size_t, len, PAGE_SIZE - off);
		struct page *page = is_vmalloc_addr(buf) ?
			vmalloc_to_page(buf) : virt_to_page(buf);

		sg_set_page(&sg[n++], page, chunk, off);
		buf += chunk;
		len -= chunk;
	}
	sg_mark_end(&sg[n - 1]);
	return n;
}

int mmt_crypto_ecb(struct mmt_crypto *c, enum mmt_subkey k, const u8 *in,
		   u8 *out, size_t len)
{
	struct skcipher_request *req;

	if ((k != MMT_SUBKEY_ENC && k != MMT_SUBKEY_MAC) ||
	    len % MMT_AES_BLOCK || len > MMT_CRYPTO_ECB_MAX)
		return -EINVAL;
	if (!len)
		return 0;
	req = c->ecb_req[k];
	mmt_map_sg(c->sg_in, in, len);
	if (in != out) {
		mmt_map_sg(c->sg_out, out, len);
		skcipher_request_set_crypt(req, c->sg_in, c->sg_out, len,
					   NULL);
	} else {
		skcipher_request_set_crypt(req, c->sg_in, c->sg_in, len,
					   NULL);
	}
	return crypto_wait_req(crypto_skcipher_encrypt(req), &c->wait);
}

int mmt_crypto_seal(struct mmt_crypto *c, const u8 *nonce12, const u8 *ad,
		    size_t ad_len, const u8 *pt, size_t pt_len, u8 *ct_tag)
{
	struct aead_request *req = c->gcm_req;
	int err;

	if (ad_len > MMT_CRYPTO_SEAL_MAX ||
	    pt_len > MMT_CRYPTO_SEAL_MAX - ad_len)
		return -EINVAL;
	memcpy(c->iv, nonce12, MMT_GCM_NONCE_BYTES);
	memcpy(c->bounce, ad, ad_len);
	memcpy(c->bounce + ad_len, pt, pt_len);
	aead_request_set_ad(req, ad_len);
	aead_request_set_crypt(req, &c->sg_gcm, &c->sg_gcm, pt_len, c->iv);
	err = crypto_wait_req(crypto_aead_encrypt(req), &c->wait);
	if (!err)
		memcpy(ct_tag, c->bounce + ad_len, pt_len + MMT_GCM_TAG_BYTES);
	memzero_explicit(c->bounce, ad_len + pt_len + MMT_GCM_TAG_BYTES);
	return err;
}

int mmt_crypto_unseal(struct mmt_crypto *c, const u8 *nonce12, const u8 *ad,
		      size_t ad_len, const u8 *ct_tag, size_t ct_len, u8 *pt)
{
	struct aead_request *req = c->gcm_req;
	int err;

	if (ad_len > MMT_CRYPTO_SEAL_MAX ||
	    ct_len > MMT_CRYPTO_SEAL_MAX - ad_len)
		return -EINVAL;
	memcpy(c->iv, nonce12, MMT_GCM_NONCE_BYTES);
	memcpy(c->bounce, ad, ad_len);
	memcpy(c->bounce + ad_len, ct_tag, ct_len + MMT_GCM_TAG_BYTES);
	aead_request_set_ad(req, ad_len);
	aead_request_set_crypt(req, &c->sg_gcm, &c->sg_gcm,
			       ct_len + MMT_GCM_TAG_BYTES, c->iv);
	err = crypto_wait_req(crypto_aead_decrypt(req), &c->wait);
	if (!err)
		memcpy(pt, c->bounce + ad_len, ct_len);
	memzero_explicit(c->bounce, ad_len + ct_len + MMT_GCM_TAG_BYTES);
	return err;
}
