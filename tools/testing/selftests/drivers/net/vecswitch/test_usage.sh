#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What the switch says to a user's usual mistakes, no guest needed:
#
#  1. one path for two of its sockets (--dgram X --ctl X) is named as
#     such, not as "in use by a running switch";
#  2. --mode 999 is not an octal mode (it is a number);
#  3. --tap without CAP_NET_ADMIN says what to do, and doing it (a tap
#     device made for the user beforehand) lets the same switch start;
#  4. 'vecswitch ctl' without --ctl finds the service's control socket,
#     /run/vecswitch/ctl.sock (in a mount namespace of the test's own),
#     and says so when there is none;
#  5. a client the control socket does not answer is told why, not
#     handed an empty report;
#  6. a guest whose socket the switch's user cannot reach (a directory
#     on the way is closed to it) is refused for that reason, not as
#     "socket file not found" for a file that is there.

LIB_NO_GUEST=1
source "$(dirname "$(readlink -f "$0")")/../lib.sh"
require_cmd unshare setpriv
require_vecswitch

exits_with 2 "--ctl: $TEST_TMP/x is the path of --dgram too" \
	vsw --dgram "$TEST_TMP/x" --ctl "$TEST_TMP/x"
exits_with 2 "--mode: '999' is not an octal mode" vsw --dgram "$TEST_TMP/x" --mode 999
[ ! -e "$TEST_TMP/x" ]
check_err $? "a refused command line left a socket behind"

# --tap as nobody, without capabilities, in a namespace of the test's
ns=$(netns_add usage)
nobody=(ip netns exec "$ns" setpriv --reuid=65534 --regid=65534 --clear-groups
	--inh-caps=-all --bounding-set=-all)
exits_with 1 "--tap vtap0: not permitted without CAP_NET_ADMIN" \
	"${nobody[@]}" env -u LD_PRELOAD "$VECSWITCH" --tap vtap0
hint=$("${nobody[@]}" env -u LD_PRELOAD "$VECSWITCH" --tap vtap0 2>&1 |
	sed -n 's/.*first: \(ip tuntap .*\)$/\1/p')
[ "$hint" = "ip tuntap add dev vtap0 mode tap user $(id -nu 65534)" ]
check_err $? "--tap: no 'ip tuntap' command in the message: '$hint'"
read -ra hint <<<"$hint"
[ "${#hint[@]}" -gt 1 ] && ip -n "$ns" "${hint[@]:1}"
check_err $? "the suggested '${hint[*]}' failed"
"${nobody[@]}" env -u LD_PRELOAD "$VECSWITCH" --tap vtap0 2>"$TEST_TMP/tap.log" &
pid=$!
on_exit "kill $pid 2>/dev/null"
wait_for 10 grep -q 'running' "$TEST_TMP/tap.log"
check_err $? "the switch did not start on the tap made for its user: $(cat "$TEST_TMP/tap.log")"
kill "$pid" 2>/dev/null

# ctl, the socket path left out: none there, then the service's
# shellcheck disable=SC2016  # expanded by that sh
exits_with 1 "no --ctl PATH given, and the service's control socket /run/vecswitch/ctl.sock is not there" \
	unshare -m --propagation private sh -c \
	'mount -t tmpfs tmpfs /run && exec env -u LD_PRELOAD "$1" ctl ports' sh "$VECSWITCH"
# shellcheck disable=SC2016  # expanded by that sh
out=$(ip netns exec "$ns" unshare -m --propagation private sh -c '
	mount -t tmpfs tmpfs /run && mkdir /run/vecswitch || exit 1
	env -u LD_PRELOAD "$1" --dgram "$2/sw.sock" --ctl /run/vecswitch/ctl.sock 2>"$2/ctl.log" &
	i=0
	while [ ! -S /run/vecswitch/ctl.sock ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	env -u LD_PRELOAD "$1" ctl stats; rc=$?
	kill $!; wait
	exit $rc' sh "$VECSWITCH" "$TEST_TMP" 2>&1)
check_err $? "ctl without --ctl did not reach /run/vecswitch/ctl.sock: $out"
grep -q '^switch io ' <<<"$out"
check_err $? "ctl stats without --ctl printed no report: $out"

# a client the switch does not answer: the socket open to all, the user not
start_switch "$ns" --dgram "$TEST_TMP/sw.sock" --ctl "$TEST_TMP/ctl" --ctl-mode 0666
check_err $? "the switch did not start: $(cat "$TEST_TMP/switch.log")"
chmod 755 "$TEST_TMP"
exits_with 1 "the switch closed without answering" \
	setpriv --reuid=65534 --regid=65534 --clear-groups \
	env -u LD_PRELOAD "$VECSWITCH" ctl --ctl "$TEST_TMP/ctl" ports

# a switch run as nobody, a sender whose socket is in root's 0700 directory
mkdir -m 0755 "$TEST_TMP/swd"
chown 65534 "$TEST_TMP/swd"
mkdir -m 0700 "$TEST_TMP/closed"
ip netns exec "$ns" setpriv --reuid=65534 --regid=65534 --clear-groups \
	env -u LD_PRELOAD "$VECSWITCH" --dgram "$TEST_TMP/swd/sw.sock" --mode 0666 \
	2>"$TEST_TMP/nobody.log" &
pid=$!
on_exit "kill $pid 2>/dev/null"
wait_for 10 test -S "$TEST_TMP/swd/sw.sock"
check_err $? "the switch as nobody did not start: $(cat "$TEST_TMP/nobody.log")"
ip netns exec "$ns" python3 -c 'import os, socket, sys
sys.path.insert(0, os.path.join(os.environ["VECNET_SRC"], "tools/testing/selftests/drivers/net"))
import vecnet_wire as w
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.sendto(w.eth(w.BCAST, bytes.fromhex("020000000001"), w.ETH_P_IP, bytes(50)), sys.argv[2])' \
	"$TEST_TMP/closed/g.sock" "$TEST_TMP/swd/sw.sock"
check_err $? "could not send to the switch"
wait_for 5 grep -q "closed/g.sock refused: a directory on the way to its socket file is closed" \
	"$TEST_TMP/nobody.log"
check_err $? "the switch did not say the guest's directory is closed to it: $(cat "$TEST_TMP/nobody.log")"

log_test "the switch's messages for usual mistakes say what to do"
exit "$RET"
