# SPDX-License-Identifier: GPL-2.0
"""What every hostile sub-case shares: the good pair beside it (Hostile),
one misbehaving front-end (H) and the checks after each."""

import re
import struct
import time

from vhost_lib import (
    BCAST, DESC, ETH_TEST, F_RING_EVENT_IDX, RXQ, SET_VRING_ADDR, SET_VRING_BASE,
    SET_VRING_NUM, TXQ, VRING_ADDR, VRING_STATE, Arena, Closed, Fail, Ring, eth,
    expect, expect_eq, mac, pattern, say)
from vhost_guest import Frontend, announce, connect, exchange


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
        self.ho.a.tx(eth(BCAST, self.ho.a.mac, ETH_TEST, pattern(66, 1000)))
        return self

    def frame_at(self, n=200):
        """A valid frame (header and all) to B in region 1: its address, length"""
        data = self.fe.vnet_hdr() + eth(self.ho.b.mac, self.fe.mac, ETH_TEST, pattern(7, n))
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


class Shell:
    """What Hostile.run needs of a frontend that lived in another process"""

    def __init__(self, outcome):
        self.outcome, self.port = outcome, None

    def close(self):
        pass
