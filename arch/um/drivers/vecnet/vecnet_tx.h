/* SPDX-License-Identifier: GPL-2.0 */
/* vecnet: transmit (vecnet_tx.c) */
#ifndef __UM_VECNET_TX_H
#define __UM_VECNET_TX_H

#include "vecnet.h"

void vecnet_xmit(struct sk_buff *skb, struct net_device *dev);
netdev_tx_t vecnet_xmit_big(struct sk_buff *skb, struct net_device *dev);
void vecnet_tx_big_setup(struct vecnet_dev *vn);
u16 vecnet_select_queue(struct net_device *dev, struct sk_buff *skb,
			struct net_device *sb_dev);
void vecnet_tx_poll(struct vecnet_queue *q, bool resume);
void vecnet_tx_kick_flush(struct vecnet_dev *vn);

#endif
