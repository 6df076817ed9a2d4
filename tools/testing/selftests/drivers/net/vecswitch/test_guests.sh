#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Four UML guests on vecswitch in a namespace of this test: a and b
# exchange pings and a 5 s iperf3 TCP flow while two idle guests listen.
# A frame counter on a packet socket in b and in each idle guest counts
# the frames addressed to a's or b's MAC: thousands in b, none at all in
# the idle guests, whose rx counters move by a few broadcasts at most.

source "$(dirname "$(readlink -f "$0")")/../../../um/lib.sh"
require_cmd iperf3 python3
[ -x "${VECSWITCH:-}" ] || { echo "SKIP: no vecswitch binary in \$VECSWITCH"; exit "$ksft_skip"; }

exec_in() { local g=$1; shift; "$VECNET_SRC/scripts/uml-exec" -t 120 "$TEST_TMP/$g" -- "$@"; }

ns=$(netns_add guests)
sock=$TEST_TMP/switch.sock
ctl=$TEST_TMP/switch.ctl
guests=(a b i1 i2)
declare -A mac=([a]=02:76:65:00:b0:01 [b]=02:76:65:00:b0:02
		[i1]=02:76:65:00:b0:03 [i2]=02:76:65:00:b0:04)
declare -A ip=([a]=198.18.5.1 [b]=198.18.5.2 [i1]=198.18.5.3 [i2]=198.18.5.4)

# (no LD_PRELOAD: the kselftest runner's stdbuf upsets the ASan build)
ip netns exec "$ns" env -u LD_PRELOAD "$VECSWITCH" --dgram "$sock" --ctl "$ctl" \
	2>"$TEST_TMP/switch.log" &
on_exit "kill $! 2>/dev/null"
wait_for 10 test -S "$ctl"
check_err $? "vecswitch did not start: $(tail -n 3 "$TEST_TMP/switch.log")"

for g in "${guests[@]}"; do
	"$UML_RUN" -k "$VMLINUX" -n "$ns" -N "vsw-$g-$$" -t 300 -q -o "$TEST_TMP/$g" \
		-a "vec0:transport=unixdgram,path=$sock,mac=${mac[$g]},depth=128" --agent &
	on_exit "$VECNET_SRC/scripts/uml-exec --stop $TEST_TMP/$g"
done
for g in "${guests[@]}"; do
	exec_in "$g" sh -c "ip addr add ${ip[$g]}/24 dev vec0 && ip link set vec0 up"
	check_err $? "guest $g did not boot or bring vec0 up"
done
[ "$RET" -eq 0 ] || { log_test "four guests on vecswitch"; exit "$RET"; }

exec_in a sh -c "for i in \$(seq 1 30); do ping -c 1 -W 1 ${ip[b]} >/dev/null && exit 0; done; exit 1"
check_err $? "a never reached b"
exec_in b iperf3 -s -1 -D >/dev/null
check_err $? "no iperf3 server in b"

# rx_packets of each idle guest, before
declare -A rx0
for g in i1 i2; do
	rx0[$g]=$(exec_in "$g" cat /sys/class/net/vec0/statistics/rx_packets)
done

# frame counters in b and the idle guests, 30 s, started before the flow
sniffers=()
for g in b i1 i2; do
	exec_in "$g" env FRAME_COUNT_READY="$TEST_TMP/$g/ready" python3 "$FRAMES" count vec0 30 \
		"${mac[a]}" "${mac[b]}" >"$TEST_TMP/$g.count" &
	sniffers+=($!)
done
for g in b i1 i2; do
	wait_for 30 test -e "$TEST_TMP/$g/ready"
	check_err $? "the frame counter in $g did not start"
done

exec_in a ping -c 5 -i 0.2 "${ip[b]}" >"$TEST_TMP/ping.log"
check_err $? "ping a -> b lost packets: $(tail -n 2 "$TEST_TMP/ping.log")"
exec_in a iperf3 -c "${ip[b]}" -t 5 -J >"$TEST_TMP/iperf.json"
check_err $? "iperf3 a -> b failed"
for p in "${sniffers[@]}"; do
	wait "$p"
done

bps=$(python3 -c 'import json,sys; print(int(json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"]))' \
	"$TEST_TMP/iperf.json" 2>/dev/null || echo 0)
echo "# iperf3 a -> b through vecswitch: $((bps / 1000000)) Mbit/s"
[ "$bps" -gt 0 ]
check_err $? "iperf3 moved nothing"

count() { awk -v k="$2" '$1 == k { print $2 }' "$TEST_TMP/$1.count"; }
tob=$(count b "${mac[b]}")
echo "# b received ${tob:-?} frames addressed to it"
[ "${tob:-0}" -gt 1000 ]
check_err $? "the frame counter in b saw only ${tob:-no} frames of the flow"
for g in i1 i2; do
	n=$(( $(count "$g" "${mac[a]}") + $(count "$g" "${mac[b]}") ))
	rx1=$(exec_in "$g" cat /sys/class/net/vec0/statistics/rx_packets)
	echo "# idle $g: $n frames of the flow, rx_packets moved by $((rx1 - rx0[$g]))"
	[ "$n" -eq 0 ]
	check_err $? "idle guest $g received $n frames addressed to a or b"
	[ $((rx1 - rx0[$g])) -lt 50 ]
	check_err $? "idle guest $g's rx_packets moved by $((rx1 - rx0[$g]))"
done
env -u LD_PRELOAD "$VECSWITCH" ctl --ctl "$ctl" fdb 2>/dev/null | sed 's/^/#   /'

log_test "four guests on vecswitch: ping, 5 s iperf3, idle guests see none of it"
exit "$RET"
