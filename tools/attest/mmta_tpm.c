// SPDX-License-Identifier: GPL-2.0
/*
 * mmta_tpm.c - the verifier's checks of TPM 2.0 evidence, in software
 *
 * The authority has no TPM of its own: it checks the EK certificate
 * against the manufacturer's CA (OpenSSL), wraps the challenge nonce to
 * the EK and the AK's name as TPM2_MakeCredential does (TPM 2.0 Part 1,
 * section 24, "Credential Protection"; Part 3, 12.6), and checks a
 * TPM2_Quote (Part 3, 18.4) with the structures unmarshalled by libtss2-mu.
 * docs/ATTESTATION.md describes the protocol around them.
 */
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/hmac.h>
#include <openssl/param_build.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/x509v3.h>
#include <tss2/tss2_mu.h>

#include "mmta.h"

/**
 * mmta_ek_verify() - check an EK certificate against the manufacturer's CA
 * @der: the EK certificate, DER, as read from the TPM's NV index 0x01c00002
 * @len: its length in bytes
 * @ca_file: PEM file of the trusted manufacturer CA certificates (root
 *	and intermediates)
 * @ek_pub: (out) the EK public key, caller frees; NULL when not wanted
 * @ek_hash: (out) SHA-256 of the DER SubjectPublicKeyInfo: the TPM's
 *	identity in the authority's node list
 *
 * The chain must verify to a certificate of @ca_file, the certificate must
 * carry the extended key usage tcg-kp-EKCertificate (TCG EK Credential
 * Profile 2.0, 3.2.16) and an RSA 2048 key (the L-1 EK template).
 *
 * Return: MMTA_OK, MMTA_EEK (message on stderr) or MMTA_ESYS.
 */
int mmta_ek_verify(const uint8_t *der, size_t len, const char *ca_file,
		   EVP_PKEY **ek_pub, uint8_t ek_hash[MMTA_SHA256_LEN])
{
	const unsigned char *p = der;
	X509 *cert = d2i_X509(NULL, &p, (long)len);
	X509_STORE *store = X509_STORE_new();
	X509_STORE_CTX *ctx = X509_STORE_CTX_new();
	EXTENDED_KEY_USAGE *eku = NULL;
	ASN1_OBJECT *ek_oid = OBJ_txt2obj(MMTA_OID_EK_CERT, 1);
	EVP_PKEY *pub = NULL;
	unsigned char *spki = NULL;
	int rc = MMTA_EEK, spki_len, i;
	bool has_eku = false;

	if (!store || !ctx || !ek_oid) {
		rc = MMTA_ESYS;
		goto out;
	}
	if (!cert || p != der + len) {
		mmta_err("EK certificate: not one DER certificate");
		goto out;
	}
	if (X509_STORE_load_file(store, ca_file) != 1) {
		mmta_err("%s: cannot load the manufacturer CA certificates",
			 ca_file);
		rc = MMTA_ESYS;
		goto out;
	}
	if (X509_STORE_CTX_init(ctx, store, cert, NULL) != 1) {
		rc = MMTA_ESYS;
		goto out;
	}
	if (X509_verify_cert(ctx) != 1) {
		mmta_err("EK certificate: %s",
			 X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx)));
		goto out;
	}
	eku = X509_get_ext_d2i(cert, NID_ext_key_usage, NULL, NULL);
	for (i = 0; eku && i < sk_ASN1_OBJECT_num(eku); i++)
		has_eku |= !OBJ_cmp(sk_ASN1_OBJECT_value(eku, i), ek_oid);
	if (!has_eku) {
		mmta_err("EK certificate: no extended key usage tcg-kp-EKCertificate");
		goto out;
	}
	pub = X509_get_pubkey(cert);
	if (!pub || EVP_PKEY_get_base_id(pub) != EVP_PKEY_RSA ||
	    EVP_PKEY_get_bits(pub) != 2048) {
		mmta_err("EK certificate: not an RSA 2048 key");
		goto out;
	}
	spki_len = i2d_PUBKEY(pub, &spki);
	if (spki_len <= 0) {
		rc = MMTA_ESYS;
		goto out;
	}
	mmta_sha256(spki, (size_t)spki_len, ek_hash);
	if (ek_pub) {
		*ek_pub = pub;
		pub = NULL;
	}
	rc = MMTA_OK;
out:
	OPENSSL_free(spki);
	EVP_PKEY_free(pub);
	EXTENDED_KEY_USAGE_free(eku);
	ASN1_OBJECT_free(ek_oid);
	X509_STORE_CTX_free(ctx);
	X509_STORE_free(store);
	X509_free(cert);
	return rc;
}

static EVP_PKEY *rsa_from_modulus(const uint8_t *n, size_t n_len, uint32_t e)
{
	OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
	BIGNUM *bn_n = BN_bin2bn(n, (int)n_len, NULL);
	BIGNUM *bn_e = BN_new();
	OSSL_PARAM *params = NULL;
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL);
	EVP_PKEY *pkey = NULL;

	if (!bld || !bn_n || !bn_e || !ctx || !BN_set_word(bn_e, e ? e : 65537) ||
	    !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, bn_n) ||
	    !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, bn_e))
		goto out;
	params = OSSL_PARAM_BLD_to_param(bld);
	if (!params || EVP_PKEY_fromdata_init(ctx) != 1 ||
	    EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) != 1)
		pkey = NULL;
out:
	OSSL_PARAM_free(params);
	OSSL_PARAM_BLD_free(bld);
	BN_free(bn_n);
	BN_free(bn_e);
	EVP_PKEY_CTX_free(ctx);
	return pkey;
}

/**
 * mmta_ak_check() - check that a public area is a usable attestation key
 * @tpm2b_public: a marshalled TPM2B_PUBLIC, as TPM2_CreatePrimary returns
 * @len: its length in bytes
 * @name: (out) the AK's TPM name, nameAlg || SHA-256(TPMT_PUBLIC), at
 *	least 34 bytes
 * @name_len: (out) its length, 34
 * @ak_pub: (out) the AK as an OpenSSL key, caller frees
 *
 * The AK must be an RSA key, nameAlg SHA-256, with fixedTPM, fixedParent,
 * sensitiveDataOrigin, restricted and sign set and decrypt clear, scheme
 * RSASSA with SHA-256: a key that cannot leave its TPM and signs only
 * structures the TPM made (TPM 2.0 Part 1, 25.2 and 27.5.3.4).
 *
 * Return: MMTA_OK, MMTA_EMSG (does not unmarshal) or MMTA_EAK.
 */
int mmta_ak_check(const uint8_t *tpm2b_public, size_t len,
		  uint8_t *name, size_t *name_len, EVP_PKEY **ak_pub)
{
	const TPMA_OBJECT need = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT |
		TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_RESTRICTED |
		TPMA_OBJECT_SIGN_ENCRYPT;
	TPM2B_PUBLIC pub;
	const TPMT_PUBLIC *a = &pub.publicArea;
	size_t off = 0;

	memset(&pub, 0, sizeof(pub));
	if (Tss2_MU_TPM2B_PUBLIC_Unmarshal(tpm2b_public, len, &off, &pub) ||
	    off != len || pub.size + 2u != len) {
		mmta_err("AK: not a TPM2B_PUBLIC");
		return MMTA_EMSG;
	}
	if (a->type != TPM2_ALG_RSA || a->nameAlg != TPM2_ALG_SHA256 ||
	    (a->objectAttributes & need) != need ||
	    (a->objectAttributes & TPMA_OBJECT_DECRYPT) ||
	    a->parameters.rsaDetail.scheme.scheme != TPM2_ALG_RSASSA ||
	    a->parameters.rsaDetail.scheme.details.rsassa.hashAlg !=
	    TPM2_ALG_SHA256 || a->parameters.rsaDetail.keyBits < 2048) {
		mmta_err("AK: not a restricted fixedTPM RSASSA-SHA256 signing key");
		return MMTA_EAK;
	}
	name[0] = TPM2_ALG_SHA256 >> 8;
	name[1] = TPM2_ALG_SHA256 & 0xff;
	mmta_sha256(tpm2b_public + 2, len - 2, name + 2);
	*name_len = 2 + MMTA_SHA256_LEN;
	*ak_pub = rsa_from_modulus(a->unique.rsa.buffer, a->unique.rsa.size,
				   a->parameters.rsaDetail.exponent);
	if (!*ak_pub) {
		mmta_err("AK: bad RSA modulus");
		return MMTA_EAK;
	}
	return MMTA_OK;
}

/**
 * mmta_kdfa_sha256() - KDFa with HMAC-SHA-256 (TPM 2.0 Part 1, 11.4.10.2:
 * SP 800-108 counter mode)
 * @key: the HMAC key
 * @key_len: its length
 * @label: NUL-terminated label; the NUL is part of the input
 * @ctx_u: contextU or NULL
 * @u_len: its length
 * @ctx_v: contextV or NULL
 * @v_len: its length
 * @out: (out) @out_len bytes
 * @out_len: bytes wanted, at most 1024
 *
 * Return: MMTA_OK or MMTA_ESYS.
 */
int mmta_kdfa_sha256(const uint8_t *key, size_t key_len, const char *label,
		     const uint8_t *ctx_u, size_t u_len, const uint8_t *ctx_v,
		     size_t v_len, uint8_t *out, size_t out_len)
{
	uint8_t block[MMTA_SHA256_LEN], in[512];
	uint32_t bits = (uint32_t)out_len * 8, i;
	size_t done = 0, n, lab = strlen(label) + 1, pos;
	unsigned int mdlen;

	if (out_len > 1024 || 8 + lab + u_len + v_len > sizeof(in))
		return MMTA_ESYS;
	for (i = 1; done < out_len; i++) {
		in[0] = i >> 24; in[1] = i >> 16; in[2] = i >> 8; in[3] = i;
		memcpy(in + 4, label, lab);
		pos = 4 + lab;
		if (ctx_u)
			memcpy(in + pos, ctx_u, u_len);
		pos += ctx_u ? u_len : 0;
		if (ctx_v)
			memcpy(in + pos, ctx_v, v_len);
		pos += ctx_v ? v_len : 0;
		in[pos++] = bits >> 24; in[pos++] = bits >> 16;
		in[pos++] = bits >> 8; in[pos++] = bits;
		if (!HMAC(EVP_sha256(), key, (int)key_len, in, pos, block,
			  &mdlen))
			return MMTA_ESYS;
		n = out_len - done < mdlen ? out_len - done : mdlen;
		memcpy(out + done, block, n);
		done += n;
	}
	OPENSSL_cleanse(block, sizeof(block));
	return MMTA_OK;
}

/**
 * mmta_make_credential() - TPM2_MakeCredential in software: wrap @secret so
 * that only the TPM holding @ek_pub, with the key named @ak_name loaded,
 * recovers it with TPM2_ActivateCredential
 * @ek_pub: the EK (RSA 2048, nameAlg SHA-256, AES-128-CFB: template L-1)
 * @ak_name: the AK's name (mmta_ak_check())
 * @ak_name_len: its length
 * @secret: the credential to wrap, here the challenge nonce
 * @secret_len: its length, at most 32
 * @blob: (out) marshalled TPM2B_ID_OBJECT, room for 2 + 2 + 32 + 2 + 32
 * @blob_len: (out) its length
 * @enc_secret: (out) marshalled TPM2B_ENCRYPTED_SECRET, room for 258
 * @enc_secret_len: (out) its length
 *
 * TPM 2.0 Part 1, 24.4 and 24.5: a random seed, RSA-OAEP (SHA-256, label
 * "IDENTITY") to the EK; symmetric key KDFa(seed, "STORAGE", name);
 * AES-128-CFB with a zero IV over TPM2B_DIGEST(secret); outer HMAC-SHA-256
 * under KDFa(seed, "INTEGRITY") over the ciphertext and the name.
 *
 * Return: MMTA_OK or MMTA_ESYS.
 */
int mmta_make_credential(EVP_PKEY *ek_pub, const uint8_t *ak_name,
			 size_t ak_name_len, const uint8_t *secret,
			 size_t secret_len, uint8_t *blob, size_t *blob_len,
			 uint8_t *enc_secret, size_t *enc_secret_len)
{
	static const char label[] = "IDENTITY";
	uint8_t seed[MMTA_SHA256_LEN], symkey[16], hmackey[MMTA_SHA256_LEN];
	uint8_t plain[2 + MMTA_SHA256_LEN], iv[16] = { 0 }, mac_in[128];
	uint8_t *enc = blob + 4 + MMTA_SHA256_LEN, *lab = NULL;
	EVP_PKEY_CTX *pctx = NULL;
	EVP_CIPHER_CTX *c = NULL;
	unsigned int hlen;
	size_t outlen = 256;
	int n, n2, rc = MMTA_ESYS;

	if (secret_len > MMTA_SHA256_LEN || RAND_bytes(seed, sizeof(seed)) != 1)
		return MMTA_ESYS;
	/* the seed to the EK: RSA-OAEP, SHA-256, label "IDENTITY\0" */
	pctx = EVP_PKEY_CTX_new(ek_pub, NULL);
	lab = OPENSSL_memdup(label, sizeof(label));
	if (!pctx || !lab || EVP_PKEY_encrypt_init(pctx) != 1 ||
	    EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_OAEP_PADDING) != 1 ||
	    EVP_PKEY_CTX_set_rsa_oaep_md(pctx, EVP_sha256()) != 1 ||
	    EVP_PKEY_CTX_set_rsa_mgf1_md(pctx, EVP_sha256()) != 1 ||
	    EVP_PKEY_CTX_set0_rsa_oaep_label(pctx, lab, sizeof(label)) != 1)
		goto out;
	lab = NULL;	/* owned by pctx now */
	if (EVP_PKEY_encrypt(pctx, enc_secret + 2, &outlen, seed,
			     sizeof(seed)) != 1 || outlen != 256)
		goto out;
	enc_secret[0] = (uint8_t)(outlen >> 8);
	enc_secret[1] = (uint8_t)outlen;
	*enc_secret_len = 2 + outlen;

	if (mmta_kdfa_sha256(seed, sizeof(seed), "STORAGE", ak_name,
			     ak_name_len, NULL, 0, symkey, sizeof(symkey)) ||
	    mmta_kdfa_sha256(seed, sizeof(seed), "INTEGRITY", NULL, 0, NULL,
			     0, hmackey, sizeof(hmackey)))
		goto out;
	plain[0] = (uint8_t)(secret_len >> 8);
	plain[1] = (uint8_t)secret_len;
	memcpy(plain + 2, secret, secret_len);
	c = EVP_CIPHER_CTX_new();
	if (!c || EVP_EncryptInit_ex(c, EVP_aes_128_cfb128(), NULL, symkey,
				     iv) != 1 ||
	    EVP_EncryptUpdate(c, enc, &n, plain, (int)(2 + secret_len)) != 1 ||
	    EVP_EncryptFinal_ex(c, enc + n, &n2) != 1)
		goto out;
	n += n2;
	if (ak_name_len > sizeof(mac_in) - (size_t)n)
		goto out;
	memcpy(mac_in, enc, (size_t)n);
	memcpy(mac_in + n, ak_name, ak_name_len);
	if (!HMAC(EVP_sha256(), hmackey, sizeof(hmackey), mac_in,
		  (size_t)n + ak_name_len, blob + 4, &hlen) ||
	    hlen != MMTA_SHA256_LEN)
		goto out;
	/* TPM2B_ID_OBJECT: size, TPM2B_DIGEST integrityHMAC, encIdentity */
	*blob_len = 4 + MMTA_SHA256_LEN + (size_t)n;
	blob[0] = (uint8_t)((*blob_len - 2) >> 8);
	blob[1] = (uint8_t)(*blob_len - 2);
	blob[2] = 0;
	blob[3] = MMTA_SHA256_LEN;
	rc = MMTA_OK;
out:
	OPENSSL_cleanse(seed, sizeof(seed));
	OPENSSL_cleanse(symkey, sizeof(symkey));
	OPENSSL_cleanse(hmackey, sizeof(hmackey));
	OPENSSL_free(lab);
	EVP_CIPHER_CTX_free(c);
	EVP_PKEY_CTX_free(pctx);
	return rc;
}

/**
 * mmta_qualifying_data() - the qualifyingData of the node's quote:
 * SHA-256("mmt-attest quote v1\0" || nonce || node key)
 * @nonce: the challenge nonce the node recovered with ActivateCredential
 * @node_key: the node's X25519 public key the credential will carry
 * @out: (out) 32 bytes
 *
 * Binds the node key to this attestation: a key swapped in transit no
 * longer matches the quote.
 */
void mmta_qualifying_data(const uint8_t nonce[MMTA_NONCE_LEN],
			  const uint8_t node_key[MMTA_NODE_KEY_LEN],
			  uint8_t out[MMTA_SHA256_LEN])
{
	static const char tag[] = "mmt-attest quote v1";
	uint8_t buf[sizeof(tag) + MMTA_NONCE_LEN + MMTA_NODE_KEY_LEN];

	memcpy(buf, tag, sizeof(tag));
	memcpy(buf + sizeof(tag), nonce, MMTA_NONCE_LEN);
	memcpy(buf + sizeof(tag) + MMTA_NONCE_LEN, node_key, MMTA_NODE_KEY_LEN);
	mmta_sha256(buf, sizeof(buf), out);
}

/**
 * mmta_quote_verify() - check a TPM2_Quote of PCR 10 (SHA-256 bank)
 * @ak_pub: the AK the challenge was made for
 * @attest: the TPMS_ATTEST bytes the TPM signed (TPM2B_ATTEST contents)
 * @attest_len: their length
 * @sig: marshalled TPMT_SIGNATURE
 * @sig_len: its length
 * @qualifying: the expected extraData (mmta_qualifying_data())
 * @pcr10: the expected PCR 10 value (replayed from the IMA log)
 *
 * In order: the signature (RSASSA-PKCS1-v1_5, SHA-256) under the AK over
 * @attest; magic TPM_GENERATED_VALUE and type TPM_ST_ATTEST_QUOTE; the
 * extraData; the selection (exactly PCR 10 of the SHA-256 bank); the
 * pcrDigest, SHA-256 of the selected PCR values (TPM 2.0 Part 3, 18.4).
 *
 * Return: MMTA_OK, MMTA_ESIG, MMTA_EMSG, MMTA_ENONCE or MMTA_EPCR.
 */
int mmta_quote_verify(EVP_PKEY *ak_pub, const uint8_t *attest, size_t
		      attest_len, const uint8_t *sig, size_t sig_len,
		      const uint8_t qualifying[MMTA_SHA256_LEN],
		      const uint8_t pcr10[MMTA_SHA256_LEN])
{
	TPMT_SIGNATURE ts;
	TPMS_ATTEST at;
	const TPMS_PCR_SELECTION *sel;
	uint8_t digest[MMTA_SHA256_LEN];
	EVP_MD_CTX *md = NULL;
	size_t off = 0;
	int ok, i;

	memset(&ts, 0, sizeof(ts));
	memset(&at, 0, sizeof(at));
	if (Tss2_MU_TPMT_SIGNATURE_Unmarshal(sig, sig_len, &off, &ts) ||
	    off != sig_len || ts.sigAlg != TPM2_ALG_RSASSA ||
	    ts.signature.rsassa.hash != TPM2_ALG_SHA256) {
		mmta_err("quote: signature is not RSASSA with SHA-256");
		return MMTA_ESIG;
	}
	md = EVP_MD_CTX_new();
	ok = md && EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL,
					ak_pub) == 1 &&
	     EVP_DigestVerify(md, ts.signature.rsassa.sig.buffer,
			      ts.signature.rsassa.sig.size, attest,
			      attest_len) == 1;
	EVP_MD_CTX_free(md);
	ERR_clear_error();
	if (!ok) {
		mmta_err("quote: signature does not verify under the AK");
		return MMTA_ESIG;
	}
	off = 0;
	if (Tss2_MU_TPMS_ATTEST_Unmarshal(attest, attest_len, &off, &at) ||
	    off != attest_len || at.magic != TPM2_GENERATED_VALUE ||
	    at.type != TPM2_ST_ATTEST_QUOTE) {
		mmta_err("quote: not a TPMS_ATTEST of a quote");
		return MMTA_EMSG;
	}
	if (at.extraData.size != MMTA_SHA256_LEN ||
	    memcmp(at.extraData.buffer, qualifying, MMTA_SHA256_LEN)) {
		mmta_err("quote: not over this challenge's nonce and node key");
		return MMTA_ENONCE;
	}
	sel = &at.attested.quote.pcrSelect.pcrSelections[0];
	ok = at.attested.quote.pcrSelect.count == 1 &&
	     sel->hash == TPM2_ALG_SHA256 && sel->sizeofSelect >= 2 &&
	     sel->pcrSelect[MMTA_IMA_PCR / 8] == 1u << (MMTA_IMA_PCR % 8);
	for (i = 0; ok && i < sel->sizeofSelect; i++)
		ok = i == MMTA_IMA_PCR / 8 || !sel->pcrSelect[i];
	if (!ok) {
		mmta_err("quote: selection is not PCR 10 of the SHA-256 bank");
		return MMTA_EPCR;
	}
	mmta_sha256(pcr10, MMTA_SHA256_LEN, digest);
	if (at.attested.quote.pcrDigest.size != MMTA_SHA256_LEN ||
	    memcmp(at.attested.quote.pcrDigest.buffer, digest,
		   MMTA_SHA256_LEN)) {
		mmta_err("quote: PCR 10 differs from the IMA log's replay");
		return MMTA_EPCR;
	}
	return MMTA_OK;
}
