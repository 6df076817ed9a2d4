// SPDX-License-Identifier: GPL-2.0
/*
 * report.c - what the control socket's reports say: ports, fdb, stats
 * and channels, in text or JSON, and the name tables of the counters
 * they print.  ctl.c takes the requests and sends the answers.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	SW_STAT(nat_rx_gso),
	SW_STAT(nat_tx_gro),
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

/*
 * The report @cmd (ports, fdb, stats or channels), in JSON if @json:
 * allocated into *@out, its length returned; -1 if there is no such
 * report (nothing allocated), -2 out of memory
 */
ssize_t vs_report(struct vs_switch *sw, const char *cmd, bool json, char **out)
{
	struct sbuf sb = { 0 };

	if (!strcmp(cmd, "ports"))
		report_ports(sw, &sb, json);
	else if (!strcmp(cmd, "fdb"))
		report_fdb(sw, &sb, json);
	else if (!strcmp(cmd, "stats"))
		report_stats(sw, &sb, json);
	else if (!strcmp(cmd, "channels"))
		report_channels(sw, &sb, json);
	else
		return -1;
	if (sb.oom) {
		free(sb.p);
		return -2;
	}
	*out = sb.p;
	return sb.len;
}
