#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Two guests joined directly by unixdgram (A binds a.sock and connects
# to b.sock, B the reverse) in a namespace of this test: ping, then 5 s
# of iperf3 TCP, and the counters move as the traffic says.  The
# namespace keeps the default net.unix.max_dgram_qlen.
# IPERF_SECONDS overrides the 5 s.

source "$(dirname "$(readlink -f "$0")")/../lib.sh"
require_cmd iperf3 ethtool python3

secs=${IPERF_SECONDS:-5}
ns=$(netns_add pair)
a=$TEST_TMP/a.sock
b=$TEST_TMP/b.sock

sa=$(guest_script a <<EOS
vec_up 198.18.0.1/24 || exit 1
ping_until 198.18.0.2 || { echo "peer never answered"; exit 1; }
# plain frames flow before the headers are agreed: the MODE that agrees
# them is a send of no frame, and must not fall inside the count
for i in \$(seq 1 100); do
	ethtool -S vec0 | grep -q 'nego_agreed: [1-9]' && break
	sleep 0.05
done
sleep 0.1
snap before
ping -c 20 -i 0.05 198.18.0.2 >ping.log || exit 1
# B says when its server runs (our cwd is our output directory)
for i in \$(seq 1 600); do [ -e ../b/serving ] && break; sleep 0.1; done
for i in \$(seq 1 50); do
	iperf3 -c 198.18.0.2 -t $secs -J >tx.json && break
	sleep 0.2
done
snap after
ethtool -i vec0 >drvinfo
# stay until B has its numbers: B sending to a guest that powered off
# would count drops that are no part of the test
for i in \$(seq 1 600); do [ -e ../b/counted ] && break; sleep 0.1; done
echo done
EOS
)
sb=$(guest_script b <<EOS
vec_up 198.18.0.2/24 || exit 1
ping_until 198.18.0.1 || exit 1
snap before
timeout $((secs + 90)) iperf3 -s -1 -J >rx.json &
touch serving
wait
snap after
touch counted
echo done
EOS
)

guest_bg a $((secs + 90)) -n "$ns" -a "vec0:transport=unixdgram,local=$a,path=$b" -- sh "$sa"
guest_bg b $((secs + 90)) -n "$ns" -a "vec0:transport=unixdgram,local=$b,path=$a" -- sh "$sb"
guest_done a "guest A failed"
guest_done b "guest B failed"

grep -q ' 0% packet loss' "$(guest_out a ping.log)"
check_err $? "ping lost packets: $(grep loss "$(guest_out a ping.log)")"

bps=$(iperf_bps "$(guest_out a tx.json)")
echo "# iperf3 A->B over unixdgram: $((bps / 1000000)) Mbit/s in $secs s"
[ "$bps" -gt 0 ]
check_err $? "iperf3 moved nothing"

# Counters: A sent what B received, nothing dropped for a full ring
# (frames the stack drops while a carrier waits for the peer do not count)
atx=$(( $(link_stat "$(guest_out a after.link)" tx_packets) -
	$(link_stat "$(guest_out a before.link)" tx_packets) ))
[ "$atx" -gt 1000 ]
check_err $? "A's tx_packets moved by only $atx"
for g in a b; do
	no_drops $g
	check_err $? "guest $g dropped frames under load"
done
brx=$(link_stat "$(guest_out b after.link)" rx_packets)
atxall=$(link_stat "$(guest_out a after.link)" tx_packets)
[ "$brx" -ge "$atxall" ]
check_err $? "B received $brx frames, A sent $atxall"
# every send call that succeeded moved at least one frame (calls the host
# answered "later" or interrupted moved none, and count as kicks too)
moved() {
	echo $(( $(xstat "$(guest_out a after.stats)" "$1") -
		 $(xstat "$(guest_out a before.stats)" "$1") ))
}
kicks=$(moved tx_kicks)
failed=$(( $(moved tx_eagain) + $(moved tx_enobufs) + $(moved tx_eintr) ))
[ "$kicks" -gt 0 ] && [ $((kicks - failed)) -le "$atx" ]
check_err $? "A's tx_kicks moved by $kicks ($failed failed) for $atx frames"
rk=$(xstat "$(guest_out b after.stats)" rx_kicks)
[ "$rk" -gt 0 ]
check_err $? "B's rx_kicks is $rk"
qmax=$(xstat "$(guest_out b after.stats)" rx_queue_max)
[ "$qmax" -ge 1 ] && [ "$qmax" -le 64 ]
check_err $? "B's rx_queue_max is $qmax (depth 64)"
grep -q '^driver: vecnet' "$(guest_out a drvinfo)"
check_err $? "ethtool -i does not name the driver"
for g in a b; do
	no_crash $g
	check_err $? "guest $g kernel complained"
done
for s in "$a" "$b"; do
	[ ! -e "$s" ]
	check_err $? "$s was not removed at shutdown"
done

log_test "two guests over unixdgram: ping and ${secs} s iperf3"
exit "$RET"
