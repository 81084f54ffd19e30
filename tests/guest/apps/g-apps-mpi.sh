# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# g-apps-mpi.sh - the apps-mpi run (tests/guest/tests apps-mpi), both
# guests: mmt-wordcount-mpi M1R1 started by MPICH's hydra with its manual
# launcher (an existing launcher: mpiexec prints one hydra_pmi_proxy
# command per host and waits for them to connect).  Guest 1 runs mpiexec
# and proxy 0, and hands proxy 1's command line to guest 2 over the
# guests' TCP link (mmtg_send/mmtg_recv), which runs it.  MPI carries the
# control messages (UCX over TCP on eth0); the data moves over mmt
# connections on the three channels.  The reducer checks its share against
# apps-ref.txt (--check); rank 0 prints the JSON.

PEER=$(mmtg_ip_of 2)
ADDRS=$(mmtg_ip_of 1),$PEER

mmtg_t "mpi g$MMTG_ID: rxe0 on eth0" mmtg_add_rxe rxe0 eth0
mmtg_t "mpi g$MMTG_ID: insmod mmt.ko" mmtg_load_mmt
mkdir -p /tmp/in
mmtg_t "mpi g$MMTG_ID: unpack the input" tar -xf "$MMTG_DIR/apps-input.tar" -C /tmp/in
echo 000102030405060708090a0b0c0d0e0f >/tmp/key
hostname "g$MMTG_ID"
printf '127.0.0.1 localhost\n%s g1\n%s g2\n' "$(mmtg_ip_of 1)" "$PEER" >/etc/hosts

# launch - guest 1: mpiexec with the manual launcher; proxy 1's command to
# guest 2; proxy 0 here; the status of mpiexec
launch() {
	mpiexec.hydra -launcher manual -iface eth0 -hosts g1,g2 -n 2 \
		-genv UCX_TLS tcp,self -genv UCX_NET_DEVICES eth0 \
		"$MMTG_DIR/mmt-wordcount-mpi" --addrs "$ADDRS" --node-id rank \
		--key-file /tmp/key --levels 2 --check "$MMTG_DIR/apps-ref.txt" \
		--json /tmp/in >/tmp/mpi.out 2>&1 &
	_mpi=$!
	mmtg_wait 60 grep -q HYDRA_LAUNCH_END /tmp/mpi.out || {
		cat /tmp/mpi.out
		return 1
	}
	_p0=$(sed -n 's/^HYDRA_LAUNCH: //p' /tmp/mpi.out | grep -- '--proxy-id 0')
	_p1=$(sed -n 's/^HYDRA_LAUNCH: //p' /tmp/mpi.out | grep -- '--proxy-id 1')
	mmtg_send "$PEER" 7599 "$_p1" 120 || return 1
	# shellcheck disable=SC2086 # the command line hydra printed
	$_p0 >/tmp/proxy0.out 2>&1 &
	wait $_mpi
	_rc=$?
	cat /tmp/mpi.out /tmp/proxy0.out
	return $_rc
}

# proxy - guest 2: run the command line guest 1 sends
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

if [ "$MMTG_ID" = 1 ]; then
	MMTG_CMD_TIMEOUT=500 mmtg_t "mpi g1: mpiexec -launcher manual: WordCount M1R1, plain, secure, mmt" launch
	grep '^ *{' /tmp/mpi.out >/dev/null && {
		sed -n '/^{"app"/,/^}/p' /tmp/mpi.out >/tmp/wc.json
		dmesg -n 1
		mmtg_result wordcount.json /tmp/wc.json
		dmesg -n 7
	}
else
	MMTG_CMD_TIMEOUT=500 mmtg_t "mpi g2: hydra proxy 1 (the reducer)" proxy
fi
mmtg_t "mpi g$MMTG_ID: rmmod mmt" mmtg_unload_mmt
mmtg_done
