// SPDX-License-Identifier: GPL-2.0
/*
 * Preloaded into a UML guest's kernel process (LD_PRELOAD) to make the
 * host look like one built without unix_diag: every NETLINK_SOCK_DIAG
 * socket is refused, as a kernel without the netlink family refuses it.
 * Everything else goes straight to the host.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <linux/netlink.h>

int socket(int domain, int type, int protocol)
{
	if (domain == AF_NETLINK && protocol == NETLINK_SOCK_DIAG) {
		errno = EPROTONOSUPPORT;
		return -1;
	}
	return syscall(SYS_socket, domain, type, protocol);
}
