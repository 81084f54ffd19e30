# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# g-bench-client.sh - guest 1 (node A) of the mmt-bench check: Soft-RoCE,
# the module, node id 1, then `mmt-bench 10.0.0.2` with the arguments of
# g-bench-server.sh (bench_args=... on the kernel command line, '+' for
# spaces).  With bench_delays=D1,D2,... (ms; the guest runs bench-delay
# and bench-sizes, docs/PAPER.md), one round per delay: iproute2's tc
# (/usr/sbin/tc: busybox's, first in PATH, has no netem) puts
# a netem qdisc with that delay on eth0 (each guest does, so each way of
# the link is delayed by D and a round trip by 2D; A tells B the delay
# over TCP port 7601, B sets it and then listens), then mmt-bench runs;
# its output (JSON with --json) goes to the host as result file
# bench.D.json, and the round trip ping measures after it (both guests
# still at D: B waits for the next delay, or "done", before it goes on)
# as rtt.D (ms).  Without bench_delays: one round, no qdisc.

ARGS=$(sed -n 's/.*bench_args=\([^ ]*\).*/\1/p' /proc/cmdline | tr + ' ')
DELAYS=$(mmtg_arg bench_delays | tr , ' ')
PEER=$(mmtg_ip_of 2)
mmtg_t "A: rxe0 on eth0" mmtg_add_rxe rxe0 eth0
mmtg_t "A: insmod mmt.ko" mmtg_load_mmt
mmtg_t "A: ping $PEER" mmtg_wait 60 ping -c 1 -W 2 "$PEER"
if [ -z "$DELAYS" ]; then
	# shellcheck disable=SC2086 # word list
	MMTG_CMD_TIMEOUT=${BENCH_TIMEOUT:-600} mmtg_t "A: mmt-bench client" \
		/opt/mmt/mmt-bench -i 1 $ARGS "$PEER"
else
	mmtg_t "A: modprobe sch_netem" mmtg_run 30 modprobe sch_netem
	ID="-i 1"
	for d in $DELAYS; do
		mmtg_t "A: netem delay $d ms on eth0" mmtg_run 10 /usr/sbin/tc qdisc \
			replace dev eth0 root netem delay "${d}ms" limit 100000
		mmtg_t "A: delay $d ms to B" mmtg_send "$PEER" 7601 "$d" 120
		# shellcheck disable=SC2086 # word list
		MMTG_CMD_TIMEOUT=${BENCH_TIMEOUT:-600} mmtg_t \
			"A: mmt-bench client, $d ms each way" sh -c \
			"/opt/mmt/mmt-bench $ID $ARGS $PEER >/tmp/bench.$d.json"
		mmtg_result_quiet "bench.$d.json" "/tmp/bench.$d.json"
		# the delay as the guests see it: B waits for the next round
		mmtg_run 30 ping -c 5 -i 0.2 "$PEER" >"/tmp/ping.$d" 2>&1
		sed -n 's|.*min/avg/max = [0-9.]*/\([0-9.]*\)/.*|\1|p' \
			"/tmp/ping.$d" >"/tmp/rtt.$d"
		mmtg_t "A: ping's round trip at $d ms each way" test -s "/tmp/rtt.$d"
		mmtg_result_quiet "rtt.$d" "/tmp/rtt.$d"
		ID=
	done
	mmtg_run 10 /usr/sbin/tc -s qdisc show dev eth0
	mmtg_t "A: done to B" mmtg_send "$PEER" 7601 "done" 120
fi
# rxe counters (retransmissions, errors) for the record
mmtg_run 10 rdma statistic show link rxe0/1
mmtg_done
