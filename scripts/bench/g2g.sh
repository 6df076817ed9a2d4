#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench, suite g2g: the same two guests on a Linux bridge and through vecswitch.
# Sourced by scripts/bench.sh, after scripts/bench/lib.sh.
# shellcheck shell=bash
# shellcheck disable=SC2154  # the globals and helpers are bench.sh's and lib.sh's

# g2g_once VARIANT: one run of the same two guests (depth 128) on
#   bridge     two taps on a Linux bridge (gro=1), the usual host setup
#   vecswitch  vecswitch, every option at its default (headers negotiated,
#              unicast between the two through a shortcut channel)
#   switched   vecswitch --no-shortcut: every frame through the switch
#   plain      vecswitch, the guests with vnet=0 (plain frames)
# The rate goes to $pair_bps, the CPU per Gbit to $pair_gcpu, $pair_scpu.
g2g_once() {
	local sw='' a b t

	netns_fresh
	rm -rf "${work:?}"/*
	case "$1" in
	bridge)
		ip -n "$ns" link add gbr0 type bridge
		for t in 0 1; do
			ip -n "$ns" tuntap add dev gtap$t mode tap
			ip -n "$ns" link set gtap$t master gbr0 up
		done
		ip -n "$ns" link set gbr0 up
		a="transport=tap,ifname=gtap0,gro=1,depth=128"
		b="transport=tap,ifname=gtap1,gro=1,depth=128" ;;
	vecswitch|switched|plain)
		if [ "$1" = switched ]; then
			start_switch "$ns" "$work/sw.sock" --no-shortcut
		else
			start_switch "$ns" "$work/sw.sock"
		fi
		sw=${pids[-1]}
		a="transport=unixdgram,path=$work/sw.sock,depth=128"
		[ "$1" = plain ] && a+=",vnet=0"
		b=$a ;;
	esac
	pair_switch=$sw pair_run "$ours" 198.18.1 "$a" "$b"
	[ -z "$sw" ] || { kill "$sw" 2>/dev/null; wait "$sw" 2>/dev/null; } || true
}

# The variants take turns within each run, so that a host that drifts
# does not favour one of them.
bench_g2g() {
	local c r v key flags
	local -A gbps=() ggcpu=() gscpu=()
	local -A cflags=([tcp-fwd]="" [tcp-fwd-1M]="-l 1M")

	for r in $(seq 1 "$runs"); do
		for c in tcp-fwd tcp-fwd-1M; do
			flags=${cflags[$c]}
			for v in bridge vecswitch switched plain; do
				say "g2g $c $v run $r/$runs"
				pair_flags=$flags g2g_once "$v"
				key="$c $v"
				gbps[$key]+=" $pair_bps" ggcpu[$key]+=" $pair_gcpu"
				gscpu[$key]+=" $pair_scpu"
			done
		done
	done
	for key in "${!gbps[@]}"; do
		read -r c v <<<"$key"
		# shellcheck disable=SC2086  # the lists split into numbers
		record g2g "$c" "$v" bit/s "$(printf '%s\n' ${gbps[$key]} | median)" "" \
			"${gbps[$key]}" "$(median_of ${ggcpu[$key]})" "$(median_of ${gscpu[$key]})"
	done
}
