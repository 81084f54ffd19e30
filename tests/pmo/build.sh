#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build.sh - build the PMO guest programs as static binaries
#
# Usage: tests/pmo/build.sh [OUTDIR]    (default: <repo>/build/guest-progs)
#
# Builds tests/pmo/*.c (each one program, linked with tools/lib/libmmt.c)
# and tools/mmtctl.c into OUTDIR, static (the guest has no libc of its
# own), with -Wall -Wextra -Werror.  A program is rebuilt when its source,
# tests/pmo/*.h, tests/guest/*.h, tools/lib/* or uapi/ is newer than it.  Environment: CC
# (default gcc).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
OUT=${1:-$ROOT/build/guest-progs}
CC=${CC:-gcc}
CFLAGS="-static -O2 -g -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -pthread"
INC="-I$ROOT/uapi -I$ROOT/tools/lib"
DEPS=("$ROOT"/tools/lib/* "$ROOT"/uapi/*.h "$HERE"/*.h "$ROOT"/tests/guest/*.h)

mkdir -p "$OUT"

# build SRC NAME - compile SRC with libmmt into OUT/NAME if out of date
build() {
	local src=$1 out=$OUT/$2 d

	if [ -x "$out" ] && [ ! "$src" -nt "$out" ]; then
		for d in "${DEPS[@]}"; do
			[ "$d" -nt "$out" ] && break
		done
		[ "$d" -nt "$out" ] || return 0
	fi
	echo "build.sh: $2" >&2
	# shellcheck disable=SC2086 # flag lists
	$CC $CFLAGS $INC -o "$out.tmp" "$src" "$ROOT/tools/lib/libmmt.c"
	mv "$out.tmp" "$out"
}

for c in "$HERE"/*.c; do
	build "$c" "$(basename "$c" .c)"
done
build "$ROOT/tools/mmtctl.c" mmtctl
