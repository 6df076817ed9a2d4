#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build and run the project's kselftest directories inside the prepared
# kernel tree with the kernel's own kselftest runner (lib.mk run_tests),
# then print one closing line: "N passed, N failed, N skipped".
#
#   run-selftests.sh DIR...     DIR relative to tools/testing/selftests
#
# TESTS="name..." limits each directory to the named test programs.

set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${VECNET_BUILD:-$top/build}
export VECNET_SRC=${VECNET_SRC:-$top} VECNET_BUILD=$build
export VECSWITCH=${VECSWITCH:-$build/vecswitch-asan}

tree=$(find "$build" -maxdepth 1 -type d -name 'linux-*' | head -n 1)
if [ -z "$tree" ]; then
	echo "run-selftests: no kernel tree under $build: run 'make' first" >&2
	exit 1
fi
[ $# -gt 0 ] || { echo "usage: run-selftests.sh DIR..." >&2; exit 2; }

logdir=$build/selftests
mkdir -p "$logdir"
pass=0 fail=0 skip=0

for dir in "$@"; do
	src=$tree/tools/testing/selftests/$dir
	if [ ! -f "$src/Makefile" ]; then
		echo "run-selftests: no $dir in the kernel tree (overlay missing?)" >&2
		fail=$((fail + 1))
		continue
	fi
	log=$logdir/${dir//\//_}.tap
	echo "  TEST    $dir"
	# lib.mk picks its OUTPUT only when it is the top-level make
	if ! make -s -C "$src" OUTPUT="$src" >"$log.build" 2>&1; then
		cat "$log.build" >&2
		echo "not ok - $dir: build failed" | tee "$log"
		fail=$((fail + 1))
		continue
	fi
	runargs=()
	[ -n "${TESTS:-}" ] && runargs=("TEST_PROGS=${TESTS}" "TEST_GEN_PROGS=")
	make -s -C "$src" OUTPUT="$src" "${runargs[@]}" run_tests 2>&1 | tee "$log"
	p=$(grep -cE '^ok [0-9]+ ' "$log" | head -n 1)
	s=$(grep -cE '^ok [0-9]+ .*# SKIP' "$log")
	f=$(grep -cE '^not ok [0-9]+ ' "$log")
	pass=$((pass + p - s)) skip=$((skip + s)) fail=$((fail + f))
	if [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then
		echo "run-selftests: $dir ran no test" >&2
		fail=$((fail + 1))
	fi
done

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
