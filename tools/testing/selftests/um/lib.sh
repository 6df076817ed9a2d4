#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Shared helpers for the project's guest tests.  Sourced, never run.
# make check exports VECNET_SRC (the source tree) and VECNET_BUILD (the
# build directory); without them the tests cannot find the guest kernel.
#
# The project's scripts (demo, soak, bench) use the helpers without the
# test harness: they set VECNET_SRC, VECNET_BUILD, TEST_TMP (their work
# directory) and VECNET_LIB_NO_HARNESS=1 before sourcing.  Then nothing
# here skips or exits, no PASS/FAIL verdict is added, a guest's console is
# left to the script to judge, and the clean-up on exit (lib_cleanup,
# with the on_exit hooks) also runs on Ctrl-C, which exits 130.

# shellcheck disable=SC2034  # used by the scripts that source this file
ksft_pass=0
ksft_fail=1
ksft_skip=4

if [ -z "${VECNET_LIB_NO_HARNESS:-}" ] &&
   { [ -z "${VECNET_SRC:-}" ] || [ -z "${VECNET_BUILD:-}" ]; }; then
	echo "SKIP: VECNET_SRC and VECNET_BUILD are not set (run through 'make check')"
	exit "$ksft_skip"
fi

UML_RUN=$VECNET_SRC/scripts/uml-run
# frames.py: send and count test frames on a packet socket, either side
FRAMES=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/frames.py
VMLINUX=${VMLINUX:-$VECNET_BUILD/vmlinux}
# tests that run no guest set LIB_NO_GUEST=1 before sourcing this file
if [ -z "${LIB_NO_GUEST:-}${VECNET_LIB_NO_HARNESS:-}" ] && [ ! -x "$VMLINUX" ]; then
	echo "SKIP: no guest kernel at $VMLINUX (run 'make')"
	exit "$ksft_skip"
fi

RET=0
if [ -z "${VECNET_LIB_NO_HARNESS:-}" ]; then
	TEST_TMP=$(mktemp -d /tmp/vecnet-test.XXXXXX)
fi
TEST_NETNS=()
CLEANUP_HOOKS=()

# check_err STATUS MESSAGE: record a failure when STATUS is not 0
check_err() {
	if [ "$1" -ne 0 ]; then
		echo "FAIL: $2"
		RET=1
	fi
}

log_test() {
	if [ "$RET" -eq 0 ]; then
		echo "PASS: $1"
	else
		echo "FAIL: $1"
	fi
}

require_cmd() {
	local c
	for c in "$@"; do
		if ! command -v "$c" >/dev/null 2>&1; then
			echo "SKIP: '$c' is not installed (run 'make deps')"
			exit "$ksft_skip"
		fi
	done
}

# netns_add NAME: a namespace for this test only; removed on exit.  It is
# called as ns=$(netns_add NAME), in a subshell, so the name is recorded
# in a file lib_cleanup reads, not in a variable the subshell would lose.
netns_add() {
	local ns="vecnet-$1-$$"

	ip netns add "$ns" || return 1
	echo "$ns" >>"$TEST_TMP/.netns"
	ip -n "$ns" link set lo up
	echo "$ns"
}

on_exit() {
	CLEANUP_HOOKS+=("$1")
}

# wait_for SECONDS CMD...: poll CMD every 0.1 s until it succeeds or the
# deadline passes
wait_for() {
	local deadline=$((SECONDS + $1))

	shift
	while ! "$@" 2>/dev/null; do
		[ "$SECONDS" -ge "$deadline" ] && return 1
		sleep 0.1
	done
}

# console_has NAME TEXT: the console of the guest whose output is in
# $TEST_TMP/NAME printed TEXT (a fixed string)
console_has() {
	grep -qF -- "$2" "$TEST_TMP/$1/console.log"
}

# guest NAME TIMEOUT [uml-run options] -- CMD...: boot a guest whose
# results stay in $TEST_TMP/NAME
guest() {
	local name=$1 timeout=$2

	shift 2
	"$UML_RUN" -k "$VMLINUX" -N "$name-$$" -t "$timeout" -q \
		-o "$TEST_TMP/$name" "$@"
}

# iperf_bps JSON: the bits per second an iperf3 -J run received (0 when
# it left no result); iperf_bytes JSON: the bytes it received;
# iperf_mbps JSON: the rate in Mbit/s
iperf_bps() {
	iperf_sum "$1" bits_per_second
}

iperf_bytes() {
	iperf_sum "$1" bytes
}

# iperf_sum JSON KEY: a field of an iperf3 -J run's end.sum_received, as a
# whole number (0 when the run left no result)
iperf_sum() {
	python3 -c 'import json,sys; print(int(json.load(open(sys.argv[1]))["end"]["sum_received"][sys.argv[2]]))' \
		"$1" "$2" 2>/dev/null || echo 0
}

# iperf_min JSON: the lowest rate, in bit/s, of the run's intervals (0
# when it has none)
iperf_min() {
	python3 -c 'import json,sys
iv = [i["sum"]["bits_per_second"] for i in json.load(open(sys.argv[1]))["intervals"]]
print(int(min(iv) if iv else 0))' "$1" 2>/dev/null || echo 0
}

iperf_mbps() {
	echo $(($(iperf_bps "$1") / 1000000))
}

# shellcheck disable=SC2317  # invoked through trap
lib_cleanup() {
	local rc=$? h ns

	# the scripts run with set -e: nothing here may end the clean-up early
	set +e
	for h in "${CLEANUP_HOOKS[@]}"; do
		eval "$h"
	done
	# guests told to stop power off in a moment: let their uml-run
	# finish (10 s at most) before their output directories go
	for _ in $(seq 1 100); do
		[ -n "$(jobs -pr)" ] || break
		sleep 0.1
	done
	if [ -f "$TEST_TMP/.netns" ]; then
		mapfile -t -O "${#TEST_NETNS[@]}" TEST_NETNS <"$TEST_TMP/.netns"
	fi
	for ns in "${TEST_NETNS[@]}"; do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill -KILL 2>/dev/null
		ip netns del "$ns" 2>/dev/null
	done
	# Any kernel report (BUG, WARNING, lockdep, KASAN...) on the console of
	# a guest this test booted fails the test, whatever it asserted
	local consoles
	mapfile -t consoles < <(find "$TEST_TMP" -name console.log 2>/dev/null)
	if [ -z "${VECNET_LIB_NO_HARNESS:-}" ] && [ "${#consoles[@]}" -gt 0 ] &&
	   ! "$VECNET_SRC/scripts/console-check" "${consoles[@]}"; then
		echo "FAIL: a guest's kernel reported a problem on its console"
		case $rc in 0 | "$ksft_skip") rc=$ksft_fail ;; esac
	fi
	# VECNET_KEEP=1 keeps the guests' consoles and outputs for a look
	if [ "${VECNET_KEEP:-0}" = 1 ]; then
		echo "# kept $TEST_TMP"
	else
		rm -rf "$TEST_TMP"
	fi
	exit "$rc"
}
trap lib_cleanup EXIT
[ -z "${VECNET_LIB_NO_HARNESS:-}" ] || trap 'exit 130' INT TERM
