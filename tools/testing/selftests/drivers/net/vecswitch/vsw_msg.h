/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vsw_msg.h - the switch's negotiation messages on the --dgram socket
 * (HELLO, MODE, CHAN, QUEUES, JOIN), built and read through the layout
 * and numbers of include/uapi/linux/vecnet.h, never spelled again here;
 * for vsw_nego_test.c, vsw_chan_test.c, vsw_mq_test.c and vsw_events_test.c.
 */
#ifndef VSW_MSG_H
#define VSW_MSG_H

#include <arpa/inet.h>
#include <linux/vecnet.h>

#include "vsw_fixture.h"
#include "vsw_frame.h"
#include "vsw_sock.h"

/* what a test guest says it takes: a 64 KiB frame, its header and a tag */
#define VSW_MSG_MAX_FRAME	65554

/* Unicast frames between two ports before the switch offers a channel */
#define CHAN_SUSTAIN	8

/* A HELLO or MODE of @type with @flags, into @m: its length */
static inline size_t nego_msg(uint8_t *m, uint8_t type, uint16_t flags)
{
	struct vecnet_msg msg = {
		.version = VECNET_MSG_VERSION,
		.type = type,
		.mode = {
			.flags = htons(flags),
			.max_frame = htonl(VSW_MSG_MAX_FRAME),
		},
	};

	memcpy(msg.magic, VECNET_MSG_MAGIC, VECNET_MSG_MAGIC_LEN);
	memcpy(m, &msg, sizeof(msg));
	return sizeof(msg);
}

/* A QUEUES or JOIN of @type with @cookie, into @m: its length */
static inline size_t mq_msg(uint8_t *m, uint8_t type, const uint8_t *cookie)
{
	struct vecnet_msg msg = {
		.version = VECNET_MSG_VERSION,
		.type = type,
	};

	memcpy(msg.magic, VECNET_MSG_MAGIC, VECNET_MSG_MAGIC_LEN);
	memcpy(msg.cookie, cookie, VECNET_MSG_COOKIE_LEN);
	memcpy(m, &msg, sizeof(msg));
	return sizeof(msg);
}

/* Are the @n bytes at @m a message of @type?  Then *@msg is it */
static inline bool is_msg(const uint8_t *m, ssize_t n, uint8_t type,
			  struct vecnet_msg *msg)
{
	if (n != (ssize_t)sizeof(*msg))
		return false;
	memcpy(msg, m, sizeof(*msg));
	return !memcmp(msg->magic, VECNET_MSG_MAGIC, VECNET_MSG_MAGIC_LEN) &&
	       msg->version == VECNET_MSG_VERSION && msg->type == type;
}

/* The next datagram on fd is MODE(vnet) from the switch. */
static inline bool got_mode(int fd)
{
	struct vecnet_msg msg;
	uint8_t m[64];
	int n = vsw_recv(fd, m, sizeof(m), VSW_WAIT_MS);

	/* the switch may offer this guest channels besides */
	return is_msg(m, n, VECNET_MSG_MODE, &msg) &&
	       (ntohs(msg.mode.flags) & ~VECNET_MSG_F_CHAN) == VECNET_MSG_F_VNET;
}

/* The next datagram on fd is the message @type; its cookie into @cookie */
static inline bool got_msg(int fd, uint8_t type, uint8_t *cookie)
{
	struct vecnet_msg msg;
	uint8_t m[64];
	int n = vsw_recv(fd, m, sizeof(m), VSW_WAIT_MS);

	if (!is_msg(m, n, type, &msg))
		return false;
	memcpy(cookie, msg.cookie, VECNET_MSG_COOKIE_LEN);
	return true;
}

/* The flags of the next MODE on @fd, read past anything else; or -1 */
static inline int recv_mode(int fd)
{
	uint64_t deadline = vsw_now_ms() + VSW_WAIT_MS;
	struct vecnet_msg msg;
	uint8_t m[2048];
	int n;

	while (vsw_now_ms() < deadline) {
		n = vsw_recv(fd, m, sizeof(m), (int)(deadline - vsw_now_ms()));
		if (n < 0)
			return -1;
		if (is_msg(m, n, VECNET_MSG_MODE, &msg))
			return ntohs(msg.mode.flags);
	}
	return -1;
}

/* A frame with an all-zero virtio-net header in front, from guest i. */
static inline int send_vnet(const struct vsw *s, const struct vsw_guest *g,
		     const uint8_t *dst, uint32_t tag, size_t len)
{
	uint8_t buf[2048];

	memset(buf, 0, 10);
	len = vsw_frame(buf + 10, dst, g->mac, tag, len);
	return vsw_send_raw(s, g->fd, buf, 10 + len);
}

/* @n unicast frames with headers from @g to @dst, tagged @tag on */
static inline int send_vnet_n(const struct vsw *s, const struct vsw_guest *g,
		       const uint8_t *dst, uint32_t tag, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (send_vnet(s, g, dst, tag + i, 100))
			return -1;
	return 0;
}

/*
 * The descriptor of the CHAN for @mac that the switch sends guest @fd,
 * reading past frames and other messages; -1 when none came
 */
static inline int recv_chan(int fd, const uint8_t *mac)
{
	uint64_t deadline = vsw_now_ms() + VSW_WAIT_MS;
	union {
		struct cmsghdr cm;
		uint8_t buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct vecnet_msg msg;
	uint8_t m[2048];
	struct iovec iov = { .iov_base = m, .iov_len = sizeof(m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int cfd;
	ssize_t n;

	while (vsw_now_ms() < deadline) {
		if (poll(&pfd, 1, (int)(deadline - vsw_now_ms())) != 1)
			return -1;
		mh.msg_control = ctl.buf;
		mh.msg_controllen = sizeof(ctl.buf);
		n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (!is_msg(m, n, VECNET_MSG_CHAN, &msg) ||
		    mh.msg_controllen < CMSG_LEN(sizeof(int)))
			continue;
		memcpy(&cfd, CMSG_DATA(&ctl.cm), sizeof(int));
		if (!memcmp(msg.mac, mac, sizeof(msg.mac)))
			return cfd;
		close(cfd);
	}
	return -1;
}

/* @g asks for headers and channels and agrees: the switch's MODE flags */
static inline int negotiate_chan(const struct vsw *s, const struct vsw_guest *g)
{
	uint8_t m[VECNET_MSG_LEN];
	int flags;

	if (vsw_send_raw(s, g->fd, m, nego_msg(m, VECNET_MSG_HELLO,
					       VECNET_MSG_F_VNET | VECNET_MSG_F_CHAN)))
		return -1;
	flags = recv_mode(g->fd);
	if (flags < 0 ||
	    vsw_send_raw(s, g->fd, m, nego_msg(m, VECNET_MSG_MODE, VECNET_MSG_F_VNET)))
		return -1;
	return flags;
}

/* Frames with headers on @fd until the one tagged @tag; 0, or -1 */
static inline int recv_vnet_until(int fd, uint32_t tag)
{
	int others;

	return vsw_recv_until_at(fd, 10, tag, &others);
}

/*
 * A flow from @a to @b one frame short of a channel, received by @b,
 * then the frame that has the switch offer one (tagged @tag + 0x100):
 * 0, or -1.  Both negotiated channels (negotiate_chan).
 */
static inline int chan_flow(const struct vsw *s, const struct vsw_guest *a,
			    const struct vsw_guest *b, uint32_t tag)
{
	if (send_vnet_n(s, a, b->mac, tag, CHAN_SUSTAIN - 1) ||
	    recv_vnet_until(b->fd, tag + CHAN_SUSTAIN - 2))
		return -1;
	return send_vnet(s, a, b->mac, tag + 0x100, 100);
}

#endif /* VSW_MSG_H */
