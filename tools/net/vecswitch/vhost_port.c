// SPDX-License-Identifier: GPL-2.0
/*
 * vhost_port.c - a vhost-user frontend as a switch port: its connection's
 * messages (vhost.c), frames from its transmit queue into the forwarding
 * path, and the port's queue into its receive buffers (virtq.c).
 *
 * A frame from the guest is checked on its headers first, then copied
 * once: a unicast for another vhost-user guest with nothing queued
 * straight into that guest's buffers, anything else into a buffer of the
 * switch's, header and all, which every port it goes to is sent from.
 * A guest that negotiated checksum offload and TSO gets super-frames
 * whole with their header; one that did not gets them cut and summed.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "vecswitch.h"
#include "vhost.h"

/*
 * frames taken from one guest's transmit queue in a loop turn, before
 * the turn's end sends them on and other guests get a turn
 */
#define VH_TX_BUDGET	VS_BATCH

_Static_assert(VHU_FDS_ROOM == VS_FDS_MAX,
	       "a vhost-user receive makes room for all a message can carry");

struct vh_ctx {
	struct vs_switch *sw;
	struct vs_port *p;
	struct vs_vh_mem mem;
};

static void ctx_drop_fd(void *arg, int fd)
{
	struct vh_ctx *c = arg;

	vs_rights_close(c->sw, fd);
}

static int ctx_kick(void *arg, unsigned int q, int fd, bool add)
{
	struct vh_ctx *c = arg;

	if (!add)
		return epoll_ctl(c->sw->epfd, EPOLL_CTL_DEL, fd, NULL);
	return vs_epoll_add(c->sw, fd,
			    vs_ev(q == VS_VH_TXQ ? VS_EV_KICK_TX : VS_EV_KICK_RX,
				  c->p->slot), EPOLLIN);
}

#define VH_STAT(n)	{ "vhost_" #n, offsetof(struct vs_vh_stats, n) }
static const struct vs_stat_desc vh_stat_desc[] = {
	VH_STAT(msgs),
	VH_STAT(kicks),
	VH_STAT(calls),
	VH_STAT(rx_no_room),
	VH_STAT(rx_bufs),
};

/* The counters of port @p, laid out as vh_stat_desc says */
static const void *vh_stats(const struct vs_port *p)
{
	return p->vhost.vh ? &p->vhost.vh->st : NULL;
}

/*
 * What a frontend got wrong is logged whatever -v says, the few lines an
 * administrator needs to find a broken guest; a flood of broken
 * connections (VH_LOG_PER_S a second at most) does not flood the log.
 */
#define VH_LOG_PER_S	100

static void log_broken(struct vs_switch *sw, const struct vs_port *p)
{
	static uint64_t second, lines;
	const struct vs_vhost *v = p->vhost.vh;
	char req[32] = "";

	if (sw->now_ms / 1000 != second) {
		second = sw->now_ms / 1000;
		lines = 0;
	}
	if (++lines > VH_LOG_PER_S)
		return;
	if (v->broken_req)
		snprintf(req, sizeof(req), "request %u: ", v->broken_req);
	vs_log(sw, 0, "port %u (vhost-user %s): %s%s", p->id, p->name, req,
	       v->broken);
}

#define VH_ENV(env, ctx, sw_, p_)					\
	struct vh_ctx ctx = { .sw = (sw_), .p = (p_), .mem = {		\
		.max = (sw_)->cfg.vhost_mem_max << 20,			\
		.all_max = (sw_)->cfg.vhost_mem_total << 20,		\
		.all = &(sw_)->st.vhost_mapped,				\
		.refused = &(sw_)->st.vhost_mem_refused,		\
	} };								\
	const struct vs_vh_env env = {					\
		.drop_fd = ctx_drop_fd, .kick = ctx_kick,		\
		.arg = &ctx, .mem = &ctx.mem,				\
	}

/* The port goes if its frontend broke the protocol or lost its memory */
static bool gone(struct vs_switch *sw, struct vs_port *p)
{
	if (p->dead)
		return true;
	vs_vh_sigbus_seen(p->vhost.vh);
	if (!p->vhost.vh->broken)
		return false;
	/* a frontend that closed its connection did nothing wrong */
	if (strcmp(p->vhost.vh->broken, "closed")) {
		sw->st.vhost_broken++;
		log_broken(sw, p);
	}
	vs_port_remove(sw, p, p->vhost.vh->broken);
	return true;
}

/*
 * All the frontend handed over goes, and its connection: by the closer,
 * since messages with descriptors may still wait in it, unread, and the
 * kernel releases them when the connection closes
 */
static void detach(struct vs_switch *sw, struct vs_port *p)
{
	VH_ENV(env, ctx, sw, p);

	if (p->vhost.busy) {
		p->vhost.busy = false;
		sw->vh_busy--;
	}
	if (p->vhost.vh) {
		vs_vh_fini(p->vhost.vh, &env);
		free(p->vhost.vh);
		p->vhost.vh = NULL;
	}
	if (p->fd >= 0) {
		vs_close_later(sw, p->fd);
		p->fd = -1;
	}
}

static int attach(struct vs_switch *sw, struct vs_port *p)
{
	static bool sigbus_set;

	(void)sw;
	p->vhost.vh = malloc(sizeof(*p->vhost.vh));
	if (!p->vhost.vh)
		return -1;
	if (!sigbus_set) {
		vs_vh_sigbus_init();
		sigbus_set = true;
	}
	vs_vh_init(p->vhost.vh, p->fd);
	return 0;
}

/*
 * A frontend sets its features as it starts the
 * device, and gives its memory table next; one that does not has given
 * up on its side, as QEMU does when its guest memory is not shared
 * ("Failed initializing vhost-user memory map", then virtio without
 * us).  Say so once, and mark the port in its name, which ctl ports,
 * top and capture show: it would otherwise look like any other.
 */
static void check_memory(struct vs_switch *sw, struct vs_port *p)
{
	const struct vs_vhost *v = p->vhost.vh;
	size_t n;

	if (!v || !v->features_set || v->nregions) {
		p->vhost.no_mem_ms = 0;
		return;
	}
	if (!p->vhost.no_mem_ms)
		p->vhost.no_mem_ms = sw->now_ms;
	if (p->vhost.no_mem_said || sw->now_ms - p->vhost.no_mem_ms < 1000)
		return;
	p->vhost.no_mem_said = true;
	vs_log(sw, 0,
	       "port %u (vhost-user %s): the frontend started its device without giving it memory: is its guest memory shared? (QEMU: -object memory-backend-memfd,id=mem,size=SIZE,share=on -numa node,memdev=mem, SIZE as -m)",
	       p->id, p->name);
	n = strlen(p->name);
	snprintf(p->name + n, sizeof(p->name) - n, " [no memory]");
}

/* Once a second: each vhost-user port's frontend, for one that gave up */
void vs_vhost_sweep(struct vs_switch *sw)
{
	unsigned int i;

	for (i = 0; i < sw->nports; i++) {
		struct vs_port *p = sw->ports[i];

		if (p && !p->dead && p->ops == &vs_vhost_ops)
			check_memory(sw, p);
	}
}

/* ---- from the guest ------------------------------------------------------ */

/* Frames with offloads the guest was not offered are not taken */
static bool hdr_negotiated(const struct vs_vhost *v, const uint8_t *hdr)
{
	uint8_t type = hdr[1] & ~VIRTIO_NET_HDR_GSO_ECN;

	if ((hdr[0] & VIRTIO_NET_HDR_F_NEEDS_CSUM) && !vs_vh_has(v, VN_F_CSUM))
		return false;
	if ((hdr[1] & VIRTIO_NET_HDR_GSO_ECN) && !vs_vh_has(v, VN_F_HOST_ECN))
		return false;
	switch (type) {
	case VIRTIO_NET_HDR_GSO_NONE:
		return true;
	case VIRTIO_NET_HDR_GSO_TCPV4:
		return vs_vh_has(v, VN_F_HOST_TSO4);
	case VIRTIO_NET_HDR_GSO_TCPV6:
		return vs_vh_has(v, VN_F_HOST_TSO6);
	default:
		return false;
	}
}

/* Copy @n bytes from @f's buffers, from @*at on, to @to */
static void gather(const struct vs_vh_frame *f, size_t *at, uint8_t *to,
		   size_t n)
{
	size_t skip = *at;
	unsigned int i;

	*at += n;
	for (i = 0; i < f->niov && n; i++) {
		size_t l = f->iov[i].iov_len;

		if (skip >= l) {
			skip -= l;
			continue;
		}
		l -= skip;
		if (l > n)
			l = n;
		memcpy(to, (uint8_t *)f->iov[i].iov_base + skip, l);
		to += l;
		n -= l;
		skip = 0;
	}
}

/* @f's buffers from byte @off on, as iovecs at @to; how many */
static unsigned int slice(const struct vs_vh_frame *f, size_t off,
			  struct iovec *to)
{
	unsigned int i, n = 0;

	for (i = 0; i < f->niov; i++) {
		size_t l = f->iov[i].iov_len;

		if (off >= l) {
			off -= l;
			continue;
		}
		to[n].iov_base = (uint8_t *)f->iov[i].iov_base + off;
		to[n].iov_len = l - off;
		off = 0;
		n++;
	}
	return n;
}

/* The guests given frames in this turn, told once at its end */
struct vh_told {
	struct vs_port *p[8];
	unsigned int n;
};

static void tell(struct vs_switch *sw, struct vh_told *t)
{
	unsigned int i;

	for (i = 0; i < t->n; i++) {
		if (t->p[i]->dead)
			continue;
		vs_vq_notify(t->p[i]->vhost.vh, VS_VH_RXQ);
		gone(sw, t->p[i]);
	}
	t->n = 0;
}

static void told(struct vs_switch *sw, struct vh_told *t, struct vs_port *p)
{
	unsigned int i;

	for (i = 0; i < t->n; i++)
		if (t->p[i] == p)
			return;
	if (t->n == ARRAY_SIZE(t->p))
		tell(sw, t);
	t->p[t->n++] = p;
}

/*
 * A unicast from one vhost-user guest to another whose queue is empty:
 * straight from the sender's buffers into the receiver's, one copy.  The
 * header and the first @hl bytes come from the switch's own copies
 * (@hdr, @head), the ones the decision was taken on: the sender can write
 * its buffers at any time, and must not change what was checked (its
 * source address, say) after the check.  False if the receiver has no
 * room for it now (or is broken): the frame then takes the queue.
 */
static bool direct(struct vs_switch *sw, struct vs_port *in,
		   struct vs_port *out, const struct vs_vh_frame *f,
		   const uint8_t *hdr, const uint8_t *head, unsigned int hl,
		   unsigned int len, struct vh_told *t)
{
	struct iovec iov[VS_VH_IOV_MAX + 2];
	struct vs_vhost *dv = out->vhost.vh;
	uint8_t oh[12] = { 0 };
	unsigned int n;

	memcpy(oh, hdr, VS_VNET_HDR_LEN);
	if (!vs_vh_has(dv, VN_F_GUEST_ECN))
		oh[1] &= ~VIRTIO_NET_HDR_GSO_ECN;
	iov[0].iov_base = oh;
	iov[0].iov_len = dv->hdr_len;
	iov[1].iov_base = (void *)head;
	iov[1].iov_len = hl;
	n = 2 + slice(f, in->vhost.vh->hdr_len + hl, iov + 2);
	if (vs_vq_deliver(dv, iov, n, dv->hdr_len + len))
		return false;
	sw->st.vhost_direct++;
	sw->st.tx_wanted++;
	vs_port_count_tx(out, len, 0);
	told(sw, t, out);
	return true;
}

/*
 * A super-frame for a port whose type can send one at once (a dgram guest
 * that agreed to headers): from the sender's buffers, behind the switch's
 * copies of its header and first @hl bytes, where nothing is queued for
 * that port (its send_now); the kernel's copy into the guest's socket is
 * the only one.  False if it must take the queue instead.
 */
static bool direct_send(struct vs_switch *sw, struct vs_port *in,
			struct vs_port *out, const struct vs_vh_frame *f,
			const uint8_t *hdr, const uint8_t *head,
			unsigned int hl, unsigned int len)
{
	struct iovec iov[VS_VH_IOV_MAX + 2];
	uint8_t oh[VS_VNET_HDR_LEN];
	unsigned int n;

	memcpy(oh, hdr, sizeof(oh));
	iov[0].iov_base = oh;
	iov[0].iov_len = sizeof(oh);
	iov[1].iov_base = (void *)head;
	iov[1].iov_len = hl;
	n = 2 + slice(f, in->vhost.vh->hdr_len + hl, iov + 2);
	if (!out->ops->send_now(sw, out, iov, n, len))
		return false;
	sw->st.vhost_direct++;
	return true;
}

/*
 * One frame from the guest: its header and first bytes are enough to
 * check it and decide where it goes; only then is the rest copied, once,
 * straight into another vhost-user guest or into a buffer of the switch,
 * behind the checked copy of the first bytes (never read again from the
 * guest, which could have changed them since).
 */
static void tx_frame(struct vs_switch *sw, struct vs_port *p,
		     const struct vs_vh_frame *f, struct vh_told *t)
{
	uint8_t hdr[12], head[VS_FWD_HEAD_LEN];
	struct vs_vhost *v = p->vhost.vh;
	struct vs_gso gso;
	struct vs_fwd fw;
	struct vs_buf *b;
	size_t at = 0;
	unsigned int len, hl;

	if (f->len < v->hdr_len + ETH_HLEN_MIN) {
		p->st.rx_runt++;
		return;
	}
	len = f->len - v->hdr_len;
	if (len > VS_VNET_FRAME_MAX) {
		p->st.rx_oversize++;
		return;
	}
	hl = len < sizeof(head) ? len : sizeof(head);
	gather(f, &at, hdr, v->hdr_len);
	gather(f, &at, head, hl);
	if (v->sigbus)
		return;
	if (!hdr_negotiated(v, hdr) ||
	    vs_vnet_parse(hdr, head, len, sw->cfg.max_frame, &gso) < 0) {
		p->st.rx_bad_vnet++;
		return;
	}
	if (!vs_forward_decide(sw, p, 0, head, len, &gso, &fw))
		return;
	/* a capture copies frames from the switch's buffers */
	if (fw.out && fw.out->ops == &vs_vhost_ops && !sw->ncap &&
	    vs_forward_direct_ok(fw.out, &gso) &&
	    direct(sw, p, fw.out, f, hdr, head, hl, len, t))
		return;
	if (fw.out && fw.out->ops->send_now && !sw->ncap &&
	    gso.type != VIRTIO_NET_HDR_GSO_NONE &&
	    direct_send(sw, p, fw.out, f, hdr, head, hl, len))
		return;
	b = vs_buf_alloc(len);
	if (!b) {
		p->st.rx_errors++;
		return;
	}
	memcpy(b->data, head, hl);
	gather(f, &at, b->data + hl, len - hl);
	memcpy(b->vnet, hdr, VS_VNET_HDR_LEN);
	b->gso = gso;
	vs_forward_deliver(sw, p, &fw, b);
}

static void set_busy(struct vs_switch *sw, struct vs_port *p, bool on)
{
	if (p->vhost.busy == on)
		return;
	p->vhost.busy = on;
	if (on)
		sw->vh_busy++;
	else
		sw->vh_busy--;
}

/*
 * Take what the guest queued for sending, VH_TX_BUDGET frames at most;
 * the rest waits for the next loop turn (vs_vhost_poll_busy), not for a
 * kick, since the guest may not kick again.
 */
static void tx_poll(struct vs_switch *sw, struct vs_port *p)
{
	struct vs_vhost *v = p->vhost.vh;
	struct vh_told t = { .n = 0 };
	struct vs_vh_frame f;
	unsigned int n = 0;

	set_busy(sw, p, false);
	for (;;) {
		while (n < VH_TX_BUDGET) {
			unsigned int budget = VS_VH_DESC_BUDGET;

			if (vs_vq_pop(v, VS_VH_TXQ, &f, false, &budget) <= 0)
				break;
			/* a disabled queue's frames are taken and dropped */
			if (v->vq[VS_VH_TXQ].enabled)
				tx_frame(sw, p, &f, &t);
			vs_vq_push(v, VS_VH_TXQ, f.head, 0);
			n++;
		}
		tell(sw, &t);
		vs_vq_notify(v, VS_VH_TXQ);
		if (gone(sw, p))
			return;
		if (n >= VH_TX_BUDGET) {
			set_busy(sw, p, true);
			return;
		}
		if (!vs_vq_rearm(v, VS_VH_TXQ, false))
			return;
	}
}

/* ---- to the guest -------------------------------------------------------- */

/*
 * Deliver the port's queue into the guest's receive buffers.  Where the
 * guest has posted none, the rest waits (want_out) for its kick.
 */
static void vh_flush(struct vs_switch *sw, struct vs_port *p)
{
	struct vs_vhost *v = p->vhost.vh;

	p->want_out = false;
	while (p->txq.count) {
		struct vs_buf *b = vs_queue_peek(p, 0);
		uint8_t hdr[12] = { 0 };
		struct iovec iov[2] = {
			{ .iov_base = hdr, .iov_len = v->hdr_len },
			{ .iov_base = b->data, .iov_len = b->len },
		};
		int r;

		memcpy(hdr, b->vnet, VS_VNET_HDR_LEN);
		if (!vs_vh_has(v, VN_F_GUEST_ECN))
			hdr[1] &= ~VIRTIO_NET_HDR_GSO_ECN;
		r = vs_vq_deliver(v, iov, 2, v->hdr_len + b->len);
		if (r == -EAGAIN) {
			if (vs_vq_rearm(v, VS_VH_RXQ, true))
				continue;
			p->want_out = true;
			break;
		}
		if (r == -EIO)
			break;
		if (!r) {
			vs_port_sent(p);
			continue;
		}
		/* too large for its buffers, or a guest whose queue is down */
		if (r == -EMSGSIZE)
			p->st.tx_oversize++;
		else
			p->st.tx_errors++;
		vs_queue_pop(p);
	}
	vs_vq_notify(v, VS_VH_RXQ);
	gone(sw, p);
}

/* ---- events -------------------------------------------------------------- */

/*
 * Whether the port takes frames with headers whole: checksum offload and
 * TSO for both IP versions, as negotiated.
 */
static void note_features(struct vs_port *p)
{
	const struct vs_vhost *v = p->vhost.vh;

	p->nego.rx_vnet = true;
	p->nego.tx_vnet = vs_vh_has(v, VN_F_GUEST_CSUM) &&
		     vs_vh_has(v, VN_F_GUEST_TSO4) &&
		     vs_vh_has(v, VN_F_GUEST_TSO6);
}

static void vh_input(struct vs_switch *sw, struct vs_port *p)
{
	VH_ENV(env, ctx, sw, p);

	vs_vh_input(p->vhost.vh, &env);
	if (gone(sw, p))
		return;
	note_features(p);
	/* a queue that just started may hold frames or room already */
	tx_poll(sw, p);
	if (!p->dead && p->txq.count)
		vh_flush(sw, p);
}

void vs_vhost_kick(struct vs_switch *sw, struct vs_port *p, unsigned int q)
{
	vs_vq_drain_kick(p->vhost.vh, q);
	if (gone(sw, p))
		return;
	if (q == VS_VH_TXQ)
		tx_poll(sw, p);
	else if (p->txq.count)
		vh_flush(sw, p);
}

/* The guests whose transmit queue held more than one turn's worth */
void vs_vhost_poll_busy(struct vs_switch *sw)
{
	unsigned int i;

	for (i = 0; i < sw->nports && sw->vh_busy; i++) {
		struct vs_port *p = sw->ports[i];

		if (p && !p->dead && p->vhost.busy)
			tx_poll(sw, p);
	}
}

static void vh_event(struct vs_switch *sw, struct vs_port *p, uint32_t events)
{
	if (events & (EPOLLIN | EPOLLHUP | EPOLLRDHUP | EPOLLERR))
		vh_input(sw, p);
}

/* A vhost-user guest is offered TCP segmentation offload, not UDP's */
static bool vh_takes_gso(const struct vs_port *p, const struct vs_gso *gso)
{
	(void)p;
	return gso->type != VIRTIO_NET_HDR_GSO_UDP_L4;
}

const struct vs_port_ops vs_vhost_ops = {
	.name		= "vhost-user",
	.takes_fds	= true,
	.attach		= attach,
	.event		= vh_event,
	.flush		= vh_flush,
	.detach		= detach,
	.takes_gso	= vh_takes_gso,
	.stats		= vh_stats,
	.stat_desc	= vh_stat_desc,
	.stat_count	= ARRAY_SIZE(vh_stat_desc),
};
