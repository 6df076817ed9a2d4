/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vecnat.h - the NAT port of vecswitch: a process of its own that is one
 * datagram port of the switch and gives the guests behind it a gateway,
 * DHCP, DNS forwarding, IPv6 router advertisements and port forwards,
 * all through libslirp and the host's own sockets.
 *
 *	conf.c		the command line, addresses and forward specs
 *	vecnat.c	the socket to the switch, the poll loop, libslirp's
 *			callbacks, forwards added and removed
 *	guard.c		frames libslirp is not given
 *	offload.c	virtio-net headers: super-frames cut for libslirp,
 *			its segments joined into super-frames
 *	sandbox.c	privileges dropped and the seccomp filter
 */
#ifndef VECNAT_H
#define VECNAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>

#define ARRAY_LEN(a)	(sizeof(a) / sizeof((a)[0]))
#define NAT_FWD_MAX	64		/* port forwards at most */
#define NAT_SPEC_LEN	112		/* a forward spec, as the user wrote it */
#define NAT_FILES_MAX	4096		/* descriptors: the guests' connections */
#define NAT_VNET_HLEN	10		/* struct virtio_net_hdr, no num_buffers */
#define NAT_FRAME_MAX	65554		/* a frame, Ethernet header on */
#define NAT_SEGS_MAX	1024		/* pieces of one super-frame in */
#define NAT_GRO_SEGS	64		/* segments of one super-frame out */
#define NAT_GSO_MIN_SIZE 256		/* the smallest segment size joined */
/* exit statuses the switch reads: bad options, or setup failed */
#define NAT_EXIT_USAGE	2
#define NAT_EXIT_SETUP	3

struct nat_fwd {
	bool udp;
	bool v6;			/* host6 and guest6, not host and guest */
	struct in_addr host;
	uint16_t host_port;
	struct in_addr guest;
	uint16_t guest_port;
	struct in6_addr host6;
	struct in6_addr guest6;
};

struct nat_config {
	int fd;				/* datagram socket to the switch, -1 none */
	const char *connect_path;	/* or the switch's socket to connect to */
	int ready_fd;			/* written once running, -1 none */
	int ctl_fd;			/* forwards at run time, -1 none */
	struct in_addr net;
	struct in_addr mask;
	unsigned int prefix;
	struct in_addr gw;
	struct in_addr dns;
	struct in_addr dhcp_start;
	bool v6;
	struct in6_addr net6;
	struct in6_addr gw6;
	struct in6_addr dns6;
	bool host_loopback;
	bool again;			/* a restart: a forward that fails is left out */
	unsigned int nfwd;
	struct nat_fwd fwd[NAT_FWD_MAX];
	int verbose;
};

/* a super-frame being joined from libslirp's segments (offload.c) */
struct nat_gro {
	size_t len;			/* bytes of the frame held */
	unsigned int nseg;		/* segments in it; 0: it takes none */
	unsigned int mss;		/* payload of each, the last one's at most */
	unsigned int l4;		/* offset of the TCP header */
	uint32_t seq;			/* where the next segment must start */
	uint16_t id;			/* the next one's IPv4 ID */
	bool more;			/* it may take another segment */
	bool v6;
};

typedef void (*nat_emit_fn)(void *arg, uint8_t *frame, size_t len);

/* conf.c */
void nat_conf_parse(struct nat_config *cfg, int argc, char **argv);
const char *nat_fwd_parse(const struct nat_config *cfg, const char *spec,
			  struct nat_fwd *f);
const char *nat_fwd_check(const struct nat_config *cfg,
			  const struct nat_fwd *f);
void nat_fwd_str(const struct nat_fwd *f, char *out, size_t len);
int nat_fwd_find(const struct nat_config *cfg, const struct nat_fwd *f);

/* guard.c */
const char *nat_frame_check(const uint8_t *f, size_t len, uint64_t now);

/* offload.c */
const char *nat_vnet_in(const uint8_t *h, uint8_t *f, size_t len, bool whole,
			nat_emit_fn emit, void *arg);
void nat_gro_start(struct nat_gro *g, const uint8_t *frame, size_t len);
bool nat_gro_add(struct nat_gro *g, uint8_t *held, const uint8_t *f, size_t len);
void nat_gro_end(struct nat_gro *g, uint8_t *h, uint8_t *held);

/* sandbox.c */
int nat_sandbox(void);

#endif /* VECNAT_H */
