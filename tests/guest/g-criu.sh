# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# g-criu.sh - CRIU checkpoint/restore of processes holding PMOs, one guest
# (docs/CRIU.md; run `criu` of tests/guest/tests).  Debian's criu and its
# shared libraries are in the base image (mkinitramfs.sh EXTRA_BINS),
# the plugin arrives as /opt/mmt/mmt_criu.so.
#
# a. mmt-ckpt: the ioctls without CRIU (every refusal and its errno)
# b. mmt-criu-count (a keyed PMO it keeps counting into, a plain PMO,
#    /dev/mmt) dumped, then: a tampered image (one byte of a closure
#    flipped) refused, nothing restored, no PMO left; the image restored,
#    the program counts on, its PMO VALID and byte-exact (its own checks);
#    dumped again; the first image (a copy kept) refused: ESTALE; the
#    second restores
# c. the same program holding an mmt listener: the dump is refused with
#    the plugin's message, the process goes on
# d. a process without mmt fds dumps and restores as before
#
# CRIU_MIB (kernel command line criu_mib=, default 1): the PMO's size.

MIB=$(mmtg_arg criu_mib 1)
# helpers: field, advanced, alive, restored, start, dump, restore, refused,
# stop, gone, pmos, flip, show_logs; the plugin in $LIB
. "$MMTG_DIR/criulib.sh"

mmtg_t "insmod mmt.ko" mmtg_load_mmt
# criu's start-up checks create an nftables table
mmtg_t "modprobe nf_tables (for criu)" mmtg_run 60 modprobe nf_tables
mmtg_t "criu is there (criu --version)" criu --version

# --- a. the ioctls ---------------------------------------------------------

MMTG_CMD_TIMEOUT=120 mmtg_t "mmt-ckpt (MMT_IOC_PMO_CHECKPOINT, MMT_IOC_RESTORE, their refusals)" \
	mmt-ckpt /dev/mmt

# keyed_img DIR - the image file of the keyed PMO (the largest mmt-*.img)
keyed_img() {
	# shellcheck disable=SC2012 # names we made
	ls -S "$1"/mmt-*.img | head -n 1
}


# --- b. a counter with PMOs ------------------------------------------------

start /tmp/status "$MIB"
mmtg_t "mmt-criu-count runs and checks its PMO" \
	mmtg_wait 60 advanced /tmp/status 300 1
C0=$(field count /tmp/status)
K0=$(field checks /tmp/status)

T0=$(date +%s)
mmtg_t "criu dump of a process holding /dev/mmt, a keyed and a plain PMO" \
	dump /tmp/img1 || show_logs /tmp/img1/dump.log
T1=$(date +%s)
mmtg_t "the dumped process is gone" mmtg_wait 10 gone
C1=$(field count /tmp/status)
K1=$(field checks /tmp/status)
echo "# dumped at count=$C1 checks=$K1 (was $C0/$K0 before) in $((T1 - T0)) s"
mmtg_check "three mmt images (/dev/mmt, two PMOs)" \
	"$(find /tmp/img1 -name 'mmt-*.img' | wc -l)" -eq 3
mmtg_check "no PMO alive after the dump" "$(pmos)" -eq 0
cp -a /tmp/img1 /tmp/img1-copy
cp -a /tmp/img1 /tmp/img1-bad

# one byte of a closure's ciphertext flipped: closure 0's data, at the
# middle of the image's first closure
IMG=$(keyed_img /tmp/img1-bad)
SZ=$(wc -c <"$IMG")
OFF=$((4096 + (SZ - 4096) / (MIB * 8) / 2))
flip "$IMG" "$OFF"
mmtg_t "a tampered image (byte $OFF of $(basename "$IMG") flipped): restore refused" \
	refused restore /tmp/img1-bad
mmtg_t "its refusal is the module's EBADMSG" \
	grep -q 'mmt_criu: cannot restore .*Bad message' \
	/tmp/img1-bad/restore.log /tmp/img1-bad/stderr.log
mmtg_check "nothing half-restored: no PMO alive" "$(pmos)" -eq 0
mmtg_check "nothing half-restored: the status file unchanged" \
	"$(field count /tmp/status)" -eq "$C1"

T0=$(date +%s)
mmtg_t "criu restore of the image" restore /tmp/img1 ||
	show_logs /tmp/img1/restore.log
T1=$(date +%s)
echo "# restored in $((T1 - T0)) s"
PID=$(cat /tmp/img1/restored.pid 2>/dev/null || echo 0)
mmtg_t "the restored process counts on, its PMOs VALID and byte-exact" \
	mmtg_wait 60 restored /tmp/status "$C1" "$K1"
C2=$(field count /tmp/status)
K2=$(field checks /tmp/status)
echo "# after the restore: count=$C2 checks=$K2"

mmtg_t "criu dump again (a newer image)" dump /tmp/img2 ||
	show_logs /tmp/img2/dump.log
mmtg_t "the dumped process is gone" mmtg_wait 10 gone
C3=$(field count /tmp/status)
K3=$(field checks /tmp/status)
mmtg_t "the same, older image restored again: refused" \
	refused restore /tmp/img1-copy
mmtg_t "its refusal is the module's ESTALE" \
	grep -q 'mmt_criu: cannot restore .*Stale file handle' \
	/tmp/img1-copy/restore.log /tmp/img1-copy/stderr.log
mmtg_check "no PMO alive after the refusal" "$(pmos)" -eq 0
mmtg_t "criu restore of the newer image" restore /tmp/img2 ||
	show_logs /tmp/img2/restore.log
PID=$(cat /tmp/img2/restored.pid 2>/dev/null || echo 0)
mmtg_t "it counts on, byte-exact" mmtg_wait 60 restored /tmp/status "$C3" "$K3"
stop

# --- c. a process holding an mmt listener: refused ---------------------------

if mmtg_add_rxe rxe0 eth0 >/dev/null 2>&1; then
	start -l 7990 /tmp/status "$MIB"
	mmtg_t "a counter holding an mmt listener runs" \
		mmtg_wait 60 advanced /tmp/status 0 0
	mmtg_t "its dump is refused" refused dump /tmp/img3
	mmtg_t "with the plugin's message" \
		grep -q 'mmt_criu: fd .* is an mmt listener: it cannot be checkpointed' \
		/tmp/img3/dump.log /tmp/img3/stderr.log
	C4=$(field count /tmp/status)
	K4=$(field checks /tmp/status)
	mmtg_t "the process goes on, its PMO intact" \
		mmtg_wait 60 advanced /tmp/status "$C4" "$K4"
	stop
else
	mmtg_notok "Soft-RoCE for the listener case" "mmtg_add_rxe failed"
fi

# --- d. no mmt fds -----------------------------------------------------------

start -n /tmp/status
mmtg_t "a counter without mmt fds runs" mmtg_wait 60 advanced /tmp/status 256 -1
C5=$(field count /tmp/status)
mmtg_t "criu dump of it" dump /tmp/img4 || show_logs /tmp/img4/dump.log
mmtg_t "criu restore of it" restore /tmp/img4 ||
	show_logs /tmp/img4/restore.log
PID=$(cat /tmp/img4/restored.pid 2>/dev/null || echo 0)
mmtg_t "it counts on" mmtg_wait 60 restored /tmp/status "$C5" -1
stop

mmtg_t "rmmod mmt" mmtg_unload_mmt
mmtg_done
