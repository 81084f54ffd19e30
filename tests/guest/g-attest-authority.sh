# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# g-attest-authority.sh - guest 1 of the run `attest` (tests/guest/tests,
# make demo-attest): the global authority.  Its state directory (made on
# the host: mmt-authority init with the trusted manufacturer's EK CA,
# reference --add of the mmt.ko the nodes load) arrives as
# /opt/mmt/authority-state.tar.  This guest's own TPM has an EK
# certificate from another CA: its attestation must be refused (exit 10).
# Then it serves the nodes (attestlib.sh, attest_serve_one) until both
# have reported, and checks its node list: two TPMs, two distinct ids,
# both revoked in the end.  A second service, mmt-authority serve,
# issues the nodes' renewals (credentials of 45 s).

. "$MMTG_DIR/attestlib.sh"

mkdir -p "$ATTEST_STATE"
mmtg_t "authority: state from the host (EK CA, reference values)" \
	tar -xf /opt/mmt/authority-state.tar -C "$ATTEST_STATE"
attest_say "authority: trusts the EK CA of the nodes' manufacturer," \
	"the reference mmt.ko $(awk '$2 == "mmt" { print substr($1, 1, 16) }' "$ATTEST_STATE/reference")..." \
	"and $(grep -c ' module ' "$ATTEST_STATE/reference") other modules of the nodes' kernel"

# a TPM from another manufacturer (this guest's): refused at the challenge
ek_other() {
	mmtg_run 60 mmt-attest hello --tcti "$ATTEST_TCTI" --out /tmp/own.hello ||
		return 1
	mmtg_run 60 mmt-authority challenge --state "$ATTEST_STATE" \
		--in /tmp/own.hello --out /tmp/own.chal
	_rc=$?
	echo "authority: a hello with an EK certificate of another CA: exit $_rc"
	[ $_rc -eq 10 ]
}
mmtg_t "authority: a TPM whose EK certificate is from another CA is refused (exit 10)" ek_other

# serve: one process per connection (-ll)
nc -ll -p "$ATTEST_PORT" -e sh -c '. /opt/mmt/guestlib.sh && . /opt/mmt/attestlib.sh && attest_serve_one' &
server=$!
attest_say "authority: serving on port $ATTEST_PORT"
# a copy of the state under the strict boot policy (the default: lockdown
# confidentiality, module signatures enforced), served on port 7005: the
# guests' boot (QEMU -kernel, no lockdown, unsigned modules) is refused
cp -a "$ATTEST_STATE" /tmp/authority-strict
mmtg_t "authority: a copy of its state under the strict boot policy" \
	mmt-authority policy --state /tmp/authority-strict --boot strict
nc -ll -p 7005 -e mmt-authority serve --state /tmp/authority-strict &
strict=$!
# and the stream service (mmt-authority serve: the whole exchange on one
# connection) with credentials of 45 s, for the nodes' renewals
nc -ll -p "$ATTEST_SERVE_PORT" -e mmt-authority serve --state "$ATTEST_STATE" \
	--validity 45 &
serve=$!
attest_say "authority: renewals on port $ATTEST_SERVE_PORT (mmt-authority serve, credentials of 45 s)"

# both nodes report when they are done (node 2 on 7002, node 3 on 7003)
for n in 2 3; do
	msg=$(mmtg_recv $((7000 + n)) $((MMTG_TIMEOUT - 40)))
	mmtg_check "authority: node $n reports done ($msg)" "$msg" = "done $n"
done
kill "$server" "$serve" "$strict" 2>/dev/null

mmt-authority nodes --state "$ATTEST_STATE" >/tmp/nodes
cat /tmp/nodes
mmtg_check "authority: two TPMs in the node list" "$(wc -l </tmp/nodes)" -eq 2
mmtg_check "authority: their node ids are distinct" \
	"$(cut -d' ' -f1 /tmp/nodes | sort -u | wc -l)" -eq 2
# node 2 loaded a module with no reference value after it attested: its
# renewal was refused and it is revoked; node 3 too (its tampered module)
mmtg_check "authority: both nodes revoked in the end (node 2: a module loaded after attesting; node 3: the tampered mmt.ko)" \
	"$(grep -c ' revoked' /tmp/nodes)" -eq 2
mmtg_done
