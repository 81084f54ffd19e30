# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# g-bench-server.sh - guest 2 (node B) of the mmt-bench check: Soft-RoCE,
# the module, node id 2, then `mmt-bench -S` with $BENCH_ARGS (from the
# kernel command line: bench_args=..., commas kept, '+' for spaces).

ARGS=$(sed -n 's/.*bench_args=\([^ ]*\).*/\1/p' /proc/cmdline | tr + ' ')
mmtg_t "B: rxe0 on eth0" mmtg_add_rxe rxe0 eth0
mmtg_t "B: insmod mmt.ko" mmtg_load_mmt
# shellcheck disable=SC2086 # word list
MMTG_CMD_TIMEOUT=${BENCH_TIMEOUT:-600} mmtg_t "B: mmt-bench server" \
	/opt/mmt/mmt-bench -S -i 2 $ARGS
# rxe counters (retransmissions, errors) for the record
mmtg_run 10 rdma statistic show link rxe0/1
mmtg_done
