#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run.sh - replay the first `make check` and `make demo` on a machine that
# has none of the packages, without touching this machine's packages
#
# On a fresh machine scripts/deps.sh installs the kernel headers during the
# `make check` or `make demo` run itself.  A value resolved before that (a
# Makefile variable computed when make parses the file and exported, a
# script variable set before deps runs) is empty there, while every machine
# that already has the packages passes.  This replays such a run:
#
#  - a copy of the working tree in a temporary directory, whose
#    scripts/deps.sh is a stub that "installs" kernel headers of a made-up
#    version: /lib/modules/$FAKE/build, a Makefile that records each
#    module build made against it (its directory, M= and MMT_DEBUG=);
#  - run in a private mount namespace (unshare -m) where /lib/modules,
#    /usr/src and /boot are empty tmpfs mounts, as on a machine without
#    the kernel packages (the real directories are neither changed nor
#    seen; the mounts go away with the namespace);
#  - there `make check STAGES=build`, then `make demo`, in an environment
#    without KVER, KDIR, O, STAGES or the caller's MAKEFLAGS.
#
# Checks (one "ok"/"not ok" line each):
#  - make check: the build stage built the module and its test build
#    (MMT_DEBUG=1), against the stub's headers only;
#  - make demo: `make all` and the test build of the module
#    (tests/guest/demo/build.sh, MMT_DEBUG=1) were both built against the
#    stub's headers only, and the demo went on to its data step, where it
#    stops: there is no /usr/src/linux-source-6.1.tar.xz in the namespace.
# Then "firstrun: N passed, N failed"; exit status 1 if a check failed.
#
# Needs unshare and mount: root, or a user namespace (unshare -r) for
# others; in a chroot, / must be a mount point (unshare makes it private,
# so that nothing mounted here is seen outside); and the user-space
# build's packages (the copy builds lib/, the tools and the demo's static
# programs for real): about 10 s on 2 cores.
# make check runs it in its build stage; MMT_FIRSTRUN=1 (set for the
# replayed runs) keeps it from running itself.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
FAKE=9.99.0-mmt-firstrun
PASS=0
FAIL=0

ok() {
	PASS=$((PASS + 1))
	echo "ok - firstrun: $1"
}

notok() {
	FAIL=$((FAIL + 1))
	echo "not ok - firstrun: $1 ($2)"
}

finish() {
	echo "firstrun: $PASS passed, $FAIL failed"
	exit $((FAIL > 0))
}

# copy_tree DST - copy the working tree (tracked and untracked files, not
# the ignored ones: no build output) to DST
copy_tree() {
	local dst=$1 f

	mkdir -p "$dst"
	if git -C "$ROOT" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git -C "$ROOT" ls-files -z -co --exclude-standard |
			while IFS= read -r -d '' f; do
				[ -e "$ROOT/$f" ] && printf '%s\0' "$f"
			done | (cd "$ROOT" && cpio --quiet -0 -pdm "$dst")
	else
		tar -C "$ROOT" --exclude=./build --exclude=./.git -cf - . |
			tar -C "$dst" -xf -
	fi
}

# write_stub TREE - replace TREE/scripts/deps.sh with the stub
write_stub() {
	local deps=$1/scripts/deps.sh

	cat >"$deps" <<EOF
#!/bin/sh
# tests/firstrun/run.sh: stands in for scripts/deps.sh; "installs" kernel
# headers $FAKE, whose Makefile records each module build in
# $KBUILD_LOG
set -e
mkdir -p /lib/modules/$FAKE/build
printf 'modules:\n\t@echo "\$(CURDIR) M=\$(M) MMT_DEBUG=\$(MMT_DEBUG)" >>$KBUILD_LOG\n' \\
	>/lib/modules/$FAKE/build/Makefile
echo "deps: installed (stub) /lib/modules/$FAKE/build"
EOF
	chmod 755 "$deps"
}

# replay - run this script as "--inside" in a private mount namespace, in
# an environment without the caller's kernel, build and make settings
replay() {
	local userns=()

	# not root: a user namespace of our own, where we may mount
	[ "$(id -u)" -eq 0 ] || userns=(--user --map-root-user)
	env -u KVER -u KDIR -u O -u STAGES -u MAKEFLAGS -u MFLAGS \
		-u MAKELEVEL -u MAKEOVERRIDES -u GUEST_BUILD -u MMT_KO \
		-u PMO_KO -u DEMO_SKIP_BUILD MMT_FIRSTRUN=1 TMP="$TMP" \
		unshare "${userns[@]}" --mount --propagation private -- \
		"$HERE/run.sh" --inside
}

# fresh - (in the namespace) an empty tmpfs over /lib/modules, /usr/src and
# /boot, over what the previous run's stub left there
fresh() {
	local d

	for d in /lib/modules /usr/src /boot; do
		[ -d "$d" ] || continue
		mount -t tmpfs -o mode=755,size=16m mmt-firstrun "$d"
	done
}

# inside - in the namespace: make check STAGES=build, then make demo, each
# on a machine without the kernel packages; logs in $TMP
inside() {
	local rc

	cd "$TMP/tree"
	fresh
	rc=0
	STAGES=build make check >"$TMP/check.log" 2>&1 || rc=$?
	echo "rc=$rc" >>"$TMP/check.log"
	if [ -f "$TMP/kbuild.log" ]; then
		mv "$TMP/kbuild.log" "$TMP/kbuild.log.check"
	fi
	fresh
	rc=0
	make demo >"$TMP/demo.log" 2>&1 || rc=$?
	echo "rc=$rc" >>"$TMP/demo.log"
}

# builds WHAT LOG N - check that LOG records exactly N module builds, all
# against the stub's headers; print the failure reason, if any
builds() {
	local log=$1 n=$2 all good

	all=$(grep -c . "$log" 2>/dev/null || true)
	# make -C records the directory as getcwd() has it: /usr/lib/... with
	# a merged /usr
	good=$(grep -c "/lib/modules/$FAKE/build M=" "$log" 2>/dev/null || true)
	if [ "${all:-0}" -ne "$n" ] || [ "${good:-0}" -ne "$n" ]; then
		echo "$n module build(s) against /lib/modules/$FAKE/build expected, ${good:-0} of ${all:-0} were"
	fi
}

# show LOG - the end of a replayed run's output, for a failed check
show() {
	tail -n 15 "$1" | sed 's/^/#   /'
}

main() {
	local why

	if [ "${1:-}" = --inside ]; then
		inside
		exit
	fi

	if ! command -v unshare >/dev/null; then
		notok "setup" "no unshare (util-linux)"
		finish
	fi
	if [ ! -d /lib/modules ]; then
		notok "setup" "no /lib/modules to stand in for (run 'make deps')"
		finish
	fi
	TMP=$(mktemp -d "${TMPDIR:-/tmp}/mmt-firstrun.XXXXXX")
	trap 'rm -rf "$TMP"' EXIT
	KBUILD_LOG=$TMP/kbuild.log
	copy_tree "$TMP/tree"
	write_stub "$TMP/tree"
	if ! replay; then
		if [ "$(id -u)" -ne 0 ]; then
			why="not root: are user namespaces allowed?"
		elif ischroot 2>/dev/null; then
			# unshare cannot make / private where / is not a
			# mount point, and mounting without that could show
			# the tmpfs mounts outside the namespace
			why="in a chroot whose / is not a mount point: bind-mount its directory onto itself before entering it"
		else
			why="see the error above"
		fi
		notok "setup" "no private mount namespace with tmpfs mounts: $why"
		finish
	fi

	why=$(builds "$KBUILD_LOG.check" 2)
	if [ -z "$why" ] && grep -q '^ok - module builds' "$TMP/check.log"; then
		ok "make check builds the module against the headers its deps step installed"
	else
		show "$TMP/check.log"
		notok "make check builds the module against the headers its deps step installed" \
			"${why:-the build stage did not pass its module check}"
	fi

	why=$(builds "$KBUILD_LOG" 2)
	if [ -z "$why" ] &&
	   ! grep -q 'no /usr/src/linux-source-[0-9.]*\.tar\.xz' "$TMP/demo.log"; then
		why="it did not reach its data step"
	fi
	if [ -z "$why" ]; then
		ok "make demo builds both modules against the headers its deps step installed"
	else
		show "$TMP/demo.log"
		notok "make demo builds both modules against the headers its deps step installed" \
			"$why"
	fi
	finish
}

main "$@"
