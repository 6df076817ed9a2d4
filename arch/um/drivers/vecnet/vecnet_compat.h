/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What differs between the kernel series this driver builds against
 * (6.12 LTS and 7.x): the driver is written to the newest interfaces,
 * and this header supplies them on older trees.  Nothing else in the
 * driver tests the kernel version.
 */
#ifndef _VECNET_COMPAT_H
#define _VECNET_COMPAT_H

#include <linux/version.h>
#include <linux/hrtimer.h>
#include <linux/netdevice.h>
#include <linux/slab.h>

#if KERNEL_VERSION(6, 13, 0) > LINUX_VERSION_CODE
/* 6.13 set the callback at initialisation (hrtimer_setup) */
static inline void
vecnet_hrtimer_setup(struct hrtimer *timer,
		     enum hrtimer_restart (*function)(struct hrtimer *),
		     clockid_t clock_id, enum hrtimer_mode mode)
{
	hrtimer_init(timer, clock_id, mode);
	timer->function = function;
}

#define hrtimer_setup vecnet_hrtimer_setup
#endif

#if KERNEL_VERSION(6, 14, 0) > LINUX_VERSION_CODE
/*
 * 6.13 kept each NAPI instance's settings and id by index (napi_config),
 * 6.14 put NAPI under the device's instance lock, with calls for those
 * who hold it; before, RTNL alone guarded it
 */
#define netdev_lock(dev)		((void)(dev))
#define netdev_unlock(dev)		((void)(dev))

static inline void
vecnet_napi_add_config(struct net_device *dev, struct napi_struct *napi,
		       int (*poll)(struct napi_struct *, int), int index)
{
	netif_napi_add(dev, napi, poll);
}

#define netif_napi_add_config_locked vecnet_napi_add_config
#define napi_enable_locked(napi)	napi_enable(napi)
#define napi_disable_locked(napi)	napi_disable(napi)
#define netif_napi_del_locked(napi)	netif_napi_del(napi)
#define netif_napi_set_irq_locked(napi, irq) netif_napi_set_irq(napi, irq)
#endif

#if KERNEL_VERSION(6, 17, 0) > LINUX_VERSION_CODE
/* 6.17 made threaded NAPI a mode (enum netdev_napi_threaded) */
#define NETDEV_NAPI_THREADED_ENABLED	true
#endif

#ifndef kzalloc_obj
/* 7.x allocates by type: one zeroed object of the type of @obj */
#define kzalloc_obj(obj, gfp) kzalloc(sizeof(obj), gfp)
#endif

#endif /* _VECNET_COMPAT_H */
