#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# udhcpc-hostfs.sh: the script for busybox udhcpc in a UML guest whose
# root is the host's / over hostfs, as on vecswitch --nat:
#
#   busybox udhcpc -i vec0 -q -s scripts/udhcpc-hostfs.sh
#
# The lease goes into the interface and the default route, and is
# printed ("lease ADDR/PREFIX via ROUTER, DNS SERVERS"); with LEASE=FILE
# in the environment also written to FILE as "ADDR ROUTER DNS", and with
# RESOLV=FILE the DNS servers to FILE as resolv.conf lines.  Never into
# /etc/resolv.conf: in such a guest that is the host's file (vecnet-guest
# --dhcp mounts its RESOLV file over it, inside the guest).  The
# QEMU light guests' initramfs (qemu-initrd.sh) takes its leases with it
# too.

case $1 in
bound | renew)
	# shellcheck disable=SC2154  # udhcpc's environment
	ip addr flush dev "$interface" scope global
	# shellcheck disable=SC2154
	ip addr add "$ip/$mask" dev "$interface" || exit 1
	# shellcheck disable=SC2154
	[ -z "$router" ] || ip route replace default via "${router%% *}" dev "$interface"
	# shellcheck disable=SC2154
	echo "lease $ip/$mask via $router, DNS $dns"
	[ -z "${LEASE:-}" ] || echo "$ip $router $dns" >"$LEASE"
	if [ -n "${RESOLV:-}" ]; then
		: >"$RESOLV"
		for s in $dns; do
			echo "nameserver $s" >>"$RESOLV"
		done
	fi
	;;
deconfig)
	ip addr flush dev "$interface" scope global
	ip link set "$interface" up
	;;
esac
exit 0
