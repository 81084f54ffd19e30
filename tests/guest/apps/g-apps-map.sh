# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# g-apps-map.sh - the applications run, guest 1 (10.0.0.1, node id 1):
# rank 0 of mmt-wordcount M1R1, the mapper.  Counts the words of
# apps-input.tar (a slice of Debian's linux-source-6.1 Documentation tree,
# tests/guest/tests) and shuffles them to the reducer (g-apps-reduce.sh,
# guest 2) on the plain, secure and mmt channels in turn; prints the
# table and sends the JSON to the host (mmtg_result wordcount.json).

PEER=$(mmtg_ip_of 2)

mmtg_t "map: rxe0 on eth0" mmtg_add_rxe rxe0 eth0
mmtg_t "map: insmod mmt.ko" mmtg_load_mmt
mmtg_t "map: ping $PEER" mmtg_wait 60 ping -c 1 -W 2 "$PEER"
mkdir -p /tmp/in
mmtg_t "map: unpack the input" tar -xf "$MMTG_DIR/apps-input.tar" -C /tmp/in
# a fixed, public test key: the run shows correctness, not secrecy
echo 000102030405060708090a0b0c0d0e0f >/tmp/key

# wc ARGS... - rank 0 with the run's settings (2-level MMTs: 128 KiB
# closures keep TCG time low)
wc() {
	mmtg_run 400 "$MMTG_DIR/mmt-wordcount" --rank 0 \
		--peers "$(mmtg_ip_of 1),$PEER" --node-id 1 --key-file /tmp/key \
		--levels 2 "$@" /tmp/in
}
wc_json() {
	wc --json >/tmp/wc.json && cat /tmp/wc.json &&
		mmtg_result wordcount.json /tmp/wc.json
}
MMTG_CMD_TIMEOUT=400 mmtg_t "map: WordCount M1R1, a table (plain, secure, mmt)" wc
MMTG_CMD_TIMEOUT=400 mmtg_t "map: WordCount M1R1, --json (plain, secure, mmt)" wc_json
mmtg_t "map: rmmod mmt" mmtg_unload_mmt
mmtg_done
