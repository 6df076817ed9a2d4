#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench, suite g2g: the same two guests on a Linux bridge and through vecswitch.
# Sourced by scripts/bench.sh, after scripts/bench/lib.sh.
# shellcheck shell=bash
# shellcheck disable=SC2154  # the globals and helpers are bench.sh's and lib.sh's

# The variants take turns within each run, so that a host that drifts
# does not favour one of them.  Each figure is the median of G2G_RUNS
# runs (5 unless set), with the spread.  A variant with the suffix
# "-cap1" runs its guests (and its switch) in one cpu cgroup capped at
# one CPU: the rate at a fixed CPU budget rather than whatever the
# machine has spare (the bridge's softirq work may escape the cap, see
# cpu_cap_enter); one with "-rx0" turns receive coalescing off (see
# g2g_variant).  G2G_CASES and G2G_VARIANTS limit the suite to those.
# G2G_BASE=VMLINUX adds vecswitch-base and vecswitch-big-base: the same
# paths with both guests on that kernel, a build of the driver before a
# change, so that the change is measured against it in the same run.
bench_g2g() {
	local c r v key flags n=${G2G_RUNS:-5} base=''
	local -A gbps=() ggcpu=() gscpu=()
	local -A cflags=([tcp-fwd]="" [tcp-fwd-1M]="-l 1M")

	if [ -n "${G2G_BASE:-}" ]; then
		[ -x "$G2G_BASE" ] || die "G2G_BASE=$G2G_BASE: no kernel there"
		base="vecswitch-base vecswitch-big-base"
	fi
	for r in $(seq 1 "$n"); do
		for c in ${G2G_CASES:-tcp-fwd tcp-fwd-1M}; do
			flags=${cflags[$c]}
			for v in ${G2G_VARIANTS:-bridge vecswitch vecswitch-big switched \
				   plain direct direct-big virtio bridge-cap1 \
				   vecswitch-cap1 vecswitch-big-cap1} $base; do
				say "g2g $c $v run $r/$n"
				if [[ $v == *-cap1 ]]; then
					if ! cpu_cap_enter 1; then
						say "g2g: no cpu cgroup to cap, $v left out"
						continue
					fi
					pair_flags=$flags g2g_variant "${v%-cap1}"
					cpu_cap_leave
				else
					pair_flags=$flags g2g_variant "$v"
				fi
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
