#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The NAT port's options and forwards, on the host alone (test_nat.sh has
# the guests).  Bad --nat-* values stop the switch with status 2 and a
# line naming the option; a forward to a port in use stops it with 1.
# At run time, `ctl forward` adds, refuses (bad syntax, a duplicate, a
# guest outside the network, a port in use) and removes forwards, and
# the list follows; the listening sockets are there and gone.  17 DHCP
# clients get 16 distinct leases and the 17th none (libslirp's limit),
# and ctl nat lists the 16; hostile DHCP, ARP and NDP frames, fragments
# and a SYN flood harm nothing, and the guard's refusals are counted.  A
# NAT process killed with SIGKILL is counted and comes back with its
# forwards, leaving out one whose port another program took meanwhile;
# it goes with the switch.  A switch run by an unprivileged user has a
# sandboxed NAT process that gives leases too.

LIB_NO_GUEST=1
source "$(dirname "$(readlink -f "$0")")/../lib.sh"
require_cmd python3 ss
require_vecswitch
require_vecnat

ns=$(netns_add natopt)
sock=$TEST_TMP/switch.sock
CTL=$TEST_TMP/ctl

# nat_refused STATUS TEXT ARGS...: the switch on --dgram with ARGS stops
# with STATUS, saying TEXT
nat_refused() {
	rm -f "$sock"
	exits_with "$1" "$2" timeout 10 ip netns exec "$ns" env -u LD_PRELOAD \
		"$VECSWITCH" --dgram "$sock" "${@:3}"
}

nat_refused 2 "--nat-net: '10.0.2.5/24' has host bits set" --nat --nat-net 10.0.2.5/24
nat_refused 2 "--nat-net: '10.0.2.0/28': the prefix must be 8..27" --nat-net 10.0.2.0/28
nat_refused 2 "--nat-net6: 'fd00::/48': give a /64" --nat --nat-net6 fd00::/48
nat_refused 2 "--nat-dns: 10.0.3.3 is not a free address" --nat --nat-dns 10.0.3.3
nat_refused 2 "the guest address is outside the NAT network" --nat-forward tcp:8080:10.0.3.1:80
nat_refused 2 "the guest address is the network's own" --nat-forward tcp:8080:10.0.2.2:80
nat_refused 2 "not tcp|udp:[HOSTADDR:]HOSTPORT:GUESTADDR:GUESTPORT" --nat-forward tcp:8080
nat_refused 2 "the protocol must be tcp or udp" --nat-forward sctp:8080:10.0.2.15:80
nat_refused 2 "the host port is not 1..65535" --nat-forward tcp:0:10.0.2.15:80
nat_refused 2 "its host port is forwarded already" \
	--nat-forward tcp:8080:10.0.2.15:80 --nat-forward tcp:0.0.0.0:8080:10.0.2.16:80
nat_refused 2 "the guest address is outside the NAT network's IPv6 prefix" \
	--nat-forward "tcp:8080:[fd01::5]:80"
nat_refused 2 "the guest address is the network's own" --nat-forward "tcp:8080:[fd00::2]:80"
nat_refused 2 "the host and guest addresses must both be IPv4 or both IPv6" \
	--nat-forward "tcp:[::1]:8080:10.0.2.15:80"
nat_refused 2 "the guest address is not IPv4 or [IPv6]" --nat-forward "tcp:8080:[fd00::g]:80"
nat_refused 2 "not tcp|udp:[HOSTADDR:]HOSTPORT:GUESTADDR:GUESTPORT" --nat-forward "tcp:8080:[fd00::5:80"
nat_refused 2 "the NAT network has no IPv6" --nat-net6 off --nat-forward "tcp:8080:[fd00::5]:80"
out=$(env -u LD_PRELOAD "$VECSWITCH" --stream "$TEST_TMP/s" --nat 2>&1)
[ $? = 2 ] && grep -qF -- "--nat: the NAT port attaches to the --dgram socket" <<<"$out"
check_err $? "--nat without --dgram: $out"

# a port another program holds
ip netns exec "$ns" python3 -c 'import socket, time
s = socket.socket(); s.bind(("127.0.0.1", 18090)); s.listen(); time.sleep(30)' &
holder=$!
on_exit "kill $holder 2>/dev/null"
wait_for 10 sh -c "ip netns exec $ns ss -ltn | grep -q 127.0.0.1:18090"
nat_refused 1 "tcp:127.0.0.1:18090:10.0.2.15:80: the host port is in use" \
	--nat-forward tcp:18090:10.0.2.15:80

# ---- run time -----------------------------------------------------------------

rm -f "$sock"
if ! start_switch "$ns" --dgram "$sock" --ctl "$CTL" --nat --nat-forward tcp:18080:10.0.2.15:80; then
	check_err 1 "vecswitch --nat did not start: $(tail -n 3 "$TEST_TMP/switch.log")"
	log_test "NAT port options"
	exit "$RET"
fi

# fwd_err SPEC TEXT: ctl forward add SPEC fails, saying TEXT
fwd_err() {
	local out

	if out=$(ctl forward add "$1" 2>&1); then
		check_err 1 "forward add $1 was taken"
		return
	fi
	grep -qF -- "$2" <<<"$out"
	check_err $? "forward add $1: want '$2', got: $out"
}

listening() {
	ip netns exec "$ns" ss -Hltun | grep -q "127.0.0.1:$1 "
}

ctl forward add udp:18081:10.0.2.16:53 >/dev/null
check_err $? "forward add udp:18081:10.0.2.16:53 failed"
fwd_err tcp:18080:10.0.2.20:80 "its host port is forwarded already"
fwd_err tcp:18082:10.9.0.1:80 "the guest address is outside the NAT network"
fwd_err tcp:18090:10.0.2.15:80 "the host port is in use"
fwd_err tcp:abc:10.0.2.15:80 "the host port is not 1..65535"
# IPv6: the same port as an IPv4 forward is another socket; [::1] by default
ctl forward add "tcp:18080:[fd00::5054:ff:fe12:3456]:80" >/dev/null
check_err $? "forward add of an IPv6 forward failed"
fwd_err "tcp:[::]:18080:[fd00::7]:80" "its host port is forwarded already"
want="tcp:127.0.0.1:18080:10.0.2.15:80
udp:127.0.0.1:18081:10.0.2.16:53
tcp:[::1]:18080:[fd00::5054:ff:fe12:3456]:80"
[ "$(ctl forward list)" = "$want" ]
check_err $? "forward list: $(ctl forward list)"
ctl forward list --json | python3 -c 'import json, sys
assert len(json.load(sys.stdin)["forwards"]) == 3'
check_err $? "forward list --json: $(ctl forward list --json)"
listening 18080 && listening 18081 && ip netns exec "$ns" ss -Hltn | grep -qF "[::1]:18080 "
check_err $? "the forwards' sockets are not there: $(ip netns exec "$ns" ss -Hltun)"
ctl forward del "tcp:[::1]:18080:[fd00::5054:ff:fe12:3456]:80" >/dev/null
check_err $? "forward del of the IPv6 forward failed"
! ip netns exec "$ns" ss -Hltn | grep -qF "[::1]:18080 "
check_err $? "the IPv6 forward's socket stayed: $(ip netns exec "$ns" ss -Hltn)"
want=$(head -n 2 <<<"$want")

# DISCOVERs that name other MACs than their sender's get no lease (one
# guest could take them all so) and are counted
got=$(ip netns exec "$ns" python3 "$NET_LIB_DIR/vecswitch/dhcp_peer.py" --bind "$TEST_TMP/peer.sock" \
	--switch "$sock" --count 2 --wait 1 --foreign | awk '{ print $2 }' | tr '\n' ' ')
[ "$got" = "none none " ]
check_err $? "DISCOVERs for other MACs than their sender's were offered: $got"
wait_for 5 sw_stat_ge nat_rx_refused 2
check_err $? "the foreign DISCOVERs were not counted: nat_rx_refused $(sw_stat nat_rx_refused)"

# 17 guests' DISCOVERs: 16 distinct leases, .15 to .30, and none for the
# 17th; then hostile frames (cut and garbled DHCP, ARP, NDP, fragments,
# 2000 SYNs to a closed port of this namespace), after which the first
# guest is offered its address again
ip netns exec "$ns" python3 "$NET_LIB_DIR/vecswitch/dhcp_peer.py" --bind "$TEST_TMP/peer.sock" \
	--switch "$sock" --count 17 --wait 2 >"$TEST_TMP/offers.txt"
check_err $? "dhcp_peer.py failed"
got=$(awk '{ print $2 }' "$TEST_TMP/offers.txt" | sort -t. -k4n | tr '\n' ' ')
want_offers="none $(seq -f 10.0.2.%g 15 30 | tr '\n' ' ')"
[ "$got" = "$want_offers" ]
check_err $? "17 DISCOVERs: want 16 leases .15-.30 and none, got: $got"
n=$(ctl nat | grep -c '^ *ARP  02:76:65:44:00:.*  10\.0\.2\.')
[ "$n" = 16 ]
check_err $? "ctl nat lists $n guests, not 16: $(ctl nat)"
# the same 16 as JSON, each MAC with its lease
# shellcheck disable=SC2016  # python's
n=$(ctl nat --json | python3 -c 'import json, sys
g = [e for e in json.load(sys.stdin)["guests"] if e["table"] == "ARP"]
print(len({(e["mac"], e["ip"]) for e in g if e["mac"].startswith("02:76:65:44:00:")
           and e["ip"].startswith("10.0.2.")}))')
[ "$n" = 16 ]
check_err $? "ctl nat --json lists $n guests, not 16: $(ctl nat --json)"
ip -n "$ns" addr add 198.18.211.1/32 dev lo
got=$(ip netns exec "$ns" python3 "$NET_LIB_DIR/vecswitch/dhcp_peer.py" \
	--bind "$TEST_TMP/peer.sock" --switch "$sock" --junk --syn-to 198.18.211.1)
[ "$got" = "02:76:65:44:00:01 10.0.2.15" ]
check_err $? "after hostile frames, the first guest was offered: $got"
[ "$(sw_stat nat_deaths)" = 0 ]
check_err $? "the NAT process died of the hostile frames: $(tail -n 3 "$TEST_TMP/switch.log")"
# shellcheck disable=SC2317  # called through wait_for
refused_some() {
	[ "$(sw_stat nat_rx_refused)" -gt 0 ] && [ "$(sw_stat nat_rx_frames)" -gt 2000 ]
}
wait_for 5 refused_some
check_err $? "the NAT's counters: nat_rx_refused $(sw_stat nat_rx_refused), nat_rx_frames $(sw_stat nat_rx_frames)"
ctl ports | grep -q " nat pid "
check_err $? "ctl ports does not name the NAT port: $(ctl ports)"

# stopped: the switch waits for it nowhere; what is asked of it fails in
# words, and the rest of the control socket answers meanwhile
nat_pid=$(pgrep -P "$SWITCH_PID")
kill -STOP "$nat_pid"
asked=()
for i in 1 2 3 4; do
	ctl nat >"$TEST_TMP/nat-$i.out" 2>&1 &
	asked+=($!)
done
sleep 0.3
t0=$(date +%s%N)
ctl ports >/dev/null
took=$((($(date +%s%N) - t0) / 1000000))
[ "$took" -lt 1000 ]
check_err $? "ctl ports waited $took ms behind ctl nat to a stopped NAT process"
wait "${asked[@]}"
for i in 1 2 3 4; do
	grep -q "^vecswitch ctl: the switch says: error: nat: the NAT process does not answer\|^error: nat: the NAT process does not answer" \
		"$TEST_TMP/nat-$i.out"
	check_err $? "ctl nat to a stopped NAT process: $(cat "$TEST_TMP/nat-$i.out")"
done
kill -CONT "$nat_pid"
ctl nat | grep -q '10\.0\.2\.15'
check_err $? "ctl nat after the NAT process went on: $(ctl nat 2>&1)"

# killed: counted, back with both forwards
kill -KILL "$nat_pid"
wait_for 10 sw_stat_is nat_starts 2
check_err $? "the NAT process was not started again: $(tail -n 3 "$TEST_TMP/switch.log")"
[ "$(sw_stat nat_deaths)" = 1 ]
check_err $? "nat_deaths is $(sw_stat nat_deaths), not 1"
wait_for 10 listening 18081
check_err $? "the forward added at run time is gone after the restart"
[ "$(ctl forward list)" = "$want" ]
check_err $? "forward list after the restart: $(ctl forward list)"

ctl forward del tcp:127.0.0.1:18080:10.0.2.15:80 >/dev/null
check_err $? "forward del failed"
if ctl forward del tcp:127.0.0.1:18080:10.0.2.15:80 >/dev/null 2>&1; then
	check_err 1 "a forward deleted twice"
fi
! listening 18080
check_err $? "the deleted forward still listens"
[ "$(ctl forward list)" = "udp:127.0.0.1:18081:10.0.2.16:53" ]
check_err $? "forward list after del: $(ctl forward list)"

# killed again, and another program takes a forward's port meanwhile:
# the new NAT process leaves that one out and serves the others
ctl forward add tcp:18082:10.0.2.15:22 >/dev/null
check_err $? "forward add tcp:18082:10.0.2.15:22 failed"
# (the taker is started first: on a loaded host Python's start-up alone
# can outlast the switch's half-second pause before the restart)
ip netns exec "$ns" python3 -c 'import socket, time
open("'"$TEST_TMP/ready"'", "w").close()
end = time.monotonic() + 10
while True:
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", 18082))
        break
    except OSError:
        if time.monotonic() > end:
            raise
        time.sleep(0.001)
s.listen()
open("'"$TEST_TMP/taken"'", "w").close()
time.sleep(30)' &
on_exit "kill $! 2>/dev/null"
wait_for 10 test -e "$TEST_TMP/ready"
kill -KILL "$(pgrep -P "$SWITCH_PID")"
wait_for 5 test -e "$TEST_TMP/taken"
check_err $? "could not take port 18082 while the NAT process was down"
wait_for 10 sw_stat_is nat_starts 3
check_err $? "the NAT process was not started a third time"
wait_for 10 grep -q "tcp:127.0.0.1:18082:10.0.2.15:22: the host port is in use; left out" \
	"$TEST_TMP/switch.log"
check_err $? "the NAT process did not say it left the taken forward out"
wait_for 10 listening 18081
check_err $? "the other forward did not come back beside the taken one"

stop_switch
check_err $? "the switch did not stop cleanly"
! pgrep -P "$SWITCH_PID" >/dev/null 2>&1
check_err $? "the NAT process outlived the switch"
if grep -qE "AddressSanitizer|runtime error" "$TEST_TMP/switch.log"; then
	check_err 1 "a sanitizer report: $(grep -E -m 3 "AddressSanitizer|runtime error" "$TEST_TMP/switch.log")"
fi

# ---- a switch of an unprivileged user ---------------------------------------

# its NAT process runs as that user, sandboxed all the same, and answers
udir=$TEST_TMP/nobody
mkdir "$udir" && chmod 777 "$udir" && chmod o+x "$TEST_TMP"
ip netns exec "$ns" setpriv --reuid=65534 --regid=65534 --clear-groups \
	env -u LD_PRELOAD "$VECSWITCH" --dgram "$udir/switch.sock" --ctl "$udir/ctl" --nat \
	2>>"$TEST_TMP/switch.log" &
user_sw=$!
on_exit "kill_job $user_sw"
wait_for 10 test -S "$udir/ctl"
check_err $? "an unprivileged vecswitch --nat did not start"
got=$(ip netns exec "$ns" python3 "$NET_LIB_DIR/vecswitch/dhcp_peer.py" --world \
	--bind "$udir/peer.sock" --switch "$udir/switch.sock" --wait 5)
[ "$got" = "02:76:65:44:00:01 10.0.2.15" ]
check_err $? "no lease from an unprivileged switch's NAT port: $got"
st=/proc/$(pgrep -P "$user_sw")/status
grep -qE '^Uid:\s+65534\s' "$st" && grep -qE '^NoNewPrivs:\s+1' "$st" &&
	grep -qE '^Seccomp:\s+2' "$st"
check_err $? "an unprivileged switch's NAT process is not sandboxed"

log_test "NAT port: bad options refused, forwards added, refused and removed at run time, SIGKILL survived"
exit "$RET"
