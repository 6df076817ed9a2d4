// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_offload - vecnat's virtio-net header code (offload.c), both ways.
 *
 * The first byte picks a case:
 *  - even: datagrams from the switch, each a 2-byte length and its bytes
 *    (a 10-byte header, then the frame), through nat_vnet_in().  Whatever
 *    comes out of a super-frame must be a packet whose lengths fit it and
 *    whose TCP or UDP checksum is right.
 *  - odd: TCP segments as libslirp makes them, built from the input (IPv4
 *    or IPv6, one or two connections, full, short, pushed or out-of-order
 *    segments), joined as vecnat joins them for the switch and cut again
 *    as the switch cuts them: the segments must come back byte for byte.
 */
#include <stdint.h>
#include <string.h>
#include <linux/virtio_net.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SEGS	96
#define MSS_MAX	1460

static uint8_t out[SEGS][NAT_FRAME_MAX];	/* what comes back */
static size_t out_len[SEGS];
static unsigned int nout;

static unsigned int rd16(const uint8_t *p)
{
	return p[0] << 8 | p[1];
}

/* the Internet checksum's sum, unfolded */
static uint32_t add(uint32_t s, const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		s += rd16(p + i);
	if (n & 1)
		s += p[n - 1] << 8;
	return s;
}

static unsigned int fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return s;
}

/* Is the TCP or UDP checksum of this IPv4 or IPv6 frame right? */
static void check_l4(const uint8_t *f, size_t len)
{
	const uint8_t *ip = f + 14;
	unsigned int l4, proto;
	uint32_t s;

	if (rd16(f + 12) == 0x0800) {
		FZ_ASSERT(rd16(ip + 2) == len - 14);
		FZ_ASSERT(fold(add(0, ip, (ip[0] & 15) * 4)) == 0xffff);
		l4 = 14 + (ip[0] & 15) * 4;
		proto = ip[9];
		s = add(0, ip + 12, 8);
	} else {
		FZ_ASSERT(rd16(ip + 4) == len - 54);
		l4 = 54;
		proto = ip[6];
		s = add(0, ip + 8, 32);
	}
	s += proto + (uint32_t)(len - l4);
	FZ_ASSERT(fold(add(s, f + l4, len - l4)) == 0xffff);
}

static void keep(void *arg, uint8_t *f, size_t len)
{
	const uint8_t *h = arg;

	FZ_ASSERT(len >= 14 && len <= NAT_FRAME_MAX);
	if (h && h[1] != VIRTIO_NET_HDR_GSO_NONE)
		check_l4(f, len);
	if (nout < SEGS) {
		memcpy(out[nout], f, len);
		out_len[nout] = len;
	}
	nout++;
}

static void raw_case(const uint8_t *data, size_t size)
{
	static uint8_t buf[NAT_VNET_HLEN + NAT_FRAME_MAX];

	while (size >= 2) {
		size_t len = rd16(data);
		const char *why;

		data += 2;
		size -= 2;
		if (len > size)
			len = size;
		if (len >= NAT_VNET_HLEN + 14) {
			memcpy(buf, data, len);
			nout = 0;
			why = nat_vnet_in(buf, buf + NAT_VNET_HLEN, len - NAT_VNET_HLEN,
					  len & 1, keep, buf);
			/* a refused datagram gives libslirp nothing, a super-frame something */
			FZ_ASSERT(why ? !nout : nout >= 1);
		}
		data += len;
		size -= len;
	}
}

/* ---- joined and cut again ------------------------------------------------ */

struct seg_src {
	const uint8_t *p;
	size_t n;
	uint8_t salt;
};

static unsigned int take(struct seg_src *s)
{
	unsigned int v = 0;

	if (s->n) {
		v = *s->p++;
		s->n--;
	}
	return v;
}

/* A segment as libslirp sends it: correct lengths and checksums */
static size_t segment(uint8_t *f, bool v6, unsigned int flow, uint32_t seq,
		      uint16_t id, uint8_t flags, unsigned int payload,
		      struct seg_src *src)
{
	static const uint8_t macs[12] = { 2, 0, 0, 0, 0, 1, 0x52, 0x55, 10, 0, 2, 2 };
	unsigned int l4 = v6 ? 54 : 34, i;
	uint8_t *ip = f + 14, *t = f + l4;
	size_t len = l4 + 20 + payload;
	uint32_t s;

	memset(f, 0, l4 + 20);
	memcpy(f, macs, 12);
	f[12] = v6 ? 0x86 : 0x08;
	f[13] = v6 ? 0xdd : 0x00;
	if (v6) {
		ip[0] = 0x60;
		ip[4] = (len - 54) >> 8;
		ip[5] = len - 54;
		ip[6] = 6;
		ip[7] = 64;
		ip[8] = 0xfd;
		ip[23] = 2;
		ip[24] = 0xfd;
		ip[39] = 15;
	} else {
		ip[0] = 0x45;
		ip[2] = (len - 14) >> 8;
		ip[3] = len - 14;
		ip[4] = id >> 8;
		ip[5] = id;
		ip[6] = 0x40;
		ip[8] = 64;
		ip[9] = 6;
		memcpy(ip + 12, "\x0a\x00\x02\x02\x0a\x00\x02\x0f", 8);
		s = fold(add(0, ip, 20));
		ip[10] = ~s >> 8;
		ip[11] = ~s;
	}
	t[0] = 0x1f;
	t[1] = 0x90;
	t[3] = 0x40 + flow;
	t[4] = seq >> 24;
	t[5] = seq >> 16;
	t[6] = seq >> 8;
	t[7] = seq;
	t[11] = 1;
	t[12] = 0x50;
	t[13] = flags;
	t[14] = 0x70;
	/* bytes that differ from segment to segment, not the input's */
	for (i = 0; i < payload; i++)
		f[l4 + 20 + i] = (seq + i) * 7 + src->salt;
	s = v6 ? add(0, ip + 8, 32) : add(0, ip + 12, 8);
	s = fold(add(s + 6 + (uint32_t)(len - l4), t, len - l4));
	t[16] = ~s >> 8;
	t[17] = ~s;
	return len;
}

static void join_case(const uint8_t *data, size_t size)
{
	static uint8_t in[SEGS][NAT_FRAME_MAX];
	static uint8_t slot[SEGS][NAT_VNET_HLEN + NAT_FRAME_MAX];
	static size_t in_len[SEGS], slot_len[SEGS];
	struct seg_src src = { data, size };
	unsigned int nin, nslot = 0, i, k, mss;
	bool v6 = take(&src) & 1, growing = false;
	uint32_t seq[2] = { 1000, 0xfffff000 };	/* one of them wraps */
	uint16_t id = take(&src) << 8 | take(&src);
	struct nat_gro g;

	src.salt = take(&src);
	mss = 200 + (take(&src) << 8 | take(&src)) % (MSS_MAX - 199);
	nin = 1 + take(&src) % (SEGS - 1);
	for (i = 0; i < nin; i++) {
		unsigned int c = take(&src), flow = c >> 7, payload = mss;
		uint8_t flags = 0x10;

		if ((c & 7) == 1)
			payload = 1 + take(&src) % mss;
		if ((c & 7) == 2)
			flags |= 0x08;
		if ((c & 7) == 3)
			flags = 0x11;		/* FIN */
		if ((c & 7) == 4)
			seq[flow] += 1;		/* a gap */
		if ((c & 7) == 5)
			id += 2;		/* another packet between */
		in_len[i] = segment(in[i], v6, flow, seq[flow], id++, flags,
				    payload, &src);
		seq[flow] += payload;
	}
	/* as cb_send and tx_close join them */
	for (i = 0; i < nin; i++) {
		if (growing && nat_gro_add(&g, slot[nslot - 1] + NAT_VNET_HLEN,
					   in[i], in_len[i]))
			continue;
		if (growing) {
			nat_gro_end(&g, slot[nslot - 1], slot[nslot - 1] + NAT_VNET_HLEN);
			slot_len[nslot - 1] = g.len;
		}
		memset(slot[nslot], 0, NAT_VNET_HLEN);
		memcpy(slot[nslot] + NAT_VNET_HLEN, in[i], in_len[i]);
		slot_len[nslot] = in_len[i];
		nat_gro_start(&g, in[i], in_len[i]);
		growing = g.more;
		nslot++;
	}
	if (growing) {
		nat_gro_end(&g, slot[nslot - 1], slot[nslot - 1] + NAT_VNET_HLEN);
		slot_len[nslot - 1] = g.len;
	}
	/* and cut again */
	nout = 0;
	for (k = 0; k < nslot; k++) {
		uint8_t *h = slot[k];

		if (h[1] == VIRTIO_NET_HDR_GSO_NONE) {
			FZ_ASSERT(!h[0]);
			keep(NULL, h + NAT_VNET_HLEN, slot_len[k]);
			continue;
		}
		FZ_ASSERT(!nat_vnet_in(h, h + NAT_VNET_HLEN, slot_len[k], false,
				       keep, h));
	}
	FZ_ASSERT(nout == nin);
	for (i = 0; i < nin; i++)
		FZ_ASSERT(out_len[i] == in_len[i] &&
			  !memcmp(out[i], in[i], in_len[i]));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	if (data[0] & 1)
		join_case(data + 1, size - 1);
	else
		raw_case(data + 1, size - 1);
	return 0;
}
