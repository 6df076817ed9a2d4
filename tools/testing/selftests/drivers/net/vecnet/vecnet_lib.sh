#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Shared helpers for the vecnet guest tests.  Sourced, never run.

VECNET_TEST_DIR=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
# shellcheck source=../../../um/lib.sh
source "$VECNET_TEST_DIR/../../../um/lib.sh"

declare -A GUEST_PID

# guest_bg NAME TIMEOUT [uml-run options] -- CMD...: boot a guest in the
# background; guest_wait NAME returns its status
guest_bg() {
	guest "$@" &
	GUEST_PID[$1]=$!
	on_exit "kill ${GUEST_PID[$1]} 2>/dev/null"
}

guest_wait() {
	wait "${GUEST_PID[$1]}"
}

# guest_out NAME FILE: a file the guest left in its output directory
guest_out() {
	echo "$TEST_TMP/$1/$2"
}

# no_crash NAME: the guest's kernel reported nothing bad
no_crash() {
	! grep -E "Kernel panic|BUG:|Oops|WARNING:|Segmentation fault" \
		"$TEST_TMP/$1/console.log"
}

# xstat FILE NAME: one counter from a saved "ethtool -S" listing
xstat() {
	awk -v n="$2:" '$1 == n { print $2; f = 1 } END { if (!f) print -1 }' "$1"
}

# link_stat FILE FIELD: rx_packets, tx_dropped, ... from "ip -s -j link"
link_stat() {
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))[0]["stats64"]
k = sys.argv[2]
print(d["rx" if k.startswith("rx") else "tx"][k[3:]])' "$1" "$2" 2>/dev/null ||
		echo -1
}

# peer_start NAME NS ARGS...: the host-side datagram peer (dgram_peer.py)
# in namespace NS, where its receive queue limit is taken from
peer_start() {
	local name=$1 ns=$2

	shift 2
	ip netns exec "$ns" python3 "$VECNET_TEST_DIR/dgram_peer.py" --out "$TEST_TMP/$name.count" "$@" \
		>"$TEST_TMP/$name.log" 2>&1 &
	on_exit "kill $! 2>/dev/null"
	wait_for 10 test -s "$TEST_TMP/$name.count"
}

# peer_count NAME KEY: frames, ipv4, icmp or udp received by the peer
peer_count() {
	awk -v k="$2" '$1 == k { print $2 }' "$TEST_TMP/$1.count"
}

# guest_script NAME < SCRIPT: store a guest-side shell script and print
# its path (uml-run's init is dash, which cannot take multi-line
# commands quoted by bash)
guest_script() {
	{
		printf '. %q\n' "$VECNET_TEST_DIR/guest_lib.sh"
		cat
	} >"$TEST_TMP/$1.sh"
	echo "$TEST_TMP/$1.sh"
}

# no_drops NAME: the guest's tx_dropped and rx_dropped did not move
# between its before.link and after.link snapshots.  Frames the stack
# drops while the carrier waits for the peer are outside that window.
no_drops() {
	local f v

	for f in tx_dropped rx_dropped; do
		v=$(( $(link_stat "$(guest_out "$1" after.link)" $f) -
		      $(link_stat "$(guest_out "$1" before.link)" $f) ))
		[ "$v" -eq 0 ] || { echo "$1: $f moved by $v"; return 1; }
	done
}

# guest_iperf NAME TEXT EXEC NS ADDR [-R]: 5 s of iperf3 from a guest
# (commands run through the function EXEC) to a server on ADDR in
# namespace NS, or back with -R.  The guest retries while the path comes
# up.  Prints "iperf3 NAME TEXT: N Mbit/s"; fails the test when iperf3
# fails or moves nothing.
guest_iperf() {
	local name=$1 text=$2 exec=$3 ns=$4 addr=$5 bps server

	shift 5
	ip netns exec "$ns" timeout 60 iperf3 -s -1 -B "$addr" >/dev/null 2>&1 &
	server=$!
	# shellcheck disable=SC2016  # expanded in the guest
	"$exec" sh -c 'a=$1; shift; f=$(mktemp); for i in $(seq 1 50); do
		iperf3 -c "$a" -t 5 -J "$@" >"$f" && { cat "$f"; rm -f "$f"; exit 0; }
		sleep 0.2; done; rm -f "$f"; exit 1' sh "$addr" "$@" >"$TEST_TMP/$name.json"
	check_err $? "iperf3 $name failed"
	wait "$server"
	bps=$(python3 -c 'import json,sys; print(int(json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"]))' \
		"$TEST_TMP/$name.json" 2>/dev/null || echo 0)
	echo "# iperf3 $name $text: $((bps / 1000000)) Mbit/s"
	[ "$bps" -gt 0 ]
	check_err $? "iperf3 $name moved nothing"
}

# agent NS PREFIX NAME [uml-run options]: boot guest NAME in namespace NS
# in agent mode (output in $TEST_TMP/NAME), stopped when the test ends;
# ex NAME CMD... runs a command in it; reach NAME ADDR pings ADDR from it
# until an answer comes (15 tries)
agent() {
	local ns=$1 prefix=$2 g=$3

	shift 3
	"$UML_RUN" -k "$VMLINUX" -n "$ns" -N "$prefix-$g-$$" -t 400 -q -o "$TEST_TMP/$g" "$@" --agent &
	on_exit "$VECNET_SRC/scripts/uml-exec --stop $TEST_TMP/$g"
}

ex() {
	local g=$1

	shift
	"$VECNET_SRC/scripts/uml-exec" -t 120 "$TEST_TMP/$g" -- "$@"
}

reach() {
	# shellcheck disable=SC2016  # expanded in the guest
	ex "$1" sh -c 'for i in $(seq 1 15); do ping -c 1 -W 1 "$1" >/dev/null && exit 0; done; exit 1' sh "$2"
}
