/* SPDX-License-Identifier: GPL-2.0 */
/* vecnet: the devices (vecnet_dev.c) */
#ifndef __UM_VECNET_DEV_H
#define __UM_VECNET_DEV_H

#include "vecnet.h"

int vecnet_device_add(const char *spec, struct vecnet_err *err);
int vecnet_device_remove(u32 index, struct vecnet_err *err);

#endif
