#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run.sh - native tests of mmt-authority and mmt-attest with swtpm
# (docs/ATTESTATION.md; make check runs it in the unit stage)
#
# On the host, no guest: software TPMs (swtpm) whose EK certificates come
# from swtpm's local CA playing the manufacturer, and a synthetic IMA log
# (tests/attest/imalog.py) whose entries are extended into each TPM's
# PCR 10 as the kernel would, with the events the module and IMA measure
# (the node key event "mmt-node-key", "kernel_version").  The reference
# "mmt.ko" is a stand-in file of random bytes: the authority sees only its
# SHA-256.  With no module, the quotes are made by the test build of
# mmt-attest ($O/tests/attest/mmt-attest), whose quote takes the node key
# from --node-key FILE; the installed one takes the module's only.
#
#   TPM a, b: EK certificates from CA 1, which the authority trusts
#   TPM c:    EK certificate from CA 2, which it does not
#
# Section 10 drives the exchange over pipes too: mmt-authority serve and
# mmt-attest renew --connect.
#
# Each check prints "ok - attest: ..." or "not ok - attest: ..." and
# asserts the exact exit code of the refusal (enum mmta_exit,
# tools/attest/mmta.h), then "attest: N passed, N failed".
# Needs swtpm, swtpm_setup, tpm2-tools, openssl, python3 (scripts/deps.sh);
# about 100 s here, most of it swtpm restarts and the waits of section 10.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
O=${O:-build}
case $O in /*) ;; *) O=$ROOT/$O ;; esac
AUTH=$O/tools/mmt-authority
ATT=$O/tools/mmt-attest
ATT_TEST=$O/tests/attest/mmt-attest
PASS=0
FAIL=0
W=$(mktemp -d /tmp/mmt-attest-test.XXXXXX)

cleanup() {
	local p
	# a renew daemon of section 10 that outlived its check
	[ -n "${dpid:-}" ] && kill "$dpid" 2>/dev/null
	for p in "$W"/swtpm-*.pid; do
		[ -e "$p" ] && kill "$(cat "$p")" 2>/dev/null
	done
	rm -rf "$W"
}
trap cleanup EXIT

ok() {
	PASS=$((PASS + 1))
	echo "ok - attest: $1"
}

notok() {
	FAIL=$((FAIL + 1))
	echo "not ok - attest: $1"
	[ -s "$W/err" ] && sed 's/^/#   /' "$W/err"
}

finish() {
	echo "attest: $PASS passed, $FAIL failed"
	exit $((FAIL > 0))
}

# expect NAME RC CMD...: CMD must exit with RC
expect() {
	local name=$1 want=$2 rc
	shift 2
	"$@" >"$W/out" 2>"$W/err"
	rc=$?
	if [ "$rc" -eq "$want" ]; then
		ok "$name (exit $rc)"
	else
		notok "$name: exit $rc, expected $want"
	fi
}

for t in swtpm swtpm_setup tpm2_pcrextend openssl python3; do
	command -v "$t" >/dev/null || { echo "not ok - attest: $t missing (scripts/deps.sh)"; finish; }
done
[ -x "$AUTH" ] && [ -x "$ATT" ] && [ -x "$ATT_TEST" ] ||
	{ echo "not ok - attest: build $AUTH, $ATT and $ATT_TEST first (make tools)"; finish; }

# the manufacturers (CA 1, CA 2) and TPMs: tests/attest/swtpm-lib.sh
. "$HERE/swtpm-lib.sh"
mkca() {
	mmt_swtpm_ca "$W/ca$1"
}
mktpm() {
	mmt_swtpm_manufacture "$W/tpm-$1" "$W/ca$2" "$W/setup-$1.log"
}

# the swtpm ports: below the kernel's ephemeral range (ip_local_port_range),
# where no client connection (this test makes hundreds) can hold one
# already; 20000-40000 overlapped it, and a boot failed once in three
# runs with "Address already in use"
eph=$(awk '{ print $1 }' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null)
[ "${eph:-0}" -gt 10016 ] || eph=32768
base=$((10000 + RANDOM % (eph - 10016)))
declare -A port=([a]=$base [b]=$((base + 2)) [c]=$((base + 4)))

tcti() {
	echo "swtpm:host=127.0.0.1,port=${port[$1]}"
}

# boot NAME [--ima-sig] ENTRY...: (re)start TPM NAME (PCRs reset), draw
# the node key $W/NAME.key of this boot's module load, write its IMA log
# $W/NAME.ima with ENTRY... (imalog.py) and extend PCR 10 with it, as a
# booted node with IMA would.  Until keep_revoked=1 (section 10) a boot
# also reinstates every revoked node: the appraisal checks of sections
# 1-9 each start from nodes in good standing, while a refusal 20 revokes
# a node that holds a valid credential
keep_revoked=0
boot() {
	local name=$1 pid=$W/swtpm-$1.pid h i p sig id
	shift
	# BOOT_KEEP_KEY=1: the same node key, as a forged log of one load
	[ "${BOOT_KEEP_KEY:-0}" = 1 ] || nodekey "$name"
	if [ "$keep_revoked" = 0 ]; then
		for id in $("$AUTH" nodes --state "$W/auth" 2>/dev/null |
			awk '/ revoked: / { print $1 }'); do
			"$AUTH" reinstate --state "$W/auth" --node "$id" 2>/dev/null
		done
	fi
	# a boot that fails leaves no log behind, so that no later round can
	# quote the previous boot's TPM with the previous boot's log (under a
	# heavy load the old swtpm once outlived the wait below, the new one
	# could not bind its port, and a tampered boot verified as the good
	# one before it)
	rm -f "$W/$name.ima"
	if [ -e "$pid" ]; then
		p=$(cat "$pid")
		# an orderly shutdown: after a disorderly one the TPM counts a
		# dictionary-attack failure, and swtpm locks the EK out after 3
		TPM2TOOLS_TCTI=$(tcti "$name") tpm2_shutdown -c 2>/dev/null
		kill "$p" 2>/dev/null
		for i in $(seq 100); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$p" 2>/dev/null; then
			kill -KILL "$p" 2>/dev/null
			sleep 0.5
		fi
		rm -f "$pid"
	fi
	swtpm socket --tpm2 --tpmstate dir="$W/tpm-$name" \
		--server type=tcp,port="${port[$name]}",bindaddr=127.0.0.1 \
		--ctrl type=tcp,port=$((port[$name] + 1)),bindaddr=127.0.0.1 \
		--flags not-need-init,startup-clear --daemon \
		--pid file="$pid" || return 1
	for i in $(seq 50); do
		TPM2TOOLS_TCTI=$(tcti "$name") tpm2_pcrread sha256:10 \
			>/dev/null 2>&1 && break
		sleep 0.1
	done
	sig=
	if [ "${1:-}" = --ima-sig ]; then
		sig=--ima-sig
		shift
	fi
	for h in $(python3 "$HERE/imalog.py" $sig "$W/$name.ima" "$@"); do
		TPM2TOOLS_TCTI=$(tcti "$name") tpm2_pcrextend \
			"10:sha256=$h" || return 1
	done
}

# hello NAME / challenge NAME / quote NAME [ARGS] / verify NAME: one
# protocol step for node NAME; messages in $W/NAME.{hello,chal,ev,cred};
# quote sends the node key $W/NAME.key (the test build: a later
# --node-key in ARGS wins)
hello() {
	"$ATT" hello --tcti "$(tcti "$1")" --out "$W/$1.hello"
}
challenge() {
	"$AUTH" challenge --state "$W/auth" --in "$W/$1.hello" --out "$W/$1.chal"
}
quote() {
	local n=$1
	shift
	"$ATT_TEST" quote --tcti "$(tcti "$n")" --in "$W/$n.chal" \
		--node-key "$W/$n.key" --ima-log "$W/$n.ima" --out "$W/$n.ev" "$@"
}
verify() {
	"$AUTH" verify --state "$W/auth" --in "${2:-$W/$1.ev}" --out "$W/$1.cred"
}

# round NAME [QUOTE ARGS]: hello, challenge and quote for node NAME; a
# failing step is a failed check (the evidence of an earlier round is
# removed first, so that it is never verified by mistake)
round() {
	local n=$1
	shift
	rm -f "$W/$n.ev"
	if ! { hello "$n" && challenge "$n" && quote "$n" "$@"; } 2>"$W/err"; then
		notok "node $n: hello, challenge or quote failed"
		return 1
	fi
}

# field FILE NAME: a message field's hex
field() {
	awk -v f="$2" '$1 == f { print $2 }' "$1"
}

# setfield IN OUT NAME HEX: a copy of message IN with field NAME replaced
setfield() {
	awk -v f="$3" -v v="$4" '$1 == f { $2 = v } { print }' "$1" >"$2"
}

# flipbyte HEX OFFSET: HEX with the byte at OFFSET xor 0x01
flipbyte() {
	python3 -c 'import sys; b = bytearray.fromhex(sys.argv[1]); b[int(sys.argv[2])] ^= 1; print(b.hex())' "$1" "$2"
}

nodekey() {
	openssl genpkey -algorithm x25519 2>/dev/null |
		openssl pkey -pubout -outform DER | tail -c 32 >"$W/$1.key"
}

# keyev NAME [LOCKDOWN FLAGS [TAIL]]: the IMA entry (imalog.py) of the
# event mmt.ko measures when it draws the node key $W/NAME.key at load
# (version 2), with the boot state it measured then: by default a
# hardened boot (lockdown 2, confidentiality; flags 1, module signatures
# enforced), which the authority's default (strict) boot policy requires;
# TAIL: the 6 reserved bytes, hex
keyev() {
	local p=
	[ $# -ge 3 ] && p="/$2/$3${4:+/$4}"
	echo "nodekey$p:$W/$1.key=mmt-node-key"
}

# check NAME CONDITION...: a check of a condition (test(1) arguments)
check() {
	local name=$1
	shift
	if [ "$@" ]; then ok "$name"; else notok "$name"; fi
}
# credf NAME FIELD: a field of node NAME's credential (show-cred)
credf() {
	"$AUTH" show-cred --state "$W/auth" --in "$W/$1.cred" 2>/dev/null |
		awk -v f="$2" '$1 == f { print $2 }'
}
# recf ID FIELD: a field of node ID's record (its value: the rest of the line)
recf() {
	awk -v f="$2" '$1 == f { sub(/^[^ ]* /, ""); print }' "$W/auth/records/$1"
}

# ---- set up: two manufacturers, three TPMs, the authority ----
t0=$(date +%s.%N)
mkca 1 && mkca 2 && mktpm a 1 && mktpm b 1 && mktpm c 2 ||
	{ echo "not ok - attest: swtpm_setup (logs in $W)"; cat "$W"/setup-*.log; finish; }
head -c 65536 /dev/urandom >"$W/mmt.ko"
cp "$W/mmt.ko" "$W/mmt-tampered.ko"
printf '\x5a' | dd of="$W/mmt-tampered.ko" bs=1 seek=4096 conv=notrunc 2>/dev/null
mmt_swtpm_ca_pem "$W/ca1" >"$W/ca1.pem"
"$AUTH" init --state "$W/auth" --ek-ca "$W/ca1.pem" >/dev/null &&
	"$AUTH" reference --state "$W/auth" --add "$W/mmt.ko" >/dev/null ||
	{ echo "not ok - attest: mmt-authority init"; finish; }
# other modules a node loads (stand-ins for the distribution's): a tree
# added with --add-module DIR (module files only), one file on its own
mkdir -p "$W/lib/kernel/drivers" "$W/lib/kernel/net"
head -c 4096 /dev/urandom >"$W/lib/kernel/drivers/rdma_rxe.ko"
head -c 4096 /dev/urandom >"$W/lib/kernel/net/ib_core.ko.xz"
head -c 4096 /dev/urandom >"$W/lib/modules.dep"
head -c 4096 /dev/urandom >"$W/extra.ko"
head -c 4096 /dev/urandom >"$W/unknown.ko"
BOOTAGG=$(printf '%064x' 42)=boot_aggregate
# IMA's second entry when the boot policy measures critical data
KVER=buf:6.1.0-57-amd64=kernel_version
# a node's log up to its module load; its node key event follows (keyev)
GOOD=("$BOOTAGG" "$KVER" /bin/sh=/bin/sh "$W/mmt.ko=/lib/modules/extra/mmt.ko")
for n in a b c; do nodekey $n; done
echo "# set up in $(echo "$(date +%s.%N) - $t0" | bc) s"

# ---- 1. an unmodified module attests and gets an id ----
boot a "${GOOD[@]}" "$(keyev a)" || { echo "not ok - attest: boot a"; finish; }
t1=$(date +%s.%N)
expect "node a: hello" 0 hello a
expect "node a: challenge (EK chain to CA 1, AK restricted)" 0 challenge a
expect "node a: quote (ActivateCredential recovers the nonce)" 0 quote a
expect "node a: verify issues a credential" 0 verify a
echo "# attestation of node a: $(echo "$(date +%s.%N) - $t1" | bc) s, four steps"
expect "node a: credential verifies under the authority's key" 0 \
	"$AUTH" show-cred --state "$W/auth" --in "$W/a.cred"
if grep -qx "node_id 1" "$W/out" &&
	grep -qx "node_key $(xxd -p -c 64 "$W/a.key")" "$W/out" &&
	grep -qx "module_hash $(sha256sum "$W/mmt.ko" | cut -c1-64)" "$W/out"; then
	ok "node a: credential carries node id 1, its node key and the reference hash"
else
	notok "node a: credential fields: $(tr '\n' ' ' <"$W/out")"
fi
cp "$W/a.ev" "$W/a.ev.first"

# ---- 2. replays ----
expect "replayed evidence (challenge already used) refused" 12 verify a "$W/a.ev.first"
# a new challenge, answered with the old quote (old nonce)
hello a >/dev/null 2>&1 && challenge a >/dev/null 2>&1
setfield "$W/a.ev.first" "$W/a.ev.old" id "$(field "$W/a.chal" id)"
expect "old quote under a new challenge (wrong nonce) refused" 14 verify a "$W/a.ev.old"
# that refusal used the challenge up too
expect "a refused challenge cannot be retried" 12 verify a "$W/a.ev.old"

# ---- 3. tampered evidence ----
round a
cp "$W/a.ev" "$W/a.ev.good"
nodekey x
setfield "$W/a.ev.good" "$W/a.ev.key" node_key "$(xxd -p -c 64 "$W/x.key")"
expect "node key swapped in transit refused" 14 verify a "$W/a.ev.key"
for what in quote signature; do
	round a
	v=$(field "$W/a.ev" "$what")
	setfield "$W/a.ev" "$W/a.ev.bad" "$what" "$(flipbyte "$v" $((${#v} / 4)))"
	expect "one byte of the $what changed refused" 13 verify a "$W/a.ev.bad"
done

# ---- 4. measurements ----
# Every entry with a module's file name must carry a reference value
# (either kind), whatever the name; one must be a reference mmt.ko
expect "reference --add-module DIR adds the module files under it" 0 \
	"$AUTH" reference --state "$W/auth" --add-module "$W/lib"
if [ "$(grep -c ' module ' "$W/auth/reference")" -eq 2 ] &&
	grep -q "^$(sha256sum "$W/lib/kernel/net/ib_core.ko.xz" | cut -c1-64) module " "$W/auth/reference" &&
	! grep -q "^$(sha256sum "$W/lib/modules.dep" | cut -c1-64) " "$W/auth/reference"; then
	ok "reference: rdma_rxe.ko and ib_core.ko.xz added as kind module, modules.dep not"
else
	notok "reference list: $(cut -c1-20,65- "$W/auth/reference" | tr '\n' ' ')"
fi
expect "reference --add-module FILE" 0 \
	"$AUTH" reference --state "$W/auth" --add-module "$W/extra.ko"
expect "reference with neither --add nor --add-module refused" 1 \
	"$AUTH" reference --state "$W/auth"
expect "reference --add-module with --name refused (names are paths)" 1 \
	"$AUTH" reference --state "$W/auth" --add-module "$W/extra.ko" --name x
MODS=("$W/lib/kernel/drivers/rdma_rxe.ko=/lib/modules/6.1/kernel/drivers/rdma_rxe.ko"
	"$W/lib/kernel/net/ib_core.ko.xz=/lib/modules/6.1/kernel/net/ib_core.ko.xz"
	"$W/extra.ko=/opt/extra.ko")
boot b "${GOOD[@]}" "${MODS[@]}" "$W/unknown.ko=/etc/not-a-module.conf" "$(keyev b)" || notok "boot b"
round b
expect "node b: mmt.ko and three reference modules; an unknown file that is not a module" 0 verify b
# a module with one byte changed was loaded
boot b "$BOOTAGG" "$KVER" /bin/sh=/bin/sh "$W/mmt-tampered.ko=/lib/modules/extra/mmt.ko" "$(keyev b)" || notok "boot b"
round b
expect "module with one byte changed refused" 20 verify b
# an unknown module under another name beside the reference mmt.ko
boot b --ima-sig "${GOOD[@]}" "${MODS[@]}" "$W/unknown.ko=/lib/modules/6.1/kernel/foo.ko" "$(keyev b)" || notok "boot b"
round b
expect "an unknown module foo.ko beside the reference mmt.ko refused (ima-sig)" 20 verify b
if grep -q "module /lib/modules/6.1/kernel/foo.ko was measured with a hash that is not a reference value" "$W/err"; then
	ok "the refusal names foo.ko"
else
	notok "the refusal does not name foo.ko"
fi
# the reference module, then a tampered one under any name (the kernel
# names it from its modinfo, not from its file)
for n in /lib/modules/extra/mmt.ko /tmp/foo.ko /root/rxe_helper.ko.zst /a.ko.gz; do
	boot b "${GOOD[@]}" "$W/mmt-tampered.ko=$n" "$(keyev b)" || notok "boot b"
	round b
	expect "the reference mmt.ko, then a tampered one as $n, refused" 20 verify b
done
# no mmt.ko at all, only reference modules
boot b "$BOOTAGG" "$KVER" /bin/sh=/bin/sh "${MODS[@]}" "$(keyev b)" || notok "boot b"
round b
expect "no mmt.ko measured refused" 16 verify b
# the reference mmt.ko's hash under another name still counts as it
boot b "$BOOTAGG" "$KVER" /bin/sh=/bin/sh "$W/mmt.ko=/tmp/other-name.ko" "$(keyev b)" || notok "boot b"
round b
expect "node b: the reference mmt.ko loaded as other-name.ko" 0 verify b
# tampered log: the TPM measured the tampered module, the log sent shows
# the reference one, consistently rewritten (template digests recomputed)
boot b "$BOOTAGG" "$KVER" /bin/sh=/bin/sh "$W/mmt-tampered.ko=/lib/modules/extra/mmt.ko" "$(keyev b)" || notok "boot b"
python3 "$HERE/imalog.py" "$W/b.ima" "${GOOD[@]}" "$(keyev b)" >/dev/null
round b
expect "rewritten IMA log (does not replay to the quoted PCR 10) refused" 15 verify b
# an entry's data changed without its template digest
boot b "${GOOD[@]}" "$(keyev b)" || notok "boot b"
round b
v=$(field "$W/b.ev" ima_log)
setfield "$W/b.ev" "$W/b.ev.bad" ima_log "$(flipbyte "$v" $((${#v} / 2 - 3)))"
expect "one byte of an IMA log entry changed refused" 15 verify b "$W/b.ev.bad"
if grep -q "template digest does not match its data" "$W/err"; then
	ok "that entry is caught by its SHA-1 template digest, before the quote"
else
	notok "the changed entry was not caught by its template digest"
fi
round b
v=$(field "$W/b.ev" ima_log)
setfield "$W/b.ev" "$W/b.ev.bad" ima_log "${v:0:$((${#v} - 10))}"
expect "truncated IMA log refused" 3 verify b "$W/b.ev.bad"

# ---- 5. node ids ----
round b --want-id 1
expect "node b claiming node a's id 1 refused" 17 verify b
round b
expect "node b attests" 0 verify b
"$AUTH" show-cred --state "$W/auth" --in "$W/b.cred" >"$W/out" 2>&1
if grep -qx "node_id 2" "$W/out"; then
	ok "node b gets id 2, not node a's"
else
	notok "node b's credential: $(tr '\n' ' ' <"$W/out")"
fi
boot a --ima-sig "${GOOD[@]}" violation /bin/true=/bin/true "$(keyev a)" || notok "boot a"
# an EK that is not persistent: the agent creates it from template L-1,
# which must reproduce the certified key (else activation fails)
TPM2TOOLS_TCTI=$(tcti b) tpm2_evictcontrol -C o -c 0x81010001 >/dev/null 2>&1 ||
	notok "evict node b's persistent EK"
round b
expect "node b attests with its EK created from the TCG template" 0 verify b
boot a --ima-sig "${GOOD[@]}" violation /bin/true=/bin/true "$(keyev a)" || notok "boot a"
round a
expect "node a attests again (template ima-sig, Debian's default, and a violation)" 0 verify a
"$AUTH" show-cred --state "$W/auth" --in "$W/a.cred" >"$W/out" 2>&1
if grep -qx "node_id 1" "$W/out" && grep -qx "serial 6" "$W/out"; then
	ok "node a keeps id 1 (one id per TPM), new serial 6"
else
	notok "node a's second credential: $(tr '\n' ' ' <"$W/out")"
fi
round a --want-id 7
expect "node a asking for another id than its own refused" 17 verify a
if [ "$(awk '{ print $1 }' "$W/auth/nodes" | sort | uniq -d)" = "" ] &&
	[ "$(wc -l <"$W/auth/nodes")" -eq 2 ]; then
	ok "node list: two TPMs, two distinct ids"
else
	notok "node list: $(tr '\n' ' ' <"$W/auth/nodes")"
fi

# ---- 6. endorsement and AK ----
boot c "${GOOD[@]}" "$(keyev c)" || notok "boot c"
hello c >/dev/null 2>&1
expect "EK certificate from another CA refused" 10 challenge c
# node a's hello with TPM c's EK certificate: chain fails the same way
setfield "$W/a.hello" "$W/c.hello" ek_cert "$(field "$W/c.hello" ek_cert)"
cp "$W/a.hello" "$W/a.hello.good"
v=$(field "$W/a.hello" ek_cert)
setfield "$W/a.hello.good" "$W/a.hello" ek_cert "$(flipbyte "$v" $((${#v} / 2 - 40)))"
expect "EK certificate with its signature changed refused" 10 challenge a
# AK without the restricted attribute (TPMA_OBJECT bit 16; TPM2B_PUBLIC:
# size, type, nameAlg, then objectAttributes big-endian at byte 6)
v=$(field "$W/a.hello.good" ak_public)
setfield "$W/a.hello.good" "$W/a.hello" ak_public "${v:0:15}$(printf '%x' $((0x${v:15:1} ^ 1)))${v:16}"
expect "AK that is not restricted refused" 11 challenge a

# a TPM's challenge answered by another TPM: ActivateCredential fails
# (last: a failed activation may count towards the dictionary-attack
# lockout of the TPM that tried)
hello a >/dev/null 2>&1 && challenge a >/dev/null 2>&1
cp "$W/a.chal" "$W/c.chal"
expect "challenge for TPM a cannot be activated by TPM c" 12 quote c

# ---- 7. credentials ----
v=$(xxd -p -c 100000 "$W/a.cred")
echo "$(flipbyte "$v" 12)" | xxd -r -p >"$W/a.cred.bad"
expect "credential with its node id changed refused" 19 \
	"$AUTH" show-cred --state "$W/auth" --in "$W/a.cred.bad"
echo "$(flipbyte "$v" $((${#v} / 2 - 5)))" | xxd -r -p >"$W/a.cred.bad"
expect "credential with its signature changed refused" 19 \
	"$AUTH" show-cred --state "$W/auth" --in "$W/a.cred.bad"
head -c 136 "$W/a.cred" >"$W/body" && tail -c +137 "$W/a.cred" >"$W/sig"
if openssl cms -verify -binary -inform DER -in "$W/sig" -content "$W/body" \
	-certfile "$W/auth/authority.pem" -nointern -noverify \
	-out /dev/null 2>"$W/err"; then
	ok "credential signature verifies with openssl cms (PKCS#7, the kernel's module-signature form)"
else
	notok "openssl cms -verify of the credential"
fi

# ---- 8. the node key the module measured ----
# The log must hold one "mmt-node-key" event (the module's, at load),
# after the last reference mmt.ko measurement, of the evidence's node key;
# its second entry must be "kernel_version" (critical data measured from
# IMA's start); else exit 21, after the quote, 20 and 16
nodekey b2
# expect_log NAME RC [QUOTE ARGS] -- ENTRY...: boot TPM b with the log
# ENTRY..., attest node b, and expect verify to exit RC
expect_log() {
	local name=$1 want=$2 qargs=()
	shift 2
	while [ "$1" != -- ]; do
		qargs+=("$1")
		shift
	done
	shift
	boot b "$@" || notok "boot b"
	round b "${qargs[@]}" && expect "$name" "$want" verify b
}
expect_log "the node key event of the evidence's key (ima-buf): issued" 0 -- \
	"${GOOD[@]}" "$(keyev b)"
expect_log "the node key event recorded as ima-ng (a policy's template=, no buffer) refused" 21 -- \
	"${GOOD[@]}" "ima-ng@$(keyev b)"
grep -q 'entries of that name in another template do not count' "$W/err" &&
	ok "that refusal says the ima-ng entry does not count" ||
	notok "that refusal does not name the template"
expect_log "the node key event recorded as ima-sig refused" 21 -- \
	--ima-sig "${GOOD[@]}" "ima-sig@$(keyev b)"
# any user can have a file measured under the bare name mmt-node-key (IMA
# logs the base name when the path does not resolve): not a second event
expect_log "a file measured under the name mmt-node-key beside the event: issued" 0 -- \
	"${GOOD[@]}" "$(keyev b)" "$W/b.key=mmt-node-key"
expect_log "a file measured under the name mmt-node-key, no event, refused" 21 -- \
	"${GOOD[@]}" "$W/b.key=mmt-node-key"
expect_log "a key made in user space (not the one measured) refused" 21 \
	--node-key "$W/x.key" -- "${GOOD[@]}" "$(keyev b)"
grep -q 'is not of the evidence.s node key' "$W/err" &&
	ok "that refusal says the event is not of the evidence's key" ||
	notok "that refusal does not name the key rule"
expect_log "no node key event refused" 21 -- "${GOOD[@]}"
grep -q 'no "mmt-node-key" event' "$W/err" &&
	ok "that refusal says there is none" || notok "that refusal does not say there is none"
expect_log "two node key events (a reload: the evidence has the second) refused" 21 \
	--node-key "$W/b2.key" -- "${GOOD[@]}" "$(keyev b)" "$(keyev b2)"
expect_log "a forged node key event appended by root refused" 21 \
	--node-key "$W/x.key" -- "${GOOD[@]}" "$(keyev b)" /bin/sh=/bin/sh "$(keyev x)"
grep -q '2 "mmt-node-key" events' "$W/err" &&
	ok "that refusal counts two events" || notok "that refusal does not count the events"
expect_log "the node key event before the mmt.ko measurement refused" 21 -- \
	"$BOOTAGG" "$KVER" /bin/sh=/bin/sh "$(keyev b)" "$W/mmt.ko=/lib/modules/extra/mmt.ko"
grep -q 'comes before the first reference mmt.ko measurement' "$W/err" &&
	ok "that refusal names the order" || notok "that refusal does not name the order"
# any user can read (and so have measured) a copy of the reference mmt.ko
expect_log "a reference mmt.ko read after the node key event: issued" 0 -- \
	"${GOOD[@]}" "$(keyev b)" "$W/mmt.ko=/home/u/mmt.ko"
expect_log "the node key event measured with sha512 refused" 21 -- \
	"${GOOD[@]}" "sha512@$(keyev b)"
grep -q 'is not measured with sha256' "$W/err" &&
	ok "that refusal names the algorithm" || notok "that refusal does not name the algorithm"
expect_log "no kernel_version entry refused" 21 -- \
	"$BOOTAGG" /bin/sh=/bin/sh "$W/mmt.ko=/lib/modules/extra/mmt.ko" "$(keyev b)"
expect_log "kernel_version as the third entry, not the second, refused" 21 -- \
	"$BOOTAGG" /bin/sh=/bin/sh "$KVER" "$W/mmt.ko=/lib/modules/extra/mmt.ko" "$(keyev b)"
grep -q 'the second entry is not the "kernel_version"' "$W/err" &&
	ok "that refusal names kernel_version" || notok "that refusal does not name kernel_version"
# kexec keeps PCR 10: a genuine boot's log (boot_aggregate, kernel_version),
# then that of a kernel root kexec'd with a policy that measures no
# critical data, mmt.ko loaded there and a key event root appended
expect_log "a kexec'd kernel's log after a genuine boot's (a second boot_aggregate) refused" 21 \
	--node-key "$W/x.key" -- "$BOOTAGG" "$KVER" /bin/sh=/bin/sh \
	"$BOOTAGG" /bin/sh=/bin/sh "$W/mmt.ko=/lib/modules/extra/mmt.ko" "$(keyev x)"
grep -q 'a second "boot_aggregate" entry (entry 4)' "$W/err" &&
	ok "that refusal names the second boot_aggregate" ||
	notok "that refusal does not name the second boot_aggregate"
expect_log "no node key event and a tampered module: 20 first" 20 -- \
	"${GOOD[@]}" "$W/mmt-tampered.ko=/tmp/foo.ko"

# Digest algorithms: reference values are SHA-256; a module entry with
# another algorithm cannot be appraised and refuses the node
expect_log "a tampered module measured with sha512 refused" 20 -- \
	"${GOOD[@]}" "sha512@$W/mmt-tampered.ko=/lib/modules/extra/mmt.ko" "$(keyev b)"
grep -q 'mmt.ko was measured with sha512, not sha256' "$W/err" &&
	ok "that refusal names the file and sha512" ||
	notok "that refusal does not name the file and sha512"
expect_log "the reference mmt.ko measured with sha512 refused (not appraisable)" 20 -- \
	"$BOOTAGG" "$KVER" /bin/sh=/bin/sh "sha512@$W/mmt.ko=/lib/modules/extra/mmt.ko" "$(keyev b)"
expect_log "a reference module measured with sha1 beside the reference mmt.ko refused" 20 -- \
	"${GOOD[@]}" "sha1@$W/extra.ko=/opt/extra.ko" "$(keyev b)"
expect_log "a program measured with sha512 (not appraised): issued" 0 -- \
	"${GOOD[@]}" "sha512@/bin/true=/bin/true" "$(keyev b)"

# Template ima-modsig (`measure func=MODULE_CHECK template=ima-modsig`):
# a module load whatever its file name
expect_log "module loads recorded as ima-modsig, reference values under any name: issued" 0 -- \
	"$BOOTAGG" "$KVER" /bin/sh=/bin/sh "ima-modsig@$W/mmt.ko=/tmp/mmt.bin" \
	"ima-modsig@$W/extra.ko=/opt/extra" "$(keyev b)"
expect_log "a tampered module under a non-module name, template ima-modsig, refused" 20 -- \
	"${GOOD[@]}" "ima-modsig@$W/mmt-tampered.ko=/tmp/x.bin" "$(keyev b)"
grep -q 'module /tmp/x.bin was measured with a hash that is not a reference value' "$W/err" &&
	ok "that refusal names /tmp/x.bin" || notok "that refusal does not name /tmp/x.bin"

# The node key event's version and form: version 2 (56 bytes) only
expect_log "a version 1 node key event (48 bytes, an older module) refused" 21 -- \
	"${GOOD[@]}" "nodekeyv1:$W/b.key=mmt-node-key"
grep -q 'is of version 1 (48 bytes, no boot state): the module is too old' "$W/err" &&
	ok "that refusal says the module is too old" || notok "that refusal does not say the module is too old"
expect_log "a version 2 event whose reserved bytes are not zero refused" 21 -- \
	"${GOOD[@]}" "$(keyev b 2 1 000000000001)"
grep -q 'has a non-zero reserved byte (offset 55' "$W/err" &&
	ok "that refusal names the reserved byte" || notok "that refusal does not name the reserved byte"
expect_log "a version 2 event with lockdown level 3 refused" 21 -- \
	"${GOOD[@]}" "$(keyev b 3 1)"
grep -q 'has lockdown level 3, not 0..2' "$W/err" &&
	ok "that refusal names the lockdown level" || notok "that refusal does not name the lockdown level"
expect_log "a version 2 event with an unknown boot flag refused" 21 -- \
	"${GOOD[@]}" "$(keyev b 2 3)"
grep -q 'has unknown boot flags 0x03' "$W/err" &&
	ok "that refusal names the flags" || notok "that refusal does not name the flags"
expect_log "an old event beside a version 2 one (two events) refused" 21 -- \
	"${GOOD[@]}" "$(keyev b)" "nodekeyv1:$W/b2.key=mmt-node-key"
grep -q '2 "mmt-node-key" events' "$W/err" &&
	ok "that refusal counts both versions" || notok "that refusal does not count both versions"

# The boot (exit 24, after 21): the lockdown level and module signature
# enforcement the module measured with its key; the default policy
# (strict) requires confidentiality and enforced
expect "policy: strict by default" 0 "$AUTH" policy --state "$W/auth"
check "it prints boot strict, no boot aggregates" "$(tr '\n' ' ' <"$W/out")" = "boot strict boot_aggregates 0 "
expect_log "strict: lockdown confidentiality, module signatures enforced: issued" 0 -- \
	"${GOOD[@]}" "$(keyev b)"
idb=$(credf b node_id)
grep -q "node id $idb issued (.*; kernel 6.1.0-57-amd64, boot_aggregate sha256:$(printf '%064x' 42), lockdown confidentiality, module signatures enforced)" "$W/err" &&
	ok "the issue line names the kernel, the boot_aggregate and the boot state" ||
	notok "the issue line does not name the kernel, the boot_aggregate and the boot state"
check "the record holds them" \
	"$(recf "$idb" kernel_version) $(recf "$idb" boot_aggregate) $(recf "$idb" boot)" = \
	"6.1.0-57-amd64 sha256:$(printf '%064x' 42) lockdown confidentiality, module signatures enforced"
check "no boot aggregates listed: says the boot_aggregate is not appraised, once" \
	"$(grep -c "^node id $idb: boot_aggregate not appraised: no accepted boot aggregates" "$W/err") $(grep -c 'not hardened' "$W/err")" = "1 0"
# node b holds a valid credential: a refusal 24 revokes it (as 20 and 22)
expect_log "strict: lockdown none, module signatures not enforced, refused" 24 -- \
	"${GOOD[@]}" "$(keyev b 0 0)"
grep -q "lockdown none, module signatures not enforced when the module loaded; the boot policy (strict) requires lockdown confidentiality and module signatures enforced" "$W/err" &&
	ok "that refusal names the boot state and the policy" || notok "that refusal does not name the boot state and the policy"
grep -q "node id $idb revoked (its credential, serial" "$W/err" &&
	ok "that refusal revokes node b (it held a valid credential)" || notok "that refusal does not revoke node b"
expect_log "strict: lockdown integrity, module signatures enforced, refused" 24 -- \
	"${GOOD[@]}" "$(keyev b 1 1)"
expect_log "strict: lockdown confidentiality, module signatures not enforced, refused" 24 -- \
	"${GOOD[@]}" "$(keyev b 2 0)"
grep -q "lockdown confidentiality, module signatures not enforced when the module loaded" "$W/err" &&
	ok "that refusal names the signature rule" || notok "that refusal does not name the signature rule"
expect_log "a key made in user space with an unhardened boot's event: 21, before 24" 21 \
	--node-key "$W/x.key" -- "${GOOD[@]}" "$(keyev b 0 0)"
expect "policy --boot relaxed (a test cluster)" 0 "$AUTH" policy --state "$W/auth" --boot relaxed
check "it prints boot relaxed" "$(head -1 "$W/out")" = "boot relaxed"
expect_log "relaxed: lockdown none, module signatures not enforced: issued" 0 -- \
	"${GOOD[@]}" "$(keyev b 0 0)"
grep -q "^node id $idb: boot not hardened: lockdown none, module signatures not enforced: root on the node can read the node key (boot policy relaxed); boot_aggregate not appraised" "$W/err" &&
	ok "the authority says the boot is not hardened" || notok "the authority does not say the boot is not hardened"
check "the record says lockdown none" "$(recf "$idb" boot)" = "lockdown none, module signatures not enforced"
expect_log "relaxed: lockdown integrity: issued" 0 -- \
	"${GOOD[@]}" "$(keyev b 1 1)"
expect "policy --boot strict again" 0 "$AUTH" policy --state "$W/auth" --boot strict
expect_log "strict again: lockdown none refused" 24 -- \
	"${GOOD[@]}" "$(keyev b 0 0)"
expect "policy --boot lax refused" 1 "$AUTH" policy --state "$W/auth" --boot lax
expect "--boot with another subcommand refused" 1 "$AUTH" nodes --state "$W/auth" --boot strict
printf 'mmt-authority policy 1\nboot lax\n' >"$W/auth/policy"
expect_log "a policy file that does not parse: no credential" 2 -- \
	"${GOOD[@]}" "$(keyev b)"
"$AUTH" policy --state "$W/auth" --boot strict >/dev/null 2>&1

# The boot aggregates: once listed, the log's boot_aggregate must be one
expect "reference --add-boot with a value that is not 64 hex digits refused" 1 \
	"$AUTH" reference --state "$W/auth" --add-boot 42
expect "--add-boot with another subcommand refused" 1 \
	"$AUTH" policy --state "$W/auth" --add-boot "$(printf '%064x' 43)"
expect "reference --add-boot (another machine's boot)" 0 \
	"$AUTH" reference --state "$W/auth" --add-boot "$(printf '%064x' 43)" --name other-firmware
expect_log "a boot_aggregate that is not in the list refused" 24 -- \
	"${GOOD[@]}" "$(keyev b)"
grep -q "boot_aggregate sha256:$(printf '%064x' 42) is not one of the 1 accepted boot aggregates" "$W/err" &&
	ok "that refusal names the boot_aggregate" || notok "that refusal does not name the boot_aggregate"
expect_log "a boot_aggregate measured with sha1 refused" 24 -- \
	"sha1@$(printf '%040x' 42)=boot_aggregate" "$KVER" /bin/sh=/bin/sh \
	"$W/mmt.ko=/lib/modules/extra/mmt.ko" "$(keyev b)"
expect "reference --add-boot sha256:HEX (as the issue line prints it)" 0 \
	"$AUTH" reference --state "$W/auth" --add-boot "sha256:$(printf '%064x' 42)"
check "the list holds both, kind boot" "$(grep -c ' boot ' "$W/auth/reference")" -eq 2
expect_log "a boot_aggregate in the list: issued" 0 -- \
	"${GOOD[@]}" "$(keyev b)"
check "nothing said of the boot: hardened, the boot_aggregate appraised" \
	"$(grep -c "^node id $idb: " "$W/err")" -eq 0

# The installed mmt-attest sends the module's node key, never a file's
round b
expect "the installed mmt-attest quote refuses --node-key" 1 \
	"$ATT" quote --tcti "$(tcti b)" --in "$W/b.chal" --node-key "$W/b.key" \
	--ima-log "$W/b.ima" --out "$W/b.ev.inst"
if [ -e /dev/mmt ]; then
	echo "# skip: the installed quote without a module (/dev/mmt exists here)"
else
	expect "the installed mmt-attest quote without the module fails (/dev/mmt)" 2 \
		"$ATT" quote --tcti "$(tcti b)" --in "$W/b.chal" \
		--ima-log "$W/b.ima" --out "$W/b.ev.inst"
fi

# ---- 9. bad messages ----
echo "mmt-attest hello 1" >"$W/x.msg"
echo "ak_public zz" >>"$W/x.msg"
expect "hello with a field that is not hex refused" 3 \
	"$AUTH" challenge --state "$W/auth" --in "$W/x.msg" --out "$W/x.out"
printf 'mmt-attest evidence 1\nbogus 00\n' >"$W/x.msg"
expect "evidence with an unknown field refused" 3 \
	"$AUTH" verify --state "$W/auth" --in "$W/x.msg" --out "$W/x.out"
# ---- 10. continuous attestation: renewals, revocation, serve, renew ----
# A renewal (evidence with the node key of the node's last credential)
# must show a log that only grew: its first entries are exactly those the
# last credential was issued on (else 22).  A refusal 20 or 22 while the
# node holds a valid credential revokes it: every later evidence is
# refused (23) until reinstate.  The record (STATE/records/ID) is written
# by each mmt-authority process and read by the next: a restart.

# grow NAME ENTRY...: the node measures more (no reboot: the same load)
grow() {
	local name=$1 h
	shift
	for h in $(python3 "$HERE/imalog.py" "$W/$name.more" "$@"); do
		TPM2TOOLS_TCTI=$(tcti "$name") tpm2_pcrextend "10:sha256=$h" || return 1
	done
	cat "$W/$name.more" >>"$W/$name.ima"
}
# nodeline ID: node ID's line of mmt-authority nodes
nodeline() {
	"$AUTH" nodes --state "$W/auth" 2>/dev/null | awk -v n="$1" '$1 == n'
}
boot a "${GOOD[@]}" "$(keyev a)" || notok "boot a"
boot b "${GOOD[@]}" "$(keyev b)" || notok "boot b"
keep_revoked=1
round a
expect "node a: a fresh attestation (new node key: a new module load)" 0 verify a
grep -q "a fresh attestation" "$W/err" && ok "verify says it is a fresh attestation" ||
	notok "verify does not say it is a fresh attestation"
ida=$(credf a node_id)
s1=$(credf a serial)
check "the credential is valid 600 s by default (not_after - not_before = 600 + 300 s of clock skew)" \
	"$(( $(credf a not_after) - $(credf a not_before) ))" -eq 900
check "node a's record: serial $s1, its node key, 5 IMA entries" \
	"$(recf "$ida" serial) $(recf "$ida" node_key) $(recf "$ida" ima_entries)" = \
	"$s1 $(xxd -p -c 64 "$W/a.key") 5"
check "node a's record: not_after of the credential, not revoked" \
	"$(recf "$ida" not_after) $(recf "$ida" revoked)" = "$(credf a not_after) 0"

# the same load measured more: a renewal, accepted
grow a /bin/true=/bin/true /bin/ls=/bin/ls
round a
expect "node a: a renewal whose log grew by two entries" 0 verify a
grep -q "a renewal: the log only grew" "$W/err" && ok "verify says it is a renewal" ||
	notok "verify does not say it is a renewal"
s2=$(credf a serial)
check "the renewal keeps id $ida, serial $s2 above $s1" \
	"$(credf a node_id)" -eq "$ida" -a "$s2" -gt "$s1"
check "the record follows: serial $s2, 7 IMA entries" \
	"$(recf "$ida" serial) $(recf "$ida" ima_entries)" = "$s2 7"
check "nodes lists node a with serial $s2, not revoked" \
	"$(nodeline "$ida" | awk '{ print $5, $NF }')" = "$s2 ok"
round a
expect "node a: a renewal with the same log (nothing new measured)" 0 verify a

# the same node key, a log that does not extend the last one: 22, revoked
BOOT_KEEP_KEY=1 boot a "${GOOD[@]}" "$(keyev a)" || notok "boot a"
round a
expect "node a: the same node key, fewer entries than its last credential's, refused" 22 verify a
grep -q "fewer than the 7 its last credential was issued on: the log was rewritten" "$W/err" &&
	ok "that refusal says the log was rewritten" || notok "that refusal does not say the log was rewritten"
grep -q "node id $ida revoked" "$W/err" && ok "that refusal revokes node a (a valid credential)" ||
	notok "that refusal does not revoke node a"
expect "reinstate node a" 0 "$AUTH" reinstate --state "$W/auth" --node "$ida"
check "nodes: node a reinstated" "$(nodeline "$ida" | awk '{ print $NF }')" = ok
BOOT_KEEP_KEY=1 boot a "$BOOTAGG" "$KVER" /bin/true=/bin/sh \
	"$W/mmt.ko=/lib/modules/extra/mmt.ko" "$(keyev a)" /bin/true=/bin/true \
	/bin/ls=/bin/ls /bin/sh=/bin/sh || notok "boot a"
round a
expect "node a: the same node key, an earlier entry rewritten (a longer log), refused" 22 verify a
grep -q "whose first 7 entries are not those its last credential was issued on" "$W/err" &&
	ok "that refusal names the 7 entries" || notok "that refusal does not name the entries"
check "nodes: node a revoked for exit 22" \
	"$(nodeline "$ida" | grep -c 'revoked: exit 22: IMA log: a renewal')" -eq 1
check "its record says so" "$(recf "$ida" revoked)" = 1

# a renewal that shows a module with no reference value: 20, revoked;
# then every evidence, a clean boot's too, 23 until reinstate
round b
expect "node b: a fresh attestation" 0 verify b
idb=$(credf b node_id)
grow b "$W/unknown.ko=/lib/modules/6.1/kernel/foo.ko"
round b
expect "node b: a renewal showing an unreferenced module refused" 20 verify b
check "nodes: node b revoked for exit 20, naming foo.ko" \
	"$(nodeline "$idb" | grep -c 'revoked: exit 20: .*foo.ko')" -eq 1
boot b "${GOOD[@]}" "$(keyev b)" || notok "boot b"
round b
expect "node b revoked: a clean boot's evidence refused" 23 verify b
grep -q "node id $idb is revoked (exit 20" "$W/err" && ok "that refusal says node b is revoked and why" ||
	notok "that refusal does not say node b is revoked"
expect "reinstate node b" 0 "$AUTH" reinstate --state "$W/auth" --node "$idb"
round b
expect "node b reinstated: the clean boot's evidence issued" 0 verify b
check "node b keeps id $idb" "$(credf b node_id)" -eq "$idb"

# revocation by hand, then a renewal (same load, same log) refused
expect "revoke node b by hand" 0 "$AUTH" revoke --state "$W/auth" --node "$idb" --reason "taken out of service"
round b
expect "node b revoked by hand: its renewal refused" 23 verify b
grep -q "is revoked (taken out of service)" "$W/err" && ok "that refusal gives the reason" ||
	notok "that refusal does not give the reason"
check "nodes: node b revoked, the reason" \
	"$(nodeline "$idb" | grep -c 'revoked: taken out of service$')" -eq 1
expect "reinstate node b" 0 "$AUTH" reinstate --state "$W/auth" --node "$idb"
round b
expect "node b: its renewal issued again" 0 verify b

# node a's record, written by an earlier process, still holds its
# revocation in a new one: the record survives restarts
boot a "${GOOD[@]}" "$(keyev a)" || notok "boot a"
round a
expect "node a (revoked by an earlier process): a new boot's evidence refused" 23 verify a

# ---- serve: the exchange on stdin and stdout, over a pipe ----
# recv_msg FD OUT: one framed message (up to its empty line) into OUT
recv_msg() {
	local line
	: >"$2"
	while IFS= read -r -t 60 line <&"$1"; do
		[ -z "$line" ] && return 0
		printf '%s\n' "$line" >>"$2"
	done
	return 1
}
"$AUTH" reinstate --state "$W/auth" --node "$ida" 2>/dev/null
hello a >/dev/null 2>&1
# serve_start: mmt-authority serve as a coprocess, its stdin on fd $sin,
# its stdout on $sout (copies: bash closes the coprocess's own at its end)
serve_start() {
	coproc SRV { "$AUTH" serve --state "$W/auth" 2>"$W/serve.err"; }
	exec {sin}>&"${SRV[1]}" {sout}<&"${SRV[0]}"
	spid=$SRV_PID
}
# serve_end: its exit code in $rc, the copies closed
serve_end() {
	exec {sin}>&-
	wait "$spid"
	rc=$?
	exec {sout}<&-
}
serve_start
{ cat "$W/a.hello"; echo; } >&"$sin"
recv_msg "$sout" "$W/a.chal" && ok "serve: a challenge for node a's hello" ||
	notok "serve: no challenge"
quote a 2>"$W/err" || notok "serve: quote"
{ cat "$W/a.ev"; echo; } >&"$sin"
recv_msg "$sout" "$W/a.credmsg" || notok "serve: no credential"
serve_end
field "$W/a.credmsg" credential | xxd -r -p >"$W/a.cred"
check "serve: exit 0, a credential message" \
	"$rc $(head -1 "$W/a.credmsg")" = "0 mmt-attest credential 1"
check "serve: the credential is node a's (id $ida), 600 s" \
	"$(credf a node_id) $(( $(credf a not_after) - $(credf a not_before) ))" = "$ida 900"
grep -q "node id $ida issued" "$W/serve.err" && ok "serve logs the issue on stderr" ||
	notok "serve does not log the issue"
# a refusal: TPM c's EK certificate is from another CA
boot c "${GOOD[@]}" "$(keyev c)" || notok "boot c"
hello c >/dev/null 2>&1
serve_start
{ cat "$W/c.hello"; echo; } >&"$sin"
recv_msg "$sout" "$W/c.refusal" || notok "serve: no refusal"
serve_end
check "serve: TPM c refused with exit 10, a refusal message carrying code 10" \
	"$rc $(head -1 "$W/c.refusal") $(field "$W/c.refusal" code)" = "10 mmt-attest refused 1 0a000000"
check "the refusal's reason is the error line" \
	"$(field "$W/c.refusal" reason | xxd -r -p)" = "$(tail -1 "$W/serve.err")"
printf 'mmt-attest hello 1\nbogus 00\n\n' >"$W/x.msg"
expect "serve: a malformed hello refused" 3 "$AUTH" serve --state "$W/auth" <"$W/x.msg"
check "with a refusal message" "$(head -1 "$W/out") $(field "$W/out" code)" = "mmt-attest refused 1 03000000"
expect "serve: a stream that ends before the hello" 2 "$AUTH" serve --state "$W/auth" </dev/null
check "says the stream ended" "$(grep -c 'the peer closed the stream' "$W/err")" -eq 1

# ---- mmt-attest renew --connect: the node's side against serve ----
renew() {
	local n=$1
	shift
	"$ATT_TEST" renew --tcti "$(tcti "$n")" --node-key "$W/$n.key" \
		--ima-log "$W/$n.ima" --out "$W/$n.cred" "$@"
}
SERVE="$AUTH serve --state $W/auth"
s1=$(credf a serial)
grow a /bin/true=/bin/true
t1=$(date +%s.%N)
expect "renew --connect: once against serve" 0 renew a --connect "$SERVE 2>$W/serve.err"
echo "# renewal of node a over serve: $(echo "$(date +%s.%N) - $t1" | bc) s, one exchange"
check "renew: node a's credential, id $ida, a higher serial" \
	"$(credf a node_id)" -eq "$ida" -a "$(credf a serial)" -gt "$s1"
grep -q "renew: node id $ida serial $(credf a serial) installed" "$W/err" &&
	ok "renew logs the node id and serial" || notok "renew does not log the node id and serial"
grep -q "a renewal: the log only grew" "$W/serve.err" && ok "the authority took it as a renewal" ||
	notok "the authority did not take it as a renewal"
"$AUTH" revoke --state "$W/auth" --node "$ida" --reason "renew test" 2>/dev/null
expect "renew: a revoked node's exit code is the authority's refusal (23)" 23 renew a --connect "$SERVE 2>/dev/null"
grep -q "refused by the authority, exit 23: node id $ida is revoked (renew test)" "$W/err" &&
	ok "renew prints the refusal's reason" || notok "renew does not print the refusal's reason"
"$AUTH" reinstate --state "$W/auth" --node "$ida" 2>/dev/null
# the daemon: renews at min(--every, a third of the remaining validity)
"$ATT_TEST" renew --tcti "$(tcti a)" --node-key "$W/a.key" --ima-log "$W/a.ima" \
	--out "$W/a.cred" --connect "$SERVE --validity 3 2>/dev/null" --every 30 \
	2>"$W/daemon.err" &
dpid=$!
sleep 4
kill -TERM "$dpid"
wait "$dpid"
rc=$?
n=$(grep -c "renew: node id $ida serial [0-9]* installed, valid until [0-9]*; next renewal in 1 s" "$W/daemon.err")
check "renew --every 30 with 3 s credentials: renewed every second ($n times in 4 s), exit 0 on SIGTERM" \
	"$rc" -eq 0 -a "$n" -ge 2
# the daemon keeps trying after refusals
"$AUTH" revoke --state "$W/auth" --node "$ida" 2>/dev/null
"$ATT_TEST" renew --tcti "$(tcti a)" --node-key "$W/a.key" --ima-log "$W/a.ima" \
	--out "$W/a.cred" --connect "$SERVE 2>/dev/null" --every 1 2>"$W/daemon.err" &
dpid=$!
sleep 3
kill -TERM "$dpid"
wait "$dpid"
rc=$?
n=$(grep -c "renew: failed (exit 23); node id $ida serial [0-9]* stays installed; next try in 1 s" "$W/daemon.err")
check "renew --every 1 against a refusing authority: keeps trying ($n tries), exit 0 on SIGTERM" \
	"$rc" -eq 0 -a "$n" -ge 2
"$AUTH" reinstate --state "$W/auth" --node "$ida" 2>/dev/null

# ---- bad inputs to the new subcommands ----
expect "revoke without --node refused" 1 "$AUTH" revoke --state "$W/auth"
grep -q -- "--node ID is required" "$W/err" && ok "it says --node is required" || notok "no message for a missing --node"
expect "revoke --node 0 refused" 1 "$AUTH" revoke --state "$W/auth" --node 0
expect "revoke --node abc refused" 1 "$AUTH" revoke --state "$W/auth" --node abc
expect "revoke of a node id no TPM holds refused" 1 "$AUTH" revoke --state "$W/auth" --node 999
grep -q "node id 999 is not in" "$W/err" && ok "it says node 999 is unknown" || notok "no message for an unknown node"
expect "reinstate --reason refused" 1 "$AUTH" reinstate --state "$W/auth" --node "$ida" --reason x
expect "--node with another subcommand refused" 1 "$AUTH" nodes --state "$W/auth" --node 1
expect "serve --in refused" 1 "$AUTH" serve --state "$W/auth" --in "$W/a.hello"
expect "renew without --connect refused" 1 "$ATT_TEST" renew --node-key "$W/a.key" --out "$W/x.cred"
expect "renew --every 0 refused" 1 "$ATT_TEST" renew --connect true --every 0
expect "renew --node-key without --out refused (test build)" 1 "$ATT_TEST" renew --connect true --node-key "$W/a.key"
expect "the installed renew refuses --out" 1 "$ATT" renew --connect true --out "$W/x.cred"
expect "the installed renew refuses --node-key" 1 "$ATT" renew --connect true --node-key "$W/a.key"
expect "--connect with another subcommand refused" 1 "$ATT" info --connect true
expect "renew: a --connect command that fails" 2 renew a --connect "exit 7"
grep -q "exited with status 7" "$W/err" && ok "it names the command's exit status" ||
	notok "no message for the command's exit status"
expect "renew: a --connect peer that answers garbage" 3 renew a --connect "cat >/dev/null & printf 'junk\n\n'"
finish
