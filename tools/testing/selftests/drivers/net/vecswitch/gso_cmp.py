#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Compare vecswitch's software segmentation with the Linux kernel's.

  gso_cmp.py VECSWITCH_VNET_SOCK VECSWITCH_DGRAM_SOCK TX_IF RX_IF WORKDIR \
             [UPLINK_IF UPLINK_MTU]

The port with headers negotiates them first (HELLO, MODE), on the --vnet
socket (an alias of --dgram) or, given the same path twice, on --dgram.

Each case is a frame with a virtio-net header: a TCP or UDP super-frame
over IPv4 (with and without IP options) or IPv6, or a frame whose
checksum is left to finish.  The kernel's answer: the frame written with
its header to a packet socket (PACKET_VNET_HDR) on TX_IF, a veth end with
every offload off, so that the kernel cuts it and fills in checksums, and
the pieces read on its peer RX_IF.  vecswitch's answer: the same bytes
sent to its --vnet socket, and the pieces read by a plain --dgram port.
Every piece must be equal, byte for byte.

Then the other way (a plain port's frame reaches a --vnet port behind an
all-zero header) and malformed headers, each of which must be dropped.

With UPLINK_IF (the switch's --tap, its MTU smaller than the guest's
segments): TCP super-frames sent to an address behind it must come out
cut again to fit that MTU, equal to what the kernel makes of the same
frame at that segment size; a UDP super-frame (whose segments are the
sender's datagrams) and a plain frame too long for it must not come out
at all, and are counted by the switch in tx_oversize.
Prints one line per case; exits 1 on the first difference.
"""

import os
import select
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), ".."))
import vecnet_wire as w    # noqa: E402 pylint: disable=wrong-import-position

SOL_PACKET = 263
PACKET_VNET_HDR = 15
ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4

DST = bytes.fromhex("027665000b02")   # the plain port's guest
FAR = bytes.fromhex("027665000b09")   # never learned: flooded, uplink too
SRC = bytes.fromhex("027665000b01")   # the --vnet port's guest
IP4 = (bytes([198, 18, 9, 1]), bytes([198, 18, 9, 2]))
IP6 = (bytes.fromhex("20010db8000900000000000000000001"),
       bytes.fromhex("20010db8000900000000000000000002"))

F_NEEDS_CSUM, GSO_ECN = w.VNET_F_NEEDS_CSUM, w.VNET_GSO_ECN
GSO_NONE, GSO_TCPV4, GSO_UDP, GSO_TCPV6, GSO_UDP_L4 = (
    w.VNET_GSO_NONE, w.VNET_GSO_TCPV4, w.VNET_GSO_UDP, w.VNET_GSO_TCPV6,
    w.VNET_GSO_UDP_L4)
vnet_hdr = w.vnet_hdr
TCP, UDP = w.IPPROTO_TCP, w.IPPROTO_UDP


def l3(v6, proto, l4len, opts=b""):
    """Ethernet and IP headers from SRC to DST, the IP ones of IP4 or IP6"""
    if v6:
        return w.eth(DST, SRC, w.ETH_P_IPV6, w.ip6(*IP6, proto, l4len))
    return w.eth(DST, SRC, w.ETH_P_IP, w.ip4(*IP4, proto, l4len, opts=opts))


def pseudo(v6, proto, l4len):
    """the folded pseudo-header sum, as a sender leaves it for offload"""
    fn = w.pseudo6 if v6 else w.pseudo4
    return w.csum_fold(fn(*(IP6 if v6 else IP4), proto, l4len))


def payload(n, seed):
    return bytes((i * 7 + seed) & 0xff for i in range(n))


def tcp_case(v6, size, mss, flags, opts=b""):
    data = payload(size, mss)
    l4len = 20 + len(data)
    head = l3(v6, TCP, l4len, opts)
    frame = head + w.tcp(40001, 5201, 0xfffff000, 77, flags, 1024,
                         pseudo(v6, TCP, l4len)) + data
    cs = len(head)
    gt = (GSO_TCPV6 if v6 else GSO_TCPV4) | (GSO_ECN if flags & 0x80 else 0)
    return vnet_hdr(F_NEEDS_CSUM, gt, cs + 20, mss, cs, 16) + frame


def udp_case(v6, size, gso_size):
    data = payload(size, gso_size)
    l4len = 8 + len(data)
    head = l3(v6, UDP, l4len)
    frame = head + w.udp(40002, 5202, data, pseudo(v6, UDP, l4len))
    cs = len(head)
    return vnet_hdr(F_NEEDS_CSUM, GSO_UDP_L4, cs + 8, gso_size, cs, 6) + frame


def csum_case(size):
    """one frame, no segmentation, its TCP checksum left to finish"""
    data = payload(size, 3)
    l4len = 20 + len(data)
    tcp = w.tcp(40003, 5203, 1, 2, w.TCP_PSH | w.TCP_ACK, 1024,
                pseudo(False, TCP, l4len))
    return vnet_hdr(F_NEEDS_CSUM, GSO_NONE, 0, 0, 34, 16) + \
        l3(False, TCP, l4len) + tcp + data


CASES = [
    ("tcp4 64000 B, mss 1448, PSH|FIN", tcp_case(False, 64000, 1448, 0x19)),
    ("tcp4 with IP options, short tail, CWR", tcp_case(False, 5000, 1000, 0x90,
                                                       b"\x01\x01\x01\x00")),
    ("tcp6 30000 B, mss 1428", tcp_case(True, 30000, 1428, 0x18)),
    ("tcp4 one segment only", tcp_case(False, 700, 1448, 0x18)),
    ("udp4 segmentation offload", udp_case(False, 8000, 1400)),
    ("udp6 segmentation offload", udp_case(True, 5001, 1200)),
    ("checksum only", csum_case(901)),
]


def malformed():
    """headers that do not describe their frame: every one is dropped"""
    good = tcp_case(False, 4000, 1000, 0x18)
    frame = good[10:]
    hl, cs = 54, 34
    return [
        ("gso_size 0", vnet_hdr(1, GSO_TCPV4, hl, 0, cs, 16) + frame),
        ("gso_size 200, under the switch's floor of 256",
         vnet_hdr(1, GSO_TCPV4, hl, 200, cs, 16) + frame),
        ("hdr_len beyond the frame",
         vnet_hdr(1, GSO_TCPV4, len(frame) + 1, 1000, cs, 16) + frame),
        ("UFO, an unknown gso type", vnet_hdr(1, GSO_UDP, hl, 1000, cs, 6) + frame),
        ("gso type 2", vnet_hdr(1, 2, hl, 1000, cs, 16) + frame),
        ("csum_offset past the end",
         vnet_hdr(1, GSO_NONE, 0, 0, cs, len(frame)) + frame),
        ("csum_start inside the MAC header", vnet_hdr(1, GSO_NONE, 0, 0, 4, 16) + frame),
        ("TCPv6 type on an IPv4 frame", vnet_hdr(1, GSO_TCPV6, hl, 1000, cs, 16) + frame),
        ("csum_start not at TCP", vnet_hdr(1, GSO_TCPV4, hl, 1000, cs + 2, 16) + frame),
        ("gso without NEEDS_CSUM", vnet_hdr(0, GSO_TCPV4, hl, 1000, cs, 16) + frame),
        ("unknown flag bit", vnet_hdr(0x41, GSO_NONE, 0, 0, cs, 16) + frame),
        ("segments over --max-frame (gso_size 9500)",
         vnet_hdr(1, GSO_TCPV4, hl, 9500, cs, 16) +
         l3(False, TCP, 20 + 12000) + frame[34:54] + payload(12000, 0)),
    ]


def recv_all(sock, want, deadline, keep):
    """frames from sock for which keep(frame) holds, until want or deadline"""
    got = []
    while len(got) < want and time.monotonic() < deadline:
        r, _, _ = select.select([sock], [], [], 0.2)
        if not r:
            continue
        data, addr = sock.recvfrom(70000)
        if len(addr) > 2 and addr[2] == PACKET_OUTGOING:
            continue
        if keep(data):
            got.append(data)
    return got


def ours(frame):
    return frame[:12] == DST + SRC


def far(frame):
    return frame[:12] == FAR + SRC


def to_far(pkt):
    """the same header and frame, addressed to FAR"""
    return pkt[:10] + FAR + pkt[16:]


def with_gso_size(pkt, size):
    return pkt[:4] + struct.pack("<H", size) + pkt[6:]


def kernel_segments(tx_if, rx_if, pkt, want, keep=ours):
    rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                       socket.htons(ETH_P_ALL))
    rx.bind((rx_if, 0))
    tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    tx.setsockopt(SOL_PACKET, PACKET_VNET_HDR, 1)
    tx.bind((tx_if, 0))
    tx.send(pkt)
    got = recv_all(rx, want, time.monotonic() + 5, keep)
    # and nothing more after the last one
    got += recv_all(rx, 1, time.monotonic() + 0.3, keep)
    rx.close()
    tx.close()
    return got


def nego_msg(kind):
    return w.msg(kind, w.MSG_F_VNET, 65554)


def negotiate(sock):
    """Agree on virtio-net headers with the switch (its --dgram socket)."""
    sock.send(nego_msg(w.MSG_HELLO))
    got = recv_all(sock, 1, time.monotonic() + 3, lambda f: len(f) == 12)
    if got != [nego_msg(w.MSG_MODE)]:
        sys.exit("no MODE answer to HELLO: %r" % (got,))
    sock.send(nego_msg(w.MSG_MODE))


class Switch:
    def __init__(self, vnet_path, dgram_path, work):
        self.v = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.v.bind(os.path.join(work, "gso-vnet.sock"))
        self.v.connect(vnet_path)
        negotiate(self.v)
        self.d = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.d.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        self.d.bind(os.path.join(work, "gso-dgram.sock"))
        self.d.connect(dgram_path)
        # each side announces its MAC so that unicast finds it
        hello = b"hello".ljust(46, b"\0")
        self.d.send(w.eth(w.BCAST, DST, w.ETH_P_TEST, hello))
        self.v.send(vnet_hdr() + w.eth(w.BCAST, SRC, w.ETH_P_TEST, hello))
        recv_all(self.d, 1, time.monotonic() + 2, lambda f: True)
        recv_all(self.v, 1, time.monotonic() + 2, lambda f: True)

    def segments(self, pkt, want):
        self.v.send(pkt)
        got = recv_all(self.d, want, time.monotonic() + 5, ours)
        return got + recv_all(self.d, 1, time.monotonic() + 0.3, ours)


def nsegs(pkt):
    h = w.VNET_HDR.unpack_from(pkt)
    if h[1] & 0x7f == GSO_NONE:
        return 1
    frame = pkt[10:]
    hlen = h[4] + (((frame[h[4] + 12] >> 4) * 4) if h[5] == 16 else 8)
    return -(-(len(frame) - hlen) // h[3])


def compare(name, want, ref, got):
    """prints the verdict on one case; True when it passed"""
    if len(ref) != want:
        print("FAIL %s: the kernel gave %d frames, %d expected" %
              (name, len(ref), want))
        return False
    if len(got) != len(ref):
        print("FAIL %s: vecswitch gave %d frames, the kernel %d" %
              (name, len(got), len(ref)))
        return False
    bad = [i for i in range(len(ref)) if got[i] != ref[i]]
    if bad:
        i = bad[0]
        print("FAIL %s: %d of %d frames differ; frame %d: %s" %
              (name, len(bad), len(ref), i, hexdiff(got[i], ref[i])))
        return False
    print("ok %s: %d frames, identical to the kernel's" % (name, want))
    return True


def uplink(sw, tx_if, rx_if, up_if, mtu):
    """super-frames to an address behind an uplink of a smaller MTU"""
    failed = 0
    cap = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                        socket.htons(ETH_P_ALL))
    cap.bind((up_if, 0))
    for name, pkt in [("tcp4 20000 B, mss 1448", tcp_case(False, 20000, 1448, 0x18)),
                      ("tcp6 9000 B, mss 1428", tcp_case(True, 9000, 1428, 0x19))]:
        pkt = to_far(pkt)
        hlen = w.VNET_HDR.unpack_from(pkt)[2]
        size = mtu + 14 - hlen
        ref_pkt = with_gso_size(pkt, size)
        want = nsegs(ref_pkt)
        ref = kernel_segments(tx_if, rx_if, ref_pkt, want, far)
        sw.v.send(pkt)
        got = recv_all(cap, want, time.monotonic() + 5, far)
        got += recv_all(cap, 1, time.monotonic() + 0.3, far)
        name = "uplink MTU %d, %s cut at %d" % (mtu, name, size)
        if not compare(name, want, ref, got):
            failed = 1
    # too long for the uplink and not to be cut: counted, not sent
    big = [to_far(udp_case(False, 8000, mtu)),
           vnet_hdr() + w.eth(FAR, SRC, w.ETH_P_TEST, payload(mtu + 1, 2))]
    for pkt in big:
        sw.v.send(pkt)
    got = recv_all(cap, 1, time.monotonic() + 0.5, far)
    cap.close()
    if got:
        print("FAIL uplink: %d frames over its MTU got out" % len(got))
        failed = 1
    else:
        print("ok uplink: a UDP super-frame and a plain frame over its MTU "
              "held back")
    print("oversize %d" % sum(nsegs(p) for p in big))
    return failed


def hexdiff(a, b):
    for i in range(min(len(a), len(b))):
        if a[i] != b[i]:
            return "first difference at byte %d: %02x against %02x" % \
                (i, a[i], b[i])
    return "lengths %d against %d" % (len(a), len(b))


def main():
    vnet_path, dgram_path, tx_if, rx_if, work = sys.argv[1:6]
    sw = Switch(vnet_path, dgram_path, work)
    failed = 0
    for name, pkt in CASES:
        want = nsegs(pkt)
        ref = kernel_segments(tx_if, rx_if, pkt, want)
        got = sw.segments(pkt, want)
        if not compare(name, want, ref, got):
            failed = 1

    # a plain port's frame reaches the --vnet port behind a zero header
    frame = w.eth(SRC, DST, w.ETH_P_TEST, payload(100, 1))
    sw.d.send(frame)
    got = recv_all(sw.v, 1, time.monotonic() + 3,
                   lambda f: f[10:22] == SRC + DST)
    if got != [vnet_hdr() + frame]:
        print("FAIL plain to vnet: %r" % (got[:1],))
        failed = 1
    else:
        print("ok plain to vnet: one frame behind an all-zero header")

    bad = malformed()
    for _, pkt in bad:
        sw.v.send(pkt)
    sw.v.send(b"\x01\x01\x00")     # shorter than a header: a runt
    got = recv_all(sw.d, 1, time.monotonic() + 0.5, ours)
    if got:
        print("FAIL malformed headers: %d frames got through" % len(got))
        failed = 1
    else:
        print("ok %d malformed headers: nothing got through (%s)" %
              (len(bad), "; ".join(n for n, _ in bad)))
    # for the caller, who checks the switch's counters
    print("malformed %d runt 1" % len(bad))
    if len(sys.argv) > 7:
        failed |= uplink(sw, tx_if, rx_if, sys.argv[6], int(sys.argv[7]))
    return failed


if __name__ == "__main__":
    sys.exit(main())
