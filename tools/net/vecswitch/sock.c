// SPDX-License-Identifier: GPL-2.0
/*
 * sock.c - the switch's own unix sockets on the file system: path checks,
 * stale socket recovery, binding with restrictive permissions from the
 * start, then the configured mode and group; the descriptors they and
 * the ports need, and accepting connections without ever running out;
 * the credentials of the senders on them, against --allow-uid and
 * --allow-gid; the descriptors nobody may send them; and the scratch
 * memory their batches of datagrams are received into.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "vecswitch.h"

/*
 * Large enough that peers which stop reading cannot starve the others: each
 * holds up to max_dgram_qlen unread datagrams charged to this one buffer
 * (512 jumbo frames are ~5 MiB). Only what is in flight is charged.
 */
#define DGRAM_SNDBUF	(32 << 20)
#define DGRAM_RCVBUF	(4 << 20)
#define LISTEN_BACKLOG	64
/* the closer's pipe, if the kernel grants it: descriptor numbers it holds */
#define CLOSER_PIPE	(1 << 20)

/* Linux 6.16; older headers lack the name */
#ifndef SO_PASSRIGHTS
#define SO_PASSRIGHTS	83
#endif

int vs_sockaddr_un(struct sockaddr_un *sa, socklen_t *len, const char *path)
{
	size_t n = strlen(path);

	if (!n || n >= sizeof(sa->sun_path))
		return -1;
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	memcpy(sa->sun_path, path, n);
	*len = offsetof(struct sockaddr_un, sun_path) + n + 1;
	return 0;
}

/*
 * A socket file left by a switch that died is removed; one that still
 * answers, or any other kind of file, is left alone and is an error.
 */
static int clear_stale(struct vs_switch *sw, const char *path, int type,
		       const struct sockaddr_un *sa, socklen_t len)
{
	struct stat stb;
	int fd, r, err;

	if (lstat(path, &stb) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(stb.st_mode))
		return -EEXIST;
	fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* whoever answers there must not be able to send us descriptors */
	if (vs_refuse_rights(sw, fd) < 0) {
		err = errno;
		close(fd);
		return -err;
	}
	r = connect(fd, (const struct sockaddr *)sa, len);
	err = errno;
	close(fd);
	if (r == 0 || err != ECONNREFUSED)
		return -EADDRINUSE;
	return unlink(path) < 0 ? -errno : 0;
}

static void set_buf(int fd, int force, int plain, int size)
{
	/* FORCE passes the wmem_max cap when we have CAP_NET_ADMIN */
	if (setsockopt(fd, SOL_SOCKET, force, &size, sizeof(size)) < 0)
		setsockopt(fd, SOL_SOCKET, plain, &size, sizeof(size));
}

/*
 * @path is free for a socket of @type: nothing there, or a stale socket
 * (removed); otherwise said why not, -1.  main.c asks this of every path
 * before it makes the first, so that a refused start leaves no socket.
 */
int vs_listen_check(struct vs_switch *sw, const char *path, int type)
{
	struct sockaddr_un sa;
	socklen_t len;
	int r;

	if (vs_sockaddr_un(&sa, &len, path) < 0) {
		fprintf(stderr, "vecswitch: %s: path empty or longer than %zu bytes\n",
			path, sizeof(sa.sun_path) - 1);
		return -1;
	}
	r = clear_stale(sw, path, type, &sa, len);
	if (r < 0) {
		fprintf(stderr, "vecswitch: %s: %s\n", path,
			r == -EEXIST ? "exists and is not a socket" :
			r == -EADDRINUSE ? "in use by a running switch" :
			strerror(-r));
		return -1;
	}
	return 0;
}

int vs_listen_unix(struct vs_switch *sw, const char *path, int type,
		   unsigned int mode, long gid)
{
	struct sockaddr_un sa;
	socklen_t len;
	int fd, r, one = 1;
	mode_t old;

	if (vs_listen_check(sw, path, type) < 0 ||
	    vs_sockaddr_un(&sa, &len, path) < 0)
		return -1;
	fd = socket(AF_UNIX, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto err;
	/* before anyone can send: accepted connections inherit it */
	if (vs_refuse_rights(sw, fd) < 0)
		goto err_close;

	/* nobody else may connect before the final mode is in place */
	old = umask(0177);
	r = bind(fd, (struct sockaddr *)&sa, len);
	umask(old);
	if (r < 0)
		goto err_close;
	if (chmod(path, mode) < 0)
		goto err_unlink;
	if (gid >= 0 && chown(path, -1, (gid_t)gid) < 0)
		goto err_unlink;
	if (type == SOCK_DGRAM) {
		/*
		 * every datagram then carries its sender's SCM_CREDENTIALS:
		 * for --allow-*, and for the owner check of peer.c
		 */
		if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0)
			goto err_unlink;
		set_buf(fd, SO_SNDBUFFORCE, SO_SNDBUF, DGRAM_SNDBUF);
		set_buf(fd, SO_RCVBUFFORCE, SO_RCVBUF, DGRAM_RCVBUF);
	} else if (listen(fd, LISTEN_BACKLOG) < 0) {
		goto err_unlink;
	}
	return fd;

err_unlink:
	r = errno;
	unlink(path);
	errno = r;
err_close:
	r = errno;
	close(fd);
	errno = r;
err:
	fprintf(stderr, "vecswitch: %s: %s\n", path, strerror(errno));
	return -1;
}

/*
 * Descriptors the switch may hold at once: its own (epoll, signals,
 * five sockets, diagnostics, io_uring, the spare, the standard three,
 * the closer's pipe, the control clients), two per port (a dgram peer's
 * pinned socket file and its wake-up probe; one for a connection), one
 * per queue of a shortcut channel (chan.c), of which two ports share
 * each, and one per queue socket a multiqueue guest may join to its port
 * (mq.c).
 */
static unsigned long fds_needed(const struct vs_config *cfg)
{
	return 24 + VS_CTL_MAX_CONN +
	       (2ul + VS_CHAN_PORT_MAX / 2 * VS_MQ_MAX + VS_MQ_MAX - 1) *
	       cfg->max_ports;
}

/*
 * Raise the open-file limit to what --max-ports needs, or say why it
 * cannot be done: a switch that runs out of descriptors later cannot
 * accept, pin or probe, and would refuse guests at random.  @extra more
 * are asked for as far as the hard limit goes (vs_rights_room).
 */
int vs_fd_budget(const struct vs_config *cfg, unsigned long extra)
{
	unsigned long need = fds_needed(cfg);
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur >= need + extra)
		return 0;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need) {
		fprintf(stderr,
			"vecswitch: --max-ports %u needs %lu open files, but the limit is %lu (ulimit -n); lower --max-ports or raise the limit\n",
			cfg->max_ports, need, (unsigned long)rl.rlim_max);
		return -1;
	}
	rl.rlim_cur = need + extra;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_cur > rl.rlim_max)
		rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
		fprintf(stderr, "vecswitch: cannot raise the open-file limit to %lu: %s\n",
			need, strerror(errno));
		return -1;
	}
	return 0;
}

/* A descriptor held in reserve, given up to shed a connection (below) */
int vs_spare_open(void)
{
	return eventfd(0, EFD_CLOEXEC);
}

/*
 * accept4() on a listener of ours.  Out of descriptors all the same
 * (EMFILE, ENFILE: the system's table, or a limit lowered under us), the
 * connection would stay queued and the level-triggered listener would
 * wake the loop for it again and again: the spare descriptor is given up
 * for a moment to take the connection and close it (accept_shed, said
 * at most once a second).  Returns the descriptor, or -1.
 */
int vs_accept_fd(struct vs_switch *sw, int lfd)
{
	int fd, err;

	fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd >= 0 || (errno != EMFILE && errno != ENFILE))
		return fd;
	err = errno;
	sw->st.accept_shed++;
	if (sw->spare_fd >= 0) {
		close(sw->spare_fd);
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0)
			close(fd);
		sw->spare_fd = vs_spare_open();
	}
	if (!sw->now_ms || sw->now_ms >= sw->shed_log_ms + 1000) {
		sw->shed_log_ms = sw->now_ms;
		vs_log(sw, 0, "out of descriptors (%s): connection closed at once",
		       strerror(err));
	}
	errno = EAGAIN;
	return -1;
}

/* ---- sender credentials ------------------------------------------------ */

_Static_assert(sizeof(((struct vs_switch *)0)->rxctl[0]) >=
	       CMSG_SPACE(sizeof(struct ucred)) +
	       CMSG_SPACE(VS_FDS_MAX * sizeof(int)),
	       "rxctl too small for credentials and descriptors");

/* --allow-uid or --allow-gid given: every sender must show credentials. */
static bool vs_cred_check(const struct vs_config *cfg)
{
	return cfg->n_allow_uid || cfg->n_allow_gid;
}

static bool id_listed(const uint32_t *ids, unsigned int n, uint32_t id)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

/*
 * A sender may attach when its uid is in --allow-uid or its gid (the
 * primary one: the kernel passes no other) is in --allow-gid. No
 * credentials at all, with checks on, is a refusal.
 */
bool vs_cred_allowed(const struct vs_config *cfg, const struct ucred *cred)
{
	if (!vs_cred_check(cfg))
		return true;
	if (!cred)
		return false;
	return id_listed(cfg->allow_uid, cfg->n_allow_uid, cred->uid) ||
	       id_listed(cfg->allow_gid, cfg->n_allow_gid, cred->gid);
}

/*
 * Read the real, effective and saved uid (or gid) of a /proc status line
 * "Uid:\t<real>\t<effective>\t<saved>\t<fs>"
 */
static bool status_ids(const char *buf, const char *key, unsigned long id[3])
{
	const char *p = strstr(buf, key);

	return p && sscanf(p + strlen(key), "%lu %lu %lu", &id[0], &id[1],
			   &id[2]) == 3;
}

/* The effective ids of process @pid, provided it holds @kc's as well */
static bool proc_effective(const struct ucred *kc, struct ucred *out)
{
	unsigned long uid[3], gid[3];
	char path[64], buf[2048];
	ssize_t n;
	int fd;

	if (kc->pid <= 0)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)kc->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	if (!status_ids(buf, "\nUid:", uid) || !status_ids(buf, "\nGid:", gid))
		return false;
	/* the ids stamped on the datagram are among the process's own */
	if ((kc->uid != uid[0] && kc->uid != uid[1] && kc->uid != uid[2]) ||
	    (kc->gid != gid[0] && kc->gid != gid[1] && kc->gid != gid[2]))
		return false;
	out->pid = kc->pid;
	out->uid = uid[1];
	out->gid = gid[1];
	return true;
}

/*
 * A datagram's sender, as a connection's is seen (SO_PEERCRED): by its
 * effective ids.  The kernel stamps a datagram with the sender's real ids
 * (or others of its own it names), so they are looked up in /proc by the
 * pid stamped with them, and remembered for VS_CRED_CACHE_MS.  Where the
 * switch cannot see the process (it has exited, or lives in a pid
 * namespace the switch's /proc does not show), the stamped ids stand
 * (cred_unseen): the process holds them too, so they give it nothing it
 * does not have.  Returns @out, or NULL when @kc is.
 */
const struct ucred *vs_cred_effective(struct vs_switch *sw,
				      const struct ucred *kc,
				      struct ucred *out)
{
	typeof(sw->credc[0]) *c;

	if (!kc)
		return NULL;
	c = &sw->credc[(unsigned int)kc->pid % VS_CRED_CACHE];
	if (c->ms && sw->now_ms - c->ms < VS_CRED_CACHE_MS &&
	    c->kernel.pid == kc->pid && c->kernel.uid == kc->uid &&
	    c->kernel.gid == kc->gid) {
		*out = c->eff;
		return out;
	}
	if (!proc_effective(kc, out)) {
		sw->st.cred_unseen++;
		*out = *kc;
		return out;
	}
	c->kernel = *kc;
	c->eff = *out;
	c->ms = sw->now_ms ? sw->now_ms : 1;
	return out;
}

/* The SCM_CREDENTIALS a received message carries, or NULL. */
const struct ucred *vs_cmsg_cred(const struct msghdr *mh)
{
	struct cmsghdr *c;

	if (mh->msg_flags & MSG_CTRUNC)
		return NULL;
	for (c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR((struct msghdr *)mh, c))
		if (c->cmsg_level == SOL_SOCKET &&
		    c->cmsg_type == SCM_CREDENTIALS &&
		    c->cmsg_len >= CMSG_LEN(sizeof(struct ucred)))
			return (const struct ucred *)CMSG_DATA(c);
	return NULL;
}

/* ---- descriptors sent to the switch ---------------------------------------- */

/*
 * A file whose last reference is dropped by the switch is released on the
 * switch's thread: a TCP socket with SO_LINGER and data its peer never
 * takes holds the loop for its linger time.  Anyone who can reach one of
 * our sockets could hand us such a file (SCM_RIGHTS), and a receive with
 * no room for descriptors drops them inside the call.  So every socket
 * the switch reads refuses descriptors (SO_PASSRIGHTS off, Linux 6.16:
 * the sender gets EPERM).  Where the kernel cannot do that, what arrives
 * is taken with room for a whole message's worth and closed by a thread
 * of its own, the closer.
 */

_Static_assert(VS_FDS_MAX * sizeof(int) <= PIPE_BUF,
	       "one message's descriptors must fit one atomic pipe write");

/* Said once: the kernel lets descriptors through */
static void rights_passed(struct vs_switch *sw, const char *why)
{
	sw->rights.passed = true;
	vs_log(NULL, 0, "no SO_PASSRIGHTS (%s): descriptors sent to the switch are taken and closed on a thread of their own",
	       why);
}

/*
 * Whether the kernel can refuse descriptors; VECSWITCH_TEST_NO_PASSRIGHTS=1,
 * for the selftests alone, says it cannot.
 */
void vs_rights_init(struct vs_switch *sw)
{
	const char *test = getenv("VECSWITCH_TEST_NO_PASSRIGHTS");
	int fd;

	if (test && !strcmp(test, "1")) {
		rights_passed(sw, "VECSWITCH_TEST_NO_PASSRIGHTS");
		return;
	}
	/* a failure here is the listeners' to report */
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	vs_refuse_rights(sw, fd);
	close(fd);
}

/*
 * Descriptors that may reach the switch before it can hand them on: a
 * full message in each buffer of one receive, for vs_fd_budget.
 */
unsigned long vs_rights_room(const struct vs_switch *sw)
{
	if (!sw->rights.passed)
		return 0;
	return (unsigned long)VS_FDS_MAX *
	       (sw->cfg.no_uring ? VS_BATCH : VS_URING_BUFS);
}

/*
 * SO_PASSRIGHTS off on a socket the switch reads, before anyone can send
 * to it.  0 also where the kernel lacks the option (ENOPROTOOPT; EINVAL
 * from some); -1 on other errors.
 */
int vs_refuse_rights(struct vs_switch *sw, int fd)
{
	int off = 0;

	if (sw->rights.passed)
		return 0;
	if (setsockopt(fd, SOL_SOCKET, SO_PASSRIGHTS, &off, sizeof(off)) == 0)
		return 0;
	if (errno != ENOPROTOOPT && errno != EINVAL)
		return -1;
	rights_passed(sw, strerror(errno));
	return 0;
}

/*
 * The closer: closes the descriptors whose numbers come down its pipe.
 * Every write is a whole number of them and every read asks for one, so
 * a read never ends inside a number.
 */
static void *closer_main(void *arg)
{
	int rfd = (int)(intptr_t)arg, fds[VS_FDS_MAX];
	ssize_t n, i;

	for (;;) {
		n = read(rfd, fds, sizeof(fds));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (i = 0; i < n / (ssize_t)sizeof(int); i++)
			close(fds[i]);
	}
	close(rfd);
	return NULL;
}

static int closer_start(struct vs_switch *sw)
{
	sigset_t all, old;
	pthread_t t;
	int p[2], err;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	/* only the loop's end waits for nothing */
	if (fcntl(p[1], F_SETFL, O_NONBLOCK) < 0)
		goto err;
	/* room for more numbers where allowed, else the default 64 KiB */
	(void)fcntl(p[1], F_SETPIPE_SZ, CLOSER_PIPE);
	/* the signals are the loop's (signalfd): the thread takes none */
	sigfillset(&all);
	err = pthread_sigmask(SIG_SETMASK, &all, &old);
	if (!err) {
		err = pthread_create(&t, NULL, closer_main,
				     (void *)(intptr_t)p[0]);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	if (err) {
		errno = err;
		goto err;
	}
	sw->rights.wfd = p[1];
	sw->rights.closer = true;
	return 0;
err:
	err = errno;
	close(p[0]);
	close(p[1]);
	errno = err;
	return -1;
}

/*
 * Hand @n descriptors to the closer: NULL, or why it cannot take them
 * (the pipe is full: the closer is held up by a close that waits; or
 * there is no closer), and then they are still open, the caller's.  A
 * write is all or nothing.
 */
static const char *closer_send(struct vs_switch *sw, const int *fds,
			       unsigned int n)
{
	ssize_t r;

	if (!sw->rights.closer && closer_start(sw) < 0)
		return strerror(errno);
	for (;;) {
		r = write(sw->rights.wfd, fds, n * sizeof(int));
		if (r >= 0)
			return NULL;
		if (errno != EINTR)
			return errno == EAGAIN ? "its pipe is full" :
			       strerror(errno);
	}
}

/*
 * @n descriptors the switch was sent, at @data (unaligned): counted, and
 * their numbers written to the closer; where it cannot take them, the
 * loop closes them itself (rx_fds_inline).
 */
static void fds_close(struct vs_switch *sw, const uint8_t *data,
		      unsigned int n)
{
	int fds[VS_FDS_MAX];
	const char *why;
	unsigned int i;

	memcpy(fds, data, n * sizeof(int));
	sw->st.rx_fds += n;
	why = closer_send(sw, fds, n);
	if (why) {
		sw->st.rx_fds_inline += n;
		for (i = 0; i < n; i++)
			close(fds[i]);
	}
	if (sw->now_ms && sw->now_ms < sw->rights.log_ms + 1000)
		return;
	sw->rights.log_ms = sw->now_ms;
	if (why)
		vs_log(sw, 0, "descriptors sent to the switch: %u closed on its own thread (rx_fds_inline); closer: %s",
		       n, why);
	else
		vs_log(sw, 0, "descriptors sent to the switch: %u handed to the closer (rx_fds)",
		       n);
}

/*
 * A descriptor of the switch's own whose close may release others the
 * switch never took (a connection with descriptors queued in it): closed
 * by the closer, or here if it cannot be.  It leaves the loop's epoll set
 * now, not when the closer gets to it: its events must not reach a port
 * that takes its slot.
 */
void vs_close_later(struct vs_switch *sw, int fd)
{
	if (sw->epfd >= 0)
		epoll_ctl(sw->epfd, EPOLL_CTL_DEL, fd, NULL);
	if (closer_send(sw, &fd, 1))
		close(fd);
}

/* The descriptors in one control message, if it carries any */
void vs_cmsg_fds(struct vs_switch *sw, const struct cmsghdr *c)
{
	const uint8_t *data = CMSG_DATA(c);
	size_t n, k;

	if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
	    c->cmsg_len < CMSG_LEN(0))
		return;
	/* never more than VS_FDS_MAX, unless a kernel changes its mind */
	for (n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); n; n -= k) {
		k = n < VS_FDS_MAX ? n : VS_FDS_MAX;
		fds_close(sw, data, k);
		data += k * sizeof(int);
	}
}

/*
 * The vhost-user listener takes descriptors (connections inherit it):
 * they are what the protocol hands over, each checked for its kind.
 */
int vs_allow_rights(struct vs_switch *sw, int fd)
{
	int on = 1;

	if (sw->rights.passed)
		return 0;
	return setsockopt(fd, SOL_SOCKET, SO_PASSRIGHTS, &on, sizeof(on));
}

/* One descriptor a vhost-user frontend sent that the switch does not keep */
void vs_rights_close(struct vs_switch *sw, int fd)
{
	fds_close(sw, (const uint8_t *)&fd, 1);
}

/*
 * After every receive with room for control data: the descriptors that
 * came, and whether the kernel cut some (it closed those itself).
 */
void vs_rights_take(struct vs_switch *sw, const struct msghdr *mh)
{
	struct cmsghdr *c;

	if (mh->msg_flags & MSG_CTRUNC)
		sw->st.rx_ctrunc++;
	for (c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR((struct msghdr *)mh, c))
		vs_cmsg_fds(sw, c);
}

/* The closer ends when its pipe does; a close it waits in ends with us */
void vs_rights_fini(struct vs_switch *sw)
{
	if (!sw->rights.closer)
		return;
	close(sw->rights.wfd);
	sw->rights.closer = false;
}

/*
 * Read what a connected peer sent on @fd into @buf, with room for
 * descriptors where the kernel lets them through: those go to the closer
 * thread (vs_rights_take), never closed here, where a close could block.
 */
ssize_t vs_recv_rights(struct vs_switch *sw, int fd, void *buf, size_t len)
{
	uint64_t ctl[VS_RX_CMSG_WORDS];
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr mh = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctl,
		.msg_controllen = sizeof(ctl),
	};
	ssize_t r;

	r = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (r >= 0)
		vs_rights_take(sw, &mh);
	return r;
}

/* ---- receive batches ------------------------------------------------- */

/*
 * Room for one datagram of the --dgram socket: a super-frame with its
 * header from a port that negotiated headers, unless the switch is a hub
 * (it does not negotiate). A frame over --max-frame is refused later.
 */
size_t vs_rx_slot(const struct vs_switch *sw)
{
	size_t vnet = VS_VNET_HDR_LEN + VS_VNET_FRAME_MAX;

	if (sw->cfg.hub || sw->cfg.max_frame > vnet)
		return sw->cfg.max_frame;
	return vnet;
}

/*
 * Point a recvmmsg batch at the rx scratch memory of datagram socket
 * @sock, with room for control data: credentials, and descriptors where
 * the kernel lets them through (vs_rights_take).
 */
void vs_rx_batch_init(struct vs_switch *sw, struct mmsghdr *mm,
		      struct iovec *iov, enum vs_dgram_sock sock, bool names)
{
	bool vnet_sock = sock == VS_SOCK_VNET;
	size_t slot = vnet_sock ? VS_VNET_HDR_LEN + VS_VNET_FRAME_MAX :
		      vs_rx_slot(sw);
	uint8_t *mem = vnet_sock ? sw->vnet_rxmem : sw->rxmem;
	int i;

	memset(mm, 0, VS_BATCH * sizeof(*mm));
	for (i = 0; i < VS_BATCH; i++) {
		iov[i].iov_base = mem + i * slot;
		iov[i].iov_len = slot;
		mm[i].msg_hdr.msg_iov = &iov[i];
		mm[i].msg_hdr.msg_iovlen = 1;
		mm[i].msg_hdr.msg_control = sw->rxctl[i];
		mm[i].msg_hdr.msg_controllen = sizeof(sw->rxctl[i]);
		if (names) {
			mm[i].msg_hdr.msg_name = &sw->rxaddr[i];
			mm[i].msg_hdr.msg_namelen = sizeof(sw->rxaddr[i]);
		}
	}
}
