#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Devices come and go at run time through mconsole: "config vecN=..."
# adds one (a bad one is refused with the reason; fd= naming one of
# UML's own descriptors is refused), "remove vecN" takes it away, and
# its automatically named socket under the uml_dir goes with it.

source "$(dirname "$(readlink -f "$0")")/../lib.sh"
require_cmd uml_mconsole ethtool

ns=$(netns_add mcons)
s=$(guest_script mc <<'EOS'
wait_link() {
	for i in $(seq 1 300); do
		if ip link show vec1 >/dev/null 2>&1; then
			[ "$1" = present ] && return 0
		else
			[ "$1" = absent ] && return 0
		fi
		sleep 0.1
	done
	return 1
}
echo booted
wait_link present || { echo "vec1 never appeared"; exit 1; }
ethtool -i vec1 | grep -q '^driver: vecnet' || exit 1
ip link set vec1 up || exit 1
echo up
wait_link absent || { echo "vec1 never went away"; exit 1; }
echo removed
EOS
)
guest_bg mc 90 -n "$ns" -- sh "$s"
out=$(guest_out mc output.log)
wait_for 30 grep -qx booted "$out"
check_err $? "guest did not boot"
sock=$(echo "$TEST_TMP"/mc/uml/*/mconsole)
# The client's reply socket is abstract, so it lives in the guest's
# namespace too; and it would wait for ever for a guest that is gone.
# A debug guest (KASAN, lockdep) on a loaded host may take a while to
# answer after a device went: 30 s, and what the client said, not nothing.
mc() {
	ip netns exec "$ns" timeout 30 uml_mconsole "$sock" "$@" 2>"$TEST_TMP/mc.err" ||
		echo "(uml_mconsole: exit $?: $(head -c 200 "$TEST_TMP/mc.err"))"
}
wait_for 10 test -S "$sock"
check_err $? "no mconsole socket"

reply=$(mc config "vec1=transport=unixdgram,path=$TEST_TMP/p.sock,depth=0")
echo "# bad config: $reply"
[[ $reply == *"ERR"*"vec1: option 'depth': 0 is out of range 1..1024"* ]]
check_err $? "a bad config was not refused with its reason"

reply=$(mc config "vec1=transport=unixdgram,path=$TEST_TMP/p.sock")
[[ $reply == OK* ]]
check_err $? "config vec1 failed: $reply"
reply=$(mc config "vec1=transport=unixdgram,path=$TEST_TMP/p.sock")
[[ $reply == *"vec1: already configured"* ]]
check_err $? "a second vec1 was not refused: $reply"

wait_for 30 grep -qx up "$out"
check_err $? "guest did not see vec1: $(tail -n 2 "$out")"
auto=$(echo "$TEST_TMP"/mc/uml/*/vec1.sock)
wait_for 5 test -S "$auto"
check_err $? "no socket $auto while vec1 is up"

# fd= names only descriptors the guest was started with: not UML's own
# sockets (its mconsole socket, vec1's), whichever numbers they have
taken="" own=0
for fd in $(seq 3 64); do
	reply=$(mc config "vec2=transport=fd,fd=$fd")
	[[ $reply == OK* ]] && taken+=" $fd"
	[[ $reply == *"descriptor $fd is UML's own"* ]] && own=$((own + 1))
done
echo "# fd=3..64: refused as UML's own: $own"
[ -z "$taken" ] && [ "$own" -ge 2 ]
check_err $? "fd= took UML's own descriptors:$taken ($own refused as UML's own)"

reply=$(mc remove vec1)
[[ $reply == OK* ]]
check_err $? "remove vec1 failed: $reply"
reply=$(mc remove vec7)
[[ $reply == *"vec7: no such device"* ]]
check_err $? "removing a missing device: $reply"
[ ! -e "$auto" ]
check_err $? "$auto left behind after remove"

guest_wait mc
check_err $? "guest: $(tail -n 2 "$out")"
grep -qx removed "$out"
check_err $? "guest did not see vec1 go"
no_crash mc
check_err $? "guest kernel complained"

log_test "mconsole config and remove"
exit "$RET"
