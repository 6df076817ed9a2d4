// SPDX-License-Identifier: GPL-2.0
/*
 * util.c - what every part of the switch uses: the clock, the log, and
 * adding a descriptor to the event loop.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/epoll.h>

#include "vecswitch.h"

uint64_t vs_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void vs_log(const struct vs_switch *sw, int level, const char *fmt, ...)
{
	va_list ap;

	if (sw && level > sw->cfg.verbose)
		return;
	va_start(ap, fmt);
	fputs("vecswitch: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

int vs_epoll_add(struct vs_switch *sw, int fd, uint64_t tag, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.u64 = tag };

	if (epoll_ctl(sw->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		vs_log(sw, 0, "epoll_ctl: %s", strerror(errno));
		return -1;
	}
	return 0;
}
