// SPDX-License-Identifier: GPL-2.0
/*
 * vsw_host_test.c - vecswitch, host only: the tap uplink with --isolate in a network namespace of its own, and the command line.
 * The fixture and what the programs share: vsw_fixture.h.
 */
#include "vsw_fixture.h"
#include "vsw_ctl.h"
#include "vsw_frame.h"
#include "vsw_proc.h"
#include "vsw_sock.h"

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
	/* --help is longer than a page */
	char out[16384];
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

VSW_TEST_MAIN
