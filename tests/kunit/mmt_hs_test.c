// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_hs_test.c - suite mmt_hs: the attested hello of a connection
 * (driver/mmt_handshake.c, mmt_attest_hs_peer(); docs/ATTESTATION.md "The
 * hello").  X25519 through kpp against RFC 7748 (section 5.2 and 6.1);
 * HKDF-SHA256 is checked against RFC 5869 in suite mmt_crypto.  Two
 * nodes, Alice (node 3, the connecting side) and Bob (node 4), hold the
 * RFC 7748 section 6.1 key pairs, and credentials for them signed by
 * authority A with the openssl command (tests/vectors/attest-vectors.sh):
 * both halves of a handshake run here, and each refusal is checked with
 * its errno.  KUnit only.
 */
#include <kunit/test.h>
#include <linux/slab.h>

#include "mmt_conn.h"
#include "mmt_internal.h"
#include "mmt.h"
#include "mmt_attest_vectors.h"

/* RFC 7748 section 6.1 */
static const u8 alice_sk[32] = {
	0x77, 0x07, 0x6d, 0x0a, 0x73, 0x18, 0xa5, 0x7d, 0x3c, 0x16, 0xc1, 0x72,
	0x51, 0xb2, 0x66, 0x45, 0xdf, 0x4c, 0x2f, 0x87, 0xeb, 0xc0, 0x99, 0x2a,
	0xb1, 0x77, 0xfb, 0xa5, 0x1d, 0xb9, 0x2c, 0x2a,
};

static const u8 alice_pk[32] = {
	0x85, 0x20, 0xf0, 0x09, 0x89, 0x30, 0xa7, 0x54, 0x74, 0x8b, 0x7d, 0xdc,
	0xb4, 0x3e, 0xf7, 0x5a, 0x0d, 0xbf, 0x3a, 0x0d, 0x26, 0x38, 0x1a, 0xf4,
	0xeb, 0xa4, 0xa9, 0x8e, 0xaa, 0x9b, 0x4e, 0x6a,
};

static const u8 bob_sk[32] = {
	0x5d, 0xab, 0x08, 0x7e, 0x62, 0x4a, 0x8a, 0x4b, 0x79, 0xe1, 0x7f, 0x8b,
	0x83, 0x80, 0x0e, 0xe6, 0x6f, 0x3b, 0xb1, 0x29, 0x26, 0x18, 0xb6, 0xfd,
	0x1c, 0x2f, 0x8b, 0x27, 0xff, 0x88, 0xe0, 0xeb,
};

static const u8 bob_pk[32] = {
	0xde, 0x9e, 0xdb, 0x7d, 0x7b, 0x7d, 0xc1, 0xb4, 0xd3, 0x5b, 0x61, 0xc2,
	0xec, 0xe4, 0x35, 0x37, 0x3f, 0x83, 0x43, 0xc8, 0x5b, 0x78, 0x67, 0x4d,
	0xad, 0xfc, 0x7e, 0x14, 0x6f, 0x88, 0x2b, 0x4f,
};

static const u8 shared_k[32] = {
	0x4a, 0x5d, 0x9d, 0x5b, 0xa4, 0xce, 0x2d, 0xe1, 0x72, 0x8e, 0x3b, 0xf4,
	0x80, 0x35, 0x0f, 0x25, 0xe0, 0x7e, 0x21, 0xc9, 0x47, 0xd1, 0x9e, 0x33,
	0x76, 0xf0, 0x9b, 0x3c, 0x1e, 0x16, 0x17, 0x42,
};

/* RFC 7748 section 5.2: the two single test vectors, and one iteration */
static const struct {
	u8 k[32], u[32], out[32];
} mmt_x25519_vec[] = {
	{
		{ 0xa5, 0x46, 0xe3, 0x6b, 0xf0, 0x52, 0x7c, 0x9d, 0x3b, 0x16,
		  0x15, 0x4b, 0x82, 0x46, 0x5e, 0xdd, 0x62, 0x14, 0x4c, 0x0a,
		  0xc1, 0xfc, 0x5a, 0x18, 0x50, 0x6a, 0x22, 0x44, 0xba, 0x44,
		  0x9a, 0xc4 },
		{ 0xe6, 0xdb, 0x68, 0x67, 0x58, 0x30, 0x30, 0xdb, 0x35, 0x94,
		  0xc1, 0xa4, 0x24, 0xb1, 0x5f, 0x7c, 0x72, 0x66, 0x24, 0xec,
		  0x26, 0xb3, 0x35, 0x3b, 0x10, 0xa9, 0x03, 0xa6, 0xd0, 0xab,
		  0x1c, 0x4c },
		{ 0xc3, 0xda, 0x55, 0x37, 0x9d, 0xe9, 0xc6, 0x90, 0x8e, 0x94,
		  0xea, 0x4d, 0xf2, 0x8d, 0x08, 0x4f, 0x32, 0xec, 0xcf, 0x03,
		  0x49, 0x1c, 0x71, 0xf7, 0x54, 0xb4, 0x07, 0x55, 0x77, 0xa2,
		  0x85, 0x52 },
	},
	{
		{ 0x4b, 0x66, 0xe9, 0xd4, 0xd1, 0xb4, 0x67, 0x3c, 0x5a, 0xd2,
		  0x26, 0x91, 0x95, 0x7d, 0x6a, 0xf5, 0xc1, 0x1b, 0x64, 0x21,
		  0xe0, 0xea, 0x01, 0xd4, 0x2c, 0xa4, 0x16, 0x9e, 0x79, 0x18,
		  0xba, 0x0d },
		{ 0xe5, 0x21, 0x0f, 0x12, 0x78, 0x68, 0x11, 0xd3, 0xf4, 0xb7,
		  0x95, 0x9d, 0x05, 0x38, 0xae, 0x2c, 0x31, 0xdb, 0xe7, 0x10,
		  0x6f, 0xc0, 0x3c, 0x3e, 0xfc, 0x4c, 0xd5, 0x49, 0xc7, 0x15,
		  0xa4, 0x93 },
		{ 0x95, 0xcb, 0xde, 0x94, 0x76, 0xe8, 0x90, 0x7d, 0x7a, 0xad,
		  0xe4, 0x5c, 0xb4, 0xb8, 0x73, 0xf8, 0x8b, 0x59, 0x5a, 0x68,
		  0x79, 0x9f, 0xa1, 0x52, 0xe6, 0xf8, 0xf7, 0x64, 0x7a, 0xac,
		  0x79, 0x57 },
	},
	{
		{ 9 },
		{ 9 },
		{ 0x42, 0x2c, 0x8e, 0x7a, 0x62, 0x27, 0xd7, 0xbc, 0xa1, 0x35,
		  0x0b, 0x3e, 0x2b, 0xb7, 0x27, 0x9f, 0x78, 0x97, 0xb8, 0x7b,
		  0xb6, 0x85, 0x4b, 0x78, 0x3c, 0x60, 0xe8, 0x03, 0x11, 0xae,
		  0x30, 0x79 },
	},
};

#define CR	0x1122334455667788ULL	/* conn_rand */
#define AR	0x99aabbccddeeff00ULL	/* accept_rand */
#define NOW	1500			/* inside the vectors' validity */

static int mmt_hs_test_init(struct kunit *test)
{
	/* a fresh node key for each case, as for each module load */
	mmt_attest_exit();
	mmt_attest_init();
	mmt_set_node_id(1);
	return mmt_attest_set_authority(mmt_attest_vec_authority_A,
					sizeof(mmt_attest_vec_authority_A));
}

static void mmt_hs_test_exit(struct kunit *test)
{
	mmt_attest_reset();
	mmt_set_node_id(1);
}

static void mmt_hs_x25519(struct kunit *test)
{
	static const u8 zero[32];
	u8 out[32];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(mmt_x25519_vec); i++) {
		KUNIT_ASSERT_EQ(test, mmt_x25519(mmt_x25519_vec[i].k,
						 mmt_x25519_vec[i].u, out), 0);
		KUNIT_EXPECT_EQ_MSG(test, memcmp(out, mmt_x25519_vec[i].out,
						 32), 0, "vector %zu", i);
	}
	KUNIT_ASSERT_EQ(test, mmt_x25519(alice_sk, NULL, out), 0);
	KUNIT_EXPECT_EQ(test, memcmp(out, alice_pk, 32), 0);
	KUNIT_ASSERT_EQ(test, mmt_x25519(bob_sk, NULL, out), 0);
	KUNIT_EXPECT_EQ(test, memcmp(out, bob_pk, 32), 0);
	KUNIT_ASSERT_EQ(test, mmt_x25519(alice_sk, bob_pk, out), 0);
	KUNIT_EXPECT_EQ(test, memcmp(out, shared_k, 32), 0);
	KUNIT_ASSERT_EQ(test, mmt_x25519(bob_sk, alice_pk, out), 0);
	KUNIT_EXPECT_EQ(test, memcmp(out, shared_k, 32), 0);
	/* a point of small order (u = 0): the all-zero result is refused */
	KUNIT_EXPECT_EQ(test, mmt_x25519(alice_sk, zero, out), -EKEYREJECTED);
	KUNIT_EXPECT_EQ(test, memcmp(out, zero, 32), 0);
	KUNIT_EXPECT_EQ(test, mmt_x25519(zero, alice_pk, out), -EKEYREJECTED);
}

/* Both halves: Alice connects (node 3), Bob accepts (node 4). */
struct mmt_hs_pair {
	struct mmt_hs a, b;
};

static int mmt_hs_pair_start(struct mmt_hs_pair *p, u64 ar_a, u64 ar_b,
			     const u8 *bob_cred, size_t bob_len)
{
	int err;

	memset(p, 0, sizeof(*p));
	err = mmt_hs_start(&p->a, true, CR, ar_a, mmt_attest_vec_alice,
			   sizeof(mmt_attest_vec_alice));
	if (!err)
		err = mmt_hs_start(&p->b, false, CR, ar_b, bob_cred, bob_len);
	return err;
}

/* Exchange the hellos, check the credentials, derive; @now for both */
static int mmt_hs_pair_run(struct mmt_hs_pair *p, u64 now, int *err_b)
{
	int err;

	err = mmt_hs_peer_hello(&p->a, p->b.own, p->b.own_len);
	if (!err)
		err = mmt_attest_hs_peer(&p->a, now, 4);
	if (!err)
		err = mmt_hs_derive(&p->a, alice_sk);
	*err_b = mmt_hs_peer_hello(&p->b, p->a.own, p->a.own_len);
	if (!*err_b)
		*err_b = mmt_attest_hs_peer(&p->b, now, 3);
	if (!*err_b)
		*err_b = mmt_hs_derive(&p->b, bob_sk);
	return err;
}

static void mmt_hs_pair_clear(struct mmt_hs_pair *p)
{
	mmt_hs_clear(&p->a);
	mmt_hs_clear(&p->b);
}

static void mmt_hs_good(struct kunit *test)
{
	struct mmt_hs_pair *p, *q;
	u64 id_a, id_b, id_q;
	int err_b;

	p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	q = kunit_kzalloc(test, sizeof(*q), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_ASSERT_NOT_NULL(test, q);
	KUNIT_ASSERT_EQ(test, mmt_hs_pair_start(p, AR, AR, mmt_attest_vec_bob,
						sizeof(mmt_attest_vec_bob)), 0);
	KUNIT_EXPECT_EQ(test, p->a.own_len,
			(u32)(32 + sizeof(mmt_attest_vec_alice)));
	KUNIT_ASSERT_EQ(test, mmt_hs_pair_run(p, NOW, &err_b), 0);
	KUNIT_ASSERT_EQ(test, err_b, 0);
	KUNIT_EXPECT_EQ(test, p->a.peer_cred.node_id, 4U);
	KUNIT_EXPECT_EQ(test, p->b.peer_cred.node_id, 3U);
	KUNIT_EXPECT_EQ(test, memcmp(p->a.peer_cred.node_key, bob_pk, 32), 0);
	/* same transcript and secret, crosswise tags, distinct tags */
	KUNIT_EXPECT_EQ(test, memcmp(p->a.th, p->b.th, 32), 0);
	KUNIT_EXPECT_EQ(test, memcmp(p->a.secret, p->b.secret, 32), 0);
	KUNIT_EXPECT_EQ(test, mmt_hs_confirm(&p->a, p->b.tag_own), 0);
	KUNIT_EXPECT_EQ(test, mmt_hs_confirm(&p->b, p->a.tag_own), 0);
	KUNIT_EXPECT_NE(test, memcmp(p->a.tag_own, p->b.tag_own, 32), 0);
	/* a reflected tag (one's own sent back) does not confirm */
	KUNIT_EXPECT_EQ(test, mmt_hs_confirm(&p->a, p->a.tag_own),
			-EKEYREJECTED);
	/* the ephemeral secrets are gone once derived */
	KUNIT_EXPECT_TRUE(test, !memchr_inv(p->a.e_sk, 0, 32));
	KUNIT_ASSERT_EQ(test, mmt_hs_conn_id(&p->a, &id_a), 0);
	KUNIT_ASSERT_EQ(test, mmt_hs_conn_id(&p->b, &id_b), 0);
	KUNIT_EXPECT_EQ(test, id_a, id_b);
	KUNIT_EXPECT_NE(test, id_a, mmt_conn_id_derive(CR, AR));

	/* the same two nodes and nonces again: fresh shares, new secret */
	KUNIT_ASSERT_EQ(test, mmt_hs_pair_start(q, AR, AR, mmt_attest_vec_bob,
						sizeof(mmt_attest_vec_bob)), 0);
	KUNIT_ASSERT_EQ(test, mmt_hs_pair_run(q, NOW, &err_b), 0);
	KUNIT_ASSERT_EQ(test, err_b, 0);
	KUNIT_EXPECT_NE(test, memcmp(p->a.secret, q->a.secret, 32), 0);
	KUNIT_ASSERT_EQ(test, mmt_hs_conn_id(&q->a, &id_q), 0);
	KUNIT_EXPECT_NE(test, id_a, id_q);
	/* a tag of another handshake between the same nodes does not verify */
	KUNIT_EXPECT_EQ(test, mmt_hs_confirm(&q->a, p->b.tag_own),
			-EKEYREJECTED);
	mmt_hs_pair_clear(p);
	mmt_hs_pair_clear(q);
}

/* A man in the middle: each side gets another share than the peer sent. */
static void mmt_hs_mitm(struct kunit *test)
{
	struct mmt_hs_pair *p;
	int err_b;

	p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	/* Bob's share replaced by the attacker's (here Bob's static key) */
	KUNIT_ASSERT_EQ(test, mmt_hs_pair_start(p, AR, AR, mmt_attest_vec_bob,
						sizeof(mmt_attest_vec_bob)), 0);
	memcpy(p->b.own, bob_pk, 32);
	KUNIT_ASSERT_EQ(test, mmt_hs_pair_run(p, NOW, &err_b), 0);
	KUNIT_ASSERT_EQ(test, err_b, 0);
	/* Bob hashed the share he made, Alice the one she got */
	KUNIT_EXPECT_EQ(test, mmt_hs_confirm(&p->a, p->b.tag_own),
			-EKEYREJECTED);
	mmt_hs_pair_clear(p);

	/* the accept_rand changed on the way: other transcripts */
	KUNIT_ASSERT_EQ(test, mmt_hs_pair_start(p, AR, AR ^ 1,
						mmt_attest_vec_bob,
						sizeof(mmt_attest_vec_bob)), 0);
	KUNIT_ASSERT_EQ(test, mmt_hs_pair_run(p, NOW, &err_b), 0);
	KUNIT_ASSERT_EQ(test, err_b, 0);
	KUNIT_EXPECT_EQ(test, mmt_hs_confirm(&p->a, p->b.tag_own),
			-EKEYREJECTED);
	KUNIT_EXPECT_EQ(test, mmt_hs_confirm(&p->b, p->a.tag_own),
			-EKEYREJECTED);
	mmt_hs_pair_clear(p);
}

/* The peer's credential: each refusal with its errno. */
static void mmt_hs_refusals(struct kunit *test)
{
	struct mmt_hs_pair *p;
	u8 *bad;
	int err_b;

	p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	bad = kunit_kmalloc(test, sizeof(mmt_attest_vec_bob), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_ASSERT_NOT_NULL(test, bad);

	/* signed by another authority */
	KUNIT_ASSERT_EQ(test, mmt_hs_pair_start(p, AR, AR, mmt_attest_vec_bobB,
						sizeof(mmt_attest_vec_bobB)),
			0);
	KUNIT_EXPECT_EQ(test, mmt_hs_pair_run(p, NOW, &err_b), -EKEYREJECTED);
	mmt_hs_pair_clear(p);

	/* a signature byte changed; a body byte (the node key) changed */
	memcpy(bad, mmt_attest_vec_bob, sizeof(mmt_attest_vec_bob));
	bad[sizeof(mmt_attest_vec_bob) - 1] ^= 1;
	KUNIT_ASSERT_EQ(test, mmt_hs_pair_start(p, AR, AR, bad,
						sizeof(mmt_attest_vec_bob)), 0);
	KUNIT_EXPECT_EQ(test, mmt_hs_pair_run(p, NOW, &err_b), -EKEYREJECTED);
	mmt_hs_pair_clear(p);
	memcpy(bad, mmt_attest_vec_bob, sizeof(mmt_attest_vec_bob));
	bad[40] ^= 1;
	KUNIT_ASSERT_EQ(test, mmt_hs_pair_start(p, AR, AR, bad,
						sizeof(mmt_attest_vec_bob)), 0);
	KUNIT_EXPECT_EQ(test, mmt_hs_pair_run(p, NOW, &err_b), -EKEYREJECTED);
	mmt_hs_pair_clear(p);

	/* no credential at all: a share alone, or a share and a body */
	KUNIT_ASSERT_EQ(test, mmt_hs_pair_start(p, AR, AR, mmt_attest_vec_bob,
						sizeof(mmt_attest_vec_bob)), 0);
	KUNIT_EXPECT_EQ(test, mmt_hs_peer_hello(&p->a, p->b.own, 32),
			-EKEYREJECTED);
	KUNIT_EXPECT_EQ(test, mmt_hs_peer_hello(&p->a, p->b.own,
						32 + MMT_CRED_BODY_LEN),
			-EKEYREJECTED);
	mmt_hs_pair_clear(p);

	/* expired, and not yet valid (the vectors: 1000..2000) */
	KUNIT_ASSERT_EQ(test, mmt_hs_pair_start(p, AR, AR, mmt_attest_vec_bob,
						sizeof(mmt_attest_vec_bob)), 0);
	KUNIT_EXPECT_EQ(test, mmt_hs_pair_run(p, 2001, &err_b), -EKEYEXPIRED);
	KUNIT_EXPECT_EQ(test, err_b, -EKEYEXPIRED);
	mmt_hs_pair_clear(p);
	KUNIT_ASSERT_EQ(test, mmt_hs_pair_start(p, AR, AR, mmt_attest_vec_bob,
						sizeof(mmt_attest_vec_bob)), 0);
	KUNIT_EXPECT_EQ(test, mmt_hs_pair_run(p, 999, &err_b), -EKEYEXPIRED);
	mmt_hs_pair_clear(p);
	/* the edges are valid */
	KUNIT_ASSERT_EQ(test, mmt_hs_pair_start(p, AR, AR, mmt_attest_vec_bob,
						sizeof(mmt_attest_vec_bob)), 0);
	KUNIT_EXPECT_EQ(test, mmt_hs_pair_run(p, 2000, &err_b), 0);
	KUNIT_EXPECT_EQ(test, err_b, 0);
	mmt_hs_pair_clear(p);

	/* the rdma_cm hello named another node than the credential */
	KUNIT_ASSERT_EQ(test, mmt_hs_pair_start(p, AR, AR, mmt_attest_vec_bob,
						sizeof(mmt_attest_vec_bob)), 0);
	KUNIT_ASSERT_EQ(test, mmt_hs_peer_hello(&p->a, p->b.own, p->b.own_len),
			0);
	KUNIT_EXPECT_EQ(test, mmt_attest_hs_peer(&p->a, NOW, 5), -EKEYREJECTED);
	mmt_hs_pair_clear(p);
}

/*
 * One handshake's peer check: this node's half started with the credential
 * @own, the peer's hello (the share @share, the credential @cred) taken,
 * then mmt_attest_hs_peer() for the rdma_cm hello's node id @node.
 * Return: the first error, or 0.
 */
static int mmt_hs_try_peer(struct mmt_hs *h, const u8 *own, size_t own_len,
			   const u8 *share, const u8 *cred, size_t cred_len,
			   u16 node)
{
	int err = mmt_hs_start(h, true, CR, AR, own, own_len);
	u8 *b = kmalloc(32 + cred_len, GFP_KERNEL);

	if (!err && !b)
		err = -ENOMEM;
	if (!err) {
		memcpy(b, share, 32);
		memcpy(b + 32, cred, cred_len);
		err = mmt_hs_peer_hello(h, b, 32 + cred_len);
	}
	if (!err)
		err = mmt_attest_hs_peer(h, NOW, node);
	kfree(b);
	mmt_hs_clear(h);
	return err;
}

/* Node ids bound to node keys, and this node's own id. */
static void mmt_hs_binding(struct kunit *test)
{
	struct mmt_hs *h;

	h = kunit_kzalloc(test, sizeof(*h), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, h);
#define PEER(vec, node) \
	mmt_hs_try_peer(h, mmt_attest_vec_alice, sizeof(mmt_attest_vec_alice), \
			bob_pk, vec, sizeof(vec), node)
	/* node 3 is Alice's: seen with her key, it is bound to it */
	KUNIT_EXPECT_EQ(test, PEER(mmt_attest_vec_alice, 3), 0);
	KUNIT_EXPECT_EQ(test, PEER(mmt_attest_vec_alice, 3), 0);
	/* node 3 with Bob's key and an older serial: refused */
	KUNIT_EXPECT_EQ(test, PEER(mmt_attest_vec_bob3, 3), -EKEYREJECTED);
	/* a newer credential for node 3 (its next load): rebinds the id */
	KUNIT_EXPECT_EQ(test, PEER(mmt_attest_vec_bob3new, 3), 0);
	/* ... and Alice's older one is refused from now on */
	KUNIT_EXPECT_EQ(test, PEER(mmt_attest_vec_alice, 3), -EKEYREJECTED);
	KUNIT_EXPECT_EQ(test, PEER(mmt_attest_vec_bob3new, 3), 0);
	/* another id is not affected */
	KUNIT_EXPECT_EQ(test, PEER(mmt_attest_vec_bob, 4), 0);
	/* leaving attested mode forgets the bindings */
	mmt_attest_reset();
	KUNIT_ASSERT_EQ(test, mmt_attest_set_authority(
				mmt_attest_vec_authority_A,
				sizeof(mmt_attest_vec_authority_A)), 0);
	KUNIT_EXPECT_EQ(test, PEER(mmt_attest_vec_alice, 3), 0);
	/* this node's own id: bound to this load's key, not a peer's */
	KUNIT_ASSERT_EQ(test, mmt_attest_set_cred(mmt_attest_vec_bob,
						  sizeof(mmt_attest_vec_bob),
						  NOW, bob_pk), 0);
	KUNIT_EXPECT_EQ(test, mmt_node_id(), 4);
	KUNIT_EXPECT_EQ(test, PEER(mmt_attest_vec_bob, 4), -EKEYREJECTED);
	KUNIT_EXPECT_EQ(test, PEER(mmt_attest_vec_alice, 3), 0);
#undef PEER
}

/*
 * A reflection: this node's own credential (or its node key under another
 * id) as the peer's.  This node holds Bob's key pair and his credential
 * (node 4), as a relay that cross-feeds two connections to Bob's own
 * listener would make Bob see it.
 */
static void mmt_hs_reflection(struct kunit *test)
{
	struct mmt_hs *h;

	h = kunit_kzalloc(test, sizeof(*h), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, h);
	KUNIT_ASSERT_EQ(test, mmt_attest_test_node_key(bob_sk), 0);
	KUNIT_ASSERT_EQ(test, mmt_attest_set_cred(mmt_attest_vec_bob,
						  sizeof(mmt_attest_vec_bob),
						  NOW, NULL), 0);
	KUNIT_ASSERT_EQ(test, mmt_node_id(), 4);
	/* this node's own hello (share and credential) sent back to it */
	KUNIT_ASSERT_EQ(test, mmt_attest_hs_start(h, true, CR, AR), 0);
	KUNIT_ASSERT_EQ(test, mmt_hs_peer_hello(h, h->own, h->own_len), 0);
	KUNIT_EXPECT_EQ(test, mmt_attest_hs_peer(h, NOW, 4), -EKEYREJECTED);
	mmt_hs_clear(h);
#define PEER(vec, node) \
	mmt_hs_try_peer(h, mmt_attest_vec_bob, sizeof(mmt_attest_vec_bob), \
			alice_pk, vec, sizeof(vec), node)
	/* the own credential under another share */
	KUNIT_EXPECT_EQ(test, PEER(mmt_attest_vec_bob, 4), -EKEYREJECTED);
	/* another node id (3) carrying this node's key, older and newer */
	KUNIT_EXPECT_EQ(test, PEER(mmt_attest_vec_bob3, 3), -EKEYREJECTED);
	KUNIT_EXPECT_EQ(test, PEER(mmt_attest_vec_bob3new, 3), -EKEYREJECTED);
	/* nothing was bound: node 3's own credential is a peer's */
	KUNIT_EXPECT_EQ(test, PEER(mmt_attest_vec_alice, 3), 0);
#undef PEER
}

/* The module's own half needs its credential. */
static void mmt_hs_own(struct kunit *test)
{
	struct mmt_hs *h;

	h = kunit_kzalloc(test, sizeof(*h), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, h);
	KUNIT_EXPECT_EQ(test, mmt_attest_hs_start(h, true, CR, AR), -ENOKEY);
	mmt_hs_clear(h);
	KUNIT_ASSERT_EQ(test, mmt_attest_set_cred(mmt_attest_vec_alice,
						  sizeof(mmt_attest_vec_alice),
						  NOW, alice_pk), 0);
	KUNIT_ASSERT_EQ(test, mmt_attest_hs_start(h, true, CR, AR), 0);
	KUNIT_EXPECT_EQ(test, h->own_len,
			(u32)(32 + sizeof(mmt_attest_vec_alice)));
	KUNIT_EXPECT_EQ(test, memcmp(h->own + 32, mmt_attest_vec_alice,
				     sizeof(mmt_attest_vec_alice)), 0);
	mmt_hs_clear(h);
	mmt_attest_reset();
	KUNIT_EXPECT_EQ(test, mmt_attest_hs_start(h, true, CR, AR), -ENOKEY);
	mmt_hs_clear(h);
}

/* MMT key agreement (MMT_IOC_CONN_KEY_AGREE's derivation) */
static void mmt_hs_agreement(struct kunit *test)
{
	u8 sec[32], other[32], ki[32], kr[32], k2[32];
	u8 ti[32], tr[32], ti2[32], tr2[32], t[32];
	u8 dh_i[32], dh_r[32];

	/* the shares: Alice's and Bob's keys of RFC 7748 as ephemerals */
	KUNIT_ASSERT_EQ(test, mmt_x25519(alice_sk, bob_pk, dh_i), 0);
	KUNIT_ASSERT_EQ(test, mmt_x25519(bob_sk, alice_pk, dh_r), 0);
	memset(sec, 0x11, sizeof(sec));
	memset(other, 0x22, sizeof(other));
	KUNIT_ASSERT_EQ(test, mmt_hs_agree(sec, 7, 1, alice_pk, bob_pk, dh_i,
					   32, ki, ti, tr), 0);
	KUNIT_ASSERT_EQ(test, mmt_hs_agree(sec, 7, 1, alice_pk, bob_pk, dh_r,
					   32, kr, ti2, tr2), 0);
	/* both ends: the same key and tags; the two tags differ */
	KUNIT_EXPECT_EQ(test, memcmp(ki, kr, 32), 0);
	KUNIT_EXPECT_EQ(test, memcmp(ti, ti2, 32), 0);
	KUNIT_EXPECT_EQ(test, memcmp(tr, tr2, 32), 0);
	KUNIT_EXPECT_NE(test, memcmp(ti, tr, 32), 0);
	KUNIT_EXPECT_NE(test, memcmp(ki, ti, 32), 0);
	/* another number, connection, handshake secret, share order or
	 * length: another key
	 */
	KUNIT_ASSERT_EQ(test, mmt_hs_agree(sec, 7, 2, alice_pk, bob_pk, dh_i,
					   32, k2, t, t), 0);
	KUNIT_EXPECT_NE(test, memcmp(ki, k2, 32), 0);
	KUNIT_ASSERT_EQ(test, mmt_hs_agree(sec, 8, 1, alice_pk, bob_pk, dh_i,
					   32, k2, t, t), 0);
	KUNIT_EXPECT_NE(test, memcmp(ki, k2, 32), 0);
	KUNIT_ASSERT_EQ(test, mmt_hs_agree(other, 7, 1, alice_pk, bob_pk,
					   dh_i, 32, k2, t, t), 0);
	KUNIT_EXPECT_NE(test, memcmp(ki, k2, 32), 0);
	KUNIT_ASSERT_EQ(test, mmt_hs_agree(sec, 7, 1, bob_pk, alice_pk, dh_i,
					   32, k2, t, t), 0);
	KUNIT_EXPECT_NE(test, memcmp(ki, k2, 32), 0);
	KUNIT_ASSERT_EQ(test, mmt_hs_agree(sec, 7, 1, alice_pk, bob_pk, dh_i,
					   16, k2, t, t), 0);
	KUNIT_EXPECT_NE(test, memcmp(ki, k2, 16), 0);
	/* a share swapped on the way: the tags do not match */
	KUNIT_ASSERT_EQ(test, mmt_hs_agree(sec, 7, 1, alice_pk, shared_k,
					   dh_r, 32, k2, ti2, tr2), 0);
	KUNIT_EXPECT_NE(test, memcmp(ti, ti2, 32), 0);
	KUNIT_EXPECT_EQ(test, mmt_hs_agree(sec, 7, 1, alice_pk, bob_pk, dh_i,
					   24, k2, t, t), -EINVAL);
}

/*
 * A renewal on a live connection (mmt_attest_peer_renew()): the peer's
 * credential the connection holds (Bob's, node 4, serial 11) replaced by
 * his renewal (serial 13, valid until 3000), and each refusal with its
 * errno, the held credential unchanged by each.
 */
static void mmt_hs_renew(struct kunit *test)
{
	struct mmt_cred peer, held;
	u8 *bad;

	bad = kunit_kmalloc(test, sizeof(mmt_attest_vec_bobnew), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, bad);
	KUNIT_ASSERT_EQ(test, mmt_cred_parse(mmt_attest_vec_bob,
					     sizeof(mmt_attest_vec_bob), &peer),
			0);
	held = peer;
#define RENEW(vec, len, now) mmt_attest_peer_renew(vec, len, now, &peer)
	/* another authority; a signature byte changed; a body alone */
	KUNIT_EXPECT_EQ(test, RENEW(mmt_attest_vec_bobB,
				    sizeof(mmt_attest_vec_bobB), NOW),
			-EKEYREJECTED);
	memcpy(bad, mmt_attest_vec_bobnew, sizeof(mmt_attest_vec_bobnew));
	bad[sizeof(mmt_attest_vec_bobnew) - 1] ^= 1;
	KUNIT_EXPECT_EQ(test, RENEW(bad, sizeof(mmt_attest_vec_bobnew), NOW),
			-EKEYREJECTED);
	KUNIT_EXPECT_EQ(test, RENEW(mmt_attest_vec_bobnew, MMT_CRED_BODY_LEN,
				    NOW), -EKEYREJECTED);
	/* Bob's key under another node id (node 3, an older serial) */
	KUNIT_EXPECT_EQ(test, RENEW(mmt_attest_vec_bob3,
				    sizeof(mmt_attest_vec_bob3), NOW),
			-EKEYREJECTED);
	/* the renewal, but outside its validity */
	KUNIT_EXPECT_EQ(test, RENEW(mmt_attest_vec_bobnew,
				    sizeof(mmt_attest_vec_bobnew), 3001),
			-EKEYEXPIRED);
	KUNIT_EXPECT_EQ(test, RENEW(mmt_attest_vec_bobnew,
				    sizeof(mmt_attest_vec_bobnew), 999),
			-EKEYEXPIRED);
	/* the credential held, sent again: no renewal */
	KUNIT_EXPECT_EQ(test, RENEW(mmt_attest_vec_bob,
				    sizeof(mmt_attest_vec_bob), NOW), -ESTALE);
	KUNIT_EXPECT_EQ(test, memcmp(&peer, &held, sizeof(peer)), 0);
	/* the renewal: held from now on, past the old one's end */
	KUNIT_EXPECT_EQ(test, RENEW(mmt_attest_vec_bobnew,
				    sizeof(mmt_attest_vec_bobnew), 2500), 0);
	KUNIT_EXPECT_EQ(test, peer.serial, 13ULL);
	KUNIT_EXPECT_EQ(test, peer.not_after, 3000ULL);
	KUNIT_EXPECT_EQ(test, peer.node_id, 4U);
	KUNIT_EXPECT_EQ(test, memcmp(peer.node_key, bob_pk, 32), 0);
	/* ... and the older one is no renewal of it */
	held = peer;
	KUNIT_EXPECT_EQ(test, RENEW(mmt_attest_vec_bob,
				    sizeof(mmt_attest_vec_bob), NOW), -ESTALE);
	KUNIT_EXPECT_EQ(test, RENEW(mmt_attest_vec_bobnew,
				    sizeof(mmt_attest_vec_bobnew), 2500),
			-ESTALE);
	KUNIT_EXPECT_EQ(test, memcmp(&peer, &held, sizeof(peer)), 0);
	/* Alice (node 3) held: node 3's credential for Bob's key refused */
	KUNIT_ASSERT_EQ(test, mmt_cred_parse(mmt_attest_vec_alice,
					     sizeof(mmt_attest_vec_alice),
					     &peer), 0);
	KUNIT_EXPECT_EQ(test, RENEW(mmt_attest_vec_bob3new,
				    sizeof(mmt_attest_vec_bob3new), NOW),
			-EKEYREJECTED);
	KUNIT_EXPECT_EQ(test, peer.serial, 10ULL);
	/* out of attested mode */
	mmt_attest_reset();
	KUNIT_ASSERT_EQ(test, mmt_cred_parse(mmt_attest_vec_bob,
					     sizeof(mmt_attest_vec_bob), &peer),
			0);
	KUNIT_EXPECT_EQ(test, RENEW(mmt_attest_vec_bobnew,
				    sizeof(mmt_attest_vec_bobnew), 2500),
			-ENOKEY);
	KUNIT_EXPECT_EQ(test, peer.serial, 11ULL);
#undef RENEW
}

static struct kunit_case mmt_hs_cases[] = {
	KUNIT_CASE(mmt_hs_x25519),
	KUNIT_CASE(mmt_hs_good),
	KUNIT_CASE(mmt_hs_mitm),
	KUNIT_CASE(mmt_hs_refusals),
	KUNIT_CASE(mmt_hs_binding),
	KUNIT_CASE(mmt_hs_reflection),
	KUNIT_CASE(mmt_hs_own),
	KUNIT_CASE(mmt_hs_agreement),
	KUNIT_CASE(mmt_hs_renew),
	{}
};

static struct kunit_suite mmt_hs_suite = {
	.name = "mmt_hs",
	.init = mmt_hs_test_init,
	.exit = mmt_hs_test_exit,
	.test_cases = mmt_hs_cases,
};

kunit_test_suites(&mmt_hs_suite);
