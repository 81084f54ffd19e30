# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# g-planted.sh - the guest of the planted@debug run (tests/guest/tests): a
# module with a planted bug (Kbuild MMT_PLANT) on the debug kernel.  It
# creates, keys, writes and closes a few PMOs and unloads the module; the
# host then requires the kernel log to hold the report of the planted bug
# (KASAN for the use after free; the kmemleak scans of /init for the leak).

mmtg_t "planted: insmod mmt" mmtg_load_mmt
mmtg_t "planted: PMOs created, keyed, written and closed" \
	sh -c 'mmt-nonces -n 8 >/dev/null && mmt-nonces -n 8 >/dev/null'
mmtg_t "planted: rmmod mmt" mmtg_unload_mmt
mmtg_done
