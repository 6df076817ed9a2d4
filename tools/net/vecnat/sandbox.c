// SPDX-License-Identifier: GPL-2.0
/*
 * sandbox.c - what vecnat may still do once it runs.  libslirp parses
 * whatever the guests send, and has had its share of memory bugs; so
 * once the sockets are set up the process gives up root (for nobody),
 * every capability, the right to gain any (no_new_privs), and every
 * system call that the loop, libslirp and the allocator do not make.  A
 * call outside the filter kills the process (SIGSYS), and the switch
 * starts it again and counts it.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <seccomp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "vecnat.h"

#define NOBODY		65534

/*
 * Whether the process can use a capability (true where it cannot tell):
 * one permitted or effective.  Inheritable ones alone (which container
 * runtimes set) give nothing here, with no_new_privs and no execve.
 */
static bool holds_caps(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];
	unsigned int i;

	/* a "success" that filled nothing in counts as holding all */
	memset(data, 0xff, sizeof(data));
	if (syscall(SYS_capget, &hdr, data) < 0)
		return true;
	for (i = 0; i < 2; i++)
		if (data[i].effective || data[i].permitted)
			return true;
	return false;
}

static int drop_ids(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	if (geteuid() == 0 &&
	    (setgroups(0, NULL) < 0 || setresgid(NOBODY, NOBODY, NOBODY) < 0 ||
	     setresuid(NOBODY, NOBODY, NOBODY) < 0)) {
		fprintf(stderr, "vecnat: cannot become nobody: %s\n",
			strerror(errno));
		return -1;
	}
	/* an unprivileged user started with capabilities (ambient) loses them */
	memset(data, 0, sizeof(data));
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	/*
	 * a service's filter may refuse capset (systemd's ~@privileged, as
	 * the shipped units have it): with none held, there is none to drop
	 */
	if (syscall(SYS_capset, &hdr, data) < 0) {
		int err = errno;

		if (holds_caps()) {
			fprintf(stderr, "vecnat: capset: %s\n", strerror(err));
			return -1;
		}
	}
	/* a change of ids clears it: go with the parent from here on */
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		fprintf(stderr, "vecnat: no_new_privs: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

/* calls with no argument worth checking */
static const int plain_calls[] = {
	/* the loop and libslirp's sockets */
	SCMP_SYS(read), SCMP_SYS(write), SCMP_SYS(readv), SCMP_SYS(writev),
	SCMP_SYS(recvfrom), SCMP_SYS(recvmsg), SCMP_SYS(recvmmsg),
	SCMP_SYS(sendto), SCMP_SYS(sendmsg), SCMP_SYS(sendmmsg),
	SCMP_SYS(poll), SCMP_SYS(ppoll), SCMP_SYS(connect), SCMP_SYS(bind),
	SCMP_SYS(listen), SCMP_SYS(accept), SCMP_SYS(accept4),
	SCMP_SYS(setsockopt), SCMP_SYS(getsockopt), SCMP_SYS(getsockname),
	SCMP_SYS(getpeername), SCMP_SYS(shutdown), SCMP_SYS(close),
	SCMP_SYS(fcntl),
	/* time, memory, the resolver file libslirp reads for DNS */
	SCMP_SYS(clock_gettime), SCMP_SYS(gettimeofday), SCMP_SYS(time),
	SCMP_SYS(clock_nanosleep), SCMP_SYS(nanosleep),
	SCMP_SYS(mmap), SCMP_SYS(munmap), SCMP_SYS(mremap), SCMP_SYS(brk),
	SCMP_SYS(madvise), SCMP_SYS(mprotect),
	SCMP_SYS(fstat), SCMP_SYS(newfstatat), SCMP_SYS(stat), SCMP_SYS(statx),
	SCMP_SYS(lseek), SCMP_SYS(getrandom),
	/* signals, ending, what glib and the sanitizers ask now and then */
	SCMP_SYS(rt_sigreturn), SCMP_SYS(rt_sigprocmask), SCMP_SYS(rt_sigaction),
	SCMP_SYS(sigaltstack), SCMP_SYS(exit), SCMP_SYS(exit_group),
	SCMP_SYS(getpid), SCMP_SYS(gettid), SCMP_SYS(tgkill),
	SCMP_SYS(futex), SCMP_SYS(sched_yield), SCMP_SYS(restart_syscall),
	SCMP_SYS(getuid), SCMP_SYS(geteuid), SCMP_SYS(getppid),
	SCMP_SYS(sched_getaffinity), SCMP_SYS(readlink), SCMP_SYS(uname),
};

static int add_rules(scmp_filter_ctx ctx)
{
	unsigned int i;
	int r = 0;

	for (i = 0; i < ARRAY_LEN(plain_calls) && !r; i++)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, plain_calls[i], 0);
	/* new sockets: IPv4 and IPv6 only, never unix or netlink */
	if (!r)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
				     SCMP_A0(SCMP_CMP_EQ, AF_INET));
	if (!r)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
				     SCMP_A0(SCMP_CMP_EQ, AF_INET6));
	/* files: read only, nothing made */
	if (!r)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(openat), 1,
				     SCMP_A2(SCMP_CMP_MASKED_EQ,
					     O_ACCMODE | O_CREAT | O_TRUNC, O_RDONLY));
	/* the same by open(), as the sanitizers' reports make it */
	if (!r)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(open), 1,
				     SCMP_A1(SCMP_CMP_MASKED_EQ,
					     O_ACCMODE | O_CREAT | O_TRUNC, O_RDONLY));
	if (!r)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
				     SCMP_A1(SCMP_CMP_EQ, TCGETS));
	if (!r)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
				     SCMP_A1(SCMP_CMP_EQ, FIONREAD));
	if (!r)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
				     SCMP_A1(SCMP_CMP_EQ, FIONBIO));
	return r;
}

/*
 * Every connection a guest makes out is a socket here: a guest that
 * opens thousands (a SYN flood, UDP to every port) meets this bound, and
 * not the switch's far higher one, which the process inherits
 */
static int bound_files(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return -1;
	if (rl.rlim_max > NAT_FILES_MAX)
		rl.rlim_max = NAT_FILES_MAX;
	rl.rlim_cur = rl.rlim_max;
	return setrlimit(RLIMIT_NOFILE, &rl);
}

/* Give up what vecnat does not need; 0, or -1 with a message */
int nat_sandbox(void)
{
	scmp_filter_ctx ctx;
	int r;

	if (bound_files() < 0) {
		fprintf(stderr, "vecnat: RLIMIT_NOFILE: %s\n", strerror(errno));
		return -1;
	}
	if (drop_ids() < 0)
		return -1;
	ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	/*
	 * libseccomp offers that action only where it can ask the kernel
	 * with seccomp(), which a service's filter may refuse (systemd's
	 * @system-service has no seccomp()); it then loads the filter with
	 * prctl().  Killing the thread is killing vecnat: it has one.
	 */
	if (!ctx)
		ctx = seccomp_init(SCMP_ACT_KILL);
	if (!ctx) {
		fprintf(stderr, "vecnat: seccomp_init failed\n");
		return -1;
	}
	r = add_rules(ctx);
	if (!r)
		r = seccomp_load(ctx);
	seccomp_release(ctx);
	if (r) {
		fprintf(stderr, "vecnat: seccomp filter: %s\n", strerror(-r));
		return -1;
	}
	return 0;
}
