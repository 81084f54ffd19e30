// SPDX-License-Identifier: GPL-2.0
/*
 * mmt-pagerank-ref - PageRank in the GAS model in one process: the
 * reference the distributed application (paper Fig. 14, docs/PAPER.md)
 * must equal to 1e-9 after the same number of iterations.
 *
 * Usage: mmt-pagerank-ref (--rmat SCALE [--edgefactor E] [--seed N] |
 *			    --snap FILE) [--iters N] [--damping D]
 *			   [--out FILE] [--json]
 *
 * Input: a Graph500 R-MAT graph made in memory (as mmt-rmat writes it) or
 * a SNAP edge list, ids remapped to 0..n-1 by first appearance.  Each
 * iteration: scatter (rank / out-degree; the dangling vertices' rank
 * pooled), gather (sum over in-edges), apply (rank = (1 - d) / n +
 * d * (gather + dangling / n)).  Ranks start at 1 / n and sum to 1.
 *
 * --out writes "VERTEX RANK" per line (%.17g, the file's own id for a
 * SNAP input), in vertex order; the summary (vertices, edges, time per
 * phase, rank sum, the top 5) goes to stdout, as JSON with --json.
 * Exit 0, 1 on an input or output error, 2 on a bad argument.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "apps.h"

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "rmat", required_argument, NULL, 'g' },
		{ "edgefactor", required_argument, NULL, 'e' },
		{ "seed", required_argument, NULL, 'r' },
		{ "snap", required_argument, NULL, 'S' },
		{ "iters", required_argument, NULL, 'i' },
		{ "damping", required_argument, NULL, 'd' },
		{ "out", required_argument, NULL, 'o' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	long scale = 0, ef = 16, iters = 20;
	unsigned long long seed = 1;
	const char *snap = NULL, *out = NULL;
	double damping = 0.85, t_sc = 0, t_ga = 0, t_ap = 0, t0, sum;
	uint32_t top[5] = { 0 }, v;
	struct mmta_graph g;
	struct mmta_pr pr;
	char err[128] = "";
	int json = 0, c, ret, k, ntop;
	char *end;
	long it;

	while ((c = getopt_long(argc, argv, "g:e:r:S:i:d:o:jh", opts,
				NULL)) != -1) {
		errno = 0;
		end = NULL;
		switch (c) {
		case 'g':
			scale = strtol(optarg, &end, 10);
			if (scale < 1 || scale > 30)
				goto usage;
			break;
		case 'e':
			ef = strtol(optarg, &end, 10);
			if (ef < 1 || ef > 1024)
				goto usage;
			break;
		case 'r':
			if (optarg[0] == '-')
				goto usage;
			seed = strtoull(optarg, &end, 0);
			break;
		case 'S':
			snap = optarg;
			break;
		case 'i':
			iters = strtol(optarg, &end, 10);
			if (iters < 1 || iters > 100000)
				goto usage;
			break;
		case 'd':
			damping = strtod(optarg, &end);
			if (!(damping >= 0 && damping < 1))
				goto usage;
			break;
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
		if (errno || (end && (end == optarg || *end)))
			goto usage;
	}
	if (optind != argc || !scale == !snap)
		goto usage;

	if (snap) {
		FILE *f = fopen(snap, "r");

		if (!f) {
			perror(snap);
			return 1;
		}
		ret = mmta_snap_load(&g, f, err, sizeof(err));
		fclose(f);
		if (!ret && !g.n) {
			ret = -EINVAL;
			snprintf(err, sizeof(err), "no edges");
		}
		if (ret) {
			fprintf(stderr, "mmt-pagerank-ref: %s: %s\n", snap, err);
			return 1;
		}
	} else {
		ret = mmta_rmat(&g, (unsigned int)scale, (unsigned int)ef,
				seed, 1);
		if (ret) {
			fprintf(stderr, "mmt-pagerank-ref: %s\n", strerror(-ret));
			return 1;
		}
	}
	ret = mmta_pr_init(&pr, &g, damping);
	if (ret) {
		fprintf(stderr, "mmt-pagerank-ref: %s\n", strerror(-ret));
		return 1;
	}
	for (it = 0; it < iters; it++) {
		t0 = mmta_now();
		mmta_pr_scatter(&pr);
		t_sc += mmta_now() - t0;
		t0 = mmta_now();
		mmta_pr_gather(&pr);
		t_ga += mmta_now() - t0;
		t0 = mmta_now();
		mmta_pr_apply(&pr);
		t_ap += mmta_now() - t0;
	}
	/* the 5 highest ranks, ties to the lower vertex */
	ntop = 0;
	sum = 0;
	for (v = 0; v < pr.n; v++) {
		sum += pr.rank[v];
		for (k = 0; k < ntop; k++)
			if (pr.rank[v] > pr.rank[top[k]])
				break;
		if (k == 5)
			continue;
		if (ntop < 5)
			ntop++;
		memmove(top + k + 1, top + k, (ntop - k - 1) * sizeof(top[0]));
		top[k] = v;
	}
	if (out) {
		FILE *f = fopen(out, "w");

		if (!f) {
			perror(out);
			return 1;
		}
		for (v = 0; v < pr.n; v++)
			fprintf(f, "%llu %.17g\n", (unsigned long long)
				(g.orig ? g.orig[v] : v), pr.rank[v]);
		if (fclose(f)) {
			perror(out);
			return 1;
		}
	}
	if (json) {
		printf("{\"app\": \"pagerank-ref\", \"vertices\": %u, \"edges\": %llu, \"iterations\": %ld, \"damping\": %.17g,\n",
		       g.n, (unsigned long long)g.m, iters, damping);
		printf(" \"seconds\": {\"scatter\": %.6f, \"gather\": %.6f, \"apply\": %.6f},\n",
		       t_sc, t_ga, t_ap);
		printf(" \"rank_sum\": %.17g, \"top\": [", sum);
		for (k = 0; k < ntop; k++)
			printf("%s{\"vertex\": %llu, \"rank\": %.17g}",
			       k ? ", " : "", (unsigned long long)
			       (g.orig ? g.orig[top[k]] : top[k]),
			       pr.rank[top[k]]);
		printf("]}\n");
	} else {
		printf("vertices %u edges %llu iterations %ld damping %g\n",
		       g.n, (unsigned long long)g.m, iters, damping);
		printf("time: scatter %.3f s, gather %.3f s, apply %.3f s\n",
		       t_sc, t_ga, t_ap);
		printf("rank sum %.17g\n", sum);
		for (k = 0; k < ntop; k++)
			printf("top %d: vertex %llu rank %.17g\n", k + 1,
			       (unsigned long long)
			       (g.orig ? g.orig[top[k]] : top[k]),
			       pr.rank[top[k]]);
	}
	mmta_pr_free(&pr);
	mmta_graph_free(&g);
	return 0;
usage:
	fprintf(c ? stderr : stdout,
		"usage: mmt-pagerank-ref (--rmat SCALE [--edgefactor E] [--seed N] | --snap FILE) [--iters N] [--damping D] [--out FILE] [--json]\n");
	return c ? 2 : 0;
}
