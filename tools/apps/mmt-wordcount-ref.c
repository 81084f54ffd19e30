// SPDX-License-Identifier: GPL-2.0
/*
 * mmt-wordcount-ref - WordCount in one process: the reference the
 * MapReduce application (paper Figs. 12 and 13, docs/PAPER.md) must equal
 * word for word.
 *
 * Usage: mmt-wordcount-ref [--out FILE] [--json] PATH...
 *
 * Reads every regular file under each PATH (directories recursively,
 * symbolic links not followed).  A word is a maximal run of ASCII letters
 * and digits, folded to lower case; every other byte separates words.
 * --out writes "WORD COUNT" per line, sorted by the words' bytes (as
 * LC_ALL=C sort); the summary (files, bytes, words, distinct words, the
 * 10 most frequent) goes to stdout, as JSON with --json.
 * Exit 0, 1 on a read or write error, 2 on a bad argument.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct wc_ent {
	char *word;		/* NULL: free slot */
	size_t len;
	uint64_t count;
};

static struct wc_ent *tab;
static size_t cap, used;
static uint64_t n_files, n_bytes, n_words;
static char *cur;		/* the word being read, across buffers */
static size_t cur_len, cur_cap;
static int failed;

static uint64_t fnv1a(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (n--)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
	return h;
}

static void oom(void)
{
	fprintf(stderr, "mmt-wordcount-ref: out of memory\n");
	exit(1);
}

static void grow(void)
{
	size_t ncap = cap ? cap * 2 : 1 << 16, i, h;
	struct wc_ent *nt = calloc(ncap, sizeof(*nt));

	if (!nt)
		oom();
	for (i = 0; i < cap; i++) {
		if (!tab[i].word)
			continue;
		for (h = fnv1a(tab[i].word, tab[i].len) & (ncap - 1);
		     nt[h].word; h = (h + 1) & (ncap - 1))
			;
		nt[h] = tab[i];
	}
	free(tab);
	tab = nt;
	cap = ncap;
}

static void add_word(const char *w, size_t n)
{
	size_t h;

	if ((used + 1) * 2 > cap)
		grow();
	n_words++;
	for (h = fnv1a(w, n) & (cap - 1); tab[h].word; h = (h + 1) & (cap - 1))
		if (tab[h].len == n && !memcmp(tab[h].word, w, n)) {
			tab[h].count++;
			return;
		}
	tab[h].word = malloc(n + 1);
	if (!tab[h].word)
		oom();
	memcpy(tab[h].word, w, n);
	tab[h].word[n] = 0;
	tab[h].len = n;
	tab[h].count = 1;
	used++;
}

static void end_word(void)
{
	if (cur_len)
		add_word(cur, cur_len);
	cur_len = 0;
}

static void feed(const unsigned char *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char c = b[i];

		if (c >= 'A' && c <= 'Z') {
			c += 'a' - 'A';
		} else if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) {
			end_word();
			continue;
		}
		if (cur_len == cur_cap) {
			cur_cap = cur_cap ? cur_cap * 2 : 256;
			cur = realloc(cur, cur_cap);
			if (!cur)
				oom();
		}
		cur[cur_len++] = (char)c;
	}
}

static int count_file(const char *path)
{
	static unsigned char buf[1 << 16];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0) {
		perror(path);
		return -1;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		feed(buf, (size_t)n);
		n_bytes += (uint64_t)n;
	}
	if (n < 0)
		perror(path);
	close(fd);
	end_word();		/* a file's end ends its last word */
	n_files++;
	return n < 0 ? -1 : 0;
}

static int walk(const char *path, const struct stat *st, int type,
		struct FTW *ftw)
{
	if (type == FTW_F && S_ISREG(st->st_mode) && count_file(path)) {
		failed = 1;
	} else if (type == FTW_DNR || type == FTW_NS) {
		fprintf(stderr, "mmt-wordcount-ref: %s: cannot read\n", path);
		failed = 1;
	}
	return 0;
}

static int by_word(const void *a, const void *b)
{
	const struct wc_ent *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->word, y->word, n);

	if (c)
		return c;
	return x->len < y->len ? -1 : x->len > y->len;
}

static int by_count(const void *a, const void *b)
{
	const struct wc_ent *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return by_word(a, b);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const char *out = NULL;
	struct wc_ent *top;
	size_t i, j, ntop;
	int json = 0, c;

	while ((c = getopt_long(argc, argv, "o:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'j':
			json = 1;
			break;
		case 'h':
			c = 0;
			goto usage;
		default:
			goto usage;
		}
	}
	if (optind == argc)
		goto usage;
	grow();
	for (; optind < argc; optind++)
		if (nftw(argv[optind], walk, 32, FTW_PHYS)) {
			perror(argv[optind]);
			failed = 1;
		}
	if (failed)
		return 1;
	/* compact, then sort by word */
	for (i = j = 0; i < cap; i++)
		if (tab[i].word)
			tab[j++] = tab[i];
	qsort(tab, used, sizeof(*tab), by_word);
	if (out) {
		FILE *f = fopen(out, "w");

		if (!f) {
			perror(out);
			return 1;
		}
		for (i = 0; i < used; i++)
			fprintf(f, "%s %llu\n", tab[i].word,
				(unsigned long long)tab[i].count);
		if (fclose(f)) {
			perror(out);
			return 1;
		}
	}
	ntop = used < 10 ? used : 10;
	top = malloc((used ? used : 1) * sizeof(*top));
	if (!top)
		oom();
	memcpy(top, tab, used * sizeof(*top));
	qsort(top, used, sizeof(*top), by_count);
	if (json) {
		printf("{\"app\": \"wordcount-ref\", \"files\": %llu, \"bytes\": %llu, \"words\": %llu, \"distinct\": %zu, \"top\": [",
		       (unsigned long long)n_files, (unsigned long long)n_bytes,
		       (unsigned long long)n_words, used);
		for (i = 0; i < ntop; i++)
			printf("%s{\"word\": \"%s\", \"count\": %llu}",
			       i ? ", " : "", top[i].word,
			       (unsigned long long)top[i].count);
		printf("]}\n");
	} else {
		printf("files %llu bytes %llu words %llu distinct %zu\n",
		       (unsigned long long)n_files, (unsigned long long)n_bytes,
		       (unsigned long long)n_words, used);
		for (i = 0; i < ntop; i++)
			printf("%8llu %s\n", (unsigned long long)top[i].count,
			       top[i].word);
	}
	free(top);
	return 0;
usage:
	fprintf(c ? stderr : stdout,
		"usage: mmt-wordcount-ref [--out FILE] [--json] PATH...\n");
	return c ? 2 : 0;
}
