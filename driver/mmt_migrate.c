// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_migrate.c - live migration of a PMO over any transport
 * (docs/MIGRATION.md; DESIGN.md section 8)
 *
 * Source (mmt_migrate_run()): pre-copy rounds while the owner writes, the
 * handover with the writers frozen, the COMMIT, then the PMO INVALID (an
 * authenticated acceptance) or VALID again (anything else; re-encrypted
 * before its next write when the destination may have committed).  The
 * transport (struct mmt_mig_xport_ops) moves sealed closures and the
 * COMMIT; the round logic, dirty set and downtime estimate are the
 * engine's (lib/mmt_migrate.c).  Destination (mmt_mig_rx_*()): a receive
 * whose closures land (LANDING) until the COMMIT checks.
 *
 * Locking: the PMO's mutex around every look at its MMTs and its
 * bookkeeping, never across a transport call; the migration's spinlock
 * around its figures.
 */
#include <linux/hrtimer.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <crypto/algapi.h>

#include "mmt_internal.h"
#include "mmt_trace.h"
#include "mmt_transport.h"
#include "mmt.h"

static void mmt_mig_event(struct mmt_mig *mig);

/**
 * mmt_mig_init() - set up the record of a migration
 * @mig: (out) zeroed, then set up; phase SETUP
 * @source: this side sends (MMT_MIG_F_SOURCE)
 *
 * Context: any.
 */
void mmt_mig_init(struct mmt_mig *mig, bool source)
{
	memset(mig, 0, sizeof(*mig));
	spin_lock_init(&mig->lock);
	init_waitqueue_head(&mig->wq);
	mmt_mig_reset(mig, source);
}

/**
 * mmt_mig_reset() - start a record over for a new migration
 * @mig: a record set up with mmt_mig_init() (a connection keeps one per
 *	direction and reuses it; MMT_IOC_MIGRATE_INFO may read it meanwhile)
 * @source: this side sends (MMT_MIG_F_SOURCE)
 *
 * Phase SETUP, figures zero, no request pending, @mig->running set.
 *
 * Context: any; takes @mig->lock.
 */
void mmt_mig_reset(struct mmt_mig *mig, bool source)
{
	spin_lock(&mig->lock);
	memset(&mig->info, 0, sizeof(mig->info));
	mig->info.size = sizeof(mig->info);
	mig->info.phase = MMT_MIG_PHASE_SETUP;
	mig->info.flags = source ? MMT_MIG_F_SOURCE : 0;
	memset(&mig->s, 0, sizeof(mig->s));
	mig->req = 0;
	mig->pmo = NULL;
	mig->extra = 0;
	mig->t0 = ktime_get_ns();
	mig->running = true;
	mmt_mig_event(mig);
	spin_unlock(&mig->lock);
}

/**
 * mmt_mig_get_info() - the figures of a migration, now
 * @mig: the migration
 * @out: (out) struct mmt_migrate_info; its total_ns counts to now while
 *	the migration runs
 *
 * Marks the figures seen (poll() stops reporting POLLPRI).
 *
 * Context: any; takes @mig->lock.
 */
void mmt_mig_get_info(struct mmt_mig *mig, struct mmt_migrate_info *out)
{
	spin_lock(&mig->lock);
	*out = mig->info;
	if (out->phase < MMT_MIG_PHASE_COMMITTED)
		out->total_ns = ktime_get_ns() - mig->t0;
	mig->events_seen = mig->events;
	spin_unlock(&mig->lock);
}

/**
 * mmt_mig_set_nonce() - record the migration's receive nonce in its figures
 * @mig: the migration
 * @nonce: MMT_RX_NONCE_BYTES: the destination's nonce (its own, or the one
 *	the source learnt from the first GRANT)
 *
 * struct mmt_migrate_info @nonce: what a parked PMO is named by
 * (MMT_MIGRATE_PARK, docs/CRIU.md section 6).
 *
 * Context: any; takes @mig's spinlock.
 */
void mmt_mig_set_nonce(struct mmt_mig *mig, const u8 *nonce)
{
	spin_lock(&mig->lock);
	memcpy(mig->info.nonce, nonce, sizeof(mig->info.nonce));
	spin_unlock(&mig->lock);
}

/**
 * mmt_mig_info_unstarted() - the figures of a migration refused before it
 * started (bad PMO size, generations exhausted, no memory, the connection
 * not live)
 * @out: (out) zeroed; its size, phase FAILED, @err, MMT_MIG_F_SOURCE for
 *	the source: never an earlier migration's figures
 * @source: the source side (MMT_IOC_MIGRATE_SEND)
 * @err: why it did not start
 *
 * Context: any.
 */
void mmt_mig_info_unstarted(struct mmt_migrate_info *out, bool source,
			    int err)
{
	memset(out, 0, sizeof(*out));
	out->size = sizeof(*out);
	out->phase = MMT_MIG_PHASE_FAILED;
	out->flags = source ? MMT_MIG_F_SOURCE : 0;
	out->error = err;
}

/* The figures changed: poll() and INFO see it. */
static void mmt_mig_event(struct mmt_mig *mig)
{
	mig->events++;
	wake_up_all(&mig->wq);
}

/**
 * mmt_mig_request() - ask a running migration to finish or abort
 * @mig: the migration
 * @bit: MMT_MIG_REQ_FINISH (hand over after the closure in flight) or
 *	MMT_MIG_REQ_ABORT (fail with -ECANCELED, the source intact)
 *
 * Context: any.
 */
void mmt_mig_request(struct mmt_mig *mig, unsigned int bit)
{
	set_bit(bit, &mig->req);
	wake_up_all(&mig->wq);
}

/**
 * mmt_mig_extra() - account memory the migration holds besides the PMO
 * @mig: the migration
 * @delta: bytes allocated (> 0) or freed (< 0)
 *
 * Keeps the peak in the figures (peak_extra_bytes).
 *
 * Context: any; takes @mig->lock.
 */
void mmt_mig_extra(struct mmt_mig *mig, ssize_t delta)
{
	spin_lock(&mig->lock);
	mig->extra += delta;
	if (mig->extra > mig->info.peak_extra_bytes)
		mig->info.peak_extra_bytes = mig->extra;
	spin_unlock(&mig->lock);
}

/* The migration failed with @err (once). */
static void mmt_mig_failed(struct mmt_mig *mig, int err, bool unknown)
{
	spin_lock(&mig->lock);
	mig->info.phase = MMT_MIG_PHASE_FAILED;
	if (!mig->info.error)
		mig->info.error = err;
	if (unknown)
		mig->info.flags |= MMT_MIG_F_OUTCOME_UNKNOWN;
	mig->info.total_ns = ktime_get_ns() - mig->t0;
	mmt_mig_event(mig);
	spin_unlock(&mig->lock);
}

static void mmt_mig_phase(struct mmt_mig *mig, u32 phase)
{
	spin_lock(&mig->lock);
	mig->info.phase = phase;
	if (phase == MMT_MIG_PHASE_COMMITTED)
		mig->info.total_ns = ktime_get_ns() - mig->t0;
	mmt_mig_event(mig);
	spin_unlock(&mig->lock);
}

/**
 * mmt_mig_snap() - seal source closure @index for the destination
 * @t: the migration's transport
 * @index: which MMT of the source PMO
 * @buf: (out) the whole closure (mmt_closure_build(), @len bytes), or
 *	with @region only its head (MMT_CLOSURE_HDR_BYTES +
 *	MMT_SEALED_ROOT_BYTES: mmt_closure_build_head())
 * @len: bytes at @buf (whole closure), or 0 with @region
 * @region: NULL, or (out) data, data MACs and tree nodes of the MMT, in
 *	the PMO's layout (the destination's in-place receive area): a
 *	snapshot, so the MMT is writable again as soon as this returns
 *
 * Under the PMO's lock: the sections are copied, then the root is sealed
 * (its counter incremented) with a header naming the connection, the
 * migration's generation and receive nonce and the index (flags 0), and
 * the engine records the sealed GUA and root counter (mmt_mig_sent()): a
 * later write makes the closure dirty again.  The MMT stays VALID.
 *
 * Context: process; takes the PMO's lock.
 * Return: 0; -EPERM if the MMT is not VALID, read-only or due for
 * re-encryption (none is while the migration owns the PMO); -EOVERFLOW if
 * its root counter is exhausted; mmt_closure_build()'s errors.
 */
int mmt_mig_snap(struct mmt_mig_xport *t, u32 index, u8 *buf, size_t len,
		 u8 *region)
{
	struct mmt_pmo *src = t->mig->pmo;
	struct mmt *m = &src->mmts[index];
	const struct mmt_params *p = &src->params;
	struct mmt_closure_hdr h = {
		.version = MMT_CLOSURE_VERSION,
		.sender_node = mmt_node_id(),
		.receiver_node = t->peer_node,
		.conn_id = t->conn_id,
		.seq = index,
		.gen = t->gen,
	};
	int err;

	memcpy(h.rx_nonce, t->rx_nonce, MMT_RX_NONCE_BYTES);
	mutex_lock(&src->lock);
	if (m->root.state != MMT_VALID || m->root.read_only ||
	    m->root.regua_due) {
		err = -EPERM;
	} else if (region) {
		memcpy(region, m->data,
		       p->data_bytes + p->macs_bytes + p->nodes_bytes);
		err = mmt_closure_build_head(m, &h, buf);
	} else {
		err = mmt_closure_build(m, &h, buf, len);
	}
	if (!err) {
		mmt_mig_sent(&t->mig->s, index, &m->root);
		trace_mmt_seal(m->root.gua, m->root.root_counter, index,
			       index);
	}
	mutex_unlock(&src->lock);
	return err;
}

/**
 * mmt_mig_throttle() - the throttle a write on a PMO owes, if it is the
 *	source of a migration in pre-copy
 * @pmo: the PMO written
 * @busy_ns: how long the write held @pmo->lock (its own work)
 *
 * Once rounds stop converging the engine raises the throttle
 * (mmt_mig_decide()); a write then sleeps mmt_mig_throttle_ns() after it
 * released the PMO (mmt_mig_throttle_sleep()).  The sleep is summed into
 * the figures (throttle_ns).
 *
 * Context: any; the caller holds @pmo->lock; takes the migration's
 * spinlock.
 * Return: nanoseconds to sleep, 0 if the PMO is not throttled.
 */
u64 mmt_mig_throttle(struct mmt_pmo *pmo, u64 busy_ns)
{
	struct mmt_mig *mig = pmo->mig;
	u64 ns;

	lockdep_assert_held(&pmo->lock);
	if (!mig || pmo->mig_frozen)
		return 0;
	ns = mmt_mig_throttle_ns(&mig->s, busy_ns);
	if (ns) {
		spin_lock(&mig->lock);
		mig->info.throttle_ns += ns;
		spin_unlock(&mig->lock);
	}
	return ns;
}

/**
 * mmt_mig_throttle_sleep() - sleep a throttled write's time
 * @ns: from mmt_mig_throttle(); 0 returns at once
 *
 * Interruptibly: a signal ends the sleep early (the write is done; its
 * bytes count).
 *
 * Context: process; may sleep; no lock held.
 */
void mmt_mig_throttle_sleep(u64 ns)
{
	ktime_t kt = ns_to_ktime(ns);

	if (!ns)
		return;
	set_current_state(TASK_INTERRUPTIBLE);
	schedule_hrtimeout_range(&kt, ns >> 4, HRTIMER_MODE_REL);
	__set_current_state(TASK_RUNNING);
}

/*
 * Setup: the PMO must be keyed, every MMT VALID and writable; one due for
 * a fresh GUA gets it now (GUAs must not change during the migration).
 * Then the PMO is the migration's (src->mig).  The lock is taken
 * killable: a pwrite() whose buffer faults slowly may hold it, and until
 * the PMO is the migration's, -EINTR leaves it as it was.
 */
static int mmt_mig_src_setup(struct mmt_pmo *src, struct mmt_mig *mig,
			     const struct mmt_mig_params *prm)
{
	u32 i;
	int err = 0;

	if (mutex_lock_killable(&src->lock))
		return -EINTR;
	if (src->mig || src->mig_rx || src->receiving) {
		err = -EBUSY;
		goto out;
	}
	if (src->mig_unknown) {
		err = -EUCLEAN;
		goto out;
	}
	if (!src->crypto || src->plain_xfers) {
		err = -EPERM;
		goto out;
	}
	for (i = 0; i < src->closures && !err; i++) {
		const struct mmt_root *r = &src->mmts[i].root;

		if (r->state != MMT_VALID || r->read_only)
			err = -EPERM;
	}
	for (i = 0; i < src->closures && !err; i++)
		err = mmt_delegate_regua_due(src, &src->mmts[i]);
	if (!err)
		err = mmt_mig_src_init(&mig->s, src->closures, prm->max_rounds,
				       prm->downtime_limit_ns);
	if (!err) {
		src->mig = mig;
		mig->pmo = src;
	}
out:
	mutex_unlock(&src->lock);
	if (!err) {
		mmt_mig_extra(mig, 2 * sizeof(u64) * src->closures);
		spin_lock(&mig->lock);
		mig->info.closures = src->closures;
		mig->info.dirty = src->closures;
		spin_unlock(&mig->lock);
	}
	return err;
}

/* The figures after a closure or a round. */
static void mmt_mig_src_info(struct mmt_mig *mig, bool synced)
{
	struct mmt_pmo *src = mig->pmo;
	u64 cb = mmt_closure_bytes(&src->params);

	spin_lock(&mig->lock);
	mig->info.round = mig->s.round;
	mig->info.closures_sent = mig->s.closures_sent;
	mig->info.bytes_sent = mig->s.closures_sent * cb;
	if (mig->s.closures_sent && !mig->info.setup_ns)
		mig->info.setup_ns = ktime_get_ns() - mig->t0;
	if (synced) {
		mig->info.dirty = mig->s.dirty;
		mig->info.dirty_syncs = mig->s.dirty_syncs;
		/*
		 * 0 until a round measured the time per closure; the
		 * handover's own round leaves the estimate it was decided on
		 */
		if (mig->info.phase != MMT_MIG_PHASE_HANDOVER)
			mig->info.expected_downtime_ns = mig->s.closure_ns ?
				mmt_mig_expected_downtime(&mig->s) : 0;
		mig->info.stop = mig->s.stop;
		mig->info.throttle_pct = mig->s.throttle_pct;
		mmt_mig_event(mig);
	}
	spin_unlock(&mig->lock);
}

/*
 * One round: every closure dirty when its turn comes, then wait for the
 * verdicts, measure, and count what is dirty now.  In pre-copy a FINISH
 * request ends the round early; ABORT and signals fail it.
 */
static int mmt_mig_round(struct mmt_pmo *src, struct mmt_mig_xport *t,
			 bool handover)
{
	struct mmt_mig *mig = t->mig;
	u64 t1 = ktime_get_ns();
	int err = 0;
	bool dirty;
	u32 i;

	mutex_lock(&src->lock);
	mmt_mig_round_begin(&mig->s);
	mutex_unlock(&src->lock);
	mmt_mig_src_info(mig, false);
	for (i = 0; i < src->closures; i++) {
		if (test_bit(MMT_MIG_REQ_ABORT, &mig->req)) {
			err = -ECANCELED;
			break;
		}
		if (!handover && test_bit(MMT_MIG_REQ_FINISH, &mig->req))
			break;
		if (signal_pending(current)) {
			err = -EINTR;
			break;
		}
		mutex_lock(&src->lock);
		dirty = mmt_mig_dirty(&mig->s, i, &src->mmts[i].root);
		mutex_unlock(&src->lock);
		if (!dirty)
			continue;
		err = t->ops->send(t, i);
		if (err)
			break;
		mmt_mig_src_info(mig, false);
		cond_resched();
	}
	/*
	 * After a failure nothing more is awaited: the wait for an answer
	 * ended (timeout_ms bounds it once), and the caller ends the
	 * transport.
	 */
	if (!err)
		err = t->ops->flush(t);
	mutex_lock(&src->lock);
	mmt_mig_round_end(&mig->s, ktime_get_ns() - t1);
	mmt_mig_scan(&mig->s, src->mmts);
	mutex_unlock(&src->lock);
	mmt_mig_src_info(mig, true);
	return err;
}

/**
 * mmt_mig_xport_bind() - what the source's tags are bound to
 * @t: the migration's transport
 * @b: (out) connection, generation, this node as the sender, the peer as
 *	the receiver, the direction and both nonces
 *
 * Context: any.
 */
void mmt_mig_xport_bind(const struct mmt_mig_xport *t, struct mmt_bind *b)
{
	memset(b, 0, sizeof(*b));
	b->conn_id = t->conn_id;
	b->gen = t->gen;
	b->sender_node = mmt_node_id();
	b->receiver_node = t->peer_node;
	b->dir = t->dir;
	memcpy(b->rx_nonce, t->rx_nonce, MMT_RX_NONCE_BYTES);
	memcpy(b->tx_nonce, t->tx_nonce, MMT_RX_NONCE_BYTES);
}

/*
 * COMMIT: digest of what was sent (streamed: no buffer), tag under the
 * PMO's keying root.
 */
static int mmt_mig_commit(struct mmt_pmo *src, struct mmt_mig_xport *t,
			  bool *known)
{
	struct mmt_mig *mig = t->mig;
	u8 digest[MMT_SHA256_BYTES], tag[MMT_MIG_TAG_BYTES];
	struct mmt_bind b;
	int err;

	*known = true;
	mmt_mig_xport_bind(t, &b);
	mutex_lock(&src->lock);
	err = mmt_mig_src_digest(&mig->s, digest);
	if (!err)
		err = mmt_mig_commit_tag(src->key_root, &b, src->closures,
					 digest, tag);
	mutex_unlock(&src->lock);
	if (!err)
		err = t->ops->commit(t, digest, tag, known);
	memzero_explicit(tag, sizeof(tag));
	return err;
}

/*
 * The end of the handover: committed, every MMT VALID -> INVALID (the
 * destination is the one writable copy); failed with the outcome unknown,
 * the PMO read-only (mig_unknown: writers and senders get -EUCLEAN) until
 * its owner resolves it (the migration's binding kept in mig_bind for the
 * destination's statement, mmt_mig_resolve()), and every MMT due for a fresh GUA once it does
 * (the destination may hold a writable copy under these GUAs: DESIGN.md
 * section 5, "it stays read-only until it does"); failed, otherwise
 * untouched.  Then the writers are thawed and the PMO is no longer the
 * migration's.
 */
static void mmt_mig_src_end(struct mmt_pmo *src, bool committed,
			    bool unknown, const struct mmt_mig_xport *t)
{
	u32 i;

	mutex_lock(&src->lock);
	for (i = 0; i < src->closures; i++) {
		struct mmt_root *r = &src->mmts[i].root;

		if (committed)
			WARN_ON_ONCE(mmt_root_transition(r, MMT_INVALID));
		else if (unknown && r->state == MMT_VALID)
			r->regua_due = true;
	}
	if (!committed && unknown) {
		/* what MMT_IOC_MIGRATE_RESOLVE asks the destination about */
		mmt_mig_xport_bind(t, &src->mig_bind);
		src->mig_unknown = true;
	}
	src->mig_frozen = false;
	src->mig = NULL;
	mutex_unlock(&src->lock);
	wake_up_all(&src->mig_wq);
}

/**
 * mmt_migrate_run() - migrate a PMO live through a migration transport
 * @src: the PMO: keyed, every MMT VALID and writable
 * @t: the transport, connected to a destination that started its
 *	migration receive (conn_id, gen, rx_nonce, peer_node set; @t->mig
 *	set up with mmt_mig_init())
 * @prm: the downtime limit and the round limit
 *
 * Pre-copy rounds (every closure, then the dirty ones) while the owner
 * writes, throttled once rounds stop converging (mmt_mig_throttle()),
 * until mmt_mig_decide() ends them: nothing dirty, the expected downtime
 * within the limit, or a FINISH request hand over; the round limit with
 * the expected downtime above the limit refuses the handover (-ETIME: the
 * writers were never frozen, the PMO is VALID and writable).  The
 * handover: writers are frozen (they wait in pwrite(), interruptibly),
 * the dirty rest is sent, the COMMIT goes out, and on an authenticated
 * acceptance every MMT becomes INVALID.  On any other failure the PMO is
 * VALID with its data: writable, unless the COMMIT may have arrived
 * (MMT_MIG_F_OUTCOME_UNKNOWN): then it is read-only (-EUCLEAN) until
 * mmt_pmo_mig_resolve() or an invalidation, every MMT re-encrypted under
 * a fresh GUA before its next write or send.  The figures are in
 * @t->mig->info.
 *
 * Context: process; may sleep; takes @src->lock around each step, never
 * across a transport call: the first time killable (-EINTR, nothing
 * changed), later ones not (once the migration owns the PMO, its end must
 * give it back).
 * Return: 0 (committed); -EBUSY if the PMO is being migrated or received
 * into; -EUCLEAN if its previous migration's outcome is unknown; -EPERM
 * if it has no key or an MMT is not VALID or read-only;
 * -EBADMSG if an MMT due for re-encryption fails verification; -ENOMEM;
 * -ECANCELED (MMT_MIG_REQ_ABORT); -EINTR; -ETIME (the handover refused
 * at the round limit: @t->mig->info.stop is MMT_MIG_STOP_ROUNDS); the
 * transport's errors (a rejection by the destination, -ECONNRESET,
 * -ETIMEDOUT, ...).
 */
int mmt_migrate_run(struct mmt_pmo *src, struct mmt_mig_xport *t,
		    const struct mmt_mig_params *prm)
{
	struct mmt_mig *mig = t->mig;
	bool known = true, committed = false;
	u32 stop = MMT_MIG_STOP_NONE;
	u64 t_freeze;
	int err;

	mig->downtime_limit_ns = prm->downtime_limit_ns;
	err = mmt_mig_src_setup(src, mig, prm);
	if (err) {
		mmt_mig_failed(mig, err, false);
		return err;
	}
	if (t->ops->start) {
		err = t->ops->start(t);
		if (err)
			goto out;
	}
	mmt_mig_phase(mig, MMT_MIG_PHASE_PRECOPY);
	do {
		err = mmt_mig_round(src, t, false);
		if (err)
			break;
		/* the throttle is read by writers under the PMO's lock */
		mutex_lock(&src->lock);
		stop = mmt_mig_decide(&mig->s,
				      test_bit(MMT_MIG_REQ_FINISH, &mig->req));
		mutex_unlock(&src->lock);
		mmt_mig_src_info(mig, true);
	} while (stop == MMT_MIG_STOP_NONE);
	if (!err && stop == MMT_MIG_STOP_ROUNDS)
		err = -ETIME;	/* refused: the writers were never frozen */
	if (err)
		goto out;

	/* handover: a pwrite() running now finishes first (it holds the lock) */
	mutex_lock(&src->lock);
	src->mig_frozen = true;
	mutex_unlock(&src->lock);
	t_freeze = ktime_get_ns();
	if (t->timeout)
		t->deadline = (jiffies + t->timeout) ?: 1;
	mmt_mig_phase(mig, MMT_MIG_PHASE_HANDOVER);
	err = mmt_mig_round(src, t, true);
	if (!err && mig->s.dirty)
		err = -EAGAIN;	/* cannot happen: nothing writes */
	if (!err && test_bit(MMT_MIG_REQ_ABORT, &mig->req))
		err = -ECANCELED;	/* the COMMIT has not left: outcome known */
	if (!err)
		err = mmt_mig_commit(src, t, &known);
	committed = !err;
	spin_lock(&mig->lock);
	mig->info.downtime_ns = ktime_get_ns() - t_freeze;
	spin_unlock(&mig->lock);
out:
	mmt_mig_src_end(src, committed, !known, t);
	mmt_mig_extra(mig, -(ssize_t)(2 * sizeof(u64) * src->closures));
	mmt_mig_src_free(&mig->s);
	if (committed)
		mmt_mig_phase(mig, MMT_MIG_PHASE_COMMITTED);
	else
		mmt_mig_failed(mig, err, !known);
	return err;
}

/**
 * mmt_mig_rx_start() - start a migration receive into @pmo
 * @pmo: keyed, every MMT WAITING
 * @mig: the destination's migration record (mmt_mig_init())
 * @b: the migration as the destination sees it: the connection's id and
 *	the migration's generation (every closure must name them), the
 *	receive's nonce, drawn by the caller at random for this receive
 *	(every closure carries it), the source as the sender, this node as
 *	the receiver, the source's direction and its nonce from the OFFER
 *
 * The PMO is this receive's until mmt_mig_rx_end(): the receive rules
 * start over, in migration mode (closures land, LANDING; per-index
 * freshness), and the PMO cannot be invalidated meanwhile.  A migration's
 * receive (not a checkpoint's restore: @mig->no_record) is recorded as
 * running (MMT_MIG_OUTCOME_PENDING) for MMT_IOC_MIGRATE_RESOLVE until
 * mmt_mig_rx_end() records its outcome.
 *
 * Context: process; takes @pmo->lock (killable).
 * Return: 0; -EPERM if the PMO has no key or an MMT is not WAITING;
 * -EBUSY if another receive fills it or it is being migrated; -EINTR if
 * a fatal signal came while it waited for the lock.  On error nothing
 * changed but @mig, which records the failure.
 */
int mmt_mig_rx_start(struct mmt_pmo *pmo, struct mmt_mig *mig,
		     const struct mmt_bind *b)
{
	u32 i;
	int err = 0;

	if (mutex_lock_killable(&pmo->lock)) {
		mmt_mig_failed(mig, -EINTR, false);
		return -EINTR;
	}
	if (pmo->receiving || pmo->mig || pmo->mig_rx)
		err = -EBUSY;
	else if (!pmo->crypto)
		err = -EPERM;
	for (i = 0; i < pmo->closures && !err; i++)
		if (pmo->mmts[i].root.state != MMT_WAITING)
			err = -EPERM;
	if (!err) {
		mmt_pmo_rx_start(pmo, b->conn_id, mmt_node_id());
		pmo->rx.gen = b->gen;
		memcpy(pmo->rx.rx_nonce, b->rx_nonce, MMT_RX_NONCE_BYTES);
		pmo->rx.migrate = true;
		pmo->receiving = true;
		pmo->mig_rx = true;
		pmo->mig_rx_bind = *b;
		pmo->mig_rx_committed = false;
		pmo->mig_rx_record = !mig->no_record;
		mig->pmo = pmo;
		if (pmo->mig_rx_record)
			mmt_mig_record(b->rx_nonce, MMT_MIG_OUTCOME_PENDING,
				       NULL);
	}
	mutex_unlock(&pmo->lock);
	if (!err) {
		spin_lock(&mig->lock);
		mig->info.closures = pmo->closures;
		spin_unlock(&mig->lock);
	}
	if (err)
		mmt_mig_failed(mig, err, false);
	else
		mmt_mig_phase(mig, MMT_MIG_PHASE_PRECOPY);
	return err;
}

/**
 * mmt_mig_rx_closure() - check and land a migration closure from a buffer
 * @pmo: the destination, in a migration receive
 * @index: the MMT it is for
 * @buf: the closure as delivered (untrusted)
 * @len: bytes at @buf
 * @eager: verify the whole closure now
 *
 * The receive rules with rules 6m and 7m (docs/MIGRATION.md): the MMT is
 * LANDING afterwards; a rejected closure changes nothing.
 *
 * Context: process; takes @pmo->lock.
 * Return: 0 or mmt_pmo_receive()'s errors.
 */
int mmt_mig_rx_closure(struct mmt_pmo *pmo, u32 index, const u8 *buf,
		       size_t len, bool eager)
{
	return mmt_pmo_receive(pmo, index, buf, len, eager);
}

/**
 * mmt_mig_rx_commit() - the COMMIT arrived: check it, make the PMO VALID
 * @pmo: the destination, in a migration receive
 * @b: this receive as the destination sees it: its connection,
 *	generation and nonce (those of mmt_mig_rx_start()), the peer as the
 *	sender, this node as the receiver, the source's direction and the
 *	source's nonce from its OFFER
 * @digest: MMT_SHA256_BYTES from the COMMIT (untrusted)
 * @tag: MMT_MIG_TAG_BYTES from the COMMIT (untrusted)
 *
 * mmt_mig_dst_commit() under the PMO's keying root: every MMT LANDING ->
 * VALID, writable.
 *
 * Context: process; takes @pmo->lock; may sleep.
 * Return: 0; -EBADMSG (tag); -ESTALE (the state differs); -EPERM if the
 * PMO is not in a migration receive; -ENOMEM.
 */
int mmt_mig_rx_commit(struct mmt_pmo *pmo, const struct mmt_bind *b,
		      const u8 *digest, const u8 *tag)
{
	int err;

	mutex_lock(&pmo->lock);
	if (!pmo->mig_rx || !pmo->crypto)
		err = -EPERM;
	else if (b->conn_id != pmo->rx.conn_id || b->gen != pmo->rx.gen ||
		 memcmp(b->rx_nonce, pmo->rx.rx_nonce, MMT_RX_NONCE_BYTES))
		err = -EBADMSG;	/* not this receive */
	else
		err = mmt_mig_dst_commit(pmo->mmts, pmo->closures,
					 pmo->key_root, b, digest, tag);
	if (!err)
		pmo->mig_rx_committed = true;
	mutex_unlock(&pmo->lock);
	return err;
}

/**
 * mmt_mig_rx_end() - end the migration receive mmt_mig_rx_start() began
 * @pmo: the destination
 *
 * Not committed: every LANDING MMT goes back to WAITING (nothing of the
 * migration stays readable or writable).  The PMO is free again.  The
 * receive's outcome, committed or aborted for good (it can no longer
 * commit: a receive is one nonce), is recorded with its statement's tag
 * for MMT_IOC_MIGRATE_RESOLVE (mmt_mig_record_end()).
 *
 * Context: process; takes @pmo->lock; may sleep.
 */
void mmt_mig_rx_end(struct mmt_pmo *pmo)
{
	mutex_lock(&pmo->lock);
	if (pmo->mig_rx && pmo->mig_rx_record)
		mmt_mig_record_end(pmo);
	mmt_mig_dst_abort(pmo->mmts, pmo->closures);
	pmo->rx.migrate = false;
	pmo->receiving = false;
	pmo->mig_rx = false;
	mutex_unlock(&pmo->lock);
}

/**
 * mmt_mig_rx_account() - the destination's figures after a closure
 * @mig: the destination's migration record
 * @closure_bytes: mmt_closure_bytes() of the PMO's geometry
 *
 * One more closure accepted (closures_sent, bytes_sent; setup_ns at the
 * first).
 *
 * Context: any; takes @mig->lock.
 */
void mmt_mig_rx_account(struct mmt_mig *mig, u64 closure_bytes)
{
	spin_lock(&mig->lock);
	mig->info.closures_sent++;
	mig->info.bytes_sent += closure_bytes;
	if (!mig->info.setup_ns)
		mig->info.setup_ns = ktime_get_ns() - mig->t0;
	mmt_mig_event(mig);
	spin_unlock(&mig->lock);
}

/**
 * mmt_mig_done() - a migration ended (either side's record)
 * @mig: the migration record
 * @err: 0 (committed) or why it failed (the first error is kept)
 *
 * Context: any; takes @mig->lock.
 */
void mmt_mig_done(struct mmt_mig *mig, int err)
{
	if (err)
		mmt_mig_failed(mig, err, false);
	else
		mmt_mig_phase(mig, MMT_MIG_PHASE_COMMITTED);
}

/**
 * mmt_mig_record_end() - record the outcome of the migration receive
 *	into @pmo as it ends
 * @pmo: the destination, its receive not ended yet (@pmo->mig_rx)
 *
 * Committed (mmt_mig_rx_commit() succeeded) or aborted: with @pmo->mig_rx
 * still set and its lock held, no COMMIT can be taken after this, so
 * "aborted" is final.  If the tag cannot be made, the record is dropped
 * (a source then hears "no record").
 *
 * Context: process; caller holds @pmo->lock; may sleep.
 */
void mmt_mig_record_end(struct mmt_pmo *pmo)
{
	u32 outcome = pmo->mig_rx_committed ? MMT_MIG_OUTCOME_COMMITTED :
					      MMT_MIG_OUTCOME_ABORTED;
	u8 tag[MMT_MIG_TAG_BYTES];
	int err = -ENOKEY;

	lockdep_assert_held(&pmo->lock);
	if (pmo->crypto)
		err = mmt_mig_resolve_tag(pmo->key_root, &pmo->mig_rx_bind,
					  outcome, tag);
	mmt_mig_record(pmo->mig_rx_bind.rx_nonce,
		       err ? MMT_MIG_OUTCOME_UNKNOWN : outcome,
		       err ? NULL : tag);
	memzero_explicit(tag, sizeof(tag));
}

/**
 * mmt_mig_unknown_nonce() - the receive nonce of the migration or transfer
 *	of unknown outcome of a source PMO
 * @pmo: the source
 * @nonce: (out) MMT_RX_NONCE_BYTES
 *
 * Context: process; takes @pmo->lock (killable).
 * Return: 0; -ENOENT if the PMO has no migration or transfer of unknown
 * outcome (a pending checkpoint is not one); -EINTR (a fatal signal while waiting
 * for the lock).
 */
int mmt_mig_unknown_nonce(struct mmt_pmo *pmo, u8 *nonce)
{
	int err = 0;

	if (mutex_lock_killable(&pmo->lock))
		return -EINTR;
	if (!pmo->mig_unknown || pmo->ckpt_pending)
		err = -ENOENT;
	else
		memcpy(nonce, pmo->mig_bind.rx_nonce, MMT_RX_NONCE_BYTES);
	mutex_unlock(&pmo->lock);
	return err;
}

/**
 * mmt_mig_resolve() - resolve a migration of unknown outcome on the
 *	destination's final statement
 * @pmo: the source: MMT_PMO_INFO_MIG_UNKNOWN from a migration
 * @nonce: MMT_RX_NONCE_BYTES, the receive nonce the statement answers for
 *	(mmt_mig_unknown_nonce() when the question was asked)
 * @outcome: MMT_MIG_OUTCOME_COMMITTED or MMT_MIG_OUTCOME_ABORTED, as stated
 *	(untrusted)
 * @tag: MMT_MIG_TAG_BYTES, the statement's tag (untrusted)
 *
 * The tag must be mmt_mig_resolve_tag() of @outcome over the migration the
 * PMO kept (@pmo->mig_bind) under its keying root.  Committed: every
 * VALID MMT becomes INVALID, as after an authenticated COMMIT ACK.
 * Aborted: the PMO is writable again, every VALID MMT re-encrypted under a
 * fresh GUA before its next write or send.  Either way it is no longer
 * MMT_PMO_INFO_MIG_UNKNOWN.
 *
 * Context: process; takes @pmo->lock (killably); may sleep.
 * Return: 0; -ENOENT if the PMO has no migration of unknown outcome of
 * receive @nonce (another caller resolved it, maybe a migration since);
 * -EINVAL if @outcome is not final;
 * -EBADMSG if the tag does not verify (nothing changed); -EINTR (a fatal
 * signal while waiting for the lock); -ENOMEM or the crypto library's
 * errors.
 */
int mmt_mig_resolve(struct mmt_pmo *pmo, const u8 *nonce, u32 outcome,
		    const u8 *tag)
{
	return mmt_resolve(pmo, nonce, outcome, 0, tag);
}

/**
 * mmt_resolve() - resolve a migration or a transfer of unknown outcome on
 *	the destination's final statement
 * @pmo: the source: MMT_PMO_INFO_MIG_UNKNOWN from a migration or a transfer
 * @nonce: as for mmt_mig_resolve()
 * @outcome: a migration: as for mmt_mig_resolve(); a transfer:
 *	MMT_MIG_OUTCOME_ENDED (untrusted)
 * @closures: ENDED: the closures the destination's receive took in, from
 *	closure 0 (untrusted, covered by the tag)
 * @tag: MMT_MIG_TAG_BYTES, the statement's tag (untrusted)
 *
 * A migration: as mmt_mig_resolve().  A transfer (@pmo->xfer_unknown): the
 * tag must be mmt_xfer_resolve_tag() of @closures over the transfer the
 * PMO kept; then each closure of unknown outcome (@pmo->xfer_first up to
 * @pmo->xfer_end) below @closures becomes INVALID, as after its
 * authenticated acceptance, and every other VALID MMT is writable again,
 * re-encrypted under a fresh GUA before its next write or send (DESIGN.md
 * section 5).  A statement of the other kind (a migration's for a
 * transfer, or the reverse) does not verify.
 *
 * Context: process; takes @pmo->lock (killably); may sleep.
 * Return: as mmt_mig_resolve(); -EINVAL if @outcome is none of the three
 * final ones.
 */
int mmt_resolve(struct mmt_pmo *pmo, const u8 *nonce, u32 outcome,
		u32 closures, const u8 *tag)
{
	u8 want[MMT_MIG_TAG_BYTES];
	bool ended;
	u32 i;
	int err;

	if (outcome != MMT_MIG_OUTCOME_COMMITTED &&
	    outcome != MMT_MIG_OUTCOME_ABORTED &&
	    outcome != MMT_MIG_OUTCOME_ENDED)
		return -EINVAL;
	if (mutex_lock_killable(&pmo->lock))
		return -EINTR;
	if (!pmo->mig_unknown || pmo->ckpt_pending || !pmo->crypto ||
	    memcmp(pmo->mig_bind.rx_nonce, nonce, MMT_RX_NONCE_BYTES)) {
		err = -ENOENT;
		goto out;
	}
	ended = outcome == MMT_MIG_OUTCOME_ENDED;
	if (ended != pmo->xfer_unknown)
		err = -EBADMSG;	/* the other kind's statement */
	else if (pmo->xfer_unknown)
		err = mmt_xfer_resolve_tag(pmo->key_root, &pmo->mig_bind,
					   closures, want);
	else
		err = mmt_mig_resolve_tag(pmo->key_root, &pmo->mig_bind,
					  outcome, want);
	if (!err && crypto_memneq(want, tag, MMT_MIG_TAG_BYTES))
		err = -EBADMSG;
	if (err)
		goto out;
	for (i = 0; i < pmo->closures; i++) {
		struct mmt_root *r = &pmo->mmts[i].root;

		if (r->state != MMT_VALID)
			continue;
		if (outcome == MMT_MIG_OUTCOME_COMMITTED ||
		    (ended && i >= pmo->xfer_first && i < pmo->xfer_end &&
		     i < closures))
			mmt_root_transition(r, MMT_INVALID);
		else if (!ended)
			r->regua_due = true;
		/*
		 * A transfer's closures in doubt and not taken in are due
		 * already (mmt_delegate_unknown()); the others kept their GUA.
		 */
	}
	pmo->mig_unknown = false;
	pmo->xfer_unknown = false;
	memset(&pmo->mig_bind, 0, sizeof(pmo->mig_bind));
out:
	mutex_unlock(&pmo->lock);
	memzero_explicit(want, sizeof(want));
	return err;
}
