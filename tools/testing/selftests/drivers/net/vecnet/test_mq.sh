#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Multiqueue devices (queues=N) on guests of two virtual CPUs.
#
# tap: the guest's vec0 has two queues on a multiqueue host tap.  Many
# TCP flows each way must use both queues in both directions, and the
# per-queue counters must add up to the device's own.  ethtool -l shows
# the channels; -L changes them while the device is up and while it is
# down, down to one queue and back to two, each time with the path
# working afterwards, and refuses more than the CPUs.  NAPI follows the
# queues: the netdev netlink dump lists one instance per queue that is
# up, in the order the core wants (newest first), each keeping its id
# when the channels change, and threaded NAPI goes on and off with one
# queue and with two, up and down, without hanging.  A tap without
# multi_queue offers one channel only.
#
# unixdgram: two guests with two queues each on a vecswitch, TCP with
# many flows both ways.  Each receiving guest sees frames on both of
# its queues, the switch shows each guest as one port with two queues
# and one forwarding entry per guest.  That with shortcut=0 (every frame
# through the switch), and on the default path, where two more such
# guests get a shortcut channel per queue: each opens one on each queue,
# the switch lists one channel of two queues, and each receive queue
# carries more than 10% of a 16-flow TCP load each way.  When one of
# them goes down to one queue, every channel closes, the next is queue
# 0's alone, and the other steers its frames into it.  adaptive-tx holds a stream of
# small frames for the coalescing timer, and nothing without it; so does
# rx-usecs on the receiving side, but not a ping flood.  Then
# the channels change while frames wait in the rings: each is sent or
# counted as dropped.
#
# Options: queues= beyond the CPUs, on a transport with one queue, and
# on unixdgram without virtio-net headers are refused at boot with an
# error naming the problem.

source "$(dirname "$(readlink -f "$0")")/../lib.sh"
require_cmd iperf3 ethtool
require_vecswitch
cfg=$(dirname "$(readlink -f "$VMLINUX")")/.config
if ! grep -qx CONFIG_SMP=y "$cfg" 2>/dev/null; then
	echo "SKIP: $VMLINUX was built without SMP (the 6.12 kernel has none)"
	exit "$ksft_skip"
fi


# stat_of NAME COUNTER: one counter of ethtool -S vec0 in guest NAME
stat_of() {
	awk -v n="$2:" '$1 == n { print $2 }' "$TEST_TMP/$1.stats"
}

# chan_up NAME: guest NAME has a channel open (for wait_for)
# shellcheck disable=SC2317  # run by wait_for
chan_up() {
	exec_in "$1" ethtool -S vec0 |
		awk '$1 == "chan_opened:" { o = $2 } $1 == "chan_closed:" { c = $2 }
		     END { exit !(o > c) }'
}

# queues_used NAME DIR: both queues of guest NAME moved frames in DIR
# (rx or tx) since its last snapshot, per ethtool -S
queues_used() {
	local g=$1 dir=$2 k v

	exec_in "$g" ethtool -S vec0 >"$TEST_TMP/$g.stats"
	for k in 0 1; do
		v=$(stat_of "$g" "${dir}_queue_${k}_packets")
		echo "# $g: ${dir}_queue_${k}_packets $v"
		[ "${v:-0}" -gt 100 ]
		check_err $? "$g's queue $k moved ${v:-no} frames in $dir"
	done
}

# queues_add_up NAME: the per-queue counters sum to the device's own,
# read together: ethtool -S before and after ip -s link the same (a
# stray frame, an ARP or ND, moved nothing between), ten tries at most
queues_add_up() {
	local g=$1 dir sum link

	# shellcheck disable=SC2016  # expanded in the guest
	exec_in "$g" sh -c 'for i in $(seq 10); do
		ethtool -S vec0 >../"$1".stats && ip -s -j link show vec0 >../"$1".link &&
		ethtool -S vec0 | cmp -s - ../"$1".stats && exit 0
		sleep 0.2
	done; exit 1' sh "$g"
	check_err $? "$g's counters never held still for a snapshot"
	for dir in rx tx; do
		sum=$(( $(stat_of "$g" "${dir}_queue_0_packets") +
			$(stat_of "$g" "${dir}_queue_1_packets") ))
		link=$(link_stat "$TEST_TMP/$g.link" "${dir}_packets")
		[ "$sum" = "$link" ]
		check_err $? "$g: $dir queues sum to $sum frames, the device says $link"
	done
}

# --- tap ----------------------------------------------------------------
ns=$(netns_add mq)
ip -n "$ns" tuntap add dev mqtap mode tap multi_queue
ip -n "$ns" addr add 198.18.10.1/24 dev mqtap
ip -n "$ns" link set mqtap up
ip -n "$ns" tuntap add dev sqtap mode tap
ip netns exec "$ns" iperf3 -s -B 198.18.10.1 >"$TEST_TMP/server.log" 2>&1 &
on_exit "kill $! 2>/dev/null"
wait_for 10 sh -c "ip netns exec $ns ss -ltn | grep -q :5201"

agent "$ns" mq t --cpus 2 -m 384M \
	-a "vec0:transport=tap,ifname=mqtap,queues=2" \
	-a "vec1:transport=tap,ifname=mqbad,queues=3" \
	-a "vec2:transport=gre,src=127.0.0.1,dst=127.0.0.1,queues=2" \
	-a "vec3:transport=unixdgram,path=/nonexistent,vnet=0,queues=2" \
	-a "vec4:transport=unixdgram,path=/nonexistent,vnet=0,local=$TEST_TMP/t4.sock" \
	-a "vec5:transport=tap,ifname=sqtap"
agents_ready "multiqueue" t

for e in "vec1: option 'queues': 3 is more than the guest's 2 CPUs" \
	 "vec2: option 'queues': transport gre has one queue" \
	 "vec3: option 'queues': needs vnet=auto or vnet=1"; do
	console_has t "$e"
	check_err $? "no error '$e' on the console"
done

# ...and a plain link (vnet=0) offers no more than one to ethtool -L
got=$(exec_in t ethtool -l vec4 | awk '/^Combined:/ { print $2; exit }')
[ "$got" = 1 ]
check_err $? "ethtool -l offers vec4 (vnet=0) up to '$got' channels"
! exec_in t ethtool -L vec4 combined 2 2>/dev/null
check_err $? "ethtool -L gave vec4 (vnet=0) two queues"

# ...and so does a tap without multi_queue, before it was ever up and
# while up, and -L 2 is refused before it can take the link down
for state in down up; do
	[ "$state" = down ] || exec_in t ip link set vec5 up
	got=$(exec_in t ethtool -l vec5 | awk '/^Combined:/ { print $2; exit }')
	[ "$got" = 1 ]
	check_err $? "ethtool -l offers vec5 (a single-queue tap, $state) up to '$got' channels"
	! exec_in t ethtool -L vec5 combined 2 2>/dev/null
	check_err $? "ethtool -L gave vec5 (a single-queue tap, $state) two queues"
done
! console_has t "cannot attach to tap sqtap"
check_err $? "vec5 tried to attach two queues to a single-queue tap"
exec_in t ip link set vec5 down

exec_in t sh -c 'ip addr add 198.18.10.2/24 dev vec0 && ip link set vec0 up'
check_err $? "vec0 did not come up"
exec_in t ethtool -l vec0 >"$TEST_TMP/channels"
[ "$(grep -c '^Combined:[[:space:]]*2$' "$TEST_TMP/channels")" = 2 ]
check_err $? "ethtool -l does not show 2 combined channels of at most 2: $(tr '\n' ' ' <"$TEST_TMP/channels")"
reach t 198.18.10.1
check_err $? "the guest cannot reach the host over the multiqueue tap"

exec_in t iperf3 -c 198.18.10.1 -P 16 -t 3 >/dev/null
check_err $? "TCP guest->host, 16 flows, failed"
queues_used t tx
exec_in t iperf3 -c 198.18.10.1 -P 16 -t 3 -R >/dev/null
check_err $? "TCP host->guest, 16 flows, failed"
queues_used t rx
queues_add_up t

# ethtool -L: taken while up and while down, both ways; never beyond
# the CPUs
! exec_in t ethtool -L vec0 combined 3 2>/dev/null
check_err $? "ethtool -L took 3 channels on a device of at most 2"
for step in "1 up" "2 up" "1 down" "2 down"; do
	read -r n state <<<"$step"
	if [ "$state" = up ]; then
		exec_in t ethtool -L vec0 combined "$n"
	else
		exec_in t sh -c "ip link set vec0 down && ethtool -L vec0 combined $n && ip link set vec0 up"
	fi
	check_err $? "ethtool -L combined $n while $state failed"
	got=$(exec_in t ethtool -l vec0 | awk '/^Combined:/ { v = $2 } END { print v }')
	[ "$got" = "$n" ]
	check_err $? "after ethtool -L combined $n while $state, ethtool -l shows $got"
	reach t 198.18.10.1
	check_err $? "no path with $n channels, changed while $state"
done
exec_in t iperf3 -c 198.18.10.1 -P 16 -t 2 -R >/dev/null
check_err $? "TCP host->guest after the channel changes failed"

# NAPI: napis NAME lists vec0's instances in the order of the netlink
# dump, "id N threaded T pid P" each (napi_list.py)
napis() {
	exec_in t python3 "$VECNET_TEST_DIR/napi_list.py" vec0 >"$TEST_TMP/napi.$1"
	check_err $? "no NAPI dump ($1)"
	sed "s/^/# napi $1: /" "$TEST_TMP/napi.$1"
}
# napi_ids NAME: the ids of dump NAME, as listed
napi_ids() { awk '{ printf "%s%s", sep, $2; sep = " " }' "$TEST_TMP/napi.$1"; }
# napis_after N NAME IDS: ethtool -L vec0 combined N, after which dump
# NAME lists the ids IDS
napis_after() {
	exec_in t ethtool -L vec0 combined "$1"
	check_err $? "ethtool -L combined $1 failed"
	napis "$2"
	[ "$(napi_ids "$2")" = "$3" ]
	check_err $? "with $1 queue(s) the dump lists '$(napi_ids "$2")', not '$3'"
}
# threaded_flip WHEN: 1 then 0 to vec0's threaded returns within 10 s,
# whether the writes are taken or refused.  A write that hangs holds
# the device's lock and cannot be killed: the guest is lost for what
# follows, so the test ends there.
threaded_flip() {
	# shellcheck disable=SC2016  # expanded in the guest
	exec_in t sh -c 'f=/sys/class/net/vec0/threaded; rm -f napi.flipped
		{ echo 1 >$f; echo 0 >$f; touch napi.flipped; } >/dev/null 2>&1 &
		for i in $(seq 100); do [ -e napi.flipped ] && exit 0; sleep 0.1; done
		exit 1' && return
	check_err 1 "threaded 1 then 0 on vec0 ($1) did not return within 10 s"
	log_test "multiqueue: threaded NAPI"
	exit "$RET"
}

napis two
two=$(napi_ids two)
sort -k2,2nr -c "$TEST_TMP/napi.two" && [ "$(wc -l <"$TEST_TMP/napi.two")" = 2 ]
check_err $? "with two queues the dump is not two NAPI ids, newest first: $two"
# each instance names its interrupt, each queue its instance, and the
# queues' counters are there (qstats), queue 0's having counted frames
! awk '$4 <= 0 { bad = 1 } END { exit !bad }' "$TEST_TMP/napi.two"
check_err $? "a NAPI instance without its interrupt: $(cat "$TEST_TMP/napi.two")"
exec_in t python3 "$VECNET_TEST_DIR/napi_list.py" vec0 --queues >"$TEST_TMP/queues"
exec_in t python3 "$VECNET_TEST_DIR/napi_list.py" vec0 --qstats >"$TEST_TMP/qstats"
sed 's/^/# /' "$TEST_TMP/queues" "$TEST_TMP/qstats"
for q in "rx 0" "rx 1" "tx 0" "tx 1"; do
	n=$(awk -v q="queue $q" 'index($0, q " ") == 1 { print $5 }' "$TEST_TMP/queues")
	[ -n "$n" ] && [ "$n" != 0 ] && grep -q "^id $n " "$TEST_TMP/napi.two"
	check_err $? "queue $q names no NAPI instance of the dump (${n:-none})"
	grep -q "^qstats $q packets [0-9]* bytes [0-9]*$" "$TEST_TMP/qstats"
	check_err $? "no qstats for queue $q"
done
[ "$(awk '$2 == "rx" && $3 == 0 { print $5 }' "$TEST_TMP/qstats")" -gt 0 ] 2>/dev/null
check_err $? "qstats: queue rx 0 counted nothing"
# one queue: queue 0's instance alone, with its id
napis_after 1 one "${two##* }"
threaded_flip "up, one queue"
napis unthreaded
! grep -qv ' threaded 0 pid 0$' "$TEST_TMP/napi.unthreaded"
check_err $? "threaded 0 left a NAPI in a thread"
# two again: queue 1's instance is back with its own id, in front
napis_after 2 again "$two"
threaded_flip "up, two queues"
# what the user wrote stays, whatever the channels do
exec_in t sh -c "ethtool -L vec0 combined 1 && ethtool -L vec0 combined 2"
check_err $? "ethtool -L 1 then 2 failed"
[ "$(exec_in t cat /sys/class/net/vec0/threaded)" = 0 ]
check_err $? "ethtool -L turned threaded NAPI back on after the user turned it off"
exec_in t ip link set vec0 down
threaded_flip "down"
exec_in t ip link set vec0 up
check_err $? "vec0 did not come up after the threaded changes"
reach t 198.18.10.1
check_err $? "no path after the threaded changes"

# --- unixdgram through vecswitch -----------------------------------------
# shortcut=0 (a, b): frames between the two go through the switch, which
# spreads them over the receiver's sockets; default (c, d): a channel
# per queue
sock=$TEST_TMP/switch.sock
switch_at "$ns" "$sock" "$TEST_TMP/ctl"
check_err $? "the switch did not start"
declare -A ip=([a]=198.18.12.1 [b]=198.18.12.2 [c]=198.18.12.3 [d]=198.18.12.4)
declare -A shortcut=([a]=",shortcut=0" [b]=",shortcut=0" [c]="" [d]="")
for g in a b c d; do
	agent "$ns" mq "$g" --cpus 2 -m 384M \
		-a "vec0:transport=unixdgram,path=$sock,local=$TEST_TMP/$g.sock,queues=2${shortcut[$g]}"
done
agents_ready "multiqueue" a b c d
guests_up "multiqueue" a b c d
reach_guest a b
reach_guest b a
for g in a b c d; do
	wait_for 10 sh -c "[ \"\$($VECNET_SRC/scripts/uml-exec $TEST_TMP/$g -- ethtool -S vec0 |
		awk '\$1 == \"mq_joined:\" { print \$2 }')\" = 1 ]"
	check_err $? "guest $g's second queue never joined its port"
done

for g in a b; do
	exec_in "$g" sh -c 'iperf3 -s -D -p 5201 --logfile /dev/null'
done
exec_in a iperf3 -c "${ip[b]}" -P 16 -t 3 >/dev/null
check_err $? "TCP a->b, 16 flows, through the switch failed"
exec_in a iperf3 -c "${ip[b]}" -P 16 -t 3 -R >/dev/null
check_err $? "TCP b->a, 16 flows, through the switch failed"
for g in a b; do
	queues_used "$g" rx
	queues_used "$g" tx
	queues_add_up "$g"
done

# rx_shares NAME: each receive queue of guest NAME took more than 10% of
# the frames it received since its last snapshot (\$TEST_TMP/NAME.stats)
rx_shares() {
	local g=$1 k v total=0
	declare -A was now

	for k in 0 1; do
		was[$k]=$(stat_of "$g" "rx_queue_${k}_packets")
	done
	exec_in "$g" ethtool -S vec0 >"$TEST_TMP/$g.stats"
	for k in 0 1; do
		now[$k]=$(( $(stat_of "$g" "rx_queue_${k}_packets") - ${was[$k]:-0} ))
		total=$(( total + now[$k] ))
	done
	for k in 0 1; do
		v=${now[$k]}
		echo "# $g: rx queue $k took $v of $total frames"
		[ "$total" -gt 0 ] && [ $(( v * 10 )) -gt "$total" ]
		check_err $? "$g's receive queue $k took $v of $total frames (10% at least wanted)"
	done
}

# The default path: once the two talk, each has a channel on each queue
exec_in c ping -c 20 -i 0.05 -q "${ip[d]}" >/dev/null
for g in c d; do
	wait_for 10 sh -c "[ \"\$($VECNET_SRC/scripts/uml-exec $TEST_TMP/$g -- ethtool -S vec0 |
		awk '\$1 == \"chan_opened:\" { print \$2 }')\" = 2 ]"
	check_err $? "guest $g did not open a channel on each of its 2 queues: $(guest_xstat "$g" chan_opened) opened"
	exec_in "$g" ethtool -S vec0 >"$TEST_TMP/$g.stats"
done
ctl channels --json >"$TEST_TMP/channels.json"
python3 -c 'import json, sys
ch = json.load(open(sys.argv[1]))["channels"]
assert len(ch) == 1 and ch[0]["queues"] == 2, ch' "$TEST_TMP/channels.json"
check_err $? "the switch does not list one channel of 2 queues: $(cat "$TEST_TMP/channels.json")"
exec_in d sh -c 'iperf3 -s -D -p 5201 --logfile /dev/null'
exec_in c iperf3 -c "${ip[d]}" -P 16 -t 3 >/dev/null
check_err $? "TCP c->d, 16 flows, on channels failed"
rx_shares d
exec_in c iperf3 -c "${ip[d]}" -P 16 -t 3 -R >/dev/null
check_err $? "TCP d->c, 16 flows, on channels failed"
rx_shares c
for g in c d; do
	v=$(guest_xstat "$g" tx_chan_frames)
	[ "${v:-0}" -gt 1000 ]
	check_err $? "guest $g sent ${v:-no} frames on its channels"
done

# c goes down to one queue with its channels open: all of them close on
# both guests, and the next channel is queue 0's alone, into which d,
# with two queues, steers every frame for c
exec_in c ethtool -L vec0 combined 1
check_err $? "c could not go down to one queue with its channels open"
for g in c d; do
	wait_for 10 xstat_ge "$g" chan_closed 2
	check_err $? "guest $g closed $(guest_xstat "$g" chan_closed) of its 2 channels"
done
exec_in c ping -c 40 -i 0.05 -q "${ip[d]}" >/dev/null
for g in c d; do
	wait_for 15 xstat_ge "$g" chan_opened 3
	check_err $? "guest $g has no new channel: $(guest_xstat "$g" chan_opened) opened"
	exec_in "$g" ethtool -S vec0 >"$TEST_TMP/$g.stats"
done
# A channel given up meanwhile (a receiver that read nothing for 100 ms:
# a busy host, the debug kernel) sends frames through the switch on both
# queues until the next: such a flow is tried again, three times at most
for try in 1 2 3; do
	wait_for 15 chan_up d
	exec_in d ethtool -S vec0 >"$TEST_TMP/d.stats"
	was0=$(stat_of d tx_queue_0_packets) was1=$(stat_of d tx_queue_1_packets)
	closed=$(stat_of d chan_closed)
	exec_in c iperf3 -c "${ip[d]}" -P 16 -t 2 -R >/dev/null
	check_err $? "TCP d->c, 16 flows, with one queue on c failed"
	exec_in d ethtool -S vec0 >"$TEST_TMP/d.stats"
	q0=$(( $(stat_of d tx_queue_0_packets) - was0 ))
	q1=$(( $(stat_of d tx_queue_1_packets) - was1 ))
	[ "$(stat_of d chan_closed)" = "$closed" ] && break
	echo "# d's channel closed during try $try ($q0 frames on queue 0, $q1 on queue 1)"
done
echo "# d with a channel on queue 0 only: sent $q0 frames on queue 0, $q1 on queue 1"
[ "$(stat_of d chan_closed)" = "$closed" ] && [ "$q0" -gt 200 ] &&
	[ $(( q1 * 20 )) -lt "$q0" ]
check_err $? "d sent $q0 frames on queue 0 and $q1 on queue 1, which has no channel (or its channel kept closing)"

# adaptive-tx: a stream of small frames is held for the coalescing timer
# and leaves in batches; without it no frame waits for the timer.  A
# hold of 5 ms (tx-usecs) makes any sender of over 200 frames a second a
# stream, however slow the kernel (the debug one is).
declare -A usecs=([off]=0 [on]=5000)
for mode in off on; do
	exec_in a ethtool -C vec0 adaptive-tx "$mode" tx-usecs "${usecs[$mode]}"
	check_err $? "ethtool -C adaptive-tx $mode failed"
	exec_in a ethtool -c vec0 | grep -q "^Adaptive RX: on  TX: $mode"
	check_err $? "ethtool -c does not show adaptive-tx $mode"
	before=$(guest_xstat a tx_coalesce_timer)
	exec_in a iperf3 -c "${ip[b]}" -u -l 64 -b 0 -t 2 >/dev/null
	check_err $? "64-byte UDP a->b with adaptive-tx $mode failed"
	held=$(( $(guest_xstat a tx_coalesce_timer) - before ))
	echo "# adaptive-tx $mode: the coalescing timer ran $held times"
	if [ "$mode" = on ]; then
		[ "$held" -gt 10 ]
	else
		[ "$held" -eq 0 ]
	fi
	check_err $? "adaptive-tx $mode: the coalescing timer ran $held times"
done
exec_in a ethtool -C vec0 adaptive-tx off tx-usecs 0

# Receive coalescing: rx-usecs 500 and adaptive-rx by default.  b reads
# a one-way stream of small datagrams in batches its timer brings, in
# fewer host calls than frames; a ping flood (request and answer) brings
# no timer; with rx-usecs 0 no signal goes off.  5 ms makes any sender
# of over 200 frames a second a stream (the debug kernel).
exec_in b ethtool -c vec0 >"$TEST_TMP/b.coalesce"
grep -Eq "^rx-usecs:[[:space:]]+500$" "$TEST_TMP/b.coalesce" &&
	grep -q "^Adaptive RX: on " "$TEST_TMP/b.coalesce"
check_err $? "ethtool -c does not show rx-usecs 500 and adaptive-rx on: $(grep -i rx "$TEST_TMP/b.coalesce")"
! exec_in b ethtool -C vec0 rx-usecs 10001 >"$TEST_TMP/rxu.log" 2>&1 &&
	grep -q "rx-usecs is at most 10000" "$TEST_TMP/rxu.log"
check_err $? "rx-usecs 10001 was not refused by name: $(cat "$TEST_TMP/rxu.log")"
rx_frames() {
	exec_in b ethtool -S vec0 >"$TEST_TMP/b.stats"
	echo $(( $(stat_of b rx_queue_0_packets) + $(stat_of b rx_queue_1_packets) ))
}
for usecs in 5000 0; do
	exec_in b ethtool -C vec0 rx-usecs "$usecs"
	check_err $? "ethtool -C rx-usecs $usecs failed"
	f0=$(rx_frames) k0=$(stat_of b rx_kicks) t0=$(stat_of b rx_coalesce_timer)
	h0=$(stat_of b rx_irq_held)
	exec_in a iperf3 -c "${ip[b]}" -u -l 64 -b 0 -t 2 >/dev/null
	check_err $? "64-byte UDP a->b with rx-usecs $usecs failed"
	f=$(( $(rx_frames) - f0 )) k=$(( $(stat_of b rx_kicks) - k0 ))
	t=$(( $(stat_of b rx_coalesce_timer) - t0 )) h=$(( $(stat_of b rx_irq_held) - h0 ))
	echo "# rx-usecs $usecs: b read $f frames in $k calls; signal off $h times, $t timed reads"
	if [ "$usecs" = 0 ]; then
		[ "$t" = 0 ] && [ "$h" = 0 ]
	else
		[ "$h" -ge 1 ] && [ "$t" -gt 10 ] && [ $(( k * 2 )) -lt "$f" ]
	fi
	check_err $? "rx-usecs $usecs: b read $f frames in $k calls, signal off $h times, $t timed reads"
done
exec_in b ethtool -C vec0 rx-usecs 5000
exec_in b ethtool -S vec0 >"$TEST_TMP/b.stats"
t0=$(stat_of b rx_coalesce_timer)
exec_in a ping -f -c 500 -W 1 "${ip[b]}" >/dev/null
check_err $? "a's ping flood to b failed"
t=$(( $(guest_xstat b rx_coalesce_timer) - t0 ))
echo "# a ping flood of 500 to b brought $t timed reads"
[ "$t" -le 25 ]
check_err $? "b held a ping flood's requests for its timer ($t timed reads for 500 pings)"
exec_in b ethtool -C vec0 rx-usecs 500

# one port per guest, with its two queues, and one forwarding entry each
ctl ports --json >"$TEST_TMP/ports.json"
ctl fdb --json >"$TEST_TMP/fdb.json"
for g in a b; do
	mac=$(exec_in "$g" cat /sys/class/net/vec0/address)
	python3 - "$TEST_TMP/ports.json" "$TEST_TMP/fdb.json" "$TEST_TMP/$g.sock" "$mac" <<'PY'
import json, sys
ports = json.load(open(sys.argv[1]))["ports"]
fdb = json.load(open(sys.argv[2]))["fdb"]
mine = [p for p in ports if p["name"] == sys.argv[3]]
assert len(mine) == 1, f"{len(mine)} ports named {sys.argv[3]}"
assert mine[0]["queues"] == 2, f"the port has {mine[0]['queues']} queues"
ent = [e for e in fdb if e["mac"] == sys.argv[4]]
assert len(ent) == 1, f"{len(ent)} entries for {sys.argv[4]}"
assert ent[0]["port"] == mine[0]["id"], "the entry is on another port"
PY
	check_err $? "guest $g is not one port with two queues and one entry"
done

# Frames waiting in the rings when the channels change: with the switch
# stopped, a sends 3000 frames past the qdisc (PACKET_QDISC_BYPASS: each
# either taken by the driver or refused to the sender), fills its socket
# and then its rings, and changes its channels while up.  Every frame
# the driver took is sent or counted as dropped, and some were dropped.
# The stack sends nothing of its own meanwhile (no ARP, no IPv6), which
# the counters would take for one of those frames.
exec_in a sh -c 'sysctl -qw net.ipv6.conf.vec0.disable_ipv6=1 && ip link set vec0 arp off'
kill -STOP "$SWITCH_PID"
exec_in a ip -s -j link show vec0 >"$TEST_TMP/a.before"
# shellcheck disable=SC2016  # a python program
exec_in a python3 -c 'import socket, sys
sys.path.insert(0, sys.argv[2])
import vecnet_wire as w
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.setsockopt(263, 20, 1)  # SOL_PACKET, PACKET_QDISC_BYPASS
s.bind(("vec0", 0))
mac = bytes.fromhex(sys.argv[1].replace(":", ""))
ok = 0
for i in range(3000):
    try:
        s.send(w.eth(w.BCAST, mac, w.ETH_P_TEST, i.to_bytes(4, "big") + bytes(96)))
        ok += 1
    except OSError:
        pass
print(ok)' "$(exec_in a cat /sys/class/net/vec0/address)" \
	"$VECNET_SRC/tools/testing/selftests/drivers/net" >"$TEST_TMP/a.taken"
exec_in a sh -c 'ethtool -L vec0 combined 1 && ip -s -j link show vec0' \
	>"$TEST_TMP/a.after"
check_err $? "a could not change its channels with frames waiting"
kill -CONT "$SWITCH_PID"
taken=$(cat "$TEST_TMP/a.taken")
sent=$(( $(link_stat "$TEST_TMP/a.after" tx_packets) - $(link_stat "$TEST_TMP/a.before" tx_packets) ))
dropped=$(( $(link_stat "$TEST_TMP/a.after" tx_dropped) - $(link_stat "$TEST_TMP/a.before" tx_dropped) ))
echo "# frames taken by the driver $taken: sent $sent, dropped when the channels changed $dropped"
[ "$((sent + dropped))" = "$taken" ]
check_err $? "of $taken frames taken, $sent were sent and $dropped dropped"
[ "$dropped" -gt 0 ]
check_err $? "no frame was waiting in the rings when the device went down"
exec_in a ip link set vec0 arp on
reach_guest a b

log_test "multiqueue: tap and vecswitch with 2 queues, ethtool -l/-L, NAPI, option errors"
exit "$RET"
