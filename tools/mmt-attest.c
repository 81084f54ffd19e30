// SPDX-License-Identifier: GPL-2.0
/*
 * mmt-attest - the node's side of the attestation to mmt-authority (paper
 * section IV-A, Fig. 3; step 1 of Fig. 6)
 *
 * In RFC 9334 terms the attester: it drives the node's TPM 2.0 through
 * libtss2 (ESAPI; the TCTI from --tcti, else TPM2TOOLS_TCTI, else the
 * default, /dev/tpmrm0) and sends the IMA measurement list.
 *
 *   mmt-attest hello --out HELLO
 *	the EK certificate (NV index 0x01c00002) and the public area of an
 *	attestation key (AK): a restricted RSA signing key, a primary of the
 *	endorsement hierarchy, so the same AK is derived again at `quote`
 *   mmt-attest quote --in CHALLENGE [--ima-log FILE] [--want-id N]
 *		--out EVIDENCE
 *	recovers the nonce with TPM2_ActivateCredential (only the TPM with
 *	the certified EK and this AK can), quotes PCR 10 (SHA-256) over
 *	SHA-256("mmt-attest quote v1\0" || nonce || node key) and adds the
 *	IMA log; the node key is the module's (MMT_IOC_ATTEST_INFO), the one
 *	it measured into the IMA log at load, never one from a file
 *
 *   mmt-attest renew --connect CMD [--every SECONDS] [--ima-log FILE]
 *		[--want-id N]
 *	the whole exchange over the stdin and stdout of `sh -c CMD`, which
 *	reaches `mmt-authority serve` (ssh, socat): hello, challenge,
 *	evidence (as quote), credential, installed as install does; with
 *	--every a daemon that renews before the credential expires
 *
 * Built with -DMMTA_TEST_NODE_KEY (build/tests/attest/mmt-attest, for
 * tests/attest/run.sh, which has no module), quote and renew take
 * --node-key FILE instead, and renew then writes the credential to --out
 * rather than installing it; the installed tool refuses that option.
 *
 * And with the module (/dev/mmt, docs/ATTESTATION.md "The module's side"):
 *
 *   mmt-attest authority --in AUTHORITY.der   enter attested mode
 *   mmt-attest node-key --out FILE            this load's X25519 node key
 *   mmt-attest install --in CREDENTIAL        the node id from a credential
 *   mmt-attest info                           the attested mode's state
 *
 * Exit codes: enum mmta_exit (tools/attest/mmta.h, man/mmt-attest.8).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <tss2/tss2_esys.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_rc.h>
#include <tss2/tss2_tctildr.h>

#include "attest/mmta.h"
#include "mmt.h"

#define IMA_LOG_DEFAULT	"/sys/kernel/security/ima/binary_runtime_measurements"
#define NV_CHUNK	512

static const char *tcti_conf, *in_path, *out_path;
#ifdef MMTA_TEST_NODE_KEY
static const char *key_path;
#endif
static const char *ima_path = IMA_LOG_DEFAULT;
static long want_id;

static ESYS_CONTEXT *esys;
static TSS2_TCTI_CONTEXT *tcti;

#define TPM_TRY(call) do {						\
	TSS2_RC r_ = (call);						\
	if (r_ != TSS2_RC_SUCCESS) {					\
		mmta_err("%s: %s", #call, Tss2_RC_Decode(r_));		\
		return MMTA_ESYS;					\
	}								\
} while (0)

static int tpm_open(void)
{
	const char *conf = tcti_conf ? tcti_conf : getenv("TPM2TOOLS_TCTI");

	TPM_TRY(Tss2_TctiLdr_Initialize(conf, &tcti));
	TPM_TRY(Esys_Initialize(&esys, tcti, NULL));
	return MMTA_OK;
}

static void tpm_close(void)
{
	if (esys)
		Esys_Finalize(&esys);
	if (tcti)
		Tss2_TctiLdr_Finalize(&tcti);
}

/* A primary key of the endorsement hierarchy from @tmpl (no password). */
static int create_primary(const TPM2B_PUBLIC *tmpl, ESYS_TR *key,
			  TPM2B_PUBLIC **pub)
{
	TPM2B_SENSITIVE_CREATE sens = { 0 };
	TPM2B_DATA outside = { 0 };
	TPML_PCR_SELECTION none = { 0 };

	TPM_TRY(Esys_CreatePrimary(esys, ESYS_TR_RH_ENDORSEMENT,
				   ESYS_TR_PASSWORD, ESYS_TR_NONE,
				   ESYS_TR_NONE, &sens, tmpl, &outside, &none,
				   key, pub, NULL, NULL, NULL));
	return MMTA_OK;
}

/* The AK: the same template gives the same primary key every time. */
static int create_ak(ESYS_TR *ak, TPM2B_PUBLIC **pub)
{
	static const TPM2B_PUBLIC tmpl = {
		.publicArea = {
			.type = TPM2_ALG_RSA,
			.nameAlg = TPM2_ALG_SHA256,
			.objectAttributes = TPMA_OBJECT_FIXEDTPM |
				TPMA_OBJECT_FIXEDPARENT |
				TPMA_OBJECT_SENSITIVEDATAORIGIN |
				TPMA_OBJECT_USERWITHAUTH |
				TPMA_OBJECT_RESTRICTED |
				TPMA_OBJECT_SIGN_ENCRYPT,
			.parameters.rsaDetail = {
				.symmetric.algorithm = TPM2_ALG_NULL,
				.scheme.scheme = TPM2_ALG_RSASSA,
				.scheme.details.rsassa.hashAlg = TPM2_ALG_SHA256,
				.keyBits = 2048,
			},
		},
	};

	return create_primary(&tmpl, ak, pub);
}

/*
 * The EK: the persistent one at 0x81010001 (where swtpm_setup and most
 * provisioning put it), else a primary from the TCG template L-1 (RSA
 * 2048; TCG EK Credential Profile 2.0, B.3.3), which the EK certificate
 * certifies either way.
 */
static int get_ek(ESYS_TR *ek, bool *transient)
{
	static const uint8_t policy[] = {	/* PolicySecret(TPM_RH_ENDORSEMENT) */
		0x83, 0x71, 0x97, 0x67, 0x44, 0x84, 0xb3, 0xf8, 0x1a, 0x90,
		0xcc, 0x8d, 0x46, 0xa5, 0xd7, 0x24, 0xfd, 0x52, 0xd7, 0x6e,
		0x06, 0x52, 0x0b, 0x64, 0xf2, 0xa1, 0xda, 0x1b, 0x33, 0x14,
		0x69, 0xaa };
	TPM2B_PUBLIC tmpl = {
		.publicArea = {
			.type = TPM2_ALG_RSA,
			.nameAlg = TPM2_ALG_SHA256,
			.objectAttributes = TPMA_OBJECT_FIXEDTPM |
				TPMA_OBJECT_FIXEDPARENT |
				TPMA_OBJECT_SENSITIVEDATAORIGIN |
				TPMA_OBJECT_ADMINWITHPOLICY |
				TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT,
			.authPolicy.size = sizeof(policy),
			.parameters.rsaDetail = {
				.symmetric = {
					.algorithm = TPM2_ALG_AES,
					.keyBits.aes = 128,
					.mode.aes = TPM2_ALG_CFB,
				},
				.scheme.scheme = TPM2_ALG_NULL,
				.keyBits = 2048,
			},
			.unique.rsa.size = 256,
		},
	};
	int rc;

	*transient = false;
	if (Esys_TR_FromTPMPublic(esys, MMTA_EK_HANDLE, ESYS_TR_NONE,
				  ESYS_TR_NONE, ESYS_TR_NONE, ek) ==
	    TSS2_RC_SUCCESS)
		return MMTA_OK;
	memcpy(tmpl.publicArea.authPolicy.buffer, policy, sizeof(policy));
	rc = create_primary(&tmpl, ek, NULL);
	*transient = !rc;
	return rc;
}

static int read_ek_cert(uint8_t **der, size_t *len)
{
	TPM2B_NV_PUBLIC *pub = NULL;
	TPM2B_MAX_NV_BUFFER *data = NULL;
	ESYS_TR nv;
	uint16_t size, off, n;
	uint8_t *buf;

	TPM_TRY(Esys_TR_FromTPMPublic(esys, MMTA_EK_CERT_NV_INDEX,
				      ESYS_TR_NONE, ESYS_TR_NONE,
				      ESYS_TR_NONE, &nv));
	TPM_TRY(Esys_NV_ReadPublic(esys, nv, ESYS_TR_NONE, ESYS_TR_NONE,
				   ESYS_TR_NONE, &pub, NULL));
	size = pub->nvPublic.dataSize;
	Esys_Free(pub);
	buf = malloc(size ? size : 1);
	if (!buf)
		return MMTA_ESYS;
	for (off = 0; off < size; off += n) {
		n = size - off < NV_CHUNK ? size - off : NV_CHUNK;
		TSS2_RC r = Esys_NV_Read(esys, nv, nv, ESYS_TR_PASSWORD,
					 ESYS_TR_NONE, ESYS_TR_NONE, n, off,
					 &data);
		if (r != TSS2_RC_SUCCESS || data->size != n) {
			mmta_err("reading the EK certificate: %s",
				 Tss2_RC_Decode(r));
			Esys_Free(data);
			free(buf);
			return MMTA_ESYS;
		}
		memcpy(buf + off, data->buffer, n);
		Esys_Free(data);
		data = NULL;
	}
	*der = buf;
	*len = size;
	return MMTA_OK;
}

/*
 * hello() - fill @m with the hello: the EK certificate and the AK's public
 * area.  Return: an mmta_exit code; on error @m is empty.
 */
static int hello(struct mmta_msg *m)
{
	TPM2B_PUBLIC *ak_pub = NULL;
	uint8_t *cert, pub[sizeof(TPM2B_PUBLIC)];
	size_t cert_len, off = 0;
	ESYS_TR ak;
	int rc;

	memset(m, 0, sizeof(*m));
	snprintf(m->type, sizeof(m->type), "hello");
	rc = read_ek_cert(&cert, &cert_len);
	if (rc)
		return rc;
	rc = create_ak(&ak, &ak_pub);
	if (rc) {
		free(cert);
		return rc;
	}
	Esys_FlushContext(esys, ak);
	if (Tss2_MU_TPM2B_PUBLIC_Marshal(ak_pub, pub, sizeof(pub), &off)) {
		rc = MMTA_ESYS;
	} else {
		mmta_msg_add(m, "ek_cert", cert, cert_len);
		mmta_msg_add(m, "ak_public", pub, off);
	}
	Esys_Free(ak_pub);
	free(cert);
	return rc;
}

static int cmd_hello(void)
{
	struct mmta_msg m;
	int rc = hello(&m);

	if (!rc)
		rc = mmta_msg_write(out_path, &m);
	mmta_msg_free(&m);
	return rc;
}

static int activate(ESYS_TR ak, const struct mmta_field *blob,
		    const struct mmta_field *secret,
		    uint8_t nonce[MMTA_NONCE_LEN])
{
	TPMT_SYM_DEF sym = { .algorithm = TPM2_ALG_NULL };
	TPM2B_ID_OBJECT id = { 0 };
	TPM2B_ENCRYPTED_SECRET sec = { 0 };
	TPM2B_DIGEST *info = NULL;
	ESYS_TR ek, sess;
	bool transient;
	size_t off = 0;
	TSS2_RC r;
	int rc;

	if (Tss2_MU_TPM2B_ID_OBJECT_Unmarshal(blob->data, blob->len, &off,
					      &id) || off != blob->len) {
		mmta_err("challenge: bad credential_blob");
		return MMTA_EMSG;
	}
	off = 0;
	if (Tss2_MU_TPM2B_ENCRYPTED_SECRET_Unmarshal(secret->data, secret->len,
						     &off, &sec) ||
	    off != secret->len) {
		mmta_err("challenge: bad secret");
		return MMTA_EMSG;
	}
	rc = get_ek(&ek, &transient);
	if (rc)
		return rc;
	/* the EK's policy: PolicySecret(TPM_RH_ENDORSEMENT) */
	TPM_TRY(Esys_StartAuthSession(esys, ESYS_TR_NONE, ESYS_TR_NONE,
				      ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
				      NULL, TPM2_SE_POLICY, &sym,
				      TPM2_ALG_SHA256, &sess));
	r = Esys_PolicySecret(esys, ESYS_TR_RH_ENDORSEMENT, sess,
			      ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE,
			      NULL, NULL, NULL, 0, NULL, NULL);
	if (r == TSS2_RC_SUCCESS)
		r = Esys_ActivateCredential(esys, ak, ek, ESYS_TR_PASSWORD,
					    sess, ESYS_TR_NONE, &id, &sec,
					    &info);
	Esys_FlushContext(esys, sess);
	if (transient)
		Esys_FlushContext(esys, ek);
	if (r != TSS2_RC_SUCCESS) {
		mmta_err("TPM2_ActivateCredential: %s (a challenge for another TPM or AK?)",
			 Tss2_RC_Decode(r));
		return MMTA_ECHALLENGE;
	}
	if (info->size != MMTA_NONCE_LEN) {
		Esys_Free(info);
		mmta_err("challenge: nonce of %u bytes", info->size);
		return MMTA_EMSG;
	}
	memcpy(nonce, info->buffer, MMTA_NONCE_LEN);
	Esys_Free(info);
	return MMTA_OK;
}

static int module_node_key(uint8_t key[MMTA_NODE_KEY_LEN]);

/*
 * quote_node_key() - the node key the evidence carries: the module's,
 * which it measured into the IMA log when it drew it (the authority
 * refuses any other, exit 21); in a test build the one in --node-key FILE
 * if given.
 */
static int quote_node_key(uint8_t key[MMTA_NODE_KEY_LEN])
{
#ifdef MMTA_TEST_NODE_KEY
	uint8_t *data;
	size_t len;

	if (key_path) {
		if (mmta_read_file(key_path, &data, &len))
			return MMTA_ESYS;
		if (len != MMTA_NODE_KEY_LEN) {
			mmta_err("%s: a node key is %d raw bytes (X25519)",
				 key_path, MMTA_NODE_KEY_LEN);
			free(data);
			return MMTA_EUSAGE;
		}
		memcpy(key, data, len);
		free(data);
		return MMTA_OK;
	}
#endif
	return module_node_key(key);
}

static const char *const challenge_fields[] = {
	"id", "credential_blob", "secret", NULL };

/*
 * quote() - answer the challenge @ch: fill @ev with the evidence (the
 * node key, the quote, its signature, the IMA log).  Return: an
 * mmta_exit code; on error @ev is empty.
 */
static int quote(const struct mmta_msg *ch, struct mmta_msg *ev)
{
	const struct mmta_field *id, *blob, *secret;
	TPML_PCR_SELECTION sel = {
		.count = 1,
		.pcrSelections[0] = {
			.hash = TPM2_ALG_SHA256,
			.sizeofSelect = 3,
			.pcrSelect = { [MMTA_IMA_PCR / 8] =
				       1u << (MMTA_IMA_PCR % 8) },
		},
	};
	TPMT_SIG_SCHEME scheme = { .scheme = TPM2_ALG_NULL };
	TPM2B_DATA qual = { .size = MMTA_SHA256_LEN };
	TPM2B_ATTEST *quoted = NULL;
	TPMT_SIGNATURE *sig = NULL;
	TPM2B_PUBLIC *ak_pub = NULL;
	uint8_t nonce[MMTA_NONCE_LEN], key[MMTA_NODE_KEY_LEN], *log = NULL;
	uint8_t sigbuf[sizeof(TPMT_SIGNATURE)], want[4];
	size_t log_len, off = 0;
	ESYS_TR ak = ESYS_TR_NONE;
	TSS2_RC r;
	int rc;

	memset(ev, 0, sizeof(*ev));
	snprintf(ev->type, sizeof(ev->type), "evidence");
	id = mmta_msg_get(ch, "id");
	blob = mmta_msg_get(ch, "credential_blob");
	secret = mmta_msg_get(ch, "secret");
	rc = MMTA_EMSG;
	if (!id || !blob || !secret) {
		mmta_err("challenge: a field is missing");
		goto out;
	}
	rc = quote_node_key(key);
	if (rc)
		goto out;
	rc = mmta_read_file(ima_path, &log, &log_len);
	if (rc)
		goto out;
	rc = create_ak(&ak, &ak_pub);
	if (rc)
		goto out;
	rc = activate(ak, blob, secret, nonce);
	if (rc)
		goto out;
	mmta_qualifying_data(nonce, key, qual.buffer);
	OPENSSL_cleanse(nonce, sizeof(nonce));
	r = Esys_Quote(esys, ak, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE,
		       &qual, &scheme, &sel, &quoted, &sig);
	if (r != TSS2_RC_SUCCESS) {
		mmta_err("TPM2_Quote: %s", Tss2_RC_Decode(r));
		rc = MMTA_ESYS;
		goto out;
	}
	if (Tss2_MU_TPMT_SIGNATURE_Marshal(sig, sigbuf, sizeof(sigbuf), &off)) {
		rc = MMTA_ESYS;
		goto out;
	}
	mmta_msg_add(ev, "id", id->data, id->len);
	mmta_msg_add(ev, "node_key", key, sizeof(key));
	if (want_id) {
		want[0] = (uint8_t)want_id;
		want[1] = (uint8_t)(want_id >> 8);
		want[2] = (uint8_t)(want_id >> 16);
		want[3] = (uint8_t)(want_id >> 24);
		mmta_msg_add(ev, "want_node_id", want, sizeof(want));
	}
	mmta_msg_add(ev, "quote", quoted->attestationData, quoted->size);
	mmta_msg_add(ev, "signature", sigbuf, off);
	mmta_msg_add(ev, "ima_log", log, log_len);
out:
	if (ak != ESYS_TR_NONE)
		Esys_FlushContext(esys, ak);
	Esys_Free(quoted);
	Esys_Free(sig);
	Esys_Free(ak_pub);
	free(log);
	return rc;
}

static int cmd_quote(void)
{
	struct mmta_msg ch, ev;
	int rc;

	rc = mmta_msg_read(in_path, "challenge", challenge_fields, &ch);
	if (rc)
		return rc;
	rc = quote(&ch, &ev);
	if (!rc)
		rc = mmta_msg_write(out_path, &ev);
	mmta_msg_free(&ch);
	mmta_msg_free(&ev);
	return rc;
}

/* ---- the module's attested mode ---- */

static int mmt_open(void)
{
	int fd = open("/dev/mmt", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		mmta_err("/dev/mmt: %s", strerror(errno));
	return fd;
}

/*
 * set_blob() - hand @data to MMT_IOC_ATTEST_SET_{AUTHORITY,CRED} (@req,
 * named @what in errors); a credential installed prints its node id.
 * Return: an mmta_exit code (MMTA_ECRED for a credential the module
 * refused).
 */
static int set_blob(unsigned long req, const char *what, const uint8_t *data,
		    size_t len)
{
	struct mmt_attest_blob b = { .size = sizeof(b) };
	struct mmt_query q = { .size = sizeof(q) };
	int fd, rc = MMTA_OK;

	fd = mmt_open();
	if (fd < 0)
		return MMTA_ESYS;
	b.data = (uintptr_t)data;
	b.len = (uint32_t)len;
	if (ioctl(fd, req, &b)) {
		mmta_err("%s: %s", what, strerror(errno));
		rc = errno == EKEYREJECTED || errno == EKEYEXPIRED ||
		     errno == ESTALE ? MMTA_ECRED : MMTA_ESYS;
	} else if (req == MMT_IOC_ATTEST_SET_CRED &&
		   !ioctl(fd, MMT_IOC_QUERY, &q)) {
		printf("node id %u\n", q.node_id);
		fflush(stdout);
	}
	close(fd);
	return rc;
}

/* authority, install: hand a file to MMT_IOC_ATTEST_SET_{AUTHORITY,CRED} */
static int cmd_blob(unsigned long req, const char *what)
{
	uint8_t *data;
	size_t len;
	int rc;

	if (mmta_read_file(in_path, &data, &len))
		return MMTA_ESYS;
	rc = set_blob(req, what, data, len);
	free(data);
	return rc;
}

/* MMT_IOC_ATTEST_INFO into @info; an mmta_exit code */
static int get_info(struct mmt_attest_info *info)
{
	int fd = mmt_open(), rc;

	if (fd < 0)
		return MMTA_ESYS;
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	rc = ioctl(fd, MMT_IOC_ATTEST_INFO, info);
	close(fd);
	if (rc) {
		mmta_err("MMT_IOC_ATTEST_INFO: %s", strerror(errno));
		return MMTA_ESYS;
	}
	return MMTA_OK;
}

/* this load's node key (MMT_IOC_ATTEST_INFO); an mmta_exit code */
static int module_node_key(uint8_t key[MMTA_NODE_KEY_LEN])
{
	struct mmt_attest_info info;
	int rc = get_info(&info);

	if (rc)
		return rc;
	if (info.state == MMT_ATTEST_OFF) {
		mmta_err("the module is not in attested mode (mmt-attest authority)");
		return MMTA_EUSAGE;
	}
	_Static_assert(sizeof(info.node_key) == MMTA_NODE_KEY_LEN,
		       "node key size");
	memcpy(key, info.node_key, MMTA_NODE_KEY_LEN);
	return MMTA_OK;
}

static int cmd_node_key(void)
{
	uint8_t key[MMTA_NODE_KEY_LEN];
	int rc = module_node_key(key);

	if (rc)
		return rc;
	return mmta_write_file(out_path, key, sizeof(key));
}

/* info: MMT_IOC_ATTEST_INFO, one "<name> <value>" line per field */
static int cmd_info(void)
{
	static const char *const states[] = {
		[MMT_ATTEST_OFF] = "off",
		[MMT_ATTEST_WAITING] = "waiting",
		[MMT_ATTEST_ATTESTED] = "attested",
	};
	static const char *const lockdown[] = {
		[MMT_LOCKDOWN_NONE] = "none",
		[MMT_LOCKDOWN_INTEGRITY] = "integrity",
		[MMT_LOCKDOWN_CONFIDENTIALITY] = "confidentiality",
	};
	struct mmt_attest_info info;
	char key[2 * sizeof(info.node_key) + 1];
	int rc = get_info(&info);

	if (rc)
		return rc;
	mmta_hex_encode(info.node_key, sizeof(info.node_key), key);
	/* the boot state the module measured with its node key, at load */
	printf("state %s\nnode_id %u\nserial %llu\nnot_before %llu\n"
	       "not_after %llu\nnode_key %s\nlockdown %s\n"
	       "module_sig_enforced %s\n",
	       info.state < 3 ? states[info.state] : "unknown", info.node_id,
	       (unsigned long long)info.serial,
	       (unsigned long long)info.not_before,
	       (unsigned long long)info.not_after, key,
	       info.lockdown <= MMT_LOCKDOWN_CONFIDENTIALITY ?
	       lockdown[info.lockdown] : "unknown",
	       info.boot_flags & MMT_BOOT_MODULE_SIG_ENFORCED ? "yes" : "no");
	return MMTA_OK;
}

/* ---- renew: the exchange over a command's stdin and stdout ---- */

static const char *connect_cmd;	/* --connect: sh -c CMD reaches serve */
static long every;			/* --every: the daemon's period, s */
static volatile sig_atomic_t stop;	/* SIGTERM or SIGINT in the daemon */
static struct mmta_cred last;		/* the last credential renew got */

/*
 * A whole exchange ends within this many seconds: the authority's
 * challenge lives as long, and a command that hangs (a peer that never
 * answers) must not stall the daemon.
 */
#define RENEW_TIMEOUT	300

static volatile sig_atomic_t timed_out;	/* RENEW_TIMEOUT passed */

/* on_stop() - SIGTERM, SIGINT: the daemon ends after its current step */
static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

/* on_alarm() - the exchange took too long; the blocked read fails (EINTR) */
static void on_alarm(int sig)
{
	(void)sig;
	timed_out = 1;
}

/*
 * spawn() - run @cmd with sh -c, its stdin and stdout piped to this
 * process: *@to writes to it, *@from reads from it.  Return: its pid, or
 * -1 (message on stderr).
 */
static pid_t spawn(const char *cmd, FILE **to, FILE **from)
{
	int in[2] = { -1, -1 }, out[2] = { -1, -1 };
	pid_t pid;

	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC)) {
		mmta_err("--connect: pipe: %s", strerror(errno));
		goto fail;
	}
	pid = fork();
	if (pid < 0) {
		mmta_err("--connect: fork: %s", strerror(errno));
		goto fail;
	}
	if (!pid) {
		signal(SIGPIPE, SIG_DFL);
		if (dup2(in[0], STDIN_FILENO) < 0 ||
		    dup2(out[1], STDOUT_FILENO) < 0)
			_exit(127);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	*to = fdopen(in[1], "w");
	*from = fdopen(out[0], "r");
	if (!*to || !*from) {
		mmta_err("--connect: fdopen: %s", strerror(errno));
		if (*to)
			fclose(*to);
		else
			close(in[1]);
		if (*from)
			fclose(*from);
		else
			close(out[0]);
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
		return -1;
	}
	return pid;
fail:
	if (in[0] >= 0) {
		close(in[0]);
		close(in[1]);
	}
	if (out[0] >= 0) {
		close(out[0]);
		close(out[1]);
	}
	return -1;
}

/*
 * reap() - wait for the --connect command; if the exchange failed (@rc),
 * end it first and say how it ended, since a command that could not
 * connect is the usual cause
 */
static void reap(pid_t pid, int rc)
{
	int status;

	if (rc)
		kill(pid, SIGTERM);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return;
	if (rc == MMTA_ESYS && WIFEXITED(status) && WEXITSTATUS(status))
		mmta_err("--connect: '%s' exited with status %d", connect_cmd,
			 WEXITSTATUS(status));
}

/*
 * install_cred() - install a credential as `mmt-attest install` does; in a
 * test build given --node-key (no module), write it to --out instead
 */
static int install_cred(const uint8_t *data, size_t len)
{
#ifdef MMTA_TEST_NODE_KEY
	if (key_path)
		return mmta_write_file(out_path, data, len);
#endif
	return set_blob(MMT_IOC_ATTEST_SET_CRED, "MMT_IOC_ATTEST_SET_CRED",
			data, len);
}

/*
 * renew_once() - one whole exchange with the authority over --connect:
 * hello, challenge, evidence (quote()), credential, installed; @got is
 * the credential's body.  Return: MMTA_OK, the authority's refusal code,
 * or a local mmta_exit code.
 */
static int renew_once(struct mmta_cred *got)
{
	static const char *const cred_fields[] = { "credential", NULL };
	struct mmta_msg h = { 0 }, ch = { 0 }, ev = { 0 }, cm = { 0 };
	const struct mmta_field *c = NULL;
	FILE *to, *from;
	pid_t pid;
	int rc;

	rc = tpm_open();
	if (!rc)
		rc = hello(&h);
	if (rc)
		goto out;
	pid = spawn(connect_cmd, &to, &from);
	if (pid < 0) {
		rc = MMTA_ESYS;
		goto out;
	}
	timed_out = 0;
	alarm(RENEW_TIMEOUT);
	rc = mmta_stream_send(to, &h);
	if (!rc)
		rc = mmta_stream_recv(from, "challenge", "challenge",
				      challenge_fields, &ch);
	if (!rc)
		rc = quote(&ch, &ev);
	if (!rc)
		rc = mmta_stream_send(to, &ev);
	if (!rc)
		rc = mmta_stream_recv(from, "credential", "credential",
				      cred_fields, &cm);
	alarm(0);
	if (rc && timed_out)
		mmta_err("--connect: no credential within %d s", RENEW_TIMEOUT);
	fclose(to);
	fclose(from);
	reap(pid, rc);
	if (rc)
		goto out;
	c = mmta_msg_get(&cm, "credential");
	if (!c) {
		mmta_err("credential: the message carries none");
		rc = MMTA_EMSG;
		goto out;
	}
	rc = mmta_cred_decode(c->data, c->len, got);
	if (!rc)
		rc = install_cred(c->data, c->len);
out:
	tpm_close();
	mmta_msg_free(&h);
	mmta_msg_free(&ch);
	mmta_msg_free(&ev);
	mmta_msg_free(&cm);
	return rc;
}

/*
 * installed() - the node id and serial of the installed credential, for
 * the log: the module's (MMT_IOC_ATTEST_INFO), or in a test build given
 * --node-key the one in --out; false if there is none
 */
static bool installed(uint32_t *id, uint64_t *serial)
{
	struct mmt_attest_info info;
	int fd;

#ifdef MMTA_TEST_NODE_KEY
	if (key_path) {
		struct mmta_cred c;
		uint8_t *data;
		size_t len;
		bool ok;

		if (access(out_path, R_OK) || mmta_read_file(out_path, &data, &len))
			return false;
		ok = len >= MMTA_CRED_BODY_LEN &&
		     !mmta_cred_decode(data, len, &c);
		free(data);
		if (ok) {
			*id = c.node_id;
			*serial = c.serial;
		}
		return ok;
	}
#endif
	fd = open("/dev/mmt", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return false;
	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	if (ioctl(fd, MMT_IOC_ATTEST_INFO, &info) || !info.serial) {
		close(fd);
		return false;
	}
	close(fd);
	*id = info.node_id;
	*serial = info.serial;
	return true;
}

/*
 * cmd_renew() - renew the node's credential over --connect CMD: once
 * (exit code: the authority's refusal code, or a local one), or with
 * --every S as a daemon: after a credential, again after a third of its
 * remaining validity or S seconds, whichever is shorter; after a
 * failure, again after S seconds; never exits but on SIGTERM or SIGINT
 * (exit 0).  Each renewal or refusal is a line on stderr.
 */
static int cmd_renew(void)
{
	struct sigaction sa = { .sa_handler = on_stop };
	struct sigaction al = { .sa_handler = on_alarm };
	uint64_t serial, now;
	uint32_t id;
	long wait;
	int rc;

	signal(SIGPIPE, SIG_IGN);
	sigaction(SIGALRM, &al, NULL);	/* no SA_RESTART, as below */
	if (!every) {
		rc = renew_once(&last);
		if (!rc)
			fprintf(stderr, "renew: node id %u serial %" PRIu64 " installed, valid until %" PRIu64 "\n",
				last.node_id, last.serial, last.not_after);
		return rc;
	}
	/* no SA_RESTART: a blocking read ends with EINTR */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	while (!stop) {
		rc = renew_once(&last);
		now = (uint64_t)time(NULL);
		wait = every;
		if (!rc && last.not_after > now &&
		    (last.not_after - now) / 3 < (uint64_t)every)
			wait = (long)((last.not_after - now) / 3);
		if (wait < 1)
			wait = 1;
		if (stop)
			break;
		if (!rc)
			fprintf(stderr, "renew: node id %u serial %" PRIu64 " installed, valid until %" PRIu64 "; next renewal in %ld s\n",
				last.node_id, last.serial, last.not_after, wait);
		else if (installed(&id, &serial))
			fprintf(stderr, "renew: failed (exit %d); node id %u serial %" PRIu64 " stays installed; next try in %ld s\n",
				rc, id, serial, wait);
		else
			fprintf(stderr, "renew: failed (exit %d); no credential installed; next try in %ld s\n",
				rc, wait);
		while (wait-- > 0 && !stop)
			sleep(1);
	}
	fprintf(stderr, "renew: stopped\n");
	return MMTA_OK;
}

/* renew_args() - renew's options are consistent; else says why, nonzero */
static int renew_args(int argc)
{
	if (optind != argc || !connect_cmd || !*connect_cmd) {
		mmta_err("renew: --connect CMD is required (a command whose stdin and stdout reach mmt-authority serve)");
		return -1;
	}
	if (in_path) {
		mmta_err("renew: no --in: the challenge comes over --connect");
		return -1;
	}
#ifdef MMTA_TEST_NODE_KEY
	if (!key_path != !out_path) {
		mmta_err("renew: --node-key and --out go together (test build: the credential is written, not installed)");
		return -1;
	}
#else
	if (out_path) {
		mmta_err("renew: no --out: the credential is installed in the module");
		return -1;
	}
#endif
	return 0;
}

static void usage(FILE *f)
{
	fputs("usage: mmt-attest hello [--tcti CONF] --out HELLO\n"
#ifdef MMTA_TEST_NODE_KEY
	      "       mmt-attest quote [--tcti CONF] --in CHALLENGE [--node-key FILE]\n"
#else
	      "       mmt-attest quote [--tcti CONF] --in CHALLENGE\n"
#endif
	      "                  [--ima-log FILE] [--want-id N] --out EVIDENCE\n"
#ifdef MMTA_TEST_NODE_KEY
	      "       mmt-attest renew [--tcti CONF] --connect CMD [--every SECONDS]\n"
	      "                  [--ima-log FILE] [--want-id N] [--node-key FILE --out CREDENTIAL]\n"
#else
	      "       mmt-attest renew [--tcti CONF] --connect CMD [--every SECONDS]\n"
	      "                  [--ima-log FILE] [--want-id N]\n"
#endif
	      "       mmt-attest authority --in AUTHORITY.der\n"
	      "       mmt-attest node-key --out FILE\n"
	      "       mmt-attest install --in CREDENTIAL\n"
	      "       mmt-attest info\n"
	      "see mmt-attest(8)\n", f);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "tcti", required_argument, NULL, 't' },
		{ "in", required_argument, NULL, 'i' },
		{ "out", required_argument, NULL, 'o' },
		{ "node-key", required_argument, NULL, 'k' },
		{ "ima-log", required_argument, NULL, 'l' },
		{ "want-id", required_argument, NULL, 'w' },
		{ "connect", required_argument, NULL, 'C' },
		{ "every", required_argument, NULL, 'e' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *cmd;
	char *end;
	int c, rc;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? MMTA_EUSAGE : MMTA_OK;
	}
	cmd = argv[1];
	optind = 2;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 't': tcti_conf = optarg; break;
		case 'i': in_path = optarg; break;
		case 'o': out_path = optarg; break;
		case 'k':
#ifdef MMTA_TEST_NODE_KEY
			key_path = optarg;
			break;
#else
			mmta_err("--node-key: quote sends the module's node key, the one it measured (a test build only takes a file)");
			return MMTA_EUSAGE;
#endif
		case 'l': ima_path = optarg; break;
		case 'w':
			want_id = strtol(optarg, &end, 10);
			if (*end || want_id < MMTA_NODE_ID_MIN ||
			    want_id > MMTA_NODE_ID_MAX) {
				mmta_err("--want-id: a node id, 1..65535");
				return MMTA_EUSAGE;
			}
			break;
		case 'C': connect_cmd = optarg; break;
		case 'e':
			every = strtol(optarg, &end, 10);
			if (*end || every <= 0) {
				mmta_err("--every: a positive number of seconds");
				return MMTA_EUSAGE;
			}
			break;
		case 'h': usage(stdout); return MMTA_OK;
		default: usage(stderr); return MMTA_EUSAGE;
		}
	}
	if (!strcmp(cmd, "renew"))
		return renew_args(argc) ? MMTA_EUSAGE : cmd_renew();
	if (connect_cmd || every) {
		mmta_err("%s: --connect and --every are for renew", cmd);
		return MMTA_EUSAGE;
	}
	if (optind == argc && in_path && !strcmp(cmd, "authority"))
		return cmd_blob(MMT_IOC_ATTEST_SET_AUTHORITY,
				"MMT_IOC_ATTEST_SET_AUTHORITY");
	if (optind == argc && in_path && !strcmp(cmd, "install"))
		return cmd_blob(MMT_IOC_ATTEST_SET_CRED,
				"MMT_IOC_ATTEST_SET_CRED");
	if (optind == argc && out_path && !strcmp(cmd, "node-key"))
		return cmd_node_key();
	if (optind == argc && !strcmp(cmd, "info"))
		return cmd_info();
	if (optind != argc || !out_path ||
	    (strcmp(cmd, "hello") && strcmp(cmd, "quote")) ||
	    (!strcmp(cmd, "quote") && !in_path)) {
		usage(stderr);
		return MMTA_EUSAGE;
	}
	rc = tpm_open();
	if (!rc)
		rc = !strcmp(cmd, "hello") ? cmd_hello() : cmd_quote();
	tpm_close();
	return rc;
}
