/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vsw_base.h - what the other vsw_*.h helpers of the vecswitch selftests
 * build on: the C library they use, deadlines (every wait has one;
 * nothing here sleeps without one) and unix socket addresses.
 */
#ifndef VSW_BASE_H
#define VSW_BASE_H

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

#define VSW_WAIT_MS	5000

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

static inline int vsw_addr(struct sockaddr_un *sa, const char *path)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	/* cut to fit, as snprintf would, but said plainly to the compiler */
	memcpy(sa->sun_path, path, strnlen(path, sizeof(sa->sun_path) - 1));
	return offsetof(struct sockaddr_un, sun_path) + strlen(path) + 1;
}

#endif /* VSW_BASE_H */
