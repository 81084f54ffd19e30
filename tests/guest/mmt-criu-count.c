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
 * Usage: mmt-criu-count [-n | -l PORT] STATUS [MIB]
 */
#include <errno.h>
#include <fcntl.h>
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

int main(int argc, char **argv)
{
	struct mmt_pmo_create c = { .size = sizeof(c) };
	struct mmt_pmo_create p = { .size = sizeof(c) };
	struct mmt_pmo_key k = { .size = sizeof(k), .key_len = 16 };
	struct timespec ms = { 0, 1000 * 1000 };
	uint64_t count = 0, checks = 0, bytes, slots, s;
	uint8_t *copy, *pcopy, *back;
	int nommt = 0, port = 0, dev, fd = -1, pfd = -1;

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
		fprintf(stderr, "usage: mmt-criu-count [-n | -l PORT] STATUS [MIB]\n");
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
	dev = open("/dev/mmt", O_RDWR);
	if (dev < 0)
		fail("open /dev/mmt");
	c.bytes = bytes;
	c.geometry.levels = 2;
	if (ioctl(dev, MMT_IOC_PMO_CREATE, &c))
		fail("PMO_CREATE");
	fd = c.fd;
	memset(k.key, 0xc5, 16);
	if (ioctl(fd, MMT_IOC_PMO_SET_KEY, &k))
		fail("PMO_SET_KEY");
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
