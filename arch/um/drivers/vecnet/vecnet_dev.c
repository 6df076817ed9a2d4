// SPDX-License-Identifier: GPL-2.0
/*
 * vecnet: the devices.  vecN: options on the kernel command line are
 * kept until the network stack exists and then made into devices;
 * mconsole adds and removes more while the guest runs.  When the host
 * process exits, each transport removes the host objects it made.
 */

#include <linux/init.h>
#include <linux/memblock.h>
#include <linux/mutex.h>
#include <init.h>
#include "vecnet.h"
#include "vecnet_chan.h"
#include "vecnet_core.h"
#include "vecnet_dev.h"
#include "vecnet_ethtool.h"
#include "vecnet_parse.h"
#include "vecnet_stats.h"
#include "vecnet_transport.h"

static LIST_HEAD(vecnet_devices);
static DEFINE_MUTEX(vecnet_devices_lock);

static struct vecnet_dev *vecnet_find(u32 index)
{
	struct vecnet_dev *vn;

	lockdep_assert_held(&vecnet_devices_lock);
	list_for_each_entry(vn, &vecnet_devices, list)
		if (vn->cfg.index == index)
			return vn;
	return NULL;
}

static void vecnet_dev_init(struct net_device *dev,
			    const struct vecnet_config *cfg)
{
	struct vecnet_dev *vn = netdev_priv(dev);

	vn->dev = dev;
	vn->cfg = *cfg;
	vn->cfg.args = NULL;
	vn->transport = cfg->transport;
	vn->host.fd = -1;
	vn->host.tx_fd = -1;
	vn->rx_depth = cfg->rx_depth;
	vn->tx_depth = cfg->tx_depth;
	vecnet_chan_init(vn);

	snprintf(dev->name, IFNAMSIZ, "vec%u", cfg->index);
	vecnet_set_ethtool_ops(dev);
	dev->pcpu_stat_type = NETDEV_PCPU_STAT_DSTATS;
	dev->stat_ops = &vecnet_stat_ops;
	dev->watchdog_timeo = 5 * HZ;
	dev->min_mtu = ETH_MIN_MTU;
	dev->max_mtu = cfg->transport->max_mtu;
	dev->mtu = cfg->mtu;
	dev->priv_flags |= IFF_LIVE_ADDR_CHANGE;
	dev->hw_features = NETIF_F_SG | VECNET_TX_FEATURES;
	dev->features = NETIF_F_SG | VECNET_TX_FEATURES;
	vecnet_add_flags(vn, cfg->transport->flags);
	if (cfg->have_mac)
		eth_hw_addr_set(dev, cfg->mac);
	else
		eth_hw_addr_random(dev);
	/* the queues, their NAPI and the link works are the core's */
	vecnet_core_init(vn);
}

int vecnet_device_add(const char *spec, struct vecnet_err *err)
{
	struct vecnet_config cfg;
	struct net_device *dev;
	struct vecnet_dev *vn;
	int ret;

	ret = vecnet_parse(spec, &cfg, err);
	if (ret)
		return ret;

	mutex_lock(&vecnet_devices_lock);
	if (vecnet_find(cfg.index)) {
		vecnet_err_set(err, "vec%u: already configured", cfg.index);
		ret = -EEXIST;
		goto err_unlock;
	}
	dev = alloc_etherdev_mqs(sizeof(*vn), cfg.max_queues, cfg.max_queues);
	if (!dev) {
		vecnet_err_set(err, "vec%u: out of memory", cfg.index);
		ret = -ENOMEM;
		goto err_unlock;
	}
	vecnet_dev_init(dev, &cfg);
	vn = netdev_priv(dev);

	ret = cfg.transport->setup(vn, cfg.args, err);
	if (ret)
		goto err_free;
	ret = netif_set_real_num_queues(dev, cfg.queues, cfg.queues);
	if (ret) {
		vecnet_err_set(err, "vec%u: cannot set %u queues: %d",
			       cfg.index, cfg.queues, ret);
		goto err_destroy;
	}

	ret = register_netdev(dev);
	if (ret) {
		vecnet_err_set(err, "vec%u: cannot register the device: %d",
			       cfg.index, ret);
		goto err_destroy;
	}
	vecnet_spread_napi(dev);
	list_add_tail(&vn->list, &vecnet_devices);
	mutex_unlock(&vecnet_devices_lock);
	vecnet_args_free(cfg.args);
	netdev_info(dev, "transport %s, depth %u, mtu %u, queues %u, %pM\n",
		    cfg.transport->name, cfg.rx_depth, cfg.mtu, cfg.queues,
		    dev->dev_addr);
	return 0;

err_destroy:
	cfg.transport->destroy(vn);
err_free:
	free_netdev(dev);
err_unlock:
	mutex_unlock(&vecnet_devices_lock);
	vecnet_args_free(cfg.args);
	return ret;
}

/* Takes the device away even while it is up: unregistering stops it */
int vecnet_device_remove(u32 index, struct vecnet_err *err)
{
	struct vecnet_dev *vn;

	mutex_lock(&vecnet_devices_lock);
	vn = vecnet_find(index);
	if (!vn) {
		mutex_unlock(&vecnet_devices_lock);
		vecnet_err_set(err, "vec%u: no such device", index);
		return -ENODEV;
	}
	list_del(&vn->list);
	mutex_unlock(&vecnet_devices_lock);

	unregister_netdev(vn->dev);
	vn->transport->destroy(vn);
	free_netdev(vn->dev);
	return 0;
}

/* ---- command line and host exit ------------------------------------------ */

/*
 * vecN: options arrive before the network stack exists; they are kept
 * (in memblock memory, so there is no limit on their number) and the
 * devices made once it does.
 */
struct vecnet_boot_spec {
	struct list_head list;
	const char *spec;
};

static LIST_HEAD(vecnet_boot_specs);

static int __init vecnet_setup(char *str)
{
	struct vecnet_boot_spec *b;

	b = memblock_alloc(sizeof(*b), SMP_CACHE_BYTES);
	if (!b) {
		pr_err("vecnet: vec%s: out of memory; device not created\n",
		       str);
		return 1;
	}
	b->spec = str;
	list_add_tail(&b->list, &vecnet_boot_specs);
	return 1;
}
__setup("vec", vecnet_setup);

static int __init vecnet_boot_init(void)
{
	struct vecnet_boot_spec *b;
	struct vecnet_err err;

	vecnet_run_dir_init();
	list_for_each_entry(b, &vecnet_boot_specs, list)
		if (vecnet_device_add(b->spec, &err))
			pr_err("vecnet: %s; device not created\n", err.msg);
	return 0;
}
late_initcall(vecnet_boot_init);

/* The host process is exiting: remove the host objects we made */
static void vecnet_exit(void)
{
	struct vecnet_dev *vn;

	list_for_each_entry(vn, &vecnet_devices, list)
		if (vn->transport->shutdown)
			vn->transport->shutdown(vn);
}

__uml_exitcall(vecnet_exit);
