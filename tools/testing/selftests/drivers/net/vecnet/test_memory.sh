#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The driver under memory pressure. Guests a and b are joined directly by
# two unixdgram links: vec0 plain, vnet=0 (each frame lands in a receive buffer
# that a fresh one replaces) and vec1 with vnet=1 (each frame is copied
# out of a 64 KiB buffer into an skb of its size). In b, receive buffer
# allocations fail 5% of the time (the fault-injection attribute
# fail_vecnet_rx in debugfs) while a sends TCP to it on each link: every
# failure must drop its frame and be counted (rx_alloc_failed and
# rx_dropped), TCP must still get through, and once the failures stop the
# link works as before, with nothing more dropped.

source "$(dirname "$(readlink -f "$0")")/../lib.sh"
require_cmd iperf3 python3

ns=$(netns_add mem)
fail=/sys/kernel/debug/fail_vecnet_rx
declare -A net=([vec0]=198.18.24 [vec1]=198.18.25)
agent "$ns" mem a -a "$(dgram_link vec0 a b ",depth=64,vnet=0")" \
	-a "$(dgram_link vec1 a b ",depth=64,vnet=1")"
agent "$ns" mem b -a "$(dgram_link vec0 b a ",depth=64,vnet=0")" \
	-a "$(dgram_link vec1 b a ",depth=64,vnet=1")"
for g in a b; do
	host=1
	[ "$g" = b ] && host=2
	exec_in "$g" sh -c "ip addr add ${net[vec0]}.$host/24 dev vec0 && ip link set vec0 up &&
		       ip addr add ${net[vec1]}.$host/24 dev vec1 && ip link set vec1 up"
	check_err $? "guest $g did not boot or bring its links up"
done
[ "$RET" -eq 0 ] || { log_test "memory pressure"; exit "$RET"; }
exec_in b sh -c "mount -t debugfs none /sys/kernel/debug 2>/dev/null; test -d $fail"
check_err $? "the guest kernel has no $fail"
exec_in b iperf3 -s -D >/dev/null
check_err $? "no iperf3 server in b"

# counter DEV NAME: rx_alloc_failed (ethtool -S) or rx_dropped (ip -s) in b
counter() {
	if [ "$2" = rx_dropped ]; then
		exec_in b cat "/sys/class/net/$1/statistics/rx_dropped"
	else
		exec_in b ethtool -S "$1" | awk -v n="$2:" '$1 == n { print $2 }'
	fi
}
# iperf_to DEV SECONDS: a -> b over DEV, prints Mbit/s (0: nothing moved)
iperf_to() {
	exec_in a iperf3 -c "${net[$1]}.2" -t "$2" -J >"$TEST_TMP/iperf-$1.json" 2>/dev/null
	iperf_mbps "$TEST_TMP/iperf-$1.json"
}

for dev in vec0 vec1; do
	reach a "${net[$dev]}.2"
	check_err $? "a never reached b over $dev"
	f0=$(counter "$dev" rx_alloc_failed)
	d0=$(counter "$dev" rx_dropped)
	exec_in b sh -c "echo 0 >$fail/verbose && echo 1 >$fail/interval &&
		    echo -1 >$fail/times && echo 5 >$fail/probability"
	check_err $? "cannot turn fail_vecnet_rx on"
	mbps=$(iperf_to "$dev" 3)
	exec_in b sh -c "echo 0 >$fail/probability"
	f1=$(counter "$dev" rx_alloc_failed)
	d1=$(counter "$dev" rx_dropped)
	echo "# $dev, 5% of receive allocations failing: $mbps Mbit/s," \
		"$((f1 - f0)) allocations failed, rx_dropped moved by $((d1 - d0))"
	[ "$mbps" -gt 0 ]
	check_err $? "no TCP got through $dev with 5% of allocations failing"
	[ $((f1 - f0)) -gt 0 ]
	check_err $? "no allocation failure counted on $dev"
	[ $((d1 - d0)) -ge $((f1 - f0)) ]
	check_err $? "$dev: $((f1 - f0)) allocations failed, rx_dropped moved by $((d1 - d0))"

	# the failures are over: no loss, nothing more dropped
	exec_in a ping -c 20 -W 2 "${net[$dev]}.2" >"$TEST_TMP/ping-$dev.log"
	check_err $? "$dev lost pings after the failures stopped: $(grep loss "$TEST_TMP/ping-$dev.log")"
	mbps=$(iperf_to "$dev" 2)
	echo "# $dev afterwards: $mbps Mbit/s"
	[ "$mbps" -gt 0 ]
	check_err $? "$dev moved nothing after the failures stopped"
	[ "$(counter "$dev" rx_alloc_failed)" = "$f1" ] &&
		[ "$(counter "$dev" rx_dropped)" = "$d1" ]
	check_err $? "$dev still dropped frames after the failures stopped"
done
for g in a b; do
	no_crash "$g"
	check_err $? "guest $g: $(grep -m1 -E "Kernel panic|BUG:|Oops|WARNING:" "$TEST_TMP/$g/console.log")"
done

log_test "memory pressure: failed receive allocations dropped, counted, recovered"
exit "$RET"
