#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench, suite rate: port-to-port forwarding rate with 2 idle ports
# attached, 64- and 1514-byte frames, on vecswitch, vecswitch --hub and
# vde_switch, the switches taking turns within each run.  RATE_BASE=DIR
# adds the vecswitch built in DIR (another commit's build) as
# vecswitch-base: a change measured against what it changed, in the same
# run.
# Sourced by scripts/bench.sh, after scripts/bench/lib.sh.
# shellcheck shell=bash
# shellcheck disable=SC2154  # the globals and helpers are bench.sh's and lib.sh's

# rate_once VARIANT SIZE: one run; vswblast's JSON in $work/rate.json
rate_once() {
	local variant=$1 size=$2 sw flag=() bin=$vecswitch

	netns_fresh
	rm -rf "${work:?}"/*
	[ "$variant" != vecswitch-base ] || bin=$RATE_BASE/vecswitch
	case "$variant" in
	vecswitch|vecswitch-base)
		ip netns exec "$ns" "$bin" --dgram "$work/sw.sock" >/dev/null 2>&1 & ;;
	hub) ip netns exec "$ns" "$vecswitch" --dgram "$work/sw.sock" --hub >/dev/null 2>&1 & ;;
	vde_switch)
		# its console would exit on a closed stdin: daemonise
		ip netns exec "$ns" vde_switch -d -p "$work/vde.pid" \
			-s "$work/sw.sock" >/dev/null 2>&1 </dev/null
		sleep 0 & ;;
	esac
	sw=$!
	[ "$variant" = vde_switch ] && sw=$(cat "$work/vde.pid")
	pids+=("$sw")
	for _ in $(seq 50); do [ -e "$work/sw.sock" ] && break; sleep 0.1; done
	[ "$variant" = vde_switch ] && flag=(--vde)
	ip netns exec "$ns" "$vswblast" "${flag[@]}" --switch "$work/sw.sock" \
		--dir "$work" --size "$size" --seconds "$secs" --idle 2 >"$work/rate.out" ||
		echo '{"mpps":0,"gbps":0}' >"$work/rate.out"
	tail -n 1 "$work/rate.out" >"$work/rate.json"
	kill "$sw" 2>/dev/null || true
	wait "$sw" 2>/dev/null || true
}

bench_rate() {
	local size variant r json
	local -a variants=(vecswitch hub vde_switch)
	local -A mpps=() gbps=()

	[ -x "$vswblast" ] || die "no $vswblast (run 'make bench')"
	if [ -n "${RATE_BASE:-}" ]; then
		[ -x "$RATE_BASE/vecswitch" ] || die "RATE_BASE=$RATE_BASE: no vecswitch there"
		variants+=(vecswitch-base)
	fi
	for size in 64 1514; do
		for r in $(seq 1 "$runs"); do
			for variant in "${variants[@]}"; do
				say "rate $variant ${size}B run $r/$runs"
				rate_once "$variant" "$size"
				json=$(cat "$work/rate.json")
				echo "$json" >>"$out/rate.jsonl"
				mpps[$variant $size]+=" $(echo "$json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["mpps"])')"
				gbps[$variant $size]+=" $(echo "$json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["gbps"])')"
			done
		done
	done
	for size in 64 1514; do
		for variant in "${variants[@]}"; do
			# shellcheck disable=SC2086  # the lists split into numbers
			record rate "${size}B" "$variant" Mpps "$(median_of ${mpps[$variant $size]})" "" \
				"${mpps[$variant $size]# }"
			# shellcheck disable=SC2086
			record rate "${size}B-gbps" "$variant" Gbit/s "$(median_of ${gbps[$variant $size]})" "" \
				"${gbps[$variant $size]# }"
		done
	done
}
