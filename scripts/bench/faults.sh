#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench, suite faults: a pair next to guests that fail, against the same load without the fault.
# Sourced by scripts/bench.sh, after scripts/bench/lib.sh.
# shellcheck shell=bash
# shellcheck disable=SC2154  # the globals and helpers are bench.sh's and lib.sh's

# Four guests on one switch: the pair (cli -> srv) is measured next to v1
# and v2 in one of these states, the pair's flow running SECS seconds:
#   alone     v1 and v2 idle
#   unlinked  as alone, and the switch's socket file deleted one second
#             into the pair's flow
#   flooded   v1 floods v2 with UDP
#   stopped   as flooded, with v2's kernel stopped by SIGSTOP before the
#             pair starts: a consumer that never reads
#   busy      v1 sends TCP to v2
#   killed    as busy, and v2 killed with SIGKILL one second into the
#             pair's flow
# Each fault is compared with the same load without it (unlinked/alone,
# stopped/flooded, killed/busy): what the fault itself costs the pair.
# The variants take turns within each run.
faults_once() {
	local v=$1 v2pgid load err fault=0 sw_opts="transport=unixdgram,path=$work/sw.sock,depth=128"

	netns_fresh
	rm -rf "${work:?}"/*
	bench_switch "$ns" --dgram "$work/sw.sock"
	case "$v" in
	alone|unlinked) load="sleep $((secs + 40))" ;;
	flooded|stopped) load="iperf3 -u -b 2G -l 1400 -c 198.18.1.4 -t $((secs + 40))" ;;
	busy|killed) load="iperf3 -c 198.18.1.4 -t $((secs + 40))" ;;
	esac
	err=/dev/stderr
	[ "$v" = killed ] && err=$work/v2.err
	guest_err=$err bench_guest v2 "$ours" $((secs + 90)) "$(server_cmd 198.18.1.4)" \
		-a "vec0:$sw_opts"
	bench_guest v1 "$ours" $((secs + 90)) \
		"ip addr add 198.18.1.3/24 dev vec0 && ip link set vec0 up &&
		 for i in \$(seq 300); do [ -e $work/v2/ready ] && break; sleep 0.1; done &&
		 { $load >/dev/null 2>&1 & touch loaded; wait; }" \
		-a "vec0:$sw_opts"
	for _ in $(seq 600); do [ -e "$work/v1/loaded" ] && break; sleep 0.1; done
	sleep 1
	v2pgid=$(cat "$work/v2/pgid" 2>/dev/null || echo 0)
	# (0 would signal this script's own process group)
	[ "$v2pgid" -gt 1 ] || die "faults: guest v2 did not start"
	# the kernel process only: UML dies if its user processes stop
	[ "$v" = stopped ] && kill -STOP "$v2pgid" 2>/dev/null
	if [ "$v" = killed ] || [ "$v" = unlinked ]; then
		# one second after the pair's client says it starts its flow
		(
			for _ in $(seq 900); do [ -e "$work/cli/running" ] && break; sleep 0.1; done
			sleep 1
			if [ "$v" = killed ]; then
				kill -KILL -- "-$v2pgid"
			else
				rm -f -- "$work/sw.sock"
			fi
		) 2>/dev/null &
		fault=$!
	fi
	pair_run "$ours" 198.18.1 "$sw_opts" "$sw_opts"
	[ "$fault" = 0 ] || wait "$fault" || true
	kill -CONT "$v2pgid" 2>/dev/null || true
	kill "${pids[-3]}" "${pids[-4]}" "${pids[-5]}" 2>/dev/null || true
}

bench_faults() {
	local r v variants=(alone unlinked flooded stopped busy killed)
	local -A fbps=()

	for r in $(seq 1 "$runs"); do
		for v in "${variants[@]}"; do
			say "faults $v run $r/$runs"
			faults_once "$v"
			fbps[$v]+=" $pair_bps"
		done
	done
	for v in "${variants[@]}"; do
		# shellcheck disable=SC2086  # a list of numbers
		record faults pair "$v" bit/s "$(printf '%s\n' ${fbps[$v]} | median)" "" "${fbps[$v]}"
	done
}
