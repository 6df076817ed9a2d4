/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vsw_ctl.h - requests on the control socket of the switch under test:
 * a raw request and its answer, a counter of the stats report, whether
 * the forwarding table holds a MAC and whether a port is listed.
 */
#ifndef VSW_CTL_H
#define VSW_CTL_H

#include "vsw_proc.h"

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

#endif /* VSW_CTL_H */
