/* SPDX-License-Identifier: GPL-2.0 */
/*
 * apps.h - shared code of the paper's applications (docs/PAPER.md
 * "The applications"): a deterministic PRNG, the Graph500 R-MAT generator,
 * a SNAP edge-list loader with id remapping, the graph in CSR form and
 * PageRank in the GAS model.  Plain C, no module: the single-process
 * references and, later, the MPI ranks use the same code, so their results
 * can be compared.
 */
#ifndef MMT_APPS_H
#define MMT_APPS_H

#include <stdint.h>
#include <stdio.h>

/* splitmix64 (Steele, Lea, Flood 2014): the same stream on every machine */
struct mmta_rng {
	uint64_t s;
};

uint64_t mmta_rng_next(struct mmta_rng *r);
/* uniform in [0, 1) with 53 bits */
double mmta_rng_double(struct mmta_rng *r);

/* Graph500 R-MAT initiator (the reference generator's A, B, C; D = rest) */
#define MMTA_RMAT_A	0.57
#define MMTA_RMAT_B	0.19
#define MMTA_RMAT_C	0.19

/**
 * struct mmta_graph - a directed multigraph, edges in input order
 * @n: vertices, ids 0..@n-1
 * @m: edges
 * @src, @dst: edge i goes from @src[i] to @dst[i]
 * @orig: when loaded from SNAP, @orig[v] is the id vertex v had in the
 *	file (ids are remapped to 0..n-1 by first appearance); else NULL
 */
struct mmta_graph {
	uint32_t n;
	uint64_t m;
	uint32_t *src, *dst;
	uint64_t *orig;
};

/**
 * mmta_rmat() - the Graph500 Kronecker (R-MAT) generator
 * @g: (out) graph of 2^@scale vertices and @edgefactor * 2^@scale edges
 * @scale: 1..30
 * @edgefactor: 1..1024 (Graph500: 16)
 * @seed: PRNG seed; the same arguments give the same graph, byte for byte
 * @permute: relabel the vertices and shuffle the edges at random, as the
 *	Graph500 reference does (false: the raw quadrant structure, for tests)
 *
 * Source: the Graph500 reference kronecker_generator.m: for each of @scale
 * bits, ii = rand > A + B, jj = rand > (ii ? C / (C + D) : A / (A + B)).
 * Return: 0, -EINVAL for a bad argument, -ENOMEM.
 */
int mmta_rmat(struct mmta_graph *g, unsigned int scale,
	      unsigned int edgefactor, uint64_t seed, int permute);

/**
 * mmta_snap_load() - read a SNAP edge list ("# comment" lines, then one
 * "FROM TO" pair of unsigned decimal ids per line, blanks or tabs between)
 * @g: (out) graph; ids remapped to 0..n-1 by first appearance, @g->orig
 *	keeps the file's ids
 * @f: the file
 * @err: (out) a message for a failure, with the line number
 * @errlen: bytes of @err
 *
 * Return: 0, -EINVAL for a malformed line or more than 2^32-1 vertices,
 * -ENOMEM, -EIO for a read error.
 */
int mmta_snap_load(struct mmta_graph *g, FILE *f, char *err, size_t errlen);

/* Write @g as a SNAP edge list with a header comment (@what). */
int mmta_snap_write(const struct mmta_graph *g, FILE *f, const char *what);

void mmta_graph_free(struct mmta_graph *g);

/**
 * struct mmta_pr - PageRank in the GAS model over one graph
 * @n: vertices
 * @in_off: CSR by destination: the in-edges of v are
 *	@in_src[@in_off[v] .. @in_off[v + 1]), in the graph's edge order
 * @in_src: source of each in-edge
 * @outdeg: out-degree of each vertex (multi-edges counted)
 * @rank: current ranks, summing to 1
 * @contrib: scatter output: rank / outdeg (0 for a dangling vertex)
 * @acc: gather output: sum of the in-neighbours' contributions
 * @dangling: rank held by vertices without out-edges (scatter output)
 * @damping: d, 0.85 by default
 */
struct mmta_pr {
	uint32_t n;
	uint64_t *in_off;
	uint32_t *in_src;
	uint32_t *outdeg;
	double *rank, *contrib, *acc;
	double dangling, damping;
};

int mmta_pr_init(struct mmta_pr *pr, const struct mmta_graph *g,
		 double damping);
/* Scatter: contrib[u] = rank[u] / outdeg[u]; dangling = sum of the rest. */
void mmta_pr_scatter(struct mmta_pr *pr);
/* Gather: acc[v] = sum of contrib[u] over the in-edges u -> v, in order. */
void mmta_pr_gather(struct mmta_pr *pr);
/* Apply: rank[v] = (1 - d) / n + d * (acc[v] + dangling / n). */
void mmta_pr_apply(struct mmta_pr *pr);
/*
 * The same steps on the vertices lo..hi-1 only (a rank's share): scatter
 * returns the dangling rank of those vertices and leaves pr->dangling
 * alone; apply uses pr->dangling, the sum over every share.
 */
double mmta_pr_scatter_range(struct mmta_pr *pr, uint32_t lo, uint32_t hi);
void mmta_pr_gather_range(struct mmta_pr *pr, uint32_t lo, uint32_t hi);
void mmta_pr_apply_range(struct mmta_pr *pr, uint32_t lo, uint32_t hi);
void mmta_pr_free(struct mmta_pr *pr);

/**
 * struct mmta_wc - a word count: words and their counts in a hash table
 * @tab: open-addressing table of @cap slots (a power of two), at most half
 *	full; a slot with a NULL @word is free
 * @cap: slots
 * @used: distinct words
 * @words: words counted (with multiplicity)
 * @cur, @cur_len, @cur_cap: the word being read, across mmta_wc_feed() calls
 *
 * The tokenizer of the WordCount application and its reference: a word is
 * a maximal run of ASCII letters and digits, folded to lower case; every
 * other byte separates words; the end of a file ends its last word.
 * Single-threaded; every allocation failure exits the process with status 1
 * ("out of memory" on stderr): these are tools, not a library.
 */
struct mmta_wc_ent {
	char *word;
	size_t len;
	uint64_t count;
};

struct mmta_wc {
	struct mmta_wc_ent *tab;
	size_t cap, used;
	uint64_t words;
	char *cur;
	size_t cur_len, cur_cap;
};

/* 64-bit FNV-1a of @n bytes: the table's hash and the shuffle's partition */
uint64_t mmta_fnv1a(const void *s, size_t n);
void mmta_wc_init(struct mmta_wc *wc);
/* add @count occurrences of the word @w (@n bytes, not NUL-terminated) */
void mmta_wc_add(struct mmta_wc *wc, const char *w, size_t n, uint64_t count);
/* tokenize @n bytes of text, counting every word they end */
void mmta_wc_feed(struct mmta_wc *wc, const unsigned char *b, size_t n);
/* end the word being read (the end of a file) */
void mmta_wc_end(struct mmta_wc *wc);
/**
 * mmta_wc_file() - count the words of one file
 * @wc: the count
 * @path: a regular file
 * @bytes: (out, optional) bytes read, added to
 * Return: 0; -errno of open(2) or read(2) (perror()ed).
 */
int mmta_wc_file(struct mmta_wc *wc, const char *path, uint64_t *bytes);
/*
 * mmta_wc_sort() - compact @wc->tab to its @used words, sorted by their
 * bytes (as LC_ALL=C sort); afterwards the table accepts no more words.
 */
void mmta_wc_sort(struct mmta_wc *wc);
void mmta_wc_free(struct mmta_wc *wc);

/**
 * mmta_list_files() - every regular file under some paths, sorted
 * @paths: files or directories (walked recursively, symbolic links not
 *	followed)
 * @npaths: entries of @paths
 * @out: (out) malloc()ed array of malloc()ed paths, sorted by their bytes
 * @nout: (out) entries of @out
 * Return: 0; -EIO when a path or directory cannot be read (printed).
 */
int mmta_list_files(char *const *paths, int npaths, char ***out, size_t *nout);
void mmta_free_list(char **list, size_t n);

double mmta_now(void);

#endif /* MMT_APPS_H */
