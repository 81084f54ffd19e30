# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# benchlib.sh - what g-bench-client.sh and g-bench-server.sh share: their
# settings from the kernel command line (g-bench-client.sh lists them),
# the channel order of a round and the loop of a set (bench_set, which
# calls the side's own bench_one).
# shellcheck disable=SC2034 # the settings: used where this is sourced

CHANS=$(mmtg_arg bench_chans plain,secure,mmt | tr , ' ')
ROUNDS=$(mmtg_arg bench_rounds 3)
WARMUP=$(mmtg_arg bench_warmup 1)
SIZES_ARGS=$(mmtg_arg bench_sizes_args | tr + ' ')
EXTRA=$(mmtg_arg bench_extra | tr + ' ')
ARGS=$(mmtg_arg bench_args | tr + ' ')
DELAYS=$(mmtg_arg bench_delays | tr , ' ')

# bench_rotate R WORD... - the words rotated left by R (round R's order)
bench_rotate() {
	_n=$1
	shift
	_k=$((_n % $#))
	while [ "$_k" -gt 0 ]; do
		_f=$1
		shift
		set -- "$@" "$_f"
		_k=$((_k - 1))
	done
	echo "$@"
}

# bench_set TAG ARGS - one set: WARMUP warm-up rounds in the order CHANS,
# then ROUNDS rounds in rotated order, each mmt-bench by the side's
# bench_one TAG ROUND CHANNEL ARGS LABEL (ROUND "warm-up" for the warm-up,
# whose ARGS end in -n 1; LABEL "warm-up" or "round N", for the check's
# name); both sides run the same sequence
bench_set() {
	_tag=$1
	_args=$2
	_w=0
	while [ "$_w" -lt "$WARMUP" ]; do
		for _c in $CHANS; do
			bench_one "$_tag" warm-up "$_c" "$_args -n 1" warm-up
		done
		_w=$((_w + 1))
	done
	_r=0
	while [ "$_r" -lt "$ROUNDS" ]; do
		# shellcheck disable=SC2086 # a word list
		for _c in $(bench_rotate "$_r" $CHANS); do
			bench_one "$_tag" "$_r" "$_c" "$_args" "round $_r"
		done
		_r=$((_r + 1))
	done
}
