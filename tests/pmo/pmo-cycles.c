// SPDX-License-Identifier: GPL-2.0
/*
 * pmo-cycles.c - N create/key/write/read/close cycles through libmmt, for
 * the guest's slab-growth check (tests/pmo/guest.sh measures the kmalloc
 * caches before and after, around a module unload)
 *
 * Each cycle: create a PMO (--levels, --closures), key it with a key of the
 * cycle, write the whole PMO with data of the cycle, read it back and
 * compare, check that every MMT is VALID.  Every 10th cycle also delegates
 * it (alternately copy and transfer) to a second PMO and reads that; every
 * 7th cycle invalidates and re-keys; every 13th passes the fd through a
 * unix socket first (the --every-* options change these periods, 0 turns
 * one off).  Every path that allocates in the module runs many times.
 *
 * Usage: pmo-cycles [--cycles N] [--levels L] [--closures C] [--seed S]
 *		     [--every-delegate N] [--every-fdpass N]
 *		     [--every-invalidate N]
 * Output: "ok"/"not ok" lines, then "pmo-cycles: N passed, N failed".
 * Exit status 0 if all passed, 1 otherwise, 2 on setup failure.
 */
#include <inttypes.h>
#include <sys/socket.h>

#include "pmo_test.h"

int main(int argc, char **argv)
{
	unsigned int cycles = 1000, levels = 1, closures = 2, i;
	unsigned int every_delegate = 10, every_fdpass = 13, every_inval = 7;
	uint64_t seed = 1, bytes;
	struct mmt_geometry g;
	struct pt_rng rng;
	uint8_t key[16], *w, *r;
	int dev, fd, rx, sv[2], j;
	double t0;
	const char *fail = NULL;
	char why[160] = "";

	for (j = 1; j < argc; j++) {
		if (!strcmp(argv[j], "--cycles") && j + 1 < argc)
			cycles = strtoul(argv[++j], NULL, 0);
		else if (!strcmp(argv[j], "--levels") && j + 1 < argc)
			levels = strtoul(argv[++j], NULL, 0);
		else if (!strcmp(argv[j], "--closures") && j + 1 < argc)
			closures = strtoul(argv[++j], NULL, 0);
		else if (!strcmp(argv[j], "--seed") && j + 1 < argc)
			seed = strtoull(argv[++j], NULL, 0);
		else if (!strcmp(argv[j], "--every-delegate") && j + 1 < argc)
			every_delegate = strtoul(argv[++j], NULL, 0);
		else if (!strcmp(argv[j], "--every-fdpass") && j + 1 < argc)
			every_fdpass = strtoul(argv[++j], NULL, 0);
		else if (!strcmp(argv[j], "--every-invalidate") && j + 1 < argc)
			every_inval = strtoul(argv[++j], NULL, 0);
		else {
			fprintf(stderr, "usage: %s [--cycles N] [--levels L] [--closures C] [--seed S] [--every-delegate N] [--every-fdpass N] [--every-invalidate N]\n",
				argv[0]);
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	memset(&g, 0, sizeof(g));
	g.levels = levels;
	bytes = mmtu_geometry_closure_bytes(&g) * closures;
	dev = mmtu_open();
	if (dev < 0 || !bytes ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		printf("not ok - pmo-cycles: setup (%s)\n", pt_errname(dev));
		return 2;
	}
	w = pt_malloc(bytes);
	r = pt_malloc(bytes);
	pt_rng_seed(&rng, seed);
	t0 = pt_now();
	for (i = 0; i < cycles && !fail; i++) {
		struct pt_snap s;
		int ret;

		pt_fill(&rng, key, sizeof(key));
		pt_fill(&rng, w, bytes);
		fd = mmtu_pmo_create(dev, bytes, &g, i & 1 ? MMT_PMO_CLOEXEC : 0,
				     NULL);
		if (fd < 0) {
			fail = "create";
			ret = fd;
			goto out;
		}
		if (every_fdpass && i % every_fdpass == every_fdpass / 2) {
			int fd2;

			ret = mmtu_send_fd(sv[0], fd);
			fd2 = ret ? ret : mmtu_recv_fd(sv[1]);
			close(fd);
			fd = fd2;
			if (fd < 0) {
				fail = "fd passing";
				ret = fd;
				goto out;
			}
		}
		ret = mmtu_pmo_set_key(fd, key, sizeof(key), 0);
		if (ret) {
			fail = "set key";
			goto out_close;
		}
		if (every_inval && i % every_inval == every_inval / 2) {
			ret = mmtu_pmo_invalidate(fd);
			if (!ret)
				ret = mmtu_pmo_set_key(fd, key, sizeof(key), 0);
			if (ret) {
				fail = "invalidate + key";
				goto out_close;
			}
		}
		ret = mmtu_pmo_write_all(fd, w, bytes, 0) == (ssize_t)bytes ? 0 :
			-errno;
		if (ret) {
			fail = "write";
			goto out_close;
		}
		memset(r, 0, bytes);
		if (mmtu_pmo_read_all(fd, r, bytes, 0) != (ssize_t)bytes ||
		    memcmp(r, w, bytes)) {
			fail = "read back";
			ret = -errno;
			goto out_close;
		}
		pt_snap(fd, &s);
		if (!pt_all_state(&s, MMT_STATE_VALID, 0)) {
			fail = "states";
			snprintf(why, sizeof(why), "%s", pt_states(&s));
			goto out_close;
		}
		if (every_delegate && i % every_delegate == every_delegate - 1) {
			bool copy = (i / every_delegate) % 2 == 0;

			rx = mmtu_pmo_create(dev, bytes, &g, 0, NULL);
			ret = rx < 0 ? rx :
			      mmtu_pmo_set_key(rx, key, sizeof(key),
					       MMT_KEY_RECEIVE);
			if (!ret)
				ret = mmtu_pmo_delegate_local(fd, rx,
					copy ? MMT_DELEGATE_COPY : 0, NULL);
			if (!ret &&
			    (mmtu_pmo_read_all(rx, r, bytes, 0) !=
			     (ssize_t)bytes || memcmp(r, w, bytes)))
				ret = -EIO;
			if (rx >= 0)
				close(rx);
			if (ret) {
				fail = copy ? "delegate copy" : "delegate transfer";
				goto out_close;
			}
		}
		close(fd);
		if (i && i % 100 == 0)
			printf("# %u cycles, %.1f s\n", i, pt_now() - t0);
		continue;
out_close:
		close(fd);
out:
		if (!why[0])
			snprintf(why, sizeof(why), "%s", pt_errname(ret));
	}
	printf("# %u cycles of %" PRIu64 " bytes (%u levels) in %.1f s (guest clock)\n",
	       i, bytes, levels, pt_now() - t0);
	pt_result(!fail && i == cycles, "cycles: create/key/write/read/close",
		  "cycle %u: %s: %s", i - 1, fail ? fail : "?", why);
	free(w);
	free(r);
	close(sv[0]);
	close(sv[1]);
	close(dev);
	pt_summary("pmo-cycles");
	return pt_fail ? 1 : 0;
}
