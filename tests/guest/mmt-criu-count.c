// SPDX-License-Identifier: GPL-2.0
/*
 * mmt-criu-count.c - a program that keeps counting into its PMO, for the
 * CRIU guest run (tests/guest/g-criu.sh, docs/CRIU.md)
 *
 * Built static by tests/guest/run.sh.  It holds /dev/mmt, a keyed PMO of
 * MIB MiB (128 KiB closures) and a plain PMO of one closure, and, every
 * millisecond, writes the next value of its counter (8 bytes) at the next
 * slot of both, keeping a copy of what it wrote in its own memory.  Every
 * 256 steps it reads both PMOs back in full and compares them with that
 * copy, and checks that every MMT of the keyed PMO is VALID; then it
 * rewrites STATUS with "count=<n> checks=<k>" (the copy lives in its
 * memory, which CRIU restores, so a check after a restore compares the
 * restored PMO byte for byte with what the program wrote before the
 * dump and after it).  On a
 * mismatch or an error it writes "FAIL <why>" to STATUS and exits 1.
 * With -n it counts in its own memory only (no mmt fd); with -l PORT it
 * also holds an mmt listener on PORT (needs an RDMA device), which CRIU
 * must refuse to dump.
 *
 * With -B (big: the cross-node run, g-criu-migrate-{a,b}.sh) it keeps no
 * copy (CRIU would dump it: the image would hold the data): the keyed PMO
 * starts filled with a pattern (word i = mix(i)) and the counter's writes
 * are logged as (slot, value) pairs, so the whole PMO's expected content
 * is known from the log.  Every 256 steps it reads back the last 256
 * slots written; SIGUSR1 makes it check the whole PMO byte for byte
 * against the pattern and the log, write "... sum=<FNV-1a 64 of the
 * PMO> paused" and stop counting; SIGUSR2 makes it check the whole PMO
 * again, write "... sum=<...> resumed" (also to STATUS.resumed, which
 * keeps it) and count on.
 *
 * With -R HANDLE (32 hex digits) [buf] it only calls MMT_IOC_RESTORE of
 * a parked PMO (no buffer; "buf": a 4 KiB one) and prints
 * "restore: ok" or "restore: <errno name>" (exit 0 or 1).
 *
 * Usage: mmt-criu-count [-n | -l PORT | -B] STATUS [MIB]
 *        mmt-criu-count -R HANDLE [buf]
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/socket.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "mmt.h"

#define CLOSURE	(128 * 1024)

static const char *status_path;

static void status(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void status(const char *fmt, ...)
{
	char tmp[256], line[200];
	va_list ap;
	int fd, n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	snprintf(tmp, sizeof(tmp), "%s.tmp", status_path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return;
	if (write(fd, line, n) != n || write(fd, "\n", 1) != 1) {
		close(fd);
		return;
	}
	close(fd);
	rename(tmp, status_path);
}

static void fail(const char *why)
{
	status("FAIL %s (errno %d: %s)", why, errno, strerror(errno));
	exit(1);
}

static int all_valid(int fd, uint32_t n)
{
	struct mmt_mmt_info *m = calloc(n, sizeof(*m));
	struct mmt_pmo_info i = { .size = sizeof(i), .mmt_count = n,
				  .mmts = (uintptr_t)m };
	uint32_t k;
	int ok = m && !ioctl(fd, MMT_IOC_PMO_INFO, &i) && i.mmt_count == n;

	for (k = 0; ok && k < n; k++)
		ok = m[k].state == MMT_STATE_VALID;
	free(m);
	return ok;
}

/* /dev/mmt (in *dev) and a keyed PMO of @bytes, 128 KiB closures */
static int keyed_pmo(int *dev, uint64_t bytes)
{
	struct mmt_pmo_create c = { .size = sizeof(c) };
	struct mmt_pmo_key k = { .size = sizeof(k), .key_len = 16 };

	*dev = open("/dev/mmt", O_RDWR);
	if (*dev < 0)
		fail("open /dev/mmt");
	c.bytes = bytes;
	c.geometry.levels = 2;
	if (ioctl(*dev, MMT_IOC_PMO_CREATE, &c))
		fail("PMO_CREATE");
	memset(k.key, 0xc5, 16);
	if (ioctl(c.fd, MMT_IOC_PMO_SET_KEY, &k))
		fail("PMO_SET_KEY");
	return c.fd;
}

static volatile sig_atomic_t pause_req, resume_req;

static void on_usr1(int sig)
{
	(void)sig;
	pause_req = 1;
}

static void on_usr2(int sig)
{
	(void)sig;
	resume_req = 1;
}

/* the pattern of word @i of the big PMO (splitmix64) */
static uint64_t mix(uint64_t i)
{
	uint64_t z = i + 0x9e3779b97f4a7c15ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

struct wlog {
	uint64_t slot, value;
};

static int wlog_cmp(const void *a, const void *b)
{
	const struct wlog *x = a, *y = b;

	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

#define CHUNK	(1024 * 1024)

/*
 * The whole big PMO, byte for byte: every word the pattern, or the value
 * the counter wrote last there (each slot is written at most once while
 * count < slots).  Returns its FNV-1a 64.
 */
static uint64_t big_check(int fd, uint64_t bytes, const struct wlog *log,
			  uint64_t n)
{
	struct wlog *sorted = malloc((n ? n : 1) * sizeof(*sorted));
	uint64_t *buf = malloc(CHUNK), h = 0xcbf29ce484222325ull, off, w, j = 0;

	if (!sorted || !buf)
		fail("malloc");
	memcpy(sorted, log, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), wlog_cmp);
	for (off = 0; off < bytes; off += CHUNK) {
		if (pread(fd, buf, CHUNK, off) != CHUNK)
			fail("pread (whole PMO)");
		for (w = 0; w < CHUNK / 8; w++) {
			uint64_t i = off / 8 + w, want = mix(i);

			if (j < n && sorted[j].slot == i)
				want = sorted[j++].value;
			if (buf[w] != want) {
				errno = 0;
				fail("the PMO differs from the pattern and the log");
			}
			h = (h ^ buf[w]) * 0x100000001b3ull;
		}
	}
	free(buf);
	free(sorted);
	return h;
}

/* big_check() and every MMT VALID, then STATUS "... sum=<FNV-1a> @what" */
static uint64_t big_report(int fd, uint64_t bytes, const struct wlog *log,
			   uint64_t count, uint64_t checks, const char *what)
{
	uint64_t sum = big_check(fd, bytes, log, count);

	if (!all_valid(fd, bytes / CLOSURE))
		fail("an MMT is not VALID");
	status("count=%llu checks=%llu sum=%016llx %s",
	       (unsigned long long)count, (unsigned long long)checks,
	       (unsigned long long)sum, what);
	return sum;
}

static void __attribute__((noreturn)) big_main(uint64_t bytes)
{
	struct timespec ms = { 0, 1000 * 1000 };
	uint64_t count = 0, checks = 0, slots = bytes / 8, off, w, s, sum, cap;
	uint64_t *buf = malloc(CHUNK);
	const char *keep;
	char resumed[256];
	struct wlog *log;
	int dev, fd;

	cap = 1 << 16;
	log = malloc(cap * sizeof(*log));
	if (!buf || !log || bytes % CHUNK)
		fail("malloc / size");
	signal(SIGUSR1, on_usr1);
	signal(SIGUSR2, on_usr2);
	fd = keyed_pmo(&dev, bytes);
	status("filling count=0 checks=0");
	for (off = 0; off < bytes; off += CHUNK) {
		for (w = 0; w < CHUNK / 8; w++)
			buf[w] = mix(off / 8 + w);
		if (pwrite(fd, buf, CHUNK, off) != CHUNK)
			fail("pwrite (fill)");
	}
	status("count=0 checks=0");
	for (;;) {
		if (pause_req) {
			pause_req = 0;
			big_report(fd, bytes, log, count, ++checks, "paused");
			while (!resume_req)
				nanosleep(&ms, NULL);
			resume_req = 0;
			sum = big_report(fd, bytes, log, count, ++checks,
					 "resumed");
			/* kept: STATUS goes on with the count */
			snprintf(resumed, sizeof(resumed), "%s.resumed",
				 status_path);
			keep = status_path;
			status_path = resumed;
			status("count=%llu sum=%016llx resumed",
			       (unsigned long long)count,
			       (unsigned long long)sum);
			status_path = keep;
		}
		if (count + 1 >= slots)
			fail("the counter ran out of slots");
		count++;
		s = (count * 4099) % slots;	/* once each: 4099 is odd */
		if (count > cap) {
			cap *= 2;
			log = realloc(log, cap * sizeof(*log));
			if (!log)
				fail("realloc");
		}
		log[count - 1] = (struct wlog){ s, count };
		if (pwrite(fd, &count, 8, s * 8) != 8)
			fail("pwrite");
		if (!(count % 256)) {
			for (w = count - 255; w <= count; w++) {
				uint64_t v;

				if (pread(fd, &v, 8, log[w - 1].slot * 8) != 8)
					fail("pread");
				if (v != w) {
					errno = 0;
					fail("a slot differs from what was written");
				}
			}
			checks++;
			status("count=%llu checks=%llu",
			       (unsigned long long)count,
			       (unsigned long long)checks);
		}
		nanosleep(&ms, NULL);
	}
}

/* -R HANDLE [buf]: MMT_IOC_RESTORE of a parked PMO, its errno printed */
static int restore_main(const char *hex, int with_buf)
{
	static uint8_t page[4096];
	struct mmt_restore r = { .size = sizeof(r) };
	unsigned int b;
	int dev, i;

	if (strlen(hex) != 2 * MMT_CKPT_HANDLE_BYTES)
		return 2;
	for (i = 0; i < MMT_CKPT_HANDLE_BYTES; i++) {
		if (sscanf(hex + 2 * i, "%2x", &b) != 1)
			return 2;
		r.handle[i] = b;
	}
	if (with_buf) {
		r.buf = (uintptr_t)page;
		r.buf_len = sizeof(page);
	}
	dev = open("/dev/mmt", O_RDWR);
	if (dev < 0 || ioctl(dev, MMT_IOC_RESTORE, &r)) {
		printf("restore: %s\n", strerrorname_np(errno));
		return 1;
	}
	printf("restore: ok\n");
	close(r.fd);
	return 0;
}

int main(int argc, char **argv)
{
	struct mmt_pmo_create p = { .size = sizeof(p) };
	struct timespec ms = { 0, 1000 * 1000 };
	uint64_t count = 0, checks = 0, bytes, slots, s;
	uint8_t *copy, *pcopy, *back;
	int nommt = 0, port = 0, dev, fd = -1, pfd = -1;

	if (argc > 2 && !strcmp(argv[1], "-R"))
		return restore_main(argv[2], argc > 3 && !strcmp(argv[3], "buf"));
	if (argc > 2 && !strcmp(argv[1], "-B")) {
		status_path = argv[2];
		big_main((argc > 3 ? strtoull(argv[3], NULL, 0) : 1) << 20);
	}
	if (argc > 1 && !strcmp(argv[1], "-n")) {
		nommt = 1;
		argc--;
		argv++;
	} else if (argc > 2 && !strcmp(argv[1], "-l")) {
		port = atoi(argv[2]);
		argc -= 2;
		argv += 2;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: mmt-criu-count [-n | -l PORT | -B] STATUS [MIB] | -R HANDLE [buf]\n");
		return 2;
	}
	status_path = argv[1];
	bytes = (argc > 2 ? strtoull(argv[2], NULL, 0) : 1) << 20;
	if (nommt) {
		for (;;) {
			count++;
			if (!(count % 256))
				status("count=%llu checks=0 nommt",
				       (unsigned long long)count);
			nanosleep(&ms, NULL);
		}
	}
	copy = calloc(1, bytes);
	pcopy = calloc(1, CLOSURE);
	back = malloc(bytes);
	if (!copy || !pcopy || !back)
		fail("malloc");
	fd = keyed_pmo(&dev, bytes);
	p.bytes = CLOSURE;
	p.geometry.levels = 2;
	if (ioctl(dev, MMT_IOC_PMO_CREATE, &p))
		fail("PMO_CREATE plain");
	pfd = p.fd;
	if (port) {
		struct mmt_listen l = { .size = sizeof(l) };

		l.addr.family = AF_INET;
		l.addr.port = port;
		if (ioctl(dev, MMT_IOC_LISTEN, &l))
			fail("LISTEN");
	}
	slots = bytes / 8;
	for (;;) {
		count++;
		s = (count * 4099) % slots;	/* spread over every closure */
		memcpy(copy + s * 8, &count, 8);
		if (pwrite(fd, &count, 8, s * 8) != 8)
			fail("pwrite");
		s = count % (CLOSURE / 8);
		memcpy(pcopy + s * 8, &count, 8);
		if (pwrite(pfd, &count, 8, s * 8) != 8)
			fail("pwrite plain");
		if (!(count % 256)) {
			if (pread(fd, back, bytes, 0) != (ssize_t)bytes)
				fail("pread");
			if (memcmp(back, copy, bytes))
				fail("the PMO differs from what was written");
			if (pread(pfd, back, CLOSURE, 0) != CLOSURE)
				fail("pread plain");
			if (memcmp(back, pcopy, CLOSURE))
				fail("the plain PMO differs from what was written");
			if (!all_valid(fd, bytes / CLOSURE))
				fail("an MMT is not VALID");
			checks++;
			status("count=%llu checks=%llu",
			       (unsigned long long)count,
			       (unsigned long long)checks);
		}
		nanosleep(&ms, NULL);
	}
}
