// SPDX-License-Identifier: GPL-2.0
/*
 * nego.c - virtio-net headers agreed per port on the --dgram socket.
 *
 * A guest that can carry virtio-net headers says so in a HELLO, a
 * datagram of 12 bytes: shorter than any Ethernet frame, so no frame is
 * ever taken for one, and a peer that does not know it drops it as a
 * runt.  Each direction then changes format at a MODE datagram: "every
 * datagram I send after this one is in this format".  A unix datagram
 * socket keeps one sender's datagrams in order, so each side knows
 * exactly which datagrams carry a header, with no window in which a
 * frame is read the wrong way.
 *
 *	guest                          switch
 *	HELLO(vnet)          ---->     rx plain, answers:
 *	rx with headers      <----     MODE(vnet), tx with headers from here
 *	MODE(vnet)           ---->     rx with headers from here
 *	tx with headers
 *
 * A HELLO also says that its sender starts over in plain frames (a guest
 * that restarted, or re-found the switch), so it resets the port.  A
 * peer that never negotiates (QEMU's -netdev dgram, a program writing raw
 * frames, an older switch) keeps plain frames both ways.  The --hub
 * switch does not negotiate; it counts the HELLO and stays plain.  The
 * --vnet socket is the same as --dgram in this: an alias, kept for the
 * command lines of before.  CHAN and UNCHAN, from the switch only, hand
 * out and withdraw shortcut channels (chan.c); QUEUES and JOIN add a
 * multiqueue guest's further sockets to its port (mq.c).
 */
#include <string.h>
#include <arpa/inet.h>

#include "vecswitch.h"

/*
 * Frames for a port are queued in the form it takes (super-frames whole
 * for a port with headers, cut for one without); those queued in the old
 * form cannot be sent in the new one and are dropped (tx_errors).
 */
static void drop_queued(struct vs_port *p)
{
	while (p->txq.count) {
		p->st.tx_errors++;
		vs_queue_pop(p);
	}
}

/*
 * Leave plain frames both ways: a new guest, or one that starts over.
 * Its queue sockets go too: they carry headers, the port no longer does.
 */
void vs_nego_reset(struct vs_port *p)
{
	if (p->nego.tx_vnet)
		drop_queued(p);
	vs_mq_forget(p);
	p->nego.tx_vnet = false;
	p->nego.tx_plain = 0;
	p->nego.rx_vnet = false;
}

/*
 * Queue MODE(vnet) behind what is queued already: those go plain, the
 * marker itself too, and everything after it with a header.
 */
static bool send_mode(struct vs_switch *sw, struct vs_port *p)
{
	struct vecnet_msg m;

	vs_msg_init(&m, VECNET_MSG_MODE);
	/*
	 * F_CHAN: only then does the guest let descriptors through, and
	 * with F_CHANQ on its further queue sockets too
	 */
	m.mode.flags = htons(VECNET_MSG_F_VNET |
			     (p->chan.ok ? VECNET_MSG_F_CHAN : 0) |
			     (p->chan.q_ok ? VECNET_MSG_F_CHANQ : 0));
	m.mode.max_frame = htonl(VS_VNET_FRAME_MAX);
	if (!vs_queue_msg(sw, p, &m, 0))
		return false;
	p->nego.tx_plain = p->txq.count;
	p->nego.tx_vnet = true;
	return true;
}

/* Is this datagram of a plain dgram port a negotiation message? */
bool vs_nego_is_msg(const uint8_t *data, size_t len)
{
	return len < ETH_HLEN_MIN && len >= VECNET_MSG_MAGIC_LEN &&
	       !memcmp(data, VECNET_MSG_MAGIC, VECNET_MSG_MAGIC_LEN);
}

/* A negotiation message from dgram port @p (vs_nego_is_msg said so). */
void vs_nego_input(struct vs_switch *sw, struct vs_port *p,
		   const uint8_t *data, size_t len)
{
	const struct vecnet_msg *m = (const void *)data;
	uint16_t flags;

	if (len != sizeof(*m) || m->version != VECNET_MSG_VERSION ||
	    (m->type != VECNET_MSG_HELLO && m->type != VECNET_MSG_MODE &&
	     m->type != VECNET_MSG_UNCHAN)) {
		p->st.rx_nego_bad++;
		return;
	}
	/* the guest gave up its channel to that address */
	if (m->type == VECNET_MSG_UNCHAN) {
		p->st.rx_unchan++;
		vs_chan_closed(sw, p, m->mac);
		return;
	}
	flags = ntohs(m->mode.flags);
	if (m->type == VECNET_MSG_HELLO) {
		p->st.rx_hello++;
		if (p->nego.rx_vnet || p->nego.tx_vnet)
			p->st.rx_hello_again++;
		/* a guest that starts over has closed its channels */
		vs_chan_restart(sw, p);
		vs_nego_reset(p);
		p->chan.ok = vs_chan_allowed(sw, p, flags);
		p->chan.q_ok = p->chan.ok && (flags & VECNET_MSG_F_CHANQ) &&
			       (flags & VECNET_MSG_F_MQ);
		if (sw->cfg.hub || !(flags & VECNET_MSG_F_VNET))
			return;
		if (send_mode(sw, p) && (flags & VECNET_MSG_F_MQ))
			vs_mq_offer(sw, p);
		return;
	}
	/* MODE: the format of its datagrams after this one */
	p->st.rx_mode++;
	if (sw->cfg.hub) {
		p->st.rx_nego_bad++;
		return;
	}
	p->nego.rx_vnet = flags & VECNET_MSG_F_VNET;
	/* a peer that switched first is answered in kind */
	if (p->nego.rx_vnet && !p->nego.tx_vnet)
		send_mode(sw, p);
}

/*
 * Entry @i of @p's queue goes with a virtio-net header in front: a frame
 * for a queue socket always does (mq.c), one for socket 0 as agreed.
 */
bool vs_nego_tx_hdr(const struct vs_port *p, unsigned int i,
		    const struct vs_buf *b)
{
	if (b->ctl)
		return false;
	return vs_queue_to(p, i) || (p->nego.tx_vnet && i >= p->nego.tx_plain);
}
