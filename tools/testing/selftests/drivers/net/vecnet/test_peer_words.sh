#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A guest's usual mistakes with the switch's socket, as the driver tells
# them on the console: in words and with what to do, not as an errno
# number.  One guest, run as uid 0 without capabilities (so that file
# permissions hold for it as for any user), with one device per mistake:
#
#   vec0  no socket at the path yet (no switch)
#   vec1  the switch's --vhost-user socket, a stream: the --dgram one is
#         wanted
#   vec2  the switch's --dgram socket, which belongs to another user and
#         is closed to this one: its owner and mode, and --mode/--group
#   vec3  a path through a directory closed to the guest's user
#
# Then vec0's switch appears, and the carrier comes on without a word
# more than "peer back".

source "$(dirname "$(readlink -f "$0")")/../lib.sh"
require_cmd setpriv
require_vecswitch

ns=$(netns_add words)
start_switch "$ns" --dgram "$TEST_TMP/sw.sock" --vhost-user "$TEST_TMP/vhost.sock"
check_err $? "vecswitch did not start: $(tail -n 3 "$TEST_TMP/switch.log")"
chown 65534 "$TEST_TMP/sw.sock"
mkdir -m 0700 "$TEST_TMP/closed"
chown 65534 "$TEST_TMP/closed"

# shellcheck disable=SC2016  # expanded in the guest
script='for d in vec0 vec1 vec2 vec3; do ip link set $d up; done
while [ ! -e "$UML_OUT/go" ]; do sleep 0.1; done
for i in $(seq 100); do
	[ "$(cat /sys/class/net/vec0/carrier)" = 1 ] && exit 0
	sleep 0.1
done
exit 1'
ip netns exec "$ns" setpriv --inh-caps=-all --bounding-set=-all \
	"$UML_RUN" -k "$VMLINUX" -N "words-$$" -t 60 -q -o "$TEST_TMP/g" \
	-a "vec0:transport=unixdgram,path=$TEST_TMP/later.sock" \
	-a "vec1:transport=unixdgram,path=$TEST_TMP/vhost.sock" \
	-a "vec2:transport=unixdgram,path=$TEST_TMP/sw.sock" \
	-a "vec3:transport=unixdgram,path=$TEST_TMP/closed/sw.sock" \
	-- sh -c "$script" &
gpid=$!
on_exit "kill $gpid 2>/dev/null"

said() {
	wait_for 30 console_has g "$1"
	check_err $? "the console does not say '$1': $(grep -a 'vec[0-9]:' "$TEST_TMP/g/console.log" | tail -n 8)"
}
said "vec0: no socket at $TEST_TMP/later.sock yet (is the switch running?)"
said "vec1: $TEST_TMP/vhost.sock: wrong kind of socket: is it the switch's --vhost-user or --stream socket? use its --dgram one"
said "vec2: $TEST_TMP/sw.sock: permission denied: the socket is uid 65534 gid 0 mode 0600, this guest runs as host uid 0; the switch's --mode and --group say who may attach"
said "vec3: $TEST_TMP/closed/sw.sock: permission denied on the way there: a directory is closed to host uid 0"

# vec0's switch comes
SWITCH_LOG=$TEST_TMP/later.log start_switch "$ns" --dgram "$TEST_TMP/later.sock"
check_err $? "the second switch did not start: $(cat "$TEST_TMP/later.log")"
touch "$TEST_TMP/g/go"
wait "$gpid"
check_err $? "vec0 got no carrier once its switch was there: $(tail -n 3 "$TEST_TMP/g/console.log")"
! grep -aE 'vec[0-9]: .*\((-[0-9]+)\)' "$TEST_TMP/g/console.log"
check_err $? "an errno number on the console"
[ "$(grep -ac 'vec0: no socket at' "$TEST_TMP/g/console.log")" = 1 ]
check_err $? "vec0's reason was said more than once"

log_test "the driver says why the switch's socket does not answer, and what to do"
exit "$RET"
