# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# g-demo-b.sh - node B of `make demo` (guest 2, 10.0.0.2): Soft-RoCE, the
# module, node id 2; receives the slice node A sends over the plain, secure,
# secure-ctl and MMT channels (mmt-bench -S, one connection; then the
# ib_write_bw server), hashes what arrived
# (busybox sha256sum, independent of mmt-bench's own check), then takes the
# receiving side of the tamper and replay attacks (mmt-attack).  Settings
# from the kernel command line: demo_slice=SIZE, demo_levels=L.
# Lines for the host's summary start with "DEMO-".

SLICE=$(mmtg_arg demo_slice)
LEVELS=$(mmtg_arg demo_levels)
BIN=/opt/mmt

mmtg_t "B: RDMA device $MMTG_RDEV ($MMTG_FABRIC) on eth0" mmtg_add_rxe rxe0 eth0
mmtg_t "B: insmod mmt.ko" mmtg_load_mmt
mmtg_t "B: node id 2" $BIN/mmtctl set-node-id --node-id 2
$BIN/mmtctl query | sed 's/^/DEMO-QUERY B /'

MMTG_CMD_TIMEOUT=300 mmtg_t "B: receive the slice over plain, secure, secure-ctl, mmt; ib_write_bw" \
	$BIN/mmt-bench -S -i 2 -n 1 -s "$SLICE" --levels "$LEVELS" \
	--ib-write-bw --out /tmp/recv
for f in /tmp/recv.*; do
	[ -f "$f" ] || continue
	ch=${f#/tmp/recv.}
	ch=${ch%%.*}
	echo "DEMO-SHA B $ch $(sha256sum <"$f" | cut -d' ' -f1) $(wc -c <"$f")"
	rm -f "$f"
done

MMTG_CMD_TIMEOUT=150 mmtg_t "B: tampered closure rejected" \
	$BIN/mmt-attack tamper-recv -p 7481
MMTG_CMD_TIMEOUT=150 mmtg_t "B: replayed closure rejected" \
	$BIN/mmt-attack replay-recv -p 7482
mmtg_run 10 rdma statistic show link "$MMTG_RDEV/1" | sed 's/^/DEMO-RXE B /'
mmtg_done
