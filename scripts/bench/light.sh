#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench, suite light: two QEMU light guests (TCG, 1 vCPU, 256 MB, the
# host's distribution kernel with scripts/qemu-initrd.sh's initramfs and
# iperf3 in it, virtio-net-pci), one TCP flow from one to the other on
#   bridge  a tap each (vhost=off) on a Linux bridge, the baseline
#   dgram   -netdev dgram to vecswitch --dgram (plain frames)
#   stream  -netdev stream to vecswitch --stream (plain frames)
#   vhost   -netdev vhost-user to vecswitch --vhost-user (shared memory;
#           its device has vectors=0: QEMU 7.2 under TCG dies on MSI-X
#           for vhost-user devices, so it takes INTx where the others
#           take MSI-X)
# The paths take turns within each run, and each flow boots its two
# guests afresh (about 7 s under TCG), so nothing carries over from one
# path to the next.  Per path: Gbit/s, the CPU seconds per Gbit of the two
# QEMU processes and of the switch over the flow, and the path's rate
# against the bridge's in the same run.  The CPU seconds the rest of the
# host used during each flow are recorded too (host-other-cpu): on a shared
# machine, a flow beside other work is not a clean figure.
#
# net.unix.max_dgram_qlen stays at the kernel's default (10) in the
# namespace, as on a host nobody tuned; LIGHT_QLEN=N sets it instead (the
# suite says so).  LIGHT_PATHS="bridge vhost" limits the paths (bridge
# must stay for the ratios).  LIGHT_BASE=DIR adds the path vhost-base:
# vhost-user again, to the vecswitch built in DIR (another commit's
# build), for a change measured against what it changed in one run.  LIGHT_PERF=FILE: after the runs, one more
# vhost flow, not recorded, with perf record -g on the switch; perf's flat
# report goes to FILE, its data to FILE.data.  QEMU and VSW_KERNEL choose the emulator and the guests'
# kernel.  Switch counters and port lists of each flow go to
# $out/light/PATH-rN.txt.
# Sourced by scripts/bench.sh, after scripts/bench/lib.sh.
# shellcheck shell=bash
# shellcheck disable=SC2154  # the globals and helpers are bench.sh's and lib.sh's

light_qemu_bin=${QEMU:-qemu-system-x86_64}

# light_qemu NAME IP APPEND QEMU_ARGS...: boot light guest NAME in $ns as
# IP/24, APPEND added to its kernel command line; its console goes to
# $light_dir/NAME.log, its second serial port to $light_dir/NAME.out, and
# its pid joins pids.  no_timer_check: on a busy host the emulated
# CPU can miss the window of the kernel's IO-APIC timer check, which
# then panics the guest ("IO-APIC + timer doesn't work!")
light_qemu() {
	local name=$1 ip=$2 append=$3

	shift 3
	ip netns exec "$ns" "$light_qemu_bin" -accel tcg -m 256 -smp 1 -nodefaults -no-reboot \
		-display none -monitor none \
		-serial "file:$light_dir/$name.log" -serial "file:$light_dir/$name.out" \
		-kernel "$light_kernel" -initrd "$light_initrd" \
		-append "console=ttyS0 panic=-1 loglevel=4 no_timer_check VSW_LIFE=$((${light_flow:-$secs} + 180)) VSW_IP=$ip $append" \
		"$@" 2>"$light_dir/$name.err" </dev/null &
	pids+=($!)
}

# light_net PATH GUEST: the QEMU options that attach GUEST (0 or 1) on PATH
light_net() {
	local dev="virtio-net-pci,netdev=n0,mac=52:54:00:6c:00:1$2"

	case $1 in
	bridge) echo "-netdev tap,id=n0,ifname=ltap$2,script=no,downscript=no,vhost=off" ;;
	dgram) echo "-netdev dgram,id=n0,local.type=unix,local.path=$light_dir/g$2.sock,remote.type=unix,remote.path=$light_dir/sw.sock" ;;
	stream) echo "-netdev stream,id=n0,server=off,addr.type=unix,addr.path=$light_dir/sw.sock" ;;
	vhost|vhost-base)
		echo "-object memory-backend-memfd,id=mem,size=256M,share=on -numa node,memdev=mem"
		echo "-chardev socket,id=c0,path=$light_dir/sw.sock,reconnect=1 -netdev vhost-user,id=n0,chardev=c0"
		dev+=",vectors=0" ;;
	esac
	echo "-device $dev"
}

# The client guest's command: iperf3 to the server (a few tries while
# its iperf3 starts), its flow between the marks VSW_RUNNING and VSW_DONE
# on the console, then its JSON on the second serial port (a close of the
# port waits until it has gone out) and VSW_RESULT
light_client_cmd() {
	printf '%s' "for i in \$(seq 10); do echo VSW_RUNNING; iperf3 -c $1 -t $secs -J >/tmp/r.json && break; sleep 1; done;" \
		" echo VSW_DONE; cat /tmp/r.json >/dev/ttyS1; echo VSW_RESULT"
}

# light_mark GUEST MARK SECONDS: true once GUEST's console shows MARK
light_mark() {
	wait_for "$3" grep -q "^$2" "$light_dir/$1.log"
}

# host_busy: CPU seconds the whole host has been busy (every CPU, /proc/stat)
host_busy() {
	awk -v hz="$(getconf CLK_TCK)" '$1 == "cpu" { printf "%.2f\n", ($2 + $3 + $4 + $7 + $8) / hz }' /proc/stat
}

# light_qlen: the namespace's max_dgram_qlen back to the default, or LIGHT_QLEN
light_qlen() {
	ip netns exec "$ns" sysctl -qw net.unix.max_dgram_qlen="${LIGHT_QLEN:-10}"
}

# light_vhost_counts: "frames kicks calls" summed over the switch's
# vhost-user ports (ctl stats: frames received from the guests, eventfd
# kicks taken and calls made), nothing where there are none
light_vhost_counts() {
	{ CTL=$light_dir/ctl.sock ctl stats 2>/dev/null || true; } | awk '
		$1 == "port" { vh = ($3 == "vhost-user") }
		vh && $1 == "rx_frames" { f += $2; any = 1 }
		vh && $1 == "vhost_kicks" { k += $2 }
		vh && $1 == "vhost_calls" { c += $2 }
		END { if (any) printf "%d %d %d\n", f, k, c }'
}

# light_once PATH: one flow from guest 1 (198.18.7.2) to guest 0
# (198.18.7.1) on PATH; sets light_bps, light_gcpu and light_scpu (CPU
# seconds per Gbit of both QEMU processes and of the switch),
# light_swcpu (the switch's CPU seconds over the flow) and light_other
# (what the rest of the host used meanwhile: other work on the machine),
# and on vhost-user light_kicks and light_calls: the switch's kicks taken
# and calls made per frame it forwarded over the flow.
# Another suite may give the guests other programs: $light_srv_run is the
# server's command, $light_cli_run the client's (its marks and output as
# light_client_cmd's), $light_flow the seconds its flow may take; with
# $light_cli_run set no rate is read (light_bps 0), the client's output
# stays in $light_dir/cli.out.
light_once() {
	local path=$1 sw='' t srv cli g0 g1 s0='' s1='' h0 h1 perf='' v0='' v1=''
	local -a a0 a1

	netns_fresh
	light_qlen
	rm -rf "$light_dir"
	mkdir -p "$light_dir"
	case $path in
	bridge)
		ip -n "$ns" link add lbr0 type bridge
		for t in 0 1; do
			ip -n "$ns" tuntap add dev "ltap$t" mode tap
			ip -n "$ns" link set "ltap$t" master lbr0 up
		done
		ip -n "$ns" link set lbr0 up ;;
	dgram|stream) bench_switch "$ns" "--$path" "$light_dir/sw.sock" --ctl "$light_dir/ctl.sock" ;;
	vhost) bench_switch "$ns" --vhost-user "$light_dir/sw.sock" --ctl "$light_dir/ctl.sock" ;;
	vhost-base) VECSWITCH=$LIGHT_BASE/vecswitch \
		bench_switch "$ns" --vhost-user "$light_dir/sw.sock" --ctl "$light_dir/ctl.sock" ;;
	esac
	[ "$path" = bridge ] || sw=${pids[-1]}
	read -ra a0 <<<"$(light_net "$path" 0 | tr '\n' ' ')"
	read -ra a1 <<<"$(light_net "$path" 1 | tr '\n' ' ')"
	light_qemu srv 198.18.7.1 "VSW_RUN=\"${light_srv_run:-iperf3 -s >/dev/null 2>&1}\"" "${a0[@]}"
	srv=${pids[-1]}
	light_qemu cli 198.18.7.2 "VSW_PEER=198.18.7.1 VSW_RUN=\"${light_cli_run:-$(light_client_cmd 198.18.7.1)}\"" "${a1[@]}"
	cli=${pids[-1]}
	# boots, the client's ping and its first try, bounded; then the flow
	if light_mark cli VSW_RUNNING 240; then
		[ -z "$sw" ] || s0=$(procs_cpu "$sw")
		[ -z "$sw" ] || v0=$(light_vhost_counts)
		g0=$(procs_cpu "$srv" "$cli")
		h0=$(host_busy)
		if [ -n "${light_perf:-}" ] && [ "$path" = vhost ] && [ -n "$sw" ]; then
			perf record -q -g -p "$sw" -o "$light_perf.data" -- sleep "$secs" >/dev/null 2>&1 &
			perf=$!
		fi
		if light_mark cli VSW_DONE $((${light_flow:-$secs} + 60)); then
			[ -z "$sw" ] || s1=$(procs_cpu "$sw")
			[ -z "$sw" ] || v1=$(light_vhost_counts)
			g1=$(procs_cpu "$srv" "$cli")
			h1=$(host_busy)
		fi
		light_mark cli VSW_RESULT 30 || true
	fi
	if [ -n "$perf" ]; then
		wait "$perf" || true
		perf report -i "$light_perf.data" --stdio --no-children -g none --percent-limit 0.5 \
			2>/dev/null | head -n 80 >"$light_perf" || true
	fi
	light_bps=0
	[ -n "${light_cli_run:-}" ] || light_bps=$(iperf_bps "$light_dir/cli.out")
	[ "$light_bps" -gt 0 ] || [ -n "${light_cli_run:-}" ] ||
		say "light $path: no result; the client's console ended: $(grep -v '^.$' "$light_dir/cli.log" 2>/dev/null | tail -n 3 | tr '\r\n' '  ')"
	light_gcpu=$(per_gbit "$(awk -v a="${g1:-}" -v b="${g0:-}" 'BEGIN { if (a != "") printf "%.2f\n", a - b }')" "$light_bps")
	light_swcpu=$(awk -v a="$s1" -v b="$s0" 'BEGIN { if (a != "") printf "%.2f\n", a - b }')
	light_scpu=$(per_gbit "$light_swcpu" "$light_bps")
	read -r light_kicks light_calls < <(awk -v a="$v1" -v b="$v0" 'BEGIN {
		split(a, x); split(b, y)
		if (a != "" && b != "" && x[1] > y[1])
			printf "%.3f %.3f\n", (x[2] - y[2]) / (x[1] - y[1]), (x[3] - y[3]) / (x[1] - y[1])
	}') || true
	light_other=$(awk -v h1="${h1:-}" -v h0="${h0:-}" -v g1="${g1:-}" -v g0="${g0:-}" -v s="${light_swcpu:-0}" \
		'BEGIN { if (h1 != "") printf "%.2f\n", (h1 - h0) - (g1 - g0) - s }')
	if [ -n "$sw" ]; then
		{ CTL=$light_dir/ctl.sock ctl stats; CTL=$light_dir/ctl.sock ctl ports; } \
			>"$out/$light_suite/$path-r$light_run.txt" 2>&1 || true
	fi
	for t in "$cli" "$srv" ${sw:+"$sw"}; do
		kill "$t" 2>/dev/null || true
		wait "$t" 2>/dev/null || true
	done
}

# light_prepare SUITE [PROGRAM...]: the guests' files under $work/SUITE
# (light_dir), the results' under $out/SUITE (light_suite), afresh, and
# their initramfs with iperf3 and the PROGRAMs built; false (the suite
# is skipped, said) where no initramfs can be
light_prepare() {
	light_suite=$1
	light_dir=$work/$1
	# a dot file: the UML paths of rr empty $work/* before every pair
	light_initrd=$work/.light-initrd.gz
	rm -rf "${out:?}/$1"
	mkdir -p "$out/$1"
	say "$1: building the guests' initramfs (busybox, iperf3)"
	if ! light_kernel=$(VSW_IPERF3=1 VSW_TOOLS="${*:2}" "$top/scripts/qemu-initrd.sh" "$light_initrd"); then
		say "$1: skipped, no initramfs for the light guests (see above)"
		return 1
	fi
	say "$1: guests run $light_kernel under TCG"
}

bench_light() {
	local r p ratio
	local -a paths
	local -A lbps=() lgcpu=() lscpu=() lsw=() lratio=() lother=() now=() lkick=() lcall=()

	read -ra paths <<<"${LIGHT_PATHS:-bridge dgram stream vhost}"
	if [ -n "${LIGHT_BASE:-}" ]; then
		[ -x "$LIGHT_BASE/vecswitch" ] || die "LIGHT_BASE=$LIGHT_BASE: no vecswitch there"
		paths+=(vhost-base)
	fi
	command -v "$light_qemu_bin" >/dev/null || { say "light: skipped, no $light_qemu_bin"; return 0; }
	[ -x "$vecswitch" ] || die "no $vecswitch (run 'make tools')"
	light_perf=
	light_prepare light || return 0
	if [ -n "${LIGHT_QLEN:-}" ]; then
		say "light: net.unix.max_dgram_qlen=$LIGHT_QLEN in the namespace (LIGHT_QLEN)"
	else
		say "light: net.unix.max_dgram_qlen=10 in the namespace, the kernel's default"
	fi
	for r in $(seq 1 "$runs"); do
		light_run=$r
		now=()
		for p in "${paths[@]}"; do
			say "light $p run $r/$runs"
			light_once "$p"
			say "light $p run $r/$runs: $(awk -v b="$light_bps" 'BEGIN { printf "%.2f", b / 1e9 }') Gbit/s; CPU s over the flow: switch ${light_swcpu:-n/a}, rest of the host ${light_other:-n/a}"
			lbps[$p]+=" $light_bps" lgcpu[$p]+=" $light_gcpu" lscpu[$p]+=" $light_scpu"
			lsw[$p]+=" $light_swcpu" lother[$p]+=" $light_other"
			lkick[$p]+=" $light_kicks" lcall[$p]+=" $light_calls"
			now[$p]=$light_bps
		done
		# each path against the bridge of this same run
		for p in "${paths[@]}"; do
			ratio=$(awk -v a="${now[$p]}" -v b="${now[bridge]:-0}" 'BEGIN { if (b > 0) printf "%.3f\n", a / b }')
			lratio[$p]+=" $ratio"
		done
	done
	for p in "${paths[@]}"; do
		# shellcheck disable=SC2086  # the lists split into numbers
		record light tcp "$p" bit/s "$(printf '%s\n' ${lbps[$p]} | median)" \
			"$(median_of ${lsw[$p]})" "${lbps[$p]}" "$(median_of ${lgcpu[$p]})" \
			"$(median_of ${lscpu[$p]})"
		# shellcheck disable=SC2086
		record light host-other-cpu "$p" "CPU s" "$(median_of ${lother[$p]})" "" "${lother[$p]}"
		if [[ ${lkick[$p]} =~ [0-9] ]]; then
			# shellcheck disable=SC2086
			record light kicks-per-frame "$p" ratio "$(median_of ${lkick[$p]})" "" "${lkick[$p]}"
			# shellcheck disable=SC2086
			record light calls-per-frame "$p" ratio "$(median_of ${lcall[$p]})" "" "${lcall[$p]}"
		fi
		{ [ "$p" != bridge ] && [[ ${lratio[$p]} =~ [0-9] ]]; } || continue
		# shellcheck disable=SC2086
		record light tcp-per-bridge "$p" ratio "$(median_of ${lratio[$p]})" "" "${lratio[$p]}"
	done
	if [ -n "${LIGHT_PERF:-}" ]; then
		if command -v perf >/dev/null; then
			say "light: one more vhost flow with perf record on the switch -> $LIGHT_PERF"
			light_perf=$LIGHT_PERF light_run=perf
			light_once vhost
			light_perf=
		else
			say "light: no perf, no profile"
		fi
	fi
}
