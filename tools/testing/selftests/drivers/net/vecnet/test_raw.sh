#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
#   test_raw.sh [raw|hybrid]
#
# raw: the guest on one end of a veth pair whose other end is the host's;
# hybrid: the guest on a tap device that is the host's end.  Both in a
# namespace of this test: ping, 5 s of iperf3 each way, and the self
# filter: frames the host injects with the guest's own source address,
# and frames going the guest's own way (out of the guest's veth; into
# the tap from the guest), never reach the guest, also after the guest
# changes its address while up; other frames do.  On raw, 5 s more of
# iperf3 into the guest with rx-gro-hw off.  Then bpffile= with a
# program that passes all and one that drops all, bpfflash=1 with
# ethtool -f (and ethtool -f refused without it), and the errors for a
# missing interface and a missing filter file.

source "$(dirname "$(readlink -f "$0")")/../lib.sh"
require_cmd iperf3 ethtool python3 ping

transport=${1:-raw}
ns=$(netns_add "$transport")
mac=02:76:65:00:c0:01
if [ "$transport" = hybrid ]; then
	# the guest writes into the tap and reads what leaves it
	ip -n "$ns" tuntap add dev vr0 mode tap
	host_if=vr0
	opts=gro=1
else
	ip -n "$ns" link add vr0 type veth peer name vr1
	ip -n "$ns" link set vr1 up
	host_if=vr1
	opts=
fi
ip -n "$ns" addr add 198.18.6.1/24 dev "$host_if"
ip -n "$ns" link set vr0 up
spec="vec0:transport=$transport,ifname=vr0${opts:+,$opts}"

inject() { ip netns exec "$ns" python3 "$FRAMES" send "$@" 10; }

"$UML_RUN" -k "$VMLINUX" -n "$ns" -N "$transport-$$" -t 300 -q -o "$TEST_TMP/g" \
	-a "$spec,mac=$mac,depth=128" --agent &
on_exit "$VECNET_SRC/scripts/uml-exec --stop $TEST_TMP/g"
exec_in g sh -c 'ip addr add 198.18.6.2/24 dev vec0 && ip link set vec0 up'
check_err $? "guest did not boot or bring vec0 up"
[ "$RET" -eq 0 ] || { log_test "$transport transport"; exit "$RET"; }

# shellcheck disable=SC2016  # expanded in the guest
exec_in g sh -c 'for i in $(seq 1 20); do ping -c 1 -W 1 198.18.6.1 >/dev/null && exit 0; done; exit 1'
check_err $? "the host never answered"
exec_in g ping -c 20 -i 0.05 198.18.6.1 >"$TEST_TMP/ping.log"
check_err $? "ping lost packets: $(grep loss "$TEST_TMP/ping.log")"

# shellcheck disable=SC2317  # called through guest_iperf
exg() { exec_in g "$@"; }
guest_iperf guest-to-host "over $transport" exg "$ns" 198.18.6.1
guest_iperf host-to-guest "over $transport" exg "$ns" 198.18.6.1 -R

# count_frames SRC_SELF SRC_OTHER: in the guest, frames of EtherTypes
# 88b5 (sent by the host towards the guest with source SRC_SELF), 88b6
# (the same with source SRC_OTHER) and 88b7 (going the guest's own way:
# sent out of its veth by the host, or into the tap by the guest itself)
count_frames() {
	rm -f "$TEST_TMP/g/ready"
	exec_in g env FRAME_COUNT_READY="$TEST_TMP/g/ready" python3 "$FRAMES" count vec0 8 \
		88b5 88b6 88b7 >"$TEST_TMP/count" &
	local p=$!
	wait_for 30 test -e "$TEST_TMP/g/ready"
	check_err $? "the frame counter in the guest did not start"
	if [ "$transport" = hybrid ]; then
		inject vr0 "$1" 88b5
		inject vr0 "$2" 88b6
		exec_in g python3 "$FRAMES" send vec0 02:76:65:00:c0:77 88b7 10
	else
		inject vr1 "$1" 88b5
		inject vr1 "$2" 88b6
		inject vr0 02:76:65:00:c0:77 88b7
	fi
	wait "$p"
	self=$(awk '$1 == "88b5" { print $2 }' "$TEST_TMP/count")
	other=$(awk '$1 == "88b6" { print $2 }' "$TEST_TMP/count")
	out=$(awk '$1 == "88b7" { print $2 }' "$TEST_TMP/count")
	echo "# frames from itself ${self:-?}, from another ${other:-?}, going its own way ${out:-?}"
}
count_frames "$mac" 02:76:65:00:c0:99
[ "${self:-1}" -eq 0 ] && [ "${out:-1}" -eq 0 ]
check_err $? "the guest received frames of its own or the host's outgoing ones"
[ "${other:-0}" -eq 10 ]
check_err $? "the guest received ${other:-no} of 10 frames from another source"

# a new address while up: the filter follows it
exec_in g ip link set vec0 address 02:76:65:00:c0:02
check_err $? "cannot change the address while up"
count_frames 02:76:65:00:c0:02 "$mac"
[ "${self:-1}" -eq 0 ] && [ "${out:-1}" -eq 0 ] && [ "${other:-0}" -eq 10 ]
check_err $? "after an address change the filter did not follow it"

exec_in g ethtool -S vec0 >"$TEST_TMP/stats"
for k in tx_kicks rx_kicks; do
	[ "$(xstat "$TEST_TMP/stats" $k)" -gt 0 ]
	check_err $? "ethtool -S: $k did not move"
done
exec_in g ethtool -k vec0 >"$TEST_TMP/features"
if [ "$transport" = hybrid ]; then
	grep -q '^rx-gro-hw: on$' "$TEST_TMP/features"
	check_err $? "ethtool -k does not show rx-gro-hw on (gro=1)"
else
	# the veth hands over super-frames whatever the guest asks: they go
	# up whole, or with rx-gro-hw off (as generic XDP turns it) are cut
	# in the guest, and none is lost for it
	grep -q '^rx-gro-hw: on$' "$TEST_TMP/features"
	check_err $? "ethtool -k does not show rx-gro-hw on"
	exec_in g ethtool -K vec0 rx-gro-hw off
	check_err $? "ethtool -K vec0 rx-gro-hw off failed"
	guest_iperf host-to-guest-cut "over $transport, rx-gro-hw off" exg "$ns" \
		198.18.6.1 -R
	exec_in g ethtool -S vec0 >"$TEST_TMP/stats"
	[ "$(xstat "$TEST_TMP/stats" rx_encaps_errors)" -eq 0 ]
	check_err $? "super-frames cut in the guest were dropped"
fi
grep -q '^tcp-segmentation-offload: on' "$TEST_TMP/features"
check_err $? "ethtool -k does not show TSO on"
"$VECNET_SRC/scripts/uml-exec" --stop "$TEST_TMP/g"

# bpffile=: a program of the user's replaces the self filter
python3 - "$TEST_TMP" <<'PY'
import struct, sys
ret_k = 0x06  # BPF_RET | BPF_K
for name, k in (("pass", 0xffffffff), ("drop", 0)):
    with open(f"{sys.argv[1]}/{name}.bpf", "wb") as f:
        f.write(struct.pack("<HBBI", ret_k, 0, 0, k))
with open(f"{sys.argv[1]}/short.bpf", "wb") as f:
    f.write(b"\x06\x00\x00")
PY
sb=$(guest_script bpf <<'EOS'
vec_up 198.18.6.2/24 || exit 1
for i in $(seq 1 5); do ping -c 1 -W 1 198.18.6.1 >/dev/null && { echo reached; exit 0; }; done
echo unreachable
EOS
)
guest bpass 60 -n "$ns" -a "$spec,bpffile=$TEST_TMP/pass.bpf" -- sh "$sb"
grep -q reached "$(guest_out bpass output.log)"
check_err $? "with a pass-all bpffile the host was not reached"
guest bdrop 60 -n "$ns" -a "$spec,bpffile=$TEST_TMP/drop.bpf" -- sh "$sb"
grep -q unreachable "$(guest_out bdrop output.log)"
check_err $? "with a drop-all bpffile the guest still received answers"

# bpfflash=1: ethtool -f swaps the filter at run time (files from the
# guest's firmware path), keeps it across down/up, refuses a malformed
# one; without bpfflash, ethtool -f is refused and nothing changes
mkdir -p "$TEST_TMP/fw"
cp "$TEST_TMP/pass.bpf" "$TEST_TMP/drop.bpf" "$TEST_TMP/short.bpf" "$TEST_TMP/fw/"
sf=$(guest_script flash <<'EOS'
vec_up 198.18.6.2/24 || exit 1
r() {
	for i in 1 2 3 4 5; do ping -c 1 -W 1 198.18.6.1 >/dev/null && { echo "$1 reached"; return; }; done
	echo "$1 unreachable"
}
r before
ethtool -f vec0 drop.bpf && echo "flash drop ok"
r dropped
ethtool -f vec0 short.bpf || echo "flash short refused"
ethtool -f vec0 pass.bpf && echo "flash pass ok"
ethtool -f vec0 drop.bpf && ip link set vec0 down && ip link set vec0 up && sleep 1
r downup
EOS
)
guest flash 90 -n "$ns" -a "$spec,bpfflash=1" -a "firmware_class.path=$TEST_TMP/fw" -- sh "$sf"
for line in "before reached" "flash drop ok" "dropped unreachable" \
	    "flash short refused" "flash pass ok" "downup unreachable"; do
	grep -qx "$line" "$(guest_out flash output.log)"
	check_err $? "bpfflash=1: expected '$line' in the guest"
done
console_has flash "ethtool -f: 3 bytes, not 1 to 4096 instructions of 8 bytes"
check_err $? "bpfflash=1: no clear error for a malformed program"
guest noflash 60 -n "$ns" -a "$spec" -a "firmware_class.path=$TEST_TMP/fw" -- \
	sh -c "$(printf '. %q; vec_up 198.18.6.2/24 && ! ethtool -f vec0 drop.bpf && ping_until 198.18.6.1' \
		"$VECNET_TEST_DIR/guest_lib.sh")"
check_err $? "without bpfflash, ethtool -f was not refused or changed the filter"
console_has noflash "ethtool -f: not allowed; bpfflash=1 allows it"
check_err $? "without bpfflash: no clear error for ethtool -f"

# errors name the problem; the guest keeps booting
guest bnone 60 -n "$ns" -a "$spec,bpffile=$TEST_TMP/none.bpf" -- \
	sh -c '! ip link show vec0 2>/dev/null'
check_err $? "a missing bpffile still created vec0"
console_has bnone "vec0: option 'bpffile': cannot read $TEST_TMP/none.bpf"
check_err $? "no clear error for a missing bpffile"
guest bshort 60 -n "$ns" -a "$spec,bpffile=$TEST_TMP/short.bpf" -- \
	sh -c '! ip link show vec0 2>/dev/null'
check_err $? "a 3-byte bpffile still created vec0"
console_has bshort "short.bpf is 3 bytes, not 1 to 4096 instructions of 8 bytes"
check_err $? "no clear error for a malformed bpffile"
# a FIFO nobody writes would hang a blocking open, and the boot with it
mkfifo "$TEST_TMP/fifo.bpf"
guest bfifo 60 -n "$ns" -a "$spec,bpffile=$TEST_TMP/fifo.bpf" -- \
	sh -c '! ip link show vec0 2>/dev/null'
check_err $? "a FIFO as bpffile hung the boot or still created vec0"
console_has bfifo "vec0: option 'bpffile': $TEST_TMP/fifo.bpf is not a regular file"
check_err $? "no clear error for a FIFO as bpffile"
if [ "$transport" = hybrid ]; then
	# a tap the guest may not create: the name is taken by a veth
	ip -n "$ns" link add vrx0 type veth peer name vrx1
	guest bif 60 -n "$ns" -a "vec0:transport=hybrid,ifname=vrx0" -- \
		sh -c '! ip link set vec0 up 2>/dev/null'
	check_err $? "vec0 came up on an interface that is not a tap"
	console_has bif "cannot attach to tap vrx0"
else
	guest bif 60 -n "$ns" -a "vec0:transport=raw,ifname=nosuchif0" -- \
		sh -c '! ip link set vec0 up 2>/dev/null'
	check_err $? "vec0 came up on a missing interface"
	console_has bif "cannot open a packet socket on nosuchif0"
fi
check_err $? "no clear error for a missing interface"
for g in g bpass bdrop flash noflash bnone bshort bif; do
	no_crash $g
	check_err $? "guest $g kernel complained"
done

log_test "$transport transport: traffic both ways, self filter, bpffile, errors"
exit "$RET"
