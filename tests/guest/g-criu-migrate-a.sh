# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# g-criu-migrate-a.sh - CRIU migration of a process holding a big PMO
# between two guests (run `criu-migrate` of tests/guest/tests,
# docs/CRIU.md section 6), node A (guest 1, 10.0.0.1, node id 1): the
# source.  Node B is g-criu-migrate-b.sh.
#
# 1. mmt-criu-count -B (a keyed PMO of criu_mib MiB filled with a
#    pattern, a counter writing into it every millisecond, no copy in its
#    memory) runs.
# 2. A dump with MMT_CRIU_PEER naming a port nobody listens on: refused
#    (the migration fails, outcome known); the process goes on counting,
#    its PMO intact.  A source for B's receiver without capabilities.
# 3. B listens (mmtctl migrate --role dst --park).  The counter is paused
#    (SIGUSR1: it checks its whole PMO and reports its FNV-1a), then
#    `criu dump --leave-running` with MMT_CRIU_PEER=B: the plugin streams
#    the PMO to B during the dump, the image holds a 4 KiB header.
# 4. A's copy is INVALID: the process left running finds its PMO
#    unreadable (EPERM) when told to go on (SIGUSR2).
# 5. The image and the checksum go to B (busybox nc); B restores.
# Lines "# timing" and "# memory" are the figures of docs/CRIU.md.

MIB=$(mmtg_arg criu_mib 256)
PEER=$(mmtg_ip_of 2)
KEY=c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5
. "$MMTG_DIR/criulib.sh"
# the dump streams MIB MiB at 3 to 4.5 MiB/s (TCG, Soft-RoCE)
CRIU_TMO=$((120 + MIB))

criu_node A 1
mmtg_t "A: ping $PEER" mmtg_wait 60 ping -c 1 -W 2 "$PEER"

# --- 1. the counter --------------------------------------------------------

# a PID B does not use (criu restore keeps the PID)
echo 30000 >/proc/sys/kernel/ns_last_pid
start -B /tmp/status "$MIB"
mmtg_t "A: mmt-criu-count -B fills $MIB MiB and counts" \
	mmtg_wait $((60 + MIB / 2)) advanced /tmp/status 300 0
echo "# A: counter pid $PID"

# --- 2. a failed migration ---------------------------------------------------

C0=$(field count /tmp/status)
K0=$(field checks /tmp/status)
mmtg_t "A: dump with MMT_CRIU_PEER=$PEER:7999 (nobody listens): refused" \
	refused peer_dump "$PEER:7999" /tmp/img0
mmtg_t "A: with the plugin's message" \
	grep -q "mmt_criu: cannot connect to MMT_CRIU_PEER=$PEER:7999" \
	/tmp/img0/dump.log /tmp/img0/stderr.log
mmtg_t "A: the process goes on, its PMO writable and intact" \
	mmtg_wait 60 restored /tmp/status "$C0" "$K0"

# a source for B's receiver without capabilities (B checks the EPERM):
# the migration fails, the connection ended
head -c 131072 /dev/urandom >/tmp/small.bin
mmtg_t "A: a migration to a receiver without CAP_CHECKPOINT_RESTORE fails" \
	refused mmtg_run 120 mmtctl migrate --role src --peer "$PEER" \
	--port 7901 --in /tmp/small.bin --levels 2 --key-hex "$KEY" \
	--timeout 60000

# --- 3. the migration --------------------------------------------------------

mmtg_send "$PEER" 7800 ready 120
mmtg_t "A: B listens" mmtg_recv 7801 300
kill -USR1 "$PID"
mmtg_t "A: the counter paused, its whole PMO checked" \
	mmtg_wait $((60 + MIB / 2)) grep -q paused /tmp/status
SUM=$(sed -n 's/.*sum=\([0-9a-f]*\).*/\1/p' /tmp/status)
C1=$(field count /tmp/status)
echo "# A: paused at count=$C1, PMO FNV-1a $SUM"

memwatch /tmp/mem.a &
W=$!
T0=$(ms)
mmtg_t "A: criu dump --leave-running, the PMO streamed to B" \
	peer_dump "$PEER:7900" /tmp/img --leave-running ||
	show_logs /tmp/img/dump.log
T1=$(ms)
touch /tmp/mem.stop
wait $W
grep 'mmt_criu: fd' /tmp/img/dump.log | sed 's/^/# A: /'
echo "# timing: A: criu dump of $MIB MiB (the PMO streamed live to B): $((T1 - T0)) ms"
grep -o 'in [0-9.]* ms (downtime [0-9.]* ms, [0-9]* closures, peak extra memory [0-9]* bytes)' /tmp/img/dump.log | head -n 1 |
	sed "s/^/# timing: A: the PMO's migration: /"
memsummary A /tmp/mem.a
IMG=$(find /tmp/img -name 'mmt-*.img' -size +4k | wc -l)
mmtg_check "A: every mmt image is a 4 KiB header (no data in the image)" \
	"$IMG" -eq 0
echo "# A: image $(du -sk /tmp/img | cut -f1) KiB in all (CRIU's own files included)"

# --- 4. A's copy -------------------------------------------------------------

kill -USR2 "$PID"
mmtg_t "A: A's copy is INVALID: the process left running cannot read it (EPERM)" \
	mmtg_wait 60 grep -q 'FAIL pread (whole PMO) (errno 1:' /tmp/status
stop

# --- 5. to B -----------------------------------------------------------------

echo "$SUM $C1" >/tmp/img/sum.txt
# send_img - the image directory to B's nc on 7802, retried until B
# listens (for 120 s)
send_img() {
	_end=$(($(date +%s) + 120))
	until tar -C /tmp -cf - img | timeout -k 2 60 nc "$PEER" 7802 \
		2>/dev/null; do
		[ "$(date +%s)" -ge "$_end" ] && return 1
		sleep 0.5
	done
}
mmtg_t "A: the image to B" send_img
mmtg_t "A: B is done" mmtg_recv 7803 $((300 + MIB))
mmtg_t "A: rmmod mmt" mmtg_unload_mmt
mmtg_done
