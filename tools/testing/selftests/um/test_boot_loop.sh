#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Consecutive boots all reach the command and power off cleanly.
# BOOTS overrides the count (default 100).

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"

boots=${BOOTS:-100}
failed=0
start=$SECONDS
for i in $(seq 1 "$boots"); do
	if ! guest "boot$i" 30 -- sh -c "echo boot-$i-ok" ||
	   ! grep -qx "boot-$i-ok" "$TEST_TMP/boot$i/output.log"; then
		echo "# boot $i failed; console tail:"
		tail -n 5 "$TEST_TMP/boot$i/console.log" | sed 's/^/# /'
		failed=$((failed + 1))
	fi
	rm -rf "${TEST_TMP:?}/boot$i"
	[ $((i % 25)) -eq 0 ] && echo "# $i/$boots boots, $failed failed, $((SECONDS - start)) s"
done
[ "$failed" -eq 0 ]; check_err $? "$failed of $boots boots failed"

log_test "$boots consecutive boots"
exit "$RET"
