# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# g-criu-migrate-b.sh - node B (guest 2, 10.0.0.2, node id 2) of the run
# `criu-migrate` (g-criu-migrate-a.sh is node A): receives the PMO while A
# dumps, restores the process.
#
# 0. A receiver without capabilities: --park refused (EPERM).
# 1. `mmtctl with-pmo --receive` makes the receive PMO; in it `mmtctl
#    migrate --role dst --park --fd 3` receives A's PMO and parks it (the
#    handle printed).  While the shell still holds fd 3 a restore of the
#    handle is refused (EBUSY); a restore with a buffer too (EINVAL).
# 2. The image from A (busybox nc); `criu restore`: the process is back,
#    paused; told to go on (SIGUSR2) it checks its whole PMO (VALID,
#    byte-exact: the same FNV-1a as on A, every word the pattern or the
#    counter's value) and counts on.
# 3. The handle again: ESTALE; the image again (the process stopped):
#    refused with the plugin's ESTALE.

MIB=$(mmtg_arg criu_mib 256)
PEER=$(mmtg_ip_of 1)
KEY=c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5c5
. "$MMTG_DIR/criulib.sh"
CRIU_TMO=$((120 + MIB))

criu_node B 2

# --- 1. the receiver ---------------------------------------------------------

# receiver - run inside `mmtctl with-pmo` (the PMO is fd 3): receive and
# park, then try to restore the handle while fd 3 is still open here
cat >/tmp/receiver.sh <<EOS
mmtctl migrate --role dst --port 7900 --park --fd 3 --node-id 2 \
	--timeout 120000 >/tmp/recv.out 2>&1
echo \$? >/tmp/recv.rc
H=\$(sed -n 's/^parked: //p' /tmp/recv.out)
mmt-criu-count -R "\$H" >/tmp/busy.out 2>&1
touch /tmp/recv.done
EOS
# without CAP_CHECKPOINT_RESTORE and CAP_SYS_ADMIN (root, every
# capability dropped from the bounding set): MMT_IOC_MIGRATE_RECV with
# MMT_MIGRATE_PARK refused before anything is received
noperm() {
	mmtg_run 120 /usr/local/bin/setpriv-ul --bounding-set -all --inh-caps -all \
		mmtctl migrate --role dst --port 7901 --park --size 131072 \
		--levels 2 --key-hex "$KEY" --timeout 60000 >/tmp/eperm.out 2>&1
	_rc=$?
	sed 's/^/# B: /' /tmp/eperm.out
	[ $_rc -ne 0 ] &&
		grep -q 'MMT_IOC_MIGRATE_RECV.*Operation not permitted' /tmp/eperm.out
}
mmtg_t "B: --park without CAP_CHECKPOINT_RESTORE: MMT_IOC_MIGRATE_RECV EPERM" \
	noperm
mmtg_check "B: no record made" "$(mmtg_stat ckpt_records)" -eq 0
mmtg_t "B: A is ready" mmtg_recv 7800 $((300 + MIB))
mmtg_t "B: the receive PMO made" true
mmtctl with-pmo --receive --size $((MIB << 20)) --levels 2 --key-hex "$KEY" \
	-- sh /tmp/receiver.sh &
sleep 3
memwatch /tmp/mem.b &
W=$!
mmtg_send "$PEER" 7801 listening 60
mmtg_t "B: the receive ends" mmtg_wait $((120 + MIB)) test -f /tmp/recv.done
touch /tmp/mem.stop
wait $W
sed 's/^/# B: /' /tmp/recv.out
memsummary B /tmp/mem.b
mmtg_check "B: mmtctl migrate --park committed" "$(cat /tmp/recv.rc)" -eq 0
H=$(sed -n 's/^parked: //p' /tmp/recv.out)
mmtg_check "B: a handle printed" "${#H}" -eq 32
mmtg_t "B: restore while the receiver's fd is open: EBUSY" \
	grep -q '^restore: EBUSY' /tmp/busy.out
mmtg_check "B: one parked record (debugfs ckpt_records)" \
	"$(mmtg_stat ckpt_records)" -eq 1
mmt-criu-count -R "$H" buf >/tmp/buf.out 2>&1
mmtg_t "B: restore of the parked PMO with a buffer: EINVAL" \
	grep -q '^restore: EINVAL' /tmp/buf.out
mmtg_check "B: the record kept" "$(mmtg_stat ckpt_records)" -eq 1

# --- 2. the image, the restore -----------------------------------------------

mmtg_t "B: the image from A" \
	sh -c "timeout 120 nc -l -p 7802 | tar -C /tmp -xf -"
read -r SUM C1 </tmp/img/sum.txt
echo "# B: A paused its counter at count=$C1, PMO FNV-1a $SUM"
T0=$(ms)
mmtg_t "B: criu restore" restore /tmp/img || show_logs /tmp/img/restore.log
T1=$(ms)
echo "# timing: B: criu restore (the parked PMO, no data read from the image): $((T1 - T0)) ms"
PID=$(cat /tmp/img/restored.pid 2>/dev/null || echo 0)
mmtg_check "B: the record consumed" "$(mmtg_stat ckpt_records)" -eq 0
mmtg_t "B: the restored process runs" alive
kill -USR2 "$PID" 2>/dev/null
mmtg_t "B: it checked its whole PMO (VALID, byte-exact) and goes on" \
	mmtg_wait $((60 + MIB / 2)) grep -qs resumed /tmp/status.resumed
mmtg_check "B: the PMO's FNV-1a is A's" \
	"$(sed -n 's/.*sum=\([0-9a-f]*\).*/\1/p' /tmp/status.resumed)" = "$SUM"
mmtg_check "B: at A's count" "$(field count /tmp/status.resumed)" -eq "$C1"
K=$(field checks /tmp/status)
mmtg_t "B: it counts on into its PMO" \
	mmtg_wait 60 restored /tmp/status $((C1 + 512)) $((K + 1))
echo "# B: $(cat /tmp/status)"

# --- 3. once ---------------------------------------------------------------

mmt-criu-count -R "$H" >/tmp/again.out 2>&1
mmtg_t "B: the handle again: ESTALE" grep -q '^restore: ESTALE' /tmp/again.out
stop
mmtg_t "B: the image restored again: refused" refused restore /tmp/img
mmtg_t "B: its refusal is the module's ESTALE" \
	grep -q 'mmt_criu: cannot restore .*Stale file handle' \
	/tmp/img/restore.log /tmp/img/stderr.log
mmtg_check "B: no PMO alive" "$(pmos)" -eq 0
mmtg_send "$PEER" 7803 done 60
mmtg_t "B: rmmod mmt" mmtg_unload_mmt
mmtg_done
