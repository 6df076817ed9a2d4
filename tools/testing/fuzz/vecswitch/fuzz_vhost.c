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
 * The message bytes come in pieces, each with descriptors of kinds the
 * fuzzer picks (eventfds, either end of a pipe, memfds, unix sockets with
 * a descriptor queued in them, more than a message may carry): whatever
 * the switch does not keep must reach the closer (drop_fd here), none
 * may be lost or closed twice, and every caps and counter must add up.
 *
 * Input: 24 bytes of set-up, then up to 4 KiB of guest memory, then the
 * message bytes, each piece led by a length byte and a descriptor byte.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include "fuzz_common.h"
#include "vhost.h"

#define MEM_LEN		65536
/* descriptors one piece of the message bytes may carry */
#define PIECE_FDS	12

/* a descriptor handed to the closer: one the switch holds, open */
static void drop_fd(void *arg, int fd)
{
	(void)arg;
	FZ_ASSERT(fcntl(fd, F_GETFD) >= 0);
	close(fd);
}

/* The lowest free descriptor number: the same after an input as before */
static int lowest_free(void)
{
	int fd = dup(0);

	FZ_ASSERT(fd >= 0);
	close(fd);
	return fd;
}

static int kick(void *arg, unsigned int q, int fd, bool add)
{
	(void)arg;
	(void)q;
	(void)fd;
	(void)add;
	return 0;
}

static uint64_t mapped_all, mem_refused;
static const struct vs_vh_mem mem_caps = {
	.max = 3 * MEM_LEN,
	.all_max = 4 * MEM_LEN,
	.all = &mapped_all,
	.refused = &mem_refused,
};
static const struct vs_vh_env env = {
	.drop_fd = drop_fd, .kick = kick, .mem = &mem_caps,
};

/* A descriptor of kind @k (a byte of the fuzzer's), or -1 */
static int make_fd(uint8_t k, int mfd)
{
	int p[2], fd = -1;

	switch (k % 6) {
	case 0:
		return eventfd(0, EFD_CLOEXEC);
	case 1:
	case 2:
		if (pipe2(p, O_CLOEXEC) < 0)
			return -1;
		close(p[k % 6 == 1 ? 1 : 0]);
		return p[k % 6 == 1 ? 0 : 1];
	case 3:
		return fcntl(mfd, F_DUPFD_CLOEXEC, 0);
	default:
		/* a unix socket, with a descriptor waiting in it (case 5) */
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p) < 0)
			return -1;
		if (k % 6 == 5) {
			fd = eventfd(0, EFD_CLOEXEC);
			if (fd >= 0) {
				union {
					struct cmsghdr align;
					uint8_t buf[CMSG_SPACE(sizeof(int))];
				} c;
				struct iovec iov = { (void *)"x", 1 };
				struct msghdr mh = {
					.msg_iov = &iov, .msg_iovlen = 1,
					.msg_control = c.buf,
					.msg_controllen = sizeof(c.buf),
				};
				struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

				cm->cmsg_level = SOL_SOCKET;
				cm->cmsg_type = SCM_RIGHTS;
				cm->cmsg_len = CMSG_LEN(sizeof(int));
				memcpy(CMSG_DATA(cm), &fd, sizeof(int));
				(void)sendmsg(p[0], &mh, MSG_DONTWAIT);
				close(fd);
			}
		}
		close(p[0]);
		return p[1];
	}
}

/*
 * @len bytes of the message stream with @n descriptors of the kinds in
 * @kinds: those the switch does not keep come back through drop_fd
 */
static void send_piece(int sock, const uint8_t *bytes, size_t len,
		       const uint8_t *kinds, unsigned int n, int mfd)
{
	union {
		struct cmsghdr align;
		uint8_t buf[CMSG_SPACE(PIECE_FDS * sizeof(int))];
	} c;
	struct iovec iov = { (void *)bytes, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	int fds[PIECE_FDS];
	unsigned int i, k = 0;

	for (i = 0; i < n; i++) {
		fds[k] = make_fd(kinds[i], mfd);
		k += fds[k] >= 0;
	}
	if (k) {
		struct cmsghdr *cm;

		mh.msg_control = c.buf;
		mh.msg_controllen = CMSG_SPACE(k * sizeof(int));
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(k * sizeof(int));
		memcpy(CMSG_DATA(cm), fds, k * sizeof(int));
	}
	(void)sendmsg(sock, &mh, MSG_DONTWAIT);
	for (i = 0; i < k; i++)
		close(fds[i]);
}

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
	int sv[2], mfd, efd, n, mark;
	uint8_t *mem;
	size_t got;
	unsigned int q;

	setup = fz_bytes(&in, 24, &got);
	if (got < 24)
		return 0;
	mark = lowest_free();
	mfd = memfd_create("fuzz-guest", MFD_CLOEXEC);
	FZ_ASSERT(mfd >= 0 && ftruncate(mfd, MEM_LEN) == 0);
	mem = mmap(NULL, MEM_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	FZ_ASSERT(mem != MAP_FAILED);
	bytes = fz_bytes(&in, 4096, &got);
	for (n = 0; n < MEM_LEN / 4096; n++)
		memcpy(mem + n * 4096, bytes, got);
	FZ_ASSERT(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) == 0);
	vs_vh_init(&v, sv[0]);

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

		for (k = 0; k < 64; k++) {
			unsigned int budget = VS_VH_DESC_BUDGET;

			if (vs_vq_pop(&v, VS_VH_TXQ, &f, false, &budget) <= 0)
				break;
			FZ_ASSERT(budget < VS_VH_DESC_BUDGET);
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
		/* the message bytes, in pieces with descriptors */
		for (k = 0; !n && k < 64 && in.left; k++) {
			const uint8_t *kinds;
			uint8_t len = fz_u8(&in), nfd = fz_u8(&in);
			size_t nk;

			bytes = fz_bytes(&in, len, &got);
			kinds = fz_bytes(&in, nfd % (PIECE_FDS + 1), &nk);
			send_piece(sv[1], bytes, got, kinds, nk, mfd);
			pump(&v, sv[1]);
			if (v.broken)
				break;
		}
	}
	FZ_ASSERT(mapped_all == v.st.mapped);
	FZ_ASSERT(v.st.mapped <= mem_caps.max);
	vs_vh_fini(&v, &env);
	FZ_ASSERT(mapped_all == 0 && v.st.mapped == 0);
	close(sv[0]);
	close(sv[1]);
	close(mfd);
	munmap(mem, MEM_LEN);
	/* nothing the frontend sent was kept past the end, or lost */
	FZ_ASSERT(lowest_free() == mark);
	return 0;
}
