#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Static checks on the kernel-side sources (driver/, lib/ but the OpenSSL
# backend, uapi/, tests/lib/):
#   checkpatch  the kernel's scripts/checkpatch.pl --strict
#   sparse      make C=2 (every file, sparse from Debian)
#   kernel-doc  the kernel's scripts/kernel-doc -none (malformed comments)
#   simd        objdump of driver/mmt.ko: vector registers only in the
#               functions of lib/mmt_nh_avx2.o (the kernel_fpu_begin rule)
#   layering    scripts/layering.py: no driver file calls a file above it
# and the manual pages of man/ with mandoc -T lint -W warning (one check per
# page; they need no kernel source, so they run first).
# A finding fails unless a line of scripts/lint-allow.txt matches it; that
# file holds each accepted finding with its justification.
# Prints one "ok"/"not ok" line per check and "lint: N passed, N failed".
set -uo pipefail

. "$(dirname "$0")/lib.sh"
cd "$mmt_top" || exit 1
out=${O:-build}
mkdir -p "$out"
allow=scripts/lint-allow.txt
pass=0
fail=0

# filter FILE: findings of FILE not matched by an allow-list pattern.
filter() {
	local pats
	pats=$(grep -vE '^\s*(#|$)' "$allow" | sed -E 's/\s+#.*$//')
	if [ -n "$pats" ]; then
		grep -vE -f <(printf '%s\n' "$pats") "$1" || true
	else
		cat "$1"
	fi
}

verdict() {
	local name=$1 findings=$2
	if [ -s "$findings" ]; then
		cat "$findings"
		echo "not ok - $name: $(wc -l <"$findings") finding(s)"
		fail=$((fail + 1))
	else
		echo "ok - $name"
		pass=$((pass + 1))
	fi
}

# mandoc: warnings and worse (mandoc -T lint -W warning) fail a page.
for page in man/*.[1-8]; do
	[ -e "$page" ] || continue
	if ! command -v mandoc >/dev/null; then
		echo "mandoc: not installed; run 'make deps'" >"$out/lint-man"
	else
		mandoc -T lint -W warning "$page" >"$out/lint-man.raw" 2>&1
		rc=$?
		# a failure that printed nothing still fails the page
		if [ "$rc" -ne 0 ] && [ ! -s "$out/lint-man.raw" ]; then
			echo "mandoc: $page: exit status $rc" >"$out/lint-man.raw"
		fi
		filter "$out/lint-man.raw" >"$out/lint-man"
	fi
	verdict "mandoc -T lint $page" "$out/lint-man"
done

if ! ksrc=$(mmt_kernel_src); then
	echo "lint: $pass passed, $((fail + 1)) failed"
	exit 1
fi
mapfile -t files < <(mmt_kernel_sources)

# checkpatch: one finding per line with --terse.
: >"$out/lint-checkpatch.raw"
for f in "${files[@]}"; do
	perl "$ksrc/scripts/checkpatch.pl" --strict --no-tree --terse \
		--show-types --no-summary -f "$f" >>"$out/lint-checkpatch.raw" 2>&1
done
# Keep "file:line: ..." findings; checkpatch's own chatter without a tree
# (--no-tree) is not about our code.
sed -i "s|^$mmt_top/||" "$out/lint-checkpatch.raw"
grep -E '^[^ :]+:[0-9]+: ' "$out/lint-checkpatch.raw" >"$out/lint-checkpatch.f" || true
filter "$out/lint-checkpatch.f" | sed 's/^/checkpatch: /' >"$out/lint-checkpatch"
verdict "checkpatch --strict (${#files[@]} files)" "$out/lint-checkpatch"

# sparse: C=2 checks every file of the module, not just rebuilt ones.
# The kernel's own sparse flags (as `make C=2` on the kernel); findings in
# the kernel's headers are not ours and are dropped.
# A module that does not build was not checked: that is a finding too.
sparse_rc=0
make -s module C=2 >"$out/lint-sparse.raw" 2>&1 || sparse_rc=$?
grep -E '(warning|error):' "$out/lint-sparse.raw" | sed "s|^$mmt_top/||" |
	grep -v '^/' | sort -u >"$out/lint-sparse.f"
filter "$out/lint-sparse.f" | sed 's/^/sparse: /' >"$out/lint-sparse"
if [ "$sparse_rc" -ne 0 ]; then
	tail -n 5 "$out/lint-sparse.raw"
	echo "sparse: make module C=2 exited $sparse_rc" >>"$out/lint-sparse"
fi
verdict "sparse (make C=2)" "$out/lint-sparse"

# SIMD confinement: vector registers (%xmm, %ymm) appear in the module only
# in the functions of lib/mmt_nh_avx2.o, the one object built with -mavx2,
# which the engine calls between kernel_fpu_begin() and kernel_fpu_end()
# (docs/ENGINE.md, "Carter-Wegman MACs"); a vector instruction anywhere
# else would run outside that section and clobber a user task's registers.
# Run on the module sparse's build just made.
if [ -f driver/mmt.ko ] && [ -f lib/mmt_nh_avx2.o ]; then
	nm --defined-only lib/mmt_nh_avx2.o | awk '$2 ~ /^[tT]$/ { print $3 }' \
		>"$out/lint-simd.allowed"
	objdump -d --no-show-raw-insn driver/mmt.ko |
		awk '/^[0-9a-f]+ <.*>:$/ { fn = $2; gsub(/[<>:]/, "", fn) }
		     /%[xy]mm[0-9]/ { print fn }' | sort -u >"$out/lint-simd.fns"
	grep -vxF -f "$out/lint-simd.allowed" "$out/lint-simd.fns" |
		sed 's/^/simd: vector registers outside lib\/mmt_nh_avx2.o, in /' \
		>"$out/lint-simd" || true
else
	echo "simd: driver/mmt.ko or lib/mmt_nh_avx2.o not built" >"$out/lint-simd"
fi
verdict "vector registers only in lib/mmt_nh_avx2.o (objdump of driver/mmt.ko)" "$out/lint-simd"

# kernel-doc: malformed or incomplete kernel-doc comments.
perl "$ksrc/scripts/kernel-doc" -none "${files[@]}" >"$out/lint-kdoc.raw" 2>&1
filter "$out/lint-kdoc.raw" | sed 's/^/kernel-doc: /' >"$out/lint-kdoc"
verdict "kernel-doc -none" "$out/lint-kdoc"

# layering: no driver file calls a file above it (driver/mmt_internal.h's
# header comment), on the module sparse's build just made.
python3 scripts/layering.py >"$out/lint-layering" 2>&1
[ $? -eq 0 ] && : >"$out/lint-layering"
verdict "layering (scripts/layering.py)" "$out/lint-layering"

echo "lint: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
