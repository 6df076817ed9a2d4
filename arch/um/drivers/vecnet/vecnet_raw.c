// SPDX-License-Identifier: GPL-2.0
/*
 * vecnet: the raw and hybrid transports.
 *
 *	vecN:transport=raw,ifname=NAME[,bpffile=PATH][,gro=0|1]
 *	vecN:transport=hybrid,ifname=TAP[,bpffile=PATH][,gro=0|1]
 *
 * raw: the guest sends and receives whole Ethernet frames on a host
 * interface through an AF_PACKET socket.  The socket is bound for every
 * protocol, so the host reads each frame's real protocol from its
 * header; frames bypass the host's qdisc; and every frame carries a
 * virtio_net_hdr (PACKET_VNET_HDR), so segmentation and checksums can be
 * left to the host, and super-frames the host has coalesced arrive whole.
 * A packet socket also sees what the host itself sends out of the
 * interface; a classic BPF filter keeps those frames, and any with the
 * guest's own source address, away from the guest.
 *
 * hybrid: the guest writes to a tap device and reads what the host sends
 * out of that tap through a packet socket bound to it, which takes
 * frames many at a time where a tap gives one per read.  Here the
 * filter is the other way round: only frames leaving the host through
 * the tap are the guest's, and none with its own source address.  With
 * gro=1 (rx-gro-hw) the tap offers TSO to the host, whose super-frames
 * then reach the guest whole.
 *
 * bpffile= replaces the self filter with a program of the user's (an
 * array of struct sock_filter, as the host's SO_ATTACH_FILTER takes it).
 * bpfflash=1 lets the guest replace it at run time with ethtool -f,
 * which puts a program of the guest's choosing into the host kernel.
 */

#include <linux/filter.h>
#include <linux/if_packet.h>
#include <linux/slab.h>
#include <linux/string.h>
#include "vecnet.h"
#include "vecnet_core.h"
#include "vecnet_parse.h"
#include "vecnet_tap.h"
#include "vecnet_transport.h"
#include "vecnet_user.h"

#define VECNET_BPF_PATH_MAX	256

struct vecnet_raw {
	char ifname[IFNAMSIZ];
	/* bpfflash=1: ethtool -f in the guest may replace the filter */
	bool flash;
	/* hybrid: the guest's frames are the ones the host sends out */
	bool hybrid;
	/* the user's program from bpffile=, or NULL for the self filter */
	struct sock_filter *prog;
	unsigned int prog_len;
};

static const struct vecnet_key vecnet_raw_keys[] = {
	{ .name = "ifname", .type = VECNET_KEY_STR, .max = IFNAMSIZ - 1,
	  .required = true },
	{ .name = "bpffile", .type = VECNET_KEY_STR,
	  .max = VECNET_BPF_PATH_MAX - 1 },
	/*
	 * hybrid: rx-gro-hw at start.  raw receive is always ready for
	 * super-frames; the key is kept there for existing command lines.
	 */
	{ .name = "gro", .type = VECNET_KEY_BOOL, .max = 1 },
	{ .name = "bpfflash", .type = VECNET_KEY_BOOL, .max = 1 },
	{ }
};

/* A program's size in bytes is a whole number of 1 to 4096 instructions */
static bool vecnet_raw_prog_ok(size_t len)
{
	return len && len <= BPF_MAXINSNS * sizeof(struct sock_filter) &&
	       !(len % sizeof(struct sock_filter));
}

/* Read a classic BPF program from a host file and check its shape */
static int vecnet_raw_load_prog(struct vecnet_dev *vn, struct vecnet_raw *raw,
				const char *path, struct vecnet_err *err)
{
	const size_t max = BPF_MAXINSNS * sizeof(struct sock_filter);
	void *buf;
	int len;

	buf = kmalloc(max + 1, GFP_KERNEL);
	if (!buf) {
		vecnet_err_set(err, "vec%u: out of memory", vn->cfg.index);
		return -ENOMEM;
	}
	len = vecnet_user_read_file(path, buf, max + 1);
	if (len == -ESPIPE) {
		vecnet_err_set(err, "vec%u: option 'bpffile': %s is not a regular file",
			       vn->cfg.index, path);
		goto bad;
	}
	if (len < 0) {
		vecnet_err_set(err, "vec%u: option 'bpffile': cannot read %s: error %d",
			       vn->cfg.index, path, -len);
		goto bad;
	}
	if (!vecnet_raw_prog_ok(len)) {
		vecnet_err_set(err,
			       "vec%u: option 'bpffile': %s is %d bytes, not 1 to %u instructions of 8 bytes",
			       vn->cfg.index, path, len, BPF_MAXINSNS);
		len = -EINVAL;
		goto bad;
	}
	raw->prog = buf;
	raw->prog_len = len / sizeof(struct sock_filter);
	return 0;

bad:
	kfree(buf);
	return len;
}

static int vecnet_raw_setup(struct vecnet_dev *vn,
			    const struct vecnet_args *args,
			    struct vecnet_err *err)
{
	const char *bpffile = vecnet_arg_str(args, "bpffile");
	struct vecnet_raw *raw;
	int ret;

	raw = kzalloc_obj(*raw, GFP_KERNEL);
	if (!raw) {
		vecnet_err_set(err, "vec%u: out of memory", vn->cfg.index);
		return -ENOMEM;
	}
	strscpy(raw->ifname, vecnet_arg_str(args, "ifname"), sizeof(raw->ifname));
	raw->flash = vecnet_arg_u32(args, "bpfflash", 0);
	if (bpffile) {
		ret = vecnet_raw_load_prog(vn, raw, bpffile, err);
		if (ret) {
			kfree(raw);
			return ret;
		}
	}
	vn->tpriv = raw;
	return 0;
}

/*
 * raw: accept a frame unless it is going out of the interface or comes
 * from the guest's own address.  hybrid: accept only frames going out
 * of the tap, again none from the guest's address.  The address is part
 * of the program, so a new one means a new program (vecnet_raw_filter
 * is called again).
 */
static int vecnet_raw_self_filter(struct vecnet_dev *vn, int fd)
{
	struct vecnet_raw *raw = vn->tpriv;
	const u8 *mac = vn->dev->dev_addr;
	u32 hi = (u32)mac[0] << 24 | (u32)mac[1] << 16 | (u32)mac[2] << 8 | mac[3];
	u32 lo = (u32)mac[4] << 8 | mac[5];
	/* on the packet type test: where "outgoing" and "other" go */
	u8 out = raw->hybrid ? 0 : 4, other = raw->hybrid ? 4 : 0;
	struct sock_filter prog[] = {
		BPF_STMT(BPF_LD | BPF_B | BPF_ABS, SKF_AD_OFF + SKF_AD_PKTTYPE),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PACKET_OUTGOING, out, other),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ETH_ALEN),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, hi, 0, 3),
		BPF_STMT(BPF_LD | BPF_H | BPF_ABS, ETH_ALEN + 4),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, lo, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, 0),
		BPF_STMT(BPF_RET | BPF_K, 0xffffffff),
	};

	return vecnet_user_attach_filter(fd, prog, ARRAY_SIZE(prog));
}

static int vecnet_raw_filter(struct vecnet_dev *vn, int fd)
{
	struct vecnet_raw *raw = vn->tpriv;
	int err;

	if (raw->prog)
		err = vecnet_user_attach_filter(fd, raw->prog, raw->prog_len);
	else
		err = vecnet_raw_self_filter(vn, fd);
	if (err)
		netdev_err(vn->dev, "%s: the host refused the %s filter: %d\n",
			   raw->ifname, raw->prog ? "bpffile" : "self", err);
	return err;
}

static int vecnet_raw_socket(struct vecnet_dev *vn)
{
	struct vecnet_raw *raw = vn->tpriv;
	int fd, err;

	fd = vecnet_user_raw_open(raw->ifname);
	if (fd < 0) {
		netdev_err(vn->dev, "cannot open a packet socket on %s: %d\n",
			   raw->ifname, fd);
		return fd;
	}
	err = vecnet_raw_filter(vn, fd);
	if (err) {
		vecnet_user_close(fd);
		return err;
	}
	return fd;
}

static int vecnet_raw_open(struct vecnet_dev *vn)
{
	int fd = vecnet_raw_socket(vn);

	if (fd < 0)
		return fd;
	vn->host.fd = fd;
	return 0;
}

static void vecnet_raw_destroy(struct vecnet_dev *vn)
{
	struct vecnet_raw *raw = vn->tpriv;

	if (raw)
		kfree(raw->prog);
	kfree(raw);
	vn->tpriv = NULL;
}

static int vecnet_raw_mac_changed(struct vecnet_dev *vn)
{
	return vecnet_raw_filter(vn, vn->host.fd);
}

/*
 * ethtool -f: the guest hands over a program for the host's socket.
 * It replaces the current filter now when the device is up, and stays
 * for the next up.
 */
static int vecnet_raw_load_filter(struct vecnet_dev *vn, const void *data,
				  size_t len)
{
	struct vecnet_raw *raw = vn->tpriv;
	struct sock_filter *prog;
	int err;

	if (!raw->flash) {
		netdev_err(vn->dev, "ethtool -f: not allowed; bpfflash=1 allows it\n");
		return -EPERM;
	}
	if (!vecnet_raw_prog_ok(len)) {
		netdev_err(vn->dev,
			   "ethtool -f: %zu bytes, not 1 to %u instructions of 8 bytes\n",
			   len, BPF_MAXINSNS);
		return -EINVAL;
	}
	prog = kmemdup(data, len, GFP_KERNEL);
	if (!prog)
		return -ENOMEM;
	if (vn->host.fd >= 0) {
		err = vecnet_user_attach_filter(vn->host.fd, prog,
						len / sizeof(*prog));
		if (err) {
			netdev_err(vn->dev, "ethtool -f: the host refused the filter: %d\n",
				   err);
			kfree(prog);
			return err;
		}
	}
	kfree(raw->prog);
	raw->prog = prog;
	raw->prog_len = len / sizeof(*prog);
	netdev_info(vn->dev, "ethtool -f: a filter of %u instructions is attached\n",
		    raw->prog_len);
	return 0;
}

const struct vecnet_transport vecnet_raw = {
	.name		= "raw",
	.keys		= vecnet_raw_keys,
	.flags		= VECNET_TF_VNET_HDR | VECNET_TF_RX_GSO,
	.max_mtu	= VECNET_MTU_MAX,
	.setup		= vecnet_raw_setup,
	.open		= vecnet_raw_open,
	.close		= vecnet_close_fd,
	.destroy	= vecnet_raw_destroy,
	.mac_changed	= vecnet_raw_mac_changed,
	.load_filter	= vecnet_raw_load_filter,
};

/* ---- hybrid ------------------------------------------------------------- */

static int vecnet_hybrid_setup(struct vecnet_dev *vn,
			       const struct vecnet_args *args,
			       struct vecnet_err *err)
{
	struct vecnet_raw *raw;
	int ret;

	ret = vecnet_raw_setup(vn, args, err);
	if (ret)
		return ret;
	raw = vn->tpriv;
	raw->hybrid = true;
	if (vecnet_arg_u32(args, "gro", 0))
		vn->dev->features |= NETIF_F_GRO_HW;
	return 0;
}

/* What the host may send out of the tap follows what the guest takes */
static int vecnet_hybrid_set_features(struct vecnet_dev *vn,
				      netdev_features_t features)
{
	if (vn->host.tx_fd < 0)
		return 0;
	return vecnet_tap_offload(vn->host.tx_fd, features);
}

static int vecnet_hybrid_open(struct vecnet_dev *vn)
{
	struct vecnet_raw *raw = vn->tpriv;
	int fd, err;

	fd = vecnet_tap_attach(vn, raw->ifname, false);
	if (fd < 0)
		return fd;
	vn->host.tx_fd = fd;
	/* the tap exists now, so the packet socket can bind to it */
	err = vecnet_raw_open(vn);
	if (err)
		vecnet_close_fd(vn);
	return err;
}

const struct vecnet_transport vecnet_hybrid = {
	.name		= "hybrid",
	.keys		= vecnet_raw_keys,
	.flags		= VECNET_TF_VNET_HDR | VECNET_TF_TX_CHARDEV,
	.max_mtu	= VECNET_MTU_MAX,
	.setup		= vecnet_hybrid_setup,
	.open		= vecnet_hybrid_open,
	.close		= vecnet_close_fd,
	.destroy	= vecnet_raw_destroy,
	.set_features	= vecnet_hybrid_set_features,
	.mac_changed	= vecnet_raw_mac_changed,
	.load_filter	= vecnet_raw_load_filter,
};
