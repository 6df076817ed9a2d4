// SPDX-License-Identifier: GPL-2.0
/*
 * ctl_client.c - `vecswitch ctl`: send one request to a running switch's
 * control socket (ctl.c has the protocol) and copy its report to stdout.
 * Exit status 0, 1 when the switch or the socket answered with an error,
 * 2 for a bad command line.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "vecswitch.h"

#define EXIT_USAGE	2

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

int vs_ctl_client(int argc, char **argv)
{
	struct timeval tv = { .tv_sec = VS_CTL_TIMEOUT_MS / 1000 };
	const char *path = NULL, *cmd = NULL;
	struct sockaddr_un sa;
	char req[32], buf[4096];
	bool json = false, failed = false;
	socklen_t len;
	int i, fd, n;
	ssize_t r;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--ctl")) {
			if (++i == argc)
				return ctl_usage("--ctl: needs an argument");
			path = argv[i];
		} else if (!strncmp(argv[i], "--ctl=", 6)) {
			path = argv[i] + 6;
		} else if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (!strcmp(argv[i], "ports") || !strcmp(argv[i], "fdb") ||
			   !strcmp(argv[i], "stats") ||
			   !strcmp(argv[i], "channels")) {
			if (cmd)
				return ctl_usage("%s: only one command", argv[i]);
			cmd = argv[i];
		} else {
			return ctl_usage("%s: unknown argument (want %s)",
					 argv[i], "--ctl PATH ports|fdb|stats|channels [--json]");
		}
	}
	if (!path)
		return ctl_usage("--ctl: missing (the switch's control socket)");
	if (!cmd)
		return ctl_usage("no command (ports, fdb, stats or channels)");
	if (vs_sockaddr_un(&sa, &len, path) < 0)
		return ctl_usage("--ctl: path empty or too long");

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, len) < 0) {
		fprintf(stderr, "vecswitch ctl: %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return 1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	n = snprintf(req, sizeof(req), "%s%s\n", cmd, json ? " json" : "");
	if (send(fd, req, n, MSG_NOSIGNAL) != n) {
		fprintf(stderr, "vecswitch ctl: send: %s\n", strerror(errno));
		close(fd);
		return 1;
	}
	shutdown(fd, SHUT_WR);
	n = 0;
	while ((r = recv(fd, buf, sizeof(buf), 0)) > 0) {
		/* the switch refused the request: say so in the exit code */
		if (!n++ && ((r >= 6 && !strncmp(buf, "error:", 6)) ||
			     (r >= 8 && !strncmp(buf, "{\"error\"", 8))))
			failed = true;
		if (fwrite(buf, 1, r, stdout) != (size_t)r)
			break;
	}
	close(fd);
	if (r < 0) {
		fprintf(stderr, "vecswitch ctl: receive: %s\n", strerror(errno));
		return 1;
	}
	return failed ? 1 : 0;
}
