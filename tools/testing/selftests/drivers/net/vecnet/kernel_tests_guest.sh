#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside one guest for test_kernel_tests.sh (dash, not bash): vec0
# stays in the guest's own namespace as the device under test, vec1 goes
# to a namespace "remote" as the other end, both addressed; then each of
# the kernel's driver tests named in KST_TESTS runs with NETIF=vec0 and
# REMOTE_TYPE=netns, its output in $KST_OUT/NAME.log and its exit status
# in $KST_OUT/NAME.rc (NAME: the test's path with / turned to _).
# vecnet/netconsole is ours: see netconsole() below.
#
#   KST_DIR    the installed kernel selftests (drivers/net under it)
#   KST_OUT    where the results go (on the host's file system)
#   KST_TESTS  the tests, relative to drivers/net (hw/csum.py, ping.py)
#   KST_TMO    seconds each test may take
#   KST_PATH   a directory searched first for tools (a newer ethtool)

set -u

export PATH="${KST_PATH:+$KST_PATH:}/usr/sbin:/usr/bin:/sbin:/bin"
export NETIF=vec0 REMOTE_TYPE=netns REMOTE_ARGS=remote \
	LOCAL_V4=192.0.2.1 REMOTE_V4=192.0.2.2 \
	LOCAL_V6=2001:db8:1::1 REMOTE_V6=2001:db8:1::2 \
	LOCAL_PREFIX_V6=2001:db8:2::/64

# Static IPv6 addresses go with a link that goes down unless
# keep_addr_on_down is set; the tests take links down and expect their
# addresses back, as on a host whose network manager restores them.
# keep_addrs [ip netns exec NS]: in this namespace or NS
keep_addrs() {
	"$@" sysctl -qw net.ipv6.conf.all.keep_addr_on_down=1 \
		net.ipv6.conf.default.keep_addr_on_down=1 \
		net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0
}

# addr NS DEV V4 V6: DEV in NS (empty: this one) addressed and up
addr() {
	ip ${1:+-n "$1"} addr replace "$3/24" dev "$2" &&
	ip ${1:+-n "$1"} addr replace "$4/64" dev "$2" nodad &&
	ip ${1:+-n "$1"} link set "$2" up
}

# ends_up: both ends up, addressed, and reaching each other
ends_up() {
	addr "" vec0 "$LOCAL_V4" "$LOCAL_V6" &&
	addr remote vec1 "$REMOTE_V4" "$REMOTE_V6" || return 1
	for _ in $(seq 1 50); do
		ping -q -c 1 -W 1 "$REMOTE_V4" >/dev/null 2>&1 &&
		ping -q -c 1 -W 1 "$REMOTE_V6" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}

# vecnet/netconsole, ours: 100 kernel messages to the remote end through
# a dynamic netconsole target on vec0, each received once, as KTAP
netconsole() {
	d=/sys/kernel/config/netconsole/vecnet-$$ got=$KST_OUT/netconsole.got n=100

	echo "TAP version 13"
	echo "1..1"
	if ! { mkdir "$d" && echo vec0 >"$d/dev_name" &&
	       echo "$LOCAL_V4" >"$d/local_ip" && echo "$REMOTE_V4" >"$d/remote_ip" &&
	       echo 6666 >"$d/remote_port" && echo 1 >"$d/enabled"; }; then
		echo "not ok 1 netconsole.messages # the target would not go on"
		return 1
	fi
	ip netns exec remote socat -u UDP-RECV:6666,bind="$REMOTE_V4" "OPEN:$got,creat,trunc" &
	pid=$!
	for _ in $(seq 1 50); do
		ip netns exec remote ss -Hlun "sport = :6666" | grep -q . && break
		sleep 0.1
	done
	# in bursts of ten: netconsole is UDP, and what this checks is the
	# path through vec0, not how large a burst every hop can absorb
	for i in $(seq 1 "$n"); do
		echo "<2>vecnet-netconsole $i of $n" >/dev/kmsg
		[ $((i % 10)) -ne 0 ] || sleep 0.05
	done
	sleep 1
	kill "$pid"
	echo 0 >"$d/enabled"
	rmdir "$d"
	got=$(grep -c "vecnet-netconsole [0-9]* of $n" "$got")
	if [ "$got" -eq "$n" ]; then
		echo "ok 1 netconsole.messages # $got of $n received"
	else
		echo "not ok 1 netconsole.messages # $got of $n received"
		return 1
	fi
}

ip link set lo up
keep_addrs
# netconsole's dynamic targets live in configfs, which the guest's init
# does not mount
mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config
ip netns add remote && ip link set vec1 netns remote || exit 1
ip -n remote link set lo up
keep_addrs ip netns exec remote
if ! ends_up; then
	echo "kernel_tests: vec0 and vec1 never reached each other" >&2
	exit 1
fi
# the addresses the hw/nk_*.py tests give namespaces behind vec0 are
# reached through it
ip -n remote route replace 2001:db8:2::/64 via "$LOCAL_V6" dev vec1
echo "# $(ethtool --version), $(ethtool -i vec0 | sed -n 's/^driver: //p') driver"

cd "$KST_DIR/drivers/net" || exit 1
for t in $KST_TESTS; do
	name=$(echo "$t" | tr / _)
	# a test before this one may have left a link down or unaddressed
	ends_up || echo "# $t: vec0 and vec1 did not reach each other before it"
	start=$(date +%s)
	case $t in
	vecnet/netconsole) netconsole ;;
	*.py) timeout -k 10 "$KST_TMO" python3 "./$t" ;;
	*) timeout -k 10 "$KST_TMO" bash "./$t" ;;
	esac >"$KST_OUT/$name.log" 2>&1 </dev/null
	echo $? >"$KST_OUT/$name.rc"
	echo "# $t: exit $(cat "$KST_OUT/$name.rc") in $(($(date +%s) - start)) s"
done
exit 0
