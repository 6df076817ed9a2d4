// SPDX-License-Identifier: GPL-2.0
/*
 * vecnet: the bess and fd transports, one raw Ethernet frame per packet
 * on a socket the guest did not have to set up itself.
 *
 *	vecN:transport=bess,dst=PATH[,src=PATH]
 *	vecN:transport=fd,fd=N
 *
 * bess: a SOCK_SEQPACKET connection to the unix socket at @dst (a BESS
 * port, or vecswitch --seqpacket), from a socket bound to @src when
 * given.  A connection that ends (the peer closed it or went away)
 * turns the carrier off; the link check then connects again, and the
 * carrier comes back on with the new connection.
 *
 * fd: a socket the process that started the guest left open as
 * descriptor @fd: datagram, seqpacket or packet, already bound and
 * connected as its owner wants.  It is the owner's, so it stays open
 * across down and up; removing the device closes it.  A seqpacket
 * connection that ends turns the carrier off until the next down/up.
 */

#include <linux/mutex.h>
#include <linux/net.h>
#include <linux/slab.h>
#include <linux/string.h>
#include "vecnet.h"
#include "vecnet_core.h"
#include "vecnet_parse.h"
#include "vecnet_peer.h"
#include "vecnet_transport.h"
#include "vecnet_user.h"

struct vecnet_bess {
	char dst[VECNET_UNIX_PATH_MAX];
	char src[VECNET_UNIX_PATH_MAX];
	/* @src is bound by our socket and ours to remove */
	bool bound;
};

static const struct vecnet_key vecnet_bess_keys[] = {
	{ .name = "dst", .type = VECNET_KEY_STR,
	  .max = VECNET_UNIX_PATH_MAX - 1, .required = true },
	{ .name = "src", .type = VECNET_KEY_STR,
	  .max = VECNET_UNIX_PATH_MAX - 1 },
	{ }
};

static int vecnet_bess_setup(struct vecnet_dev *vn,
			     const struct vecnet_args *args,
			     struct vecnet_err *err)
{
	const char *src = vecnet_arg_str(args, "src");
	struct vecnet_bess *bess;

	bess = kzalloc_obj(*bess, GFP_KERNEL);
	if (!bess) {
		vecnet_err_set(err, "vec%u: out of memory", vn->cfg.index);
		return -ENOMEM;
	}
	strscpy(bess->dst, vecnet_arg_str(args, "dst"), sizeof(bess->dst));
	if (src) {
		if (!strcmp(src, bess->dst)) {
			vecnet_err_set(err, "vec%u: option 'src': the same socket as 'dst'",
				       vn->cfg.index);
			kfree(bess);
			return -EINVAL;
		}
		strscpy(bess->src, src, sizeof(bess->src));
	}
	vn->tpriv = bess;
	return 0;
}

static void vecnet_bess_unbind(struct vecnet_bess *bess)
{
	if (bess->bound)
		vecnet_user_unlink(bess->src);
	bess->bound = false;
}

/*
 * A new connection, or a negative errno when the peer is not there, with
 * @path the socket the error concerns: @src when binding it failed
 */
static int vecnet_bess_connect(struct vecnet_dev *vn, const char **path)
{
	struct vecnet_bess *bess = vn->tpriv;
	unsigned long long id;
	int fd, err;

	/* the old socket holds @src until it is closed: let the new one in */
	vecnet_bess_unbind(bess);
	*path = bess->src[0] ? bess->src : bess->dst;
	fd = vecnet_user_unix_seqpacket(bess->src[0] ? bess->src : NULL);
	if (fd < 0)
		return fd;
	if (bess->src[0])
		bess->bound = true;
	*path = bess->dst;
	err = vecnet_user_unix_connect(fd, bess->dst, &id);
	if (err) {
		vecnet_user_close(fd);
		vecnet_bess_unbind(bess);
		return err;
	}
	return fd;
}

static int vecnet_bess_open(struct vecnet_dev *vn)
{
	struct vecnet_bess *bess = vn->tpriv;
	const char *path;
	int fd;

	vn->host.conn = true;
	vecnet_peer_path(vn, bess->dst, "--seqpacket");
	fd = vecnet_bess_connect(vn, &path);
	if (fd >= 0) {
		vn->host.fd = fd;
		return 0;
	}
	vecnet_link_unreachable(vn, path,
				path == bess->src ? NULL : "--seqpacket", fd);
	/* src= that cannot be bound, or a peer closed to us: no retry helps */
	if (path == bess->src || fd == -ENAMETOOLONG || fd == -EACCES)
		return fd;
	/*
	 * Not there yet: the core needs a descriptor for its interrupts
	 * all the same.  An unconnected socket reads nothing and refuses
	 * to send; the link check replaces it once the peer answers.
	 */
	fd = vecnet_user_unix_seqpacket(NULL);
	if (fd < 0)
		return fd;
	vn->host.fd = fd;
	return -ENOTCONN;
}

static void vecnet_bess_shutdown(struct vecnet_dev *vn)
{
	vecnet_bess_unbind(vn->tpriv);
}

static void vecnet_bess_close(struct vecnet_dev *vn)
{
	vecnet_close_fd(vn);
	vecnet_bess_unbind(vn->tpriv);
}

static void vecnet_bess_destroy(struct vecnet_dev *vn)
{
	kfree(vn->tpriv);
	vn->tpriv = NULL;
}

/* While the carrier is on the connection stands: receive sees its end */
static int vecnet_bess_probe(struct vecnet_dev *vn)
{
	struct vecnet_bess *bess = vn->tpriv;
	const char *path;
	int fd, err;

	if (netif_carrier_ok(vn->dev))
		return 0;
	fd = vecnet_bess_connect(vn, &path);
	/* the link check names the peer's socket, not src= */
	if (fd < 0 && path != bess->dst)
		vecnet_link_unreachable(vn, path, NULL, fd);
	if (fd < 0)
		return fd;
	err = vecnet_replace_fd(vn, fd);
	if (err)
		return err;
	return VECNET_PEER_NEW;
}

const struct vecnet_transport vecnet_bess = {
	.name		= "bess",
	.keys		= vecnet_bess_keys,
	.max_mtu	= VECNET_MTU_MAX,
	.setup		= vecnet_bess_setup,
	.open		= vecnet_bess_open,
	.close		= vecnet_bess_close,
	.destroy	= vecnet_bess_destroy,
	.shutdown	= vecnet_bess_shutdown,
	.probe_peer	= vecnet_bess_probe,
};

/* ---- fd ----------------------------------------------------------------- */

struct vecnet_fd {
	struct list_head list;
	int fd;
	unsigned int index;
};

/*
 * Descriptors fd= devices hold: the device that holds one closes it when
 * it goes, so a second device must not take it too (the second close
 * could hit a descriptor the host has since reused for something else).
 */
static LIST_HEAD(vecnet_fds);
static DEFINE_MUTEX(vecnet_fds_lock);

static const struct vecnet_key vecnet_fd_keys[] = {
	/* 0 to 2 are the guest's own console and standard streams */
	{ .name = "fd", .type = VECNET_KEY_U32, .min = 3, .max = INT_MAX,
	  .required = true },
	{ }
};

static int vecnet_fd_setup(struct vecnet_dev *vn,
			   const struct vecnet_args *args,
			   struct vecnet_err *err)
{
	u32 fd = vecnet_arg_u32(args, "fd", 0);
	struct vecnet_fd *vfd, *other;
	int type;

	if (!vecnet_user_fd_inherited(fd)) {
		vecnet_err_set(err,
			       "vec%u: option 'fd': descriptor %u is UML's own, not one the guest was started with",
			       vn->cfg.index, fd);
		return -EPERM;
	}
	type = vecnet_user_fd_socket(fd);
	if (type < 0) {
		vecnet_err_set(err, "vec%u: option 'fd': descriptor %u is %s (error %d)",
			       vn->cfg.index, fd,
			       type == -ENOTSOCK ? "not a socket" : "not open",
			       -type);
		return type;
	}
	if (type != SOCK_DGRAM && type != SOCK_SEQPACKET && type != SOCK_RAW) {
		vecnet_err_set(err,
			       "vec%u: option 'fd': descriptor %u is a stream socket, which keeps no frame boundaries",
			       vn->cfg.index, fd);
		return -EPROTOTYPE;
	}
	vfd = kzalloc_obj(*vfd, GFP_KERNEL);
	if (!vfd) {
		vecnet_err_set(err, "vec%u: out of memory", vn->cfg.index);
		return -ENOMEM;
	}
	vfd->fd = fd;
	vfd->index = vn->cfg.index;
	mutex_lock(&vecnet_fds_lock);
	list_for_each_entry(other, &vecnet_fds, list) {
		if (other->fd == fd) {
			mutex_unlock(&vecnet_fds_lock);
			vecnet_err_set(err, "vec%u: option 'fd': descriptor %u is vec%u's already",
				       vn->cfg.index, fd, other->index);
			kfree(vfd);
			return -EBUSY;
		}
	}
	list_add(&vfd->list, &vecnet_fds);
	mutex_unlock(&vecnet_fds_lock);
	vn->host.conn = type == SOCK_SEQPACKET;
	vn->tpriv = vfd;
	return 0;
}

static int vecnet_fd_open(struct vecnet_dev *vn)
{
	struct vecnet_fd *vfd = vn->tpriv;

	vn->host.fd = vfd->fd;
	return 0;
}

/* The descriptor is the owner's: down leaves it open */
static void vecnet_fd_close(struct vecnet_dev *vn)
{
	vn->host.fd = -1;
}

static void vecnet_fd_destroy(struct vecnet_dev *vn)
{
	struct vecnet_fd *vfd = vn->tpriv;

	if (vfd) {
		mutex_lock(&vecnet_fds_lock);
		list_del(&vfd->list);
		mutex_unlock(&vecnet_fds_lock);
		vecnet_user_close(vfd->fd);
	}
	kfree(vfd);
	vn->tpriv = NULL;
}

const struct vecnet_transport vecnet_fd = {
	.name		= "fd",
	.keys		= vecnet_fd_keys,
	.max_mtu	= VECNET_MTU_MAX,
	.setup		= vecnet_fd_setup,
	.open		= vecnet_fd_open,
	.close		= vecnet_fd_close,
	.destroy	= vecnet_fd_destroy,
};
