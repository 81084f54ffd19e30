// SPDX-License-Identifier: GPL-2.0
/*
 * mmt-rmat - write a Graph500 R-MAT graph (A = 0.57, B = C = 0.19) as a
 * SNAP edge list: the input of the PageRank application (docs/PAPER.md).
 *
 * Usage: mmt-rmat [--scale S] [--edgefactor E] [--seed N] [--no-permute]
 *		   [--out FILE]
 *
 * 2^S vertices (default 17: 131072, the paper's ~100k), E * 2^S edges
 * (default 16, Graph500's).  The same arguments write the same bytes on
 * every machine (tools/apps/apps.c: splitmix64, the Graph500 reference
 * generator).  Exit 0, 1 on a write error, 2 on a bad argument.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "apps.h"

static int parse_u(const char *s, unsigned long long max,
		   unsigned long long *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 0);
	return errno || end == s || *end || s[0] == '-' || *out > max;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "scale", required_argument, NULL, 's' },
		{ "edgefactor", required_argument, NULL, 'e' },
		{ "seed", required_argument, NULL, 'r' },
		{ "no-permute", no_argument, NULL, 'n' },
		{ "out", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	unsigned long long scale = 17, ef = 16, seed = 1, v;
	const char *out = NULL;
	struct mmta_graph g;
	char what[160];
	int permute = 1, c, err;
	FILE *f = stdout;

	while ((c = getopt_long(argc, argv, "s:e:r:no:h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (parse_u(optarg, 30, &scale) || scale < 1)
				goto usage;
			break;
		case 'e':
			if (parse_u(optarg, 1024, &ef) || ef < 1)
				goto usage;
			break;
		case 'r':
			if (parse_u(optarg, UINT64_MAX, &v))
				goto usage;
			seed = v;
			break;
		case 'n':
			permute = 0;
			break;
		case 'o':
			out = optarg;
			break;
		case 'h':
			c = 0;
			goto usage;
		default:
			goto usage;
		}
	}
	if (optind != argc)
		goto usage;
	err = mmta_rmat(&g, (unsigned int)scale, (unsigned int)ef, seed,
			permute);
	if (err) {
		fprintf(stderr, "mmt-rmat: %s\n", strerror(-err));
		return 1;
	}
	if (out) {
		f = fopen(out, "w");
		if (!f) {
			perror(out);
			return 1;
		}
	}
	snprintf(what, sizeof(what),
		 "Graph500 R-MAT scale %llu edgefactor %llu seed %llu A %.2f B %.2f C %.2f%s (mmt-rmat)",
		 scale, ef, seed, MMTA_RMAT_A, MMTA_RMAT_B, MMTA_RMAT_C,
		 permute ? "" : " not permuted");
	err = mmta_snap_write(&g, f, what);
	if (fclose(f) || err) {
		fprintf(stderr, "mmt-rmat: write error\n");
		return 1;
	}
	mmta_graph_free(&g);
	return 0;
usage:
	fprintf(c ? stderr : stdout,
		"usage: mmt-rmat [--scale 1..30] [--edgefactor 1..1024] [--seed N] [--no-permute] [--out FILE]\n");
	return c ? 2 : 0;
}
