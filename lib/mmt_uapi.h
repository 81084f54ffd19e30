/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mmt_uapi.h - checks and conversions between uapi/mmt.h and the engine
 * (lib/mmt_uapi.c); shared by the driver and the tests.
 */
#ifndef MMT_UAPI_H
#define MMT_UAPI_H

#include "mmt_lib.h"
#include "mmt.h"

/*
 * Largest closure (header, sealed root, nodes, MACs and data) a PMO may
 * have: closures are built and received in one kvmalloc() buffer, which
 * the kernel limits to INT_MAX bytes.  1 GiB of data at 64-byte blocks
 * needs about 1.15 GiB.
 */
#define MMT_CLOSURE_MAX_BYTES	0x7fffffffull

int mmt_uapi_geometry(const struct mmt_geometry *g, struct mmt_params *p);
int mmt_uapi_pmo_create(const struct mmt_pmo_create *c,
			struct mmt_params *p, u32 *closures);
int mmt_uapi_key(const struct mmt_pmo_key *k);
void mmt_uapi_geometry_out(const struct mmt_params *p,
			   struct mmt_geometry *g);

#endif /* MMT_UAPI_H */
