# SPDX-License-Identifier: GPL-2.0
"""Hostile front-ends, descriptors passed: files whose close never ends
(FUSE) or lingers (a TCP socket), and what the kernel would do on the
switch's thread, rings of empty descriptors, memory named or sized to
fool it and kicks that are always ready."""

import ctypes
import os
import signal
import socket
import struct
import sys
import time

from vhost_lib import (
    BCAST, D_NEXT, D_WRITE, HDR, NEED_REPLY, REGION, RXQ, SET_MEM_TABLE,
    SET_VRING_CALL, SET_VRING_ERR, SET_VRING_KICK, TXQ, VERSION, Closed, Fail,
    eth, eventfd, expect, expect_eq, pattern)
from vhost_guest import (
    exchange)
from vhost_hostile import (
    H, Skip, ack_of, ready_ring, timed_exchange)


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
