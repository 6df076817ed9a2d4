# SPDX-License-Identifier: GPL-2.0
"""Hostile front-ends, descriptors passed: notifiers of the wrong kind,
files whose close never ends (FUSE) or lingers (a TCP socket, which the
kernel would release on the switch's thread), notifiers that are always
ready or aimed at the switch itself."""

import os
import signal
import socket
import struct
import sys
import time

from vhost_lib import (
    HDR, NEED_REPLY, SET_MEM_TABLE, SET_VRING_CALL, SET_VRING_ERR,
    SET_VRING_KICK, TXQ, VERSION, Closed, Fail, eventfd, expect, expect_eq,
    mem_table)
from vhost_guest import exchange
from vhost_hostile import H, Skip, ack_of, ready_ring, timed_exchange


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
    p = mem_table([(0x100000, 4096, 0x7f0000000000, 0)])
    return fuse_case(ho, h, HDR.pack(SET_MEM_TABLE, VERSION | NEED_REPLY, len(p)) + p)


def fuse_kick(ho):
    h = H(ho, "kick fd on a FUSE mount that never answers", setup="hello")
    ready_ring(h.fe, TXQ)
    p = struct.pack("<Q", TXQ)
    return fuse_case(ho, h, HDR.pack(SET_VRING_KICK, VERSION | NEED_REPLY, len(p)) + p)


# --- descriptors whose last close the kernel would do on the switch's thread


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


def nine_fds(ho):
    h = H(ho, "nine descriptors with one message, the ninth lingering",
          setup="hello")

    def send(lg):
        fds = [eventfd() for _ in range(8)]
        try:
            p = mem_table([(0x100000, 4096, 0x7f0000000000, 0)])
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


def kick_semaphore(ho):
    """a kick eventfd in semaphore mode gives 1 a read and stays ready:
    one write of a huge count would have the switch read it every turn
    for ever, so it is refused (where the kernel's fdinfo tells)"""
    if not hasattr(os, "EFD_SEMAPHORE"):
        raise Skip("no os.eventfd (Python 3.10+)")
    fd = os.eventfd(0, os.EFD_SEMAPHORE | os.EFD_NONBLOCK | os.EFD_CLOEXEC)
    try:
        with open(f"/proc/self/fdinfo/{fd}", encoding="ascii") as f:
            if "eventfd-semaphore:" not in f.read():
                raise Skip("the kernel's fdinfo does not say an eventfd's mode (before 6.3)")
        h = H(ho, "kick fd an eventfd in semaphore mode", setup="hello")
        ready_ring(h.fe, TXQ)
        h.outcome = h.fe.attempt(SET_VRING_KICK, struct.pack("<Q", TXQ), [fd])
    finally:
        os.close(fd)
    return h


def hostile_fds():
    """(name, sub-case) of each hostile front-end of this file"""
    return [(f.__name__, f) for f in (
        notifier(SET_VRING_KICK, "an IP socket"),
        notifier(SET_VRING_KICK, "a memfd"),
        notifier(SET_VRING_KICK, "missing (no fd, no invalid-fd flag)"),
        notifier(SET_VRING_KICK, "for queue 200"),
        notifier(SET_VRING_CALL, "an IP socket"),
        notifier(SET_VRING_CALL, "a memfd"))] + [
        ("kick fd a pipe whose write end is closed", kick_writer_gone),
        ("memory fd on a FUSE mount that never answers", fuse_mem),
        ("kick fd on a FUSE mount that never answers", fuse_kick),
        ("nine fds", nine_fds),
    ] + [(f.__name__, f) for f in (
        notifier_holding(SET_VRING_KICK), notifier_holding(SET_VRING_CALL),
        notifier_holding(SET_VRING_ERR))] + [
        ("left in connection", left_in_connection),
        ("call to switch", call_to_switch),
        ("kick write end", kick_write_end),
        ("kick listening", kick_listening),
        ("kick semaphore", kick_semaphore),
    ]
