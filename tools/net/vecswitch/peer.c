// SPDX-License-Identifier: GPL-2.0
/*
 * peer.c - where the frames of a dgram peer go.  A datagram names its
 * sender only by the address the sender bound, and that name is a path
 * the sender controls: resolved again later, it may lead somewhere else
 * (a relative name resolves in our working directory, a directory can be
 * swapped for a symlink, a socket file for another).  So a name is
 * resolved once, when the port is made, and the socket file found then is
 * held open (O_PATH).  Every frame for the port is sent through
 * /proc/self/fd/N, which reaches that same inode whatever happens to the
 * name afterwards.  The file must be a socket, must not be one of the
 * switch's own, and must belong to the sender's uid (unless the sender is
 * root), so a guest can neither make the switch send into itself nor aim
 * it at another user's or a system service's socket.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "vecswitch.h"

/* Remember one of the switch's own socket files, to refuse it as a peer. */
int vs_peer_own(struct vs_switch *sw, const char *path)
{
	struct stat st;

	if (sw->n_own >= ARRAY_SIZE(sw->own))
		return -1;
	if (stat(path, &st) < 0)
		return -1;
	sw->own[sw->n_own].dev = st.st_dev;
	sw->own[sw->n_own].ino = st.st_ino;
	sw->n_own++;
	return 0;
}

static bool is_own(const struct vs_switch *sw, const struct stat *st)
{
	unsigned int i;

	for (i = 0; i < sw->n_own; i++)
		if (sw->own[i].dev == st->st_dev && sw->own[i].ino == st->st_ino)
			return true;
	return false;
}

/* Why the sender's socket file could not be opened, for the log */
static const char *pin_open_error(int err)
{
	switch (err) {
	case ENOENT:
		return "socket file not found";
	case EACCES:
		return "a directory on the way to its socket file is closed to the switch's user "
		       "(the guest's directories must let it search them, e.g. by the group of --group)";
	case ELOOP:
		return "its socket name is a symbolic link";
	case ENOTDIR:
		return "a component of its socket name is not a directory";
	}
	return "socket file cannot be opened";
}

/*
 * Pin the address @addr of a sender with credentials @cred into @pin.
 * Returns NULL, or why the sender cannot be a port.
 */
const char *vs_peer_pin(const struct vs_switch *sw,
			const struct sockaddr_un *addr, socklen_t len,
			const struct ucred *cred, struct vs_pin *pin)
{
	size_t n = len - offsetof(struct sockaddr_un, sun_path);
	char path[sizeof(addr->sun_path) + 1];
	struct stat st;
	int fd;

	memset(pin, 0, sizeof(*pin));
	pin->fd = -1;
	if (!cred)
		return "no credentials";
	pin->uid = cred->uid;
	if (!addr->sun_path[0]) {
		/* abstract: no file system, nothing to swap; sent to as is */
		memcpy(&pin->dst, addr, len);
		pin->dstlen = len;
		return NULL;
	}
	memcpy(path, addr->sun_path, n);
	path[n] = '\0';
	if (path[0] != '/')
		return "relative socket name";
	/* the last component must itself be the socket, not a link to one */
	fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return pin_open_error(errno);
	if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode)) {
		close(fd);
		return "not a socket";
	}
	if (is_own(sw, &st)) {
		close(fd);
		return "names one of the switch's own sockets";
	}
	if (cred->uid != 0 && st.st_uid != cred->uid) {
		close(fd);
		return "socket file owned by another user";
	}
	pin->fd = fd;
	pin->dev = st.st_dev;
	pin->ino = st.st_ino;
	pin->dst.sun_family = AF_UNIX;
	snprintf(pin->dst.sun_path, sizeof(pin->dst.sun_path),
		 "/proc/self/fd/%d", fd);
	pin->dstlen = offsetof(struct sockaddr_un, sun_path) +
		      strlen(pin->dst.sun_path) + 1;
	return NULL;
}

void vs_peer_unpin(struct vs_pin *pin)
{
	if (pin->fd >= 0)
		close(pin->fd);
	pin->fd = -1;
}

/*
 * A send to @p found nobody at its socket.  A guest that restarted binds
 * its name anew: a new inode at the same name, with the same owner, is
 * the same guest, and the port follows it.  Returns true when it did.
 */
bool vs_peer_repin(struct vs_switch *sw, struct vs_port *p)
{
	struct ucred cred = { .uid = p->dgram.pin.uid };
	struct vs_pin pin;

	if (p->dgram.pin.fd < 0)
		return false;
	if (vs_peer_pin(sw, &p->dgram.addr, p->dgram.addrlen, &cred, &pin))
		return false;
	if (pin.dev == p->dgram.pin.dev && pin.ino == p->dgram.pin.ino) {
		vs_peer_unpin(&pin);
		return false;
	}
	vs_peer_unpin(&p->dgram.pin);
	p->dgram.pin = pin;
	return true;
}

/* /proc must be there: every path-bound peer is sent to through it. */
int vs_peer_check_proc(void)
{
	int fd = open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0) {
		fprintf(stderr,
			"vecswitch: /proc/self/fd: %s (dgram peers are sent to through it; mount /proc)\n",
			strerror(errno));
		return -1;
	}
	close(fd);
	return 0;
}
