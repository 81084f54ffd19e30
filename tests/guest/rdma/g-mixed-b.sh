# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# g-mixed-b.sh - a mixed pair, iWARP side (guest 2: Soft-iWARP siw0; see
# g-mixed-a.sh).

PEER=$(mmtg_ip_of 1)

mmtg_t "b: siw0 on eth0" mmtg_add_rxe rxe0 eth0
mmtg_t "b: insmod mmt.ko" mmtg_load_mmt
mmtg_t "b: ping $PEER" mmtg_wait 60 ping -c 1 -W 2 "$PEER"

# 1: connect to A's RoCE listener
mixed_connect() {
	_t0=$(date +%s)
	mmt-xfer send -i 2 -a "$PEER" -p 7501 -N -n 1 -t 5000 \
		-X "$1" >/tmp/c.out 2>&1
	_rc=$?
	_dt=$(($(date +%s) - _t0))
	cat /tmp/c.out
	echo "connect: rc=$_rc after ${_dt}s"
	[ $_rc -eq 0 ] && [ "$_dt" -le 20 ]
}
sleep 5
mmtg_t "b: iWARP connect to a RoCE listener fails within 20 s: ECONNREFUSED" \
	mixed_connect ECONNREFUSED
mmtg_t "b: the log names the fabric the connect tried" \
	sh -c "dmesg | grep 'connect over siw0 (iWARP) failed: .*same fabric'"

# 2: listen; A's connect never reaches this listener
mmt-xfer recv -i 2 -p 7502 -t 30000 -n 1 >/tmp/l.out 2>&1 &
_pid=$!
sleep 40
kill "$_pid" 2>/dev/null
wait "$_pid"
cat /tmp/l.out
mmtg_t "b: rmmod mmt" mmtg_unload_mmt
mmtg_done
