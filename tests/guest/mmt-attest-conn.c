// SPDX-License-Identifier: GPL-2.0
/*
 * mmt-attest-conn.c - guest test of connection set-up, attested or not
 * (the run attconn: tests/guest/attconn/; docs/ATTESTATION.md "The hello")
 *
 *   mmt-attest-conn listen -p PORT [-n N] [-X ERRNO] [-t MS]
 *	listen, then accept N connections (default 1) one after the other,
 *	each closed at once; each accept must succeed, or with -X fail with
 *	ERRNO (an attested handshake runs in MMT_IOC_ACCEPT); -t: the
 *	accept's timeout_ms (default 60000); with -R, before each accept
 *	wait until a connection is ready (POLLIN) and remove this node's
 *	RDMA device (`rdma link delete rxe0`): device removal tears the
 *	ready connection down before its accept (and attested handshake)
 *	runs
 *   mmt-attest-conn connect -a ADDR -p PORT [-n N] [-X ERRNO] [-o FILE] [-K]
 *	[-H] [-W MS]
 *	connect N times (default 1), each closed at once; while the peer is
 *	not listening yet (ECONNREFUSED, ETIMEDOUT, EHOSTUNREACH) the first
 *	is retried for up to 60 s; each must succeed, or with -X fail with
 *	ERRNO; prints the median and the minimum time of the successful
 *	connects (the ioctl's wall time, microseconds; the median, as the
 *	first set-up also resolves the peer's address) and writes the median
 *	to FILE with -o; with -K,
 *	MMT_IOC_CONN_KEY_AGREE on each connection must fail with ENOKEY
 *	(not an attested connection); with -H, each connection's fd must
 *	report POLLHUP at once (the peer closed it before the connect
 *	returned: debugfs mmt/conn_fault "connect delay MS" makes it so);
 *	with -W, each successful connect must have taken at most MS ms (its
 *	last try's wall time: with another handshake of this node held in
 *	debugfs mmt/conn_fault "hs verify delay MS", this one must not wait
 *	for it)
 *   mmt-attest-conn agree-recv -p PORT [-t MS] [-Q]
 *   mmt-attest-conn agree-send -a ADDR -p PORT [-o FILE] [-Q]
 *	MMT key agreement on one attested connection: two agreements, each
 *	keying a PMO of 2 closures of 128 KiB on each side (the receiver's
 *	WAITING); the sender writes pattern 1 into its first PMO and pattern
 *	2 into its second; then the first is sent into the receiver's second
 *	PMO (refused: EBADMSG on both sides, so the two agreements gave
 *	different keys), into the first (byte-exact), and the second into
 *	the second (byte-exact).  agree-send prints the connection's set-up
 *	time (the MMT_IOC_CONNECT that succeeded, us; the attested hello runs
 *	in it) and the agreement times (us), and writes the agreements' mean
 *	time to FILE with -o.  -t: agree-recv's accept timeout_ms (default 60000).
 *	With -Q only the first agreement, which must succeed and key the
 *	first PMO (key_len 32), and the connection is closed at once (the
 *	peer may close it before this side's agreement returned: debugfs
 *	mmt/conn_fault "agree delay MS" makes it so)
 *	The run attconn (test issuer) and the run attest (nodes
 *	with TPM-issued credentials, tests/guest/g-attest-node.sh) use them.
 *   mmt-attest-conn hold-recv -p PORT -L MS -M MS -E ERRNO [-t MS]
 *   mmt-attest-conn hold-send -a ADDR -p PORT -L MS -M MS -E ERRNO
 *	one attested connection, held open until its fd reports POLLHUP
 *	(docs/ATTESTATION.md "Renewal on a live connection": the connection
 *	ends when a credential either side holds of the other expires, and
 *	lives on while both are renewed): the hang-up must come within -L
 *	ms of the set-up and no sooner than -M ms after it, and a transfer
 *	on the connection must then fail with ERRNO (the reason it ended).
 *	Prints how long the connection lived.
 *
 * Output: "ok - ..." / "not ok - ..." lines; exit status: failed checks, 2
 * on usage or setup errors.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "mmt.h"

static int failures;

static void check(int cond, const char *what, int err)
{
	if (cond) {
		printf("ok - %s\n", what);
	} else {
		printf("not ok - %s (%s)\n", what, err ? strerror(err) : "ok");
		failures++;
	}
	fflush(stdout);
}

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int errno_of(const char *name)
{
	static const struct { const char *n; int e; } t[] = {
		{ "EKEYREJECTED", EKEYREJECTED }, { "EKEYEXPIRED", EKEYEXPIRED },
		{ "ENOKEY", ENOKEY }, { "ECONNREFUSED", ECONNREFUSED },
		{ "ECONNRESET", ECONNRESET }, { "ETIMEDOUT", ETIMEDOUT },
		{ "EPROTO", EPROTO },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(t[i].n, name))
			return t[i].e;
	fprintf(stderr, "unknown errno name %s\n", name);
	exit(2);
}

static int fill_addr(struct mmt_conn_addr *a, const char *ip, int port);
static void check(int cond, const char *what, int err);

#define CLOSURES	2
#define CLOSURE_BYTES	(128u << 10)

/* a PMO of CLOSURES closures of 128 KiB (2 levels), or -1 */
static int pmo_new(int dev)
{
	struct mmt_pmo_create c = { .size = sizeof(c) };

	c.bytes = (uint64_t)CLOSURE_BYTES * CLOSURES;
	c.geometry.levels = 2;
	if (ioctl(dev, MMT_IOC_PMO_CREATE, &c)) {
		perror("MMT_IOC_PMO_CREATE");
		return -1;
	}
	return c.fd;
}

static void pattern(unsigned char *buf, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (unsigned char)((i * 131 + (i >> 9) + seed * 71) ^
					 (seed << 4));
}

/* MMT_IOC_CONN_KEY_AGREE of @pmo: 0 or an errno; *@us its time */
static int agree(int conn, int pmo, int receive, double *us)
{
	struct mmt_key_agree a = { .size = sizeof(a) };
	double t0 = now_us();

	a.pmo_fd = pmo;
	a.flags = receive ? MMT_KEY_RECEIVE : 0;
	a.key_len = 32;
	a.timeout_ms = 20000;
	if (ioctl(conn, MMT_IOC_CONN_KEY_AGREE, &a))
		return errno;
	if (us)
		*us = now_us() - t0;
	return 0;
}

/* MMT_IOC_SEND or MMT_IOC_RECV of @pmo on the MMT channel: 0 or errno */
static int xfer(int conn, int pmo, int send)
{
	struct mmt_xfer x = { .size = sizeof(x) };

	x.pmo_fd = pmo;
	x.channel = MMT_CHANNEL_MMT;
	x.timeout_ms = 20000;
	return ioctl(conn, send ? MMT_IOC_SEND : MMT_IOC_RECV, &x) ? errno : 0;
}

/* the PMO reads back as pattern @seed */
static int pmo_is(int pmo, unsigned int seed)
{
	size_t n = (size_t)CLOSURE_BYTES * CLOSURES;
	unsigned char *want = malloc(n), *got = malloc(n);
	int same;

	if (!want || !got) {
		free(want);
		free(got);
		return 0;
	}
	pattern(want, n, seed);
	same = pread(pmo, got, n, 0) == (ssize_t)n && !memcmp(want, got, n);
	free(want);
	free(got);
	return same;
}

/*
 * MMT_IOC_CONNECT to @addr:@port into @c; with @retry, again every 0.2 s
 * for up to 60 s while the peer is not listening yet (ECONNREFUSED,
 * ETIMEDOUT, EHOSTUNREACH).  *@us: the wall time of the last try.
 * Return: 0 or the errno of the last try; -1 for a bad address.
 */
static int connect_to(int dev, const char *addr, int port, int retry,
		      struct mmt_connect *c, double *us)
{
	double t0, deadline = now_us() + 60e6;
	int err;

	for (;;) {
		memset(c, 0, sizeof(*c));
		c->size = sizeof(*c);
		c->timeout_ms = 20000;
		if (fill_addr(&c->addr, addr, port))
			return -1;
		t0 = now_us();
		err = ioctl(dev, MMT_IOC_CONNECT, c) ? errno : 0;
		if (us)
			*us = now_us() - t0;
		if (!retry || !err || now_us() > deadline ||
		    (err != ECONNREFUSED && err != ETIMEDOUT &&
		     err != EHOSTUNREACH))
			return err;
		usleep(200000);
	}
}

/*
 * One connection into @c: connected to @addr:@port (retried while the peer
 * is not listening; *@us the connect's time, if @us), or with @addr NULL
 * accepted on a listener made on @port (*@lfd, to close; @tmo the accept's
 * timeout_ms).  Return: 0 or the connect's or accept's errno; -1 on a
 * set-up error (printed).
 */
static int one_conn(int dev, const char *addr, int port, int tmo,
		    struct mmt_connect *c, int *lfd, double *us)
{
	struct mmt_listen l = { .size = sizeof(l) };

	if (addr)
		return connect_to(dev, addr, port, 1, c, us);
	if (fill_addr(&l.addr, NULL, port) || ioctl(dev, MMT_IOC_LISTEN, &l)) {
		perror("MMT_IOC_LISTEN");
		return -1;
	}
	*lfd = l.fd;
	c->timeout_ms = tmo;
	return ioctl(*lfd, MMT_IOC_ACCEPT, c) ? errno : 0;
}

static int do_agree(int dev, const char *addr, int port, const char *out,
		    int tmo, int quit)
{
	struct mmt_connect c = { .size = sizeof(c) };
	int send = addr != NULL, conn, p1, p2, err, lfd = -1;
	size_t n = (size_t)CLOSURE_BYTES * CLOSURES;
	double t1 = 0, t2 = 0, tc = 0;
	unsigned char *buf;

	err = one_conn(dev, addr, port, tmo, &c, &lfd, &tc);
	if (err < 0)
		return 2;
	check(!err, "agree: an attested connection", err);
	if (err)
		return failures;
	conn = c.fd;
	if (send)
		printf("# attested connection set-up: %.0f us\n", tc);
	p1 = pmo_new(dev);
	p2 = pmo_new(dev);
	if (p1 < 0 || p2 < 0)
		return 2;
	err = agree(conn, p1, !send, &t1);
	check(!err, "agree: key agreement 1 keys the first PMO", err);
	if (quit) {
		/* -Q: the peer may have closed before this side looked */
		struct mmt_pmo_info pi = { .size = sizeof(pi) };

		if (!err && ioctl(p1, MMT_IOC_PMO_INFO, &pi))
			err = errno;
		check(!err && pi.key_len == 32,
		      "agree: ... the first PMO is keyed (key_len 32)", err);
		goto out;
	}
	err = agree(conn, p2, !send, &t2);
	check(!err, "agree: key agreement 2 keys the second PMO", err);
	if (send) {
		buf = malloc(n);
		if (!buf)
			return 2;
		pattern(buf, n, 1);
		err = pwrite(p1, buf, n, 0) == (ssize_t)n ? 0 : errno;
		pattern(buf, n, 2);
		if (!err)
			err = pwrite(p2, buf, n, 0) == (ssize_t)n ? 0 : errno;
		free(buf);
		check(!err, "agree: the patterns written under the agreed keys",
		      err);
		err = xfer(conn, p1, 1);
		check(err == EBADMSG,
		      "agree: PMO 1 sent to a PMO of agreement 2: EBADMSG (the keys differ)",
		      err);
		err = xfer(conn, p1, 1);
		check(!err, "agree: PMO 1 sent under agreement 1", err);
		err = xfer(conn, p2, 1);
		check(!err, "agree: PMO 2 sent under agreement 2", err);
		printf("# key agreement: %.0f us, %.0f us\n", t1, t2);
		if (out) {
			FILE *f = fopen(out, "w");

			if (f) {
				fprintf(f, "%.0f\n", (t1 + t2) / 2);
				fclose(f);
			}
		}
	} else {
		err = xfer(conn, p2, 0);
		check(err == EBADMSG,
		      "agree: a closure of agreement 1 into a PMO of agreement 2: EBADMSG",
		      err);
		err = xfer(conn, p1, 0);
		check(!err && pmo_is(p1, 1),
		      "agree: PMO 1 received under agreement 1, byte-exact", err);
		err = xfer(conn, p2, 0);
		check(!err && pmo_is(p2, 2),
		      "agree: PMO 2 received under agreement 2, byte-exact", err);
	}
out:
	close(p1);
	close(p2);
	close(conn);
	if (lfd >= 0)
		close(lfd);
	return failures;
}

/* hold-recv, hold-send: see the head of this file */
static int do_hold(int dev, const char *addr, int port, int tmo, int live_ms,
		   int min_ms, const char *expect)
{
	struct mmt_connect c = { .size = sizeof(c) };
	int err, lfd = -1, pmo, pr;
	struct pollfd pfd = { .events = POLLIN };
	char what[160];
	double t0;

	err = one_conn(dev, addr, port, tmo, &c, &lfd, NULL);
	if (err < 0)
		return 2;
	t0 = now_us();
	check(!err, "hold: an attested connection", err);
	if (err)
		return failures;
	pfd.fd = c.fd;
	do {
		int left = live_ms - (int)((now_us() - t0) / 1e3);

		pr = left > 0 ? poll(&pfd, 1, left) : 0;
	} while (pr == 1 && !(pfd.revents & (POLLHUP | POLLERR)));
	snprintf(what, sizeof(what),
		 "hold: the connection ends (POLLHUP) within %d ms: after %.1f s",
		 live_ms, (now_us() - t0) / 1e6);
	check(pr == 1, what, pr < 0 ? errno : 0);
	printf("# connection lived %.1f s\n", (now_us() - t0) / 1e6);
	snprintf(what, sizeof(what), "hold: ... not before %d ms", min_ms);
	check(now_us() - t0 >= min_ms * 1e3, what, 0);
	pmo = pmo_new(dev);
	err = pmo < 0 ? EBADF : xfer(c.fd, pmo, 1);
	snprintf(what, sizeof(what), "hold: ... a transfer on it fails with %s",
		 expect);
	check(err == errno_of(expect), what, err);
	if (pmo >= 0)
		close(pmo);
	close(c.fd);
	if (lfd >= 0)
		close(lfd);
	return failures;
}

static int fill_addr(struct mmt_conn_addr *a, const char *ip, int port)
{
	memset(a, 0, sizeof(*a));
	a->family = AF_INET;
	a->port = port;
	if (ip && inet_pton(AF_INET, ip, a->addr) != 1) {
		fprintf(stderr, "bad address %s\n", ip);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *addr = NULL, *expect = NULL, *out = NULL;
	int port = 0, n = 1, i, dev, opt, ret, err, ok = 0, tmo = 60000;
	int try_agree = 0, hup = 0, remove_dev = 0, quit = 0, within_ms = 0;
	int live_ms = 0, min_ms = 0;
	const char *reason = NULL;
	char what[160];
	double times[64];

	if (argc < 2)
		goto usage;
	optind = 2;
	while ((opt = getopt(argc, argv, "a:p:n:X:o:t:W:L:M:E:KHRQ")) != -1) {
		switch (opt) {
		case 'a': addr = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 'n': n = atoi(optarg); break;
		case 'X': expect = optarg; break;
		case 'o': out = optarg; break;
		case 't': tmo = atoi(optarg); break;
		case 'W': within_ms = atoi(optarg); break;
		case 'L': live_ms = atoi(optarg); break;
		case 'M': min_ms = atoi(optarg); break;
		case 'E': reason = optarg; break;
		case 'K': try_agree = 1; break;
		case 'H': hup = 1; break;
		case 'R': remove_dev = 1; break;
		case 'Q': quit = 1; break;
		default: goto usage;
		}
	}
	if (!port || n < 1 || n > 64)
		goto usage;
	dev = open("/dev/mmt", O_RDWR);
	if (dev < 0) {
		perror("/dev/mmt");
		return 2;
	}
	if (!strcmp(argv[1], "listen")) {
		struct mmt_listen l = { .size = sizeof(l) };

		if (fill_addr(&l.addr, NULL, port) ||
		    ioctl(dev, MMT_IOC_LISTEN, &l)) {
			perror("MMT_IOC_LISTEN");
			return 2;
		}
		for (i = 0; i < n; i++) {
			struct mmt_connect c = { .size = sizeof(c) };

			c.timeout_ms = tmo;
			if (remove_dev) {
				struct pollfd pfd = { .fd = l.fd,
						      .events = POLLIN };

				check(poll(&pfd, 1, tmo) == 1 &&
				      (pfd.revents & POLLIN),
				      "listen: a connection is ready", errno);
				check(system("rdma link delete rxe0") == 0,
				      "listen: rdma link delete rxe0", 0);
			}
			ret = ioctl(l.fd, MMT_IOC_ACCEPT, &c);
			err = ret ? errno : 0;
			if (!ret)
				close(c.fd);
			if (expect)
				snprintf(what, sizeof(what),
					 "listen: accept %d fails with %s", i,
					 expect);
			else
				snprintf(what, sizeof(what),
					 "listen: accept %d, peer node %u", i,
					 ret ? 0 : c.peer_node);
			check(expect ? err == errno_of(expect) : !ret, what,
			      err);
		}
		close(l.fd);
		return failures;
	}
	if (!strncmp(argv[1], "hold-", 5) && (live_ms <= 0 || !reason))
		goto usage;
	if (!strcmp(argv[1], "hold-recv"))
		return do_hold(dev, NULL, port, tmo, live_ms, min_ms, reason);
	if (!strcmp(argv[1], "hold-send") && addr)
		return do_hold(dev, addr, port, tmo, live_ms, min_ms, reason);
	if (!strcmp(argv[1], "agree-recv"))
		return do_agree(dev, NULL, port, NULL, tmo, quit);
	if (!strcmp(argv[1], "agree-send") && addr)
		return do_agree(dev, addr, port, out, tmo, quit);
	if (strcmp(argv[1], "connect") || !addr)
		goto usage;
	for (i = 0; i < n; i++) {
		struct mmt_connect c;
		double us;

		err = connect_to(dev, addr, port, !i, &c, &us);
		if (err < 0)
			return 2;
		ret = err ? -1 : 0;
		if (!ret) {
			times[ok++] = us;
			if (within_ms) {
				snprintf(what, sizeof(what),
					 "connect: %d took %.0f ms, at most %d ms",
					 i, us / 1e3, within_ms);
				check(us <= within_ms * 1e3, what, 0);
			}
			if (try_agree) {
				int pmo = pmo_new(dev);

				err = pmo < 0 ? EBADF : agree(c.fd, pmo, 0, NULL);
				check(err == ENOKEY,
				      "connect: key agreement on a connection not attested: ENOKEY",
				      err);
				if (pmo >= 0)
					close(pmo);
				err = 0;
			}
			if (hup) {
				struct pollfd pfd = { .fd = c.fd,
						      .events = POLLIN };
				int pr = poll(&pfd, 1, 0);

				check(pr == 1 && (pfd.revents & POLLHUP),
				      "connect: the peer closed it first: the fd reports POLLHUP",
				      pr < 0 ? errno : 0);
			}
			close(c.fd);
		}
		if (expect)
			snprintf(what, sizeof(what),
				 "connect: %d fails with %s", i, expect);
		else
			snprintf(what, sizeof(what),
				 "connect: %d to %s port %d, peer node %u", i,
				 addr, port, ret ? 0 : c.peer_node);
		check(expect ? err == errno_of(expect) : !ret, what, err);
	}
	if (ok) {
		double med;

		qsort(times, ok, sizeof(times[0]), cmp_double);
		med = ok % 2 ? times[ok / 2] :
		      (times[ok / 2 - 1] + times[ok / 2]) / 2;
		printf("# connect: %d set-ups, median %.0f us, min %.0f us\n",
		       ok, med, times[0]);
		if (out) {
			FILE *f = fopen(out, "w");

			if (f) {
				fprintf(f, "%.0f\n", med);
				fclose(f);
			}
		}
	}
	return failures;
usage:
	fprintf(stderr, "usage: %s listen -p PORT [-n N] [-X ERRNO] [-t MS] [-R]\n"
		"       %s connect -a ADDR -p PORT [-n N] [-X ERRNO] [-o FILE] [-K] [-H] [-W MS]\n"
		"       %s agree-recv -p PORT [-t MS] [-Q]\n"
		"       %s agree-send -a ADDR -p PORT [-o FILE] [-Q]\n"
		"       %s hold-recv -p PORT -L MS -M MS -E ERRNO [-t MS]\n"
		"       %s hold-send -a ADDR -p PORT -L MS -M MS -E ERRNO\n",
		argv[0], argv[0], argv[0], argv[0], argv[0], argv[0]);
	return 2;
}
