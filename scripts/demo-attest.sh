#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make demo-attest` (after scripts/deps.sh): nodes attest to a global
# authority before they get a node id, and keep renewing it
# (docs/ATTESTATION.md),
# with three QEMU (TCG) guests booting Debian's kernel on one link, each
# with a TPM 2.0 (swtpm on this host, its EK certificate from swtpm's
# local CA playing the manufacturer) and IMA (ima_policy=tcb|critical_data):
#
#   guest 1  the authority, mmt-authority; its own TPM is from another
#            manufacturer: refused (exit 10)
#   guest 2  a node: loads mmt.ko (IMA measures it; the module measures
#            its node key), attests with mmt-attest (TPM quote of PCR 10
#            and the IMA log), installs its credential: node id from the
#            authority; replays its evidence and its old quote: refused
#            (exit 12, 14); quotes over a node key made in user space:
#            refused (exit 21)
#   guest 3  a node, as guest 2, with another node id; node 2 connects
#            to it (the attested hello: both credentials and key shares
#            on the connection), they agree two PMO keys
#            (MMT_IOC_CONN_KEY_AGREE; different: a closure under one into
#            a PMO under the other is refused, EBADMSG) and node 2
#            delegates under each, byte-exact; then continuous
#            attestation with credentials of 45 s: guest 3 renews as a
#            daemon (mmt-attest renew --every 10), guest 2 renews once,
#            holds an attested connection to guest 3, and loads a module
#            the authority has no reference value for: its next renewal
#            is refused (exit 20) and the authority revokes it (exit 23
#            after), its connection ends when its credential expires
#            (EKEYEXPIRED on both sides) and guest 3 refuses its hello;
#            then guest 3 reloads mmt.ko with one byte changed, from a
#            file named foo.ko: refused (exit 20)
#
# It is the guest run `attest` of tests/guest/tests, narrated: the
# guests' "attest-demo:" lines, the authority's decisions, the times
# (attestation, the attested connection's set-up, the key agreements).
# Outputs: build/demo-attest/run.log, build/guest/attest/g<i>.log.
# Exit status: 0 if every check of the run passed; 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=$ROOT/build/demo-attest
G=$ROOT/build/guest/attest
FAIL=0

say() {
	echo "demo-attest: $*"
}

mkdir -p "$OUT"
say "three guests: an authority and two nodes with TPMs and IMA (QEMU TCG)"
. scripts/lib.sh
mmt_kernel || { say "FAILED: no kernel headers"; exit 1; }
make -s module >"$OUT/make.log" 2>&1 ||
	{ tail -n 20 "$OUT/make.log"; say "FAILED: make module"; exit 1; }
t=$(date +%s)
tests/guest/tests attest >"$OUT/run.log" 2>&1 || FAIL=1
say "run: $(($(date +%s) - t)) s of host time (boot, TPMs, attestation, key agreement, delegation, renewals, a revocation)"

for i in 1 2 3; do
	case $i in
	1) echo; echo "== guest 1: the authority (mmt-authority) ==" ;;
	*) echo; echo "== guest $i: a node (mmt.ko, mmt-attest) ==" ;;
	esac
	[ -f "$G/g$i.log" ] || { echo "(no log)"; FAIL=1; continue; }
	grep -a -E '^(attest-demo: |authority: |# attestation of node |tampered module: |replayed evidence: |old quote under |quote over a user-space |renewal: exit |renewal refused: |renew: |# connection lived |10 [0-9a-f]* ima-buf [^ ]* mmt-node-key )' \
		"$G/g$i.log" | sed 's/^attest-demo: guest [0-9]*: /  /; s/^\([^ ]\)/    \1/'
done

echo
echo "== summary =="
grep -a -E '^(ok|not ok) - attest: ' "$OUT/run.log" |
	grep -E 'refused|attests and installs|differs|key agreements|byte-exact|EBADMSG|without a credential|node key measured|renewal|revoked|expires|EKEYEXPIRED|daemon' |
	sed 's/^ok - attest: /  yes: /; s/^not ok - attest: /  NO:  /'
grep -a -E '^# (attestation of node|attest: node 2 to node 3)' "$OUT/run.log" |
	sed 's/^# attest: /  /; s/^# /  /' || true
grep -a -E '^guest tests: ' "$OUT/run.log" | sed 's/^/  /'
if [ $FAIL -eq 0 ]; then
	say "OK (logs: build/guest/attest/g1.log .. g3.log)"
else
	grep -a '^not ok' "$OUT/run.log" || true
	say "FAILED (see $OUT/run.log)"
fi
exit $FAIL
