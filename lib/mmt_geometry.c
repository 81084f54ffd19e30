// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_geometry.c - MMT geometry: levels, arities, block size, and where
 * everything lives in untrusted memory.  Computed once per PMO, after
 * fs/verity's fsverity_init_merkle_tree_params().
 *
 * Source: Feng et al., HPCA 2023, section IV and Table V (3 levels of
 * 64/32/16 minors over 64-byte blocks: a 2 MiB closure); docs/ENGINE.md.
 */
#include "mmt_lib.h"

/* The paper's arities, leaf level first: 64, 32, 16, 16. */
static const u8 mmt_default_log_arity[MMT_MAX_LEVELS] = { 6, 5, 4, 4 };

int mmt_params_init(struct mmt_params *p, unsigned int levels,
		    const u8 *log_arity, unsigned int log_block_size)
{
	unsigned int l, log_blocks = 0, max_log_arity = 0, shift = 0;
	u32 start = 0;

	memset(p, 0, sizeof(*p));
	if (levels < 1 || levels > MMT_MAX_LEVELS ||
	    log_block_size < MMT_MIN_LOG_BLOCK ||
	    log_block_size > MMT_MAX_LOG_BLOCK)
		goto invalid;
	if (!log_arity)
		log_arity = mmt_default_log_arity;
	for (l = 0; l < levels; l++) {
		if (log_arity[l] < MMT_MIN_LOG_ARITY ||
		    log_arity[l] > MMT_MAX_LOG_ARITY)
			goto invalid;
		log_blocks += log_arity[l];
		max_log_arity = max_t(unsigned int, max_log_arity, log_arity[l]);
		p->log_arity[l] = log_arity[l];
	}
	/* Block index and node index must fit the 20-bit nonce field. */
	if (log_blocks > MMT_MAX_LOG_BLOCKS)
		goto invalid;

	p->levels = levels;
	p->log_block_size = log_block_size;
	p->block_size = 1u << log_block_size;
	p->log_blocks = log_blocks;
	p->blocks = 1u << log_blocks;
	p->data_bytes = (u64)p->blocks << log_block_size;

	/* A level-l node covers 2^(log_arity[0] + ... + log_arity[l]) blocks */
	for (l = 0; l < levels; l++) {
		shift += log_arity[l];
		p->level_nodes[l] = 1u << (log_blocks - shift);
		p->level_start[l] = start;
		if (l + 1 < levels)
			start += p->level_nodes[l];
	}
	/* The top node lives in the MMT root; level_start[top] = node_count. */
	p->node_count = start;

	/* le64 major | u8 minor[arity] padded to 8 | le64 MAC, one size */
	p->node_size = 8 + MMT_ALIGN8(1u << max_log_arity) + MMT_MAC_BYTES;
	p->macs_bytes = (u64)p->blocks * MMT_MAC_BYTES;
	p->nodes_bytes = (u64)p->node_count * p->node_size;
	p->meta_bytes = p->macs_bytes + p->nodes_bytes +
			MMT_CLOSURE_HDR_BYTES + MMT_SEALED_ROOT_BYTES;
	return 0;

invalid:
	memset(p, 0, sizeof(*p));
	return -EINVAL;
}
