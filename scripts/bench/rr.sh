#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench, suite rr: round trips, not bulk.  The same two UML guests
# as g2g, on the same paths (RR_VARIANTS; default bridge vecswitch
# switched vecswitch-big direct virtio), run vswrr for $secs seconds:
#   tcp-1       1-byte requests and answers, one at a time (ssh keys, RPC)
#   tcp-1k      1 KiB each way, one at a time
#   tcp-1-n8    1-byte, 8 in flight on the one connection
#   tcp-1k-n8   1 KiB, 8 in flight
#   udp         12-byte requests, 8-byte answers, one at a time (DNS-like)
#   udp-n8      the same, 8 in flight
# (RR_CASES picks some.)  Per case and path: transactions a second and
# the 50th, 99th and 99.9th percentile round trip in microseconds, each
# the median of RR_RUNS runs (5 unless set), the paths taking turns
# within each run; the report sets each path's rate and p99 against the
# bridge's in the same run.
# Sourced by scripts/bench.sh, after scripts/bench/lib.sh.
# shellcheck shell=bash
# shellcheck disable=SC2154  # the globals and helpers are bench.sh's and lib.sh's

# rr_field KEY JSON: a number from vswrr's -j output, empty if none
rr_field() {
	sed -n "s/.*\"$1\":\\([0-9.]*\\).*/\\1/p" "$2" 2>/dev/null
}

bench_rr() {
	local c r v key res n=${RR_RUNS:-5} f srv
	local -A vals=()
	local -A cflags=([tcp-1]="" [tcp-1k]="-r 1024 -R 1024" [tcp-1-n8]="-n 8"
			 [tcp-1k-n8]="-r 1024 -R 1024 -n 8" [udp]="-u" [udp-n8]="-u -n 8")

	[ -x "$vswrr" ] || die "no $vswrr (run 'make tools')"
	for r in $(seq 1 "$n"); do
		for c in ${RR_CASES:-tcp-1 tcp-1k tcp-1-n8 tcp-1k-n8 udp udp-n8}; do
			[ -n "${cflags[$c]+set}" ] || die "rr: unknown case '$c'"
			for v in ${RR_VARIANTS:-bridge vecswitch switched vecswitch-big direct virtio}; do
				say "rr $c $v run $r/$n"
				srv=
				[[ ${cflags[$c]} != -u* ]] || srv=-u
				pair_rr=1 pair_rr_server=$srv pair_flags=${cflags[$c]} \
					g2g_variant "$v"
				res=$work/cli/result.json
				for f in tps p50_us p99_us p999_us; do
					vals[$c $v $f]+=" $(rr_field "$f" "$res")"
				done
			done
		done
	done
	for key in "${!vals[@]}"; do
		read -r c v f <<<"$key"
		# shellcheck disable=SC2086  # the lists split into numbers
		record rr "$c/$f" "$v" "$([ "$f" = tps ] && echo 1/s || echo us)" \
			"$(median_of ${vals[$key]})" "" "${vals[$key]}"
	done
}
