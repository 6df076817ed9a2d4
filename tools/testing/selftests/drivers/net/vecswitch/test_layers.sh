#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The switch's files call each other one way only: no file calls back,
# directly or around a loop, into a file that calls it
# (scripts/vecswitch-deps.py, whose graph vecswitch-internals.rst shows).
# Calls through an I/O backend's table (struct vs_io_ops) count: a
# backend that called back into the loop would be a loop too.

source "$(dirname "$(readlink -f "$0")")/../lib.sh"
require_cmd python3

out=$(python3 "$VECNET_SRC/scripts/vecswitch-deps.py" --check \
	"$VECNET_SRC/tools/net/vecswitch" 2>&1)
check_err $? "the switch's files call in a loop: $(grep cycle <<<"$out")"
grep -q "^loop.c .*dgram.c" <<<"$out"
check_err $? "the graph misses loop.c -> dgram.c, so it reads nothing: $out"
grep -q "^loop.c .*io_uring.c.*mmsg.c" <<<"$out"
check_err $? "the graph misses the calls through the backends' tables: $out"
while IFS= read -r line; do
	echo "# $line"
done <<<"$out"

log_test "the switch's files call one way"
exit "$RET"
