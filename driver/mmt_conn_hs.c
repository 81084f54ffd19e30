// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_conn_hs.c - a connection's hello (the rdma_cm private data),
 * the attested handshake over a new connection, and the continuous
 * attestation of a live one: credential renewals sent and checked, the
 * close at expiry (docs/ATTESTATION.md)
 */
#include <linux/kref.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/slab.h>
#include <linux/wait.h>

#include "mmt_proto.h"

/* ------------------------------------------------------------ hello */

/*
 * Fill a hello; return its length: 24 bytes (struct mmt_wire_hello) when
 * not @attested, as before attested mode existed, else 32 with the flag
 * and @err (a rejection's positive errno, or 0).
 */
u8 mmt_hello_fill(struct mmt_wire_hello_att *a, u64 conn_rand,
		  u64 accept_rand, bool attested, int err)
{
	struct mmt_wire_hello *h = &a->h;

	memset(a, 0, sizeof(*a));
	h->magic = cpu_to_le32(MMT_WIRE_HELLO_MAGIC);
	h->version = cpu_to_le16(MMT_WIRE_VERSION);
	h->node_id = cpu_to_le16(mmt_node_id());
	h->conn_rand = cpu_to_le64(conn_rand);
	h->accept_rand = cpu_to_le64(accept_rand);
	if (!attested && !err)
		return sizeof(*h);
	a->flags = cpu_to_le32(attested ? MMT_HELLO_ATTESTED : 0);
	a->err = cpu_to_le32(err);
	return sizeof(*a);
}

/*
 * Parse a hello: a connect request's (@accept_rand NULL: its accept_rand
 * must be 0) or an accept reply's.  @attested: whether the peer says it is
 * in attested mode (struct mmt_wire_hello_att; a 24-byte hello is not).
 * Return: 0, or -EPROTO (version or garbage).
 */
int mmt_hello_check(const void *data, u8 len, u16 *node,
		    u64 *conn_rand, u64 *accept_rand, bool *attested)
{
	struct mmt_wire_hello_att a = {};
	struct mmt_wire_hello *h = &a.h;

	if (!data || len < sizeof(*h))
		return -EPROTO;
	memcpy(&a, data, min_t(size_t, len, sizeof(a)));
	if (le32_to_cpu(h->magic) != MMT_WIRE_HELLO_MAGIC ||
	    le16_to_cpu(h->version) != MMT_WIRE_VERSION ||
	    (!accept_rand && h->accept_rand))
		return -EPROTO;
	*node = le16_to_cpu(h->node_id);
	*conn_rand = le64_to_cpu(h->conn_rand);
	if (accept_rand)
		*accept_rand = le64_to_cpu(h->accept_rand);
	*attested = le32_to_cpu(a.flags) & MMT_HELLO_ATTESTED;
	return 0;
}

/* ------------------------------------------------------------ handshake */

/*
 * The next handshake message (the caller kfree()s it), waiting until
 * @deadline (jiffies).  Return: 0; the connection's error once DEAD;
 * -ETIMEDOUT; -EINTR.
 */
int mmt_conn_hs_next(struct mmt_conn *conn, unsigned long deadline,
		     struct mmt_inbox_item **out)
{
	struct mmt_inbox_item *it;
	bool drained = false;
	long left;
	int err;

	for (;;) {
		it = mmt_inbox_pop(conn, &conn->hs_inbox);
		if (it) {
			*out = it;
			return 0;
		}
		if (mmt_conn_state(conn, &err) != MMT_CONN_DEAD)
			err = 0;
		if (err && !drained) {
			/*
			 * The peer's last message may still sit in the CQ
			 * (its disconnect overtook the completion): after
			 * the drain every completion has been handled.
			 */
			conn->fab->shutdown(conn);
			drained = true;
			continue;
		}
		if (err)
			return err;
		left = (long)(deadline - jiffies);
		if (left <= 0)
			return -ETIMEDOUT;
		left = wait_event_interruptible_timeout(conn->wq,
							mmt_inbox_ready(conn,
									&conn->hs_inbox),
							left);
		if (left < 0)
			return -EINTR;
	}
}

/*
 * Wait until every message this side posted has completed (the peer has
 * it), at most until @deadline: the caller may close the connection right
 * after, and the drain would flush a SEND still in flight (the peer's
 * handshake then saw its last message lost).  A connection that died
 * meanwhile (the peer, done, closed it at once) is no error.  Return: 0 or
 * -ETIMEDOUT.
 */
static int mmt_conn_sends_done(struct mmt_conn *conn, unsigned long deadline)
{
	long left = max_t(long, (long)(deadline - jiffies), 1);

	if (!wait_event_timeout(conn->wq, mmt_conn_sq_idle(conn), left))
		return -ETIMEDOUT;
	return 0;
}

/*
 * Wait until every message this side posted has completed, dead
 * connection or not, at most until @deadline, and say whether each did
 * so successfully since @failed0 (an earlier read of @msgs_failed): then
 * the peer's NIC has them.  A completed SEND is what counts, not the
 * connection's state: a peer that got our last message and closed the
 * connection at once may have done so before we look (its DISCONNECTED
 * overtakes nothing we need).  A peer gone silent leaves our SENDs to
 * the QP's retries, which end in an error.  Return: 0, -ETIMEDOUT, or
 * -ECONNRESET when one failed or was flushed.
 */
int mmt_conn_sends_ok(struct mmt_conn *conn, unsigned long deadline,
		      int failed0)
{
	long left = max_t(long, (long)(deadline - jiffies), 1);

	if (!wait_event_timeout(conn->wq, !atomic_read(&conn->msgs_out),
				left))
		return -ETIMEDOUT;
	return atomic_read(&conn->msgs_failed) != failed0 ? -ECONNRESET : 0;
}

/* A refusal's errno as the peer sent it: its own verdicts, else refused */
static int mmt_conn_hs_refusal(const struct mmt_msg *m)
{
	int err = m->wire_err;

	return err == -EKEYREJECTED || err == -EKEYEXPIRED ? err :
	       -ECONNREFUSED;
}

/*
 * Receive the peer's hello (MMT_MSG_HS_HELLO chunks) into a kmalloc'ed
 * buffer.  Return: 0 with *@out and *@len; -EKEYREJECTED for a length
 * that cannot hold a share and a credential (or above MMT_HS_HELLO_MAX);
 * -EPROTO for chunks out of order or inconsistent; the peer's refusal
 * (mmt_conn_hs_refusal()); mmt_conn_hs_next()'s errors; -ENOMEM.
 */
static int mmt_conn_hs_recv_hello(struct mmt_conn *conn,
				  unsigned long deadline, u8 **out, u32 *len)
{
	struct mmt_inbox_item *it;
	u32 got = 0, total = 0, off, tot;
	u64 n;
	u8 *buf = NULL;
	int err = 0;

	while (!err && (!total || got < total)) {
		err = mmt_conn_hs_next(conn, deadline, &it);
		if (err)
			break;
		if (it->msg.type != MMT_MSG_HS_HELLO) {
			/* a confirm before the hello ended: a refusal */
			err = it->msg.wire_err ? mmt_conn_hs_refusal(&it->msg) :
						 -EPROTO;
			kfree(it);
			break;
		}
		off = it->msg.index;
		tot = le32_to_cpu(it->msg.wire.closures);
		n = le64_to_cpu(it->msg.wire.bytes);
		if (!total) {
			if (tot <= MMT_X25519_BYTES + MMT_CRED_BODY_LEN ||
			    tot > MMT_HS_HELLO_MAX) {
				err = -EKEYREJECTED;
			} else {
				total = tot;
				buf = kmalloc(total, GFP_KERNEL);
				if (!buf)
					err = -ENOMEM;
			}
		}
		if (!err && (off != got || tot != total || !n ||
			     n > MMT_HS_CHUNK || n > total - got ||
			     it->msg.wire.nsegs * 16 < n))
			err = -EPROTO;
		if (!err) {
			memcpy(buf + got, it->msg.wire.segs, n);
			got += n;
		}
		kfree(it);
	}
	if (err) {
		kfree(buf);
		return err;
	}
	*out = buf;
	*len = total;
	return 0;
}

/*
 * Send @len bytes of @buf as messages of @type (MMT_MSG_HS_HELLO,
 * MMT_MSG_CRED) in chunks of at most MMT_HS_CHUNK bytes in @w's segs:
 * @index = offset, @closures = total length, @bytes = bytes in this chunk.
 * @w: a message buffer of the caller's.  Return: 0 or
 * the fabric's post_msg error.
 */
static int mmt_conn_send_chunks(struct mmt_conn *conn, struct mmt_wire_msg *w,
				u8 type, const u8 *buf, u32 len)
{
	u32 off, n;
	int err = 0;

	for (off = 0; !err && off < len; off += n) {
		n = min_t(u32, len - off, MMT_HS_CHUNK);
		memset(w, 0, sizeof(*w));
		w->type = type;
		w->index = cpu_to_le32(off);
		w->closures = cpu_to_le32(len);
		w->bytes = cpu_to_le64(n);
		w->nsegs = DIV_ROUND_UP(n, 16);
		memcpy(w->segs, buf + off, n);
		err = conn->fab->post_msg(conn, w);
	}
	return err;
}

/* ------------------------------------------------------------ renewal */

/*
 * An attested connection lasts as long as both credentials its two sides
 * hold of each other (docs/ATTESTATION.md "Renewal on a live
 * connection"): when a node installs a newer credential it sends it to the
 * peer of each live attested connection (MMT_MSG_CRED, mmt_conn_cred_tx()),
 * the peer checks it (mmt_attest_peer_renew()) and holds it from then on
 * (mmt_conn_cred_rx()); at the end of the validity of the credential a side
 * holds of the peer, or of the one the peer holds of it, the side closes
 * the connection (mmt_conn_expire()).  A node whose credential is not
 * renewed (the authority refused it, or revoked the node) so loses every
 * attested connection when it expires, on both sides.
 */

/* Seconds between two checks of the expiry, at most (the clock may jump). */
#define MMT_CONN_EXPIRE_RECHECK	600

/* The end of the connection's validity, UNIX seconds.  Caller holds lock. */
static u64 mmt_conn_valid_until(struct mmt_conn *conn)
{
	lockdep_assert_held(&conn->lock);
	return min(conn->peer_cred.not_after, conn->own_not_after);
}

/**
 * mmt_conn_expired() - whether an attested connection's validity has ended
 * @conn: the connection
 * @slack: seconds before the end that count as ended too: 0 for the
 *	expiry's own check; MMT_CONN_CLOCK_SLACK to name the reason of a
 *	close the peer made first (its clock may run ahead of this node's;
 *	both sides close at the expiry, each by its own clock)
 *
 * The last second of the validity counts as ended, so a close at the
 * expiry is seen as one.  @slack never keeps a connection open longer
 * or lets a credential verify: it only names why a connection that is
 * closing anyway ended (EKEYEXPIRED rather than ECONNRESET).
 *
 * Context: any (takes conn->lock).
 * Return: true if the handshake is done and the validity (less @slack)
 * has ended.
 */
bool mmt_conn_expired(struct mmt_conn *conn, u64 slack)
{
	unsigned long flags;
	bool ret;

	spin_lock_irqsave(&conn->lock, flags);
	ret = conn->hs_done &&
	      (u64)ktime_get_real_seconds() + slack >=
	      mmt_conn_valid_until(conn);
	spin_unlock_irqrestore(&conn->lock, flags);
	return ret;
}

/*
 * (Re)arm @expire_work for the end of the validity (one second after it:
 * the credential's last second is valid), or in MMT_CONN_EXPIRE_RECHECK
 * seconds if that is sooner; the queued work holds a reference.
 * Context: any (takes conn->lock).
 */
static void mmt_conn_expire_arm(struct mmt_conn *conn)
{
	u64 now = ktime_get_real_seconds(), end, delay = 0;
	unsigned long flags;

	spin_lock_irqsave(&conn->lock, flags);
	if (!conn->works_stopped && conn->hs_done) {
		end = mmt_conn_valid_until(conn);
		if (end >= now)
			delay = min_t(u64, end - now + 1,
				      MMT_CONN_EXPIRE_RECHECK);
		kref_get(&conn->ref);
		/* true: it was queued already, and holds its reference */
		if (mod_delayed_work(system_wq, &conn->expire_work,
				     delay * HZ))
			kref_put(&conn->ref, mmt_conn_free);	/* not last */
	}
	spin_unlock_irqrestore(&conn->lock, flags);
}

/*
 * Close an attested connection for its credentials: the reason (@err:
 * -EKEYEXPIRED, or -EKEYREJECTED for a renewal refused) is what its
 * transfers report; the peer sees the disconnect.  Context: process.
 */
static void mmt_conn_close_cred(struct mmt_conn *conn, int err)
{
	if (!mmt_conn_fail(conn, err))
		return;		/* closed already (the peer's close, say) */
	atomic64_inc(&mmt_stats.conns_expired);
	pr_info_ratelimited("conn %llx: node %u: %s: closed\n",
			    conn->conn_id, conn->peer_cred.node_id,
			    err == -EKEYEXPIRED ? "a credential expired" :
			    "its renewed credential was refused");
	conn->fab->shutdown(conn);
}

/* @expire_work: close the connection once a credential expired. */
void mmt_conn_expire(struct work_struct *work)
{
	struct mmt_conn *conn = container_of(to_delayed_work(work),
					     struct mmt_conn, expire_work);

	if (mmt_conn_state(conn, NULL) != MMT_CONN_DEAD) {
		if (mmt_conn_expired(conn, 0))
			mmt_conn_close_cred(conn, -EKEYEXPIRED);
		else
			mmt_conn_expire_arm(conn);	/* renewed, or early */
	}
	mmt_conn_put(conn);
}

/*
 * One MMT_MSG_CRED chunk of the renewal being assembled (the chunks of
 * MMT_MSG_HS_HELLO: @index = offset, @closures = total, @bytes = bytes
 * here).  Return: 1 when the renewal is complete, 0 for more, -EPROTO for
 * a malformed chunk, -ENOMEM.
 */
static int mmt_conn_cred_chunk(struct mmt_conn *conn, const struct mmt_msg *m)
{
	u32 off = m->index, tot = le32_to_cpu(m->wire.closures);
	u64 n = le64_to_cpu(m->wire.bytes);

	if (!conn->cred_buf) {
		if (off || tot <= MMT_CRED_BODY_LEN ||
		    tot > MMT_ATTEST_BLOB_MAX)
			return -EPROTO;
		conn->cred_buf = kmalloc(tot, GFP_KERNEL);
		if (!conn->cred_buf)
			return -ENOMEM;
		conn->cred_len = tot;
		conn->cred_got = 0;
	}
	if (off != conn->cred_got || tot != conn->cred_len || !n ||
	    n > MMT_HS_CHUNK || n > tot - off || m->wire.nsegs * 16 < n)
		return -EPROTO;
	memcpy(conn->cred_buf + off, m->wire.segs, n);
	conn->cred_got += n;
	return conn->cred_got == conn->cred_len;
}

/*
 * @cred_rx_work: the renewals the peer sent, in order, once the handshake
 * is done.  A renewal that verifies becomes the credential the connection
 * holds of the peer; one sent again (-ESTALE) is ignored, as is one that
 * arrives after this node left attested mode (-ENOKEY) or that could not
 * be checked for want of memory (the connection then ends at the old
 * expiry); any other refusal closes the connection.
 */
void mmt_conn_cred_rx(struct work_struct *work)
{
	struct mmt_conn *conn = container_of(work, struct mmt_conn,
					     cred_rx_work);
	struct mmt_inbox_item *it;
	struct mmt_cred peer;
	unsigned long flags;
	int err = 0;

	while (!err) {
		spin_lock_irqsave(&conn->lock, flags);
		it = conn->hs_done ?
		     list_first_entry_or_null(&conn->cred_inbox,
					      struct mmt_inbox_item, node) :
		     NULL;
		if (it) {
			list_del(&it->node);
			conn->inbox_len--;
		}
		peer = conn->peer_cred;
		spin_unlock_irqrestore(&conn->lock, flags);
		if (!it)
			break;
		err = mmt_conn_cred_chunk(conn, &it->msg);
		kfree(it);
		if (err <= 0)
			continue;
		err = mmt_attest_peer_renew(conn->cred_buf, conn->cred_len,
					    ktime_get_real_seconds(), &peer);
		kfree(conn->cred_buf);
		conn->cred_buf = NULL;
		if (!err) {
			spin_lock_irqsave(&conn->lock, flags);
			conn->peer_cred = peer;
			spin_unlock_irqrestore(&conn->lock, flags);
			atomic64_inc(&mmt_stats.creds_renewed);
			mmt_conn_expire_arm(conn);
		} else if (err == -ESTALE || err == -ENOKEY ||
			   err == -ENOMEM) {
			err = 0;
		}
	}
	/* a malformed chunk, or none could be kept: as a bad message */
	if (err == -EPROTO || err == -ENOMEM)
		mmt_conn_fail(conn, err);
	else if (err)
		mmt_conn_close_cred(conn, err);
	mmt_conn_put(conn);
}

/*
 * @cred_tx_work: send this node's credential to the peer if it is newer
 * than the one the peer holds, in MMT_MSG_CRED chunks; once posted, the
 * connection lasts as long as the new one.
 */
void mmt_conn_cred_tx(struct work_struct *work)
{
	struct mmt_conn *conn = container_of(work, struct mmt_conn,
					     cred_tx_work);
	struct mmt_wire_msg *w = NULL;
	struct mmt_cred c;
	unsigned long flags;
	u8 *file;
	u32 len;
	int err;

	err = mmt_attest_own_cred(&file, &len, &c);
	if (err || c.serial <= conn->own_serial ||
	    mmt_conn_state(conn, NULL) != MMT_CONN_LIVE)
		goto out;
	w = kzalloc(sizeof(*w), GFP_KERNEL);
	if (!w)
		goto out;
	err = mmt_conn_fault_cred(file, len);
	if (!err)
		err = mmt_conn_send_chunks(conn, w, MMT_MSG_CRED, file, len);
	if (!err) {
		conn->own_serial = c.serial;
		spin_lock_irqsave(&conn->lock, flags);
		conn->own_not_after = c.not_after;
		spin_unlock_irqrestore(&conn->lock, flags);
		atomic64_inc(&mmt_stats.creds_sent);
		mmt_conn_expire_arm(conn);
	}
out:
	kfree(w);
	kfree(file);
	mmt_conn_put(conn);
}

/**
 * mmt_conn_cred_renewed() - send this node's newly installed credential to
 *	the peer of every live attested connection
 *
 * Called after MMT_IOC_ATTEST_SET_CRED installed a credential; each
 * connection's @cred_tx_work sends it unless the peer holds it already.
 *
 * Context: process; takes mmt_conn_mutex.
 */
void mmt_conn_cred_renewed(void)
{
	struct mmt_conn *conn;
	unsigned long flags;

	mutex_lock(&mmt_conn_mutex);
	list_for_each_entry(conn, &mmt_conns, node) {
		spin_lock_irqsave(&conn->lock, flags);
		if (conn->hs_done && conn->state == MMT_CONN_LIVE)
			mmt_conn_queue(conn, &conn->cred_tx_work);
		spin_unlock_irqrestore(&conn->lock, flags);
	}
	mutex_unlock(&mmt_conn_mutex);
}

/*
 * mmt_conn_handshake() - the attested hello on a new connection, either
 * side (docs/ATTESTATION.md "The hello"; the crypto is mmt_handshake.c)
 *
 * Both sides send their hello (ephemeral share || credential) in chunks,
 * read the peer's, check its credential (signature, node id of the
 * rdma_cm hello, validity, binding), derive the handshake secret and the
 * tags, send their tag and check the peer's.  A side that refuses sends
 * a MMT_MSG_HS_CONFIRM carrying the errno, so the peer reports the same
 * reason (unauthenticated: it can only turn a failure into another).  On
 * success the connection id becomes mmt_hs_conn_id() and the handshake
 * secret is kept for MMT_IOC_CONN_SET_KEY.
 *
 * Context: process, before the connection's fd exists (connect) or is
 * handed out (accept); takes tx_mutex and rx_mutex (a teardown waits for
 * it, and wakes it by marking the connection DEAD); sleeps until
 * @timeout_ms (0: the default).
 * Return: 0; -ENOKEY without an own credential; -EKEYREJECTED for a peer
 * credential that does not verify or names another node id than the
 * rdma_cm hello, this node's own node id or node key (a reflection), a
 * node id bound to another key, a tag that does not
 * verify, a share of small order; -EKEYEXPIRED for an expired peer
 * credential; the peer's refusal (the same errnos, -ECONNREFUSED for
 * another); -EPROTO for a malformed handshake message; -ETIMEDOUT,
 * -EINTR, -ECONNRESET, -ENOMEM.  On error the connection is DEAD.
 */
int mmt_conn_handshake(struct mmt_conn *conn, u32 timeout_ms)
{
	unsigned long deadline = jiffies + mmt_timeout(timeout_ms);
	struct mmt_inbox_item *it;
	struct mmt_wire_msg *w;
	unsigned long flags;
	struct mmt_hs *hs;
	u8 *peer = NULL;
	u32 peer_len = 0;
	u16 hello_node = conn->peer_node;
	int err, serr;
	u64 id;

	hs = kzalloc(sizeof(*hs), GFP_KERNEL);
	w = kzalloc(sizeof(*w), GFP_KERNEL);
	if (!hs || !w) {
		kfree(hs);
		kfree(w);
		mmt_conn_fail(conn, -ENOMEM);
		return -ENOMEM;
	}
	mutex_lock(&conn->tx_mutex);
	mutex_lock(&conn->rx_mutex);
	err = mmt_attest_hs_start(hs, !conn->accepted, conn->conn_rand,
				  conn->accept_rand);
	if (!err)
		err = mmt_conn_send_chunks(conn, w, MMT_MSG_HS_HELLO, hs->own,
					   hs->own_len);
	if (!err)
		err = mmt_conn_hs_recv_hello(conn, deadline, &peer, &peer_len);
	if (!err)
		err = mmt_conn_fault_hs(hs, &peer, &peer_len, &hello_node);
	if (!err)
		err = mmt_hs_peer_hello(hs, peer, peer_len);
	if (!err)
		err = mmt_attest_hs_peer(hs, ktime_get_real_seconds(),
					 hello_node);
	if (!err)
		err = mmt_attest_hs_derive(hs);
	/* our tag, or our verdict on the peer */
	if (!err || err == -EKEYREJECTED || err == -EKEYEXPIRED) {
		memset(w, 0, sizeof(*w));
		w->type = MMT_MSG_HS_CONFIRM;
		if (err) {
			w->err = cpu_to_le32(-err);
		} else {
			w->nsegs = MMT_HS_SECRET_BYTES / 16;
			memcpy(w->segs, hs->tag_own, MMT_HS_SECRET_BYTES);
		}
		serr = conn->fab->post_msg(conn, w);
		if (!err)
			err = serr;
	}
	if (!err) {
		err = mmt_conn_hs_next(conn, deadline, &it);
		if (!err) {
			if (it->msg.type != MMT_MSG_HS_CONFIRM)
				err = -EPROTO;
			else if (it->msg.wire_err)
				err = mmt_conn_hs_refusal(&it->msg);
			else if (it->msg.wire.nsegs * 16 < MMT_HS_SECRET_BYTES)
				err = -EPROTO;
			else
				err = mmt_hs_confirm(hs, (u8 *)it->msg.wire.segs);
			kfree(it);
		}
	}
	/*
	 * Done: the peer's tag verified.  A peer that closed the connection
	 * at once (its accept or connect returned first) is no failure of
	 * the handshake: the fd is handed out, and using it reports the
	 * reset, as for any connection the peer closed.
	 */
	if (!err)
		err = mmt_conn_sends_done(conn, deadline);
	if (!err)
		err = mmt_hs_conn_id(hs, &id);
	if (!err) {
		spin_lock_irqsave(&conn->lock, flags);
		conn->conn_id = id;
		memcpy(conn->hs_secret, hs->secret, sizeof(conn->hs_secret));
		conn->peer_cred = hs->peer_cred;
		conn->own_not_after = hs->own_cred.not_after;
		conn->own_serial = hs->own_cred.serial;
		conn->hs_done = true;
		/*
		 * Renewals the peer sent before this point, and one this
		 * node installed after its hello left (both works do
		 * nothing otherwise)
		 */
		mmt_conn_queue(conn, &conn->cred_rx_work);
		mmt_conn_queue(conn, &conn->cred_tx_work);
		mmt_conn_queue(conn, &conn->query_work);
		spin_unlock_irqrestore(&conn->lock, flags);
		mmt_conn_expire_arm(conn);
		atomic64_inc(&mmt_stats.hs_done);
	} else {
		if (err == -EKEYREJECTED || err == -EKEYEXPIRED)
			atomic64_inc(&mmt_stats.hs_rejected);
		pr_info_ratelimited("conn %llx: attested handshake failed: %d\n",
				    conn->conn_id, err);
		/*
		 * Let what we sent (our tag, our verdict) reach the peer
		 * before the teardown's drain could flush it: the peer then
		 * reports the same reason, not a reset.
		 */
		wait_event_timeout(conn->wq, mmt_conn_sq_idle(conn), HZ);
		mmt_conn_fail(conn, err);
	}
	mutex_unlock(&conn->rx_mutex);
	mutex_unlock(&conn->tx_mutex);
	kfree(peer);
	mmt_hs_clear(hs);
	kfree(hs);
	kfree(w);
	return err;
}
