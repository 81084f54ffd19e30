// SPDX-License-Identifier: GPL-2.0
/*
 * mmt-nonces - guest program of the `reload` run:
 * make a burst of MMTs under a fixed user key and print, for each, what
 * determines its nonces: the keying salt (which with the key gives the
 * subkeys), the GUA and the root counter.  The data pads' nonces are
 * (GUA, counter, offset) and the sealing nonce is (GUA, root counter),
 * each under the subkeys of the keying (docs/ENGINE.md "Keying salt"), so
 * two equal lines would mean repeated (key, nonce) pairs.
 *
 * Usage: mmt-nonces [-n MMTS] [-i NODE_ID]
 *   -n MMTS     MMTs of 128 bytes (1 level, 2 blocks of 64 bytes) in one
 *               PMO, keyed at once: a burst of MMTS GUAs (default 5000)
 *   -i NODE_ID  set this node's id first (MMT_IOC_SET_NODE_ID)
 * Every MMT is then written once (its root counter rises), and one line
 * per MMT is printed: "<keying salt hex> <GUA hex> <root counter>".
 * Exit status 0, or 1 with a message on stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "mmt.h"

static int die(const char *what)
{
	fprintf(stderr, "mmt-nonces: %s: %s\n", what, strerror(errno));
	exit(1);
}

int main(int argc, char **argv)
{
	struct mmt_pmo_create c = { .size = sizeof(c) };
	struct mmt_pmo_key k = { .size = sizeof(k), .key_len = 16 };
	struct mmt_pmo_info q = { .size = sizeof(q) };
	struct mmt_mmt_info *mi;
	unsigned long n = 5000, node = 0;
	size_t bytes;
	char salt[33];
	uint8_t *buf;
	int dev, opt, i;

	while ((opt = getopt(argc, argv, "n:i:")) != -1) {
		if (opt == 'n')
			n = strtoul(optarg, NULL, 0);
		else if (opt == 'i')
			node = strtoul(optarg, NULL, 0);
		else
			return 1;
	}
	if (!n || n > 100000)
		return 1;
	dev = open("/dev/mmt", O_RDWR | O_CLOEXEC);
	if (dev < 0)
		die("/dev/mmt");
	if (node) {
		struct mmt_node_id id = { .size = sizeof(id),
					  .node_id = node };

		if (ioctl(dev, MMT_IOC_SET_NODE_ID, &id))
			die("MMT_IOC_SET_NODE_ID");
	}
	bytes = n * 128;
	c.bytes = bytes;
	c.geometry.levels = 1;
	c.geometry.log_block_size = 6;
	c.geometry.log_arity[0] = 1;
	if (ioctl(dev, MMT_IOC_PMO_CREATE, &c))
		die("MMT_IOC_PMO_CREATE");
	for (i = 0; i < 16; i++)
		k.key[i] = (uint8_t)(0x40 + i);		/* one fixed user key */
	if (ioctl(c.fd, MMT_IOC_PMO_SET_KEY, &k))
		die("MMT_IOC_PMO_SET_KEY");
	buf = malloc(bytes);
	mi = calloc(n, sizeof(*mi));
	if (!buf || !mi)
		die("malloc");
	memset(buf, 0x5a, bytes);
	if (pwrite(c.fd, buf, bytes, 0) != (ssize_t)bytes)
		die("pwrite");
	q.mmt_count = n;
	q.mmts = (uintptr_t)mi;
	if (ioctl(c.fd, MMT_IOC_PMO_INFO, &q) || q.mmt_count != n)
		die("MMT_IOC_PMO_INFO");
	for (i = 0; i < 16; i++)
		sprintf(salt + 2 * i, "%02x", q.ksalt[i]);
	for (i = 0; i < (int)n; i++) {
		if (mi[i].state != MMT_STATE_VALID) {
			errno = EINVAL;
			die("an MMT is not VALID");
		}
		printf("%s %llx %llu\n", salt, (unsigned long long)mi[i].gua,
		       (unsigned long long)mi[i].root_counter);
	}
	return 0;
}
