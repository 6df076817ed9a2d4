/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vecnet: vector network devices for User Mode Linux, guest kernel side.
 *
 * The files from the top down, each calling only files below it
 * (scripts/vecnet-deps.py prints the calls; test_style.sh fails on a
 * loop):
 *	vecnet_mconsole.c	vecN: devices added and removed through mconsole
 *	vecnet_dev.c		the devices: made from vecN: options, removed,
 *				and the host's exit
 *	vecnet_ethtool.c	ethtool
 *	vecnet_unixdgram.c, vecnet_bess_fd.c, vecnet_raw.c, vecnet_tap.c,
 *	vecnet_encap.c		the transports: the host descriptors and what
 *				leads a frame on the wire (the core calls them
 *				through struct vecnet_transport)
 *	vecnet_core.c		the core: up and down, queues, features,
 *				interrupts and the NAPI poll, the link check
 *	vecnet_rx.c		receive: a batch per host call, frames up
 *	vecnet_nego.c		virtio-net headers agreed with the peer, and
 *				the messages that join further queues
 *	vecnet_tx.c		transmit: queue choice, xmit, batches out,
 *				backpressure
 *	vecnet_peer.c		the peer's link: the queues that take frames
 *				(further queues joined and left), a peer
 *				gone and lost, the link check's backoff, why
 *				the peer does not answer, the longest frame
 *				it takes, announcements
 *	vecnet_chan.c		shortcut channels to other guests
 *	vecnet_ring.c		the rings: their slots filled and emptied
 *	vecnet_stats.c		the counters of ethtool -S and qstats
 *	vecnet_parse.c		vecN: options
 *	vecnet_user.c, vecnet_tap_user.c, vecnet_raw_user.c
 *				the host side, against libc (vecnet_user.h)
 * A frame out: the stack, vecnet_xmit, the queue's ring, one sendmmsg to
 * the queue's descriptor or a channel.  A frame in: an interrupt, the
 * core's NAPI poll, vecnet_rx, the stack.
 *
 * This header holds the device and its state, grouped by the file that
 * owns each group.  What a file offers the files above it is in a header
 * of its own, named after it (vecnet_peer.h for vecnet_peer.c); the
 * options are vecnet_parse.h's, the counters vecnet_stats.h's, what a
 * transport offers the core vecnet_transport.h's.
 */
#ifndef __UM_VECNET_H
#define __UM_VECNET_H

#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/hrtimer.h>
#include <linux/if_vlan.h>
#include <linux/list.h>
#include <linux/netdevice.h>
#include <linux/socket.h>
#include <linux/u64_stats_sync.h>
#include <linux/uio.h>
#include <linux/workqueue.h>
#include "vecnet_compat.h"
#include "vecnet_parse.h"
#include "vecnet_stats.h"

#define VECNET_DRV_NAME		"vecnet"

#define VECNET_DEPTH_DEFAULT	64
/* UIO_MAXIOV: the most recvmmsg and sendmmsg move in one call */
#define VECNET_DEPTH_MAX	1024
#define VECNET_HEADROOM_DEFAULT	2
#define VECNET_HEADROOM_MAX	4096
#define VECNET_MTU_MAX		(65535 - ETH_HLEN - VLAN_HLEN)
#define VECNET_TX_USECS_MAX	USEC_PER_SEC
#define VECNET_RX_USECS_MAX	(10 * USEC_PER_MSEC)
/* a one-way stream's frame waits this long at most (adaptive-rx) */
#define VECNET_RX_USECS_DEFAULT	500
/* One slot for a transport header, one for the linear part, the frags */
#define VECNET_TX_IOV		(2 + MAX_SKB_FRAGS)
#define VECNET_HDR_MAX		64
/*
 * The linear part of a receive buffer at most: a ring whose frames may be
 * longer (super-frames) takes the rest into pages of its own, one I/O
 * vector each, which go up the stack as the frame's fragments
 */
#define VECNET_RX_HEAD_MAX	2048
/*
 * Shortcut channels each queue of a device holds at most (vecnet_chan.c):
 * a switch's channel per queue is one of them on each queue it spans
 */
#define VECNET_CHAN_MAX		8
/* A transmit slot that goes to the main descriptor, not a channel */
#define VECNET_CHAN_NONE	0xff
/*
 * Control room per receive slot: as many descriptors as one message can
 * carry (SCM_MAX_FD), for a descriptor left without room would be closed
 * by the host kernel in our own context, where its close may block
 */
#define VECNET_CMSG_FDS		253
#define VECNET_CMSG_LEN		CMSG_SPACE(VECNET_CMSG_FDS * sizeof(int))
/* Receive/transmit queue pairs a device has at most (queues=, ethtool -L) */
#define VECNET_QUEUES_MAX	8
/* A sender the host cannot wake tries again after 50 us, backing off */
#define VECNET_RETRY_MIN_NS	(50 * NSEC_PER_USEC)
/* A lost peer is looked for after 50 ms, backing off; a send resets it */
#define VECNET_LINK_MIN_MS	50

/* ---- transports --------------------------------------------------------- */

/* The core builds and checks a virtio_net_hdr in the header slot */
#define VECNET_TF_VNET_HDR	BIT(0)
/* A character device (tap): one frame per read or write, no mmsg calls */
#define VECNET_TF_CHARDEV	BIT(3)
/* The host may hand over super-frames at any time: size receive for them */
#define VECNET_TF_RX_GSO	BIT(4)
/* Transmit writes to a character device on vn->host.tx_fd (hybrid) */
#define VECNET_TF_TX_CHARDEV	BIT(5)
/* Headers as agreed with the peer (vecnet_nego.c), not always or never */
#define VECNET_TF_NEGOTIATE	BIT(6)
/*
 * queues= above 1: open() gives every queue a descriptor of its own
 * (vn->q[i].fd for i > 0); without it the device has one queue
 */
#define VECNET_TF_MQ		BIT(7)

/*
 * Transmit offloads every device offers: a transport with virtio-net
 * headers hands them to the host, one without has the stack do them in
 * software frame by frame (ndo_features_check)
 */
#define VECNET_TX_FEATURES	(NETIF_F_HW_CSUM | NETIF_F_TSO | \
				 NETIF_F_TSO6 | NETIF_F_TSO_ECN)
/* ...and with headers, checksums the host checked on receive */
#define VECNET_VNET_FEATURES	(VECNET_TX_FEATURES | NETIF_F_RXCSUM)
/* Receive buffer for a host-coalesced super-frame (rx-gro-hw) */
#define VECNET_GSO_FRAME	(GSO_LEGACY_MAX_SIZE + ETH_HLEN + VLAN_HLEN)
/*
 * gso_max= (unixdgram): the longest super-frame, IP packet as in
 * gso_max_size, a device takes and, where the peer takes as long ones,
 * sends (BIG TCP): the default and the most
 */
#define VECNET_GSO_MAX_DEFAULT	GSO_LEGACY_MAX_SIZE
#define VECNET_GSO_MAX_MAX	(256 * 1024)

/* ---- device ------------------------------------------------------------- */

struct vecnet_rxq {
	struct sk_buff **skbs;	/* each slot's linear part: head_len bytes */
	struct page **pages;	/* npages per slot, for super-frames */
	struct mmsghdr *msgs;
	struct iovec *iov;	/* iov_n per slot: header, linear, pages */
	u8 *hdrs;
	u8 *names;
	u8 *cmsgs;		/* VECNET_CMSG_LEN per slot, with channels */
	unsigned int buf_len;	/* the longest datagram a slot must take */
	unsigned int head_len;
	unsigned int npages;
	unsigned int page_order;
	unsigned int iov_n;
};

struct vecnet_txq {
	spinlock_t lock;	/* ring indices against NAPI and xmit */
	unsigned int head;	/* oldest frame not yet sent */
	unsigned int count;
	struct sk_buff **skbs;
	struct mmsghdr *msgs;
	struct iovec *iov;	/* VECNET_TX_IOV per slot */
	u8 *hdrs;
	u8 *chan;		/* the channel per slot, with channels */
};

/*
 * One receive/transmit pair with its own host descriptor, interrupts
 * and NAPI.  Queue 0 is the device's main one: its descriptors are
 * vn->host.fd and vn->host.tx_fd, which the transports own, it carries the
 * negotiation, and its tx.lock guards it.  Each queue's tx.lock guards
 * the state of the shortcut channels that queue owns.  Another queue's
 * tx.lock nests inside queue 0's, never the other way round.
 */
struct vecnet_queue {
	struct vecnet_dev *vn;
	unsigned int index;
	/* queues after the first: their descriptor, else -1 */
	int fd;
	int rx_irq;
	int tx_irq;
	struct napi_struct napi;
	struct vecnet_rxq rx;
	struct vecnet_txq tx;
	/* The host said "later": the write IRQ or the retry timer resumes */
	bool tx_blocked;
	/* Timer and interrupt events, counted later from NAPI */
	unsigned long events;
	/*
	 * Descriptors NAPI is to read: VECNET_RX_OWN for the queue's own,
	 * VECNET_RX_CHAN(i) for shortcut channel i.  Set by the interrupt
	 * that says one has data (edge-triggered: it says so once), taken
	 * by the poll, set again for one it left unfinished.
	 */
	atomic_long_t rx_pending;
	/* NAPI: the descriptor read first in the next poll, in turn */
	unsigned int rx_first;
	/*
	 * NAPI: descriptors whose host signal is off (rx-usecs), which
	 * every poll reads and rx_timer polls for; when the last frame was
	 * read, and how many the device had sent then (adaptive-rx)
	 */
	unsigned long rx_held;
	u64 rx_last_ns;
	u64 rx_sent;		/* NAPI: the device's frames sent by then */
	struct hrtimer rx_timer;
	struct hrtimer tx_timer;
	struct hrtimer retry_timer;
	u64 retry_ns;
	u64 last_flush_ns;		/* tx.lock: adaptive-tx */
	struct vecnet_qstats rx_stats;	/* NAPI */
	struct vecnet_qstats tx_stats;	/* tx.lock */
	/*
	 * One copy of the extended counters per writing context, each with
	 * its own syncp: on an SMP guest xmit, NAPI and the link work run
	 * at once, and so do the queues.  ethtool -S shows their sums.
	 */
	struct vecnet_xstats xstats[VECNET_XS_NR];
};

/* A shortcut to one other guest, handed over by the switch */
struct vecnet_chan {
	struct vecnet_dev *vn;
	struct vecnet_queue *q;	/* the queue that owns it: NAPI, ring, lock */
	int fd;
	int irq;
	u8 state;		/* enum vecnet_chan_state, under q's tx.lock */
	u8 mac[ETH_ALEN];	/* the address behind the other end */
	u64 stall_ns;		/* tx.lock: first "later" of a run, 0: none */
	/*
	 * The longest frame the other guest takes: VECNET_GSO_FRAME, or
	 * more once its MODE on the channel says so (gso_max= on both)
	 */
	u32 tx_frame;
};

/*
 * A device's state is grouped by the feature that owns it, each group in
 * a struct of its own.  What the transmit and receive paths read for
 * every frame stays in two runs of a few cache lines: at the head of
 * struct vecnet_dev the transport, its flags, the host end (host) and
 * the headers agreed (nego); after the queues, which are large, their
 * number, the live mask (mq), the rings' shape and coalescing, and the
 * head of chan.  The work items and the channels' slots come last.
 */

/* The host end as the transport opened it, and what leads a frame there */
struct vecnet_host {
	/* queue 0's descriptor */
	int fd;
	/* Queue 0's transmit descriptor when it is not fd (hybrid), else -1 */
	int tx_fd;
	/* fd is a SOCK_SEQPACKET connection: an empty record is its end */
	bool conn;
	unsigned int tx_hdr_len;
	unsigned int rx_hdr_len;
	unsigned int name_len;
	/* Destination for unconnected transports (gre, l2tpv3) */
	void *tx_addr;
	unsigned int tx_addr_len;
};

/* virtio-net headers agreed with the peer (vecnet_nego.c) */
struct vecnet_nego {
	u8 want;			/* VECNET_VNET_* */
	bool rx_vnet;			/* NAPI: the peer's frames carry one */
	bool tx_vnet;			/* tx.lock: ours do */
	bool agreed;
	unsigned int tries;
	/* gso_max=: super-frames we take, and send where the peer does */
	u32 gso_max;
};

/* What the peer takes: vecnet_peer.c writes it, as the others tell it */
struct vecnet_peer_caps {
	/*
	 * The longest frame (from its Ethernet header) the peer takes as it
	 * said, at most ours; VECNET_GSO_FRAME until it says more, or once
	 * the host refused one of ours that long (vecnet_tx.c)
	 */
	u32 tx_frame;
};

/* Queues after the first: vecnet_peer.c writes them */
struct vecnet_mq {
	/*
	 * The queues transmit may use, a bit each, written under the
	 * queue's tx.lock.  A unixdgram queue after the first joins once
	 * the switch has said so (vecnet_nego.c); the others always.
	 */
	unsigned long live;
	/*
	 * The switch's QUEUES cookie, which the further queues' JOINs show;
	 * written under every queue's tx.lock, so any one of them reads it
	 */
	bool cookie_ok;
	u8 cookie[6];
};

/* Shortcut channels to other guests (vecnet_chan.c), a set per queue */
struct vecnet_chans {
	bool want;			/* offered in the HELLO */
	bool per_queue;			/* queue 0's tx.lock: the switch said F_CHANQ */
	unsigned int n[VECNET_QUEUES_MAX];	/* ACTIVE ones, the queue's tx.lock */
	int sndbuf;
	struct work_struct work;
	struct vecnet_chan ch[VECNET_QUEUES_MAX][VECNET_CHAN_MAX];
};

/*
 * ethtool -C (vecnet_ethtool.c writes them, the paths read them with
 * READ_ONCE): how long transmit holds a batch and receive a one-way
 * stream, and whether each adapts to the traffic
 */
struct vecnet_coalesce {
	u32 tx_usecs;
	bool tx_adaptive;
	u32 rx_usecs;
	bool rx_adaptive;
};

/*
 * The peer looked for while it is lost, and announcements to it: state
 * of vecnet_peer.c, whose calls the others make.  The work is the core's
 * link check.
 */
struct vecnet_link {
	struct delayed_work work;
	unsigned int backoff_ms;
	/*
	 * Why the peer's socket did not answer last (0: it did), and its
	 * path and the switch option that makes the right kind of socket
	 */
	int why;
	const char *path;
	const char *want;
	/* the transport said why this round's probe failed */
	bool said;
	/* no peer asked for headers since up or since it was lost */
	bool fresh;
	/* Gratuitous ARP and unsolicited NA once the peer can hear them */
	struct delayed_work announce_work;
	unsigned int announce_waits;	/* for the link watch, see there */
};

struct vecnet_dev {
	struct net_device *dev;
	struct list_head list;
	struct vecnet_config cfg;
	const struct vecnet_transport *transport;
	void *tpriv;
	/* VECNET_TF_*: the transport's, and what its options added */
	u32 flags;
	struct vecnet_host host;
	struct vecnet_nego nego;
	struct vecnet_peer_caps peer;

	/* the queues while up: vn->nq of them */
	struct vecnet_queue q[VECNET_QUEUES_MAX];
	unsigned int nq;
	struct vecnet_mq mq;
	/* rx-gro-hw taken out of hw_features while small rings exist */
	bool gro_hw_held;
	/* RTNL: vecnet_open() succeeded, vecnet_stop() has not run since */
	bool opened;
	/* threaded NAPI turned on for several queues (vecnet_spread_napi) */
	bool napi_spread;
	unsigned int batch;
	/*
	 * Free transmit slots xmit needs: 1, or with super-frames beyond
	 * 64 KiB as many as one cut into pieces takes (vecnet_xmit_big)
	 */
	unsigned int tx_reserve;

	/* the rings' slots while up; cfg's take effect at the next up */
	u32 rx_depth;
	u32 tx_depth;
	struct vecnet_coalesce coal;

	struct vecnet_chans chan;
	struct vecnet_link link;
};

#define VECNET_RX_OWN		BIT(0)
#define VECNET_RX_CHAN(i)	BIT(1 + (i))
#define VECNET_RX_ALL		(~0UL)

/* Descriptors @mask of queue @q have frames: NAPI reads them */
static inline void vecnet_rx_wake(struct vecnet_queue *q, unsigned long mask)
{
	atomic_long_or(mask, &q->rx_pending);
	/* napi_schedule() orders the bits before NAPI's xchg */
	napi_schedule(&q->napi);
}

/* Queue 0's descriptors are the transport's vn->host.fd and vn->host.tx_fd */
static inline int vecnet_q_fd(const struct vecnet_queue *q)
{
	return q->index ? q->fd : q->vn->host.fd;
}

static inline int vecnet_tx_fd(const struct vecnet_queue *q)
{
	if (!q->index && q->vn->host.tx_fd >= 0)
		return q->vn->host.tx_fd;
	return vecnet_q_fd(q);
}

/*
 * The longest frame, from its Ethernet header, a negotiating device takes
 * (gso_max=): what its HELLO and MODE say, what its receive buffers hold
 */
static inline u32 vecnet_frame_max(const struct vecnet_dev *vn)
{
	return (vn->nego.gso_max ?: GSO_LEGACY_MAX_SIZE) + ETH_HLEN + VLAN_HLEN;
}

#endif
