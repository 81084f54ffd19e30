// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_pmo_io.c - pread() and pwrite() of a PMO: the plaintext in and out
 * through the engine, in steps under the PMO's lock, serially or, for a
 * call of many closures, on the I/O workqueue (module parameter
 * io_workers), as dm-crypt's kcryptd spreads its bios' crypto
 *
 * The PMO object and its fd are in mmt_pmo.c; its file operations call
 * mmt_pmo_io() here, the kernel's own users mmt_pmo_kread() and
 * mmt_pmo_kwrite().
 */
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/uio.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

#include "mmt_internal.h"
#include "mmt_trace.h"
#include "mmt.h"

/* Plaintext bounce buffer for pread/pwrite, per call. */
#define MMT_IO_CHUNK	(64 * 1024)

/*
 * Most bytes of bounce buffers one parallel pread/pwrite keeps in flight
 * (one buffer per closure): it bounds the closures in flight when
 * closures are large.
 */
#define MMT_IO_INFLIGHT	(16 * 1024 * 1024)
/* Most closures of one call in flight, whatever io_workers says. */
#define MMT_IO_WORKERS_MAX	64

/*
 * io_workers: closures worked on at once, on the I/O workers' queue: those
 * of one pread/pwrite (here) and those of an eager MMT-channel receive
 * whose full checks run while the rules, verdicts and ACKs stay in order
 * (driver/mmt_conn_rx.c).  0: the CPUs online; 1: serial, in the calling
 * task.  Read once per call (mmt_io_nworkers()).
 */
unsigned int mmt_io_workers;
module_param_named(io_workers, mmt_io_workers, uint, 0644);
MODULE_PARM_DESC(io_workers,
		 "Closures of one pread/pwrite encrypted or verified at once, and closures of an eager MMT-channel receive verified at once, on as many CPUs (0, the default: the CPUs online; 1: one after the other in the calling task)");

/* The I/O workers' queue (mmt_pmo_io_init()); NULL: every call serial. */
static struct workqueue_struct *mmt_io_wq;

/**
 * struct mmt_pmo_io_slot - what an I/O worker needs besides its bounce
 * buffer to run one closure of a parallel pread/pwrite
 * @scratch: engine work space, mmt_scratch_bytes() of the PMO's geometry,
 *	in place of the PMO's shared @scratch
 * @crypto: contexts of the PMO's keyings, each made again from the PMO's
 *	key root and a keying salt (mmt_crypto_alloc_root()): the same
 *	subkeys as the context an MMT points to, with requests, scatterlists
 *	and bounce buffer of their own; matched by keying salt, made on
 *	demand, NULL where none is made yet
 * @next: the entry of @crypto a new context replaces when all are taken
 *
 * One slot serves one closure at a time.  Slots live in the PMO
 * (@pmo->io_slots) from the first parallel call until the key is dropped.
 */
struct mmt_pmo_io_slot {
	u8 *scratch;
	struct mmt_crypto *crypto[MMT_PMO_KEYINGS + 1];
	u32 next;
};

/**
 * mmt_pmo_io_slots_free() - free the I/O workers' slots of a PMO
 * @pmo: the PMO
 *
 * Their contexts hold the key's subkeys (freed, which wipes the expanded
 * keys), their scratch plaintext (kvfree_sensitive()).  Called when the
 * key is dropped, so no slot outlives the key it was made from.
 *
 * Context: process; the caller holds @pmo->lock or owns the PMO, so no
 * parallel call runs (it holds the lock while it uses the slots).
 */
void mmt_pmo_io_slots_free(struct mmt_pmo *pmo)
{
	size_t sbytes = mmt_scratch_bytes(&pmo->params);
	u32 i, k;

	for (i = 0; i < pmo->io_nslots; i++) {
		struct mmt_pmo_io_slot *slot = &pmo->io_slots[i];

		for (k = 0; k < ARRAY_SIZE(slot->crypto); k++)
			mmt_crypto_free(slot->crypto[k]);
		if (slot->scratch)
			kvfree_sensitive(slot->scratch, sbytes);
	}
	kfree(pmo->io_slots);
	pmo->io_slots = NULL;
	pmo->io_nslots = 0;
}

/*
 * Bytes of [@off, @off + @len) in the first @k blocks it touches: the
 * prefix that ends at the end of its @k-th block (or at @len).
 */
static size_t mmt_pmo_prefix(const struct mmt *m, u64 off, size_t len, u32 k)
{
	unsigned int lbs = m->p->log_block_size;

	if (!k)
		return 0;
	return min_t(u64, len, (((off >> lbs) + k) << lbs) - off);
}

/*
 * After mmt_read() of [@off, @off + @len) failed: read the bytes of the
 * blocks before the first one that fails verification into @bounce and
 * return their count (0 if the first block fails).  mmt_read() is all or
 * nothing, so this bisects on the number of good blocks: a shorter prefix
 * touches a subset of the nodes and MACs a longer one does, so if a
 * prefix reads, every shorter one does.  The first block alone is tried
 * first (the next call after a short count starts at the bad block).  At
 * most 2 + log2(blocks in @len) reads, only after an integrity failure;
 * each failed one zeroes @bounce (and logs, rate-limited), so the bytes
 * returned are those of the last successful read of exactly the prefix.
 * Caller holds pmo->lock.
 */
static size_t mmt_pmo_good_prefix(struct mmt *m, u64 off, u8 *bounce,
				  size_t len)
{
	unsigned int lbs = m->p->log_block_size;
	u32 lo = 0, hi, mid;	/* blocks known good, known to fail */
	bool have = false;	/* @bounce holds the prefix of @lo blocks */
	size_t good;

	hi = ((off + len - 1) >> lbs) - (off >> lbs) + 1;
	while (hi - lo > 1) {
		mid = lo ? lo + (hi - lo) / 2 : 1;
		have = !mmt_read(m, off, bounce, mmt_pmo_prefix(m, off, len,
								mid));
		if (have)
			lo = mid;
		else
			hi = mid;
	}
	good = mmt_pmo_prefix(m, off, len, lo);
	/* untrusted memory changed between the reads: fail here */
	if (good && !have && mmt_read(m, off, bounce, good))
		good = 0;
	return good;
}

/**
 * mmt_pmo_io_crypt() - the crypto and tree work of one step of
 * pread/pwrite
 * @pmo: the PMO, keyed
 * @pos: data offset of the step
 * @bounce: @len bytes of plaintext (write) or for it (read), kernel memory
 * @len: bytes; cut at the end of the MMT of @pos and at MMT_IO_CHUNK
 * @write: mmt_write(), else mmt_read()
 * @done: (out) the bytes written or read into @bounce; on a read's
 *	-EBADMSG, those of the blocks before the first bad one (a short
 *	count, uapi/mmt.h, mmt_pmo_good_prefix()); 0 on other errors
 *
 * Uses the MMT's own scratch and context (the PMO's, or a slot's while
 * an I/O worker has the MMT).  Counts a verification failure in the
 * module's statistics (atomic) and traces it.
 *
 * Context: process; the caller holds @pmo->lock, or is the I/O worker
 * the holder gave the MMT to (mmt_pmo_rw_par()).
 * Return: 0; mmt_write()'s or mmt_read()'s error.
 */
static int mmt_pmo_io_crypt(struct mmt_pmo *pmo, u64 pos, u8 *bounce,
			    size_t len, bool write, size_t *done)
{
	u64 cbytes = pmo->params.data_bytes;
	u32 index = pos >> ilog2(cbytes);
	u64 off = pos & (cbytes - 1);
	struct mmt *m = &pmo->mmts[index];
	int err;

	*done = 0;
	len = min_t(u64, len, cbytes - off);
	len = min_t(size_t, len, MMT_IO_CHUNK);
	if (write)
		err = mmt_write(m, off, bounce, len);
	else
		err = mmt_read(m, off, bounce, len);
	if (!err) {
		*done = len;
		return 0;
	}
	if (err == -EBADMSG) {
		atomic64_inc(&mmt_stats.verify_fail);
		trace_mmt_verify_fail(m->root.gua, index, err);
		if (!write)
			*done = mmt_pmo_good_prefix(m, off, bounce, len);
	}
	return err;
}

/**
 * mmt_pmo_io_step() - one step of the serial pread/pwrite
 * @pmo: the PMO, keyed
 * @pos: data offset of the step
 * @bounce: as mmt_pmo_io_crypt()
 * @len: as mmt_pmo_io_crypt()
 * @write: as mmt_pmo_io_crypt()
 * @done: (out) as mmt_pmo_io_crypt()
 *
 * As mmt_pmo_io_crypt(); a write to an MMT a failed transfer left due
 * for a fresh GUA re-encrypts it first (mmt_delegate_regua_due()).
 *
 * Context: process; the caller holds @pmo->lock.
 * Return: 0; mmt_delegate_regua_due()'s or mmt_pmo_io_crypt()'s error.
 */
static int mmt_pmo_io_step(struct mmt_pmo *pmo, u64 pos, u8 *bounce,
			   size_t len, bool write, size_t *done)
{
	u64 cbytes = pmo->params.data_bytes;
	int err;

	*done = 0;
	if (write) {
		err = mmt_delegate_regua_due(pmo,
					     &pmo->mmts[pos >> ilog2(cbytes)]);
		if (err)
			return err;
	}
	return mmt_pmo_io_crypt(pmo, pos, bounce, len, write, done);
}

/**
 * mmt_pmo_piece() - the crypto and tree work of one closure's piece of a
 * pread/pwrite, in the steps the serial path takes
 * @pmo: the PMO, keyed
 * @pos: data offset of the piece: the call's offset or the start of a
 *	closure, so its steps start where the serial path's do
 * @bounce: @len bytes of plaintext (write) or for it (read): kernel memory,
 *	kmalloc'd or vmalloc'd, never user memory
 * @len: bytes, inside the closure of @pos
 * @write: encrypt @bounce into the closure, else verify and decrypt it
 *	into @bounce
 * @done: (out) bytes of the piece written or read: all of them, or
 *	those of the steps before a failed one plus, on a read's -EBADMSG,
 *	the good blocks of that step before its first bad one
 *
 * Steps of at most MMT_IO_CHUNK bytes from @pos, each all or nothing
 * (mmt_write(), mmt_read()), stopping at the first that fails.  Nothing
 * here looks at user memory or at any MMT but the one of @pos, so the
 * pieces of different closures may run at once (the model: dm-crypt's
 * kcryptd_crypt(), drivers/md/dm-crypt.c, which converts one bio's data in
 * a workqueue).
 *
 * Context: process; may sleep.  The caller holds @pmo->lock, or is the I/O
 * worker the holder gave this closure to, with a scratch and crypto
 * context no other piece uses meanwhile (mmt_pmo_rw_par()).
 * Return: 0; the first failed step's error: -EBADMSG (a node, MAC or block
 * fails verification), -EPERM (the MMT's state, or read-only, for a
 * write), -EOVERFLOW (counters, for a write), or a crypto backend error.
 */
static int mmt_pmo_piece(struct mmt_pmo *pmo, u64 pos, u8 *bounce,
			 size_t len, bool write, size_t *done)
{
	size_t n;
	int err = 0;

	*done = 0;
	while (*done < len) {
		if (*done)
			cond_resched();
		err = mmt_pmo_io_crypt(pmo, pos + *done, bounce + *done,
				       min_t(size_t, len - *done, MMT_IO_CHUNK),
				       write, &n);
		*done += n;
		if (err)
			break;
	}
	return err;
}

/*
 * pread/pwrite of a plain PMO (no key): copy @len bytes at data offset
 * @pos (inside one closure) straight between the user's buffer and the
 * PMO's memory; nothing is encrypted or checked.  Returns the bytes
 * copied (short on a fault).  Caller holds pmo->lock.
 */
static size_t mmt_pmo_plain_io(struct mmt_pmo *pmo, u64 pos,
			       struct iov_iter *iter, size_t len, bool write)
{
	u64 cbytes = pmo->params.data_bytes;
	u8 *p = pmo->mmts[pos >> ilog2(cbytes)].data + (pos & (cbytes - 1));

	return write ? copy_from_iter(p, len, iter) :
		       copy_to_iter(p, len, iter);
}

/*
 * Take @pmo->lock for a write, or a read, killable: another call may hold
 * it for long (its copy waits on a fault of its buffer), so a fatal signal
 * ends the wait with -EINTR.  A write waits, interruptibly, while a live
 * migration of the PMO hands over (docs/MIGRATION.md, "Writers at the
 * handover"); with @nowait it returns -EAGAIN instead.
 */
static int mmt_pmo_lock_io(struct mmt_pmo *pmo, bool write, bool nowait)
{
	if (mutex_lock_killable(&pmo->lock))
		return -EINTR;
	while (write && pmo->mig_frozen) {
		mutex_unlock(&pmo->lock);
		if (nowait)
			return -EAGAIN;
		if (wait_event_interruptible(pmo->mig_wq,
					     !READ_ONCE(pmo->mig_frozen)))
			return -EINTR;
		if (mutex_lock_killable(&pmo->lock))
			return -EINTR;
	}
	if (write && pmo->mig_unknown) {
		mutex_unlock(&pmo->lock);
		return -EUCLEAN;	/* MMT_IOC_PMO_MIG_RESOLVE first */
	}
	return 0;
}

/**
 * struct mmt_pmo_io_job - one closure's piece of a parallel pread/pwrite
 * @work: the work item on the I/O workers' queue
 * @pmo: the PMO
 * @pos: data offset of the piece (mmt_pmo_piece())
 * @len: bytes of the piece, inside one closure
 * @bounce: the piece's plaintext, kvmalloc'd, @cap bytes
 * @cap: bytes at @bounce: a closure's, or the call's count if smaller
 * @write: a pwrite
 * @check: run mmt_write_check() on the piece instead of writing it
 * @copied: bytes copied in from the caller's buffer for the piece (a
 *	pwrite): @len, or more when a fault cut @len to whole steps
 * @m: the MMT of the piece, whose @m->scratch and @m->crypto the job
 *	points at its slot's while it runs on a worker
 * @crypto: @m->crypto as it was, put back when the batch ends
 * @pending: jobs of the batch still running on the workers
 * @all_done: completed by the last of them
 * @done: (out) mmt_pmo_piece()'s count (0 for a check)
 * @err: (out) mmt_pmo_piece()'s or mmt_write_check()'s result
 */
struct mmt_pmo_io_job {
	struct work_struct work;
	struct mmt_pmo *pmo;
	u64 pos;
	size_t len;
	u8 *bounce;
	size_t cap;
	bool write;
	bool check;
	size_t copied;
	struct mmt *m;
	struct mmt_crypto *crypto;
	atomic_t *pending;
	struct completion *all_done;
	size_t done;
	int err;
};

/**
 * mmt_pmo_io_init() - create the I/O workers' queue
 *
 * An unbound, CPU-intensive workqueue, as dm-crypt's kcryptd queue
 * (crypt_ctr(), drivers/md/dm-crypt.c): the closures of one pread/pwrite
 * spread over the CPUs the scheduler picks.  Not WQ_MEM_RECLAIM: no work
 * item of it is on a memory reclaim path.
 *
 * Context: module init.
 * Return: 0, or -ENOMEM.
 */
int mmt_pmo_io_init(void)
{
	mmt_io_wq = alloc_workqueue("mmt_io", WQ_UNBOUND | WQ_CPU_INTENSIVE,
				    0);
	return mmt_io_wq ? 0 : -ENOMEM;
}

/**
 * mmt_io_nworkers() - how many closures may be worked on at once
 *
 * The module parameter io_workers, 0 meaning the CPUs online; 1 when the
 * queue does not exist (every caller then runs serially).  Read once per
 * call by its users: pread/pwrite here, the eager receive
 * (driver/mmt_conn_rx.c).
 *
 * Context: any.
 * Return: 1 or more.
 */
unsigned int mmt_io_nworkers(void)
{
	unsigned int workers = READ_ONCE(mmt_io_workers);

	if (!mmt_io_wq)
		return 1;
	return workers ? workers : num_online_cpus();
}

/**
 * mmt_io_queue() - run @work on the I/O workers' queue
 * @work: an initialized work item; the caller waits for it before it
 *	frees anything the work uses
 *
 * Context: any.
 * Return: true if queued; false if there is no queue (the caller then
 * runs the work itself), or if @work is still pending: callers
 * INIT_WORK() each item before they queue it and wait for it before they
 * queue it again, so that never happens to them (running it themselves
 * then would run it twice at once).
 */
bool mmt_io_queue(struct work_struct *work)
{
	return mmt_io_wq && queue_work(mmt_io_wq, work);
}

/**
 * mmt_pmo_io_exit() - destroy the I/O workers' queue
 *
 * Context: module exit, or init unwinding: no PMO I/O runs (every call
 * waits for its work items before it returns).
 */
void mmt_pmo_io_exit(void)
{
	if (mmt_io_wq)
		destroy_workqueue(mmt_io_wq);
	mmt_io_wq = NULL;
}

/**
 * mmt_pmo_io_job_run() - one job's work: check its piece, or write or
 * read it
 * @job: the job, its piece, MMT and @check set
 *
 * Context: process (the calling task or an I/O worker); may sleep.  The
 * job's MMT is this job's alone while it runs (mmt_pmo_rw_par()).
 */
static void mmt_pmo_io_job_run(struct mmt_pmo_io_job *job)
{
	u64 cbytes = job->pmo->params.data_bytes;

	job->done = 0;
	if (job->check)
		job->err = mmt_write_check(job->m, job->pos & (cbytes - 1),
					   job->len);
	else
		job->err = mmt_pmo_piece(job->pmo, job->pos, job->bounce,
					 job->len, job->write, &job->done);
}

/**
 * mmt_pmo_io_work() - the work function of an I/O worker
 * @work: the @work of a struct mmt_pmo_io_job
 *
 * Runs the job, then counts it done; the last job of the batch completes
 * the batch's completion, which the caller waits on (as dm-crypt's
 * kcryptd_crypt() runs one conversion, drivers/md/dm-crypt.c).
 *
 * Context: a kworker of the I/O workers' queue; may sleep.
 */
static void mmt_pmo_io_work(struct work_struct *work)
{
	struct mmt_pmo_io_job *job = container_of(work, struct mmt_pmo_io_job,
						  work);

	mmt_pmo_io_job_run(job);
	/* fully ordered: the caller sees @done and @err after it */
	if (atomic_dec_and_test(job->pending))
		complete(job->all_done);
}

/**
 * mmt_pmo_io_run() - run @n jobs at once and wait for them
 * @jobs: @n jobs, their pieces and MMTs set, every one but the first
 *	with its slot's scratch and context in its MMT
 * @n: 1 or more
 * @check: run mmt_write_check() on each piece instead of the piece's
 *	write or read
 *
 * The first job runs in the calling task, the others on the I/O workers'
 * queue (as dm-crypt's kcryptd_queue_crypt() queues a bio's conversion,
 * drivers/md/dm-crypt.c); the call returns when all are done, each
 * job's @done and @err set.
 *
 * Context: process; the caller holds the PMO's lock; may sleep.
 */
static void mmt_pmo_io_run(struct mmt_pmo_io_job *jobs, u32 n, bool check)
{
	DECLARE_COMPLETION_ONSTACK(all_done);
	atomic_t pending;
	u32 i;

	atomic_set(&pending, n - 1);
	for (i = 0; i < n; i++) {
		jobs[i].check = check;
		jobs[i].pending = &pending;
		jobs[i].all_done = &all_done;
	}
	for (i = 1; i < n; i++) {
		INIT_WORK(&jobs[i].work, mmt_pmo_io_work);
		queue_work(mmt_io_wq, &jobs[i].work);
	}
	mmt_pmo_io_job_run(&jobs[0]);
	if (n > 1)
		wait_for_completion(&all_done);
}

/**
 * mmt_pmo_io_slots_get() - make sure @pmo has @n slots for I/O workers
 * @pmo: the PMO, keyed
 * @n: slots wanted
 *
 * Grows @pmo->io_slots, each new slot with its scratch (contexts come on
 * demand, mmt_pmo_io_slot_crypto()).  The scratch is sized by the
 * geometry the user chose: charged to the caller's memory cgroup, and
 * quiet when it fails (MMT_GFP_USER_SIZED).
 *
 * Context: process; caller holds @pmo->lock; may sleep.
 * Return: the slots there are, at most @n: fewer when out of memory (the
 * call then runs fewer closures at once; never an error).
 */
static u32 mmt_pmo_io_slots_get(struct mmt_pmo *pmo, u32 n)
{
	struct mmt_pmo_io_slot *slots;
	u32 i;

	lockdep_assert_held(&pmo->lock);
	if (n <= pmo->io_nslots)
		return n;
	slots = kcalloc(n, sizeof(*slots), GFP_KERNEL_ACCOUNT);
	if (!slots)
		return pmo->io_nslots;
	if (pmo->io_nslots)
		memcpy(slots, pmo->io_slots,
		       pmo->io_nslots * sizeof(*slots));
	kfree(pmo->io_slots);
	pmo->io_slots = slots;
	for (i = pmo->io_nslots; i < n; i++) {
		slots[i].scratch = kvzalloc(mmt_scratch_bytes(&pmo->params),
					    MMT_GFP_USER_SIZED);
		if (!slots[i].scratch)
			break;
		pmo->io_nslots++;
	}
	return pmo->io_nslots;
}

/**
 * mmt_pmo_io_slot_crypto() - @slot's context for the keying of @c
 * @pmo: the PMO, keyed
 * @slot: one of @pmo->io_slots
 * @c: the context an MMT of @pmo points to (its own keying's or a
 *	received one's, mmt_pmo_keying())
 *
 * The slot's context with @c's keying salt, made from @pmo->key_root if
 * the slot has none yet: the same subkeys, so a closure gives the same
 * bytes whichever context works on it.  Matched by salt, not by pointer:
 * a context freed and another allocated at its address is never mistaken
 * for it.
 *
 * Context: process; caller holds @pmo->lock; may sleep.
 * Return: the context; ERR_PTR(-EPERM) if @c is NULL (an MMT without a
 * keying, which fails on its own); or mmt_crypto_alloc_root()'s ERR_PTR
 * (-ENOMEM and the crypto API's errors).  On an error the caller runs the
 * closure itself, with the MMT's own scratch and context.
 */
static struct mmt_crypto *mmt_pmo_io_slot_crypto(struct mmt_pmo *pmo,
						 struct mmt_pmo_io_slot *slot,
						 struct mmt_crypto *c)
{
	struct mmt_crypto *nc;
	u32 k, free = ARRAY_SIZE(slot->crypto);
	const u8 *ksalt;

	lockdep_assert_held(&pmo->lock);
	if (!c)
		return ERR_PTR(-EPERM);	/* no keying: it fails on its own */
	ksalt = mmt_crypto_ksalt(c);
	for (k = 0; k < ARRAY_SIZE(slot->crypto); k++) {
		if (!slot->crypto[k]) {
			free = min(free, k);
			continue;
		}
		if (!memcmp(mmt_crypto_ksalt(slot->crypto[k]), ksalt,
			    MMT_KSALT_BYTES))
			return slot->crypto[k];
	}
	nc = mmt_crypto_alloc_root(pmo->key_root, ksalt);
	if (IS_ERR(nc))
		return nc;
	if (free == ARRAY_SIZE(slot->crypto)) {
		free = slot->next;
		slot->next = (slot->next + 1) % ARRAY_SIZE(slot->crypto);
		mmt_crypto_free(slot->crypto[free]);
	}
	slot->crypto[free] = nc;
	return nc;
}

/**
 * mmt_pmo_write_refused() - would a write to @m fail at its first check?
 * @m: an MMT of a keyed PMO
 *
 * mmt_write()'s refusals before any verification: not VALID, read-only,
 * root counter at its end.  Such a closure starts a batch of its own, so
 * a write stops there before any later closure is copied in.
 *
 * Context: the caller holds the PMO's lock.
 * Return: true if mmt_write() would refuse it (-EPERM, -EOVERFLOW).
 */
static bool mmt_pmo_write_refused(const struct mmt *m)
{
	return m->root.state != MMT_VALID || m->root.read_only ||
	       m->root.root_counter >= MMT_ROOT_COUNTER_MAX;
}

/**
 * mmt_pmo_rw_par() - the keyed part of pread/pwrite with its closures
 * spread over the I/O workers
 * @pmo: the PMO, keyed
 * @pos: data offset of the call
 * @count: bytes of the call, inside the PMO
 * @iter: the caller's buffer, touched only here, in the calling task
 * @write: pwrite, else pread
 * @jobs: @njobs jobs, their @bounce and @cap set
 * @njobs: closures at most in flight, 2 or more; at most @pmo->io_nslots
 *	+ 1
 * @total: (out) the bytes moved: those before the first failure, as
 *	the serial path counts them
 *
 * The call goes in batches of up to @njobs consecutive pieces, each the
 * part of the call inside one closure (as dm-crypt's kcryptd queue works
 * on one bio's data, drivers/md/dm-crypt.c, kcryptd_queue_crypt()).  For a
 * batch the caller copies each piece in (pwrite), in order; the first
 * piece runs in the calling task with the PMO's own scratch and the MMT's
 * context, every other one on the workqueue with a slot's
 * (mmt_pmo_io_slot_crypto()); the caller waits for all, puts the MMTs'
 * contexts back, and copies each piece out (pread), in order, stopping at
 * the first that failed.  A pwrite's batch runs twice: first every piece
 * is checked (mmt_write_check(), which writes nothing), then only the
 * pieces up to the first that fails its check are written (that one too,
 * as its steps before the failing one are written by the serial path);
 * the bytes copied in for the others go back to @iter
 * (iov_iter_revert()), for the next batch if that piece writes after all.
 *
 * What the serial path guarantees is kept: each step is all or nothing;
 * a pread returns the good bytes before the first failure even when later
 * closures read fine; a pwrite returns the bytes before the first failure
 * and leaves every later closure untouched.  A closure a pwrite would
 * refuse at once (mmt_pmo_write_refused()) or must re-encrypt under a
 * fresh GUA first (mmt_delegate_regua_due(), done here, serially) starts
 * a batch.  The one difference: a failure the check cannot see (untrusted
 * memory changed between the check and the write, a block only a step's
 * own counter overflow re-encrypts) may find later closures of the batch
 * written, each whole.  A fatal signal ends the call between batches.
 *
 * Context: process; caller holds @pmo->lock (over the whole call, as the
 * serial path); may sleep.
 * Return: 0 or the first failure's error: -EFAULT (the user buffer),
 * -EINTR (a fatal signal between batches), or mmt_pmo_piece()'s and
 * mmt_delegate_regua_due()'s errors.
 */
static int mmt_pmo_rw_par(struct mmt_pmo *pmo, u64 pos, size_t count,
			  struct iov_iter *iter, bool write,
			  struct mmt_pmo_io_job *jobs, u32 njobs,
			  size_t *total)
{
	u64 cbytes = pmo->params.data_bytes;
	int err = 0;

	lockdep_assert_held(&pmo->lock);
	*total = 0;
	while (*total < count && !err) {
		size_t queued = 0;
		bool alone = false;
		int stop = 0;
		u32 n, i, run;

		if (*total) {	/* between two batches */
			cond_resched();
			if (fatal_signal_pending(current))
				return -EINTR;
		}
		for (n = 0; n < njobs && !stop && !alone &&
		     *total + queued < count;) {
			struct mmt_pmo_io_job *job = &jobs[n];
			u64 at = pos + *total + queued;
			struct mmt *m = &pmo->mmts[at >> ilog2(cbytes)];
			struct mmt_pmo_io_slot *slot = NULL;
			struct mmt_crypto *c = m->crypto;
			size_t len, got;

			len = min_t(u64, count - *total - queued,
				    cbytes - (at & (cbytes - 1)));
			if (write && (mmt_pmo_write_refused(m) ||
				      m->root.regua_due)) {
				if (n)
					break;	/* it starts the next batch */
				stop = mmt_delegate_regua_due(pmo, m);
				if (stop)
					break;
				/* a batch of its own: it fails */
				alone = mmt_pmo_write_refused(m);
			}
			if (n) {
				slot = &pmo->io_slots[n - 1];
				c = mmt_pmo_io_slot_crypto(pmo, slot, c);
				if (IS_ERR(c))
					break;	/* the next batch's first */
			}
			if (write) {
				got = copy_from_iter(job->bounce, len, iter);
				job->copied = got;
				if (got != len) {
					/* the steps before the fault */
					len = rounddown(got, MMT_IO_CHUNK);
					stop = -EFAULT;
				}
			}
			if (!len)
				break;
			job->pmo = pmo;
			job->pos = at;
			job->len = len;
			job->write = write;
			job->m = m;
			job->crypto = m->crypto;
			job->done = 0;
			job->err = 0;
			if (n) {
				m->scratch = slot->scratch;
				m->crypto = c;
			}
			queued += len;
			n++;
		}
		if (!n)
			return stop;

		run = n;
		if (write && n > 1) {
			size_t back = 0;

			/*
			 * Check every piece first: a write that would fail in
			 * piece k writes pieces 0..k (k up to its failing
			 * step) and leaves the later ones untouched; their
			 * bytes go back to the caller's buffer, in case k
			 * writes after all.
			 */
			mmt_pmo_io_run(jobs, n, true);
			for (i = 0; i < n && !jobs[i].err; i++)
				;
			run = min(n, i + 1);
			if (run < n) {
				for (i = run; i < n; i++)
					back += jobs[i].copied;
				iov_iter_revert(iter, back);
				stop = 0;	/* the next batch meets it again */
			}
		}
		mmt_pmo_io_run(jobs, run, false);
		if (run > 1)
			pmo->io_batches++;
		for (i = 1; i < n; i++) {
			jobs[i].m->scratch = pmo->scratch;
			jobs[i].m->crypto = jobs[i].crypto;
		}

		for (i = 0; i < run && !err; i++) {
			struct mmt_pmo_io_job *job = &jobs[i];
			size_t o, step;

			if (write) {
				*total += job->done;
			} else {
				/* out in the serial path's steps */
				for (o = 0; o < job->done; o += step) {
					step = min_t(size_t, job->done - o,
						     MMT_IO_CHUNK);
					if (copy_to_iter(job->bounce + o, step,
							 iter) != step)
						return -EFAULT;
					*total += step;
				}
			}
			err = job->err;
		}
		if (!err)
			err = stop;
	}
	return err;
}

/**
 * mmt_pmo_io_jobs() - set up a parallel pread/pwrite, if it is one
 * @pmo: the PMO
 * @pos: data offset of the call
 * @count: bytes of the call, inside the PMO
 * @njobs: (out) closures at most in flight
 *
 * A call goes parallel when the PMO is keyed, io_workers (0: the CPUs
 * online) is above 1, the call spans two closures or more and the queue
 * exists.  Closures in flight: the fewest of io_workers,
 * MMT_IO_WORKERS_MAX, the closures the call spans, those whose bounce
 * buffers fit MMT_IO_INFLIGHT, and the slots and buffers there is memory
 * for.  Small calls (one closure) allocate nothing here.
 *
 * Context: process; caller holds @pmo->lock; may sleep.
 * Return: @njobs jobs with their bounce buffers (free them with
 * mmt_pmo_io_jobs_free()), or NULL: the call runs serially.
 */
static struct mmt_pmo_io_job *mmt_pmo_io_jobs(struct mmt_pmo *pmo, u64 pos,
					      size_t count, u32 *njobs)
{
	u64 cbytes = pmo->params.data_bytes;
	unsigned int workers = READ_ONCE(mmt_io_workers);
	struct mmt_pmo_io_job *jobs;
	u64 spans;
	size_t cap;
	u32 n, i;

	lockdep_assert_held(&pmo->lock);
	if (!workers)
		workers = num_online_cpus();
	if (!pmo->crypto || workers < 2 || !mmt_io_wq)
		return NULL;
	spans = ((pos + count - 1) >> ilog2(cbytes)) - (pos >> ilog2(cbytes))
		+ 1;
	if (spans < 2)
		return NULL;
	cap = min_t(u64, cbytes, count);
	n = min3((u64)workers, (u64)MMT_IO_WORKERS_MAX, spans);
	n = min_t(u64, n, max_t(u64, MMT_IO_INFLIGHT / cap, 1));
	if (n < 2)
		return NULL;
	n = mmt_pmo_io_slots_get(pmo, n - 1) + 1;
	if (n < 2)
		return NULL;
	jobs = kcalloc(n, sizeof(*jobs), GFP_KERNEL_ACCOUNT);
	if (!jobs)
		return NULL;
	for (i = 0; i < n; i++) {
		jobs[i].cap = cap;
		jobs[i].bounce = kvmalloc(cap, MMT_GFP_USER_SIZED);
		if (!jobs[i].bounce)
			break;
	}
	*njobs = i;
	if (i < 2) {
		if (i)
			kvfree(jobs[0].bounce);
		kfree(jobs);
		return NULL;
	}
	return jobs;
}

/**
 * mmt_pmo_io_jobs_free() - free what mmt_pmo_io_jobs() made
 * @jobs: the jobs
 * @njobs: their count
 *
 * The bounce buffers held plaintext: kvfree_sensitive() wipes them.
 *
 * Context: process; after every job of the call finished.
 */
static void mmt_pmo_io_jobs_free(struct mmt_pmo_io_job *jobs, u32 njobs)
{
	u32 i;

	for (i = 0; i < njobs; i++)
		kvfree_sensitive(jobs[i].bounce, jobs[i].cap);
	kfree(jobs);
}

/*
 * pread/pwrite at data offset @pos; returns the bytes moved or an error,
 * and sets *@end to the offset after them.
 *
 * The PMO's lock is held over the whole call, so a pwrite running when a
 * migration's handover starts finishes first (docs/MIGRATION.md section
 * 6).  The copy goes in steps of at most MMT_IO_CHUNK bytes; between
 * steps the call yields the CPU (cond_resched()) and, once the caller is
 * being killed, ends with the bytes of the steps done (as a read or write
 * of a regular file does).  A call of a keyed PMO over two closures or
 * more with io_workers above 1 runs its closures on the I/O workers
 * (mmt_pmo_rw_par()), with the same counts and errors.
 */
static ssize_t mmt_pmo_rw(struct mmt_pmo *pmo, loff_t pos,
			  struct iov_iter *iter, bool write, bool nowait,
			  loff_t *end)
{
	struct mmt_pmo_io_job *jobs = NULL;
	size_t count, total = 0;
	u64 t_io, nap = 0;
	u32 njobs = 0;
	u8 *bounce;
	int err = 0;

	*end = pos;
	if (pos < 0)
		return -EINVAL;
	if (pos >= pmo->bytes)
		return write && iov_iter_count(iter) ? -ENOSPC : 0;
	count = min_t(u64, iov_iter_count(iter), pmo->bytes - pos);
	if (!count)
		return 0;
	bounce = kmalloc(min_t(size_t, count, MMT_IO_CHUNK),
			 GFP_KERNEL_ACCOUNT);
	if (!bounce)
		return -ENOMEM;

	err = mmt_pmo_lock_io(pmo, write, nowait);
	if (err) {
		kfree(bounce);
		return err;
	}
	t_io = ktime_get_ns();
	jobs = mmt_pmo_io_jobs(pmo, pos, count, &njobs);
	if (jobs)
		err = mmt_pmo_rw_par(pmo, pos, count, iter, write, jobs, njobs,
				     &total);
	while (!jobs && total < count) {
		size_t want = min_t(size_t, count - total, MMT_IO_CHUNK);
		size_t n;

		if (total) {	/* between two steps */
			cond_resched();
			if (fatal_signal_pending(current)) {
				err = -EINTR;
				break;
			}
		}
		/* Cut @want at the MMT boundary before copying in. */
		want = min_t(u64, want, pmo->params.data_bytes -
			     ((pos + total) & (pmo->params.data_bytes - 1)));
		if (!pmo->crypto) {
			/* plain memory: the bytes as they are */
			n = mmt_pmo_plain_io(pmo, pos + total, iter, want,
					     write);
			total += n;
			if (n != want) {
				err = -EFAULT;
				break;
			}
			continue;
		}
		if (write && copy_from_iter(bounce, want, iter) != want) {
			err = -EFAULT;
			break;
		}
		err = mmt_pmo_io_step(pmo, pos + total, bounce, want, write,
				      &n);
		/* a failed read still returns the good bytes before it */
		if (!write && n && copy_to_iter(bounce, n, iter) != n) {
			err = -EFAULT;
			break;
		}
		total += n;
		if (err)
			break;
	}
	if (write && total && !nowait)	/* a migration's throttle */
		nap = mmt_mig_throttle(pmo, ktime_get_ns() - t_io);
	mutex_unlock(&pmo->lock);
	if (jobs)
		mmt_pmo_io_jobs_free(jobs, njobs);
	kfree_sensitive(bounce);
	mmt_mig_throttle_sleep(nap);

	if (write)
		atomic64_add(total, &mmt_stats.bytes_written);
	else
		atomic64_add(total, &mmt_stats.bytes_read);
	*end = pos + total;
	return total ? total : err;
}

/**
 * mmt_pmo_io() - pread() or pwrite() on a PMO fd (its read_iter and
 *	write_iter)
 * @iocb: the call: its file (the PMO fd), position (data offset, bytes;
 *	moved past the bytes done) and flags
 * @iter: the user's buffer
 * @write: pwrite() if true, pread() otherwise
 *
 * With IOCB_NOWAIT (a non-blocking io_uring attempt) a call that would
 * move bytes returns -EAGAIN at once, and io_uring retries it from a
 * worker that may wait.  Counts, steps and errors: uapi/mmt.h, the
 * comment on pread()/pwrite().
 *
 * Context: process; takes the PMO's lock (killable); may sleep.
 * Return: bytes read or written (short after a failed step or a fatal
 * signal between steps), 0 at or past the end for a read, or a negative
 * errno: -ENOSPC (a write at or past the end), -EPERM, -EUCLEAN,
 * -EBADMSG, -EFAULT, -EINTR, -ENOMEM, -EAGAIN (IOCB_NOWAIT), -EINVAL (a
 * negative position).
 */
ssize_t mmt_pmo_io(struct kiocb *iocb, struct iov_iter *iter, bool write)
{
	struct mmt_pmo *pmo = iocb->ki_filp->private_data;
	loff_t end;
	ssize_t ret;

	if ((iocb->ki_flags & IOCB_NOWAIT) && iov_iter_count(iter) &&
	    iocb->ki_pos >= 0 && iocb->ki_pos < pmo->bytes)
		return -EAGAIN;
	ret = mmt_pmo_rw(pmo, iocb->ki_pos, iter, write, false, &end);
	iocb->ki_pos = end;
	return ret;
}

/**
 * mmt_pmo_kwrite() - pwrite() from kernel memory (tests)
 * @pmo: the PMO
 * @pos: data offset
 * @buf: @len bytes
 * @len: bytes to write
 * @nowait: return -EAGAIN instead of waiting for a migration's handover
 *
 * The same path and policy as pwrite() on the PMO fd: a keyed PMO is
 * written through the controller; during the handover of a live
 * migration the call waits, interruptibly (docs/MIGRATION.md).
 *
 * Context: process; takes @pmo->lock (killable); may sleep.
 * Return: bytes written (fewer than @len if a fatal signal came between
 * two steps), or pwrite()'s errors (-EPERM for an INVALID MMT, e.g. after
 * a committed migration; -EUCLEAN after a migration of unknown outcome;
 * -EINTR; -EAGAIN with @nowait).
 */
int mmt_pmo_kwrite(struct mmt_pmo *pmo, u64 pos, const void *buf,
		   size_t len, bool nowait)
{
	struct kvec kv = { .iov_base = (void *)buf, .iov_len = len };
	struct iov_iter iter;
	loff_t end;

	iov_iter_kvec(&iter, WRITE, &kv, 1, len);
	return mmt_pmo_rw(pmo, pos, &iter, true, nowait, &end);
}

/**
 * mmt_pmo_kread() - pread() into kernel memory (tests)
 * @pmo: the PMO
 * @pos: data offset
 * @buf: (out) @len bytes
 * @len: bytes to read
 *
 * The same path as pread() on the PMO fd, I/O workers included.
 *
 * Context: process; takes @pmo->lock (killable); may sleep.
 * Return: bytes read (fewer than @len: the good bytes before a block that
 * fails verification, or the end of the PMO), or pread()'s errors
 * (-EBADMSG at the first byte, -EPERM, -EINTR).
 */
ssize_t mmt_pmo_kread(struct mmt_pmo *pmo, u64 pos, void *buf, size_t len)
{
	struct kvec kv = { .iov_base = buf, .iov_len = len };
	struct iov_iter iter;
	loff_t end;

	iov_iter_kvec(&iter, READ, &kv, 1, len);
	return mmt_pmo_rw(pmo, pos, &iter, false, false, &end);
}
