// SPDX-License-Identifier: GPL-2.0
/*
 * vecnet: the tap transport.
 *
 *	vecN:transport=tap,ifname=NAME[,gro=0|1][,queues=N]
 *
 * The guest end of a host tap device.  Every frame carries a
 * virtio_net_hdr (IFF_VNET_HDR), so the guest hands segmentation and
 * checksums to the host, and with gro=1 the host hands the guest the
 * super-frames it has coalesced instead of cutting them up first.
 * ifname is required: the device is found, or created when the host
 * lets the guest create it, under that name.  With queues=N above 1 the
 * tap is a multiqueue one (IFF_MULTI_QUEUE) and each queue has a
 * descriptor of its own on it; the host spreads its frames by flow.  A
 * tap made without it on the host takes one descriptor, and ethtool -l
 * offers one channel: what the tap is shows when it is attached, at
 * set-up (a tap that is there then) and at every up.
 */

#include <linux/slab.h>
#include <linux/string.h>
#include <linux/virtio_net.h>
#include "vecnet.h"
#include "vecnet_core.h"
#include "vecnet_parse.h"
#include "vecnet_tap.h"
#include "vecnet_transport.h"
#include "vecnet_user.h"

struct vecnet_tap {
	char ifname[IFNAMSIZ];
	/* gro=1: start with rx-gro-hw on (ethtool -K changes it later) */
	bool gro;
	/*
	 * The tap, as last attached, is a persistent one without
	 * IFF_MULTI_QUEUE: it takes one queue.  One the guest made itself
	 * is not: it goes at down and is made again at up, for the queues
	 * the device has then.
	 */
	bool one_queue;
};

static const struct vecnet_key vecnet_tap_keys[] = {
	{ .name = "ifname", .type = VECNET_KEY_STR, .max = IFNAMSIZ - 1,
	  .required = true },
	{ .name = "gro", .type = VECNET_KEY_BOOL, .max = 1 },
	{ }
};

/* What the tap behind @fd takes, kept for ethtool -l */
static void vecnet_tap_learn(struct vecnet_tap *tap, int fd)
{
	int ret = vecnet_user_tap_one_queue(fd);

	if (ret >= 0)
		tap->one_queue = ret;
}

static int vecnet_tap_setup(struct vecnet_dev *vn,
			    const struct vecnet_args *args,
			    struct vecnet_err *err)
{
	struct vecnet_tap *tap;
	int fd;

	tap = kzalloc_obj(*tap, GFP_KERNEL);
	if (!tap) {
		vecnet_err_set(err, "vec%u: out of memory", vn->cfg.index);
		return -ENOMEM;
	}
	strscpy(tap->ifname, vecnet_arg_str(args, "ifname"), sizeof(tap->ifname));
	tap->gro = vecnet_arg_u32(args, "gro", 0);
	if (tap->gro)
		vn->dev->features |= NETIF_F_GRO_HW;
	vn->tpriv = tap;
	/*
	 * A tap that is there already is attached once and let go, so that
	 * ethtool -l is right before the first up; none is made here
	 */
	if (vecnet_user_if_exists(tap->ifname)) {
		fd = vecnet_user_tap_open(tap->ifname,
					  sizeof(struct virtio_net_hdr), false);
		if (fd >= 0) {
			vecnet_tap_learn(tap, fd);
			vecnet_user_close(fd);
		}
	}
	return 0;
}

/* What the host may hand us follows what the guest takes: rx-gro-hw */
int vecnet_tap_offload(int fd, netdev_features_t features)
{
	return vecnet_user_tap_set_offload(fd, !!(features & NETIF_F_GRO_HW),
					   !!(features & NETIF_F_RXCSUM));
}

/*
 * A descriptor on the tap with the offloads set, or a negative errno;
 * @mq: one queue of a multiqueue tap
 */
int vecnet_tap_attach(struct vecnet_dev *vn, const char *ifname, bool mq)
{
	int fd, err;

	fd = vecnet_user_tap_open(ifname, sizeof(struct virtio_net_hdr), mq);
	if (fd < 0) {
		netdev_err(vn->dev, "cannot attach to tap %s: %d\n", ifname, fd);
		return fd;
	}
	err = vecnet_tap_offload(fd, vn->dev->features);
	if (err) {
		netdev_err(vn->dev, "tap %s refuses offload settings: %d\n",
			   ifname, err);
		vecnet_user_close(fd);
		return err;
	}
	return fd;
}

static int vecnet_tap_open(struct vecnet_dev *vn)
{
	struct vecnet_tap *tap = vn->tpriv;
	unsigned int k;
	int fd;

	for (k = 0; k < vn->nq; k++) {
		fd = vecnet_tap_attach(vn, tap->ifname, vn->nq > 1);
		if (fd < 0) {
			vecnet_close_fd(vn);
			return fd;
		}
		if (k)
			vn->q[k].fd = fd;
		else
			vn->host.fd = fd;
	}
	vecnet_tap_learn(tap, vn->host.fd);
	return 0;
}

static u32 vecnet_tap_max_queues(struct vecnet_dev *vn)
{
	struct vecnet_tap *tap = vn->tpriv;

	return tap->one_queue ? 1 : vn->cfg.max_queues;
}

static void vecnet_tap_destroy(struct vecnet_dev *vn)
{
	kfree(vn->tpriv);
	vn->tpriv = NULL;
}

static int vecnet_tap_set_features(struct vecnet_dev *vn,
				   netdev_features_t features)
{
	unsigned int k;
	int err;

	if (vn->host.fd < 0)
		return 0;
	err = vecnet_tap_offload(vn->host.fd, features);
	for (k = 1; !err && k < vn->nq; k++)
		err = vecnet_tap_offload(vn->q[k].fd, features);
	return err;
}

const struct vecnet_transport vecnet_tap = {
	.name		= "tap",
	.keys		= vecnet_tap_keys,
	.flags		= VECNET_TF_VNET_HDR | VECNET_TF_CHARDEV | VECNET_TF_MQ,
	.max_mtu	= VECNET_MTU_MAX,
	.setup		= vecnet_tap_setup,
	.open		= vecnet_tap_open,
	.close		= vecnet_close_fd,
	.destroy	= vecnet_tap_destroy,
	.set_features	= vecnet_tap_set_features,
	.max_queues	= vecnet_tap_max_queues,
};
