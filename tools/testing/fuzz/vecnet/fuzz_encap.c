// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_encap.c - the checks the gre and l2tpv3 transports make of every
 * packet they receive. The input's first bytes choose a tunnel (transport,
 * IPv4 or IPv6, UDP, key or session, cookie, sequence numbers, whether the
 * packet comes from the peer), written as a spec and set up through the
 * driver's own parser and setup; the rest is the packet. Invariants:
 *   - the spec is accepted;
 *   - a packet from any address but the peer's is refused;
 *   - an accepted packet's tunnel header is no longer than the most a
 *     header can take;
 *   - the header the transport builds itself, sent back to it, is
 *     accepted with exactly its own length.
 */
#include <string.h>

#include "kshim.h"
#include "vecnet.h"
#include "vecnet_transport.h"
#include "fuzz_common.h"

#define IN_HDR		15
#define HDR_MAX		(60 + 16)	/* vecnet_encap.c's ENCAP_PEEK */

struct tunnel {
	bool l2tp, v6, udp, ids, seq, cookie64, cookies, from_peer;
	u32 id;
	u64 cookie;
	u16 port;
};

static void spec_of(const struct tunnel *t, char *spec, size_t n)
{
	const char *src = t->v6 ? "2001:db8::1" : "198.18.0.1";
	const char *dst = t->v6 ? "2001:db8::2" : "198.18.0.2";
	int k;

	k = snprintf(spec, n, "0:transport=%s,src=%s,dst=%s",
		     t->l2tp ? "l2tpv3" : "gre", src, dst);
	if (!t->l2tp) {
		if (t->ids)
			k += snprintf(spec + k, n - k, ",rx_key=%u,tx_key=%u",
				      t->id, t->id);
		if (t->seq)
			k += snprintf(spec + k, n - k, ",sequence=1");
		return;
	}
	k += snprintf(spec + k, n - k, ",rx_session=%u,tx_session=%u",
		      t->id, t->id);
	if (t->udp)
		k += snprintf(spec + k, n - k, ",udp=1,srcport=%u,dstport=%u",
			      t->port, t->port);
	if (t->cookie64)
		k += snprintf(spec + k, n - k, ",cookie64=1");
	if (t->cookies)
		k += snprintf(spec + k, n - k, ",rx_cookie=0x%llx,tx_cookie=0x%llx",
			      (unsigned long long)t->cookie,
			      (unsigned long long)t->cookie);
	if (t->seq)
		snprintf(spec + k, n - k, ",counter=1");
}

/* The peer's address as recvmmsg would give it, or one next to it */
static void src_of(const struct tunnel *t, struct sockaddr_in6 *s6)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)s6;

	memset(s6, 0, sizeof(*s6));
	if (t->v6) {
		s6->sin6_family = AF_INET6;
		inet_pton(AF_INET6, t->from_peer ? "2001:db8::2" : "2001:db8::3",
			  &s6->sin6_addr);
		s6->sin6_port = htons(t->port);
	} else {
		s4->sin_family = AF_INET;
		inet_pton(AF_INET, t->from_peer ? "198.18.0.2" : "198.18.0.3",
			  &s4->sin_addr);
		s4->sin_port = htons(t->port);
	}
}

/* The transport's own header, behind the IPv4 header a raw socket gives */
static void round_trip(struct vecnet_dev *vn, const struct tunnel *t,
		       const struct sockaddr_in6 *peer)
{
	unsigned int ip = !t->v6 && !t->udp ? 20 : 0;
	u8 pkt[20 + 32 + ETH_HLEN] = { 0 };
	unsigned int len = ip + vn->host.tx_hdr_len + ETH_HLEN;
	int ret;

	FZ_ASSERT(vn->host.tx_hdr_len <= 32 && vn->host.rx_hdr_len >= ip);
	if (ip)
		pkt[0] = 0x45;
	FZ_ASSERT(!vn->transport->build_header(vn, NULL, pkt + ip));
	ret = vn->transport->verify_header(vn, pkt, pkt + vn->host.rx_hdr_len,
					   len, peer);
	FZ_ASSERT(ret == (int)(vn->host.tx_hdr_len -
			       (vn->host.rx_hdr_len - ip)));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sockaddr_in6 src, peer;
	struct vecnet_config cfg;
	struct vecnet_dev *vn;
	struct vecnet_err err;
	struct tunnel t;
	char spec[256];
	int ret;

	if (size < IN_HDR)
		return 0;
	t = (struct tunnel){
		.l2tp = data[0] & 0x01, .v6 = data[0] & 0x02,
		.udp = data[0] & 0x04, .ids = data[0] & 0x08,
		.seq = data[0] & 0x10, .cookie64 = data[0] & 0x20,
		.cookies = data[0] & 0x40, .from_peer = data[0] & 0x80,
		.id = get_unaligned_be32(data + 1),
		.cookie = get_unaligned_be64(data + 5),
		.port = get_unaligned_be16(data + 13),
	};
	t.udp &= t.l2tp;
	if (t.l2tp && !t.id)
		t.id = 1;		/* session 0 is not a data session */
	if (!t.port)
		t.port = 1701;
	if (!t.cookie64)
		t.cookie &= U32_MAX;
	data += IN_HDR;
	size -= IN_HDR;

	spec_of(&t, spec, sizeof(spec));
	ret = vecnet_parse(spec, &cfg, &err);
	if (ret)
		fprintf(stderr, "%s: %s\n", spec, err.msg);
	FZ_ASSERT(!ret);
	vn = calloc(1, sizeof(*vn));
	FZ_ASSERT(vn);
	vn->cfg = cfg;
	vn->transport = cfg.transport;
	ret = vn->transport->setup(vn, cfg.args, &err);
	if (ret)
		fprintf(stderr, "%s: %s\n", spec, err.msg);
	FZ_ASSERT(!ret);

	src_of(&t, &src);
	/* the receive path hands over nothing shorter than this */
	if (size >= vn->host.rx_hdr_len + ETH_HLEN) {
		ret = vn->transport->verify_header(vn, data,
						   data + vn->host.rx_hdr_len,
						   size, &src);
		FZ_ASSERT(ret < 0 || ret <= HDR_MAX);
		FZ_ASSERT(ret < 0 || t.from_peer);
	}
	t.from_peer = true;
	src_of(&t, &peer);
	round_trip(vn, &t, &peer);

	vn->transport->destroy(vn);
	vecnet_args_free(cfg.args);
	free(vn);
	return 0;
}
