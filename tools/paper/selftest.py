#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The checker of the paper's items must reject bad documents: for each
item's JSON in DIR (the smoke run just written by run.sh), first the
document as written must pass, then each planted fault below must be
reported.  One "ok - " / "not ok - " line per case.

Usage: selftest.py DIR [ITEM...]"""
import copy
import importlib
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import paperlib  # noqa: E402


def scale(key, f):
    def plant(d):
        d["rows"][-1][key] *= f
    return plant


def setkey(path, value):
    def plant(d):
        o = d
        for k in path[:-1]:
            o = o[k]
        o[path[-1]] = value
    return plant


def delkey(path):
    def plant(d):
        o = d
        for k in path[:-1]:
            o = o[k]
        del o[path[-1]]
    return plant


def series(name, fn):
    def plant(d):
        for s in d["series"]:
            if s["name"] == name:
                fn(s)
    return plant


COMMON = [
    ("wrong schema", setkey(["schema"], 99)),
    ("no machine", delkey(["machine"])),
]
def run_of(cfg, ch, key, value):
    def plant(d):
        d["configs"][cfg]["runs"][ch][key] = value
    return plant


FAULTS = {
    "fig13": COMMON + [
        ("M2R2 missing", lambda d: d["configs"].pop()),
        ("a channel missing", lambda d: d["configs"][0]["runs"].pop()),
        ("a result not equal to the reference", run_of(0, 2, "match", False)),
        ("a result not checked", run_of(1, 0, "checked", False)),
        ("e2e zero", run_of(0, 1, "e2e_s", 0)),
        ("shuffle NaN", run_of(1, 2, "shuffle_s", float("nan"))),
        ("phases that do not sum to e2e", run_of(0, 0, "map_s", 1e3)),
        ("another share of communication", run_of(1, 1, "comm_share", 0.999)),
        ("PMO bytes not whole closures", run_of(0, 2, "pmo_bytes", 1000001)),
        ("a channel shuffled other bytes", run_of(1, 2, "shuffle_bytes", 7)),
        ("a channel counted other words", run_of(0, 1, "distinct", 3)),
    ],
    "fig10b": COMMON + [
        ("no 0 ms row", lambda d: d["rows"].pop(0)),
        ("delays out of order",
         lambda d: d["rows"].insert(0, d["rows"].pop())),
        ("a channel missing", lambda d: d["rows"][2]["channels"].pop("mmt")),
        ("a transfer not verified",
         setkey(["rows", 1, "channels", "secure", "verified"], False)),
        ("mmt time zero", setkey(["rows", 0, "channels", "mmt", "us_mean"], 0)),
        ("secure time NaN", setkey(["rows", 3, "channels", "secure", "us_mean"],
                                   float("nan"))),
        ("a transfer faster than the round trip (no delay applied)",
         lambda d: d["rows"][-1]["channels"]["mmt"].update(
             us_min=100.0, us_mean=100.0, MBps=(2 << 20) / 100.0)),
        ("speedup not secure / mmt", lambda d: d["rows"][1].__setitem__(
            "speedup", d["rows"][1]["speedup"] * 2)),
        ("MB/s not size / time",
         setkey(["rows", 2, "channels", "plain", "MBps"], 1e6)),
        ("mean outside min..max",
         setkey(["rows", 0, "channels", "plain", "us_min"], 1e12)),
        ("round trip not twice the delay", setkey(["rows", 1, "rtt_added_ms"], 1)),
        ("ping's round trip without the delay",
         setkey(["rows", -1, "ping_rtt_ms"], 0.6)),
    ],
    "fig14": COMMON + [
        ("4 ranks missing", lambda d: d["configs"].pop()),
        ("a channel missing", lambda d: d["configs"][1]["runs"].pop()),
        ("ranks not equal to the reference", run_of(0, 2, "match", False)),
        ("ranks not checked", run_of(1, 1, "checked", False)),
        ("gather zero", run_of(0, 0, "gather_s", 0)),
        ("remote NaN", run_of(1, 2, "remote_s", float("nan"))),
        ("a phase longer than the run", run_of(0, 1, "scatter_s", 1e3)),
        ("another remote share", run_of(1, 0, "remote_share", 0.5)),
        ("another communication share", run_of(0, 2, "comm_share", 0.999)),
        ("the kernel's time above the remote phase",
         run_of(1, 2, "remote_kernel_s", 1e3)),
        ("a channel sent other bytes", run_of(0, 1, "remote_bytes", 123456)),
        ("fewer bytes than one count per transfer",
         lambda d: [r.__setitem__("remote_bytes", 8)
                    for r in d["configs"][1]["runs"]]),
        ("more cross-rank edges than edges",
         setkey(["configs", 0, "cross_edges"], 1 << 40)),
        ("a sweep point not checked equal to the reference",
         setkey(["sweep", 0, "runs", 2, "match"], False)),
        ("a sweep point without the mmt channel",
         lambda d: d["sweep"][1]["runs"].pop()),
        ("a sweep point whose gather is not above K = 1's",
         setkey(["sweep", 1, "runs", 0, "gather_s"], 1e-9)),
        ("a sweep point at K = 1", setkey(["sweep", 0, "compute_per_edge"], 1)),
        ("no sweep", delkey(["sweep"])),
    ],
    "table4": COMMON + [
        ("a size missing", lambda d: d["rows"].pop()),
        ("encrypt zero", setkey(["rows", 0, "encrypt_us"], 0)),
        ("encrypt NaN", setkey(["rows", 0, "encrypt_us"], float("nan"))),
        ("parts in ns, total in us", scale("parts_sum_us", 1000)),
        ("speedup not secure/delegation", scale("speedup", 2)),
        ("delegation moved less than the message",
         setkey(["rows", -1, "delegation_bytes_moved"], 1)),
        ("shares not summing to 1", setkey(["rows", 0, "share", "memcpy"], 0.9)),
    ],
    "table5": COMMON + [
        ("level 4 missing", lambda d: d["rows"].pop()),
        ("3 levels not 2 MiB", setkey(["rows", 2, "closure_bytes"], 1 << 20)),
        ("metadata not what the wire carries",
         setkey(["rows", 1, "metadata_pct"], 20.0)),
        ("trusted bytes per GiB wrong",
         setkey(["rows", 0, "trusted_bytes_per_gib"], 5)),
        ("read cost negative", setkey(["rows", 0, "read_64_ns"], -1)),
    ],
    "fig10a": COMMON + [
        ("mmt series missing",
         lambda d: d["series"].pop(
             [s["name"] for s in d["series"]].index("mmt delegation"))),
        ("MB/s not size/time",
         series("memory copy (raw RDMA stand-in)",
                lambda s: s["MBps"].__setitem__(0, s["MBps"][0] * 3))),
        ("secure channel faster than its encrypt",
         series("secure channel",
                lambda s: (s["MBps"].__setitem__(0, s["MBps"][0] * 100),
                           s["us"].__setitem__(0, s["us"][0] / 100)))),
        ("unknown where", series("mmt delegation",
                                 lambda s: s.__setitem__("where", "moon"))),
        ("a guest part promised, none there", setkey(["guest_part"], True)),
        ("values and sizes differ in length",
         series("mmt delegation", lambda s: s["MBps"].pop())),
        ("a guest part without the mmt channel and ib_write_bw",
         lambda d: d["series"].extend(
             {"name": n, "where": "guest", "transport": "soft-roce",
              "sizes": [4096], "us": [100.0], "MBps": [40.96]}
             for n in ("plain channel (rxe)", "secure channel (rxe)"))),
    ],
}


def merge_cases():
    """paperlib.bench_merge() on made-up rounds: (what, ok) per case."""
    def doc(c, ns, status="ok", verified=True):
        return {"results": [{"size": 4096, "channel": c, "ns_mean": ns,
                             "status": status, "verified": verified}]}

    def merged(rounds):
        docs = {}
        for r, by in enumerate(rounds):
            for c in paperlib.CHANNELS:
                docs["x/g1.results/bench.0.r%d.%s.json" % (r, c)] = \
                    doc(c, *by.get(c, (100.0 + r,)))
        os.environ["BENCH_ROUNDS"] = str(len(rounds))
        try:
            return {x["channel"]: x for x in
                    paperlib.bench_merge(docs, "x", "0")["results"]}
        finally:
            del os.environ["BENCH_ROUNDS"]

    out = []
    m = merged([{"mmt": (300.0,)}, {"mmt": (100.0,)}, {"mmt": (200.0,)}])
    out.append(("takes each channel's median round",
                m["mmt"]["ns_mean"] == 200.0 and
                m["mmt"]["round_ns_means"] == [300.0, 100.0, 200.0]))
    m = merged([{}, {"secure": (500.0, "ok", False)}, {}])
    out.append(("takes a round that differs, not the median",
                m["secure"]["verified"] is False))
    m = merged([{}, {"plain": (float("nan"),)}, {}])
    out.append(("takes a round without a time, not the median",
                m["plain"]["ns_mean"] != m["plain"]["ns_mean"]))
    try:
        os.environ["BENCH_ROUNDS"] = "2"
        paperlib.bench_merge({"x/g1.results/bench.0.r0.%s.json" % c:
                              doc(c, 1.0) for c in paperlib.CHANNELS}
                             | {"x/g1.results/bench.0.r1.%s.json" % c:
                                {"results": []}
                                for c in paperlib.CHANNELS}, "x", "0")
        out.append(("refuses a round without a result", False))
    except paperlib.Problem:
        out.append(("refuses a round without a result", True))
    finally:
        del os.environ["BENCH_ROUNDS"]
    return out


def main():
    d = sys.argv[1]
    items = sys.argv[2:] or sorted(FAULTS)
    bad = 0
    for what, good in merge_cases():
        print("%s - paper selftest bench_merge %s" % (
            "ok" if good else "not ok", what))
        bad += not good
    for item in items:
        mod = importlib.import_module(item)
        path = os.path.join(d, item + ".json")
        try:
            if not os.path.exists(path) and hasattr(mod, "example"):
                # an item without a smoke run (it boots guests): its
                # made-up example document
                doc = mod.example()
            else:
                with open(path) as f:
                    doc = json.load(f)
        except (OSError, ValueError) as e:
            print("not ok - paper selftest %s: %s" % (item, e))
            bad += 1
            continue
        problems = paperlib.check(mod, doc)
        if problems:
            print("not ok - paper selftest %s: the document as written "
                  "fails: %s" % (item, problems[0]))
            bad += 1
            continue
        for what, plant in FAULTS[item]:
            d2 = copy.deepcopy(doc)
            plant(d2)
            if paperlib.check(mod, d2):
                print("ok - paper selftest %s rejects: %s" % (item, what))
            else:
                print("not ok - paper selftest %s accepts: %s" % (item, what))
                bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
