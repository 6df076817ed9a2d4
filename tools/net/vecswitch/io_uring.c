// SPDX-License-Identifier: GPL-2.0
/*
 * io_uring.c - the io_uring I/O backend (liburing). The dgram socket is read
 * by one multishot RECVMSG into a ring of provided buffers, each datagram
 * handed to dgram.c as it completes. Sending is the same as with the mmsg
 * backend (the ports' ops): a send to a unix socket completes in the
 * call, so the ring would add nothing. Everything else
 * (listeners, stream, seqpacket, tap, control, signals, dgram wake-up
 * probes, the --vnet socket) stays on the epoll set, which the ring
 * watches with a poll request re-armed after each completion, so one
 * io_uring_enter waits for all of it. Readiness that appears while we are
 * busy (an epoll_ctl() that finds the fd ready at once, say) may not
 * complete that poll, so the epoll set is also checked without waiting
 * before each blocking wait.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <liburing.h>
#include <sys/epoll.h>

#include "vecswitch.h"

#define RING_ENTRIES	256
#define CQ_ENTRIES	1024
#define NBUF		VS_URING_BUFS	/* provided receive buffers, power of 2 */
#define BGID		0

enum { TAG_EPOLL = 1, TAG_RECV };

#define UD(tag, idx)	(((uint64_t)(idx) << 8) | (tag))

struct uring_priv {
	struct io_uring ring;
	struct io_uring_buf_ring *br;
	uint8_t *bufmem;
	size_t bufsz;
	struct msghdr rx_mh;		/* template for the multishot recvmsg */
	bool recv_armed;
	bool poll_armed;
	bool reported;			/* the last wait reported events alone */
};

static struct uring_priv *priv(struct vs_switch *sw)
{
	return sw->io_priv;
}

static struct io_uring_sqe *get_sqe(struct uring_priv *u)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);

	if (!sqe) {
		io_uring_submit(&u->ring);
		sqe = io_uring_get_sqe(&u->ring);
	}
	return sqe;
}

static void arm_poll(struct uring_priv *u, int epfd)
{
	struct io_uring_sqe *sqe = get_sqe(u);

	if (!sqe)
		return;
	io_uring_prep_poll_add(sqe, epfd, POLLIN);
	io_uring_sqe_set_data64(sqe, UD(TAG_EPOLL, 0));
	u->poll_armed = true;
}

static void arm_recv(struct uring_priv *u, int fd)
{
	struct io_uring_sqe *sqe = get_sqe(u);

	if (!sqe)
		return;
	io_uring_prep_recvmsg_multishot(sqe, fd, &u->rx_mh, MSG_CMSG_CLOEXEC);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = BGID;
	io_uring_sqe_set_data64(sqe, UD(TAG_RECV, 0));
	u->recv_armed = true;
}

static void buf_return(struct uring_priv *u, unsigned int bid)
{
	io_uring_buf_ring_add(u->br, u->bufmem + (size_t)bid * u->bufsz,
			      u->bufsz, bid, io_uring_buf_ring_mask(NBUF), 0);
	io_uring_buf_ring_advance(u->br, 1);
}

static void uring_fini(struct vs_switch *sw)
{
	struct uring_priv *u = priv(sw);

	if (!u)
		return;
	io_uring_queue_exit(&u->ring);
	free(u->br);
	free(u->bufmem);
	free(u);
	sw->io_priv = NULL;
}

static int setup_bufs(struct uring_priv *u, size_t max_frame)
{
	struct io_uring_buf_reg reg = { 0 };
	unsigned int i;

	/* each buffer starts with a struct io_uring_recvmsg_out: align it */
	u->bufsz = (sizeof(struct io_uring_recvmsg_out) +
		    sizeof(struct sockaddr_un) + u->rx_mh.msg_controllen +
		    max_frame + 63) & ~(size_t)63;
	u->bufmem = malloc(u->bufsz * NBUF);
	if (posix_memalign((void **)&u->br, 4096,
			   NBUF * sizeof(struct io_uring_buf)) || !u->bufmem)
		return -1;
	reg.ring_addr = (unsigned long)u->br;
	reg.ring_entries = NBUF;
	reg.bgid = BGID;
	if (io_uring_register_buf_ring(&u->ring, &reg, 0) < 0)
		return -1;
	io_uring_buf_ring_init(u->br);
	for (i = 0; i < NBUF; i++)
		io_uring_buf_ring_add(u->br, u->bufmem + (size_t)i * u->bufsz,
				      u->bufsz, i, io_uring_buf_ring_mask(NBUF),
				      i);
	io_uring_buf_ring_advance(u->br, NBUF);
	return 0;
}

static int uring_init(struct vs_switch *sw)
{
	struct io_uring_params p = { 0 };
	struct io_uring_cqe *cqe;
	struct uring_priv *u;
	int r;

	u = calloc(1, sizeof(*u));
	if (!u)
		return -1;
	p.flags = IORING_SETUP_CQSIZE | IORING_SETUP_SUBMIT_ALL |
		  IORING_SETUP_COOP_TASKRUN | IORING_SETUP_SINGLE_ISSUER;
	p.cq_entries = CQ_ENTRIES;
	r = io_uring_queue_init_params(RING_ENTRIES, &u->ring, &p);
	if (r < 0) {
		/* older kernels know fewer setup flags */
		memset(&p, 0, sizeof(p));
		p.flags = IORING_SETUP_CQSIZE;
		p.cq_entries = CQ_ENTRIES;
		r = io_uring_queue_init_params(RING_ENTRIES, &u->ring, &p);
	}
	if (r < 0) {
		free(u);
		return -1;
	}
	sw->io_priv = u;

	if (sw->listen_fd[VS_LISTEN_DGRAM] >= 0) {
		/* rounded up so that the control messages after it are aligned */
		u->rx_mh.msg_namelen = (sizeof(struct sockaddr_un) + 7) & ~7u;
		/*
		 * every sender's credentials: --allow-* and peer.c need
		 * them; and descriptors, where the kernel lets them through
		 */
		u->rx_mh.msg_controllen = sizeof(sw->rxctl[0]);
		if (setup_bufs(u, vs_rx_slot(sw)) < 0)
			goto err;
		arm_recv(u, sw->listen_fd[VS_LISTEN_DGRAM]);
	}
	arm_poll(u, sw->epfd);
	if (io_uring_submit(&u->ring) < 0)
		goto err;
	/* kernels without multishot recvmsg refuse it at once */
	if (io_uring_peek_cqe(&u->ring, &cqe) == 0 && cqe->res == -EINVAL)
		goto err;
	return 0;
err:
	uring_fini(sw);
	return -1;
}

/* ---- completions ------------------------------------------------------------- */

/* What the epoll set has ready now, into @r as far as it has room */
static void epoll_ready(struct vs_switch *sw, struct vs_ready *r)
{
	int n;

	if (r->n == VS_READY_MAX) {
		r->more = true;
		return;
	}
	n = epoll_wait(sw->epfd, r->ev + r->n, VS_READY_MAX - r->n, 0);
	if (n > 0)
		r->n += n;
}

/* Descriptors in a multishot recvmsg buffer: as vs_rights_take() */
static void recv_rights(struct vs_switch *sw, struct uring_priv *u,
			struct io_uring_recvmsg_out *out)
{
	struct cmsghdr *c;

	if (out->flags & MSG_CTRUNC)
		sw->st.rx_ctrunc++;
	for (c = io_uring_recvmsg_cmsg_firsthdr(out, &u->rx_mh); c;
	     c = io_uring_recvmsg_cmsg_nexthdr(out, &u->rx_mh, c))
		vs_cmsg_fds(sw, c);
}

/* The sender's SCM_CREDENTIALS in a multishot recvmsg buffer, or NULL. */
static const struct ucred *recv_cred(struct uring_priv *u,
				     struct io_uring_recvmsg_out *out)
{
	struct cmsghdr *c;

	if (out->flags & MSG_CTRUNC)
		return NULL;
	for (c = io_uring_recvmsg_cmsg_firsthdr(out, &u->rx_mh); c;
	     c = io_uring_recvmsg_cmsg_nexthdr(out, &u->rx_mh, c))
		if (c->cmsg_level == SOL_SOCKET &&
		    c->cmsg_type == SCM_CREDENTIALS &&
		    c->cmsg_len >= CMSG_LEN(sizeof(struct ucred)))
			return (const struct ucred *)CMSG_DATA(c);
	return NULL;
}

static void recv_done(struct vs_switch *sw, struct io_uring_cqe *cqe)
{
	struct uring_priv *u = priv(sw);
	struct io_uring_recvmsg_out *out;
	unsigned int bid;
	uint8_t *buf;

	if (!(cqe->flags & IORING_CQE_F_MORE))
		u->recv_armed = false;
	if (cqe->res < 0 || !(cqe->flags & IORING_CQE_F_BUFFER))
		return;		/* ENOBUFS and friends: re-armed below */
	bid = cqe->flags >> IORING_CQE_BUFFER_SHIFT;
	buf = u->bufmem + (size_t)bid * u->bufsz;
	out = io_uring_recvmsg_validate(buf, cqe->res, &u->rx_mh);
	if (out) {
		socklen_t alen = out->namelen;
		struct ucred eff;

		if (alen > sizeof(struct sockaddr_un))
			alen = 0;	/* cut short: cannot answer it */
		recv_rights(sw, u, out);
		vs_dgram_input(sw, VS_SOCK_DGRAM, io_uring_recvmsg_name(out),
			       alen,
			       vs_cred_effective(sw, recv_cred(u, out), &eff),
			       io_uring_recvmsg_payload(out, &u->rx_mh),
			       io_uring_recvmsg_payload_length(out, cqe->res,
							       &u->rx_mh),
			       out->flags & MSG_TRUNC);
	}
	buf_return(u, bid);
}

static int uring_wait(struct vs_switch *sw, int timeout_ms, struct vs_ready *r)
{
	struct __kernel_timespec ts = {
		.tv_sec = timeout_ms / 1000,
		.tv_nsec = (long long)(timeout_ms % 1000) * 1000000,
	};
	struct uring_priv *u = priv(sw);
	struct io_uring_cqe *cqe;
	unsigned int head, seen = 0, ncqe = 0;
	int err;

	if (!u->recv_armed && sw->listen_fd[VS_LISTEN_DGRAM] >= 0)
		arm_recv(u, sw->listen_fd[VS_LISTEN_DGRAM]);
	if (!u->poll_armed)
		arm_poll(u, sw->epfd);

	/*
	 * something ready already: the loop dispatches it first, before the
	 * datagrams in the ring; the next call reaps those, whatever the
	 * epoll set says (an event its handler leaves ready must not keep
	 * the datagrams waiting)
	 */
	if (!u->reported) {
		epoll_ready(sw, r);
		if (r->n) {
			io_uring_submit(&u->ring);
			u->reported = true;
			r->more = true;
			return 0;
		}
	}
	u->reported = false;
	err = io_uring_submit_and_wait_timeout(&u->ring, &cqe, 1,
					       timeout_ms < 0 ? NULL : &ts, NULL);
	if (err < 0 && err != -ETIME && err != -EINTR && err != -EAGAIN &&
	    err != -EBUSY) {
		errno = -err;
		return -1;
	}
	sw->now_ms = vs_now_ms();

	io_uring_for_each_cqe(&u->ring, head, cqe) {
		uint64_t ud = io_uring_cqe_get_data64(cqe);

		ncqe++;
		switch (ud & 0xff) {
		case TAG_EPOLL:
			if (!(cqe->flags & IORING_CQE_F_MORE))
				u->poll_armed = false;
			epoll_ready(sw, r);
			break;
		case TAG_RECV:
			recv_done(sw, cqe);
			seen++;
			break;
		}
		/*
		 * the loop sends what a batch forwarded before the next one,
		 * and dispatches events before the datagrams after them
		 */
		if (seen == VS_BATCH || r->n) {
			r->more = true;
			break;
		}
	}
	io_uring_cq_advance(&u->ring, ncqe);
	return 0;
}

const struct vs_io_ops vs_io_uring = {
	.name		= "uring",
	.init		= uring_init,
	.fini		= uring_fini,
	.wait		= uring_wait,
};
