// SPDX-License-Identifier: GPL-2.0
/*
 * mmsg.c - the portable I/O backend: epoll for readiness, the dgram
 * socket among the rest (the loop reads it with recvmmsg when it is
 * ready).  Used where io_uring is missing and with --no-uring.  Sending
 * is the same for both backends (the ports' ops).
 */
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "vecswitch.h"

static int mmsg_init(struct vs_switch *sw)
{
	if (sw->listen_fd[VS_LISTEN_DGRAM] >= 0 &&
	    vs_epoll_add(sw, sw->listen_fd[VS_LISTEN_DGRAM], vs_ev(VS_EV_DGRAM, 0), EPOLLIN) < 0)
		return -1;
	return 0;
}

static void mmsg_fini(struct vs_switch *sw)
{
	(void)sw;
}

/* The dgram socket is in the epoll set too: the loop reads it when ready */
static int mmsg_wait(struct vs_switch *sw, int timeout_ms, struct vs_ready *r)
{
	int n = epoll_wait(sw->epfd, r->ev, VS_READY_MAX, timeout_ms);

	if (n < 0)
		return errno == EINTR ? 0 : -1;
	r->n = n;
	return 0;
}

const struct vs_io_ops vs_io_mmsg = {
	.name		= "mmsg",
	.init		= mmsg_init,
	.fini		= mmsg_fini,
	.wait		= mmsg_wait,
};
