#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs the KUnit suites of tests/lib/ with the kernel's own kunit.py on UML.
#
# The kernel tree is Debian's linux-source tarball unpacked under
# $MMT_CACHE/kunit/src (outside the project; never committed), with the
# project linked in as drivers/misc/mmt (tests/kunit/Kconfig and Kbuild plus
# symlinks to lib/, uapi/ and tests/).  The UML build directory is kept in
# $MMT_CACHE/kunit/build, so a second run only rebuilds what changed;
# deleting $MMT_CACHE costs time, never correctness.
#
# Prints kunit.py's results and a closing line "kunit: N passed, N failed";
# exits non-zero on any failure, crash or missing result.
set -euo pipefail

. "$(dirname "$0")/lib.sh"
top=$mmt_top
jobs=${JOBS:-$(nproc)}
timeout_s=${KUNIT_TIMEOUT:-1500}
build=$mmt_cache/kunit/build

if ! src=$(mmt_kernel_src); then
	echo "kunit: 0 passed, 1 failed"
	exit 1
fi

# Link the project in as drivers/misc/mmt (idempotent).
mmt=$src/drivers/misc/mmt
mkdir -p "$mmt"
ln -sfn "$top/tests/kunit/Kconfig" "$mmt/Kconfig"
ln -sfn "$top/tests/kunit/Kbuild" "$mmt/Makefile"
for d in lib uapi tests driver; do
	ln -sfn "$top/$d" "$mmt/$d"
done
grep -q 'drivers/misc/mmt/Kconfig' "$src/drivers/misc/Kconfig" ||
	sed -i '$i source "drivers/misc/mmt/Kconfig"' "$src/drivers/misc/Kconfig"
grep -q 'CONFIG_MMT_KUNIT_TEST' "$src/drivers/misc/Makefile" ||
	echo 'obj-$(CONFIG_MMT_KUNIT_TEST)	+= mmt/' >> "$src/drivers/misc/Makefile"

log=$build/../kunit.log
mkdir -p "$build"
# make rebuilds by date only: after a run from another checkout (the cache
# is per machine, the link above per run) objects newer than this
# checkout's sources would be linked in.  Drop the project's objects
# whenever the linked checkout changes.
if [ "$(cat "$build/.mmt-top" 2>/dev/null)" != "$top" ]; then
	rm -rf "$build/drivers/misc/mmt"
	echo "$top" >"$build/.mmt-top"
fi
cd "$src"
set +e
timeout "$timeout_s" python3 tools/testing/kunit/kunit.py run \
	--build_dir="$build" --jobs="$jobs" --timeout=600 \
	--kunitconfig="$top/tests/kunit/.kunitconfig" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e

# kunit.py ends with "Testing complete. Ran N tests: passed: P, failed: F..."
summary=$(grep -E 'Testing complete\. Ran [0-9]+ tests' "$log" | tail -n 1 || true)
passed=$(echo "$summary" | sed -n 's/.*passed: \([0-9]*\).*/\1/p')
failed=$(echo "$summary" | sed -n 's/.*failed: \([0-9]*\).*/\1/p')
crashed=$(echo "$summary" | sed -n 's/.*crashed: \([0-9]*\).*/\1/p')
passed=${passed:-0}
failed=$(( ${failed:-0} + ${crashed:-0} ))
if [ -z "$summary" ] || [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
	echo "kunit: kunit.py exited $rc without a complete result" >&2
	failed=$((failed + 1))
fi
if [ "$passed" -eq 0 ]; then
	echo "kunit: no test ran" >&2
	failed=$((failed + 1))
fi
echo "kunit: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
