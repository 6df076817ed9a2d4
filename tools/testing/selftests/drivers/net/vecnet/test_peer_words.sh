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
#   vec4  bess to a socket behind that directory: a hard failure, in
#         words too
#   vec5  bess with a src= socket that a live process holds
#   vec6  unixdgram with a local= socket that a live process holds
#   vec7  bess whose peer is not there yet, and whose src= a live
#         process takes while it retries: the error names src=
#   vec8  unixdgram whose switch answers at first, then a directory on
#         the way closes: said and counted as the directory's
#
# Each reason at the peer's socket also shows in the device's ethtool
# -S: its own counter (peer_no_socket, peer_wrong_socket, peer_denied,
# peer_dir_denied, peer_unreachable) counts the failed tries and the
# others stay at 0; a socket of the device's own that it cannot bind is
# no reason of the peer's, and counts in none of them.  Then vec0's
# switch appears, and the carrier comes on without a word more than
# "peer back".

source "$(dirname "$(readlink -f "$0")")/../lib.sh"
require_cmd setpriv
require_vecswitch

ns=$(netns_add words)
start_switch "$ns" --dgram "$TEST_TMP/sw.sock" --vhost-user "$TEST_TMP/vhost.sock"
check_err $? "vecswitch did not start: $(tail -n 3 "$TEST_TMP/switch.log")"
chown 65534 "$TEST_TMP/sw.sock"
mkdir -m 0700 "$TEST_TMP/closed"
chown 65534 "$TEST_TMP/closed"
mkdir -m 0755 "$TEST_TMP/open"
SWITCH_LOG=$TEST_TMP/open.log start_switch "$ns" --dgram "$TEST_TMP/open/sw.sock"
check_err $? "vec8's switch did not start: $(tail -n 3 "$TEST_TMP/open.log")"

# shellcheck disable=SC2016  # expanded in the guest
script='for d in vec0 vec1 vec2 vec3 vec7 vec8; do ip link set $d up; done
for d in vec4 vec5 vec6; do ip link set $d up 2>/dev/null && echo "$d came up" >>"$UML_OUT/up"; done
for d in vec0 vec1 vec2 vec3 vec4 vec5 vec6; do ethtool -S $d >"$UML_OUT/$d.stats"; done
while [ ! -e "$UML_OUT/go" ]; do sleep 0.1; done
for d in vec7 vec8; do ethtool -S $d >"$UML_OUT/$d.stats"; done
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
	-a "vec4:transport=bess,dst=$TEST_TMP/closed/sp.sock" \
	-a "vec5:transport=bess,dst=$TEST_TMP/later-sp.sock,src=$TEST_TMP/vhost.sock" \
	-a "vec6:transport=unixdgram,path=$TEST_TMP/sw.sock,local=$TEST_TMP/vhost.sock" \
	-a "vec7:transport=bess,dst=$TEST_TMP/never-sp.sock,src=$TEST_TMP/src7.sock" \
	-a "vec8:transport=unixdgram,path=$TEST_TMP/open/sw.sock" \
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
said "vec4: $TEST_TMP/closed/sp.sock: permission denied on the way there: a directory is closed to host uid 0"
said "vec5: $TEST_TMP/vhost.sock: in use by a socket that is still open (another guest's?): give this device a path of its own"
said "vec6: $TEST_TMP/vhost.sock: in use by a socket that is still open (another guest's?): give this device a path of its own"
[ ! -e "$TEST_TMP/g/up" ]
check_err $? "a bess device came up with a mistake no retry mends: $(cat "$TEST_TMP/g/up" 2>/dev/null)"

# ethtool -S: the device's reason counted, no other
reasons="peer_no_socket peer_wrong_socket peer_denied peer_dir_denied peer_unreachable"
# shellcheck disable=SC2317  # run by wait_for
stats_written() { [ -s "$TEST_TMP/g/$1.stats" ]; }
wait_for 30 stats_written vec6
check_err $? "the guest wrote no ethtool -S"
# reason_counted DEV REASON: only REASON counted (none: no reason at all)
reason_counted() {
	local dev=$1 want=$2 r n

	for r in $reasons; do
		n=$(xstat "$TEST_TMP/g/$dev.stats" "$r")
		if [ "$r" = "$want" ]; then
			[ "$n" -ge 1 ] || { echo "# $dev: $r is $n"; return 1; }
		else
			[ "$n" = 0 ] || { echo "# $dev: $r is $n, not 0"; return 1; }
		fi
	done
}
reason_counted vec0 peer_no_socket
check_err $? "vec0's ethtool -S does not say there is no socket"
reason_counted vec1 peer_wrong_socket
check_err $? "vec1's ethtool -S does not say the socket is of the wrong kind"
reason_counted vec2 peer_denied
check_err $? "vec2's ethtool -S does not say the socket is closed to it"
reason_counted vec3 peer_dir_denied
check_err $? "vec3's ethtool -S does not say a directory is closed to it"
reason_counted vec4 peer_dir_denied
check_err $? "vec4's (bess) ethtool -S does not say a directory is closed to it"
reason_counted vec5 none
check_err $? "vec5's (bess) ethtool -S counts its own src= in use as the peer's"
reason_counted vec6 none
check_err $? "vec6's ethtool -S counts its own local= in use as the peer's"

# vec7 retries its absent peer; a live socket takes its src= meanwhile
# (between two binds of its own: vec7 removes its src= after each try)
wait_for 10 ln "$TEST_TMP/vhost.sock" "$TEST_TMP/src7.sock" 2>/dev/null
check_err $? "could not put a live socket at vec7's src="
said "vec7: $TEST_TMP/src7.sock: in use by a socket that is still open"
! grep -aq "vec7: $TEST_TMP/never-sp.sock: in use" "$TEST_TMP/g/console.log"
check_err $? "vec7 names its peer's socket for its own src= in use"
# vec8's switch stays, the directory to it closes
chown 65534 "$TEST_TMP/open"
chmod 0700 "$TEST_TMP/open"
said "vec8: $TEST_TMP/open/sw.sock: permission denied on the way there: a directory is closed to host uid 0"

# vec0's switch comes
SWITCH_LOG=$TEST_TMP/later.log start_switch "$ns" --dgram "$TEST_TMP/later.sock"
check_err $? "the second switch did not start: $(cat "$TEST_TMP/later.log")"
touch "$TEST_TMP/g/go"
wait "$gpid"
check_err $? "vec0 got no carrier once its switch was there: $(tail -n 3 "$TEST_TMP/g/console.log")"
wait_for 5 stats_written vec8
check_err $? "the guest wrote no ethtool -S for vec7 and vec8"
xstat "$TEST_TMP/g/vec7.stats" peer_unreachable | grep -qx 0
check_err $? "vec7's ethtool -S counts its own src= in use as the peer's"
reason_counted vec8 peer_dir_denied
check_err $? "vec8's ethtool -S does not say a directory closed on the way, once it was up"
! grep -aE 'vec[0-9]: .*(\(-[0-9]+\)|: -[0-9]+$)' "$TEST_TMP/g/console.log"
check_err $? "an errno number on the console"
[ "$(grep -ac 'vec0: no socket at' "$TEST_TMP/g/console.log")" = 1 ]
check_err $? "vec0's reason was said more than once"

log_test "the driver says why the switch's socket does not answer, and what to do"
exit "$RET"
