// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_forward.c - frame intake and the forwarding decision: datagrams
 * from arbitrary sender addresses (which become ports) and frames on
 * stream, seqpacket and tap ports, mixed with time passing, aging sweeps,
 * queues draining and ports going away, run through the real dgram intake,
 * vs_forward() and the forwarding table.
 *
 * Input: one byte of switch options, then operations:
 *   0x00-0x7f  a frame: sender (dgram address or port) from the low bits,
 *              its credentials (for dgram) from bits 3-5, then a 16-bit
 *              length and that many frame bytes (for sender 4, a --vnet
 *              port, the virtio-net header first)
 *   0x80-0x9f  time passes (next byte, in units of 4 s), then a sweep
 *   0xa0-0xbf  every queue drains (frames "sent")
 *   0xc0-0xdf  a port is removed; dead ports are reaped
 *   0xe0-0xff  a raw sender address (length and bytes from the input)
 * After every operation the switch's invariants are checked; beyond them,
 * a frame is counted once on its ingress port and unicast to a learned MAC
 * reaches at most one port, never the ingress.
 */
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>

#include "fuzz_common.h"

#define NADDR	6
#define VNET_ALEN	(offsetof(struct sockaddr_un, sun_path) + 3)

static void dgram_addr(struct sockaddr_un *sa, socklen_t *len, unsigned int i)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (i == NADDR - 1) {
		/* an abstract name */
		memcpy(sa->sun_path, "\0fz", 3);
		*len = offsetof(struct sockaddr_un, sun_path) + 3;
		return;
	}
	/* abstract too: a path is resolved on the file system (peer.c) */
	sa->sun_path[1] = 'g';
	sa->sun_path[2] = '0' + i;
	*len = offsetof(struct sockaddr_un, sun_path) + 3;
}

static bool vlan_tagged(const uint8_t *frame, size_t len)
{
	return len >= 18 && frame[12] == 0x81 && frame[13] == 0;
}

/* Sender credentials as the kernel would pass them, or none. */
static const struct ucred *cred_of(uint8_t op)
{
	static const struct ucred cred[] = {
		{ .pid = 1, .uid = 0, .gid = 0 },
		{ .pid = 2, .uid = 1000, .gid = 1000 },
		{ .pid = 3, .uid = 2000, .gid = 100 },
	};

	return op & 0x08 ? NULL : &cred[(op >> 4) % 3];
}

static void frame_in(struct vs_switch *sw, struct vs_port *in,
		     const struct sockaddr_un *sa, socklen_t alen,
		     const struct ucred *cred, const uint8_t *frame,
		     size_t len, bool trunc)
{
	unsigned int i, before[64];
	struct vs_port *dst = NULL;
	unsigned int nports = sw->nports;
	uint64_t refused = sw->st.cred_refused;
	uint64_t fwd;

	if (!in) {
		/* the sender at g4 is on the --vnet socket */
		vs_dgram_input(sw, alen == VNET_ALEN && sa->sun_path[2] == '4' ?
			       VS_SOCK_VNET : VS_SOCK_DGRAM,
			       sa, alen, cred, frame, len, trunc);
		/* a refused sender is counted and never becomes a port */
		if (!vs_cred_allowed(&sw->cfg, cred)) {
			FZ_ASSERT(sw->st.cred_refused == refused + 1);
			FZ_ASSERT(sw->nports == nports);
		}
		return;
	}
	for (i = 0; i < sw->nports; i++)
		before[i] = sw->ports[i] ? sw->ports[i]->txq.count : 0;
	if (len >= ETH_HLEN_MIN && !(frame[0] & 1) && !sw->cfg.hub &&
	    !vlan_tagged(frame, len))
		dst = vs_fdb_lookup(sw, frame, 0);
	fwd = fz_forwarded(in);
	vs_forward(sw, in, frame, len);

	/* each frame is counted once, one way or another */
	FZ_ASSERT(fz_forwarded(in) == fwd + 1);
	for (i = 0; i < sw->nports; i++) {
		struct vs_port *p = sw->ports[i];

		if (!p)
			continue;
		/* never back out of the port it came in on */
		if (p == in)
			FZ_ASSERT(p->txq.count == before[i]);
		/* known unicast goes to its port and to no other */
		if (dst && p != dst)
			FZ_ASSERT(p->txq.count == before[i]);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };
	struct vs_port *fixed[3];
	struct vs_switch sw;
	unsigned int ops = 0;

	fz_switch_init(&sw, fz_u8(&in));
	fixed[0] = fz_port(&sw, &vs_stream_ops);
	fixed[1] = fz_port(&sw, &vs_seqpacket_ops);
	fixed[2] = fz_port(&sw, &vs_tap_ops);
	/* an uplink of a small MTU, or of none known */
	if (fixed[2])
		fixed[2]->mtu = fz_u8(&in) * 8;
	/* the dgram peers' send buffer more than half unread, or not */
	sw.sndbuf[0].used = sw.sndbuf[1].used = fz_u8(&in) & 1 ? 2 : 0;

	while (in.left && ops++ < 4096) {
		uint8_t op = fz_u8(&in);
		struct sockaddr_un sa;
		const uint8_t *frame;
		socklen_t alen;
		size_t len;
		unsigned int k;

		if (op < 0x80) {
			len = fz_u16(&in);
			frame = fz_bytes(&in, len, &len);
			k = op & 7;
			if (k < NADDR) {
				dgram_addr(&sa, &alen, k);
				frame_in(&sw, NULL, &sa, alen, cred_of(op),
					 frame, len, op & 0x40);
			} else {
				struct vs_port *p = fixed[(op >> 3) % 3];

				/* ports that went away stay gone */
				if (p && !p->dead)
					frame_in(&sw, p, NULL, 0, NULL, frame,
						 len, false);
			}
		} else if (op < 0xa0) {
			fz_advance(&sw, fz_u8(&in) * 4000u);
			vs_fdb_sweep(&sw);
		} else if (op < 0xc0) {
			fz_drain(&sw);
		} else if (op < 0xe0) {
			k = fz_u8(&in) % sw.cfg.max_ports;
			if (sw.ports[k]) {
				for (unsigned int j = 0; j < 3; j++)
					if (fixed[j] == sw.ports[k])
						fixed[j] = NULL;
				vs_port_remove(&sw, sw.ports[k], "fuzz");
			}
			vs_port_reap(&sw);
		} else {
			/* any address the kernel could hand us, and some not */
			alen = fz_u8(&in);
			memset(&sa, 0, sizeof(sa));
			frame = fz_bytes(&in, alen < sizeof(sa) ? alen : sizeof(sa),
					 &len);
			memcpy(&sa, frame, len);
			len = fz_u16(&in) & 0x7ff;
			frame = fz_bytes(&in, len, &len);
			frame_in(&sw, NULL, &sa, alen, cred_of(op), frame,
				 len, false);
		}
		fz_check(&sw);
	}
	fz_switch_fini(&sw);
	return 0;
}
