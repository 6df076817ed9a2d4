// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_gso.c - the virtio-net header check and software segmentation of a
 * --vnet port's frames.  Whatever the header and frame, a header the check
 * accepts must give segments that each fit --max-frame, carry the right
 * lengths, sequence numbers and IPv4 IDs, have checksums that verify, and
 * together hold exactly the super-frame's payload.
 *
 * Input: one byte picking --max-frame, the 10-byte header, then the frame.
 */
#include <string.h>
#include <linux/if_ether.h>

#include "fuzz_common.h"

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)be16(p) << 16 | be16(p + 2);
}

/* The plain ones' complement sum, byte by byte: a second opinion. */
static uint32_t sum16(uint32_t sum, const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		sum += i & 1 ? p[i] : (uint32_t)p[i] << 8;
	return sum;
}

static bool csum_ok(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff;
}

static void check_seg(const struct vs_buf *b, const struct vs_buf *s,
		      unsigned int i, unsigned int n, unsigned int max_frame,
		      unsigned int size)
{
	const struct vs_gso *g = &b->gso;
	const uint8_t *ip = s->data + g->l3, *l4 = s->data + g->l4;
	unsigned int l4len = s->len - g->l4;
	uint32_t sum;

	FZ_ASSERT(s->len <= max_frame && s->len > g->hlen);
	FZ_ASSERT(s->len - g->hlen <= size && size <= g->gso_size);
	FZ_ASSERT(i + 1 == n || s->len - g->hlen == size);
	/* everything before the fields segmentation rewrites is the same */
	FZ_ASSERT(!memcmp(s->data, b->data, g->l3));
	if (g->v6) {
		FZ_ASSERT(be16(ip + 4) == s->len - g->l3 - 40);
		sum = sum16(0, ip + 8, 32);
	} else {
		FZ_ASSERT(be16(ip + 2) == s->len - g->l3);
		FZ_ASSERT(be16(ip + 4) == (uint16_t)(be16(b->data + g->l3 + 4) + i));
		FZ_ASSERT(csum_ok(sum16(0, ip, g->l4 - g->l3)));
		sum = sum16(0, ip + 12, 8);
	}
	sum += (g->tcp ? 6 : 17) + l4len;
	FZ_ASSERT(csum_ok(sum16(sum, l4, l4len)));
	if (g->tcp) {
		FZ_ASSERT(be32(l4 + 4) == be32(b->data + g->l4 + 4) +
			  i * size);
		/* FIN and PSH only on the last, CWR only on the first */
		if (i + 1 < n)
			FZ_ASSERT(!(l4[13] & 0x09));
		if (i)
			FZ_ASSERT(!(l4[13] & 0x80));
	} else {
		FZ_ASSERT(be16(l4 + 4) == l4len);
		FZ_ASSERT(be16(l4 + 6));
	}
	FZ_ASSERT(!memcmp(s->data + g->hlen,
			  b->data + g->hlen + i * size,
			  s->len - g->hlen));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned int max_frame[] = { 60, 1514, 9216, 65535 };
	const uint8_t *hdr = data + 1, *frame = data + 1 + VS_VNET_HDR_LEN;
	struct vs_switch sw;
	struct vs_buf *b, *s;
	struct vs_gso g;
	unsigned int len, mf, i, seg, room = 0, pass;

	if (size < 1 + VS_VNET_HDR_LEN + ETH_HLEN_MIN ||
	    size > 1 + VS_VNET_HDR_LEN + VS_VNET_FRAME_MAX)
		return 0;
	len = size - 1 - VS_VNET_HDR_LEN;
	mf = max_frame[data[0] & 3];
	if (vs_vnet_parse(hdr, frame, len, mf, &g) < 0)
		return 0;

	memset(&sw, 0, sizeof(sw));
	b = vs_buf_new(frame, len, hdr, &g);
	FZ_ASSERT(b);
	if (!vs_buf_needs_plain(b)) {
		vs_buf_put(b);
		return 0;
	}
	/* the sender's size, then again as a port of a smaller MTU takes it */
	seg = g.gso_size;
	for (pass = 0; pass < 2; pass++) {
		FZ_ASSERT(vs_buf_plain(&sw, b, seg) == 0);
		FZ_ASSERT(b->nseg >= 1 && b->nseg <= VS_GSO_MAX_SEGS);
		if (g.type == VIRTIO_NET_HDR_GSO_NONE) {
			/* the checksum filled in; nothing else changed */
			s = b->seg;
			FZ_ASSERT(s->len == len && b->nseg == 1);
			FZ_ASSERT(!memcmp(s->data, frame,
					  g.csum_start + g.csum_offset));
			FZ_ASSERT(!memcmp(s->data + g.csum_start + g.csum_offset + 2,
					  frame + g.csum_start + g.csum_offset + 2,
					  len - g.csum_start - g.csum_offset - 2));
			break;
		}
		for (i = 0, s = b->seg; s; s = s->next, i++) {
			check_seg(b, s, i, b->nseg, mf, seg);
			FZ_ASSERT(seg == g.gso_size || s->len <= room);
		}
		FZ_ASSERT(i == b->nseg);
		FZ_ASSERT(sw.st.gso_segments >= b->nseg);
		room = data[0] >> 2 ? 60 + (data[0] >> 2) * 24 : 0;
		seg = vs_gso_fit(b, room);
	}
	vs_buf_put(b);
	return 0;
}
