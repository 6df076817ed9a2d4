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
# Needs: $VECSWITCH (absolute path of the switch), qemu-system-x86_64, a
# kernel image (newest /boot/vmlinuz-*, or $VSW_KERNEL) with its modules,
# a static busybox, cpio, gzip, modprobe, unshare. KVM is probed and used
# only if a guest actually boots under it; otherwise TCG.
#
# Exit: 0 pass, 1 fail, 4 skip (a prerequisite is missing).

set -u

ksft_skip=4
ret=1
dir=""
sw_pid=""
uml_pid=""
qemu_pids=()

log() { printf '# %s\n' "$*"; }
qemu_skip() { log "SKIP: $*"; exit "$ksft_skip"; }

# shellcheck disable=SC2317  # run by the EXIT trap
qemu_cleanup() {
	local p

	for p in "${qemu_pids[@]}"; do
		kill "$p" 2>/dev/null
	done
	for p in "${qemu_pids[@]}"; do
		wait "$p" 2>/dev/null
	done
	if [ -n "$uml_pid" ]; then
		kill "$uml_pid" 2>/dev/null
		wait "$uml_pid" 2>/dev/null
	fi
	if [ -n "$sw_pid" ]; then
		kill "$sw_pid" 2>/dev/null
		wait "$sw_pid" 2>/dev/null
	fi
	if [ -n "$dir" ] && [ -d "$dir" ]; then
		if [ "$ret" -ne 0 ]; then
			for f in "$dir"/*.log; do
				[ -f "$f" ] || continue
				log "---- $(basename "$f") (last lines)"
				tail -n 25 "$f" | sed 's/^/#   /'
			done
		fi
		rm -rf -- "$dir"
	fi
}

# wait_log SECONDS FILE PATTERN: true once PATTERN shows up in FILE
wait_log() {
	local deadline=$((SECONDS + $1))

	while [ "$SECONDS" -lt "$deadline" ]; do
		grep -q -- "$3" "$2" 2>/dev/null && return 0
		sleep 0.2
	done
	return 1
}

# ---- prerequisites ----------------------------------------------------------

[ -n "${VECSWITCH:-}" ] || qemu_skip "VECSWITCH not set (absolute path of vecswitch)"
VMLINUX=${VMLINUX:-${VECNET_BUILD:?run through make check}/vmlinux}
[ -x "$VMLINUX" ] || qemu_skip "no UML guest kernel at $VMLINUX (run 'make')"
[ -x "$VECSWITCH" ] || qemu_skip "VECSWITCH=$VECSWITCH is not executable"
QEMU=${QEMU:-qemu-system-x86_64}
command -v "$QEMU" >/dev/null || qemu_skip "$QEMU not installed"
command -v unshare >/dev/null || qemu_skip "unshare not installed"

# Test traffic stays in a network namespace of our own.
if [ "${VSW_IN_NETNS:-}" != 1 ]; then
	unshare --net true 2>/dev/null || qemu_skip "cannot create a network namespace"
	VSW_IN_NETNS=1 exec unshare --net -- "$0" "$@"
fi

trap qemu_cleanup EXIT
dir=$(mktemp -d /tmp/vsw-qemu.XXXXXX) || exit 1

# ---- initramfs ---------------------------------------------------------------

VSW_KERNEL=$("${VECNET_SRC:?run through make check}/scripts/qemu-initrd.sh" "$dir/initrd.gz")
case $? in
0) ;;
4) qemu_skip "no light guest kernel or initramfs tools (see above)" ;;
*) log "building the initramfs failed"; exit 1 ;;
esac

# ---- switch ---------------------------------------------------------------------

# (no LD_PRELOAD: the kselftest runner's stdbuf would upset the ASan build)
# start_sw LOG: the switch, in the background, its pid in sw_pid
start_sw() {
	env -u LD_PRELOAD "$VECSWITCH" --dgram "$dir/sw-dgram.sock" --stream "$dir/sw-stream.sock" \
		--vhost-user "$dir/sw-vhost.sock" --ctl "$dir/sw-ctl.sock" -v 2> "$1" &
	sw_pid=$!
	wait_log 10 "$1" "running"
}
start_sw "$dir/switch.log" || { log "switch did not start"; exit 1; }
# eventfds the switch holds (its io_uring backend has one of its own)
eventfds() { find "/proc/$sw_pid/fd" -lname 'anon_inode:\[eventfd\]' | wc -l; }
own_eventfds=$(eventfds)

# qemu_boot NAME ACCEL NETDEV MAC IP PEER [QEMU OPTION...]
qemu_boot() {
	"$QEMU" -accel "$2" -m 256 -smp 1 -nodefaults -no-reboot "${@:7}" \
		-display none -monitor none -serial "file:$dir/$1.log" \
		-kernel "$VSW_KERNEL" -initrd "$dir/initrd.gz" \
		-append "console=ttyS0 panic=-1 loglevel=4 VSW_IP=$5 VSW_PEER=$6 ${append_extra:-}" \
		-netdev "$3" -device "virtio-net-pci,netdev=n0,mac=$4" \
		2> "$dir/$1.qemu.log" &
	qemu_pids+=("$!")
}

# The UML guest first: it answers all, then pings three once they are up,
# serves its file, fetches the vhost-user guest's (it runs in $dir/uml, on
# the host's file system: the test reads both files there) and stays
# until that guest has fetched its file
cat >"$dir/uml.sh" <<'EOS'
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
"$VECNET_SRC/scripts/uml-run" -k "$VMLINUX" -N "vsw-qemu-$$" -t 600 -q -o "$dir/uml" \
	-a "vec0:transport=unixdgram,path=$dir/sw-dgram.sock,mac=02:76:65:00:73:03" \
	-e "QEMU_LOG=$dir/c.log" \
	-- sh "$dir/uml.sh" &
uml_pid=$!

net_a="dgram,id=n0,local.type=unix,local.path=$dir/guest-a.sock,remote.type=unix,remote.path=$dir/sw-dgram.sock"
net_b="stream,id=n0,server=off,addr.type=unix,addr.path=$dir/sw-stream.sock"
# vhost-user: guest memory the switch can map, and the switch's socket.
# No MSI-X: QEMU 7.2 under TCG dies (NULL pointer) setting up MSI-X vector
# notifiers for a vhost-user device when the guest starts it; INTx works.
net_c="vhost-user,id=n0,chardev=c0"
vhost_mem() {
	mem_c=(-object "memory-backend-memfd,id=mem,size=256M,share=on"
	       -numa "node,memdev=mem"
	       -chardev "socket,id=c0,path=$dir/sw-vhost.sock,reconnect=1"
	       -global "virtio-net-pci.vectors=0")
}
vhost_mem

# KVM here may take only kernels built for it: use it only if a guest boots.
accel=tcg
if [ -w /dev/kvm ]; then
	qemu_boot probe kvm "$net_a" 52:54:00:76:73:09 192.0.2.9 192.0.2.10
	if wait_log 20 "$dir/probe.log" VSW_INIT; then
		accel=kvm
	fi
	kill "${qemu_pids[0]}" 2>/dev/null
	wait "${qemu_pids[0]}" 2>/dev/null
	qemu_pids=()
	rm -f "$dir/guest-a.sock"
fi
log "guests use $accel"

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
	qemu_boot d "$accel" "$net_c" 52:54:00:76:73:05 192.0.2.5 192.0.2.4 "${mem_c[@]}"

for g in a b c d; do
	if ! wait_log 240 "$dir/$g.log" VSW_UP; then
		log "guest $g did not come up"
		exit 1
	fi
done
ok=0
for g in a b c d; do
	if wait_log 120 "$dir/$g.log" VSW_PING_OK; then
		log "QEMU guest $g reached its peer"
		ok=$((ok + 1))
	else
		log "QEMU guest $g could not ping its peer"
	fi
done
if wait "$uml_pid"; then
	log "the UML guest reached the three QEMU guests and fetched c's file"
	ok=$((ok + 1))
else
	log "the UML guest failed: $(tail -n 3 "$dir/uml/output.log" "$dir/uml/console.log" 2>/dev/null)"
fi
uml_pid=""

env -u LD_PRELOAD "$VECSWITCH" ctl --ctl "$dir/sw-ctl.sock" ports | sed 's/^/#   /'

# TCP: every file arrived whole (MD5 sums: the sender's, from its console,
# against the receiver's)
wait_log 60 "$dir/d.log" '  /tmp/c'
sum_of() { tr -d '\r' <"$1" | awk -v f="$2" '$2 == f && length($1) == 32 { print $1 }' | tail -n 1; }
sent_c=$(sum_of "$dir/c.log" /www/f)
sent_uml=$(md5sum <"$dir/uml/www/f" 2>/dev/null | cut -d' ' -f1)
tcp_ok=1
for t in "vhost-user QEMU c -> UML vecnet guest:$sent_c:$(md5sum <"$dir/uml/from-c" 2>/dev/null | cut -d' ' -f1)" \
	 "UML vecnet guest -> vhost-user QEMU c:$sent_uml:$(sum_of "$dir/c.log" /tmp/u)" \
	 "vhost-user QEMU c -> vhost-user QEMU d:$sent_c:$(sum_of "$dir/d.log" /tmp/c)"; do
	IFS=: read -r what sent got <<<"$t"
	if [ -n "$sent" ] && [ "$sent" = "$got" ]; then
		log "TCP $what: 8 MiB intact (md5 $got)"
	else
		log "TCP $what: sent md5 '${sent:-none}', received '${got:-none}'"
		tcp_ok=0
	fi
done
# c's TCP left it as TSO super-frames, whole through the switch
gso_c=$(env -u LD_PRELOAD "$VECSWITCH" ctl --ctl "$dir/sw-ctl.sock" stats --json 2>/dev/null |
	python3 -c 'import json,sys
print(max([p["rx_gso"] for p in json.load(sys.stdin)["ports"] if p["type"] == "vhost-user"] or [0]))' 2>/dev/null)
if [ "${gso_c:-0}" -gt 0 ] 2>/dev/null; then
	log "the vhost-user guest sent $gso_c TSO super-frames"
else
	log "the vhost-user guests sent no TSO super-frame"
	tcp_ok=0
fi
[ "$tcp_ok" = 1 ] && ok=$((ok + 1))
env -u LD_PRELOAD "$VECSWITCH" ctl --ctl "$dir/sw-ctl.sock" fdb | sed 's/^/#   /'

# The switch restarts: QEMU (reconnect=1) attaches again by itself, hands
# over its memory and rings anew, and its frames flow through the new
# switch (rx_frames of its new port, counted from zero)
kill "$sw_pid"
wait "$sw_pid"
sw_rc=$?
grep -qE 'Sanitizer|runtime error' "$dir/switch.log" && sw_rc=1
mv "$dir/switch.log" "$dir/switch-1.log"
start_sw "$dir/switch.log" || { log "switch did not restart"; exit 1; }
own_eventfds=$(eventfds)
vhost_rx() {
	env -u LD_PRELOAD "$VECSWITCH" ctl --ctl "$dir/sw-ctl.sock" stats --json 2>/dev/null |
		python3 -c 'import json,sys
print(sum(p["rx_frames"] for p in json.load(sys.stdin)["ports"] if p["type"] == "vhost-user"))' 2>/dev/null
}
back=0
for _ in $(seq 1 60); do
	[ "$(vhost_rx)" -gt 2 ] 2>/dev/null && { back=1; break; }
	sleep 0.5
done
if [ "$back" = 1 ] && [ "$sw_rc" -eq 0 ]; then
	log "the vhost-user QEMU reconnected to the restarted switch and sends through it"
else
	log "the vhost-user QEMU did not come back through the restarted switch (first switch exit $sw_rc, frames $(vhost_rx))"
	ok=0
fi

# QEMUs killed outright: their ports go, and with them every mapping of
# their memory and every descriptor they handed over (kick and call
# eventfds)
grep -q "memfd:" "/proc/$sw_pid/maps" ||
	{ log "the switch had not mapped the vhost-user guests' memory"; ok=0; }
kill -KILL "${qemu_pids[2]}" "${qemu_pids[3]}"
wait "${qemu_pids[2]}" "${qemu_pids[3]}" 2>/dev/null
left=1
for _ in $(seq 1 50); do
	if ! grep -q "memfd:" "/proc/$sw_pid/maps" &&
	   [ "$(eventfds)" -eq "$own_eventfds" ]; then
		left=0
		break
	fi
	sleep 0.1
done
if [ "$left" -eq 0 ]; then
	log "the killed vhost-user guests' memory and descriptors are gone from the switch"
else
	log "the switch kept the killed guests' memory or eventfds: $(grep -c memfd: "/proc/$sw_pid/maps") mappings, $(( $(eventfds) - own_eventfds )) eventfds"
	ok=0
fi

# the switch must stop cleanly, sanitizers quiet
kill "$sw_pid"
wait "$sw_pid"
sw_rc=$?
sw_pid=""
if [ "$sw_rc" -ne 0 ] ||
   grep -qE 'Sanitizer|runtime error' "$dir/switch.log"; then
	log "switch exited with $sw_rc or reported errors"
	ok=0
fi
if [ "$ok" -eq 6 ]; then
	ret=0
	log "PASS: QEMU dgram, stream and vhost-user guests and a UML guest ping each other; TCP vhost-user <-> UML and vhost-user -> vhost-user; vhost-user reconnects and lets go"
else
	log "FAIL"
fi
exit "$ret"
