// SPDX-License-Identifier: GPL-2.0
/*
 * mmt-query.c - guest test of MMT_IOC_QUERY on /dev/mmt
 *
 * Built static by tests/guest/run.sh (gcc -static -I uapi) and run inside
 * the guest.  Checks the documented behaviour of uapi/mmt.h: a good query
 * returns MMT_API_VERSION, MMT_FEAT_QUERY and a NUL-terminated module
 * version; bad input fails with the documented errno (flags or reserved
 * non-zero, size below MMT_QUERY_SIZE_VER0 -> EINVAL; bad pointer ->
 * EFAULT; larger struct with non-zero tail -> E2BIG; unknown command ->
 * ENOTTY) and leaves the caller's buffer untouched.
 *
 * Output: one "ok - query: ..." / "not ok - query: ..." line per check, then
 * "mmt-query: api_version=... module_version=...".  Exit status: the number
 * of failed checks (0: all passed), 2 if /dev/mmt cannot be opened.
 *
 * Usage: mmt-query [DEVICE]   (default /dev/mmt)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mmt.h"

static int failures;

/* check() - print one TAP-style line; count a failure */
static void check(int cond, const char *name, const char *fmt, long a, long b)
{
	if (cond) {
		printf("ok - query: %s\n", name);
		return;
	}
	failures++;
	printf("not ok - query: %s (", name);
	printf(fmt, a, b);
	printf(")\n");
}

/*
 * expect_errno() - issue @cmd on @fd with @arg, expect -1 and errno @want
 */
static void expect_errno(int fd, unsigned long cmd, void *arg, int want,
			 const char *name)
{
	int ret;

	errno = 0;
	ret = ioctl(fd, cmd, arg);
	check(ret == -1 && errno == want, name,
	      "ret %ld errno %ld", ret, errno);
}

/*
 * expect_rejected() - like expect_errno() on a struct mmt_query buffer of
 * @len bytes at @buf, and check the kernel did not write to it
 */
static void expect_rejected(int fd, void *buf, size_t len, int want,
			    const char *name)
{
	unsigned char before[128];
	char what[128];

	memcpy(before, buf, len);
	expect_errno(fd, MMT_IOC_QUERY, buf, want, name);
	snprintf(what, sizeof(what), "%s: buffer unchanged", name);
	check(memcmp(before, buf, len) == 0, what, "%.0ld%.0ld", 0, 0);
}

int main(int argc, char **argv)
{
	const char *dev = argc > 1 ? argv[1] : "/dev/mmt";
	/* room for a "newer" struct: 64 known bytes + 64 extra */
	union {
		struct mmt_query q;
		unsigned char bytes[128];
	} u;
	struct mmt_query *q = &u.q;
	void *noaccess;
	long pagesz = sysconf(_SC_PAGESIZE);
	int fd, ret;

	fd = open(dev, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		printf("not ok - query: open %s (errno %d %s)\n", dev, errno,
		       strerror(errno));
		return 2;
	}
	printf("ok - query: open %s\n", dev);

	/* good query; output fields pre-filled with junk */
	memset(&u, 0xa5, sizeof(u));
	q->size = MMT_QUERY_SIZE_VER0;
	q->flags = 0;
	q->reserved = 0;
	ret = ioctl(fd, MMT_IOC_QUERY, q);
	check(ret == 0, "MMT_IOC_QUERY succeeds", "ret %ld errno %ld", ret,
	      errno);
	check(q->api_version == MMT_API_VERSION, "api_version == MMT_API_VERSION",
	      "got %ld want %ld", q->api_version, MMT_API_VERSION);
	check(q->features & MMT_FEAT_QUERY, "features has MMT_FEAT_QUERY",
	      "features %#lx%.0ld", (long)q->features, 0);
	check(q->reserved == 0, "reserved zeroed", "reserved %#lx%.0ld",
	      q->reserved, 0);
	check(memchr(q->module_version, 0, sizeof(q->module_version)) &&
	      q->module_version[0] != 0, "module_version NUL-terminated",
	      "%.0ld%.0ld", 0, 0);
	check(u.bytes[MMT_QUERY_SIZE_VER0] == 0xa5,
	      "no write past the caller's size", "byte %#lx%.0ld",
	      u.bytes[MMT_QUERY_SIZE_VER0], 0);
	printf("mmt-query: api_version=%u closure_version=%u features=%#llx",
	       q->api_version, q->closure_version,
	       (unsigned long long)q->features);
	printf(" node_id=%u module_version=%.32s\n", q->node_id,
	       q->module_version);

	/* flags != 0 -> EINVAL, buffer untouched */
	memset(&u, 0, sizeof(u));
	q->size = MMT_QUERY_SIZE_VER0;
	q->flags = 1;
	expect_rejected(fd, q, MMT_QUERY_SIZE_VER0, EINVAL, "flags=1 -> EINVAL");
	q->flags = 0x80000000u;
	expect_rejected(fd, q, MMT_QUERY_SIZE_VER0, EINVAL,
			"flags=bit31 -> EINVAL");

	/* reserved != 0 -> EINVAL (uapi convention for reserved fields) */
	memset(&u, 0, sizeof(u));
	q->size = MMT_QUERY_SIZE_VER0;
	q->reserved = 1;
	expect_rejected(fd, q, MMT_QUERY_SIZE_VER0, EINVAL,
			"reserved!=0 -> EINVAL");

	/* size below MMT_QUERY_SIZE_VER0 -> EINVAL */
	memset(&u, 0, sizeof(u));
	q->size = MMT_QUERY_SIZE_VER0 - 8;
	expect_rejected(fd, q, MMT_QUERY_SIZE_VER0, EINVAL,
			"size=VER0-8 -> EINVAL");
	q->size = 0;
	expect_rejected(fd, q, MMT_QUERY_SIZE_VER0, EINVAL, "size=0 -> EINVAL");

	/* larger struct: zero tail accepted, non-zero tail -> E2BIG */
	memset(&u, 0, sizeof(u));
	q->size = sizeof(u);
	ret = ioctl(fd, MMT_IOC_QUERY, q);
	check(ret == 0 && q->api_version == MMT_API_VERSION,
	      "size=128 with zero tail accepted", "ret %ld errno %ld", ret,
	      errno);
	memset(&u, 0, sizeof(u));
	q->size = sizeof(u);
	u.bytes[100] = 1;
	expect_rejected(fd, q, sizeof(u), E2BIG,
			"size=128 with non-zero tail -> E2BIG");

	/* bad pointers -> EFAULT */
	expect_errno(fd, MMT_IOC_QUERY, NULL, EFAULT, "NULL argument -> EFAULT");
	noaccess = mmap(NULL, pagesz, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			-1, 0);
	if (noaccess != MAP_FAILED) {
		expect_errno(fd, MMT_IOC_QUERY, noaccess, EFAULT,
			     "PROT_NONE argument -> EFAULT");
		munmap(noaccess, pagesz);
	}
	/* readable but not writable: the copy-out must fail cleanly */
	noaccess = mmap(NULL, pagesz, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (noaccess != MAP_FAILED) {
		((struct mmt_query *)noaccess)->size = MMT_QUERY_SIZE_VER0;
		mprotect(noaccess, pagesz, PROT_READ);
		expect_errno(fd, MMT_IOC_QUERY, noaccess, EFAULT,
			     "read-only argument -> EFAULT");
		munmap(noaccess, pagesz);
	}
	/* the struct straddles the end of the readable memory */
	noaccess = mmap(NULL, 2 * pagesz, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (noaccess != MAP_FAILED) {
		q = (struct mmt_query *)((char *)noaccess + pagesz - 16);
		memset(q, 0, 16);
		q->size = MMT_QUERY_SIZE_VER0;
		mprotect((char *)noaccess + pagesz, pagesz, PROT_NONE);
		expect_errno(fd, MMT_IOC_QUERY, q, EFAULT,
			     "struct crossing into PROT_NONE -> EFAULT");
		munmap(noaccess, 2 * pagesz);
		q = &u.q;
	}

	/* unknown commands -> ENOTTY */
	memset(&u, 0, sizeof(u));
	q->size = MMT_QUERY_SIZE_VER0;
	expect_errno(fd, _IOWR(MMT_IOC_MAGIC, 0x7f, struct mmt_query), q, ENOTTY,
		     "unknown nr -> ENOTTY");
	expect_errno(fd, _IOWR('x', 0x00, struct mmt_query), q, ENOTTY,
		     "foreign magic -> ENOTTY");
	expect_errno(fd, _IOR(MMT_IOC_MAGIC, 0x00, struct mmt_query), q, ENOTTY,
		     "QUERY nr with wrong direction -> ENOTTY");
	expect_errno(fd, _IOWR(MMT_IOC_MAGIC, 0x00, __u32), q, ENOTTY,
		     "QUERY nr with wrong size -> ENOTTY");

	close(fd);
	printf("mmt-query: %d failed\n", failures);
	return failures > 100 ? 100 : failures;
}
