# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# attestlib.sh - what the guests of the run `attest` share (g-attest-
# authority.sh on guest 1, g-attest-node.sh on guests 2 and 3; shipped as
# /opt/mmt/attestlib.sh by tests/guest/tests and sourced after guestlib.sh).
# docs/ATTESTATION.md describes the protocol; here it runs in guests with a
# TPM 2.0 each (swtpm, tpm-crb) and IMA (ima_policy=tcb|critical_data).
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

# attest_modules_measured - the kernel's module tree moved onto a ramfs
# (copied, bind-mounted over itself), so that the modules loaded from it
# afterwards (mmt.ko's dependencies, rdma_rxe, the crypto modules mmt.ko
# asks for) are measured, as from /lib/modules on a real node's root
# file system; the authority must hold their hashes as reference values
# (tests/guest/tests, attest_prepare: reference --add-module)
attest_modules_measured() {
	_m=$(readlink -f "/lib/modules/$(uname -r)")
	grep -q " $_m ramfs " /proc/mounts && return 0
	mkdir -p /mnt/ima-modules &&
		mount -t ramfs ramfs /mnt/ima-modules &&
		cp -a "$_m/." /mnt/ima-modules/ &&
		mount -o bind /mnt/ima-modules "$_m"
}

# attest_load KO [NAME] - load the module KO as a node does, so that IMA
# measures it: copied to /mnt/ima/NAME (default mmt.ko: ATTEST_KO) on a
# ramfs (IMA's tcb policy does not measure tmpfs, which the initramfs
# root is) and loaded with kmod's insmod (finit_module); its
# dependencies first, from the module tree on a ramfs too
# (attest_modules_measured)
attest_load() {
	_ko=$ATTEST_KO
	[ -n "${2:-}" ] && _ko=/mnt/ima/$2
	# (this busybox has no mountpoint applet)
	grep -q ' /sys/kernel/security ' /proc/mounts ||
		mount -t securityfs securityfs /sys/kernel/security
	if ! grep -q ' /mnt/ima ramfs ' /proc/mounts; then
		mkdir -p /mnt/ima && mount -t ramfs ramfs /mnt/ima
	fi
	rm -f "$_ko"
	cp "$1" "$_ko" && attest_modules_measured && mmtg_mmt_deps &&
		mmtg_run 60 /usr/sbin/insmod "$_ko"
}

# attest_modules - the number of IMA log entries whose file name is a
# kernel module's other than mmt.ko (as mmt-authority tells them: the
# name ends in .ko; docs/ATTESTATION.md)
attest_modules() {
	awk '$5 ~ /\.ko$/ && $5 !~ /\/mmt\.ko$/ { n++ } END { print n + 0 }' \
		/sys/kernel/security/ima/ascii_runtime_measurements
}

# attest_run [QUOTE ARGS...] - this node attests: the module enters
# attested mode, then hello, challenge, quote (over the node key the
# module measured at load, read from the module), evidence, credential,
# install (files in /tmp/att.*); prints the time from hello to install;
# returns 0 with the credential installed, else the authority's exit code
# (or 2).  ATTEST_QUOTE (default mmt-attest) is the program that quotes:
# the user-space key case runs the test build that takes --node-key
attest_run() {
	if [ "$(attest_info state)" = off ]; then
		mmt-attest authority --in /opt/mmt/authority.der || return 2
	fi
	_t0=$(attest_now)
	mmt-attest hello --tcti "$ATTEST_TCTI" --out /tmp/att.hello || return 2
	attest_ask /tmp/att.hello /tmp/att.chal || return $?
	${ATTEST_QUOTE:-mmt-attest} quote --tcti "$ATTEST_TCTI" \
		--in /tmp/att.chal --out /tmp/att.ev "$@" || return 2
	attest_ask /tmp/att.ev /tmp/att.cred || return $?
	mmt-attest install --in /tmp/att.cred || return 2
	_t1=$(attest_now)
	echo "# attestation of node $MMTG_ID: $(echo "$_t0 $_t1" |
		awk '{ printf "%.2f", $2 - $1 }') s (hello .. install, guest time)"
}

# attest_renew [ARGS...] - mmt-attest renew over the authority's stream
# service (mmt-authority serve, port ATTEST_SERVE_PORT, credentials of
# 45 s): hello, challenge, quote, evidence, credential and install over
# one busybox nc connection; returns mmt-attest's exit code (the
# authority's refusal code)
ATTEST_SERVE_PORT=7004
attest_renew() {
	mmt-attest renew --tcti "$ATTEST_TCTI" \
		--connect "nc $(mmtg_ip_of 1) $ATTEST_SERVE_PORT" "$@"
}

# attest_info FIELD - a field of `mmt-attest info` (state, node_id, ...)
attest_info() {
	mmt-attest info 2>/dev/null | awk -v f="$1" '$1 == f { print $2 }'
}
