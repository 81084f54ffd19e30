# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# g-apps-reduce.sh - the applications run, guest 2 (10.0.0.2, node id 2):
# rank 1 of mmt-wordcount M1R1, the reducer (g-apps-map.sh: the mapper).
# Its share must equal apps-ref.txt, the host's mmt-wordcount-ref count of
# the same input, word for word: checked by the program (--check) and
# again here with cmp on each channel's output.

mmtg_t "reduce: rxe0 on eth0" mmtg_add_rxe rxe0 eth0
mmtg_t "reduce: insmod mmt.ko" mmtg_load_mmt
echo 000102030405060708090a0b0c0d0e0f >/tmp/key

wc() {
	mmtg_run 400 "$MMTG_DIR/mmt-wordcount" --rank 1 \
		--peers "$(mmtg_ip_of 1),$(mmtg_ip_of 2)" --node-id 2 \
		--key-file /tmp/key --levels 2 --check "$MMTG_DIR/apps-ref.txt" \
		--out /tmp/wc "$@" /tmp/none
}
MMTG_CMD_TIMEOUT=400 mmtg_t "reduce: WordCount M1R1, a table (plain, secure, mmt)" wc
for c in plain secure mmt; do
	mmtg_t "reduce: the $c channel's result equals mmt-wordcount-ref" \
		cmp /tmp/wc.$c.0 "$MMTG_DIR/apps-ref.txt"
	rm -f /tmp/wc.$c.0
done
MMTG_CMD_TIMEOUT=400 mmtg_t "reduce: WordCount M1R1, --json (plain, secure, mmt)" wc --json
for c in plain secure mmt; do
	mmtg_t "reduce: the $c channel's result equals mmt-wordcount-ref (--json run)" \
		cmp /tmp/wc.$c.0 "$MMTG_DIR/apps-ref.txt"
done
mmtg_t "reduce: rmmod mmt" mmtg_unload_mmt
mmtg_done
