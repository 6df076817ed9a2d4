#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Two guests joined directly by unixdgram (A binds a.sock and connects
# to b.sock, B the reverse) in a namespace of this test: ping, then 5 s
# of iperf3 TCP, and the counters move as the traffic says.  The
# namespace keeps the default net.unix.max_dgram_qlen.  Then B attaches
# a generic XDP program (xdp_sizes.py), which turns rx-gro-hw off: 8 MiB
# more of A's TCP, sent as super-frames, reach it cut to the MTU, with
# no kernel warning.  Last, both change the MTU to 9000 and their rings
# (rx unlike tx) while up, and an 8000-byte ping that may not fragment
# crosses; then A changes its rings 40 times under a flood ping and the
# path still works.
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
snap_end after
ethtool -i vec0 >drvinfo
# stay until B has its numbers: B sending to a guest that powered off
# would count drops that are no part of the test
for i in \$(seq 1 600); do [ -e ../b/counted ] && break; sleep 0.1; done
for i in \$(seq 1 600); do [ -e ../b/xdp_serving ] && break; sleep 0.1; done
for i in \$(seq 1 50); do
	iperf3 -c 198.18.0.2 -n 8M >xdp.log && break
	sleep 0.2
done
ip link set vec0 mtu 9000 || { echo "mtu 9000 while up failed"; exit 1; }
ethtool -G vec0 rx 256 tx 128 || { echo "ethtool -G while up failed"; exit 1; }
ethtool -g vec0 >ring.txt
ip link show vec0 >link.txt
for i in \$(seq 1 600); do [ -e ../b/resized ] && break; sleep 0.1; done
ok=0
for i in \$(seq 1 30); do
	ping -c 1 -W 1 -M do -s 8000 198.18.0.2 >big.log && { ok=1; break; }
done
[ \$ok = 1 ] || { touch big_done; echo "no 8000-byte ping at mtu 9000"; exit 1; }
# 40 ring changes under a flood ping: a queue the transmit poll wakes
# while the rings are being remade must not take a frame
ping -f -q -w 6 198.18.0.2 >flood.log 2>&1 &
for i in \$(seq 1 40); do
	ethtool -G vec0 tx \$((64 << (i % 2))) ||
		{ touch big_done; echo "ethtool -G \$i under load failed"; exit 1; }
done
wait
ping_until 198.18.0.2 || { touch big_done; echo "no ping after 40 ring changes"; exit 1; }
touch big_done
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
# Generic XDP wants each frame as it was on the wire: attaching it turns
# rx-gro-hw off, and the super-frames A goes on sending are cut to the
# MTU before the program sees them
snap xdp_before
python3 $VECNET_TEST_DIR/xdp_sizes.py vec0 1518 -- sh -c \
	'ethtool -k vec0 >xdp.features; touch xdp_serving; exec timeout 60 iperf3 -s -1 >/dev/null' \
	>xdp.counts || exit 1
snap xdp_after
ip link set vec0 mtu 9000 || { echo "mtu 9000 while up failed"; exit 1; }
ethtool -G vec0 rx 64 tx 32 || { echo "ethtool -G while up failed"; exit 1; }
ethtool -g vec0 >ring.txt
touch resized
for i in \$(seq 1 600); do [ -e ../a/big_done ] && break; sleep 0.1; done
echo done
EOS
)

guest_bg a $((secs + 120)) -n "$ns" -a "vec0:transport=unixdgram,local=$a,path=$b" -- sh "$sa"
guest_bg b $((secs + 120)) -n "$ns" -a "vec0:transport=unixdgram,local=$b,path=$a" -- sh "$sb"
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
# 8 MiB is some 5800 frames of the MTU, of which iperf3 may stop reading
# the last MiB or two; handed up whole, some 150 super-frames.  Cutting
# them loses none.  (More would not fit a debug guest: KASAN keeps what
# softirq frees in quarantine until process context allocates.)
xdp=$(guest_out b xdp.counts)
frames=$(awk '$1 == "frames" { print $2 }' "$xdp")
larger=$(awk '$1 == "larger" { print $2 }' "$xdp")
echo "# generic XDP on B saw ${frames:-no} frames, ${larger:-no} longer than 1518 bytes"
[ "${frames:-0}" -ge 2000 ] && [ "${larger:-1}" -eq 0 ]
check_err $? "generic XDP saw ${frames:-no} frames, ${larger:-no} of them super-frames"
xb=$(guest_out b xdp_before) xa=$(guest_out b xdp_after)
v=$(( $(link_stat "$xa.link" rx_dropped) - $(link_stat "$xb.link" rx_dropped) ))
[ "$v" -eq 0 ]
check_err $? "B's rx_dropped moved by $v under generic XDP"
v=$(( $(xstat "$xa.stats" rx_encaps_errors) - $(xstat "$xb.stats" rx_encaps_errors) ))
[ "$v" -eq 0 ]
check_err $? "B's rx_encaps_errors moved by $v under generic XDP"
grep -q '^rx-gro-hw: off' "$(guest_out b xdp.features)"
check_err $? "generic XDP left $(grep rx-gro-hw "$(guest_out b xdp.features)")"
grep -Eq 'RX:[[:space:]]+256' "$(guest_out a ring.txt)" &&
	grep -Eq 'TX:[[:space:]]+128' "$(guest_out a ring.txt)" &&
	grep -q 'mtu 9000' "$(guest_out a link.txt)"
check_err $? "A's rings or MTU did not change while up"
grep -Eq 'RX:[[:space:]]+64' "$(guest_out b ring.txt)" &&
	grep -Eq 'TX:[[:space:]]+32' "$(guest_out b ring.txt)"
check_err $? "B's rings did not change to rx 64 tx 32 while up"
for g in a b; do
	no_crash $g
	check_err $? "guest $g kernel complained"
done
for s in "$a" "$b"; do
	[ ! -e "$s" ]
	check_err $? "$s was not removed at shutdown"
done

log_test "two guests over unixdgram: ping, ${secs} s iperf3, generic XDP, mtu and -G while up and under load"
exit "$RET"
