# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# g-dkms.sh - guest script of the run `dkms` (tests/guest/tests): the
# module DKMS built on the host from the mmt-dkms package
# (/lib/modules/<ver>/updates/dkms/mmt.ko, shipped as /opt/mmt/mmt.ko) and
# mmt-utils' /usr/bin/mmtctl (shipped as /opt/mmt/mmtctl; it needs only
# libc, which the guest has).  Load the module, check it is that build
# (its srcversion, from the host's modinfo, is on the kernel command line
# as mmtg_dkms_srcversion=), query it, delegate a PMO once (transfer mode,
# local delegation) and read it back byte-exact, unload it.

want=$(sed -n 's/.*mmtg_dkms_srcversion=\([^ ]*\).*/\1/p' /proc/cmdline)
ctl=$MMTG_DIR/mmtctl

mmtg_t "insmod the DKMS-built mmt.ko" mmtg_load_mmt
got=$(cat /sys/module/mmt/srcversion 2>/dev/null)
mmtg_check "it is the DKMS build (srcversion ${want:-?}: $got)" \
	-n "$want" -a "$got" = "$want"
mmtg_t "mmtctl (mmt-utils) query" "$ctl" query
head -c 300000 /dev/urandom >/tmp/in.bin
mmtg_t "mmtctl delegate --mode transfer: 300000 bytes byte-exact" sh -c \
	"$ctl delegate --mode transfer --in /tmp/in.bin --out /tmp/out.bin &&
	 cmp /tmp/in.bin /tmp/out.bin"
mmtg_t "rmmod mmt" mmtg_unload_mmt
mmtg_done
