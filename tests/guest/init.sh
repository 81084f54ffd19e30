#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# /init of the test guests (busybox ash, PID 1).
#
# Mounts the pseudo file systems, brings up eth0 with the address and MTU
# that run.sh put on the kernel command line (mmtg_id=, mmtg_n=, mmtg_ip=,
# mmtg_mtu=, mmtg_timeout=), mounts the 9p share (mmtg_9p=TAG) at /host,
# then runs /opt/mmt/guest.sh (from the per-run
# overlay) with /opt/mmt/guestlib.sh sourced first, under timeout, and
# prints the marker line
#	MMT-GUEST-EXIT rc=<exit code>
# that run.sh waits for.  Then it reboots, which ends QEMU (-no-reboot).

export PATH=/sbin:/bin:/usr/sbin:/usr/bin
export HOME=/root

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /dev/shm
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
exec </dev/console >/dev/console 2>&1

# cmdline_get NAME DEFAULT - value of NAME=... on the kernel command line
cmdline_get() {
	# shellcheck disable=SC2013 # the words of one line
	for w in $(cat /proc/cmdline); do
		case $w in
		"$1"=*) echo "${w#*=}"; return ;;
		esac
	done
	echo "$2"
}

MMTG_ID=$(cmdline_get mmtg_id 1)
MMTG_N=$(cmdline_get mmtg_n 1)
MMTG_IPNET=$(cmdline_get mmtg_ip "10.0.0.$MMTG_ID/24")
MMTG_IP=${MMTG_IPNET%/*}
MMTG_MTU=$(cmdline_get mmtg_mtu 1500)
MMTG_TIMEOUT=$(cmdline_get mmtg_timeout 600)
export MMTG_ID MMTG_N MMTG_IP MMTG_MTU MMTG_TIMEOUT
hostname "guest$MMTG_ID"
# no RLIMIT_MEMLOCK limit for RDMA memory registration (busybox ash has -l)
# shellcheck disable=SC3045
ulimit -l unlimited 2>/dev/null

# network: virtio-net (or e1000: run.sh --nic) is a module in Debian's kernel
timeout 60 modprobe -a virtio_pci virtio_net e1000
ip link set lo up
i=0
while [ ! -e /sys/class/net/eth0 ] && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
if [ -e /sys/class/net/eth0 ]; then
	ip link set eth0 mtu "$MMTG_MTU"
	ip addr add "$MMTG_IPNET" dev eth0
	ip link set eth0 up
else
	echo "init: no eth0"
fi

# the host's --share directory, if any
if [ -n "$(cmdline_get mmtg_9p '')" ]; then
	timeout 60 modprobe -a 9pnet_virtio 9p &&
		mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 \
			"$(cmdline_get mmtg_9p '')" /host ||
		echo "init: cannot mount the 9p share"
fi

# paging: 5-level when the kernel kept LA57 (QEMU's "max" CPU has it; the
# debug kernel boots with no5lvl, tests/guest/run.sh)
_paging=4-level
grep -qw la57 /proc/cpuinfo && _paging=5-level
echo "init: guest $MMTG_ID/$MMTG_N ip $MMTG_IPNET mtu $MMTG_MTU kernel $(uname -r), $_paging paging"

# A debug kernel (tests/debug-kernel/debug.config) has kmemleak: forget
# what boot left behind, so that the scans at the end see only the run.
KMEMLEAK=/sys/kernel/debug/kmemleak
mountpoint -q /sys/kernel/debug 2>/dev/null ||
	mount -t debugfs none /sys/kernel/debug 2>/dev/null
if [ -w "$KMEMLEAK" ]; then
	echo scan >"$KMEMLEAK"
	echo clear >"$KMEMLEAK"
fi
rc=125
if [ -f /opt/mmt/guest.sh ]; then
	cd /tmp || exit
	# -k: SIGKILL 5 s after the SIGTERM if the script ignores it
	timeout -k 5 "$MMTG_TIMEOUT" /bin/sh -c \
		'. /opt/mmt/guestlib.sh && . /opt/mmt/guest.sh'
	rc=$?
else
	echo "init: no /opt/mmt/guest.sh"
fi
# The script ran out of time (124; 137 or 143 when killed): name every
# task stuck in uninterruptible sleep with its kernel stack, the evidence
# a hang leaves (the hung-task report prints only its header at this
# console level)
case $rc in
124 | 137 | 143)
	for d in /proc/[0-9]*; do
		st=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' \
			"$d/status" 2>/dev/null)
		[ "$st" = D ] || continue
		echo "init: blocked task ${d#/proc/} ($(cat "$d/comm")):"
		sed 's/^/init:     /' "$d/stack" 2>/dev/null
	done
	;;
esac
# kmemleak: two scans with a wait (an object is reported only once it has
# been unreferenced for a while); every report line goes to the kernel log
# (with a time stamp), where run.sh's check sees "mmt-kmemleak:"
if [ -w "$KMEMLEAK" ]; then
	echo scan >"$KMEMLEAK"
	sleep 6
	echo scan >"$KMEMLEAK"
	cat "$KMEMLEAK" >/tmp/kmemleak.report 2>/dev/null
	if [ -s /tmp/kmemleak.report ]; then
		while IFS= read -r line; do
			echo "mmt-kmemleak: $line" >/dev/kmsg
		done </tmp/kmemleak.report
	fi
	echo "init: kmemleak scanned: $(grep -c 'unreferenced object' /tmp/kmemleak.report) objects reported"
fi
sync
echo
echo "MMT-GUEST-EXIT rc=$rc"
reboot -f
sleep 5
echo o >/proc/sysrq-trigger
