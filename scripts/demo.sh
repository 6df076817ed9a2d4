#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo: inside a private network namespace, start vecswitch, boot
# three UML guests on transport=unixdgram (one of them idle) and, where
# QEMU runs, a QEMU light guest by vhost-user, and show the
# switch at work: pings, a short iperf3, the driver's counters, the
# switch's ports and forwarding table, and how much of a transfer between
# two guests reaches the idle one, first with vecswitch learning and then,
# after restarting it in --hub mode at the same path, with flooding; and
# last, restarted with --nat, a guest takes a lease by DHCP and fetches a
# page from a namespace one route away, and the host fetches a page the
# guest serves through a port forward.
#
#   demo.sh [--quiet]
#
# --quiet prints one line per step; make check uses it.  Every step is
# checked; the first failure ends the demo with a message and status 1.
# Everything started is removed on exit, also on Ctrl-C.

set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
quiet=0
case "${1:-}" in
--quiet) quiet=1 ;;
"") ;;
*) echo "usage: demo.sh [--quiet]" >&2; exit 2 ;;
esac

# the tests' library, without their harness: everything started below is
# removed by its clean-up on exit, also on Ctrl-C
VECNET_SRC=$top
VECNET_BUILD=${VECNET_BUILD:-$top/build}
VMLINUX=${VMLINUX:-$VECNET_BUILD/vmlinux}
VECSWITCH=$VECNET_BUILD/vecswitch
# shellcheck disable=SC2034  # read by the library
VECNET_LIB_NO_HARNESS=1
AGENT_TIMEOUT=300
EXEC_TIMEOUT=60
DIE_PREFIX="demo: FAILED: "
TEST_TMP=$(mktemp -d /tmp/vecnet-demo.XXXXXX)
# shellcheck source=../tools/testing/selftests/drivers/net/lib.sh
source "$top/tools/testing/selftests/drivers/net/lib.sh"

work=$TEST_TMP
sock=$work/switch.sock
ctl=$work/ctl.sock
CTL=$ctl
guests=(a b idle)
declare -A ip=([a]=198.18.3.1 [b]=198.18.3.2 [idle]=198.18.3.3)
declare -A mac=([a]=02:76:65:00:00:01 [b]=02:76:65:00:00:02 [idle]=02:76:65:00:00:03)

step() { printf '\n== %s\n' "$*"; }
# Swallow the text in quiet mode, but read it all: a writer that finds
# the pipe closed dies of SIGPIPE and fails the step
show() { if [ "$quiet" -eq 1 ]; then cat >/dev/null; else cat; fi; }

[ "$(id -u)" -eq 0 ] || die "needs root (network namespaces)"
[ -x "$VMLINUX" ] || die "no guest kernel at $VMLINUX (run 'make')"
[ -x "$VECSWITCH" ] || die "no switch at $VECSWITCH (run 'make')"

# rx_of GUEST: "packets bytes" received by the guest's vec0
rx_of() {
	exec_in "$1" sh -c 'cat /sys/class/net/vec0/statistics/rx_packets /sys/class/net/vec0/statistics/rx_bytes' |
		tr '\n' ' '
}

# transfer: 3 s of iperf3 from a to b; prints bytes moved and Gbit/s
transfer() {
	exec_in b iperf3 -s -1 -D >/dev/null || die "iperf3 server in guest b"
	local _
	for _ in $(seq 50); do
		exec_in b sh -c 'ss -ltn | grep -q :5201' && break
		sleep 0.1
	done
	exec_in a iperf3 -c "${ip[b]}" -t 3 -J >"$work/iperf.json" ||
		die "iperf3 from guest a to guest b"
	echo "$(iperf_bytes "$work/iperf.json")" \
		"$(iperf_bps "$work/iperf.json" | awk '{ s = sprintf("%.2f", $1 / 1e9); sub(/0$/, "", s); print s }')"
}

# idle_share LABEL: run a transfer, report what reached the idle guest
idle_share() {
	local before after moved gbit p0 b0 p1 b1
	before=$(rx_of idle)
	transfer >"$work/transfer"
	read -r moved gbit <"$work/transfer"
	after=$(rx_of idle)
	read -r p0 b0 <<<"$before"
	read -r p1 b1 <<<"$after"
	idle_frames=$((p1 - p0)) idle_bytes=$((b1 - b0)) moved_bytes=$moved rate=$gbit
	printf '%-22s a->b %5s Gbit/s, %6d MB moved; idle guest received %7d frames, %9d bytes\n' \
		"$1" "$gbit" $((moved / 1000000)) "$idle_frames" "$idle_bytes"
}

step "1. A private network namespace and vecswitch"
ns=$(netns_add demo)
# Datagram receivers queue up to 512 frames, not 10 (see the switch docs)
ip netns exec "$ns" sysctl -qw net.unix.max_dgram_qlen=512
vhost=$work/vhost.sock
switch_at "$ns" "$sock" "$ctl" --vhost-user "$vhost" ||
	{ cat "$work/switch.log" >&2; die "vecswitch did not come up"; }
echo "vecswitch --dgram $sock --vhost-user $vhost --ctl $ctl    (namespace $ns)" | show

step "2. Three UML guests on transport=unixdgram"
for g in "${guests[@]}"; do
	arg="vec0:transport=unixdgram,path=$sock,mac=${mac[$g]},depth=128"
	echo "guest $g: build/vmlinux mem=256M rootfstype=hostfs ... $arg" | show
	agent "$ns" demo "$g" -a "$arg"
done
for g in "${guests[@]}"; do
	exec_in "$g" sh -c "ip addr add ${ip[$g]}/24 dev vec0 && ip link set vec0 up" ||
		die "guest $g did not boot or configure vec0 (see its console log)"
done
echo "booted: a ${ip[a]}, b ${ip[b]}, idle ${ip[idle]}" | show

step "3. Ping between guests"
exec_in a ping -c 3 -i 0.2 -W 2 "${ip[b]}" | show || die "ping a -> b"
exec_in idle ping -c 1 -W 2 "${ip[a]}" >/dev/null || die "ping idle -> a"
[ "$quiet" -eq 0 ] || echo "ping a -> b and idle -> a: ok"

# QEMU guests take the vhost-user way: frames go from guest memory to
# guest memory.  QEMU's -netdev dgram, on the --dgram socket, suits peers
# that cannot share memory, at a fraction of the speed.
step "3b. A QEMU light guest by vhost-user, pinged from UML guest a"
qemu_ip=198.18.3.4
if ! command -v qemu-system-x86_64 >/dev/null; then
	echo "skipped: qemu-system-x86_64 is not installed"
elif ! kernel=$("$top/scripts/qemu-initrd.sh" "$work/initrd.gz" 2>"$work/initrd.log"); then
	echo "skipped: $(cat "$work/initrd.log")"
else
	# the guest's memory is shared (a memfd) for the switch to map;
	# vectors=0: QEMU 7.2 under TCG needs it (see vecswitch(8))
	mem="memory-backend-memfd,id=mem,size=256M,share=on"
	chr="socket,id=c0,path=$vhost,reconnect=1"
	echo "qemu-system-x86_64 -accel tcg -m 256 -object $mem -numa node,memdev=mem -chardev $chr -netdev vhost-user,id=n0,chardev=c0 ..." | show
	ip netns exec "$ns" qemu-system-x86_64 -accel tcg -m 256 -smp 1 -nodefaults \
		-no-reboot -display none -monitor none -serial "file:$work/qemu.log" \
		-object "$mem" -numa node,memdev=mem -chardev "$chr" \
		-kernel "$kernel" -initrd "$work/initrd.gz" \
		-append "console=ttyS0 panic=-1 loglevel=4 VSW_IP=$qemu_ip VSW_PEER=${ip[a]}" \
		-netdev vhost-user,id=n0,chardev=c0 \
		-device virtio-net-pci,netdev=n0,mac=52:54:00:76:65:04,vectors=0 \
		2>"$work/qemu.err" &
	qemu_pid=$!
	on_exit "kill $qemu_pid 2>/dev/null"
	# Software emulation: the light guest needs a while to boot
	for _ in $(seq 1200); do
		grep -q VSW_UP "$work/qemu.log" 2>/dev/null && break
		kill -0 "$qemu_pid" 2>/dev/null || break
		sleep 0.1
	done
	grep -q VSW_UP "$work/qemu.log" 2>/dev/null ||
		die "the QEMU guest did not come up (see $work/qemu.log)"
	exec_in a ping -c 3 -i 0.2 -W 2 "$qemu_ip" | show || die "ping a -> QEMU guest"
	[ "$quiet" -eq 0 ] || echo "ping a -> QEMU guest by vhost-user: ok"
fi

step "4. iperf3 from a to b while the idle guest watches (learning switch)"
idle_share "vecswitch (learning):"
sw_idle_frames=$idle_frames sw_idle_bytes=$idle_bytes sw_moved=$moved_bytes sw_rate=$rate

step "5. ethtool -S vec0 in guest a"
exec_in a ethtool -S vec0 | show || die "ethtool -S vec0"

step "6. vecswitch ctl ports / fdb"
ctl ports | show || die "vecswitch ctl ports"
ctl fdb | show || die "vecswitch ctl fdb"

step "7. The same with vecswitch --hub (flooding), restarted at the same path"
stop_switch || die "vecswitch did not exit on SIGTERM"
switch_at "$ns" "$sock" "$ctl" --hub ||
	{ cat "$work/switch.log" >&2; die "vecswitch did not come up"; }
# The guests reconnect by themselves; wait until a reaches b again
reach a "${ip[b]}" 40 >/dev/null 2>&1 ||
	die "guests did not come back after the switch restarted"
idle_share "vecswitch --hub:"
hub_idle_bytes=$idle_bytes hub_moved=$moved_bytes hub_rate=$rate

step "8. The host and the internet: vecswitch --nat"
# a second namespace one route away plays the internet; the switch's NAT
# port gives guest a a lease, and the host reaches a through a forward
stop_switch || die "vecswitch did not exit on SIGTERM"
switch_at "$ns" "$sock" "$ctl" --nat --nat-forward tcp:18080:10.0.2.15:8080 ||
	{ cat "$work/switch.log" >&2; die "vecswitch --nat did not come up"; }
wan=$(netns_add demowan)
{ ip link add demov0 netns "$ns" type veth peer name demov1 netns "$wan" &&
  ip -n "$ns" addr add 198.18.4.1/30 dev demov0 &&
  ip -n "$wan" addr add 198.18.4.2/30 dev demov1 &&
  ip -n "$ns" link set demov0 up && ip -n "$wan" link set demov1 up &&
  ip -n "$wan" addr add 203.0.113.80/32 dev lo &&
  ip -n "$ns" route add 203.0.113.0/24 via 198.18.4.2; } || die "the wan namespace"
mkdir -p "$work/www" "$work/gwww"
echo "a page from outside the switch's namespace" >"$work/www/index.html"
echo "a page served by guest a" >"$work/gwww/index.html"
ip netns exec "$wan" python3 -m http.server --bind 203.0.113.80 --directory "$work/www" 80 \
	>/dev/null 2>&1 &
on_exit "kill $! 2>/dev/null"
echo "vecswitch --dgram $sock --ctl $ctl --nat --nat-forward tcp:18080:10.0.2.15:8080" | show
# shellcheck disable=SC2016  # expanded in the guest
exec_in a sh -c 'busybox udhcpc -i vec0 -f -q -n -t 20 -T 1 -s "$0" 2>/dev/null' \
	"$top/scripts/udhcpc-hostfs.sh" | sed 's/^/guest a: DHCP /' | show || die "guest a got no lease"
for _ in $(seq 50); do
	exec_in a curl -sf --max-time 5 http://203.0.113.80/ >"$work/page" && break
	sleep 0.2
done
[ -s "$work/page" ] || die "guest a did not fetch a page from 203.0.113.80"
sed 's/^/guest a: curl http:\/\/203.0.113.80\/: /' "$work/page" | show
exec_in a busybox httpd -p 8080 -h "$work/gwww" || die "httpd in guest a"
for _ in $(seq 50); do
	ip netns exec "$ns" curl -sf --max-time 2 http://127.0.0.1:18080/ >"$work/page2" && break
	sleep 0.2
done
[ -s "$work/page2" ] || die "the host did not reach guest a through the forward"
sed 's/^/host: curl http:\/\/127.0.0.1:18080\/: /' "$work/page2" | show
[ "$quiet" -eq 0 ] || echo "guest a: lease, page from outside; host: page from a through a forward"

step "Result"
printf 'idle guest share of the a->b transfer: learning %.3f%%, hub %.1f%%\n' \
	"$(echo "100 * $sw_idle_bytes / $sw_moved" | bc -l)" \
	"$(echo "100 * $hub_idle_bytes / $hub_moved" | bc -l)"
# The learning switch sends the idle guest only broadcasts (ARP), never
# the flow; the hub sends it every frame, as many as its queue can hold.
[ "$sw_idle_bytes" -lt $((sw_moved / 1000)) ] ||
	die "the idle guest received $sw_idle_bytes bytes of a $sw_moved-byte flow from the learning switch"
[ "$hub_idle_bytes" -gt $((hub_moved / 10)) ] ||
	die "the idle guest received only $hub_idle_bytes bytes of a $hub_moved-byte flow from the hub"
# The learning switch agreed on virtio-net headers with the guests (super-
# frames cross whole); the hub does not negotiate, so they send plain frames.
printf 'a->b with default options: learning %s Gbit/s (virtio-net headers), hub %s Gbit/s (plain frames)\n' \
	"$sw_rate" "$hub_rate"
echo "demo: OK (frames to the idle guest during the transfer: learning $sw_idle_frames)"
