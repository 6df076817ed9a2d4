// SPDX-License-Identifier: GPL-2.0
/*
 * vecnet: vector network devices for User Mode Linux, the core.
 *
 * A device has up to VECNET_QUEUES_MAX queues, each with a host
 * descriptor (which the transport opens), a receive ring and a transmit
 * ring (vecnet_ring.c), NAPI and two interrupts.  Here the device comes
 * up and goes down, changes its queues, features and address, and
 * follows its peer: the link check asks the transport for a lost peer
 * and checks a present one, the negotiation asks it for headers, and the
 * carrier follows (the link's own state, its backoff and announcements
 * are vecnet_peer.c's).  NAPI sends what transmit has pending
 * (vecnet_tx.c), then receives (vecnet_rx.c).
 */

#include <linux/init.h>
#include <linux/rtnetlink.h>
#include <linux/skbuff.h>
#include <linux/virtio_net.h>
#include <irq_kern.h>
#include <os.h>
#include "vecnet.h"
#include "vecnet_chan.h"
#include "vecnet_core.h"
#include "vecnet_nego.h"
#include "vecnet_peer.h"
#include "vecnet_ring.h"
#include "vecnet_rx.h"
#include "vecnet_stats.h"
#include "vecnet_transport.h"
#include "vecnet_tx.h"
#include "vecnet_user.h"

static void vecnet_qkick(struct vecnet_queue *q)
{
	napi_schedule(&q->napi);
}

/*
 * Every queue reads every descriptor: a change of the peer or the link
 * concerns them all, and frames that came before an interrupt existed
 * raised none
 */
static void vecnet_kick(struct vecnet_dev *vn)
{
	unsigned int i;

	for (i = 0; i < vn->nq; i++)
		vecnet_rx_wake(&vn->q[i], VECNET_RX_ALL);
}

/* ---- interrupts, timers, NAPI -------------------------------------------- */

enum {
	VECNET_EV_WRITE,
	VECNET_EV_RETRY,
	VECNET_EV_COALESCE,
	VECNET_EV_TIMEOUT,
	VECNET_EV_RX_HELD,
};

static irqreturn_t vecnet_rx_interrupt(int irq, void *data)
{
	vecnet_rx_wake(data, VECNET_RX_OWN);
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

/* rx-usecs: read the descriptors whose signal is off */
static enum hrtimer_restart vecnet_rx_timer_fn(struct hrtimer *t)
{
	struct vecnet_queue *q = container_of(t, struct vecnet_queue, rx_timer);

	set_bit(VECNET_EV_RX_HELD, &q->events);
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
	if (ev & BIT(VECNET_EV_RX_HELD))
		vecnet_qcount_napi(q, rx_coalesce_timer);
}

static int vecnet_poll(struct napi_struct *napi, int budget)
{
	struct vecnet_queue *q = container_of(napi, struct vecnet_queue, napi);
	unsigned long ev = xchg(&q->events, 0);
	int work;

	vecnet_count_events(q, ev);
	/*
	 * A blocked sender tries again only when the host or a timer says;
	 * while the queue's own signal is off (rx-usecs) the host's "room
	 * again" raises none, and rx_timer's polls stand in for it
	 */
	vecnet_tx_poll(q, (ev & (BIT(VECNET_EV_WRITE) | BIT(VECNET_EV_RETRY) |
				 BIT(VECNET_EV_TIMEOUT))) ||
			  (q->rx_held & VECNET_RX_OWN));
	work = vecnet_rx(q, budget);
	if (work < budget)
		napi_complete_done(napi, work);
	return work;
}

/* ---- the link check ----------------------------------------------------- */

/*
 * The probe found the peer (@restarted: a new one in place of the one
 * before).  A peer found anew is asked for headers first; with vnet=1
 * the carrier waits for its answer.
 */
static void vecnet_link_present(struct vecnet_dev *vn, bool restarted)
{
	struct net_device *dev = vn->dev;
	bool was_on = netif_carrier_ok(dev);

	if (vecnet_peer_fresh(vn) || restarted)
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
		vecnet_peer_announce(vn);
	} else if (was_on && restarted) {
		vecnet_count_link(vn, peer_back);
		netdev_info(dev, "peer restarted\n");
		vecnet_peer_announce(vn);
	}
	vecnet_kick(vn);
}

/*
 * Reconnects a lost peer, and checks a present one once a second; when
 * it looks next is vecnet_peer_probed()'s to say
 */
static void vecnet_link_check(struct work_struct *work)
{
	struct vecnet_dev *vn = container_of(to_delayed_work(work),
					     struct vecnet_dev, link.work);
	int err;

	vecnet_peer_probing(vn);
	err = vn->transport->probe_peer(vn);
	/*
	 * VECNET_PEER_HELD: the carrier was on when the probe looked; a
	 * send may have taken it away since, and the probe has no say in
	 * that
	 */
	if (err >= 0 && err != VECNET_PEER_HELD)
		vecnet_link_present(vn, err == VECNET_PEER_NEW);
	vecnet_peer_probed(vn, err);
}

/* ---- host descriptors and interrupts ------------------------------------ */

/* close() for transports whose only host objects are the descriptors */
void vecnet_close_fd(struct vecnet_dev *vn)
{
	unsigned int i;

	if (vn->host.tx_fd >= 0)
		vecnet_user_close(vn->host.tx_fd);
	vn->host.tx_fd = -1;
	/* what a switch passed may wait in queue 0's socket still */
	if (vn->host.fd >= 0 && vn->chan.want)
		vecnet_chan_close_sock(vn, vn->host.fd);
	else if (vn->host.fd >= 0)
		vecnet_user_close(vn->host.fd);
	vn->host.fd = -1;
	/* ...and in a further queue's, with a channel per queue */
	for (i = 1; i < VECNET_QUEUES_MAX; i++) {
		if (vn->q[i].fd >= 0 && vn->chan.want)
			vecnet_chan_close_sock(vn, vn->q[i].fd);
		else if (vn->q[i].fd >= 0)
			vecnet_user_close(vn->q[i].fd);
		vn->q[i].fd = -1;
	}
}

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

/*
 * NAPI instances exist for the queues that are up, and only while they
 * are: added and enabled when the device comes up, disabled and deleted
 * when it goes down, all under the device's instance lock.  The core
 * lists a device's instances for netlink with the newest id first, and
 * assumes that every listed instance can be switched to a thread and
 * back: one listed but disabled makes "echo 0 > threaded" wait for it
 * forever.  Each queue's instance keeps its settings and id by index
 * (netif_napi_add_config) across downs and channel changes; queue K is
 * first enabled after queues 0 to K - 1 are, so its id is above theirs
 * and the core's sorted insertion puts it in front of them.
 */
static void vecnet_napis_add(struct vecnet_dev *vn)
{
	struct net_device *dev = vn->dev;
	unsigned int i;

	netdev_lock(dev);
	for (i = 0; i < vn->nq; i++) {
		netif_napi_add_config_locked(dev, &vn->q[i].napi, vecnet_poll,
					     i);
		napi_enable_locked(&vn->q[i].napi);
	}
	netdev_unlock(dev);
}

/*
 * Tell the core which interrupt wakes each queue's NAPI instance and
 * which instance serves each queue (netdev netlink: napi-get's irq,
 * queue-get's napi-id), once the interrupts exist; @on false undoes it
 * before they go.
 */
static void vecnet_napis_link(struct vecnet_dev *vn, bool on)
{
	struct net_device *dev = vn->dev;
	unsigned int i;

	netdev_lock(dev);
	for (i = 0; i < vn->nq; i++) {
		struct napi_struct *napi = on ? &vn->q[i].napi : NULL;

		netif_napi_set_irq_locked(&vn->q[i].napi,
					  on ? vn->q[i].rx_irq : -1);
		netif_queue_set_napi(dev, i, NETDEV_QUEUE_TYPE_RX, napi);
		netif_queue_set_napi(dev, i, NETDEV_QUEUE_TYPE_TX, napi);
	}
	netdev_unlock(dev);
}

static void vecnet_napis_del(struct vecnet_dev *vn)
{
	struct net_device *dev = vn->dev;
	unsigned int i = vn->nq;

	netdev_lock(dev);
	while (i--) {
		napi_disable_locked(&vn->q[i].napi);
		netif_napi_del_locked(&vn->q[i].napi);
	}
	netdev_unlock(dev);
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
	/* disabled but listed: no threaded change may come in between */
	netdev_lock(vn->dev);
	napi_disable_locked(&q->napi);
	vecnet_q_irqs_free(q);
	spin_lock_bh(&q->tx.lock);
	vecnet_tx_drop_all(q);
	spin_unlock_bh(&q->tx.lock);
	vecnet_user_close(vn->host.fd);
	vn->host.fd = fd;
	err = vecnet_q_irqs_request(q);
	netif_napi_set_irq_locked(&q->napi, err ? -1 : q->rx_irq);
	napi_enable_locked(&q->napi);
	netdev_unlock(vn->dev);
	netif_tx_wake_all_queues(vn->dev);
	if (!err)
		vecnet_rx_wake(q, VECNET_RX_ALL);
	return err;
}

/* ---- net_device_ops ----------------------------------------------------- */

static void vecnet_q_reset(struct vecnet_queue *q)
{
	q->retry_ns = VECNET_RETRY_MIN_NS;
	q->tx_blocked = false;
	q->events = 0;
	/* the interrupts requested at up turn the host's signals on */
	q->rx_held = 0;
}

static int vecnet_open(struct net_device *dev)
{
	struct vecnet_dev *vn = netdev_priv(dev);
	bool peer_there;
	unsigned int i;
	int err;

	vn->rx_depth = vn->cfg.rx_depth;
	vn->tx_depth = vn->cfg.tx_depth;
	vn->nq = vn->cfg.queues;
	vn->batch = vn->cfg.vec ? vn->rx_depth : 1;
	vecnet_tx_big_setup(vn);
	for (i = 0; i < vn->nq; i++)
		vecnet_q_reset(&vn->q[i]);
	vecnet_peer_open(vn);
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

	vecnet_napis_add(vn);

	err = vecnet_irqs_request(vn);
	if (err)
		goto err_napi;
	vecnet_napis_link(vn, true);

	/* nothing fails from here on: the link works may run (vecnet_stop) */
	vecnet_peer_start(vn, peer_there);
	if (peer_there)
		vecnet_nego_start(vn);
	/* vnet=1: the carrier waits for the headers to be agreed */
	if (peer_there && vecnet_nego_carrier_ok(vn))
		netif_carrier_on(dev);
	else
		netif_carrier_off(dev);
	vecnet_peer_check_start(vn, peer_there);
	netif_tx_start_all_queues(dev);
	/* Edge-triggered: frames queued before the IRQ existed raise none */
	vecnet_kick(vn);
	/* Runs once the device is up, after this returns */
	if (peer_there)
		vecnet_peer_announce(vn);
	vn->opened = true;
	return 0;

err_napi:
	vecnet_napis_del(vn);
	vecnet_rings_free(vn);
err_close:
	vn->transport->close(vn);
	return err;
}

static int vecnet_stop(struct net_device *dev)
{
	struct vecnet_dev *vn = netdev_priv(dev);
	unsigned int i;

	/* a change could not bring it back up (vecnet_reshape) */
	if (!vn->opened)
		return 0;
	vn->opened = false;
	/* first the link check, then NAPI, then the announcement */
	vecnet_peer_stop_check(vn);
	netif_tx_disable(dev);
	vecnet_napis_link(vn, false);
	vecnet_irqs_free(vn, vn->nq);
	vecnet_napis_del(vn);
	vecnet_peer_stop(vn);
	for (i = 0; i < vn->nq; i++) {
		hrtimer_cancel(&vn->q[i].tx_timer);
		hrtimer_cancel(&vn->q[i].retry_timer);
		hrtimer_cancel(&vn->q[i].rx_timer);
	}
	vecnet_chan_close_all(vn);
	/*
	 * A transmit poll or a timer that ran after the first
	 * netif_tx_disable() may have woken a queue (it freed ring room with
	 * the carrier on).  vecnet_reshape() stops the device with the
	 * qdisc still running, so a woken queue would hand the next frame
	 * to rings about to go.  With NAPI, the timers and the link work
	 * all stopped nothing wakes a queue any more: stop them for good.
	 */
	netif_carrier_off(dev);
	netif_tx_disable(dev);
	/* what the rings still hold is counted as dropped */
	vecnet_rings_free(vn);
	vn->transport->close(vn);
	vecnet_nego_stop(vn);
	vecnet_mq_stop(vn);
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

void vecnet_shape_get(struct net_device *dev, struct vecnet_shape *s)
{
	struct vecnet_dev *vn = netdev_priv(dev);

	s->queues = vn->cfg.queues;
	s->rx_depth = vn->cfg.rx_depth;
	s->tx_depth = vn->cfg.tx_depth;
	s->mtu = dev->mtu;
}

static int vecnet_shape_set(struct net_device *dev,
			    const struct vecnet_shape *s)
{
	struct vecnet_dev *vn = netdev_priv(dev);
	int err;

	if (s->queues != vn->cfg.queues) {
		err = vecnet_set_real_queues(dev, s->queues);
		if (err)
			return err;
	}
	vn->cfg.rx_depth = s->rx_depth;
	vn->cfg.tx_depth = s->tx_depth;
	WRITE_ONCE(dev->mtu, s->mtu);
	return 0;
}

/*
 * The queues (ethtool -L), the rings (-G) or the MTU
 * change to @s.  The rings, their buffers and the host descriptors are
 * made for them when the device comes up, so a device that is up goes
 * down and up again inside: its queues stop, what its rings held is
 * counted as dropped, as at any down, and the peer is asked anew.
 * Should it not come up so, it comes back as it was.
 */
int vecnet_reshape(struct net_device *dev, const struct vecnet_shape *s,
		   const char *what)
{
	struct vecnet_shape old;
	int err;

	ASSERT_RTNL();
	if (!netif_running(dev))
		return vecnet_shape_set(dev, s);
	vecnet_shape_get(dev, &old);
	vecnet_stop(dev);
	err = vecnet_shape_set(dev, s);
	if (!err)
		err = vecnet_open(dev);
	if (!err)
		return 0;
	netdev_err(dev, "%s: cannot come up with %u queues, rings %u/%u, mtu %u (%d); back as it was\n",
		   what, s->queues, s->rx_depth, s->tx_depth, s->mtu, err);
	if (vecnet_shape_set(dev, &old) || vecnet_open(dev))
		netdev_err(dev, "%s: nor as it was: no carrier until the device goes down and up\n",
			   what);
	return err;
}

/* ethtool -L: @n queues */
int vecnet_set_queues(struct net_device *dev, unsigned int n)
{
	struct vecnet_shape s;

	vecnet_shape_get(dev, &s);
	s.queues = n;
	return vecnet_reshape(dev, &s, "ethtool -L");
}

/* The rings and the host buffers are sized for the MTU: made anew */
static int vecnet_change_mtu(struct net_device *dev, int mtu)
{
	struct vecnet_shape s;

	vecnet_shape_get(dev, &s);
	s.mtu = mtu;
	return vecnet_reshape(dev, &s, "mtu");
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
	if (vn->chan.want) {
		spin_lock_bh(&vn->q[0].tx.lock);
		vecnet_chan_kill_all(vn);
		spin_unlock_bh(&vn->q[0].tx.lock);
	}
	if (!vn->transport->mac_changed)
		return err;
	return vn->transport->mac_changed(vn);
}

/*
 * A frame sent ends a one-way stream (adaptive-rx): a queue whose
 * receive signals are off polls now and turns them back on, instead of
 * at its timer, so that the answer to the next frame waits for nothing
 */
static void vecnet_rx_answered(struct vecnet_dev *vn)
{
	unsigned int i;

	if (!READ_ONCE(vn->coal.rx_adaptive))
		return;
	for (i = 0; i < vn->nq; i++)
		if (unlikely(READ_ONCE(vn->q[i].rx_held)))
			vecnet_qkick(&vn->q[i]);
}

/* Nothing is ever handed back: a frame is queued or dropped and counted */
static netdev_tx_t vecnet_start_xmit(struct sk_buff *skb,
				     struct net_device *dev)
{
	vecnet_rx_answered(netdev_priv(dev));
	if (unlikely(skb->len > VECNET_GSO_FRAME) && skb_is_gso(skb))
		return vecnet_xmit_big(skb, dev);
	vecnet_xmit(skb, dev);
	return NETDEV_TX_OK;
}

static const struct net_device_ops vecnet_netdev_ops = {
	.ndo_open		= vecnet_open,
	.ndo_stop		= vecnet_stop,
	.ndo_start_xmit		= vecnet_start_xmit,
	.ndo_select_queue	= vecnet_select_queue,
	.ndo_set_mac_address	= vecnet_set_mac,
	.ndo_validate_addr	= eth_validate_addr,
	.ndo_change_mtu		= vecnet_change_mtu,
	.ndo_tx_timeout		= vecnet_tx_timeout,
	.ndo_fix_features	= vecnet_fix_features,
	.ndo_features_check	= vecnet_features_check,
	.ndo_set_features	= vecnet_set_features,
};

/* ---- set-up ------------------------------------------------------------- */

/*
 * The transport's flags, or more that its options turn on (unixdgram's
 * vnet=1): a virtio_net_hdr on every frame brings the offloads with it.
 */
void vecnet_add_flags(struct vecnet_dev *vn, u32 flags)
{
	struct net_device *dev = vn->dev;

	vn->flags |= flags;
	if (flags & VECNET_TF_VNET_HDR) {
		vn->host.rx_hdr_len = sizeof(struct virtio_net_hdr);
		vn->host.tx_hdr_len = sizeof(struct virtio_net_hdr);
		dev->hw_features |= VECNET_VNET_FEATURES | NETIF_F_GRO_HW;
		dev->features |= VECNET_VNET_FEATURES;
	}
	/*
	 * Room for a header in every transmit slot, used once agreed.  What
	 * arrives with a header needs no checksum check here: rx-checksumming
	 * is fixed on, which also keeps rx-gro-hw (below) possible: the
	 * stack allows that only with receive checksums.
	 */
	if (flags & VECNET_TF_NEGOTIATE) {
		vn->host.tx_hdr_len = sizeof(struct virtio_net_hdr);
		dev->features |= NETIF_F_RXCSUM;
	}
	/*
	 * Super-frames come whether asked for or not, and the receive
	 * buffers are always sized for them: rx-gro-hw starts on, and may
	 * go off at any time (generic XDP turns it off), after which the
	 * device cuts them itself (vecnet_rx_segment)
	 */
	if (flags & VECNET_TF_RX_GSO) {
		dev->hw_features |= NETIF_F_GRO_HW;
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
	struct vecnet_dev *vn = netdev_priv(dev);

	/*
	 * Once: the first time the device has more than one queue.  After
	 * that, threaded is what the user makes it.
	 */
	if (vn->napi_spread || dev->real_num_tx_queues <= 1)
		return;
	vn->napi_spread = true;
	if (!dev->threaded &&
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
	hrtimer_setup(&q->rx_timer, vecnet_rx_timer_fn, CLOCK_MONOTONIC,
		      HRTIMER_MODE_REL);
}

/* A new device: its queues and the link works (NAPI comes with up) */
void vecnet_core_init(struct vecnet_dev *vn)
{
	struct net_device *dev = vn->dev;
	unsigned int i;

	for (i = 0; i < VECNET_QUEUES_MAX; i++)
		vecnet_q_init(vn, i);
	vecnet_peer_init(vn, vecnet_link_check);
	dev->netdev_ops = &vecnet_netdev_ops;
	netif_carrier_off(dev);
}

/*
 * uml_dir/umid/, where transports put the host objects they name.  Only
 * boot code may ask UML for it, so it is read once at boot, before the
 * first device, and kept for devices added later through mconsole.
 */
static char vecnet_dir[VECNET_UNIX_PATH_MAX];

void __init vecnet_run_dir_init(void)
{
	if (umid_file_name("", vecnet_dir, sizeof(vecnet_dir)))
		vecnet_dir[0] = '\0';
}

const char *vecnet_run_dir(void)
{
	return vecnet_dir;
}
