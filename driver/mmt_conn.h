/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mmt_conn.h - connections between nodes: wire format and the parts of
 * the channels that do not need RDMA headers
 *
 * The RDMA transport itself (rdma_cm, QP, CQ, memory registration, the fds)
 * is driver/mmt_*_rdma.c (driver/mmt_rdma.h), built only when the kernel has
 * CONFIG_INFINIBAND (the KUnit build on UML excludes the RDMA files).  What
 * is here builds everywhere: the message format and its checks, the
 * sender's per-closure build and settle steps of the pipelined delegation,
 * and the receiver's in-place closure check.
 *
 * One transfer, one direction (DESIGN.md section 5):
 *
 *	sender				receiver (MMT_IOC_RECV)
 *	OFFER(gen, geometry, n) --->
 *				<---	GRANT(gen, i, segments)   (FRWR, fresh rkey)
 *	RDMA WRITE region i		  ... up to MMT_CONN_WINDOW granted
 *	RDMA WRITE_WITH_IMM head i --->   (imm = gen << 24 | i)
 *	  (iWARP: RDMA WRITE head i, then NOTICE(gen << 24 | i) as a SEND)
 *					LOCAL_INV region i, then check closure i
 *				<---	ACK(gen, i, verdict)
 *	END(gen, posted)	--->	  invalidate what is still granted
 *
 * A NACK(gen, err) answers an OFFER the receiver refuses.  Every message
 * is one SEND of struct mmt_wire_msg.  The connection's hello travels in the
 * rdma_cm private data (struct mmt_wire_hello).
 */
#ifndef MMT_CONN_H
#define MMT_CONN_H

#include <linux/bits.h>
#include <linux/types.h>

#include "mmt_lib.h"

struct mmt_pmo;

/*
 * Protocol version in the hello; a peer with another one is rejected.
 * 2: the accepting side contributes to the connection id (accept_rand).
 * 3: closure format v2: GRANT carries the receive's nonce, which every
 *    closure of the receive is bound to; an MMT-channel ACK carries a tag
 *    that authenticates its verdict.
 * 4: plain PMOs: the OFFER says whether the sender's PMO is plain memory
 *    (MMT_WIRE_OFFER_PLAIN), and the plain channel writes the receiver's
 *    PMO memory instead of a bounce buffer.
 * 5: live migration (docs/MIGRATION.md): an OFFER with
 *    MMT_WIRE_OFFER_MIGRATE, WANT and COMMIT messages.
 * 6: ACK and COMMIT tags bind both nodes, the direction and the sender's
 *    nonce from the OFFER.
 * 7: a transfer's sender resolves closures of unknown outcome on the
 *    receiver's statement (MIG_STATEMENT of MMT_MIG_OUTCOME_ENDED with
 *    @closures): a peer of version 6 would answer "no record" and leave
 *    it read-only.
 */
#define MMT_WIRE_VERSION	7
#define MMT_WIRE_TAG_BYTES	16	/* ACK tag: truncated HMAC-SHA256 */
#define MMT_WIRE_HELLO_MAGIC	0x4c4c4548u	/* "HELL" little-endian */
#define MMT_WIRE_MSG_MAGIC	0x47534d4du	/* "MMSG" little-endian */

/**
 * struct mmt_wire_hello - rdma_cm private data of connect and accept
 * @magic: MMT_WIRE_HELLO_MAGIC
 * @version: MMT_WIRE_VERSION
 * @node_id: the sender's node id
 * @conn_rand: 64 random bits chosen by the connecting side; the accepting
 *	side echoes them
 * @accept_rand: 0 from the connecting side; 64 random bits chosen by the
 *	accepting side in its reply
 *
 * The connection id, bound into every closure header and every secure
 * channel key, is mmt_conn_id_derive(@conn_rand, @accept_rand): each side
 * contributes fresh randomness, so neither a peer nor anyone replaying a
 * recorded hello can make two connections share an id.
 *
 * 24 bytes: fits the 56 bytes rdma_cm leaves of an IB CM REQ.
 */
struct mmt_wire_hello {
	__le32 magic;
	__le16 version;
	__le16 node_id;
	__le64 conn_rand;
	__le64 accept_rand;
};

/**
 * struct mmt_wire_hello_att - the rdma_cm private data of an attested
 *	node (32 bytes; a node not in attested mode sends 24)
 * @h: the hello
 * @flags: MMT_HELLO_ATTESTED when the sender is in attested mode
 * @err: a rejection's reason, a positive errno (EKEYREJECTED: the modes
 *	of the two sides differ); 0 otherwise
 *
 * The private data of a connect request is 56 bytes, zero-padded, so a
 * request of a node not in attested mode reads as @flags 0.
 */
struct mmt_wire_hello_att {
	struct mmt_wire_hello h;
	__le32 flags;
	__le32 err;
};

/* Message types */
enum mmt_wire_type {
	MMT_MSG_OFFER = 1,	/* sender -> receiver: a PMO to send */
	MMT_MSG_NACK = 2,	/* receiver -> sender: offer refused */
	MMT_MSG_GRANT = 3,	/* receiver -> sender: closure i may land */
	MMT_MSG_ACK = 4,	/* receiver -> sender: verdict on closure i */
	MMT_MSG_END = 5,	/* sender -> receiver: no more writes */
	MMT_MSG_DONE = 6,	/* not a SEND: the WRITE_WITH_IMM of closure i */
	MMT_MSG_WANT = 7,	/* migration, sender -> receiver: grant i */
	MMT_MSG_COMMIT = 8,	/* migration, sender -> receiver: commit */
	MMT_MSG_HS_HELLO = 9,	/* attested mode, both ways: hello chunk */
	MMT_MSG_HS_CONFIRM = 10, /* attested mode, both ways: tag or refusal */
	MMT_MSG_AGREE = 11,	/* key agreement, both ways: a share */
	MMT_MSG_AGREE_CONFIRM = 12, /* key agreement, both ways: a tag */
	MMT_MSG_CRED = 13,	/* attested mode, both ways: renewal chunk */
	MMT_MSG_MIG_QUERY = 14,	/* source -> destination: outcome of? */
	MMT_MSG_MIG_STATEMENT = 15, /* destination -> source: the outcome */
	MMT_MSG_NOTICE = 16,	/* fabric, iWARP only: closure i's notice */
	MMT_MSG_START = 17,	/* fabric, iWARP only: the connector's first */
};

/*
 * MMT_MSG_NOTICE and MMT_MSG_START belong to the RDMA fabric on a
 * provider without immediate data (iWARP): it handles them itself and
 * never hands them to mmt_conn_received(), whose mmt_wire_decode()
 * refuses them.  Both are a struct mmt_wire_msg of at least its header
 * (offsetof(struct mmt_wire_msg, segs) bytes), every field 0 but @magic,
 * @type and NOTICE's @index.  MMT_MSG_NOTICE: @index = the notice that RoCE
 * carries as the immediate data of the last write (gen << 24 | i), sent
 * as a SEND right after the closure's RDMA writes on the same QP (RC
 * delivers it after their bytes).  MMT_MSG_START: the connecting side's
 * first message after ESTABLISHED (iWARP's rule: the accepting side sends
 * nothing before the connecting side's first message arrived), posted
 * again 100 ms, 400 ms and 1.6 s later (mmt_rdma_send_start()); the
 * accepting side hands the connection to MMT_IOC_ACCEPT only after the
 * first and ignores the repeats.  Either on a RoCE connection, an
 * immediate on an iWARP connection, or a START to the connecting side,
 * is a protocol error: the connection is DEAD with -EPROTO.
 */

/*
 * Attested mode (docs/ATTESTATION.md "The hello"): the rdma_cm hello grows
 * by struct mmt_wire_hello_att, and the first messages on the connection
 * are the handshake's.  MMT_MSG_HS_HELLO: the sender's hello (ephemeral
 * X25519 share || credential file) in order, at most MMT_HS_CHUNK bytes a
 * message in the bytes of @segs: @index = offset, @closures = total
 * length, @bytes = bytes in this message, @nsegs = DIV_ROUND_UP(@bytes,
 * 16).  MMT_MSG_HS_CONFIRM: @err 0 and the sender's 32-byte tag in @segs
 * (@nsegs 2), or @err the positive errno of a refusal (no tag).
 *
 * Key agreement (MMT_IOC_CONN_KEY_AGREE), only after the handshake:
 * MMT_MSG_AGREE with @bytes = the agreement's number, @closures = the key
 * length, the 32-byte ephemeral share in @segs (@nsegs 2);
 * MMT_MSG_AGREE_CONFIRM with @bytes = the number and the 32-byte tag.
 *
 * Renewal (docs/ATTESTATION.md "Renewal on a live connection"), only on an
 * attested connection: MMT_MSG_CRED carries the sender's renewed
 * credential file in the chunks of MMT_MSG_HS_HELLO.
 *
 * Resolve (MMT_IOC_MIGRATE_RESOLVE, docs/MIGRATION.md section 7), on any
 * connection: MMT_MSG_MIG_QUERY with @nonce = a migration's or an MMT-channel
 * transfer's receive nonce; MMT_MSG_MIG_STATEMENT with the same @nonce,
 * @index = the outcome (MMT_MIG_OUTCOME_*) and, for a final one, @tag =
 * mmt_mig_resolve_tag() (a migration's) or, for a transfer's ENDED,
 * @closures = the closures its receive took in and @tag =
 * mmt_xfer_resolve_tag().
 */
#define MMT_HS_CHUNK	(MMT_WIRE_MAX_SEGS * 16)
#define MMT_HELLO_ATTESTED	BIT(0)	/* struct mmt_wire_hello_att.flags */

/* OFFER flags besides MMT_XFER_COPY: the sender's PMO has no key */
#define MMT_WIRE_OFFER_PLAIN	BIT(16)
/*
 * A live migration (docs/MIGRATION.md): the receiver grants only what
 * WANT asks for, closures land (LANDING) until the COMMIT; the OFFER's
 * index is the sender's window.  COMMIT: index = closures, nonce = the
 * receive's, tag = mmt_mig_commit_tag(), the 32-byte digest in the bytes
 * of segs[0..1] (nsegs 2); its answer is an ACK with index
 * MMT_MIG_COMMIT_INDEX and the ack tag.
 */
#define MMT_WIRE_OFFER_MIGRATE	BIT(17)

#define MMT_WIRE_MAX_SEGS	32	/* segments of one grant */
#define MMT_CONN_WINDOW		4	/* closures in flight per transfer */
#define MMT_CONN_HEAD_BYTES	(MMT_CLOSURE_HDR_BYTES + MMT_SEALED_ROOT_BYTES)
#define MMT_IMM_INDEX_BITS	24	/* imm = (gen & 0xff) << 24 | index */
#define MMT_CONN_MAX_CLOSURES	BIT(MMT_IMM_INDEX_BITS)

/**
 * struct mmt_wire_seg - one remotely writable segment of a grant
 * @addr: remote address (the MR's iova)
 * @rkey: its rkey, fresh for this grant
 * @len: bytes
 */
struct mmt_wire_seg {
	__le64 addr;
	__le32 rkey;
	__le32 len;
};

/**
 * struct mmt_wire_msg - every SEND of the protocol, little-endian
 * @magic: MMT_WIRE_MSG_MAGIC
 * @type: enum mmt_wire_type
 * @nsegs: GRANT: segments used in @segs
 * @head_seg: GRANT of the MMT channel: index in @segs of the closure head
 *	(header + sealed root) slot, which follows the region's segments
 * @reserved0: zero
 * @gen: transfer generation chosen by the sender in its OFFER
 * @index: GRANT, ACK: closure index; END: closures posted
 * @err: NACK, ACK: 0 or a positive errno
 * @channel: OFFER: MMT_CHANNEL_*
 * @flags: OFFER: MMT_XFER_COPY, MMT_WIRE_OFFER_PLAIN
 * @closures: OFFER: closures of the PMO; MIG_STATEMENT of ENDED: closures
 *	the transfer's receive took in
 * @bytes: OFFER: data bytes of the PMO; GRANT: bytes of the region
 * @levels: OFFER: geometry
 * @log_block_size: OFFER: geometry
 * @log_arity: OFFER: geometry
 * @reserved1: zero
 * @nonce: GRANT, ACK: the receive's nonce (MMT channel), drawn at random
 *	by the receiver for each receive; OFFER: the sender's nonce, drawn at
 *	random by the sender for each transfer or migration (every ACK and
 *	COMMIT tag covers both: struct mmt_bind); zero otherwise
 * @tag: ACK of the MMT channel: mmt_conn_ack_tag() of the verdict, under
 *	the MMT key; zero otherwise
 * @segs: GRANT: the region's segments in order, then the head slot
 */
struct mmt_wire_msg {
	__le32 magic;
	u8 type;
	u8 nsegs;
	u8 head_seg;
	u8 reserved0;
	__le32 gen;
	__le32 index;
	__le32 err;
	__le32 channel;
	__le32 flags;
	__le32 closures;
	__le64 bytes;
	u8 levels;
	u8 log_block_size;
	u8 log_arity[MMT_MAX_LEVELS];
	u8 reserved1[2];
	u8 nonce[MMT_RX_NONCE_BYTES];
	u8 tag[MMT_WIRE_TAG_BYTES];
	struct mmt_wire_seg segs[MMT_WIRE_MAX_SEGS];
};

#define MMT_WIRE_MSG_BYTES	sizeof(struct mmt_wire_msg)

/**
 * struct mmt_msg - a decoded message (or a DONE notice) in an inbox
 * @type: enum mmt_wire_type
 * @gen: transfer generation (DONE: its low 8 bits)
 * @index: as in struct mmt_wire_msg
 * @err: negative errno or 0: the verdict as the user sees it (a failure
 *	of the peer's own, not a rejection, becomes -EREMOTEIO)
 * @wire_err: negative errno or 0: the verdict as sent, which an ACK's tag
 *	covers (mmt_conn_ack_genuine())
 * @wire: the raw message (for GRANT's segments and OFFER's geometry);
 *	unused for DONE
 */
struct mmt_msg {
	u32 type;
	u32 gen;
	u32 index;
	int err;
	int wire_err;
	struct mmt_wire_msg wire;
};

/*
 * Secure channel (MMT_CHANNEL_SECURE): each closure's data is one AES-GCM
 * message of data_bytes of ciphertext then a 16-byte tag, sealed with
 * seq = closure index and AD = struct of le32 gen, le32 index.
 */
#define MMT_CONN_SEC_TAG_BYTES	MMT_GCM_TAG_BYTES
#define MMT_CONN_SEC_BIND_BYTES	17	/* see mmt_conn_sec_alloc() */
#define MMT_CONN_SEC_AD_BYTES	8	/* le32 gen, le32 index */

/**
 * struct mmt_conn_sec_id - what one secure-channel transfer's key is bound to
 * @conn_id: the connection's id (hello)
 * @sender_node: node id of the sending side
 * @receiver_node: node id of the receiving side
 * @dir: 0 if the sending side connected (MMT_IOC_CONNECT), 1 if it accepted
 * @gen: the transfer's generation (OFFER); unique per connection and
 *	direction
 */
struct mmt_conn_sec_id {
	u64 conn_id;
	u16 sender_node;
	u16 receiver_node;
	u8 dir;
	u32 gen;
};

/* mmt_conn.c */
int mmt_wire_decode(const void *buf, size_t len, struct mmt_msg *msg);
int mmt_wire_offer_check(const struct mmt_msg *offer, struct mmt_pmo *pmo,
			 u32 channel, bool plain);
void mmt_wire_offer_fill(struct mmt_wire_msg *w, struct mmt_pmo *pmo,
			 u32 channel, bool copy, bool plain);
int mmt_conn_tx_build(struct mmt_pmo *src, u64 conn_id, u32 gen,
		      const u8 *rx_nonce, u16 peer_node, u32 index, bool copy,
		      u8 *head);
int mmt_conn_ack_tag_root(const u8 *key_root, const struct mmt_bind *b,
			  u32 index, u64 root_counter, int verdict, u8 *tag);
int mmt_conn_ack_tag(struct mmt_pmo *pmo, const struct mmt_bind *b,
		     u32 index, u64 root_counter, int verdict, u8 *tag);
bool mmt_conn_ack_genuine(struct mmt_pmo *pmo, const struct mmt_bind *b,
			  const struct mmt_msg *m, u64 root_counter);
void mmt_conn_tx_settle(struct mmt_pmo *src, u32 index, bool copy, int err);
u64 mmt_conn_id_derive(u64 conn_rand, u64 accept_rand);
int mmt_conn_tx_check(struct mmt_pmo *src, u32 channel, bool *plain);
size_t mmt_conn_region_bytes(const struct mmt_params *p, u32 channel);
int mmt_conn_rx_prepare(struct mmt_pmo *pmo, u32 channel, u64 conn_id,
			bool *plain);
void mmt_conn_xfer_end(struct mmt_pmo *pmo, bool plain);
int mmt_conn_rx_check(struct mmt_pmo *pmo, u32 index, u32 gen,
		      const u8 *rx_nonce, const u8 *head, u16 peer, bool eager);
int mmt_conn_rx_begin(struct mmt_pmo *pmo, u32 index, u32 gen,
		      const u8 *rx_nonce, const u8 *head, u16 peer,
		      const struct mmt_closure_eager *prev,
		      struct mmt_closure_eager *pc);
int mmt_conn_rx_end(struct mmt_pmo *pmo, u32 index,
		    struct mmt_closure_eager *pc, int verdict);
void mmt_conn_rx_finish(struct mmt_pmo *pmo, bool plain);
int mmt_conn_xfer_args(const void *xfer);
int mmt_conn_migrate_args(const void *mig, bool send);
int mmt_conn_key_args(const void *key);
int mmt_conn_agree_args(const void *agree);
struct mmt_chan_crypto *mmt_conn_sec_alloc(struct mmt_pmo *pmo, bool plain,
					   const u8 *conn_root,
					   const struct mmt_conn_sec_id *id);
int mmt_conn_sec_seal(struct mmt_pmo *pmo, bool plain,
		      struct mmt_chan_crypto *c, u32 gen, u32 index, u8 *msg);
int mmt_conn_sec_open(struct mmt_pmo *pmo, bool plain,
		      struct mmt_chan_crypto *c, u32 gen, u32 index,
		      const u8 *msg, u8 *priv);
int mmt_conn_sec_decrypt(struct mmt_pmo *pmo, struct mmt_chan_crypto *c,
			 u32 gen, u32 index, const u8 *msg, u8 *priv);
int mmt_conn_sec_put(struct mmt_pmo *pmo, bool plain, u32 index,
		     const u8 *priv);
int mmt_conn_sec_commit(struct mmt_pmo *pmo, bool plain,
			struct mmt_chan_crypto *c, u32 index, int verdict,
			const u8 *priv);

/**
 * struct mmt_fault_commit - what a test build's hook asks of a migration
 *	at its COMMIT (mmt_conn_fault_commit(); docs/MIGRATION.md section 10)
 * @want: source: send WANT(@want) just before the COMMIT (U32_MAX: none)
 * @strays: destination: stray messages to send before checking the COMMIT
 * @stray_ms: destination: the time between two of them, in ms
 * @no_ack: destination: once committed, fail the COMMIT ACK's send
 * @drop: destination: drop the COMMIT and end the connection
 */
struct mmt_fault_commit {
	u32 want;
	u32 strays;
	u32 stray_ms;
	bool no_ack;
	bool drop;
};

/* mmt_conn_fault.c: test builds only (MMT_DEBUG); empty otherwise */
struct dentry;
#ifdef MMT_DEBUG
void mmt_conn_fault_rx(struct mmt_pmo *pmo, u32 index, u8 *head);
void mmt_conn_fault_msg(struct mmt_msg *msg);
bool mmt_conn_fault_commit(bool source, struct mmt_fault_commit *f);
u32 mmt_conn_fault_delay(bool agree);
bool mmt_conn_fault_established(void);
bool mmt_conn_fault_hs_reflect(void);
int mmt_conn_fault_cred(u8 *file, u32 len);
u32 mmt_conn_fault_hs_delay(void);
u8 mmt_conn_fault_wire(u8 type);
bool mmt_conn_fault_map_pages(void);
void mmt_conn_fault_init(struct dentry *dir);
void mmt_conn_fault_exit(void);
#else
static inline void mmt_conn_fault_rx(struct mmt_pmo *pmo, u32 index,
				     u8 *head)
{
}

static inline void mmt_conn_fault_msg(struct mmt_msg *msg)
{
}

static inline bool mmt_conn_fault_commit(bool source,
					 struct mmt_fault_commit *f)
{
	return false;
}

static inline u32 mmt_conn_fault_delay(bool agree)
{
	return 0;
}

static inline bool mmt_conn_fault_established(void)
{
	return false;
}

static inline bool mmt_conn_fault_hs_reflect(void)
{
	return false;
}

static inline int mmt_conn_fault_cred(u8 *file, u32 len)
{
	return 0;
}

static inline u32 mmt_conn_fault_hs_delay(void)
{
	return 0;
}

static inline u8 mmt_conn_fault_wire(u8 type)
{
	return type;
}

static inline bool mmt_conn_fault_map_pages(void)
{
	return false;
}

static inline void mmt_conn_fault_init(struct dentry *dir)
{
}

static inline void mmt_conn_fault_exit(void)
{
}
#endif

#endif /* MMT_CONN_H */
