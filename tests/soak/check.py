#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""check.py - the checker of the fault soak (make soak).

Reads the console logs of the soak's guests (tests/guest/g-soak.sh,
tests/guest/mmt-soak.c lines "soak KIND MS NODE ...") and their kernel
error files, and fails on:

  fork       one token writable on two nodes (or as two copies on one
             node): (a) clock-free, a destination took in a migration
             whose source saw it fail, resolved it aborted or forced it;
             (b) by the clocks, two copies' runs of W reports overlap by
             more than SKEW_MS (the guests' clocks, each set from the RTC
             at boot, agree to within about a second).  A run is a series
             of W reports of one copy at most GAP_MS apart, ended by any
             other report
  lost       a migration the source saw committed (or resolved committed)
             whose destination took in an older record than the source
             had acknowledged before it (an acknowledged write missing),
             or never said it took it in, unless its module was reloaded
             around then (the token went with its memory)
  plaintext  a record that does not match its id and seq
  kernel     a kernel report (Oops, WARNING, BUG, KASAN, ...) in a guest

Prints a summary and writes a JSON (--json FILE): operations, faults of
each kind, violations.  Exit 1 on any violation, 2 on a log with no
soak lines at all.

Usage: check.py [--json FILE] RUNDIR NODES
"""
import json
import os
import re
import sys
from collections import defaultdict

SKEW_MS = 2000
GAP_MS = 2500

LINE = re.compile(r'soak ([A-Z]) (\d+) (\d+) ?(.*)$')


def runs_of(reports):
    """[(start, end)] of consecutive W reports at most GAP_MS apart;
    any other report ends a run."""
    out = []
    prev_w = False
    for t, w in reports:
        if not w:
            prev_w = False
            continue
        if prev_w and out and t - out[-1][1] <= GAP_MS:
            out[-1][1] = t
        else:
            out.append([t, t])
        prev_w = True
    return out


def main():
    args = sys.argv[1:]
    jpath = None
    if args and args[0] == '--json':
        jpath = args[1]
        args = args[2:]
    rundir, nodes = args[0], int(args[1])
    states = defaultdict(lambda: defaultdict(list))  # tok -> (node, inst) -> [(t, W?)]
    commits = {}          # nonce -> (node, tok, seq)
    leaves = []           # (node, tok, acked, nonce, result, t, peer)
    reloads = defaultdict(list)   # node -> [t]
    faults = defaultdict(int)
    ops = defaultdict(int)
    violations = []
    seen = 0
    for n in range(1, nodes + 1):
        path = os.path.join(rundir, 'g%d.log' % n)
        try:
            lines = open(path, errors='replace').read().splitlines()
        except OSError as e:
            violations.append({'kind': 'log', 'node': n, 'what': str(e)})
            continue
        for line in lines:
            m = LINE.search(line)
            if not m:
                continue
            seen += 1
            kind, t, node, rest = m.group(1), int(m.group(2)), \
                int(m.group(3)), m.group(4).split()
            if kind == 'S' and len(rest) >= 4:
                states[rest[0]][(node, rest[3])].append((t, rest[1] == 'W'))
            elif kind == 'C' and len(rest) >= 3:
                commits[rest[2]] = (node, rest[0], int(rest[1]))
                ops['received'] += 1
            elif kind == 'L' and len(rest) >= 5:
                leaves.append((node, rest[0], int(rest[1]), rest[2],
                               rest[3], t, int(rest[4])))
                ops['migrations'] += 1
                ops[rest[3].replace('-', '_')] += 1
            elif kind == 'E':
                violations.append({'kind': 'plaintext', 'node': node,
                                   'time_ms': t, 'what': ' '.join(rest)})
            elif kind == 'N' and rest:
                faults[rest[0]] += 1
                if rest[0] == 'reload':
                    reloads[node].append(t)
            elif kind == 'O' and len(rest) >= 2 and rest[0] == 'writes':
                ops['writes'] += int(rest[1])
        kerr = os.path.join(rundir, 'g%d.kernel-errors' % n)
        if os.path.exists(kerr) and os.path.getsize(kerr):
            violations.append({'kind': 'kernel', 'node': n,
                               'what': open(kerr, errors='replace')
                               .read().splitlines()[0][:200]})
    if not seen:
        print('soak check: no soak lines in %s' % rundir)
        return 2
    # fork: two nodes writable at once
    for tok, per in states.items():
        rs = {n: runs_of(sorted(r)) for n, r in per.items()}
        ns = sorted(rs)
        for i, a in enumerate(ns):
            for b in ns[i + 1:]:
                for (s1, e1) in rs[a]:
                    for (s2, e2) in rs[b]:
                        ov = min(e1, e2) - max(s1, s2)
                        if ov > SKEW_MS:
                            violations.append({
                                'kind': 'fork', 'token': tok,
                                'nodes': [a, b], 'from_ms': max(s1, s2),
                                'overlap_ms': ov})
    # fork, clock-free: taken in where the source kept (or took back) it
    for node, tok, acked, nonce, result, t, peer in leaves:
        if result in ('failed', 'resolved-aborted', 'forced') and \
                nonce in commits:
            violations.append({'kind': 'fork', 'token': tok,
                               'nodes': [node, commits[nonce][0]],
                               'source_result': result, 'nonce': nonce})
    # lost: an acknowledged write missing at the destination
    unmatched = 0
    for node, tok, acked, nonce, result, t, peer in leaves:
        if result not in ('committed', 'resolved-committed'):
            continue
        c = commits.get(nonce)
        if not c:
            # the destination's agent killed by a reload before it said
            if any(r >= t - 60000 for r in reloads.get(peer, [])):
                unmatched += 1
            else:
                violations.append({'kind': 'lost', 'token': tok,
                                   'source': node, 'destination': peer,
                                   'acked': acked, 'received': None,
                                   'nonce': nonce})
            continue
        if c[1] != tok or c[2] < acked:
            violations.append({'kind': 'lost', 'token': tok,
                               'source': node, 'destination': c[0],
                               'acked': acked, 'received': c[2],
                               'nonce': nonce})
    ops['commits_unmatched'] = unmatched
    res = {'operations': dict(ops), 'faults': dict(faults),
           'tokens': len(states), 'violations': violations}
    print('soak check: %d tokens; operations %s; faults %s; %d violation(s)'
          % (len(states), json.dumps(dict(sorted(ops.items()))),
             json.dumps(dict(sorted(faults.items()))), len(violations)))
    for v in violations[:20]:
        print('soak violation: %s' % json.dumps(v))
    if jpath:
        with open(jpath, 'w') as f:
            json.dump(res, f, indent=1, sort_keys=True)
    return 1 if violations else 0


if __name__ == '__main__':
    sys.exit(main())
