#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Four UML guests on vecswitch in a namespace of this test: a and b
# exchange pings and a 5 s iperf3 TCP flow while two idle guests listen.
# A frame counter on a packet socket in b and in each idle guest counts
# the frames addressed to a's or b's MAC: thousands in b, none at all in
# the idle guests, whose rx counters move by a few broadcasts at most.

source "$(dirname "$(readlink -f "$0")")/../lib.sh"
require_cmd iperf3 python3
require_vecswitch


ns=$(netns_add guests)
sock=$TEST_TMP/switch.sock
CTL=$TEST_TMP/switch.ctl
guests=(a b i1 i2)
declare -A mac=([a]=02:76:65:00:b0:01 [b]=02:76:65:00:b0:02
		[i1]=02:76:65:00:b0:03 [i2]=02:76:65:00:b0:04)
declare -A ip=([a]=198.18.5.1 [b]=198.18.5.2 [i1]=198.18.5.3 [i2]=198.18.5.4)

start_switch "$ns" --dgram "$sock" --ctl "$CTL"
check_err $? "vecswitch did not start: $(tail -n 3 "$TEST_TMP/switch.log")"

for g in "${guests[@]}"; do
	agent "$ns" vsw "$g" -a vec0:"transport=unixdgram,path=$sock,mac=${mac[$g]},depth=128"
done
guests_up "four guests on vecswitch" "${guests[@]}"
reach_guest a b
exec_in b iperf3 -s -1 -D >/dev/null
check_err $? "no iperf3 server in b"

# rx_packets of each idle guest, before
declare -A rx0
for g in i1 i2; do
	rx0[$g]=$(exec_in "$g" cat /sys/class/net/vec0/statistics/rx_packets)
done

flow_counted a b b i1 i2
for g in i1 i2; do
	n=$(flow_seen "$g" a b)
	rx1=$(exec_in "$g" cat /sys/class/net/vec0/statistics/rx_packets)
	echo "# idle $g: $n frames of the flow, rx_packets moved by $((rx1 - rx0[$g]))"
	[ "$n" -eq 0 ]
	check_err $? "idle guest $g received $n frames addressed to a or b"
	[ $((rx1 - rx0[$g])) -lt 50 ]
	check_err $? "idle guest $g's rx_packets moved by $((rx1 - rx0[$g]))"
done
ctl fdb 2>/dev/null | sed 's/^/#   /'

log_test "four guests on vecswitch: ping, 5 s iperf3, idle guests see none of it"
exit "$RET"
