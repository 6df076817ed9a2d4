#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The documentation sends users to the system service's sockets: every
# /run/vecswitch/NAME.sock that README.md, the man pages and the
# examples they include name must be one that the shipped unit's
# command line creates, and every /run/vecswitch/NETWORK/NAME.sock one
# that the template unit's creates in a network's directory, so that an
# example pasted on a machine with the service finds its socket.

LIB_NO_GUEST=1
source "$(dirname "$(readlink -f "$0")")/../lib.sh"

docs=("$VECNET_SRC/README.md" "$VECNET_SRC"/Documentation/networking/*.rst
      "$VECNET_SRC"/Documentation/networking/vecswitch-examples/*)

# check_unit UNIT SUB: every /run/vecswitch/SUB*.sock the documentation
# names (SUB a pattern for a network's directory, or nothing) is one the
# ExecStart= line of UNIT makes (in /run/vecswitch/%i/ for a network's)
check_unit() {
	local unit=$1 sub=$2 made named p

	made=$(sed -n '/^ExecStart=/,/[^\\]$/p' "$unit" |
		grep -o "/run/vecswitch/${sub:+%i/}[A-Za-z0-9_.-]*\.sock" | sed 's|.*/||' | sort -u)
	[ -n "$made" ]
	check_err $? "no /run/vecswitch/${sub:+%i/} socket on the ExecStart= line of ${unit##*/}"
	named=$(grep -ho "/run/vecswitch/${sub}[A-Za-z0-9_.-]*\.sock" "${docs[@]}" | sort -u)
	for p in $named; do
		grep -qxF "${p##*/}" <<<"$made"
		check_err $? "$p is in the documentation ($(grep -lF "$p" "${docs[@]}" | xargs -n1 basename | tr '\n' ' ')) but ${unit##*/} makes no such socket"
	done
	echo "# ${unit##*/} makes in /run/vecswitch/${sub:+NETWORK/}: $(echo "$made" | tr '\n' ' ')"
}

check_unit "$VECNET_SRC/tools/net/vecswitch/vecswitch.service" ""
check_unit "$VECNET_SRC/tools/net/vecswitch/vecswitch@.service" "[A-Za-z0-9_.-]*/"

log_test "the documentation names only sockets the shipped units make"
exit "$RET"
