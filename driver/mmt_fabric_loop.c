// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_fabric_loop.c - the loopback fabric (driver/mmt_fabric.h): two
 * connections of one node joined back to back, so that the connection
 * protocol runs between two PMOs of this node exactly as it runs between
 * two nodes over RDMA
 *
 * A message is handed to the peer's mmt_conn_received() before the post
 * returns; a grant registers its area under a fresh 64-bit key, and a
 * closure's write copies into the areas its segments name, then hands the
 * notice to the peer's mmt_conn_notice().  What the sender writes is
 * checked as an RDMA NIC checks it: a segment whose key is not granted by
 * the peer now, or that runs past its area, is a remote access error that
 * fails both ends, as it breaks an RC QP; nothing of the write lands from
 * that segment on, and no notice.
 *
 * Model: drivers/nvme/target/loop.c (nvme_loop, one protocol over a fabric
 * that is a function call).
 *
 * Keys: a segment's key is its address's high 32 bits and its rkey (the
 * low 32 bits of the address are the offset into the area, which
 * mmt_loop_sink_alloc() keeps below 4 GiB).  Keys come from one 64-bit
 * counter per pair of connections, so no key is advertised twice on a
 * connection: a write that names a key revoked by mmt_loop_sink_invalidate()
 * never lands.
 *
 * Locking: link->grant_mutex protects the grant list and is held across
 * each copy into a granted area and its notice, so
 * mmt_loop_sink_invalidate() returns only once no write is landing;
 * link->lock (spinlock, taken inside grant_mutex) protects the ends and
 * their @down flags and is held across each delivery to the peer
 * (mmt_conn_received() and mmt_conn_notice() do not sleep), so once
 * mmt_loop_shutdown() has set @down under both, nothing more reaches
 * either end.
 */
#include <linux/bits.h>
#include <linux/err.h>
#include <linux/random.h>
#include <linux/refcount.h>
#include <linux/slab.h>

#include "mmt_fabric.h"
#include "mmt_proto.h"

/* Bytes a segment covers: its length is 32 bits on the wire. */
#define MMT_LOOP_SEG_MAX	BIT(30)
#define MMT_LOOP_OFF_MASK	0xffffffffULL

/* What the two ends of a loopback pair share. */
struct mmt_loop_link {
	refcount_t ref;			/* one per end not released */
	spinlock_t lock;		/* @end, each end's @down */
	struct mmt_loop_conn *end[2];
	struct mutex grant_mutex;	/* @grants, @next_key, the copies */
	struct list_head grants;	/* granted sinks of both ends */
	u64 next_key;
};

/* One end. */
struct mmt_loop_conn {
	struct mmt_conn conn;
	struct mmt_loop_link *link;
	unsigned int side;	/* 0 connecting, 1 accepting */
	bool down;		/* shut down: posts nothing, takes nothing */
	mmt_loop_wire_hook hook;	/* a test's, on what this end writes */
	void *hook_priv;
};

/* A sender's window slot. */
struct mmt_fab_src {
	struct mmt_conn *conn;
	const u8 *head;
	const u8 *fixed;
	size_t fixed_len;
	const u8 *body;		/* mapped with src_map until src_wait */
	size_t body_len;
};

/* A receiver's window slot. */
struct mmt_fab_sink {
	struct mmt_conn *conn;
	struct list_head node;	/* in link->grants while granted, else empty */
	size_t max_len;
	u8 *area;
	size_t len;
	u8 *head;
	u64 key;		/* the area's; the head's is @key + 1 */
};

static struct mmt_loop_conn *mmt_loop(struct mmt_conn *conn)
{
	return container_of(conn, struct mmt_loop_conn, conn);
}

/*
 * The peer of @conn, if neither end is shut down.  Caller holds
 * link->lock, which keeps the answer true until it drops it.
 */
static struct mmt_conn *mmt_loop_peer_locked(struct mmt_conn *conn)
{
	struct mmt_loop_conn *lc = mmt_loop(conn), *peer;

	lockdep_assert_held(&lc->link->lock);
	peer = lc->link->end[!lc->side];
	if (lc->down || !peer || peer->down)
		return NULL;
	return &peer->conn;
}

static int mmt_loop_post_msg(struct mmt_conn *conn,
			     const struct mmt_wire_msg *w)
{
	struct mmt_loop_link *link = mmt_loop(conn)->link;
	struct mmt_wire_msg *copy;
	struct mmt_conn *peer;
	unsigned long flags;

	copy = kmemdup(w, sizeof(*w), GFP_KERNEL);
	if (!copy)
		return -ENOMEM;
	copy->magic = cpu_to_le32(MMT_WIRE_MSG_MAGIC);
	spin_lock_irqsave(&link->lock, flags);
	peer = mmt_loop_peer_locked(conn);
	/* the peer's verdict on a malformed message is its own */
	if (peer)
		mmt_conn_received(peer, copy, sizeof(*copy));
	spin_unlock_irqrestore(&link->lock, flags);
	kfree(copy);
	if (!peer) {
		mmt_conn_fail(conn, -ECONNRESET);
		return -ECONNRESET;
	}
	return 0;
}

/* ------------------------------------------------------------ writes */

static struct mmt_fab_src *mmt_loop_src_alloc(struct mmt_conn *conn,
					      void *head, void *fixed,
					      size_t fixed_len)
{
	struct mmt_fab_src *s;

	s = kzalloc(sizeof(*s), GFP_KERNEL_ACCOUNT);
	if (!s)
		return ERR_PTR(-ENOMEM);
	s->conn = conn;
	s->head = head;
	s->fixed = fixed;
	s->fixed_len = fixed ? fixed_len : 0;
	return s;
}

static int mmt_loop_src_map(struct mmt_fab_src *s, void *body, size_t len)
{
	s->body = body;
	s->body_len = len;
	return 0;
}

/*
 * The peer's granted area that segment @seg names, checked against @len
 * bytes, or NULL.  Caller holds link->grant_mutex.
 */
static u8 *mmt_loop_target(struct mmt_loop_link *link, struct mmt_conn *peer,
			   const struct mmt_wire_seg *seg, bool head)
{
	u64 addr = le64_to_cpu(seg->addr);
	u64 key = (addr & ~MMT_LOOP_OFF_MASK) | le32_to_cpu(seg->rkey);
	u64 off = addr & MMT_LOOP_OFF_MASK;
	u32 len = le32_to_cpu(seg->len);
	struct mmt_fab_sink *k;

	lockdep_assert_held(&link->grant_mutex);
	list_for_each_entry(k, &link->grants, node) {
		if (k->conn != peer)
			continue;
		if (!head && k->key == key && off + len <= k->len)
			return k->area + off;
		if (head && k->head && k->key + 1 == key && !off &&
		    len == MMT_CONN_HEAD_BYTES)
			return k->head;
	}
	return NULL;
}

/*
 * Copy the write into the peer's granted areas (the segments in order,
 * then the head) and hand the peer the notice, unless an end is shut
 * down.  A segment the peer does not grant now ends the copy there: what
 * earlier segments put in place stays, as an RDMA write chain's first
 * writes may land before a remote access error.
 * Return: 0; -ECONNRESET (an end is shut down, or a remote access error:
 * *@access set).
 */
static int mmt_loop_copy(struct mmt_fab_src *s, const u8 *src,
			 const struct mmt_wire_seg *segs, u32 nsegs,
			 const struct mmt_wire_seg *head_seg, u32 notice,
			 struct mmt_conn **peer_out)
{
	struct mmt_loop_link *link = mmt_loop(s->conn)->link;
	struct mmt_conn *peer;
	unsigned long flags;
	int err = 0;
	u32 i;
	u8 *dst;

	mutex_lock(&link->grant_mutex);
	/* @down is set under grant_mutex too: stable until it is dropped */
	spin_lock_irqsave(&link->lock, flags);
	peer = mmt_loop_peer_locked(s->conn);
	if (peer)
		kref_get(&peer->ref);
	spin_unlock_irqrestore(&link->lock, flags);
	*peer_out = peer;
	if (!peer) {
		err = -ECONNRESET;
		goto out;
	}
	for (i = 0; i < nsegs; i++) {
		u32 n = le32_to_cpu(segs[i].len);

		dst = mmt_loop_target(link, peer, &segs[i], false);
		if (!dst) {
			err = -EFAULT;
			goto out;
		}
		memcpy(dst, src, n);
		if (mmt_loop(s->conn)->hook)
			mmt_loop(s->conn)->hook(mmt_loop(s->conn)->hook_priv,
						notice, dst, n);
		src += n;
	}
	if (head_seg) {
		dst = mmt_loop_target(link, peer, head_seg, true);
		if (!dst) {
			err = -EFAULT;
			goto out;
		}
		memcpy(dst, s->head, MMT_CONN_HEAD_BYTES);
	}
	spin_lock_irqsave(&link->lock, flags);
	mmt_conn_notice(peer, notice);
	spin_unlock_irqrestore(&link->lock, flags);
out:
	mutex_unlock(&link->grant_mutex);
	return err;
}

static int mmt_loop_src_write(struct mmt_fab_src *s, size_t len,
			      const struct mmt_wire_seg *segs, u32 nsegs,
			      const struct mmt_wire_seg *head_seg, u32 notice)
{
	const u8 *src = s->body ? s->body : s->fixed;
	size_t have = s->body ? s->body_len : s->fixed_len;
	struct mmt_conn *peer;
	u64 total = 0;
	u32 i;
	int err;

	if (!src || len > have || !head_seg != !s->head)
		return -EPROTO;
	for (i = 0; i < nsegs; i++) {
		if (!segs[i].len)
			return -EPROTO;
		total += le32_to_cpu(segs[i].len);
	}
	if (total != len)
		return -EPROTO;
	err = mmt_loop_copy(s, src, segs, nsegs, head_seg, notice, &peer);
	if (err == -EFAULT) {
		/* a remote access error breaks the connection at both ends */
		pr_info_ratelimited("conn %llx: loopback write to a segment not granted\n",
				    s->conn->conn_id);
		mmt_conn_fail(peer, -ECONNRESET);
		err = -ECONNRESET;
	}
	if (err)
		mmt_conn_fail(s->conn, -ECONNRESET);
	if (peer)
		mmt_conn_put(peer);
	return err;
}

static int mmt_loop_src_wait(struct mmt_fab_src *s, unsigned long timeout)
{
	/* every write completed (or failed) in src_write */
	s->body = NULL;
	s->body_len = 0;
	return 0;
}

static void mmt_loop_src_idle(struct mmt_fab_src *s)
{
}

static void mmt_loop_src_free(struct mmt_fab_src *s)
{
	kfree(s);
}

/* ------------------------------------------------------------ grants */

static struct mmt_fab_sink *mmt_loop_sink_alloc(struct mmt_conn *conn,
						size_t len, void *head)
{
	struct mmt_fab_sink *s;

	if (len > MMT_LOOP_OFF_MASK ||
	    DIV_ROUND_UP(len, MMT_LOOP_SEG_MAX) + !!head > MMT_WIRE_MAX_SEGS)
		return ERR_PTR(-E2BIG);
	s = kzalloc(sizeof(*s), GFP_KERNEL_ACCOUNT);
	if (!s)
		return ERR_PTR(-ENOMEM);
	s->conn = conn;
	s->max_len = len;
	s->head = head;
	INIT_LIST_HEAD(&s->node);
	return s;
}

/* Revoke @s's grant.  Caller holds link->grant_mutex. */
static void mmt_loop_revoke(struct mmt_fab_sink *s)
{
	list_del_init(&s->node);
}

static int mmt_loop_sink_grant(struct mmt_fab_sink *s, void *area,
			       size_t len, struct mmt_wire_msg *w)
{
	struct mmt_loop_link *link = mmt_loop(s->conn)->link;
	u32 nseg = 0;
	size_t off;
	u64 key;

	if (!len)
		return -EINVAL;
	if (len > s->max_len)
		return -E2BIG;
	mutex_lock(&link->grant_mutex);
	mmt_loop_revoke(s);
	key = link->next_key;
	link->next_key += 2;
	s->key = key;
	s->area = area;
	s->len = len;
	for (off = 0; off < len; off += MMT_LOOP_SEG_MAX, nseg++) {
		w->segs[nseg].addr = cpu_to_le64((key & ~MMT_LOOP_OFF_MASK) |
						 off);
		w->segs[nseg].rkey = cpu_to_le32(lower_32_bits(key));
		w->segs[nseg].len = cpu_to_le32(min_t(size_t, len - off,
						      MMT_LOOP_SEG_MAX));
	}
	if (s->head) {
		key++;
		w->segs[nseg].addr = cpu_to_le64(key & ~MMT_LOOP_OFF_MASK);
		w->segs[nseg].rkey = cpu_to_le32(lower_32_bits(key));
		w->segs[nseg].len = cpu_to_le32(MMT_CONN_HEAD_BYTES);
		w->head_seg = nseg++;
	}
	w->nsegs = nseg;
	list_add_tail(&s->node, &link->grants);
	mutex_unlock(&link->grant_mutex);
	return mmt_loop_post_msg(s->conn, w);
}

static int mmt_loop_sink_invalidate(struct mmt_fab_sink *s)
{
	struct mmt_loop_link *link = mmt_loop(s->conn)->link;

	mutex_lock(&link->grant_mutex);
	mmt_loop_revoke(s);
	mutex_unlock(&link->grant_mutex);
	return 0;
}

static void mmt_loop_sink_idle(struct mmt_fab_sink *s)
{
}

static void mmt_loop_sink_free(struct mmt_fab_sink *s)
{
	if (!s)
		return;
	mmt_loop_sink_invalidate(s);
	kfree(s);
}

/* ------------------------------------------------------------ life */

/*
 * Shut @conn down and fail its peer, as a disconnect does: once this
 * returns, no message, write or notice reaches either end.
 */
static void mmt_loop_shutdown(struct mmt_conn *conn)
{
	struct mmt_loop_conn *lc = mmt_loop(conn), *peer;
	struct mmt_loop_link *link = lc->link;
	unsigned long flags;

	mmt_conn_fail(conn, -ECONNRESET);
	mutex_lock(&link->grant_mutex);	/* a copy in progress finishes */
	spin_lock_irqsave(&link->lock, flags);
	lc->down = true;
	peer = link->end[!lc->side];
	if (peer)
		kref_get(&peer->conn.ref);
	spin_unlock_irqrestore(&link->lock, flags);
	mutex_unlock(&link->grant_mutex);
	if (peer) {
		mmt_conn_fail(&peer->conn, -ECONNRESET);
		mmt_conn_put(&peer->conn);
	}
}

/* Drop a reference to @link; the last frees it.  Context: any. */
static void mmt_loop_link_put(struct mmt_loop_link *link)
{
	if (refcount_dec_and_test(&link->ref)) {
		mutex_destroy(&link->grant_mutex);
		kfree(link);
	}
}

static void mmt_loop_destroy(struct mmt_conn *conn)
{
	struct mmt_loop_conn *lc = mmt_loop(conn);
	struct mmt_loop_link *link = lc->link;
	unsigned long flags;

	mmt_conn_stop_works(conn);
	mmt_conn_fail(conn, -ECONNRESET);	/* a transfer's waits end */
	mutex_lock(&conn->tx_mutex);	/* wait for a transfer to unwind */
	mutex_lock(&conn->rx_mutex);
	mmt_loop_shutdown(conn);
	mutex_unlock(&conn->rx_mutex);
	mutex_unlock(&conn->tx_mutex);
	spin_lock_irqsave(&link->lock, flags);
	link->end[lc->side] = NULL;
	spin_unlock_irqrestore(&link->lock, flags);
	mmt_conn_unlist(conn);
	mmt_conn_put(conn);
}

/* The last reference is gone: the end, then (the last end) the link. */
static void mmt_loop_release(struct mmt_conn *conn)
{
	struct mmt_loop_conn *lc = mmt_loop(conn);

	mmt_loop_link_put(lc->link);
	kfree(lc);
}

static const struct mmt_fabric_ops mmt_loop_fabric = {
	.name = "loopback",
	.post_msg = mmt_loop_post_msg,
	.src_alloc = mmt_loop_src_alloc,
	.src_map = mmt_loop_src_map,
	.src_write = mmt_loop_src_write,
	.src_wait = mmt_loop_src_wait,
	.src_idle = mmt_loop_src_idle,
	.src_free = mmt_loop_src_free,
	.sink_alloc = mmt_loop_sink_alloc,
	.sink_grant = mmt_loop_sink_grant,
	.sink_invalidate = mmt_loop_sink_invalidate,
	.sink_idle = mmt_loop_sink_idle,
	.sink_free = mmt_loop_sink_free,
	.shutdown = mmt_loop_shutdown,
	.destroy = mmt_loop_destroy,
	.release = mmt_loop_release,
};

/* A LIVE end of @link on @side, or NULL. */
static struct mmt_loop_conn *mmt_loop_end(struct mmt_loop_link *link,
					  unsigned int side)
{
	struct mmt_loop_conn *lc;

	lc = kzalloc(sizeof(*lc), GFP_KERNEL_ACCOUNT);
	if (!lc)
		return NULL;
	mmt_conn_setup(&lc->conn, &mmt_loop_fabric);
	lc->link = link;
	lc->side = side;
	lc->conn.accepted = side;
	lc->conn.peer_node = mmt_node_id();
	return lc;
}

/**
 * mmt_loop_set_hook() - a test's hook on the closures one end writes
 * @conn: an end of a loopback pair (mmt_loop_pair()), no transfer running
 * @hook: called with @priv, the write's notice (generation and closure
 *	index, as mmt_conn_notice() takes it), and each segment's bytes as
 *	they landed in the peer's granted area, before the notice; NULL:
 *	none
 * @priv: passed to @hook
 *
 * The hook is the wire: it may change, or replace, what landed (tamper,
 * replay), as an attacker on the network can.  It must not sleep (it is
 * called under the link's grant mutex, which does allow sleeping, but
 * blocks every copy and invalidation of the pair meanwhile).
 *
 * Context: process; the caller keeps transfers on @conn away meanwhile.
 */
void mmt_loop_set_hook(struct mmt_conn *conn, mmt_loop_wire_hook hook,
		       void *priv)
{
	mmt_loop(conn)->hook_priv = priv;
	mmt_loop(conn)->hook = hook;
}

/**
 * mmt_loop_pair() - two connections of this node joined back to back
 * @a: (out) the connecting end
 * @b: (out) the accepting end
 *
 * Both ends are LIVE, not attested, with one connection id derived from
 * two fresh nonces as a hello derives it (mmt_conn_id_derive()), and this
 * node's id as their peer's.  Each is its caller's to close with
 * conn->fab->destroy(); closing one fails the other (-ECONNRESET), as a
 * disconnect does.  The protocol runs over them unchanged
 * (driver/mmt_proto.h): MMT_IOC_SEND's and MMT_IOC_RECV's code, or a
 * migration's, on one end and its counterpart on the other, each in its
 * own task.
 *
 * Context: process; may sleep.
 * Return: 0, or -ENOMEM (nothing allocated).
 */
int mmt_loop_pair(struct mmt_conn **a, struct mmt_conn **b)
{
	struct mmt_loop_conn *end[2] = {};
	struct mmt_loop_link *link;
	unsigned long flags;
	u64 crand, arand;
	unsigned int i;

	link = kzalloc(sizeof(*link), GFP_KERNEL_ACCOUNT);
	if (!link)
		return -ENOMEM;
	refcount_set(&link->ref, 2);	/* the two ends, until released */
	spin_lock_init(&link->lock);
	mutex_init(&link->grant_mutex);
	INIT_LIST_HEAD(&link->grants);
	link->next_key = (u64)get_random_u32() << 1;
	for (i = 0; i < 2; i++) {
		end[i] = mmt_loop_end(link, i);
		if (!end[i])
			goto fail;
	}
	crand = get_random_u64();
	arand = get_random_u64();
	for (i = 0; i < 2; i++) {
		struct mmt_conn *conn = &end[i]->conn;

		conn->conn_rand = crand;
		conn->accept_rand = arand;
		conn->conn_id = mmt_conn_id_derive(crand, arand);
		link->end[i] = end[i];
		spin_lock_irqsave(&conn->lock, flags);
		mmt_conn_set_state(conn, MMT_CONN_CONNECTING, 0);
		mmt_conn_set_state(conn, MMT_CONN_LIVE, 0);
		spin_unlock_irqrestore(&conn->lock, flags);
	}
	*a = &end[0]->conn;
	*b = &end[1]->conn;
	return 0;

fail:
	for (i = 0; i < 2; i++) {
		if (end[i]) {
			mmt_conn_unlist(&end[i]->conn);
			mmt_conn_put(&end[i]->conn);
		}
	}
	mutex_destroy(&link->grant_mutex);
	kfree(link);
	return -ENOMEM;
}
