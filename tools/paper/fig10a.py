#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Paper Fig. 10a: throughput against message size.

Native part: AES-128-GCM (OpenSSL EVP encrypt alone, and the whole secure
channel), a memory copy (the stand-in natively for a raw RDMA write: no
NIC here) and MMT delegation (the driver's lazy in-place path), 4 KiB to
64 MiB, measured by mmt-engine-bench --section channel.

Guest part (not in the smoke run; FIG10A_GUEST=0 leaves it out): the
plain channel (raw RDMA writes), the AES-128-GCM secure channel and MMT
delegation through the module between two QEMU TCG guests over
Soft-RoCE, and perftest's ib_write_bw at one closure per write, from
tools/mmt-bench in the guest run `tests/guest/tests bench-sizes` (every
transfer verified by SHA-256).  Emulated: read its ratios to the plain
channel, not its MB/s.  Each channel runs BENCH_ROUNDS times (3), the
channel order rotated each round after a warm-up round; per size and
channel the round with the median time is shown.  FIG10A_FROM=DIR reads
an earlier run's JSONs (DIR/bench-sizes/g1.results/bench.sizes.*.json;
make check's bench-smoke does, and then the smoke run has the guest part
too).

The document's "series" is a list; each series says where it was
measured ("native" or "guest")."""
import os
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
# name in the document -> mmt-bench's channel (the guest part)
GUEST = (
    ("plain channel (rxe)", "plain"),
    ("secure channel (rxe)", "secure"),
    ("mmt delegation (rxe)", "mmt"),
)
IBWB = "ib_write_bw (rxe)"


def guest_series(args):
    """The guest part's series and its command, from bench-sizes: per size
    and channel the round with the median time (paperlib.bench_merge())."""
    files = paperlib.bench_files("bench-sizes", "sizes")
    extra = "bench-sizes/g1.results/bench.sizes.extra.json"
    cmd, docs = paperlib.guest_run(args, ITEM, "bench-sizes", files + [extra])
    doc = paperlib.bench_merge(docs, "bench-sizes", "sizes")
    series = []
    for name, chan in GUEST:
        rs = sorted((r for r in doc.get("results", [])
                     if r.get("channel") == chan), key=lambda r: r["size"])
        if any(r["status"] != "ok" or r["verified"] is not True for r in rs):
            raise paperlib.Problem("%s: a transfer failed or differs" % chan)
        series.append({
            "name": name, "where": "guest", "transport": "soft-roce",
            "sizes": [r["size"] for r in rs],
            "us": [r["ns_mean"] / 1e3 for r in rs],
            "MBps": [r["size"] / (r["ns_mean"] / 1e3) for r in rs],
            "moved_bytes": [r["moved_bytes"] for r in rs],
            "rounds": doc["rounds"],
        })
    ib = docs[extra].get("ib_write_bw")
    if not ib:
        raise paperlib.Problem("bench-sizes: no ib_write_bw result")
    series.append({"name": IBWB, "where": "guest", "transport": "soft-roce",
                   "sizes": [ib["msg_bytes"]], "MBps": [ib["mb_per_s"]],
                   "iters": ib["iters"]})
    return cmd, series


def measure(args):
    text = SMOKE_SIZES if args.smoke else SIZES
    sizes = paperlib.parse_sizes(text)
    cmd, rows = paperlib.run_bench(args, "channel", ["--sizes", text])
    by = paperlib.channel_by_size(rows, sizes)
    series = []
    cmds = [cmd]
    for name, part, transport in NATIVE:
        series.append({
            "name": name, "where": "native", "transport": transport,
            "sizes": sizes,
            "us": [by[s][part] for s in sizes],
            "MBps": [s / by[s][part] for s in sizes],   # bytes/us = MB/s
        })
    # the guest part: not in the smoke run, unless it reads a run's JSONs
    # (make check's bench-smoke: FIG10A_FROM)
    if (not args.smoke or os.environ.get("FIG10A_FROM")) and \
            os.environ.get("FIG10A_GUEST", "1") != "0":
        gcmd, gseries = guest_series(args)
        cmds.append(gcmd)
        series += gseries
    return {
        "guest_part": any(s["where"] == "guest" for s in series),
        "commands": cmds,
        "paper": PAPER,
        "notes": [
            "native: user-space build of lib/ (OpenSSL), one core",
            "no RDMA NIC natively: a memory copy stands in for the raw "
            "RDMA write, and delegation's transport is a memory copy",
            "MMT delegation moves whole 2 MiB closures: below 2 MiB its "
            "throughput counts the message's bytes, not the closure's",
            "guest series: two QEMU TCG guests over Soft-RoCE on an "
            "emulated e1000 link, the module's channels and perftest's "
            "ib_write_bw (one closure per write): compare their ratios to "
            "the plain channel, not their MB/s",
            "guest times: the sender's kernel time per transfer (offer to "
            "the last ack), mean of the iterations; per size and channel "
            "the round with the median mean, of BENCH_ROUNDS rounds (one "
            "mmt-bench per channel, the channel order rotated each round, "
            "after a warm-up round)"
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
    guest = {s["name"]: s for s in series if s["where"] == "guest"}
    if doc.get("guest_part") and not guest:
        problems.append("guest_part, but no guest series")
    if guest:
        for name, _ in GUEST:
            if name not in guest:
                problems.append("no guest series %r" % name)
        if IBWB not in guest:
            problems.append("no guest series %r" % IBWB)
        if not problems:
            gs = [guest[n]["sizes"] for n, _ in GUEST]
            if any(x != gs[0] for x in gs):
                problems.append("the guest channels' sizes differ")
            for n, _ in GUEST:
                s = guest[n]
                if any(m < z for m, z in zip(s.get("moved_bytes", []),
                                            s["sizes"])):
                    problems.append("series %r moved less than the message"
                                    % n)
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
    guest = {s["name"]: s for s in doc["series"] if s["where"] == "guest"}
    if not guest:
        return
    plain = guest[GUEST[0][0]]
    print("%10s %10s %10s %10s %12s %12s" % (
        "size", "plain", "secure", "mmt", "secure/plain", "mmt/plain"))
    for i, n in enumerate(plain["sizes"]):
        p, s, m = (guest[name]["MBps"][i] for name, _ in GUEST)
        print("%10s %10.1f %10.1f %10.1f %11.2fx %11.2fx" % (
            paperlib.size_label(n), p, s, m, s / p, m / p))
    ib = guest[IBWB]
    print("(MB/s, guests over Soft-RoCE, TCG) ib_write_bw at %s: %.1f MB/s"
          % (paperlib.size_label(ib["sizes"][0]), ib["MBps"][0]))


def plot(doc, png):
    plt = paperlib.pyplot()
    guest = {s["name"]: s for s in doc["series"] if s["where"] == "guest"}
    if guest:
        fig, (ax, gx) = plt.subplots(1, 2, figsize=(13, 5))
    else:
        fig, ax = plt.subplots(figsize=(8, 5))
    for s in doc["series"]:
        if s["where"] != "native":
            continue
        ax.plot(s["sizes"], [v / 1000 for v in s["MBps"]], "o-",
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
    if guest:
        plain = guest[GUEST[0][0]]
        for name, _ in GUEST:
            s = guest[name]
            gx.plot(s["sizes"], [v / p for v, p in zip(s["MBps"],
                                                       plain["MBps"])],
                    "s--", label=name)
        ib = guest[IBWB]
        n = ib["sizes"][0]
        if n in plain["sizes"]:
            gx.plot([n], [ib["MBps"][0] /
                          plain["MBps"][plain["sizes"].index(n)]], "k^",
                    label=IBWB + ", one closure per write")
        gx.axhline(doc["paper"]["mmt_over_raw_rdma"], color="grey", ls=":",
                   label="paper: MMT / raw RDMA, 0.88")
        gx.set_xscale("log", base=2)
        gx.set_xticks(plain["sizes"],
                      [paperlib.size_label(n) for n in plain["sizes"]],
                      rotation=45, fontsize=8)
        gx.set_xlabel("message size")
        gx.set_ylabel("throughput / the plain channel's")
        gx.set_title("guests (QEMU TCG, Soft-RoCE): ratios only", fontsize=10)
        gx.legend(fontsize=8)
    paperlib.save_figure(plt, fig, doc, None, png)


if __name__ == "__main__":
    sys.exit(paperlib.main(sys.modules[__name__]))
