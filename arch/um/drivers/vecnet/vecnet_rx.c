// SPDX-License-Identifier: GPL-2.0
/*
 * vecnet: receive.  NAPI reads a batch of datagrams per host call from
 * a queue's descriptor (on queue 0 also from each shortcut channel),
 * takes what leads each frame (a virtio-net header, a negotiation
 * message, a tunnel header) and hands the frames up the stack: a slot's
 * buffers go up as they are, the linear part and the pages a super-frame
 * filled (vecnet_rx_take), and fresh ones take their place.
 */

#include <linux/skbuff.h>
#include <linux/virtio_net.h>
#include <net/gso.h>
#include "vecnet.h"
#include "vecnet_chan.h"
#include "vecnet_nego.h"
#include "vecnet_peer.h"
#include "vecnet_ring.h"
#include "vecnet_rx.h"
#include "vecnet_stats.h"
#include "vecnet_transport.h"
#include "vecnet_user.h"

static int vecnet_recv_batch(struct vecnet_queue *q, int fd, unsigned int n)
{
	if (q->vn->flags & VECNET_TF_CHARDEV)
		return vecnet_user_readv_batch(fd, q->rx.msgs, n);
	return vecnet_user_recvmmsg(fd, q->rx.msgs, n, !!q->rx.cmsgs);
}

/*
 * The host's virtio-net header says what the frame still needs (a
 * checksum to finish, segmentation for a super-frame) or that its
 * checksum is already good.  One that does not fit the frame is the
 * host's error, counted with the encapsulation errors.
 */
static int vecnet_rx_vnet_hdr(struct vecnet_queue *q, struct sk_buff *skb,
			      const struct virtio_net_hdr *vh)
{
	struct vecnet_dev *vn = q->vn;

	if (virtio_net_hdr_to_skb(skb, vh, virtio_legacy_is_little_endian())) {
		vecnet_qcount_napi(q, rx_encaps_errors);
		return -EINVAL;
	}
	/*
	 * Only the host kernel (tap, raw) vouches for a checksum; a peer
	 * guest on a negotiated link could claim anything
	 */
	if ((vh->flags & VIRTIO_NET_HDR_F_DATA_VALID) &&
	    !(vn->flags & VECNET_TF_NEGOTIATE)) {
		skb->ip_summed = CHECKSUM_UNNECESSARY;
		vecnet_qcount_napi(q, rx_csum_offload_good);
	}
	return 0;
}

/* One frame, from its Ethernet header on, up the stack */
static void vecnet_rx_up(struct vecnet_queue *q, struct sk_buff *skb)
{
	struct net_device *dev = q->vn->dev;
	unsigned int len = skb->len;

	skb->protocol = eth_type_trans(skb, dev);
	skb_record_rx_queue(skb, q->index);
	dev_dstats_rx_add(dev, len);
	vecnet_qstats_add(&q->rx_stats, len);
	napi_gro_receive(&q->napi, skb);
}

/*
 * A super-frame while rx-gro-hw is off (ethtool -K, or generic XDP,
 * which wants every frame as it was on the wire).  A tap is told not to
 * send them, but a peer on a socket cannot be (raw; a unixdgram peer,
 * which may be another guest), so they are cut here into the frames the
 * sender's stack would have made without TSO, each with its checksum
 * still left to finish as the super-frame's was.  virtio-net lets no
 * super-frame go without that (NEEDS_CSUM), or the host's word that its
 * checksum is good: one with neither is the peer's error.  Returns how
 * many frames went up.
 */
static unsigned int vecnet_rx_segment(struct vecnet_queue *q,
				      struct sk_buff *skb)
{
	struct net_device *dev = q->vn->dev;
	struct sk_buff *segs, *next;
	unsigned int n = 0;

	if (skb->ip_summed == CHECKSUM_NONE)
		goto bad;
	skb->protocol = eth_type_trans(skb, dev);
	/* a VLAN tag moves out of the frame, as the core's receive does */
	if (eth_type_vlan(skb->protocol)) {
		skb = skb_vlan_untag(skb);
		if (!skb) {
			dev_dstats_rx_dropped(dev);
			return 0;
		}
	}
	/* segmented from the Ethernet header on, as on transmit */
	skb_reset_network_header(skb);
	__skb_push(skb, ETH_HLEN);
	segs = __skb_gso_segment(skb, NETIF_F_SG | NETIF_F_HW_CSUM, false);
	if (IS_ERR_OR_NULL(segs))
		goto bad;
	consume_skb(skb);
	skb_list_walk_safe(segs, skb, next) {
		skb_mark_not_on_list(skb);
		vecnet_rx_up(q, skb);
		n++;
	}
	return n;

bad:
	vecnet_qcount_napi(q, rx_encaps_errors);
	dev_kfree_skb_any(skb);
	dev_dstats_rx_dropped(dev);
	return 0;
}

static void vecnet_rx_drop(struct vecnet_queue *q, unsigned int i)
{
	dev_dstats_rx_dropped(q->vn->dev);
	vecnet_rx_slot(q, i);
}

/*
 * A negotiating link: a datagram shorter than a frame may be a message
 * of the negotiation, which may take the descriptor at @fd (see
 * vecnet_nego_rx()); one from a peer that agreed to headers has its
 * header in front of the frame.  Returns the header's length, or -1 when
 * the datagram was taken.
 */
static int vecnet_rx_nego(struct vecnet_queue *q, unsigned int i,
			  unsigned int len, struct virtio_net_hdr *vh, int *fd)
{
	const u8 *data = q->rx.skbs[i]->data;

	if (unlikely(len < ETH_HLEN) &&
	    vecnet_nego_rx(q->vn, data, len, fd)) {
		vecnet_rx_slot(q, i);
		return -1;
	}
	if (!READ_ONCE(q->vn->nego.rx_vnet))
		return 0;
	if (len >= sizeof(*vh))
		memcpy(vh, data, sizeof(*vh));
	return sizeof(*vh);
}

/*
 * A further queue of a negotiating link carries a header on every frame;
 * its only other datagrams are the switch's answer to its JOIN and the
 * CHANs of its channels, which may take the descriptor at @fd.  Returns
 * the header's length, or -1 when the datagram was taken.
 */
static int vecnet_rx_mq(struct vecnet_queue *q, unsigned int i,
			unsigned int len, struct virtio_net_hdr *vh, int *fd)
{
	const u8 *data = q->rx.skbs[i]->data;

	if (unlikely(len < sizeof(*vh) + ETH_HLEN)) {
		if (vecnet_nego_mq_rx(q, data, len, fd)) {
			vecnet_rx_slot(q, i);
		} else {
			DEV_STATS_INC(q->vn->dev, rx_length_errors);
			vecnet_rx_drop(q, i);
		}
		return -1;
	}
	memcpy(vh, data, sizeof(*vh));
	return sizeof(*vh);
}

/*
 * A frame from shortcut channel @c: always with a header, and only from
 * the address the channel is for; or the other guest's MODE.  Returns
 * the header's length, or -1 when the datagram was taken or dropped.
 */
static int vecnet_rx_chan(struct vecnet_queue *q, struct vecnet_chan *c,
			  unsigned int i, unsigned int len,
			  struct virtio_net_hdr *vh)
{
	const u8 *data = q->rx.skbs[i]->data;

	if (unlikely(len < ETH_HLEN) && vecnet_chan_msg(c, data, len)) {
		vecnet_rx_slot(q, i);
		return -1;
	}
	if (unlikely(!vecnet_chan_frame_ok(c, data, len))) {
		vecnet_qcount_napi(q, rx_chan_bad);
		vecnet_rx_drop(q, i);
		return -1;
	}
	memcpy(vh, data, sizeof(*vh));
	return sizeof(*vh);
}

/* The header in front of datagram @i: -1 when it was taken or dropped */
static int vecnet_rx_inline_hdr(struct vecnet_queue *q,
				struct vecnet_chan *c, unsigned int i,
				unsigned int len, struct virtio_net_hdr *vh,
				int *fd)
{
	if (c)
		return vecnet_rx_chan(q, c, i, len, vh);
	if (q->index)
		return vecnet_rx_mq(q, i, len, vh, fd);
	return vecnet_rx_nego(q, i, len, vh, fd);
}

/*
 * Datagram @i up the stack; @fd, when not NULL, points to a descriptor
 * that came with it, which a message may take (setting it to -1).
 * Returns how many frames beyond one it made (a super-frame cut while
 * rx-gro-hw is off), for NAPI's budget.
 */
static unsigned int vecnet_rx_frame(struct vecnet_queue *q,
				    struct vecnet_chan *c, unsigned int i,
				    int *fd)
{
	struct user_msghdr *h = &q->rx.msgs[i].msg_hdr;
	unsigned int len = q->rx.msgs[i].msg_len;
	const struct virtio_net_hdr *vh = NULL;
	struct vecnet_dev *vn = q->vn;
	unsigned int hl = vn->host.rx_hdr_len;
	struct net_device *dev = vn->dev;
	struct vecnet_rxq *rx = &q->rx;
	struct virtio_net_hdr inline_hdr;
	struct sk_buff *skb;
	unsigned int n;
	int extra = 0;

	if (unlikely(h->msg_flags & MSG_TRUNC)) {
		vecnet_qcount_napi(q, rx_truncated);
		DEV_STATS_INC(dev, rx_length_errors);
		vecnet_rx_drop(q, i);
		return 0;
	}
	if (vn->flags & VECNET_TF_VNET_HDR)
		vh = (const void *)(rx->hdrs + i * hl);
	if (c || (vn->flags & VECNET_TF_NEGOTIATE)) {
		extra = vecnet_rx_inline_hdr(q, c, i, len, &inline_hdr, fd);
		if (extra < 0)
			return 0;
		if (extra)
			vh = &inline_hdr;
	}
	if (unlikely(len < hl + extra + ETH_HLEN)) {
		DEV_STATS_INC(dev, rx_length_errors);
		vecnet_rx_drop(q, i);
		return 0;
	}
	if (vn->transport->verify_header) {
		extra = vn->transport->verify_header(vn, rx->hdrs + i * hl,
						     rx->skbs[i]->data, len,
						     rx->names ? rx->names + i *
						     vn->host.name_len : NULL);
		if (extra < 0 || len < hl + extra + ETH_HLEN) {
			vecnet_qcount_napi(q, rx_encaps_errors);
			vecnet_rx_drop(q, i);
			return 0;
		}
	}

	/* the slot's buffers go up as they are, fresh ones take their place */
	skb = vecnet_rx_take(q, i, len - hl);
	if (unlikely(!skb))
		return 0;
	if (extra)
		__skb_pull(skb, extra);
	if (unlikely(skb->len > VECNET_GSO_FRAME))
		vecnet_qcount_napi(q, rx_big_frames);
	if (vh && vecnet_rx_vnet_hdr(q, skb, vh)) {
		dev_kfree_skb_any(skb);
		dev_dstats_rx_dropped(dev);
		return 0;
	}
	if (unlikely(skb_is_gso(skb)) && !(dev->features & NETIF_F_GRO_HW)) {
		n = vecnet_rx_segment(q, skb);
		return n ? n - 1 : 0;
	}
	vecnet_rx_up(q, skb);
	return 0;
}

/*
 * Descriptors that came with datagram @i: a channel's, or unwanted.
 * Returns what vecnet_rx_frame() does.
 */
static unsigned int vecnet_rx_one(struct vecnet_queue *q,
				  struct vecnet_chan *c, unsigned int i)
{
	unsigned int dropped = 0, more;
	int fd;

	/* only a device that takes channels has room for them */
	if (likely(!q->rx.msgs[i].msg_hdr.msg_controllen))
		return vecnet_rx_frame(q, c, i, NULL);
	fd = vecnet_user_msg_fd(&q->rx.msgs[i], &dropped);
	if (unlikely(dropped))
		vecnet_xstats_add_n(q, VECNET_XS_NAPI,
				    vecnet_xs_off(rx_fds_dropped), dropped);
	/* a CHAN from the switch takes it (vecnet_nego_rx, vecnet_nego_mq_rx) */
	more = vecnet_rx_frame(q, c, i, &fd);
	if (unlikely(fd >= 0))
		vecnet_chan_drop_fd(q, fd);
	return more;
}

/* Receive from @fd, the queue's or channel @c's, up to @budget frames */
static int vecnet_rx_fd(struct vecnet_queue *q, int fd,
			struct vecnet_chan *c, int budget)
{
	struct vecnet_xstats *xs = &q->xstats[VECNET_XS_NAPI];
	struct vecnet_dev *vn = q->vn;
	bool eof = false;
	int done = 0;

	while (done < budget) {
		unsigned int want = min_t(unsigned int, budget - done,
					  vn->batch);
		unsigned int more = 0;
		int ret, i;

		ret = vecnet_recv_batch(q, fd, want);
		vecnet_qcount_napi(q, rx_kicks);
		if (ret == -EAGAIN || ret == 0)
			break;
		if (vn->host.conn && !c && vecnet_peer_gone(vn, ret)) {
			vecnet_peer_lost_rx(vn);
			break;
		}
		if (ret < 0) {
			/* counted as work, so a stuck error cannot spin here */
			vecnet_qcount_napi(q, rx_transient_errors);
			done++;
			continue;
		}
		vecnet_queue_sample(xs, &xs->rx_queue_max,
				    &xs->rx_queue_running_average, ret);
		if (c)
			vecnet_xstats_add_n(q, VECNET_XS_NAPI,
					    vecnet_xs_off(rx_chan_frames), ret);
		for (i = 0; i < ret; i++) {
			/* a connection's end of file reads as empty records */
			if (unlikely(!q->rx.msgs[i].msg_len && vn->host.conn)) {
				vecnet_rx_slot(q, i);
				eof = true;
				continue;
			}
			more += vecnet_rx_one(q, c, i);
		}
		/* the budget counts frames up the stack, cut ones each */
		done = min_t(int, done + ret + more, budget);
		if (unlikely(eof)) {
			vecnet_peer_lost_rx(vn);
			break;
		}
		/*
		 * Short means empty for now.  A frame that lands after this
		 * raises a new edge, and napi_schedule() during the poll
		 * makes NAPI poll again.
		 */
		if (ret < want)
			break;
	}
	return done;
}

/* Descriptor @s of queue @q (0: its own, 1 + i: channel i), or -1 */
static int vecnet_rx_src_fd(struct vecnet_queue *q, unsigned int s)
{
	struct vecnet_chan *c;

	if (!s)
		return vecnet_q_fd(q);
	c = &q->vn->chan.ch[q->index][s - 1];
	/* pairs with the release in vecnet_chan_work(): fd is set */
	return smp_load_acquire(&c->state) == VECNET_CHAN_ACTIVE ? c->fd : -1;
}

/*
 * Descriptor @s of queue @q, up to @budget frames; a channel not (or no
 * longer) open gives none.  Sets *@left when the budget ran out before
 * the descriptor did.
 */
static int vecnet_rx_source(struct vecnet_queue *q, unsigned int s,
			    int budget, bool *left)
{
	int fd = vecnet_rx_src_fd(q, s), done = 0;

	if (!s)
		done = vecnet_rx_fd(q, fd, NULL, budget);
	else if (fd >= 0)
		done = vecnet_rx_fd(q, fd, &q->vn->chan.ch[q->index][s - 1],
				    budget);
	*left = done >= budget;
	return done;
}

/*
 * Receive interrupt coalescing (ethtool -C rx-usecs, adaptive-rx), from
 * the poll, under the RCU read lock; descriptors @got gave frames in it.
 * An interrupt here is a host signal per frame, and the poll it brings
 * reads that one frame.  Under a stream the signals of the descriptors
 * that gave frames go off, and rx_timer polls every rx-usecs: one call
 * reads all that came meanwhile.  With adaptive-rx a stream is one way
 * only: frames closer together than rx-usecs while the device sends
 * nothing.  A lone frame, a request and its answer, a TCP flow and its
 * acknowledgements wait for no timer.  A poll that finds nothing, or
 * rx-usecs 0, puts the signals back on and returns true: the caller
 * must read them once more, as what came while they were off raised
 * none.
 */
static bool vecnet_rx_coalesce(struct vecnet_queue *q, unsigned long got)
{
	struct vecnet_dev *vn = q->vn;
	u64 span = (u64)READ_ONCE(vn->coal.rx_usecs) * NSEC_PER_USEC, now, sent;
	unsigned long flip, keep;
	bool stream = false;
	unsigned int s;
	int fd;

	if (!span && !q->rx_held)
		return false;
	if (got) {
		now = ktime_get_ns();
		sent = vecnet_tx_packets(vn);
		stream = span && (!READ_ONCE(vn->coal.rx_adaptive) ||
				  (sent == q->rx_sent &&
				   (q->rx_held || now - q->rx_last_ns < span)));
		q->rx_last_ns = now;
		q->rx_sent = sent;
	}
	if (stream) {
		flip = got & ~q->rx_held;
		for_each_set_bit(s, &flip, BITS_PER_LONG) {
			fd = vecnet_rx_src_fd(q, s);
			if (fd >= 0 && !vecnet_user_sigio(fd, 0)) {
				WRITE_ONCE(q->rx_held, q->rx_held | BIT(s));
				vecnet_qcount_napi(q, rx_irq_held);
			}
		}
		if (q->rx_held)
			hrtimer_start(&q->rx_timer, ns_to_ktime(span),
				      HRTIMER_MODE_REL);
		return false;
	}
	if (!q->rx_held)
		return false;
	flip = q->rx_held;
	keep = 0;
	for_each_set_bit(s, &flip, BITS_PER_LONG) {
		fd = vecnet_rx_src_fd(q, s);
		/* one whose signal stays off is still read by the timer */
		if (fd >= 0 && vecnet_user_sigio(fd, 1))
			keep |= BIT(s);
	}
	WRITE_ONCE(q->rx_held, keep);
	if (keep)
		hrtimer_start(&q->rx_timer,
			      ns_to_ktime(span ?: VECNET_RX_USECS_DEFAULT *
					  NSEC_PER_USEC), HRTIMER_MODE_REL);
	atomic_long_or(flip, &q->rx_pending);
	return true;
}

/*
 * NAPI reads only the descriptors whose interrupt fired (rx_pending): a
 * frame a second on a channel costs one host call, not one for every
 * socket of the queue.  Each gets an equal share of the budget and the
 * first place goes round, so that a flood on one (the switch, a channel)
 * cannot starve the others.  One left with frames is read again in the
 * next poll, which NAPI then owes us: the host raises no new edge for
 * frames it already announced.
 */
int vecnet_rx(struct vecnet_queue *q, int budget)
{
	unsigned long todo = atomic_long_xchg(&q->rx_pending, 0), again = 0;
	struct vecnet_dev *vn = q->vn;
	unsigned int n = 1, s, k, first;
	unsigned long got = 0;
	int done = 0, share, d;
	bool left, reread;

	/* and the channels this queue owns */
	if (vn->chan.want)
		n += VECNET_CHAN_MAX;
	/* a held descriptor raises nothing: every poll reads it */
	todo = (todo | q->rx_held) & GENMASK(n - 1, 0);
	if (!todo || budget <= 0) {
		if (todo)
			atomic_long_or(todo, &q->rx_pending);
		return 0;
	}
	share = max_t(int, budget / hweight_long(todo), 1);
	first = q->rx_first;
	q->rx_first = (first + 1) % n;
	/* vecnet_chan.c closes a channel only after a grace period */
	rcu_read_lock();
	for (k = 0; k < n; k++) {
		s = (first + k) % n;
		if (!(todo & BIT(s)))
			continue;
		if (done >= budget) {
			again |= BIT(s);
			continue;
		}
		d = vecnet_rx_source(q, s, min(share, budget - done), &left);
		if (d)
			got |= BIT(s);
		done += d;
		if (left)
			again |= BIT(s);
	}
	reread = vecnet_rx_coalesce(q, got);
	rcu_read_unlock();
	if (!again && !reread)
		return done;
	atomic_long_or(again, &q->rx_pending);
	return budget;
}
