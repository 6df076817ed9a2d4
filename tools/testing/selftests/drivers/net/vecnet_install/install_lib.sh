#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Helpers of the install tests.  Sourced after ../lib.sh, never run.

# shellcheck disable=SC2154  # RET, TEST_TMP and helpers from um/lib.sh

# hider_start NS GROUP UID: a process in network namespace NS and in a
# mount namespace of its own in which the source tree and the build
# directory are empty and /run is a fresh tmpfs with /run/vecswitch as
# the unit's RuntimeDirectory= would make it for the switch's user UID
# and GROUP; its pid goes into HIDER for in_hider.  What runs
# there finds nothing of this tree: only what was installed.
hider_start() {
	local ns=$1 grp=$2 uid=$3

	# shellcheck disable=SC2016  # expanded by that sh
	ip netns exec "$ns" unshare -m --propagation private sh -c '
		mount -t tmpfs tmpfs "$2" && mount -t tmpfs tmpfs "$1" &&
		mount -t tmpfs -o mode=0755 tmpfs /run &&
		mkdir -m 0751 /run/vecswitch && chown "$4:$3" /run/vecswitch &&
		touch /run/.vecnet-hidden && exec sleep 900' \
		sh "$VECNET_SRC" "$VECNET_BUILD" "$grp" "$uid" >/dev/null 2>&1 &
	HIDER=$!
	on_exit "kill $HIDER 2>/dev/null"
	wait_for 10 nsenter -t "$HIDER" -m test -e /run/.vecnet-hidden
}

# unit_user UNIT: the uid the switch of UNIT runs as: its User= where
# that user exists (the package makes it), else 65534 standing in for it
unit_user() {
	local u

	u=$(sed -n 's/^User=//p' "$1" | tail -n 1)
	[ -n "$u" ] && id -u "$u" 2>/dev/null && return
	echo 65534
}

# unit_switch PID UNIT GROUP: start the ExecStart= command line of UNIT
# in the hider PID as the unit would: as unit_user with GROUP as its
# group, no capabilities, umask 0007.  GROUP stands in for the unit's
# --group and --ctl-group, whose groups may not exist here.  Its standard error goes to
# $TEST_TMP/switch.log.
unit_switch() {
	local pid=$1 unit=$2 grp=$3 cmd i gid uid

	read -ra cmd < <(sed -n '/^ExecStart=/,/[^\\]$/p' "$unit" |
		sed 's/^ExecStart=//; s/\\$//' | tr '\n\t' '  ')
	for i in "${!cmd[@]}"; do
		case ${cmd[$i]} in
		--group | --ctl-group) cmd[i + 1]=$grp ;;
		esac
	done
	echo "${cmd[*]}" >"$TEST_TMP/switch.cmd"
	uid=$(unit_user "$unit")
	gid=$(getent group "$grp" | cut -d: -f3)
	nsenter -t "$pid" -m -n -- setpriv --reuid="$uid" --regid="$gid" --clear-groups \
		--inh-caps=-all --bounding-set=-all -- \
		sh -c 'umask 0007 && exec "$@"' sh "${cmd[@]}" 2>"$TEST_TMP/switch.log" &
	on_exit "kill $! 2>/dev/null"
}

# in_hider PID CMD...: run CMD in the namespaces of hider_start's process
in_hider() {
	local pid=$1

	shift
	nsenter -t "$pid" -m -n -- "$@"
}

# guest_pair_ping PID GUEST SOCK TAG: boot guests a and b with the
# vecnet-guest GUEST on the switch socket SOCK, inside the hider PID,
# each with its console on a fifo as a terminal would be; a pings b.
# Records failures with check_err.
guest_pair_ping() {
	local pid=$1 helper=$2 sock=$3 tag=$4 d=$TEST_TMP/$4 pa pb rc

	# a guest that died early must not take the test with it on a write
	trap '' PIPE
	mkdir -p "$d"
	mkfifo "$d/a.in" "$d/b.in"
	nsenter -t "$pid" -m -n -- timeout 150 "$helper" --switch "$sock" --ip 198.18.13.2/24 "$tag-b-$$" \
		<"$d/b.in" >"$d/b.out" 2>&1 &
	pb=$!
	exec 6>"$d/b.in"
	nsenter -t "$pid" -m -n -- timeout 150 "$helper" --switch "$sock" --ip 198.18.13.1/24 "$tag-a-$$" \
		<"$d/a.in" >"$d/a.out" 2>&1 &
	pa=$!
	exec 5>"$d/a.in"
	wait_for 90 grep -q "exit the shell to power off" "$d/a.out"
	check_err $? "$tag: guest a did not come up: $(tail -n 5 "$d/a.out")"
	wait_for 30 grep -q "exit the shell to power off" "$d/b.out"
	check_err $? "$tag: guest b did not come up: $(tail -n 5 "$d/b.out")"
	sleep 1
	# shellcheck disable=SC2016  # typed into the guest's shell
	printf '%s\n' \
		'for i in 1 2 3 4 5 6 7 8 9 10; do ping -c 1 -W 1 198.18.13.2 >/dev/null && break; done' \
		'ping -c 3 -W 2 198.18.13.2 >/dev/null && echo PING-$((40+2))' \
		'exit' >&5
	wait "$pa"
	rc=$?
	exec 5>&-
	echo exit >&6
	wait "$pb"
	exec 6>&-
	check_err "$rc" "$tag: vecnet-guest a exited with $rc: $(tail -n 5 "$d/a.out")"
	grep -q 'PING-42' "$d/a.out"
	check_err $? "$tag: guest a did not reach guest b through the switch"
}
