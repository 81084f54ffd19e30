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

static char last_err[512];

/*
 * mmta_err() - print an error line on stderr; the last one is kept for a
 * refusal sent to the peer (mmta_last_err())
 */
void mmta_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_err, sizeof(last_err), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s\n", last_err);
}

/* mmta_last_err() - the last line mmta_err() printed, "" if none */
const char *mmta_last_err(void)
{
	return last_err;
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
 * mmta_msg_format() - a message as text (first line, then a line a field)
 * @m: the message
 * @out: (out) malloc'ed text, the caller frees it
 * @len: (out) its length
 *
 * Return: MMTA_OK or MMTA_ESYS.
 */
int mmta_msg_format(const struct mmta_msg *m, char **out, size_t *len)
{
	size_t cap = 64, pos, i;
	char *buf, *p;

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
	*out = buf;
	*len = pos;
	return MMTA_OK;
}

/**
 * mmta_msg_write() - write a message to a file (mmta_msg_format())
 * @path: the file, "-" for stdout
 * @m: the message
 *
 * Return: MMTA_OK or MMTA_ESYS.
 */
int mmta_msg_write(const char *path, const struct mmta_msg *m)
{
	char *buf;
	size_t len;
	int rc;

	if (mmta_msg_format(m, &buf, &len))
		return MMTA_ESYS;
	rc = mmta_write_file(path, buf, len);
	free(buf);
	return rc;
}

/**
 * mmta_stream_send() - send a message on a byte stream, then the empty
 * line that ends it, and flush
 * @f: the stream
 * @m: the message
 *
 * Return: MMTA_OK, or MMTA_ESYS (message on stderr: the peer is gone).
 */
int mmta_stream_send(FILE *f, const struct mmta_msg *m)
{
	char *buf;
	size_t len;
	int rc = MMTA_OK;

	if (mmta_msg_format(m, &buf, &len))
		return MMTA_ESYS;
	if (fwrite(buf, 1, len, f) != len || fputc('\n', f) == EOF ||
	    fflush(f)) {
		mmta_err("sending the %s: %s", m->type, strerror(errno));
		rc = MMTA_ESYS;
	}
	free(buf);
	return rc;
}

/**
 * mmta_refusal() - fill @m as a refusal: the exit code of the check that
 * failed and a one-line reason (control characters become spaces)
 * @m: an empty message
 * @code: an mmta_exit code
 * @reason: the reason, usually mmta_last_err()
 */
void mmta_refusal(struct mmta_msg *m, int code, const char *reason)
{
	uint8_t le[4] = { (uint8_t)code, (uint8_t)(code >> 8),
			  (uint8_t)(code >> 16), (uint8_t)(code >> 24) };
	char line[512];
	size_t i;

	snprintf(line, sizeof(line), "%s", reason);
	for (i = 0; line[i]; i++)
		if ((unsigned char)line[i] < ' ' || line[i] == 0x7f)
			line[i] = ' ';
	memset(m, 0, sizeof(*m));
	snprintf(m->type, sizeof(m->type), "%s", MMTA_MSG_REFUSED);
	mmta_msg_add(m, "code", le, sizeof(le));
	mmta_msg_add(m, "reason", line, strlen(line));
}

/*
 * refused() - a received refusal: print its reason and return its code
 * (an exit code of the peer's, 1..255; a malformed refusal is MMTA_EMSG)
 */
static int refused(const uint8_t *buf, size_t len, const char *what)
{
	static const char *const fields[] = { "code", "reason", NULL };
	const struct mmta_field *code, *reason;
	struct mmta_msg m;
	uint32_t c;
	int rc;

	rc = mmta_msg_parse(buf, len, what, MMTA_MSG_REFUSED, fields, &m);
	if (rc)
		return rc;
	code = mmta_msg_get(&m, "code");
	reason = mmta_msg_get(&m, "reason");
	c = code && code->len == 4 ? code->data[0] | code->data[1] << 8 |
		code->data[2] << 16 | (uint32_t)code->data[3] << 24 : 0;
	if (!c || c > 255) {
		mmta_err("%s: a refusal without a valid exit code", what);
		rc = MMTA_EMSG;
	} else {
		mmta_err("%s: refused by the authority, exit %u: %.*s", what, c,
			 reason ? (int)reason->len : 0,
			 reason ? (char *)reason->data : "");
		rc = (int)c;
	}
	mmta_msg_free(&m);
	return rc;
}

/**
 * mmta_stream_recv() - read one message of a type from a byte stream: its
 * lines up to the empty line that ends it
 * @f: the stream
 * @what: names the message in errors ("challenge")
 * @type: the type expected
 * @allowed: its fields, as for mmta_msg_read()
 * @m: (out) the fields; free with mmta_msg_free()
 *
 * A refusal in its place is reported (its reason on stderr) and its code
 * returned.
 *
 * Return: MMTA_OK; MMTA_ESYS if the stream ends or fails first; MMTA_EMSG
 * for a malformed message or one larger than MMTA_MSG_MAX_BYTES; or the
 * exit code a refusal carries.  On error @m holds no fields.
 */
int mmta_stream_recv(FILE *f, const char *what, const char *type,
		     const char *const *allowed, struct mmta_msg *m)
{
	static const char refusal[] = "mmt-attest " MMTA_MSG_REFUSED " 1\n";
	char *line = NULL;
	uint8_t *buf = NULL, *nb;
	size_t cap = 0, n = 0, lcap = 0;
	ssize_t r;
	int rc;

	memset(m, 0, sizeof(*m));
	for (;;) {
		errno = 0;
		r = getline(&line, &lcap, f);
		if (r <= 0) {
			mmta_err("%s: %s before the end of the message", what,
				 errno ? strerror(errno) : "the peer closed the stream");
			rc = MMTA_ESYS;
			goto out;
		}
		if (r == 1 && line[0] == '\n')
			break;
		if (n + (size_t)r > MMTA_MSG_MAX_BYTES) {
			mmta_err("%s: larger than %u bytes", what,
				 MMTA_MSG_MAX_BYTES);
			rc = MMTA_EMSG;
			goto out;
		}
		if (n + (size_t)r > cap) {
			cap = (n + (size_t)r) * 2;
			nb = realloc(buf, cap);
			if (!nb) {
				rc = MMTA_ESYS;
				goto out;
			}
			buf = nb;
		}
		memcpy(buf + n, line, (size_t)r);
		n += (size_t)r;
	}
	if (n >= sizeof(refusal) - 1 &&
	    !memcmp(buf, refusal, sizeof(refusal) - 1) &&
	    strcmp(type, MMTA_MSG_REFUSED))
		rc = refused(buf, n, what);
	else
		rc = mmta_msg_parse(buf ? buf : (uint8_t *)"", n, what, type,
				    allowed, m);
out:
	free(line);
	free(buf);
	return rc;
}

/**
 * mmta_msg_read() - read and parse a message of one type from a file
 * @path: the file, "-" for stdin
 * @type: the type the first line must name ("hello", "challenge", ...)
 * @allowed: NULL-terminated list of the field names this type may carry
 * @m: (out) the fields; free with mmta_msg_free()
 *
 * Return: MMTA_OK, MMTA_ESYS (cannot read) or what mmta_msg_parse()
 * returns; on error @m holds no fields.
 */
int mmta_msg_read(const char *path, const char *type,
		  const char *const *allowed, struct mmta_msg *m)
{
	uint8_t *buf;
	size_t len;
	int rc;

	memset(m, 0, sizeof(*m));
	rc = mmta_read_file(path, &buf, &len);
	if (rc)
		return rc;
	rc = mmta_msg_parse(buf, len, path, type, allowed, m);
	free(buf);
	return rc;
}

/**
 * mmta_msg_parse() - parse a message of one type
 * @buf: its text
 * @len: its length
 * @path: names it in errors (a file, or the message on a stream)
 * @type: the type the first line must name ("hello", "challenge", ...)
 * @allowed: NULL-terminated list of the field names this type may carry
 * @m: (out) the fields; free with mmta_msg_free()
 *
 * Refuses a wrong first line, an unknown or repeated field, a field
 * without a space, and hex that does not decode.
 *
 * Return: MMTA_OK or MMTA_EMSG (message on stderr); on error @m holds no
 * fields.
 */
int mmta_msg_parse(const uint8_t *buf, size_t len, const char *path,
		   const char *type, const char *const *allowed,
		   struct mmta_msg *m)
{
	char first[64];
	uint8_t *bin;
	size_t pos, end, sp, i;
	int rc;

	memset(m, 0, sizeof(*m));
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
	return rc;
}
