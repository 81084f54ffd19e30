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
# per host; each channel the fastest of apps_wc_repeat runs, 5 by default).  MPI carries the control messages (UCX over TCP on eth0), the
# ranks' TCP star (port 7600) one barrier before MPI_Finalize (the order
# that removes MPICH 4.0.2's finalize hang, mmt-apps(1)); the
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
# (the finalize loop, apps_mpi_loop=K below, has no input)
[ "$(mmtg_arg apps_mpi_loop 0)" -gt 0 ] ||
	mmtg_t "mpi rank $RANK: unpack the input" tar -xf "$MMTG_DIR/apps-input.tar" -C /tmp/in
# a fixed, public test key: the run shows correctness, not secrecy
echo 000102030405060708090a0b0c0d0e0f >/tmp/key

# Each mpiexec is bounded: after $TMO s (apps_mpi_timeout= on the kernel
# command line, default 200 s; the run's limit is 600 s) guest 1 prints
# its processes' state (dump_state), collects every other rank's last step
# (each proxy guest prints its own state 20 s earlier and sends its last
# step to guest 1, port 7590 + rank), names the rank furthest behind, ends
# mpiexec and fails the check.  No retry: a hang is a failure to explain.
# The ranks record their steps (MMTA_PROGRESS, mmta_step() in apps_net.h):
# /tmp/mmta-progress.RANK in each guest holds the last one, and the phases
# also go to mpiexec's output.
TMO=$(mmtg_arg apps_mpi_timeout 200)
[ "$TMO" -ge 60 ] || TMO=60
PROGRESS=/tmp/mmta-progress
# apps_warmup=W, apps_pr_repeat=R, apps_wc_repeat=R (make paper: 1, 3, 5):
# warm-up rounds and rounds of the programs (mmt-apps(1), --warmup and
# --repeat: the channels' order rotates each round)
WARM=$(mmtg_arg apps_warmup 0)
PR_REPEAT=$(mmtg_arg apps_pr_repeat 1)
WC_REPEAT=$(mmtg_arg apps_wc_repeat 5)
# apps_pr_scale=S: PageRank's R-MAT scale (12; the paper's size: 17)
PR_SCALE=$(mmtg_arg apps_pr_scale 12)
# apps_mpi_stop=R: the planted hang (tests/guest/tests APPS_MPI_STOP)
STOP=$(mmtg_arg apps_mpi_stop)
# apps_mpi_genv=VAR=VALUE,...: more environment for every rank (mpiexec
# -genv); "none" for none (tests/guest/tests APPS_MPI_GENV)
GENV=$(mmtg_arg apps_mpi_genv none)
# apps_mpi_loop=K: only K short mpiexecs in a row (the finalize loop,
# tests/guest/tests apps-mpi-finalize), each bounded as above; with
# apps_mpi_loop_genvs=G1/G2/..., mpiexec i gets setting G(i mod n) as its
# apps_mpi_genv (each setting's hangs counted apart)
LOOP=$(mmtg_arg apps_mpi_loop 0)
LOOP_GENVS=$(mmtg_arg apps_mpi_loop_genvs "$GENV" | tr / ' ')
# apps_mpi_loop_rmat=S, apps_mpi_loop_iters=N: the loop's PageRank (8, 2;
# the apps-mpi run's own is 12, 10)
LOOP_RMAT=$(mmtg_arg apps_mpi_loop_rmat 8)
LOOP_ITERS=$(mmtg_arg apps_mpi_loop_iters 2)

# pids_of PATTERN... - the processes whose command line (its arguments
# joined by spaces) matches one of the shell PATTERNs
pids_of() {
	for _d in /proc/[0-9]*; do
		_c=$(tr '\0' ' ' 2>/dev/null <"$_d/cmdline") || continue
		for _p in "$@"; do
			# shellcheck disable=SC2254 # a pattern, by design
			case $_c in $_p) echo "${_d#/proc/}"; break ;; esac
		done
	done
}

# plant_stop - the planted hang: SIGSTOP this guest's PageRank rank at
# its first step on the plain channel seen (the file holds the last step
# only: polled, one in a few is seen), its connections made; the others
# then wait for it in a barrier or a transfer
plant_stop() {
	_end=$(($(date +%s) + TMO))
	while [ "$(date +%s)" -lt "$_end" ]; do
		if grep -q ': plain: ' "$PROGRESS.$RANK" 2>/dev/null; then
			for _pid in $(pids_of '/opt/mmt/mmt-pagerank-mpi *'); do
				echo "apps-mpi: planted hang: SIGSTOP to rank $RANK (pid $_pid)"
				kill -STOP "$_pid"
			done
			return
		fi
		sleep 0.2
	done
}

# dump_state WHY - this guest's rank, hydra processes and mmt state
dump_state() {
	echo "=== apps-mpi: rank $RANK (guest $MMTG_ID): state: $1 ==="
	cat "$PROGRESS".* 2>/dev/null ||
		echo "rank $RANK: no step recorded (MPI_Init has not returned, or no rank started)"
	for _pid in $(pids_of '*mpiexec.hydra*' '*hydra_pmi_proxy*' \
			      '*mmt-wordcount-mpi*' '*mmt-pagerank-mpi*'); do
		_d=/proc/$_pid
		echo "--- pid $_pid: $(tr '\0' ' ' 2>/dev/null <"$_d/cmdline")"
		for _t in "$_d"/task/*; do
			echo "task ${_t##*/} $(cat "$_t/comm" 2>/dev/null):" \
				"$(grep '^State:' "$_t/status" 2>/dev/null)" \
				"wchan $(cat "$_t/wchan" 2>/dev/null)"
			cat "$_t/stack" 2>/dev/null
		done
	done
	[ -d /sys/kernel/debug/mmt ] ||
		mount -t debugfs none /sys/kernel/debug 2>/dev/null
	echo "--- debugfs mmt/stats:"
	cat /sys/kernel/debug/mmt/stats 2>/dev/null
	echo "--- rdma resource show cm_id (the mmt connections' RDMA CM ids):"
	mmtg_run 10 rdma resource show cm_id
	echo "--- rdma resource show qp:"
	mmtg_run 10 rdma resource show qp
	echo "--- netstat -tn:"
	mmtg_run 10 netstat -tn
	echo "--- last kernel messages:"
	dmesg | tail -n 20
	echo "=== end of rank $RANK's state ==="
}

# rank_step - this guest's rank: its last step, and the state and wchan
# of its process (a stopped or blocked rank shows there)
rank_step() {
	_s=$(cat "$PROGRESS.$RANK" 2>/dev/null) ||
		_s="rank $RANK: no step recorded"
	for _pid in $(pids_of '/opt/mmt/mmt-*-mpi *'); do
		_s="$_s [$(sed -n 's/^State:[[:space:]]*//p' "/proc/$_pid/status" 2>/dev/null), wchan $(cat "/proc/$_pid/wchan" 2>/dev/null)]"
	done
	echo "$_s"
}

# behind FILE - from lines "PROG: rank R: step N: WHAT", the one with the
# lowest N (the rank the others wait for): "R<TAB>WHAT"
behind() {
	awk '{ if (match($0, /: rank [0-9]+: step [0-9]+: /)) {
			split(substr($0, RSTART, RLENGTH), w, " ")
			r = w[3]; sub(":", "", r); n = w[5] + 0
			what = substr($0, RSTART + RLENGTH)
		} else if (match($0, /^rank [0-9]+: /)) {
			r = $2; sub(":", "", r); n = -1
			what = substr($0, RLENGTH + 1)
		} else next
		if (!seen || n < min) { min = n; rr = r; ww = what; seen = 1 }
	} END { if (seen) printf "%s\t%s\n", rr, ww }' "$1"
}

# launch WHAT PROGRAM ARGS... - guest 1: mpiexec with the manual launcher,
# proxy i's command line to guest i+1, proxy 0 here; mpiexec's status
# (124 when it ran into $TMO)
launch() {
	_what=$1
	shift
	rm -f "$PROGRESS".* /tmp/mpi.done /tmp/mpi.timedout
	_genv=
	if [ "$GENV" != none ]; then
		for _e in $(echo "$GENV" | tr , ' '); do
			_genv="$_genv -genv ${_e%%=*} ${_e#*=}"
		done
	fi
	# shellcheck disable=SC2086 # _genv: words without spaces
	timeout -k 10 $((TMO + 60)) mpiexec.hydra -launcher manual -iface eth0 \
		-hosts "$HOSTS" -n $((2 * N)) \
		-genv UCX_TLS tcp,self -genv UCX_NET_DEVICES eth0 $_genv \
		-genv MMTA_PROGRESS "$PROGRESS" "$@" >/tmp/mpi.out 2>/tmp/mpi.err &
	_mpi=$!
	mmtg_wait 60 grep -q HYDRA_LAUNCH_END /tmp/mpi.out /tmp/mpi.err || {
		kill "$_mpi" 2>/dev/null
		cat /tmp/mpi.out /tmp/mpi.err
		return 1
	}
	# the watchdog: at $TMO s, the state, the ranks' last steps, the end
	(
		sleep "$TMO"
		[ -e /tmp/mpi.done ] && exit 0
		: >/tmp/mpi.timedout
		dump_state "mpiexec still running after $TMO s"
		rank_step >/tmp/steps
		_j=1
		while [ $_j -lt $((2 * N)) ]; do
			mmtg_recv $((7590 + _j)) 30 >>/tmp/steps ||
				echo "rank $_j: its guest sent no step" >>/tmp/steps
			_j=$((_j + 1))
		done
		echo "=== apps-mpi: each rank's last step ==="
		cat /tmp/steps
		behind /tmp/steps >/tmp/behind
		for _pid in $(pids_of 'mpiexec.hydra*' '*/hydra_pmi_proxy*'); do
			kill "$_pid" 2>/dev/null
		done
	) &
	_wd=$!
	_i=1
	while [ $_i -lt $((2 * N)) ]; do
		_p=$(sed -n 's/^HYDRA_LAUNCH: //p' /tmp/mpi.out /tmp/mpi.err |
		     grep -- "--proxy-id $_i \$")
		mmtg_send "$(mmtg_ip_of $((_i + 1)))" 7599 "$_p" 120 || {
			: >/tmp/mpi.done
			kill "$_wd" "$_mpi" 2>/dev/null
			cat /tmp/mpi.out /tmp/mpi.err
			echo "guest $((_i + 1)) took no proxy command in 120 s"
			return 1
		}
		_i=$((_i + 1))
	done
	_p=$(sed -n 's/^HYDRA_LAUNCH: //p' /tmp/mpi.out /tmp/mpi.err |
	     grep -- '--proxy-id 0 $')
	# shellcheck disable=SC2086 # the command line hydra printed
	timeout -k 10 $((TMO + 60)) $_p >/tmp/proxy.out 2>&1 &
	wait $_mpi
	_rc=$?
	: >/tmp/mpi.done
	if [ -e /tmp/mpi.timedout ]; then
		wait "$_wd"
		_rc=124
	else
		kill "$_wd" 2>/dev/null
	fi
	wait
	cat /tmp/mpi.out /tmp/mpi.err /tmp/proxy.out
	if [ $_rc = 124 ]; then
		_r=$(cut -f 1 /tmp/behind 2>/dev/null)
		_x=$(cut -f 2- /tmp/behind 2>/dev/null)
		mmtg_notok "apps-mpi: $_what timed out in phase '${_x:-unknown}' on rank ${_r:-unknown}" \
			"mpiexec ran $TMO s; that rank has the fewest steps; every rank: $(sed 's/^[a-z-]*: //' /tmp/steps | tr '\n' ';')"
	fi
	return $_rc
}

# proxy WHAT - guest i+1: run the hydra proxy command line guest 1 sends
# (for WHAT: WordCount or PageRank); 20 s
# before guest 1's watchdog, print this guest's state and send the rank's
# last step to guest 1
proxy() {
	rm -f "$PROGRESS".*
	_cmd=$(mmtg_recv 7599 120) || return 1
	echo "proxy: $_cmd"
	case $_cmd in
	/usr/bin/hydra_pmi_proxy\ *) ;;
	*) echo "not a hydra proxy command"; return 1 ;;
	esac
	(
		sleep $((TMO - 20))
		dump_state "the proxy still running after $((TMO - 20)) s"
		mmtg_send "$(mmtg_ip_of 1)" $((7590 + RANK)) "$(rank_step)" 60
	) &
	_wd=$!
	[ "$STOP" = "$RANK" ] && [ "$1" = PageRank ] && plant_stop &
	# shellcheck disable=SC2086 # the command line hydra printed
	timeout -k 10 $((TMO + 60)) $_cmd
	_rc=$?
	kill "$_wd" 2>/dev/null
	return $_rc
}

SWEEP=$(mmtg_arg apps_pr_sweep | tr , ' ')
[ "$N" = 1 ] || SWEEP=

# kill_ranks - after a bounded mpiexec: no rank left spinning (the loop)
kill_ranks() {
	for _pid in $(pids_of '/opt/mmt/mmt-*-mpi *'); do
		kill -KILL "$_pid" 2>/dev/null
	done
}

# the finalize loop: $LOOP short PageRank runs (R-MAT scale 8, 2
# iterations by default, all three channels, the JSON printed as in the
# apps-mpi run), each ending in MPI_Finalize; the hangs
# counted (a hang fails its check, named by the watchdog as above)
if [ "$LOOP" -gt 0 ]; then
	_li=1
	: >/tmp/loop.runs
	while [ "$_li" -le "$LOOP" ]; do
		# shellcheck disable=SC2086 # a word list
		set -- $LOOP_GENVS
		shift $(((_li - 1) % $#))
		GENV=$1
		if [ "$RANK" = 0 ]; then
			launch "finalize loop $_li/$LOOP" "$MMTG_DIR/mmt-pagerank-mpi" \
				--addrs "$ADDRS" --node-id rank --key-file /tmp/key \
				--levels 2 --rmat "$LOOP_RMAT" --iters "$LOOP_ITERS" \
				--json >/tmp/loop.out 2>&1
			_rc=$?
			_ph=-
			if [ "$_rc" = 124 ]; then
				cat /tmp/loop.out
				_ph=other
				grep -q "timed out in phase 'MPI_Finalize" /tmp/loop.out &&
					_ph=MPI_Finalize
			fi
			echo "$_li $GENV $_rc $_ph" >>/tmp/loop.runs
			echo "apps-mpi: finalize loop $_li/$LOOP (genv $GENV): mpiexec rc $_rc, hang: $_ph"
		else
			# its state dump on a hang is in the output: shown then
			proxy Loop >/tmp/loop.out 2>&1 || cat /tmp/loop.out
		fi
		kill_ranks
		_li=$((_li + 1))
	done
	if [ "$RANK" = 0 ]; then
		mmtg_result_quiet finalize-loop /tmp/loop.runs
		# the last run's JSON (its times) to the host
		sed -n '/^{"app"/,/^}/p' /tmp/mpi.out >/tmp/loop-last.json
		[ -s /tmp/loop-last.json ] &&
			mmtg_result_quiet loop-last.json /tmp/loop-last.json
		# each setting once, however often the list names it
		for GENV in $(echo "$LOOP_GENVS" | tr ' ' '\n' | awk '!seen[$0]++'); do
			_n=$(awk -v g="$GENV" '$2 == g' /tmp/loop.runs | wc -l)
			_h=$(awk -v g="$GENV" '$2 == g && $3 == 124' /tmp/loop.runs | wc -l)
			_o=$(awk -v g="$GENV" '$2 == g && $3 != 124 && $3 != 0' /tmp/loop.runs | wc -l)
			mmtg_t "apps-mpi: finalize loop, genv $GENV: $_h of $_n mpiexecs hung, $_o failed otherwise" \
				test "$_h$_o" = 00
		done
	fi
	mmtg_t "mpi rank $RANK: rmmod mmt" mmtg_unload_mmt
	mmtg_done
fi

if [ "$RANK" = 0 ]; then
	# mmtg_t puts no timeout on a shell function: launch bounds mpiexec
	mmtg_t "mpi rank 0: mpiexec -launcher manual: WordCount M${N}R$N, plain, secure, mmt" \
		launch "WordCount M${N}R$N" "$MMTG_DIR/mmt-wordcount-mpi" --addrs "$ADDRS" \
		--node-id rank --key-file /tmp/key --levels 2 \
		--repeat "$WC_REPEAT" --warmup "$WARM" \
		--check "$MMTG_DIR/apps-ref.txt" --out /tmp/wc --json /tmp/in
	_wc=$?
	sed -n '/^{"app"/,/^}/p' /tmp/mpi.out >/tmp/wc.json
	[ -s /tmp/wc.json ] && mmtg_result_quiet wordcount.json /tmp/wc.json
	# PageRank on all 2n ranks, the graph the host's reference ran on
	# (not after a WordCount timeout: two would pass the run's limit)
	N_PR=1
	if [ "$_wc" = 124 ]; then
		N_PR=0
		SWEEP=
	fi
	[ "$N_PR" = 0 ] || mmtg_t "mpi rank 0: mpiexec -launcher manual: PageRank on $((2 * N)) ranks, plain, secure, mmt" \
		launch "PageRank M${N}R$N" "$MMTG_DIR/mmt-pagerank-mpi" --addrs "$ADDRS" \
		--node-id rank --key-file /tmp/key --levels 2 --rmat "$PR_SCALE" \
		--iters 10 --check "$MMTG_DIR/apps-pr-ref.txt" --out /tmp/pr \
		--repeat "$PR_REPEAT" --warmup "$WARM" --json
	[ "$N_PR" = 0 ] || sed -n '/^{"app"/,/^}/p' /tmp/mpi.out >/tmp/pr.json
	[ -s /tmp/pr.json ] && mmtg_result_quiet pagerank.json /tmp/pr.json
	for k in $SWEEP; do
		mmtg_t "mpi rank 0: mpiexec -launcher manual: PageRank on $((2 * N)) ranks, --compute-per-edge $k" \
			launch "PageRank M${N}R$N, K = $k" "$MMTG_DIR/mmt-pagerank-mpi" --addrs "$ADDRS" \
			--node-id rank --key-file /tmp/key --levels 2 \
			--rmat "$PR_SCALE" --iters 10 --compute-per-edge "$k" \
			--repeat "$PR_REPEAT" --warmup "$WARM" \
			--check "$MMTG_DIR/apps-pr-ref.txt" --json
		sed -n '/^{"app"/,/^}/p' /tmp/mpi.out >"/tmp/pr-k$k.json"
		[ -s "/tmp/pr-k$k.json" ] &&
			mmtg_result_quiet "pagerank-k$k.json" "/tmp/pr-k$k.json"
	done
else
	mmtg_t "mpi rank $RANK: hydra proxy $RANK (WordCount)" proxy WordCount
	mmtg_t "mpi rank $RANK: hydra proxy $RANK (PageRank)" proxy PageRank
	for k in $SWEEP; do
		mmtg_t "mpi rank $RANK: hydra proxy $RANK (PageRank, --compute-per-edge $k)" proxy PageRank-K
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
