#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# SMP guests: two guests of two virtual CPUs each (uml-run --cpus 2) on a
# vecswitch.  Each runs the kernel this tree built (its release), sees
# two CPUs, and reaches the other.  Then the driver's contexts are made
# to run at once on both CPUs: TCP with four flows each way at the same
# time while one guest reads ethtool -S and changes the coalescing over
# and over; then one guest takes vec0 down and up ten times under a
# flood from the other.  Afterwards the path works, the counters of the
# transmit and receive contexts have moved, and no kernel report is on
# either console (um/lib.sh fails the test on one).  On the debug kernel
# this runs under lockdep, KASAN and the sleep-in-atomic checks.

source "$(dirname "$(readlink -f "$0")")/../lib.sh"
require_cmd iperf3 ethtool python3
require_vecswitch
cfg=$(dirname "$(readlink -f "$VMLINUX")")/.config
if ! grep -qx CONFIG_SMP=y "$cfg" 2>/dev/null; then
	echo "SKIP: $VMLINUX was built without SMP (the 6.12 kernel has none)"
	exit "$ksft_skip"
fi
release=$(cat "$(dirname "$cfg")/include/config/kernel.release")

ns=$(netns_add smp)
sock=$TEST_TMP/switch.sock
start_switch "$ns" --dgram "$sock"
check_err $? "the switch did not start"

declare -A ip=([a]=198.18.9.1 [b]=198.18.9.2)
for g in a b; do
	agent "$ns" smp "$g" --cpus 2 -m 384M \
		-a "vec0:transport=unixdgram,path=$sock,depth=128"
done
for g in a b; do
	wait_for 120 test -e "$TEST_TMP/$g/agent/ready"
	check_err $? "guest $g did not boot"
	[ "$RET" -eq 0 ] || { log_test "SMP guests"; exit "$ksft_fail"; }
	exec_in "$g" ip addr add "${ip[$g]}/24" dev vec0
	exec_in "$g" ip link set vec0 up
done

for g in a b; do
	got=$(exec_in "$g" uname -r)
	[ "$got" = "$release" ]
	check_err $? "guest $g runs '$got', the build is '$release'"
	got=$(exec_in "$g" nproc)
	[ "$got" = 2 ]
	check_err $? "guest $g has $got CPUs, asked for 2"
done
reach a "${ip[b]}"
check_err $? "a cannot reach b"
reach b "${ip[a]}"
check_err $? "b cannot reach a"

# TCP both ways at once, four flows each, while a reads its counters and
# changes its transmit coalescing: xmit, NAPI and ethtool on two CPUs
for g in a b; do
	exec_in "$g" sh -c 'iperf3 -s -D -p 5201 --logfile /dev/null'
done
# shellcheck disable=SC2016  # expanded in the guest
exec_in a sh -c 'iperf3 -c "$1" -P 4 -t 8 -J >tx.json 2>&1 & c=$!
	i=0; while kill -0 $c 2>/dev/null && [ $i -lt 400 ]; do
		ethtool -S vec0 >/dev/null || exit 1
		ethtool -C vec0 tx-usecs $(( (i % 3) * 25 )) || exit 1
		i=$((i + 1))
	done
	wait $c' sh "${ip[b]}" &
ab=$!
# shellcheck disable=SC2016  # expanded in the guest
exec_in b sh -c 'iperf3 -c "$1" -P 4 -t 8 -J >tx.json' sh "${ip[a]}"
check_err $? "TCP b->a (four flows) failed"
wait "$ab"
check_err $? "TCP a->b (four flows) with ethtool -S/-C beside it failed"
for g in a b; do
	bps=$(iperf_bps "$TEST_TMP/$g/tx.json")
	echo "# TCP from $g, 4 flows, both ways at once: $((bps / 1000000)) Mbit/s"
	[ "$bps" -gt 0 ]
	check_err $? "TCP from $g moved nothing"
done

# open and close racing NAPI and xmit: b floods a while a goes down/up
# shellcheck disable=SC2016  # expanded in the guest
exec_in b sh -c 'timeout 30 ping -f -q "$1" >/dev/null 2>&1 & echo $! >flood.pid' sh "${ip[a]}"
# shellcheck disable=SC2016  # expanded in the guest
exec_in a sh -c 'for i in $(seq 1 10); do
		ip link set vec0 down || exit 1
		ip link set vec0 up || exit 1
		ethtool -S vec0 >/dev/null || exit 1
	done'
check_err $? "vec0 down/up under a flood failed"
# shellcheck disable=SC2016  # expanded in the guest
exec_in b sh -c 'kill "$(cat flood.pid)" 2>/dev/null; true'
reach a "${ip[b]}"
check_err $? "a cannot reach b after the down/up cycles"

# the counters of a busy device add up: every context wrote some
stats=$(exec_in a ethtool -S vec0)
for c in tx_kicks rx_kicks; do
	v=$(awk -v n="$c:" '$1 == n { print $2 }' <<<"$stats")
	[ "${v:-0}" -gt 0 ]
	check_err $? "a's $c is '${v:-}' after the traffic"
done

log_test "SMP guests: $release, 2 CPUs, TCP both ways, ethtool and down/up under load"
exit "$RET"
