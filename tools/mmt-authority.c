// SPDX-License-Identifier: GPL-2.0
/*
 * mmt-authority - the global authority nodes attest to before they get a
 * node id (paper section IV-A, Fig. 3; step 1 of Fig. 6)
 *
 * In RFC 9334 terms it is the verifier: it appraises TPM 2.0 evidence
 * against the manufacturer's EK CA (the endorser) and the reference hashes
 * of mmt.ko (the reference values), then assigns a node id no other TPM
 * holds and signs a credential the module and its peers (the relying
 * parties) check.  Its state lives in one directory (--state) and
 * survives restarts: the node list, the issue counter, pending challenges,
 * and per node what its last credential was issued on (a renewal's IMA
 * log must extend that one) and whether it is revoked.  It also appraises
 * the node's boot: the lockdown level and module signature enforcement the
 * module measured at load (STATE/policy: strict by default), and the IMA
 * log's boot_aggregate against a list of accepted ones (kind "boot" in
 * STATE/reference; not checked while the list is empty).
 *
 *   mmt-authority init --state DIR --ek-ca FILE
 *   mmt-authority reference --state DIR --add FILE [--name NAME]
 *   mmt-authority reference --state DIR --add-module FILE|DIR
 *   mmt-authority reference --state DIR --add-boot HEX [--name NAME]
 *   mmt-authority policy --state DIR [--boot strict|relaxed]
 *   mmt-authority challenge --state DIR --in HELLO --out CHALLENGE
 *   mmt-authority verify --state DIR --in EVIDENCE --out CREDENTIAL
 *   mmt-authority serve --state DIR [--validity SECONDS]
 *   mmt-authority show-cred --state DIR --in CREDENTIAL
 *   mmt-authority nodes --state DIR
 *   mmt-authority revoke --state DIR --node ID [--reason TEXT]
 *   mmt-authority reinstate --state DIR --node ID
 *
 * Exit codes: enum mmta_exit (tools/attest/mmta.h, man/mmt-authority.8).
 * docs/ATTESTATION.md describes the protocol.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <inttypes.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include "attest/mmta.h"
#include "mmt.h"		/* MMT_LOCKDOWN_*, MMT_BOOT_*: the key event's */

#define CHALLENGE_TTL	300		/* seconds a challenge stays valid */
/*
 * A credential is valid from this many seconds before it is issued: a
 * node whose clock runs behind the authority's (no NTP yet, or a guest
 * whose emulated clock lags) would otherwise refuse it as not yet valid
 * (EKEYEXPIRED).  It buys an attacker nothing: the credential binds the
 * node key of one module load, which did not exist before the quote.
 */
#define CLOCK_SKEW	300

static const char *state_dir, *in_path, *out_path, *ek_ca_path, *add_path;
static const char *add_module_path;
static const char *add_boot_hex;	/* reference --add-boot */
static const char *boot_arg;		/* policy --boot */
static const char *ref_name;
static const char *reason_arg;
static long node_arg;			/* --node of revoke, reinstate */
/*
 * Credential lifetime, seconds.  Short: a peer learns that a node was
 * revoked only when the node's credential expires (no revocation list).
 */
static long validity = 600;

static char *spath(const char *name)
{
	static char buf[4][4096];
	static int i;
	char *p = buf[i++ % 4];

	snprintf(p, sizeof(buf[0]), "%s/%s", state_dir, name);
	return p;
}

/* The state directory is used by one command at a time. */
static int lock_state(void)
{
	int fd = open(spath("lock"), O_RDWR | O_CREAT | O_CLOEXEC, 0600);

	if (fd < 0 || flock(fd, LOCK_EX)) {
		mmta_err("%s: %s", spath("lock"), strerror(errno));
		return -1;
	}
	return fd;
}

static int load_authority(EVP_PKEY **key, X509 **cert)
{
	FILE *f;

	if (key) {
		f = fopen(spath("authority.key"), "r");
		*key = f ? PEM_read_PrivateKey(f, NULL, NULL, NULL) : NULL;
		if (f)
			fclose(f);
		if (!*key) {
			mmta_err("%s: cannot read the authority key",
				 spath("authority.key"));
			return MMTA_ESYS;
		}
	}
	f = fopen(spath("authority.pem"), "r");
	*cert = f ? PEM_read_X509(f, NULL, NULL, NULL) : NULL;
	if (f)
		fclose(f);
	if (!*cert) {
		mmta_err("%s: cannot read the authority certificate",
			 spath("authority.pem"));
		return MMTA_ESYS;
	}
	return MMTA_OK;
}

/* ---- init ---- */

static int add_ext(X509 *cert, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509_EXTENSION *ext;
	int ok;

	X509V3_set_ctx(&ctx, cert, cert, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
	ok = ext && X509_add_ext(cert, ext, -1);
	X509_EXTENSION_free(ext);
	return ok ? 0 : -1;
}

static int cmd_init(void)
{
	EVP_PKEY *key = NULL;
	X509 *cert = NULL;
	X509_NAME *name;
	uint8_t serial[16], *ca;
	size_t ca_len;
	BIGNUM *bn = NULL;
	unsigned char *der = NULL;
	int der_len, rc = MMTA_ESYS;
	FILE *f;

	if (!ek_ca_path) {
		mmta_err("init: --ek-ca is required");
		return MMTA_EUSAGE;
	}
	if (mkdir(state_dir, 0700) && errno != EEXIST) {
		mmta_err("%s: %s", state_dir, strerror(errno));
		return MMTA_ESYS;
	}
	if (!access(spath("authority.key"), F_OK)) {
		mmta_err("%s: already initialised", state_dir);
		return MMTA_EUSAGE;
	}
	if (mkdir(spath("pending"), 0700) && errno != EEXIST)
		return MMTA_ESYS;
	if (mmta_read_file(ek_ca_path, &ca, &ca_len))
		return MMTA_ESYS;
	rc = mmta_write_file(spath("ek-ca.pem"), ca, ca_len);
	free(ca);
	if (rc || mmta_write_file(spath("nodes"), "", 0) ||
	    mmta_write_file(spath("reference"), "", 0) ||
	    mmta_write_file(spath("serial"), "0\n", 2))
		return MMTA_ESYS;
	rc = MMTA_ESYS;

	/* RSA 3072: the kernel verifies RSA in-tree; Debian 6.1 has no ECDSA */
	key = EVP_RSA_gen(3072);
	cert = X509_new();
	bn = BN_new();
	if (!key || !cert || !bn || RAND_bytes(serial, sizeof(serial)) != 1)
		goto out;
	serial[0] &= 0x7f;
	if (!BN_bin2bn(serial, sizeof(serial), bn) ||
	    !BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert)) ||
	    !X509_set_version(cert, X509_VERSION_3) ||
	    !X509_gmtime_adj(X509_getm_notBefore(cert), 0) ||
	    !X509_gmtime_adj(X509_getm_notAfter(cert), 10L * 365 * 86400) ||
	    !X509_set_pubkey(cert, key))
		goto out;
	name = X509_get_subject_name(cert);
	if (!X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
					(const unsigned char *)"mmt-authority",
					-1, -1, 0) ||
	    !X509_set_issuer_name(cert, name) ||
	    add_ext(cert, NID_basic_constraints, "critical,CA:FALSE") ||
	    add_ext(cert, NID_key_usage, "critical,digitalSignature") ||
	    add_ext(cert, NID_subject_key_identifier, "hash") ||
	    add_ext(cert, NID_authority_key_identifier, "keyid:always") ||
	    !X509_sign(cert, key, EVP_sha256()))
		goto out;
	f = fopen(spath("authority.key"), "wx");
	if (!f || !PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL) ||
	    fclose(f))
		goto out;
	f = fopen(spath("authority.pem"), "w");
	if (!f || !PEM_write_X509(f, cert) || fclose(f))
		goto out;
	der_len = i2d_X509(cert, &der);
	if (der_len <= 0 ||
	    mmta_write_file(spath("authority.der"), der, (size_t)der_len))
		goto out;
	printf("authority initialised in %s; its certificate: %s\n", state_dir,
	       spath("authority.der"));
	rc = MMTA_OK;
out:
	OPENSSL_free(der);
	BN_free(bn);
	X509_free(cert);
	EVP_PKEY_free(key);
	return rc;
}

/* ---- reference values ---- */

/*
 * STATE/reference holds one reference value a line: "<sha256 hex> <kind>
 * <name>".  Kind "mmt": a build of mmt.ko (--add); the log must show one,
 * and the credential names it.  Kind "module": another kernel module a
 * node may load (--add-module: rdma_rxe, the distribution's modules).
 */
enum ref_kind { REF_MMT, REF_MODULE };

struct ref {
	uint8_t hash[MMTA_SHA256_LEN];
	enum ref_kind kind;
};

/* The module's node key event (docs/ATTESTATION.md, "What is measured") */
#define NODE_KEY_EVENT		"mmt-node-key"
#define NODE_KEY_PREFIX		"mmt node key v2"	/* 16 bytes with its NUL */
/*
 * Version 2, 56 bytes: NODE_KEY_PREFIX with its NUL || the X25519 public
 * key || u8 lockdown level at load (MMT_LOCKDOWN_*, uapi/mmt.h) || u8
 * boot flags (MMT_BOOT_*) || 6 zero bytes
 */
#define NODE_KEY_BUF_LEN	56
#define NODE_KEY_OFF_LOCKDOWN	(sizeof(NODE_KEY_PREFIX) + MMTA_NODE_KEY_LEN)
#define NODE_KEY_OFF_FLAGS	(NODE_KEY_OFF_LOCKDOWN + 1)
#define NODE_KEY_OFF_RESERVED	(NODE_KEY_OFF_FLAGS + 1)
/* what every version's buffer starts with; version 1 was 48 bytes */
#define NODE_KEY_STEM		"mmt node key v"
#define NODE_KEY_V1_PREFIX	"mmt node key v1"
#define NODE_KEY_V1_LEN		48
/* the boot flags (MMT_BOOT_*) a version 2 event may carry */
#define BOOT_FLAGS_KNOWN	MMT_BOOT_MODULE_SIG_ENFORCED
/* the second entry of a log whose boot policy measures critical data */
#define KERNEL_VERSION_EVENT	"kernel_version"
/* IMA's first entry (ima_add_boot_aggregate()); each kernel's IMA adds one */
#define BOOT_AGGREGATE_EVENT	"boot_aggregate"

struct refs {
	size_t n, cap;
	struct ref *v;		/* sorted by hash (bsearch) */
	/* the accepted boot aggregates (kind boot), apart from the modules */
	size_t nboot, capboot;
	uint8_t (*boot)[MMTA_SHA256_LEN];
	const uint8_t *found;	/* the last mmt reference the log measured */
	unsigned int found_first;	/* the first mmt reference's entry */
	char foreign[256];	/* the first module entry with another hash */
	char foreign_algo[MMTA_IMA_ALGO_MAX + 1];	/* its algorithm if not sha256 */
	unsigned int modules;	/* module entries in the log */
	/* the node key event rule: NODE_KEY_EVENT entries and the last one */
	const uint8_t *node_key;	/* the evidence's */
	unsigned int key_events, key_index, key_index_first;
	unsigned int key_lookalikes;	/* that name, not the event's form */
	bool key_sha256;	/* the last one: d-ng sha256 */
	bool key_match;		/* the last one: of @node_key */
	char key_bad[160];	/* the last one: why its form is not version 2 */
	unsigned int lockdown;	/* the last one: the lockdown level at load */
	unsigned int boot_flags;	/* the last one: MMT_BOOT_* at load */
	bool kernel_version;	/* the second entry is KERNEL_VERSION_EVENT */
	char kver[65];		/* its buffer, the kernel release, printable */
	/* the first entry, if it is a BOOT_AGGREGATE_EVENT */
	bool boot_agg;
	char boot_agg_algo[MMTA_IMA_ALGO_MAX + 1];
	uint8_t boot_agg_digest[MMTA_IMA_DIGEST_MAX];
	size_t boot_agg_len;
	unsigned int reboots;	/* BOOT_AGGREGATE_EVENT entries after the first */
	unsigned int reboot_index;	/* the first of them */
};

static int ref_cmp(const void *a, const void *b)
{
	const struct ref *x = a, *y = b;
	int c = memcmp(x->hash, y->hash, MMTA_SHA256_LEN);

	/* equal hashes: the mmt kind first, so that bsearch can see it */
	return c ? c : (int)x->kind - (int)y->kind;
}

static int ref_hash_cmp(const void *key, const void *elem)
{
	return memcmp(key, ((const struct ref *)elem)->hash, MMTA_SHA256_LEN);
}

/*
 * ref_lookup() - the reference value @digest, NULL if none.  With the same
 * hash under both kinds the mmt one is returned (a build of mmt.ko added
 * by --add-module of a whole tree as well).
 */
static const struct ref *ref_lookup(const struct refs *r, const uint8_t *digest)
{
	const struct ref *e = bsearch(digest, r->v, r->n, sizeof(*r->v),
				      ref_hash_cmp);

	while (e && e > r->v && !memcmp(e[-1].hash, digest, MMTA_SHA256_LEN))
		e--;
	return e;
}

static void free_refs(struct refs *r)
{
	if (r) {
		free(r->v);
		free(r->boot);
	}
	free(r);
}

/* add_boot_ref() - one accepted boot aggregate into @r; an mmta_exit code */
static int add_boot_ref(struct refs *r, const uint8_t hash[MMTA_SHA256_LEN])
{
	if (r->nboot == r->capboot) {
		size_t cap = r->capboot ? 2 * r->capboot : 16;
		void *v = reallocarray(r->boot, cap, sizeof(*r->boot));

		if (!v) {
			mmta_err("reference values: out of memory");
			return MMTA_ESYS;
		}
		r->boot = v;
		r->capboot = cap;
	}
	memcpy(r->boot[r->nboot++], hash, MMTA_SHA256_LEN);
	return MMTA_OK;
}

static int load_refs(struct refs *r)
{
	char line[4200], kind[16];
	FILE *f = fopen(spath("reference"), "r");
	unsigned int lineno = 0;

	memset(r, 0, sizeof(*r));
	if (!f) {
		mmta_err("%s: %s", spath("reference"), strerror(errno));
		return MMTA_ESYS;
	}
	while (fgets(line, sizeof(line), f)) {
		uint8_t h[MMTA_SHA256_LEN];
		struct ref *e;

		lineno++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (strlen(line) >= 2 * MMTA_SHA256_LEN + 6 &&
		    !strncmp(line + 2 * MMTA_SHA256_LEN, " boot ", 6) &&
		    !mmta_hex_decode(line, 2 * MMTA_SHA256_LEN, h)) {
			if (add_boot_ref(r, h)) {
				fclose(f);
				return MMTA_ESYS;
			}
			continue;
		}
		if (r->n == r->cap) {
			r->cap = r->cap ? 2 * r->cap : 1024;
			e = reallocarray(r->v, r->cap, sizeof(*r->v));
			if (!e) {
				mmta_err("reference values: out of memory");
				fclose(f);
				return MMTA_ESYS;
			}
			r->v = e;
		}
		e = &r->v[r->n];
		if (strlen(line) < 2 * MMTA_SHA256_LEN + 1 ||
		    line[2 * MMTA_SHA256_LEN] != ' ' ||
		    mmta_hex_decode(line, 2 * MMTA_SHA256_LEN, e->hash) ||
		    sscanf(line + 2 * MMTA_SHA256_LEN + 1, "%15s", kind) != 1 ||
		    (strcmp(kind, "mmt") && strcmp(kind, "module"))) {
			mmta_err("%s: line %u: not \"<sha256 hex> mmt|module|boot <name>\"",
				 spath("reference"), lineno);
			fclose(f);
			return MMTA_ESYS;
		}
		e->kind = strcmp(kind, "mmt") ? REF_MODULE : REF_MMT;
		r->n++;
	}
	fclose(f);
	qsort(r->v, r->n, sizeof(*r->v), ref_cmp);
	return MMTA_OK;
}

/*
 * is_module_name() - whether an IMA entry's file name is a kernel module's:
 * it ends in .ko, or .ko.xz, .ko.zst, .ko.gz (kmod's compressed modules).
 * The ima-ng and ima-sig templates do not record which hook measured a
 * file, so for them the name is all the log tells (docs/ATTESTATION.md,
 * "What is measured", for what this misses; is_module_entry()).
 */
static bool is_module_name(const char *name)
{
	static const char *const ext[] = { ".ko", ".ko.xz", ".ko.zst", ".ko.gz" };
	size_t len = strlen(name), i;

	for (i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
		size_t el = strlen(ext[i]);

		if (len > el && !strcmp(name + len - el, ext[i]))
			return true;
	}
	return false;
}

/*
 * is_module_entry() - whether an IMA entry is a kernel module's: of the
 * template ima-modsig, which a node's policy gives module loads
 * (`measure func=MODULE_CHECK template=ima-modsig`) and nothing else
 * here, whatever its name; or named as a module (is_module_name()).  The
 * union: a module file root read is appraised too.
 */
static bool is_module_entry(const struct mmta_ima_entry *e)
{
	return !strcmp(e->template, "ima-modsig") || is_module_name(e->name);
}

/* one reference line: "<sha256 hex> <kind> <name>\n" to @f and stdout */
static int add_ref(FILE *f, const char *path, const char *kind,
		   const char *name)
{
	uint8_t *data, h[MMTA_SHA256_LEN];
	char hex[2 * MMTA_SHA256_LEN + 1];
	size_t len;

	if (strpbrk(name, "\n\r")) {
		mmta_err("%s: a line break in the name", path);
		return MMTA_EUSAGE;
	}
	if (mmta_read_file(path, &data, &len))
		return MMTA_ESYS;
	mmta_sha256(data, len, h);
	free(data);
	mmta_hex_encode(h, sizeof(h), hex);
	if (fprintf(f, "%s %s %s\n", hex, kind, name) < 0) {
		mmta_err("%s: %s", spath("reference"), strerror(errno));
		return MMTA_ESYS;
	}
	printf("%s %s %s\n", hex, kind, name);
	return MMTA_OK;
}

/* nftw() has no user argument: the walk's state */
static FILE *walk_out;
static int walk_rc;
static unsigned int walk_count;

static int walk_module(const char *path, const struct stat *st, int type,
		       struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (type != FTW_F || !is_module_name(path))
		return 0;
	walk_rc = add_ref(walk_out, path, "module", path);
	if (walk_rc)
		return 1;
	walk_count++;
	return 0;
}

/*
 * parse_boot_hex() - an accepted boot aggregate as given to --add-boot:
 * 64 hex digits, optionally after "sha256:" (as the issue line prints
 * it); false otherwise
 */
static bool parse_boot_hex(const char *arg, uint8_t out[MMTA_SHA256_LEN])
{
	if (!strncmp(arg, "sha256:", 7))
		arg += 7;
	return strlen(arg) == 2 * MMTA_SHA256_LEN &&
	       !mmta_hex_decode(arg, 2 * MMTA_SHA256_LEN, out);
}

/*
 * cmd_reference() - --add FILE: a build of mmt.ko; --add-module PATH:
 * another module a node may load, or every module file under the
 * directory PATH (named as is_module_name() knows them), e.g. the
 * distribution's /lib/modules/<version> of the nodes' kernel; --add-boot
 * HEX: a boot aggregate the nodes' IMA logs may start with (the SHA-256
 * boot_aggregate of a known firmware, boot loader and kernel).
 */
static int cmd_reference(void)
{
	uint8_t boot[MMTA_SHA256_LEN];
	char hex[2 * MMTA_SHA256_LEN + 1];
	struct stat st;
	char *copy;
	FILE *f;
	int lock, rc;

	if (!!add_path + !!add_module_path + !!add_boot_hex != 1) {
		mmta_err("reference: one of --add FILE, --add-module PATH or --add-boot HEX is required");
		return MMTA_EUSAGE;
	}
	if (ref_name && add_module_path) {
		mmta_err("reference: --name goes with --add or --add-boot");
		return MMTA_EUSAGE;
	}
	if (add_boot_hex && !parse_boot_hex(add_boot_hex, boot)) {
		mmta_err("reference: --add-boot: a SHA-256 boot aggregate, 64 hex digits (optionally sha256:HEX)");
		return MMTA_EUSAGE;
	}
	if (ref_name && strpbrk(ref_name, "\n\r")) {
		mmta_err("reference: a line break in --name");
		return MMTA_EUSAGE;
	}
	if (add_module_path && stat(add_module_path, &st)) {
		mmta_err("%s: %s", add_module_path, strerror(errno));
		return MMTA_ESYS;
	}
	lock = lock_state();
	if (lock < 0)
		return MMTA_ESYS;
	f = fopen(spath("reference"), "a");
	if (!f) {
		mmta_err("%s: %s", spath("reference"), strerror(errno));
		close(lock);
		return MMTA_ESYS;
	}
	if (add_boot_hex) {
		mmta_hex_encode(boot, sizeof(boot), hex);
		rc = MMTA_OK;
		if (fprintf(f, "%s boot %s\n", hex,
			    ref_name ? ref_name : BOOT_AGGREGATE_EVENT) < 0) {
			mmta_err("%s: %s", spath("reference"), strerror(errno));
			rc = MMTA_ESYS;
		} else {
			printf("%s boot %s\n", hex,
			       ref_name ? ref_name : BOOT_AGGREGATE_EVENT);
		}
	} else if (add_path) {
		copy = strdup(add_path);
		rc = copy ? add_ref(f, add_path, "mmt",
				    ref_name ? ref_name : basename(copy)) :
			    MMTA_ESYS;
		free(copy);
	} else if (!S_ISDIR(st.st_mode)) {
		rc = add_ref(f, add_module_path, "module", add_module_path);
	} else {
		walk_out = f;
		walk_rc = MMTA_OK;
		walk_count = 0;
		if (nftw(add_module_path, walk_module, 32, FTW_PHYS) && !walk_rc) {
			mmta_err("%s: %s", add_module_path, strerror(errno));
			walk_rc = MMTA_ESYS;
		}
		rc = walk_rc;
		if (!rc)
			fprintf(stderr, "%u modules under %s added\n", walk_count,
				add_module_path);
	}
	/* what was read before a failure is added: each line is whole */
	if (fflush(f) || fsync(fileno(f))) {
		mmta_err("%s: %s", spath("reference"), strerror(errno));
		rc = MMTA_ESYS;
	}
	if (fclose(f) && !rc)
		rc = MMTA_ESYS;
	close(lock);
	return rc;
}

/* ---- challenge ---- */

static const char *const hello_fields[] = { "ek_cert", "ak_public", NULL };
static const char *const pending_fields[] = {
	"nonce", "ak_public", "ek_hash", "created", NULL };
static const char *const evidence_fields[] = {
	"id", "node_key", "want_node_id", "quote", "signature", "ima_log",
	NULL };

static void le64(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/*
 * challenge() - answer a hello: check the EK certificate and the AK, draw
 * the nonce, store the pending challenge, and fill @out with the
 * challenge message.  Return: an mmta_exit code; on error @out is empty.
 */
static int challenge(const struct mmta_msg *hello, struct mmta_msg *out)
{
	const struct mmta_field *ek, *ak;
	struct mmta_msg pend = { .type = "pending" };
	uint8_t ek_hash[MMTA_SHA256_LEN], name[64], nonce[MMTA_NONCE_LEN];
	uint8_t id[MMTA_CHALLENGE_ID_LEN], blob[128], secret[300], t[8];
	char idhex[2 * MMTA_CHALLENGE_ID_LEN + 1], pname[64];
	size_t name_len, blob_len, secret_len;
	EVP_PKEY *ek_pub = NULL, *ak_pub = NULL;
	int rc, lock;

	memset(out, 0, sizeof(*out));
	snprintf(out->type, sizeof(out->type), "challenge");
	ek = mmta_msg_get(hello, "ek_cert");
	ak = mmta_msg_get(hello, "ak_public");
	if (!ek || !ak) {
		mmta_err("hello: ek_cert and ak_public are required");
		rc = MMTA_EMSG;
		goto out;
	}
	rc = mmta_ek_verify(ek->data, ek->len, spath("ek-ca.pem"), &ek_pub,
			    ek_hash);
	if (rc)
		goto out;
	rc = mmta_ak_check(ak->data, ak->len, name, &name_len, &ak_pub);
	if (rc)
		goto out;
	rc = MMTA_ESYS;
	if (RAND_bytes(nonce, sizeof(nonce)) != 1 ||
	    RAND_bytes(id, sizeof(id)) != 1)
		goto out;
	rc = mmta_make_credential(ek_pub, name, name_len, nonce, sizeof(nonce),
				  blob, &blob_len, secret, &secret_len);
	if (rc)
		goto out;
	le64(t, (uint64_t)time(NULL));
	mmta_msg_add(&pend, "nonce", nonce, sizeof(nonce));
	mmta_msg_add(&pend, "ak_public", ak->data, ak->len);
	mmta_msg_add(&pend, "ek_hash", ek_hash, sizeof(ek_hash));
	mmta_msg_add(&pend, "created", t, sizeof(t));
	mmta_hex_encode(id, sizeof(id), idhex);
	snprintf(pname, sizeof(pname), "pending/%s", idhex);
	lock = lock_state();
	if (lock < 0)
		goto out;
	rc = mmta_msg_write(spath(pname), &pend);
	close(lock);
	if (rc)
		goto out;
	mmta_msg_add(out, "id", id, sizeof(id));
	mmta_msg_add(out, "credential_blob", blob, blob_len);
	mmta_msg_add(out, "secret", secret, secret_len);
out:
	OPENSSL_cleanse(nonce, sizeof(nonce));
	EVP_PKEY_free(ek_pub);
	EVP_PKEY_free(ak_pub);
	mmta_msg_free(&pend);
	return rc;
}

static int cmd_challenge(void)
{
	struct mmta_msg hello, out;
	int rc;

	rc = mmta_msg_read(in_path, "hello", hello_fields, &hello);
	if (rc)
		return rc;
	rc = challenge(&hello, &out);
	if (!rc)
		rc = mmta_msg_write(out_path, &out);
	mmta_msg_free(&hello);
	mmta_msg_free(&out);
	return rc;
}

/* ---- verify ---- */

/* printable() - @len bytes of @in as a printable string (others '?') */
static void printable(char *out, size_t size, const uint8_t *in, size_t len)
{
	size_t i;

	for (i = 0; i < len && i + 1 < size; i++)
		out[i] = in[i] > ' ' && in[i] < 0x7f ? (char)in[i] : '?';
	out[i] = '\0';
}

/*
 * key_event() - note a NODE_KEY_EVENT entry @e of the module's form for
 * check_node_key(): its place, its boot state, and whether it is the
 * version 2 event over the evidence's key (@r->key_bad says why not).
 */
static void key_event(struct refs *r, const struct mmta_ima_entry *e,
		      bool sha256)
{
	uint8_t buf[NODE_KEY_BUF_LEN], h[MMTA_SHA256_LEN];
	size_t i;

	if (!r->key_events++)
		r->key_index_first = e->index;
	r->key_index = e->index;
	r->key_sha256 = sha256;
	r->key_match = false;
	r->key_bad[0] = '\0';
	if (e->buf_len == NODE_KEY_V1_LEN &&
	    !memcmp(e->buf, NODE_KEY_V1_PREFIX, sizeof(NODE_KEY_V1_PREFIX))) {
		snprintf(r->key_bad, sizeof(r->key_bad),
			 "is of version 1 (48 bytes, no boot state): the module is too old, load one that measures version 2");
		return;
	}
	if (e->buf_len != NODE_KEY_BUF_LEN ||
	    memcmp(e->buf, NODE_KEY_PREFIX, sizeof(NODE_KEY_PREFIX))) {
		snprintf(r->key_bad, sizeof(r->key_bad),
			 "is not of version 2 (%u bytes starting \"%s\\0\"; it has %zu)",
			 (unsigned int)NODE_KEY_BUF_LEN, NODE_KEY_PREFIX,
			 e->buf_len);
		return;
	}
	r->lockdown = e->buf[NODE_KEY_OFF_LOCKDOWN];
	r->boot_flags = e->buf[NODE_KEY_OFF_FLAGS];
	for (i = NODE_KEY_OFF_RESERVED; i < NODE_KEY_BUF_LEN; i++)
		if (e->buf[i]) {
			snprintf(r->key_bad, sizeof(r->key_bad),
				 "has a non-zero reserved byte (offset %zu; bytes %zu..%u must be zero)",
				 i, NODE_KEY_OFF_RESERVED,
				 (unsigned int)NODE_KEY_BUF_LEN - 1);
			return;
		}
	if (r->lockdown > MMT_LOCKDOWN_CONFIDENTIALITY) {
		snprintf(r->key_bad, sizeof(r->key_bad),
			 "has lockdown level %u, not 0..2", r->lockdown);
		return;
	}
	if (r->boot_flags & ~BOOT_FLAGS_KNOWN) {
		snprintf(r->key_bad, sizeof(r->key_bad),
			 "has unknown boot flags 0x%02x", r->boot_flags);
		return;
	}
	/* the buffer the module measured for the evidence's key */
	memcpy(buf, e->buf, sizeof(buf));
	memcpy(buf + sizeof(NODE_KEY_PREFIX), r->node_key, MMTA_NODE_KEY_LEN);
	mmta_sha256(buf, sizeof(buf), h);
	/* ima-buf also logs the buffer: it must be the one hashed */
	r->key_match = sha256 && !memcmp(e->digest, h, sizeof(h)) &&
		       !memcmp(e->buf, buf, sizeof(buf));
}

/*
 * visit_ref() - appraise one IMA entry: a reference of kind mmt is the
 * module attested (the last one measured goes into the credential); a
 * module entry (is_module_entry()) whose hash is not a reference value of
 * either kind is foreign, whatever its name: a tampered mmt.ko renamed,
 * or loaded after the reference one.  Reference values are SHA-256, so a
 * module entry measured with another algorithm (IMA takes a file's from
 * its security.ima xattr) is foreign too: it cannot be appraised.  Other
 * files (programs, libraries, configuration read by root) are not
 * appraised.  Also notes what the node key rule (check_node_key()) needs.
 */
static int visit_ref(void *arg, const struct mmta_ima_entry *e)
{
	struct refs *r = arg;
	bool module = is_module_entry(e);
	bool sha256 = !strcmp(e->algo, "sha256");
	bool key_named = !strcmp(e->name, NODE_KEY_EVENT);
	const struct ref *ref = sha256 ? ref_lookup(r, e->digest) : NULL;

	if (e->index == 0 && !strcmp(e->name, BOOT_AGGREGATE_EVENT)) {
		r->boot_agg = true;
		snprintf(r->boot_agg_algo, sizeof(r->boot_agg_algo), "%s",
			 e->algo);
		memcpy(r->boot_agg_digest, e->digest, e->digest_len);
		r->boot_agg_len = e->digest_len;
	}
	if (e->index == 1) {
		r->kernel_version = !strcmp(e->name, KERNEL_VERSION_EVENT) &&
				    !strcmp(e->template, "ima-buf");
		if (r->kernel_version)
			printable(r->kver, sizeof(r->kver), e->buf,
				  e->buf_len);
	}
	/* another kernel's IMA started on the same PCRs: kexec */
	if (e->index > 0 && !strcmp(e->name, BOOT_AGGREGATE_EVENT) &&
	    !r->reboots++)
		r->reboot_index = e->index;
	/*
	 * Only the module's own form counts as its key event: template
	 * ima-buf carrying a buffer that starts with NODE_KEY_STEM, of any
	 * version (so that an old module's event, or one appended with
	 * another version, still makes two); check_node_key() then accepts
	 * version 2 only.  A file whose measured name is "mmt-node-key" (IMA
	 * logs a file's base name when its path cannot be resolved, which
	 * any user can arrange for a program it runs) has an empty buffer,
	 * so it cannot pass for the event, nor make a second one.
	 */
	if (key_named && strcmp(e->template, "ima-buf"))
		r->key_lookalikes++;
	if (key_named && !strcmp(e->template, "ima-buf") && e->buf &&
	    e->buf_len >= sizeof(NODE_KEY_STEM) - 1 &&
	    !memcmp(e->buf, NODE_KEY_STEM, sizeof(NODE_KEY_STEM) - 1))
		key_event(r, e, sha256);
	if (module)
		r->modules++;
	if (ref && ref->kind == REF_MMT) {
		if (!r->found)
			r->found_first = e->index;
		r->found = ref->hash;
	} else if (!ref && module && !r->foreign[0]) {
		snprintf(r->foreign, sizeof(r->foreign), "%s", e->name);
		if (!sha256)
			snprintf(r->foreign_algo, sizeof(r->foreign_algo),
				 "%s", e->algo);
	}
	return MMTA_OK;
}

/*
 * check_node_key() - the node key rule, after the module rules: the log
 * holds one NODE_KEY_EVENT, the critical data mmt.ko measures when it
 * draws its node key at load (ima_measure_critical_data(), buffer
 * NODE_KEY_PREFIX || the X25519 public key || the boot state || zeros,
 * template ima-buf: version 2, key_event()), after the
 * first reference mmt.ko measurement (a later one, a copy any user reads,
 * does not matter: the event is unique), and of the key the evidence carries; and the
 * boot policy measured critical data from IMA's start (the second entry
 * is KERNEL_VERSION_EVENT), so that the event cannot be missing from a
 * log whose policy root changed; and no other kernel started on these
 * PCRs (no second BOOT_AGGREGATE_EVENT: kexec).  A key root made in user
 * space is refused.  Return: MMTA_OK or MMTA_ENODEKEY.
 */
static int check_node_key(const struct refs *r)
{
	/*
	 * kexec keeps the TPM's PCRs: the log sent is the first kernel's
	 * (boot_aggregate, kernel_version) followed by the next kernel's,
	 * whose command line and IMA policy root chose; its IMA starts with
	 * a boot_aggregate of its own.  The kernel_version rule speaks of the
	 * first kernel only.
	 */
	if (r->reboots) {
		mmta_err("IMA log: a second \"%s\" entry (entry %u): another kernel started on these PCRs (kexec), whose policy the log does not show: the node key is not the one the module measured",
			 BOOT_AGGREGATE_EVENT, r->reboot_index + 1);
		return MMTA_ENODEKEY;
	}
	if (!r->key_events) {
		mmta_err("IMA log: no \"%s\" event (template ima-buf, %u bytes%s): the node key is not the one the module measured",
			 NODE_KEY_EVENT, (unsigned int)NODE_KEY_BUF_LEN,
			 r->key_lookalikes ? "; entries of that name in another template do not count" : "");
		return MMTA_ENODEKEY;
	}
	if (r->key_events > 1) {
		mmta_err("IMA log: %u \"%s\" events (entries %u and %u), one allowed: the node key is not the one the module measured",
			 r->key_events, NODE_KEY_EVENT, r->key_index_first + 1,
			 r->key_index + 1);
		return MMTA_ENODEKEY;
	}
	if (r->key_index < r->found_first) {
		mmta_err("IMA log: the \"%s\" event (entry %u) comes before the first reference mmt.ko measurement (entry %u): the node key is not the one the module measured",
			 NODE_KEY_EVENT, r->key_index + 1, r->found_first + 1);
		return MMTA_ENODEKEY;
	}
	if (r->key_bad[0]) {
		mmta_err("IMA log: the \"%s\" event (entry %u) %s",
			 NODE_KEY_EVENT, r->key_index + 1, r->key_bad);
		return MMTA_ENODEKEY;
	}
	if (!r->key_sha256) {
		mmta_err("IMA log: the \"%s\" event (entry %u) is not measured with sha256: the node key is not the one the module measured",
			 NODE_KEY_EVENT, r->key_index + 1);
		return MMTA_ENODEKEY;
	}
	if (!r->key_match) {
		mmta_err("IMA log: the \"%s\" event (entry %u) is not of the evidence's node key: the node key is not the one the module measured",
			 NODE_KEY_EVENT, r->key_index + 1);
		return MMTA_ENODEKEY;
	}
	if (!r->kernel_version) {
		mmta_err("IMA log: the second entry is not the \"%s\" critical data event (boot with ima_policy=critical_data): the node key is not the one the module measured",
			 KERNEL_VERSION_EVENT);
		return MMTA_ENODEKEY;
	}
	return MMTA_OK;
}

/* ---- the boot: STATE/policy and the accepted boot aggregates ---- */

#define POLICY_FIRST_LINE	"mmt-authority policy 1\n"

/*
 * load_policy() - the boot policy of STATE/policy, one line after the
 * first, "boot strict" or "boot relaxed": *@relaxed.  Strict without the
 * file (the default); a file that does not parse is an error, never a
 * weaker policy.  Return: an mmta_exit code.
 */
static int load_policy(bool *relaxed)
{
	char line[128];
	FILE *f = fopen(spath("policy"), "r");
	bool ok, seen = false;

	*relaxed = false;
	if (!f) {
		if (errno == ENOENT)
			return MMTA_OK;
		mmta_err("%s: %s", spath("policy"), strerror(errno));
		return MMTA_ESYS;
	}
	ok = fgets(line, sizeof(line), f) && !strcmp(line, POLICY_FIRST_LINE);
	while (ok && fgets(line, sizeof(line), f)) {
		if (!seen && !strcmp(line, "boot strict\n"))
			*relaxed = false;
		else if (!seen && !strcmp(line, "boot relaxed\n"))
			*relaxed = true;
		else
			ok = false;
		seen = true;
	}
	fclose(f);
	if (!ok || !seen) {
		*relaxed = false;
		mmta_err("%s: not a policy (mmt-authority policy --boot strict|relaxed)",
			 spath("policy"));
		return MMTA_ESYS;
	}
	return MMTA_OK;
}

static const char *lockdown_name(unsigned int level)
{
	static const char *const names[] = {
		[MMT_LOCKDOWN_NONE] = "none",
		[MMT_LOCKDOWN_INTEGRITY] = "integrity",
		[MMT_LOCKDOWN_CONFIDENTIALITY] = "confidentiality",
	};

	return level <= MMT_LOCKDOWN_CONFIDENTIALITY ? names[level] : "unknown";
}

/* boot_state() - "lockdown L, module signatures [not ]enforced" */
static void boot_state(const struct refs *r, char *out, size_t size)
{
	snprintf(out, size, "lockdown %s, module signatures %senforced",
		 lockdown_name(r->lockdown),
		 r->boot_flags & MMT_BOOT_MODULE_SIG_ENFORCED ? "" : "not ");
}

/* boot_aggregate() - the log's boot_aggregate as "<algo>:<hex>", or "-" */
static void boot_aggregate(const struct refs *r, char *out, size_t size)
{
	char hex[2 * MMTA_IMA_DIGEST_MAX + 1];

	if (!r->boot_agg) {
		snprintf(out, size, "-");
		return;
	}
	mmta_hex_encode(r->boot_agg_digest, r->boot_agg_len, hex);
	snprintf(out, size, "%s:%s", r->boot_agg_algo, hex);
}

/*
 * check_boot() - the boot rule, after the node key rule (the boot state
 * is the key event's, so only a version 2 event of the evidence's key
 * gets here): the lockdown level and module signature enforcement the
 * module measured at load must be confidentiality and enforced, unless
 * the policy is relaxed (@relaxed); and if STATE/reference lists boot
 * aggregates, the log's first entry must be a SHA-256 boot_aggregate
 * among them.  What the credential is issued despite (a boot that is not
 * hardened, a boot aggregate not appraised) goes into @note, for stderr
 * once per credential; empty if nothing.  Return: MMTA_OK or MMTA_EBOOT.
 */
static int check_boot(const struct refs *r, bool relaxed, char *note,
		      size_t note_size)
{
	bool hardened = r->lockdown == MMT_LOCKDOWN_CONFIDENTIALITY &&
			(r->boot_flags & MMT_BOOT_MODULE_SIG_ENFORCED);
	char state[96], agg[8 + 2 * MMTA_IMA_DIGEST_MAX + MMTA_IMA_ALGO_MAX];
	size_t i;
	int n = 0;

	note[0] = '\0';
	boot_state(r, state, sizeof(state));
	if (!hardened && !relaxed) {
		mmta_err("the node's boot: %s when the module loaded; the boot policy (strict) requires lockdown confidentiality and module signatures enforced (the kernel command line's lockdown=confidentiality module.sig_enforce=1; mmt-authority policy --boot relaxed for a test cluster)",
			 state);
		return MMTA_EBOOT;
	}
	boot_aggregate(r, agg, sizeof(agg));
	if (r->nboot && !r->boot_agg) {
		mmta_err("IMA log: the first entry is not a \"%s\": the boot cannot be appraised against the %zu accepted boot aggregates",
			 BOOT_AGGREGATE_EVENT, r->nboot);
		return MMTA_EBOOT;
	}
	if (r->nboot && strcmp(r->boot_agg_algo, "sha256")) {
		mmta_err("IMA log: boot_aggregate %s is not SHA-256, as the %zu accepted boot aggregates are",
			 agg, r->nboot);
		return MMTA_EBOOT;
	}
	for (i = 0; i < r->nboot; i++)
		if (!memcmp(r->boot[i], r->boot_agg_digest, MMTA_SHA256_LEN))
			break;
	if (r->nboot && i == r->nboot) {
		mmta_err("IMA log: boot_aggregate %s is not one of the %zu accepted boot aggregates (mmt-authority reference --add-boot)",
			 agg, r->nboot);
		return MMTA_EBOOT;
	}
	if (!hardened)
		n = snprintf(note, note_size, "boot not hardened: %s: %s (boot policy relaxed)",
			     state,
			     r->lockdown < MMT_LOCKDOWN_CONFIDENTIALITY ?
			     "root on the node can read the node key" :
			     "only lockdown refuses unsigned modules");
	if (!r->nboot && n >= 0 && (size_t)n < note_size)
		snprintf(note + n, note_size - (size_t)n,
			 "%sboot_aggregate not appraised: no accepted boot aggregates (mmt-authority reference --add-boot)",
			 n ? "; " : "");
	return MMTA_OK;
}

/*
 * assign_id() - the node id of the TPM @ek_hash: the one it already holds,
 * else @want if free, else the lowest free id.  The node list is written
 * (durably) before the credential is issued, so an id is never given to a
 * second TPM, across restarts of the authority too.
 * Context: the state lock held.
 */
static int assign_id(const uint8_t ek_hash[MMTA_SHA256_LEN], uint32_t want,
		     uint32_t *id)
{
	static uint8_t used[MMTA_NODE_ID_MAX + 1];
	char line[256], ekhex[2 * MMTA_SHA256_LEN + 1], mine[sizeof(ekhex)];
	char *buf = NULL;
	size_t len = 0;
	uint32_t held = 0, i;
	unsigned int nid;
	FILE *f;
	int rc;

	memset(used, 0, sizeof(used));
	mmta_hex_encode(ek_hash, MMTA_SHA256_LEN, mine);
	f = fopen(spath("nodes"), "r");
	if (!f) {
		mmta_err("%s: %s", spath("nodes"), strerror(errno));
		return MMTA_ESYS;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%u %64s", &nid, ekhex) != 2 ||
		    nid < MMTA_NODE_ID_MIN || nid > MMTA_NODE_ID_MAX) {
			mmta_err("%s: bad line", spath("nodes"));
			fclose(f);
			return MMTA_ESYS;
		}
		used[nid] = 1;
		if (!strcmp(ekhex, mine))
			held = nid;
	}
	fclose(f);
	if (held) {
		if (want && want != held) {
			mmta_err("node id %u: this node holds id %u", want, held);
			return MMTA_EIDINUSE;
		}
		*id = held;
		return MMTA_OK;
	}
	if (want) {
		if (want > MMTA_NODE_ID_MAX || used[want]) {
			mmta_err("node id %u is held by another node", want);
			return MMTA_EIDINUSE;
		}
		*id = want;
	} else {
		for (i = MMTA_NODE_ID_MIN; i <= MMTA_NODE_ID_MAX && used[i]; i++)
			;
		if (i > MMTA_NODE_ID_MAX) {
			mmta_err("every node id is held");
			return MMTA_EIDSPACE;
		}
		*id = i;
	}
	if (mmta_read_file(spath("nodes"), (uint8_t **)&buf, &len))
		return MMTA_ESYS;
	snprintf(line, sizeof(line), "%u %s\n", *id, mine);
	buf = realloc(buf, len + strlen(line));
	if (!buf)
		return MMTA_ESYS;
	memcpy(buf + len, line, strlen(line));
	rc = mmta_write_file(spath("nodes"), buf, len + strlen(line));
	free(buf);
	return rc;
}

/* ---- node records ---- */

/**
 * struct node_rec - what a node's last credential was issued on, kept in
 * STATE/records/<id> across restarts (docs/ATTESTATION.md, "Node ids")
 * @id: the node id
 * @ek_hash: SHA-256 of its TPM's EK public key (as in STATE/nodes)
 * @serial: the last credential's serial; 0 if none was issued since
 *	records were kept (a record made by revoke)
 * @node_key: that credential's node key (the module load it was for)
 * @not_after: that credential's last second of validity
 * @ima_entries: how many IMA log entries (every PCR) it was issued on
 * @ima_pcr10: the SHA-256 PCR 10 replayed over exactly those entries
 * @revoked: every evidence of this node is refused until reinstate
 * @reason: why it was revoked, one line
 * @kernel_version: the kernel release that credential's log showed
 *	(its kernel_version event), "-" if none is known
 * @boot_aggregate: that log's boot_aggregate, "<algo>:<hex>" or "-"
 * @boot: the boot state the module measured, "lockdown L, module
 *	signatures [not ]enforced", or "-"
 */
struct node_rec {
	uint32_t id;
	uint8_t ek_hash[MMTA_SHA256_LEN];
	uint64_t serial;
	uint8_t node_key[MMTA_NODE_KEY_LEN];
	uint64_t not_after;
	unsigned int ima_entries;
	uint8_t ima_pcr10[MMTA_SHA256_LEN];
	bool revoked;
	char reason[256];
	char kernel_version[65];
	char boot_aggregate[8 + 2 * MMTA_IMA_DIGEST_MAX + MMTA_IMA_ALGO_MAX];
	char boot[96];
};

#define REC_FIRST_LINE	"mmt-authority record 1\n"

static char *rec_path(uint32_t id)
{
	char name[32];

	snprintf(name, sizeof(name), "records/%u", id);
	return spath(name);
}

/* scan_hex() - @n bytes from exactly 2 * @n hex digits; false otherwise */
static bool scan_hex(const char *hex, uint8_t *out, size_t n)
{
	return strlen(hex) == 2 * n && !mmta_hex_decode(hex, 2 * n, out);
}

/*
 * rec_load() - read node @id's record into @r; *@found false (and @r
 * zeroed) if it has none.  Return: MMTA_OK, or MMTA_ESYS for a record
 * that cannot be read or does not parse (message on stderr).
 */
static int rec_load(uint32_t id, struct node_rec *r, bool *found)
{
	char line[600], val[520], name[32];
	unsigned int seen = 0, n;
	unsigned long long v;
	FILE *f;
	bool ok = true;

	memset(r, 0, sizeof(*r));
	*found = false;
	f = fopen(rec_path(id), "r");
	if (!f) {
		if (errno == ENOENT)
			return MMTA_OK;
		mmta_err("%s: %s", rec_path(id), strerror(errno));
		return MMTA_ESYS;
	}
	if (!fgets(line, sizeof(line), f) || strcmp(line, REC_FIRST_LINE))
		ok = false;
	while (ok && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		val[0] = '\0';
		if (sscanf(line, "%31s %519[^\n]", name, val) < 1) {
			ok = false;
		} else if (!strcmp(name, "node_id")) {
			ok = sscanf(val, "%u", &n) == 1 && n == id;
			r->id = id;
			seen |= 1;
		} else if (!strcmp(name, "ek_hash")) {
			ok = scan_hex(val, r->ek_hash, MMTA_SHA256_LEN);
			seen |= 2;
		} else if (!strcmp(name, "serial")) {
			ok = sscanf(val, "%llu", &v) == 1;
			r->serial = v;
		} else if (!strcmp(name, "node_key")) {
			ok = scan_hex(val, r->node_key, MMTA_NODE_KEY_LEN);
		} else if (!strcmp(name, "not_after")) {
			ok = sscanf(val, "%llu", &v) == 1;
			r->not_after = v;
		} else if (!strcmp(name, "ima_entries")) {
			ok = sscanf(val, "%u", &r->ima_entries) == 1;
		} else if (!strcmp(name, "ima_pcr10")) {
			ok = scan_hex(val, r->ima_pcr10, MMTA_SHA256_LEN);
		} else if (!strcmp(name, "revoked")) {
			ok = sscanf(val, "%u", &n) == 1 && n <= 1;
			r->revoked = n;
		} else if (!strcmp(name, "reason")) {
			snprintf(r->reason, sizeof(r->reason), "%s", val);
		} else if (!strcmp(name, "kernel_version")) {
			snprintf(r->kernel_version, sizeof(r->kernel_version),
				 "%s", val);
		} else if (!strcmp(name, "boot_aggregate")) {
			snprintf(r->boot_aggregate, sizeof(r->boot_aggregate),
				 "%s", val);
		} else if (!strcmp(name, "boot")) {
			snprintf(r->boot, sizeof(r->boot), "%s", val);
		} else {
			ok = false;
		}
	}
	fclose(f);
	if (!ok || seen != 3) {
		mmta_err("%s: not a node record", rec_path(id));
		return MMTA_ESYS;
	}
	*found = true;
	return MMTA_OK;
}

/*
 * rec_store() - write node @r->id's record whole and durably (temporary
 * file, fsync, rename: mmta_write_file()).  Return: an mmta_exit code.
 * Context: the state lock held.
 */
static int rec_store(const struct node_rec *r)
{
	char ek[2 * MMTA_SHA256_LEN + 1], key[2 * MMTA_NODE_KEY_LEN + 1];
	char pcr[sizeof(ek)], buf[2048];
	int n;

	if (mkdir(spath("records"), 0700) && errno != EEXIST) {
		mmta_err("%s: %s", spath("records"), strerror(errno));
		return MMTA_ESYS;
	}
	mmta_hex_encode(r->ek_hash, sizeof(r->ek_hash), ek);
	mmta_hex_encode(r->node_key, sizeof(r->node_key), key);
	mmta_hex_encode(r->ima_pcr10, sizeof(r->ima_pcr10), pcr);
	n = snprintf(buf, sizeof(buf),
		     REC_FIRST_LINE "node_id %u\nek_hash %s\nserial %" PRIu64
		     "\nnode_key %s\nnot_after %" PRIu64 "\nima_entries %u\n"
		     "ima_pcr10 %s\nrevoked %d\nreason %s\nkernel_version %s\n"
		     "boot_aggregate %s\nboot %s\n",
		     r->id, ek, r->serial, key, r->not_after, r->ima_entries,
		     pcr, r->revoked, r->reason,
		     r->kernel_version[0] ? r->kernel_version : "-",
		     r->boot_aggregate[0] ? r->boot_aggregate : "-",
		     r->boot[0] ? r->boot : "-");
	return mmta_write_file(rec_path(r->id), buf, (size_t)n);
}

/* rec_reason() - @r->reason from @text: one line, printable */
static void rec_reason(struct node_rec *r, const char *text)
{
	size_t i;

	i = strnlen(text, sizeof(r->reason) - 1);
	memcpy(r->reason, text, i);
	r->reason[i] = '\0';
	for (i = 0; r->reason[i]; i++)
		if ((unsigned char)r->reason[i] < ' ' || r->reason[i] == 0x7f)
			r->reason[i] = ' ';
}

/*
 * find_node() - look a node up in STATE/nodes: by @ek_hash if not NULL,
 * else by @id.  Sets *@found_id to its id (0: none) and, if @found_ek is
 * not NULL, @found_ek to its EK hash.  Return: an mmta_exit code.
 */
static int find_node(const uint8_t *ek_hash, uint32_t id, uint32_t *found_id,
		     uint8_t *found_ek)
{
	char line[256], ekhex[2 * MMTA_SHA256_LEN + 1], mine[sizeof(ekhex)];
	uint8_t ek[MMTA_SHA256_LEN];
	unsigned int nid;
	FILE *f;

	*found_id = 0;
	if (ek_hash)
		mmta_hex_encode(ek_hash, MMTA_SHA256_LEN, mine);
	f = fopen(spath("nodes"), "r");
	if (!f) {
		mmta_err("%s: %s", spath("nodes"), strerror(errno));
		return MMTA_ESYS;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%u %64s", &nid, ekhex) != 2 ||
		    !scan_hex(ekhex, ek, sizeof(ek))) {
			mmta_err("%s: bad line", spath("nodes"));
			fclose(f);
			return MMTA_ESYS;
		}
		if (ek_hash ? !strcmp(ekhex, mine) : nid == id) {
			*found_id = nid;
			if (found_ek)
				memcpy(found_ek, ek, sizeof(ek));
			break;
		}
	}
	fclose(f);
	return MMTA_OK;
}

static int next_serial(uint64_t *serial)
{
	uint8_t *buf;
	size_t len;
	char out[32];

	if (mmta_read_file(spath("serial"), &buf, &len))
		return MMTA_ESYS;
	buf = realloc(buf, len + 1);
	if (!buf)
		return MMTA_ESYS;
	buf[len] = '\0';
	*serial = strtoull((char *)buf, NULL, 10) + 1;
	free(buf);
	snprintf(out, sizeof(out), "%" PRIu64 "\n", *serial);
	return mmta_write_file(spath("serial"), out, strlen(out));
}

/* Take a pending challenge: it can be used once (rename is atomic). */
static int take_challenge(const struct mmta_field *id, struct mmta_msg *pend)
{
	char idhex[2 * MMTA_CHALLENGE_ID_LEN + 1], p[64], used[80];
	const struct mmta_field *created;
	int rc;

	if (id->len != MMTA_CHALLENGE_ID_LEN) {
		mmta_err("evidence: bad challenge id");
		return MMTA_ECHALLENGE;
	}
	mmta_hex_encode(id->data, id->len, idhex);
	snprintf(p, sizeof(p), "pending/%s", idhex);
	snprintf(used, sizeof(used), "pending/%s.used", idhex);
	if (rename(spath(p), spath(used))) {
		mmta_err("challenge %s: unknown or already used", idhex);
		return MMTA_ECHALLENGE;
	}
	rc = mmta_msg_read(spath(used), "pending", pending_fields, pend);
	unlink(spath(used));
	if (rc)
		return MMTA_ESYS;
	created = mmta_msg_get(pend, "created");
	if (!created || created->len != 8 ||
	    get_le64(created->data) + CHALLENGE_TTL < (uint64_t)time(NULL)) {
		mmta_err("challenge %s: expired", idhex);
		return MMTA_ECHALLENGE;
	}
	return MMTA_OK;
}

/*
 * renewal_check() - a renewal (evidence of the node key of the node's
 * last credential, @rec) must show a log that only grew since: its first
 * @rec->ima_entries entries replay to the PCR 10 recorded then.  Return:
 * MMTA_OK or MMTA_ELOGREWRITTEN.
 */
static int renewal_check(const struct node_rec *rec, const uint8_t *log,
			 size_t len, unsigned int entries)
{
	uint8_t pcr[MMTA_SHA256_LEN];

	if (entries < rec->ima_entries) {
		mmta_err("IMA log: a renewal of node id %u (the node key of serial %" PRIu64 ") with %u entries, fewer than the %u its last credential was issued on: the log was rewritten",
			 rec->id, rec->serial, entries, rec->ima_entries);
		return MMTA_ELOGREWRITTEN;
	}
	if (mmta_ima_replay_prefix(log, len, rec->ima_entries, pcr) ||
	    memcmp(pcr, rec->ima_pcr10, sizeof(pcr))) {
		mmta_err("IMA log: a renewal of node id %u (the node key of serial %" PRIu64 ") whose first %u entries are not those its last credential was issued on: the log was rewritten",
			 rec->id, rec->serial, rec->ima_entries);
		return MMTA_ELOGREWRITTEN;
	}
	return MMTA_OK;
}

/*
 * revoke_on_refusal() - a refusal @rc of evidence from the TPM of node
 * @rec, for a measurement that is no reference value (20), a boot the
 * policy does not accept (24) or a rewritten log (22), while the node
 * holds a credential that has not expired,
 * revokes the node: its record says so (written before the refusal
 * leaves), and every later evidence is refused (23) until reinstate.
 * Context: the state lock held.
 */
static void revoke_on_refusal(struct node_rec *rec, int rc)
{
	char why[300];

	if ((rc != MMTA_EFOREIGN && rc != MMTA_ELOGREWRITTEN &&
	     rc != MMTA_EBOOT) ||
	    rec->revoked || rec->not_after < (uint64_t)time(NULL))
		return;
	snprintf(why, sizeof(why), "exit %d: %s", rc, mmta_last_err());
	rec->revoked = true;
	rec_reason(rec, why);
	if (rec_store(rec))
		mmta_err("node id %u: the revocation could not be recorded",
			 rec->id);
	else
		fprintf(stderr, "node id %u revoked (its credential, serial %" PRIu64 ", is valid until %" PRIu64 "): %s\n",
			rec->id, rec->serial, rec->not_after, rec->reason);
}

/*
 * verify() - appraise evidence and issue a credential: *@out (malloc'ed,
 * the caller frees it) is the credential file.  The node's record and the
 * node list are written before it is returned.  Return: an mmta_exit code.
 */
static int verify(const struct mmta_msg *ev, uint8_t **out, size_t *out_len)
{
	const struct mmta_field *f_id, *f_key, *f_want, *f_quote, *f_sig, *f_log;
	const struct mmta_field *p_nonce, *p_ak, *p_ek;
	struct mmta_msg pend = { 0 };
	struct mmta_ima_result ima;
	struct mmta_cred cred;
	struct node_rec rec;
	struct refs *refs = calloc(1, sizeof(*refs));
	uint8_t qual[MMTA_SHA256_LEN], name[64];
	size_t name_len;
	EVP_PKEY *ak_pub = NULL, *key = NULL;
	X509 *cert = NULL;
	uint32_t want = 0, held;
	bool has_rec = false, renewal, relaxed = false;
	char note[400];
	int rc, lock = -1;

	*out = NULL;
	if (!refs)
		return MMTA_ESYS;
	f_id = mmta_msg_get(ev, "id");
	f_key = mmta_msg_get(ev, "node_key");
	f_want = mmta_msg_get(ev, "want_node_id");
	f_quote = mmta_msg_get(ev, "quote");
	f_sig = mmta_msg_get(ev, "signature");
	f_log = mmta_msg_get(ev, "ima_log");
	rc = MMTA_EMSG;
	if (!f_id || !f_key || !f_quote || !f_sig || !f_log ||
	    f_key->len != MMTA_NODE_KEY_LEN || (f_want && f_want->len != 4)) {
		mmta_err("evidence: a field is missing or has a bad length");
		goto out;
	}
	if (f_want)
		want = f_want->data[0] | f_want->data[1] << 8 |
		       f_want->data[2] << 16 | (uint32_t)f_want->data[3] << 24;
	if (f_want && (want < MMTA_NODE_ID_MIN || want > MMTA_NODE_ID_MAX)) {
		mmta_err("evidence: node id %u out of range", want);
		goto out;
	}
	rc = load_refs(refs);
	if (!rc)
		rc = load_policy(&relaxed);
	if (!rc)
		rc = load_authority(&key, &cert);
	if (rc)
		goto out;
	lock = lock_state();
	if (lock < 0) {
		rc = MMTA_ESYS;
		goto out;
	}
	rc = take_challenge(f_id, &pend);
	if (rc)
		goto out;
	p_nonce = mmta_msg_get(&pend, "nonce");
	p_ak = mmta_msg_get(&pend, "ak_public");
	p_ek = mmta_msg_get(&pend, "ek_hash");
	if (!p_nonce || !p_ak || !p_ek || p_nonce->len != MMTA_NONCE_LEN ||
	    p_ek->len != MMTA_SHA256_LEN) {
		rc = MMTA_ESYS;
		goto out;
	}
	rc = mmta_ak_check(p_ak->data, p_ak->len, name, &name_len, &ak_pub);
	if (rc)
		goto out;
	refs->node_key = f_key->data;
	rc = mmta_ima_replay(f_log->data, f_log->len, visit_ref, refs, &ima);
	if (rc)
		goto out;
	mmta_qualifying_data(p_nonce->data, f_key->data, qual);
	rc = mmta_quote_verify(ak_pub, f_quote->data, f_quote->len,
			       f_sig->data, f_sig->len, qual, ima.pcr10);
	if (rc)
		goto out;
	/* the evidence is the TPM's: what does the authority know of it? */
	rc = find_node(p_ek->data, 0, &held, NULL);
	if (!rc && held)
		rc = rec_load(held, &rec, &has_rec);
	if (rc)
		goto out;
	if (has_rec && memcmp(rec.ek_hash, p_ek->data, MMTA_SHA256_LEN)) {
		mmta_err("%s: its EK hash is not that of node id %u in %s",
			 rec_path(held), held, spath("nodes"));
		rc = MMTA_ESYS;
		goto out;
	}
	if (has_rec && rec.revoked) {
		mmta_err("node id %u is revoked (%s): mmt-authority reinstate",
			 held, rec.reason);
		rc = MMTA_EREVOKED;
		goto out;
	}
	renewal = has_rec && rec.serial &&
		  !memcmp(rec.node_key, f_key->data, MMTA_NODE_KEY_LEN);
	if (refs->foreign_algo[0]) {
		mmta_err("IMA log: module %s was measured with %s, not sha256: reference values are SHA-256 only",
			 refs->foreign, refs->foreign_algo);
		rc = MMTA_EFOREIGN;
	} else if (refs->foreign[0]) {
		mmta_err("IMA log: module %s was measured with a hash that is not a reference value",
			 refs->foreign);
		rc = MMTA_EFOREIGN;
	} else if (!refs->found) {
		mmta_err("IMA log: no reference mmt.ko was measured");
		rc = MMTA_EMODULE;
	} else {
		rc = check_node_key(refs);
	}
	if (!rc)
		rc = check_boot(refs, relaxed, note, sizeof(note));
	if (!rc && renewal)
		rc = renewal_check(&rec, f_log->data, f_log->len, ima.count);
	if (rc) {
		if (has_rec)
			revoke_on_refusal(&rec, rc);
		goto out;
	}
	rc = assign_id(p_ek->data, want, &cred.node_id);
	if (!rc)
		rc = next_serial(&cred.serial);
	if (rc)
		goto out;
	cred.not_before = (uint64_t)time(NULL) - CLOCK_SKEW;
	cred.not_after = (uint64_t)time(NULL) + (uint64_t)validity;
	memcpy(cred.node_key, f_key->data, MMTA_NODE_KEY_LEN);
	memcpy(cred.module_hash, refs->found, MMTA_SHA256_LEN);
	memcpy(cred.ek_hash, p_ek->data, MMTA_SHA256_LEN);
	rc = mmta_cred_sign(&cred, key, cert, out, out_len);
	if (rc)
		goto out;
	/* the record of what this credential was issued on, before it leaves */
	memset(&rec, 0, sizeof(rec));
	rec.id = cred.node_id;
	memcpy(rec.ek_hash, cred.ek_hash, MMTA_SHA256_LEN);
	rec.serial = cred.serial;
	memcpy(rec.node_key, cred.node_key, MMTA_NODE_KEY_LEN);
	rec.not_after = cred.not_after;
	rec.ima_entries = ima.count;
	memcpy(rec.ima_pcr10, ima.pcr10, MMTA_SHA256_LEN);
	snprintf(rec.kernel_version, sizeof(rec.kernel_version), "%s",
		 refs->kver[0] ? refs->kver : "-");
	boot_aggregate(refs, rec.boot_aggregate, sizeof(rec.boot_aggregate));
	boot_state(refs, rec.boot, sizeof(rec.boot));
	rc = rec_store(&rec);
	if (rc)
		goto out;
	fprintf(stderr, "node id %u issued (serial %" PRIu64 ", %u IMA entries, %u of them modules, all reference values; the node key measured; %s; valid until %" PRIu64 "; kernel %s, boot_aggregate %s, %s)\n",
		cred.node_id, cred.serial, ima.entries, refs->modules,
		renewal ? "a renewal: the log only grew" : "a fresh attestation",
		cred.not_after, rec.kernel_version, rec.boot_aggregate,
		rec.boot);
	if (note[0])
		fprintf(stderr, "node id %u: %s\n", cred.node_id, note);
out:
	if (rc) {
		free(*out);
		*out = NULL;
	}
	if (lock >= 0)
		close(lock);
	free_refs(refs);
	EVP_PKEY_free(ak_pub);
	EVP_PKEY_free(key);
	X509_free(cert);
	mmta_msg_free(&pend);
	return rc;
}

static int cmd_verify(void)
{
	struct mmta_msg ev;
	uint8_t *out;
	size_t len;
	int rc;

	rc = mmta_msg_read(in_path, "evidence", evidence_fields, &ev);
	if (rc)
		return rc;
	rc = verify(&ev, &out, &len);
	if (!rc)
		rc = mmta_write_file(out_path, out, len);
	free(out);
	mmta_msg_free(&ev);
	return rc;
}

/* ---- policy ---- */

/*
 * cmd_policy() - with --boot strict|relaxed, write STATE/policy (whole,
 * durably, under the lock); then print the policy in force and how many
 * boot aggregates are accepted
 */
static int cmd_policy(void)
{
	struct refs *r = calloc(1, sizeof(*r));
	char buf[128];
	bool relaxed;
	int lock, rc = MMTA_OK;

	if (!r)
		return MMTA_ESYS;
	if (boot_arg) {
		lock = lock_state();
		if (lock < 0) {
			free_refs(r);
			return MMTA_ESYS;
		}
		snprintf(buf, sizeof(buf), POLICY_FIRST_LINE "boot %s\n",
			 boot_arg);
		rc = mmta_write_file(spath("policy"), buf, strlen(buf));
		close(lock);
	}
	if (!rc)
		rc = load_policy(&relaxed);
	if (!rc)
		rc = load_refs(r);
	if (!rc) {
		printf("boot %s\nboot_aggregates %zu\n",
		       relaxed ? "relaxed" : "strict", r->nboot);
		if (relaxed)
			fprintf(stderr, "boot policy relaxed: any lockdown level and module signatures not enforced are accepted (a test cluster: root on such a node can read its node key); each credential issued so says it\n");
	}
	free_refs(r);
	return rc;
}

/* ---- show-cred, nodes ---- */

static int cmd_show_cred(void)
{
	char key[2 * MMTA_NODE_KEY_LEN + 1], mod[2 * MMTA_SHA256_LEN + 1];
	char ek[sizeof(mod)];
	struct mmta_cred c;
	X509 *cert;
	uint8_t *data;
	size_t len;
	int rc;

	rc = load_authority(NULL, &cert);
	if (rc)
		return rc;
	rc = mmta_read_file(in_path, &data, &len);
	if (!rc)
		rc = mmta_cred_verify(data, len, cert, (uint64_t)time(NULL), &c);
	if (!rc) {
		mmta_hex_encode(c.node_key, sizeof(c.node_key), key);
		mmta_hex_encode(c.module_hash, sizeof(c.module_hash), mod);
		mmta_hex_encode(c.ek_hash, sizeof(c.ek_hash), ek);
		printf("node_id %u\nserial %" PRIu64 "\nnot_before %" PRIu64
		       "\nnot_after %" PRIu64 "\nnode_key %s\nmodule_hash %s\nek_hash %s\n",
		       c.node_id, c.serial, c.not_before, c.not_after, key, mod,
		       ek);
		free(data);
	}
	X509_free(cert);
	return rc;
}

/*
 * cmd_nodes() - one line a node of STATE/nodes: its id (first, as the
 * node list has it), a prefix of its EK hash, and from its record the
 * last serial, its not_after and whether it is revoked and why
 */
static int cmd_nodes(void)
{
	char line[256], ekhex[2 * MMTA_SHA256_LEN + 1];
	struct node_rec r;
	unsigned int nid;
	bool found;
	FILE *f;
	int rc = MMTA_OK;

	f = fopen(spath("nodes"), "r");
	if (!f) {
		mmta_err("%s: %s", spath("nodes"), strerror(errno));
		return MMTA_ESYS;
	}
	while (!rc && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%u %64s", &nid, ekhex) != 2) {
			mmta_err("%s: bad line", spath("nodes"));
			rc = MMTA_ESYS;
			break;
		}
		rc = rec_load(nid, &r, &found);
		if (rc)
			break;
		printf("%u ek %.16s", nid, ekhex);
		if (found && r.serial)
			printf(" serial %" PRIu64 " not_after %" PRIu64, r.serial,
			       r.not_after);
		else
			printf(" serial - not_after -");
		if (found && r.revoked)
			printf(" revoked: %s\n", r.reason);
		else
			printf(" ok\n");
	}
	fclose(f);
	return rc;
}

/*
 * cmd_revoke() - revoke (@on) or reinstate node --node: its record says so
 * (a record is made for a node that has none).  A revoked node's evidence
 * is refused (23); its peers learn of it when its credential expires.
 */
static int cmd_revoke(bool on)
{
	const char *cmd = on ? "revoke" : "reinstate";
	uint8_t ek[MMTA_SHA256_LEN];
	struct node_rec r;
	uint32_t held;
	bool found;
	int rc, lock;

	lock = lock_state();
	if (lock < 0)
		return MMTA_ESYS;
	rc = find_node(NULL, node_arg, &held, ek);
	if (!rc && !held) {
		mmta_err("%s: node id %ld is not in %s (mmt-authority nodes)",
			 cmd, node_arg, spath("nodes"));
		rc = MMTA_EUSAGE;
	}
	if (!rc)
		rc = rec_load(held, &r, &found);
	if (rc)
		goto out;
	if (!found) {
		r.id = held;
		memcpy(r.ek_hash, ek, sizeof(ek));
	}
	if (!on && !r.revoked) {
		fprintf(stderr, "node id %u is not revoked\n", held);
		goto out;
	}
	r.revoked = on;
	rec_reason(&r, on ? (reason_arg ? reason_arg : "revoked by hand") : "");
	rc = rec_store(&r);
	if (!rc && on)
		fprintf(stderr, "node id %u revoked: %s; its credential (serial %" PRIu64 ") stays valid until %" PRIu64 "\n",
			held, r.reason, r.serial, r.not_after);
	else if (!rc)
		fprintf(stderr, "node id %u reinstated\n", held);
out:
	close(lock);
	return rc;
}

/* ---- serve: the exchange on stdin and stdout ---- */

/* the node must send its evidence within the challenge's lifetime */
static void serve_timeout(int sig)
{
	static const char msg[] = "serve: no evidence within the challenge's lifetime\n";

	(void)sig;
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(MMTA_ESYS);
	_exit(MMTA_ESYS);
}

/* serve_refuse() - send a refusal carrying @rc and the last error */
static int serve_refuse(int rc)
{
	struct mmta_msg m;

	mmta_refusal(&m, rc, mmta_last_err());
	mmta_stream_send(stdout, &m);
	mmta_msg_free(&m);
	return rc;
}

/*
 * cmd_serve() - one node's whole exchange on stdin and stdout, messages
 * framed by an empty line (docs/ATTESTATION.md, "Protocol"): read the
 * hello, write the challenge, read the evidence, write the credential
 * (message "credential", field "credential": the file verify writes); a
 * refusal (its exit code and reason) takes the place of the challenge or
 * the credential.  Any byte pipe carries it: socat, ssh, a socket unit
 * with Accept=yes.  The exit code is that of the exchange.
 */
static int cmd_serve(void)
{
	struct mmta_msg hello, chal, ev, cm = { .type = "credential" };
	uint8_t *cred = NULL;
	size_t len;
	int rc;

	signal(SIGALRM, serve_timeout);
	signal(SIGPIPE, SIG_IGN);
	alarm(CHALLENGE_TTL);
	rc = mmta_stream_recv(stdin, "serve: hello", "hello", hello_fields,
			      &hello);
	if (rc)		/* a malformed hello is refused; a closed stream ends */
		return rc == MMTA_ESYS ? rc : serve_refuse(rc);
	rc = challenge(&hello, &chal);
	mmta_msg_free(&hello);
	if (rc)
		return serve_refuse(rc);
	rc = mmta_stream_send(stdout, &chal);
	mmta_msg_free(&chal);
	if (rc)
		return rc;
	rc = mmta_stream_recv(stdin, "serve: evidence", "evidence",
			      evidence_fields, &ev);
	if (rc)
		return rc == MMTA_ESYS ? rc : serve_refuse(rc);
	alarm(0);	/* the time limit is the peer's, not the verifier's */
	rc = verify(&ev, &cred, &len);
	mmta_msg_free(&ev);
	if (rc)
		return serve_refuse(rc);
	mmta_msg_add(&cm, "credential", cred, len);
	free(cred);
	rc = mmta_stream_send(stdout, &cm);
	mmta_msg_free(&cm);
	return rc;
}

static void usage(FILE *f)
{
	fputs("usage: mmt-authority init --state DIR --ek-ca FILE\n"
	      "       mmt-authority reference --state DIR --add FILE [--name NAME]\n"
	      "       mmt-authority reference --state DIR --add-module FILE|DIR\n"
	      "       mmt-authority reference --state DIR --add-boot HEX [--name NAME]\n"
	      "       mmt-authority policy --state DIR [--boot strict|relaxed]\n"
	      "       mmt-authority challenge --state DIR --in HELLO --out CHALLENGE\n"
	      "       mmt-authority verify --state DIR --in EVIDENCE --out CREDENTIAL [--validity SECONDS]\n"
	      "       mmt-authority serve --state DIR [--validity SECONDS]\n"
	      "       mmt-authority show-cred --state DIR --in CREDENTIAL\n"
	      "       mmt-authority nodes --state DIR\n"
	      "       mmt-authority revoke --state DIR --node ID [--reason TEXT]\n"
	      "       mmt-authority reinstate --state DIR --node ID\n"
	      "see mmt-authority(8)\n", f);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "state", required_argument, NULL, 's' },
		{ "in", required_argument, NULL, 'i' },
		{ "out", required_argument, NULL, 'o' },
		{ "ek-ca", required_argument, NULL, 'c' },
		{ "add", required_argument, NULL, 'a' },
		{ "add-module", required_argument, NULL, 'm' },
		{ "add-boot", required_argument, NULL, 'B' },
		{ "boot", required_argument, NULL, 'b' },
		{ "name", required_argument, NULL, 'n' },
		{ "validity", required_argument, NULL, 'v' },
		{ "node", required_argument, NULL, 'N' },
		{ "reason", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *cmd;
	char *end;
	int c;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? MMTA_EUSAGE : MMTA_OK;
	}
	cmd = argv[1];
	optind = 2;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 's': state_dir = optarg; break;
		case 'i': in_path = optarg; break;
		case 'o': out_path = optarg; break;
		case 'c': ek_ca_path = optarg; break;
		case 'a': add_path = optarg; break;
		case 'm': add_module_path = optarg; break;
		case 'B': add_boot_hex = optarg; break;
		case 'b':
			boot_arg = optarg;
			if (strcmp(boot_arg, "strict") &&
			    strcmp(boot_arg, "relaxed")) {
				mmta_err("--boot: strict or relaxed");
				return MMTA_EUSAGE;
			}
			break;
		case 'n': ref_name = optarg; break;
		case 'v':
			validity = strtol(optarg, &end, 10);
			if (*end || validity <= 0) {
				mmta_err("--validity: a positive number of seconds");
				return MMTA_EUSAGE;
			}
			break;
		case 'N':
			node_arg = strtol(optarg, &end, 10);
			if (*end || node_arg < MMTA_NODE_ID_MIN ||
			    node_arg > MMTA_NODE_ID_MAX) {
				mmta_err("--node: a node id, %d..%d",
					 MMTA_NODE_ID_MIN, MMTA_NODE_ID_MAX);
				return MMTA_EUSAGE;
			}
			break;
		case 'r': reason_arg = optarg; break;
		case 'h': usage(stdout); return MMTA_OK;
		default: usage(stderr); return MMTA_EUSAGE;
		}
	}
	if (optind != argc || !state_dir) {
		usage(stderr);
		return MMTA_EUSAGE;
	}
	if (!strcmp(cmd, "revoke") || !strcmp(cmd, "reinstate")) {
		if (!node_arg) {
			mmta_err("%s: --node ID is required", cmd);
			return MMTA_EUSAGE;
		}
		if (reason_arg && !strcmp(cmd, "reinstate")) {
			mmta_err("reinstate: --reason is for revoke");
			return MMTA_EUSAGE;
		}
		return cmd_revoke(!strcmp(cmd, "revoke"));
	}
	if (node_arg || reason_arg) {
		mmta_err("%s: --node and --reason are for revoke and reinstate",
			 cmd);
		return MMTA_EUSAGE;
	}
	if (boot_arg && strcmp(cmd, "policy")) {
		mmta_err("%s: --boot is for policy", cmd);
		return MMTA_EUSAGE;
	}
	if (add_boot_hex && strcmp(cmd, "reference")) {
		mmta_err("%s: --add-boot is for reference", cmd);
		return MMTA_EUSAGE;
	}
	if (!strcmp(cmd, "serve")) {
		if (in_path || out_path) {
			mmta_err("serve: the messages are on stdin and stdout, no --in or --out");
			return MMTA_EUSAGE;
		}
		return cmd_serve();
	}
	if (!strcmp(cmd, "init"))
		return cmd_init();
	if (!strcmp(cmd, "reference"))
		return cmd_reference();
	if (!strcmp(cmd, "nodes"))
		return cmd_nodes();
	if (!strcmp(cmd, "policy"))
		return cmd_policy();
	if (!in_path) {
		mmta_err("%s: --in is required", cmd);
		return MMTA_EUSAGE;
	}
	if (!strcmp(cmd, "show-cred"))
		return cmd_show_cred();
	if (!out_path) {
		mmta_err("%s: --out is required", cmd);
		return MMTA_EUSAGE;
	}
	if (!strcmp(cmd, "challenge"))
		return cmd_challenge();
	if (!strcmp(cmd, "verify"))
		return cmd_verify();
	usage(stderr);
	return MMTA_EUSAGE;
}
