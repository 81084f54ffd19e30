// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_fabric_rdma.c - the RDMA fabric's data path (driver/mmt_fabric.h):
 * messages as SENDs, a closure as RDMA writes ending in a WRITE_WITH_IMM
 * (the notice; on iWARP, which has no immediate data, plain writes and
 * then a SEND of MMT_MSG_NOTICE), a grant as fast registrations (IB_WR_REG_MR) under fresh
 * rkeys, revoked with LOCAL_INV
 *
 * The connection's QP, CQ and PD, the posting of messages and the waits on
 * signaled WRs are mmt_conn_rdma.c's; memory and rkeys are described in
 * mmt_rdma.h's header comment and docs/CONNECTIONS.md.
 */
#include <linux/err.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>

#include "mmt_fabric.h"
#include "mmt_rdma.h"

/*
 * Registrations of one MR before it is replaced: ib_inc_rkey() steps only
 * the rkey's low 8 bits, so a 257th registration would advertise the
 * rkey of the first again (docs/CONNECTIONS.md, "rkeys").
 */
#define MMT_RDMA_MR_REGS	256

/* A sender's window slot. */
struct mmt_fab_src {
	struct mmt_conn *conn;
	u8 *head;		/* header + sealed root, or NULL */
	u64 head_dma;
	struct mmt_rdma_sgl fixed;	/* the bounce or snapshot, if any */
	size_t fixed_len;
	struct mmt_rdma_sgl body;	/* this write's PMO memory, if mapped */
	struct mmt_rdma_wait wcqe;	/* the WRITE_WITH_IMM (iWARP: SEND) */
	struct mmt_wire_msg *notice;	/* iWARP: MMT_MSG_NOTICE's buffer */
	u64 notice_dma;
};

/* The bytes of an MMT_MSG_NOTICE: the message's header, no segments. */
#define MMT_RDMA_NOTICE_BYTES	offsetof(struct mmt_wire_msg, segs)

/* A receiver's window slot: the MRs of one grant at a time. */
struct mmt_fab_sink {
	struct mmt_conn *conn;
	struct mmt_rdma_sgl region;	/* the granted area */
	u8 *head;		/* MMT: header + sealed root slot, or NULL */
	struct scatterlist head_sg;
	bool head_mapped;
	struct ib_mr *mrs[MMT_WIRE_MAX_SEGS];
	u16 regs[MMT_WIRE_MAX_SEGS];	/* registrations of each MR */
	u32 nmrs;		/* MRs allocated */
	u32 nvalid;		/* MRs registered now */
	struct mmt_rdma_wait inv;
};

static int mmt_rdma_post_msg(struct mmt_conn *conn,
			     const struct mmt_wire_msg *w)
{
	return mmt_rdma_send_msg(conn, w, NULL, NULL);
}

/* ------------------------------------------------------------ writes */

/*
 * Build the RDMA writes of @len bytes from @local (mapped) to the remote
 * segments @segs, split at segment boundaries and at mmt_rdma(conn)->max_sge SGEs.
 * The last WR is a WRITE_WITH_IMM with @imm, signaled with @wait, unless
 * @head_sge is given: then a last WRITE_WITH_IMM of that SGE goes to
 * @head_seg.  With @notice_sge (iWARP) every write is a plain RDMA WRITE
 * and a SEND of @notice_sge (MMT_MSG_NOTICE carrying @imm) follows them,
 * signaled with @wait.  Everything is posted at once.
 */
static int mmt_rdma_post_writes(struct mmt_conn *conn, struct mmt_rdma_sgl *local,
				size_t len, const struct mmt_wire_seg *segs,
				u32 nsegs, struct ib_sge *head_sge,
				const struct mmt_wire_seg *head_seg, u32 imm,
				struct ib_sge *notice_sge,
				struct mmt_rdma_wait *wait)
{
	u32 max_wr = local->nents + nsegs + 3;
	struct ib_rdma_wr *wrs;
	struct ib_sge *sges;
	struct scatterlist *sg = local->sgt.sgl;
	u32 sg_left = local->nents, nwr = 0, nsge = 0, seg = 0;
	u64 sg_off = 0, seg_off = 0, total = 0;
	int err;

	for (seg = 0; seg < nsegs; seg++) {
		if (!segs[seg].len)
			return -EPROTO;	/* zero-length SGEs are refused */
		total += le32_to_cpu(segs[seg].len);
	}
	if (total != len)
		return -EPROTO;
	/*
	 * Charged to the caller's group, but without __GFP_RETRY_MAYFAIL:
	 * a failure here comes after the closure was counted as posted.
	 */
	wrs = kcalloc(max_wr, sizeof(*wrs), GFP_KERNEL_ACCOUNT);
	sges = kcalloc(local->nents + nsegs + 1, sizeof(*sges),
		       GFP_KERNEL_ACCOUNT);
	if (!wrs || !sges) {
		err = -ENOMEM;
		goto out;
	}
	seg = 0;
	while (total) {
		struct ib_rdma_wr *w = &wrs[nwr];
		u64 seg_left = le32_to_cpu(segs[seg].len) - seg_off;

		w->wr.opcode = IB_WR_RDMA_WRITE;
		w->wr.wr_cqe = &mmt_rdma_silent_cqe;
		w->wr.sg_list = &sges[nsge];
		w->remote_addr = le64_to_cpu(segs[seg].addr) + seg_off;
		w->rkey = le32_to_cpu(segs[seg].rkey);
		while (seg_left && w->wr.num_sge < mmt_rdma(conn)->max_sge) {
			u64 ent = sg_dma_len(sg) - sg_off;
			u64 take = min(ent, seg_left);

			sges[nsge].addr = sg_dma_address(sg) + sg_off;
			sges[nsge].length = take;
			sges[nsge].lkey = mmt_rdma(conn)->pd->local_dma_lkey;
			nsge++;
			w->wr.num_sge++;
			seg_left -= take;
			seg_off += take;
			total -= take;
			sg_off += take;
			if (sg_off == sg_dma_len(sg) && --sg_left) {
				sg = sg_next(sg);
				sg_off = 0;
			}
		}
		if (!seg_left) {
			seg++;
			seg_off = 0;
		}
		if (nwr)
			wrs[nwr - 1].wr.next = &w->wr;
		nwr++;
	}
	if (head_sge) {
		struct ib_rdma_wr *w = &wrs[nwr];

		w->wr.opcode = IB_WR_RDMA_WRITE;
		w->wr.wr_cqe = &mmt_rdma_silent_cqe;
		w->wr.sg_list = head_sge;
		w->wr.num_sge = 1;
		w->remote_addr = le64_to_cpu(head_seg->addr);
		w->rkey = le32_to_cpu(head_seg->rkey);
		if (nwr)
			wrs[nwr - 1].wr.next = &w->wr;
		nwr++;
	}
	if (notice_sge) {
		/* RC delivers the SEND after the bytes of the writes */
		struct ib_rdma_wr *w = &wrs[nwr];

		w->wr.opcode = IB_WR_SEND;
		w->wr.sg_list = notice_sge;
		w->wr.num_sge = 1;
		wrs[nwr - 1].wr.next = &w->wr;
		nwr++;
	} else {
		wrs[nwr - 1].wr.opcode = IB_WR_RDMA_WRITE_WITH_IMM;
		wrs[nwr - 1].wr.ex.imm_data = cpu_to_be32(imm);
	}
	wrs[nwr - 1].wr.send_flags = IB_SEND_SIGNALED;
	wrs[nwr - 1].wr.wr_cqe = &wait->cqe;
	/* counted until its completion: see mmt_rdma_send_msg() */
	mutex_lock(&mmt_rdma(conn)->post_mutex);
	atomic_inc(&conn->writes_out);
	wait->sq_counted = true;
	err = ib_post_send(mmt_rdma(conn)->qp, &wrs[0].wr, NULL);
	if (err) {
		wait->sq_counted = false;
		atomic_dec(&conn->writes_out);
		mmt_conn_fail(conn, -ECONNRESET);
	}
	mutex_unlock(&mmt_rdma(conn)->post_mutex);
out:
	kfree(wrs);
	kfree(sges);
	return err;
}

static void mmt_rdma_src_free(struct mmt_fab_src *s)
{
	struct mmt_conn *conn;

	if (!s)
		return;
	conn = s->conn;
	mmt_rdma_wait_idle(&s->wcqe);
	mmt_rdma_unmap(conn, &s->body);
	mmt_rdma_unmap(conn, &s->fixed);
	if (s->head_dma)
		ib_dma_unmap_single(mmt_rdma(conn)->dev, s->head_dma,
				    MMT_CONN_HEAD_BYTES, DMA_TO_DEVICE);
	if (s->notice_dma)
		ib_dma_unmap_single(mmt_rdma(conn)->dev, s->notice_dma,
				    MMT_RDMA_NOTICE_BYTES, DMA_TO_DEVICE);
	kfree(s->notice);
	kfree(s);
}

static struct mmt_fab_src *mmt_rdma_src_alloc(struct mmt_conn *conn,
					      void *head, void *fixed,
					      size_t fixed_len)
{
	struct mmt_fab_src *s;
	int err;

	s = kzalloc(sizeof(*s), GFP_KERNEL_ACCOUNT);
	if (!s)
		return ERR_PTR(-ENOMEM);
	s->conn = conn;
	mmt_rdma_wait_init(&s->wcqe, conn);
	if (head) {
		s->head = head;
		s->head_dma = ib_dma_map_single(mmt_rdma(conn)->dev, head,
						MMT_CONN_HEAD_BYTES,
						DMA_TO_DEVICE);
		if (ib_dma_mapping_error(mmt_rdma(conn)->dev, s->head_dma)) {
			s->head_dma = 0;
			err = -ENOMEM;
			goto fail;
		}
	}
	if (mmt_rdma(conn)->iwarp) {
		s->notice = kzalloc(sizeof(*s->notice), GFP_KERNEL_ACCOUNT);
		if (!s->notice) {
			err = -ENOMEM;
			goto fail;
		}
		s->notice->magic = cpu_to_le32(MMT_WIRE_MSG_MAGIC);
		s->notice->type = MMT_MSG_NOTICE;
		s->notice_dma = ib_dma_map_single(mmt_rdma(conn)->dev,
						  s->notice,
						  MMT_RDMA_NOTICE_BYTES,
						  DMA_TO_DEVICE);
		if (ib_dma_mapping_error(mmt_rdma(conn)->dev, s->notice_dma)) {
			s->notice_dma = 0;
			err = -ENOMEM;
			goto fail;
		}
	}
	if (fixed) {
		s->fixed_len = fixed_len;
		err = mmt_rdma_map(conn, fixed, fixed_len, &s->fixed);
		if (err)
			goto fail;
	}
	return s;
fail:
	mmt_rdma_src_free(s);
	return ERR_PTR(err);
}

static int mmt_rdma_src_map(struct mmt_fab_src *s, void *body, size_t len)
{
	mmt_rdma_unmap(s->conn, &s->body);
	return mmt_rdma_map(s->conn, body, len, &s->body);
}

static int mmt_rdma_src_write(struct mmt_fab_src *s, size_t len,
			      const struct mmt_wire_seg *segs, u32 nsegs,
			      const struct mmt_wire_seg *head_seg, u32 notice)
{
	struct mmt_conn *conn = s->conn;
	struct mmt_rdma_sgl *local = s->body.nents ? &s->body : &s->fixed;
	struct ib_sge head_sge, notice_sge;
	int err;

	if (!local->nents || (head_seg && !s->head) || (!head_seg && s->head))
		return -EPROTO;
	if (local == &s->fixed)
		mmt_rdma_sync_for_device(conn, &s->fixed);
	if (s->head) {
		ib_dma_sync_single_for_device(mmt_rdma(conn)->dev, s->head_dma,
					      MMT_CONN_HEAD_BYTES,
					      DMA_TO_DEVICE);
		head_sge.addr = s->head_dma;
		head_sge.length = MMT_CONN_HEAD_BYTES;
		head_sge.lkey = mmt_rdma(conn)->pd->local_dma_lkey;
	}
	if (s->notice) {
		/* the slot's previous SEND has completed: src_wait */
		s->notice->index = cpu_to_le32(notice);
		ib_dma_sync_single_for_device(mmt_rdma(conn)->dev,
					      s->notice_dma,
					      MMT_RDMA_NOTICE_BYTES,
					      DMA_TO_DEVICE);
		notice_sge.addr = s->notice_dma;
		notice_sge.length = MMT_RDMA_NOTICE_BYTES;
		notice_sge.lkey = mmt_rdma(conn)->pd->local_dma_lkey;
	}
	reinit_completion(&s->wcqe.done);
	err = mmt_rdma_post_writes(conn, local, len, segs, nsegs,
				   s->head ? &head_sge : NULL, head_seg,
				   notice, s->notice ? &notice_sge : NULL,
				   &s->wcqe);
	if (err)
		complete(&s->wcqe.done);	/* nothing was posted */
	return err;
}

static int mmt_rdma_src_wait(struct mmt_fab_src *s, unsigned long timeout)
{
	int err = mmt_rdma_wait_wr(s->conn, &s->wcqe, timeout);

	/*
	 * Done or flushed, the NIC has let go of the body either way: it is
	 * unmapped before the caller changes those bytes (a settle may
	 * re-encrypt them; an unmap after that would copy a bounce buffer's
	 * stale bytes back over them).
	 */
	mmt_rdma_unmap(s->conn, &s->body);
	return err;
}

static void mmt_rdma_src_idle(struct mmt_fab_src *s)
{
	if (s)
		mmt_rdma_wait_idle(&s->wcqe);
}

/* ------------------------------------------------------------ grants */

static void mmt_rdma_sink_free(struct mmt_fab_sink *s)
{
	struct mmt_conn *conn;
	u32 j;

	if (!s)
		return;
	conn = s->conn;
	mmt_rdma_unmap(conn, &s->region);
	if (s->head_mapped)
		ib_dma_unmap_sg(mmt_rdma(conn)->dev, &s->head_sg, 1, DMA_BIDIRECTIONAL);
	for (j = 0; j < s->nmrs; j++)
		ib_dereg_mr(s->mrs[j]);
	kfree(s);
}

static struct mmt_fab_sink *mmt_rdma_sink_alloc(struct mmt_conn *conn,
						size_t len, void *head)
{
	size_t chunk = (size_t)mmt_rdma(conn)->max_pages * PAGE_SIZE;
	struct mmt_fab_sink *s;
	u32 j, nmrs;

	/* +1: ib_map_mr_sg may stop short of a full MR at an entry edge */
	nmrs = DIV_ROUND_UP(len, chunk) + 1 + !!head;
	if (nmrs > MMT_WIRE_MAX_SEGS)
		return ERR_PTR(-E2BIG);
	s = kzalloc(sizeof(*s), GFP_KERNEL_ACCOUNT);
	if (!s)
		return ERR_PTR(-ENOMEM);
	s->conn = conn;
	s->head = head;
	mmt_rdma_wait_init(&s->inv, conn);
	for (j = 0; j < nmrs; j++) {
		struct ib_mr *mr = ib_alloc_mr(mmt_rdma(conn)->pd, IB_MR_TYPE_MEM_REG,
					       mmt_rdma(conn)->max_pages);

		if (IS_ERR(mr)) {
			mmt_rdma_sink_free(s);
			return ERR_CAST(mr);
		}
		s->mrs[s->nmrs++] = mr;
	}
	return s;
}

/*
 * MR @j of @s, for one more registration: after MMT_RDMA_MR_REGS of them
 * it is replaced by a new MR (a new MR index: the rkeys of the old one
 * are not advertised again, docs/CONNECTIONS.md).  The slot is not
 * granted (invalidated), so the old MR is free; the new one is allocated
 * first, so its index differs from the old one's.
 */
static struct ib_mr *mmt_rdma_sink_mr(struct mmt_fab_sink *s, u32 j)
{
	struct ib_mr *mr;

	if (s->regs[j] >= MMT_RDMA_MR_REGS) {
		mr = ib_alloc_mr(mmt_rdma(s->conn)->pd, IB_MR_TYPE_MEM_REG,
				 mmt_rdma(s->conn)->max_pages);
		if (IS_ERR(mr))
			return mr;
		ib_dereg_mr(s->mrs[j]);
		s->mrs[j] = mr;
		s->regs[j] = 0;
	}
	s->regs[j]++;
	return s->mrs[j];
}

/* Chain a REG_MR of @mr (fresh rkey, remote write) after @prev. */
static void mmt_rdma_reg_wr(struct ib_reg_wr *r, struct ib_mr *mr,
			    struct ib_reg_wr *prev)
{
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	memset(r, 0, sizeof(*r));
	r->wr.opcode = IB_WR_REG_MR;
	r->wr.wr_cqe = &mmt_rdma_silent_cqe;
	r->mr = mr;
	r->key = mr->rkey;
	r->access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	if (prev)
		prev->wr.next = &r->wr;
}

/* The segment a GRANT advertises for @mr. */
static void mmt_rdma_seg(struct mmt_wire_seg *seg, const struct ib_mr *mr)
{
	seg->addr = cpu_to_le64(mr->iova);
	seg->rkey = cpu_to_le32(mr->rkey);
	seg->len = cpu_to_le32(mr->length);
}

static int mmt_rdma_sink_grant(struct mmt_fab_sink *s, void *area,
			       size_t len, struct mmt_wire_msg *w)
{
	struct mmt_conn *conn = s->conn;
	struct ib_reg_wr *regs;
	struct scatterlist *sg;
	unsigned int off = 0, prev_off;
	u32 has_head = !!s->head;
	u32 left, nseg = 0;
	int err, n;

	err = mmt_rdma_map(conn, area, len, &s->region);
	if (err)
		return err;
	regs = kcalloc(MMT_WIRE_MAX_SEGS, sizeof(*regs), GFP_KERNEL_ACCOUNT);
	if (!regs)
		return -ENOMEM;
	sg = s->region.sgt.sgl;
	left = s->region.nents;
	while (left) {
		struct ib_mr *mr;

		if (nseg + has_head >= s->nmrs) {
			err = -E2BIG;
			goto out;
		}
		mr = mmt_rdma_sink_mr(s, nseg);
		if (IS_ERR(mr)) {
			err = PTR_ERR(mr);
			goto out;
		}
		/*
		 * Maps as many pages as the MR holds; an sg entry of
		 * physically contiguous pages may be split across MRs:
		 * then @n counts only the whole entries and @off says how
		 * far into the next one this MR got.  At most max_pages
		 * entries are offered: siw refuses (-ENOMEM) a list longer
		 * than the MR's max_num_sg instead of mapping what fits.
		 * Every entry but an area's first and last spans whole
		 * pages, so a provider that maps page by page (rxe, mlx5)
		 * could not have taken more of them into one MR.
		 */
		prev_off = off;
		n = ib_map_mr_sg(mr, sg, min(left, mmt_rdma(conn)->max_pages),
				 &off, PAGE_SIZE);
		if (n < 0 || (!n && off == prev_off)) {
			err = n < 0 ? n : -EINVAL;
			goto out;
		}
		mmt_rdma_reg_wr(&regs[nseg], mr, nseg ? &regs[nseg - 1] : NULL);
		mmt_rdma_seg(&w->segs[nseg], mr);
		nseg++;
		left -= n;
		while (n--)
			sg = sg_next(sg);
	}
	if (has_head) {
		struct ib_mr *mr = mmt_rdma_sink_mr(s, nseg);

		if (IS_ERR(mr)) {
			err = PTR_ERR(mr);
			goto out;
		}
		sg_init_one(&s->head_sg, s->head, MMT_CONN_HEAD_BYTES);
		if (ib_dma_map_sg(mmt_rdma(conn)->dev, &s->head_sg, 1,
				  DMA_BIDIRECTIONAL) != 1) {
			err = -ENOMEM;
			goto out;
		}
		s->head_mapped = true;
		off = 0;
		n = ib_map_mr_sg(mr, &s->head_sg, 1, &off, PAGE_SIZE);
		if (n != 1) {
			err = n < 0 ? n : -EINVAL;
			goto out;
		}
		mmt_rdma_reg_wr(&regs[nseg], mr, nseg ? &regs[nseg - 1] : NULL);
		mmt_rdma_seg(&w->segs[nseg], mr);
		w->head_seg = nseg;
		nseg++;
	}
	w->nsegs = nseg;
	/* posted when the send queue is idle: see mmt_rdma_send_msg() */
	s->nvalid = nseg;
	err = mmt_rdma_send_msg(conn, w, &regs[0].wr, &regs[nseg - 1].wr);
out:
	kfree(regs);
	return err;
}

static int mmt_rdma_sink_invalidate(struct mmt_fab_sink *s)
{
	struct mmt_conn *conn = s->conn;
	struct ib_send_wr *wrs;
	u32 i;
	int err = 0;

	if (s->nvalid) {
		wrs = kcalloc(s->nvalid, sizeof(*wrs), GFP_KERNEL_ACCOUNT);
		if (!wrs)
			return -ENOMEM;
		for (i = 0; i < s->nvalid; i++) {
			wrs[i].opcode = IB_WR_LOCAL_INV;
			wrs[i].wr_cqe = &mmt_rdma_silent_cqe;
			wrs[i].ex.invalidate_rkey = s->mrs[i]->rkey;
			if (i)
				wrs[i - 1].next = &wrs[i];
		}
		wrs[s->nvalid - 1].send_flags = IB_SEND_SIGNALED;
		wrs[s->nvalid - 1].wr_cqe = &s->inv.cqe;
		reinit_completion(&s->inv.done);
		err = ib_post_send(mmt_rdma(conn)->qp, wrs, NULL);
		kfree(wrs);
		if (err) {
			complete(&s->inv.done);
			mmt_conn_fail(conn, -ECONNRESET);
			return err;
		}
		err = mmt_rdma_wait_wr(conn, &s->inv, mmt_timeout(0));
		if (err)
			return err;
	}
	s->nvalid = 0;
	mmt_rdma_unmap(conn, &s->region);
	if (s->head_mapped) {
		ib_dma_unmap_sg(mmt_rdma(conn)->dev, &s->head_sg, 1, DMA_BIDIRECTIONAL);
		s->head_mapped = false;
	}
	return 0;
}

static void mmt_rdma_sink_idle(struct mmt_fab_sink *s)
{
	if (s)
		mmt_rdma_wait_idle(&s->inv);
}

const struct mmt_fabric_ops mmt_rdma_fabric = {
	.name = "rdma",
	.post_msg = mmt_rdma_post_msg,
	.src_alloc = mmt_rdma_src_alloc,
	.src_map = mmt_rdma_src_map,
	.src_write = mmt_rdma_src_write,
	.src_wait = mmt_rdma_src_wait,
	.src_idle = mmt_rdma_src_idle,
	.src_free = mmt_rdma_src_free,
	.sink_alloc = mmt_rdma_sink_alloc,
	.sink_grant = mmt_rdma_sink_grant,
	.sink_invalidate = mmt_rdma_sink_invalidate,
	.sink_idle = mmt_rdma_sink_idle,
	.sink_free = mmt_rdma_sink_free,
	.shutdown = mmt_rdma_shutdown,
	.destroy = mmt_rdma_destroy,
	.release = mmt_rdma_release,
};
