#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The NAT port (vecswitch --nat, tools/net/vecnat).  The switch runs in a
# namespace of this test, "host", that reaches a second one, "wan", by a
# route over a veth pair; an HTTP server and a resolver in wan play the
# internet.  Two
# UML guests on the switch take leases by DHCP (busybox udhcpc), distinct
# ones; a pings wan and fetches a file from it over IPv4 and, with the address it
# made from the router advertisement, over IPv6, and resolves a name
# through the DNS forwarder; a serves a file that
# the host fetches through a --nat-forward.  A service on the host's
# 127.0.0.1 is out of the guests' reach; a third guest, on a second
# switch with --nat-host-loopback (and --isolate and --mac-lock, which
# leave it the NAT port), reaches it.  The NAT process is
# stopped (SIGSTOP) while b pings a, and then killed with SIGKILL while
# a pings b, every 50 ms: no ping may be lost,
# the switch counts the death and starts it again, and the forward and
# the way out work again.  10,000 UDP flows from one guest leave the NAT
# process and the guests' own traffic up.  The NAT process runs as
# nobody, with no_new_privs and a seccomp filter.  A QEMU light guest
# (scripts/qemu-initrd.sh, under TCG) on the first switch's vhost-user
# socket takes the next lease, fetches the same file by IPv4 and IPv6,
# resolves the name, and serves a file that the host fetches through a
# second forward.

source "$(dirname "$(readlink -f "$0")")/../lib.sh"
QEMU=${QEMU:-qemu-system-x86_64}
require_cmd python3 busybox curl "$QEMU"
require_vecswitch
require_vecnat

NAME="NAT port: UML and vhost-user QEMU guests, DHCP, DNS, IPv4 and IPv6 out, a forward in, no host loopback unless asked, SIGSTOP and SIGKILL survived"
host=$(netns_add nat)
wan=$(netns_add natwan)
sock=$TEST_TMP/switch.sock
sock2=$TEST_TMP/switch2.sock
CTL=$TEST_TMP/ctl
token=vecnat-$$-$RANDOM

# ---- the internet: wan, one route away ---------------------------------------

ip link add natv0 netns "$host" type veth peer name natv1 netns "$wan" &&
ip -n "$host" addr add 198.18.210.1/30 dev natv0 &&
ip -n "$wan" addr add 198.18.210.2/30 dev natv1 &&
ip -n "$host" -6 addr add fd99:210::1/64 dev natv0 nodad &&
ip -n "$wan" -6 addr add fd99:210::2/64 dev natv1 nodad &&
ip -n "$host" link set natv0 up && ip -n "$wan" link set natv1 up &&
ip -n "$wan" addr add 203.0.113.80/32 dev lo &&
ip -n "$wan" -6 addr add fd99:80::80/128 dev lo &&
ip -n "$host" route add 203.0.113.0/24 via 198.18.210.2 &&
ip -n "$host" -6 route add fd99:80::/64 via fd99:210::2 &&
# ICMP echo out goes by unprivileged ping sockets
ip netns exec "$host" sysctl -qw net.ipv4.ping_group_range="0 2147483647"
check_err $? "cannot set up the wan namespace"
[ "$RET" -eq 0 ] || finish

VSW_KERNEL=$("$VECNET_SRC/scripts/qemu-initrd.sh" "$TEST_TMP/initrd.gz")
case $? in
0) ;;
4) echo "SKIP: no light guest kernel or initramfs tools (see above)"; exit "$ksft_skip" ;;
*) check_err 1 "building the QEMU guest's initramfs failed"; finish ;;
esac

mkdir -p "$TEST_TMP/www" "$TEST_TMP/gwww"
echo "$token" >"$TEST_TMP/www/hello.txt"
head -c 8M /dev/urandom >"$TEST_TMP/www/big.bin"
big_md5=$(md5sum <"$TEST_TMP/www/big.bin" | cut -d' ' -f1)
echo "guest-$token" >"$TEST_TMP/gwww/g.txt"
# the internet's server, both families; a host service on loopback only
ip netns exec "$wan" python3 -m http.server --bind :: --directory "$TEST_TMP/www" 8000 \
	>"$TEST_TMP/wan-http.log" 2>&1 &
on_exit "kill $! 2>/dev/null"
ip netns exec "$host" python3 -m http.server --bind 127.0.0.1 --directory "$TEST_TMP/www" 18081 \
	>"$TEST_TMP/lo-http.log" 2>&1 &
on_exit "kill $! 2>/dev/null"
wait_for 10 ip netns exec "$host" curl -sf --max-time 2 -o /dev/null http://203.0.113.80:8000/hello.txt
check_err $? "the wan server does not answer from the host namespace"
wait_for 10 ip netns exec "$host" curl -sf --max-time 2 -o /dev/null http://127.0.0.1:18081/hello.txt
check_err $? "the host's loopback server does not answer"

# ---- the switches and guests -------------------------------------------------

# wan's resolver: every A question is 203.0.113.80, others have no answer
cat >"$TEST_TMP/dns.py" <<'EOF'
import socket, struct, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 53))
s.settimeout(600)
while True:
    q, peer = s.recvfrom(512)
    end = q.index(0, 12) + 5
    qtype = struct.unpack("!H", q[end - 4:end - 2])[0]
    ans = b"\xc0\x0c" + struct.pack("!HHIH", 1, 1, 60, 4) + socket.inet_aton("203.0.113.80")
    n = 1 if qtype == 1 else 0
    s.sendto(q[:2] + struct.pack("!HHHHH", 0x8180, 1, n, 0, 0) + q[12:end] +
             (ans if n else b""), peer)
EOF
ip netns exec "$wan" python3 "$TEST_TMP/dns.py" 198.18.210.2 >"$TEST_TMP/dns.log" 2>&1 &
on_exit "kill $! 2>/dev/null"

# wan's sink: reads a connection to its end, answers the MD5 of it
cat >"$TEST_TMP/sink.py" <<'EOF'
import hashlib, socket
s = socket.create_server(("::", 9000), family=socket.AF_INET6, dualstack_ipv6=True)
s.settimeout(600)
while True:
    c, _ = s.accept()
    c.settimeout(30)
    h = hashlib.md5()
    while (b := c.recv(1 << 16)):
        h.update(b)
    c.sendall(h.hexdigest().encode())
    c.close()
EOF
# and a guest's way to send it a file: prints the sink's answer
cat >"$TEST_TMP/up.py" <<'EOF'
import socket, sys
c = socket.create_connection((sys.argv[1], 9000), timeout=30)
with open(sys.argv[2], "rb") as f:
    c.sendall(f.read())
c.shutdown(socket.SHUT_WR)
print(c.recv(64).decode())
EOF
ip netns exec "$wan" python3 "$TEST_TMP/sink.py" >"$TEST_TMP/sink.log" 2>&1 &
on_exit "kill $! 2>/dev/null"

# the first switch, and so its NAT process, sees a resolv.conf naming
# wan's resolver (a mount namespace of its own; the host's file stays)
echo "nameserver 198.18.210.2" >"$TEST_TMP/resolv.conf"
chmod 644 "$TEST_TMP/resolv.conf"
rm -f "$sock"
# shellcheck disable=SC2016  # expanded by that sh
ip netns exec "$host" unshare -m sh -c 'mount --bind "$0" /etc/resolv.conf && exec "$@"' \
	"$TEST_TMP/resolv.conf" env -u LD_PRELOAD "$VECSWITCH" --dgram "$sock" --ctl "$CTL" \
	--vhost-user "$TEST_TMP/vhost.sock" --nat --nat-forward tcp:18080:10.0.2.15:8080 \
	--nat-forward tcp:18082:10.0.2.17:8080 2>>"$TEST_TMP/switch.log" &
sw1=$!
on_exit "kill_job $sw1"
wait_for 10 test -S "$CTL"
check_err $? "vecswitch --nat did not start"
rm -f "$sock2"
start_switch "$host" --dgram "$sock2" --ctl "$TEST_TMP/ctl2" --nat --nat-host-loopback \
	--isolate --mac-lock
check_err $? "vecswitch --nat --nat-host-loopback did not start"
[ "$RET" -eq 0 ] || finish


agent "$host" nat a -a vec0:"transport=unixdgram,path=$sock,mac=02:76:65:00:c0:01"
# b takes plain frames (vnet=0): the switch cuts what vecnat joined for it
agent "$host" nat b -a vec0:"transport=unixdgram,path=$sock,mac=02:76:65:00:c0:02,vnet=0"
agent "$host" nat c -a vec0:"transport=unixdgram,path=$sock2,mac=02:76:65:00:c0:03"
agents_ready "$NAME" a b c

# dhcp GUEST: a lease for vec0; prints "ADDR ROUTER DNS"
dhcp() {
	# shellcheck disable=SC2016  # expanded in the guest
	exec_in "$1" env LEASE="$TEST_TMP/$1.lease" sh -c \
		'ip link set vec0 up && busybox udhcpc -i vec0 -f -q -n -t 20 -T 1 -s "$0" >/dev/null 2>&1' \
		"$VECNET_SRC/scripts/udhcpc-hostfs.sh" && cat "$TEST_TMP/$1.lease"
}

# fetch GUEST URL: the body, within 10 s
fetch() {
	exec_in "$1" curl -sf --max-time 10 "$2"
}

t0=$SECONDS
declare -A lease
for g in a b c; do
	lease[$g]=$(dhcp "$g")
	check_err $? "guest $g got no lease"
	echo "# $g: lease ${lease[$g]}"
done
[ "${lease[a]%% *}" = 10.0.2.15 ] && [ "${lease[b]%% *}" = 10.0.2.16 ]
check_err $? "a and b did not get 10.0.2.15 and 10.0.2.16: '${lease[a]}', '${lease[b]}'"
case ${lease[a]} in
"10.0.2.15 10.0.2.2 10.0.2.3") ;;
*) check_err 1 "a's lease does not name gateway 10.0.2.2 and DNS 10.0.2.3: ${lease[a]}" ;;
esac
[ "$RET" -eq 0 ] || finish
echo "# leases in $((SECONDS - t0)) s"

# the QEMU guest, once a and b hold theirs: it takes the next, 10.0.2.17,
# and does its part while the UML guests do theirs
# shellcheck disable=SC2034  # qemu_boot's
ns=$host qemu_pids=()
mapfile -t qopts < <(vhost_example 52:54:00:76:6e:01 "$TEST_TMP/vhost.sock")
# (busybox 1.35's wget dies of a segmentation fault with -T)
# shellcheck disable=SC2016  # expanded by the guest's shell
run_q='for i in $(seq 30); do ip -6 addr show dev eth0 | grep -q fd00: && break; sleep 1; done;
	echo NAT_V4 $(wget -q -O - http://203.0.113.80:8000/hello.txt);
	echo NAT_V6 $(wget -q -O - http://[fd99:80::80]:8000/hello.txt);
	nslookup www.vecnat.test 10.0.2.3 | grep -q 203.0.113.80 && echo NAT_DNS_OK;
	mkdir -p /www && echo qemu-TOKEN >/www/g.txt && httpd -p 8080 -h /www && echo NAT_HTTPD'
run_q=$(echo "${run_q//TOKEN/$token}" | tr '\n\t' '  ')
append_extra="VSW_RUN=\"$run_q\"" qemu_boot q tcg "" "" dhcp "" "${qopts[@]}"

# ---- out: IPv4, IPv6 ---------------------------------------------------------

[ "$(fetch a http://203.0.113.80:8000/hello.txt)" = "$token" ]
check_err $? "a did not fetch the file from wan over IPv4"
exec_in a ping -c 2 -W 2 203.0.113.80 >/dev/null
check_err $? "a's pings to wan went unanswered"
# fragmented both ways: vecnat passes fragments that come in order
exec_in a ping -c 2 -W 2 -s 4000 203.0.113.80 >/dev/null
check_err $? "a's 4000-byte pings to wan went unanswered"
wait_for 15 exec_in a sh -c 'ip -6 addr show dev vec0 scope global | grep -q "inet6 fd00:"'
check_err $? "a made no fd00:: address from the router advertisement"
[ "$(fetch a 'http://[fd99:80::80]:8000/hello.txt')" = "$token" ]
check_err $? "a did not fetch the file from wan over IPv6"

# ---- bulk: super-frames both ways -------------------------------------------

# The NAT port agreed to virtio-net headers: a's TSO super-frames reach
# vecnat whole (nat_rx_gso) and libslirp's segments go back joined
# (nat_tx_gro); 8 MiB each way and family, checked by MD5, and 8 MiB to
# b, which takes plain frames, so the switch cuts them again.
exec_in a sh -c "curl -sf --max-time 30 http://203.0.113.80:8000/big.bin | md5sum" \
	>"$TEST_TMP/down4.md5"
[ "$(cut -d' ' -f1 "$TEST_TMP/down4.md5")" = "$big_md5" ]
check_err $? "a's 8 MiB download from wan over IPv4 came out wrong"
exec_in a sh -c "curl -sf --max-time 30 'http://[fd99:80::80]:8000/big.bin' | md5sum" \
	>"$TEST_TMP/down6.md5"
[ "$(cut -d' ' -f1 "$TEST_TMP/down6.md5")" = "$big_md5" ]
check_err $? "a's 8 MiB download from wan over IPv6 came out wrong"
exec_in b sh -c "curl -sf --max-time 30 http://203.0.113.80:8000/big.bin | md5sum" \
	>"$TEST_TMP/down4b.md5"
[ "$(cut -d' ' -f1 "$TEST_TMP/down4b.md5")" = "$big_md5" ]
check_err $? "b's 8 MiB download from wan over IPv4, cut by the switch, came out wrong"
[ "$(sw_stat gso_frames)" -ge 1 ]
check_err $? "the switch cut no super-frame for b (gso_frames $(sw_stat gso_frames))"
for dst in 203.0.113.80 fd99:80::80; do
	[ "$(exec_in a python3 "$TEST_TMP/up.py" "$dst" "$TEST_TMP/www/big.bin")" = "$big_md5" ]
	check_err $? "a's 8 MiB upload to wan ($dst) came out wrong"
done
wait_for 5 sw_stat_ge nat_rx_gso 1
check_err $? "vecnat got no super-frame from a (nat_rx_gso $(sw_stat nat_rx_gso))"
wait_for 5 sw_stat_ge nat_tx_gro 1
check_err $? "vecnat joined no segments for a (nat_tx_gro $(sw_stat nat_tx_gro))"
ctl ports | awk '$3 == "yes" { print $2 }' | grep -qx vnet
check_err $? "the NAT port did not agree to virtio-net headers: $(ctl ports | tr '\n' ' ')"
echo "# bulk: $(sw_stat nat_rx_gso) super-frames cut for libslirp, $(sw_stat nat_tx_gro) joined from its segments"

# ---- DNS: the forwarder passes a question to the host's resolver ----------

exec_in a busybox nslookup www.vecnat.test 10.0.2.3 >"$TEST_TMP/nslookup.txt" 2>&1
grep -q "203.0.113.80" "$TEST_TMP/nslookup.txt"
check_err $? "a did not resolve a name through 10.0.2.3: $(tr '\n' ' ' <"$TEST_TMP/nslookup.txt")"

# ---- in: the forward ---------------------------------------------------------

exec_in a busybox httpd -p 8080 -h "$TEST_TMP/gwww"
check_err $? "no httpd in a"
wait_for 10 ip netns exec "$host" curl -sf --max-time 2 -o "$TEST_TMP/fwd.txt" \
	http://127.0.0.1:18080/g.txt
check_err $? "the host did not reach a's server through the forward"
[ "$(cat "$TEST_TMP/fwd.txt" 2>/dev/null)" = "guest-$token" ]
check_err $? "the forward gave the wrong file"
# and over IPv6, from the host's ::1 to a's address from the advertisement
a6=$(exec_in a ip -6 -o addr show dev vec0 scope global | awk '$4 ~ /^fd00:/ { sub("/.*", "", $4); print $4; exit }')
ctl forward add "tcp:18083:[$a6]:8080" >/dev/null
check_err $? "forward add tcp:18083:[$a6]:8080 failed"
[ "$(ip netns exec "$host" curl -sf --max-time 5 'http://[::1]:18083/g.txt')" = "guest-$token" ]
check_err $? "the host did not reach a's server through the IPv6 forward to $a6"

# ---- the QEMU guest: its lease, out, DNS, in ---------------------------------

has_line 180 "$TEST_TMP/q.log" NAT_HTTPD
check_err $? "the QEMU guest did not finish its part"
grep -q "lease 10.0.2.17/24 via 10.0.2.2, DNS 10.0.2.3" "$TEST_TMP/q.log"
check_err $? "the QEMU guest did not get 10.0.2.17 from the NAT: $(grep -m1 -E 'lease|VSW_NO_LEASE' "$TEST_TMP/q.log")"
grep -q "NAT_V4 $token" "$TEST_TMP/q.log"
check_err $? "the QEMU guest did not fetch the file from wan over IPv4"
grep -q "NAT_V6 $token" "$TEST_TMP/q.log"
check_err $? "the QEMU guest did not fetch the file from wan over IPv6"
grep -q NAT_DNS_OK "$TEST_TMP/q.log"
check_err $? "the QEMU guest did not resolve a name through 10.0.2.3"
[ "$(ip netns exec "$host" curl -sf --max-time 5 http://127.0.0.1:18082/g.txt)" = "qemu-$token" ]
check_err $? "the host did not fetch the QEMU guest's file through the forward"
[ "$RET" -eq 0 ] && echo "# the vhost-user QEMU guest: lease 10.0.2.17, IPv4, IPv6, DNS and the forward in $((SECONDS - t0)) s since the leases"

# ---- the host's loopback -----------------------------------------------------

if fetch a http://10.0.2.2:18081/hello.txt >/dev/null 2>&1; then
	check_err 1 "a reached the host's 127.0.0.1 without --nat-host-loopback"
fi
[ "$(fetch c http://10.0.2.2:18081/hello.txt)" = "$token" ]
check_err $? "c did not reach the host's 127.0.0.1 with --nat-host-loopback"
# c's switch runs with --isolate and --mac-lock: the NAT port is its
# uplink, and it answers for the DNS address from a MAC of its own
exec_in c ping -c 1 -W 2 10.0.2.3 >/dev/null 2>&1
exec_in c ip neigh show 10.0.2.3 dev vec0 | grep -q 'lladdr 52:55:0a:00:02:03'
check_err $? "c found no MAC for 10.0.2.3 behind --mac-lock: $(exec_in c ip neigh show dev vec0)"

# ---- the NAT process: its privileges, then SIGKILL ----------------------------

nat_pid=$(pgrep -P "$sw1")
st=/proc/${nat_pid:-none}/status
grep -qE '^Uid:\s+65534\s' "$st" && grep -qE '^NoNewPrivs:\s+1' "$st" &&
	grep -qE '^Seccomp:\s+2' "$st" && grep -qE '^CapEff:\s+0+$' "$st"
check_err $? "the NAT process ($nat_pid) is not nobody with no_new_privs, seccomp, no capabilities"

# stopped (SIGSTOP): a's fetch waits for it, b's pings to a do not
kill -STOP "$nat_pid"
exec_in a curl -s --max-time 3 http://203.0.113.80:8000/hello.txt >/dev/null 2>&1 &
fetch_job=$!
exec_in b ping -c 40 -i 0.05 -W 1 10.0.2.15 >"$TEST_TMP/ping-stop.log" 2>&1
check_err $? "b lost pings to a while the NAT process was stopped: $(grep loss "$TEST_TMP/ping-stop.log")"
wait "$fetch_job"
kill -CONT "$nat_pid"
[ "$(fetch a http://203.0.113.80:8000/hello.txt)" = "$token" ]
check_err $? "a did not fetch from wan once the NAT process went on"

exec_in a ping -c 60 -i 0.05 -W 1 10.0.2.16 >"$TEST_TMP/ping.log" 2>&1 &
ping_job=$!
wait_for 10 grep -q "bytes from" "$TEST_TMP/ping.log"
kill -KILL "$nat_pid"
wait "$ping_job"
check_err $? "a lost pings to b while the NAT process was down: $(grep loss "$TEST_TMP/ping.log")"
echo "# $(grep loss "$TEST_TMP/ping.log")"
wait_for 10 sw_stat_is nat_starts 2
check_err $? "the switch did not start the NAT process again"
[ "$(sw_stat nat_deaths)" = 1 ]
check_err $? "nat_deaths is $(sw_stat nat_deaths), not 1"
grep -q "NAT process died (signal 9" "$TEST_TMP/switch.log"
check_err $? "the switch did not log the death"
wait_for 15 ip netns exec "$host" curl -sf --max-time 2 -o /dev/null http://127.0.0.1:18080/g.txt
check_err $? "the forward did not come back with the new NAT process"
[ "$(fetch a http://203.0.113.80:8000/hello.txt)" = "$token" ]
check_err $? "a did not fetch from wan through the new NAT process"

# ---- 10,000 UDP flows out of one guest ----------------------------------------

# each from a port of its own, so each is a socket of the NAT process,
# which runs out of descriptors (4096); it and the segment stay up
# shellcheck disable=SC2016  # python's
exec_in a python3 -c 'import socket
for i in range(10000):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(b"x", ("203.0.113.80", 9))
    s.close()'
check_err $? "a could not send its 10,000 flows"
deaths=$(sw_stat nat_deaths)
exec_in a ping -c 20 -i 0.05 -W 1 10.0.2.16 >"$TEST_TMP/ping2.log" 2>&1
check_err $? "a lost pings to b after the flood: $(grep loss "$TEST_TMP/ping2.log")"
[ "$deaths" = 1 ] && kill -0 "$(pgrep -P "$sw1")" 2>/dev/null
check_err $? "the NAT process did not survive 10,000 flows (nat_deaths $deaths)"
echo "# after 10,000 flows: the NAT process holds $(find /proc/"$(pgrep -P "$sw1")"/fd -mindepth 1 2>/dev/null | wc -l) descriptors"

if grep -qE "AddressSanitizer|runtime error|LeakSanitizer" "$TEST_TMP/switch.log"; then
	check_err 1 "a sanitizer report in the switch's or the NAT's log"
fi
echo "# whole test $SECONDS s"
finish
