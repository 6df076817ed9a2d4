// SPDX-License-Identifier: GPL-2.0
/*
 * vecnet: host side of the raw transport.  An AF_PACKET socket on one
 * interface, for every protocol, with virtio-net headers and without
 * the host's qdisc; its classic BPF filter; reading a filter file.
 */

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <net/if.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include "vecnet_user.h"

int vecnet_user_raw_open(const char *ifname)
{
	struct sockaddr_ll sll;
	int fd, err, on = 1;
	unsigned int ifindex;

	ifindex = if_nametoindex(ifname);
	if (!ifindex)
		return -errno;

	/*
	 * Bound for ETH_P_ALL, not one protocol: the host then takes each
	 * sent frame's protocol from its Ethernet header.
	 */
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    htons(ETH_P_ALL));
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_PACKET, PACKET_VNET_HDR, &on, sizeof(on)) < 0 ||
	    setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &on, sizeof(on)) < 0)
		goto fail;

	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = ifindex;
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0)
		goto fail;
	return fd;

fail:
	err = -errno;
	close(fd);
	return err;
}

int vecnet_user_attach_filter(int fd, void *prog, unsigned int len)
{
	struct sock_fprog fprog = {
		.len = len,
		.filter = prog,
	};

	if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &fprog,
		       sizeof(fprog)) < 0)
		return -errno;
	return 0;
}

/*
 * Up to @len bytes of the regular file @path; -ESPIPE for anything else.
 * Opened without blocking: a FIFO or a device must not hang the boot or
 * the mconsole command that named it.
 */
int vecnet_user_read_file(const char *path, void *buf, int len)
{
	int fd, got = 0, n;
	struct stat st;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -ESPIPE;
	}
	while (got < len) {
		n = read(fd, (char *)buf + got, len - got);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			n = -errno;
			close(fd);
			return n;
		}
		if (!n)
			break;
		got += n;
	}
	close(fd);
	return got;
}
