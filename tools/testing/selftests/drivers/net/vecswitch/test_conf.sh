#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The switch's options are listed three times: its getopt table (conf.c),
# its --help, and the Ports and Options sections of vecswitch.rst, the man
# page. All three must name the same long options, so that none is
# undocumented or documented but gone.

source "$(dirname "$(readlink -f "$0")")/../lib.sh"
require_cmd python3
require_vecswitch

env -u LD_PRELOAD "$VECSWITCH" --help >"$TEST_TMP/help.txt"
check_err $? "vecswitch --help failed"
out=$(python3 - "$VECNET_SRC/tools/net/vecswitch/conf.c" \
	"$VECNET_SRC/Documentation/networking/vecswitch.rst" "$TEST_TMP/help.txt" 2>&1 <<'PY'
import re, sys

conf = open(sys.argv[1]).read()
table = conf[conf.index("long_opts[]"):]
table = table[:table.index("};")]
getopt = set("--" + m for m in re.findall(r'\{\s*"([a-z][a-z-]*)"', table))

helptext = open(sys.argv[3]).read()
shown = set(re.findall(r"^\s+(?:-\w, )?(--[a-z][a-z-]*)", helptext, re.M))

rst = open(sys.argv[2]).read()
start = rst.index("\nPorts\n=====")
end = rst.index("\nForwarding\n==========")
doc = set(re.findall(r"\*\*(--[a-z][a-z-]*)\*\*", rst[start:end]))

ok = len(getopt) > 20
for name, s in (("--help", shown), ("vecswitch.rst", doc)):
    for o in sorted(getopt - s):
        print(f"{o}: in the getopt table, not in {name}")
        ok = False
    for o in sorted(s - getopt):
        print(f"{o}: in {name}, not in the getopt table")
        ok = False
print(f"{len(getopt)} options in the getopt table, {len(shown)} in --help, "
      f"{len(doc)} in vecswitch.rst")
sys.exit(0 if ok else 1)
PY
)
check_err $? "the option lists differ: $out"
echo "# $out" | tail -n 1

log_test "the switch's options: getopt, --help and the man page agree"
exit "$RET"
