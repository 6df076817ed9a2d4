/* SPDX-License-Identifier: GPL-2.0 */
/* vecnet: ethtool (vecnet_ethtool.c) */
#ifndef __UM_VECNET_ETHTOOL_H
#define __UM_VECNET_ETHTOOL_H

#include "vecnet.h"

void vecnet_set_ethtool_ops(struct net_device *dev);

#endif
