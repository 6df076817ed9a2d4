// SPDX-License-Identifier: GPL-2.0
/*
 * mq.c - multiqueue guests: one guest, several datagram sockets, one port.
 *
 * A guest device with N queues reads and writes N sockets, each bound to
 * a name of its own.  Its first one (socket 0) is an ordinary dgram port
 * and negotiates as any (nego.c); a HELLO with VECNET_MSG_F_MQ as well as
 * VECNET_MSG_F_VNET is answered, right behind the MODE, with a QUEUES
 * message carrying a fresh random cookie.  Each further socket then sends
 * a JOIN with that cookie, and once the switch has checked it, becomes
 * one more way into and out of the same port: the same forwarding entry,
 * the same limits and counters, whichever socket a frame takes.
 *
 *	guest socket 0                 switch
 *	HELLO(vnet, mq)      ---->
 *	                     <----     MODE(vnet), QUEUES(cookie)
 *	MODE(vnet)           ---->
 *	guest socket k
 *	JOIN(cookie)         ---->     checked; socket k joins the port
 *	                     <----     JOIN(cookie), the ack, sent to socket k
 *
 * The cookie only says which port is meant; what lets a socket in is who
 * sent it.  Only the process reading socket 0 learns the cookie, and the
 * JOIN must come with the SCM_CREDENTIALS of the port's owner, uid and
 * pid both, from a name the switch can pin (peer.c) like any port's.  A
 * refused JOIN is counted and gets no answer, and never makes a port.
 *
 * Queue sockets always carry a virtio-net header, both ways.  Frames for
 * the port are spread over its sockets by a flow hash (forward.c), each
 * queue entry carrying the socket it is for; control messages go to the
 * socket they are about.  The queue sockets are forgotten whenever the
 * port starts over (a HELLO, a new socket behind its name) or goes; one
 * whose sends find nobody there is dropped alone (dgram.c).
 */
#include <string.h>
#include <sys/random.h>

#include "vecswitch.h"

/* Tries at a cookie that no other port holds */
#define COOKIE_TRIES	4

/* Is this datagram, of whatever sender, a JOIN? */
bool vs_mq_is_join(const uint8_t *m, size_t len)
{
	return vs_msg_is(m, len, VECNET_MSG_JOIN);
}

/* Compare two cookies in a time that does not say where they differ */
static bool cookie_eq(const uint8_t *a, const uint8_t *b)
{
	uint8_t d = 0;
	unsigned int i;

	for (i = 0; i < VECNET_MSG_COOKIE_LEN; i++)
		d |= a[i] ^ b[i];
	return !d;
}

/* The live dgram port of @sw's socket @sock that handed out @cookie */
static struct vs_port *cookie_port(struct vs_switch *sw,
				   enum vs_dgram_sock sock,
				   const uint8_t *cookie)
{
	unsigned int i;

	for (i = 0; i < sw->nports; i++) {
		struct vs_port *p = sw->ports[i];

		if (p && !p->dead && p->ops == &vs_dgram_ops &&
		    p->dgram.sock == sock && p->mq.ok &&
		    cookie_eq(p->mq.cookie, cookie))
			return p;
	}
	return NULL;
}

/*
 * Queue a QUEUES or JOIN message, with @p's cookie, for @p's socket @to:
 * a control entry, sent as it is, never with a header.
 */
static bool queue_msg(struct vs_switch *sw, struct vs_port *p, uint8_t type,
		      unsigned int to)
{
	struct vecnet_msg m;

	vs_msg_init(&m, type);
	memcpy(m.cookie, p->mq.cookie, sizeof(m.cookie));
	return vs_queue_msg(sw, p, &m, to);
}

/*
 * @p just had its MODE queued in answer to a HELLO that asked for queue
 * sockets: give it a new cookie, in a QUEUES right behind the MODE.
 * False when it could not be given (the guest stays single-queue).
 */
bool vs_mq_offer(struct vs_switch *sw, struct vs_port *p)
{
	uint8_t c[VECNET_MSG_COOKIE_LEN];
	unsigned int i;

	for (i = 0; i < COOKIE_TRIES; i++) {
		if (getrandom(c, sizeof(c), GRND_NONBLOCK) != sizeof(c)) {
			vs_log(sw, 0, "port %u: no random bytes for a queue cookie",
			       p->id);
			return false;
		}
		if (!cookie_port(sw, p->dgram.sock, c))
			break;
	}
	if (i == COOKIE_TRIES)
		return false;
	memcpy(p->mq.cookie, c, sizeof(c));
	p->mq.ok = queue_msg(sw, p, VECNET_MSG_QUEUES, 0);
	return p->mq.ok;
}

/*
 * Socket @k (1..mq.n) of @p is gone: what was queued for it goes, and the
 * sockets after it, with their counters, move down by one.
 */
void vs_mq_drop(struct vs_port *p, unsigned int k)
{
	unsigned int i;

	if (!k || k > p->mq.n)
		return;
	vs_queue_drop_to(p, k);
	vs_peer_unpin(&p->mq.q[k - 1].pin);
	for (i = k; i < p->mq.n; i++) {
		p->mq.q[i - 1] = p->mq.q[i];
		p->qst[i] = p->qst[i + 1];
	}
	p->mq.n--;
	memset(&p->mq.q[p->mq.n], 0, sizeof(p->mq.q[p->mq.n]));
	p->mq.q[p->mq.n].pin.fd = -1;
	memset(&p->qst[p->mq.n + 1], 0, sizeof(p->qst[0]));
}

/* @p starts over, or goes: its queue sockets and cookie are forgotten. */
void vs_mq_forget(struct vs_port *p)
{
	while (p->mq.n)
		vs_mq_drop(p, p->mq.n);
	p->mq.ok = false;
	memset(p->mq.cookie, 0, sizeof(p->mq.cookie));
}

/* Which of @p's queue sockets has address @addr (hash @h): 1 to mq.n, 0 none */
unsigned int vs_mq_sock_of(const struct vs_port *p,
			   const struct sockaddr_un *addr, socklen_t len,
			   uint32_t h)
{
	unsigned int j;

	for (j = 0; j < p->mq.n; j++) {
		const struct vs_mq_sock *q = &p->mq.q[j];

		if (q->addr_hash == h && q->addrlen == len &&
		    !memcmp(&q->addr, addr, len))
			return j + 1;
	}
	return 0;
}

/*
 * The port that address @addr (hash @h) of socket @sock is a queue socket
 * of, and in *@k which one; NULL if none.
 */
static struct vs_port *vs_mq_find(struct vs_switch *sw,
			   const struct sockaddr_un *addr, socklen_t len,
			   uint32_t h, enum vs_dgram_sock sock,
			   unsigned int *k)
{
	unsigned int i;

	for (i = 0; i < sw->nports; i++) {
		struct vs_port *p = sw->ports[i];

		if (!p || p->dead || !p->mq.n || p->dgram.sock != sock)
			continue;
		*k = vs_mq_sock_of(p, addr, len, h);
		if (*k)
			return p;
	}
	return NULL;
}

/* Is @addr some live dgram port's own (socket 0) address? */
static bool is_main_addr(const struct vs_switch *sw,
			 const struct sockaddr_un *addr, socklen_t len,
			 uint32_t h)
{
	unsigned int i;

	for (i = 0; i < sw->nports; i++) {
		const struct vs_port *p = sw->ports[i];

		if (p && !p->dead && p->ops == &vs_dgram_ops &&
		    p->dgram.addr_hash == h && p->dgram.addrlen == len &&
		    !memcmp(&p->dgram.addr, addr, len))
			return true;
	}
	return false;
}

/* Count a refused JOIN in @reason too; returns what the log says */
static const char *refuse(struct vs_switch *sw, uint64_t *reason,
			  const char *why)
{
	sw->st.rx_join_bad++;
	(*reason)++;
	return why;
}

/* Make @addr socket mq.n + 1 of @p; why not, or NULL */
static const char *add_sock(struct vs_switch *sw, struct vs_port *p,
			    const struct sockaddr_un *addr, socklen_t len,
			    uint32_t h, const struct ucred *cred)
{
	struct vs_mq_sock *q = &p->mq.q[p->mq.n];
	const char *why;

	why = vs_peer_pin(sw, addr, len, cred, &q->pin);
	if (why)
		return why;
	memcpy(&q->addr, addr, len);
	q->addrlen = len;
	q->addr_hash = h;
	p->mq.n++;
	memset(&p->qst[p->mq.n], 0, sizeof(p->qst[0]));
	return NULL;
}

/*
 * A JOIN from @addr (hash @h) with credentials @cred on socket @sock.
 * Accepted, the address becomes a queue socket of the port that handed
 * out the cookie, and is acked with the same message; a queue socket of
 * that port already is acked again.  Returns NULL then, or why it was
 * refused (counted; the caller logs it).
 */
const char *vs_mq_join(struct vs_switch *sw, enum vs_dgram_sock sock,
		       const struct sockaddr_un *addr, socklen_t len,
		       uint32_t h, const struct ucred *cred, const uint8_t *m)
{
	const struct vecnet_msg *msg = (const void *)m;
	struct vs_port *p, *owner;
	const char *why;
	unsigned int k;

	if (len <= offsetof(struct sockaddr_un, sun_path) ||
	    len > sizeof(*addr))
		return refuse(sw, &sw->st.join_bad_addr, "an unbound sender");
	p = cookie_port(sw, sock, msg->cookie);
	if (!p)
		return refuse(sw, &sw->st.join_bad_cookie, "no port has that cookie");
	if (!p->nego.rx_vnet || !p->nego.tx_vnet)
		return refuse(sw, &sw->st.join_early, "the port has not sent its MODE");
	/* pid 0: the sender lives where the switch cannot tell it apart */
	if (!cred || cred->pid <= 0 || cred->uid != p->owner_uid ||
	    cred->pid != p->owner_pid)
		return refuse(sw, &sw->st.join_bad_cred,
			      "not the uid and pid of the port's owner");
	if (is_main_addr(sw, addr, len, h))
		return refuse(sw, &sw->st.join_taken, "the address is a port's own");
	owner = vs_mq_find(sw, addr, len, h, sock, &k);
	if (owner && owner != p)
		return refuse(sw, &sw->st.join_taken,
			      "the address is another port's queue socket");
	if (owner) {
		sw->st.rx_join_again++;
		queue_msg(sw, p, VECNET_MSG_JOIN, k);
		return NULL;
	}
	if (1 + p->mq.n >= VS_MQ_MAX)
		return refuse(sw, &sw->st.join_full, "the port has all its sockets");
	why = add_sock(sw, p, addr, len, h, cred);
	if (why)
		return refuse(sw, &sw->st.join_bad_addr, why);
	sw->st.rx_join++;
	vs_log(sw, 1, "port %u (%s): queue socket %u joined", p->id, p->name,
	       p->mq.n);
	queue_msg(sw, p, VECNET_MSG_JOIN, p->mq.n);
	/* a channel per queue may have one more now */
	vs_chan_requeue(sw, p);
	return NULL;
}
