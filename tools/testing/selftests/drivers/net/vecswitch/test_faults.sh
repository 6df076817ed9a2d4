#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Faults around a pair that keeps working. Four UML guests on vecswitch:
# a1 -> a2 is the pair measured, v1 and v2 are the victims.
#
#  1. v2's kernel process stopped (SIGSTOP, a consumer that never reads)
#     for 10 s while v1 floods it with UDP: the switch stops sending to v2
#     once it holds half the send buffer (tx_unread), a1 -> a2 keeps
#     flowing, and v2 works again once resumed. Only the kernel process:
#     UML cannot survive its traced user processes being stopped too.
#  2. v2 killed (SIGKILL) in the middle of a TCP transfer from v1: the
#     switch drops its port and MAC, a1 -> a2 keeps flowing.
#  3. The switch's socket file deleted under the running guests: the
#     connections hold, a1 still reaches a2.
#  4. The switch killed (SIGKILL) and restarted at the same paths: the
#     guests find it again by themselves, without rebooting, within 2 s.
#
# During each fault the test asserts what the switch must guarantee: the
# flow a1 -> a2 never stalls (no second without data) and the frames meant
# for a1 and a2 are neither dropped nor held back on their ports. What the
# flow keeps of its rate is printed here (one short sample, noisy); make
# bench's faults suite measures it properly, as medians against the same
# load without the fault in the same run.

source "$(dirname "$(readlink -f "$0")")/../lib.sh"
require_cmd iperf3 python3
require_vecswitch

# pair_clean: neither a1's nor a2's port dropped or held back a frame
pair_clean() {
	local g c v
	for g in a1 a2; do
		for c in tx_queue_full tx_unread tx_errors; do
			v=$(port_stat "$g" "$c")
			[ "$v" = 0 ] || { echo "$g $c=$v"; return 1; }
		done
	done
}
# measure NAME SECONDS: a1 -> a2 for that long
measure() {
	local bps min why
	exec_in a1 iperf3 -c "${ip[a2]}" -t "$2" -J >"$TEST_TMP/$1.json"
	check_err $? "iperf3 a1 -> a2 failed during $1"
	bps=$(iperf_bps "$TEST_TMP/$1.json")
	min=$(iperf_min "$TEST_TMP/$1.json")
	if [ -z "${base:-}" ]; then
		base=$bps
		echo "# a1 -> a2 alone: $((bps / 1000000)) Mbit/s"
		return
	fi
	echo "# a1 -> a2 during $1: $((bps / 1000000)) Mbit/s," \
		"$(python3 -c "print(round($bps / max($base, 1), 2))") of before," \
		"slowest second $((min / 1000000)) Mbit/s"
	[ "$min" -gt 0 ]
	check_err $? "a1 -> a2 stalled for a second during $1"
	why=$(pair_clean)
	check_err $? "the pair's ports lost frames during $1: $why"
}

ns=$(netns_add faults)
sock=$TEST_TMP/switch.sock
guests=(a1 a2 v1 v2)
declare -A ip=([a1]=198.18.8.1 [a2]=198.18.8.2 [v1]=198.18.8.3 [v2]=198.18.8.4)

start_switch "$ns" --dgram "$sock" --ctl "$TEST_TMP/ctl"
check_err $? "vecswitch did not start: $(tail -n 3 "$TEST_TMP/switch.log")"
for g in "${guests[@]}"; do
	agent "$ns" vsw "$g" -a \
		vec0:"transport=unixdgram,path=$sock,local=$TEST_TMP/$g.sock,depth=128"
done
guests_up "faults around a working pair" "${guests[@]}"
for g in a2 v2; do
	reach_guest "${g/2/1}" "$g"
	exec_in "$g" iperf3 -s -D >/dev/null
done
measure base 3

# 1. v2 stopped for 10 s while v1 floods it
exec_in v1 iperf3 -u -b 2G -l 1400 -c "${ip[v2]}" -t 14 >/dev/null 2>&1 &
flood=$!
sleep 1
kill -STOP "$(cat "$TEST_TMP/v2/pgid")"
measure stopped 8
sleep 1
unread=$(port_stat v2 tx_unread)
kill -CONT "$(cat "$TEST_TMP/v2/pgid")"
echo "# v2 stopped: $unread frames for it dropped as unread," \
	"$(port_stat v2 tx_queue_full) as queue full"
[ "$unread" -gt 0 ]
check_err $? "the switch never stopped sending to the stopped guest"
wait "$flood"
exec_in v1 sh -c "for i in \$(seq 1 20); do ping -c 1 -W 1 ${ip[v2]} >/dev/null && exit 0; done; exit 1"
check_err $? "v2 did not work again after it was resumed"
exec_in v1 iperf3 -c "${ip[v2]}" -t 2 >/dev/null
check_err $? "v2 did not take a TCP transfer after it was resumed"

# 2. v2 killed in the middle of a TCP transfer
# (iperf3 would wait long for the dead server's results: bounded)
exec_in v1 timeout 12 iperf3 -c "${ip[v2]}" -t 10 >/dev/null 2>&1 &
xfer=$!
sleep 2
removed0=$(ctl stats --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["switch"]["ports_removed"])')
kill -KILL -- "-$(cat "$TEST_TMP/v2/pgid")"
measure sigkill 4
wait "$xfer"
for _ in $(seq 50); do [ "$(port_stat v2 rx_frames)" = gone ] && break; sleep 0.1; done
[ "$(port_stat v2 rx_frames)" = gone ]
check_err $? "the killed guest's port is still there"
removed=$(ctl stats --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["switch"]["ports_removed"])')
echo "# v2 killed: $((removed - removed0)) port(s) removed"

# 3. the switch's socket file deleted under the running guests
rm -f -- "$sock"
measure unlinked 4
exec_in a1 ping -c 3 -W 2 "${ip[a2]}" >/dev/null
check_err $? "a1 lost a2 after the switch's socket file was deleted"

# 4. the switch killed and restarted at the same path
kill -KILL "$SWITCH_PID"
wait "$SWITCH_PID" 2>/dev/null
rm -f -- "$TEST_TMP/ctl"
start_switch "$ns" --dgram "$sock" --ctl "$TEST_TMP/ctl"
check_err $? "vecswitch did not start again: $(tail -n 3 "$TEST_TMP/switch.log")"
t0=$(date +%s%N)
# each ping waits 0.2 s at most, so that the time says when the path
# came back and not when a lost ping's wait ran out
exec_in a1 sh -c "for i in \$(seq 1 250); do ping -c 1 -W 0.2 ${ip[a2]} >/dev/null && exit 0; done; exit 1"
check_err $? "a1 never reached a2 through the restarted switch"
t1=$(date +%s%N)
echo "# after the restart a1 reached a2 in $(( (t1 - t0) / 1000000 )) ms"
[ $(( (t1 - t0) / 1000000 )) -le 2000 ]
check_err $? "the guests took $(( (t1 - t0) / 1000000 )) ms to find the restarted switch"
measure restarted 3

kill "$SWITCH_PID" && wait "$SWITCH_PID"
check_err $? "vecswitch did not exit cleanly"
! grep -q "runtime error\|ERROR: AddressSanitizer" "$TEST_TMP/switch.log"
check_err $? "sanitizer report: $(grep -m3 "runtime error\|AddressSanitizer" "$TEST_TMP/switch.log")"

log_test "faults: stopped, killed guest; deleted socket; switch restart"
exit "$RET"
