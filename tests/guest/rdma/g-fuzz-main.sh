# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# g-fuzz-main.sh - the multi-threaded fuzzer, main guest (guest 1):
# Soft-RoCE, a test build of the module, the fixed regression cases
# (mmt-fuzz --cases), then mmt-fuzz against this guest's own listeners and
# the peer guest (g-fuzz-peer.sh); then it tells the peer it is done,
# and the module must unload.  tests/pmo/mmt-fuzz.c says what is fuzzed
# and checked; run.sh checks the kernel log (KASAN, lockdep, kmemleak,
# UBSAN, KFENCE, WARN on the debug kernel).
#
# Settings from the kernel command line (tests/guest/tests: FUZZ_CALLS,
# FUZZ_TIME, FUZZ_SEED, FUZZ_MIN_CALLS): fuzz_calls (100000), fuzz_time
# (240 s; the run passes 80, or 250 on the debug kernel), fuzz_seed
# (empty: the program draws one and prints it),
# fuzz_min_calls (a quarter of fuzz_calls).

# mmt-fuzz is shipped as /opt/mmt/mmt-fuzz (tests/guest/tests: RUN_FILES)
PATH=$MMTG_DIR:$PATH
export PATH
PEER=$(mmtg_ip_of 2)

FUZZ_CALLS=$(mmtg_arg fuzz_calls 100000)
FUZZ_TIME=$(mmtg_arg fuzz_time 240)
FUZZ_SEED=$(mmtg_arg fuzz_seed '')
# the check "calls issued": the time limit may end a run on a busy host
# first (the output says which limit did); a quarter of the calls at least
FUZZ_MIN_CALLS=$(mmtg_arg fuzz_min_calls $((FUZZ_CALLS / 4)))

# unload - rmmod, retrying a few seconds: io_uring and unix sockets drop
# their last file references from work queues after the program exits
unload() {
	mmtg_wait 20 rmmod mmt
}

mmtg_t "main: rxe0 on eth0" mmtg_add_rxe rxe0 eth0
mmtg_t "main: insmod mmt.ko" mmtg_load_mmt
mmtg_t "main: ping $PEER" mmtg_wait 60 ping -c 1 -W 2 "$PEER"
mmtg_t "main: mmt-fuzz --cases (the findings' regression cases)" \
	mmtg_run 300 mmt-fuzz --cases --self "$MMTG_IP"
# fuzz - mmt-fuzz in the background; if it has not exited 120 s after
# its time limit (a thread, or its exit, stuck in the kernel), every
# task's kernel stack goes to the log (sysrq t) and it fails
fuzz() {
	# shellcheck disable=SC2086 # an optional --seed S
	mmt-fuzz --calls "$FUZZ_CALLS" --min-calls "$FUZZ_MIN_CALLS" \
		--time "$FUZZ_TIME" ${FUZZ_SEED:+--seed "$FUZZ_SEED"} \
		--self "$MMTG_IP" --peer "$PEER" &
	_pid=$!
	_end=$(($(date +%s) + FUZZ_TIME + 120))
	while kill -0 $_pid 2>/dev/null && [ "$(date +%s)" -lt $_end ]; do
		sleep 1
	done
	if kill -0 $_pid 2>/dev/null; then
		echo "main: mmt-fuzz still runs ${FUZZ_TIME} + 120 s on: the tasks' stacks"
		for _t in /proc/$_pid/task/*; do
			echo "task ${_t##*/} $(cat "$_t/comm"):"
			cat "$_t/stack"
		done
		echo 1 >/proc/sys/kernel/sysrq
		echo t >/proc/sysrq-trigger
		kill -KILL $_pid
		return 1
	fi
	wait $_pid
}
mmtg_t "main: mmt-fuzz (${FUZZ_CALLS} calls or ${FUZZ_TIME} s)" fuzz
mmtg_t "main: tell the peer we are done" mmtg_send "$PEER" 7999 done 60
mmtg_t "main: rmmod after the fuzzer" unload
mmtg_done
