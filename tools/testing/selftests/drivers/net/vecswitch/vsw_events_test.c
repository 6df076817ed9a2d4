// SPDX-License-Identifier: GPL-2.0
/*
 * vsw_events_test.c - vecswitch, host only: `ctl events`, the stream of
 * what happens to ports, addresses, channels and captures.  Events come
 * in the order they happen and soon after; a reader that stops reading
 * costs the switch a bounded buffer and a count of what it lost, and
 * forwarding does not wait for it.  The fixture: vsw_fixture.h; the
 * messages: vsw_msg.h.
 */
#include "vsw_msg.h"
#include "vsw_ctl.h"
#include "vsw_frame.h"
#include "vsw_proc.h"
#include "vsw_sock.h"

/* Longer than any event the switch writes (a 128-byte name, escaped) */
#define EV_LINE_MAX	2048

struct ev_reader {
	int fd;
	size_t len;
	char buf[65536];
};

/*
 * An events client of @s asking @req: its descriptor in @r once the
 * switch has said "events"; 0, or -1.  @rcvbuf, if not 0, is how much
 * its socket holds.
 */
static int ev_open(const struct vsw *s, struct ev_reader *r, const char *req,
		   int rcvbuf)
{
	char ok[8];

	r->len = 0;
	r->fd = vsw_connect(s->ctl, SOCK_STREAM);
	if (r->fd < 0)
		return -1;
	if (rcvbuf)
		setsockopt(r->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (send(r->fd, req, strlen(req), MSG_NOSIGNAL) != (ssize_t)strlen(req) ||
	    vsw_read_full(r->fd, (uint8_t *)ok, 7) || memcmp(ok, "events\n", 7))
		return -1;
	return 0;
}

/*
 * The next event line of @r within @ms, without its time, into @line;
 * 0, or -1 when none came
 */
static int ev_next(struct ev_reader *r, char *line, size_t len, int ms)
{
	uint64_t deadline = vsw_now_ms() + ms;
	char *nl, *from;
	size_t cut;
	ssize_t n;

	for (;;) {
		nl = memchr(r->buf, '\n', r->len);
		if (nl) {
			*nl = '\0';
			from = strchr(r->buf, ' ');
			from = from ? from + 1 : r->buf;
			cut = strnlen(from, len - 1);
			memcpy(line, from, cut);
			line[cut] = '\0';
			r->len -= nl + 1 - r->buf;
			memmove(r->buf, nl + 1, r->len);
			return 0;
		}
		if (r->len == sizeof(r->buf) || vsw_now_ms() >= deadline)
			return -1;
		{
			struct pollfd pfd = { .fd = r->fd, .events = POLLIN };

			if (poll(&pfd, 1, (int)(deadline - vsw_now_ms())) != 1)
				return -1;
		}
		n = recv(r->fd, r->buf + r->len, sizeof(r->buf) - r->len,
			 MSG_DONTWAIT);
		if (n <= 0)
			return -1;
		r->len += n;
	}
}

/* The next event of @r is @want (its name and fields, as written) */
#define EXPECT_EVENT(r, want) do {					\
	char _l[EV_LINE_MAX];						\
	ASSERT_EQ(0, ev_next(r, _l, sizeof(_l), VSW_WAIT_MS))		\
		TH_LOG("no event, want: %s", want);			\
	EXPECT_STREQ(want, _l);						\
} while (0)

static const char *mac_s(const uint8_t *m, char *out)
{
	sprintf(out, "%02x:%02x:%02x:%02x:%02x:%02x",
		m[0], m[1], m[2], m[3], m[4], m[5]);
	return out;
}

static uint64_t mid3(const uint64_t *m)
{
	uint64_t lo = m[0] < m[1] ? m[0] : m[1], hi = m[0] < m[1] ? m[1] : m[0];

	return m[2] < lo ? lo : m[2] > hi ? hi : m[2];
}

/*
 * A guest that attaches, and then leaves, is seen within 100 ms each;
 * measured from its first frame, and from the frame that finds its
 * socket gone, to the line in the client.  The median of three guests.
 */
TEST_F(vsw, events_soon)
{
	struct ev_reader *r = calloc(1, sizeof(*r));
	char line[EV_LINE_MAX];
	uint64_t took[2][3], t;
	int i, others;

	ASSERT_NE(NULL, r);
	START();
	ASSERT_EQ(0, ev_open(&self->s, r, "events\n", 0));
	GUEST(3);
	ASSERT_EQ(0, vsw_send(&self->s, G(3), vsw_bcast, 0x100, 60));
	ASSERT_EQ(0, ev_next(r, line, sizeof(line), VSW_WAIT_MS));
	ASSERT_EQ(0, ev_next(r, line, sizeof(line), VSW_WAIT_MS));
	for (i = 0; i < 3; i++) {
		GUEST(i);
		t = vsw_now_ms();
		ASSERT_EQ(0, vsw_send(&self->s, G(i), vsw_bcast, 0x200 + i, 60));
		ASSERT_EQ(0, ev_next(r, line, sizeof(line), VSW_WAIT_MS));
		took[0][i] = vsw_now_ms() - t;
		EXPECT_EQ(0, strncmp(line, "attach ", 7)) TH_LOG("%s", line);
		ASSERT_EQ(0, ev_next(r, line, sizeof(line), VSW_WAIT_MS));
		EXPECT_EQ(0, strncmp(line, "learn ", 6)) TH_LOG("%s", line);
		ASSERT_EQ(0, vsw_recv_until(G(3)->fd, 0x200 + i, &others));

		/* gone: the switch finds out at its next frame to it */
		vsw_guest_close(G(i));
		t = vsw_now_ms();
		ASSERT_EQ(0, vsw_send(&self->s, G(3), vsw_bcast, 0x300 + i, 60));
		ASSERT_EQ(0, ev_next(r, line, sizeof(line), VSW_WAIT_MS));
		took[1][i] = vsw_now_ms() - t;
		EXPECT_EQ(0, strncmp(line, "detach ", 7)) TH_LOG("%s", line);
		EXPECT_NE(NULL, strstr(line, " reason=left")) TH_LOG("%s", line);
	}
	for (i = 0; i < 2; i++) {
		uint64_t *m = took[i];

		TH_LOG("%s seen after %llu, %llu, %llu ms", i ? "detach" : "attach",
		       (unsigned long long)m[0], (unsigned long long)m[1],
		       (unsigned long long)m[2]);
		EXPECT_GE(100, mid3(m));
	}
	close(r->fd);
	free(r);
}

/*
 * Attach, learn, channel, move and detach, in the order they happen, in
 * text and in JSON; a capture's start and stop.
 */
TEST_F(vsw, events_order)
{
	struct ev_reader *r = calloc(1, sizeof(*r)), *j = calloc(1, sizeof(*j));
	char want[EV_LINE_MAX], line[EV_LINE_MAX], m[3][18], ok[8];
	int i, fd;

	ASSERT_NE(NULL, r);
	ASSERT_NE(NULL, j);
	START();
	ASSERT_EQ(0, ev_open(&self->s, r, "events\n", 0));
	ASSERT_EQ(0, ev_open(&self->s, j, "events json\n", 0));
	join(_metadata, self, 3);
	for (i = 0; i < 3; i++) {
		snprintf(want, sizeof(want),
			 "attach port=%d kind=dgram name=%s uid=%u pid=%d",
			 i + 1, G(i)->path, (unsigned int)getuid(), (int)getpid());
		EXPECT_EVENT(r, want);
		snprintf(want, sizeof(want), "learn mac=%s vlan=0 port=%d",
			 mac_s(G(i)->mac, m[i]), i + 1);
		EXPECT_EVENT(r, want);
	}
	/* the same first event in JSON: one object, the same fields */
	ASSERT_EQ(0, ev_next(j, line, sizeof(line), VSW_WAIT_MS));
	snprintf(want, sizeof(want),
		 "\"event\":\"attach\",\"port\":1,\"kind\":\"dgram\",\"name\":\"%s\",\"uid\":%u,\"pid\":%d}",
		 G(0)->path, (unsigned int)getuid(), (int)getpid());
	EXPECT_NE(NULL, strstr(line, want)) TH_LOG("%s", line);
	EXPECT_EQ(0, strncmp(line, "{\"ts\":", 6)) TH_LOG("%s", line);

	/* a shortcut channel between G0 and G1 */
	for (i = 0; i < 2; i++)
		ASSERT_EQ(VECNET_MSG_F_VNET | VECNET_MSG_F_CHAN,
			  negotiate_chan(&self->s, G(i)));
	ASSERT_EQ(0, chan_flow(&self->s, G(0), G(1), 0x7000));
	fd = recv_chan(G(1)->fd, G(0)->mac);
	ASSERT_LE(0, fd);
	close(fd);
	snprintf(want, sizeof(want),
		 "channel-open port=1 mac=%s peer=2 peer_mac=%s queues=1", m[0], m[1]);
	EXPECT_EVENT(r, want);

	/* G1's address moves to G2: the channel goes with it */
	memcpy(G(2)->mac, G(1)->mac, 6);
	ASSERT_EQ(0, vsw_send(&self->s, G(2), vsw_bcast, 0x7101, 60));
	snprintf(want, sizeof(want), "move mac=%s vlan=0 from=2 to=3", m[1]);
	EXPECT_EVENT(r, want);
	snprintf(want, sizeof(want),
		 "channel-close port=1 mac=%s peer=2 peer_mac=%s", m[0], m[1]);
	EXPECT_EVENT(r, want);

	/* G0 goes; the switch finds it gone on the next broadcast */
	vsw_guest_close(G(0));
	ASSERT_EQ(0, vsw_send(&self->s, G(2), vsw_bcast, 0x7200, 60));
	snprintf(want, sizeof(want), "detach port=1 kind=dgram name=%s reason=left",
		 self->g[0].path);
	EXPECT_EVENT(r, want);

	/* a capture, started and stopped by its client */
	fd = vsw_connect(self->s.ctl, SOCK_STREAM);
	ASSERT_LE(0, fd);
	ASSERT_EQ(8, send(fd, "capture\n", 8, MSG_NOSIGNAL));
	ASSERT_EQ(0, vsw_read_full(fd, (uint8_t *)ok, 8));
	EXPECT_EVENT(r, "capture-start capture=2");
	close(fd);
	EXPECT_EVENT(r, "capture-stop capture=2 frames=0 lost=0");
	EXPECT_EQ(-1, ev_next(r, line, sizeof(line), 200)) TH_LOG("%s", line);
	close(r->fd);
	close(j->fd);
	free(r);
	free(j);
}

/* A bad events request is refused in words, and the switch goes on */
TEST_F(vsw, events_refused)
{
	char text[256];
	int i, fd[5];

	START();
	ASSERT_LT(0, vsw_ctl(&self->s, "events xml\n", text, sizeof(text)));
	EXPECT_STREQ("error: events: want events [json]\n", text);
	for (i = 0; i < 4; i++) {
		fd[i] = vsw_connect(self->s.ctl, SOCK_STREAM);
		ASSERT_LE(0, fd[i]);
		ASSERT_EQ(7, send(fd[i], "events\n", 7, MSG_NOSIGNAL));
		ASSERT_EQ(0, vsw_read_full(fd[i], (uint8_t *)text, 7));
	}
	ASSERT_LT(0, vsw_ctl(&self->s, "events\n", text, sizeof(text)));
	EXPECT_STREQ("error: events: too many event clients (4 at most)\n", text);
	for (i = 0; i < 4; i++)
		close(fd[i]);
	/* the slots come back */
	VSW_WAIT_WHILE(vsw_ctl(&self->s, "events\n", text, sizeof(text)) != 7);
	EXPECT_STREQ("events\n", text);
}

/*
 * @n frames from G0 and G1 in turn, all with source @src and for G2,
 * received there: each moves @src to the port that sent it, an event
 * each.  How long it took, in microseconds; 0 if a frame was lost.
 */
static uint64_t move_flood(FIXTURE_DATA(vsw) *self, const uint8_t *src, int n)
{
	struct timespec a, b;
	uint8_t frame[128];
	int i, k, len;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i += 8) {
		for (k = 0; k < 8; k++) {
			len = vsw_frame(frame, G(2)->mac, src, i + k, 60);
			if (vsw_send_raw(&self->s, G((i + k) & 1)->fd, frame, len))
				return 0;
		}
		for (k = 0; k < 8; k++)
			if (vsw_recv(G(2)->fd, self->buf, sizeof(self->buf),
				     VSW_WAIT_MS) < 0)
				return 0;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (b.tv_sec - a.tv_sec) * 1000000ull + (b.tv_nsec - a.tv_nsec) / 1000;
}

/*
 * A reader that never reads: the switch keeps at most its buffer for it,
 * counts what does not fit, and says the count once the reader catches
 * up; every event is either written or counted.  Forwarding does not wait
 * for it: the same flood of frames (an event each) takes about as long
 * as with no events client at all.  And once the reader has caught up,
 * an idle switch is idle again (it once kept waking for room to write).
 */
TEST_F(vsw, events_stuck_reader)
{
	struct ev_reader *r = calloc(1, sizeof(*r));
	uint8_t src[6] = { 0x02, 0xee, 0, 0, 0, 1 };
	char line[EV_LINE_MAX];
	unsigned long long lost = 0, lost_n;
	uint64_t none, stuck;
	int moves = 0, n = 20000;

	ASSERT_NE(NULL, r);
	START();
	join(_metadata, self, 3);
	/* the source is learned, on G1: then every frame of a flood moves it */
	ASSERT_LT(0, move_flood(self, src, 2));
	none = move_flood(self, src, n);
	ASSERT_LT(0, none);
	ASSERT_EQ(0, ev_open(&self->s, r, "events\n", 4096));
	stuck = move_flood(self, src, n);
	ASSERT_LT(0, stuck);
	TH_LOG("%d frames, an event each: %llu us with no events client, %llu us with one that does not read",
	       n, (unsigned long long)none, (unsigned long long)stuck);
	EXPECT_GE(3 * none, stuck);

	/* the reader catches up; the next event comes after the count */
	while (!ev_next(r, line, sizeof(line), 200)) {
		ASSERT_EQ(0, strncmp(line, "move ", 5)) TH_LOG("%s", line);
		moves++;
	}
	GUEST(3);
	ASSERT_EQ(0, vsw_send(&self->s, G(3), vsw_bcast, 0x400, 60));
	ASSERT_EQ(0, ev_next(r, line, sizeof(line), VSW_WAIT_MS));
	ASSERT_EQ(1, sscanf(line, "lost count=%llu", &lost)) TH_LOG("%s", line);
	ASSERT_EQ(0, ev_next(r, line, sizeof(line), VSW_WAIT_MS));
	EXPECT_EQ(0, strncmp(line, "attach ", 7)) TH_LOG("%s", line);
	TH_LOG("%d events written, %llu lost", moves, lost);
	{
		long long t0 = vsw_cpu_ticks(self->s.pid), t1;

		vsw_pause_ms(500);
		t1 = vsw_cpu_ticks(self->s.pid);
		ASSERT_LE(0, t0);
		TH_LOG("the switch idle for 0.5 s with the reader caught up: %lld ticks",
		       t1 - t0);
		EXPECT_GT(sysconf(_SC_CLK_TCK) / 4, t1 - t0);
	}
	lost_n = n - moves;
	EXPECT_EQ(lost_n, lost);
	/* what it kept for the reader: the buffer and the socket's, no more */
	EXPECT_GT(n / 2, moves);
	close(r->fd);
	free(r);
}

VSW_TEST_MAIN
