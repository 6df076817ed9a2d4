# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# What the build scripts (kbuild.sh, kselftests.sh) share: their progress
# lines and their way of giving up.  Sourced, not run.

# stage WHAT DETAIL: a progress line, in Kbuild's own layout
stage() { printf '  %-7s %s\n' "$1" "$2"; }

# abort MESSAGE: MESSAGE on stderr after the running script's name
# ("kbuild: ..."), and exit 1
abort() {
	local me=${0##*/}

	echo "${me%.sh}: $*" >&2
	exit 1
}
