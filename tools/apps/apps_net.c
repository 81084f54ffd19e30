// SPDX-License-Identifier: GPL-2.0
/*
 * apps_net.c - what the distributed applications share (apps_net.h): the
 * control plane (MPI when built with -DMMTA_MPI and started by mpiexec,
 * else a TCP star around rank 0), the mmt connections between ranks and
 * the PMOs they move, the key file and argument helpers.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifdef MMTA_MPI
#include <mpi.h>
#endif

#include "apps.h"
#include "apps_net.h"

struct mmta_net mmta_net = {
	.ctl_port = 7600, .data_port = 7700, .timeout_ms = 120000, .levels = 3,
	.rank = -1, .prog = "mmt-app",
};

const char *const mmta_chan_names[3] = {
	[MMT_CHANNEL_MMT] = "mmt",
	[MMT_CHANNEL_SECURE] = "secure",
	[MMT_CHANNEL_PLAIN] = "plain",
};

#define g mmta_net

void mmta_die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: rank %d: ", g.prog, g.rank);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
#ifdef MMTA_MPI
	if (g.mpi)
		MPI_Abort(MPI_COMM_WORLD, 1);	/* the other ranks too */
#endif
	exit(1);
}

void mmta_step(int coarse, const char *fmt, ...)
{
	static unsigned long step;
	const char *base = getenv("MMTA_PROGRESS");
	char line[512], path[4096];
	va_list ap;
	int n, fd;

	if (!base || !*base)
		return;
	n = snprintf(line, sizeof(line), "%s: rank %d: step %lu: ", g.prog,
		     g.rank, ++step);
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	line[n] = 0;
	if (coarse)
		fputs(line, stderr);
	snprintf(path, sizeof(path), "%s.%d", base, g.rank);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (write(fd, line, (size_t)n) < 0)
		n = 0;	/* nothing to do: the step is lost, not the run */
	close(fd);
}

/* ---- control plane: MPI, or a TCP star around rank 0 */

static void full_io(int fd, void *buf, size_t len, int wr)
{
	char *p = buf;

	while (len) {
		ssize_t n = wr ? write(fd, p, len) : read(fd, p, len);

		if (n <= 0)
			mmta_die("control plane: %s", n ? strerror(errno) : "peer closed");
		p += n;
		len -= (size_t)n;
	}
}

static void tcp_init(void)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICHOST }, *ai;
	char port[16];
	int one = 1, fd, i, r;
	double t;

	snprintf(port, sizeof(port), "%u", g.ctl_port);
	if (g.rank == 0) {
		struct sockaddr_in6 sa = { .sin6_family = AF_INET6,
					   .sin6_port = htons(g.ctl_port) };
		int lfd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (lfd < 0 ||
		    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
		    bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) ||
		    listen(lfd, MMTA_MAX_RANKS))
			mmta_die("control plane: listen on port %s: %s", port,
			    strerror(errno));
		for (i = 1; i < g.size; i++) {
			uint32_t who;

			fd = accept(lfd, NULL, NULL);
			if (fd < 0)
				mmta_die("control plane: accept: %s", strerror(errno));
			full_io(fd, &who, sizeof(who), 0);
			if (who == 0 || who >= (uint32_t)g.size || g.tcp_fds[who])
				mmta_die("control plane: a peer says it is rank %u", who);
			g.tcp_fds[who] = fd;
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		}
		close(lfd);
		return;
	}
	r = getaddrinfo(g.addrs[0], port, &hints, &ai);
	if (r)
		mmta_die("control plane: %s: %s", g.addrs[0], gai_strerror(r));
	/* rank 0 may not be listening yet: retry for two minutes */
	for (t = mmta_now();; usleep(200000)) {
		fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			mmta_die("control plane: socket: %s", strerror(errno));
		if (!connect(fd, ai->ai_addr, ai->ai_addrlen))
			break;
		close(fd);
		if (mmta_now() - t > 120)
			mmta_die("control plane: connect to %s:%s: %s", g.addrs[0],
			    port, strerror(errno));
	}
	freeaddrinfo(ai);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	r = g.rank;
	full_io(fd, &r, sizeof(uint32_t), 1);
	g.tcp_fds[0] = fd;
}

/* the TCP star's all-gather: @len bytes of @mine per rank into @all */
static void tcp_allgather(const void *mine, size_t len, void *all)
{
	int i;

	if (g.rank == 0) {
		memcpy(all, mine, len);
		for (i = 1; i < g.size; i++)
			full_io(g.tcp_fds[i], (char *)all + i * len, len, 0);
		for (i = 1; i < g.size; i++)
			full_io(g.tcp_fds[i], all, len * g.size, 1);
	} else {
		full_io(g.tcp_fds[0], (void *)mine, len, 1);
		full_io(g.tcp_fds[0], all, len * g.size, 0);
	}
}

/* every rank's @len bytes of @mine, in rank order, into @all; a barrier */
void mmta_ctl_allgather(const void *mine, size_t len, void *all)
{
#ifdef MMTA_MPI
	if (g.mpi) {
		if (MPI_Allgather(mine, (int)len, MPI_BYTE, all, (int)len,
				  MPI_BYTE, MPI_COMM_WORLD) != MPI_SUCCESS)
			mmta_die("MPI_Allgather failed");
		return;
	}
#endif
	tcp_allgather(mine, len, all);
}

void mmta_ctl_barrier(void)
{
	char b = 0, all[MMTA_MAX_RANKS];

	mmta_ctl_allgather(&b, 1, all);
}

#ifdef MMTA_MPI
/*
 * MPI_Finalize, ordered (mpi_finalize() below).  MMTA_FINALIZE=direct
 * (mmt-apps(1)) calls MPI_Finalize at once, as the programs did before;
 * MMTA_FINALIZE_PLANT_MS=N makes rank 0 progress MPI for N ms before the
 * TCP barrier, then wait N ms without progress after it: the window of
 * MPICH 4.0.2's hang made certain (tests/apps/mpi-finalize.c).  Read and
 * checked by mmta_net_start().
 */
static int fin_direct;
static unsigned int fin_plant_ms;

#define MMTA_TAG_FINALIZE	0x6d6d	/* the programs use no other tag */

static void fin_env(void)
{
	const char *m = getenv("MMTA_FINALIZE");
	const char *p = getenv("MMTA_FINALIZE_PLANT_MS");

	if (m && *m && strcmp(m, "ordered")) {
		if (strcmp(m, "direct")) {
			fprintf(stderr, "%s: MMTA_FINALIZE=%s: want ordered or direct\n",
				g.prog, m);
			exit(2);
		}
		fin_direct = 1;
	}
	if (p && *p) {
		char *end;
		unsigned long v;

		errno = 0;
		v = strtoul(p, &end, 10);
		if (errno || *end || v > 60000) {
			fprintf(stderr, "%s: MMTA_FINALIZE_PLANT_MS=%s: want 0..60000\n",
				g.prog, p);
			exit(2);
		}
		fin_plant_ms = (unsigned int)v;
	}
}

/* every rank one byte to and one from every other rank */
static void fin_touch_all(void)
{
	MPI_Request req[2 * MMTA_MAX_RANKS];
	MPI_Status st[2 * MMTA_MAX_RANKS];
	char out = 0, in[MMTA_MAX_RANKS];
	int n = 0, r;

	for (r = 0; r < g.size; r++)
		if (r != g.rank)
			MPI_Irecv(&in[r], 1, MPI_BYTE, r, MMTA_TAG_FINALIZE,
				  MPI_COMM_WORLD, &req[n++]);
	for (r = 0; r < g.size; r++)
		if (r != g.rank)
			MPI_Isend(&out, 1, MPI_BYTE, r, MMTA_TAG_FINALIZE,
				  MPI_COMM_WORLD, &req[n++]);
	if (MPI_Waitall(n, req, st) != MPI_SUCCESS)
		mmta_die("finalize: MPI_Waitall failed");
}

/* the plant's first half: MPI progress for fin_plant_ms on rank 0 */
static void fin_plant_progress(void)
{
	double t = mmta_now();
	int flag;

	while (mmta_now() - t < fin_plant_ms / 1000.0)
		MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag,
			   MPI_STATUS_IGNORE);
}

/*
 * mpi_finalize() - MPI_Finalize without MPICH 4.0.2's hang (docs/PAPER.md,
 * "The MPI_Finalize hang"; the cause read from MPICH v4.0.2 and UCX
 * v1.13.1, Debian 12's).  MPICH's UCX finalize (ucx_init.c,
 * MPIDI_UCX_mpi_finalize_hook()) closes every endpoint in flush mode
 * (ucp_disconnect_nb()), progresses UCX until every close is done, then
 * blocks in the PMI barrier with its UCX sockets open and unread.  UCX's
 * TCP transport (since 1.12) flushes an endpoint that has sent anything
 * by sending a zero-length PUT request (a 25-byte message) and waiting
 * for the peer's PUT acknowledgement (tcp_ep.c, uct_tcp_ep_flush()).  A
 * rank that answers its peer's request while still outside MPI_Finalize
 * (any MPI call that progresses, after the peer entered it) sends the
 * answer before its own request; the peer then completes its close and
 * sleeps in the PMI barrier before that request arrives, and this rank
 * spins forever.  The order here removes that: (1) every rank sends to
 * and hears from every other rank, so each has something to flush
 * towards each peer and stays in MPICH's progress loop until it has its
 * peer's answer, which the single TCP connection of the pair delivers
 * after the peer's own request; (2) a barrier over the TCP star, not
 * MPI, so no rank enters MPI_Finalize (sends a request) while another
 * can still make MPI progress outside it.  Each rank's request then goes
 * out before it can answer any, and each is answered before its peer
 * leaves.  Harmless where MPICH or Open MPI have no such hang.
 */
static void mpi_finalize(void)
{
	int plant = fin_plant_ms && g.rank == 0;
	char b = 0, all[MMTA_MAX_RANKS];
	int i;

	if (!fin_direct) {
		mmta_step(1, "finalize: a message to and from every rank");
		fin_touch_all();
	}
	if (plant)
		fin_plant_progress();
	if (!fin_direct) {
		mmta_step(1, "finalize: barrier over TCP");
		tcp_allgather(&b, 1, all);
	}
	for (i = 0; i < g.size; i++)
		if (g.tcp_fds[i] > 0)
			close(g.tcp_fds[i]);
	if (plant) {
		struct timespec ts = { .tv_sec = fin_plant_ms / 1000,
				       .tv_nsec = fin_plant_ms % 1000 * 1000000L };

		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
	}
	mmta_step(1, "MPI_Finalize");
	MPI_Finalize();
}
#endif

/* ---- the data plane */

/* a PMO of at least @bytes, keyed for @channel: sender (@recv 0) or not */
int mmta_make_pmo(int devfd, uint64_t bytes, unsigned int channel, int recv)
{
	struct mmt_geometry geo = { .levels = (uint8_t)g.levels };
	uint64_t cb = mmtu_geometry_closure_bytes(&geo);
	int fd, r;

	bytes = (bytes + cb - 1) / cb * cb;
	fd = mmtu_pmo_create(devfd, bytes, &geo, MMT_PMO_CLOEXEC, NULL);
	if (fd < 0)
		mmta_die("create a PMO of %llu bytes: %s", (unsigned long long)bytes,
		    mmtu_strerror(fd));
	if (channel == MMT_CHANNEL_MMT) {
		r = mmtu_pmo_set_key(fd, g.key, g.key_len,
				     recv ? MMT_KEY_RECEIVE : 0);
		if (r < 0)
			mmta_die("key a PMO: %s", mmtu_strerror(r));
	}
	return fd;
}

uint64_t mmta_pmo_round(uint64_t bytes)
{
	struct mmt_geometry geo = { .levels = (uint8_t)g.levels };
	uint64_t cb = mmtu_geometry_closure_bytes(&geo);

	return (bytes + cb - 1) / cb * cb;
}

void mmta_connect(int devfd, int n, const int *peer, const int *accept,
		  int *conn)
{
	struct mmt_conn_addr a;
	int lfd[MMTA_MAX_RANKS], i, r;

	for (i = 0; i < n; i++) {
		if (!accept[i])
			continue;
		r = mmtu_parse_addr(NULL, g.data_port + peer[i], &a);
		if (!r) {
			lfd[i] = mmtu_listen(devfd, &a, 4, 0);
			r = lfd[i];
		}
		if (r < 0)
			mmta_die("listen on port %u: %s", g.data_port + peer[i],
				 mmtu_strerror(r));
	}
	mmta_step(0, "connections: barrier before connect");
	mmta_ctl_barrier();
	for (i = 0; i < n; i++) {
		mmta_step(0, "connections: %s rank %d", accept[i] ?
			  "accept from" : "connect to", peer[i]);
		if (accept[i]) {
			conn[i] = mmtu_accept(lfd[i], g.timeout_ms, 0, NULL);
			if (conn[i] < 0)
				mmta_die("accept from rank %d: %s", peer[i],
					 mmtu_strerror(conn[i]));
			close(lfd[i]);
		} else {
			r = mmtu_parse_addr(g.addrs[peer[i]], g.data_port + g.rank,
					    &a);
			if (r < 0)
				mmta_die("%s: not an address literal",
					 g.addrs[peer[i]]);
			conn[i] = mmtu_connect(devfd, &a, g.timeout_ms, 0, NULL);
			if (conn[i] < 0)
				mmta_die("connect to rank %d (%s port %u): %s",
					 peer[i], g.addrs[peer[i]],
					 g.data_port + g.rank,
					 mmtu_strerror(conn[i]));
		}
		/* the secure channel on plain PMOs seals under this key */
		if (g.key_len) {
			r = mmtu_conn_set_key(conn[i], g.key, g.key_len);
			if (r < 0)
				mmta_die("connection key: %s", mmtu_strerror(r));
		}
	}
}

/* ---- arguments */

void mmta_split_list(char *s, char **out, int *n)
{
	char *tok, *save = NULL;

	*n = 0;
	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (*n == MMTA_MAX_RANKS) {
			fprintf(stderr, "%s: at most %d ranks\n",
				g.prog, MMTA_MAX_RANKS);
			exit(2);
		}
		out[(*n)++] = tok;
	}
}

unsigned int mmta_num(const char *opt, const char *s, unsigned long lo,
			unsigned long hi)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || !*s || *end || v < lo || v > hi) {
		fprintf(stderr, "%s: --%s %s: want %lu..%lu\n", g.prog,
			opt, s, lo, hi);
		exit(2);
	}
	return (unsigned int)v;
}

int mmta_opt(struct mmta_opts *o, int c, char *arg)
{
	switch (c) {
	case 'r':
		g.rank = (int)mmta_num("rank", arg, 0, MMTA_MAX_RANKS - 1);
		break;
	case 'P':
		o->peers = arg;
		break;
	case 'A':
		o->addrs = arg;
		break;
	case 'c':
		o->chans = arg;
		break;
	case 'k':
		o->key_file = arg;
		break;
	case 'l':
		g.levels = mmta_num("levels", arg, 1, 4);
		break;
	case 'C':
		g.ctl_port = mmta_num("ctl-port", arg, 1, 65535);
		break;
	case 'p':
		g.data_port = mmta_num("port", arg, 1, 65535 - MMTA_MAX_RANKS);
		break;
	case 't':
		g.timeout_ms = mmta_num("timeout-ms", arg, 1, 600000);
		break;
	case 'i':	/* "rank": rank + 1, the same argument for every rank */
		o->node_id = strcmp(arg, "rank") ?
			     mmta_num("node-id", arg, 1, 65535) : ~0u;
		break;
	case 'o':
		o->out = arg;
		break;
	case 'x':
		o->check = arg;
		break;
	case 'n':
		o->repeat = mmta_num("repeat", arg, 1, 1000);
		break;
	case 'j':
		o->json = 1;
		break;
	case 'w':
		o->warmup = mmta_num("warmup", arg, 0, 100);
		break;
	default:
		return 0;
	}
	return 1;
}

int mmta_round_channel(const struct mmta_opts *o, int round, int j)
{
	int n = o->nchan;

	return ((j + round) % n + n) % n;
}

int mmta_keep(struct mmta_kept *k, int i, int bad, double e2e)
{
	int keep = !k->kept[i] || (!k->bad[i] && (bad || e2e < k->e2e[i]));

	if (keep) {
		k->e2e[i] = e2e;
		k->kept[i] = 1;
	}
	k->bad[i] |= bad;
	return keep;
}

void mmta_opts_done(struct mmta_opts *o)
{
	char all[] = "plain,secure,mmt", *tok, *save = NULL;
	int c;

	o->nchan = 0;
	for (tok = strtok_r(o->chans ? o->chans : all, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		for (c = 0; c < 3 && strcmp(tok, mmta_chan_names[c]); c++)
			;
		if (c == 3 || o->nchan == 8) {
			fprintf(stderr, "%s: --channel %s: want plain, secure or mmt (at most 8)\n",
				g.prog, tok);
			exit(2);
		}
		o->channels[o->nchan++] = (unsigned int)c;
		if (c != MMT_CHANNEL_PLAIN && !o->key_file) {
			fprintf(stderr, "%s: the %s channel needs --key-file\n",
				g.prog, tok);
			exit(2);
		}
	}
	if (o->key_file)
		mmta_load_key(o->key_file);
}

int mmta_open_dev(const struct mmta_opts *o)
{
	unsigned int id = o->node_id == ~0u ? (unsigned int)g.rank + 1 :
			  o->node_id;
	int devfd = mmtu_open(), r;

	if (devfd < 0)
		mmta_die("/dev/mmt: %s", mmtu_strerror(devfd));
	if (id) {
		r = mmtu_set_node_id(devfd, id);
		if (r < 0)
			mmta_die("node id %u: %s", id, mmtu_strerror(r));
	}
	return devfd;
}

void mmta_load_key(const char *path)
{
	char buf[80];
	size_t len;
	int fd = open(path, O_RDONLY | O_CLOEXEC), r;
	ssize_t n;

	if (fd < 0) {
		fprintf(stderr, "%s: %s: %s\n", g.prog, path,
			strerror(errno));
		exit(2);
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	len = n > 0 ? (size_t)n : 0;
	while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
		len--;
	r = mmtu_key_from_hex(buf, len, g.key, NULL);
	explicit_bzero(buf, sizeof(buf));
	if (r < 0) {
		fprintf(stderr, "%s: --key-file %s: want 32 or 64 hex digits\n",
			g.prog, path);
		exit(2);
	}
	g.key_len = (size_t)r;
}

void mmta_net_start(int *argc, char ***argv, char *peer_arg, char *addr_arg)
{
	char *peers[MMTA_MAX_RANKS], *addrs[MMTA_MAX_RANKS];
	int npeers = 0, naddrs = 0;

	if (peer_arg)
		mmta_split_list(peer_arg, peers, &npeers);
	if (addr_arg)
		mmta_split_list(addr_arg, addrs, &naddrs);
#ifdef MMTA_MPI
	if (g.rank < 0 && !peer_arg) {
		MPI_Init(argc, argv);
		MPI_Comm_rank(MPI_COMM_WORLD, &g.rank);
		mmta_step(1, "MPI_Init done");
		MPI_Comm_size(MPI_COMM_WORLD, &g.size);
		g.mpi = 1;
		fin_env();
	}
#endif
	if (!g.mpi) {
		if (g.rank < 0 || !npeers || g.rank >= npeers) {
			fprintf(stderr, "%s: --rank R and --peers A0,A1,... (R below their number)%s\n",
				g.prog,
#ifdef MMTA_MPI
				", or run it under mpiexec"
#else
				"; the -mpi build runs under mpiexec"
#endif
				);
			exit(2);
		}
		g.size = npeers;
	}
	if (!naddrs && !g.mpi) {
		memcpy(addrs, peers, sizeof(peers));
		naddrs = npeers;
	}
	if (g.size > MMTA_MAX_RANKS || naddrs != g.size) {
		fprintf(stderr, "%s: %d ranks, %d data addresses: want one --addrs entry each\n",
			g.prog, g.size, naddrs);
		exit(2);
	}
	memcpy(g.addrs, addrs, sizeof(addrs));
}

/* under MPI too: the TCP star carries the barrier before MPI_Finalize */
void mmta_net_ctl(void)
{
	tcp_init();
}

void mmta_net_finish(void)
{
	explicit_bzero(g.key, sizeof(g.key));
#ifdef MMTA_MPI
	if (g.mpi)
		mpi_finalize();
#endif
	mmta_step(1, "done");
}
