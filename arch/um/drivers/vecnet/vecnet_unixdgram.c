// SPDX-License-Identifier: GPL-2.0
/*
 * vecnet: the unixdgram transport.  One raw Ethernet frame per AF_UNIX
 * datagram, no header: the framing of QEMU's -netdev dgram.  Where the
 * peer agrees (vecswitch, another guest; vecnet_nego.c), a virtio_net_hdr
 * leads every frame, so that TSO super-frames of up to 64 KiB and
 * checksum offload cross in one datagram.  vnet=auto (the default) asks
 * and falls back to plain frames, vnet=1 insists, vnet=0 never asks.
 *
 *	vecN:transport=unixdgram,path=PEER[,local=PATH][,vnet=auto|0|1]
 *		[,shortcut=0|1][,queues=N]
 *
 * The socket binds @local (by default vecN.sock in the guest's uml_dir)
 * and connect()s to @path.  Connecting matters: the host sends a
 * connected sender a wakeup when the peer's queue drains, and a peer
 * that connects back lifts the receive queue limit.  A peer that
 * restarts at the same path is found again by connecting again.
 *
 * With queues=N each further queue K has a socket of its own, bound to
 * @local.qK and connected to @path as well; vecnet_nego.c makes them
 * part of the guest's port on the switch.
 */

#include <linux/slab.h>
#include <linux/string.h>
#include "vecnet.h"
#include "vecnet_chan.h"
#include "vecnet_core.h"
#include "vecnet_nego.h"
#include "vecnet_parse.h"
#include "vecnet_peer.h"
#include "vecnet_transport.h"
#include "vecnet_user.h"

struct vecnet_unixdgram {
	char local[VECNET_UNIX_PATH_MAX];
	char peer[VECNET_UNIX_PATH_MAX];
	/* @local (and @local.qK) are ours to remove: bound, not yet removed */
	bool bound;
	unsigned long qbound;
	/* The peer's socket file when last connected, to spot a restart */
	unsigned long long peer_id;
	/* Said that the host cannot tell whether the peer lives */
	bool diag_said;
};

static const struct vecnet_key vecnet_unixdgram_keys[] = {
	{ .name = "path", .type = VECNET_KEY_STR,
	  .max = VECNET_UNIX_PATH_MAX - 1, .required = true },
	{ .name = "local", .type = VECNET_KEY_STR,
	  .max = VECNET_UNIX_PATH_MAX - 1 },
	{ .name = "vnet", .type = VECNET_KEY_STR, .max = 4 },
	{ .name = "shortcut", .type = VECNET_KEY_BOOL },
	{ .name = "gso_max", .type = VECNET_KEY_U32,
	  .min = VECNET_GSO_MAX_DEFAULT, .max = VECNET_GSO_MAX_MAX },
	{ }
};

/* @local.qK, the socket of further queue @k */
static int vecnet_unixdgram_qpath(const struct vecnet_unixdgram *ud,
				  unsigned int k, char *buf)
{
	int n = snprintf(buf, VECNET_UNIX_PATH_MAX, "%s.q%u", ud->local, k);

	return n < 0 || n >= VECNET_UNIX_PATH_MAX ? -ENAMETOOLONG : 0;
}

static int vecnet_unixdgram_setup(struct vecnet_dev *vn,
				  const struct vecnet_args *args,
				  struct vecnet_err *err)
{
	const char *local = vecnet_arg_str(args, "local");
	char path[VECNET_UNIX_PATH_MAX];
	struct vecnet_unixdgram *ud;
	int n;

	ud = kzalloc_obj(*ud, GFP_KERNEL);
	if (!ud) {
		vecnet_err_set(err, "vec%u: out of memory", vn->cfg.index);
		return -ENOMEM;
	}
	strscpy(ud->peer, vecnet_arg_str(args, "path"), sizeof(ud->peer));
	if (local)
		n = strscpy(ud->local, local, sizeof(ud->local));
	else
		n = snprintf(ud->local, sizeof(ud->local), "%svec%u.sock",
			     vecnet_run_dir(), vn->cfg.index);
	if (n < 0 || n >= sizeof(ud->local)) {
		vecnet_err_set(err,
			       "vec%u: option 'local': the default under the uml_dir is longer than %u bytes; give local=",
			       vn->cfg.index, VECNET_UNIX_PATH_MAX - 1);
		goto bad;
	}
	if (!strcmp(ud->local, ud->peer)) {
		vecnet_err_set(err, "vec%u: option 'local': the same socket as 'path'",
			       vn->cfg.index);
		goto bad;
	}
	if (vecnet_nego_setup(vn, vecnet_arg_str(args, "vnet"), err))
		goto bad;
	/* headers as the peer agrees, and its super-frames at any time */
	if (vn->nego.want != VECNET_VNET_OFF)
		vecnet_add_flags(vn, VECNET_TF_NEGOTIATE | VECNET_TF_RX_GSO);
	/* further queues join through the negotiation */
	if (vn->cfg.queues > 1 && vn->nego.want == VECNET_VNET_OFF) {
		vecnet_err_set(err, "vec%u: option 'queues': needs vnet=auto or vnet=1",
			       vn->cfg.index);
		goto bad;
	}
	/* nor can ethtool -L add them to a plain link */
	if (vn->nego.want == VECNET_VNET_OFF)
		vn->cfg.max_queues = 1;
	if (vn->cfg.max_queues > 1 &&
	    vecnet_unixdgram_qpath(ud, vn->cfg.max_queues - 1, path)) {
		vecnet_err_set(err, "vec%u: option 'local': %s.q%u is longer than %u bytes",
			       vn->cfg.index, ud->local, vn->cfg.max_queues - 1,
			       VECNET_UNIX_PATH_MAX - 1);
		goto bad;
	}
	if (vecnet_chan_setup(vn, args, err) ||
	    vecnet_nego_gso_max(vn, vecnet_arg_u32(args, "gso_max",
						   VECNET_GSO_MAX_DEFAULT), err))
		goto bad;
	vn->tpriv = ud;
	return 0;

bad:
	kfree(ud);
	return -EINVAL;
}

/* Frames in flight are charged to the sender: room for a full ring */
static int vecnet_unixdgram_sndbuf(struct vecnet_dev *vn)
{
	u64 frame = SKB_TRUESIZE(vn->dev->mtu + ETH_HLEN + VLAN_HLEN);

	if (vn->flags & VECNET_TF_NEGOTIATE)
		frame = SKB_TRUESIZE(vecnet_frame_max(vn) +
				     vn->host.tx_hdr_len);

	return min_t(u64, frame * vn->tx_depth, INT_MAX / 2);
}

static void vecnet_unixdgram_close(struct vecnet_dev *vn);

/* The further queues' sockets; they connect with queue 0's */
static int vecnet_unixdgram_open_queues(struct vecnet_dev *vn)
{
	struct vecnet_unixdgram *ud = vn->tpriv;
	char path[VECNET_UNIX_PATH_MAX];
	unsigned int k;
	int fd;

	for (k = 1; k < vn->nq; k++) {
		vecnet_unixdgram_qpath(ud, k, path);
		fd = vecnet_user_unix_dgram(path, vecnet_unixdgram_sndbuf(vn));
		if (fd < 0) {
			vecnet_link_unreachable(vn, path, NULL, fd);
			return fd;
		}
		vn->q[k].fd = fd;
		__set_bit(k, &ud->qbound);
	}
	return 0;
}

/* Connect every further queue as queue 0 is; the first error counts */
static int vecnet_unixdgram_connect_queues(struct vecnet_dev *vn)
{
	struct vecnet_unixdgram *ud = vn->tpriv;
	unsigned long long id;
	unsigned int k;
	int err = 0;

	for (k = 1; k < vn->nq; k++) {
		int e = vecnet_user_unix_connect(vn->q[k].fd, ud->peer, &id);

		if (e && !err)
			err = e;
	}
	return err;
}

static int vecnet_unixdgram_open(struct vecnet_dev *vn)
{
	struct vecnet_unixdgram *ud = vn->tpriv;
	int fd, err;

	err = vecnet_chan_start(vn);
	if (err)
		return err;
	vecnet_peer_path(vn, ud->peer, "--dgram");
	fd = vecnet_user_unix_dgram(ud->local, vecnet_unixdgram_sndbuf(vn));
	if (fd < 0) {
		vecnet_link_unreachable(vn, ud->local, NULL, fd);
		return fd;
	}
	vn->host.fd = fd;
	ud->bound = true;
	vecnet_chan_set_sndbuf(vn, vecnet_unixdgram_sndbuf(vn));
	err = vecnet_unixdgram_open_queues(vn);
	if (err) {
		vecnet_unixdgram_close(vn);
		return err;
	}

	err = vecnet_user_unix_connect(fd, ud->peer, &ud->peer_id);
	if (!err)
		err = vecnet_unixdgram_connect_queues(vn);
	if (!err)
		return 0;
	vecnet_link_unreachable(vn, ud->peer, "--dgram", err);
	return -ENOTCONN;
}

static void vecnet_unixdgram_shutdown(struct vecnet_dev *vn)
{
	struct vecnet_unixdgram *ud = vn->tpriv;
	char path[VECNET_UNIX_PATH_MAX];
	unsigned int k;

	if (ud->bound) {
		vecnet_user_unlink(ud->local);
		ud->bound = false;
	}
	for_each_set_bit(k, &ud->qbound, VECNET_QUEUES_MAX) {
		if (!vecnet_unixdgram_qpath(ud, k, path))
			vecnet_user_unlink(path);
	}
	ud->qbound = 0;
}

static void vecnet_unixdgram_close(struct vecnet_dev *vn)
{
	vecnet_close_fd(vn);
	vecnet_unixdgram_shutdown(vn);
}

static void vecnet_unixdgram_destroy(struct vecnet_dev *vn)
{
	kfree(vn->tpriv);
	vn->tpriv = NULL;
}

/*
 * Connecting again is harmless while the same peer lives, and finds a
 * restarted one: the old connection would refuse every frame.  A failed
 * connect leaves the old connection as it was.  A peer
 * that restarted between two probes, unnoticed because nothing was
 * sent, is reported as new so that the guest announces itself to it.
 */
static int vecnet_unixdgram_probe(struct vecnet_dev *vn)
{
	struct vecnet_unixdgram *ud = vn->tpriv;
	unsigned long long id;
	int err;

	err = vecnet_user_unix_connect(vn->host.fd, ud->peer, &id);
	/*
	 * Nothing at the path while the carrier is on: the socket file was
	 * removed, by a peer that exited (a switch stopped cleanly does
	 * this) or under one that runs on, whose connection holds.  Ask
	 * the host which, as a guest that sends nothing would otherwise
	 * never learn it.  Where the host cannot tell, the next send does:
	 * it is refused once the peer has gone.
	 */
	if (err == -ENOENT && netif_carrier_ok(vn->dev)) {
		int closed = vecnet_user_unix_peer_closed(vn->host.fd);

		if (closed == 1) {
			netdev_info(vn->dev, "peer at %s exited, its socket file is gone\n",
				    ud->peer);
			return -ECONNREFUSED;
		}
		if (closed < 0 && !ud->diag_said) {
			ud->diag_said = true;
			netdev_info(vn->dev,
				    "socket file %s is gone and the host cannot say whether its peer lives (%d): the carrier stays until a send is refused\n",
				    ud->peer, closed);
		}
		return VECNET_PEER_HELD;
	}
	if (err)
		return err;
	/* a switch that restarted is new to the further queues too */
	vecnet_unixdgram_connect_queues(vn);
	/* the file is back: say it again should it go again */
	ud->diag_said = false;
	if (id == ud->peer_id)
		return 0;
	ud->peer_id = id;
	return VECNET_PEER_NEW;
}

const struct vecnet_transport vecnet_unixdgram = {
	.name		= "unixdgram",
	.keys		= vecnet_unixdgram_keys,
	.flags		= VECNET_TF_MQ,
	.max_mtu	= VECNET_MTU_MAX,
	.setup		= vecnet_unixdgram_setup,
	.open		= vecnet_unixdgram_open,
	.close		= vecnet_unixdgram_close,
	.destroy	= vecnet_unixdgram_destroy,
	.shutdown	= vecnet_unixdgram_shutdown,
	.probe_peer	= vecnet_unixdgram_probe,
};
