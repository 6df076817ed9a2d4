// SPDX-License-Identifier: GPL-2.0
/*
 * vecnet: vector network devices for User Mode Linux, the core.
 *
 * A device owns one host descriptor (through its transport), a receive
 * ring and a transmit ring of @depth entries each.  Receive runs in NAPI
 * and fetches a batch per host call; transmit queues frames in the ring
 * and sends a batch per host call, stopping the queue when the ring is
 * full and waiting for the host (write interrupt or retry timer) instead
 * of dropping.  The carrier follows the peer's presence.
 */

#include <linux/fault-inject.h>
#include <linux/init.h>
#include <linux/memblock.h>
#include <linux/mutex.h>
#include <linux/rtnetlink.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/virtio_net.h>
#include <init.h>
#include <irq_kern.h>
#include <os.h>
#include "vecnet.h"
#include "vecnet_user.h"

/* Retry timer for a sender the host cannot wake: 50 us up to 5 ms */
#define VECNET_RETRY_MIN_NS	(50 * NSEC_PER_USEC)
#define VECNET_RETRY_MAX_NS	(5 * NSEC_PER_MSEC)
/* adaptive-tx: frames of at most this many bytes are held... */
#define VECNET_ADAPT_SMALL	256
/* ...this long when tx-usecs is 0 */
#define VECNET_ADAPT_USECS	50
/* Reconnect attempts: 50 ms backing off to the once-a-second check */
#define VECNET_LINK_MIN_MS	50
#define VECNET_LINK_CHECK_MS	1000
/* how long an announcement waits for the link watch: 50 x 20 ms */
#define VECNET_ANNOUNCE_WAITS	50
#define VECNET_ANNOUNCE_WAIT_MS	20
#define VECNET_EINTR_TRIES	4

static LIST_HEAD(vecnet_devices);
static DEFINE_MUTEX(vecnet_devices_lock);

/* ---- counters ----------------------------------------------------------- */

#define VECNET_XSTAT(m) { #m, offsetof(struct vecnet_xstats, m) }

const struct vecnet_stat_desc vecnet_xstats_desc[] = {
	VECNET_XSTAT(rx_queue_max),
	VECNET_XSTAT(rx_queue_running_average),
	VECNET_XSTAT(tx_queue_max),
	VECNET_XSTAT(tx_queue_running_average),
	VECNET_XSTAT(rx_encaps_errors),
	VECNET_XSTAT(tx_timeout_count),
	VECNET_XSTAT(tx_restart_queue),
	VECNET_XSTAT(tx_kicks),
	VECNET_XSTAT(tx_flow_control_xon),
	VECNET_XSTAT(tx_flow_control_xoff),
	VECNET_XSTAT(rx_csum_offload_good),
	VECNET_XSTAT(sg_ok),
	VECNET_XSTAT(rx_kicks),
	VECNET_XSTAT(rx_truncated),
	VECNET_XSTAT(rx_transient_errors),
	VECNET_XSTAT(tx_eagain),
	VECNET_XSTAT(tx_enobufs),
	VECNET_XSTAT(tx_eintr),
	VECNET_XSTAT(tx_write_wakeups),
	VECNET_XSTAT(tx_retry_timer),
	VECNET_XSTAT(tx_coalesce_timer),
	VECNET_XSTAT(peer_lost),
	VECNET_XSTAT(peer_back),
	VECNET_XSTAT(rx_alloc_failed),
	VECNET_XSTAT(nego_hello),
	VECNET_XSTAT(nego_agreed),
	VECNET_XSTAT(rx_nego_bad),
	VECNET_XSTAT(chan_opened),
	VECNET_XSTAT(chan_closed),
	VECNET_XSTAT(chan_refused),
	VECNET_XSTAT(tx_chan_frames),
	VECNET_XSTAT(rx_chan_frames),
	VECNET_XSTAT(rx_chan_bad),
	VECNET_XSTAT(chan_stalled),
	VECNET_XSTAT(mq_joined),
	VECNET_XSTAT(rx_fds_dropped),
};

const unsigned int vecnet_xstats_count = ARRAY_SIZE(vecnet_xstats_desc);

void vecnet_xstats_add_n(struct vecnet_queue *q, enum vecnet_xstats_ctx ctx,
			 size_t off, u64 n)
{
	struct vecnet_xstats *xs = &q->xstats[ctx];

	u64_stats_update_begin(&xs->syncp);
	u64_stats_add((u64_stats_t *)((u8 *)xs + off), n);
	u64_stats_update_end(&xs->syncp);
}

void vecnet_xstats_add_tx(struct vecnet_queue *q, size_t off)
{
	lockdep_assert_held(&q->tx.lock);
	vecnet_xstats_add_n(q, VECNET_XS_TX, off, 1);
}

static void vecnet_qstats_add(struct vecnet_qstats *qs, unsigned int len)
{
	u64_stats_update_begin(&qs->syncp);
	u64_stats_inc(&qs->packets);
	u64_stats_add(&qs->bytes, len);
	u64_stats_update_end(&qs->syncp);
}

/* The largest batch seen and a running average (weight 1/8) */
static void vecnet_queue_sample(struct vecnet_xstats *xs, u64_stats_t *max,
				u64_stats_t *avg, unsigned int n)
{
	u64 a;

	u64_stats_update_begin(&xs->syncp);
	if (n > u64_stats_read(max))
		u64_stats_set(max, n);
	a = u64_stats_read(avg);
	u64_stats_set(avg, a - (a >> 3) + (n >> 3));
	u64_stats_update_end(&xs->syncp);
}

static void vecnet_qkick(struct vecnet_queue *q)
{
	napi_schedule(&q->napi);
}

/* Every queue polls: a change of the peer or the link concerns them all */
static void vecnet_kick(struct vecnet_dev *vn)
{
	unsigned int i;

	for (i = 0; i < vn->nq; i++)
		vecnet_qkick(&vn->q[i]);
}

/* Queue 0's descriptors are the transport's vn->fd and vn->tx_fd */
static int vecnet_q_fd(const struct vecnet_queue *q)
{
	return q->index ? q->fd : q->vn->fd;
}

/* ---- host I/O ----------------------------------------------------------- */

static int vecnet_recv_batch(struct vecnet_queue *q, int fd, unsigned int n)
{
	if (q->vn->flags & VECNET_TF_CHARDEV)
		return vecnet_user_readv_batch(fd, q->rx.msgs, n);
	return vecnet_user_recvmmsg(fd, q->rx.msgs, n, !!q->rx.cmsgs);
}

static int vecnet_tx_fd(const struct vecnet_queue *q)
{
	if (!q->index && q->vn->tx_fd >= 0)
		return q->vn->tx_fd;
	return vecnet_q_fd(q);
}

static int vecnet_send_batch(struct vecnet_queue *q, u8 chan,
			     unsigned int first, unsigned int n)
{
	struct vecnet_dev *vn = q->vn;

	if (vn->flags & (VECNET_TF_CHARDEV | VECNET_TF_TX_CHARDEV))
		return vecnet_user_writev_batch(vecnet_tx_fd(q),
						&q->tx.msgs[first], n);
	if (chan != VECNET_CHAN_NONE)
		return vecnet_user_sendmmsg(vn->chan[chan].fd,
					    &q->tx.msgs[first], n);
	return vecnet_user_sendmmsg(vecnet_q_fd(q), &q->tx.msgs[first], n);
}

/* ---- receive ------------------------------------------------------------ */

static bool vecnet_peer_gone(const struct vecnet_dev *vn, int err)
{
	switch (err) {
	case -ECONNREFUSED:	/* the peer's socket closed */
	case -ENOTCONN:		/* after the host dissolved our connection */
	case -EDESTADDRREQ:
	case -ENOENT:		/* nothing at the path */
	case -EPERM:		/* the peer is connected to someone else */
		return true;
	case -EPIPE:		/* a connection (bess, fd) the peer closed */
	case -ECONNRESET:
		/* on a datagram socket: frames were lost, the peer is there */
		return vn->conn;
	}
	return false;
}

/* A connection ended under receive (end of file, or a reset) */
static void vecnet_rx_peer_lost(struct vecnet_dev *vn)
{
	spin_lock(&vn->q[0].tx.lock);
	vecnet_peer_lost(vn);
	spin_unlock(&vn->q[0].tx.lock);
}

/*
 * Receive buffers that fail to allocate on request, to show the driver
 * under memory pressure: the fault-injection attribute fail_vecnet_rx in
 * debugfs (probability, interval, times, ...), or at boot
 * fail_vecnet_rx=<interval>,<probability>,<space>,<times>.  Only the
 * receive path asks; bringing a device up never fails this way.
 */
#ifdef CONFIG_FAULT_INJECTION
static DECLARE_FAULT_ATTR(vecnet_fail_rx);

static int __init vecnet_fail_rx_setup(char *str)
{
	return setup_fault_attr(&vecnet_fail_rx, str);
}
__setup("fail_vecnet_rx=", vecnet_fail_rx_setup);

static bool vecnet_rx_alloc_fails(void)
{
	return should_fail(&vecnet_fail_rx, 1);
}
#else
static bool vecnet_rx_alloc_fails(void)
{
	return false;
}
#endif

static struct sk_buff *vecnet_rx_skb(struct vecnet_queue *q, bool in_napi)
{
	struct vecnet_dev *vn = q->vn;
	unsigned int len = vn->cfg.headroom + q->rx.buf_len;
	struct sk_buff *skb;

	if (in_napi && vecnet_rx_alloc_fails())
		return NULL;
	skb = in_napi ? napi_alloc_skb(&q->napi, len) :
			netdev_alloc_skb(vn->dev, len);
	if (skb)
		skb_reserve(skb, vn->cfg.headroom);
	return skb;
}

/*
 * A frame from a super-frame sized buffer (64 KiB), copied into an skb
 * of its own size: the headers in the linear part, the rest in pages.
 * Handing the buffer itself up would charge every socket that queues
 * the frame 64 KiB whatever its length, which shrinks TCP's receive
 * window, and take a large allocation per frame to refill the ring.
 */
static struct sk_buff *vecnet_rx_copy(struct vecnet_queue *q, const u8 *data,
				      unsigned int len)
{
	struct vecnet_dev *vn = q->vn;
	unsigned int head = len <= VECNET_RX_SWAP_MAX ? len : VECNET_RX_HEAD;
	unsigned int off, f = 0;
	struct sk_buff *skb;

	if (vecnet_rx_alloc_fails())
		return NULL;
	skb = napi_alloc_skb(&q->napi, vn->cfg.headroom + head);
	if (!skb)
		return NULL;
	skb_reserve(skb, vn->cfg.headroom);
	skb_put_data(skb, data, head);
	for (off = head; off < len; f++) {
		unsigned int chunk = min_t(unsigned int, len - off, PAGE_SIZE);
		struct page *page = dev_alloc_page();

		if (!page || f == MAX_SKB_FRAGS) {
			if (page)
				__free_page(page);
			dev_kfree_skb_any(skb);
			return NULL;
		}
		memcpy(page_address(page), data + off, chunk);
		skb_add_rx_frag(skb, f, page, 0, chunk, PAGE_SIZE);
		off += chunk;
	}
	return skb;
}

/* Point slot @i at its buffers again; the host rewrote namelen and flags */
static void vecnet_rx_slot(struct vecnet_queue *q, unsigned int i)
{
	const struct vecnet_dev *vn = q->vn;
	struct user_msghdr *h = &q->rx.msgs[i].msg_hdr;
	struct iovec *iov = &q->rx.iov[i * 2];
	struct vecnet_rxq *rx = &q->rx;
	unsigned int n = 0;

	if (vn->rx_hdr_len) {
		iov[n].iov_base = (void __force __user *)(rx->hdrs +
							  i * vn->rx_hdr_len);
		iov[n++].iov_len = vn->rx_hdr_len;
	}
	iov[n].iov_base = (void __force __user *)rx->skbs[i]->data;
	iov[n++].iov_len = rx->buf_len;

	h->msg_iov = (struct iovec __force __user *)iov;
	h->msg_iovlen = n;
	h->msg_name = rx->names ?
		(void __force __user *)(rx->names + i * vn->name_len) : NULL;
	h->msg_namelen = vn->name_len;
	/* a descriptor may come along (a channel), or be forced on us */
	h->msg_control = rx->cmsgs ?
		(void __force __user *)(rx->cmsgs + i * VECNET_CMSG_LEN) : NULL;
	h->msg_controllen = rx->cmsgs ? VECNET_CMSG_LEN : 0;
	h->msg_flags = 0;
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

static void vecnet_rx_drop(struct vecnet_queue *q, unsigned int i)
{
	dev_dstats_rx_dropped(q->vn->dev);
	vecnet_rx_slot(q, i);
}

/*
 * A negotiating link: a datagram shorter than a frame may be a message
 * of the negotiation; one from a peer that agreed to headers has its
 * header in front of the frame.  Returns the header's length, or -1 when
 * the datagram was taken.
 */
static int vecnet_rx_nego(struct vecnet_queue *q, unsigned int i,
			  unsigned int len, struct virtio_net_hdr *vh)
{
	const u8 *data = q->rx.skbs[i]->data;

	if (unlikely(len < ETH_HLEN) && vecnet_nego_rx(q->vn, data, len)) {
		vecnet_rx_slot(q, i);
		return -1;
	}
	if (!READ_ONCE(q->vn->rx_vnet))
		return 0;
	if (len >= sizeof(*vh))
		memcpy(vh, data, sizeof(*vh));
	return sizeof(*vh);
}

/*
 * A further queue of a negotiating link carries a header on every frame;
 * its only other datagram is the switch's answer to its JOIN.  Returns
 * the header's length, or -1 when the datagram was taken.
 */
static int vecnet_rx_mq(struct vecnet_queue *q, unsigned int i,
			unsigned int len, struct virtio_net_hdr *vh)
{
	const u8 *data = q->rx.skbs[i]->data;

	if (unlikely(len < sizeof(*vh) + ETH_HLEN)) {
		if (vecnet_nego_join_ack(q, data, len)) {
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
 * the address the channel is for.  Returns the header's length, or -1
 * when the frame was dropped.
 */
static int vecnet_rx_chan(struct vecnet_queue *q, const struct vecnet_chan *c,
			  unsigned int i, unsigned int len,
			  struct virtio_net_hdr *vh)
{
	const u8 *data = q->rx.skbs[i]->data;

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
				const struct vecnet_chan *c, unsigned int i,
				unsigned int len, struct virtio_net_hdr *vh)
{
	if (c)
		return vecnet_rx_chan(q, c, i, len, vh);
	if (q->index)
		return vecnet_rx_mq(q, i, len, vh);
	return vecnet_rx_nego(q, i, len, vh);
}

static void vecnet_rx_frame(struct vecnet_queue *q, const struct vecnet_chan *c,
			    unsigned int i)
{
	struct user_msghdr *h = &q->rx.msgs[i].msg_hdr;
	unsigned int len = q->rx.msgs[i].msg_len;
	const struct virtio_net_hdr *vh = NULL;
	struct vecnet_dev *vn = q->vn;
	struct net_device *dev = vn->dev;
	struct vecnet_rxq *rx = &q->rx;
	struct virtio_net_hdr inline_hdr;
	struct sk_buff *skb, *fresh;
	int extra = 0;

	if (unlikely(h->msg_flags & MSG_TRUNC)) {
		vecnet_qcount_napi(q, rx_truncated);
		DEV_STATS_INC(dev, rx_length_errors);
		vecnet_rx_drop(q, i);
		return;
	}
	if (vn->flags & VECNET_TF_VNET_HDR)
		vh = (const void *)(rx->hdrs + i * vn->rx_hdr_len);
	if (c || (vn->flags & VECNET_TF_NEGOTIATE)) {
		extra = vecnet_rx_inline_hdr(q, c, i, len, &inline_hdr);
		if (extra < 0)
			return;
		if (extra)
			vh = &inline_hdr;
	}
	if (unlikely(len < vn->rx_hdr_len + extra + ETH_HLEN)) {
		DEV_STATS_INC(dev, rx_length_errors);
		vecnet_rx_drop(q, i);
		return;
	}
	if (vn->transport->verify_header) {
		extra = vn->transport->verify_header(vn,
						     rx->hdrs + i * vn->rx_hdr_len,
						     rx->skbs[i]->data, len,
						     rx->names ?
						     rx->names + i * vn->name_len :
						     NULL);
		if (extra < 0 || len < vn->rx_hdr_len + extra + ETH_HLEN) {
			vecnet_qcount_napi(q, rx_encaps_errors);
			vecnet_rx_drop(q, i);
			return;
		}
	}

	len -= vn->rx_hdr_len;
	if (rx->buf_len > VECNET_RX_SWAP_MAX) {
		/* A super-frame buffer stays in the ring; the frame is copied */
		skb = vecnet_rx_copy(q, rx->skbs[i]->data + extra, len - extra);
		vecnet_rx_slot(q, i);
		if (unlikely(!skb)) {
			vecnet_qcount_napi(q, rx_alloc_failed);
			dev_dstats_rx_dropped(dev);
			return;
		}
		len -= extra;
	} else {
		/* Refill first: without a fresh buffer the frame is dropped */
		fresh = vecnet_rx_skb(q, true);
		if (unlikely(!fresh)) {
			vecnet_qcount_napi(q, rx_alloc_failed);
			vecnet_rx_drop(q, i);
			return;
		}
		skb = rx->skbs[i];
		rx->skbs[i] = fresh;
		vecnet_rx_slot(q, i);
		skb_put(skb, len);
		if (extra) {
			__skb_pull(skb, extra);
			len -= extra;
		}
	}
	if (vh && vecnet_rx_vnet_hdr(q, skb, vh)) {
		dev_kfree_skb_any(skb);
		dev_dstats_rx_dropped(dev);
		return;
	}
	skb->protocol = eth_type_trans(skb, dev);
	skb_record_rx_queue(skb, q->index);
	dev_dstats_rx_add(dev, len);
	vecnet_qstats_add(&q->rx_stats, len);
	napi_gro_receive(&q->napi, skb);
}

/* Descriptors that came with datagram @i: a channel's, or unwanted */
static void vecnet_rx_one(struct vecnet_queue *q, const struct vecnet_chan *c,
			  unsigned int i)
{
	struct vecnet_dev *vn = q->vn;
	unsigned int dropped = 0;

	/* only queue 0 has room for them: the switch hands channels there */
	if (q->index || likely(!q->rx.msgs[i].msg_hdr.msg_controllen)) {
		vecnet_rx_frame(q, c, i);
		return;
	}
	vn->rx_fd_in = vecnet_user_msg_fd(&q->rx.msgs[i], &dropped);
	if (unlikely(dropped))
		vecnet_xstats_add_n(q, VECNET_XS_NAPI,
				    vecnet_xs_off(rx_fds_dropped), dropped);
	/* a CHAN message from the switch takes it (vecnet_nego_rx) */
	vecnet_rx_frame(q, c, i);
	if (unlikely(vn->rx_fd_in >= 0)) {
		vecnet_chan_drop_fd(vn, vn->rx_fd_in);
		vn->rx_fd_in = -1;
	}
}

/* Receive from @fd, the queue's or channel @c's, up to @budget frames */
static int vecnet_rx_fd(struct vecnet_queue *q, int fd,
			const struct vecnet_chan *c, int budget)
{
	struct vecnet_xstats *xs = &q->xstats[VECNET_XS_NAPI];
	struct vecnet_dev *vn = q->vn;
	bool eof = false;
	int done = 0;

	while (done < budget) {
		unsigned int want = min_t(unsigned int, budget - done,
					  vn->batch);
		int ret, i;

		ret = vecnet_recv_batch(q, fd, want);
		vecnet_qcount_napi(q, rx_kicks);
		if (ret == -EAGAIN || ret == 0)
			break;
		if (vn->conn && !c && vecnet_peer_gone(vn, ret)) {
			vecnet_rx_peer_lost(vn);
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
			if (unlikely(!q->rx.msgs[i].msg_len && vn->conn)) {
				vecnet_rx_slot(q, i);
				eof = true;
				continue;
			}
			vecnet_rx_one(q, c, i);
		}
		done += ret;
		if (unlikely(eof)) {
			vecnet_rx_peer_lost(vn);
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

static int vecnet_rx(struct vecnet_queue *q, int budget)
{
	int done = vecnet_rx_fd(q, vecnet_q_fd(q), NULL, budget);
	struct vecnet_dev *vn = q->vn;
	unsigned int i;

	/* the channels are queue 0's */
	if (!vn->chan_want || q->index)
		return done;
	/* vecnet_chan.c closes a channel only after a grace period */
	rcu_read_lock();
	for (i = 0; i < VECNET_CHAN_MAX && done < budget; i++) {
		const struct vecnet_chan *c = &vn->chan[i];

		/* pairs with the release in vecnet_chan_work(): fd is set */
		if (smp_load_acquire(&c->state) == VECNET_CHAN_ACTIVE)
			done += vecnet_rx_fd(q, c->fd, c, budget - done);
	}
	rcu_read_unlock();
	return done;
}

/* ---- transmit ----------------------------------------------------------- */

static struct netdev_queue *vecnet_txq(const struct vecnet_queue *q)
{
	return netdev_get_tx_queue(q->vn->dev, q->index);
}

static void vecnet_tx_slot(struct vecnet_queue *q, unsigned int slot,
			   struct sk_buff *skb, bool hdr)
{
	struct iovec *iov = &q->tx.iov[slot * VECNET_TX_IOV];
	struct user_msghdr *h = &q->tx.msgs[slot].msg_hdr;
	struct vecnet_dev *vn = q->vn;
	unsigned int n = 0, f;

	if (hdr) {
		iov[n].iov_base = (void __force __user *)(q->tx.hdrs +
							  slot * vn->tx_hdr_len);
		iov[n++].iov_len = vn->tx_hdr_len;
	}
	iov[n].iov_base = (void __force __user *)skb->data;
	iov[n++].iov_len = skb_headlen(skb);
	for (f = 0; f < skb_shinfo(skb)->nr_frags; f++) {
		skb_frag_t *frag = &skb_shinfo(skb)->frags[f];

		iov[n].iov_base = (void __force __user *)skb_frag_address(frag);
		iov[n++].iov_len = skb_frag_size(frag);
	}

	h->msg_name = (void __force __user *)vn->tx_addr;
	h->msg_namelen = vn->tx_addr_len;
	h->msg_iov = (struct iovec __force __user *)iov;
	h->msg_iovlen = n;
	h->msg_control = NULL;
	h->msg_controllen = 0;
	h->msg_flags = 0;
}

static void vecnet_tx_pop(struct vecnet_queue *q, bool sent)
{
	struct vecnet_txq *tx = &q->tx;
	struct sk_buff *skb = tx->skbs[tx->head];
	struct net_device *dev = q->vn->dev;

	tx->skbs[tx->head] = NULL;
	if (tx->chan)
		tx->chan[tx->head] = VECNET_CHAN_NONE;
	tx->head = (tx->head + 1) % q->vn->depth;
	tx->count--;
	/* the driver's own messages (no device: not from the stack) */
	if (unlikely(!skb->dev)) {
		dev_kfree_skb_any(skb);
		return;
	}
	if (sent) {
		dev_dstats_tx_add(dev, skb->len);
		vecnet_qstats_add(&q->tx_stats, skb->len);
		dev_consume_skb_any(skb);
	} else {
		dev_dstats_tx_dropped(dev);
		dev_kfree_skb_any(skb);
	}
}

/* Called with the queue's tx.lock held */
static void vecnet_tx_drop_all(struct vecnet_queue *q)
{
	while (q->tx.count) {
		DEV_STATS_INC(q->vn->dev, tx_carrier_errors);
		vecnet_tx_pop(q, false);
	}
	/* A stopped queue would stay stopped when the carrier returns */
	if (netif_tx_queue_stopped(vecnet_txq(q)))
		netif_tx_wake_queue(vecnet_txq(q));
	WRITE_ONCE(q->tx_blocked, false);
}

/*
 * Called with queue 0's tx.lock held: run @fn on every further queue,
 * under its own tx.lock, which nests inside queue 0's
 */
static void vecnet_for_further_queues(struct vecnet_dev *vn,
				      void (*fn)(struct vecnet_queue *q))
{
	unsigned int i;

	lockdep_assert_held(&vn->q[0].tx.lock);
	for (i = 1; i < vn->nq; i++) {
		struct vecnet_queue *q = &vn->q[i];

		spin_lock_nested(&q->tx.lock, SINGLE_DEPTH_NESTING);
		fn(q);
		spin_unlock(&q->tx.lock);
	}
}

/* Called with tx.lock held: the queue takes frames again, or not */
static void vecnet_q_live(struct vecnet_queue *q, bool live)
{
	struct vecnet_dev *vn = q->vn;

	if (live)
		set_bit(q->index, &vn->live);
	else
		clear_bit(q->index, &vn->live);
}

static void vecnet_q_unjoin(struct vecnet_queue *q)
{
	/* further unixdgram queues wait to be joined again */
	if (q->vn->flags & VECNET_TF_NEGOTIATE) {
		vecnet_q_live(q, false);
		q->vn->mq_cookie_ok = false;
	}
	vecnet_tx_drop_all(q);
}

/* Called with queue 0's tx.lock held, from xmit, NAPI or the link work */
void vecnet_peer_lost(struct vecnet_dev *vn)
{
	struct vecnet_queue *q0 = &vn->q[0];

	if (vn->chan_want)
		vecnet_chan_kill_all(vn);
	vecnet_tx_drop_all(q0);
	vecnet_for_further_queues(vn, vecnet_q_unjoin);
	/* whoever answers next is asked for headers anew */
	vn->nego_tries = 0;
	if (!netif_carrier_ok(vn->dev))
		return;
	netif_carrier_off(vn->dev);
	vecnet_count_tx(vn, peer_lost);
	netdev_info(vn->dev, "peer gone, carrier off\n");
	/* without a carrier, the link check runs on its own schedule */
	if (vn->transport->probe_peer)
		mod_delayed_work(system_wq, &vn->link_work,
				 msecs_to_jiffies(vn->link_backoff_ms));
}

/* Called with queue 0's tx.lock held: queue @q takes frames from now on */
void vecnet_mq_join(struct vecnet_queue *q)
{
	lockdep_assert_held(&q->vn->q[0].tx.lock);
	spin_lock_nested(&q->tx.lock, SINGLE_DEPTH_NESTING);
	vecnet_q_live(q, true);
	spin_unlock(&q->tx.lock);
}

/* Called with queue 0's tx.lock held: the further queues wait again */
void vecnet_mq_unjoin_all(struct vecnet_dev *vn)
{
	vecnet_for_further_queues(vn, vecnet_q_unjoin);
}

static void vecnet_tx_wait(struct vecnet_queue *q)
{
	hrtimer_start(&q->retry_timer, ns_to_ktime(q->retry_ns),
		      HRTIMER_MODE_REL);
	q->retry_ns = min_t(u64, q->retry_ns * 2, VECNET_RETRY_MAX_NS);
}

/*
 * A further queue found the peer gone: it drops what it holds, and the
 * link work, which may take queue 0's lock, says so for the device
 */
static void vecnet_q_peer_gone(struct vecnet_queue *q)
{
	struct vecnet_dev *vn = q->vn;

	vecnet_tx_drop_all(q);
	if (vn->transport->probe_peer)
		mod_delayed_work(system_wq, &vn->link_work, 0);
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

	if (READ_ONCE(vn->tx_adaptive))
		q->last_flush_ns = ktime_get_ns();
	while (tx->count) {
		unsigned int n = min(tx->count, vn->depth - tx->head);
		u8 chan = VECNET_CHAN_NONE;
		int ret, i;

		if (!vn->cfg.vec)
			n = 1;
		/* one call sends to one descriptor: a run of the same */
		if (tx->chan) {
			chan = tx->chan[tx->head];
			for (i = 1; i < n; i++)
				if (tx->chan[(tx->head + i) % vn->depth] != chan)
					break;
			n = i;
		}
		ret = vecnet_send_batch(q, chan, tx->head, n);
		vecnet_qcount_tx(q, tx_kicks);
		if (ret > 0) {
			vecnet_queue_sample(xs, &xs->tx_queue_max,
					    &xs->tx_queue_running_average,
					    ret);
			if (chan != VECNET_CHAN_NONE) {
				vecnet_chan_sent(vn, chan);
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
			vn->link_backoff_ms = VECNET_LINK_MIN_MS;
			continue;
		}
		/* the channel's frames go to the switch instead */
		if (chan != VECNET_CHAN_NONE &&
		    vecnet_chan_send_failed(vn, chan, ret))
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
				vecnet_q_peer_gone(q);
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

/* Called with queue 0's tx.lock held: send now, unless the host said "later" */
void vecnet_tx_kick_flush(struct vecnet_dev *vn)
{
	struct vecnet_queue *q = &vn->q[0];

	if (q->tx.count && !READ_ONCE(q->tx_blocked))
		vecnet_tx_flush(q);
}

/* Called with tx.lock held: a full ring stops the queue */
static void vecnet_tx_check_full(struct vecnet_queue *q)
{
	struct netdev_queue *txq = vecnet_txq(q);

	if (q->tx.count == q->vn->depth && !netif_tx_queue_stopped(txq)) {
		netif_tx_stop_queue(txq);
		vecnet_qcount_tx(q, tx_flow_control_xoff);
	}
}

/*
 * Called with queue 0's tx.lock held: queue a datagram of the driver's
 * own (a negotiation message), as it is, behind what the ring holds.
 * The ring has room: the caller checked.  Its skb has no device, which
 * keeps it out of the device's packet counters.
 */
void vecnet_tx_queue_raw(struct vecnet_dev *vn, struct sk_buff *skb)
{
	struct vecnet_queue *q = &vn->q[0];
	struct vecnet_txq *tx = &q->tx;
	unsigned int slot = (tx->head + tx->count) % vn->depth;

	tx->skbs[slot] = skb;
	vecnet_tx_slot(q, slot, skb, false);
	tx->count++;
	/* xmit counts on a free slot while the queue runs */
	vecnet_tx_check_full(q);
}

/* Called with queue 0's tx.lock held: frames queued in a format the peer left */
void vecnet_tx_drop_queued(struct vecnet_dev *vn)
{
	struct vecnet_queue *q = &vn->q[0];

	while (q->tx.count)
		vecnet_tx_pop(q, false);
	if (netif_tx_queue_stopped(vecnet_txq(q)) && netif_carrier_ok(vn->dev))
		netif_tx_wake_queue(vecnet_txq(q));
}

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
 * Called with tx.lock held: with a header or not (0/1), or -1 to drop.
 * A further queue of a negotiating link always has one, and takes
 * frames only while joined.
 */
static int vecnet_xmit_hdr(struct vecnet_queue *q, struct sk_buff *skb)
{
	struct vecnet_dev *vn = q->vn;

	if (!q->index || !(vn->flags & VECNET_TF_NEGOTIATE))
		return vecnet_nego_tx_hdr(vn, skb);
	return test_bit(q->index, &vn->live) ? 1 : -1;
}

/*
 * Called with tx.lock held: how long the ring may wait for more frames
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
	u32 usecs = READ_ONCE(vn->tx_usecs);

	if (!READ_ONCE(vn->tx_adaptive))
		return usecs;
	usecs = usecs ?: VECNET_ADAPT_USECS;
	if (skb->len > VECNET_ADAPT_SMALL ||
	    ktime_get_ns() - q->last_flush_ns > (u64)usecs * NSEC_PER_USEC)
		return 0;
	return usecs;
}

static netdev_tx_t vecnet_xmit(struct sk_buff *skb, struct net_device *dev)
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
	if (skb_shinfo(skb)->nr_frags)
		vecnet_qcount_tx(q, sg_ok);
	slot = (tx->head + tx->count) % vn->depth;
	hdr = vecnet_xmit_hdr(q, skb);
	if (hdr < 0 || (hdr &&
			vecnet_tx_header(vn, skb, tx->hdrs + slot * vn->tx_hdr_len))) {
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
		tx->chan[slot] = vn->nchan && hdr ? vecnet_chan_pick(vn, skb) :
						    VECNET_CHAN_NONE;
	tx->count++;
	skb_tx_timestamp(skb);

	if (tx->count == vn->depth) {
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
	return NETDEV_TX_OK;

drop:
	dev_dstats_tx_dropped(dev);
	dev_kfree_skb_any(skb);
	return NETDEV_TX_OK;
}

/*
 * Which queue a frame goes out on.  A frame for a shortcut channel takes
 * queue 0, which holds the channels; the others go by flow (XPS where it
 * is set, else the skb hash) over the queues that take frames now.
 */
static u16 vecnet_select_queue(struct net_device *dev, struct sk_buff *skb,
			       struct net_device *sb_dev)
{
	struct vecnet_dev *vn = netdev_priv(dev);
	unsigned long live = READ_ONCE(vn->live);
	unsigned int n, k, i;

	if (dev->real_num_tx_queues == 1 || live == BIT(0))
		return 0;
	if (READ_ONCE(vn->nchan) && vecnet_chan_dest(vn, skb))
		return 0;
	if (live == GENMASK(dev->real_num_tx_queues - 1, 0))
		return netdev_pick_tx(dev, skb, sb_dev);
	n = hweight_long(live);
	k = reciprocal_scale(skb_get_hash(skb), n);
	for_each_set_bit(i, &live, VECNET_QUEUES_MAX)
		if (!k--)
			return i;
	return 0;
}

/* ---- interrupts, timers, NAPI -------------------------------------------- */

enum {
	VECNET_EV_WRITE,
	VECNET_EV_RETRY,
	VECNET_EV_COALESCE,
	VECNET_EV_TIMEOUT,
};

static irqreturn_t vecnet_rx_interrupt(int irq, void *data)
{
	vecnet_qkick(data);
	return IRQ_HANDLED;
}

/* The host has room again; only of interest while a send waits for it */
static irqreturn_t vecnet_tx_interrupt(int irq, void *data)
{
	struct vecnet_queue *q = data;

	if (READ_ONCE(q->tx_blocked)) {
		set_bit(VECNET_EV_WRITE, &q->events);
		vecnet_qkick(q);
	}
	return IRQ_HANDLED;
}

static enum hrtimer_restart vecnet_tx_timer_fn(struct hrtimer *t)
{
	struct vecnet_queue *q = container_of(t, struct vecnet_queue, tx_timer);

	set_bit(VECNET_EV_COALESCE, &q->events);
	vecnet_qkick(q);
	return HRTIMER_NORESTART;
}

static enum hrtimer_restart vecnet_retry_timer_fn(struct hrtimer *t)
{
	struct vecnet_queue *q = container_of(t, struct vecnet_queue,
					      retry_timer);

	set_bit(VECNET_EV_RETRY, &q->events);
	vecnet_qkick(q);
	return HRTIMER_NORESTART;
}

static void vecnet_tx_timeout(struct net_device *dev, unsigned int txqueue)
{
	struct vecnet_dev *vn = netdev_priv(dev);
	struct vecnet_queue *q = &vn->q[txqueue < vn->nq ? txqueue : 0];

	set_bit(VECNET_EV_TIMEOUT, &q->events);
	vecnet_qkick(q);
}

/* Timer and interrupt events are counted here, outside hard IRQ context */
static void vecnet_count_events(struct vecnet_queue *q, unsigned long ev)
{
	if (ev & BIT(VECNET_EV_WRITE))
		vecnet_qcount_napi(q, tx_write_wakeups);
	if (ev & BIT(VECNET_EV_RETRY))
		vecnet_qcount_napi(q, tx_retry_timer);
	if (ev & BIT(VECNET_EV_COALESCE))
		vecnet_qcount_napi(q, tx_coalesce_timer);
	if (ev & BIT(VECNET_EV_TIMEOUT))
		vecnet_qcount_napi(q, tx_timeout_count);
}

static int vecnet_poll(struct napi_struct *napi, int budget)
{
	struct vecnet_queue *q = container_of(napi, struct vecnet_queue, napi);
	unsigned long ev = xchg(&q->events, 0);
	struct netdev_queue *txq = vecnet_txq(q);
	struct vecnet_dev *vn = q->vn;
	struct vecnet_txq *tx = &q->tx;
	int work;

	vecnet_count_events(q, ev);

	spin_lock(&tx->lock);
	/* A blocked sender tries again only when the host or a timer says */
	if (tx->count && (!READ_ONCE(q->tx_blocked) ||
			  (ev & (BIT(VECNET_EV_WRITE) | BIT(VECNET_EV_RETRY) |
				 BIT(VECNET_EV_TIMEOUT)))))
		vecnet_tx_flush(q);
	if (netif_tx_queue_stopped(txq) && tx->count < vn->depth &&
	    netif_carrier_ok(vn->dev)) {
		netif_tx_wake_queue(txq);
		vecnet_qcount_tx(q, tx_flow_control_xon);
	}
	spin_unlock(&tx->lock);

	work = vecnet_rx(q, budget);
	if (work < budget)
		napi_complete_done(napi, work);
	return work;
}

/*
 * A switch learns where a guest lives from the frames the guest sends;
 * until then frames for it have nowhere to go.  So tell the segment as
 * soon as the carrier comes on, as a migrated virtio guest does.  This
 * needs RTNL, which the stop path holds while it cancels this work:
 * take it only when free, else look again shortly.
 */
static void vecnet_announce_work(struct work_struct *work)
{
	struct vecnet_dev *vn = container_of(to_delayed_work(work),
					     struct vecnet_dev, announce_work);

	if (!rtnl_trylock()) {
		schedule_delayed_work(&vn->announce_work, 1);
		return;
	}
	/*
	 * A carrier that comes back on reaches the queue through the link
	 * watch, which runs as work of its own; until it has, the stack
	 * drops what it sends.  The link watch sets the operating state
	 * and starts the queue in one RTNL section, so wait for the former
	 * (for a second at most: a device held dormant never gets there).
	 */
	if (netif_running(vn->dev) && netif_carrier_ok(vn->dev) &&
	    !netif_oper_up(vn->dev) &&
	    vn->announce_waits++ < VECNET_ANNOUNCE_WAITS) {
		rtnl_unlock();
		schedule_delayed_work(&vn->announce_work,
				      msecs_to_jiffies(VECNET_ANNOUNCE_WAIT_MS));
		return;
	}
	vn->announce_waits = 0;
	if (netif_running(vn->dev) && netif_carrier_ok(vn->dev))
		__netdev_notify_peers(vn->dev);
	rtnl_unlock();
}

/*
 * The probe found the peer (@restarted: a new one in place of the one
 * before).  A peer found anew is asked for headers first; with vnet=1
 * the carrier waits for its answer.
 */
static void vecnet_link_present(struct vecnet_dev *vn, bool restarted)
{
	struct net_device *dev = vn->dev;
	bool was_on = netif_carrier_ok(dev);

	/* nego_tries is 0 once the peer was lost: a new one is asked */
	if (restarted || !vn->nego_tries)
		vecnet_nego_start(vn);
	else
		vecnet_nego_tick(vn);
	if (was_on && !vecnet_nego_carrier_ok(vn)) {
		/* vnet=1: a peer that restarted must agree again first */
		netif_carrier_off(dev);
		vecnet_count_link(vn, peer_back);
		netdev_info(dev, "peer restarted, carrier off until it agrees to virtio-net headers\n");
	} else if (!was_on && vecnet_nego_carrier_ok(vn)) {
		netif_carrier_on(dev);
		vecnet_count_link(vn, peer_back);
		netdev_info(dev, "peer back, carrier on\n");
		schedule_delayed_work(&vn->announce_work, 0);
	} else if (was_on && restarted) {
		vecnet_count_link(vn, peer_back);
		netdev_info(dev, "peer restarted\n");
		schedule_delayed_work(&vn->announce_work, 0);
	}
	vecnet_kick(vn);
}

/* Reconnects a lost peer, and checks a present one once a second */
static void vecnet_link_work(struct work_struct *work)
{
	struct vecnet_dev *vn = container_of(to_delayed_work(work),
					     struct vecnet_dev, link_work);
	struct net_device *dev = vn->dev;
	unsigned int delay = VECNET_LINK_CHECK_MS;
	int err;

	err = vn->transport->probe_peer(vn);
	if (err == VECNET_PEER_HELD) {
		/*
		 * The carrier was on when the probe looked; a send may have
		 * taken it away since, and the probe has no say in that.
		 */
		vn->link_backoff_ms = VECNET_LINK_MIN_MS;
	} else if (err >= 0) {
		vecnet_link_present(vn, err == VECNET_PEER_NEW);
		vn->link_backoff_ms = VECNET_LINK_MIN_MS;
	} else {
		if (vecnet_peer_gone(vn, err) && netif_carrier_ok(dev)) {
			spin_lock_bh(&vn->q[0].tx.lock);
			vecnet_peer_lost(vn);
			spin_unlock_bh(&vn->q[0].tx.lock);
		}
		delay = vn->link_backoff_ms;
		vn->link_backoff_ms = min(vn->link_backoff_ms * 2,
					  VECNET_LINK_CHECK_MS);
	}
	schedule_delayed_work(&vn->link_work, msecs_to_jiffies(delay));
}

/* ---- rings -------------------------------------------------------------- */

static void vecnet_ring_free(struct vecnet_queue *q)
{
	unsigned int i;

	if (q->tx.skbs) {
		while (q->tx.count)
			vecnet_tx_pop(q, false);
	}
	if (q->rx.skbs) {
		for (i = 0; i < q->vn->depth; i++)
			dev_kfree_skb(q->rx.skbs[i]);
	}
	kfree(q->rx.skbs);
	kfree(q->rx.msgs);
	kfree(q->rx.iov);
	kfree(q->rx.hdrs);
	kfree(q->rx.names);
	kvfree(q->rx.cmsgs);
	kfree(q->tx.chan);
	kfree(q->tx.skbs);
	kfree(q->tx.msgs);
	kfree(q->tx.iov);
	kfree(q->tx.hdrs);
	memset(&q->rx, 0, sizeof(q->rx));
	q->tx.skbs = NULL;
	q->tx.msgs = NULL;
	q->tx.iov = NULL;
	q->tx.hdrs = NULL;
	q->tx.chan = NULL;
	q->tx.head = 0;
	q->tx.count = 0;
}

static void vecnet_rings_free(struct vecnet_dev *vn)
{
	unsigned int i;

	for (i = 0; i < vn->nq; i++)
		vecnet_ring_free(&vn->q[i]);
	/* without rings, rx-gro-hw may be chosen again (vecnet_open) */
	if (vn->gro_hw_held) {
		vn->dev->hw_features |= NETIF_F_GRO_HW;
		vn->gro_hw_held = false;
	}
}

static unsigned int vecnet_rx_buf_len(const struct vecnet_dev *vn)
{
	unsigned int len = vn->dev->mtu + ETH_HLEN + VLAN_HLEN;

	if ((vn->dev->features & NETIF_F_GRO_HW) ||
	    (vn->flags & VECNET_TF_RX_GSO))
		len = max_t(unsigned int, len, VECNET_GSO_FRAME);
	/* Header options beyond the fixed part land in front of the frame */
	if (vn->transport->verify_header)
		len += VECNET_HDR_MAX;
	/* A tap read that fills the buffer was cut short: one byte tells */
	if (vn->flags & VECNET_TF_CHARDEV)
		len += 1;
	return len;
}

static int vecnet_ring_alloc(struct vecnet_queue *q)
{
	struct vecnet_dev *vn = q->vn;
	struct vecnet_rxq *rx = &q->rx;
	struct vecnet_txq *tx = &q->tx;
	unsigned int d = vn->depth, i;

	rx->buf_len = vecnet_rx_buf_len(vn);
	rx->skbs = kcalloc(d, sizeof(*rx->skbs), GFP_KERNEL);
	rx->msgs = kcalloc(d, sizeof(*rx->msgs), GFP_KERNEL);
	rx->iov = kcalloc(d * 2, sizeof(*rx->iov), GFP_KERNEL);
	tx->skbs = kcalloc(d, sizeof(*tx->skbs), GFP_KERNEL);
	tx->msgs = kcalloc(d, sizeof(*tx->msgs), GFP_KERNEL);
	tx->iov = kcalloc(d * VECNET_TX_IOV, sizeof(*tx->iov), GFP_KERNEL);
	if (!rx->skbs || !rx->msgs || !rx->iov ||
	    !tx->skbs || !tx->msgs || !tx->iov)
		return -ENOMEM;
	if (vn->rx_hdr_len) {
		rx->hdrs = kcalloc(d, vn->rx_hdr_len, GFP_KERNEL);
		if (!rx->hdrs)
			return -ENOMEM;
	}
	if (vn->tx_hdr_len) {
		tx->hdrs = kcalloc(d, vn->tx_hdr_len, GFP_KERNEL);
		if (!tx->hdrs)
			return -ENOMEM;
	}
	if (vn->name_len) {
		rx->names = kcalloc(d, vn->name_len, GFP_KERNEL);
		if (!rx->names)
			return -ENOMEM;
	}
	/* channels, and the descriptors that bring them, are queue 0's */
	if (vn->chan_want && !q->index) {
		rx->cmsgs = kvcalloc(d, VECNET_CMSG_LEN, GFP_KERNEL);
		tx->chan = kmalloc(d, GFP_KERNEL);
		if (!rx->cmsgs || !tx->chan)
			return -ENOMEM;
		memset(tx->chan, VECNET_CHAN_NONE, d);
	}
	for (i = 0; i < d; i++) {
		rx->skbs[i] = vecnet_rx_skb(q, false);
		if (!rx->skbs[i])
			return -ENOMEM;
		vecnet_rx_slot(q, i);
	}
	return 0;
}

static int vecnet_rings_alloc(struct vecnet_dev *vn)
{
	unsigned int i;

	for (i = 0; i < vn->nq; i++) {
		if (vecnet_ring_alloc(&vn->q[i])) {
			vecnet_rings_free(vn);
			return -ENOMEM;
		}
	}
	return 0;
}

/* close() for transports whose only host objects are the descriptors */
void vecnet_close_fd(struct vecnet_dev *vn)
{
	unsigned int i;

	if (vn->tx_fd >= 0)
		vecnet_user_close(vn->tx_fd);
	vn->tx_fd = -1;
	/* what a switch passed may wait in queue 0's socket still */
	if (vn->fd >= 0 && vn->chan_want)
		vecnet_chan_close_sock(vn, vn->fd);
	else if (vn->fd >= 0)
		vecnet_user_close(vn->fd);
	vn->fd = -1;
	for (i = 1; i < VECNET_QUEUES_MAX; i++) {
		if (vn->q[i].fd >= 0)
			vecnet_user_close(vn->q[i].fd);
		vn->q[i].fd = -1;
	}
}

/* ---- net_device_ops ----------------------------------------------------- */

static int vecnet_q_irqs_request(struct vecnet_queue *q)
{
	struct vecnet_dev *vn = q->vn;
	int err;

	err = um_request_irq(UM_IRQ_ALLOC, vecnet_q_fd(q), IRQ_READ,
			     vecnet_rx_interrupt, 0, vn->dev->name, q);
	if (err < 0) {
		netdev_err(vn->dev, "queue %u: no interrupt for receive: %d\n",
			   q->index, err);
		return err;
	}
	q->rx_irq = err;
	err = um_request_irq(UM_IRQ_ALLOC, vecnet_tx_fd(q), IRQ_WRITE,
			     vecnet_tx_interrupt, 0, vn->dev->name, q);
	if (err < 0) {
		netdev_err(vn->dev, "queue %u: no interrupt for transmit: %d\n",
			   q->index, err);
		um_free_irq(q->rx_irq, q);
		return err;
	}
	q->tx_irq = err;
	return 0;
}

static void vecnet_q_irqs_free(struct vecnet_queue *q)
{
	um_free_irq(q->tx_irq, q);
	um_free_irq(q->rx_irq, q);
}

static void vecnet_irqs_free(struct vecnet_dev *vn, unsigned int n)
{
	while (n--)
		vecnet_q_irqs_free(&vn->q[n]);
}

static int vecnet_irqs_request(struct vecnet_dev *vn)
{
	unsigned int i;
	int err;

	for (i = 0; i < vn->nq; i++) {
		err = vecnet_q_irqs_request(&vn->q[i]);
		if (err) {
			vecnet_irqs_free(vn, i);
			return err;
		}
	}
	return 0;
}

static void vecnet_napis(struct vecnet_dev *vn, bool enable)
{
	unsigned int i;

	for (i = 0; i < vn->nq; i++) {
		if (enable)
			napi_enable(&vn->q[i].napi);
		else
			napi_disable(&vn->q[i].napi);
	}
}

/*
 * From probe_peer, on an open device: a connection transport (bess) has
 * a new connection in @fd to put in place of the one that ended.  Fails
 * only when the host gives no interrupt for the new descriptor; the
 * device then stays without a carrier.  Such transports have one queue.
 */
int vecnet_replace_fd(struct vecnet_dev *vn, int fd)
{
	struct vecnet_queue *q = &vn->q[0];
	int err;

	netif_tx_disable(vn->dev);
	napi_disable(&q->napi);
	vecnet_q_irqs_free(q);
	spin_lock_bh(&q->tx.lock);
	vecnet_tx_drop_all(q);
	spin_unlock_bh(&q->tx.lock);
	vecnet_user_close(vn->fd);
	vn->fd = fd;
	err = vecnet_q_irqs_request(q);
	napi_enable(&q->napi);
	netif_tx_wake_all_queues(vn->dev);
	if (!err)
		vecnet_qkick(q);
	return err;
}

static void vecnet_q_reset(struct vecnet_queue *q)
{
	q->retry_ns = VECNET_RETRY_MIN_NS;
	q->tx_blocked = false;
	q->events = 0;
}

static int vecnet_open(struct net_device *dev)
{
	struct vecnet_dev *vn = netdev_priv(dev);
	bool peer_there;
	unsigned int i;
	int err;

	vn->depth = vn->cfg.depth;
	vn->nq = vn->cfg.queues;
	vn->batch = vn->cfg.vec ? vn->depth : 1;
	vn->link_backoff_ms = VECNET_LINK_MIN_MS;
	for (i = 0; i < vn->nq; i++)
		vecnet_q_reset(&vn->q[i]);
	/* a negotiating link's further queues wait for the switch's word */
	vn->mq_cookie_ok = false;
	vn->live = vn->flags & VECNET_TF_NEGOTIATE ? BIT(0) :
						      GENMASK(vn->nq - 1, 0);
	/* An rx-gro-hw request made while up takes effect now */
	netdev_update_features(dev);

	err = vn->transport->open(vn);
	if (err && err != -ENOTCONN)
		return err;
	peer_there = !err;

	err = vecnet_rings_alloc(vn);
	if (err)
		goto err_close;
	/* rx-gro-hw wants super-frame buffers: fixed while these rings live */
	if (vn->q[0].rx.buf_len < VECNET_GSO_FRAME &&
	    (dev->hw_features & NETIF_F_GRO_HW)) {
		dev->hw_features &= ~NETIF_F_GRO_HW;
		vn->gro_hw_held = true;
	}

	vecnet_napis(vn, true);

	err = vecnet_irqs_request(vn);
	if (err)
		goto err_napi;

	/* nothing fails from here on: the link works may run (vecnet_stop) */
	enable_delayed_work(&vn->link_work);
	enable_delayed_work(&vn->announce_work);
	vn->nego_tries = 0;
	if (peer_there)
		vecnet_nego_start(vn);
	/* vnet=1: the carrier waits for the headers to be agreed */
	if (peer_there && vecnet_nego_carrier_ok(vn))
		netif_carrier_on(dev);
	else
		netif_carrier_off(dev);
	if (vn->transport->probe_peer)
		schedule_delayed_work(&vn->link_work,
				      msecs_to_jiffies(peer_there ?
						       VECNET_LINK_CHECK_MS :
						       VECNET_LINK_MIN_MS));
	netif_tx_start_all_queues(dev);
	/* Edge-triggered: frames queued before the IRQ existed raise none */
	vecnet_kick(vn);
	/* Runs once the device is up, after this returns */
	if (peer_there)
		schedule_delayed_work(&vn->announce_work, 0);
	vn->opened = true;
	return 0;

err_napi:
	vecnet_napis(vn, false);
	vecnet_rings_free(vn);
err_close:
	vn->transport->close(vn);
	return err;
}

static int vecnet_stop(struct net_device *dev)
{
	struct vecnet_dev *vn = netdev_priv(dev);
	unsigned int i;

	/* ethtool -L could not bring it back up (vecnet_set_queues) */
	if (!vn->opened)
		return 0;
	vn->opened = false;
	/*
	 * First the link work, which may replace the descriptor and so
	 * must not run once NAPI is off.  Disabled, not only cancelled: a
	 * peer lost in NAPI's last receive would queue it again.  It may
	 * have queued the announcement, disabled once NAPI is off too.
	 */
	disable_delayed_work_sync(&vn->link_work);
	netif_tx_disable(dev);
	vecnet_irqs_free(vn, vn->nq);
	vecnet_napis(vn, false);
	disable_delayed_work_sync(&vn->announce_work);
	vn->announce_waits = 0;
	for (i = 0; i < vn->nq; i++) {
		hrtimer_cancel(&vn->q[i].tx_timer);
		hrtimer_cancel(&vn->q[i].retry_timer);
	}
	vecnet_chan_close_all(vn);
	/* what the rings still hold is counted as dropped */
	vecnet_rings_free(vn);
	vn->transport->close(vn);
	netif_carrier_off(dev);
	vecnet_nego_stop(vn);
	vn->live = 0;
	/* With the rings gone, a pending rx-gro-hw request may apply */
	netdev_update_features(dev);
	return 0;
}

static int vecnet_set_real_queues(struct net_device *dev, unsigned int n)
{
	struct vecnet_dev *vn = netdev_priv(dev);
	int err;

	err = netif_set_real_num_queues(dev, n, n);
	if (err)
		return err;
	vn->cfg.queues = n;
	vecnet_spread_napi(dev);
	return 0;
}

/*
 * ethtool -L, with RTNL held: @n queues from the next up, or from now
 * on a device that is up, which goes down and up again for it.  Should
 * it not come up with @n, it comes back with the queues it had.
 */
int vecnet_set_queues(struct net_device *dev, unsigned int n)
{
	struct vecnet_dev *vn = netdev_priv(dev);
	unsigned int old = vn->cfg.queues;
	int err;

	if (!netif_running(dev))
		return vecnet_set_real_queues(dev, n);
	vecnet_stop(dev);
	err = vecnet_set_real_queues(dev, n);
	if (!err)
		err = vecnet_open(dev);
	if (!err)
		return 0;
	netdev_err(dev, "ethtool -L: cannot come up with %u queues (%d); back to %u\n",
		   n, err, old);
	if (vecnet_set_real_queues(dev, old) || vecnet_open(dev))
		netdev_err(dev, "ethtool -L: nor with %u: no carrier until the device goes down and up\n",
			   old);
	return err;
}

/* The rings and the host buffers are sized for the MTU when opening */
static int vecnet_change_mtu(struct net_device *dev, int mtu)
{
	if (netif_running(dev)) {
		netdev_warn(dev, "change the MTU while the device is down\n");
		return -EBUSY;
	}
	WRITE_ONCE(dev->mtu, mtu);
	return 0;
}

/*
 * Receive buffers are sized for super-frames only when the rings are
 * made, so rx-gro-hw cannot come on while rings of MTU-sized buffers
 * exist: it is fixed off while they do (vecnet_open), and this keeps
 * it so whatever asks.
 */
static netdev_features_t vecnet_fix_features(struct net_device *dev,
					     netdev_features_t features)
{
	struct vecnet_dev *vn = netdev_priv(dev);

	if (vn->q[0].rx.skbs && vn->q[0].rx.buf_len < VECNET_GSO_FRAME)
		features &= ~NETIF_F_GRO_HW;
	return features;
}

/*
 * Every device offers checksum offload and TSO.  A frame that leaves
 * without a virtio-net header (a transport without one, or a unixdgram
 * link whose peer did not agree to them) has the stack do both in
 * software before it reaches vecnet_xmit, as for a device without them.
 */
static netdev_features_t vecnet_features_check(struct sk_buff *skb,
					       struct net_device *dev,
					       netdev_features_t features)
{
	struct vecnet_dev *vn = netdev_priv(dev);

	if (vn->flags & VECNET_TF_VNET_HDR)
		return features;
	if ((vn->flags & VECNET_TF_NEGOTIATE) && !vecnet_nego_plain(vn))
		return features;
	return features & ~(NETIF_F_CSUM_MASK | NETIF_F_GSO_MASK);
}

static int vecnet_set_features(struct net_device *dev,
			       netdev_features_t features)
{
	struct vecnet_dev *vn = netdev_priv(dev);

	if (vn->transport->set_features)
		return vn->transport->set_features(vn, features);
	return 0;
}

/* A transport that filters on the address learns the new one */
static int vecnet_set_mac(struct net_device *dev, void *addr)
{
	struct vecnet_dev *vn = netdev_priv(dev);
	int err;

	err = eth_mac_addr(dev, addr);
	if (err || !netif_running(dev))
		return err;
	/* the other guests' channels know us by the old address */
	if (vn->chan_want) {
		spin_lock_bh(&vn->q[0].tx.lock);
		vecnet_chan_kill_all(vn);
		spin_unlock_bh(&vn->q[0].tx.lock);
	}
	if (!vn->transport->mac_changed)
		return err;
	return vn->transport->mac_changed(vn);
}

static const struct net_device_ops vecnet_netdev_ops = {
	.ndo_open		= vecnet_open,
	.ndo_stop		= vecnet_stop,
	.ndo_start_xmit		= vecnet_xmit,
	.ndo_select_queue	= vecnet_select_queue,
	.ndo_set_mac_address	= vecnet_set_mac,
	.ndo_validate_addr	= eth_validate_addr,
	.ndo_change_mtu		= vecnet_change_mtu,
	.ndo_tx_timeout		= vecnet_tx_timeout,
	.ndo_fix_features	= vecnet_fix_features,
	.ndo_features_check	= vecnet_features_check,
	.ndo_set_features	= vecnet_set_features,
};

/* ---- devices -------------------------------------------------------------- */

/* Called with vecnet_devices_lock held */
static struct vecnet_dev *vecnet_find(u32 index)
{
	struct vecnet_dev *vn;

	list_for_each_entry(vn, &vecnet_devices, list)
		if (vn->cfg.index == index)
			return vn;
	return NULL;
}

/*
 * The transport's flags, or more that its options turn on (unixdgram's
 * vnet=1): a virtio_net_hdr on every frame brings the offloads with it.
 */
void vecnet_add_flags(struct vecnet_dev *vn, u32 flags)
{
	struct net_device *dev = vn->dev;

	vn->flags |= flags;
	if (flags & VECNET_TF_VNET_HDR) {
		vn->rx_hdr_len = sizeof(struct virtio_net_hdr);
		vn->tx_hdr_len = sizeof(struct virtio_net_hdr);
		dev->hw_features |= VECNET_VNET_FEATURES | NETIF_F_GRO_HW;
		dev->features |= VECNET_VNET_FEATURES;
	}
	/*
	 * Room for a header in every transmit slot, used once agreed.  What
	 * arrives with a header needs no checksum check here: rx-checksumming
	 * is fixed on (and rx-gro-hw, which the stack keeps only with it).
	 */
	if (flags & VECNET_TF_NEGOTIATE) {
		vn->tx_hdr_len = sizeof(struct virtio_net_hdr);
		dev->features |= NETIF_F_RXCSUM;
	}
	/* Super-frames come whether asked for or not: rx-gro-hw is fixed on */
	if (flags & VECNET_TF_RX_GSO) {
		dev->hw_features &= ~NETIF_F_GRO_HW;
		dev->features |= NETIF_F_GRO_HW;
	}
}

/*
 * Several queues: UML takes every interrupt on CPU 0, and its
 * smp_affinity cannot move them, so NAPI run from the interrupt would
 * poll every queue there.  Threaded NAPI has a kernel thread per queue
 * instead, which the scheduler places on any CPU.  Writing 0 to
 * /sys/class/net/vecN/threaded goes back to polling in softirq.
 */
void vecnet_spread_napi(struct net_device *dev)
{
	if (dev->real_num_tx_queues > 1 && !dev->threaded &&
	    dev_set_threaded(dev, NETDEV_NAPI_THREADED_ENABLED))
		netdev_warn(dev, "no NAPI threads: every queue polls on CPU 0\n");
}

static void vecnet_q_init(struct vecnet_dev *vn, unsigned int i)
{
	struct vecnet_queue *q = &vn->q[i];
	unsigned int c;

	q->vn = vn;
	q->index = i;
	q->fd = -1;
	spin_lock_init(&q->tx.lock);
	for (c = 0; c < VECNET_XS_NR; c++)
		u64_stats_init(&q->xstats[c].syncp);
	u64_stats_init(&q->rx_stats.syncp);
	u64_stats_init(&q->tx_stats.syncp);
	hrtimer_setup(&q->tx_timer, vecnet_tx_timer_fn, CLOCK_MONOTONIC,
		      HRTIMER_MODE_REL);
	hrtimer_setup(&q->retry_timer, vecnet_retry_timer_fn,
		      CLOCK_MONOTONIC, HRTIMER_MODE_REL);
}

static void vecnet_dev_init(struct net_device *dev,
			    const struct vecnet_config *cfg)
{
	struct vecnet_dev *vn = netdev_priv(dev);
	unsigned int i;

	vn->dev = dev;
	vn->cfg = *cfg;
	vn->cfg.args = NULL;
	vn->transport = cfg->transport;
	vn->fd = -1;
	vn->tx_fd = -1;
	vn->depth = cfg->depth;
	for (i = 0; i < VECNET_QUEUES_MAX; i++)
		vecnet_q_init(vn, i);
	INIT_DELAYED_WORK(&vn->link_work, vecnet_link_work);
	INIT_DELAYED_WORK(&vn->announce_work, vecnet_announce_work);
	/* enabled while the device is up (vecnet_open, vecnet_stop) */
	disable_delayed_work(&vn->link_work);
	disable_delayed_work(&vn->announce_work);
	vecnet_chan_init(vn);
	vn->rx_fd_in = -1;

	snprintf(dev->name, IFNAMSIZ, "vec%u", cfg->index);
	dev->netdev_ops = &vecnet_netdev_ops;
	vecnet_set_ethtool_ops(dev);
	dev->pcpu_stat_type = NETDEV_PCPU_STAT_DSTATS;
	dev->watchdog_timeo = 5 * HZ;
	dev->min_mtu = ETH_MIN_MTU;
	dev->max_mtu = cfg->transport->max_mtu;
	dev->mtu = cfg->mtu;
	dev->priv_flags |= IFF_LIVE_ADDR_CHANGE;
	dev->hw_features = NETIF_F_SG | VECNET_TX_FEATURES;
	dev->features = NETIF_F_SG | VECNET_TX_FEATURES;
	vecnet_add_flags(vn, cfg->transport->flags);
	if (cfg->have_mac)
		eth_hw_addr_set(dev, cfg->mac);
	else
		eth_hw_addr_random(dev);
	for (i = 0; i < cfg->max_queues; i++)
		netif_napi_add(dev, &vn->q[i].napi, vecnet_poll);
	netif_carrier_off(dev);
}

int vecnet_device_add(const char *spec, struct vecnet_err *err)
{
	struct vecnet_config cfg;
	struct net_device *dev;
	struct vecnet_dev *vn;
	int ret;

	ret = vecnet_parse(spec, &cfg, err);
	if (ret)
		return ret;

	mutex_lock(&vecnet_devices_lock);
	if (vecnet_find(cfg.index)) {
		vecnet_err_set(err, "vec%u: already configured", cfg.index);
		ret = -EEXIST;
		goto err_unlock;
	}
	dev = alloc_etherdev_mqs(sizeof(*vn), cfg.max_queues, cfg.max_queues);
	if (!dev) {
		vecnet_err_set(err, "vec%u: out of memory", cfg.index);
		ret = -ENOMEM;
		goto err_unlock;
	}
	vecnet_dev_init(dev, &cfg);
	vn = netdev_priv(dev);

	ret = cfg.transport->setup(vn, cfg.args, err);
	if (ret)
		goto err_free;
	ret = netif_set_real_num_queues(dev, cfg.queues, cfg.queues);
	if (ret) {
		vecnet_err_set(err, "vec%u: cannot set %u queues: %d",
			       cfg.index, cfg.queues, ret);
		goto err_destroy;
	}

	ret = register_netdev(dev);
	if (ret) {
		vecnet_err_set(err, "vec%u: cannot register the device: %d",
			       cfg.index, ret);
		goto err_destroy;
	}
	vecnet_spread_napi(dev);
	list_add_tail(&vn->list, &vecnet_devices);
	mutex_unlock(&vecnet_devices_lock);
	vecnet_args_free(cfg.args);
	netdev_info(dev, "transport %s, depth %u, mtu %u, queues %u, %pM\n",
		    cfg.transport->name, cfg.depth, cfg.mtu, cfg.queues,
		    dev->dev_addr);
	return 0;

err_destroy:
	cfg.transport->destroy(vn);
err_free:
	free_netdev(dev);
err_unlock:
	mutex_unlock(&vecnet_devices_lock);
	vecnet_args_free(cfg.args);
	return ret;
}

/* Takes the device away even while it is up: unregistering stops it */
int vecnet_device_remove(u32 index, struct vecnet_err *err)
{
	struct vecnet_dev *vn;

	mutex_lock(&vecnet_devices_lock);
	vn = vecnet_find(index);
	if (!vn) {
		mutex_unlock(&vecnet_devices_lock);
		vecnet_err_set(err, "vec%u: no such device", index);
		return -ENODEV;
	}
	list_del(&vn->list);
	mutex_unlock(&vecnet_devices_lock);

	unregister_netdev(vn->dev);
	vn->transport->destroy(vn);
	free_netdev(vn->dev);
	return 0;
}

/*
 * uml_dir/umid/, where transports put the host objects they name.  Only
 * boot code may ask UML for it, so it is read once at boot, before the
 * first device, and kept for devices added later through mconsole.
 */
static char vecnet_dir[VECNET_UNIX_PATH_MAX];

const char *vecnet_run_dir(void)
{
	return vecnet_dir;
}

/* ---- command line and host exit ------------------------------------------ */

/*
 * vecN: options arrive before the network stack exists; they are kept
 * (in memblock memory, so there is no limit on their number) and the
 * devices made once it does.
 */
struct vecnet_boot_spec {
	struct list_head list;
	const char *spec;
};

static LIST_HEAD(vecnet_boot_specs);

static int __init vecnet_setup(char *str)
{
	struct vecnet_boot_spec *b;

	b = memblock_alloc(sizeof(*b), SMP_CACHE_BYTES);
	if (!b) {
		pr_err("vecnet: vec%s: out of memory; device not created\n",
		       str);
		return 1;
	}
	b->spec = str;
	list_add_tail(&b->list, &vecnet_boot_specs);
	return 1;
}
__setup("vec", vecnet_setup);

static int __init vecnet_boot_init(void)
{
	struct vecnet_boot_spec *b;
	struct vecnet_err err;

#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
	if (IS_ERR(fault_create_debugfs_attr("fail_vecnet_rx", NULL,
					     &vecnet_fail_rx)))
		pr_warn("vecnet: no fail_vecnet_rx in debugfs\n");
#endif

	if (umid_file_name("", vecnet_dir, sizeof(vecnet_dir)))
		vecnet_dir[0] = '\0';
	list_for_each_entry(b, &vecnet_boot_specs, list)
		if (vecnet_device_add(b->spec, &err))
			pr_err("vecnet: %s; device not created\n", err.msg);
	return 0;
}
late_initcall(vecnet_boot_init);

/* The host process is exiting: remove the host objects we made */
static void vecnet_exit(void)
{
	struct vecnet_dev *vn;

	list_for_each_entry(vn, &vecnet_devices, list)
		if (vn->transport->shutdown)
			vn->transport->shutdown(vn);
}

__uml_exitcall(vecnet_exit);
