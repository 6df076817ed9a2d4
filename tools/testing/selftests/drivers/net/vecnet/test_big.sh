#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Super-frames beyond 64 KiB (BIG TCP, gso_max=).  Guests a and b are
# joined by three direct unixdgram links: vec0 with gso_max=262144 on
# both ends, vec1 where only a asks for them (b takes 64 KiB), vec2 where
# b sends plain frames (vnet=0).  a raises gso_max_size and
# gso_ipv4_max_size on all three (gso_size.py), then sends b TCP over
# each, IPv4 and IPv6 on vec0; a fourth device with a ring too shallow
# for gso_max= keeps 64 KiB and says so.  On vec0 frames beyond 64 KiB must leave a
# and reach b whole (tx_big_frames, rx_big_frames), none cut short or
# refused; on vec1 and vec2 none may leave a, and b receives the flow all
# the same, cut to what it takes.  Then the host refuses a's super-frames
# (the driver's fail_vecnet_big fault, as when it cannot allocate one):
# a counts the refusal, cuts to 64 KiB from then on, and TCP carries on.
# Last, four guests on vecswitch: two with gso_max=262144 send each
# other frames beyond 64 KiB on their shortcut channel; the switch, and
# a guest that takes 64 KiB on a channel, get them cut.

source "$(dirname "$(readlink -f "$0")")/../lib.sh"
require_cmd iperf3 ethtool python3

here=$(dirname "$(readlink -f "$0")")
ns=$(netns_add big)
big=262144
declare -A ip=([a]=198.18.9.1 [b]=198.18.9.2)

# xs GUEST DEV COUNTER: a counter of ethtool -S
xs() {
	exec_in "$1" ethtool -S "$2" | awk -v k="$3:" '$1 == k { print $2 }'
}

agent "$ns" big a -a "$(dgram_link vec0 a b ",depth=128,gso_max=$big")" \
	-a "$(dgram_link vec1 a b ",depth=128,gso_max=$big")" \
	-a "$(dgram_link vec2 a b ",depth=128,gso_max=$big")" \
	-a "vec3:transport=unixdgram,local=$TEST_TMP/avec3.sock,path=$TEST_TMP/none.sock,depth=16,gso_max=$big"
agent "$ns" big b -a "$(dgram_link vec0 b a ",depth=128,gso_max=$big")" \
	-a "$(dgram_link vec1 b a ",depth=128")" -a "$(dgram_link vec2 b a ",depth=128,vnet=0")"
agents_ready "super-frames beyond 64 KiB" a b
for g in a b; do
	host=${ip[$g]##*.}
	exec_in "$g" sh -c "for k in 0 1 2; do
		ip addr add 198.18.1\$k.$host/24 dev vec\$k && ip link set vec\$k up || exit 1
	done; ip -6 addr add fd00:9::$host/64 dev vec0 nodad"
	check_err $? "guest $g could not bring its links up"
done
for k in 0 1 2; do
	exec_in a python3 "$here/gso_size.py" vec$k $big
	check_err $? "a could not raise vec$k's gso_max_size to $big"
done
# a ring too shallow for the pieces of one cut keeps 64 KiB, and says so
exec_in a ip link set vec3 up
exec_in a dmesg | grep -q "vec3: gso_max=$big needs a transmit ring of 40 or more: 65536 with 16"
check_err $? "vec3 (depth=16) did not say its ring is too shallow for gso_max=$big"
! exec_in a python3 "$here/gso_size.py" vec3 $big 2>/dev/null
check_err $? "vec3 (depth=16) let gso_max_size rise to $big"
exec_in b iperf3 -s -D >/dev/null
check_err $? "no iperf3 server in b"

# send K [IPERF ARGS]: 2 s of TCP from a to b over vecK
send() {
	local k=$1

	shift
	reach a "198.18.1$k.2" 30 || return 1
	exec_in a iperf3 -c "${dst:-198.18.1$k.2}" -t 2 -l 1M "$@" >/dev/null
}

# vec0: both take them
send 0
check_err $? "iperf3 over vec0 (IPv4) failed"
dst=fd00:9::2 send 0
check_err $? "iperf3 over vec0 (IPv6) failed"
tx=$(xs a vec0 tx_big_frames) rx=$(xs b vec0 rx_big_frames)
echo "# vec0, both ends gso_max=$big: a sent $tx frames beyond 64 KiB, b received $rx"
[ "${tx:-0}" -gt 100 ] && [ "${rx:-0}" -ge "${tx:-0}" ]
check_err $? "super-frames beyond 64 KiB did not cross vec0 whole (a sent ${tx:-none}, b got ${rx:-none})"
for c in rx_truncated rx_encaps_errors; do
	[ "$(xs b vec0 $c)" = 0 ]
	check_err $? "b's vec0 counted $c"
done
[ "$(exec_in b cat /sys/class/net/vec0/statistics/rx_length_errors)" = 0 ]
check_err $? "b's vec0 counted frames longer than its buffers"
[ "$(xs a vec0 tx_big_refused)" = 0 ]
check_err $? "the host refused a's super-frames on vec0"

# vec1: b takes 64 KiB, vec2: b is plain
for k in 1 2; do
	send $k
	check_err $? "iperf3 over vec$k failed"
	tx=$(xs a vec$k tx_big_frames)
	[ "$tx" = 0 ]
	check_err $? "a sent $tx frames beyond 64 KiB over vec$k"
done
rx=$(xs b vec1 rx_big_frames)
[ "$rx" = 0 ]
check_err $? "b took $rx frames beyond 64 KiB on vec1 (gso_max=65536)"

# the host refuses them: a cuts to 64 KiB and TCP goes on
exec_in a sh -c "mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
	f=/sys/kernel/debug/fail_vecnet_big
	echo 0 >\$f/verbose && echo 100 >\$f/probability && echo 1 >\$f/times"
check_err $? "a could not arm fail_vecnet_big"
rx0=$(xs b vec0 rx_big_frames)
send 0
check_err $? "iperf3 over vec0 failed once the host refused a super-frame"
refused=$(xs a vec0 tx_big_refused) rx=$(( $(xs b vec0 rx_big_frames) - rx0 ))
echo "# vec0, the host refusing: a counted $refused refusal(s), b then received $rx frames beyond 64 KiB"
[ "$refused" = 1 ] && [ "$rx" = 0 ]
check_err $? "a did not fall back to 64 KiB once refused ($refused refused, b got $rx more)"
exec_in a dmesg | grep -q "refused a super-frame beyond 64 KiB"
check_err $? "a did not say that the host refused its super-frame"

# Through vecswitch: c and d (gso_max=262144) get a shortcut channel and
# tell each other on it what they take; f (64 KiB) gets one too, and
# says nothing.  e (64 KiB, shortcut=0) gets c's frames through the
# switch (65554), which must never see one beyond 64 KiB from c.
require_vecswitch
start_switch "$ns" --dgram "$TEST_TMP/sw.sock" --ctl "$TEST_TMP/ctl"
check_err $? "vecswitch did not start: $(tail -n 3 "$TEST_TMP/switch.log")"
ip+=([c]=198.18.20.3 [d]=198.18.20.4 [e]=198.18.20.5 [f]=198.18.20.6)
declare -A extra=([c]=",gso_max=$big" [d]=",gso_max=$big" [e]=",shortcut=0" [f]="")
for g in c d e f; do
	agent "$ns" big "$g" -a "vec0:transport=unixdgram,path=$TEST_TMP/sw.sock,local=$TEST_TMP/$g.sock,depth=128${extra[$g]}"
done
agents_ready "super-frames beyond 64 KiB" c d e f
for g in c d e f; do
	exec_in "$g" sh -c "ip addr add ${ip[$g]}/24 dev vec0 && ip link set vec0 up"
	check_err $? "guest $g could not bring vec0 up"
done
exec_in c python3 "$here/gso_size.py" vec0 $big
check_err $? "c could not raise vec0's gso_max_size to $big"
for g in d e f; do
	exec_in "$g" iperf3 -s -D >/dev/null
	reach c "${ip[$g]}" 30
	check_err $? "c never reached $g"
done
exec_in c iperf3 -c "${ip[d]}" -t 3 -l 1M >/dev/null
check_err $? "iperf3 c -> d failed"
tx=$(xs c vec0 tx_big_frames) rx=$(xs d vec0 rx_big_frames) chan=$(xs d vec0 rx_chan_frames)
echo "# c -> d through the switch and their channel: c sent $tx frames beyond 64 KiB, d received $rx, $chan from the channel"
[ "${tx:-0}" -gt 100 ] && [ "${rx:-0}" -ge "${tx:-0}" ] && [ "${chan:-0}" -gt 100 ]
check_err $? "super-frames beyond 64 KiB did not cross c and d's channel whole"
for g in e f; do
	tx0=$(xs c vec0 tx_big_frames)
	exec_in c iperf3 -c "${ip[$g]}" -t 2 -l 1M >/dev/null
	check_err $? "iperf3 c -> $g failed"
	tx=$(( $(xs c vec0 tx_big_frames) - tx0 )) rx=$(xs "$g" vec0 rx_big_frames)
	[ "$tx" = 0 ] && [ "$rx" = 0 ]
	check_err $? "frames beyond 64 KiB went to $g (gso_max=65536): c sent $tx, $g got $rx"
done
[ "$(xs f vec0 rx_chan_frames)" -gt 100 ]
check_err $? "c's flow to f did not take their channel"
bad=0
for k in rx_oversize rx_bad_len rx_bad_vnet rx_errors; do
	bad=$((bad + $(port_stat c $k)))
done
echo "# the switch's port for c: $(port_stat c rx_gso) super-frames, $bad refused"
[ "$bad" = 0 ] && [ "$(port_stat c rx_gso)" -gt 0 ]
check_err $? "the switch refused $bad of c's frames, or got no super-frame from it"
stop_switch
check_err $? "vecswitch did not exit cleanly"

log_test "super-frames beyond 64 KiB: whole where both take them, cut where not, and after a refusal"
exit "$RET"
