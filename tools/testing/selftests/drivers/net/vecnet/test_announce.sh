#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A guest announces itself when its carrier comes on, so a learning
# switch can reach it before it has sent anything of its own.  The guest
# has IPv6 off on vec0 and starts no traffic; vecswitch must still learn
# its MAC, once after "ip link set up" and again after the switch
# restarts at the same path (the guest reconnects by itself).  In
# between, the idle guest's carrier goes off although it sends nothing.
# A second guest runs as on a host without unix_diag (nodiag.c,
# preloaded into its kernel process): it must say that it cannot tell,
# keep its carrier until it sends, and then lose it.

source "$(dirname "$(readlink -f "$0")")/../lib.sh"
require_cmd ethtool
require_cmd cc
require_vecswitch

ns=$(netns_add announce)
sock=$TEST_TMP/switch.sock
ctl=$TEST_TMP/switch.ctl
mac=02:76:65:00:a0:01
mac_h=02:76:65:00:a0:02
nodiag=$TEST_TMP/nodiag.so
cc -Wall -Wextra -Werror -shared -fPIC -o "$nodiag" "$VECNET_TEST_DIR/nodiag.c"
check_err $? "cannot build the unix_diag-less preload"

# learned [MAC]: the switch's forwarding table holds the guest's MAC
# shellcheck disable=SC2317  # invoked through wait_for
learned() {
	CTL=$ctl ctl fdb 2>/dev/null | grep -qi "^${1:-$mac} "
}

switch_at "$ns" "$sock" "$ctl"
check_err $? "vecswitch did not start: $(tail -n 3 "$TEST_TMP/switch.log")"

# sh SCRIPT ADDR: no traffic of its own until the test says send (one
# ping to the other guest), then none until stop; 60 s at most
sg=$(guest_script g <<'EOS'
sysctl -qw net.ipv6.conf.vec0.disable_ipv6=1 || exit 1
vec_up "$1/24" || exit 1
echo up
sent=
for i in $(seq 1 600); do
	[ -e stop ] && break
	if [ -e send ] && [ -z "$sent" ]; then
		ping -c 1 -W 1 198.18.4.1 >/dev/null 2>&1
		sent=1
	fi
	sleep 0.1
done
ethtool -S vec0 >after.stats
echo done
EOS
)
guest_bg g 120 -n "$ns" -a "vec0:transport=unixdgram,path=$sock,mac=$mac" -- \
	sh "$sg" 198.18.4.1
LD_PRELOAD=$nodiag guest_bg h 120 -n "$ns" \
	-a "vec0:transport=unixdgram,path=$sock,mac=$mac_h" -- sh "$sg" 198.18.4.2

for g in g h; do
	wait_for 60 grep -q '^up' "$(guest_out $g output.log)"
	check_err $? "guest $g did not bring vec0 up"
done
wait_for 10 learned
check_err $? "the switch did not learn the guest's MAC after link up"
wait_for 10 learned "$mac_h"
check_err $? "the switch did not learn the second guest's MAC after link up"

# A switch stopped cleanly removes its socket file.  The guest, which
# sends nothing, must still notice within its once-a-second check.
kill "$SWITCH_PID"
wait "$SWITCH_PID" 2>/dev/null
wait_for 10 console_has g "vec0: peer at $sock exited, its socket file is gone"
check_err $? "the idle guest kept its carrier after the switch exited"
# The guest whose host cannot tell says so, and keeps its carrier...
wait_for 10 console_has h \
	"vec0: socket file $sock is gone and the host cannot say whether its peer lives"
check_err $? "the guest without unix_diag did not say it cannot tell"
! console_has h "vec0: peer gone, carrier off"
check_err $? "the guest without unix_diag lost its carrier before it sent"
# ...until it sends, which the closed peer refuses
touch "$(guest_out h send)"
wait_for 10 console_has h "vec0: peer gone, carrier off"
check_err $? "the guest without unix_diag kept its carrier after a refused send"

switch_at "$ns" "$sock" "$ctl"
check_err $? "vecswitch did not restart"
wait_for 15 learned
check_err $? "the switch did not learn the guest again after its restart"
wait_for 15 learned "$mac_h"
check_err $? "the switch did not learn the second guest again after its restart"

for g in g h; do
	touch "$(guest_out $g stop)"
	guest_done $g "guest $g failed"
	lost=$(xstat "$(guest_out $g after.stats)" peer_lost)
	back=$(xstat "$(guest_out $g after.stats)" peer_back)
	[ "$lost" -ge 1 ] && [ "$back" -ge 1 ]
	check_err $? "guest $g: peer_lost is $lost, peer_back $back"
	no_crash $g
	check_err $? "guest $g's kernel complained"
done

log_test "the guest announces itself on carrier up"
exit "$RET"
