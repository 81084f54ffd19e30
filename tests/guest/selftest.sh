#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# selftest.sh - tests of the guest test harness itself, without a guest:
# tests/guest/tests's retry_once() with stub runs in place of run_guests,
# and run_pair() with stub runs in place of run_one.
#
#   - a run that fails once for the network (rxe under TCG) is run again,
#     and only the second attempt counts;
#   - a run whose kernel log has a report (KASAN, lockdep, a leak, a
#     WARN) is not run again: the failure stands, whatever a second
#     attempt would say (a finding is never retried away);
#   - a run that passes is run once.
#
# Prints ok/not ok lines and "harness: N passed, N failed"; exit 0 if all
# passed.  Run by tests/guest/tests before the guests boot.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
MMT_GUEST_TESTS_LIB=1
# shellcheck source=tests/guest/tests
. "$HERE/tests"
set +e
GUEST_BUILD=$(mktemp -d)
trap 'rm -rf "$GUEST_BUILD"' EXIT

calls=0

# stub_run OUTCOME... - a stand-in for run_guests: the Nth call reports
# the Nth OUTCOME: pass (two checks pass), net (a transfer check fails,
# the kernel logs are clean) or report (the kernel log check fails)
stub_run() {
	local outcomes=("$@")
	local o=${outcomes[calls]:-pass}

	calls=$((calls + 1))
	mkdir -p "$GUEST_BUILD/stub"
	case $o in
	pass)
		ok "stub: transfer"
		ok "stub/g1: kernel log clean"
		;;
	net)
		notok "stub: transfer" "ETIMEDOUT"
		ok "stub/g1: kernel log clean"
		;;
	report)
		ok "stub: transfer"
		notok "stub/g1: kernel log clean" "BUG: KASAN: use-after-free"
		;;
	esac
}

t_pass=0
t_fail=0
only_if=()

# expect NAME WANT_CALLS WANT_FAIL OUTCOME... - run retry_once with the
# stub and check how often it ran and what failures it left
expect() {
	local name=$1 want_calls=$2 want_fail=$3 out
	shift 3

	calls=0
	PASS=0
	FAIL=0
	out=$(retry_once stub "${only_if[@]}" stub_run "$@"; echo "calls=$calls fail=$FAIL")
	if [ "${out##*$'\n'}" = "calls=$want_calls fail=$want_fail" ]; then
		t_pass=$((t_pass + 1))
		echo "ok - harness: $name"
	else
		t_fail=$((t_fail + 1))
		echo "not ok - harness: $name (want calls=$want_calls fail=$want_fail, got ${out##*$'\n'})"
		printf '# %s\n' "${out//$'\n'/$'\n'# }"
	fi
}

expect "retry_once runs a passing run once" 1 0 pass
expect "retry_once runs a run that failed for the network again, only the second attempt counts" 2 0 net pass
expect "retry_once keeps the second attempt's failure" 2 1 net net
expect "retry_once does not run again a run whose kernel log has a report" 1 1 report pass
only_if=(--only-if "ETIMEDOUT")
expect "retry_once --only-if runs again a failure that matches" 2 0 net pass
only_if=(--only-if "timed out in phase 'MPI_Finalize")
expect "retry_once --only-if does not run again a failure that does not match" 1 1 net pass
expect "retry_once --only-if does not run again a run whose kernel log has a report" 1 1 report pass
only_if=(--only-if "ETIMEDOUT" --attempts 3)
expect "retry_once --attempts 3 runs a matching failure up to 3 times, the third counts" 3 0 net net pass
expect "retry_once --attempts 3 keeps the third attempt's failure" 3 1 net net net
expect "retry_once --attempts 3 stops at a kernel report" 2 1 net report pass
expect "retry_once --attempts 3 runs a passing run once" 1 0 pass
only_if=()

# run_pair with stub runs: A (background) passes 2 checks and fails 1,
# sleeping so that it ends after B; B passes 1.  Every line is counted
# once, A's after B's, both times kept, and both really ran at once
# (A's start file exists when B starts)
pair_prepare() { :; }
run_one() {
	case $1 in
	A)
		: >"$GUEST_BUILD/A.started"
		sleep 1
		ok "A: one"
		notok "A: two" "planted"
		ok "A: three"
		TIMES+=("A 1s")
		;;
	B)
		if [ -f "$GUEST_BUILD/A.started" ]; then
			ok "B: A runs at the same time"
		else
			sleep 0.5
			[ -f "$GUEST_BUILD/A.started" ] &&
				ok "B: A runs at the same time" ||
				notok "B: A runs at the same time" "no"
		fi
		TIMES+=("B 0s")
		;;
	esac
}
PASS=0
FAIL=0
TIMES=()
out=$(run_pair A B; echo "pass=$PASS fail=$FAIL times=${TIMES[*]}")
want="pass=3 fail=1 times=B 0s A 1s (with B)"
order=$(grep -E '^(not )?ok - ' <<<"$out" | sed -E 's/^(not )?ok - //' | tr '\n' '|')
if [ "${out##*$'\n'}" = "$want" ] &&
   [ "$order" = "B: A runs at the same time|A: one|A: two (planted)|A: three|" ]; then
	t_pass=$((t_pass + 1))
	echo "ok - harness: run_pair runs A and B at once, counts every line once, A's after B's"
else
	t_fail=$((t_fail + 1))
	echo "not ok - harness: run_pair runs A and B at once, counts every line once, A's after B's (want $want, got ${out##*$'\n'}; order $order)"
fi
GUEST_JOBS=1
PASS=0
FAIL=0
TIMES=()
rm -f "$GUEST_BUILD/A.started"
out=$(run_pair A B; echo "pass=$PASS fail=$FAIL")
order=$(grep -E '^(not )?ok - ' <<<"$out" | sed -E 's/^(not )?ok - //' | cut -c1-2 | tr '\n' '|')
if [ "${out##*$'\n'}" = "pass=3 fail=1" ] && [ "$order" = "A:|A:|A:|B:|" ]; then
	t_pass=$((t_pass + 1))
	echo "ok - harness: GUEST_JOBS=1: run_pair runs A, then B"
else
	t_fail=$((t_fail + 1))
	echo "not ok - harness: GUEST_JOBS=1: run_pair runs A, then B (got ${out##*$'\n'})"
fi
unset GUEST_JOBS
echo "harness: $t_pass passed, $t_fail failed"
[ "$t_fail" -eq 0 ]
