#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench, suite plain: the switch's CPU per plain frame on --dgram (raw
# frames, as QEMU's -netdev dgram sends them) against --stream (length and
# frame, as -netdev stream), one sender and one receiver each, 1514-byte
# frames at 50,000 frames/s, the two taking turns on one switch.
# Sourced by scripts/bench.sh, after scripts/bench/lib.sh.
# shellcheck shell=bash
# shellcheck disable=SC2154  # the globals and helpers are bench.sh's and lib.sh's

bench_plain() {
	local tool=$build/plain_cost mode r line sw path
	local -A us=()

	plain_switch plain_cost
	sw=$plain_sw
	for r in $(seq 1 "$runs"); do
		for mode in dgram stream; do
			say "plain $mode run $r/$runs"
			path=$work/s.sock
			[ "$mode" = stream ] || path=$work/d.sock
			line=$(ip netns exec "$ns" "$tool" "$mode" "$path" "$sw" 50000 "$secs" 1514) ||
				line=""
			echo "$line" >>"$out/plain.log"
			us[$mode]+=" $(awk '{ for (i = 1; i < NF; i++) if ($i == "us_per_frame") print $(i + 1) }' <<<"$line")"
		done
	done
	kill "$sw" 2>/dev/null || true
	wait "$sw" 2>/dev/null || true
	for mode in dgram stream; do
		# shellcheck disable=SC2086  # the lists split into numbers
		record plain 1514B "$mode" us/frame "$(printf '%s\n' ${us[$mode]} | median)" "" "${us[$mode]}"
	done
}
