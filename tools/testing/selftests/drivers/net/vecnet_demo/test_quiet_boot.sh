#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A guest booted as the README says boots quietly: its console shows no
# complaint that is not a problem.  Two guests from vecnet-guest, no
# disk image:
#
#  a  its console written to a file (epoll cannot watch one), and its
#     switch stopped under it, so that vec0 loses its peer (the driver's
#     link work is then queued from the transmit side);
#  b  on a terminal of its own (script(1)), whose controlling session
#     is not the guest's.
#
# Neither console may show "Failed to initialize ubd device", the
# winch thread's "TIOCSCTTY failed", a deprecated workqueue or
# "epollctl add err".

source "$(dirname "$(readlink -f "$0")")/../lib.sh"
require_cmd script
require_vecswitch
# a guest that died early must not take the test with it on a write
trap '' PIPE

helper=$VECNET_SRC/scripts/vecnet-guest
ns=$(netns_add quiet)
sock=$TEST_TMP/sw.sock
start_switch "$ns" --dgram "$sock"
check_err $? "vecswitch did not start: $(tail -n 3 "$TEST_TMP/switch.log")"

# start NAME CMD...: CMD in the background, its input a fifo held open
# on descriptor 5 (a) or 6 (b), its output in $TEST_TMP/NAME.out
mkfifo "$TEST_TMP/a.in" "$TEST_TMP/b.in"
timeout 120 ip netns exec "$ns" "$helper" -k "$VMLINUX" --switch "$sock" "quiet-a-$$" \
	<"$TEST_TMP/a.in" >"$TEST_TMP/a.out" 2>&1 &
pa=$!
on_exit "kill $pa 2>/dev/null"
exec 5>"$TEST_TMP/a.in"
timeout 120 script -qfec \
	"ip netns exec $ns $helper -k $VMLINUX --switch $sock quiet-b-$$" /dev/null \
	<"$TEST_TMP/b.in" >"$TEST_TMP/b.out" 2>&1 &
pb=$!
on_exit "kill $pb 2>/dev/null"
exec 6>"$TEST_TMP/b.in"

for g in a b; do
	wait_for 60 grep -qF "quiet-$g-$$# " "$TEST_TMP/$g.out"
	check_err $? "guest $g has no shell: $(tail -n 3 "$TEST_TMP/$g.out")"
done

# a's switch goes: the link check finds the peer gone
stop_switch
wait_for 20 grep -qF "vec0: peer gone, carrier off" "$TEST_TMP/a.out"
check_err $? "guest a did not notice its switch go: $(tail -n 3 "$TEST_TMP/a.out")"

echo exit >&5
echo exit >&6
wait "$pa"
check_err $? "guest a did not power off cleanly"
wait "$pb"
check_err $? "guest b did not power off cleanly"
exec 5>&- 6>&-

for g in a b; do
	noise=$(grep -aE 'Failed to initialize ubd device|TIOCSCTTY failed|deprecated workqueue|epollctl add err' \
		"$TEST_TMP/$g.out")
	[ -z "$noise" ]
	check_err $? "guest $g's console: $noise"
done

log_test "a guest from vecnet-guest boots without console noise"
exit "$RET"
