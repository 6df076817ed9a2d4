/* SPDX-License-Identifier: GPL-2.0 */
/* vecnet: the core (vecnet_core.c) */
#ifndef __UM_VECNET_CORE_H
#define __UM_VECNET_CORE_H

#include "vecnet.h"

void vecnet_core_init(struct vecnet_dev *vn);
void vecnet_run_dir_init(void);
const char *vecnet_run_dir(void);
void vecnet_add_flags(struct vecnet_dev *vn, u32 flags);
void vecnet_spread_napi(struct net_device *dev);
/* What changes only with new rings: down and up again while up */
struct vecnet_shape {
	unsigned int queues;
	u32 rx_depth;
	u32 tx_depth;
	u32 mtu;
};

void vecnet_shape_get(struct net_device *dev, struct vecnet_shape *s);
int vecnet_reshape(struct net_device *dev, const struct vecnet_shape *s,
		   const char *what);
int vecnet_set_queues(struct net_device *dev, unsigned int n);
void vecnet_close_fd(struct vecnet_dev *vn);
int vecnet_replace_fd(struct vecnet_dev *vn, int fd);

#endif
