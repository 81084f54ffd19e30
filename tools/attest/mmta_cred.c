// SPDX-License-Identifier: GPL-2.0
/*
 * mmta_cred.c - the node credential the authority issues
 *
 * A credential file is the 136-byte body (struct mmta_cred, little-endian,
 * below) followed by a detached PKCS#7 (CMS) signature over the body:
 * RSA PKCS#1 v1.5 with SHA-256, no signed attributes, no certificates,
 * the signer named by issuer and serial number.  It is the form the kernel
 * verifies module signatures in (scripts/sign-file.c), so the module can
 * check it with verify_pkcs7_signature() against the authority's X.509
 * certificate in a keyring (docs/ATTESTATION.md, "Credential").
 *
 * Body layout (offsets in bytes):
 *   0  magic "MMTCRED1"     8  le16 version (1)   10  le16 flags (0)
 *  12  le32 node id        16  le64 serial        24  le64 not_before
 *  32  le64 not_after      40  node key [32]      72  module hash [32]
 * 104  EK hash [32]       136  end
 */
#include <string.h>

#include <openssl/cms.h>
#include <openssl/err.h>

#include "mmta.h"

static void put_le(uint8_t *p, uint64_t v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	int i;

	for (i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* mmta_cred_encode() - the 136-byte wire form of @c's body */
void mmta_cred_encode(const struct mmta_cred *c,
		      uint8_t out[MMTA_CRED_BODY_LEN])
{
	memcpy(out, MMTA_CRED_MAGIC, 8);
	put_le(out + 8, MMTA_CRED_VERSION, 2);
	put_le(out + 10, 0, 2);
	put_le(out + 12, c->node_id, 4);
	put_le(out + 16, c->serial, 8);
	put_le(out + 24, c->not_before, 8);
	put_le(out + 32, c->not_after, 8);
	memcpy(out + 40, c->node_key, MMTA_NODE_KEY_LEN);
	memcpy(out + 72, c->module_hash, MMTA_SHA256_LEN);
	memcpy(out + 104, c->ek_hash, MMTA_SHA256_LEN);
}

/**
 * mmta_cred_decode() - parse a credential body (not its signature)
 * @in: at least MMTA_CRED_BODY_LEN bytes
 * @len: length of @in
 * @c: (out) the fields
 *
 * Return: MMTA_OK, or MMTA_ECRED for a short body, a wrong magic or
 * version, non-zero flags or a node id outside 1..65535.
 */
int mmta_cred_decode(const uint8_t *in, size_t len, struct mmta_cred *c)
{
	if (len < MMTA_CRED_BODY_LEN || memcmp(in, MMTA_CRED_MAGIC, 8) ||
	    get_le(in + 8, 2) != MMTA_CRED_VERSION || get_le(in + 10, 2)) {
		mmta_err("credential: not a version 1 credential");
		return MMTA_ECRED;
	}
	c->node_id = (uint32_t)get_le(in + 12, 4);
	c->serial = get_le(in + 16, 8);
	c->not_before = get_le(in + 24, 8);
	c->not_after = get_le(in + 32, 8);
	memcpy(c->node_key, in + 40, MMTA_NODE_KEY_LEN);
	memcpy(c->module_hash, in + 72, MMTA_SHA256_LEN);
	memcpy(c->ek_hash, in + 104, MMTA_SHA256_LEN);
	if (c->node_id < MMTA_NODE_ID_MIN || c->node_id > MMTA_NODE_ID_MAX) {
		mmta_err("credential: node id %u out of range", c->node_id);
		return MMTA_ECRED;
	}
	return MMTA_OK;
}

/**
 * mmta_cred_sign() - sign a credential
 * @c: the body
 * @key: the authority's RSA private key
 * @cert: the authority's certificate (names the signer)
 * @out: (out) malloc'ed credential file: body, then the DER PKCS#7
 * @out_len: (out) its length
 *
 * Return: MMTA_OK or MMTA_ESYS.
 */
int mmta_cred_sign(const struct mmta_cred *c, EVP_PKEY *key, X509 *cert,
		   uint8_t **out, size_t *out_len)
{
	const unsigned int flags = CMS_DETACHED | CMS_BINARY | CMS_NOCERTS |
		CMS_NOATTR | CMS_NOSMIMECAP | CMS_PARTIAL;
	uint8_t body[MMTA_CRED_BODY_LEN];
	BIO *in = NULL;
	CMS_ContentInfo *cms = NULL;
	unsigned char *der = NULL;
	int der_len, rc = MMTA_ESYS;

	mmta_cred_encode(c, body);
	in = BIO_new_mem_buf(body, sizeof(body));
	cms = in ? CMS_sign(NULL, NULL, NULL, NULL, flags) : NULL;
	if (!cms || !CMS_add1_signer(cms, cert, key, EVP_sha256(), flags) ||
	    CMS_final(cms, in, NULL, flags) != 1)
		goto out;
	der_len = i2d_CMS_ContentInfo(cms, &der);
	if (der_len <= 0)
		goto out;
	*out = malloc(sizeof(body) + (size_t)der_len);
	if (!*out)
		goto out;
	memcpy(*out, body, sizeof(body));
	memcpy(*out + sizeof(body), der, (size_t)der_len);
	*out_len = sizeof(body) + (size_t)der_len;
	rc = MMTA_OK;
out:
	if (rc)
		ERR_print_errors_fp(stderr);
	OPENSSL_free(der);
	CMS_ContentInfo_free(cms);
	BIO_free(in);
	return rc;
}

/**
 * mmta_cred_verify() - verify a credential file as a relying party would
 * @in: the credential file
 * @len: its length
 * @cert: the authority's certificate, the only trusted signer
 * @now: the time to check validity at, UNIX seconds
 * @c: (out) the body's fields
 *
 * Return: MMTA_OK, or MMTA_ECRED (message on stderr) for a bad body, a
 * signature that does not verify under @cert, or @now outside validity.
 */
int mmta_cred_verify(const uint8_t *in, size_t len, X509 *cert,
		     uint64_t now, struct mmta_cred *c)
{
	const unsigned char *p = in + MMTA_CRED_BODY_LEN;
	CMS_ContentInfo *cms = NULL;
	STACK_OF(X509) *signers = NULL;
	BIO *body = NULL;
	int rc = MMTA_ECRED;

	if (mmta_cred_decode(in, len, c))
		return MMTA_ECRED;
	cms = d2i_CMS_ContentInfo(NULL, &p, (long)(len - MMTA_CRED_BODY_LEN));
	if (!cms || p != in + len) {
		mmta_err("credential: the signature is not one DER PKCS#7");
		goto out;
	}
	signers = sk_X509_new_null();
	body = BIO_new_mem_buf(in, MMTA_CRED_BODY_LEN);
	if (!signers || !body || !sk_X509_push(signers, cert)) {
		rc = MMTA_ESYS;
		goto out;
	}
	if (CMS_verify(cms, signers, NULL, body, NULL,
		       CMS_BINARY | CMS_NOINTERN | CMS_NO_SIGNER_CERT_VERIFY) != 1) {
		mmta_err("credential: signature does not verify under the authority's key");
		goto out;
	}
	if (now < c->not_before || now > c->not_after) {
		mmta_err("credential: not valid now");
		goto out;
	}
	rc = MMTA_OK;
out:
	ERR_clear_error();
	sk_X509_free(signers);
	BIO_free(body);
	CMS_ContentInfo_free(cms);
	return rc;
}
