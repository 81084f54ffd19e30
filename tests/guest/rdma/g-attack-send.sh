# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# g-attack-send.sh - two-guest attack test, sending side (guest 1): one
# mmt-xfer sender per case of g-attack-recv.sh (guest 2), connecting to its
# port.  After a rejection the sender's MMTs are VALID and byte-exact (the
# rejected and cancelled ones re-encrypted under a fresh GUA) or INVALID
# (acked).  The rkey attacks are the sender's own: it writes closure 5
# with a wrong rkey, the receiver's NIC refuses it and the QP breaks.  The
# rkeys of 2200 grants on one connection (debugfs mmt/conn_rkeys) are all
# different.  Then live migrations (mmt-migrate) whose closures the
# receiver's hook tampers with and replays, and whose handover the hooks
# disturb (forged and stray answers, a stray WANT, a lost COMMIT ACK).

PEER=$(mmtg_ip_of 2)
FAULT=/sys/kernel/debug/mmt/conn_fault
RKEYS=/sys/kernel/debug/mmt/conn_rkeys

mmtg_t "send: $MMTG_RDEV on eth0" mmtg_add_rxe rxe0 eth0
mmtg_t "send: insmod mmt.ko (test build)" mmtg_load_mmt
mmtg_t "send: test build: debugfs mmt/conn_fault exists" test -w "$FAULT"
echo clear >"$FAULT"
mmtg_t "send: ping $PEER" mmtg_wait 60 ping -c 1 -W 2 "$PEER"

# s NAME PORT ARGS... - one sender run, 4 closures
s() {
	_name=$1
	_port=$2
	shift 2
	MMTG_CMD_TIMEOUT=${T:-90} mmtg_t "send: $_name" \
		mmt-xfer send -i 1 -a "$PEER" -p "$_port" -n 4 -s "$_port" "$@"
}

s "data byte: EBADMSG" 7501 -X EBADMSG -R -A 2
s "data MAC byte: EBADMSG" 7502 -X EBADMSG -R -A 2
s "tree node byte: EBADMSG" 7503 -X EBADMSG -R -A 2
s "sealed root byte: EBADMSG" 7504 -X EBADMSG -R -A 2
s "data byte, lazy receiver: accepted" 7518
s "header version: EPROTONOSUPPORT" 7505 -X EPROTONOSUPPORT -R -A 2
s "header magic: EPROTO" 7506 -X EPROTO -R -A 2
s "header geometry, levels 0: EMEDIUMTYPE" 7507 -X EMEDIUMTYPE -R -A 2
s "header geometry, other block size: EMSGSIZE" 7508 -X EMSGSIZE -R -A 2
s "header data length: EMSGSIZE" 7509 -X EMSGSIZE -R -A 2
s "replay into the next slot: EILSEQ" 7510 -X EILSEQ -R -A 2
s "replay from an earlier transfer: ESTALE" 7511 -P -X ESTALE -R -A 2
for _i in 0 1 3; do
	s "replay of closure $_i from an earlier transfer: ESTALE" \
		$((7530 + _i)) -P -X ESTALE -R -A $_i
done
s "acceptance forged on the wire: ECONNRESET, its MMT kept VALID" 7540 \
	-F "ack 2 accept" -X ECONNRESET -R -A 2 -D ack_forged
s "ACK 2 lost on the wire: ECONNRESET, read-only until the receiver's statement, then one copy of each closure" \
	7541 -F "ack 2 drop" -X ECONNRESET -Q -D xfer_unknown
# A peer that breaks the fabric's rules (MMT_MSG_NOTICE and MMT_MSG_START
# belong to the RDMA fabric, on iWARP only): the one that receives such a
# message fails the connection with EPROTO and logs why
if mmtg_rxe_only "a NOTICE message on RoCE"; then
	s "a NOTICE message on RoCE (its offer retyped): ECONNRESET, nothing sent" \
		7542 -F "wire notice" -X ECONNRESET -R -A 0
fi
if [ "$MMTG_FABRIC" = rxe ]; then
	WHAT="a START message on a RoCE connection: protocol error"
else
	WHAT="a START to the connecting side on an iWARP connection: protocol error"
fi
s "a START from the accepting side: ECONNRESET, nothing sent" 7543 \
	-X ECONNRESET -R -A 0
mmtg_t "send: the START logged as a protocol error" \
	sh -c "dmesg | grep -q '$WHAT'"
s "swapped closures: EILSEQ" 7512 -P -X EILSEQ -R -A 2
s "connection 1" 7513
s "connection 2, closure of connection 1: EXDEV" 7514 -X EXDEV -R -A 2
# the writer's completion says "remote access error" on rxe; siw ends
# the QP with a terminate message and flushes, another status: there
# the counter is not checked, the outcome is
if mmtg_rxe_only "remote_access_errors counted for a refused rkey"; then
	RAE="-D remote_access_errors"
else
	RAE=
fi
# shellcheck disable=SC2086 # RAE: an option and its argument, or nothing
s "guessed rkey: ECONNRESET, remote access error counted" 7515 -n 8 \
	-F "rkey 5 guess" -X ECONNRESET -R -A 5 $RAE
# shellcheck disable=SC2086
s "stale rkey: ECONNRESET, remote access error counted" 7516 -n 8 \
	-F "rkey 5 stale" -X ECONNRESET -R -A 5 $RAE

# rkeys_distinct GRANTS - debugfs mmt/conn_rkeys holds GRANTS grants, none
# dropped, no rkey twice, and more than 256 of them for slot 0 (the 8-bit
# key of one MR wraps after 256 registrations: docs/CONNECTIONS.md); its
# variables are not mmtg_t's (_n)
rkeys_distinct() {
	cat "$RKEYS" >/tmp/rkeys.txt
	grep -E '^[0-9]+ [0-9]+ [0-9a-f]{8}$' /tmp/rkeys.txt >/tmp/rkeys.list
	_rkg=$(sed -n 's/^grants //p' /tmp/rkeys.txt)
	_rkd=$(sed -n 's/^dropped //p' /tmp/rkeys.txt)
	_rkn=$(wc -l </tmp/rkeys.list)
	_rku=$(awk '{ print $3 }' /tmp/rkeys.list | sort -u | wc -l)
	_rks=$(awk '$1 % 4 == 0 && $2 == 0' /tmp/rkeys.list | wc -l)
	echo "grants $_rkg, dropped $_rkd, rkeys $_rkn, distinct $_rku, grants of slot 0 $_rks"
	awk '{ print $3 }' /tmp/rkeys.list | sort | uniq -d | head -n 3 |
		while read -r _rkk; do
			echo "repeated: $(grep " $_rkk\$" /tmp/rkeys.list | head -n 4 |
				tr '\n' ',')"
		done
	[ "$_rkg" = "$1" ] && [ "$_rkd" = 0 ] && [ "$_rkn" = "$_rku" ] &&
		[ "$_rks" -gt 256 ]
}

echo clear >"$RKEYS"
T=300 s "2 x 1100 closures of 4 KiB on one connection" 7519 -l 1 -n 1100 -P
mmtg_t "send: 2200 grants on one connection, no rkey twice" rkeys_distinct 2200
s "plain channel, 2 MiB closures: a grant of 512 pages" 7520 -c plain -l 3
s "after the attacks: a clean transfer" 7517
# Live migration (docs/MIGRATION.md): the destination's hook tampers with
# or replays a migration closure; the source's migration fails with the
# destination's verdict and its PMO stays VALID, writable, byte-exact
MMTG_CMD_TIMEOUT=120 mmtg_t "send: migration, a closure tampered: EBADMSG, source intact" \
	mmt-migrate src -i 1 -a "$PEER" -p 7560 -n 16 -X EBADMSG
MMTG_CMD_TIMEOUT=180 mmtg_t "send: migration, round 1's closure 2 replayed in a later round: ESTALE, source intact" \
	mmt-migrate src -i 1 -a "$PEER" -p 7561 -n 16 -d 1 -r 30 -u 200 \
	-X ESTALE
# The handover's RDMA-only failure paths (docs/MIGRATION.md sections 7
# and 10; the hooks "commit ..." of driver/mmt_conn_fault.c): forged
# refusals of the COMMIT before the genuine ACK; a WANT granted just before
# the COMMIT; the destination commits and its ACK is never sent, or the
# COMMIT is lost with the link (each resolved after on the destination's
# statement, over a new connection: committed, aborted); stray
# messages for 24 s after the COMMIT, against a 4 s deadline.  A limit of
# 600 s (-d 600000) hands over after round 1 whatever the writer does: on
# the debug kernel a round of 16 closures takes seconds and the estimate
# never fits the default limit (the round limit would refuse the
# handover, ETIME); the deadline case moves 2 closures so
# that the call (setup, one round, the 4 s deadline) ends well inside
# 18 s there too, and a wait the strays restart runs past 24 s
MMTG_CMD_TIMEOUT=180 mmtg_t "send: migration, 2 forged refusals of the COMMIT before its ACK: dropped, committed" \
	mmt-migrate src -i 1 -a "$PEER" -p 7562 -n 16 -d 600000 -D ack_forged:2
MMTG_CMD_TIMEOUT=120 mmtg_t "send: migration, a WANT granted just before the COMMIT: EPROTO, source intact" \
	mmt-migrate src -i 1 -a "$PEER" -p 7563 -n 16 -d 600000 -F "commit want 0" \
	-X EPROTO
MMTG_CMD_TIMEOUT=120 mmtg_t "send: migration, the COMMIT's ACK never sent: ECONNRESET, outcome unknown, read-only (EUCLEAN); the destination states committed: INVALID" \
	mmt-migrate src -i 1 -a "$PEER" -p 7564 -n 16 -u 0 -U -X ECONNRESET \
	-Q 7566 -O committed
MMTG_CMD_TIMEOUT=120 mmtg_t "send: migration, the COMMIT lost with the link: ECONNRESET, outcome unknown, read-only (EUCLEAN); the destination states aborted: writable, intact" \
	mmt-migrate src -i 1 -a "$PEER" -p 7567 -n 16 -u 0 -U -X ECONNRESET \
	-Q 7568 -O aborted
MMTG_CMD_TIMEOUT=120 mmtg_t "send: migration, stray messages after the COMMIT: ETIMEDOUT at the deadline, outcome unknown, read-only (EUCLEAN)" \
	mmt-migrate src -i 1 -a "$PEER" -p 7565 -n 2 -u 0 -t 4000 -W 18000 \
	-U -X ETIMEDOUT
mmtg_t "send: every armed fault fired" grep -qx 'armed 0' "$FAULT"
cat /sys/kernel/debug/mmt/stats
mmtg_t "send: rmmod mmt" mmtg_unload_mmt
dmesg | grep -i 'mmt' | tail -n 30
mmtg_done
