/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vsw_proc.h - the switch under test as a process: start it (the binary
 * named by $VECSWITCH) on sockets in a fresh temporary directory, read
 * its log for sanitizer reports, stop it, remove its directory, read its
 * CPU time, and run it once with arguments to capture what it prints.
 */
#ifndef VSW_PROC_H
#define VSW_PROC_H

#include "vsw_base.h"

#define VSW_MAX_ARGS	40

struct vsw {
	pid_t pid;
	char dir[64];
	char dgram[108];
	char stream[108];
	char seqpacket[108];
	char ctl[108];
	char log[128];
};

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

#endif /* VSW_PROC_H */
