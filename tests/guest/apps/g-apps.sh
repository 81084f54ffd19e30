# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# g-apps.sh - the applications run (tests/guest/tests apps), every guest:
# guest i is rank i-1 of mmt-wordcount MnRn over 2n guests (n: apps_n= on
# the kernel command line); guests 1..n map, n+1..2n reduce.  Every mapper
# counts its share of apps-input.tar (a slice of Debian's linux-source-6.1
# Documentation tree) and shuffles it to the reducers on the plain, secure
# and mmt channels in turn.  Rank 0 prints the table and sends the JSON to
# the host (mmtg_result wordcount.json); each reducer checks its share
# against apps-ref.txt, the host's mmt-wordcount-ref count of the same
# input (--check), and sends it to the host (mmtg_result wc.<channel>),
# which checks the union of the shares against the reference, byte for
# byte.

N=$(mmtg_arg apps_n 1)
RANK=$((MMTG_ID - 1))
PEERS=$(mmtg_ip_of 1)
_i=2
while [ $_i -le $((2 * N)) ]; do
	PEERS=$PEERS,$(mmtg_ip_of $_i)
	_i=$((_i + 1))
done
if [ "$RANK" -lt "$N" ]; then
	ROLE=map
else
	ROLE=reduce
fi

mmtg_t "$ROLE $RANK: rxe0 on eth0" mmtg_add_rxe rxe0 eth0
mmtg_t "$ROLE $RANK: insmod mmt.ko" mmtg_load_mmt
mkdir -p /tmp/in
mmtg_t "$ROLE $RANK: unpack the input" tar -xf "$MMTG_DIR/apps-input.tar" -C /tmp/in
# a fixed, public test key: the run shows correctness, not secrecy
echo 000102030405060708090a0b0c0d0e0f >/tmp/key

# wc ARGS... - this rank with the run's settings (2-level MMTs: 128 KiB
# closures keep TCG time low; the best of 2 runs per channel)
wc() {
	mmtg_run 500 "$MMTG_DIR/mmt-wordcount" --rank "$RANK" --peers "$PEERS" \
		--node-id "$MMTG_ID" --key-file /tmp/key --levels 2 --repeat 2 \
		--check "$MMTG_DIR/apps-ref.txt" --out /tmp/wc --json /tmp/in \
		>/tmp/wc.json
	_rc=$?
	cat /tmp/wc.json
	return $_rc
}

MMTG_CMD_TIMEOUT=500 mmtg_t "$ROLE $RANK: WordCount M${N}R$N, plain, secure, mmt" wc
[ "$RANK" = 0 ] && mmtg_result_quiet wordcount.json /tmp/wc.json
if [ "$ROLE" = reduce ]; then
	for c in plain secure mmt; do
		[ -f /tmp/wc.$c.$((RANK - N)) ] &&
			mmtg_result_quiet wc.$c /tmp/wc.$c.$((RANK - N))
	done
fi
mmtg_t "$ROLE $RANK: rmmod mmt" mmtg_unload_mmt
mmtg_done
