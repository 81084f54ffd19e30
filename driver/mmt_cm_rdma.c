// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_cm_rdma.c - rdma_cm: a connection's creation,
 * MMT_IOC_CONNECT (address and route resolution, connect, hello and
 * handshake), MMT_IOC_LISTEN and its listener fd (accept), the rdma_cm
 * event handler, and the ib_client that tears connections and listeners
 * down when their device goes away
 */
#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/memcontrol.h>
#include <linux/module.h>
#include <linux/nsproxy.h>
#include <linux/poll.h>
#include <linux/random.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/socket.h>
#include <linux/wait.h>
#include <net/net_namespace.h>
#include <rdma/ib_cm.h>

#include "mmt_rdma.h"

/* ------------------------------------------------------------ rdma_cm */

static LIST_HEAD(mmt_listeners);

static const struct file_operations mmt_listen_fops;

/* rdma_cm's connection parameters, carrying the hello @h of @len bytes. */
static void mmt_conn_param(struct rdma_conn_param *p,
			   const struct mmt_wire_hello_att *h, u8 len)
{
	memset(p, 0, sizeof(*p));
	p->private_data = h;
	p->private_data_len = len;
	p->flow_control = 1;
	p->retry_count = 7;
	p->rnr_retry_count = 7;
}

/*
 * Charged to the caller's memory cgroup (GFP_KERNEL_ACCOUNT): the process
 * of MMT_IOC_CONNECT; for a connection a listener takes in, made in
 * rdma_cm's event handler (a kernel thread of no group), the listener
 * owner's, set active by mmt_listener_request().
 */
static struct mmt_conn *mmt_conn_alloc(void)
{
	struct mmt_rdma_conn *rc;

	rc = kzalloc(sizeof(*rc), GFP_KERNEL_ACCOUNT);
	if (!rc)
		return NULL;
	INIT_LIST_HEAD(&rc->rm_node);
	INIT_LIST_HEAD(&rc->lnode);
	mutex_init(&rc->setup_mutex);
	mutex_init(&rc->post_mutex);
	INIT_DELAYED_WORK(&rc->start_work, mmt_rdma_start_again);
	mmt_conn_setup(&rc->conn, &mmt_rdma_fabric);
	return &rc->conn;
}

static int mmt_conn_cm_event(struct mmt_conn *conn, struct rdma_cm_id *id,
			     struct rdma_cm_event *ev)
{
	struct mmt_rdma_conn *rc = mmt_rdma(conn);
	unsigned long flags;
	u64 crand, arand;
	bool att;
	u16 node;
	int err;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		err = rdma_resolve_route(id, rc->timeout_ms);
		if (err)
			mmt_conn_fail(conn, -ENETUNREACH);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		spin_lock_irqsave(&conn->lock, flags);
		rc->routed = true;
		wake_up_all(&conn->wq);
		spin_unlock_irqrestore(&conn->lock, flags);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
		/* also when ARP/ND gave up (status -ETIMEDOUT): no host */
		mmt_conn_fail(conn, -EHOSTUNREACH);
		break;
	case RDMA_CM_EVENT_ROUTE_ERROR:
		mmt_conn_fail(conn, -ENETUNREACH);
		break;
	case RDMA_CM_EVENT_UNREACHABLE:
		mmt_conn_fail(conn, rc->listener ? -ECONNABORTED :
				    -EHOSTUNREACH);
		break;
	case RDMA_CM_EVENT_REJECTED:
		pr_info_ratelimited("conn %llx: %s: %s\n", conn->conn_id,
				    rc->listener ? "peer rejected our accept" :
				    "connect rejected",
				    rdma_reject_msg(id, ev->status));
		err = rc->listener ? -ECONNABORTED : -ECONNREFUSED;
		if (ev->status == IB_CM_REJ_CONSUMER_DEFINED) {
			u8 len = 0;
			const void *d = rdma_consumer_reject_data(id, ev, &len);
			struct mmt_wire_hello_att a = {};

			if (d && len >= sizeof(a.h)) {
				memcpy(&a, d, min_t(size_t, len, sizeof(a)));
				if (le32_to_cpu(a.h.magic) ==
				    MMT_WIRE_HELLO_MAGIC &&
				    le16_to_cpu(a.h.version) != MMT_WIRE_VERSION)
					err = -EPROTO;
				/* the modes differ (struct mmt_wire_hello_att) */
				else if (le32_to_cpu(a.h.magic) ==
					 MMT_WIRE_HELLO_MAGIC &&
					 le32_to_cpu(a.err) == EKEYREJECTED)
					err = -EKEYREJECTED;
			}
		}
		mmt_conn_fail(conn, err);
		break;
	case RDMA_CM_EVENT_CONNECT_ERROR:
		mmt_conn_fail(conn, rc->listener ? -ECONNABORTED :
				    -ECONNREFUSED);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (!rc->listener) {
			err = mmt_hello_check(ev->param.conn.private_data,
					      ev->param.conn.private_data_len,
					      &node, &crand, &arand, &att);
			if (!err && crand != conn->conn_rand)
				err = -EPROTO;
			if (!err && att != conn->attested)
				err = -EKEYREJECTED;
			if (err) {
				mmt_conn_fail(conn, err);
				break;
			}
			conn->peer_node = node;
			conn->accept_rand = arand;
			conn->conn_id = mmt_conn_id_derive(crand, arand);
		}
		set_bit(MMT_CONN_WAS_LIVE, &rc->stages);
		/* test builds: the connection died before it entered LIVE */
		if (!rc->listener && mmt_conn_fault_established())
			mmt_conn_fail(conn, -EPROTO);
		/*
		 * iWARP: the connecting side's first message, before the
		 * user can post anything (mmt_conn.h, MMT_MSG_START); a
		 * failed post fails the connection, and LIVE is refused.
		 */
		if (!rc->listener && rc->iwarp)
			mmt_rdma_send_start(conn);
		spin_lock_irqsave(&conn->lock, flags);
		err = mmt_conn_set_state(conn, MMT_CONN_LIVE, 0);
		spin_unlock_irqrestore(&conn->lock, flags);
		if (!err && rc->listener) {
			if (rc->iwarp)
				mmt_rdma_half_ready(conn);
			else
				mmt_listener_ready(conn);
		}
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		/*
		 * At the expiry both sides close, and the peer's close may
		 * come first: the reason, not a reset, and counted once
		 */
		if (!mmt_conn_expired(conn, MMT_CONN_CLOCK_SLACK))
			mmt_conn_fail(conn, -ECONNRESET);
		else if (mmt_conn_fail(conn, -EKEYEXPIRED))
			atomic64_inc(&mmt_stats.conns_expired);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		/*
		 * The ib_client's remove() ran first and released whatever
		 * this connection had on the device.  An id with nothing
		 * else on the device (still resolving) is handed back to
		 * rdma_cm to destroy, so the removal never waits for us.
		 */
		mmt_conn_fail(conn, -ECONNRESET);
		mutex_lock(&rc->setup_mutex);
		if (rc->cm_id == id &&
		    !test_bit(MMT_CONN_ALLOCATED, &rc->stages)) {
			rc->cm_id = NULL;
			err = 1;
		} else {
			err = 0;
		}
		mutex_unlock(&rc->setup_mutex);
		return err;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
	default:
		break;
	}
	return 0;
}

static int mmt_listener_request(struct mmt_listener *l, struct rdma_cm_id *id,
				struct rdma_cm_event *ev);

static int mmt_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct mmt_cm_ctx *ctx = id->context;

	pr_debug("cm event %s (%d) on %p\n", rdma_event_msg(ev->event),
		 ev->status, id);
	if (ctx->listener) {
		struct mmt_listener *l = container_of(ctx, struct mmt_listener,
						      ctx);

		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
			return mmt_listener_request(l, id, ev);
		if (ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL) {
			unsigned long flags;
			int owned;

			/* A bound listener: rdma_cm destroys the id. */
			mutex_lock(&l->mutex);
			owned = l->cm_id == id;
			if (owned)
				l->cm_id = NULL;
			mutex_unlock(&l->mutex);
			spin_lock_irqsave(&l->lock, flags);
			l->dead = true;
			wake_up_all(&l->wq);
			spin_unlock_irqrestore(&l->lock, flags);
			return owned;
		}
		return 0;
	}
	return mmt_conn_cm_event(&container_of(ctx, struct mmt_rdma_conn,
					       ctx)->conn, id,
				 ev);
}

/*
 * Reject a connect request with our hello as reject data; @err a positive
 * errno for the connecting side (EKEYREJECTED: the modes differ), or 0.
 */
static void mmt_reject(struct rdma_cm_id *id, int err)
{
	struct mmt_wire_hello_att a;
	u8 len;

	len = mmt_hello_fill(&a, 0, 0, mmt_attest_mode(), err);
	rdma_reject(id, &a, len, IB_CM_REJ_CONSUMER_DEFINED);
}

/*
 * CONNECT_REQUEST on a new id: check the hello and the backlog, build the
 * connection and accept.  A non-zero return makes rdma_cm destroy @id.
 */
static int mmt_listener_request(struct mmt_listener *l, struct rdma_cm_id *id,
				struct rdma_cm_event *ev)
{
	struct rdma_conn_param param;
	struct mmt_wire_hello_att h;
	struct mem_cgroup *old_memcg;
	struct mmt_conn *conn;
	struct mmt_rdma_conn *rc;
	unsigned long flags;
	u64 crand, arand;
	bool att, ours;
	u32 state;
	u16 node;
	u8 len;
	int err;

	err = mmt_hello_check(ev->param.conn.private_data,
			      ev->param.conn.private_data_len, &node, &crand,
			      NULL, &att);
	if (err) {
		pr_info_ratelimited("rejecting a peer: bad hello\n");
		mmt_reject(id, 0);
		return err;
	}
	state = mmt_attest_state();
	ours = state != MMT_ATTEST_OFF;
	if (att != ours) {
		pr_info_ratelimited("rejecting a peer: %s\n", ours ?
				    "not in attested mode" :
				    "in attested mode, this node is not");
		atomic64_inc(&mmt_stats.hs_rejected);
		mmt_reject(id, EKEYREJECTED);
		return -EKEYREJECTED;
	}
	if (ours && state != MMT_ATTEST_ATTESTED) {
		pr_info_ratelimited("rejecting a peer: attested mode, no credential installed yet\n");
		mmt_reject(id, 0);
		return -ENOKEY;
	}
	spin_lock_irqsave(&l->lock, flags);
	if (l->dead || l->count >= l->backlog)
		err = -ECONNREFUSED;
	else
		l->count++;
	spin_unlock_irqrestore(&l->lock, flags);
	if (err) {
		mmt_reject(id, 0);
		return err;
	}
	/*
	 * This runs in rdma_cm's handler, a kernel thread: what the
	 * connection holds is charged to the listener owner's group.
	 */
	old_memcg = set_active_memcg(l->memcg);
	conn = mmt_conn_alloc();
	set_active_memcg(old_memcg);
	if (!conn) {
		err = -ENOMEM;
		goto err_count;
	}
	rc = mmt_rdma(conn);
	rc->listener = l;
	conn->accepted = true;
	/* our fresh nonce: the id is new even for a replayed hello */
	arand = get_random_u64();
	conn->conn_rand = crand;
	conn->accept_rand = arand;
	conn->attested = ours;
	conn->conn_id = mmt_conn_id_derive(crand, arand);
	conn->peer_node = node;
	memcpy(&rc->peer, &id->route.addr.dst_addr, sizeof(rc->peer));
	spin_lock_irqsave(&conn->lock, flags);
	mmt_conn_set_state(conn, MMT_CONN_CONNECTING, 0);
	spin_unlock_irqrestore(&conn->lock, flags);

	mutex_lock(&rc->setup_mutex);
	old_memcg = set_active_memcg(l->memcg);
	err = mmt_rdma_create_qp(conn, id);
	set_active_memcg(old_memcg);
	if (err) {
		mutex_unlock(&rc->setup_mutex);
		goto err_conn;
	}
	rc->cm_id = id;
	id->context = &rc->ctx;
	spin_lock_irqsave(&l->lock, flags);
	list_add_tail(&rc->lnode, &l->pending);
	spin_unlock_irqrestore(&l->lock, flags);
	len = mmt_hello_fill(&h, crand, arand, ours, 0);
	mmt_conn_param(&param, &h, len);
	err = rdma_accept(id, &param);
	if (!err)
		set_bit(MMT_CONN_CONNECT_SENT, &rc->stages);
	mutex_unlock(&rc->setup_mutex);
	if (err)
		mmt_conn_fail(conn, -ECONNABORTED);	/* reaped by accept */
	return 0;

err_conn:
	mmt_conn_unlist(conn);
	mmt_conn_put(conn);
err_count:
	spin_lock_irqsave(&l->lock, flags);
	l->count--;
	spin_unlock_irqrestore(&l->lock, flags);
	mmt_reject(id, 0);
	return err;
}

/* ------------------------------------------------------------ addresses */

static int mmt_addr_in(const struct mmt_conn_addr *a,
		       struct sockaddr_storage *ss, bool listen)
{
	memset(ss, 0, sizeof(*ss));
	if (!a->port && !listen)
		return -EINVAL;
	if (a->family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		if (a->scope_id || memchr_inv(a->addr + 4, 0, 12))
			return -EINVAL;
		sin->sin_family = AF_INET;
		sin->sin_port = htons(a->port);
		memcpy(&sin->sin_addr, a->addr, 4);
		return 0;
	}
	if (a->family == AF_INET6) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(a->port);
		sin6->sin6_scope_id = a->scope_id;
		memcpy(&sin6->sin6_addr, a->addr, 16);
		return 0;
	}
	return -EINVAL;
}

static void mmt_addr_out(const struct sockaddr_storage *ss,
			 struct mmt_conn_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const void *)ss;

		a->family = AF_INET;
		a->port = ntohs(sin->sin_port);
		memcpy(a->addr, &sin->sin_addr, 4);
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const void *)ss;

		a->family = AF_INET6;
		a->port = ntohs(sin6->sin6_port);
		a->scope_id = sin6->sin6_scope_id;
		memcpy(a->addr, &sin6->sin6_addr, 16);
	}
}

static bool mmt_conn_routed(struct mmt_conn *conn)
{
	return READ_ONCE(mmt_rdma(conn)->routed) ||
	       mmt_conn_state(conn, NULL) == MMT_CONN_DEAD;
}

static bool mmt_conn_connected(struct mmt_conn *conn)
{
	return mmt_conn_state(conn, NULL) != MMT_CONN_CONNECTING;
}

/*
 * Give a new fd for @conn to the user (MMT_IOC_CONNECT / _ACCEPT).  On
 * error the caller still owns @conn (and destroys it): the result is
 * copied out before the file exists, since the file's release would
 * destroy @conn too (and it did, after the caller: a use after free).
 */
static int mmt_conn_install(struct mmt_conn *conn, struct mmt_connect *c,
			    void __user *uarg, u32 usize)
{
	struct file *file;
	int fd, flags;

	flags = O_RDWR | ((c->flags & MMT_CONN_CLOEXEC) ? O_CLOEXEC : 0);
	fd = get_unused_fd_flags(flags);
	if (fd < 0)
		return fd;
	c->size = sizeof(*c);
	c->fd = fd;
	c->peer_node = conn->peer_node;
	if (mmt_copy_out(uarg, c, sizeof(*c), usize)) {
		put_unused_fd(fd);
		return -EFAULT;
	}
	file = anon_inode_getfile("[mmt-conn]", &mmt_conn_fops, conn, flags);
	if (IS_ERR(file)) {
		put_unused_fd(fd);
		return PTR_ERR(file);
	}
	fd_install(fd, file);
	return 0;
}

static int mmt_connect_args(struct mmt_connect *c, void __user *uarg,
			    u32 *usize)
{
	int err;

	err = mmt_copy_in(c, sizeof(*c), uarg, MMT_CONNECT_SIZE_VER0, usize);
	if (err)
		return err;
	if ((c->flags & ~MMT_CONN_CLOEXEC) || c->fd || c->peer_node ||
	    c->reserved0 || c->reserved1 || c->reserved[0] || c->reserved[1] ||
	    c->timeout_ms > 600000)
		return -EINVAL;
	return 0;
}

/**
 * mmt_conn_connect_failed() - log a connect that never reached LIVE
 * @conn: the connecting side's connection
 * @err: MMT_IOC_CONNECT's error
 *
 * Says which device and fabric the connect tried.  rdma_cm cannot join
 * RoCE and iWARP (the IB CM's request over UDP is not answered by an
 * iWARP node: ETIMEDOUT or EHOSTUNREACH; an iWARP node's TCP connection
 * is refused by a RoCE node: ECONNREFUSED), so a mixed pair ends here
 * with a line that names the likely cause.  Nothing for other errors or
 * before a route chose a device.
 *
 * Context: process.
 */
static void mmt_conn_connect_failed(struct mmt_conn *conn, int err)
{
	struct mmt_rdma_conn *rc = mmt_rdma(conn);

	if (!rc->dev || (err != -ETIMEDOUT && err != -ECONNREFUSED &&
			 err != -EHOSTUNREACH && err != -ECONNRESET))
		return;
	pr_info_ratelimited("conn %llx: connect over %s (%s) failed: %d; the peer must listen on the same fabric (RoCE and iWARP do not meet)\n",
			    conn->conn_id, dev_name(&rc->dev->dev),
			    rc->iwarp ? "iWARP" : "RoCE", err);
}

/**
 * mmt_conn_connect() - MMT_IOC_CONNECT
 * @uarg: user pointer to struct mmt_connect
 *
 * Context: process; sleeps up to the timeout.
 * Return: 0 (the fd is in the argument); the errors listed in uapi/mmt.h.
 */
int mmt_conn_connect(void __user *uarg)
{
	struct rdma_conn_param param;
	struct sockaddr_storage dst;
	struct mmt_wire_hello_att h;
	struct rdma_cm_id *id;
	struct mmt_connect c;
	struct mmt_conn *conn;
	struct mmt_rdma_conn *rc;
	unsigned long flags;
	u32 usize, state;
	long left;
	int err, cerr;
	u8 len;

	err = mmt_connect_args(&c, uarg, &usize);
	if (err)
		return err;
	err = mmt_addr_in(&c.addr, &dst, false);
	if (err)
		return err;
	state = mmt_attest_state();
	if (state == MMT_ATTEST_WAITING)
		return -ENOKEY;		/* attested mode, no credential */
	conn = mmt_conn_alloc();
	if (!conn)
		return -ENOMEM;
	rc = mmt_rdma(conn);
	conn->conn_rand = get_random_u64();
	conn->conn_id = conn->conn_rand;	/* logs, until established */
	conn->attested = state == MMT_ATTEST_ATTESTED;
	rc->timeout_ms = c.timeout_ms ? c.timeout_ms : MMT_DEFAULT_TIMEOUT_MS;
	memcpy(&rc->peer, &dst, sizeof(dst));

	id = rdma_create_id(current->nsproxy->net_ns, mmt_cm_handler,
			    &rc->ctx, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id)) {
		err = PTR_ERR(id);
		goto out_destroy;
	}
	mutex_lock(&rc->setup_mutex);
	rc->cm_id = id;
	mutex_unlock(&rc->setup_mutex);
	spin_lock_irqsave(&conn->lock, flags);
	mmt_conn_set_state(conn, MMT_CONN_RESOLVING, 0);
	spin_unlock_irqrestore(&conn->lock, flags);

	err = rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst,
				rc->timeout_ms);
	if (err) {
		err = err == -ENODEV ? -EHOSTUNREACH : err;
		goto out_destroy;
	}
	/* rdma_cm reports its own timeouts first (ADDR/ROUTE_ERROR) */
	left = wait_event_interruptible_timeout(conn->wq, mmt_conn_routed(conn),
						mmt_timeout(c.timeout_ms) + HZ);
	err = left < 0 ? -EINTR : !left ? -ETIMEDOUT : 0;
	if (!err && mmt_conn_state(conn, &cerr) == MMT_CONN_DEAD)
		err = cerr;
	if (err)
		goto out_destroy;

	/*
	 * Not setup_mutex across rdma_connect(): it takes the id's
	 * handler_mutex, and our rdma_cm handlers take setup_mutex under it
	 * (lockdep: a circular dependency).  tx_mutex keeps a teardown (device
	 * removal: the only one before the fd exists) from destroying the QP
	 * under rdma_connect() and from reading the stage bits meanwhile.
	 */
	mutex_lock(&conn->tx_mutex);
	mutex_lock(&rc->setup_mutex);
	err = rc->cm_id ? mmt_rdma_create_qp(conn, id) : -ECONNRESET;
	if (!err) {
		spin_lock_irqsave(&conn->lock, flags);
		err = mmt_conn_set_state(conn, MMT_CONN_CONNECTING, 0);
		spin_unlock_irqrestore(&conn->lock, flags);
		if (err)
			err = conn->err;
	}
	mutex_unlock(&rc->setup_mutex);
	if (!err) {
		len = mmt_hello_fill(&h, conn->conn_rand, 0, conn->attested, 0);
		mmt_conn_param(&param, &h, len);
		err = rdma_connect(id, &param);
		if (!err)
			set_bit(MMT_CONN_CONNECT_SENT, &rc->stages);
	}
	mutex_unlock(&conn->tx_mutex);
	if (err)
		goto out_destroy;

	left = wait_event_interruptible_timeout(conn->wq,
						mmt_conn_connected(conn),
						mmt_timeout(c.timeout_ms));
	err = left < 0 ? -EINTR : !left ? -ETIMEDOUT : 0;
	if (!err && mmt_conn_reached_live(conn))
		mmt_conn_fault_hold(conn, false);
	/*
	 * Established (it entered LIVE), so it is handed out even if the
	 * peer has closed it since (as connect(2) does, and MMT_IOC_ACCEPT):
	 * a listener that accepts and closes at once may beat this thread to
	 * the check, and using the fd reports the reset.  Not a connection
	 * that died before it entered LIVE (WAS_LIVE may be set on it): its
	 * error is returned.  Not in attested mode: the handshake below has
	 * not run, and fails on a dead connection.
	 */
	if (!err && mmt_conn_state(conn, &cerr) != MMT_CONN_LIVE &&
	    (conn->attested || !mmt_conn_reached_live(conn)))
		err = cerr;
	if (!err && conn->attested)
		err = mmt_conn_handshake(conn, c.timeout_ms);
	if (err)
		goto out_destroy;

	mmt_addr_out(&rc->peer, &c.addr);
	err = mmt_conn_install(conn, &c, uarg, usize);
	if (err)
		goto out_destroy;
	return 0;

out_destroy:
	/* siw refuses in rdma_connect() itself: ECONNREFUSED */
	if (!mmt_conn_reached_live(conn))
		mmt_conn_connect_failed(conn, err);
	mmt_rdma_destroy(conn);
	return err;
}

/* ------------------------------------------------------------ listener */

static void mmt_listener_kill(struct mmt_listener *l)
{
	struct rdma_cm_id *id;
	unsigned long flags;

	mutex_lock(&l->mutex);
	id = l->cm_id;
	l->cm_id = NULL;
	mutex_unlock(&l->mutex);
	if (id)
		rdma_destroy_id(id);
	spin_lock_irqsave(&l->lock, flags);
	l->dead = true;
	wake_up_all(&l->wq);
	spin_unlock_irqrestore(&l->lock, flags);
}

/* Take the first connection of @list off the listener, or NULL. */
static struct mmt_conn *mmt_listener_take(struct mmt_listener *l,
					  struct list_head *list,
					  bool dead_only)
{
	struct mmt_conn *found = NULL;
	struct mmt_rdma_conn *rc;
	unsigned long flags;

	spin_lock_irqsave(&l->lock, flags);
	list_for_each_entry(rc, list, lnode) {
		if (dead_only &&
		    mmt_conn_state(&rc->conn, NULL) != MMT_CONN_DEAD)
			continue;
		list_del_init(&rc->lnode);
		l->count--;
		found = &rc->conn;
		break;
	}
	spin_unlock_irqrestore(&l->lock, flags);
	return found;
}

static int mmt_listen_release(struct inode *inode, struct file *file)
{
	struct mmt_listener *l = file->private_data;
	struct mmt_conn *conn;

	mmt_listener_kill(l);	/* no new requests after this */
	while ((conn = mmt_listener_take(l, &l->pending, false)))
		mmt_rdma_destroy(conn);
	while ((conn = mmt_listener_take(l, &l->ready, false)))
		mmt_rdma_destroy(conn);
	mutex_lock(&mmt_conn_mutex);
	list_del(&l->node);
	mutex_unlock(&mmt_conn_mutex);
	mutex_destroy(&l->mutex);
	mem_cgroup_put(l->memcg);
	kfree(l);
	return 0;
}

static __poll_t mmt_listen_poll(struct file *file, poll_table *wait)
{
	struct mmt_listener *l = file->private_data;
	unsigned long flags;
	__poll_t mask = 0;

	poll_wait(file, &l->wq, wait);
	spin_lock_irqsave(&l->lock, flags);
	if (!list_empty(&l->ready))
		mask |= EPOLLIN | EPOLLRDNORM;
	if (l->dead)
		mask |= EPOLLERR | EPOLLHUP;
	spin_unlock_irqrestore(&l->lock, flags);
	return mask;
}

static bool mmt_listener_has(struct mmt_listener *l)
{
	unsigned long flags;
	bool ret;

	spin_lock_irqsave(&l->lock, flags);
	ret = !list_empty(&l->ready) || l->dead;
	spin_unlock_irqrestore(&l->lock, flags);
	return ret;
}

/* MMT_IOC_ACCEPT: see uapi/mmt.h. */
static int mmt_listen_accept(struct mmt_listener *l, void __user *uarg)
{
	struct mmt_connect c;
	struct mmt_conn *conn;
	long left;
	u32 usize;
	int err;

	err = mmt_connect_args(&c, uarg, &usize);
	if (err)
		return err;
	if (memchr_inv(&c.addr, 0, sizeof(c.addr)))
		return -EINVAL;
	/* Reap requests that failed during the handshake. */
	while ((conn = mmt_listener_take(l, &l->pending, true)))
		mmt_rdma_destroy(conn);

	left = wait_event_interruptible_timeout(l->wq, mmt_listener_has(l),
						mmt_timeout(c.timeout_ms));
	if (left < 0)
		return -EINTR;
	if (!left)
		return -ETIMEDOUT;
	conn = mmt_listener_take(l, &l->ready, false);
	if (!conn)
		return -ECONNABORTED;	/* the listener's device went away */
	/*
	 * Established, so it is handed out even if the peer has gone
	 * since (as accept(2) does): using it reports the reset.  In
	 * attested mode the accepting side's half of the handshake runs
	 * here, in the caller's context; a failed one ends the connection.
	 */
	if (conn->attested) {
		err = mmt_conn_handshake(conn, c.timeout_ms);
		if (err) {
			mmt_rdma_destroy(conn);
			return err;
		}
	}
	mmt_addr_out(&mmt_rdma(conn)->peer, &c.addr);
	err = mmt_conn_install(conn, &c, uarg, usize);
	if (err)
		mmt_rdma_destroy(conn);
	return err;
}

static long mmt_listen_ioctl(struct file *file, unsigned int cmd,
			     unsigned long arg)
{
	if (cmd != MMT_IOC_ACCEPT)
		return -ENOTTY;
	return mmt_listen_accept(file->private_data, (void __user *)arg);
}

static const struct file_operations mmt_listen_fops = {
	.owner = THIS_MODULE,
	.release = mmt_listen_release,
	.unlocked_ioctl = mmt_listen_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.poll = mmt_listen_poll,
	.llseek = noop_llseek,
};

/**
 * mmt_conn_listen() - MMT_IOC_LISTEN
 * @uarg: user pointer to struct mmt_listen
 *
 * Context: process; may sleep.
 * Return: 0 (the fd is in the argument); the errors listed in uapi/mmt.h.
 */
int mmt_conn_listen(void __user *uarg)
{
	struct sockaddr_storage ss;
	struct mmt_listener *l;
	struct rdma_cm_id *id;
	struct mmt_listen a;
	struct file *file;
	int fd, flags, err;
	u32 usize;

	err = mmt_copy_in(&a, sizeof(a), uarg, MMT_LISTEN_SIZE_VER0, &usize);
	if (err)
		return err;
	if ((a.flags & ~MMT_CONN_CLOEXEC) || a.fd || a.backlog > 128 ||
	    a.reserved[0] || a.reserved[1] || !a.addr.port)
		return -EINVAL;
	err = mmt_addr_in(&a.addr, &ss, true);
	if (err)
		return err;
	l = kzalloc(sizeof(*l), GFP_KERNEL_ACCOUNT);
	if (!l)
		return -ENOMEM;
	l->ctx.listener = true;
	mutex_init(&l->mutex);
	spin_lock_init(&l->lock);
	INIT_LIST_HEAD(&l->pending);
	INIT_LIST_HEAD(&l->ready);
	init_waitqueue_head(&l->wq);
	l->backlog = a.backlog ? a.backlog : MMT_DEFAULT_BACKLOG;
	/* put by the listener's release, after its id is destroyed */
	l->memcg = get_mem_cgroup_from_mm(current->mm);
	mutex_lock(&mmt_conn_mutex);
	list_add_tail(&l->node, &mmt_listeners);
	mutex_unlock(&mmt_conn_mutex);

	id = rdma_create_id(current->nsproxy->net_ns, mmt_cm_handler, &l->ctx,
			    RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id)) {
		err = PTR_ERR(id);
		goto err_free;
	}
	mutex_lock(&l->mutex);
	l->cm_id = id;
	mutex_unlock(&l->mutex);
	err = rdma_bind_addr(id, (struct sockaddr *)&ss);
	if (!err)
		err = rdma_listen(id, l->backlog);
	if (err) {
		if (err == -ENODEV)
			err = -EADDRNOTAVAIL;
		goto err_free;
	}

	flags = O_RDWR | ((a.flags & MMT_CONN_CLOEXEC) ? O_CLOEXEC : 0);
	fd = get_unused_fd_flags(flags);
	if (fd < 0) {
		err = fd;
		goto err_free;
	}
	file = anon_inode_getfile("[mmt-listen]", &mmt_listen_fops, l, flags);
	if (IS_ERR(file)) {
		put_unused_fd(fd);
		err = PTR_ERR(file);
		goto err_free;
	}
	a.size = sizeof(a);
	a.fd = fd;
	if (mmt_copy_out(uarg, &a, sizeof(a), usize)) {
		put_unused_fd(fd);
		fput(file);	/* releases the listener */
		return -EFAULT;
	}
	fd_install(fd, file);
	return 0;

err_free:
	mmt_listener_kill(l);
	mutex_lock(&mmt_conn_mutex);
	list_del(&l->node);
	mutex_unlock(&mmt_conn_mutex);
	mutex_destroy(&l->mutex);
	mem_cgroup_put(l->memcg);
	kfree(l);
	return err;
}

/* ------------------------------------------------------------ ib_client */

static int mmt_ib_add(struct ib_device *dev)
{
	return 0;
}

/*
 * A device goes away: release every resource on it before returning (the
 * core waits for them), as nvme_rdma_remove_one() does.  The fds stay
 * open and report the connection reset.
 */
static void mmt_ib_remove(struct ib_device *dev, void *client_data)
{
	struct mmt_rdma_conn *rc, *tmp;
	struct mmt_conn *conn;
	struct rdma_cm_id *id;
	struct mmt_listener *l;
	LIST_HEAD(victims);

	/*
	 * Nothing is allocated here: a removal must complete whatever the
	 * memory, so the connections are listed through their own rm_node
	 * and the listeners are taken one at a time.
	 */
	mutex_lock(&mmt_conn_mutex);
	list_for_each_entry(conn, &mmt_conns, node) {
		if (conn->fab != &mmt_rdma_fabric)
			continue;
		rc = mmt_rdma(conn);
		if (READ_ONCE(rc->dev) == dev) {
			kref_get(&conn->ref);
			list_add_tail(&rc->rm_node, &victims);
		}
	}
	mutex_unlock(&mmt_conn_mutex);
	/*
	 * Each listener's id is destroyed outside mmt_conn_mutex: its
	 * handler may be allocating a connection, which takes it.
	 */
	do {
		id = NULL;
		mutex_lock(&mmt_conn_mutex);
		list_for_each_entry(l, &mmt_listeners, node) {
			unsigned long flags;

			mutex_lock(&l->mutex);
			if (l->cm_id && l->cm_id->device == dev) {
				id = l->cm_id;
				l->cm_id = NULL;
				spin_lock_irqsave(&l->lock, flags);
				l->dead = true;
				wake_up_all(&l->wq);
				spin_unlock_irqrestore(&l->lock, flags);
			}
			mutex_unlock(&l->mutex);
			if (id)
				break;
		}
		mutex_unlock(&mmt_conn_mutex);
		if (id)
			rdma_destroy_id(id);
	} while (id);
	list_for_each_entry_safe(rc, tmp, &victims, rm_node) {
		conn = &rc->conn;
		list_del_init(&rc->rm_node);
		pr_info("conn %llx: device %s removed\n", conn->conn_id,
			dev_name(&dev->dev));
		mmt_rdma_teardown(conn, -ECONNRESET);
		mmt_conn_put(conn);
	}
}

static struct ib_client mmt_ib_client = {
	.name = "mmt",
	.add = mmt_ib_add,
	.remove = mmt_ib_remove,
};

/**
 * mmt_conn_init() - register the ib_client (device removal)
 *
 * Context: module init.
 * Return: 0 or ib_register_client()'s error.
 */
int mmt_conn_init(void)
{
	return ib_register_client(&mmt_ib_client);
}

/**
 * mmt_conn_exit() - unregister the ib_client
 *
 * Context: module exit (no fd is open: each holds a module reference).
 */
void mmt_conn_exit(void)
{
	ib_unregister_client(&mmt_ib_client);
}
