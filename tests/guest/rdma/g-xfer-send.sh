# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# g-xfer-send.sh - two-guest connection test, sending side (guest 1): one
# mmt-xfer sender per case of g-xfer-recv.sh (guest 2), connecting to its
# port (retrying while the receiver is not listening yet).

PEER=$(mmtg_ip_of 2)

mmtg_t "send: rxe0 on eth0" mmtg_add_rxe rxe0 eth0
mmtg_t "send: insmod mmt.ko" mmtg_load_mmt
echo 0 >/proc/sys/net/ipv6/conf/eth0/accept_dad
mmtg_t "send: IPv6 address fd00::$MMTG_ID" \
	ip -6 addr add "fd00::$MMTG_ID/64" dev eth0
mmtg_t "send: ping $PEER" mmtg_wait 60 ping -c 1 -W 2 "$PEER"

# slab_snap FILE - active objects of the kmalloc caches, sorted by name
slab_snap() {
	# Objects freed with kfree_rcu (kernfs, rdma_cm) reach the slab up to
	# 5 s later on 6.1, and per-CPU slabs hide frees until a shrink: as in
	# tests/pmo/guest.sh, shrink every kmalloc cache and wait first.
	for _c in /sys/kernel/slab/kmalloc-*; do
		echo 1 >"$_c/shrink" 2>/dev/null
	done
	sleep 6
	awk '/^kmalloc-/ { print $1, $2 }' /proc/slabinfo | sort >"$1"
}

# slab_grew A B... - the largest growth from snapshot A to the smallest
# count of the later snapshots B... ("N cache"): objects that come and go
# (skb heads waiting in virtio-net's TX ring) are not a leak
slab_grew() {
	awk 'BEGIN { m = 0; c = "-" }
	     FILENAME == ARGV[1] { a[$1] = $2; next }
	     ($1 in a) { if (!($1 in b) || $2 < b[$1]) b[$1] = $2 }
	     END { for (k in b) if (b[k] - a[k] > m) { m = b[k] - a[k]; c = k }
		   print m, c }' "$@"
}

# leak_rounds ROLE ARGS... - 24 one-connection transfers (ports 7430..7453)
# with a kmalloc snapshot after the 4th; fails if a cache grew by more
# than 10 objects over the last 20 (a leak per connection shows >= 20)
leak_rounds() {
	_role=$1
	shift
	_i=0
	while [ $_i -lt 24 ]; do
		[ $_i -eq 4 ] && slab_snap /tmp/slab.a
		mmtg_run 60 mmt-xfer "$_role" -p $((7430 + _i)) -n 2 \
			-s $((100 + _i)) "$@" >/tmp/leak.out 2>&1 || {
			cat /tmp/leak.out
			return 1
		}
		_i=$((_i + 1))
	done
	for _i in 1 2 3; do	# let the network stack settle
		ping -c 1 -W 1 "$(mmtg_ip_of 2)" >/dev/null 2>&1
		sleep 1
		slab_snap /tmp/slab.b$_i
	done
	set -- $(slab_grew /tmp/slab.a /tmp/slab.b1 /tmp/slab.b2 /tmp/slab.b3)
	echo "leak check: largest kmalloc growth over 20 connections: $1 ($2)"
	[ "$1" -le 10 ]
}

# s NAME PORT ARGS... - one sender run
s() {
	_name=$1
	_port=$2
	shift 2
	MMTG_CMD_TIMEOUT=${T:-120} mmtg_t "send: $_name" \
		mmt-xfer send -i 1 -a "$PEER" -p "$_port" "$@"
}

s "mmt transfer, 1 closure" 7401 -n 1 -s 11
s "connect to a port nobody listens on: ECONNREFUSED" 7499 -N \
	-X ECONNREFUSED
s "connect to an address nobody has: EHOSTUNREACH" 7498 -a 10.0.0.99 -N \
	-X EHOSTUNREACH
s "mmt transfer, 32 closures" 7402 -n 32 -s 12
s "mmt copy, 32 closures" 7403 -n 32 -s 13 -C
s "plain, 32 closures" 7404 -n 32 -s 14 -c plain
s "mmt transfer, one 2 MiB closure (3 levels)" 7405 -n 1 -l 3 -s 15
s "mmt transfer, 16 MiB: 8 closures of 2 MiB" 7416 -n 8 -l 3 -s 23
s "plain, 4 closures of 2 MiB" 7417 -n 4 -l 3 -s 24 -c plain
s "secure, 32 closures" 7406 -n 32 -s 25 -c secure
s "secure, 4 closures of 2 MiB" 7460 -n 4 -l 3 -s 26 -c secure
s "secure, receiver has another key: EBADMSG, data intact" 7461 -n 8 \
	-s 27 -c secure -X EBADMSG -R
s "other geometry: EMEDIUMTYPE" 7407 -n 16 -l 2 -X EMEDIUMTYPE -R
s "idle receiver: ETIMEDOUT, data intact" 7408 -n 4 -t 1500 -X ETIMEDOUT -R
s "IPv6, 4 closures" 7412 -a "fd00::2" -n 4 -s 20
s "both directions at once on one connection" 7415 -n 32 -s 22 -B
s "receiver refuses (replay rule): ESTALE, data intact" 7414 -n 32 \
	-s 21 -X ESTALE -R
MMTG_CMD_TIMEOUT=200 mmtg_t "send: 20 connections leak no kmalloc object" \
	leak_rounds send -i 1 -a "$PEER"
s "peer killed mid-transfer (copy): ECONNRESET, data intact" 7409 \
	-n 128 -s 17 -C -X ECONNRESET -R
s "retry after the kill (copy)" 7410 -n 128 -s 17 -C
s "peer killed mid-transfer (transfer): ECONNRESET, data intact" 7411 \
	-n 128 -s 19 -X ECONNRESET -R
mmtg_run 10 rdma statistic show link rxe0/1
s "idle connection while the peer's device is removed" 7413 -W 8000
mmtg_t "send: rmmod mmt" mmtg_unload_mmt
dmesg | grep -i 'mmt' | tail -n 20
mmtg_done
