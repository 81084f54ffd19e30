# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# g-kv-b.sh - node B of `make demo-migrate` and of the guest run `kv`
# (guest 2, 10.0.0.2, node id 2): receives the key-value store's PMO
# (mmt-kv dst), then serves it until the client's QUIT; then receives the
# measurement's 64 MiB PMO (mmt-kv dst -Q).  Lines for the host's summary
# start with "KV-".

BIN=/opt/mmt
MIB=$(mmtg_arg kv_mib)
TABLE=$(mmtg_arg kv_table_kib)
MIB_M=$(mmtg_arg kv_mib_m)
# the measurement's time limit: 240 s, and 1 s more per MiB above 64
# (TCG moves 3 to 4.5 MiB/s over Soft-RoCE; 1 GiB: kv_mib_m=1024)
TMO_M=$((240 + ${MIB_M:-0} - 64))
[ "$TMO_M" -ge 240 ] || TMO_M=240

mmtg_t "B: Soft-RoCE device rxe0 on eth0" mmtg_add_rxe rxe0 eth0
mmtg_t "B: insmod mmt.ko" mmtg_load_mmt

kv_dst() {
	mmtg_run 220 $BIN/mmt-kv dst -i 2 -M "$MIB" -t "$TABLE" -l 2 \
		>/tmp/dst.out 2>&1
	_rc=$?
	sed 's/^/KV-B /' /tmp/dst.out
	[ $_rc -eq 0 ]
}
MMTG_CMD_TIMEOUT=230 mmtg_t "B: received the store, served it until QUIT" kv_dst

kv_measure() {
	mmtg_run "$TMO_M" $BIN/mmt-kv dst -i 2 -M "$MIB_M" -l 2 -m 7702 -p 7703 \
		-Q >/tmp/m.out 2>&1
	_rc=$?
	sed 's/^/KV-M-B /' /tmp/m.out
	[ $_rc -eq 0 ]
}
if [ "${MIB_M:-0}" -gt 0 ]; then
	MMTG_CMD_TIMEOUT=$((TMO_M + 20)) mmtg_t "B: $MIB_M MiB received" kv_measure
fi
mmtg_t "B: rmmod mmt" mmtg_unload_mmt
mmtg_done
