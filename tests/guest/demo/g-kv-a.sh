# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# g-kv-a.sh - node A of `make demo-migrate` and of the guest run `kv`
# (guest 1, 10.0.0.1, node id 1): the key-value store (mmt-kv src) serves
# the client (mmt-kv client, also here) from a PMO, migrates it live to B
# after kv_start requests and answers MOVED; the client follows to B,
# checks every key there and prints the pause it suffered.  Then the
# measurement: a 64 MiB PMO (kv_mib_m) with a writer dirtying 1 % of the
# closures per round, migrated to B (mmt-kv src -W 1).  Settings from the
# kernel command line (kv_*=, scripts/demo-migrate.sh).  Lines for the
# host's summary start with "KV-".

BIN=/opt/mmt
PEER=$(mmtg_ip_of 2)
MIB=$(mmtg_arg kv_mib)
TABLE=$(mmtg_arg kv_table_kib)
START=$(mmtg_arg kv_start)
ROUNDS=$(mmtg_arg kv_rounds)
PACE=$(mmtg_arg kv_pace_us)
AFTER=$(mmtg_arg kv_after)
MIB_M=$(mmtg_arg kv_mib_m)
# the measurement's time limit: 240 s, and 1 s more per MiB above 64
# (TCG moves 3 to 4.5 MiB/s over Soft-RoCE; 1 GiB: kv_mib_m=1024)
TMO_M=$((240 + ${MIB_M:-0} - 64))
[ "$TMO_M" -ge 240 ] || TMO_M=240

mmtg_t "A: Soft-RoCE device rxe0 on eth0" mmtg_add_rxe rxe0 eth0
mmtg_t "A: insmod mmt.ko" mmtg_load_mmt
mmtg_t "A: ping $PEER" mmtg_wait 60 ping -c 1 -W 2 "$PEER"

# kv_demo - the store in A, the client, the move to B, the check
kv_demo() {
	$BIN/mmt-kv src -a "$PEER" -i 1 -M "$MIB" -t "$TABLE" -l 2 \
		-S "$START" -r "$ROUNDS" >/tmp/src.out 2>&1 &
	_src=$!
	mmtg_run 200 $BIN/mmt-kv client -a 127.0.0.1 -b "$PEER" -k 2000 \
		-u "$PACE" -N "$AFTER" -T 180 >/tmp/client.out 2>&1
	_rc=$?
	wait $_src
	_src_rc=$?
	sed 's/^/KV-A /' /tmp/src.out
	sed 's/^/KV-A /' /tmp/client.out
	[ $_rc -eq 0 ] && [ $_src_rc -eq 0 ]
}
MMTG_CMD_TIMEOUT=220 mmtg_t "A: the store served, moved to B under the client's writes; every key checked at B" kv_demo

# kv_measure - 64 MiB, 1 % of the closures dirtied per round
kv_measure() {
	mmtg_run "$TMO_M" $BIN/mmt-kv src -a "$PEER" -i 1 -M "$MIB_M" -l 2 -m 7702 \
		-p 7703 -S 0 -W 1 >/tmp/m.out 2>&1
	_rc=$?
	sed 's/^/KV-M-A /' /tmp/m.out
	[ $_rc -eq 0 ]
}
if [ "${MIB_M:-0}" -gt 0 ]; then
	MMTG_CMD_TIMEOUT=$((TMO_M + 20)) mmtg_t "A: $MIB_M MiB migrated with a 1 % writer" kv_measure
fi
mmtg_t "A: rmmod mmt" mmtg_unload_mmt
mmtg_done
