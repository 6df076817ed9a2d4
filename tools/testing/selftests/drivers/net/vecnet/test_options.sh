#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Every way a vecN: specification can be wrong gives one console message
# naming the device, the option and the reason; that device does not
# exist and the guest boots on.  Good specifications next to the bad
# ones still make their devices, with the values asked for.

source "$(dirname "$(readlink -f "$0")")/../lib.sh"
require_cmd ethtool python3

# The kernel command line holds 4096 bytes: short paths where no socket
# is ever made
p=/n.sock
u="transport=unixdgram,path=$p"
long=/$(printf 'x%.0s' $(seq 1 110))
many=$(for i in $(seq 1 100); do printf ',k%d=%d' "$i" "$i"; done)

# index|specification|what its one message says
cases=(
	"0|transport=unixdgram|option 'path': required by transport unixdgram"
	"1|path=$p|option 'transport': required"
	"2|transport=unixdgrm,path=$p|unknown transport 'unixdgrm'"
	"3|transport=unix,path=$p|unknown transport 'unix'"
	"4|transport=unixdgramx,path=$p|unknown transport 'unixdgramx'"
	"5|$u,depth=0|option 'depth': 0 is out of range 1..1024"
	"6|$u,depth=abc|option 'depth': 'abc' is not a number"
	"7|$u,depth=0x100000000|option 'depth': '0x100000000' does not fit in 32 bits"
	"8|$u,depth=0xffffffff|option 'depth': 4294967295 is out of range 1..1024"
	"9|$u,mtu=67|option 'mtu': 67 is out of range 68..65517"
	"10|$u,foo=1|option 'foo': unknown for transport unixdgram"
	"11|$u,mac=01:00:00:00:00:01|option 'mac': 01:00:00:00:00:01 is not a unicast address"
	"12|$u,mac=zz|option 'mac': 'zz' is not an address"
	"13|$u,depth=8,depth=9|option 'depth': given more than once"
	"14|$u,,depth=8|empty option"
	"15|$u,depth|option 'depth' is not key=value"
	"16|$u,depth=|option 'depth': no value"
	"17|transport=vde,vnl=x|option 'transport': 'vde' is not supported by this driver yet"
	"18|$u,vec=2|option 'vec': 2 is out of range 0..1"
	"19|$u,gro=1|option 'gro': unknown for transport unixdgram"
	"20|transport=unixdgram,path=$long|option 'path': longer than 107 bytes"
	"21|$u,headroom=4097|option 'headroom': 4097 is out of range 0..4096"
	"22|$u,local=$p|option 'local': the same socket as 'path'"
	"23|$u$many|option 'k1': unknown for transport unixdgram"
	"24|$u,depth=-1|option 'depth': '-1' is not a number"
	"25||no options"
	"27|transport=tap|option 'ifname': required by transport tap"
	"28|transport=tap,ifname=abcdefghijklmnop|option 'ifname': longer than 15 bytes"
	"29|transport=tap,ifname=t0,gro=2|option 'gro': 2 is out of range 0..1"
	"32|transport=raw|option 'ifname': required by transport raw"
	"33|transport=raw,ifname=x,path=/n.sock|option 'path': unknown for transport raw"
	"34|transport=hybrid|option 'ifname': required by transport hybrid"
	"35|transport=bess,src=/a.sock|option 'dst': required by transport bess"
	"36|transport=fd|option 'fd': required by transport fd"
	"37|transport=fd,fd=2|option 'fd': 2 is out of range 3..2147483647"
	"38|transport=bess,dst=$long|option 'dst': longer than 107 bytes"
	"39|$u,vnet=2|option 'vnet': '2' is not 0, 1 or auto"
	"40|transport=tap,ifname=t0,vnet=1|option 'vnet': unknown for transport tap"
	"43|$u,gso_max=65535|option 'gso_max': 65535 is out of range 65536..262144"
	"44|$u,gso_max=262145|option 'gso_max': 262145 is out of range 65536..262144"
	"45|$u,vnet=0,gso_max=131072|option 'gso_max': needs vnet=auto or vnet=1"
)
args=()
for c in "${cases[@]}"; do
	IFS='|' read -r idx spec _ <<<"$c"
	args+=(-a "vec$idx:$spec")
done
# Not a device number at all, and the bundled driver's mconsole form
args+=(-a "vecx:$u" -a "vec26=$u,local=$TEST_TMP/g26.sock")
# Good ones: hex and decimal values, a MAC, an MTU
args+=(-a "vec30:$u,local=$TEST_TMP/g30.sock,depth=0x80,mtu=9000,mac=02:00:5e:00:00:30,headroom=0,vec=0")
args+=(-a "vec31:$u,local=$TEST_TMP/g31.sock,vnet=1")
args+=(-a "vec41:$u,local=$TEST_TMP/g41.sock,vnet=auto" -a "vec42:$u,local=$TEST_TMP/g42.sock,vnet=0")

script=$(guest_script opts <<'EOS'
ip -o link show | grep -o 'vec[0-9]*' >links
ethtool -g vec30 >ring30
ip -j link show vec30 >link30
echo booted
EOS
)
guest opts 60 "${args[@]}" -- sh "$script"
rc=$?
check_err "$rc" "guest with bad options did not finish (status $rc)"
grep -qx booted "$(guest_out opts output.log)"
check_err $? "guest did not boot through the bad options"

for c in "${cases[@]}"; do
	IFS='|' read -r idx _ msg <<<"$c"
	n=$(grep -cF "vecnet: vec$idx: " "$(guest_out opts console.log)")
	if ! grep -F "vecnet: vec$idx: " "$(guest_out opts console.log)" |
		grep -qF -- "$msg"; then
		check_err 1 "vec$idx: no message '$msg'"
		grep -F "vec$idx:" "$(guest_out opts console.log)" | head -n 3
	elif [ "$n" -ne 1 ]; then
		check_err 1 "vec$idx: $n messages instead of one"
	fi
	if grep -qx "vec$idx" "$(guest_out opts links)"; then
		check_err 1 "vec$idx exists despite a bad option"
	fi
done
console_has opts "vecnet: vecx: bad device number"
check_err $? "no message for a bad device number"
for ok in vec26 vec30 vec31 vec41 vec42; do
	grep -qx "$ok" "$(guest_out opts links)"
	check_err $? "$ok was not created"
done
grep -Eq 'RX:[[:space:]]+128' "$(guest_out opts ring30)"
check_err $? "depth=0x80 did not give 128 ring entries"
python3 - "$(guest_out opts link30)" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))[0]
assert d["mtu"] == 9000, d["mtu"]
assert d["address"] == "02:00:5e:00:00:30", d["address"]
PY
check_err $? "mtu= or mac= not applied"
no_crash opts
check_err $? "guest kernel complained"

log_test "option errors: one message each, no device, boot continues"
exit "$RET"
