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
 * violation, whose logged digest is zero (ima_add_violation()).  The
 * templates ima-ng and ima-sig (Debian's CONFIG_IMA_DEFAULT_TEMPLATE) are
 * accepted: field 1 "<algo>:\0<file digest>", field 2 the file name with
 * its NUL, for ima-sig field 3 the file's signature, often empty
 * (ima_template_lib.c).
 */
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

/**
 * mmta_ima_replay() - check and replay an IMA log
 * @log: the binary measurement list
 * @len: its length in bytes
 * @visit: called for each PCR 10 entry with a SHA-256 file digest (not
 *	for violations), or NULL
 * @arg: passed to @visit
 * @res: (out) the replayed PCR 10 and the entry counts
 *
 * Every entry's logged SHA-1 digest must be SHA-1 of its template data (or
 * zero: a violation), so an edited entry is caught even before the quote
 * is compared.
 *
 * Return: MMTA_OK; MMTA_EMSG if the log is truncated, has another
 * template than ima-ng or ima-sig or a field that does not parse; MMTA_EPCR if an
 * entry's SHA-1 digest does not match its data; or what @visit returned.
 */
int mmta_ima_replay(const uint8_t *log, size_t len, mmta_ima_visit visit,
		    void *arg, struct mmta_ima_result *res)
{
	static const uint8_t zero[IMA_SHA1_LEN];
	uint8_t ext[MMTA_SHA256_LEN], cat[2 * MMTA_SHA256_LEN];
	uint8_t sha1[IMA_SHA1_LEN];
	size_t pos = 0;
	int rc;

	memset(res, 0, sizeof(*res));
	while (pos < len) {
		const uint8_t *e = log + pos, *name, *data, *f[3];
		uint32_t pcr, nlen, dlen, flen[3], fpos;
		int i, nfields;
		bool violation;

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
		if (nlen == 6 && !memcmp(name, "ima-ng", 6)) {
			nfields = 2;
		} else if (nlen == 7 && !memcmp(name, "ima-sig", 7)) {
			nfields = 3;
		} else {
			mmta_err("IMA log: template '%.*s' is neither ima-ng nor ima-sig",
				 (int)nlen, name);
			return MMTA_EMSG;
		}
		violation = !memcmp(e + 4, zero, IMA_SHA1_LEN);
		SHA1(data, dlen, sha1);
		if (!violation && memcmp(sha1, e + 4, IMA_SHA1_LEN)) {
			mmta_err("IMA log: entry %u: template digest does not match its data",
				 res->entries);
			return MMTA_EPCR;
		}
		if (pcr != MMTA_IMA_PCR)
			continue;
		/* fields: u32 length, bytes; d-ng, n-ng (NUL-terminated), sig */
		for (i = 0, fpos = 0; i < nfields; i++) {
			if (dlen - fpos < 4)
				goto field;
			flen[i] = get_le32(data + fpos);
			if (flen[i] > dlen - fpos - 4)
				goto field;
			f[i] = data + fpos + 4;
			fpos += 4 + flen[i];
		}
		if (fpos != dlen || !flen[1] || f[1][flen[1] - 1] != '\0')
			goto field;
		if (violation) {
			memset(ext, 0xff, sizeof(ext));
			res->violations++;
		} else {
			SHA256(data, dlen, ext);
			if (visit && flen[0] == 8 + MMTA_SHA256_LEN &&
			    !memcmp(f[0], "sha256:", 8)) {
				rc = visit(arg, f[0] + 8, (const char *)f[1]);
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
	mmta_err("IMA log: entry %u: template fields do not parse", res->entries);
	return MMTA_EMSG;
}
