/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mmt_internal.h - declarations shared by the files of driver/
 *
 * The driver's layering: a file calls only files of lower layers, and
 * every file may call the engine in lib/, which calls no driver file.
 * scripts/layering.py (in make lint) checks it on the module built.
 *
 *  14  mmt_main        module init and exit, /dev/mmt
 *  13  mmt_ioctl       /dev/mmt's ioctls
 *  12  mmt_cm_rdma     rdma_cm: connect, listen and accept; device removal
 *  11  mmt_fabric_rdma the RDMA fabric's operations (mmt_fabric.h):
 *                      messages, a closure's writes, grants
 *  10  mmt_conn_rdma   a connection's verbs resources, completions, posts
 *      mmt_fabric_loop the loopback fabric (mmt_fabric.h): two connections
 *                      of one node back to back (KUnit builds only)
 *   9  mmt_connfd      the connection fd: its ioctls and file operations
 *   8  mmt_conn_mig    live migration over a connection, resolve
 *   7  mmt_conn_hs     hello, attested handshake, credential renewals
 *      mmt_conn_tx     a transfer's sending side (MMT_IOC_SEND)
 *      mmt_conn_rx     a transfer's receiving side (MMT_IOC_RECV)
 *   6  mmt_loopback    the local transport
 *      mmt_attest      attestation state and credentials
 *      mmt_conn_core   the protocol's connection object: state, inboxes
 *   5  mmt_ckpt        checkpoint and restore (a migration to a buffer)
 *      mmt_conn        the connection protocol's helpers
 *   4  mmt_migrate     live migration, transport-neutral
 *   3  mmt_pmo         the PMO object and its fd
 *   2  mmt_pmo_io      a PMO's pread and pwrite, the I/O workers
 *   1  mmt_delegate    a closure's seal and settle on the sender
 *      mmt_conn_fault  test builds only: an attacker on the wire
 *   0  mmt_uaccess     user copies
 *      mmt_node        node id and GUA allocator
 *      mmt_stats       counters and tracepoints
 *      mmt_record      this node's record of its receives
 *      mmt_handshake   the attested hello's cryptography
 *
 * Three calls go up, each listed in scripts/layering.py with its reason:
 * the PMO fd's ioctls dispatch to mmt_ckpt and mmt_loopback, and a write
 * (mmt_pmo_io) asks mmt_migrate for its throttle.  The connection protocol's files
 * (mmt_conn_core to mmt_connfd, driver/mmt_proto.h) post messages, write
 * closures and grant receive areas only through conn->fab (struct
 * mmt_fabric_ops, driver/mmt_fabric.h) and name no verbs themselves: the
 * layering check holds them to it.  A fabric calls the protocol's object
 * (mmt_conn_received(), mmt_conn_notice()), never its files above it.
 */
#ifndef MMT_INTERNAL_H
#define MMT_INTERNAL_H

#undef pr_fmt
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/wait.h>

#include "mmt_lib.h"
#include "mmt_uapi.h"

/* MMT_FEAT_DEBUG in test builds (make MMT_DEBUG=1) only. */
#ifdef MMT_DEBUG
#define MMT_FEATURES_DEBUG	MMT_FEAT_DEBUG
#else
#define MMT_FEATURES_DEBUG	0
#endif

/* MMT_FEAT_RDMA when the kernel has the RDMA stack (see Kbuild). */
#ifdef MMT_RDMA
#define MMT_FEATURES_RDMA	(MMT_FEAT_RDMA | MMT_FEAT_MIGRATE)
#else
#define MMT_FEATURES_RDMA	0
#endif

/*
 * Attested mode (driver/mmt_attest.c) needs the kernel's PKCS#7
 * verification and its X25519 library; Kbuild sets MMT_ATTEST when the
 * target kernel has both (Debian's does; the debug guest kernel does not).
 */
#ifdef MMT_ATTEST
#define MMT_FEATURES_ATTEST	MMT_FEAT_ATTEST
#else
#define MMT_FEATURES_ATTEST	0
#endif

/* Module version string reported by MMT_IOC_QUERY. */
#define MMT_MODULE_VERSION	"0.3.0"

struct file;
struct mm_struct;

/*
 * Keyings other than its own a PMO holds at once: the senders' keyings of
 * the closures it received (one per sending PMO; a receive PMO normally
 * takes all its closures from one).
 */
#define MMT_PMO_KEYINGS		4

/**
 * struct mmt_pmo - a physical memory object: pinned secure memory + MMTs
 * @lock: serializes every use of @mmts, @crypto, @scratch and @rx (the
 *	engine has no locks of its own; the crypto requests are per key)
 * @params: geometry of every MMT; immutable after creation
 * @bytes: data bytes (@closures * @params.data_bytes); immutable
 * @closures: number of MMTs; immutable
 * @stride: bytes of backing memory per closure (data, MACs, nodes)
 * @mem: backing memory, vmalloc'd (pinned, never swapped): for closure i,
 *	data at i * @stride, then data MACs, then tree nodes.  Untrusted: it
 *	holds only ciphertext and metadata, and it is what a NIC will read and
 *	write.  Immutable pointer.
 * @mem_bytes: size of @mem
 * @mmts: @closures MMTs with their trusted roots
 * @scratch: engine work space shared by the MMTs (used under @lock)
 * @crypto: subkeys and transforms of the PMO's own keying (a random keying
 *	salt chosen at MMT_IOC_PMO_SET_KEY), NULL until then; every GUA this
 *	node hands out to an MMT of the PMO is used under it (docs/ENGINE.md
 *	"Keying salt")
 * @key_root: mmt_key_root() of the MMT key (which is not kept), valid
 *	while @crypto is set: it sets up the context of a received closure's
 *	keying salt; wiped with memzero_explicit() when the key is dropped
 * @rx_crypto: contexts of other keyings (salts named by received
 *	closures), made on demand by mmt_pmo_keying(), freed with the key;
 *	an MMT received under one of them points at it
 * @rx_crypto_held: per entry of @rx_crypto, closures of an eager
 *	receive that passed their in-order check under it and are not yet
 *	committed or dropped (mmt_pmo_keying_hold()): such an entry is not
 *	reused, as it would not be if they were committed already; zeroed
 *	with the key
 * @key_len: 0, 16 or 32
 * @chan_root: the secure channel's root key, mmt_chan_root_key() of the
 *	MMT key (which is not kept), valid while @crypto is set; wiped with
 *	memzero_explicit() when the key is dropped (invalidate, free, failed
 *	MMT_IOC_PMO_SET_KEY)
 * @rx: receive rules (replay, reorder, this receive's generation and
 *	nonce) of the PMO as a receiver: they belong to the one receive that
 *	holds @receiving
 * @receiving: a receive (RDMA or local delegation) is filling the PMO;
 *	another one gets -EBUSY
 * @rx_lost: the PMO was invalidated (MMT_IOC_PMO_INVALIDATE) during the
 *	receive that holds @receiving: that receive refuses the rest of its
 *	closures with -EPERM, also if the PMO was keyed again meanwhile
 *	(its receive rules went with the key); cleared when a receive starts
 * @tx_root_counter: last root counter sealed by this PMO as a sender
 * @tx_last_gua: GUA of the last closure this PMO sent
 * @plain_xfers: connection transfers (plain or secure channel) using the
 *	PMO as plain memory, under @lock; while non-zero the PMO cannot be
 *	keyed or invalidated (-EBUSY): its kind does not change under them
 * @mig: the live migration this PMO is the source of (under @lock;
 *	MMT_IOC_MIGRATE_SEND): while set the PMO refuses invalidation, a
 *	root counter change, sends, local delegation and another migration
 *	(-EBUSY)
 * @mig_rx: the PMO is the destination of a live migration (under @lock):
 *	it cannot be invalidated (-EBUSY) until the migration ends
 * @mig_frozen: handover of @mig: writers wait on @mig_wq (under @lock,
 *	read without it by the waiters' condition)
 * @mig_wq: writers waiting for the end of a handover
 * @mig_unknown: the last migration from this PMO ended after its COMMIT
 *	left without an answer that authenticates, or the last transfer
 *	ended with closures posted whose verdicts did not come or did not
 *	authenticate (@xfer_unknown) (under @lock): the destination may
 *	have committed or taken them in, so the PMO is read-only (writes,
 *	sends, local delegation, a root counter change and another
 *	migration fail with -EUCLEAN) until its owner resolves it:
 *	MMT_IOC_PMO_MIG_RESOLVE (the destination did not commit: every MMT
 *	re-encrypted under a fresh GUA before its next write or send) or
 *	MMT_IOC_PMO_INVALIDATE (it did)
 * @ckpt_pending: a checkpoint of this PMO with MMT_CKPT_PENDING made a
 *	record under @ckpt_handle (under @lock): the PMO is @mig_unknown
 *	(read-only) until MMT_IOC_PMO_INVALIDATE (the image stays the one
 *	copy) or MMT_IOC_PMO_MIG_RESOLVE, which drops the record first and
 *	fails if a restore consumed it (docs/CRIU.md)
 * @mig_bind: while @mig_unknown from a migration or a transfer: its
 *	binding (connection, generation, nodes, direction, both nonces),
 *	which the destination's statement must be bound to
 *	(MMT_IOC_MIGRATE_RESOLVE; under @lock)
 * @xfer_unknown: @mig_unknown comes from a transfer (MMT_IOC_SEND,
 *	transfer mode) that ended with closures @xfer_first up to, not
 *	including, @xfer_end posted and their verdicts not authenticated:
 *	the receiver may hold any prefix of them (under @lock;
 *	mmt_delegate_unknown())
 * @xfer_first: the first closure of unknown outcome
 * @xfer_end: one past the last closure posted
 * @mig_rx_bind: while @mig_rx: the migration's binding as this
 *	destination sees it, for the statement recorded when it ends
 * @mig_rx_committed: while @mig_rx: its COMMIT checked (under @lock)
 * @mig_rx_record: while @mig_rx: the receive is a migration's, whose
 *	outcome is recorded (a checkpoint's restore is not)
 * @ckpt_handle: MMT_CKPT_HANDLE_BYTES, that record's handle
 * @charged_mm: the mm whose RLIMIT_MEMLOCK was charged (holds a mmgrab)
 * @charged_pages: pages charged to @charged_mm
 * @io_slots: @io_nslots work spaces of the closures a parallel
 *	pread/pwrite hands to the I/O workers (struct mmt_pmo_io_slot),
 *	made on demand under @lock, freed with the key
 * @io_nslots: entries of @io_slots
 * @io_batches: batches of closures a pread/pwrite ran on the I/O workers
 *	(under @lock; the KUnit suite checks the parallel path ran)
 */
struct mmt_pmo {
	struct mutex lock;	/* see above */
	struct mmt_params params;
	u64 bytes;
	u32 closures;
	size_t stride;
	u8 *mem;
	size_t mem_bytes;
	struct mmt *mmts;
	u8 *scratch;
	struct mmt_crypto *crypto;
	u8 key_root[MMT_KEY_ROOT_BYTES];
	struct mmt_crypto *rx_crypto[MMT_PMO_KEYINGS];
	u32 rx_crypto_held[MMT_PMO_KEYINGS];
	u32 key_len;
	u8 chan_root[MMT_CHAN_ROOT_BYTES];
	struct mmt_rx_rules rx;
	bool receiving;
	bool rx_lost;
	u64 tx_root_counter;
	u64 tx_last_gua;
	u32 plain_xfers;
	struct mmt_mig *mig;
	bool mig_rx;
	bool mig_frozen;
	wait_queue_head_t mig_wq;
	bool mig_unknown;
	struct mmt_bind mig_bind;
	bool xfer_unknown;
	u32 xfer_first;
	u32 xfer_end;
	struct mmt_bind mig_rx_bind;
	bool mig_rx_committed;
	bool mig_rx_record;
	bool ckpt_pending;
	u8 ckpt_handle[MMT_CKPT_HANDLE_BYTES];
	struct mm_struct *charged_mm;
	unsigned long charged_pages;
	struct mmt_pmo_io_slot *io_slots;
	u32 io_nslots;
	u64 io_batches;
};

/**
 * struct mmt_stats - module-wide counters, shown in debugfs mmt/stats
 * @pmos: PMOs alive
 * @pmo_bytes: data bytes of the PMOs alive
 * @bytes_written: plaintext bytes written through pwrite (plain PMOs
 *	included)
 * @bytes_read: plaintext bytes read through pread (plain PMOs included)
 * @verify_fail: reads that failed verification (-EBADMSG)
 * @closures_sent: closures sealed and delivered
 * @closures_received: closures accepted
 * @reject: closures rejected, by reason (enum mmt_reject)
 * @remote_access_errors: connections broken by a refused remote access:
 *	an RDMA write completing with IB_WC_REM_ACCESS_ERR (the peer's NIC
 *	refused the rkey or range) or a QP access-error event
 * @ack_forged: MMT-channel acceptances that did not authenticate (wrong
 *	nonce or tag); each aborted its transfer as a lost ack
 * @ckpt_records: checkpoints and parked PMOs waiting for their restore,
 *	and MMT_MIGRATE_PARK receives running (docs/CRIU.md)
 * @hs_done: attested handshakes that succeeded
 * @hs_rejected: connections refused by this node in attested mode or for
 *	it: a peer in the other mode, a credential or a key-confirmation tag
 *	that did not verify, an expired credential, a bound node id
 * @creds_sent: renewed credentials of this node sent to the peer of a
 *	live attested connection
 * @creds_renewed: renewed credentials a peer sent on a live attested
 *	connection that this node accepted
 * @xfer_unknown: transfers that ended with closures of unknown outcome
 *	(the source read-only until resolved)
 * @resolves_forced: migrations of unknown outcome made writable on the
 *	owner's word (MMT_IOC_PMO_MIG_RESOLVE with MMT_MIG_RESOLVE_FORCE)
 * @resolves: migrations of unknown outcome resolved on the destination's
 *	statement (MMT_IOC_MIGRATE_RESOLVE)
 * @resolve_forged: statements on a migration's outcome whose tag did not
 *	verify (ignored)
 * @statements_sent: statements this node sent as a destination
 * @conns_expired: attested connections closed because this node's or
 *	the peer's credential expired (by this side, or by the peer's close
 *	once the validity ended), or because this side refused a renewal the
 *	peer sent; each connection counted once
 */
struct mmt_stats {
	atomic64_t pmos;
	atomic64_t pmo_bytes;
	atomic64_t bytes_written;
	atomic64_t bytes_read;
	atomic64_t verify_fail;
	atomic64_t closures_sent;
	atomic64_t closures_received;
	atomic64_t reject[8];
	atomic64_t remote_access_errors;
	atomic64_t ack_forged;
	atomic64_t ckpt_records;
	atomic64_t hs_done;
	atomic64_t hs_rejected;
	atomic64_t creds_sent;
	atomic64_t creds_renewed;
	atomic64_t xfer_unknown;
	atomic64_t resolves_forced;
	atomic64_t resolves;
	atomic64_t resolve_forged;
	atomic64_t statements_sent;
	atomic64_t conns_expired;
};

/* Rejection reasons counted in mmt_stats.reject, one per documented error. */
enum mmt_reject {
	MMT_REJ_BADMSG,		/* -EBADMSG: tamper, wrong key */
	MMT_REJ_STALE,		/* -ESTALE: replay */
	MMT_REJ_ILSEQ,		/* -EILSEQ: reorder */
	MMT_REJ_MSGSIZE,	/* -EMSGSIZE: lengths */
	MMT_REJ_PROTO,		/* -EPROTO / -EPROTONOSUPPORT: magic, version */
	MMT_REJ_MEDIUM,		/* -EMEDIUMTYPE: geometry */
	MMT_REJ_XDEV,		/* -EXDEV: other connection or receiver */
	MMT_REJ_OTHER,		/* anything else */
};

extern struct mmt_stats mmt_stats;

/* mmt_node.c: this node's identity */
void mmt_node_init(void);
u16 mmt_node_id(void);
int mmt_set_node_id(u32 id);
void mmt_node_id_unassign(bool unassigned);
int mmt_gua_alloc(u64 *gua);

/* mmt_attest.c: attested mode (docs/ATTESTATION.md) */
#define MMT_CRED_MAGIC		"MMTCRED1"
#define MMT_CRED_VERSION	1
#define MMT_CRED_BODY_LEN	136
#define MMT_CRED_KEY_LEN	32	/* X25519 public key */

/**
 * struct mmt_cred - a node credential's body (136 bytes on the wire,
 * little-endian: magic, le16 version, le16 flags, then these fields)
 * @node_id: the node id the authority assigned, 1..65535
 * @serial: the authority's issue counter
 * @not_before: first second of validity, UNIX time
 * @not_after: last second of validity, UNIX time
 * @node_key: the node's X25519 public key
 * @module_hash: SHA-256 of the mmt.ko the node was found to run
 * @ek_hash: SHA-256 of the node's TPM endorsement key (DER public key)
 */
struct mmt_cred {
	u32 node_id;
	u64 serial;
	u64 not_before;
	u64 not_after;
	u8 node_key[MMT_CRED_KEY_LEN];
	u8 module_hash[32];
	u8 ek_hash[32];
};

struct mmt_attest_info;
int mmt_cred_parse(const u8 *buf, size_t len, struct mmt_cred *c);

/* mmt_handshake.c: the attested hello of a connection */
#define MMT_X25519_BYTES	32
#define MMT_HS_SECRET_BYTES	32	/* handshake secret, each tag */
/* A hello: the ephemeral share, then the credential file */
#define MMT_HS_HELLO_MAX	(MMT_X25519_BYTES + MMT_ATTEST_BLOB_MAX)

/**
 * struct mmt_hs - one side of a connection's attested handshake
 *	(driver/mmt_handshake.c, docs/ATTESTATION.md "The hello")
 * @initiator: this side connected (MMT_IOC_CONNECT)
 * @conn_rand: the connecting side's rdma_cm hello nonce
 * @accept_rand: the accepting side's
 * @e_sk: this side's ephemeral X25519 secret; wiped by mmt_hs_derive()
 * @own: this side's hello: ephemeral public key || credential file
 * @own_len: bytes of @own
 * @peer: the peer's hello as received; NULL before
 * @peer_len: bytes of @peer
 * @peer_cred: the peer's credential body, once checked
 * @own_cred: this side's credential body, the one in @own
 * @th: the transcript hash
 * @secret: the handshake secret
 * @tag_own: the key-confirmation tag this side sends
 * @tag_peer: the tag this side expects from the peer
 * @test_verify_ms: test builds only: ms mmt_attest_hs_peer() sleeps in
 *	the check of the peer's credential (debugfs mmt/conn_fault "hs
 *	verify delay MS")
 */
struct mmt_hs {
	bool initiator;
	u64 conn_rand;
	u64 accept_rand;
	u8 e_sk[MMT_X25519_BYTES];
	u8 *own;
	u32 own_len;
	u8 *peer;
	u32 peer_len;
	struct mmt_cred peer_cred;
	struct mmt_cred own_cred;
	u8 th[MMT_SHA256_BYTES];
	u8 secret[MMT_HS_SECRET_BYTES];
	u8 tag_own[MMT_HS_SECRET_BYTES];
	u8 tag_peer[MMT_HS_SECRET_BYTES];
#ifdef MMT_DEBUG
	u32 test_verify_ms;
#endif
};

#ifdef MMT_ATTEST
int mmt_x25519(const u8 *sk, const u8 *peer, u8 *out);
int mmt_hs_start(struct mmt_hs *hs, bool initiator, u64 conn_rand,
		 u64 accept_rand, const u8 *cred, u32 cred_len);
int mmt_hs_peer_hello(struct mmt_hs *hs, const u8 *buf, u32 len);
int mmt_hs_derive(struct mmt_hs *hs, const u8 *static_sk);
int mmt_hs_confirm(const struct mmt_hs *hs, const u8 *tag);
int mmt_hs_conn_id(const struct mmt_hs *hs, u64 *id);
int mmt_hs_agree(const u8 *hs_secret, u64 conn_id, u64 seq,
		 const u8 *share_i, const u8 *share_r, const u8 *dh,
		 u32 key_len, u8 *key, u8 *tag_i, u8 *tag_r);
void mmt_hs_clear(struct mmt_hs *hs);
int mmt_attest_hs_start(struct mmt_hs *hs, bool initiator, u64 conn_rand,
			u64 accept_rand);
int mmt_attest_hs_peer(struct mmt_hs *hs, u64 now, u16 hello_node);
int mmt_attest_hs_derive(struct mmt_hs *hs);
int mmt_attest_own_cred(u8 **file, u32 *len, struct mmt_cred *c);
int mmt_attest_peer_renew(const u8 *cred, u32 len, u64 now,
			  struct mmt_cred *peer);
int mmt_attest_set_authority(const void *der, size_t len);
int mmt_attest_set_cred(const u8 *buf, size_t len, u64 now,
			const u8 *node_pk);
bool mmt_attest_mode(void);
u32 mmt_attest_state(void);
void mmt_attest_info(struct mmt_attest_info *info);
void mmt_attest_node_key(u8 pk[MMT_CRED_KEY_LEN]);
void mmt_attest_reset(void);
int mmt_attest_init(void);
void mmt_attest_exit(void);
#if IS_ENABLED(CONFIG_MMT_KUNIT_TEST)
int mmt_attest_test_node_key(const u8 sk[MMT_X25519_BYTES]);
#endif
int mmt_ioc_attest_set_authority(void __user *uarg);
int mmt_ioc_attest_set_cred(void __user *uarg);
int mmt_ioc_attest_info(void __user *uarg);
#else
static inline int mmt_attest_hs_start(struct mmt_hs *hs, bool initiator,
				      u64 conn_rand, u64 accept_rand)
{
	return -EOPNOTSUPP;
}

static inline int mmt_attest_hs_peer(struct mmt_hs *hs, u64 now,
				     u16 hello_node)
{
	return -EOPNOTSUPP;
}

static inline int mmt_attest_hs_derive(struct mmt_hs *hs)
{
	return -EOPNOTSUPP;
}

static inline int mmt_attest_own_cred(u8 **file, u32 *len,
				      struct mmt_cred *c)
{
	*file = NULL;
	return -EOPNOTSUPP;
}

static inline int mmt_attest_peer_renew(const u8 *cred, u32 len, u64 now,
					struct mmt_cred *peer)
{
	return -EOPNOTSUPP;
}

static inline void mmt_hs_clear(struct mmt_hs *hs)
{
}

static inline int mmt_hs_confirm(const struct mmt_hs *hs, const u8 *tag)
{
	return -EOPNOTSUPP;
}

static inline int mmt_hs_conn_id(const struct mmt_hs *hs, u64 *id)
{
	return -EOPNOTSUPP;
}

static inline int mmt_x25519(const u8 *sk, const u8 *peer, u8 *out)
{
	return -EOPNOTSUPP;
}

static inline int mmt_hs_agree(const u8 *hs_secret, u64 conn_id, u64 seq,
			       const u8 *share_i, const u8 *share_r,
			       const u8 *dh, u32 key_len, u8 *key, u8 *tag_i,
			       u8 *tag_r)
{
	return -EOPNOTSUPP;
}

static inline bool mmt_attest_mode(void)
{
	return false;
}

static inline u32 mmt_attest_state(void)
{
	return MMT_ATTEST_OFF;
}

static inline void mmt_attest_reset(void)
{
}

static inline int mmt_attest_init(void)
{
	return 0;
}

static inline void mmt_attest_exit(void)
{
}

static inline int mmt_ioc_attest_set_authority(void __user *uarg)
{
	return -EOPNOTSUPP;
}

static inline int mmt_ioc_attest_set_cred(void __user *uarg)
{
	return -EOPNOTSUPP;
}

static inline int mmt_ioc_attest_info(void __user *uarg)
{
	return -EOPNOTSUPP;
}
#endif

/* mmt_ioctl.c */
long mmt_dev_ioctl(struct file *file, unsigned int cmd, unsigned long arg);

/* mmt_uaccess.c: user copies, below every file that takes a user's data */
int mmt_copy_in(void *karg, size_t ksize, void __user *uarg,
		size_t min_size, u32 *usize);
int mmt_copy_out(void __user *uarg, const void *karg, size_t ksize,
		 u32 usize);
/*
 * Flags of an allocation whose size a user's call chooses (a buffer of one
 * closure, up to 2 GiB; a PMO's MMT array): charged to the caller's memory
 * cgroup, and over the group's limit (or out of memory) a quiet -ENOMEM,
 * not a warning or the OOM killer.
 */
#define MMT_GFP_USER_SIZED \
	(GFP_KERNEL_ACCOUNT | __GFP_NOWARN | __GFP_RETRY_MAYFAIL)
/* Step of mmt_copy_{to,from}_user_steps(): cond_resched() between two. */
#define MMT_UCOPY_STEP	(1024 * 1024)
int mmt_copy_to_user_steps(void __user *to, const void *from, size_t len);
int mmt_copy_from_user_steps(void *to, const void __user *from, size_t len);

/* mmt_pmo.c */
struct mmt_pmo *mmt_pmo_alloc(const struct mmt_params *p, u32 closures);
void mmt_pmo_free(struct mmt_pmo *pmo);
int mmt_pmo_set_key(struct mmt_pmo *pmo, const u8 *key, u32 key_len,
		    bool receive);
int mmt_pmo_set_keying(struct mmt_pmo *pmo, const u8 *key_root,
		       const u8 *chan_root, const u8 *ksalt, u32 key_len);
int mmt_pmo_create(void __user *uarg);
int mmt_pmo_file(struct mmt_pmo *pmo, bool cloexec, struct file **file);
struct mmt_pmo *mmt_pmo_from_file(struct file *file);
long mmt_pmo_ioctl(struct file *file, unsigned int cmd, unsigned long arg);
int mmt_pmo_receive(struct mmt_pmo *pmo, u32 index, const u8 *buf,
		    size_t len, bool eager);
void mmt_pmo_rx_start(struct mmt_pmo *pmo, u64 conn_id, u16 self_node);
void mmt_pmo_keying_hold(struct mmt_pmo *pmo, struct mmt_crypto *c,
			 bool hold);
int mmt_pmo_wipe(struct mmt_pmo *pmo);

/* mmt_delegate.c */
int mmt_delegate_build(struct mmt_pmo *src, u32 i, u64 conn_id, u64 gen,
		       const u8 *rx_nonce, u16 peer_node, bool copy, u8 *buf,
		       size_t len);
void mmt_delegate_settle(struct mmt_pmo *src, u32 i, bool copy, int err);
int mmt_delegate_regua_due(struct mmt_pmo *pmo, struct mmt *m);

/* mmt_loopback.c */
void mmt_loopback_init(void);
int mmt_delegate_loopback(struct mmt_pmo *src, struct mmt_pmo *dst,
			  bool copy, bool eager, u64 *sent);
int mmt_delegate_local(struct mmt_pmo *src, void __user *uarg);

/* mmt_cm_rdma.c (CONFIG_INFINIBAND), else stubs in mmt_conn.c */
int mmt_conn_listen(void __user *uarg);
int mmt_conn_connect(void __user *uarg);
int mmt_conn_init(void);
void mmt_conn_exit(void);

/* mmt_conn_hs.c */
void mmt_conn_cred_renewed(void);

/* mmt_pmo_io.c: the I/O workers of pread/pwrite (module parameter io_workers) */
extern unsigned int mmt_io_workers;
int mmt_pmo_io_init(void);
void mmt_pmo_io_exit(void);
void mmt_pmo_io_slots_free(struct mmt_pmo *pmo);
unsigned int mmt_io_nworkers(void);
bool mmt_io_queue(struct work_struct *work);

/* mmt_pmo_io.c: pread() and pwrite() (the PMO fd's read_iter and write_iter) */
ssize_t mmt_pmo_io(struct kiocb *iocb, struct iov_iter *iter, bool write);

/* mmt_pmo_io.c: reads and writes from the kernel (tests), with the pread() and pwrite() policy */
ssize_t mmt_pmo_kread(struct mmt_pmo *pmo, u64 pos, void *buf, size_t len);
int mmt_pmo_kwrite(struct mmt_pmo *pmo, u64 pos, const void *buf,
		   size_t len, bool nowait);

/* mmt_pmo.c */
int mmt_pmo_mig_resolve(struct mmt_pmo *pmo, unsigned long arg);

/* mmt_migrate.c: the writers' throttle in pre-copy (docs/MIGRATION.md) */
u64 mmt_mig_throttle(struct mmt_pmo *pmo, u64 busy_ns);
void mmt_mig_throttle_sleep(u64 ns);

/* mmt_ckpt.c: checkpoint and restore (docs/CRIU.md) */
struct mmt_ckpt;
int mmt_ckpt_checkpoint(struct mmt_pmo *pmo, void __user *uarg);
int mmt_ckpt_restore(void __user *uarg);
int mmt_ckpt_cancel(const u8 *handle);
struct mmt_ckpt *mmt_ckpt_park_begin(void);
void mmt_ckpt_park_end(struct mmt_ckpt *c, struct file *file,
		       const u8 *handle);
void mmt_ckpt_exit(void);

/* mmt_stats.c */
struct dentry;
struct dentry *mmt_stats_init(void);
void mmt_stats_exit(void);
void mmt_stats_reject(int err);
void mmt_stats_receive(int err, u64 gua, u32 index);

#endif /* MMT_INTERNAL_H */
