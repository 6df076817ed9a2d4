#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel's own generic network device test, tools/testing/selftests/
# net/netdevice.sh from the tree this project builds, run inside a guest
# on one device of every transport setup: it brings each eth* device up
# and down, sets its MAC and an address, lists its features and turns
# every feature ethtool shows as changeable off, on, and back.  Any FAIL
# line fails this test.  The devices are renamed ethN, which is what
# netdevice.sh looks for.
#
#   eth0 unixdgram, headers negotiated with vecswitch (the default)
#   eth1 unixdgram, vnet=0 (plain frames)
#   eth2 unixdgram, vnet=auto on vecswitch --hub (which does not negotiate)
#   eth3 tap    eth4 tap, gro=1    eth5 raw (a veth)    eth6 hybrid
#   eth7 bess (vecswitch --seqpacket)    eth8 fd (a socket handed over)
#   eth9 gre    eth10 l2tpv3

source "$(dirname "$(readlink -f "$0")")/../lib.sh"
require_cmd ethtool python3
require_vecswitch
# the kernel tree's own copy: this script runs from a link inside that tree
netdevice=${VECNET_KTREE:-$(dirname "$(readlink -f "$VMLINUX")")}/tools/testing/selftests/net/netdevice.sh
[ -f "$netdevice" ] || { echo "SKIP: no net/netdevice.sh in the kernel tree"; exit "$ksft_skip"; }

ns=$(netns_add ndev)
sw=$TEST_TMP/sw.sock
hub=$TEST_TMP/hub.sock
start_switch "$ns" --dgram "$sw" --seqpacket "$TEST_TMP/swp.sock" &&
	SWITCH_LOG=$TEST_TMP/hub.log start_switch "$ns" --dgram "$hub" --hub &&
	wait_for 10 test -S "$TEST_TMP/swp.sock"
check_err $? "vecswitch did not start: $(tail -n 3 "$TEST_TMP/switch.log" "$TEST_TMP/hub.log")"
for t in ntap0 ntap1 ntap2; do
	ip -n "$ns" tuntap add dev "$t" mode tap && ip -n "$ns" link set "$t" up
	check_err $? "cannot create $t"
done
ip -n "$ns" link add nveth0 type veth peer name nveth1 &&
	ip -n "$ns" link set nveth0 up && ip -n "$ns" link set nveth1 up
check_err $? "cannot create the veth pair"
ip -n "$ns" addr add 198.18.14.1/32 dev lo && ip -n "$ns" addr add 198.18.14.2/32 dev lo
check_err $? "cannot address lo"

devs=(
	"transport=unixdgram,path=$sw,local=$TEST_TMP/u0.sock"
	"transport=unixdgram,path=$sw,local=$TEST_TMP/u1.sock,vnet=0"
	"transport=unixdgram,path=$hub,local=$TEST_TMP/u2.sock"
	"transport=tap,ifname=ntap0"
	"transport=tap,ifname=ntap1,gro=1"
	"transport=raw,ifname=nveth1"
	"transport=hybrid,ifname=ntap2"
	"transport=bess,dst=$TEST_TMP/swp.sock"
	"transport=fd,fd=7"
	"transport=gre,src=198.18.14.1,dst=198.18.14.2,rx_key=1,tx_key=2"
	"transport=l2tpv3,udp=1,src=198.18.14.1,dst=198.18.14.2,srcport=1702,dstport=1701,rx_session=1,tx_session=2"
)
args=()
for i in "${!devs[@]}"; do
	args+=(-a "vec$i:${devs[$i]}")
done
n=${#devs[@]}

script=$(guest_script ndev <<EOS
i=0
while [ \$i -lt $n ]; do
	ip link set vec\$i name eth\$i || { echo "cannot rename vec\$i"; exit 1; }
	i=\$((i + 1))
done
# the negotiated device: wait (10 s at most) for the switch's answer
ip link set eth0 up
for t in \$(seq 100); do
	ethtool -k eth0 | grep -q '^tcp-segmentation-offload: on' && break
	sleep 0.1
done
ip link set eth0 down
bash $netdevice >netdevice.log 2>&1
echo "rc \$?" >>netdevice.log
echo done
EOS
)
# fd: the launcher's socket, bound and connected to the switch, is fd 7
python3 - "$TEST_TMP/fd.sock" "$sw" "$UML_RUN" -k "$VMLINUX" -n "$ns" \
	-N "ndev-$$" -t 300 -q -o "$TEST_TMP/ndev" "${args[@]}" -- sh "$script" <<'PY'
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.connect(sys.argv[2])
os.dup2(s.fileno(), 7)
os.execvp(sys.argv[3], sys.argv[3:])
PY
check_err $? "the guest failed: $(tail -n 5 "$(guest_out ndev output.log)" 2>/dev/null)"
log=$(guest_out ndev netdevice.log)
sed 's/^/# /' "$log"
[ -s "$log" ] && grep -q '^rc 0' "$log"
check_err $? "netdevice.sh did not run to its end"
for i in $(seq 0 $((n - 1))); do
	grep -q "^PASS: eth$i: ethtool list features" "$log"
	check_err $? "netdevice.sh did not test eth$i (${devs[$i]%%,*})"
done
! grep '^FAIL' "$log"
check_err $? "netdevice.sh failed on some device"
no_crash ndev
check_err $? "the guest's kernel complained"

log_test "the kernel's netdevice.sh passes on every transport"
exit "$RET"
