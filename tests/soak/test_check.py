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
        'soak L %d 1 7 5 %s committed 2' % (T0 + 2500, NONCE_A)],
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
kept = {1: ['soak L %d 1 7 5 %s failed 2' % (T0 + 100, NONCE_A)],
        2: ['soak C %d 2 7 5 %s' % (T0 + 90, NONCE_A)]}
rc, res = run(kept)
expect('taken in where the source saw a failure: a fork',
       (rc, kinds(res)), (1, ['fork']))

# an acknowledged write missing at the destination
lost = {1: ['soak L %d 1 7 9 %s committed 2' % (T0 + 100, NONCE_A)],
        2: ['soak C %d 2 7 8 %s' % (T0 + 90, NONCE_A)]}
rc, res = run(lost)
expect('an older record taken in than acknowledged: lost',
       (rc, kinds(res)), (1, ['lost']))

# committed, never taken in, no reload: lost; with a reload: not
gone = {1: ['soak L %d 1 7 9 %s committed 2' % (T0 + 100, NONCE_B)]}
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

print('soak check: %d failed' % fails)
sys.exit(1 if fails else 0)
