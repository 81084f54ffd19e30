# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# g-bench-client.sh - guest 1 (node A) of the mmt-bench check: Soft-RoCE,
# the module, node id 1, then `mmt-bench 10.0.0.2` with the arguments of
# g-bench-server.sh (bench_args=... on the kernel command line), text and
# JSON (the JSON goes back to the host as result file bench.json).

ARGS=$(sed -n 's/.*bench_args=\([^ ]*\).*/\1/p' /proc/cmdline | tr + ' ')
PEER=$(mmtg_ip_of 2)
mmtg_t "A: rxe0 on eth0" mmtg_add_rxe rxe0 eth0
mmtg_t "A: insmod mmt.ko" mmtg_load_mmt
mmtg_t "A: ping $PEER" mmtg_wait 60 ping -c 1 -W 2 "$PEER"
# shellcheck disable=SC2086 # word list
MMTG_CMD_TIMEOUT=${BENCH_TIMEOUT:-600} mmtg_t "A: mmt-bench client" \
	/opt/mmt/mmt-bench -i 1 $ARGS "$PEER"
# rxe counters (retransmissions, errors) for the record
mmtg_run 10 rdma statistic show link rxe0/1
mmtg_done
