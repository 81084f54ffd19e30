#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run.sh - boot N QEMU (TCG) guests, one per script, on a shared link
#
# Usage: run.sh [options] SCRIPT [SCRIPT...]
#   Guest i (1..N) runs the i-th SCRIPT as /opt/mmt/guest.sh, with
#   tests/guest/guestlib.sh sourced first, on the Debian kernel, with eth0 at
#   10.0.0.i/24.  All guests are joined by one Ethernet link: a QEMU stream
#   (TCP) link for N=2, a UDP multicast socket for N>2 (all guests on one
#   segment), an unconnected hub port for N=1.
#
# Options:
#   --name RUN      run name; outputs in build/guest/RUN/ (default: run)
#   --mtu N         MTU of eth0 (default 1500; 9000 doubles rxe's path MTU)
#   --timeout S     wall-clock limit of the whole run, seconds (default 300)
#   --mem SIZE      guest memory (default 512M)
#   --ko PATH       module to ship as /opt/mmt/mmt.ko (default: $MMT_KO, else
#                   driver/mmt.ko; it must exist unless --no-ko)
#   --no-ko         ship no module
#   --file PATH     also ship PATH as /opt/mmt/<basename> (repeatable)
#   --link TYPE     stream | mcast | none (default: see above)
#   --nic MODEL     the guests' NIC: virtio (virtio-net-pci, the default) or
#                   e1000 (slower, but its TX path does not stall under
#                   sustained rxe traffic as virtio-net has with QEMU 7.2)
#   --append ARGS   extra kernel command line
#   --share DIR     export host DIR to every guest over 9p, mounted at /host
#                   (read-write; results can also go there)
#   --tpm I:STATE   give guest I a TPM 2.0: an swtpm on the TPM state
#                   directory STATE (tests/attest/swtpm-lib.sh makes one),
#                   attached as QEMU's tpm-crb (-tpmdev emulator); the
#                   guest sees /dev/tpm0 and /dev/tpmrm0 (repeatable)
#   --fabric F      the guests' RDMA device: rxe (Soft-RoCE, rxe0; the
#                   default, also from $FABRIC) or siw (Soft-iWARP, siw0,
#                   a siw.ko built by scripts/siw-ko.sh): mmtg_add_rxe in
#                   the guest makes it (mmtg_fabric=F)
#   --interactive   one guest with its console on this terminal and a shell
#                   instead of a script (SCRIPT optional: run first); quit
#                   with `reboot -f` or Ctrl-a x
#
# Outputs in build/guest/RUN/: g<i>.log (console, \r stripped),
# g<i>.swtpm.log (the guest's swtpm, with --tpm),
# g<i>.results/<name> (files the guest sent with mmtg_result),
# g<i>.kernel-errors (kernel log lines with Oops/WARNING/BUG/...),
# g<i>.rc (the guest script's exit code, "none" without marker);
# boot-retries and g<i>.boot<k>.log if boot k of the run failed before
# /init.
#
# Restarts: a guest that prints a line "MMT-GUEST-RESTART [ARGS]" on its
# console and then ends (a reset: echo b >/proc/sysrq-trigger, as a node
# that was killed) is booted again, with ARGS added to its kernel command
# line, and runs its script from the top; its earlier boots' consoles go
# to g<i>.restart<k>.log and are put in front of g<i>.log when the run
# ends.  At most RESTARTS (default 8) in a run; not on a stream link
# (guest 1 is its server).
#
# Boots: a kernel that reports an error, dies or hangs before /init (the
# module is not loaded yet) is the kernel's or QEMU's failure, not the
# module's: all guests of the run are stopped and booted again, at most
# BOOTS times in all (default 3), and the failed boots are kept and
# listed in boot-retries (tests/guest/tests prints them).  BOOT_TIMEOUT
# (default 150 s) is how long a boot may take to reach /init.
#
# Exit status: 0 if every guest printed its exit marker with rc=0 and its
# kernel log is clean; 1 otherwise (the log tail of a failed guest is
# printed); 2 on usage errors.
#
# Environment: KVER (guest kernel), GUEST_KDIR (boot a kernel of the
# project's own: the directory scripts/debug-kernel.sh prints),
# GUEST_BUILD (default <repo>/build/guest),
# QEMU (default qemu-system-x86_64).

set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
GUEST_BUILD=${GUEST_BUILD:-$ROOT/build/guest}
export GUEST_BUILD
QEMU=${QEMU:-qemu-system-x86_64}

# Kernel log lines that fail a run.  Only lines carrying a printk time
# stamp are kernel lines: user programs print "WARNING:" too (perftest).
KERNEL_BAD='\[ *[0-9]+\.[0-9]+\].*(Oops|WARNING:|BUG:|KASAN|UBSAN|KFENCE|general protection|Kernel panic|blocked for more than|soft lockup|RCU stall|suspected memory leak|mmt-kmemleak:|possible recursive locking|possible circular locking|inconsistent lock state)'

RUN=run
MTU=1500
TIMEOUT=300
MEM=512M
# boots of a run whose kernel fails before /init (watch_boot), and how
# long one may take
BOOTS=${BOOTS:-3}
BOOT_TIMEOUT=${BOOT_TIMEOUT:-150}
KO=${MMT_KO:-$ROOT/driver/mmt.ko}
NO_KO=0
LINK=
NIC=${MMTG_NIC:-virtio}
APPEND=
FABRIC=${FABRIC:-rxe}
SHARE=
INTERACTIVE=0
FILES=()
SCRIPTS=()
PIDS=()
RESTART_APPEND=()
# when the QEMUs of this boot of the run must have ended (epoch seconds)
DEADLINE=0
# --tpm: the TPM state directory of guest i (its swtpm keeps its pid file
# and control socket there)
TPMS=()

# usage - print the header of this file
usage() {
	sed -n '4,44p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
	exit 2
}

# log MSG... - print a progress line to stderr
log() {
	echo "run.sh: $*" >&2
}

# parse_args ARGS... - set the globals from the command line
parse_args() {
	while [ $# -gt 0 ]; do
		case $1 in
		--name) RUN=$2; shift ;;
		--mtu) MTU=$2; shift ;;
		--timeout) TIMEOUT=$2; shift ;;
		--mem) MEM=$2; shift ;;
		--ko) KO=$2; shift ;;
		--no-ko) NO_KO=1 ;;
		--file) FILES+=("$2"); shift ;;
		--link) LINK=$2; shift ;;
		--nic) NIC=$2; shift ;;
		--append) APPEND=$2; shift ;;
		--fabric) FABRIC=$2; shift ;;
		--share) SHARE=$(cd "$2" && pwd); shift ;;
		--tpm)
			case $2 in
			[1-9]*:/*) TPMS[${2%%:*}]=${2#*:} ;;
			*) echo "run.sh: --tpm I:/absolute/state/dir" >&2; exit 2 ;;
			esac
			shift
			;;
		--interactive) INTERACTIVE=1 ;;
		-h|--help) usage ;;
		--) shift; SCRIPTS+=("$@"); break ;;
		-*) echo "run.sh: unknown option $1" >&2; usage ;;
		*) SCRIPTS+=("$1") ;;
		esac
		shift
	done
	case $FABRIC in
	rxe|siw) ;;
	*) echo "run.sh: --fabric rxe|siw (FABRIC), not '$FABRIC'" >&2; exit 2 ;;
	esac
	case $RUN in
	''|*/*|.*) echo "run.sh: bad run name '$RUN'" >&2; exit 2 ;;
	esac
	if [ $INTERACTIVE -eq 1 ]; then
		[ ${#SCRIPTS[@]} -le 1 ] || usage
	else
		[ ${#SCRIPTS[@]} -ge 1 ] || usage
	fi
	local s
	for s in "${SCRIPTS[@]}" "${FILES[@]}"; do
		[ -f "$s" ] || { echo "run.sh: no file $s" >&2; exit 2; }
	done
	# Soft-iWARP: Debian's kernels do not ship siw.ko; build it from the
	# kernel's source (scripts/siw-ko.sh) and ship it as /opt/mmt/siw.ko
	if [ "$FABRIC" = siw ]; then
		local kver siw
		kver=$("$HERE/mkinitramfs.sh" kver)
		siw=$("$ROOT/scripts/siw-ko.sh" "$kver" \
			${GUEST_KDIR:+"$GUEST_KDIR/build"}) || exit 2
		FILES+=("$siw")
	fi
	if [ $NO_KO -eq 0 ] && [ ! -f "$KO" ]; then
		echo "run.sh: no module $KO (make module, or --ko/--no-ko)" >&2
		exit 2
	fi
}

# build_guest_programs - compile every tests/guest/*.c into a static
# program GUEST_BUILD/bin/<name> if the source, uapi/*.h or
# tests/guest/*.h is newer
build_guest_programs() {
	local c out

	mkdir -p "$GUEST_BUILD/bin"
	for c in "$HERE"/*.c; do
		[ -f "$c" ] || continue
		out=$GUEST_BUILD/bin/$(basename "$c" .c)
		if [ ! -x "$out" ] || [ "$c" -nt "$out" ] ||
		   [ -n "$(find "$ROOT/uapi" "$HERE" -maxdepth 1 -newer "$out" -name '*.h')" ]; then
			${CC:-gcc} -static -O2 -g -Wall -Wextra -Werror \
				-D_GNU_SOURCE -I"$ROOT/uapi" -o "$out.tmp.$$" "$c"
			mv "$out.tmp.$$" "$out"
		fi
	done
}

# make_initrd I SCRIPT BASE - write RUNDIR/g<I>.cpio: BASE plus an overlay
# with /opt/mmt/{guest.sh,guestlib.sh,mmt.ko,bin/*,<files>}
make_initrd() {
	local i=$1 script=$2 base=$3 ov f

	ov=$RUNDIR/overlay-g$i
	mkdir -p "$ov/opt/mmt/bin"
	cp "$HERE/guestlib.sh" "$ov/opt/mmt/"
	cp "$script" "$ov/opt/mmt/guest.sh"
	[ $NO_KO -eq 1 ] || cp "$KO" "$ov/opt/mmt/mmt.ko"
	for f in "$GUEST_BUILD"/bin/*; do
		# not a program another run is still building (tests' A+B):
		# its temporary file is renamed away under the glob
		case $f in *.tmp.*) continue ;; esac
		[ -f "$f" ] && cp "$f" "$ov/opt/mmt/bin/"
	done
	for f in "${FILES[@]}"; do
		cp "$f" "$ov/opt/mmt/"
	done
	"$HERE/mkinitramfs.sh" overlay "$RUNDIR/overlay-g$i.cpio" "$ov"
	rm -rf "$ov"
	cat "$base" "$RUNDIR/overlay-g$i.cpio" >"$RUNDIR/g$i.cpio"
	rm -f "$RUNDIR/overlay-g$i.cpio"
}

# port_busy PORT - true if something on this host listens on TCP PORT
port_busy() {
	[ -n "$(ss -Htln "sport = :$1" 2>/dev/null)" ]
}

# random_port - print a random TCP port in 20000..59999 that is not in use
random_port() {
	local p

	while :; do
		p=$((20000 + (RANDOM * 32768 + RANDOM + $$) % 40000))
		port_busy "$p" || { echo "$p"; return; }
	done
}

# netdev_args I PORT - print the -netdev/-device arguments of guest I
netdev_args() {
	local i=$1 port=$2 mac

	mac=$(printf '52:54:00:4d:%02x:%02x' $((i / 256)) $((i % 256)))
	case $LINK in
	none)
		echo "-netdev hubport,id=n0,hubid=0"
		;;
	stream)
		if [ "$i" -eq 1 ]; then
			echo "-netdev stream,id=n0,server=on,addr.type=inet,addr.host=127.0.0.1,addr.port=$port"
		else
			echo "-netdev stream,id=n0,server=off,addr.type=inet,addr.host=127.0.0.1,addr.port=$port"
		fi
		;;
	mcast)
		echo "-netdev socket,id=n0,mcast=239.77.$((port / 256 % 256)).$((port % 256)):$port,localaddr=127.0.0.1"
		;;
	esac
	case $NIC in
	e1000) echo "-device e1000,netdev=n0,mac=$mac" ;;
	*) echo "-device virtio-net-pci,netdev=n0,mac=$mac" ;;
	esac
}

# start_guest I PORT - start QEMU for guest I in the background (its pid is
# appended to PIDS); serial console in RUNDIR/g<I>.log
start_guest() {
	local i=$1 port=$2 kver kimg cmdline
	local -a net

	kver=$("$HERE/mkinitramfs.sh" kver)
	# the kernel: Debian's, or GUEST_KDIR's (scripts/debug-kernel.sh)
	kimg=/boot/vmlinuz-$kver
	[ -z "${GUEST_KDIR:-}" ] || kimg=$GUEST_KDIR/bzImage
	cmdline="console=ttyS0 loglevel=5 printk.time=1 panic=-1 mmtg_fabric=$FABRIC"
	cmdline+=" mmtg_id=$i mmtg_n=$N mmtg_ip=10.0.0.$i/24 mmtg_mtu=$MTU"
	cmdline+=" mmtg_timeout=$GUEST_TIMEOUT $APPEND${RESTART_APPEND[i]:+ ${RESTART_APPEND[i]}}"
	# The debug kernel's AML interpreter (KASAN under TCG) runs out of
	# its loop time in the PCI routing method, 35 s of every boot: route
	# PCI interrupts without ACPI; kasan_multi_shot: every KASAN report,
	# not only the first of the boot.  no5lvl: 4-level paging, although
	# QEMU's "max" CPU has LA57.  With 5-level paging, identify_cpu()
	# clears boot_cpu_data's feature bits (LA57 with them) for a moment
	# at boot, and an interrupt in that window made KASAN judge the
	# 5-level direct map and vmalloc addresses wild ("wild-memory-access
	# in do_raw_spin_lock", from handle_edge_irq, RIP in identify_cpu,
	# addresses ff11... and ffa0...): a boot failed before /init in
	# about one debug run in ten.
	[ -z "${GUEST_KDIR:-}" ] ||
		cmdline+=" pci=noacpi tsc=reliable no_timer_check kasan_multi_shot no5lvl"
	read -r -a net <<<"$(netdev_args "$i" "$port" | tr '\n' ' ')"
	if [ -n "$SHARE" ]; then
		net+=(-virtfs "local,path=$SHARE,mount_tag=host,security_model=none,id=h0")
		cmdline+=" mmtg_9p=host"
	fi
	if [ -n "${TPMS[i]:-}" ]; then
		start_swtpm "$i" || exit 1
		# shellcheck disable=SC2054 # QEMU's commas, not array elements
		net+=(-chardev "socket,id=tpmchr,path=${TPMS[i]}/swtpm.sock"
		      -tpmdev emulator,id=tpm0,chardev=tpmchr
		      -device tpm-crb,tpmdev=tpm0)
	fi
	: >"$RUNDIR/g$i.log"
	if [ $INTERACTIVE -eq 1 ]; then
		timeout -k 5 "$TIMEOUT" "$QEMU" -accel tcg -cpu max -smp 1 \
			-m "$MEM" -nodefaults -no-reboot -nographic \
			-serial mon:stdio -kernel "$kimg" \
			-initrd "$RUNDIR/g$i.cpio" -append "$cmdline" "${net[@]}"
		return
	fi
	timeout -k 5 "$((DEADLINE - $(date +%s)))" "$QEMU" \
		-accel tcg -cpu max -smp 1 \
		-m "$MEM" -nodefaults -no-reboot -display none -monitor none \
		-serial "file:$RUNDIR/g$i.log" \
		-kernel "$kimg" -initrd "$RUNDIR/g$i.cpio" \
		-append "$cmdline" "${net[@]}" \
		</dev/null >"$RUNDIR/g$i.qemu.err" 2>&1 &
	PIDS[i]=$!
}

# start_swtpm I - start the swtpm of guest I on its state directory
# TPMS[I], control channel STATE/swtpm.sock (QEMU connects to it; a UNIX
# socket path is at most 107 bytes, so STATE should be short, e.g. under
# /tmp); log RUNDIR/g<I>.swtpm.log
start_swtpm() {
	local i=$1 st=${TPMS[$1]}

	stop_swtpm "$i"
	rm -f "$st/swtpm.sock"
	swtpm socket --tpm2 --tpmstate dir="$st" \
		--ctrl type=unixio,path="$st/swtpm.sock" --terminate \
		--log file="$RUNDIR/g$i.swtpm.log",level=1 \
		--pid file="$st/swtpm.pid" --daemon || {
		log "guest $i: swtpm did not start on $st"
		return 1
	}
	for _ in $(seq 50); do
		[ -S "$st/swtpm.sock" ] && return 0
		sleep 0.1
	done
	log "guest $i: no swtpm socket $st/swtpm.sock"
	return 1
}

# stop_swtpm I - end guest I's swtpm, if it still runs.  The guest's
# kernel has sent TPM2_Shutdown when it rebooted (tpm_class_shutdown), and
# --terminate ends swtpm when QEMU closes the channel; a disorderly end
# would count as a dictionary-attack failure in the TPM's state
# (docs/ATTESTATION.md), so this waits before it sends SIGTERM
stop_swtpm() {
	local st=${TPMS[$1]:-} p

	[ -n "$st" ] && [ -f "$st/swtpm.pid" ] || return 0
	p=$(cat "$st/swtpm.pid")
	for _ in $(seq 30); do
		kill -0 "$p" 2>/dev/null || break
		sleep 0.1
	done
	if kill "$p" 2>/dev/null; then
		echo "run.sh: swtpm of guest $1 still ran 3 s after its QEMU: SIGTERM" \
			>>"$RUNDIR/g$1.swtpm.log"
	fi
	rm -f "$st/swtpm.pid"
}

# start_first_guest - start guest 1 (the stream server, if any) on a free
# port, retrying with another port if the listen fails; set PORT
start_first_guest() {
	local try port

	for try in 1 2 3 4 5; do
		port=$(random_port)
		PORT=$port
		start_guest 1 "$port"
		[ "$LINK" = stream ] || return 0
		# wait until QEMU listens (or dies, e.g. address in use)
		for _ in $(seq 100); do
			port_busy "$port" && return 0
			kill -0 "${PIDS[1]}" 2>/dev/null || break
			sleep 0.1
		done
		log "guest 1 could not listen on port $port (try $try):" \
			"$(cat "$RUNDIR/g1.qemu.err")"
		kill "${PIDS[1]}" 2>/dev/null || true
		wait "${PIDS[1]}" 2>/dev/null || true
	done
	log "no free port for the link"
	exit 1
}

# stop_guests - kill the QEMUs of this run still alive (on exit/interrupt)
stop_guests() {
	local p

	for p in "${PIDS[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	for p in "${!TPMS[@]}"; do
		stop_swtpm "$p"
	done
}

# watch_boot - wait until every guest of the run has reached /init (its
# "init: guest" line) and return 0; return 1 with BOOT_WHY set if one
# reported a kernel error, died or stayed silent for BOOT_TIMEOUT seconds
# before that.  Such a failure is the kernel's or QEMU's (the module is
# not loaded before /init): rare early-boot failures of the debug kernel
# under TCG (docs/TESTING.md) and of TCG itself
watch_boot() {
	local i t=0 up bad

	while [ "$t" -lt "$BOOT_TIMEOUT" ]; do
		up=0
		for i in $(seq "$N"); do
			if grep -aq '^init: guest ' "$RUNDIR/g$i.log"; then
				up=$((up + 1))
				continue
			fi
			bad=$(grep -aE -m 1 "$KERNEL_BAD" "$RUNDIR/g$i.log" || true)
			if [ -n "$bad" ]; then
				BOOT_WHY="guest $i: $bad"
				return 1
			fi
			if ! kill -0 "${PIDS[i]}" 2>/dev/null; then
				BOOT_WHY="guest $i: QEMU exited"
				return 1
			fi
		done
		[ "$up" -lt "$N" ] || return 0
		sleep 1
		t=$((t + 1))
	done
	BOOT_WHY="no /init after ${BOOT_TIMEOUT}s"
	return 1
}

# wait_guests - wait until every guest's QEMU has ended; boot a guest
# again that asked for it (MMT-GUEST-RESTART, see the top)
wait_guests() {
	local i live args k restarts=0

	while :; do
		live=0
		for i in $(seq "$N"); do
			[ -n "${PIDS[i]:-}" ] || continue
			if kill -0 "${PIDS[i]}" 2>/dev/null; then
				live=$((live + 1))
				continue
			fi
			wait "${PIDS[i]}" || true
			PIDS[i]=
			if ! grep -aq '^MMT-GUEST-RESTART' "$RUNDIR/g$i.log" ||
			    grep -aq '^MMT-GUEST-EXIT' "$RUNDIR/g$i.log"; then
				stop_swtpm "$i"
				continue
			fi
			if [ "$LINK" = stream ] ||
			    [ "$restarts" -ge "${RESTARTS:-8}" ] ||
			    [ $((DEADLINE - $(date +%s))) -lt 30 ]; then
				log "$RUN: guest $i asked to be booted again: not done" \
					"(link $LINK, $restarts restart(s)," \
					"$((DEADLINE - $(date +%s))) s left)"
				continue
			fi
			args=$(grep -a '^MMT-GUEST-RESTART' "$RUNDIR/g$i.log" |
			       tail -n 1 | tr -d '\r')
			args=${args#MMT-GUEST-RESTART}
			k=1
			while [ -e "$RUNDIR/g$i.restart$k.log" ]; do
				k=$((k + 1))
			done
			mv "$RUNDIR/g$i.log" "$RUNDIR/g$i.restart$k.log"
			restarts=$((restarts + 1))
			log "$RUN: guest $i reset itself: booting it again" \
				"(restart $restarts,$args)"
			RESTART_APPEND[i]=${args# }
			start_guest "$i" "$PORT"
			live=$((live + 1))
		done
		[ "$live" -gt 0 ] || return 0
		sleep 1
	done
}

# collect I - post-process guest I's log: strip \r, split out the result
# files, scan the kernel lines, write g<I>.rc; print "ok"/"fail: why"
collect() {
	local i=$1 log=$RUNDIR/g$1.log rc line name

	if [ -s "$RUNDIR/g$i.qemu.err" ]; then
		cat "$RUNDIR/g$i.qemu.err" >>"$log"
	fi
	if [ -e "$RUNDIR/g$i.restart1.log" ]; then
		cat "$RUNDIR"/g"$i".restart[0-9]*.log "$log" >"$log.all"
		mv "$log.all" "$log"
	fi
	sed -i 's/\r$//; s/\r/\n/g' "$log"
	mkdir -p "$RUNDIR/g$i.results"
	grep -a '^@R@[^@ /]*@ ' "$log" | while IFS= read -r line; do
		name=${line#@R@}
		name=${name%%@ *}
		printf '%s\n' "${line#@R@"$name"@ }" >>"$RUNDIR/g$i.results/$name"
	done || true
	grep -aE "$KERNEL_BAD" "$log" >"$RUNDIR/g$i.kernel-errors" || true
	rc=$(grep -a '^MMT-GUEST-EXIT rc=' "$log" | tail -n 1 |
	     sed 's/.*rc=//') || true
	echo "${rc:-none}" >"$RUNDIR/g$i.rc"
	if [ -z "$rc" ]; then
		echo "fail: no exit marker (guest hung, crashed or timed out)"
	elif [ -s "$RUNDIR/g$i.kernel-errors" ]; then
		echo "fail: kernel log has errors: $(head -n 1 "$RUNDIR/g$i.kernel-errors")"
	elif [ "$rc" != 0 ]; then
		echo "fail: guest script exit code $rc"
	else
		echo ok
	fi
}

# main ARGS... - build, boot, wait, collect
main() {
	local base i start verdict fails=0 boot

	parse_args "$@"
	start=$(date +%s)
	N=${#SCRIPTS[@]}
	if [ $INTERACTIVE -eq 1 ]; then
		N=1
		TIMEOUT=$((TIMEOUT > 86400 ? TIMEOUT : 86400))
	fi
	if [ -z "$LINK" ]; then
		case $N in
		1) LINK=none ;;
		2) LINK=stream ;;
		*) LINK=mcast ;;
		esac
	fi
	GUEST_TIMEOUT=$((TIMEOUT > 40 ? TIMEOUT - 20 : TIMEOUT))
	RUNDIR=$GUEST_BUILD/$RUN
	rm -rf "$RUNDIR"
	mkdir -p "$RUNDIR"

	base=$("$HERE/mkinitramfs.sh" base)
	build_guest_programs
	if [ $INTERACTIVE -eq 1 ]; then
		{
			[ ${#SCRIPTS[@]} -eq 1 ] && cat "${SCRIPTS[0]}"
			echo 'echo "interactive shell; reboot -f to quit"'
			echo 'ENV=/opt/mmt/guestlib.sh setsid cttyhack /bin/sh -i'
		} >"$RUNDIR/interactive.sh"
		make_initrd 1 "$RUNDIR/interactive.sh" "$base"
		start_guest 1 0
		return
	fi
	for i in $(seq "$N"); do
		make_initrd "$i" "${SCRIPTS[i - 1]}" "$base"
	done

	trap stop_guests EXIT INT TERM
	log "$RUN: $N guest(s), link $LINK, mtu $MTU, timeout ${TIMEOUT}s," \
		"setup $(($(date +%s) - start))s"
	for boot in $(seq "$BOOTS"); do
		DEADLINE=$(($(date +%s) + TIMEOUT))
		start_first_guest
		for i in $(seq 2 "$N"); do
			start_guest "$i" "$PORT"
		done
		watch_boot && break
		# a kernel that failed before /init: the module was not
		# loaded yet; boot all the guests of the run again
		stop_guests
		for i in $(seq "$N"); do
			wait "${PIDS[i]}" 2>/dev/null || true
			mv "$RUNDIR/g$i.log" "$RUNDIR/g$i.boot$boot.log"
		done
		echo "boot $boot: $BOOT_WHY" >>"$RUNDIR/boot-retries"
		[ "$boot" -lt "$BOOTS" ] || {
			for i in $(seq "$N"); do
				cp "$RUNDIR/g$i.boot$boot.log" "$RUNDIR/g$i.log"
			done
			break
		}
		log "$RUN: boot $boot failed before /init ($BOOT_WHY); booting again"
	done
	wait_guests
	trap - EXIT INT TERM

	for i in $(seq "$N"); do
		verdict=$(collect "$i")
		rm -f "$RUNDIR/g$i.cpio"
		if [ "$verdict" != ok ]; then
			fails=$((fails + 1))
			log "$RUN/g$i: $verdict; last lines of $RUNDIR/g$i.log:"
			tail -n 40 "$RUNDIR/g$i.log" | sed 's/^/    | /' >&2
		fi
	done
	log "$RUN: $N guest(s) done in $(($(date +%s) - start))s," \
		"$fails failed"
	[ $fails -eq 0 ]
}

main "$@"
