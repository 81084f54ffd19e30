# SPDX-License-Identifier: GPL-2.0
# Helpers sourced by the scripts in scripts/ and by the test scripts that
# build the module.

mmt_top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mmt_cache=${MMT_CACHE:-/var/tmp/mmt-cache}

# The kernel series the module supports, each built and tested (README
# "Kernels"): Debian 12's own 6.1 (linux-headers-amd64) and the 6.12 of
# bookworm-security (linux-headers-6.12-amd64).  The first is the default
# kernel: Debian's linux-image-amd64, the one the guests boot.
# shellcheck disable=SC2034 # used by the scripts that source this file
MMT_KERNEL_SERIES="6.1 6.12"

# mmt_series_kver SERIES: print the newest installed kernel version of
# SERIES ("6.12") that has a /lib/modules/<ver>/build directory (Debian's
# linux-headers-*); fails, printing nothing, if there is none.
mmt_series_kver() {
	local v re

	re="^${1//./\\.}\\."
	# shellcheck disable=SC2012 # version-sorted directory names
	v=$(ls -d /lib/modules/*/build 2>/dev/null |
		sed 's|^/lib/modules/||; s|/build$||' | grep -E "$re" |
		sort -V | tail -n 1)
	[ -n "$v" ] || return 1
	echo "$v"
}

# mmt_kvers: print, one a line, the newest installed kernel of each
# supported series (MMT_KERNEL_SERIES) that has its headers.
mmt_kvers() {
	local s

	for s in $MMT_KERNEL_SERIES; do
		mmt_series_kver "$s" || true
	done
}

# mmt_kver: print the kernel version to build the module for: $KVER if set,
# else the newest installed kernel of the default series (the first of
# MMT_KERNEL_SERIES, the one the guests boot), else the newest
# /lib/modules/<ver> that has a build/ directory (Debian's linux-headers-*).
# It looks when it is called, so call it after scripts/deps.sh, never
# before: on a fresh machine the headers appear only then.  The Makefile's
# default KVER is this function.
mmt_kver() {
	local v

	if [ -n "${KVER:-}" ]; then
		echo "$KVER"
		return 0
	fi
	if v=$(mmt_series_kver "${MMT_KERNEL_SERIES%% *}"); then
		echo "$v"
		return 0
	fi
	# shellcheck disable=SC2012 # version-sorted directory names
	v=$(ls -d /lib/modules/*/build 2>/dev/null |
		sed 's|^/lib/modules/||; s|/build$||' | sort -V | tail -n 1)
	if [ -z "$v" ]; then
		echo "no kernel headers (/lib/modules/*/build); run 'make deps' or set KVER= or KDIR=" >&2
		return 1
	fi
	echo "$v"
}

# mmt_kernel: resolve the kernel once, after scripts/deps.sh, and export
# KVER and KDIR (default /lib/modules/$KVER/build) so that every stage and
# program started from here builds for, and boots, the same kernel.  A KDIR
# or KVER of the caller is kept (with only KDIR set, KVER stays unset and
# the guests pick their kernel, tests/guest/mkinitramfs.sh).  Fails with a
# message if the build directory does not exist.
mmt_kernel() {
	if [ -z "${KDIR:-}" ]; then
		KVER=$(mmt_kver) || return 1
		KDIR=/lib/modules/$KVER/build
	fi
	if [ ! -d "$KDIR" ]; then
		echo "no kernel build dir '$KDIR'; run 'make deps' or set KVER= or KDIR=" >&2
		return 1
	fi
	export KVER KDIR
}

# mmt_kernels: mmt_kernel, then export MMT_KVERS, the kernels to build
# the module for (make check's build stage, tests/deb/run.sh): KVER first,
# then, unless the caller chose the kernel (KVER or KDIR set), the newest
# installed kernel of each other supported series.  A MMT_KVERS of the
# caller is kept.
mmt_kernels() {
	local chosen=${KVER:-}${KDIR:-} v

	mmt_kernel || return 1
	if [ -z "${MMT_KVERS:-}" ]; then
		MMT_KVERS=${KVER:-}
		if [ -z "$chosen" ]; then
			for v in $(mmt_kvers); do
				[ "$v" = "$KVER" ] || MMT_KVERS="$MMT_KVERS $v"
			done
		fi
	fi
	export MMT_KVERS
}

# mmt_kernel_tarball [SERIES]: print the path of Debian's
# linux-source-SERIES tarball (default: the default series, the first of
# MMT_KERNEL_SERIES); fails with a message if it is not installed.
mmt_kernel_tarball() {
	local tarball=/usr/src/linux-source-${1:-${MMT_KERNEL_SERIES%% *}}.tar.xz

	if [ ! -f "$tarball" ]; then
		echo "no $tarball; run 'make deps'" >&2
		return 1
	fi
	echo "$tarball"
}

# mmt_kernel_src [SERIES]: print the path of Debian's linux-source-SERIES
# tree (default: the default series) unpacked in the cache (unpacking it
# once per tarball), for kunit.py and checkpatch.
mmt_kernel_src() {
	local tarball srcname src
	tarball=$(mmt_kernel_tarball "$@") || return 1
	srcname=$(basename "$tarball" .tar.xz)
	src=$mmt_cache/kunit/src/$srcname
	if [ ! -f "$src/.mmt-unpacked" ] || [ "$tarball" -nt "$src/.mmt-unpacked" ]; then
		rm -rf "$src"
		mkdir -p "$(dirname "$src")"
		tar -C "$(dirname "$src")" -xJf "$tarball" || return 1
		touch "$src/.mmt-unpacked"
	fi
	echo "$src"
}

# mmt_kernel_sources: the project's kernel-side C files (module and KUnit).
mmt_kernel_sources() {
	(cd "$mmt_top" && ls driver/*.[ch] uapi/*.h tests/lib/*.[ch] 2>/dev/null | grep -v '\.mod\.c$'
	 cd "$mmt_top" && ls lib/*.[ch] 2>/dev/null | grep -v '_openssl\.c$')
}

# mmt_make_all_files: print about how many files `make all` will compile:
# the user-space compiles make -n lists, and the module's sources Kbuild
# will rebuild (for mmt_progress's total; run in the tree's top directory).
# MMT_MAKE_ALL_PATTERN matches the lines of those compiles in make's
# output (Kbuild's "CC", make's own command lines).
# shellcheck disable=SC2034 # used by the scripts that source this file
MMT_MAKE_ALL_PATTERN='^ +CC |^[^ ]*(cc|clang) '
mmt_make_all_files() {
	local n_user n_mod

	n_user=$(make -n user tools 2>/dev/null | grep -cE '^[^ ]*(cc|clang) ' || true)
	# the module's sources: all of them, or with a module built and no
	# header newer than it, those newer than it
	if [ -f driver/mmt.ko ] && [ -z "$(find driver lib uapi -maxdepth 1 \
		-name '*.h' -newer driver/mmt.ko | head -n 1)" ]; then
		n_mod=$(find driver lib -maxdepth 1 -name '*.c' ! -name '*.mod.c' \
			! -name '*_openssl.c' -newer driver/mmt.ko | wc -l)
	else
		n_mod=$(find driver lib -maxdepth 1 -name '*.c' ! -name '*.mod.c' \
			! -name '*_openssl.c' | wc -l)
	fi
	echo $((n_user + n_mod))
}

# mmt_progress LABEL LOG PATTERN TOTAL CMD...: run CMD with its output in
# LOG and, while it runs, print on stderr a line every
# MMT_PROGRESS_SECONDS (default 30) seconds: the time so far and, with a
# PATTERN (grep -E), the count of LOG's lines that match it (the objects
# compiled), or with "@COMMAND" the number COMMAND prints (for a build
# that logs no compile lines), against TOTAL if it is not empty ("~"
# marks an estimate: "~1900").  A build of 20 minutes prints 40 lines at the default, so
# a CI log stays readable.  Returns CMD's exit status.
mmt_progress() {
	local label=$1 log=$2 pat=$3 total=$4 every=${MMT_PROGRESS_SECONDS:-30}
	local mon rc=0
	shift 4
	: >"$log"
	# the watcher: its own sleeps are 1 s, so none outlives it by more
	# (an orphaned sleep would hold a caller's pipe open); it stops with
	# CMD or with this shell
	(
		parent=$$ t=0
		while kill -0 "$parent" 2>/dev/null; do
			sleep 1
			t=$((t + 1))
			[ $((t % every)) -eq 0 ] || continue
			line="$label: $((t / 60)) min $((t % 60)) s"
			if [ -n "$pat" ]; then
				if [ "${pat#@}" != "$pat" ]; then
					n=$(eval "${pat#@}" 2>/dev/null || true)
				else
					n=$(grep -cE -- "$pat" "$log" 2>/dev/null || true)
				fi
				n=${n:-0}
				case ${total#\~} in
				'' | *[!0-9]* | 0) total= ;;
				esac
				if [ -n "$total" ]; then
					pct=$((n * 100 / ${total#\~}))
					[ "$pct" -le 99 ] || pct=99
					line="$line, $n of $total objects compiled ($pct %)"
				else
					line="$line, $n objects compiled"
				fi
			fi
			echo "$line"
		done
	) >&2 </dev/null &
	mon=$!
	"$@" >"$log" 2>&1 || rc=$?
	kill "$mon" 2>/dev/null || true
	wait "$mon" 2>/dev/null || true
	return "$rc"
}
