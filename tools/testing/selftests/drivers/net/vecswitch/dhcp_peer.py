#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""DHCP clients for the NAT port's tests, on one datagram socket.

Binds --bind, sends to the switch's --dgram socket --switch, and asks
for a lease (DISCOVER) for each of N made-up MAC addresses (--foreign:
each from one other MAC than it names), or sends hostile frames first
(--junk: malformed DHCP, ARP and IPv6 neighbour solicitations). Prints one line per MAC: "MAC ADDR", ADDR the offered
address or "none" when no offer came within --wait seconds.
"""

import argparse
import os
import random
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), ".."))
import vecnet_wire as w    # noqa: E402 pylint: disable=wrong-import-position

BCAST = w.BCAST
GW_MAC = bytes([0x52, 0x55, 10, 0, 2, 2])    # libslirp's for 10.0.2.2


def discover(mac, xid, src=None):
    """A DISCOVER for @mac, sent from @src (the same MAC unless given)"""
    bootp = struct.pack("!BBBBIHH4s4s4s4s16s64s128s", 1, 1, 6, 0, xid, 0,
                        0x8000, bytes(4), bytes(4), bytes(4), bytes(4),
                        mac + bytes(10), b"", b"")
    bootp += b"\x63\x82\x53\x63" + bytes([53, 1, 1, 255])
    udp = w.udp(68, 67, bootp)
    return w.eth(BCAST, src or mac, w.ETH_P_IP,
                 w.ip4(bytes(4), b"\xff" * 4, w.IPPROTO_UDP, len(udp), ident=0, frag=0) + udp)


def junk(mac, rnd):
    """Frames no parser should trip on: cut and garbled DHCP, ARP, NDP."""
    frames = []
    good = discover(mac, 1)
    for cut in (15, 34, 42, 50, 100, 240, 250):
        frames.append(good[:cut])
    bad = bytearray(good)
    bad[14 + 20 + 8 + 236 + 4:] = bytes([53, 255, 1, 0, 0, 0])  # option too long
    frames.append(bytes(bad))
    for _ in range(200):
        b = bytearray(good)
        # garbled anywhere but the client's MAC (chaddr): a new MAC would
        # be a new client and take a lease
        for _ in range(8):
            i = rnd.randrange(42, len(b))
            if not 42 + 28 <= i < 42 + 44:
                b[i] = rnd.randrange(256)
        frames.append(bytes(b))
    arp = w.eth(BCAST, mac, w.ETH_P_ARP, struct.pack("!HHBBH", 1, w.ETH_P_IP, 6, 4, 1))
    frames.append(arp)                                   # cut short
    frames.append(w.eth(BCAST, mac, w.ETH_P_ARP,
                        struct.pack("!HHBBH", 1, w.ETH_P_IP, 60, 60, 1) + bytes(40)))
    for _ in range(100):
        frames.append(w.eth(BCAST, mac, w.ETH_P_ARP,
                            bytes(rnd.randrange(256) for _ in range(28))))
    # IPv6 neighbour solicitations with garbage options, and cut ones
    for n in range(100):
        icmp = bytes([135, 0, 0, 0]) + bytes(4) + bytes.fromhex(
            "fd000000000000000000000000000002")
        icmp += bytes(rnd.randrange(256) for _ in range(n % 24))
        ip6 = w.ip6(bytes.fromhex("fe80000000000000000000fffe000001"),
                    bytes.fromhex("ff0200000000000000000001ff000002"), 58,
                    len(icmp), hops=255)
        frames.append(w.eth(bytes.fromhex("3333ff000002"), mac, w.ETH_P_IPV6,
                            ip6 + icmp))
    # IPv4 fragments: tiny, overlapping, past 64 KiB, never completed
    src, dst = bytes([10, 0, 2, 15]), bytes([10, 0, 2, 2])
    for n in range(300):
        off = rnd.choice([0, 1, 2, 8, 100, 8189, 8191]) if n % 3 else n
        flags = 0x2000 if n % 4 else 0
        body = bytes(rnd.randrange(256) for _ in range(rnd.choice([0, 8, 24, 1400])))
        ip = w.ip4(src, dst, rnd.choice([1, 6, 17]), len(body), ident=0x4400 + n % 7,
                   frag=flags | (off & 0x1fff))
        frames.append(w.eth(GW_MAC, mac, w.ETH_P_IP, ip + body))
    return frames


def syns(mac, dst, count):
    """TCP SYNs from 10.0.2.15 to @dst, each from a port of its own."""
    src = bytes([10, 0, 2, 15])
    frames = []
    for i in range(count):
        hdr = (10000 + i, 1 + i % 1000, i, 0, w.TCP_SYN, 65535)
        check = w.l4_csum(w.pseudo4(src, dst, w.IPPROTO_TCP, w.TCP_HDR.size),
                          w.tcp(*hdr))
        tcp = w.tcp(*hdr, check)
        ip = w.ip4(src, dst, w.IPPROTO_TCP, len(tcp), ident=i, frag=0)
        frames.append(w.eth(GW_MAC, mac, w.ETH_P_IP, ip + tcp))
    return frames


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--bind", required=True)
    ap.add_argument("--switch", required=True)
    ap.add_argument("--count", type=int, default=1)
    ap.add_argument("--wait", type=float, default=5)
    ap.add_argument("--junk", action="store_true")
    ap.add_argument("--foreign", action="store_true",
                    help="send every DISCOVER from one other MAC than it names")
    ap.add_argument("--syn-to", help="also send 2000 TCP SYNs to this address")
    ap.add_argument("--world", action="store_true",
                    help="let any user send to the socket (a switch run as another)")
    args = ap.parse_args()

    if os.path.exists(args.bind):
        os.unlink(args.bind)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(args.bind)
    if args.world:
        os.chmod(args.bind, 0o777)
    s.connect(args.switch)
    rnd = random.Random(44)
    macs = [bytes([0x02, 0x76, 0x65, 0x44, 0, i + 1]) for i in range(args.count)]
    if args.junk:
        flood = syns(macs[0], socket.inet_aton(args.syn_to), 2000) if args.syn_to else []
        for f in junk(macs[0], rnd) + flood:
            s.send(f)
            time.sleep(0.0005)
        # the garbled DISCOVERs may be answered: not what is counted here
        time.sleep(0.5)
        s.setblocking(False)
        try:
            while s.recv(65536):
                pass
        except BlockingIOError:
            pass
        s.setblocking(True)
    offers = {}
    for i, mac in enumerate(macs):
        s.send(discover(mac, 0x4400 + i,
                        bytes([0x02, 0x76, 0x65, 0x44, 1, 0]) if args.foreign else None))
        time.sleep(0.02)
    deadline = time.monotonic() + args.wait
    s.settimeout(0.1)
    while len(offers) < len(macs) and time.monotonic() < deadline:
        try:
            f = s.recv(65536)
        except socket.timeout:
            continue
        # an IPv4 UDP datagram to port 68 behind a 20-byte IP header
        if len(f) < 14 + 20 + 8 + 240 or f[12:14] != b"\x08\x00" or \
           f[14] != 0x45 or f[23] != 17 or f[36:38] != b"\x00\x44":
            continue
        bootp = f[42:]
        mac = bootp[28:34]
        if bootp[0] == 2 and mac in macs:
            offers[mac] = socket.inet_ntoa(bootp[16:20])
    for mac in macs:
        print(mac.hex(":"), offers.get(mac, "none"))


if __name__ == "__main__":
    main()
