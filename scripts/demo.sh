#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make demo` (after scripts/deps.sh): MMT closure delegation between two
# nodes, each a QEMU (TCG) guest booting Debian's kernel, joined by a QEMU
# link with Soft-RoCE (rdma_rxe) on both ends, or with FABRIC=siw
# Soft-iWARP (siw, built by scripts/siw-ko.sh: Debian's kernels lack it).
#
#  1. make all; build the guest programs (mmt-bench, mmt-attack, mmtctl,
#     static) and a test build of the module (MMT_DEBUG=1, which adds
#     MMT_IOC_PMO_DEBUG, the attacker's bit flipper for the tamper demo)
#     from a private copy of the sources (tests/guest/demo/build.sh).
#  2. Cut a slice of the Linux source tarball (/usr/src/linux-source-6.1.tar.xz,
#     installed by make deps) and share it with the guests over 9p.
#  3. Boot node A (10.0.0.1, node id 1) and node B (10.0.0.2, node id 2)
#     (tests/guest/run.sh, scripts tests/guest/demo/g-demo-{a,b}.sh).  A
#     sends the slice to B over the channels of one connection (mmt-bench):
#     plain (raw RDMA writes of plain PMOs, the paper's baseline), secure
#     (AES-GCM on plain PMOs, the paper's Intel-machine baseline),
#     secure-ctl (the secure channel on keyed PMOs, through the
#     controllers) and mmt; then perftest's ib_write_bw between the same
#     two guests at the same message size (one closure) as a second
#     reference for the wire.  B hashes what arrived.  Then A sends a
#     tampered closure and a replayed one; B must reject both.
#  4. Print per channel: bytes, the time, MB/s, sha256 at B against A's and
#     the host's; mmt/plain as a fraction (the paper's 0.88), secure/mmt,
#     ib_write_bw and mmt/ib_write_bw, all from the same run; the attacks'
#     outcomes, and a summary.
#
# Environment: DEMO_SLICE_MIB (default 64), DEMO_LEVELS (MMT levels of the
# PMOs, 1..4, default 3: 2 MiB closures), DEMO_SKIP_BUILD=1 (skip
# `make all`, e.g. when it was just run), DEMO_LINK and DEMO_NIC (run.sh
# --link and --nic; default stream and e1000), DEMO_TIMEOUT (QEMU limit,
# seconds, default 300), FABRIC (rxe, the default, or siw: run.sh --fabric).
# Outputs: build/demo/ (programs, test module, logs), build/guest/demo/
# (the guests' consoles g1.log = A, g2.log = B).
# Exit status: 0 if every part worked (a channel the module reports as not
# available, EOPNOTSUPP, is shown, not failed); 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=$ROOT/build/demo
SHARE=$OUT/share
SLICE_MIB=${DEMO_SLICE_MIB:-64}
# 3 levels: the paper's default geometry, 2 MiB closures
LEVELS=${DEMO_LEVELS:-3}
TIMEOUT=${DEMO_TIMEOUT:-300}
T0=$(date +%s)
FAIL=0

say() {
	echo "demo: $*"
}

# elapsed - seconds since the demo started
elapsed() {
	echo $(($(date +%s) - T0))
}

die() {
	say "FAILED: $*"
	exit 1
}

mkdir -p "$OUT" "$SHARE"
case ${FABRIC:-rxe} in
siw) FABRIC_NAME="Soft-iWARP (siw)" ;;
*) FABRIC_NAME="Soft-RoCE (rxe)" ;;
esac
say "MMT closure delegation between two nodes (QEMU guests, $FABRIC_NAME)"

# The kernel to build for and boot, resolved now that `make demo` has run
# scripts/deps.sh, and exported to the builds and the guests.
. scripts/lib.sh
mmt_kernel || die "no kernel headers"
say "kernel: ${KVER:-(from KDIR)}, build dir $KDIR"

# 1. build, saying what and how far: a line every MMT_PROGRESS_SECONDS
# (30) with the files compiled so far against the count expected
# (scripts/lib.sh, mmt_make_all_files)
if [ "${DEMO_SKIP_BUILD:-0}" != 1 ]; then
	t=$(date +%s)
	n=$(mmt_make_all_files)
	say "building: make all (the module for ${KVER:-$KDIR}, lib/, libmmt and the tools: about $n files to compile; log: $OUT/make.log)"
	mmt_progress "demo: make all" "$OUT/make.log" "$MMT_MAKE_ALL_PATTERN" "~$n" \
		make all ||
		{ tail -n 30 "$OUT/make.log"; die "make all (log: $OUT/make.log)"; }
	say "built: make all ($(($(date +%s) - t)) s)"
fi
t=$(date +%s)
say "building: the guest programs (mmt-bench, mmt-attack, mmtctl, static) and the test module (log: $OUT/build.log)"
mmt_progress "demo: guest programs and test module" "$OUT/build.log" '' '' \
	tests/guest/demo/build.sh "$OUT" ||
	{ tail -n 30 "$OUT/build.log"; die "tests/guest/demo/build.sh (log: $OUT/build.log)"; }
say "built: guest programs and the test module build/demo/ko/driver/mmt.ko" \
	"(MMT_DEBUG=1: adds MMT_IOC_PMO_DEBUG for the tamper demo; otherwise" \
	"the same code as driver/mmt.ko) ($(($(date +%s) - t)) s)"

# 2. the data: a slice of the Linux source tarball
# (the default kernel series', so that the figures do not change when
# another series' source is installed)
TARBALL=$(mmt_kernel_tarball) || die "no kernel source tarball"
head -c $((SLICE_MIB << 20)) "$TARBALL" >"$SHARE/slice.bin"
SLICE_BYTES=$(stat -c %s "$SHARE/slice.bin")
HOST_SHA=$(sha256sum "$SHARE/slice.bin" | cut -d' ' -f1)
say "data: the first $SLICE_MIB MiB ($SLICE_BYTES bytes) of $TARBALL," \
	"sha256 $HOST_SHA"
if [ "$SLICE_BYTES" -ne $((SLICE_MIB << 20)) ]; then
	die "the tarball is shorter than $SLICE_MIB MiB"
fi

# 3. the two nodes
case $LEVELS in
1) CLOSURE="4 KiB" ;;
2) CLOSURE="128 KiB" ;;
3) CLOSURE="2 MiB" ;;
4) CLOSURE="32 MiB" ;;
*) die "DEMO_LEVELS must be 1..4" ;;
esac
say "booting node A (10.0.0.1, node id 1) and node B (10.0.0.2, node id 2)," \
	"$FABRIC_NAME on both; MMT geometry: $LEVELS levels, $CLOSURE closures"
t=$(date +%s)
RUN_OK=1
tests/guest/run.sh --name demo --mem 1G --timeout "$TIMEOUT" \
	--link "${DEMO_LINK:-stream}" --nic "${DEMO_NIC:-e1000}" \
	--ko "$OUT/ko/driver/mmt.ko" --share "$SHARE" \
	--file "$OUT/bin/mmt-bench" --file "$OUT/bin/mmt-attack" \
	--file "$OUT/bin/mmtctl" \
	--append "demo_slice=${SLICE_MIB}M demo_levels=$LEVELS" \
	tests/guest/demo/g-demo-a.sh tests/guest/demo/g-demo-b.sh \
	>"$OUT/run.log" 2>&1 || RUN_OK=0
GUEST_S=$(($(date +%s) - t))
A=$ROOT/build/guest/demo/g1.log
B=$ROOT/build/guest/demo/g2.log
if [ ! -f "$A" ] || [ ! -f "$B" ]; then
	cat "$OUT/run.log"
	die "no guest logs"
fi
say "two-node run: ${GUEST_S} s of host time (boot, $FABRIC_NAME, 3 channels," \
	"attacks; TCG emulation: figures are for correctness, not speed)"
say "slice: $SLICE_MIB MiB per channel, the size asked for: it fits (the" \
	"whole demo must stay under 3 minutes here; DEMO_SLICE_MIB to change)"

# 4. the report
echo
echo "== node A: mmt-bench client (sends the slice) =="
grep -a -E '^(# |size |[0-9]+[KMG]? +(plain|secure|secure-ctl|mmt|[0-9.]+|n/a) |ib_write_bw |mmt-bench client: (peer|[a-z-]+ channel|set-up|iteration|ib_write_bw:))' "$A" || true
echo
echo "== node B: mmt-bench server (receives) =="
grep -a -E '^(size  +channel|[0-9]+[KMG]? +(plain|secure|secure-ctl|mmt) |mmt-bench server: (peer|read back|iteration))' "$B" || true
echo
echo "== attacks (mmt-attack) =="
grep -a -h -E '^(ok|not ok) - attack |^attack: ' "$A" "$B" || true

A_SHA=$(awk '/^DEMO-SHA A slice/ { print $4 }' "$A")
echo
echo "== summary =="
printf '%-11s %-12s %-14s %-9s %s\n' channel bytes "time (kernel)" "MB/s" \
	"sha256 at B = A's"
for ch in plain secure secure-ctl mmt; do
	row=$(grep -a -E "^[0-9]+[KMG]? +$ch " "$A" | head -n 1 || true)
	b_sha=$(awk -v c="$ch" '$1 == "DEMO-SHA" && $2 == "B" && $3 == c { print $4 }' "$B")
	b_len=$(awk -v c="$ch" '$1 == "DEMO-SHA" && $2 == "B" && $3 == c { print $5 }' "$B")
	case $row in
	*"not available"*)
		printf '%-11s %s\n' "$ch" "not available in this module (EOPNOTSUPP)"
		continue
		;;
	"" | *failed*)
		printf '%-11s %s\n' "$ch" "FAILED: ${row:-no result}"
		FAIL=1
		continue
		;;
	esac
	# size channel moved closures iters mean (min) recv wall MB/s verified
	ms=$(echo "$row" | awk '{ print $6 }')
	mbs=$(echo "$row" | awk '{ print $10 }')
	if [ -n "$b_sha" ] && [ "$b_sha" = "$A_SHA" ] &&
	   [ "$b_sha" = "$HOST_SHA" ] && [ "$b_len" = "$SLICE_BYTES" ]; then
		res="yes (${b_sha:0:16}...)"
	else
		res="NO (B: ${b_sha:-none} ${b_len:-?} bytes)"
		FAIL=1
	fi
	printf '%-11s %-12s %-14s %-9s %s\n' "$ch" "$b_len" \
		"$(awk -v m="$ms" 'BEGIN { printf "%.3f s", m / 1000 }')" \
		"$mbs" "$res"
done
# size plain secure secure-ctl mmt mmt/plain secure/mmt secure-ctl/mmt
ratio=$(grep -a -E "^[0-9]+[KMG]? +([0-9.]+|n/a) +([0-9.]+|n/a) " "$A" |
	tail -n 1 || true)
IBWB=$(grep -a -E '^ib_write_bw ' "$A" | tail -n 1 || true)
case $IBWB in
"ib_write_bw not run"*)
	echo "$IBWB"
	;;
"")
	echo "ib_write_bw: no line from mmt-bench (see $A)"
	;;
*)
	# ib_write_bw 2M x 32: 50.12 MB/s (47.80 MiB/s); mmt/ib_write_bw 0.87; ...
	echo "$IBWB" | awk '{ sub(":", "", $4); printf "ib_write_bw %s x %s: %s MB/s (perftest, the same two guests, one closure per write)\n", $2, $4, $5 }'
	;;
esac
if [ -n "$ratio" ]; then
	echo "$ratio" | awk '{
		printf "mmt/plain: %s (MMT delegation'"'"'s MB/s as a fraction of the plain channel'"'"'s; paper: 9.68/11 GB/s = 0.88)\n", $6
		sx = ($7 + 0 > 0) ? sprintf(", mmt %.2fx faster", 1 / $7) : ""
		printf "secure/mmt: %s%s (paper: 1/13); secure-ctl/mmt: %s\n", $7, sx, $8
	}'
fi
if [ -n "$IBWB" ] && [ "${IBWB#ib_write_bw not run}" = "$IBWB" ]; then
	echo "$IBWB" | sed -n 's/.*; \(mmt\/ib_write_bw [^;]*\); \(plain\/ib_write_bw .*\)$/\1, \2/p'
fi
# count PATTERN - lines matching PATTERN in both guest logs
count() {
	cat "$A" "$B" | grep -a -c "$1" || true
}
TAMPER=$(count '^ok - attack tamper')
REPLAY=$(count '^ok - attack replay')
BAD=$(count '^not ok - attack')
if grep -a -q 'attack: tamper: .*rejected: EBADMSG' "$B" &&
   [ "$BAD" = 0 ]; then
	echo "tampered closure: rejected with EBADMSG (integrity check), receive PMO stayed WAITING; the untampered closure then accepted ($TAMPER checks ok)"
else
	echo "tampered closure: NOT shown as rejected (see $B)"
	FAIL=1
fi
if grep -a -q 'attack: replay: .*rejected: ESTALE' "$B" && [ "$BAD" = 0 ]; then
	echo "replayed closure: rejected with ESTALE (root counter not above the one B accepted), receive PMO stayed WAITING ($REPLAY checks ok)"
else
	echo "replayed closure: NOT shown as rejected (see $B)"
	FAIL=1
fi
GUEST_FAILS=$(count '^not ok - ')
if [ "$RUN_OK" != 1 ] || [ "$GUEST_FAILS" != 0 ]; then
	echo "guest checks: $GUEST_FAILS failed; run log:"
	tail -n 20 "$OUT/run.log"
	FAIL=1
else
	echo "guest checks: all passed; kernel logs clean (no Oops/WARNING/BUG)"
fi
echo "data: first $SLICE_MIB MiB of $(basename "$TARBALL"); MMT geometry $LEVELS levels ($CLOSURE closures), 64-byte blocks"
echo "total: $(elapsed) s (two-node run ${GUEST_S} s); logs: build/guest/demo/g1.log (A), g2.log (B)"
if [ $FAIL -eq 0 ]; then
	say "OK"
else
	say "FAILED (see above)"
fi
exit $FAIL
