// SPDX-License-Identifier: GPL-2.0
/*
 * vecnet: the rings of a queue.  A receive ring of rx_depth slots and a
 * transmit ring of tx_depth, made when the device opens and freed when it goes
 * down: the buffers, and the message headers and I/O vectors that hand
 * a whole batch to the host in one call (recvmmsg and sendmmsg, or
 * readv and writev on a tap).  A slot is filled and emptied here, and a
 * transmit slot says which descriptor its frame goes to (with shortcut
 * channels); what goes in and when it leaves belong to vecnet_rx.c and
 * vecnet_tx.c.
 */

#include <linux/fault-inject.h>
#include <linux/init.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include "vecnet.h"
#include "vecnet_ring.h"
#include "vecnet_stats.h"
#include "vecnet_transport.h"

/*
 * Receive buffers that fail to allocate on request, to show the driver
 * under memory pressure: the fault-injection attribute fail_vecnet_rx in
 * debugfs (probability, interval, times, ...), or at boot
 * fail_vecnet_rx=<interval>,<probability>,<space>,<times>.  Only the
 * receive path asks; bringing a device up never fails this way.
 */
#ifdef CONFIG_FAULT_INJECTION
static DECLARE_FAULT_ATTR(vecnet_fail_rx);
/*
 * And sends of frames beyond 64 KiB that fail as when the host cannot
 * allocate them (ENOBUFS), to show the fall-back to shorter ones:
 * fail_vecnet_big in debugfs
 */
static DECLARE_FAULT_ATTR(vecnet_fail_big);

static int __init vecnet_fail_rx_setup(char *str)
{
	return setup_fault_attr(&vecnet_fail_rx, str);
}
__setup("fail_vecnet_rx=", vecnet_fail_rx_setup);

#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
/* A late initcall, as the device's: after debugfs, before the devices */
static int __init vecnet_fail_debugfs(void)
{
	static const struct {
		const char *name;
		struct fault_attr *attr;
	} attrs[] = {
		{ "fail_vecnet_rx", &vecnet_fail_rx },
		{ "fail_vecnet_big", &vecnet_fail_big },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(attrs); i++)
		if (IS_ERR(fault_create_debugfs_attr(attrs[i].name, NULL,
						     attrs[i].attr)))
			pr_warn("vecnet: no %s in debugfs\n", attrs[i].name);
	return 0;
}
late_initcall(vecnet_fail_debugfs);
#endif

bool vecnet_rx_alloc_fails(void)
{
	return should_fail(&vecnet_fail_rx, 1);
}

bool vecnet_tx_big_fails(void)
{
	return should_fail(&vecnet_fail_big, 1);
}
#else
bool vecnet_rx_alloc_fails(void)
{
	return false;
}

bool vecnet_tx_big_fails(void)
{
	return false;
}
#endif

struct sk_buff *vecnet_rx_skb(struct vecnet_queue *q, bool in_napi)
{
	struct vecnet_dev *vn = q->vn;
	unsigned int len = vn->cfg.headroom + q->rx.head_len;
	struct sk_buff *skb;

	if (in_napi && vecnet_rx_alloc_fails())
		return NULL;
	skb = in_napi ? napi_alloc_skb(&q->napi, len) :
			netdev_alloc_skb(vn->dev, len);
	if (skb)
		skb_reserve(skb, vn->cfg.headroom);
	return skb;
}

/* Point slot @i at its buffers again; the host rewrote namelen and flags */
void vecnet_rx_slot(struct vecnet_queue *q, unsigned int i)
{
	const struct vecnet_dev *vn = q->vn;
	struct user_msghdr *h = &q->rx.msgs[i].msg_hdr;
	struct vecnet_rxq *rx = &q->rx;
	struct iovec *iov = &rx->iov[i * rx->iov_n];
	struct page **pages = rx->pages + i * rx->npages;
	unsigned int n = 0, p;

	if (vn->host.rx_hdr_len) {
		iov[n].iov_base = (void __force __user *)
				  (rx->hdrs + i * vn->host.rx_hdr_len);
		iov[n++].iov_len = vn->host.rx_hdr_len;
	}
	iov[n].iov_base = (void __force __user *)rx->skbs[i]->data;
	iov[n++].iov_len = rx->head_len;
	for (p = 0; p < rx->npages; p++) {
		iov[n].iov_base = (void __force __user *)page_address(pages[p]);
		iov[n++].iov_len = PAGE_SIZE << rx->page_order;
	}

	h->msg_iov = (struct iovec __force __user *)iov;
	h->msg_iovlen = n;
	h->msg_name = rx->names ? (void __force __user *)
		      (rx->names + i * vn->host.name_len) : NULL;
	h->msg_namelen = vn->host.name_len;
	/* a descriptor may come along (a channel), or be forced on us */
	h->msg_control = rx->cmsgs ?
		(void __force __user *)(rx->cmsgs + i * VECNET_CMSG_LEN) : NULL;
	h->msg_controllen = rx->cmsgs ? VECNET_CMSG_LEN : 0;
	h->msg_flags = 0;
}

/*
 * Slot @i holds a datagram of @len bytes (transport header excluded):
 * its buffers become an skb, the linear part and as many of its pages as
 * the frame fills, and fresh ones take their place.  Without fresh
 * buffers the frame is dropped and the slot keeps its own.  NULL when
 * dropped (counted).
 */
struct sk_buff *vecnet_rx_take(struct vecnet_queue *q, unsigned int i,
			       unsigned int len)
{
	struct vecnet_rxq *rx = &q->rx;
	struct page **pages = rx->pages + i * rx->npages;
	unsigned int size = PAGE_SIZE << rx->page_order;
	struct page *fresh_pages[MAX_SKB_FRAGS];
	unsigned int n = 0, j, off;
	struct sk_buff *skb, *fresh;

	if (len > rx->head_len)
		n = DIV_ROUND_UP(len - rx->head_len, size);
	if (unlikely(n > rx->npages)) {
		DEV_STATS_INC(q->vn->dev, rx_length_errors);
		goto drop;
	}
	fresh = vecnet_rx_skb(q, true);
	if (unlikely(!fresh))
		goto nomem;
	for (j = 0; j < n; j++) {
		fresh_pages[j] = vecnet_rx_alloc_fails() ? NULL :
				 dev_alloc_pages(rx->page_order);
		if (unlikely(!fresh_pages[j])) {
			while (j--)
				put_page(fresh_pages[j]);
			dev_kfree_skb_any(fresh);
			goto nomem;
		}
	}
	skb = rx->skbs[i];
	rx->skbs[i] = fresh;
	skb_put(skb, min(len, rx->head_len));
	for (j = 0, off = rx->head_len; j < n; j++, off += size) {
		skb_add_rx_frag(skb, j, pages[j], 0,
				min_t(unsigned int, len - off, size), size);
		pages[j] = fresh_pages[j];
	}
	vecnet_rx_slot(q, i);
	return skb;

nomem:
	vecnet_xstats_add_n(q, VECNET_XS_NAPI, vecnet_xs_off(rx_alloc_failed),
			    1);
drop:
	dev_dstats_rx_dropped(q->vn->dev);
	vecnet_rx_slot(q, i);
	return NULL;
}

/* The stack's transmit queue that queue @q serves */
struct netdev_queue *vecnet_netdev_queue(const struct vecnet_queue *q)
{
	return netdev_get_tx_queue(q->vn->dev, q->index);
}

void vecnet_tx_slot(struct vecnet_queue *q, unsigned int slot,
		    struct sk_buff *skb, bool hdr)
{
	struct iovec *iov = &q->tx.iov[slot * VECNET_TX_IOV];
	struct user_msghdr *h = &q->tx.msgs[slot].msg_hdr;
	struct vecnet_dev *vn = q->vn;
	unsigned int n = 0, f;

	lockdep_assert_held(&q->tx.lock);
	if (hdr) {
		iov[n].iov_base = (void __force __user *)
				  (q->tx.hdrs + slot * vn->host.tx_hdr_len);
		iov[n++].iov_len = vn->host.tx_hdr_len;
	}
	iov[n].iov_base = (void __force __user *)skb->data;
	iov[n++].iov_len = skb_headlen(skb);
	for (f = 0; f < skb_shinfo(skb)->nr_frags; f++) {
		skb_frag_t *frag = &skb_shinfo(skb)->frags[f];

		iov[n].iov_base = (void __force __user *)skb_frag_address(frag);
		iov[n++].iov_len = skb_frag_size(frag);
	}

	h->msg_name = (void __force __user *)vn->host.tx_addr;
	h->msg_namelen = vn->host.tx_addr_len;
	h->msg_iov = (struct iovec __force __user *)iov;
	h->msg_iovlen = n;
	h->msg_control = NULL;
	h->msg_controllen = 0;
	h->msg_flags = 0;
}

void vecnet_tx_pop(struct vecnet_queue *q, bool sent)
{
	struct vecnet_txq *tx = &q->tx;
	struct sk_buff *skb = tx->skbs[tx->head];
	struct net_device *dev = q->vn->dev;

	tx->skbs[tx->head] = NULL;
	if (tx->chan)
		tx->chan[tx->head] = VECNET_CHAN_NONE;
	tx->head = (tx->head + 1) % q->vn->tx_depth;
	tx->count--;
	/* the driver's own messages (no device: not from the stack) */
	if (unlikely(!skb->dev)) {
		dev_kfree_skb_any(skb);
		return;
	}
	if (sent) {
		if (unlikely(skb->len > VECNET_GSO_FRAME))
			vecnet_qcount_tx(q, tx_big_frames);
		dev_dstats_tx_add(dev, skb->len);
		vecnet_qstats_add(&q->tx_stats, skb->len);
		dev_consume_skb_any(skb);
	} else {
		dev_dstats_tx_dropped(dev);
		dev_kfree_skb_any(skb);
	}
}

/* What @q's transmit ring holds is dropped */
void vecnet_tx_drop_all(struct vecnet_queue *q)
{
	struct netdev_queue *txq = vecnet_netdev_queue(q);

	lockdep_assert_held(&q->tx.lock);
	while (q->tx.count) {
		DEV_STATS_INC(q->vn->dev, tx_carrier_errors);
		vecnet_tx_pop(q, false);
	}
	/* A stopped queue would stay stopped when the carrier returns */
	if (netif_tx_queue_stopped(txq))
		netif_tx_wake_queue(txq);
	WRITE_ONCE(q->tx_blocked, false);
}

/*
 * A ring without the room xmit needs (a slot,
 * or a super-frame's pieces: tx_reserve) stops the queue
 */
void vecnet_tx_check_full(struct vecnet_queue *q)
{
	struct netdev_queue *txq = vecnet_netdev_queue(q);

	lockdep_assert_held(&q->tx.lock);
	if (q->tx.count + q->vn->tx_reserve > q->vn->tx_depth &&
	    !netif_tx_queue_stopped(txq)) {
		netif_tx_stop_queue(txq);
		vecnet_qcount_tx(q, tx_flow_control_xoff);
	}
}

/*
 * Queue 0 queues a datagram of the driver's
 * own (a negotiation message), as it is, behind what the ring holds.
 * The ring has room: the caller checked.  Its skb has no device, which
 * keeps it out of the device's packet counters.
 */
void vecnet_tx_queue_raw(struct vecnet_dev *vn, struct sk_buff *skb)
{
	struct vecnet_queue *q = &vn->q[0];
	struct vecnet_txq *tx = &q->tx;
	unsigned int slot = (tx->head + tx->count) % vn->tx_depth;

	lockdep_assert_held(&tx->lock);
	tx->skbs[slot] = skb;
	vecnet_tx_slot(q, slot, skb, false);
	tx->count++;
	/* xmit counts on a free slot while the queue runs */
	vecnet_tx_check_full(q);
}

/* Queue 0's frames, queued in a format the peer left, go */
void vecnet_tx_drop_queued(struct vecnet_dev *vn)
{
	struct vecnet_queue *q = &vn->q[0];
	struct netdev_queue *txq = vecnet_netdev_queue(q);

	lockdep_assert_held(&vn->q[0].tx.lock);
	while (q->tx.count)
		vecnet_tx_pop(q, false);
	if (netif_tx_queue_stopped(txq) && netif_carrier_ok(vn->dev))
		netif_tx_wake_queue(txq);
}

/*
 * Shortcut channel @chan of @q closes, and
 * what waits for it goes to the switch instead, which forwards it
 */
void vecnet_tx_unsteer(struct vecnet_queue *q, unsigned int chan)
{
	struct vecnet_txq *tx = &q->tx;
	unsigned int i;

	lockdep_assert_held(&q->tx.lock);
	for (i = 0; tx->chan && i < tx->count; i++) {
		unsigned int slot = (tx->head + i) % q->vn->tx_depth;

		if (tx->chan[slot] == chan)
			tx->chan[slot] = VECNET_CHAN_NONE;
	}
}

static void vecnet_ring_free(struct vecnet_queue *q)
{
	unsigned int i;

	if (q->tx.skbs) {
		while (q->tx.count)
			vecnet_tx_pop(q, false);
	}
	if (q->rx.skbs) {
		for (i = 0; i < q->vn->rx_depth; i++)
			dev_kfree_skb(q->rx.skbs[i]);
	}
	if (q->rx.pages) {
		for (i = 0; i < q->vn->rx_depth * q->rx.npages; i++)
			if (q->rx.pages[i])
				put_page(q->rx.pages[i]);
	}
	kfree(q->rx.skbs);
	kvfree(q->rx.pages);
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

void vecnet_rings_free(struct vecnet_dev *vn)
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
		len = max_t(unsigned int, len,
			    vn->flags & VECNET_TF_NEGOTIATE ?
			    vecnet_frame_max(vn) : VECNET_GSO_FRAME);
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
	unsigned int d = vn->rx_depth, t = vn->tx_depth, i;

	rx->buf_len = vecnet_rx_buf_len(vn);
	rx->head_len = min_t(unsigned int, rx->buf_len, VECNET_RX_HEAD_MAX);
	/* the fewest pages, and the smallest, that a frame's fragments take */
	rx->page_order = 0;
	while (DIV_ROUND_UP(rx->buf_len - rx->head_len,
			    PAGE_SIZE << rx->page_order) > MAX_SKB_FRAGS)
		rx->page_order++;
	rx->npages = DIV_ROUND_UP(rx->buf_len - rx->head_len,
				  PAGE_SIZE << rx->page_order);
	rx->iov_n = 2 + rx->npages;
	rx->skbs = kcalloc(d, sizeof(*rx->skbs), GFP_KERNEL);
	rx->msgs = kcalloc(d, sizeof(*rx->msgs), GFP_KERNEL);
	rx->iov = kcalloc(d * rx->iov_n, sizeof(*rx->iov), GFP_KERNEL);
	tx->skbs = kcalloc(t, sizeof(*tx->skbs), GFP_KERNEL);
	tx->msgs = kcalloc(t, sizeof(*tx->msgs), GFP_KERNEL);
	tx->iov = kcalloc(t * VECNET_TX_IOV, sizeof(*tx->iov), GFP_KERNEL);
	if (!rx->skbs || !rx->msgs || !rx->iov ||
	    !tx->skbs || !tx->msgs || !tx->iov)
		return -ENOMEM;
	if (vn->host.rx_hdr_len) {
		rx->hdrs = kcalloc(d, vn->host.rx_hdr_len, GFP_KERNEL);
		if (!rx->hdrs)
			return -ENOMEM;
	}
	if (vn->host.tx_hdr_len) {
		tx->hdrs = kcalloc(t, vn->host.tx_hdr_len, GFP_KERNEL);
		if (!tx->hdrs)
			return -ENOMEM;
	}
	if (vn->host.name_len) {
		rx->names = kcalloc(d, vn->host.name_len, GFP_KERNEL);
		if (!rx->names)
			return -ENOMEM;
	}
	/*
	 * every queue may own channels, and take the descriptors that
	 * bring them (or have them forced on it by a host that cannot
	 * refuse them)
	 */
	if (vn->chan.want) {
		rx->cmsgs = kvcalloc(d, VECNET_CMSG_LEN, GFP_KERNEL);
		tx->chan = kmalloc(t, GFP_KERNEL);
		if (!rx->cmsgs || !tx->chan)
			return -ENOMEM;
		memset(tx->chan, VECNET_CHAN_NONE, t);
	}
	if (rx->npages) {
		rx->pages = kvcalloc(d * rx->npages, sizeof(*rx->pages),
				     GFP_KERNEL);
		if (!rx->pages)
			return -ENOMEM;
		for (i = 0; i < d * rx->npages; i++) {
			rx->pages[i] = alloc_pages(GFP_KERNEL | __GFP_COMP,
						   rx->page_order);
			if (!rx->pages[i])
				return -ENOMEM;
		}
	}
	for (i = 0; i < d; i++) {
		rx->skbs[i] = vecnet_rx_skb(q, false);
		if (!rx->skbs[i])
			return -ENOMEM;
		vecnet_rx_slot(q, i);
	}
	return 0;
}

int vecnet_rings_alloc(struct vecnet_dev *vn)
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
