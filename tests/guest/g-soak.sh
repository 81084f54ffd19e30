# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# g-soak.sh - one node of the fault soak (make soak; tests/soak/check.py
# decides): every guest of the run runs this script.  The workload is
# mmt-soak (tests/guest/mmt-soak.c): token PMOs written and migrated live
# between the nodes; this script is also the node's nemesis, which every
# 15-30 s injects one fault, chosen at random:
#   netem     10 % loss and 30 ms delay on eth0 for 8 s (sch_netem)
#   linkcut   eth0 down for 5 s
#   ackloss   the next migration into this node commits and its COMMIT
#             ACK is never sent (debugfs mmt/conn_fault "commit noack"):
#             its source's outcome is unknown
#   comdrop   the next COMMIT to this node is lost with the link ("commit
#             drop"): unknown at the source, aborted here
#   devremove the rxe device removed for 3 s, then added again
#   ackdrop   the next ACK of closure 2 that this node receives as a
#             sender is dropped ("ack 2 drop"): a delegation from this
#             node then ends with closures of unknown outcome, resolved
#             on its destination's statement; a migration fails
#   reload    the agent killed, the module unloaded and loaded again, a
#             new agent (this node's tokens are lost with its memory)
#   reboot    the guest reset at once (sysrq b: no shutdown, as a node
#             killed), booted again by run.sh (MMT-GUEST-RESTART), which
#             runs this script from the top with the run's end and the
#             boot's number on the kernel command line; a new agent
#             (this node's tokens are lost with the node)
# Each fault is logged "soak N MS NODE KIND" when it begins.
# Kernel command line: soak_secs (default 180), soak_plant (force: the
# agents resolve an unknown outcome by force at once, the planted
# violation the checker must catch), soak_moves (mmt-soak -m: the
# workload's moves, default all); after a reboot fault soak_end (the
# run's end, epoch seconds) and soak_boot (this node's boot, 2, 3...).

SECS=$(mmtg_arg soak_secs 180)
PLANT=$(mmtg_arg soak_plant "")
MOVES=$(mmtg_arg soak_moves migrate,delegate,checkpoint)
NODES=$(mmtg_arg soak_nodes 3)
BOOT=$(mmtg_arg soak_boot 1)
PORT=7700
END=$(mmtg_arg soak_end $(($(date +%s) + SECS)))
[ "$BOOT" = 1 ] || echo "soak N $(($(date +%s) * 1000)) $MMTG_ID up $BOOT"

mmtg_t "soak: rxe0 on eth0" mmtg_add_rxe rxe0 eth0
mmtg_t "soak: insmod mmt.ko (test build)" mmtg_load_mmt
modprobe sch_netem 2>/dev/null
for i in $(seq 1 "$NODES"); do
	[ "$i" = "$MMTG_ID" ] && continue
	mmtg_t "soak: ping node $i" mmtg_wait 60 ping -c 1 -W 2 \
		"$(mmtg_ip_of "$i")"
done

# agent_start - a new agent for the rest of the run, in the background
agent_start() {
	_left=$((END - $(date +%s)))
	[ "$_left" -gt 10 ] || return 0
	mmt-soak -i "$MMTG_ID" -N "$NODES" -p "$PORT" -t "$_left" \
		-s "$(($(date +%s) + MMTG_ID))" -m "$MOVES" \
		${PLANT:+-P "$PLANT"} &
	AGENT=$!
}

fault() {
	echo "soak N $(($(date +%s) * 1000)) $MMTG_ID $1"
}

# the planted violation: the first migration into each node loses its
# answer, so each source's outcome is unknown and forced at once
[ -n "$PLANT" ] && [ "$BOOT" = 1 ] &&
	echo "commit noack" >/sys/kernel/debug/mmt/conn_fault
# node 1 loses the first ACK of a closure 2 it is sent, so that runs
# with delegations resolve one of unknown outcome
[ "$MMTG_ID.$BOOT" = 1.1 ] && echo "ack 2 drop" >/sys/kernel/debug/mmt/conn_fault
# the nodes start together: the first faults wait for the agents
agent_start
sleep 20
SEED=$(($(date +%s) * 31 + MMTG_ID * 7))
# the first fault of node 1 loses a COMMIT's answer, node 2's a COMMIT, so
# that every run resolves both outcomes, node 3 is reset; then at random
case $MMTG_ID.$BOOT in
1.1) FIRST=2 ;;
2.1) FIRST=3 ;;
3.1) FIRST=6 ;;
*) FIRST= ;;
esac
while [ $(($(date +%s) + 40)) -lt "$END" ]; do
	# an LCG modulo 2^31: its low bits repeat with a short period (K =
	# SEED % 8 took four values only), so its high bits are used
	SEED=$(((SEED * 1103515245 + 12345) % 2147483648))
	sleep $((15 + SEED / 65536 % 16))
	SEED=$(((SEED * 1103515245 + 12345) % 2147483648))
	K=$((SEED / 65536 % 8))
	[ -n "$FIRST" ] && K=$FIRST
	FIRST=
	# a reset needs two minutes of run left, and a node is reset at most
	# once in every ten minutes of the run so far (boot N + 1 only after
	# N x 10 minutes): run.sh boots a node again at most RESTARTS times
	if [ "$K" = 6 ] && { [ $(($(date +%s) + 120)) -gt "$END" ] ||
	    [ "$BOOT" -gt $(((SECS - (END - $(date +%s))) / 600 + 1)) ]; }; then
		K=0
	fi
	case $K in
	0)
		fault netem
		tc qdisc add dev eth0 root netem loss 10% delay 30ms &&
			sleep 8
		tc qdisc del dev eth0 root 2>/dev/null
		;;
	1)
		fault linkcut
		ip link set eth0 down
		sleep 5
		ip link set eth0 up
		;;
	2)
		fault ackloss
		echo "commit noack" >/sys/kernel/debug/mmt/conn_fault
		;;
	3)
		fault comdrop
		echo "commit drop" >/sys/kernel/debug/mmt/conn_fault
		;;
	4)
		fault devremove
		rdma link delete rxe0
		sleep 3
		rdma link add rxe0 type rxe netdev eth0
		;;
	5)
		fault reload
		kill -9 "$AGENT" 2>/dev/null
		wait "$AGENT" 2>/dev/null
		sleep 1
		mmtg_unload_mmt && mmtg_load_mmt
		agent_start
		;;
	7)
		fault ackdrop
		echo "ack 2 drop" >/sys/kernel/debug/mmt/conn_fault
		;;
	6)
		fault reboot
		echo 1 >/proc/sys/kernel/sysrq
		echo "MMT-GUEST-RESTART soak_end=$END soak_boot=$((BOOT + 1))"
		sleep 1
		echo b >/proc/sysrq-trigger
		sleep 60
		;;
	esac
done
wait "$AGENT"
echo "soak: faults armed and not fired:"
cat /sys/kernel/debug/mmt/conn_fault
mmtg_t "soak: rmmod mmt" mmtg_unload_mmt
mmtg_done
