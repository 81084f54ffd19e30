#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make demo-migrate` (after scripts/deps.sh): live migration of a key-value
# store between two nodes, each a QEMU (TCG) guest booting Debian's kernel,
# joined by a QEMU link with Soft-RoCE (docs/MIGRATION.md, "The key-value
# demo").
#
#  1. make all (the module and libmmt); tools/mmt-kv.c built static with
#     libmmt into build/demo-migrate/bin/mmt-kv.
#  2. Boot node A (10.0.0.1, node id 1) and node B (10.0.0.2, node id 2)
#     (tests/guest/run.sh, scripts tests/guest/demo/g-kv-{a,b}.sh).  In A
#     the store (mmt-kv src) keeps its whole hash table in a PMO and serves
#     PUT/GET over TCP to a client (mmt-kv client) that keeps writing; after
#     KV_START requests A migrates the PMO to B (MMT_IOC_MIGRATE_SEND, B
#     MMT_IOC_MIGRATE_RECV) while serving on; the first request after the
#     commit gets "MOVED" (a write refused with EPERM did not happen); the
#     client reconnects to B, sends that request again and goes on; at the
#     end it checks every key against B's store.
#  3. The measurement in the same guests: a KV_MIB_M MiB PMO (64) migrated
#     while a writer dirties 1 % of its closures per round; rounds, bytes,
#     downtime against the expected downtime, and the peak extra kernel
#     memory on each node (the module's peak_extra_bytes, and Slab +
#     VmallocUsed from /proc/meminfo sampled every 10 ms).
#  4. Print the client's figures (requests, the longest gap between
#     acknowledged requests, the downtime A reported), the check, the
#     measurement, and OK or FAILED.
#
# Environment: KV_MIB (store PMO, MiB, default 8), KV_TABLE_KIB (the hash
# table's part of it, default 1024: 8 closures of 128 KiB; the rest is free
# capacity, migrated once), KV_START (requests before migrating, 300),
# KV_ROUNDS (round limit, 8), KV_PACE_US (client's pause between requests,
# 2000), KV_AFTER (requests at B before the check, 300), KV_MIB_M (64; 0:
# no measurement), DEMO_SKIP_BUILD=1, DEMO_TIMEOUT (QEMU limit, s, 400).
# Outputs: build/demo-migrate/ (program, run log), build/guest/demo-migrate/
# (consoles g1.log = A, g2.log = B).  Exit: 0 if every check passed.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=$ROOT/build/demo-migrate
T0=$(date +%s)
FAIL=0

say() {
	echo "demo-migrate: $*"
}

die() {
	say "FAILED: $*"
	exit 1
}

mkdir -p "$OUT/bin"
say "live migration of a key-value store between two nodes (QEMU guests, Soft-RoCE)"
. scripts/lib.sh
mmt_kernel || die "no kernel headers"
if [ "${DEMO_SKIP_BUILD:-0}" != 1 ]; then
	n=$(mmt_make_all_files)
	say "building: make all (the module for ${KVER:-$KDIR}, lib/, libmmt and the tools: about $n files to compile; log: $OUT/make.log)"
	mmt_progress "demo-migrate: make all" "$OUT/make.log" \
		"$MMT_MAKE_ALL_PATTERN" "~$n" make all ||
		{ tail -n 30 "$OUT/make.log"; die "make all (log: $OUT/make.log)"; }
fi
[ -f driver/mmt.ko ] || die "no driver/mmt.ko (make module)"
${CC:-gcc} -static -O2 -g -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE \
	-pthread -Iuapi -Itools/lib -o "$OUT/bin/mmt-kv" tools/mmt-kv.c \
	tools/lib/libmmt.c || die "building mmt-kv"
say "built: driver/mmt.ko, build/demo-migrate/bin/mmt-kv (static, libmmt)"

APPEND="kv_mib=${KV_MIB:-8} kv_table_kib=${KV_TABLE_KIB:-1024}"
APPEND+=" kv_start=${KV_START:-300} kv_rounds=${KV_ROUNDS:-8}"
APPEND+=" kv_pace_us=${KV_PACE_US:-2000} kv_after=${KV_AFTER:-300}"
APPEND+=" kv_mib_m=${KV_MIB_M:-64}"
say "booting node A (10.0.0.1) and node B (10.0.0.2): $APPEND"
t=$(date +%s)
RUN_OK=1
tests/guest/run.sh --name demo-migrate --mem 1G \
	--timeout "${DEMO_TIMEOUT:-400}" --link stream --nic e1000 \
	--ko driver/mmt.ko --file "$OUT/bin/mmt-kv" --append "$APPEND" \
	tests/guest/demo/g-kv-a.sh tests/guest/demo/g-kv-b.sh \
	>"$OUT/run.log" 2>&1 || RUN_OK=0
GUEST_S=$(($(date +%s) - t))
A=$ROOT/build/guest/demo-migrate/g1.log
B=$ROOT/build/guest/demo-migrate/g2.log
[ -f "$A" ] && [ -f "$B" ] || { cat "$OUT/run.log"; die "no guest logs"; }

echo
echo "== node A: the store (mmt-kv src) and the client =="
grep -a -h '^KV-A ' "$A" | sed 's/^KV-A //' || true
echo
echo "== node B: the store after the move (mmt-kv dst) =="
grep -a -h '^KV-B ' "$B" | sed 's/^KV-B //' || true
if [ "${KV_MIB_M:-64}" != 0 ]; then
	echo
	echo "== measurement: ${KV_MIB_M:-64} MiB, 128 KiB closures, a writer dirtying 1 % of the closures per round =="
	grep -a -h '^KV-M-A src: migration' "$A" | sed 's/^KV-M-A //' || true
	grep -a -h '^KV-M-B dst: migration' "$B" | sed 's/^KV-M-B //' || true
fi
echo
echo "== summary =="
if grep -a -q '^KV-A client: every key checked' "$A"; then
	grep -a -h -E '^KV-A client: (check at B|longest gap|migration as A)' "$A" |
		sed 's/^KV-A client: //'
else
	echo "the client's check did NOT pass (see $A)"
	FAIL=1
fi
GUEST_FAILS=$(cat "$A" "$B" | grep -a -c '^not ok - ' || true)
if [ "$RUN_OK" != 1 ] || [ "$GUEST_FAILS" != 0 ]; then
	echo "guest checks: $GUEST_FAILS failed; run log:"
	tail -n 20 "$OUT/run.log"
	FAIL=1
else
	echo "guest checks: all passed; kernel logs clean (no Oops/WARNING/BUG)"
fi
echo "figures: TCG emulation and Soft-RoCE: counts and ratios, not speed"
echo "total: $(($(date +%s) - T0)) s (two-node run ${GUEST_S} s); logs: build/guest/demo-migrate/g1.log (A), g2.log (B)"
if [ $FAIL -eq 0 ]; then say OK; else say "FAILED (see above)"; fi
exit $FAIL
