// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_common.c - the in-memory switch the fuzz targets drive, and the
 * few util.c functions the switch code calls (util.c itself, with its
 * clock and epoll set, is not linked; nor are main.c and loop.c). Time is
 * a counter the targets move, so aging is reproducible from the input
 * alone.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"

static uint64_t fz_clock_ms = 1000;

uint64_t vs_now_ms(void)
{
	return fz_clock_ms;
}

/* Format every message so that a bad format or argument shows, then drop it. */
void vs_log(const struct vs_switch *sw, int level, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	(void)sw;
	(void)level;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
}

int vs_epoll_add(struct vs_switch *sw, int fd, uint64_t tag, uint32_t events)
{
	(void)sw;
	(void)fd;
	(void)tag;
	(void)events;
	return 0;
}

void fz_fail(const char *what, const char *file, int line)
{
	fprintf(stderr, "%s:%d: invariant broken: %s\n", file, line, what);
	abort();
}

uint8_t fz_u8(struct fz_in *in)
{
	if (!in->left)
		return 0;
	in->left--;
	return *in->p++;
}

uint16_t fz_u16(struct fz_in *in)
{
	uint16_t hi = fz_u8(in);

	return hi << 8 | fz_u8(in);
}

const uint8_t *fz_bytes(struct fz_in *in, size_t n, size_t *got)
{
	const uint8_t *p = in->p;

	if (n > in->left)
		n = in->left;
	in->p += n;
	in->left -= n;
	*got = n;
	return p;
}

/* no descriptors: dgram ports keep what is queued (vs_dgram_flush) */
static const struct vs_io_ops fz_io = {
	.name		= "fuzz",
};

void fz_switch_init(struct vs_switch *sw, uint8_t flags)
{
	static const unsigned int max_frame[] = { 60, 1514, 9216, 65535 };
	unsigned int i;

	memset(sw, 0, sizeof(*sw));
	/* small limits, so that the fuzzer reaches every "full" branch */
	sw->cfg = (struct vs_config){
		.sock_gid	= -1,
		.max_frame	= max_frame[flags & 3],
		.age		= flags & 0x04 ? 0 : 300,
		.fdb_max	= 16,
		.fdb_port_max	= 4,
		.queue_len	= 4,
		.max_ports	= 8,
		.unread_limit	= 3000,
		.hub		= flags & 0x08,
		.flood_unknown	= !(flags & 0x10),
		.mac_lock	= flags & 0x20,
		.isolate	= flags & 0x40,
	};
	if (flags & 0x80) {
		sw->cfg.allow_uid[sw->cfg.n_allow_uid++] = 1000;
		sw->cfg.allow_gid[sw->cfg.n_allow_gid++] = 100;
	}
	sw->io = &fz_io;
	sw->epfd = -1;
	sw->sigfd = -1;
	for (i = 0; i < VS_LISTEN_NR; i++)
		sw->listen_fd[i] = -1;
	sw->spare_fd = -1;
	/* no socket diagnostics: a full buffer holds back every candidate */
	sw->diag.fd = -1;
	for (i = 0; i < VS_CTL_MAX_CONN; i++)
		sw->ctl[i].fd = -1;
	sw->ports = calloc(sw->cfg.max_ports, sizeof(*sw->ports));
	if (!sw->ports || vs_fdb_init(&sw->fdb, sw->cfg.fdb_max) < 0)
		abort();
	/* a send buffer with no socket to ask: fuzz_forward may fill it */
	sw->sndbuf[0].size = sw->sndbuf[1].size = 2;
	fz_clock_ms = 1000;
	sw->now_ms = fz_clock_ms;
}

void fz_switch_fini(struct vs_switch *sw)
{
	vs_port_free_all(sw);
	vs_fdb_fini(&sw->fdb);
	free(sw->ports);
}

void fz_advance(struct vs_switch *sw, unsigned int ms)
{
	fz_clock_ms += ms;
	sw->now_ms = fz_clock_ms;
}

struct vs_port *fz_port(struct vs_switch *sw, const struct vs_port_ops *ops)
{
	return vs_port_new(sw, ops, -1, "fuzz", NULL);
}

void fz_drain(struct vs_switch *sw)
{
	unsigned int i;

	for (i = 0; i < sw->nports; i++) {
		struct vs_port *p = sw->ports[i];

		while (p && !p->dead && p->txq.count)
			vs_port_sent(p);
	}
}

uint64_t fz_forwarded(const struct vs_port *p)
{
	return p->st.rx_frames + p->st.rx_runt + p->st.rx_oversize +
	       p->st.rx_bad_src + p->st.rx_mac_lock + p->st.rx_bad_vnet;
}

void fz_check(struct vs_switch *sw)
{
	unsigned int i, used = 0, per_port[64] = { 0 };
	uint64_t out = 0;

	FZ_ASSERT(sw->nports <= sw->cfg.max_ports && sw->cfg.max_ports <= 64);
	for (i = 0; i < sw->fdb.max; i++) {
		const struct vs_fdb_entry *e = &sw->fdb.ent[i];

		if (!e->used)
			continue;
		used++;
		FZ_ASSERT(e->port && e->port->slot < sw->nports);
		FZ_ASSERT(sw->ports[e->port->slot] == e->port);
		FZ_ASSERT(!e->port->dead);
		FZ_ASSERT(!(e->mac[0] & 1));
		FZ_ASSERT(e->vlan < 4096);
		per_port[e->port->slot]++;
	}
	FZ_ASSERT(used == sw->fdb.count && used <= sw->fdb.max);
	for (i = 0; i < sw->nports; i++) {
		const struct vs_port *p = sw->ports[i];
		unsigned int j;

		if (!p)
			continue;
		/* dead ports were retired with their counts */
		if (!p->dead)
			out += vs_port_tx_done(p);
		FZ_ASSERT(p->slot == i);
		FZ_ASSERT(p->fdb_count == per_port[i]);
		FZ_ASSERT(p->uplink || p->fdb_count <= sw->cfg.fdb_port_max);
		FZ_ASSERT(p->txq.count <= p->txq.cap);
		FZ_ASSERT(!p->dead || !p->txq.count);
		for (j = 0; j < p->txq.count; j++) {
			const struct vs_buf *b = vs_queue_peek(p, j);

			FZ_ASSERT(b->refcnt >= 1);
			/* a queue socket's entry has one to go to */
			FZ_ASSERT(vs_queue_to(p, j) <= p->mq.n);
			/*
			 * a MODE is the last entry sent plain; QUEUES and
			 * JOIN acks (mq.c) follow it
			 */
			if (b->ctl) {
				FZ_ASSERT(b->len == VECNET_MSG_LEN);
				FZ_ASSERT(b->data[5] != VECNET_MSG_MODE ||
					  j + 1 == p->nego.tx_plain);
				continue;
			}
			FZ_ASSERT(b->len >= ETH_HLEN_MIN &&
				  b->len <= (p->nego.tx_vnet ?
					     VS_VNET_FRAME_MAX :
					     sw->cfg.max_frame));
			/* what goes without a header is a finished frame */
			FZ_ASSERT(vs_nego_tx_hdr(p, j, b) ||
				  !vs_buf_needs_plain(b));
		}
	}
	/* every frame meant for a port is sent, dropped and counted, or queued */
	FZ_ASSERT(sw->st.tx_wanted == sw->st.tx_retired + out);
}
