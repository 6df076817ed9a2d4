// SPDX-License-Identifier: GPL-2.0
/*
 * vecnet: ethtool.  Everything here reads the configuration and the
 * counters, never the rings, so it works the same while the device is
 * down and on every transport.  The rings (-G) and the queues (-L)
 * change at any time: a device that is up goes down and up inside
 * (vecnet_reshape).
 */

#include <linux/ethtool.h>
#include <linux/netdevice.h>
#include <linux/firmware.h>
#include "vecnet.h"
#include "vecnet_core.h"
#include "vecnet_ethtool.h"
#include "vecnet_stats.h"
#include "vecnet_transport.h"

static void vecnet_get_drvinfo(struct net_device *dev,
			       struct ethtool_drvinfo *info)
{
	struct vecnet_dev *vn = netdev_priv(dev);

	strscpy(info->driver, VECNET_DRV_NAME, sizeof(info->driver));
	strscpy(info->bus_info, vn->transport->name, sizeof(info->bus_info));
}

static void vecnet_get_ringparam(struct net_device *dev,
				 struct ethtool_ringparam *ring,
				 struct kernel_ethtool_ringparam *kring,
				 struct netlink_ext_ack *extack)
{
	struct vecnet_dev *vn = netdev_priv(dev);

	ring->rx_max_pending = VECNET_DEPTH_MAX;
	ring->tx_max_pending = VECNET_DEPTH_MAX;
	ring->rx_pending = vn->cfg.rx_depth;
	ring->tx_pending = vn->cfg.tx_depth;
}

static int vecnet_set_ringparam(struct net_device *dev,
				struct ethtool_ringparam *ring,
				struct kernel_ethtool_ringparam *kring,
				struct netlink_ext_ack *extack)
{
	struct vecnet_dev *vn = netdev_priv(dev);
	struct vecnet_shape s;

	if (!ring->rx_pending || !ring->tx_pending) {
		NL_SET_ERR_MSG(extack, "a ring has at least 1 slot");
		return -EINVAL;
	}
	if (ring->rx_pending == vn->cfg.rx_depth &&
	    ring->tx_pending == vn->cfg.tx_depth)
		return 0;
	vecnet_shape_get(dev, &s);
	s.rx_depth = ring->rx_pending;
	s.tx_depth = ring->tx_pending;
	return vecnet_reshape(dev, &s, "ethtool -G");
}

static int vecnet_get_coalesce(struct net_device *dev,
			       struct ethtool_coalesce *ec,
			       struct kernel_ethtool_coalesce *kec,
			       struct netlink_ext_ack *extack)
{
	struct vecnet_dev *vn = netdev_priv(dev);

	ec->tx_coalesce_usecs = READ_ONCE(vn->coal.tx_usecs);
	ec->use_adaptive_tx_coalesce = READ_ONCE(vn->coal.tx_adaptive);
	ec->rx_coalesce_usecs = READ_ONCE(vn->coal.rx_usecs);
	ec->use_adaptive_rx_coalesce = READ_ONCE(vn->coal.rx_adaptive);
	return 0;
}

static int vecnet_set_coalesce(struct net_device *dev,
			       struct ethtool_coalesce *ec,
			       struct kernel_ethtool_coalesce *kec,
			       struct netlink_ext_ack *extack)
{
	struct vecnet_dev *vn = netdev_priv(dev);

	if (ec->tx_coalesce_usecs > VECNET_TX_USECS_MAX) {
		NL_SET_ERR_MSG(extack, "tx-usecs is at most 1000000");
		return -ERANGE;
	}
	if (ec->rx_coalesce_usecs > VECNET_RX_USECS_MAX) {
		NL_SET_ERR_MSG(extack, "rx-usecs is at most 10000");
		return -ERANGE;
	}
	WRITE_ONCE(vn->coal.rx_usecs, ec->rx_coalesce_usecs);
	WRITE_ONCE(vn->coal.rx_adaptive, !!ec->use_adaptive_rx_coalesce);
	WRITE_ONCE(vn->coal.tx_usecs, ec->tx_coalesce_usecs);
	WRITE_ONCE(vn->coal.tx_adaptive, !!ec->use_adaptive_tx_coalesce);
	return 0;
}

/* Per queue, after the device's counters, named as virtio_net names them */
static const char * const vecnet_qstat_names[] = {
	"rx_queue_%u_packets", "rx_queue_%u_bytes",
	"tx_queue_%u_packets", "tx_queue_%u_bytes",
};

#define VECNET_QSTATS	ARRAY_SIZE(vecnet_qstat_names)

static unsigned int vecnet_stat_queues(const struct net_device *dev)
{
	return dev->real_num_tx_queues;
}

static int vecnet_get_sset_count(struct net_device *dev, int sset)
{
	if (sset != ETH_SS_STATS)
		return -EOPNOTSUPP;
	return vecnet_xstats_count + vecnet_stat_queues(dev) * VECNET_QSTATS;
}

static void vecnet_get_strings(struct net_device *dev, u32 sset, u8 *buf)
{
	unsigned int i, k;

	if (sset != ETH_SS_STATS)
		return;
	for (i = 0; i < vecnet_xstats_count; i++)
		ethtool_puts(&buf, vecnet_xstats_desc[i].name);
	for (k = 0; k < vecnet_stat_queues(dev); k++)
		for (i = 0; i < VECNET_QSTATS; i++)
			ethtool_sprintf(&buf, vecnet_qstat_names[i], k);
}

static u64 vecnet_xstat_read(const struct vecnet_xstats *xs, size_t off)
{
	unsigned int start;
	u64 v;

	do {
		start = u64_stats_fetch_begin(&xs->syncp);
		v = u64_stats_read((const void *)xs + off);
	} while (u64_stats_fetch_retry(&xs->syncp, start));
	return v;
}

/* The batch sizes are the largest of any queue's; the rest add up */
static bool vecnet_xstat_is_batch(size_t off)
{
	return off == offsetof(struct vecnet_xstats, rx_queue_max) ||
	       off == offsetof(struct vecnet_xstats, rx_queue_running_average) ||
	       off == offsetof(struct vecnet_xstats, tx_queue_max) ||
	       off == offsetof(struct vecnet_xstats, tx_queue_running_average);
}

static void vecnet_get_ethtool_stats(struct net_device *dev,
				     struct ethtool_stats *stats, u64 *data)
{
	struct vecnet_dev *vn = netdev_priv(dev);
	unsigned int i, c, k, nq = vecnet_stat_queues(dev);

	for (i = 0; i < vecnet_xstats_count; i++) {
		size_t off = vecnet_xstats_desc[i].offset;
		bool batch = vecnet_xstat_is_batch(off);

		data[i] = 0;
		/*
		 * every queue's, in use or not: what a queue counted before
		 * ethtool -L took it away (its channels, its joins) stays
		 */
		for (k = 0; k < VECNET_QUEUES_MAX; k++) {
			for (c = 0; c < VECNET_XS_NR; c++) {
				u64 v = vecnet_xstat_read(&vn->q[k].xstats[c],
							  off);

				data[i] = batch ? max(data[i], v) : data[i] + v;
			}
		}
	}
	data += vecnet_xstats_count;
	for (k = 0; k < nq; k++, data += VECNET_QSTATS) {
		vecnet_qstats_read(&vn->q[k].rx_stats, data, data + 1);
		vecnet_qstats_read(&vn->q[k].tx_stats, data + 2, data + 3);
	}
}

static void vecnet_get_channels(struct net_device *dev,
				struct ethtool_channels *ch)
{
	struct vecnet_dev *vn = netdev_priv(dev);

	ch->max_combined = vn->cfg.max_queues;
	if (vn->transport->max_queues)
		ch->max_combined = min(ch->max_combined,
				       vn->transport->max_queues(vn));
	ch->combined_count = vn->cfg.queues;
}

/* ethtool -L vecN combined M: a queue has its own rings and descriptor */
static int vecnet_set_channels(struct net_device *dev,
			       struct ethtool_channels *ch)
{
	struct vecnet_dev *vn = netdev_priv(dev);

	/* the core refused counts beyond get_channels' maxima, and none */
	if (ch->combined_count == vn->cfg.queues)
		return 0;
	return vecnet_set_queues(dev, ch->combined_count);
}

/*
 * ethtool -f vecN FILE: FILE is looked up as firmware in the guest
 * (/lib/firmware, or the firmware_class.path= directory), and is a
 * classic BPF program for the transport's host socket.
 */
static int vecnet_flash_device(struct net_device *dev,
			       struct ethtool_flash *efl)
{
	struct vecnet_dev *vn = netdev_priv(dev);
	const struct firmware *fw;
	int err;

	if (!vn->transport->load_filter)
		return -EOPNOTSUPP;
	efl->data[ETHTOOL_FLASH_MAX_FILENAME - 1] = '\0';
	err = request_firmware(&fw, efl->data, &dev->dev);
	if (err) {
		netdev_err(dev, "ethtool -f: cannot load %s: %d\n", efl->data,
			   err);
		return err;
	}
	err = vn->transport->load_filter(vn, fw->data, fw->size);
	release_firmware(fw);
	return err;
}

static const struct ethtool_ops vecnet_ethtool_ops = {
	.supported_coalesce_params	= ETHTOOL_COALESCE_TX_USECS |
					  ETHTOOL_COALESCE_USE_ADAPTIVE_TX |
					  ETHTOOL_COALESCE_RX_USECS |
					  ETHTOOL_COALESCE_USE_ADAPTIVE_RX,
	.get_drvinfo			= vecnet_get_drvinfo,
	.get_link			= ethtool_op_get_link,
	.get_ts_info			= ethtool_op_get_ts_info,
	.get_ringparam			= vecnet_get_ringparam,
	.set_ringparam			= vecnet_set_ringparam,
	.get_coalesce			= vecnet_get_coalesce,
	.set_coalesce			= vecnet_set_coalesce,
	.get_sset_count			= vecnet_get_sset_count,
	.get_strings			= vecnet_get_strings,
	.get_ethtool_stats		= vecnet_get_ethtool_stats,
	.get_channels			= vecnet_get_channels,
	.set_channels			= vecnet_set_channels,
	.flash_device			= vecnet_flash_device,
};

/* A new device: its ethtool operations, and its coalescing as at boot */
void vecnet_set_ethtool_ops(struct net_device *dev)
{
	struct vecnet_dev *vn = netdev_priv(dev);

	dev->ethtool_ops = &vecnet_ethtool_ops;
	vn->coal.rx_usecs = VECNET_RX_USECS_DEFAULT;
	vn->coal.rx_adaptive = true;
}
