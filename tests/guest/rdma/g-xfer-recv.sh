# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# g-xfer-recv.sh - two-guest connection test, receiving side (guest 2):
# Soft-RoCE, the module, then one mmt-xfer receiver per case, each on its
# own port, in the order of g-xfer-send.sh (guest 1).  Geometry: 2 levels
# (128 KiB closures) to keep TCG time low, plus one 3-level (2 MiB)
# closure, which needs more than one memory registration on rxe.

mmtg_t "recv: $MMTG_RDEV on eth0" mmtg_add_rxe rxe0 eth0
# io_workers=4: the guest has one vCPU (0 would mean 1, the serial
# path), so the eager receives here run their full checks on the I/O
# workers; the attack run's eager cases keep the default (serial)
mmtg_t "recv: insmod mmt.ko io_workers=4" mmtg_load_mmt io_workers=4
# an IPv6 address without duplicate address detection (no waiting)
echo 0 >/proc/sys/net/ipv6/conf/eth0/accept_dad
mmtg_t "recv: IPv6 address fd00::$MMTG_ID" \
	ip -6 addr add "fd00::$MMTG_ID/64" dev eth0

. "$MMTG_DIR/xferlib.sh"

# r NAME PORT ARGS... - one receiver run
r() {
	_name=$1
	_port=$2
	shift 2
	xfer_case "recv: $_name" mmt-xfer recv -i 2 -p "$_port" "$@"
}

r "mmt transfer, 1 closure" 7401 -n 1 -s 11
r "mmt transfer, 32 closures" 7402 -n 32 -s 12
r "mmt copy, 32 closures, eager" 7403 -n 32 -s 13 -C -E
r "plain, 32 closures: plain PMOs, RDMA-written PMO to PMO" 7404 -n 32 \
	-s 14 -c plain
r "mmt transfer, one 2 MiB closure (3 levels)" 7405 -n 1 -l 3 -s 15
r "mmt transfer, 16 MiB: 8 closures of 2 MiB" 7416 -n 8 -l 3 -s 23
r "mmt transfer, eager on the I/O workers: 4 closures of 2 MiB" 7469 \
	-n 4 -l 3 -s 35 -E
r "mmt transfer, 5000000 bytes: 3 closures of 2 MiB, the last partly used" 7462 \
	-n 3 -l 3 -s 28 -b 5000000
r "plain, 5000000 bytes in 3 closures of 2 MiB" 7463 -n 3 -l 3 -s 29 \
	-b 5000000 -c plain
r "secure, 300000 bytes in 3 closures of 128 KiB" 7464 -n 3 -s 30 \
	-b 300000 -c secure
r "plain, 4 closures of 2 MiB" 7417 -n 4 -l 3 -s 24 -c plain
r "secure, 32 closures" 7406 -n 32 -s 25 -c secure
r "secure on keyed PMOs (controller), 4 closures of 2 MiB" 7460 -n 4 -l 3 \
	-s 26 -c secure-ctl
r "secure, another connection key: EBADMSG, PMO unchanged" 7461 -n 8 \
	-s 27 -c secure -k -X EBADMSG
r "secure on keyed PMOs, another key: EBADMSG, PMO unchanged" 7465 -n 8 \
	-s 31 -c secure-ctl -k -X EBADMSG
r "plain channel on a keyed PMO: EPERM" 7466 -n 4 -s 32 -c plain -O \
	-X EPERM -H 3000
r "secure on plain PMOs without a connection key: ENOKEY" 7467 -n 4 \
	-s 33 -c secure -Z -X ENOKEY -H 3000
r "secure, plain sender, keyed receiver: EMEDIUMTYPE, PMO unchanged" \
	7468 -n 4 -s 34 -c secure -O -X EMEDIUMTYPE
r "other geometry: EMEDIUMTYPE" 7407 -n 1 -l 3 -X EMEDIUMTYPE
r "idle receiver (sender times out)" 7408 -W 4000
r "IPv6 listener, 4 closures" 7412 -a :: -n 4 -s 20
r "both directions at once on one connection" 7415 -n 32 -s 22 -B
r "replay rule refuses every closure: ESTALE" 7414 -n 32 -s 21 \
	-M 1000000 -X ESTALE
r "PMO invalidated during the receive: EPERM here" 7418 -n "$XFER_BIG_N" -s 31 \
	-V -X EPERM
if xfer_leaks; then
	MMTG_CMD_TIMEOUT=200 mmtg_t "recv: 20 connections leak no kmalloc object" \
		xfer_leak_rounds 1 recv -i 2
	mmtg_t "recv: $XFER_LOOP_N delegations on one connection leak nothing" \
		xfer_loop_leak 1 recv -i 2
fi
r "killed mid-transfer (copy)" 7409 -n "$XFER_BIG_N" -s 17 -K "${KILL_MS:-300}"
r "retry after the kill (copy)" 7410 -n "$XFER_BIG_N" -s 17 -C
r "killed mid-transfer (transfer)" 7411 -n "$XFER_BIG_N" -s 19 -K "${KILL_MS:-300}"

# the device's counters (retransmissions, errors) for the record
mmtg_run 10 rdma statistic show link "$MMTG_RDEV/1"
# removal - a receive waits on a live connection while the RDMA device (rxe0, siw0) is deleted:
# the receive fails with ECONNRESET and the removal does not hang (the
# module's ib_client releases everything on the device)
removal() {
	mmt-xfer recv -i 2 -p 7413 -t 60000 -X ECONNRESET >/tmp/rm.out 2>&1 &
	_pid=$!
	mmtg_wait 60 grep -q 'peer node' /tmp/rm.out
	sleep 1
	mmtg_run 30 rdma link delete "$MMTG_RDEV"
	_rc=$?
	wait $_pid
	_rc2=$?
	cat /tmp/rm.out
	echo "rdma link delete: rc=$_rc; receiver: rc=$_rc2"
	[ $_rc -eq 0 ] && [ $_rc2 -eq 0 ]
}
xfer_cases && mmtg_t "recv: device removed under a waiting receive" removal
mmtg_t "recv: rmmod mmt" mmtg_unload_mmt
dmesg | grep -i 'mmt' | tail -n 20
mmtg_done
