#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The hybrid transport (tap for transmit, a packet socket on the tap for
# receive): the raw transport's test, on a tap device.

exec "$(dirname "$(readlink -f "$0")")/test_raw.sh" hybrid
