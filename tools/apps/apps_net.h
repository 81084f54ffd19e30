/* SPDX-License-Identifier: GPL-2.0 */
/*
 * apps_net.h - the control plane and the mmt connections of the
 * distributed applications (mmt-wordcount, docs/PAPER.md, mmt-apps(1)).
 *
 * The control plane carries barriers and small fixed-size records (sizes,
 * timings), never application data and never a key: MPI_Allgather when
 * the program is built with -DMMTA_MPI and started by mpiexec, else a TCP
 * star around rank 0 (--rank, --peers); under MPI the TCP star (rank 0 at
 * its --addrs address) carries one barrier, before MPI_Finalize
 * (mmta_net_finish()).  Neither is authenticated: run it
 * on a network you trust.  The data moves over mmt connections
 * (MMT_IOC_CONNECT/ACCEPT, MMT_IOC_SEND/RECV) between the ranks' RDMA
 * addresses.  Every failure prints "PROG: rank R: why" and exits 1 (under
 * MPI, MPI_Abort ends every rank); a bad argument exits 2.  Single-threaded.
 */
#ifndef MMT_APPS_NET_H
#define MMT_APPS_NET_H

#include <stddef.h>
#include <stdint.h>

#include "libmmt.h"

#define MMTA_MAX_RANKS	64

/**
 * struct mmta_net - this process's place in the job
 * @rank, @size: this rank and the number of ranks (-1, 0 until started)
 * @mpi: 1 when MPI is the control plane
 * @tcp_fds: TCP control plane: rank 0's socket to each rank, else [0] to 0
 * @addrs: each rank's address for the mmt connections (literals)
 * @ctl_port: rank 0's TCP control port (default 7600)
 * @data_port: rank r listens for rank c on @data_port + c (default 7700)
 * @timeout_ms: connect, accept, send and receive timeout (default 120000)
 * @levels: tree levels of the PMOs (default 3: 2 MiB closures)
 * @key, @key_len: from mmta_load_key(): the mmt channel's PMO key and
 *	the connections' key (secure channel); @key_len 0: none
 * @prog: the program's name in messages
 */
struct mmta_net {
	int rank, size, mpi;
	int tcp_fds[MMTA_MAX_RANKS];
	char *addrs[MMTA_MAX_RANKS];
	unsigned int ctl_port, data_port, timeout_ms, levels;
	uint8_t key[32];
	size_t key_len;
	const char *prog;
};

extern struct mmta_net mmta_net;
/* "mmt", "secure", "plain" by MMT_CHANNEL_* */
extern const char *const mmta_chan_names[3];

void mmta_die(const char *fmt, ...) __attribute__((format(printf, 1, 2),
						   noreturn));

/**
 * mmta_step() - record where this rank is (a hang then names its last
 * step): with MMTA_PROGRESS=PATH in the environment, the line
 * "PROG: rank R: step N: WHAT" replaces the contents of PATH.R (N counts
 * the calls, so the rank with the lowest N is the one behind); with
 * @coarse, the line also goes to stderr (under mpiexec, to mpiexec's
 * output), at the phases of a run: a few lines per channel, not per
 * transfer.  Without MMTA_PROGRESS, nothing.  Never fails: a file that
 * cannot be written is skipped.  Single-threaded.
 * @coarse: 1 for a phase (stderr too), 0 for a step inside one
 * @fmt: printf format of WHAT
 */
void mmta_step(int coarse, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* the unsigned decimal @s of option --@opt in @lo..@hi, else exit 2 */
unsigned int mmta_num(const char *opt, const char *s, unsigned long lo,
		      unsigned long hi);
/* split a comma-separated list in place (at most MMTA_MAX_RANKS), exit 2 */
void mmta_split_list(char *s, char **out, int *n);
/* the key file: 32 or 64 hex digits and an optional newline, else exit 2 */
void mmta_load_key(const char *path);

/**
 * struct mmta_opts - the options mmt-wordcount and mmt-pagerank share
 *	(mmt-apps(1)), parsed by mmta_opt() and mmta_opts_done()
 * @peers, @addrs: --peers and --addrs as given (for mmta_net_start())
 * @chans: --channel as given, NULL for all three
 * @key_file, @out, @check: --key-file, --out, --check; NULL if not given
 * @node_id: --node-id N, ~0u for "rank" (rank + 1), 0 if not given
 * @repeat: --repeat (default 1)
 * @warmup: --warmup (default 0)
 * @json: --json
 * @channels, @nchan: mmta_opts_done(): the MMT_CHANNEL_* of @chans, in
 *	the order given
 */
struct mmta_opts {
	char *peers, *addrs, *chans;
	const char *key_file, *out, *check;
	unsigned int node_id, repeat, warmup;
	int json;
	unsigned int channels[8];
	int nchan;
};

/*
 * The shared options, for each program's getopt_long() table; their
 * short codes (r P A c k l C p t i o x n j w) are taken.
 */
#define MMTA_OPTIONS							\
	{ "rank", required_argument, NULL, 'r' },			\
	{ "peers", required_argument, NULL, 'P' },			\
	{ "addrs", required_argument, NULL, 'A' },			\
	{ "channel", required_argument, NULL, 'c' },			\
	{ "key-file", required_argument, NULL, 'k' },			\
	{ "levels", required_argument, NULL, 'l' },			\
	{ "ctl-port", required_argument, NULL, 'C' },			\
	{ "port", required_argument, NULL, 'p' },			\
	{ "timeout-ms", required_argument, NULL, 't' },			\
	{ "node-id", required_argument, NULL, 'i' },			\
	{ "out", required_argument, NULL, 'o' },			\
	{ "check", required_argument, NULL, 'x' },			\
	{ "repeat", required_argument, NULL, 'n' },			\
	{ "json", no_argument, NULL, 'j' },				\
	{ "warmup", required_argument, NULL, 'w' }

/*
 * mmta_opt() - take option @c (getopt_long()'s return) with argument
 * @arg into @o and mmta_net if it is one of MMTA_OPTIONS; 1 if it was,
 * 0 if not (the program's own).  Exits 2 on a bad value.
 */
int mmta_opt(struct mmta_opts *o, int c, char *arg);
/*
 * mmta_opts_done() - after the options: @o->chans into @o->channels
 * (default plain, secure, mmt), and the key file loaded.  Exits 2 on an
 * unknown channel, more than 8, or a secure or mmt channel without
 * --key-file.
 */
void mmta_opts_done(struct mmta_opts *o);
/*
 * mmta_round_channel() - the index into @o->channels of the @j-th run of
 * round @round (0 <= @j < @o->nchan; a warm-up round is negative): the
 * channels rotate by one per round, so each runs first in turn and none
 * always pays what the first run of a round pays (mmt-apps(1), --repeat).
 */
int mmta_round_channel(const struct mmta_opts *o, int round, int j);
/*
 * struct mmta_kept - the run a program reports per channel (the index
 * into mmta_opts.channels) over --repeat rounds: the first, until one
 * differs from the reference, then the first that differs; otherwise
 * the fastest.  @e2e: the kept run's end-to-end seconds.  Zero it first.
 */
struct mmta_kept {
	double e2e[8];
	unsigned char kept[8], bad[8];
};
/*
 * mmta_keep() - record the run of channel @i (@bad: it differs from the
 * reference; @e2e seconds); 1 if it is now the kept one (the caller
 * copies its figures), else 0.
 */
int mmta_keep(struct mmta_kept *k, int i, int bad, double e2e);
/*
 * mmta_open_dev() - /dev/mmt, with this node's id set when @o->node_id
 * asks for one (after mmta_net_start(): "rank" is rank + 1).  Exits 1 if
 * the device cannot be opened or the id is refused.
 */
int mmta_open_dev(const struct mmta_opts *o);

/**
 * mmta_net_start() - find this rank: MPI_Init under mpiexec (MPI build,
 *	no --peers), else --rank and --peers; the data addresses from
 *	@addr_arg (--addrs), by default the --peers
 * Exits 2 on a bad argument (no rank, a rank past the peers, addresses
 * that are not one per rank, a bad MMTA_FINALIZE or
 * MMTA_FINALIZE_PLANT_MS under MPI).
 */
void mmta_net_start(int *argc, char ***argv, char *peer_arg, char *addr_arg);
/* connect the TCP control plane (every rank, under MPI too; rank 0
 * waits for all, the others retry for two minutes); exits on a failure */
void mmta_net_ctl(void);
/* every rank's @len bytes of @mine, in rank order, into @all; a barrier */
void mmta_ctl_allgather(const void *mine, size_t len, void *all);
void mmta_ctl_barrier(void);

/**
 * mmta_connect() - the mmt connections of this rank
 * @devfd: /dev/mmt
 * @n: connections
 * @peer: the rank at the other end of each
 * @accept: 1: accept it (listening on data_port + @peer[i]); 0: connect
 *	to it (its port data_port + this rank)
 * @conn: (out) the connection fds, in the order of @peer
 *
 * Listens first, then a barrier, then connects and accepts in the order
 * of @peer (both ends must make them in an order without a cycle: pairs
 * round by round, or all connects on one side); sets each connection's
 * key when a key was loaded.  Exits on any failure.
 */
void mmta_connect(int devfd, int n, const int *peer, const int *accept,
		  int *conn);
/* a PMO of @bytes rounded up to whole closures, keyed for the mmt
 * channel (@recv: MMT_KEY_RECEIVE); plain for the other channels */
int mmta_make_pmo(int devfd, uint64_t bytes, unsigned int channel, int recv);
uint64_t mmta_pmo_round(uint64_t bytes);
/**
 * mmta_net_finish() - wipe the key; under MPI, end MPI in the order that
 *	removes MPICH 4.0.2's finalize hang over UCX's TCP transport
 *	(docs/PAPER.md, "The MPI_Finalize hang"; mmt-apps(1)): one byte to
 *	and from every other rank over MPI, a barrier over the TCP star
 *	(after mmta_net_ctl()), then MPI_Finalize.  MMTA_FINALIZE=direct:
 *	MPI_Finalize at once; MMTA_FINALIZE_PLANT_MS: the test window
 *	(checked by mmta_net_start(): a bad value exits 2).  Every rank
 *	calls it once, at the end; a failure exits 1 (MPI_Abort).
 *	Single-threaded.
 */
void mmta_net_finish(void);

#endif /* MMT_APPS_NET_H */
