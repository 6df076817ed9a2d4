// SPDX-License-Identifier: GPL-2.0
/*
 * ctl.c - the control socket's server side: one request line in, one text
 * or JSON report out, then close (the client is ctl_client.c).  Also owns
 * the name tables of the counters that the reports print.
 *
 * Protocol, on a SOCK_STREAM unix socket: the client sends one line
 * "<command>[ json]\n" with command ports, fdb, stats or channels; the
 * switch answers with the report and closes. Errors start with "error: "
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

#define SB_INITIAL	1024

#define PORT_STAT(n)	{ #n, offsetof(struct vs_port_stats, n) }
const struct vs_stat_desc vs_port_stat_desc[] = {
	PORT_STAT(rx_frames),
	PORT_STAT(rx_bytes),
	PORT_STAT(tx_frames),
	PORT_STAT(tx_bytes),
	PORT_STAT(rx_runt),
	PORT_STAT(rx_oversize),
	PORT_STAT(rx_bad_src),
	PORT_STAT(rx_mac_lock),
	PORT_STAT(rx_storm),
	PORT_STAT(rx_bad_len),
	PORT_STAT(rx_bad_vnet),
	PORT_STAT(rx_gso),
	PORT_STAT(rx_hello),
	PORT_STAT(rx_hello_again),
	PORT_STAT(rx_mode),
	PORT_STAT(rx_nego_bad),
	PORT_STAT(rx_unchan),
	PORT_STAT(rx_errors),
	PORT_STAT(tx_queue_full),
	PORT_STAT(tx_oversize),
	PORT_STAT(tx_unread),
	PORT_STAT(tx_errors),
	PORT_STAT(tx_retries),
	PORT_STAT(fdb_full),
};

const unsigned int vs_port_stat_count = ARRAY_SIZE(vs_port_stat_desc);

#define SW_STAT(n)	{ #n, offsetof(struct vs_sw_stats, n) }
const struct vs_stat_desc vs_sw_stat_desc[] = {
	SW_STAT(no_port),
	SW_STAT(unknown_dropped),
	SW_STAT(isolated),
	SW_STAT(fdb_moves),
	SW_STAT(fdb_aged),
	SW_STAT(ports_added),
	SW_STAT(ports_removed),
	SW_STAT(dead_peers),
	SW_STAT(tx_peer_full),
	SW_STAT(addr_refused),
	SW_STAT(accept_shed),
	SW_STAT(ctl_refused),
	SW_STAT(peer_repinned),
	SW_STAT(user_ports_full),
	SW_STAT(process_ports_full),
	SW_STAT(ports_aged),
	SW_STAT(mem_bytes),
	SW_STAT(mem_refused),
	SW_STAT(chan_opened),
	SW_STAT(chan_revoked),
	SW_STAT(chan_failed),
	SW_STAT(chan_full),
	SW_STAT(chan_user_full),
	SW_STAT(chan_unsent),
	SW_STAT(rx_join),
	SW_STAT(rx_join_again),
	SW_STAT(rx_join_bad),
	SW_STAT(join_bad_cookie),
	SW_STAT(join_early),
	SW_STAT(join_bad_cred),
	SW_STAT(join_taken),
	SW_STAT(join_full),
	SW_STAT(join_bad_addr),
	SW_STAT(queues_dead),
	SW_STAT(rx_fds),
	SW_STAT(rx_fds_inline),
	SW_STAT(rx_ctrunc),
	SW_STAT(vhost_broken),
	SW_STAT(vhost_mapped),
	SW_STAT(vhost_mem_refused),
	SW_STAT(vhost_direct),
	SW_STAT(stream_bad_len),
	SW_STAT(cred_refused),
	SW_STAT(cred_unseen),
	SW_STAT(gso_frames),
	SW_STAT(gso_segments),
	SW_STAT(csum_filled),
	SW_STAT(diag_dumps),
	SW_STAT(diag_failed),
	SW_STAT(tx_wanted),
	SW_STAT(tx_retired),
	SW_STAT(nat_starts),
	SW_STAT(nat_deaths),
	SW_STAT(nat_rx_frames),
	SW_STAT(nat_rx_refused),
	SW_STAT(nat_tx_frames),
	SW_STAT(nat_tx_dropped),
	SW_STAT(nat_guest_errors),
};

const unsigned int vs_sw_stat_count = ARRAY_SIZE(vs_sw_stat_desc);

/* ---- a growing output buffer ------------------------------------------------ */

struct sbuf {
	char *p;
	size_t len;
	size_t cap;
	bool oom;
};

static void __attribute__((format(printf, 2, 3)))
sb_printf(struct sbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (sb->oom)
		return;
	/* vsnprintf into NULL + 0 is undefined: have a buffer from the start */
	if (!sb->p) {
		sb->p = malloc(SB_INITIAL);
		if (!sb->p) {
			sb->oom = true;
			return;
		}
		sb->cap = SB_INITIAL;
	}
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(sb->p + sb->len, sb->cap - sb->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			sb->oom = true;
			return;
		}
		if ((size_t)n < sb->cap - sb->len) {
			sb->len += n;
			return;
		}
		{
			size_t cap = (sb->cap + n + 1) * 2;
			char *np = realloc(sb->p, cap);

			if (!np) {
				sb->oom = true;
				return;
			}
			sb->p = np;
			sb->cap = cap;
		}
	}
}

/* JSON string: quotes, backslashes, control and non-ASCII bytes escaped */
static void sb_json_str(struct sbuf *sb, const char *s)
{
	sb_printf(sb, "\"");
	for (; *s; s++) {
		unsigned char c = *s;

		/* names are escaped already (vs_name_escape): UTF-8 stays */
		if (c == '"' || c == '\\')
			sb_printf(sb, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			sb_printf(sb, "\\u%04x", c);
		else
			sb_printf(sb, "%c", c);
	}
	sb_printf(sb, "\"");
}

static uint64_t stat_at(const void *base, size_t off)
{
	uint64_t v;

	memcpy(&v, (const char *)base + off, sizeof(v));
	return v;
}

/* ---- reports ---------------------------------------------------------------- */

static void report_ports(struct vs_switch *sw, struct sbuf *sb, bool json)
{
	bool first = true;
	unsigned int i;
	char mac[18], mtu[12];

	if (json)
		sb_printf(sb, "{\"ports\":[");
	else
		sb_printf(sb, "%-5s %-9s %-6s %-5s %-11s %-6s %-17s %-6s %s\n",
			  "ID", "TYPE", "UPLINK", "MACS", "QUEUE", "QUEUES",
			  "LOCKED", "MTU", "NAME");
	for (i = 0; i < sw->nports; i++) {
		struct vs_port *p = sw->ports[i];

		if (!p || p->dead)
			continue;
		if (p->locked)
			vs_mac_str(mac, p->lock_mac);
		else
			snprintf(mac, sizeof(mac), "-");
		/* only the tap has an MTU the switch holds frames to */
		if (p->mtu)
			snprintf(mtu, sizeof(mtu), "%u", p->mtu);
		else
			snprintf(mtu, sizeof(mtu), json ? "null" : "-");
		if (!json) {
			sb_printf(sb, "%-5u %-9s %-6s %-5u %5u/%-5u %-6u %-17s %-6s %s\n",
				  p->id, vs_port_type_name(p),
				  p->uplink ? "yes" : "no", p->fdb_count,
				  p->txq.count, p->txq.cap, 1 + p->mq.n, mac,
				  mtu, p->name);
			continue;
		}
		sb_printf(sb, "%s{\"id\":%u,\"type\":\"%s\",\"name\":",
			  first ? "" : ",", p->id, vs_port_type_name(p));
		sb_json_str(sb, p->name);
		sb_printf(sb, ",\"uplink\":%s,\"macs\":%u,\"queue\":%u,"
			  "\"queue_max\":%u,\"queues\":%u,\"mtu\":%s,"
			  "\"locked_mac\":",
			  p->uplink ? "true" : "false", p->fdb_count,
			  p->txq.count, p->txq.cap, 1 + p->mq.n, mtu);
		if (p->locked)
			sb_printf(sb, "\"%s\"}", mac);
		else
			sb_printf(sb, "null}");
		first = false;
	}
	if (json)
		sb_printf(sb, "]}\n");
}

static void report_fdb(struct vs_switch *sw, struct sbuf *sb, bool json)
{
	struct vs_fdb *fdb = &sw->fdb;
	bool first = true;
	unsigned int i;
	char mac[18];

	if (json)
		sb_printf(sb, "{\"max\":%u,\"age\":%u,\"fdb\":[", fdb->max,
			  sw->cfg.age);
	else
		sb_printf(sb, "%-17s %-4s %-5s %s\n", "MAC", "VLAN", "PORT",
			  "AGE");
	for (i = 0; i < fdb->max; i++) {
		struct vs_fdb_entry *e = &fdb->ent[i];
		uint64_t age;

		if (!e->used || e->port->dead)
			continue;
		age = (sw->now_ms - e->seen_ms) / 1000;
		/* entries past their age wait for the sweep; hide them */
		if (sw->cfg.age && age >= sw->cfg.age)
			continue;
		vs_mac_str(mac, e->mac);
		if (json)
			sb_printf(sb, "%s{\"mac\":\"%s\",\"vlan\":%u,\"port\":%u,\"age\":%llu}",
				  first ? "" : ",", mac, e->vlan, e->port->id,
				  (unsigned long long)age);
		else
			sb_printf(sb, "%-17s %-4u %-5u %llu\n", mac, e->vlan,
				  e->port->id, (unsigned long long)age);
		first = false;
	}
	if (json)
		sb_printf(sb, "]}\n");
}

/* Open shortcut channels, each once; their frames are the guests' to count */
static void report_channels(struct vs_switch *sw, struct sbuf *sb, bool json)
{
	struct vs_chan_info ci;
	unsigned int i, k;
	bool first = true;
	char mac[2][18];

	if (json)
		sb_printf(sb, "{\"channels\":[");
	else
		sb_printf(sb, "%-5s %-17s %-5s %-17s %-6s %-6s %s\n", "PORT",
			  "MAC", "PORT", "MAC", "AGE", "QUEUES", "QUEUED");
	for (i = 0; i < sw->nports; i++) {
		struct vs_port *p = sw->ports[i];

		for (k = 0; p && !p->dead && vs_chan_info(sw, p, k, &ci); k++) {
			vs_mac_str(mac[0], ci.mac[0]);
			vs_mac_str(mac[1], ci.mac[1]);
			if (json)
				sb_printf(sb, "%s{\"ports\":[%u,%u],\"macs\":[\"%s\",\"%s\"],"
					  "\"age\":%llu,\"queues\":%u,\"queued\":[%u,%u]}",
					  first ? "" : ",", ci.port[0]->id,
					  ci.port[1]->id, mac[0], mac[1],
					  (unsigned long long)ci.age_s, ci.queues,
					  ci.queued[0], ci.queued[1]);
			else
				sb_printf(sb, "%-5u %-17s %-5u %-17s %-6llu %-6u %u/%u\n",
					  ci.port[0]->id, mac[0], ci.port[1]->id,
					  mac[1], (unsigned long long)ci.age_s,
					  ci.queues, ci.queued[0], ci.queued[1]);
			first = false;
		}
	}
	if (json)
		sb_printf(sb, "]}\n");
}

/*
 * The counters of each of @p's sockets, 0 to mq.n: rx_queue_K_packets and
 * the like, after the port's own and in the same form
 */
/* One counter a line (text) or a "name":value member each (JSON) */
static void report_table(struct sbuf *sb, bool json, const void *base,
			 const struct vs_stat_desc *desc, unsigned int n)
{
	unsigned int k;

	for (k = 0; k < n; k++)
		sb_printf(sb, json ? ",\"%s\":%llu" : "  %s %llu\n", desc[k].name,
			  (unsigned long long)stat_at(base, desc[k].off));
}

static void report_queue_stats(const struct vs_port *p, struct sbuf *sb,
			       bool json)
{
	static const char *const name[][2] = {
		{ "rx", "packets" }, { "rx", "bytes" },
		{ "tx", "packets" }, { "tx", "bytes" },
	};
	unsigned int k, i;
	char key[32];

	for (k = 0; k <= p->mq.n && k < VS_MQ_MAX; k++) {
		const struct vs_queue_stats *qs = &p->qst[k];
		const uint64_t v[] = {
			qs->rx_packets, qs->rx_bytes, qs->tx_packets,
			qs->tx_bytes,
		};

		for (i = 0; i < ARRAY_SIZE(name); i++) {
			snprintf(key, sizeof(key), "%s_queue_%u_%s", name[i][0],
				 k, name[i][1]);
			if (json)
				sb_printf(sb, ",\"%s\":%llu", key,
					  (unsigned long long)v[i]);
			else
				sb_printf(sb, "  %s %llu\n", key,
					  (unsigned long long)v[i]);
		}
	}
}

static void report_stats(struct vs_switch *sw, struct sbuf *sb, bool json)
{
	bool first = true;
	unsigned int i;

	vs_buf_account(&sw->st);
	if (json)
		sb_printf(sb, "{\"switch\":{\"io\":\"%s\",\"fdb_entries\":%u",
			  sw->io->name, sw->fdb.count);
	else
		sb_printf(sb, "switch io %s\n  fdb_entries %u\n", sw->io->name,
			  sw->fdb.count);
	report_table(sb, json, &sw->st, vs_sw_stat_desc, vs_sw_stat_count);
	if (json)
		sb_printf(sb, "},\"ports\":[");
	for (i = 0; i < sw->nports; i++) {
		struct vs_port *p = sw->ports[i];

		if (!p || p->dead)
			continue;
		if (json) {
			sb_printf(sb, "%s{\"id\":%u,\"type\":\"%s\",\"name\":",
				  first ? "" : ",", p->id, vs_port_type_name(p));
			sb_json_str(sb, p->name);
		} else {
			sb_printf(sb, "port %u %s %s\n", p->id,
				  vs_port_type_name(p), p->name);
		}
		report_table(sb, json, &p->st, vs_port_stat_desc,
			     vs_port_stat_count);
		report_queue_stats(p, sb, json);
		if (p->ops->stats && p->ops->stats(p))
			report_table(sb, json, p->ops->stats(p),
				     p->ops->stat_desc, p->ops->stat_count);
		if (json)
			sb_printf(sb, "}");
		first = false;
	}
	if (json)
		sb_printf(sb, "]}\n");
}

/* Parse the request in c->req and put the answer in c->out. */
void vs_ctl_answer(struct vs_switch *sw, struct vs_ctl_conn *c)
{
	char cmd[16] = "", flag[16] = "", extra[2] = "";
	struct sbuf sb = { 0 };
	const char *err;
	bool json = false;
	int n;

	c->req[c->reqlen] = '\0';
	if (!strncmp(c->req, "capture", 7) &&
	    (!c->req[7] || strchr(" \t\r\n", c->req[7]))) {
		err = vs_capture_start(sw, c, c->req + 7);
		if (!err)
			return;
		sb_printf(&sb, "error: capture: %s\n", err);
		goto out;
	}
	if (!strncmp(c->req, "forward", 7) &&
	    (!c->req[7] || strchr(" \t\r\n", c->req[7]))) {
		c->out = vs_nat_forward(sw, c->req + 7);
		c->outlen = c->out ? strlen(c->out) : 0;
		c->outoff = 0;
		return;
	}
	if (!strncmp(c->req, "nat", 3) &&
	    (!c->req[3] || strchr("\r\n", c->req[3]) ||
	     (!strncmp(c->req + 3, " json", 5) && (!c->req[8] || strchr("\r\n", c->req[8]))))) {
		c->out = vs_nat_guests(sw, c->req[3] == ' ');
		c->outlen = c->out ? strlen(c->out) : 0;
		c->outoff = 0;
		return;
	}
	n = sscanf(c->req, "%15s %15s %1s", cmd, flag, extra);
	if (n >= 2 && !strcmp(flag, "json"))
		json = true;
	if (n < 1 || n > 2 || (n == 2 && !json))
		goto bad;
	if (!strcmp(cmd, "ports"))
		report_ports(sw, &sb, json);
	else if (!strcmp(cmd, "fdb"))
		report_fdb(sw, &sb, json);
	else if (!strcmp(cmd, "stats"))
		report_stats(sw, &sb, json);
	else if (!strcmp(cmd, "channels"))
		report_channels(sw, &sb, json);
	else
		goto bad;
	if (!sb.oom)
		goto out;
	free(sb.p);
	sb = (struct sbuf){ 0 };
	sb_printf(&sb, json ? "{\"error\":\"out of memory\"}\n" :
		  "error: out of memory\n");
	goto out;
bad:
	if (json)
		sb_printf(&sb, "{\"error\":\"unknown request\"}\n");
	else
		sb_printf(&sb, "error: unknown request, want ports|fdb|stats|channels [json], or capture\n");
out:
	c->out = sb.p;
	c->outlen = sb.oom ? 0 : sb.len;
	c->outoff = 0;
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

	fd = vs_accept_fd(sw, sw->ctl_fd);
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

	if (c->cap)
		ev.events |= EPOLLIN;
	while (c->outoff < c->outlen) {
		ssize_t r = send(c->fd, c->out + c->outoff,
				 c->outlen - c->outoff,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (r < 0 && errno == EAGAIN) {
			epoll_ctl(sw->epfd, EPOLL_CTL_MOD, c->fd, &ev);
			return;
		}
		if (r <= 0) {
			ctl_close(sw, c);
			return;
		}
		c->outoff += r;
	}
	c->outoff = c->outlen = 0;
	if (c->cap && !vs_capture_done(c)) {
		ev.events = EPOLLIN;
		epoll_ctl(sw->epfd, EPOLL_CTL_MOD, c->fd, &ev);
		return;
	}
	ctl_close(sw, c);
}

/* A capture's client stopped it (end of its input), or went */
static void capture_input(struct vs_switch *sw, struct vs_ctl_conn *c,
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
	/* anything sent after the request ends the capture too */
	vs_capture_end(sw, c);
	ctl_write(sw, c);
}

/* End of a loop turn: what the captures took goes to their clients */
void vs_ctl_flush(struct vs_switch *sw)
{
	unsigned int i;

	for (i = 0; i < VS_CTL_MAX_CONN; i++)
		if (sw->ctl[i].fd >= 0 && sw->ctl[i].cap &&
		    sw->ctl[i].outlen > sw->ctl[i].outoff)
			ctl_write(sw, &sw->ctl[i]);
}

void vs_ctl_event(struct vs_switch *sw, unsigned int idx, uint32_t events)
{
	struct vs_ctl_conn *c;
	ssize_t r;

	if (idx >= VS_CTL_MAX_CONN || sw->ctl[idx].fd < 0)
		return;
	c = &sw->ctl[idx];
	if (c->cap) {
		if (events & (EPOLLIN | EPOLLHUP | EPOLLERR))
			capture_input(sw, c, events);
		else
			ctl_write(sw, c);
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
	ctl_write(sw, c);
}

void vs_ctl_expire(struct vs_switch *sw)
{
	unsigned int i;

	/* a capture runs as long as its client wants */
	for (i = 0; i < VS_CTL_MAX_CONN; i++)
		if (sw->ctl[i].fd >= 0 && !sw->ctl[i].cap &&
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
