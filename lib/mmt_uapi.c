// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_uapi.c - checks and conversions of the uAPI structs (uapi/mmt.h)
 *
 * Pure functions, so that every argument rule of the ioctls is tested in
 * KUnit and in user space without a device.  The driver calls them before
 * it changes anything.
 */
#include "mmt_uapi.h"

/* Default log2 arities, paper Table V: 64, 32, 16, 16 counters per node. */
static const u8 mmt_default_log_arity[MMT_MAX_LEVELS] = { 6, 5, 4, 4 };

/**
 * mmt_uapi_geometry() - turn a user geometry into engine params
 * @g: geometry from user space; zero fields take the defaults (3 levels,
 *	64-byte blocks, arities 64/32/16/16)
 * @p: (out) params, zeroed on error
 *
 * Context: any.
 * Return: 0; -EINVAL for non-zero reserved bytes, a partly given arity
 * list (some of the first @g->levels zero), non-zero arities past
 * @g->levels, or a geometry mmt_params_init() refuses.
 */
int mmt_uapi_geometry(const struct mmt_geometry *g, struct mmt_params *p)
{
	unsigned int levels = g->levels ? g->levels : 3;
	unsigned int log_block = g->log_block_size ? g->log_block_size : 6;
	u8 log_arity[MMT_MAX_LEVELS];
	unsigned int i, given = 0;

	/* MMT_STATE_* are ABI; the engine's enum must match them. */
	BUILD_BUG_ON(MMT_STATE_INVALID != MMT_INVALID);
	BUILD_BUG_ON(MMT_STATE_VALID != MMT_VALID);
	BUILD_BUG_ON(MMT_STATE_SENDING != MMT_SENDING);
	BUILD_BUG_ON(MMT_STATE_WAITING != MMT_WAITING);
	BUILD_BUG_ON(MMT_GEOM_MAX_LEVELS != MMT_MAX_LEVELS);

	memset(p, 0, sizeof(*p));
	if (g->reserved[0] || g->reserved[1] || levels > MMT_MAX_LEVELS)
		return -EINVAL;
	for (i = 0; i < MMT_MAX_LEVELS; i++) {
		if (g->log_arity[i] && i >= levels)
			return -EINVAL;
		given += !!g->log_arity[i];
	}
	if (given && given != levels)
		return -EINVAL;
	for (i = 0; i < MMT_MAX_LEVELS; i++)
		log_arity[i] = given ? g->log_arity[i] : mmt_default_log_arity[i];
	return mmt_params_init(p, levels, log_arity, log_block);
}

/**
 * mmt_uapi_pmo_create() - check MMT_IOC_PMO_CREATE's input
 * @c: the argument as copied in
 * @p: (out) the PMO's params
 * @closures: (out) number of MMTs
 *
 * Context: any.
 * Return: 0; -EINVAL for unknown flags, non-zero reserved fields, a bad
 * geometry, a closure of more than MMT_CLOSURE_MAX_BYTES (it must fit one
 * kernel buffer when it is built or received), or @c->bytes zero, not a
 * multiple of the closure size, or more than 2^32 - 1 closures.
 */
int mmt_uapi_pmo_create(const struct mmt_pmo_create *c,
			struct mmt_params *p, u32 *closures)
{
	unsigned int i;
	u64 n;
	int err;

	if (c->flags & ~MMT_PMO_CLOEXEC)
		return -EINVAL;
	if (c->reserved0 || c->reserved1)
		return -EINVAL;
	for (i = 0; i < ARRAY_SIZE(c->reserved); i++)
		if (c->reserved[i])
			return -EINVAL;
	err = mmt_uapi_geometry(&c->geometry, p);
	if (err)
		return err;
	if (mmt_closure_bytes(p) > MMT_CLOSURE_MAX_BYTES) {
		memset(p, 0, sizeof(*p));
		return -EINVAL;
	}
	n = c->bytes >> ilog2(p->data_bytes);
	if (!c->bytes || (c->bytes & (p->data_bytes - 1)) || n > 0xffffffffull) {
		memset(p, 0, sizeof(*p));
		return -EINVAL;
	}
	*closures = n;
	return 0;
}

/**
 * mmt_uapi_key() - check MMT_IOC_PMO_SET_KEY's input
 * @k: the argument as copied in
 *
 * Context: any.
 * Return: 0; -EINVAL for unknown flags, a @key_len other than 16 or 32,
 * or non-zero key bytes past @key_len.
 */
int mmt_uapi_key(const struct mmt_pmo_key *k)
{
	unsigned int i;

	if (k->flags & ~MMT_KEY_RECEIVE)
		return -EINVAL;
	if (k->key_len != 16 && k->key_len != 32)
		return -EINVAL;
	for (i = k->key_len; i < sizeof(k->key); i++)
		if (k->key[i])
			return -EINVAL;
	return 0;
}

/**
 * mmt_uapi_geometry_out() - describe params in uAPI form
 * @p: params
 * @g: (out) the geometry with every field filled in
 *
 * Context: any.
 */
void mmt_uapi_geometry_out(const struct mmt_params *p, struct mmt_geometry *g)
{
	unsigned int i;

	memset(g, 0, sizeof(*g));
	g->levels = p->levels;
	g->log_block_size = p->log_block_size;
	for (i = 0; i < p->levels; i++)
		g->log_arity[i] = p->log_arity[i];
}
