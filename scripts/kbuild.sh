#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build a UML kernel from one of Debian's linux-source-<version> packages.
#
#   kbuild.sh [-k VERSION] [-v VARIANT] BUILD_DIR
#
# VERSION is a kernel series this tree carries patches for (patches/<VERSION>/;
# default 7.3).  VARIANT is one of
#   ours      every patch, this tree's files overlaid: BUILD_DIR/kernel-VERSION/
#   debug     the same with lock, sleep, timer-object and memory checkers
#             (arch/um/configs/vecnet-debug.config): BUILD_DIR/debug-VERSION/
#   baseline  the kernel's bundled vector driver, only patches/<VERSION>/base:
#             BUILD_DIR/baseline-VERSION/
# Each output directory holds the tree linux-<x.y.z> and a vmlinux link.
#
# The 6.12 source comes from the host's own apt sources (make deps installs
# linux-source-6.12).  Newer series are not in Debian 12's suites: their
# source package is downloaded with apt through a private configuration
# under BUILD_DIR/apt, which names the suite that carries it and reuses the
# Debian mirror the host already uses; the host's apt setup is not touched.
#
# Each step runs only when its inputs changed, so a second run with
# nothing changed costs only Kbuild's own up-to-date check.

set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
series=7.3
variant=ours
while getopts k:v: opt; do
	case $opt in
	k) series=$OPTARG ;;
	v) variant=$OPTARG ;;
	*) echo "usage: kbuild.sh [-k VERSION] [-v ours|debug|baseline] BUILD_DIR" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
build=${1:?usage: kbuild.sh [-k VERSION] [-v ours|debug|baseline] BUILD_DIR}
mkdir -p "$build"
build=$(cd "$build" && pwd)

# shellcheck source=SCRIPTDIR/build-lib.sh
source "$top/scripts/build-lib.sh"

[ -d "$top/patches/$series" ] ||
	abort "no kernel series '$series' (patches/ has: $(cd "$top/patches" && echo */ | tr -d /))"

# Per series: where its source package comes from, and its config fragments
configs=(vecnet.config)
# what the kernel's own driver tests need (test_kernel_tests.sh, on the
# 7.3 kernel); the baseline gets it too, so that the bench compares
# kernels built alike, the debug kernel does not run those tests
ksft_configs=()
case $series in
6.12) suite= ;;
7.3) suite=trixie-backports; configs+=(vecnet-smp.config); ksft_configs=(vecnet-kselftest.config) ;;
*) abort "kernel series $series has patches but no source entry in kbuild.sh" ;;
esac
case $variant in
ours) outdir=$build/kernel-$series; configs+=("${ksft_configs[@]}") ;;
debug) outdir=$build/debug-$series; configs+=(vecnet-debug.config) ;;
# The bundled driver takes a NULL lock on tap with SMP: build it without
baseline) outdir=$build/baseline-$series; configs=(vecnet.config "${ksft_configs[@]}") ;;
*) abort "unknown variant '$variant' (ours, debug or baseline)" ;;
esac
pkg=linux-source-$series
jobs=${JOBS:-$(nproc)}
mkdir -p "$outdir"

# One build of a tree at a time: a second one waits instead of unpacking
# the tree again under the first.
exec 9>"$outdir/.kbuild.lock"
if ! flock -n 9; then
	stage WAIT "another build of ${outdir#"$top"/} is running"
	flock 9
fi

# --- the source package ------------------------------------------------
# shellcheck source=SCRIPTDIR/apt-private.sh
source "$top/scripts/apt-private.sh"

# fetch_source: download the package into $build/src once, keep its
# tarball and version there; later builds need no network.
fetch_source() {
	local src=$build/src apt=$build/apt deb
	tarball=$src/$pkg.tar.xz
	if [ -r "$tarball" ] && [ -s "$src/$pkg.version" ]; then
		pkgver=$(cat "$src/$pkg.version")
		return
	fi
	mkdir -p "$src" "$apt/deb"
	apt_private "$apt" "$suite" || abort "no private apt configuration for $suite"
	local opts=("${apt_opts[@]}")
	stage FETCH "$pkg from $suite (private apt configuration in ${apt#"$top"/})"
	apt-get "${opts[@]}" update >"$apt/update.log" 2>&1 ||
		{ cat "$apt/update.log" >&2; abort "apt-get update for $suite failed"; }
	rm -f "$apt/deb/"*.deb
	(cd "$apt/deb" && apt-get "${opts[@]}" download "$pkg") >"$apt/download.log" 2>&1 ||
		{ cat "$apt/download.log" >&2; abort "could not download $pkg from $suite"; }
	deb=$(find "$apt/deb" -name "${pkg}_*.deb" | head -n 1)
	[ -n "$deb" ] || abort "apt-get download left no $pkg package"
	dpkg-deb --fsys-tarfile "$deb" | tar -xO "./usr/src/$pkg.tar.xz" > "$tarball.part" ||
		abort "$deb holds no usr/src/$pkg.tar.xz"
	mv "$tarball.part" "$tarball"
	pkgver=$(dpkg-deb -f "$deb" Version)
	echo "$pkgver" > "$src/$pkg.version"
	rm -f "$deb"
}

if [ -z "$suite" ]; then
	tarball=/usr/src/$pkg.tar.xz
	[ -r "$tarball" ] || abort "$tarball is missing: run 'make deps' (package $pkg)"
	pkgver=$(dpkg-query -W -f='${Version}' "$pkg") || abort "package $pkg is not installed"
else
	fetch_source
fi
kver=${pkgver%%-*}

patchdirs=("$top/patches/$series/base")
[ "$variant" = baseline ] || patchdirs+=("$top/patches/$series/vecnet")
tree=$outdir/linux-$kver

# --- unpack and patch --------------------------------------------------
patches=()
for d in "${patchdirs[@]}"; do
	for p in "$d"/*.patch; do
		[ -e "$p" ] && patches+=("$p")
	done
done
want=$( { echo "$pkgver"; for p in "${patches[@]}"; do
	echo "${p#"$top"/}"; cat "$p"; done; } | sha256sum | cut -d' ' -f1)

if [ ! -f "$tree/.vecnet-source" ] || [ "$(cat "$tree/.vecnet-source")" != "$want" ]; then
	if [ -d "$tree" ]; then
		stage CLEAN "$tree (source or patches changed)"
		rm -rf "$tree"
	fi
	stage UNPACK "$pkg $pkgver"
	tmp=$(mktemp -d "$outdir/.unpack.XXXXXX")
	tar -C "$tmp" -xf "$tarball"
	mv "$tmp/$pkg" "$tree"
	rmdir "$tmp"
	for p in "${patches[@]}"; do
		stage PATCH "${p#"$top"/}"
		patch -d "$tree" -p1 --batch --forward --quiet < "$p" ||
			abort "patch ${p#"$top"/} does not apply to $pkg $pkgver"
	done
	echo "$want" > "$tree/.vecnet-source"
fi

# --- overlay our own files ---------------------------------------------
# Real directories, one symlink per file: relative includes such as
# "../../kselftest_harness.h" then resolve inside the kernel tree.
list_own_files() {
	if git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git -C "$top" ls-files --cached --others --exclude-standard -- "$@"
	else
		(cd "$top" && find "$@" -type f 2>/dev/null)
	fi
}

if [ "$variant" != baseline ]; then
	n=0
	while IFS= read -r f; do
		[ -e "$top/$f" ] || continue
		dst=$tree/$f
		if [ "$(readlink "$dst" 2>/dev/null)" != "$top/$f" ]; then
			mkdir -p "$(dirname "$dst")"
			ln -sfn "$top/$f" "$dst"
			n=$((n + 1))
		fi
	done < <(list_own_files arch drivers include net tools Documentation)
	# Links to files we have since removed
	find "$tree" -xtype l -lname "$top/*" -delete
	[ "$n" -gt 0 ] && stage OVERLAY "$n file(s) linked into linux-$kver"
else
	mkdir -p "$tree/arch/um/configs"
	for c in "${configs[@]}"; do
		cp "$top/arch/um/configs/$c" "$tree/arch/um/configs/$c"
	done
fi

# --- configure -----------------------------------------------------------
cfgwant=$( { echo "$want"; for c in "${configs[@]}"; do echo "$c";
	cat "$top/arch/um/configs/$c"; done; } | sha256sum | cut -d' ' -f1)
if [ ! -f "$tree/.config" ] || [ "$(cat "$tree/.vecnet-config" 2>/dev/null)" != "$cfgwant" ]; then
	stage CONFIG "defconfig + ${configs[*]}"
	make -s -C "$tree" ARCH=um defconfig >/dev/null
	make -s -C "$tree" ARCH=um "${configs[@]}" >/dev/null
	# merge_config only warns when a request is not met; refuse instead
	bad=0
	for c in "${configs[@]}"; do
		while IFS= read -r line; do
			case "$line" in
			"# CONFIG_"*" is not set") sym=${line#\# }; sym=${sym%% *}
				grep -q "^$sym=" "$tree/.config" && { echo "kbuild: $c: $sym is set, wanted off" >&2; bad=1; } ;;
			CONFIG_*=n) sym=${line%%=*}
				grep -q "^$sym=" "$tree/.config" && { echo "kbuild: $c: $sym is set, wanted off" >&2; bad=1; } ;;
			CONFIG_*=*) grep -qxF "$line" "$tree/.config" || { echo "kbuild: $c: $line did not take" >&2; bad=1; } ;;
			esac
		done < "$top/arch/um/configs/$c"
	done
	[ "$bad" -eq 0 ] || abort "a config fragment does not apply cleanly to linux-$kver"
	echo "$cfgwant" > "$tree/.vecnet-config"
fi

# --- build ---------------------------------------------------------------
stage MAKE "linux-$kver ARCH=um -j$jobs ($variant)"
make -C "$tree" ARCH=um -j"$jobs" vmlinux 2>&1 |
	{ grep --line-buffered -Ev '^make(\[[0-9]+\])?: (Entering|Leaving)' || true; }
ln -sfn "linux-$kver/vmlinux" "$outdir/vmlinux"
stage READY "${outdir#"$top"/}/vmlinux"
