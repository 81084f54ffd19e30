#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Paper Table IV, natively: the secure channel's time in its parts
(AES-128-GCM encrypt and decrypt with OpenSSL EVP, the copies out of and
into secure memory, the remote write as a memory copy) against MMT
delegation (the lazy in-place path of the driver), 4 KiB to 64 MiB.
Measured by mmt-engine-bench --section channel (tools/mmt-engine-bench.c);
docs/PAPER.md puts it beside the paper's."""
import math
import sys

import paperlib

ITEM = "table4"
TITLE = "Table IV: secure channel breakdown against MMT delegation (native)"
SIZES = "4K,16K,64K,256K,1M,2M,4M,16M,64M"
SMOKE_SIZES = "4K,2M"

PAPER = {
    "source": "Feng et al., HPCA 2023, Table IV and section VI "
              "(../shared/docs/ANCHORS.md)",
    "share_2MiB_gem5": {"encrypt": "~45%", "decrypt": "~45%",
                        "memcpy": "~5%", "remote_write": "0.5-4%"},
    "speedup_2MiB_gem5_cpu_only": 169,
    "speedup_aes_ni_rdma": 13,
    "secure_wins_below_bytes": 8192,
}


def measure(args):
    text = SMOKE_SIZES if args.smoke else SIZES
    sizes = paperlib.parse_sizes(text)
    cmd, rows = paperlib.run_bench(args, "channel", ["--sizes", text])
    by = paperlib.channel_by_size(rows, sizes)
    out = []
    for s in sizes:
        p = by[s]
        parts = {
            "encrypt_us": p["secure encrypt"],
            "copy_out_us": p["secure copy out"],
            "remote_write_us": p["secure remote write"],
            "copy_in_us": p["secure copy in"],
            "decrypt_us": p["secure decrypt"],
        }
        memcpy = parts["copy_out_us"] + parts["copy_in_us"]
        psum = sum(parts.values())
        out.append(dict({
            "size": s,
            "memcpy_us": memcpy,
            "parts_sum_us": psum,
            "share": {
                "encrypt": parts["encrypt_us"] / psum,
                "decrypt": parts["decrypt_us"] / psum,
                "memcpy": memcpy / psum,
                "remote_write": parts["remote_write_us"] / psum,
            },
            "secure_us": p["secure channel"],
            "delegation_us": p["mmt lazy (in place)"],
            "delegation_bytes_moved": int(p["mmt bytes moved"]),
            "plain_us": p["plain memcpy"],
            "speedup": p["secure channel"] / p["mmt lazy (in place)"],
        }, **parts))
    return {
        "commands": [cmd],
        "paper": PAPER,
        "notes": [
            "user-space build of lib/ (OpenSSL), one core; best of --runs",
            "remote write = a memory copy: no RDMA NIC natively",
            "secure_us is the whole path timed at once; the parts are "
            "timed alone (parts_sum_us), so the two differ by cache effects",
            "delegation moves whole 2 MiB closures: below 2 MiB it still "
            "moves one (delegation_bytes_moved)",
        ],
        "rows": out,
    }


def check(doc, problems):
    rows = paperlib.rows_of(doc, problems)
    if rows is None:
        return
    want = paperlib.parse_sizes(SMOKE_SIZES if doc["smoke"] else SIZES)
    got = [r.get("size") for r in rows]
    if got != want:
        problems.append("sizes %s, not %s" % (got, want))
    keys = ["size", "encrypt_us", "decrypt_us", "copy_out_us", "copy_in_us",
            "remote_write_us", "memcpy_us", "parts_sum_us", "share",
            "secure_us", "delegation_us", "delegation_bytes_moved",
            "plain_us", "speedup"]
    per_closure = set()
    for r in rows:
        where = "size %s" % r.get("size")
        if not paperlib.need(r, keys, where, problems):
            continue
        for k in keys:
            if k not in ("size", "share") and not paperlib.finite_pos(r[k]):
                problems.append("%s: %s = %r" % (where, k, r[k]))
        if problems:
            return
        if abs(sum(r["share"].values()) - 1) > 1e-6:
            problems.append("%s: shares sum to %f" % (where,
                                                       sum(r["share"].values())))
        if abs(r["memcpy_us"] - r["copy_out_us"] - r["copy_in_us"]) > 1e-6 * r["memcpy_us"]:
            problems.append("%s: memcpy is not copy out + copy in" % where)
        # the parts are a breakdown of the whole path: same order of time
        # (looser for the smoke run's 3 runs on a shared machine)
        ratio = r["parts_sum_us"] / r["secure_us"]
        bound = 5 if doc["smoke"] else 3
        if not 1 / bound <= ratio <= bound:
            problems.append("%s: parts sum to %.2fx the secure channel"
                            % (where, ratio))
        if abs(r["speedup"] - r["secure_us"] / r["delegation_us"]) > 1e-6 * r["speedup"]:
            problems.append("%s: speedup is not secure / delegation" % where)
        # delegation moves whole closures: at least the data, and the
        # same bytes per closure at every size
        closures = math.ceil(r["size"] / (2 << 20))
        if r["delegation_bytes_moved"] < r["size"]:
            problems.append("%s: delegation moved %d bytes" %
                            (where, r["delegation_bytes_moved"]))
        per_closure.add(r["delegation_bytes_moved"] / closures)
    if len(per_closure) > 1:
        problems.append("delegation bytes per closure differ: %s" % per_closure)


def summary(doc):
    print("%10s %10s %10s %10s %10s %10s %10s %12s %8s" % (
        "size", "encrypt", "decrypt", "memcpy", "remote wr", "secure",
        "parts", "delegation", "speedup"))
    for r in doc["rows"]:
        print("%10s %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f %12.1f %7.2fx" % (
            paperlib.size_label(r["size"]), r["encrypt_us"], r["decrypt_us"],
            r["memcpy_us"], r["remote_write_us"], r["secure_us"],
            r["parts_sum_us"], r["delegation_us"], r["speedup"]))
    print("(microseconds; speedup = secure channel / delegation)")


def plot(doc, png):
    plt = paperlib.pyplot()
    rows = doc["rows"]
    labels = [paperlib.size_label(r["size"]) for r in rows]
    x = range(len(rows))
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4.5))
    bottom = [0.0] * len(rows)
    for key, name in (("encrypt", "encrypt (AES-128-GCM)"),
                      ("decrypt", "decrypt"), ("memcpy", "memcpy"),
                      ("remote_write", "remote write (memory copy)")):
        h = [100 * r["share"][key] for r in rows]
        a1.bar(x, h, bottom=bottom, label=name)
        bottom = [b + v for b, v in zip(bottom, h)]
    a1.set_xticks(list(x), labels, rotation=45)
    a1.set_ylabel("share of the secure channel (%)")
    a1.set_title("secure channel breakdown")
    a1.legend(fontsize=8)
    a2.plot(list(x), [r["secure_us"] for r in rows], "o-",
            label="secure channel")
    a2.plot(list(x), [r["delegation_us"] for r in rows], "s-",
            label="MMT delegation")
    a2.plot(list(x), [r["plain_us"] for r in rows], "^--",
            label="plain memcpy")
    a2.set_yscale("log")
    a2.set_xticks(list(x), labels, rotation=45)
    a2.set_ylabel("time per message (us)")
    a2.set_title("against delegation")
    a2.legend(fontsize=8)
    paperlib.save_figure(plt, fig, doc, TITLE, png)


if __name__ == "__main__":
    sys.exit(paperlib.main(sys.modules[__name__]))
