#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Send or count test frames on a packet socket (host or guest side).

  frames.py send IFACE SRC_MAC ETYPE COUNT
      COUNT broadcast frames from SRC_MAC with EtherType ETYPE (hex).
  frames.py count IFACE SECONDS KEY...
      for SECONDS, count the incoming frames that match each KEY: a MAC
      address (xx:xx:xx:xx:xx:xx) matches frames sent to it, four hex
      digits match an EtherType.  Prints "total N", then "KEY N" for
      each KEY.  With FRAME_COUNT_READY=PATH in the environment, PATH is
      created once the socket listens.
"""

import os
import select
import socket
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)),
                                "..", "drivers", "net"))
import vecnet_wire as w    # noqa: E402 pylint: disable=wrong-import-position

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4


def send(iface, src, etype, count):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    frame = w.eth(w.BCAST, bytes.fromhex(src.replace(":", "")), etype,
                  b"vecnet-test".ljust(50, b"\0"))
    for _ in range(count):
        s.send(frame)
        time.sleep(0.01)


def matcher(key):
    """(offset, bytes) a frame must hold for KEY"""
    if ":" in key:
        return 0, bytes.fromhex(key.replace(":", ""))
    return 12, int(key, 16).to_bytes(2, "big")


def count(iface, secs, keys):
    match = [(k, *matcher(k)) for k in keys]
    seen = dict.fromkeys(keys, 0)
    total = 0
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((iface, 0))
    s.setblocking(False)
    ready = os.environ.get("FRAME_COUNT_READY")
    if ready:
        open(ready, "w").close()
    deadline = time.monotonic() + secs
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        if not select.select([s], [], [], left)[0]:
            continue
        while True:
            try:
                frame, addr = s.recvfrom(65536)
            except BlockingIOError:
                break
            if addr[2] == PACKET_OUTGOING or len(frame) < 14:
                continue
            total += 1
            for key, off, want in match:
                if frame[off:off + len(want)] == want:
                    seen[key] += 1
    print("total", total)
    for k in keys:
        print(k, seen[k])


def main():
    a = sys.argv[1:]
    if len(a) == 5 and a[0] == "send":
        send(a[1], a[2], int(a[3], 16), int(a[4]))
    elif len(a) >= 4 and a[0] == "count":
        count(a[1], float(a[2]), [k.lower() for k in a[3:]])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
