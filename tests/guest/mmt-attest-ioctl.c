// SPDX-License-Identifier: GPL-2.0
/*
 * mmt-attest-ioctl.c - guest test of the attested mode's ioctls
 * (MMT_IOC_ATTEST_*, docs/ATTESTATION.md) on a freshly loaded module
 *
 * Built static by tests/guest/run.sh and run inside the guest as root.
 * Checks, with the KUnit suite's vectors (tests/kunit/mmt_attest_vectors.h,
 * signed with the openssl command): before attested mode SET_NODE_ID
 * works and ATTEST_INFO says OFF with the node key drawn at load (not
 * zero); a certificate that does not parse is
 * EBADMSG and changes nothing; authority A enters attested mode (WAITING,
 * the same node key), a second authority is EBUSY; SET_NODE_ID is then
 * EBUSY and the node id stays, and keying a PMO is ENOKEY (no GUA before
 * the first credential); a credential signed by A but for another
 * node key (the vectors' key, not this load's) is EKEYREJECTED, one
 * signed by B too, a truncated one EKEYREJECTED, bad flags, length 0 and
 * length above MMT_ATTEST_BLOB_MAX EINVAL; none changes the node id or
 * the state.  The happy path needs a credential for this load's random
 * key: the KUnit suite covers it, and the guest run `attest`, where
 * mmt-authority issues one after the node's TPM quote
 * (g-attest-node.sh).
 *
 * Output: "ok - attest-ioctl: ..." / "not ok - ..." lines; exit status
 * the number of failed checks, 2 if /dev/mmt cannot be opened.
 *
 * Usage: mmt-attest-ioctl [DEVICE]   (default /dev/mmt)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "mmt.h"

typedef uint8_t u8;
#include "../kunit/mmt_attest_vectors.h"

static int failures;

static void check(int cond, const char *name)
{
	printf("%s - attest-ioctl: %s\n", cond ? "ok" : "not ok", name);
	if (!cond) {
		failures++;
		printf("#   errno %d (%s)\n", errno, strerror(errno));
	}
}

/* blob() - issue @cmd with @len bytes of @data; the ioctl's result */
static int blob(int fd, unsigned long cmd, const void *data, size_t len,
		unsigned int flags)
{
	struct mmt_attest_blob b = {
		.size = sizeof(b),
		.flags = flags,
		.data = (uintptr_t)data,
		.len = (uint32_t)len,
	};

	errno = 0;
	return ioctl(fd, cmd, &b);
}

static int set_node_id(int fd, unsigned int id)
{
	struct mmt_node_id n = { .size = sizeof(n), .node_id = id };

	errno = 0;
	return ioctl(fd, MMT_IOC_SET_NODE_ID, &n);
}

static void info(int fd, struct mmt_attest_info *i)
{
	memset(i, 0xff, sizeof(*i));
	i->size = sizeof(*i);
	i->flags = 0;
	if (ioctl(fd, MMT_IOC_ATTEST_INFO, i))
		memset(i, 0xff, sizeof(*i));
}

/*
 * key_pmo() - create a small PMO and key it; the SET_KEY result (errno
 * set), or -2 if the PMO cannot be created
 */
static int key_pmo(int fd)
{
	struct mmt_pmo_create c = { .size = sizeof(c), .bytes = 4096 };
	struct mmt_pmo_key k = { .size = sizeof(k), .key_len = 16 };
	int ret, e;

	c.geometry.levels = 1;
	c.geometry.log_block_size = 6;
	c.geometry.log_arity[0] = 1;
	if (ioctl(fd, MMT_IOC_PMO_CREATE, &c))
		return -2;
	errno = 0;
	ret = ioctl(c.fd, MMT_IOC_PMO_SET_KEY, &k);
	e = errno;
	close(c.fd);
	errno = e;
	return ret;
}

/* unchanged() - still WAITING, node id 5, no credential */
static int unchanged(int fd)
{
	struct mmt_attest_info i;

	info(fd, &i);
	return i.state == MMT_ATTEST_WAITING && i.node_id == 5 &&
	       i.serial == 0;
}

int main(int argc, char **argv)
{
	static u8 big[MMT_ATTEST_BLOB_MAX + 1];
	struct mmt_query q = { .size = sizeof(q) };
	struct mmt_attest_info i;
	static const u8 zero[32];
	u8 load_key[32];
	int fd = open(argc > 1 ? argv[1] : "/dev/mmt", O_RDWR);

	if (fd < 0) {
		perror("open");
		return 2;
	}
	if (ioctl(fd, MMT_IOC_QUERY, &q)) {
		check(0, "MMT_IOC_QUERY");
		return failures;
	}
	if (!(q.features & MMT_FEAT_ATTEST)) {
		/* a kernel without PKCS#7 verification or X25519 (the debug
		 * guest kernel): the ioctls are documented as EOPNOTSUPP
		 */
		i.size = sizeof(i);
		i.flags = 0;
		errno = 0;
		check(ioctl(fd, MMT_IOC_ATTEST_INFO, &i) == -1 &&
		      errno == EOPNOTSUPP &&
		      blob(fd, MMT_IOC_ATTEST_SET_AUTHORITY,
			   mmt_attest_vec_authority_A,
			   sizeof(mmt_attest_vec_authority_A), 0) == -1 &&
		      errno == EOPNOTSUPP && !set_node_id(fd, 5),
		      "no MMT_FEAT_ATTEST: the ioctls are EOPNOTSUPP, SET_NODE_ID works");
		close(fd);
		return failures;
	}
	check(1, "MMT_FEAT_ATTEST reported");
	info(fd, &i);
	check(i.state == MMT_ATTEST_OFF && memcmp(i.node_key, zero, 32),
	      "ATTEST_INFO: OFF, and the node key drawn at load");
	memcpy(load_key, i.node_key, 32);
	check(!set_node_id(fd, 5), "SET_NODE_ID 5 before attested mode");
	check(!key_pmo(fd), "a PMO is keyed before attested mode");

	check(blob(fd, MMT_IOC_ATTEST_SET_AUTHORITY, mmt_attest_vec_good, 64,
		   0) == -1 && errno == EBADMSG,
	      "SET_AUTHORITY with bytes that are no certificate: EBADMSG");
	info(fd, &i);
	check(i.state == MMT_ATTEST_OFF, "... and still OFF");
	check(blob(fd, MMT_IOC_ATTEST_SET_AUTHORITY,
		   mmt_attest_vec_authority_A,
		   sizeof(mmt_attest_vec_authority_A), 1) == -1 &&
	      errno == EINVAL, "SET_AUTHORITY with flags 1: EINVAL");
	check(!blob(fd, MMT_IOC_ATTEST_SET_AUTHORITY,
		    mmt_attest_vec_authority_A,
		    sizeof(mmt_attest_vec_authority_A), 0),
	      "SET_AUTHORITY with authority A");
	info(fd, &i);
	check(i.state == MMT_ATTEST_WAITING &&
	      !memcmp(i.node_key, load_key, 32) && i.node_id == 5 &&
	      i.serial == 0,
	      "ATTEST_INFO: WAITING, the node key of the load, node id 5 kept");
	check(blob(fd, MMT_IOC_ATTEST_SET_AUTHORITY,
		   mmt_attest_vec_authority_B,
		   sizeof(mmt_attest_vec_authority_B), 0) == -1 &&
	      errno == EBUSY, "a second SET_AUTHORITY: EBUSY");
	check(set_node_id(fd, 9) == -1 && errno == EBUSY,
	      "SET_NODE_ID in attested mode: EBUSY");
	check(unchanged(fd), "... node id still 5");
	check(key_pmo(fd) == -1 && errno == ENOKEY,
	      "keying a PMO before the first credential: ENOKEY");

	check(blob(fd, MMT_IOC_ATTEST_SET_CRED, mmt_attest_vec_good,
		   sizeof(mmt_attest_vec_good), 0) == -1 &&
	      errno == EKEYREJECTED,
	      "SET_CRED for another node key: EKEYREJECTED");
	check(blob(fd, MMT_IOC_ATTEST_SET_CRED, mmt_attest_vec_other,
		   sizeof(mmt_attest_vec_other), 0) == -1 &&
	      errno == EKEYREJECTED,
	      "SET_CRED signed by another authority: EKEYREJECTED");
	check(blob(fd, MMT_IOC_ATTEST_SET_CRED, mmt_attest_vec_good,
		   sizeof(mmt_attest_vec_good) - 1, 0) == -1 &&
	      errno == EKEYREJECTED,
	      "SET_CRED with a truncated signature: EKEYREJECTED");
	check(blob(fd, MMT_IOC_ATTEST_SET_CRED, mmt_attest_vec_good, 0, 0) ==
	      -1 && errno == EINVAL, "SET_CRED with length 0: EINVAL");
	check(blob(fd, MMT_IOC_ATTEST_SET_CRED, big, sizeof(big), 0) == -1 &&
	      errno == EINVAL, "SET_CRED above MMT_ATTEST_BLOB_MAX: EINVAL");
	check(blob(fd, MMT_IOC_ATTEST_SET_CRED, NULL, 200, 0) == -1 &&
	      errno == EFAULT, "SET_CRED with a bad pointer: EFAULT");
	check(unchanged(fd), "none of them changed the node id or the state");
	close(fd);
	return failures;
}
