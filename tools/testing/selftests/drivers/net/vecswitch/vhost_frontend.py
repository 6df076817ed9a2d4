#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A vhost-user-net front-end, to test vecswitch's --vhost-user ports.

    vhost_frontend.py --sock VHOST_SOCK --ctl CTL_SOCK --dgram DGRAM_SOCK \
        --tmp DIR [--log SWITCH_LOG] [--pid SWITCH_PID] CASE...

It speaks the protocol of QEMU's docs/interop/vhost-user.rst as a guest's
front-end would: guest memory in a memfd (two regions, at guest and user
addresses unlike each other and unlike the file offsets), split virtqueues
(virtio 1.x) for queue 0 (receive) and queue 1 (transmit), eventfds or
pipes for kick and call.  Every message that has no reply of its own is
sent with need_reply once REPLY_ACK is agreed, and its ack must be 0.

Cases (each ends "PASS: case" or "FAIL: case: what, expected, got";
the exit status is 1 when one failed):

  pair       A broadcasts, B and C get it whole (C: legacy 10-byte header,
             pipes, chained buffers), B answers A by unicast, which A
             alone gets; ctl fdb shows A and B on their ports
  tso        a 64 KiB TCP super-frame from A reaches B (GUEST_TSO4) whole
             with its header, over mergeable 4 KiB buffers, and a plain
             --dgram peer cut into segments with valid checksums
  tso_seg    B without GUEST_TSO4/GUEST_CSUM gets it as checksummed
             segments, and a frame whose checksum is pending finished
  rings      chained, indirect and header-splitting TX chains, chained
             RX buffers, EVENT_IDX on both sides, disabled rings
  chains     long chains the spec allows: 80 TX descriptors, a super-frame
             over 85 small mergeable buffers
  reconnect  GET_VRING_BASE after traffic, a stopped ring stays stopped,
             a frontend that goes is removed within a second, one that
             comes back at once (ring bases near the 16-bit wrap) works
  rewrite    A sends frames to B whose destination a thread of A keeps
             rewriting to C's address and back in guest memory while the
             switch reads them: B and C each get only frames addressed to
             them (the switch never reads again what it decided on)
  hostile    bad descriptors, rings, memory tables, messages, file
             descriptors and a memfd shrunk under the switch: each ends
             the hostile connection (or is answered with an error), is
             logged, and leaves a well-behaved pair working

After each case, once its front-ends are gone, the switch (--pid) must
hold no more eventfds, pipes, memfds, FUSE files or memfd mappings than
before it.  Every wait is bounded (a few seconds at most).  Python 3.9 or
later.

The front-end and the protocol are in vhost_lib.py and vhost_guest.py;
the cases in vhost_traffic.py and, for the hostile ones,
vhost_hostile*.py by theme (descriptors and rings, messages, memory,
descriptors passed).
"""

import argparse
import re
import sys
import time
import traceback

from vhost_lib import Closed, Fail, Switch, expect, say
from vhost_hostile import Hostile
from vhost_traffic import (
    case_callfull, case_chains, case_pair, case_reconnect, case_rewrite,
    case_rings, case_tso, case_tso_seg)
from vhost_hostile_rings import hostile_rings
from vhost_hostile_msgs import hostile_messages
from vhost_hostile_mem import hostile_memory
from vhost_hostile_fds import hostile_fds


def case_hostile(sw):
    ho = Hostile(sw)
    try:
        for name, fn in (hostile_rings() + hostile_messages() + hostile_memory()
                         + hostile_fds()):
            if re.search(sw.args.only, name):
                ho.run(name, fn)
        if ho.failed:
            raise Fail(f"{len(ho.failed)} of {ho.n} hostile front-ends not handled: "
                       + "; ".join(ho.failed))
        say(f"{ho.n} hostile front-ends handled")
    finally:
        ho.close()


CASES = {
    "pair": case_pair,
    "tso": case_tso,
    "tso_seg": case_tso_seg,
    "rings": case_rings,
    "chains": case_chains,
    "reconnect": case_reconnect,
    "rewrite": case_rewrite,
    "callfull": case_callfull,
    "hostile": case_hostile,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sock", required=True, help="the switch's --vhost-user socket")
    ap.add_argument("--ctl", required=True, help="its --ctl socket")
    ap.add_argument("--dgram", help="its --dgram socket (case tso)")
    ap.add_argument("--only", default="", metavar="REGEX",
                    help="hostile: only the sub-cases whose names match")
    ap.add_argument("--tmp", default="/tmp", help="a directory for sockets and mounts")
    ap.add_argument("--log", help="the switch's standard error, to read its log lines")
    ap.add_argument("--pid", type=int, help="the switch's pid, to check it still runs")
    ap.add_argument("cases", nargs="+", choices=sorted(CASES) + ["all"])
    args = ap.parse_args()
    sw = Switch(args)
    names = list(CASES) if "all" in args.cases else args.cases
    failed = []
    for name in names:
        t0 = time.monotonic()
        try:
            before = sw.resources()
            CASES[name](sw)
            # every front-end of the case is gone: so is all it handed over
            left = sw.released(before)
            expect(left is None, "the switch's descriptors and mappings once the "
                   "case's front-ends are gone", f"at most {before}", left)
        except (Fail, Closed) as e:
            print(f"FAIL: {name}: {e}", flush=True)
            failed.append(name)
            continue
        except Exception as e:      # pylint: disable=broad-except
            # an answer of an unexpected shape (ctl JSON, say) is a failure too
            tb = traceback.extract_tb(e.__traceback__)[-1]
            print(f"FAIL: {name}: {e!r} (line {tb.lineno})", flush=True)
            failed.append(name)
            continue
        if not sw.alive():
            print(f"FAIL: {name}: the switch is no longer running", flush=True)
            failed.append(name)
            continue
        print(f"PASS: {name} ({time.monotonic() - t0:.1f} s)", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
