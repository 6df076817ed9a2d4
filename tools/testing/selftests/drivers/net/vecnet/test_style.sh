#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The driver's files call each other one way only (no file calls back,
# directly or around a loop, into a file that calls it: the layers of
# the map at the top of vecnet.h), its sources pass checkpatch --strict,
# its directory builds with W=1 without a single warning, and every
# shell script of the project is clean for shellcheck -x.

source "$(dirname "$(readlink -f "$0")")/../lib.sh"
require_cmd python3

tree=${VECNET_KTREE:-$(dirname "$(readlink -f "$VMLINUX")")}
src=$VECNET_SRC/arch/um/drivers/vecnet

# the graph, and a cycle or the sign that it read nothing at its end
python3 "$VECNET_SRC/scripts/vecnet-deps.py" --check "$src" 2>&1 | sed 's/^/# /'
check_err "${PIPESTATUS[0]}" "the driver's files call in a loop, or none was read"

if [ ! -x "$tree/scripts/checkpatch.pl" ]; then
	[ "$RET" -eq 0 ] && { echo "SKIP: no kernel tree"; exit "$ksft_skip"; }
	log_test "the driver's files call one way"
	exit "$RET"
fi

# UNDOCUMENTED_SETUP: with -f, checkpatch only counts documentation
# added in the same patch; patches/vecnet documents vec<n>: and
# fail_vecnet_rx= in kernel-parameters.txt.
# LINUX_VERSION_CODE: vecnet_compat.h is the one place that tests the
# kernel version, so the driver builds on each series it supports.
for f in "$src"/*.[ch]; do
	ignore=UNDOCUMENTED_SETUP
	[ "${f##*/}" = vecnet_compat.h ] && ignore+=,LINUX_VERSION_CODE
	if ! out=$("$tree/scripts/checkpatch.pl" --strict --no-tree -q \
			--ignore "$ignore" -f "$f" 2>&1); then
		echo "$out"
		check_err 1 "checkpatch: ${f#"$VECNET_SRC"/}"
	elif [ -n "$out" ]; then
		echo "$out"
		check_err 1 "checkpatch has remarks on ${f#"$VECNET_SRC"/}"
	fi
done

# Kbuild rebuilds the objects because the flags changed, and again with
# the normal flags on the next "make kernel".
log=$TEST_TMP/w1.log
make -C "$tree" ARCH=um W=1 arch/um/drivers/vecnet/ >"$log" 2>&1
check_err $? "W=1 build failed"
if grep -E 'warning:|error:' "$log"; then
	check_err 1 "W=1 build has warnings"
fi

# Every shell script of the project, each from its own directory so
# that -x follows its relative "source" lines
if command -v shellcheck >/dev/null; then
	while read -r f; do
		(cd "$(dirname "$f")" && shellcheck -x "$(basename "$f")")
		check_err $? "shellcheck: ${f#"$VECNET_SRC"/}"
	done < <(find "$VECNET_SRC/scripts" "$VECNET_SRC/tools/testing/selftests" \
			"$VECNET_SRC/.ci" -type f \( -name '*.sh' -o -name uml-run \
			-o -name uml-exec -o -name vecnet-guest -o -path '*/.ci/run' \))
else
	check_err 1 "shellcheck is not installed (make deps installs it)"
fi

log_test "files call one way, checkpatch --strict, W=1, shellcheck"
exit "$RET"
