#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What the vecswitch tests with UML guests share; sourced after
# ../../../um/lib.sh, never run. A guest G lives in $TEST_TMP/G, has its address in
# ${ip[G]} and, where the test names it so, its socket at $TEST_TMP/G.sock.
# ctl talks to the switch at $CTL (default $TEST_TMP/ctl).

# shellcheck disable=SC2154  # ip and mac are the sourcing test's
exec_in() { local g=$1; shift; "$VECNET_SRC/scripts/uml-exec" -t 120 "$TEST_TMP/$g" -- "$@"; }
ctl() { env -u LD_PRELOAD "$VECSWITCH" ctl --ctl "${CTL:-$TEST_TMP/ctl}" "$@"; }

# port_stat GUEST COUNTER: that counter of the port named after the guest's
# socket, or "gone" when the switch has no such port
port_stat() {
	ctl stats --json | python3 -c 'import json,sys
s = json.load(sys.stdin)
m = [p[sys.argv[2]] for p in s["ports"] if p["name"] == sys.argv[1]]
print(sum(m) if m else "gone")' "$TEST_TMP/$1.sock" "$2"
}

# boot_guest GUEST NETNS VEC0_OPTIONS: an agent guest, stopped at the end
boot_guest() {
	"$UML_RUN" -k "$VMLINUX" -n "$2" -N "vsw-$1-$$" -t 400 -q -o "$TEST_TMP/$1" \
		-a "vec0:$3" --agent &
	on_exit "$VECNET_SRC/scripts/uml-exec --stop $TEST_TMP/$1"
}

# guests_up NAME GUEST...: vec0 up with ${ip[GUEST]} in each; a guest that
# did not boot ends the test NAME
guests_up() {
	local name=$1 g

	shift
	for g in "$@"; do
		exec_in "$g" sh -c "ip addr add ${ip[$g]}/24 dev vec0 && ip link set vec0 up"
		check_err $? "guest $g did not boot or bring vec0 up"
	done
	[ "$RET" -eq 0 ] || { log_test "$name"; exit "$RET"; }
}

# reach FROM TO: FROM pings TO until it answers, for up to 30 s
reach() {
	exec_in "$1" sh -c "for i in \$(seq 1 30); do ping -c 1 -W 1 ${ip[$2]} >/dev/null && exit 0; done; exit 1"
	check_err $? "$1 never reached $2"
}

# flow_counted FROM TO COUNTERS...: frame counters on a packet socket in
# each guest of COUNTERS (TO among them) count the frames addressed to
# FROM's or TO's MAC (${mac[G]}) while FROM pings TO and runs a 5 s iperf3
# to it (TO's server must be running). TO must count the flow; what the
# others count is left in $TEST_TMP/G.count for flow_seen.
flow_counted() {
	local from=$1 to=$2 g p bps sniffers=()

	shift 2
	for g in "$@"; do
		exec_in "$g" env FRAME_COUNT_READY="$TEST_TMP/$g/ready" \
			python3 "$FRAMES" count vec0 30 "${mac[$from]}" "${mac[$to]}" \
			>"$TEST_TMP/$g.count" &
		sniffers+=($!)
	done
	for g in "$@"; do
		wait_for 30 test -e "$TEST_TMP/$g/ready"
		check_err $? "the frame counter in $g did not start"
	done
	exec_in "$from" ping -c 5 -i 0.2 "${ip[$to]}" >"$TEST_TMP/ping.log"
	check_err $? "ping $from -> $to lost packets: $(tail -n 2 "$TEST_TMP/ping.log")"
	exec_in "$from" iperf3 -c "${ip[$to]}" -t 5 -J >"$TEST_TMP/iperf.json"
	check_err $? "iperf3 $from -> $to failed"
	for p in "${sniffers[@]}"; do
		wait "$p"
	done
	bps=$(python3 -c 'import json,sys; print(int(json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"]))' \
		"$TEST_TMP/iperf.json" 2>/dev/null || echo 0)
	echo "# iperf3 $from -> $to: $((bps / 1000000)) Mbit/s"
	[ "$bps" -gt 0 ]
	check_err $? "iperf3 $from -> $to moved nothing"
	p=$(flow_seen "$to" "$to")
	echo "# $to received $p frames addressed to it"
	[ "$p" -gt 1000 ]
	check_err $? "the frame counter in $to saw only $p frames of the flow"
}

# flow_seen GUEST MAC_OF...: frames GUEST counted addressed to those guests
flow_seen() {
	local g=$1 m n=0 k

	shift
	for k in "$@"; do
		m=$(awk -v k="${mac[$k]}" '$1 == k { print $2 }' "$TEST_TMP/$g.count")
		n=$((n + ${m:-0}))
	done
	echo "$n"
}
