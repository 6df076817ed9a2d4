#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build a man page from a man-page-shaped reStructuredText document
# (title, subtitle, ":Manual section:") with Debian's docutils rst2man.
#
#   mkman.sh SRC.rst OUT
#
# Any docutils warning stops the build.  rst2man draws every table as a
# centred box whose cells are justified text blocks; in a man page of
# several screens groff then warns about boxes broken across its pages
# ("character above first line discarded") and about narrow cells it
# cannot justify.  So the tables lose their rules and their centring,
# and their cells are set ragged-right: the same columns, read as well on
# a terminal, and 'man --warnings' stays quiet.

set -euo pipefail

[ $# -eq 2 ] || { echo "usage: mkman.sh SRC.rst OUT" >&2; exit 2; }
src=$1 out=$2
rst2man=${RST2MAN:-rst2man}
command -v "$rst2man" >/dev/null ||
	{ echo "mkman: $rst2man not found (Debian package python3-docutils; run 'make deps')" >&2; exit 1; }

tmp=$(mktemp "$out.XXXXXX")
trap 'rm -f "$tmp"' EXIT
"$rst2man" --halt=warning --no-generator --no-datestamp "$src" |
	sed -e '/^\.TS$/,/^\.TE$/{' \
	    -e '/^|[lcr|]*|\.$/s/|//g' \
	    -e '/^_$/d' \
	    -e '/^center;$/d' \
	    -e 's/T{$/T{\n.na/' \
	    -e '}' >"$tmp"
chmod 644 "$tmp"
mv "$tmp" "$out"
