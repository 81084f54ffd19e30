#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run.sh - host side of the PMO guest tests: build the static programs
# (tests/pmo/build.sh), build a test module with MMT_DEBUG=1 in a private
# copy of the sources (so driver/mmt.ko is not touched), and boot one guest
# with tests/guest/run.sh running tests/pmo/guest.sh.
#
# Usage: tests/pmo/run.sh [--quick] [run.sh options...]
#   --quick   2000 fuzz iterations, 400 cycles, no 64 MiB round trips
#   Other options go to tests/guest/run.sh (e.g. --timeout, --append).
# The guest boots with slub_debug=U,kmalloc-* (exact slab counts for the
# leak check, as tests/guest/tests does for g-basic.sh).
# Environment: PMO_KO (use this module instead of building a debug one; not
# MMT_KO, which tests/guest/tests sets to the normal build), KDIR, KVER (the
# kernel to build for; default the default kernel series' newest, see
# scripts/lib.sh).
# Outputs: build/guest/pmo/ (g1.log and friends, see tests/guest/run.sh).
# Exit status: that of tests/guest/run.sh.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PROGS=$ROOT/build/guest-progs
KOBUILD=$ROOT/build/pmo-ko
APPEND='slub_debug=U,kmalloc-*'
ARGS=()

while [ $# -gt 0 ]; do
	case $1 in
	--quick) APPEND="$APPEND pmo_fuzz_iters=2000 pmo_cycles=400 pmo_no_64m=1" ;;
	--append) APPEND="$APPEND $2"; shift ;;
	*) ARGS+=("$1") ;;
	esac
	shift
done

"$HERE/build.sh" "$PROGS"

KO=${PMO_KO:-}
if [ -z "$KO" ]; then
	. "$ROOT/scripts/lib.sh"
	mmt_kernel
	rm -rf "$KOBUILD"
	mkdir -p "$KOBUILD"
	cp "$ROOT/Kbuild" "$KOBUILD/"
	for d in driver lib uapi; do
		mkdir -p "$KOBUILD/$d"
		cp "$ROOT/$d"/*.[ch] "$KOBUILD/$d/"
	done
	rm -f "$KOBUILD"/driver/*.mod.c
	make -s -C "$KDIR" M="$KOBUILD" MMT_DEBUG=1 modules >&2
	KO=$KOBUILD/driver/mmt.ko
fi

FILES=()
for f in "$PROGS"/*; do
	FILES+=(--file "$f")
done
exec "$ROOT/tests/guest/run.sh" --name pmo --mem 1G --timeout 1200 \
	--ko "$KO" "${FILES[@]}" --append "$APPEND" \
	"${ARGS[@]}" "$HERE/guest.sh"
