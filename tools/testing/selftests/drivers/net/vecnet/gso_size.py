#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""gso_size.py DEV SIZE: set DEV's gso_max_size and gso_ipv4_max_size.

What `ip link set DEV gso_max_size SIZE gso_ipv4_max_size SIZE` does with
iproute2 6.3 or later, for the older iproute2 of Debian 12, whose ip has
no gso_ipv4_max_size: one RTM_NEWLINK with IFLA_GSO_MAX_SIZE and
IFLA_GSO_IPV4_MAX_SIZE.  The kernel refuses a size above the device's
tso_max_size (EINVAL), which the message says.
"""
import errno
import os
import socket
import struct
import sys

RTM_NEWLINK = 16
NLM_F_REQUEST = 0x1
NLM_F_ACK = 0x4
NLMSG_ERROR = 2
IFLA_GSO_MAX_SIZE = 41
IFLA_GSO_IPV4_MAX_SIZE = 63


def u32_attr(kind, value):
    return struct.pack("=HHI", 8, kind, value)


def main():
    if len(sys.argv) != 3 or not sys.argv[2].isdigit():
        sys.exit("usage: gso_size.py DEV SIZE")
    dev, size = sys.argv[1], int(sys.argv[2])
    try:
        index = socket.if_nametoindex(dev)
    except OSError:
        sys.exit(f"gso_size.py: no device {dev}")
    body = struct.pack("=BxHiII", socket.AF_UNSPEC, 0, index, 0, 0)
    body += u32_attr(IFLA_GSO_MAX_SIZE, size)
    body += u32_attr(IFLA_GSO_IPV4_MAX_SIZE, size)
    msg = struct.pack("=IHHII", 16 + len(body), RTM_NEWLINK,
                      NLM_F_REQUEST | NLM_F_ACK, 1, 0) + body
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW,
                       socket.NETLINK_ROUTE) as s:
        s.settimeout(5)
        s.send(msg)
        reply = s.recv(4096)
    _, kind, _, _, _ = struct.unpack_from("=IHHII", reply)
    err = struct.unpack_from("=i", reply, 16)[0] if kind == NLMSG_ERROR else -errno.EPROTO
    if err:
        sys.exit(f"gso_size.py: {dev}: gso_max_size {size}: {os.strerror(-err)}")


if __name__ == "__main__":
    main()
