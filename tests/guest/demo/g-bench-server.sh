# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# g-bench-server.sh - guest 2 (node B) of the mmt-bench runs: Soft-RoCE,
# the module, node id 2, then one `mmt-bench -S` for each mmt-bench of
# g-bench-client.sh (the same kernel command line, the same sets, rounds
# and channel order).  Per delay, the delay from A (TCP port 7601) and a
# netem qdisc with it on eth0 as g-bench-client.sh does.

. "$MMTG_DIR/benchlib.sh"
ID="-i 2"

# bench_one TAG ROUND CHANNEL ARGS LABEL - the server of one mmt-bench of
# g-bench-client.sh (bench_set, benchlib.sh)
bench_one() {
	# shellcheck disable=SC2086 # word lists
	MMTG_CMD_TIMEOUT=${BENCH_TIMEOUT:-600} mmtg_t \
		"B: mmt-bench server, $1, $5, $3" sh -c \
		"/opt/mmt/mmt-bench -S $ID $4 -c $3 >/dev/null"
	ID=
}

mmtg_t "B: rxe0 on eth0" mmtg_add_rxe rxe0 eth0
mmtg_t "B: insmod mmt.ko" mmtg_load_mmt
if [ -n "$SIZES_ARGS" ]; then
	bench_set sizes "$SIZES_ARGS"
	if [ -n "$EXTRA" ]; then
		# shellcheck disable=SC2086 # word list
		MMTG_CMD_TIMEOUT=${BENCH_TIMEOUT:-600} mmtg_t \
			"B: mmt-bench server, $EXTRA" sh -c \
			"/opt/mmt/mmt-bench -S $ID $EXTRA >/dev/null"
		ID=
	fi
fi
if [ -n "$DELAYS" ]; then
	mmtg_t "B: modprobe sch_netem" mmtg_run 30 modprobe sch_netem
	for d in $DELAYS; do
		_got=$(mmtg_recv 7601 300)
		mmtg_t "B: A's delay $_got ms is $d ms" test "$_got" = "$d"
		mmtg_t "B: netem delay $d ms on eth0" mmtg_run 10 /usr/sbin/tc qdisc \
			replace dev eth0 root netem delay "${d}ms" limit 100000
		bench_set "$d" "$ARGS"
	done
	# A pings at the last delay before it says done
	_got=$(mmtg_recv 7601 300)
	mmtg_t "B: A is done" test "$_got" = "done"
fi
# rxe counters (retransmissions, errors) for the record
mmtg_run 10 rdma statistic show link rxe0/1
mmtg_done
