#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What the suites of make bench share: recording results, network
# namespaces, CPU accounting, flows between guests and their medians, the
# transport helpers (transports and kernels) and the pair through the
# switch (g2g and idle).  Sourced by scripts/bench.sh after the tests'
# library (drivers/net/lib.sh: say, die, start_switch, iperf_bps and the
# clean-up on exit); bench.sh sets the globals these use (out, raw, ns,
# nsb, work, pids, ours, runs, secs ...).
# shellcheck shell=bash
# shellcheck disable=SC2154,SC2034,SC2120,SC2119  # globals and results are bench.sh's and the suites'

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

# bench_guest NAME KERNEL TIMEOUT CMD [uml-run args...]: boot in the background
# (uml-run's complaints go to $guest_err where set: a guest that is
# meant to die).  Appended, never truncated: /dev/stderr opened with
# O_TRUNC would empty this script's own log when that is a file.
bench_guest() {
	local name=$1 kernel=$2 timeout=$3 cmd=$4

	shift 4
	# a run before this one may have left its flow marks (flow_cpu)
	rm -f "$work/$name/running" "$work/$name/done" "$work/$name/sampled"
	"$top/scripts/uml-run" -k "$kernel" -n "${guest_ns:-$ns}" -N "$name" -t "$timeout" -q \
		-o "$work/$name" "$@" -- sh -c "$cmd" 2>>"${guest_err:-/dev/stderr}" &
	pids+=($!)
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

# The guest-side script of a pair: the server guest marks itself ready,
# the client waits for that (bounded), marks its flow's start and end
# (flow_cpu) and writes result.json.  With CLIENT_DIR, the server stays
# up until the flow's CPU time has been taken.  $guest_setup, where set,
# runs in both once vec0 is up (ethtool settings), and its output is kept
# in setup.log; $server_after, where set, runs in the server once the
# flow is over, its output in after.log.  The flow is iperf3's, or with
# $pair_rr set vswrr's round trips (its flags in the client's FLAGS).
# server_cmd ADDR [CLIENT_DIR]
server_cmd() {
	local after='' prog="iperf3 -s -1 >/dev/null 2>&1"

	[ -z "${pair_rr:-}" ] || prog="$vswrr server -1 $pair_rr_server >/dev/null 2>&1"
	[ -z "${server_after:-}" ] || after="; { $server_after; } >after.log 2>&1"
	echo "ip addr add $1/24 dev ${pair_dev:-vec0} && ip link set ${pair_dev:-vec0} up && $(setup_cmd) &&
	      { $prog & touch ready; wait; }$after${2:+; $(flow_hold "$2")}"
}
setup_cmd() { echo "{ ${guest_setup:-true}; } >setup.log 2>&1"; }
# client_cmd ADDR SERVER SERVER_DIR FLAGS
client_cmd() {
	local prog="iperf3 -c $2 -t $secs $4 -J >result.json"

	[ -z "${pair_rr:-}" ] || prog="$vswrr client -H $2 -t $secs $4 -j >result.json"
	echo "ip addr add $1/24 dev ${pair_dev:-vec0} && ip link set ${pair_dev:-vec0} up && $(setup_cmd) &&
	      for i in \$(seq 300); do [ -e $3/ready ] && break; sleep 0.1; done &&
	      ping -c 1 -W 2 $2 >/dev/null;
	      $(flow_client "$prog")"
}

# pair_run KERNEL NET SERVER_VEC0 CLIENT_VEC0: guests srv (NET.1; in
# $srv_ns when set) and cli (NET.2) boot and run one iperf3 flow (over
# $pair_dev, vec0 by default; a VEC0 of virtio_uml.device=... is passed
# as it is, for eth0); its rate
# goes to $pair_bps, and the CPU seconds per Gbit both guests used, and
# the switch whose PID is $pair_switch if set, to $pair_gcpu and $pair_scpu
pair_run() {
	local sa="vec0:$3" ca="vec0:$4"

	[[ $3 != virtio_uml.* ]] || sa=$3
	[[ $4 != virtio_uml.* ]] || ca=$4
	guest_ns=${srv_ns:-} bench_guest srv "$1" $((secs + 60)) "$(server_cmd "$2.1" "$work/cli")" \
		-a "$sa"
	bench_guest cli "$1" $((secs + 60)) \
		"$(client_cmd "$2.2" "$2.1" "$work/srv" "${pair_flags:-}")" -a "$ca"
	flow_cpu "$work/cli" "${pids[-1]}" "srv cli" "${pair_switch:-}"
	wait "${pids[-1]}" || true
	wait "${pids[-2]}" || true
	pair_bps=0
	[ -n "${pair_rr:-}" ] || pair_bps=$(iperf_bps "$work/cli/result.json")
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
			bench_guest "$t-$r" "$kernel" $((secs + 60)) \
				"ip addr add 198.18.2.2/24 dev vec0 && ip link set vec0 up &&
				 $(flow_client "iperf3 -c 198.18.2.1 -t $secs $flag $len -J >result.json")" \
				-a "vec0:$spec"
			flow_cpu "$work/$t-$r" "${pids[-1]}" "$t-$r"
			wait "${pids[-1]}" || true
			bps=$(iperf_bps "$work/$t-$r/result.json")
			vals+=("$bps")
			gcpu+=("$(per_gbit "${flow_used[0]}" "$bps")")
		done
		record "$suite" "$t-$dir" "$variant" bit/s \
			"$(printf '%s\n' "${vals[@]}" | median)" "" "${vals[*]}" \
			"$(median_of "${gcpu[@]}")"
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
	bench_switch "$ns" --dgram "$work/sw.sock" --ctl "$work/ctl.sock" "$@"
	sw=${pids[-1]}
	idle_sock=$work/sw.sock
	sws=$sw
	if [ "$idle_elsewhere" = 1 ]; then
		idle_sock=$work/other.sock
		bench_switch "$ns" --dgram "$idle_sock"
		sws+=" ${pids[-1]}"
	fi
	for i in $(seq 1 "$idle"); do
		guests+=" idle$i"
		bench_guest "idle$i" "$ours" $((secs + 90)) \
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
	bench_guest srv "$ours" $((secs + 60)) "$(server_cmd 198.18.1.1 "$work/cli")" \
		-a "vec0:$pair"
	bench_guest cli "$ours" $((secs + 60)) \
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
	once_bps=$(iperf_bps "$work/cli/result.json")
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

# bench_switch NS ARGS...: start_switch, whose switch joins pids (a
# switch that does not come up leaves its suite's flows at 0)
bench_switch() {
	start_switch "$@" || true
	pids+=("$SWITCH_PID")
}

# plain_switch TOOL: build TOOL (scripts/bench/TOOL.c, the synthetic
# peers of the plain and scale suites) into $build, and start one switch
# with --dgram $work/d.sock and --stream $work/s.sock in a fresh $ns; its
# pid in plain_sw (and pids)
plain_switch() {
	cc -O2 -Wall -Wextra -Werror -o "$build/$1" "$top/scripts/bench/$1.c" ||
		die "$1.c does not build"
	netns_fresh
	rm -rf "${work:?}"/*
	ip netns exec "$ns" "$vecswitch" --dgram "$work/d.sock" --stream "$work/s.sock" 2>/dev/null &
	plain_sw=$!
	pids+=("$plain_sw")
	for _ in $(seq 50); do [ -S "$work/s.sock" ] && break; sleep 0.1; done
}

# --- a fixed CPU budget ----------------------------------------------------
# cpu_cap_enter CPUS: this shell, and whatever it starts until
# cpu_cap_leave, shares a budget of CPUS CPUs a second: a cpu cgroup
# (cgroup v2's cpu.max, else v1's CFS quota).  Only the time charged to
# those processes counts: work the host kernel does in softirq context
# (a bridge forwarding, a tap delivering) may escape the budget.
# Returns 1 where no cpu controller can be used.
cap_dir='' cap_home=''
cpu_cap_enter() {
	local quota=$(($1 * 100000)) root=/sys/fs/cgroup

	cap_dir='' cap_home=''
	if grep -qw cpu "$root/cgroup.controllers" 2>/dev/null; then
		grep -qw cpu "$root/cgroup.subtree_control" ||
			echo +cpu >"$root/cgroup.subtree_control" 2>/dev/null || return 1
		cap_home=$root$(sed -n 's/^0:://p' /proc/self/cgroup)
		cap_dir=$root/vecnet-bench-$$
		mkdir -p "$cap_dir" && echo "$quota 100000" >"$cap_dir/cpu.max" || return 1
	elif [ -w "$root/cpu/cgroup.procs" ]; then
		cap_home=$root/cpu$(sed -n 's/^[0-9]*:cpu[,:].*:\(.*\)$/\1/p; s/^[0-9]*:cpu:\(.*\)$/\1/p' /proc/self/cgroup | head -1)
		cap_dir=$root/cpu/vecnet-bench-$$
		mkdir -p "$cap_dir" && echo 100000 >"$cap_dir/cpu.cfs_period_us" &&
			echo "$quota" >"$cap_dir/cpu.cfs_quota_us" || return 1
	else
		return 1
	fi
	echo "$BASHPID" >"$cap_dir/cgroup.procs"
}

# cpu_cap_leave: the shell back where it was; the group goes once empty
cpu_cap_leave() {
	local i

	[ -n "$cap_dir" ] || return 0
	echo "$BASHPID" >"$cap_home/cgroup.procs" 2>/dev/null || true
	for i in $(seq 50); do
		rmdir "$cap_dir" 2>/dev/null && break
		sleep 0.1
	done
	cap_dir=''
}

# --- the same two guests on the paths a user could pick ------------------
# g2g_once VARIANT: one run of the same two guests (depth 128) on
#   bridge     two taps on a Linux bridge (gro=1), the usual host setup
#   vecswitch  vecswitch, every option at its default (headers negotiated,
#              unicast between the two through a shortcut channel)
#   switched   vecswitch --no-shortcut: every frame through the switch
#   plain      vecswitch, the guests with vnet=0 (plain frames)
#   hub        vecswitch --hub (no headers, every frame to every port)
#   vecswitch-big  the same with super-frames up to 256 KiB (gso_max=,
#              gso_max_size and gso_ipv4_max_size raised in the guests)
#   direct     no switch: each guest's vec0 sends to the other's socket
#   direct-big the same with super-frames up to 256 KiB
#   virtio     vecswitch --vhost-user, the guests on the stock virtio-net
#              driver through virtio_uml (eth0) instead of vec0
# With $pair_queues set, each guest's vec0 has that many queues (the
# bridge's taps are multiqueue ones either way).
# The rate goes to $pair_bps, the CPU per Gbit to $pair_gcpu, $pair_scpu.
g2g_once() {
	local sw='' a b t guest_setup=${guest_setup:-}

	pair_dev=vec0
	netns_fresh
	rm -rf "${work:?}"/*
	case "$1" in
	bridge)
		ip -n "$ns" link add gbr0 type bridge
		for t in 0 1; do
			ip -n "$ns" tuntap add dev gtap$t mode tap multi_queue
			ip -n "$ns" link set gtap$t master gbr0 up
		done
		ip -n "$ns" link set gbr0 up
		a="transport=tap,ifname=gtap0,gro=1,depth=128"
		b="transport=tap,ifname=gtap1,gro=1,depth=128" ;;
	vecswitch|vecswitch-big|switched|plain|hub)
		case $1 in
		switched) bench_switch "$ns" --dgram "$work/sw.sock" --no-shortcut ;;
		hub) bench_switch "$ns" --dgram "$work/sw.sock" --hub ;;
		*) bench_switch "$ns" --dgram "$work/sw.sock" ;;
		esac
		sw=${pids[-1]}
		a="transport=unixdgram,path=$work/sw.sock,depth=128"
		[ "$1" = plain ] && a+=",vnet=0"
		if [ "$1" = vecswitch-big ]; then
			a+=",gso_max=262144"
			guest_setup="python3 $gso_size vec0 262144; ${guest_setup:-true}"
		fi
		b=$a ;;
	direct|direct-big)
		a="transport=unixdgram,local=$work/a.sock,path=$work/b.sock,depth=128"
		b="transport=unixdgram,local=$work/b.sock,path=$work/a.sock,depth=128"
		if [ "$1" = direct-big ]; then
			a+=",gso_max=262144" b+=",gso_max=262144"
			guest_setup="python3 $gso_size vec0 262144; ${guest_setup:-true}"
		fi ;;
	virtio)
		bench_switch "$ns" --vhost-user "$work/vh.sock"
		sw=${pids[-1]}
		a="virtio_uml.device=$work/vh.sock:1"
		b=$a
		pair_dev=eth0 ;;
	esac
	if [ -n "${pair_queues:-}" ]; then
		a+=",queues=$pair_queues" b+=",queues=$pair_queues"
	fi
	pair_switch=$sw pair_run "${g2g_kernel:-$ours}" 198.18.1 "$a" "$b"
	[ -z "$sw" ] || { kill "$sw" 2>/dev/null; wait "$sw" 2>/dev/null; } || true
}

# g2g_variant VARIANT: g2g_once, where the suffix "-rx0" turns receive
# coalescing off in both guests (ethtool -C rx-usecs 0 before the flow)
# and "-base" boots both guests on G2G_BASE's kernel instead of ours
# ("-base" last where both are given: vecswitch-rx0-base)
g2g_variant() {
	if [[ $1 == *-base ]]; then
		g2g_kernel=$G2G_BASE g2g_variant "${1%-base}"
	elif [[ $1 == *-rx0 ]]; then
		guest_setup="ethtool -C vec0 rx-usecs 0${guest_setup:+; $guest_setup}" \
			g2g_once "${1%-rx0}"
	else
		g2g_once "$1"
	fi
}
