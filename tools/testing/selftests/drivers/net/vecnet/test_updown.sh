#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vec0 goes down and up 100 times with traffic to a host peer in
# between; ethtool -S, -g, -c, -i and -k answer both ways, the number of
# counters never changes, and no counter goes backwards across down/up.
# The local socket exists only while the device is up.

source "$(dirname "$(readlink -f "$0")")/../lib.sh"
require_cmd ethtool python3

ns=$(netns_add updown)
peer=$TEST_TMP/peer.sock
local=$TEST_TMP/g.sock
peer_start peer "$ns" --bind "$peer" --connect "$local" --timeout 300

s=$(guest_script ud <<EOS
fail() { echo "FAIL: \$*"; exit 1; }
ip addr add 198.18.0.1/24 dev vec0
n0=\$(ethtool -S vec0 | wc -l)
prev=0
for i in \$(seq 1 100); do
	ip link set vec0 up || fail "up \$i"
	[ -S $local ] || fail "no socket while up (\$i)"
	ip neigh replace 198.18.0.2 lladdr 02:00:00:00:00:02 dev vec0 nud permanent
	up=0
	for t in \$(seq 1 100); do
		[ "\$(cat /sys/class/net/vec0/operstate)" = up ] && { up=1; break; }
		sleep 0.05
	done
	[ \$up = 1 ] || fail "carrier did not come up (\$i)"
	ethtool -g vec0 >/dev/null || fail "-g up"
	ethtool -c vec0 >/dev/null || fail "-c up"
	# the peer only counts: no answer comes, so do not wait long for one
	ping -c 1 -W 0.2 198.18.0.2 >/dev/null
	ip link set vec0 down || fail "down \$i"
	[ -e $local ] && fail "socket left while down (\$i)"
	ethtool -S vec0 >s.txt || fail "-S down"
	ethtool -g vec0 >/dev/null || fail "-g down"
	ethtool -c vec0 >/dev/null || fail "-c down"
	ethtool -i vec0 >/dev/null || fail "-i down"
	ethtool -k vec0 >/dev/null || fail "-k down"
	[ "\$(wc -l <s.txt)" = "\$n0" ] || fail "counter count changed"
	kicks=\$(awk '\$1 == "tx_kicks:" { print \$2 }' s.txt)
	[ "\$kicks" -ge "\$prev" ] || fail "tx_kicks went back \$prev -> \$kicks"
	prev=\$kicks
done
ethtool -S vec0 >final.stats
ip -s -j link show vec0 >final.link
ethtool -C vec0 tx-usecs 50 || fail "-C down"
ethtool -c vec0 | grep -q 'tx-usecs:[[:space:]]*50' || fail "-c after -C"
ethtool -K vec0 sg off || fail "-K down"
ethtool -k vec0 | grep -q 'scatter-gather: off' || fail "-k after -K"
ethtool -G vec0 rx 32 tx 32 || fail "-G down"
ethtool -g vec0 >ring.txt
ip link set vec0 up
ip neigh replace 198.18.0.2 lladdr 02:00:00:00:00:02 dev vec0 nud permanent
for t in \$(seq 1 100); do
	[ "\$(cat /sys/class/net/vec0/operstate)" = up ] && break
	sleep 0.05
done
ping -c 3 -i 0.2 198.18.0.2 >/dev/null
ip link set vec0 down
ethtool -S vec0 >coal.stats
echo done
EOS
)
guest ud 240 -n "$ns" -a "vec0:transport=unixdgram,local=$local,path=$peer" -- sh "$s"
rc=$?
check_err "$rc" "guest: $(tail -n 3 "$(guest_out ud output.log)")"

tx=$(link_stat "$(guest_out ud final.link)" tx_packets)
[ "$tx" -ge 100 ]
check_err $? "only $tx frames sent over 100 up/down cycles"
icmp=$(peer_count peer icmp)
[ "$icmp" -ge 100 ]
check_err $? "peer saw $icmp pings, want 100"
grep -Eq 'TX:[[:space:]]+32' "$(guest_out ud ring.txt)"
check_err $? "ethtool -G did not change the depth"
ct=$(xstat "$(guest_out ud coal.stats)" tx_coalesce_timer)
[ "$ct" -gt 0 ]
check_err $? "tx-usecs 50 never armed the coalescing timer"
no_crash ud
check_err $? "guest kernel complained"

log_test "100 x down/up with ethtool in between"
exit "$RET"
