# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# g-attest-node.sh - guests 2 and 3 of the run `attest` (tests/guest/tests,
# make demo-attest): a node with a TPM 2.0 (EK certificate from the
# manufacturer the authority trusts) and IMA (ima_policy=tcb|critical_data).
#
#  1. load mmt.ko so that IMA measures it (attestlib.sh, attest_load);
#     the module measures its node key at load (the log's one
#     "mmt-node-key" event, after mmt.ko's entry, carries the key the
#     module reports); attest to the authority on guest 1 (mmt-attest
#     quotes over the key it reads from the module) and install the
#     credential: the
#     module is in attested mode with the node id the authority assigned;
#     the two nodes exchange their ids: distinct
#  2. node 2: its evidence sent again is refused (exit 12, the challenge is
#     used up), and its old quote under a new challenge (old nonce) too
#     (exit 14); a quote over a node key made in user space (the test
#     build of mmt-attest, which takes --node-key) is refused (exit 21:
#     not the key the module measured); its credential stays the one
#     installed
#  3. both nodes hold credentials: node 2 connects to node 3 over Soft-RoCE
#     (the attested hello runs on that connection: each node's credential
#     and key share, docs/ATTESTATION.md "The hello"), and on it agrees two
#     PMO keys with MMT_IOC_CONN_KEY_AGREE (mmt-attest-conn agree-send,
#     agree-recv): a closure of the first agreement into a PMO of the
#     second is refused on both sides (EBADMSG: the keys differ), then each
#     PMO is delegated under its agreed key and read back byte-exact.
#     Node 2 prints the connection's set-up time and the agreement times
#     (results: agree)
#  4. continuous attestation, with credentials of 45 s from the
#     authority's stream service (mmt-authority serve on port 7004):
#     node 3 runs mmt-attest renew as a daemon (every 10 s); node 2
#     renews once (the log only grew: same node id, a higher serial) and
#     holds an attested connection to node 3 open; then root on node 2
#     tries to load the tampered module from a file whose security.ima
#     names SHA-512 (insmod fails, as mmt is loaded, but IMA has measured
#     the file, with SHA-512): its next renewal is refused (exit 20, the
#     module and sha512 named) and the authority revokes it, the one after too (exit 23); when
#     node 2's last credential expires the connection ends on both sides
#     (EKEYEXPIRED), and node 3 refuses node 2's next hello (EKEYEXPIRED)
#     while its own daemon keeps it attested
#  5. node 3: unloads mmt.ko, loads a copy with one byte of .comment
#     changed (/opt/mmt/mmt-tampered.ko, made on the host) renamed foo.ko
#     (the kernel still calls it mmt, from its modinfo): the authority
#     refuses it (exit 20: a module whose hash is no reference value,
#     whatever its name) and the module stays without a credential
# Each node tells guest 1 when it is done.

. "$MMTG_DIR/attestlib.sh"

peer=$((5 - MMTG_ID))		# node 2 <-> node 3
attest_say "node: loads mmt.ko (IMA measures it into PCR 10), enters attested mode"
mmtg_t "node $MMTG_ID: mmt.ko loaded from a measured file system" \
	attest_load /opt/mmt/mmt.ko
ko_hash=$(sha256sum "$ATTEST_KO" | cut -c1-64)
if grep -q " sha256:$ko_hash $ATTEST_KO" \
	/sys/kernel/security/ima/ascii_runtime_measurements; then
	mmtg_ok "node $MMTG_ID: IMA measured mmt.ko (sha256:$(echo "$ko_hash" | cut -c1-16)...)"
else
	mmtg_notok "node $MMTG_ID: IMA measured mmt.ko" \
		"$(tail -n 3 /sys/kernel/security/ima/ascii_runtime_measurements)"
fi

# the node key the module drew at load, measured right after the module:
# one "mmt-node-key" event (template ima-buf), whose buffer is
# "mmt node key v2\0", the key `mmt-attest info` reports, the boot state
# it reports (lockdown level, module signatures enforced) and six zeros
node_key_event() {
	_key=$(attest_info node_key)
	case $(attest_info lockdown) in
	none) _ld=00 ;; integrity) _ld=01 ;; confidentiality) _ld=02 ;;
	*) return 1 ;;
	esac
	case $(attest_info module_sig_enforced) in
	yes) _fl=01 ;; no) _fl=00 ;; *) return 1 ;;
	esac
	_ml=/sys/kernel/security/ima/ascii_runtime_measurements
	awk '$5 == "mmt-node-key"' "$_ml"
	[ "$(awk '$5 == "mmt-node-key"' "$_ml" | wc -l)" -eq 1 ] || return 1
	[ "$(awk '$5 == "mmt-node-key" { print $3 " " $6 }' "$_ml")" = \
		"ima-buf 6d6d74206e6f6465206b657920763200$_key$_ld${_fl}000000000000" ] || return 1
	# after mmt.ko's entry
	awk -v ko="$ATTEST_KO" '$5 == ko { m = NR } $5 == "mmt-node-key" { k = NR }
		END { exit !(m && k > m) }' "$_ml"
}
mmtg_t "node $MMTG_ID: the module's node key measured at load, once, after mmt.ko (IMA event mmt-node-key)" \
	node_key_event

# the other modules IMA measured (mmt.ko's dependencies): the authority
# holds them as reference values (reference --add-module)
nmod=$(attest_modules)
awk '$5 ~ /\.ko$/ { print "IMA: " $4 " " $5 }' \
	/sys/kernel/security/ima/ascii_runtime_measurements
mmtg_check "node $MMTG_ID: IMA measured $nmod other modules before it attests" "$nmod" -gt 0

# 1. attest
attest_run >/tmp/att.out 2>&1
rc=$?
cat /tmp/att.out
mmtg_check "node $MMTG_ID: attests and installs its credential (exit $rc)" $rc -eq 0
mmt-attest info | tee /tmp/info
id=$(attest_info node_id)
serial=$(attest_info serial)
mmtg_check "node $MMTG_ID: the module is in attested mode" "$(attest_info state)" = attested
attest_say "node: attested in $(sed -n 's/^# attestation of node [0-9]*: \([0-9.]*\) s.*/\1/p' /tmp/att.out) s," \
	"the authority assigned node id $id (credential serial $serial)"
mmtg_result attest-time /tmp/att.out
# the two nodes' ids
if [ "$MMTG_ID" -eq 2 ]; then
	mmtg_send "$(mmtg_ip_of 3)" 7013 "id $id" 120
	other=$(mmtg_recv 7012 120)
else
	other=$(mmtg_recv 7013 120)
	mmtg_send "$(mmtg_ip_of 2)" 7012 "id $id" 120
fi
other=${other#id }
mmtg_check "node $MMTG_ID: its node id $id differs from node $peer's ($other)" \
	-n "$other" -a "$id" != "$other" -a "$id" -gt 0

# 2. replays (node 2)
replay() {
	cp /tmp/att.ev /tmp/att.ev.first
	attest_ask /tmp/att.ev.first /tmp/att.r1
	_rc=$?
	echo "replayed evidence: exit $_rc"
	[ $_rc -eq 12 ] || return 1
	# a fresh challenge, answered with the old quote
	mmtg_run 60 mmt-attest hello --tcti "$ATTEST_TCTI" --out /tmp/att.h2 &&
		attest_ask /tmp/att.h2 /tmp/att.c2 || return 1
	_new=$(awk '$1 == "id" { print $2 }' /tmp/att.c2)
	awk -v v="$_new" '$1 == "id" { $2 = v } { print }' /tmp/att.ev.first \
		>/tmp/att.ev.old
	attest_ask /tmp/att.ev.old /tmp/att.r2
	_rc=$?
	echo "old quote under a new challenge: exit $_rc"
	[ $_rc -eq 14 ]
}
# root makes a node key in user space and quotes over it
userspace_key() {
	head -c 32 /dev/urandom >/tmp/att.fake
	ATTEST_QUOTE=mmt-attest-test attest_run --node-key /tmp/att.fake \
		>/tmp/att.u 2>&1
	_rc=$?
	cat /tmp/att.u
	echo "quote over a user-space node key: exit $_rc"
	[ $_rc -eq 21 ]
}
# the authority's strict copy (port 7005) appraises the boot state the
# module measured with its node key: these guests are not hardened
strict_boot() {
	mmt-attest renew --tcti "$ATTEST_TCTI" \
		--connect "nc $(mmtg_ip_of 1) 7005" >/tmp/strict.out 2>&1
	_rc=$?
	cat /tmp/strict.out
	echo "strict boot policy: exit $_rc"
	[ $_rc -eq 24 ] && grep -q 'lockdown' /tmp/strict.out
}
if [ "$MMTG_ID" -eq 2 ]; then
	attest_say "node: replays its evidence, then its old quote under a new challenge"
	mmtg_t "node 2: replayed evidence refused (12), old quote under a new challenge (old nonce) refused (14)" replay
	attest_say "node: quotes over a node key made in user space"
	mmtg_t "node 2: a quote over a node key made in user space refused (21: not the key the module measured)" userspace_key
	attest_say "node: attests to an authority with the strict boot policy"
	mmtg_t "node 2: refused under the strict boot policy (24: lockdown none, module signatures not enforced, as the module measured them)" \
		strict_boot
	mmtg_check "node 2: still attested with its credential (node id $id, serial $serial)" \
		"$(attest_info node_id) $(attest_info serial) $(attest_info state)" = "$id $serial attested"
fi

# 3. both nodes hold credentials: the attested hello on a connection from
# node 2 to node 3, two key agreements on it, delegations under them
attested_delegate() {
	mmtg_t "node $MMTG_ID: Soft-RoCE" mmtg_add_rxe || return
	if [ "$MMTG_ID" -eq 2 ]; then
		attest_say "node: connects to node 3 (attested hello), agrees two PMO keys with it (MMT_IOC_CONN_KEY_AGREE), delegates under them"
		MMTG_CMD_TIMEOUT=180 mmtg_t "node 2: attested connection to node 3, two key agreements, delegations under them (agree-send checks)" \
			mmt-attest-conn agree-send -a "$(mmtg_ip_of 3)" -p 7470 \
			>/tmp/agree.out 2>&1
		_rc=$?
		cat /tmp/agree.out
		grep '^# ' /tmp/agree.out >/tmp/agree
		[ -s /tmp/agree ] && mmtg_result agree /tmp/agree
		[ $_rc -eq 0 ] &&
			attest_say "node: agreed two keys with node 3 (they differ: a closure under one into a PMO under the other is refused, EBADMSG), delegated 2 closures (256 KiB) under each;" \
				"$(sed -n 's/^# attested connection set-up: /set-up /p' /tmp/agree), $(sed -n 's/^# key agreement: /agreements /p' /tmp/agree)"
	else
		MMTG_CMD_TIMEOUT=180 mmtg_t "node 3: attested connection from node 2, two key agreements, delegations under them read back byte-exact (agree-recv checks)" \
			mmt-attest-conn agree-recv -p 7470 -t 150000 >/tmp/agree.out 2>&1
		_rc=$?
		cat /tmp/agree.out
		[ $_rc -eq 0 ] &&
			attest_say "node: agreed two keys with node 2; a closure under the first into a PMO under the second refused (EBADMSG); node 2's closures under each key byte-exact"
	fi
}
attested_delegate

# 4. continuous attestation (attestlib.sh: attest_renew, the service on
# port 7004 issues credentials of 45 s)
renew_once() {
	_s0=$(attest_info serial)
	attest_renew >/tmp/renew.out 2>&1
	_rc=$?
	cat /tmp/renew.out
	echo "renewal: exit $_rc, serial $_s0 -> $(attest_info serial), node id $(attest_info node_id)"
	[ $_rc -eq 0 ] && [ "$(attest_info node_id)" = "$id" ] &&
		[ "$(attest_info serial)" -gt "$_s0" ]
}
renew_refused() {
	attest_renew >/tmp/renew.out 2>&1
	_rc=$?
	cat /tmp/renew.out
	echo "renewal refused: exit $_rc (expected $1)"
	[ $_rc -eq "$1" ] && { [ -z "${2:-}" ] || grep -q "$2" /tmp/renew.out; }
}
# root loads a module the authority has no reference value for: the
# tampered copy, from an ext4 image whose security.ima xattr names
# SHA-512, so IMA measures it with SHA-512 (mmt is loaded, so the kernel
# refuses the module, after IMA measured the file)
load_unreferenced() {
	mmtg_run 60 modprobe -a loop ext4 || return 1
	mkdir -p /mnt/ext &&
		mount -o loop,ro /opt/mmt/sha512.ext4 /mnt/ext || return 1
	/usr/sbin/insmod /mnt/ext/bar.ko 2>&1
	awk '$5 == "/mnt/ext/bar.ko"' \
		/sys/kernel/security/ima/ascii_runtime_measurements
	awk '$5 == "/mnt/ext/bar.ko" && $4 ~ /^sha512:/ { n++ } END { exit !n }' \
		/sys/kernel/security/ima/ascii_runtime_measurements
}
# wait_pid PID - the exit status of a background job (for mmtg_t)
wait_pid() {
	wait "$1"
}
continuous() {
	if [ "$MMTG_ID" -eq 3 ]; then
		attest_say "node: renews its credential every 10 s (mmt-attest renew --every 10, credentials of 45 s)"
		# mmt-attest itself in the background (not a subshell), so
		# that the SIGTERM below reaches it
		mmt-attest renew --tcti "$ATTEST_TCTI" --every 10 \
			--connect "nc $(mmtg_ip_of 1) $ATTEST_SERVE_PORT" \
			>/tmp/renewd.log 2>&1 &
		_d=$!
		mmtg_t "node 3: the renewal daemon's first renewal" \
			mmtg_wait 60 grep -q ' installed, valid until' /tmp/renewd.log
		MMTG_CMD_TIMEOUT=240 mmtg_t "node 3: node 2's attested connection ends when node 2's credential expires (EKEYEXPIRED)" \
			mmt-attest-conn hold-recv -p 7471 -t 120000 -L 200000 -M 5000 \
			-E EKEYEXPIRED
		MMTG_CMD_TIMEOUT=120 mmtg_t "node 3: refuses node 2's next hello (expired credential): accept fails with EKEYEXPIRED" \
			mmt-attest-conn listen -p 7472 -t 90000 -X EKEYEXPIRED
		mmtg_t "node 3: still attested by its daemon (renewals: $(grep -c ' installed, valid until' /tmp/renewd.log))" \
			test "$(attest_info state)" = attested -a \
			"$(attest_info not_after)" -gt "$(date +%s)"
		kill "$_d"
		wait "$_d"
		mmtg_check "node 3: the daemon exits 0 on SIGTERM" $? -eq 0
		cat /tmp/renewd.log
		attest_say "node: $(grep -c ' installed, valid until' /tmp/renewd.log) renewals by the daemon; node 2's connection ended at its expiry, its hello refused"
		return
	fi
	attest_say "node: renews once (a fresh quote; the log only grew)"
	mmtg_t "node 2: a renewal (same node id, a higher serial, valid 45 s)" renew_once
	_exp=$(attest_info not_after)
	MMTG_CMD_TIMEOUT=240 mmt-attest-conn hold-send -a "$(mmtg_ip_of 3)" -p 7471 \
		-L 200000 -M 5000 -E EKEYEXPIRED >/tmp/hold.out 2>&1 &
	_h=$!
	attest_say "node: root loads a module with no reference value (IMA measures it)"
	mmtg_t "node 2: a tampered module measured with SHA-512 (bar.ko, its security.ima names SHA-512)" load_unreferenced
	attest_say "node: its next renewal is refused, and the authority revokes it"
	mmtg_t "node 2: the renewal is refused (exit 20: bar.ko measured with sha512), the node revoked" \
		renew_refused 20 'module /mnt/ext/bar.ko was measured with sha512'
	mmtg_t "node 2: ... the next one too (exit 23: revoked)" renew_refused 23
	attest_say "node: its attested connection to node 3 lasts until its credential expires ($(($_exp - $(date +%s))) s)"
	mmtg_t "node 2: the attested connection ends when its credential expires (EKEYEXPIRED)" \
		wait_pid "$_h"
	cat /tmp/hold.out
	mmtg_check "node 2: ... at its expiry (its last valid second $_exp, or after)" \
		"$(date +%s)" -ge "$_exp"
	# node 3 judges the credential by its own clock: the guests' clocks
	# (each set from the RTC at boot, to the second) may differ by a
	# second or two, so the next hello waits until it is expired there too
	while [ "$(date +%s)" -le $((_exp + 3)) ]; do
		sleep 1
	done
	mmtg_t "node 2: node 3 refuses it now (connect fails with EKEYEXPIRED)" \
		mmt-attest-conn connect -a "$(mmtg_ip_of 3)" -p 7472 -X EKEYEXPIRED
	attest_say "node: revoked, expired: node 3 refuses its hello (EKEYEXPIRED)"
}
continuous

# 5. a tampered module (node 3), under another file name
tampered() {
	mmtg_unload_mmt || return 1
	attest_load /opt/mmt/mmt-tampered.ko foo.ko || return 1
	grep -q '^mmt ' /proc/modules || return 1
	echo "loaded mmt-tampered.ko as /mnt/ima/foo.ko (the kernel calls it mmt): sha256 $(sha256sum /mnt/ima/foo.ko | cut -c1-64)"
	attest_run >/tmp/att.t 2>&1
	_rc=$?
	cat /tmp/att.t
	echo "tampered module: exit $_rc (loaded from foo.ko)"
	[ $_rc -eq 20 ] &&
		grep -q 'module /mnt/ima/foo.ko was measured with a hash that is not a reference value' /tmp/att.t
}
if [ "$MMTG_ID" -eq 3 ]; then
	attest_say "node: unloads mmt.ko, loads it again with one byte of .comment changed, from a file named foo.ko"
	mmtg_t "node 3: a module with one byte changed, loaded as foo.ko after the reference mmt.ko, is refused by the authority (exit 20, foo.ko named)" tampered
	mmtg_check "node 3: that module stays without a credential (state waiting, serial 0)" \
		"$(attest_info state) $(attest_info serial)" = "waiting 0"
	attest_say "node: the authority refused the tampered module (exit 20); no credential, no node id"
fi

mmtg_send "$(mmtg_ip_of 1)" $((7000 + MMTG_ID)) "done $MMTG_ID" 120
mmtg_done
