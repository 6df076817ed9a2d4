#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# libvirt as its users run it.  A user made for the test (in a group of
# its own, which the switch's sockets belong to, as the service's belong
# to vecnet) starts its session daemon, libvirtd for qemu:///session,
# with its own home and runtime directory, and defines and starts with
# virsh the domain of vecswitch(8)'s libvirt example
# (Documentation/networking/vecswitch-examples/vhost-user-libvirt.xml) as
# it stands there, with only its /path/to/ files, the service's socket
# path and the guest's settings on the kernel command line put in: a
# light guest booted from the host's kernel and the busybox initramfs of
# test_qemu.sh, under TCG, its memory in a memfd, its interface on the
# switch's --vhost-user socket, QEMU connecting.  A UML guest of this
# project is on the switch's --dgram socket.  Checks:
#
#  1. the domain starts, and virsh domiflist shows the interface on the
#     switch's socket; ctl ports shows the port, named by the domain's
#     QEMU process and the session user;
#  2. the guest pings the UML guest, and the UML guest pings it;
#  3. TCP: the guest fetches 8 MiB of random bytes from the UML guest
#     over HTTP and serves them back, the sums checked both ways;
#  4. virsh destroy leaves no port, no mapping of the guest's memory and
#     no eventfd of its in the switch, which stops cleanly, its
#     sanitizers quiet.
#
# Needs: root (to make the user), libvirt (libvirtd with its QEMU driver,
# virsh), qemu-system-x86_64, what scripts/qemu-initrd.sh needs, setpriv,
# useradd.  The user, its group and all its processes (libvirtd, the
# virtlogd it starts, QEMU) go when the test ends, passed or failed.

source "$(dirname "$(readlink -f "$0")")/../lib.sh"
require_cmd libvirtd virsh qemu-system-x86_64 python3 setpriv useradd userdel \
	groupadd groupdel pgrep
require_vecswitch
[ "$(id -u)" -eq 0 ] || { echo "SKIP: making a user for the session daemon needs root"; exit "$ksft_skip"; }

example=$VECNET_SRC/Documentation/networking/vecswitch-examples/vhost-user-libvirt.xml
# the example's <name>
dom=vecnet-light
ns=$(netns_add libvirt)
CTL=$TEST_TMP/ctl
# the switch's sockets, as in /run/vecswitch; the session user's home
run=$TEST_TMP/run
home=$TEST_TMP/home
console=$home/console.log
user=vsw-lv$$
group=vsw-lvg$$
declare -A ip=([u]=192.0.2.3 [q]=192.0.2.4)

# the verdict (finish, in lib.sh), after the last lines of these too
NAME="a libvirt session domain from vecswitch(8)'s example on --vhost-user: virsh, ping and TCP with a UML guest, nothing left after virsh destroy"
FINISH_LOGS=("$console" "$home/.cache/libvirt/qemu/log/$dom.log")

# ---- the session user ------------------------------------------------------

# drop_user: the session user's processes killed (libvirtd, virtlogd,
# QEMU), then the user, its own group and the test's group removed; only
# what this test made
made_user=0
# shellcheck disable=SC2317  # run by the clean-up
drop_user() {
	local pids

	if [ "$made_user" = 1 ]; then
		for _ in $(seq 1 50); do
			pids=$(pgrep -U "$user" 2>/dev/null) || break
			# shellcheck disable=SC2086  # one pid a word
			kill -KILL $pids 2>/dev/null
			sleep 0.1
		done
		userdel "$user" 2>/dev/null
		# (userdel removes it where login.defs has USERGROUPS_ENAB)
		groupdel "$user" 2>/dev/null
	fi
	groupdel "$group" 2>/dev/null
	true
}
if ! groupadd --system "$group"; then
	check_err 1 "groupadd $group failed"
	finish
fi
on_exit drop_user
useradd --system --user-group --groups "$group" --home-dir "$home" --no-create-home \
	--shell /usr/sbin/nologin "$user" && made_user=1
check_err $? "useradd $user failed"
[ "$RET" -eq 0 ] || finish
uid=$(id -u "$user")
# the user reaches its home and the socket directory, nothing else of
# the test's
chmod 0711 "$TEST_TMP"
mkdir -m 0700 "$home" && chown "$user:$user" "$home" &&
	mkdir -m 0750 "$run" && chgrp "$group" "$run"
check_err $? "could not make the user's directories"

# as_user CMD...: CMD as the session user, in the test's namespace, with
# the environment a login of theirs would give it
as_user() {
	ip netns exec "$ns" setpriv --reuid="$user" --regid="$user" --init-groups \
		env -u LD_PRELOAD -u XDG_CONFIG_HOME -u XDG_CACHE_HOME -u XDG_DATA_HOME \
		-u XDG_STATE_HOME -C "$home" HOME="$home" USER="$user" LOGNAME="$user" \
		XDG_RUNTIME_DIR="$home/run" "$@"
}

# lv ARGS...: virsh on the user's session, for 60 s at most
lv() {
	as_user timeout 60 virsh -q -c qemu:///session "$@"
}

# the guest's kernel and initramfs where the user may read them (the
# session's QEMU opens them as the user: a distribution may keep its
# kernel images for root alone)
light_initrd "$home/initrd.gz" || finish
install -m 0644 "$VSW_KERNEL" "$home/vmlinuz"
check_err $? "could not copy $VSW_KERNEL for the user"

# ---- the switch, the UML guest and the session daemon ----------------------

start_switch "$ns" --dgram "$run/switch.sock" --vhost-user "$run/vhost.sock" --ctl "$CTL" \
	--mode 0660 --group "$group" -v && wait_for 5 test -S "$run/vhost.sock"
check_err $? "the switch did not start: $(tail -n 3 "$TEST_TMP/switch.log")"
[ "$RET" -eq 0 ] || finish
own_eventfds=$(eventfds)

agent "$ns" lv u -a "vec0:transport=unixdgram,path=$run/switch.sock,local=$TEST_TMP/u.sock"

as_user mkdir -m 0700 "$home/run" &&
	{ as_user libvirtd >"$TEST_TMP/libvirtd.log" 2>&1 & } &&
	wait_for 30 test -S "$home/run/libvirt/libvirt-sock"
check_err $? "the session daemon did not start"
[ "$RET" -eq 0 ] || finish

agents_ready "libvirt: the UML guest" u
guests_up "libvirt: the UML guest" u
# what the QEMU guest fetches and sends back
exec_in u sh -c "mkdir -p $TEST_TMP/www && dd if=/dev/urandom of=$TEST_TMP/www/f bs=64k count=128 2>/dev/null && busybox httpd -p 8081 -h $TEST_TMP/www"
check_err $? "the UML guest's web server did not start"

# ---- the domain, as vecswitch(8) has it ------------------------------------

# the guest fetches the UML guest's file, prints its sum on the console
# and serves it (no & < > # or quotes: it goes through sed into XML)
run_q="mkdir /www; i=0; until wget -q -O /www/u http://${ip[u]}:8081/f || [ \$i -ge 60 ]; do i=\$((i+1)); sleep 1; done; md5sum /www/u; httpd -p 8080 -h /www"
for p in /path/to/vmlinuz /path/to/initrd.gz /path/to/console.log \
	 /run/vecswitch/vhost.sock 'console=ttyS0</cmdline>' "<name>$dom</name>"; do
	[ "$(grep -cF "$p" "$example")" = 1 ]
	check_err $? "vecswitch(8)'s libvirt example has no single '$p' for the test to fill in"
done
sed -e "s#/path/to/vmlinuz#$home/vmlinuz#" \
    -e "s#/path/to/initrd.gz#$home/initrd.gz#" \
    -e "s#/path/to/console.log#$console#" \
    -e "s#/run/vecswitch/vhost.sock#$run/vhost.sock#" \
    -e "s#console=ttyS0</cmdline>#console=ttyS0 loglevel=4 panic=-1 VSW_IP=${ip[q]} VSW_PEER=${ip[u]} VSW_RUN=\"$run_q\"</cmdline>#" \
    "$example" >"$home/$dom.xml" && chown "$user" "$home/$dom.xml"
check_err $? "could not fill in the example"
[ "$RET" -eq 0 ] || finish

lv define "$home/$dom.xml" >/dev/null
check_err $? "virsh define of the example failed"
[ "$RET" -eq 0 ] || finish
lv start "$dom" >/dev/null
check_err $? "virsh start failed"
[ "$RET" -eq 0 ] || finish

# 1. the interface as libvirt and the switch see it
iflist=$(lv domiflist "$dom")
awk '{ print "#   " $0 }' <<<"$iflist"
awk -v s="$run/vhost.sock" '$2 == "vhostuser" && $3 == s { f = 1 } END { exit !f }' <<<"$iflist"
check_err $? "virsh domiflist shows no vhostuser interface on $run/vhost.sock"
qpid=$(cat "$home/run/libvirt/qemu/run/$dom.pid" 2>/dev/null)
# vhost_port_named NAME: the switch has one vhost-user port, named NAME
# shellcheck disable=SC2317  # run by wait_for
vhost_port_named() {
	[ "$(ctl ports --json | python3 -c 'import json,sys
print(" ".join(p["name"] for p in json.load(sys.stdin)["ports"] if p["type"] == "vhost-user"))')" = "$1" ]
}
wait_for 30 vhost_port_named "pid=$qpid uid=$uid"
check_err $? "ctl ports has no vhost-user port of the domain's QEMU (pid ${qpid:-unknown}, uid $uid): $(ctl ports)"
ctl ports | sed 's/^/#   /'

# 2. ping both ways
has_line 120 "$console" VSW_UP
check_err $? "the domain's guest did not come up"
[ "$RET" -eq 0 ] || finish
if has_line 60 "$console" VSW_PING_OK; then
	reach_guest u q
else
	check_err 1 "the domain's guest could not ping the UML guest"
fi

# 3. TCP both ways, once ping went: UML -> QEMU (the sum on the guest's
# console), QEMU -> UML (the file served back, fetched into the test's
# directory)
if [ "$RET" -eq 0 ]; then
	sent=$(file_md5 "$TEST_TMP/www/f")
	has_line 90 "$console" '  /www/u'
	got=$(console_md5 "$console" /www/u)
	[ -n "$sent" ] && [ "$sent" = "$got" ]
	check_err $? "TCP UML -> domain: sent md5 '${sent:-none}', received '${got:-none}'"
	# shellcheck disable=SC2016  # expanded in the guest
	exec_in u sh -c 'for i in $(seq 1 30); do busybox wget -q -O "$1" "$2" && exit 0; sleep 1; done; exit 1' \
		sh "$TEST_TMP/back" "http://${ip[q]}:8080/u"
	check_err $? "the UML guest could not fetch the file back from the domain's guest"
	back=$(file_md5 "$TEST_TMP/back")
	[ -n "$sent" ] && [ "$sent" = "$back" ]
	check_err $? "TCP domain -> UML: sent md5 '${sent:-none}', received '${back:-none}'"
	[ "$RET" -eq 0 ] && echo "# TCP: 8 MiB to the domain's guest and back intact (md5 $sent)"
fi

# 4. virsh destroy: the port, the memory mapping and the eventfds go
grep -q "memfd:" "/proc/$SWITCH_PID/maps"
check_err $? "the switch had not mapped the domain's memory"
lv destroy "$dom" >/dev/null
check_err $? "virsh destroy failed"
wait_for 10 vhost_gone
check_err $? "the vhost-user port outlived the domain: $(ctl ports)"
if wait_for 5 let_go "$own_eventfds"; then
	echo "# after virsh destroy the switch holds no port, memory or eventfd of the domain"
else
	check_err 1 "after virsh destroy the switch kept $(grep -c memfd: "/proc/$SWITCH_PID/maps") mappings and $(( $(eventfds) - own_eventfds )) eventfds"
fi
lv undefine "$dom" >/dev/null
check_err $? "virsh undefine failed"

stop_switch
check_err $? "the switch did not exit cleanly"
sanitized
check_err $? "the switch reported errors: $(grep -m3 -E 'Sanitizer|runtime error' "$TEST_TMP/switch.log")"
finish
