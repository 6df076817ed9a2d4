#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn make bench's raw records into results.json, report.md and plots.

Every ratio compares two figures measured in the same run.
usage: bench-report.py RAW.jsonl OUTDIR
"""

import json
import math
import statistics
import sys
from pathlib import Path


def load(path):
    recs = []
    for n, line in enumerate(Path(path).read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            recs.append(json.loads(line))
        except json.JSONDecodeError as e:
            sys.exit(f"bench-report: {path}:{n}: {e}")
    return recs


def find(recs, suite, case, variant):
    for r in recs:
        if (r["suite"], r["case"], r["variant"]) == (suite, case, variant):
            return r
    return None


TRANSPORT_CASES = [f"{t}-{d}" for t in ("tap", "tap-1M", "raw", "hybrid") for d in ("tx", "rx")] + \
    ["gre-g2g", "l2tpv3-g2g", "bess-g2g"]


G2G_CASES = ["tcp-fwd", "tcp-fwd-1M"]
G2G_VARIANTS = (("bridge", "Linux bridge, two taps"),
                ("vecswitch", "vecswitch, default options"),
                ("switched", "vecswitch --no-shortcut"),
                ("plain", "vecswitch, vnet=0"),
                ("virtio", "virtio_uml on --vhost-user"),
                ("vecswitch-big", "vecswitch, guests with gso_max=262144"),
                ("direct", "direct link, no switch"),
                ("direct-big", "direct link, gso_max=262144"),
                ("bridge-cap1", "Linux bridge, one CPU in all"),
                ("vecswitch-cap1", "vecswitch, default, one CPU in all"),
                ("vecswitch-big-cap1", "vecswitch, gso_max=262144, one CPU in all"),
                ("vecswitch-base", "vecswitch, default, G2G_BASE's kernel"),
                ("vecswitch-big-base", "vecswitch, gso_max=262144, G2G_BASE's kernel"))


LIGHT_PATHS = (("bridge", "two taps on a Linux bridge"),
               ("dgram", "-netdev dgram to vecswitch --dgram"),
               ("stream", "-netdev stream to vecswitch --stream"),
               ("vhost", "-netdev vhost-user to vecswitch --vhost-user"),
               ("vhost-base", "-netdev vhost-user, LIGHT_BASE's vecswitch"))


RR_CASES = ("tcp-1", "tcp-1k", "tcp-1-n8", "tcp-1k-n8", "udp", "udp-n8")

# rr's QEMU light paths, each set against light-bridge
RR_LIGHT_PATHS = (("light-bridge", "QEMU light guests, two taps on a Linux bridge"),
                  ("light-dgram", "QEMU light guests, -netdev dgram to vecswitch"),
                  ("light-stream", "QEMU light guests, -netdev stream to vecswitch"),
                  ("light-vhost", "QEMU light guests, vhost-user to vecswitch"))


NAT_PATHS = (("user", "QEMU -netdev user (libslirp in QEMU)"),
             ("vecnat", "vhost-user to vecswitch --nat (vecnat, libslirp)"),
             ("vecnat-stream", "-netdev stream to vecswitch --nat"),
             ("vecnat-base", "vhost-user to vecswitch --nat, NAT_BASE's build"),
             ("passt", "-netdev stream to passt"))


def ratio(a, b):
    if not a or not b or not b["value"]:
        return None
    return round(a["value"] / b["value"], 3)


def field(r, key):
    """r's KEY as a record of its own (for ratio), None where not measured"""
    if r is None or r.get(key) is None:
        return None
    return {"value": r[key]}


def gbit(r):
    return None if r is None else round(r["value"] / 1e9, 2)


# Below this the bundled driver did not really move data (a failed run):
# a ratio against it would mean nothing
BASELINE_FLOOR = 10e6


def ratios(recs):
    out = []
    for case in TRANSPORT_CASES:
        ours = find(recs, "transports", case, "ours")
        base = find(recs, "transports", case, "baseline")
        if ours and base and base["value"] < BASELINE_FLOOR:
            out.append({"what": f"{case}: ours / bundled driver", "ratio": None,
                        "note": f"the bundled driver moved only {base['value'] / 1e3:.0f} kbit/s"})
            continue
        q = ratio(ours, base)
        if q is not None:
            out.append({"what": f"{case}: ours / bundled driver", "ratio": q})
    for n in (1, 2, 4):
        for v in ("switch", "hub"):
            q = ratio(find(recs, "idle", f"idle{n}", v), find(recs, "idle", "idle0", v))
            if q is not None:
                out.append({"what": f"{v}: {n} idle / 0 idle", "ratio": q})
        q = ratio(find(recs, "idle", f"idle{n}", "switch"), find(recs, "idle", f"idle{n}", "hub"))
        if q is not None:
            out.append({"what": f"{n} idle: switch / hub", "ratio": q})
        q = ratio(find(recs, "idle", f"idle{n}", "elsewhere"), find(recs, "idle", "idle0", "switch"))
        if q is not None:
            out.append({"what": f"{n} idle guests on a second switch / 0 idle", "ratio": q})
        for key, who in (("guest_cpu_per_gbit", "guests'"), ("switch_cpu_per_gbit", "switch's")):
            q = ratio(field(find(recs, "idle", f"idle{n}", "hub"), key),
                      field(find(recs, "idle", f"idle{n}", "switch"), key))
            if q is not None:
                out.append({"what": f"{n} idle: {who} CPU per Gbit, hub / switch", "ratio": q})
    for size in ("64B", "1514B"):
        for other in ("hub", "vde_switch", "vecswitch-base"):
            q = ratio(find(recs, "rate", size, "vecswitch"), find(recs, "rate", size, other))
            if q is not None:
                out.append({"what": f"forwarding {size}, 2 idle ports: vecswitch / {other}", "ratio": q})
    # guest to guest: vecswitch by default against the Linux bridge
    for case in G2G_CASES:
        sw = find(recs, "g2g", case, "vecswitch")
        br = find(recs, "g2g", case, "bridge")
        plain = find(recs, "g2g", case, "plain")
        switched = find(recs, "g2g", case, "switched")
        virtio = find(recs, "g2g", case, "virtio")
        for a, b, what in ((sw, br, "vecswitch (default) / Linux bridge"),
                           (virtio, br, "virtio_uml on --vhost-user / Linux bridge"),
                           (virtio, sw, "virtio_uml on --vhost-user / vecN: (default)"),
                           (switched, br, "vecswitch --no-shortcut / Linux bridge"),
                           (sw, switched, "vecswitch: shortcut / --no-shortcut"),
                           (plain, br, "vecswitch, plain frames (vnet=0) / Linux bridge"),
                           (sw, plain, "vecswitch: default (headers) / plain frames")):
            q = ratio(a, b)
            if q is not None:
                out.append({"what": f"guest-guest {case}: {what}", "ratio": q})
        for v, what in (("vecswitch-big", "vecswitch, gso_max=262144"),
                        ("direct", "direct link"), ("direct-big", "direct link, gso_max=262144")):
            q = ratio(find(recs, "g2g", case, v), br)
            if q is not None:
                out.append({"what": f"guest-guest {case}: {what} / Linux bridge", "ratio": q})
        for v, what in (("vecswitch", "default"), ("vecswitch-big", "gso_max=262144")):
            # the variants take turns: run k of one against run k of the other
            a = (find(recs, "g2g", case, v) or {}).get("runs") or []
            b = (find(recs, "g2g", case, v + "-base") or {}).get("runs") or []
            qs = [x / y for x, y in zip(a, b) if y]
            if qs and len(a) == len(b):
                out.append({"what": f"guest-guest {case}, vecswitch {what}: this driver / "
                                    "G2G_BASE's (median of the runs' ratios)",
                            "ratio": round(statistics.median_low(qs), 3)})
        for v, what in (("vecswitch-cap1", "vecswitch (default)"),
                        ("vecswitch-big-cap1", "vecswitch, gso_max=262144")):
            q = ratio(find(recs, "g2g", case, v), find(recs, "g2g", case, "bridge-cap1"))
            if q is not None:
                out.append({"what": f"guest-guest {case}, one CPU for guests and switch: "
                                    f"{what} / Linux bridge", "ratio": q})
        q = ratio(field(br, "guest_cpu_per_gbit"), field(sw, "guest_cpu_per_gbit"))
        if q is not None:
            out.append({"what": f"guest-guest {case}: guests' CPU per Gbit, bridge / vecswitch",
                        "ratio": q})
    # 64-byte UDP guest to guest: frames a second received, against the bridge
    br = find(recs, "small", "udp64", "bridge")
    for v, what in (("vecswitch", "vecswitch (default)"), ("switched", "vecswitch --no-shortcut"),
                    ("hub", "vecswitch --hub")):
        q = ratio(find(recs, "small", "udp64", v), br)
        if q is not None:
            out.append({"what": f"64-byte UDP frames/s guest-guest: {what} / Linux bridge",
                        "ratio": q})
    # receive coalescing (rx-usecs, the default) against none, on each path
    for v in ("bridge", "vecswitch"):
        q = ratio(find(recs, "small", "udp64", v), find(recs, "small", "udp64", f"{v}-rx0"))
        if q is not None:
            out.append({"what": f"64-byte UDP frames/s guest-guest, {v}: rx-usecs 500 / 0",
                        "ratio": q})
    # two-CPU guests: two queues against one, on each path and load
    for case in ("tcp4", "udp64"):
        for path in ("bridge", "vecswitch", "switched", "switched-usecs50",
                     "switched-adaptive", "switched-softirq"):
            q = ratio(find(recs, "mq", case, f"{path}-q2"), find(recs, "mq", case, f"{path}-q1"))
            if q is not None:
                out.append({"what": f"2-CPU guests, {case}, {path}: queues=2 / queues=1",
                            "ratio": q})
        for path in ("vecswitch", "switched"):
            q = ratio(find(recs, "mq", case, f"{path}-q2"), find(recs, "mq", case, "bridge-q2"))
            if q is not None:
                out.append({"what": f"2-CPU guests, {case}, queues=2: {path} / bridge",
                            "ratio": q})
        for q_ in ("q1", "q2"):
            for v, what in (("usecs50", "tx-usecs 50 / 0"), ("adaptive", "adaptive-tx on / off"),
                            ("softirq", "NAPI in softirq / in threads")):
                q = ratio(find(recs, "mq", case, f"switched-{v}-{q_}"),
                          find(recs, "mq", case, f"switched-{q_}"))
                if q is not None:
                    out.append({"what": f"2-CPU guests, {case}, --no-shortcut {q_}: {what}",
                                "ratio": q})
    # QEMU light guests: each path against the bridge (the median of the
    # runs' own ratios), vhost-user against the datagram path
    for p, what in LIGHT_PATHS[1:]:
        r = find(recs, "light", "tcp-per-bridge", p)
        if r is not None:
            out.append({"what": f"light guests: {what} / Linux bridge", "ratio": r["value"]})
    vh = find(recs, "light", "tcp", "vhost")
    for other in ("dgram", "stream", "vhost-base"):
        ot = find(recs, "light", "tcp", other)
        name = "--vhost-user, LIGHT_BASE's vecswitch" if other == "vhost-base" else f"--{other}"
        for q, what in ((ratio(vh, ot), f"--vhost-user / {name}"),
                        (ratio(field(ot, "switch_cpu_per_gbit"), field(vh, "switch_cpu_per_gbit")),
                         f"switch CPU per Gbit, {name} / --vhost-user")):
            if q is not None:
                out.append({"what": f"light guests: {what}", "ratio": q})
    # user-mode NATs: each against QEMU's -netdev user (the median of the
    # runs' own ratios)
    for d in ("out", "in"):
        for p, what in NAT_PATHS[1:]:
            r = find(recs, "nat", f"tcp-{d}-per-user", p)
            if r is not None:
                out.append({"what": f"NAT, TCP {d}: {what} / -netdev user", "ratio": r["value"]})
        base = find(recs, "nat", f"tcp-{d}", "vecnat-base")
        for case, what in ((f"tcp-{d}", "rate"), (f"tcp-{d}-nat-cpu", "NAT process CPU per Gbit")):
            q = ratio(find(recs, "nat", case, "vecnat"), find(recs, "nat", case, "vecnat-base"))
            if base is not None and q is not None:
                out.append({"what": f"NAT, TCP {d}, {what}: vecnat / NAT_BASE's build", "ratio": q})
    # plain peers: the switch's CPU per frame on --dgram over --stream
    q = ratio(find(recs, "plain", "1514B", "dgram"), find(recs, "plain", "1514B", "stream"))
    if q is not None:
        out.append({"what": "switch CPU per plain frame, --dgram / --stream", "ratio": q})
    # a pinging pair beside a flooder: what the flood adds to its round trip
    for key, what in (("shortcut", "default options"), ("switched", "--no-shortcut")):
        q = ratio(find(recs, "flood", f"ping-rtt-flood-{key}", "pair"),
                  find(recs, "flood", f"ping-rtt-quiet-{key}", "pair"))
        if q is not None:
            out.append({"what": f"pair's ping round trip, flooded / quiet, {what}", "ratio": q})
    # both drivers on both kernel series (the bundled one built without SMP)
    for case in (f"tap-1M-{d}" for d in ("tx", "rx")):
        for a, b in (("ours-7.3", "bundled-7.3"), ("ours-6.12", "bundled-6.12"),
                     ("ours-7.3", "ours-6.12"), ("bundled-7.3", "bundled-6.12")):
            q = ratio(find(recs, "kernels", case, a), find(recs, "kernels", case, b))
            if q is not None:
                out.append({"what": f"{case}: {a} / {b}", "ratio": q})
    tap = find(recs, "transports", "tap-tx", "baseline")
    q = ratio(find(recs, "g2g", "tcp-fwd", "vecswitch"), tap)
    if q is not None:
        out.append({"what": "guest-guest via vecswitch / bundled tap guest->host", "ratio": q})
    q = ratio(find(recs, "vxlan", "g2g-mtu1450", "cross-host"),
              find(recs, "vxlan", "g2g-mtu1450", "same-host"))
    if q is not None:
        out.append({"what": "guest-guest, MTU 1450: across hosts (VXLAN) / one host", "ratio": q})
    # each fault against the same load without it, then the loads
    for v, base, what in (("unlinked", "alone", "the switch's socket file deleted under it"),
                          ("stopped", "flooded", "a flooded guest stopped (SIGSTOP)"),
                          ("killed", "busy", "a guest killed (SIGKILL) mid-transfer"),
                          ("flooded", "alone", "a guest flooded with UDP"),
                          ("busy", "alone", "two other guests exchanging TCP")):
        q = ratio(find(recs, "faults", "pair", v), find(recs, "faults", "pair", base))
        if q is not None:
            out.append({"what": f"pair, {what}: {v} / {base}", "ratio": q})
    return out


def blank(v):
    return "" if v is None else f"{v}"


def report(recs, rat):
    lines = ["# make bench results", "",
             "Medians of repeated runs; every ratio compares figures from the same run.", "",
             "Guests and switch: the CPU seconds they used per Gbit moved while the flow ran "
             "(every guest on the host, idle ones included; blank where not measured). "
             "CPU s: the switch's CPU seconds over the flow.", "",
             "| suite | case | variant | value | runs (lowest-highest) | guests CPU s/Gbit "
             "| switch CPU s/Gbit | CPU s |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in recs:
        runs = r.get("runs") or []
        if r["unit"] == "bit/s":
            v = f"{r['value'] / 1e9:.2f} Gbit/s"
            span = f"{min(runs) / 1e9:.2f}-{max(runs) / 1e9:.2f}" if runs else ""
        else:
            v = f"{r['value']} {r['unit']}"
            span = f"{min(runs)}-{max(runs)}" if runs else ""
        cpu, gcpu, scpu = (blank(r.get(k)) for k in ("cpu_s", "guest_cpu_per_gbit",
                                                     "switch_cpu_per_gbit"))
        lines.append(f"| {r['suite']} | {r['case']} | {r['variant']} | {v} | {span} "
                     f"| {gcpu} | {scpu} | {cpu} |")
    if any(r["suite"] == "kernels" for r in recs):
        lines += ["", "kernels: the bundled driver runs on a 7.3 build without SMP; "
                  "with SMP it takes a lock inside a queue tap never allocates and the "
                  "guest dies when the device comes up. Ours runs on the SMP build, "
                  "with one CPU (no ncpus=)."]
    lines += light_table(recs)
    lines += rr_table(recs)
    lines += nat_table(recs)
    lines += ["", "| comparison | ratio |", "| --- | --- |"]
    lines += [f"| {x['what']} | {x.get('note') or x['ratio']} |" for x in rat]
    return "\n".join(lines) + "\n"


def runs_rel(recs, suite, rel_case, base, p, r):
    """A table's cells for path P's rate record R: its runs in Gbit/s, and
    its ratio record REL_CASE of SUITE ("1" for the baseline path BASE)"""
    runs = " ".join(f"{v / 1e9:.2f}" for v in r.get("runs") or [])
    rel = find(recs, suite, rel_case, p)
    return runs, "1" if p == base else blank(rel and rel["value"])


def light_table(recs):
    """The light suite's paths side by side, [] when it did not run"""
    rows = [(p, what, find(recs, "light", "tcp", p)) for p, what in LIGHT_PATHS]
    if not any(r for _, _, r in rows):
        return []
    lines = ["", "## Light guests (two QEMU guests under TCG, iperf3 TCP)", "",
             "/ bridge: the median of each run's rate against the bridge's in the same run. "
             "CPU s/Gbit: CPU seconds per Gbit moved while the flow ran, of the switch and "
             "of both QEMU processes. Kicks and calls a frame (vhost-user): the eventfd "
             "notifications the switch took from and gave to the guests over the flow, per "
             "frame it forwarded. Rest of host: the CPU seconds everything else on the "
             "host used during each flow (other work on a shared machine).", "",
             "| path | Gbit/s (median) | runs, Gbit/s | / bridge | switch CPU s/Gbit "
             "| QEMU CPU s/Gbit | kicks a frame | calls a frame | rest of host, CPU s |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for p, what, r in rows:
        if r is None:
            continue
        runs, rel = runs_rel(recs, "light", "tcp-per-bridge", "bridge", p, r)
        other = find(recs, "light", "host-other-cpu", p)
        other = " ".join(f"{v}" for v in (other or {}).get("runs") or [])
        kicks = find(recs, "light", "kicks-per-frame", p)
        calls = find(recs, "light", "calls-per-frame", p)
        lines.append(f"| {p}: {what} | {r['value'] / 1e9:.2f} | {runs} | {rel} "
                     f"| {blank(r.get('switch_cpu_per_gbit'))} "
                     f"| {blank(r.get('guest_cpu_per_gbit'))} "
                     f"| {blank(kicks and kicks['value'])} | {blank(calls and calls['value'])} "
                     f"| {other} |")
    return lines


def nat_table(recs):
    """The nat suite: each NAT both ways, [] when it did not run"""
    lines = []
    for d, what in (("out", "guest to a server outside"), ("in", "outside to the guest, through a forward")):
        rows = [(p, w, find(recs, "nat", f"tcp-{d}", p)) for p, w in NAT_PATHS]
        if not any(r for _, _, r in rows):
            continue
        if not lines:
            lines = ["", "## User-mode NAT (one QEMU light guest under TCG, iperf3 TCP)", "",
                     "/ user: the median of each run's rate against -netdev user's in the same "
                     "run. CPU s/Gbit over the flow: of the QEMU process (which holds the NAT "
                     "for -netdev user), of the NAT process where it is one, and of the switch."]
        lines += ["", f"TCP {d}: {what}", "",
                  "| NAT | Gbit/s (median) | runs, Gbit/s | / user | QEMU CPU s/Gbit "
                  "| NAT process CPU s/Gbit | switch CPU s/Gbit |",
                  "| --- | --- | --- | --- | --- | --- | --- |"]
        for p, w, r in rows:
            if r is None:
                continue
            runs, rel = runs_rel(recs, "nat", f"tcp-{d}-per-user", "user", p, r)
            nat = find(recs, "nat", f"tcp-{d}-nat-cpu", p)
            lines.append(f"| {p}: {w} | {r['value'] / 1e9:.2f} | {runs} | {rel} "
                         f"| {blank(r.get('guest_cpu_per_gbit'))} | {blank(nat and nat['value'])} "
                         f"| {blank(r.get('switch_cpu_per_gbit'))} |")
    return lines


def rr_base(path):
    """The bridge an rr path is set against: the one of its kind"""
    return "light-bridge" if path.startswith("light-") else "bridge"


def rr_cases_paths(recs):
    """rr's cases and paths, in the order they ran and G2G_VARIANTS's"""
    cases, paths = [], []
    for r in recs:
        if r["suite"] != "rr":
            continue
        case = r["case"].split("/")[0]
        if case not in cases:
            cases.append(case)
        if r["variant"] not in paths:
            paths.append(r["variant"])
    order = [v for v, _ in G2G_VARIANTS + RR_LIGHT_PATHS]
    paths.sort(key=lambda p: order.index(p) if p in order else len(order))
    cases.sort(key=lambda c: RR_CASES.index(c) if c in RR_CASES else len(RR_CASES))
    return cases, paths


def rr_val(recs, case, path, f):
    r = find(recs, "rr", f"{case}/{f}", path)
    return r and r["value"]


def rr_table(recs):
    """The rr suite: per case, each path's round trips beside the
    bridge's; [] when it did not run"""
    cases, paths = rr_cases_paths(recs)
    if not cases:
        return []
    lines = ["", "## Round trips (rr: vswrr between the g2g guests and the light guests)", "",
             "Medians of the runs. / bridge: transactions a second, and the 99th "
             "percentile round trip, against the bridge's in the same run (the median of "
             "the per-run ratios; UML paths against the UML bridge, light-* paths against "
             "light-bridge; a rate above 1 and a p99 below 1 are better).", "",
             "| case | path | transactions/s | p50 us | p99 us | p99.9 us "
             "| tps / bridge | p99 / bridge |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]

    for case in cases:
        for path in paths:
            tps = rr_val(recs, case, path, "tps")
            if tps is None:
                continue
            base = rr_base(path)
            rel = [rr_val(recs, case, path, f"{x}-per-bridge") for x in ("tps", "p99")]
            if path == base:
                rel = [1, 1]
            lines.append(f"| {case} | {path} | {tps} | {blank(rr_val(recs, case, path, 'p50_us'))} "
                         f"| {blank(rr_val(recs, case, path, 'p99_us'))} "
                         f"| {blank(rr_val(recs, case, path, 'p999_us'))} "
                         f"| {blank(rel[0])} | {blank(rel[1])} |")
    lines += rr_chart(recs, cases, paths)
    return lines


RR_CHART_WIDTH = 48


def rr_chart(recs, cases, paths):
    """A text chart of each case's round trip percentiles, one row a
    path on a log scale shared by the case's paths: '=' up to p50, '-' on
    to p99, '+' at p99.9 (the PNG rr-latency.png, where matplotlib is,
    draws the same)"""
    lines = ["", "Round trip percentiles, log scale per case: `=` to p50, `-` to p99, "
             "`+` at p99.9 (rr-latency.png where matplotlib is installed).", "", "```"]
    for case in cases:
        rows = [(p, [rr_val(recs, case, p, f) for f in ("p50_us", "p99_us", "p999_us")])
                for p in paths]
        rows = [(p, v) for p, v in rows if all(v)]
        if not rows:
            continue
        lo = math.log10(min(v[0] for _, v in rows)) - 0.05
        hi = math.log10(max(v[2] for _, v in rows))
        span = max(hi - lo, 1e-9)

        def col(us):
            return max(1, round((math.log10(us) - lo) / span * RR_CHART_WIDTH))

        lines.append(f"{case}")
        for p, (p50, p99, p999) in rows:
            a, b, c = col(p50), col(p99), col(p999)
            bar = "=" * a + "-" * max(b - a, 0)
            bar = bar.ljust(c - 1) + "+"
            lines.append(f"  {p:<16} {bar:<{RR_CHART_WIDTH + 1}} {p50:g} / {p99:g} / {p999:g} us")
    return lines + ["```"]


def ratio_of(a, b):
    return round(a / b, 3) if a and b else None


def plots(recs, outdir):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("bench-report: matplotlib missing, no plots (run 'scripts/deps.sh bench')")
        return
    idle = [n for n in (0, 1, 2, 4) if find(recs, "idle", f"idle{n}", "switch")]
    if idle:
        fig, (ax, cx) = plt.subplots(1, 2, figsize=(11, 4))
        for v in ("switch", "hub"):
            label = "vecswitch" if v == "switch" else "vecswitch --hub"
            rs = [find(recs, "idle", f"idle{n}", v) for n in idle]
            ax.plot(idle, [gbit(r) for r in rs], marker="o", label=label)
            # the CPU every guest and the switch spent per Gbit the pair moved
            cpu = [None if r is None or r.get("guest_cpu_per_gbit") is None
                   or r.get("switch_cpu_per_gbit") is None
                   else r["guest_cpu_per_gbit"] + r["switch_cpu_per_gbit"] for r in rs]
            cx.plot(idle, cpu, marker="o", label=label)
        ax.set_xlabel("idle guests attached")
        ax.set_ylabel("pair TCP throughput, Gbit/s")
        ax.set_ylim(bottom=0)
        ax.legend()
        ax.set_title("One guest pair's throughput as idle guests attach")
        ax.set_xticks(idle)
        cx.set_xticks(idle)
        cx.set_xlabel("idle guests attached")
        cx.set_ylabel("CPU s per Gbit (all guests and the switch)")
        cx.set_ylim(bottom=0)
        cx.legend()
        cx.set_title("Host CPU per Gbit the pair moved")
        fig.tight_layout()
        fig.savefig(outdir / "idle-scaling.png", dpi=100)
        plt.close(fig)
    sizes = [z for z in ("64B", "1514B") if find(recs, "rate", z, "vecswitch")]
    if sizes:
        fig, ax = plt.subplots(figsize=(6, 4))
        w = 0.27
        for i, v in enumerate(("vecswitch", "hub", "vde_switch")):
            ys = [(find(recs, "rate", z, v) or {"value": 0})["value"] for z in sizes]
            ax.bar([x + i * w for x in range(len(sizes))], ys, w,
                   label="vecswitch --hub" if v == "hub" else v)
        ax.set_xticks([x + w for x in range(len(sizes))], sizes)
        ax.set_ylabel("Mpps delivered")
        ax.legend()
        ax.set_title("Port-to-port forwarding, 2 idle ports attached")
        fig.tight_layout()
        fig.savefig(outdir / "switch-rate.png", dpi=100)
        plt.close(fig)
    cases = [c for c in G2G_CASES if find(recs, "g2g", c, "bridge")]
    if cases:
        fig, (ax, cx) = plt.subplots(1, 2, figsize=(11, 4))
        w = 0.8 / len(G2G_VARIANTS)
        for i, (v, label) in enumerate(G2G_VARIANTS):
            rs = [find(recs, "g2g", c, v) for c in cases]
            xs = [x + i * w for x in range(len(cases))]
            ax.bar(xs, [gbit(r) or 0 for r in rs], w, label=label)
            cx.bar(xs, [((r or {}).get("guest_cpu_per_gbit") or 0) +
                        ((r or {}).get("switch_cpu_per_gbit") or 0) for r in rs], w, label=label)
        for a in (ax, cx):
            a.set_xticks([x + w * (len(G2G_VARIANTS) - 1) / 2 for x in range(len(cases))],
                         cases)
            a.legend()
        ax.set_ylabel("TCP guest to guest, Gbit/s")
        ax.set_title("The same two guests, four paths")
        cx.set_ylabel("CPU s per Gbit (guests and switch)")
        cx.set_title("Host CPU per Gbit moved")
        fig.tight_layout()
        fig.savefig(outdir / "g2g.png", dpi=100)
        plt.close(fig)
    rr_plot(recs, plt, outdir)
    cases = [c for c in TRANSPORT_CASES if find(recs, "transports", c, "baseline")]
    if cases:
        fig, ax = plt.subplots(figsize=(8, 4))
        w = 0.38
        for i, v in enumerate(("baseline", "ours")):
            ys = [gbit(find(recs, "transports", c, v)) or 0 for c in cases]
            ax.bar([x + i * w for x in range(len(cases))], ys, w,
                   label="bundled vector driver" if v == "baseline" else "vecnet")
        ax.set_xticks([x + w / 2 for x in range(len(cases))], cases)
        ax.set_ylabel("Gbit/s")
        ax.legend()
        ax.set_title("Transports against the bundled driver")
        fig.tight_layout()
        fig.savefig(outdir / "transports.png", dpi=100)
        plt.close(fig)


def rr_plot(recs, plt, outdir):
    """rr-latency.png: per case, each path's p50, p99 and p99.9 round
    trip on a log scale"""
    cases, paths = rr_cases_paths(recs)
    paths = [p for p in paths if any(rr_val(recs, c, p, "p99_us") for c in cases)]
    if not cases or not paths:
        return
    fig, axes = plt.subplots(1, len(cases), figsize=(3.2 * len(cases) + 1, 4), squeeze=False)
    for ax, case in zip(axes[0], cases):
        for i, p in enumerate(paths):
            v = [rr_val(recs, case, p, f) or 0 for f in ("p50_us", "p99_us", "p999_us")]
            if not v[0]:
                continue
            # a bar to p99, p50 and p99.9 as ticks on it
            ax.bar(i, v[1], 0.7, color=f"C{i % 10}", label=p)
            ax.plot([i - 0.35, i + 0.35], [v[0], v[0]], color="black")
            ax.plot([i], [v[2]], marker="^", color="black")
        ax.set_yscale("log")
        ax.set_xticks([])
        ax.set_title(case)
    axes[0][0].set_ylabel("round trip, us (bar p99, line p50, ^ p99.9)")
    axes[0][-1].legend(fontsize="small", loc="upper left", bbox_to_anchor=(1, 1))
    fig.tight_layout()
    fig.savefig(outdir / "rr-latency.png", dpi=100)
    plt.close(fig)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: bench-report.py RAW.jsonl OUTDIR")
    recs = load(sys.argv[1])
    outdir = Path(sys.argv[2])
    rat = ratios(recs)
    (outdir / "results.json").write_text(json.dumps({"records": recs, "ratios": rat}, indent=2) + "\n")
    text = report(recs, rat)
    (outdir / "report.md").write_text(text)
    plots(recs, outdir)
    print(text)


if __name__ == "__main__":
    main()
