// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_migrate.c - live migration of a PMO, the transport-independent part
 * (docs/MIGRATION.md; DESIGN.md section 8)
 *
 * Source: the dirty set (a closure is dirty when its MMT's root counter
 * moved past the one sealed into the last closure of it that was sent),
 * the rounds, the expected downtime (dirty closures times the measured
 * time per closure), the decision after each round (another round, the
 * handover, or at the round limit its refusal) and the writers' throttle
 * once rounds stop converging (QEMU's auto-converge); the digest of what the
 * destination must hold and the COMMIT tag over it.  Destination: the
 * per-index freshness rules live in the receive rules (rx->migrate,
 * lib/mmt_closure.c); here the commit check (tag, then the digest of what
 * landed) and the commit and abort of every MMT in one pass.
 *
 * Locking: none; the caller serializes access to the MMTs and to the
 * struct mmt_mig_src (the driver holds the PMO's mutex).
 */
#include "mmt_lib.h"
#include "mmt.h"

/* Digest preimage: label, le32 N, then per index le64 GUA, le64 counter */
#define MMT_MIG_LABEL		"mmt v2 migrate"
#define MMT_MIG_LABEL_LEN	(sizeof(MMT_MIG_LABEL) - 1)
#define MMT_MIG_REC_BYTES	16

/**
 * mmt_mig_src_init() - start the source's bookkeeping of a migration
 * @s: (out) zeroed, then set up
 * @closures: closures of the PMO, at least 1
 * @max_rounds: pre-copy rounds at most (the full copy counts), >= 1
 * @downtime_limit_ns: hand over once the expected downtime is at most this
 *
 * Allocates 16 bytes per closure (sent GUA and root counter); nothing has
 * been sent, so every closure is dirty.
 *
 * Context: process; may sleep (GFP_KERNEL_ACCOUNT: charged to the
 * caller's memory cgroup).
 * Return: 0; -EINVAL for 0 closures or 0 rounds; -ENOMEM.
 */
int mmt_mig_src_init(struct mmt_mig_src *s, u32 closures, u32 max_rounds,
		     u64 downtime_limit_ns)
{
	memset(s, 0, sizeof(*s));
	if (!closures || !max_rounds)
		return -EINVAL;
	s->sent_gua = kvzalloc(sizeof(u64) * 2 * (size_t)closures,
			       GFP_KERNEL_ACCOUNT);
	if (!s->sent_gua)
		return -ENOMEM;
	s->sent_rc = s->sent_gua + closures;
	s->closures = closures;
	s->max_rounds = max_rounds;
	s->downtime_limit_ns = downtime_limit_ns;
	s->dirty = closures;
	return 0;
}

/**
 * mmt_mig_src_free() - free the source's bookkeeping
 * @s: from mmt_mig_src_init() (or zeroed); zeroed on return
 *
 * Context: process.
 */
void mmt_mig_src_free(struct mmt_mig_src *s)
{
	kvfree(s->sent_gua);
	memset(s, 0, sizeof(*s));
}

/**
 * mmt_mig_dirty() - must closure @i be sent (again)?
 * @s: the source's bookkeeping
 * @i: index < @s->closures
 * @r: the root of MMT @i now
 *
 * Context: any; the caller holds the lock of the MMT.
 * Return: true if it was never sent, or its root counter moved since the
 * last closure of it was sealed (a write, or a seal not recorded).
 */
bool mmt_mig_dirty(const struct mmt_mig_src *s, u32 i,
		   const struct mmt_root *r)
{
	return !s->sent_rc[i] || r->root_counter != s->sent_rc[i] ||
	       r->gua != s->sent_gua[i];
}

/**
 * mmt_mig_sent() - record that closure @i was sealed for sending
 * @s: the source's bookkeeping
 * @i: index
 * @r: MMT @i's root right after the seal (its GUA and root counter are
 *	the closure's)
 *
 * Context: any; the caller holds the lock of the MMT.
 */
void mmt_mig_sent(struct mmt_mig_src *s, u32 i, const struct mmt_root *r)
{
	s->sent_gua[i] = r->gua;
	s->sent_rc[i] = r->root_counter;
	s->closures_sent++;
	s->round_sent++;
}

/**
 * mmt_mig_scan() - one dirty sync: count the dirty closures
 * @s: the source's bookkeeping
 * @mmts: the PMO's @s->closures MMTs
 *
 * Context: any; the caller holds the lock of the MMTs.
 * Return: the number of dirty closures, also kept in @s->dirty.
 */
u32 mmt_mig_scan(struct mmt_mig_src *s, const struct mmt *mmts)
{
	u32 i, n = 0;

	for (i = 0; i < s->closures; i++)
		n += mmt_mig_dirty(s, i, &mmts[i].root);
	s->dirty = n;
	s->dirty_syncs++;
	return n;
}

/**
 * mmt_mig_round_begin() - a pre-copy round (or the handover's) starts
 * @s: the source's bookkeeping
 *
 * Context: any.
 */
void mmt_mig_round_begin(struct mmt_mig_src *s)
{
	s->round++;
	s->round_sent = 0;
}

/**
 * mmt_mig_round_end() - a round ended: measure the time per closure
 * @s: the source's bookkeeping
 * @ns: wall time of the round, nanoseconds
 *
 * The time per closure of the round (with a window this is the pipelined
 * time, what the handover will pay per closure) replaces the estimate; a
 * round that sent nothing keeps the previous one.
 *
 * Context: any.
 */
void mmt_mig_round_end(struct mmt_mig_src *s, u64 ns)
{
	if (s->round_sent)
		s->closure_ns = div64_u64(ns, s->round_sent) ?: 1;
}

/**
 * mmt_mig_expected_downtime() - what handing over now would cost
 * @s: the source's bookkeeping, after mmt_mig_scan()
 *
 * Context: any.
 * Return: @s->dirty * @s->closure_ns, nanoseconds (saturating); U64_MAX
 * while nothing has been measured and something is dirty.
 */
u64 mmt_mig_expected_downtime(const struct mmt_mig_src *s)
{
	if (!s->dirty)
		return 0;
	if (!s->closure_ns)
		return U64_MAX;
	if (s->closure_ns > div64_u64(U64_MAX, s->dirty))
		return U64_MAX;
	return s->closure_ns * s->dirty;
}

/* One more round that did not converge: the auto-converge step. */
static void mmt_mig_throttle_step(struct mmt_mig_src *s)
{
	/* dirty closures above the trigger share of those the round sent */
	if ((u64)s->dirty * 100 <=
	    (u64)s->round_sent * MMT_MIG_THROTTLE_TRIGGER)
		return;
	if (++s->high_rounds < 2)
		return;
	s->high_rounds = 0;
	if (!s->throttle_pct)
		s->throttle_pct = MMT_MIG_THROTTLE_INITIAL;
	else
		s->throttle_pct = min_t(u32, s->throttle_pct +
					MMT_MIG_THROTTLE_STEP,
					MMT_MIG_THROTTLE_MAX);
}

/**
 * mmt_mig_decide() - after a round: another round, the handover, or a
 *	refusal?
 * @s: the source's bookkeeping, after mmt_mig_scan()
 * @finish: the user asked for the handover (MMT_IOC_MIGRATE_FINISH)
 *
 * After the full copy (round 1), in this order: nothing dirty
 * (MMT_MIG_STOP_CLEAN); the expected downtime within the limit
 * (MMT_MIG_STOP_CONVERGED); @finish (MMT_MIG_STOP_FINISH: a forced
 * handover, whatever the expected downtime); the round limit reached with
 * the expected downtime still above the limit (MMT_MIG_STOP_ROUNDS: the
 * handover is refused, the caller fails the migration).  Otherwise
 * another round (MMT_MIG_STOP_NONE), and if the round did not converge
 * (its dirty closures are more than MMT_MIG_THROTTLE_TRIGGER % of those
 * it sent) for the second time since the last step, @s->throttle_pct
 * rises: MMT_MIG_THROTTLE_INITIAL, then by MMT_MIG_THROTTLE_STEP, at most
 * MMT_MIG_THROTTLE_MAX (QEMU's auto-converge).  Before round 1 ends:
 * MMT_MIG_STOP_NONE (every closure is sent once while the owner writes).
 * The result is also kept in @s->stop.
 *
 * Context: any; the caller serializes access to @s.
 * Return: MMT_MIG_STOP_NONE (go on) or why pre-copy ends.
 */
u32 mmt_mig_decide(struct mmt_mig_src *s, bool finish)
{
	u32 stop = MMT_MIG_STOP_NONE;

	if (!s->round)
		stop = MMT_MIG_STOP_NONE;
	else if (!s->dirty)
		stop = MMT_MIG_STOP_CLEAN;
	else if (mmt_mig_expected_downtime(s) <= s->downtime_limit_ns)
		stop = MMT_MIG_STOP_CONVERGED;
	else if (finish)
		stop = MMT_MIG_STOP_FINISH;
	else if (s->round >= s->max_rounds)
		stop = MMT_MIG_STOP_ROUNDS;
	else
		mmt_mig_throttle_step(s);
	s->stop = stop;
	return stop;
}

/**
 * mmt_mig_throttle_ns() - how long a throttled write sleeps
 * @s: the source's bookkeeping in pre-copy
 * @busy_ns: how long the write held the PMO (its own work), nanoseconds
 *
 * A writer throttled at p % sleeps p / (100 - p) times its own time after
 * each write, so it writes at most (100 - p) % of the time (QEMU's vCPU
 * throttle), but never longer than the downtime limit at once: no write
 * waits longer for the throttle than the user accepts for the handover.
 *
 * Context: any; the caller serializes access to @s.
 * Return: nanoseconds to sleep; 0 when not throttled.
 */
u64 mmt_mig_throttle_ns(const struct mmt_mig_src *s, u64 busy_ns)
{
	u32 pct = min_t(u32, s->throttle_pct, MMT_MIG_THROTTLE_MAX);
	u64 ns;

	if (!pct || !busy_ns)
		return 0;
	if (busy_ns > div64_u64(U64_MAX, pct))
		return s->downtime_limit_ns;
	ns = div64_u64(busy_ns * pct, 100 - pct);
	return min(ns, s->downtime_limit_ns);
}

/* Records hashed at once: a small buffer on the stack. */
#define MMT_MIG_DIGEST_BATCH	16

/*
 * Digest of @n records filled in by @rec, streamed: SHA-256 over the
 * label, le32 @n and the records, MMT_MIG_DIGEST_BATCH at a time (no
 * buffer of the whole preimage: constant memory whatever @n).
 */
static int mmt_mig_digest(u32 n, const void *arg,
			  int (*rec)(const void *arg, u32 i, u64 *gua, u64 *rc),
			  u8 *digest)
{
	u8 buf[MMT_MIG_DIGEST_BATCH * MMT_MIG_REC_BYTES];
	struct mmt_sha256_ctx c;
	u64 gua, rc;
	u32 i, k = 0;
	int err, ferr;

	memset(digest, 0, MMT_SHA256_BYTES);
	err = mmt_crypto_sha256_init(&c);
	if (err)
		return err;
	memcpy(buf, MMT_MIG_LABEL, MMT_MIG_LABEL_LEN);
	put_unaligned_le32(n, buf + MMT_MIG_LABEL_LEN);
	err = mmt_crypto_sha256_update(&c, buf, MMT_MIG_LABEL_LEN + 4);
	for (i = 0; i < n && !err; i++) {
		err = rec(arg, i, &gua, &rc);
		put_unaligned_le64(gua, buf + k * MMT_MIG_REC_BYTES);
		put_unaligned_le64(rc, buf + k * MMT_MIG_REC_BYTES + 8);
		if (++k < MMT_MIG_DIGEST_BATCH && i + 1 < n)
			continue;
		if (!err)
			err = mmt_crypto_sha256_update(&c, buf,
						       k * MMT_MIG_REC_BYTES);
		k = 0;
	}
	ferr = mmt_crypto_sha256_final(&c, digest);
	memzero_explicit(buf, sizeof(buf));
	return err ?: ferr;
}

static int mmt_mig_src_rec(const void *arg, u32 i, u64 *gua, u64 *rc)
{
	const struct mmt_mig_src *s = arg;

	*gua = s->sent_gua[i];
	*rc = s->sent_rc[i];
	return *rc ? 0 : -ESTALE;
}

static int mmt_mig_dst_rec(const void *arg, u32 i, u64 *gua, u64 *rc)
{
	const struct mmt *m = (const struct mmt *)arg + i;

	*gua = m->root.gua;
	*rc = m->root.root_counter;
	return m->root.state == MMT_LANDING ? 0 : -ESTALE;
}

/**
 * mmt_mig_src_digest() - digest of what the destination must hold
 * @s: the source's bookkeeping, every closure sent
 * @digest: (out) MMT_SHA256_BYTES: SHA-256 of "mmt v2 migrate", le32 N,
 *	then for each index le64 GUA and le64 root counter of the last
 *	closure of it sent
 *
 * Streamed (constant memory: no buffer of the 16-byte-per-closure
 * preimage).
 *
 * Context: process (the user-space backend allocates its digest state).
 * Return: 0; -ESTALE if a closure was never sent; the crypto library's
 * error (user space).  @digest is zeroed on error.
 */
int mmt_mig_src_digest(const struct mmt_mig_src *s, u8 *digest)
{
	int err = mmt_mig_digest(s->closures, s, mmt_mig_src_rec, digest);

	if (err)
		memset(digest, 0, MMT_SHA256_BYTES);
	return err;
}

/**
 * mmt_mig_dst_digest() - digest of what landed at the destination
 * @mmts: the receive PMO's @n MMTs
 * @n: their number
 * @digest: (out) MMT_SHA256_BYTES, as mmt_mig_src_digest() over each
 *	MMT's root (GUA, root counter)
 *
 * Streamed, as mmt_mig_src_digest().
 *
 * Context: process; the caller holds the lock of the MMTs.
 * Return: 0; -ESTALE if an MMT is not LANDING (nothing landed there);
 * the crypto library's error (user space).  @digest is zeroed on
 * error.
 */
int mmt_mig_dst_digest(const struct mmt *mmts, u32 n, u8 *digest)
{
	int err = mmt_mig_digest(n, mmts, mmt_mig_dst_rec, digest);

	if (err)
		memset(digest, 0, MMT_SHA256_BYTES);
	return err;
}

/**
 * mmt_bind_encode() - the bytes of a struct mmt_bind that tags cover
 * @b: the binding
 * @out: (out) MMT_BIND_BYTES: le64 conn_id || le64 gen || le16
 *	sender_node || le16 receiver_node || u8 dir || rx_nonce || tx_nonce
 *
 * Context: any.
 */
void mmt_bind_encode(const struct mmt_bind *b, u8 *out)
{
	put_unaligned_le64(b->conn_id, out);
	put_unaligned_le64(b->gen, out + 8);
	put_unaligned_le16(b->sender_node, out + 16);
	put_unaligned_le16(b->receiver_node, out + 18);
	out[20] = b->dir;
	memcpy(out + 21, b->rx_nonce, MMT_RX_NONCE_BYTES);
	memcpy(out + 21 + MMT_RX_NONCE_BYTES, b->tx_nonce, MMT_RX_NONCE_BYTES);
}

/**
 * mmt_bind_tag() - a tag over a binding and the fields it vouches for:
 *	what mmt_conn_ack_tag() and mmt_mig_commit_tag() compute
 * @key_root: MMT_KEY_ROOT_BYTES, the keying root of the MMT key
 *	(mmt_key_root()), which both ends hold
 * @salt: the HKDF salt, a string (its bytes without the NUL)
 * @label: the first bytes of the HKDF info, a string (likewise)
 * @b: the binding: connection, generation, both nodes, the direction,
 *	both nonces; mmt_bind_encode()d after @label
 * @fields: @fields_len bytes after the binding
 * @fields_len: at most MMT_BIND_TAG_FIELDS_MAX
 * @tag: (out) @tag_len bytes
 * @tag_len: 1 to 32
 *
 * The first @tag_len bytes of HKDF-SHA256 (RFC 5869) of @key_root, salt
 * @salt, info @label || mmt_bind_encode(@b) || @fields: a PRF keyed by
 * the MMT key of everything the tag vouches for.
 *
 * Context: process; may sleep (the kernel HKDF allocates).
 * Return: 0; -EINVAL if @label, @fields_len or @tag_len is out of range;
 * or the crypto library's error.  On error @tag is zeroed.
 */
int mmt_bind_tag(const u8 *key_root, const char *salt, const char *label,
		 const struct mmt_bind *b, const u8 *fields,
		 size_t fields_len, u8 *tag, size_t tag_len)
{
	u8 info[MMT_BIND_TAG_LABEL_MAX + MMT_BIND_BYTES +
		MMT_BIND_TAG_FIELDS_MAX];
	size_t llen = strlen(label);
	u8 okm[32];
	int err = 0;

	if (llen > MMT_BIND_TAG_LABEL_MAX ||
	    fields_len > MMT_BIND_TAG_FIELDS_MAX || !tag_len ||
	    tag_len > sizeof(okm))
		err = -EINVAL;
	if (!err) {
		memcpy(info, label, llen);
		mmt_bind_encode(b, info + llen);
		memcpy(info + llen + MMT_BIND_BYTES, fields, fields_len);
		err = mmt_crypto_hkdf_sha256(key_root, MMT_KEY_ROOT_BYTES,
					     (const u8 *)salt, strlen(salt),
					     info, llen + MMT_BIND_BYTES +
					     fields_len, okm, sizeof(okm));
	}
	if (err)
		memset(tag, 0, tag_len);
	else
		memcpy(tag, okm, tag_len);
	memzero_explicit(okm, sizeof(okm));
	return err;
}

/**
 * mmt_mig_commit_tag() - the tag of a migration's COMMIT
 * @key_root: MMT_KEY_ROOT_BYTES, the keying root of the MMT key
 *	(mmt_key_root()), which both ends hold
 * @b: the migration: connection, generation, both nodes, the direction,
 *	the destination's receive nonce and the source's nonce
 * @closures: closures of the PMO
 * @digest: MMT_SHA256_BYTES, mmt_mig_src_digest()
 * @tag: (out) MMT_MIG_TAG_BYTES: the first bytes of HKDF-SHA256 (RFC 5869)
 *	of @key_root, salt "mmt-v3 commit", info "mmt v3 commit" ||
 *	mmt_bind_encode(@b) || le32 @closures || @digest
 *
 * A PRF of exactly the state the source froze, for exactly this receive
 * in this direction: only a holder of the MMT key can make a destination
 * commit.
 *
 * Context: process; may sleep (the kernel HKDF allocates).
 * Return: 0 or the crypto library's error (@tag zeroed).
 */
int mmt_mig_commit_tag(const u8 *key_root, const struct mmt_bind *b,
		       u32 closures, const u8 *digest, u8 *tag)
{
	u8 fields[4 + MMT_SHA256_BYTES];

	put_unaligned_le32(closures, fields);
	memcpy(fields + 4, digest, MMT_SHA256_BYTES);
	return mmt_bind_tag(key_root, "mmt-v3 commit", "mmt v3 commit", b,
			    fields, sizeof(fields), tag, MMT_MIG_TAG_BYTES);
}

/**
 * mmt_mig_resolve_tag() - the tag of a destination's final statement on a
 *	migration's outcome (MMT_IOC_MIGRATE_RESOLVE)
 * @key_root: MMT_KEY_ROOT_BYTES, the keying root of the MMT key
 * @b: the migration, as for mmt_mig_commit_tag()
 * @outcome: MMT_MIG_STATED_COMMITTED or MMT_MIG_STATED_ABORTED (the
 *	values of uapi/mmt.h's MMT_MIG_OUTCOME_*, which also go on the wire)
 * @tag: (out) MMT_MIG_TAG_BYTES: the first bytes of HKDF-SHA256 (RFC 5869)
 *	of @key_root, salt "mmt-v3 resolve", info "mmt v3 resolve" ||
 *	mmt_bind_encode(@b) || u8 @outcome
 *
 * The two outcomes are final, so the statement needs no freshness of its
 * own: a replayed one says what is still true.  Its salt and label differ
 * from every other tag's, so no ACK or COMMIT tag is a statement.
 *
 * Context: process; may sleep (the kernel HKDF allocates).
 * Return: 0; -EINVAL if @outcome is not final; or the crypto library's
 * error (@tag zeroed).
 */
int mmt_mig_resolve_tag(const u8 *key_root, const struct mmt_bind *b,
			u32 outcome, u8 *tag)
{
	u8 field = outcome;

	if (outcome != MMT_MIG_STATED_COMMITTED &&
	    outcome != MMT_MIG_STATED_ABORTED) {
		memset(tag, 0, MMT_MIG_TAG_BYTES);
		return -EINVAL;
	}
	return mmt_bind_tag(key_root, "mmt-v3 resolve", "mmt v3 resolve", b,
			    &field, 1, tag, MMT_MIG_TAG_BYTES);
}

/**
 * mmt_xfer_resolve_tag() - the tag of a receiver's final statement on a
 *	transfer whose last verdicts the sender did not get
 *	(MMT_IOC_MIGRATE_RESOLVE, outcome MMT_MIG_OUTCOME_ENDED)
 * @key_root: MMT_KEY_ROOT_BYTES, the keying root of the MMT key
 * @b: the transfer, as for mmt_conn_ack_tag(): connection, generation,
 *	both nodes, the sender's direction, the receive's nonce and the
 *	sender's nonce
 * @closures: closures the receive took in, all of them in index order
 *	from closure 0 (a receive stops at its first refusal)
 * @tag: (out) MMT_MIG_TAG_BYTES: the first bytes of HKDF-SHA256 (RFC 5869)
 *	of @key_root, salt "mmt-v3 xfer end", info "mmt v3 xfer end" ||
 *	mmt_bind_encode(@b) || le32 @closures
 *
 * The statement is final (the receive has ended and takes nothing more
 * in), so it needs no freshness of its own.  Its salt and label differ
 * from every other tag's, so no ACK, COMMIT or migration statement is one.
 *
 * Context: process; may sleep (the kernel HKDF allocates).
 * Return: 0; or the crypto library's error (@tag zeroed).
 */
int mmt_xfer_resolve_tag(const u8 *key_root, const struct mmt_bind *b,
			 u32 closures, u8 *tag)
{
	u8 field[4];

	put_unaligned_le32(closures, field);
	return mmt_bind_tag(key_root, "mmt-v3 xfer end", "mmt v3 xfer end",
			    b, field, sizeof(field), tag, MMT_MIG_TAG_BYTES);
}

/**
 * mmt_mig_dst_commit() - check a COMMIT and make what landed VALID
 * @mmts: the receive PMO's @n MMTs
 * @n: their number, which the COMMIT names
 * @key_root: MMT_KEY_ROOT_BYTES, the receive PMO's keying root
 * @b: this receive: connection, generation, both nodes, the direction,
 *	this receive's nonce and the source's nonce from its OFFER
 * @digest: MMT_SHA256_BYTES from the COMMIT (untrusted)
 * @tag: MMT_MIG_TAG_BYTES from the COMMIT (untrusted)
 *
 * The tag must authenticate @digest for this receive, and the digest of
 * what landed must equal it: every MMT LANDING with the GUA and root
 * counter of the last closure of it the source sent.  Then, in one pass,
 * every MMT LANDING -> VALID, writable: the one writable copy.
 *
 * Context: process; may sleep; the caller holds the lock of the MMTs.
 * Return: 0; -EBADMSG if the tag does not authenticate (tamper, another
 * key, another receive, another source nonce or direction); -ESTALE if
 * the destination does not hold exactly that state (a closure missing or
 * older); -ENOMEM or the crypto library's error.  On error nothing
 * changed.
 */
int mmt_mig_dst_commit(struct mmt *mmts, u32 n, const u8 *key_root,
		       const struct mmt_bind *b, const u8 *digest,
		       const u8 *tag)
{
	u8 want[MMT_MIG_TAG_BYTES], mine[MMT_SHA256_BYTES];
	u8 d[MMT_SHA256_BYTES];
	u32 i;
	int err;

	memcpy(d, digest, sizeof(d));	/* read once */
	err = mmt_mig_commit_tag(key_root, b, n, d, want);
	if (err)
		return err;
	if (crypto_memneq(want, tag, sizeof(want)))
		return -EBADMSG;
	err = mmt_mig_dst_digest(mmts, n, mine);
	if (err)
		return err;
	if (crypto_memneq(mine, d, sizeof(mine)))
		return -ESTALE;
	/* every MMT is LANDING (the digest checked it): each may go VALID */
	for (i = 0; i < n; i++)
		if (mmts[i].root.state != MMT_LANDING)
			return -ESTALE;
	for (i = 0; i < n; i++) {
		err = mmt_root_transition(&mmts[i].root, MMT_VALID);
		if (err)
			return err;	/* cannot happen: LANDING -> VALID */
		mmts[i].root.read_only = false;
	}
	return 0;
}

/**
 * mmt_mig_dst_abort() - drop what landed: every LANDING MMT -> WAITING
 * @mmts: the receive PMO's @n MMTs
 * @n: their number
 *
 * Nothing of the migration stays readable or writable; the memory keeps
 * ciphertext nobody can read (WAITING).
 *
 * Context: any; the caller holds the lock of the MMTs.
 * Return: the number of MMTs that were LANDING.
 */
u32 mmt_mig_dst_abort(struct mmt *mmts, u32 n)
{
	u32 i, k = 0;

	for (i = 0; i < n; i++) {
		if (mmts[i].root.state != MMT_LANDING)
			continue;
		if (!mmt_root_transition(&mmts[i].root, MMT_WAITING))
			k++;
	}
	return k;
}
