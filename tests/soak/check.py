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
             more than SKEW_MS, each node's clock corrected as under
             "clock" below.  A run is a series of W reports of one copy
             at most GAP_MS apart, ended by any other report; (c) a
             closure of a delegation writable at both ends after it (at
             the source after its resolve, if any: mask 1 there, 1 at
             the destination; a closure the source holds read-only, R,
             is no writable copy), or VALID at the source after it
             succeeded; (d) a checkpoint's image restored twice, or
             restored after the PMO was taken back
  lost       a migration the source saw committed (or resolved committed)
             whose destination took in an older record than the source
             had acknowledged before it (an acknowledged write missing),
             or never said it took it in, unless its module was reloaded
             or its node reset around then (the token went with its
             memory); a closure of a delegation VALID at neither end, or
             VALID at the source only read-only (R: its resolve gave up,
             and the soak drops a token it cannot resolve) unless the
             destination's module was reloaded or its node reset around
             then (its record of the receive went with it); a checkpoint
             whose restore failed or read an older record
  plaintext  a record that does not match its id and seq
  kernel     a kernel report (Oops, WARNING, BUG, KASAN, ...) in a guest
  clock      two guests' clocks shown apart by more than SKEW_MS after
             the correction below, so that the clock rule (b) above
             cannot be trusted: a migration begins at its source (the L
             line's START) before its destination reports it taken in
             (the C line), so each C
             line's time minus its START is an upper bound on
             (destination's clock - source's clock); migrations both ways
             bound the pair's offset from both sides (printed).  Rule (b)
             reads each node's clock as node 1's, corrected by the middle
             of their pair's bounds (the guests' clocks under TCG drift
             apart by seconds); a pair whose bounds do not show it within
             SKEW_MS after that (no migration one way, or only slow ones)
             is counted as unmeasured

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
# mmt-soak's resolve() asks the destination for at most this long before
# the D or L line is written
RESOLVE_MS = 300000

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
    commits = {}          # nonce -> (node, tok, seq, t)
    leaves = []           # (node, tok, acked, nonce, result, t, peer, start)
    dsent = []            # (node, tok, seq, mask, result, t, peer, resolve)
    drecv = {}            # (tok, seq) -> (node, mask, result)
    ckpts = []            # (node, tok, acked, result, seq, t)
    last = defaultdict(int)       # node -> time of its last line
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
            last[node] = max(last[node], t)
            if kind == 'S' and len(rest) >= 4:
                states[rest[0]][(node, rest[3])].append((t, rest[1] == 'W'))
            elif kind == 'C' and len(rest) >= 3:
                commits[rest[2]] = (node, rest[0], int(rest[1]), t)
                ops['received'] += 1
            elif kind == 'L' and len(rest) >= 5:
                leaves.append((node, rest[0], int(rest[1]), rest[2],
                               rest[3], t, int(rest[4]),
                               int(rest[5]) if len(rest) > 5 else None))
                ops['migrations'] += 1
                ops[rest[3].replace('-', '_')] += 1
            elif kind == 'D' and len(rest) >= 5:
                # RESOLVE: - on the lines of agents that predate it
                rsv = rest[5] if len(rest) > 5 else '-'
                dsent.append((node, rest[0], int(rest[1]), rest[2],
                              rest[3], t, int(rest[4]), rsv))
                ops['delegations'] += 1
                ops['delegated' if rest[3] == 'ok' else
                    'delegations_failed'] += 1
                if rsv != '-':
                    ops['delegations_' + rsv.replace('-', '_')] += 1
            elif kind == 'X' and len(rest) >= 5:
                drecv[(rest[0], int(rest[1]))] = (node, rest[2], rest[3])
                ops['delegations_in_' + rest[4]] += 1
            elif kind == 'K' and len(rest) >= 4:
                ckpts.append((node, rest[0], int(rest[1]), rest[2],
                              int(rest[3]), t))
                ops['checkpoints'] += 1
                ops['checkpoints_' + re.sub(r'-\d+$', '', rest[2])
                    .replace('-', '_')] += 1
            elif kind == 'E':
                violations.append({'kind': 'plaintext', 'node': node,
                                   'time_ms': t, 'what': ' '.join(rest)})
            elif kind == 'N' and rest:
                if rest[0] != 'up':
                    faults[rest[0]] += 1
                if rest[0] in ('reload', 'reboot'):
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
    # the clocks: the offset of each pair, bounded by its migrations;
    # each node's clock is then read as node 1's, by the middle of its
    # pair's bounds, and every pair must agree within SKEW_MS after it
    up = {}
    for node, tok, acked, nonce, result, t, peer, start in leaves:
        c = commits.get(nonce)
        if c and c[0] != node and start is not None:
            d = c[3] - start
            key = (c[0], node)      # dest clock - source clock < d
            up[key] = min(up.get(key, d), d)
    corr = defaultdict(int)         # node -> its clock minus node 1's
    for n in range(2, nodes + 1):
        hi, lo = up.get((n, 1)), up.get((1, n))
        if hi is not None and lo is not None:
            corr[n] = (hi - lo) // 2
    clocks = {}
    for a in range(1, nodes + 1):
        for b in range(a + 1, nodes + 1):
            hi, lo = up.get((a, b)), up.get((b, a))
            iv = [-lo if lo is not None else None, hi]
            clocks['%d-%d' % (a, b)] = iv
            # shown within SKEW_MS once corrected, or not (too few or
            # slow migrations)
            est = corr[a] - corr[b]
            if lo is None or hi is None or -lo - est < -SKEW_MS or \
                    hi - est > SKEW_MS:
                ops['clock_pairs_unmeasured'] += 1
            # shown apart by more, corrected
            if (lo is not None and -lo - est > SKEW_MS) or \
                    (hi is not None and hi - est < -SKEW_MS):
                violations.append({'kind': 'clock', 'nodes': [a, b],
                                   'offset_ms': iv, 'corrected_by': est})
    # fork: two nodes writable at once (clocks corrected)
    for tok, per in states.items():
        rs = {n: runs_of(sorted((t - corr[n[0]], w) for t, w in r))
              for n, r in per.items()}
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
    for node, tok, acked, nonce, result, t, peer, start in leaves:
        if result in ('failed', 'resolved-aborted', 'forced') and \
                nonce in commits:
            violations.append({'kind': 'fork', 'token': tok,
                               'nodes': [node, commits[nonce][0]],
                               'source_result': result, 'nonce': nonce})
    # lost: an acknowledged write missing at the destination
    unmatched = 0
    for node, tok, acked, nonce, result, t, peer, start in leaves:
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
    # delegations: each closure writable at one end at most (a source's
    # R is read-only: the resolve gave up), held at one at least
    unmatched = 0
    full = '1' * 4
    for node, tok, seq, mask, result, t, peer, rsv in dsent:
        if result == 'ok' and mask != '0000':
            violations.append({'kind': 'fork', 'token': tok,
                               'delegation': seq, 'source': node,
                               'source_valid': mask,
                               'what': 'source VALID after success'})
        # the destination's module reloaded or its node reset between
        # the delegation and the line (written after the resolve), or
        # its agent gone before it could say
        excused = any(t - 60000 - (RESOLVE_MS if rsv != '-' else 0) <= r
                      <= t + 60000 for r in reloads.get(peer, [])) or \
            t > last.get(peer, 0) - 40000
        x = drecv.get((tok, seq))
        if not x:
            if mask == full:
                continue            # nothing left this node
            if excused:
                unmatched += 1      # the destination's agent gone
                continue
            violations.append({'kind': 'lost', 'token': tok,
                               'delegation': seq, 'source': node,
                               'destination': peer, 'source_valid': mask,
                               'destination_valid': None,
                               'source_resolve': rsv})
            continue
        both = ''.join('1' if a == '1' and b == '1' else '0'
                       for a, b in zip(mask, x[1]))
        # held: VALID at the destination, writable at the source, or
        # read-only there if the destination's record went with a reset
        held = ''.join('1' if b == '1' or a == '1' or
                       (a == 'R' and excused) else '0'
                       for a, b in zip(mask, x[1]))
        if '1' in both:
            violations.append({'kind': 'fork', 'token': tok,
                               'delegation': seq, 'nodes': [node, x[0]],
                               'source_valid': mask,
                               'destination_valid': x[1],
                               'source_result': result,
                               'source_resolve': rsv,
                               'destination_result': x[2]})
        if held != full:
            violations.append({'kind': 'lost', 'token': tok,
                               'delegation': seq, 'nodes': [node, x[0]],
                               'source_valid': mask,
                               'destination_valid': x[1],
                               'source_resolve': rsv})
    ops['delegations_unmatched'] = unmatched
    # checkpoints: one restore, of every acknowledged write
    for node, tok, acked, result, seq, t in ckpts:
        if result in ('again-restored', 'back-restored'):
            violations.append({'kind': 'fork', 'token': tok,
                               'node': node, 'checkpoint': result})
        elif result.startswith('restore-'):
            violations.append({'kind': 'lost', 'token': tok,
                               'node': node, 'checkpoint': result})
        elif result == 'restored' and seq < acked:
            violations.append({'kind': 'lost', 'token': tok,
                               'node': node, 'checkpoint': result,
                               'acked': acked, 'received': seq})
    res = {'operations': dict(ops), 'faults': dict(faults),
           'tokens': len(states), 'violations': violations,
           'clock_offset_ms': clocks,
           'clock_correction_ms': dict(corr)}
    print('soak check: %d tokens; operations %s; faults %s; %d violation(s)'
          % (len(states), json.dumps(dict(sorted(ops.items()))),
             json.dumps(dict(sorted(faults.items()))), len(violations)))
    print('soak check: clock offsets (ms, each pair a-b: clock a minus '
          'clock b lies between): %s' % json.dumps(clocks))
    for v in violations[:20]:
        print('soak violation: %s' % json.dumps(v))
    if jpath:
        with open(jpath, 'w') as f:
            json.dump(res, f, indent=1, sort_keys=True)
    return 1 if violations else 0


if __name__ == '__main__':
    sys.exit(main())
