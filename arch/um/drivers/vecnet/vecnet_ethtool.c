// SPDX-License-Identifier: GPL-2.0
/*
 * vecnet: ethtool.  Everything here reads the configuration and the
 * counters, never the rings, so it works the same while the device is
 * down and on every transport.
 */

#include <linux/ethtool.h>
#include <linux/netdevice.h>
#include <linux/firmware.h>
#include "vecnet.h"

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
	ring->rx_pending = vn->cfg.depth;
	ring->tx_pending = vn->cfg.depth;
}

static int vecnet_set_ringparam(struct net_device *dev,
				struct ethtool_ringparam *ring,
				struct kernel_ethtool_ringparam *kring,
				struct netlink_ext_ack *extack)
{
	struct vecnet_dev *vn = netdev_priv(dev);

	/* One depth serves both rings and sizes the host socket buffer */
	if (ring->rx_pending != ring->tx_pending) {
		NL_SET_ERR_MSG(extack, "rx and tx take the same depth");
		return -EINVAL;
	}
	if (!ring->rx_pending) {
		NL_SET_ERR_MSG(extack, "depth must be at least 1");
		return -EINVAL;
	}
	if (netif_running(dev)) {
		NL_SET_ERR_MSG(extack, "change the depth while the device is down");
		return -EBUSY;
	}
	vn->cfg.depth = ring->rx_pending;
	return 0;
}

static int vecnet_get_coalesce(struct net_device *dev,
			       struct ethtool_coalesce *ec,
			       struct kernel_ethtool_coalesce *kec,
			       struct netlink_ext_ack *extack)
{
	struct vecnet_dev *vn = netdev_priv(dev);

	ec->tx_coalesce_usecs = READ_ONCE(vn->tx_usecs);
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
	WRITE_ONCE(vn->tx_usecs, ec->tx_coalesce_usecs);
	return 0;
}

static int vecnet_get_sset_count(struct net_device *dev, int sset)
{
	return sset == ETH_SS_STATS ? vecnet_xstats_count : -EOPNOTSUPP;
}

static void vecnet_get_strings(struct net_device *dev, u32 sset, u8 *buf)
{
	unsigned int i;

	if (sset != ETH_SS_STATS)
		return;
	for (i = 0; i < vecnet_xstats_count; i++)
		ethtool_puts(&buf, vecnet_xstats_desc[i].name);
}

static void vecnet_get_ethtool_stats(struct net_device *dev,
				     struct ethtool_stats *stats, u64 *data)
{
	struct vecnet_dev *vn = netdev_priv(dev);
	unsigned int start, i, c;
	u64 v[VECNET_XS_NR];

	for (i = 0; i < vecnet_xstats_count; i++) {
		size_t off = vecnet_xstats_desc[i].offset;

		for (c = 0; c < VECNET_XS_NR; c++) {
			const struct vecnet_xstats *xs = &vn->xstats[c];

			do {
				start = u64_stats_fetch_begin(&xs->syncp);
				v[c] = u64_stats_read((const void *)xs + off);
			} while (u64_stats_fetch_retry(&xs->syncp, start));
		}
		/* a batch maximum is written in one context only: others 0 */
		data[i] = 0;
		for (c = 0; c < VECNET_XS_NR; c++)
			data[i] += v[c];
	}
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
	.supported_coalesce_params	= ETHTOOL_COALESCE_TX_USECS,
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
	.flash_device			= vecnet_flash_device,
};

void vecnet_set_ethtool_ops(struct net_device *dev)
{
	dev->ethtool_ops = &vecnet_ethtool_ops;
}
