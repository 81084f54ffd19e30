#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make paper` / `make paper ITEM=<item>`: the paper's figures, one script
# per item (tools/paper/<item>.py), each writing $O/paper/<item>.json and
# .png and checking its JSON's shape and sanity (docs/PAPER.md).
#
#   tools/paper/run.sh [ITEM...]     the items named, or every item
#   SMOKE=1 tools/paper/run.sh       the short versions (make check, unit),
#                                    into $O/paper-smoke/, then the
#                                    checker's own test (selftest.py): each
#                                    planted fault in a smoke JSON rejected
#
# Prints "ok - paper <item> ..." or "not ok - ..." per item and ends with
# "paper: N passed, N failed"; exits non-zero if any failed.  Debian's
# python3 and python3-matplotlib (scripts/deps.sh); PYTHON= overrides.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=${O:-build}
py=${PYTHON:-/usr/bin/python3}
# no __pycache__ in the source tree
export PYTHONDONTWRITEBYTECODE=1
all=(table4 table5 fig10a fig10b fig13 fig14)
# the items that boot QEMU guests (tests/guest/tests): no smoke version
# (make check's guest stage runs them as checks)
guest_items=" fig10b fig13 fig14 "
items=()
for i in "$@"; do
	case $i in
	fig12) items+=(fig13) ;;	# the issue's name for the MapReduce item
	*) items+=("$i") ;;
	esac
done
if [ ${#items[@]} -eq 0 ]; then
	for i in "${all[@]}"; do
		[ "${SMOKE:-0}" != 0 ] && [[ $guest_items == *" $i "* ]] && continue
		items+=("$i")
	done
fi
bench=$out/tools/mmt-engine-bench
smoke=
dir=$out/paper
if [ "${SMOKE:-0}" != 0 ]; then
	smoke=" (smoke)"
	dir=$out/paper-smoke
fi

# one boot of a guest run per invocation: fig13 and fig14 read the JSONs
# of the same apps-mpi run (paperlib.guest_run)
PAPER_SESSION=$$.$(date +%s%N)
export PAPER_SESSION
pass=0
fail=0
if [ ! -x "$bench" ]; then
	echo "not ok - paper: no $bench (make tools)"
	echo "paper: 0 passed, 1 failed"
	exit 1
fi
for item in "${items[@]}"; do
	if [ ! -f "$here/$item.py" ]; then
		echo "not ok - paper $item: no such item (items: ${all[*]})"
		fail=$((fail + 1))
		continue
	fi
	t0=$(date +%s)
	if O=$out "$py" "$here/$item.py" --out "$dir" --bench "$bench"; then
		echo "ok - paper $item$smoke: $dir/$item.json, $dir/$item.png ($(($(date +%s) - t0)) s)"
		pass=$((pass + 1))
	else
		echo "not ok - paper $item$smoke ($(($(date +%s) - t0)) s)"
		fail=$((fail + 1))
	fi
done
# The checker must fail on bad documents: planted faults in the smoke
# JSONs just written, and in the made-up example document of each guest
# item (fig13.py example()), which has no smoke run (one ok/not ok line
# per fault)
if [ -n "$smoke" ]; then
	# shellcheck disable=SC2086 # guest_items: a list
	while read -r line; do
		case $line in
		"ok - "*) pass=$((pass + 1)) ;;
		"not ok - "*) fail=$((fail + 1)) ;;
		esac
		echo "$line"
	done < <("$py" "$here/selftest.py" "$dir" "${items[@]}" ${guest_items} 2>&1 || echo "not ok - paper selftest exited $?")
fi
echo "paper: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
