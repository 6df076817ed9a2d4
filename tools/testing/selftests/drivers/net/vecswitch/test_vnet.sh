#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# GSO across vecswitch, by default: guests a and b with unixdgram's
# default options negotiate virtio-net headers with the switch on its one
# --dgram socket; guest c (vnet=0) stays plain on the same socket. The
# switch runs with --no-shortcut, so that a's frames to b cross it (by
# default they would take a channel past it: test_shortcut.sh). A TCP
# flow a -> b must cross as super-frames (the switch's rx_gso on a's port,
# and far more bytes than frames); a flow a -> c must be cut by the switch
# (gso_frames) and c -> a must arrive through the zero header. With TSO
# turned off in a (ethtool -K), a sends no super-frames at all.

source "$(dirname "$(readlink -f "$0")")/../lib.sh"
require_cmd iperf3 python3
require_vecswitch


ns=$(netns_add vnet)
declare -A mac=([a]=02:76:65:00:c0:01 [b]=02:76:65:00:c0:02 [c]=02:76:65:00:c0:03)
declare -A ip=([a]=198.18.6.1 [b]=198.18.6.2 [c]=198.18.6.3)
declare -A extra=([a]="" [b]="" [c]=",vnet=0")

start_switch "$ns" --dgram "$TEST_TMP/dgram.sock" --ctl "$TEST_TMP/ctl" --no-shortcut
check_err $? "vecswitch did not start: $(tail -n 3 "$TEST_TMP/switch.log")"

for g in a b c; do
	agent "$ns" vsw "$g" -a \
		vec0:"transport=unixdgram,path=$TEST_TMP/dgram.sock,local=$TEST_TMP/$g.sock,mac=${mac[$g]},depth=128${extra[$g]}"
done
guests_up "GSO across vecswitch" a b c

exec_in a ethtool -k vec0 >"$TEST_TMP/a.features"
grep -q '^tcp-segmentation-offload: on' "$TEST_TMP/a.features"
check_err $? "a does not offer TSO: $(grep segmentation "$TEST_TMP/a.features")"
# on, and no longer fixed: generic XDP may turn it off (vecnet.rst)
grep -q '^rx-gro-hw: on$' "$TEST_TMP/a.features"
check_err $? "a does not show rx-gro-hw on (and changeable): $(grep rx-gro-hw "$TEST_TMP/a.features")"
# shellcheck disable=SC2317  # run by wait_for
port_type() {
	ctl ports --json | python3 -c 'import json,sys
print(*[p["type"] for p in json.load(sys.stdin)["ports"] if p["name"] == sys.argv[1]])' \
		"$TEST_TMP/$1.sock"
}
# shellcheck disable=SC2317  # run by wait_for
types_ok() { [ "$(port_type a)" = vnet ] && [ "$(port_type b)" = vnet ] && [ "$(port_type c)" = dgram ]; }
wait_for 10 types_ok
check_err $? "ports a, b, c are '$(port_type a)', '$(port_type b)', '$(port_type c)', not vnet, vnet, dgram"

for g in b c; do
	reach_guest a "$g"
done
for g in a b c; do
	exec_in "$g" iperf3 -s -D >/dev/null
	check_err $? "no iperf3 server in $g"
done

# a -> b: super-frames cross whole
gso0=$(port_stat a rx_gso)
f0=$(port_stat a rx_frames)
b0=$(port_stat a rx_bytes)
exec_in a iperf3 -c "${ip[b]}" -t 5 -J >"$TEST_TMP/ab.json"
check_err $? "iperf3 a -> b failed"
gso=$(( $(port_stat a rx_gso) - gso0 ))
frames=$(( $(port_stat a rx_frames) - f0 ))
bytes=$(( $(port_stat a rx_bytes) - b0 ))
echo "# a -> b (both negotiated): $(iperf_mbps "$TEST_TMP/ab.json") Mbit/s, $frames frames, $gso super-frames, $((bytes / (frames ? frames : 1))) bytes per frame"
[ "$gso" -gt 100 ]
check_err $? "only $gso super-frames crossed from a"
[ $((bytes / (frames ? frames : 1))) -gt 4000 ]
check_err $? "frames from a average $((bytes / (frames ? frames : 1))) bytes: not super-frames"
[ "$(port_stat b rx_bad_vnet)" -eq 0 ] && [ "$(port_stat a rx_bad_vnet)" -eq 0 ]
check_err $? "the switch refused headers from a guest"
enc=$(exec_in b ethtool -S vec0 | awk '$1 == "rx_encaps_errors:" { print $2 }')
[ "${enc:-x}" = 0 ]
check_err $? "b counted ${enc:-?} rx_encaps_errors"

# b -> a, the same way back
exec_in a iperf3 -c "${ip[b]}" -t 3 -R -J >"$TEST_TMP/ba.json"
check_err $? "iperf3 b -> a failed"
echo "# b -> a: $(iperf_mbps "$TEST_TMP/ba.json") Mbit/s"
[ "$(iperf_mbps "$TEST_TMP/ba.json")" -gt 0 ]
check_err $? "b -> a moved nothing"

# a -> c: the switch cuts what a sends; c -> a: plain frames behind a zero header
seg0=$(sw_stat gso_frames)
exec_in a iperf3 -c "${ip[c]}" -t 3 -J >"$TEST_TMP/ac.json"
check_err $? "iperf3 a -> c failed"
seg=$(( $(sw_stat gso_frames) - seg0 ))
echo "# a -> c (c plain): $(iperf_mbps "$TEST_TMP/ac.json") Mbit/s, $seg super-frames cut by the switch into $(sw_stat gso_segments) segments so far"
[ "$seg" -gt 100 ]
check_err $? "the switch cut only $seg super-frames for c"
exec_in c iperf3 -c "${ip[a]}" -t 3 -J >"$TEST_TMP/ca.json"
check_err $? "iperf3 c -> a failed"
echo "# c -> a: $(iperf_mbps "$TEST_TMP/ca.json") Mbit/s"
[ "$(iperf_mbps "$TEST_TMP/ca.json")" -gt 0 ]
check_err $? "c -> a moved nothing"
# c offers TSO too, but its plain link gets only the segments
[ "$(port_stat c rx_gso)" = 0 ] && [ "$(port_stat c rx_oversize)" = 0 ]
check_err $? "c sent $(port_stat c rx_gso) super-frames, $(port_stat c rx_oversize) oversized frames"
trunc=$(exec_in c ethtool -S vec0 | awk '$1 == "rx_truncated:" { print $2 }')
[ "${trunc:-x}" = 0 ]
check_err $? "c received ${trunc:-?} frames longer than its buffers"

# ethtool -K tso off: the data path obeys
exec_in a ethtool -K vec0 tso off tx-tcp6-segmentation off
check_err $? "ethtool -K vec0 tso off failed"
gso0=$(port_stat a rx_gso)
exec_in a iperf3 -c "${ip[b]}" -t 2 -J >"$TEST_TMP/ab2.json"
check_err $? "iperf3 a -> b without TSO failed"
gso=$(( $(port_stat a rx_gso) - gso0 ))
echo "# a -> b with TSO off: $(iperf_mbps "$TEST_TMP/ab2.json") Mbit/s, $gso super-frames"
[ "$gso" -eq 0 ]
check_err $? "a sent $gso super-frames with TSO off"

ctl stats | sed 's/^/#   /'
stop_switch
check_err $? "vecswitch did not exit cleanly"
! grep -q "runtime error\|ERROR: AddressSanitizer" "$TEST_TMP/switch.log"
check_err $? "sanitizer report: $(grep -m3 "runtime error\|AddressSanitizer" "$TEST_TMP/switch.log")"

log_test "GSO across vecswitch: super-frames whole between vnet guests, cut for a plain one"
exit "$RET"
