# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# g-rping-server.sh - two-guest smoke test, server side (guest 2): a
# Soft-RoCE device on eth0, a persistent rping server (so a client retry
# after a failed try finds it again) until the client reports on TCP 7001,
# then one ib_write_bw server run for the client in guest 1
# (g-rping-client.sh).

mmtg_t "server: rxe0 on eth0" mmtg_add_rxe rxe0 eth0

timeout -k 5 150 rping -s -P -a "$MMTG_IP" -C 10 -S 1024 -V &
rping_pid=$!
msg=$(mmtg_recv 7001 150)
if [ "$msg" = rping-ok ]; then
	mmtg_ok "server: rping client in guest 1 succeeded"
else
	mmtg_notok "server: rping client in guest 1 succeeded" "got '$msg'"
fi
if kill "$rping_pid" 2>/dev/null; then
	mmtg_ok "server: rping -s -P still running"
else
	mmtg_notok "server: rping -s -P still running" "it exited early"
fi
wait "$rping_pid"

MMTG_CMD_TIMEOUT=150 mmtg_t "server: ib_write_bw server" \
	ib_write_bw -d rxe0 -R -s 65536 -n 200 -F --report_gbits
mmtg_done
