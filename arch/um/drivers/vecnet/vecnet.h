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
 *	vecnet_peer.c		the peer's link: the queues that take frames
 *				(further queues joined and left), a peer
 *				gone and lost, the link check's backoff, why
 *				the peer does not answer, announcements
 *	vecnet_tx.c		transmit: queue choice, xmit, batches out,
 *				backpressure
 *	vecnet_chan.c		shortcut channels to other guests
 *	vecnet_ring.c		the rings: their slots filled and emptied
 *	vecnet_stats.c		the counters of ethtool -S and qstats
 *	vecnet_parse.c		vecN: options
 *	vecnet_user.c, vecnet_tap_user.c, vecnet_raw_user.c
 *				the host side, against libc (vecnet_user.h)
 * A frame out: the stack, vecnet_xmit, the queue's ring, one sendmmsg to
 * the queue's descriptor or a channel.  A frame in: an interrupt, the
 * core's NAPI poll, vecnet_rx, the stack.
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
#include <linux/vecnet.h>
#include <linux/workqueue.h>
#include "vecnet_compat.h"

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

/* ---- options ---------------------------------------------------------- */

enum vecnet_key_type {
	VECNET_KEY_U32,		/* decimal or 0x hex, full unsigned range */
	VECNET_KEY_BOOL,	/* 0 or 1 */
	VECNET_KEY_STR,		/* up to max bytes, not empty */
	VECNET_KEY_MAC,		/* xx:xx:xx:xx:xx:xx, unicast */
	VECNET_KEY_U64,		/* decimal or 0x hex, full unsigned range */
	VECNET_KEY_IP,		/* an IPv4 or IPv6 address */
};

struct vecnet_key {
	const char *name;
	enum vecnet_key_type type;
	u32 min;
	u32 max;
	bool required;
};

struct vecnet_kv {
	char *key;
	char *val;
};

/* key=value pairs of one device, validated against the key tables */
struct vecnet_args {
	char *buf;
	unsigned int n;
	struct vecnet_kv kv[] __counted_by(n);
};

/* Error text for the console and for mconsole replies */
struct vecnet_err {
	char msg[160];
};

struct vecnet_transport;

struct vecnet_config {
	u32 index;
	const struct vecnet_transport *transport;
	struct vecnet_args *args;
	/* slots of the receive and transmit rings: depth= sets both */
	u32 rx_depth;
	u32 tx_depth;
	u32 mtu;
	u32 headroom;
	/* queue pairs while up; the most the device can have */
	u32 queues;
	u32 max_queues;
	bool vec;
	bool have_mac;
	u8 mac[ETH_ALEN];
};

int vecnet_parse(const char *spec, struct vecnet_config *cfg,
		 struct vecnet_err *err);
void vecnet_args_free(struct vecnet_args *args);
const char *vecnet_arg_str(const struct vecnet_args *args, const char *key);
u32 vecnet_arg_u32(const struct vecnet_args *args, const char *key, u32 def);
u64 vecnet_arg_u64(const struct vecnet_args *args, const char *key, u64 def);
int vecnet_arg_ip(const struct vecnet_args *args, const char *key, u8 *addr);
void vecnet_err_set(struct vecnet_err *err, const char *fmt, ...) __printf(2, 3);

/* ---- transports --------------------------------------------------------- */

/* probe_peer: the peer answers, and is not the one seen before */
#define VECNET_PEER_NEW		1
/* probe_peer: the peer cannot be asked, but the connection to it holds */
#define VECNET_PEER_HELD	2

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

/* vnet=: never, as the peer agrees, or required */
enum vecnet_vnet {
	VECNET_VNET_OFF,
	VECNET_VNET_AUTO,
	VECNET_VNET_ON,
};

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

struct vecnet_dev;

struct vecnet_transport {
	const char *name;
	/* Keys this transport takes besides the common ones */
	const struct vecnet_key *keys;
	u32 flags;
	/* Frames the transport can carry, headers excluded */
	u32 max_mtu;

	/* Store the options; may reject combinations the key table cannot */
	int (*setup)(struct vecnet_dev *vn, const struct vecnet_args *args,
		     struct vecnet_err *err);
	/*
	 * Create vn->host.fd (queue 0) and, with VECNET_TF_MQ, vn->q[i].fd for
	 * the vn->nq - 1 queues after it; the carrier starts off if the
	 * peer is not there
	 */
	int (*open)(struct vecnet_dev *vn);
	void (*close)(struct vecnet_dev *vn);
	/* Device removal: free what setup allocated */
	void (*destroy)(struct vecnet_dev *vn);
	/* Optional, host exit: remove host objects; no sleeping, no allocation */
	void (*shutdown)(struct vecnet_dev *vn);
	/*
	 * Optional: 0 when the peer takes frames, VECNET_PEER_NEW when a
	 * different peer does now, VECNET_PEER_HELD when it cannot be asked
	 * and the carrier stays as it is, else a negative errno
	 */
	int (*probe_peer)(struct vecnet_dev *vn);
	/* Optional: fill vn->host.tx_hdr_len bytes in front of a frame */
	int (*build_header)(struct vecnet_dev *vn, struct sk_buff *skb,
			    void *hdr);
	/*
	 * Optional: check a received packet of @len bytes, its first
	 * rx_hdr_len in @hdr and the rest at @frame, sent from @src (with
	 * name_len set).  Returns how many header bytes (options, keys,
	 * counters) still lead the frame at @frame, or a negative errno to
	 * drop the packet into rx_encaps_errors.
	 */
	int (*verify_header)(struct vecnet_dev *vn, const void *hdr,
			     const void *frame, unsigned int len,
			     const void *src);
	/* Optional: tell the host which offloads the guest now takes */
	int (*set_features)(struct vecnet_dev *vn, netdev_features_t features);
	/* Optional: the device's address changed while it is up */
	int (*mac_changed)(struct vecnet_dev *vn);
	/* Optional: ethtool -f hands over a filter program (raw, hybrid) */
	int (*load_filter)(struct vecnet_dev *vn, const void *data, size_t len);
	/*
	 * Optional: the most queues the host end takes as far as known, when
	 * that may be fewer than cfg.max_queues (a single-queue tap: 1)
	 */
	u32 (*max_queues)(struct vecnet_dev *vn);
};

extern const struct vecnet_transport vecnet_unixdgram;
extern const struct vecnet_transport vecnet_tap;
extern const struct vecnet_transport vecnet_raw;
extern const struct vecnet_transport vecnet_hybrid;
extern const struct vecnet_transport vecnet_bess;
extern const struct vecnet_transport vecnet_fd;
extern const struct vecnet_transport vecnet_gre;
extern const struct vecnet_transport vecnet_l2tpv3;

/* ---- device ------------------------------------------------------------- */

/* Driver-specific counters for ethtool -S; the core stats hold the rest */
struct vecnet_xstats {
	u64_stats_t rx_queue_max;
	u64_stats_t rx_queue_running_average;
	u64_stats_t tx_queue_max;
	u64_stats_t tx_queue_running_average;
	u64_stats_t rx_encaps_errors;
	u64_stats_t tx_timeout_count;
	u64_stats_t tx_restart_queue;
	u64_stats_t tx_kicks;
	u64_stats_t tx_flow_control_xon;
	u64_stats_t tx_flow_control_xoff;
	u64_stats_t rx_csum_offload_good;
	u64_stats_t sg_ok;
	u64_stats_t rx_kicks;
	u64_stats_t rx_truncated;
	u64_stats_t rx_transient_errors;
	u64_stats_t tx_eagain;
	u64_stats_t tx_enobufs;
	u64_stats_t tx_eintr;
	u64_stats_t tx_write_wakeups;
	u64_stats_t tx_retry_timer;
	u64_stats_t tx_coalesce_timer;
	u64_stats_t peer_lost;
	u64_stats_t peer_back;
	/* tries at the peer's socket that failed, by what the host said */
	u64_stats_t peer_no_socket;
	u64_stats_t peer_refused;
	u64_stats_t peer_denied;
	u64_stats_t peer_dir_denied;
	u64_stats_t peer_wrong_socket;
	u64_stats_t peer_unreachable;
	u64_stats_t rx_alloc_failed;
	u64_stats_t nego_hello;
	u64_stats_t nego_agreed;
	u64_stats_t rx_nego_bad;
	u64_stats_t chan_opened;
	u64_stats_t chan_closed;
	u64_stats_t chan_refused;
	u64_stats_t tx_chan_frames;
	u64_stats_t rx_chan_frames;
	u64_stats_t rx_chan_bad;
	u64_stats_t chan_stalled;
	u64_stats_t mq_joined;
	u64_stats_t rx_fds_dropped;
	u64_stats_t tx_big_frames;
	u64_stats_t rx_big_frames;
	u64_stats_t tx_big_refused;
	u64_stats_t rx_irq_held;
	u64_stats_t rx_coalesce_timer;
	struct u64_stats_sync syncp;
};

/* Writing contexts of the extended counters (struct vecnet_dev::xstats) */
enum vecnet_xstats_ctx {
	VECNET_XS_NAPI,		/* the NAPI poll, outside tx.lock */
	VECNET_XS_TX,		/* anyone holding tx.lock */
	VECNET_XS_LINK,		/* the link work, outside tx.lock */
	VECNET_XS_NR
};

struct vecnet_stat_desc {
	char name[ETH_GSTRING_LEN];
	size_t offset;
};

extern const struct vecnet_stat_desc vecnet_xstats_desc[];
extern const unsigned int vecnet_xstats_count;

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

/* Frames and bytes one queue moved one way: ethtool -S per queue */
struct vecnet_qstats {
	u64_stats_t packets;
	u64_stats_t bytes;
	struct u64_stats_sync syncp;
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

enum vecnet_chan_state {
	VECNET_CHAN_FREE,
	VECNET_CHAN_PENDING,	/* offered, no interrupt yet */
	VECNET_CHAN_ACTIVE,
	VECNET_CHAN_DYING,	/* closed by the work after a grace period */
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

/* ---- control messages ---------------------------------------------------- */

/*
 * Their format is <linux/vecnet.h>'s, shared with the switch.
 * vecnet_nego.c speaks them; vecnet_chan.c sends its own UNCHAN.
 */
static inline void vecnet_msg_init(struct vecnet_msg *m, u8 type)
{
	memset(m, 0, sizeof(*m));
	memcpy(m->magic, VECNET_MSG_MAGIC, VECNET_MSG_MAGIC_LEN);
	m->version = VECNET_MSG_VERSION;
	m->type = type;
}

/* ---- what each file offers the files above it (the map at the top) ------- */

/* vecnet_dev.c */
int vecnet_device_add(const char *spec, struct vecnet_err *err);
int vecnet_device_remove(u32 index, struct vecnet_err *err);

/* vecnet_ethtool.c */
void vecnet_set_ethtool_ops(struct net_device *dev);

/* vecnet_tap.c: tap and hybrid */
int vecnet_tap_attach(struct vecnet_dev *vn, const char *ifname, bool mq);
int vecnet_tap_offload(int fd, netdev_features_t features);

/* vecnet_core.c */
void vecnet_core_init(struct vecnet_dev *vn);
void vecnet_run_dir_init(void);
const char *vecnet_run_dir(void);
void vecnet_add_flags(struct vecnet_dev *vn, u32 flags);
void vecnet_spread_napi(struct net_device *dev);
/* What changes only with new rings: down and up again while up */
struct vecnet_shape {
	unsigned int queues;
	u32 rx_depth;
	u32 tx_depth;
	u32 mtu;
};

void vecnet_shape_get(struct net_device *dev, struct vecnet_shape *s);
int vecnet_reshape(struct net_device *dev, const struct vecnet_shape *s,
		   const char *what);
int vecnet_set_queues(struct net_device *dev, unsigned int n);
void vecnet_close_fd(struct vecnet_dev *vn);
int vecnet_replace_fd(struct vecnet_dev *vn, int fd);

/* vecnet_rx.c */
int vecnet_rx(struct vecnet_queue *q, int budget);

/* vecnet_nego.c */
int vecnet_nego_setup(struct vecnet_dev *vn, const char *val,
		      struct vecnet_err *err);
void vecnet_nego_start(struct vecnet_dev *vn);
void vecnet_nego_stop(struct vecnet_dev *vn);
void vecnet_nego_tick(struct vecnet_dev *vn);
bool vecnet_nego_rx(struct vecnet_dev *vn, const u8 *m, unsigned int len,
		    int *fd);
bool vecnet_nego_carrier_ok(const struct vecnet_dev *vn);
bool vecnet_nego_plain(const struct vecnet_dev *vn);
bool vecnet_nego_mq_rx(struct vecnet_queue *q, const u8 *m, unsigned int len,
		       int *fd);

/* vecnet_peer.c: the link's state, written only there */
void vecnet_peer_init(struct vecnet_dev *vn,
		      void (*check)(struct work_struct *work));
void vecnet_peer_open(struct vecnet_dev *vn);
void vecnet_peer_start(struct vecnet_dev *vn, bool peer_there);
void vecnet_peer_stop_check(struct vecnet_dev *vn);
void vecnet_peer_stop(struct vecnet_dev *vn);
void vecnet_peer_path(struct vecnet_dev *vn, const char *path,
		      const char *want);
void vecnet_link_unreachable(struct vecnet_dev *vn, const char *path,
			     const char *want, int err);
void vecnet_peer_probing(struct vecnet_dev *vn);
void vecnet_peer_probed(struct vecnet_dev *vn, int err);
bool vecnet_peer_fresh(struct vecnet_dev *vn);
void vecnet_peer_announce(struct vecnet_dev *vn);
void vecnet_peer_check_now(struct vecnet_dev *vn);
bool vecnet_peer_gone(const struct vecnet_dev *vn, int err);
void vecnet_peer_lost(struct vecnet_dev *vn);
void vecnet_peer_lost_rx(struct vecnet_dev *vn);
void vecnet_peer_q_gone(struct vecnet_queue *q);
void vecnet_peer_sent(struct vecnet_dev *vn);
void vecnet_mq_join(struct vecnet_queue *q);
void vecnet_mq_unjoin_all(struct vecnet_dev *vn);
void vecnet_mq_set_cookie(struct vecnet_dev *vn, const u8 *cookie);

/* vecnet_tx.c */
void vecnet_xmit(struct sk_buff *skb, struct net_device *dev);
netdev_tx_t vecnet_xmit_big(struct sk_buff *skb, struct net_device *dev);
void vecnet_tx_big_setup(struct vecnet_dev *vn);
u16 vecnet_select_queue(struct net_device *dev, struct sk_buff *skb,
			struct net_device *sb_dev);
void vecnet_tx_poll(struct vecnet_queue *q, bool resume);
void vecnet_tx_kick_flush(struct vecnet_dev *vn);

/* vecnet_chan.c */
void vecnet_chan_init(struct vecnet_dev *vn);
void vecnet_chan_offer(struct vecnet_queue *q, const u8 *mac, int fd);
int vecnet_chan_start(struct vecnet_dev *vn);
void vecnet_chan_allow_fds(struct vecnet_dev *vn, bool allow, bool per_queue);
void vecnet_chan_drop_fd(struct vecnet_queue *q, int fd);
void vecnet_chan_close_sock(struct vecnet_dev *vn, int fd);
void vecnet_chan_revoke(struct vecnet_dev *vn, const u8 *mac);
void vecnet_chan_kill_all(struct vecnet_dev *vn);
void vecnet_chan_close_all(struct vecnet_dev *vn);
u8 vecnet_chan_pick(const struct vecnet_queue *q, const struct sk_buff *skb);
u32 vecnet_chan_dest(const struct vecnet_dev *vn, unsigned int qi,
		     const struct sk_buff *skb);
bool vecnet_chan_msg(struct vecnet_chan *c, const u8 *data, unsigned int len);
bool vecnet_chan_send_failed(struct vecnet_queue *q, unsigned int idx, int err);
void vecnet_chan_sent(struct vecnet_queue *q, unsigned int idx);
bool vecnet_chan_frame_ok(const struct vecnet_chan *c, const u8 *data,
			  unsigned int len);

/* vecnet_ring.c */
int vecnet_rings_alloc(struct vecnet_dev *vn);
void vecnet_rings_free(struct vecnet_dev *vn);
bool vecnet_rx_alloc_fails(void);
bool vecnet_tx_big_fails(void);
struct sk_buff *vecnet_rx_skb(struct vecnet_queue *q, bool in_napi);
void vecnet_rx_slot(struct vecnet_queue *q, unsigned int i);
struct sk_buff *vecnet_rx_take(struct vecnet_queue *q, unsigned int i,
			       unsigned int len);
struct netdev_queue *vecnet_netdev_queue(const struct vecnet_queue *q);
void vecnet_tx_slot(struct vecnet_queue *q, unsigned int slot,
		    struct sk_buff *skb, bool hdr);
void vecnet_tx_pop(struct vecnet_queue *q, bool sent);
void vecnet_tx_drop_all(struct vecnet_queue *q);
void vecnet_tx_check_full(struct vecnet_queue *q);
void vecnet_tx_unsteer(struct vecnet_queue *q, unsigned int chan);
void vecnet_tx_queue_raw(struct vecnet_dev *vn, struct sk_buff *skb);
void vecnet_tx_drop_queued(struct vecnet_dev *vn);

/* vecnet_stats.c */
void vecnet_xstats_add_n(struct vecnet_queue *q, enum vecnet_xstats_ctx ctx,
			 size_t off, u64 n);
void vecnet_xstats_add_tx(struct vecnet_queue *q, size_t off);
void vecnet_qstats_add(struct vecnet_qstats *qs, unsigned int len);
u64 vecnet_tx_packets(const struct vecnet_dev *vn);
void vecnet_qstats_read(const struct vecnet_qstats *qs, u64 *packets,
			u64 *bytes);
extern const struct netdev_stat_ops vecnet_stat_ops;
void vecnet_queue_sample(struct vecnet_xstats *xs, u64_stats_t *max,
			 u64_stats_t *avg, unsigned int n);
#define vecnet_xs_off(ctr)	offsetof(struct vecnet_xstats, ctr)
/* Count one event in counter @ctr of queue @q's context */
#define vecnet_qcount_napi(q, ctr) \
	vecnet_xstats_add_n(q, VECNET_XS_NAPI, vecnet_xs_off(ctr), 1)
#define vecnet_qcount_tx(q, ctr) \
	vecnet_xstats_add_tx(q, vecnet_xs_off(ctr))
/* ...and of queue 0, where the negotiation, channels and link live */
#define vecnet_count_napi(vn, ctr)	vecnet_qcount_napi(&(vn)->q[0], ctr)
#define vecnet_count_tx(vn, ctr)	vecnet_qcount_tx(&(vn)->q[0], ctr)
#define vecnet_count_link(vn, ctr) \
	vecnet_xstats_add_n(&(vn)->q[0], VECNET_XS_LINK, vecnet_xs_off(ctr), 1)

#endif
