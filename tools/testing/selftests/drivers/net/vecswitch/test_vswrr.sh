#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vswrr, make bench's request/response tool, measures what it says: on
# loopback in a namespace of the test's own, against a server that waits
# 3 ms before each answer, every round trip takes at least that long
# (TCP and UDP, one and several in flight), and a server that does not
# wait answers faster than that; bad options are refused with a message.

LIB_NO_GUEST=1
source "$(dirname "$(readlink -f "$0")")/../lib.sh"
rr=$VECNET_BUILD/vswrr
[ -x "$rr" ] || { echo "SKIP: no $rr (run 'make tools')"; exit "$ksft_skip"; }

ns=$(netns_add rr)

# p50 of a client run's JSON, in whole microseconds
p50() { sed -n 's/.*"p50_us":\([0-9]*\).*/\1/p' <<<"$1"; }

# rr_case NAME DELAY_US CLIENT_ARGS...: one server, one 1 s client run;
# its p50 in $got
rr_case() {
	local name=$1 delay=$2 out srv

	shift 2
	ip netns exec "$ns" "$rr" server -p 5311 -d "$delay" "${udp[@]}" &
	srv=$!
	# bound before the client sends (its connect or first datagram)
	wait_for 5 sh -c "ip netns exec $ns ss -Hln${udp[*]:+u}${udp[*]:-t} 'sport = :5311' | grep -q ."
	out=$(ip netns exec "$ns" timeout 10 "$rr" client -H 127.0.0.1 -p 5311 \
		-t 1 -j "${udp[@]}" "$@" 2>&1)
	check_err $? "$name: the client failed: $out"
	kill "$srv" 2>/dev/null
	wait "$srv" 2>/dev/null
	got=$(p50 "$out")
	echo "# $name: $out"
}

for proto in tcp udp; do
	udp=()
	[ "$proto" = udp ] && udp=(-u)
	rr_case "$proto, server waits 3 ms" 3000
	[ "${got:-0}" -ge 3000 ]
	check_err $? "$proto: a round trip through a server that waits 3 ms took ${got:-?} us"
	rr_case "$proto, server waits 3 ms, 4 in flight" 3000 -n 4
	[ "${got:-0}" -ge 3000 ]
	check_err $? "$proto, 4 in flight: p50 ${got:-?} us, under the server's 3 ms"
	rr_case "$proto, server answers at once" 0
	[ -n "$got" ] && [ "$got" -lt 3000 ]
	check_err $? "$proto: a server that answers at once took ${got:-?} us (the tool adds time)"
done

out=$("$rr" client -H 127.0.0.1 -u -r 4 2>&1)
[ $? -eq 1 ] && grep -q "at least 12" <<<"$out"
check_err $? "vswrr -u -r 4 was not refused with a reason: $out"
out=$("$rr" client -n 999 -H 127.0.0.1 2>&1)
[ $? -eq 1 ] && grep -q -- "-n: '999' is not a number from 1 to 256" <<<"$out"
check_err $? "vswrr -n 999 was not refused with a reason: $out"

log_test "vswrr: round trips as long as the server makes them, bad options refused"
exit "$RET"
