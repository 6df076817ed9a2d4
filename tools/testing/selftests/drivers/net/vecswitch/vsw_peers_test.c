// SPDX-License-Identifier: GPL-2.0
/*
 * vsw_peers_test.c - vecswitch, host only: where a dgram peer's frames go: the destination pinned when the port is made, restarted guests, names that are not sockets.
 * The fixture and what the programs share: vsw_fixture.h.
 */
#include "vsw_fixture.h"
#include "vsw_ctl.h"
#include "vsw_frame.h"
#include "vsw_sock.h"

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

VSW_TEST_MAIN
