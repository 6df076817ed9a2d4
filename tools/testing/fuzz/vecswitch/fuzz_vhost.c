// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_vhost.c - a hostile vhost-user frontend: a message stream of the
 * fuzzer's bytes after a set-up whose numbers are the fuzzer's too (ring
 * size, ring and region addresses, features), over guest memory whose
 * every byte is the fuzzer's, so that the rings, descriptor tables and
 * indirect tables the switch walks are arbitrary.  Every buffer the ring
 * code hands out must lie inside the guest's mapping, every length must
 * add up, and nothing may crash or run away.
 *
 * Input: 24 bytes of set-up, then up to 4 KiB of guest memory, then the
 * message bytes.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include "fuzz_common.h"
#include "vhost.h"

#define MEM_LEN		65536

static void drop_fd(void *arg, int fd)
{
	(void)arg;
	close(fd);
}

static int kick(void *arg, unsigned int q, int fd, bool add)
{
	(void)arg;
	(void)q;
	(void)fd;
	(void)add;
	return 0;
}

static const struct vs_vh_env env = { .drop_fd = drop_fd, .kick = kick };

/* One message, header and payload, with at most one descriptor */
static void send_msg(int fd, uint32_t req, const void *pl, uint32_t size,
		     int pass)
{
	union {
		struct cmsghdr align;
		uint8_t buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	uint8_t m[VHU_HDR_LEN + VHU_PAYLOAD_MAX];
	uint32_t h[3] = { req, VHU_FLAG_VERSION, size };
	struct iovec iov = { m, VHU_HDR_LEN + size };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	memcpy(m, h, VHU_HDR_LEN);
	if (size)
		memcpy(m + VHU_HDR_LEN, pl, size);
	if (pass >= 0) {
		struct cmsghdr *c;

		mh.msg_control = ctl.buf;
		mh.msg_controllen = sizeof(ctl.buf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &pass, sizeof(int));
	}
	FZ_ASSERT(sendmsg(fd, &mh, 0) == (ssize_t)iov.iov_len);
}

static void vq_msg(int fd, uint32_t req, uint32_t idx, uint32_t num)
{
	uint32_t s[2] = { idx, num };

	send_msg(fd, req, s, sizeof(s), -1);
}

/* Read every message sent so far, answering what needs an answer */
static void pump(struct vs_vhost *v, int peer)
{
	uint8_t sink[4096];

	vs_vh_input(v, &env);
	while (recv(peer, sink, sizeof(sink), MSG_DONTWAIT) > 0)
		;
}

static void check_frame(const struct vs_vh_frame *f, const uint8_t *mem)
{
	uint64_t sum = 0;
	unsigned int i;

	FZ_ASSERT(f->niov <= VS_VH_IOV_MAX);
	for (i = 0; i < f->niov; i++) {
		const uint8_t *b = f->iov[i].iov_base;

		FZ_ASSERT(b >= mem && f->iov[i].iov_len <= MEM_LEN &&
			  b + f->iov[i].iov_len <= mem + MEM_LEN);
		sum += f->iov[i].iov_len;
	}
	FZ_ASSERT(sum == f->len || f->len == UINT32_MAX);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };
	uint8_t frame[2048] = { 0 };
	const uint8_t *setup, *bytes;
	struct vs_vh_frame f;
	struct iovec iov[2];
	struct vs_vhost v;
	uint64_t u, reg[5];
	int sv[2], mfd, efd, n;
	uint8_t *mem;
	size_t got;
	unsigned int q;

	setup = fz_bytes(&in, 24, &got);
	if (got < 24)
		return 0;
	mfd = memfd_create("fuzz-guest", MFD_CLOEXEC);
	FZ_ASSERT(mfd >= 0 && ftruncate(mfd, MEM_LEN) == 0);
	mem = mmap(NULL, MEM_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	FZ_ASSERT(mem != MAP_FAILED);
	bytes = fz_bytes(&in, 4096, &got);
	for (n = 0; n < MEM_LEN / 4096; n++)
		memcpy(mem + n * 4096, bytes, got);
	FZ_ASSERT(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) == 0);
	vs_vh_init(&v, sv[0], 0);

	/* a set-up a frontend could send, its numbers the fuzzer's */
	send_msg(sv[1], VHU_SET_OWNER, NULL, 0, -1);
	u = vs_vh_features & ((uint64_t)setup[0] << 24 | (uint64_t)setup[1] << 8 |
			      setup[2] | 1ull << VN_F_VERSION_1);
	send_msg(sv[1], VHU_SET_FEATURES, &u, sizeof(u), -1);
	/* one region: gpa 0 or shifted, the whole file or less */
	u = 1;
	reg[0] = 1;
	reg[1] = (uint64_t)setup[3] << 12;
	reg[2] = MEM_LEN - ((uint64_t)setup[4] << 8);
	reg[3] = reg[1] + 0x100000;
	reg[4] = 0;
	{
		uint8_t pl[8 + 32];

		memcpy(pl, reg, 8);
		memcpy(pl + 8, reg + 1, 32);
		send_msg(sv[1], VHU_SET_MEM_TABLE, pl, sizeof(pl), mfd);
	}
	for (q = 0; q < VS_VH_QUEUES; q++) {
		uint64_t a[5] = { 0 };
		uint8_t pl[40];

		vq_msg(sv[1], VHU_SET_VRING_NUM, q, 1u << (setup[5 + q] % 12));
		vq_msg(sv[1], VHU_SET_VRING_BASE, q, setup[7 + q]);
		/* desc, used, avail in the frontend's addresses */
		a[1] = reg[3] + (setup[9 + 3 * q] << 8);
		a[2] = reg[3] + (setup[10 + 3 * q] << 8);
		a[3] = reg[3] + (setup[11 + 3 * q] << 7);
		memcpy(pl, &q, 4);
		memset(pl + 4, 0, 4);
		memcpy(pl + 8, a + 1, 32);
		send_msg(sv[1], VHU_SET_VRING_ADDR, pl, sizeof(pl), -1);
		efd = eventfd(0, EFD_CLOEXEC);
		FZ_ASSERT(efd >= 0);
		u = q;
		send_msg(sv[1], VHU_SET_VRING_KICK, &u, sizeof(u), efd);
		close(efd);
	}
	pump(&v, sv[1]);

	/* the rings, then the rest of the bytes as messages, then the rings */
	for (n = 0; n < 2; n++) {
		unsigned int k;

		for (k = 0; k < 64 && vs_vq_pop(&v, VS_VH_TXQ, &f, false) > 0;
		     k++) {
			check_frame(&f, v.nregions ? v.r[0].map : mem);
			vs_vq_push(&v, VS_VH_TXQ, f.head, 0);
		}
		vs_vq_notify(&v, VS_VH_TXQ);
		memcpy(frame, setup + 12, 12);
		iov[0].iov_base = frame;
		iov[0].iov_len = v.hdr_len;
		iov[1].iov_base = frame + 12;
		iov[1].iov_len = 60 + setup[13 + n] * 4;
		for (k = 0; k < 16; k++)
			if (vs_vq_deliver(&v, iov, 2, v.hdr_len + iov[1].iov_len))
				break;
		vs_vq_notify(&v, VS_VH_RXQ);
		vs_vq_rearm(&v, VS_VH_RXQ, true);
		if (!n) {
			bytes = fz_bytes(&in, in.left < 8192 ? in.left : 8192, &got);
			if (got && write(sv[1], bytes, got) < 0)
				break;
			pump(&v, sv[1]);
		}
	}
	vs_vh_fini(&v, &env);
	close(sv[0]);
	close(sv[1]);
	close(mfd);
	munmap(mem, MEM_LEN);
	return 0;
}
