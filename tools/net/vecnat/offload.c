// SPDX-License-Identifier: GPL-2.0
/*
 * offload.c - virtio-net headers on the socket to the switch.  Once the
 * switch has agreed to them (vecnat.c; the exchange is in
 * Documentation/networking/vecnet-protocol.rst), every datagram both ways
 * is a 10-byte struct virtio_net_hdr and a frame, and a guest's TCP
 * stream crosses the switch as super-frames of up to 64 KiB instead of a
 * datagram for every segment:
 *
 *  - in (nat_vnet_in): a super-frame from a guest is made into what
 *    libslirp takes.  TCP over IPv4 becomes one IP packet of the whole
 *    payload (libslirp takes a packet of any length it says, and answers
 *    it with one ACK); TCP over IPv6 and UDP are cut into the guest's
 *    segments (libslirp refuses IPv6 packets beyond its MTU, and each UDP
 *    segment is a datagram of its own).  A checksum the guest left to be
 *    finished is finished.
 *  - out (nat_gro_*): full-sized segments that libslirp sends one after
 *    another on one TCP connection are joined into one super-frame, made
 *    so that cutting it as the switch and Linux do gives back exactly the
 *    segments libslirp made.
 *
 * Nothing here trusts a frame: every offset is checked against its length.
 */
#include <string.h>
#include <linux/virtio_net.h>

#include "vecnat.h"

#define ETH_HLEN	14
#define PROTO_TCP	6
#define PROTO_UDP	17
#define TCP_FIN		0x01
#define TCP_PSH		0x08
#define TCP_ACK		0x10
#define TCP_CWR		0x80
#define IP_MAX		65535		/* an IP length field's largest value */
#ifndef VIRTIO_NET_HDR_GSO_UDP_L4
#define VIRTIO_NET_HDR_GSO_UDP_L4 5	/* headers older than Linux 4.18 */
#endif

/* where an untagged TCP or UDP frame's headers are */
struct layout {
	unsigned int l4;		/* the TCP or UDP header */
	unsigned int hlen;		/* all headers, Ethernet's on */
	bool v6;
	bool tcp;
};

static unsigned int rd16(const uint8_t *p)
{
	return p[0] << 8 | p[1];
}

static void wr16(uint8_t *p, unsigned int v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
}

static void wr32(uint8_t *p, uint32_t v)
{
	wr16(p, v >> 16);
	wr16(p + 2, v);
}

static unsigned int le16(const uint8_t *p)
{
	return p[0] | p[1] << 8;
}

static void wr_le16(uint8_t *p, unsigned int v)
{
	p[0] = v;
	p[1] = v >> 8;
}

/* ---- checksums ------------------------------------------------------------ */

/* the ones' complement sum of @n bytes, big-endian 16-bit words */
static uint64_t sum16(uint64_t s, const uint8_t *p, size_t n)
{
	for (; n >= 2; p += 2, n -= 2)
		s += rd16(p);
	if (n)
		s += (unsigned int)p[0] << 8;
	return s;
}

static unsigned int fold(uint64_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return s;
}

static uint64_t pseudo(const uint8_t *ip, bool v6, bool tcp, uint32_t l4len)
{
	uint64_t s = (tcp ? PROTO_TCP : PROTO_UDP) + (uint64_t)l4len;

	return v6 ? sum16(s, ip + 8, 32) : sum16(s, ip + 12, 8);
}

/* IPv4's header checksum, after a length or ID changed */
static void ip4_csum(uint8_t *ip)
{
	wr16(ip + 10, 0);
	wr16(ip + 10, ~fold(sum16(0, ip, (ip[0] & 15) * 4)) & 0xffff);
}

/* ---- frames ------------------------------------------------------------------- */

/* The layout of TCP or UDP over IPv4 (no fragment) or IPv6; -1: not one */
static int layout(const uint8_t *f, size_t len, struct layout *lo)
{
	const uint8_t *ip = f + ETH_HLEN;
	unsigned int type, proto;

	if (len < ETH_HLEN + 40)
		return -1;
	type = rd16(f + 12);
	if (type == ETH_P_IP) {
		if (ip[0] >> 4 != 4 || (ip[0] & 15) < 5 || rd16(ip + 6) & 0x3fff)
			return -1;
		lo->v6 = false;
		proto = ip[9];
		lo->l4 = ETH_HLEN + (ip[0] & 15) * 4;
	} else if (type == ETH_P_IPV6) {
		if (ip[0] >> 4 != 6)
			return -1;
		lo->v6 = true;
		proto = ip[6];
		lo->l4 = ETH_HLEN + 40;
	} else {
		return -1;
	}
	if (proto != PROTO_TCP && proto != PROTO_UDP)
		return -1;
	lo->tcp = proto == PROTO_TCP;
	if (lo->tcp) {
		if (len < lo->l4 + 20 || f[lo->l4 + 12] >> 4 < 5)
			return -1;
		lo->hlen = lo->l4 + (f[lo->l4 + 12] >> 4) * 4;
	} else {
		lo->hlen = lo->l4 + 8;
	}
	return lo->hlen <= len ? 0 : -1;
}

/*
 * Piece @i of @n of a super-frame, @len bytes in @s, headers and payload
 * in place: the lengths, IPv4 ID, TCP sequence number and flags, and
 * checksums it has as a packet of its own.  Piece i of payload @chunk
 * starts i * chunk bytes into the super-frame's payload.
 */
static void piece_fix(uint8_t *s, size_t len, const struct layout *lo,
		      unsigned int i, unsigned int n, unsigned int chunk)
{
	uint8_t *ip = s + ETH_HLEN, *l4 = s + lo->l4;
	uint32_t l4len = len - lo->l4;
	unsigned int c;

	if (lo->v6) {
		wr16(ip + 4, len - ETH_HLEN - 40);
	} else {
		wr16(ip + 2, len - ETH_HLEN);
		wr16(ip + 4, rd16(ip + 4) + i);
		ip4_csum(ip);
	}
	if (lo->tcp) {
		wr32(l4 + 4, rd32(l4 + 4) + i * chunk);
		if (i)
			l4[13] &= ~TCP_CWR;
		if (i + 1 < n)
			l4[13] &= ~(TCP_FIN | TCP_PSH);
	} else {
		wr16(l4 + 4, l4len);
	}
	c = lo->tcp ? 16 : 6;
	wr16(l4 + c, 0);
	c = ~fold(sum16(pseudo(ip, lo->v6, lo->tcp, l4len), l4, l4len)) & 0xffff;
	/* a UDP checksum of 0 says "none": all ones is the same sum */
	wr16(l4 + (lo->tcp ? 16 : 6), c || lo->tcp ? c : 0xffff);
}

/*
 * A datagram from the switch once headers are agreed: header @h and
 * frame @f of @len bytes, which may be changed.  What libslirp is to get
 * goes to @emit, a frame at a time: one frame, or the pieces of a
 * super-frame (@whole: TCP over IPv4 as one packet, else cut at the
 * guest's segment size).  NULL, or why the datagram was dropped.
 */
const char *nat_vnet_in(const uint8_t *h, uint8_t *f, size_t len, bool whole,
			nat_emit_fn emit, void *arg)
{
	static uint8_t piece[NAT_FRAME_MAX];
	unsigned int flags = h[0], type = h[1], size = le16(h + 4);
	unsigned int start = le16(h + 6), off = le16(h + 8);
	unsigned int payload, chunk, n, i;
	struct layout lo;

	if (flags & ~(VIRTIO_NET_HDR_F_NEEDS_CSUM | VIRTIO_NET_HDR_F_DATA_VALID))
		return "unknown virtio-net header flags";
	if (le16(h + 2) > len)
		return "virtio-net header length past the frame";
	if ((flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) &&
	    (start < ETH_HLEN || (size_t)start + off + 2 > len))
		return "checksum offsets outside the frame";
	if (type == VIRTIO_NET_HDR_GSO_NONE) {
		if (flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) {
			/* the field holds the pseudo-header's sum: add the rest */
			unsigned int c = ~fold(sum16(0, f + start, len - start)) & 0xffff;

			/* 0 is "no checksum" to UDP: all ones is the same sum */
			wr16(f + start + off, c ? c : 0xffff);
		}
		emit(arg, f, len);
		return NULL;
	}
	type &= ~VIRTIO_NET_HDR_GSO_ECN;
	if (type != VIRTIO_NET_HDR_GSO_TCPV4 && type != VIRTIO_NET_HDR_GSO_TCPV6 &&
	    type != VIRTIO_NET_HDR_GSO_UDP_L4)
		return "unknown gso type";
	if (!(flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) || !size)
		return "a super-frame without checksum offload or segment size";
	if (layout(f, len, &lo) < 0 || lo.tcp != (type != VIRTIO_NET_HDR_GSO_UDP_L4) ||
	    (lo.tcp && lo.v6 != (type == VIRTIO_NET_HDR_GSO_TCPV6)))
		return "a gso type that does not match the frame";
	if (start != lo.l4 || off != (lo.tcp ? 16u : 6u))
		return "checksum offsets that do not match the frame";
	if (len <= lo.hlen)
		return "a super-frame without payload";
	payload = len - lo.hlen;
	chunk = size;
	if (whole && lo.tcp && !lo.v6) {
		/* as much as an IPv4 packet holds, in whole segments */
		chunk = payload;
		if (lo.hlen - ETH_HLEN + payload > IP_MAX)
			chunk = (IP_MAX - (lo.hlen - ETH_HLEN)) / size * size;
	}
	if (!chunk ||
	    lo.hlen - ETH_HLEN + (chunk < payload ? chunk : payload) > IP_MAX)
		return "a segment size too large for IP";
	n = (payload + chunk - 1) / chunk;
	if (n > NAT_SEGS_MAX)
		return "too many segments";
	if (n == 1) {
		piece_fix(f, len, &lo, 0, 1, chunk);
		emit(arg, f, len);
		return NULL;
	}
	for (i = 0; i < n; i++) {
		unsigned int c = payload - i * chunk < chunk ? payload - i * chunk : chunk;

		memcpy(piece, f, lo.hlen);
		memcpy(piece + lo.hlen, f + lo.hlen + i * chunk, c);
		piece_fix(piece, lo.hlen + c, &lo, i, n, chunk);
		emit(arg, piece, lo.hlen + c);
	}
	return NULL;
}

/* ---- super-frames out ------------------------------------------------------ */

/*
 * A frame for the switch, just copied to @frame: note whether later ones
 * may join it.  Only plain data segments do: TCP with no options, ACK
 * set and nothing but PSH beside it, payload at least NAT_GSO_MIN_SIZE
 * (the switch refuses smaller segment sizes).
 */
void nat_gro_start(struct nat_gro *g, const uint8_t *frame, size_t len)
{
	struct layout lo;
	const uint8_t *l4;

	memset(g, 0, sizeof(*g));
	g->len = len;
	if (layout(frame, len, &lo) < 0 || !lo.tcp || lo.hlen != lo.l4 + 20 ||
	    (!lo.v6 && lo.l4 != ETH_HLEN + 20))
		return;
	l4 = frame + lo.l4;
	if ((l4[13] & ~TCP_PSH) != TCP_ACK || rd16(l4 + 18) ||
	    len - lo.hlen < NAT_GSO_MIN_SIZE)
		return;
	g->nseg = 1;
	g->mss = len - lo.hlen;
	g->more = !(l4[13] & TCP_PSH);
	g->l4 = lo.l4;
	g->v6 = lo.v6;
	g->seq = rd32(l4 + 4) + g->mss;
	g->id = rd16(frame + ETH_HLEN + 4) + 1;
}

/*
 * Join @f (@len bytes) to the super-frame in @held, if it is the next
 * segment of the same connection: the same headers but for lengths,
 * IPv4 ID (the next one), sequence number (the next one) and PSH, and
 * the last one so far full-sized.  True if joined.
 */
bool nat_gro_add(struct nat_gro *g, uint8_t *held, const uint8_t *f, size_t len)
{
	unsigned int hlen = g->l4 + 20, payload;
	const uint8_t *ip = f + ETH_HLEN, *hip = held + ETH_HLEN;
	const uint8_t *l4 = f + g->l4, *hl4 = held + g->l4;

	if (!g->nseg || !g->more || len <= hlen || g->nseg == NAT_GRO_SEGS)
		return false;
	payload = len - hlen;
	if (payload > g->mss || g->len + payload > NAT_FRAME_MAX ||
	    g->len + payload - ETH_HLEN > IP_MAX + (g->v6 ? 40u : 0u))
		return false;
	if (memcmp(f, held, ETH_HLEN))
		return false;
	if (g->v6) {
		if (memcmp(ip, hip, 4) || memcmp(ip + 6, hip + 6, 34))
			return false;
	} else if (memcmp(ip, hip, 2) || memcmp(ip + 6, hip + 6, 4) ||
		   memcmp(ip + 12, hip + 12, 8) || rd16(ip + 4) != g->id) {
		return false;
	}
	/* ports, then ACK, offset and window and urgent pointer; flags apart */
	if (memcmp(l4, hl4, 4) || rd32(l4 + 4) != g->seq ||
	    memcmp(l4 + 8, hl4 + 8, 5) || memcmp(l4 + 14, hl4 + 14, 2) ||
	    memcmp(l4 + 18, hl4 + 18, 2) || (l4[13] & ~TCP_PSH) != TCP_ACK)
		return false;
	memcpy(held + g->len, f + hlen, payload);
	g->len += payload;
	g->nseg++;
	g->seq += payload;
	g->id++;
	/* a short segment or a push ends it, as it would end a cut one */
	g->more = payload == g->mss && !(l4[13] & TCP_PSH);
	held[g->l4 + 13] |= l4[13] & TCP_PSH;
	return true;
}

/*
 * The held frame is complete: its virtio-net header @h, and for a
 * super-frame its lengths and checksums: the IPv4 header's in full, the
 * TCP checksum field holding the pseudo-header's sum for the switch or
 * the guest to finish, as NEEDS_CSUM says.
 */
void nat_gro_end(struct nat_gro *g, uint8_t *h, uint8_t *held)
{
	uint8_t *ip = held + ETH_HLEN;
	uint32_t l4len = g->len - g->l4;

	memset(h, 0, NAT_VNET_HLEN);
	if (g->nseg < 2)
		return;
	if (g->v6) {
		wr16(ip + 4, g->len - ETH_HLEN - 40);
	} else {
		wr16(ip + 2, g->len - ETH_HLEN);
		ip4_csum(ip);
	}
	wr16(held + g->l4 + 16, fold(pseudo(ip, g->v6, true, l4len)));
	h[0] = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	h[1] = g->v6 ? VIRTIO_NET_HDR_GSO_TCPV6 : VIRTIO_NET_HDR_GSO_TCPV4;
	wr_le16(h + 2, g->l4 + 20);
	wr_le16(h + 4, g->mss);
	wr_le16(h + 6, g->l4);
	wr_le16(h + 8, 16);
	g->nseg = 0;
}
