// SPDX-License-Identifier: GPL-2.0
/*
 * main.c - start-up and shutdown: the switch's memory, sockets and I/O
 * backend made, the loop (loop.c) run, and all of it undone.  The command
 * line and its defaults are conf.c's.
 */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>

#include "vecswitch.h"

/* ---- start-up and shutdown ------------------------------------------------- */

/*
 * How each of the switch's sockets is made: its path's place in the
 * config, its type, and its event in the epoll set (-1: the dgram
 * socket, which the I/O backend watches)
 */
static const struct vs_listener {
	size_t path;
	int type;
	int event;
} listeners[VS_LISTEN_NR] = {
	[VS_LISTEN_DGRAM] = {
		offsetof(struct vs_config, dgram_path), SOCK_DGRAM, -1 },
	[VS_LISTEN_VNET] = {
		offsetof(struct vs_config, vnet_path), SOCK_DGRAM, VS_EV_VNET },
	[VS_LISTEN_STREAM] = {
		offsetof(struct vs_config, stream_path), SOCK_STREAM,
		VS_EV_STREAM_LISTEN },
	[VS_LISTEN_SEQPACKET] = {
		offsetof(struct vs_config, seqpacket_path), SOCK_SEQPACKET,
		VS_EV_SEQPACKET_LISTEN },
	[VS_LISTEN_VHOST] = {
		offsetof(struct vs_config, vhost_path), SOCK_STREAM,
		VS_EV_VHOST_LISTEN },
	[VS_LISTEN_CTL] = {
		offsetof(struct vs_config, ctl_path), SOCK_STREAM,
		VS_EV_CTL_LISTEN },
};

/* The path socket @l is to listen on, NULL if not asked for */
static const char *listen_path(const struct vs_config *cfg, unsigned int l)
{
	return *(const char *const *)((const char *)cfg + listeners[l].path);
}

static void unlink_own(const struct vs_switch *sw)
{
	unsigned int l;

	for (l = 0; l < VS_LISTEN_NR; l++)
		if (sw->listen_fd[l] >= 0)
			unlink(listen_path(&sw->cfg, l));
}

static int setup_signals(struct vs_switch *sw)
{
	sigset_t set;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -1;
	sw->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sw->sigfd < 0)
		return -1;
	return vs_epoll_add(sw, sw->sigfd, vs_ev(VS_EV_SIGNAL, 0), EPOLLIN);
}

/*
 * Bind socket @l; the dgram one is watched by the I/O backend, the rest
 * (the --vnet one too) by the epoll set.
 */
static int listen_on(struct vs_switch *sw, unsigned int l)
{
	const char *path = listen_path(&sw->cfg, l);
	bool ctl = l == VS_LISTEN_CTL;
	int fd;

	fd = vs_listen_unix(sw, path, listeners[l].type,
			    ctl ? sw->cfg.ctl_mode : sw->cfg.sock_mode,
			    ctl ? sw->cfg.ctl_gid : sw->cfg.sock_gid);
	sw->listen_fd[l] = fd;
	if (fd < 0)
		return -1;
	if (vs_peer_own(sw, path) < 0) {
		vs_log(NULL, 0, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (listeners[l].event >= 0 &&
	    vs_epoll_add(sw, fd, vs_ev(listeners[l].event, 0), EPOLLIN) < 0)
		return -1;
	/* vhost-user frontends hand over memory and eventfds */
	return l == VS_LISTEN_VHOST ? vs_allow_rights(sw, fd) : 0;
}

/* What the kernel made of the dgram sockets' send buffer request */
static void note_sndbuf(struct vs_switch *sw)
{
	socklen_t len;
	int i, fd;

	for (i = 0; i < VS_SOCK_NR; i++) {
		fd = vs_dgram_sock_fd(sw, i);
		len = sizeof(sw->sndbuf[i].size);
		if (fd < 0 ||
		    getsockopt(fd, SOL_SOCKET, SO_SNDBUF,
			       &sw->sndbuf[i].size, &len) < 0)
			sw->sndbuf[i].size = 0;
	}
}

/*
 * Every socket path free before the first is made, then each made: a
 * switch that cannot start (another one runs at one of its paths) leaves
 * none behind
 */
static int setup_listeners(struct vs_switch *sw)
{
	const struct vs_config *cfg = &sw->cfg;
	unsigned int l;

	for (l = 0; l < VS_LISTEN_NR; l++)
		if (listen_path(cfg, l) &&
		    vs_listen_check(sw, listen_path(cfg, l), listeners[l].type) < 0)
			return -1;
	for (l = 0; l < VS_LISTEN_NR; l++)
		if (listen_path(cfg, l) && listen_on(sw, l) < 0)
			return -1;
	if (cfg->tap_name && vs_tap_open(sw, cfg->tap_name) < 0)
		return -1;
	note_sndbuf(sw);
	if (sw->listen_fd[VS_LISTEN_DGRAM] >= 0 || sw->listen_fd[VS_LISTEN_VNET] >= 0)
		vs_diag_open(sw);
	return 0;
}

static int setup_io(struct vs_switch *sw)
{
	if (!sw->cfg.no_uring) {
		sw->io = &vs_io_uring;
		if (sw->io->init(sw) == 0)
			return 0;
		vs_log(sw, 0, "io_uring unavailable, using recvmmsg/sendmmsg");
	}
	sw->io = &vs_io_mmsg;
	return sw->io->init(sw);
}

int main(int argc, char **argv)
{
	struct vs_switch sw = {
		.epfd = -1, .sigfd = -1, .diag.fd = -1, .spare_fd = -1,
		.listen_fd = { [0 ... VS_LISTEN_NR - 1] = -1 },
	};
	int ret = 1;
	unsigned int i;

	if (argc > 1 && !strcmp(argv[1], "ctl"))
		return vs_ctl_client(argc - 1, argv + 1);
	vs_conf_defaults(&sw.cfg);
	vs_conf_parse(&sw.cfg, argc, argv);
	vs_buf_set_limit((size_t)sw.cfg.max_memory << 20);
	vs_rights_init(&sw);
	if (vs_fd_budget(&sw.cfg, vs_rights_room(&sw)) < 0)
		return 1;
	sw.spare_fd = vs_spare_open();
	/*
	 * Frame buffers of up to 64 KiB are allocated and freed at line
	 * rate.  With glibc's default 128 KiB trim threshold each free at
	 * the top of the heap gave pages back with brk() and the next
	 * allocation faulted them in again: about half of the switch's
	 * time at 12 Gbit/s of super-frames.  Keep them; the queues bound
	 * the peak.
	 */
	mallopt(M_TRIM_THRESHOLD, VS_HEAP_KEEP);
	for (i = 0; i < VS_CTL_MAX_CONN; i++)
		sw.ctl[i].fd = -1;

	sw.ports = calloc(sw.cfg.max_ports, sizeof(*sw.ports));
	sw.rxmem = malloc((size_t)VS_BATCH * vs_rx_slot(&sw));
	if (sw.cfg.vnet_path)
		sw.vnet_rxmem = malloc((size_t)VS_BATCH *
				       (VS_VNET_HDR_LEN + VS_VNET_FRAME_MAX));
	if (!sw.ports || !sw.rxmem || (sw.cfg.vnet_path && !sw.vnet_rxmem) ||
	    vs_fdb_init(&sw.fdb, sw.cfg.fdb_max) < 0) {
		vs_log(NULL, 0, "out of memory");
		goto out_mem;
	}
	sw.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (sw.epfd < 0 || setup_signals(&sw) < 0) {
		vs_log(NULL, 0, "setup: %s", strerror(errno));
		goto out_fds;
	}
	if ((sw.cfg.dgram_path || sw.cfg.vnet_path) && vs_peer_check_proc() < 0)
		goto out_fds;
	if (setup_listeners(&sw) < 0 || setup_io(&sw) < 0)
		goto out_listen;

	if (sw.cfg.nat) {
		ret = vs_nat_start(&sw);
		if (ret)
			goto out_io;
	}
	vs_log(NULL, 0, "running (io %s%s%s)", sw.io->name,
	       sw.cfg.hub ? ", hub" : "", sw.cfg.isolate ? ", isolate" : "");
	vs_loop_run(&sw);
	ret = 0;
out_io:
	vs_nat_stop(&sw);
	sw.io->fini(&sw);

out_listen:
	vs_rights_fini(&sw);
	vs_diag_close(&sw);
	vs_ctl_close_all(&sw);
	unlink_own(&sw);
	vs_port_free_all(&sw);
out_fds:
	for (i = 0; i < VS_LISTEN_NR; i++)
		if (sw.listen_fd[i] >= 0)
			close(sw.listen_fd[i]);
	{
		int *fds[] = { &sw.sigfd, &sw.epfd, &sw.spare_fd };

		for (i = 0; i < ARRAY_SIZE(fds); i++)
			if (*fds[i] >= 0)
				close(*fds[i]);
	}
out_mem:
	vs_fdb_fini(&sw.fdb);
	free(sw.rxmem);
	free(sw.vnet_rxmem);
	free(sw.ports);
	return ret;
}
