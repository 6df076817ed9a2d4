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
# DIR@TAG runs DIR again on another kernel: $VECNET_<TAG>_VMLINUX, guests
# of $VECNET_<TAG>_CPUS CPUs, only those of the programs named in
# $VECNET_<TAG>_TESTS that DIR has (make check: TAG debug, the debug
# kernel; TAG other, the other kernel series).  Every guest test fails on
# a kernel report on a guest's console (um/lib.sh).
# Each DIR runs from the tree its guest kernel was built in, by default
# that of $VMLINUX (build/vmlinux).

set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${VECNET_BUILD:-$top/build}
export VECNET_SRC=${VECNET_SRC:-$top} VECNET_BUILD=$build
export VECSWITCH=${VECSWITCH:-$build/vecswitch-asan}

export VMLINUX=${VMLINUX:-$build/vmlinux}
if [ ! -e "$VMLINUX" ]; then
	echo "run-selftests: no guest kernel at $VMLINUX: run 'make' first" >&2
	exit 1
fi
[ $# -gt 0 ] || { echo "usage: run-selftests.sh DIR..." >&2; exit 2; }

logdir=$build/selftests
mkdir -p "$logdir"
pass=0 fail=0 skip=0

# What the tests leave behind: network namespaces, temporary files and
# directories, and processes that carry this run's mark in their
# environment.  Anything new at the end that matches is a leak, which
# fails the run.  Marked processes are killed; namespaces and files are
# only named, since a program other than this run may own them.  Another
# test run on the same host (it holds the lock too) could leave things
# that look like ours, so the check stands aside while one runs.
leak_ns='(vecnet|vsw)-'
leak_tmp='(vecnet-|vsw-|uml-run\.|qemu-initrd\.)'
export VECNET_RUN_MARK=run-$$-$RANDOM
exec 8>/tmp/.vecnet-selftests.lock
flock -s 8
leftovers() {
	ip netns list 2>/dev/null | awk '{ print "netns " $1 }' | grep -E "^netns $leak_ns" || true
	find /tmp -mindepth 1 -maxdepth 1 -printf 'tmp %f\n' | grep -E "^tmp $leak_tmp" || true
	local f pid p
	grep -lsxF "VECNET_RUN_MARK=$VECNET_RUN_MARK" --null-data /proc/[0-9]*/environ |
	while read -r f; do
		pid=${f#/proc/} pid=${pid%/environ} p=$pid
		# this runner and what it runs now (this very check) are not leaks
		while [ "$p" -gt 1 ] && [ "$p" != $$ ]; do
			# gone meanwhile (this check's own short-lived commands)
			p=$(awk '{ print $4 }' "/proc/$p/stat" 2>/dev/null) || p=$$
			[ -n "$p" ] || p=$$
		done
		[ "$p" = $$ ] || echo "process $pid"
	done
}
before=$(leftovers | sort)

for arg in "$@"; do
	dir=${arg%@*} tag=
	[ "$dir" = "$arg" ] || tag=${arg##*@}
	vmlinux=$VMLINUX cpus=${UML_CPUS:-1} tests=${TESTS:-}
	log=$logdir/${dir//\//_}${tag:+_$tag}.tap
	if [ -n "$tag" ]; then
		v=VECNET_${tag^^}_VMLINUX c=VECNET_${tag^^}_CPUS tv=VECNET_${tag^^}_TESTS
		vmlinux=${!v:-} cpus=${!c:-1} tests=
		if [ ! -x "$vmlinux" ]; then
			echo "not ok - $arg: no guest kernel at '$vmlinux' (\$$v)" | tee "$log"
			fail=$((fail + 1))
			continue
		fi
		for t in ${!tv:-}; do
			[ -e "$(dirname "$(readlink -f "$vmlinux")")/tools/testing/selftests/$dir/$t" ] &&
				tests+=" $t"
		done
		if [ -z "$tests" ]; then
			echo "not ok - $arg: none of \$$tv is in $dir" | tee "$log"
			fail=$((fail + 1))
			continue
		fi
	fi
	tree=$(dirname "$(readlink -f "$vmlinux")")
	src=$tree/tools/testing/selftests/$dir
	if [ ! -f "$src/Makefile" ]; then
		echo "run-selftests: no $dir in the kernel tree (overlay missing?)" >&2
		fail=$((fail + 1))
		continue
	fi
	echo "  TEST    $arg"
	# lib.mk picks its OUTPUT only when it is the top-level make
	if ! make -s -C "$src" OUTPUT="$src" >"$log.build" 2>&1; then
		cat "$log.build" >&2
		echo "not ok - $dir: build failed" | tee "$log"
		fail=$((fail + 1))
		continue
	fi
	runargs=()
	[ -n "$tests" ] && runargs=("TEST_PROGS=${tests# }" "TEST_GEN_PROGS=")
	VMLINUX=$vmlinux UML_CPUS=$cpus VECNET_KTREE=$tree \
		make -s -C "$src" OUTPUT="$src" "${runargs[@]}" run_tests 2>&1 | tee "$log"
	p=$(grep -cE '^ok [0-9]+ ' "$log" | head -n 1)
	s=$(grep -cE '^ok [0-9]+ .*# SKIP' "$log")
	f=$(grep -cE '^not ok [0-9]+ ' "$log")
	pass=$((pass + p - s)) skip=$((skip + s)) fail=$((fail + f))
	if [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then
		echo "run-selftests: $arg ran no test" >&2
		fail=$((fail + 1))
	fi
done

if flock -x -n 8; then
	# a guest's processes may take a moment to go after its test ended
	for _ in $(seq 50); do
		left=$(comm -13 <(echo "$before") <(leftovers | sort))
		[ -n "$left" ] || break
		sleep 0.1
	done
	if [ -n "$left" ]; then
		echo "run-selftests: the tests left behind:" >&2
		while read -r what name; do
			case $what in
			netns) echo "  network namespace $name" >&2 ;;
			tmp) echo "  /tmp/$name" >&2 ;;
			process) echo "  process $name: $(tr '\0' ' ' 2>/dev/null </proc/"$name"/cmdline | cut -c1-100)" >&2
				kill -KILL "$name" 2>/dev/null ;;
			esac
		done <<<"$left"
		fail=$((fail + 1))
	fi
else
	echo "run-selftests: another test run is active; leftovers not checked" >&2
fi

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
