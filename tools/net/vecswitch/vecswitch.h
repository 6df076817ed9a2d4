/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vecswitch.h - what every file of the vecswitch daemon shares: the
 * constants, the configuration, the switch's state, the loop and the I/O
 * backend interface, the switch's sockets (sock.c); and, by owner, in the
 * headers it includes: frame.h (buffers, queues, segmentation, forwarding,
 * the forwarding table), stats.h (the counters), port.h (ports, their
 * types' ops and their features' state), ctl.h (the control socket,
 * captures, the NAT process).  vhost.h is the vhost-user backend's own.
 *
 * Where a frame goes, file by file:
 *	mmsg.c, io_uring.c	wait for the sockets; take datagrams off them
 *	dgram.c, conn.c, tap.c,	a frame from its port, by the port's type
 *	vhost_port.c		(struct vs_port_ops: one a type, in its file)
 *	nego.c, chan.c		(negotiation messages; shortcut channels)
 *	mq.c			(a multiqueue guest's further sockets)
 *	forward.c		checks, learning (fdb.c) and the ports it goes to
 *	gso.c			cut for a port without virtio-net headers
 *	buf.c			stored once, queued on each of those ports
 *	loop.c			at the end of the loop turn, every queue is sent
 *				(flush_all), through its type's ops:
 *	dgram.c, conn.c,	by sendmmsg for the dgram ports, else as the
 *	tap.c, vhost_port.c	socket, tap or the guest's receive ring takes it
 * vhost_port.c, with vhost.c and virtq.c (vhost.h), takes a vhost-user
 * guest's frames out of its memory and puts frames into it.
 * Around it: main.c (start-up), loop.c (the loop: wait, dispatch, flush,
 * housekeeping), conf.c (the command line and its defaults),
 * stall.c (which dgram guests get no more until they read),
 * sock.c (the switch's sockets and who may use them), peer.c (where a
 * dgram port's frames go), ctl.c (the control socket; ctl_client.c is
 * `vecswitch ctl`), unixdiag.c (which guests read), nat.c (the NAT
 * process, tools/net/vecnat, for --nat).
 */
#ifndef VECSWITCH_H
#define VECSWITCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
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
/* MiB of guest memory --vhost-mem-max/-total may allow: 47 bits' worth */
#define VS_VH_MEM_MIB_MAX	(1u << 27)
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

/* --nat-* option and value pairs passed on: four options, 64 forwards */
#define VS_NAT_ARGS_MAX		(2 * (5 + 64))

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
	uint64_t vhost_mem_max;		/* MiB of guest memory one frontend */
	uint64_t vhost_mem_total;	/* and all of them together */
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
	/* --nat: option and value pairs for the NAT process (nat.c) */
	bool nat;
	const char *nat_args[VS_NAT_ARGS_MAX];
	unsigned int n_nat_args;
};

#include "frame.h"
#include "stats.h"
#include "port.h"
#include "ctl.h"

/* ---- the switch ----------------------------------------------------------- */

struct vs_switch;

/* What an I/O backend's wait found ready, for the loop to dispatch */
#define VS_READY_MAX	64
struct vs_ready {
	struct epoll_event ev[VS_READY_MAX];	/* the epoll set's */
	int n;
	bool more;		/* it stopped early: ask again without waiting */
};

/*
 * An I/O backend only waits and reports: it calls nothing in loop.c or
 * main.c, which reach it through these.
 */
struct vs_io_ops {
	const char *name;
	int (*init)(struct vs_switch *sw);
	void (*fini)(struct vs_switch *sw);
	/*
	 * wait up to @timeout_ms; the epoll set's ready events into @r, and
	 * the datagrams it reads itself (io_uring) handed to dgram.c as they
	 * come, at most VS_BATCH of them (then r->more) so that the loop can
	 * send what they forwarded before more come in.  < 0: error (errno)
	 */
	int (*wait)(struct vs_switch *sw, int timeout_ms, struct vs_ready *r);
};

/* The switch's own sockets, one for each option that names a path */
enum vs_listen {
	VS_LISTEN_DGRAM,		/* --dgram: every dgram port's frames */
	VS_LISTEN_VNET,			/* --vnet: --dgram's alias of before */
	VS_LISTEN_STREAM,		/* --stream */
	VS_LISTEN_SEQPACKET,		/* --seqpacket */
	VS_LISTEN_VHOST,		/* --vhost-user */
	VS_LISTEN_CTL,			/* --ctl */
	VS_LISTEN_NR,
};

struct vs_switch {
	struct vs_config cfg;
	const struct vs_io_ops *io;
	void *io_priv;

	int epfd;
	int sigfd;
	int listen_fd[VS_LISTEN_NR];	/* by enum vs_listen; -1: not asked for */
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
	unsigned int nev;		/* events clients (events.c) */
	uint64_t ctl_serial;		/* control clients so far */

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
	VS_EV_NAT,			/* the NAT process answered (nat.c) */
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
void vs_conf_defaults(struct vs_config *cfg);
void vs_conf_parse(struct vs_config *cfg, int argc, char **argv);
int vs_conf_lines(struct vs_config *cfg, const char *name, char *text,
		  size_t len, FILE *err);

/* loop.c */
void vs_loop_run(struct vs_switch *sw);

/* util.c */
uint64_t vs_now_ms(void);
void vs_log(const struct vs_switch *sw, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int vs_epoll_add(struct vs_switch *sw, int fd, uint64_t tag, uint32_t events);

/* sock.c */
ssize_t vs_recv_rights(struct vs_switch *sw, int fd, void *buf, size_t len);
size_t vs_rx_slot(const struct vs_switch *sw);
void vs_rx_batch_init(struct vs_switch *sw, struct mmsghdr *mm,
		      struct iovec *iov, enum vs_dgram_sock sock, bool names);
int vs_listen_check(struct vs_switch *sw, const char *path, int type);
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
void vs_close_later(struct vs_switch *sw, int fd);
int vs_allow_rights(struct vs_switch *sw, int fd);
void vs_cmsg_fds(struct vs_switch *sw, const struct cmsghdr *c);
void vs_rights_fini(struct vs_switch *sw);

/* The descriptor of the switch's datagram socket @sock */
static inline int vs_dgram_sock_fd(const struct vs_switch *sw,
				   enum vs_dgram_sock sock)
{
	return sock == VS_SOCK_VNET ? sw->listen_fd[VS_LISTEN_VNET] : sw->listen_fd[VS_LISTEN_DGRAM];
}

/* The switch's socket a dgram port's frames leave by */
static inline int vs_dgram_fd(const struct vs_switch *sw,
			      const struct vs_port *p)
{
	return vs_dgram_sock_fd(sw, p->dgram.sock);
}

/* mmsg.c / io_uring.c */
extern const struct vs_io_ops vs_io_mmsg;
extern const struct vs_io_ops vs_io_uring;

#endif /* VECSWITCH_H */
