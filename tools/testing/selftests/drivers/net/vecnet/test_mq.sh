#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Multiqueue devices (queues=N) on guests of two virtual CPUs.
#
# tap: the guest's vec0 has two queues on a multiqueue host tap.  Many
# TCP flows each way must use both queues in both directions, and the
# per-queue counters must add up to the device's own.  ethtool -l shows
# the channels; -L refuses to change them while the device is up, and
# changes them while it is down: down to one queue and back to two,
# each time with the path working afterwards.
#
# Options: queues= beyond the CPUs, on a transport with one queue, and
# on unixdgram without virtio-net headers are refused at boot with an
# error naming the problem.

source "$(dirname "$(readlink -f "$0")")/../lib.sh"
require_cmd iperf3 ethtool
[ -x "${VECSWITCH:-}" ] || { echo "SKIP: no vecswitch binary in \$VECSWITCH"; exit "$ksft_skip"; }
cfg=$(dirname "$(readlink -f "$VMLINUX")")/.config
if ! grep -qx CONFIG_SMP=y "$cfg" 2>/dev/null; then
	echo "SKIP: $VMLINUX was built without SMP (the 6.12 kernel has none)"
	exit "$ksft_skip"
fi

# stat_of NAME COUNTER: one counter of ethtool -S vec0 in guest NAME
stat_of() {
	awk -v n="$2:" '$1 == n { print $2 }' "$TEST_TMP/$1.stats"
}

# queues_used NAME DIR: both queues of guest NAME moved frames in DIR
# (rx or tx) since its last snapshot, per ethtool -S
queues_used() {
	local g=$1 dir=$2 k v

	exec_in "$g" ethtool -S vec0 >"$TEST_TMP/$g.stats"
	for k in 0 1; do
		v=$(stat_of "$g" "${dir}_queue_${k}_packets")
		echo "# $g: ${dir}_queue_${k}_packets $v"
		[ "${v:-0}" -gt 100 ]
		check_err $? "$g's queue $k moved ${v:-no} frames in $dir"
	done
}

# queues_add_up NAME: the per-queue counters sum to the device's own
queues_add_up() {
	local g=$1 dir sum link

	exec_in "$g" ethtool -S vec0 >"$TEST_TMP/$g.stats"
	exec_in "$g" ip -s -j link show vec0 >"$TEST_TMP/$g.link"
	for dir in rx tx; do
		sum=$(( $(stat_of "$g" "${dir}_queue_0_packets") +
			$(stat_of "$g" "${dir}_queue_1_packets") ))
		link=$(link_stat "$TEST_TMP/$g.link" "${dir}_packets")
		[ "$sum" = "$link" ]
		check_err $? "$g: $dir queues sum to $sum frames, the device says $link"
	done
}

# --- tap ----------------------------------------------------------------
ns=$(netns_add mq)
ip -n "$ns" tuntap add dev mqtap mode tap multi_queue
ip -n "$ns" addr add 198.18.10.1/24 dev mqtap
ip -n "$ns" link set mqtap up
ip netns exec "$ns" iperf3 -s -B 198.18.10.1 >"$TEST_TMP/server.log" 2>&1 &
on_exit "kill $! 2>/dev/null"
wait_for 10 sh -c "ip netns exec $ns ss -ltn | grep -q :5201"

agent "$ns" mq t --cpus 2 -m 384M \
	-a "vec0:transport=tap,ifname=mqtap,queues=2" \
	-a "vec1:transport=tap,ifname=mqbad,queues=3" \
	-a "vec2:transport=gre,src=127.0.0.1,dst=127.0.0.1,queues=2" \
	-a "vec3:transport=unixdgram,path=/nonexistent,vnet=0,queues=2"
wait_for 120 test -e "$TEST_TMP/t/agent/ready"
check_err $? "the tap guest did not boot"
[ "$RET" -eq 0 ] || { log_test "multiqueue"; exit "$ksft_fail"; }

for e in "vec1: option 'queues': 3 is more than the guest's 2 CPUs" \
	 "vec2: option 'queues': transport gre has one queue" \
	 "vec3: option 'queues': needs vnet=auto or vnet=1"; do
	console_has t "$e"
	check_err $? "no error '$e' on the console"
done

exec_in t sh -c 'ip addr add 198.18.10.2/24 dev vec0 && ip link set vec0 up'
check_err $? "vec0 did not come up"
exec_in t ethtool -l vec0 >"$TEST_TMP/channels"
[ "$(grep -c '^Combined:[[:space:]]*2$' "$TEST_TMP/channels")" = 2 ]
check_err $? "ethtool -l does not show 2 combined channels of at most 2: $(tr '\n' ' ' <"$TEST_TMP/channels")"
reach t 198.18.10.1
check_err $? "the guest cannot reach the host over the multiqueue tap"

exec_in t iperf3 -c 198.18.10.1 -P 16 -t 3 >/dev/null
check_err $? "TCP guest->host, 16 flows, failed"
queues_used t tx
exec_in t iperf3 -c 198.18.10.1 -P 16 -t 3 -R >/dev/null
check_err $? "TCP host->guest, 16 flows, failed"
queues_used t rx
queues_add_up t

# ethtool -L: refused while up, taken while down, both ways
! exec_in t ethtool -L vec0 combined 1 2>/dev/null
check_err $? "ethtool -L changed the channels of a running device"
! exec_in t ethtool -L vec0 combined 3 2>/dev/null
check_err $? "ethtool -L took 3 channels on a device of at most 2"
for n in 1 2; do
	exec_in t sh -c "ip link set vec0 down && ethtool -L vec0 combined $n && ip link set vec0 up"
	check_err $? "ethtool -L combined $n while down failed"
	got=$(exec_in t ethtool -l vec0 | awk '/^Combined:/ { v = $2 } END { print v }')
	[ "$got" = "$n" ]
	check_err $? "after ethtool -L combined $n, ethtool -l shows $got"
	reach t 198.18.10.1
	check_err $? "no path with $n channels"
done
exec_in t iperf3 -c 198.18.10.1 -P 16 -t 2 -R >/dev/null
check_err $? "TCP host->guest after the channel changes failed"

log_test "multiqueue: tap with 2 queues, ethtool -l/-L, option errors"
exit "$RET"
