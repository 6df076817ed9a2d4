#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo: boot a UML guest on this tree's kernel inside a private network
# namespace, attach it to the host side through a vecN device, and show
# what the guest sees.  Everything it starts is removed on exit.

set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
vmlinux=${VECNET_BUILD:-$top/build}/vmlinux
ns=vecnet-demo-$$
work=$(mktemp -d /tmp/vecnet-demo.XXXXXX)

step() { printf '\n== %s\n' "$*"; }
fail() { echo "demo: $*" >&2; exit 1; }

# shellcheck disable=SC2317  # invoked through trap
cleanup() {
	ip netns pids "$ns" 2>/dev/null | xargs -r kill -KILL 2>/dev/null || true
	ip netns del "$ns" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[ -x "$vmlinux" ] || fail "no guest kernel at $vmlinux (run 'make')"
[ "$(id -u)" -eq 0 ] || fail "needs root for network namespaces and tap devices"

step "A private network namespace with a tap device for the guest"
ip netns add "$ns"
ip -n "$ns" link set lo up
ip -n "$ns" tuntap add dev demo0 mode tap
ip -n "$ns" addr add 198.18.0.1/24 dev demo0
ip -n "$ns" link set demo0 up
echo "namespace $ns, host side demo0 198.18.0.1/24"

step "Booting a guest: build/vmlinux ... vec0:transport=tap,ifname=demo0"
start=$(date +%s%N)
# shellcheck disable=SC2016  # expanded by the guest's shell
"$top/scripts/uml-run" -k "$vmlinux" -n "$ns" -N demo -t 60 -o "$work/guest" \
	-a vec0:transport=tap,ifname=demo0 -- sh -c '
	ip addr add 198.18.0.2/24 dev vec0
	ip link set vec0 up
	echo "--- guest kernel: $(uname -r)"
	echo "--- guest network devices:"
	ip -br link
	ip -br addr show dev vec0
	echo "--- ethtool -i vec0:"
	ethtool -i vec0
	echo "--- ping the host side:"
	ping -c 3 -i 0.2 -W 2 198.18.0.1' ||
	fail "the guest run failed; console log: $work/guest/console.log"
echo "--- boot, run and power-off: $((($(date +%s%N) - start) / 1000000)) ms"

step "Done; namespace and guest removed"
