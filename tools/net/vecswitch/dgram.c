// SPDX-License-Identifier: GPL-2.0
/*
 * dgram.c - ports of the datagram sockets (--dgram, --vnet): a sender
 * becomes a port by the address it bound, pinned once (peer.c), and a
 * multiqueue guest's further sockets join it (mq.c); its datagrams are
 * taken off the socket in batches and go to negotiation or forwarding;
 * its queue is sent with the other dgram ports' in one sendmmsg (a
 * plain peer's by a socket connected to it alone), and a guest whose
 * queue is full is waited for (a probe socket, or a timer) without
 * holding up the others.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/sockios.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "vecswitch.h"

#define FLUSH_ROUNDS		64
#define RETRY_MAX_MS		8
#define PROBE_SAFETY_MS		100
/*
 * The send buffer of a plain peer's own socket (direct()): what the peer
 * has not read yet stays charged to it, up to max_dgram_qlen datagrams
 * (512 of 1514 bytes are about 1.3 MiB with their overhead). Without
 * CAP_NET_ADMIN the kernel caps it at net.core.wmem_max.
 */
#define DIRECT_SNDBUF		(2 << 20)

static uint32_t addr_hash(const struct sockaddr_un *a, socklen_t len)
{
	const uint8_t *s = (const uint8_t *)a;
	uint32_t h = 2166136261u;
	socklen_t i;

	for (i = 0; i < len; i++)
		h = (h ^ s[i]) * 16777619u;
	return h;
}

/*
 * An abstract name (a leading NUL) shows as @name, all its bytes; a path
 * up to its NUL, with a leading @ escaped so that it cannot pass for one.
 */
static void addr_name(char *out, size_t outlen, const struct sockaddr_un *a,
		      socklen_t len)
{
	size_t n = len - offsetof(struct sockaddr_un, sun_path);
	const uint8_t *s = (const uint8_t *)a->sun_path;

	if (n && !s[0]) {
		out[0] = '@';
		vs_name_escape(out + 1, outlen - 1, s + 1, n - 1);
		return;
	}
	n = strnlen((const char *)s, n);
	if (n && s[0] == '@') {
		snprintf(out, outlen, "\\x40");
		vs_name_escape(out + 4, outlen - 4, s + 1, n - 1);
		return;
	}
	vs_name_escape(out, outlen, s, n);
}

/* Drop a datagram whose sender cannot be a port; say why, once a second. */
static void refuse_addr(struct vs_switch *sw, const struct sockaddr_un *addr,
			socklen_t len, const char *why)
{
	char name[VS_NAME_LEN];

	sw->st.addr_refused++;
	if (sw->now_ms && sw->now_ms < sw->refused_log_ms + 1000)
		return;
	sw->refused_log_ms = sw->now_ms;
	addr_name(name, sizeof(name), addr, len);
	vs_log(sw, 0, "dgram sender %s refused: %s", name, why);
}

/*
 * The dgram port whose socket sent from @addr (hash @h) to socket @sock,
 * in one pass over the ports: its own socket (*@k 0) or one of its queue
 * sockets (*@k from 1, mq.c); NULL if none.
 */
static struct vs_port *find_sender(struct vs_switch *sw,
				   const struct sockaddr_un *addr,
				   socklen_t len, uint32_t h,
				   enum vs_dgram_sock sock, unsigned int *k)
{
	unsigned int i;

	for (i = 0; i < sw->nports; i++) {
		struct vs_port *p = sw->ports[i];

		if (!p || p->ops != &vs_dgram_ops || p->dead ||
		    p->dgram.sock != sock)
			continue;
		if (p->dgram.addr_hash == h && p->dgram.addrlen == len &&
		    !memcmp(&p->dgram.addr, addr, len)) {
			*k = 0;
			return p;
		}
		*k = vs_mq_sock_of(p, addr, len, h);
		if (*k)
			return p;
	}
	return NULL;
}

/*
 * The port of a dgram sender: @p, found by its address, or a new one on
 * its first datagram; the socket it sent to (--dgram or --vnet) is the one
 * that answers it. Its name is resolved once, then (peer.c); a port's
 * later datagrams must come from the same uid.
 */
static struct vs_port *sender_port(struct vs_switch *sw, struct vs_port *p,
				   const struct sockaddr_un *addr,
				   socklen_t len, uint32_t h,
				   const struct ucred *cred,
				   enum vs_dgram_sock sock)
{
	char name[VS_NAME_LEN];
	struct ucred owner;
	struct vs_pin pin;
	const char *why;
	bool nat;

	if (p) {
		if (!cred || cred->uid != p->dgram.pin.uid) {
			refuse_addr(sw, addr, len, "the port belongs to another user");
			return NULL;
		}
		p->seen_ms = sw->now_ms;
		return p;
	}
	/* an unbound sender has no address to answer to */
	if (len <= offsetof(struct sockaddr_un, sun_path) ||
	    len > sizeof(*addr)) {
		sw->st.no_port++;
		return NULL;
	}
	why = cred ? vs_share_full(sw, cred->uid, cred->pid) : NULL;
	if (why) {
		refuse_addr(sw, addr, len, why);
		return NULL;
	}
	why = vs_peer_pin(sw, addr, len, cred, &pin);
	if (why) {
		refuse_addr(sw, addr, len, why);
		return NULL;
	}
	addr_name(name, sizeof(name), addr, len);
	owner.uid = pin.uid;
	owner.pid = cred ? cred->pid : 0;
	nat = vs_nat_name(sw, owner.pid, name);
	p = vs_port_new(sw, &vs_dgram_ops, -1, name, &owner);
	if (!p) {
		vs_peer_unpin(&pin);
		return NULL;
	}
	memcpy(&p->dgram.addr, addr, len);
	p->dgram.addrlen = len;
	p->dgram.addr_hash = h;
	p->dgram.sock = sock;
	p->dgram.pin = pin;
	p->uplink = nat;
	p->seen_ms = sw->now_ms;
	return p;
}

/* A datagram that cannot be a frame: said at most once a second */
static void runt_log(struct vs_switch *sw, const struct vs_port *p,
		     size_t len)
{
	if (sw->now_ms && sw->now_ms < sw->runt_log_ms + 1000)
		return;
	sw->runt_log_ms = sw->now_ms;
	vs_log(sw, 0, "port %u (%s): a datagram of %zu bytes is no Ethernet frame (rx_runt)",
	       p->id, p->name, len);
}

/* A refused JOIN: said at most once a second */
static void join_log(struct vs_switch *sw, const struct sockaddr_un *addr,
		     socklen_t len, const char *why)
{
	char name[VS_NAME_LEN] = "(unbound)";

	if (sw->now_ms && sw->now_ms < sw->join_log_ms + 1000)
		return;
	sw->join_log_ms = sw->now_ms;
	if (len > offsetof(struct sockaddr_un, sun_path) && len <= sizeof(*addr))
		addr_name(name, sizeof(name), addr, len);
	vs_log(sw, 0, "dgram sender %s: JOIN refused (rx_join_bad): %s", name,
	       why);
}

/*
 * A datagram from socket @k of multiqueue port @p: a JOIN again, or a
 * frame behind its virtio-net header, taken as the port's own.
 */
static void queue_input(struct vs_switch *sw, struct vs_port *p,
			unsigned int k, const struct sockaddr_un *addr,
			socklen_t alen, const struct ucred *cred,
			const uint8_t *data, size_t len, bool truncated)
{
	const char *why;

	if (!cred || cred->uid != p->mq.q[k - 1].pin.uid) {
		refuse_addr(sw, addr, alen, "the port belongs to another user");
		return;
	}
	p->seen_ms = sw->now_ms;
	if (truncated) {
		p->st.rx_oversize++;
		return;
	}
	if (vs_mq_is_join(data, len)) {
		why = vs_mq_join(sw, p->dgram.sock, addr, alen,
				 p->mq.q[k - 1].addr_hash,
				 cred, data);
		if (why)
			join_log(sw, addr, alen, why);
		return;
	}
	/* no other message comes by a queue socket */
	if (vs_nego_is_msg(data, len)) {
		p->st.rx_nego_bad++;
		return;
	}
	vs_forward_vnet(sw, p, k, data, len);
}

/*
 * A datagram: the sender is looked up once, among the ports' own sockets
 * and their queue sockets.  A JOIN that no queue socket sent never makes
 * a port, whoever sends it (vs_mq_join refuses one from a port's own
 * socket).
 */
void vs_dgram_input(struct vs_switch *sw, enum vs_dgram_sock sock,
		    const struct sockaddr_un *addr, socklen_t alen,
		    const struct ucred *cred, const uint8_t *data, size_t len,
		    bool truncated)
{
	bool bound = alen > offsetof(struct sockaddr_un, sun_path) &&
		     alen <= sizeof(*addr);
	uint32_t h = bound ? addr_hash(addr, alen) : 0;
	struct vs_port *p = NULL;
	const char *why;
	unsigned int k = 0;

	/* before the lookup: a refused sender never becomes a port */
	if (!vs_cred_allowed(&sw->cfg, cred)) {
		sw->st.cred_refused++;
		return;
	}
	if (bound)
		p = find_sender(sw, addr, alen, h, sock, &k);
	if (p && k) {
		queue_input(sw, p, k, addr, alen, cred, data, len, truncated);
		return;
	}
	if (!truncated && vs_mq_is_join(data, len)) {
		why = vs_mq_join(sw, sock, addr, alen, h, cred, data);
		if (why)
			join_log(sw, addr, alen, why);
		return;
	}
	p = sender_port(sw, p, addr, alen, h, cred, sock);
	if (!p)
		return;
	if (truncated) {
		p->st.rx_oversize++;
		return;
	}
	/* shorter than any frame, with or without a header */
	if (vs_nego_is_msg(data, len)) {
		vs_nego_input(sw, p, data, len);
		return;
	}
	if (p->nego.rx_vnet) {
		vs_forward_vnet(sw, p, 0, data, len);
		return;
	}
	if (len < ETH_HLEN_MIN)
		runt_log(sw, p, len);
	vs_forward(sw, p, data, len);
}

/* A dgram peer whose address answers like this is gone for good. */
static bool vs_dgram_dead_errno(int err)
{
	return err == ECONNREFUSED || err == ENOENT || err == ENOTDIR;
}

/*
 * Our socket is not connected to the peer, so poll() cannot say when the
 * peer's receive queue has room again. A second socket, connect()ed to the
 * peer, can: it polls writable exactly when the peer's queue is not full
 * (and its own send buffer has room). A plain peer's frames are sent by
 * it too (direct()); for the others it never sends. It cannot be had
 * when the peer is connected to someone else (EPERM); then, and when the
 * probe says "room" but the send still fails (our own send buffer is
 * full), a short timer does instead.
 * Of a multiqueue guest's sockets it watches the one that was full
 * (probe.q); the port's queue waits for that one.
 */
static bool probe_open(struct vs_switch *sw, struct vs_port *p)
{
	const struct sockaddr_un *dst;
	socklen_t dstlen;
	int fd, size = DIRECT_SNDBUF;

	/* the socket it was to watch has gone with the rest (mq.c) */
	if (p->probe.q > p->mq.n)
		p->probe.q = 0;
	if (p->probe.fd != -1)
		return p->probe.fd >= 0;
	dst = vs_mq_dst(p, p->probe.q, &dstlen);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	/* never read, but closed here: nothing may wait in it */
	if (vs_refuse_rights(sw, fd) < 0) {
		close(fd);
		return false;
	}
	if (connect(fd, (const struct sockaddr *)dst, dstlen) < 0) {
		/* EPERM: the peer is connected elsewhere, for good */
		if (errno == EPERM)
			p->probe.fd = -2;
		close(fd);
		return false;
	}
	if (vs_epoll_add(sw, fd, vs_ev(VS_EV_PROBE, p->slot), 0) < 0) {
		close(fd);
		return false;
	}
	/* a plain peer's frames wait here unread (see direct()) */
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
	p->probe.fd = fd;
	return true;
}

/*
 * Wait for the probe to poll writable, once: the kernel disarms it as it
 * reports the event, so the wake-up costs no epoll_ctl of ours.
 */
static bool probe_arm(struct vs_switch *sw, struct vs_port *p)
{
	struct epoll_event ev = {
		.events = EPOLLOUT | EPOLLONESHOT,
		.data.u64 = vs_ev(VS_EV_PROBE, p->slot),
	};

	if (!probe_open(sw, p))
		return false;
	if (!p->probe.armed &&
	    epoll_ctl(sw->epfd, EPOLL_CTL_MOD, p->probe.fd, &ev) < 0)
		return false;
	p->probe.armed = true;
	return true;
}

/*
 * A send refused for a full queue: counted per port (tx_retries) and for
 * the switch (tx_peer_full), and said at most once a second.
 */
static void full_log(struct vs_switch *sw, struct vs_port *p)
{
	p->st.tx_retries++;
	sw->st.tx_peer_full++;
	if (sw->now_ms && sw->now_ms < sw->full_log_ms + 1000)
		return;
	sw->full_log_ms = sw->now_ms;
	vs_log(sw, 0, "port %u (%s): its socket's queue is full, frames wait (tx_peer_full %llu; see net.unix.max_dgram_qlen)",
	       p->id, p->name, (unsigned long long)sw->st.tx_peer_full);
}

/* The peer's queue is full (or our send buffer is): try again shortly. */
static void vs_dgram_blocked(struct vs_switch *sw, struct vs_port *p)
{
	full_log(sw, p);
	if (p->probe.woke) {
		/*
		 * Room, said the probe, yet no room: our own send buffer is
		 * full, or the peer re-bound its address and the probe still
		 * watches the old socket. Wait on the timer; connect anew next.
		 */
		p->probe.woke = false;
		if (p->probe.fd >= 0) {
			close(p->probe.fd);
			p->probe.fd = -1;
			p->probe.armed = false;
		}
	} else if (probe_arm(sw, p)) {
		/* the probe wakes us; the timer only guards against a lost wake */
		p->dgram.retry_at_ms = sw->now_ms + PROBE_SAFETY_MS;
		return;
	}
	p->dgram.backoff_ms = p->dgram.backoff_ms ? p->dgram.backoff_ms * 2 : 1;
	if (p->dgram.backoff_ms > RETRY_MAX_MS)
		p->dgram.backoff_ms = RETRY_MAX_MS;
	p->dgram.retry_at_ms = sw->now_ms + p->dgram.backoff_ms;
}

static void vs_dgram_unblocked(struct vs_port *p)
{
	p->dgram.backoff_ms = 0;
	p->dgram.retry_at_ms = 0;
	p->probe.woke = false;
}

/* The probe fired, and is disarmed (EPOLLONESHOT): try the port again */
void vs_dgram_probe_event(struct vs_port *p)
{
	if (p->probe.fd < 0)
		return;
	p->probe.armed = false;
	p->probe.woke = true;
	p->dgram.retry_at_ms = 0;
}

/* The peer's socket changed: the probe must watch the new one. */
static void vs_dgram_probe_reset(struct vs_switch *sw, struct vs_port *p)
{
	if (p->probe.fd >= 0) {
		epoll_ctl(sw->epfd, EPOLL_CTL_DEL, p->probe.fd, NULL);
		close(p->probe.fd);
	}
	p->probe.fd = -1;
	p->probe.armed = false;
	p->probe.woke = false;
	p->probe.q = 0;
}

/* Milliseconds until a backed-off dgram peer should be tried, -1: none. */
int vs_next_retry_ms(struct vs_switch *sw)
{
	int best = -1;
	unsigned int i;

	for (i = 0; i < sw->nports; i++) {
		struct vs_port *p = sw->ports[i];
		int t;

		if (!p || p->dead || p->ops != &vs_dgram_ops || !p->txq.count)
			continue;
		t = p->dgram.retry_at_ms > sw->now_ms ?
		    (int)(p->dgram.retry_at_ms - sw->now_ms) : 0;
		if (best < 0 || t < best)
			best = t;
	}
	return best;
}

/* ---- the data path ------------------------------------------------------ */

/*
 * Take one batch off datagram socket @sock and hand each datagram on.
 * Returns how many there were (VS_BATCH: maybe more).
 */
int vs_dgram_rx(struct vs_switch *sw, enum vs_dgram_sock sock)
{
	int fd = vs_dgram_sock_fd(sw, sock);
	struct mmsghdr mm[VS_BATCH];
	struct iovec iov[VS_BATCH];
	int i, r;

	vs_rx_batch_init(sw, mm, iov, sock, true);
	r = recvmmsg(fd, mm, VS_BATCH, MSG_DONTWAIT | MSG_CMSG_CLOEXEC, NULL);
	for (i = 0; i < r; i++)
		vs_rights_take(sw, &mm[i].msg_hdr);
	for (i = 0; i < r; i++)
		vs_dgram_input(sw, sock, &sw->rxaddr[i],
			       mm[i].msg_hdr.msg_namelen,
			       vs_cred_effective(sw, vs_cmsg_cred(&mm[i].msg_hdr),
						 &sw->rxcred[i]),
			       iov[i].iov_base, mm[i].msg_len,
			       mm[i].msg_hdr.msg_flags & MSG_TRUNC);
	return r;
}

/* @p's socket @to is full: the port waits for that one */
static void blocked(struct vs_switch *sw, struct vs_port *p, unsigned int to)
{
	if (p->probe.q != to) {
		vs_dgram_probe_reset(sw, p);
		p->probe.q = to;
	}
	vs_dgram_blocked(sw, p);
}

static bool dgram_ready(const struct vs_switch *sw, const struct vs_port *p,
			enum vs_dgram_sock sock)
{
	return p && !p->dead && p->ops == &vs_dgram_ops &&
	       p->dgram.sock == sock &&
	       p->txq.count && p->dgram.retry_at_ms <= sw->now_ms;
}

/*
 * A send to @p's socket @to failed with @err: wait for it (EAGAIN), drop
 * a queue socket or the port that is gone, follow a restarted guest, or
 * drop the frame.
 */
static void send_failed(struct vs_switch *sw, struct vs_port *p,
			unsigned int to, int err)
{
	if (err == EAGAIN || err == ENOBUFS) {
		blocked(sw, p, to);
	} else if (vs_dgram_dead_errno(err) && to) {
		/* one queue socket closed: the guest's others go on */
		sw->st.queues_dead++;
		vs_log(sw, 1, "port %u (%s): queue socket %u gone: %s",
		       p->id, p->name, to, strerror(err));
		vs_mq_drop(p, to);
		/* channels of as many queues as before have one too many */
		vs_chan_requeue(sw, p);
		vs_dgram_probe_reset(sw, p);
	} else if (vs_dgram_dead_errno(err)) {
		/* a restarted guest: its name has a new socket */
		if (vs_peer_repin(sw, p)) {
			sw->st.peer_repinned++;
			/* a new socket: plain frames, no channels */
			vs_chan_forget(sw, p, NULL);
			vs_nego_reset(p);
			p->chan.ok = false;
			p->chan.q_ok = false;
			/* the probe watched the old socket */
			vs_dgram_probe_reset(sw, p);
			return;
		}
		sw->st.dead_peers++;
		/* its socket closed or went: the guest left */
		vs_port_remove(sw, p, NULL);
	} else {
		p->st.tx_errors++;
		vs_queue_pop(p);
	}
}

/* @mm: @p's queued frame @j, behind a header where one was agreed */
static void tx_msg(struct mmsghdr *mm, struct iovec *iov,
		   const struct vs_port *p, unsigned int j)
{
	struct vs_buf *b = vs_queue_peek(p, j);
	struct iovec *v = iov;

	memset(mm, 0, sizeof(*mm));
	mm->msg_hdr.msg_iovlen = 1;
	if (vs_nego_tx_hdr(p, j, b)) {
		v->iov_base = b->vnet;
		v++->iov_len = sizeof(b->vnet);
		mm->msg_hdr.msg_iovlen = 2;
	}
	v->iov_base = b->data;
	v->iov_len = b->len;
	mm->msg_hdr.msg_iov = iov;
}

/*
 * A plain peer (it never sent a HELLO: QEMU's -netdev dgram, a program
 * writing raw frames) is sent to by the socket connected to it, the probe:
 * the kernel finds the peer by the connection, where a send by name walks
 * /proc/self/fd/N, then the pinned socket file, on every datagram. The
 * connection is made to the pinned socket once and holds that socket, so
 * nothing that happens to the name later can move it. A peer connected to
 * someone else refuses it (EPERM, probe.fd -2) and gets the shared socket.
 * Negotiating peers keep the switch's address as their frames' source.
 */
static bool direct(struct vs_switch *sw, struct vs_port *p)
{
	if (!vs_dgram_may_direct(p))
		return false;
	p->probe.q = 0;
	return probe_open(sw, p);
}

/* @p's queue by its own socket, in batches (see direct()) */
static void flush_direct(struct vs_switch *sw, struct vs_port *p)
{
	struct mmsghdr mm[VS_BATCH];
	struct iovec iov[VS_BATCH][2];
	unsigned int i, n;
	int round, r, err;

	for (round = 0; round < FLUSH_ROUNDS; round++) {
		if (!dgram_ready(sw, p, false) || !direct(sw, p))
			return;
		for (n = 0; n < p->txq.count && n < VS_BATCH; n++)
			tx_msg(&mm[n], iov[n], p, n);
		r = sendmmsg(p->probe.fd, mm, n, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (r > 0) {
			vs_dgram_unblocked(p);
			for (i = 0; i < (unsigned int)r; i++)
				vs_port_sent(p);
			if ((unsigned int)r == n)
				continue;
			/*
			 * A short count: the kernel refused the next one, and
			 * on a socket of the peer's alone that is its queue,
			 * full. Wait for it now rather than hear EAGAIN again;
			 * any other error shows when the probe wakes us.
			 */
			blocked(sw, p, 0);
			return;
		}
		err = errno;
		if (err == EINTR)
			continue;
		if (err == EPERM || err == ENOTCONN || err == EDESTADDRREQ) {
			/* it connected elsewhere, or our connection is gone */
			vs_dgram_probe_reset(sw, p);
			if (err == EPERM)
				p->probe.fd = -2;
			continue;
		}
		send_failed(sw, p, 0, err);
	}
}

/*
 * Gather the queues of every dgram peer of one socket that may be sent to
 * into one sendmmsg. A peer whose queue is full answers EAGAIN; it backs
 * off on its own and the others keep going, so one stopped guest blocks
 * nobody (a connected one, which gets no EAGAIN, is held back by
 * the stall check in forward.c instead). Peers that agreed to headers (nego.c) get
 * one in front. Each entry goes to the socket it names: a multiqueue
 * guest's main one or one of its queue sockets (mq.c), which always get
 * a header; one of those found gone is dropped alone. Plain peers are
 * sent to by sockets of their own first (direct()).
 */
static void flush_sock(struct vs_switch *sw, enum vs_dgram_sock sock)
{
	/* only the --dgram socket's plain peers are sent to directly */
	bool may_direct = sock == VS_SOCK_DGRAM;
	int fd = vs_dgram_sock_fd(sw, sock);
	struct vs_port *owner[VS_BATCH];
	uint8_t to[VS_BATCH];
	struct mmsghdr mm[VS_BATCH];
	struct iovec iov[VS_BATCH][2];
	unsigned int i, j, n;
	int round, r;

	for (i = 0; may_direct && i < sw->nports; i++)
		if (dgram_ready(sw, sw->ports[i], sock))
			flush_direct(sw, sw->ports[i]);
	for (round = 0; round < FLUSH_ROUNDS; round++) {
		n = 0;
		for (i = 0; i < sw->nports && n < VS_BATCH; i++) {
			struct vs_port *p = sw->ports[i];

			if (!dgram_ready(sw, p, sock) ||
			    (may_direct && direct(sw, p)))
				continue;
			for (j = 0; j < p->txq.count && n < VS_BATCH; j++, n++) {
				tx_msg(&mm[n], iov[n], p, j);
				to[n] = vs_queue_to(p, j);
				mm[n].msg_hdr.msg_name = (void *)vs_mq_dst(p, to[n],
						&mm[n].msg_hdr.msg_namelen);
				owner[n] = p;
			}
		}
		if (!n)
			return;

		r = sendmmsg(fd, mm, n, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (r > 0) {
			for (i = 0; i < (unsigned int)r; i++) {
				vs_dgram_unblocked(owner[i]);
				vs_port_sent(owner[i]);
			}
			/* a short count hides the error; the next round sees it */
			continue;
		}
		if (errno == EINTR)
			continue;
		send_failed(sw, owner[0], to[0], errno);
	}
}

static void dgram_flush_all(struct vs_switch *sw)
{
	if (sw->listen_fd[VS_LISTEN_DGRAM] >= 0)
		flush_sock(sw, VS_SOCK_DGRAM);
	if (sw->listen_fd[VS_LISTEN_VNET] >= 0)
		flush_sock(sw, VS_SOCK_VNET);
}

/*
 * Send a frame to dgram port @p at once, from @iov (@n entries: its
 * virtio-net header, then @len bytes of frame), where it may go ahead of
 * nothing: headers agreed, one socket, nothing queued, not waiting for
 * room nor held back as a guest that stopped reading.  Counted as sent.
 * False if it did not go: the caller queues it as any frame, and the
 * queue's send meets whatever stopped this one.
 */
static bool dgram_send_now(struct vs_switch *sw, struct vs_port *p,
			   struct iovec *iov, unsigned int n, unsigned int len)
{
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = n };

	if (p->dead || p->ops != &vs_dgram_ops || !p->nego.tx_vnet ||
	    p->nego.tx_plain || p->mq.n || p->txq.count ||
	    p->dgram.retry_at_ms > sw->now_ms || vs_stall_dgram(sw, p))
		return false;
	mh.msg_name = (void *)vs_mq_dst(p, 0, &mh.msg_namelen);
	if (sendmsg(vs_dgram_fd(sw, p), &mh, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		return false;
	sw->st.tx_wanted++;
	vs_port_count_tx(p, len, 0);
	return true;
}

/*
 * Datagram ports that sent nothing for --port-age seconds go; not the NAT
 * port, the switch's own child, which lives as long as its process (and
 * whose headers a new port would not know)
 */
void vs_dgram_port_age(struct vs_switch *sw)
{
	uint64_t limit = (uint64_t)sw->cfg.port_age * 1000;
	unsigned int i;

	if (!limit)
		return;
	for (i = 0; i < sw->nports; i++) {
		struct vs_port *p = sw->ports[i];

		if (p && !p->dead && p->ops == &vs_dgram_ops && !p->uplink &&
		    sw->now_ms - p->seen_ms > limit && !vs_chan_holds(p, NULL)) {
			sw->st.ports_aged++;
			vs_port_remove(sw, p, "idle for --port-age");
		}
	}
}

/* A dgram port that sends with headers shows as vnet */
static const char *dgram_show(const struct vs_port *p)
{
	return p->nego.tx_vnet ? "vnet" : "dgram";
}

/*
 * No event of its own (its frames come on the switch's --dgram socket);
 * its queue goes out with every other dgram port's, in one sendmmsg
 */
const struct vs_port_ops vs_dgram_ops = {
	.name		= "dgram",
	.flush_all	= dgram_flush_all,
	.show		= dgram_show,
	.stalled	= vs_stall_dgram,
	.send_now	= dgram_send_now,
};
