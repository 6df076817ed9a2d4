// SPDX-License-Identifier: GPL-2.0
/*
 * ctl_client.c - `vecswitch ctl`: talk to a running switch's control
 * socket (ctl.c has the protocol).
 *
 *   ports, fdb, stats, channels  one report, copied to stdout
 *   capture                      frames the switch forwards, written as
 *                                pcap by libpcap's dumper (capture.c has
 *                                the switch's side)
 *   top                          per-port rates, once a second
 *   events                       a line for each port attached or gone,
 *                                address learned, moved or aged, channel,
 *                                capture, as it happens (events.c)
 *
 * Exit status 0, 1 when the switch or the socket answered with an error,
 * 2 for a bad command line.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <pcap/pcap.h>

#include "vecswitch.h"

#define EXIT_USAGE	2
/* after the user stops a capture, the switch's END is waited for this long */
#define CAP_END_WAIT_MS	5000
#define CAP_READ_BUF	(1u << 20)
#define TOP_PORTS	256
/* the control socket of the shipped unit (vecswitch.service) */
#define CTL_SERVICE_PATH	"/run/vecswitch/ctl.sock"
/* and of the network NAME of the template unit (vecswitch@NAME.service) */
#define CTL_NETWORK_FMT		"/run/vecswitch/%s/ctl.sock"

static volatile sig_atomic_t stop;
/* no --ctl: the service's socket is tried, and the errors say so */
static bool ctl_defaulted;
/* --network NAME: that network's, likewise */
static const char *ctl_network;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

/* SIGINT and SIGTERM end what runs until interrupted, cleanly */
static void catch_stop(void)
{
	struct sigaction sa = { .sa_handler = on_stop };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static int __attribute__((format(printf, 1, 2))) ctl_usage(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("vecswitch ctl: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return EXIT_USAGE;
}

/* A --count of 1 or more into *@n; -1 if @arg is not one */
static int count_arg(const char *arg, unsigned long *n)
{
	char *end;

	errno = 0;
	*n = strtoul(arg, &end, 10);
	return *end || errno || !*n || *arg == '-' ? -1 : 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Connect to the control socket at @path; -1 (said why) if it cannot */
static int ctl_connect(const char *path)
{
	struct sockaddr_un sa;
	socklen_t len;
	int fd;

	if (vs_sockaddr_un(&sa, &len, path) < 0) {
		fprintf(stderr, "vecswitch ctl: --ctl: path empty or too long\n");
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, len) < 0) {
		int err = errno;

		if (ctl_network && (err == ENOENT || err == ECONNREFUSED))
			fprintf(stderr,
				"vecswitch ctl: --network %s: no control socket %s (is vecswitch@%s.service running?)\n",
				ctl_network, path, ctl_network);
		else if (ctl_defaulted && (err == ENOENT || err == ECONNREFUSED))
			fprintf(stderr,
				"vecswitch ctl: no --ctl PATH given, and the service's control socket %s is not there (is vecswitch.service running?)\n",
				path);
		else if (err == EACCES)
			fprintf(stderr,
				"vecswitch ctl: %s: %s: its owner and group may use it ('ls -l' shows them; the switch's --ctl-mode and --ctl-group set them)\n",
				path, strerror(err));
		else
			fprintf(stderr, "vecswitch ctl: %s: %s\n", path, strerror(err));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* the switch closes without a word on a client it does not answer */
static void ctl_refused(const char *path)
{
	fprintf(stderr,
		"vecswitch ctl: %s: the switch closed without answering: it answers root, its own user and members of its --ctl-group\n",
		path);
}

static bool send_req(int fd, const char *path, const char *req)
{
	size_t n = strlen(req);

	if (send(fd, req, n, MSG_NOSIGNAL) != (ssize_t)n) {
		/* closed before the request was there */
		if (errno == EPIPE || errno == ECONNRESET)
			ctl_refused(path);
		else
			fprintf(stderr, "vecswitch ctl: send: %s\n", strerror(errno));
		return false;
	}
	return true;
}

/*
 * One request, its whole answer into *@out (NUL-terminated, the caller
 * frees it).  0, or 1 when the answer is an error (text or JSON), or -1
 * (said why, *@out unset) when the socket failed.
 */
static int fetch(const char *path, const char *req, char **out)
{
	struct timeval tv = { .tv_sec = VS_CTL_TIMEOUT_MS / 1000 };
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	bool ok = false;
	ssize_t r = 0;
	int fd = -1;

	if (!buf)
		return -1;
	fd = ctl_connect(path);
	if (fd < 0)
		goto out;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (!send_req(fd, path, req))
		goto out;
	shutdown(fd, SHUT_WR);
	for (;;) {
		if (len + 1 == cap) {
			char *more = cap < (64u << 20) ? realloc(buf, cap * 2) : NULL;

			if (!more) {
				fprintf(stderr, "vecswitch ctl: the answer is too large\n");
				goto out;
			}
			buf = more;
			cap *= 2;
		}
		r = recv(fd, buf + len, cap - 1 - len, 0);
		if (r <= 0)
			break;
		len += r;
	}
	buf[len] = '\0';
	if (!len && (!r || errno == ECONNRESET))
		ctl_refused(path);
	else if (r < 0)
		fprintf(stderr, "vecswitch ctl: receive: %s\n", strerror(errno));
	else
		ok = true;
out:
	if (fd >= 0)
		close(fd);
	if (!ok) {
		free(buf);
		return -1;
	}
	*out = buf;
	return !strncmp(buf, "error:", 6) || !strncmp(buf, "{\"error\"", 8);
}

/* ---- capture ------------------------------------------------------------- */

struct cap_out {
	const char *file;
	unsigned long snaplen;
	pcap_t *pc;
	pcap_dumper_t *d;
	bool broken;			/* the file or pipe refused a write */
};

/*
 * The pcap file, once the switch has taken the request: an error leaves
 * no file header behind on stdout
 */
static bool cap_open(struct cap_out *o)
{
	o->pc = pcap_open_dead(DLT_EN10MB, o->snaplen);
	if (!o->pc)
		return false;
	o->d = pcap_dump_open(o->pc, o->file);
	if (o->d)
		return true;
	fprintf(stderr, "vecswitch ctl: capture: %s\n", pcap_geterr(o->pc));
	pcap_close(o->pc);
	o->pc = NULL;
	return false;
}

/* The records in @buf[0..@len): handled ones consumed, the rest left */
static size_t cap_records(struct cap_out *o, const uint8_t *buf, size_t len,
			  bool *ended)
{
	size_t at = 0;

	while (len - at >= sizeof(struct vs_cap_rec)) {
		struct vs_cap_rec r;
		struct pcap_pkthdr h;
		uint64_t n[2];

		memcpy(&r, buf + at, sizeof(r));
		if (len - at - sizeof(r) < r.len)
			break;
		at += sizeof(r);
		switch (r.type) {
		case VS_CAP_FRAME:
			h.ts.tv_sec = r.ts_ns / 1000000000u;
			h.ts.tv_usec = r.ts_ns % 1000000000u / 1000;
			h.caplen = r.len;
			h.len = r.origlen;
			pcap_dump((u_char *)o->d, &h, buf + at);
			break;
		case VS_CAP_NOTE:
			fprintf(stderr, "vecswitch ctl: capture: %.*s\n",
				(int)r.len, (const char *)buf + at);
			break;
		case VS_CAP_END:
			memset(n, 0, sizeof(n));
			memcpy(n, buf + at, r.len < sizeof(n) ? r.len : sizeof(n));
			fprintf(stderr,
				"vecswitch ctl: capture: %llu frames captured, %llu lost%s\n",
				(unsigned long long)n[0], (unsigned long long)n[1],
				n[1] ? " (the reader fell behind)" : "");
			*ended = true;
			break;
		}
		at += r.len;
	}
	if (pcap_dump_flush(o->d) < 0)
		o->broken = true;
	return at;
}

/* Read the switch's answer and records from @fd until the END */
static int cap_run(int fd, struct cap_out *o)
{
	uint8_t *buf = malloc(CAP_READ_BUF);
	double give_up = 0;
	bool ended = false, started = false;
	size_t len = 0, used;
	int ret = 1;

	if (!buf)
		return 1;
	while (!ended) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if ((stop || o->broken) && !give_up) {
			/* the switch ends it and sends the counts */
			shutdown(fd, SHUT_WR);
			give_up = now_s() + CAP_END_WAIT_MS / 1000.0;
		}
		if (give_up && now_s() > give_up) {
			fprintf(stderr, "vecswitch ctl: capture: no end from the switch\n");
			break;
		}
		if (poll(&pfd, 1, 200) <= 0)
			continue;
		r = recv(fd, buf + len, CAP_READ_BUF - len, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r < 0)
				fprintf(stderr, "vecswitch ctl: receive: %s\n", strerror(errno));
			else if (!started && len)
				fprintf(stderr, "vecswitch ctl: the switch says: %.*s",
					(int)len - (len > 7 ? 7 : 0),
					(char *)buf + (len > 7 ? 7 : 0));
			else
				fprintf(stderr, "vecswitch ctl: capture: the switch closed it without an end\n");
			break;
		}
		len += r;
		if (!started) {
			if (len < 8)
				continue;
			if (memcmp(buf, "capture\n", 8))
				continue;	/* an error line: read to its end */
			if (!cap_open(o))
				break;
			started = true;
			memmove(buf, buf + 8, len - 8);
			len -= 8;
		}
		used = cap_records(o, buf, len, &ended);
		memmove(buf, buf + used, len - used);
		len -= used;
		if (len == CAP_READ_BUF) {
			fprintf(stderr, "vecswitch ctl: capture: a record larger than the read buffer\n");
			break;
		}
	}
	if (ended && !o->broken)
		ret = 0;
	if (o->broken)
		fprintf(stderr, "vecswitch ctl: capture: the output refused a write\n");
	free(buf);
	return ret;
}

static int capture(const char *path, int argc, char **argv)
{
	struct cap_out o = { .snaplen = VS_CAP_SNAP_MAX };
	const char *file = NULL;
	char req[512] = "capture";
	char *end;
	int i, fd, ret;

	for (i = 0; i < argc; i++) {
		const char *opt = argv[i], *key = NULL;

		if (!strcmp(opt, "--port"))
			key = "port";
		else if (!strcmp(opt, "--mac"))
			key = "mac";
		else if (!strcmp(opt, "--count"))
			key = "count";
		else if (!strcmp(opt, "--snaplen"))
			key = "snaplen";
		if (!key) {
			if (file || (opt[0] == '-' && opt[1]))
				return ctl_usage("capture: %s: unknown argument (want %s)", opt,
						 "[--port ID]... [--mac MAC]... [--count N] [--snaplen N] FILE|-");
			file = opt;
			continue;
		}
		if (++i == argc || strpbrk(argv[i], " \t\r\n"))
			return ctl_usage("capture: %s: needs one argument", opt);
		if (!strcmp(key, "snaplen")) {
			errno = 0;
			o.snaplen = strtoul(argv[i], &end, 10);
			if (*end || errno || o.snaplen < 64 ||
			    o.snaplen > VS_CAP_SNAP_MAX)
				return ctl_usage("capture: --snaplen: want 64 to %u bytes",
						 VS_CAP_SNAP_MAX);
		}
		if (strlen(req) + strlen(key) + strlen(argv[i]) + 4 >= sizeof(req))
			return ctl_usage("capture: too many filters");
		strcat(req, " ");
		strcat(req, key);
		strcat(req, " ");
		strcat(req, argv[i]);
	}
	if (!file)
		return ctl_usage("capture: no output file (FILE, or - for stdout)");
	strcat(req, "\n");
	o.file = file;
	/* a reader that goes (tcpdump quits) ends the capture, not us */
	signal(SIGPIPE, SIG_IGN);
	catch_stop();
	ret = 1;
	fd = ctl_connect(path);
	if (fd >= 0 && send_req(fd, path, req))
		ret = cap_run(fd, &o);
	if (fd >= 0)
		close(fd);
	if (o.d)
		pcap_dump_close(o.d);
	if (o.pc)
		pcap_close(o.pc);
	return ret;
}

/* ---- top ----------------------------------------------------------------- */

struct top_port {
	unsigned int id;
	char type[16];
	char name[VS_NAME_LEN];
	uint64_t v[4];			/* rx_frames rx_bytes tx_frames tx_bytes */
	unsigned int chans;		/* shortcut channels open */
};

static const char *const top_keys[4] = {
	"rx_frames", "rx_bytes", "tx_frames", "tx_bytes",
};

/* The ports of a text stats report, @n at most; how many */
static unsigned int top_parse(char *text, struct top_port *p, unsigned int n)
{
	char *save = NULL, *line, key[32];
	unsigned long long v;
	unsigned int k = 0, i;
	int used;

	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "port ", 5)) {
			if (k == n)
				break;
			memset(&p[k], 0, sizeof(p[k]));
			if (sscanf(line, "port %u %15s %n", &p[k].id, p[k].type,
				   &used) < 2)
				continue;
			snprintf(p[k].name, sizeof(p[k].name), "%s", line + used);
			k++;
		} else if (k && sscanf(line, " %31s %llu", key, &v) == 2) {
			for (i = 0; i < 4; i++)
				if (!strcmp(key, top_keys[i]))
					p[k - 1].v[i] = v;
		}
	}
	return k;
}

static int top_fetch(const char *path, char **text)
{
	int r = fetch(path, "stats\n", text);

	if (r > 0) {
		fprintf(stderr, "vecswitch ctl: top: %s", *text);
		free(*text);
	}
	return r;
}

/*
 * Count each port's open shortcut channels from a text channels report:
 * their guests' unicast to each other passes the switch by, and so its
 * counters.  The report lists each channel once, with both its ports.
 */
static int top_chans(const char *path, struct top_port *p, unsigned int n)
{
	char *text, *save = NULL, *line, mac[18];
	unsigned int a, b, i;
	int r;

	r = fetch(path, "channels\n", &text);
	if (r > 0) {
		fprintf(stderr, "vecswitch ctl: top: %s", text);
		free(text);
	}
	if (r)
		return r;
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "%u %17s %u", &a, mac, &b) != 3)
			continue;
		for (i = 0; i < n; i++)
			p[i].chans += (p[i].id == a) + (p[i].id == b);
	}
	free(text);
	return 0;
}

static int top(const char *path, int argc, char **argv)
{
	static struct top_port a[TOP_PORTS], b[TOP_PORTS];
	struct top_port *prev = a, *cur = b, *t;
	unsigned int np = 0, nc, i, j;
	unsigned long count = 0, shown = 0;
	bool tty = isatty(STDOUT_FILENO), chans;
	double t0, t1;
	char *text;

	for (i = 0; i < (unsigned int)argc; i++) {
		if (!strcmp(argv[i], "--count") && i + 1 < (unsigned int)argc) {
			if (count_arg(argv[++i], &count))
				return ctl_usage("top: --count: want 1 or more refreshes");
		} else {
			return ctl_usage("top: %s: unknown argument (want [--count N])",
					 argv[i]);
		}
	}
	catch_stop();
	if (top_fetch(path, &text))
		return 1;
	np = top_parse(text, prev, TOP_PORTS);
	free(text);
	t0 = now_s();
	while (!stop && (!count || shown < count)) {
		struct timespec d = { .tv_sec = 1 };

		nanosleep(&d, NULL);
		if (stop)
			break;
		if (top_fetch(path, &text))
			return 1;
		nc = top_parse(text, cur, TOP_PORTS);
		free(text);
		if (top_chans(path, cur, nc))
			return 1;
		t1 = now_s();
		if (tty)
			fputs("\033[H\033[J", stdout);
		else if (shown)
			fputc('\n', stdout);
		printf("%-5s %-11s %12s %10s %12s %10s %8s  %s\n", "PORT", "TYPE",
		       "RX FRAMES/S", "RX MBIT/S", "TX FRAMES/S", "TX MBIT/S",
		       "CHANNELS", "NAME");
		chans = false;
		for (i = 0; i < nc; i++) {
			uint64_t d0[4] = { 0 };

			/* a port new since the last look counts from 0 */
			for (j = 0; j < np; j++)
				if (prev[j].id == cur[i].id)
					memcpy(d0, prev[j].v, sizeof(d0));
			printf("%-5u %-11s %12.0f %10.1f %12.0f %10.1f %8u  %s\n",
			       cur[i].id, cur[i].type,
			       (cur[i].v[0] - d0[0]) / (t1 - t0),
			       (cur[i].v[1] - d0[1]) * 8 / 1e6 / (t1 - t0),
			       (cur[i].v[2] - d0[2]) / (t1 - t0),
			       (cur[i].v[3] - d0[3]) * 8 / 1e6 / (t1 - t0),
			       cur[i].chans, cur[i].name);
			chans |= cur[i].chans > 0;
		}
		if (chans)
			printf("Ports with CHANNELS send unicast to each other on their channels, past the switch: not in these rates; their guests count it (ethtool -S: tx_chan_frames, rx_chan_frames)\n");
		fflush(stdout);
		t = prev;
		prev = cur;
		cur = t;
		np = nc;
		t0 = t1;
		shown++;
	}
	return 0;
}

/* ---- the reports ---------------------------------------------------------- */

/*
 * The text stats without their counters at 0, of which a fresh switch
 * has some fifty: lines "  NAME 0".  Returns how many it left out.
 */
static unsigned int drop_zeros(char *text)
{
	char *in = text, *out = text;
	unsigned int dropped = 0;

	while (*in) {
		char *nl = strchr(in, '\n');
		size_t n = nl ? (size_t)(nl - in + 1) : strlen(in);
		size_t end = nl ? n - 1 : n;

		if (n > 4 && !strncmp(in, "  ", 2) &&
		    !strncmp(in + end - 2, " 0", 2)) {
			dropped++;
		} else {
			memmove(out, in, n);
			out += n;
		}
		in += n;
	}
	*out = '\0';
	return dropped;
}

static int report(const char *path, const char *cmd, bool json, bool all)
{
	unsigned int zeros = 0;
	char req[32], *text;
	int ret;

	snprintf(req, sizeof(req), "%s%s\n", cmd, json ? " json" : "");
	ret = fetch(path, req, &text);
	if (ret < 0)
		return 1;
	if (!json && !all && !strcmp(cmd, "stats") && strncmp(text, "error:", 6))
		zeros = drop_zeros(text);
	/* the switch's error goes out as it said it; the status says so */
	if (fputs(text, stdout) == EOF)
		ret = 1;
	if (zeros &&
	    printf("(%u counters at 0 not shown; stats --all shows them)\n", zeros) < 0)
		ret = 1;
	free(text);
	return ret;
}

/* forward add|del SPEC, forward list [--json]: the NAT port's forwards */
static int forward(const char *path, int argc, char **argv)
{
	bool list = argc >= 1 && !strcmp(argv[0], "list");
	char req[160], *text;
	int ret;

	if (list && (argc == 1 || (argc == 2 && !strcmp(argv[1], "--json"))))
		snprintf(req, sizeof(req), "forward list%s\n",
			 argc == 2 ? " json" : "");
	else if (argc == 2 && (!strcmp(argv[0], "add") || !strcmp(argv[0], "del")) &&
		 strlen(argv[1]) < 112 && !strpbrk(argv[1], " \t\r\n"))
		snprintf(req, sizeof(req), "forward %s %s\n", argv[0], argv[1]);
	else
		return ctl_usage("forward: want add SPEC, del SPEC or list [--json]");
	ret = fetch(path, req, &text);
	if (ret < 0)
		return 1;
	if (fputs(text, ret ? stderr : stdout) == EOF)
		ret = 1;
	free(text);
	return ret;
}

/* ---- events ---------------------------------------------------------------- */

/*
 * Copy the event lines from @fd to stdout, each as it comes, until the
 * user stops it (0), @count lines (0), or the switch goes (1)
 */
static int ev_run(int fd, unsigned long count)
{
	char buf[8192];
	size_t len = 0, i, start;
	bool started = false;
	unsigned long lines = 0;

	while (!stop) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (poll(&pfd, 1, 200) <= 0)
			continue;
		r = recv(fd, buf + len, sizeof(buf) - len, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r < 0)
				fprintf(stderr, "vecswitch ctl: receive: %s\n", strerror(errno));
			else if (!started && len)
				fprintf(stderr, "vecswitch ctl: the switch says: %.*s\n",
					(int)len - (buf[len - 1] == '\n'), buf);
			else
				fprintf(stderr, "vecswitch ctl: events: the switch closed the stream\n");
			return 1;
		}
		len += r;
		for (start = 0, i = 0; i < len; i++) {
			if (buf[i] != '\n')
				continue;
			if (!started) {
				if (i != 6 || memcmp(buf, "events", 6))
					break;	/* an error: read it whole */
				started = true;
			} else if (fwrite(buf + start, 1, i + 1 - start, stdout) !=
					   i + 1 - start || fflush(stdout)) {
				fprintf(stderr, "vecswitch ctl: events: the output refused a write\n");
				return 1;
			} else if (count && ++lines == count) {
				return 0;
			}
			start = i + 1;
		}
		memmove(buf, buf + start, len - start);
		len -= start;
		if (len == sizeof(buf)) {
			fprintf(stderr, "vecswitch ctl: events: a line longer than %zu bytes\n",
				sizeof(buf));
			return 1;
		}
	}
	return 0;
}

/* events [--json] [--count N]: what happens to the switch, a line each */
static int events(const char *path, int argc, char **argv, bool json)
{
	unsigned long count = 0;
	int i, fd, ret = 1;

	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (!strcmp(argv[i], "--count") && i + 1 < argc) {
			if (count_arg(argv[++i], &count))
				return ctl_usage("events: --count: want 1 or more events");
		} else {
			return ctl_usage("events: %s: unknown argument (want [--json] [--count N])",
					 argv[i]);
		}
	}
	catch_stop();
	fd = ctl_connect(path);
	if (fd >= 0 && send_req(fd, path, json ? "events json\n" : "events\n"))
		ret = ev_run(fd, count);
	if (fd >= 0)
		close(fd);
	return ret;
}

/*
 * A network's name, as the template unit's instance: one path component
 * (no '/', not "." or ".."), short enough for a socket path under /run
 */
static bool network_ok(const char *name)
{
	size_t n = strlen(name);

	return n && n <= 64 && name[0] != '.' && name[0] != '-' &&
	       strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == n;
}

int vs_ctl_client(int argc, char **argv)
{
	char network_path[sizeof(CTL_NETWORK_FMT) + 64];
	const char *path = NULL, *cmd = NULL;
	bool json = false, all = false;
	int i;

	for (i = 1; i < argc && !cmd; i++) {
		if (!strcmp(argv[i], "--ctl")) {
			if (++i == argc)
				return ctl_usage("--ctl: needs an argument");
			path = argv[i];
		} else if (!strncmp(argv[i], "--ctl=", 6)) {
			path = argv[i] + 6;
		} else if (!strcmp(argv[i], "--network")) {
			if (++i == argc)
				return ctl_usage("--network: needs a network's name");
			ctl_network = argv[i];
		} else if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (!strcmp(argv[i], "ports") || !strcmp(argv[i], "fdb") ||
			   !strcmp(argv[i], "stats") ||
			   !strcmp(argv[i], "channels") ||
			   !strcmp(argv[i], "capture") || !strcmp(argv[i], "top") ||
			   !strcmp(argv[i], "forward") || !strcmp(argv[i], "nat") ||
			   !strcmp(argv[i], "events")) {
			cmd = argv[i];
		} else {
			return ctl_usage("%s: unknown argument (want %s)", argv[i],
					 "[--ctl PATH | --network NAME] ports|fdb|stats [--all]|channels [--json], capture ..., top [--count N], events [--json] [--count N]");
		}
	}
	if (ctl_network) {
		if (path)
			return ctl_usage("--network and --ctl: give one");
		if (!network_ok(ctl_network))
			return ctl_usage("--network '%s': a name of letters, digits, '_', '.' and '-', not starting with '.' or '-'",
					 ctl_network);
		snprintf(network_path, sizeof(network_path), CTL_NETWORK_FMT,
			 ctl_network);
		path = network_path;
	}
	if (!path) {
		path = CTL_SERVICE_PATH;
		ctl_defaulted = true;
	}
	if (!cmd)
		return ctl_usage("no command (ports, fdb, stats, channels, capture, top or events)");
	if (!strcmp(cmd, "capture"))
		return capture(path, argc - i, argv + i);
	if (!strcmp(cmd, "top"))
		return top(path, argc - i, argv + i);
	if (!strcmp(cmd, "forward"))
		return forward(path, argc - i, argv + i);
	if (!strcmp(cmd, "events"))
		return events(path, argc - i, argv + i, json);
	for (; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = true;
		else if (!strcmp(argv[i], "--all") && !strcmp(cmd, "stats"))
			all = true;
		else if (!strncmp(argv[i], "--", 2))
			return ctl_usage("%s: unknown argument", argv[i]);
		else
			return ctl_usage("%s: only one command", argv[i]);
	}
	return report(path, cmd, json, all);
}
