#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make check`: runs every test stage and exits non-zero if any failed.
#
#   build  module (W=1, warnings are failures; normal and MMT_DEBUG=1) for
#          each supported kernel series installed (MMT_KERNEL_SERIES,
#          scripts/lib.sh: 6.1 and 6.12), or only for KVER or KDIR if set;
#          user-space lib/, tools;
#          the first make check and make demo on a machine without the
#          packages, replayed (tests/firstrun/run.sh); the Debian packages
#          built, installed, and the module built by DKMS for each of
#          those kernels (tests/deb/run.sh); the debug guest kernel
#          (scripts/debug-kernel.sh, cached) when the guest stage boots it
#   unit   the tests/lib suites in user space (OpenSSL backend); the
#          smoke versions of the paper's items (tools/paper/run.sh); the
#          applications' references and R-MAT generator (tests/apps/run.sh);
#          the attestation tools against swtpm (tests/attest/run.sh)
#   fuzz   each libFuzzer harness for FUZZ_SECONDS from its seed corpus
#   kunit  the same suites under KUnit on UML (kernel crypto API), KASAN
#          and lockdep on, from 6.1's and 6.12's sources (KUNIT_KERNELS=6.1
#          for one, scripts/kunit.sh)
#   lint   checkpatch --strict, sparse, kernel-doc, mandoc -T lint of man/
#   guest  the harness's own tests (tests/guest/selftest.sh), then the
#          module in QEMU guests with Soft-RoCE: basic, pair, reload,
#          dkms, attest, kv, migrate, soak, criu, criu-migrate,
#          apps-mpi, bench-smoke and xfer's leak loops (xfer-leak) on
#          Debian's kernel; the attack run over Soft-iWARP and a mixed
#          pair (attack@siw, mixed); the planted bugs, pmo, xfer,
#          attconn, attack and fuzz on the debug kernel; runs whose
#          guests wait go two at a time (tests/guest/tests; GUEST_RUNS="xfer
#          pmo" picks runs)
#
# They run in the order build, unit, fuzz, kunit, lint, guest, with unit
# in the background beside fuzz, kunit and lint (its output follows
# theirs; STAGE_JOBS=1 runs it in its turn).  STAGES="unit kunit" selects
# stages.  Each stage prints its own "N passed, N failed" line; the run
# ends with the wall time of each stage and a total line.
set -uo pipefail

. "$(dirname "$0")/lib.sh"
cd "$mmt_top" || exit 1

stages=${STAGES:-build unit fuzz kunit lint guest}
fuzz_seconds=${FUZZ_SECONDS:-20}
out=${O:-build}
mkdir -p "$out"

# The kernel to build for and boot, resolved now that `make check` has run
# scripts/deps.sh, and exported to every stage.  Without one, the stages
# that need it fail with the reason.  Unless the caller chose the kernel
# (KVER or KDIR), the build stage also builds the module, and the DKMS
# check has it built, for the newest installed kernel of each other
# supported series (scripts/lib.sh: MMT_KVERS, other_kvers).
other_kvers=()
if mmt_kernels; then
	echo "check: kernel ${KVER:-(from KDIR)}, build dir $KDIR"
	for v in $MMT_KVERS; do
		[ "$v" = "${KVER:-}" ] || other_kvers+=("$v")
	done
	echo "check: the module is built for ${KVER:-$KDIR}${other_kvers[*]:+ ${other_kvers[*]}}"
	[ ${#other_kvers[@]} -eq 0 ] ||
		echo "check: the guests boot ${KVER:-$KDIR}; make check-kernels boots ${other_kvers[*]}"
fi

total_pass=0
total_fail=0
report=()

# count_line FILE: the last "N passed, N failed" line of FILE as "P F".
count_line() {
	grep -E '(^|: )[0-9]+ passed, [0-9]+ failed' "$1" | tail -n 1 |
		sed -E 's/.*([^0-9]|^)([0-9]+) passed, ([0-9]+) failed.*/\2 \3/'
}

# run_stage NAME CMD...: run, echo output, add its counts to the totals.
run_stage() {
	local name=$1 log=$out/check-$1.log t0 t1 rc
	shift
	echo "==== $name"
	t0=$(date +%s)
	"$@" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	t1=$(date +%s)
	account_stage "$name" "$log" "$rc" $((t1 - t0))
}

# start_stage NAME CMD...: run a stage in the background (one at a time:
# its pid in bg_pid), its output in its log only (finish_stage shows it);
# for a stage that shares no file with the stages run meanwhile
start_stage() {
	local name=$1 log=$out/check-$1.log
	shift
	rm -f "$log.rc" "$log.time"
	(
		t0=$(date +%s)
		"$@" >"$log" 2>&1
		echo $? >"$log.rc"
		echo $(($(date +%s) - t0)) >"$log.time"
	) &
	bg_pid=$!
}

# finish_stage NAME: wait for the stage start_stage began, echo its
# output and add its counts to the totals
finish_stage() {
	local name=$1 log=$out/check-$1.log rc
	wait "$bg_pid"
	bg_pid=
	echo "==== $name (ran beside the stages above)"
	cat "$log"
	rc=$(cat "$log.rc" 2>/dev/null || echo 1)
	account_stage "$name" "$log" "$rc" "$(cat "$log.time" 2>/dev/null || echo 0)"
}

# account_stage NAME LOG RC SECONDS: add a finished stage's counts (its
# log's last "N passed, N failed" line) to the totals and the report
account_stage() {
	local name=$1 log=$2 rc=$3 secs=$4 counts p f
	counts=$(count_line "$log")
	p=${counts% *}
	f=${counts#* }
	if [ -z "$counts" ]; then
		p=0
		f=1
	fi
	# A stage that failed without counting its failure still fails.
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
	fi
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
	report+=("$(printf '%-6s %4d passed %4d failed %5d s' "$name" "$p" "$f" "$secs")")
}

# sub_checks NAME SCRIPT LOG - run a script of ok/not ok lines, show its
# lines on stderr (the stage's output) and print "passed failed"; a
# non-zero exit without a failed line counts as one failure
sub_checks() {
	local rc p f

	"$2" >"$3" 2>&1
	rc=$?
	grep -v -E "^$1: [0-9]+ passed" "$3" >&2
	p=$(grep -c '^ok - ' "$3")
	f=$(grep -c '^not ok - ' "$3")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "not ok - $1: $2 exited $rc" >&2
		f=1
	fi
	echo "$p $f"
}

# module_copy_build DIR HEADERS [MAKEARGS...]: build the module with W=1
# from a private copy of Kbuild, driver/, lib/ and uapi/ in DIR against
# the kernel build directory HEADERS (driver/mmt.ko stays the default
# kernel's build); output on stdout
module_copy_build() {
	local dir=$1 headers=$2 d
	shift 2

	rm -rf "$dir"
	mkdir -p "$dir"
	cp Kbuild "$dir/"
	for d in driver lib uapi; do
		mkdir -p "$dir/$d"
		cp "$d"/*.[ch] "$dir/$d/"
	done
	rm -f "$dir"/driver/*.mod.c
	make -s -j"$(nproc)" -C "$headers" M="$(cd "$dir" && pwd)" W=1 "$@" modules 2>&1
}

# module_verdict NAME LOG CMD...: run CMD with its output in LOG; ok if it
# succeeds and LOG has no warning or error (then return 0)
module_verdict() {
	local name=$1 log=$2
	shift 2

	if "$@" >"$log" 2>&1 && ! grep -E 'warning:|error:' "$log"; then
		echo "ok - $name"
		pass=$((pass + 1))
		return 0
	fi
	cat "$log"
	echo "not ok - $name"
	fail=$((fail + 1))
	return 1
}

stage_build() {
	local pass=0 fail=0 log=$out/build-module.log rc p f v built=

	# The default kernel's module in the tree (driver/mmt.ko, which the
	# guest stage loads), its test build (MMT_DEBUG=1) and each other
	# series' two builds from private copies.
	v=${KVER:-$KDIR}
	if module_verdict "module builds warning-free with W=1 for ${v:-(no kernel)}" \
		"$log" make -s -j"$(nproc)" module && [ -n "$v" ] &&
	   module_verdict "module builds warning-free with W=1 and MMT_DEBUG=1 for $v" \
		"$log.debug" module_copy_build "$out/module-debug" "$KDIR" MMT_DEBUG=1; then
		built=$v
	fi
	# (the normal build last: tests/deb/run.sh compares the DKMS build's
	# srcversion with $out/module-<ver>/driver/mmt.ko's)
	for v in "${other_kvers[@]}"; do
		if module_verdict "module builds warning-free with W=1 and MMT_DEBUG=1 for $v" \
			"$log.$v.debug" module_copy_build "$out/module-$v" \
			"/lib/modules/$v/build" MMT_DEBUG=1 &&
		   module_verdict "module builds warning-free with W=1 for $v" \
			"$log.$v" module_copy_build "$out/module-$v" \
			"/lib/modules/$v/build"; then
			built="$built${built:+ }$v"
		fi
	done
	echo "build: the module built for: ${built:-no kernel}"
	if make -s user tools >"$log.user" 2>&1 && ! grep -E 'warning:|error:' "$log.user"; then
		echo "ok - user-space lib/, tests and tools build warning-free"
		pass=$((pass + 1))
	else
		cat "$log.user"
		echo "not ok - user-space build"
		fail=$((fail + 1))
	fi
	# The first run on a machine without the packages, replayed with a
	# stub deps step (tests/firstrun/run.sh); then the Debian packages:
	# build, install, DKMS builds the module for Debian's kernel
	# (tests/deb/run.sh; the guest stage loads it).  Neither inside the
	# replay, whose /lib/modules is a stub.
	if [ -z "${MMT_FIRSTRUN:-}" ]; then
		for sub in firstrun deb; do
			counts=$(sub_checks "$sub" "tests/$sub/run.sh" "$log.$sub")
			pass=$((pass + ${counts% *}))
			fail=$((fail + ${counts#* }))
		done
	fi
	# The debug guest kernel of the guest stage's @debug runs (built
	# once into the cache, tens of minutes cold; not in the replay).
	# Its messages (what it builds, a progress line every 30 s) are
	# shown as they come and kept in $log.debug-kernel.
	if [ -z "${MMT_FIRSTRUN:-}" ] && guest_runs_debug; then
		local t0 dir
		t0=$(date +%s)
		if dir=$(scripts/debug-kernel.sh 2> >(tee "$log.debug-kernel" >&2)); then
			echo "ok - debug guest kernel $(cat "$dir/kernelrelease" 2>/dev/null) in $dir ($(($(date +%s) - t0)) s)"
			pass=$((pass + 1))
		else
			echo "not ok - debug guest kernel (scripts/debug-kernel.sh; log: $log.debug-kernel)"
			fail=$((fail + 1))
		fi
	fi
	echo "build: $pass passed, $fail failed"
	[ "$fail" -eq 0 ]
}

# guest_runs_debug: true if the guest stage will boot the debug kernel
# (its default runs do; GUEST_RUNS may name others)
guest_runs_debug() {
	case " $stages " in *" guest "*) ;; *) return 1 ;; esac
	case " ${GUEST_RUNS:-@debug} " in *@debug*) return 0 ;; esac
	return 1
}

stage_unit() {
	local counts p f log=$out/unit.log

	make -s user tools ||
		{ echo "unit: 0 passed, 1 failed"; return 1; }
	"$out/mmt-unit" | tee "$log"
	counts=$(count_line "$log")
	p=${counts% *}
	f=${counts#* }
	[ -n "$counts" ] || { p=0; f=1; }
	# The checked-in golden closure, its C array and a fresh build agree.
	if "$out/tools/mmt-golden" check tests/vectors/closure_v4_golden.bin; then
		echo "ok - golden closure vector"
		p=$((p + 1))
	else
		echo "not ok - golden closure vector"
		f=$((f + 1))
	fi
	# The paper's items, short versions: each JSON's shape and sanity
	# (tools/paper/run.sh, docs/PAPER.md)
	counts=$(SMOKE=1 O=$out sub_checks paper tools/paper/run.sh "$out/paper-smoke.log")
	p=$((p + ${counts% *}))
	f=$((f + ${counts#* }))
	# The applications' single-process references: deterministic and
	# right against closed forms, Graph500's initiator and coreutils
	counts=$(O=$out sub_checks apps tests/apps/run.sh "$out/apps.log")
	p=$((p + ${counts% *}))
	f=$((f + ${counts#* }))
	# The fault soak's checker against made-up logs (tests/soak/)
	counts=$(sub_checks "soak check" tests/soak/test_check.py "$out/soak-check.log")
	p=$((p + ${counts% *}))
	f=$((f + ${counts#* }))
	# The attestation tools against software TPMs (tests/attest/run.sh)
	if make -s "$out/tools/mmt-authority" "$out/tools/mmt-attest" \
		"$out/tests/attest/mmt-attest"; then
		counts=$(sub_checks attest tests/attest/run.sh "$out/attest.log")
		p=$((p + ${counts% *}))
		f=$((f + ${counts#* }))
	else
		echo "not ok - attest: build of mmt-authority and mmt-attest"
		f=$((f + 1))
	fi
	echo "unit: $p passed, $f failed"
	[ "$f" -eq 0 ]
}

stage_fuzz() {
	local pass=0 fail=0 h name bin corpus work
	make -s fuzz-build || { echo "fuzz: 0 passed, 1 failed"; return 1; }
	for h in tests/fuzz/*_fuzz.c; do
		[ -e "$h" ] || continue
		name=$(basename "$h" .c)
		bin=$out/fuzz/$name
		corpus=tests/fuzz/corpus/$name
		work=$(mktemp -d)
		# New inputs go to $work, never into the checked-in corpus.
		if timeout $((fuzz_seconds + 120)) "$bin" -max_total_time="$fuzz_seconds" \
			-print_final_stats=1 "$work" "$corpus" >"$out/fuzz-$name.log" 2>&1; then
			echo "ok - $name: $(grep -E 'stat::number_of_executed_units' "$out/fuzz-$name.log" | awk '{print $2}') runs, no crash"
			pass=$((pass + 1))
		else
			tail -n 40 "$out/fuzz-$name.log"
			echo "not ok - $name"
			fail=$((fail + 1))
		fi
		rm -rf "$work"
	done
	echo "fuzz: $pass passed, $fail failed"
	[ "$fail" -eq 0 ]
}

stage_kunit() {
	scripts/kunit.sh
}

stage_guest() {
	# shellcheck disable=SC2086 # GUEST_RUNS: a list of runs
	make -s module && tests/guest/tests ${GUEST_RUNS:-}
}

stage_lint() {
	scripts/lint.sh
}

# The stages in the order given, except that unit runs in the background
# beside fuzz, kunit and lint when they follow it, and the guest stage
# waits for it: each of those keeps about one core busy (unit's longest
# part, the attestation tests against swtpm, is about 2 minutes), while
# the guest stage needs both.  Unit builds nothing the others build (the
# build stage made lib/, the tests and the tools; lint rebuilds only the
# module, fuzz its own harnesses, kunit its UML tree).  STAGE_JOBS=1:
# one after the other.
bg_pid=
for s in $stages; do
	if [ "$s" = unit ] && [ "${STAGE_JOBS:-2}" -gt 1 ] &&
	   [[ " $stages " =~ \ unit\ (.*\ )?(fuzz|kunit|lint)\  ]]; then
		echo "==== unit: runs in the background, its output after the stages beside it"
		start_stage unit stage_unit
		continue
	fi
	if [ -n "$bg_pid" ] && [ "$s" = guest ]; then
		finish_stage unit
	fi
	run_stage "$s" "stage_$s"
done
[ -z "$bg_pid" ] || finish_stage unit

echo "==== summary (wall time per stage)"
printf '%s\n' "${report[@]}"
echo "total: $total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
