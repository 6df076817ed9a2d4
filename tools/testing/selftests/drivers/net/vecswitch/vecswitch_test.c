// SPDX-License-Identifier: GPL-2.0
/*
 * vecswitch_test.c - host-only tests of the vecswitch daemon. Each test
 * starts the switch (the ASan/UBSan build named by $VECSWITCH) on sockets
 * in a temporary directory, plays guests on those sockets, and checks what
 * arrives where, the counters, and that the switch exits cleanly with no
 * sanitizer report. Every test runs once per I/O backend.
 */
#define _GNU_SOURCE
#include <grp.h>
#include <sched.h>
#include <net/if.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/resource.h>

#include "../../../kselftest_harness.h"
#include "vsw_lib.h"

#define NGUEST	4

FIXTURE(vsw) {
	struct vsw s;
	struct vsw_guest g[NGUEST];
	unsigned int joined;	/* guests the switch knows as ports */
	uint8_t buf[65536];
};

FIXTURE_VARIANT(vsw) {
	const char *io;		/* option that picks the backend */
	const char *name;	/* what `stats` says it runs */
};

FIXTURE_VARIANT_ADD(vsw, uring) {
	.io = "-v",
	.name = "uring",
};

FIXTURE_VARIANT_ADD(vsw, mmsg) {
	.io = "--no-uring",
	.name = "mmsg",
};

FIXTURE_SETUP(vsw)
{
	int i;

	memset(&self->s, 0, sizeof(self->s));
	for (i = 0; i < NGUEST; i++)
		self->g[i].fd = -1;
}

FIXTURE_TEARDOWN(vsw)
{
	int i, rc;

	for (i = 0; i < NGUEST; i++)
		vsw_guest_close(&self->g[i]);
	if (self->s.pid) {
		rc = vsw_stop(&self->s);
		EXPECT_EQ(0, rc) {
			vsw_dump_log(&self->s);
		}
		EXPECT_TRUE(vsw_log_clean(&self->s));
		/* the switch removes its own sockets on SIGTERM */
		EXPECT_NE(0, access(self->s.dgram, F_OK));
		EXPECT_NE(0, access(self->s.ctl, F_OK));
	}
	vsw_rmdir(&self->s);
}

#define START(...) \
	ASSERT_EQ(0, vsw_start(&self->s, variant->io, ##__VA_ARGS__)) { \
		vsw_dump_log(&self->s); \
	}

#define GUEST(i) \
	ASSERT_EQ(0, guest_open(self, i))

#define G(i)	(&self->g[i])

static int guest_open(FIXTURE_DATA(vsw) *self, int i)
{
	char name[32];

	snprintf(name, sizeof(name), "g%d.sock", i);
	return vsw_guest_open(&self->g[i], &self->s, name, i + 1);
}

/*
 * Guest i sends a broadcast, which makes it a port (a dgram guest is one
 * from its first frame); every guest that already is one drains it.
 */
static void announce(struct __test_metadata *_metadata,
		     FIXTURE_DATA(vsw) *self, int i)
{
	int j, others;

	ASSERT_EQ(0, vsw_send(&self->s, G(i), vsw_bcast, 0xa0000000 + i, 60));
	for (j = 0; j < NGUEST; j++) {
		if (j == i || !(self->joined & (1u << j)))
			continue;
		ASSERT_EQ(0, vsw_recv_until(G(j)->fd, 0xa0000000 + i, &others));
		EXPECT_EQ(0, others);
	}
	/* with nobody to receive it, ask the switch whether it saw it */
	VSW_WAIT_WHILE(!vsw_has_port(&self->s, G(i)->path));
	ASSERT_TRUE(vsw_has_port(&self->s, G(i)->path));
	self->joined |= 1u << i;
}

/*
 * Guest i sends a marker broadcast; each guest in mask must see it as the
 * very next frame, so none of what came before reached them.
 */
static void expect_only_marker(struct __test_metadata *_metadata,
			       FIXTURE_DATA(vsw) *self, int i,
			       unsigned int mask, uint32_t tag)
{
	int j, others = -1;

	ASSERT_EQ(0, vsw_send(&self->s, G(i), vsw_bcast, tag, 60));
	for (j = 0; j < NGUEST; j++) {
		if (!(mask & (1u << j)))
			continue;
		ASSERT_EQ(0, vsw_recv_until(G(j)->fd, tag, &others));
		EXPECT_EQ(0, others) TH_LOG("guest %d", j);
	}
}

/* The port that owned mac was removed, and mac with it. */
static void expect_forgotten(struct __test_metadata *_metadata,
			     FIXTURE_DATA(vsw) *self, const uint8_t *mac)
{
	VSW_WAIT_WHILE(vsw_fdb_has(&self->s, mac));
	EXPECT_FALSE(vsw_fdb_has(&self->s, mac));
	EXPECT_EQ(1, vsw_stat(&self->s, NULL, "ports_removed"));
}

/*
 * G0 sends a unicast frame to mac, learned on the connected port fd; it
 * arrives whole. Then fd hangs up, and its port and MAC must go.
 */
static void reply_and_hang_up(struct __test_metadata *_metadata,
			      FIXTURE_DATA(vsw) *self, int fd, bool stream,
			      const uint8_t *mac)
{
	int n;

	ASSERT_EQ(0, vsw_send(&self->s, G(0), mac, 0x77, 1000));
	if (stream)
		n = vsw_stream_recv(fd, self->buf, sizeof(self->buf));
	else
		n = vsw_recv(fd, self->buf, sizeof(self->buf), VSW_WAIT_MS);
	ASSERT_EQ(1000, n);
	EXPECT_EQ(0x77u, vsw_tag(self->buf));
	EXPECT_TRUE(vsw_frame_ok(self->buf, n));
	close(fd);
	expect_forgotten(_metadata, self, mac);
}

/* Guests 0..n-1 open and become ports, in order. */
static void join(struct __test_metadata *_metadata, FIXTURE_DATA(vsw) *self,
		 int n)
{
	int i;

	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, guest_open(self, i));
		announce(_metadata, self, i);
	}
}

TEST_F(vsw, backend)
{
	char buf[4096];

	START();
	ASSERT_LT(0, vsw_ctl(&self->s, "stats\n", buf, sizeof(buf)));
	EXPECT_NE(NULL, strstr(buf, variant->name)) {
		TH_LOG("stats: %s", buf);
	}
}

TEST_F(vsw, learning)
{
	int n, i;

	START();
	join(_metadata, self, 3);

	/* both directions of known unicast reach exactly one guest */
	for (i = 0; i < 50; i++) {
		ASSERT_EQ(0, vsw_send(&self->s, G(0), G(1)->mac, i, 100 + i));
		n = vsw_recv(G(1)->fd, self->buf, sizeof(self->buf), VSW_WAIT_MS);
		ASSERT_EQ(100 + i, n);
		EXPECT_EQ((uint32_t)i, vsw_tag(self->buf));
		EXPECT_TRUE(vsw_frame_ok(self->buf, n));
		ASSERT_EQ(0, vsw_send(&self->s, G(1), G(0)->mac, 1000 + i, 60));
		n = vsw_recv(G(0)->fd, self->buf, sizeof(self->buf), VSW_WAIT_MS);
		ASSERT_EQ(60, n);
		EXPECT_EQ((uint32_t)1000 + i, vsw_tag(self->buf));
	}
	expect_only_marker(_metadata, self, 0, 0x6, 0xbeef);

	EXPECT_TRUE(vsw_fdb_has(&self->s, G(0)->mac));
	EXPECT_TRUE(vsw_fdb_has(&self->s, G(1)->mac));
	EXPECT_TRUE(vsw_fdb_has(&self->s, G(2)->mac));
	/* G2's hello, the flow, the marker */
	EXPECT_EQ(52, vsw_stat(&self->s, G(1)->path, "tx_frames"));
}

/* A guest that connect()s its socket to the switch, as UML's driver does. */
TEST_F(vsw, connected_guest)
{
	struct sockaddr_un sa;
	int i, n, alen;

	START();
	GUEST(0);
	GUEST(1);
	alen = vsw_addr(&sa, self->s.dgram);
	ASSERT_EQ(0, connect(G(0)->fd, (struct sockaddr *)&sa, alen));
	announce(_metadata, self, 0);
	announce(_metadata, self, 1);

	/* more than the receive queue limit in one go: all arrive */
	for (i = 0; i < 40; i++)
		ASSERT_EQ(0, vsw_send(&self->s, G(1), G(0)->mac, i, 1514));
	for (i = 0; i < 40; i++) {
		n = vsw_recv(G(0)->fd, self->buf, sizeof(self->buf), VSW_WAIT_MS);
		ASSERT_EQ(1514, n);
		ASSERT_EQ((uint32_t)i, vsw_tag(self->buf));
	}
	n = vsw_frame(self->buf, G(1)->mac, G(0)->mac, 99, 60);
	ASSERT_EQ(n, send(G(0)->fd, self->buf, n, 0));
	n = vsw_recv(G(1)->fd, self->buf, sizeof(self->buf), VSW_WAIT_MS);
	ASSERT_EQ(60, n);
	EXPECT_EQ(99u, vsw_tag(self->buf));
}

/* Idle ports receive none of a unicast flow between two others. */
TEST_F(vsw, idle_ports_isolated)
{
	long long before2, before3;
	int i, n;

	START();
	join(_metadata, self, NGUEST);
	before2 = vsw_stat(&self->s, G(2)->path, "tx_frames");
	before3 = vsw_stat(&self->s, G(3)->path, "tx_frames");

	for (i = 0; i < 300; i++) {
		int from = i & 1, to = !from;

		ASSERT_EQ(0, vsw_send(&self->s, G(from), G(to)->mac, i, 1514));
		n = vsw_recv(G(to)->fd, self->buf, sizeof(self->buf), VSW_WAIT_MS);
		ASSERT_EQ(1514, n);
		ASSERT_EQ((uint32_t)i, vsw_tag(self->buf));
	}
	EXPECT_EQ(before2, vsw_stat(&self->s, G(2)->path, "tx_frames"));
	EXPECT_EQ(before3, vsw_stat(&self->s, G(3)->path, "tx_frames"));
	EXPECT_TRUE(vsw_quiet(G(2)->fd));
	EXPECT_TRUE(vsw_quiet(G(3)->fd));
	expect_only_marker(_metadata, self, 0, 0xe, 0xcafe);
}

/* G1 and G2 are ports; G0 sends to an address nobody has. */
static void send_unknown(struct __test_metadata *_metadata,
			 FIXTURE_DATA(vsw) *self)
{
	uint8_t nobody[6];

	vsw_mac(nobody, 0x999);
	GUEST(0);
	GUEST(1);
	GUEST(2);
	announce(_metadata, self, 1);
	announce(_metadata, self, 2);
	ASSERT_EQ(0, vsw_send(&self->s, G(0), nobody, 77, 60));
}

TEST_F(vsw, flood_unknown)
{
	int others;

	START();
	send_unknown(_metadata, self);
	ASSERT_EQ(0, vsw_recv_until(G(1)->fd, 77, &others));
	EXPECT_EQ(0, others);
	ASSERT_EQ(0, vsw_recv_until(G(2)->fd, 77, &others));
	EXPECT_EQ(0, others);
	EXPECT_TRUE(vsw_quiet(G(0)->fd));
}

TEST_F(vsw, no_flood_unknown)
{
	START("--no-flood-unknown");
	send_unknown(_metadata, self);
	/* broadcast still floods, and comes after the dropped frame */
	expect_only_marker(_metadata, self, 0, 0x6, 78);
	EXPECT_EQ(1, vsw_stat(&self->s, NULL, "unknown_dropped"));
}

TEST_F(vsw, hub)
{
	int others;

	START("--hub");
	join(_metadata, self, 3);
	/* known unicast goes everywhere all the same */
	ASSERT_EQ(0, vsw_send(&self->s, G(0), G(1)->mac, 5, 60));
	ASSERT_EQ(0, vsw_recv_until(G(1)->fd, 5, &others));
	ASSERT_EQ(0, vsw_recv_until(G(2)->fd, 5, &others));
	EXPECT_FALSE(vsw_fdb_has(&self->s, G(0)->mac));
}

TEST_F(vsw, aging)
{
	int others;

	START("--age", "1");
	join(_metadata, self, 3);
	ASSERT_TRUE(vsw_fdb_has(&self->s, G(0)->mac));

	VSW_WAIT_WHILE(vsw_fdb_has(&self->s, G(0)->mac));
	ASSERT_FALSE(vsw_fdb_has(&self->s, G(0)->mac));

	/* G0 unknown again: its unicast is flooded to G2 too */
	ASSERT_EQ(0, vsw_send(&self->s, G(1), G(0)->mac, 9, 60));
	ASSERT_EQ(0, vsw_recv_until(G(0)->fd, 9, &others));
	ASSERT_EQ(0, vsw_recv_until(G(2)->fd, 9, &others));

	/* the once-a-second sweep counts it */
	VSW_WAIT_WHILE(vsw_stat(&self->s, NULL, "fdb_aged") < 1);
	EXPECT_LE(1, vsw_stat(&self->s, NULL, "fdb_aged"));
}

TEST_F(vsw, mac_move)
{
	int others, n;

	START();
	join(_metadata, self, 3);

	/* G0's MAC now shows up on G2's port */
	memcpy(G(2)->mac, G(0)->mac, 6);
	ASSERT_EQ(0, vsw_send(&self->s, G(2), vsw_bcast, 11, 60));
	ASSERT_EQ(0, vsw_recv_until(G(1)->fd, 11, &others));
	ASSERT_EQ(0, vsw_recv_until(G(0)->fd, 11, &others));

	ASSERT_EQ(0, vsw_send(&self->s, G(1), G(0)->mac, 12, 60));
	n = vsw_recv(G(2)->fd, self->buf, sizeof(self->buf), VSW_WAIT_MS);
	ASSERT_EQ(60, n);
	EXPECT_EQ(12u, vsw_tag(self->buf));
	expect_only_marker(_metadata, self, 1, 0x1, 13);
	EXPECT_EQ(1, vsw_stat(&self->s, NULL, "fdb_moves"));
}

TEST_F(vsw, mac_lock)
{
	uint8_t real[6], other[6];
	int others;

	START("--mac-lock");
	join(_metadata, self, 2);

	/* G0 changes its source MAC: dropped */
	memcpy(real, G(0)->mac, 6);
	vsw_mac(other, 0x55);
	memcpy(G(0)->mac, other, 6);
	ASSERT_EQ(0, vsw_send(&self->s, G(0), vsw_bcast, 20, 60));
	memcpy(G(0)->mac, real, 6);

	/* a new guest claiming G0's MAC: dropped */
	GUEST(2);
	memcpy(G(2)->mac, real, 6);
	ASSERT_EQ(0, vsw_send(&self->s, G(2), vsw_bcast, 21, 60));

	ASSERT_EQ(0, vsw_send(&self->s, G(0), vsw_bcast, 22, 60));
	ASSERT_EQ(0, vsw_recv_until(G(1)->fd, 22, &others));
	EXPECT_EQ(0, others);
	EXPECT_EQ(1, vsw_stat(&self->s, G(0)->path, "rx_mac_lock"));
	EXPECT_EQ(1, vsw_stat(&self->s, G(2)->path, "rx_mac_lock"));
}

TEST_F(vsw, runts_oversize_garbage)
{
	static const size_t bad_len[] = { 0, 1, 13, 1519, 4000 };
	unsigned int i, seed = 1;
	uint8_t junk[2048];
	int others;

	START("--max-frame", "1518");
	GUEST(0);
	GUEST(1);
	announce(_metadata, self, 1);
	announce(_metadata, self, 0);

	for (i = 0; i < ARRAY_SIZE(bad_len); i++) {
		vsw_frame(self->buf, vsw_bcast, G(0)->mac, 30, 60);
		ASSERT_EQ(0, vsw_send_raw(&self->s, G(0)->fd, self->buf,
					  bad_len[i]));
	}
	/* multicast source: never valid */
	vsw_frame(self->buf, vsw_bcast, vsw_bcast, 31, 60);
	ASSERT_EQ(0, vsw_send_raw(&self->s, G(0)->fd, self->buf, 60));

	/* random bytes of random lengths: whatever happens, no crash */
	for (i = 0; i < 200; i++) {
		size_t len = rand_r(&seed) % sizeof(junk), k;

		for (k = 0; k < len; k++)
			junk[k] = rand_r(&seed);
		junk[6] |= 1;	/* keep garbage from learning MACs */
		ASSERT_EQ(0, vsw_send_raw(&self->s, G(0)->fd, junk, len));
	}
	ASSERT_EQ(0, vsw_send(&self->s, G(0), vsw_bcast, 32, 1518));
	ASSERT_EQ(0, vsw_recv_until(G(1)->fd, 32, &others));
	EXPECT_EQ(0, others);
	EXPECT_LE(3, vsw_stat(&self->s, G(0)->path, "rx_runt"));
	/* two of ours, and the longer half of the junk */
	EXPECT_LE(2, vsw_stat(&self->s, G(0)->path, "rx_oversize"));
	EXPECT_LE(1, vsw_stat(&self->s, G(0)->path, "rx_bad_src"));
}

/* Wait until the switch has read everything we wrote on a stream. */
static int stream_drained(int fd)
{
	uint64_t deadline = vsw_now_ms() + VSW_WAIT_MS;
	int outq;

	while (vsw_now_ms() < deadline) {
		if (ioctl(fd, SIOCOUTQ, &outq) < 0)
			return -1;
		if (!outq)
			return 0;
		vsw_pause_ms(1);
	}
	return -1;
}

TEST_F(vsw, stream_split_every_byte)
{
	uint8_t wire[2 * (4 + 70)], smac[6];
	size_t len1, len2, total, k;
	int fd, n;

	START();
	join(_metadata, self, 1);
	fd = vsw_connect(self->s.stream, SOCK_STREAM);
	ASSERT_LE(0, fd);
	vsw_mac(smac, 0x100);

	len1 = vsw_frame(wire + 4, vsw_bcast, smac, 0, 60);
	len2 = vsw_frame(wire + 8 + len1, G(0)->mac, smac, 0, 70);
	total = 8 + len1 + len2;
	for (k = 1; k < total; k++) {
		uint32_t t1 = 0x10000 + k, t2 = 0x20000 + k;

		/* same frames, new tags, so each split is told apart */
		vsw_frame(wire + 4, vsw_bcast, smac, t1, 60);
		vsw_frame(wire + 8 + len1, G(0)->mac, smac, t2, 70);
		wire[0] = 0; wire[1] = 0; wire[2] = len1 >> 8; wire[3] = len1;
		wire[4 + len1] = 0; wire[5 + len1] = 0;
		wire[6 + len1] = len2 >> 8; wire[7 + len1] = len2;

		ASSERT_EQ((ssize_t)k, send(fd, wire, k, MSG_NOSIGNAL));
		ASSERT_EQ(0, stream_drained(fd));
		ASSERT_EQ((ssize_t)(total - k),
			  send(fd, wire + k, total - k, MSG_NOSIGNAL));

		n = vsw_recv(G(0)->fd, self->buf, sizeof(self->buf), VSW_WAIT_MS);
		ASSERT_EQ((int)len1, n);
		ASSERT_EQ(t1, vsw_tag(self->buf));
		n = vsw_recv(G(0)->fd, self->buf, sizeof(self->buf), VSW_WAIT_MS);
		ASSERT_EQ((int)len2, n);
		ASSERT_EQ(t2, vsw_tag(self->buf));
		ASSERT_TRUE(vsw_frame_ok(self->buf, n));
	}

	/* and the other way: the stream guest gets framed output */
	reply_and_hang_up(_metadata, self, fd, true, smac);
}

TEST_F(vsw, stream_bad_length)
{
	uint8_t bad[8] = { 0x00, 0x10, 0x00, 0x00 };	/* 1 MiB frame */
	uint8_t c;
	int fd;

	START();
	fd = vsw_connect(self->s.stream, SOCK_STREAM);
	ASSERT_LE(0, fd);
	ASSERT_EQ(8, send(fd, bad, sizeof(bad), MSG_NOSIGNAL));
	/* the switch hangs up: EOF (or reset) before the deadline */
	ASSERT_GE(0, vsw_read_full(fd, &c, 1));
	close(fd);
	EXPECT_EQ(1, vsw_stat(&self->s, NULL, "stream_bad_len"));
	EXPECT_EQ(1, vsw_stat(&self->s, NULL, "ports_removed"));
}

TEST_F(vsw, seqpacket)
{
	uint8_t pmac[6];
	int fd, n, others;

	START();
	join(_metadata, self, 1);
	fd = vsw_connect(self->s.seqpacket, SOCK_SEQPACKET);
	ASSERT_LE(0, fd);
	vsw_mac(pmac, 0x200);

	n = vsw_frame(self->buf, vsw_bcast, pmac, 40, 300);
	ASSERT_EQ(n, send(fd, self->buf, n, MSG_NOSIGNAL));
	ASSERT_EQ(0, vsw_recv_until(G(0)->fd, 40, &others));
	EXPECT_EQ(0, others);

	reply_and_hang_up(_metadata, self, fd, false, pmac);
}

/* A stream guest that stops reading: partial writes keep framing intact. */
TEST_F(vsw, stream_slow_reader)
{
	long long sent, got = 0;
	uint32_t last = 0;
	char name[64];
	int fd, i, n;

	START("--queue", "64");
	join(_metadata, self, 2);
	fd = vsw_connect(self->s.stream, SOCK_STREAM);
	ASSERT_LE(0, fd);
	/* connect() returns before the switch accepts: wait for the port */
	snprintf(name, sizeof(name), "pid=%d uid=%u", getpid(), getuid());
	VSW_WAIT_WHILE(!vsw_has_port(&self->s, name));
	ASSERT_TRUE(vsw_has_port(&self->s, name));

	for (i = 1; i <= 1000; i++) {
		ASSERT_EQ(0, vsw_send(&self->s, G(0), vsw_bcast, i, 1514 - i % 7));
		n = vsw_recv(G(1)->fd, self->buf, sizeof(self->buf), VSW_WAIT_MS);
		ASSERT_EQ(1514 - i % 7, n);
		ASSERT_EQ((uint32_t)i, vsw_tag(self->buf));
	}
	EXPECT_LT(0, vsw_stat(&self->s, NULL, "ports_added"));

	/*
	 * Now read: whole frames, in order, the newest ones dropped while the
	 * queue was full. Done when every frame was either sent or dropped and
	 * we have all that were sent.
	 */
	for (i = 0; i < 1000; i++) {
		n = vsw_stream_recv(fd, self->buf, sizeof(self->buf));
		ASSERT_LT(0, n);
		ASSERT_EQ(1514 - vsw_tag(self->buf) % 7, (uint32_t)n);
		ASSERT_TRUE(vsw_frame_ok(self->buf, n));
		ASSERT_LT(last, vsw_tag(self->buf));
		last = vsw_tag(self->buf);
		got++;
		sent = vsw_stat(&self->s, name, "tx_frames");
		if (sent == got &&
		    sent + vsw_stat(&self->s, name, "tx_queue_full") == 1000)
			break;
	}
	EXPECT_GT(1000, got);
	EXPECT_LT(64, got);

	/* drained: the next frame goes through at once */
	ASSERT_EQ(0, vsw_send(&self->s, G(0), vsw_bcast, 5000, 100));
	n = vsw_stream_recv(fd, self->buf, sizeof(self->buf));
	ASSERT_EQ(100, n);
	EXPECT_EQ(5000u, vsw_tag(self->buf));
	close(fd);
}

static size_t vlan_frame(uint8_t *buf, const uint8_t *dst, const uint8_t *src,
			 uint16_t vid, uint32_t tag)
{
	size_t len = vsw_frame(buf + 4, dst, src, tag, 64);

	memmove(buf, buf + 4, 12);
	buf[12] = 0x81;
	buf[13] = 0x00;
	buf[14] = vid >> 8;
	buf[15] = vid;
	return len + 4;
}

/* The same MAC on two VLANs is two entries on two ports, not a move. */
TEST_F(vsw, vlan_learning)
{
	uint8_t shared[6];
	int n, others;
	size_t len;

	START();
	join(_metadata, self, 3);
	vsw_mac(shared, 0x400);

	len = vlan_frame(self->buf, vsw_bcast, shared, 10, 70);
	ASSERT_EQ(0, vsw_send_raw(&self->s, G(0)->fd, self->buf, len));
	len = vsw_frame(self->buf, vsw_bcast, shared, 71, 60);
	ASSERT_EQ(0, vsw_send_raw(&self->s, G(1)->fd, self->buf, len));
	/* each saw the other's broadcast, G2 both */
	ASSERT_EQ(0, vsw_send(&self->s, G(2), vsw_bcast, 72, 60));
	ASSERT_EQ(0, vsw_recv_until(G(0)->fd, 72, &others));
	EXPECT_EQ(1, others);
	ASSERT_EQ(0, vsw_recv_until(G(1)->fd, 72, &others));
	EXPECT_EQ(1, others);
	ASSERT_EQ(0, vsw_recv_until(G(2)->fd, 71, &others));
	EXPECT_EQ(1, others);

	/* tagged to VLAN 10: G0 only; untagged: G1 only */
	len = vlan_frame(self->buf, shared, G(2)->mac, 10, 73);
	ASSERT_EQ(0, vsw_send_raw(&self->s, G(2)->fd, self->buf, len));
	len = vsw_frame(self->buf, shared, G(2)->mac, 74, 60);
	ASSERT_EQ(0, vsw_send_raw(&self->s, G(2)->fd, self->buf, len));
	n = vsw_recv(G(0)->fd, self->buf, sizeof(self->buf), VSW_WAIT_MS);
	ASSERT_EQ(68, n);
	EXPECT_EQ(0x81, self->buf[12]);
	n = vsw_recv(G(1)->fd, self->buf, sizeof(self->buf), VSW_WAIT_MS);
	ASSERT_EQ(60, n);
	EXPECT_EQ(74u, vsw_tag(self->buf));
	expect_only_marker(_metadata, self, 2, 0x3, 75);
	EXPECT_EQ(0, vsw_stat(&self->s, NULL, "fdb_moves"));
}

static void dead_peer(struct __test_metadata *_metadata,
		      FIXTURE_DATA(vsw) *self, bool unlink_it)
{
	uint64_t deadline;
	uint32_t tag = 50;

	join(_metadata, self, 3);
	ASSERT_TRUE(vsw_has_port(&self->s, G(2)->path));
	ASSERT_TRUE(vsw_fdb_has(&self->s, G(2)->mac));

	vsw_guest_close(G(2));
	if (unlink_it)
		unlink(G(2)->path);

	/* traffic towards the dead guest finds out */
	deadline = vsw_now_ms() + VSW_WAIT_MS;
	while (vsw_has_port(&self->s, G(2)->path) && vsw_now_ms() < deadline) {
		int others;

		ASSERT_EQ(0, vsw_send(&self->s, G(0), vsw_bcast, tag, 60));
		ASSERT_EQ(0, vsw_recv_until(G(1)->fd, tag++, &others));
	}
	EXPECT_FALSE(vsw_has_port(&self->s, G(2)->path));
	EXPECT_FALSE(vsw_fdb_has(&self->s, G(2)->mac));
	EXPECT_EQ(1, vsw_stat(&self->s, NULL, "dead_peers"));
	expect_only_marker(_metadata, self, 0, 0x2, 999);
}

TEST_F(vsw, dead_peer_gone)
{
	START();
	dead_peer(_metadata, self, true);
}

TEST_F(vsw, dead_peer_refused)
{
	START();
	dead_peer(_metadata, self, false);
}

/* A guest that never reads costs only its own port. */
TEST_F(vsw, slow_consumer)
{
	uint64_t t0;
	int i, n;

	START("--queue", "16");
	join(_metadata, self, 3);

	t0 = vsw_now_ms();
	for (i = 0; i < 500; i++) {
		ASSERT_EQ(0, vsw_send(&self->s, G(0), vsw_bcast, i, 1514));
		n = vsw_recv(G(1)->fd, self->buf, sizeof(self->buf), VSW_WAIT_MS);
		ASSERT_EQ(1514, n);
		ASSERT_EQ((uint32_t)i, vsw_tag(self->buf));
	}
	/* no time spent waiting on G2: well under a millisecond a frame */
	EXPECT_GT(5000, vsw_now_ms() - t0);
	EXPECT_LT(400, vsw_stat(&self->s, G(2)->path, "tx_queue_full"));
	EXPECT_EQ(500, vsw_stat(&self->s, G(1)->path, "tx_frames") - 1);

	/* G2 is slow, not dead: it gets the latest frames once it reads */
	n = vsw_recv(G(2)->fd, self->buf, sizeof(self->buf), VSW_WAIT_MS);
	EXPECT_LT(0, n);
	EXPECT_TRUE(vsw_has_port(&self->s, G(2)->path));
}

/*
 * A connected guest that stops reading (UML's driver, its process stopped)
 * is held to no queue limit by the kernel: what it leaves unread stays
 * charged to the switch's send buffer. The switch stops sending to it
 * before that buffer is gone, and the other guests keep getting frames.
 */
TEST_F(vsw, stopped_connected_guest)
{
	struct sockaddr_un sa;
	int i, n, alen, got = 0;

	START();
	join(_metadata, self, 3);
	alen = vsw_addr(&sa, self->s.dgram);
	ASSERT_EQ(0, connect(G(0)->fd, (struct sockaddr *)&sa, alen));

	/* 9000-byte frames to G0, far more than any send buffer holds */
	for (i = 0; i < 12000; i++) {
		ASSERT_EQ(0, vsw_send(&self->s, G(1), G(0)->mac, i, 9000));
		if (i % 100)
			continue;
		ASSERT_EQ(0, vsw_send(&self->s, G(1), G(2)->mac, i, 60));
		n = vsw_recv(G(2)->fd, self->buf, sizeof(self->buf), VSW_WAIT_MS);
		ASSERT_EQ(60, n) {
			TH_LOG("G2 starved after %d frames to the stopped G0", i);
		}
		ASSERT_EQ((uint32_t)i, vsw_tag(self->buf));
		got++;
	}
	EXPECT_EQ(120, got);
	EXPECT_LT(0, vsw_stat(&self->s, G(0)->path, "tx_unread"));
	EXPECT_EQ(0, vsw_stat(&self->s, G(2)->path, "tx_unread"));
	EXPECT_TRUE(vsw_has_port(&self->s, G(0)->path));

	/* G0 resumes: it reads what it holds, speaks, and is sent to again */
	while (vsw_recv(G(0)->fd, self->buf, sizeof(self->buf), 200) > 0)
		;
	n = vsw_frame(self->buf, G(1)->mac, G(0)->mac, 7, 60);
	ASSERT_EQ(n, send(G(0)->fd, self->buf, n, 0));
	n = vsw_recv(G(1)->fd, self->buf, sizeof(self->buf), VSW_WAIT_MS);
	ASSERT_EQ(60, n);
	ASSERT_EQ(0, vsw_send(&self->s, G(1), G(0)->mac, 77777, 100));
	n = vsw_recv(G(0)->fd, self->buf, sizeof(self->buf), VSW_WAIT_MS);
	ASSERT_EQ(100, n);
	EXPECT_EQ(77777u, vsw_tag(self->buf));
}

/*
 * A connected guest that only receives, and reads all of it, next to a
 * connected guest that stopped: the stopped one fills the send buffer and
 * is held back; the reader must not be, however much it was sent without
 * answering (the switch's socket diagnostics see its queue empty).
 */
TEST_F(vsw, receiver_beside_stopped_guest)
{
	struct sockaddr_un sa;
	int i, n, alen;

	START();
	join(_metadata, self, 3);
	alen = vsw_addr(&sa, self->s.dgram);
	ASSERT_EQ(0, connect(G(0)->fd, (struct sockaddr *)&sa, alen));
	ASSERT_EQ(0, connect(G(2)->fd, (struct sockaddr *)&sa, alen));

	for (i = 0; i < 12000; i++) {
		ASSERT_EQ(0, vsw_send(&self->s, G(1), G(0)->mac, i, 9000));
		ASSERT_EQ(0, vsw_send(&self->s, G(1), G(2)->mac, i, 9000));
		n = vsw_recv(G(2)->fd, self->buf, sizeof(self->buf), VSW_WAIT_MS);
		ASSERT_EQ(9000, n) {
			TH_LOG("G2 held back after %d frames beside the stopped G0", i);
		}
		ASSERT_EQ((uint32_t)i, vsw_tag(self->buf));
	}
	EXPECT_LT(0, vsw_stat(&self->s, G(0)->path, "tx_unread"));
	EXPECT_EQ(0, vsw_stat(&self->s, G(2)->path, "tx_unread"));
	EXPECT_LT(0, vsw_stat(&self->s, NULL, "diag_dumps"));
	EXPECT_EQ(0, vsw_stat(&self->s, NULL, "diag_failed"));
}

/* Write `python3 -c 'json.load'` and see that it likes the output. */
static bool json_valid(const char *text)
{
	char path[] = "/tmp/vsw-json.XXXXXX", cmd[128];
	bool ok;
	FILE *f;
	int fd;

	fd = mkstemp(path);
	if (fd < 0)
		return false;
	f = fdopen(fd, "w");
	fputs(text, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "python3 -c 'import json,sys; json.load(open(sys.argv[1]))' %s",
		 path);
	ok = system(cmd) == 0;
	unlink(path);
	return ok;
}

TEST_F(vsw, ctl_output)
{
	static char out[1 << 16];
	char mac[20];

	START();
	join(_metadata, self, 2);
	snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x",
		 G(0)->mac[0], G(0)->mac[1], G(0)->mac[2], G(0)->mac[3],
		 G(0)->mac[4], G(0)->mac[5]);

	ASSERT_EQ(0, vsw_run_args(out, sizeof(out), "ctl", "--ctl",
				  self->s.ctl, "ports"));
	EXPECT_NE(NULL, strstr(out, G(0)->path));
	EXPECT_NE(NULL, strstr(out, "dgram"));
	ASSERT_EQ(0, vsw_run_args(out, sizeof(out), "ctl", "--ctl",
				  self->s.ctl, "fdb"));
	EXPECT_NE(NULL, strstr(out, mac));
	ASSERT_EQ(0, vsw_run_args(out, sizeof(out), "ctl", "--ctl",
				  self->s.ctl, "stats"));
	EXPECT_NE(NULL, strstr(out, "rx_frames 1"));

	ASSERT_EQ(0, vsw_run_args(out, sizeof(out), "ctl", "--ctl",
				  self->s.ctl, "ports", "--json"));
	EXPECT_TRUE(json_valid(out)) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, G(1)->path));
	ASSERT_EQ(0, vsw_run_args(out, sizeof(out), "ctl", "--ctl",
				  self->s.ctl, "fdb", "--json"));
	EXPECT_TRUE(json_valid(out)) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, mac));
	ASSERT_EQ(0, vsw_run_args(out, sizeof(out), "ctl", "--ctl",
				  self->s.ctl, "stats", "--json"));
	EXPECT_TRUE(json_valid(out)) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\"tx_queue_full\":0"));

	/* requests the switch does not know */
	ASSERT_LT(0, vsw_ctl(&self->s, "reboot\n", out, sizeof(out)));
	EXPECT_EQ(0, strncmp(out, "error:", 6));
	ASSERT_LT(0, vsw_ctl(&self->s, "fdb yaml\n", out, sizeof(out)));
	EXPECT_EQ(0, strncmp(out, "error:", 6));
	EXPECT_EQ(2, vsw_run_args(out, sizeof(out), "ctl", "--ctl",
				  self->s.ctl, "frobnicate"));
	EXPECT_EQ(2, vsw_run_args(out, sizeof(out), "ctl", "fdb"));
}

TEST_F(vsw, socket_mode)
{
	struct stat st;

	START();
	ASSERT_EQ(0, stat(self->s.dgram, &st));
	EXPECT_EQ(0600, st.st_mode & 0777);
	ASSERT_EQ(0, stat(self->s.ctl, &st));
	EXPECT_EQ(0600, st.st_mode & 0777);
	ASSERT_EQ(0, vsw_stop(&self->s));
	vsw_rmdir(&self->s);

	START("--mode", "0660");
	ASSERT_EQ(0, stat(self->s.stream, &st));
	EXPECT_EQ(0660, st.st_mode & 0777);
}

/* ---- sender credentials (--allow-uid, --allow-gid) ------------------- */

/* Move path's directory aside and put a symlink to target in its place. */
static int swap_dir(const char *path, const char *target)
{
	char dir[160], old[168], *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	snprintf(old, sizeof(old), "%s.old", dir);
	if (rename(dir, old) < 0 || symlink(target, dir) < 0)
		return -1;
	return 0;
}

/*
 * A child connects a guest socket to the switch while still root (the
 * switch's socket may be root's alone), becomes uid/gid, binds the socket
 * at path (its directory must let uid in), and sends n broadcasts tagged
 * tag..tag+n-1: the kernel stamps each with the child's credentials at
 * send time. With swap set, it first moves the socket's directory aside
 * and puts a symlink to swap in its place, so that its name leads there.
 * Returns the child's exit status.
 */
static int send_as(const struct vsw *s, const char *path, uid_t uid,
		   gid_t gid, const char *swap, uint32_t tag, int n)
{
	struct sockaddr_un sa;
	uint8_t buf[128], mac[6];
	int status, fd, i, alen;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		alen = vsw_addr(&sa, s->dgram);
		if (fd < 0 || connect(fd, (struct sockaddr *)&sa, alen) < 0)
			_exit(11);
		if (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 ||
		    setresuid(uid, uid, uid) < 0)
			_exit(12);
		alen = vsw_addr(&sa, path);
		if (bind(fd, (struct sockaddr *)&sa, alen) < 0)
			_exit(10);
		if (swap && swap_dir(path, swap) < 0)
			_exit(14);
		vsw_mac(mac, 0x900 + uid % 256);
		for (i = 0; i < n; i++) {
			size_t len = vsw_frame(buf, vsw_bcast, mac, tag + i, 60);

			if (send(fd, buf, len, 0) != (ssize_t)len)
				_exit(13);
		}
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* A directory under the switch's that every user may bind sockets in. */
static void users_dir(struct __test_metadata *_metadata, const struct vsw *s,
		      char *out, size_t len)
{
	snprintf(out, len, "%s/users", s->dir);
	ASSERT_EQ(0, chmod(s->dir, 0711));
	ASSERT_EQ(0, mkdir(out, 0777));
	ASSERT_EQ(0, chmod(out, 01777));
}

/*
 * A child with real uid @ruid, effective (and saved) uid @euid and gid
 * @gid connects to the stream socket; 0 when the switch hung up on it
 * (refused), 1 when the connection stayed open (accepted).
 */
static int connect_ids(const char *path, uid_t ruid, uid_t euid, gid_t gid)
{
	int status, fd;
	pid_t pid;
	char c;

	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 ||
		    setresuid(ruid, euid, euid) < 0)
			_exit(12);
		fd = vsw_connect(path, SOCK_STREAM);
		if (fd < 0)
			_exit(11);
		/* EOF: refused; the 2 s receive time-out: still connected */
		_exit(recv(fd, &c, 1, 0) == 0 ? 0 : 1);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int connect_as(const char *path, uid_t uid)
{
	return connect_ids(path, uid, uid, uid);
}

/*
 * A child becomes uid/gid, with supp as its one supplementary group unless
 * it is 0, and asks the control socket for its ports:
 * 0 when it got an answer, 1 when the switch closed without one, 12 when
 * it could not connect at all.
 */
static int ctl_as(const struct vsw *s, uid_t uid, gid_t gid, gid_t supp)
{
	char buf[1024];
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd;
		ssize_t n;

		if (setgroups(supp ? 1 : 0, &supp) < 0 ||
		    setresgid(gid, gid, gid) < 0 ||
		    setresuid(uid, uid, uid) < 0)
			_exit(13);
		fd = vsw_connect(s->ctl, SOCK_STREAM);
		if (fd < 0)
			_exit(12);
		if (send(fd, "ports\n", 6, MSG_NOSIGNAL) != 6)
			_exit(1);
		shutdown(fd, SHUT_WR);
		n = recv(fd, buf, sizeof(buf), 0);
		_exit(n > 0 ? 0 : 1);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/*
 * The control socket keeps its own mode whatever --mode says, and a
 * client the file's mode lets in is still refused unless it is root, the
 * switch's user or a member of --ctl-group.
 */
TEST_F(vsw, ctl_access)
{
	struct stat st;
	char buf[256];

	START("--mode", "0666");
	ASSERT_EQ(0, stat(self->s.ctl, &st));
	EXPECT_EQ(0600, st.st_mode & 0777);
	ASSERT_EQ(0, chmod(self->s.dir, 0711));
	/* uid 65534 cannot even connect: the file is root's alone */
	EXPECT_EQ(12, ctl_as(&self->s, 65534, 65534, 0));
	ASSERT_EQ(0, vsw_stop(&self->s));
	vsw_rmdir(&self->s);

	/* open to all by its mode: still only root and the group answered */
	START("--ctl-mode", "0666", "--ctl-group", "4343");
	ASSERT_EQ(0, chmod(self->s.dir, 0711));
	EXPECT_EQ(1, ctl_as(&self->s, 65534, 65534, 0));
	VSW_WAIT_WHILE(vsw_stat(&self->s, NULL, "ctl_refused") < 1);
	EXPECT_EQ(1, vsw_stat(&self->s, NULL, "ctl_refused"));
	/* the group as primary group, and as one of several */
	EXPECT_EQ(0, ctl_as(&self->s, 65534, 4343, 0));
	EXPECT_EQ(0, ctl_as(&self->s, 65534, 65534, 4343));
	EXPECT_EQ(1, ctl_as(&self->s, 65534, 65534, 4344));
	EXPECT_LT(0, vsw_ctl(&self->s, "ports\n", buf, sizeof(buf)));
	VSW_WAIT_WHILE(vsw_stat(&self->s, NULL, "ctl_refused") < 2);
	EXPECT_EQ(2, vsw_stat(&self->s, NULL, "ctl_refused"));
}

TEST_F(vsw, allow_uid)
{
	char users[128], refused[160], allowed[160], group[160];
	int others;

	START("--allow-uid", "0,4242", "--allow-gid", "4343", "--mode", "0666");
	users_dir(_metadata, &self->s, users, sizeof(users));
	snprintf(refused, sizeof(refused), "%s/nobody.sock", users);
	snprintf(allowed, sizeof(allowed), "%s/u4242.sock", users);
	snprintf(group, sizeof(group), "%s/g4343.sock", users);
	/* root is on the list: ordinary guests work */
	join(_metadata, self, 2);

	/* a user not on either list is refused: dropped, counted, no port */
	ASSERT_EQ(0, send_as(&self->s, refused, 65534, 65534, NULL, 0xc0, 5));
	VSW_WAIT_WHILE(vsw_stat(&self->s, NULL, "cred_refused") < 5);
	EXPECT_EQ(5, vsw_stat(&self->s, NULL, "cred_refused"));
	EXPECT_FALSE(vsw_has_port(&self->s, refused));

	/* a listed uid, and a listed primary gid, get through */
	ASSERT_EQ(0, send_as(&self->s, allowed, 4242, 65534, NULL, 0xd0, 1));
	ASSERT_EQ(0, vsw_recv_until(G(0)->fd, 0xd0, &others));
	EXPECT_EQ(0, others);	/* none of the refused frames came first */
	/* (the sender has exited: the next flood finds it gone) */
	EXPECT_TRUE(vsw_has_port(&self->s, allowed));
	ASSERT_EQ(0, send_as(&self->s, group, 65534, 4343, NULL, 0xe0, 1));
	ASSERT_EQ(0, vsw_recv_until(G(1)->fd, 0xe0, &others));
	EXPECT_EQ(1, others);	/* the uid 4242 frame */
	EXPECT_EQ(5, vsw_stat(&self->s, NULL, "cred_refused"));

	/* connected ports are checked at accept (SO_PEERCRED) */
	ASSERT_EQ(0, connect_as(self->s.stream, 65534));
	VSW_WAIT_WHILE(vsw_stat(&self->s, NULL, "cred_refused") < 6);
	EXPECT_EQ(6, vsw_stat(&self->s, NULL, "cred_refused"));
	EXPECT_EQ(1, connect_as(self->s.stream, 4242));
}

/*
 * A child with real uid @ruid and effective uid @euid (gid 65534 both)
 * binds a socket at @path, connects it to the switch and sends one
 * broadcast tagged @tag, then stays until the parent closes *@hold (the
 * switch looks the sender up while it lives).  Returns its pid once the
 * frame is sent, or -1.
 */
static pid_t send_ids(const struct vsw *s, const char *path, uid_t ruid,
		      uid_t euid, uint32_t tag, int *hold)
{
	int ready[2], wait_end[2];
	char c;
	pid_t pid;

	if (pipe(ready) < 0 || pipe(wait_end) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		struct sockaddr_un sa;
		uint8_t buf[128], mac[6];
		size_t len;
		int fd, alen;

		close(ready[0]);
		close(wait_end[1]);
		fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		alen = vsw_addr(&sa, s->dgram);
		if (fd < 0 || connect(fd, (struct sockaddr *)&sa, alen) < 0)
			_exit(11);
		if (setgroups(0, NULL) < 0 ||
		    setresgid(65534, 65534, 65534) < 0 ||
		    setresuid(ruid, euid, 0) < 0)
			_exit(12);
		alen = vsw_addr(&sa, path);
		if (bind(fd, (struct sockaddr *)&sa, alen) < 0)
			_exit(10);
		vsw_mac(mac, 0xb00 + tag);
		len = vsw_frame(buf, vsw_bcast, mac, tag, 60);
		if (send(fd, buf, len, 0) != (ssize_t)len)
			_exit(13);
		if (write(ready[1], "s", 1) != 1)
			_exit(14);
		alarm(20);
		/* until the parent closes its end */
		_exit(read(wait_end[0], &c, 1) < 0 ? 15 : 0);
	}
	close(ready[1]);
	close(wait_end[0]);
	*hold = wait_end[1];
	if (read(ready[0], &c, 1) != 1)
		pid = -1;
	close(ready[0]);
	return pid;
}

/* The child of send_ids goes; its exit status */
static int send_ids_end(pid_t pid, int hold)
{
	int status;

	close(hold);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/*
 * Datagrams and connections are judged by the same ids, the effective
 * ones: a sender whose real uid is listed but whose effective one is not
 * is refused, and the other way round let in, on both kinds of port.  The
 * kernel stamps datagrams with the real ids, so without the switch
 * looking further the first would get in and the second not.
 */
TEST_F(vsw, cred_effective)
{
	char users[128], eff_root[160], real_root[160];
	int others, hold;
	pid_t pid;

	START("--allow-uid", "0", "--mode", "0666");
	users_dir(_metadata, &self->s, users, sizeof(users));
	snprintf(eff_root, sizeof(eff_root), "%s/eff-root.sock", users);
	snprintf(real_root, sizeof(real_root), "%s/real-root.sock", users);
	join(_metadata, self, 1);

	/* real 65534, effective 0: a set-uid root program; let in */
	pid = send_ids(&self->s, eff_root, 65534, 0, 0x31, &hold);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, vsw_recv_until(G(0)->fd, 0x31, &others));
	EXPECT_TRUE(vsw_has_port(&self->s, eff_root));
	EXPECT_EQ(0, vsw_stat(&self->s, NULL, "cred_refused"));
	EXPECT_EQ(0, send_ids_end(pid, hold));

	/* real 0, effective 65534: root acting as nobody; refused */
	pid = send_ids(&self->s, real_root, 0, 65534, 0x32, &hold);
	ASSERT_LT(0, pid);
	VSW_WAIT_WHILE(vsw_stat(&self->s, NULL, "cred_refused") < 1);
	EXPECT_EQ(1, vsw_stat(&self->s, NULL, "cred_refused"));
	EXPECT_FALSE(vsw_has_port(&self->s, real_root));
	EXPECT_EQ(0, send_ids_end(pid, hold));
	EXPECT_EQ(0, vsw_stat(&self->s, NULL, "cred_unseen"));

	/* connections the same way (SO_PEERCRED has the effective ids) */
	EXPECT_EQ(1, connect_ids(self->s.stream, 65534, 0, 65534));
	EXPECT_EQ(0, connect_ids(self->s.stream, 0, 65534, 65534));
	VSW_WAIT_WHILE(vsw_stat(&self->s, NULL, "cred_refused") < 2);
	EXPECT_EQ(2, vsw_stat(&self->s, NULL, "cred_refused"));
}

/*
 * A child that becomes uid 65534 and binds @n sockets in @dir, each of
 * which sends one broadcast; the first then sends @extra more, each from
 * a MAC of its own.  It stays (its sockets stay bound) until killed;
 * returns its pid once it has sent everything, or -1.
 */
static pid_t user_senders(const struct vsw *s, const char *dir, int first,
			  int n, int extra)
{
	int pipefd[2], i, j;
	char done;
	pid_t pid;

	if (pipe(pipefd) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		struct sockaddr_un sa;
		uint8_t buf[128], mac[6];
		char path[sizeof(sa.sun_path)];
		int fd[8], alen;

		close(pipefd[0]);
		if (n > 8 || setgroups(0, NULL) < 0 ||
		    setresgid(65534, 65534, 65534) < 0 ||
		    setresuid(65534, 65534, 65534) < 0)
			_exit(12);
		for (i = 0; i < n; i++) {
			fd[i] = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
			if (snprintf(path, sizeof(path), "%s/u%d.sock", dir,
				     first + i) >= (int)sizeof(path))
				_exit(15);
			alen = vsw_addr(&sa, path);
			if (fd[i] < 0 || bind(fd[i], (struct sockaddr *)&sa, alen))
				_exit(10);
			alen = vsw_addr(&sa, s->dgram);
			if (connect(fd[i], (struct sockaddr *)&sa, alen) < 0)
				_exit(11);
			for (j = 0; j < 1 + (i ? 0 : extra); j++) {
				size_t len;

				vsw_mac(mac, 0xa00 + i * 64 + j);
				len = vsw_frame(buf, vsw_bcast, mac, 0xa0 + j, 60);
				if (send(fd[i], buf, len, 0) != (ssize_t)len)
					_exit(13);
			}
		}
		if (write(pipefd[1], "x", 1) != 1)
			_exit(14);
		pause();
		_exit(0);
	}
	close(pipefd[1]);
	i = read(pipefd[0], &done, 1);
	close(pipefd[0]);
	if (i != 1) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -1;
	}
	return pid;
}

/*
 * One user other than root holds at most --max-user-ports ports, and
 * their ports together at most --fdb-user-max forwarding entries; root
 * (the ordinary guests here) is not held back by what that user took.
 */
TEST_F(vsw, user_limits)
{
	char users[128], path[160];
	pid_t pid;
	int i;

	START("--mode", "0666", "--max-user-ports", "3", "--fdb-user-max", "5");
	users_dir(_metadata, &self->s, users, sizeof(users));
	pid = user_senders(&self->s, users, 0, 5, 10);
	ASSERT_LT(0, pid);
	VSW_WAIT_WHILE(vsw_stat(&self->s, NULL, "user_ports_full") < 2);
	EXPECT_EQ(2, vsw_stat(&self->s, NULL, "user_ports_full"));
	for (i = 0; i < 5; i++) {
		snprintf(path, sizeof(path), "%s/u%d.sock", users, i);
		EXPECT_EQ(i < 3, vsw_has_port(&self->s, path));
	}
	/* u0 sent from eleven MACs first: five fit the user's entries */
	snprintf(path, sizeof(path), "%s/u0.sock", users);
	EXPECT_EQ(6, vsw_stat(&self->s, path, "fdb_full"));
	/* and u1, a port of its own, finds the user's share taken */
	snprintf(path, sizeof(path), "%s/u1.sock", users);
	EXPECT_EQ(1, vsw_stat(&self->s, path, "fdb_full"));
	/* root's guests still get ports and entries */
	join(_metadata, self, 2);
	EXPECT_TRUE(vsw_fdb_has(&self->s, G(1)->mac));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/*
 * One process of such a user holds at most --max-process-ports of the
 * user's ports; another process of the same user has a share of its own.
 */
TEST_F(vsw, process_limits)
{
	char users[128], path[160];
	pid_t pid[2];
	int i;

	START("--mode", "0666", "--max-process-ports", "2");
	users_dir(_metadata, &self->s, users, sizeof(users));
	pid[0] = user_senders(&self->s, users, 0, 4, 0);
	ASSERT_LT(0, pid[0]);
	VSW_WAIT_WHILE(vsw_stat(&self->s, NULL, "process_ports_full") < 2);
	EXPECT_EQ(2, vsw_stat(&self->s, NULL, "process_ports_full"));
	pid[1] = user_senders(&self->s, users, 4, 2, 0);
	ASSERT_LT(0, pid[1]);
	snprintf(path, sizeof(path), "%s/u5.sock", users);
	VSW_WAIT_WHILE(!vsw_has_port(&self->s, path));
	for (i = 0; i < 6; i++) {
		snprintf(path, sizeof(path), "%s/u%d.sock", users, i);
		EXPECT_EQ(i < 2 || i >= 4, vsw_has_port(&self->s, path));
	}
	EXPECT_EQ(2, vsw_stat(&self->s, NULL, "process_ports_full"));
	EXPECT_EQ(0, vsw_stat(&self->s, NULL, "user_ports_full"));
	for (i = 0; i < 2; i++) {
		kill(pid[i], SIGKILL);
		waitpid(pid[i], NULL, 0);
	}
}

/* A datagram port silent for --port-age goes, and comes back when it sends */
TEST_F(vsw, port_age)
{
	char name[108];
	uint8_t buf[2048];
	int others, i;

	START("--port-age", "1");
	join(_metadata, self, 2);
	snprintf(name, sizeof(name), "%s", G(0)->path);
	/* G1 keeps talking, G0 falls silent (but reads what comes) */
	for (i = 0; i < 50 && vsw_has_port(&self->s, name); i++) {
		ASSERT_EQ(0, vsw_send(&self->s, G(1), vsw_bcast, 0x30, 60));
		while (recv(G(0)->fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
			;
		vsw_pause_ms(100);
	}
	EXPECT_FALSE(vsw_has_port(&self->s, name));
	EXPECT_LE(1, vsw_stat(&self->s, NULL, "ports_aged"));
	EXPECT_TRUE(vsw_has_port(&self->s, G(1)->path));
	ASSERT_EQ(0, vsw_send(&self->s, G(0), vsw_bcast, 0x31, 60));
	ASSERT_EQ(0, vsw_recv_until(G(1)->fd, 0x31, &others));
	EXPECT_TRUE(vsw_has_port(&self->s, name));
}

/*
 * --max-memory bounds the frames queued in all: a guest that does not
 * read cannot make the switch hold more, what does not fit is dropped
 * and counted, and once the guest reads, frames flow again.
 */
TEST_F(vsw, max_memory)
{
	uint8_t buf[16384];
	int i, others;

	START("--max-memory", "1");
	join(_metadata, self, 2);
	for (i = 0; i < 200; i++)
		ASSERT_EQ(0, vsw_send(&self->s, G(1), G(0)->mac, 0x100 + i, 9000));
	VSW_WAIT_WHILE(vsw_stat(&self->s, NULL, "mem_refused") < 1);
	EXPECT_LT(0, vsw_stat(&self->s, NULL, "mem_refused"));
	EXPECT_GE(1 << 20, vsw_stat(&self->s, NULL, "mem_bytes"));
	/* G0 reads everything: the memory is given back */
	for (i = 0; i < 500 && vsw_stat(&self->s, NULL, "mem_bytes") > 0; i++) {
		while (recv(G(0)->fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
			;
		vsw_pause_ms(10);
	}
	EXPECT_EQ(0, vsw_stat(&self->s, NULL, "mem_bytes"));
	ASSERT_EQ(0, vsw_send(&self->s, G(1), G(0)->mac, 0x400, 9000));
	ASSERT_EQ(0, vsw_recv_until(G(0)->fd, 0x400, &others));
}

/*
 * Storm control: a guest flooding broadcasts gets --bcast-limit a second
 * through (a second's worth at once), the rest are dropped (rx_storm);
 * its unicast is not held back.
 */
TEST_F(vsw, bcast_limit)
{
	int i, got = 0, others;
	uint8_t buf[2048];
	long long storm;

	START("--bcast-limit", "50");
	join(_metadata, self, 2);
	for (i = 0; i < 300; i++)
		ASSERT_EQ(0, vsw_send(&self->s, G(0), vsw_bcast, 0x200 + i, 60));
	ASSERT_EQ(0, vsw_send(&self->s, G(0), G(1)->mac, 0x500, 60));
	ASSERT_EQ(0, vsw_recv_until(G(1)->fd, 0x500, &others));
	while (recv(G(1)->fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		others++;
	got = others;
	storm = vsw_stat(&self->s, G(0)->path, "rx_storm");
	/* the bucket started full (50, less the join's announce), and
	 * refilled at 50/s while the burst went out */
	EXPECT_GE(100, got);
	EXPECT_LE(20, got);
	EXPECT_EQ(300 - got, storm);
}

/* Without --allow-*, anyone who can reach the socket may send. */
TEST_F(vsw, allow_uid_off)
{
	char users[128], path[160];
	int others;

	START();
	join(_metadata, self, 1);
	users_dir(_metadata, &self->s, users, sizeof(users));
	snprintf(path, sizeof(path), "%s/nobody.sock", users);
	ASSERT_EQ(0, send_as(&self->s, path, 65534, 65534, NULL, 0xf0, 1));
	ASSERT_EQ(0, vsw_recv_until(G(0)->fd, 0xf0, &others));
	EXPECT_EQ(0, vsw_stat(&self->s, NULL, "cred_refused"));
}

/* ---- where a dgram peer's frames go ------------------------------------ */

/* A dgram socket bound at path (relative to the current directory or not). */
static int bound_socket(const char *path)
{
	struct sockaddr_un sa;
	int fd, alen = vsw_addr(&sa, path);

	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&sa, alen) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int send_frame(const struct vsw *s, int fd, const uint8_t *src,
		      uint32_t tag)
{
	uint8_t buf[64];
	size_t len = vsw_frame(buf, vsw_bcast, src, tag, 60);

	return vsw_send_raw(s, fd, buf, len);
}

/* Frames with tag that reach fd within ms; other frames are skipped. */
static int copies(int fd, uint32_t tag, int ms)
{
	uint64_t deadline = vsw_now_ms() + ms;
	uint8_t buf[2048];
	int n, got = 0;

	while (vsw_now_ms() < deadline) {
		n = vsw_recv(fd, buf, sizeof(buf), (int)(deadline - vsw_now_ms()));
		if (n < 0)
			break;
		if (n >= 18 && vsw_tag(buf) == tag)
			got++;
	}
	return got;
}

/*
 * A relative name would be resolved in the switch's working directory,
 * not the sender's: it is refused, and the sender's frames go nowhere.
 */
TEST_F(vsw, peer_relative_name)
{
	uint8_t mac[6];
	int fd;

	START();
	join(_metadata, self, 2);
	ASSERT_EQ(0, chdir(self->s.dir));
	fd = bound_socket("rel.sock");
	ASSERT_LE(0, fd);
	vsw_mac(mac, 0x51);
	ASSERT_EQ(0, send_frame(&self->s, fd, mac, 0x5100));
	VSW_WAIT_WHILE(vsw_stat(&self->s, NULL, "addr_refused") < 1);
	EXPECT_EQ(1, vsw_stat(&self->s, NULL, "addr_refused"));
	EXPECT_FALSE(vsw_has_port(&self->s, "rel.sock"));
	EXPECT_FALSE(vsw_fdb_has(&self->s, mac));
	/* the refused broadcast reached nobody: the marker comes first */
	expect_only_marker(_metadata, self, 1, 0x1, 0x5101);
	close(fd);
}

/*
 * A guest that became a port swaps its directory for a symlink to the
 * switch's, so that its name now leads to the switch's own socket. The
 * switch keeps sending to the socket it found at first: one broadcast
 * reaches each guest once, and nothing loops back into the switch.
 */
TEST_F(vsw, peer_swapped_after_join)
{
	char dir[128], path[160];
	uint8_t mac[6];
	int fd;

	START();
	join(_metadata, self, 2);
	snprintf(dir, sizeof(dir), "%s/evil", self->s.dir);
	ASSERT_EQ(0, mkdir(dir, 0700));
	/* the same base name as the switch's own socket */
	snprintf(path, sizeof(path), "%s/dgram.sock", dir);
	fd = bound_socket(path);
	ASSERT_LE(0, fd);
	vsw_mac(mac, 0x52);
	ASSERT_EQ(0, send_frame(&self->s, fd, mac, 0x5200));
	EXPECT_EQ(1, copies(G(0)->fd, 0x5200, 500));
	ASSERT_TRUE(vsw_has_port(&self->s, path));

	ASSERT_EQ(0, swap_dir(path, self->s.dir));
	ASSERT_EQ(0, vsw_send(&self->s, G(1), vsw_bcast, 0x5201, 60));
	EXPECT_EQ(1, copies(G(0)->fd, 0x5201, 500));
	EXPECT_EQ(1, copies(fd, 0x5201, 100));
	EXPECT_FALSE(vsw_has_port(&self->s, self->s.dgram));
	EXPECT_GT(10, vsw_stat(&self->s, G(0)->path, "tx_frames"));
	/* its own frames still come from its port */
	ASSERT_EQ(0, send_frame(&self->s, fd, mac, 0x5202));
	EXPECT_EQ(1, copies(G(1)->fd, 0x5202, 500));
	EXPECT_EQ(0, vsw_stat(&self->s, NULL, "addr_refused"));
	close(fd);
}

/* The same swap before its first frame: that name is refused outright. */
TEST_F(vsw, peer_swapped_before_join)
{
	char dir[128], path[160];

	START();
	join(_metadata, self, 2);
	snprintf(dir, sizeof(dir), "%s/evil", self->s.dir);
	ASSERT_EQ(0, mkdir(dir, 0700));
	snprintf(path, sizeof(path), "%s/dgram.sock", dir);
	ASSERT_EQ(0, send_as(&self->s, path, 0, 0, self->s.dir, 0x5300, 3));
	VSW_WAIT_WHILE(vsw_stat(&self->s, NULL, "addr_refused") < 3);
	EXPECT_EQ(3, vsw_stat(&self->s, NULL, "addr_refused"));
	EXPECT_FALSE(vsw_has_port(&self->s, path));
	EXPECT_FALSE(vsw_has_port(&self->s, self->s.dgram));
	expect_only_marker(_metadata, self, 1, 0x1, 0x5303);
}

/*
 * The socket file itself, not its directory, swapped for a symlink to the
 * switch's own socket before the first frame: refused, nothing loops.
 */
TEST_F(vsw, peer_file_symlinked)
{
	struct sockaddr_un sa;
	char path[sizeof(sa.sun_path)], aside[sizeof(sa.sun_path) + 8];
	uint8_t mac[6];
	int fd, alen, i;

	START();
	join(_metadata, self, 2);
	snprintf(path, sizeof(path), "%s/link.sock", self->s.dir);
	snprintf(aside, sizeof(aside), "%s.aside", path);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ASSERT_LE(0, fd);
	alen = vsw_addr(&sa, path);
	ASSERT_EQ(0, bind(fd, (struct sockaddr *)&sa, alen));
	alen = vsw_addr(&sa, self->s.dgram);
	ASSERT_EQ(0, connect(fd, (struct sockaddr *)&sa, alen));
	ASSERT_EQ(0, rename(path, aside));
	ASSERT_EQ(0, symlink(self->s.dgram, path));
	vsw_mac(mac, 0x955);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, send_frame(&self->s, fd, mac, 0x5500 + i));
	VSW_WAIT_WHILE(vsw_stat(&self->s, NULL, "addr_refused") < 3);
	EXPECT_EQ(3, vsw_stat(&self->s, NULL, "addr_refused"));
	EXPECT_FALSE(vsw_has_port(&self->s, path));
	EXPECT_FALSE(vsw_has_port(&self->s, self->s.dgram));
	expect_only_marker(_metadata, self, 1, 0x1, 0x5503);
	close(fd);
	unlink(path);
	unlink(aside);
}

/*
 * A name bound in a mount namespace of the sender's own, where the
 * switch's view of that path holds no socket: refused, no port.
 */
TEST_F(vsw, peer_other_mount_ns)
{
	struct sockaddr_un sa;
	char dir[sizeof(sa.sun_path) - 16], path[sizeof(sa.sun_path)];
	int status;
	pid_t pid;

	START();
	join(_metadata, self, 2);
	snprintf(dir, sizeof(dir), "%s/ns", self->s.dir);
	ASSERT_EQ(0, mkdir(dir, 0700));
	snprintf(path, sizeof(path), "%s/g.sock", dir);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		uint8_t mac[6];
		int fd, alen, i;

		if (unshare(CLONE_NEWNS) < 0 ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
		    mount("vsw-ns", dir, "tmpfs", 0, NULL) < 0)
			_exit(10);
		fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		alen = vsw_addr(&sa, path);
		if (fd < 0 || bind(fd, (struct sockaddr *)&sa, alen) < 0)
			_exit(11);
		alen = vsw_addr(&sa, self->s.dgram);
		if (connect(fd, (struct sockaddr *)&sa, alen) < 0)
			_exit(12);
		vsw_mac(mac, 0x956);
		for (i = 0; i < 2; i++)
			if (send_frame(&self->s, fd, mac, 0x5600 + i) < 0)
				_exit(13);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	VSW_WAIT_WHILE(vsw_stat(&self->s, NULL, "addr_refused") < 2);
	EXPECT_EQ(2, vsw_stat(&self->s, NULL, "addr_refused"));
	EXPECT_FALSE(vsw_has_port(&self->s, path));
	expect_only_marker(_metadata, self, 1, 0x1, 0x5602);
}

/*
 * A user points its name at another user's socket before its first
 * frame: refused, so the victim gets each broadcast once, not twice.
 * A name that is a port already is refused to any other uid.
 */
TEST_F(vsw, peer_other_owner)
{
	char users[128], victim[160], evil[160], path[160];
	int fd;

	START("--mode", "0666");
	users_dir(_metadata, &self->s, users, sizeof(users));
	join(_metadata, self, 1);
	/* G1, root's, bound in a directory of its own */
	snprintf(victim, sizeof(victim), "%s/v", users);
	ASSERT_EQ(0, mkdir(victim, 0755));
	ASSERT_EQ(0, vsw_guest_open(G(1), &self->s, "users/v/g.sock", 2));
	announce(_metadata, self, 1);

	snprintf(evil, sizeof(evil), "%s/e", users);
	ASSERT_EQ(0, mkdir(evil, 0755));
	ASSERT_EQ(0, chown(evil, 4242, 4242));
	snprintf(path, sizeof(path), "%s/e/g.sock", users);
	ASSERT_EQ(0, send_as(&self->s, path, 4242, 4242, victim, 0x5400, 1));
	VSW_WAIT_WHILE(vsw_stat(&self->s, NULL, "addr_refused") < 1);
	EXPECT_EQ(1, vsw_stat(&self->s, NULL, "addr_refused"));
	EXPECT_FALSE(vsw_has_port(&self->s, path));
	ASSERT_EQ(0, vsw_send(&self->s, G(0), vsw_bcast, 0x5401, 60));
	EXPECT_EQ(1, copies(G(1)->fd, 0x5401, 500));

	/* uid 4242 becomes a port at a name of its own ... */
	snprintf(path, sizeof(path), "%s/u4242.sock", users);
	ASSERT_EQ(0, send_as(&self->s, path, 4242, 4242, NULL, 0x5402, 1));
	EXPECT_EQ(1, copies(G(0)->fd, 0x5402, 500));
	ASSERT_TRUE(vsw_has_port(&self->s, path));
	/* ... and root, at that name once 4242 left it, is not that port */
	ASSERT_EQ(0, unlink(path));
	fd = bound_socket(path);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, send_frame(&self->s, fd, G(1)->mac, 0x5403));
	VSW_WAIT_WHILE(vsw_stat(&self->s, NULL, "addr_refused") < 2);
	EXPECT_EQ(2, vsw_stat(&self->s, NULL, "addr_refused"));
	expect_only_marker(_metadata, self, 1, 0x1, 0x5404);
	close(fd);
}

/*
 * The sender's name no longer leads to its socket when its first frame
 * arrives: the file is gone, or a plain file stands in its place.  Both
 * are refused and counted; neither becomes a port or reaches a guest.
 */
TEST_F(vsw, peer_name_not_a_socket)
{
	char path[2][160];
	uint8_t mac[6];
	int fd[2], i;

	START();
	join(_metadata, self, 2);
	for (i = 0; i < 2; i++) {
		snprintf(path[i], sizeof(path[i]), "%s/gone%d.sock", self->s.dir, i);
		fd[i] = bound_socket(path[i]);
		ASSERT_LE(0, fd[i]);
		ASSERT_EQ(0, unlink(path[i]));
	}
	ASSERT_EQ(0, close(open(path[1], O_WRONLY | O_CREAT, 0600)));
	for (i = 0; i < 2; i++) {
		vsw_mac(mac, 0x58 + i);
		ASSERT_EQ(0, send_frame(&self->s, fd[i], mac, 0x5800 + i));
		VSW_WAIT_WHILE(vsw_stat(&self->s, NULL, "addr_refused") < i + 1);
		EXPECT_FALSE(vsw_has_port(&self->s, path[i]));
	}
	EXPECT_EQ(2, vsw_stat(&self->s, NULL, "addr_refused"));
	expect_only_marker(_metadata, self, 1, 0x1, 0x5802);
	for (i = 0; i < 2; i++)
		close(fd[i]);
}

/* A guest that restarts binds its name anew; its port follows it. */
TEST_F(vsw, peer_restarted)
{
	START();
	join(_metadata, self, 3);
	vsw_guest_close(G(2));
	ASSERT_EQ(0, unlink(G(2)->path));
	ASSERT_EQ(0, guest_open(self, 2));
	expect_only_marker(_metadata, self, 0, 0x6, 0x5500);
	EXPECT_EQ(1, vsw_stat(&self->s, NULL, "peer_repinned"));
	EXPECT_EQ(0, vsw_stat(&self->s, NULL, "dead_peers"));
}

/* The next frame on fd within VSW_WAIT_MS, and who sent it */
static int recv_from(int fd, uint8_t *buf, size_t len, struct sockaddr_un *sa,
		     socklen_t *salen)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	*salen = sizeof(*sa);
	if (poll(&pfd, 1, VSW_WAIT_MS) != 1)
		return -1;
	return recvfrom(fd, buf, len, MSG_DONTWAIT, (struct sockaddr *)sa,
			salen);
}

/*
 * A plain guest is sent to by a socket connected once to its pinned
 * socket, not by name: its frames come from an unnamed socket. A guest
 * that connects to the switch's socket afterwards (as UML's driver does)
 * refuses that one, and gets its frames from the switch's address again.
 */
TEST_F(vsw, peer_plain_own_socket)
{
	struct sockaddr_un from, sw;
	socklen_t flen;
	int alen, others;

	START();
	join(_metadata, self, 3);
	ASSERT_EQ(0, vsw_send(&self->s, G(0), vsw_bcast, 0x5600, 60));
	ASSERT_EQ(60, recv_from(G(2)->fd, self->buf, sizeof(self->buf), &from,
				&flen));
	EXPECT_EQ(0x5600u, vsw_tag(self->buf));
	/* unnamed: no address, or only its family */
	EXPECT_GE(sizeof(sa_family_t), flen);

	alen = vsw_addr(&sw, self->s.dgram);
	ASSERT_EQ(0, connect(G(2)->fd, (struct sockaddr *)&sw, alen));
	ASSERT_EQ(0, vsw_send(&self->s, G(0), vsw_bcast, 0x5601, 60));
	ASSERT_EQ(60, recv_from(G(2)->fd, self->buf, sizeof(self->buf), &from,
				&flen));
	EXPECT_EQ(0x5601u, vsw_tag(self->buf));
	EXPECT_EQ((socklen_t)alen, flen);
	EXPECT_STREQ(self->s.dgram, from.sun_path);
	/* G1, connected to nobody, still by its own */
	ASSERT_EQ(0, vsw_recv_until(G(1)->fd, 0x5600, &others));
	ASSERT_EQ(60, recv_from(G(1)->fd, self->buf, sizeof(self->buf), &from,
				&flen));
	EXPECT_EQ(0x5601u, vsw_tag(self->buf));
	/* unnamed: no address, or only its family */
	EXPECT_GE(sizeof(sa_family_t), flen);
	EXPECT_EQ(0, vsw_stat(&self->s, G(2)->path, "tx_errors"));
}

/* Lines of the switch's log that contain what */
static int log_lines(const struct vsw *s, const char *what)
{
	char line[1024];
	FILE *f = fopen(s->log, "r");
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += !!strstr(line, what);
	fclose(f);
	return n;
}

/*
 * A guest that does not read refuses the switch's sends once its socket
 * holds net.unix.max_dgram_qlen datagrams (EAGAIN): counted for the port
 * (tx_retries) and the switch (tx_peer_full), said once a second at most,
 * and the frames wait for it.
 */
TEST_F(vsw, peer_queue_full)
{
	int i, n, qlen = 10, frames, got = 0;
	uint64_t t0;
	FILE *f;

	f = fopen("/proc/sys/net/unix/max_dgram_qlen", "r");
	if (f) {
		if (fscanf(f, "%d", &qlen) != 1)
			qlen = 10;
		fclose(f);
	}
	frames = qlen + 20 < 1000 ? qlen + 20 : 1000;
	START();
	join(_metadata, self, 2);
	t0 = vsw_now_ms();
	for (i = 0; i < frames; i++)
		ASSERT_EQ(0, vsw_send(&self->s, G(0), G(1)->mac, i, 60));
	VSW_WAIT_WHILE(vsw_stat(&self->s, NULL, "tx_peer_full") < 1);
	EXPECT_LE(1, vsw_stat(&self->s, NULL, "tx_peer_full"));
	EXPECT_LE(1, vsw_stat(&self->s, G(1)->path, "tx_retries"));
	n = log_lines(&self->s, "tx_peer_full");
	EXPECT_LE(1, n);
	EXPECT_GE(1 + (int)((vsw_now_ms() - t0) / 1000), n);
	/* nothing was lost: all of them come once it reads */
	while (got < frames && vsw_recv(G(1)->fd, self->buf, sizeof(self->buf),
					VSW_WAIT_MS) == 60)
		EXPECT_EQ((uint32_t)got++, vsw_tag(self->buf));
	EXPECT_EQ(frames, got);
	EXPECT_EQ(0, vsw_stat(&self->s, G(1)->path, "tx_queue_full"));
}

/* ---- virtio-net headers negotiated on the --dgram socket --------------- */

#define NEGO_HELLO	1
#define NEGO_MODE	2

static size_t nego_msg(uint8_t *m, uint8_t type, uint16_t flags)
{
	memcpy(m, "VECN", 4);
	m[4] = 1;
	m[5] = type;
	m[6] = flags >> 8;
	m[7] = flags;
	m[8] = 0;
	m[9] = 1;
	m[10] = 0;
	m[11] = 18;
	return 12;
}

/* The next datagram on fd is MODE(vnet) from the switch. */
static bool got_mode(int fd)
{
	uint8_t m[64];
	int n = vsw_recv(fd, m, sizeof(m), VSW_WAIT_MS);

	/* bit 1: the switch offers this guest channels */
	return n == 12 && !memcmp(m, "VECN", 4) && m[4] == 1 &&
	       m[5] == NEGO_MODE && m[6] == 0 && (m[7] & ~2) == 1;
}

/* Guest i asks for headers, is answered, and switches over itself. */
static void negotiate(struct __test_metadata *_metadata,
		      FIXTURE_DATA(vsw) *self, int i)
{
	uint8_t m[12];

	ASSERT_EQ(0, vsw_send_raw(&self->s, G(i)->fd, m,
				  nego_msg(m, NEGO_HELLO, 1)));
	ASSERT_TRUE(got_mode(G(i)->fd));
	ASSERT_EQ(0, vsw_send_raw(&self->s, G(i)->fd, m,
				  nego_msg(m, NEGO_MODE, 1)));
}

/* A frame with an all-zero virtio-net header in front, from guest i. */
static int send_vnet(const struct vsw *s, const struct vsw_guest *g,
		     const uint8_t *dst, uint32_t tag, size_t len)
{
	uint8_t buf[2048];

	memset(buf, 0, 10);
	len = vsw_frame(buf + 10, dst, g->mac, tag, len);
	return vsw_send_raw(s, g->fd, buf, 10 + len);
}

/*
 * A guest that negotiated sends and receives with headers; a plain guest
 * on the same socket never sees one, and `ports` shows which is which.
 */
TEST_F(vsw, nego_headers)
{
	char buf[4096];
	int n;

	START();
	join(_metadata, self, 2);
	negotiate(_metadata, self, 0);
	EXPECT_EQ(1, vsw_stat(&self->s, G(0)->path, "rx_hello"));
	EXPECT_EQ(1, vsw_stat(&self->s, G(0)->path, "rx_mode"));

	ASSERT_EQ(0, send_vnet(&self->s, G(0), G(1)->mac, 0x6100, 200));
	n = vsw_recv(G(1)->fd, self->buf, sizeof(self->buf), VSW_WAIT_MS);
	ASSERT_EQ(200, n);
	EXPECT_EQ(0x6100u, vsw_tag(self->buf));
	EXPECT_TRUE(vsw_frame_ok(self->buf, n));

	ASSERT_EQ(0, vsw_send(&self->s, G(1), G(0)->mac, 0x6101, 300));
	n = vsw_recv(G(0)->fd, self->buf, sizeof(self->buf), VSW_WAIT_MS);
	ASSERT_EQ(310, n);
	EXPECT_EQ(0, memcmp(self->buf, "\0\0\0\0\0\0\0\0\0\0", 10));
	EXPECT_EQ(0x6101u, vsw_tag(self->buf + 10));
	EXPECT_TRUE(vsw_frame_ok(self->buf + 10, n - 10));

	ASSERT_LT(0, vsw_ctl(&self->s, "ports\n", buf, sizeof(buf)));
	EXPECT_NE(NULL, strstr(buf, "vnet")) TH_LOG("%s", buf);
	EXPECT_NE(NULL, strstr(buf, "dgram")) TH_LOG("%s", buf);
}

/*
 * Frames queued before the answer go plain, the answer itself, then
 * headers: the guest is never handed a frame in the wrong format.
 */
TEST_F(vsw, nego_order)
{
	uint8_t m[12];
	int i, n;

	START();
	join(_metadata, self, 2);
	/* G0 does not read for now: frames for it queue up in the kernel */
	for (i = 0; i < 5; i++)
		ASSERT_EQ(0, vsw_send(&self->s, G(1), G(0)->mac, 0x6200 + i, 100));
	ASSERT_EQ(0, vsw_send_raw(&self->s, G(0)->fd, m,
				  nego_msg(m, NEGO_HELLO, 1)));
	ASSERT_EQ(0, vsw_send(&self->s, G(1), G(0)->mac, 0x6205, 100));
	for (i = 0; i < 5; i++) {
		n = vsw_recv(G(0)->fd, self->buf, sizeof(self->buf), VSW_WAIT_MS);
		ASSERT_EQ(100, n);
		EXPECT_EQ(0x6200u + i, vsw_tag(self->buf));
	}
	ASSERT_TRUE(got_mode(G(0)->fd));
	n = vsw_recv(G(0)->fd, self->buf, sizeof(self->buf), VSW_WAIT_MS);
	ASSERT_EQ(110, n);
	EXPECT_EQ(0x6205u, vsw_tag(self->buf + 10));
	/* until G0 says MODE, its own frames are plain */
	ASSERT_EQ(0, vsw_send(&self->s, G(0), G(1)->mac, 0x6206, 100));
	n = vsw_recv(G(1)->fd, self->buf, sizeof(self->buf), VSW_WAIT_MS);
	ASSERT_EQ(100, n);
	EXPECT_EQ(0x6206u, vsw_tag(self->buf));
}

/* The hub does not negotiate: a HELLO is counted and goes unanswered. */
TEST_F(vsw, nego_hub)
{
	uint8_t m[12];

	START("--hub");
	join(_metadata, self, 2);
	ASSERT_EQ(0, vsw_send_raw(&self->s, G(0)->fd, m,
				  nego_msg(m, NEGO_HELLO, 1)));
	VSW_WAIT_WHILE(vsw_stat(&self->s, G(0)->path, "rx_hello") < 1);
	EXPECT_EQ(1, vsw_stat(&self->s, G(0)->path, "rx_hello"));
	/* the next datagram G0 gets is G1's marker, not an answer */
	expect_only_marker(_metadata, self, 1, 0x1, 0x6300);
	EXPECT_EQ(0, vsw_stat(&self->s, G(1)->path, "rx_frames") - 2);
}

/*
 * Bad negotiation datagrams are counted and change nothing; a HELLO from
 * a port that carries headers starts it over in plain frames.
 */
TEST_F(vsw, nego_bad)
{
	uint8_t m[16];
	int n;

	START();
	join(_metadata, self, 2);
	nego_msg(m, NEGO_HELLO, 1);
	ASSERT_EQ(0, vsw_send_raw(&self->s, G(0)->fd, m, 8));	/* truncated */
	m[12] = 0;
	ASSERT_EQ(0, vsw_send_raw(&self->s, G(0)->fd, m, 13));	/* too long */
	m[4] = 2;						/* version */
	ASSERT_EQ(0, vsw_send_raw(&self->s, G(0)->fd, m, 12));
	nego_msg(m, 9, 1);					/* type */
	ASSERT_EQ(0, vsw_send_raw(&self->s, G(0)->fd, m, 12));
	ASSERT_EQ(0, vsw_send_raw(&self->s, G(0)->fd, "VEC", 3));	/* runt */
	VSW_WAIT_WHILE(vsw_stat(&self->s, G(0)->path, "rx_nego_bad") < 4);
	EXPECT_EQ(4, vsw_stat(&self->s, G(0)->path, "rx_nego_bad"));
	EXPECT_EQ(1, vsw_stat(&self->s, G(0)->path, "rx_runt"));
	EXPECT_EQ(0, vsw_stat(&self->s, G(0)->path, "rx_hello"));
	/* none of it was answered, or forwarded */
	EXPECT_TRUE(vsw_quiet(G(0)->fd));
	expect_only_marker(_metadata, self, 0, 0x2, 0x6400);

	negotiate(_metadata, self, 0);
	/* again: plain both ways until the new MODE */
	ASSERT_EQ(0, vsw_send_raw(&self->s, G(0)->fd, m,
				  nego_msg(m, NEGO_HELLO, 1)));
	ASSERT_TRUE(got_mode(G(0)->fd));
	EXPECT_EQ(1, vsw_stat(&self->s, G(0)->path, "rx_hello_again"));
	ASSERT_EQ(0, vsw_send(&self->s, G(0), G(1)->mac, 0x6401, 100));
	n = vsw_recv(G(1)->fd, self->buf, sizeof(self->buf), VSW_WAIT_MS);
	ASSERT_EQ(100, n);
	EXPECT_EQ(0x6401u, vsw_tag(self->buf));
	/* a HELLO without the header flag gets no answer: plain it stays */
	ASSERT_EQ(0, vsw_send_raw(&self->s, G(0)->fd, m,
				  nego_msg(m, NEGO_HELLO, 0)));
	ASSERT_EQ(0, vsw_send(&self->s, G(1), G(0)->mac, 0x6402, 100));
	n = vsw_recv(G(0)->fd, self->buf, sizeof(self->buf), VSW_WAIT_MS);
	ASSERT_EQ(100, n);
	EXPECT_EQ(0x6402u, vsw_tag(self->buf));
}

#define NEGO_CHAN	3

/*
 * The descriptor of the CHAN for @mac that the switch sends guest @fd,
 * reading past frames and other messages; -1 when none came
 */
static int recv_chan(int fd, const uint8_t *mac)
{
	uint64_t deadline = vsw_now_ms() + VSW_WAIT_MS;
	union {
		struct cmsghdr cm;
		uint8_t buf[CMSG_SPACE(sizeof(int))];
	} ctl;
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
		if (n != 12 || memcmp(m, "VECN", 4) || m[5] != NEGO_CHAN ||
		    mh.msg_controllen < CMSG_LEN(sizeof(int)))
			continue;
		memcpy(&cfd, CMSG_DATA(&ctl.cm), sizeof(int));
		if (!memcmp(m + 6, mac, 6))
			return cfd;
		close(cfd);
	}
	return -1;
}

#define NEGO_F_VNET	0x0001
#define NEGO_F_CHAN	0x0002
/* Unicast frames between two ports before the switch offers a channel */
#define CHAN_SUSTAIN	8

/* The flags of the next MODE on @fd, read past anything else; or -1 */
static int recv_mode(int fd)
{
	uint64_t deadline = vsw_now_ms() + VSW_WAIT_MS;
	uint8_t m[2048];
	int n;

	while (vsw_now_ms() < deadline) {
		n = vsw_recv(fd, m, sizeof(m), (int)(deadline - vsw_now_ms()));
		if (n < 0)
			return -1;
		if (n == 12 && !memcmp(m, "VECN", 4) && m[5] == NEGO_MODE)
			return m[6] << 8 | m[7];
	}
	return -1;
}

/* @g asks for headers and channels and agrees: the switch's MODE flags */
static int negotiate_chan(const struct vsw *s, const struct vsw_guest *g)
{
	uint8_t m[12];
	int flags;

	if (vsw_send_raw(s, g->fd, m, nego_msg(m, NEGO_HELLO,
					       NEGO_F_VNET | NEGO_F_CHAN)))
		return -1;
	flags = recv_mode(g->fd);
	if (flags < 0 ||
	    vsw_send_raw(s, g->fd, m, nego_msg(m, NEGO_MODE, NEGO_F_VNET)))
		return -1;
	return flags;
}

/* @n unicast frames with headers from @g to @dst, tagged @tag on */
static int send_vnet_n(const struct vsw *s, const struct vsw_guest *g,
		       const uint8_t *dst, uint32_t tag, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (send_vnet(s, g, dst, tag + i, 100))
			return -1;
	return 0;
}

/* Frames with headers on @fd until the one tagged @tag; 0, or -1 */
static int recv_vnet_until(int fd, uint32_t tag)
{
	int others;

	return vsw_recv_until_at(fd, 10, tag, &others);
}

/*
 * A channel the switch withdraws is closed to both guests even when
 * neither reads the UNCHAN: the switch shuts its end down.  And two
 * ports share one channel at most, whatever addresses they use.  A
 * channel comes with a flow, not with a frame: after CHAN_SUSTAIN.
 */
TEST_F(vsw, chan_withdrawn)
{
	uint8_t other[6];
	char mac[18], text[1024], *line;
	unsigned int q0, q1;
	int c0, c1, i;

	START();
	join(_metadata, self, 3);
	for (i = 0; i < 2; i++)
		ASSERT_EQ(NEGO_F_VNET | NEGO_F_CHAN,
			  negotiate_chan(&self->s, G(i)));
	ASSERT_EQ(0, send_vnet_n(&self->s, G(0), G(1)->mac, 0x7000,
				 CHAN_SUSTAIN - 1));
	ASSERT_EQ(0, recv_vnet_until(G(1)->fd, 0x7000 + CHAN_SUSTAIN - 2));
	EXPECT_EQ(0, vsw_stat(&self->s, NULL, "chan_opened"));
	ASSERT_EQ(0, send_vnet(&self->s, G(0), G(1)->mac, 0x7100, 100));
	c0 = recv_chan(G(0)->fd, G(1)->mac);
	c1 = recv_chan(G(1)->fd, G(0)->mac);
	ASSERT_LE(0, c0);
	ASSERT_LE(0, c1);
	EXPECT_EQ(1, vsw_stat(&self->s, NULL, "chan_opened"));
	EXPECT_EQ(4, send(c0, "ping", 4, MSG_DONTWAIT | MSG_NOSIGNAL));
	/* ctl channels lists it once, with what waits for G1 to read */
	ASSERT_LT(0, vsw_ctl(&self->s, "channels\n", text, sizeof(text)));
	snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x",
		 G(1)->mac[0], G(1)->mac[1], G(1)->mac[2], G(1)->mac[3],
		 G(1)->mac[4], G(1)->mac[5]);
	EXPECT_NE(NULL, strstr(text, mac)) TH_LOG("%s", text);
	line = strchr(text, '\n');
	ASSERT_NE(NULL, line);
	EXPECT_EQ(2, sscanf(line + 1, "%*u %*s %*u %*s %*u %u/%u", &q0, &q1));
	EXPECT_EQ(0u, q0);
	EXPECT_LT(0u, q1);
	for (i = 0, line = text; (line = strchr(line, '\n')); line++)
		i++;
	EXPECT_EQ(2, i) TH_LOG("%s", text);	/* a heading and one channel */

	/* G0 from a second address: no second channel between the two */
	memcpy(other, G(0)->mac, 6);
	other[5] ^= 0x40;
	memcpy(G(0)->mac, other, 6);
	ASSERT_EQ(0, send_vnet(&self->s, G(0), G(1)->mac, 0x7101, 100));
	VSW_WAIT_WHILE(vsw_stat(&self->s, NULL, "chan_full") < 1);
	EXPECT_LE(1, vsw_stat(&self->s, NULL, "chan_full"));
	EXPECT_EQ(1, vsw_stat(&self->s, NULL, "chan_opened"));
	other[5] ^= 0x40;
	memcpy(G(0)->mac, other, 6);

	/* G1's address moves to G2: neither end can send any more */
	memcpy(G(2)->mac, G(1)->mac, 6);
	ASSERT_EQ(0, vsw_send(&self->s, G(2), vsw_bcast, 0x7102, 100));
	VSW_WAIT_WHILE(vsw_stat(&self->s, NULL, "chan_revoked") < 1);
	EXPECT_EQ(1, vsw_stat(&self->s, NULL, "chan_revoked"));
	errno = 0;
	EXPECT_EQ(-1, send(c0, "ping", 4, MSG_DONTWAIT | MSG_NOSIGNAL));
	EXPECT_EQ(EPIPE, errno);
	errno = 0;
	EXPECT_EQ(-1, send(c1, "ping", 4, MSG_DONTWAIT | MSG_NOSIGNAL));
	EXPECT_EQ(EPIPE, errno);
	ASSERT_LT(0, vsw_ctl(&self->s, "channels\n", text, sizeof(text)));
	EXPECT_EQ(NULL, strstr(text, mac)) TH_LOG("%s", text);
	close(c0);
	close(c1);
}

/*
 * A port at its share of the forwarding table that sends another guest's
 * address as its source: the address stays where it was learned, and
 * the port gets no channel in that guest's name (the victim would send
 * that guest's frames to it).  The real owner still gets one.
 */
TEST_F(vsw, chan_name_not_learned)
{
	struct vsw_guest fake;
	int i;

	START("--fdb-port-max", "4");
	join(_metadata, self, 3);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(NEGO_F_VNET | NEGO_F_CHAN,
			  negotiate_chan(&self->s, G(i)));
	/* G0 fills its share with made-up sources, to nobody known */
	fake = *G(0);
	for (i = 0; i < 3; i++) {
		vsw_mac(fake.mac, 0x700 + i);
		ASSERT_EQ(0, send_vnet(&self->s, &fake, fake.mac, 0x7200 + i, 60));
	}
	VSW_WAIT_WHILE(!vsw_fdb_has(&self->s, fake.mac));
	ASSERT_TRUE(vsw_fdb_has(&self->s, fake.mac));
	/* then a flow to G1 in G2's name */
	memcpy(fake.mac, G(2)->mac, 6);
	ASSERT_EQ(0, send_vnet_n(&self->s, &fake, G(1)->mac, 0x7300,
				 2 * CHAN_SUSTAIN));
	ASSERT_EQ(0, recv_vnet_until(G(1)->fd, 0x7300 + 2 * CHAN_SUSTAIN - 1));
	EXPECT_LE(2 * CHAN_SUSTAIN, vsw_stat(&self->s, G(0)->path, "fdb_full"));
	EXPECT_EQ(0, vsw_stat(&self->s, NULL, "chan_opened"));
	EXPECT_EQ(-1, recv_chan(G(1)->fd, G(2)->mac));
	/* G2 itself: a channel in its own name */
	ASSERT_EQ(0, send_vnet_n(&self->s, G(2), G(1)->mac, 0x7400,
				 CHAN_SUSTAIN));
	i = recv_chan(G(1)->fd, G(2)->mac);
	EXPECT_LE(0, i);
	if (i >= 0)
		close(i);
}

/*
 * A HELLO closes the port's channels, but the pair waits before it gets a
 * new one, as after any channel given up: a guest that says HELLO again
 * and again cannot have the other handed channel after channel.
 */
TEST_F(vsw, chan_hello_backoff)
{
	int c, i;

	START();
	join(_metadata, self, 2);
	for (i = 0; i < 2; i++)
		ASSERT_EQ(NEGO_F_VNET | NEGO_F_CHAN,
			  negotiate_chan(&self->s, G(i)));
	ASSERT_EQ(0, send_vnet_n(&self->s, G(0), G(1)->mac, 0x7500,
				 CHAN_SUSTAIN));
	c = recv_chan(G(1)->fd, G(0)->mac);
	ASSERT_LE(0, c);
	close(c);
	/* 5 HELLOs within the second of back-off, each past the 100 ms gap */
	for (i = 0; i < 5; i++) {
		usleep(150 * 1000);
		ASSERT_EQ(NEGO_F_VNET | NEGO_F_CHAN,
			  negotiate_chan(&self->s, G(0)));
		ASSERT_EQ(0, send_vnet_n(&self->s, G(0), G(1)->mac,
					 0x7600 + 0x100 * i, CHAN_SUSTAIN));
		ASSERT_EQ(0, recv_vnet_until(G(1)->fd,
					    0x7600 + 0x100 * i + CHAN_SUSTAIN - 1));
	}
	EXPECT_EQ(1, vsw_stat(&self->s, NULL, "chan_opened"));
	EXPECT_EQ(1, vsw_stat(&self->s, NULL, "chan_revoked"));
	/* a back-off, not a ban: a little later the flow gets one again */
	usleep(400 * 1000);
	ASSERT_EQ(0, send_vnet_n(&self->s, G(0), G(1)->mac, 0x7b00,
				 CHAN_SUSTAIN));
	c = recv_chan(G(1)->fd, G(0)->mac);
	EXPECT_LE(0, c);
	if (c >= 0)
		close(c);
	EXPECT_EQ(2, vsw_stat(&self->s, NULL, "chan_opened"));
}

/*
 * The ports of one other user get at most 2 of a guest's channels, however
 * many they are; an abstract name gets none, and its MODE says so.
 */
TEST_F(vsw, chan_user_share)
{
	int pipefd[2], status, alen, i;
	struct sockaddr_un sa;
	struct vsw_guest g;
	char users[128];
	pid_t pid;
	char done;

	START("--mode", "0666");
	users_dir(_metadata, &self->s, users, sizeof(users));
	join(_metadata, self, 1);
	ASSERT_EQ(NEGO_F_VNET | NEGO_F_CHAN, negotiate_chan(&self->s, G(0)));
	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(pipefd[0]);
		if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
		    setresuid(65534, 65534, 65534) < 0)
			_exit(12);
		/* four ports of one user, each with a flow to G0 */
		for (i = 0; i < 4; i++) {
			memset(&g, 0, sizeof(g));
			vsw_mac(g.mac, 0x800 + i);
			if (snprintf(g.path, sizeof(g.path), "%.90s/u%d.sock",
				     users, i) >= (int)sizeof(g.path))
				_exit(10);
			g.fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
			alen = vsw_addr(&sa, g.path);
			if (g.fd < 0 || bind(g.fd, (struct sockaddr *)&sa, alen))
				_exit(11);
			if (negotiate_chan(&self->s, &g) !=
			    (NEGO_F_VNET | NEGO_F_CHAN))
				_exit(13);
			if (send_vnet_n(&self->s, &g, G(0)->mac, 0x7c00,
					CHAN_SUSTAIN))
				_exit(14);
			/* the pairs get at most one offer per 100 ms each */
			usleep(150 * 1000);
		}
		if (write(pipefd[1], "x", 1) != 1)
			_exit(15);
		pause();
		_exit(0);
	}
	close(pipefd[1]);
	ASSERT_EQ(1, read(pipefd[0], &done, 1));
	close(pipefd[0]);
	VSW_WAIT_WHILE(vsw_stat(&self->s, NULL, "chan_user_full") < 2);
	EXPECT_EQ(2, vsw_stat(&self->s, NULL, "chan_opened"));
	EXPECT_LE(2, vsw_stat(&self->s, NULL, "chan_user_full"));
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);

	/* an abstract name: no F_CHAN in its MODE, and no channel */
	memset(&g, 0, sizeof(g));
	vsw_mac(g.mac, 0x900);
	g.fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ASSERT_LE(0, g.fd);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	alen = snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1,
			"vsw-abstract-%d", (int)getpid());
	ASSERT_EQ(0, bind(g.fd, (struct sockaddr *)&sa,
			  offsetof(struct sockaddr_un, sun_path) + 1 + alen));
	ASSERT_EQ(NEGO_F_VNET, negotiate_chan(&self->s, &g));
	ASSERT_EQ(0, send_vnet_n(&self->s, &g, G(0)->mac, 0x7d00,
				 2 * CHAN_SUSTAIN));
	EXPECT_EQ(-1, recv_chan(g.fd, G(0)->mac));
	EXPECT_EQ(2, vsw_stat(&self->s, NULL, "chan_opened"));
	close(g.fd);
}

/* ---- multiqueue guests: one guest, several sockets, one port ------------ */

#define NEGO_QUEUES	5
#define NEGO_JOIN	6
#define NEGO_F_MQ	0x0004
#define MQ_MAX		8	/* sockets of one guest, its main one included */
#define MQ_FLOWS	64

/* The next datagram on fd is the 12-byte message @type; its bytes 6-11 */
static bool got_msg(int fd, uint8_t type, uint8_t *cookie)
{
	uint8_t m[64];
	int n = vsw_recv(fd, m, sizeof(m), VSW_WAIT_MS);

	if (n != 12 || memcmp(m, "VECN", 4) || m[4] != 1 || m[5] != type)
		return false;
	memcpy(cookie, m + 6, 6);
	return true;
}

static size_t mq_msg(uint8_t *m, uint8_t type, const uint8_t *cookie)
{
	memcpy(m, "VECN", 4);
	m[4] = 1;
	m[5] = type;
	memcpy(m + 6, cookie, 6);
	return 12;
}

/*
 * Guest i says HELLO with headers, channels and queue sockets, reads the
 * MODE and the QUEUES with its cookie, and sends its MODE unless @early.
 */
static void mq_hello(struct __test_metadata *_metadata,
		     FIXTURE_DATA(vsw) *self, int i, uint8_t *cookie,
		     bool early)
{
	uint8_t m[12];

	ASSERT_EQ(0, vsw_send_raw(&self->s, G(i)->fd, m,
				  nego_msg(m, NEGO_HELLO, 3 | NEGO_F_MQ)));
	ASSERT_TRUE(got_mode(G(i)->fd));
	ASSERT_TRUE(got_msg(G(i)->fd, NEGO_QUEUES, cookie));
	if (!early)
		ASSERT_EQ(0, vsw_send_raw(&self->s, G(i)->fd, m,
					  nego_msg(m, NEGO_MODE, 1)));
}

/* A queue socket @name of guest i: bound, with the guest's MAC */
static void mq_open(struct __test_metadata *_metadata,
		    FIXTURE_DATA(vsw) *self, int i, struct vsw_guest *q,
		    const char *name)
{
	ASSERT_EQ(0, vsw_guest_open(q, &self->s, name, i + 1));
}

/* Socket fd sends JOIN(cookie); true when the switch acked it */
static bool mq_join(const struct vsw *s, int fd, const uint8_t *cookie)
{
	uint8_t m[12], got[6];

	if (vsw_send_raw(s, fd, m, mq_msg(m, NEGO_JOIN, cookie)))
		return false;
	return got_msg(fd, NEGO_JOIN, got) && !memcmp(got, cookie, 6);
}

/*
 * Socket fd sends JOIN(cookie) and is refused: counted, and not answered
 * (an answer would have left before the counter can be read)
 */
static bool mq_refused(const struct vsw *s, int fd, const uint8_t *cookie)
{
	long long before = vsw_stat(s, NULL, "rx_join_bad");
	uint8_t m[12];

	if (before < 0 || vsw_send_raw(s, fd, m, mq_msg(m, NEGO_JOIN, cookie)))
		return false;
	VSW_WAIT_WHILE(vsw_stat(s, NULL, "rx_join_bad") == before);
	return vsw_stat(s, NULL, "rx_join_bad") == before + 1 && vsw_quiet(fd);
}

/* A UDP over IPv4 frame of flow @sport, from @src to @dst; 60 bytes */
static size_t udp_frame(uint8_t *f, const uint8_t *dst, const uint8_t *src,
			uint16_t sport)
{
	memset(f, 0, 60);
	memcpy(f, dst, 6);
	memcpy(f + 6, src, 6);
	f[12] = 0x08;
	f[14] = 0x45;
	f[17] = 36;		/* IP total length: header, UDP, 8 bytes */
	f[22] = 64;
	f[23] = 17;
	f[26] = 10;
	f[29] = 1;
	f[30] = 10;
	f[33] = 2;
	f[34] = sport >> 8;
	f[35] = sport;
	f[36] = 5000 >> 8;
	f[37] = 5000 & 0xff;
	f[39] = 16;
	return 60;
}

/* Plain guest @from sends one frame of each flow 1000..1000+MQ_FLOWS-1 */
static int send_flows(const struct vsw *s, const struct vsw_guest *from,
		      const uint8_t *dst)
{
	uint8_t f[60];
	int i;

	for (i = 0; i < MQ_FLOWS; i++) {
		udp_frame(f, dst, from->mac, 1000 + i);
		if (vsw_send_raw(s, from->fd, f, sizeof(f)))
			return -1;
	}
	return 0;
}

/*
 * Take @want flow frames off sockets fd[0..n-1]: each must be an all-zero
 * virtio-net header and one of the frames send_flows makes.  sock[f] is
 * set to the socket flow f came by, got[k] counts each socket's.  Returns
 * how many arrived, or -1 for one that is not such a frame.
 */
static int recv_flows(const int *fd, int n, int want, int *sock, int *got)
{
	uint64_t deadline = vsw_now_ms() + VSW_WAIT_MS;
	struct pollfd pfd[MQ_MAX];
	uint8_t buf[2048];
	int k, total = 0;

	for (k = 0; k < n; k++) {
		pfd[k].fd = fd[k];
		pfd[k].events = POLLIN;
		got[k] = 0;
	}
	while (total < want && vsw_now_ms() < deadline) {
		if (poll(pfd, n, (int)(deadline - vsw_now_ms())) <= 0)
			break;
		for (k = 0; k < n; k++) {
			int len, flow;

			if (!(pfd[k].revents & POLLIN))
				continue;
			len = recv(fd[k], buf, sizeof(buf), MSG_DONTWAIT);
			if (len != 70 || memcmp(buf, "\0\0\0\0\0\0\0\0\0\0", 10) ||
			    buf[10 + 12] != 0x08 || buf[10 + 23] != 17)
				return -1;
			flow = (buf[10 + 34] << 8 | buf[10 + 35]) - 1000;
			if (flow < 0 || flow >= MQ_FLOWS)
				return -1;
			/* one flow, one socket */
			if (sock[flow] >= 0 && sock[flow] != k)
				return -1;
			sock[flow] = k;
			got[k]++;
			total++;
		}
	}
	return total;
}

/* The QUEUES column of the port named @name in `ctl ports`, or -1 */
static int port_queues(const struct vsw *s, const char *name)
{
	char buf[1 << 14], pat[160], *line;
	unsigned int id, macs, fill, cap, queues;
	char type[16], uplink[8];

	snprintf(pat, sizeof(pat), " %s\n", name);
	if (vsw_ctl(s, "ports\n", buf, sizeof(buf)) <= 0)
		return -1;
	line = strstr(buf, pat);
	if (!line)
		return -1;
	while (line > buf && line[-1] != '\n')
		line--;
	if (sscanf(line, "%u %15s %7s %u %u/%u %u", &id, type, uplink, &macs,
		   &fill, &cap, &queues) != 7)
		return -1;
	return queues;
}

/* Lines of `ctl fdb` that name @mac */
static int fdb_lines(const struct vsw *s, const uint8_t *mac, unsigned int *port)
{
	char buf[1 << 14], m[20], *at = buf;
	int n = 0;

	snprintf(m, sizeof(m), "%02x:%02x:%02x:%02x:%02x:%02x",
		 mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]);
	if (vsw_ctl(s, "fdb\n", buf, sizeof(buf)) <= 0)
		return -1;
	while ((at = strstr(at, m))) {
		if (sscanf(at, "%*s %*u %u", port) != 1)
			return -1;
		at++;
		n++;
	}
	return n;
}

static long long qstat(const struct vsw *s, const char *name,
		       const char *dir, int k, const char *what)
{
	char key[48];

	snprintf(key, sizeof(key), "%s_queue_%d_%s", dir, k, what);
	return vsw_stat(s, name, key);
}

/*
 * A guest with two queue sockets besides its own: both join, all three
 * carry its frames into one port and one forwarding entry, and another
 * guest's flows come out spread over the three, each flow on one socket,
 * as the per-socket counters say.
 */
TEST_F(vsw, mq_join)
{
	static char json[1 << 16];
	struct vsw_guest q[2];
	int fd[3], sock[MQ_FLOWS], got[3], used = 0, i, n;
	uint8_t cookie[6];
	unsigned int port;

	START();
	GUEST(1);
	announce(_metadata, self, 1);
	GUEST(0);
	mq_hello(_metadata, self, 0, cookie, false);
	mq_open(_metadata, self, 0, &q[0], "g0q1.sock");
	mq_open(_metadata, self, 0, &q[1], "g0q2.sock");
	ASSERT_TRUE(mq_join(&self->s, q[0].fd, cookie));
	ASSERT_TRUE(mq_join(&self->s, q[1].fd, cookie));
	EXPECT_EQ(2, vsw_stat(&self->s, NULL, "rx_join"));
	EXPECT_EQ(0, vsw_stat(&self->s, NULL, "rx_join_bad"));

	/* frames from all three sockets: one guest, one port, one entry */
	ASSERT_EQ(0, send_vnet(&self->s, G(0), G(1)->mac, 0x8100, 100));
	ASSERT_EQ(0, send_vnet(&self->s, &q[0], G(1)->mac, 0x8101, 100));
	ASSERT_EQ(0, send_vnet(&self->s, &q[1], G(1)->mac, 0x8102, 100));
	for (i = 0; i < 3; i++) {
		n = vsw_recv(G(1)->fd, self->buf, sizeof(self->buf), VSW_WAIT_MS);
		ASSERT_EQ(100, n);
		EXPECT_EQ(0x8100u + i, vsw_tag(self->buf));
	}
	EXPECT_EQ(1, fdb_lines(&self->s, G(0)->mac, &port));
	EXPECT_EQ(3, port_queues(&self->s, G(0)->path));
	EXPECT_FALSE(vsw_has_port(&self->s, q[0].path));
	EXPECT_FALSE(vsw_has_port(&self->s, q[1].path));
	EXPECT_EQ(2, vsw_stat(&self->s, NULL, "ports_added"));
	for (i = 0; i < 3; i++)
		EXPECT_EQ(1, qstat(&self->s, G(0)->path, "rx", i, "packets"));
	EXPECT_EQ(3, vsw_stat(&self->s, G(0)->path, "rx_frames"));
	ASSERT_LT(0, vsw_ctl(&self->s, "ports json\n", json, sizeof(json)));
	EXPECT_TRUE(json_valid(json)) TH_LOG("%s", json);
	EXPECT_NE(NULL, strstr(json, "\"queues\":3")) TH_LOG("%s", json);

	/* another guest's flows, twice: spread, and each on one socket */
	fd[0] = G(0)->fd;
	fd[1] = q[0].fd;
	fd[2] = q[1].fd;
	memset(sock, -1, sizeof(sock));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, send_flows(&self->s, G(1), G(0)->mac));
		ASSERT_EQ(MQ_FLOWS, recv_flows(fd, 3, MQ_FLOWS, sock, got));
		if (!i)
			used = !!got[0] + !!got[1] + !!got[2];
	}
	EXPECT_LE(2, used);
	for (i = 0; i < 3; i++)
		EXPECT_TRUE(vsw_quiet(fd[i]));
	/* what each socket was sent: the flows, the MODE, QUEUES and acks */
	for (i = 0; i < MQ_FLOWS; i++)
		ASSERT_LE(0, sock[i]);
	memset(got, 0, sizeof(got));
	for (i = 0; i < MQ_FLOWS; i++)
		got[sock[i]] += 2;
	got[0] += 2;
	got[1]++;
	got[2]++;
	for (i = 0; i < 3; i++)
		EXPECT_EQ(got[i], qstat(&self->s, G(0)->path, "tx", i, "packets"))
			TH_LOG("socket %d", i);
	EXPECT_EQ(2 * MQ_FLOWS + 4, vsw_stat(&self->s, G(0)->path, "tx_frames"));
	EXPECT_EQ(-1, qstat(&self->s, G(0)->path, "tx", 3, "packets"));
	EXPECT_EQ(0, qstat(&self->s, G(1)->path, "tx", 0, "bytes") -
		     vsw_stat(&self->s, G(1)->path, "tx_bytes"));
	ASSERT_LT(0, vsw_ctl(&self->s, "stats json\n", json, sizeof(json)));
	EXPECT_TRUE(json_valid(json)) TH_LOG("%s", json);
	EXPECT_NE(NULL, strstr(json, "\"rx_queue_2_packets\":1,"));

	/*
	 * a queue socket says nothing but JOIN and frames: a HELLO from it
	 * starts nothing over; shorter than a header and a frame is a runt
	 */
	ASSERT_EQ(0, vsw_send_raw(&self->s, q[0].fd, json,
				  nego_msg((uint8_t *)json, NEGO_HELLO, 1)));
	ASSERT_EQ(0, vsw_send_raw(&self->s, q[0].fd, "runt", 4));
	memset(self->buf, 0, 20);
	ASSERT_EQ(0, vsw_send_raw(&self->s, q[1].fd, self->buf, 20));
	VSW_WAIT_WHILE(vsw_stat(&self->s, G(0)->path, "rx_runt") < 2);
	EXPECT_EQ(2, vsw_stat(&self->s, G(0)->path, "rx_runt"));
	EXPECT_EQ(1, vsw_stat(&self->s, G(0)->path, "rx_nego_bad"));
	EXPECT_EQ(1, vsw_stat(&self->s, G(0)->path, "rx_hello"));
	EXPECT_EQ(3, port_queues(&self->s, G(0)->path));
	for (i = 0; i < 3; i++)
		EXPECT_TRUE(vsw_quiet(fd[i]));
}

/*
 * A child that binds @path (as @uid, unless 0), sends JOIN(@cookie) from
 * it and waits for the parent to close *@hold (and closes @other, an
 * earlier child's, so as not to hold that one up); it exits with the
 * number of datagrams it got (the switch must send it none).  Returns its
 * pid once the JOIN is sent, or -1.
 */
static pid_t join_child(const struct vsw *s, const char *path, uid_t uid,
			const uint8_t *cookie, int *hold, int other)
{
	int ready[2], wait_end[2];
	pid_t pid;
	char c;

	if (pipe(ready) < 0 || pipe(wait_end) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		struct sockaddr_un sa;
		uint8_t m[2048];
		int fd, alen, n = 0;

		close(ready[0]);
		close(wait_end[1]);
		if (other >= 0)
			close(other);
		if (uid && (setgroups(0, NULL) < 0 ||
			    setresgid(65534, 65534, 65534) < 0 ||
			    setresuid(uid, uid, uid) < 0))
			_exit(120);
		fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		alen = vsw_addr(&sa, path);
		if (fd < 0 || bind(fd, (struct sockaddr *)&sa, alen) < 0)
			_exit(121);
		if (vsw_send_raw(s, fd, m, mq_msg(m, NEGO_JOIN, cookie)))
			_exit(122);
		if (write(ready[1], "s", 1) != 1)
			_exit(123);
		alarm(20);
		if (read(wait_end[0], &c, 1) < 0)
			_exit(124);
		while (n < 100 && recv(fd, m, sizeof(m), MSG_DONTWAIT) >= 0)
			n++;
		_exit(n);
	}
	close(ready[1]);
	close(wait_end[0]);
	*hold = wait_end[1];
	if (read(ready[0], &c, 1) != 1)
		pid = -1;
	close(ready[0]);
	return pid;
}

/*
 * JOINs the switch must refuse: counted, unanswered, no port made, and
 * nothing of the guest's traffic to the sender: a wrong cookie, the right
 * one from another process or user, before the guest's MODE, a ninth
 * socket, and from an address that is a port's own.
 */
TEST_F(vsw, mq_join_refused)
{
	char users[128], path[2][160];
	struct vsw_guest q[MQ_MAX], x;
	uint8_t cookie[6], other[6], m[12];
	int fd[MQ_MAX], sock[MQ_FLOWS], got[MQ_MAX], hold[2], i;
	pid_t pid[2];

	START("--mode", "0666");
	users_dir(_metadata, &self->s, users, sizeof(users));
	GUEST(1);
	announce(_metadata, self, 1);
	GUEST(0);
	mq_hello(_metadata, self, 0, cookie, false);

	/* a wrong cookie */
	memcpy(other, cookie, 6);
	other[5] ^= 1;
	mq_open(_metadata, self, 0, &x, "x.sock");
	EXPECT_TRUE(mq_refused(&self->s, x.fd, other));
	EXPECT_EQ(1, vsw_stat(&self->s, NULL, "join_bad_cookie"));
	EXPECT_FALSE(vsw_has_port(&self->s, x.path));

	/* the guest's cookie from another process, root's and another user's */
	snprintf(path[0], sizeof(path[0]), "%s/root.sock", users);
	snprintf(path[1], sizeof(path[1]), "%s/nobody.sock", users);
	for (i = 0; i < 2; i++) {
		pid[i] = join_child(&self->s, path[i], i ? 65534 : 0, cookie,
				    &hold[i], i ? hold[0] : -1);
		ASSERT_LT(0, pid[i]);
	}
	VSW_WAIT_WHILE(vsw_stat(&self->s, NULL, "join_bad_cred") < 2);
	EXPECT_EQ(2, vsw_stat(&self->s, NULL, "join_bad_cred"));
	/* the guest's flows, all of them, reach the guest alone */
	fd[0] = G(0)->fd;
	memset(sock, -1, sizeof(sock));
	ASSERT_EQ(0, send_flows(&self->s, G(1), G(0)->mac));
	ASSERT_EQ(MQ_FLOWS, recv_flows(fd, 1, MQ_FLOWS, sock, got));
	ASSERT_EQ(0, send_vnet(&self->s, G(0), vsw_bcast, 0x8200, 100));
	ASSERT_EQ(0, vsw_recv_until(G(1)->fd, 0x8200, &i));
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(0, send_ids_end(pid[i], hold[i])) TH_LOG("child %d", i);
		EXPECT_FALSE(vsw_has_port(&self->s, path[i]));
	}
	EXPECT_EQ(1, port_queues(&self->s, G(0)->path));
	EXPECT_EQ(2, vsw_stat(&self->s, NULL, "ports_added"));

	/* before its MODE: guest 2's queue socket is not let in */
	GUEST(2);
	mq_hello(_metadata, self, 2, other, true);
	mq_open(_metadata, self, 2, &q[0], "g2q1.sock");
	EXPECT_TRUE(mq_refused(&self->s, q[0].fd, other));
	EXPECT_EQ(1, vsw_stat(&self->s, NULL, "join_early"));
	vsw_guest_close(&q[0]);

	/* from a port's own address: guest 1's and guest 2's */
	EXPECT_TRUE(mq_refused(&self->s, G(1)->fd, cookie));
	EXPECT_TRUE(mq_refused(&self->s, G(2)->fd, cookie));
	EXPECT_EQ(2, vsw_stat(&self->s, NULL, "join_taken"));

	/* seven queue sockets join; the ninth socket of the guest does not */
	for (i = 0; i < MQ_MAX; i++) {
		char name[32];

		snprintf(name, sizeof(name), "g0q%d.sock", i + 1);
		mq_open(_metadata, self, 0, &q[i], name);
		if (i < MQ_MAX - 1) {
			EXPECT_TRUE(mq_join(&self->s, q[i].fd, cookie))
				TH_LOG("queue socket %d", i + 1);
		} else {
			EXPECT_TRUE(mq_refused(&self->s, q[i].fd, cookie));
		}
	}
	EXPECT_EQ(1, vsw_stat(&self->s, NULL, "join_full"));
	EXPECT_EQ(MQ_MAX, port_queues(&self->s, G(0)->path));
	EXPECT_FALSE(vsw_has_port(&self->s, q[MQ_MAX - 1].path));
	/* a joined socket is another port's: guest 2 cannot have it */
	ASSERT_EQ(0, vsw_send_raw(&self->s, G(2)->fd, m,
				  nego_msg(m, NEGO_MODE, 1)));
	EXPECT_TRUE(mq_refused(&self->s, q[0].fd, other));
	EXPECT_EQ(3, vsw_stat(&self->s, NULL, "join_taken"));
	EXPECT_EQ(1 + 2 + 1 + 3 + 1,
		  vsw_stat(&self->s, NULL, "rx_join_bad"));
	EXPECT_EQ(MQ_MAX - 1, vsw_stat(&self->s, NULL, "rx_join"));
	EXPECT_EQ(3, vsw_stat(&self->s, NULL, "ports_added"));
	EXPECT_FALSE(vsw_has_port(&self->s, x.path));
	/* none of the refused sockets was sent anything */
	EXPECT_TRUE(vsw_quiet(x.fd));
	EXPECT_TRUE(vsw_quiet(q[MQ_MAX - 1].fd));
	vsw_guest_close(&x);
	for (i = 0; i < MQ_MAX; i++)
		vsw_guest_close(&q[i]);
}

/*
 * A guest that says HELLO again has no queue sockets until they join
 * again, with the new cookie: the old one no longer counts.
 */
TEST_F(vsw, mq_reset)
{
	struct vsw_guest q[2];
	uint8_t cookie[6], again[6];
	int fd[3], sock[MQ_FLOWS], got[3], i;

	START();
	GUEST(1);
	announce(_metadata, self, 1);
	GUEST(0);
	mq_hello(_metadata, self, 0, cookie, false);
	for (i = 0; i < 2; i++) {
		char name[32];

		snprintf(name, sizeof(name), "g0q%d.sock", i + 1);
		mq_open(_metadata, self, 0, &q[i], name);
		ASSERT_TRUE(mq_join(&self->s, q[i].fd, cookie));
	}
	EXPECT_EQ(3, port_queues(&self->s, G(0)->path));

	mq_hello(_metadata, self, 0, again, false);
	EXPECT_NE(0, memcmp(cookie, again, 6));
	EXPECT_EQ(1, port_queues(&self->s, G(0)->path));
	fd[0] = G(0)->fd;
	fd[1] = q[0].fd;
	fd[2] = q[1].fd;
	memset(sock, -1, sizeof(sock));
	ASSERT_EQ(0, send_flows(&self->s, G(1), G(0)->mac));
	ASSERT_EQ(MQ_FLOWS, recv_flows(fd, 3, MQ_FLOWS, sock, got));
	EXPECT_EQ(MQ_FLOWS, got[0]);

	/* the old cookie is refused, the new one taken */
	EXPECT_TRUE(mq_refused(&self->s, q[0].fd, cookie));
	EXPECT_EQ(1, vsw_stat(&self->s, NULL, "join_bad_cookie"));
	ASSERT_TRUE(mq_join(&self->s, q[0].fd, again));
	EXPECT_EQ(2, port_queues(&self->s, G(0)->path));
	memset(sock, -1, sizeof(sock));
	ASSERT_EQ(0, send_flows(&self->s, G(1), G(0)->mac));
	ASSERT_EQ(MQ_FLOWS, recv_flows(fd, 3, MQ_FLOWS, sock, got));
	EXPECT_LT(0, got[0]);
	EXPECT_LT(0, got[1]);
	EXPECT_EQ(0, got[2]);
	/* a joined socket's JOIN is acked again, and changes nothing */
	ASSERT_TRUE(mq_join(&self->s, q[0].fd, again));
	EXPECT_EQ(1, vsw_stat(&self->s, NULL, "rx_join_again"));
	EXPECT_EQ(2, port_queues(&self->s, G(0)->path));
	for (i = 0; i < 2; i++)
		vsw_guest_close(&q[i]);
}

/*
 * A queue socket that closes is dropped from its port once a send to it
 * fails; the port and its other sockets carry on.
 */
TEST_F(vsw, mq_queue_closed)
{
	struct vsw_guest q[2];
	uint8_t cookie[6];
	int fd[2], sock[MQ_FLOWS], got[2], i, n;

	START();
	GUEST(1);
	announce(_metadata, self, 1);
	GUEST(0);
	mq_hello(_metadata, self, 0, cookie, false);
	for (i = 0; i < 2; i++) {
		char name[32];

		snprintf(name, sizeof(name), "g0q%d.sock", i + 1);
		mq_open(_metadata, self, 0, &q[i], name);
		ASSERT_TRUE(mq_join(&self->s, q[i].fd, cookie));
	}
	vsw_guest_close(&q[1]);
	fd[0] = G(0)->fd;
	fd[1] = q[0].fd;
	/* what was for the closed socket is lost; the rest arrives */
	memset(sock, -1, sizeof(sock));
	ASSERT_EQ(0, send_flows(&self->s, G(1), G(0)->mac));
	VSW_WAIT_WHILE(vsw_stat(&self->s, NULL, "queues_dead") < 1);
	EXPECT_EQ(1, vsw_stat(&self->s, NULL, "queues_dead"));
	EXPECT_EQ(2, port_queues(&self->s, G(0)->path));
	n = recv_flows(fd, 2, MQ_FLOWS, sock, got);
	EXPECT_LT(0, n);
	EXPECT_GT(MQ_FLOWS, n);
	EXPECT_EQ(0, vsw_stat(&self->s, NULL, "dead_peers"));
	EXPECT_EQ(0, vsw_stat(&self->s, NULL, "ports_removed"));

	/* every flow now takes one of the two sockets left */
	memset(sock, -1, sizeof(sock));
	ASSERT_EQ(0, send_flows(&self->s, G(1), G(0)->mac));
	ASSERT_EQ(MQ_FLOWS, recv_flows(fd, 2, MQ_FLOWS, sock, got));
	EXPECT_LT(0, got[0]);
	EXPECT_LT(0, got[1]);
	ASSERT_EQ(0, send_vnet(&self->s, &q[0], G(1)->mac, 0x8300, 100));
	n = vsw_recv(G(1)->fd, self->buf, sizeof(self->buf), VSW_WAIT_MS);
	ASSERT_EQ(100, n);
	EXPECT_EQ(0x8300u, vsw_tag(self->buf));
	EXPECT_EQ(1, fdb_lines(&self->s, G(0)->mac, (unsigned int *)&i));
	vsw_guest_close(&q[0]);
}

/* ---- port names in the control socket's output ---------------------------- */

/* The switch's log has a line with @text */
static bool log_has(const struct vsw *s, const char *text)
{
	char line[512];
	bool found = false;
	FILE *f = fopen(s->log, "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, text);
	fclose(f);
	return found;
}

/* A socket bound at @len bytes of @name (abstract when it starts with NUL) */
static int bound_raw(const char *name, size_t len)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	memcpy(sa.sun_path, name, len);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa,
			   offsetof(struct sockaddr_un, sun_path) + len) < 0)
		return -1;
	return fd;
}

/*
 * Names that could forge a line, break JSON, or pass for another kind:
 * a newline, UTF-8, a stray byte, an abstract name with a NUL inside,
 * and a path that starts with @.
 */
TEST_F(vsw, port_names_escaped)
{
	static char text[1 << 14], json[1 << 14];
	char path[5][108];
	const char *want[4];
	size_t len[5];
	uint8_t mac[6];
	int fd[5], i, others;

	START();
	join(_metadata, self, 1);
	ASSERT_EQ(0, chdir(self->s.dir));
	snprintf(path[0], sizeof(path[0]), "%s/a\nport 99 dgram forged", self->s.dir);
	snprintf(path[1], sizeof(path[1]), "%s/caf\xc3\xa9", self->s.dir);
	snprintf(path[2], sizeof(path[2]), "%s/b\xff", self->s.dir);
	memcpy(path[3], "\0vsw\0x", 6);
	snprintf(path[4], sizeof(path[4]), "@vsw");
	for (i = 0; i < 5; i++)
		len[i] = i == 3 ? 6 : strlen(path[i]);
	want[0] = "/a\\x0aport 99 dgram forged\n";
	want[1] = "/caf\xc3\xa9\n";
	want[2] = "/b\\xff\n";
	want[3] = " @vsw\\x00x\n";
	for (i = 0; i < 5; i++) {
		fd[i] = bound_raw(path[i], len[i]);
		ASSERT_LE(0, fd[i]) TH_LOG("name %d", i);
		vsw_mac(mac, 0x70 + i);
		ASSERT_EQ(0, send_frame(&self->s, fd[i], mac, 0x7000 + i));
		if (i < 4)
			ASSERT_EQ(0, vsw_recv_until(G(0)->fd, 0x7000 + i, &others));
	}
	/* "@vsw", a relative path, is refused, and logged unmistakably */
	VSW_WAIT_WHILE(vsw_stat(&self->s, NULL, "addr_refused") < 1);
	EXPECT_TRUE(log_has(&self->s, "dgram sender \\x40vsw refused"));
	ASSERT_LT(0, vsw_ctl(&self->s, "ports\n", text, sizeof(text)));
	ASSERT_LT(0, vsw_ctl(&self->s, "ports json\n", json, sizeof(json)));
	for (i = 0; i < 4; i++)
		EXPECT_NE(NULL, strstr(text, want[i])) TH_LOG("%d: %s", i, text);
	EXPECT_EQ(NULL, strstr(text, "\nport 99")) TH_LOG("%s", text);
	/* JSON: the UTF-8 as it is, the escapes' backslashes escaped */
	EXPECT_NE(NULL, strstr(json, "/caf\xc3\xa9\"")) TH_LOG("%s", json);
	EXPECT_NE(NULL, strstr(json, "/b\\\\xff\"")) TH_LOG("%s", json);
	EXPECT_NE(NULL, strstr(json, "\"@vsw\\\\x00x\"")) TH_LOG("%s", json);
	for (i = 0; i < 5; i++)
		close(fd[i]);
}

/* ---- descriptors ---------------------------------------------------------- */

/* utime + stime of a process, in clock ticks */
static long long cpu_ticks(pid_t pid)
{
	unsigned long long ut, st;
	char path[64], buf[1024], *p;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	if (!p || !(p = strrchr(buf, ')')))
		return -1;
	/* fields 14 and 15, counted after the command name's ")" */
	for (i = 0; i < 12 && p; i++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p, " %llu %llu", &ut, &st) != 2)
		return -1;
	return ut + st;
}

/*
 * An open-file limit too small for --max-ports: the switch says so and
 * does not start, rather than run out of descriptors later.
 */
TEST(nofile_limit_too_small)
{
	struct rlimit rl = { .rlim_cur = 24, .rlim_max = 24 };
	char out[4096];
	int rc;

	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	rc = vsw_run_args(out, sizeof(out), "--dgram", "/tmp/vsw-nofile.sock",
			  "--max-ports", "256");
	EXPECT_EQ(1, rc) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "--max-ports 256 needs")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "limit is 24")) TH_LOG("%s", out);
	EXPECT_NE(0, access("/tmp/vsw-nofile.sock", F_OK));
}

/*
 * Within a limit that fits, more stream clients than ports: the extra
 * ones are closed, the switch keeps answering and does not spin.
 */
TEST_F(vsw, many_clients_no_spin)
{
	/* what 8 ports need (fds_needed in sock.c, 136), and some to spare */
	struct rlimit rl = { .rlim_cur = 152, .rlim_max = 152 };
	int fd[30], i, n = 0;
	long long t0, t1;
	char c;

	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	START("--max-ports", "8");
	for (i = 0; i < 30; i++)
		fd[i] = vsw_connect(self->s.stream, SOCK_STREAM);
	VSW_WAIT_WHILE(vsw_stat(&self->s, NULL, "no_port") < 22);
	EXPECT_EQ(22, vsw_stat(&self->s, NULL, "no_port"));
	t0 = cpu_ticks(self->s.pid);
	vsw_pause_ms(1000);
	t1 = cpu_ticks(self->s.pid);
	/* a spinning loop would take the whole second, 100 ticks */
	EXPECT_GT(20, t1 - t0);
	for (i = 0; i < 30; i++) {
		if (fd[i] < 0)
			continue;
		/* closed at once: EOF; a port: still open (the time-out) */
		if (recv(fd[i], &c, 1, MSG_DONTWAIT) < 0 && errno == EAGAIN)
			n++;
		close(fd[i]);
	}
	EXPECT_EQ(8, n);
	EXPECT_EQ(0, vsw_stat(&self->s, NULL, "accept_shed"));
}

/* ---- descriptors sent to the switch ----------------------------------------- */

/*
 * Whoever can reach a socket of the switch can try to hand it descriptors
 * (SCM_RIGHTS). A file whose last reference dies in the switch's thread
 * is released there: a TCP socket with a linger and unsent data holds
 * that thread, and all forwarding, for its linger time. Linux 6.16 and
 * later refuse the descriptors to the sender (SO_PASSRIGHTS off: EPERM);
 * on older kernels the switch takes them and closes them on a thread of
 * its own. VECSWITCH_TEST_NO_PASSRIGHTS=1 in the switch's environment, a
 * knob for these tests only, makes it behave as on an older kernel.
 */
#ifndef SO_PASSRIGHTS
#define SO_PASSRIGHTS	83
#endif
#define LINGER_S	10
#define ALIVE_MS	2000	/* a switch held by a linger misses this */
#define RIGHTS_MAX	253	/* SCM_MAX_FD: what one message carries */

enum rights_via { VIA_DGRAM, VIA_STREAM, VIA_SEQPACKET, VIA_CTL };

static bool kernel_has_passrights(void)
{
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0), off = 0;
	bool ok = fd >= 0 && !setsockopt(fd, SOL_SOCKET, SO_PASSRIGHTS, &off,
					 sizeof(off));

	if (fd >= 0)
		close(fd);
	return ok;
}

/*
 * A TCP socket whose last close() waits LINGER_S: connected to *lfd, a
 * listener that never accepts, with data it cannot send.
 */
static int lingering_socket(int *lfd)
{
	struct sockaddr_in sa = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	struct linger lg = { .l_onoff = 1, .l_linger = LINGER_S };
	struct pollfd pfd = { .events = POLLOUT };
	socklen_t len = sizeof(sa);
	int small = 4096, unsent = 0;
	char buf[4096] = "";

	*lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*lfd < 0 ||
	    setsockopt(*lfd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)) ||
	    bind(*lfd, (struct sockaddr *)&sa, len) || listen(*lfd, 1) ||
	    getsockname(*lfd, (struct sockaddr *)&sa, &len))
		return -1;
	pfd.fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (pfd.fd < 0 ||
	    setsockopt(pfd.fd, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)) ||
	    connect(pfd.fd, (struct sockaddr *)&sa, len))
		return -1;
	/* full until the peer's window stays shut */
	do {
		while (send(pfd.fd, buf, sizeof(buf),
			    MSG_DONTWAIT | MSG_NOSIGNAL) > 0)
			;
	} while (errno == EAGAIN && poll(&pfd, 1, 100) == 1);
	if (ioctl(pfd.fd, SIOCOUTQNSD, &unsent) || unsent <= 0 ||
	    setsockopt(pfd.fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)))
		return -1;
	return pfd.fd;
}

/* @len bytes of @data and @n descriptors in one message, to @path if set */
static ssize_t send_rights(int fd, const char *path, const void *data,
			   size_t len, const int *fds, unsigned int n)
{
	union {
		struct cmsghdr c;
		char b[CMSG_SPACE(RIGHTS_MAX * sizeof(int))];
	} u = { 0 };
	struct iovec iov = { .iov_base = (void *)data, .iov_len = len };
	struct msghdr mh = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = u.b,
		.msg_controllen = CMSG_SPACE(n * sizeof(int)),
	};
	struct sockaddr_un sa;
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);

	if (path) {
		mh.msg_name = &sa;
		mh.msg_namelen = vsw_addr(&sa, path);
	}
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(n * sizeof(int));
	memcpy(CMSG_DATA(c), fds, n * sizeof(int));
	return sendmsg(fd, &mh, MSG_NOSIGNAL);
}

/* The frame tagged @tag reaches @fd within @ms, after any others */
static bool tag_within(int fd, uint32_t tag, int ms)
{
	uint64_t now, deadline = vsw_now_ms() + ms;
	uint8_t buf[2048];
	int n;

	while ((now = vsw_now_ms()) < deadline) {
		n = vsw_recv(fd, buf, sizeof(buf), deadline - now);
		if (n >= 18 && vsw_tag(buf) == tag)
			return true;
	}
	return false;
}

/* The control socket's whole answer on @fd within @ms, or -1 */
static int answer_within(int fd, char *buf, size_t len, int ms)
{
	uint64_t now, deadline = vsw_now_ms() + ms;
	size_t got = 0;
	ssize_t r = 1;

	while (r > 0 && got + 1 < len && (now = vsw_now_ms()) < deadline) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		if (poll(&pfd, 1, deadline - now) != 1)
			break;
		r = recv(fd, buf + got, len - 1 - got, MSG_DONTWAIT);
		if (r > 0)
			got += r;
	}
	buf[got] = '\0';
	return r == 0 ? (int)got : -1;
}

/* The switch answers its control socket and forwards, both at once */
static void expect_alive(struct __test_metadata *_metadata,
			 FIXTURE_DATA(vsw) *self, uint32_t tag)
{
	uint64_t t0 = vsw_now_ms();

	EXPECT_LT(0, vsw_stat(&self->s, NULL, "ports_added"));
	EXPECT_GT(ALIVE_MS, vsw_now_ms() - t0) {
		TH_LOG("ctl stats took %llu ms",
		       (unsigned long long)(vsw_now_ms() - t0));
	}
	ASSERT_EQ(0, vsw_send(&self->s, G(0), G(1)->mac, tag, 100));
	EXPECT_TRUE(tag_within(G(1)->fd, tag, ALIVE_MS));
}

/*
 * A lingering TCP socket goes to the switch by @via, with a frame (a
 * request on the control socket): together with 252 more descriptors by
 * dgram, all one message may carry. Refused (the kernel's SO_PASSRIGHTS)
 * or taken and closed elsewhere (@fallback), the switch goes on at once.
 */
static void pass_rights(struct __test_metadata *_metadata,
			FIXTURE_DATA(vsw) *self,
			const FIXTURE_VARIANT(vsw) *variant,
			enum rights_via via, bool fallback)
{
	static char ans[1 << 16];
	struct linger now = { .l_onoff = 1, .l_linger = 0 };
	int fds[RIGHTS_MAX], nfd = via == VIA_DGRAM ? RIGHTS_MAX : 1;
	int lfd, fd = -1, i, n, err;
	const uint8_t *data;
	uint8_t smac[6];
	ssize_t r;

	if (!fallback && !kernel_has_passrights())
		SKIP(return, "the kernel has no SO_PASSRIGHTS (Linux 6.16)");
	if (fallback)
		setenv("VECSWITCH_TEST_NO_PASSRIGHTS", "1", 1);
	START();
	join(_metadata, self, 2);
	fds[0] = lingering_socket(&lfd);
	ASSERT_LE(0, fds[0]);
	for (i = 1; i < nfd; i++) {
		fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
		ASSERT_LE(0, fds[i]);
	}

	vsw_mac(smac, 0x300);
	n = vsw_frame(self->buf + 4, vsw_bcast, smac, 0x5100, 200);
	self->buf[0] = n >> 24;
	self->buf[1] = n >> 16;
	self->buf[2] = n >> 8;
	self->buf[3] = n;
	data = self->buf + 4;
	switch (via) {
	case VIA_DGRAM:
		GUEST(2);
		fd = G(2)->fd;
		break;
	case VIA_STREAM:
		fd = vsw_connect(self->s.stream, SOCK_STREAM);
		data = self->buf;
		n += 4;
		break;
	case VIA_SEQPACKET:
		fd = vsw_connect(self->s.seqpacket, SOCK_SEQPACKET);
		break;
	case VIA_CTL:
		fd = vsw_connect(self->s.ctl, SOCK_STREAM);
		data = (const uint8_t *)"stats\n";
		n = 6;
		break;
	}
	ASSERT_LE(0, fd);
	errno = 0;
	r = send_rights(fd, via == VIA_DGRAM ? self->s.dgram : NULL, data, n,
			fds, nfd);
	err = r < 0 ? errno : 0;
	if (fallback) {
		EXPECT_EQ(n, r) TH_LOG("sendmsg: %s", strerror(err));
	} else {
		EXPECT_EQ(-1, r);
		EXPECT_EQ(EPERM, err) TH_LOG("sendmsg: %s", strerror(err));
	}
	/* refused: ours is the last reference, and must not linger here */
	if (r < 0)
		setsockopt(fds[0], SOL_SOCKET, SO_LINGER, &now, sizeof(now));
	for (i = 0; i < nfd; i++)
		close(fds[i]);
	/* the connection is still good for what it carries */
	if (r < 0 && via == VIA_DGRAM)
		r = vsw_send_raw(&self->s, fd, data, n) ? -1 : n;
	else if (r < 0)
		r = send(fd, data, n, MSG_NOSIGNAL);
	ASSERT_EQ(n, r);

	if (via == VIA_CTL) {
		shutdown(fd, SHUT_WR);
		EXPECT_LT(0, answer_within(fd, ans, sizeof(ans), ALIVE_MS));
		EXPECT_NE(NULL, strstr(ans, "\n  ports_added 2\n")) {
			TH_LOG("stats: %s", ans);
		}
	} else {
		EXPECT_TRUE(tag_within(G(0)->fd, 0x5100, ALIVE_MS));
		EXPECT_TRUE(tag_within(G(1)->fd, 0x5100, ALIVE_MS));
	}
	expect_alive(_metadata, self, 0x5101);

	EXPECT_EQ(fallback ? nfd : 0, vsw_stat(&self->s, NULL, "rx_fds"));
	EXPECT_EQ(0, vsw_stat(&self->s, NULL, "rx_fds_inline"));
	EXPECT_EQ(0, vsw_stat(&self->s, NULL, "rx_ctrunc"));
	EXPECT_EQ(fallback, log_has(&self->s, "SO_PASSRIGHTS"));
	if (via == VIA_CTL && fallback) {
		EXPECT_LT(0, vsw_ctl(&self->s, "stats json\n", ans, sizeof(ans)));
		EXPECT_NE(NULL, strstr(ans, ",\"rx_fds\":1,")) TH_LOG("%s", ans);
	}
	if (via != VIA_DGRAM)
		close(fd);
	close(lfd);
}

TEST_F(vsw, rights_refused_dgram)
{
	pass_rights(_metadata, self, variant, VIA_DGRAM, false);
}

TEST_F(vsw, rights_refused_stream)
{
	pass_rights(_metadata, self, variant, VIA_STREAM, false);
}

TEST_F(vsw, rights_refused_seqpacket)
{
	pass_rights(_metadata, self, variant, VIA_SEQPACKET, false);
}

TEST_F(vsw, rights_refused_ctl)
{
	pass_rights(_metadata, self, variant, VIA_CTL, false);
}

TEST_F(vsw, rights_closed_dgram)
{
	pass_rights(_metadata, self, variant, VIA_DGRAM, true);
}

TEST_F(vsw, rights_closed_stream)
{
	pass_rights(_metadata, self, variant, VIA_STREAM, true);
}

TEST_F(vsw, rights_closed_seqpacket)
{
	pass_rights(_metadata, self, variant, VIA_SEQPACKET, true);
}

TEST_F(vsw, rights_closed_ctl)
{
	pass_rights(_metadata, self, variant, VIA_CTL, true);
}

/* ---- tap uplink with --isolate, in a network namespace of our own ---- */

/*
 * Bring the tap up with IPv6 off on it: otherwise the host's own router
 * and neighbour solicitations go up the tap and reach every guest, and
 * the isolation checks would count them.
 */
static int tap_up(const char *ifname)
{
	struct ifreq ifr = { 0 };
	char knob[96];
	int fd, r;
	FILE *f;

	snprintf(knob, sizeof(knob), "/proc/sys/net/ipv6/conf/%s/disable_ipv6",
		 ifname);
	f = fopen(knob, "w");
	if (f) {
		fputs("1", f);
		if (fclose(f))
			return -1;
	}
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	r = ioctl(fd, SIOCGIFFLAGS, &ifr);
	if (!r) {
		ifr.ifr_flags |= IFF_UP;
		r = ioctl(fd, SIOCSIFFLAGS, &ifr);
	}
	close(fd);
	return r;
}

/* A packet socket on the host side of tap ifname, or -1 */
static int tap_packet_socket(const char *ifname)
{
	struct sockaddr_ll sll = { 0 };
	int fd;

	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	if (fd < 0)
		return -1;
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = if_nametoindex(ifname);
	if (!sll.sll_ifindex || bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Next test frame on the packet socket (others on the wire are skipped). */
static int pkt_recv(int fd, uint8_t *buf, size_t len, uint32_t tag)
{
	uint64_t deadline = vsw_now_ms() + VSW_WAIT_MS;

	while (vsw_now_ms() < deadline) {
		int n = vsw_recv(fd, buf, len, (int)(deadline - vsw_now_ms()));

		if (n < 0)
			return -1;
		if (n >= 18 && buf[12] == (VSW_ETYPE >> 8) &&
		    buf[13] == (VSW_ETYPE & 0xff) && vsw_tag(buf) == tag)
			return n;
	}
	return -1;
}

TEST_F(vsw, tap_isolate)
{
	uint8_t hmac[6];
	int pfd, n, others;

	if (unshare(CLONE_NEWNET) < 0)
		SKIP(return, "no network namespace (%s)", strerror(errno));
	if (access("/dev/net/tun", R_OK | W_OK))
		SKIP(return, "no /dev/net/tun");

	START("--tap", "vswt0", "--isolate");
	ASSERT_EQ(0, tap_up("vswt0"));
	pfd = tap_packet_socket("vswt0");
	ASSERT_LE(0, pfd);
	vsw_mac(hmac, 0x300);

	GUEST(0);
	GUEST(1);
	/* a guest broadcast reaches the uplink only */
	ASSERT_EQ(0, vsw_send(&self->s, G(0), vsw_bcast, 60, 60));
	ASSERT_EQ(60, pkt_recv(pfd, self->buf, sizeof(self->buf), 60));
	ASSERT_EQ(0, vsw_send(&self->s, G(1), vsw_bcast, 61, 60));
	ASSERT_EQ(60, pkt_recv(pfd, self->buf, sizeof(self->buf), 61));

	/* guest to guest unicast, both known: dropped */
	ASSERT_EQ(0, vsw_send(&self->s, G(0), G(1)->mac, 62, 60));

	/* the uplink reaches everyone; G1 saw nothing from G0 before this */
	n = vsw_frame(self->buf, vsw_bcast, hmac, 63, 60);
	ASSERT_EQ(n, send(pfd, self->buf, n, 0));
	ASSERT_EQ(0, vsw_recv_until(G(1)->fd, 63, &others));
	EXPECT_EQ(0, others);
	ASSERT_EQ(0, vsw_recv_until(G(0)->fd, 63, &others));
	EXPECT_EQ(0, others);

	/* and answers from a guest go back up */
	ASSERT_EQ(0, vsw_send(&self->s, G(0), hmac, 64, 200));
	ASSERT_EQ(200, pkt_recv(pfd, self->buf, sizeof(self->buf), 64));
	/* G1's broadcast kept from G0, and the unicast */
	EXPECT_EQ(2, vsw_stat(&self->s, NULL, "isolated"));
	close(pfd);
}

/*
 * The uplink is held to --fdb-uplink-max entries, and under --mac-lock a
 * host behind it cannot take the MAC a guest has locked: it loses the
 * frame (rx_mac_lock) and the guest keeps its unicast.
 */
TEST_F(vsw, tap_limits)
{
	uint8_t hmac[6];
	int pfd, n, i, others;

	if (unshare(CLONE_NEWNET) < 0)
		SKIP(return, "no network namespace (%s)", strerror(errno));
	if (access("/dev/net/tun", R_OK | W_OK))
		SKIP(return, "no /dev/net/tun");

	START("--tap", "vswt0", "--mac-lock", "--fdb-uplink-max", "4");
	ASSERT_EQ(0, tap_up("vswt0"));
	pfd = tap_packet_socket("vswt0");
	ASSERT_LE(0, pfd);

	GUEST(0);
	GUEST(1);
	/* G0 is a port with its MAC locked; G1 too */
	ASSERT_EQ(0, vsw_send(&self->s, G(0), vsw_bcast, 70, 60));
	ASSERT_EQ(0, vsw_send(&self->s, G(1), vsw_bcast, 71, 60));
	ASSERT_EQ(0, vsw_recv_until(G(0)->fd, 71, &others));

	/* ten hosts behind the uplink: four are learned */
	for (i = 0; i < 10; i++) {
		vsw_mac(hmac, 0x400 + i);
		n = vsw_frame(self->buf, vsw_bcast, hmac, 72 + i, 60);
		ASSERT_EQ(n, send(pfd, self->buf, n, 0));
		ASSERT_EQ(0, vsw_recv_until(G(0)->fd, 72 + i, &others));
		ASSERT_EQ(0, vsw_recv_until(G(1)->fd, 72 + i, &others));
	}
	EXPECT_EQ(6, vsw_stat(&self->s, "vswt0", "fdb_full"));
	vsw_mac(hmac, 0x400 + 3);
	EXPECT_TRUE(vsw_fdb_has(&self->s, hmac));
	vsw_mac(hmac, 0x400 + 4);
	EXPECT_FALSE(vsw_fdb_has(&self->s, hmac));

	/* a host sends with G0's MAC: dropped, G0 keeps its frames */
	n = vsw_frame(self->buf, vsw_bcast, G(0)->mac, 90, 60);
	ASSERT_EQ(n, send(pfd, self->buf, n, 0));
	ASSERT_EQ(0, vsw_send(&self->s, G(1), vsw_bcast, 91, 60));
	ASSERT_EQ(0, vsw_recv_until(G(0)->fd, 91, &others));
	EXPECT_EQ(0, others);
	EXPECT_EQ(1, vsw_stat(&self->s, "vswt0", "rx_mac_lock"));
	ASSERT_EQ(0, vsw_send(&self->s, G(1), G(0)->mac, 92, 60));
	ASSERT_EQ(0, vsw_recv_until(G(0)->fd, 92, &others));
	close(pfd);
}

/* ---- command line ----------------------------------------------------------- */

static char long_path[sizeof(((struct sockaddr_un *)0)->sun_path) + 1];

struct bad_args {
	const char *args[6];
	const char *names;	/* what the one-line error must mention */
};

TEST(bad_options)
{
	const struct bad_args cases[] = {
		{ { "--bogus" }, "--bogus" },
		{ { "--dgram" }, "--dgram" },
		{ { "--dgram", "/tmp/x", "--age", "abc" }, "--age" },
		{ { "--dgram", "/tmp/x", "--age", "-1" }, "--age" },
		{ { "--dgram", "/tmp/x", "--queue", "0" }, "--queue" },
		{ { "--dgram", "/tmp/x", "--max-frame", "99999999" }, "--max-frame" },
		{ { "--dgram", "/tmp/x", "--mode", "999" }, "--mode" },
		{ { "--dgram", "/tmp/x", "--fdb-max", "0" }, "--fdb-max" },
		{ { "--dgram", "/tmp/x", "--fdb-uplink-max", "0" }, "--fdb-uplink-max" },
		{ { "--dgram", "/tmp/x", "--max-user-ports", "0" }, "--max-user-ports" },
		{ { "--dgram", "/tmp/x", "--port-age", "x" }, "--port-age" },
		{ { "--dgram", "/tmp/x", "--max-memory", "0" }, "--max-memory" },
		{ { "--dgram", "/tmp/x", "--bcast-limit", "-1" }, "--bcast-limit" },
		{ { "--dgram", "/tmp/x", "--group", "no-such-group-here" }, "--group" },
		{ { "--dgram", "/tmp/x", "--tap", "much-too-long-ifname" }, "--tap" },
		{ { "--dgram", "/tmp/x", "stray" }, "stray" },
		{ { "--hub" }, "--dgram" },
		{ { "--dgram", long_path }, "--dgram" },
		{ { "-q" }, "-q" },
		{ { "--dgram", "/tmp/x", "--allow-uid", "no-such-user-here" }, "--allow-uid" },
		{ { "--dgram", "/tmp/x", "--allow-gid", "1,,x" }, "--allow-gid" },
		{ { "--dgram", "/tmp/x", "--allow-uid", "4294967295" }, "--allow-uid" },
	};
	char out[4096];
	unsigned int i;

	if (!vsw_bin())
		SKIP(return, "VECSWITCH not set");
	/* one byte more than sun_path can hold with its NUL */
	memset(long_path, 'x', sizeof(long_path) - 1);
	long_path[0] = '/';
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct bad_args *c = &cases[i];
		char *nl;

		EXPECT_EQ(2, vsw_run(out, sizeof(out), c->args)) {
			TH_LOG("case %u (%s): %s", i, c->names, out);
		}
		EXPECT_NE(NULL, strstr(out, c->names)) {
			TH_LOG("case %u: %s", i, out);
		}
		/* one line, then the end */
		nl = strchr(out, '\n');
		EXPECT_TRUE(nl && nl[1] == '\0') {
			TH_LOG("case %u: %s", i, out);
		}
	}
	EXPECT_EQ(0, vsw_run_args(out, sizeof(out), "--help"));
	EXPECT_NE(NULL, strstr(out, "--no-flood-unknown"));
	EXPECT_EQ(0, vsw_run_args(out, sizeof(out), "--version"));
	EXPECT_EQ(0, strncmp(out, "vecswitch ", 10));
}

int main(int argc, char **argv)
{
	const char *bin = vsw_bin();

	if (!bin || bin[0] != '/' || access(bin, X_OK)) {
		printf("# SKIP VECSWITCH must name the switch binary by absolute path (got %s)\n",
		       bin ? bin : "nothing");
		return KSFT_SKIP;
	}
	return test_harness_run(argc, argv);
}
