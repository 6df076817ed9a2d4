/* SPDX-License-Identifier: GPL-2.0 */
/* vecnet: the tap and hybrid transports (vecnet_tap.c) */
#ifndef __UM_VECNET_TAP_H
#define __UM_VECNET_TAP_H

#include "vecnet.h"

int vecnet_tap_attach(struct vecnet_dev *vn, const char *ifname, bool mq);
int vecnet_tap_offload(int fd, netdev_features_t features);

#endif
