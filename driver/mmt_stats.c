// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_stats.c - module-wide counters, in debugfs as mmt/stats, and the
 * module's tracepoints (mmt_trace.h, defined here)
 *
 * One "name value" line per counter, for tests and for people: the guest
 * tests read rejections by reason from here.
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "mmt_conn.h"
#include "mmt_internal.h"

#define CREATE_TRACE_POINTS
#include "mmt_trace.h"

struct mmt_stats mmt_stats;

static struct dentry *mmt_debugfs_dir;

static const char * const mmt_reject_names[] = {
	[MMT_REJ_BADMSG] = "reject_badmsg",
	[MMT_REJ_STALE] = "reject_replay",
	[MMT_REJ_ILSEQ] = "reject_reorder",
	[MMT_REJ_MSGSIZE] = "reject_length",
	[MMT_REJ_PROTO] = "reject_version",
	[MMT_REJ_MEDIUM] = "reject_geometry",
	[MMT_REJ_XDEV] = "reject_connection",
	[MMT_REJ_OTHER] = "reject_other",
};

/**
 * mmt_stats_reject() - count a rejected closure by its reason
 * @err: the receiver's -errno
 *
 * Context: any.
 */
void mmt_stats_reject(int err)
{
	enum mmt_reject r;

	switch (err) {
	case -EBADMSG:
		r = MMT_REJ_BADMSG;
		break;
	case -ESTALE:
		r = MMT_REJ_STALE;
		break;
	case -EILSEQ:
		r = MMT_REJ_ILSEQ;
		break;
	case -EMSGSIZE:
		r = MMT_REJ_MSGSIZE;
		break;
	case -EPROTO:
	case -EPROTONOSUPPORT:
		r = MMT_REJ_PROTO;
		break;
	case -EMEDIUMTYPE:
		r = MMT_REJ_MEDIUM;
		break;
	case -EXDEV:
		r = MMT_REJ_XDEV;
		break;
	default:
		r = MMT_REJ_OTHER;
		break;
	}
	atomic64_inc(&mmt_stats.reject[r]);
}

/**
 * mmt_stats_receive() - account one closure receive (loopback or RDMA)
 * @err: 0 (accepted: counted in closures_received) or the receiver's
 *	-errno (counted by reason, and the mmt_verify_fail tracepoint fires)
 * @gua: the MMT's GUA after the attempt
 * @index: the closure's index in its PMO
 *
 * Context: any.
 */
void mmt_stats_receive(int err, u64 gua, u32 index)
{
	if (err) {
		mmt_stats_reject(err);
		trace_mmt_verify_fail(gua, index, err);
	} else {
		atomic64_inc(&mmt_stats.closures_received);
	}
}

static int mmt_stats_show(struct seq_file *s, void *unused)
{
	unsigned int i;

	BUILD_BUG_ON(ARRAY_SIZE(mmt_reject_names) !=
		     ARRAY_SIZE(mmt_stats.reject));
	seq_printf(s, "pmos %lld\n", atomic64_read(&mmt_stats.pmos));
	seq_printf(s, "pmo_bytes %lld\n", atomic64_read(&mmt_stats.pmo_bytes));
	seq_printf(s, "bytes_written %lld\n",
		   atomic64_read(&mmt_stats.bytes_written));
	seq_printf(s, "bytes_read %lld\n",
		   atomic64_read(&mmt_stats.bytes_read));
	seq_printf(s, "verify_fail %lld\n",
		   atomic64_read(&mmt_stats.verify_fail));
	seq_printf(s, "closures_sent %lld\n",
		   atomic64_read(&mmt_stats.closures_sent));
	seq_printf(s, "closures_received %lld\n",
		   atomic64_read(&mmt_stats.closures_received));
	for (i = 0; i < ARRAY_SIZE(mmt_reject_names); i++)
		seq_printf(s, "%s %lld\n", mmt_reject_names[i],
			   atomic64_read(&mmt_stats.reject[i]));
	seq_printf(s, "remote_access_errors %lld\n",
		   atomic64_read(&mmt_stats.remote_access_errors));
	seq_printf(s, "ack_forged %lld\n",
		   atomic64_read(&mmt_stats.ack_forged));
	seq_printf(s, "ckpt_records %lld\n",
		   atomic64_read(&mmt_stats.ckpt_records));
	seq_printf(s, "hs_done %lld\n", atomic64_read(&mmt_stats.hs_done));
	seq_printf(s, "hs_rejected %lld\n",
		   atomic64_read(&mmt_stats.hs_rejected));
	seq_printf(s, "creds_sent %lld\n",
		   atomic64_read(&mmt_stats.creds_sent));
	seq_printf(s, "creds_renewed %lld\n",
		   atomic64_read(&mmt_stats.creds_renewed));
	seq_printf(s, "conns_expired %lld\n",
		   atomic64_read(&mmt_stats.conns_expired));
	seq_printf(s, "xfer_unknown %lld\n",
		   atomic64_read(&mmt_stats.xfer_unknown));
	seq_printf(s, "resolves_forced %lld\n",
		   atomic64_read(&mmt_stats.resolves_forced));
	seq_printf(s, "resolves %lld\n",
		   atomic64_read(&mmt_stats.resolves));
	seq_printf(s, "resolve_forged %lld\n",
		   atomic64_read(&mmt_stats.resolve_forged));
	seq_printf(s, "statements_sent %lld\n",
		   atomic64_read(&mmt_stats.statements_sent));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(mmt_stats);

/**
 * mmt_stats_init() - create debugfs mmt/stats (failure is not an error:
 * debugfs is optional)
 *
 * Context: module init.
 * Return: the directory mmt/, for the other debugfs files (an error
 * pointer when debugfs is off, which debugfs_create_*() accept).
 */
struct dentry *mmt_stats_init(void)
{
	/*
	 * Not KBUILD_MODNAME: the out-of-tree build names the module
	 * "driver/mmt" there, and a '/' makes debugfs refuse the directory.
	 */
	mmt_debugfs_dir = debugfs_create_dir("mmt", NULL);
	debugfs_create_file("stats", 0400, mmt_debugfs_dir, NULL,
			    &mmt_stats_fops);
	return mmt_debugfs_dir;
}

/**
 * mmt_stats_exit() - remove debugfs mmt/ and every file in it
 *
 * Context: module exit.
 */
void mmt_stats_exit(void)
{
	debugfs_remove(mmt_debugfs_dir);
}
