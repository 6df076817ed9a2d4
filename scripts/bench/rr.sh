#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench, suite rr: round trips, not bulk.  The same two UML guests
# as g2g, on the same paths (bridge vecswitch switched vecswitch-big
# direct virtio), and the two QEMU light guests of the light suite on
# its paths (light-bridge light-dgram light-stream light-vhost: taps on
# a Linux bridge, vecswitch's --dgram, --stream and --vhost-user), run
# vswrr for $secs seconds:
#   tcp-1       1-byte requests and answers, one at a time (ssh keys, RPC)
#   tcp-1k      1 KiB each way, one at a time
#   tcp-1-n8    1-byte, 8 in flight on the one connection
#   tcp-1k-n8   1 KiB, 8 in flight
#   udp         12-byte requests, 8-byte answers, one at a time (DNS-like)
#   udp-n8      the same, 8 in flight
# (RR_CASES and RR_VARIANTS pick some.)  Per case and path: transactions
# a second and the 50th, 99th and 99.9th percentile round trip in
# microseconds, each the median of RR_RUNS runs (5 unless set), the paths
# taking turns within each run; and each path's rate and p99 against the
# bridge's of the same run (the UML bridge for UML paths, light-bridge
# for the light ones), the medians of those per-run ratios.
#
# A UML pair boots per case (about a second).  A QEMU pair under TCG
# takes 7 s or more to boot, so the light guests boot once per path and
# run, and the client runs every case in turn on that one boot (vswrr
# is in their initramfs, beside iperf3); their switch counters and port
# lists go to $out/rr/PATH-rN.txt.
# Sourced by scripts/bench.sh, after scripts/bench/lib.sh and light.sh.
# shellcheck shell=bash
# shellcheck disable=SC2154  # the globals and helpers are bench.sh's and lib.sh's

# rr_field KEY JSON: a number from vswrr's -j output, empty if none
rr_field() {
	sed -n "s/.*\"$1\":\\([0-9.]*\\).*/\\1/p" "$2" 2>/dev/null
}

# rr_light_cmd CASE...: the light client's command: each CASE's vswrr
# run (a few tries while the server starts), its JSON line after the
# case's name; all of them on the second serial port at the end, between
# light_once's marks.  No double quotes: it travels on the kernel's
# command line.
rr_light_cmd() {
	local c

	printf '%s' "echo VSW_RUNNING;"
	for c; do
		printf '%s' " rm -f /tmp/o; for i in 1 2 3; do vswrr client -H 198.18.7.1 -t $secs ${rr_flags[$c]} -j" \
			" >/tmp/o && break; sleep 1; done; echo $c \$(cat /tmp/o) >>/tmp/rr;"
	done
	printf '%s' " echo VSW_DONE; cat /tmp/rr >/dev/ttyS1; echo VSW_RESULT"
}

# rr_once_light PATH RUN CASE...: one boot of the light pair on PATH,
# every CASE run on it; their results into rr_now
rr_once_light() {
	local path=$1 c f line

	light_run=$2
	shift 2
	say "rr light-$path run $light_run: $*"
	light_srv_run="vswrr server >/dev/null 2>&1 & vswrr server -u >/dev/null 2>&1" \
		light_cli_run="$(rr_light_cmd "$@")" light_flow=$((($# + 1) * (secs + 2))) \
		light_once "$path"
	for c; do
		line=$(grep -a "^$c {" "$light_dir/cli.out" 2>/dev/null | head -n 1)
		[ -n "$line" ] || say "rr light-$path $c: no result"
		printf '%s\n' "${line#* }" >"$light_dir/$c.json"
		for f in tps p50_us p99_us p999_us; do
			rr_now[$c light-$path $f]=$(rr_field "$f" "$light_dir/$c.json")
		done
	done
}

# rr_once_uml CASE VARIANT RUN: one boot of the g2g pair on VARIANT, one
# CASE; its results into rr_now
rr_once_uml() {
	local c=$1 v=$2 f srv=

	say "rr $c $v run $3"
	[[ ${rr_flags[$c]} != -u* ]] || srv=-u
	pair_rr=1 pair_rr_server=$srv pair_flags=${rr_flags[$c]} g2g_variant "$v"
	for f in tps p50_us p99_us p999_us; do
		rr_now[$c $v $f]=$(rr_field "$f" "$work/cli/result.json")
	done
}

bench_rr() {
	local c r v key n=${RR_RUNS:-5} f base
	local -a cases uml=() light=()
	local -A vals=() rel=() rr_now=()
	local -A rr_flags=([tcp-1]="" [tcp-1k]="-r 1024 -R 1024" [tcp-1-n8]="-n 8"
			   [tcp-1k-n8]="-r 1024 -R 1024 -n 8" [udp]="-u" [udp-n8]="-u -n 8")

	[ -x "$vswrr" ] || die "no $vswrr (run 'make tools')"
	read -ra cases <<<"${RR_CASES:-tcp-1 tcp-1k tcp-1-n8 tcp-1k-n8 udp udp-n8}"
	for c in "${cases[@]}"; do
		[ -n "${rr_flags[$c]+set}" ] || die "rr: unknown case '$c'"
	done
	for v in ${RR_VARIANTS:-bridge vecswitch switched vecswitch-big direct virtio \
		   light-bridge light-dgram light-stream light-vhost}; do
		case $v in
		light-bridge|light-dgram|light-stream|light-vhost) light+=("${v#light-}") ;;
		light-*) die "rr: unknown light path '$v'" ;;
		*) uml+=("$v") ;;
		esac
	done
	if [ ${#light[@]} -gt 0 ]; then
		if ! command -v "$light_qemu_bin" >/dev/null; then
			say "rr: no $light_qemu_bin, the light paths left out"
			light=()
		elif ! light_prepare rr "$vswrr"; then
			light=()
		fi
	fi
	for r in $(seq 1 "$n"); do
		rr_now=()
		for c in "${cases[@]}"; do
			for v in "${uml[@]}"; do
				rr_once_uml "$c" "$v" "$r/$n"
			done
		done
		for v in "${light[@]}"; do
			rr_once_light "$v" "$r" "${cases[@]}"
		done
		for key in "${!rr_now[@]}"; do
			read -r c v f <<<"$key"
			vals[$key]+=" ${rr_now[$key]}"
			# against the bridge of this same run (its own kind's)
			base=bridge
			[[ $v != light-* ]] || base="light-bridge"
			[ "$v" != "$base" ] || continue
			case $f in
			tps) rel[$c $v tps-per-bridge]+=" $(rr_ratio "${rr_now[$key]}" "${rr_now[$c $base $f]:-}")" ;;
			p99_us) rel[$c $v p99-per-bridge]+=" $(rr_ratio "${rr_now[$key]}" "${rr_now[$c $base $f]:-}")" ;;
			esac
		done
	done
	for key in "${!vals[@]}"; do
		read -r c v f <<<"$key"
		# shellcheck disable=SC2086  # the lists split into numbers
		record rr "$c/$f" "$v" "$([ "$f" = tps ] && echo 1/s || echo us)" \
			"$(median_of ${vals[$key]})" "" "${vals[$key]}"
	done
	for key in "${!rel[@]}"; do
		read -r c v f <<<"$key"
		[[ ${rel[$key]} =~ [0-9] ]] || continue
		# shellcheck disable=SC2086
		record rr "$c/$f" "$v" ratio "$(median_of ${rel[$key]})" "" "${rel[$key]}"
	done
}

# rr_ratio A B: A / B to three places, empty when either is unknown or 0
rr_ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.3f\n", a / b }'
}
