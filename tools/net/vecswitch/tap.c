// SPDX-License-Identifier: GPL-2.0
/*
 * tap.c - the tap uplink (--tap): the switch's way out to the host's
 * network, a tap device whose frames it reads and writes one at a time,
 * and whose MTU it follows.
 */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <linux/if_tun.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "vecswitch.h"

#define TAP_READS_PER_EVENT	VS_BATCH
/* the largest read */
#define TAP_BUF_LEN		65536

static void tap_flush(struct vs_switch *sw, struct vs_port *p)
{
	while (p->txq.count) {
		struct vs_buf *b = vs_queue_peek(p, 0);
		ssize_t r = write(p->fd, b->data, b->len);

		if (r < 0 && (errno == EAGAIN || errno == EINTR)) {
			vs_port_want_out(sw, p, true);
			return;
		}
		if (r < 0) {
			/* EIO while the interface is down: drop, keep the port */
			p->st.tx_errors++;
			vs_queue_pop(p);
			continue;
		}
		vs_port_sent(p);
	}
	vs_port_want_out(sw, p, false);
}

static void tap_input(struct vs_switch *sw, struct vs_port *p)
{
	int i;

	for (i = 0; i < TAP_READS_PER_EVENT; i++) {
		ssize_t r = read(p->fd, p->stream.rxbuf, p->stream.rxcap);

		if (r < 0) {
			if (errno != EAGAIN && errno != EINTR)
				p->st.rx_errors++;
			return;
		}
		vs_forward(sw, p, p->stream.rxbuf, r);
	}
}

static void tap_event(struct vs_switch *sw, struct vs_port *p, uint32_t events)
{
	/* an interface that was deleted reports errors for ever */
	if (events & (EPOLLERR | EPOLLHUP)) {
		vs_port_remove(sw, p, "tap device gone");
		return;
	}
	if (events & EPOLLIN)
		tap_input(sw, p);
}

static size_t tap_rx_len(const struct vs_switch *sw)
{
	(void)sw;
	return TAP_BUF_LEN;
}

const struct vs_port_ops vs_tap_ops = {
	.name		= "tap",
	.uplink		= true,
	.rx_len		= tap_rx_len,
	.event		= tap_event,
	.flush		= tap_flush,
};

/*
 * Making a tap device, or attaching to one that is not ours, takes
 * CAP_NET_ADMIN; a device made beforehand for this user does not.
 */
static void tap_perm_error(struct vs_switch *sw, const char *ifname)
{
	struct passwd *pw = getpwuid(geteuid());
	char uid[16];

	snprintf(uid, sizeof(uid), "%u", (unsigned int)geteuid());
	vs_log(sw, 0,
	       "--tap %s: not permitted without CAP_NET_ADMIN: run as root, or have root make the device for this user first: ip tuntap add dev %s mode tap user %s",
	       ifname, ifname, pw ? pw->pw_name : uid);
}

int vs_tap_open(struct vs_switch *sw, const char *ifname)
{
	char name[VS_NAME_LEN];
	struct ifreq ifr;
	struct vs_port *p;
	int fd;

	fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		vs_log(sw, 0, "--tap: /dev/net/tun: %s", strerror(errno));
		return -1;
	}
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
		if (errno == EPERM)
			tap_perm_error(sw, ifname);
		else
			vs_log(sw, 0, "--tap %s: TUNSETIFF: %s", ifname,
			       strerror(errno));
		close(fd);
		return -1;
	}
	vs_name_escape(name, sizeof(name), (const uint8_t *)ifr.ifr_name,
		       strnlen(ifr.ifr_name, IFNAMSIZ));
	p = vs_port_new(sw, &vs_tap_ops, fd, name, NULL);
	if (!p) {
		close(fd);
		return -1;
	}
	sw->tap = p;
	vs_tap_mtu(p);
	return 0;
}

/*
 * The uplink's MTU, read again once a second: a frame larger than it
 * would be dropped by the bridge or tunnel behind the tap without a
 * trace, so the switch drops and counts it (tx_oversize) instead.  The
 * interface is asked for by its name of the moment (TUNGETIFF on the
 * tap's own descriptor), so a renamed uplink is still followed.
 */
void vs_tap_mtu(struct vs_port *p)
{
	struct ifreq ifr;
	int fd;

	memset(&ifr, 0, sizeof(ifr));
	if (ioctl(p->fd, TUNGETIFF, &ifr) < 0)
		return;
	/* any socket answers SIOCGIFMTU; AF_UNIX is one a sandbox allows */
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	if (ioctl(fd, SIOCGIFMTU, &ifr) == 0 && ifr.ifr_mtu > 0 &&
	    (unsigned int)ifr.ifr_mtu != p->mtu) {
		p->mtu = ifr.ifr_mtu;
		vs_log(NULL, 0,
		       "uplink %.*s: MTU %u; guests on its segment need an MTU of %u or less",
		       IFNAMSIZ, ifr.ifr_name, p->mtu, p->mtu);
	}
	close(fd);
}
