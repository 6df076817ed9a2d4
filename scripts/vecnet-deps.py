#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Which file of the guest driver calls into which, from the sources.

vecnet-deps.py [--check] [DIR]

DIR defaults to arch/um/drivers/vecnet.  A file "calls" another when it
names a vecnet_* function defined there, directly or through a macro or
static inline of the driver's headers (filedeps.py says how).  Prints
one line per file, callers first, then any cycle; with --check exits 1
when there is a cycle, or no call at all (nothing was read).  vecnet.h's
file map gives the layers this keeps.
"""

import os
import sys

# no __pycache__ beside the sources
sys.dont_write_bytecode = True
import filedeps  # noqa: E402

if __name__ == "__main__":
    filedeps.main("vecnet_", os.path.join(os.path.dirname(__file__), "..",
                                          "arch", "um", "drivers", "vecnet"))
