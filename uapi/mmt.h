/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * mmt.h - user API of the software MMT controller (/dev/mmt)
 *
 * The only header user programs include.  Conventions (botching-up-ioctls,
 * Documentation/driver-api/ioctl.rst): fixed-width fields, explicit padding,
 * sizes multiples of 8, __u64 for pointers, unknown flag bits and non-zero
 * reserved fields rejected with -EINVAL, unknown commands -ENOTTY, output
 * structs zeroed by the kernel before they are filled in.
 *
 * Every ioctl starts its struct with @size, the size in bytes of the struct
 * as the caller knows it (the MMT_*_SIZE_VER0 value of the header it was
 * built with).  The kernel accepts an older, shorter struct (missing fields
 * read as zero) and a newer, longer one whose extra bytes are all zero
 * (otherwise -E2BIG), as copy_struct_from_user() does.
 */
#ifndef _UAPI_LINUX_MMT_H
#define _UAPI_LINUX_MMT_H

#include <linux/const.h>
#include <linux/ioctl.h>
#include <linux/types.h>

/* Version of this interface; bumped only for additions. */
#define MMT_API_VERSION		1

/* Feature bits reported by MMT_IOC_QUERY. */
#define MMT_FEAT_QUERY		_BITULL(0)	/* MMT_IOC_QUERY */
#define MMT_FEAT_PMO		_BITULL(1)	/* PMOs, pread/pwrite */
#define MMT_FEAT_LOCAL_DELEGATE	_BITULL(2)	/* MMT_IOC_PMO_DELEGATE_LOCAL */
#define MMT_FEAT_RDMA		_BITULL(3)	/* connections over rdma_cm */
#define MMT_FEAT_MIGRATE	_BITULL(4)	/* MMT_IOC_MIGRATE_* */
#define MMT_FEAT_ATTEST		_BITULL(5)	/* MMT_IOC_ATTEST_* */
#define MMT_FEAT_CHECKPOINT	_BITULL(6)	/* MMT_IOC_PMO_CHECKPOINT, MMT_IOC_RESTORE */
#define MMT_FEAT_DEBUG		_BITULL(63)	/* test-only MMT_IOC_PMO_DEBUG */

/**
 * struct mmt_query - MMT_IOC_QUERY argument: version and features
 * @size: (in) sizeof(struct mmt_query) as the caller knows it;
 *	at least MMT_QUERY_SIZE_VER0
 * @flags: (in) must be 0
 * @api_version: (out) MMT_API_VERSION of the running module
 * @closure_version: (out) closure wire-format version the module speaks
 * @features: (out) MMT_FEAT_* bits the module supports
 * @node_id: (out) this node's id (16 bits used; 1 until
 *	MMT_IOC_SET_NODE_ID)
 * @reserved: (in) must be 0; (out) zero
 * @module_version: (out) NUL-terminated module version string
 */
struct mmt_query {
	__u32 size;
	__u32 flags;
	__u32 api_version;
	__u32 closure_version;
	__u64 features;
	__u32 node_id;
	__u32 reserved;
	char module_version[32];
};

#define MMT_QUERY_SIZE_VER0	64

/* Geometry limits (DESIGN.md section 2). */
#define MMT_GEOM_MAX_LEVELS	4

/**
 * struct mmt_geometry - shape of every MMT of a PMO
 * @levels: counter levels, 1..4; 0 means the default (3)
 * @log_block_size: log2 of the block size in bytes, 6..12 (64 B..4 KiB);
 *	0 means the default (6)
 * @log_arity: log2 of the counters per node per level, leaf first, each
 *	1..6; all zero means the defaults (64, 32, 16, 16); otherwise exactly
 *	the first @levels entries are given and the rest are zero
 * @reserved: must be 0
 *
 * Closure (MMT) data size = block size * product of the arities of the
 * first @levels levels: 128 KiB, 2 MiB, 32 MiB for 2, 3, 4 default levels
 * at 64-byte blocks.  At most 2^20 blocks per MMT.
 */
struct mmt_geometry {
	__u8 levels;
	__u8 log_block_size;
	__u8 log_arity[MMT_GEOM_MAX_LEVELS];
	__u8 reserved[2];
};

/*
 * MMT states (DESIGN.md section 1), as reported by MMT_IOC_PMO_INFO.
 * LANDING: the destination of a live migration (MMT_IOC_MIGRATE_RECV)
 * holds a closure of this index but has not committed: neither readable
 * nor writable (docs/MIGRATION.md).
 * INVALID: plain, non-secure memory when the PMO has no key
 * (MMT_INFO_PLAIN: pread/pwrite copy its bytes as they are, the plain
 * channel moves it); in a keyed PMO, an MMT delegated away (transfer mode),
 * which cannot be read or written.
 */
#define MMT_STATE_INVALID	0
#define MMT_STATE_VALID		1
#define MMT_STATE_SENDING	2
#define MMT_STATE_WAITING	3
#define MMT_STATE_LANDING	4	/* migration destination, not committed */

/* struct mmt_pmo_create.flags */
#define MMT_PMO_CLOEXEC		_BITULL(0)	/* the PMO fd is O_CLOEXEC */

/**
 * struct mmt_pmo_create - MMT_IOC_PMO_CREATE argument
 * @size: (in) sizeof(struct mmt_pmo_create) as the caller knows it
 * @flags: (in) MMT_PMO_* flags
 * @bytes: (in) data size in bytes, a non-zero multiple of the closure size
 * @geometry: (in) MMT shape; zero fields take the defaults
 * @fd: (in) must be 0; (out) the new PMO file descriptor
 * @reserved0: (in) must be 0
 * @reserved1: (in) must be 0
 * @closure_bytes: (out) data bytes per closure (MMT)
 * @meta_bytes: (out) metadata bytes per closure: data MACs, tree nodes,
 *	closure header and sealed root
 * @reserved: (in) must be 0
 */
struct mmt_pmo_create {
	__u32 size;
	__u32 reserved0;
	__u64 flags;
	__u64 bytes;
	struct mmt_geometry geometry;
	__s32 fd;
	__u32 reserved1;
	__u64 closure_bytes;
	__u64 meta_bytes;
	__u64 reserved[4];
};

#define MMT_PMO_CREATE_SIZE_VER0	88

/**
 * struct mmt_node_id - MMT_IOC_SET_NODE_ID argument
 * @size: (in) sizeof(struct mmt_node_id)
 * @flags: (in) must be 0
 * @node_id: (in) this node's id, 1..65535 (16 bits of every GUA)
 * @reserved: (in) must be 0
 */
struct mmt_node_id {
	__u32 size;
	__u32 flags;
	__u32 node_id;
	__u32 reserved;
};

#define MMT_NODE_ID_SIZE_VER0	16

/**
 * struct mmt_attest_blob - MMT_IOC_ATTEST_SET_AUTHORITY and
 * MMT_IOC_ATTEST_SET_CRED argument (docs/ATTESTATION.md)
 * @size: (in) sizeof(struct mmt_attest_blob)
 * @flags: (in) must be 0
 * @data: (in) user pointer to the bytes: the authority's X.509
 *	certificate (DER), or a credential file (136-byte body, then a
 *	detached PKCS#7 signature)
 * @len: (in) their length, 1..MMT_ATTEST_BLOB_MAX bytes
 * @reserved: (in) must be 0
 */
struct mmt_attest_blob {
	__u32 size;
	__u32 flags;
	__u64 data;
	__u32 len;
	__u32 reserved;
};

#define MMT_ATTEST_BLOB_SIZE_VER0	24
#define MMT_ATTEST_BLOB_MAX		8192

/* struct mmt_attest_info.state */
#define MMT_ATTEST_OFF		0	/* not attested mode: SET_NODE_ID works */
#define MMT_ATTEST_WAITING	1	/* authority installed, no credential yet */
#define MMT_ATTEST_ATTESTED	2	/* node id from a verified credential */

/**
 * struct mmt_attest_info - MMT_IOC_ATTEST_INFO argument
 * @size: (in/out) sizeof(struct mmt_attest_info)
 * @flags: (in) must be 0
 * @state: (out) MMT_ATTEST_OFF, MMT_ATTEST_WAITING or MMT_ATTEST_ATTESTED
 * @node_id: (out) this node's id
 * @node_key: (out) this load's X25519 public key, which a credential must
 *	carry (zero in MMT_ATTEST_OFF); the private half never leaves the
 *	module
 * @serial: (out) the installed credential's serial (0: none)
 * @not_before: (out) its validity, UNIX seconds
 * @not_after: (out) its validity, UNIX seconds
 * @lockdown: (out) the kernel's lockdown level when the module was loaded
 *	and drew the node key (MMT_LOCKDOWN_*), as measured in the node key
 *	event (docs/ATTESTATION.md "The node key event"); it never drops
 * @boot_flags: (out) MMT_BOOT_* as measured at the same moment
 * @reserved: (out) 0
 */
struct mmt_attest_info {
	__u32 size;
	__u32 flags;
	__u32 state;
	__u32 node_id;
	__u8 node_key[32];
	__u64 serial;
	__u64 not_before;
	__u64 not_after;
	__u32 lockdown;
	__u32 boot_flags;
	__u64 reserved;
};

/* struct mmt_attest_info.lockdown: the kernel's lockdown (kernel_lockdown(7)) */
#define MMT_LOCKDOWN_NONE		0
#define MMT_LOCKDOWN_INTEGRITY		1
#define MMT_LOCKDOWN_CONFIDENTIALITY	2

/* struct mmt_attest_info.boot_flags */
#define MMT_BOOT_MODULE_SIG_ENFORCED	_BITULL(0)	/* module.sig_enforce */

#define MMT_ATTEST_INFO_SIZE_VER0	88

/* struct mmt_pmo_key.flags */
#define MMT_KEY_RECEIVE		_BITULL(0)	/* make the MMTs WAITING */

/**
 * struct mmt_pmo_key - MMT_IOC_PMO_SET_KEY argument
 * @size: (in) sizeof(struct mmt_pmo_key)
 * @key_len: (in) 16 (AES-128, the default) or 32 (AES-256) bytes
 * @flags: (in) 0: format every MMT (zero plaintext) under a fresh GUA and
 *	make it VALID; MMT_KEY_RECEIVE: make every MMT WAITING, ready to
 *	receive a closure (see MMT_IOC_PMO_DELEGATE_LOCAL)
 * @key: (in) the MMT key, @key_len bytes; the rest must be 0.  The kernel
 *	keeps only subkeys derived from it (HKDF-SHA256; among them the
 *	secure channel's root key) and never returns it.
 */
struct mmt_pmo_key {
	__u32 size;
	__u32 key_len;
	__u64 flags;
	__u8 key[32];
};

#define MMT_PMO_KEY_SIZE_VER0	48

/**
 * struct mmt_pmo_counter - MMT_IOC_PMO_SET_ROOT_COUNTER argument
 * @size: (in) sizeof(struct mmt_pmo_counter)
 * @flags: (in) must be 0
 * @root_counter: (in) for a VALID PMO: the root counter every MMT counts
 *	up from (it may only grow); for a WAITING PMO: the minimum, a received
 *	closure's root counter must be greater (replay protection)
 */
struct mmt_pmo_counter {
	__u32 size;
	__u32 flags;
	__u64 root_counter;
};

#define MMT_PMO_COUNTER_SIZE_VER0	16

/**
 * struct mmt_mmt_info - state of one MMT of a PMO
 * @state: MMT_STATE_*
 * @flags: MMT_INFO_READ_ONLY if received in copy mode;
 *	MMT_INFO_SENDER_KEYING if it is under the keying of the closure it
 *	was received in (the sender's keying salt), not the PMO's own;
 *	MMT_INFO_REGUA_DUE if a transfer of it failed and it could not yet be
 *	re-encrypted under a fresh GUA (its memory failed verification): it
 *	is readable, and the next write or send of it re-encrypts it first,
 *	failing with EBADMSG, nothing changed, while it still does not verify;
 *	MMT_INFO_PLAIN if the PMO has no key: the MMT is INVALID and its
 *	closure is plain memory, read and written as it is
 * @gua: global unique address (58 bits: node id << 42 | sequence)
 * @root_counter: the MMT root's counter
 * @top_major: major counter of the top-level node
 */
struct mmt_mmt_info {
	__u32 state;
	__u32 flags;
	__u64 gua;
	__u64 root_counter;
	__u64 top_major;
};

#define MMT_INFO_READ_ONLY	1
#define MMT_INFO_SENDER_KEYING	2
#define MMT_INFO_REGUA_DUE	4
#define MMT_INFO_PLAIN		8

/* struct mmt_pmo_info.flags (out) */
#define MMT_PMO_INFO_MIG_UNKNOWN	1	/* waiting for a resolve */

/**
 * struct mmt_pmo_info - MMT_IOC_PMO_INFO argument
 * @size: (in) sizeof(struct mmt_pmo_info)
 * @flags: (in) must be 0; (out) MMT_PMO_INFO_* flags of the PMO:
 *	%MMT_PMO_INFO_MIG_UNKNOWN: its last migration failed with
 *	MMT_MIG_F_OUTCOME_UNKNOWN (the COMMIT left, no answer that
 *	authenticates came back; docs/MIGRATION.md section 7), or its last
 *	transfer (MMT_IOC_SEND, transfer mode) ended with closures posted
 *	whose verdicts did not come, so it is
 *	read-only (pwrite() and the calls that would change it fail with
 *	EUCLEAN) until the destination's statement resolves it
 *	(MMT_IOC_MIGRATE_RESOLVE), or its owner calls
 *	MMT_IOC_PMO_MIG_RESOLVE with MMT_MIG_RESOLVE_FORCE (the destination
 *	is gone) or MMT_IOC_PMO_INVALIDATE; each clears it.  Its MMTs
 *	are VALID and readable meanwhile.
 *	(Added after version 0 of the struct, whose size is unchanged: a
 *	caller that ignores @flags on output sees what it saw before.)
 * @bytes: (out) data size in bytes
 * @geometry: (out) the MMT shape, defaults filled in
 * @block_size: (out) bytes per block
 * @closures: (out) number of MMTs (closures) in the PMO
 * @closure_bytes: (out) data bytes per closure
 * @meta_bytes: (out) metadata bytes per closure
 * @key_len: (out) 0 if no key is set: the PMO is plain memory (every MMT
 *	INVALID with MMT_INFO_PLAIN); else 16 or 32
 * @mmt_count: (in) entries @mmts has room for; (out) entries written
 * @mmts: (in) user pointer to @mmt_count struct mmt_mmt_info, or 0
 * @ksalt: (out) the keying salt of the PMO's own keying, drawn at random
 *	by MMT_IOC_PMO_SET_KEY; all zero without a key.  Public: it travels
 *	in clear in every closure of the PMO (docs/ENGINE.md "Keying salt").
 *	Ignored on input.
 * @reserved: (in) must be 0
 */
struct mmt_pmo_info {
	__u32 size;
	__u32 flags;
	__u64 bytes;
	struct mmt_geometry geometry;
	__u32 block_size;
	__u32 closures;
	__u64 closure_bytes;
	__u64 meta_bytes;
	__u32 key_len;
	__u32 mmt_count;
	__u64 mmts;
	__u8 ksalt[16];
	__u64 reserved[2];
};

#define MMT_PMO_INFO_SIZE_VER0	96

/* struct mmt_delegate_local.flags */
#define MMT_DELEGATE_COPY	_BITULL(0)	/* copy; default: transfer */
#define MMT_DELEGATE_EAGER	_BITULL(1)	/* verify all on receipt */

/**
 * struct mmt_delegate_local - MMT_IOC_PMO_DELEGATE_LOCAL argument
 * @size: (in) sizeof(struct mmt_delegate_local)
 * @dst_fd: (in) the receiving PMO's fd: same geometry and size, same key,
 *	every MMT WAITING (MMT_KEY_RECEIVE)
 * @flags: (in) MMT_DELEGATE_* flags
 * @closures: (in) must be 0; (out) closures delivered and accepted
 * @reserved: (in) must be 0
 */
struct mmt_delegate_local {
	__u32 size;
	__s32 dst_fd;
	__u64 flags;
	__u64 closures;
	__u64 reserved[2];
};

#define MMT_DELEGATE_LOCAL_SIZE_VER0	40

/* struct mmt_pmo_debug.region */
#define MMT_DEBUG_DATA		0	/* ciphertext */
#define MMT_DEBUG_MACS		1	/* data MACs */
#define MMT_DEBUG_NODES		2	/* tree nodes */

/**
 * struct mmt_pmo_debug - MMT_IOC_PMO_DEBUG argument (test builds only)
 * @size: (in) sizeof(struct mmt_pmo_debug)
 * @region: (in) MMT_DEBUG_* region of the untrusted backing memory
 * @closure: (in) which MMT
 * @xor_mask: (in) byte XORed into the backing byte (non-zero)
 * @offset: (in) byte offset in the region
 * @reserved: (in) must be 0
 */
struct mmt_pmo_debug {
	__u32 size;
	__u32 region;
	__u32 closure;
	__u32 xor_mask;
	__u64 offset;
	__u64 reserved;
};

#define MMT_PMO_DEBUG_SIZE_VER0	32

/*
 * Channels of a connection (DESIGN.md section 1): all three exist so they
 * can be measured side by side on the same connection.
 */
#define MMT_CHANNEL_MMT		0	/* closure delegation */
#define MMT_CHANNEL_SECURE	1	/* AES-GCM secure channel */
#define MMT_CHANNEL_PLAIN	2	/* RDMA write, no protection */

/**
 * struct mmt_conn_addr - an IPv4 or IPv6 address and port for rdma_cm
 * @family: AF_INET or AF_INET6
 * @port: port, host byte order, 1..65535
 * @scope_id: IPv6 scope (interface index) for link-local addresses, else 0
 * @addr: the address in network byte order; IPv4 in the first 4 bytes,
 *	the rest 0
 */
struct mmt_conn_addr {
	__u16 family;
	__u16 port;
	__u32 scope_id;
	__u8 addr[16];
};

/**
 * struct mmt_listen - MMT_IOC_LISTEN argument
 * @size: (in) sizeof(struct mmt_listen)
 * @flags: (in) MMT_CONN_CLOEXEC or 0
 * @addr: (in) local address to listen on (any address: all zero)
 * @fd: (out) the listener fd; MMT_IOC_ACCEPT on it gives connections;
 *	poll() reports POLLIN when a connection is ready to accept
 * @backlog: (in) connect requests queued before accept, 1..128; 0 = 16
 * @reserved: (in) must be 0
 */
struct mmt_listen {
	__u32 size;
	__u32 flags;
	struct mmt_conn_addr addr;
	__s32 fd;
	__u32 backlog;
	__u64 reserved[2];
};

#define MMT_LISTEN_SIZE_VER0	56

#define MMT_CONN_CLOEXEC	1	/* the new fd is O_CLOEXEC */

/**
 * struct mmt_connect - MMT_IOC_CONNECT and MMT_IOC_ACCEPT argument
 * @size: (in) sizeof(struct mmt_connect)
 * @flags: (in) MMT_CONN_CLOEXEC or 0
 * @addr: (in, CONNECT) the peer to connect to; (out, ACCEPT) the peer
 * @fd: (out) the connection fd
 * @timeout_ms: (in) how long to wait, 1..600000; 0 = 10000
 * @peer_node: (out) the peer's node id from its hello
 * @reserved0: (in) must be 0
 * @reserved1: (in) must be 0
 * @reserved: (in) must be 0
 */
struct mmt_connect {
	__u32 size;
	__u32 flags;
	struct mmt_conn_addr addr;
	__s32 fd;
	__u32 timeout_ms;
	__u16 peer_node;
	__u16 reserved0;
	__u32 reserved1;
	__u64 reserved[2];
};

#define MMT_CONNECT_SIZE_VER0	64

/* struct mmt_xfer.flags */
#define MMT_XFER_COPY		_BITULL(0)	/* send only: copy mode */
#define MMT_XFER_EAGER		_BITULL(1)	/* recv only: verify on receipt */

/**
 * struct mmt_xfer - MMT_IOC_SEND and MMT_IOC_RECV argument
 * @size: (in) sizeof(struct mmt_xfer)
 * @pmo_fd: (in) the PMO to send from or receive into; both the same
 *	geometry and size.  MMT channel: keyed with the same key, the
 *	sender's MMTs VALID, the receiver's WAITING (MMT_KEY_RECEIVE).  Plain
 *	channel: both PMOs plain memory (no key).  Secure channel: both plain
 *	(under the connection's key, MMT_IOC_CONN_SET_KEY), or both keyed
 *	with the same key and VALID (the receiver's writable: its data is
 *	overwritten through the controller).
 * @channel: (in) MMT_CHANNEL_*; both sides must name the same one
 * @flags: (in) MMT_XFER_* flags (COPY on send only, EAGER on recv only)
 * @timeout_ms: (in) how long to wait for each answer of the peer (an
 *	offer, a grant, a closure, an ack), 1..600000; 0 = 10000
 * @reserved0: (in) must be 0
 * @bytes: (out) data bytes moved and accepted (also after an error)
 * @closures: (out) closures accepted by the receiver (MMT and secure
 *	channels) or written (plain channel), also after an error
 * @ns: (out) wall time of the transfer in nanoseconds, measured from the
 *	offer (send) or its arrival (recv) to the last ack
 * @reserved: (in) must be 0; @bytes, @closures and @ns must be 0 on input
 *
 * Wire protocol and memory (driver/mmt_conn.h): the sender offers the PMO
 * (geometry, closures, channel); the receiver grants one closure at a time,
 * at most 4 in flight, each with a fresh rkey that covers only that
 * closure's receive area: on the MMT channel the receive PMO's own memory
 * for that closure (data, data MACs, tree nodes, written in place) and a
 * 192-byte slot for the closure header and sealed root; on the plain
 * channel the receive PMO's own memory for that closure's data; on the
 * secure channel a bounce buffer.  The sender RDMA-writes the closure
 * (plain channel: straight from its PMO's memory, no bounce, no crypto)
 * and notifies with a WRITE_WITH_IMM; the receiver invalidates the
 * registration, waits for it, then checks the closure (secure channel:
 * copies the message out and opens it) and acks it.
 */
struct mmt_xfer {
	__u32 size;
	__s32 pmo_fd;
	__u32 channel;
	__u32 flags;
	__u32 timeout_ms;
	__u32 reserved0;
	__u64 bytes;
	__u64 closures;
	__u64 ns;
	__u64 reserved[2];
};

#define MMT_XFER_SIZE_VER0	64

/**
 * struct mmt_conn_key - MMT_IOC_CONN_SET_KEY argument
 * @size: (in) sizeof(struct mmt_conn_key)
 * @key_len: (in) 16 or 32 bytes
 * @flags: (in) must be 0
 * @key: (in) the connection's secure-channel key, @key_len bytes; the rest
 *	must be 0.  Both sides set the same one.  The kernel keeps only a
 *	root derived from it (HKDF-SHA256, as a PMO key's channel root) and
 *	never returns it.
 */
struct mmt_conn_key {
	__u32 size;
	__u32 key_len;
	__u64 flags;
	__u8 key[32];
};

#define MMT_CONN_KEY_SIZE_VER0	48

/**
 * struct mmt_key_agree - MMT_IOC_CONN_KEY_AGREE argument
 * @size: (in) sizeof(struct mmt_key_agree)
 * @pmo_fd: (in) the PMO to key with the agreed key; it must have no key
 * @flags: (in) MMT_KEY_RECEIVE (make every MMT WAITING, as
 *	MMT_IOC_PMO_SET_KEY does) or 0 (VALID, zero plaintext)
 * @key_len: (in) 16 or 32 bytes (AES-128 or AES-256); the peer must ask
 *	for the same
 * @timeout_ms: (in) how long to wait for each message of the peer,
 *	0..600000; 0 = 10000
 * @seq: (in) 0; (out) the agreement's number on this connection, 1, 2,
 *	... (the same on both sides)
 * @reserved: (in) must be 0
 */
struct mmt_key_agree {
	__u32 size;
	__s32 pmo_fd;
	__u64 flags;
	__u32 key_len;
	__u32 timeout_ms;
	__u64 seq;
	__u64 reserved[2];
};

#define MMT_KEY_AGREE_SIZE_VER0	48

/*
 * struct mmt_migrate.flags.  MMT_MIGRATE_PARK (recv only; needs
 * CAP_CHECKPOINT_RESTORE or CAP_SYS_ADMIN): once committed, the PMO is
 * also parked in a one-time record of the module named by this receive's
 * nonce (struct mmt_migrate_info @nonce), which MMT_IOC_RESTORE with no
 * buffer consumes: CRIU's migration between nodes (docs/CRIU.md section 6).
 * The record belongs to the receiving caller (its euid and user
 * namespace): only it, or a caller with CAP_SYS_ADMIN, may restore it.
 */
#define MMT_MIGRATE_EAGER	_BITULL(0)	/* recv: verify all on receipt */
#define MMT_MIGRATE_PARK	_BITULL(1)	/* recv: park the PMO once committed */

/* Defaults and bounds of struct mmt_migrate */
#define MMT_MIGRATE_DOWNTIME_MS	300	/* as QEMU's downtime-limit */
#define MMT_MIGRATE_ROUNDS	30
#define MMT_MIGRATE_WINDOW	4
#define MMT_MIGRATE_WINDOW_MAX	16

/**
 * struct mmt_migrate - MMT_IOC_MIGRATE_SEND and MMT_IOC_MIGRATE_RECV argument
 * @size: (in) sizeof(struct mmt_migrate)
 * @pmo_fd: (in) the PMO to migrate (send: keyed, every MMT VALID and
 *	writable) or to migrate into (recv: keyed with the same key, same
 *	geometry and size, every MMT WAITING, MMT_KEY_RECEIVE)
 * @flags: (in) MMT_MIGRATE_EAGER, MMT_MIGRATE_PARK (recv only) or 0
 * @timeout_ms: (in) how long to wait for each answer of the peer in
 *	pre-copy, from the moment the wait for it starts, whatever else
 *	arrives meanwhile (send: a failure then ends the migration without
 *	waiting again), and (send) for the whole handover, from the freeze
 *	to a genuine answer to the COMMIT, whatever arrives meanwhile;
 *	1..600000; 0 = 10000.  The call returns within @timeout_ms of the
 *	last answer plus the connection's teardown (a disconnect and a drain
 *	of the queue pair: on Soft-RoCE well under a second)
 * @downtime_limit_ms: (in, send) hand over once the expected downtime is
 *	at most this, 1..600000; 0 = MMT_MIGRATE_DOWNTIME_MS.  Must be 0 on
 *	recv
 * @max_rounds: (in, send) pre-copy rounds at most (the first, full copy
 *	counts), 1..1000; 0 = MMT_MIGRATE_ROUNDS.  Must be 0 on recv
 * @window: (in) closures in flight, 1..MMT_MIGRATE_WINDOW_MAX; 0 =
 *	MMT_MIGRATE_WINDOW.  The sender's extra memory is @window closure
 *	snapshots + 16 x N bytes + a constant (struct mmt_migrate_info,
 *	@peak_extra_bytes); the receiver writes in place
 * @reserved0: (in) must be 0
 * @info: (in) user pointer to a struct mmt_migrate_info (its @size set)
 *	that receives the final figures, also after an error; or 0
 * @reserved: (in) must be 0
 */
struct mmt_migrate {
	__u32 size;
	__s32 pmo_fd;
	__u32 flags;
	__u32 timeout_ms;
	__u32 downtime_limit_ms;
	__u32 max_rounds;
	__u32 window;
	__u32 reserved0;
	__u64 info;
	__u64 reserved[2];
};

#define MMT_MIGRATE_SIZE_VER0	56

/* struct mmt_migrate_info.phase */
#define MMT_MIG_PHASE_NONE	0	/* no migration on the connection yet */
#define MMT_MIG_PHASE_SETUP	1	/* checks, offer, bookkeeping */
#define MMT_MIG_PHASE_PRECOPY	2	/* rounds; the owner writes */
#define MMT_MIG_PHASE_HANDOVER	3	/* writers frozen; last round, commit */
#define MMT_MIG_PHASE_COMMITTED	4	/* the destination is the one copy */
#define MMT_MIG_PHASE_FAILED	5	/* @error says why */

/*
 * struct mmt_migrate_info.flags (out).  MMT_MIG_F_OUTCOME_UNKNOWN: the
 * migration failed after the COMMIT left, without an answer that
 * authenticates: the destination may have committed (docs/MIGRATION.md).
 */
#define MMT_MIG_F_SOURCE	_BITULL(0)	/* this side sends */
#define MMT_MIG_F_OUTCOME_UNKNOWN _BITULL(1)

/*
 * struct mmt_migrate_info.stop (out, source): why pre-copy ended.
 * MMT_MIG_STOP_NONE while it runs, on the destination, and when pre-copy
 * failed (@error says why).  MMT_MIG_STOP_ROUNDS: the round limit came
 * with the expected downtime still above the limit, so the handover was
 * refused (the migration fails with ETIME; the writers were never
 * frozen).  MMT_MIG_STOP_FINISH: MMT_IOC_MIGRATE_FINISH forced the
 * handover; its downtime is whatever it takes.
 */
#define MMT_MIG_STOP_NONE	0	/* pre-copy has not ended (or failed) */
#define MMT_MIG_STOP_CONVERGED	1	/* expected downtime <= the limit */
#define MMT_MIG_STOP_CLEAN	2	/* nothing dirty after a round */
#define MMT_MIG_STOP_FINISH	3	/* MMT_IOC_MIGRATE_FINISH */
#define MMT_MIG_STOP_ROUNDS	4	/* round limit: handover refused */

/**
 * struct mmt_migrate_info - MMT_IOC_MIGRATE_INFO argument: figures of the
 *	connection's current (or last) migration, as QEMU's query-migrate
 * @size: (in) sizeof(struct mmt_migrate_info)
 * @flags: (in) must be 0; (out) MMT_MIG_F_* bits
 * @phase: (out) MMT_MIG_PHASE_*
 * @round: (out) rounds begun: 1 is the full copy; the handover's last
 *	round counts
 * @closures: (out) closures of the PMO
 * @dirty: (out) closures dirty at the last dirty sync (source; the
 *	destination reports 0)
 * @dirty_syncs: (out) dirty syncs (scans of the root counters) made
 * @closures_sent: (out) closures sent (source) or accepted (destination),
 *	every round
 * @bytes_sent: (out) closure bytes (data, MACs, nodes, header, sealed
 *	root) sent or accepted
 * @expected_downtime_ns: (out) dirty closures times the measured time per
 *	closure of the last pre-copy round (source); 0 before the first
 *	measure; from the handover on, the estimate the handover was
 *	decided on (compare it with @downtime_ns)
 * @total_ns: (out) from the start of the ioctl to now or to its end
 * @setup_ns: (out) from the start to the first closure sent or received
 * @downtime_ns: (out, source) from the freeze of the writers to the
 *	commit's answer (0 until the handover ends)
 * @peak_extra_bytes: (out) the most memory the migration held at once on
 *	this node besides the PMO, everything it allocates counted: on the
 *	source W closures (W = @window, 1 on loopback; each the closure's
 *	data, data MACs and tree nodes, plus a 192-byte head) + 16 x N bytes
 *	(N closures: the sent GUA and root counter of each, for dirty
 *	tracking) + a constant (the window's bookkeeping); on the
 *	destination W head slots of 192 bytes + a constant (it lands in
 *	place).  The COMMIT digest is streamed on both sides.  Not counted:
 *	the RDMA driver's own objects (MRs, the queue pairs' buffers)
 * @error: (out) 0, or the negative errno the migration failed with
 * @reserved0: (out) zero
 * @nonce: (in) must be 0; (out) the destination's receive nonce of this
 *	migration (16 bytes, = MMT_CKPT_HANDLE_BYTES; on the source from the
 *	destination's first GRANT on, zero before).  Bound into every
 *	closure and the COMMIT, so a source whose migration committed knows
 *	it names the receive that committed; with MMT_MIGRATE_PARK it is the
 *	handle of the record the destination parked the PMO in
 *	(MMT_IOC_RESTORE; not a secret: it is sent in clear, and restoring
 *	the record takes its owner or CAP_SYS_ADMIN, not only the handle)
 * @stop: (in) must be 0; (out, source) MMT_MIG_STOP_*: why pre-copy
 *	ended.  Since MMT_MIGRATE_INFO_SIZE_VER1
 * @throttle_pct: (in) must be 0; (out, source) the writers' throttle
 *	reached, 0..99: in pre-copy, once rounds stop converging, each
 *	pwrite() on the PMO sleeps (interruptibly) @throttle_pct / (100 -
 *	@throttle_pct) times its own time, at most the downtime limit
 *	(docs/MIGRATION.md section 4).  Since MMT_MIGRATE_INFO_SIZE_VER1
 * @throttle_ns: (in) must be 0; (out, source) the writers' throttle
 *	sleeps, summed.  Since MMT_MIGRATE_INFO_SIZE_VER1
 */
struct mmt_migrate_info {
	__u32 size;
	__u32 flags;
	__u32 phase;
	__u32 round;
	__u64 closures;
	__u64 dirty;
	__u64 dirty_syncs;
	__u64 closures_sent;
	__u64 bytes_sent;
	__u64 expected_downtime_ns;
	__u64 total_ns;
	__u64 setup_ns;
	__u64 downtime_ns;
	__u64 peak_extra_bytes;
	__s32 error;
	__u32 reserved0;
	__u8 nonce[16];
	__u32 stop;
	__u32 throttle_pct;
	__u64 throttle_ns;
};

#define MMT_MIGRATE_INFO_SIZE_VER0	120
#define MMT_MIGRATE_INFO_SIZE_VER1	136

/*
 * The outcome of a migration, or of a transfer, as its destination
 * states it (struct mmt_migrate_resolve @outcome; docs/MIGRATION.md
 * section 7).  COMMITTED and ABORTED (a migration) and ENDED (a transfer:
 * MMT_IOC_SEND whose last verdicts were lost) are final and authenticated
 * (a tag under the MMT key bound to the migration or transfer); UNKNOWN
 * and PENDING are not, and change nothing.
 */
#define MMT_MIG_OUTCOME_UNKNOWN	0	/* the destination holds no record */
#define MMT_MIG_OUTCOME_PENDING	1	/* its receive still runs */
#define MMT_MIG_OUTCOME_COMMITTED 2	/* it committed: the one copy */
#define MMT_MIG_OUTCOME_ABORTED	3	/* it ended without commit, for good */
#define MMT_MIG_OUTCOME_ENDED	4	/* a transfer's receive ended, for good */

/**
 * struct mmt_migrate_resolve - MMT_IOC_MIGRATE_RESOLVE argument
 * @size: (in) sizeof(struct mmt_migrate_resolve)
 * @pmo_fd: (in) the source PMO of a migration or transfer whose outcome
 *	is unknown (MMT_PMO_INFO_MIG_UNKNOWN)
 * @flags: (in) must be 0
 * @timeout_ms: (in) how long to wait for the destination's statement,
 *	0..600000; 0 = 10000
 * @outcome: (in) must be 0; (out) MMT_MIG_OUTCOME_*: what the destination
 *	stated, also on ENODATA and EINPROGRESS
 * @reserved0: (in) must be 0
 * @reserved: (in) must be 0
 */
struct mmt_migrate_resolve {
	__u32 size;
	__s32 pmo_fd;
	__u32 flags;
	__u32 timeout_ms;
	__u32 outcome;
	__u32 reserved0;
	__u64 reserved[2];
};

#define MMT_MIGRATE_RESOLVE_SIZE_VER0	40

/* Bytes of a checkpoint handle (struct mmt_checkpoint, struct mmt_restore). */
#define MMT_CKPT_HANDLE_BYTES	16

/*
 * struct mmt_checkpoint.flags: MMT_CKPT_PENDING: the PMO is not handed
 * over at once but kept read-only until its owner invalidates it (the
 * image is the one copy) or resolves it (the image is void), as after a
 * migration of unknown outcome (docs/CRIU.md).
 */
#define MMT_CKPT_PENDING	_BITULL(0)

/**
 * struct mmt_checkpoint - MMT_IOC_PMO_CHECKPOINT argument (docs/CRIU.md)
 * @size: (in) sizeof(struct mmt_checkpoint)
 * @flags: (in) 0 or MMT_CKPT_PENDING
 * @buf: (in) user pointer to @closures x @closure_len bytes that receive
 *	the PMO's closures, closure i at i x @closure_len (each a format v4
 *	closure: header, sealed root, tree nodes, data MACs, ciphertext);
 *	0 with @buf_len 0 only reports @closures and @closure_len
 * @buf_len: (in) bytes at @buf: exactly @closures x @closure_len, or 0
 * @handle: (in) must be 0; (out) the checkpoint's one-time handle, for
 *	MMT_IOC_RESTORE; not a secret (it is also each closure's receive
 *	nonce; the record belongs to the caller, MMT_IOC_RESTORE).
 *	Written before the PMO is handed over: after an error it names no
 *	checkpoint
 * @closures: (in) must be 0; (out) closures of the PMO
 * @reserved0: (in) must be 0
 * @closure_len: (in) must be 0; (out) bytes of one closure
 * @reserved: (in) must be 0
 */
struct mmt_checkpoint {
	__u32 size;
	__u32 flags;
	__u64 buf;
	__u64 buf_len;
	__u8 handle[MMT_CKPT_HANDLE_BYTES];
	__u32 closures;
	__u32 reserved0;
	__u64 closure_len;
	__u64 reserved[2];
};

#define MMT_CHECKPOINT_SIZE_VER0	72

/**
 * struct mmt_restore - MMT_IOC_RESTORE argument (docs/CRIU.md)
 * @size: (in) sizeof(struct mmt_restore)
 * @flags: (in) MMT_PMO_CLOEXEC or 0
 * @handle: (in) the handle MMT_IOC_PMO_CHECKPOINT returned, or the
 *	nonce of a MMT_IOC_MIGRATE_RECV that parked its PMO
 * @buf: (in) user pointer to the closures MMT_IOC_PMO_CHECKPOINT wrote
 *	(untrusted: each is checked as a received closure); 0 for a PMO
 *	parked by MMT_IOC_MIGRATE_RECV (MMT_MIGRATE_PARK)
 * @buf_len: (in) bytes at @buf: exactly closures x closure length of the
 *	checkpoint; 0 for a parked PMO
 * @fd: (in) must be 0; (out) the restored PMO's file descriptor
 * @reserved0: (in) must be 0
 * @reserved: (in) must be 0
 */
struct mmt_restore {
	__u32 size;
	__u32 flags;
	__u8 handle[MMT_CKPT_HANDLE_BYTES];
	__u64 buf;
	__u64 buf_len;
	__s32 fd;
	__u32 reserved0;
	__u64 reserved[2];
};

#define MMT_RESTORE_SIZE_VER0	64

/*
 * ioctl type 0xB7 (not used by any in-tree driver in ioctl-number.rst).
 */
#define MMT_IOC_MAGIC		0xB7

/**
 * MMT_IOC_QUERY - report the module's API version and features
 *
 * On /dev/mmt.  Context: process; takes no lock.
 *
 * Return: 0 on success; -1 with errno set to:
 * * EFAULT - the argument could not be read or written
 * * EINVAL - @size below MMT_QUERY_SIZE_VER0, or @flags or @reserved non-zero
 * * E2BIG - @size above the page size, or larger than the kernel's struct
 *   with non-zero bytes past it
 */
#define MMT_IOC_QUERY		_IOWR(MMT_IOC_MAGIC, 0x00, struct mmt_query)

/**
 * MMT_IOC_PMO_CREATE - allocate a PMO and return a file descriptor for it
 *
 * On /dev/mmt.  The PMO's memory (data, data MACs, tree nodes) is allocated
 * and pinned by the module; all of it is charged to the caller's
 * RLIMIT_MEMLOCK (unless CAP_IPC_LOCK), and its data bytes to the module's
 * max_pmo_mib limit (all users together).  Everything the PMO allocates,
 * its memory included, is charged to the caller's memory cgroup
 * (memory.max).  It is freed when the last
 * reference to the PMO fd goes.  Every MMT starts INVALID, the PMO plain
 * memory of zeros, until MMT_IOC_PMO_SET_KEY.
 *
 * pread()/pwrite() (and read/write at the file position, readv/writev,
 * io_uring) on the PMO fd of a keyed PMO move plaintext through the
 * software controller: a write encrypts, bumps counters and updates MACs
 * and the path to the root; a read verifies the path and the MACs, then
 * decrypts.  On a PMO without a key (plain memory: every MMT INVALID,
 * MMT_INFO_PLAIN) they copy the bytes straight to and from the PMO's
 * memory: nothing is encrypted or checked, and a new PMO reads as zeros.
 * Offsets are bytes into the PMO's data.  A read at or past the end
 * returns 0, a write there fails with ENOSPC; a transfer across the end is
 * cut short.
 * A call is carried out in steps of at most 64 KiB that do not cross a
 * closure; each write step is a write of its own (all or nothing, one step
 * of its MMT's root counter), but a call of several steps is not atomic:
 * if a step fails after earlier ones succeeded, the call returns the bytes
 * of the earlier steps (written, or read and verified) as a short count,
 * and the next call, which starts at the failed step, returns the error.
 * A call on a keyed PMO that spans two closures or more works on up to
 * io_workers (a module parameter; default the CPUs online) of its
 * closures at once, with the same counts and errors and the same
 * closures left untouched after a failure, unless the untrusted memory
 * changes under the call (a write may then find later closures in
 * flight with the failing one written, each whole).
 * A call holds the PMO's lock from its first step to its last (a pwrite
 * running when a migration's handover starts finishes first); between two
 * steps (or batches of closures) it yields the CPU, and a fatal signal
 * ends it there with the bytes of the steps done.  Other calls on the PMO
 * wait for the lock, killable: a pwrite whose buffer faults slowly
 * (userfaultfd, FUSE) holds it as long.
 * A call of zero bytes returns 0 without looking at the key or the MMTs'
 * states: also on a WAITING MMT or a read-only copy, where a call of one
 * byte fails with EPERM.  While the PMO is the source of a live migration
 * in pre-copy whose rounds stopped converging, a pwrite() that wrote
 * sleeps afterwards, interruptibly (a signal ends the sleep; the bytes
 * count), in proportion to the migration's throttle (struct
 * mmt_migrate_info @throttle_pct), at most the downtime limit
 * (docs/MIGRATION.md section 4).  Errors:
 * EPERM (keyed PMO: the MMT is not VALID, or for a read not VALID or
 * SENDING; a write to a read-only copy), EBADMSG (integrity check failed:
 * the bytes before the bad block are returned first, as a short count;
 * also a write to an MMT flagged MMT_INFO_REGUA_DUE that still fails
 * verification, see MMT_IOC_PMO_DELEGATE_LOCAL), EOVERFLOW
 * (pwrite: a counter of that MMT is exhausted; invalidate and re-key),
 * EINVAL (negative offset), EAGAIN (non-blocking I/O: RWF_NOWAIT), EFAULT,
 * ENOMEM, EUCLEAN (pwrite: the PMO's last live migration ended with
 * MMT_MIG_F_OUTCOME_UNKNOWN, or its last transfer left closures of
 * unknown outcome; see MMT_IOC_PMO_MIG_RESOLVE), EINTR (pwrite:
 * a signal came while it waited for a live migration's handover to end,
 * nothing written, see MMT_IOC_MIGRATE_SEND; pread and pwrite: a fatal
 * signal came while it waited for the PMO's lock, nothing moved).
 * Context: process; may sleep.
 *
 * Return: 0 on success; -1 with errno set to:
 * * EFAULT - the argument could not be read or written
 * * EINVAL - bad @size, unknown @flags bits, non-zero reserved fields or
 *   @fd, a geometry out of range, or @bytes zero, not a multiple of the
 *   closure size or more than 2^32 - 1 closures
 * * E2BIG - @size too large with non-zero bytes past the kernel's struct
 * * ENOMEM - RLIMIT_MEMLOCK exceeded, the caller's memory cgroup would go
 *   over its limit, or out of memory (nothing is left allocated)
 * * ENOSPC - the module's max_pmo_mib limit would be exceeded
 * * EMFILE - no free file descriptor
 */
#define MMT_IOC_PMO_CREATE	_IOWR(MMT_IOC_MAGIC, 0x01, struct mmt_pmo_create)

/**
 * MMT_IOC_SET_NODE_ID - set this node's id (not in attested mode)
 *
 * On /dev/mmt; needs CAP_SYS_ADMIN.  The default node id is 1.  GUAs made
 * afterwards carry the new id.  Context: process.
 *
 * Return: 0; -1 with errno EFAULT, EINVAL (bad size, flags, reserved, or
 * @node_id outside 1..65535), E2BIG, EPERM (no CAP_SYS_ADMIN), or EBUSY
 * (attested mode: the node id comes from MMT_IOC_ATTEST_SET_CRED only).
 */
#define MMT_IOC_SET_NODE_ID	_IOWR(MMT_IOC_MAGIC, 0x02, struct mmt_node_id)

/**
 * MMT_IOC_ATTEST_SET_AUTHORITY - enter attested mode: trust this authority
 *
 * On /dev/mmt; needs CAP_SYS_ADMIN.  The module parses the authority's
 * X.509 certificate (RSA; the credential signer) into a keyring of its own
 * that nothing else can link keys into.  The node key a credential must
 * carry is this load's X25519 key, drawn when the module was loaded and
 * measured then into the IMA log (event "mmt-node-key", when the IMA
 * policy measures critical data; docs/ATTESTATION.md); MMT_IOC_ATTEST_INFO
 * shows its public half.  From then on, until the module is unloaded,
 * the node id comes only from MMT_IOC_ATTEST_SET_CRED and
 * MMT_IOC_SET_NODE_ID fails with EBUSY; until the first credential no GUA
 * is made (keying a PMO fails with ENOKEY).  Context: process; sleeps.
 *
 * Return: 0; -1 with errno EFAULT, EINVAL (bad size, flags, reserved,
 * @len 0 or above MMT_ATTEST_BLOB_MAX), E2BIG, EPERM (no CAP_SYS_ADMIN),
 * EBUSY (an authority is already installed), EBADMSG (not an X.509
 * certificate the kernel can parse), ENOPKG (the kernel lacks a needed
 * algorithm), ENOENT (the module has no node key: the kernel had no
 * "curve25519" kpp algorithm when it was loaded), ENOMEM, or EOPNOTSUPP
 * (the module was built for a kernel
 * without PKCS#7 verification or X25519: no MMT_FEAT_ATTEST).  On error
 * nothing changes.
 */
#define MMT_IOC_ATTEST_SET_AUTHORITY \
	_IOWR(MMT_IOC_MAGIC, 0x03, struct mmt_attest_blob)

/**
 * MMT_IOC_ATTEST_SET_CRED - take the node id from a signed credential
 *
 * On /dev/mmt; needs CAP_SYS_ADMIN.  The module verifies the credential's
 * PKCS#7 signature itself (verify_pkcs7_signature()) against the
 * authority of MMT_IOC_ATTEST_SET_AUTHORITY, then its body: magic, version,
 * flags, node id 1..65535, the node key equal to this load's, validity
 * around the current time, a serial above the installed credential's.
 * Then the node id is set (GUAs made afterwards carry it), and the
 * credential is sent to the peer of every live attested connection, whose
 * validity then follows it (docs/ATTESTATION.md "Renewal on a live
 * connection"): renew before the installed credential ends to keep them.
 * Context: process; sleeps.
 *
 * Return: 0; -1 with errno EFAULT, EINVAL (bad size, flags, reserved,
 * @len, or a malformed body), E2BIG, EPERM (no CAP_SYS_ADMIN), ENOKEY
 * (no authority installed), EKEYREJECTED (the signature does not verify
 * under the authority, or the credential is for another node key),
 * EKEYEXPIRED (outside its validity), ESTALE (a serial not above the
 * installed credential's), ENOMEM, or EOPNOTSUPP (no MMT_FEAT_ATTEST).
 * On error nothing changes.
 */
#define MMT_IOC_ATTEST_SET_CRED \
	_IOWR(MMT_IOC_MAGIC, 0x04, struct mmt_attest_blob)

/**
 * MMT_IOC_ATTEST_INFO - the attested mode's state and this load's node key
 *
 * On /dev/mmt.  Context: process.
 *
 * Return: 0; -1 with errno EFAULT, EINVAL (bad size, flags), E2BIG, or
 * EOPNOTSUPP (no MMT_FEAT_ATTEST).
 */
#define MMT_IOC_ATTEST_INFO	_IOWR(MMT_IOC_MAGIC, 0x05, struct mmt_attest_info)

/**
 * MMT_IOC_RESTORE - a new PMO from a checkpoint image, once
 *
 * Or, with @buf and @buf_len 0, the PMO a MMT_IOC_MIGRATE_RECV with
 * MMT_MIGRATE_PARK parked under @handle (a migration between nodes,
 * docs/CRIU.md section 6): a new fd for it, which consumes the record;
 * EBUSY while another fd still refers to the PMO (its receiver has not
 * closed it), EINVAL for a buffer (or for none on a checkpoint's record).
 *
 * On /dev/mmt; needs CAP_CHECKPOINT_RESTORE or CAP_SYS_ADMIN
 * (docs/CRIU.md).  A record belongs to the caller that made it (its
 * effective uid and user namespace, taken by MMT_IOC_PMO_CHECKPOINT or
 * by the parking MMT_IOC_MIGRATE_RECV): anyone else (another euid, or
 * the same uid in another user namespace) needs CAP_SYS_ADMIN, since the
 * handle is no secret.  Looks up the record MMT_IOC_PMO_CHECKPOINT left under
 * @handle, makes a PMO of its geometry and size (charged as
 * MMT_IOC_PMO_CREATE charges) under the checkpointed PMO's keying, every
 * MMT WAITING, and receives the closures at @buf into it as a live
 * migration's destination does (MMT_IOC_MIGRATE_RECV): each checked in
 * full (eager: MACs and the whole tree, so a tampered byte anywhere is
 * found now), bound to this checkpoint's connection id and receive
 * nonce, landing LANDING; then the record's COMMIT must match what
 * landed, and every MMT becomes VALID and writable at once.  Only then
 * is the record consumed: a second restore of the same image, or of an
 * older image of the same process, fails with ESTALE.  On any error
 * nothing is made and the record stays (an intact copy of the image can
 * still be restored).
 * Context: process; sleeps; takes the module's checkpoint mutex, the new
 * PMO's lock around each step.
 *
 * Return: 0 (the PMO's fd in @fd); -1 with errno set to:
 * * EFAULT, E2BIG - as for every command; EFAULT also a bad @buf
 * * EINVAL - bad @size, @flags, reserved fields or @fd, or @buf_len not
 *   the checkpoint's closures x closure length (0, with @buf 0, for a
 *   parked PMO)
 * * EPERM - the caller lacks CAP_CHECKPOINT_RESTORE and CAP_SYS_ADMIN;
 *   or the record under @handle is another user's (another euid or user
 *   namespace) and the caller lacks CAP_SYS_ADMIN: nothing changes, the
 *   record stays restorable by its owner
 * * ESTALE - no record under @handle: the image was restored already,
 *   or was made before the module was last loaded, or is not an image
 *   of this node; also a closure older than the checkpoint's
 * * EBUSY - another restore of this handle runs; or the parked PMO is
 *   still open elsewhere (its receiver's fd)
 * * EBADMSG - a closure or the record's COMMIT does not authenticate or
 *   verify (a tampered image)
 * * EILSEQ, EMSGSIZE, EPROTO, EPROTONOSUPPORT, EMEDIUMTYPE, EXDEV - a
 *   closure was rejected for that reason (as MMT_IOC_MIGRATE_RECV says;
 *   EXDEV also when the node id changed since the checkpoint)
 * * ENOMEM - RLIMIT_MEMLOCK exceeded, the caller's memory cgroup would go
 *   over its limit (the new PMO is charged to it), or out of memory
 * * ENOSPC - the module's max_pmo_mib limit would be exceeded; or
 *   tampered closures named more keyings than a PMO holds
 * * EMFILE - no free file descriptor
 * * EINTR - a fatal signal arrived
 */
#define MMT_IOC_RESTORE		_IOWR(MMT_IOC_MAGIC, 0x06, struct mmt_restore)

/**
 * MMT_IOC_PMO_SET_KEY - set the MMT key of a PMO
 *
 * On a PMO fd.  Derives the subkeys (and the secure channel's root key,
 * wiped with them on MMT_IOC_PMO_INVALIDATE and when the PMO is freed),
 * then makes every MMT VALID (formatted to zero plaintext under a fresh
 * GUA) or, with MMT_KEY_RECEIVE, WAITING.  The plain bytes the PMO held
 * do not survive: formatting overwrites them, and a WAITING MMT is not
 * readable.  On an error the PMO stays plain (without MMT_KEY_RECEIVE,
 * all zero).
 * Context: process; takes the PMO's lock (killable); may sleep.
 *
 * Return: 0 on success; -1 with errno set to:
 * * EFAULT, E2BIG - as for every command
 * * EINVAL - bad @size, unknown @flags, @key_len not 16 or 32, or non-zero
 *   bytes of @key past @key_len
 * * EBUSY - the PMO already has a key (MMT_IOC_PMO_INVALIDATE resets it),
 *   or an MMT_IOC_SEND or MMT_IOC_RECV is moving it as plain memory
 * * ENOTTY - the fd is not a PMO
 * * ENOMEM - out of memory for the crypto transforms
 * * EOVERFLOW - the node's GUA sequence is exhausted
 * * ENOKEY - attested mode, and no credential has given the node its id
 *   yet (MMT_IOC_ATTEST_SET_CRED): no GUA is made under an id no
 *   authority assigned (without MMT_KEY_RECEIVE)
 * * EINTR - a signal arrived while the call waited for the kernel's random
 *   number generator to be seeded (right after boot only: the keying salt
 *   is drawn from it), or a fatal signal while it waited for the PMO's
 *   lock; nothing changed
 */
#define MMT_IOC_PMO_SET_KEY	_IOWR(MMT_IOC_MAGIC, 0x10, struct mmt_pmo_key)

/**
 * MMT_IOC_PMO_SET_ROOT_COUNTER - set the initial or minimum root counter
 *
 * On a PMO fd.  Context: process; takes the PMO's lock (killable).
 *
 * The sealing nonce limits root counters to 2^38 - 1; an MMT whose counter
 * reaches it can no longer be written or sealed (EOVERFLOW) until the PMO
 * is invalidated and keyed again.
 *
 * Return: 0; -1 with errno EFAULT, E2BIG, EINVAL (bad size or flags; a
 * VALID MMT's counter would go down; the counter is above 2^38 - 1), or
 * EPERM (no key set, or an MMT is SENDING), EBUSY (a live migration runs
 * from or into the PMO), EUCLEAN (a migration or transfer of unknown
 * outcome: MMT_IOC_PMO_MIG_RESOLVE), EINTR (a fatal signal while it waited for
 * the PMO's lock; nothing changed).
 */
#define MMT_IOC_PMO_SET_ROOT_COUNTER \
	_IOWR(MMT_IOC_MAGIC, 0x11, struct mmt_pmo_counter)

/**
 * MMT_IOC_PMO_INFO - geometry, metadata size and the state of every MMT
 *
 * On a PMO fd.  Context: process; takes the PMO's lock (killable).
 *
 * Return: 0; -1 with errno EFAULT (including a bad @mmts pointer), E2BIG,
 * EINVAL (bad size, flags or reserved fields), ENOMEM, or EINTR (a fatal
 * signal while it waited for the PMO's lock).  @mmt_count is set to
 * min(@mmt_count, @closures).
 */
#define MMT_IOC_PMO_INFO	_IOWR(MMT_IOC_MAGIC, 0x12, struct mmt_pmo_info)

/**
 * MMT_IOC_PMO_INVALIDATE - wipe a PMO: data, metadata and key
 *
 * On a PMO fd; the argument is ignored and must be 0.  Every MMT becomes
 * INVALID and the key is wiped; every byte of the PMO's memory is zeroed,
 * so the PMO is plain memory of zeros (a plain read never returns stale
 * ciphertext); it can be keyed again.  On a plain PMO it zeroes the bytes.
 * Context: process; takes the PMO's lock (killable).
 *
 * It also resolves a migration whose outcome is unknown
 * (MMT_IOC_PMO_MIG_RESOLVE): the owner says the destination committed.
 *
 * Return: 0; -1 with errno EINVAL if the argument is not 0, or EBUSY if an
 * MMT is SENDING, an MMT_IOC_SEND or MMT_IOC_RECV is moving the PMO as
 * plain memory, or a live migration runs from or into it, or EINTR if a
 * fatal signal came while it waited for the PMO's lock (nothing
 * changed).
 */
#define MMT_IOC_PMO_INVALIDATE	_IO(MMT_IOC_MAGIC, 0x13)

/**
 * MMT_IOC_PMO_MIG_RESOLVE - take back a PMO whose checkpoint failed, or
 * by force one whose migration's or transfer's outcome is unknown
 *
 * On a PMO fd; the argument is 0 or MMT_MIG_RESOLVE_FORCE.
 *
 * A PMO checkpointed with MMT_CKPT_PENDING whose dump failed: the
 * checkpoint's record is dropped first (its image can no longer be
 * restored), unless a restore consumed it already; then the PMO is
 * writable again, every MMT re-encrypted under a fresh GUA before its next
 * write or send.  The module knows the answer itself: no flag is needed.
 *
 * After an MMT_IOC_MIGRATE_SEND that failed with MMT_MIG_F_OUTCOME_UNKNOWN
 * (the COMMIT left, no answer that authenticates came back) the PMO is
 * readable but not writable: pwrite(), MMT_IOC_SEND,
 * MMT_IOC_PMO_DELEGATE_LOCAL, MMT_IOC_PMO_SET_ROOT_COUNTER and
 * MMT_IOC_MIGRATE_SEND fail with EUCLEAN, because the destination may hold
 * the one writable copy.  Only the destination knows: its owner resolves
 * the PMO with MMT_IOC_MIGRATE_RESOLVE over a connection to it, which
 * takes an authenticated statement.  This call refuses it (ENOTCONN)
 * unless MMT_MIG_RESOLVE_FORCE is given: then the PMO is writable again
 * on the owner's word, under fresh GUAs (so even a destination that did
 * commit never shares a pad with it), accepting that the data forks if
 * the destination did commit.  For an owner who knows the destination
 * is gone for good (its node destroyed); counted (debugfs mmt/stats
 * "resolves_forced") and logged.  The same holds after an MMT_IOC_SEND in
 * transfer mode that left closures of unknown outcome (see its
 * ECONNRESET): the receiver may hold them writable.
 * Context: process; takes the PMO's lock (killable).
 *
 * Return: 0; -1 with errno EINVAL if the argument is neither 0 nor
 * MMT_MIG_RESOLVE_FORCE, ENOENT if the PMO has no migration, transfer or
 * checkpoint of unknown outcome, ENOTCONN if it is a migration's or a
 * transfer's and the argument is 0, ESTALE if its pending checkpoint
 * was restored (the PMO stays read-only: invalidate it), EBUSY if a
 * restore of that checkpoint runs, or EINTR if a fatal signal came while
 * it waited for the PMO's lock (nothing changed).
 */
#define MMT_IOC_PMO_MIG_RESOLVE	_IO(MMT_IOC_MAGIC, 0x15)
/* MMT_IOC_PMO_MIG_RESOLVE's argument: accept a possible fork */
#define MMT_MIG_RESOLVE_FORCE	1

/**
 * MMT_IOC_PMO_CHECKPOINT - hand a PMO over to a checkpoint image (CRIU)
 *
 * On a PMO fd; needs CAP_CHECKPOINT_RESTORE or CAP_SYS_ADMIN (the CRIU
 * plugin, tools/criu/mmt_criu.c, docs/CRIU.md).  A live migration
 * (MMT_IOC_MIGRATE_SEND, docs/MIGRATION.md) whose destination is the
 * caller's buffer and a record the module keeps: round 1 seals every
 * closure into @buf (format v4, bound to a fresh connection id and a
 * fresh receive nonce, the @handle), later rounds the ones the owner
 * wrote meanwhile (none while CRIU has the process frozen), then the
 * handover (pwrite() blocks), and the COMMIT digest and tag of the last
 * closure of every index go into the record, which holds the PMO's
 * keying (its key's keying root and channel root, and its keying salt;
 * never the key) for MMT_IOC_RESTORE.  Then every MMT of the PMO is
 * INVALID: the image is the one copy, the PMO can no longer be read or
 * written (EPERM), only invalidated.  No plaintext leaves the module.
 * With MMT_CKPT_PENDING (what CRIU's plugin uses: a dump can still fail
 * after the plugin ran) the PMO instead ends as after a migration whose
 * outcome is unknown: every MMT VALID and readable, pwrite() and the calls
 * that would change it failing with EUCLEAN, MMT_PMO_INFO_MIG_UNKNOWN set,
 * until its owner calls MMT_IOC_PMO_INVALIDATE (the dump succeeded: the
 * image is the one copy) or MMT_IOC_PMO_MIG_RESOLVE (it failed: the
 * record is dropped first, so the image can no longer be restored, and
 * the PMO is writable again under fresh GUAs; refused with ESTALE if the
 * image was restored meanwhile).
 * The record belongs to the caller (its euid and user namespace): only
 * it, or a caller with CAP_SYS_ADMIN, may restore it (MMT_IOC_RESTORE).
 * The record lives in the module's memory until MMT_IOC_RESTORE consumes
 * it: unloading the module drops every record, and with them every image
 * made before (their restore fails with ESTALE).
 * With @buf and @buf_len 0 the call only reports @closures and
 * @closure_len and changes nothing.
 * Context: process; sleeps; takes the PMO's lock around each step and
 * the module's checkpoint mutex.
 *
 * Return: 0; -1 with errno set to:
 * * EFAULT, E2BIG - as for every command; EFAULT also when @buf cannot be
 *   written (the PMO is then unchanged: VALID, writable, no record)
 * * EINVAL - bad @size, unknown @flags, non-zero reserved or output
 *   fields, or @buf_len not @closures x @closure_len (or @buf 0 with
 *   @buf_len not 0)
 * * EPERM - the caller lacks CAP_CHECKPOINT_RESTORE and CAP_SYS_ADMIN;
 *   or the PMO has no key (plain memory: the caller saves its bytes), or
 *   an MMT is not VALID or is read-only
 * * EBUSY - the PMO is being sent, received into or migrated
 * * EUCLEAN - its last live migration or transfer has an unknown outcome
 * * EBADMSG - an MMT flagged MMT_INFO_REGUA_DUE still fails verification
 * * EOVERFLOW - an MMT's root counter is exhausted
 * * ENOSPC - MMT_CKPT_MAX checkpoints wait for their restore already
 * * ENOMEM - out of memory for the record or the closure buffer, or the
 *   caller's memory cgroup would go over its limit (both are charged
 *   to it)
 * * EINTR - a signal arrived (the PMO is unchanged); also a fatal signal
 *   while the call waited for the PMO's lock, which a pwrite() whose
 *   buffer faults slowly may hold
 */
#define MMT_IOC_PMO_CHECKPOINT	_IOWR(MMT_IOC_MAGIC, 0x16, struct mmt_checkpoint)

/* Checkpoints that wait for their restore, at most (all users together). */
#define MMT_CKPT_MAX		4096

/**
 * MMT_IOC_PMO_DELEGATE_LOCAL - delegate every closure of this PMO to
 * another PMO of the same node, through the loopback transport
 *
 * On the sending PMO fd.  Closure by closure: the sender's MMT goes
 * SENDING, its closure is built (sealed root, tree nodes, data MACs,
 * ciphertext) and delivered; the receiver unseals and checks it (replay,
 * reorder, geometry, top of the tree; everything with
 * MMT_DELEGATE_EAGER) and goes VALID (read-only for MMT_DELEGATE_COPY);
 * then the sender goes INVALID (transfer) or back to VALID (copy).  A
 * rejected closure leaves both MMTs as they were (sender VALID with its
 * data, receiver WAITING), except that the sender's root counter has moved
 * on (the closure was sealed before the receiver checked it) and, in
 * transfer mode, the sender's MMT was re-encrypted under a fresh GUA (a
 * rejection is not authenticated: the receiver might hold a writable copy).
 * Re-encrypting verifies the whole MMT first.  If that fails (the MMT's own
 * memory fails verification, the usual reason an eager receiver rejects it
 * with EBADMSG; or GUAs are exhausted) the MMT stays VALID and readable
 * under its old GUA, flagged MMT_INFO_REGUA_DUE: it is not written or sent
 * under that GUA, and its next write or send re-encrypts it first, failing
 * with EBADMSG and changing nothing while its memory still fails, going
 * through under a fresh GUA (the flag cleared) once it verifies again.
 * Reads return every block that verifies meanwhile.  The same holds for
 * MMT_IOC_SEND.  Earlier closures stay delivered.  Each call is a new
 * (loopback) connection.
 * Context: process; takes each PMO's lock in turn, never both; may sleep.
 *
 * Return: 0 on success; -1 with errno set to:
 * * EFAULT, E2BIG, EINVAL - bad argument (size, flags, reserved fields)
 * * EBADF - @dst_fd is not an open file; ENOTTY - it is not a PMO
 * * EINVAL - @dst_fd is this PMO
 * * EMEDIUMTYPE - the PMOs differ in geometry or size
 * * EBUSY - another receive is filling the receiver (a connection's
 *   MMT_IOC_RECV, or another local delegation into it); nothing changed
 * * EPERM - the sender is not VALID or read-only, or the receiver not
 *   WAITING; also when the receiver is invalidated during the delegation
 *   (the closures from there on are refused, also if it is keyed again
 *   meanwhile; earlier ones stay delivered, then wiped with it)
 * * EBADMSG - the closure failed authentication (different key, tamper);
 *   or the sender's MMT failed verification as it was re-encrypted before
 *   sealing (flagged MMT_INFO_REGUA_DUE, or sent before from this PMO):
 *   that MMT is unchanged
 * * ESTALE - replay: root counter not above the receiver's minimum
 * * EILSEQ - reorder: GUA not above the previous closure's
 * * ENOMEM - no memory for the closure buffer
 * * EOVERFLOW - the sender's root counter is exhausted
 * * EUCLEAN - the sender's last live migration or transfer has an
 *   unknown outcome (MMT_IOC_PMO_MIG_RESOLVE)
 * * EINTR - a fatal signal came while the call waited for a PMO's lock
 *   (which a pwrite() whose buffer faults slowly may hold): the closure
 *   it waited for is untouched, earlier ones stay delivered
 */
#define MMT_IOC_PMO_DELEGATE_LOCAL \
	_IOWR(MMT_IOC_MAGIC, 0x14, struct mmt_delegate_local)

/**
 * MMT_IOC_PMO_DEBUG - flip bits of a PMO's untrusted backing memory
 *
 * On a PMO fd, only in modules built with MMT_DEBUG=1 (MMT_FEAT_DEBUG);
 * otherwise -ENOTTY.  Simulates an attacker with physical or NIC access.
 * Needs CAP_SYS_ADMIN.  Context: process; takes the PMO's lock (killable).
 *
 * Return: 0; -1 with errno EFAULT, E2BIG, EINVAL (bad region, closure,
 * offset, zero mask, reserved), EPERM, ENOTTY, or EINTR (a fatal signal
 * while it waited for the PMO's lock).
 */
#define MMT_IOC_PMO_DEBUG	_IOWR(MMT_IOC_MAGIC, 0x7f, struct mmt_pmo_debug)

/**
 * MMT_IOC_LISTEN - listen for connections (rdma_cm) on an address and port
 *
 * On /dev/mmt.  The address may be the IPv4 or IPv6 any address (all
 * zero); an IPv6 any address also accepts IPv4 peers unless the system's
 * bindv6only says otherwise.  The listener fd works until it is closed
 * (closing it drops the connections not yet accepted) or its RDMA device
 * is removed (then poll() reports POLLHUP).  The connections it takes in
 * (their state and receive ring, made as each request arrives) are
 * charged to the memory cgroup of this call's caller, as if it had made
 * them (a request whose connection cannot be allocated is rejected).
 * Context: process; may sleep.
 *
 * Return: 0 (the listener fd is in the argument); -1 with errno set to:
 * * EFAULT, E2BIG, EINVAL - bad argument (size, flags, family, port 0,
 *   backlog, reserved fields)
 * * EADDRINUSE - the port is taken
 * * EADDRNOTAVAIL - no RDMA device for that address
 * * EOPNOTSUPP - the module was built without RDMA (no MMT_FEAT_RDMA)
 * * EMFILE, ENOMEM
 */
#define MMT_IOC_LISTEN		_IOWR(MMT_IOC_MAGIC, 0x20, struct mmt_listen)

/**
 * MMT_IOC_CONNECT - connect to a listening peer; returns a connection fd
 *
 * On /dev/mmt.  Resolves the address and the route (the RDMA device
 * follows the route), creates one RC QP and connects; the private data
 * carries a hello (protocol version, node id).  In attested mode
 * (docs/ATTESTATION.md, "The hello") both sides then exchange their
 * credentials and X25519 shares on the connection and confirm a
 * handshake secret before the fd exists; the peer, which runs its half
 * in MMT_IOC_ACCEPT, must accept within @timeout_ms.
 * A connection that was established and then closed by the peer before
 * this call returned (a listener that accepts and closes at once) is
 * returned all the same, as MMT_IOC_ACCEPT and connect(2) do: its fd
 * reports POLLHUP, its transfers ECONNRESET.  Not in attested mode,
 * where the handshake still needs the peer.
 * Context: process; sleeps.
 *
 * Return: 0; -1 with errno set to:
 * * EFAULT, E2BIG, EINVAL - bad argument (also non-zero @fd or
 *   @peer_node on input)
 * * ECONNREFUSED - nobody listens there, the peer's backlog is full, or
 *   the peer rejected us (also: the peer is in attested mode without a
 *   credential yet)
 * * EKEYREJECTED - one side is in attested mode and the other is not;
 *   or attested: the peer's credential does not verify under the
 *   authority, names another node id than its hello, names this node's
 *   own node id or node key (this node's hello reflected back to it), or
 *   names a node id bound to another node key on this node; a
 *   key-confirmation tag does not verify (a key share changed on the way); or the peer refused ours
 *   for one of these reasons
 * * EKEYEXPIRED - attested: the peer's credential is outside its validity
 *   (or the peer found ours so)
 * * ENOKEY - attested mode, and this node has no credential yet
 * * ECONNRESET - the connection was reset before it was established (or,
 *   attested, before the handshake ended): the peer dropped it (it closed
 *   its listener before accepting), a QP error, or the RDMA device went
 *   away
 * * EHOSTUNREACH / ENETUNREACH - no address, no route or no RDMA device
 * * ETIMEDOUT - @timeout_ms passed
 * * EPROTO - the peer speaks another protocol version, or its hello (or,
 *   attested, a handshake message) is malformed; also a malformed message
 *   from the peer that arrived before the connection was established
 * * EINTR - a signal arrived
 * * EOPNOTSUPP - no RDMA in this module, or the device lacks fast memory
 *   registration
 * * EMFILE, ENFILE, ENOMEM
 */
#define MMT_IOC_CONNECT		_IOWR(MMT_IOC_MAGIC, 0x21, struct mmt_connect)

/**
 * MMT_IOC_ACCEPT - accept the next connection on a listener fd
 *
 * On a listener fd.  Context: process; sleeps.
 *
 * @addr must be zero on input.
 *
 * A connection that was established and then closed by the peer before
 * it was accepted is still returned (its fd reports POLLHUP, transfers
 * ECONNRESET); handshakes that failed are dropped.
 *
 * In attested mode the accepting side's half of the attested handshake
 * runs here (docs/ATTESTATION.md, "The hello"), bounded by @timeout_ms; a
 * connection whose handshake fails is dropped and its error returned.
 * A peer in the other mode never reaches the accept queue (it is refused
 * in rdma_cm, debugfs mmt/stats hs_rejected).
 *
 * Return: 0; -1 with errno EFAULT, E2BIG, EINVAL, ETIMEDOUT, EINTR,
 * ECONNABORTED (the listener's device went away), ENOTTY (not a listener
 * fd); attested mode: EKEYREJECTED, EKEYEXPIRED (as for MMT_IOC_CONNECT),
 * ENOKEY (this node's credential went away), ECONNREFUSED (the peer
 * refused for another reason), EPROTO (a malformed handshake message),
 * ECONNRESET (the peer went away during the handshake), ENOMEM; EMFILE,
 * ENFILE (no fd for the connection: it is dropped).
 */
#define MMT_IOC_ACCEPT		_IOWR(MMT_IOC_MAGIC, 0x22, struct mmt_connect)

/**
 * MMT_IOC_SEND - send a PMO to the peer over a channel
 *
 * On a connection fd.  MMT channel: delegation, closure by closure, with
 * a bounded number in flight; each sender MMT goes SENDING, then INVALID
 * (transfer) or VALID (copy) when the receiver acks it.  Plain channel
 * (the raw RDMA baseline): plain PMOs only (no key); each closure's bytes
 * are RDMA-written straight from the sender PMO's memory into the
 * receiver PMO's memory, with the MMT channel's grants and window; no
 * bounce buffer, no crypto, nothing checked; copy and transfer mode are
 * the same (plain memory has no owner; the sender's bytes stay).  Secure
 * channel: each closure's plaintext is AES-128-GCM encrypted into a bounce
 * buffer, one message per closure, under a key bound to this connection,
 * direction and transfer, with a nonce per message (docs/CONNECTIONS.md),
 * RDMA-written, copied out at the receiver and decrypted.  On plain PMOs
 * (the paper's secure-channel baseline) the plaintext is read from and
 * written to the PMOs' memory directly and the key is derived from the
 * connection's key (MMT_IOC_CONN_SET_KEY); on keyed PMOs it is read and
 * written through the controller and the key is derived from the PMOs'
 * key (both must have the same one).  The sender's PMO stays unchanged.
 * The transfer stops at the first closure the receiver rejects: closures
 * acked before it stay delivered, the rest stay VALID.
 * ECONNRESET, ETIMEDOUT and EINTR end the connection (poll() reports
 * POLLHUP; connect again); the other errors leave it usable, and so does
 * an EINTR before the offer is sent.
 * Context: process; sleeps; takes the connection's send mutex
 * (interruptible: one send or migration at a time in this direction),
 * the PMO's lock (killable) around each step.
 *
 * Return: 0; -1 with errno set to:
 * * EFAULT, E2BIG, EINVAL - bad argument (MMT_XFER_EAGER is for the
 *   receiver)
 * * E2BIG - 2^24 closures or more; secure and plain channels: more than
 *   64 MiB of data per closure
 * * EBADF / ENOTTY - @pmo_fd is not a PMO
 * * EPERM - an MMT is not VALID or is read-only (read-only: MMT channel);
 *   MMT channel: the PMO has no key; plain channel: the PMO has a key
 *   (the plain channel moves plain memory)
 * * ENOKEY - secure channel on a plain PMO: the connection has no key
 *   (MMT_IOC_CONN_SET_KEY)
 * * EUCLEAN - the PMO's last live migration or transfer has an unknown
 *   outcome (MMT_PMO_INFO_MIG_UNKNOWN: MMT_IOC_MIGRATE_RESOLVE)
 * * EOVERFLOW - 2^32 - 1 transfers were sent on this connection (their
 *   generations never repeat: connect again); also when an MMT's counters
 *   are exhausted as it is sealed (MMT channel)
 * * EMEDIUMTYPE - the receiver's PMO differs in geometry or size, or
 *   (secure channel) one of the two PMOs is plain and the other keyed
 * * EPROTO - the receiver asked for another channel (or rejected a
 *   closure with a bad magic, below)
 * * ECONNRESET - the peer went away (disconnect, QP error, device
 *   removal, a protocol violation), or (MMT channel) an acceptance
 *   arrived that does not authenticate (forged on the wire: counted in
 *   debugfs mmt/stats ack_forged).  Every MMT not acked is VALID again, its data intact.
 *   Copy mode: writable as before.  Transfer mode, when closures were
 *   posted whose verdicts never came: the receiver may have taken them in
 *   and lost only the ACKs (DESIGN.md section 5), so the PMO is read-only,
 *   MMT_PMO_INFO_MIG_UNKNOWN (pwrite() and sends fail with EUCLEAN), until
 *   MMT_IOC_MIGRATE_RESOLVE over a connection to the receiver's node gets
 *   its authenticated statement (outcome MMT_MIG_OUTCOME_ENDED: the
 *   closures it took in become INVALID here, the rest writable, each under
 *   a fresh GUA before its next write or send), or its owner forces it
 *   (MMT_IOC_PMO_MIG_RESOLVE) or invalidates it; counted in debugfs
 *   mmt/stats xfer_unknown.  An MMT that failed verification as it was
 *   re-encrypted stays flagged MMT_INFO_REGUA_DUE (see
 *   MMT_IOC_PMO_DELEGATE_LOCAL)
 * * ETIMEDOUT - the peer did not answer in @timeout_ms; as ECONNRESET
 * * EINTR - a signal arrived; as ECONNRESET.  Also a fatal signal while
 *   the call waited for the PMO's lock (a pwrite() whose buffer faults
 *   slowly may hold it): before the offer is sent (the PMO's checks, the
 *   secure channel's key) nothing has changed and the connection stays;
 *   while a closure is sealed, as ECONNRESET (that closure untouched)
 * * EKEYEXPIRED - attested connection: it was closed because a credential
 *   one side holds of the other expired (not renewed in time); as
 *   ECONNRESET for a transfer it cut off
 * * EKEYREJECTED - attested connection: it was closed because a renewed
 *   credential the peer sent did not verify; as ECONNRESET
 * * EBADMSG, ESTALE, EILSEQ, EMSGSIZE, EPROTO, EPROTONOSUPPORT,
 *   EMEDIUMTYPE, EXDEV - the receiver rejected a closure for that reason
 *   (see MMT_IOC_RECV); that MMT is VALID again.  EBADMSG
 *   also when the sender's own keyed PMO fails verification as it is read
 *   (secure channel), or (MMT channel) an MMT flagged MMT_INFO_REGUA_DUE
 *   still fails verification as it is re-encrypted before sealing; the
 *   receiver then gets ECANCELED.  Secure channel: EBADMSG when the
 *   receiver has another key (its PMO's, or the connection's for plain
 *   PMOs), or the message was changed, on the first closure.  ESTALE also
 *   when the receiver refused the offer's generation as already used (any
 *   channel)
 * * ENOSPC - MMT channel: the receive PMO already holds closures of
 *   four other keyings and cannot take another sender's
 * * EREMOTEIO - the receiver failed on its side, for a reason that is not a
 *   verdict on the closure: its PMO was invalidated during the receive
 *   (its MMT_IOC_RECV fails with EPERM), or another local error (a memory
 *   registration); its MMT_IOC_RECV says which.  As for a rejection, that
 *   MMT is VALID again (transfer mode: under a fresh GUA), earlier closures
 *   stay delivered and the connection stays usable
 * * ENOMEM - out of memory for the transfer's buffers, registrations or
 *   (secure channel) cipher state; as the local errors above, the MMTs
 *   not acked are VALID again.  Also an answer of the receiver, which ran
 *   out of memory
 * * ENOENT - secure channel: the kernel has no "gcm(aes)" (crypto API)
 * * EBUSY - a live migration runs from or into the PMO (MMT_IOC_MIGRATE_*)
 */
#define MMT_IOC_SEND		_IOWR(MMT_IOC_MAGIC, 0x23, struct mmt_xfer)

/**
 * MMT_IOC_RECV - receive a PMO from the peer into @pmo_fd
 *
 * On a connection fd.  Registers the PMO's memory (secure channel: a bounce
 * buffer) for remote write, one closure at a time, with a fresh rkey (only
 * for that closure; invalidated afterwards), advertises it to the peer and
 * waits until every closure has landed and been checked.  Plain channel:
 * nothing is checked; the closure's bytes are what the peer wrote.
 * poll() on the connection fd reports POLLIN when the peer has a PMO to
 * send (and POLLHUP | POLLERR once the connection is gone).  Waiting for
 * the offer may time out (ETIMEDOUT) or be interrupted (EINTR) without
 * harm to the connection; once the transfer has started, ECONNRESET,
 * ETIMEDOUT and EINTR end the connection.  The root-counter and GUA
 * floors (replay and reorder within the transfer) start over with each
 * MMT_IOC_RECV; no closure built for another receive is accepted (each
 * receive draws a nonce that every closure must carry, closure format v2).
 * One receive at a time fills a PMO.
 * Context: process; sleeps; takes the connection's receive mutex
 * (interruptible), the PMO's lock (killable) around each step.
 *
 * Return: 0; -1 with errno set to:
 * * EFAULT, E2BIG, EINVAL - bad argument (MMT_XFER_COPY is the sender's)
 * * EBADF / ENOTTY - @pmo_fd is not a PMO
 * * EBUSY - another receive (on any connection, or a local delegation) is
 *   filling the PMO
 * * EPERM - MMT channel: the PMO has no key or is not WAITING; plain
 *   channel: the PMO has a key; secure channel: a keyed PMO is not VALID
 *   and writable; also when a keyed PMO is invalidated during the receive
 *   (the closures from there on are refused; the sender gets EREMOTEIO;
 *   the connection stays usable)
 * * ENOKEY - secure channel on a plain PMO: the connection has no key
 *   (MMT_IOC_CONN_SET_KEY)
 * * EMEDIUMTYPE - the sender's PMO differs in geometry or size, or (secure
 *   channel) one of the two PMOs is plain and the other keyed; EPROTO -
 *   the sender named another channel (the offer is refused)
 * * EBADMSG - tamper (data, data MAC, tree node, sealed root or an
 *   authenticated header field) or wrong key; data and data MACs are
 *   checked here only with MMT_XFER_EAGER, otherwise on each read (pread
 *   fails with EBADMSG); ESTALE - a closure built for another receive
 *   (an earlier transfer, the other direction, another connection), or
 *   replay of a closure older than the last accepted or the replay floor,
 *   or an offer whose generation does not rise (any channel); EILSEQ -
 *   reorder, or a closure in another closure's place (the header's seq,
 *   checked before the root, binds it to its index); EMSGSIZE - bad
 *   lengths, also a valid geometry other than the PMO's (its section
 *   lengths are checked first); EPROTO/EPROTONOSUPPORT - bad magic or
 *   version or suite (format v1 is refused); ENOSPC - the closure names a
 *   keying the PMO cannot hold any more (four other keyings);
 *   EMEDIUMTYPE - a geometry that is not valid, or (same
 *   lengths) not the PMO's; EXDEV - a closure of another connection or
 *   sender.
 *   The MMT that failed stays WAITING; earlier ones are VALID.
 *   Secure channel: EBADMSG - a message failed AES-GCM authentication
 *   (another key at either side, tamper, a message of another connection,
 *   transfer or closure; the MMT that failed is unchanged, its old data);
 *   a message index out of order breaks the connection: ECONNRESET.  Earlier closures hold the data
 *   received.  Counted in debugfs mmt/stats.
 * * ECANCELED - the sender stopped before sending every closure
 * * E2BIG - 2^24 closures or more; secure and plain channels: more than
 *   64 MiB of data per closure
 * * ENOMEM - out of memory for the transfer's buffers, registrations or
 *   (secure channel) cipher state; the MMTs not received are unchanged
 * * ENOENT - secure channel: the kernel has no "gcm(aes)" (crypto API)
 * * EOVERFLOW - secure channel on keyed PMOs: a counter of an MMT written
 *   through the controller is exhausted (invalidate and re-key the PMO)
 * * ECONNRESET, ETIMEDOUT, EINTR - the peer went away, did not answer, or
 *   a signal arrived; MMTs not received stay WAITING.  EINTR also when a
 *   fatal signal came while the call waited for the PMO's lock (a
 *   pwrite() whose buffer faults slowly may hold it): before the offer
 *   (the PMO's checks) nothing has changed and the connection stays; at
 *   the secure channel's key the offer is refused (the sender gets
 *   EREMOTEIO) and the connection stays; while a closure is checked or
 *   written, the receive ends as for a signal (that MMT unchanged, still
 *   WAITING on the MMT channel)
 */
#define MMT_IOC_RECV		_IOWR(MMT_IOC_MAGIC, 0x24, struct mmt_xfer)

/**
 * MMT_IOC_CONN_SET_KEY - set the connection's secure-channel key
 *
 * On a connection fd; once per connection (until key agreement exists,
 * DESIGN.md section 9, both sides' owners set the same key).  The secure
 * channel on plain PMOs, which have no key of their own, derives each
 * transfer's AES-GCM key from it, bound to the connection, direction and
 * transfer as with a PMO's key (docs/CONNECTIONS.md).  Keyed PMOs do not
 * use it.  The key is wiped when the connection fd is closed.
 * Context: process; may sleep.
 *
 * Return: 0; -1 with errno set to:
 * * EFAULT, E2BIG - as for every command
 * * EINVAL - bad @size, non-zero @flags, @key_len not 16 or 32, or non-zero
 *   bytes of @key past @key_len
 * * EBUSY - the connection already has a key
 * * ENOMEM - out of memory for the key derivation
 * * ENOTTY - the fd is not a connection
 */
#define MMT_IOC_CONN_SET_KEY	_IOWR(MMT_IOC_MAGIC, 0x25, struct mmt_conn_key)

/**
 * MMT_IOC_MIGRATE_SEND - migrate a PMO live to the peer (source side)
 *
 * On a connection fd; the peer runs MMT_IOC_MIGRATE_RECV.  Pre-copy
 * migration (docs/MIGRATION.md): every closure is sealed and sent once
 * while the PMO's owner goes on writing, then, round after round, the
 * closures written since they were sent (an MMT is dirty when its root
 * counter moved past the one sealed into the last closure of it sent),
 * until nothing is dirty, the expected downtime (dirty closures times
 * the measured time per closure) is at most @downtime_limit_ms, or
 * MMT_IOC_MIGRATE_FINISH asks (a forced handover: its downtime is
 * whatever it takes).  Once rounds stop converging (a round leaves more
 * than half of what it sent dirty, twice), writers are throttled:
 * 20 %, then 10 % more every second such round, at most 99 % (QEMU's
 * auto-converge; each pwrite() sleeps after it wrote, at most the
 * downtime limit).  If @max_rounds rounds were made and the expected
 * downtime is still above the limit, the handover is refused: the
 * migration fails with ETIME, the writers were never frozen, the PMO is
 * VALID, writable and holds its data, the destination's receive fails
 * with ECANCELED (every MMT WAITING) and the connection stays up.  The
 * figures say why pre-copy ended (@stop) and how far the writers were
 * throttled (@throttle_pct, @throttle_ns).  Then the handover: pwrite() on
 * the PMO blocks, interruptibly (EINTR on a signal, nothing written),
 * the dirty rest is sent, and an authenticated COMMIT names the GUA and
 * root counter of the last closure sent of every index; the destination
 * checks it against what it holds and becomes the one writable copy.
 * Only on its authenticated answer does every MMT of the PMO become
 * INVALID (blocked writers then fail with EPERM; reads fail with EPERM;
 * MMT_IOC_PMO_INVALIDATE makes the PMO reusable).  At most @window
 * closures are in flight, each a snapshot in a buffer of this call, so the
 * owner's writes never wait for the network before the handover, and the
 * extra memory is @window closures whatever the PMO's size.
 *
 * On any failure before the COMMIT left, or after an authenticated
 * refusal of it, the PMO is VALID, writable and holds its data; the
 * destination keeps nothing readable or writable.  If the COMMIT left
 * and no answer that authenticates came back (lost, forged, the deadline
 * passed, a signal, MMT_IOC_MIGRATE_ABORT; MMT_MIG_F_OUTCOME_UNKNOWN in
 * the figures), the destination may have committed: the PMO stays VALID
 * and readable but is not writable (pwrite() and sends fail with
 * EUCLEAN) until its owner, having asked the destination's owner, calls
 * MMT_IOC_PMO_MIG_RESOLVE (the destination did not commit: every MMT is
 * re-encrypted under a fresh GUA before its next write or send) or
 * MMT_IOC_PMO_INVALIDATE (it did).  A migration that fails after its offer left ends the
 * connection (poll() reports POLLHUP; connect again), except a refused
 * handover (ETIME); one refused by the checks here (EBADF, EPERM, EBUSY,
 * ...) does not.  The figures (struct
 * mmt_migrate_info) are copied to @info also after an error, and stay
 * readable with MMT_IOC_MIGRATE_INFO; a migration refused before it
 * started (E2BIG, EOVERFLOW, ENOMEM for its record, the connection not
 * live: ECONNRESET, ETIMEDOUT) gets figures of its own, zero but for
 * @size, phase MMT_MIG_PHASE_FAILED, @error and MMT_MIG_F_SOURCE, never
 * those of an earlier migration (MMT_IOC_MIGRATE_INFO still reports the
 * earlier one).
 * Context: process; sleeps; takes the connection's send mutex (one send
 * or migration at a time in this direction), the PMO's lock around each
 * step.
 *
 * Return: 0 (the destination committed); -1 with errno set to:
 * * EFAULT, E2BIG - as for every command (also a bad @info pointer or
 *   struct mmt_migrate_info size; EFAULT also an @info that cannot be
 *   written: found before anything is sent.  A migration that committed
 *   returns 0 even if @info could not be written at its end: the
 *   figures stay with MMT_IOC_MIGRATE_INFO)
 * * EINVAL - bad @size, unknown @flags (MMT_MIGRATE_EAGER is the
 *   receiver's), non-zero reserved fields, @timeout_ms,
 *   @downtime_limit_ms, @max_rounds or @window out of range
 * * EBADF / ENOTTY - @pmo_fd is not a PMO
 * * EPERM - the PMO has no key, or an MMT is not VALID or is read-only
 * * EBUSY - the PMO is being sent, received into or migrated
 * * EUCLEAN - the PMO's previous migration or transfer has an unknown
 *   outcome (MMT_IOC_PMO_MIG_RESOLVE)
 * * EBADMSG - an MMT flagged MMT_INFO_REGUA_DUE still fails verification
 *   as it is re-encrypted at the start (nothing sent); or the destination
 *   rejected a closure or the COMMIT as tampered
 * * ESTALE, EILSEQ, EMSGSIZE, EPROTO, EPROTONOSUPPORT, EMEDIUMTYPE,
 *   EXDEV - the destination rejected a closure or the COMMIT for that
 *   reason (MMT_IOC_MIGRATE_RECV), or refused the offer (EMEDIUMTYPE:
 *   another geometry or size; EPROTO: it is not migrating; ESTALE: the
 *   generation; EBUSY, EPERM: its PMO)
 * * EREMOTEIO - the destination refused a closure or the COMMIT for a
 *   reason of its own that says nothing about the data (its receive was
 *   aborted, MMT_IOC_MIGRATE_ABORT there: ECANCELED; its PMO was
 *   invalidated: EPERM; a registration failed); a refusal of the COMMIT
 *   counts only if its tag authenticates (the outcome is then known: the
 *   PMO stays writable), else it is dropped as forged
 * * ECANCELED - MMT_IOC_MIGRATE_ABORT
 * * EINTR - a signal arrived; also a fatal signal while the call waited
 *   for the PMO's lock at the start (nothing sent, the connection stays)
 * * ETIME - the handover was refused: after @max_rounds rounds the
 *   expected downtime was still above @downtime_limit_ms (struct
 *   mmt_migrate_info @stop is MMT_MIG_STOP_ROUNDS); the PMO is VALID,
 *   writable, untouched; the connection stays up (try again with a
 *   larger limit, more rounds, or MMT_IOC_MIGRATE_FINISH)
 * * ECONNRESET, ETIMEDOUT - the peer went away or did not answer within
 *   @timeout_ms (ETIMEDOUT also: the handover, from the freeze to a
 *   genuine answer to the COMMIT, took longer)
 * * EOVERFLOW - 2^32 - 1 transfers were sent on this connection, or an
 *   MMT's root counter is exhausted
 * * E2BIG - 2^24 closures or more
 * * ENOMEM - out of memory for the snapshots, registrations or
 *   bookkeeping
 * * EOPNOTSUPP - the module was built without RDMA
 */
#define MMT_IOC_MIGRATE_SEND	_IOWR(MMT_IOC_MAGIC, 0x26, struct mmt_migrate)

/**
 * MMT_IOC_MIGRATE_RECV - receive a live migration into a PMO (destination)
 *
 * On a connection fd.  Waits for the peer's migration offer (another
 * offer is refused, NACK EPROTO; poll() reports POLLIN when one waits),
 * draws a fresh receive nonce, and lets closures land in place, in the
 * PMO's own memory, as the peer asks for them (at most the sender's
 * window in flight, each registered with a fresh rkey only while
 * awaited).  Every closure is checked as MMT_IOC_RECV checks one, with
 * per-index freshness instead of the transfer-wide replay and order rules:
 * a closure's root counter must be above the one that landed for its
 * index, and its GUA the same.  A landed MMT is LANDING: neither readable
 * nor writable.  The COMMIT must authenticate and name exactly what
 * landed; then every MMT becomes VALID and writable at once.  A closure
 * of another migration, receive, connection or destination is refused,
 * and a migration stream is good for one receive only.
 * Context: process; sleeps; takes the connection's receive mutex, the
 * PMO's lock around each step.
 *
 * Once the COMMIT checked the receive has succeeded, whatever happens
 * after (its answer cannot be sent, the connection fails: the connection
 * is ended, the sender's outcome is then unknown and its PMO read-only
 * until its owner resolves it): the call returns 0 and the figures say
 * MMT_MIG_PHASE_COMMITTED.  A COMMIT that arrives while a closure is
 * still granted (registered for remote write) is refused with EPROTO.
 *
 * With MMT_MIGRATE_PARK the module also takes a reference to the PMO's
 * file in a one-time record named by the receive nonce (the figures'
 * @nonce, which the source learns too), in the same call as the commit:
 * a receiver that dies after it loses nothing.  The record is made ready
 * before the offer is taken (so it cannot fail after the commit) and
 * dropped if the receive fails.  MMT_IOC_RESTORE with that handle and no
 * buffer gives the PMO a new fd, once, when no other fd refers to it
 * (the receiver closes its own); the record belongs to the receiving
 * caller (its euid and user namespace), and anyone else needs
 * CAP_SYS_ADMIN to restore it.  The module stays loaded while a PMO is
 * parked (its file holds the module).  docs/CRIU.md section 6.
 *
 * Return: 0 (committed: the PMO is VALID and writable); -1 with errno set
 * to:
 * * EFAULT, E2BIG, EINVAL - bad argument (@downtime_limit_ms and
 *   @max_rounds must be 0; @window 0 or 1..MMT_MIGRATE_WINDOW_MAX: the
 *   largest window taken, else the offer is refused with E2BIG).  EFAULT
 *   also an @info that cannot be read or written: found before anything
 *   is received (no record parked).  Once committed the call returns 0
 *   even if @info could not be written at its end (the figures, and the
 *   handle of a parked PMO, stay with MMT_IOC_MIGRATE_INFO)
 * * EPERM - MMT_MIGRATE_PARK without CAP_CHECKPOINT_RESTORE or
 *   CAP_SYS_ADMIN (nothing was received)
 * * ENOSPC - MMT_MIGRATE_PARK with MMT_CKPT_MAX records waiting (nothing
 *   was received)
 * * EBADF / ENOTTY - @pmo_fd is not a PMO
 * * EPERM - the PMO has no key or an MMT is not WAITING
 * * EBUSY - another receive fills the PMO, or it is being migrated
 * * EMEDIUMTYPE - the offer's geometry or size differs; EPROTO - the peer
 *   offered a transfer, not a migration; ESTALE - the offer's generation
 *   does not rise; E2BIG - its window is above ours (the offer is refused
 *   with that errno, which ends the sender's migration and the
 *   connection)
 * * EBADMSG, ESTALE, EILSEQ, EMSGSIZE, EPROTO, EPROTONOSUPPORT,
 *   EMEDIUMTYPE, EXDEV, ENOSPC - a closure was rejected, as MMT_IOC_RECV
 *   says, plus ESTALE for a root counter not above the landed one of its
 *   index and EILSEQ for another GUA; or the COMMIT was (EBADMSG: it does
 *   not authenticate; ESTALE: it names another state than what landed;
 *   EPROTO: it came while a closure was still granted).
 *   Counted in debugfs mmt/stats.  The migration fails: nothing is
 *   readable or writable (every MMT WAITING)
 * * ECANCELED - the sender stopped before the COMMIT (also: it refused
 *   the handover at its round limit, ETIME there; the connection stays
 *   up)
 * * ECONNRESET, ETIMEDOUT, EINTR - the peer went away, did not answer,
 *   or a signal arrived; every MMT WAITING
 * * ENOMEM - out of memory for registrations
 * * EOPNOTSUPP - the module was built without RDMA
 */
#define MMT_IOC_MIGRATE_RECV	_IOWR(MMT_IOC_MAGIC, 0x27, struct mmt_migrate)

/**
 * MMT_IOC_MIGRATE_INFO - figures of the connection's migration
 *
 * On a connection fd, from any thread, while MMT_IOC_MIGRATE_SEND or
 * MMT_IOC_MIGRATE_RECV runs (live figures) or after it (final ones): the
 * migration started last on the connection, either side.  Marks them
 * seen: poll() reports POLLPRI again only after they change (a closure,
 * a round, a phase).  The command's number encodes
 * MMT_MIGRATE_INFO_SIZE_VER0 whatever the struct's size: its @size says
 * which version the caller knows (the number stays the same as the
 * struct grows).  Context: process; takes spinlocks only.
 *
 * Return: 0; -1 with errno EFAULT, E2BIG, EINVAL (bad size, flags or
 * reserved fields), ENOENT (no migration was started on this connection).
 */
#define MMT_IOC_MIGRATE_INFO \
	_IOC(_IOC_READ | _IOC_WRITE, MMT_IOC_MAGIC, 0x28, \
	     MMT_MIGRATE_INFO_SIZE_VER0)

/**
 * MMT_IOC_MIGRATE_FINISH - hand over now
 *
 * On a connection fd, from any thread while MMT_IOC_MIGRATE_SEND runs in
 * pre-copy: the round stops after the closure in flight and the handover
 * starts, whatever the expected downtime (the writers are frozen for
 * whatever the handover takes: the downtime limit does not hold; the
 * figures say MMT_MIG_STOP_FINISH).  The argument must be 0.
 * Context: process; takes spinlocks only.
 *
 * Return: 0; -1 with errno EINVAL (argument not 0), ENOENT (no migration
 * is being sent on this connection).
 */
#define MMT_IOC_MIGRATE_FINISH	_IO(MMT_IOC_MAGIC, 0x29)

/**
 * MMT_IOC_MIGRATE_ABORT - stop the connection's running migration
 *
 * On a connection fd, from any thread: the running MMT_IOC_MIGRATE_SEND
 * fails with ECANCELED (before the COMMIT left: the source intact and
 * writable, the destination WAITING; after it: as a lost answer, see
 * MMT_IOC_MIGRATE_SEND), a running MMT_IOC_MIGRATE_RECV with ECANCELED
 * (a COMMIT not yet handled is then refused).  The argument must be 0.
 * Context: process; takes spinlocks only.
 *
 * Return: 0; -1 with errno EINVAL (argument not 0), ENOENT (no migration
 * runs on this connection).
 */
#define MMT_IOC_MIGRATE_ABORT	_IO(MMT_IOC_MAGIC, 0x2a)

/**
 * MMT_IOC_CONN_KEY_AGREE - agree on a fresh MMT key with the peer and key
 *	a PMO with it (attested connections; docs/ATTESTATION.md, "MMT key
 *	agreement")
 *
 * On a connection fd made in attested mode; both sides call it, each
 * naming its own PMO (the sender's usually without, the receiver's with
 * MMT_KEY_RECEIVE).  Each draws an ephemeral X25519 key and sends its
 * public half; both derive the key with HKDF-SHA256 from the shared
 * secret, salted with the connection's handshake secret (so bound to
 * both credentials and to the connection) and bound to the agreement's
 * number and both shares, confirm it with tags, and key the PMO as
 * MMT_IOC_PMO_SET_KEY would.  The key never reaches user space, and every
 * agreement gives another key (fresh shares).  Agreements on a
 * connection run one at a time and in the same order on both sides.  A
 * failure after the first message (a timeout, a signal, a tag that does
 * not verify, a malformed message) ends the connection (poll() reports
 * POLLHUP); the PMO is then not keyed.  An agreement is done once the
 * peer's tag verified and this side's confirmation reached the peer (its
 * SEND completed): a peer that closes the connection as soon as its call
 * returned does not fail it.  MMT_IOC_PMO_SET_KEY still works, in
 * attested mode too.
 * Context: process; sleeps.
 *
 * Return: 0; -1 with errno set to:
 * * EFAULT, E2BIG - as for every command
 * * EINVAL - bad @size, flags other than MMT_KEY_RECEIVE, @key_len not 16
 *   or 32, @timeout_ms above 600000, non-zero @seq or @reserved
 * * EBADF, ENOTTY - @pmo_fd is not a PMO fd (ENOTTY also: the fd is not a
 *   connection)
 * * ENOKEY - the connection was not made in attested mode (no handshake
 *   secret to bind the key to)
 * * EBUSY - the PMO has a key, or a transfer uses it as plain memory
 *   (checked before any message; if it is keyed by another thread during
 *   the agreement, EBUSY after it: the peer's PMO is then keyed)
 * * EKEYREJECTED - the peer's key-confirmation tag does not verify (a
 *   share was changed on the way), or its share is of small order
 * * EPROTO - a malformed or out-of-order message, or the peer asked for
 *   another @key_len
 * * ECONNRESET, ETIMEDOUT, EINTR - the connection was reset, the peer did
 *   not answer within @timeout_ms, a signal arrived
 * * ENOMEM, EOVERFLOW - as for MMT_IOC_PMO_SET_KEY
 */
#define MMT_IOC_CONN_KEY_AGREE	_IOWR(MMT_IOC_MAGIC, 0x2b, struct mmt_key_agree)

/**
 * MMT_IOC_MIGRATE_RESOLVE - resolve a migration or transfer of unknown
 *	outcome on the destination's statement (docs/MIGRATION.md section 7)
 *
 * On a connection fd to the migration's destination node (the one the
 * migration ran on has usually ended: any later connection to that node
 * serves, attested or not).  The source PMO is VALID, read-only
 * (MMT_PMO_INFO_MIG_UNKNOWN).  The module sends the migration's receive
 * nonce; the destination's module answers from its record of that
 * receive, with no call on its side: committed or aborted, each with a
 * tag under the MMT key bound to the migration (its connection,
 * generation, both nodes, direction and both nonces), or that it has no
 * record or the receive still runs (no tag).  Only a holder of the MMT
 * key can make either final statement, only for this migration, and a
 * destination states aborted only once its receive has ended and can no
 * longer commit.
 *
 * * committed: every MMT of the PMO becomes INVALID, as after an
 *   authenticated COMMIT ACK (the destination holds the one copy); 0.
 * * aborted: the PMO is writable again, every MMT re-encrypted under a
 *   fresh GUA before its next write or send; 0.
 * * ended (a transfer, MMT_MIG_OUTCOME_ENDED): the PMO's last MMT_IOC_SEND
 *   in transfer mode left closures of unknown outcome (its ACKs lost);
 *   the receiver's module states, once that receive has ended, how many
 *   closures it took in (always a prefix: a receive stops at its first
 *   refusal), with a tag under the MMT key bound to the transfer.  Those
 *   of them still VALID here become INVALID, every other VALID MMT is
 *   writable again, re-encrypted under a fresh GUA before its next write
 *   or send; 0.
 * * no record (the destination's module was reloaded, or the record aged
 *   out: it keeps the last MMT_MIG_RECORDS migration and transfer-mode
 *   MMT-channel receives): ENODATA, nothing changed.
 * * the receive still runs: EINPROGRESS, nothing changed; ask again.
 *
 * "No record" and "still runs" carry no tag: anyone on the path can send
 * them, so they are no evidence.  The call goes on waiting for a final
 * statement and returns ENODATA or EINPROGRESS only at @timeout_ms; an
 * owner who knows by other means that the destination is gone for good
 * (its node destroyed) may then force (MMT_IOC_PMO_MIG_RESOLVE with
 * MMT_MIG_RESOLVE_FORCE).  A final statement whose tag does not verify is
 * counted (debugfs mmt/stats "resolve_forged") and ignored likewise.  The
 * outcome is not a secret: whoever knows the receive nonce (it travels in
 * clear) can ask any node for it, on any connection.
 * Context: process; sleeps; takes the PMO's lock.
 *
 * Return: 0; -1 with errno set to:
 * * EFAULT, E2BIG - as for every command
 * * EINVAL - bad @size, non-zero @flags, @outcome or reserved fields,
 *   @timeout_ms above 600000
 * * EBADF, ENOTTY - @pmo_fd is not a PMO fd (ENOTTY also: the fd is not a
 *   connection)
 * * ENOENT - the PMO has no migration or transfer of unknown outcome (a
 *   pending checkpoint's is resolved by MMT_IOC_PMO_MIG_RESOLVE)
 * * ENODATA, EINPROGRESS - see above (@outcome says which)
 * * ETIMEDOUT - no statement at all within @timeout_ms, or the
 *   connection timed out
 * * EFAULT - also when @outcome could not be written back after the
 *   resolve took effect (MMT_IOC_PMO_INFO tells)
 * * ECONNRESET, EINTR - the connection failed (also when the peer's
 *   module predates this request: it ends the connection), a signal
 *   arrived
 * * EKEYEXPIRED, EKEYREJECTED - an attested connection ended for its
 *   credentials (as for MMT_IOC_SEND)
 * * ENOMEM - as for every command
 */
#define MMT_IOC_MIGRATE_RESOLVE \
	_IOWR(MMT_IOC_MAGIC, 0x2c, struct mmt_migrate_resolve)

/*
 * Receives (migrations, transfer-mode MMT-channel receives) whose outcome
 * a node keeps for MMT_IOC_MIGRATE_RESOLVE
 */
#define MMT_MIG_RECORDS		1024

#endif /* _UAPI_LINUX_MMT_H */
