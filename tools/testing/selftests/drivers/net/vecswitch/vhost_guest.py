# SPDX-License-Identifier: GPL-2.0
"""One guest's virtio-net device on a vhost-user connection (Frontend),
a plain --dgram peer, and the steps every case takes with them: connect,
announce, exchange."""

import os
import select
import socket
import struct
import time

from vhost_lib import (
    BCAST, DESC, D_INDIRECT, D_NEXT, D_WRITE, ETH_TEST, F_CSUM, F_GUEST_CSUM,
    F_GUEST_TSO4, F_GUEST_TSO6, F_HOST_TSO4, F_HOST_TSO6, F_MRG_RXBUF,
    F_PROTOCOL_FEATURES, F_RING_EVENT_IDX, F_RING_INDIRECT_DESC, F_VERSION_1,
    GET_FEATURES, GET_PROTOCOL_FEATURES, GET_QUEUE_NUM, HDR, NEED_REPLY,
    OFFERED, PF_CONFIG, PF_MQ, PF_REPLY_ACK, REPLY, REQ_NAME, RXQ, SET_FEATURES,
    SET_MEM_TABLE, SET_OWNER, SET_PROTOCOL_FEATURES, SET_VRING_ADDR,
    SET_VRING_BASE, SET_VRING_CALL, SET_VRING_ENABLE, SET_VRING_KICK,
    SET_VRING_NUM, STD_LAYOUT, TXQ, VERSION, VNET, VRING_ADDR, VRING_STATE,
    WAIT, Arena, Closed, Fail, Memory, Ring, bit, bit_names, eth, eventfd,
    expect, expect_bytes, expect_eq, mac, mem_table, pattern)


# --- the front-end ----------------------------------------------------------

def readable(f, deadline):
    """f has something to read (or is closed) before deadline, a
    time.monotonic() value"""
    left = deadline - time.monotonic()
    return left > 0 and bool(select.select([f], [], [], left)[0])


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
            if not readable(self.conn, deadline):
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
            if not readable(self.conn, deadline):
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
        return mem_table([(r.gpa, r.size, r.uva, r.offset) for r in self.mem.regions])

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

    def tx_space(self, n, arena=None):
        """n bytes of transmit arena (tx_arena unless another is given),
        once the frames in flight leave room"""
        deadline = time.monotonic() + WAIT
        while True:
            try:
                return (arena or self.tx_arena).take(n, 16, self.tx_busy)
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
                # alternate the regions: the frame crosses from one to the
                # other (tx_arena0 is a small second arena in region 0)
                a = self.tx_space(len(part), None if k % 2 else self.tx_arena0)
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
    f1 = eth(b.mac, a.mac, ETH_TEST, pattern(seed, 300) + tag)
    a.tx(f1)
    got = b.rx_frames(1)
    expect_bytes(f"{tag.decode()}: {a.name} -> {b.name}", f1, got[0][1])
    f2 = eth(a.mac, b.mac, ETH_TEST, pattern(seed + 1, 200) + tag)
    b.tx(f2)
    got = a.rx_frames(1)
    expect_bytes(f"{tag.decode()}: {b.name} -> {a.name}", f2, got[0][1])


def zero_hdr(who, fields):
    expect_eq(f"{who}: virtio-net header (flags, gso_type, hdr_len, gso_size, "
              f"csum_start, csum_offset)", (0, 0, 0, 0, 0, 0), fields)


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
            if not readable(self.s, deadline):
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
    f = eth(BCAST, x.mac, ETH_TEST, pattern(sum(tag), 64) + tag)
    x.tx(f) if isinstance(x, Frontend) else x.send(f)
    for o in others:
        if isinstance(o, Frontend):
            (fields, frame, nbuf), = o.rx_frames(1)
            zero_hdr(f"{o.name}: {x.name}'s broadcast", fields)
            expect_eq(f"{o.name}: {x.name}'s broadcast: num_buffers", 1, nbuf)
        else:
            frame, = o.recv(1)
        expect_bytes(f"{o.name}: {x.name}'s broadcast", f, frame)
