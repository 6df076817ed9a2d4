// SPDX-License-Identifier: GPL-2.0
/*
 * stall.c - is a dgram guest still reading what it is sent?
 *
 * A dgram guest connected to the switch's socket is not held to
 * max_dgram_qlen: what it leaves unread stays charged to the send buffer
 * every dgram guest shares, and a guest that stopped reading would take
 * all of it.  While more than half of that buffer is unread, a guest that
 * was sent its unread limit (4 MiB, or a quarter of the buffer if less)
 * without sending a frame back gets nothing more (forward.c asks here
 * before it queues), until it sends or the buffer drains below half,
 * unless the kernel's socket diagnostics just saw it reading (unixdiag.c).
 */
#include <linux/sockios.h>
#include <sys/ioctl.h>

#include "vecswitch.h"

/*
 * Should @p, a dgram peer, get no more frames for now? Yes when it was sent
 * unread_limit bytes (or a quarter of the send buffer, if that is less)
 * since it last sent a frame, more than half of the send buffer it shares
 * with the other dgram peers is taken by datagrams nobody has read yet
 * (asked of the kernel at most once a millisecond), and the unix socket
 * diagnostics did not just see it reading (unixdiag.c).  A plain peer sent
 * to by its own socket (dgram.c, direct()) takes none of that buffer.
 */
bool vs_stall_dgram(struct vs_switch *sw, const struct vs_port *p)
{
	typeof(sw->sndbuf[0]) *b = &sw->sndbuf[p->dgram.sock];
	uint64_t limit = sw->cfg.unread_limit;
	int used;

	/* its own socket holds what it has not read, not the shared one */
	if (b->size <= 0 || (p->probe.fd >= 0 && vs_dgram_may_direct(p)))
		return false;
	if (limit > (uint64_t)b->size / 4)
		limit = b->size / 4;
	if (p->dgram.unanswered <= limit)
		return false;
	if (b->asked_ms != sw->now_ms) {
		b->asked_ms = sw->now_ms;
		if (ioctl(vs_dgram_fd(sw, p), SIOCOUTQ, &used) == 0)
			b->used = used;
	}
	if (b->used <= b->size / 2)
		return false;
	vs_diag_refresh(sw);
	return !vs_diag_reading(sw, p);
}
