// SPDX-License-Identifier: GPL-2.0
/*
 * mmt-ckpt.c - guest test of MMT_IOC_PMO_CHECKPOINT and MMT_IOC_RESTORE
 * (docs/CRIU.md), without CRIU
 *
 * Built static by tests/guest/run.sh and run as root in the guest.
 * Checks: a checkpoint of a written PMO leaves it INVALID (pread and
 * pwrite EPERM) and its image holds no plaintext; a restore gives a VALID,
 * writable PMO with the same bytes; the same image restored again, a
 * bogus handle, and an older image after a newer checkpoint of the
 * restored PMO: ESTALE; one byte of a closure flipped (data, MAC, node,
 * sealed root): EBADMSG, no PMO made, and the intact image still restores;
 * bad arguments (EINVAL), a plain PMO (EPERM), an unprivileged caller
 * (EPERM, nothing changed); the size query changes nothing.  A record's
 * owner: a child of another euid with CAP_CHECKPOINT_RESTORE alone cannot
 * restore root's record (EPERM, the record kept for root), restores its
 * own, and root (CAP_SYS_ADMIN) restores the child's.
 *
 * Then the time of a checkpoint and a restore of an MIB MiB PMO (default
 * 8; 0: none), as a "# timing" line (in a TCG guest: for comparison
 * within one run only).
 *
 * Output: "ok - ckpt: ..." / "not ok - ckpt: ..." lines.  Exit status:
 * the number of failed checks.
 *
 * Usage: mmt-ckpt [DEVICE [MIB]]   (default /dev/mmt 8)
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mmt.h"
#include "mmt_stat.h"

static int failures;

static void check(int cond, const char *name)
{
	printf("%s - ckpt: %s\n", cond ? "ok" : "not ok", name);
	if (!cond)
		failures++;
}

/* ioctl, returning 0 or the errno */
static int xioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? errno : 0;
}

static int pmo_new(int dev, uint64_t bytes, int keyed)
{
	struct mmt_pmo_create c = { .size = sizeof(c), .bytes = bytes };
	struct mmt_pmo_key k = { .size = sizeof(k), .key_len = 16 };

	c.geometry.levels = 2;	/* 128 KiB closures */
	if (xioctl(dev, MMT_IOC_PMO_CREATE, &c))
		return -1;
	memset(k.key, 0x5a, 16);
	if (keyed && xioctl(c.fd, MMT_IOC_PMO_SET_KEY, &k)) {
		close(c.fd);
		return -1;
	}
	return c.fd;
}

/* checkpoint @fd into *@buf (allocated) with @flags; 0 or the errno */
static int ckpt_flags(int fd, uint64_t flags, uint8_t **buf, uint64_t *len,
		      uint8_t *handle)
{
	struct mmt_checkpoint a = { .size = sizeof(a) };
	int err;

	err = xioctl(fd, MMT_IOC_PMO_CHECKPOINT, &a);
	if (err)
		return err;
	*len = (uint64_t)a.closures * a.closure_len;
	*buf = malloc(*len);
	if (!*buf)
		return ENOMEM;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.buf = (uintptr_t)*buf;
	a.buf_len = *len;
	a.flags = flags;
	err = xioctl(fd, MMT_IOC_PMO_CHECKPOINT, &a);
	if (!err)
		memcpy(handle, a.handle, sizeof(a.handle));
	return err;
}

static int ckpt(int fd, uint8_t **buf, uint64_t *len, uint8_t *handle)
{
	return ckpt_flags(fd, 0, buf, len, handle);
}

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* MMT_PMO_INFO_MIG_UNKNOWN of @fd */
static int mig_unknown(int fd)
{
	struct mmt_pmo_info i = { .size = sizeof(i) };

	return !xioctl(fd, MMT_IOC_PMO_INFO, &i) &&
		(i.flags & MMT_PMO_INFO_MIG_UNKNOWN);
}

/* restore; returns the fd, or -errno */
static int restore(int dev, const uint8_t *handle, const uint8_t *buf,
		   uint64_t len)
{
	struct mmt_restore r = { .size = sizeof(r), .buf = (uintptr_t)buf,
				 .buf_len = len };
	int err;

	memcpy(r.handle, handle, sizeof(r.handle));
	err = xioctl(dev, MMT_IOC_RESTORE, &r);
	return err ? -err : r.fd;
}

/* every MMT of @fd in @state */
static int all_state(int fd, uint32_t state)
{
	struct mmt_mmt_info m[64];
	struct mmt_pmo_info i = { .size = sizeof(i), .mmt_count = 64,
				  .mmts = (uintptr_t)m };
	uint32_t k;

	if (xioctl(fd, MMT_IOC_PMO_INFO, &i) || !i.mmt_count)
		return 0;
	for (k = 0; k < i.mmt_count; k++)
		if (m[k].state != state)
			return 0;
	return 1;
}

static long pmos_alive(void)
{
	return mmtg_stat("pmos");
}

/* checkpoints waiting for their restore */
static long records(void)
{
	return mmtg_stat("ckpt_records");
}

/*
 * Become euid (and every uid, gid) @uid with CAP_CHECKPOINT_RESTORE as
 * the only capability (effective and permitted); 0 or -1
 */
static int become_ckpt_only(uid_t uid)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = { };
	const int cap = CAP_CHECKPOINT_RESTORE;

	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) || setgroups(0, NULL) ||
	    setresgid(uid, uid, uid) || setresuid(uid, uid, uid))
		return -1;
	d[cap / 32].effective = 1u << (cap % 32);
	d[cap / 32].permitted = 1u << (cap % 32);
	if (syscall(SYS_capset, &h, d))
		return -1;
	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &h, d) || d[0].effective ||
	    d[1].effective != 1u << (cap % 32))
		return -1;
	return geteuid() == uid ? 0 : -1;
}

/*
 * A record belongs to its maker (the euid and user namespace that
 * checkpointed).  A child as uid 1000 with CAP_CHECKPOINT_RESTORE alone:
 * root's record @h (image @img, @len) refused with EPERM and kept; its
 * own checkpoint of a PMO of @bytes (@data) restores; a second one it
 * leaves behind, which root (CAP_SYS_ADMIN) then restores.
 */
static void owner_checks(int dev, const uint8_t *h, const uint8_t *img,
			 uint64_t len, const uint8_t *data, uint64_t bytes)
{
	struct shared {
		uint8_t handle[MMT_CKPT_HANDLE_BYTES];
		uint64_t len;
		uint8_t img[];
	} *sh;
	uint8_t *back = malloc(bytes);
	long rec0 = records();
	int st, fd;
	pid_t pid;

	sh = mmap(NULL, sizeof(*sh) + len, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED || !back) {
		check(0, "owner: memory");
		return;
	}
	memset(sh, 0, sizeof(*sh));
	fflush(stdout);	/* the child prints its own lines */
	pid = fork();
	if (!pid) {
		uint8_t mine[MMT_CKPT_HANDLE_BYTES], *mimg;
		uint64_t mlen;
		int own, fd2;

		failures = 0;
		if (become_ckpt_only(1000)) {
			check(0, "owner: uid 1000 with CAP_CHECKPOINT_RESTORE only");
			fflush(stdout);
			_exit(1);
		}
		fd = restore(dev, h, img, len);
		check(fd == -EPERM,
		      "uid 1000 with CAP_CHECKPOINT_RESTORE only: restore of root's record EPERM");
		if (fd >= 0)
			printf("# it restored root's record (fd %d)\n", fd);
		own = pmo_new(dev, bytes, 1);
		check(own >= 0 && pwrite(own, data, bytes, 0) == (ssize_t)bytes &&
		      !ckpt(own, &mimg, &mlen, mine),
		      "uid 1000: a checkpoint of its own PMO");
		fd2 = own < 0 ? -1 : restore(dev, mine, mimg, mlen);
		check(fd2 >= 0 && pread(fd2, back, bytes, 0) == (ssize_t)bytes &&
		      !memcmp(back, data, bytes),
		      "uid 1000: its own record restores, byte-exact");
		/* a second one, left for root */
		check(fd2 >= 0 && mlen == len &&
		      !ckpt(fd2, &mimg, &mlen, sh->handle),
		      "uid 1000: a checkpoint left for root");
		if (mlen == len) {
			memcpy(sh->img, mimg, len);
			sh->len = len;
		}
		fflush(stdout);
		_exit(failures ? 1 : 0);
	}
	check(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	      WEXITSTATUS(st) == 0, "owner: the uid 1000 child's checks");
	check(records() == rec0 + 1,
	      "root's record kept, the child's one more");
	fd = sh->len ? restore(dev, sh->handle, sh->img, sh->len) : -EINVAL;
	check(fd >= 0 && pread(fd, back, bytes, 0) == (ssize_t)bytes &&
	      !memcmp(back, data, bytes),
	      "root (CAP_SYS_ADMIN) restores uid 1000's record, byte-exact");
	check(records() == rec0, "that consumed the child's record");
	if (fd >= 0)
		close(fd);
	munmap(sh, sizeof(*sh) + len);
	free(back);
}

/* time a checkpoint and a restore of @mib MiB, print them */
static void timing(int dev, uint64_t mib)
{
	uint64_t bytes = mib << 20, len, i;
	uint8_t h[MMT_CKPT_HANDLE_BYTES], *img = NULL, *buf;
	double t0, t1, t2, t3;
	int fd, fd2, err;

	buf = malloc(bytes);
	fd = buf ? pmo_new(dev, bytes, 1) : -1;
	if (fd < 0) {
		check(0, "timing: a PMO");
		return;
	}
	for (i = 0; i < bytes; i++)
		buf[i] = (uint8_t)(i * 13);
	err = pwrite(fd, buf, bytes, 0) != (ssize_t)bytes;
	t0 = now_ms();
	err = err ?: ckpt(fd, &img, &len, h);
	t1 = now_ms();
	t2 = now_ms();
	fd2 = err ? -1 : restore(dev, h, img, len);
	t3 = now_ms();
	check(fd2 >= 0 && pread(fd2, img, bytes, 0) == (ssize_t)bytes &&
	      !memcmp(img, buf, bytes), "timing: the restored PMO byte-exact");
	printf("# timing: %llu MiB: checkpoint %.1f ms (%.1f MiB/s; it also "
	       "pages in the buffer), restore %.1f ms (%.1f MiB/s), image "
	       "%.3f x the data\n", (unsigned long long)mib, t1 - t0,
	       mib / ((t1 - t0) / 1e3), t3 - t2, mib / ((t3 - t2) / 1e3),
	       (double)len / bytes);
	close(fd2);
	close(fd);
	free(img);
	free(buf);
}

int main(int argc, char **argv)
{
	const uint64_t bytes = 2 * 128 * 1024;
	uint8_t h1[MMT_CKPT_HANDLE_BYTES], h2[MMT_CKPT_HANDLE_BYTES];
	uint8_t bogus[MMT_CKPT_HANDLE_BYTES];
	uint8_t *data, *back, *img1, *img2, c;
	uint64_t len1, len2, off;
	struct mmt_checkpoint a;
	int dev, fd, fd2, fd3, plain, err, st;
	long alive, rec0;
	size_t i;
	pid_t pid;

	dev = open(argc > 1 ? argv[1] : "/dev/mmt", O_RDWR);
	if (dev < 0) {
		perror("open /dev/mmt");
		return 2;
	}
	data = malloc(bytes);
	back = malloc(bytes);
	for (i = 0; i < bytes; i++)
		data[i] = (uint8_t)(i * 7 + (i >> 9));
	fd = pmo_new(dev, bytes, 1);
	check(fd >= 0, "a keyed PMO of two 128 KiB closures");
	check(pwrite(fd, data, bytes, 0) == (ssize_t)bytes, "written");

	/* the size query, and bad arguments: nothing changes */
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	err = xioctl(fd, MMT_IOC_PMO_CHECKPOINT, &a);
	check(!err && a.closures == 2 && a.closure_len > 2 * 65536,
	      "size query: 2 closures and their length");
	a.buf = (uintptr_t)back;
	a.buf_len = 4096;
	a.closures = 0;
	a.closure_len = 0;
	check(xioctl(fd, MMT_IOC_PMO_CHECKPOINT, &a) == EINVAL,
	      "buf_len not closures x closure length: EINVAL");
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = MMT_CKPT_PENDING << 1;
	check(xioctl(fd, MMT_IOC_PMO_CHECKPOINT, &a) == EINVAL,
	      "unknown flag: EINVAL");
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.reserved[1] = 1;
	check(xioctl(fd, MMT_IOC_PMO_CHECKPOINT, &a) == EINVAL,
	      "reserved field: EINVAL");
	check(all_state(fd, MMT_STATE_VALID), "still VALID after the refusals");

	/* an unprivileged caller: EPERM, the PMO unchanged */
	pid = fork();
	if (!pid) {
		uint8_t *b;
		uint64_t l;

		if (setgid(65534) || setuid(65534))
			_exit(3);
		_exit(ckpt(fd, &b, &l, h1) == EPERM &&
		      restore(dev, h1, data, bytes) == -EPERM ? 0 : 1);
	}
	check(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	      WEXITSTATUS(st) == 0,
	      "without CAP_CHECKPOINT_RESTORE / CAP_SYS_ADMIN: EPERM");
	check(all_state(fd, MMT_STATE_VALID) &&
	      pread(fd, back, bytes, 0) == (ssize_t)bytes &&
	      !memcmp(back, data, bytes), "unchanged, readable");

	/* a plain PMO: EPERM */
	plain = pmo_new(dev, 128 * 1024, 0);
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.buf = (uintptr_t)back;
	a.buf_len = 0;
	{
		uint8_t *b;
		uint64_t l;

		check(plain >= 0 && ckpt(plain, &b, &l, h1) == EPERM,
		      "a plain PMO: EPERM");
	}

	/* a buffer the kernel cannot write: EFAULT, nothing changed */
	rec0 = records();
	{
		struct mmt_checkpoint q = { .size = sizeof(q) };
		void *ro;

		err = xioctl(fd, MMT_IOC_PMO_CHECKPOINT, &q);
		ro = err ? MAP_FAILED : mmap(NULL, q.closures * q.closure_len,
					     PROT_READ, MAP_PRIVATE |
					     MAP_ANONYMOUS, -1, 0);
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.buf = (uintptr_t)ro;
		a.buf_len = q.closures * q.closure_len;
		check(ro != MAP_FAILED &&
		      xioctl(fd, MMT_IOC_PMO_CHECKPOINT, &a) == EFAULT,
		      "a read-only buffer: EFAULT");
		check(rec0 >= 0 && records() == rec0 &&
		      all_state(fd, MMT_STATE_VALID) && !mig_unknown(fd) &&
		      pread(fd, back, bytes, 0) == (ssize_t)bytes &&
		      !memcmp(back, data, bytes) &&
		      pwrite(fd, data, 64, 0) == 64,
		      "after it: no record, the PMO VALID, writable, byte-exact");
	}

	/* the checkpoint: the PMO handed over, no plaintext in the image */
	err = ckpt(fd, &img1, &len1, h1);
	check(!err, "checkpoint");
	check(records() == rec0 + 1, "one record more");
	if (err) {
		printf("# checkpoint: %s\n", strerror(err));
		return failures;
	}
	check(all_state(fd, MMT_STATE_INVALID), "source INVALID after it");
	check(pread(fd, back, 64, 0) < 0 && errno == EPERM,
	      "source pread: EPERM");
	check(pwrite(fd, data, 64, 0) < 0 && errno == EPERM,
	      "source pwrite: EPERM");
	check(!memmem(img1, len1, data + 1000, 32) &&
	      !memmem(img1, len1, data + 200000, 32),
	      "no plaintext in the image");
	check(ckpt(fd, &img2, &len2, h2) == EPERM,
	      "a second checkpoint of the handed-over PMO: EPERM");

	/* refusals that leave the record: a bogus handle, tampering */
	alive = pmos_alive();
	memcpy(bogus, h1, sizeof(bogus));
	bogus[0] ^= 1;
	check(restore(dev, bogus, img1, len1) == -ESTALE,
	      "restore of an unknown handle: ESTALE");
	check(restore(dev, h1, img1, len1 - 1) == -EINVAL,
	      "restore with a short buffer: EINVAL");
	/* one byte of each section of closure 1: header+root, nodes, ..., data */
	off = len1 / 2;	/* closure 1 starts here */
	{
		static const uint64_t at[] = { 100, 96 + 128 + 10, 40000,
					       100000 };
		char name[96];

		for (i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
			c = img1[off + at[i]];
			img1[off + at[i]] ^= 0x01;
			err = restore(dev, h1, img1, len1);
			img1[off + at[i]] = c;
			snprintf(name, sizeof(name),
				 "byte %llu of closure 1 flipped: EBADMSG",
				 (unsigned long long)at[i]);
			check(err == -EBADMSG, name);
			if (err != -EBADMSG)
				printf("# got %d\n", err);
		}
	}
	check(alive >= 0 && pmos_alive() == alive,
	      "no PMO left behind by the refused restores");
	check(records() == rec0 + 1, "the record kept by the refused restores");
	owner_checks(dev, h1, img1, len1, data, bytes);

	/* the restore: VALID, writable, byte-exact; consumed */
	fd2 = restore(dev, h1, img1, len1);
	check(fd2 >= 0, "restore of the intact image (by its owner)");
	if (fd2 < 0) {
		printf("# restore: %s\n", strerror(-fd2));
		return failures;
	}
	check(all_state(fd2, MMT_STATE_VALID), "restored PMO VALID");
	memset(back, 0, bytes);
	check(pread(fd2, back, bytes, 0) == (ssize_t)bytes &&
	      !memcmp(back, data, bytes), "restored PMO byte-exact");
	data[5] ^= 0xff;
	check(pwrite(fd2, data, bytes, 0) == (ssize_t)bytes,
	      "restored PMO writable");
	check(records() == rec0, "the restore consumed the record");
	check(restore(dev, h1, img1, len1) == -ESTALE,
	      "the same image restored again: ESTALE");

	/* a newer checkpoint of the restored PMO; the older image refused */
	err = ckpt(fd2, &img2, &len2, h2);
	check(!err && memcmp(h1, h2, sizeof(h1)), "checkpoint again (new handle)");
	check(restore(dev, h1, img1, len1) == -ESTALE,
	      "the older image after the newer checkpoint: ESTALE");
	fd3 = restore(dev, h2, img2, len2);
	check(fd3 >= 0 && pread(fd3, back, bytes, 0) == (ssize_t)bytes &&
	      !memcmp(back, data, bytes), "the newer image restores, byte-exact");
	check(restore(dev, h1, img2, len2) == -ESTALE &&
	      restore(dev, h2, img2, len2) == -ESTALE,
	      "then neither handle restores");

	/*
	 * MMT_CKPT_PENDING: read-only until resolved (the record dropped
	 * first) or restored (then the resolve is refused)
	 */
	{
		uint8_t h3[MMT_CKPT_HANDLE_BYTES], h4[MMT_CKPT_HANDLE_BYTES];
		uint8_t *img3, *img4;
		uint64_t len3, len4;
		int fd4;

		err = ckpt_flags(fd3, MMT_CKPT_PENDING, &img3, &len3, h3);
		check(!err, "a pending checkpoint");
		check(all_state(fd3, MMT_STATE_VALID) && mig_unknown(fd3) &&
		      pread(fd3, back, bytes, 0) == (ssize_t)bytes &&
		      !memcmp(back, data, bytes),
		      "pending: the source VALID, readable, MIG_UNKNOWN");
		check(pwrite(fd3, data, 64, 0) < 0 && errno == EUCLEAN,
		      "pending: the source's pwrite EUCLEAN");
		check(!ioctl(fd3, MMT_IOC_PMO_MIG_RESOLVE, 0) &&
		      !mig_unknown(fd3), "pending: resolved");
		check(restore(dev, h3, img3, len3) == -ESTALE,
		      "the image of a resolved pending checkpoint: ESTALE");
		data[7] ^= 0x55;
		check(pwrite(fd3, data, bytes, 0) == (ssize_t)bytes &&
		      pread(fd3, back, bytes, 0) == (ssize_t)bytes &&
		      !memcmp(back, data, bytes),
		      "resolved: writable again, byte-exact");
		err = ckpt_flags(fd3, MMT_CKPT_PENDING, &img4, &len4, h4);
		fd4 = err ? -1 : restore(dev, h4, img4, len4);
		check(fd4 >= 0 && pread(fd4, back, bytes, 0) == (ssize_t)bytes &&
		      !memcmp(back, data, bytes),
		      "a pending checkpoint restores, byte-exact");
		check(ioctl(fd3, MMT_IOC_PMO_MIG_RESOLVE, 0) < 0 &&
		      errno == ESTALE,
		      "its source's resolve after the restore: ESTALE");
		check(pwrite(fd3, data, 64, 0) < 0 && errno == EUCLEAN,
		      "the source stays read-only after its image was restored");
		check(!ioctl(fd3, MMT_IOC_PMO_INVALIDATE, 0),
		      "and can be invalidated");
	}
	printf("# image of %llu bytes for %llu data bytes\n",
	       (unsigned long long)len1, (unsigned long long)bytes);
	if (argc < 3 || strtoull(argv[2], NULL, 0))
		timing(dev, argc > 2 ? strtoull(argv[2], NULL, 0) : 8);
	return failures;
}
