# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# g-bench-client.sh - guest 1 (node A) of the mmt-bench runs (bench-sizes,
# bench-delay, bench-smoke in tests/guest/tests; docs/PAPER.md): Soft-RoCE,
# the module, node id 1, then `mmt-bench 10.0.0.2` in sets of rounds that
# g-bench-server.sh mirrors.  From the kernel command line ('+' for
# spaces in the arguments):
#   bench_chans=C1,C2,...  the channels
#   bench_rounds=R         rounds per set (default 3): round r runs one
#                          mmt-bench per channel, the channels rotated by
#                          r, so each is first in turn (no channel always
#                          pays the round's first connection)
#   bench_warmup=W         warm-up rounds before them (-n 1, default 1),
#                          not sent to the host
#   bench_sizes_args=ARGS  a set with ARGS at no delay (Fig. 10a): results
#                          bench.sizes.r<R>.<C>.json
#   bench_extra=ARGS       after that set, one mmt-bench with ARGS (for
#                          perftest's ib_write_bw): bench.sizes.extra.json
#   bench_args=ARGS, bench_delays=D1,D2,...  one set per delay D (ms each
#                          way, Fig. 10b): iproute2's tc
#                          (/usr/sbin/tc: busybox's, first in PATH, has
#                          no netem) puts a netem qdisc with D on eth0
#                          (each guest does: each way of the link is
#                          delayed by D, a round trip by 2D; A tells B the
#                          delay over TCP port 7601, B sets it), then the
#                          set runs: bench.D.r<R>.<C>.json; ping's round
#                          trip after it (both guests still at D: B waits
#                          for the next delay, or "done") as rtt.D (ms)
# The host takes, per channel and size, the round with the median time
# (tools/paper/paperlib.py, bench_merge()).

. "$MMTG_DIR/benchlib.sh"
PEER=$(mmtg_ip_of 2)
ID="-i 1"

# bench_one TAG ROUND CHANNEL ARGS LABEL - one mmt-bench of bench_set
# (benchlib.sh); a round's JSON to the host, a warm-up's nowhere
bench_one() {
	_out=/tmp/bench.$1.r$2.$3.json
	[ "$2" != warm-up ] || _out=/dev/null
	# shellcheck disable=SC2086 # word lists
	MMTG_CMD_TIMEOUT=${BENCH_TIMEOUT:-600} mmtg_t \
		"A: mmt-bench client, $1, $5, $3" sh -c \
		"/opt/mmt/mmt-bench $ID $4 -c $3 $PEER >$_out"
	ID=
	[ "$2" = warm-up ] ||
		mmtg_result_quiet "bench.$1.r$2.$3.json" "$_out"
}

mmtg_t "A: rxe0 on eth0" mmtg_add_rxe rxe0 eth0
mmtg_t "A: insmod mmt.ko" mmtg_load_mmt
mmtg_t "A: ping $PEER" mmtg_wait 60 ping -c 1 -W 2 "$PEER"
if [ -n "$SIZES_ARGS" ]; then
	bench_set sizes "$SIZES_ARGS"
	if [ -n "$EXTRA" ]; then
		# shellcheck disable=SC2086 # word list
		MMTG_CMD_TIMEOUT=${BENCH_TIMEOUT:-600} mmtg_t \
			"A: mmt-bench client, $EXTRA" sh -c \
			"/opt/mmt/mmt-bench $ID $EXTRA $PEER >/tmp/bench.sizes.extra.json"
		ID=
		mmtg_result_quiet bench.sizes.extra.json /tmp/bench.sizes.extra.json
	fi
fi
if [ -n "$DELAYS" ]; then
	mmtg_t "A: modprobe sch_netem" mmtg_run 30 modprobe sch_netem
	for d in $DELAYS; do
		mmtg_t "A: netem delay $d ms on eth0" mmtg_run 10 /usr/sbin/tc qdisc \
			replace dev eth0 root netem delay "${d}ms" limit 100000
		mmtg_t "A: delay $d ms to B" mmtg_send "$PEER" 7601 "$d" 120
		bench_set "$d" "$ARGS"
		# the delay as the guests see it: B waits for the next round
		mmtg_run 30 ping -c 5 -i 0.2 "$PEER" >"/tmp/ping.$d" 2>&1
		sed -n 's|.*min/avg/max = [0-9.]*/\([0-9.]*\)/.*|\1|p' \
			"/tmp/ping.$d" >"/tmp/rtt.$d"
		mmtg_t "A: ping's round trip at $d ms each way" test -s "/tmp/rtt.$d"
		mmtg_result_quiet "rtt.$d" "/tmp/rtt.$d"
	done
	mmtg_run 10 /usr/sbin/tc -s qdisc show dev eth0
	mmtg_t "A: done to B" mmtg_send "$PEER" 7601 "done" 120
fi
# rxe counters (retransmissions, errors) for the record
mmtg_run 10 rdma statistic show link rxe0/1
mmtg_done
