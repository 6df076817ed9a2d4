// SPDX-License-Identifier: GPL-2.0
/*
 * scale_cost.c - the switch's CPU per frame as plain peers are added: N
 * synthetic peers on the switch's --dgram (or --stream) socket, in pairs
 * (peer 2k talks to 2k + 1 and back), share a fixed total of RATE
 * frames/s of SIZE bytes for SECONDS, sent the way QEMU's -netdev dgram
 * (one sendto of a raw frame, from a bound socket) or -netdev stream (a
 * 4-byte big-endian length, then the frame) sends.  One process sends,
 * paced in 1 ms steps that go round the peers; a child receives on all of
 * them.  With the total fixed, what changes with N is how many frames the
 * switch finds per peer and per wake-up: the per-batch part of its cost.
 *
 *   scale_cost dgram|stream SWITCH_PATH SWITCH_PID PEERS RATE SECONDS SIZE
 *
 * Prints one line: mode, peers, frames sent and received, seconds, the
 * switch's CPU seconds (its threads' run time, /proc/PID/task/N/schedstat)
 * and us per received frame, and the switch's voluntary context switches
 * (its wake-ups) per received frame.  Unix sockets only; every loop ends
 * by count or deadline.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <poll.h>
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

#define PEERS_MAX	128
#define BATCH		64
#define FRAME_MAX	2000

static int peer_open(int stream, const char *sw, const char *own)
{
	int fd = socket(AF_UNIX, stream ? SOCK_STREAM : SOCK_DGRAM, 0);
	int big = 4 << 20;
	struct sockaddr_un sa;
	socklen_t l;

	if (fd < 0)
		return -1;
	if (stream) {
		l = sun(&sa, sw);
		if (connect(fd, (struct sockaddr *)&sa, l) < 0)
			goto fail;
		return fd;
	}
	unlink(own);
	l = sun(&sa, own);
	if (bind(fd, (struct sockaddr *)&sa, l) < 0)
		goto fail;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	return fd;
fail:
	close(fd);
	return -1;
}

struct rx {
	uint8_t sbuf[1 << 18];
	size_t have;
};

/* what peer @fd has for us now, in whole frames */
static long drain(int stream, int fd, struct rx *s)
{
	static uint8_t buf[BATCH][FRAME_MAX + 64];
	static struct mmsghdr mm[BATCH];
	static struct iovec iov[BATCH];
	ssize_t r;

	if (!stream) {
		mmsg_slots(mm, iov, &buf[0][0], BATCH, sizeof(buf[0]));
		r = recvmmsg(fd, mm, BATCH, MSG_DONTWAIT, NULL);
		return r > 0 ? r : 0;
	}
	r = recv(fd, s->sbuf + s->have, sizeof(s->sbuf) - s->have, MSG_DONTWAIT);
	if (r <= 0)
		return 0;
	s->have += r;
	return stream_frames(s->sbuf, &s->have, FRAME_MAX);
}

/* Count frames on every peer until @idle_s of silence or @deadline */
static long recv_all(int stream, const int *fds, int n, double deadline,
		     double idle_s)
{
	static struct rx st[PEERS_MAX];
	struct pollfd pfd[PEERS_MAX];
	long got = 0;
	int i;

	for (i = 0; i < n; i++) {
		pfd[i].fd = fds[i];
		pfd[i].events = POLLIN;
	}
	while (now_s() < deadline) {
		if (poll(pfd, n, (int)(idle_s * 1000)) <= 0)
			break;
		for (i = 0; i < n; i++)
			if (pfd[i].revents & POLLIN)
				got += drain(stream, fds[i], &st[i]);
	}
	return got;
}

struct args {
	int stream, pid, peers, rate, secs, size;
	const char *sw;
};

static int parse(int argc, char **argv, struct args *a)
{
	if (argc != 8)
		return -1;
	a->stream = !strcmp(argv[1], "stream");
	if (!a->stream && strcmp(argv[1], "dgram"))
		return -1;
	a->sw = argv[2];
	a->pid = atoi(argv[3]);
	a->peers = atoi(argv[4]);
	a->rate = atoi(argv[5]);
	a->secs = atoi(argv[6]);
	a->size = atoi(argv[7]);
	if (a->pid <= 0 || a->peers < 2 || a->peers > PEERS_MAX || a->peers % 2 ||
	    a->rate < 1000 || a->secs < 1 || a->secs > 120 || a->size < 60 ||
	    a->size > FRAME_MAX)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/scale_cost.XXXXXX", own[PEERS_MAX][64];
	unsigned long long c0, c1, v0, v1;
	long sent = 0, got = 0, i, steps;
	int fds[PEERS_MAX], p[2], k, status, per, rc = 1;
	static uint8_t f[PEERS_MAX][FRAME_MAX];
	struct sockaddr_un swa;
	double t0, t1, next, w;
	struct args a;
	socklen_t swl;
	pid_t rx;

	if (parse(argc, argv, &a) < 0) {
		fprintf(stderr, "usage: %s dgram|stream SWITCH_PATH SWITCH_PID PEERS(2-%d, even) "
			"RATE(>=1000) SECONDS(1-120) SIZE(60-%d)\n", argv[0], PEERS_MAX, FRAME_MAX);
		return 2;
	}
	swl = sun(&swa, a.sw);
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	for (k = 0; k < a.peers; k++) {
		snprintf(own[k], sizeof(own[k]), "%s/%d", dir, k);
		fds[k] = peer_open(a.stream, a.sw, own[k]);
		if (fds[k] < 0) {
			perror("peer");
			a.peers = k;
			goto out;
		}
	}
	/* each announces itself, so the switch learns every MAC */
	for (k = 0; k < a.peers; k++) {
		frame(f[k], 60, -1, k + 1);
		send1(a.stream, fds[k], &swa, swl, f[k], 60, MSG_DONTWAIT);
	}
	usleep(300000);
	recv_all(a.stream, fds, a.peers, now_s() + 2, 0.1);
	for (k = 0; k < a.peers; k++)
		frame(f[k], a.size, (k ^ 1) + 1, k + 1);

	if (pipe(p) < 0) {
		perror("pipe");
		goto out;
	}
	rx = fork();
	if (rx < 0) {
		perror("fork");
		goto out;
	}
	if (rx == 0) {
		got = recv_all(a.stream, fds, a.peers, now_s() + a.secs + 5, 0.5);
		_exit(write(p[1], &got, sizeof(got)) == sizeof(got) ? 0 : 1);
	}
	c0 = switch_use(a.pid, &v0);
	t0 = now_s();
	next = t0;
	/* 1 ms steps of rate/1000 frames, the peers taking turns */
	per = a.rate / 1000;
	steps = (long)a.secs * 1000;
	for (i = 0; i < steps * per; i++) {
		if (i % per == 0) {
			next += 0.001;
			w = next - now_s();
			if (w > 0)
				usleep((useconds_t)(w * 1e6));
		}
		k = i % a.peers;
		f[k][14] = i;
		if (send1(a.stream, fds[k], &swa, swl, f[k], a.size, MSG_DONTWAIT) == 0)
			sent++;
	}
	t1 = now_s();
	if (read(p[0], &got, sizeof(got)) != sizeof(got))
		got = -1;
	c1 = switch_use(a.pid, &v1);
	waitpid(rx, &status, 0);
	printf("%s peers %d sent %ld got %ld secs %.2f got_fps %.0f switch_cpu_s %.3f "
	       "us_per_frame %.3f wakeups_per_frame %.4f\n",
	       argv[1], a.peers, sent, got, t1 - t0, got / (t1 - t0), (c1 - c0) / 1e9,
	       got > 0 ? (c1 - c0) / 1e3 / got : 0, got > 0 ? (double)(v1 - v0) / got : 0);
	rc = 0;
out:
	for (k = 0; k < a.peers; k++) {
		close(fds[k]);
		unlink(own[k]);
	}
	rmdir(dir);
	return rc;
}
