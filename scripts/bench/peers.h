/* SPDX-License-Identifier: GPL-2.0 */
/*
 * peers.h - what the bench's synthetic switch peers share
 * (plain_cost.c, scale_cost.c): the clock, the switch's CPU use, test
 * frames, unix addresses, and one frame sent as QEMU's -netdev dgram
 * (a raw frame by sendto) or -netdev stream (a 4-byte big-endian
 * length, then the frame) sends it.  Static functions: each tool is
 * one file and this header.
 */
#ifndef BENCH_PEERS_H
#define BENCH_PEERS_H

#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Run time (ns) of every thread of @pid (schedstat's first field), and
 * their voluntary context switches (status), where @vcs is not NULL
 */
static unsigned long long switch_use(int pid, unsigned long long *vcs)
{
	unsigned long long ns = 0, v;
	char path[64], p2[384], line[256];
	struct dirent *d;
	FILE *f;
	DIR *dir;

	if (vcs)
		*vcs = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return 0;
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(p2, sizeof(p2), "%s/%s/schedstat", path, d->d_name);
		f = fopen(p2, "r");
		if (f) {
			if (fscanf(f, "%llu", &v) == 1)
				ns += v;
			fclose(f);
		}
		snprintf(p2, sizeof(p2), "%s/%s/status", path, d->d_name);
		f = vcs ? fopen(p2, "r") : NULL;
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "voluntary_ctxt_switches: %llu", &v) == 1)
				*vcs += v;
		fclose(f);
	}
	closedir(dir);
	return ns;
}

/*
 * A test frame of @len bytes from locally administered MAC
 * 02:00:00:00:<hi>:<lo> of peer @from to peer @to's, or broadcast
 */
static void frame(uint8_t *b, size_t len, int to, int from)
{
	memset(b, 0, len);
	if (to < 0) {
		memset(b, 0xff, 6);
	} else {
		b[0] = 0x02;
		b[4] = to >> 8;
		b[5] = to;
	}
	b[6] = 0x02;
	b[10] = from >> 8;
	b[11] = from;
	b[12] = 0x88;	/* IEEE local experimental */
	b[13] = 0xb5;
}

static socklen_t sun(struct sockaddr_un *sa, const char *path)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	snprintf(sa->sun_path, sizeof(sa->sun_path), "%s", path);
	return offsetof(struct sockaddr_un, sun_path) + strlen(sa->sun_path) + 1;
}

/* one frame to the switch, as the kind of peer sends it; 0 when sent */
static int send1(int stream, int fd, const struct sockaddr_un *sw,
		 socklen_t swl, uint8_t *b, size_t len, int flags)
{
	uint32_t be = htonl(len);
	struct iovec iov[2] = { { &be, 4 }, { b, len } };

	if (stream)
		return writev(fd, iov, 2) == (ssize_t)(len + 4) ? 0 : -1;
	return sendto(fd, b, len, flags, (const struct sockaddr *)sw, swl) ==
	       (ssize_t)len ? 0 : -1;
}

/* @n receive slots for recvmmsg(), slot i at @buf + i * @size */
static void mmsg_slots(struct mmsghdr *mm, struct iovec *iov, uint8_t *buf,
		       int n, size_t size)
{
	int i;

	for (i = 0; i < n; i++) {
		iov[i].iov_base = buf + i * size;
		iov[i].iov_len = size;
		memset(&mm[i], 0, sizeof(mm[i]));
		mm[i].msg_hdr.msg_iov = &iov[i];
		mm[i].msg_hdr.msg_iovlen = 1;
	}
}

/*
 * The whole frames at the start of a stream peer's @have bytes in @sbuf
 * (each a 4-byte big-endian length, then the frame), taken out; how
 * many.  A length over @max stops it, as a broken stream.
 */
static long stream_frames(uint8_t *sbuf, size_t *have, uint32_t max)
{
	long n = 0;
	uint32_t l;

	while (*have >= 4) {
		memcpy(&l, sbuf, 4);
		l = ntohl(l);
		if (l > max || *have < 4 + l)
			break;
		memmove(sbuf, sbuf + 4 + l, *have - 4 - l);
		*have -= 4 + l;
		n++;
	}
	return n;
}

#endif
