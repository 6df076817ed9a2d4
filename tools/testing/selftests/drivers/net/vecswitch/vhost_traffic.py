# SPDX-License-Identifier: GPL-2.0
"""The cases of a well-behaved front-end: pair, tso, tso_seg, rings,
chains, reconnect, rewrite and callfull (see vhost_frontend.py)."""

import os
import struct
import threading
import time

from vhost_lib import (
    BCAST, DESC, D_INDIRECT, D_NEXT, ETH_TEST, F_GUEST_CSUM, F_GUEST_TSO4, F_MRG_RXBUF,
    F_PROTOCOL_FEATURES, F_RING_EVENT_IDX, F_RING_INDIRECT_DESC, GET_CONFIG,
    GET_VRING_BASE, GSO_NONE, NEEDS_CSUM, RXQ, SET_VRING_ENABLE, TXQ,
    VRING_STATE, Tcp4, bit, bit_names, eth, expect, expect_bytes, expect_eq,
    mac, pattern, say)
from vhost_guest import (
    MSS, PLAIN_FEATURES, SUPER, DgramPeer, announce, connect, exchange, zero_hdr)


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

        bc = eth(BCAST, a.mac, ETH_TEST, pattern(11, 200))
        a.tx(bc)
        a.tx_done()
        for x in (b, c):
            (fields, frame, nbuf), = x.rx_frames(1)
            zero_hdr(f"{x.name}: broadcast from A", fields)
            expect_eq(f"{x.name}: broadcast from A: num_buffers", 1, nbuf)
            expect_bytes(f"{x.name}: broadcast from A", bc, frame)
        a.no_rx(0)
        uc = eth(a.mac, b.mac, ETH_TEST, pattern(12, 1000))
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
        back = eth(a.mac, c.mac, ETH_TEST, pattern(13, 100))
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
            f = eth(b.mac, a.mac, ETH_TEST, pattern(40 + k, 60 + 331 * k))
            a.tx(f, mode=m)
            (fields, frame, nbuf), = b.rx_frames(1)
            zero_hdr(f"B: frame sent {m}", fields)
            expect_eq(f"B: frame sent {m}: num_buffers", 1, nbuf)
            expect_bytes(f"B: frame sent {m}", f, frame)
        # batches published together, kicks only where avail_event asks
        for rnd in range(3):
            batch = [(eth(b.mac, a.mac, ETH_TEST, pattern(100 * rnd + k, 64 + 97 * k)), (0,) * 6,
                      modes[k % len(modes)]) for k in range(24)]
            a.tx_many(batch)
            got = b.rx_frames(len(batch))
            for k, (fr, _, m) in enumerate(batch):
                expect_bytes(f"B: batch {rnd} frame {k} ({m})", fr, got[k][1])
            a.tx_done()
            back = [(eth(a.mac, b.mac, ETH_TEST, pattern(900 + 10 * rnd + k, 1400)), (0,) * 6,
                     "chain" if k % 2 else "indirect") for k in range(12)]
            b.tx_many(back)
            got = a.rx_frames(len(back))
            for k, (fr, _, _) in enumerate(back):
                expect_bytes(f"A: batch {rnd} frame {k}", fr, got[k][1])
        a.tx_done()
        # a disabled ring: RX gets no new frame, TX is used and its frames
        # dropped (vhost-user.rst, "Ring states")
        b.command(SET_VRING_ENABLE, VRING_STATE.pack(RXQ, 0))
        held = eth(b.mac, a.mac, ETH_TEST, pattern(77, 500))
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
        a.tx(eth(b.mac, a.mac, ETH_TEST, pattern(78, 500)))
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
        f = eth(b.mac, a.mac, ETH_TEST, pattern(71, 8000))
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
        a.tx(eth(b.mac, a.mac, ETH_TEST, b"after GET_VRING_BASE" * 5))
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


def case_rewrite(sw, rounds=64, batch=32):
    a = connect(sw, "A", mac(1, 1))
    b = connect(sw, "B", mac(1, 2))
    c = connect(sw, "C", mac(1, 3))
    stop = threading.Event()
    flipper = None
    try:
        # all three learned, and nothing flooded left in B's or C's ring
        a.tx(eth(BCAST, a.mac, ETH_TEST, pattern(29, 60)))
        a.tx_done()
        for x in (b, c):
            x.rx_frames(1)
            x.tx(eth(a.mac, x.mac, ETH_TEST, pattern(30, 60)))
            x.tx_done()
        a.rx_frames(2)
        # one buffer, published again and again, its destination flipping
        data = a.vnet_hdr((0, 0, 0, 0, 0, 0)) + eth(b.mac, a.mac, ETH_TEST, pattern(31, 1000))
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


def case_callfull(sw):
    """B holds its receive call eventfd at its limit (it wrote
    0xfffffffffffffffe there itself): every call the switch makes to it
    must fail at once and none wait in the kernel to land when B reads
    (a frontend could pile them up without end); B still gets its frames
    and, its eventfd read, its calls again"""
    a = connect(sw, "A", mac(1, 0x61))
    b = connect(sw, "B", mac(1, 0x62))
    try:
        exchange(a, b, b"before", 61)
        fd = b.call_fd[RXQ]
        b.drain_call(RXQ)
        full = 0xFFFF_FFFF_FFFF_FFFE
        os.write(fd, struct.pack("<Q", full))
        ring = b.rings[RXQ]
        for k in range(8):
            if ring.event_idx:
                ring.set_used_event(ring.last_used)     # a call for each
            f = eth(b.mac, a.mac, ETH_TEST, pattern(62 + k, 300))
            a.tx(f)
            a.tx_done()
            got, deadline = [], time.monotonic() + 2
            while not got and time.monotonic() < deadline:
                got = b.drain_rx()
                time.sleep(0.005)
            expect_eq(f"B: frame {k} read from its ring, its call eventfd full",
                      [f], [g[1] for g in got])
        time.sleep(0.2)
        expect_eq("B: its call eventfd, read", full,
                  struct.unpack("<Q", os.read(fd, 8))[0])
        time.sleep(0.2)
        try:
            late = struct.unpack("<Q", os.read(fd, 8))[0]
        except BlockingIOError:
            late = 0
        expect_eq("B: calls that waited in the kernel and landed after the read",
                  0, late)
        # its eventfd read, B is called again for the next frame
        if ring.event_idx:
            ring.set_used_event(ring.last_used)
        a.tx(eth(b.mac, a.mac, ETH_TEST, pattern(71, 300)))
        a.tx_done()
        expect(b.wait_call(RXQ, 2) >= 1, "B: a call for a frame once its eventfd was read",
               "one", "none")
        b.drain_rx()
        exchange(a, b, b"after", 63)
        say("8 calls to a full call eventfd failed at once; B called again once read")
    finally:
        for x in (a, b):
            x.close()
