# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# g-attack-recv.sh - two-guest attack test, receiving side (guest 2): a
# test build of the module (MMT_DEBUG=1, debugfs mmt/conn_fault), then one
# mmt-xfer receiver per attack, each on its own port, in the order of
# g-attack-send.sh (guest 1).  The receiver's faults act on what it holds
# after LOCAL_INV and before the check: an attacker who wrote into the
# receive area or on the wire (tests/guest/rdma/README.md, "Attacks").
# Every case: 4 closures of 128 KiB, the attack on closure 2 (5 of 8 for
# the rkey cases; each slot for the earlier-transfer replays), the exact errno, the earlier closures VALID and
# byte-exact, the rest WAITING, and its debugfs counter up by exactly 1.
# Then live migrations (mmt-migrate dst -F/-G): a tampered closure, a
# closure of round 1 replayed in a later round, and the handover's
# failures (forged and stray answers, a COMMIT while a slot is granted,
# the COMMIT's ACK never sent).

FAULT=/sys/kernel/debug/mmt/conn_fault

mmtg_t "recv: $MMTG_RDEV on eth0" mmtg_add_rxe rxe0 eth0
mmtg_t "recv: insmod mmt.ko (test build)" mmtg_load_mmt
mmtg_t "recv: test build: debugfs mmt/conn_fault exists" test -w "$FAULT"
echo clear >"$FAULT"

# r NAME PORT ARGS... - one receiver run, 4 closures, attack on closure 2
r() {
	_name=$1
	_port=$2
	shift 2
	MMTG_CMD_TIMEOUT=${T:-90} mmtg_t "recv: $_name" \
		mmt-xfer recv -i 2 -p "$_port" -n 4 -s "$_port" "$@"
}

r "data byte (eager): EBADMSG" 7501 -E -F "xor data 2 100 1" \
	-X EBADMSG -A 2 -D reject_badmsg
r "data MAC byte (eager): EBADMSG" 7502 -E -F "xor macs 2 43 1" \
	-X EBADMSG -A 2 -D reject_badmsg
r "tree node byte: EBADMSG" 7503 -F "xor nodes 2 0 1" \
	-X EBADMSG -A 2 -D reject_badmsg
r "sealed root byte: EBADMSG" 7504 -F "xor head 2 100 1" \
	-X EBADMSG -A 2 -D reject_badmsg
r "data byte (lazy): accepted, then its read fails: EBADMSG" 7518 \
	-F "xor data 1 100 1" -L 1 -D verify_fail
r "header version 1 (format v1): EPROTONOSUPPORT" 7505 -F "xor head 2 4 3" \
	-X EPROTONOSUPPORT -A 2 -D reject_version
r "header magic: EPROTO" 7506 -F "xor head 2 0 1" \
	-X EPROTO -A 2 -D reject_version
r "header geometry, levels 0: EMEDIUMTYPE" 7507 -F "xor head 2 32 2" \
	-X EMEDIUMTYPE -A 2 -D reject_geometry
r "header geometry, other block size: EMSGSIZE" 7508 -F "xor head 2 33 1" \
	-X EMSGSIZE -A 2 -D reject_length
r "header data length: EMSGSIZE" 7509 -F "xor head 2 52 1" \
	-X EMSGSIZE -A 2 -D reject_length
r "replay of closure 1 as closure 2: EILSEQ" 7510 -F "record 1" \
	-F "present 2 1" -X EILSEQ -A 2 -D reject_reorder
r "replay of closure 2 of an earlier transfer: ESTALE" 7511 -P \
	-f clear -f "record 2" -F "present 2 2" -X ESTALE -A 2 \
	-D reject_replay
# Every slot: the same slot of an earlier transfer on this connection (its
# replay floors start at zero in the new receive PMO): the transfer
# generation rejects it (the floors alone would accept it in slot 0).
for _i in 0 1 3; do
	r "replay of closure $_i of an earlier transfer: ESTALE" $((7530 + _i)) \
		-P -f clear -f "record $_i" -F "present $_i $_i" -X ESTALE \
		-A $_i -D reject_replay
done
# The receiver rejects closure 2 (a sealed root byte); the attacker turns
# its ACK into an acceptance on the way: the sender must not believe it.
r "acceptance forged on the wire: closure 2 rejected" 7540 \
	-F "xor head 2 100 1" -X EBADMSG-or-reset -A 2 -D reject_badmsg
# The sender loses closure 2's ACK: it asks this node how the receive ended.
r "an ACK lost on the wire: this node states how many closures it took in" \
	7541 -X reset-or-ok -Q
# The sender's offer goes out as MMT_MSG_NOTICE, which RoCE never carries:
# EPROTO here, the connection ends
if mmtg_rxe_only "a NOTICE message on RoCE"; then
	r "a NOTICE message on RoCE: ECONNRESET, nothing taken in" 7542 \
		-X ECONNRESET -A 0
	mmtg_t "recv: the NOTICE logged as a protocol error" \
		sh -c "dmesg | grep -q 'a NOTICE message on a RoCE connection: protocol error'"
fi
# This node's first GRANT goes out as MMT_MSG_START, which only a
# connecting side sends on iWARP and RoCE never carries
r "a START from the accepting side: ECONNRESET, nothing taken in" 7543 \
	-F "wire start" -X ECONNRESET -A 0
r "closures 2 and 3 swapped: EILSEQ" 7512 -P -f clear -f "record 2" \
	-f "record 3" -F "present 2 3" -F "present 3 2" -X EILSEQ -A 2 \
	-D reject_reorder
r "connection 1: closure 2 recorded" 7513 -F clear -F "record 2"
r "closure 2 of connection 1 on connection 2: EXDEV" 7514 \
	-F "present 2 2" -X EXDEV -A 2 -D reject_connection
r "sender writes with a guessed rkey: ECONNRESET" 7515 -n 8 \
	-X ECONNRESET -A 5
r "sender writes with a stale rkey: ECONNRESET" 7516 -n 8 \
	-X ECONNRESET -A 5
T=300 r "2 x 1100 closures of 4 KiB on one connection" 7519 -l 1 -n 1100 -P
# A grant of 512 pages (the PMO's own pages on the plain channel), mapped
# one sg entry per page as fragmented memory gives: more entries than one
# MR takes (siw: 256), split over MRs
r "plain channel, 2 MiB closures: a grant of 512 sg entries, byte-exact" \
	7520 -c plain -l 3 -F "map pages"
r "after the attacks: a clean transfer" 7517
# Live migration: the same hook on a migration's closures (mmt_mrx_done());
# the receive fails, every MMT WAITING, nothing readable or writable
echo clear >"$FAULT"
MMTG_CMD_TIMEOUT=120 mmtg_t "recv: migration, sealed root byte of closure 2: EBADMSG, destination WAITING" \
	mmt-migrate dst -i 2 -p 7560 -n 16 -F "xor head 2 100 1" -X EBADMSG
MMTG_CMD_TIMEOUT=180 mmtg_t "recv: migration, closure 2 of round 1 replayed in a later round: ESTALE, destination WAITING" \
	mmt-migrate dst -i 2 -p 7561 -n 16 -F "record 2" -G "present 2 2" \
	-X ESTALE
# The handover (g-attack-send.sh): each case's outcome at the destination
MMTG_CMD_TIMEOUT=180 mmtg_t "recv: migration, 2 forged refusals of the COMMIT sent before its ACK: committed, the way back byte-exact" \
	mmt-migrate dst -i 2 -p 7562 -n 16 -F "commit stray 3 200"
MMTG_CMD_TIMEOUT=120 mmtg_t "recv: migration, a COMMIT while a slot is granted: refused, EPROTO, destination WAITING" \
	mmt-migrate dst -i 2 -p 7563 -n 16 -X EPROTO -D reject_version:1
MMTG_CMD_TIMEOUT=120 mmtg_t "recv: migration, the COMMIT's ACK cannot be sent: 0, COMMITTED, VALID, byte-exact; states committed" \
	mmt-migrate dst -i 2 -p 7564 -n 16 -F "commit noack" -C -Q 7566
MMTG_CMD_TIMEOUT=120 mmtg_t "recv: migration, the COMMIT lost with the link: ECONNRESET, WAITING; states aborted" \
	mmt-migrate dst -i 2 -p 7567 -n 16 -F "commit drop" -X ECONNRESET \
	-Q 7568
MMTG_CMD_TIMEOUT=120 mmtg_t "recv: migration, 50 stray messages 300 ms apart before the COMMIT's ACK: 0, COMMITTED, VALID, byte-exact" \
	mmt-migrate dst -i 2 -p 7565 -n 2 -F "commit stray 80 300" -C
mmtg_t "recv: every armed fault fired" grep -qx 'armed 0' "$FAULT"
cat "$FAULT"
cat /sys/kernel/debug/mmt/stats
mmtg_t "recv: rmmod mmt" mmtg_unload_mmt
dmesg | grep -i 'mmt' | tail -n 30
mmtg_done
