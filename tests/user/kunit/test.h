/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User-space stand-in for the subset of <kunit/test.h> the project's suites
 * use, so that one test source runs under KUnit (UML, kernel crypto API) and
 * natively (OpenSSL backend).  Included as <kunit/test.h> through -I.
 *
 * A failed EXPECT marks the case failed and goes on; a failed ASSERT ends
 * the case (longjmp), as in KUnit.
 */
#ifndef MMT_USER_KUNIT_TEST_H
#define MMT_USER_KUNIT_TEST_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct kunit;

struct kunit_case {
	void (*run_case)(struct kunit *test);
	const char *name;
	const void *(*generate_params)(const void *prev, char *desc);
};

struct kunit_suite {
	const char name[256];
	int (*suite_init)(struct kunit_suite *suite);
	void (*suite_exit)(struct kunit_suite *suite);
	int (*init)(struct kunit *test);
	void (*exit)(struct kunit *test);
	struct kunit_case *test_cases;
};

struct kunit {
	void *priv;
	const char *name;
	const void *param_value;
	int failed;
	jmp_buf abort;
	void *allocs[4096];
	unsigned int nr_allocs;
};

#define KUNIT_PARAM_DESC_SIZE 128

#define KUNIT_CASE(test_name) { .run_case = test_name, .name = #test_name }
#define KUNIT_CASE_PARAM(test_name, gen_params)				\
	{ .run_case = test_name, .name = #test_name,			\
	  .generate_params = gen_params }

#define KUNIT_ARRAY_PARAM(name, array, get_desc)			\
	static const void *name##_gen_params(const void *prev, char *desc) \
	{								\
		typeof((array)[0]) *__next = prev ? ((typeof(__next))prev) + 1 : (array); \
		void (*__get_desc)(typeof(__next), char *) = get_desc;	\
		if (__next - (array) < (long)(sizeof(array) / sizeof((array)[0]))) { \
			if (__get_desc)					\
				__get_desc(__next, desc);		\
			return __next;					\
		}							\
		return NULL;						\
	}

#define __KU_CAT2(a, b) a##b
#define __KU_CAT(a, b) __KU_CAT2(a, b)
#define kunit_test_suites(...)						\
	static struct kunit_suite *__KU_CAT(__kunit_suites_, __COUNTER__)[] \
	__attribute__((used, section("mmt_kunit_suites"))) = { __VA_ARGS__ }
#define kunit_test_suite(suite) kunit_test_suites(&suite)

void kunit_user_fail(struct kunit *test, const char *file, int line,
		     const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void *kunit_kzalloc(struct kunit *test, size_t size, unsigned int gfp);
void *kunit_kmalloc(struct kunit *test, size_t size, unsigned int gfp);
void *kunit_kcalloc(struct kunit *test, size_t n, size_t size, unsigned int gfp);
void kunit_kfree(struct kunit *test, const void *ptr);
#define kunit_info(test, fmt, ...) printf("    # %s: " fmt, (test)->name, ##__VA_ARGS__)
#define kunit_err(test, fmt, ...) fprintf(stderr, "    # %s: " fmt, (test)->name, ##__VA_ARGS__)
#define kunit_skip(test, fmt, ...) do { printf("    # SKIP " fmt "\n", ##__VA_ARGS__); longjmp((test)->abort, 2); } while (0)

#define __KU_CMP(test, do_abort, a, op, b, fmt, ...)			\
	do {								\
		typeof(a) __a = (a);					\
		typeof(b) __b = (b);					\
		if (!(__a op __b)) {					\
			kunit_user_fail(test, __FILE__, __LINE__,	\
				"%s %s %s: %lld vs %lld " fmt, #a, #op, #b, \
				(long long)(__a), (long long)(__b), ##__VA_ARGS__); \
			if (do_abort)					\
				longjmp((test)->abort, 1);		\
		}							\
	} while (0)
#define __KU_BOOL(test, do_abort, cond, fmt, ...)				\
	do {								\
		if (!(cond)) {						\
			kunit_user_fail(test, __FILE__, __LINE__,	\
				"%s " fmt, #cond, ##__VA_ARGS__);	\
			if (do_abort)					\
				longjmp((test)->abort, 1);		\
		}							\
	} while (0)

#define KUNIT_EXPECT_EQ_MSG(t, a, b, f, ...) __KU_CMP(t, 0, a, ==, b, f, ##__VA_ARGS__)
#define KUNIT_EXPECT_NE_MSG(t, a, b, f, ...) __KU_CMP(t, 0, a, !=, b, f, ##__VA_ARGS__)
#define KUNIT_EXPECT_LT_MSG(t, a, b, f, ...) __KU_CMP(t, 0, a, <, b, f, ##__VA_ARGS__)
#define KUNIT_EXPECT_LE_MSG(t, a, b, f, ...) __KU_CMP(t, 0, a, <=, b, f, ##__VA_ARGS__)
#define KUNIT_EXPECT_GT_MSG(t, a, b, f, ...) __KU_CMP(t, 0, a, >, b, f, ##__VA_ARGS__)
#define KUNIT_EXPECT_GE_MSG(t, a, b, f, ...) __KU_CMP(t, 0, a, >=, b, f, ##__VA_ARGS__)
#define KUNIT_EXPECT_TRUE_MSG(t, c, f, ...) __KU_BOOL(t, 0, c, f, ##__VA_ARGS__)
#define KUNIT_EXPECT_FALSE_MSG(t, c, f, ...) __KU_BOOL(t, 0, !(c), f, ##__VA_ARGS__)
#define KUNIT_ASSERT_EQ_MSG(t, a, b, f, ...) __KU_CMP(t, 1, a, ==, b, f, ##__VA_ARGS__)
#define KUNIT_ASSERT_NE_MSG(t, a, b, f, ...) __KU_CMP(t, 1, a, !=, b, f, ##__VA_ARGS__)
#define KUNIT_ASSERT_LT_MSG(t, a, b, f, ...) __KU_CMP(t, 1, a, <, b, f, ##__VA_ARGS__)
#define KUNIT_ASSERT_LE_MSG(t, a, b, f, ...) __KU_CMP(t, 1, a, <=, b, f, ##__VA_ARGS__)
#define KUNIT_ASSERT_GT_MSG(t, a, b, f, ...) __KU_CMP(t, 1, a, >, b, f, ##__VA_ARGS__)
#define KUNIT_ASSERT_GE_MSG(t, a, b, f, ...) __KU_CMP(t, 1, a, >=, b, f, ##__VA_ARGS__)
#define KUNIT_ASSERT_TRUE_MSG(t, c, f, ...) __KU_BOOL(t, 1, c, f, ##__VA_ARGS__)
#define KUNIT_ASSERT_FALSE_MSG(t, c, f, ...) __KU_BOOL(t, 1, !(c), f, ##__VA_ARGS__)

#define KUNIT_EXPECT_EQ(t, a, b) KUNIT_EXPECT_EQ_MSG(t, a, b, "")
#define KUNIT_EXPECT_NE(t, a, b) KUNIT_EXPECT_NE_MSG(t, a, b, "")
#define KUNIT_EXPECT_LT(t, a, b) KUNIT_EXPECT_LT_MSG(t, a, b, "")
#define KUNIT_EXPECT_LE(t, a, b) KUNIT_EXPECT_LE_MSG(t, a, b, "")
#define KUNIT_EXPECT_GT(t, a, b) KUNIT_EXPECT_GT_MSG(t, a, b, "")
#define KUNIT_EXPECT_GE(t, a, b) KUNIT_EXPECT_GE_MSG(t, a, b, "")
#define KUNIT_EXPECT_TRUE(t, c) KUNIT_EXPECT_TRUE_MSG(t, c, "")
#define KUNIT_EXPECT_FALSE(t, c) KUNIT_EXPECT_FALSE_MSG(t, c, "")
#define KUNIT_EXPECT_NULL(t, p) KUNIT_EXPECT_TRUE_MSG(t, (p) == NULL, "")
#define KUNIT_EXPECT_NOT_NULL(t, p) KUNIT_EXPECT_TRUE_MSG(t, (p) != NULL, "")
#define KUNIT_EXPECT_PTR_EQ(t, a, b) KUNIT_EXPECT_TRUE_MSG(t, (const void *)(a) == (const void *)(b), "")
#define KUNIT_EXPECT_PTR_NE(t, a, b) KUNIT_EXPECT_TRUE_MSG(t, (const void *)(a) != (const void *)(b), "")
#define KUNIT_EXPECT_STREQ(t, a, b) KUNIT_EXPECT_TRUE_MSG(t, !strcmp(a, b), "")
#define KUNIT_ASSERT_EQ(t, a, b) KUNIT_ASSERT_EQ_MSG(t, a, b, "")
#define KUNIT_ASSERT_NE(t, a, b) KUNIT_ASSERT_NE_MSG(t, a, b, "")
#define KUNIT_ASSERT_LT(t, a, b) KUNIT_ASSERT_LT_MSG(t, a, b, "")
#define KUNIT_ASSERT_LE(t, a, b) KUNIT_ASSERT_LE_MSG(t, a, b, "")
#define KUNIT_ASSERT_GT(t, a, b) KUNIT_ASSERT_GT_MSG(t, a, b, "")
#define KUNIT_ASSERT_GE(t, a, b) KUNIT_ASSERT_GE_MSG(t, a, b, "")
#define KUNIT_ASSERT_TRUE(t, c) KUNIT_ASSERT_TRUE_MSG(t, c, "")
#define KUNIT_ASSERT_FALSE(t, c) KUNIT_ASSERT_FALSE_MSG(t, c, "")
#define KUNIT_ASSERT_NULL(t, p) KUNIT_ASSERT_TRUE_MSG(t, (p) == NULL, "")
#define KUNIT_ASSERT_NOT_NULL(t, p) KUNIT_ASSERT_TRUE_MSG(t, (p) != NULL, "")
/* NULL, or an ERR_PTR: the top 4095 addresses, as in <linux/err.h>. */
#define __KU_ERR_OR_NULL(p) (!(p) || (unsigned long)(p) >= (unsigned long)-4095)
#define KUNIT_EXPECT_NOT_ERR_OR_NULL(t, p) KUNIT_EXPECT_FALSE_MSG(t, __KU_ERR_OR_NULL(p), "")
#define KUNIT_ASSERT_NOT_ERR_OR_NULL(t, p) KUNIT_ASSERT_FALSE_MSG(t, __KU_ERR_OR_NULL(p), "")
#define KUNIT_FAIL(t, f, ...) kunit_user_fail(t, __FILE__, __LINE__, f, ##__VA_ARGS__)

#endif
