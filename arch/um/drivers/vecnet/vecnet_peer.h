/* SPDX-License-Identifier: GPL-2.0 */
/* vecnet: the link to the peer (vecnet_peer.c) */
#ifndef __UM_VECNET_PEER_H
#define __UM_VECNET_PEER_H

#include "vecnet.h"

void vecnet_peer_init(struct vecnet_dev *vn,
		      void (*check)(struct work_struct *work));
void vecnet_peer_open(struct vecnet_dev *vn);
void vecnet_peer_start(struct vecnet_dev *vn, bool peer_there);
void vecnet_peer_check_start(struct vecnet_dev *vn, bool peer_there);
void vecnet_peer_stop_check(struct vecnet_dev *vn);
void vecnet_peer_stop(struct vecnet_dev *vn);
void vecnet_peer_path(struct vecnet_dev *vn, const char *path,
		      const char *want);
void vecnet_link_unreachable(struct vecnet_dev *vn, const char *path,
			     const char *want, int err);
void vecnet_peer_probing(struct vecnet_dev *vn);
void vecnet_peer_probed(struct vecnet_dev *vn, int err);
bool vecnet_peer_fresh(struct vecnet_dev *vn);
void vecnet_peer_announce(struct vecnet_dev *vn);
void vecnet_peer_check_now(struct vecnet_dev *vn);
bool vecnet_peer_gone(const struct vecnet_dev *vn, int err);
void vecnet_peer_lost(struct vecnet_dev *vn);
void vecnet_peer_lost_rx(struct vecnet_dev *vn);
void vecnet_peer_q_gone(struct vecnet_queue *q);
void vecnet_peer_sent(struct vecnet_dev *vn);
void vecnet_peer_set_frame(struct vecnet_dev *vn, u32 frame);
void vecnet_mq_join(struct vecnet_queue *q);
void vecnet_mq_unjoin_all(struct vecnet_dev *vn);
void vecnet_mq_set_cookie(struct vecnet_dev *vn, const u8 *cookie);
void vecnet_mq_stop(struct vecnet_dev *vn);

#endif
