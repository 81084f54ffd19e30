#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""layering.py - check the driver's layering on the module just built.

Reads the objects of driver/mmt.mod, takes each object's undefined
symbols (nm) and the object that defines them, and prints one line per
call from a file to a file that is not below it in LAYERS (the layering
that driver/mmt_internal.h's header comment writes down), unless the
call is in EXCEPTIONS.  lib/ (the engine) is below every driver file and
calls none of them.  The connection protocol's files (PROTOCOL) reach the
fabric only through struct mmt_fabric_ops (driver/mmt_fabric.h): their
code names no verbs or rdma_cm function, type or constant.  Exit status: 0 if none, 1 otherwise; 2 if the
module is not built.

Usage: scripts/layering.py [--graph]   (--graph: print every file's
callees, the layering as it is, and exit 0)
"""
import os
import re
import subprocess
import sys

# Lower numbers are lower layers; a file may call files of lower layers.
LAYERS = {
    # services every file uses
    'mmt_uaccess': 0,   # user copies
    'mmt_node': 0,      # node id, GUA allocator
    'mmt_stats': 0,     # counters, tracepoints
    'mmt_record': 0,    # this node's record of its receives
    'mmt_handshake': 0,  # the attested hello's cryptography
    # closures on PMOs
    'mmt_conn_fault': 1,  # test builds: an attacker on the wire
    'mmt_delegate': 1,  # a closure's seal and settle, sender side
    'mmt_pmo_io': 2,    # a PMO's pread and pwrite, the I/O workers
    'mmt_pmo': 3,       # the PMO object and its fd
    'mmt_migrate': 4,   # live migration, transport-neutral
    'mmt_ckpt': 5,      # checkpoint and restore (a migration to a buffer)
    'mmt_conn': 5,      # connection protocol helpers
    'mmt_loopback': 6,  # the local transport
    'mmt_attest': 6,    # attestation state, credentials
    'mmt_conn_core': 6,  # the protocol's connection object, its inboxes
    # the connection protocol (driver/mmt_proto.h), above its object
    'mmt_conn_hs': 7,   # hello, attested handshake, renewals
    'mmt_conn_tx': 7,   # a transfer's sender (MMT_IOC_SEND)
    'mmt_conn_rx': 7,   # a transfer's receiver (MMT_IOC_RECV)
    'mmt_conn_mig': 8,  # live migration over a connection, resolve
    'mmt_connfd': 9,    # the connection fd: its ioctls and fops
    # the loopback fabric: two connections of this node back to back
    'mmt_fabric_loop': 10,
    # the RDMA fabric (driver/*_rdma.c, driver/mmt_rdma.h): the protocol
    # calls it only through struct mmt_fabric_ops
    'mmt_conn_rdma': 10,  # a connection's verbs resources, completions, posts
    'mmt_fabric_rdma': 11,  # the fabric ops: messages, writes, grants
    'mmt_cm_rdma': 12,  # rdma_cm: connect, listen, accept; ib_client
    'mmt_ioctl': 13,    # /dev/mmt's ioctls
    'mmt_main': 14,     # module init and exit
}

# Calls up that the layering keeps for now, each with its reason.
EXCEPTIONS = {
    ('mmt_pmo', 'mmt_ckpt'):
        'the PMO fd dispatches MMT_IOC_PMO_CHECKPOINT and MIG_RESOLVE',
    ('mmt_pmo', 'mmt_loopback'):
        'the PMO fd dispatches MMT_IOC_PMO_DELEGATE_LOCAL',
    ('mmt_pmo_io', 'mmt_migrate'):
        'a write is throttled by the migration its PMO is the source of',
}


# The connection protocol, written against driver/mmt_fabric.h.
PROTOCOL = ['mmt_conn_core', 'mmt_conn_hs', 'mmt_conn_tx', 'mmt_conn_rx', 'mmt_conn_mig',
            'mmt_connfd']
# Files that name no verbs either: the protocol and the loopback fabric.
NO_VERBS = PROTOCOL + ['mmt_fabric_loop']
VERBS = re.compile(r'\b(?:ib|rdma)_\w+|\bIB_\w+|\bRDMA_\w+')


def verbs_used(path):
    """The verbs and rdma_cm names in @path's code (comments left out)."""
    with open(path) as f:
        src = f.read()
    src = re.sub(r'/\*.*?\*/', ' ', src, flags=re.S)
    src = re.sub(r'//[^\n]*', ' ', src)
    return sorted(set(VERBS.findall(src)))


def objects(top):
    mod = os.path.join(top, 'driver', 'mmt.mod')
    if not os.path.exists(mod):
        return None
    with open(mod) as f:
        return [o for o in f.read().split() if o.endswith('.o')]


def symbols(obj):
    out = subprocess.run(['nm', obj], capture_output=True, text=True,
                         check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        p = line.split()
        if len(p) == 3 and p[1] in 'TDBR':
            defined.add(p[2])
        elif len(p) == 2 and p[0] == 'U':
            undefined.add(p[1])
    return defined, undefined


def name(top, obj):
    rel = os.path.relpath(obj, top)
    return rel[:-2].replace('driver/', '')


def main():
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    objs = objects(top)
    if not objs:
        print('layering: driver/mmt.mod not found: build the module first')
        return 2
    owner, calls = {}, {}
    for o in objs:
        d, u = symbols(o)
        for s in d:
            owner[s] = name(top, o)
        calls[name(top, o)] = u
    edges = {}
    for f, u in calls.items():
        edges[f] = sorted({owner[s] for s in u
                           if s in owner and owner[s] != f})
    if '--graph' in sys.argv:
        for f in sorted(edges):
            print(f, '->', ' '.join(edges[f]))
        return 0
    bad = 0
    for f in sorted(edges):
        for t in edges[f]:
            if f.startswith('lib/'):
                if not t.startswith('lib/'):
                    print(f'layering: {f} (engine) calls the driver: {t}')
                    bad += 1
                continue
            if t.startswith('lib/'):
                continue
            if f not in LAYERS or t not in LAYERS:
                missing = f if f not in LAYERS else t
                print(f'layering: driver/{missing}.c has no layer in '
                      'scripts/layering.py (and mmt_internal.h)')
                bad += 1
                continue
            if LAYERS[t] < LAYERS[f] or (f, t) in EXCEPTIONS:
                continue
            print(f'layering: driver/{f}.c (layer {LAYERS[f]}) calls up '
                  f'into driver/{t}.c (layer {LAYERS[t]})')
            bad += 1
    for f in NO_VERBS:
        used = verbs_used(os.path.join(top, 'driver', f + '.c'))
        if used:
            print(f'layering: driver/{f}.c (no verbs) names the fabric\'s '
                  f'verbs directly: {" ".join(used)}')
            bad += 1
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
