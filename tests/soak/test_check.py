#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""test_check.py - the soak's checker (check.py) against made-up logs:
each kind of violation it must report, and the histories it must not
take for one.  Prints "ok - ..." / "not ok - ..." lines; exits 1 on a
failure.  No guest: make check's unit stage runs it.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
T0 = 1796000000000
NONCE_A = 'aa' * 16
NONCE_B = 'bb' * 16


def s(t, node, tok, state, inst, seq=5):
    return 'soak S %d %d %s %s %d %d' % (T0 + t, node, tok, state, seq, inst)


def run(logs, kerr=None):
    """Run check.py over {node: [lines]}; return (exit code, JSON)."""
    with tempfile.TemporaryDirectory() as d:
        for n in (1, 2, 3):
            with open(os.path.join(d, 'g%d.log' % n), 'w') as f:
                f.write('\n'.join(logs.get(n, [])) + '\n')
            with open(os.path.join(d, 'g%d.kernel-errors' % n), 'w') as f:
                f.write((kerr or {}).get(n, ''))
        j = os.path.join(d, 'soak.json')
        rc = subprocess.run([sys.executable, os.path.join(HERE, 'check.py'),
                             '--json', j, d, '3'],
                            stdout=subprocess.DEVNULL).returncode
        res = json.load(open(j)) if os.path.exists(j) else None
        return rc, res


def kinds(res):
    return sorted(v['kind'] for v in (res or {}).get('violations', []))


fails = 0


def expect(name, got, want):
    global fails
    if got == want:
        print('ok - soak check: %s' % name)
    else:
        fails += 1
        print('not ok - soak check: %s (%r, want %r)' % (name, got, want))


# a clean migration of token 7 from node 1 to node 2: W, F, then W there
clean = {
    1: [s(0, 1, 7, 'W', 1), s(1000, 1, 7, 'W', 1), s(2000, 1, 7, 'F', 1),
        'soak L %d 1 7 5 %s committed 2 %d' % (T0 + 2500, NONCE_A, T0 + 2000)],
    2: ['soak C %d 2 7 6 %s' % (T0 + 2400, NONCE_A),
        s(3000, 2, 7, 'W', 1, 6), s(4000, 2, 7, 'W', 1, 7)],
}
rc, res = run(clean)
expect('a clean migration: no violation, exit 0', (rc, kinds(res)), (0, []))

# the same token writable on two nodes for 5 s
fork = {1: [s(t, 1, 7, 'W', 1) for t in range(0, 6000, 1000)],
        2: [s(t, 2, 7, 'W', 1) for t in range(0, 6000, 1000)]}
rc, res = run(fork)
expect('two nodes writable at once: a fork', (rc, kinds(res)), (1, ['fork']))

# two copies of one token on one node
fork1 = {1: [s(t, 1, 7, 'W', 1) for t in range(0, 6000, 1000)] +
         [s(t, 1, 7, 'W', 2) for t in range(0, 6000, 1000)]}
rc, res = run(fork1)
expect('two copies on one node: a fork', (rc, kinds(res)), (1, ['fork']))

# clock-free: the destination took in what its source kept
kept = {1: ['soak L %d 1 7 5 %s failed 2 %d' % (T0 + 100, NONCE_A, T0)],
        2: ['soak C %d 2 7 5 %s' % (T0 + 90, NONCE_A)]}
rc, res = run(kept)
expect('taken in where the source saw a failure: a fork',
       (rc, kinds(res)), (1, ['fork']))

# an acknowledged write missing at the destination
lost = {1: ['soak L %d 1 7 9 %s committed 2 %d' % (T0 + 100, NONCE_A, T0)],
        2: ['soak C %d 2 7 8 %s' % (T0 + 90, NONCE_A)]}
rc, res = run(lost)
expect('an older record taken in than acknowledged: lost',
       (rc, kinds(res)), (1, ['lost']))

# committed, never taken in, no reload: lost; with a reload: not
gone = {1: ['soak L %d 1 7 9 %s committed 2 %d' % (T0 + 100, NONCE_B, T0)]}
rc, res = run(gone)
expect('committed and never taken in: lost', (rc, kinds(res)), (1, ['lost']))
gone[2] = ['soak N %d 2 reload' % (T0 + 50)]
rc, res = run(gone)
expect('... unless the destination was reloaded then',
       (rc, kinds(res)), (0, []))

# a round trip A -> B -> A within 2 s: no fork
trip = {1: [s(0, 1, 7, 'W', 1), s(1000, 1, 7, 'W', 1),
            s(2900, 1, 7, 'W', 2), s(3900, 1, 7, 'W', 2)],
        2: [s(1900, 2, 7, 'W', 1)]}
rc, res = run(trip)
expect('a quick round trip: no fork', (rc, kinds(res)), (0, []))

# a kernel report
rc, res = run(clean, {3: 'BUG: KASAN: use-after-free in mmt_x\n'})
expect('a kernel report', (rc, kinds(res)), (1, ['kernel']))

# a plaintext mismatch
bad = dict(clean)
bad[3] = ['soak E %d 3 ? plaintext %s' % (T0, NONCE_A)]
rc, res = run(bad)
expect('a plaintext mismatch', (rc, kinds(res)), (1, ['plaintext']))

# delegations: a part each side is fine; a closure at both, or neither, not
split = {1: ['soak D %d 1 7 12 0011 104 2' % (T0 + 100)],
         2: ['soak X %d 2 7 12 1100 104 lazy' % (T0 + 90)]}
rc, res = run(split)
expect('a delegation split by a failure, each closure at one end: fine',
       (rc, kinds(res)), (0, []))
both = {1: ['soak D %d 1 7 12 0001 104 2' % (T0 + 100)],
        2: ['soak X %d 2 7 12 1111 ok eager' % (T0 + 90)]}
rc, res = run(both)
expect('a delegated closure VALID at both ends (a line without RESOLVE): '
       'a fork',
       (rc, kinds(res)), (1, ['fork']))
kept = {1: ['soak D %d 1 7 12 0001 ok 2' % (T0 + 100)],
        2: ['soak X %d 2 7 12 1110 ok eager' % (T0 + 90)]}
rc, res = run(kept)
expect('a closure VALID at the source after success: a fork',
       (rc, sorted(set(kinds(res)))), (1, ['fork']))
neither = {1: ['soak D %d 1 7 12 0011 104 2' % (T0 + 100)],
           2: ['soak X %d 2 7 12 1000 104 lazy' % (T0 + 90),
               'soak O %d 2 writes 1' % (T0 + 90000)]}
rc, res = run(neither)
expect('a delegated closure VALID at neither end: lost',
       (rc, kinds(res)), (1, ['lost']))
del neither[2][0]
rc, res = run(neither)
expect('a delegation half gone, the destination silent: lost',
       (rc, kinds(res)), (1, ['lost']))
neither[2].append('soak N %d 2 reboot' % (T0 + 50))
rc, res = run(neither)
expect('... unless the destination was reset then',
       (rc, kinds(res)), (0, []))

# delegations whose verdicts were lost: the source read-only until the
# destination says its receive ended (ETIMEDOUT, 110), its lines written
# after the resolve
strict = {1: ['soak D %d 1 7 12 0011 110 2 resolved-ended' % (T0 + 2000)],
          2: ['soak X %d 2 7 12 1100 110 lazy' % (T0 + 90)]}
rc, res = run(strict)
expect('a delegation resolved ended, what the destination took INVALID '
       'at the source: fine', (rc, kinds(res)), (0, []))
ended = {1: ['soak D %d 1 7 12 0111 110 2 resolved-ended' % (T0 + 2000)],
         2: ['soak X %d 2 7 12 1100 110 lazy' % (T0 + 90)]}
rc, res = run(ended)
expect('resolved ended, a closure the destination took writable at the '
       'source: a fork', (rc, kinds(res)), (1, ['fork']))
rdonly = {1: ['soak D %d 1 7 12 RRRR 110 2 unknown' % (T0 + 300100)],
          2: ['soak X %d 2 7 12 1111 ok eager' % (T0 + 90),
              'soak O %d 2 writes 1' % (T0 + 400000)]}
rc, res = run(rdonly)
expect('a closure read-only at the source (R), VALID at the destination: '
       'no fork', (rc, kinds(res)), (0, []))
rlost = {1: ['soak D %d 1 7 12 RRRR 110 2 unknown' % (T0 + 300100)],
         2: ['soak X %d 2 7 12 1100 110 lazy' % (T0 + 90),
             'soak O %d 2 writes 1' % (T0 + 400000)]}
rc, res = run(rlost)
expect('a closure read-only at the source (R), not at the destination, '
       'no reset: lost', (rc, kinds(res)), (1, ['lost']))
rlost[2].insert(1, 'soak N %d 2 reboot' % (T0 + 5000))
rc, res = run(rlost)
expect('... unless the destination was reset during the resolve',
       (rc, kinds(res)), (0, []))
rgone = {1: ['soak D %d 1 7 12 RRRR 110 2 unknown' % (T0 + 300100)],
         2: ['soak O %d 2 writes 1' % (T0 + 400000)]}
rc, res = run(rgone)
expect('read-only at the source (R), the destination silent: lost',
       (rc, kinds(res)), (1, ['lost']))
rgone[2].insert(0, 'soak N %d 2 reload' % (T0 + 3000))
rc, res = run(rgone)
expect('... unless the destination was reloaded during the resolve',
       (rc, kinds(res)), (0, []))
forced = {1: ['soak D %d 1 7 12 1111 110 2 forced' % (T0 + 100)],
          2: ['soak X %d 2 7 12 1100 110 lazy' % (T0 + 90)]}
rc, res = run(forced)
expect('a delegation forced writable at the source, closures taken in at '
       'the destination: a fork', (rc, kinds(res)), (1, ['fork']))
rc, res = run(strict)
expect('... the resolves counted',
       res['operations'].get('delegations_resolved_ended'), 1)

# checkpoints
ck = {1: ['soak K %d 1 7 9 restored 9' % (T0 + 100),
          'soak K %d 1 8 9 taken-back 0' % (T0 + 200),
          'soak K %d 1 6 3 failed-16 0' % (T0 + 300)]}
rc, res = run(ck)
expect('checkpoints restored once or taken back: fine',
       (rc, kinds(res)), (0, []))
for line, kind in (('again-restored 9', 'fork'), ('back-restored 0', 'fork'),
                   ('restore-116 0', 'lost'), ('restored 8', 'lost')):
    rc, res = run({1: ['soak K %d 1 7 9 %s' % (T0 + 100, line)]})
    expect('a checkpoint %s: %s' % (line.split()[0], kind),
           (rc, kinds(res)), (1, [kind]))

# node 1's clock 5 s ahead of node 2's: a migration 1 -> 2 taken in
# "before" it began
ahead = {1: ['soak L %d 1 7 5 %s committed 2 %d' % (T0 + 5600, NONCE_A,
                                                    T0 + 5000)],
         2: ['soak C %d 2 7 6 %s' % (T0 + 300, NONCE_A)]}
rc, res = run(ahead)
expect('two clocks 5 s apart: the clock rule is void',
       (rc, kinds(res)), (1, ['clock']))
expect('... the offset bounded from the migration',
       res['clock_offset_ms']['1-2'], [4700, None])
rc, res = run(clean)
expect('a clean migration bounds the offset of its pair from one side',
       res['clock_offset_ms']['1-2'], [-400, None])

# node 2's clock 4 s behind, measured both ways: token 7 on node 1 until
# (true) 12 s, then on node 2 from 12.5 s: not a fork once corrected
D2 = -4000
NONCE_C = 'cc' * 16
drift = {1: [s(t, 1, 7, 'W', 1) for t in range(0, 12000, 1000)] +
         ['soak L %d 1 7 5 %s committed 2 %d' % (T0 + 12600, NONCE_A,
                                                 T0 + 11800),
          'soak C %d 1 8 5 %s' % (T0 + 20300, NONCE_C)],
         2: ['soak C %d 2 7 6 %s' % (T0 + 12400 + D2, NONCE_A),
             'soak L %d 2 8 5 %s committed 1 %d' % (T0 + 20500 + D2,
                                                    NONCE_C, T0 + 20000 + D2)]
         + [s(t + D2, 2, 7, 'W', 1) for t in range(12500, 18000, 1000)]}
rc, res = run(drift)
expect('a clock 4 s behind, measured both ways: corrected, no fork',
       (rc, kinds(res), res['clock_correction_ms'].get('2')),
       (0, [], D2 + 150))
rc, res = run({1: drift[1][:12], 2: drift[2][2:]})
expect('... the same reports without the migrations: a fork by the raw clocks',
       (rc, kinds(res)), (1, ['fork']))

print('soak check: %d failed' % fails)
sys.exit(1 if fails else 0)
