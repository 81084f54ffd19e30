# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# criulib.sh - helpers of the CRIU guest runs (g-criu.sh,
# g-criu-migrate-{a,b}.sh): the counter (mmt-criu-count), criu dump and
# restore with the plugin in $LIB, and what they leave.  Sourcing it puts
# the plugin (/opt/mmt/mmt_criu.so) in $LIB.

LIB=/tmp/criu-lib
mkdir -p "$LIB"
cp "$MMTG_DIR/mmt_criu.so" "$LIB/"

# criu_node NAME ID - a node of the run criu-migrate: Soft-RoCE, the
# module with node id ID, nf_tables (criu's start-up checks create an
# nftables table)
criu_node() {
	mmtg_t "$1: rxe0 on eth0" mmtg_add_rxe rxe0 eth0
	mmtg_t "$1: insmod mmt.ko" mmtg_load_mmt
	mmtg_t "$1: node id $2" mmtctl set-node-id --node-id "$2"
	mmtg_t "$1: modprobe nf_tables (for criu)" mmtg_run 60 modprobe nf_tables
}

# field NAME FILE - the number after NAME= in FILE (0 if none)
field() {
	_v=$(sed -n "s/.*$1=\([0-9]*\).*/\1/p" "$2" 2>/dev/null)
	echo "${_v:-0}"
}

# advanced FILE COUNT CHECKS - the status in FILE has a count above
# COUNT and more checks than CHECKS, and no FAIL
advanced() {
	! grep -q FAIL "$1" 2>/dev/null &&
		[ "$(field count "$1")" -gt "$2" ] &&
		[ "$(field checks "$1")" -gt "$3" ]
}

# alive - the process $PID (a restored one: from criu's pidfile) runs
alive() {
	[ "${PID:-0}" -gt 1 ] && kill -0 "$PID" 2>/dev/null
}

# restored FILE COUNT CHECKS - alive, and advanced FILE COUNT CHECKS
restored() {
	alive && advanced "$@"
}

# start ARGS... - start mmt-criu-count in its own session; sets PID
start() {
	rm -f /tmp/status
	# stdio: /dev/null (a file there must keep its size for criu
	# restore, and the plugin's messages at restore would go to it)
	setsid mmt-criu-count "$@" </dev/null >/dev/null 2>&1 &
	PID=$!
}

# dump DIR [ARGS...] - criu dump of $PID into DIR with ARGS (its log
# DIR/dump.log, its stderr DIR/stderr.log); at most $CRIU_TMO s (120)
dump() {
	_d=$1
	shift
	rm -rf "$_d"
	mkdir -p "$_d"
	mmtg_run "${CRIU_TMO:-120}" criu dump -t "$PID" -D "$_d" -L "$LIB" \
		-o dump.log -v4 "$@" 2>"$_d/stderr.log"
}

# restore DIR - criu restore from DIR, detached (log DIR/restore.log,
# stderr DIR/stderr.log)
restore() {
	mmtg_run "${CRIU_TMO:-120}" criu restore -D "$1" -d -L "$LIB" \
		-o restore.log -v4 --pidfile "$1/restored.pid" \
		2>"$1/stderr.log"
}

# peer_dump ADDR:PORT DIR [ARGS...] - dump with MMT_CRIU_PEER=ADDR:PORT
# (the plugin's cross-node mode, docs/CRIU.md section 6)
peer_dump() {
	MMT_CRIU_PEER=$1
	export MMT_CRIU_PEER
	shift
	dump "$@"
	_rc=$?
	unset MMT_CRIU_PEER
	return $_rc
}

# refused CMD DIR - CMD (dump or restore) of DIR fails
refused() {
	! "$@"
}

# stop - kill the counter ($PID, if it is one) and wait until it is gone
stop() {
	[ "${PID:-0}" -gt 1 ] || return 0
	kill "$PID" 2>/dev/null
	mmtg_wait 10 gone
}

# gone - the counter's process is not running
gone() {
	! kill -0 "$PID" 2>/dev/null
}

# pmos - PMOs alive (debugfs mmt/stats)
pmos() {
	sed -n 's/^pmos //p' /sys/kernel/debug/mmt/stats
}

# flip FILE OFFSET - xor one byte of FILE with 1
flip() {
	_b=$(dd if="$1" bs=1 skip="$2" count=1 2>/dev/null | od -An -tu1 | tr -d ' ')
	# shellcheck disable=SC2059 # the octal escape is the format
	printf "$(printf '\\%03o' $((_b ^ 1)))" |
		dd of="$1" bs=1 seek="$2" count=1 conv=notrunc 2>/dev/null
}

show_logs() {
	for _f in "$@"; do
		[ -f "$_f" ] || continue
		echo "# --- $_f (errors)"
		grep -iE 'error|mmt_criu|fail' "$_f" | head -n 20 | sed 's/^/# /'
	done
}

# ms - milliseconds since boot
ms() {
	awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime
}

# memwatch FILE - every 0.1 s until /tmp/mem.stop exists, append a line
# "<Slab + VmallocUsed> <MemAvailable>" (KiB, /proc/meminfo) to FILE
memwatch() {
	rm -f /tmp/mem.stop "$1"
	while [ ! -f /tmp/mem.stop ]; do
		awk '/^(Slab|VmallocUsed):/ { k += $2 }
		     /^MemAvailable:/ { a = $2 }
		     END { print k, a }' /proc/meminfo >>"$1"
		sleep 0.1
	done
	rm -f /tmp/mem.stop
}

# memsummary NODE FILE - the "# memory" line of a memwatch FILE: the peak
# growth of the kernel's Slab + VmallocUsed and the deepest drop of
# MemAvailable, from its first line
memsummary() {
	awk -v n="$1" 'NR == 1 { k0 = $1; a0 = $2; kmax = $1; amin = $2 }
		{ if ($1 > kmax) kmax = $1; if ($2 < amin) amin = $2 }
		END { printf "# memory: %s: kernel Slab+VmallocUsed peak growth %d KiB, MemAvailable drop %d KiB (%d samples)\n", n, kmax - k0, a0 - amin, NR }' "$2"
}
