#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vecnet-guest's documented options that boot a guest differently, each
# used as a user would, with the console on a pipe standing in for a
# terminal:
#
#  1. --cpus 2: the guest has two CPUs (the kernel is asked with strings
#     and grep, which once failed under pipefail however the kernel was
#     built), vec0 the address of --mac, and the switch's port the
#     guest's name;
#  2. --vhost-user: a second guest on the switch's --vhost-user socket,
#     whose eth0 pings the first guest's vec0 through the switch;
#  3. --dhcp: a third guest takes its address, route and DNS server from
#     the switch's NAT port (--nat), in a resolv.conf of its own.
#
# Each guest is powered off from its shell, and vecnet-guest must exit
# with status 0.  Its input ends right after the shell is told to exit,
# as a script's does, while the guest shuts down and the NAT port's
# traffic still arrives (the console once died of that: um/
# test_console_eof.sh).

source "$(dirname "$(readlink -f "$0")")/../lib.sh"
require_vecswitch
require_vecnat
# a guest that died early must not take the test with it on a write
trap '' PIPE

helper=$VECNET_SRC/scripts/vecnet-guest
ns=$(netns_add gopt)
sock=$TEST_TMP/sw.sock
start_switch "$ns" --dgram "$sock" --vhost-user "$TEST_TMP/vhost.sock" --ctl "$TEST_TMP/ctl" --nat
check_err $? "vecswitch did not start: $(tail -n 3 "$TEST_TMP/switch.log")"

declare -A in_fd gpid

# boot NAME ARGS...: vecnet-guest ARGS... NAME in the background, its
# console on a fifo ($TEST_TMP/NAME.out gets what it prints); true once
# its shell prompts, within 60 s
boot() {
	local g=$1 fd

	shift
	mkfifo "$TEST_TMP/$g.in"
	timeout 120 ip netns exec "$ns" "$helper" -k "$VMLINUX" "$@" "$g-$$" \
		<"$TEST_TMP/$g.in" >"$TEST_TMP/$g.out" 2>&1 &
	gpid[$g]=$!
	on_exit "kill ${gpid[$g]} 2>/dev/null"
	exec {fd}>"$TEST_TMP/$g.in"
	in_fd[$g]=$fd
	# input typed before the shell reads its terminal is lost
	wait_for 60 grep -qF "$g-$$# " "$TEST_TMP/$g.out"
}

# type NAME LINE...: type the lines into NAME's shell
type_in() {
	local g=$1

	shift
	printf '%s\n' "$@" >&"${in_fd[$g]}"
}

# power_off NAME: exit NAME's shell; the helper's status
power_off() {
	local fd=${in_fd[$1]} st=0

	type_in "$1" exit
	# its console's input ends while it shuts down (see above);
	# vecnet-guest runs under a timeout
	exec {fd}>&-
	wait "${gpid[$1]}" || st=$?
	return "$st"
}

# shows NAME TEXT: NAME's console printed TEXT within 30 s
shows() {
	wait_for 30 grep -qF -- "$2" "$TEST_TMP/$1.out"
}

boot smp --cpus 2 --switch "$sock" --ip 198.18.15.1/24 --mac 02:00:00:00:15:01
check_err $? "--cpus 2: no shell: $(tail -n 3 "$TEST_TMP/smp.out")"
# shellcheck disable=SC2016  # typed into the guest's shell
type_in smp 'echo CPUS-$(nproc) MAC-$(cat /sys/class/net/vec0/address)'
shows smp CPUS-2
check_err $? "--cpus 2: the guest does not have two CPUs: $(tail -n 3 "$TEST_TMP/smp.out")"
shows smp MAC-02:00:00:00:15:01
check_err $? "--mac: vec0 does not have the address: $(tail -n 3 "$TEST_TMP/smp.out")"
# the switch names the guest's port by its socket, which is named for it
ctl ports | grep -qE "/net/smp-$$\.sock$"
check_err $? "the switch's port is not named for the guest: $(ctl ports)"

boot vhost --vhost-user --switch "$TEST_TMP/vhost.sock" --ip 198.18.15.2/24
check_err $? "--vhost-user: no shell: $(tail -n 3 "$TEST_TMP/vhost.out")"
# shellcheck disable=SC2016  # typed into the guest's shell
type_in vhost \
	'for i in 1 2 3 4 5 6 7 8 9 10; do ping -c 1 -W 1 198.18.15.1 >/dev/null && break; done' \
	'ping -c 2 -W 2 198.18.15.1 >/dev/null && echo PING-$((40+2))'
shows vhost PING-42
check_err $? "--vhost-user: eth0 did not reach the --cpus guest: $(tail -n 3 "$TEST_TMP/vhost.out")"
ctl ports | grep -q vhost-user
check_err $? "--vhost-user: the switch has no vhost-user port: $(ctl ports)"

boot dhcp --dhcp --switch "$sock"
check_err $? "--dhcp: no shell: $(tail -n 3 "$TEST_TMP/dhcp.out")"
# shellcheck disable=SC2016  # typed into the guest's shell
type_in dhcp 'echo "LEASE-$(ip -4 -br addr show vec0 | awk "{ print \$3 }") $(ip route show default | cut -d" " -f1-3) $(grep -m1 nameserver /etc/resolv.conf)"'
shows dhcp "LEASE-10.0.2.15/24 default via 10.0.2.2 nameserver 10.0.2.3"
check_err $? "--dhcp: no lease, route or DNS server from the NAT port: $(tail -n 3 "$TEST_TMP/dhcp.out")"
! grep -q 10.0.2.3 /etc/resolv.conf
check_err $? "--dhcp: the guest wrote the host's /etc/resolv.conf"

for g in dhcp vhost smp; do
	power_off "$g"
	check_err $? "$g: vecnet-guest exited with an error: $(tail -n 3 "$TEST_TMP/$g.out")"
done

log_test "vecnet-guest --cpus, --vhost-user and --dhcp boot, reach each other and take a lease"
exit "$RET"
