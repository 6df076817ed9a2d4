#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A guest carries sustained TCP load through a tap device in a namespace,
# half of it sending and half receiving, without crashing: network
# interrupts arrive on the signal stack constantly under this load.
# LOAD_SECONDS overrides the total (default 60).

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"
require_cmd iperf3

total=${LOAD_SECONDS:-60}
half=$((total / 2))
ns=$(netns_add tapload)
ip -n "$ns" tuntap add dev lvec0 mode tap
ip -n "$ns" addr add 198.18.0.1/24 dev lvec0
ip -n "$ns" link set lvec0 up

ip netns exec "$ns" iperf3 -s -B 198.18.0.1 >"$TEST_TMP/server.log" 2>&1 &
server=$!
on_exit "kill $server"
wait_for 10 ip netns exec "$ns" ss -ltn 'sport = :5201' | grep -q 5201

guest load $((total + 60)) -n "$ns" -a vec0:transport=tap,ifname=lvec0,gro=1,depth=128 -- sh -c "
	ip addr add 198.18.0.2/24 dev vec0 && ip link set vec0 up &&
	iperf3 -c 198.18.0.1 -t $half -J >tx.json &&
	iperf3 -c 198.18.0.1 -t $half -R -J >rx.json"
rc=$?
if [ "$rc" -ne 0 ]; then
	sed 's/^/# guest: /' "$TEST_TMP/load/output.log"
	check_err "$rc" "guest under load ended with status $rc"
fi
if grep -E "Kernel panic|BUG:|Oops|Segmentation fault" "$TEST_TMP/load/console.log"; then
	check_err 1 "guest kernel reported a crash"
fi

for dir in tx rx; do
	bps=$(iperf_bps "$TEST_TMP/load/$dir.json")
	echo "# guest $dir: $bps bit/s over $half s"
	[ "$bps" -gt 1000000 ]; check_err $? "$dir moved under 1 Mbit/s"
done

log_test "${total} s of TCP load through tap"
exit "$RET"
