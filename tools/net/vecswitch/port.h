/* SPDX-License-Identifier: GPL-2.0 */
/*
 * port.h - ports: what every port has, each port type's ops (struct
 * vs_port_ops) and the state each feature keeps on a port, and the files
 * that own them: port.c (a port's life), dgram.c, conn.c, tap.c and
 * vhost_port.c (the types), peer.c, nego.c, mq.c, chan.c, stall.c and
 * unixdiag.c (the dgram ports' features).
 * Included by vecswitch.h, after its constants and configuration; not
 * on its own.
 */
#ifndef VECSWITCH_PORT_H
#define VECSWITCH_PORT_H

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

struct vs_port;
struct vs_gso;
struct vs_stat_desc;

/*
 * What a port's type does for it.  Each type's file has one: dgram.c,
 * conn.c (stream, seqpacket), tap.c, vhost_port.c.  The rest of the
 * switch calls through it and never asks a port its type; only a type's
 * own files do (dgram.c and the dgram features it leads, peer.c, nego.c,
 * chan.c, mq.c, stall.c, unixdiag.c, look for dgram ports among all).
 * Hooks that may be NULL say what that means.
 */
struct vs_port_ops {
	const char *name;		/* of the type, as the control output shows it */
	bool uplink;			/* the tap: the switch's way out */
	bool takes_fds;			/* its connection may carry descriptors in */
	/* bytes of input buffer a port needs (NULL: none) */
	size_t (*rx_len)(const struct vs_switch *sw);
	/* once it is a port, before any event (NULL: nothing); < 0: fail */
	int (*attach)(struct vs_switch *sw, struct vs_port *p);
	/* its descriptor reported @events (NULL: it has none of its own) */
	void (*event)(struct vs_switch *sw, struct vs_port *p, uint32_t events);
	/* send what its queue holds, as far as its peer takes it now */
	void (*flush)(struct vs_switch *sw, struct vs_port *p);
	/*
	 * instead of flush at the end of a loop turn: every port of the type
	 * with frames queued, together (dgram: one sendmmsg for all)
	 */
	void (*flush_all)(struct vs_switch *sw);
	/* what it set up beside its descriptor goes (NULL: nothing) */
	void (*detach)(struct vs_switch *sw, struct vs_port *p);
	/* its descriptor goes (NULL: close()) */
	void (*close)(struct vs_switch *sw, struct vs_port *p);
	/* its name of the type for this port (NULL: name) */
	const char *(*show)(const struct vs_port *p);
	/* its peer stopped reading: hold frames back (NULL: never) */
	bool (*stalled)(struct vs_switch *sw, const struct vs_port *p);
	/* it takes a super-frame like @gso whole (NULL: every kind) */
	bool (*takes_gso)(const struct vs_port *p, const struct vs_gso *gso);
	/*
	 * send a frame (header first) now, straight from @iov, where nothing
	 * waits in its queue; false: it must take the queue (NULL: always)
	 */
	bool (*send_now)(struct vs_switch *sw, struct vs_port *p,
			 struct iovec *iov, unsigned int n, unsigned int len);
	/* its own counters, laid out as stat_desc says (NULL: none) */
	const void *(*stats)(const struct vs_port *p);
	const struct vs_stat_desc *stat_desc;
	unsigned int stat_count;
};

extern const struct vs_port_ops vs_dgram_ops;
extern const struct vs_port_ops vs_stream_ops;
extern const struct vs_port_ops vs_seqpacket_ops;
extern const struct vs_port_ops vs_tap_ops;
extern const struct vs_port_ops vs_vhost_ops;

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
	const struct vs_port_ops *ops;	/* what its type does for it */
	int fd;				/* -1 for dgram peers: they share sw->listen_fd[VS_LISTEN_DGRAM] */
	bool uplink;
	bool dead;			/* removed; freed at the end of the loop turn */
	bool want_out;			/* EPOLLOUT armed */
	bool detached;			/* its ops->detach ran */
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

/* port.c */
const char *vs_share_full(struct vs_switch *sw, uint32_t uid, int32_t pid);
struct vs_port *vs_port_new(struct vs_switch *sw,
			    const struct vs_port_ops *ops, int fd,
			    const char *name, const struct ucred *owner);
void vs_port_remove(struct vs_switch *sw, struct vs_port *p, const char *why);
const char *vs_port_type_name(const struct vs_port *p);
void vs_port_flush(struct vs_switch *sw, struct vs_port *p);
void vs_port_event(struct vs_switch *sw, struct vs_port *p, uint32_t events);
void vs_port_want_out(struct vs_switch *sw, struct vs_port *p, bool on);
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
void vs_dgram_port_age(struct vs_switch *sw);

/* conn.c */
void vs_accept(struct vs_switch *sw, int lfd, const struct vs_port_ops *ops);
void vs_stream_rx(struct vs_switch *sw, struct vs_port *p);

/* tap.c */
int vs_tap_open(struct vs_switch *sw, const char *ifname);
void vs_tap_mtu(struct vs_port *p);

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

/* stall.c */
bool vs_stall_dgram(struct vs_switch *sw, const struct vs_port *p);

/* unixdiag.c */
void vs_diag_open(struct vs_switch *sw);
void vs_diag_close(struct vs_switch *sw);
void vs_diag_refresh(struct vs_switch *sw);
bool vs_diag_reading(const struct vs_switch *sw, const struct vs_port *p);

/* vhost_port.c */
void vs_vhost_kick(struct vs_switch *sw, struct vs_port *p, unsigned int q);
void vs_vhost_poll_busy(struct vs_switch *sw);
void vs_vhost_sweep(struct vs_switch *sw);

/* Where dgram port @p's socket @k (0: its main one) is sent to */
static inline const struct sockaddr_un *vs_mq_dst(const struct vs_port *p,
						  unsigned int k,
						  socklen_t *len)
{
	const struct vs_pin *pin = k ? &p->mq.q[k - 1].pin : &p->dgram.pin;

	*len = pin->dstlen;
	return &pin->dst;
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

#endif /* VECSWITCH_PORT_H */
