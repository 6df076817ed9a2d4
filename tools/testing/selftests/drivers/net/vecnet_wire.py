# SPDX-License-Identifier: GPL-2.0
"""What the Python tests and probes put on the wire, in one place.

    import vecnet_wire as w
    w.msg(w.MSG_HELLO, flags=w.MSG_F_VNET, max_frame=65554)
    w.msg(w.MSG_CHAN, mac=mac)
    w.raw_msg(w.MSG_MODE, b"\x00\x01")       # a malformed one
    w.parse_msg(data)        # a Msg, or None when data is no message
    w.eth(dst, src, etype, payload)
    w.ip4(saddr, daddr, proto, l4len) + w.udp(sport, dport, payload)
    w.tcp(sport, dport, seq, ack, flags, win, check)
    w.vnet_hdr(flags, gso_type, hdr_len, gso_size, csum_start, csum_offset)
    w.csum(data)             # the Internet checksum of data (RFC 1071)
    w.l4_csum(w.pseudo4(saddr, daddr, proto, len(seg)), seg)

Every test and probe builds its frames, headers and checksums with these,
and no other Python file defines its own (test_style.sh holds them to it,
through py_builders.py).

The switch's negotiation messages (HELLO, MODE, CHAN, ...) take their
numbers and layout from include/uapi/linux/vecnet.h, read when this module
is imported: the header is the one place they are written down.  The
module finds it beside itself (through the links of a kernel tree's
overlay, or $VECNET_SRC).
"""

import os
import re
import struct
from collections import namedtuple


def _uapi_path():
    here = os.path.dirname(os.path.realpath(__file__))
    for top in (os.environ.get("VECNET_SRC"),
                os.path.join(here, "..", "..", "..", "..", "..")):
        if top:
            p = os.path.join(top, "include", "uapi", "linux", "vecnet.h")
            if os.path.exists(p):
                return p
    raise ImportError("vecnet_wire: include/uapi/linux/vecnet.h not found "
                      "(set VECNET_SRC to the source tree)")


def _read_uapi(path):
    """The header's VECNET_MSG_* numbers: #defines and the type enum"""
    with open(path, encoding="ascii") as f:
        text = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
    names = {}
    for name, val in re.findall(r"#define\s+VECNET_(MSG_\w+)\s+(\S+)", text):
        names[name] = val.strip('"') if val.startswith('"') else int(val, 0)
    enum = re.search(r"enum\s+vecnet_msg_type\s*{(.*?)}", text, re.S)
    if not enum:
        raise ImportError(f"vecnet_wire: no enum vecnet_msg_type in {path}")
    n = -1
    for item in enum.group(1).split(","):
        item = item.strip()
        if not item:
            continue
        name, _, val = (s.strip().removeprefix("VECNET_")
                        for s in item.partition("="))
        if val in names:
            n = names[val]
        elif val:
            n = int(val, 0)
        else:
            n += 1
        names[name] = n
    return names


_U = _read_uapi(_uapi_path())
# all of them, by name without VECNET_: {"MSG_HELLO": 1, ...}
UAPI = dict(_U)
MSG_MAGIC = _U["MSG_MAGIC"].encode()
MSG_VERSION, MSG_LEN, MSG_COOKIE_LEN = (_U[k] for k in (
    "MSG_VERSION", "MSG_LEN", "MSG_COOKIE_LEN"))
MSG_HELLO, MSG_MODE, MSG_CHAN, MSG_UNCHAN, MSG_QUEUES, MSG_JOIN = (
    _U["MSG_" + k] for k in ("HELLO", "MODE", "CHAN", "UNCHAN", "QUEUES", "JOIN"))
MSG_TYPE_MAX = _U["MSG_TYPE_MAX"]
MSG_F_VNET, MSG_F_CHAN, MSG_F_MQ, MSG_F_CHANQ = (
    _U["MSG_F_" + k] for k in ("VNET", "CHAN", "MQ", "CHANQ"))

# struct vecnet_msg: magic, version, type, then 6 bytes whose meaning the
# type says: flags and max_frame (HELLO, MODE), a MAC (CHAN, UNCHAN) or a
# cookie (QUEUES, JOIN); network byte order
_MSG = struct.Struct("!4sBB6s")
_HEAD = struct.Struct("!4sBB")
_MODE = struct.Struct("!HI")
if _MSG.size != MSG_LEN:
    raise ImportError("vecnet_wire: struct vecnet_msg is no longer "
                      f"{_MSG.size} bytes but {MSG_LEN}")

Msg = namedtuple("Msg", "type version flags max_frame mac cookie")


def msg(kind, flags=0, max_frame=0, mac=None, cookie=None, version=None):
    """A message of type `kind`: HELLO/MODE with flags and max_frame, or
    CHAN/UNCHAN with a MAC, QUEUES/JOIN with a cookie"""
    rest = mac if mac is not None else cookie
    if rest is None:
        rest = _MODE.pack(flags, max_frame)
    return _MSG.pack(MSG_MAGIC, MSG_VERSION if version is None else version,
                     kind, rest)


def raw_msg(kind, rest):
    """A message of type `kind` whose bytes after the type are `rest`, as
    they are: a malformed one too (short, long, any flags)"""
    return _HEAD.pack(MSG_MAGIC, MSG_VERSION, kind) + rest


def parse_msg(data):
    """A Msg, or None when data is not a message of this version"""
    if len(data) != _MSG.size:
        return None
    magic, version, kind, rest = _MSG.unpack(data)
    if magic != MSG_MAGIC or version != MSG_VERSION:
        return None
    flags, max_frame = _MODE.unpack(rest)
    return Msg(kind, version, flags, max_frame, rest, rest)


def is_msg(data, kind):
    m = parse_msg(data)
    return m is not None and m.type == kind


# ---- frames and checksums ---------------------------------------------------

BCAST = b"\xff" * 6
ETH_P_IP, ETH_P_ARP, ETH_P_IPV6, ETH_P_8021Q = 0x0800, 0x0806, 0x86dd, 0x8100
ETH_P_TEST = 0x88b5     # IEEE 802's local experimental EtherType: no stack answers it
IPPROTO_TCP, IPPROTO_UDP = 6, 17

# network byte order: IPv4 (no options), IPv6, TCP (no options), UDP
IP4_HDR = struct.Struct("!BBHHHBBH4s4s")
IP6_HDR = struct.Struct("!IHBB16s16s")
TCP_HDR = struct.Struct("!HHIIBBHHH")
UDP_HDR = struct.Struct("!HHHH")
TCP_FIN, TCP_SYN, TCP_PSH, TCP_ACK, TCP_CWR = 0x01, 0x02, 0x08, 0x10, 0x80

# struct virtio_net_hdr, in the byte order of the hosts the tests run on
# (little-endian, as VERSION_1 has it): flags, gso_type, hdr_len, gso_size,
# csum_start, csum_offset.  12 bytes with num_buffers (MRG_RXBUF).
VNET_HDR = struct.Struct("<BBHHHH")
VNET_F_NEEDS_CSUM, VNET_F_DATA_VALID = 1, 2
VNET_GSO_NONE, VNET_GSO_TCPV4, VNET_GSO_UDP, VNET_GSO_TCPV6, VNET_GSO_UDP_L4 = 0, 1, 3, 4, 5
VNET_GSO_ECN = 0x80


def eth(dst, src, etype, payload=b""):
    """An Ethernet frame: dst, src, EtherType, payload (no FCS)"""
    return dst + src + struct.pack("!H", etype) + payload


def vnet_hdr(flags=0, gso_type=VNET_GSO_NONE, hdr_len=0, gso_size=0,
             csum_start=0, csum_offset=0):
    """A virtio-net header (10 bytes): all zero says a plain frame"""
    return VNET_HDR.pack(flags, gso_type, hdr_len, gso_size, csum_start,
                         csum_offset)


def csum_add(data, s=0):
    """Add data's 16-bit words (an odd byte padded) to the running sum s"""
    if len(data) % 2:
        data += b"\0"
    return s + sum(struct.unpack(f"!{len(data) // 2}H", data))


def csum_fold(s):
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return s


def csum(data):
    """The Internet checksum of data, as it goes in a header"""
    return ~csum_fold(csum_add(data)) & 0xffff


def pseudo4(saddr, daddr, proto, length):
    """The IPv4 pseudo-header's sum (unfolded)"""
    return csum_add(saddr + daddr + struct.pack("!xBH", proto, length))


def pseudo6(saddr, daddr, proto, length):
    """The IPv6 pseudo-header's sum (unfolded)"""
    return csum_add(saddr + daddr + struct.pack("!IxxxB", length, proto))


def l4_csum(pseudo, segment):
    """A TCP or UDP checksum: over the pseudo-header's sum (pseudo4 or
    pseudo6) and the segment, its checksum field zero"""
    return ~csum_fold(pseudo + csum_add(segment)) & 0xffff


def ip4(saddr, daddr, proto, l4len, ident=0x1234, frag=0x4000, ttl=64, opts=b""):
    """An IPv4 header, its checksum filled in"""
    ihl = 5 + len(opts) // 4
    h = IP4_HDR.pack(0x40 | ihl, 0, ihl * 4 + l4len, ident, frag, ttl, proto,
                     0, saddr, daddr) + opts
    return h[:10] + struct.pack("!H", csum(h)) + h[12:]


def ip6(saddr, daddr, proto, l4len, hops=64):
    """An IPv6 header"""
    return IP6_HDR.pack(0x60000000, l4len, proto, hops, saddr, daddr)


def tcp(sport, dport, seq, ack, flags, win, check=0):
    """A TCP header without options, its checksum as given"""
    return TCP_HDR.pack(sport, dport, seq, ack, 5 << 4, flags, win, check, 0)


def udp(sport, dport, payload=b"", check=0):
    """A UDP header and its payload, the checksum as given (0: none)"""
    return UDP_HDR.pack(sport, dport, UDP_HDR.size + len(payload), check) + payload
