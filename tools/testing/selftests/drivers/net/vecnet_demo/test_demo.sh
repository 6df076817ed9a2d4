#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo, in its quiet mode, end to end: vecswitch, three UML guests on
# unixdgram, pings, iperf3, counters, and the idle guest's share of a flow
# with the learning switch (none) and with --hub (all of it).  The demo
# checks each step itself and exits non-zero with a message on failure.

# shellcheck source-path=SCRIPTDIR source=../lib.sh
source "$(dirname "$(readlink -f "$0")")/../lib.sh"
require_cmd iperf3 ethtool
[ -x "$VECNET_BUILD/vecswitch" ] || { echo "SKIP: no $VECNET_BUILD/vecswitch"; exit "$ksft_skip"; }

out=$("$VECNET_SRC/scripts/demo.sh" --quiet 2>&1)
rc=$?
echo "$out"
check_err "$rc" "demo exited with status $rc"
grep -q '^demo: OK' <<<"$out"; check_err $? "demo did not report OK"
grep -q 'ping a -> b and idle -> a: ok' <<<"$out"; check_err $? "pings not confirmed"
grep -q 'guest a: lease, page from outside; host: page from a through a forward' <<<"$out"
check_err $? "the NAT step not confirmed"

log_test "make demo --quiet"
exit "$RET"
