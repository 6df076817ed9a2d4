/* SPDX-License-Identifier: GPL-2.0 */
/* vecnet: virtio-net headers agreed with the peer (vecnet_nego.c) and the control messages */
#ifndef __UM_VECNET_NEGO_H
#define __UM_VECNET_NEGO_H

#include <linux/vecnet.h>
#include "vecnet.h"

/* vnet=: never, as the peer agrees, or required */
enum vecnet_vnet {
	VECNET_VNET_OFF,
	VECNET_VNET_AUTO,
	VECNET_VNET_ON,
};

/*
 * Their format is <linux/vecnet.h>'s, shared with the switch.
 * vecnet_nego.c speaks them; vecnet_chan.c sends its own UNCHAN.
 */
static inline void vecnet_msg_init(struct vecnet_msg *m, u8 type)
{
	memset(m, 0, sizeof(*m));
	memcpy(m->magic, VECNET_MSG_MAGIC, VECNET_MSG_MAGIC_LEN);
	m->version = VECNET_MSG_VERSION;
	m->type = type;
}

int vecnet_nego_setup(struct vecnet_dev *vn, const char *val,
		      struct vecnet_err *err);
int vecnet_nego_gso_max(struct vecnet_dev *vn, u32 gso_max,
			struct vecnet_err *err);
void vecnet_nego_start(struct vecnet_dev *vn);
void vecnet_nego_stop(struct vecnet_dev *vn);
void vecnet_nego_tick(struct vecnet_dev *vn);
bool vecnet_nego_rx(struct vecnet_dev *vn, const u8 *m, unsigned int len,
		    int *fd);
bool vecnet_nego_carrier_ok(const struct vecnet_dev *vn);
bool vecnet_nego_plain(const struct vecnet_dev *vn);
bool vecnet_nego_mq_rx(struct vecnet_queue *q, const u8 *m, unsigned int len,
		       int *fd);

#endif
