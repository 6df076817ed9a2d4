#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the project's libFuzzer targets: vecswitch's (frame intake and
# forwarding, the stream framer, the control protocol, virtio-net headers
# and software segmentation, --config files) and the vecnet driver's,
# built for the host (its option parser, the gre and l2tpv3 receive
# checks), and vecnat's
# port forward specs; replay every
# input that once crashed them, then fuzz each briefly from the seed
# corpus. Any crash, sanitizer report or broken invariant fails the test.
#
# Needs: clang with libFuzzer (Debian: clang-14 libclang-rt-14-dev) and the
# project's sources ($VECNET_SRC, set by scripts/run-selftests.sh).
# FUZZ_SECONDS sets the time per target (default 10).
#
# Exit: 0 pass, 1 fail, 4 skip (no clang with libFuzzer).

set -uo pipefail

# no guest: the library's SKIP without VECNET_SRC, TEST_TMP and clean-up
LIB_NO_GUEST=1
# shellcheck source-path=SCRIPTDIR source=../lib.sh
source "$(dirname "$(readlink -f "$0")")/../lib.sh"

seconds=${FUZZ_SECONDS:-10}
out=$TEST_TMP

srcs=("$VECNET_SRC/tools/testing/fuzz/vecswitch" "$VECNET_SRC/tools/testing/fuzz/vecnet"
	"$VECNET_SRC/tools/testing/fuzz/vecnat")
for d in "${srcs[@]}"; do
	if [ ! -f "$d/Makefile" ]; then
		echo "# FAIL: fuzz sources not found in $d"
		exit 1
	fi
done
runner=$VECNET_SRC/scripts/run-fuzz.sh

clang=""
for c in clang-16 clang-15 clang-14 clang; do
	if command -v "$c" >/dev/null; then
		clang=$(command -v "$c")
		break
	fi
done
[ -n "$clang" ] || { echo "# SKIP: no clang"; exit "$ksft_skip"; }

# a compiler without the libFuzzer runtime is a missing prerequisite
printf 'int LLVMFuzzerTestOneInput(const char *d, long n){(void)d;(void)n;return 0;}\n' \
	>"$out/probe.c"
if ! "$clang" -fsanitize=fuzzer -o "$out/probe" "$out/probe.c" 2>/dev/null; then
	echo "# SKIP: $clang has no libFuzzer runtime (libclang-rt-*-dev)"
	exit "$ksft_skip"
fi

rc=0
for src in "${srcs[@]}"; do
	echo "# building the fuzz targets of ${src#"${VECNET_SRC:-}"/} with $clang"
	# a clean make: the runner's MAKEFLAGS (OUTPUT=...) must not leak in
	if ! env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
		make -s -C "$src" CLANG="$clang" O="$out" >"$out/build.log" 2>&1; then
		sed 's/^/# /' "$out/build.log"
		echo "# FAIL: fuzz targets do not build"
		exit 1
	fi
	"$runner" --src "$src" --bin-dir "$out" --seconds "$seconds" | sed 's/^/# /'
	[ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
done
[ "$rc" -eq 0 ] || echo "# FAIL: a fuzz target crashed"
exit "$rc"
