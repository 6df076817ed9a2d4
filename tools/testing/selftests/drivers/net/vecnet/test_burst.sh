#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A burst of 128 frames at depth=128 arrives whole:
#  - at a slow host reader that does not connect back, so the host's
#    default receive queue limit (net.unix.max_dgram_qlen, 10) holds the
#    guest back: it must wait, not drop and not spin;
#  - at a second guest joined by unixdgram.

source "$(dirname "$(readlink -f "$0")")/../lib.sh"
require_cmd ethtool python3 ping

ns=$(netns_add burst)
qlen=$(ip netns exec "$ns" sysctl -n net.unix.max_dgram_qlen)
echo "# net.unix.max_dgram_qlen in the test namespace: $qlen"

# --- against a slow host reader ---------------------------------------------
peer=$TEST_TMP/slow.sock
peer_start slow "$ns" --bind "$peer" --delay-us 2000 --timeout 120

s=$(guest_script slow <<'EOS'
vec_up 198.18.1.1/24 || exit 1
ip neigh replace 198.18.1.2 lladdr 02:00:00:00:00:02 dev vec0 nud permanent
ethtool -S vec0 >before.stats
ping -q -c 128 -l 128 -s 1400 -W 1 198.18.1.2 >/dev/null
# the driver keeps sending after ping gives up waiting for replies
for t in $(seq 1 100); do
	ethtool -S vec0 >after.stats
	ip -s -j link show vec0 >after.link
	[ "$(awk '$1 == "tx_queue_running_average:" { print $2 }' after.stats)" = 0 ] && break
	sleep 0.1
done
echo done
EOS
)
guest slow 90 -n "$ns" -a "vec0:transport=unixdgram,depth=128,local=$TEST_TMP/g.sock,path=$peer" -- sh "$s"
check_err $? "guest: $(tail -n 3 "$(guest_out slow output.log)")"
wait_for 20 sh -c "[ \"\$(awk '\$1 == \"icmp\" { print \$2 }' '$TEST_TMP/slow.count')\" -ge 128 ]"
got=$(peer_count slow icmp)
echo "# slow reader: $got of 128 pings arrived"
[ "$got" -eq 128 ]
check_err $? "the slow reader got $got of 128 frames"
dropped=$(link_stat "$(guest_out slow after.link)" tx_dropped)
[ "$dropped" -eq 0 ]
check_err $? "the guest dropped $dropped frames"
eagain=$(xstat "$(guest_out slow after.stats)" tx_eagain)
woken=$(( $(xstat "$(guest_out slow after.stats)" tx_write_wakeups) +
	  $(xstat "$(guest_out slow after.stats)" tx_retry_timer) ))
kicks=$(xstat "$(guest_out slow after.stats)" tx_kicks)
echo "# tx_eagain $eagain, wakeups and retries $woken, tx_kicks $kicks"
[ "$eagain" -gt 0 ]
check_err $? "the full queue never pushed back (tx_eagain 0)"
# No busy spinning: bounded retries, about one per frame at most
[ "$kicks" -le 1000 ]
check_err $? "$kicks send calls for a 128-frame burst"

# --- between two guests --------------------------------------------------------
a=$TEST_TMP/a.sock
b=$TEST_TMP/b.sock
sa=$(guest_script ba <<'EOS'
vec_up 198.18.2.1/24 && ping_until 198.18.2.2 || exit 1
snap before
# B counts from its own snapshot on: wait for it (cwd is our output dir)
for i in $(seq 1 300); do [ -e ../bb/counting ] && break; sleep 0.1; done
ping -q -c 128 -l 128 -s 1400 -W 5 198.18.2.2 >burst.log
snap after
# stay until B has its numbers: B sending to a guest that powered off
# would count drops that are no part of the burst
for i in $(seq 1 300); do [ -e ../bb/counted ] && break; sleep 0.1; done
EOS
)
sb=$(guest_script bb <<'EOS'
vec_up 198.18.2.2/24 && ping_until 198.18.2.1 || exit 1
snap before
rx0=$(cat /sys/class/net/vec0/statistics/rx_packets)
touch counting
# until the burst has arrived (or 30 s)
for i in $(seq 1 300); do
	[ $(($(cat /sys/class/net/vec0/statistics/rx_packets) - rx0)) -ge 128 ] && break
	sleep 0.1
done
snap after
touch counted
EOS
)
guest_bg ba 90 -n "$ns" -a "vec0:transport=unixdgram,depth=128,local=$a,path=$b" -- sh "$sa"
guest_bg bb 90 -n "$ns" -a "vec0:transport=unixdgram,depth=128,local=$b,path=$a" -- sh "$sb"
guest_done ba "guest A"
guest_done bb "guest B"
grep -q '128 packets transmitted, 128 received' "$(guest_out ba burst.log)"
check_err $? "burst between guests: $(grep transmitted "$(guest_out ba burst.log)")"
for g in ba bb; do
	no_drops $g
	check_err $? "guest $g dropped frames during the burst"
	no_crash $g
	check_err $? "guest $g kernel complained"
done

log_test "depth-128 bursts without drops"
exit "$RET"
