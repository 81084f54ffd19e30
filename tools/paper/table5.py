#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Paper Table V, natively: MMTs of 1 to 4 counter levels (default arities
64, 32, 16, 16 over 64-byte blocks): closure size, trusted MMT root storage
per GiB of secure memory, metadata overhead, and the cost of reads and
writes (whole MMTs, 64-byte and 4 KiB accesses at pseudo-random offsets of
a working set, beside memcpy of the same accesses).  Measured by
mmt-engine-bench --section levels (tools/mmt-engine-bench.c)."""
import sys

import paperlib

ITEM = "table5"
TITLE = "Table V: MMT tree levels 1 to 4 (native)"
WORKING_SET = "32M"
SMOKE_WORKING_SET = "4M"
# closure size with the default arities: 2/3/4 levels as in the paper
CLOSURE = {1: 4 << 10, 2: 128 << 10, 3: 2 << 20, 4: 32 << 20}

PAPER = {
    "source": "Feng et al., HPCA 2023, Table V (../shared/docs/ANCHORS.md)",
    "closure_bytes": {"2": 128 << 10, "3": 2 << 20, "4": 32 << 20},
    "default_levels": 3,
    "root_metadata_bytes": 24,
    "spec_overhead": {"2": 1.07, "4": 1.21},
}

# key in the document -> name of the bench row (after "L<n> ")
FIELDS = (
    ("closure_bytes", "closure bytes"),
    ("data_mac_bytes", "data MAC bytes"),
    ("tree_node_bytes", "tree node bytes"),
    ("closure_wire_bytes", "closure wire bytes"),
    ("metadata_pct", "metadata"),
    ("trusted_root_bytes", "trusted root bytes"),
    ("roots_per_gib", "roots per GiB"),
    ("trusted_bytes_per_gib", "trusted bytes per GiB"),
    ("working_set_bytes", "working set"),
    ("write_whole_MBps", "write whole MMTs"),
    ("read_whole_MBps", "read whole MMTs"),
    ("read_64_ns", "read 64 B random"),
    ("write_64_ns", "write 64 B random"),
    ("memcpy_64_ns", "memcpy 64 B random"),
    ("read_4k_ns", "read 4 KiB random"),
    ("write_4k_ns", "write 4 KiB random"),
    ("memcpy_4k_ns", "memcpy 4 KiB random"),
)
POSITIVE = [k for k, _ in FIELDS if k != "tree_node_bytes"]


def measure(args):
    ws = SMOKE_WORKING_SET if args.smoke else WORKING_SET
    cmd, rows = paperlib.run_bench(args, "levels", ["--working-set", ws])
    by = {}
    for r in rows:
        if r.get("section") == "levels" and "levels" in r:
            by.setdefault(r["levels"], {})[r["name"].split(" ", 1)[1]] = r["value"]
    out = []
    for lv in sorted(by):
        d = {"levels": lv}
        for key, name in FIELDS:
            if name not in by[lv]:
                raise paperlib.Problem("levels %d: no row %r" % (lv, name))
            d[key] = by[lv][name]
        for k in ("closure_bytes", "data_mac_bytes", "tree_node_bytes",
                  "closure_wire_bytes", "trusted_root_bytes",
                  "roots_per_gib", "trusted_bytes_per_gib",
                  "working_set_bytes"):
            d[k] = int(d[k])
        for op in ("read", "write"):
            for sz in ("64", "4k"):
                d["%s_%s_over_memcpy" % (op, sz)] = (
                    d["%s_%s_ns" % (op, sz)] / d["memcpy_%s_ns" % sz])
        out.append(d)
    return {
        "commands": [cmd],
        "paper": PAPER,
        "notes": [
            "user-space build of lib/ (OpenSSL), one core; best of --runs",
            "trusted root bytes: the paper's 24 bytes (key, state, GUA) "
            "plus the top node's counters (33-bit major, 7-bit minors), "
            "rounded up to bytes; the module keeps more in memory",
            "read and write cost: software engine against memcpy of the "
            "same accesses, not the paper's SPEC slowdown under a "
            "hardware controller with counter caches",
            "1 level (4 KiB closures) is beyond the paper's table",
        ],
        "rows": out,
    }


def check(doc, problems):
    rows = paperlib.rows_of(doc, problems)
    if rows is None:
        return
    got = [r.get("levels") for r in rows]
    if got != [1, 2, 3, 4]:
        problems.append("levels %s, not [1, 2, 3, 4]" % got)
        return
    for r in rows:
        where = "levels %d" % r["levels"]
        if not paperlib.need(r, [k for k, _ in FIELDS], where, problems):
            return
        for k in POSITIVE:
            if not paperlib.finite_pos(r[k]):
                problems.append("%s: %s = %r" % (where, k, r[k]))
        if problems:
            return
        if r["closure_bytes"] != CLOSURE[r["levels"]]:
            problems.append("%s: closure %d bytes, not %d" % (
                where, r["closure_bytes"], CLOSURE[r["levels"]]))
        meta = 100.0 * (r["closure_wire_bytes"] - r["closure_bytes"]) / r["closure_bytes"]
        if abs(meta - r["metadata_pct"]) > 0.01:
            problems.append("%s: metadata %.2f%% but the wire carries %.2f%%"
                            % (where, r["metadata_pct"], meta))
        if not 10 <= r["metadata_pct"] <= 30:
            problems.append("%s: metadata %.2f%%" % (where, r["metadata_pct"]))
        if r["data_mac_bytes"] * 8 != r["closure_bytes"]:
            problems.append("%s: not one 8-byte MAC per 64-byte block" % where)
        if r["roots_per_gib"] * r["closure_bytes"] != 1 << 30:
            problems.append("%s: roots per GiB" % where)
        if r["trusted_bytes_per_gib"] != r["roots_per_gib"] * r["trusted_root_bytes"]:
            problems.append("%s: trusted bytes per GiB" % where)
        if r["trusted_root_bytes"] < 24:
            problems.append("%s: root below the paper's 24 bytes" % where)
        if r["working_set_bytes"] < r["closure_bytes"]:
            problems.append("%s: working set below one closure" % where)
    per_gib = [r["trusted_bytes_per_gib"] for r in rows]
    if per_gib != sorted(per_gib, reverse=True) or len(set(per_gib)) != 4:
        problems.append("trusted bytes per GiB not falling with levels: %s"
                        % per_gib)


def summary(doc):
    print("%6s %10s %14s %9s %11s %11s %10s %10s" % (
        "levels", "closure", "trusted/GiB", "metadata", "read 64 B",
        "write 64 B", "read 4K", "write 4K"))
    for r in doc["rows"]:
        print("%6d %10s %14d %8.2f%% %9.0f ns %8.0f ns %7.0f ns %7.0f ns" % (
            r["levels"], paperlib.size_label(r["closure_bytes"]),
            r["trusted_bytes_per_gib"], r["metadata_pct"], r["read_64_ns"],
            r["write_64_ns"], r["read_4k_ns"], r["write_4k_ns"]))


def plot(doc, png):
    plt = paperlib.pyplot()
    rows = doc["rows"]
    lv = [r["levels"] for r in rows]
    fig, ax = plt.subplots(2, 2, figsize=(10, 7))
    ax[0][0].bar(lv, [r["closure_bytes"] for r in rows])
    ax[0][0].set_yscale("log", base=2)
    ax[0][0].set_title("closure size (bytes)")
    ax[0][1].bar(lv, [r["trusted_bytes_per_gib"] for r in rows])
    ax[0][1].set_yscale("log")
    ax[0][1].set_title("trusted root storage per GiB (bytes)")
    ax[1][0].bar(lv, [r["metadata_pct"] for r in rows])
    ax[1][0].set_title("metadata overhead (% of data)")
    for key, name in (("read_64_ns", "read 64 B"), ("write_64_ns", "write 64 B"),
                      ("read_4k_ns", "read 4 KiB"), ("write_4k_ns", "write 4 KiB"),
                      ("memcpy_4k_ns", "memcpy 4 KiB")):
        ax[1][1].plot(lv, [r[key] for r in rows], "o-", label=name)
    ax[1][1].set_yscale("log")
    ax[1][1].set_title("access cost at random offsets (ns)")
    ax[1][1].legend(fontsize=8)
    for a in (ax[0][0], ax[0][1], ax[1][0], ax[1][1]):
        a.set_xticks(lv)
        a.set_xlabel("tree levels")
    paperlib.save_figure(plt, fig, doc, TITLE, png)


if __name__ == "__main__":
    sys.exit(paperlib.main(sys.modules[__name__]))
