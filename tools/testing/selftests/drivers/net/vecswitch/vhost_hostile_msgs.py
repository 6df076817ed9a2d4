# SPDX-License-Identifier: GPL-2.0
"""Hostile front-ends, messages: bad queue sizes and ring addresses,
memory tables, notifiers of the wrong kind, malformed and unknown
requests."""

import os
import socket
import struct

from vhost_lib import (
    HDR, NEED_REPLY, REGION, SET_MEM_TABLE, SET_VRING_ADDR, SET_VRING_BASE,
    SET_VRING_CALL, SET_VRING_ENABLE, SET_VRING_KICK, SET_VRING_NUM, TXQ,
    VERSION, VRING_ADDR, VRING_STATE, Ring, eventfd, say)
from vhost_hostile import (
    FAR_AWAY, H, ready_ring)


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
