#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Shortcut channels. Guests a and b with the default options, on vecswitch
# with its default options: their TCP flow must go through the channel
# the switch hands them (the guests' channel counters count it, the
# switch's port counters do not; ctl top shows their channel and says
# so), and guest c (shortcut=0) gets no channel. A flood into either of b's sockets (the channel, the
# switch's) leaves the other answering pings. When b's kernel stops, a
# gives up the stalled channel and its frames for c do not wait behind
# those for b. When b's end closes (vec0 down and up) a falls back to the
# switch and a new channel follows; when d takes b's MAC, the switch
# withdraws a's channel. Then
# chan_peer.py, a hostile stand-in for the switch, checks that a guest
# refuses bad offers, closes descriptors forced on it, takes only the
# pinned address's frames from a channel, and closes the channel on
# UNCHAN; with two queues (an SMP kernel), the second refuses
# descriptors and channels until it is offered a channel per queue, then
# takes one.

source "$(dirname "$(readlink -f "$0")")/../lib.sh"
require_cmd iperf3 python3
require_vecswitch

here=$(dirname "$(readlink -f "$0")")

ns=$(netns_add shortcut)
declare -A mac=([a]=02:76:65:00:d0:01 [b]=02:76:65:00:d0:02 [c]=02:76:65:00:d0:03
		[d]=02:76:65:00:d0:02 [e]=02:76:65:00:d0:05)
declare -A ip=([a]=198.18.7.1 [b]=198.18.7.2 [c]=198.18.7.3 [d]=198.18.7.4 [e]=198.18.7.5)
declare -A extra=([a]="" [b]="" [c]=",shortcut=0" [d]="")

start_switch "$ns" --dgram "$TEST_TMP/dgram.sock" --ctl "$TEST_TMP/ctl"
check_err $? "vecswitch did not start: $(tail -n 3 "$TEST_TMP/switch.log")"

opts() { echo "transport=unixdgram,path=$TEST_TMP/dgram.sock,local=$TEST_TMP/$1.sock,mac=${mac[$1]},depth=128${extra[$1]}"; }
for g in a b c; do
	agent "$ns" vsw "$g" -a vec0:"$(opts "$g")"
done
guests_up "shortcut channels" a b c
for g in b c; do
	reach_guest a "$g"
	exec_in "$g" iperf3 -s -D >/dev/null
	check_err $? "no iperf3 server in $g"
done

# a -> b: through the channel, past the switch
f0=$(port_stat a rx_frames)
exec_in a iperf3 -c "${ip[b]}" -t 3 -J >"$TEST_TMP/ab.json"
check_err $? "iperf3 a -> b failed"
frames=$(( $(port_stat a rx_frames) - f0 ))
tx=$(guest_xstat a tx_chan_frames)
rx=$(guest_xstat b rx_chan_frames)
echo "# a -> b: $(iperf_mbps "$TEST_TMP/ab.json") Mbit/s; a sent $tx frames into its channel, b read $rx from its own; the switch got $frames from a"
[ "$(sw_stat chan_opened)" -ge 1 ]
check_err $? "the switch opened no channel"
[ "${tx:-0}" -gt 1000 ] && [ "${rx:-0}" -gt 1000 ]
check_err $? "the flow did not take the channel (a sent $tx, b read $rx)"
# the channel is open before the flow (the pings above): what the switch
# still sees of a is an odd broadcast, not the flow's frames
[ "$frames" -lt 20 ]
check_err $? "the switch still forwarded $frames frames of a's flow"
[ "$(guest_xstat b rx_chan_bad)" = 0 ]
check_err $? "b refused $(guest_xstat b rx_chan_bad) frames of a's channel"

# ctl top: a's and b's rates stay near 0 with their flow on the channel;
# top shows them with one channel each, and says where their frames are
ctl top --count 1 >"$TEST_TMP/top.txt"
check_err $? "ctl top failed"
sed 's/^/#   /' "$TEST_TMP/top.txt"
# top_chans GUEST: the CHANNELS column of the guest's port
top_chans() { awk -v n="$TEST_TMP/$1.sock" '$NF == n { print $(NF - 1) }' "$TEST_TMP/top.txt"; }
[ "$(top_chans a)" = 1 ] && [ "$(top_chans b)" = 1 ] && [ "$(top_chans c)" = 0 ]
check_err $? "ctl top does not show a's and b's channel (a: $(top_chans a), b: $(top_chans b), c: $(top_chans c))"
grep -q "past the switch.*tx_chan_frames, rx_chan_frames" "$TEST_TMP/top.txt"
check_err $? "ctl top does not say where the channels' frames are counted"

# a -> c: c takes no channels, the switch forwards
exec_in a iperf3 -c "${ip[c]}" -t 2 -J >"$TEST_TMP/ac.json"
check_err $? "iperf3 a -> c failed"
echo "# a -> c (shortcut=0): $(iperf_mbps "$TEST_TMP/ac.json") Mbit/s"
[ "$(iperf_mbps "$TEST_TMP/ac.json")" -gt 0 ] && [ "$(guest_xstat c chan_opened)" = 0 ] &&
	[ "$(guest_xstat c rx_chan_frames)" = 0 ]
check_err $? "c (shortcut=0) moved nothing or got a channel"

# A flood into one of b's sockets must not starve the other: a floods b
# through the channel while c (shortcut=0) pings b through the switch,
# then c floods b through the switch while a pings b over the channel.
# fair FLOODER PINGER: PINGER's pings to b answered while FLOODER sends
# b 64-byte UDP as fast as it can
fair() {
	local flood got

	exec_in "$1" iperf3 -u -b 0 -l 64 -t 4 -c "${ip[b]}" >/dev/null 2>&1 &
	flood=$!
	sleep 1
	got=$(exec_in "$2" ping -c 10 -i 0.2 -W 1 "${ip[b]}" |
	      sed -n 's/.* \([0-9]*\) received.*/\1/p')
	wait "$flood"
	echo "# $2 -> b while $1 floods b: ${got:-0} of 10 pings answered"
	[ "${got:-0}" -ge 5 ]
}
rx0=$(guest_xstat b rx_chan_frames)
fair a c
check_err $? "b's channel, flooded by a, starved its switch socket: c's pings went unanswered"
[ "$(( $(guest_xstat b rx_chan_frames) - rx0 ))" -gt 1000 ]
check_err $? "a's flood did not take the channel"
fair c a
check_err $? "b's switch socket, flooded by c, starved its channel: a's pings went unanswered"

# b's kernel stops: a's frames for b fill the channel's send buffer (a
# ring of the longest frames, 17 MB here: 24 MB of UDP, in IP fragments,
# is more), and the channel says "later" from then on.  After 100 ms a
# gives it up and sends the rest through the switch, which holds them for
# b; a's ring does not stay blocked behind them, so c answers a at once.
stalled=$(guest_xstat a chan_stalled)
kill -STOP "$(cat "$TEST_TMP/b/pgid")"
exec_in a python3 -c 'import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(1)
for _ in range(400):
    try:
        s.sendto(bytes(60000), (sys.argv[1], 9))
    except OSError:
        break' "${ip[b]}"
check_err $? "a could not send b its datagrams"
wait_for 5 xstat_ge a chan_stalled $(( stalled + 1 ))
check_err $? "a kept its channel to b, whose kernel is stopped ($(guest_xstat a chan_stalled) given up)"
got=$(exec_in a ping -c 10 -i 0.1 -W 1 "${ip[c]}" | sed -n 's/.* \([0-9]*\) received.*/\1/p')
echo "# b stopped: a -> c: ${got:-0} of 10 pings answered"
[ "${got:-0}" = 10 ]
check_err $? "a's frames for c waited behind those for b, whose kernel is stopped"
kill -CONT "$(cat "$TEST_TMP/b/pgid")"
reach_guest a b

# b's end closes: a falls back to the switch, and a new channel comes
opened=$(guest_xstat a chan_opened) closed=$(guest_xstat a chan_closed)
exec_in b sh -c "ip link set vec0 down && ip link set vec0 up"
check_err $? "b could not bring vec0 down and up"
reach_guest a b
exec_in a ping -c 20 -i 0.1 "${ip[b]}" >/dev/null
check_err $? "a lost pings to b once b's end of the channel closed"
wait_for 10 xstat_ge a chan_opened $(( opened + 1 ))
check_err $? "no new channel for a after b came back ($(guest_xstat a chan_opened) opened)"
wait_for 10 xstat_ge a chan_closed $(( closed + 1 ))
check_err $? "a did not close the channel whose other end went"

# d takes b's MAC: the switch withdraws the channels for it
revoked=$(sw_stat chan_revoked)
agent "$ns" vsw d -a vec0:"$(opts d)"
guests_up "shortcut channels" d
# shellcheck disable=SC2317  # run by wait_for
revoked_more() { [ "$(sw_stat chan_revoked)" -gt "$revoked" ]; }
exec_in d ping -c 1 -W 1 "${ip[a]}" >/dev/null
wait_for 10 revoked_more
check_err $? "the switch withdrew no channel when b's MAC moved to d"
wait_for 10 xstat_ge a chan_closed $(( closed + 2 ))
check_err $? "a kept its channel to b's MAC after it moved"

ctl stats | sed 's/^/#   /'
stop_switch
check_err $? "vecswitch did not exit cleanly"
! grep -q "runtime error\|ERROR: AddressSanitizer" "$TEST_TMP/switch.log"
check_err $? "sanitizer report: $(grep -m3 "runtime error\|AddressSanitizer" "$TEST_TMP/switch.log")"

# A hostile switch
e_cpus=() e_mq=""
if grep -qx CONFIG_SMP=y "$(dirname "$(readlink -f "$VMLINUX")")/.config" 2>/dev/null; then
	e_cpus=(--cpus 2) e_mq=",queues=2"
fi
agent "$ns" vsw e "${e_cpus[@]}" \
	-a vec0:"transport=unixdgram,path=$TEST_TMP/fake.sock,local=$TEST_TMP/e.sock,mac=${mac[e]}$e_mq"
python3 "$here/chan_peer.py" "$TEST_TMP/fake.sock" "$VECNET_SRC/scripts/uml-exec" \
	"$TEST_TMP/e" "${mac[e]}" "${ip[e]}" >"$TEST_TMP/peer.log" 2>&1 &
peer=$!
exec_in e sh -c "ip addr add ${ip[e]}/24 dev vec0 && ip link set vec0 up"
check_err $? "guest e did not boot or bring vec0 up"
wait "$peer"
check_err $? "a guest trusted a hostile switch's channels"
cat "$TEST_TMP/peer.log"

log_test "shortcut channels: unicast between guests past the switch, withdrawn, refused when bad"
exit "$RET"
