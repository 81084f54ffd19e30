# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# swtpm-lib.sh - software TPMs for the attestation tests (sourced by
# tests/attest/run.sh on the host and by tests/guest/tests and
# scripts/demo-attest.sh for the guests; docs/ATTESTATION.md)
#
# A "manufacturer" is a private swtpm local CA (swtpm_localca) with its
# own state directory; a TPM is an swtpm state directory made by
# swtpm_setup with its EK (persistent at 0x81010001) and the EK's
# certificate (NV index 0x01c00002) signed by that CA.  Needs swtpm and
# swtpm-tools (scripts/deps.sh).

# mmt_swtpm_ca DIR - a manufacturer: write the local CA's configuration
# into DIR (the CA's key and certificates appear there on first use)
mmt_swtpm_ca() {
	local d=$1

	mkdir -p "$d" || return 1
	cat >"$d/localca.conf" <<-EOT
		statedir = $d
		signingkey = $d/signkey.pem
		issuercert = $d/issuercert.pem
		certserial = $d/certserial
	EOT
	cat >"$d/setup.conf" <<-EOT
		create_certs_tool = /usr/bin/swtpm_localca
		create_certs_tool_config = $d/localca.conf
		create_certs_tool_options = /etc/swtpm-localca.options
		active_pcr_banks = sha256
	EOT
}

# mmt_swtpm_manufacture STATE CADIR LOG - a TPM 2.0 in the empty or new
# directory STATE: its EK, persistent, and the EK certificate signed by
# the manufacturer CADIR (swtpm_setup --create-ek-cert); swtpm_setup's
# output to LOG
mmt_swtpm_manufacture() {
	mkdir -p "$1" || return 1
	swtpm_setup --tpm2 --tpmstate "$1" --create-ek-cert \
		--config "$2/setup.conf" --overwrite >"$3" 2>&1
}

# mmt_swtpm_ca_pem CADIR - print the manufacturer's certificate chain
# (root, then the intermediate that signs EK certificates), what the
# authority's --ek-ca takes; only after a first mmt_swtpm_manufacture
mmt_swtpm_ca_pem() {
	cat "$1/swtpm-localca-rootca-cert.pem" "$1/issuercert.pem"
}
