// SPDX-License-Identifier: GPL-2.0
/*
 * apps.c - the PRNG, the R-MAT generator, the SNAP loader and PageRank
 * (GAS) of the paper's applications; see apps.h.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "apps.h"

uint64_t mmta_rng_next(struct mmta_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

double mmta_rng_double(struct mmta_rng *r)
{
	return (mmta_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* uniform in [0, n), n >= 1, without modulo bias */
static uint64_t rng_below(struct mmta_rng *r, uint64_t n)
{
	uint64_t lim = -n % n, x;

	do
		x = mmta_rng_next(r);
	while (x < lim);
	return x % n;
}

double mmta_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void mmta_graph_free(struct mmta_graph *g)
{
	free(g->src);
	free(g->dst);
	free(g->orig);
	memset(g, 0, sizeof(*g));
}

int mmta_rmat(struct mmta_graph *g, unsigned int scale,
	      unsigned int edgefactor, uint64_t seed, int permute)
{
	const double ab = MMTA_RMAT_A + MMTA_RMAT_B;
	const double c_norm = MMTA_RMAT_C / (1.0 - ab);
	const double a_norm = MMTA_RMAT_A / ab;
	struct mmta_rng r = { seed };
	uint32_t *perm = NULL;
	uint64_t i;
	unsigned int b;

	memset(g, 0, sizeof(*g));
	if (scale < 1 || scale > 30 || edgefactor < 1 || edgefactor > 1024)
		return -EINVAL;
	g->n = 1u << scale;
	g->m = (uint64_t)edgefactor << scale;
	g->src = malloc(g->m * sizeof(*g->src));
	g->dst = malloc(g->m * sizeof(*g->dst));
	if (!g->src || !g->dst)
		goto nomem;
	for (i = 0; i < g->m; i++) {
		uint32_t u = 0, v = 0;

		for (b = 0; b < scale; b++) {
			int ii = mmta_rng_double(&r) > ab;
			int jj = mmta_rng_double(&r) > (ii ? c_norm : a_norm);

			u |= (uint32_t)ii << b;
			v |= (uint32_t)jj << b;
		}
		g->src[i] = u;
		g->dst[i] = v;
	}
	if (!permute)
		return 0;
	/* relabel the vertices, then shuffle the edges (Fisher-Yates) */
	perm = malloc((size_t)g->n * sizeof(*perm));
	if (!perm)
		goto nomem;
	for (i = 0; i < g->n; i++)
		perm[i] = (uint32_t)i;
	for (i = g->n - 1; i > 0; i--) {
		uint64_t j = rng_below(&r, i + 1);
		uint32_t t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	for (i = 0; i < g->m; i++) {
		g->src[i] = perm[g->src[i]];
		g->dst[i] = perm[g->dst[i]];
	}
	for (i = g->m - 1; i > 0; i--) {
		uint64_t j = rng_below(&r, i + 1);
		uint32_t s = g->src[i], d = g->dst[i];

		g->src[i] = g->src[j];
		g->dst[i] = g->dst[j];
		g->src[j] = s;
		g->dst[j] = d;
	}
	free(perm);
	return 0;
nomem:
	free(perm);
	mmta_graph_free(g);
	return -ENOMEM;
}

/* ------------------------------------------------------------ SNAP */

/* Open-addressing map from a file's ids to 0..n-1. */
struct idmap {
	uint64_t *key;
	uint32_t *val;
	size_t cap;	/* power of two */
	uint32_t n;
	uint64_t *orig;	/* val -> key, grows with n */
	size_t orig_cap;
};

static size_t id_hash(uint64_t k, size_t cap)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (size_t)k & (cap - 1);
}

static int idmap_grow(struct idmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 1024, i, h;
	uint64_t *key = malloc(cap * sizeof(*key));
	uint32_t *val = malloc(cap * sizeof(*val));

	if (!key || !val) {
		free(key);
		free(val);
		return -ENOMEM;
	}
	for (i = 0; i < cap; i++)
		val[i] = UINT32_MAX;
	for (i = 0; i < m->cap; i++) {
		if (m->val[i] == UINT32_MAX)
			continue;
		for (h = id_hash(m->key[i], cap); val[h] != UINT32_MAX;
		     h = (h + 1) & (cap - 1))
			;
		key[h] = m->key[i];
		val[h] = m->val[i];
	}
	free(m->key);
	free(m->val);
	m->key = key;
	m->val = val;
	m->cap = cap;
	return 0;
}

/* The new id of @k, assigning the next one on first sight. */
static int idmap_get(struct idmap *m, uint64_t k, uint32_t *out)
{
	size_t h;

	if ((m->n + 1) * 2 > m->cap && idmap_grow(m))
		return -ENOMEM;
	for (h = id_hash(k, m->cap); m->val[h] != UINT32_MAX;
	     h = (h + 1) & (m->cap - 1))
		if (m->key[h] == k) {
			*out = m->val[h];
			return 0;
		}
	if (m->n == UINT32_MAX - 1)
		return -EINVAL;
	if (m->n == m->orig_cap) {
		size_t c = m->orig_cap ? m->orig_cap * 2 : 1024;
		uint64_t *o = realloc(m->orig, c * sizeof(*o));

		if (!o)
			return -ENOMEM;
		m->orig = o;
		m->orig_cap = c;
	}
	m->key[h] = k;
	m->val[h] = m->n;
	m->orig[m->n] = k;
	*out = m->n++;
	return 0;
}

/* One unsigned decimal id at *@p, skipping blanks; -EINVAL if none. */
static int parse_id(const char **p, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;

	while (*s == ' ' || *s == '\t')
		s++;
	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	for (; isdigit((unsigned char)*s); s++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*p = s;
	*out = v;
	return 0;
}

int mmta_snap_load(struct mmta_graph *g, FILE *f, char *err, size_t errlen)
{
	struct idmap map = { 0 };
	size_t cap = 0, linecap = 0;
	uint64_t lineno = 0;
	char *line = NULL;
	ssize_t len;
	int ret = 0;

	memset(g, 0, sizeof(*g));
	while ((len = getline(&line, &linecap, f)) >= 0) {
		const char *p = line;
		uint64_t a, b;
		uint32_t u, v;

		lineno++;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '#' || *p == '\n' || *p == '\r' || !*p)
			continue;
		if (parse_id(&p, &a) || parse_id(&p, &b)) {
			snprintf(err, errlen, "line %llu: not FROM TO",
				 (unsigned long long)lineno);
			ret = -EINVAL;
			goto out;
		}
		while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
			p++;
		if (*p) {
			snprintf(err, errlen, "line %llu: more than FROM TO",
				 (unsigned long long)lineno);
			ret = -EINVAL;
			goto out;
		}
		ret = idmap_get(&map, a, &u);
		if (!ret)
			ret = idmap_get(&map, b, &v);
		if (ret) {
			snprintf(err, errlen, "line %llu: %s",
				 (unsigned long long)lineno,
				 ret == -ENOMEM ? "out of memory" :
						  "too many vertices");
			goto out;
		}
		if (g->m == cap) {
			size_t c = cap ? cap * 2 : 4096;
			uint32_t *s = realloc(g->src, c * sizeof(*s));
			uint32_t *d = s ? realloc(g->dst, c * sizeof(*d)) : NULL;

			if (s)
				g->src = s;
			if (!s || !d) {
				snprintf(err, errlen, "out of memory");
				ret = -ENOMEM;
				goto out;
			}
			g->dst = d;
			cap = c;
		}
		g->src[g->m] = u;
		g->dst[g->m] = v;
		g->m++;
	}
	if (ferror(f)) {
		snprintf(err, errlen, "read error");
		ret = -EIO;
	}
out:
	free(line);
	free(map.key);
	free(map.val);
	if (ret) {
		free(map.orig);
		mmta_graph_free(g);
		return ret;
	}
	g->n = map.n;
	g->orig = map.orig;
	return 0;
}

int mmta_snap_write(const struct mmta_graph *g, FILE *f, const char *what)
{
	uint64_t i;

	fprintf(f, "# %s\n# Nodes: %u Edges: %llu\n# FromNodeId\tToNodeId\n",
		what, g->n, (unsigned long long)g->m);
	for (i = 0; i < g->m; i++)
		fprintf(f, "%u\t%u\n", g->src[i], g->dst[i]);
	return ferror(f) ? -EIO : 0;
}

/* ------------------------------------------------------------ PageRank */

void mmta_pr_free(struct mmta_pr *pr)
{
	free(pr->in_off);
	free(pr->in_src);
	free(pr->outdeg);
	free(pr->rank);
	free(pr->contrib);
	free(pr->acc);
	memset(pr, 0, sizeof(*pr));
}

int mmta_pr_init(struct mmta_pr *pr, const struct mmta_graph *g,
		 double damping)
{
	uint64_t *fill, i;
	uint32_t v;

	memset(pr, 0, sizeof(*pr));
	if (!g->n || !(damping >= 0 && damping < 1))
		return -EINVAL;
	pr->n = g->n;
	pr->damping = damping;
	pr->in_off = calloc((size_t)g->n + 1, sizeof(*pr->in_off));
	pr->in_src = malloc((g->m ? g->m : 1) * sizeof(*pr->in_src));
	pr->outdeg = calloc(g->n, sizeof(*pr->outdeg));
	pr->rank = malloc(g->n * sizeof(double));
	pr->contrib = malloc(g->n * sizeof(double));
	pr->acc = malloc(g->n * sizeof(double));
	fill = calloc((size_t)g->n + 1, sizeof(*fill));
	if (!pr->in_off || !pr->in_src || !pr->outdeg || !pr->rank ||
	    !pr->contrib || !pr->acc || !fill) {
		free(fill);
		mmta_pr_free(pr);
		return -ENOMEM;
	}
	/* counting sort by destination, stable: edge order within a vertex */
	for (i = 0; i < g->m; i++) {
		pr->in_off[g->dst[i] + 1]++;
		pr->outdeg[g->src[i]]++;
	}
	for (v = 0; v < g->n; v++)
		pr->in_off[v + 1] += pr->in_off[v];
	for (i = 0; i < g->m; i++)
		pr->in_src[pr->in_off[g->dst[i]] + fill[g->dst[i]]++] =
			g->src[i];
	free(fill);
	for (v = 0; v < g->n; v++)
		pr->rank[v] = 1.0 / g->n;
	return 0;
}

double mmta_pr_scatter_range(struct mmta_pr *pr, uint32_t lo, uint32_t hi)
{
	double dangling = 0;
	uint32_t u;

	for (u = lo; u < hi; u++) {
		if (pr->outdeg[u]) {
			pr->contrib[u] = pr->rank[u] / pr->outdeg[u];
		} else {
			pr->contrib[u] = 0;
			dangling += pr->rank[u];
		}
	}
	return dangling;
}

void mmta_pr_scatter(struct mmta_pr *pr)
{
	pr->dangling = mmta_pr_scatter_range(pr, 0, pr->n);
}

void mmta_pr_gather_range(struct mmta_pr *pr, uint32_t lo, uint32_t hi)
{
	uint32_t v;
	uint64_t e;

	for (v = lo; v < hi; v++) {
		double s = 0;

		for (e = pr->in_off[v]; e < pr->in_off[v + 1]; e++)
			s += pr->contrib[pr->in_src[e]];
		pr->acc[v] = s;
	}
}

void mmta_pr_gather(struct mmta_pr *pr)
{
	mmta_pr_gather_range(pr, 0, pr->n);
}

void mmta_pr_apply_range(struct mmta_pr *pr, uint32_t lo, uint32_t hi)
{
	double base = (1 - pr->damping) / pr->n +
		      pr->damping * pr->dangling / pr->n;
	uint32_t v;

	for (v = lo; v < hi; v++)
		pr->rank[v] = base + pr->damping * pr->acc[v];
}

void mmta_pr_apply(struct mmta_pr *pr)
{
	mmta_pr_apply_range(pr, 0, pr->n);
}

/* ---- WordCount: the tokenizer and the word table */

static void mmta_oom(void)
{
	fprintf(stderr, "out of memory\n");
	exit(1);
}

uint64_t mmta_fnv1a(const void *s, size_t n)
{
	const unsigned char *p = s;
	uint64_t h = 0xcbf29ce484222325ull;

	while (n--)
		h = (h ^ *p++) * 0x100000001b3ull;
	return h;
}

static void wc_grow(struct mmta_wc *wc)
{
	size_t ncap = wc->cap ? wc->cap * 2 : 1 << 16, i, h;
	struct mmta_wc_ent *nt = calloc(ncap, sizeof(*nt));

	if (!nt)
		mmta_oom();
	for (i = 0; i < wc->cap; i++) {
		if (!wc->tab[i].word)
			continue;
		for (h = mmta_fnv1a(wc->tab[i].word, wc->tab[i].len) & (ncap - 1);
		     nt[h].word; h = (h + 1) & (ncap - 1))
			;
		nt[h] = wc->tab[i];
	}
	free(wc->tab);
	wc->tab = nt;
	wc->cap = ncap;
}

void mmta_wc_init(struct mmta_wc *wc)
{
	memset(wc, 0, sizeof(*wc));
	wc_grow(wc);
}

void mmta_wc_add(struct mmta_wc *wc, const char *w, size_t n, uint64_t count)
{
	size_t h, mask;

	if ((wc->used + 1) * 2 > wc->cap)
		wc_grow(wc);
	wc->words += count;
	mask = wc->cap - 1;
	for (h = mmta_fnv1a(w, n) & mask; wc->tab[h].word; h = (h + 1) & mask)
		if (wc->tab[h].len == n && !memcmp(wc->tab[h].word, w, n)) {
			wc->tab[h].count += count;
			return;
		}
	wc->tab[h].word = malloc(n + 1);
	if (!wc->tab[h].word)
		mmta_oom();
	memcpy(wc->tab[h].word, w, n);
	wc->tab[h].word[n] = 0;
	wc->tab[h].len = n;
	wc->tab[h].count = count;
	wc->used++;
}

void mmta_wc_end(struct mmta_wc *wc)
{
	if (wc->cur_len)
		mmta_wc_add(wc, wc->cur, wc->cur_len, 1);
	wc->cur_len = 0;
}

void mmta_wc_feed(struct mmta_wc *wc, const unsigned char *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char c = b[i];

		if (c >= 'A' && c <= 'Z') {
			c += 'a' - 'A';
		} else if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) {
			mmta_wc_end(wc);
			continue;
		}
		if (wc->cur_len == wc->cur_cap) {
			wc->cur_cap = wc->cur_cap ? wc->cur_cap * 2 : 256;
			wc->cur = realloc(wc->cur, wc->cur_cap);
			if (!wc->cur)
				mmta_oom();
		}
		wc->cur[wc->cur_len++] = (char)c;
	}
}

int mmta_wc_file(struct mmta_wc *wc, const char *path, uint64_t *bytes)
{
	static unsigned char buf[1 << 16];
	int fd = open(path, O_RDONLY | O_CLOEXEC), e = 0;
	ssize_t n;

	if (fd < 0) {
		e = -errno;
		perror(path);
		return e;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		mmta_wc_feed(wc, buf, (size_t)n);
		if (bytes)
			*bytes += (uint64_t)n;
	}
	if (n < 0) {
		e = -errno;
		perror(path);
	}
	close(fd);
	mmta_wc_end(wc);	/* a file's end ends its last word */
	return e;
}

static int wc_by_word(const void *a, const void *b)
{
	const struct mmta_wc_ent *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->word, y->word, n);

	if (c)
		return c;
	return x->len < y->len ? -1 : x->len > y->len;
}

void mmta_wc_sort(struct mmta_wc *wc)
{
	size_t i, j;

	for (i = j = 0; i < wc->cap; i++)
		if (wc->tab[i].word)
			wc->tab[j++] = wc->tab[i];
	qsort(wc->tab, wc->used, sizeof(*wc->tab), wc_by_word);
	wc->cap = 0;		/* no longer a hash table */
}

void mmta_wc_free(struct mmta_wc *wc)
{
	size_t i, n = wc->cap ? wc->cap : wc->used;

	for (i = 0; i < n; i++)
		free(wc->tab[i].word);
	free(wc->tab);
	free(wc->cur);
	memset(wc, 0, sizeof(*wc));
}

/* nftw() has no user argument: the walk's state */
static struct {
	char **list;
	size_t n, cap;
	int failed;
} walk_st;

static int walk_one(const char *path, const struct stat *st, int type,
		    struct FTW *ftw)
{
	(void)ftw;
	if (type == FTW_F && S_ISREG(st->st_mode)) {
		if (walk_st.n == walk_st.cap) {
			walk_st.cap = walk_st.cap ? walk_st.cap * 2 : 256;
			walk_st.list = realloc(walk_st.list,
					       walk_st.cap * sizeof(char *));
			if (!walk_st.list)
				mmta_oom();
		}
		walk_st.list[walk_st.n] = strdup(path);
		if (!walk_st.list[walk_st.n++])
			mmta_oom();
	} else if (type == FTW_DNR || type == FTW_NS) {
		fprintf(stderr, "%s: cannot read\n", path);
		walk_st.failed = 1;
	}
	return 0;
}

static int by_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int mmta_list_files(char *const *paths, int npaths, char ***out, size_t *nout)
{
	int i;

	memset(&walk_st, 0, sizeof(walk_st));
	for (i = 0; i < npaths; i++)
		if (nftw(paths[i], walk_one, 32, FTW_PHYS)) {
			perror(paths[i]);
			walk_st.failed = 1;
		}
	qsort(walk_st.list, walk_st.n, sizeof(char *), by_str);
	*out = walk_st.list;
	*nout = walk_st.n;
	if (walk_st.failed) {
		mmta_free_list(walk_st.list, walk_st.n);
		*out = NULL;
		*nout = 0;
		return -EIO;
	}
	return 0;
}

void mmta_free_list(char **list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(list[i]);
	free(list);
}
