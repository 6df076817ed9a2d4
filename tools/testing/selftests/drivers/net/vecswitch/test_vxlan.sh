#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guests on two hosts, one Ethernet segment. Each "host" is a network
# namespace of this test with its own vecswitch, whose --tap uplink is a
# port of a Linux bridge that also holds a VXLAN device (the kernel's);
# the hosts are joined by a veth pair, the underlay. Two UML guests on
# each host. a1 (host A) pings and runs a 5 s iperf3 to b1 (host B);
# a frame counter in a2 and b2 must count no frame of that flow. a2 keeps
# MTU 1500, the others use the path's 1450: a2's full-sized frames to b1
# must not cross and must be counted on host A's uplink (tx_oversize).
# Then host B's switch stops: only B's guests lose the segment, a1 still
# reaches a2.

source "$(dirname "$(readlink -f "$0")")/../lib.sh"
require_cmd iperf3 python3
require_vecswitch
ip link add "vxchk$$" type vxlan id 1 dstport 4789 2>/dev/null ||
	{ echo "SKIP: no VXLAN in the host kernel"; exit "$ksft_skip"; }
ip link del "vxchk$$"

declare -A mac=([a1]=02:76:65:00:d0:01 [a2]=02:76:65:00:d0:02
		[b1]=02:76:65:00:d0:03 [b2]=02:76:65:00:d0:04)
declare -A ip=([a1]=198.18.21.1 [a2]=198.18.21.2 [b1]=198.18.21.3 [b2]=198.18.21.4)
declare -A hostof=([a1]=A [a2]=A [b1]=B [b2]=B)
declare -A under=([A]=198.18.20.1 [B]=198.18.20.2)
declare -A nsof swpid
# VXLAN over IPv4 takes 50 bytes of the underlay's 1500
mtu=1450

nsof[A]=$(netns_add hostA)
nsof[B]=$(netns_add hostB)
ip -n "${nsof[A]}" link add under type veth peer name under netns "${nsof[B]}"
for h in A B; do
	n=${nsof[$h]}
	other=$([ "$h" = A ] && echo B || echo A)
	ip -n "$n" addr add "${under[$h]}/24" dev under &&
	ip -n "$n" link set under up &&
	ip -n "$n" link add br0 type bridge &&
	ip -n "$n" link add vx0 type vxlan id 42 dstport 4789 \
		local "${under[$h]}" remote "${under[$other]}" dev under &&
	ip -n "$n" link set vx0 master br0 &&
	ip -n "$n" link set vx0 up &&
	ip -n "$n" link set br0 up
	check_err $? "cannot build host $h's bridge and VXLAN device"
	SWITCH_LOG=$TEST_TMP/switch$h.log start_switch "$n" --dgram "$TEST_TMP/sw$h.sock" \
		--tap vsw0 --ctl "$TEST_TMP/ctl$h"
	swpid[$h]=$SWITCH_PID
	check_err $? "host $h's vecswitch did not start: $(tail -n 3 "$TEST_TMP/switch$h.log")"
	ip -n "$n" link set vsw0 mtu "$mtu" master br0 && ip -n "$n" link set vsw0 up
	check_err $? "cannot put host $h's uplink on its bridge"
done
[ "$RET" -eq 0 ] || { log_test "guests on two hosts over VXLAN"; exit "$RET"; }

for g in a1 a2 b1 b2; do
	h=${hostof[$g]}
	# a2 keeps the default MTU, too large for the path (see below)
	opt=",mtu=$mtu"
	[ "$g" = a2 ] && opt=
	agent "${nsof[$h]}" vsw "$g" -a \
		vec0:"transport=unixdgram,path=$TEST_TMP/sw$h.sock,mac=${mac[$g]}$opt"
done
guests_up "guests on two hosts over VXLAN" a1 a2 b1 b2
for g in a2 b1 b2; do
	reach_guest a1 "$g"
done
exec_in b1 iperf3 -s -D >/dev/null

# across hosts: a2 (a1's neighbour) and b2 (b1's) see nothing of it
flow_counted a1 b1 b1 a2 b2
for g in a2 b2; do
	n=$(flow_seen "$g" a1 b1)
	echo "# $g (host ${hostof[$g]}): $n frames of the flow"
	[ "$n" -eq 0 ]
	check_err $? "$g received $n frames addressed to a1 or b1"
done

# a2, whose MTU (1500) is too large for the VXLAN path: its full-sized
# frames are counted on its host's uplink, not lost unseen
uplink_oversize() {
	CTL=$TEST_TMP/ctl$1 ctl stats --json | python3 -c 'import json,sys
print(sum(p["tx_oversize"] for p in json.load(sys.stdin)["ports"] if p["type"] == "tap"))'
}
[ "$(uplink_oversize A)" = 0 ] && [ "$(uplink_oversize B)" = 0 ]
check_err $? "frames of guests at MTU $mtu did not fit the uplink"
! exec_in a2 ping -c 2 -W 1 -s 1472 -M "do" "${ip[b1]}" >/dev/null
check_err $? "a full-sized frame crossed a path of MTU $mtu"
over=$(uplink_oversize A)
echo "# host A's uplink counted $over frames over its MTU"
[ "$over" -ge 2 ]
check_err $? "host A's uplink counted $over frames over its MTU, 2 were sent"

# host B's switch stops: B's guests are cut off, A's pair is not
kill "${swpid[B]}"
wait "${swpid[B]}"
check_err $? "host B's switch did not exit cleanly"
exec_in a1 ping -c 3 -W 2 "${ip[a2]}" >/dev/null
check_err $? "a1 lost a2 when host B's switch stopped"
! exec_in a1 ping -c 2 -W 1 "${ip[b1]}" >/dev/null
check_err $? "a1 still reached b1 with host B's switch stopped"

for h in A B; do
	! grep -q "runtime error\|ERROR: AddressSanitizer" "$TEST_TMP/switch$h.log"
	check_err $? "sanitizer report on host $h: $(grep -m3 "runtime error\|AddressSanitizer" "$TEST_TMP/switch$h.log")"
done
log_test "guests on two hosts over VXLAN: one segment, unicast only where it belongs"
exit "$RET"
