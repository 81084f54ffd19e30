// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_conn_fault.c - test builds only (make MMT_DEBUG=1): an attacker on
 * the wire, for the two-guest attack tests (tests/guest/rdma/README.md)
 *
 * debugfs mmt/conn_fault (root only) arms one-shot faults, one per line
 * written; reading it lists what is armed and how many fired:
 *
 *	xor data|macs|nodes|head I OFF MASK
 *		receiver: XOR byte OFF of closure I's data, data MACs, tree
 *		nodes (in the receive PMO's memory) or head (the private copy
 *		of header 0..63 and sealed root 64..191) with MASK
 *	record I	receiver: keep a copy of closure I as it landed (head
 *			and region), across transfers and connections
 *	present I J	receiver: put the kept closure J (head and region) in
 *			place of closure I
 *	rkey I guess	sender: write closure I with its grant's first rkey
 *			with the 8-bit key XORed with 0xff (right MR, wrong key)
 *	rkey I stale	sender: write closure I with the first rkey of grant
 *			I - 4 (the same MR before its invalidation); I >= 4
 *	ack I accept	sender: turn the ACK of closure I into an acceptance
 *			(verdict 0), keeping the receiver's nonce and tag
 *	ack I drop	sender: drop the ACK of closure I as it arrives, as
 *			an ACK lost on the wire (the transfer then fails
 *			with closures of unknown outcome)
 *	commit want I	migration source: send WANT(I) just before the COMMIT
 *			(the destination then holds a granted slot when the
 *			COMMIT arrives) and drop the GRANT that answers it
 *	commit stray N MS
 *			migration destination: before checking the COMMIT,
 *			send N stray messages MS ms apart (N <= 1000, MS <=
 *			1000), alternately a COMMIT ACK whose tag does not
 *			authenticate (a forged refusal) and an ACK of an
 *			earlier generation; then answer the COMMIT as usual
 *	commit noack	migration destination: once the COMMIT checked and
 *			the PMO committed, do not send its ACK: fail as a
 *			failed send does (the connection ends)
 *	commit drop	migration destination: drop the next COMMIT unread
 *			and end the connection, as a link lost with the
 *			COMMIT on it: the receive ends without a commit (the
 *			source's outcome is unknown; this node's statement
 *			says aborted)
 *	hs swap		attested handshake: replace the ephemeral share of the
 *			next peer hello this node receives with another valid
 *			X25519 public key (RFC 7748 section 6.1, Bob's): a man
 *			in the middle who swapped one key share; the handshake
 *			must fail (EKEYREJECTED on both sides)
 *	hs reflect	attested handshake: replace the next peer hello this
 *			node receives (and the node id of the peer's rdma_cm
 *			hello) with a copy of this node's own, as a relay that
 *			cross-feeds two connections to this node's own
 *			listener delivers it; the handshake must fail
 *			(EKEYREJECTED on both sides)
 *	hs corrupt	attested connection: flip one byte of the signature
 *			of the next renewed credential this node sends on a
 *			live connection (MMT_MSG_CRED): the peer must refuse
 *			it and close the connection (EKEYREJECTED there)
 *	hs verify delay MS
 *			attested handshake: sleep MS ms (1 <= MS <= 10000)
 *			in the check of the peer's credential (right after
 *			its signature) of the next handshake on this node: a
 *			slow peer, which must not delay other handshakes
 *	connect delay MS
 *			connecting side: once the next MMT_IOC_CONNECT's
 *			connection is established, wait until the peer closes
 *			it (at most MS ms, 1 <= MS <= 10000) before looking at
 *			its state: a listener that accepts and closes at once
 *			wins the race every time
 *	connect fail	connecting side: fail the next connection whose
 *			accept reply (hello) checked with EPROTO just before
 *			it enters LIVE, as a malformed message the peer sent
 *			before ESTABLISHED was handled does (the stage bit
 *			WAS_LIVE is set by then): MMT_IOC_CONNECT must return
 *			EPROTO, not a connection
 *	agree delay MS	MMT_IOC_CONN_KEY_AGREE: once the next agreement's
 *			tags checked, wait until the peer closes the
 *			connection (at most MS ms, 1 <= MS <= 10000) before
 *			looking at whether this side's confirmation reached
 *			it: a peer that closes once its agreement returned
 *			wins the race every time
 *	wire notice	this node's next protocol message (OFFER, GRANT,
 *			ACK, ...) on an RDMA connection goes out as
 *			MMT_MSG_NOTICE (its type
 *			rewritten): on RoCE the peer must fail the connection
 *			with EPROTO ("a NOTICE message on a RoCE connection")
 *	wire start	the same with MMT_MSG_START: EPROTO at a RoCE peer, and
 *			at an iWARP peer that connected ("a START to the
 *			connecting side"); arm it on the accepting side
 *	map pages	the next area this node maps for its NIC (a receiver:
 *			its first grant) gets one sg entry per page, as badly
 *			fragmented memory gives: a grant of 2 MiB is then 512
 *			entries, more than one MR takes on siw (256)
 *	clear		disarm everything and drop the kept closures
 *
 * debugfs mmt/conn_rkeys (root only) lists every rkey of the GRANTs this
 * node received as a sender since the last "clear" written to it (the
 * first MMT_RKEY_LOG), one "closure segment rkey" line each, after
 * "grants N", "rkeys N" and "dropped N" lines: how often an rkey comes
 * back (docs/CONNECTIONS.md, "rkeys").
 *
 * The receiver's hook runs after LOCAL_INV and before the check
 * (mmt_rx_done()), so it acts exactly where a write that raced the
 * invalidation would have; the sender's hook edits a GRANT as it arrives.
 * A fault fires once, on the first transfer that reaches its closure
 * (after a "record", no other fault fires on that arrival).
 * Not built at all without MMT_DEBUG (Kbuild leaves this file out and
 * mmt_conn.h makes the hooks empty inlines).
 *
 * Locking: mmt_fault_lock (spinlock; the GRANT hook runs in softirq)
 * protects the armed list, the rkey history and the rkey log;
 * mmt_fault_mutex the kept closures.
 */
#ifdef MMT_DEBUG
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "mmt_conn.h"
#include "mmt_internal.h"

#define MMT_FAULT_MAX	8	/* armed at once */
#define MMT_FAULT_KEEP	4	/* closures kept by "record" */
#define MMT_FAULT_RKEYS	8	/* rkey history, by index & 7 */
#define MMT_RKEY_LOG	8192	/* rkeys kept for mmt/conn_rkeys */

enum mmt_fault_op {
	MMT_FAULT_XOR,
	MMT_FAULT_RECORD,
	MMT_FAULT_PRESENT,
	MMT_FAULT_RKEY_GUESS,
	MMT_FAULT_RKEY_STALE,
	MMT_FAULT_ACK_ACCEPT,
	MMT_FAULT_ACK_DROP,
	MMT_FAULT_GRANT_DROP,	/* armed by "commit want" */
	MMT_FAULT_COMMIT_WANT,
	MMT_FAULT_COMMIT_STRAY,
	MMT_FAULT_COMMIT_NOACK,
	MMT_FAULT_COMMIT_DROP,
	MMT_FAULT_HS_SWAP,
	MMT_FAULT_HS_REFLECT,
	MMT_FAULT_HS_CORRUPT,
	MMT_FAULT_HS_VERIFY_DELAY,
	MMT_FAULT_CONNECT_DELAY,
	MMT_FAULT_CONNECT_FAIL,
	MMT_FAULT_AGREE_DELAY,
	MMT_FAULT_WIRE_NOTICE,
	MMT_FAULT_WIRE_START,
	MMT_FAULT_MAP_PAGES,
};

/* Where a fault acts: the receiver's check, a GRANT or an ACK the sender
 * receives, a migration's COMMIT at the source or at the destination.
 */
enum mmt_fault_kind {
	MMT_FAULT_AT_RX,
	MMT_FAULT_AT_GRANT,
	MMT_FAULT_AT_ACK,
	MMT_FAULT_AT_ACK_DROP,
	MMT_FAULT_AT_COMMIT_TX,
	MMT_FAULT_AT_COMMIT_RX,
	MMT_FAULT_AT_HS,
	MMT_FAULT_AT_HS_REFLECT,
	MMT_FAULT_AT_CRED,
	MMT_FAULT_AT_HS_VERIFY,
	MMT_FAULT_AT_CONNECT,
	MMT_FAULT_AT_ESTABLISHED,
	MMT_FAULT_AT_AGREE,
	MMT_FAULT_AT_WIRE,
	MMT_FAULT_AT_MAP,
};

static enum mmt_fault_kind mmt_fault_kind(enum mmt_fault_op op)
{
	switch (op) {
	case MMT_FAULT_RKEY_GUESS:
	case MMT_FAULT_RKEY_STALE:
	case MMT_FAULT_GRANT_DROP:
		return MMT_FAULT_AT_GRANT;
	case MMT_FAULT_ACK_ACCEPT:
		return MMT_FAULT_AT_ACK;
	case MMT_FAULT_ACK_DROP:
		return MMT_FAULT_AT_ACK_DROP;
	case MMT_FAULT_COMMIT_WANT:
		return MMT_FAULT_AT_COMMIT_TX;
	case MMT_FAULT_COMMIT_STRAY:
	case MMT_FAULT_COMMIT_NOACK:
	case MMT_FAULT_COMMIT_DROP:
		return MMT_FAULT_AT_COMMIT_RX;
	case MMT_FAULT_HS_SWAP:
		return MMT_FAULT_AT_HS;
	case MMT_FAULT_HS_REFLECT:
		return MMT_FAULT_AT_HS_REFLECT;
	case MMT_FAULT_HS_CORRUPT:
		return MMT_FAULT_AT_CRED;
	case MMT_FAULT_HS_VERIFY_DELAY:
		return MMT_FAULT_AT_HS_VERIFY;
	case MMT_FAULT_CONNECT_DELAY:
		return MMT_FAULT_AT_CONNECT;
	case MMT_FAULT_CONNECT_FAIL:
		return MMT_FAULT_AT_ESTABLISHED;
	case MMT_FAULT_AGREE_DELAY:
		return MMT_FAULT_AT_AGREE;
	case MMT_FAULT_WIRE_NOTICE:
	case MMT_FAULT_WIRE_START:
		return MMT_FAULT_AT_WIRE;
	case MMT_FAULT_MAP_PAGES:
		return MMT_FAULT_AT_MAP;
	default:
		return MMT_FAULT_AT_RX;
	}
}

enum mmt_fault_region {
	MMT_FAULT_DATA,
	MMT_FAULT_MACS,
	MMT_FAULT_NODES,
	MMT_FAULT_HEAD,
};

struct mmt_fault {
	enum mmt_fault_op op;
	enum mmt_fault_region region;
	u32 index;
	u32 other;	/* PRESENT: the kept closure; STRAY, DELAYs: ms */
	u64 off;
	u8 mask;
};

struct mmt_fault_kept {
	bool used;
	u32 index;
	u8 head[MMT_CONN_HEAD_BYTES];
	u8 *region;
	size_t len;
};

static DEFINE_SPINLOCK(mmt_fault_lock);
static struct mmt_fault mmt_faults[MMT_FAULT_MAX];
static u32 mmt_nfaults;
static u64 mmt_faults_fired;
static u32 mmt_fault_rkeys[MMT_FAULT_RKEYS];

static DEFINE_MUTEX(mmt_fault_mutex);
static struct mmt_fault_kept mmt_kept[MMT_FAULT_KEEP];

/* An rkey of a GRANT, for mmt/conn_rkeys. */
struct mmt_rkey_entry {
	u32 index;
	u32 seg;
	u32 rkey;
};

static struct mmt_rkey_entry *mmt_rkey_log;	/* MMT_RKEY_LOG, or NULL */
static u32 mmt_rkey_logged;
static u64 mmt_rkey_grants, mmt_rkey_dropped;

/* Take the first armed fault for closure @index on one side. */
static bool mmt_fault_take(u32 index, enum mmt_fault_kind kind,
			   struct mmt_fault *out)
{
	unsigned long flags;
	bool found = false;
	u32 i;

	spin_lock_irqsave(&mmt_fault_lock, flags);
	for (i = 0; i < mmt_nfaults; i++) {
		if (mmt_faults[i].index != index ||
		    mmt_fault_kind(mmt_faults[i].op) != kind)
			continue;
		*out = mmt_faults[i];
		memmove(&mmt_faults[i], &mmt_faults[i + 1],
			(mmt_nfaults - i - 1) * sizeof(mmt_faults[0]));
		mmt_nfaults--;
		mmt_faults_fired++;
		found = true;
		break;
	}
	spin_unlock_irqrestore(&mmt_fault_lock, flags);
	return found;
}

static void mmt_fault_drop_kept(void)
{
	u32 i;

	mutex_lock(&mmt_fault_mutex);
	for (i = 0; i < MMT_FAULT_KEEP; i++) {
		kvfree(mmt_kept[i].region);
		memset(&mmt_kept[i], 0, sizeof(mmt_kept[i]));
	}
	mutex_unlock(&mmt_fault_mutex);
}

/* Keep closure @index (head @head, region @region of @len bytes). */
static void mmt_fault_record(u32 index, const u8 *head, const u8 *region,
			     size_t len)
{
	struct mmt_fault_kept *k = NULL;
	u8 *copy;
	u32 i;

	copy = kvmalloc(len, GFP_KERNEL);
	if (!copy)
		return;	/* "present" then finds nothing and says so */
	memcpy(copy, region, len);
	mutex_lock(&mmt_fault_mutex);
	for (i = 0; i < MMT_FAULT_KEEP && !k; i++)
		if (mmt_kept[i].used && mmt_kept[i].index == index)
			k = &mmt_kept[i];
	for (i = 0; i < MMT_FAULT_KEEP && !k; i++)
		if (!mmt_kept[i].used)
			k = &mmt_kept[i];
	if (k) {
		kvfree(k->region);
		k->used = true;
		k->index = index;
		memcpy(k->head, head, sizeof(k->head));
		k->region = copy;
		k->len = len;
		copy = NULL;
	}
	mutex_unlock(&mmt_fault_mutex);
	if (copy) {
		pr_info("conn_fault: record %u: store full\n", index);
		kvfree(copy);
	}
}

/* Put the kept closure @other in place of @head and @region. */
static void mmt_fault_present(u32 other, u8 *head, u8 *region, size_t len)
{
	bool done = false;
	u32 i;

	mutex_lock(&mmt_fault_mutex);
	for (i = 0; i < MMT_FAULT_KEEP; i++) {
		struct mmt_fault_kept *k = &mmt_kept[i];

		if (!k->used || k->index != other || k->len != len)
			continue;
		memcpy(head, k->head, sizeof(k->head));
		memcpy(region, k->region, len);
		done = true;
		break;
	}
	mutex_unlock(&mmt_fault_mutex);
	if (!done)
		pr_info("conn_fault: present: no kept closure %u\n", other);
}

/**
 * mmt_conn_fault_rx() - receiver hook: apply the faults armed for closure
 *	@index, after the LOCAL_INV of its registration and before its check
 * @pmo: the receive PMO (MMT channel)
 * @index: the closure
 * @head: the private copy of its header and sealed root
 *	(MMT_CONN_HEAD_BYTES) that the check reads
 *
 * Context: process, no lock held; takes @pmo->lock and mmt_fault_mutex.
 */
void mmt_conn_fault_rx(struct mmt_pmo *pmo, u32 index, u8 *head)
{
	const struct mmt_params *p = &pmo->params;
	size_t len = p->data_bytes + p->macs_bytes + p->nodes_bytes;
	u8 *region = pmo->mem + (size_t)index * pmo->stride;
	struct mmt *m = &pmo->mmts[index];
	struct mmt_fault f;
	u64 bytes;
	u8 *base;

	while (mmt_fault_take(index, MMT_FAULT_AT_RX, &f)) {
		switch (f.op) {
		case MMT_FAULT_RECORD:
			/*
			 * The last fault of this arrival: one armed while the
			 * copy was made (mmt-migrate -G arms "present" once
			 * this fired) waits for the next closure @index.
			 */
			mmt_fault_record(index, head, region, len);
			return;
		case MMT_FAULT_PRESENT:
			mutex_lock(&pmo->lock);
			mmt_fault_present(f.other, head, region, len);
			mutex_unlock(&pmo->lock);
			continue;
		default:
			break;
		}
		switch (f.region) {
		case MMT_FAULT_DATA:
			base = m->data;
			bytes = p->data_bytes;
			break;
		case MMT_FAULT_MACS:
			base = m->macs;
			bytes = p->macs_bytes;
			break;
		case MMT_FAULT_NODES:
			base = m->nodes;
			bytes = p->nodes_bytes;
			break;
		default:
			base = head;
			bytes = MMT_CONN_HEAD_BYTES;
			break;
		}
		if (!base || f.off >= bytes) {
			pr_info("conn_fault: offset %llu out of range\n", f.off);
			continue;
		}
		mutex_lock(&pmo->lock);
		base[f.off] ^= f.mask;
		mutex_unlock(&pmo->lock);
	}
}

/**
 * mmt_conn_fault_msg() - a message arrived: record a GRANT's first rkey
 *	and apply an rkey fault armed for its closure (sender), an ACK
 *	fault (sender), or swap the share of a handshake hello ("hs swap")
 * @msg: the decoded message, before it is queued
 *
 * Context: softirq (the receive completion); takes mmt_fault_lock.
 */
void mmt_conn_fault_msg(struct mmt_msg *msg)
{
	struct mmt_wire_seg *seg = &msg->wire.segs[0];
	u32 rkey = le32_to_cpu(seg->rkey);
	struct mmt_fault f;
	unsigned long flags;
	u32 stale, i;

	if (msg->type == MMT_MSG_HS_HELLO) {
		/* the share is the first 32 bytes of the hello (index 0) */
		static const u8 other[32] = {
			0xde, 0x9e, 0xdb, 0x7d, 0x7b, 0x7d, 0xc1, 0xb4,
			0xd3, 0x5b, 0x61, 0xc2, 0xec, 0xe4, 0x35, 0x37,
			0x3f, 0x83, 0x43, 0xc8, 0x5b, 0x78, 0x67, 0x4d,
			0xad, 0xfc, 0x7e, 0x14, 0x6f, 0x88, 0x2b, 0x4f,
		};

		if (!msg->index && le64_to_cpu(msg->wire.bytes) >= 32 &&
		    mmt_fault_take(0, MMT_FAULT_AT_HS, &f))
			memcpy(msg->wire.segs, other, sizeof(other));
		return;
	}
	if (msg->type == MMT_MSG_ACK) {
		if (mmt_fault_take(msg->index, MMT_FAULT_AT_ACK_DROP, &f)) {
			/* another generation's: the sender drops it unread */
			msg->gen ^= 0x80000000u;
			return;
		}
		if (msg->err && mmt_fault_take(msg->index, MMT_FAULT_AT_ACK, &f)) {
			msg->err = 0;
			msg->wire_err = 0;	/* as on the wire */
			msg->wire.err = 0;
		}
		return;
	}
	if (msg->type != MMT_MSG_GRANT || !msg->wire.nsegs)
		return;
	spin_lock_irqsave(&mmt_fault_lock, flags);
	mmt_rkey_grants++;
	for (i = 0; i < min_t(u32, msg->wire.nsegs, MMT_WIRE_MAX_SEGS); i++) {
		if (!mmt_rkey_log || mmt_rkey_logged >= MMT_RKEY_LOG) {
			mmt_rkey_dropped++;
			continue;
		}
		mmt_rkey_log[mmt_rkey_logged++] = (struct mmt_rkey_entry) {
			.index = msg->index,
			.seg = i,
			.rkey = le32_to_cpu(msg->wire.segs[i].rkey),
		};
	}
	stale = mmt_fault_rkeys[(msg->index - MMT_CONN_WINDOW) %
				MMT_FAULT_RKEYS];
	mmt_fault_rkeys[msg->index % MMT_FAULT_RKEYS] = rkey;
	spin_unlock_irqrestore(&mmt_fault_lock, flags);
	if (!mmt_fault_take(msg->index, MMT_FAULT_AT_GRANT, &f))
		return;
	if (f.op == MMT_FAULT_GRANT_DROP) {
		/* another generation's: the source drops it unread */
		msg->gen ^= 0x80000000u;
		return;
	}
	if (f.op == MMT_FAULT_RKEY_GUESS)
		rkey ^= 0xff;
	else if (msg->index >= MMT_CONN_WINDOW)
		rkey = stale;
	else
		pr_info("conn_fault: rkey %u stale: no earlier grant\n",
			msg->index);
	seg->rkey = cpu_to_le32(rkey);
}

/* Arm @f from a hook (as a write of mmt/conn_fault would). */
static void mmt_fault_arm(const struct mmt_fault *f)
{
	unsigned long flags;

	spin_lock_irqsave(&mmt_fault_lock, flags);
	if (mmt_nfaults < MMT_FAULT_MAX)
		mmt_faults[mmt_nfaults++] = *f;
	else
		pr_info("conn_fault: full, not armed\n");
	spin_unlock_irqrestore(&mmt_fault_lock, flags);
}

/**
 * mmt_conn_fault_commit() - migration hook at the COMMIT: take the faults
 *	armed for it on this side ("commit ..." lines)
 * @source: the caller is the source (about to send its COMMIT), else the
 *	destination (a COMMIT arrived, not yet checked)
 * @f: what to do, filled in (@f->want U32_MAX and the rest 0 when nothing
 *	is armed)
 *
 * "commit want I" also arms the drop of the GRANT that answers the WANT.
 *
 * Context: process; takes mmt_fault_lock.
 * Return: true if any fault was taken.
 */
bool mmt_conn_fault_commit(bool source, struct mmt_fault_commit *f)
{
	enum mmt_fault_kind kind = source ? MMT_FAULT_AT_COMMIT_TX :
					    MMT_FAULT_AT_COMMIT_RX;
	struct mmt_fault a;
	bool any = false;

	memset(f, 0, sizeof(*f));
	f->want = U32_MAX;
	while (mmt_fault_take(0, kind, &a)) {
		any = true;
		switch (a.op) {
		case MMT_FAULT_COMMIT_WANT:
			f->want = a.other;
			memset(&a, 0, sizeof(a));
			a.op = MMT_FAULT_GRANT_DROP;
			a.index = f->want;
			mmt_fault_arm(&a);
			break;
		case MMT_FAULT_COMMIT_STRAY:
			f->strays = a.off;
			f->stray_ms = a.other;
			break;
		case MMT_FAULT_COMMIT_DROP:
			f->drop = true;
			break;
		default:
			f->no_ack = true;
			break;
		}
	}
	return any;
}

/**
 * mmt_conn_fault_delay() - the delay a "connect delay MS" or "agree delay
 *	MS" line armed, taken (it fires once)
 * @agree: for this MMT_IOC_CONN_KEY_AGREE (called once its tags checked,
 *	never for a failed one), else for this MMT_IOC_CONNECT (called once
 *	its connection entered LIVE, never for one refused, timed out or
 *	interrupted)
 *
 * Context: process; takes mmt_fault_lock.
 * Return: the delay in ms, or 0 when nothing is armed.
 */
u32 mmt_conn_fault_delay(bool agree)
{
	struct mmt_fault f;

	return mmt_fault_take(0, agree ? MMT_FAULT_AT_AGREE :
					 MMT_FAULT_AT_CONNECT, &f) ? f.other : 0;
}

/**
 * mmt_conn_fault_hs_reflect() - whether an "hs reflect" line is armed,
 *	taken (it fires once)
 *
 * Called by an attested handshake once the peer's hello arrived, before
 * its credential is checked.
 * Context: process; takes mmt_fault_lock.
 * Return: true if the caller must take its own hello as the peer's.
 */
bool mmt_conn_fault_hs_reflect(void)
{
	struct mmt_fault f;

	return mmt_fault_take(0, MMT_FAULT_AT_HS_REFLECT, &f);
}

/**
 * mmt_conn_fault_cred() - apply an "hs corrupt" line if one is armed,
 *	taken (it fires once)
 * @file: the renewed credential file about to be sent
 * @len: its length in bytes (more than the 136-byte body)
 *
 * Flips the last byte of the file (inside the PKCS#7 signature's RSA
 * value), so the peer's check of the renewal fails.
 * Context: process; takes mmt_fault_lock.
 * Return: 0.
 */
int mmt_conn_fault_cred(u8 *file, u32 len)
{
	struct mmt_fault f;

	if (mmt_fault_take(0, MMT_FAULT_AT_CRED, &f))
		file[len - 1] ^= 0x01;
	return 0;
}

/**
 * mmt_conn_fault_hs_delay() - the delay an "hs verify delay MS" line
 *	armed, taken (it fires once)
 *
 * Called by an attested handshake before its check of the peer's
 * credential, which then sleeps that long (struct mmt_hs test_verify_ms).
 * Context: process; takes mmt_fault_lock.
 * Return: the delay in ms, or 0 when nothing is armed.
 */
u32 mmt_conn_fault_hs_delay(void)
{
	struct mmt_fault f;

	return mmt_fault_take(0, MMT_FAULT_AT_HS_VERIFY, &f) ? f.other : 0;
}

/**
 * mmt_conn_fault_established() - whether a "connect fail" line is armed,
 *	taken (it fires once)
 *
 * Called by the connecting side's ESTABLISHED handler once the accept
 * reply checked, before the connection enters LIVE.
 * Context: the rdma_cm handler (process); takes mmt_fault_lock.
 * Return: true if the caller must fail the connection (EPROTO).
 */
bool mmt_conn_fault_established(void)
{
	struct mmt_fault f;

	return mmt_fault_take(0, MMT_FAULT_AT_ESTABLISHED, &f);
}

/**
 * mmt_conn_fault_wire() - the type a protocol message about to be posted
 *	goes out with: a "wire notice" or "wire start" line if one is armed,
 *	taken (it fires once), else @type
 * @type: the message's own type (enum mmt_msg_type)
 *
 * Called by the RDMA fabric for each message it sends for the protocol
 * (mmt_rdma_send_msg(): GRANTs and every other message, not the START
 * it sends itself).  A peer that breaks the
 * fabric's rules (mmt_conn.h, MMT_MSG_NOTICE and MMT_MSG_START).
 * Context: process; takes mmt_fault_lock.
 * Return: MMT_MSG_NOTICE, MMT_MSG_START or @type.
 */
u8 mmt_conn_fault_wire(u8 type)
{
	struct mmt_fault f;

	if (!mmt_fault_take(0, MMT_FAULT_AT_WIRE, &f))
		return type;
	return f.op == MMT_FAULT_WIRE_NOTICE ? MMT_MSG_NOTICE : MMT_MSG_START;
}

/**
 * mmt_conn_fault_map_pages() - whether a "map pages" line is armed, taken
 *	(it fires once)
 *
 * Called by the RDMA fabric as it maps an area for the NIC
 * (mmt_rdma_map()), which then makes one sg entry of each page instead of
 * one of each physically contiguous run.
 * Context: process; takes mmt_fault_lock.
 * Return: true if the caller must map page by page.
 */
bool mmt_conn_fault_map_pages(void)
{
	struct mmt_fault f;

	return mmt_fault_take(0, MMT_FAULT_AT_MAP, &f);
}

/*
 * "connect delay MS", "agree delay MS" (1 <= MS <= 10000) or "connect
 * fail", @op the first word: the whole line, no wrapped number, nothing
 * after it.  Return: 0 or -EINVAL.
 */
static int mmt_fault_parse_conn(const char *line, const char *op,
				struct mmt_fault *f)
{
	char a[8], num[12];
	int end = 0, n;

	n = sscanf(line, "%*s %7s %n", a, &end);
	if (n == 1 && !strcmp(op, "connect") && !strcmp(a, "fail") &&
	    !line[end]) {
		f->op = MMT_FAULT_CONNECT_FAIL;
		return 0;
	}
	if (n != 1 || strcmp(a, "delay"))
		return -EINVAL;
	line += end;
	end = 0;
	if (sscanf(line, "%11s %n", num, &end) != 1 || line[end] ||
	    kstrtou32(num, 10, &f->other) || !f->other || f->other > 10000)
		return -EINVAL;
	f->op = strcmp(op, "connect") ? MMT_FAULT_AGREE_DELAY :
					MMT_FAULT_CONNECT_DELAY;
	return 0;
}

/*
 * "hs verify delay MS" (1 <= MS <= 10000): the whole line, no wrapped
 * number, nothing after it.  Return: 0 or -EINVAL.
 */
static int mmt_fault_parse_hs_delay(const char *line, struct mmt_fault *f)
{
	char num[12];
	int end = 0;

	if (sscanf(line, "hs verify delay %11s %n", num, &end) != 1 ||
	    line[end] || kstrtou32(num, 10, &f->other) || !f->other ||
	    f->other > 10000)
		return -EINVAL;
	f->op = MMT_FAULT_HS_VERIFY_DELAY;
	return 0;
}

static int mmt_fault_parse(char *line, struct mmt_fault *f)
{
	static const char * const regions[] = {
		[MMT_FAULT_DATA] = "data", [MMT_FAULT_MACS] = "macs",
		[MMT_FAULT_NODES] = "nodes", [MMT_FAULT_HEAD] = "head",
	};
	char op[8], a[8];
	unsigned int mask;
	int n, r;

	memset(f, 0, sizeof(*f));
	n = sscanf(line, "%7s", op);
	if (n != 1)
		return -EINVAL;
	if (!strcmp(op, "xor")) {
		f->op = MMT_FAULT_XOR;
		if (sscanf(line, "xor %7s %u %llu %u", a, &f->index, &f->off,
			   &mask) != 4 || !mask || mask > 0xff)
			return -EINVAL;
		f->mask = mask;
		r = match_string(regions, ARRAY_SIZE(regions), a);
		if (r < 0)
			return -EINVAL;
		f->region = r;
	} else if (!strcmp(op, "record")) {
		f->op = MMT_FAULT_RECORD;
		if (sscanf(line, "record %u", &f->index) != 1)
			return -EINVAL;
	} else if (!strcmp(op, "present")) {
		f->op = MMT_FAULT_PRESENT;
		if (sscanf(line, "present %u %u", &f->index, &f->other) != 2)
			return -EINVAL;
	} else if (!strcmp(op, "rkey")) {
		if (sscanf(line, "rkey %u %7s", &f->index, a) != 2)
			return -EINVAL;
		if (!strcmp(a, "guess"))
			f->op = MMT_FAULT_RKEY_GUESS;
		else if (!strcmp(a, "stale"))
			f->op = MMT_FAULT_RKEY_STALE;
		else
			return -EINVAL;
	} else if (!strcmp(op, "ack")) {
		if (sscanf(line, "ack %u %7s", &f->index, a) != 2)
			return -EINVAL;
		if (!strcmp(a, "accept"))
			f->op = MMT_FAULT_ACK_ACCEPT;
		else if (!strcmp(a, "drop"))
			f->op = MMT_FAULT_ACK_DROP;
		else
			return -EINVAL;
	} else if (!strcmp(op, "hs")) {
		n = 0;
		if (sscanf(line, "hs %7s %n", a, &n) != 1)
			return -EINVAL;
		/* one word: nothing may follow it */
		if (strcmp(a, "verify") && line[n])
			return -EINVAL;
		if (!strcmp(a, "swap"))
			f->op = MMT_FAULT_HS_SWAP;
		else if (!strcmp(a, "reflect"))
			f->op = MMT_FAULT_HS_REFLECT;
		else if (!strcmp(a, "corrupt"))
			f->op = MMT_FAULT_HS_CORRUPT;
		else if (!strcmp(a, "verify"))
			return mmt_fault_parse_hs_delay(line, f);
		else
			return -EINVAL;
	} else if (!strcmp(op, "connect") || !strcmp(op, "agree")) {
		return mmt_fault_parse_conn(line, op, f);
	} else if (!strcmp(op, "map")) {
		n = 0;
		if (sscanf(line, "map %7s %n", a, &n) != 1 || line[n] ||
		    strcmp(a, "pages"))
			return -EINVAL;
		f->op = MMT_FAULT_MAP_PAGES;
	} else if (!strcmp(op, "wire")) {
		n = 0;
		if (sscanf(line, "wire %7s %n", a, &n) != 1 || line[n])
			return -EINVAL;
		if (!strcmp(a, "notice"))
			f->op = MMT_FAULT_WIRE_NOTICE;
		else if (!strcmp(a, "start"))
			f->op = MMT_FAULT_WIRE_START;
		else
			return -EINVAL;
	} else if (!strcmp(op, "commit")) {
		if (sscanf(line, "commit %7s", a) != 1)
			return -EINVAL;
		if (!strcmp(a, "want")) {
			f->op = MMT_FAULT_COMMIT_WANT;
			if (sscanf(line, "commit want %u", &f->other) != 1 ||
			    f->other >= MMT_CONN_MAX_CLOSURES)
				return -EINVAL;
		} else if (!strcmp(a, "stray")) {
			f->op = MMT_FAULT_COMMIT_STRAY;
			if (sscanf(line, "commit stray %llu %u", &f->off,
				   &f->other) != 2 || !f->off ||
			    f->off > 1000 || f->other > 1000)
				return -EINVAL;
		} else if (!strcmp(a, "noack")) {
			f->op = MMT_FAULT_COMMIT_NOACK;
		} else if (!strcmp(a, "drop")) {
			f->op = MMT_FAULT_COMMIT_DROP;
		} else {
			return -EINVAL;
		}
	} else {
		return -EINVAL;
	}
	return 0;
}

static ssize_t mmt_fault_write(struct file *file, const char __user *ubuf,
			       size_t count, loff_t *ppos)
{
	struct mmt_fault f;
	unsigned long flags;
	char buf[64];
	int err = 0;

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	if (sysfs_streq(buf, "clear")) {
		spin_lock_irqsave(&mmt_fault_lock, flags);
		mmt_nfaults = 0;
		memset(mmt_fault_rkeys, 0, sizeof(mmt_fault_rkeys));
		spin_unlock_irqrestore(&mmt_fault_lock, flags);
		mmt_fault_drop_kept();
		return count;
	}
	err = mmt_fault_parse(buf, &f);
	if (err)
		return err;
	spin_lock_irqsave(&mmt_fault_lock, flags);
	if (mmt_nfaults < MMT_FAULT_MAX)
		mmt_faults[mmt_nfaults++] = f;
	else
		err = -ENOSPC;
	spin_unlock_irqrestore(&mmt_fault_lock, flags);
	return err ? err : count;
}

static int mmt_fault_show(struct seq_file *s, void *unused)
{
	unsigned long flags;
	u32 armed;
	u64 fired;
	u32 i, kept = 0;

	spin_lock_irqsave(&mmt_fault_lock, flags);
	armed = mmt_nfaults;
	fired = mmt_faults_fired;
	spin_unlock_irqrestore(&mmt_fault_lock, flags);
	mutex_lock(&mmt_fault_mutex);
	for (i = 0; i < MMT_FAULT_KEEP; i++)
		kept += mmt_kept[i].used;
	mutex_unlock(&mmt_fault_mutex);
	seq_printf(s, "armed %u\nfired %llu\nkept %u\n", armed, fired, kept);
	return 0;
}

static int mmt_fault_open(struct inode *inode, struct file *file)
{
	return single_open(file, mmt_fault_show, NULL);
}

static const struct file_operations mmt_fault_fops = {
	.owner = THIS_MODULE,
	.open = mmt_fault_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = mmt_fault_write,
};

static ssize_t mmt_rkeys_write(struct file *file, const char __user *ubuf,
			       size_t count, loff_t *ppos)
{
	unsigned long flags;
	char buf[8];

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	if (!sysfs_streq(buf, "clear"))
		return -EINVAL;
	spin_lock_irqsave(&mmt_fault_lock, flags);
	mmt_rkey_logged = 0;
	mmt_rkey_grants = 0;
	mmt_rkey_dropped = 0;
	spin_unlock_irqrestore(&mmt_fault_lock, flags);
	return count;
}

static int mmt_rkeys_show(struct seq_file *s, void *unused)
{
	unsigned long flags;
	u32 i;

	spin_lock_irqsave(&mmt_fault_lock, flags);
	seq_printf(s, "grants %llu\nrkeys %u\ndropped %llu\n",
		   mmt_rkey_grants, mmt_rkey_logged, mmt_rkey_dropped);
	for (i = 0; i < mmt_rkey_logged; i++)
		seq_printf(s, "%u %u %08x\n", mmt_rkey_log[i].index,
			   mmt_rkey_log[i].seg, mmt_rkey_log[i].rkey);
	spin_unlock_irqrestore(&mmt_fault_lock, flags);
	return 0;
}

static int mmt_rkeys_open(struct inode *inode, struct file *file)
{
	return single_open(file, mmt_rkeys_show, NULL);
}

static const struct file_operations mmt_rkeys_fops = {
	.owner = THIS_MODULE,
	.open = mmt_rkeys_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = mmt_rkeys_write,
};

/**
 * mmt_conn_fault_init() - create debugfs mmt/conn_fault and mmt/conn_rkeys
 *	(test builds only)
 * @dir: the module's debugfs directory
 *
 * Context: module init.
 */
void mmt_conn_fault_init(struct dentry *dir)
{
	/* without it mmt/conn_rkeys lists nothing and counts every drop */
	mmt_rkey_log = vmalloc(array_size(MMT_RKEY_LOG,
					  sizeof(*mmt_rkey_log)));
	debugfs_create_file("conn_fault", 0600, dir, NULL, &mmt_fault_fops);
	debugfs_create_file("conn_rkeys", 0600, dir, NULL, &mmt_rkeys_fops);
}

/**
 * mmt_conn_fault_exit() - drop the kept closures and the rkey log (the
 *	files go with the directory)
 *
 * Context: module exit, after every connection is gone.
 */
void mmt_conn_fault_exit(void)
{
	mmt_fault_drop_kept();
	vfree(mmt_rkey_log);
	mmt_rkey_log = NULL;
}
#endif /* MMT_DEBUG */
