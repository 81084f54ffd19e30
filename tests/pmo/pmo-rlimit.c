// SPDX-License-Identifier: GPL-2.0
/*
 * pmo-rlimit.c - guest test of PMO memory accounting: with CAP_IPC_LOCK
 * dropped and a small RLIMIT_MEMLOCK, MMT_IOC_PMO_CREATE fails with ENOMEM
 * (EAGAIN also accepted, and noted) once the limit is reached, makes no fd
 * and changes nothing; closing PMOs returns their charge (the same number
 * fits again); a dup()ed fd keeps its PMO (and charge) alive; RLIMIT_NOFILE
 * exhaustion gives EMFILE, and a reply that cannot be copied out EFAULT,
 * and neither leaks a charge.
 *
 * Usage: pmo-rlimit [--limit-mib N]   (default 16)
 * Output: "ok"/"not ok" lines, then "pmo-rlimit: N passed, N failed".
 * Exit status 0 if all passed, 1 otherwise, 2 on setup failure.
 */
#include <inttypes.h>
#include <sys/ioctl.h>
#include <sys/resource.h>

#include "pmo_test.h"

#define MAXP	256

static int dev;

/* create default-geometry 2 MiB PMOs into @fds until one fails */
static int fill(int *fds, int *n, int *err)
{
	*n = 0;
	for (;;) {
		int fd;

		if (*n == MAXP) {
			*err = 0;
			return -1;
		}
		fd = mmtu_pmo_create(dev, 2 << 20, NULL, 0, NULL);
		if (fd < 0) {
			*err = fd;
			return 0;
		}
		fds[(*n)++] = fd;
	}
}

static void close_all(int *fds, int n)
{
	while (n--)
		close(fds[n]);
}

static bool limit_errno(int err)
{
	if (err == -EAGAIN)
		printf("# create over RLIMIT_MEMLOCK gave EAGAIN; uapi/mmt.h documents ENOMEM\n");
	return err == -ENOMEM || err == -EAGAIN;
}

int main(int argc, char **argv)
{
	uint64_t limit_mib = 16;
	struct mmt_pmo_create c;
	int fds[MAXP], n, n2, err, ret, nfds, fd, dupfd;
	struct rlimit rl, nofile;
	struct mmt_geometry g1 = { .levels = 1 };
	uint64_t per;

	if (argc == 3 && !strcmp(argv[1], "--limit-mib"))
		limit_mib = strtoull(argv[2], NULL, 0);
	else if (argc != 1) {
		fprintf(stderr, "usage: %s [--limit-mib N]\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	dev = mmtu_open();
	if (dev < 0) {
		printf("not ok - pmo-rlimit: open /dev/mmt (%s)\n",
		       pt_errname(dev));
		return 2;
	}
	ret = pt_drop_cap(CAP_IPC_LOCK);
	pt_result(!ret, "rlimit: drop CAP_IPC_LOCK", "%s", pt_errname(ret));
	if (ret)
		return 2;

	/* the metadata size, for the expected count */
	fd = mmtu_pmo_create(dev, 2 << 20, NULL, 0, &c);
	if (fd < 0) {
		printf("not ok - rlimit: create without a limit (%s)\n",
		       pt_errname(fd));
		return 2;
	}
	close(fd);
	per = c.closure_bytes + c.meta_bytes;

	rl.rlim_cur = rl.rlim_max = limit_mib << 20;
	ret = setrlimit(RLIMIT_MEMLOCK, &rl);
	pt_result(!ret, "rlimit: RLIMIT_MEMLOCK set", "%s",
		  pt_errname(-errno));

	nfds = pt_count_fds();
	if (fill(fds, &n, &err)) {
		pt_result(false, "rlimit: creation stops at the limit",
			  "%d PMOs of 2 MiB made under a %" PRIu64 " MiB limit",
			  n, limit_mib);
		close_all(fds, n);
		return 1;
	}
	pt_result(limit_errno(err), "rlimit: create over the limit -> ENOMEM",
		  "got %s after %d PMOs", pt_errname(err), n);
	pt_result(n >= (int)((limit_mib << 20) / (per + 8192)) &&
		  n <= (int)((limit_mib << 20) / c.closure_bytes) && n > 0,
		  "rlimit: the count fits the limit and the PMO size",
		  "%d PMOs of %" PRIu64 " + %" PRIu64 " bytes under %" PRIu64 " MiB",
		  n, (uint64_t)c.closure_bytes, (uint64_t)c.meta_bytes,
		  limit_mib);
	printf("# %d PMOs of 2 MiB (+%" PRIu64 " metadata) fit in %" PRIu64 " MiB\n",
	       n, (uint64_t)c.meta_bytes, limit_mib);
	pt_result(pt_count_fds() == nfds + n, "rlimit: the failed create made no fd",
		  "%d fds, expected %d", pt_count_fds(), nfds + n);
	{
		struct pt_snap s;

		ret = pt_snap(fds[0], &s);
		pt_result(!ret && pt_all_state(&s, MMT_STATE_INVALID, 0),
			  "rlimit: existing PMOs unaffected", "%s",
			  pt_states(&s));
		ret = mmtu_pmo_set_key(fds[0], "0123456789abcdef", 16, 0);
		pt_result(!ret, "rlimit: keying an existing PMO still works",
			  "%s", pt_errname(ret));
	}
	ret = mmtu_pmo_create(dev, 32 << 20, NULL, 0, NULL);
	pt_result(limit_errno(ret), "rlimit: a PMO larger than the free part -> ENOMEM",
		  "got %s", pt_errname(ret));
	if (ret >= 0)
		close(ret);

	/* closing returns the charge; a dup keeps its PMO charged */
	dupfd = dup(fds[0]);
	close_all(fds, n);
	if (fill(fds, &n2, &err))
		n2 = -1;
	pt_result(n2 == n - 1 && limit_errno(err),
		  "rlimit: a dup()ed PMO stays charged after its fd is closed",
		  "%d PMOs fit, expected %d", n2, n - 1);
	close_all(fds, n2 > 0 ? n2 : 0);
	close(dupfd);
	if (fill(fds, &n2, &err))
		n2 = -1;
	pt_result(n2 == n && limit_errno(err),
		  "rlimit: after closing everything the same number fits",
		  "%d PMOs fit, expected %d", n2, n);
	close_all(fds, n2 > 0 ? n2 : 0);

	/* RLIMIT_NOFILE: EMFILE, and no charge leaked by the failure */
	getrlimit(RLIMIT_NOFILE, &nofile);
	rl = nofile;
	rl.rlim_cur = 32;
	ret = setrlimit(RLIMIT_NOFILE, &rl);
	n2 = 0;
	err = 0;
	while (!ret && n2 < MAXP) {
		fd = mmtu_pmo_create(dev, 4096, &g1, 0, NULL);
		if (fd < 0) {
			err = fd;
			break;
		}
		fds[n2++] = fd;
	}
	pt_result(err == -EMFILE, "rlimit: RLIMIT_NOFILE exhausted -> EMFILE",
		  "got %s after %d PMOs", pt_errname(err), n2);
	for (fd = 0; fd < 5; fd++) {
		ret = mmtu_pmo_create(dev, 2 << 20, NULL, 0, NULL);
		if (ret != -EMFILE)
			break;
	}
	pt_result(ret == -EMFILE, "rlimit: EMFILE repeatedly (2 MiB PMOs)",
		  "got %s", pt_errname(ret));
	close_all(fds, n2);
	setrlimit(RLIMIT_NOFILE, &nofile);
	if (fill(fds, &n2, &err))
		n2 = -1;
	pt_result(n2 == n && limit_errno(err),
		  "rlimit: EMFILE failures leaked no RLIMIT_MEMLOCK charge",
		  "%d PMOs fit, expected %d", n2, n);
	close_all(fds, n2 > 0 ? n2 : 0);

	/* EFAULT on the copy-out (read-only argument): no fd, no charge */
	{
		struct mmt_pmo_create *ro = mmap(NULL, 4096,
						 PROT_READ | PROT_WRITE,
						 MAP_PRIVATE | MAP_ANONYMOUS,
						 -1, 0);

		if (ro != MAP_FAILED) {
			memset(ro, 0, sizeof(*ro));
			ro->size = sizeof(*ro);
			ro->bytes = 2 << 20;
			mprotect(ro, 4096, PROT_READ);
			for (fd = 0; fd < 20; fd++)
				ret = ioctl(dev, MMT_IOC_PMO_CREATE, ro) ?
					-errno : 0;
			pt_result(ret == -EFAULT,
				  "rlimit: create with a read-only argument -> EFAULT",
				  "got %s", pt_errname(ret));
			munmap(ro, 4096);
		}
		if (fill(fds, &n2, &err))
			n2 = -1;
		pt_result(n2 == n && limit_errno(err),
			  "rlimit: 20 EFAULT failures leaked no charge",
			  "%d PMOs fit, expected %d", n2, n);
		close_all(fds, n2 > 0 ? n2 : 0);
	}

	rl.rlim_cur = rl.rlim_max = 0;
	setrlimit(RLIMIT_MEMLOCK, &rl);
	ret = mmtu_pmo_create(dev, 4096, &g1, 0, NULL);
	pt_result(limit_errno(ret), "rlimit: RLIMIT_MEMLOCK 0 -> ENOMEM",
		  "got %s", pt_errname(ret));
	if (ret >= 0)
		close(ret);
	close(dev);
	pt_summary("pmo-rlimit");
	return pt_fail ? 1 : 0;
}
