#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run.sh - the Debian packages on this machine, as a user installs them
# (part of make check's build stage):
#
#  1. make deb: mmt-dkms and mmt-utils into build/deb (scripts/deb.sh);
#     mmt-utils holds the systemd units of continuous attestation, not
#     enabled
#  2. dpkg -i both (their dependencies, dkms and libssl3, come with
#     scripts/deps.sh; apt-get -f install if one is missing): mmt-dkms's
#     postinst has DKMS build and install mmt.ko for the installed kernels
#  3. for each kernel of MMT_KVERS (scripts/lib.sh mmt_kernels: Debian's
#     default kernel, and unless KVER or KDIR is set the newest installed
#     kernel of each other supported series, 6.12): dkms status -k <ver>
#     says "installed" for this version (the machine's running kernel may
#     be another: hence -k).  The postinst builds for the running and the
#     newest kernel, or for all when the running one is not installed
#     and this is no upgrade; for a kernel it left out the check runs
#     `dkms install -k <ver>`, as the kernel's own postinst hook does for
#     a kernel installed later, and says so
#  4. modinfo -k <ver> finds it in /lib/modules/<ver>/updates/dkms, built
#     from this tree's sources (srcversion equal to driver/mmt.ko's for
#     the default kernel, to build/module-<ver>/driver/mmt.ko's for the
#     others: make check's build stage builds them before)
#  5. mmt-utils: mmtctl, mmt-bench, mmt-authority and mmt-attest run from
#     /usr/bin, CRIU's plugin is in /usr/lib/criu, the man pages are
#     where man finds them, and a program built with
#     `pkg-config --cflags --libs libmmt` links /usr/lib/<triplet>/libmmt.so
#     and runs
#
# The guest stage then loads that DKMS-built module in a guest for one
# delegation (tests/guest/tests, run "dkms").  Steps 2-5 change this
# machine's packages and need root; without root they are skipped.
# Prints one "ok"/"not ok" line per check, then "deb: N passed, N failed";
# exit status 1 if a check failed.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
. "$ROOT/scripts/lib.sh"
OUT=${O:-build}
case $OUT in
/*) ;;
*) OUT=$ROOT/$OUT ;;
esac
LOG=$OUT/deb-check.log
PASS=0
FAIL=0

ok() {
	PASS=$((PASS + 1))
	echo "ok - deb: $1"
}

notok() {
	FAIL=$((FAIL + 1))
	echo "not ok - deb: $1 ($2)"
}

finish() {
	echo "deb: $PASS passed, $FAIL failed"
	exit $((FAIL > 0))
}

# show FILE - the end of FILE, as comments
show() {
	tail -n 20 "$1" | sed 's/^/#   /'
}

# units: mmt-utils ships the systemd units of continuous attestation and
# /etc/default/mmt-attest (a conffile), and its postinst neither enables
# nor starts them (docs/ATTESTATION.md, "Running it")
units() {
	local deb tmp u missing=
	deb=$(echo "$debs" | grep '/mmt-utils_')
	tmp=$(mktemp -d)
	dpkg-deb -c "$deb" >"$tmp/list" && dpkg-deb -e "$deb" "$tmp/ctl"
	for u in lib/systemd/system/mmt-attest-renew.service \
		lib/systemd/system/mmt-authority.socket \
		lib/systemd/system/mmt-authority@.service etc/default/mmt-attest; do
		grep -q " \./$u\$" "$tmp/list" || missing="$missing $u"
	done
	if [ -n "$missing" ]; then
		notok "mmt-utils ships the attestation units" "missing:$missing"
	elif ! grep -qx /etc/default/mmt-attest "$tmp/ctl/conffiles"; then
		notok "mmt-utils ships the attestation units" "/etc/default/mmt-attest is no conffile"
	elif grep -q 'deb-systemd-invoke' "$tmp/ctl/postinst" ||
		[ "$(grep -c 'deb-systemd-helper debian-installed' "$tmp/ctl/postinst")" -ne 2 ]; then
		notok "mmt-utils ships the attestation units" "its postinst enables or starts them"
	else
		ok "mmt-utils ships mmt-attest-renew.service, mmt-authority.socket, mmt-authority@.service and /etc/default/mmt-attest, none enabled"
	fi
	rm -rf "$tmp"
}

# dkms_kernel KVER VERSION - mmt VERSION is built and installed by DKMS
# for KVER, from this tree's sources (steps 3 and 4)
dkms_kernel() {
	local k=$1 ver=$2 dkms_st ko wantko got how='' want='' same=''

	# (dkms 3.0.10's readelf warns about 6.12's compressed mmt.ko.xz)
	dkms_st=$(dkms status -m mmt -v "$ver" -k "$k" 2>&1 | grep -v '^readelf: ')
	if ! echo "$dkms_st" | grep -q "^mmt/$ver, $k, [^:]*: installed"; then
		echo "# not built by the postinst for $k: dkms install -m mmt -v $ver -k $k"
		dkms install -m mmt -v "$ver" -k "$k" >>"$LOG" 2>&1 || show "$LOG"
		how=" (by dkms install -k, not by the postinst)"
		dkms_st=$(dkms status -m mmt -v "$ver" -k "$k" 2>&1 | grep -v '^readelf: ')
	fi
	echo "# dkms status -m mmt -v $ver -k $k: $dkms_st"
	if echo "$dkms_st" | grep -q "^mmt/$ver, $k, [^:]*: installed"; then
		ok "dkms status: mmt $ver built and installed for $k$how"
	else
		notok "dkms status: mmt $ver built and installed for $k" \
			"${dkms_st:-nothing}"
	fi

	ko=$(modinfo -k "$k" -n mmt 2>/dev/null)
	wantko=$OUT/module-$k/driver/mmt.ko
	[ "$k" = "${KVER:-}" ] && wantko=driver/mmt.ko
	[ -f "$wantko" ] && want=$(modinfo -F srcversion "$wantko")
	got=$(modinfo -k "$k" -F srcversion mmt 2>/dev/null)
	[ -n "$want" ] && same=" (that of ${wantko#"$ROOT/"})"
	if [[ $ko == /lib/modules/$k/updates/dkms/mmt.ko* ]] &&
	   [ -n "$got" ] && { [ -z "$want" ] || [ "$got" = "$want" ]; }; then
		ok "modinfo -k $k mmt: $ko, srcversion $got$same"
	else
		notok "modinfo -k $k mmt: the DKMS build of this tree" \
			"${ko:-not found}, srcversion ${got:-none}, ${wantko#"$ROOT/"}'s ${want:-none}"
	fi
}

main() {
	local debs ver k prog tmp page triplet got

	cd "$ROOT" || exit 1
	mkdir -p "$OUT"
	if debs=$(O=$OUT scripts/deb.sh 2>"$LOG"); then
		ok "make deb builds $(echo "$debs" | xargs -n 1 basename | paste -sd ' ')"
	else
		show "$LOG"
		notok "make deb builds mmt-dkms and mmt-utils" "see $LOG"
		finish
	fi
	units
	if [ "$(id -u)" -ne 0 ]; then
		echo "ok - deb: install, dkms status, tools # SKIP not root"
		PASS=$((PASS + 1))
		finish
	fi
	if ! mmt_kernels 2>"$LOG"; then
		show "$LOG"
		notok "kernel to check DKMS against" "no kernel headers"
		finish
	fi
	ver=$(dpkg-parsechangelog -l debian/changelog -S Version)

	# shellcheck disable=SC2086 # the two package paths
	if dpkg -i $debs >"$LOG" 2>&1 ||
	   DEBIAN_FRONTEND=noninteractive apt-get install -f -y >>"$LOG" 2>&1; then
		ok "dpkg -i mmt-dkms mmt-utils (DKMS: $(grep -E '^Building for ' "$LOG" | tail -n 1))"
	else
		show "$LOG"
		notok "dpkg -i mmt-dkms mmt-utils" "see $LOG"
		finish
	fi

	for k in ${MMT_KVERS:-$KVER}; do
		dkms_kernel "$k" "$ver"
	done

	if /usr/bin/mmtctl --help >/dev/null 2>&1 &&
	   /usr/bin/mmt-bench --help >/dev/null 2>&1 &&
	   /usr/bin/mmt-authority --help >/dev/null 2>&1 &&
	   /usr/bin/mmt-attest --help >/dev/null 2>&1; then
		ok "mmtctl, mmt-bench, mmt-authority and mmt-attest run from /usr/bin"
	else
		notok "mmtctl, mmt-bench, mmt-authority and mmt-attest run from /usr/bin" "--help failed"
	fi

	# CRIU loads every plugin of /usr/lib/criu: it must export the
	# plugin descriptor (docs/CRIU.md)
	if nm -D /usr/lib/criu/mmt_criu.so 2>/dev/null |
	   grep -q ' D CR_PLUGIN_DESC$'; then
		ok "mmt_criu.so in /usr/lib/criu, with CRIU's plugin descriptor"
	else
		notok "mmt_criu.so in /usr/lib/criu, with CRIU's plugin descriptor" \
			"missing, or no CR_PLUGIN_DESC"
	fi

	got=
	for page in mmt.4 libmmt.3 mmtctl.8 mmt-bench.8 mmt-authority.8 \
		mmt-attest.8; do
		man -w "${page##*.}" "${page%.*}" >/dev/null 2>&1 ||
			got="$got $page"
	done
	if [ -z "$got" ]; then
		ok "man finds mmt(4), libmmt(3), mmtctl(8), mmt-bench(8), mmt-authority(8), mmt-attest(8)"
	else
		notok "man finds the manual pages" "missing:$got"
	fi

	tmp=$(mktemp -d)
	prog=$tmp/uses-libmmt
	triplet=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
	cat >"$tmp/uses-libmmt.c" <<'EOF'
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "libmmt.h"

int main(void)
{
	const char *s = mmtu_strerror(EBADMSG);

	printf("%s\n", s);
	return !s || !strlen(s) || MMT_API_VERSION < 1;
}
EOF
	# shellcheck disable=SC2046 # pkg-config prints a list of flags
	if cc -o "$prog" "$tmp/uses-libmmt.c" \
		$(pkg-config --cflags --libs libmmt) >"$LOG" 2>&1 &&
	   { ldd "$prog" >>"$LOG" 2>&1 || true; } &&
	   grep -q "libmmt.so => .*/$triplet/libmmt.so" "$LOG" &&
	   "$prog" >>"$LOG" 2>&1; then
		ok "a program built with pkg-config libmmt links /usr/lib/$triplet/libmmt.so and runs"
	else
		show "$LOG"
		notok "a program built with pkg-config libmmt" "see $LOG"
	fi
	rm -rf "$tmp"
	finish
}

main "$@"
