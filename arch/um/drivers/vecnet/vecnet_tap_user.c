// SPDX-License-Identifier: GPL-2.0
/*
 * vecnet: host side of the tap transport.  A tap descriptor is a
 * character device, not a socket: recvmmsg and sendmmsg do not apply, so
 * a batch is a run of readv/writev calls over the same mmsghdr ring the
 * socket transports use, stopped by the first EAGAIN.
 */

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <net/if.h>
#include <linux/if_tun.h>
#include "vecnet_user.h"

int vecnet_user_tap_open(const char *ifname, int vnet_hdr_len, int mq)
{
	struct ifreq ifr;
	int fd, err;

	if (!*ifname || strlen(ifname) >= sizeof(ifr.ifr_name))
		return -ENAMETOOLONG;

	fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;

	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR;
	if (mq)
		ifr.ifr_flags |= IFF_MULTI_QUEUE;
	memcpy(ifr.ifr_name, ifname, strlen(ifname));
	err = ioctl(fd, TUNSETIFF, &ifr);
	/*
	 * One queue on a multiqueue tap: the host wants the flag whenever
	 * the tap has it, however many queues we take
	 */
	if (err < 0 && errno == EINVAL && !mq) {
		ifr.ifr_flags |= IFF_MULTI_QUEUE;
		err = ioctl(fd, TUNSETIFF, &ifr);
	}
	if (err < 0 || ioctl(fd, TUNSETVNETHDRSZ, &vnet_hdr_len) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

int vecnet_user_tap_one_queue(int fd)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	if (ioctl(fd, TUNGETIFF, &ifr) < 0)
		return -errno;
	return (ifr.ifr_flags & (IFF_PERSIST | IFF_MULTI_QUEUE)) == IFF_PERSIST;
}

int vecnet_user_if_exists(const char *ifname)
{
	return if_nametoindex(ifname) != 0;
}

int vecnet_user_tap_set_offload(int fd, unsigned int tso, unsigned int csum)
{
	unsigned int flags = 0;

	if (csum)
		flags |= TUN_F_CSUM;
	if (csum && tso)
		flags |= TUN_F_TSO4 | TUN_F_TSO6 | TUN_F_TSO_ECN;
	return ioctl(fd, TUNSETOFFLOAD, flags) < 0 ? -errno : 0;
}

/*
 * A read from a tap gives no sign that a frame was longer than the
 * buffers: it fills them and drops the rest.  The guest's buffers hold
 * one byte more than any frame it takes, so a read that fills them all
 * was cut short, and is flagged MSG_TRUNC like a socket's.
 */
int vecnet_user_readv_batch(int fd, void *msgs, unsigned int n)
{
	struct mmsghdr *m = msgs;
	unsigned int i;
	size_t room, k;
	ssize_t len;

	for (i = 0; i < n; i++) {
		len = readv(fd, m[i].msg_hdr.msg_iov, m[i].msg_hdr.msg_iovlen);
		if (len < 0) {
			if (i)
				break;
			return -errno;
		}
		for (room = 0, k = 0; k < m[i].msg_hdr.msg_iovlen; k++)
			room += m[i].msg_hdr.msg_iov[k].iov_len;
		m[i].msg_len = len;
		m[i].msg_hdr.msg_flags = (size_t)len == room ? MSG_TRUNC : 0;
	}
	return i;
}

int vecnet_user_writev_batch(int fd, void *msgs, unsigned int n)
{
	struct mmsghdr *m = msgs;
	unsigned int i;
	ssize_t len;

	for (i = 0; i < n; i++) {
		len = writev(fd, m[i].msg_hdr.msg_iov, m[i].msg_hdr.msg_iovlen);
		if (len < 0) {
			if (i)
				break;
			return -errno;
		}
		m[i].msg_len = len;
	}
	return i;
}
