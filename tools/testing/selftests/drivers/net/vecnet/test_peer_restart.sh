#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest A keeps running while its unixdgram peer, guest B, powers off
# and a new B boots at the same socket path: A's carrier goes off when
# B vanishes (B's socket is removed at shutdown) and comes back, and
# ping works again, without rebooting A.

source "$(dirname "$(readlink -f "$0")")/../lib.sh"
require_cmd ethtool ping

ns=$(netns_add restart)
a=$TEST_TMP/a.sock
b=$TEST_TMP/b.sock

sa=$(guest_script ra <<'EOS'
ip addr add 198.18.3.1/24 dev vec0 && ip link set vec0 up
# answers SECS: ping B until it answers, paced, for SECS seconds at most
# (in the guest: lib.sh's reach runs on the host)
answers() {
	end=$(($(date +%s) + $1))
	while [ "$(date +%s)" -lt "$end" ]; do
		ping -c 1 -W 1 198.18.3.2 >/dev/null && return 0
		sleep 0.2
	done
	return 1
}
state=none
answers 100 && { state=first; echo "first peer answers"; }
# The test says when the first B is gone and A has noticed: a new B can
# come up so soon after that no ping of A's in between goes unanswered
for i in $(seq 1 1200); do
	[ -e restarted ] && break
	sleep 0.1
done
[ $state = first ] && answers 100 && { state=back; echo "new peer answers"; }
# Stay until the test says the new B is done: B may not have had its
# own answer yet, and would wait for one in vain once A is gone.
for i in $(seq 1 900); do
	[ -e release ] && break
	sleep 0.1
done
ethtool -S vec0 >after.stats
[ $state = back ]
EOS
)
sb=$(guest_script rb <<'EOS'
ip addr add 198.18.3.2/24 dev vec0 && ip link set vec0 up
ok=0
for i in $(seq 1 60); do
	ping -c 1 -W 1 198.18.3.1 >/dev/null && { echo answered; ok=1; break; }
done
# Stay a while so that A sees us: its own pings may be waiting out an
# unanswered ARP (3 s) when we come.  (Paced here: ping -i does not
# space its packets inside these guests.)
for i in $(seq 1 16); do
	ping -c 1 -W 1 198.18.3.1 >/dev/null
	sleep 0.5
done
[ $ok = 1 ]
EOS
)
guest_bg ra 300 -n "$ns" -a "vec0:transport=unixdgram,local=$a,path=$b" -- sh "$sa"
guest rb1 60 -n "$ns" -a "vec0:transport=unixdgram,local=$b,path=$a" -- sh "$sb"
check_err $? "first B failed"
grep -q answered "$(guest_out rb1 output.log)"
check_err $? "first B never reached A"
[ ! -e "$b" ]
check_err $? "first B left $b behind at shutdown"
# the driver notices by itself, within its once-a-second check
wait_for 30 console_has ra "vec0: peer gone, carrier off"
check_err $? "A did not notice its peer going"

touch "$(guest_out ra restarted)"
guest rb2 60 -n "$ns" -a "vec0:transport=unixdgram,local=$b,path=$a" -- sh "$sb"
check_err $? "second B failed"
touch "$(guest_out ra release)"
guest_done ra "A did not reach the new peer"
lost=$(xstat "$(guest_out ra after.stats)" peer_lost)
back=$(xstat "$(guest_out ra after.stats)" peer_back)
echo "# A: peer_lost $lost, peer_back $back"
[ "$lost" -ge 1 ] && [ "$back" -ge 1 ]
check_err $? "A's peer_lost/peer_back counters did not move"
for g in ra rb1 rb2; do
	no_crash $g
	check_err $? "guest $g kernel complained"
done

log_test "peer restarted at the same path, no reboot"
exit "$RET"
