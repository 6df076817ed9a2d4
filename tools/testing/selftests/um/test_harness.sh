#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The guest harness (scripts/uml-run) boots a guest with the host's root,
# passes a command's output and exit status back, enforces its deadline,
# runs guests inside a chosen network namespace and leaves nothing behind.

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"

# Output and exit status come back; the guest runs its own kernel
start=$(date +%s%N)
# shellcheck disable=SC2016  # expanded by the guest's shell
guest status 30 -- sh -c 'uname -r; echo marker-$((6 * 7)); exit 7'
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
[ "$rc" -eq 7 ]; check_err $? "exit status 7 came back as $rc"
grep -qx marker-42 "$TEST_TMP/status/output.log"; check_err $? "command output missing"
if grep -qxF "$(uname -r)" "$TEST_TMP/status/output.log"; then
	check_err 1 "the command ran on the host kernel, not in a guest"
fi
[ ! -e "$TEST_TMP/status/uml" ]; check_err $? "uml_dir left behind"
echo "# boot, command and power-off took ${ms} ms"

# The deadline holds and kills every process of the guest
start=$SECONDS
guest slow 4 -- sleep 600 2>/dev/null
rc=$?
[ "$rc" -eq 124 ]; check_err $? "a command past its deadline gave $rc, not 124"
[ $((SECONDS - start)) -le 10 ]; check_err $? "deadline of 4 s took $((SECONDS - start)) s"
if pgrep -f "umid=slow-$$" >/dev/null; then
	check_err 1 "processes of a timed-out guest survived"
fi

# A command that cannot run reports 127 like a shell does
guest missing 30 -- /nonexistent/command
rc=$?
[ "$rc" -eq 127 ]; check_err $? "missing command gave $rc, not 127"

# Inside a network namespace, the guest's host side sees that namespace
ns=$(netns_add harness)
ip -n "$ns" tuntap add dev hvec0 mode tap
guest netns 30 -n "$ns" -a vec0:transport=tap,ifname=hvec0 -- ip -o link show vec0
rc=$?
[ "$rc" -eq 0 ]; check_err $? "guest in namespace $ns has no vec0 (rc $rc)"

# Usage errors are refused up front with a message
out=$("$UML_RUN" -t abc -- true 2>&1)
rc=$?
[ "$rc" -eq 2 ] && [[ $out == *"--timeout"* ]]
check_err $? "bad --timeout: rc $rc, message '$out'"
out=$("$UML_RUN" -n no-such-ns-$$ -- true 2>&1)
rc=$?
[ "$rc" -eq 2 ] && [[ $out == *"does not exist"* ]]
check_err $? "missing namespace: rc $rc, message '$out'"

out=$("$UML_RUN" --cpus 0 -- true 2>&1)
rc=$?
[ "$rc" -eq 2 ] && [[ $out == *"--cpus"* ]]
check_err $? "bad --cpus: rc $rc, message '$out'"

# --cpus N gives an SMP kernel N CPUs; a kernel without SMP is refused
# rather than booted with one
if grep -qx CONFIG_SMP=y "$(dirname "$(readlink -f "$VMLINUX")")/.config"; then
	guest cpus 60 --cpus 2 -- nproc
	rc=$?
	[ "$rc" -eq 0 ] && [ "$(cat "$TEST_TMP/cpus/output.log")" = 2 ]
	check_err $? "--cpus 2: rc $rc, nproc '$(cat "$TEST_TMP/cpus/output.log")'"
else
	out=$("$UML_RUN" -k "$VMLINUX" --cpus 2 -- true 2>&1)
	rc=$?
	[ "$rc" -eq 2 ] && [[ $out == *"without SMP"* ]]
	check_err $? "--cpus 2 on a kernel without SMP: rc $rc, message '$out'"
fi

# console-check finds a kernel report on a console and passes a clean
# one (lib_cleanup fails every guest test on a report this way)
"$VECNET_SRC/scripts/console-check" "$TEST_TMP/status/console.log" >/dev/null
check_err $? "console-check saw a report on a clean console"
guest warn 30 -- sh -c 'echo "<4>WARNING: CPU: 0 PID: 1 at test_harness.sh:1 probe" >/dev/kmsg'
out=$("$VECNET_SRC/scripts/console-check" "$TEST_TMP/warn/console.log")
rc=$?
[ "$rc" -eq 1 ] && [[ $out == *"WARNING: CPU: 0 PID: 1 at test_harness.sh"* ]]
check_err $? "console-check missed a WARNING: rc $rc, output '$out'"
# (the planted report is not one lib_cleanup should fail this test on)
rm -rf "$TEST_TMP/warn"

log_test "guest harness"
exit "$RET"
