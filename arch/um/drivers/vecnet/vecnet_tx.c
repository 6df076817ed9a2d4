// SPDX-License-Identifier: GPL-2.0
/*
 * vecnet: transmit.  xmit queues each frame in its queue's ring, with
 * a virtio-net header where the link takes one, and sends a batch per
 * host call: at once, when the ring is full, or after tx-usecs.  A full
 * ring stops the stack's queue, and "later" from the host leaves the
 * frames where they are until the write interrupt or the retry timer
 * brings NAPI back (vecnet_tx_poll): nothing is dropped for lack of
 * room.  A frame may go to a shortcut channel of its queue instead of
 * the switch.  A lost peer is reported to vecnet_peer.c, which also
 * says which queues take frames (vn->mq.live).
 */

#include <linux/skbuff.h>
#include <linux/tcp.h>
#include <linux/virtio_net.h>
#include <net/gso.h>
#include "vecnet.h"
#include "vecnet_chan.h"
#include "vecnet_peer.h"
#include "vecnet_ring.h"
#include "vecnet_stats.h"
#include "vecnet_transport.h"
#include "vecnet_tx.h"
#include "vecnet_user.h"

/* Retry timer for a sender the host cannot wake: up to 5 ms */
#define VECNET_RETRY_MAX_NS	(5 * NSEC_PER_MSEC)
/* adaptive-tx: frames of at most this many bytes are held... */
#define VECNET_ADAPT_SMALL	256
/* ...this long when tx-usecs is 0 */
#define VECNET_ADAPT_USECS	50
#define VECNET_EINTR_TRIES	4
/*
 * The least payload one piece of a cut super-frame carries: half of what
 * a 64 KiB frame holds after the longest headers
 */
#define VECNET_CUT_MIN		((VECNET_GSO_FRAME - 256) / 2)

/* ---- sending ----------------------------------------------------------- */

static int vecnet_send_batch(struct vecnet_queue *q, u8 chan,
			     unsigned int first, unsigned int n)
{
	struct vecnet_dev *vn = q->vn;

	if (vn->flags & (VECNET_TF_CHARDEV | VECNET_TF_TX_CHARDEV))
		return vecnet_user_writev_batch(vecnet_tx_fd(q),
						&q->tx.msgs[first], n);
	if (chan != VECNET_CHAN_NONE)
		return vecnet_user_sendmmsg(vn->chan.ch[q->index][chan].fd,
					    &q->tx.msgs[first], n);
	return vecnet_user_sendmmsg(vecnet_q_fd(q), &q->tx.msgs[first], n);
}

static void vecnet_tx_wait(struct vecnet_queue *q)
{
	hrtimer_start(&q->retry_timer, ns_to_ktime(q->retry_ns),
		      HRTIMER_MODE_REL);
	q->retry_ns = min_t(u64, q->retry_ns * 2, VECNET_RETRY_MAX_NS);
}

/*
 * The host refused the frame at the head of
 * the ring.  One beyond 64 KiB it may refuse for good (a send buffer
 * capped below its length, no contiguous memory for it): it is dropped,
 * and the device cuts its frames for the peer to 64 KiB from then on,
 * until the peer says again what it takes.  Returns true then.
 */
static bool vecnet_tx_big_refused(struct vecnet_queue *q, int err)
{
	struct vecnet_dev *vn = q->vn;

	lockdep_assert_held(&q->tx.lock);
	if (q->tx.skbs[q->tx.head]->len <= VECNET_GSO_FRAME)
		return false;
	vecnet_peer_set_frame(vn, VECNET_GSO_FRAME);
	vecnet_qcount_tx(q, tx_big_refused);
	net_info_ratelimited("%s: the host refused a super-frame beyond 64 KiB (%d): cut to 64 KiB from now on\n",
			     vn->dev->name, err);
	vecnet_tx_pop(q, false);
	return true;
}

/*
 * Send what the ring holds.  Never drops for lack of room: "later"
 * from the host leaves the frames queued and the write interrupt or
 * the retry timer brings NAPI back to send them.
 */
static void vecnet_tx_flush(struct vecnet_queue *q)
{
	struct vecnet_xstats *xs = &q->xstats[VECNET_XS_TX];
	bool armed = READ_ONCE(q->tx_blocked);
	struct vecnet_dev *vn = q->vn;
	struct vecnet_txq *tx = &q->tx;
	unsigned int eintr = 0;

	lockdep_assert_held(&tx->lock);
	if (READ_ONCE(vn->coal.tx_adaptive))
		q->last_flush_ns = ktime_get_ns();
	while (tx->count) {
		unsigned int n = min(tx->count, vn->tx_depth - tx->head);
		u8 chan = VECNET_CHAN_NONE;
		int ret, i;

		if (!vn->cfg.vec)
			n = 1;
		/* one call sends to one descriptor: a run of the same */
		if (tx->chan) {
			chan = tx->chan[tx->head];
			for (i = 1; i < n; i++)
				if (tx->chan[(tx->head + i) % vn->tx_depth] != chan)
					break;
			n = i;
		}
		if (unlikely(tx->skbs[tx->head]->len > VECNET_GSO_FRAME) &&
		    vecnet_tx_big_fails())
			ret = -ENOBUFS;
		else
			ret = vecnet_send_batch(q, chan, tx->head, n);
		vecnet_qcount_tx(q, tx_kicks);
		if (ret > 0) {
			vecnet_queue_sample(xs, &xs->tx_queue_max,
					    &xs->tx_queue_running_average,
					    ret);
			if (chan != VECNET_CHAN_NONE) {
				vecnet_chan_sent(q, chan);
				vecnet_xstats_add_n(q, VECNET_XS_TX,
						    vecnet_xs_off(tx_chan_frames),
						    ret);
			}
			for (i = 0; i < ret; i++)
				vecnet_tx_pop(q, true);
			if (armed) {
				WRITE_ONCE(q->tx_blocked, false);
				armed = false;
				vecnet_qcount_tx(q, tx_restart_queue);
			}
			q->retry_ns = VECNET_RETRY_MIN_NS;
			vecnet_peer_sent(vn);
			continue;
		}
		/* the channel's frames go to the switch instead */
		if (chan != VECNET_CHAN_NONE &&
		    vecnet_chan_send_failed(q, chan, ret))
			continue;
		if ((ret == -ENOBUFS || ret == -EMSGSIZE) &&
		    vecnet_tx_big_refused(q, ret))
			continue;
		if (ret == -EAGAIN || ret == -ENOBUFS) {
			if (ret == -EAGAIN)
				vecnet_qcount_tx(q, tx_eagain);
			else
				vecnet_qcount_tx(q, tx_enobufs);
			/*
			 * Flag first, then try once more: a wakeup between
			 * the failed send and the flag would otherwise be
			 * ignored by the write interrupt.
			 */
			if (!armed) {
				WRITE_ONCE(q->tx_blocked, true);
				armed = true;
				continue;
			}
			vecnet_tx_wait(q);
			return;
		}
		if (ret == -EINTR || ret == -ECONNRESET) {
			vecnet_qcount_tx(q, tx_eintr);
			if (++eintr < VECNET_EINTR_TRIES)
				continue;
			WRITE_ONCE(q->tx_blocked, true);
			vecnet_tx_wait(q);
			return;
		}
		if (vecnet_peer_gone(vn, ret)) {
			if (q->index)
				vecnet_peer_q_gone(q);
			else
				vecnet_peer_lost(vn);
			return;
		}
		/* This frame cannot go (EMSGSIZE and the like); the rest may */
		net_warn_ratelimited("%s: dropped a frame the host refused: %d\n",
				     vn->dev->name, ret);
		DEV_STATS_INC(vn->dev, tx_errors);
		vecnet_tx_pop(q, false);
	}
}

/* Queue 0 sends now, unless the host said "later" */
void vecnet_tx_kick_flush(struct vecnet_dev *vn)
{
	struct vecnet_queue *q = &vn->q[0];

	lockdep_assert_held(&q->tx.lock);
	if (q->tx.count && !READ_ONCE(q->tx_blocked))
		vecnet_tx_flush(q);
}

/*
 * From NAPI: send what the ring holds, unless the host said "later" and
 * neither it nor a timer has said to try again since (@resume), and let
 * the stack's queue run again once the ring has room
 */
void vecnet_tx_poll(struct vecnet_queue *q, bool resume)
{
	struct netdev_queue *txq = vecnet_netdev_queue(q);
	struct vecnet_dev *vn = q->vn;
	struct vecnet_txq *tx = &q->tx;

	spin_lock(&tx->lock);
	if (tx->count && (!READ_ONCE(q->tx_blocked) || resume))
		vecnet_tx_flush(q);
	if (netif_tx_queue_stopped(txq) &&
	    tx->count + vn->tx_reserve <= vn->tx_depth &&
	    netif_carrier_ok(vn->dev)) {
		netif_tx_wake_queue(txq);
		vecnet_qcount_tx(q, tx_flow_control_xon);
	}
	spin_unlock(&tx->lock);
}

/* ---- xmit -------------------------------------------------------------- */

/* The offloads the guest leaves to the host travel in a virtio-net header */
static int vecnet_tx_header(struct vecnet_dev *vn, struct sk_buff *skb,
			    void *hdr)
{
	if (vn->transport->build_header)
		return vn->transport->build_header(vn, skb, hdr);
	return virtio_net_hdr_from_skb(skb, hdr,
				       virtio_legacy_is_little_endian(),
				       false, 0);
}

/*
 * For vecnet_xmit_hdr(), a frame about to be queued: does it go
 * with a header (1) or without (0)?  On a negotiating link that is as
 * agreed with the peer (vn->nego.tx_vnet, vecnet_nego.c).  A frame that still
 * needs an offload on a plain link (the link became plain after the
 * stack's check) is finished here, or, for a super-frame, refused:
 * -EINVAL, and the caller drops it.
 */
static int vecnet_tx_hdr_wanted(struct vecnet_dev *vn, struct sk_buff *skb)
{
	if (!(vn->flags & VECNET_TF_NEGOTIATE))
		return vn->host.tx_hdr_len ? 1 : 0;
	if (vn->nego.tx_vnet)
		return 1;
	if (skb_is_gso(skb))
		return -EINVAL;
	if (skb->ip_summed == CHECKSUM_PARTIAL && skb_checksum_help(skb))
		return -EINVAL;
	return 0;
}

/*
 * With a header or not (0/1), or -1 to drop.
 * A further queue of a negotiating link always has one, and takes
 * frames only while joined.
 */
static int vecnet_xmit_hdr(struct vecnet_queue *q, struct sk_buff *skb)
{
	struct vecnet_dev *vn = q->vn;

	lockdep_assert_held(&q->tx.lock);
	if (!q->index || !(vn->flags & VECNET_TF_NEGOTIATE))
		return vecnet_tx_hdr_wanted(vn, skb);
	return test_bit(q->index, &vn->mq.live) ? 1 : -1;
}

/*
 * How long the ring may wait for more frames
 * before it is sent.  tx-usecs holds every batch that long.  With
 * adaptive-tx on, the hold is tx-usecs, or VECNET_ADAPT_USECS when that
 * is 0, and only a small frame that comes within one hold of the last
 * send waits: a stream of small frames then leaves many to a call, where
 * each would otherwise take one; a large frame, or one after a pause,
 * goes at once.
 */
static u32 vecnet_tx_hold_usecs(struct vecnet_queue *q,
				const struct sk_buff *skb)
{
	struct vecnet_dev *vn = q->vn;
	u32 usecs = READ_ONCE(vn->coal.tx_usecs);

	lockdep_assert_held(&q->tx.lock);
	if (!READ_ONCE(vn->coal.tx_adaptive))
		return usecs;
	usecs = usecs ?: VECNET_ADAPT_USECS;
	if (skb->len > VECNET_ADAPT_SMALL ||
	    ktime_get_ns() - q->last_flush_ns > (u64)usecs * NSEC_PER_USEC)
		return 0;
	return usecs;
}

/* From ndo_start_xmit: takes the frame in every case, queued or dropped */
void vecnet_xmit(struct sk_buff *skb, struct net_device *dev)
{
	struct vecnet_dev *vn = netdev_priv(dev);
	u16 qi = skb_get_queue_mapping(skb);
	struct vecnet_queue *q;
	struct vecnet_txq *tx;
	unsigned int slot;
	int hdr;

	if (unlikely(!netif_carrier_ok(dev))) {
		DEV_STATS_INC(dev, tx_carrier_errors);
		goto drop;
	}
	/* the stack picks among the real queues, which are the open ones */
	q = &vn->q[qi < vn->nq ? qi : 0];
	tx = &q->tx;
	spin_lock(&tx->lock);
	/*
	 * The stack hands frames only while the queue runs, and tx_reserve
	 * keeps room for every piece of a cut super-frame; but a message of
	 * the negotiation may have taken the last slot meanwhile
	 */
	if (unlikely(tx->count == vn->tx_depth)) {
		spin_unlock(&tx->lock);
		goto drop;
	}
	if (skb_shinfo(skb)->nr_frags)
		vecnet_qcount_tx(q, sg_ok);
	slot = (tx->head + tx->count) % vn->tx_depth;
	hdr = vecnet_xmit_hdr(q, skb);
	if (hdr < 0 ||
	    (hdr && vecnet_tx_header(vn, skb,
				     tx->hdrs + slot * vn->host.tx_hdr_len))) {
		spin_unlock(&tx->lock);
		DEV_STATS_INC(dev, tx_errors);
		goto drop;
	}
	/*
	 * A slow peer can keep a frame in the ring for long; it must not
	 * stay charged to the sending socket, or that socket stalls on its
	 * send buffer.  The ring's depth bounds what is held.
	 */
	skb_orphan(skb);
	tx->skbs[slot] = skb;
	vecnet_tx_slot(q, slot, skb, hdr);
	if (tx->chan)
		tx->chan[slot] = vn->chan.n[q->index] && hdr ?
				 vecnet_chan_pick(q, skb) : VECNET_CHAN_NONE;
	tx->count++;
	skb_tx_timestamp(skb);

	if (tx->count + vn->tx_reserve > vn->tx_depth) {
		if (!READ_ONCE(q->tx_blocked))
			vecnet_tx_flush(q);
		vecnet_tx_check_full(q);
	} else if (!netdev_xmit_more() && !READ_ONCE(q->tx_blocked)) {
		u32 usecs = vecnet_tx_hold_usecs(q, skb);

		if (!usecs)
			vecnet_tx_flush(q);
		else if (!hrtimer_is_queued(&q->tx_timer))
			hrtimer_start(&q->tx_timer, ns_to_ktime((u64)usecs * NSEC_PER_USEC),
				      HRTIMER_MODE_REL);
	}
	spin_unlock(&tx->lock);
	return;

drop:
	dev_dstats_tx_dropped(dev);
	dev_kfree_skb_any(skb);
}

/*
 * Cut TCP super-frame @skb into super-frames of whole segments, none
 * longer than @limit bytes from the Ethernet header on, nor than 64 KiB:
 * the core's segmentation, told that a segment is as many of the frame's
 * as fit (in gso_size's 16 bits), and each piece then told its true
 * segment size again.  Anything else (not TCP, a segment that does not
 * fit alone) is cut into segments.
 */
static struct sk_buff *vecnet_tx_cut(struct sk_buff *skb, unsigned int limit)
{
	struct skb_shared_info *sh = skb_shinfo(skb);
	unsigned int mss = sh->gso_size, type = sh->gso_type, k = 1, hlen = 0;
	struct sk_buff *segs, *s;

	limit = min_t(unsigned int, limit, VECNET_GSO_FRAME);
	if (type & (SKB_GSO_TCPV4 | SKB_GSO_TCPV6)) {
		hlen = skb_tcp_all_headers(skb);
		if (hlen + mss <= limit)
			k = (limit - hlen) / mss;
	}
	/* k * mss <= limit - hlen < 65536 */
	sh->gso_size = k * mss;
	segs = skb_gso_segment(skb, NETIF_F_SG | NETIF_F_HW_CSUM);
	sh->gso_size = mss;
	if (IS_ERR_OR_NULL(segs))
		return segs;
	for (s = segs; s && k > 1; s = s->next) {
		if (s->len <= hlen + mss)
			continue;
		skb_shinfo(s)->gso_size = mss;
		skb_shinfo(s)->gso_type = type;
		skb_shinfo(s)->gso_segs = DIV_ROUND_UP(s->len - hlen, mss);
	}
	return segs;
}

/*
 * From ndo_start_xmit: a super-frame beyond 64 KiB (BIG TCP, gso_max=).
 * One for a destination that takes no frame that long (the switch, a
 * peer or a channel's guest that said less, a peer whose host refused
 * one) is cut into super-frames that fit, each queued as a frame of its
 * own; the ring keeps room for them all (tx_reserve).
 */
netdev_tx_t vecnet_xmit_big(struct sk_buff *skb, struct net_device *dev)
{
	struct vecnet_dev *vn = netdev_priv(dev);
	u16 qi = skb_get_queue_mapping(skb);
	struct sk_buff *segs, *next;
	u32 limit;

	/* the channel of the queue it takes (vecnet_select_queue), if any */
	limit = vecnet_chan_dest(vn, qi < vn->nq ? qi : 0, skb);
	if (!limit)
		limit = READ_ONCE(vn->peer.tx_frame);
	if (skb->len <= limit) {
		vecnet_xmit(skb, dev);
		return NETDEV_TX_OK;
	}
	segs = vecnet_tx_cut(skb, limit);
	if (IS_ERR_OR_NULL(segs)) {
		DEV_STATS_INC(dev, tx_errors);
		dev_dstats_tx_dropped(dev);
		dev_kfree_skb_any(skb);
		return NETDEV_TX_OK;
	}
	consume_skb(skb);
	skb_list_walk_safe(segs, skb, next) {
		skb_mark_not_on_list(skb);
		vecnet_xmit(skb, dev);
	}
	return NETDEV_TX_OK;
}

/*
 * Process context, as the device comes up: super-frames beyond 64 KiB
 * (gso_max=) want a ring with room for the pieces of one cut for a
 * destination that takes shorter ones, or the device goes without.  The
 * stack builds them once the user raises gso_max_size and
 * gso_ipv4_max_size (ip link); tso_max_size is the most it may.
 */
void vecnet_tx_big_setup(struct vecnet_dev *vn)
{
	u32 big = vn->nego.gso_max;
	unsigned int pieces = 1;

	if (big > GSO_LEGACY_MAX_SIZE) {
		pieces = DIV_ROUND_UP(big + ETH_HLEN + VLAN_HLEN,
				      VECNET_CUT_MIN) + 1;
		if (vn->tx_depth < 4 * pieces) {
			netdev_info(vn->dev, "gso_max=%u needs a transmit ring of %u or more: 65536 with %u\n",
				    big, 4 * pieces, vn->tx_depth);
			pieces = 1;
		}
	}
	if (pieces == 1)
		big = GSO_LEGACY_MAX_SIZE;
	vn->tx_reserve = pieces;
	netif_set_tso_max_size(vn->dev, big);
}

/* By flow (XPS where it is set, else the skb hash) over the live queues */
static u16 vecnet_flow_queue(struct net_device *dev, struct sk_buff *skb,
			     struct net_device *sb_dev, unsigned long live)
{
	unsigned int n, k, i;

	if (live == GENMASK(dev->real_num_tx_queues - 1, 0))
		return netdev_pick_tx(dev, skb, sb_dev);
	n = hweight_long(live);
	k = reciprocal_scale(skb_get_hash(skb), n);
	for_each_set_bit(i, &live, VECNET_QUEUES_MAX)
		if (!k--)
			return i;
	return 0;
}

/*
 * Which queue a frame goes out on: by flow over the queues that take
 * frames now.  A frame for a shortcut channel stays there when that
 * queue has a channel to its destination (a channel per queue), and
 * else takes queue 0, when only queue 0 has one.
 */
u16 vecnet_select_queue(struct net_device *dev, struct sk_buff *skb,
			struct net_device *sb_dev)
{
	struct vecnet_dev *vn = netdev_priv(dev);
	unsigned long live = READ_ONCE(vn->mq.live);
	u16 k;

	if (dev->real_num_tx_queues == 1 || live == BIT(0))
		return 0;
	k = vecnet_flow_queue(dev, skb, sb_dev, live);
	if (k && !vecnet_chan_dest(vn, k, skb) && vecnet_chan_dest(vn, 0, skb))
		return 0;
	return k;
}
