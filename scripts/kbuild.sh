#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build a UML kernel from Debian's linux-source-6.12 package.
#
#   kbuild.sh BUILD_DIR              our kernel: every patch, our files
#                                    overlaid; result BUILD_DIR/vmlinux
#   kbuild.sh --baseline BUILD_DIR   the kernel's bundled vector driver
#                                    with only patches/base applied; result
#                                    BUILD_DIR/baseline/vmlinux
#
# Each step runs only when its inputs changed, so a second run with
# nothing changed costs only Kbuild's own up-to-date check.

set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
variant=ours
if [ "${1:-}" = "--baseline" ]; then
	variant=baseline
	shift
fi
build=${1:?usage: kbuild.sh [--baseline] BUILD_DIR}
mkdir -p "$build"
build=$(cd "$build" && pwd)

pkg=linux-source-6.12
tarball=/usr/src/$pkg.tar.xz
fragment=$top/arch/um/configs/vecnet.config
jobs=${JOBS:-$(nproc)}

say() { printf '  %-7s %s\n' "$1" "$2"; }
die() { echo "kbuild: $*" >&2; exit 1; }

[ -r "$tarball" ] || die "$tarball is missing: run 'make deps' (package $pkg)"
pkgver=$(dpkg-query -W -f='${Version}' "$pkg") || die "package $pkg is not installed"
kver=${pkgver%%-*}

if [ "$variant" = ours ]; then
	outdir=$build
	patchdirs=("$top/patches/base" "$top/patches/vecnet")
else
	outdir=$build/baseline
	patchdirs=("$top/patches/base")
fi
tree=$outdir/linux-$kver
mkdir -p "$outdir"

# One build of a tree at a time: a second one waits instead of unpacking
# the tree again under the first.
exec 9>"$outdir/.kbuild.lock"
if ! flock -n 9; then
	say WAIT "another build of ${outdir#"$top"/} is running"
	flock 9
fi

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
		say CLEAN "$tree (source or patches changed)"
		rm -rf "$tree"
	fi
	say UNPACK "$pkg $pkgver"
	tmp=$(mktemp -d "$outdir/.unpack.XXXXXX")
	tar -C "$tmp" -xf "$tarball"
	mv "$tmp/$pkg" "$tree"
	rmdir "$tmp"
	for p in "${patches[@]}"; do
		say PATCH "${p#"$top"/}"
		patch -d "$tree" -p1 --batch --forward --quiet < "$p" ||
			die "patch ${p#"$top"/} does not apply to $pkg $pkgver"
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

if [ "$variant" = ours ]; then
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
	[ "$n" -gt 0 ] && say OVERLAY "$n file(s) linked into linux-$kver"
else
	mkdir -p "$tree/arch/um/configs"
	cp "$fragment" "$tree/arch/um/configs/vecnet.config"
fi

# --- configure -----------------------------------------------------------
cfgwant=$( { echo "$want"; cat "$fragment"; } | sha256sum | cut -d' ' -f1)
if [ ! -f "$tree/.config" ] || [ "$(cat "$tree/.vecnet-config" 2>/dev/null)" != "$cfgwant" ]; then
	say CONFIG "defconfig + arch/um/configs/vecnet.config"
	make -s -C "$tree" ARCH=um defconfig >/dev/null
	make -s -C "$tree" ARCH=um vecnet.config >/dev/null
	# merge_config only warns when a request is not met; refuse instead
	bad=0
	while IFS= read -r line; do
		case "$line" in
		"# CONFIG_"*" is not set") sym=${line#\# }; sym=${sym%% *}
			grep -q "^$sym=" "$tree/.config" && { echo "kbuild: $sym is set, wanted off" >&2; bad=1; } ;;
		CONFIG_*=n) sym=${line%%=*}
			grep -q "^$sym=" "$tree/.config" && { echo "kbuild: $sym is set, wanted off" >&2; bad=1; } ;;
		CONFIG_*=*) grep -qxF "$line" "$tree/.config" || { echo "kbuild: $line did not take" >&2; bad=1; } ;;
		esac
	done < "$fragment"
	[ "$bad" -eq 0 ] || die "the config fragment does not apply cleanly"
	echo "$cfgwant" > "$tree/.vecnet-config"
fi

# --- build ---------------------------------------------------------------
say MAKE "linux-$kver ARCH=um -j$jobs ($variant)"
make -C "$tree" ARCH=um -j"$jobs" vmlinux 2>&1 |
	{ grep --line-buffered -Ev '^make(\[[0-9]+\])?: (Entering|Leaving)' || true; }
ln -sfn "linux-$kver/vmlinux" "$outdir/vmlinux"
say READY "${outdir#"$top"/}/vmlinux"
