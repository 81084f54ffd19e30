// SPDX-License-Identifier: GPL-2.0
/*
 * mmta_ima.c - replay an IMA binary measurement list into PCR 10
 *
 * The format is the kernel's binary_runtime_measurements
 * (security/integrity/ima/ima_fs.c, ima_measurements_show(); native byte
 * order, which is little-endian on x86 unless ima_canonical_fmt): per
 * entry the PCR (u32), the SHA-1 template digest (20 bytes), the template
 * name (u32 length, bytes), the template data (u32 length, bytes).  The
 * SHA-256 bank of PCR 10 is extended with SHA-256 of the template data
 * (ima_calc_field_array_hash(): each field's u32 length, then its bytes,
 * which is how the data is laid out), or with 32 bytes of 0xff for a
 * violation, whose logged digest is zero (ima_add_violation()).
 *
 * The templates accepted and their fields (ima_template.c,
 * builtin_templates[]): ima-ng "d-ng|n-ng", ima-sig "d-ng|n-ng|sig"
 * (Debian's CONFIG_IMA_DEFAULT_TEMPLATE), ima-buf "d-ng|n-ng|buf" (what
 * process_buffer_measurement() records critical data and keys with when
 * the policy rule names no template), ima-modsig
 * "d-ng|n-ng|sig|d-modsig|modsig" (a rule's template=ima-modsig; the last
 * two are empty for a file without an appended signature or a kernel
 * without CONFIG_IMA_APPRAISE_MODSIG).  Field formats (ima_template_lib.c):
 * d-ng "<algo>:\0<digest>" with the algorithm's hash_algo_name[], n-ng
 * the file path or event name with its NUL, sig, buf, d-modsig, modsig
 * bytes (d-modsig like d-ng when present).
 */
#include <limits.h>
#include <string.h>

#include <openssl/sha.h>

#include "mmta.h"

#define IMA_SHA1_LEN		20
#define IMA_NAME_MAX		255	/* IMA_TEMPLATE_NAME_LEN_MAX */
#define IMA_DATA_MAX		(1u << 16)

static uint32_t get_le32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static const struct ima_template {
	const char *name;
	int nfields;
	int buf;		/* index of the buf field, or -1 */
} templates[] = {
	{ "ima-ng", 2, -1 },
	{ "ima-sig", 3, -1 },
	{ "ima-buf", 3, 2 },
	{ "ima-modsig", 5, -1 },
};

#define IMA_FIELDS_MAX		5

static const struct ima_template *find_template(const uint8_t *name,
						uint32_t len)
{
	size_t i;

	for (i = 0; i < sizeof(templates) / sizeof(templates[0]); i++)
		if (strlen(templates[i].name) == len &&
		    !memcmp(templates[i].name, name, len))
			return &templates[i];
	return NULL;
}

/*
 * parse_dng() - split a d-ng field "<algo>:\0<digest>" into @algo (NUL
 * terminated) and the digest; false if it does not parse.  A sha256
 * digest must be 32 bytes, any other 1..MMTA_IMA_DIGEST_MAX.
 */
static bool parse_dng(const uint8_t *f, uint32_t len,
		      char algo[MMTA_IMA_ALGO_MAX + 1], const uint8_t **digest,
		      size_t *digest_len)
{
	uint32_t i;

	for (i = 0; i < len && i <= MMTA_IMA_ALGO_MAX && f[i] != ':'; i++)
		if (!((f[i] >= 'a' && f[i] <= 'z') ||
		      (f[i] >= '0' && f[i] <= '9') || f[i] == '-' ||
		      f[i] == '_'))
			return false;
	if (!i || i > MMTA_IMA_ALGO_MAX || len - i < 2 || f[i] != ':' ||
	    f[i + 1] != '\0')
		return false;
	memcpy(algo, f, i);
	algo[i] = '\0';
	*digest = f + i + 2;
	*digest_len = len - i - 2;
	if (!*digest_len || *digest_len > MMTA_IMA_DIGEST_MAX)
		return false;
	return strcmp(algo, "sha256") || *digest_len == MMTA_SHA256_LEN;
}

static int replay(const uint8_t *log, size_t len, unsigned int max,
		  mmta_ima_visit visit, void *arg, struct mmta_ima_result *res);

/**
 * mmta_ima_replay() - check and replay an IMA log
 * @log: the binary measurement list
 * @len: its length in bytes
 * @visit: called for each PCR 10 entry that is not a violation, whatever
 *	its digest algorithm (struct mmta_ima_entry), or NULL
 * @arg: passed to @visit
 * @res: (out) the replayed PCR 10 and the entry counts (@res->count:
 *	entries of every PCR, the log's length in entries)
 *
 * Every entry's logged SHA-1 digest must be SHA-1 of its template data (or
 * zero: a violation), so an edited entry is caught even before the quote
 * is compared.  Errors name an entry by its position in the log, from 1.
 *
 * Return: MMTA_OK; MMTA_EMSG if the log is truncated, has another
 * template than ima-ng, ima-sig, ima-buf or ima-modsig, or a field that
 * does not parse; MMTA_EPCR if an entry's SHA-1 digest does not match its
 * data; or what @visit returned.
 */
int mmta_ima_replay(const uint8_t *log, size_t len, mmta_ima_visit visit,
		    void *arg, struct mmta_ima_result *res)
{
	return replay(log, len, UINT_MAX, visit, arg, res);
}

/**
 * mmta_ima_replay_prefix() - PCR 10 replayed over the first entries only
 * @log: the binary measurement list
 * @len: its length in bytes
 * @n: how many entries, counting those of every PCR (as
 *	&struct mmta_ima_result.count does)
 * @pcr10: (out) the SHA-256 PCR 10 after those @n entries
 *
 * A renewal's log must start with the entries the node's last credential
 * was issued on: replayed over the first @n, it gives the PCR 10 recorded
 * then.  The caller has replayed (and so checked) the whole log before.
 *
 * Return: MMTA_OK; MMTA_EMSG if the log has fewer than @n entries (no
 * message), or what mmta_ima_replay() returns for a bad log.
 */
int mmta_ima_replay_prefix(const uint8_t *log, size_t len, unsigned int n,
			   uint8_t pcr10[MMTA_SHA256_LEN])
{
	struct mmta_ima_result res;
	int rc = replay(log, len, n, NULL, NULL, &res);

	if (rc)
		return rc;
	if (res.count < n)
		return MMTA_EMSG;
	memcpy(pcr10, res.pcr10, MMTA_SHA256_LEN);
	return MMTA_OK;
}

/*
 * replay() - mmta_ima_replay() over the first @max entries of the log
 * (those of every PCR counted), or all of them: @res->count says how many
 * it read
 */
static int replay(const uint8_t *log, size_t len, unsigned int max,
		  mmta_ima_visit visit, void *arg, struct mmta_ima_result *res)
{
	static const uint8_t zero[IMA_SHA1_LEN];
	uint8_t ext[MMTA_SHA256_LEN], cat[2 * MMTA_SHA256_LEN];
	uint8_t sha1[IMA_SHA1_LEN];
	char algo[MMTA_IMA_ALGO_MAX + 1];
	unsigned int index;
	size_t pos = 0;
	int rc;

	memset(res, 0, sizeof(*res));
	for (index = 0; pos < len && index < max; index++) {
		const uint8_t *e = log + pos, *name, *data, *f[IMA_FIELDS_MAX];
		uint32_t pcr, nlen, dlen, flen[IMA_FIELDS_MAX], fpos;
		const struct ima_template *t;
		struct mmta_ima_entry ent;
		bool violation;
		int i;

		if (len - pos < 4 + IMA_SHA1_LEN + 4)
			goto trunc;
		pcr = get_le32(e);
		nlen = get_le32(e + 4 + IMA_SHA1_LEN);
		if (nlen > IMA_NAME_MAX ||
		    len - pos < 4 + IMA_SHA1_LEN + 4 + nlen + 4)
			goto trunc;
		name = e + 4 + IMA_SHA1_LEN + 4;
		dlen = get_le32(name + nlen);
		data = name + nlen + 4;
		if (dlen > IMA_DATA_MAX ||
		    len - pos - (size_t)(data - e) < dlen)
			goto trunc;
		pos += (size_t)(data - e) + dlen;
		res->count = index + 1;
		t = find_template(name, nlen);
		if (!t) {
			mmta_err("IMA log: entry %u: template '%.*s' is none of ima-ng, ima-sig, ima-buf, ima-modsig",
				 index + 1, (int)nlen, name);
			return MMTA_EMSG;
		}
		violation = !memcmp(e + 4, zero, IMA_SHA1_LEN);
		SHA1(data, dlen, sha1);
		if (!violation && memcmp(sha1, e + 4, IMA_SHA1_LEN)) {
			mmta_err("IMA log: entry %u: template digest does not match its data",
				 index + 1);
			return MMTA_EPCR;
		}
		if (pcr != MMTA_IMA_PCR)
			continue;
		/* fields: u32 length, bytes */
		for (i = 0, fpos = 0; i < t->nfields; i++) {
			if (dlen - fpos < 4)
				goto field;
			flen[i] = get_le32(data + fpos);
			if (flen[i] > dlen - fpos - 4)
				goto field;
			f[i] = data + fpos + 4;
			fpos += 4 + flen[i];
		}
		/* n-ng: one NUL, at its end */
		if (fpos != dlen || !flen[1] ||
		    memchr(f[1], '\0', flen[1]) != f[1] + flen[1] - 1)
			goto field;
		memset(&ent, 0, sizeof(ent));
		if (!parse_dng(f[0], flen[0], algo, &ent.digest,
			       &ent.digest_len))
			goto field;
		if (violation) {
			memset(ext, 0xff, sizeof(ext));
			res->violations++;
		} else {
			SHA256(data, dlen, ext);
			if (visit) {
				ent.index = index;
				ent.template = t->name;
				ent.algo = algo;
				ent.name = (const char *)f[1];
				if (t->buf >= 0) {
					ent.buf = f[t->buf];
					ent.buf_len = flen[t->buf];
				}
				rc = visit(arg, &ent);
				if (rc)
					return rc;
			}
		}
		memcpy(cat, res->pcr10, MMTA_SHA256_LEN);
		memcpy(cat + MMTA_SHA256_LEN, ext, MMTA_SHA256_LEN);
		SHA256(cat, sizeof(cat), res->pcr10);
		res->entries++;
	}
	return MMTA_OK;
trunc:
	mmta_err("IMA log: truncated at byte %zu", pos);
	return MMTA_EMSG;
field:
	mmta_err("IMA log: entry %u: template fields do not parse", index + 1);
	return MMTA_EMSG;
}
