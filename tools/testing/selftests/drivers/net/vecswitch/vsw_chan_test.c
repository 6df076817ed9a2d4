// SPDX-License-Identifier: GPL-2.0
/*
 * vsw_chan_test.c - vecswitch, host only: shortcut channels offered to two
 * guests that negotiated them, withdrawn, shared out by user, backed off.
 * The fixture and what the programs share: vsw_fixture.h; the messages:
 * vsw_msg.h.
 */
#include "vsw_msg.h"
#include "vsw_ctl.h"
#include "vsw_frame.h"
#include "vsw_sock.h"

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
		ASSERT_EQ(VECNET_MSG_F_VNET | VECNET_MSG_F_CHAN,
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
	EXPECT_EQ(2, sscanf(line + 1, "%*u %*s %*u %*s %*u %*u %u/%u",
				&q0, &q1));
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
		ASSERT_EQ(VECNET_MSG_F_VNET | VECNET_MSG_F_CHAN,
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
		ASSERT_EQ(VECNET_MSG_F_VNET | VECNET_MSG_F_CHAN,
			  negotiate_chan(&self->s, G(i)));
	ASSERT_EQ(0, send_vnet_n(&self->s, G(0), G(1)->mac, 0x7500,
				 CHAN_SUSTAIN));
	c = recv_chan(G(1)->fd, G(0)->mac);
	ASSERT_LE(0, c);
	close(c);
	/* 5 HELLOs within the second of back-off, each past the 100 ms gap */
	for (i = 0; i < 5; i++) {
		usleep(150 * 1000);
		ASSERT_EQ(VECNET_MSG_F_VNET | VECNET_MSG_F_CHAN,
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
 * Read and drop what reaches @fd until @done is readable, as a guest
 * reads its socket: the host may hold only 10 datagrams for a socket
 * (net.unix.max_dgram_qlen), and an offer for a guest that does not read
 * fails.  0, or -1 when @done said nothing within VSW_WAIT_MS.
 */
static int drain_until(int fd, int done)
{
	uint64_t deadline = vsw_now_ms() + VSW_WAIT_MS;
	struct pollfd pfd[2] = {
		{ .fd = done, .events = POLLIN },
		{ .fd = fd, .events = POLLIN },
	};
	char buf[2048];

	while (vsw_now_ms() < deadline) {
		if (poll(pfd, 2, (int)(deadline - vsw_now_ms())) < 0)
			return -1;
		if (pfd[1].revents & POLLIN)
			recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (pfd[0].revents & POLLIN)
			return 0;
	}
	return -1;
}

/*
 * The ports of one other user get at most 2 of a guest's channels, however
 * many they are; an abstract name gets none, and its MODE says so.  G0
 * reads all the while (the offers to it are dropped unread).
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
	ASSERT_EQ(VECNET_MSG_F_VNET | VECNET_MSG_F_CHAN, negotiate_chan(&self->s, G(0)));
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
			    (VECNET_MSG_F_VNET | VECNET_MSG_F_CHAN))
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
	ASSERT_EQ(0, drain_until(G(0)->fd, pipefd[0]));
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
	ASSERT_EQ(VECNET_MSG_F_VNET, negotiate_chan(&self->s, &g));
	ASSERT_EQ(0, send_vnet_n(&self->s, &g, G(0)->mac, 0x7d00,
				 2 * CHAN_SUSTAIN));
	EXPECT_EQ(-1, recv_chan(g.fd, G(0)->mac));
	EXPECT_EQ(2, vsw_stat(&self->s, NULL, "chan_opened"));
	close(g.fd);
}

VSW_TEST_MAIN
