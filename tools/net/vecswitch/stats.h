/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stats.h - the counters: each port's, its queues', the switch's, and the
 * tables that name them for ctl stats (ctl.c).
 * Included by vecswitch.h, after its constants and configuration; not
 * on its own.
 */
#ifndef VECSWITCH_STATS_H
#define VECSWITCH_STATS_H

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
	uint64_t vhost_mapped;		/* bytes of guest memory mapped, all
					 * vhost-user frontends together */
	uint64_t vhost_mem_refused;	/* memory tables beyond --vhost-mem-max
					 * or --vhost-mem-total */
	uint64_t vhost_direct;		/* vhost-user frames sent from guest
					 * memory, with no copy in the switch */
	/*
	 * Frame accounting: every frame meant for a port, and the sent,
	 * dropped and queued frames of ports since removed. tx_wanted equals
	 * tx_retired plus vs_port_tx_done() over the live ports.
	 */
	uint64_t tx_wanted;
	uint64_t tx_retired;
	uint64_t nat_starts;		/* NAT processes started (nat.c) */
	uint64_t nat_deaths;		/* and those that died */
	/* the NAT processes' own, as of their last answer (nat.c) */
	uint64_t nat_rx_frames;		/* frames given to libslirp */
	uint64_t nat_rx_refused;	/* and kept from it (vecnat's guard.c) */
	uint64_t nat_tx_frames;		/* frames libslirp sent */
	uint64_t nat_tx_dropped;	/* and dropped: the switch's socket full */
	uint64_t nat_guest_errors;	/* what libslirp called guest errors */
	uint64_t nat_rx_gso;		/* super-frames it cut or took whole */
	uint64_t nat_tx_gro;		/* super-frames it joined for the switch */
};

extern const struct vs_stat_desc vs_sw_stat_desc[];
extern const unsigned int vs_sw_stat_count;

#endif /* VECSWITCH_STATS_H */
