/* SPDX-License-Identifier: GPL-2.0 */
/* vecnet: the counters of ethtool -S and qstats (vecnet_stats.c) */
#ifndef __UM_VECNET_STATS_H
#define __UM_VECNET_STATS_H

#include <linux/ethtool.h>
#include <linux/netdevice.h>
#include <linux/u64_stats_sync.h>

/* Driver-specific counters for ethtool -S; the core stats hold the rest */
struct vecnet_xstats {
	u64_stats_t rx_queue_max;
	u64_stats_t rx_queue_running_average;
	u64_stats_t tx_queue_max;
	u64_stats_t tx_queue_running_average;
	u64_stats_t rx_encaps_errors;
	u64_stats_t tx_timeout_count;
	u64_stats_t tx_restart_queue;
	u64_stats_t tx_kicks;
	u64_stats_t tx_flow_control_xon;
	u64_stats_t tx_flow_control_xoff;
	u64_stats_t rx_csum_offload_good;
	u64_stats_t sg_ok;
	u64_stats_t rx_kicks;
	u64_stats_t rx_truncated;
	u64_stats_t rx_transient_errors;
	u64_stats_t tx_eagain;
	u64_stats_t tx_enobufs;
	u64_stats_t tx_eintr;
	u64_stats_t tx_write_wakeups;
	u64_stats_t tx_retry_timer;
	u64_stats_t tx_coalesce_timer;
	u64_stats_t peer_lost;
	u64_stats_t peer_back;
	/* tries at the peer's socket that failed, by what the host said */
	u64_stats_t peer_no_socket;
	u64_stats_t peer_refused;
	u64_stats_t peer_denied;
	u64_stats_t peer_dir_denied;
	u64_stats_t peer_wrong_socket;
	u64_stats_t peer_unreachable;
	u64_stats_t rx_alloc_failed;
	u64_stats_t nego_hello;
	u64_stats_t nego_agreed;
	u64_stats_t rx_nego_bad;
	u64_stats_t chan_opened;
	u64_stats_t chan_closed;
	u64_stats_t chan_refused;
	u64_stats_t tx_chan_frames;
	u64_stats_t rx_chan_frames;
	u64_stats_t rx_chan_bad;
	u64_stats_t chan_stalled;
	u64_stats_t mq_joined;
	u64_stats_t rx_fds_dropped;
	u64_stats_t tx_big_frames;
	u64_stats_t rx_big_frames;
	u64_stats_t tx_big_refused;
	u64_stats_t rx_irq_held;
	u64_stats_t rx_coalesce_timer;
	struct u64_stats_sync syncp;
};

/* Writing contexts of the extended counters (struct vecnet_dev::xstats) */
enum vecnet_xstats_ctx {
	VECNET_XS_NAPI,		/* the NAPI poll, outside tx.lock */
	VECNET_XS_TX,		/* anyone holding tx.lock */
	VECNET_XS_LINK,		/* the link work, outside tx.lock */
	VECNET_XS_NR
};

struct vecnet_stat_desc {
	char name[ETH_GSTRING_LEN];
	size_t offset;
};

extern const struct vecnet_stat_desc vecnet_xstats_desc[];
extern const unsigned int vecnet_xstats_count;

/* Frames and bytes one queue moved one way: ethtool -S per queue */
struct vecnet_qstats {
	u64_stats_t packets;
	u64_stats_t bytes;
	struct u64_stats_sync syncp;
};

struct vecnet_queue;
struct vecnet_dev;

void vecnet_xstats_add_n(struct vecnet_queue *q, enum vecnet_xstats_ctx ctx,
			 size_t off, u64 n);
void vecnet_xstats_add_tx(struct vecnet_queue *q, size_t off);
void vecnet_qstats_add(struct vecnet_qstats *qs, unsigned int len);
u64 vecnet_tx_packets(const struct vecnet_dev *vn);
void vecnet_qstats_read(const struct vecnet_qstats *qs, u64 *packets,
			u64 *bytes);
extern const struct netdev_stat_ops vecnet_stat_ops;
void vecnet_queue_sample(struct vecnet_xstats *xs, u64_stats_t *max,
			 u64_stats_t *avg, unsigned int n);
#define vecnet_xs_off(ctr)	offsetof(struct vecnet_xstats, ctr)
/* Count one event in counter @ctr of queue @q's context */
#define vecnet_qcount_napi(q, ctr) \
	vecnet_xstats_add_n(q, VECNET_XS_NAPI, vecnet_xs_off(ctr), 1)
#define vecnet_qcount_tx(q, ctr) \
	vecnet_xstats_add_tx(q, vecnet_xs_off(ctr))
/* ...and of queue 0, where the negotiation, channels and link live */
#define vecnet_count_napi(vn, ctr)	vecnet_qcount_napi(&(vn)->q[0], ctr)
#define vecnet_count_tx(vn, ctr)	vecnet_qcount_tx(&(vn)->q[0], ctr)
#define vecnet_count_link(vn, ctr) \
	vecnet_xstats_add_n(&(vn)->q[0], VECNET_XS_LINK, vecnet_xs_off(ctr), 1)

#endif
