/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vsw_lib.h - helpers for the vecswitch selftests: start and stop the
 * switch under test (the binary named by $VECSWITCH) on sockets in a fresh
 * temporary directory, play guests on dgram, stream and seqpacket sockets,
 * build and inspect test frames, and read the control socket.
 *
 * Every wait has a deadline; nothing here sleeps without one.
 */
#ifndef VSW_LIB_H
#define VSW_LIB_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>

#define VSW_ETYPE	0x88b5		/* IEEE local experimental */
#define VSW_MAX_ARGS	40
#define VSW_WAIT_MS	5000

struct vsw {
	pid_t pid;
	char dir[64];
	char dgram[108];
	char stream[108];
	char seqpacket[108];
	char ctl[108];
	char log[128];
};

struct vsw_guest {
	int fd;
	char path[108];
	uint8_t mac[6];
};

static const uint8_t vsw_bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

static inline uint64_t vsw_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait for nothing but time, in small steps, for polling loops. */
static inline void vsw_pause_ms(int ms)
{
	poll(NULL, 0, ms);
}

/* Poll cond every few milliseconds while it holds, for VSW_WAIT_MS at most. */
#define VSW_WAIT_WHILE(cond) do {					\
	uint64_t __deadline = vsw_now_ms() + VSW_WAIT_MS;		\
									\
	while ((cond) && vsw_now_ms() < __deadline)			\
		vsw_pause_ms(5);					\
} while (0)

static inline void vsw_mac(uint8_t *mac, unsigned int idx)
{
	mac[0] = 0x02;		/* locally administered, unicast */
	mac[1] = 0x76;
	mac[2] = 0x73;
	mac[3] = 0x77;
	mac[4] = idx >> 8;
	mac[5] = idx;
}

static inline size_t vsw_frame(uint8_t *buf, const uint8_t *dst,
			       const uint8_t *src, uint32_t tag, size_t len)
{
	size_t i;

	if (len < 60)
		len = 60;
	memcpy(buf, dst, 6);
	memcpy(buf + 6, src, 6);
	buf[12] = VSW_ETYPE >> 8;
	buf[13] = VSW_ETYPE & 0xff;
	buf[14] = tag >> 24;
	buf[15] = tag >> 16;
	buf[16] = tag >> 8;
	buf[17] = tag;
	for (i = 18; i < len; i++)
		buf[i] = (uint8_t)(i * 7 + tag);
	return len;
}

static inline uint32_t vsw_tag(const uint8_t *buf)
{
	return (uint32_t)buf[14] << 24 | buf[15] << 16 | buf[16] << 8 | buf[17];
}

static inline bool vsw_frame_ok(const uint8_t *buf, size_t len)
{
	uint32_t tag = vsw_tag(buf);
	size_t i;

	for (i = 18; i < len; i++)
		if (buf[i] != (uint8_t)(i * 7 + tag))
			return false;
	return true;
}

static inline int vsw_addr(struct sockaddr_un *sa, const char *path)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	/* cut to fit, as snprintf would, but said plainly to the compiler */
	memcpy(sa->sun_path, path, strnlen(path, sizeof(sa->sun_path) - 1));
	return offsetof(struct sockaddr_un, sun_path) + strlen(path) + 1;
}

/* ---- the switch under test ---------------------------------------------- */

static inline const char *vsw_bin(void)
{
	return getenv("VECSWITCH");
}

static inline bool vsw_exited(struct vsw *s, int *status)
{
	pid_t r = waitpid(s->pid, status, WNOHANG);

	if (r == s->pid) {
		s->pid = 0;
		return true;
	}
	return false;
}

/* Start the switch with its four sockets plus the given options (NULL ends). */
static inline int vsw_start_argv(struct vsw *s, const char *const *opts)
{
	const char *argv[VSW_MAX_ARGS];
	struct sockaddr_un sa;
	uint64_t deadline;
	int n = 0, i, fd, status, alen;

	memset(s, 0, sizeof(*s));
	snprintf(s->dir, sizeof(s->dir), "/tmp/vsw-test.XXXXXX");
	if (!mkdtemp(s->dir))
		return -1;
	snprintf(s->dgram, sizeof(s->dgram), "%s/dgram.sock", s->dir);
	snprintf(s->stream, sizeof(s->stream), "%s/stream.sock", s->dir);
	snprintf(s->seqpacket, sizeof(s->seqpacket), "%s/seqpacket.sock",
		 s->dir);
	snprintf(s->ctl, sizeof(s->ctl), "%s/ctl.sock", s->dir);
	snprintf(s->log, sizeof(s->log), "%s/switch.log", s->dir);

	argv[n++] = vsw_bin();
	argv[n++] = "--dgram";
	argv[n++] = s->dgram;
	argv[n++] = "--stream";
	argv[n++] = s->stream;
	argv[n++] = "--seqpacket";
	argv[n++] = s->seqpacket;
	argv[n++] = "--ctl";
	argv[n++] = s->ctl;
	argv[n++] = "-v";
	for (i = 0; opts && opts[i] && n < VSW_MAX_ARGS - 1; i++)
		argv[n++] = opts[i];
	argv[n] = NULL;

	s->pid = fork();
	if (s->pid < 0)
		return -1;
	if (s->pid == 0) {
		int lfd = open(s->log, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (lfd >= 0) {
			dup2(lfd, 2);
			close(lfd);
		}
		/* a test killed on time-out must not leave its switch behind */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		/* the kselftest runner's stdbuf preloads a library ASan objects to */
		unsetenv("LD_PRELOAD");
		setenv("ASAN_OPTIONS", "abort_on_error=0:exitcode=66", 0);
		setenv("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1", 0);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}

	/* ready when the control socket answers */
	alen = vsw_addr(&sa, s->ctl);
	deadline = vsw_now_ms() + 10000;
	while (vsw_now_ms() < deadline) {
		if (vsw_exited(s, &status))
			return -1;
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, alen) == 0) {
			close(fd);
			return 0;
		}
		if (fd >= 0)
			close(fd);
		vsw_pause_ms(10);
	}
	return -1;
}

#define vsw_start(s, ...) \
	vsw_start_argv(s, (const char *const[]){ __VA_ARGS__, NULL })

static inline bool vsw_log_clean(const struct vsw *s)
{
	char line[1024];
	bool clean = true;
	FILE *f = fopen(s->log, "r");

	if (!f)
		return true;
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "AddressSanitizer") ||
		    strstr(line, "LeakSanitizer") ||
		    strstr(line, "runtime error") ||
		    strstr(line, "UndefinedBehaviorSanitizer")) {
			fprintf(stderr, "# switch: %s", line);
			clean = false;
		}
	}
	fclose(f);
	return clean;
}

static inline void vsw_dump_log(const struct vsw *s)
{
	char line[512];
	FILE *f = fopen(s->log, "r");
	int n = 0;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && n++ < 200)
		fprintf(stderr, "# log: %s", line);
	fclose(f);
}

/*
 * SIGTERM, then wait for a clean exit. Returns the exit status, or -1 when
 * the switch had to be killed or was already gone.
 */
static inline int vsw_stop(struct vsw *s)
{
	uint64_t deadline = vsw_now_ms() + 10000;
	int status = -1;

	if (!s->pid)
		return -1;
	kill(s->pid, SIGTERM);
	while (vsw_now_ms() < deadline) {
		if (vsw_exited(s, &status))
			return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
		vsw_pause_ms(10);
	}
	kill(s->pid, SIGKILL);
	waitpid(s->pid, &status, 0);
	s->pid = 0;
	return -1;
}

static inline void vsw_rmdir(struct vsw *s)
{
	char cmd[128];

	if (!s->dir[0] || strncmp(s->dir, "/tmp/vsw-test.", 14))
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", s->dir);
	if (system(cmd))
		fprintf(stderr, "# could not remove %s\n", s->dir);
	s->dir[0] = '\0';
}

/* utime + stime of a process, in clock ticks; -1 if unknown */
static inline long long vsw_cpu_ticks(pid_t pid)
{
	unsigned long long ut, st;
	char path[64], buf[1024], *p;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	if (!p || !(p = strrchr(buf, ')')))
		return -1;
	/* fields 14 and 15, counted after the command name's ")" */
	for (i = 0; i < 12 && p; i++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p, " %llu %llu", &ut, &st) != 2)
		return -1;
	return ut + st;
}

/* ---- control socket ---------------------------------------------------------- */

/* Raw request, answer into buf (NUL-terminated). Returns its length or -1. */
static inline int vsw_ctl(const struct vsw *s, const char *req, char *buf,
			  size_t len)
{
	struct timeval tv = { .tv_sec = 5 };
	struct sockaddr_un sa;
	size_t got = 0;
	int fd, alen;
	ssize_t r;

	alen = vsw_addr(&sa, s->ctl);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, alen) < 0 ||
	    send(fd, req, strlen(req), MSG_NOSIGNAL) < 0) {
		close(fd);
		return -1;
	}
	shutdown(fd, SHUT_WR);
	while (got + 1 < len && (r = recv(fd, buf + got, len - 1 - got, 0)) > 0)
		got += r;
	buf[got] = '\0';
	close(fd);
	return got;
}

/*
 * A counter from the text "stats" report: of the port whose name is given,
 * or of the switch itself when name is NULL. -1 when not found.
 */
static inline long long vsw_stat(const struct vsw *s, const char *name,
				 const char *key)
{
	static char buf[1 << 16];
	char *sec, *end, *k, pat[160];

	if (vsw_ctl(s, "stats\n", buf, sizeof(buf)) <= 0)
		return -1;
	if (name) {
		snprintf(pat, sizeof(pat), " %s\n", name);
		sec = strstr(buf, pat);
		if (!sec)
			return -1;
		sec += strlen(pat);
	} else {
		sec = buf;
	}
	end = strstr(sec, "\nport ");
	if (end)
		end[1] = '\0';
	snprintf(pat, sizeof(pat), "  %s ", key);
	k = strstr(sec, pat);
	if (!k)
		return -1;
	return strtoll(k + strlen(pat), NULL, 10);
}

static inline bool vsw_fdb_has(const struct vsw *s, const uint8_t *mac)
{
	char buf[1 << 14], m[20];

	snprintf(m, sizeof(m), "%02x:%02x:%02x:%02x:%02x:%02x",
		 mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]);
	if (vsw_ctl(s, "fdb\n", buf, sizeof(buf)) <= 0)
		return false;
	return strstr(buf, m);
}

static inline bool vsw_has_port(const struct vsw *s, const char *name)
{
	char buf[1 << 14], pat[160];

	snprintf(pat, sizeof(pat), " %s\n", name);
	if (vsw_ctl(s, "ports\n", buf, sizeof(buf)) <= 0)
		return false;
	return strstr(buf, pat);
}

/* Run `$VECSWITCH args...`, capture stdout+stderr. Returns the exit code. */
static inline int vsw_run(char *out, size_t outlen, const char *const *args)
{
	const char *argv[VSW_MAX_ARGS];
	uint64_t deadline = vsw_now_ms() + 10000;
	int p[2], n = 0, status;
	size_t got = 0;
	pid_t pid;

	argv[n++] = vsw_bin();
	while (args[n - 1] && n < VSW_MAX_ARGS - 1) {
		argv[n] = args[n - 1];
		n++;
	}
	argv[n] = NULL;
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		unsetenv("LD_PRELOAD");
		setenv("ASAN_OPTIONS", "exitcode=66", 0);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(p[1]);
	for (;;) {
		struct pollfd pfd = { .fd = p[0], .events = POLLIN };
		int left = (int)(deadline - vsw_now_ms());
		ssize_t r;

		if (left <= 0 || poll(&pfd, 1, left) <= 0)
			break;
		r = read(p[0], out + got, outlen - 1 - got);
		if (r <= 0)
			break;
		got += r;
		if (got + 1 >= outlen)
			break;
	}
	out[got] = '\0';
	close(p[0]);
	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (vsw_now_ms() > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return -1;
		}
		vsw_pause_ms(5);
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

#define vsw_run_args(out, len, ...) \
	vsw_run(out, len, (const char *const[]){ __VA_ARGS__, NULL })

/* ---- guests -------------------------------------------------------------------- */

static inline int vsw_guest_open(struct vsw_guest *g, const struct vsw *s,
				 const char *name, unsigned int idx)
{
	struct timeval tv = { .tv_sec = 2 };
	struct sockaddr_un sa;
	int alen;

	snprintf(g->path, sizeof(g->path), "%s/%s", s->dir, name);
	vsw_mac(g->mac, idx);
	g->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (g->fd < 0)
		return -1;
	alen = vsw_addr(&sa, g->path);
	if (bind(g->fd, (struct sockaddr *)&sa, alen) < 0)
		return -1;
	/* a blocking send waits while the switch's own queue is full */
	return setsockopt(g->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

static inline void vsw_guest_close(struct vsw_guest *g)
{
	if (g->fd > 0)
		close(g->fd);
	g->fd = -1;
}

static inline int vsw_send_raw(const struct vsw *s, int fd, const void *buf,
			       size_t len)
{
	struct sockaddr_un sa;
	int alen = vsw_addr(&sa, s->dgram);

	return sendto(fd, buf, len, 0, (struct sockaddr *)&sa, alen) ==
	       (ssize_t)len ? 0 : -1;
}

static inline int vsw_send(const struct vsw *s, const struct vsw_guest *g,
			   const uint8_t *dst, uint32_t tag, size_t len)
{
	uint8_t buf[65536];

	len = vsw_frame(buf, dst, g->mac, tag, len);
	return vsw_send_raw(s, g->fd, buf, len);
}

/* One frame within timeout_ms: its length, or -1. */
static inline int vsw_recv(int fd, uint8_t *buf, size_t len, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	if (poll(&pfd, 1, timeout_ms) != 1)
		return -1;
	return recv(fd, buf, len, MSG_DONTWAIT);
}

/*
 * Receive frames until one has the given tag; count the others.  Each
 * frame follows @off bytes (a virtio-net header where one was agreed).
 */
static inline int vsw_recv_until_at(int fd, size_t off, uint32_t tag,
				    int *others)
{
	uint64_t deadline = vsw_now_ms() + VSW_WAIT_MS;
	uint8_t buf[65536];
	int n;

	*others = 0;
	while (vsw_now_ms() < deadline) {
		n = vsw_recv(fd, buf, sizeof(buf),
			     (int)(deadline - vsw_now_ms()));
		if (n < 0)
			return -1;
		if (n >= (int)off + 18 && vsw_tag(buf + off) == tag)
			return 0;
		(*others)++;
	}
	return -1;
}

static inline int vsw_recv_until(int fd, uint32_t tag, int *others)
{
	return vsw_recv_until_at(fd, 0, tag, others);
}

/* Nothing is waiting on fd right now. */
static inline bool vsw_quiet(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, 0) == 0;
}

/* A connected stream or seqpacket client of the switch. */
static inline int vsw_connect(const char *path, int type)
{
	struct timeval tv = { .tv_sec = 2 };
	struct sockaddr_un sa;
	int fd, alen = vsw_addr(&sa, path);

	fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, alen) < 0) {
		close(fd);
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

/* Exactly len bytes from a stream within the deadline. */
static inline int vsw_read_full(int fd, uint8_t *buf, size_t len)
{
	uint64_t deadline = vsw_now_ms() + VSW_WAIT_MS;
	size_t got = 0;

	while (got < len && vsw_now_ms() < deadline) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (poll(&pfd, 1, (int)(deadline - vsw_now_ms())) != 1)
			return -1;
		r = recv(fd, buf + got, len - got, MSG_DONTWAIT);
		if (r <= 0)
			return -1;
		got += r;
	}
	return got == len ? 0 : -1;
}

/* One length-prefixed frame from a stream port: its length, or -1. */
static inline int vsw_stream_recv(int fd, uint8_t *buf, size_t len)
{
	uint8_t h[4];
	uint32_t n;

	if (vsw_read_full(fd, h, 4) < 0)
		return -1;
	n = (uint32_t)h[0] << 24 | h[1] << 16 | h[2] << 8 | h[3];
	if (n > len || vsw_read_full(fd, buf, n) < 0)
		return -1;
	return n;
}

#endif /* VSW_LIB_H */
