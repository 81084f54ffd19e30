# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# g-mixed-a.sh - a mixed pair, RoCE side (guest 1: Soft-RoCE rxe0 in a
# FABRIC=siw run, whose guest 2 is on Soft-iWARP, g-mixed-b.sh): the two
# cannot connect, and each connect fails quickly with its documented
# errno and a log line that names the fabric (docs/CONNECTIONS.md,
# "Fabrics: RoCE and iWARP").

PEER=$(mmtg_ip_of 2)
MMTG_FABRIC=rxe
MMTG_RDEV=rxe0

mmtg_t "a: rxe0 on eth0" mmtg_add_rxe rxe0 eth0
mmtg_t "a: insmod mmt.ko" mmtg_load_mmt
mmtg_t "a: ping $PEER" mmtg_wait 60 ping -c 1 -W 2 "$PEER"

# 1: B (iWARP) connects to this RoCE listener: refused at once on B
mmt-xfer recv -i 1 -p 7501 -t 20000 -n 1 >/tmp/l.out 2>&1 &
_pid=$!
mmtg_wait 60 grep -q 'listening' /tmp/l.out
sleep 25
kill "$_pid" 2>/dev/null
wait "$_pid"
cat /tmp/l.out

# 2: this RoCE node connects to B's iWARP listener: no answer
mixed_connect() {
	_t0=$(date +%s)
	mmt-xfer send -i 1 -a "$PEER" -p 7502 -N -n 1 -t 5000 \
		-X "$1" >/tmp/c.out 2>&1
	_rc=$?
	_dt=$(($(date +%s) - _t0))
	cat /tmp/c.out
	echo "connect: rc=$_rc after ${_dt}s"
	[ $_rc -eq 0 ] && [ "$_dt" -le 20 ]
}
mmtg_t "a: RoCE connect to an iWARP listener fails within 20 s: ETIMEDOUT" \
	mixed_connect ETIMEDOUT
mmtg_t "a: the log names the fabric the connect tried" \
	sh -c "dmesg | grep 'connect over rxe0 (RoCE) failed: .*same fabric'"
mmtg_t "a: rmmod mmt" mmtg_unload_mmt
mmtg_done
