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

static void unlink_own(const struct vs_switch *sw)
{
	if (sw->dgram_fd >= 0)
		unlink(sw->cfg.dgram_path);
	if (sw->vnet_fd >= 0)
		unlink(sw->cfg.vnet_path);
	if (sw->stream_fd >= 0)
		unlink(sw->cfg.stream_path);
	if (sw->seqpacket_fd >= 0)
		unlink(sw->cfg.seqpacket_path);
	if (sw->vhost_fd >= 0)
		unlink(sw->cfg.vhost_path);
	if (sw->ctl_fd >= 0)
		unlink(sw->cfg.ctl_path);
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
 * Bind one of our sockets; the dgram one is watched by the I/O backend,
 * the rest (the --vnet one too) by the epoll set.
 */
static int listen_on(struct vs_switch *sw, const char *path, int type,
		     int *fdp, int kind)
{
	bool ctl = fdp == &sw->ctl_fd;

	*fdp = vs_listen_unix(sw, path, type,
			      ctl ? sw->cfg.ctl_mode : sw->cfg.sock_mode,
			      ctl ? sw->cfg.ctl_gid : sw->cfg.sock_gid);
	if (*fdp < 0)
		return -1;
	if (vs_peer_own(sw, path) < 0) {
		vs_log(NULL, 0, "%s: %s", path, strerror(errno));
		return -1;
	}
	return kind < 0 ? 0 : vs_epoll_add(sw, *fdp, vs_ev(kind, 0), EPOLLIN);
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
 * Every socket path free before the first is made: a switch that cannot
 * start (another one runs at one of its paths) leaves none behind
 */
static int check_listeners(struct vs_switch *sw)
{
	const struct vs_config *cfg = &sw->cfg;
	const struct {
		const char *path;
		int type;
	} p[] = {
		{ cfg->dgram_path, SOCK_DGRAM },
		{ cfg->vnet_path, SOCK_DGRAM },
		{ cfg->stream_path, SOCK_STREAM },
		{ cfg->seqpacket_path, SOCK_SEQPACKET },
		{ cfg->vhost_path, SOCK_STREAM },
		{ cfg->ctl_path, SOCK_STREAM },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(p); i++)
		if (p[i].path && vs_listen_check(sw, p[i].path, p[i].type) < 0)
			return -1;
	return 0;
}

static int setup_listeners(struct vs_switch *sw)
{
	const struct vs_config *cfg = &sw->cfg;

	if (check_listeners(sw) < 0)
		return -1;
	if (cfg->dgram_path &&
	    listen_on(sw, cfg->dgram_path, SOCK_DGRAM, &sw->dgram_fd, -1) < 0)
		return -1;
	if (cfg->vnet_path &&
	    listen_on(sw, cfg->vnet_path, SOCK_DGRAM, &sw->vnet_fd,
		      VS_EV_VNET) < 0)
		return -1;
	if (cfg->stream_path &&
	    listen_on(sw, cfg->stream_path, SOCK_STREAM, &sw->stream_fd,
		      VS_EV_STREAM_LISTEN) < 0)
		return -1;
	if (cfg->seqpacket_path &&
	    listen_on(sw, cfg->seqpacket_path, SOCK_SEQPACKET,
		      &sw->seqpacket_fd, VS_EV_SEQPACKET_LISTEN) < 0)
		return -1;
	/* vhost-user frontends hand over memory and eventfds */
	if (cfg->vhost_path &&
	    (listen_on(sw, cfg->vhost_path, SOCK_STREAM, &sw->vhost_fd,
		       VS_EV_VHOST_LISTEN) < 0 ||
	     vs_allow_rights(sw, sw->vhost_fd) < 0))
		return -1;
	if (cfg->ctl_path &&
	    listen_on(sw, cfg->ctl_path, SOCK_STREAM, &sw->ctl_fd,
		      VS_EV_CTL_LISTEN) < 0)
		return -1;
	if (cfg->tap_name && vs_tap_open(sw, cfg->tap_name) < 0)
		return -1;
	note_sndbuf(sw);
	if (sw->dgram_fd >= 0 || sw->vnet_fd >= 0)
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
		.epfd = -1, .sigfd = -1, .dgram_fd = -1, .vnet_fd = -1,
		.stream_fd = -1,
		.seqpacket_fd = -1, .vhost_fd = -1, .ctl_fd = -1, .diag.fd = -1,
		.spare_fd = -1,
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
	{
		int *fds[] = { &sw.dgram_fd, &sw.vnet_fd, &sw.stream_fd,
			       &sw.seqpacket_fd, &sw.vhost_fd,
			       &sw.ctl_fd, &sw.sigfd, &sw.epfd, &sw.spare_fd };

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
