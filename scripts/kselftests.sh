#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kselftests.sh BUILD_DIR: what test_kernel_tests.sh runs in its guests.
#
#   BUILD_DIR/kselftest  the kernel's own drivers/net and drivers/net/hw
#                        selftests, built from the source tree of
#                        BUILD_DIR/vmlinux and installed (their C helpers,
#                        BPF objects, the YNL library and its specs)
#   BUILD_DIR/ethtool    ethtool from Debian's testing suite ("forky"),
#                        unpacked, not installed: the tests want --json for
#                        -c, -g and -l, which Debian 12's ethtool 6.1 does
#                        not have and Debian 13's 6.14 has only for -c and
#                        -g.  Its binary needs only libc 2.34 and libmnl,
#                        which Debian 12 has; it is fetched through a
#                        private apt configuration in BUILD_DIR/apt-forky.
#
# Each part is redone only when its input changed.  The BPF objects are
# built with clang-14 (make deps installs it for the fuzz targets).

set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:?usage: kselftests.sh BUILD_DIR}" && pwd)
# shellcheck source=SCRIPTDIR/build-lib.sh
source "$top/scripts/build-lib.sh"

vmlinux=$(readlink -f "$build/vmlinux") || abort "no $build/vmlinux: run 'make' first"
tree=$(dirname "$vmlinux")
[ -f "$tree/Makefile" ] || abort "$vmlinux is not inside a kernel tree"

# --- the tests -------------------------------------------------------------
out=$build/kselftest
stamp=$(cat "$tree/.vecnet-source" 2>/dev/null)-$(command -v clang-14)
if [ "$(cat "$out/.stamp" 2>/dev/null)" != "$stamp" ]; then
	command -v clang-14 >/dev/null || abort "clang-14 is missing: run 'make deps'"
	stage KSFT "drivers/net drivers/net/hw from ${tree#"$top"/}"
	# the helpers include the kernel's UAPI headers from usr/include
	make -s -C "$tree" ARCH=um headers >/dev/null
	rm -rf "$out" "$build/kselftest.o"
	make -s -C "$tree/tools/testing/selftests" TARGETS="drivers/net drivers/net/hw" \
		O="$build/kselftest.o" INSTALL_PATH="$out" CLANG=clang-14 \
		-j"${JOBS:-$(nproc)}" install >"$build/kselftest.log" 2>&1 ||
		{ tail -n 30 "$build/kselftest.log" >&2; abort "the kernel's selftests did not build (log: $build/kselftest.log)"; }
	# hw/xdp_metadata.py comes without its execute bit in the source
	# tarball; the runner starts each test with its interpreter anyway
	echo "$stamp" >"$out/.stamp"
fi

# --- a newer ethtool -------------------------------------------------------
suite=forky
etool=$build/ethtool
if [ ! -x "$etool/usr/sbin/ethtool" ] || [ "$(cat "$etool/.suite" 2>/dev/null)" != "$suite" ]; then
	# shellcheck source=SCRIPTDIR/apt-private.sh
	source "$top/scripts/apt-private.sh"
	apt=$build/apt-$suite
	apt_private "$apt" "$suite" || abort "no private apt configuration for $suite"
	stage FETCH "ethtool from $suite (private apt configuration in ${apt#"$top"/})"
	apt-get "${apt_opts[@]}" update >"$apt/update.log" 2>&1 ||
		{ cat "$apt/update.log" >&2; abort "apt-get update for $suite failed"; }
	mkdir -p "$apt/deb"
	rm -f "$apt/deb/"*.deb
	(cd "$apt/deb" && apt-get "${apt_opts[@]}" download ethtool) >"$apt/download.log" 2>&1 ||
		{ cat "$apt/download.log" >&2; abort "could not download ethtool from $suite"; }
	deb=$(find "$apt/deb" -name 'ethtool_*.deb' | head -n 1)
	[ -n "$deb" ] || abort "apt-get download left no ethtool package"
	rm -rf "$etool.part"
	dpkg-deb -x "$deb" "$etool.part"
	"$etool.part/usr/sbin/ethtool" --version >/dev/null ||
		abort "ethtool from $suite does not run on this host"
	case $("$etool.part/usr/sbin/ethtool" --json -l lo 2>&1 || true) in
	*"JSON output not available"*) abort "ethtool from $suite has no --json for -l" ;;
	esac
	echo "$suite" >"$etool.part/.suite"
	rm -rf "$etool"
	mv "$etool.part" "$etool"
	rm -f "$deb"
fi
stage READY "${out#"$top"/}, $("$etool/usr/sbin/ethtool" --version)"
