# SPDX-License-Identifier: GPL-2.0
"""Hostile front-ends, memory: bad memory tables, a memfd shrunk under
the switch, memory named like a memfd or behind thousands of mounts,
mappings beyond the switch's caps."""

import ctypes
import os
import select
import time

from vhost_lib import (
    D_WRITE, ETH_TEST, RXQ, SET_MEM_TABLE, TXQ, WAIT, Arena, eth, eventfd, expect,
    expect_bytes, expect_eq, mac, mem_table, pattern, say)
from vhost_guest import Frontend
from vhost_hostile import H, Shell, Skip


def table_case(what, regions, nfds=None, kind="memfd", file_size=4 << 20):
    def f(ho):
        h = H(ho, what, setup="hello")
        if kind == "memfd":
            fd = os.memfd_create("hostile", os.MFD_CLOEXEC)
            os.ftruncate(fd, file_size)
        else:
            fd = eventfd()
        try:
            h.outcome = h.fe.attempt(SET_MEM_TABLE, mem_table(regions),
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
        p = mem_table([(0x100000, 1 << 20, 0x7f0000000000, 0)], count=8)
        h.outcome = h.fe.attempt(SET_MEM_TABLE, p, [fd])
    finally:
        os.close(fd)
    return h


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
    f = eth(ho.a.mac, fe.mac, ETH_TEST, pattern(80, 500))
    fe.tx(f)
    (_, frame, _), = ho.a.rx_frames(1)
    expect_bytes("A: a frame from the front-end before its memfd shrinks", f, frame)
    fe.tx_done()
    ho.a.tx(eth(fe.mac, ho.a.mac, ETH_TEST, pattern(81, 500)))
    deadline = time.monotonic() + WAIT
    while rx.pending() == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    expect_eq("the front-end's frames received before its memfd shrinks", 1,
              rx.pending())
    tx = fe.rings[TXQ]
    heads = []
    for k in range(16):
        data = fe.vnet_hdr() + eth(ho.a.mac, fe.mac, ETH_TEST, pattern(90 + k, 1000))
        a = fe.tx_space(len(data))
        fe.mem.write(a, data)
        heads.append(tx.chain([(a, len(data), 0)], "tx"))
    os.ftruncate(fe.mem.fd, 1 << 20)
    # from here on this process must not touch region 1 either
    for k in range(8):
        ho.a.tx(eth(fe.mac, ho.a.mac, ETH_TEST, pattern(100 + k, 1200)))
    tx.publish(*heads)
    fe.kick(TXQ)
    return h.closed(2.0)


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
    p = mem_table([(k << 20, 1 << 20, 0x7f0000000000 + (k << 20), k << 20)
                   for k in range(8)])
    t0 = time.monotonic()
    ack = fe.attempt(SET_MEM_TABLE, p, [fd] * 8)
    dt = time.monotonic() - t0
    if ack == 0:
        fe.attempt(99)
    fe.close()
    return f"{ack} {dt:.4f}"


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
        h.outcome = h.fe.attempt(
            SET_MEM_TABLE, mem_table([(0x100000, 1 << 20, 0x7f0000000000, 0)]), [fd])
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
        p = mem_table([(k << 34, 16 << 30, 0x100000000000 + (k << 34), k << 34)
                       for k in range(8)])
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
        p = mem_table([(0, 20 << 30, 0x100000000000, 0)])
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
        p = mem_table([(0, 1 << 20, 0x100000000000, 100 << 40)])
        expect_eq("its table's ack", 0, h.fe.attempt(SET_MEM_TABLE, p, [fd]))
        mapped = ho.sw.ctl("stats")["switch"]["vhost_mapped"]
        expect(mapped < 1 << 30, "vhost_mapped with that region mapped",
               "under 1 GiB", f"{mapped} bytes")
        h.outcome = h.fe.attempt(99)
    finally:
        os.close(fd)
    return h


def hostile_memory():
    """(name, sub-case) of each hostile front-end of this file"""
    one = [(0x100000, 1 << 20, 0x7f0000000000, 0)]
    return [(f.__name__, f) for f in (
        table_case("memory region of size 0", [(0x100000, 0, 0x7f0000000000, 0)]),
        table_case("overlapping regions (guest addresses)",
            [(0x100000, 1 << 20, 0x7f0000000000, 0),
             (0x180000, 1 << 20, 0x7f1000000000, 2 << 20)]),
        table_case("overlapping regions (user addresses)",
            [(0x100000, 1 << 20, 0x7f0000000000, 0),
             (0x40000000, 1 << 20, 0x7f0000080000, 2 << 20)]),
        table_case("region wrapping past 2^64",
            [(0xffff_ffff_fff0_0000, 2 << 20, 0x7f0000000000, 0)]),
        table_case("mmap_offset + size beyond the file",
            [(0x100000, 1 << 20, 0x7f0000000000, 512 << 10)], file_size=1 << 20),
        table_case("mmap_offset + size overflowing 64 bits",
            [(0x100000, 2 << 20, 0x7f0000000000, 0xffff_ffff_ffff_f000)]),
        table_case("9 regions", [(0x100000 * (k + 1), 0x80000,
                                  0x7f0000000000 + 0x100000 * k, 0x100000 * k)
                                 for k in range(9)], file_size=16 << 20),
        table_case("a region without its fd", one, nfds=0),
        table_case("2 fds for 1 region", one, nfds=2),
        table_case("an eventfd as memory", one, kind="eventfd"))] + [
        ("memory table counting 8 regions, carrying 1", lying_count),
        ("memfd shrunk under the switch while frames flow", shrink),
        ("memfd named", memfd_named),
        ("huge table", huge_table),
        ("all frontends", all_frontends),
        ("offset far", offset_far),
        ("memory on tmpfs from a namespace of 2000 mounts", many_mounts),
    ]
