#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs the KUnit suites of tests/lib/ with the kernel's own kunit.py on UML.
#
# The kernel tree is Debian's linux-source tarball unpacked under
# $MMT_CACHE/kunit/src (outside the project; never committed), with the
# project linked in as drivers/misc/mmt (tests/kunit/Kconfig and Kbuild plus
# symlinks to lib/, uapi/ and tests/).  The UML build directory is kept in
# $MMT_CACHE/kunit/build (build-<series> for a series other than the
# default), so a second run only rebuilds what changed; deleting $MMT_CACHE
# costs time, never correctness.
#
# KUNIT_KERNELS names the kernel series whose source the suites run on, in
# turn (default: every supported series, "6.1 6.12", each from Debian's
# linux-source-<series>, scripts/deps.sh; "6.1" for one).  A cold UML build of
# each series is minutes of its own (docs/TESTING.md).
#
# Prints kunit.py's results, one "ok"/"not ok" line per series, and a
# closing line "kunit: N passed, N failed" over all of them; exits non-zero
# on any failure, crash or missing result.
set -euo pipefail

. "$(dirname "$0")/lib.sh"
top=$mmt_top
jobs=${JOBS:-$(nproc)}
timeout_s=${KUNIT_TIMEOUT:-1500}
series_list=${KUNIT_KERNELS:-$MMT_KERNEL_SERIES}
total_pass=0
total_fail=0

# run_series SERIES: run the suites on linux-source-SERIES; adds to the
# totals and prints the series' ok/not ok line.
run_series() {
	local series=$1 src build mmt d log rc summary passed failed crashed
	local stamp total count n

	build=$mmt_cache/kunit/build
	[ "$series" = "${MMT_KERNEL_SERIES%% *}" ] || build=$build-$series
	if ! src=$(mmt_kernel_src "$series"); then
		echo "not ok - kunit on $series: no kernel source"
		total_fail=$((total_fail + 1))
		return 0
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

	log=$build/../kunit${build#"$mmt_cache/kunit/build"}.log
	mkdir -p "$build"
	# make rebuilds by date only: after a run from another checkout (the
	# cache is per machine, the link above per run) objects newer than
	# this checkout's sources would be linked in.  Drop the project's
	# objects whenever the linked checkout changes.
	if [ "$(cat "$build/.mmt-top" 2>/dev/null)" != "$top" ]; then
		rm -rf "$build/drivers/misc/mmt"
		echo "$top" >"$build/.mmt-top"
	fi
	echo "kunit: the suites on linux-source-$series ($src)"
	# kunit.py builds quietly: the progress lines count the objects this
	# build wrote, against the count of the last full build (an estimate
	# before the first: a cold UML build is minutes, docs/TESTING.md)
	stamp=$build/.mmt-stamp
	touch "$stamp"
	count=$mmt_cache/kunit/objects-$series
	if [ -z "$(find "$build" -name '*.o' -print -quit)" ]; then
		total=~$(cat "$count" 2>/dev/null || echo 800)
	else
		total=
	fi
	set +e
	export MMT_KUNIT_BUILD=$build MMT_KUNIT_STAMP=$stamp
	mmt_progress "kunit: building and running on $series" "$log" \
		'@find "$MMT_KUNIT_BUILD" -name "*.o" -newer "$MMT_KUNIT_STAMP" | wc -l' \
		"$total" \
		bash -c 'cd "$1" && timeout "$2" python3 tools/testing/kunit/kunit.py run \
			--build_dir="$3" --jobs="$4" --timeout=600 \
			--kunitconfig="$5"' _ "$src" "$timeout_s" "$build" "$jobs" \
		"$top/tests/kunit/.kunitconfig"
	rc=$?
	set -e
	cat "$log"
	# a cold build's object count, for the next cold build's estimate
	if [ -n "$total" ] && [ "$rc" -eq 0 ]; then
		n=$(find "$build" -name '*.o' | wc -l)
		[ "$n" -eq 0 ] || echo "$n" >"$count"
	fi

	# kunit.py ends with "Testing complete. Ran N tests: passed: P,
	# failed: F..."
	summary=$(grep -E 'Testing complete\. Ran [0-9]+ tests' "$log" | tail -n 1 || true)
	passed=$(echo "$summary" | sed -n 's/.*passed: \([0-9]*\).*/\1/p')
	failed=$(echo "$summary" | sed -n 's/.*failed: \([0-9]*\).*/\1/p')
	crashed=$(echo "$summary" | sed -n 's/.*crashed: \([0-9]*\).*/\1/p')
	passed=${passed:-0}
	failed=$(( ${failed:-0} + ${crashed:-0} ))
	if [ -z "$summary" ] || [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
		echo "kunit: kunit.py on $series exited $rc without a complete result" >&2
		failed=$((failed + 1))
	fi
	if [ "$passed" -eq 0 ]; then
		echo "kunit: no test ran on $series" >&2
		failed=$((failed + 1))
	fi
	if [ "$failed" -eq 0 ]; then
		echo "ok - kunit on $series: $passed tests"
	else
		echo "not ok - kunit on $series: $failed of $((passed + failed)) tests failed or did not run"
	fi
	total_pass=$((total_pass + passed))
	total_fail=$((total_fail + failed))
}

for series in $series_list; do
	run_series "$series"
done
echo "kunit: $total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
