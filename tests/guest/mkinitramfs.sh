#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# mkinitramfs.sh - initramfs images for the QEMU test guests
#
# Usage:
#   mkinitramfs.sh base
#	Build (or reuse) the base image and print its path.  The base holds
#	busybox-static with its applet links, /init (tests/guest/init.sh),
#	the kernel modules the guests need (virtio-net, 9p, Soft-RoCE, all of
#	crypto/) with every dependency and a modules.dep made by depmod -b,
#	iproute2's rdma tool and the rdma-core user space (libibverbs and its
#	providers, librdmacm, ibv_*, rping, ib_write_bw) with their shared
#	libraries.  It is cached by content: its name carries a hash of every
#	input file, so it is rebuilt only when an input changes.
#   mkinitramfs.sh kver
#	Print the guest kernel version (see KVER below).
#   mkinitramfs.sh overlay OUT.cpio DIR
#	Pack the files under DIR into OUT.cpio, an archive to append to the
#	base (the kernel unpacks concatenated archives in order, later files
#	win).
#
# Environment:
#   KVER	guest kernel version (default: the newest /lib/modules/* that
#		has a matching /boot/vmlinuz-*, of the default kernel series
#		if one is installed: the kernel the module is built for by
#		default, scripts/lib.sh mmt_kver)
#   GUEST_BUILD	output directory (default: <repo>/build/guest)
#   EXTRA_MODULES  more kernel modules (names) to put into the base
#   EXTRA_BINS	   more host programs (paths or names in PATH) for the base,
#		   each at its host path, or at DST if given as SRC=DST
#   EXTRA_LIBS	   more host shared libraries (paths) for the base, with
#		   the libraries they need: those a program dlopen()s, which
#		   ldd does not list (libtss2's TCTI modules)
#   GUEST_KDIR	a kernel of the project's own instead of Debian's: the
#		directory scripts/debug-kernel.sh prints (its kernelrelease
#		is the version, its modules come from GUEST_KDIR/mod)
#
# Everything is written under GUEST_BUILD; the source tree is never touched.

set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
GUEST_BUILD=${GUEST_BUILD:-$ROOT/build/guest}
# Root of the guest kernel's /lib/modules: the host's, or a debug kernel's
MODROOT=${GUEST_KDIR:+$GUEST_KDIR/mod}

# Kernel modules the guests load (names as modprobe knows them).  crc32
# generic and pclmul: rxe requests crc32 at run time (docs/TESTING.md,
# pitfall 1).
BASE_MODULES="virtio_pci virtio_net virtio_blk e1000 9pnet_virtio 9p
	rdma_rxe ib_core ib_uverbs ib_umad rdma_cm rdma_ucm
	crc32_generic crc32-pclmul crc32c_generic crc32c-intel dummy"
# Modules added when the kernel has them: libcrc32c is what siw.ko needs
# besides ib_core (FABRIC=siw; Debian's kernels do not ship siw: run.sh
# ships one, scripts/siw-ko.sh); the debug kernel has no libcrc32c.
OPTIONAL_MODULES="libcrc32c"
# Whole module directories (relative to /lib/modules/<ver>/kernel): the
# module under test may ask for any algorithm of the crypto API.
BASE_MODULE_DIRS="crypto arch/x86/crypto"
# User programs: iproute2's rdma, rdma-core and perftest tools.
BASE_BINS="rdma ibv_devices ibv_devinfo ibv_rc_pingpong ibv_ud_pingpong
	rping ucmatose udaddy rdma_server rdma_client
	ib_write_bw ib_read_bw ib_send_bw ib_write_lat"

# die MSG... - print an error and exit 1
die() {
	echo "mkinitramfs: $*" >&2
	exit 1
}

# guest_kver - print the guest kernel version: $KVER, else the newest
# /lib/modules/<ver> that has a /boot/vmlinuz-<ver>, of the default kernel
# series (MMT_KERNEL_SERIES, scripts/lib.sh) if there is one
guest_kver() {
	local v best='' best_default='' series

	if [ -n "${GUEST_KDIR:-}" ]; then
		cat "$GUEST_KDIR/kernelrelease" ||
			die "GUEST_KDIR=$GUEST_KDIR holds no built kernel"
		return
	fi
	if [ -n "${KVER:-}" ]; then
		echo "$KVER"
		return
	fi
	series=$(. "$ROOT/scripts/lib.sh" && echo "${MMT_KERNEL_SERIES%% *}")
	for v in $(find /lib/modules -mindepth 1 -maxdepth 1 -printf '%f\n' \
		   2>/dev/null | sort -V); do
		if [ ! -f "/boot/vmlinuz-$v" ] || [ ! -d "/lib/modules/$v/kernel" ]; then
			continue
		fi
		best=$v
		case $v in "$series".*) best_default=$v ;; esac
	done
	[ -n "$best" ] || die "no /lib/modules/<ver> with /boot/vmlinuz-<ver>"
	echo "${best_default:-$best}"
}

# which_bin NAME - print the absolute path of a program (NAME or a path)
which_bin() {
	case $1 in
	/*) [ -x "$1" ] && echo "$1" && return ;;
	*) command -v "$1" && return ;;
	esac
	die "program '$1' not found"
}

# add SRC [DST] - add a file to the manifest (DST defaults to SRC)
add() {
	printf '%s %s\n' "$1" "${2:-$1}" >>"$MANIFEST"
}

# add_libs FILE - add the shared libraries FILE needs (as ldd lists them,
# under the name it lists, i.e. the SONAME path)
add_libs() {
	local lib

	# "libx.so.1 => /path (0x...)" or "/lib64/ld-linux... (0x...)"
	for lib in $(ldd "$1" 2>/dev/null |
		     sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) .*/\1/p'); do
		add "$lib"
	done
}

# add_modules VER NAME... - add kernel modules and all their dependencies.
# A compressed module (6.12's Debian kernel: .ko.xz) goes into the image
# uncompressed, as x.ko: busybox's modprobe loads it with finit_module()
# then, as on 6.1, so IMA measures it like any module file (for a
# compressed one busybox decompresses it itself and calls init_module(),
# which IMA's MODULE_CHECK never sees: the run attest counts the modules
# IMA measured), and the emulated guest does not spend time in xz
add_modules() {
	local ver=$1 m f d
	shift

	for m in "$@"; do
		# --show-depends prints "insmod /path.ko [opts]" per module,
		# dependencies first; "builtin x" for built-in ones.
		modprobe -d "${MODROOT:-/}" -S "$ver" --show-depends "$m" \
			2>/dev/null |
			awk '$1 == "insmod" { print $2 }' >"$TMP/mods" ||
			die "kernel $ver has no module '$m'"
		while read -r f; do
			# a debug kernel's modules land in /lib/modules too;
			# a compressed module goes in uncompressed (populate)
			d=${f#"$MODROOT"}
			case $d in *.ko.xz | *.ko.zst | *.ko.gz) d=${d%.*} ;; esac
			add "$f" "$d"
		done <"$TMP/mods"
	done
}

# build_manifest VER - write the list "SRC DST" of every file of the base
build_manifest() {
	local ver=$1 b p d f m

	: >"$MANIFEST"
	add "$(which_bin busybox)" /bin/busybox
	add "$HERE/init.sh" /init

	# shellcheck disable=SC2086 # word splitting of the lists is intended
	add_modules "$ver" $BASE_MODULES ${EXTRA_MODULES:-}
	for m in $OPTIONAL_MODULES; do
		if modprobe -d "${MODROOT:-/}" -S "$ver" --show-depends "$m" \
			>/dev/null 2>&1; then
			add_modules "$ver" "$m"
		fi
	done
	for d in $BASE_MODULE_DIRS; do
		# a directory a debug kernel builds in has no modules dir
		for f in $(find "$MODROOT/lib/modules/$ver/kernel/$d" \
			   -name '*.ko*' 2>/dev/null | sort); do
			f=${f##*/}
			f=${f%%.ko*}
			add_modules "$ver" "$f"
		done
	done
	for f in modules.builtin modules.builtin.modinfo modules.order; do
		add "$MODROOT/lib/modules/$ver/$f" "/lib/modules/$ver/$f"
	done

	for b in $BASE_BINS ${EXTRA_BINS:-}; do
		d=
		case $b in *=/*) d=${b#*=}; b=${b%%=*} ;; esac
		p=$(which_bin "$b")
		add "$p" "${d:-$p}"
		add_libs "$p"
	done
	for p in ${EXTRA_LIBS:-}; do
		[ -f "$p" ] || die "library '$p' not found"
		add "$p"
		add_libs "$p"
	done
	# glibc dlopen()s libgcc_s for pthread_exit/cancel; ldd misses it
	# (docs/TESTING.md, pitfall 2).
	for p in /lib/x86_64-linux-gnu/libgcc_s.so.1 \
		 /usr/lib/x86_64-linux-gnu/libgcc_s.so.1; do
		[ -e "$p" ] && { add "$p"; break; }
	done
	# libibverbs providers (dlopen()ed, so not in ldd) and their config.
	for p in /usr/lib/x86_64-linux-gnu/libibverbs/*.so \
		 /etc/libibverbs.d/*.driver /etc/rdma/*.conf \
		 /etc/rdma/modules/*; do
		[ -f "$p" ] || continue
		add "$p"
		case $p in *.so) add_libs "$p" ;; esac
	done
	sort -u -o "$MANIFEST" "$MANIFEST"
}

# input_hash - print a hash of every input: the manifest, the content of
# every source file and this script
input_hash() {
	{
		cat "$MANIFEST"
		awk '{ print $1 }' "$MANIFEST" | xargs -d '\n' sha256sum
		sha256sum "${BASH_SOURCE[0]}"
	} | sha256sum | cut -c1-16
}

# populate STAGE VER - copy the manifest into the staging root STAGE and
# make the links, device nodes and module index
populate() {
	local stage=$1 ver=$2 src dst a

	mkdir -p "$stage"/{bin,sbin,etc,dev,proc,sys,tmp,run,root,mnt,host}
	mkdir -p "$stage"/usr/{bin,sbin,lib,lib64} "$stage/opt/mmt"
	# merged /usr, as on the host, so ldd's paths work as they are
	ln -s usr/lib "$stage/lib"
	ln -s usr/lib64 "$stage/lib64"

	while read -r src dst; do
		mkdir -p "$stage/$(dirname "$dst")"
		case $src:$dst in
		*.ko.xz:*.ko) xz -dc "$src" >"$stage/$dst" ;;
		*.ko.zst:*.ko) zstd -dcq "$src" >"$stage/$dst" ;;
		*.ko.gz:*.ko) gzip -dc "$src" >"$stage/$dst" ;;
		*) cp -L "$src" "$stage/$dst" ;;
		esac
	done <"$MANIFEST"
	chmod 755 "$stage/init"

	# busybox applet links: bin/sh, sbin/modprobe (the kernel's
	# CONFIG_MODPROBE_PATH), usr/bin/..., never over a real program
	for a in $("$stage/bin/busybox" --list-full); do
		[ -e "$stage/$a" ] || [ -L "$stage/$a" ] ||
			ln -s /bin/busybox "$stage/$a"
	done
	[ -e "$stage/sbin/modprobe" ] || ln -s /bin/busybox "$stage/sbin/modprobe"

	# a few nodes for the time before devtmpfs is mounted
	mknod -m 600 "$stage/dev/console" c 5 1
	mknod -m 666 "$stage/dev/null" c 1 3

	printf 'root:x:0:0:root:/root:/bin/sh\n' >"$stage/etc/passwd"
	printf 'root:x:0:\n' >"$stage/etc/group"
	printf '127.0.0.1 localhost\n' >"$stage/etc/hosts"
	depmod -b "$stage" "$ver" || die "depmod -b failed"
	# busybox modprobe resolves modules.dep and modules.alias (checked:
	# crypto-gcm, crypto-cmac, crypto-aes load the right modules), which
	# the kernel's request_module("crypto-...") needs
}

# pack DIR OUT - write the files under DIR as an uncompressed newc cpio
# (uncompressed: the emulated guest would spend seconds on gunzip); the
# rename is atomic, so parallel runs never see a partial file
pack() {
	(cd "$1" && find . -mindepth 1 | LC_ALL=C sort |
		cpio --quiet -o -H newc -R 0:0 --reproducible) >"$2.tmp.$$"
	mv "$2.tmp.$$" "$2"
}

# cmd_base - build the base image if needed, print its path
cmd_base() {
	local ver hash out stage

	ver=$(guest_kver)
	mkdir -p "$GUEST_BUILD"
	TMP=$(mktemp -d "$GUEST_BUILD/.mkinitramfs.XXXXXX")
	trap 'rm -rf "$TMP"' EXIT
	MANIFEST=$TMP/manifest
	build_manifest "$ver"
	hash=$(input_hash)
	out=$GUEST_BUILD/base-$ver-$hash.cpio
	if [ ! -f "$out" ]; then
		stage=$TMP/root
		populate "$stage" "$ver"
		pack "$stage" "$out"
		# drop older base images (not used by a run for an hour)
		find "$GUEST_BUILD" -maxdepth 1 -name "base-$ver-*.cpio" \
			! -path "$out" -mmin +60 -delete
		echo "mkinitramfs: built $out ($(du -h "$out" | cut -f1))" >&2
	fi
	echo "$out"
}

case ${1:-} in
kver)
	guest_kver
	;;
base)
	cmd_base
	;;
overlay)
	[ $# -eq 3 ] || die "usage: $0 overlay OUT.cpio DIR"
	[ -d "$3" ] || die "no directory $3"
	pack "$3" "$2"
	;;
*)
	echo "usage: $0 base | kver | overlay OUT.cpio DIR" >&2
	exit 2
	;;
esac
