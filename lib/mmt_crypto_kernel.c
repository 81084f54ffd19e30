// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_crypto_kernel.c - the engine's crypto interface on the kernel crypto
 * API: the only kernel file of the project that calls it.  Same behaviour as
 * lib/mmt_crypto_openssl.c; see the kernel-doc in mmt_lib.h.
 *
 * Everything is allocated in mmt_crypto_alloc(): one "ecb(aes)" skcipher
 * and request per ENC/MAC subkey, one "ctr(aes)" skcipher and request with
 * the ENC subkey (data pads), one "gcm(aes)" aead (16-byte tag) and
 * request, scatterlists for the largest ECB or CTR call and a bounce buffer
 * for sealing.  The hot paths (mmt_crypto_ecb, mmt_crypto_ctr) allocate
 * nothing and issue one request per call, whatever the length (up to
 * MMT_CRYPTO_ECB_MAX).  CTR keystream is the encryption of the shared zero
 * page (as fscrypt_zeroout_range() does), so nothing is cleared first;
 * mmt_crypto_ctr_xor() encrypts the caller's buffer instead.
 *
 * HKDF-SHA256 (RFC 5869) on the "hmac(sha256)" shash, after
 * fs/crypto/hkdf.c.
 *
 * The secure channel (mmt_chan_*, docs/ENGINE.md): one "gcm(aes)" aead and
 * request per context, one request per message of up to 64 MiB, mapped
 * page by page into scatterlist tables allocated per message.
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
 * @ctr: "ctr(aes)" transform keyed with the ENC subkey (data pads)
 * @ctr_req: preallocated request for @ctr
 * @ctr_iv: the counter block of the current CTR request (the request
 *	advances it)
 * @gcm: "gcm(aes)" transform keyed with the SEAL subkey, authsize 16
 * @gcm_req: preallocated request for @gcm
 * @wait: completion for asynchronous requests (one request in flight)
 * @sg_in: source scatterlist of an ECB call, one entry per page touched
 * @sg_out: destination scatterlist of an ECB call
 * @sg_gcm: the single entry over @bounce
 * @iv: GCM nonce, in memory the request may keep a pointer to
 * @bounce: linear buffer for AD || text || tag (kmalloc'd with the context)
 * @hash_key: Carter-Wegman hash keys, multilinear then NH (key material)
 * @ksalt: the keying salt the subkeys were derived with (not secret)
 */
struct mmt_crypto {
	struct crypto_skcipher *ecb[2];
	struct skcipher_request *ecb_req[2];
	struct crypto_skcipher *ctr;
	struct skcipher_request *ctr_req;
	u8 ctr_iv[MMT_AES_BLOCK];
	struct crypto_aead *gcm;
	struct aead_request *gcm_req;
	struct crypto_wait wait;
	struct scatterlist sg_in[MMT_ECB_SG_MAX];
	struct scatterlist sg_out[MMT_ECB_SG_MAX];
	struct scatterlist sg_gcm;
	u8 iv[MMT_GCM_NONCE_BYTES];
	u8 *bounce;
	u64 hash_key[MMT_ALL_KEYS];
	u8 ksalt[MMT_KSALT_BYTES];
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

int mmt_crypto_sha256(const u8 *data, size_t len, u8 *out)
{
	sha256(data, len, out);
	return 0;
}

static_assert(sizeof(struct sha256_state) <=
	      sizeof(((struct mmt_sha256_ctx *)0)->opaque));

/**
 * mmt_crypto_sha256_init() - start a SHA-256 (struct mmt_sha256_ctx)
 * @c: (out) the state, in the caller's memory (no allocation)
 *
 * Context: any.
 * Return: 0.
 */
int mmt_crypto_sha256_init(struct mmt_sha256_ctx *c)
{
	sha256_init((struct sha256_state *)c->opaque);
	return 0;
}

/**
 * mmt_crypto_sha256_update() - hash @len more bytes
 * @c: from mmt_crypto_sha256_init()
 * @data: @len bytes
 * @len: bytes
 *
 * Context: any.
 * Return: 0.
 */
int mmt_crypto_sha256_update(struct mmt_sha256_ctx *c, const u8 *data,
			     size_t len)
{
	sha256_update((struct sha256_state *)c->opaque, data, len);
	return 0;
}

/**
 * mmt_crypto_sha256_final() - the digest; the state is wiped
 * @c: from mmt_crypto_sha256_init()
 * @out: (out) MMT_SHA256_BYTES
 *
 * Context: any.
 * Return: 0.
 */
int mmt_crypto_sha256_final(struct mmt_sha256_ctx *c, u8 *out)
{
	sha256_final((struct sha256_state *)c->opaque, out);
	memzero_explicit(c, sizeof(*c));
	return 0;
}

/* One skcipher @alg and its request, keyed with @key. */
static int mmt_skcipher_setup(const char *alg, const u8 *key,
			      struct crypto_skcipher **tfmp,
			      struct skcipher_request **reqp,
			      struct crypto_wait *wait)
{
	struct crypto_skcipher *tfm;
	int err;

	tfm = crypto_alloc_skcipher(alg, 0, 0);
	if (IS_ERR(tfm))
		return PTR_ERR(tfm);
	*tfmp = tfm;
	err = crypto_skcipher_setkey(tfm, key, MMT_SUBKEY_BYTES);
	if (err)
		return err;
	*reqp = skcipher_request_alloc(tfm, GFP_KERNEL);
	if (!*reqp)
		return -ENOMEM;
	skcipher_request_set_callback(*reqp, CRYPTO_TFM_REQ_MAY_SLEEP |
				      CRYPTO_TFM_REQ_MAY_BACKLOG,
				      crypto_req_done, wait);
	return 0;
}

static int mmt_ecb_setup(struct mmt_crypto *c, int i, const u8 *key)
{
	int err = mmt_skcipher_setup("ecb(aes)", key, &c->ecb[i],
				     &c->ecb_req[i], &c->wait);

	if (!err)
		pr_info_once("MAC pads: %s\n",
			     crypto_skcipher_driver_name(c->ecb[i]));
	return err;
}

static int mmt_ctr_setup(struct mmt_crypto *c, const u8 *key)
{
	int err = mmt_skcipher_setup("ctr(aes)", key, &c->ctr, &c->ctr_req,
				     &c->wait);

	if (!err)
		pr_info_once("data pads: %s\n",
			     crypto_skcipher_driver_name(c->ctr));
	if (!err && crypto_skcipher_ivsize(c->ctr) != MMT_AES_BLOCK)
		err = -EINVAL;
	return err;
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

struct mmt_crypto *mmt_crypto_alloc_raw(const u8 *subkeys, const u8 *ksalt)
{
	struct mmt_crypto *c;
	int err;

	/* kmalloc'd: @iv is handed to the AEAD, which may DMA-map it. */
	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return ERR_PTR(-ENOMEM);
	crypto_init_wait(&c->wait);
	if (ksalt)
		memcpy(c->ksalt, ksalt, MMT_KSALT_BYTES);
	err = mmt_ecb_setup(c, MMT_SUBKEY_ENC,
			    subkeys + MMT_SUBKEY_ENC * MMT_SUBKEY_BYTES);
	if (!err)
		err = mmt_ecb_setup(c, MMT_SUBKEY_MAC,
				    subkeys + MMT_SUBKEY_MAC * MMT_SUBKEY_BYTES);
	if (!err)
		err = mmt_ctr_setup(c, subkeys +
				    MMT_SUBKEY_ENC * MMT_SUBKEY_BYTES);
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
	skcipher_request_free(c->ctr_req);
	crypto_free_skcipher(c->ctr);
	aead_request_free(c->gcm_req);
	crypto_free_aead(c->gcm);
	kfree_sensitive(c->bounce);
	kfree_sensitive(c);
}

const u64 *mmt_crypto_hash_key(const struct mmt_crypto *c)
{
	return c->hash_key;
}

const u8 *mmt_crypto_ksalt(const struct mmt_crypto *c)
{
	return c->ksalt;
}

/* Pages touched by @len > 0 bytes at @buf: scatterlist entries needed. */
static unsigned int mmt_sg_pages(const u8 *buf, size_t len)
{
	return DIV_ROUND_UP(offset_in_page(buf) + len, PAGE_SIZE);
}

/*
 * Map @len > 0 bytes at @buf (kmalloc'd or vmalloc'd, never the stack)
 * into the entries from @sg on, one per page, following chain links
 * (sg_next), so it fills a flat array and an sg_alloc_table() alike.  The
 * caller provides mmt_sg_pages() entries.  Returns the last entry used.
 */
static struct scatterlist *mmt_sg_fill(struct scatterlist *sg, const u8 *buf,
				       size_t len)
{
	struct scatterlist *last = sg;

	while (len) {
		size_t off = offset_in_page(buf);
		size_t chunk = min_t(size_t, len, PAGE_SIZE - off);
		struct page *page = is_vmalloc_addr(buf) ?
			vmalloc_to_page(buf) : virt_to_page(buf);

		sg_set_page(sg, page, chunk, off);
		last = sg;
		sg = sg_next(sg);
		buf += chunk;
		len -= chunk;
	}
	return last;
}

/* ECB: map @len bytes at @buf into the flat array @sg and mark the end. */
static void mmt_map_sg(struct scatterlist *sg, const u8 *buf, size_t len)
{
	sg_init_table(sg, MMT_ECB_SG_MAX);
	sg_mark_end(mmt_sg_fill(sg, buf, len));
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

int mmt_crypto_ctr(struct mmt_crypto *c, const u8 *iv, u8 *out, size_t len)
{
	struct scatterlist *sg = c->sg_in;
	size_t done;

	if (len % MMT_AES_BLOCK || len > MMT_CRYPTO_ECB_MAX)
		return -EINVAL;
	if (!len)
		return 0;
	/* source: the zero page, as often as needed; keystream = AES(ctr) */
	sg_init_table(sg, MMT_ECB_SG_MAX);
	for (done = 0; done < len; done += PAGE_SIZE, sg++)
		sg_set_page(sg, ZERO_PAGE(0),
			    min_t(size_t, len - done, PAGE_SIZE), 0);
	sg_mark_end(sg - 1);
	mmt_map_sg(c->sg_out, out, len);
	memcpy(c->ctr_iv, iv, MMT_AES_BLOCK);
	skcipher_request_set_crypt(c->ctr_req, c->sg_in, c->sg_out, len,
				   c->ctr_iv);
	return crypto_wait_req(crypto_skcipher_encrypt(c->ctr_req), &c->wait);
}

/*
 * Can @len > 0 bytes at @buf go into a scatterlist page by page?  Linear
 * memory (kmalloc, the stack without CONFIG_VMAP_STACK) and vmalloc'd
 * memory (kvmalloc, a vmapped stack) can; module static data, for one,
 * cannot.
 */
static bool mmt_sg_ok(const u8 *buf, size_t len)
{
	if (is_vmalloc_addr(buf))
		return is_vmalloc_addr(buf + len - 1);
	return virt_addr_valid(buf) && virt_addr_valid(buf + len - 1);
}

int mmt_crypto_ctr_xor(struct mmt_crypto *c, const u8 *iv, const u8 *in,
		       u8 *out, size_t len)
{
	struct skcipher_request *req = c->ctr_req;
	struct scatterlist sg;
	size_t n;
	int err = 0;

	if (len % MMT_AES_BLOCK || len > MMT_CRYPTO_ECB_MAX)
		return -EINVAL;
	if (!len)
		return 0;
	memcpy(c->ctr_iv, iv, MMT_AES_BLOCK);
	if (mmt_sg_ok(in, len) && mmt_sg_ok(out, len)) {
		mmt_map_sg(c->sg_in, in, len);
		if (in != out)
			mmt_map_sg(c->sg_out, out, len);
		skcipher_request_set_crypt(req, c->sg_in,
					   in != out ? c->sg_out : c->sg_in,
					   len, c->ctr_iv);
		return crypto_wait_req(crypto_skcipher_encrypt(req), &c->wait);
	}
	/*
	 * Elsewhere: through the bounce buffer.  "ctr(aes)" leaves the next
	 * counter block in the IV (the crypto API's chaining rule for CTR).
	 */
	for (; len && !err; in += n, out += n, len -= n) {
		n = min_t(size_t, len, MMT_BOUNCE_BYTES & ~(MMT_AES_BLOCK - 1));
		memcpy(c->bounce, in, n);
		sg_init_one(&sg, c->bounce, n);
		skcipher_request_set_crypt(req, &sg, &sg, n, c->ctr_iv);
		err = crypto_wait_req(crypto_skcipher_encrypt(req), &c->wait);
		if (!err)
			memcpy(out, c->bounce, n);
	}
	memzero_explicit(c->bounce, MMT_BOUNCE_BYTES);
	return err;
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

/* ------------------------------------------------------ secure channel */

/**
 * struct mmt_chan_crypto - kernel secure-channel context
 * @tfm: "gcm(aes)" keyed with the channel key, authsize 16
 * @req: preallocated request for @tfm (one message in flight)
 * @wait: completion for asynchronous requests
 * @sealed: a seq has been sealed; @last_sealed is valid
 * @opened: a seq has been opened; @last_opened is valid
 * @last_sealed: last sealed seq; the next one must be above it
 * @last_opened: last opened seq; the next one must be above it
 * @iv: the nonce of the current message, salt || be64 seq
 * @ad: associated data of the current message: the first scatterlist entry
 *	of source and destination (linear, kmalloc'd with the context), so
 *	the AES-NI glue finds all of it there and does not allocate
 */
struct mmt_chan_crypto {
	struct crypto_aead *tfm;
	struct aead_request *req;
	struct crypto_wait wait;
	bool sealed;
	bool opened;
	u64 last_sealed;
	u64 last_opened;
	u8 iv[MMT_GCM_NONCE_BYTES];
	u8 ad[MMT_CHAN_AD_MAX];
};

struct mmt_chan_crypto *mmt_chan_crypto_alloc_raw(const u8 *key,
						  const u8 *salt)
{
	struct mmt_chan_crypto *c;
	struct crypto_aead *tfm;
	int err;

	/* kmalloc'd: @iv and @ad are handed to the AEAD (linear memory). */
	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return ERR_PTR(-ENOMEM);
	crypto_init_wait(&c->wait);
	memcpy(c->iv, salt, MMT_CHAN_SALT_BYTES);
	tfm = crypto_alloc_aead("gcm(aes)", 0, 0);
	if (IS_ERR(tfm)) {
		err = PTR_ERR(tfm);
		goto err_free;
	}
	c->tfm = tfm;
	pr_info_once("channel: %s\n", crypto_aead_driver_name(tfm));
	err = -EINVAL;
	if (crypto_aead_ivsize(tfm) != MMT_GCM_NONCE_BYTES)
		goto err_free;
	err = crypto_aead_setkey(tfm, key, MMT_CHAN_KEY_BYTES);
	if (!err)
		err = crypto_aead_setauthsize(tfm, MMT_GCM_TAG_BYTES);
	if (err)
		goto err_free;
	err = -ENOMEM;
	c->req = aead_request_alloc(tfm, GFP_KERNEL);
	if (!c->req)
		goto err_free;
	aead_request_set_callback(c->req, CRYPTO_TFM_REQ_MAY_SLEEP |
				  CRYPTO_TFM_REQ_MAY_BACKLOG,
				  crypto_req_done, &c->wait);
	return c;

err_free:
	mmt_chan_crypto_free(c);
	return ERR_PTR(err);
}

void mmt_chan_crypto_free(struct mmt_chan_crypto *c)
{
	if (IS_ERR_OR_NULL(c))
		return;
	/* aead_request_free() and crypto_free_aead() wipe what they free. */
	aead_request_free(c->req);
	crypto_free_aead(c->tfm);
	kfree_sensitive(c);
}

/* True if [a, a + alen) and [b, b + blen) overlap (and a != b). */
static bool mmt_chan_overlap(const u8 *a, size_t alen, const u8 *b,
			     size_t blen)
{
	return a != b && a < b + blen && b < a + alen;
}

/*
 * One side of an AEAD request: [AD entry if @ad_len] + @len bytes at @buf
 * page by page, in a table of exactly that many entries (sg_alloc_table()
 * marks the last one).  Returns 0 with @t->sgl NULL if there is nothing.
 */
static int mmt_chan_sg(struct mmt_chan_crypto *c, struct sg_table *t,
		       size_t ad_len, const u8 *buf, size_t len)
{
	unsigned int n = (ad_len ? 1 : 0) + (len ? mmt_sg_pages(buf, len) : 0);
	struct scatterlist *sg;
	int err;

	memset(t, 0, sizeof(*t));
	if (!n)
		return 0;
	err = sg_alloc_table(t, n, GFP_KERNEL);
	if (err)
		return err;
	sg = t->sgl;
	if (ad_len) {
		sg_set_buf(sg, c->ad, ad_len);
		sg = sg_next(sg);
	}
	if (len)
		mmt_sg_fill(sg, buf, len);
	return 0;
}

/* Run the request over @src/@dst (@dst NULL: in place) with @seq's nonce. */
static int mmt_chan_crypt(struct mmt_chan_crypto *c, bool enc, u64 seq,
			  const u8 *ad, size_t ad_len, struct scatterlist *src,
			  struct scatterlist *dst, size_t cryptlen)
{
	struct aead_request *req = c->req;

	put_unaligned_be64(seq, c->iv + MMT_CHAN_SALT_BYTES);
	if (ad_len)
		memcpy(c->ad, ad, ad_len);
	aead_request_set_ad(req, ad_len);
	aead_request_set_crypt(req, src, dst ? dst : src, cryptlen, c->iv);
	return crypto_wait_req(enc ? crypto_aead_encrypt(req) :
			       crypto_aead_decrypt(req), &c->wait);
}

int mmt_chan_seal(struct mmt_chan_crypto *c, u64 seq, const u8 *ad,
		  size_t ad_len, const u8 *pt, u8 *out, size_t len)
{
	struct sg_table src, dst;
	int err;

	if (len > MMT_CHAN_MSG_MAX || ad_len > MMT_CHAN_AD_MAX ||
	    mmt_chan_overlap(pt, len, out, len + MMT_GCM_TAG_BYTES))
		return -EINVAL;
	if (c->sealed && c->last_sealed == U64_MAX)
		return -EOVERFLOW;
	if (c->sealed && seq <= c->last_sealed)
		return -EINVAL;
	err = mmt_chan_sg(c, &dst, ad_len, out, len + MMT_GCM_TAG_BYTES);
	if (err)
		return err;
	src.sgl = NULL;
	if (pt != out) {
		err = mmt_chan_sg(c, &src, ad_len, pt, len);
		if (err)
			goto out_free_dst;
	}
	/* Committed: this nonce is used up whatever happens next. */
	c->sealed = true;
	c->last_sealed = seq;
	/* No AD and no text: nothing to read, encrypt "in place". */
	err = mmt_chan_crypt(c, true, seq, ad, ad_len,
			     src.sgl ? src.sgl : dst.sgl, dst.sgl, len);
	if (err)
		memzero_explicit(out, len + MMT_GCM_TAG_BYTES);
	if (src.sgl)
		sg_free_table(&src);
out_free_dst:
	sg_free_table(&dst);
	return err;
}

int mmt_chan_open(struct mmt_chan_crypto *c, u64 seq, const u8 *ad,
		  size_t ad_len, const u8 *in, u8 *pt, size_t len)
{
	struct sg_table src, dst;
	int err;

	if (len > MMT_CHAN_MSG_MAX || ad_len > MMT_CHAN_AD_MAX ||
	    mmt_chan_overlap(in, len + MMT_GCM_TAG_BYTES, pt, len))
		return -EINVAL;
	if (c->opened && seq <= c->last_opened)
		return -ESTALE;
	err = mmt_chan_sg(c, &src, ad_len, in, len + MMT_GCM_TAG_BYTES);
	if (err)
		return err;
	dst.sgl = NULL;
	if (pt != in) {
		err = mmt_chan_sg(c, &dst, ad_len, pt, len);
		if (err)
			goto out_free_src;
	}
	/* No AD and no text: nothing is written, decrypt "in place". */
	err = mmt_chan_crypt(c, false, seq, ad, ad_len, src.sgl, dst.sgl,
			     len + MMT_GCM_TAG_BYTES);
	if (err) {
		/* The text was decrypted before the tag was checked. */
		memzero_explicit(pt, len);
	} else {
		c->opened = true;
		c->last_opened = seq;
	}
	if (dst.sgl)
		sg_free_table(&dst);
out_free_src:
	sg_free_table(&src);
	return err;
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
