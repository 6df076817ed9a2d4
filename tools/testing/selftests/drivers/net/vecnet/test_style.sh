#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The driver's files call each other one way only (no file calls back,
# directly or around a loop, into a file that calls it: the layers of
# the map at the top of vecnet.h), its sources pass checkpatch --strict,
# its directory builds with W=1 without a single warning, and every
# shell script of the project is clean for shellcheck -x.  No shell
# function is defined in two of the project's shell files, and no test
# or script spells the wire format's numbers again (wire_literals.py)
# nor builds frames, headers or checksums but through vecnet_wire.py
# (py_builders.py).  No test header is over 400 lines, no test source
# over 800.

source "$(dirname "$(readlink -f "$0")")/../lib.sh"
require_cmd python3

tree=${VECNET_KTREE:-$(dirname "$(readlink -f "$VMLINUX")")}
src=$VECNET_SRC/arch/um/drivers/vecnet

# the graph, and a cycle or the sign that it read nothing at its end
python3 "$VECNET_SRC/scripts/vecnet-deps.py" --check "$src" 2>&1 | sed 's/^/# /'
check_err "${PIPESTATUS[0]}" "the driver's files call in a loop, or none was read"

# every shell script of the project (tests, scripts/, CI)
mapfile -t scripts < <(find "$VECNET_SRC/scripts" "$VECNET_SRC/tools/testing/selftests" \
	"$VECNET_SRC/.ci" -type f \( -name '*.sh' -o -name uml-run -o -name uml-exec \
	-o -name vecnet-guest -o -path '*/.ci/run' \))

# A helper defined twice drifts: one that several tests use lives in
# ../lib.sh (the guests' in guest_lib.sh), the build scripts' in
# scripts/build-lib.sh.  A function that two files define, with its files:
twice=$(for f in "${scripts[@]}"; do
	sed -nE 's/^[[:space:]]*(function[[:space:]]+)?([A-Za-z_][A-Za-z0-9_]*)[[:space:]]*\(\).*/\2/p' "$f" |
		sort -u | sed "s|\$| ${f#"$VECNET_SRC"/}|"
done | awk '{ n[$1]++; at[$1] = at[$1] " " $2 }
	    END { for (f in n) if (n[f] > 1) print f ":" at[f] }')
[ -z "$twice" ]
check_err $? "shell functions defined in more than one file: ${twice//$'\n'/; }"
[ "${#scripts[@]}" -gt 50 ]
check_err $? "the function check read ${#scripts[@]} scripts: not the project's"

# The wire format's numbers are include/uapi/linux/vecnet.h's alone
python3 "$(dirname "$(readlink -f "$0")")/wire_literals.py" "$VECNET_SRC" | sed 's/^/# /'
check_err "${PIPESTATUS[0]}" "tests or scripts spell the wire format again, not by the header's names"

# A test header over about 400 lines, or a test source over 800, is one
# that every change touches: split by theme instead
big=$(find "$VECNET_SRC/tools/testing" -type f \( -name '*.h' -o -name '*.c' \
	-o -name '*.py' -o -name '*.sh' \) -exec wc -l {} + |
	awk -v top="$VECNET_SRC/" '$2 != "total" {
		max = $2 ~ /\.h$/ ? 400 : 800
		if ($1 > max) { sub(top, "", $2); printf "%s%s (%d lines)", sep, $2, $1; sep = "; " }
	}')
[ -z "$big" ]
check_err $? "test files over 400 lines (a header) or 800 (a source): $big"

# Frames, headers and checksums are vecnet_wire.py's to build
python3 "$(dirname "$(readlink -f "$0")")/py_builders.py" "$VECNET_SRC" | sed 's/^/# /'
check_err "${PIPESTATUS[0]}" "tests or scripts build frames, headers or checksums of their own"

if [ ! -x "$tree/scripts/checkpatch.pl" ]; then
	[ "$RET" -eq 0 ] && { echo "SKIP: no kernel tree"; exit "$ksft_skip"; }
	log_test "files call one way, no shell function twice, the wire format once, frames built in one place, test files small"
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
	for f in "${scripts[@]}"; do
		(cd "$(dirname "$f")" && shellcheck -x "$(basename "$f")")
		check_err $? "shellcheck: ${f#"$VECNET_SRC"/}"
	done
else
	check_err 1 "shellcheck is not installed (make deps installs it)"
fi

log_test "files call one way, no shell function twice, the wire format once, frames built in one place, test files small, checkpatch --strict, W=1, shellcheck"
exit "$RET"
