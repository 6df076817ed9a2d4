// SPDX-License-Identifier: GPL-2.0
/*
 * vecnet: virtio-net headers agreed with the peer (unixdgram, vnet=auto
 * or vnet=1).
 *
 * The device sends HELLO, a 12-byte datagram (shorter than any Ethernet
 * frame: a peer that does not know it drops it as a runt), whenever it
 * finds a peer.  A peer that takes headers answers MODE: "my datagrams
 * after this one carry a virtio-net header".  The device then reads the
 * peer's datagrams that way, sends its own MODE, and from there sends
 * with headers: super-frames and pending checksums go as they are.  Each
 * direction changes at a marker in the stream of datagrams, which the
 * host keeps in order, so no frame is read in the wrong format.  A HELLO
 * from the peer (a guest on the other end of a direct link) says it
 * starts over in plain frames; it is answered the same way.
 *
 * A switch may also offer shortcut channels (vecnet_chan.c): a HELLO
 * with F_CHAN says the device takes them, a MODE with F_CHAN that the
 * switch offers them (until then the host refuses anyone a descriptor
 * to the device), CHAN hands one over (the other guest's MAC in bytes
 * 6-11, the descriptor alongside), UNCHAN withdraws it.  Starting over
 * closes them all.  A device with several queues also says F_CHANQ: it
 * takes a channel per queue, each CHAN on the socket of the queue that
 * is to own it; a MODE with F_CHANQ says the switch offers them, and
 * only then do the further sockets take descriptors.
 *
 * A device with several queues (queues=N) has a socket per queue.  Its
 * HELLO says F_MQ; a switch that takes further queues answers QUEUES
 * with a cookie (bytes 6-11) after its MODE, and each further socket
 * then sends JOIN with that cookie, which the switch echoes back on that
 * socket once the socket is part of the guest's port.  Only then does
 * transmit use the queue.  Datagrams on a further queue carry a header
 * whatever MODE said, both ways.  The cookie reaches only whoever reads
 * queue 0's socket, and starting over forgets it and every join.
 *
 * Receive state belongs to NAPI, transmit state to tx.lock.  The
 * offloads stay offered whatever the peer said: while the link is plain,
 * ndo_features_check has the stack segment and checksum each frame in
 * software, as for any device without them.
 */

#include <linux/skbuff.h>
#include "vecnet.h"
#include "vecnet_chan.h"
#include "vecnet_nego.h"
#include "vecnet_parse.h"
#include "vecnet_peer.h"
#include "vecnet_ring.h"
#include "vecnet_stats.h"
#include "vecnet_tx.h"
#include "vecnet_user.h"

/* HELLOs sent, one per link check, before the peer counts as plain */
#define VECNET_NEGO_TRIES	3

static bool vecnet_nego_wanted(const struct vecnet_dev *vn)
{
	return vn->nego.want != VECNET_VNET_OFF;
}

/*
 * Queue a message behind the frames in the
 * ring, without a header, and send it unless the host said "later".
 */
static void vecnet_nego_queue(struct vecnet_dev *vn, u8 type, u16 flags)
{
	struct vecnet_txq *tx = &vn->q[0].tx;
	struct vecnet_msg *m;
	struct sk_buff *skb;

	lockdep_assert_held(&vn->q[0].tx.lock);
	if (!tx->skbs || tx->count == vn->tx_depth)
		return;		/* tried again at the next link check */
	BUILD_BUG_ON(sizeof(*m) != VECNET_MSG_LEN);
	skb = alloc_skb(sizeof(*m), GFP_ATOMIC);
	if (!skb)
		return;
	m = skb_put(skb, sizeof(*m));
	vecnet_msg_init(m, type);
	m->mode.flags = cpu_to_be16(flags);
	m->mode.max_frame = cpu_to_be32(vecnet_frame_max(vn));
	vecnet_tx_queue_raw(vn, skb);
}

/*
 * The peer says it takes frames up to @frame
 * bytes.  Beyond 64 KiB (BIG TCP, a guest on a direct link with
 * gso_max= too) ours may be as long, up to what we take ourselves; a
 * peer that says less than 64 KiB still gets what headers always allowed.
 */
static void vecnet_nego_peer_frame(struct vecnet_dev *vn, u32 frame)
{
	lockdep_assert_held(&vn->q[0].tx.lock);
	frame = clamp_t(u32, frame, VECNET_GSO_FRAME, vecnet_frame_max(vn));
	if (frame != vn->peer.tx_frame && frame > VECNET_GSO_FRAME)
		netdev_info(vn->dev, "the peer takes super-frames of up to %u bytes\n",
			    frame);
	vecnet_peer_set_frame(vn, frame);
}

/* Our frames from here on carry headers */
static void vecnet_nego_send_mode(struct vecnet_dev *vn)
{
	lockdep_assert_held(&vn->q[0].tx.lock);
	vecnet_nego_queue(vn, VECNET_MSG_MODE, VECNET_MSG_F_VNET);
	WRITE_ONCE(vn->nego.tx_vnet, true);
}

/* What a HELLO asks for */
static u16 vecnet_nego_hello_flags(const struct vecnet_dev *vn)
{
	u16 f = VECNET_MSG_F_VNET;

	if (vn->chan.want)
		f |= VECNET_MSG_F_CHAN;
	if (vn->nq > 1)
		f |= VECNET_MSG_F_MQ;
	if (vn->chan.want && vn->nq > 1)
		f |= VECNET_MSG_F_CHANQ;
	return f;
}

/* Every further queue that is not part of the port yet asks to be */
static void vecnet_nego_join(struct vecnet_dev *vn)
{
	struct vecnet_msg m;
	unsigned int i;

	lockdep_assert_held(&vn->q[0].tx.lock);
	vecnet_msg_init(&m, VECNET_MSG_JOIN);
	memcpy(m.cookie, vn->mq.cookie, VECNET_MSG_COOKIE_LEN);
	for (i = 1; i < vn->nq; i++)
		if (!test_bit(i, &vn->mq.live))
			vecnet_user_send(vn->q[i].fd, &m, sizeof(m));
}

/* From NAPI: the switch's cookie for our further queues */
static void vecnet_nego_queues(struct vecnet_dev *vn,
			       const struct vecnet_msg *m)
{
	spin_lock(&vn->q[0].tx.lock);
	/* a new cookie: the joins made with the old one are gone */
	vecnet_mq_unjoin_all(vn);
	if (vn->nq > 1 && vn->nego.tx_vnet) {
		vecnet_mq_set_cookie(vn, m->cookie);
		vecnet_nego_join(vn);
	}
	spin_unlock(&vn->q[0].tx.lock);
}

/*
 * From a further queue's NAPI: is the @len bytes at @m the switch's
 * answer to that queue's JOIN (then the queue takes frames), or a CHAN
 * for a channel of this queue, which takes the descriptor at *@fd (@fd
 * not NULL) as vecnet_nego_rx() does?
 */
bool vecnet_nego_mq_rx(struct vecnet_queue *q, const u8 *m, unsigned int len,
		       int *fd)
{
	const struct vecnet_msg *msg = (const void *)m;
	struct vecnet_dev *vn = q->vn;

	if (len != sizeof(*msg) ||
	    memcmp(msg->magic, VECNET_MSG_MAGIC, VECNET_MSG_MAGIC_LEN) ||
	    msg->version != VECNET_MSG_VERSION ||
	    (msg->type != VECNET_MSG_JOIN && msg->type != VECNET_MSG_CHAN))
		return false;
	if (msg->type == VECNET_MSG_CHAN) {
		/* refused there unless the switch said F_CHANQ */
		vecnet_chan_offer(q, msg->mac, fd ? *fd : -1);
		if (fd)
			*fd = -1;
		return true;
	}
	spin_lock(&vn->q[0].tx.lock);
	if (vn->mq.cookie_ok &&
	    !memcmp(msg->cookie, vn->mq.cookie, VECNET_MSG_COOKIE_LEN) &&
	    !test_bit(q->index, &vn->mq.live)) {
		vecnet_mq_join(q);
		vecnet_qcount_napi(q, mq_joined);
		netdev_dbg(vn->dev, "queue %u joined\n", q->index);
	}
	spin_unlock(&vn->q[0].tx.lock);
	return true;
}

/* The peer's frames and ours go plain */
static void vecnet_nego_plain_again(struct vecnet_dev *vn)
{
	lockdep_assert_held(&vn->q[0].tx.lock);
	/* frames queued with headers would reach the peer as plain ones */
	if (vn->nego.tx_vnet)
		vecnet_tx_drop_queued(vn);
	WRITE_ONCE(vn->nego.tx_vnet, false);
	WRITE_ONCE(vn->nego.rx_vnet, false);
	vecnet_peer_set_frame(vn, VECNET_GSO_FRAME);
	vn->nego.agreed = false;
	if (vn->chan.want) {
		vecnet_chan_allow_fds(vn, false, false);
		vecnet_chan_kill_all(vn);
	}
	vecnet_mq_unjoin_all(vn);
}

/* Plain again, and ask the peer anew */
static void vecnet_nego_restart(struct vecnet_dev *vn)
{
	lockdep_assert_held(&vn->q[0].tx.lock);
	vecnet_nego_plain_again(vn);
	vn->nego.tries = 1;
	vecnet_nego_queue(vn, VECNET_MSG_HELLO, vecnet_nego_hello_flags(vn));
	vecnet_count_tx(vn, nego_hello);
}

/* A (new) peer is there: start over in plain frames and say HELLO */
void vecnet_nego_start(struct vecnet_dev *vn)
{
	if (!vecnet_nego_wanted(vn))
		return;
	spin_lock_bh(&vn->q[0].tx.lock);
	vecnet_nego_restart(vn);
	spin_unlock_bh(&vn->q[0].tx.lock);
}

/* Headers both ways: the peer's MODE came, and ours went */
static void vecnet_nego_agreed(struct vecnet_dev *vn)
{
	if (vn->nego.agreed)
		return;
	vn->nego.agreed = true;
	vecnet_count_tx(vn, nego_agreed);
	netdev_info(vn->dev, "virtio-net headers agreed with the peer\n");
	/* vnet=1 held the carrier back for this */
	if (vn->nego.want == VECNET_VNET_ON && !netif_carrier_ok(vn->dev))
		vecnet_peer_check_now(vn);
}

/*
 * From NAPI: a datagram of @len bytes, shorter than an Ethernet header,
 * and in *@fd (@fd not NULL) a descriptor that came with it, which a CHAN
 * message takes: *@fd is -1 then.  Returns true when it was a negotiation
 * message (taken or counted).
 */
bool vecnet_nego_rx(struct vecnet_dev *vn, const u8 *m, unsigned int len,
		    int *fd)
{
	const struct vecnet_msg *msg = (const void *)m;
	u16 flags;

	if (len < VECNET_MSG_MAGIC_LEN ||
	    memcmp(m, VECNET_MSG_MAGIC, VECNET_MSG_MAGIC_LEN))
		return false;
	/* a further queue's JOIN ack never comes on the main socket */
	if (len != sizeof(*msg) || msg->version != VECNET_MSG_VERSION ||
	    msg->type < VECNET_MSG_HELLO || msg->type > VECNET_MSG_QUEUES ||
	    !vecnet_nego_wanted(vn)) {
		vecnet_count_napi(vn, rx_nego_bad);
		return true;
	}
	switch (msg->type) {
	case VECNET_MSG_CHAN:
		/* vecnet_chan_offer() keeps the descriptor or drops it */
		vecnet_chan_offer(&vn->q[0], msg->mac, fd ? *fd : -1);
		if (fd)
			*fd = -1;
		return true;
	case VECNET_MSG_UNCHAN:
		vecnet_chan_revoke(vn, msg->mac);
		return true;
	case VECNET_MSG_QUEUES:
		vecnet_nego_queues(vn, msg);
		return true;
	}
	flags = be16_to_cpu(msg->mode.flags);
	spin_lock(&vn->q[0].tx.lock);
	if (msg->type == VECNET_MSG_HELLO) {
		/* the peer starts over in plain frames; so do we, then answer */
		vecnet_nego_plain_again(vn);
		if (flags & VECNET_MSG_F_VNET)
			vecnet_nego_send_mode(vn);
		vecnet_nego_peer_frame(vn, be32_to_cpu(msg->mode.max_frame));
	} else {
		vecnet_nego_peer_frame(vn, be32_to_cpu(msg->mode.max_frame));
		WRITE_ONCE(vn->nego.rx_vnet, !!(flags & VECNET_MSG_F_VNET));
		if (vn->chan.want) {
			bool chan = vn->nego.rx_vnet && (flags & VECNET_MSG_F_CHAN);

			vecnet_chan_allow_fds(vn, chan,
					      chan && (flags & VECNET_MSG_F_CHANQ));
		}
		if (vn->nego.rx_vnet && !vn->nego.tx_vnet)
			vecnet_nego_send_mode(vn);
		if (vn->nego.rx_vnet)
			vecnet_nego_agreed(vn);
	}
	vecnet_tx_kick_flush(vn);
	spin_unlock(&vn->q[0].tx.lock);
	return true;
}

/*
 * From the link check, once a second while the peer is there: ask again
 * until it answers, and say once when it will not.
 */
void vecnet_nego_tick(struct vecnet_dev *vn)
{
	bool said = false;

	if (!vecnet_nego_wanted(vn))
		return;
	spin_lock_bh(&vn->q[0].tx.lock);
	if (!vn->nego.agreed && vn->nego.tries < VECNET_NEGO_TRIES) {
		vn->nego.tries++;
		vecnet_nego_queue(vn, VECNET_MSG_HELLO,
				  vecnet_nego_hello_flags(vn));
		vecnet_count_tx(vn, nego_hello);
		said = vn->nego.tries == VECNET_NEGO_TRIES;
	}
	/* a JOIN or its answer may have been lost: ask again */
	if (vn->mq.cookie_ok)
		vecnet_nego_join(vn);
	spin_unlock_bh(&vn->q[0].tx.lock);
	if (!said)
		return;
	if (vn->nego.want == VECNET_VNET_ON)
		netdev_warn(vn->dev,
			    "the peer does not negotiate virtio-net headers, which vnet=1 requires: carrier off\n");
	else
		netdev_info(vn->dev,
			    "the peer does not negotiate virtio-net headers: plain frames\n");
}

/* vnet=1: no carrier until the headers are agreed */
bool vecnet_nego_carrier_ok(const struct vecnet_dev *vn)
{
	return vn->nego.want != VECNET_VNET_ON || vn->nego.agreed;
}

/* No header on the link now: the stack does the offloads in software */
bool vecnet_nego_plain(const struct vecnet_dev *vn)
{
	return !READ_ONCE(vn->nego.tx_vnet);
}

/* vnet= is 0, 1 or auto */
int vecnet_nego_setup(struct vecnet_dev *vn, const char *val,
		      struct vecnet_err *err)
{
	vecnet_peer_set_frame(vn, VECNET_GSO_FRAME);
	if (!val || !strcmp(val, "auto")) {
		vn->nego.want = VECNET_VNET_AUTO;
	} else if (!strcmp(val, "1")) {
		vn->nego.want = VECNET_VNET_ON;
	} else if (!strcmp(val, "0")) {
		vn->nego.want = VECNET_VNET_OFF;
	} else {
		vecnet_err_set(err, "vec%u: option 'vnet': '%s' is not 0, 1 or auto",
			       vn->cfg.index, val);
		return -EINVAL;
	}
	return 0;
}

/* gso_max=: super-frames beyond 64 KiB need headers to say what they are */
int vecnet_nego_gso_max(struct vecnet_dev *vn, u32 gso_max,
			struct vecnet_err *err)
{
	if (gso_max > VECNET_GSO_MAX_DEFAULT && vn->nego.want == VECNET_VNET_OFF) {
		vecnet_err_set(err, "vec%u: option 'gso_max': needs vnet=auto or vnet=1",
			       vn->cfg.index);
		return -EINVAL;
	}
	vn->nego.gso_max = gso_max;
	return 0;
}

/* The device went down: plain frames until a peer agrees again */
void vecnet_nego_stop(struct vecnet_dev *vn)
{
	vn->nego.tx_vnet = false;
	vn->nego.rx_vnet = false;
	vn->nego.agreed = false;
	vn->nego.tries = 0;
	vecnet_peer_set_frame(vn, VECNET_GSO_FRAME);
}
