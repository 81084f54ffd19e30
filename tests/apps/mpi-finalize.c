// SPDX-License-Identifier: GPL-2.0
/*
 * mpi-finalize - the MPI_Finalize hang of MPICH 4.0.2 over UCX's TCP
 * transport, and the programs' order that removes it (mmta_net_finish()
 * in tools/apps/apps_net.c; docs/PAPER.md, "The MPI_Finalize hang"), on
 * one host: tests/apps/run.sh starts it under mpiexec with UCX over TCP
 * on the loopback and MPICH's shared memory off (every message through
 * UCX's TCP endpoints, as between the guests of the apps-mpi run).
 *
 * The ranks exchange what the programs' control plane exchanges (an
 * MPI_Allgather of one byte), or with --oneway only one byte from rank 0
 * to rank 1 (traffic one way: rank 1 has nothing to flush towards rank
 * 0), then end through mmta_net_finish(), as mmt-wordcount-mpi and
 * mmt-pagerank-mpi do.  The environment picks the finalize
 * (MMTA_FINALIZE=direct: MPI_Finalize at once) and plants the window
 * (MMTA_FINALIZE_PLANT_MS): mmt-apps(1).  A hang shows as the caller's
 * timeout; exit 0 when every rank finalized.
 *
 *   mpiexec -n 2 mpi-finalize --addrs 127.0.0.1,127.0.0.1 [--ctl-port P]
 *	[--oneway]
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#include "apps_net.h"

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		MMTA_OPTIONS,
		{ "oneway", no_argument, NULL, 'O' },
		{ NULL, 0, NULL, 0 }
	};
	struct mmta_opts o = { 0 };
	char b = 0, all[MMTA_MAX_RANKS];
	int c, oneway = 0;

	mmta_net.prog = "mpi-finalize";
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (mmta_opt(&o, c, optarg))
			continue;
		if (c != 'O')
			return 2;
		oneway = 1;
	}
	mmta_net_start(&argc, &argv, o.peers, o.addrs);
	if (!mmta_net.mpi || mmta_net.size < 2) {
		fprintf(stderr, "mpi-finalize: run it under mpiexec, 2 or more ranks\n");
		return 2;
	}
	mmta_net_ctl();
	if (!oneway)
		mmta_ctl_allgather(&b, 1, all);
	else if (mmta_net.rank == 0)
		MPI_Send(&b, 1, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
	else if (mmta_net.rank == 1)
		MPI_Recv(&b, 1, MPI_BYTE, 0, 1, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
	mmta_net_finish();
	return 0;
}
