// SPDX-License-Identifier: GPL-2.0
/*
 * vecnet: shortcut channels (unixdgram, headers agreed, shortcut=1).
 *
 * A switch that sees two of its guests exchange unicast frames can take
 * itself out of their way: it makes a datagram socket pair and hands one
 * end to each guest, in a CHAN message naming the MAC address behind the
 * other end.  From then on the guest sends that address's untagged
 * frames into its end, with their virtio-net headers, and the other
 * guest receives them straight from there: one host copy each way, as
 * on a tap, and no third process.  Everything else (broadcast,
 * multicast, other addresses, tagged frames) still goes to the switch.
 *
 * The receiving guest does not trust its end blindly: a channel carries
 * frames from the one address it was opened for, each with a header,
 * and anything else is dropped (rx_chan_bad).  The switch withdraws a
 * channel with UNCHAN (the address moved, aged out or its port went);
 * a send refused because the other end closed drops it too, and the
 * frames queued for it go through the switch instead.
 *
 * A channel belongs to the queue whose socket its CHAN came on: queue 0,
 * or with a switch that offers a channel per queue (MODE with F_CHANQ,
 * which our HELLO asks for when the device has several queues) queue k
 * as well, whose channel reaches queue k of the other guest.  Each queue
 * has VECNET_CHAN_MAX slots of its own (vn->chan.ch[k]).  A channel is
 * read in its queue's NAPI, its interrupt schedules that NAPI, and its
 * frames wait in that queue's ring (tx->chan names the slot).  Transmit
 * keeps a frame on the queue the stack picked when that queue has an
 * ACTIVE channel for its destination, and steers it to queue 0 when
 * only queue 0 has one (a peer with fewer queues; vecnet_chan_dest()).
 * The UNCHAN of the switch names an address and withdraws its channel on
 * every queue; ours, when a channel of any queue closes, asks it to.
 *
 * A channel changes state under its queue's tx.lock: FREE to PENDING
 * when NAPI takes an offer, PENDING to ACTIVE in the work once the
 * descriptor has an interrupt, and PENDING or ACTIVE to DYING from
 * anywhere.  What acts on every queue's channels (kill_all, a revoke,
 * an offer's check of the headers) holds queue 0's tx.lock and takes
 * each further queue's inside it, the order of struct vecnet_queue; the
 * transmit path of queue k holds queue k's alone, which suffices for
 * its own channels.  The work closes a DYING channel after an RCU grace
 * period, so NAPI, which reads ACTIVE channels without the lock, never
 * reads a closed descriptor.  Transmit picks ACTIVE channels only, and
 * a channel that dies takes its queued frames back to the queue's
 * socket, to the switch.
 *
 * Descriptors come from outside the guest, and the host lets the sender
 * choose one whose close() blocks (a file on a FUSE mount whose daemon
 * never answers, a TCP socket lingering on a peer that never reads).
 * So queue 0 takes them only while a switch says it offers channels
 * (MODE with F_CHAN), and the further queues only while it says it
 * offers them a channel each (F_CHANQ too); every other socket of the
 * device, channels included, has the host refuse them to the sender
 * (SO_PASSRIGHTS=0, Linux 6.16 and later).  A CHAN on a queue that did
 * not agree to one is refused and counted (chan_refused), as is one with
 * no room left on its queue.  And any descriptor a peer passed, the ones
 * the device does not take and the channels it closes, is closed by a
 * host thread of its own (vecnet_user_close_passed), never by a vCPU,
 * NAPI or a work item.
 */

#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/skbuff.h>
#include <linux/virtio_net.h>
#include <irq_kern.h>
#include "vecnet.h"
#include "vecnet_chan.h"
#include "vecnet_nego.h"
#include "vecnet_parse.h"
#include "vecnet_ring.h"
#include "vecnet_stats.h"
#include "vecnet_user.h"

/*
 * A channel that says "later" for this long is given up (a stopped
 * guest).  A live guest on a busy host, or on a debug kernel, can leave
 * its socket full for tens of milliseconds; it should keep its channel.
 * Shorter than TCP's least retransmission timeout, so the other flows
 * waiting behind in the ring lose nothing meanwhile.
 */
#define VECNET_CHAN_STALL_NS	(100 * NSEC_PER_MSEC)

static bool vecnet_chan_used(const struct vecnet_chan *c)
{
	return c->state != VECNET_CHAN_FREE;
}

/*
 * Tell the switch that our channel to @mac is closed, so that it forgets
 * it and may offer a new one later.  Sent at once, ahead of the ring (a
 * stalled channel leaves the ring full): it is no format marker.  When
 * the host says "later", the switch learns it at our next HELLO.
 */
static void vecnet_chan_tell(struct vecnet_dev *vn, const u8 *mac)
{
	struct vecnet_msg m;

	vecnet_msg_init(&m, VECNET_MSG_UNCHAN);
	memcpy(m.mac, mac, ETH_ALEN);
	vecnet_user_send(vn->host.fd, &m, sizeof(m));
}

/*
 * Stop using @q's channel @idx and close it soon; @tell: the guest gives
 * it up, and says so to the switch
 */
static void vecnet_chan_drop(struct vecnet_queue *q, unsigned int idx,
			     bool tell)
{
	struct vecnet_dev *vn = q->vn;
	struct vecnet_chan *c = &vn->chan.ch[q->index][idx];

	lockdep_assert_held(&q->tx.lock);
	if (c->state != VECNET_CHAN_PENDING && c->state != VECNET_CHAN_ACTIVE)
		return;
	if (c->state == VECNET_CHAN_ACTIVE)
		WRITE_ONCE(vn->chan.n[q->index], vn->chan.n[q->index] - 1);
	WRITE_ONCE(c->state, VECNET_CHAN_DYING);
	/* what waits for it goes to the switch, which forwards it */
	vecnet_tx_unsteer(q, idx);
	if (tell)
		vecnet_chan_tell(vn, c->mac);
	schedule_work(&vn->chan.work);
}

/*
 * @fn on every queue that may own channels, each further one under its
 * own tx.lock, inside queue 0's
 */
static void vecnet_chan_each_queue(struct vecnet_dev *vn, const u8 *mac,
				   void (*fn)(struct vecnet_queue *q,
					      const u8 *mac))
{
	unsigned int k;

	lockdep_assert_held(&vn->q[0].tx.lock);
	fn(&vn->q[0], mac);
	for (k = 1; k < VECNET_QUEUES_MAX; k++) {
		struct vecnet_queue *q = &vn->q[k];

		spin_lock_nested(&q->tx.lock, SINGLE_DEPTH_NESTING);
		fn(q, mac);
		spin_unlock(&q->tx.lock);
	}
}

static int vecnet_chan_find(const struct vecnet_queue *q, const u8 *mac)
{
	unsigned int i;

	for (i = 0; i < VECNET_CHAN_MAX; i++) {
		const struct vecnet_chan *c = &q->vn->chan.ch[q->index][i];

		if ((c->state == VECNET_CHAN_PENDING ||
		     c->state == VECNET_CHAN_ACTIVE) &&
		    ether_addr_equal(c->mac, mac))
			return i;
	}
	return -1;
}

/* @q's channel to @mac goes (NULL: all) */
static void vecnet_chan_kill_q(struct vecnet_queue *q, const u8 *mac)
{
	unsigned int i;
	int found;

	lockdep_assert_held(&q->tx.lock);
	if (mac) {
		found = vecnet_chan_find(q, mac);
		if (found >= 0)
			vecnet_chan_drop(q, found, false);
		return;
	}
	for (i = 0; i < VECNET_CHAN_MAX; i++)
		vecnet_chan_drop(q, i, false);
}

/* The peer or our address changed: every channel goes */
void vecnet_chan_kill_all(struct vecnet_dev *vn)
{
	lockdep_assert_held(&vn->q[0].tx.lock);
	vecnet_chan_each_queue(vn, NULL, vecnet_chan_kill_q);
}

/*
 * From @q's NAPI: a descriptor a peer passed, not kept: closed where it
 * cannot block us
 */
void vecnet_chan_drop_fd(struct vecnet_queue *q, int fd)
{
	struct vecnet_dev *vn = q->vn;

	vecnet_qcount_napi(q, rx_fds_dropped);
	if (vecnet_user_close_passed(fd))
		net_warn_ratelimited("%s: descriptor %d from a peer left open: the host thread that closes them is stuck\n",
				     vn->dev->name, fd);
}

/*
 * Process context: close socket @fd of the device, whose queue may hold
 * descriptors a peer passed (a channel, a queue's socket)
 */
void vecnet_chan_close_sock(struct vecnet_dev *vn, int fd)
{
	void *ctl = kmalloc(VECNET_CMSG_LEN, GFP_KERNEL);

	if (ctl)
		vecnet_user_close_drained(fd, vn->rx_depth, ctl, VECNET_CMSG_LEN);
	else if (vecnet_user_close_passed(fd))
		vecnet_user_close(fd);
	kfree(ctl);
}

/* Process context, as the device opens: the closer thread is there */
int vecnet_chan_start(struct vecnet_dev *vn)
{
	static DEFINE_MUTEX(closer_lock);
	int err;

	if (!vn->chan.want)
		return 0;
	mutex_lock(&closer_lock);
	err = vecnet_user_closer_start();
	mutex_unlock(&closer_lock);
	if (err)
		netdev_err(vn->dev, "cannot start the host thread that closes passed descriptors: %d\n",
			   err);
	return err;
}

/*
 * shortcut=: channels carry headers, so a link takes them only where it
 * asks for headers (vnet= auto or 1); 0, or -EINVAL for a shortcut=1
 * where it cannot
 */
int vecnet_chan_setup(struct vecnet_dev *vn, const struct vecnet_args *args,
		      struct vecnet_err *err)
{
	vn->chan.want = vn->nego.want != VECNET_VNET_OFF &&
			vecnet_arg_u32(args, "shortcut", 1);
	if (vecnet_arg_str(args, "shortcut") && !vn->chan.want &&
	    vecnet_arg_u32(args, "shortcut", 1)) {
		vecnet_err_set(err, "vec%u: option 'shortcut': needs vnet=auto or vnet=1",
			       vn->cfg.index);
		return -EINVAL;
	}
	return 0;
}

/* The send buffer each channel's end gets: the link's own */
void vecnet_chan_set_sndbuf(struct vecnet_dev *vn, int sndbuf)
{
	vn->chan.sndbuf = sndbuf;
}

/*
 * May the switch pass descriptors to queue 0?  Only while it says it
 * offers channels; to the further queues only while it says it offers
 * one per queue (@per_queue).  A host without SO_PASSRIGHTS delivers
 * them anyway; the room every queue keeps for them (VECNET_CMSG_LEN)
 * and the closer see to those.
 */
void vecnet_chan_allow_fds(struct vecnet_dev *vn, bool allow, bool per_queue)
{
	unsigned int k;

	vn->chan.per_queue = per_queue;
	allow = allow && vn->chan.want;
	vecnet_user_pass_fds(vn->host.fd, allow);
	for (k = 1; k < vn->nq; k++)
		if (vn->q[k].fd >= 0)
			vecnet_user_pass_fds(vn->q[k].fd, allow && per_queue);
}

/*
 * A free channel slot of @q takes @fd, the channel to @mac; -ENOSPC when
 * @q has none free
 */
static int vecnet_chan_take(struct vecnet_queue *q, const u8 *mac, int fd)
{
	struct vecnet_chan *ch = q->vn->chan.ch[q->index];
	int i;

	lockdep_assert_held(&q->vn->q[0].tx.lock);
	lockdep_assert_held(&q->tx.lock);
	/* a new channel to the same address replaces the old one */
	vecnet_chan_kill_q(q, mac);
	for (i = 0; i < VECNET_CHAN_MAX; i++)
		if (!vecnet_chan_used(&ch[i]))
			break;
	if (i == VECNET_CHAN_MAX)
		return -ENOSPC;
	ch[i].fd = fd;
	ch[i].irq = 0;
	ch[i].stall_ns = 0;
	ch[i].tx_frame = VECNET_GSO_FRAME;
	ether_addr_copy(ch[i].mac, mac);
	WRITE_ONCE(ch[i].state, VECNET_CHAN_PENDING);
	return 0;
}

/*
 * From @q's NAPI, a CHAN message from the switch on @q's socket with the
 * descriptor @fd that came with it (or -1).  Takes @fd in every case:
 * kept, or dropped.  A further queue takes one only when the switch
 * said it offers a channel per queue.
 */
void vecnet_chan_offer(struct vecnet_queue *q, const u8 *mac, int fd)
{
	struct vecnet_dev *vn = q->vn;
	int err = -EINVAL;

	if (fd < 0 || !vn->chan.want || !is_valid_ether_addr(mac) ||
	    ether_addr_equal(mac, vn->dev->dev_addr) || q->index >= vn->nq)
		goto refuse;
	/* a datagram socket of ours from here on, with room for a ring */
	err = vecnet_user_chan_setup(fd, vn->chan.sndbuf);
	if (err)
		goto refuse;
	spin_lock(&vn->q[0].tx.lock);
	err = -EPROTO;
	if (!vn->nego.tx_vnet || !READ_ONCE(vn->nego.rx_vnet) ||
	    (q->index && !vn->chan.per_queue))
		goto refuse_locked;
	if (q->index)
		spin_lock_nested(&q->tx.lock, SINGLE_DEPTH_NESTING);
	err = vecnet_chan_take(q, mac, fd);
	if (q->index)
		spin_unlock(&q->tx.lock);
	if (err)
		goto refuse_locked;
	spin_unlock(&vn->q[0].tx.lock);
	schedule_work(&vn->chan.work);
	return;

refuse_locked:
	spin_unlock(&vn->q[0].tx.lock);
refuse:
	vecnet_qcount_napi(q, chan_refused);
	net_info_ratelimited("%s: refused a shortcut channel to %pM on queue %u: %d\n",
			     vn->dev->name, mac, q->index, err);
	if (fd >= 0)
		vecnet_chan_drop_fd(q, fd);
	/* the switch would take the pair for joined until the other sends */
	if (is_valid_ether_addr(mac) && !ether_addr_equal(mac, vn->dev->dev_addr))
		vecnet_chan_tell(vn, mac);
}

/*
 * From NAPI, an UNCHAN message: the switch withdraws the channel to
 * @mac, on every queue
 */
void vecnet_chan_revoke(struct vecnet_dev *vn, const u8 *mac)
{
	spin_lock(&vn->q[0].tx.lock);
	vecnet_chan_each_queue(vn, mac, vecnet_chan_kill_q);
	spin_unlock(&vn->q[0].tx.lock);
}

/* The channel of @q an outgoing frame takes */
u8 vecnet_chan_pick(const struct vecnet_queue *q, const struct sk_buff *skb)
{
	const struct ethhdr *eth = (const struct ethhdr *)skb->data;
	unsigned int i;

	lockdep_assert_held(&q->tx.lock);
	if (skb_headlen(skb) < ETH_HLEN || eth->h_proto == htons(ETH_P_8021Q))
		return VECNET_CHAN_NONE;
	for (i = 0; i < VECNET_CHAN_MAX; i++) {
		const struct vecnet_chan *c = &q->vn->chan.ch[q->index][i];

		/* one too long for the other guest goes to the switch */
		if (c->state == VECNET_CHAN_ACTIVE &&
		    ether_addr_equal(c->mac, eth->h_dest))
			return skb->len <= READ_ONCE(c->tx_frame) ? i :
			       VECNET_CHAN_NONE;
	}
	return VECNET_CHAN_NONE;
}

/*
 * Without a lock, for steering and for cutting super-frames: does a
 * frame go to a channel of queue @qi?  The longest frame that channel's
 * other guest takes, or 0.  A channel that opens or closes meanwhile
 * only moves a frame to the switch path.
 */
u32 vecnet_chan_dest(const struct vecnet_dev *vn, unsigned int qi,
		     const struct sk_buff *skb)
{
	const struct ethhdr *eth = (const struct ethhdr *)skb->data;
	unsigned int i;

	if (!READ_ONCE(vn->chan.n[qi]) || skb_headlen(skb) < ETH_HLEN ||
	    is_multicast_ether_addr(eth->h_dest))
		return 0;
	for (i = 0; i < VECNET_CHAN_MAX; i++) {
		const struct vecnet_chan *c = &vn->chan.ch[qi][i];

		if (READ_ONCE(c->state) == VECNET_CHAN_ACTIVE &&
		    ether_addr_equal(c->mac, eth->h_dest))
			return READ_ONCE(c->tx_frame);
	}
	return 0;
}

/*
 * The MODE a guest sends into a channel as it opens its end, when it
 * takes frames beyond 64 KiB (gso_max=): the longest it takes.  Other
 * guests send none, and get no frame beyond 64 KiB on the channel.
 */
static void vecnet_chan_say_frame(struct vecnet_dev *vn, struct vecnet_chan *c)
{
	struct vecnet_msg m;

	if (vecnet_frame_max(vn) <= VECNET_GSO_FRAME)
		return;
	vecnet_msg_init(&m, VECNET_MSG_MODE);
	m.mode.flags = cpu_to_be16(VECNET_MSG_F_VNET);
	m.mode.max_frame = cpu_to_be32(vecnet_frame_max(vn));
	vecnet_user_send(c->fd, &m, sizeof(m));
}

/*
 * From NAPI, a datagram of @len bytes on channel @c that is no frame:
 * the other guest's MODE, saying how long a frame it takes.  Returns
 * false for anything else, which the caller drops.  The channel's frames
 * to it may be that long, up to what this device takes itself.
 */
bool vecnet_chan_msg(struct vecnet_chan *c, const u8 *data, unsigned int len)
{
	const struct vecnet_msg *m = (const void *)data;

	if (len != sizeof(*m) ||
	    memcmp(m->magic, VECNET_MSG_MAGIC, VECNET_MSG_MAGIC_LEN) ||
	    m->version != VECNET_MSG_VERSION || m->type != VECNET_MSG_MODE ||
	    !(be16_to_cpu(m->mode.flags) & VECNET_MSG_F_VNET))
		return false;
	WRITE_ONCE(c->tx_frame, clamp_t(u32, be32_to_cpu(m->mode.max_frame),
					VECNET_GSO_FRAME,
					vecnet_frame_max(c->vn)));
	return true;
}

/*
 * A send on @q's channel @idx failed with @err.
 * Returns true when the channel is given up, and its frames go to the
 * switch: its other end closed, or it has said "later" for longer than
 * VECNET_CHAN_STALL_NS.  A guest that stopped reading must not hold up
 * the frames for everyone else in the ring; the switch has a queue per
 * port for it.  Else the ring waits, as for the switch.
 */
bool vecnet_chan_send_failed(struct vecnet_queue *q, unsigned int idx, int err)
{
	struct vecnet_chan *c = &q->vn->chan.ch[q->index][idx];
	u64 now;

	lockdep_assert_held(&q->tx.lock);
	switch (err) {
	case -ECONNREFUSED:	/* the other guest closed its end */
	case -ENOTCONN:
	case -EPIPE:
	case -ECONNRESET:
		vecnet_chan_drop(q, idx, true);
		return true;
	case -EAGAIN:
	case -ENOBUFS:
		now = ktime_get_ns();
		if (!c->stall_ns) {
			c->stall_ns = now;
			return false;
		}
		if (now - c->stall_ns < VECNET_CHAN_STALL_NS)
			return false;
		vecnet_qcount_tx(q, chan_stalled);
		vecnet_chan_drop(q, idx, true);
		return true;
	}
	return false;
}

/* @q's channel @idx took frames */
void vecnet_chan_sent(struct vecnet_queue *q, unsigned int idx)
{
	lockdep_assert_held(&q->tx.lock);
	q->vn->chan.ch[q->index][idx].stall_ns = 0;
}

/*
 * From NAPI, a frame of @len bytes (header included) in @data read from
 * channel @c.  Returns false to drop it.  It must come from the address
 * the channel was opened for, untagged, and go to ours: the switch would
 * have sent a frame for anyone else elsewhere.  A promiscuous device (a
 * bridge port) may have addresses of its own behind it, unknown here:
 * it takes any unicast destination.
 */
bool vecnet_chan_frame_ok(const struct vecnet_chan *c, const u8 *data,
			  unsigned int len)
{
	const struct net_device *dev = c->vn->dev;
	const struct ethhdr *eth;

	if (len < sizeof(struct virtio_net_hdr) + ETH_HLEN)
		return false;
	eth = (const struct ethhdr *)(data + sizeof(struct virtio_net_hdr));
	if (!ether_addr_equal(eth->h_source, c->mac) ||
	    is_multicast_ether_addr(eth->h_dest) ||
	    eth->h_proto == htons(ETH_P_8021Q))
		return false;
	return (READ_ONCE(dev->flags) & IFF_PROMISC) ||
	       ether_addr_equal(eth->h_dest, dev->dev_addr);
}

static irqreturn_t vecnet_chan_interrupt(int irq, void *data)
{
	struct vecnet_chan *c = data;

	vecnet_rx_wake(c->q, VECNET_RX_CHAN(c - c->vn->chan.ch[c->q->index]));
	return IRQ_HANDLED;
}

/* Process context: an interrupt for @c, PENDING, which then opens */
static void vecnet_chan_open(struct vecnet_dev *vn, struct vecnet_chan *c,
			     unsigned int idx)
{
	struct vecnet_queue *q = c->q;
	int irq;

	irq = um_request_irq(UM_IRQ_ALLOC, c->fd, IRQ_READ,
			     vecnet_chan_interrupt, 0, vn->dev->name, c);
	spin_lock_bh(&q->tx.lock);
	if (irq > 0)
		c->irq = irq;
	if (irq > 0 && c->state == VECNET_CHAN_PENDING) {
		/* NAPI reads fd once it sees ACTIVE */
		smp_store_release(&c->state, VECNET_CHAN_ACTIVE);
		WRITE_ONCE(vn->chan.n[q->index], vn->chan.n[q->index] + 1);
		vecnet_qcount_tx(q, chan_opened);
		vecnet_chan_say_frame(vn, c);
		netdev_dbg(vn->dev, "shortcut channel to %pM on queue %u\n",
			   c->mac, q->index);
	} else if (c->state == VECNET_CHAN_PENDING) {
		/* no interrupt left: the switch keeps the pair */
		vecnet_qcount_tx(q, chan_refused);
		vecnet_chan_drop(q, idx, true);
	}
	spin_unlock_bh(&q->tx.lock);
	/* frames that came before the interrupt raise no edge */
	vecnet_rx_wake(q, VECNET_RX_CHAN(idx));
}

/* Process context, after a grace period: DYING channel @c closes */
static void vecnet_chan_close(struct vecnet_dev *vn, struct vecnet_chan *c)
{
	struct vecnet_queue *q = c->q;

	if (c->irq > 0)
		um_free_irq(c->irq, c);
	/* datagrams queued before it was ours may hold descriptors */
	vecnet_chan_close_sock(vn, c->fd);
	spin_lock_bh(&q->tx.lock);
	c->irq = 0;
	c->fd = -1;
	WRITE_ONCE(c->state, VECNET_CHAN_FREE);
	vecnet_qcount_tx(q, chan_closed);
	spin_unlock_bh(&q->tx.lock);
}

/* Process context: interrupts for new channels, closing dead ones */
static void vecnet_chan_work(struct work_struct *work)
{
	struct vecnet_dev *vn = container_of(work, struct vecnet_dev,
					     chan.work);
	unsigned long dying[VECNET_QUEUES_MAX] = { 0 };
	bool any = false;
	unsigned int k, i;

	for (k = 0; k < VECNET_QUEUES_MAX; k++)
		for (i = 0; i < VECNET_CHAN_MAX; i++)
			if (READ_ONCE(vn->chan.ch[k][i].state) ==
			    VECNET_CHAN_PENDING)
				vecnet_chan_open(vn, &vn->chan.ch[k][i], i);
	for (k = 0; k < VECNET_QUEUES_MAX; k++) {
		for (i = 0; i < VECNET_CHAN_MAX; i++) {
			if (READ_ONCE(vn->chan.ch[k][i].state) ==
			    VECNET_CHAN_DYING) {
				__set_bit(i, &dying[k]);
				any = true;
			}
		}
	}
	if (!any)
		return;
	/* NAPI may be reading them still: it reads under RCU */
	synchronize_net();
	for (k = 0; k < VECNET_QUEUES_MAX; k++)
		for_each_set_bit(i, &dying[k], VECNET_CHAN_MAX)
			vecnet_chan_close(vn, &vn->chan.ch[k][i]);
}

/* The device goes down, NAPI and transmit are off: close every channel */
void vecnet_chan_close_all(struct vecnet_dev *vn)
{
	if (!vn->chan.want)
		return;
	spin_lock_bh(&vn->q[0].tx.lock);
	vecnet_chan_kill_all(vn);
	spin_unlock_bh(&vn->q[0].tx.lock);
	/* the work closes what is DYING, PENDING ones included */
	flush_work(&vn->chan.work);
}

void vecnet_chan_init(struct vecnet_dev *vn)
{
	unsigned int k, i;

	INIT_WORK(&vn->chan.work, vecnet_chan_work);
	for (k = 0; k < VECNET_QUEUES_MAX; k++) {
		for (i = 0; i < VECNET_CHAN_MAX; i++) {
			vn->chan.ch[k][i].vn = vn;
			vn->chan.ch[k][i].q = &vn->q[k];
			vn->chan.ch[k][i].fd = -1;
		}
	}
}
