/* SPDX-License-Identifier: GPL-2.0 */
/* the fuzz build's stand-in for <linux/inet.h>: see kshim.h */
#include "../../kshim.h"
