#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vecswitch ctl capture and top. Guests a and b, on a switch with its
# default options, first get a shortcut channel. A capture on a's port then
# withdraws it (and says so): a's pings to b cross the switch and tcpdump
# reads the echo requests and replies, with the guests' MACs, back from the
# pcap file. Once the capture ends, the pair gets a new channel. A capture
# whose client never reads must not hold forwarding up: the frames it could
# not take are lost to it and counted, and the same flow's rate with a
# capture read to /dev/null and with one never read goes to the log, for
# the reader (no timed assertion); that capture ends on a message carrying
# a descriptor, which the switch passes to its closer thread. Bad capture
# requests are refused with a
# message, and ctl top prints a line per port.

source "$(dirname "$(readlink -f "$0")")/../lib.sh"
require_cmd iperf3 python3 tcpdump
require_vecswitch

# port_id GUEST: the id of the port of the guest's socket
port_id() {
	ctl ports --json | python3 -c 'import json,sys
print([p["id"] for p in json.load(sys.stdin)["ports"] if p["name"] == sys.argv[1]][0])' \
		"$TEST_TMP/$1.sock"
}

ns=$(netns_add capture)
declare -A mac=([a]=02:76:65:00:e0:01 [b]=02:76:65:00:e0:02)
declare -A ip=([a]=198.18.9.1 [b]=198.18.9.2)

start_switch "$ns" --dgram "$TEST_TMP/dgram.sock" --ctl "$TEST_TMP/ctl"
check_err $? "vecswitch did not start: $(tail -n 3 "$TEST_TMP/switch.log")"
for g in a b; do
	agent "$ns" vsw "$g" -a vec0:"transport=unixdgram,path=$TEST_TMP/dgram.sock,local=$TEST_TMP/$g.sock,mac=${mac[$g]},depth=128"
done
guests_up "capture" a b
reach_guest a b
exec_in b iperf3 -s -D >/dev/null
check_err $? "no iperf3 server in b"

# the pair's channel
exec_in a ping -c 20 -i 0.05 "${ip[b]}" >/dev/null
wait_for 10 xstat_ge a chan_opened 1
check_err $? "a and b got no channel before the capture"
pa=$(port_id a)

# a capture on a's port: the channel goes, the pings cross the switch.
# (The client runs as itself in the background, not as "ctl ... &", whose
# $! would be a subshell's that does not pass SIGINT on.)
env -u LD_PRELOAD "$VECSWITCH" ctl --ctl "$TEST_TMP/ctl" capture --port "$pa" \
	"$TEST_TMP/ping.pcap" 2>"$TEST_TMP/cap.err" &
cap=$!
wait_for 10 grep -q "channels withdrawn" "$TEST_TMP/cap.err"
check_err $? "the capture did not say it withdrew a's channel: $(cat "$TEST_TMP/cap.err")"
wait_for 10 xstat_ge a chan_closed 1
check_err $? "a kept its channel while its port was captured"
exec_in a ping -c 5 -i 0.2 "${ip[b]}" >/dev/null
check_err $? "a's pings to b failed during the capture"
kill -INT "$cap"
wait "$cap"
check_err $? "the capture client failed: $(cat "$TEST_TMP/cap.err")"
sed 's/^/#   /' "$TEST_TMP/cap.err"
tcpdump -n -e -r "$TEST_TMP/ping.pcap" icmp >"$TEST_TMP/ping.txt" 2>"$TEST_TMP/tcpdump.err"
check_err $? "tcpdump could not read the capture: $(cat "$TEST_TMP/tcpdump.err")"
req=$(grep -c "${mac[a]} > ${mac[b]}.* ${ip[a]} > ${ip[b]}: ICMP echo request" "$TEST_TMP/ping.txt")
rep=$(grep -c "${mac[b]} > ${mac[a]}.* ${ip[b]} > ${ip[a]}: ICMP echo reply" "$TEST_TMP/ping.txt")
echo "# tcpdump -r found $req echo requests a -> b and $rep replies b -> a"
[ "$req" -ge 5 ] && [ "$rep" -ge 5 ]
check_err $? "the capture lacks the pings: $(head -n 4 "$TEST_TMP/ping.txt")"

# the channel comes back once the capture is over
exec_in a ping -c 20 -i 0.05 "${ip[b]}" >/dev/null
wait_for 10 xstat_ge a chan_opened 2
check_err $? "a and b got no new channel after the capture"

# a flow under a capture that is read, then under one never read: the
# switch forwards as before and counts what that capture lost.  The stuck
# one is ended by a message with a descriptor in it.
env -u LD_PRELOAD "$VECSWITCH" ctl --ctl "$TEST_TMP/ctl" capture --port "$pa" \
	/dev/null 2>"$TEST_TMP/null.err" &
cap=$!
wait_for 10 grep -q "channels withdrawn" "$TEST_TMP/null.err"
exec_in a iperf3 -c "${ip[b]}" -t 2 -J >"$TEST_TMP/read.json"
check_err $? "iperf3 under a capture read to /dev/null failed"
kill -INT "$cap"
wait "$cap"
check_err $? "the /dev/null capture client failed: $(cat "$TEST_TMP/null.err")"
python3 - "$TEST_TMP/ctl" "$pa" "$TEST_TMP/stop" >"$TEST_TMP/stuck.txt" 2>&1 <<'EOF' &
import array, os, socket, struct, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.connect(sys.argv[1])
s.sendall(f"capture port {sys.argv[2]}\n".encode())
print("started", flush=True)
# never read, until told to stop (the file appears), 120 s at most
for _ in range(1200):
    if os.path.exists(sys.argv[3]):
        break
    time.sleep(0.1)
# ended by a byte that carries a descriptor: the switch must hand it to
# its closer thread, not close it itself, and still end the capture.  A
# kernel with SO_PASSRIGHTS refuses the descriptor (EPERM): then a byte.
r, w = os.pipe()
try:
    s.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [r]))])
    print("descriptor sent", flush=True)
except PermissionError:
    s.send(b"x")
    print("descriptor refused by the kernel", flush=True)
s.shutdown(socket.SHUT_WR)
data = b""
s.settimeout(10)
while True:
    d = s.recv(1 << 20)
    if not d:
        break
    data += d
at, end = 8, None
while at + 24 <= len(data):
    typ, _, port, n, orig, ts = struct.unpack_from("=HHIIIQ", data, at)
    if typ == 3:
        end = struct.unpack_from("=QQ", data, at + 24)
    at += 24 + n
print("end", *end if end else ("none",))
EOF
stuck=$!
wait_for 10 grep -q started "$TEST_TMP/stuck.txt"
exec_in a iperf3 -c "${ip[b]}" -t 2 -J >"$TEST_TMP/stuck.json"
check_err $? "iperf3 under a capture never read failed: the switch was held up"
ctl ports >/dev/null
check_err $? "the switch did not answer ctl beside a capture never read"
touch "$TEST_TMP/stop"
wait "$stuck"
read -r _ captured lost <<<"$(grep '^end' "$TEST_TMP/stuck.txt")"
echo "# the stuck capture's end: $(grep '^descriptor' "$TEST_TMP/stuck.txt")"
echo "# a -> b through the switch: $(iperf_mbps "$TEST_TMP/read.json") Mbit/s beside a capture read to /dev/null, $(iperf_mbps "$TEST_TMP/stuck.json") Mbit/s beside one never read ($captured frames taken, $lost lost)"
[ "${lost:-0}" -gt 0 ] 2>/dev/null
check_err $? "the capture never read lost no frame, or gave no end: $(cat "$TEST_TMP/stuck.txt")"

# bad requests, and top
ctl capture --port 99999 "$TEST_TMP/bad.pcap" 2>"$TEST_TMP/bad.err"
[ $? -eq 1 ] && grep -q "no such port" "$TEST_TMP/bad.err" && [ ! -s "$TEST_TMP/bad.pcap" ]
check_err $? "a capture of a port that does not exist: $(cat "$TEST_TMP/bad.err")"
ctl capture --snaplen 10 - 2>"$TEST_TMP/bad.err"
[ $? -eq 2 ] && grep -q "snaplen" "$TEST_TMP/bad.err"
check_err $? "a snap length of 10 was not refused: $(cat "$TEST_TMP/bad.err")"
ctl top --count 1 >"$TEST_TMP/top.txt"
check_err $? "ctl top failed"
sed 's/^/#   /' "$TEST_TMP/top.txt"
[ "$(grep -c "^$pa " "$TEST_TMP/top.txt")" = 1 ]
check_err $? "ctl top has no line for a's port $pa"

stop_switch
check_err $? "vecswitch did not exit cleanly"
! grep -q "runtime error\|ERROR: AddressSanitizer" "$TEST_TMP/switch.log"
check_err $? "sanitizer report: $(grep -m3 "runtime error\|AddressSanitizer" "$TEST_TMP/switch.log")"

log_test "ctl capture: pings in pcap, channels withdrawn and back, a stuck reader loses frames, not the switch; ctl top"
exit "$RET"
