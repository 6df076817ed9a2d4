/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vecnet: the calls the guest kernel makes into the host C library.
 * Shared by the kernel and host halves, so plain C types only.  Every
 * function returns a negative host errno on failure; host and guest
 * errno numbers are the same on the architectures UML runs on.
 */
#ifndef __UM_VECNET_USER_H
#define __UM_VECNET_USER_H

/* sizeof(((struct sockaddr_un *)0)->sun_path), including the NUL */
#define VECNET_UNIX_PATH_MAX	108

int vecnet_user_unix_dgram(const char *local, int sndbuf);
/* @id identifies the socket file that answered (0: unknown) */
int vecnet_user_unix_connect(int fd, const char *peer, unsigned long long *id);
/*
 * The owner, group and mode of the file at @path, and the host user
 * this guest runs as in @me, for a message
 */
int vecnet_user_file_owner(const char *path, unsigned int *uid,
			   unsigned int *gid, unsigned int *mode,
			   unsigned int *me);
/* 1: the socket @fd is connected to has closed, 0: it is open */
int vecnet_user_unix_peer_closed(int fd);
/* @local may be NULL; connect with vecnet_user_unix_connect */
int vecnet_user_unix_seqpacket(const char *local);
/* Returns the socket's SO_TYPE */
int vecnet_user_fd_inherited(int fd);
int vecnet_user_fd_socket(int fd);
int vecnet_user_inet_socket(int family, int type, int proto,
			    const void *addr, int len);
/* @fds: the messages have room for descriptors, closed on exec */
int vecnet_user_recvmmsg(int fd, void *msgs, unsigned int n, int fds);
/*
 * The first descriptor a received message carried, or -1; the others go
 * to the closer, counted in @dropped
 */
int vecnet_user_msg_fd(void *mmsg, unsigned int *dropped);
/* A shortcut channel's descriptor: a unix datagram socket, non-blocking */
int vecnet_user_chan_setup(int fd, int sndbuf);
int vecnet_user_sendmmsg(int fd, void *msgs, unsigned int n);
/* One datagram on a connected socket, without waiting */
int vecnet_user_send(int fd, const void *buf, int len);
void vecnet_user_close(int fd);
/* Whether the host signals the guest when @fd is ready (O_ASYNC) */
int vecnet_user_sigio(int fd, int on);
/* SO_PASSRIGHTS: may peers pass descriptors to @fd (Linux 6.16 and up) */
int vecnet_user_pass_fds(int fd, int on);
/* The host thread that closes what peers passed, and the hand-over to it */
int vecnet_user_closer_start(void);
int vecnet_user_close_passed(int fd);
/*
 * Close a socket whose queue may hold passed descriptors, reading @max
 * datagrams with @ctl_len bytes of room at @ctl
 */
void vecnet_user_close_drained(int fd, int max, void *ctl, int ctl_len);
int vecnet_user_tap_open(const char *ifname, int vnet_hdr_len, int mq);
/*
 * 1: the tap behind @fd takes one queue for good (persistent, without
 * IFF_MULTI_QUEUE); 0: it takes more, or is gone once let go
 */
int vecnet_user_tap_one_queue(int fd);
/* 1: the host has an interface named @ifname, 0: it has none */
int vecnet_user_if_exists(const char *ifname);
int vecnet_user_tap_set_offload(int fd, unsigned int tso, unsigned int csum);
int vecnet_user_readv_batch(int fd, void *msgs, unsigned int n);
int vecnet_user_writev_batch(int fd, void *msgs, unsigned int n);
int vecnet_user_unlink(const char *path);
int vecnet_user_raw_open(const char *ifname);
/* @prog: @len struct sock_filter instructions */
int vecnet_user_attach_filter(int fd, void *prog, unsigned int len);
/* Reads at most @len bytes; returns how many */
int vecnet_user_read_file(const char *path, void *buf, int len);

#endif
