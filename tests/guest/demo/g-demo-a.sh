# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# g-demo-a.sh - node A of `make demo` (guest 1, 10.0.0.1): Soft-RoCE, the
# module, node id 1; sends the slice of the Linux source tarball
# (/host/slice.bin, the host's 9p share) to node B over the plain, secure
# (plain PMOs), secure-ctl (keyed PMOs) and MMT channels (mmt-bench --in,
# one connection), runs ib_write_bw against B (mmt-bench --ib-write-bw,
# the wire's reference), then attacks: a
# tampered closure and a replayed one (mmt-attack).  Settings from the
# kernel command line: demo_slice=SIZE, demo_levels=L.  Lines for the
# host's summary start with "DEMO-".

SLICE=$(mmtg_arg demo_slice)
LEVELS=$(mmtg_arg demo_levels)
BIN=/opt/mmt
PEER=$(mmtg_ip_of 2)

mmtg_t "A: RDMA device $MMTG_RDEV ($MMTG_FABRIC) on eth0" mmtg_add_rxe rxe0 eth0
mmtg_t "A: insmod mmt.ko" mmtg_load_mmt
mmtg_t "A: node id 1" $BIN/mmtctl set-node-id --node-id 1
$BIN/mmtctl query | sed 's/^/DEMO-QUERY A /'
mmtg_t "A: ping $PEER" mmtg_wait 60 ping -c 1 -W 2 "$PEER"
echo "DEMO-SHA A slice $(sha256sum </host/slice.bin | cut -d' ' -f1) $(wc -c </host/slice.bin)"

MMTG_CMD_TIMEOUT=300 mmtg_t "A: send the slice over plain, secure, secure-ctl, mmt; ib_write_bw" \
	$BIN/mmt-bench -i 1 -n 1 -s "$SLICE" --levels "$LEVELS" \
	--ib-write-bw --in /host/slice.bin "$PEER"

MMTG_CMD_TIMEOUT=150 mmtg_t "A: tampered closure sent" \
	$BIN/mmt-attack tamper-send -a "$PEER" -p 7481
MMTG_CMD_TIMEOUT=150 mmtg_t "A: replayed closure sent" \
	$BIN/mmt-attack replay-send -a "$PEER" -p 7482
mmtg_run 10 rdma statistic show link "$MMTG_RDEV/1" | sed 's/^/DEMO-RXE A /'
mmtg_done
