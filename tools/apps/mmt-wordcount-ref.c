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
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps.h"

static int by_count(const void *a, const void *b)
{
	const struct mmta_wc_ent *x = a, *y = b;
	size_t n;
	int c;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	n = x->len < y->len ? x->len : y->len;
	c = memcmp(x->word, y->word, n);
	if (c)
		return c;
	return x->len < y->len ? -1 : x->len > y->len;
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
	struct mmta_wc wc;
	struct mmta_wc_ent *tab, *top;
	char **files;
	size_t i, ntop, nfiles, used;
	uint64_t n_bytes = 0;
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
	if (mmta_list_files(argv + optind, argc - optind, &files, &nfiles))
		return 1;
	mmta_wc_init(&wc);
	for (i = 0; i < nfiles; i++)
		if (mmta_wc_file(&wc, files[i], &n_bytes))
			return 1;
	mmta_free_list(files, nfiles);
	mmta_wc_sort(&wc);
	tab = wc.tab;
	used = wc.used;
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
	if (!top) {
		fprintf(stderr, "mmt-wordcount-ref: out of memory\n");
		return 1;
	}
	memcpy(top, tab, used * sizeof(*top));
	qsort(top, used, sizeof(*top), by_count);
	if (json) {
		printf("{\"app\": \"wordcount-ref\", \"files\": %llu, \"bytes\": %llu, \"words\": %llu, \"distinct\": %zu, \"top\": [",
		       (unsigned long long)nfiles, (unsigned long long)n_bytes,
		       (unsigned long long)wc.words, used);
		for (i = 0; i < ntop; i++)
			printf("%s{\"word\": \"%s\", \"count\": %llu}",
			       i ? ", " : "", top[i].word,
			       (unsigned long long)top[i].count);
		printf("]}\n");
	} else {
		printf("files %llu bytes %llu words %llu distinct %zu\n",
		       (unsigned long long)nfiles, (unsigned long long)n_bytes,
		       (unsigned long long)wc.words, used);
		for (i = 0; i < ntop; i++)
			printf("%8llu %s\n", (unsigned long long)top[i].count,
			       top[i].word);
	}
	free(top);
	mmta_wc_free(&wc);
	return 0;
usage:
	fprintf(c ? stderr : stdout,
		"usage: mmt-wordcount-ref [--out FILE] [--json] PATH...\n");
	return c ? 2 : 0;
}
