# SPDX-License-Identifier: GPL-2.0
"""Hostile front-ends, messages: short, huge, truncated, unknown and
of the wrong version."""

import socket
import struct

from vhost_lib import (
    HDR, NEED_REPLY, SET_MEM_TABLE, SET_VRING_ADDR, SET_VRING_NUM, TXQ, VERSION,
    VRING_ADDR, VRING_STATE)
from vhost_hostile import H


def short_payload(ho):
    h = H(ho, "SET_VRING_NUM with a 4-byte payload", setup="hello")
    h.fe.set_mem()
    h.outcome = h.fe.attempt(SET_VRING_NUM, struct.pack("<I", TXQ))
    return h


def huge(ho):
    h = H(ho, "header size 1 MiB", setup="hello")
    h.fe.send(SET_MEM_TABLE, b"", size=1 << 20)
    return h.closed()


def truncated(n):
    def f(ho):
        h = H(ho, f"truncated {'header' if n < 0 else 'payload'}, then EOF",
              setup="hello")
        p = VRING_ADDR.pack(TXQ, 0, 0, 0, 0, 0)
        data = HDR.pack(SET_VRING_ADDR, VERSION, len(p)) + p
        h.fe.conn.sendall(data[:5] if n < 0 else data[:12 + n])
        h.fe.conn.shutdown(socket.SHUT_WR)
        return h.closed()
    f.__name__ = f"truncated {'header' if n < 0 else 'payload'}, then EOF"
    return f


def unknown(ho):
    h = H(ho, "unknown request 1000", setup="hello")
    h.outcome = h.fe.attempt(1000, struct.pack("<Q", 0))
    return h


def bad_version(ho):
    h = H(ho, "version 2 in the flags", setup="hello")
    h.outcome = h.fe.attempt(SET_VRING_NUM, VRING_STATE.pack(TXQ, 256),
                             flags=2 | NEED_REPLY)
    return h


def hostile_messages():
    """(name, sub-case) of each hostile front-end of this file"""
    return [
        ("SET_VRING_NUM with a 4-byte payload", short_payload),
        ("header size 1 MiB", huge),
        ("truncated header, then EOF", truncated(-1)),
        ("truncated payload, then EOF", truncated(10)),
        ("unknown request 1000", unknown),
        ("version 2 in the flags", bad_version),
    ]
