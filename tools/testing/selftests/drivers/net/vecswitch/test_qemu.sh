#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A UML guest of this project (vecnet, transport=unixdgram) and four QEMU
# light guests meet on vecswitch: one QEMU guest attached with `-netdev
# dgram` (unix datagram, raw frames), one with `-netdev stream` (unix
# stream, length-prefixed frames), two with `-netdev vhost-user` (their
# virtio-net rings in shared memory). Each QEMU guest pings the UML guest,
# and the UML guest pings the first three back. Then TCP: 8 MiB of random
# bytes over HTTP from the first vhost-user guest to the UML guest and to
# the second vhost-user guest, and 8 MiB from the UML guest to the first,
# each checked by its MD5 sum, the vhost-user guest's sent as TSO
# super-frames. The switch then restarts, and the vhost-user QEMUs must
# reconnect and send through the new one; then they are killed with
# SIGKILL: the switch must let go of their memory and eventfds. The QEMU
# guests run the host's
# prebuilt distribution kernel and a busybox initramfs built here and now.
#
# Needs: $VECSWITCH (absolute path of the switch), qemu-system-x86_64 (or
# $QEMU), a kernel image (newest /boot/vmlinuz-*, or $VSW_KERNEL) with its
# modules, a static busybox, cpio, gzip, modprobe. KVM is probed and used
# only if a guest actually boots under it; otherwise TCG. Everything runs
# in a network namespace of the test's own; the QEMU guests' consoles and
# logs are in $TEST_TMP, whose last lines a failure shows.

source "$(dirname "$(readlink -f "$0")")/../lib.sh"
QEMU=${QEMU:-qemu-system-x86_64}
require_cmd "$QEMU" python3
require_vecswitch

ns=$(netns_add qemu)
CTL=$TEST_TMP/ctl
qemu_pids=()

# the verdict, given by finish (lib.sh)
NAME="QEMU dgram, stream and vhost-user guests and a UML guest ping each other; TCP vhost-user <-> UML and vhost-user -> vhost-user; vhost-user reconnects and lets go"

# ---- initramfs ---------------------------------------------------------------

light_initrd "$TEST_TMP/initrd.gz" || finish

# ---- switch ---------------------------------------------------------------------

# sw_start: the switch on its four sockets, true once they are there
sw_start() {
	start_switch "$ns" --dgram "$TEST_TMP/sw-dgram.sock" \
		--stream "$TEST_TMP/sw-stream.sock" \
		--vhost-user "$TEST_TMP/sw-vhost.sock" --ctl "$CTL" -v &&
		wait_for 5 test -S "$TEST_TMP/sw-vhost.sock"
}
sw_start
check_err $? "the switch did not start"
[ "$RET" -eq 0 ] || finish
own_eventfds=$(eventfds)

# The UML guest first: it answers all, then pings three once they are up,
# serves its file, fetches the vhost-user guest's (it runs in
# $TEST_TMP/uml, on the host's file system: the test reads both files
# there) and stays until that guest has fetched its file
cat >"$TEST_TMP/uml.sh" <<'EOS'
ip addr add 192.0.2.3/24 dev vec0 && ip link set vec0 up || exit 1
mkdir -p www && dd if=/dev/urandom of=www/f bs=64k count=128 2>/dev/null || exit 1
busybox httpd -p 8081 -h www || exit 1
for peer in 192.0.2.1 192.0.2.2 192.0.2.4; do
	ok=0
	for i in $(seq 1 400); do
		ping -c 1 -W 1 "$peer" >/dev/null && { ok=1; break; }
	done
	[ $ok = 1 ] || { echo "no answer from $peer"; exit 1; }
	echo "UML_PING_OK $peer"
done
ok=0
for i in $(seq 1 90); do
	busybox wget -q -O from-c http://192.0.2.4:8080/f && { ok=1; break; }
	sleep 1
done
[ $ok = 1 ] || { echo "no file from 192.0.2.4"; exit 1; }
for i in $(seq 1 90); do
	grep -qE '^[0-9a-f]{32}  /tmp/u' "$QEMU_LOG" && break
	sleep 1
done
# stay a while for the QEMU guests' last pings
sleep 5
EOS
guest_bg uml 600 -n "$ns" \
	-a "vec0:transport=unixdgram,path=$TEST_TMP/sw-dgram.sock,mac=02:76:65:00:73:03" \
	-e "QEMU_LOG=$TEST_TMP/c.log" -- sh "$TEST_TMP/uml.sh"

net_a="dgram,id=n0,local.type=unix,local.path=$TEST_TMP/guest-a.sock,remote.type=unix,remote.path=$TEST_TMP/sw-dgram.sock"
net_b="stream,id=n0,server=off,addr.type=unix,addr.path=$TEST_TMP/sw-stream.sock"
# vhost-user: the QEMU example of vecswitch(8) (lib.sh's vhost_example),
# with this test's socket and each guest's MAC put in
mapfile -t mem_c < <(vhost_example 52:54:00:76:73:04 "$TEST_TMP/sw-vhost.sock")
mapfile -t mem_d < <(vhost_example 52:54:00:76:73:05 "$TEST_TMP/sw-vhost.sock")
[ "${#mem_c[@]}" -gt 10 ] && [[ "${mem_c[*]}" == *"mac=52:54:00:76:73:04"* ]]
check_err $? "vecswitch(8)'s QEMU example did not parse: ${mem_c[*]}"
net_c=

# KVM here may take only kernels built for it: use it only if a guest boots.
accel=tcg
if [ -w /dev/kvm ]; then
	qemu_boot probe kvm "$net_a" 52:54:00:76:73:09 192.0.2.9 192.0.2.10
	if has_line 20 "$TEST_TMP/probe.log" VSW_INIT; then
		accel=kvm
	fi
	kill "${qemu_pids[0]}" 2>/dev/null
	wait "${qemu_pids[0]}" 2>/dev/null
	qemu_pids=()
	rm -f "$TEST_TMP/guest-a.sock"
fi
echo "# guests use $accel"

qemu_boot a "$accel" "$net_a" 52:54:00:76:73:01 192.0.2.1 192.0.2.3
qemu_boot b "$accel" "$net_b" 52:54:00:76:73:02 192.0.2.2 192.0.2.3
# c serves 8 MiB over HTTP, fetches the UML guest's 8 MiB, then keeps
# pinging, so that it has frames to send later; d fetches c's file
# (the console shows the command line: the test looks for md5sum's output)
# shellcheck disable=SC2016  # expanded by the guest's shell
run_c='mkdir /www; dd if=/dev/urandom of=/www/f bs=64k count=128; md5sum /www/f; httpd -p 8080 -h /www; i=0; until wget -q -O /tmp/u http://192.0.2.3:8081/f || [ $i -ge 90 ]; do i=$((i+1)); sleep 1; done; md5sum /tmp/u; ping -i 0.5 -w 280 192.0.2.3'
# shellcheck disable=SC2016  # expanded by the guest's shell
run_d='i=0; until wget -q -O /tmp/c http://192.0.2.4:8080/f || [ $i -ge 90 ]; do i=$((i+1)); sleep 1; done; md5sum /tmp/c'
append_extra="VSW_RUN=\"$run_c\"" \
	qemu_boot c "$accel" "$net_c" 52:54:00:76:73:04 192.0.2.4 192.0.2.3 "${mem_c[@]}"
append_extra="VSW_RUN=\"$run_d\"" \
	qemu_boot d "$accel" "$net_c" 52:54:00:76:73:05 192.0.2.5 192.0.2.4 "${mem_d[@]}"

for g in a b c d; do
	has_line 240 "$TEST_TMP/$g.log" VSW_UP
	check_err $? "QEMU guest $g did not come up"
done
[ "$RET" -eq 0 ] || finish
for g in a b c d; do
	if has_line 120 "$TEST_TMP/$g.log" VSW_PING_OK; then
		echo "# QEMU guest $g reached its peer"
	else
		check_err 1 "QEMU guest $g could not ping its peer"
	fi
done
guest_done uml "the UML guest did not reach the three QEMU guests or fetch c's file"
[ "$RET" -eq 0 ] && echo "# the UML guest reached the three QEMU guests and fetched c's file"

ctl ports | sed 's/^/#   /'

# TCP: every file arrived whole (MD5 sums: the sender's, from its console,
# against the receiver's)
has_line 60 "$TEST_TMP/d.log" '  /tmp/c'
sent_c=$(console_md5 "$TEST_TMP/c.log" /www/f)
sent_uml=$(file_md5 "$TEST_TMP/uml/www/f")
for t in "vhost-user QEMU c -> UML vecnet guest:$sent_c:$(file_md5 "$TEST_TMP/uml/from-c")" \
	 "UML vecnet guest -> vhost-user QEMU c:$sent_uml:$(console_md5 "$TEST_TMP/c.log" /tmp/u)" \
	 "vhost-user QEMU c -> vhost-user QEMU d:$sent_c:$(console_md5 "$TEST_TMP/d.log" /tmp/c)"; do
	IFS=: read -r what sent got <<<"$t"
	if [ -n "$sent" ] && [ "$sent" = "$got" ]; then
		echo "# TCP $what: 8 MiB intact (md5 $got)"
	else
		check_err 1 "TCP $what: sent md5 '${sent:-none}', received '${got:-none}'"
	fi
done
# c's TCP left it as TSO super-frames, whole through the switch
gso_c=$(vhost_stat rx_gso)
if [ "${gso_c:-0}" -gt 0 ] 2>/dev/null; then
	echo "# the vhost-user guests sent $gso_c TSO super-frames"
else
	check_err 1 "the vhost-user guests sent no TSO super-frame"
fi
ctl fdb | sed 's/^/#   /'

# The switch restarts: QEMU (reconnect=1) attaches again by itself, hands
# over its memory and rings anew, and its frames flow through the new
# switch (rx_frames of its new port, counted from zero)
stop_switch
check_err $? "the switch did not exit cleanly"
sanitized
check_err $? "the switch reported errors: $(grep -m3 -E 'Sanitizer|runtime error' "$TEST_TMP/switch.log")"
mv "$TEST_TMP/switch.log" "$TEST_TMP/switch-1.log"
sw_start
check_err $? "the switch did not restart"
[ "$RET" -eq 0 ] || finish
own_eventfds=$(eventfds)
# shellcheck disable=SC2317  # run by wait_for
vhost_back() { [ "$(vhost_stat rx_frames)" -gt 2 ] 2>/dev/null; }
if wait_for 30 vhost_back; then
	echo "# the vhost-user QEMU reconnected to the restarted switch and sends through it"
else
	check_err 1 "the vhost-user QEMU did not come back through the restarted switch (frames $(vhost_stat rx_frames))"
fi

# QEMUs killed outright: their ports go, and with them every mapping of
# their memory and every descriptor they handed over (kick and call
# eventfds)
grep -q "memfd:" "/proc/$SWITCH_PID/maps"
check_err $? "the switch had not mapped the vhost-user guests' memory"
kill -KILL "${qemu_pids[2]}" "${qemu_pids[3]}"
wait "${qemu_pids[2]}" "${qemu_pids[3]}" 2>/dev/null
if wait_for 5 let_go "$own_eventfds"; then
	echo "# the killed vhost-user guests' memory and descriptors are gone from the switch"
else
	check_err 1 "the switch kept the killed guests' memory or eventfds: $(grep -c memfd: "/proc/$SWITCH_PID/maps") mappings, $(( $(eventfds) - own_eventfds )) eventfds"
fi

# the switch must stop cleanly, sanitizers quiet
stop_switch
check_err $? "the switch did not exit cleanly"
sanitized
check_err $? "the switch reported errors: $(grep -m3 -E 'Sanitizer|runtime error' "$TEST_TMP/switch.log")"
finish
