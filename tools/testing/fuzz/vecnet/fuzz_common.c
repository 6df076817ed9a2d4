// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_common.c - what the driver's parser and tunnel code expect from the
 * rest of the driver. The transports whose code is not built here are
 * stand-ins with their real names and no keys of their own, so their
 * options are refused as unknown; gre and l2tpv3 are the real ones.
 * unixdgram and tap take several queues, as the real ones do.
 */
#include "kshim.h"
#include "vecnet.h"
#include "vecnet_core.h"
#include "vecnet_transport.h"
#include "vecnet_user.h"

#define STANDIN_FLAGS(n, f) \
	const struct vecnet_transport vecnet_##n = { .name = #n, .max_mtu = 1500, \
						     .flags = (f) }
#define STANDIN(n) STANDIN_FLAGS(n, 0)

STANDIN_FLAGS(unixdgram, VECNET_TF_MQ);
STANDIN_FLAGS(tap, VECNET_TF_MQ);
STANDIN(raw);
STANDIN(hybrid);
STANDIN(bess);
STANDIN(fd);

void vecnet_close_fd(struct vecnet_dev *vn)
{
	(void)vn;
}

int vecnet_user_inet_socket(int family, int type, int proto,
			    const void *addr, int len)
{
	(void)family; (void)type; (void)proto; (void)addr; (void)len;
	return -EPERM;
}
