// SPDX-License-Identifier: GPL-2.0
/*
 * pmo-basic.c - guest test of PMOs through libmmt: creation and its
 * errors, key and MMT states, byte-exact pwrite/pread (1 B, 4 KiB,
 * 2 MiB + 1 B, 64 MiB, unaligned, across closures, past the end), wrong
 * states, tampering through MMT_IOC_PMO_DEBUG (EBADMSG, nothing else
 * changes; a pread across a bad block returns the good bytes before it),
 * fd passing between processes, local delegation (transfer,
 * copy, eager, replay -> ESTALE, another key -> EBADMSG, argument errors),
 * zero-byte calls and a pwrite that fails part of the way (as documented),
 * a transfer refused because the sender's own memory fails
 * verification (the sender's way back once it verifies), and plain PMOs
 * (no key: pread/pwrite copy the bytes of the PMO's memory, INFO says so,
 * keying replaces them, INVALIDATE zeroes them).
 *
 * Every check prints "ok - NAME" or "not ok - NAME (why)"; the last line is
 * "pmo-basic: N passed, N failed".  Exit status 0 if all passed, 1 if any
 * failed, 2 if /dev/mmt cannot be used at all.
 *
 * Usage: pmo-basic [--seed N] [--no-64m] [--require-debug] [--only NAME]
 *   --seed N         PRNG seed of the data (default 1)
 *   --no-64m         skip the 64 MiB round trip (slow under TCG)
 *   --require-debug  fail (instead of skip) without MMT_FEAT_DEBUG
 *   --only NAME      run one group: create, keys, io, sizes, tamper,
 *                    shortread, fdpass, delegate, edges, ownbad, plain
 *
 * Built static for the guest by tests/pmo/build.sh; expects the mmt module
 * loaded and root (CAP_SYS_ADMIN for MMT_IOC_PMO_DEBUG).
 */
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "pmo_test.h"

#define MiB	(1024ULL * 1024)
#define KiB	1024ULL

static int dev = -1;
static uint64_t seed = 1;
static bool have_debug, require_debug, skip_64m;
static struct mmt_query query;

static const uint8_t key1[16] = "0123456789abcdef";
static const uint8_t key2[16] = "fedcba9876543210";
static const uint8_t key256[32] = "0123456789abcdef0123456789abcdef";

/* two levels, default arity: 128 KiB closures (fast under TCG) */
static const struct mmt_geometry geom2 = { .levels = 2 };
/* default geometry: 3 levels, 2 MiB closures */
static const struct mmt_geometry geom3 = { .levels = 0 };

/* new_pmo() - create and (if @key) key a PMO; -1 after a "not ok" line */
static int new_pmo(uint64_t bytes, const struct mmt_geometry *g,
		   const uint8_t *key, size_t key_len, uint64_t kflags,
		   const char *what)
{
	int fd, ret;

	fd = mmtu_pmo_create(dev, bytes, g, 0, NULL);
	if (fd < 0) {
		pt_result(false, what, "create %" PRIu64 " bytes: %s", bytes,
			  pt_errname(fd));
		return -1;
	}
	if (!key)
		return fd;
	ret = mmtu_pmo_set_key(fd, key, key_len, kflags);
	if (ret) {
		pt_result(false, what, "set key: %s", pt_errname(ret));
		close(fd);
		return -1;
	}
	return fd;
}

/* read [off, off+len) and compare with @want; report as @name */
static bool check_read(int fd, uint64_t off, const uint8_t *want, size_t len,
		       const char *name)
{
	uint8_t *got = pt_malloc(len);
	ssize_t n = mmtu_pmo_read_all(fd, got, len, off);
	bool ok = n == (ssize_t)len && !memcmp(got, want, len);
	size_t i = 0;

	if (n == (ssize_t)len)
		while (i < len && got[i] == want[i])
			i++;
	pt_result(ok, name, "read %zd of %zu bytes%s%s, first difference at %zu",
		  n, len, n < 0 ? ": " : "", n < 0 ? pt_errname((int)n) : "",
		  i);
	free(got);
	return ok;
}

static bool write_ok(int fd, uint64_t off, const void *buf, size_t len,
		     const char *name)
{
	ssize_t n = mmtu_pmo_write_all(fd, buf, len, off);

	pt_result(n == (ssize_t)len, name, "wrote %zd of %zu: %s", n, len,
		  n < 0 ? pt_errname((int)n) : "short");
	return n == (ssize_t)len;
}

/* raw MMT_IOC_PMO_CREATE; closes a returned fd; 0 or -errno */
static int raw_create(struct mmt_pmo_create *c)
{
	int ret;

	ret = ioctl(dev, MMT_IOC_PMO_CREATE, c);
	if (ret < 0)
		return -errno;
	if (c->fd >= 0)
		close(c->fd);
	return 0;
}

/* ------------------------------------------------------------ create */

static void test_create(void)
{
	struct mmt_pmo_create c, base = {
		.size = MMT_PMO_CREATE_SIZE_VER0,
		.bytes = 2 * MiB,
	};
	struct { struct mmt_pmo_create c; uint64_t tail[2]; } big;
	struct pt_snap s;
	int fd, nfds, ret, flags;

	fd = mmtu_pmo_create(dev, 2 * MiB, NULL, 0, &c);
	pt_result(fd >= 0, "create: 2 MiB default geometry", "%s",
		  pt_errname(fd));
	if (fd < 0)
		return;
	pt_result(c.closure_bytes == 2 * MiB, "create: closure_bytes 2 MiB",
		  "got %" PRIu64, (uint64_t)c.closure_bytes);
	pt_result(c.meta_bytes > 0 && c.meta_bytes < c.closure_bytes / 2,
		  "create: meta_bytes plausible (0 < meta < 50%)",
		  "got %" PRIu64, (uint64_t)c.meta_bytes);
	printf("# default geometry: meta_bytes %" PRIu64 " per 2 MiB closure (%.2f%%)\n",
	       (uint64_t)c.meta_bytes, 100.0 * c.meta_bytes / c.closure_bytes);
	flags = fcntl(fd, F_GETFD);
	pt_result(flags >= 0 && !(flags & FD_CLOEXEC),
		  "create: no MMT_PMO_CLOEXEC -> fd without FD_CLOEXEC",
		  "F_GETFD %d", flags);

	pt_snap(fd, &s);
	pt_result(!s.ret && s.info.bytes == 2 * MiB && s.info.closures == 1 &&
		  s.info.closure_bytes == 2 * MiB &&
		  s.info.meta_bytes == c.meta_bytes && s.info.key_len == 0,
		  "info: bytes, closures, closure and meta bytes, no key",
		  "ret %s bytes %" PRIu64 " closures %u key_len %u",
		  pt_errname(s.ret), (uint64_t)s.info.bytes, s.info.closures,
		  s.info.key_len);
	pt_result(s.info.geometry.levels == 3 &&
		  s.info.geometry.log_block_size == 6 &&
		  s.info.block_size == 64 &&
		  s.info.geometry.log_arity[0] == 6 &&
		  s.info.geometry.log_arity[1] == 5 &&
		  s.info.geometry.log_arity[2] == 4,
		  "info: defaults filled in (3 levels, 64 B, 64/32/16)",
		  "levels %u log_block %u arity %u/%u/%u",
		  s.info.geometry.levels, s.info.geometry.log_block_size,
		  s.info.geometry.log_arity[0], s.info.geometry.log_arity[1],
		  s.info.geometry.log_arity[2]);
	pt_result(pt_all_state(&s, MMT_STATE_INVALID, 0) &&
		  s.info.mmt_count == 1,
		  "info: new PMO's MMT is INVALID", "%s", pt_states(&s));

	/* mmt_count in/out */
	{
		struct mmt_mmt_info m[4];
		struct mmt_pmo_info in;

		memset(m, 0xa5, sizeof(m));
		ret = mmtu_pmo_info(fd, &in, m, 4);
		pt_result(!ret && in.mmt_count == 1 &&
			  m[1].state == 0xa5a5a5a5,
			  "info: mmt_count = min(room, closures), no write past it",
			  "ret %s mmt_count %u", pt_errname(ret),
			  in.mmt_count);
		ret = mmtu_pmo_info(fd, &in, NULL, 0);
		pt_result(!ret && in.mmt_count == 0 && in.closures == 1,
			  "info: no mmts array", "ret %s mmt_count %u",
			  pt_errname(ret), in.mmt_count);
		memset(&in, 0, sizeof(in));
		in.size = sizeof(in);
		in.mmt_count = 1;
		in.mmts = 8;	/* unmapped */
		pt_expect_ret(pt_sys(ioctl(fd, MMT_IOC_PMO_INFO, &in)),
			      -EFAULT, "info: bad mmts pointer -> EFAULT");
		memset(&in, 0, sizeof(in));
		in.size = sizeof(in);
		in.flags = 1;
		pt_expect_ret(pt_sys(ioctl(fd, MMT_IOC_PMO_INFO, &in)),
			      -EINVAL, "info: flags -> EINVAL");
		memset(&in, 0, sizeof(in));
		in.size = sizeof(in);
		in.reserved[1] = 1;
		pt_expect_ret(pt_sys(ioctl(fd, MMT_IOC_PMO_INFO, &in)),
			      -EINVAL, "info: reserved -> EINVAL");
		memset(&in, 0, sizeof(in));
		in.size = MMT_PMO_INFO_SIZE_VER0 - 8;
		pt_expect_ret(pt_sys(ioctl(fd, MMT_IOC_PMO_INFO, &in)),
			      -EINVAL, "info: size below VER0 -> EINVAL");
	}

	/* commands on the wrong kind of fd */
	{
		struct mmt_query q = { .size = sizeof(q) };
		struct mmt_pmo_info in = { .size = sizeof(in) };

		pt_expect_ret(pt_sys(ioctl(fd, MMT_IOC_QUERY, &q)), -ENOTTY,
			      "QUERY on a PMO fd -> ENOTTY");
		pt_expect_ret(pt_sys(ioctl(dev, MMT_IOC_PMO_INFO, &in)),
			      -ENOTTY, "PMO_INFO on /dev/mmt -> ENOTTY");
		pt_expect_ret(pt_sys(ioctl(fd, _IOWR(MMT_IOC_MAGIC, 0x6e,
						     struct mmt_pmo_info),
					   &in)),
			      -ENOTTY, "unknown command on a PMO fd -> ENOTTY");
		pt_expect_ret(pt_sys(ioctl(fd, _IOWR(MMT_IOC_MAGIC, 0x12,
						     struct mmt_pmo_key),
					   &in)),
			      -ENOTTY,
			      "INFO number with another struct size -> ENOTTY");
	}
	close(fd);

	fd = mmtu_pmo_create(dev, 2 * MiB, NULL, MMT_PMO_CLOEXEC, NULL);
	flags = fd >= 0 ? fcntl(fd, F_GETFD) : -1;
	pt_result(flags >= 0 && (flags & FD_CLOEXEC),
		  "create: MMT_PMO_CLOEXEC -> FD_CLOEXEC", "fd %d flags %d",
		  fd, flags);
	if (fd >= 0)
		close(fd);

	/* geometries the header promises */
	{
		static const struct {
			struct mmt_geometry g;
			uint64_t closure;
			const char *name;
		} ok[] = {
			{ { .levels = 1 }, 4 * KiB, "create: 1 level -> 4 KiB closures" },
			{ { .levels = 2 }, 128 * KiB, "create: 2 levels -> 128 KiB closures" },
			{ { .levels = 4 }, 32 * MiB, "create: 4 levels -> 32 MiB closures" },
			{ { .levels = 2, .log_block_size = 12 }, 8 * MiB, "create: 2 levels of 4 KiB blocks -> 8 MiB" },
			{ { .levels = 2, .log_arity = { 1, 1 } }, 256, "create: arity 2,2 -> 256 B closures" },
			{ { .levels = 4, .log_arity = { 5, 5, 5, 5 } }, 64 * MiB, "create: 2^20 blocks (limit) accepted" },
		};
		unsigned int i;

		for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
			fd = mmtu_pmo_create(dev, ok[i].closure, &ok[i].g, 0,
					     &c);
			pt_result(fd >= 0 && c.closure_bytes == ok[i].closure &&
				  mmtu_geometry_closure_bytes(&ok[i].g) ==
				  ok[i].closure, ok[i].name,
				  "fd %s closure_bytes %" PRIu64,
				  pt_errname(fd < 0 ? fd : 0),
				  (uint64_t)c.closure_bytes);
			if (fd >= 0)
				close(fd);
		}
	}

	/* bad arguments: EINVAL / E2BIG and no fd made */
	nfds = pt_count_fds();
#define BAD_CREATE(field_stmt, want, name) do {			\
		c = base;					\
		field_stmt;					\
		pt_expect_ret(raw_create(&c), want, name);	\
	} while (0)
	BAD_CREATE(c.bytes = 0, -EINVAL, "create: 0 bytes -> EINVAL");
	BAD_CREATE(c.bytes = 2 * MiB - 4096, -EINVAL,
		   "create: not a closure multiple -> EINVAL");
	BAD_CREATE(c.bytes = 2 * MiB + 1, -EINVAL,
		   "create: 2 MiB + 1 -> EINVAL");
	BAD_CREATE(c.flags = 1ULL << 63, -EINVAL,
		   "create: unknown flag -> EINVAL");
	BAD_CREATE(c.flags = 2, -EINVAL, "create: flag bit 1 -> EINVAL");
	BAD_CREATE(c.reserved0 = 1, -EINVAL, "create: reserved0 -> EINVAL");
	BAD_CREATE(c.reserved1 = 1, -EINVAL, "create: reserved1 -> EINVAL");
	BAD_CREATE(c.reserved[3] = 1, -EINVAL,
		   "create: reserved[3] -> EINVAL");
	BAD_CREATE(c.geometry.reserved[1] = 1, -EINVAL,
		   "create: geometry.reserved -> EINVAL");
	BAD_CREATE(c.geometry.levels = 5, -EINVAL,
		   "create: 5 levels -> EINVAL");
	BAD_CREATE(c.geometry.log_block_size = 5, -EINVAL,
		   "create: 32-byte blocks -> EINVAL");
	BAD_CREATE(c.geometry.log_block_size = 13, -EINVAL,
		   "create: 8 KiB blocks -> EINVAL");
	BAD_CREATE((c.geometry.log_arity[0] = 7, c.geometry.log_arity[1] = 5,
		    c.geometry.log_arity[2] = 4), -EINVAL,
		   "create: arity 128 -> EINVAL");
	BAD_CREATE((c.geometry.levels = 4, c.geometry.log_arity[0] = 6,
		    c.geometry.log_arity[1] = 6, c.geometry.log_arity[2] = 6,
		    c.geometry.log_arity[3] = 6, c.bytes = 1ULL << 30),
		   -EINVAL, "create: 2^24 blocks per MMT -> EINVAL");
	BAD_CREATE(c.size = MMT_PMO_CREATE_SIZE_VER0 - 8, -EINVAL,
		   "create: size below VER0 -> EINVAL");
	BAD_CREATE(c.size = 0, -EINVAL, "create: size 0 -> EINVAL");
	c = base;
	c.bytes = 1ULL << 40;
	ret = raw_create(&c);
	pt_result(ret == -ENOMEM || ret == -ENOSPC,
		  "create: 1 TiB -> ENOMEM or ENOSPC", "got %s",
		  pt_errname(ret));
	c = base;
	c.bytes = 1ULL << 62;
	ret = raw_create(&c);
	printf("# create: 2^62 bytes (2^41 closures): %s\n", pt_errname(ret));
	pt_result(pt_count_fds() == nfds, "create: failures made no fd",
		  "%d fds before, %d after", nfds, pt_count_fds());

	memset(&big, 0, sizeof(big));
	big.c = base;
	big.c.size = sizeof(big);
	big.tail[1] = 1;
	pt_expect_ret(raw_create(&big.c), -E2BIG,
		      "create: longer struct, non-zero tail -> E2BIG");
	big.tail[1] = 0;
	ret = raw_create(&big.c);
	pt_result(!ret && big.c.closure_bytes == 2 * MiB,
		  "create: longer struct, zero tail -> accepted", "%s",
		  pt_errname(ret));
	c = base;
	c.fd = -1;
	ret = raw_create(&c);
	printf("# create with fd = -1 on input (an (out) field): %s\n",
	       ret ? pt_errname(ret) : "accepted");
	pt_expect_ret(pt_sys(ioctl(dev, MMT_IOC_PMO_CREATE, NULL)), -EFAULT,
		      "create: NULL argument -> EFAULT");
	/* readable but not writable argument: the reply cannot be copied out */
	{
		struct mmt_pmo_create *ro = mmap(NULL, 4096,
						 PROT_READ | PROT_WRITE,
						 MAP_PRIVATE | MAP_ANONYMOUS,
						 -1, 0);

		if (ro != MAP_FAILED) {
			*ro = base;
			mprotect(ro, 4096, PROT_READ);
			pt_expect_ret(pt_sys(ioctl(dev, MMT_IOC_PMO_CREATE, ro)),
				      -EFAULT,
				      "create: read-only argument -> EFAULT");
			munmap(ro, 4096);
		}
	}
	pt_result(pt_count_fds() == nfds, "create: still no fd leaked",
		  "%d fds before, %d after", nfds, pt_count_fds());
}

/* ------------------------------------------------------------ keys, states */

static void test_keys(void)
{
	struct pt_snap a, b;
	struct mmt_pmo_key k;
	uint8_t buf[256];
	uint64_t gua_node;
	uint32_t i;
	int fd, ret;

	fd = new_pmo(3 * 128 * KiB, &geom2, NULL, 0, 0, "keys: create");
	if (fd < 0)
		return;
	/* no key: plain memory (the group "plain" tests it in full) */
	pt_expect_ret(pt_sys(pread(fd, buf, 64, 0)), 64,
		      "keys: pread before a key reads the plain bytes");
	pt_expect_ret(pt_sys(pwrite(fd, buf, 64, 0)), 64,
		      "keys: pwrite before a key writes the plain bytes");
	pt_expect_ret(mmtu_pmo_set_root_counter(fd, 10), -EPERM,
		      "keys: set root counter before a key -> EPERM");
	pt_expect_ret(mmtu_pmo_invalidate(fd), 0,
		      "keys: invalidate an unkeyed PMO -> ok");
	{
		/* libmmt's hex parser, as mmtctl and mmt-bench use it */
		static const uint8_t want[16] = {
			0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
			0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff,
		};
		uint8_t hk[32];
		size_t bad = 0;

		ret = mmtu_key_from_hex("00112233445566778899AaBbccddeeff",
					32, hk, NULL);
		pt_result(ret == 16 && !memcmp(hk, want, 16),
			  "keys: 32 hex digits -> the 16-byte key",
			  "ret %d", ret);
		pt_expect_ret(mmtu_key_from_hex("0011", 4, hk, NULL), -EINVAL,
			      "keys: 4 hex digits -> EINVAL");
		ret = mmtu_key_from_hex("00112233445566778899aabbccddeefg",
					32, hk, &bad);
		pt_result(ret == -EILSEQ && bad == 31,
			  "keys: a non-hex digit -> EILSEQ at its index",
			  "ret %d, index %zu", ret, bad);
	}

	pt_snap(fd, &a);
#define BAD_KEY(stmt, want, name) do {					\
		memset(&k, 0, sizeof(k));				\
		k.size = sizeof(k);					\
		k.key_len = 16;						\
		memcpy(k.key, key1, 16);				\
		stmt;							\
		pt_expect_ret(pt_sys(ioctl(fd, MMT_IOC_PMO_SET_KEY, &k)), \
			      want, name);				\
	} while (0)
	BAD_KEY(k.key_len = 15, -EINVAL, "keys: 15-byte key -> EINVAL");
	BAD_KEY(k.key_len = 24, -EINVAL, "keys: 24-byte key -> EINVAL");
	BAD_KEY(k.key_len = 0, -EINVAL, "keys: 0-byte key -> EINVAL");
	BAD_KEY(k.key_len = 33, -EINVAL, "keys: 33-byte key -> EINVAL");
	BAD_KEY(k.key[16] = 1, -EINVAL,
		"keys: non-zero byte past key_len -> EINVAL");
	BAD_KEY(k.flags = 2, -EINVAL, "keys: unknown flag -> EINVAL");
	BAD_KEY(k.size = MMT_PMO_KEY_SIZE_VER0 - 1, -EINVAL,
		"keys: size below VER0 -> EINVAL");
	pt_expect_ret(pt_sys(ioctl(dev, MMT_IOC_PMO_SET_KEY, &k)), -ENOTTY,
		      "keys: SET_KEY on /dev/mmt -> ENOTTY");
	pt_snap(fd, &b);
	pt_result(pt_snap_eq(&a, &b) && b.info.key_len == 0 &&
		  pt_all_state(&b, MMT_STATE_INVALID, 0),
		  "keys: rejected keys changed nothing", "%s", pt_states(&b));

	ret = mmtu_pmo_set_key(fd, key1, 16, 0);
	pt_expect_ret(ret, 0, "keys: set AES-128 key");
	pt_snap(fd, &a);
	pt_result(pt_all_state(&a, MMT_STATE_VALID, 0) && a.info.key_len == 16 &&
		  a.info.mmt_count == 3, "keys: every MMT VALID, key_len 16",
		  "%s key_len %u", pt_states(&a), a.info.key_len);
	gua_node = (uint64_t)(query.node_id ? query.node_id : 1) << 42;
	for (i = 0; i < a.info.mmt_count; i++)
		if (a.mmts[i].gua >> 42 != gua_node >> 42 ||
		    a.mmts[i].gua >> 58 ||
		    (i && a.mmts[i].gua == a.mmts[i - 1].gua))
			break;
	pt_result(i == a.info.mmt_count,
		  "keys: GUAs 58-bit, carry the node id, distinct",
		  "mmt %u gua 0x%" PRIx64 " node id %u", i,
		  i < PT_MAX_MMTS ? (uint64_t)a.mmts[i].gua : 0, query.node_id);
	{
		uint8_t *zero = calloc(1, 3 * 128 * KiB);

		check_read(fd, 0, zero, 3 * 128 * KiB,
			   "keys: formatted PMO reads as zeros");
		free(zero);
	}
	pt_expect_ret(mmtu_pmo_set_key(fd, key2, 16, 0), -EBUSY,
		      "keys: second key -> EBUSY");
	pt_expect_ret(mmtu_pmo_set_key(fd, key2, 16, MMT_KEY_RECEIVE), -EBUSY,
		      "keys: second key (receive) -> EBUSY");
	pt_snap(fd, &b);
	pt_result(pt_snap_eq(&a, &b), "keys: EBUSY changed nothing", "%s",
		  pt_states(&b));

	/* root counter */
	{
		uint64_t r = a.mmts[0].root_counter;

		pt_expect_ret(mmtu_pmo_set_root_counter(fd, r + 100), 0,
			      "keys: root counter up by 100");
		pt_snap(fd, &b);
		pt_result(!b.ret && b.mmts[0].root_counter >= r + 100,
			  "keys: info shows the new root counter",
			  "%" PRIu64 " -> %" PRIu64, r,
			  (uint64_t)b.mmts[0].root_counter);
		pt_expect_ret(mmtu_pmo_set_root_counter(fd, r + 50), -EINVAL,
			      "keys: root counter down -> EINVAL");
		pt_expect_ret(mmtu_pmo_set_root_counter(fd, 1ULL << 38),
			      -EINVAL, "keys: root counter 2^38 -> EINVAL");
		pt_expect_ret(mmtu_pmo_set_root_counter(fd, ~0ULL), -EINVAL,
			      "keys: root counter 2^64-1 -> EINVAL");
		pt_snap(fd, &a);
		pt_result(pt_snap_eq(&a, &b),
			  "keys: rejected counters changed nothing", "%s",
			  pt_states(&a));
		{
			struct mmt_pmo_counter cn = {
				.size = sizeof(cn), .flags = 1,
				.root_counter = r + 200,
			};

			pt_expect_ret(pt_sys(ioctl(fd,
					MMT_IOC_PMO_SET_ROOT_COUNTER, &cn)),
				      -EINVAL, "keys: counter flags -> EINVAL");
		}
	}

	/* invalidate, then key again */
	memset(buf, 0x5a, sizeof(buf));
	write_ok(fd, 1000, buf, sizeof(buf), "keys: write before invalidate");
	/* counter exhaustion fails closed, never wraps (2^38: sealing limit) */
	pt_expect_ret(mmtu_pmo_set_root_counter(fd, (1ULL << 38) - 1), 0,
		      "keys: root counter 2^38 - 1 (the last one) accepted");
	{
		uint8_t other[256];

		memset(other, 0xa7, sizeof(other));
		pt_expect_ret(pt_sys(pwrite(fd, other, sizeof(other), 1000)),
			      -EOVERFLOW,
			      "keys: pwrite with the root counter exhausted -> EOVERFLOW");
		check_read(fd, 1000, buf, sizeof(buf),
			   "keys: the refused write changed nothing");
	}
	pt_expect_ret(pt_sys(ioctl(fd, MMT_IOC_PMO_INVALIDATE, 0)), 0,
		      "keys: invalidate");
	pt_snap(fd, &b);
	pt_result(pt_all_state(&b, MMT_STATE_INVALID, 0) && b.info.key_len == 0,
		  "keys: after invalidate every MMT INVALID, no key",
		  "%s key_len %u", pt_states(&b), b.info.key_len);
	{
		uint8_t zero[1256] = { 0 };

		check_read(fd, 0, zero, sizeof(zero),
			   "keys: after invalidate the PMO is plain memory of zeros");
	}
	pt_expect_ret(mmtu_pmo_set_key(fd, key256, 32, 0), 0,
		      "keys: key again (AES-256) after invalidate");
	pt_snap(fd, &b);
	pt_result(pt_all_state(&b, MMT_STATE_VALID, 0) && b.info.key_len == 32,
		  "keys: VALID again, key_len 32", "%s key_len %u",
		  pt_states(&b), b.info.key_len);
	pt_result(!b.ret && b.mmts[0].gua > a.mmts[a.info.mmt_count - 1].gua,
		  "keys: fresh GUAs after re-keying (greater than before)",
		  "old 0x%" PRIx64 " new 0x%" PRIx64,
		  (uint64_t)a.mmts[a.info.mmt_count - 1].gua,
		  (uint64_t)b.mmts[0].gua);
	{
		uint8_t zero[256] = { 0 };

		check_read(fd, 1000, zero, sizeof(zero),
			   "keys: re-keyed PMO reads zeros (old data gone)");
	}
	close(fd);

	fd = new_pmo(128 * KiB, &geom2, key1, 16, MMT_KEY_RECEIVE,
		     "keys: receive PMO");
	if (fd < 0)
		return;
	pt_snap(fd, &a);
	pt_result(pt_all_state(&a, MMT_STATE_WAITING, 0) && a.info.key_len == 16,
		  "keys: MMT_KEY_RECEIVE -> every MMT WAITING", "%s",
		  pt_states(&a));
	pt_expect_ret(pt_sys(pread(fd, buf, 64, 0)), -EPERM,
		      "keys: pread on WAITING -> EPERM");
	pt_expect_ret(pt_sys(pwrite(fd, buf, 64, 0)), -EPERM,
		      "keys: pwrite on WAITING -> EPERM");
	pt_expect_ret(mmtu_pmo_set_root_counter(fd, 1000), 0,
		      "keys: minimum root counter on WAITING");
	pt_snap(fd, &b);
	pt_result(pt_all_state(&b, MMT_STATE_WAITING, 0),
		  "keys: still WAITING", "%s", pt_states(&b));
	close(fd);
}

/* ------------------------------------------------------------ pread/pwrite */

static void test_io(void)
{
	const uint64_t size = 3 * 128 * KiB;
	struct pt_rng rng;
	uint8_t *model, *buf, *got;
	struct pt_snap a, b;
	unsigned int i;
	ssize_t n;
	int fd;
	bool ok = true;

	fd = new_pmo(size, &geom2, key1, 16, 0, "io: create");
	if (fd < 0)
		return;
	model = calloc(1, size);
	buf = pt_malloc(size);
	got = pt_malloc(size);
	pt_rng_seed(&rng, seed * 7 + 3);

	/* random unaligned writes, each checked against the model */
	for (i = 0; i < 200 && ok; i++) {
		uint64_t off = pt_below(&rng, size);
		size_t len = 1 + pt_below(&rng, i % 10 ? 300 : 9000);

		if (off + len > size)
			len = size - off;
		pt_fill(&rng, buf, len);
		n = pwrite(fd, buf, len, off);
		if (n != (ssize_t)len) {
			ok = false;
			pt_result(false, "io: 200 random unaligned pwrites",
				  "pwrite %zu at %" PRIu64 ": %zd %s", len, off,
				  n, pt_errname(errno));
			break;
		}
		memcpy(model + off, buf, len);
		off = pt_below(&rng, size);
		len = 1 + pt_below(&rng, 5000);
		if (off + len > size)
			len = size - off;
		n = pread(fd, got, len, off);
		if (n != (ssize_t)len || memcmp(got, model + off, len)) {
			ok = false;
			pt_result(false, "io: 200 random unaligned pwrites",
				  "pread %zu at %" PRIu64 ": %zd %s", len, off,
				  n, n < 0 ? pt_errname(errno) : "data differs");
		}
	}
	if (ok)
		pt_result(true, "io: 200 random unaligned pwrites/preads", "-");
	check_read(fd, 0, model, size, "io: whole PMO matches the model");

	/* across a closure boundary, block-unaligned */
	pt_fill(&rng, buf, 5000);
	write_ok(fd, 128 * KiB - 2501, buf, 5000,
		 "io: pwrite across the closure 0/1 boundary");
	memcpy(model + 128 * KiB - 2501, buf, 5000);
	check_read(fd, 128 * KiB - 3000, model + 128 * KiB - 3000, 6000,
		   "io: pread across the boundary");

	/* the end of the PMO */
	pt_snap(fd, &a);
	pt_expect_ret(pt_sys(pread(fd, got, 100, size)), 0,
		      "io: pread at the end -> 0 (EOF)");
	pt_expect_ret(pt_sys(pread(fd, got, 100, size + 4096)), 0,
		      "io: pread past the end -> 0 (EOF)");
	n = pread(fd, got, 100, size - 10);
	pt_result(n == 10 && !memcmp(got, model + size - 10, 10),
		  "io: pread over the end -> short count 10",
		  "got %zd %s", n, n < 0 ? pt_errname(errno) : "");
	pt_expect_ret(pt_sys(pread(fd, got, 100, -1)), -EINVAL,
		      "io: pread at a negative offset -> EINVAL");
	n = pwrite(fd, buf, 100, size);
	pt_result(n < 0 && (errno == ENOSPC || errno == EFBIG),
		  "io: pwrite at the end -> ENOSPC or EFBIG",
		  "got %zd %s", n, n < 0 ? pt_errname(errno) : "");
	if (n < 0)
		printf("# pwrite at the end: %s\n", pt_errname(errno));
	n = pwrite(fd, buf, 100, size - 10);
	if (n > 0)
		memcpy(model + size - 10, buf, n);
	pt_result(n == 10 || (n < 0 && (errno == ENOSPC || errno == EFBIG)),
		  "io: pwrite over the end -> short count 10 (or ENOSPC/EFBIG)",
		  "got %zd %s", n, n < 0 ? pt_errname(errno) : "");
	printf("# pwrite over the end: %zd %s\n", n,
	       n < 0 ? pt_errname(errno) : "");
	pt_expect_ret(pt_sys(pwrite(fd, buf, 0, 0)), 0,
		      "io: zero-length pwrite -> 0");
	/*
	 * Non-blocking I/O (RWF_NOWAIT): EAGAIN, as uapi/mmt.h says, not the
	 * VFS's EOPNOTSUPP for a file that cannot do it (mmt-fuzz found
	 * that); nothing is read or written.  Zero bytes and the end of
	 * the PMO are answered without waiting.
	 */
	{
		struct iovec iov = { .iov_base = got, .iov_len = 100 };

		pt_expect_ret(pt_sys(preadv2(fd, &iov, 1, 0, RWF_NOWAIT)),
			      -EAGAIN, "io: preadv2 RWF_NOWAIT -> EAGAIN");
		iov.iov_base = buf;
		pt_expect_ret(pt_sys(pwritev2(fd, &iov, 1, 0, RWF_NOWAIT)),
			      -EAGAIN, "io: pwritev2 RWF_NOWAIT -> EAGAIN");
		pt_expect_ret(pt_sys(preadv2(fd, &iov, 1, size, RWF_NOWAIT)),
			      0, "io: preadv2 RWF_NOWAIT at the end -> 0");
		iov.iov_len = 0;
		pt_expect_ret(pt_sys(pwritev2(fd, &iov, 1, 0, RWF_NOWAIT)),
			      0, "io: pwritev2 RWF_NOWAIT of 0 bytes -> 0");
	}
	pt_expect_ret(pt_sys(pread(fd, pt_bad_ptr(), 64, 0)), -EFAULT,
		      "io: pread into a PROT_NONE page -> EFAULT");
	pt_expect_ret(pt_sys(pwrite(fd, pt_bad_ptr(), 64, 0)), -EFAULT,
		      "io: pwrite from a PROT_NONE page -> EFAULT");
	check_read(fd, 0, model, size,
		   "io: whole PMO still matches after the edge cases");
	pt_snap(fd, &b);
	pt_result(!a.ret && !b.ret && b.info.key_len == 16 &&
		  pt_all_state(&b, MMT_STATE_VALID, 0),
		  "io: still VALID after the edge cases", "%s",
		  pt_states(&b));
	free(model);
	free(buf);
	free(got);
	close(fd);
}

/* ------------------------------------------------------------ sizes */

/*
 * roundtrip() - PMO of @pmo_bytes (default geometry), @len random bytes at
 * @off, read back byte-exact; the rest of the PMO must still read as zeros
 */
static void roundtrip(uint64_t pmo_bytes, uint64_t off, size_t len,
		      const char *name)
{
	struct pt_rng rng;
	uint8_t *buf, *zero;
	char what[160];
	struct pt_snap s;
	double t0, t1, t2;
	size_t tail;
	int fd;

	fd = new_pmo(pmo_bytes, &geom3, key1, 16, 0, name);
	if (fd < 0)
		return;
	buf = pt_malloc(len);
	pt_rng_seed(&rng, seed ^ len);
	pt_fill(&rng, buf, len);
	t0 = pt_now();
	snprintf(what, sizeof(what), "%s: pwrite", name);
	write_ok(fd, off, buf, len, what);
	t1 = pt_now();
	snprintf(what, sizeof(what), "%s: byte-exact read back", name);
	check_read(fd, off, buf, len, what);
	t2 = pt_now();
	printf("# %s: write %.2f s, read %.2f s (guest clock, TCG)\n", name,
	       t1 - t0, t2 - t1);
	free(buf);
	tail = pmo_bytes - off - len;
	zero = calloc(1, off > tail ? off : tail);
	if (zero) {
		snprintf(what, sizeof(what), "%s: bytes around it still zero",
			 name);
		if (off)
			check_read(fd, 0, zero, off, what);
		if (tail)
			check_read(fd, off + len, zero, tail, what);
		free(zero);
	}
	pt_snap(fd, &s);
	snprintf(what, sizeof(what), "%s: every MMT VALID", name);
	pt_result(pt_all_state(&s, MMT_STATE_VALID, 0), what, "%s",
		  pt_states(&s));
	close(fd);
}

static void test_sizes(void)
{
	roundtrip(2 * MiB, 0, 1, "sizes: 1 byte");
	roundtrip(2 * MiB, 12345, 1, "sizes: 1 byte at 12345");
	roundtrip(2 * MiB, 0, 4096, "sizes: 4 KiB");
	roundtrip(4 * MiB, 2 * MiB - 2049, 4096,
		  "sizes: 4 KiB across two closures");
	roundtrip(4 * MiB, 0, 2 * MiB + 1,
		  "sizes: 2 MiB + 1 byte in two 2 MiB closures");
	roundtrip(4 * MiB, 3, 2 * MiB + 1, "sizes: 2 MiB + 1 byte at 3");
	if (skip_64m)
		printf("ok - sizes: 64 MiB # SKIP --no-64m\n");
	else
		roundtrip(64 * MiB, 0, 64 * MiB, "sizes: 64 MiB");
}

/* ------------------------------------------------------------ tamper */

static void test_tamper(void)
{
	static const struct {
		uint32_t region;
		uint64_t offset;
		const char *name;
	} t[] = {
		{ MMT_DEBUG_DATA, 100, "ciphertext byte" },
		{ MMT_DEBUG_MACS, 5 * 8 + 3, "data MAC byte" },
		{ MMT_DEBUG_NODES, 0, "tree node byte" },
		{ MMT_DEBUG_NODES, 8, "tree node minor counter byte" },
	};
	const uint64_t cb = 128 * KiB, size = 3 * cb;
	struct pt_snap a, b;
	struct pt_rng rng;
	uint8_t *data;
	char name[160];
	unsigned int i;
	int fd;

	if (!have_debug) {
		if (require_debug)
			pt_result(false, "tamper: MMT_FEAT_DEBUG present",
				  "module built without MMT_DEBUG=1");
		else
			printf("ok - tamper # SKIP module without MMT_FEAT_DEBUG\n");
		return;
	}
	fd = new_pmo(size, &geom2, key1, 16, 0, "tamper: create");
	if (fd < 0)
		return;
	data = pt_malloc(size);
	pt_rng_seed(&rng, seed + 99);
	pt_fill(&rng, data, size);
	write_ok(fd, 0, data, size, "tamper: fill 3 closures");

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uint8_t *got = pt_malloc(cb);
		ssize_t n;

		pt_snap(fd, &a);
		snprintf(name, sizeof(name), "tamper: flip %s of closure 1",
			 t[i].name);
		pt_expect_ret(mmtu_pmo_debug(fd, t[i].region, 1, t[i].offset,
					     0x40), 0, name);
		n = mmtu_pmo_read_all(fd, got, cb, cb);
		snprintf(name, sizeof(name),
			 "tamper: %s: pread of closure 1 -> EBADMSG",
			 t[i].name);
		pt_result(n == -EBADMSG, name, "got %zd %s", n,
			  n < 0 ? pt_errname((int)n) : "");
		snprintf(name, sizeof(name),
			 "tamper: %s: closure 0 still byte-exact", t[i].name);
		check_read(fd, 0, data, cb, name);
		snprintf(name, sizeof(name),
			 "tamper: %s: closure 2 still byte-exact", t[i].name);
		check_read(fd, 2 * cb, data + 2 * cb, cb, name);
		if (t[i].region == MMT_DEBUG_DATA) {
			/* the last block of closure 1 has its own MAC */
			snprintf(name, sizeof(name),
				 "tamper: %s: another block of closure 1 reads",
				 t[i].name);
			check_read(fd, 2 * cb - 64, data + 2 * cb - 64, 64,
				   name);
		}
		pt_snap(fd, &b);
		snprintf(name, sizeof(name),
			 "tamper: %s: info unchanged (states, GUAs, counters)",
			 t[i].name);
		pt_result(pt_snap_eq(&a, &b), name, "%s -> %s",
			  pt_states(&a), pt_states(&b));
		snprintf(name, sizeof(name), "tamper: %s: flip back",
			 t[i].name);
		pt_expect_ret(mmtu_pmo_debug(fd, t[i].region, 1, t[i].offset,
					     0x40), 0, name);
		snprintf(name, sizeof(name),
			 "tamper: %s: closure 1 byte-exact after the flip back",
			 t[i].name);
		check_read(fd, cb, data + cb, cb, name);
		free(got);
	}

	/* a tampered MAC also fails a partial write's verification? Only
	 * reads are specified; check the debug ioctl's own errors. */
	pt_snap(fd, &a);
	pt_expect_ret(mmtu_pmo_debug(fd, 3, 0, 0, 1), -EINVAL,
		      "tamper: region 3 -> EINVAL");
	pt_expect_ret(mmtu_pmo_debug(fd, MMT_DEBUG_DATA, 3, 0, 1), -EINVAL,
		      "tamper: closure 3 of 3 -> EINVAL");
	pt_expect_ret(mmtu_pmo_debug(fd, MMT_DEBUG_DATA, 0, cb, 1), -EINVAL,
		      "tamper: offset = closure size -> EINVAL");
	pt_expect_ret(mmtu_pmo_debug(fd, MMT_DEBUG_MACS, 0, cb / 64 * 8, 1),
		      -EINVAL, "tamper: offset past the MACs -> EINVAL");
	pt_expect_ret(mmtu_pmo_debug(fd, MMT_DEBUG_NODES, 0, 1ULL << 40, 1),
		      -EINVAL, "tamper: huge node offset -> EINVAL");
	pt_expect_ret(mmtu_pmo_debug(fd, MMT_DEBUG_DATA, 0, 0, 0), -EINVAL,
		      "tamper: zero mask -> EINVAL");
	{
		struct mmt_pmo_debug d = {
			.size = sizeof(d), .region = MMT_DEBUG_DATA,
			.xor_mask = 0x100,
		};

		pt_expect_ret(pt_sys(ioctl(fd, MMT_IOC_PMO_DEBUG, &d)),
			      -EINVAL, "tamper: mask 0x100 (not a byte) -> EINVAL");
		d.xor_mask = 1;
		d.reserved = 1;
		pt_expect_ret(pt_sys(ioctl(fd, MMT_IOC_PMO_DEBUG, &d)),
			      -EINVAL, "tamper: reserved -> EINVAL");
	}
	pt_snap(fd, &b);
	pt_result(pt_snap_eq(&a, &b), "tamper: rejected debug calls changed nothing",
		  "%s", pt_states(&b));
	check_read(fd, 0, data, size, "tamper: whole PMO byte-exact at the end");
	free(data);
	close(fd);
}

/* ------------------------------------------------------------ short reads */

/*
 * A pread across a bad block returns the good bytes before it (a short
 * count; uapi/mmt.h at MMT_IOC_PMO_CREATE, docs/USAGE.md section 3), and
 * the next pread, which starts at the bad block, fails with EBADMSG.
 * 2-level geometry: 64-byte blocks, 2048 per 128 KiB closure, leaf nodes
 * of 80 bytes (8 + 64 minors + 8 MAC) covering 64 blocks each.
 */
static void test_short_read(void)
{
	static const struct {
		uint32_t region;	/* MMT_DEBUG_* */
		uint32_t closure;
		uint64_t offset;	/* in the region */
		uint64_t off, len;	/* the pread */
		uint64_t want;		/* bytes it must return */
		const char *name;
	} t[] = {
		{ MMT_DEBUG_DATA, 0, 10 * 64 + 5, 0, 4096, 640,
		  "data block 10, pread 4096 at 0" },
		{ MMT_DEBUG_DATA, 0, 10 * 64 + 5, 100, 4096, 540,
		  "data block 10, pread 4096 at 100" },
		{ MMT_DEBUG_DATA, 0, 10 * 64 + 5, 639, 2, 1,
		  "data block 10, pread 2 at 639" },
		{ MMT_DEBUG_DATA, 0, 1093 * 64 + 7, 0, 128 * KiB, 1093 * 64,
		  "data block 1093, pread 128 KiB at 0" },
		{ MMT_DEBUG_MACS, 0, 1093 * 8 + 2, 0, 128 * KiB, 1093 * 64,
		  "MAC of block 1093, pread 128 KiB at 0" },
		{ MMT_DEBUG_DATA, 0, 1024 * 64, 0, 128 * KiB, 1024 * 64,
		  "data block 1024 (a 64 KiB step's first), pread 128 KiB" },
		{ MMT_DEBUG_DATA, 0, 1023 * 64, 0, 128 * KiB, 1023 * 64,
		  "data block 1023 (a 64 KiB step's last), pread 128 KiB" },
		{ MMT_DEBUG_NODES, 0, 17 * 80, 0, 128 * KiB, 17 * 64 * 64,
		  "leaf node 17 (blocks 1088-1151), pread 128 KiB at 0" },
		{ MMT_DEBUG_DATA, 1, 5 * 64, 0, 256 * KiB, 128 * KiB + 5 * 64,
		  "closure 1 data block 5, pread 256 KiB at 0" },
	};
	const uint64_t size = 3 * 128 * KiB;
	struct pt_rng rng;
	uint8_t *data, *got;
	char name[200];
	unsigned int i;
	ssize_t n;
	int fd;

	if (!have_debug) {
		if (require_debug)
			pt_result(false, "short read: MMT_FEAT_DEBUG present",
				  "module built without MMT_DEBUG=1");
		else
			printf("ok - short read # SKIP module without MMT_FEAT_DEBUG\n");
		return;
	}
	fd = new_pmo(size, &geom2, key1, 16, 0, "short read: create");
	if (fd < 0)
		return;
	data = pt_malloc(size);
	got = pt_malloc(size);
	pt_rng_seed(&rng, seed + 77);
	pt_fill(&rng, data, size);
	write_ok(fd, 0, data, size, "short read: fill 3 closures");

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		snprintf(name, sizeof(name), "short read: %s: flip", t[i].name);
		if (!pt_expect_ret(mmtu_pmo_debug(fd, t[i].region, t[i].closure,
						 t[i].offset, 0x10), 0, name))
			continue;
		memset(got, 0xa5, t[i].len);
		n = pread(fd, got, t[i].len, t[i].off);
		snprintf(name, sizeof(name),
			 "short read: %s -> %" PRIu64 " good bytes",
			 t[i].name, t[i].want);
		pt_result(n == (ssize_t)t[i].want &&
			  !memcmp(got, data + t[i].off, t[i].want), name,
			  "got %zd %s", n, n < 0 ? pt_errname(errno) :
			  n == (ssize_t)t[i].want ? "bytes differ" : "");
		n = pread(fd, got, t[i].len, t[i].off + t[i].want);
		snprintf(name, sizeof(name),
			 "short read: %s: the next pread -> EBADMSG", t[i].name);
		pt_result(n < 0 && errno == EBADMSG, name, "got %zd %s", n,
			  n < 0 ? pt_errname(errno) : "");
		n = mmtu_pmo_read_all(fd, got, t[i].len, t[i].off);
		snprintf(name, sizeof(name),
			 "short read: %s: mmtu_pmo_read_all -> EBADMSG",
			 t[i].name);
		pt_result(n == -EBADMSG, name, "got %zd %s", n,
			  n < 0 ? pt_errname((int)n) : "");
		snprintf(name, sizeof(name), "short read: %s: flip back",
			 t[i].name);
		pt_expect_ret(mmtu_pmo_debug(fd, t[i].region, t[i].closure,
					    t[i].offset, 0x10), 0, name);
	}
	check_read(fd, 0, data, size,
		   "short read: whole PMO byte-exact at the end");
	free(got);
	free(data);
	close(fd);
}

/* ------------------------------------------------------------ fd passing */

/* child of test_fdpass(): receive a PMO fd, write @len bytes of @seed */
static int fdpass_child_writer(int sock, size_t len, uint64_t s)
{
	struct pt_rng rng;
	uint8_t *buf = malloc(len);
	int fd = mmtu_recv_fd(sock);

	if (fd < 0 || !buf)
		return 10;
	pt_rng_seed(&rng, s);
	pt_fill(&rng, buf, len);
	if (mmtu_pmo_write_all(fd, buf, len, 0) != (ssize_t)len)
		return 11;
	close(fd);
	return write(sock, "W", 1) == 1 ? 0 : 12;
}

/* child: create, key and fill a PMO of its own, send it, exit */
static int fdpass_child_creator(int sock, size_t len, uint64_t s)
{
	struct pt_rng rng;
	uint8_t *buf = malloc(len);
	int d = mmtu_open(), fd;

	if (d < 0 || !buf)
		return 20;
	fd = mmtu_pmo_create(d, len, &geom2, 0, NULL);
	if (fd < 0)
		return 21;
	if (mmtu_pmo_set_key(fd, key2, 16, 0))
		return 22;
	pt_rng_seed(&rng, s);
	pt_fill(&rng, buf, len);
	if (mmtu_pmo_write_all(fd, buf, len, 0) != (ssize_t)len)
		return 23;
	if (mmtu_send_fd(sock, fd))
		return 24;
	close(fd);
	close(d);
	return 0;
}

static void test_fdpass(void)
{
	const size_t len = 2 * 128 * KiB;
	struct pt_rng rng;
	uint8_t *want;
	int sv[2], st, fd;
	pid_t pid;
	char c;

	want = pt_malloc(len);

	/* parent creates, child writes, parent reads */
	fd = new_pmo(len, &geom2, key1, 16, 0, "fdpass: create");
	if (fd < 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
		free(want);
		return;
	}
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		close(fd);
		_exit(fdpass_child_writer(sv[1], len, seed + 5));
	}
	close(sv[1]);
	pt_expect_ret(mmtu_send_fd(sv[0], fd), 0,
		      "fdpass: send the PMO fd to the child");
	st = -1;
	pt_result(read(sv[0], &c, 1) == 1 && waitpid(pid, &st, 0) == pid &&
		  WIFEXITED(st) && WEXITSTATUS(st) == 0,
		  "fdpass: child received the fd and wrote through it",
		  "child status 0x%x", st);
	pt_rng_seed(&rng, seed + 5);
	pt_fill(&rng, want, len);
	check_read(fd, 0, want, len,
		   "fdpass: parent reads the child's data byte-exact");
	close(sv[0]);
	close(fd);

	/* child creates, sends and exits; the PMO outlives it */
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
		free(want);
		return;
	}
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		_exit(fdpass_child_creator(sv[1], len, seed + 6));
	}
	close(sv[1]);
	fd = mmtu_recv_fd(sv[0]);
	st = -1;
	waitpid(pid, &st, 0);
	pt_result(fd >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
		  "fdpass: received a PMO from a child that exited",
		  "fd %d child status 0x%x", fd, st);
	if (fd >= 0) {
		struct pt_snap s;

		pt_rng_seed(&rng, seed + 6);
		pt_fill(&rng, want, len);
		check_read(fd, 0, want, len,
			   "fdpass: its data byte-exact after the creator exited");
		pt_snap(fd, &s);
		pt_result(pt_all_state(&s, MMT_STATE_VALID, 0) &&
			  s.info.key_len == 16,
			  "fdpass: received PMO VALID and keyed", "%s",
			  pt_states(&s));
		memset(want, 0x77, 4096);
		write_ok(fd, 4096, want, 4096,
			 "fdpass: the receiver can write too");
		check_read(fd, 4096, want, 4096,
			   "fdpass: and read its write back");
		close(fd);
	}
	close(sv[0]);
	free(want);
}

/* ------------------------------------------------------------ delegation */

/* sender A (filled with random data) and receiver B (WAITING) */
static bool make_pair(int *a, int *b, uint8_t *data, uint64_t size,
		      const uint8_t *bkey, const char *name)
{
	struct pt_rng rng;

	*a = new_pmo(size, &geom2, key1, 16, 0, name);
	if (*a < 0)
		return false;
	*b = new_pmo(size, &geom2, bkey, 16, MMT_KEY_RECEIVE, name);
	if (*b < 0) {
		close(*a);
		return false;
	}
	pt_rng_seed(&rng, seed + size);
	pt_fill(&rng, data, size);
	return mmtu_pmo_write_all(*a, data, size, 0) == (ssize_t)size;
}

static void delegate_mode(bool copy, bool eager)
{
	const uint64_t size = 2 * 128 * KiB;
	uint64_t flags = (copy ? MMT_DELEGATE_COPY : 0) |
		(eager ? MMT_DELEGATE_EAGER : 0), closures = 0;
	struct pt_snap sa0, sa, sb;
	uint8_t *data = pt_malloc(size), buf[256];
	char pre[64], name[160];
	uint32_t i;
	int a, b, ret;

	snprintf(pre, sizeof(pre), "delegate %s%s", copy ? "copy" : "transfer",
		 eager ? " eager" : "");
	if (!make_pair(&a, &b, data, size, key1, pre)) {
		pt_result(false, pre, "setup failed");
		free(data);
		return;
	}
	pt_snap(a, &sa0);
	ret = mmtu_pmo_delegate_local(a, b, flags, &closures);
	snprintf(name, sizeof(name), "%s: 2 closures delivered", pre);
	pt_result(!ret && closures == 2, name, "ret %s closures %" PRIu64,
		  pt_errname(ret), closures);
	pt_snap(a, &sa);
	pt_snap(b, &sb);
	snprintf(name, sizeof(name), "%s: sender %s", pre,
		 copy ? "VALID, writable" : "INVALID");
	pt_result(copy ? pt_all_state(&sa, MMT_STATE_VALID, 0) :
		  pt_all_state(&sa, MMT_STATE_INVALID, -1), name, "%s",
		  pt_states(&sa));
	snprintf(name, sizeof(name), "%s: receiver VALID%s", pre,
		 copy ? ", read-only" : ", writable");
	pt_result(pt_all_state(&sb, MMT_STATE_VALID, copy), name, "%s",
		  pt_states(&sb));
	for (i = 0; !sb.ret && !sa0.ret && i < sb.info.mmt_count; i++)
		if (sb.mmts[i].gua != sa0.mmts[i].gua)
			break;
	snprintf(name, sizeof(name), "%s: receiver keeps the sender's GUAs",
		 pre);
	pt_result(!sb.ret && i == sb.info.mmt_count, name, "mmt %u", i);
	snprintf(name, sizeof(name), "%s: receiver byte-exact", pre);
	check_read(b, 0, data, size, name);
	memset(buf, 0xc3, sizeof(buf));
	if (copy) {
		snprintf(name, sizeof(name), "%s: sender still byte-exact",
			 pre);
		check_read(a, 0, data, size, name);
		snprintf(name, sizeof(name), "%s: pwrite on the copy -> EPERM",
			 pre);
		pt_expect_ret(pt_sys(pwrite(b, buf, sizeof(buf), 0)), -EPERM,
			      name);
		snprintf(name, sizeof(name),
			 "%s: delegating the read-only copy -> EPERM", pre);
		{
			int c = new_pmo(size, &geom2, key1, 16,
					MMT_KEY_RECEIVE, name);

			if (c >= 0) {
				pt_expect_ret(mmtu_pmo_delegate_local(b, c, 0,
								      NULL),
					      -EPERM, name);
				close(c);
			}
		}
		snprintf(name, sizeof(name), "%s: the sender can still write",
			 pre);
		write_ok(a, 100, buf, sizeof(buf), name);
		snprintf(name, sizeof(name),
			 "%s: the copy does not see the sender's new write", pre);
		check_read(b, 0, data, size, name);
		memcpy(data + 100, buf, sizeof(buf));
		snprintf(name, sizeof(name), "%s: sender reads its new write",
			 pre);
		check_read(a, 0, data, size, name);
	} else {
		snprintf(name, sizeof(name), "%s: pread on the sender -> EPERM",
			 pre);
		pt_expect_ret(pt_sys(pread(a, buf, 64, 0)), -EPERM, name);
		snprintf(name, sizeof(name), "%s: pwrite on the sender -> EPERM",
			 pre);
		pt_expect_ret(pt_sys(pwrite(a, buf, 64, 0)), -EPERM, name);
		snprintf(name, sizeof(name), "%s: the receiver can write",
			 pre);
		write_ok(b, 300, buf, sizeof(buf), name);
		memcpy(data + 300, buf, sizeof(buf));
		snprintf(name, sizeof(name), "%s: and read it back", pre);
		check_read(b, 0, data, size, name);
		snprintf(name, sizeof(name),
			 "%s: delegating the INVALID sender again -> EPERM",
			 pre);
		{
			int c = new_pmo(size, &geom2, key1, 16,
					MMT_KEY_RECEIVE, name);

			if (c >= 0) {
				pt_expect_ret(mmtu_pmo_delegate_local(a, c, 0,
								      NULL),
					      -EPERM, name);
				close(c);
			}
		}
		/* the new owner can pass it on */
		{
			int c = new_pmo(size, &geom2, key1, 16,
					MMT_KEY_RECEIVE, name);

			snprintf(name, sizeof(name),
				 "%s: the receiver delegates it on (transfer)",
				 pre);
			if (c >= 0) {
				pt_expect_ret(mmtu_pmo_delegate_local(b, c, 0,
								      NULL),
					      0, name);
				snprintf(name, sizeof(name),
					 "%s: third PMO byte-exact", pre);
				check_read(c, 0, data, size, name);
				close(c);
			}
		}
	}
	close(a);
	close(b);
	free(data);
}

static void test_delegate(void)
{
	const uint64_t size = 2 * 128 * KiB;
	struct pt_snap sa, sb, sa2, sb2;
	uint8_t *data = pt_malloc(size);
	uint64_t closures, maxrc = 0;
	uint32_t i;
	int a, b, c, nul, ret;

	delegate_mode(false, false);
	delegate_mode(true, false);
	delegate_mode(false, true);
	delegate_mode(true, true);

	/* replay: a receiver whose minimum is above the closure's counter */
	if (make_pair(&a, &b, data, size, key1, "delegate replay")) {
		ret = mmtu_pmo_delegate_local(a, b, MMT_DELEGATE_COPY, NULL);
		pt_expect_ret(ret, 0, "delegate replay: first copy accepted");
		close(b);
		pt_snap(a, &sa);
		for (i = 0; !sa.ret && i < sa.info.mmt_count; i++)
			if (sa.mmts[i].root_counter > maxrc)
				maxrc = sa.mmts[i].root_counter;
		c = new_pmo(size, &geom2, key1, 16, MMT_KEY_RECEIVE,
			    "delegate replay: receiver");
		if (c >= 0) {
			pt_expect_ret(mmtu_pmo_set_root_counter(c, maxrc + 1000),
				      0, "delegate replay: receiver minimum above the sender's counter");
			pt_snap(c, &sb);
			closures = 99;
			ret = mmtu_pmo_delegate_local(a, c, MMT_DELEGATE_COPY,
						      &closures);
			pt_result(ret == -ESTALE && closures == 0,
				  "delegate replay: -> ESTALE, 0 closures",
				  "ret %s closures %" PRIu64, pt_errname(ret),
				  closures);
			pt_snap(a, &sa2);
			pt_snap(c, &sb2);
			pt_result(pt_snap_same(&sa, &sa2, "delegate replay"),
				  "delegate replay: sender unchanged (VALID)",
				  "%s -> %s", pt_states(&sa), pt_states(&sa2));
			pt_result(pt_snap_eq(&sb, &sb2) &&
				  pt_all_state(&sb2, MMT_STATE_WAITING, 0),
				  "delegate replay: receiver unchanged (WAITING)",
				  "%s", pt_states(&sb2));
			check_read(a, 0, data, size,
				   "delegate replay: sender still byte-exact");
			close(c);
		}
		close(a);
	}

	/* another key: authentication fails, nothing changes */
	if (make_pair(&a, &b, data, size, key2, "delegate other key")) {
		pt_snap(a, &sa);
		pt_snap(b, &sb);
		closures = 99;
		ret = mmtu_pmo_delegate_local(a, b, 0, &closures);
		pt_result(ret == -EBADMSG && closures == 0,
			  "delegate other key: -> EBADMSG, 0 closures",
			  "ret %s closures %" PRIu64, pt_errname(ret),
			  closures);
		pt_snap(a, &sa2);
		pt_snap(b, &sb2);
		pt_result(pt_snap_same(&sa, &sa2, "delegate other key"),
			  "delegate other key: sender unchanged (VALID)",
			  "%s -> %s", pt_states(&sa), pt_states(&sa2));
		pt_result(pt_snap_eq(&sb, &sb2),
			  "delegate other key: receiver unchanged (WAITING)",
			  "%s -> %s", pt_states(&sb), pt_states(&sb2));
		check_read(a, 0, data, size,
			   "delegate other key: sender still byte-exact");
		close(a);
		close(b);
	}

	/* tampered closure in flight: flip the sender's backing memory */
	if (have_debug &&
	    make_pair(&a, &b, data, size, key1, "delegate tampered")) {
		pt_snap(b, &sb);
		mmtu_pmo_debug(a, MMT_DEBUG_NODES, 1, 0, 0x01);
		closures = 99;
		ret = mmtu_pmo_delegate_local(a, b, MMT_DELEGATE_EAGER,
					      &closures);
		pt_result(ret == -EBADMSG && closures <= 1,
			  "delegate tampered: eager delegation of a tampered closure -> EBADMSG",
			  "ret %s closures %" PRIu64, pt_errname(ret),
			  closures);
		pt_snap(b, &sb2);
		pt_result(!sb2.ret && sb2.mmts[1].state == MMT_STATE_WAITING,
			  "delegate tampered: the rejected closure's receiver MMT stays WAITING",
			  "%s", pt_states(&sb2));
		close(a);
		close(b);
	}

	/* argument errors; both PMOs unchanged */
	if (make_pair(&a, &b, data, size, key1, "delegate errors")) {
		struct mmt_delegate_local d;
		struct mmt_geometry g3 = { .levels = 1 };
		int other;

		nul = open("/dev/null", O_RDWR | O_CLOEXEC);
		pt_snap(a, &sa);
		pt_snap(b, &sb);
		pt_expect_ret(mmtu_pmo_delegate_local(a, a, 0, NULL), -EINVAL,
			      "delegate errors: to itself -> EINVAL");
		pt_expect_ret(mmtu_pmo_delegate_local(a, -1, 0, NULL), -EBADF,
			      "delegate errors: dst_fd -1 -> EBADF");
		pt_expect_ret(mmtu_pmo_delegate_local(a, 1000, 0, NULL), -EBADF,
			      "delegate errors: dst_fd not open -> EBADF");
		pt_expect_ret(mmtu_pmo_delegate_local(a, nul, 0, NULL), -ENOTTY,
			      "delegate errors: dst_fd /dev/null -> ENOTTY");
		pt_expect_ret(mmtu_pmo_delegate_local(a, dev, 0, NULL), -ENOTTY,
			      "delegate errors: dst_fd /dev/mmt -> ENOTTY");
		pt_expect_ret(mmtu_pmo_delegate_local(a, b, 1ULL << 40, NULL),
			      -EINVAL, "delegate errors: unknown flag -> EINVAL");
		memset(&d, 0, sizeof(d));
		d.size = sizeof(d);
		d.dst_fd = b;
		d.reserved[1] = 1;
		pt_expect_ret(pt_sys(ioctl(a, MMT_IOC_PMO_DELEGATE_LOCAL, &d)),
			      -EINVAL, "delegate errors: reserved -> EINVAL");
		d.reserved[1] = 0;
		d.size = 8;
		pt_expect_ret(pt_sys(ioctl(a, MMT_IOC_PMO_DELEGATE_LOCAL, &d)),
			      -EINVAL, "delegate errors: size 8 -> EINVAL");
		pt_expect_ret(pt_sys(ioctl(dev, MMT_IOC_PMO_DELEGATE_LOCAL,
					   &d)), -ENOTTY,
			      "delegate errors: on /dev/mmt -> ENOTTY");
		other = new_pmo(2 * size, &geom2, key1, 16, MMT_KEY_RECEIVE,
				"delegate errors: bigger receiver");
		if (other >= 0) {
			pt_expect_ret(mmtu_pmo_delegate_local(a, other, 0, NULL),
				      -EMEDIUMTYPE,
				      "delegate errors: other size -> EMEDIUMTYPE");
			close(other);
		}
		other = new_pmo(size, &g3, key1, 16, MMT_KEY_RECEIVE,
				"delegate errors: other geometry");
		if (other >= 0) {
			pt_expect_ret(mmtu_pmo_delegate_local(a, other, 0, NULL),
				      -EMEDIUMTYPE,
				      "delegate errors: other geometry -> EMEDIUMTYPE");
			close(other);
		}
		other = new_pmo(size, &geom2, key1, 16, 0,
				"delegate errors: VALID receiver");
		if (other >= 0) {
			pt_expect_ret(mmtu_pmo_delegate_local(a, other, 0, NULL),
				      -EPERM,
				      "delegate errors: receiver VALID -> EPERM");
			close(other);
		}
		other = new_pmo(size, &geom2, NULL, 0, 0,
				"delegate errors: unkeyed receiver");
		if (other >= 0) {
			pt_expect_ret(mmtu_pmo_delegate_local(a, other, 0, NULL),
				      -EPERM,
				      "delegate errors: receiver unkeyed -> EPERM");
			pt_expect_ret(mmtu_pmo_delegate_local(other, b, 0, NULL),
				      -EPERM,
				      "delegate errors: sender unkeyed -> EPERM");
			close(other);
		}
		pt_expect_ret(mmtu_pmo_delegate_local(b, a, 0, NULL), -EPERM,
			      "delegate errors: WAITING sender -> EPERM");
		pt_snap(a, &sa2);
		pt_snap(b, &sb2);
		pt_result(pt_snap_same(&sa, &sa2, "delegate errors") &&
			  pt_snap_eq(&sb, &sb2),
			  "delegate errors: both PMOs unchanged",
			  "%s / %s", pt_states(&sa2), pt_states(&sb2));
		pt_expect_ret(mmtu_pmo_delegate_local(a, b, 0, NULL), 0,
			      "delegate errors: then a good delegation works");
		check_read(b, 0, data, size,
			   "delegate errors: receiver byte-exact");
		if (nul >= 0)
			close(nul);
		close(a);
		close(b);
	}
	free(data);
}

/* ------------------------------------------------------- edges of I/O */

/*
 * What uapi/mmt.h documents at MMT_IOC_PMO_CREATE: a
 * call of zero bytes returns 0 without looking at the MMTs' states, also
 * where one byte fails with EPERM (a WAITING MMT, a read-only copy); and a
 * pwrite is carried out in steps of at most 64 KiB within a closure, so a
 * failure part of the way leaves the earlier steps written and returns
 * their count, and the next call returns the error.
 */
static void test_io_edges(void)
{
	const uint64_t size = 3 * 128 * KiB;
	uint8_t *data = pt_malloc(size), *buf = pt_malloc(size);
	struct pt_rng rng;
	int a, b;
	ssize_t n;

	/* zero bytes: 0 where one byte is EPERM */
	if (make_pair(&a, &b, data, size, key1, "edges: zero bytes")) {
		pt_expect_ret(pt_sys(pwrite(b, buf, 0, 0)), 0,
			      "edges: WAITING: pwrite of 0 bytes -> 0");
		pt_expect_ret(pt_sys(pread(b, buf, 0, 0)), 0,
			      "edges: WAITING: pread of 0 bytes -> 0");
		pt_expect_ret(pt_sys(pwrite(b, buf, 1, 0)), -EPERM,
			      "edges: WAITING: pwrite of 1 byte -> EPERM");
		pt_expect_ret(pt_sys(pread(b, buf, 1, 0)), -EPERM,
			      "edges: WAITING: pread of 1 byte -> EPERM");
		pt_expect_ret(mmtu_pmo_delegate_local(a, b, MMT_DELEGATE_COPY,
						      NULL), 0,
			      "edges: copy delegation (receiver read-only)");
		pt_expect_ret(pt_sys(pwrite(b, buf, 0, 0)), 0,
			      "edges: read-only copy: pwrite of 0 bytes -> 0");
		pt_expect_ret(pt_sys(pwrite(b, buf, 1, 0)), -EPERM,
			      "edges: read-only copy: pwrite of 1 byte -> EPERM");
		close(a);
		close(b);
	}

	/* a pwrite of several steps that fails part of the way */
	if (!have_debug) {
		printf("ok - edges: partial pwrite # SKIP module without MMT_FEAT_DEBUG\n");
	} else if ((a = new_pmo(size, &geom2, key1, 16, 0,
				"edges: partial pwrite")) >= 0) {
		pt_rng_seed(&rng, seed + 5);
		pt_fill(&rng, buf, size);
		/* closure 1's top tree node: every write into it fails */
		pt_expect_ret(mmtu_pmo_debug(a, MMT_DEBUG_NODES, 1, 0, 0x01), 0,
			      "edges: flip a tree node byte of closure 1");
		n = pwrite(a, buf, size, 0);
		pt_result(n == (ssize_t)(128 * KiB),
			  "edges: 384 KiB pwrite -> 131072: closure 0's two 64 KiB steps written, closure 1's failed",
			  "pwrite returned %zd (%s)", n,
			  n < 0 ? strerror(errno) : "");
		check_read(a, 0, buf, 128 * KiB,
			   "edges: the steps before the failure are written");
		n = pwrite(a, buf + 128 * KiB, size - 128 * KiB, 128 * KiB);
		pt_result(n < 0 && errno == EBADMSG,
			  "edges: the next pwrite, at the failed step -> EBADMSG",
			  "pwrite returned %zd (%s)", n,
			  n < 0 ? strerror(errno) : "");
		memset(data, 0, 128 * KiB);
		check_read(a, 2 * 128 * KiB, data, 128 * KiB,
			   "edges: closure 2, after the failure, untouched");
		close(a);
	}
	free(buf);
	free(data);
}

/* ------------------------------------------------------- own memory bad */

/* "MMT i: VALID, flags 0x4, gua 0x..." of snapshot @s, for messages */
static const char *mmt_desc(const struct pt_snap *s, uint32_t i)
{
	static char buf[2][96];
	static int idx;

	idx = !idx;
	snprintf(buf[idx], sizeof(buf[0]), "MMT %u %s flags %#x gua %#llx", i,
		 mmtu_state_str(s->mmts[i].state), s->mmts[i].flags,
		 (unsigned long long)s->mmts[i].gua);
	return buf[idx];
}

/*
 * A transfer refused because the sender's own memory fails verification
 * (uapi/mmt.h).  The sender cannot re-encrypt that MMT under a
 * fresh GUA (that verifies everything first), so it stays VALID and
 * readable under its old GUA, flagged MMT_INFO_REGUA_DUE (not read-only).
 * A write or send of it fails with EBADMSG and changes nothing while its
 * memory fails; once the memory verifies again, the next write
 * re-encrypts it under a fresh GUA first and goes through, nothing is
 * lost, and the PMO delegates again.
 */
static void test_own_memory_bad(void)
{
	const uint64_t size = 2 * 128 * KiB, bad = 10 * 64 + 3;
	uint8_t *data = pt_malloc(size);
	struct pt_snap sa, sa2;
	uint64_t closures;
	int a, b, c, ret;
	ssize_t n;

	if (!have_debug) {
		if (require_debug)
			pt_result(false, "own memory bad: MMT_FEAT_DEBUG present",
				  "module built without MMT_DEBUG=1");
		else
			printf("ok - own memory bad # SKIP module without MMT_FEAT_DEBUG\n");
		free(data);
		return;
	}
	if (!make_pair(&a, &b, data, size, key1, "own memory bad")) {
		free(data);
		return;
	}
	pt_snap(a, &sa);
	pt_expect_ret(mmtu_pmo_debug(a, MMT_DEBUG_DATA, 0, bad, 0x20), 0,
		      "own memory bad: flip a data byte of the sender's MMT 0");
	closures = 99;
	ret = mmtu_pmo_delegate_local(a, b, MMT_DELEGATE_EAGER, &closures);
	pt_result(ret == -EBADMSG && closures == 0,
		  "own memory bad: eager transfer -> EBADMSG, 0 closures",
		  "ret %s closures %" PRIu64, pt_errname(ret), closures);
	pt_snap(a, &sa2);
	pt_result(!sa2.ret && sa2.mmts[0].state == MMT_STATE_VALID &&
		  sa2.mmts[0].flags == MMT_INFO_REGUA_DUE &&
		  sa2.mmts[0].gua == sa.mmts[0].gua &&
		  sa2.mmts[1].state == MMT_STATE_VALID && !sa2.mmts[1].flags &&
		  sa2.mmts[1].gua == sa.mmts[1].gua,
		  "own memory bad: MMT 0 VALID, old GUA, MMT_INFO_REGUA_DUE (not read-only); MMT 1 unchanged",
		  "%s; %s", mmt_desc(&sa2, 0), mmt_desc(&sa2, 1));
	check_read(a, 0, data, bad / 64 * 64,
		   "own memory bad: the blocks before the bad one read back");
	check_read(a, 128 * KiB, data + 128 * KiB, 128 * KiB,
		   "own memory bad: MMT 1 reads back");
	n = pwrite(a, "x", 1, 5);
	pt_result(n < 0 && errno == EBADMSG,
		  "own memory bad: a write to MMT 0 -> EBADMSG while it fails verification",
		  "pwrite returned %zd (%s)", n, n < 0 ? strerror(errno) : "");
	closures = 99;
	ret = mmtu_pmo_delegate_local(a, b, 0, &closures);
	pt_result(ret == -EBADMSG && closures == 0,
		  "own memory bad: sending it again -> EBADMSG, 0 closures",
		  "ret %s closures %" PRIu64, pt_errname(ret), closures);
	pt_snap(a, &sa2);
	pt_result(!sa2.ret && sa2.mmts[0].flags == MMT_INFO_REGUA_DUE &&
		  sa2.mmts[0].gua == sa.mmts[0].gua,
		  "own memory bad: the failed write and send changed nothing",
		  "%s", mmt_desc(&sa2, 0));

	/* the memory verifies again: the owner gets its MMT back */
	pt_expect_ret(mmtu_pmo_debug(a, MMT_DEBUG_DATA, 0, bad, 0x20), 0,
		      "own memory bad: flip the byte back");
	n = pwrite(a, "x", 1, 5);
	pt_result(n == 1, "own memory bad: then a write to MMT 0 succeeds",
		  "pwrite returned %zd (%s)", n, n < 0 ? strerror(errno) : "");
	data[5] = 'x';
	pt_snap(a, &sa2);
	pt_result(!sa2.ret && sa2.mmts[0].state == MMT_STATE_VALID &&
		  !sa2.mmts[0].flags && sa2.mmts[0].gua > sa.mmts[0].gua,
		  "own memory bad: MMT 0 VALID under a fresh GUA, flag cleared",
		  "%s (was gua %#llx)", mmt_desc(&sa2, 0),
		  (unsigned long long)sa.mmts[0].gua);
	check_read(a, 0, data, size,
		   "own memory bad: the sender reads back byte-exact, nothing lost");
	c = new_pmo(size, &geom2, key1, 16, MMT_KEY_RECEIVE,
		    "own memory bad: second receiver");
	if (c >= 0) {
		closures = 0;
		ret = mmtu_pmo_delegate_local(a, c, MMT_DELEGATE_EAGER,
					      &closures);
		pt_result(ret == 0 && closures == 2,
			  "own memory bad: the PMO delegates again (transfer, eager)",
			  "ret %s closures %" PRIu64, pt_errname(ret),
			  closures);
		check_read(c, 0, data, size,
			   "own memory bad: the receiver reads it back byte-exact");
		close(c);
	}
	close(a);
	close(b);
	free(data);
}

/* ------------------------------------------------------------ plain */

/* every MMT INVALID with MMT_INFO_PLAIN and key_len 0 */
static bool is_plain(int fd)
{
	struct pt_snap s;
	uint32_t i;

	if (pt_snap(fd, &s) || s.info.key_len || !s.info.mmt_count)
		return false;
	for (i = 0; i < s.info.mmt_count; i++)
		if (s.mmts[i].state != MMT_STATE_INVALID ||
		    !(s.mmts[i].flags & MMT_INFO_PLAIN))
			return false;
	return true;
}

/*
 * A PMO without a key is plain memory: pread/pwrite copy its bytes as they
 * are (byte-exact, across closures and 64 KiB steps, at the end as for
 * keyed PMOs); with MMT_FEAT_DEBUG a byte flipped in the backing memory
 * shows in the next pread (nothing checks it).  Keying replaces the bytes
 * (formatted: zeros), keyed I/O goes through the controller as before
 * (MMT_INFO_PLAIN gone, a flipped byte fails with EBADMSG), and
 * MMT_IOC_PMO_INVALIDATE makes it plain memory of zeros again, never the
 * stale ciphertext.
 */
static void test_plain(void)
{
	const uint64_t size = 3 * 128 * KiB;
	uint8_t *data = pt_malloc(size), *zero = pt_malloc(size);
	uint8_t *got = pt_malloc(size);
	struct pt_rng r;
	uint8_t b;
	ssize_t n;
	int fd;

	memset(zero, 0, size);
	pt_rng_seed(&r, seed + 77);
	pt_fill(&r, data, size);
	fd = new_pmo(size, &geom2, NULL, 0, 0, "plain: create");
	if (fd < 0)
		goto out;
	pt_result(is_plain(fd),
		  "plain: a new PMO is plain (key_len 0, every MMT INVALID with MMT_INFO_PLAIN)",
		  "-");
	check_read(fd, 0, zero, size, "plain: a new PMO reads as zeros");
	/* whole PMO, then an unaligned range across a closure boundary */
	write_ok(fd, 0, data, size, "plain: pwrite 384 KiB (3 closures)");
	check_read(fd, 0, data, size, "plain: pread it back byte-exact");
	memset(data + 131000, 0xa5, 70000);
	write_ok(fd, 131000, data + 131000, 70000,
		 "plain: pwrite 70000 bytes at 131000 (across closures 0 and 1)");
	check_read(fd, 0, data, size,
		   "plain: the whole PMO byte-exact after it");
	check_read(fd, 131071, data + 131071, 2,
		   "plain: 2 bytes across the closure boundary");
	n = pread(fd, got, 100, size - 10);
	pt_result(n == 10 && !memcmp(got, data + size - 10, 10),
		  "plain: pread across the end returns the 10 bytes up to it",
		  "%zd", n);
	pt_expect_ret(pt_sys(pwrite(fd, data, 1, size)), -ENOSPC,
		      "plain: pwrite at the end -> ENOSPC");
	pt_result(is_plain(fd), "plain: still plain after the I/O", "-");
	pt_expect_ret(mmtu_pmo_set_root_counter(fd, 10), -EPERM,
		      "plain: set root counter -> EPERM (no MMT root)");
	if (have_debug) {
		/* the backing memory is what pread returns */
		pt_expect_ret(mmtu_pmo_debug(fd, MMT_DEBUG_DATA, 1, 5, 0x5a), 0,
			      "plain: flip a byte of closure 1's memory");
		data[128 * KiB + 5] ^= 0x5a;
		check_read(fd, 0, data, size,
			   "plain: pread shows the flipped byte, nothing checked");
	}

	/* keyed: formatted, the plain bytes gone; the controller again */
	pt_expect_ret(mmtu_pmo_set_key(fd, key1, 16, 0), 0,
		      "plain: key the plain PMO");
	{
		struct pt_snap s;

		pt_snap(fd, &s);
		pt_result(pt_all_state(&s, MMT_STATE_VALID, 0) &&
			  s.info.key_len == 16 &&
			  !(s.mmts[0].flags & MMT_INFO_PLAIN),
			  "plain: keyed: VALID, key_len 16, no MMT_INFO_PLAIN",
			  "%s key_len %u", pt_states(&s), s.info.key_len);
	}
	check_read(fd, 0, zero, size,
		   "plain: keyed: reads zeros (formatted; the plain bytes are gone)");
	write_ok(fd, 1000, data, 5000, "plain: keyed: pwrite");
	check_read(fd, 1000, data, 5000, "plain: keyed: pread byte-exact");
	if (have_debug) {
		pt_expect_ret(mmtu_pmo_debug(fd, MMT_DEBUG_DATA, 0, 1000, 1), 0,
			      "plain: keyed: flip a ciphertext byte");
		pt_expect_ret(pt_sys(pread(fd, &b, 1, 1000)), -EBADMSG,
			      "plain: keyed: the flipped byte fails with EBADMSG");
	}
	pt_expect_ret(mmtu_pmo_invalidate(fd), 0, "plain: invalidate");
	pt_result(is_plain(fd), "plain: invalidated: plain again", "-");
	check_read(fd, 0, zero, size,
		   "plain: invalidated: every byte zero (no stale ciphertext)");
	write_ok(fd, 7, data, 300000, "plain: invalidated: pwrite plain");
	check_read(fd, 7, data, 300000, "plain: invalidated: pread byte-exact");

	/* MMT_KEY_RECEIVE: WAITING, unreadable; invalidate zeroes */
	pt_expect_ret(mmtu_pmo_set_key(fd, key1, 16, MMT_KEY_RECEIVE), 0,
		      "plain: key for receipt");
	pt_expect_ret(pt_sys(pread(fd, &b, 1, 7)), -EPERM,
		      "plain: WAITING: pread -> EPERM");
	pt_expect_ret(mmtu_pmo_invalidate(fd), 0, "plain: invalidate again");
	check_read(fd, 0, zero, size,
		   "plain: invalidated after WAITING: every byte zero");
	close(fd);
out:
	free(data);
	free(zero);
	free(got);
}

/* ------------------------------------------------------------ main */

static const struct {
	const char *name;
	void (*fn)(void);
} groups[] = {
	{ "create", test_create },
	{ "keys", test_keys },
	{ "io", test_io },
	{ "sizes", test_sizes },
	{ "tamper", test_tamper },
	{ "shortread", test_short_read },
	{ "fdpass", test_fdpass },
	{ "delegate", test_delegate },
	{ "edges", test_io_edges },
	{ "ownbad", test_own_memory_bad },
	{ "plain", test_plain },
};

int main(int argc, char **argv)
{
	const char *only = NULL;
	unsigned int i;
	int ret;

	for (i = 1; i < (unsigned int)argc; i++) {
		if (!strcmp(argv[i], "--seed") && i + 1 < (unsigned int)argc)
			seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--no-64m"))
			skip_64m = true;
		else if (!strcmp(argv[i], "--require-debug"))
			require_debug = true;
		else if (!strcmp(argv[i], "--only") &&
			 i + 1 < (unsigned int)argc)
			only = argv[++i];
		else {
			fprintf(stderr, "usage: %s [--seed N] [--no-64m] [--require-debug] [--only GROUP]\n",
				argv[0]);
			return 2;
		}
	}
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	dev = mmtu_open();
	if (dev < 0) {
		printf("not ok - open /dev/mmt (%s)\n", pt_errname(dev));
		return 2;
	}
	ret = mmtu_query(dev, &query);
	pt_result(!ret && (query.features & MMT_FEAT_PMO),
		  "query: module has MMT_FEAT_PMO", "ret %s features 0x%llx",
		  pt_errname(ret), (unsigned long long)query.features);
	pt_result(!ret && (query.features & MMT_FEAT_LOCAL_DELEGATE),
		  "query: module has MMT_FEAT_LOCAL_DELEGATE",
		  "features 0x%llx", (unsigned long long)query.features);
	have_debug = !ret && (query.features & MMT_FEAT_DEBUG);
	printf("# module %s, api %u, features 0x%llx, node id %u, seed %" PRIu64 "\n",
	       query.module_version, query.api_version,
	       (unsigned long long)query.features, query.node_id, seed);
	for (i = 0; i < sizeof(groups) / sizeof(groups[0]); i++) {
		if (only && strcmp(only, groups[i].name))
			continue;
		printf("# --- %s\n", groups[i].name);
		groups[i].fn();
	}
	close(dev);
	pt_summary("pmo-basic");
	return pt_fail ? 1 : 0;
}
