# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# g-fuzz-peer.sh - the multi-threaded fuzzer, peer guest (guest 2):
# Soft-RoCE, a test build of the module, then mmt-fuzz --peer-role (it
# listens, accepts, connects to the main guest, sends and receives PMOs
# and hangs up at random) until the main guest (g-fuzz-main.sh) says it
# is done; then the module must unload.  fuzz_time on the kernel command
# line as in g-fuzz-main.sh: the peer stops by itself 90 s after it.

# mmt-fuzz is shipped as /opt/mmt/mmt-fuzz (tests/guest/tests: RUN_FILES)
PATH=$MMTG_DIR:$PATH
export PATH
MAIN=$(mmtg_ip_of 1)
FUZZ_TIME=$(mmtg_arg fuzz_time 240)

mmtg_t "peer: rxe0 on eth0" mmtg_add_rxe rxe0 eth0
mmtg_t "peer: insmod mmt.ko" mmtg_load_mmt

# peer - run the peer until the main guest's "done" (or its own time
# limit), stop it with SIGINT, print its output
peer() {
	mmt-fuzz --peer-role --self "$MMTG_IP" --peer "$MAIN" \
		--time $((FUZZ_TIME + 150)) >/tmp/peer.out 2>&1 &
	_pid=$!
	_msg=$(mmtg_recv 7999 $((FUZZ_TIME + 240)))
	echo "peer: the main guest says '${_msg:-nothing}'"
	kill -INT $_pid 2>/dev/null
	_i=0
	while kill -0 $_pid 2>/dev/null && [ $_i -lt 60 ]; do
		sleep 1
		_i=$((_i + 1))
	done
	kill -KILL $_pid 2>/dev/null
	wait $_pid
	_rc=$?
	cat /tmp/peer.out
	echo "peer: mmt-fuzz --peer-role exited $_rc after the stop ($_i s)"
	[ $_rc -eq 0 ]
}

mmtg_t "peer: mmt-fuzz --peer-role" peer
mmtg_t "peer: rmmod after the fuzzer" mmtg_wait 20 rmmod mmt
mmtg_done
