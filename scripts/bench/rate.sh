#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench, suite rate: port-to-port forwarding rate with 2 idle ports attached.
# Sourced by scripts/bench.sh, after scripts/bench/lib.sh.
# shellcheck shell=bash
# shellcheck disable=SC2154  # the globals and helpers are bench.sh's and lib.sh's

bench_rate() {
	local size variant r json vals_p vals_b sw flag
	[ -x "$vswblast" ] || die "no $vswblast (run 'make bench')"
	for size in 64 1514; do
		for variant in vecswitch hub vde_switch; do
			vals_p=() vals_b=()
			for r in $(seq 1 "$runs"); do
				say "rate $variant ${size}B run $r/$runs"
				netns_fresh
				rm -rf "${work:?}"/*
				case "$variant" in
				vecswitch) ip netns exec "$ns" "$vecswitch" --dgram "$work/sw.sock" 2>/dev/null & ;;
				hub) ip netns exec "$ns" "$vecswitch" --dgram "$work/sw.sock" --hub 2>/dev/null & ;;
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
				flag=()
				[ "$variant" = vde_switch ] && flag=(--vde)
				json=$(ip netns exec "$ns" "$vswblast" "${flag[@]}" --switch "$work/sw.sock" \
					--dir "$work" --size "$size" --seconds "$secs" --idle 2) || json='{"mpps":0,"gbps":0}'
				echo "$json" >>"$out/rate.jsonl"
				vals_p+=("$(echo "$json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["mpps"])')")
				vals_b+=("$(echo "$json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["gbps"])')")
				kill "$sw" 2>/dev/null || true
				wait "$sw" 2>/dev/null || true
			done
			record rate "${size}B" "$variant" Mpps "$(printf '%s\n' "${vals_p[@]}" | median)" "" "${vals_p[*]}"
			record rate "${size}B-gbps" "$variant" Gbit/s "$(printf '%s\n' "${vals_b[@]}" | median)" "" "${vals_b[*]}"
		done
	done
}
