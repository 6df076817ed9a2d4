#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A guest announces itself when its carrier comes on, so a learning
# switch can reach it before it has sent anything of its own.  The guest
# has IPv6 off on vec0 and starts no traffic; vecswitch must still learn
# its MAC, once after "ip link set up" and again after the switch
# restarts at the same path (the guest reconnects by itself).  In
# between, the idle guest's carrier goes off although it sends nothing.

source "$(dirname "$(readlink -f "$0")")/vecnet_lib.sh"
require_cmd ethtool
[ -x "${VECSWITCH:-}" ] || { echo "SKIP: no vecswitch binary in \$VECSWITCH"; exit "$ksft_skip"; }

ns=$(netns_add announce)
sock=$TEST_TMP/switch.sock
ctl=$TEST_TMP/switch.ctl
mac=02:76:65:00:a0:01

switch_pid=
start_switch() {
	rm -f "$sock"
	# (no LD_PRELOAD: the kselftest runner's stdbuf upsets the ASan build)
	ip netns exec "$ns" env -u LD_PRELOAD "$VECSWITCH" --dgram "$sock" --ctl "$ctl" \
		2>>"$TEST_TMP/switch.log" &
	switch_pid=$!
	on_exit "kill $switch_pid 2>/dev/null"
	wait_for 10 test -S "$ctl"
}

# learned: the switch's forwarding table holds the guest's MAC
# shellcheck disable=SC2317  # invoked through wait_for
learned() {
	env -u LD_PRELOAD "$VECSWITCH" ctl --ctl "$ctl" fdb 2>/dev/null | grep -qi "^$mac "
}

start_switch
check_err $? "vecswitch did not start: $(tail -n 3 "$TEST_TMP/switch.log")"

sg=$(guest_script g <<'EOS'
sysctl -qw net.ipv6.conf.vec0.disable_ipv6=1 || exit 1
vec_up 198.18.4.1/24 || exit 1
echo up
# no traffic of our own: wait for the test to say stop, 60 s at most
for i in $(seq 1 600); do
	[ -e stop ] && break
	sleep 0.1
done
ethtool -S vec0 >after.stats
echo done
EOS
)
guest_bg g 120 -n "$ns" -a "vec0:transport=unixdgram,path=$sock,mac=$mac" -- sh "$sg"

wait_for 60 grep -q '^up' "$(guest_out g output.log)"
check_err $? "the guest did not bring vec0 up"
wait_for 10 learned
check_err $? "the switch did not learn the guest's MAC after link up"

# A switch stopped cleanly removes its socket file.  The guest, which
# sends nothing, must still notice within its once-a-second check.
kill "$switch_pid"
wait "$switch_pid" 2>/dev/null
wait_for 10 console_has g "vec0: peer at $sock exited, its socket file is gone"
check_err $? "the idle guest kept its carrier after the switch exited"
start_switch
check_err $? "vecswitch did not restart"
wait_for 15 learned
check_err $? "the switch did not learn the guest again after its restart"

touch "$(guest_out g stop)"
guest_wait g
check_err $? "guest failed: $(tail -n 3 "$(guest_out g output.log)" 2>/dev/null)"
lost=$(xstat "$(guest_out g after.stats)" peer_lost)
back=$(xstat "$(guest_out g after.stats)" peer_back)
[ "$lost" -ge 1 ] && [ "$back" -ge 1 ]
check_err $? "the guest's peer_lost is $lost, peer_back $back"
no_crash g
check_err $? "guest kernel complained"

log_test "the guest announces itself on carrier up"
exit "$RET"
