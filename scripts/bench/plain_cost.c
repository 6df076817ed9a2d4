// SPDX-License-Identifier: GPL-2.0
/*
 * plain_cost.c - the switch's CPU per plain frame on --dgram against
 * --stream: two peers (one sends, one receives) on the switch's socket,
 * the sender paced to RATE frames/s of SIZE bytes for SECONDS, the way
 * QEMU's -netdev dgram (one sendto of a raw frame per frame, to the
 * switch's path, from a bound socket) and -netdev stream (a 4-byte
 * big-endian length, then the frame) send.  The switch's CPU is its
 * threads' run time (/proc/PID/task/N/schedstat) over the run.
 *
 *   plain_cost dgram|stream SWITCH_PATH SWITCH_PID RATE SECONDS SIZE
 *
 * Prints one line: mode, frames sent, frames received, seconds, switch
 * CPU s and us per received frame.  Unix sockets only; every loop ends
 * by count or deadline.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "peers.h"

#define BATCH	64

static int dgram_peer(const char *path)
{
	int fd = socket(AF_UNIX, SOCK_DGRAM, 0), big = 4 << 20;
	struct sockaddr_un sa;
	socklen_t l = sun(&sa, path);

	unlink(path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, l) < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	return fd;
}

static int stream_peer(const char *path)
{
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sa;
	socklen_t l = sun(&sa, path);

	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, l) < 0)
		return -1;
	return fd;
}

/* Read frames until @idle_s of silence or @deadline; returns how many */
static long recv_count(int stream, int fd, double deadline, double idle_s)
{
	static uint8_t buf[BATCH][2048];
	struct mmsghdr mm[BATCH];
	struct iovec iov[BATCH];
	static uint8_t sbuf[1 << 20];
	size_t have = 0;
	long n = 0;
	int r;

	mmsg_slots(mm, iov, &buf[0][0], BATCH, sizeof(buf[0]));
	while (now_s() < deadline) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		if (poll(&pfd, 1, (int)(idle_s * 1000)) <= 0)
			break;
		if (!stream) {
			r = recvmmsg(fd, mm, BATCH, MSG_DONTWAIT, NULL);
			if (r > 0)
				n += r;
			continue;
		}
		r = read(fd, sbuf + have, sizeof(sbuf) - have);
		if (r <= 0)
			break;
		have += r;
		n += stream_frames(sbuf, &have, sizeof(sbuf) - 4);
	}
	return n;
}

int main(int argc, char **argv)
{
	int stream, pid, rate, secs, size, a, b, p[2], status;
	long sent = 0, got = 0, i;
	char dir[] = "/tmp/plain_cost.XXXXXX", pa[128], pb[128];
	unsigned long long c0, c1;
	struct sockaddr_un swa;
	double t0, t1, next;
	socklen_t swl;
	uint8_t f[2048];
	pid_t rx;

	if (argc != 7) {
		fprintf(stderr, "usage: %s dgram|stream SWITCH_PATH SWITCH_PID RATE SECONDS SIZE\n",
			argv[0]);
		return 2;
	}
	stream = !strcmp(argv[1], "stream");
	pid = atoi(argv[3]);
	rate = atoi(argv[4]);
	secs = atoi(argv[5]);
	size = atoi(argv[6]);
	if (size < 60 || size > 2000 || rate < 1000 || secs < 1 || secs > 120)
		return 2;
	swl = sun(&swa, argv[2]);
	if (!mkdtemp(dir))
		return 1;
	snprintf(pa, sizeof(pa), "%s/a", dir);
	snprintf(pb, sizeof(pb), "%s/b", dir);
	a = stream ? stream_peer(argv[2]) : dgram_peer(pa);
	b = stream ? stream_peer(argv[2]) : dgram_peer(pb);
	if (a < 0 || b < 0) {
		perror("peer");
		return 1;
	}
	/* each announces itself: the switch learns both MACs */
	frame(f, 60, -1, 2);
	send1(stream, b, &swa, swl, f, 60, 0);
	frame(f, 60, -1, 1);
	send1(stream, a, &swa, swl, f, 60, 0);
	usleep(200000);
	recv_count(stream, a, now_s() + 1, 0.05);
	recv_count(stream, b, now_s() + 1, 0.05);

	if (pipe(p) < 0)
		return 1;
	rx = fork();
	if (rx == 0) {
		got = recv_count(stream, b, now_s() + secs + 5, 0.5);
		if (write(p[1], &got, sizeof(got)) != sizeof(got))
			_exit(1);
		_exit(0);
	}
	frame(f, size, 2, 1);
	c0 = switch_use(pid, NULL);
	t0 = now_s();
	next = t0;
	/* paced in 1 ms steps of rate/1000 frames */
	for (i = 0; i < (long)rate * secs; i++) {
		if (i % (rate / 1000) == 0) {
			double w;

			next += 0.001;
			w = next - now_s();
			if (w > 0)
				usleep((useconds_t)(w * 1e6));
		}
		f[14] = i;
		if (send1(stream, a, &swa, swl, f, size, 0) == 0)
			sent++;
	}
	t1 = now_s();
	if (read(p[0], &got, sizeof(got)) != sizeof(got))
		got = -1;
	c1 = switch_use(pid, NULL);
	waitpid(rx, &status, 0);
	printf("%s sent %ld got %ld secs %.2f sent_fps %.0f got_fps %.0f switch_cpu_s %.3f us_per_frame %.3f\n",
	       argv[1], sent, got, t1 - t0, sent / (t1 - t0), got / (t1 - t0),
	       (c1 - c0) / 1e9, got > 0 ? (c1 - c0) / 1e3 / got : 0);
	unlink(pa);
	unlink(pb);
	rmdir(dir);
	return 0;
}
