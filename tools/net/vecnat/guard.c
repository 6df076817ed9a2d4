// SPDX-License-Identifier: GPL-2.0
/*
 * guard.c - frames libslirp is not given.  libslirp 4.7 crashes on an
 * IPv4 fragment that carries no payload, and on any fragment that comes
 * before the first one of its datagram (its reassembly follows a
 * pointer it never set): one 34- or 58-byte frame from a guest, and the
 * NAT process is gone.  So fragments pass only in order: the first one
 * (offset 0) opens an entry here, and each later one must start where
 * the last one passed ended; anything else is dropped, as is what the
 * kernel's own input path would drop (lengths that do not fit the frame,
 * a fragment with no data, not the last one and not a multiple of 8
 * bytes, or past 64 KiB).  An entry ends with its last fragment, or
 * after FRAG_MS, well before libslirp gives up the datagram (30 s), so
 * that libslirp never sees the rest of a datagram it has forgotten.
 *
 * libslirp leases an address to whatever client MAC a DHCP request
 * names, so a guest could take every lease with requests for made-up
 * MACs.  A request passes only for its sender's own MAC (the frame's
 * source, which --mac-lock holds to one a port), and whole: a request
 * cut in fragments would hide its MAC in a later one.
 */
#include <arpa/inet.h>
#include <string.h>

#include "vecnat.h"

#define ETH_HLEN	14
#define ETH_P_IP	0x0800
#define IP_MF		0x2000
#define IP_OFFMASK	0x1fff
#define PROTO_UDP	17
#define DHCP_SERVER	67		/* the port requests go to */
#define BOOTREQUEST	1
#define BOOTP_CHADDR	28		/* the client's MAC, in a BOOTP message */
#define FRAG_SLOTS	64		/* datagrams in reassembly at once */
#define FRAG_MS		10000

/* a datagram whose fragments pass: where its next one must start */
struct frag {
	uint8_t key[11];		/* source, destination, id, protocol */
	unsigned int next;		/* bytes */
	uint64_t ms;			/* when its first fragment passed */
};

static struct frag frags[FRAG_SLOTS];

static struct frag *frag_find(const uint8_t *key, uint64_t now)
{
	unsigned int i;

	for (i = 0; i < FRAG_SLOTS; i++)
		if (frags[i].ms && now - frags[i].ms < FRAG_MS &&
		    !memcmp(frags[i].key, key, sizeof(frags[i].key)))
			return &frags[i];
	return NULL;
}

/* A slot for a new datagram: a free or expired one, else the oldest */
static struct frag *frag_slot(uint64_t now)
{
	struct frag *old = &frags[0];
	unsigned int i;

	for (i = 0; i < FRAG_SLOTS; i++) {
		if (!frags[i].ms || now - frags[i].ms >= FRAG_MS)
			return &frags[i];
		if (frags[i].ms < old->ms)
			old = &frags[i];
	}
	return old;
}

/* Fragment @ip (@data bytes after its header) may pass: it is in order */
static const char *frag_pass(const uint8_t *ip, unsigned int frag,
			     unsigned int data, uint64_t now)
{
	unsigned int off = (frag & IP_OFFMASK) * 8;
	uint8_t key[11];
	struct frag *e;

	memcpy(key, ip + 12, 8);
	memcpy(key + 8, ip + 4, 2);
	key[10] = ip[9];
	e = frag_find(key, now);
	if (!off) {
		if (!e)
			e = frag_slot(now);
		memcpy(e->key, key, sizeof(key));
		e->next = data;
		e->ms = now ? now : 1;
		return NULL;
	}
	if (!e || e->next != off)
		return "IPv4 fragment out of order";
	if (frag & IP_MF)
		e->next += data;
	else
		e->ms = 0;
	return NULL;
}

/*
 * Is IPv4 packet @ip (@tot bytes, the first or only fragment of its
 * datagram) a DHCP request that names another client MAC than frame
 * @f's source, or one in fragments, or one too short to name any?
 */
static bool dhcp_foreign(const uint8_t *f, const uint8_t *ip, unsigned int ihl,
			 unsigned int tot, unsigned int frag)
{
	const uint8_t *udp = ip + ihl, *bootp = udp + 8;

	if (ip[9] != PROTO_UDP || tot < ihl + 4 ||
	    (udp[2] << 8 | udp[3]) != DHCP_SERVER)
		return false;
	if (frag & IP_MF)
		return true;
	/* no BOOTP message: libslirp drops it itself */
	if (tot < ihl + 8 + BOOTP_CHADDR + 6)
		return false;
	return bootp[0] == BOOTREQUEST && memcmp(bootp + BOOTP_CHADDR, f + 6, 6);
}

/*
 * NULL when frame @f of @len bytes may go to libslirp, at @now (ms);
 * else why not
 */
const char *nat_frame_check(const uint8_t *f, size_t len, uint64_t now)
{
	unsigned int ihl, tot, frag, data;
	const uint8_t *ip = f + ETH_HLEN;
	uint16_t type;

	if (len < ETH_HLEN)
		return "runt";
	memcpy(&type, f + 12, 2);
	if (ntohs(type) != ETH_P_IP)
		return NULL;
	if (len < ETH_HLEN + 20)
		return "IPv4 header cut short";
	ihl = (ip[0] & 0x0f) * 4;
	tot = ip[2] << 8 | ip[3];
	frag = (ip[6] << 8 | ip[7]);
	if (ip[0] >> 4 != 4 || ihl < 20 || tot < ihl || tot > len - ETH_HLEN)
		return "IPv4 lengths do not fit the frame";
	if (!(frag & IP_OFFMASK) && dhcp_foreign(f, ip, ihl, tot, frag))
		return "a DHCP request for another MAC than its sender's, or in fragments";
	if (!(frag & (IP_MF | IP_OFFMASK)))
		return NULL;
	data = tot - ihl;
	if (!data)
		return "IPv4 fragment with no data";
	if ((frag & IP_MF) && data % 8)
		return "IPv4 fragment not a multiple of 8 bytes";
	if ((frag & IP_OFFMASK) * 8 + data > 65535 - ihl)
		return "IPv4 fragment past 64 KiB";
	return frag_pass(ip, frag, data, now);
}
