#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""imalog.py - write a synthetic IMA measurement list (ima-ng or ima-sig)

For the native attestation tests on a host without IMA.  Written from the
kernel's format (security/integrity/ima: ima_fs.c ima_measurements_show,
ima_template_lib.c ima_eventdigest_ng_init / ima_eventname_ng_init,
ima_crypto.c ima_calc_field_array_hash), independently of the C verifier
in tools/attest/mmta_ima.c, so that one does not check itself.

  imalog.py [--ima-sig] OUT ENTRY...

ENTRY is FILE=NAME (the SHA-256 of FILE, logged under the name NAME),
HEX=NAME (that SHA-256 digest), or "violation".  --ima-sig writes the
template ima-sig (Debian's default: a third field, the file signature,
empty here) instead of ima-ng.  The first entry of a real
log is boot_aggregate; pass it as HEX=boot_aggregate.  Prints, one a line,
the 32-byte values the SHA-256 bank of PCR 10 is extended with, in order.
"""
import hashlib
import struct
import sys


def entry(digest, name, sig):
    d = b"sha256:\0" + digest
    n = name.encode() + b"\0"
    data = struct.pack("<I", len(d)) + d + struct.pack("<I", len(n)) + n
    if sig:
        data += struct.pack("<I", 0)
    return data


def main():
    args = sys.argv[1:]
    sig = args[0] == "--ima-sig"
    if sig:
        args = args[1:]
    template = b"ima-sig" if sig else b"ima-ng"
    out, specs = args[0], args[1:]
    log = b""
    for spec in specs:
        if spec == "violation":
            data = entry(b"\0" * 32, "violation", sig)
            sha1 = b"\0" * 20
            ext = b"\xff" * 32
        else:
            what, name = spec.split("=", 1)
            if len(what) == 64 and all(c in "0123456789abcdef" for c in what):
                digest = bytes.fromhex(what)
            else:
                with open(what, "rb") as f:
                    digest = hashlib.sha256(f.read()).digest()
            data = entry(digest, name, sig)
            sha1 = hashlib.sha1(data).digest()
            ext = hashlib.sha256(data).digest()
        log += struct.pack("<I", 10) + sha1
        log += struct.pack("<I", len(template)) + template
        log += struct.pack("<I", len(data)) + data
        print(ext.hex())
    with open(out, "wb") as f:
        f.write(log)


main()
