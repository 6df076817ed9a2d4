#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make install and make uninstall.  Into a staging tree (DESTDIR): exactly
# the expected files with their modes, the units (vecswitch.service and
# the template vecswitch@.service) and vecnet-guest with the paths of
# PREFIX filled in, the kernel stripped as the package ships it, the
# package's sysctl.d file, man pages that 'man --warnings' renders
# without a warning, --version of both programs, and an uninstall that
# leaves the staging tree empty.  Then installed for real under a
# temporary PREFIX: the installed vecswitch runs the unit's command line,
# its control socket serves the unit's group and no one else by default,
# and two guests from the installed vecnet-guest ping each other through
# it while the source tree and build/ are hidden from them.

here=$(dirname "$(readlink -f "$0")")
# shellcheck source-path=SCRIPTDIR source=../lib.sh
source "$here/../lib.sh"
# shellcheck source-path=SCRIPTDIR source=install_lib.sh
source "$here/install_lib.sh"
require_cmd man rst2man systemd-analyze nsenter unshare
[ -x "$VECNET_BUILD/vecswitch" ] || { echo "SKIP: no $VECNET_BUILD/vecswitch"; exit "$ksft_skip"; }

mk() { make -s -C "$VECNET_SRC" BUILD="$VECNET_BUILD" "$@"; }

# --- staged: DESTDIR ------------------------------------------------------
dest=$TEST_TMP/dest
out=$(mk install DESTDIR="$dest" 2>&1)
check_err $? "make install DESTDIR failed: $out"
want="755 usr/local/bin/vecnat
755 usr/local/bin/vecnet-guest
755 usr/local/bin/vecswitch
644 usr/local/lib/sysctl.d/vecswitch.conf
644 usr/local/lib/systemd/system/vecswitch.service
644 usr/local/lib/systemd/system/vecswitch@.service
755 usr/local/lib/vecnet/udhcpc-hostfs.sh
755 usr/local/lib/vecnet/vmlinux
644 usr/local/share/man/man1/vecnet-guest.1
644 usr/local/share/man/man7/vecnet.7
644 usr/local/share/man/man8/vecswitch.8"
got=$(cd "$dest" && find . -mindepth 1 ! -type d -printf '%m %P\n' | LC_ALL=C sort -k2)
[ "$got" = "$want" ]
check_err $? "installed files differ: $(diff <(echo "$want") <(echo "$got") | grep '^[<>]')"

for u in vecswitch.service vecswitch@.service; do
	grep -q '^ExecStart=/usr/local/bin/vecswitch ' "$dest/usr/local/lib/systemd/system/$u"
	check_err $? "the ExecStart of $u does not name /usr/local/bin/vecswitch"
done
grep -qx 'libdir=/usr/local/lib/vecnet' "$dest/usr/local/bin/vecnet-guest"
check_err $? "the installed vecnet-guest does not look in /usr/local/lib/vecnet"
# build/vmlinux without its symbol table, a tenth of its size or less;
# the installed guests below boot it
kernel=$dest/usr/local/lib/vecnet/vmlinux
[ -f "$kernel" ] && ! readelf -S "$kernel" | grep -qF .symtab &&
	[ $(($(stat -c %s "$kernel") * 10)) -le "$(stat -Lc %s "$VECNET_BUILD/vmlinux")" ]
check_err $? "the installed kernel is not stripped: $(stat -c %s "$kernel") bytes"
cmp -s "$VECNET_SRC/debian/sysctl/vecswitch.conf" "$dest/usr/local/lib/sysctl.d/vecswitch.conf"
check_err $? "the installed sysctl.d file is not the package's"

for page in man8/vecswitch.8 man7/vecnet.7 man1/vecnet-guest.1; do
	f=$dest/usr/local/share/man/$page
	name=$(basename "$page")
	text=$(MANWIDTH=80 man --warnings -l "$f" 2>"$TEST_TMP/man.err")
	check_err $? "man -l $name failed"
	[ ! -s "$TEST_TMP/man.err" ]
	check_err $? "man --warnings -l $name: $(head -n 5 "$TEST_TMP/man.err")"
	# a NAME line 'name - what it is' (what apropos reads), SEE ALSO
	grep -qE "^ +${name%.*} - [A-Za-z]" <<<"$text" && grep -q '^SEE ALSO' <<<"$text"
	check_err $? "$name: no NAME line or SEE ALSO in the rendered page"
	[[ "$name" == *.7 ]] || grep -q '^SYNOPSIS' <<<"$text"
	check_err $? "$name: no SYNOPSIS"
done

v=$("$dest/usr/local/bin/vecswitch" --version)
g=$("$dest/usr/local/bin/vecnet-guest" --version)
[[ "$v" =~ ^vecswitch\ [0-9]+\.[0-9]+\.[0-9]+ ]] && [ "${g#vecnet-guest }" = "${v#vecswitch }" ]
check_err $? "versions: '$v' and '$g'"
[ "$("$VECNET_SRC/scripts/vecnet-guest" --version)" = "vecnet-guest $("$VECNET_SRC/scripts/version.sh")" ]
check_err $? "vecnet-guest --version in the tree is not scripts/version.sh's"

# a tree that is not a checkout takes its VERSION file, or says it has none
mkdir -p "$TEST_TMP/tarball/scripts"
cp "$VECNET_SRC/scripts/version.sh" "$TEST_TMP/tarball/scripts/"
echo 1.2.3-4-gabc >"$TEST_TMP/tarball/VERSION"
[ "$("$TEST_TMP/tarball/scripts/version.sh")" = 1.2.3-4-gabc ] &&
	[ "$("$TEST_TMP/tarball/scripts/version.sh" --deb)" = 1.2.3+4+gabc ]
check_err $? "version.sh does not read the VERSION file"
rm "$TEST_TMP/tarball/VERSION"
! out=$(GIT_CEILING_DIRECTORIES=$TEST_TMP "$TEST_TMP/tarball/scripts/version.sh" 2>&1) &&
	grep -q 'neither a VERSION file nor a git checkout' <<<"$out"
check_err $? "version.sh without a version: '$out'"

out=$(mk uninstall DESTDIR="$dest" 2>&1)
check_err $? "make uninstall DESTDIR failed: $out"
left=$(find "$dest" -mindepth 1)
[ -d "$dest" ] && [ -z "$left" ]
check_err $? "make uninstall left: $left"

# --- for real, under a temporary PREFIX -------------------------------------
prefix=$TEST_TMP/prefix
# the switch's user must reach its binary, as it would in /usr/local
chmod 755 "$TEST_TMP"
out=$(mk install PREFIX="$prefix" 2>&1)
check_err $? "make install PREFIX failed: $out"
unit=$prefix/lib/systemd/system/vecswitch.service
# the template as an instance of it, a network's unit
out=$(systemd-analyze verify --man=no "$unit" "${unit%/*}/vecswitch@lab1.service" 2>&1)
[ -z "$out" ]
check_err $? "systemd-analyze verify of the installed units: $out"

# the group of the unit's sockets, if a package made it; otherwise one
# that every system has
grp=vecnet
getent group vecnet >/dev/null || grp=nogroup
ns=$(netns_add install)
user=$(unit_user "$unit")
hider_start "$ns" "$grp" "$user"
check_err $? "could not set up the namespaces"
hider=$HIDER
in_hider "$hider" test ! -e "$VECNET_BUILD/vmlinux"
check_err $? "build/ is still visible in the test's mount namespace"

unit_switch "$hider" "$unit" "$grp"
grep -q "^$prefix/bin/vecswitch " "$TEST_TMP/switch.cmd"
check_err $? "ExecStart runs: $(cat "$TEST_TMP/switch.cmd")"
wait_for 10 in_hider "$hider" test -S /run/vecswitch/switch.sock
check_err $? "the unit's command line did not start: $(tail -n 3 "$TEST_TMP/switch.log")"
mode=$(in_hider "$hider" stat -c '%a %U %G' /run/vecswitch/switch.sock)
want="660 $(id -nu "$user") $grp"
[ "$mode" = "$want" ]
check_err $? "the switch's socket is '$mode', not '$want'"
# the control socket is the group's (vecnet-admin's, here GROUP's): a
# member finds it without --ctl, anyone else is told why not
mode=$(in_hider "$hider" stat -c '%a %U %G' /run/vecswitch/ctl.sock)
[ "$mode" = "$want" ]
check_err $? "the control socket is '$mode', not '$want'"
gid=$(getent group "$grp" | cut -d: -f3)
out=$(in_hider "$hider" setpriv --reuid=12345 --regid="$gid" --clear-groups \
	"$prefix/bin/vecswitch" ctl ports 2>&1)
check_err $? "a member of the control socket's group cannot use it: $out"
out=$(in_hider "$hider" setpriv --reuid=12345 --regid=12345 --clear-groups \
	"$prefix/bin/vecswitch" ctl ports 2>&1)
[ $? -eq 1 ] && grep -q 'ctl.sock: Permission denied: its owner and group may use it' <<<"$out"
check_err $? "one outside the group: $out"

guest_pair_ping "$hider" "$prefix/bin/vecnet-guest" /run/vecswitch/switch.sock inst

out=$(mk uninstall PREFIX="$prefix" 2>&1)
check_err $? "make uninstall PREFIX failed: $out"
left=$(find "$prefix" ! -type d)
[ -z "$left" ]
check_err $? "make uninstall PREFIX left: $left"

log_test "make install / uninstall, man pages, installed switch and guests"
exit "$RET"
