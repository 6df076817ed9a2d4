#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What the switch tells of trouble that is not an error of its own, with
# datagram senders standing in for guests (no guest needed):
#
#  1. one MAC sent from two ports in turn (two guests with one address)
#     is logged, without -v, as a possible duplicate, once however often
#     it moves (rate-limited); fdb_moves counts every move;
#  2. a guest whose socket closed is logged (-v) as having left, not as
#     "removed: Connection refused";
#  3. 'ctl stats' leaves out the counters at 0 and says so; --all and
#     --json keep them;
#  4. a vhost-user frontend that starts its device (sets its features)
#     without giving it memory, as QEMU does whose memory is not shared,
#     is logged with what to do, and its port is marked in 'ctl ports'.

LIB_NO_GUEST=1
source "$(dirname "$(readlink -f "$0")")/../lib.sh"
require_cmd python3
require_vecswitch

ns=$(netns_add swlog)
start_switch "$ns" -v --dgram "$TEST_TMP/sw.sock" --ctl "$TEST_TMP/ctl" \
	--vhost-user "$TEST_TMP/vhost.sock"
check_err $? "vecswitch did not start: $(cat "$TEST_TMP/switch.log")"

ip netns exec "$ns" python3 - "$TEST_TMP/sw.sock" "$TEST_TMP" <<'PY'
import os, socket, sys, time
sys.path.insert(0, os.path.join(os.environ["VECNET_SRC"], "tools/testing/selftests/drivers/net"))
import vecnet_wire as w

sw, d = sys.argv[1], sys.argv[2]


def guest(name):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(f"{d}/{name}.sock")
    return s


def frame(src):
    return w.eth(w.BCAST, bytes.fromhex(src), w.ETH_P_TEST, bytes(50))


a, b, c = guest("a"), guest("b"), guest("c")
# a and b both send from one address, in turn
for i in range(8):
    (a, b)[i % 2].sendto(frame("02000000aa01"), sw)
    time.sleep(0.05)
# c sends, then exits; the next broadcast finds its socket closed
c.sendto(frame("02000000cc01"), sw)
time.sleep(0.2)
c.close()
time.sleep(0.1)
a.sendto(frame("02000000aa02"), sw)
time.sleep(0.2)
PY
check_err $? "the senders failed"

log=$TEST_TMP/switch.log
wait_for 5 grep -q 'moved from port .* while in use: two guests with the same MAC address' "$log"
check_err $? "no word of a MAC moving between two ports: $(tail -n 5 "$log")"
n=$(grep -c 'while in use: two guests' "$log")
[ "$n" = 1 ]
check_err $? "the possible duplicate was said $n times, not once"
moves=$(sw_stat fdb_moves)
[ "$moves" -ge 7 ]
check_err $? "fdb_moves is $moves, not 7"

wait_for 5 grep -qE "port [0-9]+ \(dgram $TEST_TMP/c.sock\) left$" "$log"
check_err $? "the guest that exited did not leave: $(grep c.sock "$log")"
! grep -q 'removed: Connection refused' "$log"
check_err $? "a guest that left is logged as an error"

out=$(ctl stats)
! grep -qE '^  [a-z0-9_]+ 0$' <<<"$out" && grep -q 'counters at 0 not shown' <<<"$out" &&
	grep -qE '^  fdb_moves [1-9]' <<<"$out"
check_err $? "ctl stats shows counters at 0, or hides others: $out"
ctl stats --all | grep -qE '^  fdb_aged 0$'
check_err $? "ctl stats --all does not show the counters at 0"
ctl stats --json | grep -q '"fdb_aged":0'
check_err $? "ctl stats --json does not show the counters at 0"

# a frontend that sets its features and then gives no memory table
ip netns exec "$ns" python3 - "$TEST_TMP/vhost.sock" \
	"$(dirname "$(readlink -f "$0")")" <<'PY' &
import struct, sys, time

sys.path.insert(0, sys.argv[2])
from vhost_lib import GET_FEATURES, SET_FEATURES, SET_OWNER
from vhost_guest import Frontend

fe = Frontend(sys.argv[1], "no memory", bytes([2, 0x76, 0x68, 0, 0, 1]))
features = fe.get_u64(GET_FEATURES)
fe.send(SET_OWNER)
fe.send(SET_FEATURES, struct.pack("<Q", features))     # the device starts
time.sleep(20)
PY
fe=$!
on_exit "kill $fe 2>/dev/null"
wait_for 5 grep -q 'the frontend started its device without giving it memory: is its guest memory shared' "$log"
check_err $? "no word of a vhost-user frontend without memory: $(tail -n 3 "$log")"
ctl ports | grep -q 'vhost-user .*\[no memory\]$'
check_err $? "ctl ports does not mark the frontend without memory: $(ctl ports)"
kill "$fe" 2>/dev/null

log_test "the switch says a MAC moves between ports, a guest left, a frontend has no memory; stats without zeros"
exit "$RET"
