/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mmta.h - shared code of mmt-authority and mmt-attest (docs/ATTESTATION.md)
 *
 * The attestation of a node to the global authority (paper section IV-A,
 * Fig. 3, step 1 of Fig. 6): the protocol messages, the verifier's checks
 * of TPM 2.0 evidence (EK certificate chain, credential activation, quote,
 * IMA log replayed into PCR 10) and the node credential the authority
 * signs.  User space only; the prefix is mmta_.
 */
#ifndef MMTA_H
#define MMTA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <openssl/evp.h>
#include <openssl/x509.h>

/*
 * Exit codes of both tools (man/mmt-authority.8).  A refusal names the
 * check that failed, so that a test (and an operator) can tell them apart.
 */
enum mmta_exit {
	MMTA_OK = 0,
	MMTA_EUSAGE = 1,	/* bad command line */
	MMTA_ESYS = 2,		/* I/O, TPM or library failure */
	MMTA_EMSG = 3,		/* malformed protocol message */
	MMTA_EEK = 10,		/* EK certificate not from a trusted manufacturer */
	MMTA_EAK = 11,		/* AK is not a restricted, fixedTPM signing key */
	MMTA_ECHALLENGE = 12,	/* challenge unknown, already used or expired */
	MMTA_ESIG = 13,		/* quote signature does not verify under the AK */
	MMTA_ENONCE = 14,	/* quote not over this challenge's nonce and key */
	MMTA_EPCR = 15,		/* IMA log does not replay to the quoted PCR 10 */
	MMTA_EMODULE = 16,	/* no reference mmt.ko measurement in the IMA log */
	MMTA_EIDINUSE = 17,	/* the node id asked for is held by another node */
	MMTA_EIDSPACE = 18,	/* every node id is held */
	MMTA_ECRED = 19,	/* credential signature or fields invalid */
	MMTA_EFOREIGN = 20,	/* a kernel module measured whose hash is no reference */
	MMTA_ENODEKEY = 21,	/* the node key is not the one the module measured */
	MMTA_ELOGREWRITTEN = 22, /* a renewal's IMA log does not extend the last one */
	MMTA_EREVOKED = 23,	/* the node is revoked (mmt-authority reinstate) */
	MMTA_EBOOT = 24,	/* the node's boot is not one the policy accepts */
};

/* Node ids are 16 bits of every GUA (uapi/mmt.h, MMT_IOC_SET_NODE_ID). */
#define MMTA_NODE_ID_MIN	1
#define MMTA_NODE_ID_MAX	65535

#define MMTA_NONCE_LEN		32	/* authority's fresh nonce, bytes */
#define MMTA_CHALLENGE_ID_LEN	16	/* handle of a pending challenge */
#define MMTA_NODE_KEY_LEN	32	/* X25519 public key of the node */
#define MMTA_SHA256_LEN		32
#define MMTA_IMA_PCR		10	/* CONFIG_IMA_MEASURE_PCR_IDX */

/* TCG EK Credential Profile 2.0, section 2.2.1.4: RSA 2048 EK certificate */
#define MMTA_EK_CERT_NV_INDEX	0x01c00002
#define MMTA_EK_HANDLE		0x81010001
/* OID tcg-kp-EKCertificate, the EK certificate's extended key usage */
#define MMTA_OID_EK_CERT	"2.23.133.8.1"

/* ---- mmta_msg.c: protocol messages ---- */

/*
 * A protocol message is text: a first line "mmt-attest <type> 1", then one
 * line per field, "<name> <lowercase hex of the bytes>".  Each field may
 * appear once; unknown fields are refused (docs/ATTESTATION.md, "Messages").
 */
#define MMTA_MSG_MAX_FIELDS	8
#define MMTA_MSG_MAX_BYTES	(64u << 20)	/* a whole message, hex */

struct mmta_field {
	const char *name;
	uint8_t *data;
	size_t len;
};

struct mmta_msg {
	char type[32];
	int nfields;
	struct mmta_field f[MMTA_MSG_MAX_FIELDS];
};

int mmta_msg_write(const char *path, const struct mmta_msg *m);
int mmta_msg_read(const char *path, const char *type,
		  const char *const *allowed, struct mmta_msg *m);
const struct mmta_field *mmta_msg_get(const struct mmta_msg *m,
				      const char *name);
void mmta_msg_add(struct mmta_msg *m, const char *name, const void *data,
		  size_t len);
void mmta_msg_free(struct mmta_msg *m);

int mmta_msg_parse(const uint8_t *buf, size_t len, const char *path,
		   const char *type, const char *const *allowed,
		   struct mmta_msg *m);
int mmta_msg_format(const struct mmta_msg *m, char **out, size_t *len);

/*
 * On a byte stream (mmt-authority serve, mmt-attest renew) each message
 * is followed by one empty line, which no message contains.  A refusal
 * ("mmt-attest refused 1": fields code, le32, and reason, text) takes the
 * place of the challenge or the credential.
 */
#define MMTA_MSG_REFUSED	"refused"
int mmta_stream_send(FILE *f, const struct mmta_msg *m);
int mmta_stream_recv(FILE *f, const char *what, const char *type,
		     const char *const *allowed, struct mmta_msg *m);
void mmta_refusal(struct mmta_msg *m, int code, const char *reason);
const char *mmta_last_err(void);

int mmta_read_file(const char *path, uint8_t **data, size_t *len);
int mmta_write_file(const char *path, const void *data, size_t len);
int mmta_hex_decode(const char *hex, size_t hexlen, uint8_t *out);
void mmta_hex_encode(const uint8_t *in, size_t len, char *out);
void mmta_sha256(const void *data, size_t len, uint8_t out[MMTA_SHA256_LEN]);
void mmta_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- mmta_tpm.c: the verifier's view of TPM 2.0 structures ---- */

int mmta_ek_verify(const uint8_t *der, size_t len, const char *ca_file,
		   EVP_PKEY **ek_pub, uint8_t ek_hash[MMTA_SHA256_LEN]);
int mmta_ak_check(const uint8_t *tpm2b_public, size_t len,
		  uint8_t *name, size_t *name_len, EVP_PKEY **ak_pub);
int mmta_make_credential(EVP_PKEY *ek_pub, const uint8_t *ak_name,
			 size_t ak_name_len, const uint8_t *secret,
			 size_t secret_len, uint8_t *blob, size_t *blob_len,
			 uint8_t *enc_secret, size_t *enc_secret_len);
int mmta_kdfa_sha256(const uint8_t *key, size_t key_len, const char *label,
		     const uint8_t *ctx_u, size_t u_len, const uint8_t *ctx_v,
		     size_t v_len, uint8_t *out, size_t out_len);
void mmta_qualifying_data(const uint8_t nonce[MMTA_NONCE_LEN],
			  const uint8_t node_key[MMTA_NODE_KEY_LEN],
			  uint8_t out[MMTA_SHA256_LEN]);
int mmta_quote_verify(EVP_PKEY *ak_pub, const uint8_t *attest, size_t
		      attest_len, const uint8_t *sig, size_t sig_len,
		      const uint8_t qualifying[MMTA_SHA256_LEN],
		      const uint8_t pcr10[MMTA_SHA256_LEN]);

/* ---- mmta_ima.c: IMA measurement list ---- */

#define MMTA_IMA_ALGO_MAX	31	/* longest hash_algo_name[] accepted */
#define MMTA_IMA_DIGEST_MAX	64	/* IMA_MAX_DIGEST_SIZE, SHA-512 */

struct mmta_ima_result {
	uint8_t pcr10[MMTA_SHA256_LEN];	/* the replayed SHA-256 PCR 10 */
	unsigned int entries;		/* entries of PCR 10 */
	unsigned int violations;	/* of which violations */
	unsigned int count;		/* entries of the log, every PCR */
};

/**
 * struct mmta_ima_entry - one PCR 10 entry as the visitor sees it
 * @index: its position in the log, from 0 (boot_aggregate), counting the
 *	entries of every PCR
 * @template: "ima-ng", "ima-sig", "ima-buf" or "ima-modsig"
 * @algo: the d-ng field's algorithm, hash_algo_name[] ("sha256", "sha512")
 * @digest: the d-ng field's digest: of the file, or of the buffer
 * @digest_len: its length, 1..MMTA_IMA_DIGEST_MAX; 32 for sha256
 * @name: the n-ng field: the file's path, or a buffer's event name
 * @buf: ima-buf's buf field (the measured buffer), else NULL
 * @buf_len: its length, 0 without one
 */
struct mmta_ima_entry {
	unsigned int index;
	const char *template;
	const char *algo;
	const uint8_t *digest;
	size_t digest_len;
	const char *name;
	const uint8_t *buf;
	size_t buf_len;
};

/*
 * Called for every PCR 10 entry but violations, whatever its digest
 * algorithm; returns an mmta_exit code (MMTA_OK to go on).  @e and what
 * it points to are valid during the call only.
 */
typedef int (*mmta_ima_visit)(void *arg, const struct mmta_ima_entry *e);

int mmta_ima_replay(const uint8_t *log, size_t len, mmta_ima_visit visit,
		    void *arg, struct mmta_ima_result *res);
int mmta_ima_replay_prefix(const uint8_t *log, size_t len, unsigned int n,
			   uint8_t pcr10[MMTA_SHA256_LEN]);

/* ---- mmta_cred.c: the node credential ---- */

#define MMTA_CRED_MAGIC		"MMTCRED1"
#define MMTA_CRED_VERSION	1
#define MMTA_CRED_BODY_LEN	136

/**
 * struct mmta_cred - the signed body of a node credential (136 bytes,
 * little-endian on the wire; docs/ATTESTATION.md, "Credential")
 * @node_id: the node id the authority assigned, 1..65535
 * @serial: the authority's issue counter, never reused
 * @not_before: first second of validity, UNIX time
 * @not_after: last second of validity, UNIX time
 * @node_key: the node's X25519 public key
 * @module_hash: SHA-256 of the mmt.ko the node was found to run
 * @ek_hash: SHA-256 of the DER public key of the node's TPM EK
 */
struct mmta_cred {
	uint32_t node_id;
	uint64_t serial;
	uint64_t not_before;
	uint64_t not_after;
	uint8_t node_key[MMTA_NODE_KEY_LEN];
	uint8_t module_hash[MMTA_SHA256_LEN];
	uint8_t ek_hash[MMTA_SHA256_LEN];
};

void mmta_cred_encode(const struct mmta_cred *c,
		      uint8_t out[MMTA_CRED_BODY_LEN]);
int mmta_cred_decode(const uint8_t *in, size_t len, struct mmta_cred *c);
int mmta_cred_sign(const struct mmta_cred *c, EVP_PKEY *key, X509 *cert,
		   uint8_t **out, size_t *out_len);
int mmta_cred_verify(const uint8_t *in, size_t len, X509 *cert,
		     uint64_t now, struct mmta_cred *c);

#endif /* MMTA_H */
