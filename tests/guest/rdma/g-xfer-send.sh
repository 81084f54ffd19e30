# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# g-xfer-send.sh - two-guest connection test, sending side (guest 1): one
# mmt-xfer sender per case of g-xfer-recv.sh (guest 2), connecting to its
# port (retrying while the receiver is not listening yet).

PEER=$(mmtg_ip_of 2)

mmtg_t "send: $MMTG_RDEV on eth0" mmtg_add_rxe rxe0 eth0
mmtg_t "send: insmod mmt.ko" mmtg_load_mmt
echo 0 >/proc/sys/net/ipv6/conf/eth0/accept_dad
mmtg_t "send: IPv6 address fd00::$MMTG_ID" \
	ip -6 addr add "fd00::$MMTG_ID/64" dev eth0
mmtg_t "send: ping $PEER" mmtg_wait 60 ping -c 1 -W 2 "$PEER"

. "$MMTG_DIR/xferlib.sh"

# s NAME PORT ARGS... - one sender run
s() {
	_name=$1
	_port=$2
	shift 2
	xfer_case "send: $_name" mmt-xfer send -i 1 -a "$PEER" -p "$_port" "$@"
}

s "mmt transfer, 1 closure" 7401 -n 1 -s 11
s "connect to a port nobody listens on: ECONNREFUSED" 7499 -N \
	-X ECONNREFUSED
s "connect to an address nobody has: EHOSTUNREACH" 7498 -a 10.0.0.99 -N \
	-X EHOSTUNREACH
s "mmt transfer, 32 closures" 7402 -n 32 -s 12
s "mmt copy, 32 closures" 7403 -n 32 -s 13 -C
s "plain, 32 closures: plain PMOs, RDMA-written PMO to PMO" 7404 -n 32 \
	-s 14 -c plain
s "mmt transfer, one 2 MiB closure (3 levels)" 7405 -n 1 -l 3 -s 15
s "mmt transfer, 16 MiB: 8 closures of 2 MiB" 7416 -n 8 -l 3 -s 23
s "mmt transfer, eager receiver: 4 closures of 2 MiB" 7469 -n 4 -l 3 -s 35
s "mmt transfer, 5000000 bytes: 3 closures of 2 MiB, the last partly used" 7462 \
	-n 3 -l 3 -s 28 -b 5000000
s "plain, 5000000 bytes in 3 closures of 2 MiB" 7463 -n 3 -l 3 -s 29 \
	-b 5000000 -c plain
s "secure, 300000 bytes in 3 closures of 128 KiB" 7464 -n 3 -s 30 \
	-b 300000 -c secure
s "plain, 4 closures of 2 MiB" 7417 -n 4 -l 3 -s 24 -c plain
s "secure, 32 closures" 7406 -n 32 -s 25 -c secure
s "secure on keyed PMOs (controller), 4 closures of 2 MiB" 7460 -n 4 -l 3 \
	-s 26 -c secure-ctl
s "secure, receiver's connection has another key: EBADMSG, data intact" \
	7461 -n 8 -s 27 -c secure -X EBADMSG -R
s "secure on keyed PMOs, receiver has another key: EBADMSG, data intact" \
	7465 -n 8 -s 31 -c secure-ctl -X EBADMSG -R
s "plain channel on a keyed PMO: EPERM, nothing sent" 7466 -n 4 -s 32 \
	-c plain -O -X EPERM -H 3000
s "secure on plain PMOs without a connection key: ENOKEY" 7467 -n 4 \
	-s 33 -c secure -Z -X ENOKEY -H 3000
s "secure, plain sender, keyed receiver: EMEDIUMTYPE, data intact" 7468 \
	-n 4 -s 34 -c secure -X EMEDIUMTYPE -R
s "other geometry: EMEDIUMTYPE" 7407 -n 16 -l 2 -X EMEDIUMTYPE -R
s "idle receiver: ETIMEDOUT, data intact" 7408 -n 4 -t 1500 -X ETIMEDOUT -R
s "IPv6, 4 closures" 7412 -a "fd00::2" -n 4 -s 20
s "both directions at once on one connection" 7415 -n 32 -s 22 -B
s "receiver refuses (replay rule): ESTALE, data intact" 7414 -n 32 \
	-s 21 -X ESTALE -R
s "receiver invalidates its PMO mid-receive: EREMOTEIO, data intact" \
	7418 -n "$XFER_BIG_N" -s 31 -X EREMOTEIO -R
if xfer_leaks; then
	MMTG_CMD_TIMEOUT=200 mmtg_t "send: 20 connections leak no kmalloc object" \
		xfer_leak_rounds 2 send -i 1 -a "$PEER"
	mmtg_t "send: $XFER_LOOP_N delegations on one connection leak nothing" \
		xfer_loop_leak 2 send -i 1 -a "$PEER"
fi
s "peer killed mid-transfer (copy): ECONNRESET, data intact" 7409 \
	-n "$XFER_BIG_N" -s 17 -C -X ECONNRESET -R
s "retry after the kill (copy)" 7410 -n "$XFER_BIG_N" -s 17 -C
s "peer killed mid-transfer (transfer): ECONNRESET, data intact" 7411 \
	-n "$XFER_BIG_N" -s 19 -X ECONNRESET -R
mmtg_run 10 rdma statistic show link "$MMTG_RDEV/1"
s "idle connection while the peer's device is removed" 7413 -W 8000
mmtg_t "send: rmmod mmt" mmtg_unload_mmt
dmesg | grep -i 'mmt' | tail -n 20
mmtg_done
