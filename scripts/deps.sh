#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Installs, with apt-get, exactly the Debian packages the build, the tests
# and the demo need.  Idempotent and silent when everything is present.
set -euo pipefail

pkgs=(
	# module build against Debian's kernel (6.1), and the kernel the
	# guests boot
	build-essential linux-headers-amd64 linux-image-amd64
	# the other supported series (scripts/lib.sh, MMT_KERNEL_SERIES):
	# 6.12 from bookworm-security, whose headers need its image
	linux-headers-6.12-amd64
	# KUnit on UML from Debian's kernel sources (6.1 and 6.12);
	# checkpatch, kernel-doc
	linux-source-6.1 linux-source-6.12 bc flex bison libelf-dev python3
	perl xz-utils
	# user-space build of lib/: OpenSSL backend, libFuzzer, sanitizers
	libssl-dev clang libclang-rt-dev
	# the openssl command: the attestation tests' signers, and the debug
	# kernel's module signing key
	openssl
	# static checks; mandoc lints the manual pages of man/
	sparse mandoc
	# the Debian packages (make deb) and DKMS, which builds the module
	# when mmt-dkms is installed (tests/deb/run.sh)
	dkms dh-dkms debhelper dpkg-dev pkg-config
	# attestation (docs/ATTESTATION.md): libtss2 for mmt-attest, swtpm
	# with its local CA and tpm2-tools for the native tests (tests/attest),
	# xxd for their hex (not in a minimal Debian: the first run there
	# failed without it)
	libtss2-dev swtpm swtpm-tools tpm2-tools xxd
	# the attest guest run: libtss2's device TCTI, which mmt-attest's
	# libtss2-tctildr dlopen()s for /dev/tpmrm0 in the guests (libtss2-dev
	# pulls it in today; named because the guest image copies it)
	libtss2-tcti-device0
	# QEMU guests with Soft-RoCE
	qemu-system-x86 busybox-static cpio kmod iproute2
	rdma-core ibverbs-utils rdmacm-utils perftest libibverbs-dev
	librdmacm-dev
	# the paper's plots (make paper, tools/paper/)
	python3-matplotlib
	# the applications' MPI control plane (mmt-wordcount-mpi, tools/apps/)
	mpich libmpich-dev
	# CRIU and its plugin header (criu/criu-plugin.h, in the criu package
	# itself): mmt_criu.so and the guest run criu (docs/CRIU.md)
	criu
)

missing=()
for p in "${pkgs[@]}"; do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$st" = installed ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "deps: installing ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
	echo "deps: need root to install packages (try: sudo make deps)" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "${missing[@]}" >/dev/null
echo "deps: done"
