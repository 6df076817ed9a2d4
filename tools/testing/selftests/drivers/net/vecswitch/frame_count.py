#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Count the frames an interface receives, by destination MAC.

Runs inside a guest:  frame_count.py IFACE SECONDS MAC... > FILE
Prints "total N" and, for each MAC given, "MAC N": how many frames
addressed to that MAC arrived in SECONDS.  Only incoming frames count.
With FRAME_COUNT_READY=PATH in the environment, PATH is created once the
socket listens.
"""

import os
import select
import socket
import sys
import time

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4


def main():
    if len(sys.argv) < 4:
        sys.exit("usage: frame_count.py IFACE SECONDS MAC...")
    iface, secs = sys.argv[1], float(sys.argv[2])
    macs = [m.lower() for m in sys.argv[3:]]
    want = {bytes.fromhex(m.replace(":", "")): m for m in macs}
    counts = dict.fromkeys(macs, 0)
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
            m = want.get(frame[:6])
            if m:
                counts[m] += 1
    print("total", total)
    for m in macs:
        print(m, counts[m])


if __name__ == "__main__":
    main()
