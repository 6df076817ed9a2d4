#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench, suite vxlan: a pair on two hosts joined by VXLAN, against one host.
# Sourced by scripts/bench.sh, after scripts/bench/lib.sh.
# shellcheck shell=bash
# shellcheck disable=SC2154  # the globals and helpers are bench.sh's and lib.sh's

# Each host (namespace) has a bridge holding a VXLAN device on a veth
# underlay and its switch's tap uplink; both layouts build both hosts and
# use MTU 1450 in the guests, so that only the crossing differs.
vxlan_host() {
	local n=$1 self=$2 other=$3

	ip -n "$n" addr add "$self/24" dev under
	ip -n "$n" link set under up
	ip -n "$n" link add br0 type bridge
	ip -n "$n" link add vx0 type vxlan id 42 dstport 4789 \
		local "$self" remote "$other" dev under
	ip -n "$n" link set vx0 master br0
	ip -n "$n" tuntap add dev vsw0 mode tap
	ip -n "$n" link set vsw0 mtu 1450 master br0
	ip -n "$n" link set vx0 up
	ip -n "$n" link set vsw0 up
	ip -n "$n" link set br0 up
	bench_switch "$n" --dgram "$work/sw-$n.sock" --tap vsw0
}

bench_vxlan() {
	local layout r vals there gcpu scpu

	for layout in same-host cross-host; do
		vals=() gcpu=() scpu=()
		for r in $(seq 1 "$runs"); do
			say "vxlan $layout run $r/$runs"
			netns_fresh
			netns_fresh "$nsb"
			rm -rf "${work:?}"/*
			ip -n "$ns" link add under type veth peer name under netns "$nsb"
			vxlan_host "$ns" 198.18.40.1 198.18.40.2
			vxlan_host "$nsb" 198.18.40.2 198.18.40.1
			there=$ns
			[ "$layout" = cross-host ] && there=$nsb
			srv_ns=$there pair_switch="${pids[-2]} ${pids[-1]}" pair_run "$ours" 198.18.41 \
				"transport=unixdgram,path=$work/sw-$there.sock,mtu=1450,depth=128" \
				"transport=unixdgram,path=$work/sw-$ns.sock,mtu=1450,depth=128"
			kill "${pids[-3]}" "${pids[-4]}" 2>/dev/null || true
			vals+=("$pair_bps") gcpu+=("$pair_gcpu") scpu+=("$pair_scpu")
		done
		record vxlan g2g-mtu1450 "$layout" bit/s \
			"$(printf '%s\n' "${vals[@]}" | median)" "" "${vals[*]}" \
			"$(median_of "${gcpu[@]}")" "$(median_of "${scpu[@]}")"
	done
}
