# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# g-basic.sh - single-guest tests (run as /opt/mmt/guest.sh, guestlib.sh
# already sourced): the module and /dev/mmt, MMT_IOC_QUERY, the attested
# mode's ioctls, memory cgroup charges and killable waits for a PMO's lock
# (mmt-hygiene; its connection parts once Soft-RoCE is up), Soft-RoCE, and
# 100 load/unload cycles with a slab leak check.
#
# LEAK_CYCLES (default 100: total load/unload cycles) and LEAK_WARMUP
# (default 10: cycles before the first measurement) can be overridden from
# the environment of the guest script.

LEAK_WARMUP=${LEAK_WARMUP:-10}
LEAK_CYCLES=${LEAK_CYCLES:-100}
# Largest growth, in objects of any one kmalloc cache (and in vmalloc
# areas), between the two measurements that still passes: half an object
# per measured cycle, so a module that leaks one object per load fails.
LEAK_BOUND=$(((LEAK_CYCLES - LEAK_WARMUP) / 2))

# --- a. the module and /dev/mmt ----------------------------------------

# mmt_loaded - true if a module named mmt (or */mmt) is loaded
mmt_loaded() {
	grep -Eq '^([^ ]*/)?mmt ' /proc/modules
}

mmtg_t "insmod mmt.ko" mmtg_load_mmt
mmtg_t "module is listed as 'mmt' in /proc/modules" grep -q '^mmt ' /proc/modules
mmtg_check "/dev/mmt is a character device" -c /dev/mmt
mmtg_t "mmt-query (MMT_IOC_QUERY and its errors)" mmt-query /dev/mmt
# before mmt-attest-ioctl: attested mode, once entered, refuses to key a
# PMO (ENOKEY) until the module is unloaded
MMTG_CMD_TIMEOUT=120 mmtg_t "mmt-hygiene (memory cgroup charges, killable waits for a PMO's lock)" \
	mmt-hygiene /dev/mmt
mmtg_t "mmt-attest-ioctl (attested mode, MMT_IOC_ATTEST_* and their errors)" \
	mmt-attest-ioctl /dev/mmt
mmtg_t "rmmod mmt" mmtg_unload_mmt
mmtg_check "/dev/mmt gone after rmmod" ! -e /dev/mmt

# --- b. Soft-RoCE device ------------------------------------------------

# rxe_check - rxe0 is listed by ibv_devices and rdma link, port ACTIVE
rxe_check() {
	mmtg_run 30 ibv_devices >/tmp/ibv_devices 2>&1
	cat /tmp/ibv_devices
	grep -q '^ *rxe0 ' /tmp/ibv_devices || return 1
	mmtg_run 30 rdma link show >/tmp/rdma_link 2>&1
	cat /tmp/rdma_link
	grep -q '^link rxe0/1 state ACTIVE .*netdev eth0' /tmp/rdma_link
}

# rxe_gone - rxe0 no longer listed anywhere
rxe_gone() {
	mmtg_run 30 rdma link show >/tmp/rdma_link 2>&1 || return 1
	mmtg_run 30 ibv_devices >/tmp/ibv_devices 2>&1 || return 1
	! grep -q rxe0 /tmp/rdma_link /tmp/ibv_devices
}

mmtg_t "load rdma_rxe and the RDMA CM" mmtg_load_rxe
mmtg_t "rdma link add rxe0 type rxe netdev eth0" \
	rdma link add rxe0 type rxe netdev eth0
mmtg_t "rxe0 in ibv_devices and rdma link, ACTIVE" rxe_check
# a listener's connections charged to its owner's memory cgroup; SEND and
# RECV waiting for a PMO's lock die on SIGKILL (a connection to itself)
mmtg_t "insmod mmt.ko (connections on rxe0)" mmtg_load_mmt
MMTG_CMD_TIMEOUT=120 mmtg_t "mmt-hygiene --conn (a listener's connections charged to its group, killable SEND and RECV)" \
	mmt-hygiene --conn "$(mmtg_ip_of "$MMTG_ID")" /dev/mmt
mmtg_t "rmmod mmt (connections on rxe0)" mmtg_unload_mmt
mmtg_t "rdma link delete rxe0" rdma link delete rxe0
mmtg_t "rxe0 gone" rxe_gone

# --- c. load/unload cycles and slab leak check ---------------------------
#
# Method.  We load and unload the module LEAK_WARMUP times first (the first
# loads allocate one-time things: sysfs/kernfs nodes, module loader caches),
# take a snapshot, run LEAK_CYCLES - LEAK_WARMUP more cycles and take
# another.  A snapshot holds the number of allocated objects of every
# kmalloc-* cache and the number of vmalloc areas per allocating function.
# A module that leaks one kmalloc object of any size (or one vmalloc area)
# per load grows one entry by LEAK_CYCLES - LEAK_WARMUP; the test fails if
# any entry grew by more than LEAK_BOUND, half of that.
#
# The snapshot and comparison are guestlib.sh's mmtg_slab_* (exact counts
# with slub_debug=U,kmalloc-*, which tests/guest/tests sets).  Checked: a
# copy of the module leaking 64 bytes per load grows kmalloc-64 by 88 and
# fails.  Caches of the module's own (kmem_cache_create) need no count:
# kmem_cache_destroy with objects left logs "BUG <cache>: Objects
# remaining", which the kernel log scan catches.

# load_cycles N - load, check /dev/mmt, unload N times; fail on the first
# error
load_cycles() {
	_i=0
	while [ $_i -lt "$1" ]; do
		_i=$((_i + 1))
		mmtg_load_mmt || { echo "cycle $_i: insmod failed"; return 1; }
		[ -c /dev/mmt ] || { echo "cycle $_i: no /dev/mmt"; return 1; }
		mmtg_unload_mmt || { echo "cycle $_i: rmmod failed"; return 1; }
	done
}

if mmtg_slab_exact; then
	echo "slab counts: exact (slub_debug store_user on kmalloc-*)"
else
	echo "slab counts: approximate (no slub_debug=U,kmalloc-*: per-CPU" \
		"slabs may add up to a slab of noise per cache)"
fi
_t0=$(date +%s)
_cycles_ok=1
mmtg_t "load/unload $LEAK_WARMUP times" load_cycles "$LEAK_WARMUP" ||
	_cycles_ok=0
mmtg_slab_snapshot /tmp/slab.a
mmtg_t "load/unload $((LEAK_CYCLES - LEAK_WARMUP)) more times" \
	load_cycles $((LEAK_CYCLES - LEAK_WARMUP)) || _cycles_ok=0
mmtg_slab_snapshot /tmp/slab.b
echo "load/unload cycles took $(($(date +%s) - _t0)) s (guest clock)"
if [ $_cycles_ok -eq 1 ]; then
	mmtg_t "no slab growth over $((LEAK_CYCLES - LEAK_WARMUP)) cycles" \
		mmtg_slab_compare "$LEAK_BOUND" /tmp/slab.a /tmp/slab.b ||
		mmtg_slab_callers "$LEAK_BOUND" /tmp/slab.a /tmp/slab.b
else
	mmtg_notok "no slab growth over $((LEAK_CYCLES - LEAK_WARMUP)) cycles" \
		"not measured: the load/unload cycles failed"
fi
mmtg_result slab-after-warmup /tmp/slab.a
mmtg_result slab-after-cycles /tmp/slab.b
if mmt_loaded; then
	mmtg_notok "mmt not loaded at the end" "$(grep mmt /proc/modules)"
else
	mmtg_ok "mmt not loaded at the end"
fi

mmtg_done
