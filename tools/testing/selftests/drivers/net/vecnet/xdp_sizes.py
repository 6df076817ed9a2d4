#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Count the frames a generic XDP program sees on a device, by size.

xdp_sizes.py IFNAME LIMIT -- CMD...

Run inside a guest.  Loads a small XDP program that counts the frames
of at most LIMIT bytes and those longer, attaches it to IFNAME in
generic (skb) mode, runs CMD, then prints "frames N" and "larger N" and
exits, which detaches the program.  Attaching is what "ip link set IFNAME
xdpgeneric obj PROG.o" does, without a compiler or a BPF object file:
the guest sees the host's root, which has neither clang nor bpftool, so
the program is written here in BPF instructions and loaded with bpf(2).
"""

import ctypes
import socket
import struct
import subprocess
import sys

SYS_BPF = 321                   # x86_64, which UML guests are here
BPF_MAP_CREATE = 0
BPF_MAP_LOOKUP_ELEM = 1
BPF_PROG_LOAD = 5
BPF_LINK_CREATE = 28
BPF_MAP_TYPE_ARRAY = 2
BPF_PROG_TYPE_XDP = 6
BPF_XDP = 37                    # enum bpf_attach_type
XDP_FLAGS_SKB_MODE = 1 << 1
XDP_PASS = 2

libc = ctypes.CDLL(None, use_errno=True)


def bpf(cmd, attr):
    buf = ctypes.create_string_buffer(attr, 128)
    ret = libc.syscall(SYS_BPF, cmd, buf, len(buf))
    if ret < 0:
        raise OSError(ctypes.get_errno(), f"bpf({cmd})")
    return ret, buf


def insn(code, dst=0, src=0, off=0, imm=0):
    return struct.pack("<BBhi", code, dst | src << 4, off, imm)


def program(map_fd, limit):
    """Slot 0 of the map counts frames of at most @limit bytes, slot 1
    the longer ones; every frame passes."""
    return b"".join([
        insn(0x61, dst=2, src=1, off=4),        # r2 = ctx->data_end
        insn(0x61, dst=3, src=1, off=0),        # r3 = ctx->data
        insn(0x07, dst=3, imm=limit + 1),       # r3 += limit + 1
        insn(0xb7, dst=6, imm=0),               # r6 = 0
        insn(0x2d, dst=3, src=2, off=1),        # if r3 > r2 goto +1
        insn(0xb7, dst=6, imm=1),               # r6 = 1
        insn(0x63, dst=10, src=6, off=-4),      # *(u32 *)(r10 - 4) = r6
        insn(0x18, dst=1, src=1, imm=map_fd),   # r1 = the map
        insn(0x00),
        insn(0xbf, dst=2, src=10),              # r2 = r10
        insn(0x07, dst=2, imm=-4),              # r2 += -4
        insn(0x85, imm=1),                      # call map_lookup_elem
        insn(0x15, dst=0, off=2, imm=0),        # if r0 == 0 goto +2
        insn(0xb7, dst=1, imm=1),               # r1 = 1
        insn(0xdb, dst=0, src=1, off=0, imm=0),  # lock *(u64 *)r0 += r1
        insn(0xb7, dst=0, imm=XDP_PASS),        # r0 = XDP_PASS
        insn(0x95),                             # exit
    ])


def main():
    if len(sys.argv) < 5 or sys.argv[3] != "--":
        sys.exit(__doc__)
    ifname, limit, cmd = sys.argv[1], int(sys.argv[2]), sys.argv[4:]

    map_fd, _ = bpf(BPF_MAP_CREATE,
                    struct.pack("<IIII", BPF_MAP_TYPE_ARRAY, 4, 8, 2))
    insns = program(map_fd, limit)
    code = ctypes.create_string_buffer(insns, len(insns))
    lic = ctypes.create_string_buffer(b"GPL")
    log = ctypes.create_string_buffer(65536)
    try:
        prog_fd, _ = bpf(BPF_PROG_LOAD, struct.pack(
            "<IIQQIIQ", BPF_PROG_TYPE_XDP, len(insns) // 8,
            ctypes.addressof(code), ctypes.addressof(lic),
            1, len(log), ctypes.addressof(log)))
    except OSError:
        sys.stderr.write(log.value.decode(errors="replace"))
        raise
    # the program stays attached while this process holds the link
    bpf(BPF_LINK_CREATE, struct.pack("<IIII", prog_fd,
                                     socket.if_nametoindex(ifname),
                                     BPF_XDP, XDP_FLAGS_SKB_MODE))
    rc = subprocess.call(cmd)

    counts = []
    for slot in (0, 1):
        key = ctypes.c_uint32(slot)
        val = ctypes.c_uint64(0)
        bpf(BPF_MAP_LOOKUP_ELEM, struct.pack(
            "<IIQQ", map_fd, 0, ctypes.addressof(key),
            ctypes.addressof(val)))
        counts.append(val.value)
    print(f"frames {sum(counts)}")
    print(f"larger {counts[1]}")
    sys.exit(rc)


if __name__ == "__main__":
    main()
