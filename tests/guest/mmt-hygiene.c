// SPDX-License-Identifier: GPL-2.0
/*
 * mmt-hygiene.c - guest test of the module's memory accounting and of
 * callers that wait for a PMO's lock
 *
 * Built static by tests/guest/run.sh and run as root in the guest.
 *
 * memcg: a child in a cgroup v2 group with memory.max MAX_MIB (64 MiB)
 * asks for a PMO of BIG_MIB (128 MiB): ENOMEM, and the module's PMO count
 * and PMO bytes (debugfs mmt/stats) are as before; a PMO of 8 MiB in the
 * same group raises the group's memory.current by at least its size, and
 * a keyed one reads back byte-exact what was written; then a keyed PMO of
 * one 32 MiB closure fits, but its checkpoint, which needs a kernel buffer
 * of one closure, fails with ENOMEM, leaves no record and the PMO
 * readable and writable; once the child is gone the counters are back
 * where they started.
 *
 * killable: a thread pwrite()s a PMO from a buffer registered with
 * userfaultfd (missing mode) that nobody serves, so it holds the PMO's
 * lock while its copy waits.  Meanwhile each of MMT_IOC_PMO_CHECKPOINT,
 * MMT_IOC_PMO_INFO, MMT_IOC_PMO_INVALIDATE, MMT_IOC_PMO_SET_ROOT_COUNTER,
 * MMT_IOC_PMO_MIG_RESOLVE, MMT_IOC_PMO_DELEGATE_LOCAL (from that PMO) and
 * pwrite() runs in a child of its own, which
 * waits for that lock; the child is sent SIGKILL and must be gone within
 * 2 s.  Then the fault is served: the pwrite ends with every byte, and the
 * PMO reads back what the served pages held.
 *
 * With --conn ADDR (a Soft-RoCE device on ADDR, the module loaded), the
 * connection parts instead:
 *
 * accept: a child in the group listens on ADDR (MMT_IOC_LISTEN) and
 * sleeps; the parent, outside the group, connects ACCEPT_CONNS times.  The
 * listener's side of each connection (its state and receive ring, 64 KiB
 * of message buffers) is made in rdma_cm's handler, a kernel thread, and
 * must be charged to the listener's group: its memory.current rises by at
 * least ACCEPT_MIN_KIB per connection.
 *
 * killable: as above, a connection of the guest to itself; MMT_IOC_SEND
 * on one end and MMT_IOC_RECV on the other, each in a child of its own,
 * wait for the lock of the PMO they name; SIGKILL ends each within 2 s.
 *
 * Each part is skipped ("ok - hygiene: memcg # SKIP ...") on a kernel
 * without its feature (CONFIG_MEMCG, CONFIG_USERFAULTFD: the debug
 * kernel of scripts/debug-kernel.sh has neither).
 *
 * Output: "ok - hygiene: ..." / "not ok - hygiene: ..." lines.  Exit
 * status: the number of failed checks.
 *
 * Usage: mmt-hygiene [--conn ADDR] [DEVICE]   (default /dev/mmt)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mmt.h"
#include "mmt_stat.h"

#define CG_ROOT		"/sys/fs/cgroup"
#define CG_DIR		CG_ROOT "/mmt-hygiene"
#define MAX_MIB		64
#define BIG_MIB		128
#define SMALL_MIB	8
#define IO_BYTES	8192	/* the pwrite that waits on its fault */
#define CONN_PORT	7790	/* --conn: the listener's port */
#define ACCEPT_CONNS	16	/* connections the listener takes in */
#define ACCEPT_MIN_KIB	32	/* charged per connection, at least */

static int failures;
/* --conn: the two ends of a connection of the guest to itself */
static int conn_c = -1, conn_a = -1;

static void check(int cond, const char *name)
{
	printf("%s - hygiene: %s\n", cond ? "ok" : "not ok", name);
	fflush(stdout);
	if (!cond)
		failures++;
}

/* ioctl, returning 0 or the errno */
static int xioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? errno : 0;
}

/*
 * a PMO of @bytes in closures of @levels default levels (2: 128 KiB, 4:
 * 32 MiB); its fd, or -errno
 */
static int pmo_new_levels(int dev, uint64_t bytes, int levels, int keyed)
{
	struct mmt_pmo_create c = { .size = sizeof(c), .bytes = bytes };
	struct mmt_pmo_key k = { .size = sizeof(k), .key_len = 16 };
	int err;

	c.geometry.levels = levels;
	err = xioctl(dev, MMT_IOC_PMO_CREATE, &c);
	if (err)
		return -err;
	memset(k.key, 0x5a, 16);
	if (keyed) {
		err = xioctl(c.fd, MMT_IOC_PMO_SET_KEY, &k);
		if (err) {
			close(c.fd);
			return -err;
		}
	}
	return c.fd;
}

static int pmo_new(int dev, uint64_t bytes, int keyed)
{
	return pmo_new_levels(dev, bytes, 2, keyed);
}

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

static long long read_ll(const char *path)
{
	char buf[64] = "";
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? atoll(buf) : -1;
}

/*
 * a cgroup v2 group with the memory controller and memory.max MAX_MIB: 0;
 * 1 if the kernel has no memory controller; -1 on error
 */
static int cg_setup(void)
{
	char max[32], ctl[256] = "";
	int fd;

	if (access(CG_ROOT "/cgroup.controllers", F_OK) &&
	    mount("none", CG_ROOT, "cgroup2", 0, NULL)) {
		perror("mount cgroup2");
		return -1;
	}
	fd = open(CG_ROOT "/cgroup.controllers", O_RDONLY);
	if (fd < 0 || read(fd, ctl, sizeof(ctl) - 1) < 0) {
		perror("cgroup.controllers");
		return -1;
	}
	close(fd);
	if (!strstr(ctl, "memory"))
		return 1;
	if (write_file(CG_ROOT "/cgroup.subtree_control", "+memory")) {
		perror("+memory");
		return -1;
	}
	if (mkdir(CG_DIR, 0755) && errno != EEXIST) {
		perror("mkdir " CG_DIR);
		return -1;
	}
	snprintf(max, sizeof(max), "%d", MAX_MIB << 20);
	return write_file(CG_DIR "/memory.max", max);
}

/*
 * In the group, with a keyed PMO of one 32 MiB closure (charged, about
 * 37 MiB with its metadata): its checkpoint needs a kernel buffer of one
 * closure, which the group cannot hold: ENOMEM, no record, the PMO
 * unchanged.  @img: room for the image, faulted in by the parent (charged
 * to its group, not this one).
 */
static void memcg_ckpt(int dev, uint8_t *img, size_t img_len)
{
	struct mmt_checkpoint a = { .size = sizeof(a) };
	long records = mmtg_stat("ckpt_records");
	uint8_t w[4096], r[4096];
	int fd, err;

	fd = pmo_new_levels(dev, 32 << 20, 4, 1);
	check(fd >= 0, "memcg: a keyed PMO of one 32 MiB closure in the group");
	if (fd < 0) {
		printf("# errno %d\n", -fd);
		return;
	}
	memset(w, 0xa5, sizeof(w));
	err = xioctl(fd, MMT_IOC_PMO_CHECKPOINT, &a);
	if (!err && (uint64_t)a.closures * a.closure_len > img_len)
		err = E2BIG;
	if (pwrite(fd, w, sizeof(w), 4096) != sizeof(w) || err) {
		check(0, "memcg: the checkpoint's sizes");
		close(fd);
		return;
	}
	a.buf = (uintptr_t)img;
	a.buf_len = (uint64_t)a.closures * a.closure_len;
	a.closures = 0;
	a.closure_len = 0;
	err = xioctl(fd, MMT_IOC_PMO_CHECKPOINT, &a);
	check(err == ENOMEM,
	      "memcg: its checkpoint fails with ENOMEM (the closure buffer is charged)");
	if (err != ENOMEM)
		printf("# errno %d\n", err);
	check(mmtg_stat("ckpt_records") == records,
	      "memcg: no checkpoint record is left");
	check(pread(fd, r, sizeof(r), 4096) == sizeof(r) &&
	      !memcmp(r, w, sizeof(r)) &&
	      pwrite(fd, w, sizeof(w), 0) == sizeof(w),
	      "memcg: the PMO is still readable and writable, byte-exact");
	close(fd);
}

/* the child in the group: exit status = failed checks */
static int memcg_child(int dev, uint8_t *img, size_t img_len)
{
	long pmos = mmtg_stat("pmos"), pbytes = mmtg_stat("pmo_bytes");
	size_t small = (size_t)SMALL_MIB << 20;
	long long cur0, cur1;
	char pid[32];
	uint8_t *a, *b;
	int fd;

	snprintf(pid, sizeof(pid), "%d", getpid());
	if (write_file(CG_DIR "/cgroup.procs", pid)) {
		check(0, "memcg: the child joins the group");
		return failures;
	}
	cur0 = read_ll(CG_DIR "/memory.current");
	fd = pmo_new(dev, (uint64_t)BIG_MIB << 20, 0);
	cur1 = read_ll(CG_DIR "/memory.current");
	check(fd == -ENOMEM, "memcg: a 128 MiB PMO in a 64 MiB group fails with ENOMEM");
	if (fd >= 0) {
		printf("# it made fd %d; group memory.current %lld\n", fd,
		       read_ll(CG_DIR "/memory.current"));
		close(fd);
	} else if (fd != -ENOMEM) {
		printf("# errno %d\n", -fd);
	}
	check(mmtg_stat("pmos") == pmos && mmtg_stat("pmo_bytes") == pbytes,
	      "memcg: after the refusal the PMO count and bytes are as before");
	printf("# memory.current %lld -> %lld\n", cur0, cur1);
	check(cur0 >= 0 && cur1 - cur0 < (1 << 20),
	      "memcg: after the refusal the group's memory.current is as before");

	cur0 = read_ll(CG_DIR "/memory.current");
	fd = pmo_new(dev, small, 1);
	cur1 = read_ll(CG_DIR "/memory.current");
	check(fd >= 0, "memcg: an 8 MiB keyed PMO in the same group");
	if (fd < 0)
		printf("# errno %d\n", -fd);
	printf("# memory.current %lld -> %lld\n", cur0, cur1);
	check(cur0 >= 0 && cur1 - cur0 >= (long long)small,
	      "memcg: the 8 MiB PMO is charged to the group");
	if (fd < 0)
		return failures;
	a = malloc(small);
	b = malloc(small);
	if (!a || !b)
		return failures + 1;
	for (size_t i = 0; i < small; i++)
		a[i] = (uint8_t)(i * 131 + 7);
	check(pwrite(fd, a, small, 0) == (ssize_t)small &&
	      pread(fd, b, small, 0) == (ssize_t)small &&
	      !memcmp(a, b, small),
	      "memcg: the 8 MiB PMO reads back byte-exact");
	close(fd);
	free(a);
	free(b);
	memcg_ckpt(dev, img, img_len);
	return failures;
}

static void test_memcg(int dev)
{
	long pmos = mmtg_stat("pmos"), pbytes = mmtg_stat("pmo_bytes");
	size_t img_len = 48 << 20;
	uint8_t *img;
	int st;
	pid_t pid;

	/* shared, faulted in here: the child's writes charge no page */
	img = mmap(NULL, img_len, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (img == MAP_FAILED) {
		check(0, "memcg: 48 MiB for a checkpoint image");
		return;
	}
	memset(img, 0, img_len);
	st = cg_setup();
	if (st == 1) {
		printf("ok - hygiene: memcg # SKIP the kernel has no memory cgroup controller (CONFIG_MEMCG)\n");
		munmap(img, img_len);
		return;
	}
	if (st) {
		check(0, "memcg: a cgroup v2 group with memory.max 64 MiB");
		munmap(img, img_len);
		return;
	}
	pid = fork();
	if (pid == 0)
		_exit(memcg_child(dev, img, img_len));
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st)) {
		check(0, "memcg: the child ran");
		return;
	}
	failures += WEXITSTATUS(st);
	check(mmtg_stat("pmos") == pmos && mmtg_stat("pmo_bytes") == pbytes,
	      "memcg: with the child gone the PMO count and bytes are back");
	rmdir(CG_DIR);
	munmap(img, img_len);
}

/* ---------------------------------------------------------- killable */

struct writer {
	int fd;
	uint8_t *src;
	ssize_t ret;
	int err;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;

	w->ret = pwrite(w->fd, w->src, IO_BYTES, 0);
	w->err = errno;
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* the state letter of @pid in /proc/PID/stat, or '?' */
static char proc_state(pid_t pid)
{
	char path[64], buf[256], *p;
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return '?';
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return '?';
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] && p[2] ? p[2] : '?';
}

enum op {
	OP_CKPT, OP_INFO, OP_INVALIDATE, OP_SET_RC, OP_RESOLVE, OP_DELEGATE,
	OP_PWRITE,
	OP_SEND, OP_RECV,	/* --conn: on conn_c and conn_a */
	OP_COUNT
};
static const char *const op_name[] = {
	"MMT_IOC_PMO_CHECKPOINT", "MMT_IOC_PMO_INFO", "MMT_IOC_PMO_INVALIDATE",
	"MMT_IOC_PMO_SET_ROOT_COUNTER", "MMT_IOC_PMO_MIG_RESOLVE",
	"MMT_IOC_PMO_DELEGATE_LOCAL", "pwrite", "MMT_IOC_SEND", "MMT_IOC_RECV",
};

/* the child's call: each takes the PMO's lock */
static void run_op(int dev, int fd, enum op op)
{
	struct mmt_delegate_local d = { .size = sizeof(d) };
	struct mmt_checkpoint a = { .size = sizeof(a) };
	struct mmt_pmo_info q = { .size = sizeof(q) };
	struct mmt_pmo_counter c = { .size = sizeof(c), .root_counter = 1 };
	struct mmt_xfer x = {
		.size = sizeof(x), .pmo_fd = fd, .channel = MMT_CHANNEL_PLAIN,
		.timeout_ms = 5000,
	};
	static uint8_t buf[4096];
	void *img;

	switch (op) {
	case OP_CKPT:
		if (xioctl(fd, MMT_IOC_PMO_CHECKPOINT, &a))
			break;
		a.buf_len = (uint64_t)a.closures * a.closure_len;
		img = malloc(a.buf_len);
		a.buf = (uintptr_t)img;
		a.closures = 0;
		a.closure_len = 0;
		xioctl(fd, MMT_IOC_PMO_CHECKPOINT, &a);
		break;
	case OP_INFO:
		xioctl(fd, MMT_IOC_PMO_INFO, &q);
		break;
	case OP_INVALIDATE:
		ioctl(fd, MMT_IOC_PMO_INVALIDATE, 0);
		break;
	case OP_SET_RC:
		xioctl(fd, MMT_IOC_PMO_SET_ROOT_COUNTER, &c);
		break;
	case OP_RESOLVE:
		ioctl(fd, MMT_IOC_PMO_MIG_RESOLVE, 0);
		break;
	case OP_DELEGATE:
		d.dst_fd = pmo_new(dev, 1 << 20, 0);
		if (d.dst_fd >= 0)
			xioctl(fd, MMT_IOC_PMO_DELEGATE_LOCAL, &d);
		break;
	case OP_PWRITE:
		if (pwrite(fd, buf, sizeof(buf), 65536) < 0)
			break;
		break;
	case OP_SEND:
		xioctl(conn_c, MMT_IOC_SEND, &x);
		break;
	case OP_RECV:
		xioctl(conn_a, MMT_IOC_RECV, &x);
		break;
	case OP_COUNT:
		break;
	}
}

/* a child waiting for the lock goes away on SIGKILL within 2 s */
static pid_t kill_one(int dev, int fd, enum op op)
{
	char name[128];
	pid_t pid;
	double t0;
	int st, gone = 0;
	char state;

	pid = fork();
	if (pid == 0) {
		run_op(dev, fd, op);
		_exit(0);
	}
	if (pid < 0) {
		check(0, "fork");
		return -1;
	}
	usleep(500 * 1000);
	state = proc_state(pid);
	kill(pid, SIGKILL);
	t0 = now_s();
	while (now_s() - t0 < 2.0) {
		if (waitpid(pid, &st, WNOHANG) == pid) {
			gone = 1;
			break;
		}
		usleep(20 * 1000);
	}
	snprintf(name, sizeof(name),
		 "killable: %s waiting for the PMO's lock (state %c) is gone within 2 s of SIGKILL",
		 op_name[op], state);
	check(gone, name);
	if (!gone)
		printf("# still there after 2 s, state %c\n", proc_state(pid));
	return gone ? 0 : pid;
}

/* ops @first to @last wait for the lock of a PMO a stuck pwrite holds */
static void test_killable(int dev, enum op first, enum op last)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { };
	struct uffdio_copy cp = { };
	struct uffd_msg msg;
	struct writer w = { };
	struct pollfd pfd;
	pid_t stuck[OP_COUNT] = { 0 };
	uint8_t *fill, back[IO_BYTES];
	pthread_t th;
	int uffd, i, faulted;

	w.fd = pmo_new(dev, 1 << 20, 0);
	if (w.fd < 0) {
		check(0, "killable: a plain 1 MiB PMO");
		return;
	}
	uffd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0 && errno == ENOSYS) {
		printf("ok - hygiene: killable # SKIP the kernel has no userfaultfd (CONFIG_USERFAULTFD)\n");
		close(w.fd);
		return;
	}
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api)) {
		perror("userfaultfd");
		check(0, "killable: a userfaultfd");
		return;
	}
	w.src = mmap(NULL, IO_BYTES, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	reg.range.start = (uintptr_t)w.src;
	reg.range.len = IO_BYTES;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (w.src == MAP_FAILED || ioctl(uffd, UFFDIO_REGISTER, &reg)) {
		perror("UFFDIO_REGISTER");
		check(0, "killable: a buffer registered with userfaultfd");
		return;
	}
	if (pthread_create(&th, NULL, writer_main, &w)) {
		check(0, "killable: the writer thread");
		return;
	}
	/* the writer faults inside its copy, holding the PMO's lock */
	pfd.fd = uffd;
	pfd.events = POLLIN;
	faulted = poll(&pfd, 1, 10000) == 1 &&
		  read(uffd, &msg, sizeof(msg)) == sizeof(msg) &&
		  msg.event == UFFD_EVENT_PAGEFAULT;
	check(faulted, "killable: the pwrite waits on its unserved fault");
	for (i = first; i <= (int)last; i++)
		stuck[i] = faulted ? kill_one(dev, w.fd, i) : 0;

	/* serve the fault: the pwrite finishes with every byte */
	fill = mmap(NULL, IO_BYTES, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	for (i = 0; i < IO_BYTES; i++)
		fill[i] = (uint8_t)(i * 7 + 3);
	cp.dst = (uintptr_t)w.src;
	cp.src = (uintptr_t)fill;
	cp.len = IO_BYTES;
	if (ioctl(uffd, UFFDIO_COPY, &cp))
		perror("UFFDIO_COPY");
	pthread_join(th, NULL);
	check(w.ret == IO_BYTES, "killable: the pwrite then ends with every byte");
	if (w.ret != IO_BYTES)
		printf("# pwrite returned %zd (errno %d)\n", w.ret, w.err);
	for (i = first; i <= (int)last; i++)
		if (stuck[i] > 0)
			waitpid(stuck[i], NULL, 0);
	check(pread(w.fd, back, IO_BYTES, 0) == IO_BYTES &&
	      !memcmp(back, fill, IO_BYTES),
	      "killable: the PMO reads back the served bytes");
	close(uffd);
	close(w.fd);
}

/* ------------------------------------------------------------ --conn */

static void addr_v4(struct mmt_conn_addr *a, struct in_addr ip)
{
	memset(a, 0, sizeof(*a));
	a->family = AF_INET;
	a->port = CONN_PORT;
	memcpy(a->addr, &ip, 4);
}

/* a connection to @ip:CONN_PORT; its fd or -errno */
static int conn_to(int dev, struct in_addr ip)
{
	struct mmt_connect c = { .size = sizeof(c), .timeout_ms = 10000 };
	int err;

	addr_v4(&c.addr, ip);
	err = xioctl(dev, MMT_IOC_CONNECT, &c);
	return err ? -err : c.fd;
}

/* the listener's child in the group: listens, says so, waits on @in */
static int accept_child(int dev, struct in_addr ip, int out, int in)
{
	struct mmt_listen l = { .size = sizeof(l), .backlog = 2 * ACCEPT_CONNS };
	char pid[32], c;
	int err;

	snprintf(pid, sizeof(pid), "%d", getpid());
	addr_v4(&l.addr, ip);
	err = write_file(CG_DIR "/cgroup.procs", pid) ? EIO :
	      xioctl(dev, MMT_IOC_LISTEN, &l);
	c = (char)err;
	if (write(out, &c, 1) != 1 || err)
		return 1;
	/* the connections wait in its queue until it is told to go */
	if (read(in, &c, 1) < 0)
		return 1;
	close(l.fd);
	return 0;
}

static void test_accept_memcg(int dev, struct in_addr ip)
{
	int down[2], up[2], fds[ACCEPT_CONNS], i, n = 0, st;
	long long cur0, cur1;
	char c = 1;
	pid_t pid;

	st = cg_setup();
	if (st == 1) {
		printf("ok - hygiene: accept memcg # SKIP the kernel has no memory cgroup controller (CONFIG_MEMCG)\n");
		return;
	}
	if (st || pipe(down) || pipe(up)) {
		check(0, "accept memcg: a cgroup v2 group and two pipes");
		return;
	}
	pid = fork();
	if (pid == 0)
		_exit(accept_child(dev, ip, up[1], down[0]));
	if (pid < 0 || read(up[0], &c, 1) != 1 || c) {
		check(0, "accept memcg: a listener in the group");
		printf("# errno %d\n", c);
		if (pid > 0)
			waitpid(pid, NULL, 0);
		return;
	}
	cur0 = read_ll(CG_DIR "/memory.current");
	for (i = 0; i < ACCEPT_CONNS; i++) {
		fds[i] = conn_to(dev, ip);
		if (fds[i] < 0) {
			printf("# connect %d: errno %d\n", i, -fds[i]);
			break;
		}
		n++;
	}
	cur1 = read_ll(CG_DIR "/memory.current");
	check(n == ACCEPT_CONNS,
	      "accept memcg: 16 connections from outside the group to its listener");
	printf("# listener's group memory.current %lld -> %lld (%lld KiB a connection)\n",
	       cur0, cur1, n ? (cur1 - cur0) / 1024 / n : 0);
	check(n && cur0 >= 0 &&
	      cur1 - cur0 >= (long long)n * ACCEPT_MIN_KIB * 1024,
	      "accept memcg: the connections the listener took in are charged to its group");
	for (i = 0; i < n; i++)
		close(fds[i]);
	if (write(down[1], &c, 1) != 1 || waitpid(pid, &st, 0) != pid ||
	    !WIFEXITED(st) || WEXITSTATUS(st))
		check(0, "accept memcg: the listener's child ends");
	close(down[0]);
	close(down[1]);
	close(up[0]);
	close(up[1]);
	rmdir(CG_DIR);
}

/* a connection of the guest to itself in conn_c (connecting) and conn_a */
static int self_conn(int dev, struct in_addr ip)
{
	struct mmt_listen l = { .size = sizeof(l) };
	struct mmt_connect a = { .size = sizeof(a), .timeout_ms = 10000 };

	addr_v4(&l.addr, ip);
	if (xioctl(dev, MMT_IOC_LISTEN, &l))
		return -1;
	conn_c = conn_to(dev, ip);
	if (conn_c < 0 || xioctl(l.fd, MMT_IOC_ACCEPT, &a)) {
		close(l.fd);
		return -1;
	}
	conn_a = a.fd;
	close(l.fd);
	return 0;
}

static void test_conn(int dev, const char *addr)
{
	struct in_addr ip;

	if (inet_pton(AF_INET, addr, &ip) != 1) {
		check(0, "--conn: an IPv4 address");
		return;
	}
	test_accept_memcg(dev, ip);
	if (self_conn(dev, ip)) {
		check(0, "killable: a connection of the guest to itself");
		return;
	}
	test_killable(dev, OP_SEND, OP_RECV);
	close(conn_c);
	close(conn_a);
}

int main(int argc, char **argv)
{
	const char *conn = NULL, *path;
	int dev;

	if (argc > 2 && !strcmp(argv[1], "--conn")) {
		conn = argv[2];
		argv += 2;
		argc -= 2;
	}
	path = argc > 1 ? argv[1] : "/dev/mmt";
	dev = open(path, O_RDWR);
	if (dev < 0) {
		perror(path);
		return 1;
	}
	if (conn) {
		test_conn(dev, conn);
	} else {
		test_memcg(dev);
		test_killable(dev, OP_CKPT, OP_PWRITE);
	}
	close(dev);
	printf("# mmt-hygiene: %d failed\n", failures);
	return failures;
}
