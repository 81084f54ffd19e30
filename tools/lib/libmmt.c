// SPDX-License-Identifier: GPL-2.0
/*
 * libmmt.c - thin wrappers over the /dev/mmt ioctls; see libmmt.h for the
 * contract of every function (0, an fd or a count on success; -errno on
 * failure, errno also set).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "libmmt.h"

_Static_assert(sizeof(struct mmt_query) == MMT_QUERY_SIZE_VER0, "query");
_Static_assert(sizeof(struct mmt_pmo_create) == MMT_PMO_CREATE_SIZE_VER0,
	       "create");
_Static_assert(sizeof(struct mmt_node_id) == MMT_NODE_ID_SIZE_VER0, "node");
_Static_assert(sizeof(struct mmt_pmo_key) == MMT_PMO_KEY_SIZE_VER0, "key");
_Static_assert(sizeof(struct mmt_pmo_counter) == MMT_PMO_COUNTER_SIZE_VER0,
	       "counter");
_Static_assert(sizeof(struct mmt_pmo_info) == MMT_PMO_INFO_SIZE_VER0, "info");
_Static_assert(sizeof(struct mmt_delegate_local) ==
	       MMT_DELEGATE_LOCAL_SIZE_VER0, "delegate");
_Static_assert(sizeof(struct mmt_pmo_debug) == MMT_PMO_DEBUG_SIZE_VER0,
	       "debug");
_Static_assert(sizeof(struct mmt_listen) == MMT_LISTEN_SIZE_VER0, "listen");
_Static_assert(sizeof(struct mmt_connect) == MMT_CONNECT_SIZE_VER0,
	       "connect");
_Static_assert(sizeof(struct mmt_xfer) == MMT_XFER_SIZE_VER0, "xfer");

/* neg_errno() - the -errno of the last failed call (never 0) */
static int neg_errno(void)
{
	return errno ? -errno : -EIO;
}

/* mmtu_ioctl() - ioctl(2) in the library's convention: 0 or -errno */
static int mmtu_ioctl(int fd, unsigned long cmd, void *arg)
{
	if (ioctl(fd, cmd, arg) < 0)
		return neg_errno();
	return 0;
}

/* set_errno() - set errno from a negative return value and return it */
static int set_errno(int ret)
{
	if (ret < 0)
		errno = -ret;
	return ret;
}

int mmtu_open_path(const char *path)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);

	return fd < 0 ? neg_errno() : fd;
}

int mmtu_open(void)
{
	return mmtu_open_path(MMTU_DEV_PATH);
}

int mmtu_query(int devfd, struct mmt_query *q)
{
	memset(q, 0, sizeof(*q));
	q->size = MMT_QUERY_SIZE_VER0;
	return mmtu_ioctl(devfd, MMT_IOC_QUERY, q);
}

int mmtu_set_node_id(int devfd, unsigned int node_id)
{
	struct mmt_node_id n = {
		.size = MMT_NODE_ID_SIZE_VER0,
		.node_id = node_id,
	};

	return mmtu_ioctl(devfd, MMT_IOC_SET_NODE_ID, &n);
}

uint64_t mmtu_geometry_closure_bytes(const struct mmt_geometry *g)
{
	static const uint8_t def_arity[MMT_GEOM_MAX_LEVELS] = { 6, 5, 4, 4 };
	unsigned int levels = 3, log_block = 6, log_blocks = 0, given = 0, l;
	const uint8_t *arity = def_arity;

	if (g) {
		if (g->reserved[0] || g->reserved[1])
			return 0;
		if (g->levels)
			levels = g->levels;
		if (g->log_block_size)
			log_block = g->log_block_size;
		for (l = 0; l < MMT_GEOM_MAX_LEVELS; l++) {
			/* arities past @levels must be zero */
			if (g->log_arity[l] && l >= levels)
				return 0;
			given += !!g->log_arity[l];
		}
		/* either all of the first @levels arities or none */
		if (given && given != levels)
			return 0;
		if (given)
			arity = g->log_arity;
	}
	if (levels < 1 || levels > MMT_GEOM_MAX_LEVELS || log_block < 6 ||
	    log_block > 12)
		return 0;
	for (l = 0; l < levels; l++) {
		if (arity[l] < 1 || arity[l] > 6)
			return 0;
		log_blocks += arity[l];
	}
	if (log_blocks > 20)
		return 0;
	return (uint64_t)1 << (log_blocks + log_block);
}

int mmtu_pmo_create(int devfd, uint64_t bytes, const struct mmt_geometry *geom,
		    uint64_t flags, struct mmt_pmo_create *out)
{
	struct mmt_pmo_create c;
	int ret;

	memset(&c, 0, sizeof(c));
	c.size = MMT_PMO_CREATE_SIZE_VER0;
	c.flags = flags;
	c.bytes = bytes;	/* c.fd stays 0: the module rejects input there */
	if (geom)
		c.geometry = *geom;
	ret = mmtu_ioctl(devfd, MMT_IOC_PMO_CREATE, &c);
	if (out)
		*out = c;
	if (ret)
		return ret;
	if (c.fd < 0)	/* a module that broke the contract */
		return set_errno(-EPROTO);
	return c.fd;
}

int mmtu_pmo_set_key(int pmofd, const void *key, size_t key_len,
		     uint64_t flags)
{
	struct mmt_pmo_key k;
	int ret;

	memset(&k, 0, sizeof(k));
	if (key_len > sizeof(k.key))
		return set_errno(-EINVAL);
	k.size = MMT_PMO_KEY_SIZE_VER0;
	k.key_len = key_len;
	k.flags = flags;
	memcpy(k.key, key, key_len);
	ret = mmtu_ioctl(pmofd, MMT_IOC_PMO_SET_KEY, &k);
	explicit_bzero(&k, sizeof(k));
	return set_errno(ret);
}

int mmtu_pmo_set_root_counter(int pmofd, uint64_t counter)
{
	struct mmt_pmo_counter c = {
		.size = MMT_PMO_COUNTER_SIZE_VER0,
		.root_counter = counter,
	};

	return mmtu_ioctl(pmofd, MMT_IOC_PMO_SET_ROOT_COUNTER, &c);
}

int mmtu_pmo_info(int pmofd, struct mmt_pmo_info *info,
		  struct mmt_mmt_info *mmts, uint32_t count)
{
	memset(info, 0, sizeof(*info));
	info->size = MMT_PMO_INFO_SIZE_VER0;
	if (mmts && count) {
		info->mmts = (uint64_t)(uintptr_t)mmts;
		info->mmt_count = count;
	}
	return mmtu_ioctl(pmofd, MMT_IOC_PMO_INFO, info);
}

int mmtu_pmo_invalidate(int pmofd)
{
	if (ioctl(pmofd, MMT_IOC_PMO_INVALIDATE, 0) < 0)
		return neg_errno();
	return 0;
}

int mmtu_pmo_mig_resolve(int pmofd)
{
	if (ioctl(pmofd, MMT_IOC_PMO_MIG_RESOLVE, 0) < 0)
		return neg_errno();
	return 0;
}

int mmtu_pmo_mig_resolve_force(int pmofd)
{
	if (ioctl(pmofd, MMT_IOC_PMO_MIG_RESOLVE, MMT_MIG_RESOLVE_FORCE) < 0)
		return neg_errno();
	return 0;
}

int mmtu_pmo_checkpoint(int pmofd, uint64_t flags, void *buf,
			uint64_t buf_len, uint8_t *handle, uint32_t *closures,
			uint64_t *closure_len)
{
	struct mmt_checkpoint c = {
		.size = MMT_CHECKPOINT_SIZE_VER0,
		.flags = flags,
		.buf = (uintptr_t)buf,
		.buf_len = buf_len,
	};
	int ret;

	ret = mmtu_ioctl(pmofd, MMT_IOC_PMO_CHECKPOINT, &c);
	if (ret)
		return set_errno(ret);
	if (handle)
		memcpy(handle, c.handle, MMT_CKPT_HANDLE_BYTES);
	if (closures)
		*closures = c.closures;
	if (closure_len)
		*closure_len = c.closure_len;
	return 0;
}

int mmtu_restore(int devfd, const uint8_t *handle, const void *buf,
		 uint64_t buf_len, uint64_t flags)
{
	struct mmt_restore r = {
		.size = MMT_RESTORE_SIZE_VER0,
		.flags = flags,
		.buf = (uintptr_t)buf,
		.buf_len = buf_len,
	};
	int ret;

	memcpy(r.handle, handle, MMT_CKPT_HANDLE_BYTES);
	ret = mmtu_ioctl(devfd, MMT_IOC_RESTORE, &r);
	return set_errno(ret ? ret : r.fd);
}

int mmtu_pmo_delegate_local(int srcfd, int dstfd, uint64_t flags,
			    uint64_t *closures)
{
	struct mmt_delegate_local d = {
		.size = MMT_DELEGATE_LOCAL_SIZE_VER0,
		.dst_fd = dstfd,
		.flags = flags,
	};
	int ret;

	ret = mmtu_ioctl(srcfd, MMT_IOC_PMO_DELEGATE_LOCAL, &d);
	if (closures)
		*closures = d.closures;
	return set_errno(ret);
}

int mmtu_pmo_debug(int pmofd, uint32_t region, uint32_t closure,
		   uint64_t offset, uint8_t xor_mask)
{
	struct mmt_pmo_debug d = {
		.size = MMT_PMO_DEBUG_SIZE_VER0,
		.region = region,
		.closure = closure,
		.xor_mask = xor_mask,
		.offset = offset,
	};

	return mmtu_ioctl(pmofd, MMT_IOC_PMO_DEBUG, &d);
}

ssize_t mmtu_pmo_write_all(int pmofd, const void *buf, size_t len,
			   uint64_t offset)
{
	const unsigned char *p = buf;
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = pwrite(pmofd, p + done, len - done, offset + done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return neg_errno();
		}
		if (n == 0)
			return set_errno(-ENOSPC);
		done += n;
	}
	return done;
}

ssize_t mmtu_pmo_read_all(int pmofd, void *buf, size_t len, uint64_t offset)
{
	unsigned char *p = buf;
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = pread(pmofd, p + done, len - done, offset + done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return neg_errno();
		}
		if (n == 0)
			break;
		done += n;
	}
	return done;
}

int mmtu_send_fd(int sock, int fd)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	char byte = 'F';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = u.buf,
		.msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *cmsg;

	memset(&u, 0, sizeof(u));
	cmsg = CMSG_FIRSTHDR(&msg);
	cmsg->cmsg_level = SOL_SOCKET;
	cmsg->cmsg_type = SCM_RIGHTS;
	cmsg->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
	for (;;) {
		if (sendmsg(sock, &msg, MSG_NOSIGNAL) == 1)
			return 0;
		if (errno != EINTR)
			return neg_errno();
	}
}

int mmtu_recv_fd(int sock)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int) * 4)];
	} u;
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = u.buf,
		.msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *cmsg;
	int fds[4], nfds = 0, i;
	ssize_t n;

	do
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return neg_errno();
	for (cmsg = CMSG_FIRSTHDR(&msg); cmsg; cmsg = CMSG_NXTHDR(&msg, cmsg)) {
		if (cmsg->cmsg_level != SOL_SOCKET ||
		    cmsg->cmsg_type != SCM_RIGHTS)
			continue;
		for (i = 0; cmsg->cmsg_len >= CMSG_LEN(sizeof(int) * (i + 1)) &&
			    nfds < 4; i++)
			memcpy(&fds[nfds++], CMSG_DATA(cmsg) + i * sizeof(int),
			       sizeof(int));
	}
	if (nfds == 1 && !(msg.msg_flags & MSG_CTRUNC))
		return fds[0];
	for (i = 0; i < nfds; i++)
		close(fds[i]);
	return set_errno(n == 0 && !nfds ? -ECONNRESET : -EBADMSG);
}

static int mmtu_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int mmtu_key_from_hex(const char *s, size_t len, uint8_t *key, size_t *bad)
{
	size_t i;

	if (len != 32 && len != 64)
		return set_errno(-EINVAL);
	for (i = 0; i < len; i++) {
		int v = mmtu_hexval(s[i]);

		if (v < 0) {
			if (bad)
				*bad = i;
			return set_errno(-EILSEQ);
		}
		if (i % 2)
			key[i / 2] |= v;
		else
			key[i / 2] = v << 4;
	}
	return len / 2;
}

int mmtu_parse_addr(const char *host, unsigned int port,
		    struct mmt_conn_addr *addr)
{
	char buf[INET6_ADDRSTRLEN + IF_NAMESIZE + 2];
	char *scope, *end;
	unsigned long idx;

	memset(addr, 0, sizeof(*addr));
	if (port < 1 || port > 65535)
		return set_errno(-EINVAL);
	addr->port = port;
	if (!host || !*host) {
		addr->family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET, host, addr->addr) == 1) {
		addr->family = AF_INET;
		return 0;
	}
	if (strlen(host) >= sizeof(buf))
		return set_errno(-EINVAL);
	strcpy(buf, host);
	scope = strchr(buf, '%');
	if (scope)
		*scope++ = '\0';
	if (inet_pton(AF_INET6, buf, addr->addr) != 1) {
		memset(addr, 0, sizeof(*addr));
		return set_errno(-EINVAL);
	}
	addr->family = AF_INET6;
	if (scope) {
		errno = 0;
		idx = strtoul(scope, &end, 10);
		if (!*scope || *end || errno || idx > UINT32_MAX)
			idx = if_nametoindex(scope);
		if (!idx) {
			memset(addr, 0, sizeof(*addr));
			return set_errno(-EINVAL);
		}
		addr->scope_id = idx;
	}
	return 0;
}

int mmtu_listen(int devfd, const struct mmt_conn_addr *addr,
		unsigned int backlog, uint32_t flags)
{
	struct mmt_listen l;
	int ret;

	memset(&l, 0, sizeof(l));
	l.size = MMT_LISTEN_SIZE_VER0;
	l.flags = flags;
	l.addr = *addr;
	l.backlog = backlog;
	ret = mmtu_ioctl(devfd, MMT_IOC_LISTEN, &l);
	if (ret)
		return ret;
	if (l.fd < 0)
		return set_errno(-EPROTO);
	return l.fd;
}

/* conn_ioctl() - MMT_IOC_CONNECT / MMT_IOC_ACCEPT with @addr (or none) */
static int conn_ioctl(int fd, unsigned long cmd,
		      const struct mmt_conn_addr *addr,
		      unsigned int timeout_ms, uint32_t flags,
		      struct mmt_connect *out)
{
	struct mmt_connect c;
	int ret;

	memset(&c, 0, sizeof(c));
	c.size = MMT_CONNECT_SIZE_VER0;
	c.flags = flags;
	if (addr)
		c.addr = *addr;
	c.timeout_ms = timeout_ms;
	ret = mmtu_ioctl(fd, cmd, &c);
	if (out)
		*out = c;
	if (ret)
		return ret;
	if (c.fd < 0)
		return set_errno(-EPROTO);
	return c.fd;
}

int mmtu_accept(int lfd, unsigned int timeout_ms, uint32_t flags,
		struct mmt_connect *out)
{
	return conn_ioctl(lfd, MMT_IOC_ACCEPT, NULL, timeout_ms, flags, out);
}

int mmtu_connect(int devfd, const struct mmt_conn_addr *addr,
		 unsigned int timeout_ms, uint32_t flags,
		 struct mmt_connect *out)
{
	return conn_ioctl(devfd, MMT_IOC_CONNECT, addr, timeout_ms, flags,
			  out);
}

/* xfer_ioctl() - MMT_IOC_SEND / MMT_IOC_RECV; @out gets the reply */
static int xfer_ioctl(int connfd, unsigned long cmd, int pmofd,
		      uint32_t channel, uint64_t flags,
		      unsigned int timeout_ms, struct mmt_xfer *out)
{
	struct mmt_xfer x;
	int ret;

	memset(&x, 0, sizeof(x));
	x.size = MMT_XFER_SIZE_VER0;
	x.pmo_fd = pmofd;
	x.channel = channel;
	x.flags = flags;
	x.timeout_ms = timeout_ms;
	ret = mmtu_ioctl(connfd, cmd, &x);
	if (out)
		*out = x;
	return set_errno(ret);
}

int mmtu_conn_set_key(int connfd, const void *key, size_t key_len)
{
	struct mmt_conn_key k;
	int ret;

	memset(&k, 0, sizeof(k));
	if (key_len > sizeof(k.key))
		return set_errno(-EINVAL);
	k.size = MMT_CONN_KEY_SIZE_VER0;
	k.key_len = key_len;
	memcpy(k.key, key, key_len);
	ret = mmtu_ioctl(connfd, MMT_IOC_CONN_SET_KEY, &k);
	explicit_bzero(&k, sizeof(k));
	return set_errno(ret);
}

int mmtu_conn_key_agree(int connfd, int pmofd, size_t key_len,
			uint64_t flags, unsigned int timeout_ms,
			uint64_t *seq)
{
	struct mmt_key_agree a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.size = MMT_KEY_AGREE_SIZE_VER0;
	a.pmo_fd = pmofd;
	a.flags = flags;
	a.key_len = key_len;
	a.timeout_ms = timeout_ms;
	ret = mmtu_ioctl(connfd, MMT_IOC_CONN_KEY_AGREE, &a);
	if (!ret && seq)
		*seq = a.seq;
	return set_errno(ret);
}

int mmtu_send(int connfd, int pmofd, uint32_t channel, uint64_t flags,
	      unsigned int timeout_ms, struct mmt_xfer *out)
{
	return xfer_ioctl(connfd, MMT_IOC_SEND, pmofd, channel, flags,
			  timeout_ms, out);
}

int mmtu_recv(int connfd, int pmofd, uint32_t channel, uint64_t flags,
	      unsigned int timeout_ms, struct mmt_xfer *out)
{
	return xfer_ioctl(connfd, MMT_IOC_RECV, pmofd, channel, flags,
			  timeout_ms, out);
}

/* migrate_ioctl() - MMT_IOC_MIGRATE_SEND / _RECV; @info gets the figures */
static int migrate_ioctl(int connfd, unsigned long cmd, int pmofd,
			 uint64_t flags, unsigned int downtime_limit_ms,
			 unsigned int max_rounds, unsigned int window,
			 unsigned int timeout_ms, struct mmt_migrate_info *info)
{
	struct mmt_migrate_info i;
	struct mmt_migrate a;
	int ret;

	memset(&a, 0, sizeof(a));
	memset(&i, 0, sizeof(i));
	a.size = MMT_MIGRATE_SIZE_VER0;
	a.pmo_fd = pmofd;
	a.flags = flags;
	a.timeout_ms = timeout_ms;
	a.downtime_limit_ms = downtime_limit_ms;
	a.max_rounds = max_rounds;
	a.window = window;
	i.size = sizeof(i);
	a.info = (uintptr_t)&i;
	ret = mmtu_ioctl(connfd, cmd, &a);
	if (info)
		*info = i;
	return set_errno(ret);
}

int mmtu_migrate_send(int connfd, int pmofd, unsigned int downtime_limit_ms,
		      unsigned int max_rounds, unsigned int window,
		      unsigned int timeout_ms, struct mmt_migrate_info *info)
{
	return migrate_ioctl(connfd, MMT_IOC_MIGRATE_SEND, pmofd, 0,
			     downtime_limit_ms, max_rounds, window,
			     timeout_ms, info);
}

int mmtu_migrate_recv(int connfd, int pmofd, uint64_t flags,
		      unsigned int window, unsigned int timeout_ms,
		      struct mmt_migrate_info *info)
{
	return migrate_ioctl(connfd, MMT_IOC_MIGRATE_RECV, pmofd, flags, 0, 0,
			     window, timeout_ms, info);
}

int mmtu_migrate_info(int connfd, struct mmt_migrate_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	return set_errno(mmtu_ioctl(connfd, MMT_IOC_MIGRATE_INFO, info));
}

int mmtu_migrate_finish(int connfd)
{
	return set_errno(ioctl(connfd, MMT_IOC_MIGRATE_FINISH, 0) ? neg_errno() : 0);
}

int mmtu_migrate_abort(int connfd)
{
	return set_errno(ioctl(connfd, MMT_IOC_MIGRATE_ABORT, 0) ? neg_errno() : 0);
}

int mmtu_migrate_resolve(int connfd, int pmofd, uint32_t timeout_ms,
			 uint32_t *outcome)
{
	struct mmt_migrate_resolve r;
	int err;

	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	r.pmo_fd = pmofd;
	r.timeout_ms = timeout_ms;
	err = ioctl(connfd, MMT_IOC_MIGRATE_RESOLVE, &r) ? neg_errno() : 0;
	if (outcome)
		*outcome = r.outcome;
	return set_errno(err);
}

const char *mmtu_mig_phase_str(uint32_t phase)
{
	switch (phase) {
	case MMT_MIG_PHASE_NONE:
		return "none";
	case MMT_MIG_PHASE_SETUP:
		return "setup";
	case MMT_MIG_PHASE_PRECOPY:
		return "precopy";
	case MMT_MIG_PHASE_HANDOVER:
		return "handover";
	case MMT_MIG_PHASE_COMMITTED:
		return "committed";
	case MMT_MIG_PHASE_FAILED:
		return "failed";
	default:
		return "unknown";
	}
}

const char *mmtu_mig_stop_str(uint32_t stop)
{
	switch (stop) {
	case MMT_MIG_STOP_NONE:
		return "none";
	case MMT_MIG_STOP_CONVERGED:
		return "converged";
	case MMT_MIG_STOP_CLEAN:
		return "clean";
	case MMT_MIG_STOP_FINISH:
		return "finish";
	case MMT_MIG_STOP_ROUNDS:
		return "round-limit";
	default:
		return "unknown";
	}
}

const char *mmtu_channel_str(uint32_t channel)
{
	switch (channel) {
	case MMT_CHANNEL_MMT:
		return "mmt";
	case MMT_CHANNEL_SECURE:
		return "secure";
	case MMT_CHANNEL_PLAIN:
		return "plain";
	default:
		return "unknown";
	}
}

const char *mmtu_strerror(int err)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case 0:
		return "success";
	case EBADMSG:
		return "integrity check failed (tampered data or another key)";
	case ESTALE:
		return "replayed closure (root counter not above the minimum)";
	case EILSEQ:
		return "reordered closure (GUA not above the previous one)";
	case EMEDIUMTYPE:
		return "the PMOs differ in geometry or size";
	case EPERM:
		return "not allowed in the MMT's state (no key, read-only, not VALID/WAITING) or missing capability";
	case EBUSY:
		return "the PMO already has a key, or an MMT is SENDING";
	case ENOTTY:
		return "not a PMO / not /dev/mmt, or command not built in (MMT_IOC_PMO_DEBUG needs an MMT_DEBUG=1 module)";
	case ENOMEM:
		return "out of memory, or RLIMIT_MEMLOCK exceeded";
	case ENOSPC:
		return "the module's max_pmo_mib limit would be exceeded, or past the end of the PMO";
	case EMFILE:
		return "no free file descriptor";
	case EINVAL:
		return "invalid argument (size, flags, reserved fields, geometry, key length, counter)";
	case E2BIG:
		return "argument struct larger than the module's, with non-zero bytes past it";
	case EFAULT:
		return "bad user pointer";
	case EBADF:
		return "not an open file descriptor";
	case ENOENT:
	case ENODEV:
	case ENXIO:
		return "no /dev/mmt: is the mmt module loaded?";
	case EOPNOTSUPP:
		return "not available in this module (no RDMA, or channel not implemented)";
	case ECONNREFUSED:
		return "connection refused: nobody listens on that address and port";
	case ECONNRESET:
		return "the connection is gone (peer closed, QP error or device removed)";
	case ETIMEDOUT:
		return "the peer did not answer in time";
	case EPROTO:
		return "protocol mismatch (another channel, or protocol version)";
	case ECANCELED:
		return "the sender stopped before sending every closure";
	case EREMOTEIO:
		return "the receiver failed on its side (e.g. its PMO was invalidated)";
	case EXDEV:
		return "a closure of another connection";
	case EMSGSIZE:
		return "bad lengths in a closure";
	case EHOSTUNREACH:
	case ENETUNREACH:
		return "no address, route or RDMA device to reach the peer";
	case EADDRNOTAVAIL:
		return "no RDMA device for that address";
	default:
		return strerror(err);
	}
}

const char *mmtu_state_str(uint32_t state)
{
	switch (state) {
	case MMT_STATE_INVALID:
		return "INVALID";
	case MMT_STATE_VALID:
		return "VALID";
	case MMT_STATE_SENDING:
		return "SENDING";
	case MMT_STATE_WAITING:
		return "WAITING";
	case MMT_STATE_LANDING:
		return "LANDING";
	default:
		return "UNKNOWN";
	}
}
