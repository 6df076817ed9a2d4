#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel's own network driver tests (tools/testing/selftests/
# drivers/net and drivers/net/hw, built from the guest kernel's source
# by 'make kselftests', not copies of ours) on vecN, one two-CPU guest
# per transport:
#
#   dgram        unixdgram on a vecswitch, virtio-net headers agreed
#   dgram-plain  the same with vnet=0 (plain frames)
#   dgram-mq     the same as dgram with queues=2
#   tap          host taps on a Linux bridge
#   tap-gro      the same with gro=1
#   tap-mq       multi_queue taps with queues=2
#
# In each guest vec0 is the device under test (NETIF) and vec1, in a
# namespace "remote", the other end (REMOTE_TYPE=netns); both share the
# switch or the bridge.  Each test's KTAP cases are judged against
# kernel_tests.expect, which lists the cases expected to fail on a
# transport with the reason (a feature the driver does not have, or a
# limit of the environment);
# Documentation/networking/vecnet-internals.rst says the same in prose.  Any other failing case fails this test, and so
# does a kernel report on any guest's console.
#
# make check runs the quick set (KERNEL_TESTS=quick, the default);
# make conformance runs every test (KERNEL_TESTS=full).  TRANSPORTS
# limits the transports, KST_TMO (default 360) bounds each test.

source "$(dirname "$(readlink -f "$0")")/../lib.sh"
require_cmd python3 socat iperf3 tc
require_vecswitch
cfg=$(dirname "$(readlink -f "$VMLINUX")")/.config
if ! grep -qx CONFIG_NET_SCH_FQ=y "$cfg" 2>/dev/null; then
	echo "SKIP: $VMLINUX was built without vecnet-kselftest.config (the 6.12 kernel)"
	exit "$ksft_skip"
fi
kst=${KSELFTEST_DIR:-$VECNET_BUILD/kselftest}
if [ ! -d "$kst/drivers/net" ]; then
	echo "SKIP: no kernel selftests in $kst (run 'make kselftests')"
	exit "$ksft_skip"
fi
# Debian 12's ethtool has no --json for -c, -g or -l, which the tests
# use; make kselftests unpacks a newer one from Debian's packages
ethtool_dir=$VECNET_BUILD/ethtool/usr/sbin
if [ ! -x "$ethtool_dir/ethtool" ]; then
	echo "SKIP: no newer ethtool in $ethtool_dir (run 'make kselftests')"
	exit "$ksft_skip"
fi

here=$(dirname "$(readlink -f "$0")")
expect=$here/kernel_tests.expect
# the kselftest timeout of drivers/net; a test cut short can leave the
# device half configured
tmo=${KST_TMO:-360}

# The quick set: the tests of a few seconds each on every transport, and
# the longer ones (ping.py's XDP cases, csum.py) on one datagram and one
# tap setup; about a minute a guest
declare -A more=([dgram]="ping.py hw/csum.py" [tap-gro]="ping.py hw/csum.py")
case ${KERNEL_TESTS:-quick} in
quick)
	tests=(vecnet/netconsole stats.py queues.py napi_id.py napi_threaded.py ring_reconfig.py
	       netpoll_basic.py hw/irq.py hw/tso.py) ;;
full)
	more=()
	mapfile -t tests < <(echo vecnet/netconsole
		sed -n 's|^drivers/net:||p; s|^drivers/net/hw:|hw/|p' "$kst/kselftest-list.txt") ;;
*)
	echo "FAIL: KERNEL_TESTS=$KERNEL_TESTS: want quick or full"
	exit 1 ;;
esac
all_setups="dgram dgram-plain dgram-mq tap tap-gro tap-mq"
read -r -a transports <<<"${TRANSPORTS:-$all_setups}"
for tr in "${transports[@]}"; do
	case " $all_setups " in
	*" $tr "*) ;;
	*) echo "FAIL: TRANSPORTS: no setup '$tr' (there are: $all_setups)"; exit 1 ;;
	esac
done

# setup NS TRANSPORT: the host's side of TRANSPORT in NS; the options of
# vec0 and vec1 go to the array vecs
setup() {
	local ns=$1 tr=$2 mq='' opt='' i

	vecs=()
	case $tr in
	dgram*)
		switch_at "$ns" "$TEST_TMP/$tr.sock" "$TEST_TMP/$tr.ctl" || return 1
		case $tr in
		dgram-plain) opt=,vnet=0 ;;
		dgram-mq) opt=,queues=2 ;;
		esac
		for i in 0 1; do
			vecs+=("vec$i:transport=unixdgram,path=$TEST_TMP/$tr.sock$opt")
		done ;;
	tap*)
		case $tr in
		tap-gro) opt=,gro=1 ;;
		tap-mq) opt=,queues=2; mq=multi_queue ;;
		esac
		# jumbo frames, as a NIC's switch port takes: the tests raise
		# the MTU to 4096 (gro.py) and 9000 (ping.py, xdp.py)
		ip -n "$ns" link add kbr0 mtu 9000 type bridge || return 1
		# a host with br_netfilter would hand bridged frames to
		# its firewall and reassemble fragments: not in this one
		# shellcheck disable=SC2016  # expanded by that shell
		ip netns exec "$ns" sh -c 'for f in /proc/sys/net/bridge/bridge-nf-call-*; do
			[ -e "$f" ] && echo 0 >"$f"; done; true'
		for i in 0 1; do
			ip -n "$ns" tuntap add dev "kt$i" mode tap $mq &&
			ip -n "$ns" link set "kt$i" mtu 9000 master kbr0 &&
			ip -n "$ns" link set "kt$i" up || return 1
			vecs+=("vec$i:transport=tap,ifname=kt$i$opt")
		done
		ip -n "$ns" link set kbr0 up ;;
	*)
		return 1 ;;
	esac
}

total=0
for tr in "${transports[@]}"; do
	read -r -a extra <<<"${more[$tr]:-}"
	total=$((total + ${#tests[@]} + ${#extra[@]}))
done
echo "TAP version 13"
echo "1..$total"
n=0
for tr in "${transports[@]}"; do
	read -r -a extra <<<"${more[$tr]:-}"
	run=("${tests[@]}" "${extra[@]}")
	ns=$(netns_add "kst-$tr")
	check_err $? "no namespace for $tr"
	if ! setup "$ns" "$tr"; then
		check_err 1 "$tr: the host's side could not be set up"
		continue
	fi
	out=$TEST_TMP/$tr.results
	mkdir -p "$out"
	start=$SECONDS
	guest "$tr" $((120 + ${#run[@]} * tmo)) -n "$ns" -c 2 -m 768M \
		-a "${vecs[0]}" -a "${vecs[1]}" \
		-e "KST_DIR=$kst" -e "KST_OUT=$out" -e "KST_TESTS=${run[*]}" \
		-e "KST_TMO=$tmo" -e "KST_PATH=$ethtool_dir" \
		-- sh "$here/kernel_tests_guest.sh" >"$TEST_TMP/$tr.guest" 2>&1
	rc=$?
	echo "# $tr: guest exit $rc after $((SECONDS - start)) s"
	sed 's/^/# /' "$TEST_TMP/$tr.guest"
	if [ "$rc" -ne 0 ]; then
		check_err "$rc" "$tr: the guest did not run the tests to the end"
		echo "# $tr: the last of its console:"
		tail -n 80 "$TEST_TMP/$tr/console.log" | sed 's/^/#   /'
	fi
	while IFS= read -r line; do
		case $line in
		"#"*) echo "$line" ;;
		ok\ * | fail\ * | skip\ *)
			n=$((n + 1))
			read -r verdict t note <<<"$line"
			note=${note#\# }
			case $verdict in
			ok) echo "ok $n $tr/$t # $note" ;;
			skip) echo "ok $n $tr/$t # SKIP $note" ;;
			fail)
				echo "not ok $n $tr/$t # $note"
				check_err 1 "$tr/$t: $note" >/dev/null ;;
			esac ;;
		esac
	done < <(python3 "$here/kernel_tests_report.py" "$expect" "$tr" "$out" "${run[@]}")
	if [ "${SWITCH_PID:-}" ]; then
		stop_switch >/dev/null
		SWITCH_PID=
	fi
done
log_test "kernel driver tests (${KERNEL_TESTS:-quick}) on ${transports[*]}"
exit "$RET"
