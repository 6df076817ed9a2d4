#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""List a device's NAPI instances as the netdev netlink family dumps them.

napi_list.py IFNAME

Run inside a guest.  Prints one line per NAPI instance of IFNAME, in the
order of the dump (the device's NAPI list): "id N threaded T pid P",
with T 0 (softirq) or 1 (a kernel thread) and P 0 without a thread.
This is what "ynl --family netdev --dump napi-get" asks, with the
standard library only: the guest sees the host's root, which need not
have ynl or its YAML module.  A device that is down lists nothing.
"""

import os
import socket
import struct
import sys

NETLINK_GENERIC = 16
NLMSG_ERROR = 2
NLMSG_DONE = 3
NLM_F_REQUEST = 0x1
NLM_F_ACK = 0x4
NLM_F_DUMP = 0x300
GENL_ID_CTRL = 0x10
CTRL_CMD_GETFAMILY = 3
CTRL_ATTR_FAMILY_ID = 1
CTRL_ATTR_FAMILY_NAME = 2
NETDEV_CMD_NAPI_GET = 11        # include/uapi/linux/netdev.h
NAPI_IFINDEX, NAPI_ID, NAPI_PID, NAPI_THREADED = 1, 2, 4, 8


def attr(kind, payload):
    """One netlink attribute, padded to four bytes."""
    head = struct.pack("=HH", 4 + len(payload), kind)
    return head + payload + bytes(-len(payload) % 4)


def attrs(data):
    """The attributes in data: {type: payload}."""
    out = {}
    while len(data) >= 4:
        size, kind = struct.unpack_from("=HH", data)
        if size < 4:
            break
        out[kind & 0x3fff] = data[4:size]
        data = data[(size + 3) & ~3:]
    return out


def request(sock, family, cmd, flags, payload):
    """Send one generic netlink request; return the messages of its answer."""
    body = struct.pack("=BBH", cmd, 1, 0) + payload
    sock.send(struct.pack("=IHHII", 16 + len(body), family, flags, 1, 0) + body)
    msgs = []
    for _ in range(1000):
        data = sock.recv(65536)
        while len(data) >= 16:
            size, kind = struct.unpack_from("=IH", data)
            if kind == NLMSG_DONE:
                return msgs
            if kind == NLMSG_ERROR:
                err = struct.unpack_from("=i", data, 16)[0]
                if err:
                    raise OSError(-err, os.strerror(-err))
                return msgs
            msgs.append(attrs(data[20:size]))
            data = data[(size + 3) & ~3:]
        if not flags & NLM_F_DUMP and msgs:
            return msgs
    raise RuntimeError("no end to the answer")


def main():
    """Print the NAPI instances of the device named in argv[1]."""
    ifindex = socket.if_nametoindex(sys.argv[1])
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW,
                       NETLINK_GENERIC) as sock:
        sock.settimeout(10)
        fam = request(sock, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, NLM_F_REQUEST,
                      attr(CTRL_ATTR_FAMILY_NAME, b"netdev\0"))
        family = struct.unpack("=H", fam[0][CTRL_ATTR_FAMILY_ID][:2])[0]
        napis = request(sock, family, NETDEV_CMD_NAPI_GET,
                        NLM_F_REQUEST | NLM_F_ACK | NLM_F_DUMP,
                        attr(NAPI_IFINDEX, struct.pack("=I", ifindex)))
    for napi in napis:
        def u32(kind, napi=napi):
            return struct.unpack("=I", napi[kind][:4])[0] if kind in napi else 0
        if u32(NAPI_IFINDEX) == ifindex:
            print(f"id {u32(NAPI_ID)} threaded {u32(NAPI_THREADED)} "
                  f"pid {u32(NAPI_PID)}")


if __name__ == "__main__":
    main()
