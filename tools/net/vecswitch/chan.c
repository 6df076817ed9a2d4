// SPDX-License-Identifier: GPL-2.0
/*
 * chan.c - shortcut channels: the switch steps out of the way of unicast
 * between two guests it has learned.
 *
 * When the switch forwards a unicast frame from one dgram guest to
 * another, both with headers agreed and both having said in their HELLO
 * that they take channels (VECNET_MSG_F_CHAN), it makes a unix datagram
 * socket pair and hands one end to each: a CHAN message, 12 bytes like
 * the other negotiation messages, naming the MAC address behind the
 * other end, with the descriptor in SCM_RIGHTS.  The guests then send
 * that address's untagged unicast into their end, and receive the other
 * guest's from theirs: one copy each way through the host kernel, as on
 * a tap, instead of four through this process.
 *
 * The switch stays in charge of who is where.  A guest takes only frames
 * from the address its channel was opened for.  When an address moves to
 * another port, ages out, or its port goes or starts over (a HELLO), the
 * switch withdraws the channels for it, and the guests go back to sending
 * through the switch.  The withdrawal does not depend on the guests: the
 * switch keeps a descriptor of one end of every open pair and shuts that
 * end down, after which a send on either end fails (EPIPE); the UNCHAN it
 * also sends to each guest only makes them notice sooner.  Two ports share
 * at most one channel, so one guest with many addresses cannot take all
 * of another's.  A channel keeps the forwarding entries of its two
 * addresses and their ports fresh, as their frames would (fdb.c, port.c
 * ask vs_chan_holds).  Frames on a channel are not seen here, so they
 * are in no counter of the switch; the guests count them (ethtool -S).
 *
 * Two multiqueue guests (mq.c) that both said VECNET_MSG_F_CHANQ get a
 * socket pair per queue they both have: the CHAN for queue k goes to
 * each guest's queue socket k, so that queue k of one reaches queue k
 * of the other and their flows stay spread.  The pairs are one channel
 * still, in every count and limit here (VS_CHAN_PORT_MAX,
 * VS_CHAN_USER_MAX, the sustain and back-off rules): opened together,
 * or none of them, and withdrawn together, the switch keeping one end of
 * each to shut down, with one UNCHAN on socket 0.  When the queue
 * sockets of either port change, a channel whose number of queues would
 * change is withdrawn as for a guest that starts over (vs_chan_requeue).
 * A guest without the flag, or with no further queue joined, gets the
 * one pair on socket 0, as before.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/sock_diag.h>
#include <sys/socket.h>

#include "vecswitch.h"

/* One offer per port at most this often: HELLO loops cannot churn */
#define VS_CHAN_GAP_MS		100
/*
 * A pair whose offer failed, or whose channel a guest gave up, gets a new
 * one after 1 s, then 2, 4, ... up to 64 s while that goes on: a guest
 * that stopped reading is not handed channel after channel, each holding
 * what the other guest sent into it.  A channel that lasted a minute
 * starts the count over.
 */
#define VS_CHAN_RETRY_MS	1000
#define VS_CHAN_RETRY_MAX_MS	64000
#define VS_CHAN_LASTED_MS	60000
/*
 * A pair gets a channel once it has sent this many unicast frames to each
 * other within this long: a flow, not a ping now and then, and one port
 * cannot make another take a channel, an interrupt and a descriptor in
 * its kernel, with a frame or two.
 */
#define VS_CHAN_SUSTAIN_FRAMES	8
#define VS_CHAN_SUSTAIN_MS	1000
/* Open channels a port holds at most with the ports of one other user */
#define VS_CHAN_USER_MAX	2

struct vs_chan {
	struct vs_port *port[2];
	uint8_t mac[2][6];	/* mac[i] sits behind port[i] */
	bool open;
	unsigned int nq;	/* open: queue pairs, 1 to VS_MQ_MAX */
	int held[VS_MQ_MAX];	/* open: port[0]'s end of each, to withdraw by */
	uint64_t opened_ms;
	uint64_t retry_ms;	/* closed: not offered again before */
	uint64_t backoff_ms;
	unsigned int seen;	/* closed: frames between the two since seen_ms */
	uint64_t seen_ms;
};

/*
 * Send a CHAN (with @fd) or UNCHAN (@fd -1) about @mac to dgram port @p's
 * socket @k (0: its main one)
 */
static int chan_send(struct vs_switch *sw, struct vs_port *p, unsigned int k,
		     uint8_t type, const uint8_t *mac, int fd)
{
	union {
		struct cmsghdr cm;
		uint8_t buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct vecnet_msg m;
	struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
	struct msghdr mh = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
	};

	mh.msg_name = (void *)vs_mq_dst(p, k, &mh.msg_namelen);
	vs_msg_init(&m, type);
	memcpy(m.mac, mac, sizeof(m.mac));
	if (fd >= 0) {
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = sizeof(ctl.buf);
		ctl.cm.cmsg_level = SOL_SOCKET;
		ctl.cm.cmsg_type = SCM_RIGHTS;
		ctl.cm.cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(&ctl.cm), &fd, sizeof(int));
	}
	if (sendmsg(vs_dgram_fd(sw, p), &mh, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		return -errno;
	return 0;
}

/*
 * May dgram port @p, whose HELLO said @flags, have channels?  Not where
 * the switch offers none, and not on an abstract name: once its guest
 * exits, anyone may bind that name and would be handed the channels meant
 * for it, while a socket file's owner is checked (peer.c).  The MODE
 * tells the guest (F_CHAN); only then does it take descriptors.
 */
bool vs_chan_allowed(const struct vs_switch *sw, const struct vs_port *p,
		     uint16_t flags)
{
	return sw->cfg.shortcut && !sw->cfg.hub && (flags & VECNET_MSG_F_CHAN) &&
	       p->dgram.pin.fd >= 0;
}

/*
 * Queues for which dgram port @p takes a channel each: 1, and with
 * F_CHANQ agreed the queue sockets it joined, up to the first on an
 * abstract name (see vs_chan_allowed)
 */
static unsigned int chan_port_queues(const struct vs_port *p)
{
	unsigned int n = 1;

	if (!p->chan.q_ok)
		return 1;
	while (n <= p->mq.n && p->mq.q[n - 1].pin.fd >= 0)
		n++;
	return n;
}

/* Queue pairs a channel between @a and @b has: the queues both have */
static unsigned int chan_queues(const struct vs_port *a, const struct vs_port *b)
{
	unsigned int na = chan_port_queues(a), nb = chan_port_queues(b);

	return na < nb ? na : nb;
}

/* From now on neither end of pair @k of @c can send, whatever the guests do */
static void chan_shut(struct vs_chan *c, unsigned int k)
{
	shutdown(c->held[k], SHUT_RDWR);
	close(c->held[k]);
	c->held[k] = -1;
}

/*
 * Does dgram port @p take channels now?  Its MODE must have left (no
 * entry queued before it is still waiting): the guest refuses a CHAN it
 * reads before the MODE, and CHAN is sent at once, past the queue.  And
 * no capture may want its unicast to cross the switch (capture.c).
 */
static bool chan_capable(const struct vs_switch *sw, const struct vs_port *p)
{
	return p->chan.ok && p->nego.rx_vnet && p->nego.tx_vnet &&
	       !p->nego.tx_plain && !p->dead && !p->chan.cap_hold &&
	       !sw->cap_all;
}

static void chan_unlink(struct vs_port *p, struct vs_chan *c)
{
	unsigned int i;

	for (i = 0; i < p->chan.n; i++) {
		if (p->chan.ch[i] == c) {
			p->chan.ch[i] = p->chan.ch[--p->chan.n];
			return;
		}
	}
}

/* Close channel @c: the guests that hold its ends are told to close them */
static void chan_close(struct vs_switch *sw, struct vs_chan *c)
{
	unsigned int i;

	if (!c->open)
		return;
	for (i = 0; i < c->nq; i++)
		chan_shut(c, i);
	/* one UNCHAN, on socket 0, withdraws the pairs of every queue */
	for (i = 0; i < 2; i++)
		if (!c->port[i]->dead &&
		    chan_send(sw, c->port[i], 0, VECNET_MSG_UNCHAN, c->mac[!i], -1))
			sw->st.chan_unsent++;
	c->open = false;
	sw->st.chan_revoked++;
	vs_ev_chan(sw, false, c->port[0], c->mac[0], c->port[1], c->mac[1], c->nq);
}

/* Wait before the pair gets another channel (see VS_CHAN_RETRY_MS) */
static void chan_back_off(struct vs_switch *sw, struct vs_chan *c)
{
	if (!c->backoff_ms || (c->opened_ms &&
			       sw->now_ms - c->opened_ms >= VS_CHAN_LASTED_MS))
		c->backoff_ms = VS_CHAN_RETRY_MS;
	else if (c->backoff_ms < VS_CHAN_RETRY_MAX_MS)
		c->backoff_ms *= 2;
	c->retry_ms = sw->now_ms + c->backoff_ms;
}

/* Forget channel @c altogether */
static void chan_drop(struct vs_switch *sw, struct vs_chan *c)
{
	chan_close(sw, c);
	chan_unlink(c->port[0], c);
	chan_unlink(c->port[1], c);
	free(c);
}

/* Make room on @p: forget a closed pair, if it has one */
static bool chan_room(struct vs_switch *sw, struct vs_port *p)
{
	unsigned int i;

	if (p->chan.n < VS_CHAN_PORT_MAX)
		return true;
	for (i = 0; i < p->chan.n; i++) {
		if (!p->chan.ch[i]->open) {
			chan_drop(sw, p->chan.ch[i]);
			return true;
		}
	}
	return false;
}

static struct vs_chan *chan_find(const struct vs_port *a, const uint8_t *ma,
				 const struct vs_port *b, const uint8_t *mb)
{
	unsigned int i;

	for (i = 0; i < a->chan.n; i++) {
		struct vs_chan *c = a->chan.ch[i];
		unsigned int s = c->port[0] != a;

		if (c->port[!s] == b && !memcmp(c->mac[s], ma, 6) &&
		    !memcmp(c->mac[!s], mb, 6))
			return c;
	}
	return NULL;
}

/* Who owns @p, for the share of channels one user may hold */
static uint64_t chan_user(const struct vs_port *p)
{
	return p->has_owner ? p->owner_uid : UINT64_MAX;
}

/*
 * Has @p as many open channels with ports of @q's user as one other user
 * may hold?  A user with many ports cannot take all of a guest's channels
 * (and the interrupts and descriptors each costs its kernel).
 */
static bool chan_user_full(const struct vs_port *p, const struct vs_port *q)
{
	unsigned int i, n = 0;

	if (chan_user(p) == chan_user(q))
		return false;
	for (i = 0; i < p->chan.n; i++) {
		const struct vs_chan *c = p->chan.ch[i];
		const struct vs_port *o = c->port[c->port[0] == p];

		if (c->open && chan_user(o) == chan_user(q))
			n++;
	}
	return n >= VS_CHAN_USER_MAX;
}

/* Has @a an open channel with @b, for whichever addresses? */
static bool chan_ports_joined(const struct vs_port *a, const struct vs_port *b)
{
	unsigned int i;

	for (i = 0; i < a->chan.n; i++)
		if (a->chan.ch[i]->open && (a->chan.ch[i]->port[0] == b ||
					 a->chan.ch[i]->port[1] == b))
			return true;
	return false;
}

/*
 * Make the socket pair of queue @k and hand it out on the two ports'
 * sockets @k, keeping port[0]'s end in c->held[k]; false when it could
 * not be done
 */
static bool chan_open_queue(struct vs_switch *sw, struct vs_chan *c,
			    unsigned int k)
{
	int sv[2], err = 0;
	unsigned int i;

	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) < 0) {
		vs_log(sw, 1, "shortcut: no socket pair: %s", strerror(errno));
		return false;
	}
	/* neither guest can pass the other (or, at the end, us) a descriptor */
	vs_refuse_rights(sw, sv[0]);
	vs_refuse_rights(sw, sv[1]);
	for (i = 0; i < 2 && !err; i++)
		err = chan_send(sw, c->port[i], k, VECNET_MSG_CHAN, c->mac[!i],
				sv[i]);
	close(sv[1]);
	if (err) {
		/* a guest that got its end can send on it no more */
		shutdown(sv[0], SHUT_RDWR);
		close(sv[0]);
		vs_log(sw, 2, "shortcut: port %u %s on queue %u: %s",
		       c->port[i - 1]->id,
		       i == 1 ? "refused the offer" : "refused the second end",
		       k, strerror(-err));
		return false;
	}
	c->held[k] = sv[0];
	return true;
}

/*
 * Hand out a pair for every queue the two ports both have, or none: the
 * pairs already handed out are shut when a later one fails, and a guest
 * sending into one finds it closed
 */
static bool chan_open(struct vs_switch *sw, struct vs_chan *c)
{
	unsigned int i, nq = chan_queues(c->port[0], c->port[1]);

	for (i = 0; i < nq; i++) {
		if (!chan_open_queue(sw, c, i)) {
			while (i--)
				chan_shut(c, i);
			return false;
		}
	}
	for (i = 0; i < 2; i++)
		c->port[i]->chan.offer_ms = sw->now_ms;
	c->nq = nq;
	return true;
}

/*
 * The switch forwards a unicast frame from @in (source @src) to @out
 * (destination @dst), untagged.  Offer the two a channel if they take one
 * and have none yet.
 */
void vs_chan_seen(struct vs_switch *sw, struct vs_port *in, const uint8_t *src,
		  struct vs_port *out, const uint8_t *dst)
{
	struct vs_chan *c;

	if (!chan_capable(sw, in) || !chan_capable(sw, out))
		return;
	/* not to a guest that is behind: it would not read the offer soon */
	if (in->txq.count > in->txq.cap / 2 || out->txq.count > out->txq.cap / 2)
		return;
	c = chan_find(in, src, out, dst);
	if (c && (c->open || sw->now_ms < c->retry_ms))
		return;
	if (chan_ports_joined(in, out)) {
		sw->st.chan_full++;
		return;
	}
	if (chan_user_full(in, out) || chan_user_full(out, in)) {
		sw->st.chan_user_full++;
		return;
	}
	if (sw->now_ms - in->chan.offer_ms < VS_CHAN_GAP_MS ||
	    sw->now_ms - out->chan.offer_ms < VS_CHAN_GAP_MS)
		return;
	if (!c) {
		if (!chan_room(sw, in) || !chan_room(sw, out)) {
			sw->st.chan_full++;
			return;
		}
		c = calloc(1, sizeof(*c));
		if (!c)
			return;
		c->port[0] = in;
		c->port[1] = out;
		memcpy(c->mac[0], src, 6);
		memcpy(c->mac[1], dst, 6);
		in->chan.ch[in->chan.n++] = c;
		out->chan.ch[out->chan.n++] = c;
	}
	if (sw->now_ms - c->seen_ms > VS_CHAN_SUSTAIN_MS) {
		c->seen = 0;
		c->seen_ms = sw->now_ms;
	}
	if (++c->seen < VS_CHAN_SUSTAIN_FRAMES)
		return;
	c->seen = 0;
	if (!chan_open(sw, c)) {
		sw->st.chan_failed++;
		chan_back_off(sw, c);
		in->chan.offer_ms = sw->now_ms;
		return;
	}
	c->open = true;
	c->opened_ms = sw->now_ms;
	sw->st.chan_opened++;
	vs_ev_chan(sw, true, c->port[0], c->mac[0], c->port[1], c->mac[1], c->nq);
}

/* @mac no longer sits behind @p (moved, aged, or @p goes): drop its channels */
void vs_chan_forget(struct vs_switch *sw, struct vs_port *p,
		    const uint8_t *mac)
{
	unsigned int i = 0;

	while (i < p->chan.n) {
		struct vs_chan *c = p->chan.ch[i];
		unsigned int s = c->port[0] != p;

		if (!mac || !memcmp(c->mac[s], mac, 6))
			chan_drop(sw, c);	/* takes it out of p->chan.ch */
		else
			i++;
	}
}

/*
 * Guest @p starts over (a HELLO): it has closed its channels.  The pairs
 * stay, each backing off as for any channel a guest gave up, so that a
 * guest saying HELLO again and again cannot have the switch hand the
 * other guest channel after channel.
 */
void vs_chan_restart(struct vs_switch *sw, struct vs_port *p)
{
	unsigned int i;

	for (i = 0; i < p->chan.n; i++) {
		struct vs_chan *c = p->chan.ch[i];

		if (c->open) {
			chan_close(sw, c);
			chan_back_off(sw, c);
		}
	}
}

/*
 * The queue sockets of @p changed (one joined, or went): a channel that
 * would now have another number of queue pairs is withdrawn, and comes
 * back after the back-off of a guest that starts over, with the queues
 * the two have then.
 */
void vs_chan_requeue(struct vs_switch *sw, struct vs_port *p)
{
	unsigned int i;

	for (i = 0; i < p->chan.n; i++) {
		struct vs_chan *c = p->chan.ch[i];

		if (c->open && chan_queues(c->port[0], c->port[1]) != c->nq) {
			chan_close(sw, c);
			chan_back_off(sw, c);
		}
	}
}

/*
 * Guest @p says it closed its channel to @mac (its other end was closed,
 * or it stalled): close the other end too; a new channel may follow,
 * after a while.
 */
void vs_chan_closed(struct vs_switch *sw, struct vs_port *p,
		    const uint8_t *mac)
{
	unsigned int i;

	for (i = 0; i < p->chan.n; i++) {
		struct vs_chan *c = p->chan.ch[i];
		unsigned int s = c->port[0] != p;

		if (c->open && !memcmp(c->mac[!s], mac, 6)) {
			chan_close(sw, c);
			chan_back_off(sw, c);
			return;
		}
	}
}

/*
 * The @i-th open channel of which @p holds the first end, for ctl
 * channels (each channel once); false past the last.  What is queued is
 * the memory of frames one guest sent and the other has not read yet,
 * from the ends the switch keeps, summed over the queues: their receive
 * side waits for port[0]'s guest, what they sent is port[1]'s to read.
 */
bool vs_chan_info(const struct vs_switch *sw, const struct vs_port *p,
		  unsigned int i, struct vs_chan_info *ci)
{
	unsigned int k, q;

	for (k = 0; k < p->chan.n; k++) {
		const struct vs_chan *c = p->chan.ch[k];

		if (!c->open || c->port[0] != p || i--)
			continue;
		ci->port[0] = c->port[0];
		ci->port[1] = c->port[1];
		memcpy(ci->mac, c->mac, sizeof(ci->mac));
		ci->age_s = (sw->now_ms - c->opened_ms) / 1000;
		ci->queues = c->nq;
		ci->queued[0] = 0;
		ci->queued[1] = 0;
		for (q = 0; q < c->nq; q++) {
			uint32_t mem[SK_MEMINFO_VARS] = { 0 };
			socklen_t len = sizeof(mem);

			getsockopt(c->held[q], SOL_SOCKET, SO_MEMINFO, mem, &len);
			ci->queued[0] += mem[SK_MEMINFO_RMEM_ALLOC];
			ci->queued[1] += mem[SK_MEMINFO_WMEM_ALLOC];
		}
		return true;
	}
	return false;
}

/* Has @p an open channel for @mac behind it (NULL: for any address)? */
bool vs_chan_holds(const struct vs_port *p, const uint8_t *mac)
{
	unsigned int i;

	for (i = 0; i < p->chan.n; i++) {
		const struct vs_chan *c = p->chan.ch[i];
		unsigned int s = c->port[0] != p;

		if (c->open && (!mac || !memcmp(c->mac[s], mac, 6)))
			return true;
	}
	return false;
}
