/* SPDX-License-Identifier: GPL-2.0 */
/* vecnet: receive (vecnet_rx.c) */
#ifndef __UM_VECNET_RX_H
#define __UM_VECNET_RX_H

#include "vecnet.h"

int vecnet_rx(struct vecnet_queue *q, int budget);

#endif
