#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Paper Fig. 10a, native part: throughput against message size of
AES-128-GCM (OpenSSL EVP encrypt alone, and the whole secure channel), a
memory copy (the stand-in natively for a raw RDMA write: no NIC here) and
MMT delegation (the driver's lazy in-place path), 4 KiB to 64 MiB.
Measured by mmt-engine-bench --section channel.

The document's "series" is a list; each series says where it was
measured ("native" here).  The guest part (the plain channel over
Soft-RoCE and ib_write_bw, from mmt-bench in QEMU guests) is to be added
as more series with "where": "guest"; check() already accepts them."""
import sys

import paperlib

ITEM = "fig10a"
TITLE = "Fig. 10a: throughput against message size (native part)"
SIZES = ",".join("%dK" % (4 << i) for i in range(15))   # 4 KiB .. 64 MiB
SMOKE_SIZES = "4K,64K,2M"

PAPER = {
    "source": "Feng et al., HPCA 2023, Fig. 10a (../shared/docs/ANCHORS.md)",
    "aes_128_gcm_aes_ni_e5_2650_GBps": 2.2,
    "raw_rdma_100Gbps_GBps": 11.0,
    "mmt_delegation_100Gbps_GBps": 9.68,
    "mmt_over_raw_rdma": 0.88,
    "secure_wins_below_bytes": 8192,
}

# name in the document -> row of mmt-engine-bench's channel section
NATIVE = (
    ("aes-128-gcm encrypt", "secure encrypt", "memcpy"),
    ("secure channel", "secure channel", "memcpy"),
    ("memory copy (raw RDMA stand-in)", "plain memcpy", "memcpy"),
    ("mmt delegation", "mmt lazy (in place)", "memcpy"),
)
WHERE = ("native", "guest")


def measure(args):
    text = SMOKE_SIZES if args.smoke else SIZES
    sizes = paperlib.parse_sizes(text)
    cmd, rows = paperlib.run_bench(args, "channel", ["--sizes", text])
    by = paperlib.channel_by_size(rows, sizes)
    series = []
    for name, part, transport in NATIVE:
        series.append({
            "name": name, "where": "native", "transport": transport,
            "sizes": sizes,
            "us": [by[s][part] for s in sizes],
            "MBps": [s / by[s][part] for s in sizes],   # bytes/us = MB/s
        })
    return {
        "commands": [cmd],
        "paper": PAPER,
        "notes": [
            "native: user-space build of lib/ (OpenSSL), one core",
            "no RDMA NIC natively: a memory copy stands in for the raw "
            "RDMA write, and delegation's transport is a memory copy",
            "MMT delegation moves whole 2 MiB closures: below 2 MiB its "
            "throughput counts the message's bytes, not the closure's",
            "guest series (plain channel over rxe, ib_write_bw) are not "
            "measured yet",
        ],
        "series": series,
    }


def check(doc, problems):
    series = doc.get("series")
    if not isinstance(series, list) or not series:
        problems.append("no series")
        return
    want = paperlib.parse_sizes(SMOKE_SIZES if doc["smoke"] else SIZES)
    names = []
    for s in series:
        where = "series %r" % s.get("name")
        if not paperlib.need(s, ["name", "where", "transport", "sizes",
                                 "MBps"], where, problems):
            continue
        names.append((s["where"], s["name"]))
        if s["where"] not in WHERE:
            problems.append("%s: where %r" % (where, s["where"]))
        if len(s["sizes"]) != len(s["MBps"]) or not s["sizes"]:
            problems.append("%s: %d sizes, %d values" %
                            (where, len(s["sizes"]), len(s["MBps"])))
            continue
        if sorted(s["sizes"]) != s["sizes"]:
            problems.append("%s: sizes not increasing" % where)
        for v in s["MBps"] + s.get("us", []):
            if not paperlib.finite_pos(v):
                problems.append("%s: value %r" % (where, v))
                break
        if "us" in s and len(s["us"]) == len(s["sizes"]):
            for n, t, v in zip(s["sizes"], s["us"], s["MBps"]):
                if paperlib.finite_pos(t) and abs(n / t - v) > 1e-6 * v:
                    problems.append("%s: %d B: MB/s is not size / time"
                                    % (where, n))
        if s["where"] == "native" and s["sizes"] != want:
            problems.append("%s: sizes %s, not %s" % (where, s["sizes"], want))
    for name, _, _ in NATIVE:
        if ("native", name) not in names:
            problems.append("no native series %r" % name)
    if problems:
        return
    # the secure channel includes the encrypt: it cannot be faster (beyond
    # noise; looser for the smoke run's 3 runs on a shared machine)
    by = {s["name"]: s for s in series if s["where"] == "native"}
    bound = 3 if doc["smoke"] else 1.5
    for n, enc, sec in zip(want, by["aes-128-gcm encrypt"]["MBps"],
                           by["secure channel"]["MBps"]):
        if sec > bound * enc:
            problems.append("%d B: secure channel %.0f MB/s above its "
                            "encrypt alone %.0f MB/s" % (n, sec, enc))


def summary(doc):
    series = [s for s in doc["series"] if s["where"] == "native"]
    print("%10s" % "size" + "".join(" %16s" % s["name"][:16] for s in series))
    for i, n in enumerate(series[0]["sizes"]):
        print("%10s" % paperlib.size_label(n) +
              "".join(" %16.0f" % s["MBps"][i] for s in series))
    print("(MB/s, native)")


def plot(doc, png):
    plt = paperlib.pyplot()
    fig, ax = plt.subplots(figsize=(8, 5))
    for s in doc["series"]:
        style = "o-" if s["where"] == "native" else "s--"
        ax.plot(s["sizes"], [v / 1000 for v in s["MBps"]], style,
                label="%s (%s)" % (s["name"], s["where"]))
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    sizes = doc["series"][0]["sizes"]
    ax.set_xticks(sizes, [paperlib.size_label(n) for n in sizes],
                  rotation=45, fontsize=8)
    ax.set_xlabel("message size")
    ax.set_ylabel("throughput (GB/s)")
    ax.axhline(doc["paper"]["aes_128_gcm_aes_ni_e5_2650_GBps"], color="grey",
               ls=":", label="paper: AES-GCM on E5-2650, 2.2 GB/s")
    ax.legend(fontsize=8)
    ax.set_title(TITLE + (" [smoke]" if doc["smoke"] else ""), fontsize=10)
    fig.tight_layout()
    fig.savefig(png, dpi=100)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(paperlib.main(sys.modules[__name__]))
