// SPDX-License-Identifier: GPL-2.0
/*
 * mmsg.c - the portable I/O backend: epoll for readiness, and the dgram
 * socket read with recvmmsg (vs_dgram_rx) when it is ready.  Used where
 * io_uring is missing and with --no-uring.  Sending is the same for both
 * backends (vs_dgram_flush, vs_port_flush).
 */
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "vecswitch.h"

#define EPOLL_EVENTS		64

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
};
