// SPDX-License-Identifier: GPL-2.0
/*
 * mmtctl - command-line tool for the software MMT controller (/dev/mmt)
 *
 * A PMO lives as long as a file descriptor refers to it, so a one-shot
 * command cannot keep one between invocations.  mmtctl offers two ways:
 *
 *  - whole flows in one process: `roundtrip` (create, key, write a file,
 *    read it back out), `delegate` (two PMOs, local delegation, read from
 *    the receiver), `create` / `info` (create a PMO and report it);
 *  - `with-pmo ... -- CMD`: create (and key) a PMO and exec CMD with the
 *    PMO as fd 3 (MMT_PMO_FD=3 in its environment); inside, the fd
 *    subcommands `write`, `read`, `info`, `key`, `set-counter`,
 *    `invalidate`, `delegate --fd`, `tamper` work on that fd with --fd 3.
 *
 * Exit codes: 0 success; 1 usage error; 2 system or ioctl error; 3
 * integrity failure reported by the module (EBADMSG, ESTALE, EILSEQ); 4 the
 * plaintext read back differs from what was written.
 *
 * `mmtctl --help` and `mmtctl SUBCOMMAND --help` describe the options;
 * docs/USAGE.md has examples.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "libmmt.h"

#define EXIT_USAGE	1
#define EXIT_SYS	2
#define EXIT_INTEGRITY	3
#define EXIT_MISMATCH	4

/* Options; each subcommand accepts a subset (struct subcmd.opts). */
enum {
	O_JSON = 1 << 0,
	O_SIZE = 1 << 1,
	O_GEOM = 1 << 2,	/* --levels --block --arity */
	O_KEY = 1 << 3,		/* --key-hex --key-file */
	O_IN = 1 << 4,
	O_OUT = 1 << 5,
	O_FD = 1 << 6,
	O_OFFSET = 1 << 7,
	O_LENGTH = 1 << 8,
	O_MODE = 1 << 9,	/* --mode --eager */
	O_RECEIVE = 1 << 10,
	O_NOKEY = 1 << 11,
	O_COUNTER = 1 << 12,
	O_TOFD = 1 << 13,
	O_RXKEY = 1 << 14,	/* --receiver-key-hex */
	O_TAMPER = 1 << 15,	/* --region --closure --xor */
	O_DEV = 1 << 16,
	O_NODE = 1 << 17,
	O_MIG = 1 << 18,	/* --role --peer --port --listen --downtime ... */
};

enum {
	OPT_LEVELS = 256, OPT_BLOCK, OPT_ARITY, OPT_KEYHEX, OPT_KEYFILE,
	OPT_OFFSET, OPT_LENGTH, OPT_MODE, OPT_EAGER, OPT_RECEIVE, OPT_NOKEY,
	OPT_COUNTER, OPT_TOFD, OPT_RXKEY, OPT_REGION, OPT_CLOSURE, OPT_XOR,
	OPT_DEV, OPT_NODE, OPT_ROLE, OPT_PEER, OPT_PORT, OPT_LISTEN,
	OPT_DOWNTIME, OPT_ROUNDS, OPT_WINDOW, OPT_TIMEOUT, OPT_PARK,
};

static const struct option long_opts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "json", no_argument, NULL, 'j' },
	{ "size", required_argument, NULL, 's' },
	{ "in", required_argument, NULL, 'i' },
	{ "out", required_argument, NULL, 'o' },
	{ "fd", required_argument, NULL, 'f' },
	{ "levels", required_argument, NULL, OPT_LEVELS },
	{ "block", required_argument, NULL, OPT_BLOCK },
	{ "arity", required_argument, NULL, OPT_ARITY },
	{ "key-hex", required_argument, NULL, OPT_KEYHEX },
	{ "key-file", required_argument, NULL, OPT_KEYFILE },
	{ "offset", required_argument, NULL, OPT_OFFSET },
	{ "length", required_argument, NULL, OPT_LENGTH },
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "eager", no_argument, NULL, OPT_EAGER },
	{ "receive", no_argument, NULL, OPT_RECEIVE },
	{ "no-key", no_argument, NULL, OPT_NOKEY },
	{ "counter", required_argument, NULL, OPT_COUNTER },
	{ "to-fd", required_argument, NULL, OPT_TOFD },
	{ "receiver-key-hex", required_argument, NULL, OPT_RXKEY },
	{ "region", required_argument, NULL, OPT_REGION },
	{ "closure", required_argument, NULL, OPT_CLOSURE },
	{ "xor", required_argument, NULL, OPT_XOR },
	{ "dev", required_argument, NULL, OPT_DEV },
	{ "node-id", required_argument, NULL, OPT_NODE },
	{ "role", required_argument, NULL, OPT_ROLE },
	{ "peer", required_argument, NULL, OPT_PEER },
	{ "port", required_argument, NULL, OPT_PORT },
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "downtime", required_argument, NULL, OPT_DOWNTIME },
	{ "rounds", required_argument, NULL, OPT_ROUNDS },
	{ "window", required_argument, NULL, OPT_WINDOW },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "park", no_argument, NULL, OPT_PARK },
	{ NULL, 0, NULL, 0 }
};

/* Parsed command line. */
struct args {
	unsigned int given;	/* O_* bits of the options given */
	bool json;
	uint64_t size;
	struct mmt_geometry geom;
	uint8_t key[32];
	size_t key_len;
	uint8_t rxkey[32];
	size_t rxkey_len;
	const char *in, *out, *dev;
	int fd, to_fd;
	uint64_t offset, length, counter;
	bool copy, eager, receive, nokey, mode_given, region_given, park;
	uint32_t region, closure, node_id;
	uint8_t xor_mask;
	char **rest;		/* with-pmo: the command */
	const char *role, *peer, *listen_addr;	/* migrate */
	uint32_t port, downtime, rounds, window, timeout;
};

struct subcmd {
	const char *name;
	int (*run)(struct args *a);
	unsigned int opts;	/* accepted O_* */
	const char *synopsis;
	const char *help;
};

static const char *prog = "mmtctl";
static const struct subcmd *cur;

/* ------------------------------------------------------------ messages */

static void __attribute__((format(printf, 1, 2))) usage_err(const char *fmt,
							    ...)
{
	va_list ap;

	fprintf(stderr, "%s%s%s: ", prog, cur ? " " : "",
		cur ? cur->name : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s %s%s--help'.\n", prog,
		cur ? cur->name : "", cur ? " " : "");
	exit(EXIT_USAGE);
}

/*
 * fail() - report a failed call and return the exit code for @err: 3 for the
 * integrity errors, 2 for everything else
 */
static int fail(const char *what, int err)
{
	int e = err < 0 ? -err : err;
	const char *name = strerrorname_np(e);

	fprintf(stderr, "%s: %s: %s (%s: %s)\n", prog, what, strerror(e),
		name ? name : "?", mmtu_strerror(e));
	err = e;
	if (err == EBADMSG || err == ESTALE || err == EILSEQ)
		return EXIT_INTEGRITY;
	return EXIT_SYS;
}

/* ------------------------------------------------------------ parsing */

/* parse_u64() - number with optional K/M/G/T suffix (binary) and +N */
static uint64_t parse_u64(const char *opt, const char *s)
{
	unsigned long long v, add = 0;
	char *end;
	int shift = 0;

	errno = 0;
	if (!isdigit((unsigned char)*s))
		usage_err("--%s: not a number: '%s'", opt, s);
	v = strtoull(s, &end, 0);
	if (errno)
		usage_err("--%s: out of range: '%s'", opt, s);
	switch (*end) {
	case 'k':
	case 'K':
		shift = 10;
		end++;
		break;
	case 'm':
	case 'M':
		shift = 20;
		end++;
		break;
	case 'g':
	case 'G':
		shift = 30;
		end++;
		break;
	case 't':
	case 'T':
		shift = 40;
		end++;
		break;
	}
	if (*end == 'i' && end[1] == 'B' && shift)
		end += 2;
	if (*end == '+') {
		add = strtoull(end + 1, &end, 0);
		if (errno)
			usage_err("--%s: out of range: '%s'", opt, s);
	}
	if (*end)
		usage_err("--%s: bad number '%s'", opt, s);
	if (shift && v > (~0ULL >> shift))
		usage_err("--%s: out of range: '%s'", opt, s);
	v <<= shift;
	if (v + add < v)
		usage_err("--%s: out of range: '%s'", opt, s);
	return v + add;
}

static int parse_fd(const char *opt, const char *s)
{
	uint64_t v = parse_u64(opt, s);

	if (v > 1 << 20)
		usage_err("--%s: not a file descriptor: '%s'", opt, s);
	return (int)v;
}

/* log2 of a power of two in [lo, hi], else usage error */
static uint8_t parse_log2(const char *opt, const char *s, unsigned int lo,
			  unsigned int hi)
{
	uint64_t v = parse_u64(opt, s);
	unsigned int l;

	for (l = lo; l <= hi; l++)
		if (v == 1ULL << l)
			return l;
	usage_err("--%s: must be a power of two from %llu to %llu", opt,
		  1ULL << lo, 1ULL << hi);
	return 0;
}

/* parse_hex_key() - 32 or 64 hex digits into @key; returns the length */
static size_t parse_hex_key(const char *opt, const char *s, uint8_t *key)
{
	size_t n = strlen(s), bad = 0;
	int ret;

	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	ret = mmtu_key_from_hex(s, n, key, &bad);
	if (ret == -EINVAL)
		usage_err("--%s: need 32 or 64 hex digits (16 or 32 bytes), got %zu characters",
			  opt, n);
	if (ret < 0)	/* the pair's first digit, as before */
		usage_err("--%s: not a hex digit at %zu", opt, bad & ~(size_t)1);
	return ret;
}

/* read_file() - whole file (or stdin for "-") into a malloc'ed buffer */
static int read_file(const char *path, uint8_t **bufp, size_t *lenp)
{
	size_t cap = 1 << 16, len = 0;
	uint8_t *buf = malloc(cap), *nb;
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : 0;
	ssize_t n;

	if (!buf || fd < 0) {
		int err = errno;

		free(buf);
		fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(err));
		return -err;
	}
	for (;;) {
		if (len == cap) {
			cap *= 2;
			nb = realloc(buf, cap);
			if (!nb) {
				n = -1;
				break;
			}
			buf = nb;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += n;
	}
	if (n < 0) {
		int err = errno;

		fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(err));
		free(buf);
		if (fd)
			close(fd);
		return -err;
	}
	if (fd)
		close(fd);
	*bufp = buf;
	*lenp = len;
	return 0;
}

/* write_file() - @len bytes to a new file (or stdout for "-") */
static int write_file(const char *path, const uint8_t *buf, size_t len)
{
	int fd = strcmp(path, "-") ?
		open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : 1;
	size_t done = 0;
	ssize_t n;

	if (fd < 0)
		goto err;
	while (done < len) {
		n = write(fd, buf + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto err;
		done += n;
	}
	if (fd != 1 && close(fd) < 0) {
		fd = -1;
		goto err;
	}
	return 0;
err:
	n = errno;
	fprintf(stderr, "%s: %s: %s\n", prog, path, strerror((int)n));
	if (fd > 1)
		close(fd);
	return -(int)n;
}

/* key from --key-file: 16/32 raw bytes, or 32/64 hex digits (+ newline) */
static size_t load_key_file(const char *path, uint8_t *key)
{
	uint8_t *buf;
	size_t len, n;
	char hex[80];

	if (read_file(path, &buf, &len))
		exit(EXIT_SYS);
	if (len == 16 || len == 32) {
		memcpy(key, buf, len);
		explicit_bzero(buf, len);
		free(buf);
		return len;
	}
	if (len >= sizeof(hex)) {
		free(buf);
		usage_err("--key-file %s: need 16 or 32 raw bytes or 32/64 hex digits, got %zu bytes",
			  path, len);
	}
	memcpy(hex, buf, len);
	hex[len] = 0;
	explicit_bzero(buf, len);
	free(buf);
	n = parse_hex_key("key-file", hex, key);
	explicit_bzero(hex, sizeof(hex));
	return n;
}

/* ------------------------------------------------------------ output */

static void print_geometry_json(const struct mmt_pmo_info *in)
{
	int l;

	printf("\"geometry\": {\"levels\": %u, \"block_size\": %u, \"arity\": [",
	       in->geometry.levels, in->block_size);
	for (l = 0; l < in->geometry.levels && l < MMT_GEOM_MAX_LEVELS; l++)
		printf("%s%u", l ? ", " : "", 1u << in->geometry.log_arity[l]);
	printf("]}");
}

/* print_info() - a PMO's info and MMTs, human or JSON (one object) */
static void print_info(const char *label, const struct mmt_pmo_info *in,
		       const struct mmt_mmt_info *m, bool json)
{
	double ratio = in->closure_bytes ?
		(double)in->meta_bytes / in->closure_bytes : 0;
	uint32_t i;
	int l;

	if (json) {
		printf("{\"bytes\": %" PRIu64 ", ", (uint64_t)in->bytes);
		print_geometry_json(in);
		printf(", \"closures\": %u, \"closure_bytes\": %" PRIu64
		       ", \"meta_bytes\": %" PRIu64 ", \"meta_ratio\": %.4f"
		       ", \"key_len\": %u, \"mig_unknown\": %s, \"mmts\": [",
		       in->closures, (uint64_t)in->closure_bytes,
		       (uint64_t)in->meta_bytes, ratio, in->key_len,
		       in->flags & MMT_PMO_INFO_MIG_UNKNOWN ? "true" : "false");
		for (i = 0; i < in->mmt_count; i++)
			printf("%s{\"index\": %u, \"state\": \"%s\", \"read_only\": %s, \"regua_due\": %s, \"plain\": %s, \"gua\": \"0x%" PRIx64
			       "\", \"root_counter\": %" PRIu64
			       ", \"top_major\": %" PRIu64 "}",
			       i ? ", " : "", i, mmtu_state_str(m[i].state),
			       m[i].flags & MMT_INFO_READ_ONLY ? "true" :
			       "false",
			       m[i].flags & MMT_INFO_REGUA_DUE ? "true" :
			       "false",
			       m[i].flags & MMT_INFO_PLAIN ? "true" : "false",
			       (uint64_t)m[i].gua,
			       (uint64_t)m[i].root_counter,
			       (uint64_t)m[i].top_major);
		printf("]}");
		return;
	}
	printf("%s:\n", label);
	printf("  bytes:          %" PRIu64 "\n", (uint64_t)in->bytes);
	printf("  geometry:       %u levels, %u-byte blocks, arity",
	       in->geometry.levels, in->block_size);
	for (l = 0; l < in->geometry.levels && l < MMT_GEOM_MAX_LEVELS; l++)
		printf(" %u", 1u << in->geometry.log_arity[l]);
	printf(" (leaf first)\n");
	printf("  closures:       %u of %" PRIu64 " bytes\n", in->closures,
	       (uint64_t)in->closure_bytes);
	printf("  metadata:       %" PRIu64 " bytes per closure (%.2f%% of data)\n",
	       (uint64_t)in->meta_bytes, 100 * ratio);
	printf("  key:            %s\n", in->key_len == 32 ? "AES-256" :
	       in->key_len == 16 ? "AES-128" :
	       "none (plain memory: read and write copy its bytes)");
	if (in->flags & MMT_PMO_INFO_MIG_UNKNOWN)
		printf("  moved:          outcome unknown (a migration, or a transfer whose last verdicts were lost): read-only (EUCLEAN) until resolved on the destination's statement (MMT_IOC_MIGRATE_RESOLVE on a connection to it)\n");
	for (i = 0; i < in->mmt_count; i++)
		printf("  mmt %-4u        %-7s%s gua 0x%015" PRIx64
		       " root_counter %" PRIu64 " top_major %" PRIu64 "%s\n",
		       i, mmtu_state_str(m[i].state),
		       m[i].flags & MMT_INFO_READ_ONLY ? " ro" :
		       m[i].flags & MMT_INFO_PLAIN ? " plain" : "   ",
		       (uint64_t)m[i].gua, (uint64_t)m[i].root_counter,
		       (uint64_t)m[i].top_major,
		       m[i].flags & MMT_INFO_REGUA_DUE ?
		       " (regua due: a failed transfer, memory does not verify)" :
		       "");
	if (in->mmt_count < in->closures)
		printf("  (%u more MMTs not shown)\n",
		       in->closures - in->mmt_count);
}

/* get_info() - MMT_IOC_PMO_INFO with room for every MMT; caller frees */
static int get_info(int fd, struct mmt_pmo_info *in, struct mmt_mmt_info **mp)
{
	struct mmt_mmt_info *m;
	int ret;

	ret = mmtu_pmo_info(fd, in, NULL, 0);
	if (ret)
		return ret;
	m = calloc(in->closures ? in->closures : 1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	ret = mmtu_pmo_info(fd, in, m, in->closures);
	if (ret) {
		free(m);
		return ret;
	}
	*mp = m;
	return 0;
}

/* show_pmo() - get and print a PMO's info; returns an exit code */
static int show_pmo(const char *label, int fd, bool json)
{
	struct mmt_pmo_info in;
	struct mmt_mmt_info *m;
	int ret = get_info(fd, &in, &m);

	if (ret)
		return fail("MMT_IOC_PMO_INFO", ret);
	print_info(label, &in, m, json);
	free(m);
	return 0;
}

/* ------------------------------------------------------------ helpers */

static int open_dev(const struct args *a)
{
	int fd = a->dev ? mmtu_open_path(a->dev) : mmtu_open();

	if (fd < 0) {
		fail(a->dev ? a->dev : MMTU_DEV_PATH, fd);
		exit(EXIT_SYS);
	}
	return fd;
}

/* the key to use: --key-hex/--key-file, or a random one */
static void ensure_key(struct args *a)
{
	if (a->key_len)
		return;
	if (getrandom(a->key, 16, 0) != 16) {
		fprintf(stderr, "%s: getrandom: %s\n", prog, strerror(errno));
		exit(EXIT_SYS);
	}
	a->key_len = 16;
}

/* PMO size: --size (or @min) rounded up to a multiple of the closure */
static uint64_t pmo_size(const struct args *a, uint64_t min)
{
	uint64_t cb = mmtu_geometry_closure_bytes(&a->geom);
	uint64_t want = a->given & O_SIZE ? a->size : min;

	if (!cb)
		usage_err("geometry out of range (levels 1..4, block 64..4096, arity 2..64, at most 2^20 blocks per closure)");
	if (want < min)
		usage_err("--size %" PRIu64 " is smaller than the %" PRIu64 " bytes needed",
			  want, min);
	if (!want)
		want = 1;
	if (want > UINT64_MAX - cb)
		usage_err("--size too large");
	return (want + cb - 1) / cb * cb;
}

/* create_pmo() - create and (unless --no-key) key a PMO; exits on error */
static int create_pmo(int dev, struct args *a, uint64_t bytes,
		      uint64_t key_flags, struct mmt_pmo_create *c)
{
	int fd, ret;

	fd = mmtu_pmo_create(dev, bytes, &a->geom, 0, c);
	if (fd < 0)
		exit(fail("MMT_IOC_PMO_CREATE", fd));
	if (a->nokey)
		return fd;
	ensure_key(a);
	ret = mmtu_pmo_set_key(fd, a->key, a->key_len, key_flags);
	if (ret)
		exit(fail("MMT_IOC_PMO_SET_KEY", ret));
	return fd;
}

static uint8_t *xmalloc(size_t n)
{
	uint8_t *p = malloc(n ? n : 1);

	if (!p) {
		fprintf(stderr, "%s: out of memory (%zu bytes)\n", prog, n);
		exit(EXIT_SYS);
	}
	return p;
}

/* ------------------------------------------------------------ subcommands */

static int cmd_query(struct args *a)
{
	struct mmt_query q;
	int dev = open_dev(a), ret;

	ret = mmtu_query(dev, &q);
	close(dev);
	if (ret)
		return fail("MMT_IOC_QUERY", ret);
	q.module_version[sizeof(q.module_version) - 1] = 0;
	if (a->json) {
		printf("{\"api_version\": %u, \"closure_version\": %u, \"features\": \"0x%" PRIx64
		       "\", \"pmo\": %s, \"local_delegate\": %s, \"debug\": %s, \"rdma\": %s, \"node_id\": %u, \"module_version\": \"%s\"}\n",
		       q.api_version, q.closure_version, (uint64_t)q.features,
		       q.features & MMT_FEAT_PMO ? "true" : "false",
		       q.features & MMT_FEAT_LOCAL_DELEGATE ? "true" : "false",
		       q.features & MMT_FEAT_DEBUG ? "true" : "false",
		       q.features & MMT_FEAT_RDMA ? "true" : "false",
		       q.node_id, q.module_version);
		return 0;
	}
	printf("module version:   %s\n", q.module_version);
	printf("api version:      %u (this tool: %u)\n", q.api_version,
	       MMT_API_VERSION);
	printf("closure version:  %u\n", q.closure_version);
	printf("features:         0x%" PRIx64 "%s%s%s%s%s\n",
	       (uint64_t)q.features,
	       q.features & MMT_FEAT_QUERY ? " query" : "",
	       q.features & MMT_FEAT_PMO ? " pmo" : "",
	       q.features & MMT_FEAT_LOCAL_DELEGATE ? " local-delegate" : "",
	       q.features & MMT_FEAT_RDMA ? " rdma" : "",
	       q.features & MMT_FEAT_DEBUG ? " debug" : "");
	printf("node id:          %u\n", q.node_id);
	return 0;
}

static int cmd_set_node_id(struct args *a)
{
	int dev = open_dev(a), ret;

	if (!(a->given & O_NODE))
		usage_err("--node-id is required");
	ret = mmtu_set_node_id(dev, a->node_id);
	close(dev);
	if (ret)
		return fail("MMT_IOC_SET_NODE_ID", ret);
	return 0;
}

static void print_create(const struct mmt_pmo_create *c, uint64_t bytes,
			 bool json)
{
	if (json)
		printf("\"create\": {\"bytes\": %" PRIu64 ", \"closure_bytes\": %" PRIu64
		       ", \"meta_bytes\": %" PRIu64 "}", bytes,
		       (uint64_t)c->closure_bytes, (uint64_t)c->meta_bytes);
	else
		printf("created PMO: %" PRIu64 " bytes, closures of %" PRIu64
		       " bytes, %" PRIu64 " metadata bytes per closure\n",
		       bytes, (uint64_t)c->closure_bytes,
		       (uint64_t)c->meta_bytes);
}

/* create / info (without --fd): create a PMO, key it, print, close */
static int cmd_create(struct args *a)
{
	struct mmt_pmo_create c;
	uint64_t bytes = pmo_size(a, 0);
	int dev = open_dev(a), fd, ret;

	fd = create_pmo(dev, a, bytes, a->receive ? MMT_KEY_RECEIVE : 0, &c);
	if (a->json) {
		printf("{");
		print_create(&c, bytes, true);
		printf(", \"info\": ");
	} else {
		print_create(&c, bytes, false);
	}
	ret = show_pmo("PMO", fd, a->json);
	if (a->json)
		printf("}\n");
	if (!a->json && !ret)
		printf("(the PMO is freed when mmtctl exits: see 'with-pmo')\n");
	close(fd);
	close(dev);
	return ret;
}

static int cmd_info(struct args *a)
{
	int ret;

	if (!(a->given & O_FD))
		return cmd_create(a);
	ret = show_pmo("PMO", a->fd, a->json);
	if (a->json && !ret)
		printf("\n");
	return ret;
}

/* roundtrip: create, key, write --in at --offset, read back into --out */
static int cmd_roundtrip(struct args *a)
{
	struct mmt_pmo_create c;
	uint8_t *in, *out;
	size_t len;
	uint64_t bytes;
	ssize_t n;
	int dev, fd, ret;

	if (!a->in || !a->out)
		usage_err("--in and --out are required");
	if (read_file(a->in, &in, &len))
		return EXIT_SYS;
	if (a->offset > UINT64_MAX - len)
		usage_err("--offset too large");
	bytes = pmo_size(a, a->offset + len);
	dev = open_dev(a);
	fd = create_pmo(dev, a, bytes, 0, &c);
	n = mmtu_pmo_write_all(fd, in, len, a->offset);
	if (n < 0)
		return fail("pwrite", (int)n);
	out = xmalloc(len);
	n = mmtu_pmo_read_all(fd, out, len, a->offset);
	if (n < 0)
		return fail("pread", (int)n);
	if ((size_t)n != len) {
		fprintf(stderr, "%s: pread: %zd of %zu bytes (end of PMO)\n",
			prog, n, len);
		return EXIT_SYS;
	}
	ret = write_file(a->out, out, len);
	if (ret)
		return EXIT_SYS;
	if (a->json) {
		printf("{\"bytes_written\": %zu, \"offset\": %" PRIu64 ", ",
		       len, a->offset);
		print_create(&c, bytes, true);
		printf(", \"byte_exact\": %s, \"info\": ",
		       memcmp(in, out, len) ? "false" : "true");
	} else {
		print_create(&c, bytes, false);
		printf("wrote %zu bytes at offset %" PRIu64 ", read them back: %s\n",
		       len, a->offset,
		       memcmp(in, out, len) ? "MISMATCH" : "byte-exact");
	}
	ret = show_pmo("PMO", fd, a->json);
	if (a->json)
		printf("}\n");
	if (!ret && memcmp(in, out, len)) {
		fprintf(stderr, "%s: the data read back differs from the input\n",
			prog);
		ret = EXIT_MISMATCH;
	}
	free(in);
	free(out);
	close(fd);
	close(dev);
	return ret;
}

/* delegate with --fd/--to-fd: one ioctl on inherited fds */
static int delegate_fds(struct args *a)
{
	uint64_t flags = (a->copy ? MMT_DELEGATE_COPY : 0) |
		(a->eager ? MMT_DELEGATE_EAGER : 0), closures = 0;
	int ret;

	if (!(a->given & O_TOFD))
		usage_err("--fd needs --to-fd");
	ret = mmtu_pmo_delegate_local(a->fd, a->to_fd, flags, &closures);
	if (a->json)
		printf("{\"closures\": %" PRIu64 ", \"error\": %d}\n",
		       closures, ret);
	else
		printf("delegated %" PRIu64 " closures (%s)\n", closures,
		       a->copy ? "copy" : "transfer");
	return ret ? fail("MMT_IOC_PMO_DELEGATE_LOCAL", ret) : 0;
}

/*
 * delegate: create a sender and a receiver PMO (receiver keyed with
 * MMT_KEY_RECEIVE), write --in into the sender, delegate, read the
 * receiver into --out
 */
static int cmd_delegate(struct args *a)
{
	uint64_t flags = (a->copy ? MMT_DELEGATE_COPY : 0) |
		(a->eager ? MMT_DELEGATE_EAGER : 0), closures = 0, bytes;
	struct mmt_pmo_create c;
	struct args rx;
	uint8_t *in, *out;
	size_t len;
	ssize_t n;
	int dev, src, dst, ret, dret;

	if (a->given & O_FD)
		return delegate_fds(a);
	if (!a->in || !a->out)
		usage_err("--in and --out are required (or --fd and --to-fd)");
	if (!a->mode_given)
		usage_err("--mode transfer|copy is required");
	if (read_file(a->in, &in, &len))
		return EXIT_SYS;
	if (a->offset > UINT64_MAX - len)
		usage_err("--offset too large");
	bytes = pmo_size(a, a->offset + len);
	dev = open_dev(a);
	src = create_pmo(dev, a, bytes, 0, &c);
	rx = *a;
	if (a->rxkey_len) {
		memcpy(rx.key, a->rxkey, sizeof(rx.key));
		rx.key_len = a->rxkey_len;
	}
	dst = create_pmo(dev, &rx, bytes, MMT_KEY_RECEIVE, &c);
	explicit_bzero(&rx, sizeof(rx));
	n = mmtu_pmo_write_all(src, in, len, a->offset);
	if (n < 0)
		return fail("pwrite (sender)", (int)n);
	dret = mmtu_pmo_delegate_local(src, dst, flags, &closures);
	if (a->json) {
		printf("{\"mode\": \"%s\", \"eager\": %s, \"closures\": %" PRIu64
		       ", \"error\": %d, \"sender\": ", a->copy ? "copy" :
		       "transfer", a->eager ? "true" : "false", closures,
		       dret);
	} else {
		print_create(&c, bytes, false);
		printf("delegated %" PRIu64 " of %" PRIu64 " closures (%s%s)%s\n",
		       closures, (uint64_t)(bytes / c.closure_bytes),
		       a->copy ? "copy" : "transfer",
		       a->eager ? ", eager" : "", dret ? ": FAILED" : "");
	}
	ret = show_pmo("sender", src, a->json);
	if (a->json)
		printf(", \"receiver\": ");
	if (!ret)
		ret = show_pmo("receiver", dst, a->json);
	if (a->json)
		printf("}\n");
	if (ret)
		return ret;
	if (dret)
		return fail("MMT_IOC_PMO_DELEGATE_LOCAL", dret);
	out = xmalloc(len);
	n = mmtu_pmo_read_all(dst, out, len, a->offset);
	if (n < 0)
		return fail("pread (receiver)", (int)n);
	if ((size_t)n != len) {
		fprintf(stderr, "%s: pread: %zd of %zu bytes\n", prog, n, len);
		return EXIT_SYS;
	}
	if (write_file(a->out, out, len))
		return EXIT_SYS;
	ret = 0;
	if (memcmp(in, out, len)) {
		fprintf(stderr, "%s: the receiver's data differs from the input\n",
			prog);
		ret = EXIT_MISMATCH;
	} else if (!a->json) {
		printf("receiver read back %zu bytes: byte-exact\n", len);
	}
	free(in);
	free(out);
	close(src);
	close(dst);
	close(dev);
	return ret;
}

/* ------------------------------------------------------------ migrate */

/* The progress thread of cmd_migrate(): a line per round (POLLPRI). */
struct mig_progress {
	pthread_t t;
	int conn;
	volatile int stop;
	FILE *out;
};

static void mig_line(FILE *f, const struct mmt_migrate_info *i)
{
	fprintf(f, "round %u %s: dirty %" PRIu64 ", sent %" PRIu64
		" closures (%" PRIu64 " bytes), expected downtime %.3f ms, "
		"throttle %u %%\n",
		i->round, mmtu_mig_phase_str(i->phase), (uint64_t)i->dirty,
		(uint64_t)i->closures_sent, (uint64_t)i->bytes_sent,
		i->expected_downtime_ns / 1e6, i->throttle_pct);
	fflush(f);
}

static void *mig_progress_main(void *arg)
{
	struct mig_progress *p = arg;
	uint32_t round = 0, phase = 0;

	while (!p->stop) {
		struct pollfd pfd = { .fd = p->conn, .events = POLLPRI };
		struct mmt_migrate_info i;

		if (poll(&pfd, 1, 100) <= 0 || !(pfd.revents & POLLPRI))
			continue;
		if (mmtu_migrate_info(p->conn, &i))
			continue;
		if (i.round == round && i.phase == phase)
			continue;
		round = i.round;
		phase = i.phase;
		mig_line(p->out, &i);
	}
	return NULL;
}

static void mig_summary(const struct args *a, const struct mmt_migrate_info *i,
			int ret)
{
	if (a->json) {
		printf("{\"role\": \"%s\", \"result\": \"%s\", \"error\": %d, "
		       "\"error_name\": \"%s\", \"outcome_unknown\": %s, "
		       "\"rounds\": %u, \"dirty_syncs\": %" PRIu64
		       ", \"closures\": %" PRIu64 ", \"closures_sent\": %" PRIu64
		       ", \"bytes_sent\": %" PRIu64 ", \"total_ns\": %" PRIu64
		       ", \"setup_ns\": %" PRIu64 ", \"downtime_ns\": %" PRIu64
		       ", \"expected_downtime_ns\": %" PRIu64
		       ", \"peak_extra_bytes\": %" PRIu64
		       ", \"stop\": \"%s\", \"throttle_pct\": %u"
		       ", \"throttle_ns\": %" PRIu64 "}\n",
		       a->role, ret ? "failed" : "committed", ret,
		       ret ? strerrorname_np(-ret) : "",
		       i->flags & MMT_MIG_F_OUTCOME_UNKNOWN ? "true" : "false",
		       i->round, (uint64_t)i->dirty_syncs,
		       (uint64_t)i->closures, (uint64_t)i->closures_sent,
		       (uint64_t)i->bytes_sent, (uint64_t)i->total_ns,
		       (uint64_t)i->setup_ns, (uint64_t)i->downtime_ns,
		       (uint64_t)i->expected_downtime_ns,
		       (uint64_t)i->peak_extra_bytes,
		       mmtu_mig_stop_str(i->stop), i->throttle_pct,
		       (uint64_t)i->throttle_ns);
		return;
	}
	printf("%s: %s%s\n", a->role, ret ? "FAILED: " : "committed",
	       ret ? mmtu_strerror(ret) : "");
	if (i->flags & MMT_MIG_F_OUTCOME_UNKNOWN)
		printf("  outcome unknown: the destination may have committed; the PMO is read-only (EUCLEAN) until resolved on the destination's statement (MMT_IOC_MIGRATE_RESOLVE on a connection to it)\n");
	if (i->flags & MMT_MIG_F_SOURCE)
		printf("  pre-copy ended: %s%s; writers throttled to %u %% (%.3f ms of sleeps)\n",
		       mmtu_mig_stop_str(i->stop),
		       i->stop == MMT_MIG_STOP_ROUNDS ?
		       " (handover refused: the expected downtime stayed above the limit; the PMO stays here, writable)" :
		       i->stop == MMT_MIG_STOP_FINISH ?
		       " (handover forced: the downtime is whatever it took)" : "",
		       i->throttle_pct, i->throttle_ns / 1e6);
	printf("  total %.3f ms, setup %.3f ms, downtime %.3f ms (expected %.3f ms)\n"
	       "  %u rounds, %" PRIu64 " dirty syncs, %" PRIu64 " of %" PRIu64
	       " closures sent (%" PRIu64 " bytes), peak extra memory %" PRIu64
	       " bytes\n", i->total_ns / 1e6, i->setup_ns / 1e6,
	       i->downtime_ns / 1e6, i->expected_downtime_ns / 1e6, i->round,
	       (uint64_t)i->dirty_syncs,
	       (uint64_t)i->closures_sent, (uint64_t)i->closures,
	       (uint64_t)i->bytes_sent, (uint64_t)i->peak_extra_bytes);
}

/* the connection: src connects to --peer, dst listens and accepts one */
static int mig_connect(int dev, const struct args *a)
{
	struct mmt_conn_addr addr;
	int fd, lfd, ret;

	ret = mmtu_parse_addr(!strcmp(a->role, "src") ? a->peer :
			      a->listen_addr, a->port, &addr);
	if (ret)
		usage_err("bad address or port");
	if (!strcmp(a->role, "src")) {
		/* the destination may not listen yet: retry for --timeout */
		unsigned int waited = 0, limit = a->timeout ? a->timeout : 10000;

		for (;;) {
			fd = mmtu_connect(dev, &addr, a->timeout, 0, NULL);
			if (fd >= 0)
				return fd;
			if ((fd != -ECONNREFUSED && fd != -EHOSTUNREACH) ||
			    waited >= limit)
				exit(fail("MMT_IOC_CONNECT", fd));
			usleep(200000);
			waited += 200;
		}
	}
	lfd = mmtu_listen(dev, &addr, 1, 0);
	if (lfd < 0)
		exit(fail("MMT_IOC_LISTEN", lfd));
	fd = mmtu_accept(lfd, a->timeout ? a->timeout : 600000, 0, NULL);
	close(lfd);
	if (fd < 0)
		exit(fail("MMT_IOC_ACCEPT", fd));
	return fd;
}

static int cmd_migrate(struct args *a)
{
	struct mig_progress p = { .out = a->json ? stderr : stdout };
	struct mmt_migrate_info info;
	struct mmt_pmo_create c;
	bool src, own = false;
	uint8_t *in = NULL, *out;
	uint64_t bytes = 0;
	size_t len = 0;
	ssize_t n;
	int dev, pmo, conn, ret;

	if (!a->role || !a->port)
		usage_err("--role src|dst and --port are required");
	if (a->mode_given)
		usage_err("--mode does not apply here (a migration moves the PMO)");
	src = !strcmp(a->role, "src");
	if (src && !a->peer)
		usage_err("--role src needs --peer ADDR");
	if (src && (a->out || a->eager || a->park))
		usage_err("--out, --eager and --park are the destination's");
	if (a->park && a->out)
		usage_err("--park keeps the PMO for MMT_IOC_RESTORE: no --out");
	if (!src && (a->in || a->peer || a->downtime || a->rounds))
		usage_err("--in, --peer, --downtime, --rounds are the source's");
	if (!src && (a->given & O_FD) && a->out)
		usage_err("dst: --out writes a PMO it made, not --fd's");
	if (src && !a->in && !(a->given & O_FD))
		usage_err("--role src needs --in FILE or --fd N");
	if (!(a->given & O_FD) && !a->key_len)
		usage_err("both roles need the one key (--key-hex or --key-file)");
	dev = open_dev(a);
	if (a->given & O_NODE) {
		ret = mmtu_set_node_id(dev, a->node_id);
		if (ret)
			return fail("MMT_IOC_SET_NODE_ID", ret);
	}
	if (src && (a->given & O_FD)) {
		pmo = a->fd;
	} else if (src) {
		if (read_file(a->in, &in, &len))
			return EXIT_SYS;
		bytes = pmo_size(a, len);
		pmo = create_pmo(dev, a, bytes, 0, &c);
		own = true;
		n = mmtu_pmo_write_all(pmo, in, len, 0);
		if (n < 0)
			return fail("pwrite", (int)n);
	} else if (a->given & O_FD) {
		pmo = a->fd;	/* keyed by its owner, every MMT WAITING */
	} else {
		bytes = pmo_size(a, 0);
		pmo = create_pmo(dev, a, bytes, MMT_KEY_RECEIVE, &c);
		own = true;
	}
	conn = mig_connect(dev, a);
	p.conn = conn;
	pthread_create(&p.t, NULL, mig_progress_main, &p);
	if (src)
		ret = mmtu_migrate_send(conn, pmo, a->downtime, a->rounds,
					a->window, a->timeout, &info);
	else
		ret = mmtu_migrate_recv(conn, pmo, (a->eager ?
					MMT_MIGRATE_EAGER : 0) |
					(a->park ? MMT_MIGRATE_PARK : 0),
					a->window, a->timeout, &info);
	p.stop = 1;
	pthread_join(p.t, NULL);
	mig_summary(a, &info, ret);
	if (!ret && a->park) {
		/* the module holds the PMO now; ours goes */
		printf("parked: ");
		for (size_t i = 0; i < sizeof(info.nonce); i++)
			printf("%02x", info.nonce[i]);
		printf("\n");
		fflush(stdout);
	}
	if (ret) {
		close(conn);
		return fail(src ? "MMT_IOC_MIGRATE_SEND" :
			    "MMT_IOC_MIGRATE_RECV", ret);
	}
	if (!src && a->out) {
		out = xmalloc(bytes);
		n = mmtu_pmo_read_all(pmo, out, bytes, 0);
		if (n < 0)
			return fail("pread", (int)n);
		if (write_file(a->out, out, n))
			return EXIT_SYS;
		free(out);
	}
	free(in);
	close(conn);
	if (own)
		close(pmo);
	close(dev);
	return 0;
}

/* with-pmo: create (and key) a PMO and exec the command with it as fd 3 */
static int cmd_with_pmo(struct args *a)
{
	struct mmt_pmo_create c;
	uint64_t bytes = pmo_size(a, 0);
	int dev, fd;

	if (!a->rest || !a->rest[0])
		usage_err("missing the command to run (after --)");
	dev = open_dev(a);
	fd = create_pmo(dev, a, bytes, a->receive ? MMT_KEY_RECEIVE : 0, &c);
	explicit_bzero(a->key, sizeof(a->key));
	close(dev);
	if (fd != 3) {
		if (dup2(fd, 3) < 0) {
			fprintf(stderr, "%s: dup2: %s\n", prog, strerror(errno));
			return EXIT_SYS;
		}
		close(fd);
	} else if (fcntl(3, F_SETFD, 0) < 0) {
		fprintf(stderr, "%s: fcntl: %s\n", prog, strerror(errno));
		return EXIT_SYS;
	}
	setenv("MMT_PMO_FD", "3", 1);
	execvp(a->rest[0], a->rest);
	fprintf(stderr, "%s: %s: %s\n", prog, a->rest[0], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}

static int cmd_write(struct args *a)
{
	uint8_t *in;
	size_t len;
	ssize_t n;

	if (!a->in)
		usage_err("--in is required");
	if (read_file(a->in, &in, &len))
		return EXIT_SYS;
	n = mmtu_pmo_write_all(a->fd, in, len, a->offset);
	free(in);
	if (n < 0)
		return fail("pwrite", (int)n);
	if (a->json)
		printf("{\"bytes_written\": %zd, \"offset\": %" PRIu64 "}\n",
		       n, a->offset);
	else
		printf("wrote %zd bytes at offset %" PRIu64 "\n", n,
		       a->offset);
	return 0;
}

static int cmd_read(struct args *a)
{
	struct mmt_pmo_info in;
	uint64_t len = a->length;
	uint8_t *buf;
	ssize_t n;
	int ret;

	if (!a->out)
		usage_err("--out is required");
	if (!(a->given & O_LENGTH)) {
		ret = mmtu_pmo_info(a->fd, &in, NULL, 0);
		if (ret)
			return fail("MMT_IOC_PMO_INFO", ret);
		len = in.bytes > a->offset ? in.bytes - a->offset : 0;
	}
	if (len > SIZE_MAX / 2)
		usage_err("--length too large");
	buf = xmalloc(len);
	n = mmtu_pmo_read_all(a->fd, buf, len, a->offset);
	if (n < 0) {
		free(buf);
		return fail("pread", (int)n);
	}
	ret = write_file(a->out, buf, n);
	free(buf);
	if (ret)
		return EXIT_SYS;
	if (strcmp(a->out, "-")) {
		if (a->json)
			printf("{\"bytes_read\": %zd, \"offset\": %" PRIu64 "}\n",
			       n, a->offset);
		else
			printf("read %zd bytes at offset %" PRIu64 "\n", n,
			       a->offset);
	}
	return 0;
}

static int cmd_key(struct args *a)
{
	int ret;

	if (!a->key_len)
		usage_err("--key-hex or --key-file is required");
	ret = mmtu_pmo_set_key(a->fd, a->key, a->key_len,
			       a->receive ? MMT_KEY_RECEIVE : 0);
	explicit_bzero(a->key, sizeof(a->key));
	return ret ? fail("MMT_IOC_PMO_SET_KEY", ret) : 0;
}

static int cmd_set_counter(struct args *a)
{
	int ret;

	if (!(a->given & O_COUNTER))
		usage_err("--counter is required");
	ret = mmtu_pmo_set_root_counter(a->fd, a->counter);
	return ret ? fail("MMT_IOC_PMO_SET_ROOT_COUNTER", ret) : 0;
}

static int cmd_invalidate(struct args *a)
{
	int ret = mmtu_pmo_invalidate(a->fd);

	return ret ? fail("MMT_IOC_PMO_INVALIDATE", ret) : 0;
}

static int cmd_tamper(struct args *a)
{
	int ret;

	if (!a->region_given)
		usage_err("--region is required");
	ret = mmtu_pmo_debug(a->fd, a->region, a->closure, a->offset,
			     a->xor_mask);
	return ret ? fail("MMT_IOC_PMO_DEBUG", ret) : 0;
}

#define GEOM_HELP \
	"  --levels L        counter levels 1..4 (default 3)\n" \
	"  --block B         block size in bytes, 64..4096 (default 64)\n" \
	"  --arity A,B,..    counters per node per level, leaf first\n" \
	"                    (default 64,32,16,16)\n"
#define KEY_HELP \
	"  --key-hex H       MMT key, 32 or 64 hex digits (AES-128/256); visible\n" \
	"                    to every user in ps: prefer --key-file\n" \
	"  --key-file F      MMT key file: 16/32 raw bytes or 32/64 hex digits\n" \
	"                    (F - : standard input)\n" \
	"                    (default: a random AES-128 key)\n"
#define FD_HELP \
	"  --fd N            the PMO fd inherited from 'mmtctl with-pmo' (3)\n"

static const struct subcmd subcmds[] = {
	{ "query", cmd_query, O_JSON | O_DEV, "[--json]",
	  "Print the module's API version, features and node id.\n" },
	{ "set-node-id", cmd_set_node_id, O_NODE | O_DEV, "--node-id N",
	  "Set this node's id (1..65535; needs CAP_SYS_ADMIN).\n" },
	{ "create", cmd_create,
	  O_JSON | O_SIZE | O_GEOM | O_KEY | O_RECEIVE | O_NOKEY | O_DEV,
	  "[--size N] [geometry] [--key-hex H | --key-file F | --no-key] [--receive] [--json]",
	  "Create a PMO (size rounded up to whole closures, default one\n"
	  "closure), key it, print the kernel's reply and the PMO's info, and\n"
	  "free it again (a PMO lives as long as its fd: see with-pmo).\n"
	  "  --size N          data bytes (suffixes K, M, G; e.g. 2M+1)\n"
	  GEOM_HELP KEY_HELP
	  "  --no-key          leave the PMO unkeyed: plain memory (every MMT\n"
	  "                    INVALID; read and write copy its bytes)\n"
	  "  --receive         key with MMT_KEY_RECEIVE (every MMT WAITING)\n" },
	{ "info", cmd_info,
	  O_JSON | O_SIZE | O_GEOM | O_KEY | O_RECEIVE | O_NOKEY | O_FD |
	  O_DEV,
	  "--fd N [--json] | [create options]",
	  "Print a PMO's geometry, metadata size, key length and the state,\n"
	  "GUA, root counter and top major counter of each MMT.  With --fd,\n"
	  "of an inherited PMO fd; else of a PMO created as by 'create'.\n"
	  FD_HELP },
	{ "roundtrip", cmd_roundtrip,
	  O_JSON | O_SIZE | O_GEOM | O_KEY | O_IN | O_OUT | O_OFFSET | O_DEV,
	  "--in FILE --out FILE [--size N] [--offset O] [geometry] [key] [--json]",
	  "Create a PMO big enough for FILE (or --size), key it, write FILE at\n"
	  "--offset through the controller, read it back into --out, compare,\n"
	  "and print the PMO's info.  Exit 4 if the data differs.\n"
	  "  --in FILE, --out FILE   input and output ('-': stdin/stdout)\n"
	  "  --size N          PMO data bytes (default: just enough)\n"
	  "  --offset O        byte offset of the data in the PMO (default 0)\n"
	  GEOM_HELP KEY_HELP },
	{ "delegate", cmd_delegate,
	  O_JSON | O_SIZE | O_GEOM | O_KEY | O_IN | O_OUT | O_OFFSET |
	  O_MODE | O_RXKEY | O_FD | O_TOFD | O_DEV,
	  "--mode transfer|copy --in FILE --out FILE [--eager] [options] | --fd N --to-fd M --mode ...",
	  "Local delegation: create a sender PMO and a receiver PMO (keyed\n"
	  "with MMT_KEY_RECEIVE, every MMT WAITING), write FILE into the\n"
	  "sender, delegate every closure to the receiver, print both PMOs'\n"
	  "info, read the receiver into --out and compare.  With --fd/--to-fd,\n"
	  "only delegate between two inherited PMO fds.\n"
	  "  --mode M          transfer (sender INVALID after) or copy (both\n"
	  "                    VALID, receiver read-only)\n"
	  "  --eager           verify whole closures on receipt\n"
	  "  --receiver-key-hex H  key the receiver differently (expect exit 3)\n"
	  GEOM_HELP KEY_HELP },
	{ "migrate", cmd_migrate,
	  O_JSON | O_SIZE | O_GEOM | O_KEY | O_IN | O_OUT | O_FD | O_MODE |
	  O_MIG | O_NODE | O_DEV,
	  "--role src --peer ADDR --port P (--in FILE | --fd N) [options] | --role dst --port P (--size N --key-hex H [--out FILE] | --fd N) [--park]",
	  "Live migration of a PMO over an mmt connection (docs/MIGRATION.md).\n"
	  "src: a PMO holding FILE (or the inherited --fd, whose owner may go\n"
	  "on writing) is migrated to the peer: pre-copy rounds, then the\n"
	  "handover; dst: listens on --port, receives it into a new PMO of\n"
	  "--size bytes and the same geometry and key (or into the inherited\n"
	  "--fd, keyed with MMT_KEY_RECEIVE), and writes its plaintext to\n"
	  "--out, or parks it (--park).  A progress line per round (stderr with\n"
	  "--json), then a summary: total, setup and downtime, rounds, dirty\n"
	  "syncs, closures and bytes sent, peak extra memory.\n"
	  "  --role R          src or dst\n"
	  "  --peer ADDR       src: the destination's address\n"
	  "  --listen ADDR     dst: the local address (default any)\n"
	  "  --port P          the port\n"
	  "  --downtime MS     src: downtime limit (default 300)\n"
	  "  --rounds N        src: pre-copy round limit (default 30)\n"
	  "  --window W        closures in flight (default 4, at most 16)\n"
	  "  --timeout MS      per answer of the peer (default 10000); src:\n"
	  "                    also how long to retry a refused connect\n"
	  "  --eager           dst: verify whole closures on receipt\n"
	  "  --park            dst: once committed, the module keeps the PMO\n"
	  "                    in a one-time record named by the receive's\n"
	  "                    nonce (printed: \"parked: HEX\"), for\n"
	  "                    MMT_IOC_RESTORE (CRIU's cross-node mode,\n"
	  "                    docs/CRIU.md); needs CAP_CHECKPOINT_RESTORE\n"
	  "  --node-id N       set this node's id first\n"
	  GEOM_HELP KEY_HELP FD_HELP },
	{ "with-pmo", cmd_with_pmo,
	  O_SIZE | O_GEOM | O_KEY | O_RECEIVE | O_NOKEY | O_DEV,
	  "[create options] -- CMD [ARG...]",
	  "Create (and key) a PMO, then exec CMD with the PMO as fd 3 and\n"
	  "MMT_PMO_FD=3 in its environment.  The PMO lives until CMD and its\n"
	  "children close fd 3.  Example:\n"
	  "  mmtctl with-pmo --size 4M -- sh -c \\\n"
	  "    'mmtctl write --fd 3 --in a && mmtctl read --fd 3 --out b'\n" },
	{ "write", cmd_write, O_JSON | O_FD | O_IN | O_OFFSET,
	  "--fd N --in FILE [--offset O]",
	  "pwrite FILE into an inherited PMO fd at --offset.\n" FD_HELP },
	{ "read", cmd_read, O_JSON | O_FD | O_OUT | O_OFFSET | O_LENGTH,
	  "--fd N --out FILE [--offset O] [--length L]",
	  "pread --length bytes (default: to the end of the PMO) from an\n"
	  "inherited PMO fd at --offset into FILE ('-': stdout).\n" FD_HELP },
	{ "key", cmd_key, O_FD | O_KEY | O_RECEIVE,
	  "--fd N (--key-hex H | --key-file F) [--receive]",
	  "Set the key of an inherited, unkeyed PMO fd.\n" FD_HELP },
	{ "set-counter", cmd_set_counter, O_FD | O_COUNTER,
	  "--fd N --counter C",
	  "Set the initial (VALID) or minimum (WAITING) root counter.\n"
	  FD_HELP },
	{ "invalidate", cmd_invalidate, O_FD, "--fd N",
	  "Wipe an inherited PMO: data, metadata and key.\n" FD_HELP },
	{ "tamper", cmd_tamper, O_FD | O_TAMPER | O_OFFSET,
	  "--fd N --region data|macs|nodes [--closure C] [--offset O] [--xor X]",
	  "XOR a byte of the PMO's untrusted backing memory (modules built\n"
	  "with MMT_DEBUG=1 only; CAP_SYS_ADMIN).  Default --xor 1.\n"
	  FD_HELP },
	{ NULL, NULL, 0, NULL, NULL }
};

/* options that need a PMO fd, for the subcommands with --fd */
static const unsigned int fd_cmds_need_fd = O_FD;

static void print_usage(FILE *f)
{
	const struct subcmd *s;

	fprintf(f, "Usage: %s SUBCOMMAND [OPTIONS]\n\n"
		"Drive the software MMT controller (/dev/mmt).  Subcommands:\n",
		prog);
	for (s = subcmds; s->name; s++)
		fprintf(f, "  %-12s %s\n", s->name, s->synopsis);
	fprintf(f, "\nCommon options: --json (machine output), --dev PATH (default %s),\n"
		"--help.  '%s SUBCOMMAND --help' for details.\n\n"
		"Exit codes: 0 ok, 1 usage error, 2 system or ioctl error,\n"
		"3 integrity failure (EBADMSG, ESTALE, EILSEQ), 4 data read back\n"
		"differs.\n", MMTU_DEV_PATH, prog);
}

static void print_sub_help(const struct subcmd *s)
{
	printf("Usage: %s %s %s\n\n%s", prog, s->name, s->synopsis, s->help);
	if (s->opts & O_JSON)
		printf("  --json            machine-readable output (one JSON object)\n");
	if (s->opts & O_DEV)
		printf("  --dev PATH        device node (default %s)\n",
		       MMTU_DEV_PATH);
	printf("\nExit codes: 0 ok, 1 usage, 2 system/ioctl error, 3 integrity failure,\n4 data mismatch.\n");
}

static unsigned int opt_bit(int c)
{
	switch (c) {
	case 'j':
		return O_JSON;
	case 's':
		return O_SIZE;
	case 'i':
		return O_IN;
	case 'o':
		return O_OUT;
	case 'f':
		return O_FD;
	case OPT_LEVELS:
	case OPT_BLOCK:
	case OPT_ARITY:
		return O_GEOM;
	case OPT_KEYHEX:
	case OPT_KEYFILE:
		return O_KEY;
	case OPT_OFFSET:
		return O_OFFSET;
	case OPT_LENGTH:
		return O_LENGTH;
	case OPT_MODE:
	case OPT_EAGER:
		return O_MODE;
	case OPT_RECEIVE:
		return O_RECEIVE;
	case OPT_NOKEY:
		return O_NOKEY;
	case OPT_COUNTER:
		return O_COUNTER;
	case OPT_TOFD:
		return O_TOFD;
	case OPT_RXKEY:
		return O_RXKEY;
	case OPT_REGION:
	case OPT_CLOSURE:
	case OPT_XOR:
		return O_TAMPER;
	case OPT_DEV:
		return O_DEV;
	case OPT_NODE:
		return O_NODE;
	case OPT_ROLE:
	case OPT_PEER:
	case OPT_PORT:
	case OPT_LISTEN:
	case OPT_DOWNTIME:
	case OPT_ROUNDS:
	case OPT_WINDOW:
	case OPT_TIMEOUT:
	case OPT_PARK:
		return O_MIG;
	}
	return 0;
}

static const char *opt_name(int c)
{
	const struct option *o;

	for (o = long_opts; o->name; o++)
		if (o->val == c)
			return o->name;
	return "?";
}

static void parse_arity(const char *s, struct mmt_geometry *g)
{
	char buf[64], *tok, *save = NULL;
	int l = 0;

	if (strlen(s) >= sizeof(buf))
		usage_err("--arity: too long");
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (l == MMT_GEOM_MAX_LEVELS)
			usage_err("--arity: at most %d values",
				  MMT_GEOM_MAX_LEVELS);
		g->log_arity[l++] = parse_log2("arity", tok, 1, 6);
	}
}

static void parse_args(int argc, char **argv, struct args *a)
{
	int c, idx;

	memset(a, 0, sizeof(*a));
	a->fd = -1;
	a->to_fd = -1;
	a->xor_mask = 1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+hjs:i:o:f:", long_opts,
				&idx)) != -1) {
		unsigned int bit = opt_bit(c);

		if (c == '?')
			usage_err("bad option");
		if (c == 'h') {
			print_sub_help(cur);
			exit(0);
		}
		if (!(bit & cur->opts))
			usage_err("option '--%s' does not apply here",
				  opt_name(c));
		a->given |= bit;
		switch (c) {
		case 'j':
			a->json = true;
			break;
		case 's':
			a->size = parse_u64("size", optarg);
			break;
		case 'i':
			a->in = optarg;
			break;
		case 'o':
			a->out = optarg;
			break;
		case 'f':
			a->fd = parse_fd("fd", optarg);
			break;
		case OPT_LEVELS:
			a->geom.levels = parse_u64("levels", optarg);
			if (a->geom.levels < 1 || a->geom.levels > 4)
				usage_err("--levels: 1..4");
			break;
		case OPT_BLOCK:
			a->geom.log_block_size = parse_log2("block", optarg, 6,
							    12);
			break;
		case OPT_ARITY:
			parse_arity(optarg, &a->geom);
			break;
		case OPT_KEYHEX:
			a->key_len = parse_hex_key("key-hex", optarg, a->key);
			break;
		case OPT_KEYFILE:
			a->key_len = load_key_file(optarg, a->key);
			break;
		case OPT_RXKEY:
			a->rxkey_len = parse_hex_key("receiver-key-hex", optarg,
						     a->rxkey);
			break;
		case OPT_OFFSET:
			a->offset = parse_u64("offset", optarg);
			break;
		case OPT_LENGTH:
			a->length = parse_u64("length", optarg);
			break;
		case OPT_MODE:
			a->mode_given = true;
			if (!strcmp(optarg, "copy"))
				a->copy = true;
			else if (strcmp(optarg, "transfer"))
				usage_err("--mode: transfer or copy");
			break;
		case OPT_EAGER:
			a->eager = true;
			break;
		case OPT_PARK:
			a->park = true;
			break;
		case OPT_RECEIVE:
			a->receive = true;
			break;
		case OPT_NOKEY:
			a->nokey = true;
			break;
		case OPT_COUNTER:
			a->counter = parse_u64("counter", optarg);
			break;
		case OPT_TOFD:
			a->to_fd = parse_fd("to-fd", optarg);
			break;
		case OPT_REGION:
			if (!strcmp(optarg, "data"))
				a->region = MMT_DEBUG_DATA;
			else if (!strcmp(optarg, "macs"))
				a->region = MMT_DEBUG_MACS;
			else if (!strcmp(optarg, "nodes"))
				a->region = MMT_DEBUG_NODES;
			else
				usage_err("--region: data, macs or nodes");
			a->region_given = true;
			break;
		case OPT_CLOSURE:
			a->closure = parse_u64("closure", optarg);
			break;
		case OPT_XOR:
			idx = parse_u64("xor", optarg);
			if (idx < 1 || idx > 255)
				usage_err("--xor: 1..255");
			a->xor_mask = idx;
			break;
		case OPT_DEV:
			a->dev = optarg;
			break;
		case OPT_NODE:
			a->node_id = parse_u64("node-id", optarg);
			break;
		case OPT_ROLE:
			if (strcmp(optarg, "src") && strcmp(optarg, "dst"))
				usage_err("--role: src or dst");
			a->role = optarg;
			break;
		case OPT_PEER:
			a->peer = optarg;
			break;
		case OPT_LISTEN:
			a->listen_addr = optarg;
			break;
		case OPT_PORT:
			a->port = parse_u64("port", optarg);
			if (!a->port || a->port > 65535)
				usage_err("--port: 1..65535");
			break;
		case OPT_DOWNTIME:
			a->downtime = parse_u64("downtime", optarg);
			if (!a->downtime || a->downtime > 600000)
				usage_err("--downtime: 1..600000 ms");
			break;
		case OPT_ROUNDS:
			a->rounds = parse_u64("rounds", optarg);
			if (!a->rounds || a->rounds > 1000)
				usage_err("--rounds: 1..1000");
			break;
		case OPT_WINDOW:
			a->window = parse_u64("window", optarg);
			if (!a->window || a->window > MMT_MIGRATE_WINDOW_MAX)
				usage_err("--window: 1..%d",
					  MMT_MIGRATE_WINDOW_MAX);
			break;
		case OPT_TIMEOUT:
			a->timeout = parse_u64("timeout", optarg);
			if (!a->timeout || a->timeout > 600000)
				usage_err("--timeout: 1..600000 ms");
			break;
		}
	}
	if (a->nokey && a->key_len)
		usage_err("--no-key and a key given");
	if (a->nokey && a->receive)
		usage_err("--no-key and --receive");
	if (!strcmp(cur->name, "with-pmo")) {
		if (optind < argc)
			a->rest = argv + optind;
	} else if (optind < argc) {
		usage_err("unexpected argument '%s'", argv[optind]);
	}
	if ((cur->opts & fd_cmds_need_fd) && !(cur->opts & O_SIZE) &&
	    !(a->given & O_FD)) {
		const char *env = getenv("MMT_PMO_FD");

		if (!env)
			usage_err("--fd is required (or MMT_PMO_FD)");
		a->fd = parse_fd("fd", env);
		a->given |= O_FD;
	}
}

int main(int argc, char **argv)
{
	const struct subcmd *s;
	struct args a;
	int ret;

	if (argc < 2) {
		print_usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		print_usage(stdout);
		return 0;
	}
	for (s = subcmds; s->name; s++)
		if (!strcmp(argv[1], s->name))
			break;
	if (!s->name) {
		fprintf(stderr, "%s: unknown subcommand '%s'\n", prog, argv[1]);
		print_usage(stderr);
		return EXIT_USAGE;
	}
	cur = s;
	parse_args(argc - 1, argv + 1, &a);
	ret = s->run(&a);
	explicit_bzero(&a, sizeof(a));
	return ret;
}
