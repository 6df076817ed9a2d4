#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The tap transport against a host tap device in a namespace, with and
# without gro=1: ping, iperf3 both ways, the offloads ethtool shows and
# changes, and the host's super-frames: with gro=1 they arrive whole
# (frames far larger than the MTU, none truncated), without it the host
# cuts them to the MTU first.  Any drop or header error fails the test.
# A frame longer than the guest's buffers (the host's MTU larger) must
# be counted in rx_truncated and dropped, not passed up cut short.

# shellcheck source-path=SCRIPTDIR source=../lib.sh
source "$(dirname "$(readlink -f "$0")")/../lib.sh"
require_cmd iperf3 ethtool

ns=$(netns_add tap)
ip -n "$ns" tuntap add dev ttap0 mode tap
ip -n "$ns" addr add 198.18.6.1/24 dev ttap0
ip -n "$ns" link set ttap0 up
ip netns exec "$ns" iperf3 -s -B 198.18.6.1 >"$TEST_TMP/server.log" 2>&1 &
on_exit "kill $! 2>/dev/null"
wait_for 10 sh -c "ip netns exec $ns ss -ltn | grep -q :5201"

script=$(guest_script tap <<'EOS'
vec_up 198.18.6.2/24 || exit 10
ping -c 3 -W 2 198.18.6.1 >ping.log || exit 11
ethtool -k vec0 >features
snap before
iperf3 -c 198.18.6.1 -t 3 -J >tx.json || exit 12
iperf3 -c 198.18.6.1 -t 3 -R -J >rx.json || exit 13
snap after
# rx-gro-hw sizes the receive buffers: while up it can change only when
# they are sized for super-frames (gro=1), else it is fixed; while down
# it can always change, and applies at the next up
ethtool -K vec0 rx-gro-hw off || exit 14
ethtool -K vec0 rx-gro-hw on 2>/dev/null
ethtool -k vec0 | grep '^rx-gro-hw' >gro_on_up
ip link set vec0 down
ethtool -K vec0 rx-gro-hw on || exit 15
ip link set vec0 up
ethtool -k vec0 | grep '^rx-gro-hw' >gro_after
exit 0
EOS
)

# --- a frame longer than the guest takes: counted and dropped, not cut --
# The host's tap allows 9000 bytes, the guest's MTU is 1500 (gro=0, so
# its buffers are MTU-sized): the host's 3000-byte ping must show up in
# rx_truncated, never as a 1500-byte frame.
ip -n "$ns" link set ttap0 mtu 9000
long=$(guest_script long <<'EOS'
vec_up 198.18.6.2/24 || exit 10
ping -c 2 -W 2 198.18.6.1 >/dev/null || exit 11
touch ready
for i in $(seq 1 100); do [ -e ../long.done ] && break; sleep 0.1; done
ethtool -S vec0 >stats
exit 0
EOS
)
guest long 120 -n "$ns" -a "vec0:transport=tap,ifname=ttap0,gro=0,depth=64" -- sh "$long" &
gpid=$!
wait_for 60 test -e "$(guest_out long ready)"
check_err $? "the guest for the long frame did not come up"
ip netns exec "$ns" ping -c 1 -W 1 -M dont -s 2972 198.18.6.2 >/dev/null 2>&1
touch "$TEST_TMP/long.done"
wait "$gpid"
check_err $? "the guest for the long frame failed"
trunc=$(xstat "$(guest_out long stats)" rx_truncated)
[ "${trunc:-0}" -ge 1 ]
check_err $? "a 3000-byte frame from the host was not counted in rx_truncated (${trunc:-?})"
ip -n "$ns" link set ttap0 mtu 1500

for gro in 1 0; do
	name=tap$gro
	guest "$name" 120 -n "$ns" -a "vec0:transport=tap,ifname=ttap0,gro=$gro,depth=128" -- sh "$script"
	rc=$?
	check_err "$rc" "gro=$gro: guest script failed at step $rc"
	[ "$rc" -eq 0 ] || continue
	no_crash "$name"; check_err $? "gro=$gro: guest kernel complained"
	no_drops "$name"; check_err $? "gro=$gro: frames dropped"

	f=$(guest_out "$name" features)
	for feat in tcp-segmentation-offload tx-checksumming rx-checksumming; do
		grep -q "^$feat: on" "$f"; check_err $? "gro=$gro: $feat not on"
	done
	want=off
	[ "$gro" -eq 1 ] && want=on
	grep -q "^rx-gro-hw: $want" "$f"; check_err $? "gro=$gro: rx-gro-hw not $want"

	after=$(guest_out "$name" after.stats)
	for c in rx_encaps_errors rx_truncated; do
		[ "$(xstat "$after" $c)" -eq 0 ]; check_err $? "gro=$gro: $c is $(xstat "$after" $c)"
	done

	# Average size of the frames received during the host->guest run
	pkts=$(( $(link_stat "$(guest_out "$name" after.link)" rx_packets) -
		 $(link_stat "$(guest_out "$name" before.link)" rx_packets) ))
	bytes=$(( $(link_stat "$(guest_out "$name" after.link)" rx_bytes) -
		  $(link_stat "$(guest_out "$name" before.link)" rx_bytes) ))
	avg=$((bytes / (pkts > 0 ? pkts : 1)))
	for d in tx rx; do
		bps=$(iperf_bps "$(guest_out "$name" $d.json)")
		echo "# gro=$gro $d: $((bps / 1000000)) Mbit/s"
		[ "$bps" -gt 10000000 ]; check_err $? "gro=$gro: $d under 10 Mbit/s"
	done
	echo "# gro=$gro: $pkts frames received, $avg bytes on average"
	if [ "$gro" -eq 1 ]; then
		[ "$avg" -gt 3000 ]; check_err $? "gro=1: no super-frames arrived (average $avg)"
	else
		[ "$avg" -le 1514 ]; check_err $? "gro=0: frames above the MTU arrived (average $avg)"
	fi

	# Rings made with gro=1 have super-frame buffers; gro=0 ones do not,
	# and say so: fixed, not offered and then refused
	fixed=
	[ "$gro" -eq 0 ] && fixed=' \[fixed\]'
	grep -qE "^rx-gro-hw: $want$fixed *$" "$(guest_out "$name" gro_on_up)"
	check_err $? "gro=$gro: rx-gro-hw is '$(cat "$(guest_out "$name" gro_on_up)")' while up"
	grep -qE "^rx-gro-hw: on *$" "$(guest_out "$name" gro_after)"
	check_err $? "gro=$gro: the rx-gro-hw set while down did not apply at up"
done

log_test "tap transport with and without gro"
exit "$RET"
