// SPDX-License-Identifier: GPL-2.0
/*
 * unixdiag.c - which dgram guests are reading.
 *
 * Every datagram the switch sends stays charged to its socket's send buffer
 * until the guest reads it, and SIOCOUTQ only gives the sum. When that sum
 * passes half the buffer, forward.c holds back guests that were sent a lot
 * without answering; a guest that only receives looks the same as one that
 * stopped. The kernel's unix socket diagnostics (NETLINK_SOCK_DIAG) tell
 * them apart: a dump lists each socket's bound name and, for a datagram
 * socket, whether its receive queue holds anything. A guest whose queue was
 * empty in one of the last two dumps is reading, whoever fills the buffer;
 * a stopped one never shows an empty queue. Dumps are taken only while the
 * buffer is over half and someone would be held, at most every
 * VS_DIAG_MS. Without the diagnostics (no unix_diag in the kernel, a guest
 * in another network namespace) the guest is judged by what it sends, as
 * before.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>

#include "vecswitch.h"

/* The dgram peers bound at @addr: their receive queue was empty in dump @gen */
static void seen_idle(struct vs_switch *sw, const struct sockaddr_un *addr,
		      socklen_t len, uint64_t gen)
{
	unsigned int i;

	for (i = 0; i < sw->nports; i++) {
		struct vs_port *p = sw->ports[i];

		if (p && p->ops == &vs_dgram_ops && p->dgram.addrlen == len &&
		    !memcmp(&p->dgram.addr, addr, len))
			p->dgram.idle_gen = gen;
	}
}

/* a dump's replies must all come within this (ms), or it is given up */
#define VS_DIAG_WAIT_MS		100

void vs_diag_open(struct vs_switch *sw)
{
	struct timeval tv = { .tv_usec = VS_DIAG_WAIT_MS * 1000 };
	int fd;

	sw->diag.fd = -1;
	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0) {
		vs_log(sw, 0, "unix socket diagnostics unavailable (%s): a guest that only receives is held back with a stopped one",
		       strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	sw->diag.fd = fd;
}

void vs_diag_close(struct vs_switch *sw)
{
	if (sw->diag.fd >= 0)
		close(sw->diag.fd);
	sw->diag.fd = -1;
}

/* One socket of the dump: mark the ports bound at its name if it is idle. */
static void diag_one(struct vs_switch *sw, const struct nlmsghdr *nh)
{
	const struct unix_diag_msg *m = NLMSG_DATA(nh);
	const struct unix_diag_rqlen *rq = NULL;
	const void *name = NULL;
	struct sockaddr_un sa;
	struct rtattr *a;
	size_t namelen = 0;
	int left;

	if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(*m)) || m->udiag_type != SOCK_DGRAM)
		return;
	left = nh->nlmsg_len - NLMSG_LENGTH(sizeof(*m));
	for (a = (struct rtattr *)(m + 1); RTA_OK(a, left); a = RTA_NEXT(a, left)) {
		if (a->rta_type == UNIX_DIAG_NAME) {
			name = RTA_DATA(a);
			namelen = RTA_PAYLOAD(a);
		} else if (a->rta_type == UNIX_DIAG_RQLEN &&
			   RTA_PAYLOAD(a) >= sizeof(*rq)) {
			rq = RTA_DATA(a);
		}
	}
	/* a datagram socket reports the size of its first queued datagram */
	if (!rq || rq->udiag_rqueue || !namelen || namelen > sizeof(sa.sun_path))
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, name, namelen);
	seen_idle(sw, &sa, offsetof(struct sockaddr_un, sun_path) + namelen,
		  sw->diag.gen);
}

/* Read the replies of dump @seq: 0, or a negative errno. */
static int diag_read(struct vs_switch *sw, uint32_t seq)
{
	static uint8_t buf[32768] __attribute__((aligned(NLMSG_ALIGNTO)));
	uint64_t end = vs_now_ms() + VS_DIAG_WAIT_MS;
	const struct nlmsgerr *e;
	struct nlmsghdr *nh;
	size_t off;
	ssize_t n;

	/* each recv waits VS_DIAG_WAIT_MS at most (SO_RCVTIMEO) */
	while (vs_now_ms() < end) {
		n = recv(sw->diag.fd, buf, sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EPROTO;
		for (off = 0; off + sizeof(*nh) <= (size_t)n;
		     off += NLMSG_ALIGN(nh->nlmsg_len)) {
			nh = (struct nlmsghdr *)(buf + off);
			if (nh->nlmsg_len < sizeof(*nh) ||
			    nh->nlmsg_len > (size_t)n - off)
				break;
			if (nh->nlmsg_seq != seq)
				continue;	/* what a given-up dump left */
			if (nh->nlmsg_type == NLMSG_DONE)
				return 0;
			if (nh->nlmsg_type == NLMSG_ERROR) {
				e = NLMSG_DATA(nh);
				if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
					return -EPROTO;
				return e->error < 0 ? e->error : -EPROTO;
			}
			if (nh->nlmsg_type == SOCK_DIAG_BY_FAMILY)
				diag_one(sw, nh);
		}
	}
	return -ETIMEDOUT;
}

/*
 * Take a dump if the last one is older than VS_DIAG_MS. When the very first
 * one fails the kernel cannot answer (no unix_diag): the diagnostics are
 * turned off and guests judged as without them. A later failure (replies
 * too slow) is counted in diag_failed and leaves the marks to age.
 */
void vs_diag_refresh(struct vs_switch *sw)
{
	struct {
		struct nlmsghdr nh;
		struct unix_diag_req req;
	} msg = {
		.nh = {
			.nlmsg_len = sizeof(msg),
			.nlmsg_type = SOCK_DIAG_BY_FAMILY,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
		},
		.req = {
			.sdiag_family = AF_UNIX,
			.udiag_states = ~0u,
			.udiag_show = UDIAG_SHOW_NAME | UDIAG_SHOW_RQLEN,
		},
	};
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	int err = 0;

	if (sw->diag.fd < 0 ||
	    (sw->diag.gen && sw->now_ms - sw->diag.asked_ms < VS_DIAG_MS))
		return;
	sw->diag.asked_ms = sw->now_ms;
	sw->diag.gen++;
	msg.nh.nlmsg_seq = (uint32_t)sw->diag.gen;
	if (sendto(sw->diag.fd, &msg, sizeof(msg), 0,
		   (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		err = -errno;
	else
		err = diag_read(sw, msg.nh.nlmsg_seq);
	if (!err) {
		sw->st.diag_dumps++;
		return;
	}
	sw->st.diag_failed++;
	if (!sw->st.diag_dumps) {
		vs_log(sw, 0, "unix socket diagnostics unavailable (%s): a guest that only receives is held back with a stopped one",
		       strerror(-err));
		vs_diag_close(sw);
	}
}

/* Was @p's receive queue empty in one of the last two dumps? */
bool vs_diag_reading(const struct vs_switch *sw, const struct vs_port *p)
{
	return sw->diag.fd >= 0 && p->dgram.idle_gen &&
	       sw->diag.gen - p->dgram.idle_gen <= 1;
}
