#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Paper Fig. 14: PageRank in the GAS model across nodes on the plain
channel (no protection), the secure channel and MMT delegation, with the
time of each phase of an iteration (scatter, the remote transfer, the
dangling sum over the control plane, gather, apply) and the remote
phase's share.  Measured in QEMU TCG guests over Soft-RoCE by the guest
run `tests/guest/tests apps-mpi` (tools/apps/mmt-pagerank-mpi started by
MPICH's mpiexec after WordCount, tests/guest/apps/g-apps-mpi.sh), which
checks every rank's vertices on every channel against mmt-pagerank-ref to
1e-9, in the guest and on the host; this item fails unless every check of
that run passed.  The same boot as fig13 when both run in one `make
paper`.  FIG14_FROM=DIR reads the JSONs a run wrote before
(DIR/apps-mpi-m1r1-pagerank.json, apps-mpi-m2r2-pagerank.json)."""
import sys

import paperlib

ITEM = "fig14"
TITLE = "Fig. 14: PageRank (GAS) over the three channels (QEMU guests)"
CHANNELS = paperlib.CHANNELS
# (name, ranks, the apps-mpi configuration that ran it)
CONFIGS = (("2 ranks", 2, "m1r1"), ("4 ranks", 4, "m2r2"))
PHASES = ("scatter_s", "remote_s", "dangling_s", "gather_s", "apply_s")

PAPER = {
    "source": "Feng et al., HPCA 2023, Fig. 14 (../shared/docs/ANCHORS.md)",
    "graph": "~100k vertices, 60k cross-machine edges",
    "remote_share_mmt": 0.05,
    "remote_share_secure": 0.375,
    "mmt_faster_than_secure": 0.35,
}
RUN_FIELDS = ("channel", "e2e_s") + PHASES + (
    "remote_share", "remote_kernel_s", "remote_bytes", "checked", "match")


def sweep_ks():
    """The --compute-per-edge values of the comm-n% sweep (2 ranks)."""
    text = paperlib.GUEST_ENV["apps-mpi"]["APPS_PR_SWEEP"]
    return [int(k) for k in text.split(",") if k]


def sweep_point(d):
    """One --compute-per-edge run (2 ranks) of the sweep: per channel."""
    runs = []
    for r in d.get("runs", []):
        it = sum(r[k] for k in PHASES)
        runs.append(dict(r, comm_share=(r["remote_s"] + r["dangling_s"]) / it
                         if it > 0 else 0))
    out = {"compute_per_edge": d.get("compute_per_edge"),
           "ranks": d.get("ranks"), "iters": d.get("iters"), "runs": runs}
    by = {r["channel"]: r for r in runs}
    if all(c in by for c in CHANNELS):
        out["mmt_faster_than_secure"] = 1 - by["mmt"]["e2e_s"] / \
            by["secure"]["e2e_s"]
        out["mmt_over_plain"] = by["mmt"]["e2e_s"] / by["plain"]["e2e_s"]
    return out


def measure(args):
    files = ["apps-mpi-%s-pagerank.json" % c for _, _, c in CONFIGS]
    ks = sweep_ks()
    sweep_files = ["apps-mpi-m1r1-pagerank-k%d.json" % k for k in ks]
    cmd, docs = paperlib.guest_run(args, ITEM, "apps-mpi",
                                   files + sweep_files)
    configs = []
    for (name, ranks, _), path in zip(CONFIGS, files):
        d = docs[path]
        runs = {r["channel"]: r for r in d.get("runs", [])}
        out = {"name": name}
        for k in ("ranks", "vertices", "edges", "cross_edges", "iters",
                  "levels", "control", "repeat", "compute_per_edge"):
            out[k] = d.get(k)
        out["runs"] = [runs.get(c) for c in CHANNELS]
        for r in out["runs"]:
            if r:
                # communication: the remote transfer and the dangling sum
                # over the control plane, of the phases' sum
                it = sum(r[k] for k in PHASES)
                r["comm_share"] = (r["remote_s"] + r["dangling_s"]) / it \
                    if it > 0 else 0
        if all(out["runs"]):
            p, s, m = (r["e2e_s"] for r in out["runs"])
            out["secure_over_plain"] = s / p
            out["mmt_over_plain"] = m / p
            out["mmt_faster_than_secure"] = 1 - m / s
        configs.append(out)
    sweep = [sweep_point(docs[f]) for f in sweep_files]
    return {
        "commands": [cmd + " (APPS_PR_SWEEP=%s)" % ",".join(map(str, ks))],
        "paper": PAPER,
        "notes": [
            "QEMU TCG guests on a shared 2-core host, Soft-RoCE over an "
            "emulated e1000 link (UDP multicast): for correctness and shape, "
            "not speed; each channel's fastest run of the JSON's repeat, "
            "after warmup warm-up rounds, the channel order rotated each "
            "round, every run checked",
            "R-MAT scale 12 (4096 vertices, 65 536 edges) unless "
            "APPS_PR_SCALE says otherwise, 10 iterations; the paper has "
            "~100k vertices (scale 17: APPS_PR_SCALE=17)",
            "each phase is the slowest rank's total over the iterations; "
            "remote_share = remote / (scatter + remote + dangling + gather "
            "+ apply); comm_share adds the dangling sum (MPI_Allgather)",
            "every rank's vertices equal mmt-pagerank-ref's to 1e-9 on every "
            "channel (checked in the guest and on the host)",
            "2-level MMTs (128 KiB closures) to keep TCG time low",
            "sweep: the paper's comm-n% workloads on 2 ranks, PageRank "
            "with --compute-per-edge K (each gather K times, the same "
            "sums), every rank checked against the reference in the guest",
        ],
        "configs": configs,
        "sweep": sweep,
    }


def check(doc, problems):
    cfgs = doc.get("configs")
    if not isinstance(cfgs, list) or [c.get("name") for c in cfgs] != [
            n for n, _, _ in CONFIGS]:
        problems.append("configs are not %s" % [n for n, _, _ in CONFIGS])
        return
    for c, (name, ranks, _) in zip(cfgs, CONFIGS):
        if c.get("ranks") != ranks:
            problems.append("%s: %r ranks" % (name, c.get("ranks")))
        for k in ("vertices", "edges", "cross_edges", "iters"):
            if not isinstance(c.get(k), int) or c[k] <= 0:
                problems.append("%s: %s = %r" % (name, k, c.get(k)))
        if not problems and c["cross_edges"] > c["edges"]:
            problems.append("%s: %d cross-rank edges of %d" % (
                name, c["cross_edges"], c["edges"]))
        runs = paperlib.channel_runs(c, name, problems)
        if runs is None:
            continue
        for r, ch in zip(runs, CHANNELS):
            where = "%s %s" % (name, ch)
            if not paperlib.check_channel_run(
                    r, ch, where, RUN_FIELDS + ("comm_share",),
                    ("e2e_s", "remote_share", "comm_share", "remote_bytes",
                     "remote_kernel_s") + PHASES,
                    "the ranks were", problems):
                continue
            # a phase is one rank's time inside the run: at most e2e (the
            # slowest ranks of two phases may differ, so not their sum)
            for k in PHASES:
                if r[k] > r["e2e_s"] * 1.01 + 1e-4:
                    problems.append("%s: %s %.6f s > e2e %.6f s" % (
                        where, k, r[k], r["e2e_s"]))
            if r["remote_kernel_s"] > r["remote_s"] * 1.01 + 1e-4:
                problems.append("%s: the kernel's transfer time exceeds the "
                                "remote phase" % where)
            it = sum(r[k] for k in PHASES)
            if abs(r["remote_share"] - r["remote_s"] / it) > 1e-3:
                problems.append("%s: remote_share is not remote / the phases"
                                % where)
            if abs(r["comm_share"] - (r["remote_s"] + r["dangling_s"]) / it) \
                    > 1e-3:
                problems.append("%s: comm_share is not (remote + dangling) "
                                "/ the phases" % where)
            # each iteration sends one PMO (a count, then the doubles) to
            # every other rank: at least 8 bytes each
            if r["remote_bytes"] < 8 * ranks * (ranks - 1) * c["iters"]:
                problems.append("%s: %r bytes sent" % (where, r["remote_bytes"]))
        if not problems and len({r["remote_bytes"] for r in runs}) != 1:
            problems.append("%s: the channels sent other bytes" % name)
    check_sweep(doc, problems)


def check_sweep(doc, problems):
    """The comm-n% sweep: each point's channels checked equal to the
    reference, finite, the shares as defined, and more computation per
    edge gives a longer gather than K = 1's (2 ranks)."""
    sweep = doc.get("sweep")
    if not isinstance(sweep, list):
        problems.append("no sweep list")
        return
    base = doc["configs"][0]["runs"] if not problems else None
    for p in sweep:
        k = p.get("compute_per_edge") if isinstance(p, dict) else None
        where = "sweep K=%r" % k
        if not isinstance(k, int) or k < 2:
            problems.append("%s: not a K above 1" % where)
            continue
        if p.get("ranks") != 2:
            problems.append("%s: %r ranks, want 2" % (where, p.get("ranks")))
        runs = p.get("runs")
        if not isinstance(runs, list) or [r.get("channel") for r in runs
                                          if isinstance(r, dict)] != \
                list(CHANNELS):
            problems.append("%s: not one run per channel" % where)
            continue
        for r in runs:
            w = "%s %s" % (where, r["channel"])
            if not paperlib.need(r, RUN_FIELDS + ("comm_share",), w,
                                 problems):
                continue
            if r["checked"] is not True or r["match"] is not True:
                problems.append("%s: the ranks were not checked equal to the "
                                "reference" % w)
            if not all(paperlib.finite_pos(r[x]) for x in
                       ("e2e_s", "remote_share", "comm_share") + PHASES):
                problems.append("%s: a time or share not finite and positive"
                                % w)
                continue
            it = sum(r[x] for x in PHASES)
            if abs(r["remote_share"] - r["remote_s"] / it) > 1e-3 or \
                    abs(r["comm_share"] - (r["remote_s"] + r["dangling_s"])
                        / it) > 1e-3:
                problems.append("%s: a share is not as defined" % w)
            b = [x for x in base or [] if x.get("channel") == r["channel"]]
            # K gathers per iteration take longer than one
            if b and r["gather_s"] <= b[0]["gather_s"]:
                problems.append("%s: gather %.6f s, not above K = 1's %.6f s"
                                % (w, r["gather_s"], b[0]["gather_s"]))


def example():
    """A made-up document of the right shape, for the checker's own test in
    make check's unit stage (selftest.py), which boots no guests: invented
    figures, consistent with each other, never shown as a measurement."""
    configs = []
    for name, ranks, _ in CONFIGS:
        runs = []
        for i, ch in enumerate(CHANNELS):
            ph = {"scatter_s": 0.001, "remote_s": 0.1 * (i + 1),
                  "dangling_s": 0.01, "gather_s": 0.005, "apply_s": 0.001}
            it = sum(ph.values())
            runs.append(dict({"channel": ch, "e2e_s": it * 1.05},
                             **ph, remote_share=ph["remote_s"] / it,
                             comm_share=(ph["remote_s"] + ph["dangling_s"]) / it,
                             remote_kernel_s=ph["remote_s"] * 0.9,
                             remote_bytes=10000 * ranks, checked=True,
                             match=True))
        configs.append({"name": name, "ranks": ranks, "vertices": 4096,
                        "edges": 65536, "cross_edges": 30000, "iters": 10,
                        "levels": 2, "control": "mpi", "repeat": 1,
                        "runs": runs})
    sweep = []
    for k in (100, 1000):
        runs = []
        for r in configs[0]["runs"]:
            x = dict(r, gather_s=r["gather_s"] * k)
            it = sum(x[p] for p in PHASES)
            x.update(e2e_s=it * 1.05, remote_share=x["remote_s"] / it,
                     comm_share=(x["remote_s"] + x["dangling_s"]) / it)
            runs.append(x)
        sweep.append({"compute_per_edge": k, "ranks": 2, "iters": 10,
                      "runs": runs})
    return {"schema": paperlib.SCHEMA, "item": ITEM, "title": TITLE,
            "smoke": True, "machine": {"date_utc": "", "cpu": "", "commit": ""},
            "commands": [], "paper": PAPER, "notes": ["synthetic"],
            "configs": configs, "sweep": sweep}


def summary(doc):
    print("%-7s %-7s %9s %9s %9s %9s %9s %9s %7s %7s" % (
        "", "channel", "e2e s", "scatter", "remote", "dangling", "gather",
        "apply", "remote", "comm"))
    for c in doc["configs"]:
        for r in c["runs"]:
            print("%-7s %-7s %9.3f %9.4f %9.3f %9.3f %9.4f %9.4f %6.1f%% "
                  "%6.1f%%" % (
                      c["name"], r["channel"], r["e2e_s"], r["scatter_s"],
                      r["remote_s"], r["dangling_s"], r["gather_s"],
                      r["apply_s"], 100 * r["remote_share"],
                      100 * r["comm_share"]))
        print("%-7s secure / plain %.2fx, mmt / plain %.2fx, mmt faster "
              "than secure by %.0f%% (paper: 35%%)" % (
                  c["name"], c["secure_over_plain"], c["mmt_over_plain"],
                  100 * c["mmt_faster_than_secure"]))
    for p in doc["sweep"]:
        print("2 ranks, --compute-per-edge %d: " % p["compute_per_edge"] +
              ", ".join("%s %.3f s (remote %.1f%%)" % (
                  r["channel"], r["e2e_s"], 100 * r["remote_share"])
                  for r in p["runs"]) +
              "; mmt faster than secure by %.0f%%" % (
                  100 * p["mmt_faster_than_secure"]))


def plot(doc, png):
    plt = paperlib.pyplot()
    fig, axes = plt.subplots(1, len(doc["configs"]) + 1, figsize=(15, 4.5))
    sx = axes[-1]
    ks = [1] + [p["compute_per_edge"] for p in doc["sweep"]]
    for i, ch in enumerate(CHANNELS):
        pts = [doc["configs"][0]["runs"][i]] + [p["runs"][i]
                                                for p in doc["sweep"]]
        sx.plot(ks, [100 * r["remote_share"] for r in pts], "o-", label=ch)
    sx.axhline(100 * PAPER["remote_share_secure"], color="grey", ls=":",
               label="paper: secure channel 37.5 %")
    sx.axhline(100 * PAPER["remote_share_mmt"], color="grey", ls="--",
               label="paper: MMT 5 %")
    sx.set_xscale("log")
    sx.set_xlabel("--compute-per-edge K (2 ranks)")
    sx.set_ylabel("remote phase's share of an iteration (%)")
    sx.set_ylim(0, 100)
    sx.set_title("comm-n%: more computation per byte")
    sx.legend(fontsize=8)
    for ax, c in zip(axes, doc["configs"]):
        x = range(len(CHANNELS))
        bottom = [0.0] * len(CHANNELS)
        for key in PHASES:
            v = [r[key] for r in c["runs"]]
            ax.bar(x, v, bottom=bottom, label=key[:-2])
            bottom = [b + y for b, y in zip(bottom, v)]
        for i, r in enumerate(c["runs"]):
            ax.text(i, bottom[i], "remote %.0f%%" % (100 * r["remote_share"]),
                    ha="center", va="bottom", fontsize=8)
        ax.set_xticks(list(x))
        ax.set_xticklabels(CHANNELS)
        ax.set_title("%s, %d iterations" % (c["name"], c["iters"]))
        ax.set_ylabel("time in the phase, slowest rank (s)")
        ax.set_ylim(bottom=0)
    axes[0].legend(fontsize=8)
    paperlib.save_figure(plt, fig, doc, TITLE, png, "paper: remote phase "
                         "5 % (MMT) vs 37.5 % (secure channel)")


if __name__ == "__main__":
    sys.exit(paperlib.main(sys.modules[__name__]))
