#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# attest-vectors.sh - write tests/kunit/mmt_attest_vectors.h, the
# credentials the KUnit suite mmt_attest verifies (docs/ATTESTATION.md)
#
# Made with the openssl command (req, cms -sign) and Python, not with
# mmt-authority, so the kernel's verification is checked against an
# independent signer: two RSA 3072 authorities A and B, and credential
# bodies (136 bytes) signed as sign-file signs modules: detached CMS,
# no signed attributes, no certificates, issuer and serial.  The keys
# are fresh on every run; the header is checked in (run this script again
# only to change the vectors).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=${1:-$HERE/../kunit/mmt_attest_vectors.h}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

for a in A B; do
	openssl req -x509 -newkey rsa:3072 -nodes -keyout "$W/$a.key" \
		-out "$W/$a.pem" -days 36500 -subj "/CN=mmt-authority-$a" \
		-addext "basicConstraints=critical,CA:FALSE" \
		-addext "keyUsage=critical,digitalSignature" \
		-addext "subjectKeyIdentifier=hash" 2>/dev/null
	openssl x509 -in "$W/$a.pem" -outform DER -out "$W/$a.der"
done

# body NAME NODE SERIAL NOT_BEFORE NOT_AFTER VERSION [KEY]: a credential
# body; node key KEY (hex) or 0x01..0x20, module hash 0xa5..., EK hash
# 0x5a...
body() {
	python3 - "$W/$1.body" "$2" "$3" "$4" "$5" "$6" "${7:-}" <<-'PY'
		import struct, sys
		out, node, serial, nb, na, ver = sys.argv[1], *map(int, sys.argv[2:7])
		key = bytes.fromhex(sys.argv[7]) if sys.argv[7] else bytes(range(1, 33))
		assert len(key) == 32
		b = b"MMTCRED1" + struct.pack("<HHIQQQ", ver, 0, node, serial, nb, na)
		b += key + b"\xa5" * 32 + b"\x5a" * 32
		assert len(b) == 136
		open(out, "wb").write(b)
	PY
}

# sign NAME AUTHORITY: NAME.cred = body || DER CMS
sign() {
	openssl cms -sign -binary -noattr -nocerts -nosmimecap -md sha256 \
		-outform DER -signer "$W/$2.pem" -inkey "$W/$2.key" \
		-in "$W/$1.body" -out "$W/$1.sig"
	cat "$W/$1.body" "$W/$1.sig" >"$W/$1.cred"
}

body good 7 5 1000 2000 1 && sign good A
body newer 8 6 1000 2000 1 && sign newer A
body older 9 3 1000 2000 1 && sign older A
body other 7 5 1000 2000 1 && sign other B
body badver 7 5 1000 2000 2 && sign badver A
body node0 0 5 1000 2000 1 && sign node0 A
# The connection handshake's nodes (suite mmt_hs): the public keys of
# RFC 7748 section 6.1, Alice's and Bob's, whose private keys are in the
# RFC; "alice" node 3 serial 10, "bob" node 4 serial 11, "bob3" Bob's key
# under Alice's node id 3 with a lower serial (9), "bob3new" the same with
# a higher one (12: the authority gave node 3 to a new load), "bobB" Bob
# signed by authority B, "bobnew" Bob's renewal (node 4, his key, serial
# 13, valid until 3000: suite mmt_hs, a renewal on a live connection)
ALICE=8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a
BOB=de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f
body alice 3 10 1000 2000 1 $ALICE && sign alice A
body bob 4 11 1000 2000 1 $BOB && sign bob A
body bob3 3 9 1000 2000 1 $BOB && sign bob3 A
body bob3new 3 12 1000 2000 1 $BOB && sign bob3new A
body bobB 4 11 1000 2000 1 $BOB && sign bobB B
body bobnew 4 13 1000 3000 1 $BOB && sign bobnew A

{
	echo "/* SPDX-License-Identifier: GPL-2.0 */"
	echo "/* Written by tests/vectors/attest-vectors.sh; do not edit. */"
	for v in A.der B.der good.cred newer.cred older.cred other.cred \
		badver.cred node0.cred alice.cred bob.cred bob3.cred \
		bob3new.cred bobB.cred bobnew.cred; do
		name=mmt_attest_vec_${v%%.*}
		[ "${v#*.}" = der ] && name=mmt_attest_vec_authority_${v%%.*}
		echo
		echo "static const u8 $name[] = {"
		xxd -i <"$W/$v" | sed 's/^ */\t/'
		echo "};"
	done
} >"$OUT"
echo "wrote $OUT"
