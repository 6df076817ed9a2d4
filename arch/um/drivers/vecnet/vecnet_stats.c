// SPDX-License-Identifier: GPL-2.0
/*
 * vecnet: the counters ethtool -S shows beside the core statistics, and
 * the per-queue ones of the netdev netlink family (qstats-get).
 *
 * Every queue keeps its extended counters once per writing context
 * (enum vecnet_xstats_ctx), each copy with its own syncp, and its
 * frames and bytes each way; vecnet_ethtool.c reads them back by the
 * table below.  The helpers here write from whatever context calls
 * them and call nothing else of the driver.
 */

#include <net/netdev_queues.h>

#include "vecnet.h"
#include "vecnet_stats.h"

#define VECNET_XSTAT(m) { #m, offsetof(struct vecnet_xstats, m) }

const struct vecnet_stat_desc vecnet_xstats_desc[] = {
	VECNET_XSTAT(rx_queue_max),
	VECNET_XSTAT(rx_queue_running_average),
	VECNET_XSTAT(tx_queue_max),
	VECNET_XSTAT(tx_queue_running_average),
	VECNET_XSTAT(rx_encaps_errors),
	VECNET_XSTAT(tx_timeout_count),
	VECNET_XSTAT(tx_restart_queue),
	VECNET_XSTAT(tx_kicks),
	VECNET_XSTAT(tx_flow_control_xon),
	VECNET_XSTAT(tx_flow_control_xoff),
	VECNET_XSTAT(rx_csum_offload_good),
	VECNET_XSTAT(sg_ok),
	VECNET_XSTAT(rx_kicks),
	VECNET_XSTAT(rx_truncated),
	VECNET_XSTAT(rx_transient_errors),
	VECNET_XSTAT(tx_eagain),
	VECNET_XSTAT(tx_enobufs),
	VECNET_XSTAT(tx_eintr),
	VECNET_XSTAT(tx_write_wakeups),
	VECNET_XSTAT(tx_retry_timer),
	VECNET_XSTAT(tx_coalesce_timer),
	VECNET_XSTAT(peer_lost),
	VECNET_XSTAT(peer_back),
	VECNET_XSTAT(peer_no_socket),
	VECNET_XSTAT(peer_refused),
	VECNET_XSTAT(peer_denied),
	VECNET_XSTAT(peer_dir_denied),
	VECNET_XSTAT(peer_wrong_socket),
	VECNET_XSTAT(peer_unreachable),
	VECNET_XSTAT(rx_alloc_failed),
	VECNET_XSTAT(nego_hello),
	VECNET_XSTAT(nego_agreed),
	VECNET_XSTAT(rx_nego_bad),
	VECNET_XSTAT(chan_opened),
	VECNET_XSTAT(chan_closed),
	VECNET_XSTAT(chan_refused),
	VECNET_XSTAT(tx_chan_frames),
	VECNET_XSTAT(rx_chan_frames),
	VECNET_XSTAT(rx_chan_bad),
	VECNET_XSTAT(chan_stalled),
	VECNET_XSTAT(mq_joined),
	VECNET_XSTAT(rx_fds_dropped),
	VECNET_XSTAT(tx_big_frames),
	VECNET_XSTAT(rx_big_frames),
	VECNET_XSTAT(tx_big_refused),
	VECNET_XSTAT(rx_irq_held),
	VECNET_XSTAT(rx_coalesce_timer),
};

const unsigned int vecnet_xstats_count = ARRAY_SIZE(vecnet_xstats_desc);

void vecnet_xstats_add_n(struct vecnet_queue *q, enum vecnet_xstats_ctx ctx,
			 size_t off, u64 n)
{
	struct vecnet_xstats *xs = &q->xstats[ctx];

	u64_stats_update_begin(&xs->syncp);
	u64_stats_add((u64_stats_t *)((u8 *)xs + off), n);
	u64_stats_update_end(&xs->syncp);
}

void vecnet_xstats_add_tx(struct vecnet_queue *q, size_t off)
{
	lockdep_assert_held(&q->tx.lock);
	vecnet_xstats_add_n(q, VECNET_XS_TX, off, 1);
}

void vecnet_qstats_add(struct vecnet_qstats *qs, unsigned int len)
{
	u64_stats_update_begin(&qs->syncp);
	u64_stats_inc(&qs->packets);
	u64_stats_add(&qs->bytes, len);
	u64_stats_update_end(&qs->syncp);
}

void vecnet_qstats_read(const struct vecnet_qstats *qs, u64 *packets,
			u64 *bytes)
{
	unsigned int start;

	do {
		start = u64_stats_fetch_begin(&qs->syncp);
		*packets = u64_stats_read(&qs->packets);
		*bytes = u64_stats_read(&qs->bytes);
	} while (u64_stats_fetch_retry(&qs->syncp, start));
}

/* Frames the device's queues in use have sent, a sum read without a retry */
u64 vecnet_tx_packets(const struct vecnet_dev *vn)
{
	unsigned int i;
	u64 n = 0;

	for (i = 0; i < vn->nq; i++)
		n += u64_stats_read(&vn->q[i].tx_stats.packets);
	return n;
}

/*
 * qstats: a queue's frames and bytes as ethtool -S shows them.  The
 * counters of a queue outlive its going (ethtool -L), so what queues
 * not in use now counted is the base, and queues and base add up to
 * the device's.
 */
static void vecnet_get_queue_stats_rx(struct net_device *dev, int idx,
				      struct netdev_queue_stats_rx *rx)
{
	struct vecnet_dev *vn = netdev_priv(dev);

	vecnet_qstats_read(&vn->q[idx].rx_stats, &rx->packets, &rx->bytes);
}

static void vecnet_get_queue_stats_tx(struct net_device *dev, int idx,
				      struct netdev_queue_stats_tx *tx)
{
	struct vecnet_dev *vn = netdev_priv(dev);

	vecnet_qstats_read(&vn->q[idx].tx_stats, &tx->packets, &tx->bytes);
}

static void vecnet_get_base_stats(struct net_device *dev,
				  struct netdev_queue_stats_rx *rx,
				  struct netdev_queue_stats_tx *tx)
{
	struct vecnet_dev *vn = netdev_priv(dev);
	unsigned int i;
	u64 p, b;

	rx->packets = 0;
	rx->bytes = 0;
	tx->packets = 0;
	tx->bytes = 0;
	for (i = dev->real_num_rx_queues; i < VECNET_QUEUES_MAX; i++) {
		vecnet_qstats_read(&vn->q[i].rx_stats, &p, &b);
		rx->packets += p;
		rx->bytes += b;
	}
	for (i = dev->real_num_tx_queues; i < VECNET_QUEUES_MAX; i++) {
		vecnet_qstats_read(&vn->q[i].tx_stats, &p, &b);
		tx->packets += p;
		tx->bytes += b;
	}
}

const struct netdev_stat_ops vecnet_stat_ops = {
	.get_queue_stats_rx	= vecnet_get_queue_stats_rx,
	.get_queue_stats_tx	= vecnet_get_queue_stats_tx,
	.get_base_stats		= vecnet_get_base_stats,
};

/* The largest batch seen and a running average (weight 1/8) */
void vecnet_queue_sample(struct vecnet_xstats *xs, u64_stats_t *max,
			 u64_stats_t *avg, unsigned int n)
{
	u64 a;

	u64_stats_update_begin(&xs->syncp);
	if (n > u64_stats_read(max))
		u64_stats_set(max, n);
	a = u64_stats_read(avg);
	u64_stats_set(avg, a - (a >> 3) + (n >> 3));
	u64_stats_update_end(&xs->syncp);
}
