#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Virtio-net headers negotiated, and given up, as the switch changes under
# running guests: p and r with unixdgram's default (vnet=auto), q with
# vnet=1, all on one socket.
#
#  1. The switch starts as --hub, which does not negotiate: p and r talk
#     in plain frames, q says it needs headers and has no carrier.
#  2. The switch restarts at the same path as a learning switch: all three
#     negotiate by themselves (ports shown as vnet), q's carrier comes on,
#     q reaches p, and p's TCP to r takes the shortcut channel the switch
#     hands them (which carries headers only).
#  3. It restarts as --hub again: p and r close their channels, fall back
#     to plain frames and still talk; q loses its carrier again.

source "$(dirname "$(readlink -f "$0")")/../lib.sh"
require_cmd python3 ethtool
require_vecswitch


ns=$(netns_add nego)
sock=$TEST_TMP/switch.sock
declare -A ip=([p]=198.18.12.1 [r]=198.18.12.2 [q]=198.18.12.3)
declare -A extra=([p]="" [r]="" [q]=",vnet=1")

# shellcheck disable=SC2317  # run by wait_for
carrier_is() { [ "$(exec_in "$1" cat /sys/class/net/vec0/carrier)" = "$2" ]; }
# shellcheck disable=SC2317  # run by wait_for
types_are() { [ "$(port_types)" = "$1" ]; }
port_types() {
	ctl ports --json | python3 -c 'import json,sys
print(" ".join(sorted(p["type"] for p in json.load(sys.stdin)["ports"])))'
}

# 1. a hub
start_switch "$ns" --dgram "$sock" --ctl "$TEST_TMP/ctl" --hub
check_err $? "vecswitch did not start: $(tail -n 3 "$TEST_TMP/switch.log")"
for g in p r q; do
	agent "$ns" vsw "$g" -a \
		vec0:"transport=unixdgram,path=$sock,local=$TEST_TMP/$g.sock${extra[$g]}"
done
guests_up "headers negotiated as the switch changes" p r q
reach_guest p r
wait_for 10 console_has q "the peer does not negotiate virtio-net headers, which vnet=1 requires: carrier off"
check_err $? "q (vnet=1) did not say that the hub does not negotiate"
carrier_is q 0
check_err $? "q (vnet=1) has a carrier on a hub"
console_has p "the peer does not negotiate virtio-net headers: plain frames"
check_err $? "p did not say it fell back to plain frames"
[ "$(port_types)" = "dgram dgram dgram" ]
check_err $? "the hub's ports are '$(port_types)'"

# 2. a learning switch in its place
stop_switch
start_switch "$ns" --dgram "$sock" --ctl "$TEST_TMP/ctl"
check_err $? "vecswitch did not restart: $(tail -n 3 "$TEST_TMP/switch.log")"
wait_for 15 types_are "vnet vnet vnet"
check_err $? "the switch's ports are '$(port_types)', not three vnet"
wait_for 15 carrier_is q 1
check_err $? "q (vnet=1) has no carrier with a switch that negotiates"
console_has q "virtio-net headers agreed with the peer"
check_err $? "q did not say the headers were agreed"
reach_guest q p
reach_guest p r
exec_in r sh -c "iperf3 -s -1 -D" >/dev/null
exec_in p iperf3 -c "${ip[r]}" -t 2 >/dev/null
check_err $? "iperf3 p -> r failed"
chan=$(exec_in r ethtool -S vec0 | awk '$1 == "rx_chan_frames:" { print $2 }')
[ "${chan:-0}" -gt 10 ]
check_err $? "r read only ${chan:-0} frames of p's flow from a channel"

# 3. a hub again
stop_switch
start_switch "$ns" --dgram "$sock" --ctl "$TEST_TMP/ctl" --hub
check_err $? "vecswitch did not restart as a hub: $(tail -n 3 "$TEST_TMP/switch.log")"
wait_for 15 types_are "dgram dgram dgram"
check_err $? "the hub's ports are '$(port_types)'"
reach_guest p r
for g in p r; do
	closed=$(exec_in "$g" ethtool -S vec0 | awk '$1 == "chan_closed:" { print $2 }')
	[ "${closed:-0}" -ge 1 ]
	check_err $? "$g kept its channel when the switch restarted as a hub"
done
wait_for 15 carrier_is q 0
check_err $? "q (vnet=1) kept its carrier on a hub"
for g in p r q; do
	bad=$(exec_in "$g" ethtool -S vec0 | awk '$1 == "rx_encaps_errors:" { print $2 }')
	[ "${bad:-x}" = 0 ]
	check_err $? "$g counted ${bad:-?} frames with a header it could not use"
done

stop_switch
check_err $? "vecswitch did not exit cleanly"
! grep -q "runtime error\|ERROR: AddressSanitizer" "$TEST_TMP/switch.log"
check_err $? "sanitizer report: $(grep -m3 "runtime error\|AddressSanitizer" "$TEST_TMP/switch.log")"

log_test "headers negotiated as the switch changes: plain on a hub, agreed on a switch, given up again"
exit "$RET"
