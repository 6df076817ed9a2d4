#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vecswitch's software segmentation against the kernel's own: gso_cmp.py
# sends the same frames with virtio-net headers to the kernel (a packet
# socket on a veth end with every offload off) and to vecswitch's --vnet
# socket, then to a port that negotiated headers on its --dgram socket,
# and compares what comes out, frame by frame. Malformed headers
# must be dropped and counted in rx_bad_vnet. Super-frames to the tap
# uplink, whose MTU is smaller, are cut again to fit, as the kernel would.

LIB_NO_GUEST=1
source "$(dirname "$(readlink -f "$0")")/../lib.sh"
require_cmd python3 ethtool
require_vecswitch
here=$(dirname "$(readlink -f "$0")")

ns=$(netns_add gso)
ip -n "$ns" link add gtx type veth peer name grx
# no offload on the sending end: the kernel segments and checksums itself
ip netns exec "$ns" ethtool -K gtx tx off tso off gso off sg off >/dev/null 2>&1
ip netns exec "$ns" ethtool -K gtx tx-udp-segmentation off >/dev/null 2>&1
ip netns exec "$ns" ethtool -K grx gro off lro off >/dev/null 2>&1
ip -n "$ns" link set gtx up
ip -n "$ns" link set grx up
check_err $? "cannot set up the veth pair"
tso=$(ip netns exec "$ns" ethtool -k gtx | awk '$1 == "tcp-segmentation-offload:" { print $2 }')
[ "$tso" = off ]
check_err $? "TSO still on for gtx ($tso)"

# the uplink: a tap whose MTU is smaller than the guests' segments
ip -n "$ns" tuntap add dev gup mode tap && ip -n "$ns" link set gup mtu 1400 up
check_err $? "cannot set up the tap uplink"

start_switch "$ns" --vnet "$TEST_TMP/vnet.sock" --dgram "$TEST_TMP/dgram.sock" \
	--tap gup --ctl "$TEST_TMP/ctl"
check_err $? "vecswitch did not start: $(tail -n 3 "$TEST_TMP/switch.log")"

ip netns exec "$ns" python3 "$here/gso_cmp.py" "$TEST_TMP/vnet.sock" \
	"$TEST_TMP/dgram.sock" gtx grx "$TEST_TMP" gup 1400 >"$TEST_TMP/cmp.log" 2>&1
check_err $? "segmentation differs from the kernel's"
sed 's/^/# /' "$TEST_TMP/cmp.log"

read -r _ nbad _ nrunt < <(grep '^malformed' "$TEST_TMP/cmp.log")
stats=$(env -u LD_PRELOAD "$VECSWITCH" ctl --ctl "$TEST_TMP/ctl" stats --json)
vnet_stat() {
	python3 -c 'import json,sys
s = json.loads(sys.argv[1])
print(sum(p[sys.argv[2]] for p in s["ports"] if p["type"] == "vnet"))' "$stats" "$1"
}
[ "$(vnet_stat rx_bad_vnet)" = "${nbad:-x}" ]
check_err $? "rx_bad_vnet is $(vnet_stat rx_bad_vnet), ${nbad:-?} malformed headers were sent"
[ "$(vnet_stat rx_runt)" = "${nrunt:-x}" ]
check_err $? "rx_runt is $(vnet_stat rx_runt), ${nrunt:-?} short datagrams were sent"
[ "$(vnet_stat rx_gso)" -ge 6 ]
check_err $? "rx_gso is $(vnet_stat rx_gso)"
read -r _ nover < <(grep '^oversize' "$TEST_TMP/cmp.log")
tap_over=$(python3 -c 'import json,sys
s = json.loads(sys.argv[1])
print(sum(p["tx_oversize"] for p in s["ports"] if p["type"] == "tap"))' "$stats")
[ "$tap_over" = "${nover:-x}" ]
check_err $? "the uplink's tx_oversize is $tap_over, ${nover:-?} frames over its MTU were sent"

# the switch reports the uplink's MTU, and follows it through a rename
tap_mtu() {
	env -u LD_PRELOAD "$VECSWITCH" ctl --ctl "$TEST_TMP/ctl" ports --json |
		python3 -c 'import json,sys
print(*[p["mtu"] for p in json.load(sys.stdin)["ports"] if p["type"] == "tap"])'
}
[ "$(tap_mtu)" = 1400 ]
check_err $? "ctl ports shows the uplink's MTU as '$(tap_mtu)', not 1400"
ip -n "$ns" link set gup down && ip -n "$ns" link set gup name gupr &&
	ip -n "$ns" link set gupr mtu 1300 up
check_err $? "cannot rename the uplink and change its MTU"
for _ in $(seq 30); do [ "$(tap_mtu)" = 1300 ] && break; sleep 0.1; done
[ "$(tap_mtu)" = 1300 ]
check_err $? "the switch did not follow the renamed uplink's MTU: '$(tap_mtu)'"
grep -q "uplink gupr: MTU 1300" "$TEST_TMP/switch.log"
check_err $? "the switch did not log the uplink's new MTU"

stop_switch
check_err $? "vecswitch did not exit cleanly: $(tail -n 5 "$TEST_TMP/switch.log")"
! grep -q "runtime error\|ERROR: AddressSanitizer" "$TEST_TMP/switch.log"
check_err $? "sanitizer report: $(grep -m3 "runtime error\|AddressSanitizer" "$TEST_TMP/switch.log")"

# the same with headers negotiated on the --dgram socket, the default path
rm -f "$TEST_TMP"/gso-*.sock
SWITCH_LOG=$TEST_TMP/switch2.log start_switch "$ns" --dgram "$TEST_TMP/dgram.sock" \
	--ctl "$TEST_TMP/ctl"
check_err $? "vecswitch did not start again: $(tail -n 3 "$TEST_TMP/switch2.log")"
ip netns exec "$ns" python3 "$here/gso_cmp.py" "$TEST_TMP/dgram.sock" \
	"$TEST_TMP/dgram.sock" gtx grx "$TEST_TMP" >"$TEST_TMP/cmp2.log" 2>&1
check_err $? "negotiated: segmentation differs from the kernel's"
sed 's/^/# negotiated: /' "$TEST_TMP/cmp2.log"
stats=$(env -u LD_PRELOAD "$VECSWITCH" ctl --ctl "$TEST_TMP/ctl" stats --json)
[ "$(vnet_stat rx_bad_vnet)" = "${nbad:-x}" ] && [ "$(vnet_stat rx_gso)" -ge 6 ] &&
	[ "$(vnet_stat rx_hello)" = 1 ]
check_err $? "negotiated: rx_bad_vnet $(vnet_stat rx_bad_vnet), rx_gso $(vnet_stat rx_gso), rx_hello $(vnet_stat rx_hello)"
stop_switch
check_err $? "vecswitch did not exit cleanly: $(tail -n 5 "$TEST_TMP/switch2.log")"
! grep -q "runtime error\|ERROR: AddressSanitizer" "$TEST_TMP/switch2.log"
check_err $? "sanitizer report: $(grep -m3 "runtime error\|AddressSanitizer" "$TEST_TMP/switch2.log")"

log_test "vecswitch segmentation equals the kernel's (--vnet and negotiated), to the uplink's MTU too; malformed headers dropped"
exit "$RET"
