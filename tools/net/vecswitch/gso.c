// SPDX-License-Identifier: GPL-2.0
/*
 * gso.c - virtio-net headers on --vnet ports.  A guest on such a port puts
 * a 10-byte struct virtio_net_hdr (little-endian) in front of every frame,
 * which lets a TCP or UDP super-frame of up to 64 KiB, its checksum left
 * for later, cross the switch as one datagram.  This file checks the
 * header a guest sends, and turns a frame that still needs work into what
 * a port without headers takes: the checksum finished, the super-frame cut
 * into segments with their own lengths, IPv4 IDs, sequence numbers, flags
 * and checksums, as the Linux kernel's own segmentation makes them.
 */
#include <stdlib.h>
#include <string.h>
#include <linux/if_ether.h>

#include "vecswitch.h"

#define IPPROTO_TCP_	6
#define IPPROTO_UDP_	17
#define TCP_FLAG_FIN	0x01
#define TCP_FLAG_PSH	0x08
#define TCP_FLAG_CWR	0x80
#define CSUM_MANGLED_0	0xffff

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static uint16_t get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

/* ---- the header ---------------------------------------------------------- */

/*
 * Check a guest's header against the frame it leads and note where the
 * frame's headers are.  Returns 0, or -1 for a header that does not
 * describe the frame (counted in rx_bad_vnet); frames that need no work
 * get no further look.
 */
int vs_vnet_parse(const uint8_t *hdr, const uint8_t *frame, unsigned int len,
		  unsigned int max_frame, struct vs_gso *g)
{
	unsigned int l3, l4, hlen, payload;
	uint16_t proto;

	memset(g, 0, sizeof(*g));
	g->flags = hdr[0];
	g->type = hdr[1] & ~VIRTIO_NET_HDR_GSO_ECN;
	g->gso_size = get_le16(hdr + 4);
	g->csum_start = get_le16(hdr + 6);
	g->csum_offset = get_le16(hdr + 8);

	if (g->flags & ~(VIRTIO_NET_HDR_F_NEEDS_CSUM |
			 VIRTIO_NET_HDR_F_DATA_VALID))
		return -1;
	/* hdr_len is only a hint, but one past the frame is a lie */
	if (get_le16(hdr + 2) > len)
		return -1;
	if ((g->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) &&
	    (g->csum_start < ETH_HLEN_MIN ||
	     (uint32_t)g->csum_start + g->csum_offset + 2 > len))
		return -1;
	if (g->type == VIRTIO_NET_HDR_GSO_NONE)
		return hdr[1] & VIRTIO_NET_HDR_GSO_ECN ? -1 : 0;

	/* a super-frame: TCP over IPv4 or IPv6, or UDP over either */
	if (g->type != VIRTIO_NET_HDR_GSO_TCPV4 &&
	    g->type != VIRTIO_NET_HDR_GSO_TCPV6 &&
	    g->type != VIRTIO_NET_HDR_GSO_UDP_L4)
		return -1;
	if ((hdr[1] & VIRTIO_NET_HDR_GSO_ECN) &&
	    g->type == VIRTIO_NET_HDR_GSO_UDP_L4)
		return -1;
	if (!g->gso_size || !(g->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM))
		return -1;
	g->tcp = g->type != VIRTIO_NET_HDR_GSO_UDP_L4;

	l3 = ETH_HLEN_MIN;
	proto = get16(frame + 12);
	if (proto == ETH_P_8021Q) {
		if (len < l3 + 4)
			return -1;
		proto = get16(frame + 16);
		l3 += 4;
	}
	if (proto == ETH_P_IP) {
		const uint8_t *ip = frame + l3;

		if (g->type == VIRTIO_NET_HDR_GSO_TCPV6 || len < l3 + 20 ||
		    ip[0] >> 4 != 4 || (ip[0] & 15) < 5)
			return -1;
		/* a fragment cannot be cut again */
		if (get16(ip + 6) & 0x3fff)
			return -1;
		l4 = l3 + (ip[0] & 15) * 4;
		if (ip[9] != (g->tcp ? IPPROTO_TCP_ : IPPROTO_UDP_))
			return -1;
	} else if (proto == ETH_P_IPV6) {
		const uint8_t *ip = frame + l3;

		/* extension headers are not followed */
		if (g->type == VIRTIO_NET_HDR_GSO_TCPV4 || len < l3 + 40 ||
		    ip[0] >> 4 != 6 ||
		    ip[6] != (g->tcp ? IPPROTO_TCP_ : IPPROTO_UDP_))
			return -1;
		g->v6 = true;
		l4 = l3 + 40;
	} else {
		return -1;
	}
	if (g->tcp) {
		if (len < l4 + 20 || frame[l4 + 12] >> 4 < 5)
			return -1;
		hlen = l4 + (frame[l4 + 12] >> 4) * 4;
		if (g->csum_offset != 16)
			return -1;
	} else {
		hlen = l4 + 8;
		if (g->csum_offset != 6)
			return -1;
	}
	if (g->csum_start != l4 || hlen >= len)
		return -1;
	payload = len - hlen;
	/* every segment must fit the ports that take them */
	if (hlen + (g->gso_size < payload ? g->gso_size : payload) > max_frame)
		return -1;
	if ((payload + g->gso_size - 1) / g->gso_size > VS_GSO_MAX_SEGS ||
	    g->gso_size < VS_GSO_MIN_SIZE)
		return -1;
	g->l3 = l3;
	g->l4 = l4;
	g->hlen = hlen;
	return 0;
}

/* ---- checksums ------------------------------------------------------------ */

/* The ones' complement sum of n bytes, as big-endian 16-bit words. */
static uint64_t csum_add(uint64_t sum, const uint8_t *p, size_t n)
{
	while (n >= 4) {
		sum += get32(p);
		p += 4;
		n -= 4;
	}
	if (n >= 2) {
		sum += get16(p);
		p += 2;
		n -= 2;
	}
	if (n)
		sum += (uint32_t)p[0] << 8;
	return sum;
}

/* Folded to 16 bits and complemented: the value a checksum field holds. */
static uint16_t csum_fold(uint64_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* IPv4 or IPv6 pseudo-header of an L4 packet of l4len bytes. */
static uint64_t pseudo_sum(const uint8_t *ip, bool v6, uint8_t proto,
			   uint32_t l4len)
{
	uint64_t sum = proto + (uint64_t)l4len;

	if (v6)
		return csum_add(sum, ip + 8, 32);
	return csum_add(sum, ip + 12, 8);
}

/*
 * A frame of the kind NEEDS_CSUM describes: the field already holds the
 * sum of what comes before csum_start (the pseudo-header); the rest is
 * added here.  A result of zero is sent as 0xffff, which UDP requires and
 * TCP does not mind.
 */
static void csum_finish(uint8_t *frame, unsigned int len,
			const struct vs_gso *g)
{
	uint16_t c = csum_fold(csum_add(0, frame + g->csum_start,
					len - g->csum_start));

	put16(frame + g->csum_start + g->csum_offset, c ? c : CSUM_MANGLED_0);
}

/* ---- plain frames ----------------------------------------------------------- */

bool vs_buf_needs_plain(const struct vs_buf *b)
{
	return b->gso.type != VIRTIO_NET_HDR_GSO_NONE ||
	       (b->gso.flags & VIRTIO_NET_HDR_F_NEEDS_CSUM);
}

static struct vs_buf *seg_new(struct vs_buf ***tail, unsigned int len)
{
	struct vs_buf *s = vs_buf_alloc(len);

	if (!s)
		return NULL;
	**tail = s;
	*tail = &s->next;
	return s;
}

/* One segment: headers of the super-frame, its share of the payload. */
static void seg_fix(struct vs_buf *s, const struct vs_buf *b, unsigned int i,
		    unsigned int n, unsigned int size)
{
	const struct vs_gso *g = &b->gso;
	uint8_t *f = s->data, *ip = f + g->l3, *l4 = f + g->l4;
	uint32_t l4len = s->len - g->l4;

	if (g->v6) {
		put16(ip + 4, s->len - g->l3 - 40);
	} else {
		put16(ip + 2, s->len - g->l3);
		put16(ip + 4, get16(ip + 4) + i);
		put16(ip + 10, 0);
		put16(ip + 10, csum_fold(csum_add(0, ip, g->l4 - g->l3)));
	}
	if (g->tcp) {
		put32(l4 + 4, get32(l4 + 4) + i * size);
		if (i)
			l4[13] &= ~TCP_FLAG_CWR;
		if (i + 1 < n)
			l4[13] &= ~(TCP_FLAG_FIN | TCP_FLAG_PSH);
	} else {
		put16(l4 + 4, l4len);
	}
	put16(l4 + g->csum_offset, 0);
	put16(l4 + g->csum_offset,
	      csum_fold(csum_add(pseudo_sum(ip, g->v6,
					    g->tcp ? IPPROTO_TCP_ : IPPROTO_UDP_,
					    l4len),
				 l4, l4len)));
	if (!g->tcp && !get16(l4 + 6))
		put16(l4 + 6, CSUM_MANGLED_0);
}

/*
 * The payload each segment of b carries on a port that takes frames of at
 * most @room bytes (its MTU and Ethernet header; 0: no limit known): the
 * sender's gso_size, or for TCP a smaller one that makes every segment
 * fit, as long as that stays within VS_GSO_MAX_SEGS segments. A UDP
 * super-frame keeps its size: each of its segments is one of the sender's
 * datagrams.
 */
unsigned int vs_gso_fit(const struct vs_buf *b, unsigned int room)
{
	const struct vs_gso *g = &b->gso;
	unsigned int size;

	if (g->type == VIRTIO_NET_HDR_GSO_NONE || !g->tcp || !room ||
	    room <= g->hlen || room - g->hlen >= g->gso_size)
		return g->gso_size;
	size = room - g->hlen;
	if ((b->len - g->hlen + size - 1) / size > VS_GSO_MAX_SEGS)
		return g->gso_size;
	return size;
}

/*
 * Make b's plain form: the frames a port without headers gets in its place
 * (b->seg, b->nseg), a super-frame cut into segments of @size bytes of
 * payload (vs_gso_fit()). Kept for the next port that takes the same size;
 * another size cuts again, leaving the earlier segments to the queues that
 * hold them. Returns 0, or -1 out of memory.
 */
int vs_buf_plain(struct vs_switch *sw, struct vs_buf *b, unsigned int size)
{
	const struct vs_gso *g = &b->gso;
	struct vs_buf **tail, *s;
	unsigned int payload, n, i, chunk;

	if (b->seg && (g->type == VIRTIO_NET_HDR_GSO_NONE ||
		       b->seg_size == size))
		return 0;
	vs_buf_drop_segs(b);
	tail = &b->seg;
	if (g->type == VIRTIO_NET_HDR_GSO_NONE) {
		s = seg_new(&tail, b->len);
		if (!s)
			return -1;
		memcpy(s->data, b->data, b->len);
		csum_finish(s->data, s->len, g);
		b->nseg = 1;
		sw->st.csum_filled++;
		return 0;
	}
	payload = b->len - g->hlen;
	n = (payload + size - 1) / size;
	for (i = 0; i < n; i++) {
		chunk = payload - i * size;
		if (chunk > size)
			chunk = size;
		s = seg_new(&tail, g->hlen + chunk);
		if (!s) {
			vs_buf_drop_segs(b);
			return -1;
		}
		memcpy(s->data, b->data, g->hlen);
		memcpy(s->data + g->hlen, b->data + g->hlen + i * size, chunk);
		seg_fix(s, b, i, n, size);
	}
	/* a super-frame counts once, however many sizes it is cut to */
	if (!b->seg_size)
		sw->st.gso_frames++;
	b->nseg = n;
	b->seg_size = size;
	sw->st.gso_segments += n;
	return 0;
}
