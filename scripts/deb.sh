#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make deb`: builds the Debian packages mmt-dkms and mmt-utils with
# Debian's own tools (dpkg-buildpackage, debhelper, dh_dkms; debian/rules
# says what goes where) into $O/deb (default build/deb):
#   mmt-dkms_<version>_all.deb     the module's sources and dkms.conf
#   mmt-utils_<version>_<arch>.deb mmtctl, mmt-bench, libmmt, man pages
# The tree is copied to $O/deb/mmt-<version>/ first (tracked and untracked
# files, not the ignored ones: no build output), so nothing is written
# into the working tree or its parent directory.  The version is
# debian/changelog's; it must equal MMT_MODULE_VERSION, the version the
# module reports (driver/mmt_internal.h).
# Needs dpkg-dev, debhelper, dh-dkms and libssl-dev (scripts/deps.sh).
# Prints the paths of the two packages; exit status 1 on failure.
set -euo pipefail

. "$(dirname "$0")/lib.sh"
cd "$mmt_top"
out=${O:-build}/deb
case $out in
/*) ;;
*) out=$mmt_top/$out ;;
esac

for t in dpkg-buildpackage dh dh_dkms; do
	command -v "$t" >/dev/null ||
		{ echo "deb: no $t; run 'make deps'" >&2; exit 1; }
done
ver=$(dpkg-parsechangelog -S Version)
modver=$(sed -n 's/^#define MMT_MODULE_VERSION\t*"\(.*\)"$/\1/p' \
	driver/mmt_internal.h)
if [ "$ver" != "$modver" ]; then
	echo "deb: debian/changelog says $ver, MMT_MODULE_VERSION is '$modver': add a changelog entry (dch -v $modver)" >&2
	exit 1
fi

rm -rf "$out"
src=$out/mmt-$ver
mkdir -p "$src"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git ls-files -z -co --exclude-standard |
		while IFS= read -r -d '' f; do
			[ -e "$f" ] && printf '%s\0' "$f"
		done | cpio --quiet -0 -pdm "$src"
else
	tar --exclude=./build --exclude=./.git --exclude='*.o' \
		--exclude='*.ko' --exclude='*.cmd' --exclude='*.mod*' \
		-cf - . | tar -C "$src" -xf -
fi

# -b: binary packages only (the source is this tree); -us -uc: unsigned
(cd "$src" && dpkg-buildpackage -b -us -uc) >"$out/build.log" 2>&1 || {
	tail -n 30 "$out/build.log" >&2
	echo "deb: dpkg-buildpackage failed; log: $out/build.log" >&2
	exit 1
}
rm -rf "$src"
ls "$out"/mmt-dkms_"$ver"_all.deb "$out"/mmt-utils_"$ver"_*.deb
