// SPDX-License-Identifier: GPL-2.0
/*
 * port.c - ports and their framing: frame buffers and bounded per-port
 * queues, port creation and removal, dgram peers found by address, stream
 * (4-byte big-endian length + frame), seqpacket and tap input and output.
 * The batched dgram data path itself lives in the I/O backends.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <linux/if_tun.h>
#include <linux/sockios.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "vecswitch.h"

#define STREAM_READ_CHUNK	65536
#define TAP_BUF_LEN		65536
#define TAP_READS_PER_EVENT	VS_BATCH
#define ACCEPTS_PER_EVENT	16
#define RETRY_MAX_MS		8
#define PROBE_SAFETY_MS		100

/* ---- frame buffers and queues ---------------------------------------- */

/*
 * Frame memory of the whole switch, against --max-memory: each port's
 * queue is bounded, but 256 queues of 1024 super-frames would be 16 GiB.
 */
static size_t buf_bytes, buf_limit = SIZE_MAX;
static uint64_t buf_refused;

void vs_buf_set_limit(size_t bytes)
{
	buf_limit = bytes;
}

void vs_buf_account(struct vs_sw_stats *st)
{
	st->mem_bytes = buf_bytes;
	st->mem_refused = buf_refused;
}

struct vs_buf *vs_buf_alloc(unsigned int len)
{
	struct vs_buf *b;

	if (len > buf_limit - buf_bytes) {
		buf_refused++;
		return NULL;
	}
	b = malloc(sizeof(*b) + len);
	if (!b)
		return NULL;
	buf_bytes += len;
	memset(b, 0, sizeof(*b));
	b->refcnt = 1;
	b->len = len;
	b->hdr[0] = len >> 24;
	b->hdr[1] = len >> 16;
	b->hdr[2] = len >> 8;
	b->hdr[3] = len;
	return b;
}

/* A frame, and for one from a --vnet port its header and what it says */
struct vs_buf *vs_buf_new(const void *data, unsigned int len,
			  const uint8_t *vnet, const struct vs_gso *gso)
{
	struct vs_buf *b = vs_buf_alloc(len);

	if (!b)
		return NULL;
	if (vnet) {
		memcpy(b->vnet, vnet, sizeof(b->vnet));
		b->gso = *gso;
	}
	memcpy(b->data, data, len);
	return b;
}

void vs_buf_drop_segs(struct vs_buf *b)
{
	struct vs_buf *s, *next;

	for (s = b->seg; s; s = next) {
		next = s->next;
		vs_buf_put(s);
	}
	b->seg = NULL;
	b->nseg = 0;
}

void vs_buf_put(struct vs_buf *b)
{
	if (--b->refcnt)
		return;
	vs_buf_drop_segs(b);
	buf_bytes -= b->len;
	free(b);
}

bool vs_queue_push(struct vs_port *p, struct vs_buf *b)
{
	struct vs_queue *q = &p->txq;

	if (q->count >= q->cap) {
		p->st.tx_queue_full++;
		return false;
	}
	q->slot[(q->head + q->count) % q->cap] = b;
	q->count++;
	b->refcnt++;
	return true;
}

struct vs_buf *vs_queue_peek(const struct vs_port *p, unsigned int i)
{
	const struct vs_queue *q = &p->txq;

	return q->slot[(q->head + i) % q->cap];
}

void vs_queue_pop(struct vs_port *p)
{
	struct vs_queue *q = &p->txq;

	vs_buf_put(q->slot[q->head]);
	q->slot[q->head] = NULL;
	if (p->tx_plain)
		p->tx_plain--;
	q->head = (q->head + 1) % q->cap;
	q->count--;
}

/* The head frame went out: count it and drop it from the queue. */
void vs_port_sent(struct vs_port *p)
{
	unsigned int len = vs_queue_peek(p, 0)->len;

	p->st.tx_frames++;
	p->st.tx_bytes += len;
	p->unanswered += len;
	vs_queue_pop(p);
}

static void queue_drain(struct vs_port *p)
{
	while (p->txq.count)
		vs_queue_pop(p);
	p->tx_off = 0;
}

/* ---- port life cycle --------------------------------------------------- */

static const char *const port_type_name[] = {
	[VS_PORT_DGRAM]		= "dgram",
	[VS_PORT_STREAM]	= "stream",
	[VS_PORT_SEQPACKET]	= "seqpacket",
	[VS_PORT_TAP]		= "tap",
};

struct vs_port *vs_port_new(struct vs_switch *sw, enum vs_port_type type,
			    int fd, const char *name)
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
	if (!p->txq.slot)
		goto err_queue;
	if (type == VS_PORT_STREAM || type == VS_PORT_TAP) {
		p->rxcap = type == VS_PORT_TAP ? TAP_BUF_LEN :
			   4 + sw->cfg.max_frame + STREAM_READ_CHUNK;
		p->rxbuf = malloc(p->rxcap);
		if (!p->rxbuf)
			goto err_rxbuf;
	}
	p->id = ++sw->next_id;
	p->slot = slot;
	p->bcast_tokens = sw->cfg.bcast_limit;
	p->bcast_ms = sw->now_ms;
	p->type = type;
	p->fd = fd;
	p->probe_fd = -1;
	p->pin.fd = -1;
	p->uplink = type == VS_PORT_TAP;
	snprintf(p->name, sizeof(p->name), "%s", name);

	if (fd >= 0 && vs_epoll_add(sw, fd, vs_ev(VS_EV_PORT, slot),
				    EPOLLIN | EPOLLRDHUP) < 0)
		goto err_epoll;

	sw->ports[slot] = p;
	if (slot + 1 > sw->nports)
		sw->nports = slot + 1;
	sw->st.ports_added++;
	vs_log(sw, 1, "port %u (%s %s) added", p->id, port_type_name[type],
	       p->name);
	return p;

err_epoll:
	free(p->rxbuf);
err_rxbuf:
	free(p->txq.slot);
err_queue:
	free(p);
err_port:
	sw->st.no_port++;
	return NULL;
}

/*
 * Per-user shares: a non-root user holds at most --max-user-ports ports,
 * and their ports own at most --fdb-user-max forwarding entries, so one
 * user binding many names cannot take the switch from the others.  Root
 * is not limited.
 */
bool vs_user_ports_full(struct vs_switch *sw, uint32_t uid)
{
	unsigned int i, n = 0;

	if (!uid)
		return false;
	for (i = 0; i < sw->nports; i++) {
		const struct vs_port *p = sw->ports[i];

		if (p && !p->dead && p->has_owner && p->owner_uid == uid)
			n++;
	}
	return n >= sw->cfg.user_ports;
}

unsigned int vs_user_fdb_count(const struct vs_switch *sw, uint32_t uid)
{
	unsigned int i, n = 0;

	for (i = 0; i < sw->nports; i++) {
		const struct vs_port *p = sw->ports[i];

		if (p && !p->dead && p->has_owner && p->owner_uid == uid)
			n += p->fdb_count;
	}
	return n;
}

/* Datagram ports that sent nothing for --port-age seconds go */
void vs_port_age(struct vs_switch *sw)
{
	uint64_t limit = (uint64_t)sw->cfg.port_age * 1000;
	unsigned int i;

	if (!limit)
		return;
	for (i = 0; i < sw->nports; i++) {
		struct vs_port *p = sw->ports[i];

		if (p && !p->dead && p->type == VS_PORT_DGRAM &&
		    sw->now_ms - p->seen_ms > limit) {
			sw->st.ports_aged++;
			vs_port_remove(sw, p, "idle for --port-age");
		}
	}
}

/* A dgram port that sends with headers shows as vnet */
const char *vs_port_type_name(const struct vs_port *p)
{
	return p->tx_vnet ? "vnet" : port_type_name[p->type];
}

/*
 * Take a port out of service at once; its memory goes at the end of the
 * loop turn (vs_port_reap) so that callers up the stack may still look at it.
 */
void vs_port_remove(struct vs_switch *sw, struct vs_port *p, const char *why)
{
	if (p->dead)
		return;
	vs_log(sw, 1, "port %u (%s %s) removed: %s", p->id,
	       port_type_name[p->type], p->name, why);
	p->dead = true;
	sw->ndead++;
	sw->st.ports_removed++;
	/* its share of the frame accounting outlives it */
	sw->st.tx_retired += vs_port_tx_done(p);
	vs_chan_forget(sw, p, NULL);
	vs_fdb_flush_port(sw, p);
	queue_drain(p);
	if (p->fd >= 0) {
		close(p->fd);
		p->fd = -1;
	}
	if (p->probe_fd >= 0) {
		close(p->probe_fd);
		p->probe_fd = -2;
	}
	vs_peer_unpin(&p->pin);
	if (p == sw->tap)
		sw->tap = NULL;
}

static void port_free(struct vs_port *p)
{
	queue_drain(p);
	if (p->fd >= 0)
		close(p->fd);
	if (p->probe_fd >= 0)
		close(p->probe_fd);
	vs_peer_unpin(&p->pin);
	free(p->txq.slot);
	free(p->rxbuf);
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
			vs_chan_forget(sw, sw->ports[i], NULL);
			vs_fdb_flush_port(sw, sw->ports[i]);
			port_free(sw->ports[i]);
			sw->ports[i] = NULL;
		}
	}
	sw->nports = 0;
}

/* ---- dgram peers ----------------------------------------------------------- */

static uint32_t addr_hash(const struct sockaddr_un *a, socklen_t len)
{
	const uint8_t *s = (const uint8_t *)a;
	uint32_t h = 2166136261u;
	socklen_t i;

	for (i = 0; i < len; i++)
		h = (h ^ s[i]) * 16777619u;
	return h;
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

/*
 * An abstract name (a leading NUL) shows as @name, all its bytes; a path
 * up to its NUL, with a leading @ escaped so that it cannot pass for one.
 */
static void addr_name(char *out, size_t outlen, const struct sockaddr_un *a,
		      socklen_t len)
{
	size_t n = len - offsetof(struct sockaddr_un, sun_path);
	const uint8_t *s = (const uint8_t *)a->sun_path;

	if (n && !s[0]) {
		out[0] = '@';
		vs_name_escape(out + 1, outlen - 1, s + 1, n - 1);
		return;
	}
	n = strnlen((const char *)s, n);
	if (n && s[0] == '@') {
		snprintf(out, outlen, "\\x40");
		vs_name_escape(out + 4, outlen - 4, s + 1, n - 1);
		return;
	}
	vs_name_escape(out, outlen, s, n);
}

/* Drop a datagram whose sender cannot be a port; say why, once a second. */
static void refuse_addr(struct vs_switch *sw, const struct sockaddr_un *addr,
			socklen_t len, const char *why)
{
	char name[VS_NAME_LEN];

	sw->st.addr_refused++;
	if (sw->now_ms && sw->now_ms < sw->refused_log_ms + 1000)
		return;
	sw->refused_log_ms = sw->now_ms;
	addr_name(name, sizeof(name), addr, len);
	vs_log(sw, 0, "dgram sender %s refused: %s", name, why);
}

/*
 * Find the port of a dgram sender, creating it on its first datagram; the
 * socket it sent to (--dgram or --vnet) is the one that answers it. Its
 * name is resolved once, then (peer.c); a port's later datagrams must
 * come from the same uid.
 */
struct vs_port *vs_dgram_peer(struct vs_switch *sw,
			      const struct sockaddr_un *addr, socklen_t len,
			      const struct ucred *cred, bool vnet)
{
	char name[VS_NAME_LEN];
	struct vs_port *p;
	struct vs_pin pin;
	const char *why;
	unsigned int i;
	uint32_t h;

	/* an unbound sender has no address to answer to */
	if (len <= offsetof(struct sockaddr_un, sun_path) ||
	    len > sizeof(*addr)) {
		sw->st.no_port++;
		return NULL;
	}
	h = addr_hash(addr, len);
	for (i = 0; i < sw->nports; i++) {
		p = sw->ports[i];
		if (!p || p->type != VS_PORT_DGRAM || p->dead ||
		    p->addr_hash != h || p->addrlen != len || p->vnet != vnet ||
		    memcmp(&p->addr, addr, len))
			continue;
		if (!cred || cred->uid != p->pin.uid) {
			refuse_addr(sw, addr, len, "the port belongs to another user");
			return NULL;
		}
		p->seen_ms = sw->now_ms;
		return p;
	}
	if (cred && vs_user_ports_full(sw, cred->uid)) {
		sw->st.user_ports_full++;
		refuse_addr(sw, addr, len, "its user holds --max-user-ports ports");
		return NULL;
	}
	why = vs_peer_pin(sw, addr, len, cred, &pin);
	if (why) {
		refuse_addr(sw, addr, len, why);
		return NULL;
	}
	addr_name(name, sizeof(name), addr, len);
	p = vs_port_new(sw, VS_PORT_DGRAM, -1, name);
	if (!p) {
		vs_peer_unpin(&pin);
		return NULL;
	}
	memcpy(&p->addr, addr, len);
	p->addrlen = len;
	p->addr_hash = h;
	p->vnet = vnet;
	p->pin = pin;
	p->has_owner = true;
	p->owner_uid = pin.uid;
	p->seen_ms = sw->now_ms;
	return p;
}

/* The dgram peers bound at @addr: their receive queue was empty in dump @gen */
void vs_dgram_seen_idle(struct vs_switch *sw, const struct sockaddr_un *addr,
			socklen_t len, uint64_t gen)
{
	uint32_t h = addr_hash(addr, len);
	struct vs_port *p;
	unsigned int i;

	for (i = 0; i < sw->nports; i++) {
		p = sw->ports[i];
		if (p && p->type == VS_PORT_DGRAM && p->addr_hash == h &&
		    p->addrlen == len && !memcmp(&p->addr, addr, len))
			p->idle_gen = gen;
	}
}

/* The socket a dgram peer sent to, which is the one that answers it. */
int vs_dgram_fd(const struct vs_switch *sw, const struct vs_port *p)
{
	return p->vnet ? sw->vnet_fd : sw->dgram_fd;
}

/*
 * Should @p, a dgram peer, get no more frames for now? Yes when it was sent
 * unread_limit bytes (or a quarter of the send buffer, if that is less)
 * since it last sent a frame, more than half of the send buffer it shares
 * with the other dgram peers is taken by datagrams nobody has read yet
 * (asked of the kernel at most once a millisecond), and the unix socket
 * diagnostics did not just see it reading (unixdiag.c).
 */
bool vs_dgram_stalled(struct vs_switch *sw, const struct vs_port *p)
{
	typeof(sw->sndbuf[0]) *b = &sw->sndbuf[p->vnet];
	uint64_t limit = sw->cfg.unread_limit;
	int used;

	if (b->size <= 0)
		return false;
	if (limit > (uint64_t)b->size / 4)
		limit = b->size / 4;
	if (p->unanswered <= limit)
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

/* ---- sender credentials ------------------------------------------------ */

_Static_assert(sizeof(((struct vs_switch *)0)->rxctl[0]) >=
	       CMSG_SPACE(sizeof(struct ucred)), "rxctl too small for ucred");

/* --allow-uid or --allow-gid given: every sender must show credentials. */
static bool vs_cred_check(const struct vs_config *cfg)
{
	return cfg->n_allow_uid || cfg->n_allow_gid;
}

static bool id_listed(const uint32_t *ids, unsigned int n, uint32_t id)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

/*
 * A sender may attach when its uid is in --allow-uid or its gid (the
 * primary one: the kernel passes no other) is in --allow-gid. No
 * credentials at all, with checks on, is a refusal.
 */
bool vs_cred_allowed(const struct vs_config *cfg, const struct ucred *cred)
{
	if (!vs_cred_check(cfg))
		return true;
	if (!cred)
		return false;
	return id_listed(cfg->allow_uid, cfg->n_allow_uid, cred->uid) ||
	       id_listed(cfg->allow_gid, cfg->n_allow_gid, cred->gid);
}

/* The SCM_CREDENTIALS a received message carries, or NULL. */
const struct ucred *vs_cmsg_cred(const struct msghdr *mh)
{
	struct cmsghdr *c;

	if (mh->msg_flags & MSG_CTRUNC)
		return NULL;
	for (c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR((struct msghdr *)mh, c))
		if (c->cmsg_level == SOL_SOCKET &&
		    c->cmsg_type == SCM_CREDENTIALS &&
		    c->cmsg_len >= CMSG_LEN(sizeof(struct ucred)))
			return (const struct ucred *)CMSG_DATA(c);
	return NULL;
}

/* A datagram that cannot be a frame: said at most once a second */
static void runt_log(struct vs_switch *sw, const struct vs_port *p,
		     size_t len)
{
	if (sw->now_ms && sw->now_ms < sw->runt_log_ms + 1000)
		return;
	sw->runt_log_ms = sw->now_ms;
	vs_log(sw, 0, "port %u (%s): a datagram of %zu bytes is no Ethernet frame (rx_runt)",
	       p->id, p->name, len);
}

void vs_dgram_input(struct vs_switch *sw, bool vnet,
		    const struct sockaddr_un *addr, socklen_t alen,
		    const struct ucred *cred, const uint8_t *data, size_t len,
		    bool truncated)
{
	struct vs_port *p;

	/* before the lookup: a refused sender never becomes a port */
	if (!vs_cred_allowed(&sw->cfg, cred)) {
		sw->st.cred_refused++;
		return;
	}
	p = vs_dgram_peer(sw, addr, alen, cred, vnet);
	if (!p)
		return;
	if (truncated) {
		p->st.rx_oversize++;
		return;
	}
	/* shorter than any frame, with or without a header */
	if (vs_nego_is_msg(data, len)) {
		vs_nego_input(sw, p, data, len);
		return;
	}
	if (p->rx_vnet) {
		vs_forward_vnet(sw, p, data, len);
		return;
	}
	if (len < ETH_HLEN_MIN)
		runt_log(sw, p, len);
	vs_forward(sw, p, data, len);
}

/* A dgram peer whose address answers like this is gone for good. */
bool vs_dgram_dead_errno(int err)
{
	return err == ECONNREFUSED || err == ENOENT || err == ENOTDIR;
}

/*
 * Our socket is not connected to the peer, so poll() cannot say when the
 * peer's receive queue has room again. A second socket, connect()ed to the
 * peer and never used to send, can: it polls writable exactly when the
 * peer's queue is not full. It cannot be had when the peer is connected to
 * someone else (EPERM); then, and when the probe says "room" but the send
 * still fails (our own send buffer is full), a short timer does instead.
 */
static bool probe_arm(struct vs_switch *sw, struct vs_port *p)
{
	struct epoll_event ev = {
		.events = EPOLLOUT,
		.data.u64 = vs_ev(VS_EV_PROBE, p->slot),
	};
	int fd;

	if (p->probe_fd == -1) {
		fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return false;
		if (connect(fd, (struct sockaddr *)&p->pin.dst,
			    p->pin.dstlen) < 0) {
			/* EPERM: the peer is connected elsewhere, for good */
			if (errno == EPERM)
				p->probe_fd = -2;
			close(fd);
			return false;
		}
		if (vs_epoll_add(sw, fd, ev.data.u64, 0) < 0) {
			close(fd);
			return false;
		}
		p->probe_fd = fd;
	}
	if (p->probe_fd < 0)
		return false;
	if (!p->probe_armed &&
	    epoll_ctl(sw->epfd, EPOLL_CTL_MOD, p->probe_fd, &ev) < 0)
		return false;
	p->probe_armed = true;
	return true;
}

/* The peer's queue is full (or our send buffer is): try again shortly. */
void vs_dgram_blocked(struct vs_switch *sw, struct vs_port *p)
{
	p->st.tx_retries++;
	if (p->probe_woke) {
		/*
		 * Room, said the probe, yet no room: our own send buffer is
		 * full, or the peer re-bound its address and the probe still
		 * watches the old socket. Wait on the timer; connect anew next.
		 */
		p->probe_woke = false;
		if (p->probe_fd >= 0) {
			close(p->probe_fd);
			p->probe_fd = -1;
			p->probe_armed = false;
		}
	} else if (probe_arm(sw, p)) {
		/* the probe wakes us; the timer only guards against a lost wake */
		p->retry_at_ms = sw->now_ms + PROBE_SAFETY_MS;
		return;
	}
	p->backoff_ms = p->backoff_ms ? p->backoff_ms * 2 : 1;
	if (p->backoff_ms > RETRY_MAX_MS)
		p->backoff_ms = RETRY_MAX_MS;
	p->retry_at_ms = sw->now_ms + p->backoff_ms;
}

void vs_dgram_unblocked(struct vs_port *p)
{
	p->backoff_ms = 0;
	p->retry_at_ms = 0;
	p->probe_woke = false;
}

void vs_dgram_probe_event(struct vs_switch *sw, struct vs_port *p)
{
	struct epoll_event ev = { .data.u64 = vs_ev(VS_EV_PROBE, p->slot) };

	if (p->probe_fd < 0)
		return;
	epoll_ctl(sw->epfd, EPOLL_CTL_MOD, p->probe_fd, &ev);
	p->probe_armed = false;
	p->probe_woke = true;
	p->retry_at_ms = 0;
}

/* The peer's socket changed: the probe must watch the new one. */
void vs_dgram_probe_reset(struct vs_switch *sw, struct vs_port *p)
{
	if (p->probe_fd >= 0) {
		epoll_ctl(sw->epfd, EPOLL_CTL_DEL, p->probe_fd, NULL);
		close(p->probe_fd);
	}
	p->probe_fd = -1;
	p->probe_armed = false;
	p->probe_woke = false;
}

/* Milliseconds until a backed-off dgram peer should be tried, -1: none. */
int vs_next_retry_ms(struct vs_switch *sw)
{
	int best = -1;
	unsigned int i;

	for (i = 0; i < sw->nports; i++) {
		struct vs_port *p = sw->ports[i];
		int t;

		if (!p || p->dead || p->type != VS_PORT_DGRAM || !p->txq.count)
			continue;
		t = p->retry_at_ms > sw->now_ms ?
		    (int)(p->retry_at_ms - sw->now_ms) : 0;
		if (best < 0 || t < best)
			best = t;
	}
	return best;
}

/* ---- connected ports: output ---------------------------------------------- */

static void want_out(struct vs_switch *sw, struct vs_port *p, bool on)
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

static bool conn_gone_errno(int err)
{
	return err == EPIPE || err == ECONNRESET || err == ENOTCONN;
}

static void stream_flush(struct vs_switch *sw, struct vs_port *p)
{
	struct iovec iov[2 * VS_BATCH];
	struct msghdr mh = { .msg_iov = iov };
	unsigned int i, n;
	ssize_t r;

	while (p->txq.count) {
		size_t skip = p->tx_off;

		n = 0;
		for (i = 0; i < p->txq.count && i < VS_BATCH; i++) {
			struct vs_buf *b = vs_queue_peek(p, i);

			if (skip < 4) {
				iov[n].iov_base = b->hdr + skip;
				iov[n++].iov_len = 4 - skip;
				iov[n].iov_base = b->data;
				iov[n++].iov_len = b->len;
			} else {
				iov[n].iov_base = b->data + (skip - 4);
				iov[n++].iov_len = b->len - (skip - 4);
			}
			skip = 0;
		}
		mh.msg_iovlen = n;
		r = sendmsg(p->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (r < 0) {
			if (errno == EAGAIN || errno == EINTR) {
				want_out(sw, p, true);
				return;
			}
			/* what is queued goes with the port (tx_retired) */
			vs_port_remove(sw, p, strerror(errno));
			return;
		}
		/* consume r bytes: whole frames leave the queue */
		while (r > 0) {
			struct vs_buf *b = vs_queue_peek(p, 0);
			size_t left = 4 + b->len - p->tx_off;

			if ((size_t)r < left) {
				p->tx_off += r;
				break;
			}
			r -= left;
			p->tx_off = 0;
			vs_port_sent(p);
		}
	}
	want_out(sw, p, false);
}

static void seqpacket_flush(struct vs_switch *sw, struct vs_port *p)
{
	struct mmsghdr mm[VS_BATCH];
	struct iovec iov[VS_BATCH];
	unsigned int i, n;
	int r;

	while (p->txq.count) {
		n = p->txq.count < VS_BATCH ? p->txq.count : VS_BATCH;
		memset(mm, 0, n * sizeof(mm[0]));
		for (i = 0; i < n; i++) {
			struct vs_buf *b = vs_queue_peek(p, i);

			iov[i].iov_base = b->data;
			iov[i].iov_len = b->len;
			mm[i].msg_hdr.msg_iov = &iov[i];
			mm[i].msg_hdr.msg_iovlen = 1;
		}
		r = sendmmsg(p->fd, mm, n, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (r < 0) {
			if (errno == EAGAIN || errno == EINTR) {
				want_out(sw, p, true);
				return;
			}
			if (conn_gone_errno(errno)) {
				vs_port_remove(sw, p, strerror(errno));
				return;
			}
			/* this one frame cannot go (EMSGSIZE, ENOBUFS) */
			p->st.tx_errors++;
			vs_queue_pop(p);
			continue;
		}
		for (i = 0; i < (unsigned int)r; i++)
			vs_port_sent(p);
	}
	want_out(sw, p, false);
}

static void tap_flush(struct vs_switch *sw, struct vs_port *p)
{
	while (p->txq.count) {
		struct vs_buf *b = vs_queue_peek(p, 0);
		ssize_t r = write(p->fd, b->data, b->len);

		if (r < 0 && (errno == EAGAIN || errno == EINTR)) {
			want_out(sw, p, true);
			return;
		}
		if (r < 0) {
			/* EIO while the interface is down: drop, keep the port */
			p->st.tx_errors++;
			vs_queue_pop(p);
			continue;
		}
		vs_port_sent(p);
	}
	want_out(sw, p, false);
}

void vs_port_flush(struct vs_switch *sw, struct vs_port *p)
{
	switch (p->type) {
	case VS_PORT_STREAM:
		stream_flush(sw, p);
		break;
	case VS_PORT_SEQPACKET:
		seqpacket_flush(sw, p);
		break;
	case VS_PORT_TAP:
		tap_flush(sw, p);
		break;
	case VS_PORT_DGRAM:
		break;
	}
}

/* End of a loop turn: push what forwarding queued. */
void vs_flush_all(struct vs_switch *sw)
{
	bool dgram = false;
	unsigned int i;

	for (i = 0; i < sw->nports; i++) {
		struct vs_port *p = sw->ports[i];

		if (!p || p->dead || !p->txq.count)
			continue;
		if (p->type == VS_PORT_DGRAM)
			dgram = true;
		else if (!p->want_out)
			vs_port_flush(sw, p);
	}
	if (dgram)
		sw->io->flush_dgram(sw);
}

/*
 * Room for one datagram of the --dgram socket: a super-frame with its
 * header from a port that negotiated headers, unless the switch is a hub
 * (it does not negotiate). A frame over --max-frame is refused later.
 */
size_t vs_dgram_slot(const struct vs_switch *sw)
{
	size_t vnet = VS_VNET_HDR_LEN + VS_VNET_FRAME_MAX;

	if (sw->cfg.hub || sw->cfg.max_frame > vnet)
		return sw->cfg.max_frame;
	return vnet;
}

/* Point a recvmmsg batch at the shared rx scratch memory. */
void vs_rx_batch_init(struct vs_switch *sw, struct mmsghdr *mm,
		      struct iovec *iov, bool vnet, bool names)
{
	size_t slot = vnet ? VS_VNET_HDR_LEN + VS_VNET_FRAME_MAX :
		      vs_dgram_slot(sw);
	uint8_t *mem = vnet ? sw->vnet_rxmem : sw->rxmem;
	int i;

	memset(mm, 0, VS_BATCH * sizeof(*mm));
	for (i = 0; i < VS_BATCH; i++) {
		iov[i].iov_base = mem + i * slot;
		iov[i].iov_len = slot;
		mm[i].msg_hdr.msg_iov = &iov[i];
		mm[i].msg_hdr.msg_iovlen = 1;
		if (names) {
			mm[i].msg_hdr.msg_name = &sw->rxaddr[i];
			mm[i].msg_hdr.msg_namelen = sizeof(sw->rxaddr[i]);
			mm[i].msg_hdr.msg_control = sw->rxctl[i];
			mm[i].msg_hdr.msg_controllen = sizeof(sw->rxctl[i]);
		}
	}
}

/* ---- connected ports: input ------------------------------------------------ */

static void stream_input(struct vs_switch *sw, struct vs_port *p)
{
	ssize_t r;

	r = recv(p->fd, p->rxbuf + p->rxlen, p->rxcap - p->rxlen,
		 MSG_DONTWAIT);
	if (r == 0) {
		vs_port_remove(sw, p, "peer closed");
		return;
	}
	if (r < 0) {
		if (errno != EAGAIN && errno != EINTR)
			vs_port_remove(sw, p, strerror(errno));
		return;
	}
	p->rxlen += r;
	vs_stream_rx(sw, p);
}

/*
 * Forward every whole frame in p->rxbuf and keep the partial tail. A length
 * over --max-frame loses the framing for good: the port goes.
 */
void vs_stream_rx(struct vs_switch *sw, struct vs_port *p)
{
	size_t off = 0;

	while (p->rxlen - off >= 4) {
		const uint8_t *h = p->rxbuf + off;
		uint32_t flen = (uint32_t)h[0] << 24 | h[1] << 16 |
				h[2] << 8 | h[3];

		if (flen > sw->cfg.max_frame) {
			/* no way to find the next frame: give up on the peer */
			p->st.rx_bad_len++;
			sw->st.stream_bad_len++;
			vs_port_remove(sw, p, "bad frame length");
			return;
		}
		if (p->rxlen - off - 4 < flen)
			break;
		vs_forward(sw, p, h + 4, flen);
		off += 4 + flen;
	}
	if (off) {
		memmove(p->rxbuf, p->rxbuf + off, p->rxlen - off);
		p->rxlen -= off;
	}
}

static void seqpacket_input(struct vs_switch *sw, struct vs_port *p,
			    uint32_t events)
{
	struct mmsghdr mm[VS_BATCH];
	struct iovec iov[VS_BATCH];
	int i, r;

	vs_rx_batch_init(sw, mm, iov, false, false);
	r = recvmmsg(p->fd, mm, VS_BATCH, MSG_DONTWAIT, NULL);
	if (r < 0) {
		if (errno != EAGAIN && errno != EINTR)
			vs_port_remove(sw, p, strerror(errno));
		return;
	}
	for (i = 0; i < r; i++) {
		/* a zero-length read after hangup is the end, not a runt */
		if (!mm[i].msg_len && (events & (EPOLLHUP | EPOLLRDHUP))) {
			vs_port_remove(sw, p, "peer closed");
			return;
		}
		if (mm[i].msg_hdr.msg_flags & MSG_TRUNC) {
			p->st.rx_oversize++;
			continue;
		}
		vs_forward(sw, p, iov[i].iov_base, mm[i].msg_len);
		if (p->dead)
			return;
	}
	if (!r && (events & (EPOLLHUP | EPOLLRDHUP)))
		vs_port_remove(sw, p, "peer closed");
}

static void tap_input(struct vs_switch *sw, struct vs_port *p)
{
	int i;

	for (i = 0; i < TAP_READS_PER_EVENT; i++) {
		ssize_t r = read(p->fd, p->rxbuf, p->rxcap);

		if (r < 0) {
			if (errno != EAGAIN && errno != EINTR)
				p->st.rx_errors++;
			return;
		}
		vs_forward(sw, p, p->rxbuf, r);
	}
}

void vs_port_event(struct vs_switch *sw, struct vs_port *p, uint32_t events)
{
	/* a tap whose interface was deleted reports errors for ever */
	if (p->type == VS_PORT_TAP && events & (EPOLLERR | EPOLLHUP)) {
		vs_port_remove(sw, p, "tap device gone");
		return;
	}
	if (events & EPOLLIN || (p->type != VS_PORT_TAP &&
				 events & (EPOLLHUP | EPOLLRDHUP | EPOLLERR))) {
		switch (p->type) {
		case VS_PORT_STREAM:
			stream_input(sw, p);
			break;
		case VS_PORT_SEQPACKET:
			seqpacket_input(sw, p, events);
			break;
		case VS_PORT_TAP:
			tap_input(sw, p);
			break;
		case VS_PORT_DGRAM:
			break;
		}
	}
	if (!p->dead && events & EPOLLOUT)
		vs_port_flush(sw, p);
}

/* ---- new ports ---------------------------------------------------------------- */

void vs_accept(struct vs_switch *sw, int lfd, enum vs_port_type type)
{
	int i;

	for (i = 0; i < ACCEPTS_PER_EVENT; i++) {
		char name[VS_NAME_LEN];
		struct vs_port *p;
		struct ucred cred;
		socklen_t clen = sizeof(cred);
		int fd;

		fd = vs_accept_fd(sw, lfd);
		if (fd < 0) {
			if (errno != EAGAIN && errno != EINTR &&
			    errno != ECONNABORTED)
				vs_log(sw, 0, "accept: %s", strerror(errno));
			return;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) == 0) {
			snprintf(name, sizeof(name), "pid=%d uid=%u",
				 (int)cred.pid, (unsigned int)cred.uid);
		} else {
			snprintf(name, sizeof(name), "fd=%d", fd);
			clen = 0;
		}
		if (!vs_cred_allowed(&sw->cfg, clen ? &cred : NULL)) {
			sw->st.cred_refused++;
			vs_log(sw, 1, "%s connection refused: %s not allowed",
			       port_type_name[type], name);
			close(fd);
			continue;
		}
		if (clen && vs_user_ports_full(sw, cred.uid)) {
			sw->st.user_ports_full++;
			vs_log(sw, 1, "%s connection refused: %s holds --max-user-ports ports",
			       port_type_name[type], name);
			close(fd);
			continue;
		}
		p = vs_port_new(sw, type, fd, name);
		if (!p) {
			vs_log(sw, 0, "%s connection refused: no free port",
			       port_type_name[type]);
			close(fd);
		} else if (clen) {
			p->has_owner = true;
			p->owner_uid = cred.uid;
		}
	}
}

int vs_tap_open(struct vs_switch *sw, const char *ifname)
{
	char name[VS_NAME_LEN];
	struct ifreq ifr;
	struct vs_port *p;
	int fd;

	fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		vs_log(sw, 0, "--tap: /dev/net/tun: %s", strerror(errno));
		return -1;
	}
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
		vs_log(sw, 0, "--tap %s: TUNSETIFF: %s", ifname,
		       strerror(errno));
		close(fd);
		return -1;
	}
	vs_name_escape(name, sizeof(name), (const uint8_t *)ifr.ifr_name,
		       strnlen(ifr.ifr_name, IFNAMSIZ));
	p = vs_port_new(sw, VS_PORT_TAP, fd, name);
	if (!p) {
		close(fd);
		return -1;
	}
	sw->tap = p;
	vs_tap_mtu(p);
	return 0;
}

/*
 * The uplink's MTU, read again once a second: a frame larger than it
 * would be dropped by the bridge or tunnel behind the tap without a
 * trace, so the switch drops and counts it (tx_oversize) instead.  The
 * interface is asked for by its name of the moment (TUNGETIFF on the
 * tap's own descriptor), so a renamed uplink is still followed.
 */
void vs_tap_mtu(struct vs_port *p)
{
	struct ifreq ifr;
	int fd;

	memset(&ifr, 0, sizeof(ifr));
	if (ioctl(p->fd, TUNGETIFF, &ifr) < 0)
		return;
	/* any socket answers SIOCGIFMTU; AF_UNIX is one a sandbox allows */
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	if (ioctl(fd, SIOCGIFMTU, &ifr) == 0 && ifr.ifr_mtu > 0 &&
	    (unsigned int)ifr.ifr_mtu != p->mtu) {
		p->mtu = ifr.ifr_mtu;
		vs_log(NULL, 0,
		       "uplink %.*s: MTU %u; guests on its segment need an MTU of %u or less",
		       IFNAMSIZ, ifr.ifr_name, p->mtu, p->mtu);
	}
	close(fd);
}
