// SPDX-License-Identifier: GPL-2.0
/*
 * vswblast: measure a userspace switch's port-to-port forwarding rate.
 *
 * One sender port streams frames of a fixed size to one receiver port
 * through the switch for a fixed time; idle ports attach as well and count
 * whatever reaches them.  Every port first sends one broadcast frame so a
 * learning switch knows where its MAC lives.  Ports are AF_UNIX datagram
 * sockets connected to the switch (vecswitch, QEMU -netdev dgram framing),
 * or, with --vde, ports of a vde_switch opened through libvdeplug.
 *
 * Prints one JSON object.  The rate is what the receiver got, not what the
 * sender offered: a switch that drops frames does not get credit for them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>
#ifdef HAVE_VDEPLUG
#include <libvdeplug.h>
#endif

#define BATCH		64
#define MAX_FRAME	9000
#define MAX_IDLE	16
#define ETHERTYPE	0x88b5	/* IEEE local experimental */

struct port {
	int fd;
	uint8_t mac[6];
	uint64_t frames;	/* flow frames received (idle: any frame) */
	uint64_t bytes;
	pthread_t thread;
	int idle;
};

static atomic_int stop_rx, stop_tx;
static unsigned int frame_size = 64;

static void die(const char *what)
{
	fprintf(stderr, "vswblast: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void usage_error(const char *msg)
{
	fprintf(stderr, "vswblast: %s\n"
		"usage: vswblast [--vde] --switch PATH --dir DIR [--size BYTES] [--seconds N] [--idle N]\n",
		msg);
	exit(2);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int open_dgram_port(const char *sw, const char *dir, int idx)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd, sz = 4 << 20;

	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	if (fd < 0)
		die("socket");
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	if (snprintf(a.sun_path, sizeof(a.sun_path), "%s/port%d.sock", dir, idx) >=
	    (int)sizeof(a.sun_path))
		usage_error("--dir path too long for a socket");
	unlink(a.sun_path);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)))
		die("bind");
	if (strlen(sw) >= sizeof(a.sun_path))
		usage_error("--switch path too long");
	strcpy(a.sun_path, sw);
	/* connected: EAGAIN is followed by POLLOUT when the switch drains */
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)))
		die("connect to the switch");
	return fd;
}

#ifdef HAVE_VDEPLUG
static int open_vde_port(const char *sw)
{
	struct vde_open_args args = { .port = 0, .group = NULL, .mode = 0700 };
	VDECONN *conn = vde_open((char *)sw, "vswblast", &args);

	if (!conn)
		die("vde_open");
	return vde_datafd(conn);
}
#endif

static void fill_frame(uint8_t *f, const uint8_t *dst, const uint8_t *src, unsigned int len)
{
	memset(f, 0x5a, len);
	memcpy(f, dst, 6);
	memcpy(f + 6, src, 6);
	f[12] = ETHERTYPE >> 8;
	f[13] = ETHERTYPE & 0xff;
}

static void announce(struct port *p)
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	uint8_t f[64];

	fill_frame(f, bcast, p->mac, sizeof(f));
	f[14] = 1;	/* not a flow frame */
	if (send(p->fd, f, sizeof(f), 0) < 0)
		die("announce");
}

static void *rx_loop(void *arg)
{
	static __thread uint8_t bufs[BATCH][MAX_FRAME];
	struct port *p = arg;
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	struct pollfd pfd = { .fd = p->fd, .events = POLLIN };
	int i, n;

	for (i = 0; i < BATCH; i++) {
		iov[i] = (struct iovec){ bufs[i], MAX_FRAME };
		msgs[i] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &iov[i], .msg_iovlen = 1 } };
	}
	while (!atomic_load(&stop_rx)) {
		n = recvmmsg(p->fd, msgs, BATCH, MSG_DONTWAIT, NULL);
		if (n < 0) {
			if (errno != EAGAIN && errno != EINTR)
				die("recvmmsg");
			poll(&pfd, 1, 50);
			continue;
		}
		for (i = 0; i < n; i++) {
			const uint8_t *f = bufs[i];

			if (!p->idle && (msgs[i].msg_len < 15 || memcmp(f, p->mac, 6) || f[14] == 1))
				continue;
			p->frames++;
			p->bytes += msgs[i].msg_len;
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "switch", required_argument, NULL, 's' },
		{ "dir", required_argument, NULL, 'd' },
		{ "size", required_argument, NULL, 'z' },
		{ "seconds", required_argument, NULL, 't' },
		{ "idle", required_argument, NULL, 'i' },
		{ "vde", no_argument, NULL, 'v' },
		{ }
	};
	static uint8_t frames[BATCH][MAX_FRAME];
	const char *sw = NULL, *dir = NULL;
	struct port ports[2 + MAX_IDLE] = { };
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	int i, c, nidle = 0, vde = 0, nports;
	double secs = 5, t0, t_end, elapsed;
	uint64_t sent = 0, eagain = 0;
	char *end;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's': sw = optarg; break;
		case 'd': dir = optarg; break;
		case 'z':
			frame_size = strtoul(optarg, &end, 10);
			if (*end || frame_size < 60 || frame_size > MAX_FRAME)
				usage_error("--size must be 60..9000");
			break;
		case 't':
			secs = strtod(optarg, &end);
			if (*end || secs < 0.5 || secs > 600)
				usage_error("--seconds must be 0.5..600");
			break;
		case 'i':
			nidle = strtol(optarg, &end, 10);
			if (*end || nidle < 0 || nidle > MAX_IDLE)
				usage_error("--idle must be 0..16");
			break;
		case 'v': vde = 1; break;
		default: usage_error("unknown option");
		}
	}
	if (!sw || (!dir && !vde))
		usage_error("--switch and --dir are required");
#ifndef HAVE_VDEPLUG
	if (vde)
		usage_error("built without libvdeplug: --vde unavailable");
#endif

	nports = 2 + nidle;
	for (i = 0; i < nports; i++) {
		struct port *p = &ports[i];
		uint8_t mac[6] = { 0x02, 0x62, 0x6c, 0x00, 0x00, (uint8_t)(i + 1) };

		memcpy(p->mac, mac, 6);
		p->idle = i >= 2;
#ifdef HAVE_VDEPLUG
		if (vde)
			p->fd = open_vde_port(sw);
		else
#endif
			p->fd = open_dgram_port(sw, dir, i);
		announce(p);
	}
	usleep(100 * 1000);	/* let the announcements be learnt */
	for (i = 1; i < nports; i++)
		if (pthread_create(&ports[i].thread, NULL, rx_loop, &ports[i]))
			die("pthread_create");

	for (i = 0; i < BATCH; i++) {
		fill_frame(frames[i], ports[1].mac, ports[0].mac, frame_size);
		iov[i] = (struct iovec){ frames[i], frame_size };
		msgs[i] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &iov[i], .msg_iovlen = 1 } };
	}

	t0 = now();
	t_end = t0 + secs;
	while (now() < t_end && !atomic_load(&stop_tx)) {
		int n = sendmmsg(ports[0].fd, msgs, BATCH, MSG_DONTWAIT);

		if (n < 0) {
			struct pollfd pfd = { .fd = ports[0].fd, .events = POLLOUT };

			if (errno != EAGAIN && errno != ENOBUFS && errno != EINTR)
				die("sendmmsg");
			eagain++;
			poll(&pfd, 1, 10);
			continue;
		}
		sent += n;
	}
	elapsed = now() - t0;
	usleep(300 * 1000);	/* what is in flight still counts */
	atomic_store(&stop_rx, 1);
	for (i = 1; i < nports; i++)
		pthread_join(ports[i].thread, NULL);

	printf("{\"switch\":\"%s\",\"size\":%u,\"seconds\":%.3f,\"sent\":%llu,\"received\":%llu,"
	       "\"send_eagain\":%llu,\"mpps\":%.4f,\"gbps\":%.4f,\"idle_frames\":[",
	       vde ? "vde_switch" : "dgram", frame_size, elapsed,
	       (unsigned long long)sent, (unsigned long long)ports[1].frames,
	       (unsigned long long)eagain, ports[1].frames / elapsed / 1e6,
	       ports[1].bytes * 8.0 / elapsed / 1e9);
	for (i = 2; i < nports; i++)
		printf("%s%llu", i > 2 ? "," : "", (unsigned long long)ports[i].frames);
	printf("]}\n");
	for (i = 0; i < nports && !vde; i++) {
		char path[sizeof(((struct sockaddr_un *)0)->sun_path) + 16];

		snprintf(path, sizeof(path), "%s/port%d.sock", dir, i);
		unlink(path);
	}
	return 0;
}
