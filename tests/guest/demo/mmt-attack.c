// SPDX-License-Identifier: GPL-2.0
/*
 * mmt-attack.c - the attacks of the demo (make demo), two nodes over one
 * connection each, MMT channel, one 128 KiB closure (2-level geometry):
 *
 *   mmt-attack tamper-recv -p PORT          node B
 *   mmt-attack tamper-send -a ADDR -p PORT  node A
 *	A flips one ciphertext byte of its PMO's backing memory with
 *	MMT_IOC_PMO_DEBUG (needs a module built with MMT_DEBUG=1): what it
 *	then sends is what an attacker on the wire or in the NIC would have
 *	made of the closure.  B receives with eager verification: EBADMSG,
 *	and its receive PMO stays WAITING.  A flips the byte back and sends
 *	again on the same connection: B accepts it, byte-exact.
 *
 *   mmt-attack replay-recv -p PORT          node B
 *   mmt-attack replay-send -a ADDR -p PORT  node A
 *	A prepares two PMOs in the same state (same key, same writes, so the
 *	same root counter): the second is the attacker's recording of the
 *	first closure.  A sends the first: B accepts it at root counter R
 *	and posts its next receive PMO with R as the minimum
 *	(MMT_IOC_PMO_SET_ROOT_COUNTER: the freshness B has seen).  A sends
 *	the recording: B refuses it with ESTALE and stays WAITING.
 *
 * Options: -p PORT, -a ADDR (IPv4/IPv6), -k KEYHEX (default: mmt-bench's
 * public test key), -t MS (timeout per answer, default 60000).
 * Output: "ok - ..." / "not ok - ..." lines plus "attack: ..." lines for the
 * demo's summary; exit status: the number of failed checks (2 on set-up
 * errors).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "libmmt.h"

#define CLOSURE		(128u << 10)
#define TAMPER_OFFSET	1000

static int failures;
static const char *role = "?";
static uint8_t key[16] = "mmt-bench demo!!";
static unsigned int timeout_ms = 60000;

static void __attribute__((format(printf, 2, 3))) check(int cond,
							const char *fmt,
							...)
{
	va_list ap;

	printf("%s - attack %s: ", cond ? "ok" : "not ok", role);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!cond)
		failures++;
}

static void __attribute__((noreturn)) die(const char *what, int err)
{
	printf("not ok - attack %s: %s: %s (%s)\n", role, what,
	       mmtu_strerror(err), strerrorname_np(-err) ?: "?");
	exit(2);
}

static void pattern(uint8_t *b, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = (uint8_t)(i * 31 + seed * 7 + (i >> 9));
}

/* new_pmo() - a 1-closure PMO: VALID with the pattern, or WAITING */
static int new_pmo(int dev, bool receive, unsigned int seed)
{
	struct mmt_geometry g = { .levels = 2 };
	uint8_t buf[CLOSURE];
	int fd, ret;

	fd = mmtu_pmo_create(dev, CLOSURE, &g, MMT_PMO_CLOEXEC, NULL);
	if (fd < 0)
		die("MMT_IOC_PMO_CREATE", fd);
	ret = mmtu_pmo_set_key(fd, key, sizeof(key),
			       receive ? MMT_KEY_RECEIVE : 0);
	if (ret)
		die("MMT_IOC_PMO_SET_KEY", ret);
	if (!receive) {
		pattern(buf, sizeof(buf), seed);
		if (mmtu_pmo_write_all(fd, buf, sizeof(buf), 0) != CLOSURE)
			die("pwrite", -errno);
	}
	return fd;
}

static struct mmt_mmt_info info_of(int fd)
{
	struct mmt_pmo_info pi;
	struct mmt_mmt_info m;

	memset(&m, 0, sizeof(m));
	if (mmtu_pmo_info(fd, &pi, &m, 1))
		die("MMT_IOC_PMO_INFO", -errno);
	return m;
}

static bool same_as_pattern(int fd, unsigned int seed)
{
	static uint8_t buf[CLOSURE], want[CLOSURE];

	pattern(want, sizeof(want), seed);
	return mmtu_pmo_read_all(fd, buf, sizeof(buf), 0) == CLOSURE &&
	       !memcmp(buf, want, sizeof(buf));
}

static int do_accept(int dev, unsigned int port)
{
	struct mmt_conn_addr a;
	struct mmt_connect c;
	int lfd, conn;

	mmtu_parse_addr(NULL, port, &a);
	lfd = mmtu_listen(dev, &a, 1, MMT_CONN_CLOEXEC);
	if (lfd < 0)
		die("MMT_IOC_LISTEN", lfd);
	conn = mmtu_accept(lfd, 120000, MMT_CONN_CLOEXEC, &c);
	if (conn < 0)
		die("MMT_IOC_ACCEPT", conn);
	close(lfd);
	return conn;
}

static int do_connect(int dev, const char *addr, unsigned int port)
{
	struct mmt_conn_addr a;
	time_t end = time(NULL) + 120;
	int conn;

	if (!addr || mmtu_parse_addr(addr, port, &a))
		die("address", -EINVAL);
	for (;;) {
		conn = mmtu_connect(dev, &a, 5000, MMT_CONN_CLOEXEC, NULL);
		if (conn >= 0 || time(NULL) > end ||
		    (conn != -ECONNREFUSED && conn != -ETIMEDOUT))
			break;
		usleep(200000);
	}
	if (conn < 0)
		die("MMT_IOC_CONNECT", conn);
	return conn;
}

static void tamper_recv(int dev, unsigned int port)
{
	int conn = do_accept(dev, port), fd = new_pmo(dev, true, 0), ret;
	struct mmt_xfer x;

	ret = mmtu_recv(conn, fd, MMT_CHANNEL_MMT, MMT_XFER_EAGER, timeout_ms,
			&x);
	check(ret == -EBADMSG && x.closures == 0,
	      "tampered closure rejected with EBADMSG (got %s)",
	      ret ? strerrorname_np(-ret) : "success");
	check(info_of(fd).state == MMT_STATE_WAITING,
	      "receive PMO still WAITING: nothing accepted");
	printf("attack: tamper: 1 ciphertext byte flipped: closure rejected: %s (%s); receive PMO %s\n",
	       ret ? strerrorname_np(-ret) : "ACCEPTED", mmtu_strerror(ret),
	       mmtu_state_str(info_of(fd).state));
	ret = mmtu_recv(conn, fd, MMT_CHANNEL_MMT, MMT_XFER_EAGER, timeout_ms,
			&x);
	check(!ret && same_as_pattern(fd, 1),
	      "the untampered closure is accepted, byte-exact (%s)",
	      ret ? strerrorname_np(-ret) : "ok");
	printf("attack: tamper: the same closure untampered: %s\n",
	       !ret && same_as_pattern(fd, 1) ? "accepted, byte-exact" :
	       "NOT accepted");
	close(fd);
	close(conn);
}

static void tamper_send(int dev, const char *addr, unsigned int port)
{
	int conn = do_connect(dev, addr, port), fd = new_pmo(dev, false, 1);
	int ret;

	ret = mmtu_pmo_debug(fd, MMT_DEBUG_DATA, 0, TAMPER_OFFSET, 0x01);
	if (ret == -ENOTTY)
		printf("attack: tamper needs a module built with MMT_DEBUG=1 (MMT_IOC_PMO_DEBUG)\n");
	if (ret)
		die("MMT_IOC_PMO_DEBUG", ret);
	ret = mmtu_send(conn, fd, MMT_CHANNEL_MMT, MMT_XFER_COPY, timeout_ms,
			NULL);
	check(ret == -EBADMSG, "the receiver rejects the tampered closure: EBADMSG (got %s)",
	      ret ? strerrorname_np(-ret) : "success");
	check(info_of(fd).state == MMT_STATE_VALID,
	      "sender's MMT VALID again after the rejection");
	ret = mmtu_pmo_debug(fd, MMT_DEBUG_DATA, 0, TAMPER_OFFSET, 0x01);
	if (ret)
		die("MMT_IOC_PMO_DEBUG", ret);
	ret = mmtu_send(conn, fd, MMT_CHANNEL_MMT, MMT_XFER_COPY, timeout_ms,
			NULL);
	check(!ret, "the untampered closure is delivered (%s)",
	      ret ? strerrorname_np(-ret) : "ok");
	close(fd);
	close(conn);
}

static void replay_recv(int dev, unsigned int port)
{
	int conn = do_accept(dev, port), fd1 = new_pmo(dev, true, 0), fd2;
	struct mmt_mmt_info m;
	int ret;

	ret = mmtu_recv(conn, fd1, MMT_CHANNEL_MMT, 0, timeout_ms, NULL);
	m = info_of(fd1);
	check(!ret && m.state == MMT_STATE_VALID && same_as_pattern(fd1, 2),
	      "first closure accepted at root counter %llu, byte-exact",
	      (unsigned long long)m.root_counter);
	fd2 = new_pmo(dev, true, 0);
	ret = mmtu_pmo_set_root_counter(fd2, m.root_counter);
	if (ret)
		die("MMT_IOC_PMO_SET_ROOT_COUNTER", ret);
	ret = mmtu_recv(conn, fd2, MMT_CHANNEL_MMT, 0, timeout_ms, NULL);
	check(ret == -ESTALE, "replayed closure rejected with ESTALE (got %s)",
	      ret ? strerrorname_np(-ret) : "success");
	check(info_of(fd2).state == MMT_STATE_WAITING,
	      "receive PMO still WAITING: nothing accepted");
	printf("attack: replay: first closure accepted at root counter %llu; its replay rejected: %s (%s); receive PMO %s\n",
	       (unsigned long long)m.root_counter,
	       ret ? strerrorname_np(-ret) : "ACCEPTED", mmtu_strerror(ret),
	       mmtu_state_str(info_of(fd2).state));
	close(fd1);
	close(fd2);
	close(conn);
}

static void replay_send(int dev, const char *addr, unsigned int port)
{
	int conn = do_connect(dev, addr, port);
	int rec = new_pmo(dev, false, 2), fd = new_pmo(dev, false, 2), ret;
	unsigned long long c1 = info_of(fd).root_counter;
	unsigned long long c0 = info_of(rec).root_counter;

	check(c0 == c1, "the recording has the original's root counter (%llu, %llu)",
	      c0, c1);
	ret = mmtu_send(conn, fd, MMT_CHANNEL_MMT, 0, timeout_ms, NULL);
	check(!ret, "original closure delivered (%s)",
	      ret ? strerrorname_np(-ret) : "ok");
	ret = mmtu_send(conn, rec, MMT_CHANNEL_MMT, 0, timeout_ms, NULL);
	check(ret == -ESTALE, "replay refused by the receiver: ESTALE (got %s)",
	      ret ? strerrorname_np(-ret) : "success");
	close(fd);
	close(rec);
	close(conn);
}

int main(int argc, char **argv)
{
	const char *addr = NULL;
	unsigned int port = 7480;
	int opt, dev;

	if (argc < 2) {
		fprintf(stderr, "usage: mmt-attack tamper-recv|tamper-send|replay-recv|replay-send [-a ADDR] [-p PORT] [-k KEYHEX] [-t MS]\n");
		return 2;
	}
	role = argv[1];
	optind = 2;
	while ((opt = getopt(argc, argv, "a:p:k:t:")) != -1) {
		switch (opt) {
		case 'a':
			addr = optarg;
			break;
		case 'p':
			port = atoi(optarg);
			break;
		case 'k':	/* AES-128 keys only, as the usage says */
			if (strlen(optarg) != 32 ||
			    mmtu_key_from_hex(optarg, 32, key, NULL) != 16)
				return 2;
			break;
		case 't':
			timeout_ms = atoi(optarg);
			break;
		default:
			return 2;
		}
	}
	dev = mmtu_open();
	if (dev < 0)
		die("/dev/mmt", dev);
	if (!strcmp(role, "tamper-recv"))
		tamper_recv(dev, port);
	else if (!strcmp(role, "tamper-send"))
		tamper_send(dev, addr, port);
	else if (!strcmp(role, "replay-recv"))
		replay_recv(dev, port);
	else if (!strcmp(role, "replay-send"))
		replay_send(dev, addr, port);
	else
		return 2;
	return failures > 100 ? 100 : failures;
}
