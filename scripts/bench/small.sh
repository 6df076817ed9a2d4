#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench, suite small: 64-byte UDP guest to guest, frames a second.
# Sourced by scripts/bench.sh, after scripts/bench/lib.sh.
# shellcheck shell=bash
# shellcheck disable=SC2154  # the globals and helpers are bench.sh's and lib.sh's

# Per-frame costs, not bytes, bound a guest at small sizes.  The same two
# guests as in g2g (g2g_once) send iperf3 UDP with 64-byte payloads as
# fast as the sender can for SECS seconds, on each path in turn within
# each run: what the receiver got a second, and the share lost on the way.
# The guests keep the driver's default coalescing (tx-usecs 0: every
# batch the stack hands over is sent at once; rx-usecs 500 with
# adaptive-rx: a one-way stream is read every 500 us).  A variant with
# the suffix "-rx0" turns receive coalescing off in both guests.

# small_pps JSON: the frames a second the server received, and the loss
# in percent (iperf3's client report carries the server's count)
small_pps() {
	python3 - "$1" <<'PY'
import json, sys
try:
    s = json.load(open(sys.argv[1]))["end"]["sum"]
    print(round((s["packets"] - s["lost_packets"]) / s["seconds"]),
          round(100.0 * s["lost_packets"] / max(s["packets"], 1), 2))
except (OSError, ValueError, KeyError, ZeroDivisionError):
    print(0, 100)
PY
}

bench_small() {
	local r v pps loss
	local -A spps=() sloss=()

	for r in $(seq 1 "$runs"); do
		for v in ${SMALL_VARIANTS:-bridge vecswitch switched hub bridge-rx0 vecswitch-rx0}; do
			say "small $v run $r/$runs"
			pair_flags="-u -l 64 -b 0" g2g_variant "$v"
			read -r pps loss < <(small_pps "$work/cli/result.json")
			spps[$v]+=" $pps" sloss[$v]+=" $loss"
		done
	done
	for v in "${!spps[@]}"; do
		# shellcheck disable=SC2086  # the lists split into numbers
		record small udp64 "$v" pps "$(printf '%s\n' ${spps[$v]} | median)" "" "${spps[$v]}"
		# shellcheck disable=SC2086
		record small udp64-loss "$v" % "$(printf '%s\n' ${sloss[$v]} | median)" "" "${sloss[$v]}"
	done
}
