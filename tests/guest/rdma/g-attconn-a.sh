# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# g-attconn-a.sh - two-guest test of the attested hello, guest 1 (node 11;
# docs/ATTESTATION.md "The hello"), with a test build of the module
# (debugfs mmt/conn_fault) and a credential from the test issuer
# (tests/attest/mmt-test-issuer.c, the authority's test key shipped as
# /opt/mmt/auth.der and auth.key).  In the order of g-attconn-b.sh: a
# connection closed by this side before B's connect returned (B's hook),
# one B's hook fails before it is LIVE there, set-ups without attested mode, then attested ones, an MMT-channel delegation on
# an attested connection (a key set by hand), MMT key agreement (two
# agreements; mmt-attest-conn agree-recv's checks), one agreement this side
# closes at once after (B's hook), a swapped key share
# (B's hook), B's own hello reflected to it (B's hook), this node
# connected to itself (a relay's reflection: refused), a second
# connection accepted while B holds the handshake of a first (B's hook:
# a slow peer delays only its own connection), this node's device
# removed under a ready attested connection before its accept,
# renewals on a live attested connection (it outlives the first
# credentials, ends with EKEYEXPIRED when this node's renewal expires),
# this node refused by B once its credential expired, a corrupted
# renewal from B (B's hook) closing the connection,
# an unattested peer (B reloaded its module) refused in rdma_cm, and
# this attested node refused by B's unattested listener.

PEER=$(mmtg_ip_of 2)
SELF=$(mmtg_ip_of 1)

# mmtg_wait_pid PID - the exit status of a background job (for mmtg_t)
mmtg_wait_pid() {
	wait "$1"
}

# mmtg_running PID - whether a background job still runs
mmtg_running() {
	kill -0 "$1" 2>/dev/null
}

mmtg_t "a: rxe0 on eth0" mmtg_add_rxe rxe0 eth0
mmtg_t "a: insmod mmt.ko (test build)" mmtg_load_mmt
mmtg_t "a: ping $PEER" mmtg_wait 60 ping -c 1 -W 2 "$PEER"

mmtg_t "a: a connection accepted and closed at once (B's connect is delayed)" \
	mmt-attest-conn listen -p 7600
mmtg_t "a: a connection accepted and closed at once (B's hook fails it first)" \
	mmt-attest-conn listen -p 7608
mmtg_t "a: 10 connections, not in attested mode" \
	mmt-attest-conn listen -p 7601 -n 10
mmtg_t "a: attested mode, a credential for node 11 (test issuer)" \
	"$MMTG_DIR/mmt-test-issuer" "$MMTG_DIR/auth.der" "$MMTG_DIR/auth.key" 11
mmtg_t "a: 10 connections, attested" mmt-attest-conn listen -p 7602 -n 10
mmtg_t "a: hs_done 10" mmtg_stat_is hs_done 10
mmtg_t "a: an MMT-channel delegation on an attested connection, byte-exact" \
	mmt-xfer recv -p 7603 -n 4 -s 31
mmtg_t "a: MMT key agreement (agree-recv checks)" mmt-attest-conn agree-recv -p 7607
mmtg_t "a: hs_done 12" mmtg_stat_is hs_done 12
mmtg_t "a: one key agreement, then this side closes at once (B's hook holds its last check)" \
	mmt-attest-conn agree-recv -p 7610 -Q
mmtg_t "a: hs_done 13" mmtg_stat_is hs_done 13

mmtg_t "a: a swapped key share (man in the middle): accept fails with EKEYREJECTED" \
	mmt-attest-conn listen -p 7604 -X EKEYREJECTED
mmtg_t "a: ... hs_rejected 1" mmtg_stat_is hs_rejected 1
mmtg_t "a: B's own hello reflected to it (a relay): accept fails with EKEYREJECTED" \
	mmt-attest-conn listen -p 7611 -X EKEYREJECTED
mmtg_t "a: ... hs_rejected 2" mmtg_stat_is hs_rejected 2

# What a relay that cross-feeds two connections to this node's own
# listener achieves: this node connected to itself.  Both halves see this
# node's own credential as the peer's and refuse it
mmt-attest-conn listen -p 7614 -X EKEYREJECTED >/tmp/self-l.out &
_l=$!
mmtg_t "a: connected to itself (a reflection): connect fails with EKEYREJECTED" \
	mmt-attest-conn connect -a "$SELF" -p 7614 -X EKEYREJECTED
mmtg_t "a: ... and the accept fails with EKEYREJECTED" mmtg_wait_pid "$_l"
cat /tmp/self-l.out
mmtg_t "a: ... hs_rejected 4" mmtg_stat_is hs_rejected 4
mmtg_t "a: ... hs_done still 13" mmtg_stat_is hs_done 13

# B holds its first connection's handshake (7612) 5 s in the check of
# this node's credential (B's hook); its second (7613), started during
# that delay, is accepted here while the first still waits for B
mmt-attest-conn listen -p 7612 >/tmp/slow-l.out &
_l=$!
mmtg_t "a: a second attested connection while B's handshake of a first is slow: accepted" \
	mmt-attest-conn listen -p 7613
mmtg_t "a: ... while the first's accept still runs" mmtg_running "$_l"
mmtg_t "a: ... then the first is accepted too" mmtg_wait_pid "$_l"
cat /tmp/slow-l.out
mmtg_t "a: ... hs_done 15" mmtg_stat_is hs_done 15

# B connects (attested); once the connection waits in the accept queue
# this node's device goes away, tearing it down; the accept (which would
# run the handshake on it) fails with ECONNRESET, no oops; then rxe0 again
mmtg_t "a: device removed under a ready attested connection: accept fails with ECONNRESET" \
	mmt-attest-conn listen -p 7609 -R -X ECONNRESET
mmtg_t "a: rxe0 on eth0 again" mmtg_add_rxe rxe0 eth0
mmtg_t "a: ... hs_rejected still 4" mmtg_stat_is hs_rejected 4
mmtg_t "a: ... hs_done still 15" mmtg_stat_is hs_done 15

# Renewal on a live connection (docs/ATTESTATION.md): once B's connection
# (7615) is up, this node installs a credential valid 12 s, then 4 s
# later its renewal, valid 20 s; B does the same with 12 s, then an hour
# 2 s later.  Each is sent to the peer, which holds it from then on: the
# connection outlives the first two (it lives at least 16 s) and ends
# when this node's renewal expires, on both sides, with EKEYEXPIRED.  An
# install takes half a second on the debug kernel: the 4 s leave room
issue() {
	"$MMTG_DIR/mmt-test-issuer" "$MMTG_DIR/auth.der" "$MMTG_DIR/auth.key" \
		11 "$(date +%s)" "$1"
}
mmt-attest-conn hold-recv -p 7615 -t 90000 -L 150000 -M 16000 \
	-E EKEYEXPIRED >/tmp/hold-a.out &
_h=$!
mmtg_t "a: an attested connection to hold (hs_done 16)" \
	mmtg_wait 90 mmtg_stat_is hs_done 16
mmtg_t "a: a credential valid 12 s installed (node 11)" issue 12
mmtg_t "a: ... sent to B on the live connection (creds_sent 1)" \
	mmtg_wait 20 mmtg_stat_is creds_sent 1
sleep 4
mmtg_t "a: its renewal, valid 20 s, installed" issue 20
mmtg_t "a: ... sent to B (creds_sent 2)" mmtg_wait 20 mmtg_stat_is creds_sent 2
mmtg_t "a: ... B's two renewals held (creds_renewed 2)" \
	mmtg_wait 30 mmtg_stat_is creds_renewed 2
mmtg_t "a: the connection outlives the first credentials, ends when this node's renewal expires (EKEYEXPIRED)" \
	mmtg_wait_pid "$_h"
cat /tmp/hold-a.out
mmtg_t "a: ... conns_expired 1" mmtg_stat_is conns_expired 1
# this node's credential expired: B refuses its hello, and says why
mmtg_t "a: with its credential expired, B refuses this node: accept fails with EKEYEXPIRED" \
	mmt-attest-conn listen -p 7616 -X EKEYEXPIRED
mmtg_t "a: ... hs_rejected 5" mmtg_stat_is hs_rejected 5
mmtg_t "a: a credential valid an hour again" issue 3600
# B sends a renewal whose signature does not verify (B's hook): this
# node refuses it and closes the connection
mmt-attest-conn hold-recv -p 7617 -t 90000 -L 60000 -M 0 \
	-E EKEYREJECTED >/tmp/hold-c.out &
_h=$!
mmtg_t "a: a renewal that does not verify closes the connection (EKEYREJECTED)" \
	mmtg_wait_pid "$_h"
cat /tmp/hold-c.out
mmtg_t "a: ... conns_expired 2" mmtg_stat_is conns_expired 2
mmtg_t "a: ... creds_renewed still 2" mmtg_stat_is creds_renewed 2
mmtg_t "a: ... hs_done 17" mmtg_stat_is hs_done 17

# B, reloaded without attested mode, connects: refused before any accept
mmt-attest-conn listen -p 7605 -t 90000 -X ETIMEDOUT >/dev/null &
_l=$!
mmtg_t "a: a peer not in attested mode is refused (hs_rejected 6)" \
	mmtg_wait 90 mmtg_stat_is hs_rejected 6
kill "$_l" 2>/dev/null
wait "$_l" 2>/dev/null
mmtg_t "a: hs_done still 17" mmtg_stat_is hs_done 17

mmtg_t "a: attested, to a listener not in attested mode: connect fails with EKEYREJECTED" \
	mmt-attest-conn connect -a "$PEER" -p 7606 -X EKEYREJECTED
