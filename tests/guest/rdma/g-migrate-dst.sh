# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# g-migrate-dst.sh - two-guest live migration test, destination side
# (guest 2): one mmt-migrate destination per case of g-migrate-src.sh.

mmtg_t "dst: rxe0 on eth0" mmtg_add_rxe rxe0 eth0
mmtg_t "dst: insmod mmt.ko" mmtg_load_mmt

. "$MMTG_DIR/xferlib.sh"

# d NAME PORT ARGS... - one destination run
d() {
	_name=$1
	_port=$2
	shift 2
	T=240 xfer_case "dst: $_name" mmt-migrate dst -i 2 -p "$_port" "$@"
}

d "round trip, 16 closures of 128 KiB" 7601 -n 16
d "round trip, 4 closures of 2 MiB, window 2" 7602 -n 4 -l 3 -w 2
d "dies after 5 closures" 7603 -n 16 -K 5
d "the source died: ECONNRESET, nothing readable or writable" 7604 \
	-n 16 -X ECONNRESET
d "the source aborted: ECONNRESET, nothing readable or writable" 7605 \
	-n 16 -X ECONNRESET
d "MMT_IOC_RECV refuses a migration: EPROTO" 7606 -n 4 -T
d "dies in the handover (after 17 closures: one more than round 1)" 7607 \
	-n 16 -K 17
d "the source died in the handover: ECONNRESET, nothing readable or writable" \
	7608 -n 16 -X ECONNRESET
d "the handover refused: ECANCELED (END before COMMIT), then the second migration" \
	7615 -n 16 -X ECANCELED -R
d "the handover refused (50 ms): ECANCELED, then the second migration" \
	7616 -n 16 -X ECANCELED -R
# mmtctl migrate, the destination: the source's file, byte for byte
mmtctl_dst() {
	seq 1 150000 >/tmp/in.txt
	mmtg_run 240 mmtctl migrate --role dst --port 7620 --size \
		"$(wc -c </tmp/in.txt)" --levels 2 --key-hex "$KEY" \
		--node-id 2 --timeout 60000 --out /tmp/out.bin >/tmp/ctl.out 2>&1
	_rc=$?
	cat /tmp/ctl.out
	[ $_rc -eq 0 ] && cmp -n "$(wc -c </tmp/in.txt)" /tmp/in.txt /tmp/out.bin
}
KEY=000102030405060708090a0b0c0d0e0f
if command -v mmtctl >/dev/null; then
	mmtg_t "dst: mmtctl migrate --role dst --out: the source's file, byte-exact" \
		mmtctl_dst
fi
migrate_leak() {
	mmtg_run 120 mmt-migrate dst -i 2 -p 7610 -n 2 -l 1 -L 4 \
		>/tmp/mig.out 2>&1 || { cat /tmp/mig.out; return 1; }
	mmtg_slab_snapshot /tmp/mig.a
	mmtg_run 600 mmt-migrate dst -i 2 -p 7611 -n 2 -l 1 -L 100 \
		>/tmp/mig.out 2>&1
	_rc=$?
	grep -a 'round trips' /tmp/mig.out
	[ $_rc -eq 0 ] || { cat /tmp/mig.out; return 1; }
	xfer_grew 1 20 /tmp/mig.a
}
MMTG_CMD_TIMEOUT=700 mmtg_t "dst: 200 migrations on one connection leak nothing" \
	migrate_leak
# last: eth0 goes down and up
d "silent (eth0 down 18 s) after 5 closures: nothing readable or writable" \
	7614 -n 16 -P 5:18 -t 20000 -X "ETIMEDOUT|ECONNRESET"
mmtg_t "dst: rmmod mmt" mmtg_unload_mmt
mmtg_done
