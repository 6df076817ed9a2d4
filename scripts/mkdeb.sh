#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make deb: build the Debian packages vecswitch and vecnet-uml from a
# copy of this tree with dpkg-buildpackage, and leave them in BUILD_DIR.
# The copy is a source tree as a release tarball would be: this tree's
# files (committed or not, as 'git ls-files' lists them) and a VERSION
# file, with a changelog entry for that version.  The guest kernel is
# the one 'make' built (BUILD_DIR/vmlinux), handed in through the build
# profile pkg.vecnet.prebuilt; debian/rules builds the rest.
#
#   mkdeb.sh BUILD_DIR

set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:?usage: mkdeb.sh BUILD_DIR}
build=$(cd "$build" && pwd)

[ -x "$build/vmlinux" ] || { echo "mkdeb: no $build/vmlinux: run 'make'" >&2; exit 1; }
for c in dpkg-buildpackage dh; do
	command -v "$c" >/dev/null ||
		{ echo "mkdeb: $c is missing (dpkg-dev, debhelper: run 'make deps')" >&2; exit 1; }
done

version=$("$top/scripts/version.sh")
debversion=$("$top/scripts/version.sh" --deb)
work=$build/deb
src=$work/vecnet-$debversion
rm -rf "$work"
mkdir -p "$src"

if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
	# files deleted but not yet committed are listed too: leave them out
	git -C "$top" ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do
			[ -e "$top/$f" ] && printf '%s\0' "$f"
		done | tar -C "$top" --null -T - -cf - | tar -C "$src" -xf -
else
	tar -C "$top" --exclude=./build -cf - . | tar -C "$src" -xf -
fi
echo "$version" >"$src/VERSION"

# the newest changelog entry names the version being built
{
	printf 'vecnet (%s) unstable; urgency=medium\n\n' "$debversion"
	printf '  * Build of %s.\n\n' "$version"
	printf ' -- %s  %s\n\n' \
		"$(sed -n 's/^Maintainer: //p' "$src/debian/control")" "$(date -R)"
	cat "$top/debian/changelog"
} >"$src/debian/changelog"

echo "  DEB     vecnet $debversion"
# a make above this one (make check) must not hand its variables down
(cd "$src" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL VECNET_VMLINUX="$build/vmlinux" \
	dpkg-buildpackage -b -us -uc -Ppkg.vecnet.prebuilt) >"$work/build.log" 2>&1 ||
	{ tail -n 30 "$work/build.log" >&2; echo "mkdeb: dpkg-buildpackage failed; log: $work/build.log" >&2; exit 1; }

rm -f "$build"/vecswitch_*.deb "$build"/vecnet-uml_*.deb
mv "$work"/*.deb "$build/"
rm -rf "$src"
for d in "$build"/vecswitch_*.deb "$build"/vecnet-uml_*.deb; do
	echo "  DEB     ${d#"$top"/}"
done
