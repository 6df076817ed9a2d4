#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench, suite mq: queues=1 against queues=2 on guests of two CPUs.
# Sourced by scripts/bench.sh, after scripts/bench/lib.sh.
# shellcheck shell=bash
# shellcheck disable=SC2154  # the globals and helpers are bench.sh's and lib.sh's

# The g2g guests (g2g_once), each booted with two virtual CPUs, with one
# and with two queues on vec0, on three paths: a Linux bridge with two
# multiqueue taps, vecswitch with default options (a shortcut channel
# per queue both guests have), and vecswitch --no-shortcut (every frame
# through the switch, which spreads them over the receiver's queue
# sockets).  With two queues, the share of the received frames each of
# the receiving guest's queues took is recorded too (CASE-rxqK, in %,
# from ethtool -S before and after the flow).  Two loads, four flows
# each: TCP with 1 MiB writes (Gbit/s, guests' CPU per Gbit) and UDP
# with 64-byte payloads sent as fast as the senders can (frames a second
# received, loss, guests' CPU per million frames).  The guests keep the
# default coalescing (tx-usecs 0, adaptive-tx off, ethtool -c in each
# guest's setup.log) but in three variants of --no-shortcut: "usecs50"
# holds every batch 50 us (tx-usecs 50), "adaptive" holds only small
# frames that follow each other closely (adaptive-tx on), "softirq"
# polls every queue in softirq on CPU 0 instead of in NAPI threads.
# MQ_CASES, MQ_VARIANTS and MQ_QUEUES limit the suite to those variants and counts.
bench_mq() {
	local c r v q key pps loss cpu k
	local -A val=() gcpu=() lossl=() share=()
	local -A cflags=([tcp4]="-P 4 -l 1M" [udp64]="-u -l 64 -b 0 -P 4")

	for r in $(seq 1 "$runs"); do
		for c in ${MQ_CASES:-tcp4 udp64}; do
			for v in ${MQ_VARIANTS:-bridge vecswitch switched switched-usecs50 \
				   switched-adaptive switched-softirq}; do
				for q in ${MQ_QUEUES:-1 2}; do
					key="$c $v-q$q"
					say "mq $key run $r/$runs"
					mq_once "$v" "$q" "${cflags[$c]}"
					if [ "$c" = udp64 ]; then
						read -r pps loss < <(small_pps "$work/cli/result.json")
						val[$key]+=" $pps" lossl[$key]+=" $loss"
						cpu=$(per_mframes "${flow_used[0]}" "$pps")
					else
						val[$key]+=" $pair_bps"
						cpu=$pair_gcpu
					fi
					gcpu[$key]+=" $cpu"
					[ "$q" -lt 2 ] && continue
					for k in $(seq 0 $((q - 1))); do
						share[$c-rxq$k $v-q$q]+=" $(rxq_share "$k" "$q")"
					done
				done
			done
		done
	done
	for key in "${!share[@]}"; do
		read -r c v <<<"$key"
		# shellcheck disable=SC2086  # the list splits into numbers
		record mq "$c" "$v" % "$(printf '%s\n' ${share[$key]} | median)" "" \
			"${share[$key]}"
	done
	for key in "${!val[@]}"; do
		read -r c v <<<"$key"
		if [ "$c" = udp64 ]; then
			# shellcheck disable=SC2086  # the lists split into numbers
			record mq "$c" "$v" pps "$(printf '%s\n' ${val[$key]} | median)" "" \
				"${val[$key]}" "$(median_of ${gcpu[$key]})"
			# shellcheck disable=SC2086
			record mq "$c-loss" "$v" % "$(printf '%s\n' ${lossl[$key]} | median)" "" \
				"${lossl[$key]}"
		else
			# shellcheck disable=SC2086
			record mq "$c" "$v" bit/s "$(printf '%s\n' ${val[$key]} | median)" "" \
				"${val[$key]}" "$(median_of ${gcpu[$key]})"
		fi
	done
}

# mq_once VARIANT QUEUES IPERF_FLAGS: one g2g run on two-CPU guests
mq_once() {
	local setup="ethtool -c vec0; ethtool -l vec0; cat /sys/class/net/vec0/threaded"

	case $1 in
	*-usecs50) setup="ethtool -C vec0 tx-usecs 50; $setup" ;;
	*-adaptive) setup="ethtool -C vec0 adaptive-tx on; $setup" ;;
	*-softirq) setup="echo 0 >/sys/class/net/vec0/threaded; $setup" ;;
	esac
	UML_CPUS=2 pair_queues=$2 pair_flags=$3 guest_setup="$setup; ethtool -S vec0" \
		server_after="ethtool -S vec0" g2g_once "${1%%-*}"
}

# rxq_share K QUEUES: the share (%) of the frames the server guest received
# in the last mq_once that its receive queue K took, from the ethtool -S
# before (setup.log) and after (after.log) the flow; -1 when unknown
rxq_share() {
	awk -v k="$1" -v n="$2" '
		$1 ~ /^rx_queue_[0-9]+_packets:$/ {
			q = substr($1, 10) + 0
			if (FILENAME ~ /setup/) was[q] = $2; else now[q] = $2
		}
		END {
			for (i = 0; i < n; i++) { d[i] = now[i] - was[i]; t += d[i] }
			if (t > 0 && (k in now)) printf "%.1f\n", 100 * d[k] / t
			else print -1
		}' "$work/srv/setup.log" "$work/srv/after.log" 2>/dev/null || echo -1
}

# per_mframes CPU_SECONDS FRAMES_PER_SECOND: CPU seconds per million frames
per_mframes() {
	[ -n "$1" ] && [ "${2:-0}" -gt 0 ] || return 0
	awk -v c="$1" -v f="$2" -v s="$secs" 'BEGIN { printf "%.3f\n", c / (f * s / 1e6) }'
}
