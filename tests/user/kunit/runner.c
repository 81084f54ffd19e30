// SPDX-License-Identifier: GPL-2.0
/*
 * Runs every suite linked into the program, KUnit-style, in user space.
 * Prints KTAP-like lines per case and a closing "N passed, N failed" line;
 * exits 1 if any case failed.  An optional argument selects suites whose
 * name starts with it.
 */
#include <stdarg.h>
#include <kunit/test.h>

extern struct kunit_suite *__start_mmt_kunit_suites[];
extern struct kunit_suite *__stop_mmt_kunit_suites[];

void kunit_user_fail(struct kunit *test, const char *file, int line,
		     const char *fmt, ...)
{
	va_list ap;

	test->failed = 1;
	fprintf(stderr, "    # %s: FAIL at %s:%d: ", test->name, file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void *kunit_kmalloc(struct kunit *test, size_t size, unsigned int gfp)
{
	void *p = malloc(size ? size : 1);

	(void)gfp;
	if (p && test->nr_allocs < sizeof(test->allocs) / sizeof(test->allocs[0]))
		test->allocs[test->nr_allocs++] = p;
	else if (p) {
		free(p);
		p = NULL;
	}
	return p;
}

void *kunit_kzalloc(struct kunit *test, size_t size, unsigned int gfp)
{
	void *p = kunit_kmalloc(test, size, gfp);

	if (p)
		memset(p, 0, size);
	return p;
}

void *kunit_kcalloc(struct kunit *test, size_t n, size_t size, unsigned int gfp)
{
	if (size && n > (size_t)-1 / size)
		return NULL;
	return kunit_kzalloc(test, n * size, gfp);
}

void kunit_kfree(struct kunit *test, const void *ptr)
{
	unsigned int i;

	for (i = 0; i < test->nr_allocs; i++) {
		if (test->allocs[i] == ptr) {
			free(test->allocs[i]);
			test->allocs[i] = NULL;
			return;
		}
	}
}

static int run_one(struct kunit_suite *s, struct kunit_case *c,
		   const void *param, const char *desc)
{
	static struct kunit t;
	unsigned int i;
	int r;

	memset(&t, 0, sizeof(t));
	t.name = c->name;
	t.param_value = param;
	if (s->init && s->init(&t)) {
		printf("not ok - %s.%s%s%s (init failed)\n", s->name, c->name,
		       desc ? " " : "", desc ? desc : "");
		return 1;
	}
	r = setjmp(t.abort);
	if (r == 0)
		c->run_case(&t);
	if (s->exit)
		s->exit(&t);
	for (i = 0; i < t.nr_allocs; i++)
		free(t.allocs[i]);
	printf("%s - %s.%s%s%s%s\n", t.failed ? "not ok" : "ok", s->name,
	       c->name, desc ? " " : "", desc ? desc : "",
	       r == 2 ? " # SKIP" : "");
	return t.failed;
}

int main(int argc, char **argv)
{
	struct kunit_suite **sp;
	unsigned int passed = 0, failed = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (sp = __start_mmt_kunit_suites; sp < __stop_mmt_kunit_suites; sp++) {
		struct kunit_suite *s = *sp;
		struct kunit_case *c;

		if (!s || (argc > 1 && strncmp(s->name, argv[1], strlen(argv[1]))))
			continue;
		if (s->suite_init && s->suite_init(s)) {
			printf("not ok - %s (suite_init failed)\n", s->name);
			failed++;
			continue;
		}
		for (c = s->test_cases; c->run_case; c++) {
			if (c->generate_params) {
				char desc[KUNIT_PARAM_DESC_SIZE];
				const void *p = NULL;

				for (;;) {
					desc[0] = 0;
					p = c->generate_params(p, desc);
					if (!p)
						break;
					if (run_one(s, c, p, desc))
						failed++;
					else
						passed++;
				}
			} else if (run_one(s, c, NULL, NULL)) {
				failed++;
			} else {
				passed++;
			}
		}
		if (s->suite_exit)
			s->suite_exit(s);
	}
	printf("user unit tests: %u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}
