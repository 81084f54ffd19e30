// SPDX-License-Identifier: GPL-2.0
/*
 * mmt_ckpt_test.c - suite mmt_ckpt: the bound on one-time records
 * (driver/mmt_ckpt.c; docs/CRIU.md section 6).  A receive with
 * MMT_MIGRATE_PARK takes its record's place before anything is received
 * (mmt_ckpt_park_begin()), so that nothing can fail after the commit; at
 * MMT_CKPT_MAX records the next one is refused with ENOSPC, and a receive
 * that fails gives its place back (mmt_ckpt_park_end() with no file).
 * The guests cannot reach 4096 records in a test's time; here it costs
 * 4096 small allocations.  KUnit only: it needs the driver.
 */
#include <kunit/test.h>
#include <linux/err.h>
#include <linux/slab.h>

#include "mmt_internal.h"
#include "mmt.h"

static void mmt_ckpt_park_limit(struct kunit *test)
{
	s64 before = atomic64_read(&mmt_stats.ckpt_records);
	struct mmt_ckpt **c, *extra;
	unsigned int i, n;

	KUNIT_ASSERT_LT(test, before, (s64)MMT_CKPT_MAX);
	n = MMT_CKPT_MAX - before;
	c = kunit_kcalloc(test, n, sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c);
	for (i = 0; i < n; i++) {
		c[i] = mmt_ckpt_park_begin();
		if (IS_ERR(c[i]))
			break;
	}
	/* every place up to the bound is given */
	KUNIT_EXPECT_EQ(test, i, n);
	if (i == n) {
		KUNIT_EXPECT_EQ(test, atomic64_read(&mmt_stats.ckpt_records),
				(s64)MMT_CKPT_MAX);
		/* the next one is refused, and counts nothing */
		extra = mmt_ckpt_park_begin();
		KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(extra), -ENOSPC);
		if (!IS_ERR(extra))
			mmt_ckpt_park_end(extra, NULL, NULL);
		KUNIT_EXPECT_EQ(test, atomic64_read(&mmt_stats.ckpt_records),
				(s64)MMT_CKPT_MAX);
	}
	/* failed receives give their places back */
	while (i--)
		mmt_ckpt_park_end(c[i], NULL, NULL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&mmt_stats.ckpt_records), before);
	/* and a place is there again */
	extra = mmt_ckpt_park_begin();
	KUNIT_EXPECT_FALSE(test, IS_ERR(extra));
	if (!IS_ERR(extra))
		mmt_ckpt_park_end(extra, NULL, NULL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&mmt_stats.ckpt_records), before);
}

static struct kunit_case mmt_ckpt_cases[] = {
	KUNIT_CASE(mmt_ckpt_park_limit),
	{}
};

static struct kunit_suite mmt_ckpt_suite = {
	.name = "mmt_ckpt",
	.test_cases = mmt_ckpt_cases,
};

kunit_test_suites(&mmt_ckpt_suite);
