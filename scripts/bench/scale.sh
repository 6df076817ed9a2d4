#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench, suite scale: the switch's CPU per frame as plain peers are
# added, the number the scaling model of vecswitch-internals.rst rests
# on.  One switch (--dgram and --stream, queue length 512); synthetic
# peers (scripts/bench/scale_cost.c) in pairs share a fixed total of
# SCALE_RATE frames/s (20000 unless set) of 1514 bytes for $secs seconds;
# per mode (dgram, stream) and number of peers (SCALE_PEERS, "2 8 32 64"
# unless set): the switch's us per frame received and its wake-ups per
# frame, medians of $runs runs, the cases taking turns within each run,
# and each against 2 peers of the same mode in the same run.  Then the
# per-frame and per-wake-up parts of the cost: two peers at SCALE_RATE
# and at a tenth of it (one wake-up every few frames) give a line
# us/frame = frame + wakeup * wake-ups/frame, fitted per run (least
# squares over those points and the SCALE_PEERS ones).
# Sourced by scripts/bench.sh, after scripts/bench/lib.sh.
# shellcheck shell=bash
# shellcheck disable=SC2154  # the globals and helpers are bench.sh's and lib.sh's

# scale_field KEY LINE: the number after KEY in scale_cost's line
scale_field() {
	awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }' <<<"$2"
}

# scale_fit POINTS: "frame wakeup" (us) of the least-squares line through
# POINTS, lines of "wake-ups/frame us/frame"; empty with under 2 points
scale_fit() {
	awk 'NF == 2 { n++; x += $1; y += $2; xx += $1 * $1; xy += $1 * $2 }
	     END { d = n * xx - x * x
		   if (n >= 2 && d > 0) { b = (n * xy - x * y) / d; printf "%.3f %.2f\n", (y - b * x) / n, b } }' <<<"$1"
}

bench_scale() {
	local tool=$build/scale_cost mode r p rate line sw path key us wk fit
	local lo
	local -a peers
	local -A us_l=() wk_l=() rel=() now=() frame_l=() wake_l=() pts=()

	read -ra peers <<<"${SCALE_PEERS:-2 8 32 64}"
	rate=${SCALE_RATE:-20000}
	lo=$((rate / 10))
	[ "$lo" -ge 1000 ] || lo=1000
	plain_switch scale_cost
	sw=$plain_sw
	say "scale: $rate frames/s in all, 1514 bytes; load: $(cut -d' ' -f1-3 /proc/loadavg)"
	: >"$out/scale.log"
	for r in $(seq 1 "$runs"); do
		now=() pts=()
		for mode in dgram stream; do
			path=$work/s.sock
			[ "$mode" = stream ] || path=$work/d.sock
			for p in "${peers[@]}" lo; do
				key="$mode $p"
				if [ "$p" = lo ]; then
					key="$mode 2-low"
					say "scale $mode 2 peers at $lo frames/s run $r/$runs"
					line=$(ip netns exec "$ns" "$tool" "$mode" "$path" "$sw" 2 "$lo" "$secs" 1514) || line=
				else
					say "scale $mode $p peers run $r/$runs"
					line=$(ip netns exec "$ns" "$tool" "$mode" "$path" "$sw" "$p" "$rate" "$secs" 1514) || line=
				fi
				echo "run $r load $(cut -d' ' -f1 /proc/loadavg): $line" >>"$out/scale.log"
				us=$(scale_field us_per_frame "$line")
				wk=$(scale_field wakeups_per_frame "$line")
				us_l[$key]+=" $us" wk_l[$key]+=" $wk" now[$key]=$us
				[ -z "$us" ] || pts[$mode]+="$wk $us"$'\n'
			done
			fit=$(scale_fit "${pts[$mode]:-}")
			frame_l[$mode]+=" ${fit% *}" wake_l[$mode]+=" ${fit#* }"
			for p in "${peers[@]}"; do
				rel[$mode $p]+=" $(awk -v a="${now[$mode $p]:-}" -v b="${now[$mode 2]:-}" \
					'BEGIN { if (a > 0 && b > 0) printf "%.3f\n", a / b }')"
			done
		done
	done
	kill "$sw" 2>/dev/null || true
	wait "$sw" 2>/dev/null || true
	for key in "${!us_l[@]}"; do
		read -r mode p <<<"$key"
		# shellcheck disable=SC2086  # the lists split into numbers
		record scale "$mode-us-per-frame" "$p" us "$(median_of ${us_l[$key]})" "" "${us_l[$key]}"
		# shellcheck disable=SC2086
		record scale "$mode-wakeups-per-frame" "$p" 1 "$(median_of ${wk_l[$key]})" "" "${wk_l[$key]}"
	done
	for key in "${!rel[@]}"; do
		read -r mode p <<<"$key"
		{ [ "$p" != 2 ] && [[ ${rel[$key]} =~ [0-9] ]]; } || continue
		# shellcheck disable=SC2086
		record scale "$mode-per-2-peers" "$p" ratio "$(median_of ${rel[$key]})" "" "${rel[$key]}"
	done
	for mode in dgram stream; do
		# shellcheck disable=SC2086
		record scale "$mode-fit-us-per-frame" fit us "$(median_of ${frame_l[$mode]})" "" "${frame_l[$mode]}"
		# shellcheck disable=SC2086
		record scale "$mode-fit-us-per-wakeup" fit us "$(median_of ${wake_l[$mode]})" "" "${wake_l[$mode]}"
	done
}
