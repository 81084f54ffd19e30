// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_record.c - this node's record of its receives, for the statements
 * that resolve a migration or a transfer of unknown outcome
 * (MMT_IOC_MIGRATE_RESOLVE; docs/MIGRATION.md section 7, docs/ENGINE.md
 * "Lost ack")
 */
#include <linux/spinlock.h>
#include <linux/string.h>

#include "mmt_internal.h"
#include "mmt_transport.h"
#include "mmt.h"

/*
 * The outcome of the last MMT_MIG_RECORDS migration receives and
 * transfer-mode MMT-channel receives of this node, for
 * MMT_IOC_MIGRATE_RESOLVE: a ring, the oldest record reused.  A record is
 * written PENDING when a receive starts and final (with its statement's
 * tag) when it ends, at the point after which the receive can no longer
 * commit (a transfer's: take in another closure).  No key is kept: the
 * tag is made at the end, from the PMO's keying root (a transfer's
 * receive holds its own copy while it runs).  The ring is
 * lost at module unload; a source that asks then hears "no record" and
 * stays read-only, which is never wrong.
 */
struct mmt_mig_rec {
	u8 nonce[MMT_RX_NONCE_BYTES];
	u8 tag[MMT_MIG_TAG_BYTES];
	u8 outcome;
	bool used;
	u32 closures;
};

static DEFINE_SPINLOCK(mmt_mig_recs_lock);
static struct mmt_mig_rec mmt_mig_recs[MMT_MIG_RECORDS];
static u32 mmt_mig_recs_next;

static_assert(MMT_MIG_STATED_COMMITTED == MMT_MIG_OUTCOME_COMMITTED);
static_assert(MMT_MIG_STATED_ABORTED == MMT_MIG_OUTCOME_ABORTED);

static struct mmt_mig_rec *mmt_mig_rec_find(const u8 *nonce)
{
	u32 i;

	lockdep_assert_held(&mmt_mig_recs_lock);
	for (i = 0; i < MMT_MIG_RECORDS; i++)
		if (mmt_mig_recs[i].used &&
		    !memcmp(mmt_mig_recs[i].nonce, nonce, MMT_RX_NONCE_BYTES))
			return &mmt_mig_recs[i];
	return NULL;
}

/**
 * mmt_mig_record() - record the state of a migration receive
 * @nonce: MMT_RX_NONCE_BYTES, the receive's nonce
 * @outcome: MMT_MIG_OUTCOME_PENDING, _COMMITTED or _ABORTED (final: with
 *	@tag), or MMT_MIG_OUTCOME_UNKNOWN (forget the receive)
 * @tag: MMT_MIG_TAG_BYTES, mmt_mig_resolve_tag() of a final @outcome;
 *	NULL otherwise
 *
 * Replaces the receive's record, or takes the oldest one.  A final
 * record (committed, aborted) never changes to another outcome: only
 * forgetting it (MMT_MIG_OUTCOME_UNKNOWN) removes it.
 *
 * Context: process; takes a spinlock.
 */
void mmt_mig_record(const u8 *nonce, u32 outcome, const u8 *tag)
{
	mmt_rx_record(nonce, outcome, 0, tag);
}

/**
 * mmt_rx_record() - record the state of a migration or transfer receive
 * @nonce: MMT_RX_NONCE_BYTES, the receive's nonce
 * @outcome: as for mmt_mig_record(), or MMT_MIG_OUTCOME_ENDED (final: a
 *	transfer's receive ended, with @tag)
 * @closures: ENDED: the closures the receive took in (from closure 0, in
 *	index order); 0 otherwise
 * @tag: MMT_MIG_TAG_BYTES, mmt_mig_resolve_tag() of a final migration
 *	outcome or mmt_xfer_resolve_tag() of ENDED; NULL otherwise
 *
 * As mmt_mig_record(): a final record never changes to another outcome.
 *
 * Context: process; takes a spinlock.
 */
void mmt_rx_record(const u8 *nonce, u32 outcome, u32 closures,
		   const u8 *tag)
{
	struct mmt_mig_rec *r;

	spin_lock(&mmt_mig_recs_lock);
	r = mmt_mig_rec_find(nonce);
	if (r && outcome != MMT_MIG_OUTCOME_UNKNOWN &&
	    (r->outcome == MMT_MIG_OUTCOME_COMMITTED ||
	     r->outcome == MMT_MIG_OUTCOME_ABORTED ||
	     r->outcome == MMT_MIG_OUTCOME_ENDED))
		r = NULL;	/* final: kept as it is */
	else if (!r && outcome != MMT_MIG_OUTCOME_UNKNOWN) {
		r = &mmt_mig_recs[mmt_mig_recs_next];
		mmt_mig_recs_next = (mmt_mig_recs_next + 1) % MMT_MIG_RECORDS;
	}
	if (r) {
		memcpy(r->nonce, nonce, MMT_RX_NONCE_BYTES);
		if (tag)
			memcpy(r->tag, tag, MMT_MIG_TAG_BYTES);
		else
			memset(r->tag, 0, MMT_MIG_TAG_BYTES);
		r->outcome = outcome;
		r->closures = closures;
		r->used = outcome != MMT_MIG_OUTCOME_UNKNOWN;
	}
	spin_unlock(&mmt_mig_recs_lock);
}

/**
 * mmt_mig_statement() - what this node states about a migration receive
 * @nonce: MMT_RX_NONCE_BYTES, the receive's nonce (untrusted: a peer's)
 * @tag: (out) MMT_MIG_TAG_BYTES: the statement's tag for a final outcome,
 *	zero otherwise
 *
 * Context: process; takes a spinlock.
 * Return: MMT_MIG_OUTCOME_*: UNKNOWN if no record holds @nonce.
 */
u32 mmt_mig_statement(const u8 *nonce, u8 *tag)
{
	u32 closures;

	return mmt_rx_statement(nonce, tag, &closures);
}

/**
 * mmt_rx_statement() - what this node states about a migration or
 *	transfer receive
 * @nonce: MMT_RX_NONCE_BYTES, the receive's nonce (untrusted: a peer's)
 * @tag: (out) as for mmt_mig_statement()
 * @closures: (out) MMT_MIG_OUTCOME_ENDED: the closures the transfer's
 *	receive took in; 0 otherwise
 *
 * Context: process; takes a spinlock.
 * Return: MMT_MIG_OUTCOME_*: UNKNOWN if no record holds @nonce.
 */
u32 mmt_rx_statement(const u8 *nonce, u8 *tag, u32 *closures)
{
	struct mmt_mig_rec *r;
	u32 outcome = MMT_MIG_OUTCOME_UNKNOWN;

	memset(tag, 0, MMT_MIG_TAG_BYTES);
	*closures = 0;
	spin_lock(&mmt_mig_recs_lock);
	r = mmt_mig_rec_find(nonce);
	if (r) {
		outcome = r->outcome;
		*closures = r->closures;
		memcpy(tag, r->tag, MMT_MIG_TAG_BYTES);
	}
	spin_unlock(&mmt_mig_recs_lock);
	return outcome;
}

/**
 * mmt_xfer_record_end() - record how an MMT-channel transfer receive ended
 * @key_root: MMT_KEY_ROOT_BYTES, the receive PMO's keying root as the
 *	receive began (its own copy: the PMO may have lost its key since);
 *	NULL if it had none
 * @b: the transfer as the receiver binds its ACKs (the sender's direction)
 * @closures: the closures the receive took in, from closure 0 in index
 *	order (it stops at its first refusal)
 *
 * Called once the receive can take nothing more in, so the statement is
 * final: MMT_MIG_OUTCOME_ENDED with mmt_xfer_resolve_tag() of @closures,
 * for a sender that lost the last ACKs (mmt_delegate_unknown()).  If the
 * tag cannot be made the receive is forgotten: its sender then hears "no
 * record" and stays read-only.
 *
 * Context: process; may sleep.
 */
void mmt_xfer_record_end(const u8 *key_root, const struct mmt_bind *b,
			 u32 closures)
{
	u8 tag[MMT_MIG_TAG_BYTES];
	int err = -ENOKEY;

	if (key_root)
		err = mmt_xfer_resolve_tag(key_root, b, closures, tag);
	mmt_rx_record(b->rx_nonce, err ? MMT_MIG_OUTCOME_UNKNOWN :
		      MMT_MIG_OUTCOME_ENDED, closures, err ? NULL : tag);
	memzero_explicit(tag, sizeof(tag));
}
