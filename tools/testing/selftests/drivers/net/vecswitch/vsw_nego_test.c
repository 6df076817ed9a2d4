// SPDX-License-Identifier: GPL-2.0
/*
 * vsw_nego_test.c - vecswitch, host only: virtio-net headers negotiated on
 * the --dgram socket: in order, out of order, on a hub, and bad messages.
 * The fixture and what the programs share: vsw_fixture.h; the messages:
 * vsw_msg.h.
 */
#include "vsw_msg.h"
#include "vsw_ctl.h"
#include "vsw_frame.h"
#include "vsw_sock.h"

/* ---- virtio-net headers negotiated on the --dgram socket --------------- */

/* Guest i asks for headers, is answered, and switches over itself. */
static void negotiate(struct __test_metadata *_metadata,
		      FIXTURE_DATA(vsw) *self, int i)
{
	uint8_t m[VECNET_MSG_LEN];

	ASSERT_EQ(0, vsw_send_raw(&self->s, G(i)->fd, m,
				  nego_msg(m, VECNET_MSG_HELLO, 1)));
	ASSERT_TRUE(got_mode(G(i)->fd));
	ASSERT_EQ(0, vsw_send_raw(&self->s, G(i)->fd, m,
				  nego_msg(m, VECNET_MSG_MODE, 1)));
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
	uint8_t m[VECNET_MSG_LEN];
	int i, n;

	START();
	join(_metadata, self, 2);
	/* G0 does not read for now: frames for it queue up in the kernel */
	for (i = 0; i < 5; i++)
		ASSERT_EQ(0, vsw_send(&self->s, G(1), G(0)->mac, 0x6200 + i, 100));
	ASSERT_EQ(0, vsw_send_raw(&self->s, G(0)->fd, m,
				  nego_msg(m, VECNET_MSG_HELLO, 1)));
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
	uint8_t m[VECNET_MSG_LEN];

	START("--hub");
	join(_metadata, self, 2);
	ASSERT_EQ(0, vsw_send_raw(&self->s, G(0)->fd, m,
				  nego_msg(m, VECNET_MSG_HELLO, 1)));
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
	const size_t len = VECNET_MSG_LEN;
	uint8_t m[VECNET_MSG_LEN + 4];
	int n;

	START();
	join(_metadata, self, 2);
	nego_msg(m, VECNET_MSG_HELLO, 1);
	ASSERT_EQ(0, vsw_send_raw(&self->s, G(0)->fd, m, 8));	/* truncated */
	m[len] = 0;
	ASSERT_EQ(0, vsw_send_raw(&self->s, G(0)->fd, m, len + 1));	/* too long */
	m[offsetof(struct vecnet_msg, version)] = VECNET_MSG_VERSION + 1;
	ASSERT_EQ(0, vsw_send_raw(&self->s, G(0)->fd, m, len));
	nego_msg(m, VECNET_MSG_TYPE_MAX + 1, 1);		/* type */
	ASSERT_EQ(0, vsw_send_raw(&self->s, G(0)->fd, m, len));
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
				  nego_msg(m, VECNET_MSG_HELLO, 1)));
	ASSERT_TRUE(got_mode(G(0)->fd));
	EXPECT_EQ(1, vsw_stat(&self->s, G(0)->path, "rx_hello_again"));
	ASSERT_EQ(0, vsw_send(&self->s, G(0), G(1)->mac, 0x6401, 100));
	n = vsw_recv(G(1)->fd, self->buf, sizeof(self->buf), VSW_WAIT_MS);
	ASSERT_EQ(100, n);
	EXPECT_EQ(0x6401u, vsw_tag(self->buf));
	/* a HELLO without the header flag gets no answer: plain it stays */
	ASSERT_EQ(0, vsw_send_raw(&self->s, G(0)->fd, m,
				  nego_msg(m, VECNET_MSG_HELLO, 0)));
	ASSERT_EQ(0, vsw_send(&self->s, G(1), G(0)->mac, 0x6402, 100));
	n = vsw_recv(G(0)->fd, self->buf, sizeof(self->buf), VSW_WAIT_MS);
	ASSERT_EQ(100, n);
	EXPECT_EQ(0x6402u, vsw_tag(self->buf));
}

VSW_TEST_MAIN
