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

#if KERNEL_VERSION(6, 17, 0) > LINUX_VERSION_CODE
/* 6.17 made threaded NAPI a mode (enum netdev_napi_threaded) */
#define NETDEV_NAPI_THREADED_ENABLED	true
#endif

#ifndef kzalloc_obj
/* 7.x allocates by type: one zeroed object of the type of @obj */
#define kzalloc_obj(obj, gfp) kzalloc(sizeof(obj), gfp)
#endif

#endif /* _VECNET_COMPAT_H */
