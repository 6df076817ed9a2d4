#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A vhost-user-net front-end, to test vecswitch's --vhost-user ports.

    vhost_frontend.py --sock VHOST_SOCK --ctl CTL_SOCK --dgram DGRAM_SOCK \
        --tmp DIR [--log SWITCH_LOG] [--pid SWITCH_PID] CASE...

It speaks the protocol of QEMU's docs/interop/vhost-user.rst as a guest's
front-end would: guest memory in a memfd (two regions, at guest and user
addresses unlike each other and unlike the file offsets), split virtqueues
(virtio 1.x) for queue 0 (receive) and queue 1 (transmit), eventfds or
pipes for kick and call.  Every message that has no reply of its own is
sent with need_reply once REPLY_ACK is agreed, and its ack must be 0.

Cases (each ends "PASS: case" or "FAIL: case: what, expected, got";
the exit status is 1 when one failed):

  pair       A broadcasts, B and C get it whole (C: legacy 10-byte header,
             pipes, chained buffers), B answers A by unicast, which A
             alone gets; ctl fdb shows A and B on their ports
  tso        a 64 KiB TCP super-frame from A reaches B (GUEST_TSO4) whole
             with its header, over mergeable 4 KiB buffers, and a plain
             --dgram peer cut into segments with valid checksums
  tso_seg    B without GUEST_TSO4/GUEST_CSUM gets it as checksummed
             segments, and a frame whose checksum is pending finished
  rings      chained, indirect and header-splitting TX chains, chained
             RX buffers, EVENT_IDX on both sides, disabled rings
  chains     long chains the spec allows: 80 TX descriptors, a super-frame
             over 85 small mergeable buffers
  reconnect  GET_VRING_BASE after traffic, a stopped ring stays stopped,
             a frontend that goes is removed within a second, one that
             comes back at once (ring bases near the 16-bit wrap) works
  rewrite    A sends frames to B whose destination a thread of A keeps
             rewriting to C's address and back in guest memory while the
             switch reads them: B and C each get only frames addressed to
             them (the switch never reads again what it decided on)
  hostile    bad descriptors, rings, memory tables, messages, file
             descriptors and a memfd shrunk under the switch: each ends
             the hostile connection (or is answered with an error), is
             logged, and leaves a well-behaved pair working

After each case, once its front-ends are gone, the switch (--pid) must
hold no more eventfds, pipes, memfds, FUSE files or memfd mappings than
before it.  Every wait is bounded (a few seconds at most).  Python 3.9 or
later.
"""

import argparse
import ctypes
import json
import mmap
import os
import random
import re
import select
import signal
import socket
import struct
import sys
import threading
import time
import traceback

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

# virtio-net header
VNET = struct.Struct("<BBHHHH")         # flags, gso_type, hdr_len, gso_size, csum_start, csum_offset
NEEDS_CSUM = 1
GSO_NONE, GSO_TCPV4 = 0, 1

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

    def pack(self):
        return REGION.pack(self.gpa, self.size, self.uva, self.offset)


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


# --- the front-end ----------------------------------------------------------

STD_FEATURES = bit(F_CSUM, F_GUEST_CSUM, F_GUEST_TSO4, F_GUEST_TSO6, F_HOST_TSO4,
                   F_HOST_TSO6, F_MRG_RXBUF, F_RING_INDIRECT_DESC,
                   F_RING_EVENT_IDX, F_PROTOCOL_FEATURES, F_VERSION_1)
PLAIN_FEATURES = bit(F_MRG_RXBUF, F_PROTOCOL_FEATURES, F_VERSION_1)


class Frontend:
    """One guest's virtio-net device, its rings in shared memory."""

    def __init__(self, path, name, mac, features=STD_FEATURES, qsize=256,
                 layout=STD_LAYOUT, pipes=False, rx_bufs=64, rx_size=4096,
                 rx_split=None, base=0):
        self.path, self.name, self.mac = path, name, mac
        self.want = features
        self.qsize, self.layout, self.pipes = qsize, layout, pipes
        self.rx_bufs, self.rx_size, self.rx_split, self.base = rx_bufs, rx_size, rx_split, base
        self.ack = False
        self.features = 0
        self.mem = None
        self.rings = {}
        self.kick_fd, self.call_fd = {}, {}     # our ends
        self.their = []                         # the ends we passed (closed after)
        self.signalled_upto = base & 0xffff
        self.conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.conn.settimeout(WAIT)
        self.conn.connect(path)

    # messages

    def send(self, req, payload=b"", fds=(), need_reply=False, flags=None, size=None):
        if flags is None:
            flags = VERSION | (NEED_REPLY if need_reply else 0)
        data = HDR.pack(req, flags, len(payload) if size is None else size) + payload
        try:
            if fds:
                n = socket.send_fds(self.conn, [data], list(fds))
                if n < len(data):
                    self.conn.sendall(data[n:])
            else:
                self.conn.sendall(data)
        except (BrokenPipeError, ConnectionResetError) as e:
            raise Closed(f"{REQ_NAME.get(req, req)}: {e}") from None

    def recv_exact(self, n, what, timeout=WAIT):
        buf = b""
        deadline = time.monotonic() + timeout
        while len(buf) < n:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.conn], [], [], left)[0]:
                raise Fail(f"{what}: expected a reply within {timeout} s, got "
                           f"{len(buf)} of {n} bytes")
            try:
                d = self.conn.recv(n - len(buf))
            except ConnectionResetError:
                d = b""
            if not d:
                raise Closed(f"{what}: connection closed")
            buf += d
        return buf

    def reply(self, req, timeout=WAIT):
        name = REQ_NAME.get(req, str(req))
        r, flags, size = HDR.unpack(self.recv_exact(12, f"{name} reply", timeout))
        expect_eq(f"{name} reply: request", req, r)
        expect_eq(f"{name} reply: flags", VERSION | REPLY, flags)
        expect(size <= 4096, f"{name} reply: size", "<= 4096", size)
        return self.recv_exact(size, f"{name} reply payload", timeout)

    def get(self, req, payload=b"", size=8):
        """A request with a reply of its own."""
        self.send(req, payload)
        p = self.reply(req)
        expect_eq(f"{REQ_NAME[req]} reply size", size, len(p))
        return p

    def get_u64(self, req):
        return struct.unpack("<Q", self.get(req))[0]

    def command(self, req, payload=b"", fds=()):
        """A message without a reply of its own: acked when REPLY_ACK is on."""
        self.send(req, payload, fds, need_reply=self.ack)
        if self.ack:
            p = self.reply(req)
            expect_eq(f"{REQ_NAME.get(req, req)} ack size", 8, len(p))
            expect_eq(f"{REQ_NAME.get(req, req)} ack", 0, struct.unpack("<Q", p)[0])

    def attempt(self, req, payload=b"", fds=(), flags=None, size=None):
        """A hostile message: 'closed', or the ack's value (None: no answer)"""
        try:
            self.send(req, payload, fds, need_reply=True, flags=flags, size=size)
            p = self.reply(req, timeout=2)
        except Closed:
            return "closed"
        except Fail:
            return self.closed_within(0.5) and "closed" or None
        return struct.unpack("<Q", p)[0] if len(p) == 8 else f"a {len(p)}-byte reply"

    def closed_within(self, timeout):
        """Wait for the switch to close the connection; what it sends first
        (acks) is read and dropped."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.conn], [], [], left)[0]:
                return False
            try:
                if not self.conn.recv(65536):
                    return True
            except ConnectionResetError:
                return True
            except OSError:
                return True

    # negotiation

    def hello(self, features=None):
        self.command(SET_OWNER)
        offered = self.get_u64(GET_FEATURES)
        missing = bit(*OFFERED) & ~offered
        expect(not missing, "GET_FEATURES", f"at least {bit_names(bit(*OFFERED))}",
               f"{offered:#x}, without {bit_names(missing)}")
        self.offered = offered
        pf = self.get_u64(GET_PROTOCOL_FEATURES)
        expect(pf & bit(PF_REPLY_ACK, PF_CONFIG) == bit(PF_REPLY_ACK, PF_CONFIG),
               "GET_PROTOCOL_FEATURES", "REPLY_ACK(3) and CONFIG(9)", f"{pf:#x}")
        self.pf = pf
        self.command(SET_PROTOCOL_FEATURES,
                     struct.pack("<Q", pf & bit(PF_REPLY_ACK, PF_CONFIG, PF_MQ)))
        self.ack = True
        if pf & bit(PF_MQ):
            n = self.get_u64(GET_QUEUE_NUM)
            expect(n >= 1, "GET_QUEUE_NUM", ">= 1", n)
        self.features = (self.want if features is None else features) & offered
        self.command(SET_FEATURES, struct.pack("<Q", self.features))

    def has(self, f):
        return bool(self.features >> f & 1)

    @property
    def hdr_len(self):
        return 12 if self.has(F_MRG_RXBUF) or self.has(F_VERSION_1) else 10

    def mem_table(self):
        p = struct.pack("<II", len(self.mem.regions), 0)
        return p + b"".join(r.pack() for r in self.mem.regions)

    def set_mem(self):
        self.mem = Memory(self.layout)
        self.command(SET_MEM_TABLE, self.mem_table(), [self.mem.fd] * len(self.mem.regions))

    def notifier(self):
        """(our end, the end the switch gets) for kick or call"""
        if self.pipes:
            r, w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
            return r, w
        fd = eventfd()
        return fd, fd

    def setup_ring(self, q, region=1):
        ring = self.rings[q] = Ring(self.mem, q, self.qsize, region,
                                    self.has(F_RING_EVENT_IDX))
        ring.set_base(self.base)
        self.command(SET_VRING_NUM, VRING_STATE.pack(q, self.qsize))
        self.command(SET_VRING_BASE, VRING_STATE.pack(q, self.base))
        self.command(SET_VRING_ADDR, VRING_ADDR.pack(
            q, 0, self.mem.uva(ring.desc), self.mem.uva(ring.used),
            self.mem.uva(ring.avail), 0))
        ours, theirs = self.notifier()
        self.call_fd[q] = ours
        self.command(SET_VRING_CALL, struct.pack("<Q", q), [theirs])
        if theirs != ours:
            os.close(theirs)
        if self.pipes:
            r, w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
            self.kick_fd[q] = w
            self.command(SET_VRING_KICK, struct.pack("<Q", q), [r])
            os.close(r)
        else:
            fd = eventfd()
            self.kick_fd[q] = fd
            self.command(SET_VRING_KICK, struct.pack("<Q", q), [fd])
        self.command(SET_VRING_ENABLE, VRING_STATE.pack(q, 1))

    def start(self, features=None):
        self.hello(features)
        self.set_mem()
        self.setup_ring(RXQ)
        self.setup_ring(TXQ)
        self.tx_arena = Arena(self.mem, 1, 1 << 20)
        self.tx_arena0 = Arena(self.mem, 0, 256 << 10)
        self.post_rx(self.rx_bufs)
        return self

    def kick(self, q):
        os.write(self.kick_fd[q], struct.pack("<Q", 1))

    def close(self):
        try:
            self.conn.close()
        except OSError:
            pass
        for fd in list(self.kick_fd.values()) + list(self.call_fd.values()):
            try:
                os.close(fd)
            except OSError:
                pass
        self.kick_fd, self.call_fd = {}, {}
        if self.mem:
            self.mem.close()

    # receive

    def post_rx(self, n):
        ring = self.rings[RXQ]
        heads = []
        for _ in range(n):
            slot = self.mem.alloc(self.rx_size, 64, 0)
            heads.append(self.post_slot(slot))
        if ring.publish(*heads):
            self.kick(RXQ)

    def post_slot(self, slot):
        ring = self.rings[RXQ]
        split = self.rx_split
        if self.hdr_len == 10 and not self.has(F_VERSION_1):
            split = 10              # legacy: the header in a descriptor of its own
        if split:
            pieces = [(slot, split, D_WRITE), (slot + split, self.rx_size - split, D_WRITE)]
        else:
            pieces = [(slot, self.rx_size, D_WRITE)]
        return ring.chain(pieces, slot)

    def drain_call(self, q):
        n = 0
        while True:
            try:
                d = os.read(self.call_fd[q], 4096)
            except BlockingIOError:
                return n
            if not d:
                return n
            n += 1

    def wait_call(self, q, timeout):
        if timeout > 0:
            select.select([self.call_fd[q]], [], [], timeout)
        n = self.drain_call(q)
        if n and q == RXQ:
            # the switch writes the used idx before it signals
            self.signalled_upto = self.rings[RXQ].used_idx()
        return n

    def covered(self):
        """Every used receive buffer read so far was signalled."""
        d = (self.rings[RXQ].last_used - self.signalled_upto) & 0xffff
        return d == 0 or d >= 0x8000

    def rx_one_buffer(self):
        ring = self.rings[RXQ]
        e = ring.pop_used()
        if e is None:
            return None
        head, length, slot = e
        expect(length <= self.rx_size, f"{self.name}: used length of receive buffer "
               f"{head}", f"<= its size {self.rx_size}", length)
        data = self.mem.read(slot, length)
        # the slot goes back to the ring at once
        if ring.publish(self.post_slot(slot)):
            self.kick(RXQ)
        return data

    def rx_frames(self, count, timeout=WAIT):
        """count frames: (header fields, frame, buffers used).  With the
        ring found empty (and, with EVENT_IDX, used_event set to the next
        entry first), only a call notification wakes the wait: a frame the
        switch puts in the used ring without one is a failure."""
        ring = self.rings[RXQ]
        out = []
        deadline = time.monotonic() + timeout
        while len(out) < count:
            if ring.event_idx:
                ring.set_used_event(ring.last_used)
            first = self.rx_one_buffer()
            if first is not None:
                out.append(self.parse_rx(first, deadline))
                continue
            left = deadline - time.monotonic()
            if left <= 0 or self.wait_call(RXQ, left) == 0:
                if ring.pending():
                    raise Fail(f"{self.name}: a call notification for "
                               f"{ring.pending()} frame(s) in the used ring: "
                               f"expected within {timeout} s, got none")
                break
        if len(out) < count:
            raise Fail(f"{self.name}: frames received within {timeout} s: expected "
                       f"{count}, got {len(out)}")
        if not ring.event_idx and not self.covered():
            # interrupts never suppressed: each used entry must be signalled
            # (the signal may trail the used idx a little)
            t = time.monotonic() + 1.0
            while not self.covered() and time.monotonic() < t:
                self.wait_call(RXQ, t - time.monotonic())
            expect(self.covered(), f"{self.name}: call notification for used "
                   f"receive buffers up to idx {ring.last_used}", "within 1 s",
                   f"none after idx {self.signalled_upto}")
        return out

    def parse_rx(self, first, deadline):
        hl = self.hdr_len
        expect(len(first) >= hl, f"{self.name}: first buffer of a frame: length",
               f">= the {hl}-byte header", len(first))
        fields = VNET.unpack_from(first)
        nbuf = struct.unpack_from("<H", first, 10)[0] if hl == 12 else 1
        data = [first[hl:]]
        if self.has(F_MRG_RXBUF):
            expect(nbuf >= 1, f"{self.name}: num_buffers", ">= 1", nbuf)
            for k in range(1, nbuf):
                while True:
                    b = self.rx_one_buffer()
                    if b is not None:
                        break
                    if time.monotonic() > deadline:
                        raise Fail(f"{self.name}: buffers of a merged frame: expected "
                                   f"{nbuf} (num_buffers), got {k}")
                    self.wait_call(RXQ, 0.05)
                data.append(b)
        elif hl == 12:
            expect_eq(f"{self.name}: num_buffers without MRG_RXBUF", 1, nbuf)
        return fields, b"".join(data), nbuf

    def no_rx(self, wait=0.3):
        """Nothing (more) arrives within wait seconds."""
        time.sleep(wait)
        b = self.rx_one_buffer()
        if b is not None:
            f = self.parse_rx(b, time.monotonic() + 1)
            raise Fail(f"{self.name}: unexpected frame: expected none, got "
                       f"{len(f[1])} bytes {f[1][:14].hex()}...")

    def drain_rx(self):
        """Frames waiting now, read and returned (strays of a hostile case)."""
        out = []
        while True:
            b = self.rx_one_buffer()
            if b is None:
                return out
            out.append(self.parse_rx(b, time.monotonic() + 1))

    # transmit

    def vnet_hdr(self, fields=(0, 0, 0, 0, 0, 0)):
        h = VNET.pack(*fields)
        return h + b"\0\0" if self.hdr_len == 12 else h

    def tx_busy(self):
        self.reclaim_tx()
        return bool(self.rings[TXQ].chains)

    def tx_space(self, n):
        deadline = time.monotonic() + WAIT
        while True:
            try:
                return self.tx_arena.take(n, 16, self.tx_busy)
            except Fail:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.01)

    def reclaim_tx(self):
        ring = self.rings[TXQ]
        n = 0
        while ring.pop_used() is not None:
            n += 1
        return n

    def tx_heads(self, frame, fields=(0, 0, 0, 0, 0, 0), mode="direct"):
        """Lay out one frame in descriptors; returns its head (not published).
        mode: direct (one descriptor), chain (header apart, frame in up to 3
        pieces over both regions), split (the header itself cut across
        descriptors), indirect (a table as chain), indirect1 (a table of one)"""
        ring = self.rings[TXQ]
        data = self.vnet_hdr(fields) + frame
        hl = self.hdr_len
        if mode == "direct":
            a = self.tx_space(len(data))
            self.mem.write(a, data)
            return ring.chain([(a, len(data), 0)], "tx")
        if mode in ("chain", "indirect", "split"):
            cuts = [0, 5, hl + 40] if mode == "split" else [0, hl]
            rest = len(data) - cuts[-1]
            if rest > 2:
                cuts += [cuts[-1] + rest // 3, cuts[-1] + 2 * rest // 3]
            cuts.append(len(data))
            pieces = []
            for k in range(len(cuts) - 1):
                part = data[cuts[k]:cuts[k + 1]]
                if not part:
                    continue
                # alternate the regions: the frame crosses from one to the other
                a = self.tx_space(len(part)) if k % 2 else self.tx_space_r0(len(part))
                self.mem.write(a, part)
                pieces.append((a, len(part), 0))
            if mode != "indirect":
                return ring.chain(pieces, "tx")
            table = b""
            for k, (a, n, f) in enumerate(pieces):
                last = k == len(pieces) - 1
                table += DESC.pack(a, n, f | (0 if last else D_NEXT), 0 if last else k + 1)
            t = self.tx_space(len(table))
            self.mem.write(t, table)
            return ring.chain([(t, len(table), D_INDIRECT)], "tx")
        if mode == "indirect1":
            a = self.tx_space(len(data))
            self.mem.write(a, data)
            t = self.tx_space(16)
            self.mem.write(t, DESC.pack(a, len(data), 0, 0))
            return ring.chain([(t, 16, D_INDIRECT)], "tx")
        raise ValueError(mode)

    def tx_space_r0(self, n):
        # a small second arena in region 0, for pieces of chains
        deadline = time.monotonic() + WAIT
        while True:
            try:
                return self.tx_arena0.take(n, 16, self.tx_busy)
            except Fail:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.01)

    def tx(self, frame, fields=(0, 0, 0, 0, 0, 0), mode="direct"):
        self.tx_many([(frame, fields, mode)])

    def tx_many(self, items):
        """Publish several frames at once, then kick if the switch wants it."""
        self.reclaim_tx()
        heads = [self.tx_heads(*it) for it in items]
        if self.rings[TXQ].publish(*heads):
            self.kick(TXQ)

    def tx_done(self, timeout=WAIT):
        """Every frame published has been used within timeout."""
        ring = self.rings[TXQ]
        deadline = time.monotonic() + timeout
        while True:
            self.reclaim_tx()
            if not ring.chains:
                return
            if time.monotonic() > deadline:
                raise Fail(f"{self.name}: transmitted frames used by the switch within "
                           f"{timeout} s: expected all, {len(ring.chains)} still "
                           f"in flight (avail idx {ring.avail_idx}, used idx "
                           f"{ring.used_idx()})")
            self.wait_call(TXQ, 0.02)


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


BCAST = w.BCAST
ETH_TEST = 0x88b5       # local experimental EtherType


def eth(dst, src, payload, etype=ETH_TEST):
    return w.eth(dst, src, etype, payload)


def pattern(seed, n):
    return random.Random(seed).randbytes(n)


csum_add, csum_fold, ip_csum = w.csum_add, w.csum_fold, w.csum


def pseudo4(saddr, daddr, length):
    """a TCP segment's pseudo-header sum"""
    return w.pseudo4(saddr, daddr, 6, length)


TCP_FIN, TCP_PSH, TCP_ACK, TCP_CWR = 0x01, 0x08, 0x10, 0x80
IP_A, IP_B = bytes([198, 18, 34, 1]), bytes([198, 18, 34, 2])


class Tcp4:
    """A TCP/IPv4 frame, whole (a super-frame) or as segments."""

    def __init__(self, dst, src, payload, seq=0x10000000, ipid=0x1234,
                 flags=TCP_ACK | TCP_PSH, saddr=IP_A, daddr=IP_B, partial=True):
        self.dst, self.src, self.payload, self.seq = dst, src, payload, seq
        self.ipid, self.flags, self.saddr, self.daddr = ipid, flags, saddr, daddr
        self.ack, self.sport, self.dport, self.win = 0x20000000, 40000, 5201, 502
        tcplen = 20 + len(payload)
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + tcplen, ipid, 0x4000, 64, 6,
                         0, saddr, daddr)
        ip = ip[:10] + struct.pack("!H", ip_csum(ip)) + ip[12:]
        tcp = struct.pack("!HHIIBBHHH", self.sport, self.dport, seq, self.ack,
                          5 << 4, flags, self.win, 0, 0)
        if partial:
            # what a guest leaves for the device: the pseudo-header sum only
            check = csum_fold(pseudo4(saddr, daddr, tcplen))
        else:
            check = ~csum_fold(pseudo4(saddr, daddr, tcplen) + csum_add(tcp + payload)) & 0xffff
        tcp = tcp[:16] + struct.pack("!H", check) + tcp[18:]
        self.frame = eth(dst, src, ip + tcp + payload, 0x0800)

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
            ver, _, tot, ipid, frag, ttl, proto, _, sa, da = \
                struct.unpack("!BBHHHBBH4s4s", ip)
            expect_eq(f"{what}: IPv4 version/ihl, tot_len, id, frag, ttl, proto, addrs",
                      (0x45, 40 + len(part), (self.ipid + i) & 0xffff, 0x4000, 64, 6,
                       self.saddr, self.daddr),
                      (ver, tot, ipid, frag, ttl, proto, sa, da))
            expect_eq(f"{what}: IPv4 header checksum verifies to", 0, ip_csum(ip))
            sport, dport, seq, ack, off, flags, win, _, urg = \
                struct.unpack("!HHIIBBHHH", tcp)
            want = self.flags
            if i < n - 1:
                want &= ~(TCP_FIN | TCP_PSH)
            if i > 0:
                want &= ~TCP_CWR
            expect_eq(f"{what}: TCP ports, seq, ack, offset, flags, window, urg",
                      (self.sport, self.dport, (self.seq + i * mss) & 0xffffffff,
                       self.ack, 5 << 4, want, self.win, 0),
                      (sport, dport, seq, ack, off, flags, win, urg))
            s = csum_fold(pseudo4(self.saddr, self.daddr, 20 + len(part)) +
                          csum_add(tcp + part))
            expect_eq(f"{what}: TCP checksum (sum over pseudo-header and "
                      f"segment)", 0xffff, s)
            expect_bytes(f"{what}: payload", part, f[54:])


# --- the cases --------------------------------------------------------------

def connect(sw, name, mac_, **kw):
    before = sw.vhost_ids()
    fe = Frontend(sw.args.sock, name, mac_, **kw)
    try:
        fe.start()
    except BaseException:
        fe.close()
        raise
    fe.port = sw.new_port(before, name)
    return fe


def exchange(a, b, tag, seed):
    """a -> b and b -> a, one unicast frame each, exact"""
    f1 = eth(b.mac, a.mac, pattern(seed, 300) + tag)
    a.tx(f1)
    got = b.rx_frames(1)
    expect_bytes(f"{tag.decode()}: {a.name} -> {b.name}", f1, got[0][1])
    f2 = eth(a.mac, b.mac, pattern(seed + 1, 200) + tag)
    b.tx(f2)
    got = a.rx_frames(1)
    expect_bytes(f"{tag.decode()}: {b.name} -> {a.name}", f2, got[0][1])


def zero_hdr(who, fields):
    expect_eq(f"{who}: virtio-net header (flags, gso_type, hdr_len, gso_size, "
              f"csum_start, csum_offset)", (0, 0, 0, 0, 0, 0), fields)


def case_pair(sw):
    a = connect(sw, "A", mac(1, 1))
    b = connect(sw, "B", mac(1, 2))
    # C: a legacy device (no VERSION_1, no MRG_RXBUF: 10-byte header, header
    # in a descriptor of its own), pipes for kick and call
    c = connect(sw, "C", mac(1, 3), features=bit(F_PROTOCOL_FEATURES), pipes=True)
    try:
        expect_eq("C: negotiated features", bit(F_PROTOCOL_FEATURES), c.features)
        cfg = a.get(GET_CONFIG, struct.pack("<III", 0, 12, 0) + bytes(12), size=24)
        expect_eq("GET_CONFIG reply: offset, size, flags", (0, 12, 0),
                  struct.unpack_from("<III", cfg))
        types = {p["id"]: p["type"] for p in sw.ports()}
        expect_eq("ctl ports: types of A, B, C",
                  ["vhost-user"] * 3, [types.get(x.port) for x in (a, b, c)])

        bc = eth(BCAST, a.mac, pattern(11, 200))
        a.tx(bc)
        a.tx_done()
        for x in (b, c):
            (fields, frame, nbuf), = x.rx_frames(1)
            zero_hdr(f"{x.name}: broadcast from A", fields)
            expect_eq(f"{x.name}: broadcast from A: num_buffers", 1, nbuf)
            expect_bytes(f"{x.name}: broadcast from A", bc, frame)
        a.no_rx(0)
        uc = eth(a.mac, b.mac, pattern(12, 1000))
        b.tx(uc, mode="chain")
        (fields, frame, nbuf), = a.rx_frames(1)
        zero_hdr("A: unicast from B", fields)
        expect_bytes("A: unicast from B", uc, frame)
        c.no_rx(0.3)
        b.no_rx(0)
        a.no_rx(0)

        fdb = {(e["mac"].lower(), e["vlan"]): e["port"] for e in sw.fdb()}
        for x in (a, b):
            m = ":".join(f"{v:02x}" for v in x.mac)
            expect_eq(f"ctl fdb: port of {x.name}'s {m}", x.port, fdb.get((m, 0)))
        m = ":".join(f"{v:02x}" for v in c.mac)
        expect_eq(f"ctl fdb: an entry for C ({m}), which sent nothing", None,
                  fdb.get((m, 0)))
        # C answers, legacy chains on its side too
        back = eth(a.mac, c.mac, pattern(13, 100))
        c.tx(back, mode="chain")
        (fields, frame, _), = a.rx_frames(1)
        expect_bytes("A: unicast from C (legacy header)", back, frame)
        b.no_rx(0.2)
        # the port counters count what crossed
        st = {p["id"]: p for p in sw.ctl("stats")["ports"]}
        for x, rx, tx in ((a, (1, len(bc)), (2, len(uc) + len(back))),
                          (b, (1, len(uc)), (1, len(bc))),
                          (c, (1, len(back)), (1, len(bc)))):
            p = st.get(x.port, {})
            expect_eq(f"ctl stats of {x.name}'s port {x.port}: rx_frames, rx_bytes, "
                      f"tx_frames, tx_bytes", rx + tx,
                      tuple(p.get(k) for k in ("rx_frames", "rx_bytes", "tx_frames",
                                               "tx_bytes")))
            # one receive buffer a frame here; messages are the set-up's
            expect_eq(f"ctl stats of {x.name}'s port: vhost_rx_bufs", tx[0],
                      p.get("vhost_rx_bufs"))
            expect(p.get("vhost_msgs", 0) >= 8, f"ctl stats of {x.name}'s port: vhost_msgs",
                   ">= 8 (the set-up's messages)", p.get("vhost_msgs"))
    finally:
        for x in (a, b, c):
            x.close()


class DgramPeer:
    """A plain --dgram port: raw frames, no negotiation."""

    def __init__(self, sw, name, mac_):
        self.name, self.mac = name, mac_
        self.path = os.path.join(sw.args.tmp, f"{name}.sock")
        if os.path.exists(self.path):
            os.unlink(self.path)
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.s.bind(self.path)
        self.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        self.to = sw.args.dgram

    def send(self, frame):
        self.s.sendto(frame, self.to)

    def recv(self, count, timeout=WAIT):
        out = []
        deadline = time.monotonic() + timeout
        while len(out) < count:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.s], [], [], left)[0]:
                raise Fail(f"{self.name}: frames received within {timeout} s: "
                           f"expected {count}, got {len(out)}")
            out.append(self.s.recv(65536))
        return out

    def nothing(self, wait=0.3):
        if select.select([self.s], [], [], wait)[0]:
            d = self.s.recv(65536)
            raise Fail(f"{self.name}: unexpected frame: expected none, got "
                       f"{len(d)} bytes {d[:14].hex()}...")

    def close(self):
        self.s.close()
        try:
            os.unlink(self.path)
        except OSError:
            pass


MSS = 1448
SUPER = 65000           # TCP payload: 44 full segments and one of 1288 bytes


def announce(x, others, tag):
    """x broadcasts one frame so that the switch learns it; others get it"""
    f = eth(BCAST, x.mac, pattern(sum(tag), 64) + tag)
    x.tx(f) if isinstance(x, Frontend) else x.send(f)
    for o in others:
        if isinstance(o, Frontend):
            (fields, frame, nbuf), = o.rx_frames(1)
            zero_hdr(f"{o.name}: {x.name}'s broadcast", fields)
            expect_eq(f"{o.name}: {x.name}'s broadcast: num_buffers", 1, nbuf)
        else:
            frame, = o.recv(1)
        expect_bytes(f"{o.name}: {x.name}'s broadcast", f, frame)


def case_tso(sw):
    a = connect(sw, "A", mac(2, 1))
    b = connect(sw, "B", mac(2, 2))
    d = DgramPeer(sw, "vhost-d2", mac(2, 4))
    try:
        expect(b.has(F_GUEST_TSO4) and b.has(F_GUEST_CSUM) and b.has(F_MRG_RXBUF),
               "B: negotiated", "GUEST_TSO4, GUEST_CSUM, MRG_RXBUF", bit_names(b.features))
        announce(d, [a, b], b"d")
        announce(a, [b, d], b"a")
        announce(b, [a, d], b"b")

        t = Tcp4(b.mac, a.mac, pattern(21, SUPER))
        a.tx(t.frame, t.gso_fields(MSS), mode="direct")
        (fields, frame, nbuf), = b.rx_frames(1)
        expect_eq("B: header of the super-frame", t.gso_fields(MSS), fields)
        expect_bytes("B: the super-frame", t.frame, frame)
        want = -(-(12 + len(t.frame)) // b.rx_size)
        expect_eq(f"B: num_buffers for {12 + len(t.frame)} bytes in "
                  f"{b.rx_size}-byte buffers", want, nbuf)
        d.nothing(0.2)

        t2 = Tcp4(d.mac, a.mac, pattern(22, SUPER), seq=0xfffff000, ipid=0xfff0)
        a.tx(t2.frame, t2.gso_fields(MSS), mode="chain")
        t2.check_segments("plain dgram peer", d.recv(-(-SUPER // MSS)), MSS)
        d.nothing(0.3)
        b.no_rx(0)
        a.no_rx(0)
    finally:
        for x in (a, b, d):
            x.close()


def case_tso_seg(sw):
    a = connect(sw, "A", mac(3, 1))
    b = connect(sw, "B", mac(3, 2), features=PLAIN_FEATURES, rx_bufs=128)
    try:
        expect_eq("B: negotiated", bit_names(PLAIN_FEATURES), bit_names(b.features))
        announce(a, [b], b"a")
        announce(b, [a], b"b")
        t = Tcp4(b.mac, a.mac, pattern(31, SUPER), seq=0x7ffffc00)
        a.tx(t.frame, t.gso_fields(MSS), mode="indirect")
        got = b.rx_frames(-(-SUPER // MSS))
        for i, (fields, _, nbuf) in enumerate(got):
            zero_hdr(f"B: segment {i + 1}", fields)
            expect_eq(f"B: segment {i + 1}: num_buffers", 1, nbuf)
        t.check_segments("B (no GUEST_TSO4/GUEST_CSUM)", [g[1] for g in got], MSS)
        b.no_rx(0.3)
        # a plain frame whose TCP checksum A left to the device
        small = Tcp4(b.mac, a.mac, pattern(32, 700), seq=5, ipid=7)
        a.tx(small.frame, (NEEDS_CSUM, GSO_NONE, 0, 0, 34, 16))
        (fields, frame, _), = b.rx_frames(1)
        zero_hdr("B: frame whose checksum was pending", fields)
        expect_bytes("B: frame whose checksum was pending (finished by the switch)",
                     small.full_frame(), frame)
    finally:
        a.close()
        b.close()


def case_rings(sw):
    a = connect(sw, "A", mac(4, 1))
    b = connect(sw, "B", mac(4, 2), rx_split=1000)
    try:
        for x in (a, b):
            expect(x.has(F_RING_EVENT_IDX) and x.has(F_RING_INDIRECT_DESC),
                   f"{x.name}: negotiated", "RING_EVENT_IDX and RING_INDIRECT_DESC",
                   bit_names(x.features))
        announce(a, [b], b"a")
        announce(b, [a], b"b")
        modes = ["direct", "chain", "split", "indirect", "indirect1"]
        # one at a time, each mode
        for k, m in enumerate(modes):
            f = eth(b.mac, a.mac, pattern(40 + k, 60 + 331 * k))
            a.tx(f, mode=m)
            (fields, frame, nbuf), = b.rx_frames(1)
            zero_hdr(f"B: frame sent {m}", fields)
            expect_eq(f"B: frame sent {m}: num_buffers", 1, nbuf)
            expect_bytes(f"B: frame sent {m}", f, frame)
        # batches published together, kicks only where avail_event asks
        for rnd in range(3):
            batch = [(eth(b.mac, a.mac, pattern(100 * rnd + k, 64 + 97 * k)), (0,) * 6,
                      modes[k % len(modes)]) for k in range(24)]
            a.tx_many(batch)
            got = b.rx_frames(len(batch))
            for k, (fr, _, m) in enumerate(batch):
                expect_bytes(f"B: batch {rnd} frame {k} ({m})", fr, got[k][1])
            a.tx_done()
            back = [(eth(a.mac, b.mac, pattern(900 + 10 * rnd + k, 1400)), (0,) * 6,
                     "chain" if k % 2 else "indirect") for k in range(12)]
            b.tx_many(back)
            got = a.rx_frames(len(back))
            for k, (fr, _, _) in enumerate(back):
                expect_bytes(f"A: batch {rnd} frame {k}", fr, got[k][1])
        a.tx_done()
        # a disabled ring: RX gets no new frame, TX is used and its frames
        # dropped (vhost-user.rst, "Ring states")
        b.command(SET_VRING_ENABLE, VRING_STATE.pack(RXQ, 0))
        held = eth(b.mac, a.mac, pattern(77, 500))
        a.tx(held)
        a.tx_done()
        b.no_rx(0.3)
        a.command(SET_VRING_ENABLE, VRING_STATE.pack(TXQ, 0))
        b.command(SET_VRING_ENABLE, VRING_STATE.pack(RXQ, 1))
        b.kick(RXQ)
        late = b.drain_rx()
        expect(len(late) <= 1 and all(f == held for _, f, _ in late),
               "B: frames once its RX ring is enabled again",
               "none, or the one sent while it was disabled",
               [f[:16].hex() for _, f, _ in late])
        a.tx(eth(b.mac, a.mac, pattern(78, 500)))
        a.tx_done()
        b.no_rx(0.3)
        a.command(SET_VRING_ENABLE, VRING_STATE.pack(TXQ, 1))
        exchange(a, b, b"enabled again", 79)
        b.no_rx(0.2)
        a.no_rx(0)
    finally:
        a.close()
        b.close()


def case_chains(sw):
    """Long chains the spec allows: a frame in 80 descriptors (an indirect
    table, the queue holds 256), and a 64 KiB super-frame into 768-byte
    mergeable buffers (85 of them)."""
    a = connect(sw, "A", mac(7, 1))
    b = connect(sw, "B", mac(7, 2), rx_size=768, rx_bufs=200)
    try:
        announce(a, [b], b"a")
        announce(b, [a], b"b")
        f = eth(b.mac, a.mac, pattern(71, 8000))
        data = a.vnet_hdr() + f
        pieces = []
        for k in range(80):
            part = data[k * len(data) // 80:(k + 1) * len(data) // 80]
            addr = a.tx_space(len(part))
            a.mem.write(addr, part)
            pieces.append((addr, len(part)))
        table = b"".join(DESC.pack(addr, n, 0 if k == 79 else D_NEXT, 0 if k == 79 else k + 1)
                         for k, (addr, n) in enumerate(pieces))
        t = a.tx_space(len(table))
        a.mem.write(t, table)
        ring = a.rings[TXQ]
        if ring.publish(ring.chain([(t, len(table), D_INDIRECT)], "tx")):
            a.kick(TXQ)
        (fields, frame, _), = b.rx_frames(1)
        expect_bytes("B: a frame A sent in 80 descriptors", f, frame)
        a.tx_done()

        t = Tcp4(b.mac, a.mac, pattern(72, SUPER))
        a.tx(t.frame, t.gso_fields(MSS))
        (fields, frame, nbuf), = b.rx_frames(1)
        expect_eq("B: header of the super-frame", t.gso_fields(MSS), fields)
        expect_bytes("B: the super-frame in 768-byte buffers", t.frame, frame)
        expect_eq(f"B: num_buffers for {12 + len(t.frame)} bytes in 768-byte "
                  "buffers", -(-(12 + len(t.frame)) // 768), nbuf)
        b.no_rx(0.2)
    finally:
        a.close()
        b.close()


def case_reconnect(sw):
    a = connect(sw, "A", mac(5, 1))
    b = connect(sw, "B", mac(5, 2))
    a2 = None
    try:
        announce(a, [b], b"a")
        announce(b, [a], b"b")
        for k in range(5):
            exchange(a, b, b"run %d" % k, 50 + k)
        a.tx_done()
        sent = a.rings[TXQ].avail_idx
        expect_eq("A: frames sent", 6, sent)
        st = a.get(GET_VRING_BASE, VRING_STATE.pack(TXQ, 0))
        expect_eq("GET_VRING_BASE (A, queue 1): index, num (frames A published)",
                  (TXQ, sent), VRING_STATE.unpack(st))
        # stopped: what A publishes now is not taken
        used = a.rings[TXQ].used_idx()
        a.tx(eth(b.mac, a.mac, b"after GET_VRING_BASE" * 5))
        time.sleep(0.3)
        expect_eq("A: TX used idx after GET_VRING_BASE stopped the ring", used,
                  a.rings[TXQ].used_idx())
        b.no_rx(0)

        a.close()
        t0 = time.monotonic()
        ok = sw.gone(a.port, 1.0)
        expect(ok, "ctl ports after A disconnected", f"port {a.port} gone within 1 s",
               f"still there after {time.monotonic() - t0:.1f} s")
        m = ":".join(f"{v:02x}" for v in a.mac)
        left = [e for e in sw.fdb() if e["port"] == a.port]
        expect_eq(f"ctl fdb entries of A's port {a.port} ({m}) once gone", [], left)

        # back at once, the rings' indexes 3 short of the 16-bit wrap
        a2 = connect(sw, "A again", mac(5, 1), base=0xfffd)
        for k in range(6):
            exchange(a2, b, b"again %d" % k, 60 + k)
        expect_eq("A again: TX avail idx after the wrap", 3, a2.rings[TXQ].avail_idx)
        rx_used = b.rings[RXQ].last_used
        st = b.get(GET_VRING_BASE, VRING_STATE.pack(RXQ, 0))
        expect_eq("GET_VRING_BASE (B, queue 0): index, num (buffers B saw used)",
                  (RXQ, rx_used), VRING_STATE.unpack(st))
    finally:
        a.close()
        b.close()
        if a2:
            a2.close()


# --- hostile front-ends -----------------------------------------------------

class Skip(Exception):
    """A sub-case this host cannot run (no FUSE)."""


class Hostile:
    """One misbehaving front-end per sub-case, beside a good pair A, B."""

    def __init__(self, sw):
        self.sw = sw
        self.a = connect(sw, "A", mac(6, 1))
        self.b = connect(sw, "B", mac(6, 2))
        try:
            announce(self.a, [self.b], b"a")
            announce(self.b, [self.a], b"b")
        except BaseException:
            self.close()
            raise
        self.good = {self.a.port, self.b.port}
        self.failed = []
        self.n = 0

    def close(self):
        self.a.close()
        self.b.close()

    def run(self, name, fn):
        """fn(self) -> an H whose outcome is 'closed' or the ack of the
        hostile message (it must not be 0); then the port must go, the
        switch log a line, and A and B still talk."""
        if not self.sw.alive():
            self.failed.append(name)
            print(f"FAIL: hostile {name}: not run, the switch is gone", flush=True)
            return
        self.n += 1
        log0 = len(self.sw.log_lines())
        h = None
        try:
            h = fn(self)
            outcome = h.outcome
            expect(outcome == "closed" or (isinstance(outcome, int) and outcome != 0),
                   "the switch's answer",
                   "connection closed or the message refused (ack != 0)",
                   "no answer, connection open" if outcome is None else
                   (f"ack {outcome}, connection open" if isinstance(outcome, int)
                    else outcome))
            h.close()
            if h.port is not None:
                expect(self.sw.gone(h.port, 1.0), "ctl ports",
                       f"the hostile port {h.port} gone within 1 s",
                       f"vhost-user ports {sorted(self.sw.vhost_ids())}")
            expect(self.sw.alive(), "the switch", "running", "gone")
            expect_eq("vhost-user ports left (the good pair's)", self.good,
                      self.sw.vhost_ids())
            strays = self.a.drain_rx() + self.b.drain_rx()
            if strays:
                say(f"hostile {name}: {len(strays)} frame(s) reached the good pair")
            exchange(self.a, self.b, f"after {name}".encode(), 600 + self.n)
            # a line about this port ("port N (vhost-user ...): ..."), or
            # at least about a vhost-user frontend; not just any line
            mine = re.compile(rf"\bport {h.port}\b|vhost" if h.port is not None
                              else "vhost", re.I)
            deadline = time.monotonic() + 0.5
            while True:
                lines = [ln for ln in self.sw.log_lines()[log0:] if mine.search(ln)]
                if lines or time.monotonic() > deadline:
                    break
                time.sleep(0.05)
            expect(lines, "switch log (without -v)",
                   f"a line about port {h.port} (or vhost-user) naming the problem",
                   f"none of {len(self.sw.log_lines()) - log0} new line(s) names it")
            how = "closed" if outcome == "closed" else f"refused (ack {outcome})"
            more = f" (+{len(lines) - 1} lines)" if len(lines) > 1 else ""
            say(f"hostile {name}: {how}; log: {lines[0][:160]}{more}")
        except Skip as e:
            self.n -= 1
            say(f"hostile {name}: SKIP: {e}")
        except (Fail, Closed, OSError) as e:
            self.failed.append(name)
            print(f"FAIL: hostile {name}: {e}", flush=True)
        finally:
            if h is not None:
                h.close()


class H:
    """A hostile front-end.  setup: 'none' (connected only), 'hello'
    (features agreed, REPLY_ACK on) or 'full' (memory and both rings
    too, no receive buffers)"""

    def __init__(self, ho, name, setup="full", **kw):
        self.ho = ho
        sw = ho.sw
        before = sw.vhost_ids()
        self.fe = Frontend(sw.args.sock, f"hostile {name}", mac(6, 0x40 + ho.n), **kw)
        self.outcome = None
        self.port = None
        try:
            if setup in ("hello", "full"):
                self.fe.hello()
            if setup == "full":
                self.fe.set_mem()
                self.fe.setup_ring(RXQ)
                self.fe.setup_ring(TXQ)
                self.fe.tx_arena = Arena(self.fe.mem, 1, 1 << 20)
            if setup != "none":
                self.port = sw.new_port(before, self.fe.name)
        except BaseException:
            self.fe.close()
            raise

    def close(self):
        self.fe.close()

    def closed(self, timeout=2.0):
        self.outcome = "closed" if self.fe.closed_within(timeout) else None
        return self

    def tx_raw(self, pieces, avail_idx=None):
        """Descriptors 0.. as given (addr, len, flags, next), descriptor 0
        published, the ring kicked"""
        ring = self.fe.rings[TXQ]
        for k, (addr, length, flags, nxt) in enumerate(pieces):
            ring.put_desc(k, addr, length, flags, nxt)
        ring.mem.st16(ring.avail + 4, 0)
        ring.avail_idx = 1 if avail_idx is None else avail_idx
        ring.mem.st16(ring.avail + 2, ring.avail_idx)
        self.fe.kick(TXQ)
        return self

    def rx_raw(self, addr, length, flags):
        """One receive buffer as given, then a broadcast from A for it"""
        ring = self.fe.rings[RXQ]
        ring.put_desc(0, addr, length, flags, 0)
        ring.mem.st16(ring.avail + 4, 0)
        ring.avail_idx = 1
        ring.mem.st16(ring.avail + 2, 1)
        self.fe.kick(RXQ)
        self.ho.a.tx(eth(BCAST, self.ho.a.mac, pattern(66, 1000)))
        return self

    def frame_at(self, n=200):
        """A valid frame (header and all) to B in region 1: its address, length"""
        data = self.fe.vnet_hdr() + eth(self.ho.b.mac, self.fe.mac, pattern(7, n))
        a = self.fe.mem.alloc(len(data), 16, 1)
        self.fe.mem.write(a, data)
        return a, len(data)

    def table(self, entries):
        """An indirect table in region 1: its address"""
        t = b"".join(DESC.pack(*e) for e in entries)
        a = self.fe.mem.alloc(len(t), 16, 1)
        self.fe.mem.write(a, t)
        return a


FAR_AWAY = 0x7000_0000_0000     # no region anywhere near


def hostile_descriptors():
    def outside(ho):
        h = H(ho, "descriptor outside every region")
        return h.tx_raw([(FAR_AWAY, 200, 0, 0)]).closed()

    def overflow(ho):
        # a region at guest address 0: addr + len wraps round into it
        layout = ((0, 2 << 20, 0x7f5a00000000, 0),
                  (0x40000000, 2 << 20, 0x7f5b00200000, 2 << 20))
        h = H(ho, "address + length overflowing 64 bits", layout=layout)
        return h.tx_raw([(0xffff_ffff_ffff_ff00, 0x200, 0, 0)]).closed()

    def past_end(ho):
        # starts in region 0, runs past its end (the file goes on: region 1)
        h = H(ho, "descriptor running past its region's end")
        r = h.fe.mem.regions[0]
        return h.tx_raw([(r.gpa + r.size - 100, 1000, 0, 0)]).closed()

    def loop(ho):
        h = H(ho, "chain that loops")
        a, n = h.frame_at()
        return h.tx_raw([(a, 20, D_NEXT, 1), (a + 20, n - 20, D_NEXT, 0)]).closed()

    def loop_all(ho):
        h = H(ho, "chain through every descriptor and back to the first", qsize=16)
        a, _ = h.frame_at()
        return h.tx_raw([(a + 8 * k, 8, D_NEXT, (k + 1) % 16) for k in range(16)]).closed()

    def too_long(ho):
        h = H(ho, "indirect chain longer than the queue (17 > 16)", qsize=16)
        a, n = h.frame_at(n=300)
        step = n // 17
        t = h.table([(a + k * step, step if k < 16 else n - 16 * step,
                      0 if k == 16 else D_NEXT, 0 if k == 16 else k + 1)
                     for k in range(17)])
        return h.tx_raw([(t, 17 * 16, D_INDIRECT, 0)]).closed()

    def ind_len(ho):
        h = H(ho, "indirect table length not a multiple of 16")
        a, n = h.frame_at()
        t = h.table([(a, n, 0, 0), (0, 0, 0, 0), (0, 0, 0, 0)])
        return h.tx_raw([(t, 40, D_INDIRECT, 0)]).closed()

    def ind_outside(ho):
        h = H(ho, "indirect table outside memory")
        return h.tx_raw([(FAR_AWAY, 64, D_INDIRECT, 0)]).closed()

    def ind_past_end(ho):
        h = H(ho, "indirect table running past its region's end")
        r = h.fe.mem.regions[1]
        return h.tx_raw([(r.gpa + r.size - 32, 64, D_INDIRECT, 0)]).closed()

    def ind_entry_outside(ho):
        h = H(ho, "indirect entry outside memory")
        t = h.table([(FAR_AWAY, 200, 0, 0)])
        return h.tx_raw([(t, 16, D_INDIRECT, 0)]).closed()

    def nested(ho):
        h = H(ho, "nested indirect table")
        a, n = h.frame_at()
        inner = h.table([(a, n, 0, 0)])
        outer = h.table([(inner, 16, D_INDIRECT, 0)])
        return h.tx_raw([(outer, 16, D_INDIRECT, 0)]).closed()

    def ind_next_out(ho):
        h = H(ho, "indirect entry's next past the table")
        a, n = h.frame_at()
        t = h.table([(a, 20, D_NEXT, 1), (a + 20, n - 20, D_NEXT, 5)])
        return h.tx_raw([(t, 32, D_INDIRECT, 0)]).closed()

    def next_out(ho):
        h = H(ho, "next past the end of the descriptor table", qsize=16)
        a, n = h.frame_at()
        return h.tx_raw([(a, 20, D_NEXT, 16), (a + 20, n - 20, 0, 0)]).closed()

    def head_out(ho):
        h = H(ho, "available head past the descriptor table", qsize=16)
        a, n = h.frame_at()
        h.tx_raw([(a, n, 0, 0)], avail_idx=0)
        ring = h.fe.rings[TXQ]
        ring.mem.st16(ring.avail + 4, 16)
        ring.avail_idx = 1
        ring.mem.st16(ring.avail + 2, 1)
        h.fe.kick(TXQ)
        return h.closed()

    def jump(ho):
        h = H(ho, "avail idx more than the queue size ahead", qsize=16)
        a, n = h.frame_at()
        return h.tx_raw([(a, n, 0, 0)], avail_idx=17).closed()

    def tx_write(ho):
        h = H(ho, "write-only descriptor on TX")
        a, n = h.frame_at()
        return h.tx_raw([(a, n, D_WRITE, 0)]).closed()

    def rx_read(ho):
        h = H(ho, "read-only descriptor on RX")
        return h.rx_raw(h.fe.mem.alloc(4096, 64, 0), 4096, 0).closed()

    def rx_outside(ho):
        h = H(ho, "RX buffer outside every region")
        return h.rx_raw(FAR_AWAY, 4096, D_WRITE).closed()

    def rx_past_end(ho):
        h = H(ho, "RX buffer running past its region's end")
        r = h.fe.mem.regions[0]
        return h.rx_raw(r.gpa + r.size - 100, 4096, D_WRITE).closed()

    return [
        ("descriptor outside every region", outside),
        ("address + length overflowing 64 bits", overflow),
        ("descriptor running past its region's end", past_end),
        ("chain that loops", loop),
        ("chain through every descriptor and back to the first", loop_all),
        ("indirect chain longer than the queue (17 > 16)", too_long),
        ("indirect table length not a multiple of 16", ind_len),
        ("indirect table outside memory", ind_outside),
        ("indirect table running past its region's end", ind_past_end),
        ("indirect entry outside memory", ind_entry_outside),
        ("nested indirect table", nested),
        ("indirect entry's next past the table", ind_next_out),
        ("next past the end of the descriptor table", next_out),
        ("available head past the descriptor table", head_out),
        ("avail idx more than the queue size ahead", jump),
        ("write-only descriptor on TX", tx_write),
        ("read-only descriptor on RX", rx_read),
        ("RX buffer outside every region", rx_outside),
        ("RX buffer running past its region's end", rx_past_end),
    ]


def ready_ring(fe, q):
    """Memory, and the ring's size, base and addresses: all a ring needs
    but its kick and call"""
    fe.set_mem()
    ring = fe.rings[q] = Ring(fe.mem, q, fe.qsize, 1, fe.has(F_RING_EVENT_IDX))
    fe.command(SET_VRING_NUM, VRING_STATE.pack(q, fe.qsize))
    fe.command(SET_VRING_BASE, VRING_STATE.pack(q, 0))
    fe.command(SET_VRING_ADDR, VRING_ADDR.pack(q, 0, fe.mem.uva(ring.desc),
                                               fe.mem.uva(ring.used),
                                               fe.mem.uva(ring.avail), 0))


def hostile_messages():
    def ring_num(n):
        def f(ho):
            h = H(ho, f"queue size {n}", setup="hello")
            h.fe.set_mem()
            h.outcome = h.fe.attempt(SET_VRING_NUM, VRING_STATE.pack(TXQ, n))
            return h
        f.__name__ = f"queue size {n}"
        return f

    def ring_addr(what):
        def f(ho):
            h = H(ho, what, setup="hello")
            fe = h.fe
            fe.set_mem()
            ring = Ring(fe.mem, TXQ, 256, 1, False)
            desc, used, avail = (fe.mem.uva(ring.desc), fe.mem.uva(ring.used),
                                 fe.mem.uva(ring.avail))
            r1 = fe.mem.regions[1]
            if what == "descriptor table outside memory":
                desc = FAR_AWAY
            elif what == "descriptor table running past its region's end":
                desc = r1.uva + r1.size - 2048          # 4 KiB of descriptors
            elif what == "used ring outside memory":
                used = r1.uva + r1.size
            elif what == "avail ring outside memory":
                avail = FAR_AWAY
            elif what == "descriptor table misaligned":
                desc += 8
            elif what == "used ring misaligned":
                used += 2
            elif what == "avail ring misaligned":
                avail += 1
            fe.command(SET_VRING_NUM, VRING_STATE.pack(TXQ, 256))
            fe.command(SET_VRING_BASE, VRING_STATE.pack(TXQ, 0))
            h.outcome = fe.attempt(SET_VRING_ADDR,
                                   VRING_ADDR.pack(TXQ, 0, desc, used, avail, 0))
            if h.outcome == 0:
                # it may check when the ring starts; it must by then
                say(f"hostile {what}: SET_VRING_ADDR acked; starting the ring")
                kfd = eventfd()
                try:
                    r = fe.attempt(SET_VRING_KICK, struct.pack("<Q", TXQ), [kfd])
                    if r == 0:
                        r = fe.attempt(SET_VRING_ENABLE, VRING_STATE.pack(TXQ, 1))
                    if r == 0:
                        os.write(kfd, struct.pack("<Q", 1))
                        r = "closed" if fe.closed_within(1.5) else 0
                    h.outcome = r
                finally:
                    os.close(kfd)
            return h
        f.__name__ = what
        return f

    def mem(what, regions, nfds=None, kind="memfd", file_size=4 << 20):
        def f(ho):
            h = H(ho, what, setup="hello")
            if kind == "memfd":
                fd = os.memfd_create("hostile", os.MFD_CLOEXEC)
                os.ftruncate(fd, file_size)
            else:
                fd = eventfd()
            try:
                p = struct.pack("<II", len(regions), 0) + b"".join(
                    REGION.pack(*r) for r in regions)
                h.outcome = h.fe.attempt(SET_MEM_TABLE, p,
                                         [fd] * (len(regions) if nfds is None else nfds))
            finally:
                os.close(fd)
            return h
        f.__name__ = what
        return f

    def lying_count(ho):
        h = H(ho, "memory table counting 8 regions, carrying 1", setup="hello")
        fd = os.memfd_create("hostile", os.MFD_CLOEXEC)
        os.ftruncate(fd, 1 << 20)
        try:
            p = struct.pack("<II", 8, 0) + REGION.pack(0x100000, 1 << 20, 0x7f0000000000, 0)
            h.outcome = h.fe.attempt(SET_MEM_TABLE, p, [fd])
        finally:
            os.close(fd)
        return h

    def notifier(req, what):
        """SET_VRING_KICK or SET_VRING_CALL with a descriptor of the wrong
        kind, on a ring otherwise ready (size, base, addresses, memory)"""
        rname = "kick" if req == SET_VRING_KICK else "call"

        def f(ho):
            h = H(ho, f"{rname} fd {what}", setup="hello")
            ready_ring(h.fe, TXQ)
            q = 200 if what == "for queue 200" else TXQ
            s1 = s2 = None
            fd = -1
            if what == "an IP socket":
                # unix sockets are notifiers (UML's virtio_uml calls
                # through a socket pair); no other family is
                s1 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                fds = [s1.fileno()]
            elif what == "a memfd":
                fd = os.memfd_create("notifier", os.MFD_CLOEXEC)
                fds = [fd]
            elif what == "missing (no fd, no invalid-fd flag)":
                fds = []
            else:
                fd = eventfd()
                fds = [fd]
            try:
                h.outcome = h.fe.attempt(req, struct.pack("<Q", q), fds)
            finally:
                for x in (s1, s2):
                    if x:
                        x.close()
                if fd >= 0:
                    os.close(fd)
            return h
        f.__name__ = f"{rname} fd {what}"
        return f

    def kick_writer_gone(ho):
        """a pipe is a notifier, but one nobody can write to any more would
        wake the switch for ever: the switch must drop the frontend"""
        h = H(ho, "kick fd a pipe whose write end is closed", setup="hello")
        ready_ring(h.fe, TXQ)
        r, w = os.pipe()
        os.close(w)
        try:
            h.fe.send(SET_VRING_KICK, struct.pack("<Q", TXQ), [r])
        finally:
            os.close(r)
        return h.closed()

    def huge(ho):
        h = H(ho, "header size 1 MiB", setup="hello")
        h.fe.send(SET_MEM_TABLE, b"", size=1 << 20)
        return h.closed()

    def short_payload(ho):
        h = H(ho, "SET_VRING_NUM with a 4-byte payload", setup="hello")
        h.fe.set_mem()
        h.outcome = h.fe.attempt(SET_VRING_NUM, struct.pack("<I", TXQ))
        return h

    def truncated(n):
        def f(ho):
            h = H(ho, f"truncated {'header' if n < 0 else 'payload'}, then EOF",
                  setup="hello")
            p = VRING_ADDR.pack(TXQ, 0, 0, 0, 0, 0)
            data = HDR.pack(SET_VRING_ADDR, VERSION, len(p)) + p
            h.fe.conn.sendall(data[:5] if n < 0 else data[:12 + n])
            h.fe.conn.shutdown(socket.SHUT_WR)
            return h.closed()
        f.__name__ = f"truncated {'header' if n < 0 else 'payload'}, then EOF"
        return f

    def unknown(ho):
        h = H(ho, "unknown request 1000", setup="hello")
        h.outcome = h.fe.attempt(1000, struct.pack("<Q", 0))
        return h

    def bad_version(ho):
        h = H(ho, "version 2 in the flags", setup="hello")
        h.outcome = h.fe.attempt(SET_VRING_NUM, VRING_STATE.pack(TXQ, 256),
                                 flags=2 | NEED_REPLY)
        return h

    one = [(0x100000, 1 << 20, 0x7f0000000000, 0)]
    named = [
        ring_num(100), ring_num(0), ring_num(65536),
        ring_addr("descriptor table outside memory"),
        ring_addr("descriptor table running past its region's end"),
        ring_addr("used ring outside memory"),
        ring_addr("avail ring outside memory"),
        ring_addr("descriptor table misaligned"),
        ring_addr("used ring misaligned"),
        ring_addr("avail ring misaligned"),
        mem("memory region of size 0", [(0x100000, 0, 0x7f0000000000, 0)]),
        mem("overlapping regions (guest addresses)",
            [(0x100000, 1 << 20, 0x7f0000000000, 0),
             (0x180000, 1 << 20, 0x7f1000000000, 2 << 20)]),
        mem("overlapping regions (user addresses)",
            [(0x100000, 1 << 20, 0x7f0000000000, 0),
             (0x40000000, 1 << 20, 0x7f0000080000, 2 << 20)]),
        mem("region wrapping past 2^64",
            [(0xffff_ffff_fff0_0000, 2 << 20, 0x7f0000000000, 0)]),
        mem("mmap_offset + size beyond the file",
            [(0x100000, 1 << 20, 0x7f0000000000, 512 << 10)], file_size=1 << 20),
        mem("mmap_offset + size overflowing 64 bits",
            [(0x100000, 2 << 20, 0x7f0000000000, 0xffff_ffff_ffff_f000)]),
        mem("9 regions", [(0x100000 * (k + 1), 0x80000, 0x7f0000000000 + 0x100000 * k,
                           0x100000 * k) for k in range(9)], file_size=16 << 20),
        mem("a region without its fd", one, nfds=0),
        mem("2 fds for 1 region", one, nfds=2),
        mem("an eventfd as memory", one, kind="eventfd"),
        notifier(SET_VRING_KICK, "an IP socket"), notifier(SET_VRING_KICK, "a memfd"),
        notifier(SET_VRING_KICK, "missing (no fd, no invalid-fd flag)"),
        notifier(SET_VRING_KICK, "for queue 200"),
        notifier(SET_VRING_CALL, "an IP socket"), notifier(SET_VRING_CALL, "a memfd"),
    ]
    return [(f.__name__, f) for f in named] + [
        ("memory table counting 8 regions, carrying 1", lying_count),
        ("SET_VRING_NUM with a 4-byte payload", short_payload),
        ("header size 1 MiB", huge),
        ("kick fd a pipe whose write end is closed", kick_writer_gone),
        ("truncated header, then EOF", truncated(-1)),
        ("truncated payload, then EOF", truncated(10)),
        ("unknown request 1000", unknown),
        ("version 2 in the flags", bad_version),
    ]


def stuck_sender(ho, h):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import fuse_stuck       # pylint: disable=import-outside-toplevel
    if not fuse_stuck.available():
        raise Skip("no /dev/fuse or no fuse file system")
    return fuse_stuck.StuckSender(ho.sw.args.tmp, h.fe.conn)


def fuse_case(ho, h, data):
    """Send data over h's connection with a file on a FUSE mount whose
    close() waits for a daemon that never answers; while the switch holds
    it the good pair must still talk, within 2 s."""
    s = stuck_sender(ho, h)
    try:
        expect_eq("sending the FUSE file", "sent", s.send(data))
        t0 = time.monotonic()
        try:
            exchange(ho.a, ho.b, b"while the FUSE file is held", 700 + ho.n)
        except Fail as e:
            raise Fail(f"while the FUSE file is outstanding: {e}") from None
        dt = time.monotonic() - t0
        expect(dt < 2.0, "a ping-pong while the FUSE file is outstanding",
               "within 2 s", f"{dt:.1f} s")
        try:
            p = h.fe.reply(HDR.unpack(data[:12])[0], timeout=1.0)
            h.outcome = struct.unpack("<Q", p)[0] if len(p) == 8 else None
        except Closed:
            h.outcome = "closed"
        except Fail:
            h.outcome = "closed" if h.fe.closed_within(0.5) else None
    finally:
        s.close()
    return h


def fuse_mem(ho):
    h = H(ho, "memory fd on a FUSE mount that never answers", setup="hello")
    p = struct.pack("<II", 1, 0) + REGION.pack(0x100000, 4096, 0x7f0000000000, 0)
    return fuse_case(ho, h, HDR.pack(SET_MEM_TABLE, VERSION | NEED_REPLY, len(p)) + p)


def fuse_kick(ho):
    h = H(ho, "kick fd on a FUSE mount that never answers", setup="hello")
    ready_ring(h.fe, TXQ)
    p = struct.pack("<Q", TXQ)
    return fuse_case(ho, h, HDR.pack(SET_VRING_KICK, VERSION | NEED_REPLY, len(p)) + p)


def shrink(ho):
    """Rings in the first MiB of the memfd (region 0), buffers behind it
    (region 1); frames flow both ways, then the file is cut to its first
    MiB and more frames come: touching the rest is SIGBUS for the switch."""
    layout = ((0x100000, 1 << 20, 0x7f5a00000000, 0),
              (0x40000000, 3 << 20, 0x7f5b00200000, 1 << 20))
    h = H(ho, "memfd shrunk under the switch", setup="hello", layout=layout)
    fe = h.fe
    fe.set_mem()
    fe.setup_ring(RXQ, 0)
    fe.setup_ring(TXQ, 0)
    fe.tx_arena = Arena(fe.mem, 1, 1 << 20)
    rx = fe.rings[RXQ]
    rx.publish(*[rx.chain([(fe.mem.alloc(4096, 64, 1), 4096, D_WRITE)], None)
                 for _ in range(64)])
    fe.kick(RXQ)
    f = eth(ho.a.mac, fe.mac, pattern(80, 500))
    fe.tx(f)
    (_, frame, _), = ho.a.rx_frames(1)
    expect_bytes("A: a frame from the front-end before its memfd shrinks", f, frame)
    fe.tx_done()
    ho.a.tx(eth(fe.mac, ho.a.mac, pattern(81, 500)))
    deadline = time.monotonic() + WAIT
    while rx.pending() == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    expect_eq("the front-end's frames received before its memfd shrinks", 1,
              rx.pending())
    tx = fe.rings[TXQ]
    heads = []
    for k in range(16):
        data = fe.vnet_hdr() + eth(ho.a.mac, fe.mac, pattern(90 + k, 1000))
        a = fe.tx_space(len(data))
        fe.mem.write(a, data)
        heads.append(tx.chain([(a, len(data), 0)], "tx"))
    os.ftruncate(fe.mem.fd, 1 << 20)
    # from here on this process must not touch region 1 either
    for k in range(8):
        ho.a.tx(eth(fe.mac, ho.a.mac, pattern(100 + k, 1200)))
    tx.publish(*heads)
    fe.kick(TXQ)
    return h.closed(2.0)


def case_rewrite(sw, rounds=64, batch=32):
    a = connect(sw, "A", mac(1, 1))
    b = connect(sw, "B", mac(1, 2))
    c = connect(sw, "C", mac(1, 3))
    stop = threading.Event()
    flipper = None
    try:
        # all three learned, and nothing flooded left in B's or C's ring
        a.tx(eth(BCAST, a.mac, pattern(29, 60)))
        a.tx_done()
        for x in (b, c):
            x.rx_frames(1)
            x.tx(eth(a.mac, x.mac, pattern(30, 60)))
            x.tx_done()
        a.rx_frames(2)
        # one buffer, published again and again, its destination flipping
        data = a.vnet_hdr((0, 0, 0, 0, 0, 0)) + eth(b.mac, a.mac, pattern(31, 1000))
        addr = a.tx_space(len(data))
        a.mem.write(addr, data)
        dst, mb, mc = addr + a.hdr_len, bytes(b.mac), bytes(c.mac)

        def flip():
            while not stop.is_set():
                a.mem.write(dst, mc)
                a.mem.write(dst, mb)

        flipper = threading.Thread(target=flip, daemon=True)
        flipper.start()
        got = {b.name: [], c.name: []}
        ring = a.rings[TXQ]
        for _ in range(rounds):
            a.reclaim_tx()
            if ring.publish(*[ring.chain([(addr, len(data), 0)], "tx")
                              for _ in range(batch)]):
                a.kick(TXQ)
            a.tx_done()
            for x in (b, c):
                got[x.name] += x.drain_rx()
        stop.set()
        flipper.join()
        time.sleep(0.2)
        for x in (b, c):
            got[x.name] += x.drain_rx()
            wrong = [f[1][:6].hex() for f in got[x.name] if f[1][:6] != bytes(x.mac)]
            expect_eq(f"{x.name}: frames of {len(got[x.name])} received whose "
                      "destination is not its address", [], wrong[:4])
        n = len(got[b.name]) + len(got[c.name])
        expect(n > 0, "frames delivered while their destination changed", "some", n)
        say(f"{len(got[b.name])} frames reached B and {len(got[c.name])} C, "
            "each addressed to its receiver")
    finally:
        stop.set()
        if flipper:
            flipper.join()
        for x in (a, b, c):
            x.close()


# ---- hostile, third round: what the kernel would do on the switch's thread


class Lingering:
    """A TCP socket on loopback whose last close waits `linger` seconds in
    the kernel: its peer takes nothing, its send queue is full and
    SO_LINGER is on.  Whoever drops the last reference to it (a close, or
    the kernel releasing a descriptor nobody took) waits that long, unless
    close() here resets the connection first."""

    def __init__(self, linger=5):
        self.lsn = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.lsn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        self.lsn.bind(("127.0.0.1", 0))
        self.lsn.listen(1)
        self.cli = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.cli.connect(self.lsn.getsockname())
        self.srv, _ = self.lsn.accept()
        self.cli.setblocking(False)
        for _ in range(100000):
            try:
                self.cli.send(bytes(65536))
            except BlockingIOError:
                break
        self.cli.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                            struct.pack("ii", 1, linger))

    def fd(self):
        return self.cli.fileno()

    def let_go(self):
        """Our own copy goes (not the last): the copy sent is the last"""
        self.cli.close()

    def close(self):
        self.cli.close()
        # unread data: the peer resets, and a close lingering returns
        self.srv.close()
        self.lsn.close()


def timed_exchange(ho, what, limit=1.0):
    """The good pair talks within `limit` seconds (normally well under
    one millisecond) while a frontend tries to stall the switch"""
    t0 = time.monotonic()
    try:
        exchange(ho.a, ho.b, f"while {what}".encode(), 800 + ho.n)
    except Fail as e:
        raise Fail(f"while {what}: {e}") from None
    dt = time.monotonic() - t0
    expect(dt < limit, f"a ping-pong of the good pair while {what}",
           f"within {limit} s", f"{dt:.2f} s")


def ack_of(fe, req):
    """The ack of a message sent earlier: its value, or 'closed'"""
    try:
        p = fe.reply(req, timeout=2)
    except Closed:
        return "closed"
    except Fail:
        return "closed" if fe.closed_within(0.5) else None
    return struct.unpack("<Q", p)[0] if len(p) == 8 else f"a {len(p)}-byte reply"


class Handed:
    """with Handed(ho, send, stop): send(lg) hands the switch a lingering
    socket some way, while our own copy is still open; then ours goes, so
    that the switch holds the last reference, until the block ends (then
    the connection is reset, and any close lingering returns).  stop: the
    switch is stopped meanwhile (SIGSTOP), so that it cannot take the
    socket before our copy is gone (its release would not be the last)."""

    def __init__(self, ho, send, stop=False):
        self.ho, self.send, self.stop = ho, send, stop
        self.lg = None

    def __enter__(self):
        pid = self.ho.sw.args.pid
        if self.stop and not pid:
            raise Skip("no --pid: the switch cannot be stopped")
        self.lg = Lingering()
        try:
            if self.stop:
                os.kill(pid, signal.SIGSTOP)
            try:
                self.send(self.lg)
                self.lg.let_go()
            finally:
                if self.stop:
                    os.kill(pid, signal.SIGCONT)
        except BaseException:
            self.lg.close()
            raise
        return self

    def __exit__(self, *exc):
        self.lg.close()
        return False


def hostile_kernel_side():
    """Descriptors whose release the kernel would do on the switch's
    thread, rings of empty descriptors, memory named or mounted to fool
    the switch, mappings beyond the caps, kicks that are always ready."""

    def nine_fds(ho):
        h = H(ho, "nine descriptors with one message, the ninth lingering",
              setup="hello")

        def send(lg):
            fds = [eventfd() for _ in range(8)]
            try:
                p = struct.pack("<II", 1, 0) + REGION.pack(0x100000, 4096, 0x7f0000000000, 0)
                h.fe.send(SET_MEM_TABLE, p, fds + [lg.fd()], need_reply=True)
            finally:
                for fd in fds:
                    os.close(fd)
        with Handed(ho, send, stop=True):
            timed_exchange(ho, "a message brings nine descriptors")
        # the closer may have waited on it until now: so did its connection
        return h.closed()

    def notifier_holding(req):
        rname = {SET_VRING_KICK: "kick", SET_VRING_CALL: "call",
                 SET_VRING_ERR: "error"}[req]

        def f(ho):
            h = H(ho, f"{rname} fd a unix socket with a lingering socket in it",
                  setup="hello")
            ready_ring(h.fe, TXQ)
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)

            def send(lg):
                # queued in `theirs`; the switch (stopped) gets `theirs`,
                # and holds the last reference to both once ours go
                socket.send_fds(ours, [b"k"], [lg.fd()])
                h.fe.send(req, struct.pack("<Q", TXQ), [theirs.fileno()],
                          need_reply=True)
                theirs.close()
            try:
                with Handed(ho, send, stop=True):
                    timed_exchange(ho, f"a {rname} socket holds a lingering socket")
                    h.outcome = ack_of(h.fe, req)
                    if h.outcome == 0 and req == SET_VRING_KICK:
                        ours.send(b"k")         # a kick to read
                        timed_exchange(ho, "a kick socket is read")
                    if h.outcome == 0:
                        # the frontend then breaks the protocol: its port goes
                        h.outcome = h.fe.attempt(99)
                        timed_exchange(ho, f"a {rname} socket is closed")
            finally:
                ours.close()
                theirs.close()
            return h
        f.__name__ = f"{rname} fd a unix socket holding a lingering socket"
        return f

    def left_in_connection(ho):
        """a bad message, then one with a lingering socket, unread: the
        switch drops the frontend and its connection with it"""
        h = H(ho, "a lingering socket left unread in the connection", setup="hello")

        def send(lg):
            h.fe.send(99)
            h.fe.send(SET_VRING_CALL, struct.pack("<Q", TXQ), [lg.fd()])
        with Handed(ho, send, stop=True):
            timed_exchange(ho, "a connection dropped with a lingering socket in it")
        return h.closed()

    def rx_empty_chains(ho):
        """a 12-byte receive buffer, then the same chain of 4095 empty
        descriptors again and again in the available ring"""
        h = H(ho, "receive chains of empty descriptors", qsize=4096)
        fe = h.fe
        ring = fe.rings[RXQ]
        ring.put_desc(0, fe.mem.alloc(64, 16, 1), 12, D_WRITE, 0)
        for k in range(1, 4096):
            ring.put_desc(k, 0x40000000, 0, D_WRITE | (D_NEXT if k < 4095 else 0), k + 1)
        for k in range(4096):
            fe.mem.st16(ring.avail + 4 + 2 * k, 0 if k == 0 else 1)
        fe.mem.st16(ring.avail + 2, 4096)
        fe.kick(RXQ)
        t0 = time.monotonic()
        for k in range(20):
            ho.a.tx(eth(BCAST, ho.a.mac, pattern(90 + k, 1000)))
        ho.b.rx_frames(20)
        dt = time.monotonic() - t0
        expect(dt < 1.0, "20 broadcasts from A reaching B", "within 1 s", f"{dt:.2f} s")
        return h.closed()

    def tx_empty_chains(ho):
        h = H(ho, "a transmit chain of 3000 empty descriptors", qsize=4096)
        return h.tx_raw([(0x40000000, 0, D_NEXT, k + 1) for k in range(2999)]
                        + [(0x40000000, 0, 0, 0)]).closed()

    def memfd_named(ho):
        """a file on ramfs named memfd:x, at the root of a detached
        mount, so that /proc names it "/memfd:x" as it would a memfd"""
        h = H(ho, "memory on ramfs named like a memfd", setup="hello")
        d = os.path.join(ho.sw.args.tmp, "ramfs-memfd")
        os.makedirs(d, exist_ok=True)
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.mount(b"none", d.encode(), b"ramfs", 0, None):
            raise Skip(f"no ramfs mount: {os.strerror(ctypes.get_errno())}")
        try:
            fd = os.open(os.path.join(d, "memfd:x"), os.O_RDWR | os.O_CREAT, 0o600)
        finally:
            libc.umount2(d.encode(), 2)
        try:
            expect_eq("its name in /proc", "/memfd:x", os.readlink(f"/proc/self/fd/{fd}"))
            os.ftruncate(fd, 1 << 20)
            p = struct.pack("<II", 1, 0) + REGION.pack(0x100000, 1 << 20, 0x7f0000000000, 0)
            h.outcome = h.fe.attempt(SET_MEM_TABLE, p, [fd])
        finally:
            os.close(fd)
        return h

    def huge_table(ho):
        """8 regions of 16 GiB each, one sparse memfd: beyond the default
        --vhost-mem-max of 64 GiB"""
        h = H(ho, "guest memory of 128 GiB (beyond --vhost-mem-max)", setup="hello")
        fd = os.memfd_create("huge", os.MFD_CLOEXEC)
        try:
            os.ftruncate(fd, 128 << 30)
            p = struct.pack("<II", 8, 0) + b"".join(
                REGION.pack(k << 34, 16 << 30, 0x100000000000 + (k << 34), k << 34)
                for k in range(8))
            h.outcome = h.fe.attempt(SET_MEM_TABLE, p, [fd] * 8)
        finally:
            os.close(fd)
        return h

    def all_frontends(ho):
        """two frontends of 20 GiB each, where the switch runs with
        --vhost-mem-total 32768: the first is mapped, the second refused"""
        first = H(ho, "20 GiB of guest memory", setup="hello")
        fd = os.memfd_create("big", os.MFD_CLOEXEC)
        try:
            os.ftruncate(fd, 20 << 30)
            p = struct.pack("<II", 1, 0) + REGION.pack(0, 20 << 30, 0x100000000000, 0)
            expect_eq("the first 20 GiB table's ack", 0,
                      first.fe.attempt(SET_MEM_TABLE, p, [fd]))
            before = ho.sw.ctl("stats")["switch"]["vhost_mem_refused"]
            h = H(ho, "20 GiB more (beyond --vhost-mem-total)", setup="hello")
            h.outcome = h.fe.attempt(SET_MEM_TABLE, p, [fd])
            expect_eq("vhost_mem_refused", before + 1,
                      ho.sw.ctl("stats")["switch"]["vhost_mem_refused"])
        finally:
            os.close(fd)
            first.close()
        return h

    def offset_far(ho):
        """a 1 MiB region 100 TiB into a sparse memfd: only the region is
        mapped, not the 100 TiB before it"""
        h = H(ho, "a region 100 TiB into its file", setup="hello")
        fd = os.memfd_create("far", os.MFD_CLOEXEC)
        try:
            os.ftruncate(fd, (100 << 40) + (1 << 20))
            p = struct.pack("<II", 1, 0) + REGION.pack(0, 1 << 20, 0x100000000000, 100 << 40)
            expect_eq("its table's ack", 0, h.fe.attempt(SET_MEM_TABLE, p, [fd]))
            mapped = ho.sw.ctl("stats")["switch"]["vhost_mapped"]
            expect(mapped < 1 << 30, "vhost_mapped with that region mapped",
                   "under 1 GiB", f"{mapped} bytes")
            h.outcome = h.fe.attempt(99)
        finally:
            os.close(fd)
        return h

    def call_to_switch(ho):
        """a call socket connected to the switch's own --dgram socket: its
        calls would come to the switch as datagrams from itself"""
        if not ho.sw.args.dgram:
            raise Skip("no --dgram socket")
        h = H(ho, "call fd a socket connected to the switch's own", setup="hello")
        ready_ring(h.fe, TXQ)
        c = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        try:
            c.connect(ho.sw.args.dgram)
            h.outcome = h.fe.attempt(SET_VRING_CALL, struct.pack("<Q", TXQ),
                                     [c.fileno()])
        finally:
            c.close()
        return h

    def kick_write_end(ho):
        h = H(ho, "kick fd the write end of a pipe whose reader is gone", setup="hello")
        ready_ring(h.fe, TXQ)
        r, w = os.pipe()
        os.close(r)
        try:
            h.outcome = h.fe.attempt(SET_VRING_KICK, struct.pack("<Q", TXQ), [w])
        finally:
            os.close(w)
        return h

    def kick_listening(ho):
        h = H(ho, "kick fd a listening unix socket with a connection pending",
              setup="hello")
        ready_ring(h.fe, TXQ)
        lsn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            lsn.bind(f"\0vecswitch-test-kick-{os.getpid()}")
            lsn.listen(1)
            c.connect(lsn.getsockname())
            h.outcome = h.fe.attempt(SET_VRING_KICK, struct.pack("<Q", TXQ),
                                     [lsn.fileno()])
        finally:
            c.close()
            lsn.close()
        return h

    return [(f.__name__.replace("_", " "), f) for f in (
        nine_fds, notifier_holding(SET_VRING_KICK),
        notifier_holding(SET_VRING_CALL), notifier_holding(SET_VRING_ERR),
        left_in_connection, rx_empty_chains, tx_empty_chains, memfd_named,
        huge_table, all_frontends, offset_far, call_to_switch, kick_write_end,
        kick_listening)]


class Shell:
    """What Hostile.run needs of a frontend that lived in another process"""

    def __init__(self, outcome):
        self.outcome, self.port = outcome, None

    def close(self):
        pass


def many_mounts(ho, n=2000):
    """A frontend in a mount namespace of its own with `n` mounts hands
    over memory on a tmpfs only that namespace has, in 8 regions: the
    switch must not read its mount table to decide (it once did, for each
    region, and stalled every port meanwhile)"""
    rd, wr = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(rd)
        out = "error"
        try:
            out = _many_mounts_child(ho, n)
        except Exception as e:      # pylint: disable=broad-except
            out = f"error {e!r}"
        finally:
            os.write(wr, out.encode())
            os._exit(0)
    os.close(wr)
    try:
        r, _, _ = select.select([rd], [], [], 60)
        got = os.read(rd, 4096).decode() if r else "no answer in 60 s"
    finally:
        os.close(rd)
        os.waitpid(pid, 0)
    if got.startswith("skip "):
        raise Skip(got[5:])
    expect(not got.startswith(("error", "no answer")), "the frontend with many mounts",
           "an answer", got)
    ack, dt = got.split()
    say(f"hostile many mounts: SET_MEM_TABLE answered {ack} in {float(dt) * 1000:.1f} ms")
    expect_eq("the answer to a table of good memory", "0", ack)
    expect(float(dt) < 0.1, f"the answer to a memory table of 8 tmpfs regions "
           f"from a namespace of {n} mounts", "within 0.1 s", f"{float(dt):.2f} s")
    # the memory was good: the port was dropped by a bad request after it
    return Shell("closed")


def _many_mounts_child(ho, n):
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(0x20000):       # CLONE_NEWNS
        return f"skip unshare: {os.strerror(ctypes.get_errno())}"
    libc.mount(b"none", b"/", None, 0x40000 | 0x4000, None)     # MS_REC | MS_PRIVATE
    d = os.path.join(ho.sw.args.tmp, "many-mounts")
    os.makedirs(os.path.join(d, "m"), exist_ok=True)
    if libc.mount(b"none", d.encode(), b"tmpfs", 0, None):
        return f"skip tmpfs: {os.strerror(ctypes.get_errno())}"
    m = os.path.join(d, "m").encode()
    os.makedirs(m, exist_ok=True)
    os.makedirs(os.path.join(d, "mem"), exist_ok=True)
    for _ in range(n):
        if libc.mount(m, m, None, 0x1000, None):                # MS_BIND
            return f"skip bind mounts: {os.strerror(ctypes.get_errno())}"
    # the memory's own mount last: the whole table comes before it
    if libc.mount(b"none", os.path.join(d, "mem").encode(), b"tmpfs", 0, None):
        return f"skip tmpfs: {os.strerror(ctypes.get_errno())}"
    fd = os.open(os.path.join(d, "mem", "f"), os.O_RDWR | os.O_CREAT, 0o600)
    os.ftruncate(fd, 8 << 20)
    fe = Frontend(ho.sw.args.sock, "hostile many mounts", mac(6, 0x7f))
    fe.hello()
    p = struct.pack("<II", 8, 0) + b"".join(
        REGION.pack(k << 20, 1 << 20, 0x7f0000000000 + (k << 20), k << 20)
        for k in range(8))
    t0 = time.monotonic()
    ack = fe.attempt(SET_MEM_TABLE, p, [fd] * 8)
    dt = time.monotonic() - t0
    if ack == 0:
        fe.attempt(99)
    fe.close()
    return f"{ack} {dt:.4f}"


def case_hostile(sw):
    ho = Hostile(sw)
    try:
        for name, fn in hostile_descriptors() + hostile_messages() + [
                ("memory fd on a FUSE mount that never answers", fuse_mem),
                ("kick fd on a FUSE mount that never answers", fuse_kick),
                ("memfd shrunk under the switch while frames flow", shrink)] + \
                hostile_kernel_side() + [
                ("memory on tmpfs from a namespace of 2000 mounts", many_mounts)]:
            if re.search(sw.args.only, name):
                ho.run(name, fn)
        if ho.failed:
            raise Fail(f"{len(ho.failed)} of {ho.n} hostile front-ends not handled: "
                       + "; ".join(ho.failed))
        say(f"{ho.n} hostile front-ends handled")
    finally:
        ho.close()


CASES = {
    "pair": case_pair,
    "tso": case_tso,
    "tso_seg": case_tso_seg,
    "rings": case_rings,
    "chains": case_chains,
    "reconnect": case_reconnect,
    "rewrite": case_rewrite,
    "hostile": case_hostile,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sock", required=True, help="the switch's --vhost-user socket")
    ap.add_argument("--ctl", required=True, help="its --ctl socket")
    ap.add_argument("--dgram", help="its --dgram socket (case tso)")
    ap.add_argument("--only", default="", metavar="REGEX",
                    help="hostile: only the sub-cases whose names match")
    ap.add_argument("--tmp", default="/tmp", help="a directory for sockets and mounts")
    ap.add_argument("--log", help="the switch's standard error, to read its log lines")
    ap.add_argument("--pid", type=int, help="the switch's pid, to check it still runs")
    ap.add_argument("cases", nargs="+", choices=sorted(CASES) + ["all"])
    args = ap.parse_args()
    sw = Switch(args)
    names = list(CASES) if "all" in args.cases else args.cases
    failed = []
    for name in names:
        t0 = time.monotonic()
        try:
            before = sw.resources()
            CASES[name](sw)
            # every front-end of the case is gone: so is all it handed over
            left = sw.released(before)
            expect(left is None, "the switch's descriptors and mappings once the "
                   "case's front-ends are gone", f"at most {before}", left)
        except (Fail, Closed) as e:
            print(f"FAIL: {name}: {e}", flush=True)
            failed.append(name)
            continue
        except Exception as e:      # pylint: disable=broad-except
            # an answer of an unexpected shape (ctl JSON, say) is a failure too
            tb = traceback.extract_tb(e.__traceback__)[-1]
            print(f"FAIL: {name}: {e!r} (line {tb.lineno})", flush=True)
            failed.append(name)
            continue
        if not sw.alive():
            print(f"FAIL: {name}: the switch is no longer running", flush=True)
            failed.append(name)
            continue
        print(f"PASS: {name} ({time.monotonic() - t0:.1f} s)", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
