#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make deb: the packages vecswitch and vecnet-uml build from a copy of the
# tree, vecswitch carries its sysctl.d file (net.unix.max_dgram_qlen),
# lintian reports no error on them (it takes a few seconds), and
# they install with apt-get from the files alone and purge cleanly.
# Installed: the programs, man pages and units (vecswitch.service and
# the template vecswitch@.service) are where Debian wants them,
# vecswitch was built with Debian's hardening flags (hardening-check),
# the groups vecnet and vecnet-admin and the user vecswitch exist, the
# units pass systemd-analyze verify,
# its ExecStart= command line runs as that user
# (where systemd is not PID 1 to start it), and two guests from the
# installed vecnet-guest ping each other through it, with the source
# tree and build/ hidden.  The machine's packages, users and groups are
# as before afterwards.

here=$(dirname "$(readlink -f "$0")")
# shellcheck source-path=SCRIPTDIR source=../lib.sh
source "$here/../lib.sh"
# shellcheck source-path=SCRIPTDIR source=install_lib.sh
source "$here/install_lib.sh"
require_cmd dpkg-buildpackage dh lintian apt-get systemd-analyze nsenter unshare man \
	hardening-check dpkg-buildflags
[ "$(id -u)" -eq 0 ] || { echo "SKIP: installing packages needs root"; exit "$ksft_skip"; }
for p in vecswitch vecnet-uml; do
	if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'installed'; then
		echo "SKIP: package $p is installed on this machine; this test would replace it"
		exit "$ksft_skip"
	fi
done

out=$("$VECNET_SRC/scripts/mkdeb.sh" "$VECNET_BUILD" 2>&1)
check_err $? "make deb failed: $out"
debs=("$VECNET_BUILD"/vecswitch_*.deb "$VECNET_BUILD"/vecnet-uml_*.deb)
[ ${#debs[@]} -eq 2 ] && [ -f "${debs[0]}" ] && [ -f "${debs[1]}" ]
check_err $? "make deb did not leave two packages in build/: ${debs[*]}"

start=$SECONDS
lint=$(lintian --tag-display-limit 0 "${debs[@]}" 2>&1)
echo "# lintian took $((SECONDS - start)) s"
! grep -q '^E: ' <<<"$lint"
check_err $? "lintian errors: $(grep '^E: ' <<<"$lint")"

# the sysctl.d file that raises the guests' datagram queues (vecswitch(8))
sysctl_conf=usr/lib/sysctl.d/vecswitch.conf
dpkg-deb -c "${debs[0]}" | grep -q " \./$sysctl_conf\$"
check_err $? "vecswitch has no /$sysctl_conf"
grep -qx 'net.unix.max_dgram_qlen = 512' "$VECNET_SRC/debian/sysctl/vecswitch.conf"
check_err $? "debian/sysctl/vecswitch.conf does not set net.unix.max_dgram_qlen = 512"

had_group=0 had_admin=0 had_user=0
getent group vecnet >/dev/null && had_group=1
getent group vecnet-admin >/dev/null && had_admin=1
getent passwd vecswitch >/dev/null && had_user=1
# the postinst applies the file: the machine's own value comes back after
qlen=$(sysctl -n net.unix.max_dgram_qlen)
# shellcheck disable=SC2317  # invoked through on_exit
restore_ids() {
	[ "$had_user" = 1 ] || userdel vecswitch 2>/dev/null
	[ "$had_group" = 1 ] || groupdel vecnet 2>/dev/null
	[ "$had_admin" = 1 ] || groupdel vecnet-admin 2>/dev/null
	true
}
# shellcheck disable=SC2317  # invoked through on_exit
restore() {
	dpkg -P vecswitch vecnet-uml >/dev/null 2>&1
	sysctl -q -w net.unix.max_dgram_qlen="$qlen" >/dev/null 2>&1
	restore_ids
}
on_exit restore
out=$(DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${debs[@]}" 2>&1)
check_err $? "apt-get install of the packages failed: $(tail -n 5 <<<"$out")"
[ "$RET" -eq 0 ] || { log_test "make deb and apt-get install"; exit "$RET"; }

for f in /usr/bin/vecswitch /usr/bin/vecnet-guest /usr/lib/vecnet/vmlinux \
	/usr/lib/vecnet/udhcpc-hostfs.sh; do
	[ -x "$f" ]
	check_err $? "$f is not installed"
done
[ -f "/$sysctl_conf" ]
check_err $? "/$sysctl_conf is not installed"
[ "$(sysctl -n net.unix.max_dgram_qlen)" = 512 ] || [ ! -w /proc/sys/net/unix/max_dgram_qlen ]
check_err $? "the postinst did not apply /$sysctl_conf"
for m in vecswitch vecnet vecnet-guest; do
	out=$(MANWIDTH=80 man --warnings "$m" 2>&1 >/dev/null) && [ -z "$out" ]
	check_err $? "man $m: $out"
done
# debian/rules asks dpkg-buildflags for hardening=+all; control-flow
# protection is among what that gives only from dpkg 1.22 on (its feature
# "branch"), so it is required only where this dpkg has it
hardening=(--quiet)
DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --query-features hardening |
	awk '$1 == "Feature:" { f = $2 } $1 == "Enabled:" && f == "branch" && $2 == "yes" { b = 1 }
	     END { exit !b }' || hardening+=(--nocfprotection)
out=$(hardening-check "${hardening[@]}" /usr/bin/vecswitch 2>&1)
check_err $? "the packaged vecswitch lacks hardening: $out"
[ "$(vecnet-guest --version | cut -d' ' -f2)" = "$(vecswitch --version | cut -d' ' -f2)" ]
check_err $? "the installed versions differ"
getent group vecnet >/dev/null && getent group vecnet-admin >/dev/null
check_err $? "the package did not create the groups vecnet and vecnet-admin"
[ "$(id -gn vecswitch 2>/dev/null)" = vecnet ]
check_err $? "the package did not create the user vecswitch in the group vecnet"
unit=/lib/systemd/system/vecswitch.service
# and the template unit, as the instance of a network
out=$(systemd-analyze verify "$unit" /lib/systemd/system/vecswitch@lab1.service 2>&1)
[ -z "$out" ]
check_err $? "systemd-analyze verify $unit and vecswitch@lab1.service: $out"

ns=$(netns_add deb)
hider_start "$ns" vecnet "$(unit_user "$unit")"
check_err $? "could not set up the namespaces"
if [ -d /run/systemd/system ]; then
	echo "# systemd runs here, but the test stays off the machine's services"
fi
unit_switch "$HIDER" "$unit" vecnet
# userdel refuses while the switch runs as vecswitch: again once it is gone
on_exit restore_ids
grep -q '^/usr/bin/vecswitch ' "$TEST_TMP/switch.cmd"
check_err $? "ExecStart runs: $(cat "$TEST_TMP/switch.cmd")"
wait_for 10 in_hider "$HIDER" test -S /run/vecswitch/switch.sock
check_err $? "the unit's command line did not start: $(tail -n 3 "$TEST_TMP/switch.log")"
guest_pair_ping "$HIDER" /usr/bin/vecnet-guest /run/vecswitch/switch.sock deb

out=$(dpkg -P vecswitch vecnet-uml 2>&1)
check_err $? "dpkg -P failed: $out"
for f in /usr/bin/vecswitch /usr/bin/vecnet-guest /usr/lib/vecnet "$unit" \
	/lib/systemd/system/vecswitch@.service "/$sysctl_conf" \
	/etc/systemd/system/multi-user.target.wants/vecswitch.service; do
	[ ! -e "$f" ]
	check_err $? "$f is still there after purge"
done

log_test "make deb, lintian, install, the unit's switch and guests, purge"
exit "$RET"
