#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Helpers for the scripts that run inside the guests (dash, not bash).
# guest_script in ../lib.sh sources this file first.

# vec_up ADDR/PREFIX: address vec0, bring it up, wait for the carrier
vec_up() {
	ip addr add "$1" dev vec0 && ip link set vec0 up || return 1
	for _ in $(seq 1 100); do
		[ "$(cat /sys/class/net/vec0/operstate)" = up ] && return 0
		sleep 0.05
	done
	return 1
}

# ping_until ADDR: one ping a second until ADDR answers, at most 60
ping_until() {
	for _ in $(seq 1 60); do
		ping -c 1 -W 1 "$1" >/dev/null && return 0
	done
	return 1
}

# snap TAG: vec0's core and ethtool counters into TAG.link and TAG.stats
snap() {
	ip -s -j link show vec0 >"$1.link"
	ethtool -S vec0 >"$1.stats"
}

# snap_end TAG: the same, ethtool's first: between a snap and a snap_end
# the driver's counters cover no frame the core's do not (a frame sent
# between the two reads, an ARP or a late ACK, would count in one only)
snap_end() {
	ethtool -S vec0 >"$1.stats"
	ip -s -j link show vec0 >"$1.link"
}
