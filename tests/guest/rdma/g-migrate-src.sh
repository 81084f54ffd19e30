# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# g-migrate-src.sh - two-guest live migration test, source side (guest 1):
# one mmt-migrate source per case of g-migrate-dst.sh (guest 2), in the
# same order, each on its own port (docs/MIGRATION.md).

PEER=$(mmtg_ip_of 2)

mmtg_t "src: rxe0 on eth0" mmtg_add_rxe rxe0 eth0
mmtg_t "src: insmod mmt.ko" mmtg_load_mmt
mmtg_t "src: ping $PEER" mmtg_wait 60 ping -c 1 -W 2 "$PEER"

. "$MMTG_DIR/xferlib.sh"

# s NAME PORT ARGS... - one source run
s() {
	_name=$1
	_port=$2
	shift 2
	T=240 xfer_case "src: $_name" mmt-migrate src -i 1 -a "$PEER" \
		-p "$_port" "$@"
}

s "round trip under a writer, 16 closures of 128 KiB" 7601 -n 16
s "round trip under a writer, 4 closures of 2 MiB, window 2, 1 ms limit, FINISH in round 4" \
	7602 -n 4 -l 3 -w 2 -d 1 -f 4 -u 200
s "the destination dies in pre-copy: ECONNRESET, source intact" 7603 \
	-n 16 -d 1 -X ECONNRESET
s "the source dies in pre-copy (the destination checks)" 7604 -n 16 -d 1 \
	-K 5
s "MMT_IOC_MIGRATE_ABORT in round 2: ECANCELED, source intact" 7605 \
	-n 16 -d 1 -r 30 -u 100 -A 2 -X ECANCELED
s "a transfer's receive refuses the offer: EPROTO, source intact" 7606 \
	-n 4 -X EPROTO
# the handover: a limit of 600 s ends pre-copy after round 1; the writer
# dirtied most closures, so the handover resends them
s "the destination dies in the handover: ECONNRESET, source intact" 7607 \
	-n 16 -d 600000 -u 200 -X ECONNRESET
s "the source dies in the handover (the destination checks)" 7608 \
	-n 16 -d 600000 -u 200 -H
# a writer dirtying every closure in every round and a 1 ms limit: the
# writer is throttled, the handover refused at the round limit (ETIME),
# the connection stays up for a second migration
s "every closure dirty in every round, 1 ms limit: throttled, refused at round 12 (ETIME), source intact" \
	7615 -n 16 -d 1 -r 12 -S -u 200 -X ETIME -R
s "the same with a 50 ms limit: throttled, refused at round 12 (ETIME)" \
	7616 -n 16 -d 50 -r 12 -S -u 200 -X ETIME -R
# mmtctl migrate, the source: a file both guests can make (seq)
mmtctl_src() {
	seq 1 150000 >/tmp/in.txt
	mmtg_run 240 mmtctl migrate --role src --peer "$PEER" --port 7620 \
		--in /tmp/in.txt --levels 2 --key-hex "$KEY" --node-id 1 \
		--timeout 60000 --json >/tmp/ctl.json 2>/tmp/ctl.err
	_rc=$?
	cat /tmp/ctl.err /tmp/ctl.json
	[ $_rc -eq 0 ] && grep -q '"result": "committed"' /tmp/ctl.json &&
		grep -q '^round ' /tmp/ctl.err
}
KEY=000102030405060708090a0b0c0d0e0f
if command -v mmtctl >/dev/null; then
	mmtg_t "src: mmtctl migrate --role src --json: committed, a progress line per round" \
		mmtctl_src
fi
migrate_leak() {
	mmtg_run 120 mmt-migrate src -i 1 -a "$PEER" -p 7610 -n 2 -l 1 \
		-u 0 -L 4 >/tmp/mig.out 2>&1 || { cat /tmp/mig.out; return 1; }
	mmtg_slab_snapshot /tmp/mig.a
	mmtg_run 600 mmt-migrate src -i 1 -a "$PEER" -p 7611 -n 2 -l 1 \
		-u 0 -L 100 >/tmp/mig.out 2>&1
	_rc=$?
	grep -a 'round trips' /tmp/mig.out
	[ $_rc -eq 0 ] || { cat /tmp/mig.out; return 1; }
	xfer_grew 2 20 /tmp/mig.a
}
MMTG_CMD_TIMEOUT=700 mmtg_t "src: 200 migrations on one connection leak nothing" \
	migrate_leak
# last: the link of guest 2 goes down and up (nothing after needs it)
# the destination goes silent in pre-copy (eth0 down, as if powered off):
# the wait for its answer ends within timeout_ms (15 s) + 2 s
s "the destination goes silent in pre-copy: ETIMEDOUT or ECONNRESET within timeout_ms + 2 s, source intact" \
	7614 -n 16 -d 1 -t 15000 -W 17000 -X "ETIMEDOUT|ECONNRESET"
mmtg_t "src: rmmod mmt" mmtg_unload_mmt
dmesg | grep -i 'mmt' | tail -n 20
mmtg_done
