# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# g-bench-server.sh - guest 2 (node B) of the mmt-bench check: Soft-RoCE,
# the module, node id 2, then `mmt-bench -S` with $BENCH_ARGS (from the
# kernel command line: bench_args=..., commas kept, '+' for spaces).
# With bench_delays=D1,D2,... one server per delay: the delay from A
# (TCP port 7601), a netem qdisc with it on eth0 as g-bench-client.sh
# does, then mmt-bench -S.

ARGS=$(sed -n 's/.*bench_args=\([^ ]*\).*/\1/p' /proc/cmdline | tr + ' ')
DELAYS=$(mmtg_arg bench_delays | tr , ' ')
mmtg_t "B: rxe0 on eth0" mmtg_add_rxe rxe0 eth0
mmtg_t "B: insmod mmt.ko" mmtg_load_mmt
if [ -z "$DELAYS" ]; then
	# shellcheck disable=SC2086 # word list
	MMTG_CMD_TIMEOUT=${BENCH_TIMEOUT:-600} mmtg_t "B: mmt-bench server" \
		/opt/mmt/mmt-bench -S -i 2 $ARGS
else
	mmtg_t "B: modprobe sch_netem" mmtg_run 30 modprobe sch_netem
	ID="-i 2"
	for d in $DELAYS; do
		_got=$(mmtg_recv 7601 300)
		mmtg_t "B: A's delay $_got ms is $d ms" test "$_got" = "$d"
		mmtg_t "B: netem delay $d ms on eth0" mmtg_run 10 /usr/sbin/tc qdisc \
			replace dev eth0 root netem delay "${d}ms" limit 100000
		# shellcheck disable=SC2086 # word list
		MMTG_CMD_TIMEOUT=${BENCH_TIMEOUT:-600} mmtg_t \
			"B: mmt-bench server, $d ms each way" sh -c \
			"/opt/mmt/mmt-bench -S $ID $ARGS >/tmp/bench.$d.out"
		ID=
	done
	# A pings at the last delay before it says done
	_got=$(mmtg_recv 7601 300)
	mmtg_t "B: A is done" test "$_got" = "done"
fi
# rxe counters (retransmissions, errors) for the record
mmtg_run 10 rdma statistic show link rxe0/1
mmtg_done
