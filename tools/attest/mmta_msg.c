// SPDX-License-Identifier: GPL-2.0
/*
 * mmta_msg.c - protocol messages of the attestation (docs/ATTESTATION.md)
 *
 * Text, one field a line, so that a message can be carried over any
 * channel (a file, ssh, a socket) and read by a person.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include "mmta.h"

void mmta_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void mmta_sha256(const void *data, size_t len, uint8_t out[MMTA_SHA256_LEN])
{
	SHA256(data, len, out);
}

/**
 * mmta_read_file() - read a whole file into a new buffer
 * @path: the file, "-" for stdin
 * @data: (out) malloc'ed contents, the caller frees it
 * @len: (out) its length in bytes
 *
 * Return: MMTA_OK, or MMTA_ESYS (message on stderr) if it cannot be read or
 * is larger than MMTA_MSG_MAX_BYTES.
 */
int mmta_read_file(const char *path, uint8_t **data, size_t *len)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	size_t cap = 4096, n = 0, r;
	uint8_t *buf, *nb;

	if (!f) {
		mmta_err("%s: %s", path, strerror(errno));
		return MMTA_ESYS;
	}
	buf = malloc(cap);
	while (buf) {
		r = fread(buf + n, 1, cap - n, f);
		n += r;
		if (n < cap)
			break;
		if (cap >= MMTA_MSG_MAX_BYTES) {
			mmta_err("%s: larger than %u bytes", path,
				 MMTA_MSG_MAX_BYTES);
			free(buf);
			buf = NULL;
			break;
		}
		cap *= 2;
		nb = realloc(buf, cap);
		if (!nb) {
			free(buf);
			buf = NULL;
		}
		buf = nb;
	}
	if (f != stdin)
		fclose(f);
	if (!buf)
		return MMTA_ESYS;
	*data = buf;
	*len = n;
	return MMTA_OK;
}

/**
 * mmta_write_file() - write a file whole and durably: a temporary file in
 * the same directory, fsync, rename over @path
 * @path: the file, "-" for stdout
 * @data: bytes to write
 * @len: their number
 *
 * A reader sees the old or the new contents, never a part; after a crash
 * the state files of the authority are one or the other.
 *
 * Return: MMTA_OK, or MMTA_ESYS (message on stderr).
 */
int mmta_write_file(const char *path, const void *data, size_t len)
{
	char tmp[4096];
	int fd;

	if (!strcmp(path, "-")) {
		if (fwrite(data, 1, len, stdout) != len || fflush(stdout)) {
			mmta_err("stdout: %s", strerror(errno));
			return MMTA_ESYS;
		}
		return MMTA_OK;
	}
	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >=
	    (int)sizeof(tmp)) {
		mmta_err("%s: path too long", path);
		return MMTA_ESYS;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		mmta_err("%s: %s", tmp, strerror(errno));
		return MMTA_ESYS;
	}
	if (write(fd, data, len) != (ssize_t)len || fsync(fd) ||
	    close(fd) || rename(tmp, path)) {
		mmta_err("%s: %s", path, strerror(errno));
		unlink(tmp);
		return MMTA_ESYS;
	}
	return MMTA_OK;
}

/**
 * mmta_hex_decode() - decode @hexlen hex digits into @hexlen / 2 bytes
 *
 * Return: 0, or -1 if @hexlen is odd or a character is not a hex digit.
 */
int mmta_hex_decode(const char *hex, size_t hexlen, uint8_t *out)
{
	size_t i;
	int hi, lo;

	if (hexlen % 2)
		return -1;
	for (i = 0; i < hexlen / 2; i++) {
		hi = OPENSSL_hexchar2int((unsigned char)hex[2 * i]);
		lo = OPENSSL_hexchar2int((unsigned char)hex[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -1;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

/* mmta_hex_encode() - @len bytes into 2 * @len hex digits and a NUL */
void mmta_hex_encode(const uint8_t *in, size_t len, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < len; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 15];
	}
	out[2 * len] = '\0';
}

/* mmta_msg_add() - append a copy of a field; aborts on out of memory */
void mmta_msg_add(struct mmta_msg *m, const char *name, const void *data,
		  size_t len)
{
	struct mmta_field *f;

	if (m->nfields >= MMTA_MSG_MAX_FIELDS)
		abort();
	f = &m->f[m->nfields++];
	f->name = strdup(name);
	f->data = malloc(len ? len : 1);
	if (!f->name || !f->data)
		abort();
	memcpy(f->data, data, len);
	f->len = len;
}

void mmta_msg_free(struct mmta_msg *m)
{
	int i;

	for (i = 0; i < m->nfields; i++) {
		free((void *)m->f[i].name);
		free(m->f[i].data);
	}
	m->nfields = 0;
}

const struct mmta_field *mmta_msg_get(const struct mmta_msg *m,
				      const char *name)
{
	int i;

	for (i = 0; i < m->nfields; i++)
		if (!strcmp(m->f[i].name, name))
			return &m->f[i];
	return NULL;
}

/**
 * mmta_msg_write() - write a message (first line, then a line a field)
 * @path: the file, "-" for stdout
 * @m: the message
 *
 * Return: MMTA_OK or MMTA_ESYS.
 */
int mmta_msg_write(const char *path, const struct mmta_msg *m)
{
	size_t cap = 64, pos, i;
	char *buf, *p;
	int rc;

	for (i = 0; i < (size_t)m->nfields; i++)
		cap += strlen(m->f[i].name) + 2 * m->f[i].len + 2;
	buf = malloc(cap);
	if (!buf)
		return MMTA_ESYS;
	pos = (size_t)sprintf(buf, "mmt-attest %s 1\n", m->type);
	for (i = 0; i < (size_t)m->nfields; i++) {
		p = buf + pos;
		pos += (size_t)sprintf(p, "%s ", m->f[i].name);
		mmta_hex_encode(m->f[i].data, m->f[i].len, buf + pos);
		pos += 2 * m->f[i].len;
		buf[pos++] = '\n';
	}
	rc = mmta_write_file(path, buf, pos);
	free(buf);
	return rc;
}

/**
 * mmta_msg_read() - read and parse a message of one type
 * @path: the file, "-" for stdin
 * @type: the type the first line must name ("hello", "challenge", ...)
 * @allowed: NULL-terminated list of the field names this type may carry
 * @m: (out) the fields; free with mmta_msg_free()
 *
 * Refuses a wrong first line, an unknown or repeated field, a field
 * without a space, and hex that does not decode.
 *
 * Return: MMTA_OK, MMTA_ESYS (cannot read) or MMTA_EMSG (message on
 * stderr); on error @m holds no fields.
 */
int mmta_msg_read(const char *path, const char *type,
		  const char *const *allowed, struct mmta_msg *m)
{
	char first[64];
	uint8_t *buf, *bin;
	size_t len, pos, end, sp, i;
	int rc;

	memset(m, 0, sizeof(*m));
	rc = mmta_read_file(path, &buf, &len);
	if (rc)
		return rc;
	snprintf(first, sizeof(first), "mmt-attest %s 1\n", type);
	rc = MMTA_EMSG;
	if (len < strlen(first) || memcmp(buf, first, strlen(first))) {
		mmta_err("%s: not a '%s' message of version 1", path, type);
		goto out;
	}
	snprintf(m->type, sizeof(m->type), "%s", type);
	for (pos = strlen(first); pos < len; pos = end + 1) {
		char name[32];
		bool ok = false;

		for (end = pos; end < len && buf[end] != '\n'; end++)
			;
		if (end == len) {
			mmta_err("%s: last line has no newline", path);
			goto out;
		}
		for (sp = pos; sp < end && buf[sp] != ' '; sp++)
			;
		if (sp == end || sp - pos >= sizeof(name)) {
			mmta_err("%s: malformed line", path);
			goto out;
		}
		memcpy(name, buf + pos, sp - pos);
		name[sp - pos] = '\0';
		for (i = 0; allowed[i]; i++)
			ok |= !strcmp(allowed[i], name);
		if (!ok || mmta_msg_get(m, name) ||
		    m->nfields >= MMTA_MSG_MAX_FIELDS) {
			mmta_err("%s: unknown or repeated field '%s'", path,
				 name);
			goto out;
		}
		bin = malloc((end - sp) / 2 + 1);
		if (!bin)
			abort();
		if (mmta_hex_decode((char *)buf + sp + 1, end - sp - 1, bin)) {
			free(bin);
			mmta_err("%s: field '%s' is not hex", path, name);
			goto out;
		}
		mmta_msg_add(m, name, bin, (end - sp - 1) / 2);
		free(bin);
	}
	rc = MMTA_OK;
out:
	if (rc)
		mmta_msg_free(m);
	free(buf);
	return rc;
}
