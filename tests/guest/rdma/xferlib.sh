# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# xferlib.sh - what g-xfer-send.sh (guest 1) and g-xfer-recv.sh (guest 2)
# share: the leak checks, run in step on both guests.  Shipped as
# /opt/mmt/xferlib.sh (tests/guest/tests: RUN_FILES) and sourced.

# The part of the run (xfer_part= on the kernel command line, from
# tests/guest/tests): "all", "cases" (every case but the slab-count leak
# loops: the debug kernel's xfer@debug, where kmemleak is the leak check
# and KASAN's quarantine blurs the counts) or "leak" (only the loops:
# xfer-leak, on Debian's kernel, where the counts are exact)
XFER_PART=$(mmtg_arg xfer_part all)

# xfer_cases, xfer_leaks - true if this run has the cases, the leak loops
xfer_cases() {
	[ "$XFER_PART" != leak ]
}
xfer_leaks() {
	[ "$XFER_PART" != cases ]
}

# xfer_case NAME CMD... - one case (mmtg_t), unless this run has only the
# leak loops; when it fails, the kernel's last messages (the console
# shows only warnings and worse: the module's rate-limited pr_info lines
# about QP events and failed WRs are only here)
xfer_case() {
	xfer_cases || return 0
	_name=$1
	shift
	MMTG_CMD_TIMEOUT=${T:-120} mmtg_t "$_name" "$@" || {
		echo "kernel log, last lines:"
		dmesg | tail -n 25
		return 1
	}
}

# xfer_grew PEER BOUND A - three snapshots A.b1..A.b3, each after the
# network has settled (a ping of the peer: its last ACKs and frees have
# happened); fails if an entry's smallest count is above snapshot A's by
# more than BOUND (skb heads in flight come and go), printing the
# allocation sites of what grew
xfer_grew() {
	for _i in 1 2 3; do
		ping -c 1 -W 1 "$(mmtg_ip_of "$1")" >/dev/null 2>&1
		sleep 1
		mmtg_slab_snapshot "$3.b$_i"
	done
	mmtg_slab_compare "$2" "$3" "$3.b1" "$3.b2" "$3.b3" || {
		mmtg_slab_callers "$2" "$3" "$3.b1"
		return 1
	}
}

# xfer_leak_rounds PEER ROLE ARGS... - 24 one-connection transfers (ports
# 7430..7453), a snapshot after the 4th; fails if a kmalloc cache or a
# vmalloc caller grew by more than 10 over the last 20 (a leak per
# connection shows >= 20; the counts are exact with slub_debug=U)
xfer_leak_rounds() {
	_peer=$1
	_role=$2
	shift 2
	_i=0
	while [ $_i -lt 24 ]; do
		[ $_i -eq 4 ] && mmtg_slab_snapshot /tmp/slab.a
		mmtg_run 60 mmt-xfer "$_role" -p $((7430 + _i)) -n 2 \
			-s $((100 + _i)) "$@" >/tmp/leak.out 2>&1 || {
			cat /tmp/leak.out
			return 1
		}
		_i=$((_i + 1))
	done
	xfer_grew "$_peer" 10 /tmp/slab.a
}

# Delegations of xfer_loop_leak: 1000; 100 on the debug kernel, where one
# costs 37 times as much (1000 took 227 s of guest time) and kmemleak
# looks for leaks as well
# and of the cases that kill or invalidate mid-transfer and the retry:
# 128 closures (32 on the debug kernel, where 32 still take seconds
# against the 300 ms before the kill)
case $(uname -r) in
*-mmt-debug) XFER_LOOP_N=100 XFER_BIG_N=32 ;;
*) XFER_LOOP_N=1000 XFER_BIG_N=128 ;;
esac
# the loop's bound per cache: on the debug kernel KASAN's quarantine
# keeps freed objects allocated in SLUB's eyes for seconds, among them the
# kernfs_open_file (kmalloc-128) of every sysfs file the snapshots read:
# 40 such objects made kmalloc-128 grow by 39 in two runs,
# with kmemleak reporting nothing; a leak per delegation still shows 100
case $(uname -r) in
*-mmt-debug) XFER_LOOP_BOUND=60 ;;
*) XFER_LOOP_BOUND=20 ;;
esac

# xfer_loop_leak PEER ROLE ARGS... - XFER_LOOP_N delegations in a row on
# one connection (port 7481), each of a new PMO of two 4 KiB closures,
# after 20 on another connection (port 7480) as a warm-up and a snapshot;
# fails if the loop failed or any kmalloc cache or vmalloc caller grew by
# more than XFER_LOOP_BOUND (a leak per delegation or per PMO shows >=
# XFER_LOOP_N)
xfer_loop_leak() {
	_peer=$1
	_role=$2
	shift 2
	mmtg_run 120 mmt-xfer "$_role" -p 7480 -l 1 -n 2 -r 20 "$@" \
		>/tmp/loop.out 2>&1 || {
		cat /tmp/loop.out
		return 1
	}
	mmtg_slab_snapshot /tmp/loop.a
	mmtg_run 900 mmt-xfer "$_role" -p 7481 -l 1 -n 2 -r "$XFER_LOOP_N" "$@" \
		>/tmp/loop.out 2>&1
	_rc=$?
	grep -a 'transfers' /tmp/loop.out
	[ $_rc -eq 0 ] || { cat /tmp/loop.out; return 1; }
	xfer_grew "$_peer" "$XFER_LOOP_BOUND" /tmp/loop.a
}
