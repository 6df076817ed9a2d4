// SPDX-License-Identifier: GPL-2.0
/*
 * vswrr.c - request/response load for make bench's rr suite: the round
 * trips of small transactions, as ssh, RPC and DNS make them, where bulk
 * throughput says nothing.
 *
 *   vswrr server [-u] [-1] [-p PORT] [-d DELAY_US]
 *   vswrr client -H ADDR [-u] [-p PORT] [-r REQ] [-R RESP] [-n INFLIGHT]
 *                [-t SECS] [-j]
 *
 * TCP: one connection (TCP_NODELAY), whose first 8 bytes tell the server
 * the request and response sizes; then -n requests are kept in flight
 * and each response, taken in order, times the oldest.  UDP: each request
 * starts with its sequence number and the response size it wants (so at
 * least 12 bytes), the server answers with the sequence in a response of
 * that size, and a request unanswered for a second is counted lost and
 * sent anew.  The client prints transactions a second and the 50th, 99th and
 * 99.9th percentile round trip in microseconds (-j: as JSON).  -d makes
 * the server wait that long before each answer (the selftest uses it to
 * check what the client measures); -1 makes it serve one client and end
 * (UDP: once nothing came for a second after the first request).
 *
 * Every loop is bounded by -t; nothing here is a target but the address
 * given, which the bench keeps inside its own network namespaces.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>

#define PAYLOAD_MAX	65536
#define INFLIGHT_MAX	256
/* a UDP request unanswered this long is lost, and sent again */
#define UDP_LOST_NS	1000000000ull
/* samples kept; beyond, the run still counts, the percentiles use these */
#define SAMPLES_MAX	(16u << 20)

struct opts {
	bool server, udp, json, once;
	const char *host;
	const char *port;
	unsigned int req, resp, inflight, secs, delay_us;
};

static void __attribute__((noreturn, format(printf, 1, 2)))
die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("vswrr: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static unsigned int number(const char *opt, const char *arg, unsigned int min,
			   unsigned int max)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (!*arg || *end || errno || v < min || v > max)
		die("%s: '%s' is not a number from %u to %u", opt, arg, min, max);
	return v;
}

static void __attribute__((noreturn)) usage(FILE *f, int status)
{
	fputs("usage: vswrr server [-u] [-1] [-p PORT] [-d DELAY_US]\n"
	      "       vswrr client -H ADDR [-u] [-p PORT] [-r REQ] [-R RESP]\n"
	      "                    [-n INFLIGHT] [-t SECS] [-j]\n"
	      "  -u        UDP instead of TCP\n"
	      "  -p PORT   port (default 5300)\n"
	      "  -d US     server: wait this long before each answer\n"
	      "  -1        server: one client, then end\n"
	      "  -H ADDR   client: the server's address\n"
	      "  -r N      request bytes (default 1; UDP: 12, at least 12)\n"
	      "  -R N      response bytes (default 1; UDP: 8, at least 8)\n"
	      "  -n N      requests in flight (default 1, at most 256)\n"
	      "  -t SECS   how long (default 5)\n"
	      "  -j        JSON\n", f);
	exit(status);
}

static void parse(struct opts *o, int argc, char **argv)
{
	int c;

	if (argc < 2)
		usage(stderr, 2);
	if (!strcmp(argv[1], "server"))
		o->server = true;
	else if (strcmp(argv[1], "client"))
		usage(!strcmp(argv[1], "-h") ? stdout : stderr,
		      !strcmp(argv[1], "-h") ? 0 : 2);
	optind = 2;
	while ((c = getopt(argc, argv, "u1p:d:H:r:R:n:t:jh")) != -1) {
		switch (c) {
		case '1':
			o->once = true;
			break;
		case 'u':
			o->udp = true;
			break;
		case 'p':
			o->port = optarg;
			break;
		case 'd':
			o->delay_us = number("-d", optarg, 0, 10000000);
			break;
		case 'H':
			o->host = optarg;
			break;
		case 'r':
			o->req = number("-r", optarg, 1, PAYLOAD_MAX);
			break;
		case 'R':
			o->resp = number("-R", optarg, 1, PAYLOAD_MAX);
			break;
		case 'n':
			o->inflight = number("-n", optarg, 1, INFLIGHT_MAX);
			break;
		case 't':
			o->secs = number("-t", optarg, 1, 3600);
			break;
		case 'j':
			o->json = true;
			break;
		case 'h':
			usage(stdout, 0);
		default: usage(stderr, 2);
		}
	}
	if (optind != argc)
		die("unexpected argument '%s'", argv[optind]);
	if (!o->server && !o->host)
		die("client: -H ADDR is missing");
	/* UDP: a request carries its sequence and the response size */
	if (o->udp && !o->req)
		o->req = 12;
	if (o->udp && !o->resp)
		o->resp = 8;
	if (!o->req)
		o->req = 1;
	if (!o->resp)
		o->resp = 1;
	if (o->udp && (o->req < 12 || o->resp < 8))
		die("-u: a request carries its sequence number and the response size (-r of at least 12), a response the sequence (-R of at least 8)");
}

static int sock_for(const struct opts *o, bool listen_side, struct sockaddr_storage *sa,
		    socklen_t *salen)
{
	struct addrinfo hints = {
		.ai_socktype = o->udp ? SOCK_DGRAM : SOCK_STREAM,
		.ai_flags = listen_side ? AI_PASSIVE : 0,
		.ai_family = AF_UNSPEC,
	}, *ai;
	int fd, r, one = 1;

	r = getaddrinfo(listen_side ? NULL : o->host, o->port, &hints, &ai);
	if (r)
		die("%s: %s", listen_side ? "listen" : o->host, gai_strerror(r));
	if (listen_side && ai->ai_next && ai->ai_family == AF_INET)
		ai = ai->ai_next;	/* the IPv6 wildcard takes both */
	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die("socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memcpy(sa, ai->ai_addr, ai->ai_addrlen);
	*salen = ai->ai_addrlen;
	freeaddrinfo(ai);
	return fd;
}

static bool read_all(int fd, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t r = read(fd, p, len);

		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			return false;
		}
		p += r;
		len -= r;
	}
	return true;
}

static bool write_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t r = write(fd, p, len);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return false;
		}
		p += r;
		len -= r;
	}
	return true;
}

static void pause_us(unsigned int us)
{
	struct timespec ts = { us / 1000000, (long)(us % 1000000) * 1000 };

	if (us)
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
}

/* ---- server ----------------------------------------------------------------- */

/* One TCP client: its sizes, then a response for each request */
static void serve_tcp_conn(int c, const struct opts *o)
{
	static uint8_t buf[PAYLOAD_MAX];
	uint32_t sizes[2];
	int one = 1;

	setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (!read_all(c, sizes, sizeof(sizes)))
		return;
	sizes[0] = ntohl(sizes[0]);
	sizes[1] = ntohl(sizes[1]);
	if (!sizes[0] || !sizes[1] || sizes[0] > PAYLOAD_MAX || sizes[1] > PAYLOAD_MAX) {
		fprintf(stderr, "vswrr: a client asked for sizes %u and %u: refused\n",
			sizes[0], sizes[1]);
		return;
	}
	memset(buf, 0x5a, sizeof(buf));
	while (read_all(c, buf, sizes[0])) {
		pause_us(o->delay_us);
		if (!write_all(c, buf, sizes[1]))
			return;
	}
}

/* A UDP request: its first 8 bytes (the sequence) and the response size
 * in the next 4 go back in a response of that size */
static void serve_udp(int fd, const struct opts *o)
{
	static uint8_t buf[PAYLOAD_MAX];

	bool seen = false;

	for (;;) {
		struct sockaddr_storage from;
		socklen_t flen = sizeof(from);
		struct pollfd p = { .fd = fd, .events = POLLIN };
		uint32_t want;
		ssize_t r;

		/* -1: a client that stopped for a second is done */
		if (o->once && seen && poll(&p, 1, 1000) == 0)
			exit(0);
		r = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from,
			     &flen);
		if (r < 12)
			continue;
		seen = true;
		memcpy(&want, buf + 8, 4);
		want = ntohl(want);
		if (want < 8 || want > PAYLOAD_MAX)
			continue;
		pause_us(o->delay_us);
		sendto(fd, buf, want, 0, (struct sockaddr *)&from, flen);
	}
}

static void server(const struct opts *o)
{
	struct sockaddr_storage sa;
	socklen_t salen;
	int fd = sock_for(o, true, &sa, &salen), c;

	if (bind(fd, (struct sockaddr *)&sa, salen) < 0)
		die("bind port %s: %s", o->port, strerror(errno));
	if (o->udp)
		serve_udp(fd, o);
	if (listen(fd, 16) < 0)
		die("listen: %s", strerror(errno));
	/* one client at a time: a bench runs one */
	for (;;) {
		c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			die("accept: %s", strerror(errno));
		}
		serve_tcp_conn(c, o);
		close(c);
		if (o->once)
			exit(0);
	}
}

/* ---- client ----------------------------------------------------------------- */

struct samples {
	uint32_t *ns_div;	/* round trips, in units of 10 ns */
	size_t n, cap;
	uint64_t total;		/* transactions, kept or not */
	uint64_t lost;
};

static void sample(struct samples *s, uint64_t rtt_ns)
{
	s->total++;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 65536;
		uint32_t *p;

		if (cap > SAMPLES_MAX)
			return;
		p = realloc(s->ns_div, cap * sizeof(*p));
		if (!p)
			return;
		s->ns_div = p;
		s->cap = cap;
	}
	s->ns_div[s->n++] = rtt_ns / 10 > UINT32_MAX ? UINT32_MAX : rtt_ns / 10;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static double pct_us(const struct samples *s, double p)
{
	size_t i;

	if (!s->n)
		return 0;
	i = (size_t)(p / 100.0 * (s->n - 1) + 0.5);
	return s->ns_div[i] / 100.0;
}

static void client_tcp(const struct opts *o, struct samples *s, uint64_t end)
{
	static uint8_t req[PAYLOAD_MAX], resp[PAYLOAD_MAX];
	uint64_t sent_at[INFLIGHT_MAX];
	unsigned int head = 0, out = 0;
	struct sockaddr_storage sa;
	uint32_t sizes[2] = { htonl(o->req), htonl(o->resp) };
	socklen_t salen;
	int fd = sock_for(o, false, &sa, &salen), one = 1;

	if (connect(fd, (struct sockaddr *)&sa, salen) < 0)
		die("connect %s port %s: %s", o->host, o->port, strerror(errno));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (!write_all(fd, sizes, sizeof(sizes)))
		die("send: %s", strerror(errno));
	memset(req, 0xa5, sizeof(req));
	while (out < o->inflight) {
		sent_at[(head + out) % INFLIGHT_MAX] = now_ns();
		if (!write_all(fd, req, o->req))
			die("send: %s", strerror(errno));
		out++;
	}
	while (now_ns() < end) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		uint64_t t;

		/* a server that stopped answering ends the run at -t */
		if (poll(&p, 1, (int)((end - now_ns()) / 1000000) + 1) <= 0)
			break;
		if (!read_all(fd, resp, o->resp))
			die("the server closed the connection");
		t = now_ns();
		sample(s, t - sent_at[head]);
		head = (head + 1) % INFLIGHT_MAX;
		sent_at[(head + out - 1) % INFLIGHT_MAX] = t;
		if (!write_all(fd, req, o->req))
			die("send: %s", strerror(errno));
	}
	close(fd);
}

/* Slot @k's request, sequence *@seq, leaves now */
static void udp_send(int fd, uint8_t *req, unsigned int len, uint64_t seq,
		     uint64_t *sent_at)
{
	memcpy(req, &seq, 8);
	*sent_at = now_ns();
	send(fd, req, len, 0);
}

/*
 * Request slot k carries the sequence numbers k, k + n, k + 2n...: a
 * response for a number the slot has moved past (it was resent) is late
 * and ignored
 */
static void client_udp(const struct opts *o, struct samples *s, uint64_t end)
{
	static uint8_t req[PAYLOAD_MAX], resp[PAYLOAD_MAX];
	uint64_t sent_at[INFLIGHT_MAX], want[INFLIGHT_MAX];
	unsigned int k, n = o->inflight;
	struct sockaddr_storage sa;
	uint32_t rsz = htonl(o->resp);
	socklen_t salen;
	int fd = sock_for(o, false, &sa, &salen);

	if (connect(fd, (struct sockaddr *)&sa, salen) < 0)
		die("connect %s port %s: %s", o->host, o->port, strerror(errno));
	memset(req, 0xa5, sizeof(req));
	memcpy(req + 8, &rsz, 4);
	for (k = 0; k < n; k++) {
		want[k] = k;
		udp_send(fd, req, o->req, want[k], &sent_at[k]);
	}
	while (now_ns() < end) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		uint64_t t, got;

		if (poll(&p, 1, 10) > 0 && recv(fd, resp, sizeof(resp), 0) >= 8) {
			memcpy(&got, resp, 8);
			k = got % n;
			if (want[k] == got) {
				sample(s, now_ns() - sent_at[k]);
				want[k] += n;
				udp_send(fd, req, o->req, want[k], &sent_at[k]);
			}
		}
		t = now_ns();
		for (k = 0; k < n; k++) {
			if (t - sent_at[k] < UDP_LOST_NS)
				continue;
			s->lost++;
			want[k] += n;
			udp_send(fd, req, o->req, want[k], &sent_at[k]);
		}
	}
	close(fd);
}

static void client(const struct opts *o)
{
	struct samples s = { 0 };
	uint64_t start = now_ns(), end = start + (uint64_t)o->secs * 1000000000ull;
	double secs;

	if (o->udp)
		client_udp(o, &s, end);
	else
		client_tcp(o, &s, end);
	secs = (now_ns() - start) / 1e9;
	qsort(s.ns_div, s.n, sizeof(*s.ns_div), cmp_u32);
	if (o->json)
		printf("{\"proto\":\"%s\",\"req\":%u,\"resp\":%u,\"inflight\":%u,"
		       "\"secs\":%.3f,\"transactions\":%llu,\"tps\":%.1f,"
		       "\"p50_us\":%.2f,\"p99_us\":%.2f,\"p999_us\":%.2f,\"lost\":%llu}\n",
		       o->udp ? "udp" : "tcp", o->req, o->resp, o->inflight, secs,
		       (unsigned long long)s.total, s.total / secs, pct_us(&s, 50),
		       pct_us(&s, 99), pct_us(&s, 99.9), (unsigned long long)s.lost);
	else
		printf("%s rr %u/%u bytes, %u in flight, %.1f s: %llu transactions, "
		       "%.1f/s; round trip p50 %.2f us, p99 %.2f us, p99.9 %.2f us; "
		       "%llu lost\n", o->udp ? "udp" : "tcp", o->req, o->resp,
		       o->inflight, secs, (unsigned long long)s.total,
		       s.total / secs, pct_us(&s, 50), pct_us(&s, 99),
		       pct_us(&s, 99.9), (unsigned long long)s.lost);
	free(s.ns_div);
	if (!s.total)
		die("no transaction completed in %u s", o->secs);
}

int main(int argc, char **argv)
{
	struct opts o = { .port = "5300", .inflight = 1, .secs = 5 };

	signal(SIGPIPE, SIG_IGN);
	parse(&o, argc, argv);
	if (o.server)
		server(&o);
	else
		client(&o);
	return 0;
}
