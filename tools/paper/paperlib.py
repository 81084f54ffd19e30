# SPDX-License-Identifier: GPL-2.0
"""Shared code of the paper's items (tools/paper/<item>.py, docs/PAPER.md).

Each item script defines ITEM, TITLE, measure(args) -> document,
check(doc) -> list of problems, plot(doc, png) and calls main().  main()
runs the item (or, with --check-only FILE, only checks a JSON written
before), writes build/paper/<item>.json and .png, checks the document's
shape and sanity and exits non-zero on any problem.  SMOKE=1 in the
environment (or --smoke) runs the item's short version.
"""
import argparse
import datetime
import json
import math
import os
import platform
import shutil
import ssl
import subprocess
import sys

SCHEMA = 1
TOP = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))


class Problem(Exception):
    """A run that cannot produce its document (bad tool output)."""


def machine():
    """Where and when the figures were measured: what a reader needs."""
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        commit = subprocess.run(["git", "-C", TOP, "describe", "--always",
                                 "--dirty"], capture_output=True, text=True,
                                check=False).stdout.strip()
    except OSError:
        commit = ""
    return {
        "date_utc": datetime.datetime.now(datetime.timezone.utc)
        .strftime("%Y-%m-%dT%H:%M:%SZ"),
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "loadavg_1min": os.getloadavg()[0],
        "kernel": platform.release(),
        "openssl": ssl.OPENSSL_VERSION,
        "commit": commit,
    }


def run_bench(args, section, extra):
    """Run mmt-engine-bench --section @section --json; its parsed rows.

    Pinned to one core with taskset (as `make bench`) unless smoke."""
    cmd = [args.bench, "--json", "--section", section,
           "--runs", str(args.runs)] + extra
    if not args.smoke and shutil.which("taskset") and (os.cpu_count() or 1) > 1:
        cmd = ["taskset", "-c", "1"] + cmd
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        raise Problem("%s exited %d: %s" % (" ".join(cmd), res.returncode,
                                             res.stderr.strip()))
    try:
        doc = json.loads(res.stdout)
    except ValueError as e:
        raise Problem("%s: output is not JSON: %s" % (cmd[-1], e))
    return " ".join(cmd), doc["rows"]


# The settings each guest run gets from `make paper` (its environment for
# tests/guest/tests), the same whichever item boots it: apps-mpi serves
# fig13 and fig14, and fig14's comm-n% sweep (PageRank with
# --compute-per-edge K on 2 ranks) rides on it.  FIG14_SWEEP overrides
# (empty: no sweep).
GUEST_ENV = {
    "apps-mpi": {"APPS_PR_SWEEP": os.environ.get("FIG14_SWEEP", "100,1000"),
                 # a warm-up round, then rounds in a rotated channel order
                 # (each channel's fastest kept): no channel pays the
                 # first run's warm-up
                 "APPS_WARMUP": "1", "APPS_PR_REPEAT": "3",
                 "APPS_WC_REPEAT": "5",
                 # the rounds' time: each mpiexec's bound and the run's
                 "APPS_MPI_TIMEOUT": "500", "APPS_RUN_TIMEOUT": "1800"},
}


def guest_run(args, item, run, names):
    """The JSONs a guest run wrote: {name: document} for each of @names
    (files in GUEST_BUILD, default build/guest), after booting
    `tests/guest/tests RUN` (its output in OUT/<run>-guests.log), which
    must pass every check: a result that differs from its reference
    fails the item.  <ITEM>_FROM=DIR (e.g. FIG13_FROM) reads the JSONs an
    earlier run left in DIR instead of booting.  One boot per `make
    paper`: tools/paper/run.sh sets PAPER_SESSION, and an item whose run
    already passed in this session (fig13 and fig14 share apps-mpi)
    reads its JSONs.  Returns (command, {name: document})."""
    gdir = os.environ.get("GUEST_BUILD", os.path.join(TOP, "build", "guest"))
    src = os.environ.get(item.upper() + "_FROM")
    cmd = "tests/guest/tests " + run
    stamp = os.path.join(args.out, ".%s.session" % run)
    session = os.environ.get("PAPER_SESSION", "")
    if src:
        gdir = src
        cmd = "(read from %s)" % src
    else:
        try:
            with open(stamp) as f:
                done = session and f.read().strip() == session
        except OSError:
            done = False
        if not done:
            os.makedirs(args.out, exist_ok=True)
            log = os.path.join(args.out, run + "-guests.log")
            for n in names:
                try:
                    os.unlink(os.path.join(gdir, n))
                except OSError:
                    pass
            try:
                os.unlink(stamp)
            except OSError:
                pass
            env = dict(os.environ, **GUEST_ENV.get(run, {}))
            with open(log, "w") as f:
                res = subprocess.run([os.path.join(TOP, "tests", "guest",
                                                   "tests"), run],
                                     stdout=f, stderr=subprocess.STDOUT,
                                     env=env, check=False)
            if res.returncode != 0:
                raise Problem("the guest run %s failed (a result differs "
                              "from its reference, or a guest): see %s"
                              % (run, log))
            with open(stamp, "w") as f:
                f.write(session + "\n")
    docs = {}
    for n in names:
        path = os.path.join(gdir, n)
        try:
            with open(path) as f:
                docs[n] = json.load(f)
        except (OSError, ValueError) as e:
            raise Problem("%s: %s" % (path, e))
    return cmd, docs


# The guest bench runs' rounds (tests/guest/demo/g-bench-client.sh): the
# same BENCH_ROUNDS as the run (default 3), one mmt-bench per channel per
# round, the channels rotated by one each round after a warm-up round
CHANNELS = ("plain", "secure", "mmt")


def bench_rounds():
    return int(os.environ.get("BENCH_ROUNDS", "3"))


def bench_files(run, tag):
    """The result files of one set of a guest bench run, round by round."""
    return ["%s/g1.results/bench.%s.r%d.%s.json" % (run, tag, r, c)
            for r in range(bench_rounds()) for c in CHANNELS]


def bench_merge(docs, run, tag):
    """One set's rounds as one mmt-bench document: per size and channel the
    result of the round with the median mean time (the lower median for an
    even count), with every round's mean kept in its "round_ns_means" (in
    round order); a round that failed or differs is the one taken, so the
    checkers see it.  Problem if a round has no result for a size and
    channel the first round has."""
    rounds = bench_rounds()
    by = {}
    for r in range(rounds):
        for c in CHANNELS:
            path = "%s/g1.results/bench.%s.r%d.%s.json" % (run, tag, r, c)
            for x in docs[path].get("results", []):
                if x.get("channel") != c:
                    continue
                by.setdefault((x.get("size"), c), []).append(x)
    results = []
    for (size, c), xs in sorted(by.items(), key=lambda kv: (kv[0][0] or 0,
                                                            kv[0][1])):
        if len(xs) != rounds:
            raise Problem("bench %s: %s B on %s: %d of %d rounds" % (
                tag, size, c, len(xs), rounds))
        bad = [x for x in xs if x.get("status") != "ok" or
               x.get("verified") is not True or
               not finite_pos(x.get("ns_mean"))]
        # a failed round is the one reported, as the apps do
        pick = bad[0] if bad else \
            sorted(xs, key=lambda x: x["ns_mean"])[(rounds - 1) // 2]
        results.append(dict(pick, round_ns_means=[x.get("ns_mean")
                                                  for x in xs]))
    return {"results": results, "rounds": rounds}


def finite_pos(x):
    return isinstance(x, (int, float)) and math.isfinite(x) and x > 0


def need(doc, keys, where, problems):
    """Append a problem for each key of @keys missing from dict @doc."""
    if not isinstance(doc, dict):
        problems.append("%s: not an object" % where)
        return False
    missing = [k for k in keys if k not in doc]
    for k in missing:
        problems.append("%s: no '%s'" % (where, k))
    return not missing


def channel_runs(doc, where, problems):
    """@doc's list "runs", one dict per channel, or None after a problem."""
    runs = doc.get("runs")
    if not isinstance(runs, list) or len(runs) != len(CHANNELS) or not all(
            isinstance(r, dict) for r in runs):
        problems.append("%s: not one run per channel" % where)
        return None
    return runs


def check_channel_run(r, ch, where, fields, positive, checked, problems):
    """The checks every application's run of channel @ch shares: the
    @fields present, its channel, the @positive fields finite and
    positive, and its result checked equal to the reference (@checked
    names what was: "the result was", "the ranks were").  True if the
    run's own checks can go on."""
    if not need(r, fields, where, problems):
        return False
    if r["channel"] != ch:
        problems.append("%s: channel %r" % (where, r["channel"]))
    for k in positive:
        if not finite_pos(r[k]):
            problems.append("%s: %s = %r" % (where, k, r[k]))
    if any("%s: " % where in p for p in problems):
        return False
    if r["checked"] is not True or r["match"] is not True:
        problems.append("%s: %s not checked equal to the reference" % (
            where, checked))
    return True


def check_common(doc, item, problems):
    need(doc, ["schema", "item", "title", "smoke", "machine", "commands",
               "paper", "notes"], "document", problems)
    if doc.get("schema") != SCHEMA:
        problems.append("schema is %r, not %d" % (doc.get("schema"), SCHEMA))
    if doc.get("item") != item:
        problems.append("item is %r, not %r" % (doc.get("item"), item))
    need(doc.get("machine", {}), ["date_utc", "cpu", "commit"], "machine",
         problems)


def rows_of(doc, problems):
    """The document's non-empty list "rows", or None after a problem."""
    rows = doc.get("rows")
    if not isinstance(rows, list) or not rows:
        problems.append("no rows")
        return None
    return rows


def save_figure(plt, fig, doc, title, png, note=""):
    """Title @fig (with " [smoke]" and a second line @note), write @png."""
    if title:
        fig.suptitle(title + (" [smoke]" if doc["smoke"] else "") +
                     ("\n" + note if note else ""), fontsize=10)
    fig.tight_layout()
    fig.savefig(png, dpi=100)
    plt.close(fig)


def size_label(n):
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return "%d %s" % (n >> shift, unit)
    return "%d B" % n


def pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def main(mod):
    """Command line of every item script (see the module docstring)."""
    ap = argparse.ArgumentParser(description=mod.TITLE)
    ap.add_argument("--out", default=os.path.join(os.environ.get("O", "build"),
                                                  "paper"))
    ap.add_argument("--bench", default=os.path.join(
        os.environ.get("O", "build"), "tools", "mmt-engine-bench"))
    ap.add_argument("--smoke", action="store_true",
                    default=os.environ.get("SMOKE", "") not in ("", "0"))
    ap.add_argument("--runs", type=int, default=None,
                    help="best of N runs (default 25, smoke 3)")
    ap.add_argument("--check-only", metavar="JSON",
                    help="only check a document written before")
    args = ap.parse_args()
    if args.runs is None:
        args.runs = 3 if args.smoke else 25
    if args.check_only:
        with open(args.check_only) as f:
            doc = json.load(f)
        problems = check(mod, doc)
    else:
        try:
            doc = mod.measure(args)
        except Problem as e:
            print("%s: %s" % (mod.ITEM, e), file=sys.stderr)
            return 1
        doc = dict({"schema": SCHEMA, "item": mod.ITEM, "title": mod.TITLE,
                    "smoke": args.smoke, "machine": machine()}, **doc)
        os.makedirs(args.out, exist_ok=True)
        path = os.path.join(args.out, mod.ITEM + ".json")
        with open(path, "w") as f:
            json.dump(doc, f, indent=1, sort_keys=False)
            f.write("\n")
        problems = check(mod, doc)
        png = os.path.join(args.out, mod.ITEM + ".png")
        if not problems:
            mod.plot(doc, png)
            if not os.path.getsize(png):
                problems.append("%s is empty" % png)
        print("%s: wrote %s and %s" % (mod.ITEM, path, png))
        mod.summary(doc)
    for p in problems:
        print("%s: %s" % (mod.ITEM, p), file=sys.stderr)
    return 1 if problems else 0


def check(mod, doc):
    problems = []
    check_common(doc, mod.ITEM, problems)
    if not problems:
        mod.check(doc, problems)
    return problems


# The rows of mmt-engine-bench --section channel, by message size
CHANNEL_PARTS = ("plain memcpy", "secure channel", "secure encrypt",
                 "secure copy out", "secure remote write", "secure copy in",
                 "secure decrypt", "mmt lazy (in place)", "mmt bytes moved")


def channel_by_size(rows, sizes):
    """{size: {part: value}} for each of @sizes; Problem if one is missing."""
    out = {}
    for r in rows:
        if r.get("section") != "channel" or "size" not in r:
            continue
        part = r["name"].split(" ", 1)[1]
        out.setdefault(r["size"], {})[part] = r["value"]
    for s in sizes:
        got = out.get(s, {})
        missing = [p for p in CHANNEL_PARTS if p not in got]
        if missing:
            raise Problem("channel: size %d: no %s" % (s, ", ".join(missing)))
    return out


def parse_sizes(text):
    """"4K,2M" -> [4096, 2097152]"""
    out = []
    for tok in text.split(","):
        mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(tok[-1:].upper(), 1)
        out.append(int(tok[:-1] if mult > 1 else tok) * mult)
    return out
