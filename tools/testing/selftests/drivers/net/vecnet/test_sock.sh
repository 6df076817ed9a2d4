#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The bess and fd transports, in a namespace of this test.
#
# bess against a seqpacket peer this project did not write: socat joins
# a SOCK_SEQPACKET listener to a tap whose host end has an address.
# Ping and 5 s of iperf3 each way; then socat is killed (the carrier
# goes off) and started again (the guest connects again by itself and
# pings).  bess against vecswitch --seqpacket, pinging a unixdgram
# guest on the same switch.  fd: a datagram socket that a launcher binds
# and connects to vecswitch is handed to the guest as descriptor 7; it
# pings, and still does after down and up.  Then the errors: a missing
# or non-socket or stream descriptor, src equal to dst.

source "$(dirname "$(readlink -f "$0")")/../lib.sh"
require_cmd iperf3 ethtool python3 ping socat
require_vecswitch

ns=$(netns_add sock)

# --- bess against socat ------------------------------------------------
bsock=$TEST_TMP/bess.sock
socat_start() {
	rm -f "$bsock"
	ip netns exec "$ns" socat -b 65536 "UNIX-LISTEN:$bsock,type=5" \
		"TUN:198.18.8.1/24,tun-type=tap,iff-no-pi,iff-up,tun-name=bt0" \
		2>>"$TEST_TMP/socat.log" &
	SOCAT=$!
	on_exit "kill $SOCAT 2>/dev/null"
	wait_for 10 test -S "$bsock"
}
socat_start
check_err $? "socat did not listen"

agent "$ns" sock b -a "vec0:transport=bess,dst=$bsock,src=$TEST_TMP/b.sock,mac=02:76:65:00:d0:01"
exec_in b sh -c 'ip addr add 198.18.8.2/24 dev vec0 && ip link set vec0 up'
check_err $? "the bess guest did not boot or bring vec0 up"
[ "$RET" -eq 0 ] || { log_test "bess and fd transports"; exit "$RET"; }
test -S "$TEST_TMP/b.sock"
check_err $? "the bess socket is not bound at src="
reach b 198.18.8.1
check_err $? "bess: the host behind socat never answered"

# shellcheck disable=SC2317  # called through guest_iperf
exb() { exec_in b "$@"; }
guest_iperf guest-to-host "over bess and socat" exb "$ns" 198.18.8.1
guest_iperf host-to-guest "over bess and socat" exb "$ns" 198.18.8.1 -R
exec_in b ethtool -S vec0 >"$TEST_TMP/b.stats"
for k in tx_kicks rx_kicks; do
	[ "$(xstat "$TEST_TMP/b.stats" $k)" -gt 0 ]
	check_err $? "bess: ethtool -S $k did not move"
done

# the peer goes and comes back at the same path
kill "$SOCAT"
wait "$SOCAT" 2>/dev/null
wait_for 20 console_has b "vec0: peer gone, carrier off"
check_err $? "bess: no carrier loss when the peer went away"
socat_start
check_err $? "socat did not listen again"
wait_for 20 console_has b "vec0: peer back, carrier on"
check_err $? "bess: the guest did not connect again by itself"
reach b 198.18.8.1
check_err $? "bess: no traffic after the peer came back"
"$VECNET_SRC/scripts/uml-exec" --stop "$TEST_TMP/b"
wait_for 30 sh -c "! test -e $TEST_TMP/b.sock"
check_err $? "bess: src= socket left behind after the guest stopped"

# --- bess and fd through vecswitch --------------------------------------
sw=$TEST_TMP/sw.sock
start_switch "$ns" --dgram "$sw" --seqpacket "$TEST_TMP/swp.sock" &&
	wait_for 10 test -S "$TEST_TMP/swp.sock"
check_err $? "vecswitch did not start: $(tail -n 3 "$TEST_TMP/switch.log")"

agent "$ns" sock u -a "vec0:transport=unixdgram,path=$sw,mac=02:76:65:00:d0:02"
agent "$ns" sock s -a "vec0:transport=bess,dst=$TEST_TMP/swp.sock,mac=02:76:65:00:d0:03"
# fd: the launcher's socket, bound and connected, becomes descriptor 7
python3 - "$TEST_TMP/fd.sock" "$sw" "$UML_RUN" -k "$VMLINUX" -n "$ns" -N "sock-f-$$" \
	-t 300 -q -o "$TEST_TMP/f" -a "vec0:transport=fd,fd=7,mac=02:76:65:00:d0:04" --agent <<'PY' &
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.connect(sys.argv[2])
os.dup2(s.fileno(), 7)
os.execvp(sys.argv[3], sys.argv[3:])
PY
on_exit "$VECNET_SRC/scripts/uml-exec --stop $TEST_TMP/f"
declare -A host=([u]=2 [s]=3 [f]=4)
for g in u s f; do
	exec_in "$g" sh -c "ip addr add 198.18.9.${host[$g]}/24 dev vec0 && ip link set vec0 up"
	check_err $? "guest $g did not boot or bring vec0 up"
done
reach s 198.18.9.2
check_err $? "bess through vecswitch --seqpacket never reached the unixdgram guest"
# Neither the bess connection nor the fd transport's socket takes a
# descriptor from its peer (SO_PASSRIGHTS 0, Linux 6.16): the guest has no
# room for one, so the host would close it in the guest's context
python3 - "$(pgrep -o -f "umid=sock-s-$$")" "$(pgrep -o -f "umid=sock-f-$$")" <<'PY'
import ctypes, os, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
def theirs(pid, fd):
    pidfd = os.pidfd_open(pid)
    try:
        mine = libc.syscall(438, pidfd, fd, 0)   # pidfd_getfd
        if mine < 0:
            raise OSError(ctypes.get_errno(), "pidfd_getfd")
        return socket.socket(fileno=mine)
    finally:
        os.close(pidfd)
def passrights(s):
    try:
        return s.getsockopt(socket.SOL_SOCKET, 83)
    except OSError:
        return None     # a host without SO_PASSRIGHTS
spid, fpid = int(sys.argv[1]), int(sys.argv[2])
bad, seen = [], 0
for fd in map(int, os.listdir(f"/proc/{spid}/fd")):
    if not os.readlink(f"/proc/{spid}/fd/{fd}").startswith("socket:"):
        continue
    s = theirs(spid, fd)
    if s.family == socket.AF_UNIX and s.type == socket.SOCK_SEQPACKET:
        seen += 1
        if passrights(s) == 1:
            bad.append(f"bess fd {fd}")
    s.close()
s = theirs(fpid, 7)
if passrights(s) == 1:
    bad.append("fd transport's fd 7")
if not seen:
    bad.append("(no bess socket found)")
print(f"# {seen} bess socket(s) and fd 7 checked; taking descriptors:",
      ", ".join(bad) or "none")
sys.exit(1 if bad else 0)
PY
check_err $? "a bess or fd socket takes descriptors from its peer"
reach f 198.18.9.2
check_err $? "fd through vecswitch never reached the unixdgram guest"
reach u 198.18.9.4
check_err $? "the unixdgram guest never reached the fd guest"
exec_in f sh -c 'ip link set vec0 down && ip link set vec0 up'
check_err $? "fd: down and up failed"
reach f 198.18.9.2
check_err $? "fd: no traffic after down and up (descriptor closed?)"

# --- errors ---------------------------------------------------------------
# guest_fd7 NAME TYPE [uml-run options] -- CMD...: a guest whose descriptor
# 7 is one end of a socketpair of TYPE (STREAM, DGRAM)
guest_fd7() {
	local name=$1 type=$2

	shift 2
	python3 - "$type" "$UML_RUN" -k "$VMLINUX" -N "sock-$name-$$" -t 60 -q \
		-o "$TEST_TMP/$name" "$@" <<'PY'
import os, socket, sys
a, b = socket.socketpair(socket.AF_UNIX, getattr(socket, "SOCK_" + sys.argv[1]))
os.dup2(a.fileno(), 7)
os.execvp(sys.argv[2], sys.argv[2:])
PY
}

guest e1 60 -n "$ns" -a "vec0:transport=fd,fd=99" -- sh -c '! ip link show vec0 2>/dev/null'
check_err $? "fd=99 (not open) still created vec0"
console_has e1 "vec0: option 'fd': descriptor 99 is not open"
check_err $? "no clear error for a descriptor that is not open"
guest_fd7 e2 STREAM -a "vec0:transport=fd,fd=7" -- sh -c '! ip link show vec0 2>/dev/null'
check_err $? "a stream descriptor still created vec0"
console_has e2 "vec0: option 'fd': descriptor 7 is a stream socket"
check_err $? "no clear error for a stream descriptor"
# one descriptor, two devices: the second is refused (each would close it)
guest_fd7 e5 DGRAM -a "vec0:transport=fd,fd=7" -a "vec1:transport=fd,fd=7" -- \
	sh -c 'ip link show vec0 >/dev/null && ! ip link show vec1 2>/dev/null'
check_err $? "two devices took one descriptor"
console_has e5 "vec1: option 'fd': descriptor 7 is vec0's already"
check_err $? "no clear error for a descriptor another device holds"
guest e3 60 -n "$ns" -a "vec0:transport=fd,fd=7" -- sh -c '! ip link show vec0 2>/dev/null' 7</dev/null
check_err $? "a descriptor that is not a socket still created vec0"
console_has e3 "vec0: option 'fd': descriptor 7 is not a socket"
check_err $? "no clear error for a descriptor that is not a socket"
guest e4 60 -n "$ns" -a "vec0:transport=bess,dst=$TEST_TMP/x.sock,src=$TEST_TMP/x.sock" -- \
	sh -c '! ip link show vec0 2>/dev/null'
check_err $? "bess with src equal to dst still created vec0"
console_has e4 "vec0: option 'src': the same socket as 'dst'"
check_err $? "no clear error for src equal to dst"
for g in b u s f e1 e2 e3 e4; do
	no_crash $g
	check_err $? "guest $g kernel complained"
done

log_test "bess and fd transports: socat and vecswitch peers, reconnect, errors"
exit "$RET"
