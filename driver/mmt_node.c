// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_node.c - this node's identity: its node id and the GUA allocator
 *
 * The paper's section III: a GUA is the node id above a sequence, unique
 * across nodes and, under one keying, across time.  In attested mode the
 * node id comes from the attestation authority's credential
 * (mmt_attest.c sets it; docs/ATTESTATION.md).
 */
#include <linux/bits.h>
#include <linux/ktime.h>
#include <linux/spinlock.h>
#include <linux/timekeeping.h>

#include "mmt_internal.h"

/* GUA = node id (16 bits) << 42 | sequence (42 bits): 58 bits, paper III. */
#define MMT_GUA_SEQ_BITS	(MMT_GUA_BITS - MMT_NODE_ID_BITS)
#define MMT_GUA_SEQ_MAX		((1ull << MMT_GUA_SEQ_BITS) - 1)

/*
 * A GUA must never repeat under one keying (docs/ENGINE.md, "Keying salt"
 * and "GUA uniqueness"): keyings are made and used within one load, and
 * within a load the sequence only grows.  It starts at the wall clock in
 * milliseconds (2^42 ms is 139 years) so that GUAs read as rising over
 * time; nothing depends on the clock for uniqueness, so a burst may run
 * ahead of it freely.
 */

/* mmt_gua_lock protects the node id and the GUA sequence. */
static DEFINE_SPINLOCK(mmt_gua_lock);
static u16 mmt_node;
static bool mmt_node_unassigned;	/* attested mode, no credential yet */
static u64 mmt_gua_seq;

/**
 * mmt_node_id() - this node's id (16 bits of every GUA)
 *
 * Context: any.
 * Return: the id, 1 until MMT_IOC_SET_NODE_ID.
 */
u16 mmt_node_id(void)
{
	u16 id;

	spin_lock(&mmt_gua_lock);
	id = mmt_node;
	spin_unlock(&mmt_gua_lock);
	return id;
}

/**
 * mmt_set_node_id() - set this node's id
 * @id: 1..65535
 *
 * Context: any.
 * Return: 0, or -EINVAL for an id out of range.
 */
int mmt_set_node_id(u32 id)
{
	if (!id || id > U16_MAX)
		return -EINVAL;
	spin_lock(&mmt_gua_lock);
	mmt_node = id;
	mmt_node_unassigned = false;
	spin_unlock(&mmt_gua_lock);
	return 0;
}

/**
 * mmt_node_id_unassign() - no GUA until mmt_set_node_id() (attested mode
 * entered: the node id the module had was no authority's)
 * @unassigned: true to hold GUAs back; false to let them go (the id as it
 *	was: module exit, KUnit)
 *
 * Context: any.
 */
void mmt_node_id_unassign(bool unassigned)
{
	spin_lock(&mmt_gua_lock);
	mmt_node_unassigned = unassigned;
	spin_unlock(&mmt_gua_lock);
}

/**
 * mmt_gua_alloc() - a new global unique address
 * @gua: (out) node id << 42 | sequence
 *
 * Context: any.
 * Return: 0; -EOVERFLOW when the 42-bit sequence is exhausted; -ENOKEY in
 * attested mode before a credential gave the node its id (so no GUA, and
 * no pad, ever carries an id the authority did not assign).
 */
int mmt_gua_alloc(u64 *gua)
{
	u64 now = ktime_get_real_ns() / NSEC_PER_MSEC;
	u64 next;
	int err = 0;

	spin_lock(&mmt_gua_lock);
	next = max(mmt_gua_seq + 1, now);
	if (mmt_node_unassigned) {
		err = -ENOKEY;
	} else if (next > MMT_GUA_SEQ_MAX) {
		err = -EOVERFLOW;
	} else {
		mmt_gua_seq = next;
		*gua = (u64)mmt_node << MMT_GUA_SEQ_BITS | next;
	}
	spin_unlock(&mmt_gua_lock);
	return err;
}

/**
 * mmt_node_init() - node id 1 and a GUA sequence that starts at the clock
 *
 * Context: module init, before any user can reach the module.
 */
void mmt_node_init(void)
{
	spin_lock(&mmt_gua_lock);
	mmt_node = 1;
	mmt_gua_seq = 0;	/* the first GUA is the clock's */
	mmt_node_unassigned = false;
	spin_unlock(&mmt_gua_lock);
}
