/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libmmt.h - a small C library over the /dev/mmt ioctls (uapi/mmt.h)
 *
 * Thin wrappers: each function fills in the size field of the ioctl struct
 * (the *_SIZE_VER0 of the header this library was built with, which equals
 * sizeof), zeroes the reserved fields, issues one system call (or a loop of
 * them for the *_all() helpers) and converts the result.
 *
 * Return convention (errno style): every function returns 0 (or a file
 * descriptor, or a byte count, where it says so) on success and a negative
 * errno value on failure, e.g. -EBADMSG.  errno is also left set to the
 * positive value.  Nothing is printed.  mmtu_strerror() gives the meaning an
 * errno has for the MMT interface.  All functions are thread-safe (they keep
 * no state).
 *
 * The errors each call can return are the ones uapi/mmt.h documents for the
 * ioctl; they are repeated here in short.  EFAULT, E2BIG and EINVAL on the
 * struct itself cannot come from these wrappers except through a bad
 * pointer the caller passed, or a module built from a different header.
 *
 * Link with build/libmmt.a or build/libmmt.so (-lmmt); include "libmmt.h",
 * which includes "mmt.h" (add -Iuapi -Itools/lib).
 */
#ifndef LIBMMT_H
#define LIBMMT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "mmt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Path of the device node. */
#define MMTU_DEV_PATH		"/dev/mmt"

/* Key sizes accepted by MMT_IOC_PMO_SET_KEY, bytes. */
#define MMTU_KEY_LEN_128	16
#define MMTU_KEY_LEN_256	32

/**
 * mmtu_open() - open /dev/mmt
 *
 * Opens MMTU_DEV_PATH with O_RDWR and O_CLOEXEC.  The fd is the client
 * context on which PMOs are created; close it with close(2).  PMO fds stay
 * valid after it is closed.
 *
 * Return: the file descriptor (>= 0); -ENOENT if the module is not loaded
 * (no device node), -EACCES without permission, other open(2) errors.
 */
int mmtu_open(void);

/**
 * mmtu_open_path() - open a device node other than /dev/mmt
 * @path: path of the device node
 *
 * Return: as mmtu_open().
 */
int mmtu_open_path(const char *path);

/**
 * mmtu_query() - MMT_IOC_QUERY: version and features of the running module
 * @devfd: /dev/mmt fd
 * @q: (out) the reply; zeroed first, so on failure it is all zero
 *
 * Return: 0; -EBADF (bad @devfd), -ENOTTY (@devfd is not /dev/mmt),
 * -EFAULT (@q not writable).
 */
int mmtu_query(int devfd, struct mmt_query *q);

/**
 * mmtu_set_node_id() - MMT_IOC_SET_NODE_ID: set this node's id
 * @devfd: /dev/mmt fd
 * @node_id: 1..65535; GUAs made afterwards carry it
 *
 * Return: 0; -EINVAL (@node_id out of range), -EPERM (no CAP_SYS_ADMIN),
 * -EBADF, -ENOTTY.
 */
int mmtu_set_node_id(int devfd, unsigned int node_id);

/**
 * mmtu_geometry_closure_bytes() - data bytes per closure of a geometry
 * @g: the geometry (zero fields mean the defaults), or NULL for the defaults
 *
 * Computes what the module reports as closure_bytes, with the rules of
 * uapi/mmt.h: levels 1..4 (0: 3), block 2^6..2^12 bytes (0: 64), log2
 * arity 1..6 for each of the first @levels levels, zero past them (all
 * zero: 6, 5, 4, 4), reserved bytes zero, at most 2^20 blocks.  Use
 * it to round a PMO size up to a multiple of the closure size.  The module
 * remains the authority: it may reject what this accepts.
 *
 * Return: the closure size in bytes, or 0 if @g is out of range.
 */
uint64_t mmtu_geometry_closure_bytes(const struct mmt_geometry *g);

/**
 * mmtu_pmo_create() - MMT_IOC_PMO_CREATE: allocate a PMO
 * @devfd: /dev/mmt fd
 * @bytes: data size in bytes, a non-zero multiple of the closure size
 * @geom: MMT shape (zero fields: defaults), or NULL for the defaults
 * @flags: MMT_PMO_* (MMT_PMO_CLOEXEC)
 * @out: (out, optional) the kernel's reply: closure_bytes, meta_bytes, fd
 *
 * Every MMT of the new PMO is INVALID until mmtu_pmo_set_key().  The memory
 * is charged to RLIMIT_MEMLOCK (unless CAP_IPC_LOCK) and freed when the
 * last reference to the fd goes.
 *
 * Return: the PMO fd (>= 0); -EINVAL (bad geometry, @bytes zero or not a
 * multiple of the closure size, unknown @flags), -ENOMEM (RLIMIT_MEMLOCK
 * exceeded or out of memory), -ENOSPC (module max_pmo_mib limit), -EMFILE
 * (no free fd), -EBADF, -ENOTTY.
 */
int mmtu_pmo_create(int devfd, uint64_t bytes, const struct mmt_geometry *geom,
		    uint64_t flags, struct mmt_pmo_create *out);

/**
 * mmtu_pmo_set_key() - MMT_IOC_PMO_SET_KEY: key a PMO
 * @pmofd: PMO fd
 * @key: the MMT key, @key_len bytes (the kernel keeps only derived subkeys)
 * @key_len: MMTU_KEY_LEN_128 or MMTU_KEY_LEN_256
 * @flags: 0: format every MMT to zero plaintext and make it VALID;
 *	MMT_KEY_RECEIVE: make every MMT WAITING (a delegation receiver)
 *
 * The library's copy of the key (on its stack) is wiped before returning.
 *
 * Return: 0; -EINVAL (@key_len not 16 or 32, unknown @flags), -EBUSY (the
 * PMO already has a key; mmtu_pmo_invalidate() resets it), -ENOTTY (not a
 * PMO), -ENOMEM, -EBADF.
 */
int mmtu_pmo_set_key(int pmofd, const void *key, size_t key_len,
		     uint64_t flags);

/**
 * mmtu_pmo_set_root_counter() - MMT_IOC_PMO_SET_ROOT_COUNTER
 * @pmofd: PMO fd
 * @counter: VALID PMO: the root counter every MMT counts up from (it may
 *	only grow); WAITING PMO: the minimum a received closure's root counter
 *	must exceed (replay protection).  Below 2^38.
 *
 * Return: 0; -EINVAL (a VALID MMT's counter would go down, or @counter is
 * not below 2^38), -EPERM (no key set, or an MMT is SENDING), -EBUSY (a
 * live migration runs from or into the PMO), -EUCLEAN (a migration of
 * unknown outcome: mmtu_pmo_mig_resolve()), -EBADF, -ENOTTY.
 */
int mmtu_pmo_set_root_counter(int pmofd, uint64_t counter);

/**
 * mmtu_pmo_info() - MMT_IOC_PMO_INFO: geometry, metadata and MMT states
 * @pmofd: PMO fd
 * @info: (out) the reply (zeroed first)
 * @mmts: (out, optional) room for @count per-MMT entries, or NULL
 * @count: entries @mmts has room for (0 if @mmts is NULL)
 *
 * On success @info->mmt_count is min(@count, @info->closures), the number
 * of entries written.
 *
 * Return: 0; -EFAULT (bad @mmts), -EBADF, -ENOTTY.
 */
int mmtu_pmo_info(int pmofd, struct mmt_pmo_info *info,
		  struct mmt_mmt_info *mmts, uint32_t count);

/**
 * mmtu_pmo_invalidate() - MMT_IOC_PMO_INVALIDATE: wipe data, metadata, key
 * @pmofd: PMO fd
 *
 * Every MMT becomes INVALID; the PMO can be keyed again.
 *
 * Return: 0; -EBUSY (an MMT is SENDING), -EBADF, -ENOTTY.
 */
int mmtu_pmo_invalidate(int pmofd);

/**
 * mmtu_pmo_mig_resolve() - MMT_IOC_PMO_MIG_RESOLVE: take back a PMO
 *	checkpointed with MMT_CKPT_PENDING whose dump failed
 * @pmofd: PMO fd
 *
 * Its image can no longer be restored afterwards.  A migration of unknown
 * outcome, or a transfer's, is resolved on the destination's statement
 * (mmtu_migrate_resolve()), or by force (mmtu_pmo_mig_resolve_force()).
 *
 * Return: 0; -ENOENT (nothing to resolve), -ENOTCONN (a migration's
 * outcome: ask the destination), -ESTALE (the pending checkpoint was
 * restored: invalidate the PMO), -EBUSY (a restore of it runs), -EINTR,
 * -EBADF, -ENOTTY.
 */
int mmtu_pmo_mig_resolve(int pmofd);

/**
 * mmtu_pmo_mig_resolve_force() - MMT_IOC_PMO_MIG_RESOLVE with
 *	MMT_MIG_RESOLVE_FORCE: take back a PMO whose migration's or
 *	transfer's outcome is unknown on the owner's word
 * @pmofd: PMO fd
 *
 * For a destination gone for good: the PMO is writable again under fresh
 * GUAs, but its data forks if the destination did commit.  Counted and
 * logged by the module.
 *
 * Return: 0 or mmtu_pmo_mig_resolve()'s errors but -ENOTCONN.
 */
int mmtu_pmo_mig_resolve_force(int pmofd);

/**
 * mmtu_pmo_checkpoint() - MMT_IOC_PMO_CHECKPOINT: hand a PMO over to a
 *	checkpoint image (docs/CRIU.md; CAP_CHECKPOINT_RESTORE or
 *	CAP_SYS_ADMIN)
 * @pmofd: PMO fd: keyed, every MMT VALID and writable
 * @flags: 0 (the PMO is handed over at once: INVALID) or MMT_CKPT_PENDING
 *	(read-only until mmtu_pmo_invalidate(), the image kept, or
 *	mmtu_pmo_mig_resolve(), the image void)
 * @buf: (out) room for closures x closure length bytes: the closures; or
 *	NULL to learn the sizes only (nothing changes)
 * @buf_len: bytes at @buf (exactly closures x closure length), 0 with NULL
 * @handle: (out, optional) MMT_CKPT_HANDLE_BYTES: the one-time handle for
 *	mmtu_restore()
 * @closures: (out, optional) closures of the PMO
 * @closure_len: (out, optional) bytes of one closure
 *
 * On success every MMT of the PMO is INVALID: the image is the one copy.
 *
 * Return: 0; -EPERM (no capability; no key, an MMT not VALID or
 * read-only), -EINVAL (@buf_len), -EBUSY, -EUCLEAN, -EBADMSG, -EOVERFLOW,
 * -ENOSPC (too many checkpoints wait), -ENOMEM, -EFAULT, -EINTR, -EBADF,
 * -ENOTTY; on error the PMO is unchanged.
 */
int mmtu_pmo_checkpoint(int pmofd, uint64_t flags, void *buf,
			uint64_t buf_len, uint8_t *handle, uint32_t *closures,
			uint64_t *closure_len);

/**
 * mmtu_restore() - MMT_IOC_RESTORE: a new PMO from a checkpoint image,
 *	once (docs/CRIU.md; CAP_CHECKPOINT_RESTORE or CAP_SYS_ADMIN)
 * @devfd: /dev/mmt fd
 * @handle: MMT_CKPT_HANDLE_BYTES from mmtu_pmo_checkpoint()
 * @buf: the closures mmtu_pmo_checkpoint() wrote (checked in full)
 * @buf_len: bytes at @buf
 * @flags: MMT_PMO_CLOEXEC or 0
 *
 * Return: the new PMO's fd (VALID, writable, the checkpointed bytes);
 * -ESTALE (restored already, made before the module was loaded, or not
 * of this node), -EBADMSG (a tampered image), -EBUSY (another restore of
 * it runs), -EINVAL, -EPERM, -EXDEV, -ENOMEM, -ENOSPC, -EMFILE, -EFAULT,
 * -EINTR, or another rejection of a closure; on error nothing is made
 * and the image can still be restored.
 */
int mmtu_restore(int devfd, const uint8_t *handle, const void *buf,
		 uint64_t buf_len, uint64_t flags);

/**
 * mmtu_pmo_delegate_local() - MMT_IOC_PMO_DELEGATE_LOCAL
 * @srcfd: the sending PMO's fd (VALID, writable)
 * @dstfd: the receiving PMO's fd: same geometry and size, same key, every
 *	MMT WAITING (keyed with MMT_KEY_RECEIVE)
 * @flags: MMT_DELEGATE_COPY (default: transfer), MMT_DELEGATE_EAGER
 * @closures: (out, optional) closures delivered, also on failure (earlier
 *	closures stay delivered)
 *
 * After a transfer the sender's MMTs are INVALID and the receiver's VALID;
 * after a copy both are VALID and the receiver's are read-only.  A rejected
 * closure leaves both as they were, but for the sender's GUA in transfer
 * mode (re-encrypted under a fresh one, or flagged MMT_INFO_REGUA_DUE when
 * its memory fails verification: mmt(4), "A transfer that fails").
 *
 * Return: 0; -EBADMSG (authentication failed: another key, tampering; or
 * the sender's MMT failed verification as it was re-encrypted),
 * -ESTALE (replay: root counter not above the receiver's minimum), -EILSEQ
 * (reorder), -EMEDIUMTYPE (geometry or size differ), -EPERM (sender not
 * VALID or read-only, receiver not WAITING, or invalidated during the
 * delegation), -EBUSY (another receive is filling @dstfd; nothing
 * changed), -EINVAL (@dstfd is @srcfd, bad @flags), -EBADF (@srcfd or
 * @dstfd not open), -ENOTTY (not a PMO).
 */
int mmtu_pmo_delegate_local(int srcfd, int dstfd, uint64_t flags,
			    uint64_t *closures);

/**
 * mmtu_pmo_debug() - MMT_IOC_PMO_DEBUG: flip bits of the backing memory
 * @pmofd: PMO fd
 * @region: MMT_DEBUG_DATA (ciphertext), MMT_DEBUG_MACS, MMT_DEBUG_NODES
 * @closure: which MMT (0-based)
 * @offset: byte offset in the region of that MMT
 * @xor_mask: non-zero byte XORed into the backing byte; a second call with
 *	the same mask restores it
 *
 * Test builds only (MMT_FEAT_DEBUG); needs CAP_SYS_ADMIN.
 *
 * Return: 0; -ENOTTY (module built without MMT_DEBUG=1, or not a PMO),
 * -EINVAL (bad region, closure, offset or zero mask), -EPERM, -EBADF.
 */
int mmtu_pmo_debug(int pmofd, uint32_t region, uint32_t closure,
		   uint64_t offset, uint8_t xor_mask);

/**
 * mmtu_pmo_write_all() - pwrite() a whole buffer into a PMO
 * @pmofd: PMO fd
 * @buf: plaintext, @len bytes
 * @len: bytes to write
 * @offset: byte offset in the PMO
 *
 * Loops over pwrite(2), continuing after short counts and EINTR.
 *
 * Return: @len (as ssize_t) on success; -errno of the failing pwrite()
 * (bytes before it are written), e.g. -EPERM (MMT not VALID or read-only),
 * -EBADMSG (the path to the root failed verification); -ENOSPC if pwrite()
 * returned 0 (the end of the PMO).
 */
ssize_t mmtu_pmo_write_all(int pmofd, const void *buf, size_t len,
			   uint64_t offset);

/**
 * mmtu_pmo_read_all() - pread() into a whole buffer from a PMO
 * @pmofd: PMO fd
 * @buf: (out) plaintext, room for @len bytes
 * @len: bytes to read
 * @offset: byte offset in the PMO
 *
 * Loops over pread(2), continuing after short counts and EINTR, and stops
 * at the end of the PMO (pread() returning 0).
 *
 * Return: the bytes read (less than @len only at the end of the PMO);
 * -errno of the failing pread(), e.g. -EBADMSG (integrity check failed),
 * -EPERM (MMT not readable in its state).
 */
ssize_t mmtu_pmo_read_all(int pmofd, void *buf, size_t len, uint64_t offset);

/**
 * mmtu_send_fd() - pass a file descriptor over a unix socket (SCM_RIGHTS)
 * @sock: connected AF_UNIX socket
 * @fd: descriptor to pass (e.g. a PMO fd); the caller keeps its own copy
 *
 * Sends one byte of data carrying @fd as ancillary data.
 *
 * Return: 0; -errno of sendmsg(2).
 */
int mmtu_send_fd(int sock, int fd);

/**
 * mmtu_recv_fd() - receive a file descriptor sent by mmtu_send_fd()
 * @sock: connected AF_UNIX socket
 *
 * The new descriptor is O_CLOEXEC.
 *
 * Return: the received fd (>= 0); -ECONNRESET if the peer closed without
 * sending, -EBADMSG if a message came without exactly one fd, -errno of
 * recvmsg(2).
 */
int mmtu_recv_fd(int sock);

/**
 * mmtu_key_from_hex() - an MMT key from hex digits
 * @s: the digits (either case)
 * @len: characters of @s to read: 32 (AES-128) or 64 (AES-256)
 * @key: (out) room for 32 bytes; @len / 2 bytes are written
 * @bad: (out, may be NULL) on -EILSEQ, the index in @s of the first
 *	character that is not a hex digit
 *
 * Return: the key length in bytes (16 or 32); -EINVAL if @len is not 32
 * or 64 (nothing written); -EILSEQ if a character is not a hex digit
 * (@key partly written).  errno is set on failure.
 */
int mmtu_key_from_hex(const char *s, size_t len, uint8_t *key, size_t *bad);

/**
 * mmtu_parse_addr() - fill a struct mmt_conn_addr from an address and port
 * @host: IPv4 ("10.0.0.2") or IPv6 ("fd00::2", "fe80::1%eth0") literal;
 *	NULL or "" gives the IPv4 any address (listen on every address),
 *	"::" the IPv6 any address.  Host names are not resolved.
 * @port: port, 1..65535
 * @addr: (out) the address for mmtu_listen() or mmtu_connect(); zeroed first
 *
 * An IPv6 scope after '%' may be an interface name or index; it sets
 * @addr->scope_id (link-local addresses need it).
 *
 * Return: 0; -EINVAL (@port out of range, not an address literal, unknown
 * scope).
 */
int mmtu_parse_addr(const char *host, unsigned int port,
		    struct mmt_conn_addr *addr);

/**
 * mmtu_listen() - MMT_IOC_LISTEN: listen for connections (rdma_cm)
 * @devfd: /dev/mmt fd
 * @addr: local address and port (from mmtu_parse_addr())
 * @backlog: connect requests queued before mmtu_accept(), 1..128; 0 = 16
 * @flags: MMT_CONN_CLOEXEC or 0
 *
 * The listener fd works until it is closed (connections not yet accepted
 * are dropped) or its RDMA device goes away (poll() then reports POLLHUP);
 * poll() reports POLLIN when a connection is ready for mmtu_accept().
 *
 * Return: the listener fd (>= 0); -EADDRINUSE (port taken),
 * -EADDRNOTAVAIL (no RDMA device for that address), -EOPNOTSUPP (module
 * built without RDMA: no MMT_FEAT_RDMA), -EINVAL (family, port 0,
 * @backlog, @flags), -EMFILE, -ENOMEM, -EBADF, -ENOTTY.
 */
int mmtu_listen(int devfd, const struct mmt_conn_addr *addr,
		unsigned int backlog, uint32_t flags);

/**
 * mmtu_accept() - MMT_IOC_ACCEPT: the next connection on a listener
 * @lfd: listener fd from mmtu_listen()
 * @timeout_ms: how long to wait, 1..600000 ms; 0 = 10000
 * @flags: MMT_CONN_CLOEXEC or 0
 * @out: (out, optional) the kernel's reply: the peer's address in
 *	@out->addr and its node id in @out->peer_node
 *
 * Return: the connection fd (>= 0); -ETIMEDOUT (nobody connected in
 * @timeout_ms), -EINTR (signal), -ECONNABORTED (the handshake failed, or
 * the device went away), -ENOTTY (not a listener fd), -EINVAL, -EBADF.
 */
int mmtu_accept(int lfd, unsigned int timeout_ms, uint32_t flags,
		struct mmt_connect *out);

/**
 * mmtu_connect() - MMT_IOC_CONNECT: connect to a listening peer
 * @devfd: /dev/mmt fd
 * @addr: the peer's address and port (from mmtu_parse_addr())
 * @timeout_ms: how long to wait, 1..600000 ms; 0 = 10000
 * @flags: MMT_CONN_CLOEXEC or 0
 * @out: (out, optional) the kernel's reply (@out->peer_node: the peer's
 *	node id from its hello)
 *
 * The RDMA device is the one the route to @addr goes through (rdma_cm).
 *
 * Return: the connection fd (>= 0); -ECONNREFUSED (nobody listens there,
 * the peer's backlog is full, or it rejected us), -ECONNRESET (reset
 * during the handshake: the peer dropped it, or the device went away),
 * -EHOSTUNREACH / -ENETUNREACH (no address, route or RDMA device),
 * -ETIMEDOUT, -EPROTO (the peer speaks another protocol version), -EINTR,
 * -EOPNOTSUPP (no RDMA in the module, or the device lacks fast memory
 * registration), -EINVAL, -EBADF, -ENOTTY.
 */
int mmtu_connect(int devfd, const struct mmt_conn_addr *addr,
		 unsigned int timeout_ms, uint32_t flags,
		 struct mmt_connect *out);

/**
 * mmtu_conn_set_key() - MMT_IOC_CONN_SET_KEY: the connection's key for the
 * secure channel on plain PMOs (both ends set the same one, once)
 * @connfd: connection fd
 * @key: the key
 * @key_len: 16 or 32 bytes
 *
 * The copy passed to the kernel is wiped.
 *
 * Return: 0; -EBUSY (the connection has a key), -EINVAL, -ENOMEM, -ENOTTY
 * (not a connection fd).
 */
int mmtu_conn_set_key(int connfd, const void *key, size_t key_len);

/**
 * mmtu_conn_key_agree() - MMT_IOC_CONN_KEY_AGREE: agree on a fresh MMT key
 * with the peer of an attested connection and key @pmofd with it; the key
 * never reaches user space (docs/ATTESTATION.md, "MMT key agreement")
 * @connfd: a connection made in attested mode
 * @pmofd: the PMO to key (it must have no key)
 * @key_len: 16 or 32 bytes; the peer asks for the same
 * @flags: MMT_KEY_RECEIVE (every MMT WAITING) or 0 (VALID)
 * @timeout_ms: wait for each message of the peer; 0 = 10000
 * @seq: (out, may be NULL) the agreement's number on the connection
 *
 * Both ends call it, in the same order as their other agreements on the
 * connection.
 *
 * Return: 0; -ENOKEY (not an attested connection), -EBUSY (the PMO has a
 * key), -EKEYREJECTED (a share changed on the way), -EPROTO,
 * -ECONNRESET, -ETIMEDOUT, -EINTR (these end the connection), -EINVAL,
 * -EBADF, -ENOTTY, -ENOMEM, -EOVERFLOW.
 */
int mmtu_conn_key_agree(int connfd, int pmofd, size_t key_len,
			uint64_t flags, unsigned int timeout_ms,
			uint64_t *seq);

/**
 * mmtu_send() - MMT_IOC_SEND: send a PMO to the peer over a channel
 * @connfd: connection fd (mmtu_connect() or mmtu_accept())
 * @pmofd: the PMO to send: MMT channel: keyed, every MMT VALID and
 *	writable; plain channel: a plain PMO (no key); secure channel: a
 *	plain PMO (the connection's key, mmtu_conn_set_key()) or a keyed one
 *	with every MMT VALID
 * @channel: MMT_CHANNEL_MMT (delegation), MMT_CHANNEL_SECURE (AES-GCM) or
 *	MMT_CHANNEL_PLAIN (raw RDMA write of plain memory, no protection);
 *	the receiver must name the same one
 * @flags: MMT_XFER_COPY (copy mode; default: transfer) or 0
 * @timeout_ms: how long to wait for each answer of the peer (grant, ack),
 *	1..600000 ms; 0 = 10000
 * @out: (out, optional) the kernel's reply, also on failure: @out->bytes
 *	and @out->closures delivered and accepted, @out->ns the wall time in
 *	the kernel from the offer to the last ack, in nanoseconds
 *
 * MMT channel, transfer mode: every MMT acked goes INVALID (the receiver
 * owns it); copy mode: back to VALID.  Secure and plain channels leave the
 * PMO as it was.
 *
 * Return: 0; -EOPNOTSUPP (the channel is not implemented by this module),
 * -EPERM (an MMT not VALID, or read-only; the MMT channel on a plain PMO,
 * the plain channel on a keyed one), -ENOKEY (secure channel, plain PMO,
 * no connection key), -EMEDIUMTYPE (the receiver's PMO has another
 * geometry or size, or is of the other kind on the secure channel),
 * -EPROTO (the receiver named another channel), -EBADMSG / -ESTALE /
 * -EILSEQ / -EMSGSIZE / -EXDEV (the receiver rejected a closure; that MMT
 * is VALID again; the connection stays usable; -EBADMSG also when this
 * keyed PMO fails verification as it is read for the secure channel, the
 * receiver then gets -ECANCELED), -EREMOTEIO (the receiver failed on its
 * side, e.g. its PMO was invalidated during the receive; otherwise as a
 * rejection), -ECONNRESET / -ETIMEDOUT / -EINTR (the
 * connection is gone; MMTs
 * not acked are VALID again with their data), -E2BIG (2^24 closures or
 * more), -EINVAL, -EBADF, -ENOTTY.
 */
int mmtu_send(int connfd, int pmofd, uint32_t channel, uint64_t flags,
	      unsigned int timeout_ms, struct mmt_xfer *out);

/**
 * mmtu_recv() - MMT_IOC_RECV: receive a PMO from the peer
 * @connfd: connection fd
 * @pmofd: the PMO to receive into, with the sender's geometry and size:
 *	MMT channel: keyed with MMT_KEY_RECEIVE (every MMT WAITING) under the
 *	sender's key; plain channel: a plain PMO (no key; the bytes land in
 *	its memory); secure channel: a plain PMO (the connection's key) or a
 *	keyed one, VALID and writable (its data is overwritten through the
 *	controller)
 * @channel: MMT_CHANNEL_*, as the sender names it
 * @flags: MMT_XFER_EAGER (verify every closure on receipt; default: lazily
 *	on access) or 0
 * @timeout_ms: how long to wait for the offer and then for each closure,
 *	1..600000 ms; 0 = 10000
 * @out: (out, optional) the kernel's reply, also on failure: @out->bytes
 *	and @out->closures accepted, @out->ns the wall time from the offer's
 *	arrival (or from this call, if it was already there) to the last ack
 *
 * poll() on @connfd reports POLLIN when the peer has a PMO to send.
 *
 * Return: 0; -EOPNOTSUPP (channel not implemented), -EPERM (the PMO is not
 * WAITING, or not VALID and writable), -EMEDIUMTYPE (the sender's PMO has
 * another geometry or size), -EPROTO (the sender named another channel),
 * -EBADMSG (tamper or another key), -ESTALE (replay: root counter not
 * above the minimum), -EILSEQ (reorder), -EMSGSIZE, -EPROTONOSUPPORT,
 * -EXDEV (a closure of another connection or sender), -ECANCELED (the sender
 * stopped early), -ETIMEDOUT / -EINTR (before the offer: harmless; later:
 * the connection is gone), -ECONNRESET, -E2BIG, -EINVAL, -EBADF, -ENOTTY.
 * The MMT that failed stays WAITING; earlier ones are VALID.
 */
int mmtu_recv(int connfd, int pmofd, uint32_t channel, uint64_t flags,
	      unsigned int timeout_ms, struct mmt_xfer *out);

/**
 * mmtu_migrate_send() - MMT_IOC_MIGRATE_SEND: migrate a PMO live to the
 * peer (docs/MIGRATION.md)
 * @connfd: connection fd; the peer runs mmtu_migrate_recv()
 * @pmofd: the PMO: keyed, every MMT VALID and writable; its owner may go
 *	on writing (pwrite() blocks during the handover and fails with
 *	EPERM once the PMO moved)
 * @downtime_limit_ms: hand over once the expected downtime is at most
 *	this, 1..600000; 0 = MMT_MIGRATE_DOWNTIME_MS (300)
 * @max_rounds: pre-copy rounds at most, 1..1000; 0 = MMT_MIGRATE_ROUNDS
 * @window: closures in flight, 1..MMT_MIGRATE_WINDOW_MAX; 0 =
 *	MMT_MIGRATE_WINDOW
 * @timeout_ms: how long to wait for each answer of the peer, and for the
 *	whole handover, 1..600000; 0 = 10000
 * @info: (out, optional) the final figures, also on failure (why
 *	pre-copy ended: @info->stop, mmtu_mig_stop_str(); the writers'
 *	throttle: @info->throttle_pct)
 *
 * Runs the whole migration: returns once the destination committed (every
 * MMT of @pmofd INVALID) or the migration failed (the PMO VALID with its
 * data; MMT_MIG_F_OUTCOME_UNKNOWN in @info if the destination may have
 * committed).  Another thread can follow it with mmtu_migrate_info() and
 * poll(POLLPRI), and end it with mmtu_migrate_finish() or
 * mmtu_migrate_abort().
 *
 * Return: 0; the negative errno of MMT_IOC_MIGRATE_SEND (uapi/mmt.h):
 * -EPERM, -EBUSY, -EBADMSG, -ESTALE, -EILSEQ, -EMEDIUMTYPE, -EPROTO,
 * -ECANCELED, -EINTR, -ETIME (the handover refused at the round limit:
 * the expected downtime stayed above the limit; the PMO stays writable
 * here and the connection up), -ECONNRESET, -ETIMEDOUT, -EOVERFLOW,
 * -E2BIG, -ENOMEM, -EOPNOTSUPP, -EINVAL, -EBADF, -ENOTTY.
 */
int mmtu_migrate_send(int connfd, int pmofd, unsigned int downtime_limit_ms,
		      unsigned int max_rounds, unsigned int window,
		      unsigned int timeout_ms, struct mmt_migrate_info *info);

/**
 * mmtu_migrate_recv() - MMT_IOC_MIGRATE_RECV: receive a live migration
 * @connfd: connection fd
 * @pmofd: the PMO to migrate into: the sender's geometry and size, keyed
 *	with its key and MMT_KEY_RECEIVE (every MMT WAITING)
 * @flags: MMT_MIGRATE_EAGER or 0
 * @window: the largest window taken, 1..MMT_MIGRATE_WINDOW_MAX; 0: any
 * @timeout_ms: how long to wait for the offer and each message, 1..600000;
 *	0 = 10000
 * @info: (out, optional) the final figures, also on failure
 *
 * Return: 0 (committed: every MMT VALID and writable); the negative errno
 * of MMT_IOC_MIGRATE_RECV (uapi/mmt.h): -EPERM, -EBUSY, -EMEDIUMTYPE,
 * -EPROTO, -EBADMSG, -ESTALE, -EILSEQ, -EXDEV, -ECANCELED, -ECONNRESET,
 * -ETIMEDOUT, -EINTR, -ENOMEM, -E2BIG, -EOPNOTSUPP, -EINVAL, -EBADF,
 * -ENOTTY.  On failure every MMT is WAITING.
 */
int mmtu_migrate_recv(int connfd, int pmofd, uint64_t flags,
		      unsigned int window, unsigned int timeout_ms,
		      struct mmt_migrate_info *info);

/**
 * mmtu_migrate_info() - MMT_IOC_MIGRATE_INFO: the figures of the
 * connection's last migration, live or final
 * @connfd: connection fd
 * @info: (out) the figures (round, dirty closures, bytes sent, expected
 *	downtime, total, setup and downtime in ns, peak extra memory)
 *
 * Marks them seen: poll() on @connfd reports POLLPRI again once they
 * change.
 *
 * Return: 0; -ENOENT (no migration on this connection yet), -EINVAL,
 * -EBADF, -ENOTTY.
 */
int mmtu_migrate_info(int connfd, struct mmt_migrate_info *info);

/**
 * mmtu_migrate_finish() - MMT_IOC_MIGRATE_FINISH: hand over now
 * @connfd: connection fd of a running mmtu_migrate_send()
 *
 * Return: 0; -ENOENT (no migration is being sent on it), -EBADF, -ENOTTY.
 */
int mmtu_migrate_finish(int connfd);

/**
 * mmtu_migrate_abort() - MMT_IOC_MIGRATE_ABORT: stop the running migration
 * @connfd: connection fd
 *
 * The running mmtu_migrate_send() or mmtu_migrate_recv() fails with
 * -ECANCELED; the source keeps its PMO, VALID and writable.
 *
 * Return: 0; -ENOENT (no migration runs on it), -EBADF, -ENOTTY.
 */
int mmtu_migrate_abort(int connfd);

/**
 * mmtu_migrate_resolve() - MMT_IOC_MIGRATE_RESOLVE: resolve a migration or
 *	transfer of unknown outcome on the destination's statement
 * @connfd: connection fd to the destination's node
 * @pmofd: the source PMO (MMT_PMO_INFO_MIG_UNKNOWN)
 * @timeout_ms: how long to wait for the statement; 0 = 10000
 * @outcome: (out, may be NULL) MMT_MIG_OUTCOME_* the destination stated
 *
 * Committed: every MMT of the PMO INVALID.  Aborted: writable again.
 * Ended (a transfer whose last verdicts were lost): the closures the
 * receiver took in INVALID, the rest writable again.
 *
 * Return: 0; -ENODATA (no record there), -EINPROGRESS (its receive still
 * runs), -ENOENT (nothing to resolve), -ETIMEDOUT, -ECONNRESET, -EINTR,
 * -EINVAL, -EBADF, -ENOTTY, -ENOMEM.
 */
int mmtu_migrate_resolve(int connfd, int pmofd, uint32_t timeout_ms,
			 uint32_t *outcome);

/**
 * mmtu_mig_phase_str() - name of an MMT_MIG_PHASE_* value
 * @phase: MMT_MIG_PHASE_NONE..MMT_MIG_PHASE_FAILED
 *
 * Return: "none", "setup", "precopy", "handover", "committed", "failed",
 * or "unknown".
 */
const char *mmtu_mig_phase_str(uint32_t phase);

/**
 * mmtu_mig_stop_str() - name of an MMT_MIG_STOP_* value: why pre-copy
 * ended (struct mmt_migrate_info @stop)
 * @stop: MMT_MIG_STOP_NONE..MMT_MIG_STOP_ROUNDS
 *
 * Return: "none", "converged" (the expected downtime fit the limit),
 * "clean" (nothing dirty), "finish" (MMT_IOC_MIGRATE_FINISH forced the
 * handover), "round-limit" (the handover was refused: ETIME), or
 * "unknown".
 */
const char *mmtu_mig_stop_str(uint32_t stop);

/**
 * mmtu_channel_str() - name of an MMT_CHANNEL_* value
 * @channel: MMT_CHANNEL_MMT, MMT_CHANNEL_SECURE or MMT_CHANNEL_PLAIN
 *
 * Return: "mmt", "secure", "plain", or "unknown".
 */
const char *mmtu_channel_str(uint32_t channel);

/**
 * mmtu_strerror() - the meaning of an errno for the MMT interface
 * @err: errno value, positive or negative (as the functions return it)
 *
 * Return: a short static string for the errnos uapi/mmt.h documents
 * (e.g. EBADMSG: "integrity check failed"), else strerror()'s text.
 */
const char *mmtu_strerror(int err);

/**
 * mmtu_state_str() - name of an MMT_STATE_* value (not mmt_state_name(),
 * which is the engine's, lib/mmt_lib.h: tools link both libraries)
 * @state: MMT_STATE_INVALID..MMT_STATE_LANDING
 *
 * Return: "INVALID", "VALID", "SENDING", "WAITING", "LANDING", or
 * "UNKNOWN".
 */
const char *mmtu_state_str(uint32_t state);

#ifdef __cplusplus
}
#endif

#endif /* LIBMMT_H */
