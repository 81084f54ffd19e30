#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build.sh - build what the demo ships into the guests
#
# Usage: tests/guest/demo/build.sh OUTDIR [--programs-only]
#
# Writes OUTDIR/bin/mmt-bench (tools/mmt-bench.c), OUTDIR/bin/mmt-attack
# (tests/guest/demo/mmt-attack.c) and OUTDIR/bin/mmtctl, static (the guests
# have no libc of their own), linked with tools/lib/libmmt.c (and OpenSSL's
# libcrypto for mmt-bench's SHA-256), and OUTDIR/ko/driver/mmt.ko: the
# module built with MMT_DEBUG=1 (MMT_IOC_PMO_DEBUG, which the tamper demo
# needs) from a private copy of Kbuild, driver/, lib/ and uapi/, so
# driver/mmt.ko is not touched.  Environment: CC (default gcc), KDIR, KVER
# (default: the default kernel series' newest, see scripts/lib.sh mmt_kver).
# --programs-only: the programs, not the module (the guest runs bench-delay
# and bench-sizes load driver/mmt.ko).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
OUT=${1:?usage: build.sh OUTDIR}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
CC=${CC:-gcc}
CFLAGS="-static -O2 -g -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -pthread"
INC="-I$ROOT/uapi -I$ROOT/tools/lib"

mkdir -p "$OUT/bin"
# The static libcrypto brings glibc's "dlopen/getaddrinfo in statically
# linked applications" linker warnings; mmt-bench uses neither (only
# SHA-256), so they go to a log, shown only if the link fails.
# shellcheck disable=SC2086 # flag lists
$CC $CFLAGS $INC -Wno-unused-parameter -Wno-sign-compare \
	-o "$OUT/bin/mmt-bench" "$ROOT/tools/mmt-bench.c" \
	"$ROOT/tools/lib/libmmt.c" -lcrypto 2>"$OUT/mmt-bench.link.log" ||
	{ cat "$OUT/mmt-bench.link.log" >&2; exit 1; }
# shellcheck disable=SC2086
$CC $CFLAGS $INC -o "$OUT/bin/mmt-attack" "$HERE/mmt-attack.c" \
	"$ROOT/tools/lib/libmmt.c"
# shellcheck disable=SC2086
$CC $CFLAGS $INC -Wno-unused-parameter -Wno-sign-compare \
	-Wno-missing-field-initializers -o "$OUT/bin/mmtctl" \
	"$ROOT/tools/mmtctl.c" "$ROOT/tools/lib/libmmt.c"

[ "${2:-}" = --programs-only ] && exit 0
. "$ROOT/scripts/lib.sh"
mmt_kernel
rm -rf "$OUT/ko"
mkdir -p "$OUT/ko"
cp "$ROOT/Kbuild" "$OUT/ko/"
for d in driver lib uapi; do
	mkdir -p "$OUT/ko/$d"
	cp "$ROOT/$d"/*.[ch] "$OUT/ko/$d/"
done
rm -f "$OUT"/ko/driver/*.mod.c
make -s -C "$KDIR" M="$OUT/ko" MMT_DEBUG=1 modules >&2
