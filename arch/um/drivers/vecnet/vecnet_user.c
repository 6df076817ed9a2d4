// SPDX-License-Identifier: GPL-2.0
/*
 * vecnet: host side.  Socket setup and the batched receive and send
 * calls, built against the host C library.  Nothing here blocks: every
 * socket is non-blocking and every call returns at once.
 */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include "vecnet_user.h"

/* Linux 6.16; the C library's headers may predate it */
#ifndef SO_PASSRIGHTS
#define SO_PASSRIGHTS	83
#endif

static int unix_addr(struct sockaddr_un *sun, const char *path)
{
	size_t len = strlen(path);

	if (!len || len >= sizeof(sun->sun_path))
		return -ENAMETOOLONG;
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	memcpy(sun->sun_path, path, len);
	return 0;
}

/*
 * A socket file left behind by a guest that was killed refuses
 * connections; one that a live process holds accepts them.  Only the
 * first kind may be replaced.
 */
static int unix_path_stale(const struct sockaddr_un *sun)
{
	int fd, ret;

	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	ret = connect(fd, (const struct sockaddr *)sun, sizeof(*sun));
	ret = ret < 0 && errno == ECONNREFUSED;
	close(fd);
	return ret;
}

/* Bind, taking over a socket file that a dead process left behind */
static int unix_bind(int fd, const struct sockaddr_un *sun)
{
	int err;

	if (!bind(fd, (const struct sockaddr *)sun, sizeof(*sun)))
		return 0;
	err = -errno;
	if (err != -EADDRINUSE || !unix_path_stale(sun))
		return err;
	unlink(sun->sun_path);
	return bind(fd, (const struct sockaddr *)sun, sizeof(*sun)) < 0 ?
	       -errno : 0;
}

int vecnet_user_unix_dgram(const char *local, int sndbuf)
{
	struct sockaddr_un sun;
	int fd, err;

	err = unix_addr(&sun, local);
	if (err)
		return err;

	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* from before the bind: until a switch offers channels (nego) */
	vecnet_user_pass_fds(fd, 0);

	/*
	 * Every datagram stays charged to the sender's buffer until the
	 * peer reads it, so this bounds the bytes in flight.  Without
	 * CAP_NET_ADMIN the host caps it at net.core.wmem_max; a smaller
	 * buffer still works.
	 */
	if (sndbuf > 0 &&
	    setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof(sndbuf)))
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));

	err = unix_bind(fd, &sun);
	if (err)
		goto out_close;
	return fd;

out_close:
	close(fd);
	return err;
}

int vecnet_user_unix_connect(int fd, const char *peer, unsigned long long *id)
{
	struct sockaddr_un sun;
	struct stat st;
	int err;

	err = unix_addr(&sun, peer);
	if (err)
		return err;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0)
		return -errno;
	/*
	 * Which socket file answered: a peer that restarts creates a new
	 * one, with a new change time even where the inode number is
	 * reused.  Zero when it cannot be told.
	 */
	*id = 0;
	if (!stat(sun.sun_path, &st))
		*id = (unsigned long long)st.st_ino ^
		      ((unsigned long long)st.st_ctim.tv_sec * 1000000000ULL +
		       (unsigned long long)st.st_ctim.tv_nsec);
	return 0;
}

int vecnet_user_file_owner(const char *path, unsigned int *uid,
			   unsigned int *gid, unsigned int *mode,
			   unsigned int *me)
{
	struct stat st;

	*me = geteuid();
	if (stat(path, &st) < 0)
		return -errno;
	*uid = st.st_uid;
	*gid = st.st_gid;
	*mode = st.st_mode & 07777;
	return 0;
}

/*
 * Whether the socket that @fd is connected to has closed, asked of the
 * host's unix_diag without sending anything: a closed peer has lost
 * its inode (the host reports it as 0) or @fd is no longer connected.
 * Returns 1 when it has closed, 0 when it is open, a negative errno
 * when the host cannot tell (no unix_diag, say).  The answer to a
 * single-socket request is queued before sendmsg() returns, so the
 * read never waits.
 */
int vecnet_user_unix_peer_closed(int fd)
{
	struct {
		struct nlmsghdr nlh;
		struct unix_diag_req req;
	} rq = {
		.nlh = {
			.nlmsg_len = sizeof(rq),
			.nlmsg_type = SOCK_DIAG_BY_FAMILY,
			.nlmsg_flags = NLM_F_REQUEST,
			.nlmsg_seq = 1,
		},
		.req = {
			.sdiag_family = AF_UNIX,
			.udiag_show = UDIAG_SHOW_PEER,
			/* no cookie: look the socket up by inode alone */
			.udiag_cookie = { ~0U, ~0U },
		},
	};
	union {
		struct nlmsghdr nlh;
		char buf[512];
	} rp = { .buf = { 0 } };	/* a short send leaves it unread */
	const struct nlmsghdr *nlh = &rp.nlh;
	const struct nlattr *nla;
	struct stat st;
	int nl, len, off, err;

	if (fstat(fd, &st) < 0)
		return -errno;
	rq.req.udiag_ino = (unsigned int)st.st_ino;
	nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (nl < 0)
		return -errno;
	len = send(nl, &rq, sizeof(rq), 0);
	if (len == (int)sizeof(rq))
		len = recv(nl, &rp, sizeof(rp), MSG_DONTWAIT);
	err = len < 0 ? -errno : 0;
	close(nl);
	if (err)
		return err;

	if (!NLMSG_OK(nlh, (unsigned int)len))
		return -EIO;
	if (nlh->nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = NLMSG_DATA(nlh);

		if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
			return -EIO;
		return e->error ? e->error : -EIO;
	}
	if (nlh->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
	    nlh->nlmsg_len < NLMSG_LENGTH(sizeof(struct unix_diag_msg)))
		return -EIO;
	for (off = NLMSG_LENGTH(sizeof(struct unix_diag_msg));
	     off + NLA_HDRLEN <= (int)nlh->nlmsg_len;
	     off += NLA_ALIGN(nla->nla_len)) {
		nla = (const struct nlattr *)(rp.buf + off);
		if (nla->nla_len < NLA_HDRLEN ||
		    off + nla->nla_len > (int)nlh->nlmsg_len)
			return -EIO;
		if (nla->nla_type == UNIX_DIAG_PEER &&
		    nla->nla_len >= NLA_HDRLEN + sizeof(__u32))
			return !*(const __u32 *)((const char *)nla + NLA_HDRLEN);
	}
	/* no peer at all: the host dissolved the connection */
	return 1;
}

int vecnet_user_recvmmsg(int fd, void *msgs, unsigned int n, int fds)
{
	/* packet sockets refuse MSG_CMSG_CLOEXEC (EINVAL): only where asked */
	int flags = MSG_DONTWAIT | (fds ? MSG_CMSG_CLOEXEC : 0);
	int ret = recvmmsg(fd, msgs, n, flags, NULL);

	return ret < 0 ? -errno : ret;
}

/*
 * The descriptors received with @h: the first one to *@keep when that is
 * given and still -1, every other one to the closer.  Returns how many
 * went to the closer.
 */
static unsigned int msg_fds(struct msghdr *h, int *keep)
{
	unsigned int dropped = 0;
	struct cmsghdr *cm;

	for (cm = CMSG_FIRSTHDR(h); cm; cm = CMSG_NXTHDR(h, cm)) {
		const unsigned char *p = CMSG_DATA(cm);
		size_t i, n;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < n; i++) {
			int fd;

			memcpy(&fd, p + i * sizeof(int), sizeof(fd));
			if (keep && *keep < 0) {
				*keep = fd;
				continue;
			}
			vecnet_user_close_passed(fd);
			dropped++;
		}
	}
	return dropped;
}

int vecnet_user_msg_fd(void *mmsg, unsigned int *dropped)
{
	int keep = -1;

	*dropped += msg_fds(&((struct mmsghdr *)mmsg)->msg_hdr, &keep);
	return keep;
}

int vecnet_user_chan_setup(int fd, int sndbuf)
{
	int type = vecnet_user_fd_socket(fd), domain;
	socklen_t len = sizeof(domain);

	if (type < 0)
		return type;
	if (type != SOCK_DGRAM)
		return -EPROTOTYPE;
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) < 0)
		return -errno;
	if (domain != AF_UNIX)
		return -EAFNOSUPPORT;
	/*
	 * Room for a full ring, beyond net.core.wmem_max where we may (a
	 * frame longer than the buffer is refused); else what the kernel
	 * grants, with which shorter frames still go
	 */
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof(sndbuf)))
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	return 0;
}

int vecnet_user_sendmmsg(int fd, void *msgs, unsigned int n)
{
	int ret = sendmmsg(fd, msgs, n, MSG_DONTWAIT | MSG_NOSIGNAL);

	return ret < 0 ? -errno : ret;
}

int vecnet_user_send(int fd, const void *buf, int len)
{
	ssize_t ret = send(fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);

	return ret < 0 ? -errno : (int)ret;
}

/*
 * O_ASYNC on @fd on or off.  Off, the host raises no SIGIO for it; the
 * guest's epoll still marks it ready, and the next SIGIO of another
 * descriptor reports it.
 */
int vecnet_user_sigio(int fd, int on)
{
	int flags = fcntl(fd, F_GETFL);

	if (flags < 0)
		return -errno;
	flags = on ? flags | O_ASYNC : flags & ~O_ASYNC;
	return fcntl(fd, F_SETFL, flags) ? -errno : 0;
}

void vecnet_user_close(int fd)
{
	close(fd);
}

int vecnet_user_pass_fds(int fd, int on)
{
	return setsockopt(fd, SOL_SOCKET, SO_PASSRIGHTS, &on, sizeof(on)) ?
	       -errno : 0;
}

/*
 * Descriptors that a peer passed us are closed by a host thread of their
 * own, never by a vCPU or NAPI: close() runs the file's flush, which on
 * a FUSE file waits for its daemon, and the last close its release,
 * which on a TCP socket with SO_LINGER waits for the other end; both
 * for as long as the sender likes.  The threads read descriptor numbers
 * from a pipe; the kernel half writes them without waiting.  There are
 * several: a descriptor waiting in the pipe stays in the process's table,
 * and every new guest process's stub, which starts as a copy of that
 * table and closes what it does not need, would wait on it too.
 */
#define CLOSER_THREADS	8
static int closer_pipe[2] = { -1, -1 };

static void *closer_main(void *arg)
{
	int fd;

	for (;;) {
		ssize_t n = read(closer_pipe[0], &fd, sizeof(fd));

		if (n == sizeof(fd))
			close(fd);
		else if (n == 0 || (n < 0 && errno != EINTR))
			break;
	}
	return NULL;
}

int vecnet_user_closer_start(void)
{
	sigset_t all, old;
	pthread_attr_t attr;
	pthread_t thread;
	int p[2], err, i;

	if (closer_pipe[1] >= 0)
		return 0;
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	if (fcntl(p[1], F_SETFL, O_NONBLOCK) < 0) {
		err = -errno;
		goto out_close;
	}
	closer_pipe[0] = p[0];
	err = -pthread_attr_init(&attr);
	if (err)
		goto out_close;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	/* UML's signals are for its own threads: this one takes none */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (i = 0; i < CLOSER_THREADS && !err; i++)
		err = -pthread_create(&thread, &attr, closer_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	/* the threads started read the pipe: it stays, even with fewer */
	if (err && i == 1)
		goto out_close;
	closer_pipe[1] = p[1];
	return 0;

out_close:
	closer_pipe[0] = -1;
	close(p[0]);
	close(p[1]);
	return err;
}

/*
 * Close a unix socket of ours whose receive queue may hold descriptors a
 * peer passed: closing it would drop them here.  Descriptors stop coming
 * first (SO_PASSRIGHTS=0), then what is queued is read into @ctl (room
 * for @ctl_len bytes of descriptors), the descriptors going to the
 * closer, at most @max datagrams: beyond that the socket itself goes to
 * the closer.
 */
void vecnet_user_close_drained(int fd, int max, void *ctl, int ctl_len)
{
	struct msghdr h;
	int i;

	vecnet_user_pass_fds(fd, 0);
	for (i = 0; i < max; i++) {
		memset(&h, 0, sizeof(h));
		h.msg_control = ctl;
		h.msg_controllen = ctl_len;
		/* a zero-length read takes the datagram, truncated */
		if (recvmsg(fd, &h, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) < 0)
			break;
		msg_fds(&h, NULL);
	}
	if (i == max && !vecnet_user_close_passed(fd))
		return;
	close(fd);
}

int vecnet_user_close_passed(int fd)
{
	/* a pipe holds thousands: full, the thread is stuck; fd stays open */
	if (closer_pipe[1] < 0)
		return -ESRCH;
	if (write(closer_pipe[1], &fd, sizeof(fd)) != sizeof(fd))
		return -EAGAIN;
	return 0;
}

int vecnet_user_unlink(const char *path)
{
	return unlink(path) < 0 ? -errno : 0;
}

/*
 * A SOCK_SEQPACKET socket, bound to @local when that is not NULL, for
 * vecnet_user_unix_connect; one left unconnected reads nothing.
 * Non-blocking from the start: a unix connect completes or fails at
 * once (EAGAIN when the listener's backlog is full), so the guest never
 * waits on it.
 */
int vecnet_user_unix_seqpacket(const char *local)
{
	struct sockaddr_un sun;
	int fd, err;

	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* the peer has nothing to pass us, and no room waits for it */
	vecnet_user_pass_fds(fd, 0);
	if (!local)
		return fd;
	err = unix_addr(&sun, local);
	if (!err)
		err = unix_bind(fd, &sun);
	if (!err)
		return fd;
	close(fd);
	return err;
}

/*
 * The descriptors the guest's process was started with, noted before
 * UML opens any of its own (a constructor runs before main): fd= may
 * name one of these only, never UML's own, such as its mconsole socket
 * or another device's socket.  Descriptors from 4096 up are not noted.
 */
#define VECNET_FDS_NOTED	4096
#define VECNET_FD_BITS		(8 * sizeof(unsigned long))
static unsigned long vecnet_fds_inherited[VECNET_FDS_NOTED / VECNET_FD_BITS];

static void __attribute__((constructor)) vecnet_user_note_fds(void)
{
	int fd;

	for (fd = 0; fd < VECNET_FDS_NOTED; fd++)
		if (fcntl(fd, F_GETFD) >= 0)
			vecnet_fds_inherited[fd / VECNET_FD_BITS] |=
				1UL << (fd % VECNET_FD_BITS);
}

/* 1: @fd is one the process was started with; 0: UML's; -EBADF: not open */
int vecnet_user_fd_inherited(int fd)
{
	if (fcntl(fd, F_GETFD) < 0)
		return -errno;
	if (fd >= VECNET_FDS_NOTED)
		return 0;
	return !!(vecnet_fds_inherited[fd / VECNET_FD_BITS] &
		  (1UL << (fd % VECNET_FD_BITS)));
}

/*
 * A descriptor for the fd transport, or one a switch passed: it must be a
 * socket.  Made non-blocking; returns its SO_TYPE.  Asked of the socket
 * layer alone: fstat() on a file another process passed could wait for
 * that file's server (FUSE).
 */
int vecnet_user_fd_socket(int fd)
{
	socklen_t len = sizeof(int);
	int type, fl;

	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0)
		return -errno;
	/* a unix socket's peer has nothing to pass us (others say EOPNOTSUPP) */
	vecnet_user_pass_fds(fd, 0);
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	return type;
}

/* A raw or UDP socket for a tunnel, bound to the local address @addr */
int vecnet_user_inet_socket(int family, int type, int proto,
			    const void *addr, int len)
{
	int fd, err;

	fd = socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, proto);
	if (fd < 0)
		return -errno;
	if (bind(fd, addr, len) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}
