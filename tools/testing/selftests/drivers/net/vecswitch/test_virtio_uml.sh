#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A UML guest on the stock virtio-net driver, attached to vecswitch's
# --vhost-user socket through virtio_uml, beside a guest on this tree's
# vec0 (unixdgram, headers negotiated) on its --dgram socket:
#
#  1. they reach each other, and the virtio guest's port is a vhost-user
#     port that learned its MAC;
#  2. TCP both ways crosses as super-frames: the vhost-user port receives
#     GSO frames from the virtio guest (rx_gso) and sends them on to the
#     vec0 guest's socket straight from guest memory (vhost_direct), and
#     the virtio guest's
#     eth0 receives frames larger than its MTU on average (the switch put
#     the vec0 guest's super-frames into its buffers whole);
#  3. powering the virtio guest off removes its port, its memory mapping
#     and its descriptors, and the switch, run under the sanitizers, stops
#     cleanly without a report.

source "$(dirname "$(readlink -f "$0")")/../lib.sh"
require_cmd python3 iperf3
require_vecswitch
strings "$VMLINUX" | grep -q '^virtio_uml\.device' ||
	{ echo "SKIP: $VMLINUX has no virtio_uml (CONFIG_VIRTIO_UML)"; exit "$ksft_skip"; }

ns=$(netns_add vuml)
declare -A ip=([p]=198.18.14.1 [v]=198.18.14.2)

start_switch "$ns" --dgram "$TEST_TMP/switch.sock" --vhost-user "$TEST_TMP/vhost.sock" \
	--ctl "$TEST_TMP/ctl" -v
check_err $? "vecswitch did not start: $(tail -n 3 "$TEST_TMP/switch.log")"
wait_for 5 test -S "$TEST_TMP/vhost.sock"
own_eventfds=$(eventfds)
agent "$ns" vu p -a "vec0:transport=unixdgram,path=$TEST_TMP/switch.sock,local=$TEST_TMP/p.sock"
agent "$ns" vu v -a "virtio_uml.device=$TEST_TMP/vhost.sock:1"
agents_ready "virtio_uml guest on --vhost-user" p v
exec_in p sh -c "ip addr add ${ip[p]}/24 dev vec0 && ip link set vec0 up"
check_err $? "p could not bring vec0 up"
exec_in v sh -c "ip addr add ${ip[v]}/24 dev eth0 && ip link set eth0 up"
check_err $? "v has no virtio-net eth0"

# 1. reachability, and the port it made
reach_guest v p
reach_guest p v
[ "$(ctl ports --json | python3 -c 'import json,sys
print(sum(1 for p in json.load(sys.stdin)["ports"] if p["type"] == "vhost-user" and p["macs"] == 1))')" = 1 ]
check_err $? "no vhost-user port with one MAC: $(ctl ports)"

# 2. super-frames both ways
exec_in p sh -c "iperf3 -s -1 -D" >/dev/null
exec_in v iperf3 -c "${ip[p]}" -t 2 >/dev/null
check_err $? "iperf3 v -> p failed"
gso=$(vhost_stat rx_gso)
[ "${gso:-0}" -gt 10 ] 2>/dev/null
check_err $? "the vhost-user port took ${gso:-0} super-frames from v's TCP"
direct=$(sw_stat vhost_direct)
[ "${direct:-0}" -gt 10 ] 2>/dev/null
check_err $? "only ${direct:-0} of them went to p's socket straight from v's memory"

exec_in v sh -c "iperf3 -s -1 -D" >/dev/null
before=$(exec_in v cat /sys/class/net/eth0/statistics/rx_bytes /sys/class/net/eth0/statistics/rx_packets)
exec_in p iperf3 -c "${ip[v]}" -t 2 >/dev/null
check_err $? "iperf3 p -> v failed"
after=$(exec_in v cat /sys/class/net/eth0/statistics/rx_bytes /sys/class/net/eth0/statistics/rx_packets)
# shellcheck disable=SC2086  # four numbers
avg=$(echo $before $after | awk '{ n = $4 - $2; print n ? int(($3 - $1) / n) : 0 }')
[ "$avg" -gt 1600 ]
check_err $? "v received $avg bytes a frame: super-frames were cut on the way"
echo "# v took ${gso} super-frames in ($direct sent on from its memory), and received $avg bytes a frame"

# 3. the virtio guest goes, then the switch
grep -q "/dev/shm/" "/proc/$SWITCH_PID/maps"
check_err $? "the switch does not map the guest's memory file"
"$VECNET_SRC/scripts/uml-exec" --stop "$TEST_TMP/v"
wait_for 30 vhost_gone
check_err $? "the vhost-user port outlived its guest: $(ctl ports)"
# and with it the mapping of its memory (UML's file in /dev/shm) and the
# kick eventfds it handed over
! grep -q "/dev/shm/" "/proc/$SWITCH_PID/maps"
check_err $? "the switch still maps the guest's memory: $(grep /dev/shm/ "/proc/$SWITCH_PID/maps")"
[ "$(eventfds)" -eq "$own_eventfds" ]
check_err $? "the switch still holds $(( $(eventfds) - own_eventfds )) of the guest's eventfds"
stop_switch
check_err $? "the switch did not stop cleanly"
! grep -q "runtime error\|ERROR: AddressSanitizer\|LeakSanitizer" "$TEST_TMP/switch.log"
check_err $? "sanitizer report: $(grep -m3 "runtime error\|Sanitizer" "$TEST_TMP/switch.log")"

[ "$RET" -eq 0 ] || sed 's/^/# switch: /' "$TEST_TMP/switch.log"
log_test "a virtio_uml guest on --vhost-user"
exit "$RET"
