# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# g-criu-planted.sh - the test of mmt-ckpt's refusal checks (run
# criu-planted of tests/guest/tests): each /opt/mmt/mmt-planted-NAME.ko is
# the module with one check of driver/mmt_ckpt.c removed (criu_planted in
# tests/guest/tests says how); mmt-ckpt must report the check that names
# it as "not ok".

# want NAME - the mmt-ckpt check that must fail without NAME's check
want() {
	case $1 in
	replay) echo "the same image restored again: ESTALE" ;;
	eager) echo "byte 100000 of closure 1 flipped: EBADMSG" ;;
	handover) echo "source INVALID after it" ;;
	cap) echo "without CAP_CHECKPOINT_RESTORE / CAP_SYS_ADMIN: EPERM" ;;
	cancel) echo "the image of a resolved pending checkpoint: ESTALE" ;;
	fault) echo "a read-only buffer: EFAULT" ;;
	owner) echo "uid 1000 with CAP_CHECKPOINT_RESTORE only: restore of root's record EPERM" ;;
	*) echo "no such plant" ;;
	esac
}

mmtg_mmt_deps
for ko in "$MMTG_DIR"/mmt-planted-*.ko; do
	name=${ko##*/mmt-planted-}
	name=${name%.ko}
	w=$(want "$name")
	if ! mmtg_run 60 insmod "$ko"; then
		mmtg_notok "planted $name: insmod" "failed"
		continue
	fi
	mmtg_run 120 mmt-ckpt /dev/mmt 0 >"/tmp/ckpt-$name.out" 2>&1
	grep '^not ok' "/tmp/ckpt-$name.out" | sed "s/^/# $name: /"
	if grep -qxF "not ok - ckpt: $w" "/tmp/ckpt-$name.out"; then
		mmtg_ok "planted $name: mmt-ckpt reports \"$w\""
	else
		mmtg_notok "planted $name: mmt-ckpt reports \"$w\"" \
			"it passed without the check"
	fi
	mmtg_run 60 rmmod mmt
done
mmtg_done
