#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# debug-kernel.sh - build (once) the debug guest kernel (KASAN, lockdep,
# kmemleak, UBSAN, KFENCE) and print the directory that holds it.
#
# Source: Debian's linux-source tarball of the default kernel series (the
# first of MMT_KERNEL_SERIES, scripts/lib.sh: the tree the guests'
# production kernel comes from), unpacked in the cache once per tarball,
# pristine.
# Config: x86_64_defconfig, then the kernel's own
# scripts/kconfig/merge_config.sh with kernel/configs/kvm_guest.config
# and tests/debug-kernel/debug.config, then olddefconfig; every line of the
# fragment is checked in the result.  Build: bzImage and modules, the
# modules installed (stripped) into the same directory.
#
# The result is cached outside the clone in
#   $MMT_CACHE/debug-kernel/<key>/{bzImage,build/,mod/lib/modules/<ver>/,ok}
# keyed by the fragment, the recipe version below, the tarball's name and
# the compiler's version, so a second run prints the directory at once and an edited
# fragment builds anew.  Deleting the cache costs time only.
#
# Usage: scripts/debug-kernel.sh [--print-key | --config-only]
# Environment: MMT_CACHE, JOBS (default nproc).
# Output (stdout): the directory; progress and errors on stderr: what is
# built, then a line every MMT_PROGRESS_SECONDS (30) with the time so far
# and the objects compiled against the last build's count.
set -euo pipefail

. "$(dirname "$0")/lib.sh"
frag=$mmt_top/tests/debug-kernel/debug.config
jobs=${JOBS:-$(nproc)}

if ! tarball=$(mmt_kernel_tarball 2>&1); then
	echo "debug-kernel: $tarball" >&2
	exit 1
fi
# Bump when the recipe below changes what is built (not for comments).
recipe=2
key=$( { cat "$frag"; echo "recipe $recipe"; basename "$tarball"
	 ${CC:-gcc} --version | head -n 1; } | sha256sum | cut -c1-16)
if [ "${1:-}" = --config-only ]; then
	config_only=1
elif [ "${1:-}" = --print-key ]; then
	echo "$key"
	exit 0
fi
out=$mmt_cache/debug-kernel/$key
if [ -f "$out/ok" ]; then
	echo "$out"
	exit 0
fi

srcname=$(basename "$tarball" .tar.xz)
src=$mmt_cache/debug-kernel/src/$srcname
if [ ! -f "$src/.mmt-unpacked" ] || [ "$tarball" -nt "$src/.mmt-unpacked" ]; then
	echo "debug-kernel: unpacking $tarball" >&2
	rm -rf "$src"
	mkdir -p "$(dirname "$src")"
	tar -C "$(dirname "$src")" -xJf "$tarball"
	touch "$src/.mmt-unpacked"
fi

rm -rf "$out"
mkdir -p "$out/build"
t0=$(date +%s)
{
	make -C "$src" O="$out/build" x86_64_defconfig &&
	(cd "$out" && "$src/scripts/kconfig/merge_config.sh" \
		-m -O "$out/build" "$out/build/.config" \
		"$src/kernel/configs/kvm_guest.config" "$frag") &&
	make -C "$src" O="$out/build" olddefconfig
} >"$out/config.log" 2>&1 || {
	tail -n 30 "$out/config.log" >&2
	echo "debug-kernel: configuration failed ($out/config.log)" >&2
	exit 1
}

# Every option of the fragment must have its value in the final config.
bad=0
while IFS= read -r line; do
	case $line in
	CONFIG_*=n)
		opt=${line%%=*}
		if grep -q "^$opt=" "$out/build/.config"; then
			echo "debug-kernel: $opt is set, the fragment says n" >&2
			bad=1
		fi
		;;
	CONFIG_*=*)
		if ! grep -qxF "$line" "$out/build/.config"; then
			echo "debug-kernel: '$line' did not stick: $(grep "^${line%%=*}=" "$out/build/.config" || echo unset)" >&2
			bad=1
		fi
		;;
	esac
done <"$frag"
[ "$bad" -eq 0 ] || exit 1
if [ -n "${config_only:-}" ]; then
	echo "$out"
	exit 0
fi

# Progress: a line every MMT_PROGRESS_SECONDS (30) with the objects
# compiled (the build log's "CC" lines) against the count of the last
# build, kept beside the keys (a first build: 1900, this recipe's count
# for Debian's 6.1 with the fragment).
objects=$mmt_cache/debug-kernel/objects
total=$(cat "$objects" 2>/dev/null || true)
case $total in '' | *[!0-9]*) total=1900 ;; esac
echo "debug-kernel: building $srcname (bzImage and modules, about $total objects) with $jobs jobs; cold, this takes tens of minutes (about 20 on 2 cores); log: $out/build.log" >&2
if ! mmt_progress debug-kernel "$out/build.log" '^ +CC ' "~$total" \
	make -C "$src" O="$out/build" -j"$jobs" bzImage modules; then
	grep -E 'error|Error' "$out/build.log" | head -n 20 >&2
	echo "debug-kernel: build failed ($out/build.log)" >&2
	exit 1
fi
if grep -cE '^ +CC ' "$out/build.log" >"$objects.tmp"; then
	mv "$objects.tmp" "$objects"
fi
echo "debug-kernel: installing the modules" >&2
make -C "$src" O="$out/build" INSTALL_MOD_PATH="$out/mod" \
	INSTALL_MOD_STRIP=1 modules_install >>"$out/build.log" 2>&1
cp "$out/build/arch/x86/boot/bzImage" "$out/bzImage"
make -s -C "$src" O="$out/build" kernelrelease >"$out/kernelrelease"
echo "debug-kernel: built $(cat "$out/kernelrelease") in $(($(date +%s) - t0)) s" >&2
echo "$(($(date +%s) - t0))" >"$out/build-seconds"
touch "$out/ok"
# other keys (an older fragment or compiler) not used for a day
find "$mmt_cache/debug-kernel" -mindepth 1 -maxdepth 1 ! -name src \
	! -name objects ! -name "$key" -mmin +1440 -exec rm -rf {} + 2>/dev/null || true
echo "$out"
