#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A host-side peer for the unixdgram transport in tests.

Binds a datagram socket, optionally connect()s it back to the guest,
reads one Ethernet frame per datagram and keeps counts in a file:
"frames N", "ipv4 N", "icmp N", "udp N".  --delay-us makes it a slow
reader, so that a guest meets a full receive queue.  It stops on
SIGTERM or after --timeout seconds.
"""

import argparse
import os
import signal
import socket
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--bind", required=True, help="socket path to bind")
    ap.add_argument("--connect", help="guest socket to connect back to")
    ap.add_argument("--delay-us", type=int, default=0,
                    help="pause after each frame read")
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--out", required=True, help="file for the counts")
    args = ap.parse_args()

    counts = {"frames": 0, "ipv4": 0, "icmp": 0, "udp": 0, "connected": 0}

    def flush():
        tmp = args.out + ".tmp"
        with open(tmp, "w") as f:
            for k, v in counts.items():
                f.write(f"{k} {v}\n")
        os.replace(tmp, args.out)

    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))

    if os.path.exists(args.bind):
        os.unlink(args.bind)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(args.bind)
    s.settimeout(0.1)
    flush()

    deadline = time.monotonic() + args.timeout
    last = 0.0
    last_connect = 0.0
    while not stop and time.monotonic() < deadline:
        now = time.monotonic()
        # Connect again now and then, as the driver does: a guest that
        # went down and up has a new socket, and a peer still connected
        # to the old one refuses it.
        if args.connect and now - last_connect > 0.2:
            last_connect = now
            try:
                s.connect(args.connect)
                counts["connected"] += 1
            except OSError:
                pass
        try:
            data = s.recv(65536)
        except socket.timeout:
            data = None
        except OSError:
            data = None
        if data is not None and len(data) >= 14:
            counts["frames"] += 1
            if data[12:14] == b"\x08\x00" and len(data) >= 34:
                counts["ipv4"] += 1
                proto = data[23]
                if proto == 1:
                    counts["icmp"] += 1
                elif proto == 17:
                    counts["udp"] += 1
            if args.delay_us:
                time.sleep(args.delay_us / 1e6)
        now = time.monotonic()
        if now - last > 0.2:
            flush()
            last = now
    flush()
    s.close()
    os.unlink(args.bind)


if __name__ == "__main__":
    main()
