#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench, suite flood: a low-rate pair beside a flooder on the switch.
# Sourced by scripts/bench.sh, after scripts/bench/lib.sh.
# shellcheck shell=bash
# shellcheck disable=SC2154  # the globals and helpers are bench.sh's and lib.sh's

# Two guests ping each other (ping -i 0.01, SECS seconds) on vecswitch
# while a process on the host floods the switch's dgram socket with
# broadcast frames as fast as it can, from a socket of its own that it
# never reads: the socket's receive queue (net.unix.max_dgram_qlen deep)
# is first come, first served, and the flooder's broadcasts are held to
# --bcast-limit.  Against the same pair without the flood, with the
# default options (the pair's unicast takes a shortcut channel) and with
# --no-shortcut (it shares the socket with the flood).  Records the
# pair's mean round trip and its loss.

# flood_ping FILE: "RTT_MS LOSS_PERCENT" of a ping summary, or "null 100"
flood_ping() {
	awk '/packet loss/ { for (i = 1; i <= NF; i++) if ($i ~ /%,?$/) loss = $i }
		/min\/avg/ { split($0, p, "= "); split(p[2], v, "/"); rtt = v[2] }
		END { sub("%,?", "", loss); print (rtt == "" ? "null" : rtt), (loss == "" ? 100 : loss) }' "$1" 2>/dev/null || echo "null 100"
}

# flood_once VARIANT: quiet|flood, then the switch's flags
flood_once() {
	local v=$1 flooder='' opts="transport=unixdgram,path=$work/sw.sock,depth=128"

	shift
	netns_fresh
	rm -rf "${work:?}"/*
	bench_switch "$ns" --dgram "$work/sw.sock" "$@"
	bench_guest b "$ours" $((secs + 90)) \
		"ip addr add 198.18.1.2/24 dev vec0 && ip link set vec0 up && touch ready &&
		 sleep $((secs + 60))" -a "vec0:$opts"
	if [ "$v" = flood ]; then
		ip netns exec "$ns" python3 - "$work/sw.sock" "$work/flood.sock" $((secs + 60)) \
			"$VECNET_SRC/tools/testing/selftests/drivers/net" <<'PY' &
import socket, sys, time
sys.path.insert(0, sys.argv[4])
import vecnet_wire as w
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[2])
s.setblocking(False)
frame = w.eth(w.BCAST, bytes.fromhex("027665f10001"), w.ETH_P_ARP, bytes(46))
end = time.monotonic() + int(sys.argv[3])
while time.monotonic() < end:
    for _ in range(1000):
        try:
            s.sendto(frame, sys.argv[1])
        except (BlockingIOError, ConnectionRefusedError, FileNotFoundError):
            pass
PY
		flooder=$!
		pids+=("$flooder")
	fi
	bench_guest a "$ours" $((secs + 90)) \
		"ip addr add 198.18.1.1/24 dev vec0 && ip link set vec0 up &&
		 for i in \$(seq 300); do [ -e $work/b/ready ] && break; sleep 0.1; done &&
		 ping -c 3 -W 2 198.18.1.2 >/dev/null;
		 ping -q -i 0.01 -c $((secs * 100)) -W 1 198.18.1.2 >ping.txt 2>&1; true" \
		-a "vec0:$opts"
	wait "${pids[-1]}" || true
	[ -z "$flooder" ] || kill "$flooder" 2>/dev/null || true
	kill "${pids[@]: -3}" 2>/dev/null || true
	read -r flood_rtt flood_loss < <(flood_ping "$work/a/ping.txt")
}

bench_flood() {
	local r v key
	local -A frtt=() floss=()

	for r in $(seq 1 "$runs"); do
		for v in quiet flood; do
			for key in shortcut switched; do
				say "flood $v $key run $r/$runs"
				if [ "$key" = switched ]; then
					flood_once "$v" --no-shortcut
				else
					flood_once "$v"
				fi
				frtt[$v-$key]+=" $flood_rtt" floss[$v-$key]+=" $flood_loss"
			done
		done
	done
	for key in "${!frtt[@]}"; do
		# shellcheck disable=SC2086  # the lists split into numbers
		record flood "ping-rtt-$key" pair ms "$(median_of ${frtt[$key]})" "" "${frtt[$key]}"
		# shellcheck disable=SC2086
		record flood "ping-loss-$key" pair % "$(median_of ${floss[$key]})" "" "${floss[$key]}"
	done
}
