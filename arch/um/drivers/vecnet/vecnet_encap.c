// SPDX-License-Identifier: GPL-2.0
/*
 * vecnet: the gre and l2tpv3 transports, Ethernet frames tunnelled over
 * IP to a fixed peer.
 *
 *	vecN:transport=gre,src=ADDR,dst=ADDR[,rx_key=K][,tx_key=K]
 *		[,sequence=0|1][,pin_sequence=0|1][,v6=0|1]
 *	vecN:transport=l2tpv3,src=ADDR,dst=ADDR,rx_session=S,tx_session=S
 *		[,udp=0|1,srcport=P,dstport=P][,rx_cookie=C][,tx_cookie=C]
 *		[,cookie64=0|1][,counter=0|1][,pin_counter=0|1][,v6=0|1]
 *
 * gre: RFC 2784 with the RFC 2890 key and sequence number, protocol
 * 0x6558 (transparent Ethernet bridging, what Linux calls gretap), on a
 * raw IP socket for protocol 47.  l2tpv3: RFC 3931 data messages, either
 * directly over IP (protocol 115) or over UDP, with the optional cookie
 * and the 4-byte L2-specific sublayer as a counter.
 *
 * Every packet received is checked before its frame is used: the sender
 * must be dst (and dstport), the IPv4 header length is read from the
 * header, the GRE version, protocol and flags, the key, the L2TPv3
 * session and cookie must be the configured ones, and the lengths must
 * hold a whole Ethernet header.  Anything else is counted in
 * rx_encaps_errors and dropped.  Options the peer adds that need not be
 * agreed (a GRE checksum or sequence number) are skipped.
 */

#include <linux/in.h>
#include <linux/in6.h>
#include <linux/ip.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/unaligned.h>
#include "vecnet.h"
#include "vecnet_core.h"
#include "vecnet_parse.h"
#include "vecnet_transport.h"
#include "vecnet_user.h"

#define GRE_F_CSUM	0x8000
#define GRE_F_ROUTING	0x4000
#define GRE_F_KEY	0x2000
#define GRE_F_SEQ	0x1000
#define GRE_VERSION	0x0007
#define GRE_PROTO_TEB	0x6558
/* L2TPv3 over UDP: T bit clear (data), version 3 */
#define L2TP_UDP_DATA	0x00030000
#define L2TP_UDP_T_BIT	0x80000000
#define L2TP_UDP_VER	0x000f0000
/* The most a packet's headers take: IPv4 with options, GRE or L2TPv3 */
#define ENCAP_PEEK	(60 + 16)

struct vecnet_encap {
	bool v6;
	bool gre;
	bool udp;
	u8 src[16];
	u8 dst[16];
	u16 srcport;
	u16 dstport;
	/* where frames go; received ones must come from here */
	union {
		struct sockaddr_in in;
		struct sockaddr_in6 in6;
	} peer;
	/* both: what the receive header must hold */
	u32 rx_id;		/* GRE key, L2TPv3 session */
	bool rx_id_set;
	u32 tx_id;
	bool tx_id_set;
	bool seq;		/* GRE sequence, L2TPv3 counter */
	bool pin;
	u32 tx_seq;
	/* l2tpv3 */
	unsigned int rx_cookie_len;
	unsigned int tx_cookie_len;
	u64 rx_cookie;
	u64 tx_cookie;
};

static const struct vecnet_key vecnet_gre_keys[] = {
	{ .name = "src", .type = VECNET_KEY_IP, .required = true },
	{ .name = "dst", .type = VECNET_KEY_IP, .required = true },
	{ .name = "rx_key", .type = VECNET_KEY_U32, .max = U32_MAX },
	{ .name = "tx_key", .type = VECNET_KEY_U32, .max = U32_MAX },
	{ .name = "sequence", .type = VECNET_KEY_BOOL, .max = 1 },
	{ .name = "pin_sequence", .type = VECNET_KEY_BOOL, .max = 1 },
	{ .name = "v6", .type = VECNET_KEY_BOOL, .max = 1 },
	{ }
};

static const struct vecnet_key vecnet_l2tpv3_keys[] = {
	{ .name = "src", .type = VECNET_KEY_IP, .required = true },
	{ .name = "dst", .type = VECNET_KEY_IP, .required = true },
	/* session 0 is reserved for control messages */
	{ .name = "rx_session", .type = VECNET_KEY_U32, .min = 1,
	  .max = U32_MAX, .required = true },
	{ .name = "tx_session", .type = VECNET_KEY_U32, .min = 1,
	  .max = U32_MAX, .required = true },
	{ .name = "udp", .type = VECNET_KEY_BOOL, .max = 1 },
	{ .name = "srcport", .type = VECNET_KEY_U32, .min = 1, .max = 65535 },
	{ .name = "dstport", .type = VECNET_KEY_U32, .min = 1, .max = 65535 },
	{ .name = "rx_cookie", .type = VECNET_KEY_U64 },
	{ .name = "tx_cookie", .type = VECNET_KEY_U64 },
	{ .name = "cookie64", .type = VECNET_KEY_BOOL, .max = 1 },
	{ .name = "counter", .type = VECNET_KEY_BOOL, .max = 1 },
	{ .name = "pin_counter", .type = VECNET_KEY_BOOL, .max = 1 },
	{ .name = "v6", .type = VECNET_KEY_BOOL, .max = 1 },
	{ }
};

/* src and dst, one family for both, and v6= (when given) agreeing */
static int vecnet_encap_addrs(struct vecnet_dev *vn, struct vecnet_encap *en,
			      const struct vecnet_args *args,
			      struct vecnet_err *err)
{
	int slen = vecnet_arg_ip(args, "src", en->src);
	int dlen = vecnet_arg_ip(args, "dst", en->dst);
	const char *v6 = vecnet_arg_str(args, "v6");

	if (slen != dlen) {
		vecnet_err_set(err, "vec%u: options 'src' and 'dst': one IPv4, one IPv6 address",
			       vn->cfg.index);
		return -EINVAL;
	}
	en->v6 = dlen == 16;
	if (v6 && vecnet_arg_u32(args, "v6", 0) != en->v6) {
		vecnet_err_set(err,
			       "vec%u: option 'v6': %s, but 'src' and 'dst' are IPv%c addresses",
			       vn->cfg.index, v6, en->v6 ? '6' : '4');
		return -EINVAL;
	}
	return 0;
}

static void vecnet_encap_peer(struct vecnet_dev *vn, struct vecnet_encap *en)
{
	if (en->v6) {
		en->peer.in6.sin6_family = AF_INET6;
		en->peer.in6.sin6_port = htons(en->dstport);
		memcpy(&en->peer.in6.sin6_addr, en->dst, 16);
		vn->host.tx_addr_len = sizeof(en->peer.in6);
	} else {
		en->peer.in.sin_family = AF_INET;
		en->peer.in.sin_port = htons(en->dstport);
		memcpy(&en->peer.in.sin_addr, en->dst, 4);
		vn->host.tx_addr_len = sizeof(en->peer.in);
	}
	vn->host.tx_addr = &en->peer;
	vn->host.name_len = sizeof(struct sockaddr_in6);
}

static struct vecnet_encap *vecnet_encap_alloc(struct vecnet_dev *vn,
					       struct vecnet_err *err)
{
	struct vecnet_encap *en = kzalloc_obj(*en, GFP_KERNEL);

	if (!en)
		vecnet_err_set(err, "vec%u: out of memory", vn->cfg.index);
	return en;
}

static int vecnet_gre_setup(struct vecnet_dev *vn,
			    const struct vecnet_args *args,
			    struct vecnet_err *err)
{
	struct vecnet_encap *en = vecnet_encap_alloc(vn, err);

	if (!en)
		return -ENOMEM;
	if (vecnet_encap_addrs(vn, en, args, err)) {
		kfree(en);
		return -EINVAL;
	}
	en->gre = true;
	en->rx_id_set = !!vecnet_arg_str(args, "rx_key");
	en->rx_id = vecnet_arg_u32(args, "rx_key", 0);
	en->tx_id_set = !!vecnet_arg_str(args, "tx_key");
	en->tx_id = vecnet_arg_u32(args, "tx_key", 0);
	en->seq = vecnet_arg_u32(args, "sequence", 0);
	en->pin = vecnet_arg_u32(args, "pin_sequence", 0);
	vecnet_encap_peer(vn, en);
	/* an IPv4 raw socket hands over the IP header; IPv6 does not */
	vn->host.rx_hdr_len = (en->v6 ? 0 : sizeof(struct iphdr)) + 4;
	vn->host.tx_hdr_len = 4 + (en->tx_id_set ? 4 : 0) + (en->seq ? 4 : 0);
	vn->tpriv = en;
	return 0;
}

static int vecnet_l2tpv3_setup(struct vecnet_dev *vn,
			       const struct vecnet_args *args,
			       struct vecnet_err *err)
{
	unsigned int clen = vecnet_arg_u32(args, "cookie64", 0) ? 8 : 4;
	struct vecnet_encap *en = vecnet_encap_alloc(vn, err);
	const char *missing = NULL;

	if (!en)
		return -ENOMEM;
	if (vecnet_encap_addrs(vn, en, args, err))
		goto bad;
	en->udp = vecnet_arg_u32(args, "udp", 0);
	if (en->udp) {
		if (!vecnet_arg_str(args, "srcport"))
			missing = "srcport";
		else if (!vecnet_arg_str(args, "dstport"))
			missing = "dstport";
		if (missing) {
			vecnet_err_set(err, "vec%u: option '%s': required with udp=1",
				       vn->cfg.index, missing);
			goto bad;
		}
		en->srcport = vecnet_arg_u32(args, "srcport", 0);
		en->dstport = vecnet_arg_u32(args, "dstport", 0);
	} else if (vecnet_arg_str(args, "srcport") ||
		   vecnet_arg_str(args, "dstport")) {
		vecnet_err_set(err, "vec%u: options 'srcport' and 'dstport': only with udp=1",
			       vn->cfg.index);
		goto bad;
	}
	en->rx_id_set = true;
	en->rx_id = vecnet_arg_u32(args, "rx_session", 0);
	en->tx_id_set = true;
	en->tx_id = vecnet_arg_u32(args, "tx_session", 0);
	if (vecnet_arg_str(args, "rx_cookie")) {
		en->rx_cookie = vecnet_arg_u64(args, "rx_cookie", 0);
		en->rx_cookie_len = clen;
	}
	if (vecnet_arg_str(args, "tx_cookie")) {
		en->tx_cookie = vecnet_arg_u64(args, "tx_cookie", 0);
		en->tx_cookie_len = clen;
	}
	if (clen == 4 && (en->rx_cookie > U32_MAX || en->tx_cookie > U32_MAX)) {
		vecnet_err_set(err, "vec%u: a cookie over 32 bits needs cookie64=1",
			       vn->cfg.index);
		goto bad;
	}
	en->seq = vecnet_arg_u32(args, "counter", 0);
	en->pin = vecnet_arg_u32(args, "pin_counter", 0);
	vecnet_encap_peer(vn, en);
	/* UDP: version word and session; IP: the session after the header */
	if (en->udp)
		vn->host.rx_hdr_len = 8;
	else
		vn->host.rx_hdr_len = (en->v6 ? 0 : sizeof(struct iphdr)) + 4;
	vn->host.tx_hdr_len = (en->udp ? 8 : 4) + en->tx_cookie_len +
			 (en->seq ? 4 : 0);
	vn->tpriv = en;
	return 0;

bad:
	kfree(en);
	return -EINVAL;
}

static int vecnet_encap_open(struct vecnet_dev *vn)
{
	struct vecnet_encap *en = vn->tpriv;
	union {
		struct sockaddr_in in;
		struct sockaddr_in6 in6;
	} local = { };
	int type = en->udp ? SOCK_DGRAM : SOCK_RAW;
	int proto = en->udp ? 0 : en->gre ? IPPROTO_GRE : IPPROTO_L2TP;
	int fd, len;

	if (en->v6) {
		local.in6.sin6_family = AF_INET6;
		local.in6.sin6_port = htons(en->srcport);
		memcpy(&local.in6.sin6_addr, en->src, 16);
		len = sizeof(local.in6);
	} else {
		local.in.sin_family = AF_INET;
		local.in.sin_port = htons(en->srcport);
		memcpy(&local.in.sin_addr, en->src, 4);
		len = sizeof(local.in);
	}
	fd = vecnet_user_inet_socket(en->v6 ? AF_INET6 : AF_INET, type, proto,
				     &local, len);
	if (fd < 0) {
		if (en->v6)
			netdev_err(vn->dev, "cannot open the %s socket on %pI6c: %d\n",
				   vn->transport->name, en->src, fd);
		else
			netdev_err(vn->dev, "cannot open the %s socket on %pI4: %d\n",
				   vn->transport->name, en->src, fd);
		return fd;
	}
	vn->host.fd = fd;
	return 0;
}

static void vecnet_encap_destroy(struct vecnet_dev *vn)
{
	kfree(vn->tpriv);
	vn->tpriv = NULL;
}

/* The tunnel's counter, 0 when pinned; under the transmit lock */
static u32 vecnet_encap_seq(struct vecnet_encap *en)
{
	return en->pin ? 0 : en->tx_seq++;
}

static int vecnet_gre_build(struct vecnet_dev *vn, struct sk_buff *skb,
			    void *hdr)
{
	struct vecnet_encap *en = vn->tpriv;
	u16 flags = (en->tx_id_set ? GRE_F_KEY : 0) | (en->seq ? GRE_F_SEQ : 0);
	u8 *p = hdr;

	put_unaligned_be16(flags, p);
	put_unaligned_be16(GRE_PROTO_TEB, p + 2);
	p += 4;
	if (en->tx_id_set) {
		put_unaligned_be32(en->tx_id, p);
		p += 4;
	}
	if (en->seq)
		put_unaligned_be32(vecnet_encap_seq(en), p);
	return 0;
}

static int vecnet_l2tpv3_build(struct vecnet_dev *vn, struct sk_buff *skb,
			       void *hdr)
{
	struct vecnet_encap *en = vn->tpriv;
	u8 *p = hdr;

	if (en->udp) {
		put_unaligned_be32(L2TP_UDP_DATA, p);
		p += 4;
	}
	put_unaligned_be32(en->tx_id, p);
	p += 4;
	if (en->tx_cookie_len == 8)
		put_unaligned_be64(en->tx_cookie, p);
	else if (en->tx_cookie_len == 4)
		put_unaligned_be32(en->tx_cookie, p);
	p += en->tx_cookie_len;
	if (en->seq)
		put_unaligned_be32(vecnet_encap_seq(en), p);
	return 0;
}

/* The sender is the peer (and for UDP its port) */
static bool vecnet_encap_from_peer(const struct vecnet_encap *en,
				   const void *src)
{
	const struct sockaddr_in6 *s6 = src;
	const struct sockaddr_in *s4 = src;

	if (en->v6)
		return s6->sin6_family == AF_INET6 &&
		       !memcmp(&s6->sin6_addr, en->dst, 16) &&
		       (!en->udp || s6->sin6_port == en->peer.in6.sin6_port);
	return s4->sin_family == AF_INET &&
	       !memcmp(&s4->sin_addr, en->dst, 4) &&
	       (!en->udp || s4->sin_port == en->peer.in.sin_port);
}

/*
 * A packet from the peer: its first bytes in one piece (@hdr then
 * @frame), and where the tunnel header starts in it: after the IPv4
 * header a raw IPv4 socket hands over, whose length is read, not
 * assumed.
 */
static int vecnet_encap_peek(struct vecnet_dev *vn, const void *hdr,
			     const void *frame, unsigned int len,
			     const void *src, u8 *buf, unsigned int *have)
{
	struct vecnet_encap *en = vn->tpriv;
	unsigned int n = min_t(unsigned int, len, ENCAP_PEEK), ihl;

	if (!vecnet_encap_from_peer(en, src))
		return -EINVAL;
	memcpy(buf, hdr, vn->host.rx_hdr_len);
	memcpy(buf + vn->host.rx_hdr_len, frame, n - vn->host.rx_hdr_len);
	*have = n;
	if (en->v6 || en->udp)
		return 0;
	ihl = (buf[0] & 0x0f) * 4;
	if ((buf[0] >> 4) != 4 || ihl < sizeof(struct iphdr) || ihl + 4 > n)
		return -EINVAL;
	return ihl;
}

static int vecnet_gre_verify(struct vecnet_dev *vn, const void *hdr,
			     const void *frame, unsigned int len,
			     const void *src)
{
	struct vecnet_encap *en = vn->tpriv;
	unsigned int have, off;
	u8 buf[ENCAP_PEEK];
	int start;
	u16 flags;

	start = vecnet_encap_peek(vn, hdr, frame, len, src, buf, &have);
	if (start < 0)
		return start;
	off = start;
	flags = get_unaligned_be16(buf + off);
	if ((flags & (GRE_VERSION | GRE_F_ROUTING)) ||
	    get_unaligned_be16(buf + off + 2) != GRE_PROTO_TEB)
		return -EINVAL;
	off += 4;
	if (flags & GRE_F_CSUM)
		off += 4;
	/* a key is there exactly when one is expected, and it is that one */
	if (!!(flags & GRE_F_KEY) != en->rx_id_set)
		return -EINVAL;
	if (flags & GRE_F_KEY) {
		if (off + 4 > have || get_unaligned_be32(buf + off) != en->rx_id)
			return -EINVAL;
		off += 4;
	}
	if (flags & GRE_F_SEQ)
		off += 4;
	if (off > have)
		return -EINVAL;
	return off - vn->host.rx_hdr_len;
}

static int vecnet_l2tpv3_verify(struct vecnet_dev *vn, const void *hdr,
				const void *frame, unsigned int len,
				const void *src)
{
	struct vecnet_encap *en = vn->tpriv;
	unsigned int have, off;
	u8 buf[ENCAP_PEEK];
	int start;

	start = vecnet_encap_peek(vn, hdr, frame, len, src, buf, &have);
	if (start < 0)
		return start;
	off = start;
	if (en->udp) {
		u32 word = get_unaligned_be32(buf);

		if ((word & L2TP_UDP_T_BIT) || (word & L2TP_UDP_VER) != 0x00030000)
			return -EINVAL;
		off += 4;
	}
	if (get_unaligned_be32(buf + off) != en->rx_id)
		return -EINVAL;
	off += 4;
	if (off + en->rx_cookie_len > have)
		return -EINVAL;
	if (en->rx_cookie_len == 8 &&
	    get_unaligned_be64(buf + off) != en->rx_cookie)
		return -EINVAL;
	if (en->rx_cookie_len == 4 &&
	    get_unaligned_be32(buf + off) != en->rx_cookie)
		return -EINVAL;
	off += en->rx_cookie_len;
	if (en->seq)
		off += 4;
	if (off > have)
		return -EINVAL;
	return off - vn->host.rx_hdr_len;
}

const struct vecnet_transport vecnet_gre = {
	.name		= "gre",
	.keys		= vecnet_gre_keys,
	.max_mtu	= VECNET_MTU_MAX - 60 - 16,
	.setup		= vecnet_gre_setup,
	.open		= vecnet_encap_open,
	.close		= vecnet_close_fd,
	.destroy	= vecnet_encap_destroy,
	.build_header	= vecnet_gre_build,
	.verify_header	= vecnet_gre_verify,
};

const struct vecnet_transport vecnet_l2tpv3 = {
	.name		= "l2tpv3",
	.keys		= vecnet_l2tpv3_keys,
	.max_mtu	= VECNET_MTU_MAX - 60 - 8 - 20,
	.setup		= vecnet_l2tpv3_setup,
	.open		= vecnet_encap_open,
	.close		= vecnet_close_fd,
	.destroy	= vecnet_encap_destroy,
	.build_header	= vecnet_l2tpv3_build,
	.verify_header	= vecnet_l2tpv3_verify,
};
