// SPDX-License-Identifier: GPL-2.0
/*
 * ctl.c - the control socket's server side: one request line in, one text
 * or JSON report out (report.c writes them), then close (the client is
 * ctl_client.c).
 *
 * Protocol, on a SOCK_STREAM unix socket: the client sends one line
 * "<command>[ json]\n" with command ports, fdb, stats or channels; the
 * switch answers with the report and closes.  "capture ..." and
 * "events[ json]" stay open and stream (capture.c, events.c). Errors start with "error: "
 * (text) or are an object {"error": "..."} (json).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "vecswitch.h"

/* @c's answer is this text */
static void __attribute__((format(printf, 2, 3)))
answer(struct vs_ctl_conn *c, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&c->out, fmt, ap);
	va_end(ap);
	if (n < 0)
		c->out = NULL;	/* out of memory: closed with no answer */
	c->outlen = n < 0 ? 0 : n;
	c->outoff = 0;
}

/* Is @word the request's first word, followed by its end or a blank? */
static bool is_req(const struct vs_ctl_conn *c, const char *word)
{
	size_t n = strlen(word);

	return !strncmp(c->req, word, n) && (!c->req[n] || strchr(" \t\r\n", c->req[n]));
}

/* Parse the request in c->req and put the answer in c->out. */
void vs_ctl_answer(struct vs_switch *sw, struct vs_ctl_conn *c)
{
	char cmd[16] = "", flag[16] = "", extra[2] = "";
	const char *err;
	bool json = false;
	ssize_t len;
	int n;

	c->req[c->reqlen] = '\0';
	if (is_req(c, "capture")) {
		err = vs_capture_start(sw, c, c->req + 7);
		if (err)
			answer(c, "error: capture: %s\n", err);
		return;
	}
	if (is_req(c, "events")) {
		err = vs_events_start(sw, c, c->req + 6);
		if (err)
			answer(c, "error: events: %s\n", err);
		return;
	}
	if (is_req(c, "forward")) {
		c->out = vs_nat_forward(sw, c, c->req + 7);
		c->outlen = c->out ? strlen(c->out) : 0;
		c->outoff = 0;
		return;
	}
	/* "nat", or "nat json" */
	if (!strncmp(c->req, "nat", 3) &&
	    (!c->req[3] || strchr("\r\n", c->req[3]) ||
	     (!strncmp(c->req + 3, " json", 5) && (!c->req[8] || strchr("\r\n", c->req[8]))))) {
		c->out = vs_nat_guests(sw, c, c->req[3] == ' ');
		c->outlen = c->out ? strlen(c->out) : 0;
		c->outoff = 0;
		return;
	}
	n = sscanf(c->req, "%15s %15s %1s", cmd, flag, extra);
	if (n >= 2 && !strcmp(flag, "json"))
		json = true;
	len = n < 1 || n > 2 || (n == 2 && !json) ? -1 :
	      vs_report(sw, cmd, json, &c->out);
	if (len >= 0) {
		c->outlen = len;
		c->outoff = 0;
	} else if (len == -2) {
		answer(c, json ? "{\"error\":\"out of memory\"}\n" :
		       "error: out of memory\n");
	} else if (json) {
		answer(c, "{\"error\":\"unknown request\"}\n");
	} else {
		answer(c, "error: unknown request, want ports|fdb|stats|channels [json], capture, events [json], forward or nat\n");
	}
}

/* A request is complete at its first newline or when the buffer is full. */
bool vs_ctl_req_done(const struct vs_ctl_conn *c)
{
	return memchr(c->req, '\n', c->reqlen) || c->reqlen >= sizeof(c->req) - 1;
}

/* ---- server side ------------------------------------------------------------- */

static void ctl_close(struct vs_switch *sw, struct vs_ctl_conn *c)
{
	vs_capture_free(sw, c);
	vs_events_free(sw, c);
	if (c->fd >= 0)
		close(c->fd);
	free(c->out);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

/*
 * The control socket shows every guest's path, pid and uid: besides its
 * own mode, only root, the switch's own user and members of --ctl-group
 * (as the client's primary group or a supplementary one) are answered.
 */
/* Is @gid among the supplementary groups the client had at connect? */
static bool ctl_peer_in_group(int fd, gid_t gid)
{
	gid_t some[64], *groups = some;
	socklen_t len = sizeof(some);
	bool in = false;
	size_t i;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0) {
		/* ERANGE: len now says how much the list takes */
		if (errno != ERANGE)
			return false;
		groups = malloc(len);
		if (!groups)
			return false;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0)
			len = 0;
	}
	for (i = 0; i < len / sizeof(gid_t) && !in; i++)
		in = groups[i] == gid;
	if (groups != some)
		free(groups);
	return in;
}

static bool ctl_allowed(const struct vs_switch *sw, int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return false;
	if (cred.uid == 0 || cred.uid == geteuid())
		return true;
	if (sw->cfg.ctl_gid < 0)
		return false;
	return cred.gid == (gid_t)sw->cfg.ctl_gid ||
	       ctl_peer_in_group(fd, sw->cfg.ctl_gid);
}

void vs_ctl_accept(struct vs_switch *sw)
{
	unsigned int i;
	int fd;

	fd = vs_accept_fd(sw, sw->listen_fd[VS_LISTEN_CTL]);
	if (fd < 0)
		return;
	if (!ctl_allowed(sw, fd)) {
		sw->st.ctl_refused++;
		close(fd);
		return;
	}
	for (i = 0; i < VS_CTL_MAX_CONN; i++)
		if (sw->ctl[i].fd < 0)
			break;
	/* a busy switch answers a few clients at a time; the rest retry */
	if (i == VS_CTL_MAX_CONN ||
	    vs_epoll_add(sw, fd, vs_ev(VS_EV_CTL_CONN, i), EPOLLIN) < 0) {
		close(fd);
		return;
	}
	sw->ctl[i].fd = fd;
	sw->ctl[i].serial = ++sw->ctl_serial;
	sw->ctl[i].deadline_ms = sw->now_ms + VS_CTL_TIMEOUT_MS;
}

/*
 * Send what @c has to say.  A report closes the connection once out; a
 * capture stays, listening for its client's end (EPOLLIN) and, while its
 * output waits for room, for that too (EPOLLOUT).
 */
static void ctl_write(struct vs_switch *sw, struct vs_ctl_conn *c)
{
	struct epoll_event ev = {
		.events = EPOLLOUT,
		.data.u64 = vs_ev(VS_EV_CTL_CONN, c - sw->ctl),
	};

	/* a stream's client may end it; a capture that ended only drains */
	if ((c->cap && !vs_capture_done(c)) || c->ev.on)
		ev.events |= EPOLLIN;
	while (c->outoff < c->outlen) {
		ssize_t r = send(c->fd, c->out + c->outoff,
				 c->outlen - c->outoff,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (r < 0 && errno == EAGAIN) {
			if (!c->want_out)
				epoll_ctl(sw->epfd, EPOLL_CTL_MOD, c->fd, &ev);
			c->want_out = true;
			return;
		}
		if (r <= 0) {
			ctl_close(sw, c);
			return;
		}
		c->outoff += r;
	}
	c->outoff = c->outlen = 0;
	if ((c->cap && !vs_capture_done(c)) || c->ev.on) {
		ev.events = EPOLLIN;
		if (c->want_out)
			epoll_ctl(sw->epfd, EPOLL_CTL_MOD, c->fd, &ev);
		c->want_out = false;
		return;
	}
	ctl_close(sw, c);
}

/*
 * A capture's client stopped it (end of its input), or went; an events
 * client that sends anything, or goes, is done
 */
static void stream_input(struct vs_switch *sw, struct vs_ctl_conn *c,
			 uint32_t events)
{
	char buf[64];
	ssize_t r;

	if (events & EPOLLERR) {
		ctl_close(sw, c);
		return;
	}
	r = vs_recv_rights(sw, c->fd, buf, sizeof(buf));
	if (r < 0 && errno == EAGAIN && !(events & EPOLLHUP))
		return;
	if (c->ev.on) {
		ctl_close(sw, c);
		return;
	}
	/* anything sent after the request ends the capture too */
	vs_capture_end(sw, c);
	ctl_write(sw, c);
}

/*
 * End of a loop turn: what the captures took and the events written go
 * to their clients; one that is behind is written when its socket says
 * it has room (EPOLLOUT), not tried again every turn
 */
void vs_ctl_flush(struct vs_switch *sw)
{
	unsigned int i;

	for (i = 0; i < VS_CTL_MAX_CONN; i++) {
		struct vs_ctl_conn *c = &sw->ctl[i];

		if (c->fd < 0)
			continue;
		if (c->nat_wait && c->out) {
			/* the NAT process answered it (nat.c) */
			c->nat_wait = false;
			ctl_write(sw, c);
		} else if ((c->cap || c->ev.on) && !c->want_out &&
			   c->outlen > c->outoff) {
			ctl_write(sw, c);
		}
	}
}

void vs_ctl_event(struct vs_switch *sw, unsigned int idx, uint32_t events)
{
	struct vs_ctl_conn *c;
	ssize_t r;

	if (idx >= VS_CTL_MAX_CONN || sw->ctl[idx].fd < 0)
		return;
	c = &sw->ctl[idx];
	if (c->nat_wait) {
		/* waiting for the NAT process; a client that went is done */
		if (events & (EPOLLHUP | EPOLLERR))
			ctl_close(sw, c);
		return;
	}
	if (c->cap || c->ev.on) {
		if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
			stream_input(sw, c, events);
		} else {
			/* room again: ctl_write goes back to EPOLLIN once done */
			ctl_write(sw, c);
		}
		return;
	}
	if (c->out) {
		ctl_write(sw, c);
		return;
	}
	r = vs_recv_rights(sw, c->fd, c->req + c->reqlen,
			   sizeof(c->req) - 1 - c->reqlen);
	if (r < 0 && errno == EAGAIN)
		return;
	if (r > 0) {
		c->reqlen += r;
		if (!vs_ctl_req_done(c))
			return;
	} else if (r < 0 || !c->reqlen || (events & EPOLLERR)) {
		ctl_close(sw, c);
		return;
	}
	/* a full line, a full buffer, or end of input: answer */
	vs_ctl_answer(sw, c);
	if (c->nat_wait) {
		/* nothing to read or write until the NAT process answers */
		struct epoll_event ev = {
			.data.u64 = vs_ev(VS_EV_CTL_CONN, idx),
		};

		epoll_ctl(sw->epfd, EPOLL_CTL_MOD, c->fd, &ev);
		return;
	}
	ctl_write(sw, c);
}

void vs_ctl_expire(struct vs_switch *sw)
{
	unsigned int i;

	/* a capture or an event stream runs as long as its client wants */
	for (i = 0; i < VS_CTL_MAX_CONN; i++)
		if (sw->ctl[i].fd >= 0 && !sw->ctl[i].cap && !sw->ctl[i].ev.on &&
		    sw->now_ms >= sw->ctl[i].deadline_ms)
			ctl_close(sw, &sw->ctl[i]);
}

void vs_ctl_close_all(struct vs_switch *sw)
{
	unsigned int i;

	for (i = 0; i < VS_CTL_MAX_CONN; i++)
		if (sw->ctl[i].fd >= 0)
			ctl_close(sw, &sw->ctl[i]);
}
