#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Frames, headers and checksums built outside vecnet_wire.py.

    py_builders.py TOP

../vecnet_wire.py is the one module that builds what the Python tests
and probes put on the wire: Ethernet frames, IPv4, IPv6, TCP and UDP
headers, virtio-net headers and Internet checksums.  A second copy of
one drifts from the first.  This lists, for TOP's tests (tools/testing)
and scripts (scripts/, .ci/):

  - a top-level function name that two of the tests' Python files define
    (a builder copied into a second file, or two helpers one of which
    should be vecnet_wire's), but main;
  - in Python files and the Python inside shell scripts, a header's
    layout spelled as a struct format (IPv4's "!BBHHHBBH4s4s", TCP's
    "!HHIIBBHHH", UDP's "!HHHH", IPv6's "!IHBB...", virtio-net's
    "<BBHHHH"), a checksum's sum of 16-bit words ("!%dH"), or an
    Ethernet header glued by hand (b"\\xff" * 6 + ..., + b"\\x08\\x00" +).

Exit status 1 when it finds one.
"""

import ast
import os
import re
import sys

DIRS = ("tools/testing", "scripts", ".ci")
WIRE = "tools/testing/selftests/drivers/net/vecnet_wire.py"
# this file names the layouts it looks for
SELF = "tools/testing/selftests/drivers/net/vecnet/py_builders.py"

# names every script may define for itself
COMMON = {"main"}

FMT = r"""["'][!<>=@]?"""
LAYOUTS = [
    ("an IPv4 header's layout", re.compile(FMT + r"BBHHHBBH4s4s")),
    ("a TCP header's layout", re.compile(FMT + r"HHIIBBHHH[\"']")),
    ("a UDP header's layout", re.compile(FMT + r"HHHH[\"']")),
    ("an IPv6 header's layout", re.compile(FMT + r"IHBB(16s16s)?[\"']")),
    ("a virtio-net header's layout", re.compile(r"""["'][<=]?BBHHHHH?[\"']""")),
    ("a checksum's sum of 16-bit words",
     re.compile(r"""["']!(%d|\{[^}]*\})H["']""")),
    ("an Ethernet header glued by hand",
     re.compile(r"""b["']\\xff["']\s*\*\s*6\s*\+|"""
                r"""\+\s*b["'](\\x08\\x00|\\x08\\x06|\\x86\\xdd|\\x81\\x00|"""
                r"""\\x88\\xb5)["']\s*\+""", re.I)),
]


def sources(top, exts, dirs=DIRS):
    for d in dirs:
        for root, dirs, names in os.walk(os.path.join(top, d)):
            dirs[:] = [x for x in dirs if x not in (".git", "__pycache__")]
            for name in sorted(names):
                path = os.path.join(root, name)
                if name.endswith(exts) and os.path.isfile(path) and \
                        not os.path.islink(path):
                    yield path, os.path.relpath(path, top)


def defined_twice(top):
    where = {}
    for path, rel in sources(top, (".py",), ("tools/testing",)):
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), rel)
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                    node.name not in COMMON:
                where.setdefault(node.name, []).append(f"{rel}:{node.lineno}")
    for name, at in sorted(where.items()):
        if len(at) > 1:
            yield f"{name}() defined in {len(at)} files: {', '.join(at)}"


def spelled_again(top):
    for path, rel in sources(top, (".py", ".sh")):
        if rel in (WIRE, SELF):
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            for n, line in enumerate(f, 1):
                for what, pat in LAYOUTS:
                    if pat.search(line):
                        yield f"{rel}:{n}: {what}, not vecnet_wire's: {line.strip()}"


def main():
    top = sys.argv[1]
    if not os.path.isfile(os.path.join(top, WIRE)):
        print(f"no {WIRE} under {top}")
        return 1
    found = list(defined_twice(top)) + list(spelled_again(top))
    for hit in found:
        print(hit)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
