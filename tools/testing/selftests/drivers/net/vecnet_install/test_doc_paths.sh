#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The documentation sends users to the system service's sockets: every
# /run/vecswitch/NAME.sock that README.md, the man pages and the
# examples they include name must be one that the shipped unit's
# command line creates, so that an example pasted on a machine with the
# service finds its socket.

LIB_NO_GUEST=1
source "$(dirname "$(readlink -f "$0")")/../lib.sh"

unit=$VECNET_SRC/tools/net/vecswitch/vecswitch.service
made=$(sed -n '/^ExecStart=/,/[^\\]$/p' "$unit" | grep -o '/run/vecswitch/[A-Za-z0-9_.-]*\.sock' | sort -u)
[ -n "$made" ]
check_err $? "no /run/vecswitch socket on the unit's ExecStart= line"
docs=("$VECNET_SRC/README.md" "$VECNET_SRC"/Documentation/networking/*.rst
      "$VECNET_SRC"/Documentation/networking/vecswitch-examples/*)
named=$(grep -ho '/run/vecswitch/[A-Za-z0-9_.-]*\.sock' "${docs[@]}" | sort -u)
for p in $named; do
	grep -qxF "$p" <<<"$made"
	check_err $? "$p is in the documentation ($(grep -l "$p" "${docs[@]}" | xargs -n1 basename | tr '\n' ' ')) but the unit makes no such socket"
done
echo "# the unit makes: $(echo "$made" | tr '\n' ' ')"

log_test "the documentation names only sockets the shipped unit makes"
exit "$RET"
