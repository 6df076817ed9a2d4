/* SPDX-License-Identifier: GPL-2.0 */
/* vecnet: shortcut channels (vecnet_chan.c) */
#ifndef __UM_VECNET_CHAN_H
#define __UM_VECNET_CHAN_H

#include "vecnet.h"

enum vecnet_chan_state {
	VECNET_CHAN_FREE,
	VECNET_CHAN_PENDING,	/* offered, no interrupt yet */
	VECNET_CHAN_ACTIVE,
	VECNET_CHAN_DYING,	/* closed by the work after a grace period */
};

void vecnet_chan_init(struct vecnet_dev *vn);
int vecnet_chan_setup(struct vecnet_dev *vn, const struct vecnet_args *args,
		      struct vecnet_err *err);
void vecnet_chan_set_sndbuf(struct vecnet_dev *vn, int sndbuf);
void vecnet_chan_offer(struct vecnet_queue *q, const u8 *mac, int fd);
int vecnet_chan_start(struct vecnet_dev *vn);
void vecnet_chan_allow_fds(struct vecnet_dev *vn, bool allow, bool per_queue);
void vecnet_chan_drop_fd(struct vecnet_queue *q, int fd);
void vecnet_chan_close_sock(struct vecnet_dev *vn, int fd);
void vecnet_chan_revoke(struct vecnet_dev *vn, const u8 *mac);
void vecnet_chan_kill_all(struct vecnet_dev *vn);
void vecnet_chan_close_all(struct vecnet_dev *vn);
u8 vecnet_chan_pick(const struct vecnet_queue *q, const struct sk_buff *skb);
u32 vecnet_chan_dest(const struct vecnet_dev *vn, unsigned int qi,
		     const struct sk_buff *skb);
bool vecnet_chan_msg(struct vecnet_chan *c, const u8 *data, unsigned int len);
bool vecnet_chan_send_failed(struct vecnet_queue *q, unsigned int idx, int err);
void vecnet_chan_sent(struct vecnet_queue *q, unsigned int idx);
bool vecnet_chan_frame_ok(const struct vecnet_chan *c, const u8 *data,
			  unsigned int len);

#endif
