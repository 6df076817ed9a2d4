// SPDX-License-Identifier: GPL-2.0
/*
 * vsw_forward_test.c - vecswitch, host only: learning, flooding, aging, moves, hub mode, MAC lock, storm control, runts, oversize and garbage, stream and seqpacket framing, dead and stopped guests, the control output.
 * The fixture and what the programs share: vsw_fixture.h.
 */
#include "vsw_fixture.h"
#include "vsw_ctl.h"
#include "vsw_frame.h"
#include "vsw_proc.h"
#include "vsw_sock.h"

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
	/* no --ctl: the service's socket, which a test host has not */
	if (access("/run/vecswitch/ctl.sock", F_OK)) {
		EXPECT_EQ(1, vsw_run_args(out, sizeof(out), "ctl", "fdb"));
		EXPECT_NE(NULL, strstr(out, "/run/vecswitch/ctl.sock"));
	}
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

VSW_TEST_MAIN
