# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# g-rping-client.sh - two-guest smoke test, client side (guest 1): reach
# guest 2 over the QEMU link, rping it (10 verified iterations), report the
# result to it on TCP 7001, then run ib_write_bw against it (200 x 64 KiB
# RDMA writes over rdma_cm), retrying while the server is not up yet.  The
# bandwidth line is sent to the host as the result file "ib_write_bw".

PEER=$(mmtg_ip_of 2)
# a try that connected may be slow under load: do not cut it short
export MMTG_TRY_TIMEOUT=60

mmtg_t "client: rxe0 on eth0" mmtg_add_rxe rxe0 eth0
mmtg_t "client: ping $PEER" mmtg_wait 60 ping -c 1 -W 2 "$PEER"
if mmtg_t "client: rping -c $PEER (10 iterations)" \
	mmtg_wait 90 rping -c -a "$PEER" -C 10 -S 1024 -V; then
	msg=rping-ok
else
	msg=rping-failed
fi
mmtg_t "client: report to the server" mmtg_send "$PEER" 7001 "$msg" 30

# bw_client - one ib_write_bw client run whose output is kept
bw_client() {
	mmtg_run 60 ib_write_bw -d rxe0 -R -s 65536 -n 200 -F \
		--report_gbits "$PEER" >/tmp/bw.out 2>&1
}
mmtg_t "client: ib_write_bw $PEER" mmtg_wait 90 bw_client
cat /tmp/bw.out
grep -E '^ *65536 ' /tmp/bw.out >/tmp/bw.line &&
	mmtg_result ib_write_bw /tmp/bw.line
mmtg_done
