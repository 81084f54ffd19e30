# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# g-apps-mpi.sh - the apps-mpi run (tests/guest/tests apps-mpi), every
# guest: mmt-wordcount-mpi MnRn over 2n guests (n: apps_n= on the kernel
# command line) started by MPICH's hydra with its manual launcher (an
# existing launcher: mpiexec prints one hydra_pmi_proxy command line per
# host and waits for them to connect).  Guest 1 runs mpiexec and proxy 0
# and hands proxy i's command line to guest i+1 over the guests' TCP link
# (mmtg_send/mmtg_recv), which runs it: rank i runs in guest i+1 (one slot
# per host; each channel the fastest of 5 runs).  MPI carries the control messages (UCX over TCP on eth0); the
# data moves over mmt connections on the three channels.  WordCount, then
# PageRank (mmt-pagerank-mpi, R-MAT scale 12, 10 iterations) on all 2n
# ranks, each rank's vertices checked against apps-pr-ref.txt to 1e-9
# (--check) and sent to the host (pr.<channel>).  With
# apps_pr_sweep=K1,K2,... on the kernel command line (make paper's fig14)
# and 2 ranks, PageRank once more per K with --compute-per-edge K (the
# paper's comm-n% workloads), each rank checked in the guest.  Each reducer
# checks its share against apps-ref.txt (--check: mpiexec fails if one
# differs) and sends it to the host (mmtg_result wc.<channel>), which
# checks their union byte for byte; rank 0's JSON goes to the host too.

N=$(mmtg_arg apps_n 1)
RANK=$((MMTG_ID - 1))
ADDRS=$(mmtg_ip_of 1)
HOSTS=g1
printf '127.0.0.1 localhost\n%s g1\n' "$(mmtg_ip_of 1)" >/etc/hosts
_i=2
while [ $_i -le $((2 * N)) ]; do
	ADDRS=$ADDRS,$(mmtg_ip_of $_i)
	HOSTS=$HOSTS,g$_i
	echo "$(mmtg_ip_of $_i) g$_i" >>/etc/hosts
	_i=$((_i + 1))
done
hostname "g$MMTG_ID"

mmtg_t "mpi rank $RANK: rxe0 on eth0" mmtg_add_rxe rxe0 eth0
mmtg_t "mpi rank $RANK: insmod mmt.ko" mmtg_load_mmt
mkdir -p /tmp/in
mmtg_t "mpi rank $RANK: unpack the input" tar -xf "$MMTG_DIR/apps-input.tar" -C /tmp/in
# a fixed, public test key: the run shows correctness, not secrecy
echo 000102030405060708090a0b0c0d0e0f >/tmp/key

# launch PROGRAM ARGS... - guest 1: mpiexec with the manual launcher,
# proxy i's command line to guest i+1, proxy 0 here; mpiexec's status
launch() {
	mpiexec.hydra -launcher manual -iface eth0 -hosts "$HOSTS" -n $((2 * N)) \
		-genv UCX_TLS tcp,self -genv UCX_NET_DEVICES eth0 "$@" \
		>/tmp/mpi.out 2>&1 &
	_mpi=$!
	mmtg_wait 60 grep -q HYDRA_LAUNCH_END /tmp/mpi.out || {
		cat /tmp/mpi.out
		return 1
	}
	_i=1
	while [ $_i -lt $((2 * N)) ]; do
		_p=$(sed -n 's/^HYDRA_LAUNCH: //p' /tmp/mpi.out |
		     grep -- "--proxy-id $_i \$")
		mmtg_send "$(mmtg_ip_of $((_i + 1)))" 7599 "$_p" 120 || return 1
		_i=$((_i + 1))
	done
	_p=$(sed -n 's/^HYDRA_LAUNCH: //p' /tmp/mpi.out | grep -- '--proxy-id 0 $')
	# shellcheck disable=SC2086 # the command line hydra printed
	$_p >/tmp/proxy.out 2>&1 &
	wait $_mpi
	_rc=$?
	cat /tmp/mpi.out /tmp/proxy.out
	return $_rc
}

# proxy - guest i+1: run the hydra proxy command line guest 1 sends
proxy() {
	_cmd=$(mmtg_recv 7599 120) || return 1
	echo "proxy: $_cmd"
	case $_cmd in
	/usr/bin/hydra_pmi_proxy\ *) ;;
	*) echo "not a hydra proxy command"; return 1 ;;
	esac
	# shellcheck disable=SC2086 # the command line hydra printed
	$_cmd
}

SWEEP=$(mmtg_arg apps_pr_sweep | tr , ' ')
[ "$N" = 1 ] || SWEEP=

if [ "$RANK" = 0 ]; then
	MMTG_CMD_TIMEOUT=500 mmtg_t "mpi rank 0: mpiexec -launcher manual: WordCount M${N}R$N, plain, secure, mmt" \
		launch "$MMTG_DIR/mmt-wordcount-mpi" --addrs "$ADDRS" \
		--node-id rank --key-file /tmp/key --levels 2 --repeat 5 \
		--check "$MMTG_DIR/apps-ref.txt" --out /tmp/wc --json /tmp/in
	sed -n '/^{"app"/,/^}/p' /tmp/mpi.out >/tmp/wc.json
	[ -s /tmp/wc.json ] && mmtg_result_quiet wordcount.json /tmp/wc.json
	# PageRank on all 2n ranks, the graph the host's reference ran on
	MMTG_CMD_TIMEOUT=500 mmtg_t "mpi rank 0: mpiexec -launcher manual: PageRank on $((2 * N)) ranks, plain, secure, mmt" \
		launch "$MMTG_DIR/mmt-pagerank-mpi" --addrs "$ADDRS" \
		--node-id rank --key-file /tmp/key --levels 2 --rmat 12 \
		--iters 10 --check "$MMTG_DIR/apps-pr-ref.txt" --out /tmp/pr \
		--json
	sed -n '/^{"app"/,/^}/p' /tmp/mpi.out >/tmp/pr.json
	[ -s /tmp/pr.json ] && mmtg_result_quiet pagerank.json /tmp/pr.json
	for k in $SWEEP; do
		MMTG_CMD_TIMEOUT=500 mmtg_t "mpi rank 0: mpiexec -launcher manual: PageRank on $((2 * N)) ranks, --compute-per-edge $k" \
			launch "$MMTG_DIR/mmt-pagerank-mpi" --addrs "$ADDRS" \
			--node-id rank --key-file /tmp/key --levels 2 \
			--rmat 12 --iters 10 --compute-per-edge "$k" \
			--check "$MMTG_DIR/apps-pr-ref.txt" --json
		sed -n '/^{"app"/,/^}/p' /tmp/mpi.out >"/tmp/pr-k$k.json"
		[ -s "/tmp/pr-k$k.json" ] &&
			mmtg_result_quiet "pagerank-k$k.json" "/tmp/pr-k$k.json"
	done
else
	MMTG_CMD_TIMEOUT=500 mmtg_t "mpi rank $RANK: hydra proxy $RANK (WordCount)" proxy
	MMTG_CMD_TIMEOUT=500 mmtg_t "mpi rank $RANK: hydra proxy $RANK (PageRank)" proxy
	for k in $SWEEP; do
		MMTG_CMD_TIMEOUT=500 mmtg_t "mpi rank $RANK: hydra proxy $RANK (PageRank, --compute-per-edge $k)" proxy
	done
fi
if [ "$RANK" -ge "$N" ]; then
	for c in plain secure mmt; do
		[ -f /tmp/wc.$c.$((RANK - N)) ] &&
			mmtg_result_quiet wc.$c /tmp/wc.$c.$((RANK - N))
	done
fi
for c in plain secure mmt; do
	[ -f /tmp/pr.$c.$RANK ] && mmtg_result_quiet pr.$c /tmp/pr.$c.$RANK
done
mmtg_t "mpi rank $RANK: rmmod mmt" mmtg_unload_mmt
mmtg_done
