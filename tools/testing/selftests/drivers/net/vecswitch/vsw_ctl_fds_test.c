// SPDX-License-Identifier: GPL-2.0
/*
 * vsw_ctl_fds_test.c - vecswitch, host only: port names in the control socket's output, and descriptors sent to the switch (closed, never kept, never stalling it).
 * The fixture and what the programs share: vsw_fixture.h.
 */
#include "vsw_fixture.h"
#include "vsw_ctl.h"
#include "vsw_frame.h"
#include "vsw_proc.h"
#include "vsw_sock.h"

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
	/* what 8 ports need (fds_needed in sock.c, 360), and some to spare */
	struct rlimit rl = { .rlim_cur = 376, .rlim_max = 376 };
	int fd[30], i, n = 0;
	long long t0, t1;
	char c;

	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	START("--max-ports", "8");
	for (i = 0; i < 30; i++)
		fd[i] = vsw_connect(self->s.stream, SOCK_STREAM);
	VSW_WAIT_WHILE(vsw_stat(&self->s, NULL, "no_port") < 22);
	EXPECT_EQ(22, vsw_stat(&self->s, NULL, "no_port"));
	t0 = vsw_cpu_ticks(self->s.pid);
	vsw_pause_ms(1000);
	t1 = vsw_cpu_ticks(self->s.pid);
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

VSW_TEST_MAIN
