// SPDX-License-Identifier: GPL-2.0
/*
 * conn.c - connected ports: stream (a 4-byte big-endian length, then the
 * frame) and seqpacket (one frame per packet); accepting them (vhost-user
 * connections too), reading frames from them and writing their queues
 * out as the socket takes them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "vecswitch.h"

#define ACCEPTS_PER_EVENT	16
/* a stream's input buffer: its largest frame, and a read more */
#define STREAM_READ_CHUNK	65536

/* ---- output ------------------------------------------------------------- */

static bool conn_gone_errno(int err)
{
	return err == EPIPE || err == ECONNRESET || err == ENOTCONN;
}

static void stream_flush(struct vs_switch *sw, struct vs_port *p)
{
	struct iovec iov[2 * VS_BATCH];
	struct msghdr mh = { .msg_iov = iov };
	unsigned int i, n;
	ssize_t r;

	while (p->txq.count) {
		size_t skip = p->stream.tx_off;

		n = 0;
		for (i = 0; i < p->txq.count && i < VS_BATCH; i++) {
			struct vs_buf *b = vs_queue_peek(p, i);

			if (skip < 4) {
				iov[n].iov_base = b->hdr + skip;
				iov[n++].iov_len = 4 - skip;
				iov[n].iov_base = b->data;
				iov[n++].iov_len = b->len;
			} else {
				iov[n].iov_base = b->data + (skip - 4);
				iov[n++].iov_len = b->len - (skip - 4);
			}
			skip = 0;
		}
		mh.msg_iovlen = n;
		r = sendmsg(p->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (r < 0) {
			if (errno == EAGAIN || errno == EINTR) {
				vs_port_want_out(sw, p, true);
				return;
			}
			/* what is queued goes with the port (tx_retired) */
			vs_port_remove(sw, p, strerror(errno));
			return;
		}
		/* consume r bytes: whole frames leave the queue */
		while (r > 0) {
			struct vs_buf *b = vs_queue_peek(p, 0);
			size_t left = 4 + b->len - p->stream.tx_off;

			if ((size_t)r < left) {
				p->stream.tx_off += r;
				break;
			}
			r -= left;
			p->stream.tx_off = 0;
			vs_port_sent(p);
		}
	}
	vs_port_want_out(sw, p, false);
}

static void seqpacket_flush(struct vs_switch *sw, struct vs_port *p)
{
	struct mmsghdr mm[VS_BATCH];
	struct iovec iov[VS_BATCH];
	unsigned int i, n;
	int r;

	while (p->txq.count) {
		n = p->txq.count < VS_BATCH ? p->txq.count : VS_BATCH;
		memset(mm, 0, n * sizeof(mm[0]));
		for (i = 0; i < n; i++) {
			struct vs_buf *b = vs_queue_peek(p, i);

			iov[i].iov_base = b->data;
			iov[i].iov_len = b->len;
			mm[i].msg_hdr.msg_iov = &iov[i];
			mm[i].msg_hdr.msg_iovlen = 1;
		}
		r = sendmmsg(p->fd, mm, n, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (r < 0) {
			if (errno == EAGAIN || errno == EINTR) {
				vs_port_want_out(sw, p, true);
				return;
			}
			if (conn_gone_errno(errno)) {
				vs_port_remove(sw, p, strerror(errno));
				return;
			}
			/* this one frame cannot go (EMSGSIZE, ENOBUFS) */
			p->st.tx_errors++;
			vs_queue_pop(p);
			continue;
		}
		for (i = 0; i < (unsigned int)r; i++)
			vs_port_sent(p);
	}
	vs_port_want_out(sw, p, false);
}

/* ---- input -------------------------------------------------------------- */

static void stream_input(struct vs_switch *sw, struct vs_port *p)
{
	ssize_t r;

	r = vs_recv_rights(sw, p->fd, p->stream.rxbuf + p->stream.rxlen,
			   p->stream.rxcap - p->stream.rxlen);
	if (r == 0) {
		vs_port_remove(sw, p, NULL);
		return;
	}
	if (r < 0) {
		if (errno != EAGAIN && errno != EINTR)
			vs_port_remove(sw, p, strerror(errno));
		return;
	}
	p->stream.rxlen += r;
	vs_stream_rx(sw, p);
}

/*
 * Forward every whole frame in p->stream.rxbuf and keep the partial tail.
 * A length over --max-frame loses the framing for good: the port goes.
 */
void vs_stream_rx(struct vs_switch *sw, struct vs_port *p)
{
	size_t off = 0;

	while (p->stream.rxlen - off >= 4) {
		const uint8_t *h = p->stream.rxbuf + off;
		uint32_t flen = (uint32_t)h[0] << 24 | h[1] << 16 |
				h[2] << 8 | h[3];

		if (flen > sw->cfg.max_frame) {
			/* no way to find the next frame: give up on the peer */
			p->st.rx_bad_len++;
			sw->st.stream_bad_len++;
			vs_port_remove(sw, p, "bad frame length");
			return;
		}
		if (p->stream.rxlen - off - 4 < flen)
			break;
		vs_forward(sw, p, h + 4, flen);
		off += 4 + flen;
	}
	if (off) {
		memmove(p->stream.rxbuf, p->stream.rxbuf + off,
			p->stream.rxlen - off);
		p->stream.rxlen -= off;
	}
}

static void seqpacket_input(struct vs_switch *sw, struct vs_port *p,
			    uint32_t events)
{
	struct mmsghdr mm[VS_BATCH];
	struct iovec iov[VS_BATCH];
	int i, r;

	/* the --dgram socket's scratch, a slot the size it needs */
	vs_rx_batch_init(sw, mm, iov, VS_SOCK_DGRAM, false);
	r = recvmmsg(p->fd, mm, VS_BATCH, MSG_DONTWAIT | MSG_CMSG_CLOEXEC,
		     NULL);
	if (r < 0) {
		if (errno != EAGAIN && errno != EINTR)
			vs_port_remove(sw, p, strerror(errno));
		return;
	}
	/* all of them: the loop below may stop early */
	for (i = 0; i < r; i++)
		vs_rights_take(sw, &mm[i].msg_hdr);
	for (i = 0; i < r; i++) {
		/* a zero-length read after hangup is the end, not a runt */
		if (!mm[i].msg_len && (events & (EPOLLHUP | EPOLLRDHUP))) {
			vs_port_remove(sw, p, NULL);
			return;
		}
		if (mm[i].msg_hdr.msg_flags & MSG_TRUNC) {
			p->st.rx_oversize++;
			continue;
		}
		vs_forward(sw, p, iov[i].iov_base, mm[i].msg_len);
		if (p->dead)
			return;
	}
	if (!r && (events & (EPOLLHUP | EPOLLRDHUP)))
		vs_port_remove(sw, p, NULL);
}

/* ---- the two types ------------------------------------------------------ */

static void stream_event(struct vs_switch *sw, struct vs_port *p,
			 uint32_t events)
{
	if (events & (EPOLLIN | EPOLLHUP | EPOLLRDHUP | EPOLLERR))
		stream_input(sw, p);
}

static void seqpacket_event(struct vs_switch *sw, struct vs_port *p,
			    uint32_t events)
{
	if (events & (EPOLLIN | EPOLLHUP | EPOLLRDHUP | EPOLLERR))
		seqpacket_input(sw, p, events);
}

static size_t stream_rx_len(const struct vs_switch *sw)
{
	return 4 + sw->cfg.max_frame + STREAM_READ_CHUNK;
}

/*
 * Where the kernel lets descriptors in (no SO_PASSRIGHTS), some may wait
 * in the connection: its close would release them here
 */
static void conn_close(struct vs_switch *sw, struct vs_port *p)
{
	if (sw->rights.passed)
		vs_close_later(sw, p->fd);
	else
		close(p->fd);
}

const struct vs_port_ops vs_stream_ops = {
	.name		= "stream",
	.rx_len		= stream_rx_len,
	.event		= stream_event,
	.flush		= stream_flush,
	.close		= conn_close,
};

const struct vs_port_ops vs_seqpacket_ops = {
	.name		= "seqpacket",
	.event		= seqpacket_event,
	.flush		= seqpacket_flush,
	.close		= conn_close,
};

/* ---- new ports ---------------------------------------------------------------- */

/*
 * A connection turned away.  One to the vhost-user socket takes
 * descriptors (as any does where the kernel cannot refuse them), and a
 * message with some may already wait in it: the closer closes it.
 */
static void refuse(struct vs_switch *sw, int fd, const struct vs_port_ops *ops)
{
	if (ops->takes_fds || sw->rights.passed)
		vs_close_later(sw, fd);
	else
		close(fd);
}

void vs_accept(struct vs_switch *sw, int lfd, const struct vs_port_ops *ops)
{
	int i;

	for (i = 0; i < ACCEPTS_PER_EVENT; i++) {
		char name[VS_NAME_LEN];
		struct vs_port *p;
		struct ucred cred;
		socklen_t clen = sizeof(cred);
		const char *why;
		int fd;

		fd = vs_accept_fd(sw, lfd);
		if (fd < 0) {
			if (errno != EAGAIN && errno != EINTR &&
			    errno != ECONNABORTED)
				vs_log(sw, 0, "accept: %s", strerror(errno));
			return;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) == 0) {
			snprintf(name, sizeof(name), "pid=%d uid=%u",
				 (int)cred.pid, (unsigned int)cred.uid);
		} else {
			snprintf(name, sizeof(name), "fd=%d", fd);
			clen = 0;
		}
		if (!vs_cred_allowed(&sw->cfg, clen ? &cred : NULL)) {
			sw->st.cred_refused++;
			vs_log(sw, 1, "%s connection refused: %s not allowed",
			       ops->name, name);
			refuse(sw, fd, ops);
			continue;
		}
		why = clen ? vs_share_full(sw, cred.uid, cred.pid) : NULL;
		if (why) {
			vs_log(sw, 1, "%s connection refused: %s: %s",
			       ops->name, name, why);
			refuse(sw, fd, ops);
			continue;
		}
		p = vs_port_new(sw, ops, fd, name, clen ? &cred : NULL);
		if (!p) {
			vs_log(sw, 0, "%s connection refused: no free port",
			       ops->name);
			refuse(sw, fd, ops);
			continue;
		}
		if (ops->attach && ops->attach(sw, p) < 0)
			vs_port_remove(sw, p, "out of memory");
	}
}

