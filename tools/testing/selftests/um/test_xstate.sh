#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# AVX2 and AVX-512 register state survives system calls, context switches
# and signal delivery inside a guest on a host whose XSAVE area is larger
# than UML's old compile-time guess (AMX hosts: 11008 bytes).

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"

bin=$(cd "$(dirname "$0")" && pwd)/xstate_test

# The checker works on the host first; without AVX2 there is nothing to test
"$bin" -w 2 -r 10 >"$TEST_TMP/host.log" 2>&1
rc=$?
if [ "$rc" -eq "$ksft_skip" ]; then
	cat "$TEST_TMP/host.log"
	exit "$ksft_skip"
fi
check_err "$rc" "xstate_test fails on the host itself"

# It sees a deliberate clobber (the checker can fail)
guest selftest 120 -- "$bin" -t -w 2 -r 5
check_err $? "the deliberate clobber went unnoticed in the guest"

# The real run: several processes, thousands of signals
guest xstate 300 -- "$bin" -w 6 -r 200
rc=$?
cat "$TEST_TMP/xstate/output.log"
check_err "$rc" "vector registers corrupted in the guest"
grep -q "frame xstate_size" "$TEST_TMP/xstate/output.log"
check_err $? "no worker reported its signal frame"

log_test "AVX2/AVX-512 state across syscalls, switches and signals"
exit "$RET"
