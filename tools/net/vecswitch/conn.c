// SPDX-License-Identifier: GPL-2.0
/*
 * conn.c - connected ports: stream (a 4-byte big-endian length, then the
 * frame), seqpacket (one frame per packet) and the tap uplink; accepting
 * them, reading frames from them and writing their queues out as the
 * socket takes them.
 */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <linux/if_tun.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "vecswitch.h"

#define TAP_READS_PER_EVENT	VS_BATCH
#define ACCEPTS_PER_EVENT	16

/* ---- output ------------------------------------------------------------- */

static void want_out(struct vs_switch *sw, struct vs_port *p, bool on)
{
	struct epoll_event ev = {
		.events = EPOLLIN | EPOLLRDHUP | (on ? EPOLLOUT : 0),
		.data.u64 = vs_ev(VS_EV_PORT, p->slot),
	};

	if (p->want_out == on)
		return;
	if (epoll_ctl(sw->epfd, EPOLL_CTL_MOD, p->fd, &ev) == 0)
		p->want_out = on;
}

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
				want_out(sw, p, true);
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
	want_out(sw, p, false);
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
				want_out(sw, p, true);
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
	want_out(sw, p, false);
}

static void tap_flush(struct vs_switch *sw, struct vs_port *p)
{
	while (p->txq.count) {
		struct vs_buf *b = vs_queue_peek(p, 0);
		ssize_t r = write(p->fd, b->data, b->len);

		if (r < 0 && (errno == EAGAIN || errno == EINTR)) {
			want_out(sw, p, true);
			return;
		}
		if (r < 0) {
			/* EIO while the interface is down: drop, keep the port */
			p->st.tx_errors++;
			vs_queue_pop(p);
			continue;
		}
		vs_port_sent(p);
	}
	want_out(sw, p, false);
}

void vs_port_flush(struct vs_switch *sw, struct vs_port *p)
{
	switch (p->type) {
	case VS_PORT_STREAM:
		stream_flush(sw, p);
		break;
	case VS_PORT_SEQPACKET:
		seqpacket_flush(sw, p);
		break;
	case VS_PORT_TAP:
		tap_flush(sw, p);
		break;
	case VS_PORT_VHOST:
		vs_vhost_flush(sw, p);
		break;
	case VS_PORT_DGRAM:
		break;
	}
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

static void tap_input(struct vs_switch *sw, struct vs_port *p)
{
	int i;

	for (i = 0; i < TAP_READS_PER_EVENT; i++) {
		ssize_t r = read(p->fd, p->stream.rxbuf, p->stream.rxcap);

		if (r < 0) {
			if (errno != EAGAIN && errno != EINTR)
				p->st.rx_errors++;
			return;
		}
		vs_forward(sw, p, p->stream.rxbuf, r);
	}
}

void vs_port_event(struct vs_switch *sw, struct vs_port *p, uint32_t events)
{
	/* a tap whose interface was deleted reports errors for ever */
	if (p->type == VS_PORT_TAP && events & (EPOLLERR | EPOLLHUP)) {
		vs_port_remove(sw, p, "tap device gone");
		return;
	}
	if (events & EPOLLIN || (p->type != VS_PORT_TAP &&
				 events & (EPOLLHUP | EPOLLRDHUP | EPOLLERR))) {
		switch (p->type) {
		case VS_PORT_STREAM:
			stream_input(sw, p);
			break;
		case VS_PORT_SEQPACKET:
			seqpacket_input(sw, p, events);
			break;
		case VS_PORT_TAP:
			tap_input(sw, p);
			break;
		case VS_PORT_VHOST:
			vs_vhost_input(sw, p);
			break;
		case VS_PORT_DGRAM:
			break;
		}
	}
	if (!p->dead && events & EPOLLOUT)
		vs_port_flush(sw, p);
}

/* ---- new ports ---------------------------------------------------------------- */

void vs_accept(struct vs_switch *sw, int lfd, enum vs_port_type type)
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
			       vs_type_name(type), name);
			close(fd);
			continue;
		}
		why = clen ? vs_share_full(sw, cred.uid, cred.pid) : NULL;
		if (why) {
			vs_log(sw, 1, "%s connection refused: %s: %s",
			       vs_type_name(type), name, why);
			close(fd);
			continue;
		}
		p = vs_port_new(sw, type, fd, name);
		if (!p) {
			vs_log(sw, 0, "%s connection refused: no free port",
			       vs_type_name(type));
			close(fd);
			continue;
		}
		if (clen) {
			p->has_owner = true;
			p->owner_uid = cred.uid;
			p->owner_pid = cred.pid;
		}
		if (type == VS_PORT_VHOST && vs_vhost_attach(sw, p) < 0)
			vs_port_remove(sw, p, "out of memory");
	}
}

/*
 * Making a tap device, or attaching to one that is not ours, takes
 * CAP_NET_ADMIN; a device made beforehand for this user does not.
 */
static void tap_perm_error(struct vs_switch *sw, const char *ifname)
{
	struct passwd *pw = getpwuid(geteuid());
	char uid[16];

	snprintf(uid, sizeof(uid), "%u", (unsigned int)geteuid());
	vs_log(sw, 0,
	       "--tap %s: not permitted without CAP_NET_ADMIN: run as root, or have root make the device for this user first: ip tuntap add dev %s mode tap user %s",
	       ifname, ifname, pw ? pw->pw_name : uid);
}

int vs_tap_open(struct vs_switch *sw, const char *ifname)
{
	char name[VS_NAME_LEN];
	struct ifreq ifr;
	struct vs_port *p;
	int fd;

	fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		vs_log(sw, 0, "--tap: /dev/net/tun: %s", strerror(errno));
		return -1;
	}
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
		if (errno == EPERM)
			tap_perm_error(sw, ifname);
		else
			vs_log(sw, 0, "--tap %s: TUNSETIFF: %s", ifname,
			       strerror(errno));
		close(fd);
		return -1;
	}
	vs_name_escape(name, sizeof(name), (const uint8_t *)ifr.ifr_name,
		       strnlen(ifr.ifr_name, IFNAMSIZ));
	p = vs_port_new(sw, VS_PORT_TAP, fd, name);
	if (!p) {
		close(fd);
		return -1;
	}
	sw->tap = p;
	vs_tap_mtu(p);
	return 0;
}

/*
 * The uplink's MTU, read again once a second: a frame larger than it
 * would be dropped by the bridge or tunnel behind the tap without a
 * trace, so the switch drops and counts it (tx_oversize) instead.  The
 * interface is asked for by its name of the moment (TUNGETIFF on the
 * tap's own descriptor), so a renamed uplink is still followed.
 */
void vs_tap_mtu(struct vs_port *p)
{
	struct ifreq ifr;
	int fd;

	memset(&ifr, 0, sizeof(ifr));
	if (ioctl(p->fd, TUNGETIFF, &ifr) < 0)
		return;
	/* any socket answers SIOCGIFMTU; AF_UNIX is one a sandbox allows */
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	if (ioctl(fd, SIOCGIFMTU, &ifr) == 0 && ifr.ifr_mtu > 0 &&
	    (unsigned int)ifr.ifr_mtu != p->mtu) {
		p->mtu = ifr.ifr_mtu;
		vs_log(NULL, 0,
		       "uplink %.*s: MTU %u; guests on its segment need an MTU of %u or less",
		       IFNAMSIZ, ifr.ifr_name, p->mtu, p->mtu);
	}
	close(fd);
}
