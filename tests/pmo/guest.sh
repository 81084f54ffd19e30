# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# guest.sh - PMO tests inside one guest (run by tests/guest/run.sh as
# /opt/mmt/guest.sh, guestlib.sh already sourced).  Needs the static
# programs of tests/pmo/build.sh (pmo-basic, ioctl-fuzz, pmo-rlimit,
# pmo-cycles, mmtctl) in /opt/mmt/bin or /opt/mmt, and a module built with
# MMT_DEBUG=1 (for MMT_IOC_PMO_DEBUG) as /opt/mmt/mmt.ko.
#
#  a. pmo-basic: creation, keys and states, pread/pwrite byte-exact at
#     1 B, 4 KiB, 2 MiB + 1 B, 64 MiB, tampering -> EBADMSG, short
#     counts before a bad block, fd passing,
#     local delegation (transfer, copy, replay, other key, errors),
#     zero-byte calls and a pwrite failing part of the way, a sender whose
#     own memory fails verification and its way back
#  b. mmtctl: the same sizes through the command line (cmp), delegation in
#     both modes, exit codes 1 (usage), 3 (integrity), JSON output
#  c. pmo-rlimit: RLIMIT_MEMLOCK -> ENOMEM, charges returned, EMFILE
#  d. ioctl-fuzz: PMO_FUZZ_ITERS (20000) seeded iterations over every ioctl
#     with a concurrent closer; then a clean kernel log and rmmod
#  e. slab growth: load, PMO_CYCLES_WARMUP cycles, unload, measure; load,
#     PMO_CYCLES (1000) create/key/write/read/close cycles, unload, measure;
#     no kmalloc cache (or the vmalloc area count) may grow by more than
#     32 objects with slub_debug=U,kmalloc-* on the command line (exact
#     counts), else half an object per cycle
#
# Settings, from the guest environment or the kernel command line (run.sh
# --append 'pmo_fuzz_iters=2000 pmo_no_64m=1'): PMO_FUZZ_ITERS /
# pmo_fuzz_iters (20000), PMO_FUZZ_SEED / pmo_fuzz_seed (1), PMO_CYCLES /
# pmo_cycles (1000), PMO_CYCLES_WARMUP / pmo_cycles_warmup (20),
# PMO_NO_64M / pmo_no_64m (0; 1 skips the 64 MiB round trips), PMO_SEED /
# pmo_seed (data seed, 1).

PATH=$MMTG_DIR/bin:$MMTG_DIR:$PATH
export PATH

PMO_FUZZ_ITERS=${PMO_FUZZ_ITERS:-$(mmtg_arg pmo_fuzz_iters 20000)}
PMO_FUZZ_SEED=${PMO_FUZZ_SEED:-$(mmtg_arg pmo_fuzz_seed 1)}
PMO_CYCLES=${PMO_CYCLES:-$(mmtg_arg pmo_cycles 1000)}
PMO_CYCLES_WARMUP=${PMO_CYCLES_WARMUP:-$(mmtg_arg pmo_cycles_warmup 20)}
PMO_NO_64M=${PMO_NO_64M:-$(mmtg_arg pmo_no_64m 0)}
PMO_SEED=${PMO_SEED:-$(mmtg_arg pmo_seed 1)}
# kernel log lines that fail the run (as run.sh's KERNEL_BAD)
PMO_KERNEL_BAD='\[ *[0-9]+\.[0-9]+\].*(Oops|WARNING:|BUG:|KASAN|UBSAN|general protection|Kernel panic|blocked for more than|soft lockup|RCU stall)'

# pmo_long SECS NAME CMD... - mmtg_t with a longer per-command timeout
pmo_long() {
	_old=$MMTG_CMD_TIMEOUT
	MMTG_CMD_TIMEOUT=$1
	shift
	mmtg_t "$@"
	_rc=$?
	MMTG_CMD_TIMEOUT=$_old
	return $_rc
}

# expect_rc WANT CMD... - run CMD (under timeout), ok if it exits WANT
expect_rc() {
	_want=$1
	shift
	mmtg_run 600 "$@"
	_rc=$?
	[ "$_rc" -eq "$_want" ] || { echo "exit $_rc, want $_want"; return 1; }
}

# kernel_clean - no Oops/WARNING/BUG in the kernel log so far
kernel_clean() {
	dmesg >/tmp/dmesg.txt 2>&1
	if grep -Eq "$PMO_KERNEL_BAD" /tmp/dmesg.txt; then
		grep -E "$PMO_KERNEL_BAD" /tmp/dmesg.txt | head -n 5
		return 1
	fi
	return 0
}

echo "pmo: fuzz iters $PMO_FUZZ_ITERS seed $PMO_FUZZ_SEED, cycles $PMO_CYCLES, no_64m $PMO_NO_64M"

# --- a. pmo-basic ----------------------------------------------------------

mmtg_t "insmod mmt.ko" mmtg_load_mmt
mmtg_t "mmtctl query" mmtctl query
mmtctl query --json >/tmp/query.json 2>&1
cat /tmp/query.json
mmtg_t "module has PMOs, local delegation and the debug ioctl" \
	grep -q '"pmo": true, "local_delegate": true, "debug": true' \
	/tmp/query.json

_basic_args="--require-debug --seed $PMO_SEED"
[ "$PMO_NO_64M" = 1 ] && _basic_args="$_basic_args --no-64m"
# shellcheck disable=SC2086 # an argument list
pmo_long 3000 "pmo-basic" pmo-basic $_basic_args

# The guest has one CPU, so io_workers (0: the CPUs online) runs every call
# serially: once more with 4 I/O workers, so the calls over many closures
# take the parallel path, user buffers and faults included.
mmtg_t "io_workers 4" sh -c 'echo 4 >/sys/module/mmt/parameters/io_workers'
# shellcheck disable=SC2086 # an argument list
pmo_long 3000 "pmo-basic, 4 I/O workers" pmo-basic $_basic_args --no-64m
mmtg_t "io_workers back to 0" \
	sh -c 'echo 0 >/sys/module/mmt/parameters/io_workers'

# --- b. mmtctl ---------------------------------------------------------------

# mkfile NAME BYTES - random file /tmp/NAME of BYTES bytes
mkfile() {
	head -c "$2" /dev/urandom >"/tmp/$1"
}

# ctl_roundtrip NAME [OPTIONS] - mmtctl roundtrip of /tmp/NAME, cmp
ctl_roundtrip() {
	_f=$1
	shift
	rm -f "/tmp/$_f.out"
	mmtg_run 1500 mmtctl roundtrip --in "/tmp/$_f" --out "/tmp/$_f.out" \
		"$@" && cmp "/tmp/$_f" "/tmp/$_f.out"
}

# ctl_delegate MODE NAME [OPTIONS] - mmtctl delegate, cmp
ctl_delegate() {
	_m=$1
	_f=$2
	shift 2
	rm -f "/tmp/$_f.out"
	mmtg_run 1500 mmtctl delegate --mode "$_m" --in "/tmp/$_f" \
		--out "/tmp/$_f.out" "$@" && cmp "/tmp/$_f" "/tmp/$_f.out"
}

mkfile f1 1
mkfile f4k 4096
mkfile f2m1 2097153
mmtg_t "mmtctl roundtrip 1 byte" ctl_roundtrip f1
mmtg_t "mmtctl roundtrip 4 KiB at offset 4000, AES-256 key" ctl_roundtrip \
	f4k --offset 4000 --key-hex \
	000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
mmtg_t "mmtctl roundtrip 2 MiB + 1 in two 2 MiB closures" ctl_roundtrip \
	f2m1 --size 4M
mmtg_t "mmtctl roundtrip 2 MiB + 1, 2 levels, 256-byte blocks" \
	ctl_roundtrip f2m1 --levels 2 --block 256
if [ "$PMO_NO_64M" != 1 ]; then
	mkfile f64m 67108864
	pmo_long 1500 "mmtctl roundtrip 64 MiB" ctl_roundtrip f64m
	rm -f /tmp/f64m /tmp/f64m.out
fi
mmtg_t "mmtctl delegate transfer 2 MiB + 1" ctl_delegate transfer f2m1
mmtg_t "mmtctl delegate copy 2 MiB + 1" ctl_delegate copy f2m1
mmtg_t "mmtctl delegate copy, eager, 4 KiB" ctl_delegate copy f4k --eager \
	--levels 2
mmtg_t "mmtctl delegate to another key exits 3 (EBADMSG)" expect_rc 3 \
	mmtctl delegate --mode transfer --in /tmp/f4k --out /tmp/x --levels 1 \
	--key-hex 00112233445566778899aabbccddeeff \
	--receiver-key-hex ffeeddccbbaa99887766554433221100

# with-pmo: separate invocations on one PMO
printf '%s' 00112233445566778899aabbccddeeff >/tmp/key.hex
mmtg_t "mmtctl with-pmo: write, read, info in separate processes" \
	mmtg_run 600 mmtctl with-pmo --size 256K --levels 2 \
	--key-file /tmp/key.hex -- sh -c \
	'mmtctl write --fd 3 --in /tmp/f4k --offset 70000 &&
	 mmtctl read --fd 3 --offset 70000 --length 4096 --out /tmp/wp.out &&
	 cmp /tmp/f4k /tmp/wp.out && mmtctl info --fd 3 --json >/tmp/wp.json &&
	 grep -q "\"state\": \"VALID\"" /tmp/wp.json'
mmtg_t "mmtctl tamper then read exits 3 (EBADMSG)" \
	mmtg_run 600 mmtctl with-pmo --size 256K --levels 2 -- sh -c \
	'mmtctl write --fd 3 --in /tmp/f4k &&
	 mmtctl tamper --fd 3 --region data --offset 100 &&
	 { mmtctl read --fd 3 --length 4096 --out /tmp/t.out; [ $? -eq 3 ]; }'
mmtg_t "mmtctl roundtrip --json reports byte_exact" sh -c \
	'mmtctl roundtrip --json --in /tmp/f4k --out /tmp/j.out >/tmp/rt.json &&
	 cat /tmp/rt.json && grep -q "\"byte_exact\": true" /tmp/rt.json'
mmtg_t "mmtctl usage error exits 1" expect_rc 1 mmtctl roundtrip --in /tmp/f1
mmtg_t "mmtctl bad geometry exits 1" expect_rc 1 mmtctl create --levels 9
mmtg_t "mmtctl info on a non-PMO fd exits 2 (ENOTTY)" expect_rc 2 \
	mmtctl info --fd 0
rm -f /tmp/f1* /tmp/f4k* /tmp/f2m1* /tmp/*.out
mmtg_t "rmmod refused while a PMO fd is open" mmtg_run 60 mmtctl with-pmo \
	--levels 1 -- sh -c '! rmmod mmt 2>/dev/null && grep -q "^mmt " /proc/modules'

# --- c. rlimit ---------------------------------------------------------------

mmtg_t "pmo-rlimit" pmo-rlimit

# io_uring reads and writes go through the same controller
mmtg_t "pmo-uring" pmo-uring

# --- d. fuzz -----------------------------------------------------------------

pmo_long 3000 "ioctl-fuzz ($PMO_FUZZ_ITERS iterations, seed $PMO_FUZZ_SEED)" \
	ioctl-fuzz --iters "$PMO_FUZZ_ITERS" --seed "$PMO_FUZZ_SEED"
mmtg_t "kernel log clean after the fuzzer" kernel_clean
mmtg_t "rmmod after the fuzzer" mmtg_unload_mmt

# --- e. cycles and slab growth ----------------------------------------------
#
# guestlib.sh's mmtg_slab_* (SLUB object counts after a shrink),
# around module unloads: every object the module allocated must be freed
# by rmmod at the latest.

# With slub_debug=U,kmalloc-* (tests/pmo/run.sh sets it) the counts are
# exact (seen: at most +7 over 1000 cycles and a reload), so a leak on a
# path that runs in one cycle of 13 still fails; without it per-CPU slabs
# add a slab of noise per cache (+84 kmalloc-96 seen), and the bound is
# half an object per cycle, as in g-basic.sh.
if grep -q 'slub_debug=U,kmalloc' /proc/cmdline; then
	LEAK_BOUND=32
else
	LEAK_BOUND=$((PMO_CYCLES / 2))
fi

mmtg_t "insmod (cycles warm-up)" mmtg_load_mmt
mmtg_t "pmo-cycles warm-up ($PMO_CYCLES_WARMUP)" pmo-cycles --cycles \
	"$PMO_CYCLES_WARMUP"
mmtg_t "rmmod (warm-up)" mmtg_unload_mmt
mmtg_slab_snapshot /tmp/pmo-slab.a
mmtg_t "insmod (cycles)" mmtg_load_mmt
pmo_long 3000 "pmo-cycles ($PMO_CYCLES create/key/write/read/close)" \
	pmo-cycles --cycles "$PMO_CYCLES"
mmtg_t "rmmod after the cycles" mmtg_unload_mmt
mmtg_slab_snapshot /tmp/pmo-slab.b
mmtg_t "no slab growth over $PMO_CYCLES cycles and a reload" \
	mmtg_slab_compare "$LEAK_BOUND" /tmp/pmo-slab.a /tmp/pmo-slab.b ||
	mmtg_slab_callers "$LEAK_BOUND" /tmp/pmo-slab.a /tmp/pmo-slab.b
mmtg_result pmo-slab-before /tmp/pmo-slab.a
mmtg_result pmo-slab-after /tmp/pmo-slab.b
mmtg_t "kernel log clean at the end" kernel_clean

mmtg_done
