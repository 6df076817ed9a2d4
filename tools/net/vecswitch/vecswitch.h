/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vecswitch.h - shared types of the vecswitch daemon: configuration, the
 * switch state, ports and their queues, forwarding table entries, per-port
 * counters and the I/O backend interface.
 *
 * Where a frame goes, file by file:
 *	mmsg.c, io_uring.c	wait for the sockets; take datagrams off them
 *	dgram.c, conn.c		a datagram or connection's frame, from its port
 *	nego.c, chan.c		(negotiation messages; shortcut channels)
 *	mq.c			(a multiqueue guest's further sockets)
 *	forward.c		checks, learning (fdb.c) and the ports it goes to
 *	gso.c			cut for a port without virtio-net headers
 *	buf.c			stored once, queued on each of those ports
 *	main.c			at the end of the loop turn, every queue is sent
 *				(vs_flush_all):
 *	dgram.c, conn.c,	by sendmmsg for the dgram ports, else as the
 *	vhost_port.c		socket or the guest's receive ring takes it
 * vhost_port.c, with vhost.c and virtq.c (vhost.h), takes a vhost-user
 * guest's frames out of its memory and puts frames into it.
 * Around it: main.c (start-up, the loop), conf.c (the command line),
 * stall.c (which dgram guests get no more until they read),
 * sock.c (the switch's sockets and who may use them), peer.c (where a
 * dgram port's frames go), ctl.c (the control socket; ctl_client.c is
 * `vecswitch ctl`), unixdiag.c (which guests read).
 */
#ifndef VECSWITCH_H
#define VECSWITCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <linux/vecnet.h>	/* the control messages, shared with the driver */
#include <linux/virtio_net.h>

/* UDP segmentation offload (Linux 5.18); older headers lack the name */
#ifndef VIRTIO_NET_HDR_GSO_UDP_L4
#define VIRTIO_NET_HDR_GSO_UDP_L4	5
#endif

struct ucred;
struct vs_chan;
struct vs_switch;
struct vs_vhost;

#define ETH_HLEN_MIN		14	/* dst + src + ethertype */
#define VS_MAX_FRAME_LIMIT	65535
/* --vnet ports: the header, and a super-frame of 64 KiB with its L2 header */
#define VS_VNET_HDR_LEN		10
#define VS_VNET_FRAME_MAX	(65536 + 18)
#define VS_GSO_MAX_SEGS		1024
/* Smaller segments would make a 64 KiB super-frame hundreds of frames */
#define VS_GSO_MIN_SIZE		256
#define VS_BATCH		64	/* frames per recvmmsg/sendmmsg */
/* Sockets of one multiqueue guest, its main one included */
#define VS_MQ_MAX		8
/* Shortcut channels a dgram port holds at most (the guest driver's too) */
#define VS_CHAN_PORT_MAX	8
/* Freed heap memory the switch keeps for its next frames (mallopt) */
#define VS_HEAP_KEEP		(64 << 20)
#define VS_NAME_LEN		128
/* unix socket diagnostics: at most one dump per this many ms */
#define VS_DIAG_MS		10
#define VS_ALLOW_MAX		32	/* ids in --allow-uid / --allow-gid */
/* descriptors one message can carry: the kernel's SCM_MAX_FD */
#define VS_FDS_MAX		253
/*
 * room, in 8-byte words, for what a received message can carry besides
 * its data: SCM_CREDENTIALS (CMSG_SPACE of a struct ucred, 4 words) and
 * SCM_RIGHTS of VS_FDS_MAX descriptors (129 words)
 */
#define VS_RX_CMSG_WORDS	(4 + 129)
/* receive buffers the io_uring backend provides (io_uring.c) */
#define VS_URING_BUFS		256
/* datagram senders' effective ids, remembered by pid for this long */
#define VS_CRED_CACHE		64
#define VS_CRED_CACHE_MS	1000

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

/* ---- configuration ---------------------------------------------------- */

struct vs_config {
	const char *dgram_path;
	const char *vnet_path;
	const char *stream_path;
	const char *seqpacket_path;
	const char *vhost_path;
	const char *ctl_path;
	const char *tap_name;
	unsigned int sock_mode;
	long sock_gid;			/* -1: leave the group alone */
	unsigned int ctl_mode;		/* the control socket's, apart */
	long ctl_gid;
	unsigned int max_frame;
	unsigned int age;		/* seconds, 0: entries never expire */
	unsigned int fdb_max;
	unsigned int fdb_port_max;
	unsigned int fdb_uplink_max;	/* the same for the --tap uplink */
	unsigned int user_ports;	/* ports one non-root user may hold */
	unsigned int process_ports;	/* and one process of theirs */
	unsigned int fdb_user_max;	/* entries one non-root user's ports own */
	unsigned int port_age;		/* s a dgram port may send nothing; 0: ever */
	unsigned int max_memory;	/* MiB of frames queued in all */
	unsigned int bcast_limit;	/* flooded frames/s a guest port may send */
	unsigned int queue_len;
	unsigned int max_ports;
	unsigned int unread_limit;	/* bytes; see tx_unread in forward.c */
	/* sender credential checks: off while both lists are empty */
	uint32_t allow_uid[VS_ALLOW_MAX];
	uint32_t allow_gid[VS_ALLOW_MAX];
	unsigned int n_allow_uid;
	unsigned int n_allow_gid;
	bool hub;
	bool flood_unknown;
	bool mac_lock;
	bool isolate;
	bool shortcut;			/* offer shortcut channels (chan.c) */
	bool no_uring;
	int verbose;
};

/* ---- frames and queues ------------------------------------------------ */

/* What a --vnet port's header says, and where the frame's headers are */
struct vs_gso {
	uint8_t flags;			/* VIRTIO_NET_HDR_F_* */
	uint8_t type;			/* VIRTIO_NET_HDR_GSO_*, ECN bit off */
	bool tcp;
	bool v6;
	uint16_t gso_size;
	uint16_t csum_start;
	uint16_t csum_offset;
	uint16_t l3;			/* offsets, for super-frames only */
	uint16_t l4;
	uint16_t hlen;
};

/*
 * One received frame, shared by every port it is queued on (a flood queues
 * the same buffer N times). hdr holds the stream framing so that a stream
 * port can write header and frame with one writev; vnet the virtio-net
 * header a --vnet port gets (all zero for frames from other ports). A
 * frame that still needs its checksum or cutting into segments gets its
 * plain form made once, the first time a port without headers wants it:
 * seg, a list through next, holding a reference on each.
 */
struct vs_buf {
	unsigned int refcnt;
	unsigned int len;
	bool ctl;			/* a negotiation message, not a frame */
	uint8_t hdr[4];
	uint8_t vnet[VS_VNET_HDR_LEN];
	struct vs_gso gso;
	struct vs_buf *seg;
	struct vs_buf *next;
	unsigned int nseg;
	unsigned int seg_size;		/* the payload size seg was cut at */
	uint8_t data[];
};

/*
 * A port's frames, in order; to[] says which of a multiqueue guest's
 * sockets each one goes to (0: its main one, k: its queue socket k).
 */
struct vs_queue {
	struct vs_buf **slot;
	uint8_t *to;
	unsigned int cap;
	unsigned int head;
	unsigned int count;
};

/* ---- per-port counters ------------------------------------------------- */

struct vs_port_stats {
	uint64_t rx_frames;
	uint64_t rx_bytes;
	uint64_t tx_frames;
	uint64_t tx_bytes;
	uint64_t rx_runt;
	uint64_t rx_oversize;
	uint64_t rx_bad_src;
	uint64_t rx_mac_lock;
	uint64_t rx_storm;		/* floods past --bcast-limit */
	uint64_t rx_bad_len;
	uint64_t rx_bad_vnet;
	uint64_t rx_gso;
	uint64_t rx_hello;
	uint64_t rx_hello_again;
	uint64_t rx_mode;
	uint64_t rx_nego_bad;
	uint64_t rx_unchan;		/* channels the guest gave up */
	uint64_t rx_errors;
	uint64_t tx_queue_full;
	uint64_t tx_oversize;
	uint64_t tx_unread;
	uint64_t tx_errors;
	uint64_t tx_retries;
	uint64_t fdb_full;
};

/* The same, per socket of a multiqueue guest (socket 0: every port's) */
struct vs_queue_stats {
	uint64_t rx_packets;
	uint64_t rx_bytes;
	uint64_t tx_packets;
	uint64_t tx_bytes;
};

struct vs_stat_desc {
	const char *name;
	size_t off;
};

extern const struct vs_stat_desc vs_port_stat_desc[];
extern const unsigned int vs_port_stat_count;

/* Switch-wide counters: things that have no port, or outlive one. */
struct vs_sw_stats {
	uint64_t no_port;		/* sender could not become a port */
	uint64_t unknown_dropped;	/* unknown unicast, --no-flood-unknown */
	uint64_t isolated;		/* frames --isolate kept from a port */
	uint64_t fdb_moves;
	uint64_t fdb_aged;
	uint64_t ports_added;
	uint64_t ports_removed;
	uint64_t dead_peers;		/* dgram peers gone (ENOENT/ECONNREFUSED) */
	uint64_t tx_peer_full;		/* dgram sends refused: the guest's queue
					 * (or the send buffer) full, EAGAIN */
	uint64_t stream_bad_len;	/* connections dropped for a bad length */
	uint64_t cred_refused;		/* frames/connections of a user not allowed */
	uint64_t cred_unseen;		/* datagrams judged by the ids stamped on them */
	uint64_t gso_frames;		/* super-frames cut for ports without headers */
	uint64_t gso_segments;		/* the frames that made */
	uint64_t csum_filled;		/* checksums finished for them */
	uint64_t diag_dumps;		/* unix socket diagnostics taken */
	uint64_t diag_failed;		/* and those that got no answer */
	uint64_t addr_refused;		/* datagrams from a name that cannot be a port */
	uint64_t accept_shed;		/* connections closed: out of descriptors */
	uint64_t ctl_refused;		/* control clients not allowed */
	uint64_t peer_repinned;		/* ports that followed a guest's new socket */
	uint64_t user_ports_full;	/* senders refused: their user's ports are full */
	uint64_t process_ports_full;	/* or their process's */
	uint64_t ports_aged;		/* dgram ports removed after --port-age idle */
	uint64_t mem_bytes;		/* frame memory in use (vs_buf_account) */
	uint64_t mem_refused;		/* frames dropped: --max-memory reached */
	uint64_t chan_opened;		/* shortcut channels handed out */
	uint64_t chan_revoked;		/* and withdrawn */
	uint64_t chan_failed;		/* offers a guest's socket refused */
	uint64_t chan_full;		/* pairs left without: a port has its most,
					 * or the two ports share one already */
	uint64_t chan_user_full;	/* pairs left without: a port has its most
					 * with the other port's user (chan.c) */
	uint64_t chan_unsent;		/* withdrawals a guest's socket refused */
	uint64_t rx_join;		/* queue sockets joined to a port (mq.c) */
	uint64_t rx_join_again;		/* JOINs of a joined one, acked again */
	uint64_t rx_join_bad;		/* JOINs refused, for one of these: */
	uint64_t join_bad_cookie;	/* no port has handed out that cookie */
	uint64_t join_early;		/* the port has not sent its MODE yet */
	uint64_t join_bad_cred;		/* not the uid and pid of its owner */
	uint64_t join_taken;		/* the address is another port's */
	uint64_t join_full;		/* the port has VS_MQ_MAX sockets */
	uint64_t join_bad_addr;		/* an address the switch cannot pin */
	uint64_t queues_dead;		/* queue sockets dropped: nobody there */
	/* descriptors sent to the switch, where the kernel lets them through */
	uint64_t rx_fds;		/* taken and handed to the closer (sock.c) */
	uint64_t rx_fds_inline;		/* of those, closed by the loop itself */
	uint64_t rx_ctrunc;		/* messages whose control data was cut */
	uint64_t vhost_broken;		/* vhost-user frontends dropped for what
					 * they sent (vhost_port.c) */
	uint64_t vhost_direct;		/* vhost-user frames sent from guest
					 * memory, with no copy in the switch */
	/*
	 * Frame accounting: every frame meant for a port, and the sent,
	 * dropped and queued frames of ports since removed. tx_wanted equals
	 * tx_retired plus vs_port_tx_done() over the live ports.
	 */
	uint64_t tx_wanted;
	uint64_t tx_retired;
};

extern const struct vs_stat_desc vs_sw_stat_desc[];
extern const unsigned int vs_sw_stat_count;

/* ---- ports -------------------------------------------------------------- */

/* Where a dgram peer's frames go, resolved once (peer.c) */
struct vs_pin {
	int fd;				/* O_PATH of its socket file, -1: abstract */
	dev_t dev;
	ino_t ino;
	uint32_t uid;			/* the sender's, from SCM_CREDENTIALS */
	struct sockaddr_un dst;		/* /proc/self/fd/N, or the abstract name */
	socklen_t dstlen;
};

/* A queue socket a multiqueue guest joined to its port (mq.c) */
struct vs_mq_sock {
	struct sockaddr_un addr;
	socklen_t addrlen;
	uint32_t addr_hash;
	struct vs_pin pin;
};

/*
 * The switch's datagram sockets: --dgram, and --vnet, an alias of it kept
 * for old setups.  A dgram port belongs to the one it first sent to, its
 * frames leave by that one, and it is found among that one's ports only.
 */
enum vs_dgram_sock {
	VS_SOCK_DGRAM,
	VS_SOCK_VNET,
	VS_SOCK_NR
};

enum vs_port_type {
	VS_PORT_DGRAM,
	VS_PORT_STREAM,
	VS_PORT_SEQPACKET,
	VS_PORT_TAP,
	VS_PORT_VHOST,			/* a vhost-user frontend (vhost_port.c) */
};

/*
 * A port's state is grouped by the feature that owns it, each group in a
 * struct of its own below, most of them for dgram peers alone.  The
 * groups keep the order the fields had: what the forwarding path reads
 * for every frame (the head of struct vs_port, nego, the head of dgram,
 * txq and st) stays where it was.
 */

/* dgram peers: their socket, where it is, and their pace (dgram.c, peer.c) */
struct vs_port_dgram {
	enum vs_dgram_sock sock;	/* the switch's socket it sent to */
	unsigned int backoff_ms;
	uint64_t retry_at_ms;		/* 0: not backing off */
	uint64_t unanswered;		/* bytes sent since it last sent a frame */
	uint64_t idle_gen;		/* dump that last saw its queue empty */
	/* the guest's bound address, and where it was found */
	struct sockaddr_un addr;
	socklen_t addrlen;
	uint32_t addr_hash;
	struct vs_pin pin;
};

/* dgram peers: a socket connected to the guest, see vs_dgram_blocked() */
struct vs_port_probe {
	int fd;				/* -1: none yet, -2: unusable */
	unsigned int q;			/* the socket of the guest's it watches */
	bool armed;
	bool woke;
};

/* dgram peers: virtio-net headers as negotiated (nego.c) */
struct vs_port_nego {
	bool rx_vnet;
	bool tx_vnet;
	unsigned int tx_plain;		/* queued entries that still go plain */
};

/* dgram peers: shortcut channels to other guests (chan.c) */
struct vs_port_chan {
	bool ok;			/* its HELLO asked for channels */
	bool q_ok;			/* ...one per queue (F_CHANQ), and has F_MQ */
	unsigned int n;
	struct vs_chan *ch[VS_CHAN_PORT_MAX];
	unsigned int cap_hold;		/* captures naming it: no channels */
	uint64_t offer_ms;		/* its last channel offer */
};

/*
 * dgram peers: a multiqueue guest's cookie, valid while ok, and the queue
 * sockets that joined with it (n, socket 0 not counted) (mq.c)
 */
struct vs_port_mq {
	bool ok;
	uint8_t cookie[VECNET_MSG_COOKIE_LEN];
	unsigned int n;
	struct vs_mq_sock q[VS_MQ_MAX - 1];
};

/* stream ports: partial input and output (conn.c) */
struct vs_port_stream {
	uint8_t *rxbuf;
	size_t rxlen;
	size_t rxcap;
	size_t tx_off;			/* bytes of the head frame already written */
};

/* vhost-user ports: the frontend, and whether its queue holds more */
struct vs_port_vhost {
	struct vs_vhost *vh;
	bool busy;
	/* since when it has features but no memory table; said so */
	uint64_t no_mem_ms;
	bool no_mem_said;
};

struct vs_port {
	unsigned int id;		/* never reused while the switch runs */
	unsigned int slot;		/* index in sw->ports */
	enum vs_port_type type;
	int fd;				/* -1 for dgram peers: they share sw->dgram_fd */
	bool uplink;
	bool dead;			/* removed; freed at the end of the loop turn */
	bool want_out;			/* EPOLLOUT armed */
	bool locked;			/* --mac-lock: lock_mac is set */
	struct vs_port_nego nego;
	struct vs_port_chan chan;
	unsigned int mtu;		/* tap: the interface's MTU, 0 unknown */
	uint8_t lock_mac[6];
	char name[VS_NAME_LEN];

	struct vs_port_dgram dgram;
	struct vs_port_probe probe;
	struct vs_port_mq mq;
	/* frames and bytes by socket: 0 every port's own, k mq.q[k - 1] */
	struct vs_queue_stats qst[VS_MQ_MAX];

	struct vs_port_vhost vhost;
	/* what its type must undo before the port goes (vhost-user) */
	void (*detach)(struct vs_switch *sw, struct vs_port *p);
	struct vs_port_stream stream;

	unsigned int fdb_count;
	bool has_owner;			/* the user below is known */
	uint32_t owner_uid;		/* dgram: SCM_CREDENTIALS; stream: SO_PEERCRED */
	int32_t owner_pid;		/* the same credentials' process */
	uint64_t seen_ms;		/* dgram: its last datagram */
	uint64_t bcast_tokens;		/* --bcast-limit bucket, and its last fill */
	uint64_t bcast_ms;
	struct vs_queue txq;
	struct vs_port_stats st;
};

/* ---- forwarding table ---------------------------------------------------- */

struct vs_fdb_entry {
	uint8_t mac[6];
	uint16_t vlan;
	struct vs_port *port;
	uint64_t seen_ms;
	int next;			/* chain / free list index, -1 ends */
	bool used;
};

struct vs_fdb {
	struct vs_fdb_entry *ent;
	int *bucket;
	unsigned int nbuckets;		/* power of two */
	unsigned int max;
	unsigned int count;
	int free_head;
	uint64_t moved_log_ms;		/* last "possible duplicate" message */
};

/* ---- control connections ----------------------------------------------- */

struct vs_ctl_conn {
	int fd;
	char req[512];
	size_t reqlen;
	char *out;
	size_t outlen;
	size_t outoff;
	uint64_t deadline_ms;
	struct vs_capture *cap;		/* a capture it streams (capture.c) */
};

/*
 * ctl capture: the switch answers "capture\n", then a stream of records,
 * each this header and len bytes: a frame (its first bytes, up to the
 * snap length), a note for the user (text), and last the end (two
 * uint64_t: frames captured, frames lost because the reader was behind).
 * Native byte order: the client runs on the switch's host.
 */
enum vs_cap_type {
	VS_CAP_FRAME = 1,
	VS_CAP_NOTE,
	VS_CAP_END,
};

struct vs_cap_rec {
	uint16_t type;			/* enum vs_cap_type */
	uint16_t pad;
	uint32_t port;			/* FRAME: the port it came in by */
	uint32_t len;			/* bytes after this header */
	uint32_t origlen;		/* FRAME: its whole length */
	uint64_t ts_ns;			/* FRAME: CLOCK_REALTIME, forwarded at */
};

#define VS_CAP_MAX		4	/* captures at once */
#define VS_CAP_FILTERS		8	/* ports, and addresses, a capture names */
#define VS_CAP_BUF		(4u << 20) /* what its reader may be behind */
#define VS_CAP_SNAP_MAX		262144

#define VS_CTL_MAX_CONN		8
/* a control request and its answer, each way, client and switch */
#define VS_CTL_TIMEOUT_MS	5000

/* ---- the switch ----------------------------------------------------------- */

struct vs_switch;

struct vs_io_ops {
	const char *name;
	int (*init)(struct vs_switch *sw);
	void (*fini)(struct vs_switch *sw);
	/* wait up to timeout_ms for events and dispatch them */
	int (*wait)(struct vs_switch *sw, int timeout_ms);
};

struct vs_switch {
	struct vs_config cfg;
	const struct vs_io_ops *io;
	void *io_priv;

	int epfd;
	int sigfd;
	int dgram_fd;
	int vnet_fd;
	int stream_fd;
	int seqpacket_fd;
	int vhost_fd;
	int ctl_fd;
	unsigned int vh_busy;		/* vhost-user ports with frames left */

	struct vs_port **ports;		/* cfg.max_ports slots */
	unsigned int nports;
	unsigned int next_id;
	unsigned int ndead;
	struct vs_port *tap;

	struct vs_fdb fdb;
	struct vs_ctl_conn ctl[VS_CTL_MAX_CONN];
	unsigned int ncap;		/* captures running (capture.c) */
	unsigned int cap_all;		/* of them, those that hold every port */

	/* rx scratch for dgram/seqpacket batches */
	uint8_t *rxmem;
	uint8_t *vnet_rxmem;		/* VS_BATCH slots of header + super-frame */
	struct sockaddr_un rxaddr[VS_BATCH];
	/* control data of each message in a batch: credentials, descriptors */
	uint64_t rxctl[VS_BATCH][VS_RX_CMSG_WORDS];
	/* and what they come to: the senders' effective ids (sock.c) */
	struct ucred rxcred[VS_BATCH];
	struct {
		struct ucred kernel;	/* what SCM_CREDENTIALS said */
		struct ucred eff;
		uint64_t ms;
	} credc[VS_CRED_CACHE];

	/* send buffer of each datagram socket */
	struct {
		int size;		/* as the kernel granted it, 0 unknown */
		int used;		/* SIOCOUTQ when last asked */
		uint64_t asked_ms;
	} sndbuf[VS_SOCK_NR];

	/* unix socket diagnostics: which dgram guests read (unixdiag.c) */
	struct {
		int fd;			/* NETLINK_SOCK_DIAG; -1 off */
		uint64_t gen;		/* dumps taken */
		uint64_t asked_ms;
	} diag;

	/* the switch's own socket files, never a peer (peer.c) */
	struct {
		dev_t dev;
		ino_t ino;
	} own[6];
	unsigned int n_own;
	uint64_t refused_log_ms;	/* last addr_refused message */
	uint64_t runt_log_ms;		/* last rx_runt message of a dgram port */
	uint64_t join_log_ms;		/* last refused JOIN message */
	uint64_t shed_log_ms;		/* last accept_shed message */
	uint64_t full_log_ms;		/* last tx_peer_full message */
	int spare_fd;			/* given up to shed a connection */

	/* descriptors sent to the switch (sock.c) */
	struct {
		bool passed;		/* the kernel cannot refuse them */
		bool closer;		/* the thread that closes them runs */
		int wfd;		/* its pipe, while it does */
		uint64_t log_ms;	/* last message about them */
	} rights;

	uint64_t now_ms;
	uint64_t next_sweep_ms;
	bool stop;
	struct vs_sw_stats st;
};

/* epoll tags: low bits say what kind of fd, the rest is a port slot */
enum vs_ev_kind {
	VS_EV_SIGNAL,
	VS_EV_DGRAM,
	VS_EV_VNET,
	VS_EV_STREAM_LISTEN,
	VS_EV_SEQPACKET_LISTEN,
	VS_EV_CTL_LISTEN,
	VS_EV_CTL_CONN,
	VS_EV_PORT,
	VS_EV_PROBE,			/* a dgram peer's queue has room again */
	VS_EV_VHOST_LISTEN,
	VS_EV_KICK_RX,			/* a vhost-user guest posted buffers */
	VS_EV_KICK_TX,			/* and frames to send */
};

static inline uint64_t vs_ev(enum vs_ev_kind kind, unsigned int idx)
{
	return ((uint64_t)idx << 8) | kind;
}

/* Guests may talk to each other unless --isolate; the uplink to anyone. */
static inline bool vs_may_reach(const struct vs_switch *sw,
				const struct vs_port *in,
				const struct vs_port *out)
{
	return !sw->cfg.isolate || in->uplink || out->uplink;
}

/* A control message of @type (<linux/vecnet.h>), its body zeroed */
static inline void vs_msg_init(struct vecnet_msg *m, uint8_t type)
{
	memset(m, 0, sizeof(*m));
	memcpy(m->magic, VECNET_MSG_MAGIC, VECNET_MSG_MAGIC_LEN);
	m->version = VECNET_MSG_VERSION;
	m->type = type;
}

/*
 * Is the datagram of @len bytes at @d a control message (VECNET_MSG_LEN
 * bytes, the magic and version) of @type?
 */
static inline bool vs_msg_is(const void *d, size_t len, uint8_t type)
{
	const struct vecnet_msg *m = d;

	return len == sizeof(*m) &&
	       !memcmp(m->magic, VECNET_MSG_MAGIC, VECNET_MSG_MAGIC_LEN) &&
	       m->version == VECNET_MSG_VERSION && m->type == type;
}

/* conf.c */
void vs_conf_parse(struct vs_config *cfg, int argc, char **argv);

/* main.c */
void vs_dispatch(struct vs_switch *sw, uint64_t tag, uint32_t events);
void vs_flush_all(struct vs_switch *sw);

/* buf.c */
struct vs_buf *vs_buf_alloc(unsigned int len);
void vs_buf_set_limit(size_t bytes);
void vs_buf_account(struct vs_sw_stats *st);
struct vs_buf *vs_buf_new(const void *data, unsigned int len,
			  const uint8_t *vnet, const struct vs_gso *gso);
void vs_buf_drop_segs(struct vs_buf *b);
void vs_buf_put(struct vs_buf *b);
bool vs_queue_push(struct vs_port *p, struct vs_buf *b);
bool vs_queue_push_to(struct vs_port *p, struct vs_buf *b, unsigned int to);
bool vs_queue_msg(struct vs_switch *sw, struct vs_port *p,
		  const struct vecnet_msg *m, unsigned int to);
unsigned int vs_queue_to(const struct vs_port *p, unsigned int i);
void vs_queue_drop_to(struct vs_port *p, unsigned int k);
struct vs_buf *vs_queue_peek(const struct vs_port *p, unsigned int i);
void vs_queue_pop(struct vs_port *p);
void vs_queue_drain(struct vs_port *p);
void vs_port_sent(struct vs_port *p);
void vs_port_count_tx(struct vs_port *p, unsigned int len, unsigned int to);

/* util.c */
uint64_t vs_now_ms(void);
void vs_log(const struct vs_switch *sw, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int vs_epoll_add(struct vs_switch *sw, int fd, uint64_t tag, uint32_t events);

/* port.c */
const char *vs_share_full(struct vs_switch *sw, uint32_t uid, int32_t pid);
void vs_port_age(struct vs_switch *sw);
struct vs_port *vs_port_new(struct vs_switch *sw, enum vs_port_type type,
			    int fd, const char *name);
void vs_port_remove(struct vs_switch *sw, struct vs_port *p, const char *why);
const char *vs_type_name(enum vs_port_type type);
const char *vs_port_type_name(const struct vs_port *p);
void vs_port_reap(struct vs_switch *sw);
void vs_port_free_all(struct vs_switch *sw);
void vs_name_escape(char *out, size_t outlen, const uint8_t *s, size_t n);

/* dgram.c */
void vs_dgram_input(struct vs_switch *sw, enum vs_dgram_sock sock,
		    const struct sockaddr_un *addr, socklen_t alen,
		    const struct ucred *cred, const uint8_t *data, size_t len,
		    bool truncated);
void vs_dgram_probe_event(struct vs_port *p);
int vs_next_retry_ms(struct vs_switch *sw);
int vs_dgram_rx(struct vs_switch *sw, enum vs_dgram_sock sock);
void vs_dgram_flush(struct vs_switch *sw);
bool vs_dgram_send_now(struct vs_switch *sw, struct vs_port *p,
		       struct iovec *iov, unsigned int n, unsigned int len);

/* conn.c */
void vs_port_flush(struct vs_switch *sw, struct vs_port *p);
void vs_port_event(struct vs_switch *sw, struct vs_port *p, uint32_t events);
void vs_accept(struct vs_switch *sw, int lfd, enum vs_port_type type);
int vs_tap_open(struct vs_switch *sw, const char *ifname);
void vs_tap_mtu(struct vs_port *p);
void vs_stream_rx(struct vs_switch *sw, struct vs_port *p);

/* forward.c */
void vs_forward(struct vs_switch *sw, struct vs_port *in,
		const uint8_t *frame, unsigned int len);
void vs_forward_vnet(struct vs_switch *sw, struct vs_port *in,
		     unsigned int k, const uint8_t *hdr, unsigned int len);
/* what vs_forward_decide() found: the one port of a unicast, or a flood */
struct vs_fwd {
	struct vs_port *out;		/* NULL: every port the frame may reach */
	uint16_t vlan;
	bool learned;			/* the source is on the ingress port now */
	uint8_t dst[6];
	uint8_t src[6];
};
/* a frame's first bytes: every header vs_forward_decide and gso.c read */
#define VS_FWD_HEAD_LEN		128
bool vs_forward_decide(struct vs_switch *sw, struct vs_port *in,
		       unsigned int k, const uint8_t *frame, unsigned int len,
		       const struct vs_gso *gso, struct vs_fwd *f);
void vs_forward_deliver(struct vs_switch *sw, struct vs_port *in,
			const struct vs_fwd *f, struct vs_buf *b);
bool vs_forward_direct_ok(const struct vs_port *out, const struct vs_gso *gso);

/* gso.c */
int vs_vnet_parse(const uint8_t *hdr, const uint8_t *frame, unsigned int len,
		  unsigned int max_frame, struct vs_gso *g);
bool vs_buf_needs_plain(const struct vs_buf *b);
int vs_buf_plain(struct vs_switch *sw, struct vs_buf *b, unsigned int size);
unsigned int vs_gso_fit(const struct vs_buf *b, unsigned int room);

/* fdb.c */
int vs_fdb_init(struct vs_fdb *fdb, unsigned int max);
void vs_fdb_fini(struct vs_fdb *fdb);
struct vs_port *vs_fdb_lookup(struct vs_switch *sw, const uint8_t *mac,
			      uint16_t vlan);
bool vs_fdb_learn(struct vs_switch *sw, struct vs_port *p,
		  const uint8_t *mac, uint16_t vlan);
void vs_fdb_flush_port(struct vs_switch *sw, struct vs_port *p);
void vs_fdb_sweep(struct vs_switch *sw);
struct vs_port *vs_fdb_owner(struct vs_switch *sw, const uint8_t *mac);
void vs_mac_str(char *out, const uint8_t *mac);	/* out: 18 bytes */

/* capture.c */
const char *vs_capture_start(struct vs_switch *sw, struct vs_ctl_conn *c,
			     char *args);
void vs_capture_frame(struct vs_switch *sw, const struct vs_port *in,
		      const struct vs_port *out, const uint8_t *frame,
		      unsigned int len);
void vs_capture_end(struct vs_switch *sw, struct vs_ctl_conn *c);
void vs_capture_free(struct vs_switch *sw, struct vs_ctl_conn *c);
bool vs_capture_done(const struct vs_ctl_conn *c);

/* stall.c */
bool vs_stall_dgram(struct vs_switch *sw, const struct vs_port *p);

/* ctl.c */
void vs_ctl_accept(struct vs_switch *sw);
void vs_ctl_event(struct vs_switch *sw, unsigned int idx, uint32_t events);
void vs_ctl_expire(struct vs_switch *sw);
void vs_ctl_close_all(struct vs_switch *sw);
bool vs_ctl_req_done(const struct vs_ctl_conn *c);
void vs_ctl_flush(struct vs_switch *sw);
void vs_ctl_answer(struct vs_switch *sw, struct vs_ctl_conn *c);

/* ctl_client.c */
int vs_ctl_client(int argc, char **argv);

/* Where dgram port @p's socket @k (0: its main one) is sent to */
static inline const struct sockaddr_un *vs_mq_dst(const struct vs_port *p,
						  unsigned int k,
						  socklen_t *len)
{
	const struct vs_pin *pin = k ? &p->mq.q[k - 1].pin : &p->dgram.pin;

	*len = pin->dstlen;
	return &pin->dst;
}

/* The descriptor of the switch's datagram socket @sock */
static inline int vs_dgram_sock_fd(const struct vs_switch *sw,
				   enum vs_dgram_sock sock)
{
	return sock == VS_SOCK_VNET ? sw->vnet_fd : sw->dgram_fd;
}

/* The switch's socket a dgram port's frames leave by */
static inline int vs_dgram_fd(const struct vs_switch *sw,
			      const struct vs_port *p)
{
	return vs_dgram_sock_fd(sw, p->dgram.sock);
}

/*
 * Whether dgram port @p's frames may leave by a socket connected to it
 * alone: a plain peer, the probe not refused (dgram.c, direct())
 */
static inline bool vs_dgram_may_direct(const struct vs_port *p)
{
	return p->dgram.sock == VS_SOCK_DGRAM && !p->st.rx_hello &&
	       !p->mq.n && p->probe.fd != -2;
}

/* A port's frames sent, dropped or still queued: see tx_wanted */
static inline uint64_t vs_port_tx_done(const struct vs_port *p)
{
	return p->st.tx_frames + p->st.tx_queue_full + p->st.tx_oversize +
	       p->st.tx_unread + p->st.tx_errors + p->txq.count;
}

/* peer.c */
int vs_peer_own(struct vs_switch *sw, const char *path);
const char *vs_peer_pin(const struct vs_switch *sw,
			const struct sockaddr_un *addr, socklen_t len,
			const struct ucred *cred, struct vs_pin *pin);
void vs_peer_unpin(struct vs_pin *pin);
bool vs_peer_repin(struct vs_switch *sw, struct vs_port *p);
int vs_peer_check_proc(void);

/* nego.c */
void vs_nego_reset(struct vs_port *p);
bool vs_nego_is_msg(const uint8_t *data, size_t len);
void vs_nego_input(struct vs_switch *sw, struct vs_port *p,
		   const uint8_t *m, size_t len);
bool vs_nego_tx_hdr(const struct vs_port *p, unsigned int i,
		    const struct vs_buf *b);

/* mq.c */
unsigned int vs_mq_sock_of(const struct vs_port *p,
			   const struct sockaddr_un *addr, socklen_t len,
			   uint32_t h);
bool vs_mq_is_join(const uint8_t *m, size_t len);
bool vs_mq_offer(struct vs_switch *sw, struct vs_port *p);
void vs_mq_forget(struct vs_port *p);
const char *vs_mq_join(struct vs_switch *sw, enum vs_dgram_sock sock,
		       const struct sockaddr_un *addr, socklen_t len,
		       uint32_t h, const struct ucred *cred, const uint8_t *m);
void vs_mq_drop(struct vs_port *p, unsigned int k);

/* chan.c */
void vs_chan_seen(struct vs_switch *sw, struct vs_port *in, const uint8_t *src,
		  struct vs_port *out, const uint8_t *dst);
bool vs_chan_allowed(const struct vs_switch *sw, const struct vs_port *p,
		     uint16_t flags);
void vs_chan_restart(struct vs_switch *sw, struct vs_port *p);
void vs_chan_forget(struct vs_switch *sw, struct vs_port *p,
		    const uint8_t *mac);
bool vs_chan_holds(const struct vs_port *p, const uint8_t *mac);
struct vs_chan_info {
	const struct vs_port *port[2];
	uint8_t mac[2][6];		/* mac[i] sits behind port[i] */
	uint64_t age_s;
	unsigned int queues;		/* socket pairs: one per queue */
	unsigned int queued[2];		/* memory waiting for port[i]'s guest */
};
bool vs_chan_info(const struct vs_switch *sw, const struct vs_port *p,
		  unsigned int i, struct vs_chan_info *ci);
void vs_chan_closed(struct vs_switch *sw, struct vs_port *p,
		    const uint8_t *mac);
void vs_chan_requeue(struct vs_switch *sw, struct vs_port *p);

/* sock.c */
ssize_t vs_recv_rights(struct vs_switch *sw, int fd, void *buf, size_t len);
size_t vs_rx_slot(const struct vs_switch *sw);
void vs_rx_batch_init(struct vs_switch *sw, struct mmsghdr *mm,
		      struct iovec *iov, enum vs_dgram_sock sock, bool names);
int vs_listen_unix(struct vs_switch *sw, const char *path, int type,
		   unsigned int mode, long gid);
int vs_sockaddr_un(struct sockaddr_un *sa, socklen_t *len, const char *path);
int vs_fd_budget(const struct vs_config *cfg, unsigned long extra);
int vs_spare_open(void);
int vs_accept_fd(struct vs_switch *sw, int lfd);
bool vs_cred_allowed(const struct vs_config *cfg, const struct ucred *cred);
const struct ucred *vs_cmsg_cred(const struct msghdr *mh);
const struct ucred *vs_cred_effective(struct vs_switch *sw,
				      const struct ucred *kc,
				      struct ucred *out);
void vs_rights_init(struct vs_switch *sw);
unsigned long vs_rights_room(const struct vs_switch *sw);
int vs_refuse_rights(struct vs_switch *sw, int fd);
void vs_rights_take(struct vs_switch *sw, const struct msghdr *mh);
void vs_rights_close(struct vs_switch *sw, int fd);
int vs_allow_rights(struct vs_switch *sw, int fd);
void vs_cmsg_fds(struct vs_switch *sw, const struct cmsghdr *c);
void vs_rights_fini(struct vs_switch *sw);

/* unixdiag.c */
void vs_diag_open(struct vs_switch *sw);
void vs_diag_close(struct vs_switch *sw);
void vs_diag_refresh(struct vs_switch *sw);
bool vs_diag_reading(const struct vs_switch *sw, const struct vs_port *p);

/* vhost_port.c */
int vs_vhost_attach(struct vs_switch *sw, struct vs_port *p);
void vs_vhost_input(struct vs_switch *sw, struct vs_port *p);
void vs_vhost_kick(struct vs_switch *sw, struct vs_port *p, unsigned int q);
void vs_vhost_flush(struct vs_switch *sw, struct vs_port *p);
void vs_vhost_poll_busy(struct vs_switch *sw);
void vs_vhost_sweep(struct vs_switch *sw);
const void *vs_vhost_stats(const struct vs_port *p);
extern const struct vs_stat_desc vs_vhost_stat_desc[];
extern const unsigned int vs_vhost_stat_count;

/* mmsg.c / io_uring.c */
extern const struct vs_io_ops vs_io_mmsg;
extern const struct vs_io_ops vs_io_uring;

#endif /* VECSWITCH_H */
