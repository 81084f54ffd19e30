# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# benchlib.sh - what g-bench-client.sh and g-bench-server.sh share: their
# settings from the kernel command line (g-bench-client.sh lists them)
# and the channel order of a round.
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
