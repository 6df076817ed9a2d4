/* SPDX-License-Identifier: GPL-2.0 */
/* vecnet: the rings (vecnet_ring.c) */
#ifndef __UM_VECNET_RING_H
#define __UM_VECNET_RING_H

#include "vecnet.h"

int vecnet_rings_alloc(struct vecnet_dev *vn);
void vecnet_rings_free(struct vecnet_dev *vn);
bool vecnet_rx_alloc_fails(void);
bool vecnet_tx_big_fails(void);
struct sk_buff *vecnet_rx_skb(struct vecnet_queue *q, bool in_napi);
void vecnet_rx_slot(struct vecnet_queue *q, unsigned int i);
struct sk_buff *vecnet_rx_take(struct vecnet_queue *q, unsigned int i,
			       unsigned int len);
struct netdev_queue *vecnet_netdev_queue(const struct vecnet_queue *q);
void vecnet_tx_slot(struct vecnet_queue *q, unsigned int slot,
		    struct sk_buff *skb, bool hdr);
void vecnet_tx_pop(struct vecnet_queue *q, bool sent);
void vecnet_tx_drop_all(struct vecnet_queue *q);
void vecnet_tx_check_full(struct vecnet_queue *q);
void vecnet_tx_unsteer(struct vecnet_queue *q, unsigned int chan);
void vecnet_tx_queue_raw(struct vecnet_dev *vn, struct sk_buff *skb);
void vecnet_tx_drop_queued(struct vecnet_dev *vn);

#endif
