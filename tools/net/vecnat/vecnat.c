// SPDX-License-Identifier: GPL-2.0
/*
 * vecnat.c - the NAT port itself.  One datagram socket carries Ethernet
 * frames to and from the switch, one frame a datagram, as any dgram
 * guest's does; libslirp answers them as the guests' gateway and makes
 * their connections with this process's own sockets.  One poll() waits
 * for the switch's socket, libslirp's sockets, its timers and the
 * control socket (forwards at run time).
 *
 * At start it asks the switch for virtio-net headers as a UML guest does
 * (HELLO, then a MODE each way): with them a guest's TCP stream comes and
 * goes as super-frames of up to 64 KiB (offload.c).  A switch that does
 * not answer (vecswitch --hub) leaves the frames plain.
 *
 * Frames cross the switch's socket in batches both ways: a recvmmsg()
 * takes up to RX_BATCH, and what libslirp sends in a turn of the loop
 * waits in a queue, its TCP segments joined where they can be, that one
 * sendmmsg() empties before the loop sleeps.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <libslirp.h>
#include <linux/vecnet.h>
#include <linux/virtio_net.h>

#include "vecnat.h"

#define RX_BATCH	64		/* frames taken off the socket a turn */
#define TX_BATCH	64		/* frames held for one sendmmsg() */
#define SLOT		(NAT_VNET_HLEN + NAT_FRAME_MAX)
#define HELLO_TRIES	3		/* a second apart, then stay plain */
#define POLL_MAX	4096		/* descriptors libslirp may want watched */
#define TIMER_MAX	16
#define ANNOUNCE_MS	30000		/* keep the switch's table fresh */
#define SOCK_BUF	(4 << 20)
#define SEND_WAIT_MS	5		/* a full switch socket, then drop */

struct nat_timer {
	SlirpTimerCb cb;
	void *arg;
	int64_t expire_ms;		/* -1: not armed */
	bool used;
};

struct nat {
	struct nat_config cfg;
	Slirp *slirp;
	int fd;
	struct pollfd pfd[POLL_MAX];
	unsigned int npfd;
	struct nat_timer timer[TIMER_MAX];
	struct mmsghdr txm[TX_BATCH];	/* held frames, in order */
	struct iovec txv[TX_BATCH];
	size_t txlen[TX_BATCH];		/* each one's frame, header not counted */
	unsigned int txseg[TX_BATCH];	/* libslirp's frames in each */
	unsigned int ntx;
	struct nat_gro gro;		/* the last held frame, while it grows */
	bool growing;
	bool rx_vnet, tx_vnet;		/* headers agreed, each way */
	bool mode_due;			/* our MODE could not go yet */
	unsigned int hellos;		/* HELLOs sent */
	int64_t hello_ms;		/* when the last one went */
	uint64_t rx_frames, rx_refused, tx_frames, tx_dropped, guest_errors;
	uint64_t rx_gso, tx_gro;
	bool gone;			/* the switch is not there any more */
};

static volatile sig_atomic_t stop;

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- libslirp's callbacks ------------------------------------------------- */

static uint8_t tx_slot[TX_BATCH][SLOT];

/* the last held frame takes no more segments: its header is written */
static void tx_close(struct nat *n)
{
	unsigned int last = n->ntx - 1;

	if (!n->growing)
		return;
	n->growing = false;
	if (n->gro.nseg > 1)
		n->tx_gro++;
	nat_gro_end(&n->gro, tx_slot[last], tx_slot[last] + NAT_VNET_HLEN);
	n->txlen[last] = n->gro.len;
}

/* libslirp's frames in held frames @from to @to */
static uint64_t tx_segs(const struct nat *n, unsigned int from, unsigned int to)
{
	uint64_t c = 0;

	while (from < to)
		c += n->txseg[from++];
	return c;
}

static bool msg_send(struct nat *n, enum vecnet_msg_type type);

/*
 * Send the held frames to the switch, in order.  A full socket gets two
 * waits of SEND_WAIT_MS for room; what still does not fit is dropped
 * (TCP sends it again, a guest asks again).  Our MODE, if it could not
 * go when due, goes first: until it has, frames go plain.
 */
static void tx_flush(struct nat *n)
{
	unsigned int done = 0, i, skip;
	int tries = 0, r;

	if (n->mode_due && msg_send(n, VECNET_MSG_MODE)) {
		n->mode_due = false;
		n->tx_vnet = true;
	}
	skip = n->tx_vnet ? 0 : NAT_VNET_HLEN;
	tx_close(n);
	for (i = 0; i < n->ntx; i++) {
		n->txv[i] = (struct iovec){ tx_slot[i] + skip,
					    n->txlen[i] + NAT_VNET_HLEN - skip };
		n->txm[i] = (struct mmsghdr){
			.msg_hdr = { .msg_iov = &n->txv[i], .msg_iovlen = 1 } };
	}
	while (done < n->ntx) {
		struct pollfd p = { .fd = n->fd, .events = POLLOUT };

		r = sendmmsg(n->fd, n->txm + done, n->ntx - done, MSG_DONTWAIT);
		if (r > 0) {
			n->tx_frames += tx_segs(n, done, done + r);
			done += r;
			continue;
		}
		if (errno == ECONNREFUSED || errno == ENOTCONN) {
			n->gone = true;
			break;
		}
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != ENOBUFS) {
			/* that one frame cannot go (too large?): the rest can */
			n->tx_dropped += n->txseg[done++];
			continue;
		}
		if (++tries > 2)
			break;
		/* connected to the switch: POLLOUT comes once it has room */
		poll(&p, 1, SEND_WAIT_MS);
	}
	n->tx_dropped += tx_segs(n, done, n->ntx);
	n->ntx = 0;
}

/*
 * A frame from libslirp: joined to the last held one where it continues
 * it (headers agreed), else held for the next tx_flush
 */
static ssize_t cb_send(const void *buf, size_t len, void *opaque)
{
	struct nat *n = opaque;
	uint8_t *f;

	if (len > NAT_FRAME_MAX) {
		n->tx_dropped++;
		return len;
	}
	if (n->growing &&
	    nat_gro_add(&n->gro, tx_slot[n->ntx - 1] + NAT_VNET_HLEN, buf, len)) {
		n->txseg[n->ntx - 1]++;
		return len;
	}
	if (n->ntx == TX_BATCH)
		tx_flush(n);
	tx_close(n);
	f = tx_slot[n->ntx] + NAT_VNET_HLEN;
	memcpy(f, buf, len);
	memset(tx_slot[n->ntx], 0, NAT_VNET_HLEN);
	n->txlen[n->ntx] = len;
	n->txseg[n->ntx] = 1;
	n->ntx++;
	if (n->tx_vnet) {
		nat_gro_start(&n->gro, f, len);
		n->growing = n->gro.more;
	}
	return len;
}

static void cb_guest_error(const char *msg, void *opaque)
{
	struct nat *n = opaque;

	n->guest_errors++;
	if (n->cfg.verbose)
		fprintf(stderr, "vecnat: guest error: %s\n", msg);
}

static int64_t cb_clock(void *opaque)
{
	(void)opaque;
	return now_ns();
}

static void *cb_timer_new(SlirpTimerCb cb, void *arg, void *opaque)
{
	struct nat *n = opaque;
	unsigned int i;

	for (i = 0; i < TIMER_MAX; i++) {
		struct nat_timer *t = &n->timer[i];

		if (!t->used) {
			*t = (struct nat_timer){ cb, arg, -1, true };
			return t;
		}
	}
	fprintf(stderr, "vecnat: libslirp wants more than %d timers\n", TIMER_MAX);
	abort();
}

static void cb_timer_free(void *timer, void *opaque)
{
	struct nat_timer *t = timer;

	(void)opaque;
	t->used = false;
}

static void cb_timer_mod(void *timer, int64_t expire_ms, void *opaque)
{
	struct nat_timer *t = timer;

	(void)opaque;
	t->expire_ms = expire_ms;
}

/* libslirp's descriptors are found again by slirp_pollfds_fill each turn */
static void cb_fd(int fd, void *opaque)
{
	(void)fd;
	(void)opaque;
}

static void cb_notify(void *opaque)
{
	(void)opaque;
}

static const SlirpCb callbacks = {
	.send_packet		= cb_send,
	.guest_error		= cb_guest_error,
	.clock_get_ns		= cb_clock,
	.timer_new		= cb_timer_new,
	.timer_free		= cb_timer_free,
	.timer_mod		= cb_timer_mod,
	.register_poll_fd	= cb_fd,
	.unregister_poll_fd	= cb_fd,
	.notify			= cb_notify,
};

/* ---- polling ---------------------------------------------------------------- */

static int add_poll(int fd, int events, void *opaque)
{
	struct nat *n = opaque;
	struct pollfd *p;

	if (n->npfd == POLL_MAX)
		return -1;
	p = &n->pfd[n->npfd];
	p->fd = fd;
	p->events = (events & SLIRP_POLL_IN ? POLLIN : 0) |
		    (events & SLIRP_POLL_OUT ? POLLOUT : 0) |
		    (events & SLIRP_POLL_PRI ? POLLPRI : 0);
	p->revents = 0;
	return n->npfd++;
}

static int get_revents(int idx, void *opaque)
{
	struct nat *n = opaque;
	short r;

	if (idx < 0 || (unsigned int)idx >= n->npfd)
		return 0;
	r = n->pfd[idx].revents;
	return (r & POLLIN ? SLIRP_POLL_IN : 0) |
	       (r & POLLOUT ? SLIRP_POLL_OUT : 0) |
	       (r & POLLPRI ? SLIRP_POLL_PRI : 0) |
	       (r & POLLERR ? SLIRP_POLL_ERR : 0) |
	       (r & POLLHUP ? SLIRP_POLL_HUP : 0);
}

/* ms until the next armed timer, at most @t */
static uint32_t timers_due(struct nat *n, uint32_t t)
{
	int64_t now = now_ns() / 1000000;
	unsigned int i;

	for (i = 0; i < TIMER_MAX; i++) {
		const struct nat_timer *tm = &n->timer[i];

		if (!tm->used || tm->expire_ms < 0)
			continue;
		if (tm->expire_ms <= now)
			return 0;
		if (tm->expire_ms - now < t)
			t = tm->expire_ms - now;
	}
	return t;
}

static void timers_run(struct nat *n)
{
	int64_t now = now_ns() / 1000000;
	unsigned int i;

	for (i = 0; i < TIMER_MAX; i++) {
		struct nat_timer *tm = &n->timer[i];

		if (tm->used && tm->expire_ms >= 0 && tm->expire_ms <= now) {
			tm->expire_ms = -1;
			tm->cb(tm->arg);
		}
	}
}

/* A frame for libslirp, past the guard */
static void frame_in(void *arg, uint8_t *f, size_t len)
{
	struct nat *n = arg;
	const char *why = nat_frame_check(f, len, now_ns() / 1000000);

	if (why) {
		n->rx_refused++;
		if (n->cfg.verbose)
			fprintf(stderr, "vecnat: a frame refused: %s\n", why);
		return;
	}
	n->rx_frames++;
	slirp_input(n->slirp, f, len);
}

/*
 * A HELLO or MODE for the switch, straight out: nothing may pass it.
 * A full socket gets one wait of SEND_WAIT_MS; false if it did not go.
 */
static bool msg_send(struct nat *n, enum vecnet_msg_type type)
{
	struct pollfd p = { .fd = n->fd, .events = POLLOUT };
	int i;
	struct vecnet_msg m = {
		.version = VECNET_MSG_VERSION,
		.type = type,
		.mode = {
			.flags = htons(VECNET_MSG_F_VNET),
			.max_frame = htonl(NAT_FRAME_MAX),
		},
	};

	memcpy(m.magic, VECNET_MSG_MAGIC, VECNET_MSG_MAGIC_LEN);
	for (i = 0; i < 2; i++) {
		if (send(n->fd, &m, sizeof(m), MSG_DONTWAIT) == sizeof(m))
			return true;
		if (errno == ECONNREFUSED || errno == ENOTCONN) {
			n->gone = true;
			return false;
		}
		if (!i)
			poll(&p, 1, SEND_WAIT_MS);
	}
	return false;
}

/* Ask for headers, up to HELLO_TRIES times a second apart */
static void hello(struct nat *n)
{
	int64_t now = now_ns() / 1000000;

	/* a HELLO starts over plain: never once our MODE is due or sent */
	if (n->rx_vnet || n->tx_vnet || n->mode_due ||
	    n->hellos == HELLO_TRIES || (n->hellos && now - n->hello_ms < 1000))
		return;
	n->hellos++;
	n->hello_ms = now;
	msg_send(n, VECNET_MSG_HELLO);
}

/*
 * A message from the switch: its MODE says how its datagrams after it
 * come; the first that says headers is answered with ours, behind the
 * frames held in the old form.  Other messages are not for us.
 */
static void msg_in(struct nat *n, const uint8_t *buf)
{
	const struct vecnet_msg *m = (const void *)buf;

	if (m->version != VECNET_MSG_VERSION || m->type != VECNET_MSG_MODE)
		return;
	n->rx_vnet = ntohs(m->mode.flags) & VECNET_MSG_F_VNET;
	if (!n->rx_vnet || n->tx_vnet || n->mode_due)
		return;
	/* the frames held go plain, then ours; tx_flush tries again if need be */
	tx_flush(n);
	n->mode_due = true;
	tx_flush(n);
}

/* Frames from the switch, a batch of them, into libslirp */
static void frames_in(struct nat *n)
{
	static uint8_t bufs[RX_BATCH][SLOT];
	static struct iovec iov[RX_BATCH];
	static struct mmsghdr m[RX_BATCH];
	const char *why;
	int i, got;

	for (i = 0; i < RX_BATCH; i++) {
		iov[i] = (struct iovec){ bufs[i], SLOT };
		m[i] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &iov[i], .msg_iovlen = 1 } };
	}
	got = recvmmsg(n->fd, m, RX_BATCH, MSG_DONTWAIT, NULL);
	if (got < 0 && errno == ECONNREFUSED)
		n->gone = true;
	for (i = 0; i < got; i++) {
		uint8_t *buf = bufs[i];
		size_t len = m[i].msg_len;

		if (m[i].msg_hdr.msg_flags & MSG_TRUNC)
			continue;
		if (len == VECNET_MSG_LEN &&
		    !memcmp(buf, VECNET_MSG_MAGIC, VECNET_MSG_MAGIC_LEN)) {
			msg_in(n, buf);
			continue;
		}
		if (!n->rx_vnet) {
			if (len >= 14)
				frame_in(n, buf, len);
			continue;
		}
		/* no frame behind the header: not ours */
		if (len < NAT_VNET_HLEN + 14)
			continue;
		why = nat_vnet_in(buf, buf + NAT_VNET_HLEN, len - NAT_VNET_HLEN,
				  true, frame_in, n);
		if (!why && buf[1] != VIRTIO_NET_HDR_GSO_NONE)
			n->rx_gso++;
		if (why) {
			n->rx_refused++;
			if (n->cfg.verbose)
				fprintf(stderr, "vecnat: a frame refused: %s\n", why);
		}
	}
}

/* ---- the switch's table -------------------------------------------------- */

/*
 * A gratuitous ARP from the gateway's and the DNS forwarder's address: the
 * switch makes a port of this socket on its first frame and learns where
 * they are, before any guest asks.  libslirp's own frames come from
 * 52:55 followed by the IPv4 address they answer for.
 */
static void announce(struct nat *n, struct in_addr a)
{
	/* broadcast from 52:55:...: ARP, Ethernet, IPv4, 6 + 4 bytes, request */
	static const uint8_t head[22] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x52, 0x55, 0, 0, 0, 0,
		0x08, 0x06, 0x00, 0x01, 0x08, 0x00, 6, 4, 0x00, 0x01,
	};
	uint8_t f[42] = { 0 };

	memcpy(f, head, sizeof(head));
	memcpy(f + 8, &a, 4);
	memcpy(f + 22, f + 6, 6);
	memcpy(f + 28, &a, 4);
	memcpy(f + 38, &a, 4);
	cb_send(f, sizeof(f), n);
}

/* ---- forwards ---------------------------------------------------------------- */

/* @f's host and guest ends as socket addresses, IPv4 or IPv6 */
static socklen_t fwd_addrs(const struct nat_fwd *f, struct sockaddr_storage *h,
			   struct sockaddr_storage *g)
{
	if (f->v6) {
		*(struct sockaddr_in6 *)h = (struct sockaddr_in6){
			.sin6_family = AF_INET6, .sin6_addr = f->host6,
			.sin6_port = htons(f->host_port) };
		*(struct sockaddr_in6 *)g = (struct sockaddr_in6){
			.sin6_family = AF_INET6, .sin6_addr = f->guest6,
			.sin6_port = htons(f->guest_port) };
		return sizeof(struct sockaddr_in6);
	}
	*(struct sockaddr_in *)h = (struct sockaddr_in){
		.sin_family = AF_INET, .sin_addr = f->host,
		.sin_port = htons(f->host_port) };
	*(struct sockaddr_in *)g = (struct sockaddr_in){
		.sin_family = AF_INET, .sin_addr = f->guest,
		.sin_port = htons(f->guest_port) };
	return sizeof(struct sockaddr_in);
}

/* libslirp's flags for @f: an IPv6 forward listens on IPv6 alone */
static int fwd_flags(const struct nat_fwd *f)
{
	return (f->udp ? SLIRP_HOSTFWD_UDP : 0) |
	       (f->v6 ? SLIRP_HOSTFWD_V6ONLY : 0);
}

/*
 * Listen for forward @f; NULL, or why not.  The port is tried first
 * with a socket of our own, as libslirp will bind it, because libslirp
 * does not say why a listen failed.
 */
static const char *fwd_open(struct nat *n, const struct nat_fwd *f)
{
	struct sockaddr_storage h, g;
	socklen_t len = fwd_addrs(f, &h, &g);
	int one = 1, s, err = 0;

	s = socket(h.ss_family, (f->udp ? SOCK_DGRAM : SOCK_STREAM) | SOCK_CLOEXEC, 0);
	if (s < 0)
		return strerror(errno);
	if (!f->udp)
		setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (f->v6)
		setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(s, (struct sockaddr *)&h, len) < 0)
		err = errno;
	close(s);
	if (err == EADDRINUSE)
		return "the host port is in use";
	if (err)
		return strerror(err);
	if (slirp_add_hostxfwd(n->slirp, (struct sockaddr *)&h, len,
			       (struct sockaddr *)&g, len, fwd_flags(f)) < 0)
		return "libslirp could not listen on it";
	return NULL;
}

/* Stop listening for forward @f; -1 if libslirp had no such forward */
static int fwd_close(struct nat *n, const struct nat_fwd *f)
{
	struct sockaddr_storage h, g;
	socklen_t len = fwd_addrs(f, &h, &g);

	return slirp_remove_hostxfwd(n->slirp, (struct sockaddr *)&h, len,
				     fwd_flags(f));
}

/*
 * A request on the control socket, "add SPEC", "del SPEC" or "list",
 * answered with "ok" or "error: ..." (list: one forward a line),
 * "neighbors" (libslirp's ARP and NDP tables: the guests it knows, by
 * address and MAC), or "stats", answered with "stats" and the counters.
 * A request may start with a tag, "#SEQ ", which its answer starts with
 * too: the switch does not wait for an answer, and matches it by that.
 */
static void ctl_request(struct nat *n, char *req, char *out, size_t outlen)
{
	struct nat_config *cfg = &n->cfg;
	struct nat_fwd f;
	const char *why;
	unsigned int i;
	size_t used;
	int k;

	if (!strcmp(req, "stats")) {
		snprintf(out, outlen, "stats %llu %llu %llu %llu %llu %llu %llu",
			 (unsigned long long)n->rx_frames,
			 (unsigned long long)n->rx_refused,
			 (unsigned long long)n->tx_frames,
			 (unsigned long long)n->tx_dropped,
			 (unsigned long long)n->guest_errors,
			 (unsigned long long)n->rx_gso,
			 (unsigned long long)n->tx_gro);
		return;
	}
	if (!strcmp(req, "neighbors")) {
		char *t = slirp_neighbor_info(n->slirp);

		snprintf(out, outlen, "ok\n%s", t ? t : "");
		free(t);
		return;
	}
	if (!strcmp(req, "list")) {
		used = snprintf(out, outlen, "ok\n");
		for (i = 0; i < cfg->nfwd && used < outlen; i++) {
			nat_fwd_str(&cfg->fwd[i], out + used, outlen - used);
			used += strlen(out + used);
			used += snprintf(out + used, outlen - used, "\n");
		}
		return;
	}
	if (strncmp(req, "add ", 4) && strncmp(req, "del ", 4)) {
		snprintf(out, outlen, "error: unknown request");
		return;
	}
	why = nat_fwd_parse(cfg, req + 4, &f);
	k = why ? -1 : nat_fwd_find(cfg, &f);
	if (!why && req[0] == 'a') {
		if (k >= 0)
			why = "its host port is forwarded already";
		else if (cfg->nfwd == NAT_FWD_MAX)
			why = "too many forwards";
		else
			why = fwd_open(n, &f);
		if (!why)
			cfg->fwd[cfg->nfwd++] = f;
	} else if (!why) {
		if (k < 0 || memcmp(&cfg->fwd[k], &f, sizeof(f)))
			why = "no such forward";
		else if (fwd_close(n, &f) < 0)
			why = "libslirp has no such forward";
		else
			cfg->fwd[k] = cfg->fwd[--cfg->nfwd];
	}
	if (why)
		snprintf(out, outlen, "error: %s: %s", req + 4, why);
	else
		snprintf(out, outlen, "ok");
}

static void ctl_in(struct nat *n)
{
	char req[NAT_SPEC_LEN + 32], out[NAT_FWD_MAX * NAT_SPEC_LEN + 24];
	size_t tag = 0;
	ssize_t len;

	len = recv(n->cfg.ctl_fd, req, sizeof(req) - 1, MSG_DONTWAIT);
	/* the switch's end closed: it is gone (or we are an orphan) */
	if (!len)
		n->gone = true;
	if (len <= 0)
		return;
	req[len] = '\0';
	/* "#SEQ ": 1 to 10 digits, given back in front of the answer */
	if (req[0] == '#') {
		tag = 1 + strspn(req + 1, "0123456789");
		if (tag < 2 || tag > 11 || req[tag] != ' ') {
			snprintf(out, sizeof(out), "error: a bad tag");
			send(n->cfg.ctl_fd, out, strlen(out), MSG_DONTWAIT);
			return;
		}
		memcpy(out, req, ++tag);
	}
	ctl_request(n, req + tag, out + tag, sizeof(out) - tag);
	send(n->cfg.ctl_fd, out, strlen(out), MSG_DONTWAIT);
}

/* ---- start-up and the loop ------------------------------------------------- */

static int switch_socket(struct nat *n)
{
	const struct nat_config *cfg = &n->cfg;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int size = SOCK_BUF;

	if (cfg->fd >= 0) {
		n->fd = cfg->fd;
	} else {
		n->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (strlen(cfg->connect_path) >= sizeof(sa.sun_path)) {
			fprintf(stderr, "vecnat: --connect: path too long\n");
			return -1;
		}
		strcpy(sa.sun_path, cfg->connect_path);
		/* an abstract name of the kernel's choosing is the port's */
		if (n->fd < 0 ||
		    bind(n->fd, (struct sockaddr *)&sa, sizeof(sa_family_t)) < 0 ||
		    connect(n->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			fprintf(stderr, "vecnat: %s: %s\n", cfg->connect_path,
				strerror(errno));
			return -1;
		}
	}
	setsockopt(n->fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	setsockopt(n->fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
	return 0;
}

static int slirp_start(struct nat *n)
{
	struct nat_config *cfg = &n->cfg;
	SlirpConfig sc = {
		.version		= 4,
		.in_enabled		= true,
		.vnetwork		= cfg->net,
		.vnetmask		= cfg->mask,
		.vhost			= cfg->gw,
		.in6_enabled		= cfg->v6,
		.vprefix_addr6		= cfg->net6,
		.vprefix_len		= 64,
		.vhost6			= cfg->gw6,
		.vdhcp_start		= cfg->dhcp_start,
		.vnameserver		= cfg->dns,
		.vnameserver6		= cfg->dns6,
		.if_mtu			= 1500,
		.if_mru			= 1500,
		.disable_host_loopback	= !cfg->host_loopback,
	};
	unsigned int i;

	n->slirp = slirp_new(&sc, &callbacks, n);
	if (!n->slirp) {
		fprintf(stderr, "vecnat: libslirp did not start\n");
		return -1;
	}
	for (i = 0; i < cfg->nfwd; i++) {
		const char *why = fwd_open(n, &cfg->fwd[i]);
		char s[NAT_SPEC_LEN];

		if (!why)
			continue;
		nat_fwd_str(&cfg->fwd[i], s, sizeof(s));
		fprintf(stderr, "vecnat: --nat-forward %s: %s%s\n", s, why,
			cfg->again ? "; left out" : "");
		if (!cfg->again)
			return -1;
		/* the others still serve; the switch tries it at the next start */
		cfg->fwd[i--] = cfg->fwd[--cfg->nfwd];
	}
	return 0;
}

static int last_fd(const struct nat_config *cfg)
{
	int m = cfg->fd > cfg->ready_fd ? cfg->fd : cfg->ready_fd;

	return m > cfg->ctl_fd ? m : cfg->ctl_fd;
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void run(struct nat *n)
{
	int64_t next_announce = 0;

	while (!stop && !n->gone) {
		uint32_t timeout = 1000;
		unsigned int base;
		int r;

		hello(n);
		if (now_ns() / 1000000 >= next_announce) {
			announce(n, n->cfg.gw);
			announce(n, n->cfg.dns);
			next_announce = now_ns() / 1000000 + ANNOUNCE_MS;
		}
		n->npfd = 0;
		add_poll(n->fd, SLIRP_POLL_IN, n);
		if (n->cfg.ctl_fd >= 0)
			add_poll(n->cfg.ctl_fd, SLIRP_POLL_IN, n);
		base = n->npfd;
		slirp_pollfds_fill(n->slirp, &timeout, add_poll, n);
		timeout = timers_due(n, timeout);
		/* what the last turn made goes before the loop sleeps */
		tx_flush(n);
		r = poll(n->pfd, n->npfd, timeout);
		if (r < 0 && errno != EINTR) {
			fprintf(stderr, "vecnat: poll: %s\n", strerror(errno));
			break;
		}
		if (r > 0 && n->pfd[0].revents)
			frames_in(n);
		if (r > 0 && base == 2 && n->pfd[1].revents)
			ctl_in(n);
		slirp_pollfds_poll(n->slirp, r < 0, get_revents, n);
		timers_run(n);
	}
}

/*
 * Every way out is a socket of this process.  A sandbox that takes an
 * address family away (systemd's RestrictAddressFamilies, as the shipped
 * units have it) leaves the guests their leases and nothing beyond:
 * say so once, at the start, not through connections that fail unsaid.
 */
static void check_families(const struct nat *n)
{
	static const struct {
		int af;
		const char *name;
	} fam[] = { { AF_INET, "AF_INET" }, { AF_INET6, "AF_INET6" } };
	unsigned int i;

	for (i = 0; i < ARRAY_LEN(fam); i++) {
		int s;

		if (fam[i].af == AF_INET6 && !n->cfg.v6)
			continue;
		s = socket(fam[i].af, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (s >= 0) {
			close(s);
			continue;
		}
		/* a sandbox says so; anything else is said as it is */
		if (errno != EAFNOSUPPORT && errno != EPERM && errno != EACCES) {
			fprintf(stderr, "vecnat: cannot open %s sockets: %s\n",
				fam[i].name, strerror(errno));
			continue;
		}
		fprintf(stderr, "vecnat: cannot open %s sockets (%s): guests get addresses but reach nothing %s outside; a service's sandbox must allow the family (systemd: RestrictAddressFamilies=AF_INET AF_INET6, see \"Running as a service\" in vecswitch(8))\n",
			fam[i].name, strerror(errno),
			fam[i].af == AF_INET ? "IPv4" : "IPv6");
	}
}

int main(int argc, char **argv)
{
	static struct nat n = {
		.cfg = {
			.fd		= -1,
			.ready_fd	= -1,
			.ctl_fd		= -1,
			.prefix		= 24,
			.v6		= true,
			.net6		= { .s6_addr = { 0xfd } },	/* fd00:: */
		},
		.fd = -1,
	};
	struct sigaction sa = { .sa_handler = on_signal };

	n.cfg.net.s_addr = htonl(0x0a000200);		/* 10.0.2.0/24 */
	n.cfg.mask.s_addr = htonl(0xffffff00);
	nat_conf_parse(&n.cfg, argc, argv);
	/* descriptors the switch left open by mistake are not ours */
	if (n.cfg.fd >= 0)
		close_range(last_fd(&n.cfg) + 1, ~0u, 0);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (switch_socket(&n) < 0 || slirp_start(&n) < 0)
		return NAT_EXIT_SETUP;
	check_families(&n);
	if (nat_sandbox() < 0)
		return NAT_EXIT_SETUP;
	/* the switch died before the parent-death signal was set */
	if (n.cfg.fd >= 0 && getppid() == 1)
		_exit(0);
	/* nobody may read it (a restart): that is no error */
	if (n.cfg.ready_fd >= 0) {
		if (write(n.cfg.ready_fd, "r", 1) < 0 && n.cfg.verbose)
			fprintf(stderr, "vecnat: ready: %s\n", strerror(errno));
		close(n.cfg.ready_fd);
	}
	if (n.cfg.verbose)
		fprintf(stderr, "vecnat: running, libslirp %s\n",
			slirp_version_string());
	run(&n);
	if (n.cfg.verbose || n.gone)
		fprintf(stderr, "vecnat: %s; %llu frames in (%llu refused), %llu out, %llu dropped\n",
			n.gone ? "the switch is gone" : "stopping",
			(unsigned long long)n.rx_frames,
			(unsigned long long)n.rx_refused,
			(unsigned long long)n.tx_frames,
			(unsigned long long)n.tx_dropped);
	/*
	 * No slirp_cleanup() and no exit handlers: the kernel frees it all,
	 * and a sanitizer's leak check would need calls the filter forbids
	 */
	_exit(0);
}
