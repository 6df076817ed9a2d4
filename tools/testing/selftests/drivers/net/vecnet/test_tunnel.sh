#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The gre and l2tpv3 transports against the Linux kernel's own gretap,
# ip6gretap and l2tp_eth, which run inside a UML guest (k) reached
# through a tap in a namespace of this test (the host kernel need not
# have them).  Guest a (ours) has one device per tunnel:
#
#   vec0 gre over IPv4, keys both ways, sequence numbers both ways
#   vec1 l2tpv3 over IP
#   vec2 l2tpv3 over UDP with cookies
#   vec3 gre over IPv6
#   vec4 l2tpv3 over UDP to guest c, our driver at both ends
#
# Each pings; vec0 and vec1 carry 5 s of iperf3 each way.  Guest m has
# a wrong GRE key and a wrong L2TPv3 session: nothing passes, and its
# rx_encaps_errors count what it refused.  Then bad options.

source "$(dirname "$(readlink -f "$0")")/../lib.sh"
require_cmd iperf3 ethtool ping

ns=$(netns_add tunnel)
ip -n "$ns" tuntap add dev tt0 mode tap
ip -n "$ns" addr add 198.18.10.1/24 dev tt0
ip -n "$ns" addr add 2001:db8:10::1/64 dev tt0 nodad
ip -n "$ns" link set tt0 up

# up GUEST DEV ADDR: address and bring up a device in a guest, MTU 1400
up() { exec_in "$1" sh -c "ip link set $2 mtu 1400 && ip addr add $3/24 dev $2 && ip link set $2 up"; }

l=198.18.10.1 r=198.18.10.2 l6=2001:db8:10::1 r6=2001:db8:10::2
agent "$ns" tun k -a "vec0:transport=tap,ifname=tt0"
agent "$ns" tun a \
	-a "vec0:transport=gre,src=$l,dst=$r,rx_key=12,tx_key=11,sequence=1" \
	-a "vec1:transport=l2tpv3,src=$l,dst=$r,rx_session=0x20,tx_session=0x10" \
	-a "vec2:transport=l2tpv3,udp=1,src=$l,dst=$r,srcport=1702,dstport=1701,rx_session=0x40,tx_session=0x30,rx_cookie=0x0a0b0c0d,tx_cookie=0x01020304" \
	-a "vec3:transport=gre,v6=1,src=$l6,dst=$r6" \
	-a "vec4:transport=l2tpv3,udp=1,src=$l,dst=$l,srcport=1802,dstport=1801,rx_session=0xffffffff,tx_session=7"
agent "$ns" tun c -a "vec0:transport=l2tpv3,udp=1,src=$l,dst=$l,srcport=1801,dstport=1802,rx_session=7,tx_session=0xffffffff"
agent "$ns" tun m \
	-a "vec0:transport=gre,src=$l,dst=$r,rx_key=99,tx_key=11,sequence=1" \
	-a "vec1:transport=l2tpv3,src=$l,dst=$r,rx_session=0x21,tx_session=0x10"

# the kernel's tunnels in k
ks=$(guest_script k-tunnels <<EOS
set -e
ip link set vec0 up
ip addr add $r/24 dev vec0
ip addr add $r6/64 dev vec0 nodad
ip link add gk0 type gretap local $r remote $l ikey 11 okey 12 iseq oseq
ip l2tp add tunnel tunnel_id 1 peer_tunnel_id 1 encap ip local $r remote $l
ip l2tp add session name lk1 tunnel_id 1 session_id 0x10 peer_session_id 0x20 l2spec_type none
ip l2tp add tunnel tunnel_id 2 peer_tunnel_id 2 encap udp local $r remote $l udp_sport 1701 udp_dport 1702
ip l2tp add session name lk2 tunnel_id 2 session_id 0x30 peer_session_id 0x40 cookie 0a0b0c0d peer_cookie 01020304 l2spec_type none
ip link add gk3 type ip6gretap local $r6 remote $l6
n=0
for d in gk0 lk1 lk2 gk3; do
	ip link set \$d mtu 1400
	ip addr add 198.18.\$((20 + n)).2/24 dev \$d
	ip link set \$d up
	n=\$((n + 1))
done
EOS
)
exec_in k sh "$ks" >"$TEST_TMP/k-tunnels.log" 2>&1
check_err $? "the kernel's tunnels in guest k: $(tail -n 3 "$TEST_TMP/k-tunnels.log")"
for i in 0 1 2 3 4; do
	up a "vec$i" "198.18.$((20 + i)).1"
	check_err $? "guest a: vec$i did not come up"
done
up c vec0 198.18.24.2
check_err $? "guest c: vec0 did not come up"
up m vec0 198.18.20.3 && up m vec1 198.18.21.3
check_err $? "guest m: its devices did not come up"
[ "$RET" -eq 0 ] || { log_test "gre and l2tpv3 transports"; exit "$RET"; }

names=("gre/IPv4 keys+seq" "l2tpv3/IP" "l2tpv3/UDP cookies" "gre/IPv6" "l2tpv3/UDP to ourselves")
for i in 0 1 2 3 4; do
	reach a "198.18.$((20 + i)).2"
	check_err $? "${names[$i]}: guest a never reached the far end"
done

# iperf3 from a to k over vec0 and vec1: the server runs in k
for i in 0 1; do
	for dir in "" -R; do
		exec_in k sh -c 'iperf3 -s -1 -D' >/dev/null
		# shellcheck disable=SC2016  # expanded in the guest
		exec_in a sh -c 'f=$(mktemp); for t in $(seq 1 30); do
			iperf3 -c "$1" -t 5 -J $2 >"$f" && { cat "$f"; rm -f "$f"; exit 0; }
			sleep 0.3; done; rm -f "$f"; exit 1' sh "198.18.$((20 + i)).2" "$dir" \
			>"$TEST_TMP/iperf$i$dir.json"
		check_err $? "${names[$i]}: iperf3 ${dir:-forward} failed"
		bps=$(iperf_bps "$TEST_TMP/iperf$i$dir.json")
		way='a-to-k'
		[ -z "$dir" ] || way='k-to-a'
		echo "# iperf3 ${names[$i]} $way: $((bps / 1000000)) Mbit/s"
		[ "$bps" -gt 0 ]
		check_err $? "${names[$i]}: iperf3 ${dir:-forward} moved nothing"
	done
done
exec_in a ethtool -S vec0 >"$TEST_TMP/a0.stats"
[ "$(xstat "$TEST_TMP/a0.stats" rx_encaps_errors)" -eq 0 ]
check_err $? "gre: guest a refused packets of a matching tunnel"

# wrong key, wrong session: nothing passes, every refusal counted
exec_in m sh -c 'ping -c 3 -W 1 198.18.20.2; ping -c 3 -W 1 198.18.21.2' >"$TEST_TMP/m.log" 2>&1
[ "$(grep -c ' 100% packet loss' "$TEST_TMP/m.log")" -eq 2 ]
check_err $? "a mismatched key or session passed traffic: $(grep loss "$TEST_TMP/m.log")"
for i in 0 1; do
	exec_in m ethtool -S "vec$i" >"$TEST_TMP/m$i.stats"
	[ "$(xstat "$TEST_TMP/m$i.stats" rx_encaps_errors)" -gt 0 ]
	check_err $? "guest m vec$i: rx_encaps_errors did not count the refused packets"
done

# errors name the problem; the guest keeps booting
bad=(
	"transport=gre,src=$l|option 'dst': required by transport gre"
	"transport=gre,src=$l,dst=300.1.1.1|option 'dst': '300.1.1.1' is not an IPv4 or IPv6 address"
	"transport=gre,src=$l,dst=$r6|options 'src' and 'dst': one IPv4, one IPv6 address"
	"transport=gre,src=$l,dst=$r,v6=1|option 'v6': 1, but 'src' and 'dst' are IPv4 addresses"
	"transport=gre,src=$l,dst=$r,rx_key=0x100000000|option 'rx_key': '0x100000000' does not fit in 32 bits"
	"transport=l2tpv3,src=$l,dst=$r,rx_session=1|option 'tx_session': required by transport l2tpv3"
	"transport=l2tpv3,src=$l,dst=$r,rx_session=0,tx_session=1|option 'rx_session': 0 is out of range 1..4294967295"
	"transport=l2tpv3,udp=1,src=$l,dst=$r,rx_session=1,tx_session=1|option 'srcport': required with udp=1"
	"transport=l2tpv3,src=$l,dst=$r,rx_session=1,tx_session=1,srcport=5|options 'srcport' and 'dstport': only with udp=1"
	"transport=l2tpv3,src=$l,dst=$r,rx_session=1,tx_session=1,tx_cookie=0x100000000|a cookie over 32 bits needs cookie64=1"
)
args=()
for i in "${!bad[@]}"; do
	args+=(-a "vec$((10 + i)):${bad[$i]%%|*}")
done
guest errs 60 -n "$ns" "${args[@]}" -- sh -c '! ip -o link show | grep -q " vec1[0-9]:"'
check_err $? "a device with bad options was created"
for i in "${!bad[@]}"; do
	console_has errs "vec$((10 + i)): ${bad[$i]#*|}"
	check_err $? "no clear error: ${bad[$i]#*|}"
done
for g in k a c m errs; do
	no_crash $g
	check_err $? "guest $g kernel complained"
done

log_test "gre and l2tpv3 against the kernel's gretap and l2tp_eth, and to ourselves"
exit "$RET"
