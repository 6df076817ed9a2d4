// SPDX-License-Identifier: GPL-2.0
/*
 * vsw_users_test.c - vecswitch, host only: sender credentials: --allow-uid and --allow-gid, per-user and per-process port limits, the senders' effective ids.
 * The fixture and what the programs share: vsw_fixture.h.
 */
#include "vsw_fixture.h"
#include "vsw_ctl.h"
#include "vsw_frame.h"
#include "vsw_proc.h"
#include "vsw_sock.h"

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

VSW_TEST_MAIN
