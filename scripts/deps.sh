#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install the Debian packages the project needs to build, test, benchmark
# and run its demo.  Idempotent: when everything is present it does nothing
# and touches no network.

set -euo pipefail

# 'deps.sh bench' adds what make bench alone needs
packages=(
	# kernel source and its build
	linux-source-6.12 build-essential bc bison flex libelf-dev libssl-dev
	xz-utils python3 rsync
	# switch, and its fuzz targets (libFuzzer)
	liburing-dev libpcap-dev pkg-config clang-14 libclang-rt-14-dev
	# the NAT port, vecnat
	libslirp-dev libseccomp-dev
	# tests, demo and benchmarks
	iproute2 iputils-ping ethtool iperf3 tcpdump socat procps psmisc curl
	uml-utilities shellcheck qemu-system-x86 busybox-static cpio kmod
	util-linux linux-image-amd64 vde2 systemd
	# libvirt's session daemon, its QEMU driver and virsh (test_libvirt.sh)
	libvirt-daemon libvirt-daemon-driver-qemu libvirt-clients
	# the kernel's drivers/net tests (make kselftests, test_kernel_tests.sh)
	python3-yaml bpftool zlib1g-dev netsniff-ng
	# man pages, make install and make deb (devscripts: hardening-check)
	python3-docutils man-db dpkg-dev debhelper fakeroot chrpath lintian adduser
	devscripts
)
if [ "${1:-}" = bench ]; then
	packages+=(python3-matplotlib libvdeplug-dev passt)
fi

missing=()
for p in "${packages[@]}"; do
	if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
		missing+=("$p")
	fi
done

if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing packages: ${missing[*]}" >&2
	echo "deps: run 'make deps' as root (it uses apt-get)" >&2
	exit 1
fi

echo "  DEPS    installing ${#missing[@]} package(s): ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
