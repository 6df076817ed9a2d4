/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vsw_sock.h - guests of the switch under test: a datagram socket bound
 * beside the switch's with a MAC of its own, sending test frames and
 * receiving them within a deadline, and stream or seqpacket clients
 * that read the switch's length-prefixed frames.
 */
#ifndef VSW_SOCK_H
#define VSW_SOCK_H

#include "vsw_frame.h"
#include "vsw_proc.h"

struct vsw_guest {
	int fd;
	char path[108];
	uint8_t mac[6];
};

static inline int vsw_guest_open(struct vsw_guest *g, const struct vsw *s,
				 const char *name, unsigned int idx)
{
	struct timeval tv = { .tv_sec = 2 };
	struct sockaddr_un sa;
	int alen;

	snprintf(g->path, sizeof(g->path), "%s/%s", s->dir, name);
	vsw_mac(g->mac, idx);
	g->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (g->fd < 0)
		return -1;
	alen = vsw_addr(&sa, g->path);
	if (bind(g->fd, (struct sockaddr *)&sa, alen) < 0)
		return -1;
	/* a blocking send waits while the switch's own queue is full */
	return setsockopt(g->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

static inline void vsw_guest_close(struct vsw_guest *g)
{
	if (g->fd > 0)
		close(g->fd);
	g->fd = -1;
}

static inline int vsw_send_raw(const struct vsw *s, int fd, const void *buf,
			       size_t len)
{
	struct sockaddr_un sa;
	int alen = vsw_addr(&sa, s->dgram);

	return sendto(fd, buf, len, 0, (struct sockaddr *)&sa, alen) ==
	       (ssize_t)len ? 0 : -1;
}

static inline int vsw_send(const struct vsw *s, const struct vsw_guest *g,
			   const uint8_t *dst, uint32_t tag, size_t len)
{
	uint8_t buf[65536];

	len = vsw_frame(buf, dst, g->mac, tag, len);
	return vsw_send_raw(s, g->fd, buf, len);
}

/* One frame within timeout_ms: its length, or -1. */
static inline int vsw_recv(int fd, uint8_t *buf, size_t len, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	if (poll(&pfd, 1, timeout_ms) != 1)
		return -1;
	return recv(fd, buf, len, MSG_DONTWAIT);
}

/*
 * Receive frames until one has the given tag; count the others.  Each
 * frame follows @off bytes (a virtio-net header where one was agreed).
 */
static inline int vsw_recv_until_at(int fd, size_t off, uint32_t tag,
				    int *others)
{
	uint64_t deadline = vsw_now_ms() + VSW_WAIT_MS;
	uint8_t buf[65536];
	int n;

	*others = 0;
	while (vsw_now_ms() < deadline) {
		n = vsw_recv(fd, buf, sizeof(buf),
			     (int)(deadline - vsw_now_ms()));
		if (n < 0)
			return -1;
		if (n >= (int)off + 18 && vsw_tag(buf + off) == tag)
			return 0;
		(*others)++;
	}
	return -1;
}

static inline int vsw_recv_until(int fd, uint32_t tag, int *others)
{
	return vsw_recv_until_at(fd, 0, tag, others);
}

/* Nothing is waiting on fd right now. */
static inline bool vsw_quiet(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, 0) == 0;
}

/* A connected stream or seqpacket client of the switch. */
static inline int vsw_connect(const char *path, int type)
{
	struct timeval tv = { .tv_sec = 2 };
	struct sockaddr_un sa;
	int fd, alen = vsw_addr(&sa, path);

	fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, alen) < 0) {
		close(fd);
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

/* Exactly len bytes from a stream within the deadline. */
static inline int vsw_read_full(int fd, uint8_t *buf, size_t len)
{
	uint64_t deadline = vsw_now_ms() + VSW_WAIT_MS;
	size_t got = 0;

	while (got < len && vsw_now_ms() < deadline) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (poll(&pfd, 1, (int)(deadline - vsw_now_ms())) != 1)
			return -1;
		r = recv(fd, buf + got, len - got, MSG_DONTWAIT);
		if (r <= 0)
			return -1;
		got += r;
	}
	return got == len ? 0 : -1;
}

/* One length-prefixed frame from a stream port: its length, or -1. */
static inline int vsw_stream_recv(int fd, uint8_t *buf, size_t len)
{
	uint8_t h[4];
	uint32_t n;

	if (vsw_read_full(fd, h, 4) < 0)
		return -1;
	n = (uint32_t)h[0] << 24 | h[1] << 16 | h[2] << 8 | h[3];
	if (n > len || vsw_read_full(fd, buf, n) < 0)
		return -1;
	return n;
}

#endif /* VSW_SOCK_H */
