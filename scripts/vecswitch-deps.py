#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Which file of the switch calls into which, from the sources.

vecswitch-deps.py [--check] [DIR]

DIR defaults to tools/net/vecswitch.  A file "calls" another when it
names a vs_* function defined there, or calls a member of an I/O
backend's table (struct vs_io_ops) that the other fills in (filedeps.py
says how).  Prints one
line per file, callers first, then any cycle; with --check exits 1 when
there is a cycle, so that the calls keep pointing one way, or no call at
all (nothing was read).
"""

import os
import sys

# no __pycache__ beside the sources
sys.dont_write_bytecode = True
import filedeps  # noqa: E402

if __name__ == "__main__":
    filedeps.main("vs_", os.path.join(os.path.dirname(__file__), "..",
                                      "tools", "net", "vecswitch"),
                  through=("vs_io_ops",))
