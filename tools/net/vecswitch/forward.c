// SPDX-License-Identifier: GPL-2.0
/*
 * forward.c - the forwarding decision for one received frame: validation,
 * MAC lock, learning, and where the frame goes (one port, a flood, or
 * nowhere), including hub mode and --isolate, and in what form (with its
 * virtio-net header, or plain).
 */
#include <string.h>

#include "vecswitch.h"

#define ETH_P_8021Q_HI	0x81
#define ETH_P_8021Q_LO	0x00

static bool mac_is_multicast(const uint8_t *mac)
{
	return mac[0] & 1;
}

static bool mac_is_zero(const uint8_t *mac)
{
	return !(mac[0] | mac[1] | mac[2] | mac[3] | mac[4] | mac[5]);
}

static bool frame_tagged(const uint8_t *frame, unsigned int len)
{
	return len >= 18 && frame[12] == ETH_P_8021Q_HI &&
	       frame[13] == ETH_P_8021Q_LO;
}

static uint16_t frame_vlan(const uint8_t *frame, unsigned int len)
{
	if (frame_tagged(frame, len))
		return ((frame[14] << 8) | frame[15]) & 0x0fff;
	return 0;
}

/*
 * Storm control: a port may flood --bcast-limit broadcast or multicast
 * frames a second (a token bucket as deep as a second's worth); past
 * that they are dropped (rx_storm).  The uplink is not held to it.
 */
static bool flood_ok(struct vs_switch *sw, struct vs_port *in)
{
	uint64_t rate = sw->cfg.bcast_limit;

	if (!rate || in->uplink)
		return true;
	if (sw->now_ms > in->bcast_ms) {
		in->bcast_tokens += (sw->now_ms - in->bcast_ms) * rate / 1000;
		if (in->bcast_tokens > rate)
			in->bcast_tokens = rate;
		in->bcast_ms = sw->now_ms;
	}
	if (!in->bcast_tokens)
		return false;
	in->bcast_tokens--;
	return true;
}

static bool mac_lock_ok(struct vs_switch *sw, struct vs_port *in,
			const uint8_t *src)
{
	struct vs_port *owner;

	if (!sw->cfg.mac_lock)
		return true;
	/* a LAN has many MACs, but none of a guest that holds its own */
	if (in->uplink)
		return !vs_fdb_owner(sw, src);
	if (in->locked)
		return !memcmp(in->lock_mac, src, 6);
	/* the first source MAC claims the port, unless another port holds it */
	owner = vs_fdb_owner(sw, src);
	if (owner && owner != in)
		return false;
	memcpy(in->lock_mac, src, 6);
	in->locked = true;
	return true;
}

/* The longest frame the port takes (its MTU, a VLAN tag aside), 0: any */
static unsigned int mtu_room(const struct vs_port *out, const uint8_t *frame,
			     unsigned int len)
{
	if (!out->mtu)
		return 0;
	return out->mtu + ETH_HLEN_MIN + (frame_tagged(frame, len) ? 4 : 0);
}

static bool over_mtu(const struct vs_port *out, const uint8_t *frame,
		     unsigned int len)
{
	unsigned int room = mtu_room(out, frame, len);

	return room && len > room;
}

/* FNV-1a over @n bytes at @s, on from @h */
static uint32_t hash_bytes(uint32_t h, const uint8_t *s, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		h = (h ^ s[i]) * 16777619u;
	return h;
}

/*
 * What tells one flow from another: the Ethernet addresses, for IPv4 and
 * IPv6 the IP addresses, and for TCP and UDP (not a fragment) the ports.
 * The same flow always hashes the same, so its frames keep their order
 * on one socket of a multiqueue guest.  Only what lies inside @len is read.
 */
static uint32_t flow_hash(const uint8_t *f, unsigned int len)
{
	uint32_t h = hash_bytes(2166136261u, f, 12);
	unsigned int l3 = ETH_HLEN_MIN, l4 = 0;
	uint8_t proto = 0;

	if (frame_tagged(f, len))
		l3 += 4;
	if (len < l3)
		return h;
	if (f[l3 - 2] == 0x08 && f[l3 - 1] == 0x00 && len >= l3 + 20 &&
	    (f[l3] >> 4) == 4 && (f[l3] & 0x0f) >= 5) {
		h = hash_bytes(h, f + l3 + 12, 8);
		proto = f[l3 + 9];
		/* a fragment: only the first has the ports, so none use them */
		if (!((f[l3 + 6] & 0x3f) | f[l3 + 7]))
			l4 = l3 + (f[l3] & 0x0f) * 4;
	} else if (f[l3 - 2] == 0x86 && f[l3 - 1] == 0xdd && len >= l3 + 40) {
		h = hash_bytes(h, f + l3 + 8, 32);
		/* ports only straight after the fixed header */
		proto = f[l3 + 6];
		l4 = l3 + 40;
	}
	if (l4 && (proto == 6 || proto == 17) && len >= l4 + 4)
		h = hash_bytes(h, f + l4, 4);
	return h;
}

/* The socket of @out a frame goes to: one of a multiqueue guest's, by flow */
static unsigned int pick_queue(const struct vs_port *out, const uint8_t *frame,
			       unsigned int len)
{
	uint32_t h;

	if (!out->mq.n)
		return 0;
	/* FNV's low bits follow the last bytes alone: mix the high ones in */
	h = flow_hash(frame, len);
	h ^= h >> 16;
	h *= 0x45d9f3bu;
	h ^= h >> 16;
	return h % (1 + out->mq.n);
}

/* Does @out take @b's super-frame whole, as far as its type goes? */
static bool takes_gso(const struct vs_port *out, const struct vs_buf *b)
{
	return !out->ops->takes_gso || out->ops->takes_gso(out, &b->gso);
}

/* @n frames meant for a port that it does not get, counted in @why */
static void drop(struct vs_switch *sw, uint64_t *why, unsigned int n)
{
	sw->st.tx_wanted += n;
	*why += n;
}

/*
 * Queue the frame on one port, making its buffer on first use. A port
 * without headers gets a frame that still needs work in its plain form
 * (checksum finished, super-frame cut), all segments or none. Every frame
 * meant for a port is counted in tx_wanted, and ends up sent, dropped
 * (tx_queue_full, tx_unread, tx_oversize, tx_errors) or still queued.
 */
static void enqueue(struct vs_switch *sw, struct vs_port *out,
		    struct vs_buf **b, const uint8_t *frame, unsigned int len,
		    const uint8_t *vnet, const struct vs_gso *gso)
{
	struct vs_buf *s;

	if (out->txq.count >= out->txq.cap) {
		drop(sw, &out->st.tx_queue_full, 1);
		return;
	}
	/* a guest that stopped reading must not fill the shared buffer */
	if (out->ops->stalled && out->ops->stalled(sw, out)) {
		drop(sw, &out->st.tx_unread, 1);
		return;
	}
	if (!*b) {
		*b = vs_buf_new(frame, len, vnet, gso);
		if (!*b) {
			drop(sw, &out->st.tx_errors, 1);
			return;
		}
	}
	if ((out->nego.tx_vnet && takes_gso(out, *b)) ||
	    !vs_buf_needs_plain(*b)) {
		if (over_mtu(out, frame, len)) {
			drop(sw, &out->st.tx_oversize, 1);
			return;
		}
		sw->st.tx_wanted++;
		vs_queue_push_to(out, *b, pick_queue(out, frame, len));
		return;
	}
	/* a TCP super-frame is cut to fit a smaller MTU (a VXLAN uplink) */
	if (vs_buf_plain(sw, *b, vs_gso_fit(*b, mtu_room(out, frame, len))) < 0) {
		drop(sw, &out->st.tx_errors, 1);
		return;
	}
	/* the first segment is the largest */
	if (over_mtu(out, (*b)->seg->data, (*b)->seg->len)) {
		drop(sw, &out->st.tx_oversize, (*b)->nseg);
		return;
	}
	if (out->txq.cap - out->txq.count < (*b)->nseg) {
		drop(sw, &out->st.tx_queue_full, (*b)->nseg);
		return;
	}
	sw->st.tx_wanted += (*b)->nseg;
	for (s = (*b)->seg; s; s = s->next)
		vs_queue_push(out, s);
}

/*
 * The checks, MAC lock, storm control, counting and learning of a frame
 * from @in, which came by its socket @k (0: its main one, k: queue socket
 * k of a multiqueue guest), and where it goes: false when nowhere
 * (dropped, counted), else f->out, the one port of a known unicast, or
 * NULL for a flood.  Only the frame's headers are read: @frame may hold
 * just its first VS_FWD_HEAD_LEN bytes, @len being the whole frame's
 * length.
 */
bool vs_forward_decide(struct vs_switch *sw, struct vs_port *in,
		       unsigned int k, const uint8_t *frame, unsigned int len,
		       const struct vs_gso *gso, struct vs_fwd *f)
{
	const uint8_t *dst = frame, *src = frame + 6;
	struct vs_port *out;

	f->out = NULL;
	f->learned = false;
	if (len < ETH_HLEN_MIN) {
		in->st.rx_runt++;
		return false;
	}
	/* a super-frame was checked against its segments' size instead */
	if (len > sw->cfg.max_frame &&
	    !(gso && gso->type != VIRTIO_NET_HDR_GSO_NONE)) {
		in->st.rx_oversize++;
		return false;
	}
	if (mac_is_multicast(src) || mac_is_zero(src)) {
		in->st.rx_bad_src++;
		return false;
	}
	if (!mac_lock_ok(sw, in, src)) {
		in->st.rx_mac_lock++;
		return false;
	}
	if (mac_is_multicast(dst) && !flood_ok(sw, in)) {
		in->st.rx_storm++;
		return false;
	}
	in->st.rx_frames++;
	in->st.rx_bytes += len;
	in->qst[k].rx_packets++;
	in->qst[k].rx_bytes += len;
	in->dgram.unanswered = 0;
	if (gso && gso->type != VIRTIO_NET_HDR_GSO_NONE)
		in->st.rx_gso++;

	memcpy(f->dst, dst, 6);
	memcpy(f->src, src, 6);
	f->vlan = frame_vlan(frame, len);
	if (sw->cfg.hub)
		return true;
	f->learned = vs_fdb_learn(sw, in, src, f->vlan);
	if (mac_is_multicast(dst))
		return true;
	out = vs_fdb_lookup(sw, dst, f->vlan);
	if (out) {
		/* the destination sits behind the ingress port */
		if (out == in)
			return false;
		if (!vs_may_reach(sw, in, out)) {
			sw->st.isolated++;
			return false;
		}
		f->out = out;
		return true;
	}
	if (sw->cfg.flood_unknown)
		return true;
	sw->st.unknown_dropped++;
	return false;
}

/*
 * Queue the frame where vs_forward_decide() said.  *b is its buffer once
 * made (or given by the caller, already holding it); the caller drops
 * that reference.
 */
static void deliver(struct vs_switch *sw, struct vs_port *in,
		    const struct vs_fwd *f, const uint8_t *frame,
		    unsigned int len, const uint8_t *vnet,
		    const struct vs_gso *gso, struct vs_buf **b)
{
	bool blocked = false;
	struct vs_port *out;
	unsigned int i;

	if (sw->ncap)
		vs_capture_frame(sw, in, f->out, frame, len);
	if (f->out) {
		enqueue(sw, f->out, b, frame, len, vnet, gso);
		/*
		 * a channel names the source to @out's guest: only for an
		 * address the table puts on @in now
		 */
		if (in->chan.ok && f->out->chan.ok && !f->vlan && f->learned)
			vs_chan_seen(sw, in, f->src, f->out, f->dst);
		return;
	}
	for (i = 0; i < sw->nports; i++) {
		out = sw->ports[i];
		if (!out || out == in || out->dead)
			continue;
		if (!vs_may_reach(sw, in, out)) {
			blocked = true;
			continue;
		}
		enqueue(sw, out, b, frame, len, vnet, gso);
	}
	if (blocked)
		sw->st.isolated++;
}

static void forward(struct vs_switch *sw, struct vs_port *in, unsigned int k,
		    const uint8_t *frame, unsigned int len,
		    const uint8_t *vnet, const struct vs_gso *gso,
		    struct vs_buf **b)
{
	struct vs_fwd f;

	if (vs_forward_decide(sw, in, k, frame, len, gso, &f))
		deliver(sw, in, &f, frame, len, vnet, gso, b);
}

/*
 * A frame decided on already (vs_forward_decide), now in a buffer of its
 * own with its header filled in; the caller's reference is dropped.
 */
void vs_forward_deliver(struct vs_switch *sw, struct vs_port *in,
			const struct vs_fwd *f, struct vs_buf *b)
{
	deliver(sw, in, f, b->data, b->len, b->vnet, &b->gso, &b);
	vs_buf_put(b);
}

/*
 * May @out take a frame with this header as it is, now, ahead of
 * nothing queued: the way for a frame put straight into its guest.
 */
bool vs_forward_direct_ok(const struct vs_port *out, const struct vs_gso *gso)
{
	bool plain = gso->type == VIRTIO_NET_HDR_GSO_NONE &&
		     !(gso->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM);

	return !out->dead && !out->txq.count && !out->mtu &&
	       (plain || (out->nego.tx_vnet &&
			  gso->type != VIRTIO_NET_HDR_GSO_UDP_L4));
}

/* A frame from a port without headers: nothing left to do but send it. */
void vs_forward(struct vs_switch *sw, struct vs_port *in,
		const uint8_t *frame, unsigned int len)
{
	struct vs_buf *b = NULL;

	forward(sw, in, 0, frame, len, NULL, NULL, &b);
	if (b)
		vs_buf_put(b);	/* drop the creator's reference */
}

/*
 * A datagram with a virtio-net header, the header then the frame, from
 * @in's socket @k (see vs_forward_decide)
 */
void vs_forward_vnet(struct vs_switch *sw, struct vs_port *in,
		     unsigned int k, const uint8_t *hdr, unsigned int len)
{
	struct vs_buf *b = NULL;
	struct vs_gso gso;

	if (len < VS_VNET_HDR_LEN + ETH_HLEN_MIN) {
		in->st.rx_runt++;
		return;
	}
	len -= VS_VNET_HDR_LEN;
	if (vs_vnet_parse(hdr, hdr + VS_VNET_HDR_LEN, len, sw->cfg.max_frame,
			  &gso) < 0) {
		in->st.rx_bad_vnet++;
		return;
	}
	forward(sw, in, k, hdr + VS_VNET_HDR_LEN, len, hdr, &gso, &b);
	if (b)
		vs_buf_put(b);
}
