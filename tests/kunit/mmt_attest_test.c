// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_attest_test.c - suite mmt_attest: attested mode (driver/mmt_attest.c,
 * docs/ATTESTATION.md).  The module verifies credentials with the kernel's
 * own PKCS#7 code against the authority in its keyring; the vectors were
 * signed with the openssl command (tests/vectors/attest-vectors.sh), not
 * with our code.  Vector credentials: node key 0x01..0x20, valid for UNIX
 * times 1000..2000; "good" node 7 serial 5, "newer" node 8 serial 6,
 * "older" node 9 serial 3, "other" signed by authority B, "badver"
 * version 2, "node0" node id 0.  KUnit only.
 */
#include <kunit/test.h>
#include <linux/slab.h>

#include "mmt_internal.h"
#include "mmt.h"
#include "mmt_attest_vectors.h"

static u8 mmt_vec_key[MMT_CRED_KEY_LEN];

static int mmt_attest_test_init(struct kunit *test)
{
	int i;

	for (i = 0; i < MMT_CRED_KEY_LEN; i++)
		mmt_vec_key[i] = i + 1;
	/* a fresh node key for each case, as for each module load */
	mmt_attest_exit();
	mmt_attest_init();
	mmt_set_node_id(1);
	return 0;
}

static void mmt_attest_test_exit(struct kunit *test)
{
	mmt_attest_reset();
	mmt_set_node_id(1);
}

/* set_cred with the vectors' node key at time 1500 */
static int mmt_vec_install(const u8 *cred, size_t len)
{
	return mmt_attest_set_cred(cred, len, 1500, mmt_vec_key);
}

static int mmt_vec_authority(bool a)
{
	return a ? mmt_attest_set_authority(mmt_attest_vec_authority_A,
					    sizeof(mmt_attest_vec_authority_A)) :
		   mmt_attest_set_authority(mmt_attest_vec_authority_B,
					    sizeof(mmt_attest_vec_authority_B));
}

static void mmt_attest_authority(struct kunit *test)
{
	struct mmt_attest_info info = {};
	u8 pk[MMT_CRED_KEY_LEN], zero[MMT_CRED_KEY_LEN] = {};
	u64 gua;

	KUNIT_EXPECT_FALSE(test, mmt_attest_mode());
	KUNIT_EXPECT_EQ(test, mmt_gua_alloc(&gua), 0);
	KUNIT_EXPECT_EQ(test, mmt_vec_install(mmt_attest_vec_good,
					      sizeof(mmt_attest_vec_good)),
			-ENOKEY);
	/* not a certificate: refused, still not attested mode */
	KUNIT_EXPECT_EQ(test, mmt_attest_set_authority(mmt_attest_vec_good,
						       64), -EBADMSG);
	KUNIT_EXPECT_FALSE(test, mmt_attest_mode());
	KUNIT_ASSERT_EQ(test, mmt_vec_authority(true), 0);
	KUNIT_EXPECT_TRUE(test, mmt_attest_mode());
	KUNIT_EXPECT_EQ(test, mmt_vec_authority(false), -EBUSY);
	mmt_attest_info(&info);
	KUNIT_EXPECT_EQ(test, info.state, (u32)MMT_ATTEST_WAITING);
	mmt_attest_node_key(pk);
	KUNIT_EXPECT_NE(test, memcmp(pk, zero, sizeof(pk)), 0);
	KUNIT_EXPECT_EQ(test, memcmp(info.node_key, pk, sizeof(pk)), 0);
	/* the node id is untouched until a credential is installed, and no
	 * GUA is made under it
	 */
	KUNIT_EXPECT_EQ(test, mmt_node_id(), 1);
	KUNIT_EXPECT_EQ(test, mmt_gua_alloc(&gua), -ENOKEY);
}

static void mmt_attest_good(struct kunit *test)
{
	struct mmt_attest_info info = {};
	u64 gua;

	KUNIT_ASSERT_EQ(test, mmt_vec_authority(true), 0);
	KUNIT_EXPECT_EQ(test, mmt_gua_alloc(&gua), -ENOKEY);
	KUNIT_EXPECT_EQ(test, mmt_vec_install(mmt_attest_vec_good,
					      sizeof(mmt_attest_vec_good)), 0);
	KUNIT_EXPECT_EQ(test, mmt_node_id(), 7);
	/* GUAs again, under the authority's id */
	KUNIT_ASSERT_EQ(test, mmt_gua_alloc(&gua), 0);
	KUNIT_EXPECT_EQ(test, gua >> (MMT_GUA_BITS - MMT_NODE_ID_BITS), 7ULL);
	mmt_attest_info(&info);
	KUNIT_EXPECT_EQ(test, info.state, (u32)MMT_ATTEST_ATTESTED);
	KUNIT_EXPECT_EQ(test, info.serial, 5ULL);
	KUNIT_EXPECT_EQ(test, info.not_before, 1000ULL);
	KUNIT_EXPECT_EQ(test, info.not_after, 2000ULL);
	/* the same credential again, and an older one: stale */
	KUNIT_EXPECT_EQ(test, mmt_vec_install(mmt_attest_vec_good,
					      sizeof(mmt_attest_vec_good)),
			-ESTALE);
	KUNIT_EXPECT_EQ(test, mmt_vec_install(mmt_attest_vec_older,
					      sizeof(mmt_attest_vec_older)),
			-ESTALE);
	KUNIT_EXPECT_EQ(test, mmt_node_id(), 7);
	/* a newer one replaces it */
	KUNIT_EXPECT_EQ(test, mmt_vec_install(mmt_attest_vec_newer,
					      sizeof(mmt_attest_vec_newer)), 0);
	KUNIT_EXPECT_EQ(test, mmt_node_id(), 8);
}

/* every refusal leaves the node id and the state as they were */
static void mmt_attest_expect_unchanged(struct kunit *test)
{
	struct mmt_attest_info info = {};

	KUNIT_EXPECT_EQ(test, mmt_node_id(), 1);
	mmt_attest_info(&info);
	KUNIT_EXPECT_EQ(test, info.state, (u32)MMT_ATTEST_WAITING);
	KUNIT_EXPECT_EQ(test, info.serial, 0ULL);
}

static void mmt_attest_refusals(struct kunit *test)
{
	const size_t len = sizeof(mmt_attest_vec_good);
	u8 *buf = kunit_kmalloc(test, len, GFP_KERNEL);
	u8 other_key[MMT_CRED_KEY_LEN];

	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_EQ(test, mmt_vec_authority(true), 0);

	/* signed by another authority */
	KUNIT_EXPECT_EQ(test, mmt_vec_install(mmt_attest_vec_other,
					      sizeof(mmt_attest_vec_other)),
			-EKEYREJECTED);
	/* one byte of the body (the node id) changed */
	memcpy(buf, mmt_attest_vec_good, len);
	buf[12] ^= 1;
	KUNIT_EXPECT_EQ(test, mmt_vec_install(buf, len), -EKEYREJECTED);
	/* one byte of the RSA signature (the last bytes) changed */
	memcpy(buf, mmt_attest_vec_good, len);
	buf[len - 5] ^= 1;
	KUNIT_EXPECT_EQ(test, mmt_vec_install(buf, len), -EKEYREJECTED);
	/* truncated signature; no signature at all */
	KUNIT_EXPECT_EQ(test, mmt_vec_install(mmt_attest_vec_good, len - 1),
			-EKEYREJECTED);
	KUNIT_EXPECT_EQ(test, mmt_vec_install(mmt_attest_vec_good,
					      MMT_CRED_BODY_LEN), -EINVAL);
	/* signed, but a malformed body */
	KUNIT_EXPECT_EQ(test, mmt_vec_install(mmt_attest_vec_badver,
					      sizeof(mmt_attest_vec_badver)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, mmt_vec_install(mmt_attest_vec_node0,
					      sizeof(mmt_attest_vec_node0)),
			-EINVAL);
	/* for another node key (this load's own, for one) */
	memcpy(other_key, mmt_vec_key, sizeof(other_key));
	other_key[0] ^= 1;
	KUNIT_EXPECT_EQ(test, mmt_attest_set_cred(mmt_attest_vec_good, len,
						  1500, other_key),
			-EKEYREJECTED);
	KUNIT_EXPECT_EQ(test, mmt_attest_set_cred(mmt_attest_vec_good, len,
						  1500, NULL),
			-EKEYREJECTED);
	/* outside its validity, by one second each way */
	KUNIT_EXPECT_EQ(test, mmt_attest_set_cred(mmt_attest_vec_good, len,
						  999, mmt_vec_key),
			-EKEYEXPIRED);
	KUNIT_EXPECT_EQ(test, mmt_attest_set_cred(mmt_attest_vec_good, len,
						  2001, mmt_vec_key),
			-EKEYEXPIRED);
	mmt_attest_expect_unchanged(test);
	/* the edges are inside */
	KUNIT_EXPECT_EQ(test, mmt_attest_set_cred(mmt_attest_vec_good, len,
						  1000, mmt_vec_key), 0);
	KUNIT_EXPECT_EQ(test, mmt_node_id(), 7);
}

static void mmt_attest_parse(struct kunit *test)
{
	struct mmt_cred c;

	KUNIT_ASSERT_EQ(test, mmt_cred_parse(mmt_attest_vec_newer,
					     MMT_CRED_BODY_LEN, &c), 0);
	KUNIT_EXPECT_EQ(test, c.node_id, 8U);
	KUNIT_EXPECT_EQ(test, c.serial, 6ULL);
	KUNIT_EXPECT_EQ(test, c.not_before, 1000ULL);
	KUNIT_EXPECT_EQ(test, c.not_after, 2000ULL);
	KUNIT_EXPECT_EQ(test, memcmp(c.node_key, mmt_vec_key,
				     MMT_CRED_KEY_LEN), 0);
	KUNIT_EXPECT_EQ(test, c.module_hash[31], 0xa5);
	KUNIT_EXPECT_EQ(test, c.ek_hash[0], 0x5a);
	KUNIT_EXPECT_EQ(test, mmt_cred_parse(mmt_attest_vec_newer,
					     MMT_CRED_BODY_LEN - 1, &c),
			-EINVAL);
}

/*
 * The node key is drawn once per load (mmt_attest_init()), shown in every
 * state, kept when attested mode is left, and wiped only at unload; without
 * it attested mode cannot be entered (-ENOENT).
 */
static void mmt_attest_node_key_load(struct kunit *test)
{
	struct mmt_attest_info info = {};
	u8 pk[MMT_CRED_KEY_LEN], pk2[MMT_CRED_KEY_LEN];
	u8 zero[MMT_CRED_KEY_LEN] = {};

	mmt_attest_node_key(pk);
	KUNIT_ASSERT_NE(test, memcmp(pk, zero, sizeof(pk)), 0);
	mmt_attest_info(&info);
	KUNIT_EXPECT_EQ(test, info.state, (u32)MMT_ATTEST_OFF);
	KUNIT_EXPECT_EQ(test, memcmp(info.node_key, pk, sizeof(pk)), 0);
	/* a second init keeps it (one measurement per load) */
	mmt_attest_init();
	mmt_attest_node_key(pk2);
	KUNIT_EXPECT_EQ(test, memcmp(pk, pk2, sizeof(pk)), 0);
	/* entering and leaving attested mode keeps it */
	KUNIT_ASSERT_EQ(test, mmt_vec_authority(true), 0);
	mmt_attest_node_key(pk2);
	KUNIT_EXPECT_EQ(test, memcmp(pk, pk2, sizeof(pk)), 0);
	mmt_attest_reset();
	mmt_attest_node_key(pk2);
	KUNIT_EXPECT_EQ(test, memcmp(pk, pk2, sizeof(pk)), 0);
	/* unload wipes it: no attested mode without a node key */
	mmt_attest_exit();
	mmt_attest_node_key(pk2);
	KUNIT_EXPECT_EQ(test, memcmp(pk2, zero, sizeof(pk2)), 0);
	KUNIT_EXPECT_EQ(test, mmt_vec_authority(true), -ENOENT);
	KUNIT_EXPECT_FALSE(test, mmt_attest_mode());
	/* the next load draws another */
	mmt_attest_init();
	mmt_attest_node_key(pk2);
	KUNIT_EXPECT_NE(test, memcmp(pk2, zero, sizeof(pk2)), 0);
	KUNIT_EXPECT_NE(test, memcmp(pk, pk2, sizeof(pk)), 0);
}

static struct kunit_case mmt_attest_cases[] = {
	KUNIT_CASE(mmt_attest_authority),
	KUNIT_CASE(mmt_attest_good),
	KUNIT_CASE(mmt_attest_refusals),
	KUNIT_CASE(mmt_attest_parse),
	KUNIT_CASE(mmt_attest_node_key_load),
	{}
};

static struct kunit_suite mmt_attest_suite = {
	.name = "mmt_attest",
	.init = mmt_attest_test_init,
	.exit = mmt_attest_test_exit,
	.test_cases = mmt_attest_cases,
};

kunit_test_suites(&mmt_attest_suite);
