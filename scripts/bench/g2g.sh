#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench, suite g2g: the same two guests on a Linux bridge and through vecswitch.
# Sourced by scripts/bench.sh, after scripts/bench/lib.sh.
# shellcheck shell=bash
# shellcheck disable=SC2154  # the globals and helpers are bench.sh's and lib.sh's

# The variants take turns within each run, so that a host that drifts
# does not favour one of them.
bench_g2g() {
	local c r v key flags
	local -A gbps=() ggcpu=() gscpu=()
	local -A cflags=([tcp-fwd]="" [tcp-fwd-1M]="-l 1M")

	for r in $(seq 1 "$runs"); do
		for c in tcp-fwd tcp-fwd-1M; do
			flags=${cflags[$c]}
			for v in bridge vecswitch switched plain virtio; do
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
