// SPDX-License-Identifier: GPL-2.0
/*
 * vsw_mq_test.c - vecswitch, host only: multiqueue guests (queue sockets
 * joining one port, refused, reset, closed) and a shortcut channel per
 * queue.
 * The fixture and what the programs share: vsw_fixture.h; the messages:
 * vsw_msg.h.
 */
#include "vsw_msg.h"
#include "vsw_ctl.h"
#include "vsw_frame.h"
#include "vsw_sock.h"

/* ---- multiqueue guests: one guest, several sockets, one port ------------ */

#define MQ_MAX		8	/* sockets of one guest, its main one included */

#define MQ_FLOWS	64

/*
 * Guest i says HELLO with headers, channels and queue sockets, reads the
 * MODE and the QUEUES with its cookie, and sends its MODE unless @early.
 */
static void mq_hello(struct __test_metadata *_metadata,
		     FIXTURE_DATA(vsw) *self, int i, uint8_t *cookie,
		     bool early)
{
	uint8_t m[VECNET_MSG_LEN];

	ASSERT_EQ(0, vsw_send_raw(&self->s, G(i)->fd, m,
				  nego_msg(m, VECNET_MSG_HELLO, 3 | VECNET_MSG_F_MQ)));
	ASSERT_TRUE(got_mode(G(i)->fd));
	ASSERT_TRUE(got_msg(G(i)->fd, VECNET_MSG_QUEUES, cookie));
	if (!early)
		ASSERT_EQ(0, vsw_send_raw(&self->s, G(i)->fd, m,
					  nego_msg(m, VECNET_MSG_MODE, 1)));
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
	uint8_t m[VECNET_MSG_LEN], got[VECNET_MSG_COOKIE_LEN];

	if (vsw_send_raw(s, fd, m, mq_msg(m, VECNET_MSG_JOIN, cookie)))
		return false;
	return got_msg(fd, VECNET_MSG_JOIN, got) &&
	       !memcmp(got, cookie, sizeof(got));
}

/*
 * Socket fd sends JOIN(cookie) and is refused: counted, and not answered
 * (an answer would have left before the counter can be read)
 */
static bool mq_refused(const struct vsw *s, int fd, const uint8_t *cookie)
{
	long long before = vsw_stat(s, NULL, "rx_join_bad");
	uint8_t m[VECNET_MSG_LEN];

	if (before < 0 || vsw_send_raw(s, fd, m, mq_msg(m, VECNET_MSG_JOIN, cookie)))
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
				  nego_msg((uint8_t *)json, VECNET_MSG_HELLO, 1)));
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
		if (vsw_send_raw(s, fd, m, mq_msg(m, VECNET_MSG_JOIN, cookie)))
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
				  nego_msg(m, VECNET_MSG_MODE, 1)));
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

/* ---- a shortcut channel per queue ---------------------------------------- */

/*
 * Guest i says HELLO with @flags and queue sockets, reads the MODE (its
 * flags in *@mode) and the QUEUES with its cookie, sends its MODE, and
 * joins @nq further sockets q[0..nq-1] (named g<i>q<k>.sock); the
 * cookie in @cookie
 */
static void chanq_guest(struct __test_metadata *_metadata,
			FIXTURE_DATA(vsw) *self, int i, uint16_t flags,
			int *mode, struct vsw_guest *q, int nq, uint8_t *cookie)
{
	uint8_t m[VECNET_MSG_LEN];
	int k;

	ASSERT_EQ(0, vsw_send_raw(&self->s, G(i)->fd, m,
				  nego_msg(m, VECNET_MSG_HELLO, flags | VECNET_MSG_F_MQ)));
	*mode = recv_mode(G(i)->fd);
	ASSERT_TRUE(got_msg(G(i)->fd, VECNET_MSG_QUEUES, cookie));
	ASSERT_EQ(0, vsw_send_raw(&self->s, G(i)->fd, m,
				  nego_msg(m, VECNET_MSG_MODE, VECNET_MSG_F_VNET)));
	for (k = 0; k < nq; k++) {
		char name[32];

		snprintf(name, sizeof(name), "g%dq%d.sock", i, k + 1);
		mq_open(_metadata, self, i, &q[k], name);
		ASSERT_TRUE(mq_join(&self->s, q[k].fd, cookie));
	}
}

/* The "queues" of the one channel `ctl channels json` lists, or -1 */
static int chan_json_queues(const struct vsw *s)
{
	static char json[4096];
	const char *at;

	if (vsw_ctl(s, "channels json\n", json, sizeof(json)) <= 0)
		return -1;
	at = strstr(json, "\"queues\":");
	if (!at || strstr(at + 1, "\"queues\":"))
		return -1;
	return atoi(at + strlen("\"queues\":"));
}

/* Both ends of a pair carry a datagram each way */
static bool chan_pair_ok(int a, int b)
{
	char buf[8];

	return send(a, "ab", 2, MSG_DONTWAIT | MSG_NOSIGNAL) == 2 &&
	       recv(b, buf, sizeof(buf), MSG_DONTWAIT) == 2 &&
	       send(b, "ba", 2, MSG_DONTWAIT | MSG_NOSIGNAL) == 2 &&
	       recv(a, buf, sizeof(buf), MSG_DONTWAIT) == 2;
}

/* A send on a withdrawn end fails: the switch shut its pair down */
static bool chan_shut_down(int fd)
{
	errno = 0;
	return send(fd, "x", 1, MSG_DONTWAIT | MSG_NOSIGNAL) < 0 &&
	       errno == EPIPE;
}

/*
 * Two guests that take a channel per queue, one with three sockets and
 * one with two, get a pair per queue both have, each on the queue's own
 * socket: one channel in every count (no second one between the two
 * ports, whatever the addresses), withdrawn whole when the queue sockets
 * change.
 */
TEST_F(vsw, chanq_pairs)
{
	struct vsw_guest q0[2], q1[2];
	uint8_t cookie[6], other[6];
	int c[2][2], mode, i, k;

	START();
	for (i = 0; i < 2; i++)
		GUEST(i);
	announce(_metadata, self, 1);
	chanq_guest(_metadata, self, 0, VECNET_MSG_F_VNET | VECNET_MSG_F_CHAN |
		    VECNET_MSG_F_CHANQ, &mode, q0, 2, cookie);
	EXPECT_EQ(VECNET_MSG_F_VNET | VECNET_MSG_F_CHAN | VECNET_MSG_F_CHANQ, mode);
	chanq_guest(_metadata, self, 1, VECNET_MSG_F_VNET | VECNET_MSG_F_CHAN |
		    VECNET_MSG_F_CHANQ, &mode, q1, 1, cookie);
	EXPECT_EQ(VECNET_MSG_F_VNET | VECNET_MSG_F_CHAN | VECNET_MSG_F_CHANQ, mode);
	ASSERT_EQ(0, send_vnet_n(&self->s, G(0), G(1)->mac, 0x7400,
				 CHAN_SUSTAIN));
	c[0][0] = recv_chan(G(0)->fd, G(1)->mac);
	c[0][1] = recv_chan(q0[0].fd, G(1)->mac);
	c[1][0] = recv_chan(G(1)->fd, G(0)->mac);
	c[1][1] = recv_chan(q1[0].fd, G(0)->mac);
	for (i = 0; i < 2; i++)
		for (k = 0; k < 2; k++)
			ASSERT_LE(0, c[i][k]);
	/* G0's third socket has no partner: no CHAN for it */
	EXPECT_TRUE(vsw_quiet(q0[1].fd));
	EXPECT_EQ(1, vsw_stat(&self->s, NULL, "chan_opened"));
	EXPECT_EQ(2, chan_json_queues(&self->s));
	/* queue k reaches queue k */
	for (k = 0; k < 2; k++)
		EXPECT_TRUE(chan_pair_ok(c[0][k], c[1][k]));
	/* its two pairs are the one channel two ports may share */
	memcpy(other, G(0)->mac, 6);
	G(0)->mac[5] ^= 0x40;
	ASSERT_EQ(0, send_vnet_n(&self->s, G(0), G(1)->mac, 0x7480,
				 CHAN_SUSTAIN));
	VSW_WAIT_WHILE(vsw_stat(&self->s, NULL, "chan_full") < 1);
	EXPECT_LE(1, vsw_stat(&self->s, NULL, "chan_full"));
	EXPECT_EQ(1, vsw_stat(&self->s, NULL, "chan_opened"));
	memcpy(G(0)->mac, other, 6);

	/* a second socket of G1 joins: the channel goes, every pair of it */
	ASSERT_EQ(0, vsw_guest_open(&q1[1], &self->s, "g1q2.sock", 2));
	ASSERT_TRUE(mq_join(&self->s, q1[1].fd, cookie));
	VSW_WAIT_WHILE(vsw_stat(&self->s, NULL, "chan_revoked") < 1);
	EXPECT_EQ(1, vsw_stat(&self->s, NULL, "chan_revoked"));
	for (i = 0; i < 2; i++)
		for (k = 0; k < 2; k++)
			EXPECT_TRUE(chan_shut_down(c[i][k]))
				TH_LOG("guest %d queue %d: %s", i, k,
				       strerror(errno));
	for (i = 0; i < 2; i++)
		for (k = 0; k < 2; k++)
			close(c[i][k]);
	EXPECT_EQ(-1, chan_json_queues(&self->s));
	for (k = 0; k < 2; k++) {
		vsw_guest_close(&q0[k]);
		vsw_guest_close(&q1[k]);
	}
}

/*
 * A multiqueue guest that does not say F_CHANQ (an older driver) gets the
 * one channel on its main socket, and none on its queue socket, even from
 * a guest that takes one per queue.
 */
TEST_F(vsw, chanq_old_guest)
{
	struct vsw_guest q0, q1;
	uint8_t cookie[6];
	int c0, c1, mode;

	START();
	GUEST(0);
	GUEST(1);
	announce(_metadata, self, 1);
	chanq_guest(_metadata, self, 0, VECNET_MSG_F_VNET | VECNET_MSG_F_CHAN |
		    VECNET_MSG_F_CHANQ, &mode, &q0, 1, cookie);
	chanq_guest(_metadata, self, 1, VECNET_MSG_F_VNET | VECNET_MSG_F_CHAN, &mode,
		    &q1, 1, cookie);
	EXPECT_EQ(VECNET_MSG_F_VNET | VECNET_MSG_F_CHAN, mode);
	ASSERT_EQ(0, send_vnet_n(&self->s, G(0), G(1)->mac, 0x7500,
				 CHAN_SUSTAIN));
	c0 = recv_chan(G(0)->fd, G(1)->mac);
	c1 = recv_chan(G(1)->fd, G(0)->mac);
	ASSERT_LE(0, c0);
	ASSERT_LE(0, c1);
	EXPECT_TRUE(chan_pair_ok(c0, c1));
	EXPECT_EQ(1, chan_json_queues(&self->s));
	/* what reached the queue sockets was frames, never a CHAN */
	EXPECT_EQ(-1, recv_chan(q0.fd, G(1)->mac));
	EXPECT_EQ(-1, recv_chan(q1.fd, G(0)->mac));
	EXPECT_EQ(1, vsw_stat(&self->s, NULL, "chan_opened"));
	close(c0);
	close(c1);
	vsw_guest_close(&q0);
	vsw_guest_close(&q1);
}

VSW_TEST_MAIN
