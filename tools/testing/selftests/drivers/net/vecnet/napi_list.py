#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""List a device's NAPI instances, queues or queue counters as the netdev
netlink family dumps them.

napi_list.py IFNAME [--queues | --qstats]

Run inside a guest.  Prints one line per NAPI instance of IFNAME, in the
order of the dump (the device's NAPI list): "id N irq I threaded T pid
P", with I -1 when none is reported, T 0 (softirq) or 1 (a kernel
thread) and P 0 without a thread.  With --queues, one line per queue:
"queue rx|tx K napi N" (N 0: none); with --qstats, one per queue with
counters: "qstats rx|tx K packets P bytes B".  This is what "ynl
--family netdev --dump napi-get" (queue-get, qstats-get with scope
queue) asks, with the standard library only: the guest sees the host's
root, which need not have ynl or its YAML module.  A device that is
down lists no NAPI instance.
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
# include/uapi/linux/netdev.h
NETDEV_CMD_QUEUE_GET, NETDEV_CMD_NAPI_GET, NETDEV_CMD_QSTATS_GET = 10, 11, 12
NAPI_IFINDEX, NAPI_ID, NAPI_IRQ, NAPI_PID, NAPI_THREADED = 1, 2, 3, 4, 8
QUEUE_ID, QUEUE_IFINDEX, QUEUE_TYPE, QUEUE_NAPI_ID = 1, 2, 3, 4
QSTATS_IFINDEX, QSTATS_QUEUE_TYPE, QSTATS_QUEUE_ID, QSTATS_SCOPE = 1, 2, 3, 4
QSTATS_RX_PACKETS, QSTATS_RX_BYTES, QSTATS_TX_PACKETS, QSTATS_TX_BYTES = 8, 9, 10, 11
SCOPE_QUEUE = 1
TYPES = ("rx", "tx")


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


def num(msg, kind, default=0, signed=False):
    """An integer attribute (u32, s32 or a 64-bit uint), or default."""
    if kind not in msg:
        return default
    data = msg[kind]
    if len(data) >= 8:
        return struct.unpack("=Q", data[:8])[0]
    return struct.unpack("=i" if signed else "=I", data[:4])[0]


def main():
    """Print what argv[2] asks of the device named in argv[1]."""
    ifindex = socket.if_nametoindex(sys.argv[1])
    what = sys.argv[2] if len(sys.argv) > 2 else "--napis"
    cmd, key = {"--napis": (NETDEV_CMD_NAPI_GET, NAPI_IFINDEX),
                "--queues": (NETDEV_CMD_QUEUE_GET, QUEUE_IFINDEX),
                "--qstats": (NETDEV_CMD_QSTATS_GET, QSTATS_IFINDEX)}[what]
    payload = attr(key, struct.pack("=I", ifindex))
    if what == "--qstats":
        payload += attr(QSTATS_SCOPE, struct.pack("=I", SCOPE_QUEUE))
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW,
                       NETLINK_GENERIC) as sock:
        sock.settimeout(10)
        fam = request(sock, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, NLM_F_REQUEST,
                      attr(CTRL_ATTR_FAMILY_NAME, b"netdev\0"))
        family = struct.unpack("=H", fam[0][CTRL_ATTR_FAMILY_ID][:2])[0]
        msgs = request(sock, family, cmd, NLM_F_REQUEST | NLM_F_ACK | NLM_F_DUMP,
                       payload)
    for m in msgs:
        if num(m, key) != ifindex:
            continue
        if what == "--napis":
            print(f"id {num(m, NAPI_ID)} irq {num(m, NAPI_IRQ, -1, True)} "
                  f"threaded {num(m, NAPI_THREADED)} pid {num(m, NAPI_PID)}")
        elif what == "--queues":
            print(f"queue {TYPES[num(m, QUEUE_TYPE)]} {num(m, QUEUE_ID)} "
                  f"napi {num(m, QUEUE_NAPI_ID)}")
        else:
            t = TYPES[num(m, QSTATS_QUEUE_TYPE)]
            p, b = ((QSTATS_RX_PACKETS, QSTATS_RX_BYTES) if t == "rx" else
                    (QSTATS_TX_PACKETS, QSTATS_TX_BYTES))
            print(f"qstats {t} {num(m, QSTATS_QUEUE_ID)} packets "
                  f"{num(m, p)} bytes {num(m, b)}")


if __name__ == "__main__":
    main()
