#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The wire format's numbers spelled again outside its header.

    wire_literals.py TOP

include/uapi/linux/vecnet.h is the one place the switch's negotiation
messages are written down.  This lists each line of TOP's tests
(tools/testing) and scripts (scripts/, .ci/) that spells one of its
values as a literal instead of by the header's name (<linux/vecnet.h>
in C, vecnet_wire in Python): the magic (as a string, its characters or
its bytes), or one of the header's constants defined again with its
value ("#define NEGO_HELLO 1", "HELLO, MODE = 1, 2").  The values come
from the header itself, through vecnet_wire.  Exit status 1 when it
finds one.  (A bare 1 or 12 in an expression cannot be told from any
other; the magic beside it, or the name it was given, can.)

Documentation is not read: vecswitch.rst still shows the message's
bytes in a table of its own, until a protocol document takes it over.
"""

import fnmatch
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), ".."))
import vecnet_wire as w    # noqa: E402 pylint: disable=wrong-import-position

# tests and scripts; not Documentation/, whose vecswitch.rst keeps its
# byte table for now (see above)
DIRS = ("tools/testing", "scripts", ".ci")

# Where a literal cannot be avoided, and why
ALLOWED = {
    # the fuzzers' seed inputs: datagrams as the wire carries them, in
    # binary files that no build reads the header for
    "tools/testing/fuzz/*/corpus/*",
}

# names too plain to say on their own that they mean the header's
# constant: HDR_LEN = 12 is virtio's header, MSG_LEN = 12 is ours
NEED_MSG = ("MSG_VERSION", "MSG_LEN")

LITERAL = re.compile(r"\(?\s*(0[xX][0-9a-fA-F]+|[0-9]+)[uUlL]*\s*\)?")
DEFINE = re.compile(r"\s*#\s*define\s+(\w+)\s+(.+)")
ASSIGN = re.compile(r"\s*(?:(?:const|static|readonly|local|declare|"
                    r"export|int|unsigned)\s+)*"
                    r"([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*=(?!=)\s*(.+)")
COMMENT = re.compile(r"\s*(#|//|/\*).*$")


def magic_patterns(magic):
    """The magic as a string, as characters, as bytes in hex"""
    hexes = [f"{ord(c):02x}" for c in magic]
    return [
        re.compile(r"(?<![\w])b?[\"'`]+" + re.escape(magic) + r"(?![A-Z])"),
        re.compile(r"\s*,\s*".join(f"'{c}'" for c in magic)),
        re.compile(r"\s*,\s*".join(f"0x{h}" for h in hexes), re.I),
        re.compile("".join(rf"\\x{h}" for h in hexes), re.I),
        re.compile("0x" + "".join(hexes) + "|0x" + "".join(reversed(hexes)), re.I),
    ]


def tails(uapi):
    """{tail of a name that means the constant: its value}"""
    out = {}
    for name, val in uapi.items():
        if isinstance(val, int):
            out[name if name in NEED_MSG else name.removeprefix("MSG_")] = (name, val)
    return out


def definitions(line):
    """(name, literal value) of each constant the line defines"""
    m = DEFINE.match(line) or ASSIGN.match(line)
    if not m:
        return []
    names = [n.strip() for n in m.group(1).split(",")]
    rhs = COMMENT.sub("", m.group(2)).strip().rstrip(";,").strip()
    vals = [v.strip() for v in rhs.split(",")] if len(names) > 1 else [rhs]
    out = []
    for n, v in zip(names, vals if len(vals) == len(names) else []):
        lit = LITERAL.fullmatch(v)
        if lit:
            out.append((n, int(lit.group(1), 0)))
    return out


def redefined(name, val, known):
    """The header's name for the constant that name = val defines again:
    name is the header's without its prefix (HELLO, F_VNET) or with one
    of the protocol's (NEGO_HELLO, VECNET_MSG_F_VNET), not any name that
    ends alike (XDP_FLAGS_SKB_MODE)"""
    for tail, (uname, uval) in known.items():
        if val == uval and (name == tail or name.endswith("_" + tail) and
                            re.search("MSG|NEGO|VEC", name[:-len(tail)])):
            return uname
    return None


def scan(path, rel, magics, known):
    with open(path, encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            if any(p.search(line) for p in magics):
                yield f"{rel}:{n}: the magic spelled out: {line.strip()}"
            for name, val in definitions(line):
                uname = redefined(name, val, known)
                if uname:
                    yield (f"{rel}:{n}: {name} = {val} is VECNET_{uname} "
                           f"again: {line.strip()}")


def files(top):
    for d in DIRS:
        for root, dirs, names in os.walk(os.path.join(top, d)):
            dirs[:] = [x for x in dirs if x not in (".git", "__pycache__")]
            for name in sorted(names):
                path = os.path.join(root, name)
                rel = os.path.relpath(path, top)
                if os.path.isfile(path) and not os.path.islink(path) and \
                        not any(fnmatch.fnmatch(rel, a) for a in ALLOWED):
                    yield path, rel


def main():
    top = sys.argv[1]
    magics = magic_patterns(w.UAPI["MSG_MAGIC"])
    known = tails(w.UAPI)
    found = [hit for path, rel in files(top) for hit in scan(path, rel, magics, known)]
    for hit in found:
        print(hit)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
