// SPDX-License-Identifier: GPL-2.0
/*
 * port.c - the life of a port: made (for a dgram sender, a connection or
 * the tap), counted against its user's share, aged, removed and freed;
 * and its name and type as the control output shows them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>

#include "vecswitch.h"

/*
 * A port of type @ops on descriptor @fd (-1: none of its own), named
 * @name; @owner is the user and process behind it, NULL if unknown
 */
struct vs_port *vs_port_new(struct vs_switch *sw,
			    const struct vs_port_ops *ops, int fd,
			    const char *name, const struct ucred *owner)
{
	unsigned int slot;
	struct vs_port *p;

	for (slot = 0; slot < sw->cfg.max_ports; slot++)
		if (!sw->ports[slot])
			break;
	if (slot == sw->cfg.max_ports) {
		sw->st.no_port++;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		goto err_port;
	p->txq.cap = sw->cfg.queue_len;
	p->txq.slot = calloc(p->txq.cap, sizeof(*p->txq.slot));
	p->txq.to = calloc(p->txq.cap, sizeof(*p->txq.to));
	if (!p->txq.slot || !p->txq.to)
		goto err_queue;
	if (ops->rx_len) {
		p->stream.rxcap = ops->rx_len(sw);
		p->stream.rxbuf = malloc(p->stream.rxcap);
		if (!p->stream.rxbuf)
			goto err_queue;
	}
	p->id = ++sw->next_id;
	p->slot = slot;
	p->bcast_tokens = sw->cfg.bcast_limit;
	p->bcast_ms = sw->now_ms;
	p->ops = ops;
	p->fd = fd;
	p->probe.fd = -1;
	p->dgram.pin.fd = -1;
	p->uplink = ops->uplink;
	snprintf(p->name, sizeof(p->name), "%s", name);
	if (owner) {
		p->has_owner = true;
		p->owner_uid = owner->uid;
		p->owner_pid = owner->pid;
	}

	if (fd >= 0 && vs_epoll_add(sw, fd, vs_ev(VS_EV_PORT, slot),
				    EPOLLIN | EPOLLRDHUP) < 0)
		goto err_epoll;

	sw->ports[slot] = p;
	if (slot + 1 > sw->nports)
		sw->nports = slot + 1;
	sw->st.ports_added++;
	vs_log(sw, 1, "port %u (%s %s) added", p->id, ops->name, p->name);
	vs_ev_port(sw, p, NULL);
	return p;

err_epoll:
	free(p->stream.rxbuf);
err_queue:
	free(p->txq.slot);
	free(p->txq.to);
	free(p);
err_port:
	sw->st.no_port++;
	return NULL;
}

/*
 * Per-user shares: a non-root user holds at most --max-user-ports ports,
 * one process of theirs at most --max-process-ports of those, and their
 * ports own at most --fdb-user-max forwarding entries, so one user (or
 * one guest of a user's) binding many names cannot take the switch from
 * the others.  Root is not limited.  Returns why a new port of @uid's
 * process @pid is refused, counted, or NULL.
 */
const char *vs_share_full(struct vs_switch *sw, uint32_t uid, int32_t pid)
{
	unsigned int i, by_user = 0, by_pid = 0;

	if (!uid)
		return NULL;
	for (i = 0; i < sw->nports; i++) {
		const struct vs_port *p = sw->ports[i];

		if (p && !p->dead && p->has_owner && p->owner_uid == uid) {
			by_user++;
			by_pid += p->owner_pid == pid;
		}
	}
	if (by_user >= sw->cfg.user_ports) {
		sw->st.user_ports_full++;
		return "its user holds --max-user-ports ports";
	}
	if (by_pid >= sw->cfg.process_ports) {
		sw->st.process_ports_full++;
		return "its process holds --max-process-ports ports";
	}
	return NULL;
}

/* Port @p's type as the control output shows it (a dgram port: "vnet") */
const char *vs_port_type_name(const struct vs_port *p)
{
	return p->ops->show ? p->ops->show(p) : p->ops->name;
}

/* Send what port @p's queue holds, as far as its peer takes it now */
void vs_port_flush(struct vs_switch *sw, struct vs_port *p)
{
	if (p->ops->flush)
		p->ops->flush(sw, p);
}

/* Be told (EPOLLOUT) when port @p's descriptor takes more, or no longer */
void vs_port_want_out(struct vs_switch *sw, struct vs_port *p, bool on)
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

/* Port @p's own descriptor reported @events */
void vs_port_event(struct vs_switch *sw, struct vs_port *p, uint32_t events)
{
	if (p->ops->event)
		p->ops->event(sw, p, events);
	if (!p->dead && events & EPOLLOUT)
		vs_port_flush(sw, p);
}

/* once: what the port's type set up beside its descriptor goes */
static void port_detach(struct vs_switch *sw, struct vs_port *p)
{
	if (p->ops->detach && !p->detached)
		p->ops->detach(sw, p);
	p->detached = true;
}

/*
 * Take a port out of service at once; its memory goes at the end of the
 * loop turn (vs_port_reap) so that callers up the stack may still look at it.
 * @why says why the switch removes it; NULL is a guest that left by itself
 * (its socket or connection closed), which is no error.
 */
void vs_port_remove(struct vs_switch *sw, struct vs_port *p, const char *why)
{
	if (p->dead)
		return;
	vs_log(sw, 1, "port %u (%s %s) %s%s", p->id, p->ops->name, p->name,
	       why ? "removed: " : "left", why ? why : "");
	vs_ev_port(sw, p, why ? why : "");
	p->dead = true;
	sw->ndead++;
	sw->st.ports_removed++;
	/* its share of the frame accounting outlives it */
	sw->st.tx_retired += vs_port_tx_done(p);
	vs_chan_forget(sw, p, NULL);
	vs_fdb_flush_port(sw, p);
	vs_queue_drain(p);
	port_detach(sw, p);
	if (p->fd >= 0) {
		if (p->ops->close)
			p->ops->close(sw, p);
		else
			close(p->fd);
		p->fd = -1;
	}
	if (p->probe.fd >= 0) {
		close(p->probe.fd);
		p->probe.fd = -2;
	}
	vs_peer_unpin(&p->dgram.pin);
	vs_mq_forget(p);
	if (p == sw->tap)
		sw->tap = NULL;
}

static void port_free(struct vs_port *p)
{
	vs_queue_drain(p);
	if (p->fd >= 0)
		close(p->fd);
	if (p->probe.fd >= 0)
		close(p->probe.fd);
	vs_peer_unpin(&p->dgram.pin);
	vs_mq_forget(p);
	free(p->txq.slot);
	free(p->txq.to);
	free(p->stream.rxbuf);
	free(p);
}

void vs_port_reap(struct vs_switch *sw)
{
	unsigned int i;

	if (!sw->ndead)
		return;
	for (i = 0; i < sw->nports; i++) {
		struct vs_port *p = sw->ports[i];

		if (!p || !p->dead)
			continue;
		sw->ports[i] = NULL;
		sw->ndead--;
		port_free(p);
	}
	while (sw->nports && !sw->ports[sw->nports - 1])
		sw->nports--;
}

void vs_port_free_all(struct vs_switch *sw)
{
	unsigned int i;

	for (i = 0; i < sw->cfg.max_ports; i++) {
		if (sw->ports[i]) {
			port_detach(sw, sw->ports[i]);
			vs_chan_forget(sw, sw->ports[i], NULL);
			vs_fdb_flush_port(sw, sw->ports[i]);
			port_free(sw->ports[i]);
			sw->ports[i] = NULL;
		}
	}
	sw->nports = 0;
}

/* Bytes from @s that make one valid UTF-8 character of 2 to 4, or 0 */
static size_t utf8_char(const uint8_t *s, size_t n)
{
	size_t len, i;
	uint32_t c;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, c = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, c = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, c = s[0] & 0x07;
	else
		return 0;
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	/* no overlong forms, surrogates or code points past U+10FFFF */
	if ((len == 3 && c < 0x800) || (len == 4 && c < 0x10000) ||
	    (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff)
		return 0;
	return len;
}

/*
 * A name as the control socket and the log show it: printable ASCII and
 * valid UTF-8 as they are, a backslash doubled, every other byte (a
 * newline, a NUL inside an abstract name, a stray byte) as \xHH.  So a
 * name can neither forge a line nor break JSON, and says what it is.
 * Cut to @outlen, never inside an escape.
 */
void vs_name_escape(char *out, size_t outlen, const uint8_t *s, size_t n)
{
	size_t i = 0, o = 0, k;

	while (i < n) {
		k = s[i] >= 0x80 ? utf8_char(s + i, n - i) : 0;
		if (k) {
			if (o + k >= outlen)
				break;
			memcpy(out + o, s + i, k);
			o += k;
			i += k;
			continue;
		}
		if (s[i] == '\\' || s[i] < 0x20 || s[i] >= 0x7f) {
			if (o + 4 >= outlen)
				break;
			o += s[i] == '\\' ?
			     (size_t)snprintf(out + o, outlen - o, "\\\\") :
			     (size_t)snprintf(out + o, outlen - o, "\\x%02x", s[i]);
		} else {
			if (o + 1 >= outlen)
				break;
			out[o++] = s[i];
		}
		i++;
	}
	out[o] = '\0';
}
