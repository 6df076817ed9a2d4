// SPDX-License-Identifier: GPL-2.0
/*
 * sock.c - the switch's own unix sockets on the file system: path checks,
 * stale socket recovery, binding with restrictive permissions from the
 * start, then the configured mode and group; the descriptors they and
 * the ports need, and accepting connections without ever running out;
 * and the credentials of the senders on them, against --allow-uid and
 * --allow-gid.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
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
static int clear_stale(const char *path, int type,
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

int vs_listen_unix(const char *path, int type, unsigned int mode, long gid)
{
	struct sockaddr_un sa;
	socklen_t len;
	int fd, r, one = 1;
	mode_t old;

	if (vs_sockaddr_un(&sa, &len, path) < 0) {
		fprintf(stderr, "vecswitch: %s: path empty or longer than %zu bytes\n",
			path, sizeof(sa.sun_path) - 1);
		return -1;
	}
	r = clear_stale(path, type, &sa, len);
	if (r < 0) {
		fprintf(stderr, "vecswitch: %s: %s\n", path,
			r == -EEXIST ? "exists and is not a socket" :
			r == -EADDRINUSE ? "in use by a running switch" :
			strerror(-r));
		return -1;
	}
	fd = socket(AF_UNIX, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto err;

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
 * the control clients), two per port (a dgram peer's pinned socket
 * file and its wake-up probe; one for a connection), one per shortcut
 * channel (chan.c), of which two ports share each, and one per queue
 * socket a multiqueue guest may join to its port (mq.c).
 */
static unsigned long fds_needed(const struct vs_config *cfg)
{
	return 24 + VS_CTL_MAX_CONN +
	       (2ul + VS_CHAN_PORT_MAX / 2 + VS_MQ_MAX - 1) * cfg->max_ports;
}

/*
 * Raise the open-file limit to what --max-ports needs, or say why it
 * cannot be done: a switch that runs out of descriptors later cannot
 * accept, pin or probe, and would refuse guests at random.
 */
int vs_fd_budget(const struct vs_config *cfg)
{
	unsigned long need = fds_needed(cfg);
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur >= need)
		return 0;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need) {
		fprintf(stderr,
			"vecswitch: --max-ports %u needs %lu open files, but the limit is %lu (ulimit -n); lower --max-ports or raise the limit\n",
			cfg->max_ports, need, (unsigned long)rl.rlim_max);
		return -1;
	}
	rl.rlim_cur = need;
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
	       CMSG_SPACE(sizeof(struct ucred)), "rxctl too small for ucred");

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
