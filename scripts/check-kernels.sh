#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make check-kernels`: the guest runs that cover the module's surfaces on
# every supported kernel series (MMT_KERNEL_SERIES, scripts/lib.sh) other
# than the default one, which `make check` boots.  For each such series
# whose newest kernel has its headers (/lib/modules/<ver>/build), its image
# (/boot/vmlinuz-<ver>) and its modules installed, it builds the module
# (W=1) for that kernel in $O/kernels/<ver>/, then runs tests/guest/tests
# with KVER=<ver> (the guests boot that kernel; the test builds are made
# for it), its run directories in $O/guest-<ver>/.  A series that is not
# installed is skipped with a message, never failed.
#
#   KERNELS_RUNS  the runs (default: basic pair xfer attack migrate pmo
#                 attest criu, on Debian's kernels: no @debug)
#   KERNELS       the series to run (default: every supported series but
#                 the first, the default kernel)
#
# Prints, per kernel, the harness's lines and its "# host time" line, then
# a summary line per kernel and "check-kernels: N passed, N failed"; exits
# 1 if any check failed.
set -uo pipefail

. "$(dirname "$0")/lib.sh"
cd "$mmt_top" || exit 1

out=${O:-build}
runs=${KERNELS_RUNS:-basic pair xfer attack migrate pmo attest criu}
if [ -n "${KERNELS:-}" ]; then
	series=$KERNELS
elif [ "${MMT_KERNEL_SERIES#* }" != "$MMT_KERNEL_SERIES" ]; then
	series=${MMT_KERNEL_SERIES#* }
else
	series=
fi
total_pass=0
total_fail=0
summary=()

# the user-space programs some runs ship (mmtctl, the CRIU plugin, the
# attestation tools): built once, for every kernel
if ! make -s user tools >&2; then
	echo "not ok - check-kernels: make user tools"
	echo "check-kernels: 0 passed, 1 failed"
	exit 1
fi

for s in $series; do
	if ! v=$(mmt_series_kver "$s"); then
		echo "check-kernels: $s: not installed (no /lib/modules/$s.*/build: linux-headers-$s*); skipped"
		summary+=("$s: not installed, skipped")
		continue
	fi
	if [ ! -f "/boot/vmlinuz-$v" ] || [ ! -d "/lib/modules/$v/kernel" ]; then
		echo "check-kernels: $s: $v has headers but no image (/boot/vmlinuz-$v, linux-image-$v); skipped"
		summary+=("$s: $v without image, skipped")
		continue
	fi
	echo "==== check-kernels: kernel $v (series $s): $runs"
	t0=$(date +%s)
	kdir=$out/kernels/$v
	rm -rf "$kdir"
	mkdir -p "$kdir"
	cp Kbuild "$kdir/"
	for d in driver lib uapi; do
		mkdir -p "$kdir/$d"
		cp "$d"/*.[ch] "$kdir/$d/"
	done
	rm -f "$kdir"/driver/*.mod.c
	log=$out/check-kernels-$v.log
	if ! make -s -C "/lib/modules/$v/build" M="$PWD/$kdir" W=1 modules \
		>"$log.build" 2>&1; then
		cat "$log.build"
		echo "not ok - check-kernels: $v: the module's build (W=1)"
		total_fail=$((total_fail + 1))
		summary+=("$v: module build failed")
		continue
	fi
	# shellcheck disable=SC2086 # the list of runs, one word each
	KVER=$v KDIR=/lib/modules/$v/build MMT_KO=$PWD/$kdir/driver/mmt.ko \
		GUEST_BUILD=$PWD/$out/guest-$v \
		tests/guest/tests --only $runs 2>&1 | tee "$log"
	line=$(grep -E '^guest tests: [0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
	if [ -z "$line" ]; then
		echo "not ok - check-kernels: $v: tests/guest/tests printed no summary"
		total_fail=$((total_fail + 1))
		summary+=("$v: no summary ($log)")
		continue
	fi
	p=$(echo "$line" | sed -E 's/^guest tests: ([0-9]+) passed.*/\1/')
	f=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
	summary+=("$v: $p passed, $f failed, $(($(date +%s) - t0)) s; $(grep '^# host time:' "$log" | tail -n 1 | sed 's/^# host time: //')")
done

echo "==== check-kernels summary"
if [ ${#summary[@]} -eq 0 ]; then
	echo "check-kernels: no series but the default ($MMT_KERNEL_SERIES): nothing to run"
fi
for l in "${summary[@]}"; do
	echo "check-kernels: $l"
done
echo "check-kernels: $total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
