// SPDX-License-Identifier: GPL-2.0
/*
 * mmsg.c - the portable I/O backend: epoll for readiness, recvmmsg to take
 * a batch of datagrams off the switch socket, sendmmsg to push the queued
 * frames of many dgram peers in one call. Used where io_uring is missing
 * and with --no-uring. The dgram flush is shared with the io_uring backend.
 */
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "vecswitch.h"

#define RX_BATCHES_PER_EVENT	4
#define FLUSH_ROUNDS		64
#define EPOLL_EVENTS		64

/* Take batches off the dgram socket, or the --vnet one. */
void vs_mmsg_dgram_rx(struct vs_switch *sw, bool vnet)
{
	int fd = vnet ? sw->vnet_fd : sw->dgram_fd;
	struct mmsghdr mm[VS_BATCH];
	struct iovec iov[VS_BATCH];
	int round, i, r;

	for (round = 0; round < RX_BATCHES_PER_EVENT; round++) {
		vs_rx_batch_init(sw, mm, iov, vnet, true);
		r = recvmmsg(fd, mm, VS_BATCH, MSG_DONTWAIT, NULL);
		if (r <= 0)
			return;
		for (i = 0; i < r; i++)
			vs_dgram_input(sw, vnet, &sw->rxaddr[i],
				       mm[i].msg_hdr.msg_namelen,
				       vs_cmsg_cred(&mm[i].msg_hdr),
				       iov[i].iov_base, mm[i].msg_len,
				       mm[i].msg_hdr.msg_flags & MSG_TRUNC);
		/* send before the next batch so per-port queues stay short */
		vs_flush_all(sw);
		if (r < VS_BATCH)
			return;
	}
}

static bool dgram_ready(const struct vs_switch *sw, const struct vs_port *p,
			bool vnet)
{
	return p && !p->dead && p->type == VS_PORT_DGRAM && p->vnet == vnet &&
	       p->txq.count && p->retry_at_ms <= sw->now_ms;
}

/*
 * Gather the queues of every dgram peer of one socket that may be sent to
 * into one sendmmsg. A peer whose queue is full answers EAGAIN; it backs
 * off on its own and the others keep going, so one stopped guest blocks
 * nobody (a connected one, which gets no EAGAIN, is held back by
 * vs_dgram_stalled instead). Peers that agreed to headers (nego.c) get
 * one in front.
 */
static void flush_sock(struct vs_switch *sw, bool vnet)
{
	int fd = vnet ? sw->vnet_fd : sw->dgram_fd;
	struct vs_port *owner[VS_BATCH];
	struct mmsghdr mm[VS_BATCH];
	struct iovec iov[VS_BATCH][2];
	unsigned int i, j, n;
	int round, r;

	for (round = 0; round < FLUSH_ROUNDS; round++) {
		n = 0;
		for (i = 0; i < sw->nports && n < VS_BATCH; i++) {
			struct vs_port *p = sw->ports[i];

			if (!dgram_ready(sw, p, vnet))
				continue;
			for (j = 0; j < p->txq.count && n < VS_BATCH; j++, n++) {
				struct vs_buf *b = vs_queue_peek(p, j);
				struct iovec *v = iov[n];

				memset(&mm[n], 0, sizeof(mm[n]));
				mm[n].msg_hdr.msg_iovlen = 1;
				if (vs_nego_tx_hdr(p, j, b)) {
					v->iov_base = b->vnet;
					v++->iov_len = sizeof(b->vnet);
					mm[n].msg_hdr.msg_iovlen = 2;
				}
				v->iov_base = b->data;
				v->iov_len = b->len;
				mm[n].msg_hdr.msg_iov = iov[n];
				mm[n].msg_hdr.msg_name = &p->pin.dst;
				mm[n].msg_hdr.msg_namelen = p->pin.dstlen;
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
		if (errno == EAGAIN || errno == ENOBUFS) {
			vs_dgram_blocked(sw, owner[0]);
		} else if (vs_dgram_dead_errno(errno)) {
			/* a restarted guest: its name has a new socket */
			if (vs_peer_repin(sw, owner[0])) {
				sw->st.peer_repinned++;
				continue;
			}
			sw->st.dead_peers++;
			vs_port_remove(sw, owner[0], strerror(errno));
		} else {
			owner[0]->st.tx_errors++;
			vs_queue_pop(owner[0]);
		}
	}
}

void vs_mmsg_flush_dgram(struct vs_switch *sw)
{
	if (sw->dgram_fd >= 0)
		flush_sock(sw, false);
	if (sw->vnet_fd >= 0)
		flush_sock(sw, true);
}

static int mmsg_init(struct vs_switch *sw)
{
	if (sw->dgram_fd >= 0 &&
	    vs_epoll_add(sw, sw->dgram_fd, vs_ev(VS_EV_DGRAM, 0), EPOLLIN) < 0)
		return -1;
	return 0;
}

static void mmsg_fini(struct vs_switch *sw)
{
	(void)sw;
}

static int mmsg_wait(struct vs_switch *sw, int timeout_ms)
{
	struct epoll_event ev[EPOLL_EVENTS];
	int i, n;

	n = epoll_wait(sw->epfd, ev, EPOLL_EVENTS, timeout_ms);
	if (n < 0)
		return errno == EINTR ? 0 : -1;
	sw->now_ms = vs_now_ms();
	for (i = 0; i < n; i++)
		vs_dispatch(sw, ev[i].data.u64, ev[i].events);
	return 0;
}

const struct vs_io_ops vs_io_mmsg = {
	.name		= "mmsg",
	.init		= mmsg_init,
	.fini		= mmsg_fini,
	.wait		= mmsg_wait,
	.flush_dgram	= vs_mmsg_flush_dgram,
};
