# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# attestlib.sh - what the guests of the run `attest` share (g-attest-
# authority.sh on guest 1, g-attest-node.sh on guests 2 and 3; shipped as
# /opt/mmt/attestlib.sh by tests/guest/tests and sourced after guestlib.sh).
# docs/ATTESTATION.md describes the protocol; here it runs in guests with a
# TPM 2.0 each (swtpm, tpm-crb) and IMA (ima_policy=tcb).
#
# Transport: the four messages of the protocol travel over TCP with
# busybox nc, one connection per message: the node's nc sends the message
# and half-closes (EOF), the authority's `nc -ll -e` hands it to
# attest_serve_one, which answers with mmt-authority's output, or with one
# line "mmt-authority refused exit N: <its first error line>", and closes.
# Nothing in the messages is secret (docs/ATTESTATION.md, "Protocol").

ATTEST_PORT=7001			# the authority's service
ATTEST_STATE=/tmp/authority		# its state directory (guest 1)
ATTEST_TCTI=device:/dev/tpmrm0		# the guest's TPM, through the kernel's RM
ATTEST_KO=/mnt/ima/mmt.ko		# where a node loads mmt.ko from (see below)

# attest_say MSG... - a narrated step (make demo-attest prints them)
attest_say() {
	echo "attest-demo: guest $MMTG_ID: $*"
}

# attest_now - seconds since boot, with hundredths (/proc/uptime)
attest_now() {
	cut -d' ' -f1 /proc/uptime
}

# attest_serve_one - the authority's answer to one request: the message
# on stdin (to EOF), the answer on stdout (run by nc -e; its console is
# the log)
attest_serve_one() {
	_d=$(mktemp -d)
	cat >"$_d/in"
	_type=$(head -n 1 "$_d/in" | cut -d' ' -f2)
	case $_type in
	hello) _cmd=challenge ;;
	evidence) _cmd=verify ;;
	*) _cmd= ;;
	esac
	if [ -z "$_cmd" ]; then
		echo "not a hello or evidence message" >"$_d/err"
		_rc=3
	else
		mmt-authority "$_cmd" --state "$ATTEST_STATE" --in "$_d/in" \
			--out "$_d/out" 2>"$_d/err"
		_rc=$?
	fi
	if [ $_rc -eq 0 ]; then
		cat "$_d/out"
	else
		echo "mmt-authority refused exit $_rc: $(head -n 1 "$_d/err")"
	fi
	echo "authority: $_type -> mmt-authority $_cmd: exit $_rc $(head -n 1 "$_d/err")" >/dev/console
	rm -rf "$_d"
}

# attest_ask IN OUT - send the message IN to the authority, its answer to
# OUT; returns 0 for an answer, the authority's exit code for a refusal,
# 2 if it cannot be reached (retried for 90 s: guest 1 may still boot)
attest_ask() {
	_end=$(($(date +%s) + 90))
	while :; do
		timeout -k 2 60 nc "$(mmtg_ip_of 1)" "$ATTEST_PORT" <"$1" >"$2" \
			2>/dev/null && [ -s "$2" ] && break
		[ "$(date +%s)" -ge "$_end" ] && return 2
		sleep 0.5
	done
	case $(head -c 28 "$2") in
	"mmt-authority refused exit "*)
		cat "$2"
		_rc=$(head -n 1 "$2" | sed 's/^mmt-authority refused exit \([0-9]*\).*/\1/')
		return "${_rc:-2}"
		;;
	esac
	return 0
}

# attest_load KO - load the module KO as a node does, so that IMA measures
# it: copied to ATTEST_KO on a ramfs (IMA's tcb policy does not measure
# tmpfs, which the initramfs root is) and loaded with kmod's insmod,
# which uses finit_module (busybox's uses init_module, which IMA cannot
# measure: there is no file)
attest_load() {
	# (this busybox has no mountpoint applet)
	grep -q ' /sys/kernel/security ' /proc/mounts ||
		mount -t securityfs securityfs /sys/kernel/security
	if ! grep -q ' /mnt/ima ramfs ' /proc/mounts; then
		mkdir -p /mnt/ima && mount -t ramfs ramfs /mnt/ima
	fi
	rm -f "$ATTEST_KO"
	cp "$1" "$ATTEST_KO" && mmtg_mmt_deps &&
		mmtg_run 60 /usr/sbin/insmod "$ATTEST_KO"
}

# attest_run [QUOTE ARGS...] - this node attests: the module enters
# attested mode, then node key, hello, challenge, quote, evidence,
# credential, install (files in /tmp/att.*); prints the time from hello
# to install; returns 0 with the credential installed, else the
# authority's exit code (or 2)
attest_run() {
	if [ "$(attest_info state)" = off ]; then
		mmt-attest authority --in /opt/mmt/authority.der || return 2
	fi
	mmt-attest node-key --out /tmp/att.key || return 2
	_t0=$(attest_now)
	mmt-attest hello --tcti "$ATTEST_TCTI" --out /tmp/att.hello || return 2
	attest_ask /tmp/att.hello /tmp/att.chal || return $?
	mmt-attest quote --tcti "$ATTEST_TCTI" --in /tmp/att.chal \
		--node-key /tmp/att.key --out /tmp/att.ev "$@" || return 2
	attest_ask /tmp/att.ev /tmp/att.cred || return $?
	mmt-attest install --in /tmp/att.cred || return 2
	_t1=$(attest_now)
	echo "# attestation of node $MMTG_ID: $(echo "$_t0 $_t1" |
		awk '{ printf "%.2f", $2 - $1 }') s (hello .. install, guest time)"
}

# attest_info FIELD - a field of `mmt-attest info` (state, node_id, ...)
attest_info() {
	mmt-attest info 2>/dev/null | awk -v f="$1" '$1 == f { print $2 }'
}
