#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vhost-user ports (--vhost-user), spoken to by vhost_frontend.py, a
# front-end that keeps its guest memory in memfds and its virtqueues in
# them as a guest would, on one switch with a --dgram socket beside:
#
#  pair       broadcast from A reaches B and C (a legacy device with a
#             10-byte header and pipes), B's unicast reaches A only, exact;
#             ctl ports and fdb show the ports and what they learned
#  tso        a 64 KiB TCP super-frame crosses whole to a front-end that
#             takes GSO (mergeable buffers, num_buffers), and in checked
#             segments to a plain --dgram peer
#  tso_seg    the same to a front-end without GUEST_TSO4/GUEST_CSUM:
#             segments with full checksums; a pending checksum finished
#  rings      chained, indirect and header-splitting chains; EVENT_IDX;
#             a disabled ring (no RX, TX used and dropped)
#  chains     a frame in 80 descriptors, a super-frame over 85 mergeable
#             buffers: long, but within what the spec allows
#  reconnect  GET_VRING_BASE after traffic, a stopped ring stays stopped,
#             a front-end that goes is dropped within 1 s and one that
#             comes back at once (indexes about to wrap) works
#  rewrite    a front-end rewrites the destination of the frames it
#             sends while the switch reads them: each receiver gets only
#             frames addressed to it
#  callfull   a front-end that holds its call eventfd at its limit: the
#             switch's calls fail at once, none waits in the kernel to
#             land later (they would pile up), and its frames still come
#  hostile    each of some fifty bad front-ends (descriptors, rings,
#             memory tables, messages, descriptors of the wrong kind, a
#             FUSE file that cannot be closed, a memfd shrunk under the
#             switch) is dropped or refused and logged, and the switch
#             keeps a good pair talking
#
# VHOST_CASES="pair callfull" runs those cases only.
# After each case the switch holds no more eventfds, pipes, memfds or
# memfd mappings than before it.  Then the switch (the AddressSanitizer/UBSan build) must exit cleanly and
# have reported nothing.  Only unix sockets; no frame leaves the host.

LIB_NO_GUEST=1
source "$(dirname "$(readlink -f "$0")")/../lib.sh"
require_cmd python3
require_vecswitch
python3 -c 'import sys; sys.exit(sys.version_info < (3, 9))' ||
	{ echo "SKIP: vhost_frontend.py needs python3 3.9 or later"; exit "$ksft_skip"; }
here=$(dirname "$(readlink -f "$0")")
read -ra cases <<<"${VHOST_CASES:-pair tso tso_seg rings chains reconnect rewrite callfull hostile}"

ns=$(netns_add vhost)
vsock=$TEST_TMP/vhost.sock
start_switch "$ns" --vhost-user "$vsock" --dgram "$TEST_TMP/dgram.sock" \
	--ctl "$TEST_TMP/ctl" --vhost-mem-total 32768 && wait_for 5 test -S "$vsock"
check_err $? "vecswitch did not start with --vhost-user: $(tail -n 3 "$TEST_TMP/switch.log")"
[ "$RET" -eq 0 ] || { log_test "vhost-user ports"; exit "$RET"; }

for c in "${cases[@]}"; do
	ip netns exec "$ns" timeout 120 python3 "$here/vhost_frontend.py" \
		--sock "$vsock" --ctl "$TEST_TMP/ctl" --dgram "$TEST_TMP/dgram.sock" \
		--tmp "$TEST_TMP" --log "$TEST_TMP/switch.log" --pid "$SWITCH_PID" \
		"$c" >"$TEST_TMP/$c.log" 2>&1
	rc=$?
	sed 's/^/# /' "$TEST_TMP/$c.log"
	msg=$(grep '^FAIL' "$TEST_TMP/$c.log" | tail -n 1)
	check_err "$rc" "case $c: ${msg:-exit status $rc}"
done

kill -0 "$SWITCH_PID" 2>/dev/null
check_err $? "the switch died: $(tail -n 5 "$TEST_TMP/switch.log")"
stop_switch
check_err $? "vecswitch did not exit cleanly"
! grep -q "ERROR: AddressSanitizer\|ERROR: LeakSanitizer\|runtime error" "$TEST_TMP/switch.log"
check_err $? "sanitizer report: $(grep -m3 "AddressSanitizer\|LeakSanitizer\|runtime error" "$TEST_TMP/switch.log")"

log_test "vhost-user ports: frames, offloads, rings, reconnection, hostile front-ends"
exit "$RET"
