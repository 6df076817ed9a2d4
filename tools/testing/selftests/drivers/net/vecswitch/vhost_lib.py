# SPDX-License-Identifier: GPL-2.0
"""vhost-user and virtio numbers, guest memory and split virtqueues, the
switch seen from outside, and the frames the vhost-user tests send.

The requests, flags and message layouts are those of QEMU's
docs/interop/vhost-user.rst, the feature bits and ring layout those of
the virtio 1.x specification: written down here once for every module
of vhost_frontend.py.  Ethernet and checksum helpers come from
../vecnet_wire.py.
"""

import ctypes
import json
import mmap
import os
import random
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), ".."))
import vecnet_wire as w    # noqa: E402 pylint: disable=wrong-import-position


# --- the protocol -----------------------------------------------------------

GET_FEATURES, SET_FEATURES, SET_OWNER, RESET_OWNER, SET_MEM_TABLE = 1, 2, 3, 4, 5
SET_VRING_NUM, SET_VRING_ADDR, SET_VRING_BASE, GET_VRING_BASE = 8, 9, 10, 11
SET_VRING_KICK, SET_VRING_CALL, SET_VRING_ERR = 12, 13, 14
GET_PROTOCOL_FEATURES, SET_PROTOCOL_FEATURES, GET_QUEUE_NUM = 15, 16, 17
SET_VRING_ENABLE, GET_CONFIG, SET_CONFIG = 18, 24, 25

REQ_NAME = {
    GET_FEATURES: "GET_FEATURES", SET_FEATURES: "SET_FEATURES",
    SET_OWNER: "SET_OWNER", RESET_OWNER: "RESET_OWNER",
    SET_MEM_TABLE: "SET_MEM_TABLE", SET_VRING_NUM: "SET_VRING_NUM",
    SET_VRING_ADDR: "SET_VRING_ADDR", SET_VRING_BASE: "SET_VRING_BASE",
    GET_VRING_BASE: "GET_VRING_BASE", SET_VRING_KICK: "SET_VRING_KICK",
    SET_VRING_CALL: "SET_VRING_CALL", SET_VRING_ERR: "SET_VRING_ERR",
    GET_PROTOCOL_FEATURES: "GET_PROTOCOL_FEATURES",
    SET_PROTOCOL_FEATURES: "SET_PROTOCOL_FEATURES",
    GET_QUEUE_NUM: "GET_QUEUE_NUM", SET_VRING_ENABLE: "SET_VRING_ENABLE",
    GET_CONFIG: "GET_CONFIG", SET_CONFIG: "SET_CONFIG",
}

VERSION, REPLY, NEED_REPLY = 0x1, 0x4, 0x8
HDR = struct.Struct("<III")             # request, flags, size
VRING_STATE = struct.Struct("<II")      # index, num
VRING_ADDR = struct.Struct("<IIQQQQ")   # index, flags, desc, used, avail, log
REGION = struct.Struct("<QQQQ")         # guest address, size, user address, mmap offset


def mem_table(regions, count=None):
    """SET_MEM_TABLE's payload: the number of regions (or count, to lie
    about it), padding, then each (guest address, size, user address,
    mmap offset)"""
    return (struct.pack("<II", len(regions) if count is None else count, 0)
            + b"".join(REGION.pack(*r) for r in regions))

# protocol features
PF_MQ, PF_REPLY_ACK, PF_CONFIG = 0, 3, 9

# device features (virtio-net, virtio 1.x)
F_CSUM, F_GUEST_CSUM = 0, 1
F_GUEST_TSO4, F_GUEST_TSO6, F_HOST_TSO4, F_HOST_TSO6 = 7, 8, 11, 12
F_MRG_RXBUF, F_RING_INDIRECT_DESC, F_RING_EVENT_IDX = 15, 28, 29
F_PROTOCOL_FEATURES, F_VERSION_1 = 30, 32
OFFERED = (F_CSUM, F_GUEST_CSUM, F_GUEST_TSO4, F_GUEST_TSO6, F_HOST_TSO4,
           F_HOST_TSO6, F_MRG_RXBUF, F_RING_INDIRECT_DESC, F_RING_EVENT_IDX,
           F_PROTOCOL_FEATURES, F_VERSION_1)
FEATURE_NAME = {
    F_CSUM: "CSUM", F_GUEST_CSUM: "GUEST_CSUM", F_GUEST_TSO4: "GUEST_TSO4",
    F_GUEST_TSO6: "GUEST_TSO6", F_HOST_TSO4: "HOST_TSO4",
    F_HOST_TSO6: "HOST_TSO6", F_MRG_RXBUF: "MRG_RXBUF",
    F_RING_INDIRECT_DESC: "RING_INDIRECT_DESC",
    F_RING_EVENT_IDX: "RING_EVENT_IDX",
    F_PROTOCOL_FEATURES: "PROTOCOL_FEATURES", F_VERSION_1: "VERSION_1",
}

# split virtqueue
DESC = struct.Struct("<QIHH")           # addr, len, flags, next
D_NEXT, D_WRITE, D_INDIRECT = 1, 2, 4
AVAIL_F_NO_INTERRUPT, USED_F_NO_NOTIFY = 1, 1
RXQ, TXQ = 0, 1

# virtio-net header: flags, gso_type, hdr_len, gso_size, csum_start, csum_offset
VNET = w.VNET_HDR
NEEDS_CSUM, GSO_NONE, GSO_TCPV4 = w.VNET_F_NEEDS_CSUM, w.VNET_GSO_NONE, w.VNET_GSO_TCPV4

WAIT = 3.0              # seconds: the longest any one step may take


def bit(*bits):
    v = 0
    for b in bits:
        v |= 1 << b
    return v


def bit_names(v):
    return "|".join(FEATURE_NAME.get(b, str(b)) for b in range(64) if v >> b & 1) or "0"


class Fail(Exception):
    """Something the switch must do, it did not: the test fails."""


class Closed(Exception):
    """The switch closed the connection."""


def expect(cond, what, expected, got):
    if not cond:
        raise Fail(f"{what}: expected {expected}, got {got}")


def expect_eq(what, expected, got):
    expect(expected == got, what, expected, got)


def first_diff(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


def expect_bytes(what, expected, got):
    if expected != got:
        i = first_diff(expected, got)
        raise Fail(f"{what}: expected {len(expected)} bytes, got {len(got)} "
                   f"bytes, first difference at byte {i} "
                   f"(expected {expected[i:i + 8].hex() or '-'}, "
                   f"got {got[i:i + 8].hex() or '-'})")


def say(*args):
    print("#", *args, flush=True)


def eventfd():
    """A non-blocking eventfd (os.eventfd is Python 3.10+; libc's before)"""
    if hasattr(os, "eventfd"):
        return os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.eventfd(0, os.O_NONBLOCK | os.O_CLOEXEC)
    if fd < 0:
        raise OSError(ctypes.get_errno(), "eventfd")
    return fd


def need_event(event, new, old):
    """virtio's vring_need_event: did idx pass event going old -> new?"""
    return (new - event - 1) & 0xffff < (new - old) & 0xffff


# --- guest memory -----------------------------------------------------------

class Region:
    def __init__(self, gpa, size, uva, offset):
        self.gpa, self.size, self.uva, self.offset = gpa, size, uva, offset
        self.next = offset              # bump allocator, in file offsets


# two regions of one memfd, as QEMU hands them over: guest, user and file
# addresses all differ, so that mixing them up lands in the wrong place
STD_LAYOUT = ((0x100000, 2 << 20, 0x7f5a00000000, 0),
              (0x40000000, 2 << 20, 0x7f5b00200000, 2 << 20))


class Memory:
    """A memfd mapped here, cut into regions for the switch to map."""

    def __init__(self, layout=STD_LAYOUT, size=None):
        self.regions = [Region(*r) for r in layout]
        size = size or max(r.offset + r.size for r in self.regions)
        self.size = size
        self.fd = os.memfd_create("vhost-guest", os.MFD_CLOEXEC)
        os.ftruncate(self.fd, size)
        self.mm = mmap.mmap(self.fd, size, mmap.MAP_SHARED,
                            mmap.PROT_READ | mmap.PROT_WRITE)
        self._anchor = ctypes.c_char.from_buffer(self.mm)
        self.base = ctypes.addressof(self._anchor)
        self.arenas = {}

    def close(self):
        if self.mm is None:
            return
        del self._anchor
        self.mm.close()
        self.mm = None
        os.close(self.fd)

    def alloc(self, size, align=16, region=0):
        r = self.regions[region]
        off = (r.next + align - 1) // align * align
        if off + size > r.offset + r.size:
            raise MemoryError(f"region {region} is full")
        r.next = off + size
        return r.gpa + off - r.offset

    def region_of(self, gpa):
        for r in self.regions:
            if r.gpa <= gpa < r.gpa + r.size:
                return r
        raise ValueError(f"guest address {gpa:#x} is in no region")

    def off(self, gpa):
        r = self.region_of(gpa)
        return gpa - r.gpa + r.offset

    def uva(self, gpa):
        r = self.region_of(gpa)
        return gpa - r.gpa + r.uva

    def write(self, gpa, data):
        o = self.off(gpa)
        self.mm[o:o + len(data)] = data

    def read(self, gpa, n):
        o = self.off(gpa)
        return bytes(self.mm[o:o + n])

    # 16-bit ring indexes: one aligned store or load, never torn
    def ld16(self, gpa):
        return ctypes.c_uint16.from_address(self.base + self.off(gpa)).value

    def st16(self, gpa, v):
        ctypes.c_uint16.from_address(self.base + self.off(gpa)).value = v & 0xffff

    def ld32(self, gpa):
        return ctypes.c_uint32.from_address(self.base + self.off(gpa)).value


class Arena:
    """A circular area for transmit buffers and indirect tables; space is
    taken again from the start only when nothing in flight uses it."""

    def __init__(self, mem, region, size):
        self.mem = mem
        self.start = mem.alloc(size, 64, region)
        self.size = size
        self.pos = 0

    def take(self, n, align=16, busy=lambda: False):
        pos = (self.pos + align - 1) // align * align
        if pos + n > self.size:
            if busy():
                raise Fail("transmit buffers: the switch did not return the "
                           "frames in flight within the time given")
            pos = 0
        if n > self.size:
            raise MemoryError("frame larger than the transmit arena")
        self.pos = pos + n
        return self.start + pos


# --- split virtqueue --------------------------------------------------------

class Ring:
    def __init__(self, mem, index, num, region, event_idx):
        self.mem, self.index, self.num, self.event_idx = mem, index, num, event_idx
        self.desc = mem.alloc(16 * num, 16, region)
        self.avail = mem.alloc(6 + 2 * num, 2, region)
        self.used = mem.alloc(6 + 8 * num, 4, region)
        mem.write(self.desc, bytes(16 * num))
        mem.write(self.avail, bytes(6 + 2 * num))
        mem.write(self.used, bytes(6 + 8 * num))
        self.free = list(range(num))
        self.avail_idx = 0
        self.last_used = 0
        self.chains = {}                # head -> (descriptor indexes, info)

    def set_base(self, base):
        self.avail_idx = self.last_used = base & 0xffff
        self.mem.st16(self.avail + 2, base)
        self.mem.st16(self.used + 2, base)

    def put_desc(self, i, addr, length, flags, nxt=0):
        self.mem.write(self.desc + 16 * i, DESC.pack(addr, length, flags, nxt))

    def take_descs(self, n):
        if len(self.free) < n:
            raise Fail(f"queue {self.index}: {len(self.free)} free descriptors, "
                       f"{n} needed: the switch holds on to buffers")
        got, self.free = self.free[:n], self.free[n:]
        return got

    def chain(self, pieces, info=None):
        """pieces: (addr, len, flags) in order; returns the head"""
        ids = self.take_descs(len(pieces))
        for k, (addr, length, flags) in enumerate(pieces):
            last = k == len(pieces) - 1
            self.put_desc(ids[k], addr, length,
                          flags | (0 if last else D_NEXT), 0 if last else ids[k + 1])
        self.chains[ids[0]] = (ids, info)
        return ids[0]

    def publish(self, *heads):
        """Put heads in the available ring; True when the device wants a kick."""
        old = self.avail_idx
        for h in heads:
            self.mem.st16(self.avail + 4 + 2 * (self.avail_idx % self.num), h)
            self.avail_idx = (self.avail_idx + 1) & 0xffff
        self.mem.st16(self.avail + 2, self.avail_idx)
        if self.event_idx:
            return need_event(self.mem.ld16(self.used + 4 + 8 * self.num),
                              self.avail_idx, old)
        return not self.mem.ld16(self.used) & USED_F_NO_NOTIFY

    def used_idx(self):
        return self.mem.ld16(self.used + 2)

    def set_used_event(self, v):
        self.mem.st16(self.avail + 4 + 2 * self.num, v)

    def pending(self):
        return (self.used_idx() - self.last_used) & 0xffff

    def pop_used(self):
        """The next used element: (head, len, info); None when there is none."""
        n = self.pending()
        if n == 0:
            return None
        if n > self.num:
            raise Fail(f"queue {self.index}: used idx "
                       f"{self.used_idx()}", f"at most {self.num} ahead of "
                       f"{self.last_used}", n)
        e = self.used + 4 + 8 * (self.last_used % self.num)
        head, length = self.mem.ld32(e), self.mem.ld32(e + 4)
        self.last_used = (self.last_used + 1) & 0xffff
        if head not in self.chains:
            raise Fail(f"queue {self.index}: used element {head}: expected the "
                       f"head of a chain in flight ({sorted(self.chains)[:8]}...), "
                       f"got {head}")
        ids, info = self.chains.pop(head)
        self.free.extend(ids)
        return head, length, info


# --- the switch from outside: ctl, log, process -----------------------------

class Switch:
    def __init__(self, args):
        self.args = args
        self.closer_seen = False

    def ctl(self, cmd):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(WAIT)
        try:
            s.connect(self.args.ctl)
            s.sendall(f"{cmd} json\n".encode())
            buf = b""
            while True:
                d = s.recv(65536)
                if not d:
                    break
                buf += d
        finally:
            s.close()
        return json.loads(buf)

    def ports(self):
        return self.ctl("ports")["ports"]

    def vhost_ids(self):
        return {p["id"] for p in self.ports() if p["type"] == "vhost-user"}

    def fdb(self):
        return self.ctl("fdb")["fdb"]

    def new_port(self, before, who, timeout=2.0):
        """The one vhost-user port that appeared since before"""
        deadline = time.monotonic() + timeout
        while True:
            new = self.vhost_ids() - before
            if new or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        expect(len(new) == 1, f"{who}: new vhost-user ports in ctl ports",
               "exactly 1", f"{len(new)}: {self.ports()}")
        return new.pop()

    def gone(self, pid, timeout=1.0):
        deadline = time.monotonic() + timeout
        while pid in self.vhost_ids():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)
        return True

    def alive(self):
        if not self.args.pid:
            return True
        try:
            with open(f"/proc/{self.args.pid}/stat", encoding="ascii") as f:
                return f.read().rsplit(")", 1)[1].split()[0] not in "ZX"
        except OSError:
            return False

    def resources(self):
        """What a vhost-user frontend hands over, as the switch holds it:
        eventfds, pipes, memfds (and FUSE files), and memfd mappings"""
        held = {"eventfds": 0, "pipes": 0, "memfds": 0, "fuse files": 0,
                "memfd mappings": 0}
        if not self.args.pid:
            return held
        base = f"/proc/{self.args.pid}"
        for fd in os.listdir(f"{base}/fd"):
            try:
                t = os.readlink(f"{base}/fd/{fd}")
            except OSError:
                continue
            if t == "anon_inode:[eventfd]":
                held["eventfds"] += 1
            elif t.startswith("pipe:"):
                held["pipes"] += 1
            elif t.startswith("/memfd:"):
                held["memfds"] += 1
            elif "fuse-stuck" in t:
                held["fuse files"] += 1
        with open(f"{base}/maps", encoding="ascii", errors="replace") as f:
            held["memfd mappings"] = sum("/memfd:" in line for line in f)
        return held

    def released(self, before, timeout=2.0):
        """None once the switch holds no more than before; else what it holds.
        Once in the switch's life its closer thread starts (at the first
        descriptor it does not keep) with a pipe of its own: two more pipe
        ends then are that, not a frontend's."""
        deadline = time.monotonic() + timeout
        while True:
            now = self.resources()
            if all(now[k] <= before[k] for k in now):
                return None
            if (not self.closer_seen and now["pipes"] == before["pipes"] + 2 and
                    all(now[k] <= before[k] for k in now if k != "pipes")):
                self.closer_seen = True
                return None
            if time.monotonic() > deadline:
                return now
            time.sleep(0.05)

    def log_lines(self):
        if not self.args.log:
            return []
        with open(self.args.log, "rb") as f:
            return f.read().decode(errors="replace").splitlines()


# --- frames -----------------------------------------------------------------

def mac(case, n):
    return bytes([0x02, 0x76, 0x68, case, 0x00, n])


BCAST, ETH_TEST, eth = w.BCAST, w.ETH_P_TEST, w.eth


def pattern(seed, n):
    return random.Random(seed).randbytes(n)


csum_add, csum_fold, ip_csum = w.csum_add, w.csum_fold, w.csum
TCP_FIN, TCP_PSH, TCP_ACK, TCP_CWR = w.TCP_FIN, w.TCP_PSH, w.TCP_ACK, w.TCP_CWR
IP_A, IP_B = bytes([198, 18, 34, 1]), bytes([198, 18, 34, 2])


class Tcp4:
    """A TCP/IPv4 frame, whole (a super-frame) or as segments."""

    def __init__(self, dst, src, payload, seq=0x10000000, ipid=0x1234,
                 flags=TCP_ACK | TCP_PSH, saddr=IP_A, daddr=IP_B, partial=True):
        self.dst, self.src, self.payload, self.seq = dst, src, payload, seq
        self.ipid, self.flags, self.saddr, self.daddr = ipid, flags, saddr, daddr
        self.ack, self.sport, self.dport, self.win = 0x20000000, 40000, 5201, 502
        tcplen = 20 + len(payload)
        ip = w.ip4(saddr, daddr, w.IPPROTO_TCP, tcplen, ident=ipid)
        hdr = (self.sport, self.dport, seq, self.ack, flags, self.win)
        pseudo = w.pseudo4(saddr, daddr, w.IPPROTO_TCP, tcplen)
        if partial:
            # what a guest leaves for the device: the pseudo-header sum only
            check = csum_fold(pseudo)
        else:
            check = w.l4_csum(pseudo, w.tcp(*hdr) + payload)
        self.frame = eth(dst, src, w.ETH_P_IP, ip + w.tcp(*hdr, check) + payload)

    def full_frame(self):
        return Tcp4(self.dst, self.src, self.payload, self.seq, self.ipid,
                    self.flags, self.saddr, self.daddr, partial=False).frame

    def gso_fields(self, mss):
        return (NEEDS_CSUM, GSO_TCPV4, 54, mss, 34, 16)

    def check_segments(self, who, frames, mss):
        n = -(-len(self.payload) // mss)
        expect_eq(f"{who}: segments of a {len(self.payload)}-byte TCP payload "
                  f"at gso_size {mss}", n, len(frames))
        for i, f in enumerate(frames):
            what = f"{who}: segment {i + 1} of {n}"
            part = self.payload[i * mss:(i + 1) * mss]
            expect_eq(f"{what}: length", 54 + len(part), len(f))
            expect_bytes(f"{what}: Ethernet header", self.frame[:14], f[:14])
            ip, tcp = f[14:34], f[34:54]
            ver, _, tot, ipid, frag, ttl, proto, _, sa, da = w.IP4_HDR.unpack(ip)
            expect_eq(f"{what}: IPv4 version/ihl, tot_len, id, frag, ttl, proto, addrs",
                      (0x45, 40 + len(part), (self.ipid + i) & 0xffff, 0x4000, 64, 6,
                       self.saddr, self.daddr),
                      (ver, tot, ipid, frag, ttl, proto, sa, da))
            expect_eq(f"{what}: IPv4 header checksum verifies to", 0, ip_csum(ip))
            sport, dport, seq, ack, off, flags, win, _, urg = w.TCP_HDR.unpack(tcp)
            want = self.flags
            if i < n - 1:
                want &= ~(TCP_FIN | TCP_PSH)
            if i > 0:
                want &= ~TCP_CWR
            expect_eq(f"{what}: TCP ports, seq, ack, offset, flags, window, urg",
                      (self.sport, self.dport, (self.seq + i * mss) & 0xffffffff,
                       self.ack, 5 << 4, want, self.win, 0),
                      (sport, dport, seq, ack, off, flags, win, urg))
            s = csum_fold(w.pseudo4(self.saddr, self.daddr, w.IPPROTO_TCP,
                                    20 + len(part)) + csum_add(tcp + part))
            expect_eq(f"{what}: TCP checksum (sum over pseudo-header and "
                      f"segment)", 0xffff, s)
            expect_bytes(f"{what}: payload", part, f[54:])
