// SPDX-License-Identifier: GPL-2.0
/*
 * vecnet: the link to the peer, and its state (vn->link, vn->mq).
 *
 * Which queues take frames: a unixdgram device's further queues join
 * once the switch has said so (the messages are vecnet_nego.c's), the
 * others always.  What a lost peer costs: the rings' frames and the
 * joins.  How long the link check (the core's work, which asks the
 * transport and then the negotiation) waits before it looks for a lost
 * peer again, backing off; why the peer's socket did not answer, in
 * words and in the peer_* counters; and the announcement to a peer
 * that can hear it.  Transmit and receive report a lost peer here.
 */

#include <linux/rtnetlink.h>
#include <linux/vecnet.h>
#include "vecnet.h"
#include "vecnet_chan.h"
#include "vecnet_peer.h"
#include "vecnet_ring.h"
#include "vecnet_stats.h"
#include "vecnet_transport.h"
#include "vecnet_user.h"

/* Reconnect attempts back off to the once-a-second check */
#define VECNET_LINK_CHECK_MS	1000
/* how long an announcement waits for the link watch: 50 x 20 ms */
#define VECNET_ANNOUNCE_WAITS	50
#define VECNET_ANNOUNCE_WAIT_MS	20

/* ---- the queues that take frames ---------------------------------------- */

/* @fn on every further queue, under its tx.lock, inside queue 0's */
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

/* The queue takes frames again, or not */
static void vecnet_q_live(struct vecnet_queue *q, bool live)
{
	struct vecnet_dev *vn = q->vn;

	lockdep_assert_held(&q->tx.lock);
	if (live)
		set_bit(q->index, &vn->mq.live);
	else
		clear_bit(q->index, &vn->mq.live);
}

static void vecnet_q_unjoin(struct vecnet_queue *q)
{
	/* further unixdgram queues wait to be joined again */
	if (q->vn->flags & VECNET_TF_NEGOTIATE) {
		vecnet_q_live(q, false);
		q->vn->mq.cookie_ok = false;
	}
	vecnet_tx_drop_all(q);
}

/* Queue @q takes frames from now on */
void vecnet_mq_join(struct vecnet_queue *q)
{
	lockdep_assert_held(&q->vn->q[0].tx.lock);
	spin_lock_nested(&q->tx.lock, SINGLE_DEPTH_NESTING);
	vecnet_q_live(q, true);
	spin_unlock(&q->tx.lock);
}

/* The further queues wait again */
void vecnet_mq_unjoin_all(struct vecnet_dev *vn)
{
	vecnet_for_further_queues(vn, vecnet_q_unjoin);
}

/*
 * The switch's cookie for the further queues' JOINs; after
 * vecnet_mq_unjoin_all(), so that every queue's tx.lock sees it change
 */
void vecnet_mq_set_cookie(struct vecnet_dev *vn, const u8 *cookie)
{
	lockdep_assert_held(&vn->q[0].tx.lock);
	memcpy(vn->mq.cookie, cookie, VECNET_MSG_COOKIE_LEN);
	vn->mq.cookie_ok = true;
}

/* ---- a peer gone ------------------------------------------------------- */

/* A host call's @err: the peer is gone (else frames were refused) */
bool vecnet_peer_gone(const struct vecnet_dev *vn, int err)
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
		return vn->host.conn;
	}
	return false;
}

/* From xmit, NAPI or the link work */
void vecnet_peer_lost(struct vecnet_dev *vn)
{
	struct vecnet_queue *q0 = &vn->q[0];

	lockdep_assert_held(&q0->tx.lock);
	if (vn->chan.want)
		vecnet_chan_kill_all(vn);
	vecnet_tx_drop_all(q0);
	vecnet_for_further_queues(vn, vecnet_q_unjoin);
	/* whoever answers next is asked for headers anew */
	WRITE_ONCE(vn->link.fresh, true);
	if (!netif_carrier_ok(vn->dev))
		return;
	netif_carrier_off(vn->dev);
	vecnet_count_tx(vn, peer_lost);
	netdev_info(vn->dev, "peer gone, carrier off\n");
	/* without a carrier, the link check runs on its own schedule */
	if (vn->transport->probe_peer)
		mod_delayed_work(system_percpu_wq, &vn->link.work,
				 msecs_to_jiffies(vn->link.backoff_ms));
}

/* A connection ended under receive (end of file, or a reset) */
void vecnet_peer_lost_rx(struct vecnet_dev *vn)
{
	spin_lock(&vn->q[0].tx.lock);
	vecnet_peer_lost(vn);
	spin_unlock(&vn->q[0].tx.lock);
}

/*
 * A further queue found the peer gone: it drops what it holds, and the
 * link work, which may take queue 0's lock, says so for the device
 */
void vecnet_peer_q_gone(struct vecnet_queue *q)
{
	struct vecnet_dev *vn = q->vn;

	lockdep_assert_held(&q->tx.lock);
	vecnet_tx_drop_all(q);
	if (vn->transport->probe_peer)
		mod_delayed_work(system_percpu_wq, &vn->link.work, 0);
}

/*
 * A send went through: a peer lost later is looked for soon again (from
 * any queue's transmit, beside the link check: neither holds a lock)
 */
void vecnet_peer_sent(struct vecnet_dev *vn)
{
	WRITE_ONCE(vn->link.backoff_ms, VECNET_LINK_MIN_MS);
}

/*
 * The peer takes frames of up to @frame bytes: as its MODE said
 * (vecnet_nego.c), or 64 KiB once the host refused a longer one
 * (vecnet_tx.c).  Transmit reads it without a lock.
 */
void vecnet_peer_set_frame(struct vecnet_dev *vn, u32 frame)
{
	WRITE_ONCE(vn->peer.tx_frame, frame);
}

/* Something the link check decides changed: it looks now */
void vecnet_peer_check_now(struct vecnet_dev *vn)
{
	schedule_delayed_work(&vn->link.work, 0);
}

/*
 * The link check found a peer: is it to be asked for headers anew (none
 * was asked since the device came up or the peer was lost)?  Asks once.
 */
bool vecnet_peer_fresh(struct vecnet_dev *vn)
{
	return xchg(&vn->link.fresh, false);
}

/* ---- why the peer does not answer ---------------------------------------- */

/*
 * Count a try at the peer's socket that failed with @err, by reason, so
 * that ethtool -S says why the carrier is off: the reason that lasts is
 * the counter that keeps rising.  @dir: EACCES came from a directory on
 * the way, not from the socket itself.
 */
static void vecnet_link_count(struct vecnet_dev *vn, int err, bool dir)
{
	switch (err) {
	case -ENOENT:
		vecnet_count_link(vn, peer_no_socket);
		break;
	case -ECONNREFUSED:
		vecnet_count_link(vn, peer_refused);
		break;
	case -EACCES:
		if (dir)
			vecnet_count_link(vn, peer_dir_denied);
		else
			vecnet_count_link(vn, peer_denied);
		break;
	case -EPROTOTYPE:
		vecnet_count_link(vn, peer_wrong_socket);
		break;
	default:
		vecnet_count_link(vn, peer_unreachable);
	}
}

/*
 * The transport, as the device comes up: the peer's socket is at @path,
 * and @want is the switch option that makes the kind it needs.  The
 * link check names them when the peer stops answering.
 */
void vecnet_peer_path(struct vecnet_dev *vn, const char *path,
		      const char *want)
{
	vn->link.path = path;
	vn->link.want = want;
}

/*
 * Why the socket at @path does not answer, in words, with what to do
 * about it; said when the reason changes, not at every retry.  @want is
 * the switch option that makes the kind of socket the transport needs;
 * NULL when @path is not the peer's but the device's own, which it
 * failed to bind (unixdgram's local= and its queues', bess's src=).
 * Only a failure at the peer's socket is counted (vecnet_link_count).
 */
void vecnet_link_unreachable(struct vecnet_dev *vn, const char *path,
			     const char *want, int err)
{
	unsigned int uid = 0, gid = 0, mode = 0, me = 0;
	struct net_device *dev = vn->dev;
	bool dir = false;

	/* the link check need not say it again this round */
	vn->link.said = true;
	/* no owner to show: the socket is behind a closed directory */
	if (err == -EACCES)
		dir = vecnet_user_file_owner(path, &uid, &gid, &mode, &me) != 0;
	if (want)
		vecnet_link_count(vn, err, dir);
	if (err == vn->link.why)
		return;
	vn->link.why = err;
	switch (err) {
	case -ENOENT:
		if (!want)
			netdev_warn(dev, "%s: no directory to bind this device's socket in\n",
				    path);
		else
			netdev_info(dev, "no socket at %s yet (is the switch running?): carrier off until one answers\n",
				    path);
		break;
	case -ECONNREFUSED:
		netdev_info(dev, "nobody reads the socket at %s (has the switch stopped?): carrier off until one does\n",
			    path);
		break;
	case -EACCES:
		if (dir)
			netdev_warn(dev, "%s: permission denied on the way there: a directory is closed to host uid %u, which this guest runs as\n",
				    path, me);
		else
			netdev_warn(dev, "%s: permission denied: the socket is uid %u gid %u mode %04o, this guest runs as host uid %u; the switch's --mode and --group say who may attach (--mode 0660 --group G, with this user in G)\n",
				    path, uid, gid, mode, me);
		break;
	case -EPROTOTYPE:
		netdev_warn(dev, "%s: wrong kind of socket: is it the switch's --vhost-user or --stream socket? use its %s one\n",
			    path, want);
		break;
	case -EADDRINUSE:
		netdev_warn(dev, "%s: in use by a socket that is still open (another guest's?): give this device a path of its own\n",
			    path);
		break;
	case -ENOTDIR:
		netdev_warn(dev, "%s: a part of the path on the way there is not a directory\n",
			    path);
		break;
	case -ENAMETOOLONG:
		netdev_warn(dev, "%s: too long for a unix socket's address (%d bytes at most)\n",
			    path, VECNET_UNIX_PATH_MAX - 1);
		break;
	case -EAGAIN:
		netdev_info(dev, "%s: the listener's backlog is full (is the switch stuck?): trying again\n",
			    path);
		break;
	default:
		netdev_warn(dev, "cannot %s the socket at %s: %pe\n",
			    want ? "reach" : "bind", path, ERR_PTR(err));
	}
}

/* ---- the link check's schedule ------------------------------------------ */

/* The link check is about to ask the transport */
void vecnet_peer_probing(struct vecnet_dev *vn)
{
	vn->link.said = false;
}

/*
 * The transport answered the link check with @err (see probe_peer):
 * a peer there resets the backoff, one that is not is reported and looked
 * for again later each time.  Schedules the next check.
 */
void vecnet_peer_probed(struct vecnet_dev *vn, int err)
{
	unsigned int delay = VECNET_LINK_CHECK_MS;
	const char *path = vn->link.path;

	if (err >= 0) {
		/* a later failure is worth saying again (not after HELD) */
		if (err != VECNET_PEER_HELD)
			vn->link.why = 0;
		WRITE_ONCE(vn->link.backoff_ms, VECNET_LINK_MIN_MS);
		goto again;
	}
	if (vecnet_peer_gone(vn, err) && netif_carrier_ok(vn->dev)) {
		spin_lock_bh(&vn->q[0].tx.lock);
		vecnet_peer_lost(vn);
		spin_unlock_bh(&vn->q[0].tx.lock);
	}
	/*
	 * Unless the transport said it already (its own socket failed): a
	 * switch away for a restart is no news; a mistake is
	 */
	if (!vn->link.said) {
		if (path && err != -ENOENT && err != -ECONNREFUSED)
			vecnet_link_unreachable(vn, path, vn->link.want, err);
		else
			vecnet_link_count(vn, err, false);
	}
	delay = READ_ONCE(vn->link.backoff_ms);
	WRITE_ONCE(vn->link.backoff_ms,
		   min_t(unsigned int, delay * 2, VECNET_LINK_CHECK_MS));
again:
	schedule_delayed_work(&vn->link.work, msecs_to_jiffies(delay));
}

/* ---- announcements ------------------------------------------------------- */

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
					     struct vecnet_dev,
					     link.announce_work);

	if (!rtnl_trylock()) {
		schedule_delayed_work(&vn->link.announce_work, 1);
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
	    vn->link.announce_waits++ < VECNET_ANNOUNCE_WAITS) {
		rtnl_unlock();
		schedule_delayed_work(&vn->link.announce_work,
				      msecs_to_jiffies(VECNET_ANNOUNCE_WAIT_MS));
		return;
	}
	vn->link.announce_waits = 0;
	if (netif_running(vn->dev) && netif_carrier_ok(vn->dev))
		__netdev_notify_peers(vn->dev);
	rtnl_unlock();
}

/* The peer can hear us (again): tell the segment where we are */
void vecnet_peer_announce(struct vecnet_dev *vn)
{
	schedule_delayed_work(&vn->link.announce_work, 0);
}

/* ---- up and down --------------------------------------------------------- */

/* A new device: @check is the core's link check, run while it is up */
void vecnet_peer_init(struct vecnet_dev *vn,
		      void (*check)(struct work_struct *work))
{
	INIT_DELAYED_WORK(&vn->link.work, check);
	INIT_DELAYED_WORK(&vn->link.announce_work, vecnet_announce_work);
	/* enabled while the device is up (vecnet_peer_start, _stop) */
	disable_delayed_work(&vn->link.work);
	disable_delayed_work(&vn->link.announce_work);
}

/* The device comes up, before the transport opens */
void vecnet_peer_open(struct vecnet_dev *vn)
{
	vn->link.backoff_ms = VECNET_LINK_MIN_MS;
	vn->link.why = 0;
	vn->link.path = NULL;
	/* a negotiating link's further queues wait for the switch's word */
	vn->mq.cookie_ok = false;
	vn->mq.live = vn->flags & VECNET_TF_NEGOTIATE ? BIT(0) :
						      GENMASK(vn->nq - 1, 0);
}

/*
 * Nothing fails from here on: the link works may run.  @peer_there: the
 * transport found the peer as it opened, and the caller asks it for
 * headers now; a peer found later is asked then.
 */
void vecnet_peer_start(struct vecnet_dev *vn, bool peer_there)
{
	enable_delayed_work(&vn->link.work);
	enable_delayed_work(&vn->link.announce_work);
	vn->link.said = false;
	WRITE_ONCE(vn->link.fresh, !peer_there);
}

/*
 * ...and once the carrier says what open found, the first link check:
 * soon while no peer answered, at the usual pace once one did
 */
void vecnet_peer_check_start(struct vecnet_dev *vn, bool peer_there)
{
	if (vn->transport->probe_peer)
		schedule_delayed_work(&vn->link.work,
				      msecs_to_jiffies(peer_there ?
						       VECNET_LINK_CHECK_MS :
						       VECNET_LINK_MIN_MS));
}

/*
 * The device goes down: first the link check, which may replace the
 * descriptor and so must not run once NAPI is off.  Disabled, not only
 * cancelled: a peer lost in NAPI's last receive would queue it again.
 */
void vecnet_peer_stop_check(struct vecnet_dev *vn)
{
	disable_delayed_work_sync(&vn->link.work);
}

/* ...then, once NAPI is off, the announcement it may have queued */
void vecnet_peer_stop(struct vecnet_dev *vn)
{
	disable_delayed_work_sync(&vn->link.announce_work);
	vn->link.announce_waits = 0;
}

/*
 * ...and last, with the rings gone, the queues transmit may use: until
 * then a queue woken in a reshape (the qdisc runs on) still steers by them
 */
void vecnet_mq_stop(struct vecnet_dev *vn)
{
	vn->mq.live = 0;
}
