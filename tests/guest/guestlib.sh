# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# guestlib.sh - helpers for guest scripts (busybox ash), sourced by /init
# before /opt/mmt/guest.sh.  Files of the run are in /opt/mmt: mmt.ko,
# bin/ (the static programs built from tests/guest/*.c), guest.sh.
#
# Environment set by /init: MMTG_ID (1..N), MMTG_N, MMTG_IP, MMTG_MTU.
#
# Result lines on the console (collected by run.sh and tests):
#	ok - NAME
#	not ok - NAME (why)
#	@R@FILE@ LINE		a line of a result file (see mmtg_result)
# Every command of a test runs under timeout: use mmtg_t or mmtg_run.

MMTG_DIR=/opt/mmt
MMTG_ID=${MMTG_ID:-1}
MMTG_PASS=0
MMTG_FAIL=0
# default time limit of one command, seconds
MMTG_CMD_TIMEOUT=${MMTG_CMD_TIMEOUT:-60}
PATH=$MMTG_DIR/bin:$PATH
export PATH

# mmtg_ok NAME - record a passed test
mmtg_ok() {
	MMTG_PASS=$((MMTG_PASS + 1))
	echo "ok - $1"
}

# mmtg_notok NAME WHY - record a failed test
mmtg_notok() {
	MMTG_FAIL=$((MMTG_FAIL + 1))
	echo "not ok - $1 ($2)"
}

# mmtg_check NAME CONDITION... - ok if the shell test CONDITION holds
# (e.g. mmtg_check "dev exists" -c /dev/mmt)
mmtg_check() {
	_n=$1
	shift
	if [ "$@" ]; then
		mmtg_ok "$_n"
	else
		mmtg_notok "$_n" "test $* is false"
	fi
}

# mmtg_is_function NAME - true if NAME is a shell function (which timeout
# cannot run: a function must put its own commands under timeout)
mmtg_is_function() {
	case $(type "$1" 2>/dev/null) in
	*function*) return 0 ;;
	esac
	return 1
}

# mmtg_run SECS CMD... - run CMD under timeout SECS, return its status
# (124/143 on timeout)
mmtg_run() {
	_s=$1
	shift
	timeout -k 5 "$_s" "$@"
}

# mmtg_t NAME CMD... - one test: run CMD under timeout $MMTG_CMD_TIMEOUT
# (override per call: MMTG_CMD_TIMEOUT=300 mmtg_t ...), ok if it exits 0.
# CMD may be a shell function (it cannot run under timeout: it must put its
# own commands under timeout, as the mmtg_* helpers do).
mmtg_t() {
	_n=$1
	shift
	if mmtg_is_function "$1"; then
		"$@"
	else
		timeout -k 5 "$MMTG_CMD_TIMEOUT" "$@"
	fi
	_rc=$?
	if [ $_rc -eq 0 ]; then
		mmtg_ok "$_n"
	else
		mmtg_notok "$_n" "rc=$_rc: $*"
	fi
	return $_rc
}

# mmtg_result NAME FILE - send FILE to the host: run.sh writes its lines
# to build/guest/<run>/<guest>.results/NAME
mmtg_result() {
	sed "s|^|@R@$1@ |" "$2"
}

# mmtg_result_quiet NAME FILE - mmtg_result with the kernel's console
# messages held back meanwhile: a line of theirs inside a result line
# would change the result (seen: "hrtimer: interrupt took ... ns")
mmtg_result_quiet() {
	_lvl=$(cut -f 1 /proc/sys/kernel/printk)
	dmesg -n 1
	mmtg_result "$1" "$2"
	dmesg -n "$_lvl"
}

# mmtg_arg NAME [DEFAULT] - the value of NAME=VALUE on the kernel command
# line (the host's run.sh --append), else DEFAULT
mmtg_arg() {
	# shellcheck disable=SC2013 # the words of one line
	for _w in $(cat /proc/cmdline); do
		case $_w in
		"$1"=*) echo "${_w#*=}"; return ;;
		esac
	done
	echo "${2:-}"
}

# mmtg_ip_of ID - IPv4 address of guest ID
mmtg_ip_of() {
	echo "10.0.0.$1"
}

# The run's RDMA fabric (run.sh --fabric, FABRIC on the host): rxe
# (Soft-RoCE, the default) or siw (Soft-iWARP); MMTG_RDEV is the name of
# the device mmtg_add_rxe makes by default (rxe0 or siw0)
MMTG_FABRIC=$(mmtg_arg mmtg_fabric rxe)
MMTG_RDEV=${MMTG_FABRIC}0

# mmtg_load_rxe - load the run's soft RDMA provider (Soft-RoCE, or
# Soft-iWARP with mmtg_fabric=siw) and the RDMA CM; the crc32 modules are
# requested by rxe at run time (docs/TESTING.md, pitfall 1)
mmtg_load_rxe() {
	if [ "$MMTG_FABRIC" = siw ]; then
		# the kernel's own siw, else the one run.sh ships
		mmtg_run 60 modprobe -a libcrc32c ib_core ib_uverbs rdma_ucm &&
			{ modprobe siw 2>/dev/null ||
			  mmtg_run 30 insmod "$MMTG_DIR/siw.ko"; }
		return
	fi
	mmtg_run 60 modprobe -a crc32_generic crc32-pclmul rdma_rxe ib_uverbs \
		rdma_ucm
}

# mmtg_add_rxe [NAME] [NETDEV] - load the run's provider and create its
# device on NETDEV (eth0): Soft-RoCE NAME (rxe0), or with mmtg_fabric=siw
# Soft-iWARP, NAME with its "rxe" prefix made "siw" (siw0)
mmtg_add_rxe() {
	_name=${1:-rxe0}
	[ "$MMTG_FABRIC" = siw ] && _name=siw${_name#rxe}
	mmtg_load_rxe &&
		mmtg_run 30 rdma link add "$_name" type "$MMTG_FABRIC" \
			netdev "${2:-eth0}"
}

# mmtg_rxe_only WHAT - 0 on Soft-RoCE; on another fabric print that WHAT
# is skipped there (a part of a run that is rxe's alone) and return 1
mmtg_rxe_only() {
	[ "$MMTG_FABRIC" = rxe ] && return 0
	echo "ok - # SKIP $1: rxe only, this run is on $MMTG_FABRIC"
	return 1
}

# mmtg_mmt_deps - load the modules mmt.ko depends on (its modinfo
# "depends"), so insmod finds their symbols
mmtg_mmt_deps() {
	_deps=$(modinfo -F depends "$MMTG_DIR/mmt.ko" 2>/dev/null | tr , ' ')
	[ -z "$_deps" ] && return 0
	# shellcheck disable=SC2086 # a list of names
	mmtg_run 60 modprobe -a $_deps
}

# mmtg_load_mmt [PARAM=VALUE...] - insmod the module under test
mmtg_load_mmt() {
	mmtg_mmt_deps && mmtg_run 60 insmod "$MMTG_DIR/mmt.ko" "$@"
}

# mmtg_unload_mmt - rmmod the module under test
mmtg_unload_mmt() {
	mmtg_run 60 rmmod mmt
}

# mmtg_stat NAME - a counter of debugfs mmt/stats
mmtg_stat() {
	awk -v n="$1" '$1 == n { print $2 }' /sys/kernel/debug/mmt/stats
}

# mmtg_stat_is NAME VALUE - the debugfs mmt/stats counter NAME is VALUE
mmtg_stat_is() {
	[ "$(mmtg_stat "$1")" = "$2" ]
}

# mmtg_wait SECS CMD... - retry CMD every 0.2 s until it succeeds or SECS
# pass; return its last status.  Each try of a program runs under timeout
# $MMTG_TRY_TIMEOUT (default 20 s); a shell function is called as it is.
mmtg_wait() {
	_end=$(($(date +%s) + $1))
	shift
	while :; do
		if mmtg_is_function "$1"; then
			"$@" && return 0
		else
			timeout -k 2 "${MMTG_TRY_TIMEOUT:-20}" "$@" && return 0
		fi
		_rc=$?
		[ "$(date +%s)" -ge "$_end" ] && return $_rc
		sleep 0.2
	done
}

# mmtg_recv PORT SECS - wait up to SECS for one message from another guest
# on TCP PORT and print it (empty on timeout; status non-zero then)
mmtg_recv() {
	timeout -k 2 "$2" nc -l -p "$1" 2>/dev/null | head -n 1 | grep .
}

# mmtg_send HOST PORT MSG SECS - send MSG to mmtg_recv on HOST:PORT,
# retrying until it is listening or SECS pass
mmtg_send() {
	_end=$(($(date +%s) + $4))
	while :; do
		echo "$3" | timeout -k 2 10 nc "$1" "$2" 2>/dev/null && return 0
		[ "$(date +%s)" -ge "$_end" ] && return 1
		sleep 0.2
	done
}

# --- slab leak checks ------------------------------------------------------
#
# A snapshot holds the active objects of every kmalloc cache and the number
# of vmalloc areas per allocating function.  A leak of one object (or area)
# per operation grows one entry by the number of operations between two
# snapshots; mmtg_slab_compare fails above a bound the caller chooses (half
# of that number, or less where the counts are exact).
#
# Exact counts: boot with slub_debug=U,kmalloc-* (tests/guest/tests and
# tests/pmo/run.sh do): debug caches keep no per-CPU slabs, so after a
# shrink the counts are exact up to what runs concurrently (seen: +/-7);
# without it per-CPU slabs add up to a slab of noise per cache (+84 in
# kmalloc-96 seen).  store_user also names the allocation sites of a grown
# cache (mmtg_slab_callers).  The counts are read in one go from
# /proc/slabinfo, 6 s after the shrink: every sysfs open frees a kernfs
# node with kfree_rcu, which 6.1 batches for up to 5 s, so reading each
# cache's sysfs file would count up to a hundred pending kmalloc-96
# objects of its own.  Lazily freed vmalloc areas ("unpurged vm_area")
# are not counted.  Leaks of whole pages (alloc_pages) are not measured.

# mmtg_slab_exact - true if the kmalloc counts are exact (see above)
mmtg_slab_exact() {
	[ "$(cat /sys/kernel/slab/kmalloc-64/store_user 2>/dev/null)" = 1 ]
}

# mmtg_slab_snapshot FILE - write "cache objects" for every kmalloc cache
# and "vmalloc:<function> areas" for every function holding vmalloc areas
mmtg_slab_snapshot() {
	sync
	for _c in /sys/kernel/slab/kmalloc-* /sys/kernel/slab/dma-kmalloc-*; do
		[ -e "$_c/shrink" ] && echo 1 >"$_c/shrink" 2>/dev/null
	done
	sleep 6
	{
		awk '$1 ~ /^(dma-)?kmalloc-/ { print $1, $2 }' /proc/slabinfo
		# callers without a symbol (an unloaded module) count together
		awk '$3 != "unpurged" {
			sub(/\+.*/, "", $3)
			if ($3 ~ /^0x/) $3 = "unknown"
			n[$3]++
		     }
		     END { for (c in n) print "vmalloc:" c, n[c] }' \
			/proc/vmallocinfo
	} | sort >"$1"
}

# mmtg_slab_compare BOUND A B... - growth of every entry from snapshot A
# to the smallest count of the later snapshots B... (objects that come and
# go, such as skb heads in virtio-net's TX ring, are not a leak); prints
# the entries that changed; fails if one grew by more than BOUND
mmtg_slab_compare() {
	_bound=$1
	shift
	awk -v bound="$_bound" '
		FILENAME == ARGV[1] { a[$1] = $2; next }
		!($1 in b) || $2 < b[$1] { b[$1] = $2 }
		END {
			for (k in b) {
				d = b[k] - a[k]
				if (k !~ /^vmalloc:/) tot += d
				if (d != 0)
					printf "  %s: %d -> %d (%+d)\n", k, a[k], b[k], d
				if (d > bound) bad = bad " " k
			}
			printf "kmalloc growth total %+d objects, bound %d per cache or vmalloc caller\n", tot, bound
			if (bad != "") { print "leak suspected in:" bad; exit 1 }
		}' "$@"
}

# mmtg_slab_callers BOUND A B - for every kmalloc cache that grew by more
# than BOUND from A to B, its allocation sites with at least BOUND objects
# (debugfs alloc_traces, kept with slub_debug=U; boot-time sites left out)
mmtg_slab_callers() {
	mmtg_slab_exact || return 0
	awk -v bound="$1" 'FILENAME == ARGV[1] { a[$1] = $2; next }
		$2 - a[$1] > bound && $1 !~ /^vmalloc:/ { print $1 }' "$2" "$3" |
	while read -r _c; do
		_t=/sys/kernel/debug/slab/$_c/alloc_traces
		[ -r "$_t" ] || continue
		echo "allocation sites in $_c with >= $1 objects:"
		awk -v b="$1" 'BEGIN { RS = "" }
			$1 + 0 >= b && !/kernel_init/ { print; print "" }' "$_t" |
			head -n 60
	done
}

# mmtg_done - print the guest's summary and exit with the failure count
# (capped at 100); the last line of every guest script
mmtg_done() {
	# a failure's evidence: the module's and the fabric's last kernel
	# log lines (pr_info, below the console's level), marked so that
	# run.sh does not take them for the console's own
	if [ "$MMTG_FAIL" -gt 0 ]; then
		dmesg | grep -E 'mmt|rxe|siw|infiniband' | tail -n 30 |
			sed 's/^/dmesg: /'
	fi
	echo "guest $MMTG_ID: $MMTG_PASS passed, $MMTG_FAIL failed"
	[ $MMTG_FAIL -gt 100 ] && MMTG_FAIL=100
	exit $MMTG_FAIL
}
