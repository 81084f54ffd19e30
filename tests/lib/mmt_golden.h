/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mmt_golden.h - the recipe of the golden closure (tests/vectors/README.md).
 * Shared by tests/lib/mmt_closure_test.c (which rebuilds the closure and
 * compares it byte for byte with tests/lib/mmt_golden_vector.h) and
 * tools/mmt-golden.c (which writes tests/vectors/closure_v4_golden.bin and
 * the header).  Changing anything here changes the vector: regenerate both
 * with `build/tools/mmt-golden gen` and say why in the commit.
 */
#ifndef MMT_GOLDEN_H
#define MMT_GOLDEN_H

#include "mmt_lib.h"

#define MMT_GOLDEN_LEVELS	2
#define MMT_GOLDEN_LOG_BLOCK	6	/* 64-byte blocks */
#define MMT_GOLDEN_GUA		((1ull << 42) | 0x123)	/* node 1, seq 0x123 */
#define MMT_GOLDEN_SENDER	1
#define MMT_GOLDEN_RECEIVER	2
#define MMT_GOLDEN_CONN_ID	0x1122334455667788ull
#define MMT_GOLDEN_SEQ		7
#define MMT_GOLDEN_GEN		0x0102030405060708ull	/* transfer generation */
#define MMT_GOLDEN_REWRITE_OFF	320	/* second write: block 5 */
#define MMT_GOLDEN_REWRITE_LEN	64

static const u8 mmt_golden_key[16] = {
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
	0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
};

/* Keying salt (format v2): bytes 0xf0..0xff */
static const u8 mmt_golden_ksalt[MMT_KSALT_BYTES] = {
	0xf0, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7,
	0xf8, 0xf9, 0xfa, 0xfb, 0xfc, 0xfd, 0xfe, 0xff,
};

/* The receive's nonce (format v2): bytes 0xe0..0xef */
static const u8 mmt_golden_rx_nonce[MMT_RX_NONCE_BYTES] = {
	0xe0, 0xe1, 0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7,
	0xe8, 0xe9, 0xea, 0xeb, 0xec, 0xed, 0xee, 0xef,
};

static const u8 mmt_golden_log_arity[MMT_GOLDEN_LEVELS] = { 3, 2 };

/* Plaintext after both writes: byte i = 7i + 3, then block 5 = 0xa0 + j. */
static inline void mmt_golden_plaintext(u8 *pt, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		pt[i] = (u8)(i * 7 + 3);
	for (i = 0; i < MMT_GOLDEN_REWRITE_LEN; i++)
		pt[MMT_GOLDEN_REWRITE_OFF + i] = (u8)(0xa0 + i);
}

static inline void mmt_golden_hdr(struct mmt_closure_hdr *h)
{
	memset(h, 0, sizeof(*h));
	h->flags = 0;				/* transfer */
	h->sender_node = MMT_GOLDEN_SENDER;
	h->receiver_node = MMT_GOLDEN_RECEIVER;
	h->conn_id = MMT_GOLDEN_CONN_ID;
	h->seq = MMT_GOLDEN_SEQ;
	h->gen = MMT_GOLDEN_GEN;
	memcpy(h->rx_nonce, mmt_golden_rx_nonce, MMT_RX_NONCE_BYTES);
}

/*
 * Build the golden closure.  @m has geometry (2 levels, log arity {3, 2},
 * 64-byte blocks), crypto from mmt_golden_key and mmt_golden_ksalt, zeroed memory and an
 * INVALID root; @pt holds @m->p->data_bytes of scratch plaintext.  Steps:
 * mmt_format(GUA) (then INVALID -> VALID if format left it INVALID), one
 * write of the whole pattern 7i + 3 but with block 5 all 0x55, a second
 * write of block 5 as 0xa0 + j, VALID -> SENDING, mmt_closure_build() with
 * mmt_golden_hdr().
 */
static inline int mmt_golden_build(struct mmt *m, u8 *pt, u8 *out,
				   size_t out_len)
{
	struct mmt_closure_hdr h;
	int ret;

	mmt_golden_plaintext(pt, m->p->data_bytes);
	ret = mmt_format(m, MMT_GOLDEN_GUA);
	if (ret)
		return ret;
	if (m->root.state == MMT_INVALID) {
		ret = mmt_root_transition(&m->root, MMT_VALID);
		if (ret)
			return ret;
	}
	memset(pt + MMT_GOLDEN_REWRITE_OFF, 0x55, MMT_GOLDEN_REWRITE_LEN);
	ret = mmt_write(m, 0, pt, m->p->data_bytes);
	if (ret)
		return ret;
	mmt_golden_plaintext(pt, m->p->data_bytes);
	ret = mmt_write(m, MMT_GOLDEN_REWRITE_OFF, pt + MMT_GOLDEN_REWRITE_OFF,
			MMT_GOLDEN_REWRITE_LEN);
	if (ret)
		return ret;
	ret = mmt_root_transition(&m->root, MMT_SENDING);
	if (ret)
		return ret;
	mmt_golden_hdr(&h);
	return mmt_closure_build(m, &h, out, out_len);
}

#endif /* MMT_GOLDEN_H */
