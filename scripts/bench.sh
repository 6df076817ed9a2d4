#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: every measurement runs inside a private network namespace,
# each figure is the median of RUNS runs, and every comparison is made
# against a baseline measured in the same run.  Results go to
# build/bench/results.json, report.md and PNG plots (scripts/bench-report.py).
#
#   RUNS=3 SECS=5 scripts/bench.sh [SUITE...]
#   IDLE="0 4" limits the idle suite to those numbers of idle guests,
#   TRANSPORTS="tap tap-1M" the transports suite to those cases.
#
# Suites: transports (tap, raw and hybrid, ours against the kernel's
# bundled vector driver, both ways; tap also with iperf3 -l 1M), tunnels (gre, l2tpv3 and bess guest
# to guest, ours against the bundled driver), g2g (the same two guests on
# a Linux bridge with two taps, through vecswitch with default options,
# and through vecswitch with plain frames, vnet=0; iperf3's default reads
# and 1 MiB ones), idle (one pair's
# throughput with idle guests attached, switch against --hub, and as a
# control the most idle guests on a second switch), rate (port
# to port forwarding with 2 idle ports: vecswitch, --hub, vde_switch),
# kernels (tap both ways with 1 MiB reads, the bundled driver and ours, each
# on 6.12 and on 7.3), vxlan (a pair on two "hosts" joined by VXLAN against the same pair on
# one host), faults (a pair next to guests that are stopped, killed, or
# lose the switch's socket file, each against the same load without the
# fault).
#
# Read size: with iperf3's default 128 KiB reads a receiving UML guest is
# bound by its own iperf3's system calls (each one a round of ptrace
# stops between the guest's process and its kernel), whatever the driver.
# The -1M cases read and write 1 MiB at a time, which leaves the driver
# and the stack as the limit; both sides of every ratio use the same size.
#
# CPU: for every flow the guests' host processes (each guest's whole
# process group) and the switch are sampled when the client guest starts
# its flow and when it ends it; the report gives CPU seconds per Gbit.

set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${VECNET_BUILD:-$top/build}
out=$build/bench
ours=${VMLINUX:-$build/vmlinux}
baseline=${VECNET_BASELINE:-$build/baseline-7.3/vmlinux}
vecswitch=$build/vecswitch
runs=${RUNS:-3}
secs=${SECS:-5}
suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(rate transports tunnels g2g kernels idle vxlan faults)
vswblast=$build/vswblast

mkdir -p "$out"
raw=$out/raw.jsonl
: >"$raw"
ns=vecnet-bench-$$
nsb=$ns-b		# the second host of the vxlan suite
work=$(mktemp -d /tmp/vecnet-bench.XXXXXX)
pids=()

say() { printf '  %-7s %s\n' BENCH "$*"; }
die() { echo "bench: $*" >&2; exit 1; }

# shellcheck disable=SC2317  # invoked through trap
cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill -KILL "$p" 2>/dev/null || true
	done
	netns_gone "$ns"
	netns_gone "$nsb"
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[ "$(id -u)" -eq 0 ] || die "needs root (namespaces, tap devices)"
[ -x "$ours" ] || die "no $ours (run 'make')"

# record SUITE CASE VARIANT UNIT VALUE [CPU_SECONDS [RUNS [GUESTS [SWITCH]]]]:
# RUNS is the space-separated list of the values VALUE is the median of;
# GUESTS and SWITCH are the CPU seconds the guests and the switch used
# per Gbit moved (medians, see flow_cpu)
record() {
	local list

	list=$(echo "${7:-}" | xargs | tr ' ' ,)
	printf '{"suite":"%s","case":"%s","variant":"%s","unit":"%s","value":%s,"cpu_s":%s,"runs":[%s],"guest_cpu_per_gbit":%s,"switch_cpu_per_gbit":%s}\n' \
		"$1" "$2" "$3" "$4" "$5" "${6:-null}" "$list" "${8:-null}" "${9:-null}" >>"$raw"
}

netns_gone() {
	ip netns pids "$1" 2>/dev/null | xargs -r kill -KILL 2>/dev/null || true
	ip netns del "$1" 2>/dev/null || true
}

# netns_fresh [NAME]: a new, empty $ns (or NAME); the second host goes
netns_fresh() {
	local n=${1:-$ns}

	[ -n "${1:-}" ] || netns_gone "$nsb"
	netns_gone "$n"
	ip netns add "$n"
	ip -n "$n" link set lo up
	# Datagram receivers queue 512 frames instead of 10 (see the docs)
	ip netns exec "$n" sysctl -qw net.unix.max_dgram_qlen=512
}

# procs_cpu [PID | -PGID]...: the CPU seconds (user + system, reaped
# children included) these processes have used so far; -PGID stands for
# a whole process group, which for a guest is its kernel and every host
# process it runs (uml-run writes the group to OUT/pgid)
procs_cpu() {
	local p list=()

	for p; do
		if [ "${p:0:1}" = - ]; then
			mapfile -t -O "${#list[@]}" list < <(pgrep -g "${p#-}" || true)
		else
			list+=("$p")
		fi
	done
	# the command name in stat may hold spaces: fields count from after it
	{ [ ${#list[@]} -eq 0 ] || (cd /proc && cat "${list[@]/%//stat}" 2>/dev/null) || true; } |
		sed 's/^.*) //' |
		awk -v hz="$(getconf CLK_TCK)" '{ s += $12 + $13 + $14 + $15 } END { printf "%.2f\n", s / hz }'
}

# flow_mark DIR MARK PID: wait (bounded) for the client guest in DIR,
# whose uml-run is PID, to write MARK (running: its flow starts; done: it
# ended); false if it never does
flow_mark() {
	local _

	for _ in $(seq $(((secs + 90) * 10))); do
		[ -e "$1/$2" ] && return 0
		kill -0 "$3" 2>/dev/null || break
		sleep 0.1
	done
	[ -e "$1/$2" ]
}

# flow_cpu DIR PID SET...: the CPU seconds each SET used while the client
# guest in DIR (its uml-run is PID) ran its flow, in flow_used (empty
# strings when the guest never marked the flow's start or end).  The
# guests wait for DIR/sampled before they exit (flow_hold), so that none
# has taken its CPU time away with it.  A SET is a space-separated list
# of host process IDs and guest names (a guest of $work: its whole
# process group).  Only the flow counts, not boots, shutdowns or the
# idle seconds around them.
flow_cpu() {
	local dir=$1 pid=$2 set tok g i start=() args=()

	shift 2
	flow_used=()
	for set; do flow_used+=(""); done
	flow_mark "$dir" running "$pid" || { touch "$dir/sampled"; return 0; }
	for set; do
		g=
		for tok in $set; do
			if [[ $tok =~ ^[0-9]+$ ]]; then
				g+=" $tok"
			elif [ "$(cat "$work/$tok/pgid" 2>/dev/null)" -gt 1 ] 2>/dev/null; then
				g+=" -$(cat "$work/$tok/pgid")"
			fi
		done
		args+=("$g")
		# shellcheck disable=SC2086  # a list of process arguments
		start+=("$(procs_cpu $g)")
	done
	flow_mark "$dir" "done" "$pid" || { touch "$dir/sampled"; return 0; }
	for i in "${!args[@]}"; do
		# shellcheck disable=SC2086
		flow_used[i]=$(awk -v a="$(procs_cpu ${args[i]})" -v b="${start[i]}" \
			'BEGIN { printf "%.2f\n", a - b }')
	done
	touch "$dir/sampled"
}

# per_gbit CPU_SECONDS BPS: CPU seconds per Gbit of a SECS-second flow
# at BPS bit/s (empty when either is unknown or zero)
per_gbit() {
	[ -n "$1" ] && [ "${2:-0}" -gt 0 ] || return 0
	awk -v c="$1" -v b="$2" -v s="$secs" 'BEGIN { printf "%.3f\n", c / (b * s / 1e9) }'
}

# guest_bg NAME KERNEL TIMEOUT CMD [uml-run args...]: boot in the background
# (uml-run's complaints go to $guest_err where set: a guest that is
# meant to die).  Appended, never truncated: /dev/stderr opened with
# O_TRUNC would empty this script's own log when that is a file.
guest_bg() {
	local name=$1 kernel=$2 timeout=$3 cmd=$4

	shift 4
	# a run before this one may have left its flow marks (flow_cpu)
	rm -f "$work/$name/running" "$work/$name/done" "$work/$name/sampled"
	"$top/scripts/uml-run" -k "$kernel" -n "${guest_ns:-$ns}" -N "$name" -t "$timeout" -q \
		-o "$work/$name" "$@" -- sh -c "$cmd" 2>>"${guest_err:-/dev/stderr}" &
	pids+=($!)
}

# iperf3 JSON -> bits per second received
bps_of() {
	python3 -c 'import json,sys; print(int(json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"]))' "$1" 2>/dev/null || echo 0
}

# flow_hold DIR: guest-side commands that wait (bounded, 10 s) until
# flow_cpu has taken its last sample of the flow whose client is in DIR
flow_hold() {
	echo "for i in \$(seq 100); do [ -e $1/sampled ] && break; sleep 0.1; done"
}

# flow_client CMD: guest-side commands that run the client's flow CMD
# between flow_cpu's marks, hold until sampled, and exit with CMD's status
flow_client() {
	echo "touch running; $1; rc=\$?; touch done; $(flow_hold .); exit \$rc"
}

# The guest-side script of an iperf3 pair: the server guest marks itself
# ready, the client waits for that (bounded), marks its flow's start and
# end (flow_cpu) and writes result.json.  With CLIENT_DIR, the server
# stays up until the flow's CPU time has been taken.
# server_cmd ADDR [CLIENT_DIR]
server_cmd() {
	echo "ip addr add $1/24 dev vec0 && ip link set vec0 up &&
	      { iperf3 -s -1 >/dev/null 2>&1 & touch ready; wait; }${2:+; $(flow_hold "$2")}"
}
# client_cmd ADDR SERVER SERVER_DIR IPERF_FLAGS
client_cmd() {
	echo "ip addr add $1/24 dev vec0 && ip link set vec0 up &&
	      for i in \$(seq 300); do [ -e $3/ready ] && break; sleep 0.1; done &&
	      ping -c 1 -W 2 $2 >/dev/null;
	      $(flow_client "iperf3 -c $2 -t $secs $4 -J >result.json")"
}

# pair_run KERNEL NET SERVER_VEC0 CLIENT_VEC0: guests srv (NET.1; in
# $srv_ns when set) and cli (NET.2) boot and run one iperf3 flow; its rate
# goes to $pair_bps, and the CPU seconds per Gbit both guests used, and
# the switch whose PID is $pair_switch if set, to $pair_gcpu and $pair_scpu
pair_run() {
	guest_ns=${srv_ns:-} guest_bg srv "$1" $((secs + 60)) "$(server_cmd "$2.1" "$work/cli")" \
		-a "vec0:$3"
	guest_bg cli "$1" $((secs + 60)) \
		"$(client_cmd "$2.2" "$2.1" "$work/srv" "${pair_flags:-}")" -a "vec0:$4"
	flow_cpu "$work/cli" "${pids[-1]}" "srv cli" "${pair_switch:-}"
	wait "${pids[-1]}" || true
	wait "${pids[-2]}" || true
	pair_bps=$(bps_of "$work/cli/result.json")
	pair_gcpu=$(per_gbit "${flow_used[0]}" "$pair_bps")
	pair_scpu=
	[ -z "${pair_switch:-}" ] || pair_scpu=$(per_gbit "${flow_used[1]}" "$pair_bps")
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print 0 }'; }
# median_of VALUE...: the median of the non-empty VALUEs, null if none
median_of() {
	printf '%s\n' "$@" | sort -g |
		awk 'NF { v[++n] = $1 } END { if (n) print v[int((n + 1) / 2)]; else print "null" }'
}

# --- transports: ours against the bundled driver, both directions -------
# transport_host T: the host end of transport T in $ns (address
# 198.18.2.1), and prints the guest's vecN: options
transport_host() {
	case "$1" in
	tap|hybrid)
		ip -n "$ns" tuntap add dev btap0 mode tap
		ip -n "$ns" addr add 198.18.2.1/24 dev btap0
		ip -n "$ns" link set btap0 up
		echo "transport=$1,ifname=btap0,depth=128,gro=1" ;;
	raw)
		ip -n "$ns" link add bveth0 type veth peer name bveth1
		ip -n "$ns" addr add 198.18.2.1/24 dev bveth1
		ip -n "$ns" link set bveth0 up
		ip -n "$ns" link set bveth1 up
		echo "transport=raw,ifname=bveth0,depth=128" ;;
	esac
}

# transport_runs SUITE T VARIANT KERNEL: RUNS flows each way between the
# host and a guest of KERNEL on transport T, recorded as SUITE T-tx/-rx
transport_runs() {
	local suite=$1 t=$2 variant=$3 kernel=$4 dir flag len='' r bps vals spec gcpu

	[ "$t" = tap-1M ] && len="-l 1M"
	for dir in tx rx; do
		flag=
		[ "$dir" = rx ] && flag=-R
		vals=() gcpu=()
		for r in $(seq 1 "$runs"); do
			say "$t $variant $dir run $r/$runs"
			netns_fresh
			spec=$(transport_host "${t%-1M}")
			ip netns exec "$ns" iperf3 -s -1 -B 198.18.2.1 >/dev/null 2>&1 &
			pids+=($!)
			sleep 0.5
			guest_bg "$t-$r" "$kernel" $((secs + 60)) \
				"ip addr add 198.18.2.2/24 dev vec0 && ip link set vec0 up &&
				 $(flow_client "iperf3 -c 198.18.2.1 -t $secs $flag $len -J >result.json")" \
				-a "vec0:$spec"
			flow_cpu "$work/$t-$r" "${pids[-1]}" "$t-$r"
			wait "${pids[-1]}" || true
			bps=$(bps_of "$work/$t-$r/result.json")
			vals+=("$bps")
			gcpu+=("$(per_gbit "${flow_used[0]}" "$bps")")
		done
		record "$suite" "$t-$dir" "$variant" bit/s \
			"$(printf '%s\n' "${vals[@]}" | median)" "" "${vals[*]}" \
			"$(median_of "${gcpu[@]}")"
	done
}

bench_transports() {
	local t

	[ -x "$baseline" ] || die "no $baseline (run 'make baseline')"
	# tap-1M: tap again with 1 MiB reads and writes (see the header)
	for t in ${TRANSPORTS:-tap tap-1M raw hybrid}; do
		case "$t" in
		tap|tap-1M|raw|hybrid) ;;
		*) die "TRANSPORTS: no case '$t' (tap, tap-1M, raw, hybrid)" ;;
		esac
		transport_runs transports "$t" baseline "$baseline"
		transport_runs transports "$t" ours "$ours"
	done
}

# --- kernels: both drivers on each kernel series, in one run -----------
# tap both ways with 1 MiB reads, the bundled driver and ours, on 6.12 and
# on 7.3.  The bundled driver is built without SMP: with SMP it takes a
# lock inside a queue tap never allocates when the device comes up.
bench_kernels() {
	local k v kernel

	for k in 6.12 7.3; do
		for v in bundled ours; do
			kernel=$build/kernel-$k/vmlinux
			[ "$v" = bundled ] && kernel=$build/baseline-$k/vmlinux
			[ -x "$kernel" ] || die "no $kernel (make baseline other-kernel, or KERNEL=$k)"
			transport_runs kernels tap-1M "$v-$k" "$kernel"
		done
	done
}

# --- gre, l2tpv3, bess: guest to guest, ours and the bundled driver ------
# gre and l2tpv3: two guests tunnel to each other between two addresses
# of the namespace's loopback; bess: both guests on vecswitch
# --seqpacket.  The pair runs TCP through that.
bench_tunnels() {
	local t variant kernel r vals a b gcpu scpu sw

	[ -x "$baseline" ] || die "no $baseline (run 'make baseline')"
	for t in gre l2tpv3 bess; do
		case "$t" in
		bess)
			# both guests on vecswitch --seqpacket
			a="transport=bess,dst=$work/sp.sock,src=$work/a.sock"
			b="transport=bess,dst=$work/sp.sock,src=$work/b.sock" ;;
		gre)
			a="transport=gre,src=198.18.30.1,dst=198.18.30.2"
			b="transport=gre,src=198.18.30.2,dst=198.18.30.1" ;;
		l2tpv3)
			a="transport=l2tpv3,udp=1,src=198.18.30.1,dst=198.18.30.2,srcport=1701,dstport=1702,rx_session=1,tx_session=2"
			b="transport=l2tpv3,udp=1,src=198.18.30.2,dst=198.18.30.1,srcport=1702,dstport=1701,rx_session=2,tx_session=1" ;;
		esac
		for variant in baseline ours; do
			kernel=$ours
			[ "$variant" = baseline ] && kernel=$baseline
			vals=() gcpu=() scpu=()
			for r in $(seq 1 "$runs"); do
				say "$t $variant guest to guest run $r/$runs"
				netns_fresh
				rm -rf "${work:?}"/*
				ip -n "$ns" addr add 198.18.30.1/32 dev lo
				ip -n "$ns" addr add 198.18.30.2/32 dev lo
				sw=
				if [ "$t" = bess ]; then
					ip netns exec "$ns" "$vecswitch" --seqpacket "$work/sp.sock" \
						2>"$work/switch.log" &
					sw=$!
					pids+=("$sw")
					for _ in $(seq 50); do [ -S "$work/sp.sock" ] && break; sleep 0.1; done
				fi
				pair_switch=$sw pair_run "$kernel" 198.18.31 "$a,mtu=1400" "$b,mtu=1400"
				[ -z "$sw" ] || kill "$sw" 2>/dev/null || true
				vals+=("$pair_bps") gcpu+=("$pair_gcpu") scpu+=("$pair_scpu")
			done
			record transports "$t-g2g" "$variant" bit/s \
				"$(printf '%s\n' "${vals[@]}" | median)" "" "${vals[*]}" \
				"$(median_of "${gcpu[@]}")" "$(median_of "${scpu[@]}")"
		done
	done
}

# --- a pair of guests through vecswitch, optionally with idle guests -----
# pair_once DEPTH IDLE [switch flags...]: one run of the pair
# (198.18.1.1 <- 198.18.1.2) with IDLE idle guests attached; sets
# once_bps, once_cpu (the switch's CPU seconds during the flow), once_gcpu
# and once_scpu (CPU seconds per Gbit of every guest, idle ones included,
# and of the switches) and once_rx (the most bytes an idle guest
# received, -1 if one never said)
pair_once() {
	local depth=$1 idle=$2 i sw sws rx pair guests="srv cli"

	shift 2
	[ -x "$vecswitch" ] || die "no $vecswitch (run 'make')"
	pair="transport=unixdgram,path=$work/sw.sock,depth=$depth"
	netns_fresh
	rm -rf "${work:?}"/*
	ip netns exec "$ns" "$vecswitch" --dgram "$work/sw.sock" \
		--ctl "$work/ctl.sock" "$@" 2>"$work/switch.log" &
	sw=$!
	pids+=("$sw")
	for i in $(seq 50); do [ -S "$work/sw.sock" ] && break; sleep 0.1; done
	idle_sock=$work/sw.sock
	sws=$sw
	if [ "$idle_elsewhere" = 1 ]; then
		idle_sock=$work/other.sock
		start_switch "$ns" "$idle_sock"
		sws+=" ${pids[-1]}"
	fi
	for i in $(seq 1 "$idle"); do
		guests+=" idle$i"
		guest_bg "idle$i" "$ours" $((secs + 90)) \
			"ip addr add 198.18.1.$((10 + i))/24 dev vec0 && ip link set vec0 up &&
			 touch up && $idle_wait;
			 cat /sys/class/net/vec0/statistics/rx_bytes >rx_bytes" \
			-a "vec0:transport=unixdgram,path=$idle_sock,depth=$depth"
	done
	# the pair starts once the idle guests have booted: their boot
	# is not what is measured
	for i in $(seq 1 "$idle"); do
		for _ in $(seq 300); do [ -e "$work/idle$i/up" ] && break; sleep 0.1; done
	done
	guest_bg srv "$ours" $((secs + 60)) "$(server_cmd 198.18.1.1 "$work/cli")" \
		-a "vec0:$pair"
	guest_bg cli "$ours" $((secs + 60)) \
		"$(client_cmd 198.18.1.2 198.18.1.1 "$work/srv" "$iperf_flags")" \
		-a "vec0:$pair"
	flow_cpu "$work/cli" "${pids[-1]}" "$guests" "$sws"
	wait "${pids[-1]}" || true
	touch "$work/stop"
	wait "${pids[-2]}" || true
	for i in $(seq 1 "$idle"); do
		wait "${pids[-2 - i]}" || true
	done
	once_rx=0
	for i in $(seq 1 "$idle"); do
		rx=$(cat "$work/idle$i/rx_bytes" 2>/dev/null) || rx=-1
		[[ $rx =~ ^[0-9]+$ ]] || rx=-1
		# -1 (a guest that never reported) sticks
		if [ "$rx" -lt 0 ] || { [ "$once_rx" -ge 0 ] && [ "$rx" -gt "$once_rx" ]; }; then
			once_rx=$rx
		fi
	done
	kill "$sw" 2>/dev/null || true
	wait "$sw" 2>/dev/null || true
	if [ "$idle_elsewhere" = 1 ]; then
		kill "${pids[-3 - idle]}" 2>/dev/null || true
		wait "${pids[-3 - idle]}" 2>/dev/null || true
	fi
	once_bps=$(bps_of "$work/cli/result.json")
	once_cpu=${flow_used[1]}
	once_gcpu=$(per_gbit "${flow_used[0]}" "$once_bps")
	once_scpu=$(per_gbit "${flow_used[1]}" "$once_bps")
}

# pair_record SUITE CASE VARIANT IDLE BPS_LIST CPU_LIST RX_LIST GCPU_LIST
# SCPU_LIST: the medians of a pair's runs, and the most any idle guest
# received (-1 when one of them never said)
# shellcheck disable=SC2086  # the lists split into numbers
pair_record() {
	record "$1" "$2" "$3" bit/s "$(printf '%s\n' $5 | median)" \
		"$(median_of $6)" "$5" "$(median_of $8)" "$(median_of $9)"
	if [ "$4" -gt 0 ]; then
		record "$1" "$2-idle-rx" "$3" bytes \
			"$(printf '%s\n' $7 | sort -n | awk 'NR == 1 { min = $1 } END { print (min < 0 ? min : $1) }')"
	fi
}

# pair_through_switch SUITE CASE VARIANT DEPTH IDLE [switch flags...]
pair_through_switch() {
	local suite=$1 case=$2 variant=$3 depth=$4 idle=$5 r bps_l='' cpu_l='' rx_l=''
	local g_l='' s_l=''

	shift 5
	for r in $(seq 1 "$runs"); do
		say "$case $variant depth=$depth idle=$idle run $r/$runs"
		pair_once "$depth" "$idle" "$@"
		bps_l+=" $once_bps" cpu_l+=" $once_cpu" rx_l+=" $once_rx"
		g_l+=" $once_gcpu" s_l+=" $once_scpu"
	done
	pair_record "$suite" "$case" "$variant" "$idle" "$bps_l" "$cpu_l" "$rx_l" "$g_l" "$s_l"
}

# An idle guest waits for $work/stop (bounded, 120 s) with a timed read
# of a FIFO of its own: a sleep(1) a second would be a fork and exec,
# which in UML costs a measurable share of a host CPU per idle guest.
idle_wait="bash -c 'mkfifo /run/idle && exec 3<>/run/idle &&
	for t in \$(seq 120); do [ -e $work/stop ] && break; read -r -t 1 -u 3 _ || :; done'"

# iperf3 client flags of pair_through_switch: -R for the reverse flow
iperf_flags=
# idle_elsewhere=1: the idle guests attach to a second switch instead
idle_elsewhere=0

# --- guest to guest: vecswitch against what users would pick instead --
# g2g_once VARIANT: one run of the same two guests (depth 128) on
#   bridge     two taps on a Linux bridge (gro=1), the usual host setup
#   vecswitch  vecswitch, every option at its default (headers negotiated,
#              unicast between the two through a shortcut channel)
#   switched   vecswitch --no-shortcut: every frame through the switch
#   plain      vecswitch, the guests with vnet=0 (plain frames)
# The rate goes to $pair_bps, the CPU per Gbit to $pair_gcpu, $pair_scpu.
g2g_once() {
	local sw='' a b t

	netns_fresh
	rm -rf "${work:?}"/*
	case "$1" in
	bridge)
		ip -n "$ns" link add gbr0 type bridge
		for t in 0 1; do
			ip -n "$ns" tuntap add dev gtap$t mode tap
			ip -n "$ns" link set gtap$t master gbr0 up
		done
		ip -n "$ns" link set gbr0 up
		a="transport=tap,ifname=gtap0,gro=1,depth=128"
		b="transport=tap,ifname=gtap1,gro=1,depth=128" ;;
	vecswitch|switched|plain)
		if [ "$1" = switched ]; then
			start_switch "$ns" "$work/sw.sock" --no-shortcut
		else
			start_switch "$ns" "$work/sw.sock"
		fi
		sw=${pids[-1]}
		a="transport=unixdgram,path=$work/sw.sock,depth=128"
		[ "$1" = plain ] && a+=",vnet=0"
		b=$a ;;
	esac
	pair_switch=$sw pair_run "$ours" 198.18.1 "$a" "$b"
	[ -z "$sw" ] || { kill "$sw" 2>/dev/null; wait "$sw" 2>/dev/null; } || true
}

# The variants take turns within each run, so that a host that drifts
# does not favour one of them.
bench_g2g() {
	local c r v key flags
	local -A gbps=() ggcpu=() gscpu=()
	local -A cflags=([tcp-fwd]="" [tcp-fwd-1M]="-l 1M")

	for r in $(seq 1 "$runs"); do
		for c in tcp-fwd tcp-fwd-1M; do
			flags=${cflags[$c]}
			for v in bridge vecswitch switched plain; do
				say "g2g $c $v run $r/$runs"
				pair_flags=$flags g2g_once "$v"
				key="$c $v"
				gbps[$key]+=" $pair_bps" ggcpu[$key]+=" $pair_gcpu"
				gscpu[$key]+=" $pair_scpu"
			done
		done
	done
	for key in "${!gbps[@]}"; do
		read -r c v <<<"$key"
		# shellcheck disable=SC2086  # the lists split into numbers
		record g2g "$c" "$v" bit/s "$(printf '%s\n' ${gbps[$key]} | median)" "" \
			"${gbps[$key]}" "$(median_of ${ggcpu[$key]})" "$(median_of ${gscpu[$key]})"
	done
}

# The idle suite interleaves its cases within each run (0 idle, then 1,
# 2, 4, switch and hub, then the control), so that a host that drifts
# over the minutes a suite takes does not show up as the cost of idle
# guests.
bench_idle() {
	local n r v last key
	local -A ibps=() icpu=() irx=() igcpu=() iscpu=()

	last=${IDLE:-0 1 2 4}
	last=${last##* }
	for r in $(seq 1 "$runs"); do
		for n in ${IDLE:-0 1 2 4}; do
			for v in switch hub; do
				say "idle$n $v run $r/$runs"
				if [ "$v" = hub ]; then
					pair_once 128 "$n" --hub
				else
					pair_once 128 "$n"
				fi
				key="$n $v"
				ibps[$key]+=" $once_bps" icpu[$key]+=" $once_cpu" irx[$key]+=" $once_rx"
				igcpu[$key]+=" $once_gcpu" iscpu[$key]+=" $once_scpu"
			done
		done
		# The control: the same idle guests on a switch of their own,
		# what they cost the pair without the pair's switch knowing of
		# them
		if [ "$last" -gt 0 ]; then
			say "idle$last elsewhere run $r/$runs"
			idle_elsewhere=1
			pair_once 128 "$last"
			idle_elsewhere=0
			key="$last elsewhere"
			ibps[$key]+=" $once_bps" icpu[$key]+=" $once_cpu" irx[$key]+=" $once_rx"
			igcpu[$key]+=" $once_gcpu" iscpu[$key]+=" $once_scpu"
		fi
	done
	for key in "${!ibps[@]}"; do
		echo "$key"
	done | sort -n -k1,1 -k2,2r | while read -r n v; do
		key="$n $v"
		pair_record idle "idle$n" "$v" "$n" "${ibps[$key]}" "${icpu[$key]}" "${irx[$key]}" \
			"${igcpu[$key]}" "${iscpu[$key]}"
	done
}

# start_switch NS SOCK [flags...]: a vecswitch in NS on SOCK, until it is up
start_switch() {
	local n=$1 sock=$2

	shift 2
	ip netns exec "$n" "$vecswitch" --dgram "$sock" "$@" 2>>"$work/switch.log" &
	pids+=($!)
	for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
}

# --- a pair on two hosts joined by VXLAN, against one host ---------------
# Each host (namespace) has a bridge holding a VXLAN device on a veth
# underlay and its switch's tap uplink; both layouts build both hosts and
# use MTU 1450 in the guests, so that only the crossing differs.
vxlan_host() {
	local n=$1 self=$2 other=$3

	ip -n "$n" addr add "$self/24" dev under
	ip -n "$n" link set under up
	ip -n "$n" link add br0 type bridge
	ip -n "$n" link add vx0 type vxlan id 42 dstport 4789 \
		local "$self" remote "$other" dev under
	ip -n "$n" link set vx0 master br0
	ip -n "$n" tuntap add dev vsw0 mode tap
	ip -n "$n" link set vsw0 mtu 1450 master br0
	ip -n "$n" link set vx0 up
	ip -n "$n" link set vsw0 up
	ip -n "$n" link set br0 up
	start_switch "$n" "$work/sw-$n.sock" --tap vsw0
}

bench_vxlan() {
	local layout r vals there gcpu scpu

	for layout in same-host cross-host; do
		vals=() gcpu=() scpu=()
		for r in $(seq 1 "$runs"); do
			say "vxlan $layout run $r/$runs"
			netns_fresh
			netns_fresh "$nsb"
			rm -rf "${work:?}"/*
			ip -n "$ns" link add under type veth peer name under netns "$nsb"
			vxlan_host "$ns" 198.18.40.1 198.18.40.2
			vxlan_host "$nsb" 198.18.40.2 198.18.40.1
			there=$ns
			[ "$layout" = cross-host ] && there=$nsb
			srv_ns=$there pair_switch="${pids[-2]} ${pids[-1]}" pair_run "$ours" 198.18.41 \
				"transport=unixdgram,path=$work/sw-$there.sock,mtu=1450,depth=128" \
				"transport=unixdgram,path=$work/sw-$ns.sock,mtu=1450,depth=128"
			kill "${pids[-3]}" "${pids[-4]}" 2>/dev/null || true
			vals+=("$pair_bps") gcpu+=("$pair_gcpu") scpu+=("$pair_scpu")
		done
		record vxlan g2g-mtu1450 "$layout" bit/s \
			"$(printf '%s\n' "${vals[@]}" | median)" "" "${vals[*]}" \
			"$(median_of "${gcpu[@]}")" "$(median_of "${scpu[@]}")"
	done
}

# --- a pair next to guests that fail -------------------------------------
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
	start_switch "$ns" "$work/sw.sock"
	case "$v" in
	alone|unlinked) load="sleep $((secs + 40))" ;;
	flooded|stopped) load="iperf3 -u -b 2G -l 1400 -c 198.18.1.4 -t $((secs + 40))" ;;
	busy|killed) load="iperf3 -c 198.18.1.4 -t $((secs + 40))" ;;
	esac
	err=/dev/stderr
	[ "$v" = killed ] && err=$work/v2.err
	guest_err=$err guest_bg v2 "$ours" $((secs + 90)) "$(server_cmd 198.18.1.4)" \
		-a "vec0:$sw_opts"
	guest_bg v1 "$ours" $((secs + 90)) \
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

# --- port-to-port forwarding rate, 2 idle ports attached -----------------
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

: >"$out/rate.jsonl"
for s in "${suites[@]}"; do
	case "$s" in
	rate|transports|tunnels|g2g|kernels|idle|vxlan|faults) "bench_$s" ;;
	*) die "unknown suite '$s' (rate, transports, tunnels, g2g, kernels, idle, vxlan, faults)" ;;
	esac
done

/usr/bin/python3 "$top/scripts/bench-report.py" "$raw" "$out"
