// SPDX-License-Identifier: GPL-2.0
/*
 * mmt-bench - MMT closure delegation against the AES-GCM secure channel and
 * plain RDMA writes, between two nodes, over the module's connections
 * (MMT_IOC_LISTEN/CONNECT/ACCEPT, MMT_IOC_SEND/RECV), perftest style:
 *
 *   server:  mmt-bench -S [options]          listens, receives
 *   client:  mmt-bench [options] SERVER_ADDR  connects, sends
 *
 * Both sides must be given the same -s, -n, --channel, --mode, --levels,
 * --block and key; the server sends its plan first and the client refuses
 * to run against a different one.
 *
 * Channels, each a column of the report:
 *
 *   plain       raw RDMA writes of plain PMOs (no key), PMO memory to PMO
 *               memory: the paper's "RDMA" baseline
 *   secure      the AES-GCM secure channel on plain PMOs (AES-GCM from the
 *               PMO's memory into a bounce, RDMA write, copy out, decrypt
 *               into the PMO), under the connection's key
 *               (MMT_IOC_CONN_SET_KEY, the bench key): the paper's
 *               Intel-machine secure channel
 *   secure-ctl  the secure channel on keyed PMOs, reading and writing
 *               through the controllers (verify + decrypt, encrypt + MAC)
 *   mmt         MMT closure delegation between keyed PMOs
 *
 * For every size and channel the client sends -n PMOs and the server
 * receives them: MMT channel into a WAITING PMO (keyed with
 * MMT_KEY_RECEIVE), secure-ctl into a VALID PMO, plain and secure into a
 * plain PMO.  PMO set-up (create, key, filling the data) is outside the
 * timed part: before
 * each send the server tells the client that its receive PMO is ready with
 * a small token it sends over the plain channel (a 4 KiB plain PMO), so
 * the client's
 * time is the transfer's and not the server's set-up.  Time per transfer:
 * the kernel's mmt_xfer.ns on both sides (sender: offer to last ack;
 * receiver: offer to last ack) and the client's wall time around
 * MMT_IOC_SEND.  Throughput is the requested size over the sender's
 * kernel time.  Sizes that are not whole closures are rounded up to a
 * closure for the MMT channel (delegation always moves whole closures;
 * the report says so); the plain and secure channels, which also go
 * closure by closure, use the geometry of 1..--levels levels that needs
 * the fewest closures without moving more than twice the size.
 *
 * After the last iteration of each size and channel the server reads the
 * received bytes back (plain PMOs as they are, keyed ones through the
 * controller), computes its SHA-256,
 * compares it with the seeded pattern (or, with --in on the client, only
 * reports it) and sends the digest to the client, which compares it with
 * the SHA-256 of what it sent: "verified" in the report means equal.
 *
 * MMT_IOC_SEND/RECV returning EOPNOTSUPP for a channel (a module without
 * it, such as one from before the secure channel) marks that channel "not
 * available" and the run goes on without it.  Any other failure ends the
 * run with exit status 3 (a rejected closure, EBADMSG/ESTALE/EILSEQ) or 2.
 *
 * The RDMA device is the one rdma_cm picks by the route to the peer; -d is
 * informational: the device found in /sys for the route's interface is
 * printed (and a difference from -d noted).
 *
 * Reported from the same run: MB/s per channel, mmt/plain as a fraction
 * of the plain channel's MB/s (the paper: 9.68 / 11 GB/s = 0.88),
 * secure/mmt and secure-ctl/mmt, and with --ib-write-bw perftest's
 * ib_write_bw between the same two nodes, run by both mmt-bench sides
 * after the channels, with messages of one closure of the bench geometry
 * (the size of the channels' per-closure writes) and as many as the
 * largest size needs: a second reference for the wire, with
 * mmt/ib_write_bw and plain/ib_write_bw.
 *
 * The default key is a fixed, public test key (see DEFAULT_KEY_HEX): it is
 * for benchmarking only and gives no confidentiality at all.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <ifaddrs.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "libmmt.h"

#define EXIT_USAGE	1
#define EXIT_SYS	2
#define EXIT_INTEGRITY	3

#define DEFAULT_PORT	7474
#define DEFAULT_ITERS	5
#define DEFAULT_SIZES	"4K,64K,2M,8M,64M"
#define DEFAULT_TIMEOUT	60000
#define MAX_SIZES	32
#define NKIND		4
#define IBWB_BIN	"ib_write_bw"

/*
 * The default MMT key: the ASCII text "mmt-bench demo!!" - public, for
 * benchmarking only.  Real use takes --key-hex on both sides.
 */
#define DEFAULT_KEY_HEX	"6d6d742d62656e63682064656d6f2121"

/* The token PMO: one closure of a 1-level, 64-byte-block geometry. */
#define TOKEN_BYTES	4096
#define TOKEN_MAGIC	"MMTBNCH1"

enum { TOK_PLAN = 1, TOK_READY = 2, TOK_RESULT = 3 };

/* verified states */
enum { VER_NONE = 0, VER_OK = 1, VER_BAD = 2 };

/*
 * struct token - what the server tells the client over the plain channel
 * (host byte order: both nodes are assumed to share it)
 */
struct token {
	char magic[8];
	uint32_t type;		/* TOK_* */
	uint32_t seq;		/* counts tokens from 0 */
	int32_t status;		/* RESULT: 0 or -errno of the server */
	uint32_t channel;	/* a bench channel, enum kind */
	uint64_t size;
	uint32_t iter;
	uint32_t verified;	/* RESULT: VER_*, pattern comparison */
	uint64_t recv_ns_sum;	/* RESULT: the server's mmt_xfer.ns */
	uint64_t recv_ns_min;
	uint64_t recv_iters;
	uint8_t sha256[32];	/* RESULT: of the received payload */
	char plan[512];		/* PLAN: the options that must agree */
};

_Static_assert(sizeof(struct token) <= TOKEN_BYTES, "token");

/* Command line. */
struct opts {
	bool server;
	const char *peer;	/* client: the server's address */
	const char *bind;	/* server: listen address (default: any) */
	const char *device;	/* -d, informational */
	unsigned int port;
	uint64_t sizes[MAX_SIZES];
	unsigned int nsizes;
	unsigned int iters;
	bool chan[NKIND];	/* by enum kind */
	bool ibwb;		/* --ib-write-bw */
	bool copy;
	bool eager;
	bool json;
	struct mmt_geometry geom;
	uint8_t key[32];
	size_t key_len;
	bool key_default;
	unsigned int timeout_ms;
	unsigned int node_id;
	uint64_t seed;
	const char *in;		/* client: payload from this file */
	const char *out;	/* server: write the payload received here */
	bool quiet;
};

/* Results of one size and channel. */
struct result {
	uint64_t size;		/* requested (payload) bytes */
	uint32_t channel;	/* enum kind */
	bool run;		/* attempted */
	bool available;		/* not EOPNOTSUPP */
	int status;		/* 0 or -errno (own side) */
	int peer_status;	/* client: the server's status */
	uint64_t pmo_bytes;	/* bytes moved per transfer */
	uint64_t closure_bytes;
	uint64_t closures;
	uint64_t meta_bytes;	/* per closure */
	unsigned int done;	/* successful iterations */
	uint64_t ns_sum, ns_min, ns_max;	/* own mmt_xfer.ns */
	double wall_sum;	/* seconds, around the ioctl */
	double setup_sum;	/* seconds of PMO set-up (not timed) */
	uint64_t peer_ns_sum, peer_ns_min;	/* client: server's recv ns */
	uint64_t peer_iters;
	uint8_t sha[32];	/* own: sent (client) / received (server) */
	uint8_t peer_sha[32];	/* client: what the server received */
	int verified;		/* VER_* (client: digests; server: pattern) */
	int pattern_verified;	/* client: the server's pattern check */
};

static struct opts o;
static struct result results[MAX_SIZES * NKIND];
static unsigned int nresults;
static int devfd = -1;
static uint32_t own_node = 1, peer_node;
static char rdma_dev[128] = "unknown";
static char rdma_how[256] = "";
static uint8_t *file_data;
static bool chan_missing[NKIND];	/* EOPNOTSUPP seen */
static uint64_t file_len;

/*
 * The bench's channels: a module channel on plain PMOs (no key) or on
 * keyed PMOs; reported in this order.
 */
enum kind { K_PLAIN, K_SECURE, K_SECURE_CTL, K_MMT };

static const struct {
	const char *name;
	uint32_t channel;	/* MMT_CHANNEL_* */
	bool keyed;		/* keyed PMOs (else plain PMOs) */
} kinds[NKIND] = {
	[K_PLAIN] = { "plain", MMT_CHANNEL_PLAIN, false },
	[K_SECURE] = { "secure", MMT_CHANNEL_SECURE, false },
	[K_SECURE_CTL] = { "secure-ctl", MMT_CHANNEL_SECURE, true },
	[K_MMT] = { "mmt", MMT_CHANNEL_MMT, true },
};

/* ib_write_bw's result (--ib-write-bw; client) */
static struct {
	bool run;		/* attempted */
	int status;		/* 0, or why not */
	char why[128];		/* when not */
	uint64_t msg_bytes;
	unsigned int iters;
	double mib_s;		/* its BW average, MiB/s */
} ibwb;

/* ------------------------------------------------------------ helpers */

static void __attribute__((format(printf, 1, 2))) usage_err(const char *fmt,
							    ...)
{
	va_list ap;

	fprintf(stderr, "mmt-bench: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'mmt-bench --help'.\n");
	exit(EXIT_USAGE);
}

/* note() - a progress line on stderr (not with --quiet) */
static void __attribute__((format(printf, 1, 2))) note(const char *fmt, ...)
{
	va_list ap;

	if (o.quiet)
		return;
	fprintf(stderr, "mmt-bench %s: ", o.server ? "server" : "client");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* errname() - "EBADMSG" for -EBADMSG */
static const char *errname(int err)
{
	const char *n = strerrorname_np(err < 0 ? -err : err);

	return n ? n : "E?";
}

/* die_err() - report a failed call and exit with the matching status */
static void __attribute__((noreturn)) die_err(const char *what, int err)
{
	int e = err < 0 ? -err : err;

	fprintf(stderr, "mmt-bench: %s: %s (%s: %s)\n", what, strerror(e),
		errname(e), mmtu_strerror(e));
	exit(e == EBADMSG || e == ESTALE || e == EILSEQ ? EXIT_INTEGRITY :
	     EXIT_SYS);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* parse_size() - bytes with an optional K/M/G suffix (binary) */
static uint64_t parse_size(const char *what, const char *s, char **endp)
{
	unsigned long long v;
	char *end;

	errno = 0;
	if (!isdigit((unsigned char)*s))
		usage_err("%s: not a number: '%s'", what, s);
	v = strtoull(s, &end, 0);
	if (errno)
		usage_err("%s: out of range: '%s'", what, s);
	switch (*end) {
	case 'k':
	case 'K':
		v <<= 10;
		end++;
		break;
	case 'm':
	case 'M':
		v <<= 20;
		end++;
		break;
	case 'g':
	case 'G':
		v <<= 30;
		end++;
		break;
	}
	if (*end == 'i' || *end == 'B')
		end += *end == 'i' && end[1] == 'B' ? 2 : 1;
	if (endp)
		*endp = end;
	else if (*end)
		usage_err("%s: trailing characters in '%s'", what, s);
	return v;
}

static unsigned int parse_uint(const char *what, const char *s,
			       unsigned int lo, unsigned int hi)
{
	uint64_t v = parse_size(what, s, NULL);

	if (v < lo || v > hi)
		usage_err("%s: %s is not in %u..%u", what, s, lo, hi);
	return v;
}

static void parse_sizes(const char *s)
{
	char *end;

	o.nsizes = 0;
	for (;;) {
		if (o.nsizes == MAX_SIZES)
			usage_err("--sizes: at most %d sizes", MAX_SIZES);
		o.sizes[o.nsizes] = parse_size("--sizes", s, &end);
		if (!o.sizes[o.nsizes])
			usage_err("--sizes: a size must not be 0");
		o.nsizes++;
		if (!*end)
			return;
		if (*end != ',')
			usage_err("--sizes: expected a list like 4K,64K,2M");
		s = end + 1;
	}
}

static void parse_channels(const char *s)
{
	char buf[64], *tok, *save = NULL;
	unsigned int k;

	memset(o.chan, 0, sizeof(o.chan));
	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "all")) {
			memset(o.chan, 1, sizeof(o.chan));
			continue;
		}
		for (k = 0; k < NKIND; k++)
			if (!strcmp(tok, kinds[k].name))
				break;
		if (k == NKIND)
			usage_err("--channel: '%s' is not plain, secure, secure-ctl, mmt or all",
				  tok);
		o.chan[k] = true;
	}
}

static void parse_key(const char *s)
{
	int ret = mmtu_key_from_hex(s, strlen(s), o.key, NULL);

	if (ret == -EINVAL)
		usage_err("--key-hex: 32 or 64 hex digits (AES-128 or AES-256)");
	if (ret < 0)
		usage_err("--key-hex: not a hex digit in '%s'", s);
	o.key_len = ret;
}

static const char *size_str(uint64_t v, char *buf, size_t len)
{
	if (v >= (1ull << 30) && !(v & ((1ull << 30) - 1)))
		snprintf(buf, len, "%lluG", (unsigned long long)(v >> 30));
	else if (v >= (1ull << 20) && !(v & ((1ull << 20) - 1)))
		snprintf(buf, len, "%lluM", (unsigned long long)(v >> 20));
	else if (v >= (1ull << 10) && !(v & ((1ull << 10) - 1)))
		snprintf(buf, len, "%lluK", (unsigned long long)(v >> 10));
	else
		snprintf(buf, len, "%llu", (unsigned long long)v);
	return buf;
}

static void hex(const uint8_t *b, size_t n, char *out)
{
	size_t i;

	for (i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

static void sha256(const void *buf, size_t len, uint8_t out[32])
{
	unsigned int olen = 32;

	if (!EVP_Digest(buf, len, out, &olen, EVP_sha256(), NULL)) {
		fprintf(stderr, "mmt-bench: EVP_Digest(SHA-256) failed\n");
		exit(EXIT_SYS);
	}
}

/*
 * fill_pattern() - the seeded pattern: each 8-byte little-endian word is
 * xorshift64 of (word index + seed * golden ratio); independent of the
 * size, so every size's payload is a prefix of the same stream
 */
static void fill_pattern(uint8_t *buf, uint64_t len, uint64_t seed)
{
	uint64_t i, w;
	unsigned int b;

	for (i = 0; i < len; i += 8) {
		w = i / 8 + seed * 0x9e3779b97f4a7c15ull;
		w ^= w << 13;
		w ^= w >> 7;
		w ^= w << 17;
		for (b = 0; b < 8 && i + b < len; b++)
			buf[i + b] = w >> (8 * b);
	}
}

/* payload() - the @size bytes the client sends (zero padded to @bytes) */
static uint8_t *payload(uint64_t size, uint64_t bytes)
{
	uint8_t *buf = calloc(1, bytes);

	if (!buf) {
		fprintf(stderr, "mmt-bench: out of memory (%llu bytes)\n",
			(unsigned long long)bytes);
		exit(EXIT_SYS);
	}
	if (file_data)
		memcpy(buf, file_data, size < file_len ? size : file_len);
	else
		fill_pattern(buf, size, o.seed);
	return buf;
}

/* ------------------------------------------------------------ geometry */

/* geom_levels() - @o.geom with @levels levels (default arities) */
static struct mmt_geometry geom_levels(unsigned int levels)
{
	struct mmt_geometry g = o.geom;

	g.levels = levels;
	memset(g.log_arity, 0, sizeof(g.log_arity));
	return g;
}

/*
 * chan_geometry() - the geometry and PMO size for @size on @channel.  MMT
 * channel: the bench geometry, @size rounded up to whole closures
 * (delegation moves whole closures).  Plain and secure channels: they too
 * move a PMO closure by closure, with a round trip per closure, so among
 * the default-arity geometries of 1..levels levels (same block size) the
 * one that needs the fewest closures without moving more than twice
 * @size (1 level always qualifies); ties go to fewer bytes.
 */
static void chan_geometry(uint32_t kind, uint64_t size,
			  struct mmt_geometry *g, uint64_t *bytes)
{
	unsigned int levels = o.geom.levels ? o.geom.levels : 3, l;
	uint64_t cb, moved, n, best_n = UINT64_MAX, best_moved = 0;
	struct mmt_geometry c;

	*g = o.geom;
	cb = mmtu_geometry_closure_bytes(g);
	*bytes = (size + cb - 1) / cb * cb;
	if (kind == K_MMT || *bytes == size)
		return;
	for (l = 1; l <= levels; l++) {
		c = geom_levels(l);
		cb = mmtu_geometry_closure_bytes(&c);
		if (!cb)
			continue;
		moved = (size + cb - 1) / cb * cb;
		n = moved / cb;
		if (l > 1 && moved > 2 * size)
			continue;
		if (n < best_n || (n == best_n && moved < best_moved)) {
			best_n = n;
			best_moved = moved;
			*g = c;
			*bytes = moved;
		}
	}
}

/* ------------------------------------------------------------ the module */

/* key_pmo() - (re)key @fd: invalidate first if @rekey */
static void key_pmo(int fd, bool rekey, uint64_t flags)
{
	int ret;

	if (rekey) {
		ret = mmtu_pmo_invalidate(fd);
		if (ret)
			die_err("MMT_IOC_PMO_INVALIDATE", ret);
	}
	ret = mmtu_pmo_set_key(fd, o.key, o.key_len, flags);
	if (ret)
		die_err("MMT_IOC_PMO_SET_KEY", ret);
}

static int create_pmo(uint64_t bytes, const struct mmt_geometry *g,
		      struct mmt_pmo_create *out)
{
	int fd = mmtu_pmo_create(devfd, bytes, g, MMT_PMO_CLOEXEC, out);

	if (fd < 0)
		die_err("MMT_IOC_PMO_CREATE", fd);
	return fd;
}

/* ------------------------------------------------------------ tokens */

static int token_fd = -1;
static uint32_t token_seq;

static void token_setup(void)
{
	struct mmt_geometry g = { .levels = 1 };

	/* plain memory: the plain channel moves it */
	token_fd = create_pmo(TOKEN_BYTES, &g, NULL);
}

/*
 * conn_key() - the connection's key for the secure channel on plain PMOs:
 * the bench key on both sides
 */
static void conn_key(int conn)
{
	int ret = mmtu_conn_set_key(conn, o.key, o.key_len);

	if (ret == -ENOTTY || ret == -EINVAL) {
		note("MMT_IOC_CONN_SET_KEY: %s (a module without plain PMOs?)",
		     errname(ret));
		return;
	}
	if (ret)
		die_err("MMT_IOC_CONN_SET_KEY", ret);
}

/* token_send() - server: write @t into the token PMO and send it (plain) */
static int token_send(int conn, struct token *t)
{
	uint8_t buf[TOKEN_BYTES];
	ssize_t n;

	memcpy(t->magic, TOKEN_MAGIC, sizeof(t->magic));
	t->seq = token_seq++;
	memset(buf, 0, sizeof(buf));
	memcpy(buf, t, sizeof(*t));
	n = mmtu_pmo_write_all(token_fd, buf, sizeof(buf), 0);
	if (n < 0)
		die_err("pwrite (token)", n);
	return mmtu_send(conn, token_fd, MMT_CHANNEL_PLAIN, 0, o.timeout_ms,
			 NULL);
}

/*
 * token_recv() - client: receive the next token; checks magic, sequence
 * and @type.  Returns 0 or -errno (-EPROTO for an unexpected token).
 */
static int token_recv(int conn, uint32_t type, struct token *t)
{
	uint8_t buf[TOKEN_BYTES];
	ssize_t n;
	int ret;

	ret = mmtu_recv(conn, token_fd, MMT_CHANNEL_PLAIN, 0, o.timeout_ms,
			NULL);
	if (ret)
		return ret;
	n = mmtu_pmo_read_all(token_fd, buf, sizeof(buf), 0);
	if (n < 0)
		return n;
	memcpy(t, buf, sizeof(*t));
	if (memcmp(t->magic, TOKEN_MAGIC, sizeof(t->magic)) ||
	    t->seq != token_seq || t->type != type) {
		fprintf(stderr,
			"mmt-bench: unexpected token (type %u seq %u, expected type %u seq %u)\n",
			t->type, t->seq, type, token_seq);
		return -EPROTO;
	}
	token_seq++;
	return 0;
}

/* plan() - the options both sides must agree on, as text */
static void plan(char *buf, size_t len)
{
	size_t n;
	unsigned int i;
	char s[32];

	n = snprintf(buf, len, "mode=%s iters=%u levels=%u block=%u ib_write_bw=%d channels=%s%s%s%s sizes=",
		     o.copy ? "copy" : "transfer", o.iters, o.geom.levels,
		     1u << (o.geom.log_block_size ? o.geom.log_block_size : 6),
		     o.ibwb, o.chan[K_PLAIN] ? "plain," : "",
		     o.chan[K_SECURE] ? "secure," : "",
		     o.chan[K_SECURE_CTL] ? "secure-ctl," : "",
		     o.chan[K_MMT] ? "mmt" : "");
	for (i = 0; i < o.nsizes && n < len; i++)
		n += snprintf(buf + n, len - n, "%s%s", i ? "," : "",
			      size_str(o.sizes[i], s, sizeof(s)));
}

/* ------------------------------------------------------------ /sys */

/* read_line() - first line of a file into @buf, without the newline */
static bool read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	bool ok;

	if (!f)
		return false;
	ok = !!fgets(buf, len, f);
	fclose(f);
	if (ok)
		buf[strcspn(buf, "\n")] = '\0';
	return ok;
}

/*
 * ib_dev_of_netdev() - the RDMA device whose port has a GID on @ifname
 * (RoCE, Soft-RoCE: /sys/class/infiniband/D/ports/P/gid_attrs/ndevs/N), or
 * the one under the interface's own device (IPoIB)
 */
static bool ib_dev_of_netdev(const char *ifname, char *out, size_t len)
{
	char path[512], val[64];
	struct dirent *d, *p;
	DIR *dd, *pd;
	int i;

	dd = opendir("/sys/class/infiniband");
	while (dd && (d = readdir(dd))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/class/infiniband/%.64s/ports",
			 d->d_name);
		pd = opendir(path);
		while (pd && (p = readdir(pd))) {
			if (p->d_name[0] == '.')
				continue;
			for (i = 0; i < 16; i++) {
				snprintf(path, sizeof(path),
					 "/sys/class/infiniband/%.64s/ports/%.16s/gid_attrs/ndevs/%d",
					 d->d_name, p->d_name, i);
				if (read_line(path, val, sizeof(val)) &&
				    !strcmp(val, ifname)) {
					snprintf(out, len, "%.64s port %.16s",
						 d->d_name, p->d_name);
					closedir(pd);
					closedir(dd);
					return true;
				}
			}
		}
		if (pd)
			closedir(pd);
	}
	if (dd)
		closedir(dd);
	snprintf(path, sizeof(path), "/sys/class/net/%s/device/infiniband",
		 ifname);
	dd = opendir(path);
	while (dd && (d = readdir(dd))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(out, len, "%.64s", d->d_name);
		closedir(dd);
		return true;
	}
	if (dd)
		closedir(dd);
	return false;
}

/*
 * find_rdma_dev() - which RDMA device the route to @peer goes through:
 * the local address of a UDP socket connected to @peer, its interface,
 * the RDMA device with a GID on that interface
 */
static void find_rdma_dev(const struct mmt_conn_addr *peer)
{
	struct sockaddr_storage ss, local;
	socklen_t sl = sizeof(local);
	struct ifaddrs *ifa, *i;
	char ifname[64] = "";
	int s;

	memset(&ss, 0, sizeof(ss));
	if (peer->family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		a->sin_family = AF_INET;
		a->sin_port = htons(4791);
		memcpy(&a->sin_addr, peer->addr, 4);
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		a->sin6_family = AF_INET6;
		a->sin6_port = htons(4791);
		a->sin6_scope_id = peer->scope_id;
		memcpy(&a->sin6_addr, peer->addr, 16);
	}
	s = socket(peer->family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&ss, sizeof(ss)) ||
	    getsockname(s, (struct sockaddr *)&local, &sl)) {
		if (s >= 0)
			close(s);
		return;
	}
	close(s);
	if (getifaddrs(&ifa))
		return;
	for (i = ifa; i; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != peer->family)
			continue;
		if (peer->family == AF_INET &&
		    ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr ==
		    ((struct sockaddr_in *)&local)->sin_addr.s_addr)
			break;
		if (peer->family == AF_INET6 &&
		    !memcmp(&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr,
			    &((struct sockaddr_in6 *)&local)->sin6_addr, 16))
			break;
	}
	if (i)
		snprintf(ifname, sizeof(ifname), "%s", i->ifa_name);
	freeifaddrs(ifa);
	if (!*ifname)
		return;
	snprintf(rdma_how, sizeof(rdma_how), "route via %s", ifname);
	if (!ib_dev_of_netdev(ifname, rdma_dev, sizeof(rdma_dev)))
		snprintf(rdma_dev, sizeof(rdma_dev), "unknown");
}

static void report_device(const struct mmt_conn_addr *peer)
{
	char a[INET6_ADDRSTRLEN] = "?";

	find_rdma_dev(peer);
	inet_ntop(peer->family, peer->addr, a, sizeof(a));
	note("peer %s node %u (own node %u); RDMA device: %s (%s; rdma_cm picks it by the route)",
	     a, peer_node, own_node, rdma_dev, *rdma_how ? rdma_how :
	     "not found in /sys");
	if (o.device && strncmp(o.device, rdma_dev, strlen(o.device)))
		note("-d %s is informational: the RDMA device follows the route to the peer",
		     o.device);
	if (peer_node == own_node)
		fprintf(stderr,
			"mmt-bench: WARNING: both nodes have node id %u; nodes sharing a key need distinct node ids (--node-id)\n",
			own_node);
}

/* ------------------------------------------------------------ ib_write_bw */

/*
 * ibwb_run() - run perftest's ib_write_bw as the server (@peer NULL) or as
 * the client of @peer: rdma_cm (-R), @msg-byte RDMA writes, @iters of
 * them, TCP port --port + 1, the RDMA device found for the route (-d), at
 * nice 19: it polls its completion queue (its events do not work for
 * RDMA writes), and on a node of one CPU (the guests) a poller at the
 * same priority takes half the CPU from Soft-RoCE's own packet
 * processing, while the module's channels sleep as they wait.  Its output
 * (stdout and stderr) into @out, NUL-terminated.  SIGALRM ends
 * it after @secs.  Returns its exit status (127: it could not be run), or
 * 128 + the signal that ended it.
 */
static int ibwb_run(const char *peer, uint64_t msg, unsigned int iters,
		    unsigned int secs, char *out, size_t len)
{
	char sz[32], n[16], port[16], dev[sizeof(rdma_dev)], junk[256];
	const char *argv[16];
	int fds[2], status = 0, i = 0;
	size_t got = 0;
	ssize_t r;
	pid_t pid;

	snprintf(sz, sizeof(sz), "%llu", (unsigned long long)msg);
	snprintf(n, sizeof(n), "%u", iters);
	snprintf(port, sizeof(port), "%u", o.port + 1);
	snprintf(dev, sizeof(dev), "%s", rdma_dev);
	dev[strcspn(dev, " ")] = '\0';
	argv[i++] = IBWB_BIN;
	argv[i++] = "-R";
	argv[i++] = "-F";
	argv[i++] = "-s";
	argv[i++] = sz;
	argv[i++] = "-n";
	argv[i++] = n;
	argv[i++] = "-p";
	argv[i++] = port;
	if (strcmp(dev, "unknown")) {
		argv[i++] = "-d";
		argv[i++] = dev;
	}
	if (peer)
		argv[i++] = peer;
	argv[i] = NULL;
	out[0] = '\0';
	if (pipe2(fds, O_CLOEXEC))
		return 127;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return 127;
	}
	if (!pid) {
		dup2(fds[1], STDOUT_FILENO);
		dup2(fds[1], STDERR_FILENO);
		alarm(secs);	/* kept across execve */
		if (setpriority(PRIO_PROCESS, 0, 19))
			_exit(127);
		execvp(IBWB_BIN, (char *const *)argv);
		_exit(127);
	}
	close(fds[1]);
	for (;;) {
		if (got < len - 1)
			r = read(fds[0], out + got, len - 1 - got);
		else
			r = read(fds[0], junk, sizeof(junk));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (got < len - 1)
			got += r;
	}
	out[got] = '\0';
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

/*
 * ibwb_parse() - the BW average (MiB/s) of ib_write_bw's result line for
 * @msg ("#bytes #iterations BW peak BW average MsgRate"); 0 if none
 */
static double ibwb_parse(const char *out, uint64_t msg)
{
	const char *l = out;
	unsigned long long bytes;
	unsigned int it;
	double peak, avg;

	while (l && *l) {
		if (sscanf(l, " %llu %u %lf %lf", &bytes, &it, &peak,
			   &avg) == 4 && bytes == msg)
			return avg;
		l = strchr(l, '\n');
		if (l)
			l++;
	}
	return 0;
}

/* ibwb_plan() - message size and count: one closure each, the largest size */
static void ibwb_plan(uint64_t *msg, unsigned int *iters)
{
	uint64_t big = 0, n;
	unsigned int s;

	for (s = 0; s < o.nsizes; s++)
		if (o.sizes[s] > big)
			big = o.sizes[s];
	*msg = mmtu_geometry_closure_bytes(&o.geom);
	n = (big + *msg - 1) / *msg;
	*iters = n < 5 ? 5 : n > 100000 ? 100000 : n;	/* its limits */
}

/* ibwb_note() - ib_write_bw's output on stderr, for the record */
static void ibwb_note(const char *out)
{
	if (!o.quiet && *out)
		fprintf(stderr, "mmt-bench %s: ib_write_bw said:\n%s",
			o.server ? "server" : "client", out);
}

/*
 * ibwb_server() - the server's side: one ib_write_bw server for the
 * client's run (which retries until it listens)
 */
static void ibwb_server(void)
{
	static char out[16384];
	unsigned int iters;
	uint64_t msg;
	int ret;

	ibwb_plan(&msg, &iters);
	note("ib_write_bw server: %u x %llu B", iters, (unsigned long long)msg);
	ret = ibwb_run(NULL, msg, iters, o.timeout_ms / 1000 + 120, out,
		       sizeof(out));
	ibwb_note(out);
	if (ret)
		note("ib_write_bw server exited with %d%s", ret,
		     ret == 127 ? " (not installed? perftest)" : "");
}

/* ibwb_client() - the client's side: connect to the server's, parse */
static void ibwb_client(void)
{
	static char out[16384];
	double deadline = now() + o.timeout_ms / 1000.0 + 30;
	int ret, tries = 0;

	ibwb.run = true;
	ibwb_plan(&ibwb.msg_bytes, &ibwb.iters);
	/*
	 * The server starts after our last token: retry while it is not
	 * listening yet, but not when ib_write_bw refused its arguments.
	 */
	do {
		usleep(500000);
		ret = ibwb_run(o.peer, ibwb.msg_bytes, ibwb.iters,
			       o.timeout_ms / 1000 + 120, out, sizeof(out));
		tries++;
	} while (ret && ret != 127 && ret < 128 && tries < 40 &&
		 !strstr(out, "Parser function exited") && now() < deadline);
	ibwb_note(out);
	ibwb.mib_s = ret ? 0 : ibwb_parse(out, ibwb.msg_bytes);
	if (ret == 127)
		snprintf(ibwb.why, sizeof(ibwb.why),
			 "%s could not be run (perftest installed?)", IBWB_BIN);
	else if (ret)
		snprintf(ibwb.why, sizeof(ibwb.why),
			 "%s exited with %d after %d tries", IBWB_BIN, ret,
			 tries);
	else if (!ibwb.mib_s)
		snprintf(ibwb.why, sizeof(ibwb.why),
			 "no result line for %llu-byte messages in its output",
			 (unsigned long long)ibwb.msg_bytes);
	ibwb.status = ret || !ibwb.mib_s ? -EIO : 0;
	if (!ibwb.status)
		note("ib_write_bw: %u x %llu B: %.2f MiB/s (%d tries)",
		     ibwb.iters, (unsigned long long)ibwb.msg_bytes, ibwb.mib_s,
		     tries);
}

/* ------------------------------------------------------------ server */

static bool conn_dead(int err)
{
	return err == -ECONNRESET || err == -ETIMEDOUT || err == -EINTR;
}

static struct result *new_result(uint32_t channel, uint64_t size)
{
	struct result *r = &results[nresults++];
	struct mmt_geometry g;

	memset(r, 0, sizeof(*r));
	r->size = size;
	r->channel = channel;
	r->available = true;
	chan_geometry(channel, size, &g, &r->pmo_bytes);
	r->closure_bytes = mmtu_geometry_closure_bytes(&g);
	r->closures = r->pmo_bytes / r->closure_bytes;
	r->ns_min = UINT64_MAX;
	return r;
}

static void record(struct result *r, const struct mmt_xfer *x, double wall)
{
	r->done++;
	r->ns_sum += x->ns;
	if (x->ns < r->ns_min)
		r->ns_min = x->ns;
	if (x->ns > r->ns_max)
		r->ns_max = x->ns;
	r->wall_sum += wall;
}

static void write_out(const struct result *r, const uint8_t *buf)
{
	char path[4096], s[32];
	FILE *f;
	unsigned int k, nchan = 0;

	for (k = 0; k < NKIND; k++)
		nchan += o.chan[k];
	if (o.nsizes == 1 && nchan == 1)
		snprintf(path, sizeof(path), "%s", o.out);
	else
		snprintf(path, sizeof(path), "%s.%s.%s", o.out,
			 kinds[r->channel].name,
			 size_str(r->size, s, sizeof(s)));
	f = fopen(path, "w");
	if (!f || fwrite(buf, 1, r->size, f) != r->size || fclose(f)) {
		perror(path);
		exit(EXIT_SYS);
	}
}

/*
 * server_one() - receive -n PMOs of one size on one channel; returns 0, or
 * -errno that ends the run (a dead connection: no result token)
 */
static int server_one(int conn, struct result *r, bool *dead)
{
	struct mmt_geometry g;
	struct mmt_pmo_create pc;
	struct mmt_xfer x;
	struct token t;
	uint8_t *buf = NULL, *want;
	bool keyed = false;
	int fd, ret = 0;
	unsigned int i;
	double t0;
	char sz[32];

	chan_geometry(r->channel, r->size, &g, &r->pmo_bytes);
	fd = create_pmo(r->pmo_bytes, &g, &pc);
	r->meta_bytes = pc.meta_bytes;
	r->run = true;
	for (i = 0; i < o.iters; i++) {
		/*
		 * set-up, not timed: a WAITING PMO, a wiped VALID one, or a
		 * plain one (zeroed before the last iteration, whose bytes
		 * are then checked)
		 */
		t0 = now();
		if (r->channel == K_MMT) {
			key_pmo(fd, keyed, MMT_KEY_RECEIVE);
			keyed = true;
		} else if (!kinds[r->channel].keyed) {
			if (i && i == o.iters - 1) {
				ret = mmtu_pmo_invalidate(fd);
				if (ret)
					die_err("MMT_IOC_PMO_INVALIDATE", ret);
			}
		} else if (!keyed || i == o.iters - 1) {
			key_pmo(fd, keyed, 0);
			keyed = true;
		}
		r->setup_sum += now() - t0;
		if (i == 0)
			note("%s channel, %s x %u: set-up (not timed) %.2f s",
			     kinds[r->channel].name,
			     size_str(r->size, sz, sizeof(sz)), o.iters,
			     now() - t0);
		memset(&t, 0, sizeof(t));
		t.type = TOK_READY;
		t.channel = r->channel;
		t.size = r->size;
		t.iter = i;
		ret = token_send(conn, &t);
		if (ret) {
			note("iteration %u: sending the ready token: %s", i,
			     errname(ret));
			break;
		}
		t0 = now();
		ret = mmtu_recv(conn, fd, kinds[r->channel].channel,
				o.eager ? MMT_XFER_EAGER : 0, o.timeout_ms, &x);
		if (ret) {
			note("iteration %u: MMT_IOC_RECV: %s after %llu closures accepted, %.3f s",
			     i, errname(ret), (unsigned long long)x.closures,
			     now() - t0);
			break;
		}
		record(r, &x, now() - t0);
	}
	r->status = ret;
	if (ret == -EOPNOTSUPP) {
		r->available = false;
		chan_missing[r->channel] = true;
	}
	if (conn_dead(ret)) {
		*dead = true;
		close(fd);
		return ret;
	}
	memset(&t, 0, sizeof(t));
	if (!ret) {
		ssize_t n;

		buf = malloc(r->size);
		if (!buf) {
			fprintf(stderr, "mmt-bench: out of memory\n");
			exit(EXIT_SYS);
		}
		t0 = now();
		n = mmtu_pmo_read_all(fd, buf, r->size, 0);
		if (n != (ssize_t)r->size) {
			ret = n < 0 ? n : -EIO;
			r->status = ret;
			fprintf(stderr, "mmt-bench: reading back %s/%llu: %s\n",
				kinds[r->channel].name,
				(unsigned long long)r->size,
				mmtu_strerror(ret));
		} else {
			sha256(buf, r->size, r->sha);
			memcpy(t.sha256, r->sha, 32);
			want = payload(r->size, r->size);
			r->verified = memcmp(want, buf, r->size) ? VER_BAD :
				      VER_OK;
			free(want);
			if (o.out)
				write_out(r, buf);
			note("read back (%s), sha256, compared: %.2f s",
			     kinds[r->channel].keyed ? "through the controller" :
			     "plain PMO: its bytes", now() - t0);
		}
		free(buf);
	}
	t.type = TOK_RESULT;
	t.status = ret;
	t.channel = r->channel;
	t.size = r->size;
	t.verified = r->verified;
	t.recv_ns_sum = r->ns_sum;
	t.recv_ns_min = r->ns_min;
	t.recv_iters = r->done;
	close(fd);
	ret = token_send(conn, &t) ?: ret;
	if (conn_dead(ret))
		*dead = true;
	return ret;
}

/*
 * probe_secure() - find out whether the module has the secure channel
 * before setting up large PMOs for it: the 4 KiB plain token PMO over it
 * (the server receives, the client sends; the connection's key).
 * Returns 0 (works), -EOPNOTSUPP, or another -errno, which ends the run.
 */
static int probe_secure(int conn)
{
	int ret;

	if (!o.chan[K_SECURE] && !o.chan[K_SECURE_CTL])
		return 0;
	if (o.server)
		ret = mmtu_recv(conn, token_fd, MMT_CHANNEL_SECURE, 0,
				o.timeout_ms, NULL);
	else
		ret = mmtu_send(conn, token_fd, MMT_CHANNEL_SECURE, 0,
				o.timeout_ms, NULL);
	if (ret == -EOPNOTSUPP) {
		chan_missing[K_SECURE] = true;
		chan_missing[K_SECURE_CTL] = true;
		note("secure channel: not available in this module (EOPNOTSUPP)");
		return ret;
	}
	if (ret)
		die_err("probing the secure channel", ret);
	return 0;
}

static int run_server(void)
{
	struct mmt_conn_addr a;
	struct mmt_connect c;
	struct token t;
	unsigned int s, k;
	bool dead = false;
	int lfd, conn, ret = 0, first_err = 0;

	ret = mmtu_parse_addr(o.bind, o.port, &a);
	if (ret)
		usage_err("--bind: not an IPv4/IPv6 address: '%s'", o.bind);
	lfd = mmtu_listen(devfd, &a, 1, MMT_CONN_CLOEXEC);
	if (lfd < 0)
		die_err("MMT_IOC_LISTEN", lfd);
	note("listening on port %u", o.port);
	do
		conn = mmtu_accept(lfd, 600000, MMT_CONN_CLOEXEC, &c);
	while (conn == -ETIMEDOUT);
	if (conn < 0)
		die_err("MMT_IOC_ACCEPT", conn);
	close(lfd);
	peer_node = c.peer_node;
	report_device(&c.addr);
	conn_key(conn);
	token_setup();
	memset(&t, 0, sizeof(t));
	t.type = TOK_PLAN;
	plan(t.plan, sizeof(t.plan));
	ret = token_send(conn, &t);
	if (ret)
		die_err("sending the plan", ret);
	probe_secure(conn);

	for (s = 0; s < o.nsizes && !dead; s++) {
		for (k = 0; k < NKIND && !dead; k++) {
			uint32_t ch = k;
			struct result *r;

			if (!o.chan[ch])
				continue;
			r = new_result(ch, o.sizes[s]);
			if (chan_missing[ch]) {
				r->available = false;
				r->status = -EOPNOTSUPP;
				continue;
			}
			/*
			 * A failure with the connection alive (both sides
			 * exchanged the result token) ends only this size
			 * and channel; the first one is the exit status.
			 */
			ret = server_one(conn, r, &dead);
			if (ret && ret != -EOPNOTSUPP && !first_err)
				first_err = ret;
		}
	}
	close(conn);
	if (o.ibwb && !dead)
		ibwb_server();
	return first_err;
}

/* ------------------------------------------------------------ client */

static int client_one(int conn, struct result *r, bool *dead)
{
	struct mmt_geometry g;
	struct mmt_pmo_create pc;
	struct mmt_xfer x;
	struct token t;
	uint8_t *data;
	bool keyed = false, ready = false;
	int fd, ret = 0, tret;
	unsigned int i;
	double t0, t1;

	chan_geometry(r->channel, r->size, &g, &r->pmo_bytes);
	data = payload(r->size, r->pmo_bytes);
	sha256(data, r->size, r->sha);
	fd = create_pmo(r->pmo_bytes, &g, &pc);
	r->meta_bytes = pc.meta_bytes;
	r->run = true;
	for (i = 0; i < o.iters; i++) {
		/*
		 * set-up, not timed: a VALID PMO with the data, or a plain
		 * one (plain and secure channels).  After a transfer on the
		 * MMT channel the MMTs are INVALID (the server owns them):
		 * invalidate, re-key, write again.
		 */
		if (!ready || (r->channel == K_MMT && !o.copy)) {
			ssize_t n;

			t0 = now();
			if (kinds[r->channel].keyed) {
				key_pmo(fd, keyed, 0);
				keyed = true;
			}
			ready = true;
			t1 = now();
			n = mmtu_pmo_write_all(fd, data, r->size, 0);
			if (n < 0)
				die_err("pwrite (payload)", n);
			r->setup_sum += now() - t0;
			if (i == 0)
				note("set-up (not timed): key %.2f s, write %.2f s",
				     t1 - t0, now() - t1);
		}
		ret = token_recv(conn, TOK_READY, &t);
		if (ret) {
			note("iteration %u: receiving the ready token: %s", i,
			     errname(ret));
			break;
		}
		if (t.channel != r->channel || t.size != r->size ||
		    t.iter != i) {
			ret = -EPROTO;
			break;
		}
		t0 = now();
		ret = mmtu_send(conn, fd, kinds[r->channel].channel,
				o.copy ? MMT_XFER_COPY : 0, o.timeout_ms, &x);
		t1 = now();
		if (ret) {
			note("iteration %u: MMT_IOC_SEND: %s after %llu closures acked, %.3f s",
			     i, errname(ret), (unsigned long long)x.closures,
			     t1 - t0);
			break;
		}
		record(r, &x, t1 - t0);
	}
	free(data);
	close(fd);
	r->status = ret;
	if (ret == -EOPNOTSUPP) {
		r->available = false;
		chan_missing[r->channel] = true;
	}
	if (conn_dead(ret) || ret == -EPROTO) {
		*dead = true;
		return ret;
	}
	tret = token_recv(conn, TOK_RESULT, &t);
	if (tret) {
		*dead = true;
		return tret;
	}
	r->peer_status = t.status;
	r->peer_ns_sum = t.recv_ns_sum;
	r->peer_ns_min = t.recv_ns_min;
	r->peer_iters = t.recv_iters;
	r->pattern_verified = t.verified;
	memcpy(r->peer_sha, t.sha256, 32);
	if (!ret && !t.status)
		r->verified = memcmp(r->sha, r->peer_sha, 32) ? VER_BAD :
			      VER_OK;
	if (t.status == -EOPNOTSUPP) {
		r->available = false;
		chan_missing[r->channel] = true;
	}
	return ret ?: t.status;
}

static int run_client(void)
{
	struct mmt_conn_addr a;
	struct mmt_connect c;
	struct token t;
	char mine[sizeof(t.plan)];
	unsigned int s, k;
	bool dead = false;
	int conn, ret = 0, first_err = 0;
	double deadline = now() + o.timeout_ms / 1000.0;

	ret = mmtu_parse_addr(o.peer, o.port, &a);
	if (ret || !o.peer || !*o.peer)
		usage_err("not an IPv4/IPv6 address: '%s'", o.peer);
	/* the server may not listen yet: retry while refused */
	for (;;) {
		conn = mmtu_connect(devfd, &a, 5000, MMT_CONN_CLOEXEC, &c);
		if (conn >= 0 || now() > deadline ||
		    (conn != -ECONNREFUSED && conn != -ETIMEDOUT))
			break;
		usleep(200000);
	}
	if (conn < 0)
		die_err("MMT_IOC_CONNECT", conn);
	peer_node = c.peer_node;
	report_device(&a);
	conn_key(conn);
	token_setup();
	ret = token_recv(conn, TOK_PLAN, &t);
	if (ret)
		die_err("receiving the server's plan", ret);
	plan(mine, sizeof(mine));
	t.plan[sizeof(t.plan) - 1] = '\0';
	if (strcmp(mine, t.plan)) {
		fprintf(stderr,
			"mmt-bench: the server runs another plan; give both sides the same options\n  server: %s\n  client: %s\n",
			t.plan, mine);
		exit(EXIT_USAGE);
	}
	probe_secure(conn);

	for (s = 0; s < o.nsizes && !dead; s++) {
		for (k = 0; k < NKIND && !dead; k++) {
			uint32_t ch = k;
			struct result *r;
			char sz[32];

			if (!o.chan[ch])
				continue;
			r = new_result(ch, o.sizes[s]);
			if (chan_missing[ch]) {
				r->available = false;
				r->status = -EOPNOTSUPP;
				continue;
			}
			note("%s channel, %s x %u", kinds[ch].name,
			     size_str(o.sizes[s], sz, sizeof(sz)), o.iters);
			ret = client_one(conn, r, &dead);
			if (ret == -EOPNOTSUPP)
				note("%s channel not available in this module (EOPNOTSUPP)",
				     kinds[ch].name);
			else if (ret && !first_err)
				first_err = ret;
		}
	}
	close(conn);
	if (o.ibwb && !dead)
		ibwb_client();
	return first_err;
}

/* ------------------------------------------------------------ report */

/* mean_ns() - own mean time per transfer in ns (0 if none) */
static double mean_ns(const struct result *r)
{
	return r->done ? (double)r->ns_sum / r->done : 0;
}

/* mbps() - payload MB/s (10^6 bytes) over the mean kernel time */
static double mbps(const struct result *r)
{
	double ns = mean_ns(r);

	return ns > 0 ? r->size / ns * 1e3 : 0;
}

static const struct result *find(uint32_t channel, uint64_t size)
{
	unsigned int i;

	for (i = 0; i < nresults; i++)
		if (results[i].channel == channel && results[i].size == size &&
		    results[i].run && results[i].available &&
		    !results[i].status && results[i].done)
			return &results[i];
	return NULL;
}

/* frac() - MB/s of channel @a over MB/s of channel @b at @size, or 0 */
static double frac(uint32_t a, uint32_t b, uint64_t size)
{
	const struct result *x = find(a, size), *y = find(b, size);

	if (!x || !y || !mean_ns(x) || !mean_ns(y))
		return 0;
	return mean_ns(y) / mean_ns(x);
}

/* ibwb_mbps() - ib_write_bw's average in MB/s (10^6 B/s), or 0 */
static double ibwb_mbps(void)
{
	return ibwb.run && !ibwb.status ? ibwb.mib_s * 1.048576 : 0;
}

static const char *verified_str(const struct result *r)
{
	if (o.server) {
		if (r->verified == VER_OK)
			return "yes (seeded pattern)";
		if (r->verified == VER_BAD) {
			static char buf[64];

			hex(r->sha, 8, buf);
			strcat(buf, "... (sha256; not the pattern)");
			return buf;
		}
		return "-";
	}
	if (r->verified == VER_OK)
		return "yes (sha256 equal)";
	if (r->verified == VER_BAD)
		return "NO: sha256 differs";
	return "-";
}

static const char *status_str(const struct result *r, char *buf, size_t len)
{
	if (!r->available)
		snprintf(buf, len, "not available (EOPNOTSUPP)");
	else if (r->status)
		snprintf(buf, len, "failed: %s", errname(r->status));
	else if (!o.server && r->peer_status)
		snprintf(buf, len, "server failed: %s",
			 errname(r->peer_status));
	else if (!r->run)
		snprintf(buf, len, "not run");
	else
		buf[0] = '\0';
	return buf;
}

/* fmt_frac() - "0.87" or "n/a" into @buf */
static const char *fmt_frac(double v, char *buf, size_t len)
{
	snprintf(buf, len, v ? "%.2f" : "n/a", v);
	return buf;
}

static void print_ibwb_text(void)
{
	const struct result *m, *p;
	uint64_t big = o.sizes[o.nsizes - 1];
	char a[32], f1[16], f2[16];
	unsigned int s;

	if (!o.ibwb || o.server)
		return;
	if (!ibwb.run || ibwb.status) {
		printf("ib_write_bw not run: %s\n",
		       ibwb.run ? ibwb.why : "the run ended before it");
		return;
	}
	for (s = 0; s < o.nsizes; s++)
		if (o.sizes[s] > big)
			big = o.sizes[s];
	m = find(K_MMT, big);
	p = find(K_PLAIN, big);
	size_str(ibwb.msg_bytes, a, sizeof(a));
	printf("ib_write_bw %s x %u: %.2f MB/s (%.2f MiB/s); mmt/ib_write_bw %s; plain/ib_write_bw %s\n",
	       a, ibwb.iters, ibwb_mbps(), ibwb.mib_s,
	       fmt_frac(m ? mbps(m) / ibwb_mbps() : 0, f1, sizeof(f1)),
	       fmt_frac(p ? mbps(p) / ibwb_mbps() : 0, f2, sizeof(f2)));
	printf("# ib_write_bw: perftest between the same two nodes after the channels, RDMA writes of one closure (%s) each, as many as the largest size (%s); the mmt and plain figures are those of that size\n",
	       a, size_str(big, f1, sizeof(f1)));
}

static void print_text(void)
{
	unsigned int i, s, k;
	char a[32], b[32], st[64], f[NKIND + 3][32];
	bool rounded = false;

	printf("# mmt-bench %s: own node %u, peer node %u, RDMA device %s%s%s%s\n",
	       o.server ? "server" : "client", own_node, peer_node, rdma_dev,
	       *rdma_how ? " (" : "", rdma_how, *rdma_how ? ")" : "");
	printf("# mode %s, %u iteration(s), geometry %u levels, %u-byte blocks, closure %s; %s\n",
	       o.copy ? "copy" : "transfer", o.iters,
	       o.geom.levels ? o.geom.levels : 3,
	       1u << (o.geom.log_block_size ? o.geom.log_block_size : 6),
	       size_str(mmtu_geometry_closure_bytes(&o.geom), a, sizeof(a)),
	       !o.server ? "verification: the server's choice (-E)" :
	       o.eager ? "eager verification" : "lazy verification");
	if (o.key_default)
		printf("# key: the built-in TEST key (public; for benchmarking only)\n");
	printf("# channels: plain = raw RDMA writes of plain PMOs (no key); secure = AES-GCM secure channel on plain PMOs (the paper's baseline); secure-ctl = the secure channel on keyed PMOs, through the controllers; mmt = MMT delegation\n");
	printf("# time: kernel mmt_xfer.ns of MMT_IOC_%s, mean (min); wall: around the ioctl; MB/s: size / mean kernel time (1 MB = 10^6 B)\n",
	       o.server ? "RECV" : "SEND");
	printf("%-6s %-10s %-8s %-10s %5s %19s %9s %9s %10s  %s\n", "size",
	       "channel", "moved", "closures", "iters",
	       o.server ? "recv ms mean (min)" : "send ms mean (min)",
	       o.server ? "-" : "recv ms", "wall ms", "MB/s", "verified");
	for (i = 0; i < nresults; i++) {
		const struct result *r = &results[i];
		char tm[32], rv[32];

		size_str(r->size, a, sizeof(a));
		status_str(r, st, sizeof(st));
		if (*st && !r->done) {
			printf("%-6s %-10s %s\n", a, kinds[r->channel].name, st);
			continue;
		}
		rounded |= r->pmo_bytes != r->size;
		snprintf(tm, sizeof(tm), "%.3f (%.3f)", mean_ns(r) / 1e6,
			 r->ns_min / 1e6);
		if (o.server)
			snprintf(rv, sizeof(rv), "-");
		else if (r->peer_iters)
			snprintf(rv, sizeof(rv), "%.3f", (double)r->peer_ns_sum /
				 r->peer_iters / 1e6);
		else
			snprintf(rv, sizeof(rv), "n/a");
		printf("%-6s %-10s %-8s %4llux%-5s %5u %19s %9s %9.3f %10.2f  %s%s%s\n",
		       a, kinds[r->channel].name,
		       size_str(r->pmo_bytes, b, sizeof(b)),
		       (unsigned long long)r->closures,
		       size_str(r->closure_bytes, st, sizeof(st)), r->done, tm,
		       rv, r->wall_sum / r->done * 1e3, mbps(r),
		       verified_str(r), r->status ? ", failed: " : "",
		       r->status ? errname(r->status) : "");
	}
	for (i = 0; i < nresults; i++)
		if (results[i].channel == K_MMT && results[i].run &&
		    results[i].closure_bytes) {
			printf("# the MMT channel also moves %.1f%% metadata per closure (data MACs, tree nodes, sealed root)\n",
			       100.0 * results[i].meta_bytes /
			       results[i].closure_bytes);
			break;
		}
	if (rounded)
		printf("# moved > size: a PMO is whole closures; the MMT channel rounds up to its closure, the plain and secure channels use the closure size (1..%u levels) needing the fewest closures for at most twice the size\n",
		       o.geom.levels);
	if (o.server)
		return;
	printf("\n# MB/s per channel; mmt/plain: MMT delegation's MB/s as a fraction of the plain channel's (paper: 9.68 / 11 GB/s = 0.88); secure/mmt and secure-ctl/mmt: the secure channel's MB/s as a fraction of MMT delegation's (paper: 1/13)\n");
	printf("%-6s %10s %10s %10s %10s %10s %11s %15s\n", "size", "plain",
	       "secure", "secure-ctl", "mmt", "mmt/plain", "secure/mmt",
	       "secure-ctl/mmt");
	for (s = 0; s < o.nsizes; s++) {
		for (k = 0; k < NKIND; k++) {
			const struct result *r = find(k, o.sizes[s]);

			snprintf(f[k], 32, r ? "%.2f" : "n/a", r ? mbps(r) : 0);
		}
		fmt_frac(frac(K_MMT, K_PLAIN, o.sizes[s]), f[NKIND], 32);
		fmt_frac(frac(K_SECURE, K_MMT, o.sizes[s]), f[NKIND + 1], 32);
		fmt_frac(frac(K_SECURE_CTL, K_MMT, o.sizes[s]), f[NKIND + 2],
			 32);
		size_str(o.sizes[s], a, sizeof(a));
		printf("%-6s %10s %10s %10s %10s %10s %11s %15s\n", a,
		       f[K_PLAIN], f[K_SECURE], f[K_SECURE_CTL], f[K_MMT],
		       f[NKIND], f[NKIND + 1], f[NKIND + 2]);
	}
	print_ibwb_text();
}

/* json_num() - a number, or null for 0 */
static void json_num(const char *name, double v, const char *tail)
{
	if (v)
		printf("\"%s\":%.4f%s", name, v, tail);
	else
		printf("\"%s\":null%s", name, tail);
}

static void print_json(void)
{
	unsigned int i, s;
	char h[65], st[64];

	printf("{\"tool\":\"mmt-bench\",\"role\":\"%s\",\"own_node\":%u,\"peer_node\":%u,",
	       o.server ? "server" : "client", own_node, peer_node);
	printf("\"rdma_device\":\"%s\",\"mode\":\"%s\",\"iters\":%u,\"levels\":%u,\"block\":%u,\"closure_bytes\":%llu,\"eager\":%s,\"test_key\":%s,",
	       rdma_dev, o.copy ? "copy" : "transfer", o.iters,
	       o.geom.levels ? o.geom.levels : 3,
	       1u << (o.geom.log_block_size ? o.geom.log_block_size : 6),
	       (unsigned long long)mmtu_geometry_closure_bytes(&o.geom),
	       o.eager ? "true" : "false", o.key_default ? "true" : "false");
	printf("\"results\":[");
	for (i = 0; i < nresults; i++) {
		const struct result *r = &results[i];

		hex(o.server ? r->sha : r->peer_sha, 32, h);
		status_str(r, st, sizeof(st));
		printf("%s{\"size\":%llu,\"channel\":\"%s\",\"keyed_pmos\":%s,\"available\":%s,\"status\":\"%s\",",
		       i ? "," : "", (unsigned long long)r->size,
		       kinds[r->channel].name,
		       kinds[r->channel].keyed ? "true" : "false",
		       r->available ? "true" : "false",
		       *st ? st : "ok");
		printf("\"moved_bytes\":%llu,\"closure_bytes\":%llu,\"closures\":%llu,\"meta_bytes_per_closure\":%llu,\"rounded_up\":%s,",
		       (unsigned long long)r->pmo_bytes,
		       (unsigned long long)r->closure_bytes,
		       (unsigned long long)r->closures,
		       (unsigned long long)r->meta_bytes,
		       r->pmo_bytes != r->size ? "true" : "false");
		printf("\"iters\":%u,\"ns_mean\":%.0f,\"ns_min\":%llu,\"ns_max\":%llu,\"wall_ns_mean\":%.0f,\"mb_per_s\":%.3f,",
		       r->done, mean_ns(r),
		       (unsigned long long)(r->done ? r->ns_min : 0),
		       (unsigned long long)r->ns_max,
		       r->done ? r->wall_sum / r->done * 1e9 : 0.0, mbps(r));
		if (!o.server)
			printf("\"server_recv_ns_mean\":%.0f,",
			       r->peer_iters ? (double)r->peer_ns_sum /
			       r->peer_iters : 0.0);
		printf("\"verified\":%s,\"sha256\":\"%s\"}",
		       r->verified == VER_OK ? "true" : "false",
		       r->verified ? h : "");
	}
	printf("],\"ratios\":[");
	for (s = 0; s < o.nsizes; s++) {
		printf("%s{\"size\":%llu,", s ? "," : "",
		       (unsigned long long)o.sizes[s]);
		json_num("mmt_over_plain", frac(K_MMT, K_PLAIN, o.sizes[s]),
			 ",");
		json_num("secure_over_mmt", frac(K_SECURE, K_MMT, o.sizes[s]),
			 ",");
		json_num("secure_ctl_over_mmt",
			 frac(K_SECURE_CTL, K_MMT, o.sizes[s]), "}");
	}
	printf("],\"ib_write_bw\":");
	if (!o.ibwb || o.server || !ibwb.run || ibwb.status)
		printf("null");
	else
		printf("{\"msg_bytes\":%llu,\"iters\":%u,\"mib_per_s\":%.3f,\"mb_per_s\":%.3f}",
		       (unsigned long long)ibwb.msg_bytes, ibwb.iters,
		       ibwb.mib_s, ibwb_mbps());
	printf("}\n");
}

/* ------------------------------------------------------------ main */

static void help(void)
{
	printf("usage: mmt-bench -S [options]            server: listen, receive\n"
	       "       mmt-bench [options] SERVER_ADDR    client: connect, send\n"
	       "\n"
	       "Both sides need the same -s, -n, --channel, --mode, --levels, --block\n"
	       "and key.  Options:\n"
	       "  -S, --server          listen and receive (default: client)\n"
	       "  -B, --bind ADDR       server: listen address (default: any IPv4;\n"
	       "                        '::' for IPv6 and IPv4)\n"
	       "  -p, --port N          port (default %d)\n"
	       "  -d, --device NAME     informational: the RDMA device follows the\n"
	       "                        route; the one found in /sys is printed\n"
	       "  -s, --sizes LIST      sizes, K/M/G suffixes (default %s)\n"
	       "  -n, --iters N         transfers per size and channel (default %d)\n"
	       "  -c, --channel LIST    plain, secure, secure-ctl, mmt or all (default\n"
	       "                        all): plain and secure on plain PMOs (no\n"
	       "                        key), secure-ctl (the secure channel through\n"
	       "                        the controllers) and mmt on keyed PMOs\n"
	       "      --ib-write-bw     after the channels, run perftest's ib_write_bw\n"
	       "                        between the two nodes (one closure per write)\n"
	       "                        and report it beside them\n"
	       "  -m, --mode M          transfer (default) or copy (MMT channel)\n"
	       "      --levels L        MMT levels 1..4 (default 3: 2 MiB closures)\n"
	       "      --block B         block size in bytes, 64..4096 (default 64)\n"
	       "      --key-hex HEX     MMT key, 32 or 64 hex digits; default: a\n"
	       "                        fixed public TEST key, for benchmarks only\n"
	       "  -E, --eager           server: verify every closure on receipt\n"
	       "  -t, --timeout MS      per answer of the peer (default %d)\n"
	       "  -i, --node-id N       set this node's id first (CAP_SYS_ADMIN)\n"
	       "      --seed N          pattern seed (default 1)\n"
	       "      --in FILE         client: send FILE's bytes (zero padded)\n"
	       "                        instead of the pattern; default sizes:\n"
	       "                        the file's size\n"
	       "      --out FILE        server: write the received payload of the\n"
	       "                        last iteration to FILE (FILE.CHANNEL.SIZE\n"
	       "                        for several sizes or channels)\n"
	       "      --json            one JSON object on stdout instead of tables\n"
	       "  -q, --quiet           no progress lines on stderr\n"
	       "\n"
	       "Exit status: 0 ok (unavailable channels are reported, not failed);\n"
	       "1 usage; 2 system or ioctl error; 3 integrity (a rejected closure, or\n"
	       "the received data differ).\n",
	       DEFAULT_PORT, DEFAULT_SIZES, DEFAULT_ITERS, DEFAULT_TIMEOUT);
}

enum {
	OPT_LEVELS = 256, OPT_BLOCK, OPT_KEYHEX, OPT_JSON, OPT_SEED, OPT_IN,
	OPT_OUT, OPT_IBWB,
};

static const struct option long_opts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "server", no_argument, NULL, 'S' },
	{ "bind", required_argument, NULL, 'B' },
	{ "port", required_argument, NULL, 'p' },
	{ "device", required_argument, NULL, 'd' },
	{ "sizes", required_argument, NULL, 's' },
	{ "iters", required_argument, NULL, 'n' },
	{ "channel", required_argument, NULL, 'c' },
	{ "mode", required_argument, NULL, 'm' },
	{ "eager", no_argument, NULL, 'E' },
	{ "timeout", required_argument, NULL, 't' },
	{ "node-id", required_argument, NULL, 'i' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "levels", required_argument, NULL, OPT_LEVELS },
	{ "block", required_argument, NULL, OPT_BLOCK },
	{ "key-hex", required_argument, NULL, OPT_KEYHEX },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "in", required_argument, NULL, OPT_IN },
	{ "out", required_argument, NULL, OPT_OUT },
	{ "ib-write-bw", no_argument, NULL, OPT_IBWB },
	{ NULL, 0, NULL, 0 }
};

static void read_file(const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	uint64_t done = 0;
	ssize_t n;

	if (fd < 0 || fstat(fd, &st)) {
		perror(path);
		exit(EXIT_SYS);
	}
	file_len = st.st_size;
	file_data = malloc(file_len ? file_len : 1);
	if (!file_data) {
		fprintf(stderr, "mmt-bench: %s: out of memory\n", path);
		exit(EXIT_SYS);
	}
	while (done < file_len) {
		n = read(fd, file_data + done, file_len - done);
		if (n <= 0) {
			perror(path);
			exit(EXIT_SYS);
		}
		done += n;
	}
	close(fd);
}

int main(int argc, char **argv)
{
	struct mmt_query q;
	bool sizes_given = false;
	unsigned int i, b;
	int opt, ret;

	o.port = DEFAULT_PORT;
	o.iters = DEFAULT_ITERS;
	o.timeout_ms = DEFAULT_TIMEOUT;
	o.seed = 1;
	parse_sizes(DEFAULT_SIZES);
	parse_channels("all");
	while ((opt = getopt_long(argc, argv, "hSB:p:d:s:n:c:m:Et:i:q",
				  long_opts, NULL)) != -1) {
		switch (opt) {
		case 'h':
			help();
			return 0;
		case 'S':
			o.server = true;
			break;
		case 'B':
			o.bind = optarg;
			break;
		case 'p':
			o.port = parse_uint("--port", optarg, 1, 65535);
			break;
		case 'd':
			o.device = optarg;
			break;
		case 's':
			parse_sizes(optarg);
			sizes_given = true;
			break;
		case 'n':
			o.iters = parse_uint("--iters", optarg, 1, 1000000);
			break;
		case 'c':
			parse_channels(optarg);
			break;
		case 'm':
			if (!strcmp(optarg, "copy"))
				o.copy = true;
			else if (!strcmp(optarg, "transfer"))
				o.copy = false;
			else
				usage_err("--mode: transfer or copy");
			break;
		case 'E':
			o.eager = true;
			break;
		case 't':
			o.timeout_ms = parse_uint("--timeout", optarg, 1,
						  600000);
			break;
		case 'i':
			o.node_id = parse_uint("--node-id", optarg, 1, 65535);
			break;
		case 'q':
			o.quiet = true;
			break;
		case OPT_LEVELS:
			o.geom.levels = parse_uint("--levels", optarg, 1,
						   MMT_GEOM_MAX_LEVELS);
			break;
		case OPT_BLOCK:
			b = parse_uint("--block", optarg, 64, 4096);
			if (b & (b - 1))
				usage_err("--block: a power of two, 64..4096");
			o.geom.log_block_size = __builtin_ctz(b);
			break;
		case OPT_KEYHEX:
			parse_key(optarg);
			break;
		case OPT_JSON:
			o.json = true;
			break;
		case OPT_SEED:
			o.seed = parse_size("--seed", optarg, NULL);
			break;
		case OPT_IN:
			o.in = optarg;
			break;
		case OPT_OUT:
			o.out = optarg;
			break;
		case OPT_IBWB:
			o.ibwb = true;
			break;
		default:
			usage_err("unknown option");
		}
	}
	if (o.server && optind != argc)
		usage_err("the server takes no address (use --bind)");
	if (!o.server) {
		if (optind != argc - 1)
			usage_err("the client needs the server's address");
		o.peer = argv[optind];
		if (o.out)
			usage_err("--out is for the server");
	} else if (o.in) {
		usage_err("--in is for the client");
	}
	if (!o.geom.levels)
		o.geom.levels = 3;
	if (!mmtu_geometry_closure_bytes(&o.geom))
		usage_err("--levels/--block: no such geometry (at most 2^20 blocks per closure)");
	if (!o.chan[K_PLAIN] && !o.chan[K_SECURE] && !o.chan[K_SECURE_CTL] &&
	    !o.chan[K_MMT])
		usage_err("--channel: none given");
	if (o.in) {
		read_file(o.in);
		if (!sizes_given) {
			if (!file_len)
				usage_err("--in: %s is empty", o.in);
			o.nsizes = 1;
			o.sizes[0] = file_len;
		}
	}
	if (!o.key_len) {
		parse_key(DEFAULT_KEY_HEX);
		o.key_default = true;
		fprintf(stderr,
			"mmt-bench: NOTE: using the built-in TEST key %s: public, for benchmarking only (--key-hex for a real one)\n",
			DEFAULT_KEY_HEX);
	}

	devfd = mmtu_open();
	if (devfd < 0)
		die_err("/dev/mmt", devfd);
	if (o.node_id) {
		ret = mmtu_set_node_id(devfd, o.node_id);
		if (ret)
			die_err("MMT_IOC_SET_NODE_ID", ret);
	}
	ret = mmtu_query(devfd, &q);
	if (ret)
		die_err("MMT_IOC_QUERY", ret);
	own_node = q.node_id;
	if (!(q.features & MMT_FEAT_RDMA)) {
		fprintf(stderr,
			"mmt-bench: this module has no RDMA connections (no MMT_FEAT_RDMA): modprobe rdma_cm before insmod, or a kernel with CONFIG_INFINIBAND\n");
		return EXIT_SYS;
	}

	ret = o.server ? run_server() : run_client();
	if (o.json)
		print_json();
	else
		print_text();
	fflush(stdout);
	if (ret) {
		fprintf(stderr, "mmt-bench: failed: %s (%s)%s\n",
			mmtu_strerror(ret), errname(ret),
			ret == -EBADMSG ? "; the same --key-hex on both sides?" :
			ret == -EMEDIUMTYPE || ret == -EPROTO ?
			"; the same options on both sides?" : "");
		return ret == -EBADMSG || ret == -ESTALE || ret == -EILSEQ ?
			EXIT_INTEGRITY : EXIT_SYS;
	}
	for (i = 0; i < nresults; i++)
		if (results[i].verified == VER_BAD && !o.server)
			return EXIT_INTEGRITY;
	return 0;
}
