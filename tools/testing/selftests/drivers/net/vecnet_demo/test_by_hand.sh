#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The README's by-hand path: vecswitch, then scripts/vecnet-guest with
# its console on a pipe standing in for a terminal.  The typed commands
# ping a second guest on the switch; leaving the shell powers the guest
# off and its uml_dir is gone.  Then the helper's errors for a missing
# switch, a bad address, a multicast, malformed or zero --mac (refused
# before a guest boots without vec0) and a missing NAME, and the example unit file
# passes systemd-analyze verify.

source "$(dirname "$(readlink -f "$0")")/../lib.sh"
require_cmd systemd-analyze
require_vecswitch

helper=$VECNET_SRC/scripts/vecnet-guest
ns=$(netns_add byhand)
sock=$TEST_TMP/sw.sock
start_switch "$ns" --dgram "$sock"
check_err $? "vecswitch did not start: $(tail -n 3 "$TEST_TMP/switch.log")"

"$UML_RUN" -k "$VMLINUX" -n "$ns" -N "byhand-b-$$" -t 300 -q -o "$TEST_TMP/b" \
	-a "vec0:transport=unixdgram,path=$sock" --agent &
on_exit "$VECNET_SRC/scripts/uml-exec --stop $TEST_TMP/b"
"$VECNET_SRC/scripts/uml-exec" -t 120 "$TEST_TMP/b" -- \
	sh -c 'ip addr add 198.18.12.2/24 dev vec0 && ip link set vec0 up'
check_err $? "the second guest did not boot or bring vec0 up"

# The echoed input shows $((40+2)); only running it prints 42
mkfifo "$TEST_TMP/console"
timeout 120 "$helper" --switch "$sock" --ip 198.18.12.1/24 -k "$VMLINUX" "byhand-a-$$" \
	<"$TEST_TMP/console" >"$TEST_TMP/a.out" 2>&1 &
gp=$!
exec 5>"$TEST_TMP/console"
# typing before the shell runs is lost, as on a real console
wait_for 60 grep -q "exit the shell to power off" "$TEST_TMP/a.out"
check_err $? "no greeting from the guest: $(tail -n 5 "$TEST_TMP/a.out")"
sleep 1
# shellcheck disable=SC2016  # typed into the guest's shell
printf '%s\n' \
	'for i in 1 2 3 4 5 6 7 8 9 10; do ping -c 1 -W 1 198.18.12.2 >/dev/null && break; done' \
	'ping -c 3 -W 2 198.18.12.2 >/dev/null && echo PING-$((40+2))' \
	'exit' >&5
wait "$gp"
rc=$?
exec 5>&-
check_err "$rc" "vecnet-guest exited with $rc: $(tail -n 5 "$TEST_TMP/a.out")"
grep -q 'PING-42' "$TEST_TMP/a.out"
check_err $? "the guest on vecnet-guest did not reach the other guest"
run=$(sed -n 's/.*(uml_dir \(.*\))$/\1/p' "$TEST_TMP/a.out")
[ -n "$run" ] && [ ! -e "$run" ]
check_err $? "the guest's uml_dir '$run' was left behind"

# errors: one clear line each, status 2, no guest
expect_usage() {
	local what=$1 text=$2 out

	shift 2
	out=$("$helper" -k "$VMLINUX" "$@" 2>&1 </dev/null)
	[ $? -eq 2 ] && grep -qF -- "$text" <<<"$out"
	check_err $? "$what: expected status 2 and '$text', got: $out"
}
expect_usage "no switch" "--switch $TEST_TMP/none.sock: no socket there" \
	--switch "$TEST_TMP/none.sock" g
expect_usage "bad address" "--ip '198.18.12': not ADDR/LEN" --switch "$sock" --ip 198.18.12 g
expect_usage "multicast --mac" "--mac 01:00:5e:00:00:01: a multicast address" \
	--switch "$sock" --mac 01:00:5e:00:00:01 g
expect_usage "malformed --mac" "--mac '02:00:00:00:01': not an address like" \
	--switch "$sock" --mac 02:00:00:00:01 g
expect_usage "zero --mac" "--mac 00:00:00:00:00:00: all zeros" \
	--switch "$sock" --mac 00:00:00:00:00:00 g
expect_usage "no name" "give the guest's NAME" --switch "$sock"
expect_usage "no --switch" "--switch PATH or --network NET is required" g

# the example unit file parses, with the binary where this build has it
unit=$TEST_TMP/vecswitch.service
sed "s|/usr/local/bin/vecswitch|${VECSWITCH}|" \
	"$VECNET_SRC/tools/net/vecswitch/vecswitch.service" >"$unit"
# the man page it names is installed by make install, not here
out=$(systemd-analyze verify --man=no "$unit" 2>&1)
[ -z "$out" ]
check_err $? "systemd-analyze verify vecswitch.service: $out"

log_test "by hand: vecswitch and vecnet-guest, as the README says"
exit "$RET"
