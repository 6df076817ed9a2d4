#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Sourced by kbuild.sh and kselftests.sh: apt through a private
# configuration in a directory of the build, naming one Debian suite and
# reusing the Debian mirror the host already uses.  The host's own apt
# setup is neither read for packages nor changed.

# debian_mirror: the first Debian archive (not -security) in the host's
# apt sources, one-line or deb822 format
debian_mirror() {
	local f uri
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
		 /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] || continue
		uri=$(awk '
			/^deb[ \t]/ { for (i = 2; i <= NF; i++) if ($i !~ /^\[/ && $i !~ /=/ && $i !~ /\]$/) { print $i; exit } }
			/^URIs:/ { print $2; exit }' "$f")
		case $uri in
		*/debian | */debian/) echo "${uri%/}"; return 0 ;;
		esac
	done
	return 1
}

# apt_private DIR SUITE: set up DIR for SUITE (sources.list, lists,
# cache) and fill the array apt_opts with the options that make apt-get
# use it; 'apt-get "${apt_opts[@]}" update' then reads only SUITE.
# DEBIAN_MIRROR overrides the host's mirror.
apt_private() {
	local dir=$1 suite=$2 mirror

	mirror=${DEBIAN_MIRROR:-$(debian_mirror)} || {
		echo "no Debian mirror in the host's apt sources; set DEBIAN_MIRROR" >&2
		return 1
	}
	mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $suite main" \
		>"$dir/sources.list"
	# shellcheck disable=SC2034  # read by the sourcing script
	apt_opts=(-q -o "Dir::Etc::SourceList=$dir/sources.list"
		-o Dir::Etc::SourceParts=/dev/null
		-o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir/cache"
		-o Dir::Etc::Preferences=/dev/null
		-o Dir::Etc::PreferencesParts=/dev/null
		-o APT::Sandbox::User=root)
}
