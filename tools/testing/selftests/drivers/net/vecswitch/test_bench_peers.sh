#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench's synthetic switch peers do what the plain and scale suites
# count on, in seconds: scale_cost.c builds clean, and on a switch in a
# namespace of the test's own its peers, dgram and stream, each get every
# frame their partner sent (a peer that lost frames would make the cost
# per frame look lower); the suites that use it, and rr's, parse; a
# misspelt suite stops bench.sh before it starts anything, and one that
# boots UML guests stops it where there is no UML kernel.  What the
# figures are is the bench's business, not a test's.

LIB_NO_GUEST=1
source "$(dirname "$(readlink -f "$0")")/../lib.sh"
require_vecswitch
command -v cc >/dev/null || { echo "SKIP: no cc"; exit "$ksft_skip"; }

bench=$VECNET_SRC/scripts/bench
tool=$TEST_TMP/scale_cost
for s in lib light plain rr scale g2g; do
	bash -n "$bench/$s.sh"
	check_err $? "scripts/bench/$s.sh does not parse"
done
cc -O2 -Wall -Wextra -Werror -o "$tool" "$bench/scale_cost.c"
check_err $? "scale_cost.c does not build with -Wall -Wextra -Werror"

ns=$(netns_add bp)
ip netns exec "$ns" sysctl -qw net.unix.max_dgram_qlen=512
start_switch "$ns" --dgram "$TEST_TMP/d.sock" --stream "$TEST_TMP/s.sock"
check_err $? "the switch did not come up"

# 4 peers, 2000 frames/s of 200 bytes for 1 s: below any queue's limit
for mode in dgram stream; do
	line=$(ip netns exec "$ns" timeout 20 "$tool" "$mode" "$TEST_TMP/${mode:0:1}.sock" \
		"$SWITCH_PID" 4 2000 1 200)
	check_err $? "$mode: scale_cost failed: $line"
	echo "# $line"
	read -r sent got < <(awk '{ for (i = 1; i < NF; i++) { if ($i == "sent") s = $(i + 1)
		if ($i == "got") g = $(i + 1) } } END { print s + 0, g + 0 }' <<<"$line")
	[ "$sent" -gt 0 ] && [ "$got" -eq "$sent" ]
	check_err $? "$mode: the peers got $got of the $sent frames sent"
done
"$tool" dgram x 1 3 1000 1 200 >/dev/null 2>&1
[ $? -eq 2 ]
check_err $? "scale_cost took an odd number of peers"

# bench.sh's arguments: a name it does not know, before anything runs
# (rate, first, would take minutes); a UML suite without the kernel
out=$(VECNET_BUILD=$TEST_TMP/b timeout 20 bash "$VECNET_SRC/scripts/bench.sh" rate ratee 2>&1)
[ $? -eq 2 ] && [[ $out == *"unknown suite 'ratee'"* ]] && [ ! -e "$TEST_TMP/b" ]
check_err $? "bench.sh did not refuse a misspelt suite at once: $out"
out=$(VECNET_BUILD=$TEST_TMP/b VMLINUX=$TEST_TMP/none timeout 20 \
	bash "$VECNET_SRC/scripts/bench.sh" g2g 2>&1) && out="exit 0: $out"
[[ $out == *"bench: no $TEST_TMP/none"* ]]
check_err $? "bench.sh did not ask for the UML kernel g2g needs: $out"

log_test "bench: synthetic peers get every frame, dgram and stream; suites parse; bad suites refused"
exit "$RET"
