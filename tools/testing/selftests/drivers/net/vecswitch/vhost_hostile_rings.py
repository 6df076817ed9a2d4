# SPDX-License-Identifier: GPL-2.0
"""Hostile front-ends, descriptors and rings: chains that leave guest
memory, loop, nest or run past their tables, rings of bad sizes and
addresses, rings of empty descriptors."""

import os
import struct
import time

from vhost_lib import (
    BCAST, D_INDIRECT, D_NEXT, D_WRITE, ETH_TEST, RXQ, SET_VRING_ADDR, SET_VRING_BASE,
    SET_VRING_ENABLE, SET_VRING_KICK, SET_VRING_NUM, TXQ, VRING_ADDR,
    VRING_STATE, Ring, eth, eventfd, expect, pattern, say)
from vhost_hostile import FAR_AWAY, H


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
        ho.a.tx(eth(BCAST, ho.a.mac, ETH_TEST, pattern(90 + k, 1000)))
    ho.b.rx_frames(20)
    dt = time.monotonic() - t0
    expect(dt < 1.0, "20 broadcasts from A reaching B", "within 1 s", f"{dt:.2f} s")
    return h.closed()


def tx_empty_chains(ho):
    h = H(ho, "a transmit chain of 3000 empty descriptors", qsize=4096)
    return h.tx_raw([(0x40000000, 0, D_NEXT, k + 1) for k in range(2999)]
                    + [(0x40000000, 0, 0, 0)]).closed()


def hostile_rings():
    """(name, sub-case) of each hostile front-end of this file"""
    return hostile_descriptors() + [(f.__name__, f) for f in (
        ring_num(100),
        ring_num(0),
        ring_num(65536),
        ring_addr("descriptor table outside memory"),
        ring_addr("descriptor table running past its region's end"),
        ring_addr("used ring outside memory"),
        ring_addr("avail ring outside memory"),
        ring_addr("descriptor table misaligned"),
        ring_addr("used ring misaligned"),
        ring_addr("avail ring misaligned"))] + [
        ("rx empty chains", rx_empty_chains),
        ("tx empty chains", tx_empty_chains),
    ]
