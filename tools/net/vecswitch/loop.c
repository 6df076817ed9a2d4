// SPDX-License-Identifier: GPL-2.0
/*
 * loop.c - the switch's loop: wait through the I/O backend (mmsg.c,
 * io_uring.c), which says what is ready and reads datagrams as they
 * come; dispatch each event to the file that owns it; send every queue
 * at the end of a turn (and between batches of a burst); run the
 * once-a-second housekeeping (aging, control time-outs, the uplink's MTU).
 * The backends call nothing here: they only wait and report.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>

#include "vecswitch.h"

/* batches taken off a readable dgram socket before anything else runs */
#define RX_BATCHES_PER_EVENT	4

#define HOUSEKEEP_MS	1000

/* ---- event dispatch -------------------------------------------------------- */

/*
 * End of a loop turn: push what forwarding queued, port by port, or for
 * a type that sends all its ports' frames together (dgram), once
 */
static void flush_all(struct vs_switch *sw)
{
	const struct vs_port_ops *together = NULL;
	unsigned int i;

	for (i = 0; i < sw->nports; i++) {
		struct vs_port *p = sw->ports[i];

		if (!p || p->dead || !p->txq.count)
			continue;
		if (p->ops->flush_all)
			together = p->ops;	/* one such type today */
		else if (!p->want_out)
			vs_port_flush(sw, p);
	}
	if (together)
		together->flush_all(sw);
	if (sw->ncap)
		vs_ctl_flush(sw);
}

/*
 * Datagram socket @sock is readable: take batches off it, and send what
 * each forwarded before the next, so that the per-port queues stay short.
 */
static void dgram_readable(struct vs_switch *sw, enum vs_dgram_sock sock)
{
	int round;

	for (round = 0; round < RX_BATCHES_PER_EVENT; round++) {
		int r = vs_dgram_rx(sw, sock);

		if (r <= 0)
			return;
		flush_all(sw);
		if (r < VS_BATCH)
			return;
	}
}

static void dispatch(struct vs_switch *sw, uint64_t tag, uint32_t events)
{
	unsigned int idx = tag >> 8;
	struct vs_port *p;

	switch ((enum vs_ev_kind)(tag & 0xff)) {
	case VS_EV_SIGNAL: {
		struct signalfd_siginfo si;

		if (read(sw->sigfd, &si, sizeof(si)) == sizeof(si)) {
			vs_log(sw, 1, "signal %u, stopping", si.ssi_signo);
			sw->stop = true;
		}
		break;
	}
	case VS_EV_DGRAM:
		dgram_readable(sw, VS_SOCK_DGRAM);
		break;
	case VS_EV_VNET:
		dgram_readable(sw, VS_SOCK_VNET);
		break;
	case VS_EV_STREAM_LISTEN:
		vs_accept(sw, sw->listen_fd[VS_LISTEN_STREAM], &vs_stream_ops);
		break;
	case VS_EV_SEQPACKET_LISTEN:
		vs_accept(sw, sw->listen_fd[VS_LISTEN_SEQPACKET], &vs_seqpacket_ops);
		break;
	case VS_EV_VHOST_LISTEN:
		vs_accept(sw, sw->listen_fd[VS_LISTEN_VHOST], &vs_vhost_ops);
		break;
	case VS_EV_CTL_LISTEN:
		vs_ctl_accept(sw);
		break;
	case VS_EV_CTL_CONN:
		vs_ctl_event(sw, idx, events);
		break;
	case VS_EV_NAT:
		vs_nat_input(sw);
		break;
	case VS_EV_PORT:
	case VS_EV_PROBE:
	case VS_EV_KICK_RX:
	case VS_EV_KICK_TX:
		/* a port removed earlier in this batch may still have events */
		p = idx < sw->nports ? sw->ports[idx] : NULL;
		if (!p || p->dead)
			break;
		if ((tag & 0xff) == VS_EV_PROBE)
			vs_dgram_probe_event(p);
		else if ((tag & 0xff) == VS_EV_PORT)
			vs_port_event(sw, p, events);
		else if (p->vhost.vh)
			vs_vhost_kick(sw, p, (tag & 0xff) == VS_EV_KICK_TX);
		break;
	}
}

static int next_timeout(struct vs_switch *sw)
{
	int t = sw->next_sweep_ms > sw->now_ms ?
		(int)(sw->next_sweep_ms - sw->now_ms) : 0;
	int r = vs_next_retry_ms(sw);

	if (sw->vh_busy)
		return 0;
	return r >= 0 && r < t ? r : t;
}

/* Until a signal stops it: wait, dispatch, send, keep house */
void vs_loop_run(struct vs_switch *sw)
{
	struct vs_ready r = { .more = false };
	int i;

	sw->now_ms = vs_now_ms();
	sw->next_sweep_ms = sw->now_ms + HOUSEKEEP_MS;
	while (!sw->stop) {
		int timeout = r.more ? 0 : next_timeout(sw);

		r.n = 0;
		r.more = false;
		if (sw->io->wait(sw, timeout, &r) < 0) {
			vs_log(sw, 0, "wait: %s", strerror(errno));
			break;
		}
		sw->now_ms = vs_now_ms();
		for (i = 0; i < r.n; i++)
			dispatch(sw, r.ev[i].data.u64, r.ev[i].events);
		if (sw->vh_busy)
			vs_vhost_poll_busy(sw);
		flush_all(sw);
		if (sw->now_ms >= sw->next_sweep_ms) {
			vs_fdb_sweep(sw);
			vs_dgram_port_age(sw);
			vs_vhost_sweep(sw);
			vs_ctl_expire(sw);
			vs_nat_tick(sw);
			if (sw->tap)
				vs_tap_mtu(sw->tap);
			sw->next_sweep_ms = sw->now_ms + HOUSEKEEP_MS;
		}
		/* events of the turn, the housekeeping's too, and the NAT
		 * process's answers go out now */
		vs_ctl_flush(sw);
		vs_port_reap(sw);
	}
}

