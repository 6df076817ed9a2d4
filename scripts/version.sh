#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Print the project's version: the VERSION file at the top of a source
# tree that is not a git checkout (a tarball, a Debian source package),
# otherwise 'git describe' of the checkout.  Until the first release tag
# (vX.Y.Z) exists, the version counts commits from 0.1.0 in the same
# shape: 0.1.0-N-gHASH, with -dirty for uncommitted changes.
#
#   version.sh           the version
#   version.sh --deb     the same with '+' for '-' (a Debian version)

set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
base=0.1.0

version() {
	local v n h dirty=

	if [ -f "$top/VERSION" ]; then
		head -n 1 "$top/VERSION"
		return
	fi
	if ! git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
		echo "version: neither a VERSION file nor a git checkout in $top" >&2
		return 1
	fi
	if v=$(git -C "$top" describe --tags --match 'v[0-9]*' --dirty 2>/dev/null); then
		echo "${v#v}"
		return
	fi
	n=$(git -C "$top" rev-list --count HEAD)
	h=$(git -C "$top" rev-parse --short=12 HEAD)
	[ -z "$(git -C "$top" status --porcelain --untracked-files=no)" ] || dirty=-dirty
	echo "$base-$n-g$h$dirty"
}

v=$(version)
case "${1:-}" in
'') echo "$v" ;;
--deb) echo "${v//-/+}" ;;
*) echo "usage: version.sh [--deb]" >&2; exit 2 ;;
esac
