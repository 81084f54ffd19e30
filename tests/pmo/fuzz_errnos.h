/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fuzz_errnos.h - the errnos uapi/mmt.h documents, per call, for
 * mmt-fuzz.c: what a failing call may return on the right kind of fd
 *
 * One entry per call the fuzzer makes.  @kinds is the set of fd kinds the
 * call is meant for (FZ_ANY: the call is not one of the module's and any
 * fd will do); @errs the errnos its documentation (uapi/mmt.h, or the
 * paragraph of MMT_IOC_PMO_CREATE on I/O; the VFS's for close, dup and
 * fd passing) lists for it on such an fd.  The rules that do not depend
 * on the call are in mmt-fuzz.c (fz_errno_ok()):
 *
 *   - an fd that is not open: EBADF (an fd number at or above the
 *     program's RLIMIT_NOFILE, or negative: never open);
 *   - an ioctl on the wrong kind of fd: ENOTTY (the module's other files,
 *     /dev/null, /dev/mmt for a PMO or connection ioctl);
 *   - an fd another thread closed, dup2()ed over or replaced during the
 *     call (a race with close): EBADF and ENOTTY anywhere, and for I/O
 *     the errnos of whatever file the number names by then;
 *   - read/write/lseek and io_uring on a file that is not a PMO: anything
 *     (that is the VFS's business, not the module's);
 *   - EINTR where the call documents it (the fuzzer sends signals).
 *
 * Keep this table in step with uapi/mmt.h: a documented errno missing
 * here fails the fuzzer, an undocumented one here hides a finding.
 */
#ifndef FUZZ_ERRNOS_H
#define FUZZ_ERRNOS_H

#include <errno.h>

/* What an fd in the fuzzer's table is (/proc/self/fd/N). */
enum fz_kind {
	K_NONE,		/* not open (a number never opened) */
	K_DEV,		/* /dev/mmt */
	K_PMO,		/* anon_inode:[mmt-pmo] */
	K_LISTEN,	/* anon_inode:[mmt-listen] */
	K_CONN,		/* anon_inode:[mmt-conn] */
	K_NULL,		/* /dev/null */
	K_OTHER,	/* anything else (a socket, an io_uring) */
	K_NR
};

#define FZ_KIND(k)	(1u << (k))
#define FZ_ANY		0xffffu

enum fz_call {
	C_QUERY, C_CREATE, C_NODE_ID, C_SET_KEY, C_COUNTER, C_INFO,
	C_INVALIDATE, C_DELEGATE, C_DEBUG, C_LISTEN, C_CONNECT, C_ACCEPT,
	C_SEND, C_RECV, C_CONN_KEY, C_MIG_SEND, C_MIG_RECV, C_MIG_INFO,
	C_MIG_FINISH, C_MIG_ABORT, C_MIG_RESOLVE, C_ATT_AUTH, C_ATT_CRED,
	C_ATT_INFO, C_CKPT, C_RESTORE, C_KEY_AGREE, C_MIG_RES, C_UNKNOWN,
	C_IOCTL_NR,	/* the ioctls come first */
	C_READ = C_IOCTL_NR, C_WRITE, C_PREAD, C_PWRITE, C_PREADV2,
	C_PWRITEV2, C_LSEEK, C_UR_READ, C_UR_WRITE, C_CLOSE, C_DUP, C_DUP2,
	C_SENDFD, C_RECVFD,
	C_NR
};

#define FZ_MAX_ERRS	28

struct fz_doc {
	const char *name;
	unsigned int kinds;		/* FZ_KIND() of the right fds */
	int errs[FZ_MAX_ERRS];		/* 0-terminated */
};

/* pread/pwrite and friends on a PMO (uapi/mmt.h, MMT_IOC_PMO_CREATE) */
#define FZ_READ_ERRS	EPERM, EBADMSG, EFAULT, EINVAL, ENOMEM, EAGAIN
#define FZ_WRITE_ERRS	EPERM, EBADMSG, EOVERFLOW, EFAULT, EINVAL, ENOMEM, \
			EAGAIN, ENOSPC, EUCLEAN, EINTR

static const struct fz_doc fz_doc[C_NR] = {
	[C_QUERY] = { "QUERY", FZ_KIND(K_DEV),
		{ EFAULT, EINVAL, E2BIG } },
	[C_CREATE] = { "PMO_CREATE", FZ_KIND(K_DEV),
		{ EFAULT, EINVAL, E2BIG, ENOMEM, ENOSPC, EMFILE } },
	[C_NODE_ID] = { "SET_NODE_ID", FZ_KIND(K_DEV),
		{ EFAULT, EINVAL, E2BIG, EPERM, EBUSY } },
	[C_SET_KEY] = { "PMO_SET_KEY", FZ_KIND(K_PMO),
		{ EFAULT, E2BIG, EINVAL, EBUSY, ENOTTY, ENOMEM, EOVERFLOW,
		  EINTR } },
	[C_COUNTER] = { "PMO_SET_ROOT_COUNTER", FZ_KIND(K_PMO),
		{ EFAULT, E2BIG, EINVAL, EPERM, EBUSY, EUCLEAN } },
	[C_INFO] = { "PMO_INFO", FZ_KIND(K_PMO),
		{ EFAULT, E2BIG, EINVAL, ENOMEM } },
	[C_INVALIDATE] = { "PMO_INVALIDATE", FZ_KIND(K_PMO),
		{ EINVAL, EBUSY } },
	[C_DELEGATE] = { "PMO_DELEGATE_LOCAL", FZ_KIND(K_PMO),
		{ EFAULT, E2BIG, EINVAL, EBADF, ENOTTY, EMEDIUMTYPE, EBUSY,
		  EPERM, EBADMSG, ESTALE, EILSEQ, ENOMEM, EOVERFLOW,
		  EUCLEAN } },
	[C_DEBUG] = { "PMO_DEBUG", FZ_KIND(K_PMO),
		{ EFAULT, E2BIG, EINVAL, EPERM, ENOTTY } },
	[C_LISTEN] = { "LISTEN", FZ_KIND(K_DEV),
		{ EFAULT, E2BIG, EINVAL, EADDRINUSE, EADDRNOTAVAIL,
		  EOPNOTSUPP, EMFILE, ENOMEM } },
	[C_CONNECT] = { "CONNECT", FZ_KIND(K_DEV),
		{ EFAULT, E2BIG, EINVAL, ECONNREFUSED, ECONNRESET,
		  EHOSTUNREACH, ENETUNREACH, ETIMEDOUT, EPROTO, EINTR,
		  EOPNOTSUPP, EMFILE, ENFILE, ENOMEM, EKEYREJECTED,
		  EKEYEXPIRED, ENOKEY } },
	[C_ACCEPT] = { "ACCEPT", FZ_KIND(K_LISTEN),
		{ EFAULT, E2BIG, EINVAL, ETIMEDOUT, EINTR, ECONNABORTED,
		  ENOTTY, EKEYREJECTED, EKEYEXPIRED, ENOKEY, ECONNREFUSED,
		  EPROTO, ECONNRESET, ENOMEM, EMFILE, ENFILE } },
	[C_SEND] = { "SEND", FZ_KIND(K_CONN),
		{ EFAULT, E2BIG, EINVAL, EBADF, ENOTTY, EPERM, ENOKEY,
		  EOVERFLOW, EMEDIUMTYPE, EPROTO, ECONNRESET, ETIMEDOUT,
		  EINTR, EBADMSG, ESTALE, EILSEQ, EMSGSIZE, EPROTONOSUPPORT,
		  EXDEV, ENOSPC, EREMOTEIO, ENOMEM, ENOENT, EUCLEAN, EBUSY } },
	[C_RECV] = { "RECV", FZ_KIND(K_CONN),
		{ EFAULT, E2BIG, EINVAL, EBADF, ENOTTY, EBUSY, EPERM, ENOKEY,
		  EMEDIUMTYPE, EPROTO, EBADMSG, ESTALE, EILSEQ, EMSGSIZE,
		  EPROTONOSUPPORT, ENOSPC, EXDEV, ECANCELED, ENOMEM, ENOENT,
		  EOVERFLOW, ECONNRESET, ETIMEDOUT, EINTR } },
	[C_CONN_KEY] = { "CONN_SET_KEY", FZ_KIND(K_CONN),
		{ EFAULT, E2BIG, EINVAL, EBUSY, ENOMEM, ENOTTY } },
	[C_MIG_SEND] = { "MIGRATE_SEND", FZ_KIND(K_CONN),
		{ EFAULT, E2BIG, EINVAL, EBADF, ENOTTY, EPERM, EBUSY, EUCLEAN,
		  EBADMSG, ESTALE, EILSEQ, EMSGSIZE, EPROTO, EPROTONOSUPPORT,
		  EMEDIUMTYPE, EXDEV, EREMOTEIO, ECANCELED, EINTR, ECONNRESET,
		  ETIMEDOUT, ETIME, EOVERFLOW, ENOMEM } },
	[C_MIG_RECV] = { "MIGRATE_RECV", FZ_KIND(K_CONN),
		{ EFAULT, E2BIG, EINVAL, EBADF, ENOTTY, EPERM, EBUSY,
		  EMEDIUMTYPE, EPROTO, ESTALE, EBADMSG, EILSEQ, EMSGSIZE,
		  EPROTONOSUPPORT, EXDEV, ENOSPC, ECANCELED, ECONNRESET,
		  ETIMEDOUT, EINTR, ENOMEM } },
	[C_MIG_INFO] = { "MIGRATE_INFO", FZ_KIND(K_CONN),
		{ EFAULT, E2BIG, EINVAL, ENOENT } },
	[C_MIG_FINISH] = { "MIGRATE_FINISH", FZ_KIND(K_CONN),
		{ EINVAL, ENOENT } },
	[C_MIG_ABORT] = { "MIGRATE_ABORT", FZ_KIND(K_CONN),
		{ EINVAL, ENOENT } },
	[C_MIG_RESOLVE] = { "PMO_MIG_RESOLVE", FZ_KIND(K_PMO),
		{ EINVAL, ENOENT, ENOTCONN, ESTALE, EBUSY, EINTR } },
	[C_MIG_RES] = { "MIGRATE_RESOLVE", FZ_KIND(K_CONN),
		{ EFAULT, E2BIG, EINVAL, EBADF, ENOTTY, ENOENT, ENODATA,
		  EINPROGRESS, ETIMEDOUT, ECONNRESET, EKEYEXPIRED,
		  EKEYREJECTED, EINTR, ENOMEM } },
	[C_ATT_AUTH] = { "ATTEST_SET_AUTHORITY", FZ_KIND(K_DEV),
		{ EFAULT, EINVAL, E2BIG, EPERM, EBUSY, EBADMSG, ENOPKG, ENOMEM,
		  EOPNOTSUPP } },
	[C_ATT_CRED] = { "ATTEST_SET_CRED", FZ_KIND(K_DEV),
		{ EFAULT, EINVAL, E2BIG, EPERM, ENOKEY, EKEYREJECTED,
		  EKEYEXPIRED, ESTALE, ENOMEM, EOPNOTSUPP } },
	[C_ATT_INFO] = { "ATTEST_INFO", FZ_KIND(K_DEV),
		{ EFAULT, EINVAL, E2BIG, EOPNOTSUPP } },
	[C_CKPT] = { "PMO_CHECKPOINT", FZ_KIND(K_PMO),
		{ EFAULT, E2BIG, EINVAL, EPERM, EBUSY, EUCLEAN, EBADMSG,
		  EOVERFLOW, ENOSPC, ENOMEM, EINTR } },
	[C_RESTORE] = { "RESTORE", FZ_KIND(K_DEV),
		{ EFAULT, E2BIG, EINVAL, EPERM, ESTALE, EBUSY, EBADMSG, EILSEQ,
		  EMSGSIZE, EPROTO, EPROTONOSUPPORT, EMEDIUMTYPE, EXDEV,
		  ENOMEM, ENOSPC, EMFILE, EINTR } },
	[C_KEY_AGREE] = { "CONN_KEY_AGREE", FZ_KIND(K_CONN),
		{ EFAULT, E2BIG, EINVAL, EBADF, ENOTTY, ENOKEY, EBUSY,
		  EKEYREJECTED, EPROTO, ECONNRESET, ETIMEDOUT, EINTR, ENOMEM,
		  EOVERFLOW } },
	/* ioctl type 0xB7, a number or size no command has: ENOTTY anywhere */
	[C_UNKNOWN] = { "unknown command", 0, { ENOTTY } },
	[C_READ] = { "read", FZ_KIND(K_PMO), { FZ_READ_ERRS } },
	[C_WRITE] = { "write", FZ_KIND(K_PMO), { FZ_WRITE_ERRS } },
	[C_PREAD] = { "pread", FZ_KIND(K_PMO), { FZ_READ_ERRS } },
	[C_PWRITE] = { "pwrite", FZ_KIND(K_PMO), { FZ_WRITE_ERRS } },
	/* flags other than 0 and RWF_NOWAIT: the VFS's EOPNOTSUPP too */
	[C_PREADV2] = { "preadv2", FZ_KIND(K_PMO), { FZ_READ_ERRS } },
	[C_PWRITEV2] = { "pwritev2", FZ_KIND(K_PMO), { FZ_WRITE_ERRS } },
	/* fixed_size_llseek(): a bad whence or offset; SEEK_DATA past end */
	[C_LSEEK] = { "lseek", FZ_KIND(K_PMO), { EINVAL, ENXIO } },
	/* io_uring adds ECANCELED (ring torn down) and EAGAIN (RWF_NOWAIT) */
	[C_UR_READ] = { "io_uring read", FZ_KIND(K_PMO),
		{ FZ_READ_ERRS, ECANCELED, EOPNOTSUPP } },
	[C_UR_WRITE] = { "io_uring write", FZ_KIND(K_PMO),
		{ FZ_WRITE_ERRS, ECANCELED, EOPNOTSUPP } },
	/* the VFS's own calls: only a racy or bad fd may fail them */
	[C_CLOSE] = { "close", FZ_ANY, { 0 } },
	[C_DUP] = { "dup", FZ_ANY, { EMFILE } },
	[C_DUP2] = { "dup2", FZ_ANY, { EMFILE, EBUSY } },
	[C_SENDFD] = { "sendmsg SCM_RIGHTS", FZ_ANY,
		{ EAGAIN, ENOBUFS, ETOOMANYREFS, ENOMEM } },
	[C_RECVFD] = { "recvmsg SCM_RIGHTS", FZ_ANY, { EAGAIN, EMFILE } },
};

#endif /* FUZZ_ERRNOS_H */
