// SPDX-License-Identifier: GPL-2.0
/*
 * mmt-pagerank - PageRank in the GAS model across nodes (paper Fig. 14,
 * docs/PAPER.md, man/mmt-apps.1).  P ranks; rank p owns the vertices
 * p * n / P .. (p + 1) * n / P - 1 and the in-edges of those vertices.
 * Each iteration: scatter (rank / out-degree of the own vertices, their
 * dangling rank summed), the remote transfer (to every other rank q, the
 * contributions of the own vertices that q's in-edges name, in vertex
 * order, as a PMO over an mmt connection on the channel picked: plain,
 * secure or mmt), the dangling sums over the control plane, gather (the
 * sum over the in-edges, local and remote contributions) and apply.  The
 * ranks equal mmt-pagerank-ref's to 1e-9 after the same iterations.
 *
 * Every rank builds the same graph (mmt-rmat's generator, or a SNAP file
 * present on every host).  Control plane and options as mmt-wordcount
 * (apps_net.h); mmt-pagerank-mpi is the MPI build.
 * Exit 0; 1 on a failure (a rank differs from --check by more than 1e-9,
 * a transfer failed); 2 on a bad argument.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apps.h"
#include "apps_net.h"
#include "libmmt.h"

#define net mmta_net
#define PR_TOL	1e-9

static struct {
	unsigned int iters, scale, edgefactor, compute;
	uint64_t seed;
	double damping;
	const char *snap, *out, *check;	/* --snap, --out, --check */
	int json;			/* --json */
} g = {
	.iters = 20, .scale = 0, .edgefactor = 16, .seed = 1, .damping = 0.85,
	.compute = 1,
};

/* the timings of one rank for one run, s (gathered as doubles) */
struct pr_stats {
	double scatter, remote, dangling, gather, apply;
	double remote_kernel;	/* the kernel's send + recv time */
	double remote_bytes;	/* contributions sent, bytes */
	double mismatch, checked;
};

static uint32_t lo_of(int p, uint32_t n)
{
	return (uint32_t)((uint64_t)n * p / net.size);
}

/*
 * the sorted vertices of rank @from whose contributions rank @to's
 * in-edges need: @list (malloc()ed), their number
 */
static uint32_t need_list(const struct mmta_pr *pr, int from, int to,
			  uint32_t **list, uint64_t *cross)
{
	uint32_t n = pr->n, flo = lo_of(from, n), fhi = lo_of(from + 1, n);
	uint32_t v, k = 0;
	unsigned char *mark = calloc(fhi - flo + 1, 1);
	uint64_t e;

	if (!mark)
		mmta_die("out of memory");
	for (v = lo_of(to, n); v < lo_of(to + 1, n); v++)
		for (e = pr->in_off[v]; e < pr->in_off[v + 1]; e++) {
			uint32_t u = pr->in_src[e];

			if (u >= flo && u < fhi) {
				mark[u - flo] = 1;
				(*cross)++;
			}
		}
	*list = malloc((size_t)(fhi - flo + 1) * sizeof(uint32_t));
	if (!*list)
		mmta_die("out of memory");
	for (v = flo; v < fhi; v++)
		if (mark[v - flo])
			(*list)[k++] = v;
	free(mark);
	return k;
}

struct peer {
	int q, conn;
	uint32_t nsend, nrecv;
	uint32_t *send, *recv;	/* need_list(me, q) and need_list(q, me) */
	double *buf;
};

/* PMO payload: a u64 count, then the doubles (at least 8 bytes) */
static void send_to(int devfd, struct peer *pe, const struct mmta_pr *pr,
		    unsigned int channel, struct pr_stats *st)
{
	struct mmt_xfer x = { 0 };
	size_t len = 8 + (size_t)pe->nsend * 8;
	uint64_t cnt = pe->nsend;
	uint32_t i;
	int fd, r;

	memcpy(pe->buf, &cnt, 8);
	for (i = 0; i < pe->nsend; i++)
		pe->buf[1 + i] = pr->contrib[pe->send[i]];
	fd = mmta_make_pmo(devfd, len, channel, 0);
	if (mmtu_pmo_write_all(fd, pe->buf, len, 0) < 0)
		mmta_die("write the contributions into a PMO: %s",
			 mmtu_strerror(errno));
	r = mmtu_send(pe->conn, fd, channel, 0, net.timeout_ms, &x);
	if (r < 0)
		mmta_die("send to rank %d on the %s channel: %s", pe->q,
			 mmta_chan_names[channel], mmtu_strerror(r));
	st->remote_kernel += x.ns / 1e9;
	st->remote_bytes += (double)len;
	close(fd);
}

static void recv_from(int devfd, struct peer *pe, struct mmta_pr *pr,
		      unsigned int channel, struct pr_stats *st)
{
	struct mmt_xfer x = { 0 };
	size_t len = 8 + (size_t)pe->nrecv * 8;
	uint64_t cnt;
	uint32_t i;
	int fd, r;

	fd = mmta_make_pmo(devfd, len, channel, 1);
	r = mmtu_recv(pe->conn, fd, channel, 0, net.timeout_ms, &x);
	if (r < 0)
		mmta_die("receive from rank %d on the %s channel: %s", pe->q,
			 mmta_chan_names[channel], mmtu_strerror(r));
	if (mmtu_pmo_read_all(fd, pe->buf, len, 0) < 0)
		mmta_die("read the contributions of rank %d: %s", pe->q,
			 mmtu_strerror(errno));
	close(fd);
	memcpy(&cnt, pe->buf, 8);
	if (cnt != pe->nrecv)
		mmta_die("rank %d sent %llu contributions, %u expected", pe->q,
			 (unsigned long long)cnt, pe->nrecv);
	for (i = 0; i < pe->nrecv; i++)
		pr->contrib[pe->recv[i]] = pe->buf[1 + i];
	st->remote_kernel += x.ns / 1e9;
}

static int check_ranks(const struct mmta_pr *pr, const struct mmta_graph *gr)
{
	uint32_t v = 0, lo = lo_of(net.rank, pr->n), hi = lo_of(net.rank + 1, pr->n);
	FILE *f = fopen(g.check, "r");
	unsigned long long id;
	double want;
	int bad = 0;

	if (!f)
		mmta_die("%s: %s", g.check, strerror(errno));
	while (v < hi && fscanf(f, "%llu %lf", &id, &want) == 2) {
		uint64_t mine = gr->orig ? gr->orig[v] : v;

		if (v >= lo && (id != mine || !(fabs(pr->rank[v] - want) <= PR_TOL))) {
			fprintf(stderr, "mmt-pagerank: rank %d: vertex %llu: %.17g, %s has %llu %.17g\n",
				net.rank, (unsigned long long)mine, pr->rank[v],
				g.check, id, want);
			bad = 1;
			break;
		}
		v++;
	}
	fclose(f);
	if (!bad && v != hi) {
		fprintf(stderr, "mmt-pagerank: rank %d: %s ends at vertex %u\n",
			net.rank, g.check, v);
		bad = 1;
	}
	return bad;
}

static void write_ranks(const struct mmta_pr *pr, const struct mmta_graph *gr,
			const char *channel)
{
	uint32_t v, hi = lo_of(net.rank + 1, pr->n);
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s.%s.%d", g.out, channel, net.rank);
	f = fopen(path, "w");
	if (!f)
		mmta_die("%s: %s", path, strerror(errno));
	for (v = lo_of(net.rank, pr->n); v < hi; v++)
		fprintf(f, "%llu %.17g\n",
			(unsigned long long)(gr->orig ? gr->orig[v] : v),
			pr->rank[v]);
	if (fclose(f))
		mmta_die("%s: %s", path, strerror(errno));
}

/* one run of @g.iters iterations; e2e on rank 0 in *@e2e */
static void run(int devfd, struct mmta_pr *pr, const struct mmta_graph *gr,
		struct peer *peers, int npeers, unsigned int channel,
		double *e2e, struct pr_stats *all)
{
	uint32_t lo = lo_of(net.rank, pr->n), hi = lo_of(net.rank + 1, pr->n);
	double part, parts[MMTA_MAX_RANKS], t0, t;
	struct pr_stats st = { 0 };
	unsigned int it, k;
	uint32_t v;
	int i;

	for (v = 0; v < pr->n; v++)
		pr->rank[v] = 1.0 / pr->n;
	mmta_step(1, "%s: barrier before the run", mmta_chan_names[channel]);
	mmta_ctl_barrier();
	t0 = mmta_now();
	for (it = 0; it < g.iters; it++) {
		t = mmta_now();
		part = mmta_pr_scatter_range(pr, lo, hi);
		st.scatter += mmta_now() - t;
		/* remote transfer: pairs p, p ^ k; the lower rank sends first */
		t = mmta_now();
		for (i = 0; i < npeers; i++) {
			struct peer *pe = &peers[i];

			if (net.rank < pe->q) {
				mmta_step(0, "%s: iteration %u: send to rank %d",
					  mmta_chan_names[channel], it, pe->q);
				send_to(devfd, pe, pr, channel, &st);
				mmta_step(0, "%s: iteration %u: receive from rank %d",
					  mmta_chan_names[channel], it, pe->q);
				recv_from(devfd, pe, pr, channel, &st);
			} else {
				mmta_step(0, "%s: iteration %u: receive from rank %d",
					  mmta_chan_names[channel], it, pe->q);
				recv_from(devfd, pe, pr, channel, &st);
				mmta_step(0, "%s: iteration %u: send to rank %d",
					  mmta_chan_names[channel], it, pe->q);
				send_to(devfd, pe, pr, channel, &st);
			}
		}
		st.remote += mmta_now() - t;
		t = mmta_now();
		mmta_step(0, "%s: iteration %u: allgather (dangling sums)",
			  mmta_chan_names[channel], it);
		mmta_ctl_allgather(&part, sizeof(part), parts);
		pr->dangling = 0;
		for (i = 0; i < net.size; i++)
			pr->dangling += parts[i];
		st.dangling += mmta_now() - t;
		t = mmta_now();
		/* --compute-per-edge K: the same sums K times */
		for (k = 0; k < g.compute; k++)
			mmta_pr_gather_range(pr, lo, hi);
		st.gather += mmta_now() - t;
		t = mmta_now();
		mmta_pr_apply_range(pr, lo, hi);
		st.apply += mmta_now() - t;
	}
	mmta_step(1, "%s: barrier after %u iterations",
		  mmta_chan_names[channel], g.iters);
	mmta_ctl_barrier();
	*e2e = mmta_now() - t0;
	st.checked = !!g.check;
	if (g.check)
		st.mismatch = check_ranks(pr, gr);
	if (g.out)
		write_ranks(pr, gr, mmta_chan_names[channel]);
	mmta_step(0, "%s: allgather (timings)", mmta_chan_names[channel]);
	mmta_ctl_allgather(&st, sizeof(st), all);
}

static double rmax(const struct pr_stats *a, size_t off)
{
	double m = 0, v;
	int i;

	for (i = 0; i < net.size; i++) {
		memcpy(&v, (const char *)&a[i] + off, sizeof(v));
		m = v > m ? v : m;
	}
	return m;
}

static double rsum(const struct pr_stats *a, size_t off)
{
	double s = 0, v;
	int i;

	for (i = 0; i < net.size; i++) {
		memcpy(&v, (const char *)&a[i] + off, sizeof(v));
		s += v;
	}
	return s;
}

#define RMAX(a, f)	rmax(a, offsetof(struct pr_stats, f))
#define RSUM(a, f)	rsum(a, offsetof(struct pr_stats, f))

static void report(unsigned int channel, double e2e, const struct pr_stats *a,
		   int first, int last)
{
	double it = RMAX(a, scatter) + RMAX(a, remote) + RMAX(a, dangling) +
		    RMAX(a, gather) + RMAX(a, apply);
	double share = it > 0 ? RMAX(a, remote) / it : 0;
	const char *res = RSUM(a, checked) != net.size ? "null" :
			  RSUM(a, mismatch) ? "false" : "true";

	if (g.json) {
		printf("%s    {\"channel\": \"%s\", \"e2e_s\": %.6f, \"scatter_s\": %.6f, \"remote_s\": %.6f, \"dangling_s\": %.6f, \"gather_s\": %.6f, \"apply_s\": %.6f,\n",
		       first ? "" : ",\n", mmta_chan_names[channel], e2e,
		       RMAX(a, scatter), RMAX(a, remote), RMAX(a, dangling),
		       RMAX(a, gather), RMAX(a, apply));
		printf("     \"remote_share\": %.4f, \"remote_kernel_s\": %.6f, \"remote_bytes\": %.0f, \"checked\": %s, \"match\": %s}",
		       share, RMAX(a, remote_kernel), RSUM(a, remote_bytes),
		       RSUM(a, checked) == net.size ? "true" : "false", res);
		if (last)
			printf("\n  ]\n}\n");
		return;
	}
	printf("%-7s %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %6.1f%% %11.0f %s\n",
	       mmta_chan_names[channel], e2e, RMAX(a, scatter),
	       RMAX(a, remote), RMAX(a, dangling), RMAX(a, gather),
	       RMAX(a, apply), 100 * share, RSUM(a, remote_bytes),
	       RSUM(a, checked) != net.size ? "-" :
	       RSUM(a, mismatch) ? "DIFFERS" : "equal");
}

static void usage(int code)
{
	fprintf(code ? stderr : stdout,
		"usage: mmt-pagerank [--rank R --peers A0,A1,...] [--addrs A0,A1,...]\n"
		"         (--rmat S [--edgefactor E] [--seed N] | --snap FILE)\n"
		"         [--iters N] [--damping D] [--channel plain,secure,mmt]\n"
		"         [--key-file FILE] [--levels L] [--ctl-port P] [--port P]\n"
		"         [--timeout-ms MS] [--node-id N|rank] [--out PREFIX]\n"
		"         [--check REF] [--repeat N] [--warmup N] [--compute-per-edge K]\n"
		"         [--json]\n");
	exit(code);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		MMTA_OPTIONS,
		{ "rmat", required_argument, NULL, 'R' },
		{ "edgefactor", required_argument, NULL, 'E' },
		{ "seed", required_argument, NULL, 'S' },
		{ "snap", required_argument, NULL, 'F' },
		{ "iters", required_argument, NULL, 'I' },
		{ "damping", required_argument, NULL, 'D' },
		{ "compute-per-edge", required_argument, NULL, 'K' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct mmta_opts o = { .repeat = 1 };
	char err[256], *end;
	int k;
	struct pr_stats all[MMTA_MAX_RANKS], best[8][MMTA_MAX_RANKS];
	struct peer peers[MMTA_MAX_RANKS];
	struct mmta_graph gr = { 0 };
	struct mmta_pr pr;
	int npeers = 0, c, devfd, r = 0, i, bad;
	int pq[MMTA_MAX_RANKS], acc[MMTA_MAX_RANKS], conn[MMTA_MAX_RANKS];
	uint64_t cross = 0, allcross[MMTA_MAX_RANKS];
	struct mmta_kept kept = { 0 };
	double e2e;
	int j;
	FILE *f;

	net.prog = "mmt-pagerank";
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (mmta_opt(&o, c, optarg))
			continue;
		switch (c) {
		case 'R':
			g.scale = mmta_num("rmat", optarg, 1, 26);
			break;
		case 'E':
			g.edgefactor = mmta_num("edgefactor", optarg, 1, 1024);
			break;
		case 'S':
			g.seed = mmta_num("seed", optarg, 0, 4294967295ul);
			break;
		case 'F':
			g.snap = optarg;
			break;
		case 'I':
			g.iters = mmta_num("iters", optarg, 1, 100000);
			break;
		case 'D':
			g.damping = strtod(optarg, &end);
			if (*end || !(g.damping >= 0 && g.damping < 1)) {
				fprintf(stderr, "mmt-pagerank: --damping %s: want 0 <= D < 1\n",
					optarg);
				return 2;
			}
			break;
		case 'K':
			g.compute = mmta_num("compute-per-edge", optarg, 1, 1000);
			break;
		case 'h':
			usage(0);
			break;
		default:
			usage(2);
		}
	}
	if (optind != argc || !g.scale == !g.snap) {
		fprintf(stderr, "mmt-pagerank: one input: --rmat S or --snap FILE\n");
		usage(2);
	}
	mmta_opts_done(&o);
	g.out = o.out;
	g.check = o.check;
	g.json = o.json;
	mmta_net_start(&argc, &argv, o.peers, o.addrs);
	if (net.size < 2) {
		fprintf(stderr, "mmt-pagerank: %d ranks: want 2 or more\n",
			net.size);
		return 2;
	}

	/* the same graph on every rank */
	if (g.snap) {
		f = fopen(g.snap, "r");
		if (!f)
			mmta_die("%s: %s", g.snap, strerror(errno));
		if (mmta_snap_load(&gr, f, err, sizeof(err)))
			mmta_die("%s: %s", g.snap, err);
		fclose(f);
	} else if (mmta_rmat(&gr, g.scale, g.edgefactor, g.seed, 1)) {
		mmta_die("R-MAT scale %u: out of memory", g.scale);
	}
	if (gr.n < (uint32_t)net.size || mmta_pr_init(&pr, &gr, g.damping))
		mmta_die("a graph of %u vertices for %d ranks", gr.n, net.size);

	devfd = mmta_open_dev(&o);
	/* the partners, round by round: q = p ^ k, k = 1, 2, ... */
	for (k = 1; k < 2 * MMTA_MAX_RANKS; k++) {
		int q = net.rank ^ (int)k;
		struct peer *pe;

		if (q >= net.size)
			continue;
		pe = &peers[npeers++];
		pe->q = q;
		pe->nsend = need_list(&pr, net.rank, q, &pe->send, &cross);
		pe->nrecv = need_list(&pr, q, net.rank, &pe->recv, &(uint64_t){ 0 });
		pe->buf = malloc(8 + 8 * (size_t)(pe->nsend > pe->nrecv ?
						  pe->nsend : pe->nrecv));
		if (!pe->buf)
			mmta_die("out of memory");
		/* round by round, the lower rank connects */
		pq[npeers - 1] = q;
		acc[npeers - 1] = q < net.rank;
	}
	mmta_net_ctl();
	mmta_step(1, "connections: listen, then %d in rounds", npeers);
	mmta_connect(devfd, npeers, pq, acc, conn);
	mmta_step(1, "connections: made");
	for (i = 0; i < npeers; i++)
		peers[i].conn = conn[i];
	/* cross-rank edges: those whose source another rank owns */
	mmta_ctl_allgather(&cross, sizeof(cross), allcross);
	for (i = 1; i < net.size; i++)
		allcross[0] += allcross[i];
	if (net.rank == 0 && g.json)
		printf("{\"app\": \"pagerank\", \"ranks\": %d, \"vertices\": %u, \"edges\": %llu, \"cross_edges\": %llu, \"iters\": %u, \"levels\": %u, \"control\": \"%s\", \"repeat\": %u, \"warmup\": %u, \"compute_per_edge\": %u, \"runs\": [\n",
		       net.size, gr.n, (unsigned long long)gr.m,
		       (unsigned long long)allcross[0], g.iters, net.levels,
		       net.mpi ? "mpi" : "tcp", o.repeat, o.warmup, g.compute);
	else if (net.rank == 0)
		printf("%d ranks, %u vertices, %llu edges (%llu cross-rank), %u iterations, %u-level MMTs, control plane %s, best of %u; times in s\n"
		       "channel      e2e  scatter   remote dangling   gather    apply remote   remote-B  result\n",
		       net.size, gr.n, (unsigned long long)gr.m,
		       (unsigned long long)allcross[0], g.iters, net.levels,
		       net.mpi ? "MPI" : "TCP", o.repeat);
	/*
	 * --warmup rounds first (checked, not reported), then --repeat
	 * rounds over the channels in a rotated order; per channel the
	 * fastest run is reported, or the first that differs
	 */
	for (k = -(int)o.warmup; k < (int)o.repeat; k++) {
		for (j = 0; j < o.nchan; j++) {
			i = mmta_round_channel(&o, k, j);
			run(devfd, &pr, &gr, peers, npeers, o.channels[i], &e2e, all);
			bad = RSUM(all, mismatch) > 0;
			r |= bad;
			if (k < 0)
				continue;
			if (mmta_keep(&kept, i, bad, e2e))
				memcpy(best[i], all, sizeof(all));
		}
	}
	for (i = 0; i < o.nchan && net.rank == 0; i++)
		report(o.channels[i], kept.e2e[i], best[i], i == 0,
		       i == o.nchan - 1);
	fflush(stdout);
	for (i = 0; i < npeers; i++) {
		close(peers[i].conn);
		free(peers[i].send);
		free(peers[i].recv);
		free(peers[i].buf);
	}
	close(devfd);
	mmta_pr_free(&pr);
	mmta_graph_free(&gr);
	mmta_net_finish();
	return r;
}
