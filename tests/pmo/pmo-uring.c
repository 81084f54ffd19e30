// SPDX-License-Identifier: GPL-2.0
/*
 * pmo-uring.c - io_uring on a PMO fd: IORING_OP_WRITE then IORING_OP_READ
 * go through the same controller as pwrite/pread (encrypt + MAC, verify +
 * decrypt), byte-exact, and a tampered block fails the read with EBADMSG.
 *
 * Raw io_uring syscalls (no liburing): one ring, one request at a time.
 * Usage: pmo-uring      (needs /dev/mmt; the tamper case needs a test
 * build of the module, MMT_DEBUG=1, and is skipped otherwise)
 */
#include <linux/io_uring.h>
#include <inttypes.h>

#include "pmo_test.h"

static const uint8_t uring_key[16] = {
	0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17,
	0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f,
};

/* One read or write of @len bytes at @off; returns the CQE's res. */
static int ring_rw(struct pt_ring *r, int op, int fd, void *buf, unsigned int len,
		   uint64_t off)
{
	unsigned int tail = *r->sq_tail, idx = tail & *r->sq_mask, head;
	struct io_uring_sqe *sqe = &r->sqes[idx];
	int res;

	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = op;
	sqe->fd = fd;
	sqe->addr = (uintptr_t)buf;
	sqe->len = len;
	sqe->off = off;
	r->sq_array[idx] = idx;
	__atomic_store_n(r->sq_tail, tail + 1, __ATOMIC_RELEASE);
	if (syscall(__NR_io_uring_enter, r->fd, 1, 1, IORING_ENTER_GETEVENTS,
		    NULL, 0) < 0)
		return -errno;
	head = *r->cq_head;
	if (head == __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE))
		return -EIO;	/* no completion although we waited */
	res = r->cqes[head & *r->cq_mask].res;
	__atomic_store_n(r->cq_head, head + 1, __ATOMIC_RELEASE);
	return res;
}

static int finish(void)
{
	pt_summary("pmo-uring");
	return pt_fail ? 1 : 0;
}

int main(void)
{
	const uint64_t size = 128 * 1024;	/* one 2-level closure */
	struct mmt_geometry g = { .levels = 2 };
	uint8_t *data = pt_malloc(size), *got = pt_malloc(size);
	struct mmt_query q;
	struct pt_ring r;
	int dev, fd, ret;
	uint64_t i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	dev = mmtu_open();
	pt_result(dev >= 0, "uring: open /dev/mmt", "%s", pt_errname(dev));
	if (dev < 0)
		return finish();
	ret = pt_ring_init(&r, 4, 0);
	pt_result(!ret, "uring: io_uring_setup", "%s", pt_errname(ret));
	if (ret)
		return finish();
	fd = mmtu_pmo_create(dev, size, &g, 0, NULL);
	ret = fd < 0 ? fd : mmtu_pmo_set_key(fd, uring_key, 16, 0);
	pt_result(!ret, "uring: create and key a PMO", "%s", pt_errname(ret));
	if (ret)
		return finish();
	for (i = 0; i < size; i++)
		data[i] = (uint8_t)(i * 131 + 7);

	/* unaligned offset and length: read-modify-write of partial blocks */
	ret = ring_rw(&r, IORING_OP_WRITE, fd, data + 100, size - 300, 100);
	pt_result(ret == (int)(size - 300), "uring: IORING_OP_WRITE",
		  "res %d (%s)", ret, ret < 0 ? pt_errname(ret) : "short");
	memset(got, 0xee, size);
	ret = ring_rw(&r, IORING_OP_READ, fd, got + 100, size - 300, 100);
	pt_result(ret == (int)(size - 300) &&
		  !memcmp(got + 100, data + 100, size - 300),
		  "uring: IORING_OP_READ byte-exact", "res %d", ret);
	ret = ring_rw(&r, IORING_OP_READ, fd, got, 100, 0);
	pt_result(ret == 100 && got[0] == 0 && got[99] == 0,
		  "uring: never-written bytes read as zero", "res %d", ret);

	if (mmtu_query(dev, &q) == 0 && (q.features & MMT_FEAT_DEBUG)) {
		ret = mmtu_pmo_debug(fd, MMT_DEBUG_DATA, 0, 4096, 0x01);
		pt_result(!ret, "uring: flip a ciphertext byte", "%s",
			  pt_errname(ret));
		ret = ring_rw(&r, IORING_OP_READ, fd, got, 64, 4096);
		pt_result(ret == -EBADMSG, "uring: tampered block -> EBADMSG",
			  "res %d (%s)", ret, pt_errname(ret));
		ret = ring_rw(&r, IORING_OP_READ, fd, got, 64, 8192);
		pt_result(ret == 64 && !memcmp(got, data + 8192, 64),
			  "uring: other blocks still read", "res %d", ret);
	} else {
		printf("# uring: not a test build (MMT_DEBUG): tamper case skipped\n");
	}
	close(fd);
	close(r.fd);
	close(dev);
	free(data);
	free(got);
	return finish();
}
