#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench, suite idle: a pair's throughput with idle guests attached, switch against hub.
# Sourced by scripts/bench.sh, after scripts/bench/lib.sh.
# shellcheck shell=bash
# shellcheck disable=SC2154,SC2034  # globals and helpers: bench.sh and lib.sh

# The idle suite interleaves its cases within each run (0 idle, then 1,
# 2, 4, switch and hub, then the control), so that a host that drifts
# over the minutes a suite takes does not show up as the cost of idle
# guests.
bench_idle() {
	local n r v last key
	local -A ibps=() icpu=() irx=() igcpu=() iscpu=()

	last=${IDLE:-0 1 2 4}
	last=${last##* }
	for r in $(seq 1 "$runs"); do
		for n in ${IDLE:-0 1 2 4}; do
			for v in switch hub; do
				say "idle$n $v run $r/$runs"
				if [ "$v" = hub ]; then
					pair_once 128 "$n" --hub
				else
					pair_once 128 "$n"
				fi
				key="$n $v"
				ibps[$key]+=" $once_bps" icpu[$key]+=" $once_cpu" irx[$key]+=" $once_rx"
				igcpu[$key]+=" $once_gcpu" iscpu[$key]+=" $once_scpu"
			done
		done
		# The control: the same idle guests on a switch of their own,
		# what they cost the pair without the pair's switch knowing of
		# them
		if [ "$last" -gt 0 ]; then
			say "idle$last elsewhere run $r/$runs"
			idle_elsewhere=1
			pair_once 128 "$last"
			idle_elsewhere=0
			key="$last elsewhere"
			ibps[$key]+=" $once_bps" icpu[$key]+=" $once_cpu" irx[$key]+=" $once_rx"
			igcpu[$key]+=" $once_gcpu" iscpu[$key]+=" $once_scpu"
		fi
	done
	for key in "${!ibps[@]}"; do
		echo "$key"
	done | sort -n -k1,1 -k2,2r | while read -r n v; do
		key="$n $v"
		pair_record idle "idle$n" "$v" "$n" "${ibps[$key]}" "${icpu[$key]}" "${irx[$key]}" \
			"${igcpu[$key]}" "${iscpu[$key]}"
	done
}
