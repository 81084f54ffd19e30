// SPDX-License-Identifier: GPL-2.0
/*
 * closure_fuzz - libFuzzer harness for the closure receive path.
 *
 * Input: one closure as it would land in a receive buffer.  Fixed key
 * (00 01 .. 0f) and the small golden geometry (2 levels, log arity {3, 2},
 * 64-byte blocks: 2592-byte closures), so the seed corpus
 * (tests/fuzz/corpus/closure_fuzz/, valid closures and mutations of them)
 * reaches the unseal and the tree checks.
 *
 * Oracles, beyond ASan/UBSan: mmt_closure_parse_hdr() and the receive agree
 * on header errors; a rejected closure leaves the receive MMT and the replay
 * state byte-for-byte unchanged and WAITING; an accepted one is VALID, passes
 * mmt_verify_all() and decrypts, and the lazy receive of the same input is
 * accepted too and reads the same plaintext.  An input of a closure's exact
 * size also goes through mmt_closure_receive_inplace() (its sections
 * written into the receive MMT first, as the RDMA transport does), eager
 * and lazy: the verdict is the buffer receive's, the MMT's memory holds
 * the sections either way, and the root and replay state are those the
 * buffer receive left (accepted) or unchanged (rejected).
 *
 * Run: build/fuzz/closure_fuzz -max_total_time=30 $(mktemp -d) \
 *	tests/fuzz/corpus/closure_fuzz
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mmt_golden.h"	/* the golden key, salt, nonce and header */

#define F_SELF		MMT_GOLDEN_RECEIVER
#define F_CONN		MMT_GOLDEN_CONN_ID
#define F_GEN		MMT_GOLDEN_GEN
#define F_FILL		0xd5

static struct mmt_params f_p;
static struct mmt f_m[4];	/* eager, lazy; in place: eager, lazy */
static u8 *f_pt[2];

static void f_die(const char *what)
{
	fprintf(stderr, "closure_fuzz: oracle failed: %s\n", what);
	abort();
}

static void f_setup(void)
{
	struct mmt_crypto *c;
	unsigned int i;

	if (mmt_params_init(&f_p, MMT_GOLDEN_LEVELS, mmt_golden_log_arity,
			    MMT_GOLDEN_LOG_BLOCK))
		f_die("params");
	c = mmt_crypto_alloc(mmt_golden_key, sizeof(mmt_golden_key),
			     mmt_golden_ksalt);
	if (IS_ERR_OR_NULL(c))
		f_die("crypto");
	for (i = 0; i < 4; i++) {
		f_m[i].p = &f_p;
		f_m[i].crypto = c;
		f_m[i].data = malloc(f_p.data_bytes);
		f_m[i].macs = malloc(f_p.macs_bytes);
		f_m[i].nodes = malloc(f_p.nodes_bytes);
		f_m[i].scratch = calloc(1, mmt_scratch_bytes(&f_p));
		if (!f_m[i].data || !f_m[i].macs || !f_m[i].nodes ||
		    !f_m[i].scratch)
			f_die("malloc");
	}
	for (i = 0; i < 2; i++) {
		f_pt[i] = malloc(f_p.data_bytes);
		if (!f_pt[i])
			f_die("malloc");
	}
}

static void f_reset(struct mmt *m, struct mmt_rx_rules *rx)
{
	memset(m->data, F_FILL, f_p.data_bytes);
	memset(m->macs, F_FILL, f_p.macs_bytes);
	memset(m->nodes, F_FILL, f_p.nodes_bytes);
	memset(&m->root, 0, sizeof(m->root));
	m->root.state = MMT_WAITING;
	memset(rx, 0, sizeof(*rx));
	rx->self_node = F_SELF;
	rx->conn_id = F_CONN;
	rx->gen = F_GEN;
	memcpy(rx->rx_nonce, mmt_golden_rx_nonce, MMT_RX_NONCE_BYTES);
}

static bool f_filled(const u8 *b, size_t n)
{
	while (n--)
		if (*b++ != F_FILL)
			return false;
	return true;
}

static void f_expect_same_root(const struct mmt *m,
			       const struct mmt_rx_rules *rx)
{
	static const u8 zero[sizeof(m->root.top.minor)];

	if (m->root.state != MMT_WAITING || m->root.read_only ||
	    m->root.gua || m->root.root_counter || m->root.top.major ||
	    memcmp(m->root.top.minor, zero, sizeof(zero)))
		f_die("rejected closure changed the root");
	if (rx->self_node != F_SELF || rx->conn_id != F_CONN ||
	    rx->gen != F_GEN ||
	    rx->min_root_counter || rx->last_root_counter || rx->last_gua)
		f_die("rejected closure changed the replay state");
}

static void f_expect_unchanged(const struct mmt *m,
			       const struct mmt_rx_rules *rx)
{
	if (!f_filled(m->data, f_p.data_bytes) ||
	    !f_filled(m->macs, f_p.macs_bytes) ||
	    !f_filled(m->nodes, f_p.nodes_bytes))
		f_die("rejected closure changed the receive memory");
	f_expect_same_root(m, rx);
}

static void f_expect_accepted(const struct mmt *m,
			      const struct mmt_rx_rules *rx)
{
	if (m->root.state != MMT_VALID)
		f_die("accepted closure not VALID");
	if (rx->last_gua != m->root.gua ||
	    rx->last_root_counter != m->root.root_counter)
		f_die("replay state not updated");
}

/*
 * The in-place entry point on an input of a closure's exact size, against
 * the buffer receive's verdicts @ret and results in f_m[0..1] and @brx.
 */
static void f_inplace(const u8 *data, size_t size, const int *ret,
		      const struct mmt_rx_rules *brx)
{
	const u8 *sec = data + MMT_CLOSURE_HDR_BYTES + MMT_SEALED_ROOT_BYTES;
	const u8 *macs = sec + f_p.nodes_bytes;
	const u8 *ct = macs + f_p.macs_bytes;
	struct mmt_rx_rules rx;
	unsigned int i;

	if (size != mmt_closure_bytes(&f_p))
		return;
	for (i = 0; i < 2; i++) {
		struct mmt *m = &f_m[2 + i], *b = &f_m[i];

		f_reset(m, &rx);
		memcpy(m->nodes, sec, f_p.nodes_bytes);
		memcpy(m->macs, macs, f_p.macs_bytes);
		memcpy(m->data, ct, f_p.data_bytes);
		if (mmt_closure_receive_inplace(m, &rx, data,
						MMT_CLOSURE_ANY_SENDER,
						i == 0) != ret[i])
			f_die("in place and buffer receive disagree");
		if (memcmp(m->nodes, sec, f_p.nodes_bytes) ||
		    memcmp(m->macs, macs, f_p.macs_bytes) ||
		    memcmp(m->data, ct, f_p.data_bytes))
			f_die("in place receive changed the sections");
		if (ret[i]) {
			f_expect_same_root(m, &rx);
			continue;
		}
		if (m->root.state != b->root.state ||
		    m->root.read_only != b->root.read_only ||
		    m->root.gua != b->root.gua ||
		    m->root.root_counter != b->root.root_counter ||
		    m->root.top.major != b->root.top.major ||
		    memcmp(m->root.top.minor, b->root.top.minor,
			   sizeof(m->root.top.minor)) ||
		    rx.last_gua != brx[i].last_gua ||
		    rx.last_root_counter != brx[i].last_root_counter)
			f_die("in place and buffer receive install differently");
	}
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size);

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	static bool ready;
	struct mmt_rx_rules rx[2];
	struct mmt_closure_hdr h;
	int hret, ret[2];
	unsigned int i;

	if (!ready) {
		f_setup();
		ready = true;
	}
	hret = mmt_closure_parse_hdr(data, size, &h);
	for (i = 0; i < 2; i++) {
		f_reset(&f_m[i], &rx[i]);
		ret[i] = mmt_closure_receive(&f_m[i], &rx[i], data, size,
					     i == 0);
		if (hret && ret[i] != hret)
			f_die("parse_hdr and receive disagree");
		if (!hret && h.levels == 2 && h.log_block_size == 6 &&
		    h.log_arity[0] == 3 && h.log_arity[1] == 2 &&
		    ret[i] == -EMEDIUMTYPE)
			f_die("same geometry refused");
		if (ret[i]) {
			f_expect_unchanged(&f_m[i], &rx[i]);
			continue;
		}
		f_expect_accepted(&f_m[i], &rx[i]);
	}
	f_inplace(data, size, ret, rx);
	if (!ret[0]) {
		/* eager accepted: everything verifies and decrypts */
		if (mmt_verify_all(&f_m[0]))
			f_die("eagerly accepted closure does not verify");
		if (mmt_read(&f_m[0], 0, f_pt[0], f_p.data_bytes))
			f_die("eagerly accepted closure does not read");
		/* a closure that verifies eagerly is accepted lazily */
		if (ret[1])
			f_die("eager accepted, lazy refused");
		if (mmt_read(&f_m[1], 0, f_pt[1], f_p.data_bytes) ||
		    memcmp(f_pt[0], f_pt[1], f_p.data_bytes))
			f_die("lazy read differs from eager read");
	} else if (!ret[1]) {
		/* lazily accepted but not eagerly: a read must notice */
		int r = mmt_read(&f_m[1], 0, f_pt[1], f_p.data_bytes);

		if (r != -EBADMSG)
			f_die("lazily accepted bad closure reads clean");
	}
	return 0;
}
