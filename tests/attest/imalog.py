#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""imalog.py - write a synthetic IMA measurement list

For the native attestation tests on a host without IMA.  Written from the
kernel's format (security/integrity/ima: ima_fs.c ima_measurements_show,
ima_template.c builtin_templates, ima_template_lib.c
ima_eventdigest_ng_init / ima_eventname_ng_init / ima_eventsig_init /
ima_eventbuf_init / ima_eventdigest_modsig_init / ima_eventmodsig_init,
ima_main.c process_buffer_measurement, ima_crypto.c
ima_calc_field_array_hash), independently of the C verifier in
tools/attest/mmta_ima.c, so that one does not check itself.

  imalog.py [--ima-sig] OUT ENTRY...

ENTRY is [OPTS@]WHAT=NAME, logged under the name NAME (the n-ng field),
or "violation".  WHAT is
  FILE          a file measured: the digest of its contents
  HEX           that digest (as many hex digits as the algorithm's size)
  buf:TEXT      critical data: the buffer TEXT (e.g. the kernel release of
                the "kernel_version" event IMA measures at its start)
  nodekey:FILE  the event mmt.ko measures at load, version 2: the
                56-byte buffer "mmt node key v2\\0" || the 32-byte X25519
                key in FILE || u8 lockdown level || u8 boot flags || 6
                zero bytes; here a hardened boot: lockdown 2
                (confidentiality), flags 1 (module signatures enforced)
  nodekey/L/F:FILE       the same with lockdown level L and flags F
  nodekey/L/F/HEX:FILE   ... and the 6 bytes HEX in place of the zeros
  nodekeyv1:FILE         the version 1 event of older modules: 48 bytes,
                "mmt node key v1\\0" || the key
OPTS, comma-separated, are a digest algorithm (sha256, the default;
sha1, sha384, sha512) and a template: ima-ng, ima-sig, ima-buf or
ima-modsig.  A file's template is ima-ng, or ima-sig with --ima-sig
(Debian's default: a third field, the file signature, empty here); a
buffer's is ima-buf (d-ng, n-ng, buf: what a policy rule naming no
template gives critical data), and a rule's template= may name another.
ima-modsig's fields are d-ng, n-ng, sig, d-modsig, modsig; the last three
are empty here (a module without an appended signature, or a kernel
without CONFIG_IMA_APPRAISE_MODSIG, as Debian's).  The first entry of a
real log is boot_aggregate; pass it as HEX=boot_aggregate.  Prints, one a
line, the 32-byte values the SHA-256 bank of PCR 10 is extended with, in
order.
"""
import hashlib
import struct
import sys

ALGOS = ("sha1", "sha256", "sha384", "sha512")
TEMPLATES = {  # template: number of fields after d-ng and n-ng
    "ima-ng": 0, "ima-sig": 1, "ima-buf": 1, "ima-modsig": 3}
NODE_KEY_PREFIX = b"mmt node key v2\0"
NODE_KEY_V1_PREFIX = b"mmt node key v1\0"


def field(b):
    return struct.pack("<I", len(b)) + b


def entry(template, algo, digest, name, buf):
    # d-ng: "<algo>:\0" || digest; n-ng: the name and its NUL
    data = field(algo.encode() + b":\0" + digest) + field(name.encode() + b"\0")
    if template == "ima-buf":
        data += field(buf or b"")
    else:
        data += field(b"") * TEMPLATES[template]
    return data


def parse(spec, default_template):
    algo, template = "sha256", None
    head, sep, rest = spec.partition("@")
    opts = head.split(",") if sep else []
    if sep and all(o in ALGOS or o in TEMPLATES for o in opts):
        for o in opts:
            if o in ALGOS:
                algo = o
            else:
                template = o
        spec = rest
    what, name = spec.split("=", 1)
    buf = None
    if what.startswith("buf:"):
        buf = what[4:].encode()
    elif what.startswith("nodekey"):
        kind, path = what.split(":", 1)
        with open(path, "rb") as f:
            key = f.read()
        assert len(key) == 32, "an X25519 public key is 32 bytes"
        if kind == "nodekeyv1":
            buf = NODE_KEY_V1_PREFIX + key
        else:
            # nodekey[/LOCKDOWN/FLAGS[/TAILHEX]]
            params = kind.split("/")[1:]
            assert kind.split("/")[0] == "nodekey" and len(params) in (0, 2, 3)
            lockdown, flags = (int(p, 0) for p in params[:2]) if params else (2, 1)
            tail = bytes.fromhex(params[2]) if len(params) == 3 else bytes(6)
            assert len(tail) == 6, "the reserved tail is 6 bytes"
            buf = NODE_KEY_PREFIX + key + bytes([lockdown, flags]) + tail
        assert len(buf) in (48, 56)
    size = hashlib.new(algo).digest_size
    if buf is not None:
        digest = hashlib.new(algo, buf).digest()
        template = template or "ima-buf"
    elif len(what) == 2 * size and all(c in "0123456789abcdef" for c in what):
        digest = bytes.fromhex(what)
    else:
        with open(what, "rb") as f:
            digest = hashlib.new(algo, f.read()).digest()
    return entry(template or default_template, algo, digest, name, buf), \
        template or default_template


def main():
    args = sys.argv[1:]
    default = "ima-ng"
    if args[0] == "--ima-sig":
        default = "ima-sig"
        args = args[1:]
    out, specs = args[0], args[1:]
    log = b""
    for spec in specs:
        if spec == "violation":
            template = default
            data = entry(template, "sha256", b"\0" * 32, "violation", None)
            sha1 = b"\0" * 20
            ext = b"\xff" * 32
        else:
            data, template = parse(spec, default)
            sha1 = hashlib.sha1(data).digest()
            ext = hashlib.sha256(data).digest()
        log += struct.pack("<I", 10) + sha1
        log += field(template.encode())
        log += field(data)
        print(ext.hex())
    with open(out, "wb") as f:
        f.write(log)


main()
