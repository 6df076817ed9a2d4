# SPDX-License-Identifier: GPL-2.0
"""Which C file of a directory calls into which, from the sources.

The shared part of vecswitch-deps.py (the switch) and vecnet-deps.py
(the guest driver).  A file "calls" another when it names a function of
the given prefix that the other defines, followed by "(".  A
function-like macro or a static inline function of the directory's
headers stands for what it calls: a file that uses vecnet_count_tx()
calls the file that defines the counter helper the macro expands to.
A table of operations (a transport's, net_device_ops) names no call:
it is how a lower file is reached from above on purpose.  Except the
tables named as "through" (the switch's I/O backends, struct vs_io_ops):
a file that calls one of their members (->wait(...)) calls every file
that fills one in, so that a backend calling back up into the loop that
calls it shows as the cycle it is.

report() prints one line per file, callers first, then any cycle.
"""

import os
import re
import sys


def _strip(s):
    s = re.sub(r"/\*.*?\*/", "", s, flags=re.S)
    s = re.sub(r"//[^\n]*", "", s)
    return re.sub(r'"(\\.|[^"\\])*"', '""', s)


def _calls(s, prefix):
    return set(re.findall(r"\b(%s\w+)\s*\(" % prefix, s))


def _header_aliases(d, prefix):
    """{macro or static inline: the prefix names it calls}, resolved
    through each other, from the .h files of @d"""
    direct = {}
    for f in sorted(os.listdir(d)):
        if not f.endswith(".h"):
            continue
        with open(os.path.join(d, f), encoding="utf-8") as fh:
            s = _strip(fh.read())
        s = s.replace("\\\n", " ")
        for m in re.finditer(r"^#define\s+(%s\w+)\(([^)]*)\)(.*)$" % prefix,
                             s, flags=re.M):
            direct[m.group(1)] = _calls(m.group(3), prefix)
        for m in re.finditer(r"^static inline [\w \*]*?\b(%s\w+)\(.*?^}" %
                             prefix, s, flags=re.M | re.S):
            direct[m.group(1)] = _calls(m.group(0)[m.end(1):], prefix)
    resolved = {}

    def resolve(name, seen):
        if name in resolved:
            return resolved[name]
        out = set()
        for n in direct[name]:
            if n in direct and n not in seen:
                out |= resolve(n, seen | {n})
            elif n not in direct:
                out.add(n)
        resolved[name] = out
        return out

    for name in direct:
        resolve(name, {name})
    return resolved


def _through(src, types):
    """{member called through: the files whose tables of @types fill it}"""
    fills = {}
    for f, s in src.items():
        for t in types:
            for m in re.finditer(r"\bstruct\s+%s\s+\w+\s*=\s*{(.*?)};" % t,
                                 s, flags=re.S):
                for member in re.findall(r"\.(\w+)\s*=\s*[a-z_]\w*\s*,",
                                         m.group(1)):
                    fills.setdefault(member, set()).add(f)
    return fills


def graph(d, prefix, through=()):
    """{file without .c: the files it calls}; @through: the ops tables
    whose calls count (see above)"""
    src, defs = {}, {}
    for f in sorted(os.listdir(d)):
        if not f.endswith(".c"):
            continue
        with open(os.path.join(d, f), encoding="utf-8") as fh:
            s = _strip(fh.read())
        src[f[:-2]] = s
        for m in re.finditer(r"^[a-z][\w \*]*?\b(%s\w+)\(" % prefix, s,
                             flags=re.M):
            defs[m.group(1)] = f[:-2]
    aliases = _header_aliases(d, prefix)
    fills = _through(src, through)
    edges = {f: set() for f in src}
    for f, s in src.items():
        for name in _calls(s, prefix):
            for target in aliases.get(name, {name}):
                g = defs.get(target)
                if g and g != f:
                    edges[f].add(g)
        for member in re.findall(r"->(\w+)\s*\(", s):
            edges[f] |= fills.get(member, set()) - {f}
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


def report(edges, check):
    """Print the graph, callers first, and its cycles; with @check, exit
    1 when there is a cycle, or no call at all (nothing was read)"""
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
    width = max([12] + [len(v) + 2 for v in edges])
    for v in reversed(order):
        print(f"{v + '.c':{width}} -> "
              f"{' '.join(sorted(w + '.c' for w in edges[v])) or '-'}")
    found = cycles(edges)
    for c in found:
        print("cycle: " + " ".join(f + ".c" for f in c))
    if not any(edges.values()):
        print("no file calls another: is this the right directory?")
        found = True
    if check and found:
        sys.exit(1)


def main(prefix, default_dir, through=()):
    """The command line of the scripts: [--check] [DIR]"""
    args = [a for a in sys.argv[1:] if a != "--check"]
    d = args[0] if args else default_dir
    report(graph(d, prefix, through), "--check" in sys.argv)
