#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Which file of the switch calls into which, from the sources.

vecswitch-deps.py [--check] [DIR]

DIR defaults to tools/net/vecswitch.  A file "calls" another when it
names a vs_* function defined there (static inlines in the header do not
count).  Prints one line per file, callers first, then any cycle; with
--check exits 1 when there is a cycle, so that the calls keep pointing
one way.
"""

import os
import re
import sys


def graph(d):
    src, defs = {}, {}
    for f in sorted(os.listdir(d)):
        if not f.endswith(".c"):
            continue
        with open(os.path.join(d, f), encoding="utf-8") as fh:
            s = fh.read()
        s = re.sub(r"/\*.*?\*/", "", s, flags=re.S)
        s = re.sub(r'"(\\.|[^"\\])*"', '""', s)
        src[f[:-2]] = s
        for m in re.finditer(r"^[a-z][\w \*]*?\b(vs_\w+)\(", s, flags=re.M):
            defs[m.group(1)] = f[:-2]
    edges = {f: set() for f in src}
    for f, s in src.items():
        for name in set(re.findall(r"\b(vs_\w+)\s*\(", s)):
            g = defs.get(name)
            if g and g != f:
                edges[f].add(g)
    return edges


def cycles(edges):
    """The strongly connected components of more than one file."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def main():
    args = [a for a in sys.argv[1:] if a != "--check"]
    d = args[0] if args else os.path.join(os.path.dirname(__file__), "..",
                                          "tools", "net", "vecswitch")
    edges = graph(d)
    # callers first: a file after every file that calls it
    order, seen = [], set()

    def place(v):
        if v in seen:
            return
        seen.add(v)
        for w in sorted(edges[v]):
            place(w)
        order.append(v)

    for v in sorted(edges):
        place(v)
    for v in reversed(order):
        print(f"{v + '.c':12} -> {' '.join(sorted(w + '.c' for w in edges[v])) or '-'}")
    found = cycles(edges)
    for c in found:
        print("cycle: " + " ".join(f + ".c" for f in c))
    if "--check" in sys.argv and found:
        sys.exit(1)


if __name__ == "__main__":
    main()
