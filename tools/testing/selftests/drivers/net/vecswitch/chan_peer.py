#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A hostile stand-in for vecswitch: how a guest treats shortcut channels.

chan_peer.py SOCK UML_EXEC GUEST_DIR GUEST_MAC GUEST_IP

Binds SOCK, waits for the guest (unixdgram, path=SOCK) to say HELLO,
agrees to virtio-net headers, and then tries the guest: the host refuses
descriptors to it until the MODE says F_CHAN, and on a channel always;
descriptors forced on it with ordinary frames must not stay open in it,
nor freeze it when their close blocks (a file on a FUSE mount that never
answers FLUSH), CHAN messages without a descriptor, for a bad address
or with something else than a datagram socket are refused, a real
channel carries the guest's frames for its address and only frames from
that address into the guest, the other guest's MODE asking for 4 GiB
frames is taken as a bound only (and one malformed is refused), and
UNCHAN closes it.  The peer's
DATA_VALID flag is not taken for a checked checksum.  A guest with a
second queue (its HELLO says F_MQ) has that queue join, and its socket
refuses descriptors and CHANs until a MODE says F_CHANQ, then takes a
channel of its own, which UNCHAN on the main socket closes too.  The guest is driven
through uml-exec.  Prints "# ..." lines; exits 1 naming each failure.
"""

import os
import socket
import struct
import subprocess
import sys
import time

import fuse_stuck

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), ".."))
import vecnet_wire as wire    # noqa: E402 pylint: disable=wrong-import-position

HELLO, MODE, CHAN, UNCHAN = wire.MSG_HELLO, wire.MSG_MODE, wire.MSG_CHAN, wire.MSG_UNCHAN
QUEUES, JOIN = wire.MSG_QUEUES, wire.MSG_JOIN
F_VNET, F_CHAN, F_MQ, F_CHANQ = wire.MSG_F_VNET, wire.MSG_F_CHAN, wire.MSG_F_MQ, wire.MSG_F_CHANQ
VNET_HDR = wire.vnet_hdr()
BCAST = wire.BCAST
PEER_MAC = bytes.fromhex("027665c0ffee")
OTHER_MAC = bytes.fromhex("027665c0beef")

sock_path, uml_exec, guest_dir, guest_mac, guest_ip = sys.argv[1:6]
tmp_dir = os.path.dirname(sock_path)
gmac = bytes.fromhex(guest_mac.replace(":", ""))
# frames behind an all-zero virtio-net header: the other guest's
# broadcast, and the channel peer's frame to the guest
OTHER_BCAST = VNET_HDR + wire.eth(BCAST, OTHER_MAC, wire.ETH_P_IP, bytes(46))
PEER_FRAME = VNET_HDR + wire.eth(gmac, PEER_MAC, wire.ETH_P_IP, bytes(46))
failures = []


def fail(what):
    failures.append(what)
    print(f"# FAIL: {what}")


msg = wire.raw_msg


def guest(*cmd):
    r = subprocess.run([uml_exec, "-t", "60", guest_dir, "--", *cmd],
                       capture_output=True, text=True, check=False)
    return r.returncode, r.stdout


def xstats():
    _, out = guest("ethtool", "-S", "vec0")
    st = {}
    for line in out.splitlines():
        k, _, v = line.strip().partition(":")
        if v.strip().isdigit():
            st[k] = int(v)
    return st


def wait_stat(name, at_least, secs=10):
    end = time.time() + secs
    while time.time() < end:
        v = xstats().get(name, 0)
        if v >= at_least:
            return v
        time.sleep(0.2)
    return xstats().get(name, 0)


def with_fd(fd):
    return [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("i", fd))]


def open_fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


# The guest must answer a command within this, whatever it was passed
RESPONSIVE_S = 8


def responsive(after):
    """The guest runs a command at once: no vCPU waits on a close()."""
    t = time.time()
    rc, _ = guest("true")
    took = time.time() - t
    print(f"# the guest answered {took:.1f} s after {after}")
    if rc != 0 or took > RESPONSIVE_S:
        fail(f"the guest froze for {took:.1f} s after {after}")


def refused_fd(s, data, addr=None):
    """Does the host refuse a descriptor sent with @data to the guest?"""
    r, w = os.pipe()
    try:
        fds = with_fd(r)
        if addr is None:
            s.sendmsg([data], fds)
        else:
            s.sendmsg([data], fds, 0, addr)
        return False
    except PermissionError:
        return True
    finally:
        os.close(r)
        os.close(w)


def host_refuses_fds():
    """SO_PASSRIGHTS (Linux 6.16) is there to refuse descriptors with."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        s.setsockopt(socket.SOL_SOCKET, 83, 0)
        return True
    except OSError:
        return False
    finally:
        s.close()


passrights = host_refuses_fds()
if not passrights:
    print("# this host has no SO_PASSRIGHTS: descriptors reach the guest")


def recv_until(s, want, secs):
    """Datagrams from s until want(data) holds, for up to secs."""
    s.settimeout(0.2)
    end = time.time() + secs
    while time.time() < end:
        try:
            data = s.recv(70000)
        except socket.timeout:
            continue
        if want(data):
            return data
    return None


sw = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
sw.bind(sock_path)
sw.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
sw.settimeout(1)

# HELLO, with the channel flag: the guest asks for channels by default
addr = pid = None
deadline = time.time() + 120
while time.time() < deadline and addr is None:
    try:
        data, anc, _, src = sw.recvmsg(70000, socket.CMSG_SPACE(12))
    except socket.timeout:
        continue
    if wire.is_msg(data, HELLO):
        flags = struct.unpack(">H", data[6:8])[0]
        if not flags & 2:
            fail(f"the guest's HELLO has flags {flags:#x}, without F_CHAN")
        if flags & F_MQ and not flags & F_CHANQ:
            fail(f"the guest's HELLO has flags {flags:#x}, without F_CHANQ")
        hello_flags = flags
        addr = src
        for level, kind, d in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
                pid = struct.unpack("iII", d[:12])[0]
if addr is None or pid is None:
    print("# FAIL: no HELLO from the guest")
    sys.exit(1)
# no MODE with F_CHAN yet: the host refuses the guest any descriptor
if passrights and not refused_fd(sw, OTHER_BCAST, addr):
    fail("the guest took a descriptor before the switch offered channels")
sw.sendto(wire.msg(MODE, F_VNET | F_CHAN, 65554), addr)
if recv_until(sw, lambda d: wire.is_msg(d, MODE), 10) is None:
    fail("the guest never answered MODE")
# its carrier and the agreement settle
wait_stat("nego_agreed", 1)

# A frame whose header says its checksum was checked (DATA_VALID) comes
# from this peer, not the host's kernel: the guest must check it itself.
# A UDP datagram with a wrong checksum is then an error, not a datagram
# for a closed port.
def udp_stats():
    _, out = guest("cat", "/proc/net/snmp")
    rows = [line.split()[1:] for line in out.splitlines()
            if line.startswith("Udp:")]
    return dict(zip(rows[0], map(int, rows[1]))) if len(rows) == 2 else {}


peer_ip4 = socket.inet_aton(guest_ip.rsplit(".", 1)[0] + ".99")
udp = wire.udp(40000, 9, bytes(18), 0x1234)
ip4 = wire.ip4(peer_ip4, socket.inet_aton(guest_ip), wire.IPPROTO_UDP, len(udp), ident=1, frag=0)
before = udp_stats()
sw.sendto(wire.vnet_hdr(wire.VNET_F_DATA_VALID) +
          wire.eth(gmac, PEER_MAC, wire.ETH_P_IP, ip4 + udp), addr)
end = time.time() + 10
after = udp_stats()
while time.time() < end and after.get("InCsumErrors", 0) <= before.get("InCsumErrors", 0):
    time.sleep(0.2)
    after = udp_stats()
print(f"# a bad UDP checksum marked DATA_VALID: InCsumErrors "
      f"{before.get('InCsumErrors')} -> {after.get('InCsumErrors')}, NoPorts "
      f"{before.get('NoPorts')} -> {after.get('NoPorts')}")
if after.get("InCsumErrors", 0) != before.get("InCsumErrors", 0) + 1:
    fail("the guest took the peer's DATA_VALID for a checked checksum")

# Descriptors forced on the guest with frames, and CHAN with none
before = open_fds(pid)
for _ in range(40):
    r, w = os.pipe()
    sw.sendmsg([OTHER_BCAST], with_fd(r), 0, addr)
    os.close(r)
    os.close(w)
sw.sendto(msg(CHAN, PEER_MAC), addr)
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
sw.sendmsg([msg(CHAN, b"\xff" * 6)], with_fd(b.fileno()), 0, addr)
sw.sendmsg([msg(CHAN, gmac)], with_fd(b.fileno()), 0, addr)
r, w = os.pipe()
sw.sendmsg([msg(CHAN, OTHER_MAC)], with_fd(r), 0, addr)
os.close(r)
os.close(w)
refused = wait_stat("chan_refused", 4)
print(f"# CHAN without a descriptor, for broadcast, for itself, with a pipe: "
      f"{refused} refused")
if refused < 4:
    fail(f"only {refused} of 4 bad offers refused")

# Descriptors whose close blocks (a file on a FUSE mount that never
# answers FLUSH), with a frame and as a channel: the guest must not wait
stuck = None
if fuse_stuck.available():
    stuck = fuse_stuck.StuckSender(tmp_dir, sw)
    dropped0 = xstats().get("rx_fds_dropped", 0)
    sent = stuck.send(OTHER_BCAST, addr)
    print(f"# a frame with a FUSE file: {sent}")
    responsive("a frame with a FUSE file that never flushes")
    print(f"# a CHAN with a FUSE file: {stuck.send(msg(CHAN, OTHER_MAC), addr)}")
    responsive("a CHAN with a FUSE file that never flushes")
    if wait_stat("chan_refused", 5) < 5:
        fail("a CHAN with a FUSE file was not refused")
    dropped = wait_stat("rx_fds_dropped", dropped0 + 2) - dropped0
    print(f"# descriptors the guest dropped: {dropped}")
    if dropped < 2:
        fail(f"the guest counted {dropped} of 2 dropped descriptors")
else:
    print("# no FUSE here: descriptors whose close blocks not tried")
# refusals of an address the switch could pair are said, so that it
# does not take the pair for joined
told = set()
recv_until(sw, lambda d: wire.is_msg(d, UNCHAN)
           and (told.add(wire.parse_msg(d).mac) or told >= {PEER_MAC, OTHER_MAC}), 5)
if not told >= {PEER_MAC, OTHER_MAC}:
    fail(f"the guest said UNCHAN for {sorted(m.hex(':') for m in told)} only")
time.sleep(0.5)
grown = open_fds(pid) - before
print(f"# the guest's open descriptors after 40 forced ones and 4 bad offers: "
      f"{grown:+d}")
if grown > 10:
    fail(f"the guest kept {grown} descriptors forced on it")

# A real channel for PEER_MAC
sw.sendmsg([msg(CHAN, PEER_MAC)], with_fd(b.fileno()), 0, addr)
b.close()
if wait_stat("chan_opened", 1) < 1:
    fail("the guest did not open the channel")
# the other end of a channel never passes the guest a descriptor
if passrights and not refused_fd(a, PEER_FRAME):
    fail("the guest's end of a channel takes descriptors")
if stuck:
    sent = stuck.send(PEER_FRAME, via=a)
    print(f"# a FUSE file down the channel: {sent}")
    if passrights and sent != "refused":
        fail("the guest's end of a channel took a FUSE file")
    responsive("a FUSE file down the channel")
peer_ip = guest_ip.rsplit(".", 1)[0] + ".99"
guest("ip", "neigh", "replace", peer_ip, "lladdr",
      ":".join(f"{x:02x}" for x in PEER_MAC), "dev", "vec0")
guest("ping", "-c", "3", "-i", "0.2", "-W", "1", peer_ip)
got = recv_until(a, lambda d: len(d) >= 24 and d[10:16] == PEER_MAC, 5)
if got is None:
    fail("no frame for the channel's address came through the channel")
else:
    print(f"# the guest sent {len(got)} bytes for {PEER_MAC.hex(':')} "
          f"through the channel, header first")
    if got[16:22] != gmac:
        fail("the channel's frame has another source than the guest")

# Into the guest: only frames from PEER_MAC to its own address,
# untagged, whole, and the other guest's MODE, which asks for 4 GiB
# frames (taken as a bound only: the guest sends what it takes itself),
# but not one without F_VNET or one cut short
good0, bad0 = xstats().get("rx_chan_frames", 0), xstats().get("rx_chan_bad", 0)
a.send(PEER_FRAME)
a.send(VNET_HDR + wire.eth(gmac, OTHER_MAC, wire.ETH_P_IP, bytes(46)))
a.send(VNET_HDR + wire.eth(OTHER_MAC, PEER_MAC, wire.ETH_P_IP, bytes(46)))
a.send(VNET_HDR + wire.eth(BCAST, PEER_MAC, wire.ETH_P_IP, bytes(46)))
a.send(VNET_HDR + wire.eth(gmac, PEER_MAC, wire.ETH_P_8021Q,
                           struct.pack("!HH", 5, wire.ETH_P_IP) + bytes(42)))
a.send(b"\x00" * 12)
a.send(msg(UNCHAN, PEER_MAC))
a.send(wire.msg(MODE, F_VNET, 0xFFFFFFFF))
a.send(wire.msg(MODE, 0, 0xFFFFFFFF))
a.send(msg(MODE, b"\x00\x01"))
bad = wait_stat("rx_chan_bad", bad0 + 8) - bad0
good = xstats().get("rx_chan_frames", 0) - good0
print(f"# into the guest through the channel: {good} datagrams, {bad} refused")
if bad != 8:
    fail(f"{bad} of 8 bad datagrams on the channel refused")
if good != 10:
    fail(f"the guest read {good} of the 10 datagrams sent on the channel")
try:
    while True:
        a.recv(65536, socket.MSG_DONTWAIT)
except OSError:  # empty: EAGAIN, or a timeout on a socket that has one
    pass
guest("ping", "-c", "2", "-i", "0.2", "-s", "1400", "-W", "1", peer_ip)
got = recv_until(a, lambda d: len(d) > 1400 and d[10:16] == PEER_MAC, 5)
if got is None:
    fail("after the other guest's MODE no frame came through the channel")
elif len(got) > 10 + 14 + 1500:
    fail(f"after a MODE asking for 4 GiB the guest sent {len(got)} bytes")

# UNCHAN: the guest closes its end, and sends for PEER_MAC to the switch
sw.sendto(msg(UNCHAN, PEER_MAC), addr)
if wait_stat("chan_closed", 1) < 1:
    fail("UNCHAN did not close the channel")
refused_send = False
end = time.time() + 5
while time.time() < end and not refused_send:
    try:
        a.send(PEER_FRAME)
        time.sleep(0.1)
    except ConnectionRefusedError:
        refused_send = True
if not refused_send:
    fail("the guest's end of the channel is still open after UNCHAN")
guest("ping", "-c", "2", "-i", "0.2", "-W", "1", peer_ip)
if recv_until(sw, lambda d: len(d) >= 24 and d[10:16] == PEER_MAC, 5) is None:
    fail("after UNCHAN, frames for the address did not come to the switch")
print(f"# after UNCHAN the guest sends for {PEER_MAC.hex(':')} to the switch")


def queue_one():
    """The guest's second queue joins; its address, or None."""
    cookie = os.urandom(6)
    sw.sendto(msg(QUEUES, cookie), addr)
    end = time.time() + 10
    while time.time() < end:
        try:
            data, src = sw.recvfrom(70000)
        except socket.timeout:
            continue
        if src != addr and data == msg(JOIN, cookie):
            sw.sendto(data, src)
            return src
    return None


def mode(flags):
    sw.sendto(wire.msg(MODE, flags, 65554), addr)


# A second queue: no descriptor and no CHAN on it without F_CHANQ
if hello_flags & F_MQ:
    q1 = queue_one()
    if q1 is None or wait_stat("mq_joined", 1) < 1:
        fail("the guest's second queue did not join")
    else:
        if passrights and not refused_fd(sw, OTHER_BCAST, q1):
            fail("the second queue took a descriptor without F_CHANQ")
        refused0 = xstats().get("chan_refused", 0)
        a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        sw.sendto(msg(CHAN, PEER_MAC), q1)
        if not passrights:
            sw.sendmsg([msg(CHAN, PEER_MAC)], with_fd(b.fileno()), 0, q1)
        want = refused0 + (1 if passrights else 2)
        if wait_stat("chan_refused", want) < want:
            fail("the second queue took a CHAN without F_CHANQ")
        # F_CHANQ: a channel of queue 1's own, closed by UNCHAN on queue 0
        opened0 = xstats().get("chan_opened", 0)
        closed0 = xstats().get("chan_closed", 0)
        mode(F_VNET | F_CHAN | F_CHANQ)
        # the guest answers nothing (its frames carry headers already)
        time.sleep(0.5)
        sw.sendmsg([msg(CHAN, PEER_MAC)], with_fd(b.fileno()), 0, q1)
        b.close()
        if wait_stat("chan_opened", opened0 + 1) < opened0 + 1:
            fail("the second queue did not open a channel with F_CHANQ")
        print(f"# queue 1: a CHAN refused without F_CHANQ, "
              f"{xstats().get('chan_opened', 0) - opened0} opened with it")
        sw.sendto(msg(UNCHAN, PEER_MAC), addr)
        if wait_stat("chan_closed", closed0 + 1) < closed0 + 1:
            fail("UNCHAN on queue 0 did not close queue 1's channel")
        a.close()
if stuck:
    stuck.close()
sys.exit(1 if failures else 0)
