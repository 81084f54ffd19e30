#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# siw-ko.sh - build (once) Soft-iWARP, siw.ko, for a guest kernel that does
# not ship it, and print its path.
#
# Debian's kernels (6.1 and 6.12, amd64) have CONFIG_RDMA_SIW off, so the
# guests of a FABRIC=siw run load a siw.ko built out of tree from the
# kernel's own source: drivers/infiniband/sw/siw of Debian's
# linux-source-<series> tarball (the same Debian release as the headers),
# built against /lib/modules/KVER/build (or KDIR) like any out-of-tree
# module.  It needs ib_core and libcrc32c, which Debian builds as modules.
#
# The result is cached outside the clone in
#   $MMT_CACHE/siw/<kver>-<tarball mtime>/siw.ko
# so a second run prints the path at once.
#
# Usage: scripts/siw-ko.sh KVER [KDIR]
# Output (stdout): the path of siw.ko; progress and errors on stderr.
set -euo pipefail

. "$(dirname "$0")/lib.sh"

kver=${1:?usage: siw-ko.sh KVER [KDIR]}
kdir=${2:-/lib/modules/$kver/build}
series=$(echo "$kver" | cut -d. -f1-2)
tarball=/usr/src/linux-source-$series.tar.xz
[ -f "$tarball" ] || {
	echo "siw-ko.sh: no $tarball (apt-get install linux-source-$series)" >&2
	exit 1
}
[ -d "$kdir" ] || { echo "siw-ko.sh: no kernel build dir $kdir" >&2; exit 1; }
out=$mmt_cache/siw/$kver-$(stat -c %Y "$tarball")
if [ -f "$out/siw.ko" ]; then
	echo "$out/siw.ko"
	exit 0
fi
echo "siw-ko.sh: building siw.ko for $kver from $tarball" >&2
tmp=$(mktemp -d "$mmt_cache/siw.XXXXXX" 2>/dev/null ||
	{ mkdir -p "$mmt_cache" && mktemp -d "$mmt_cache/siw.XXXXXX"; })
trap 'rm -rf "$tmp"' EXIT
tar -xJf "$tarball" -C "$tmp" --wildcards --strip-components=5 \
	"linux-source-$series/drivers/infiniband/sw/siw/*.[ch]"
printf 'obj-m := siw.o\nsiw-y := siw_cm.o siw_cq.o siw_main.o siw_mem.o siw_qp.o siw_qp_tx.o siw_qp_rx.o siw_verbs.o\n' \
	>"$tmp/Kbuild"
make -s -C "$kdir" M="$tmp" modules >&2
mkdir -p "$out"
cp "$tmp/siw.ko" "$out/siw.ko.tmp"
mv "$out/siw.ko.tmp" "$out/siw.ko"
echo "$out/siw.ko"
