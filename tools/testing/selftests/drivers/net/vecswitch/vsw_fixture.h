/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vsw_fixture.h - what the vecswitch test programs (vsw_*_test.c) share:
 * the fixture (a switch, guests, a buffer), its two variants (one per I/O
 * backend: every test runs on both), the guest helpers several programs
 * use, and main().  A program includes it first, defines its tests, and
 * ends with VSW_TEST_MAIN.  Host only: each test starts the switch (the
 * ASan/UBSan build named by $VECSWITCH) on sockets in a temporary
 * directory, plays guests on those sockets, and checks what arrives
 * where, the counters, and that the switch exits cleanly with no
 * sanitizer report.
 */
#ifndef VSW_FIXTURE_H
#define VSW_FIXTURE_H

#define _GNU_SOURCE
#include <grp.h>
#include <sched.h>
#include <net/if.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/resource.h>

#include "../../../kselftest_harness.h"
#include "vsw_ctl.h"
#include "vsw_frame.h"
#include "vsw_proc.h"
#include "vsw_sock.h"

#define NGUEST	4

FIXTURE(vsw) {
	struct vsw s;
	struct vsw_guest g[NGUEST];
	unsigned int joined;	/* guests the switch knows as ports */
	uint8_t buf[65536];
};

FIXTURE_VARIANT(vsw) {
	const char *io;		/* option that picks the backend */
	const char *name;	/* what `stats` says it runs */
};

FIXTURE_VARIANT_ADD(vsw, uring) {
	.io = "-v",
	.name = "uring",
};

FIXTURE_VARIANT_ADD(vsw, mmsg) {
	.io = "--no-uring",
	.name = "mmsg",
};

FIXTURE_SETUP(vsw)
{
	int i;

	memset(&self->s, 0, sizeof(self->s));
	for (i = 0; i < NGUEST; i++)
		self->g[i].fd = -1;
}

FIXTURE_TEARDOWN(vsw)
{
	int i, rc;

	for (i = 0; i < NGUEST; i++)
		vsw_guest_close(&self->g[i]);
	if (self->s.pid) {
		rc = vsw_stop(&self->s);
		EXPECT_EQ(0, rc) {
			vsw_dump_log(&self->s);
		}
		EXPECT_TRUE(vsw_log_clean(&self->s));
		/* the switch removes its own sockets on SIGTERM */
		EXPECT_NE(0, access(self->s.dgram, F_OK));
		EXPECT_NE(0, access(self->s.ctl, F_OK));
	}
	vsw_rmdir(&self->s);
}

#define START(...) \
	ASSERT_EQ(0, vsw_start(&self->s, variant->io, ##__VA_ARGS__)) { \
		vsw_dump_log(&self->s); \
	}

#define GUEST(i) \
	ASSERT_EQ(0, guest_open(self, i))

#define G(i)	(&self->g[i])

static inline int guest_open(FIXTURE_DATA(vsw) *self, int i)
{
	char name[32];

	snprintf(name, sizeof(name), "g%d.sock", i);
	return vsw_guest_open(&self->g[i], &self->s, name, i + 1);
}

/*
 * Guest i sends a broadcast, which makes it a port (a dgram guest is one
 * from its first frame); every guest that already is one drains it.
 */
static inline void announce(struct __test_metadata *_metadata,
			    FIXTURE_DATA(vsw) *self, int i)
{
	int j, others;

	ASSERT_EQ(0, vsw_send(&self->s, G(i), vsw_bcast, 0xa0000000 + i, 60));
	for (j = 0; j < NGUEST; j++) {
		if (j == i || !(self->joined & (1u << j)))
			continue;
		ASSERT_EQ(0, vsw_recv_until(G(j)->fd, 0xa0000000 + i, &others));
		EXPECT_EQ(0, others);
	}
	/* with nobody to receive it, ask the switch whether it saw it */
	VSW_WAIT_WHILE(!vsw_has_port(&self->s, G(i)->path));
	ASSERT_TRUE(vsw_has_port(&self->s, G(i)->path));
	self->joined |= 1u << i;
}

/*
 * Guest i sends a marker broadcast; each guest in mask must see it as the
 * very next frame, so none of what came before reached them.
 */
static inline void expect_only_marker(struct __test_metadata *_metadata,
				      FIXTURE_DATA(vsw) *self, int i,
				      unsigned int mask, uint32_t tag)
{
	int j, others = -1;

	ASSERT_EQ(0, vsw_send(&self->s, G(i), vsw_bcast, tag, 60));
	for (j = 0; j < NGUEST; j++) {
		if (!(mask & (1u << j)))
			continue;
		ASSERT_EQ(0, vsw_recv_until(G(j)->fd, tag, &others));
		EXPECT_EQ(0, others) TH_LOG("guest %d", j);
	}
}

/* Guests 0..n-1 open and become ports, in order. */
static inline void join(struct __test_metadata *_metadata, FIXTURE_DATA(vsw) *self,
			int n)
{
	int i;

	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, guest_open(self, i));
		announce(_metadata, self, i);
	}
}

/* Write `python3 -c 'json.load'` and see that it likes the output. */
static inline bool json_valid(const char *text)
{
	char path[] = "/tmp/vsw-json.XXXXXX", cmd[128];
	bool ok;
	FILE *f;
	int fd;

	fd = mkstemp(path);
	if (fd < 0)
		return false;
	f = fdopen(fd, "w");
	fputs(text, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "python3 -c 'import json,sys; json.load(open(sys.argv[1]))' %s",
		 path);
	ok = system(cmd) == 0;
	unlink(path);
	return ok;
}

/* ---- sender credentials (--allow-uid, --allow-gid) ------------------- */

/* Move path's directory aside and put a symlink to target in its place. */
static inline int swap_dir(const char *path, const char *target)
{
	char dir[160], old[168], *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	snprintf(old, sizeof(old), "%s.old", dir);
	if (rename(dir, old) < 0 || symlink(target, dir) < 0)
		return -1;
	return 0;
}

/*
 * A child connects a guest socket to the switch while still root (the
 * switch's socket may be root's alone), becomes uid/gid, binds the socket
 * at path (its directory must let uid in), and sends n broadcasts tagged
 * tag..tag+n-1: the kernel stamps each with the child's credentials at
 * send time. With swap set, it first moves the socket's directory aside
 * and puts a symlink to swap in its place, so that its name leads there.
 * Returns the child's exit status.
 */
static inline int send_as(const struct vsw *s, const char *path, uid_t uid,
			  gid_t gid, const char *swap, uint32_t tag, int n)
{
	struct sockaddr_un sa;
	uint8_t buf[128], mac[6];
	int status, fd, i, alen;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		alen = vsw_addr(&sa, s->dgram);
		if (fd < 0 || connect(fd, (struct sockaddr *)&sa, alen) < 0)
			_exit(11);
		if (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 ||
		    setresuid(uid, uid, uid) < 0)
			_exit(12);
		alen = vsw_addr(&sa, path);
		if (bind(fd, (struct sockaddr *)&sa, alen) < 0)
			_exit(10);
		if (swap && swap_dir(path, swap) < 0)
			_exit(14);
		vsw_mac(mac, 0x900 + uid % 256);
		for (i = 0; i < n; i++) {
			size_t len = vsw_frame(buf, vsw_bcast, mac, tag + i, 60);

			if (send(fd, buf, len, 0) != (ssize_t)len)
				_exit(13);
		}
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* A directory under the switch's that every user may bind sockets in. */
static inline void users_dir(struct __test_metadata *_metadata, const struct vsw *s,
			     char *out, size_t len)
{
	snprintf(out, len, "%s/users", s->dir);
	ASSERT_EQ(0, chmod(s->dir, 0711));
	ASSERT_EQ(0, mkdir(out, 0777));
	ASSERT_EQ(0, chmod(out, 01777));
}

/*
 * A child with real uid @ruid and effective uid @euid (gid 65534 both)
 * binds a socket at @path, connects it to the switch and sends one
 * broadcast tagged @tag, then stays until the parent closes *@hold (the
 * switch looks the sender up while it lives).  Returns its pid once the
 * frame is sent, or -1.
 */
static inline pid_t send_ids(const struct vsw *s, const char *path, uid_t ruid,
			     uid_t euid, uint32_t tag, int *hold)
{
	int ready[2], wait_end[2];
	char c;
	pid_t pid;

	if (pipe(ready) < 0 || pipe(wait_end) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		struct sockaddr_un sa;
		uint8_t buf[128], mac[6];
		size_t len;
		int fd, alen;

		close(ready[0]);
		close(wait_end[1]);
		fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		alen = vsw_addr(&sa, s->dgram);
		if (fd < 0 || connect(fd, (struct sockaddr *)&sa, alen) < 0)
			_exit(11);
		if (setgroups(0, NULL) < 0 ||
		    setresgid(65534, 65534, 65534) < 0 ||
		    setresuid(ruid, euid, 0) < 0)
			_exit(12);
		alen = vsw_addr(&sa, path);
		if (bind(fd, (struct sockaddr *)&sa, alen) < 0)
			_exit(10);
		vsw_mac(mac, 0xb00 + tag);
		len = vsw_frame(buf, vsw_bcast, mac, tag, 60);
		if (send(fd, buf, len, 0) != (ssize_t)len)
			_exit(13);
		if (write(ready[1], "s", 1) != 1)
			_exit(14);
		alarm(20);
		/* until the parent closes its end */
		_exit(read(wait_end[0], &c, 1) < 0 ? 15 : 0);
	}
	close(ready[1]);
	close(wait_end[0]);
	*hold = wait_end[1];
	if (read(ready[0], &c, 1) != 1)
		pid = -1;
	close(ready[0]);
	return pid;
}

/* The child of send_ids goes; its exit status */
static inline int send_ids_end(pid_t pid, int hold)
{
	int status;

	close(hold);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static inline int send_frame(const struct vsw *s, int fd, const uint8_t *src,
			     uint32_t tag)
{
	uint8_t buf[64];
	size_t len = vsw_frame(buf, vsw_bcast, src, tag, 60);

	return vsw_send_raw(s, fd, buf, len);
}

/* Skip the program when $VECSWITCH does not name the switch to test */
#define VSW_TEST_MAIN							\
int main(int argc, char **argv)						\
{									\
	const char *bin = vsw_bin();					\
									\
	if (!bin || bin[0] != '/' || access(bin, X_OK)) {		\
		printf("# SKIP VECSWITCH must name the switch binary by absolute path (got %s)\n",	\
		       bin ? bin : "nothing");				\
		return KSFT_SKIP;					\
	}								\
	return test_harness_run(argc, argv);				\
}

#endif /* VSW_FIXTURE_H */
