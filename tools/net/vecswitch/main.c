// SPDX-License-Identifier: GPL-2.0
/*
 * main.c - command line, start-up and shutdown, logging, and the main loop
 * that waits through the I/O backend, dispatches events, flushes queues and
 * runs the once-a-second housekeeping (aging, control time-outs).
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <malloc.h>
#include <pwd.h>
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

#define EXIT_USAGE	2
#define HOUSEKEEP_MS	1000

static void usage(FILE *f)
{
	fprintf(f,
"usage: vecswitch --dgram PATH [--vnet PATH] [--stream PATH] [--seqpacket PATH]\n"
"                 [--ctl PATH] [--tap IFNAME] [--hub] [options]\n"
"       vecswitch ctl --ctl PATH ports|fdb|stats [--json]\n"
"\n"
"ports (at least one of):\n"
"  --dgram PATH         datagram socket; each bound sender is a port, with\n"
"                       virtio-net headers (GSO) where it negotiates them\n"
"  --vnet PATH          a second socket like --dgram (kept for old setups)\n"
"  --stream PATH        stream socket, 4-byte big-endian length + frame\n"
"  --seqpacket PATH     seqpacket socket, one frame per packet\n"
"  --tap IFNAME         tap device used as the uplink\n"
"options:\n"
"  --ctl PATH           control socket (see 'vecswitch ctl')\n"
"  --mode OCTAL         permissions of the guests' sockets (default 0600)\n"
"  --group GROUP        group of the guests' sockets (name or number)\n"
"  --ctl-mode OCTAL     permissions of the control socket (default 0600)\n"
"  --ctl-group GROUP    its group, whose members may use it too\n"
"  --max-frame N        largest frame accepted, bytes (default 9216)\n"
"  --age SECONDS        forwarding entry lifetime, 0 never (default 300)\n"
"  --flood-unknown      flood unknown unicast (default)\n"
"  --no-flood-unknown   drop unknown unicast\n"
"  --hub                flood every frame, learn nothing\n"
"  --mac-lock           a guest port keeps the first source MAC it sent\n"
"  --isolate            guests reach only the uplink\n"
"  --fdb-max N          forwarding entries in total (default 4096)\n"
"  --fdb-port-max N     forwarding entries per guest port (default 256)\n"
"  --queue N            frames queued per port (default 1024)\n"
"  --max-ports N        ports at most (default 256)\n"
"  --allow-uid LIST     only these users (names or ids, comma-separated)\n"
"                       may send frames or connect\n"
"  --allow-gid LIST     likewise for groups (the sender's primary group)\n"
"  --no-uring           use recvmmsg/sendmmsg instead of io_uring\n"
"  -v, --verbose        log ports and learning (twice: more)\n"
"  -h, --help           this text\n"
"  -V, --version        version\n");
}

/* ---- logging and time ------------------------------------------------------ */

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

/* ---- command line ---------------------------------------------------------- */

enum {
	OPT_DGRAM = 256,
	OPT_VNET,
	OPT_STREAM,
	OPT_SEQPACKET,
	OPT_CTL,
	OPT_TAP,
	OPT_HUB,
	OPT_MODE,
	OPT_GROUP,
	OPT_CTL_MODE,
	OPT_CTL_GROUP,
	OPT_MAX_FRAME,
	OPT_AGE,
	OPT_FLOOD,
	OPT_NO_FLOOD,
	OPT_MAC_LOCK,
	OPT_ISOLATE,
	OPT_FDB_MAX,
	OPT_FDB_PORT_MAX,
	OPT_QUEUE,
	OPT_MAX_PORTS,
	OPT_NO_URING,
	OPT_ALLOW_UID,
	OPT_ALLOW_GID,
};

static const struct option long_opts[] = {
	{ "dgram",		required_argument,	NULL, OPT_DGRAM },
	{ "vnet",		required_argument,	NULL, OPT_VNET },
	{ "stream",		required_argument,	NULL, OPT_STREAM },
	{ "seqpacket",		required_argument,	NULL, OPT_SEQPACKET },
	{ "ctl",		required_argument,	NULL, OPT_CTL },
	{ "tap",		required_argument,	NULL, OPT_TAP },
	{ "hub",		no_argument,		NULL, OPT_HUB },
	{ "mode",		required_argument,	NULL, OPT_MODE },
	{ "group",		required_argument,	NULL, OPT_GROUP },
	{ "ctl-mode",		required_argument,	NULL, OPT_CTL_MODE },
	{ "ctl-group",		required_argument,	NULL, OPT_CTL_GROUP },
	{ "max-frame",		required_argument,	NULL, OPT_MAX_FRAME },
	{ "age",		required_argument,	NULL, OPT_AGE },
	{ "flood-unknown",	no_argument,		NULL, OPT_FLOOD },
	{ "no-flood-unknown",	no_argument,		NULL, OPT_NO_FLOOD },
	{ "mac-lock",		no_argument,		NULL, OPT_MAC_LOCK },
	{ "isolate",		no_argument,		NULL, OPT_ISOLATE },
	{ "fdb-max",		required_argument,	NULL, OPT_FDB_MAX },
	{ "fdb-port-max",	required_argument,	NULL, OPT_FDB_PORT_MAX },
	{ "queue",		required_argument,	NULL, OPT_QUEUE },
	{ "max-ports",		required_argument,	NULL, OPT_MAX_PORTS },
	{ "no-uring",		no_argument,		NULL, OPT_NO_URING },
	{ "allow-uid",		required_argument,	NULL, OPT_ALLOW_UID },
	{ "allow-gid",		required_argument,	NULL, OPT_ALLOW_GID },
	{ "verbose",		no_argument,		NULL, 'v' },
	{ "help",		no_argument,		NULL, 'h' },
	{ "version",		no_argument,		NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static void __attribute__((noreturn, format(printf, 2, 3)))
bad_opt(const char *opt, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "vecswitch: %s: ", opt);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(EXIT_USAGE);
}

static unsigned int parse_uint(const char *opt, const char *arg, int base,
			       unsigned long min, unsigned long max)
{
	unsigned long v;
	char *end;

	errno = 0;
	if (arg[0] == '-' || arg[0] == '+' || arg[0] == ' ' || !arg[0])
		bad_opt(opt, "'%s' is not a number", arg);
	v = strtoul(arg, &end, base);
	if (*end)
		bad_opt(opt, "'%s' is not a number", arg);
	if (errno == ERANGE || v < min || v > max)
		bad_opt(opt, base == 8 ? "'%s' is out of range %lo..%lo" :
			"'%s' is out of range %lu..%lu", arg, min, max);
	return v;
}

static const char *parse_path(const char *opt, const char *arg)
{
	struct sockaddr_un sa;
	socklen_t len;

	if (vs_sockaddr_un(&sa, &len, arg) < 0)
		bad_opt(opt, "path empty or longer than %zu bytes",
			sizeof(sa.sun_path) - 1);
	return arg;
}

static long parse_group(const char *arg)
{
	struct group *gr;
	char *end;
	long v;

	gr = getgrnam(arg);
	if (gr)
		return gr->gr_gid;
	errno = 0;
	v = strtol(arg, &end, 10);
	if (!arg[0] || *end || errno || v < 0 || v > 0x7fffffff)
		bad_opt("--group", "no group '%s'", arg);
	return v;
}

/* "a,b,c" of names or numbers, appended to ids; repeated options add up. */
static void parse_ids(const char *opt, const char *arg, bool users,
		      uint32_t *ids, unsigned int *n)
{
	char *list = strdup(arg), *save = NULL, *tok, *end;
	unsigned long v;

	if (!list)
		bad_opt(opt, "out of memory");
	for (tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		struct passwd *pw = users ? getpwnam(tok) : NULL;
		struct group *gr = users ? NULL : getgrnam(tok);

		if (*n == VS_ALLOW_MAX)
			bad_opt(opt, "more than %d ids", VS_ALLOW_MAX);
		if (pw || gr) {
			ids[(*n)++] = pw ? pw->pw_uid : gr->gr_gid;
			continue;
		}
		errno = 0;
		v = strtoul(tok, &end, 10);
		/* (uid_t)-1 means "no change" to the kernel: never an id */
		if (!isdigit((unsigned char)tok[0]) || *end || errno ||
		    v >= 0xffffffffUL)
			bad_opt(opt, "no %s '%s'", users ? "user" : "group", tok);
		ids[(*n)++] = v;
	}
	free(list);
	if (!*n)
		bad_opt(opt, "empty list");
}

static void parse_args(struct vs_config *cfg, int argc, char **argv)
{
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":vhV", long_opts, NULL)) != -1) {
		const char *name = argv[optind - 1];

		switch (c) {
		case OPT_DGRAM:
			cfg->dgram_path = parse_path("--dgram", optarg);
			break;
		case OPT_VNET:
			cfg->vnet_path = parse_path("--vnet", optarg);
			break;
		case OPT_STREAM:
			cfg->stream_path = parse_path("--stream", optarg);
			break;
		case OPT_SEQPACKET:
			cfg->seqpacket_path = parse_path("--seqpacket", optarg);
			break;
		case OPT_CTL:
			cfg->ctl_path = parse_path("--ctl", optarg);
			break;
		case OPT_TAP:
			if (!optarg[0] || strlen(optarg) >= 16)
				bad_opt("--tap", "interface name must be 1..15 bytes");
			cfg->tap_name = optarg;
			break;
		case OPT_HUB:
			cfg->hub = true;
			break;
		case OPT_MODE:
			cfg->sock_mode = parse_uint("--mode", optarg, 8, 0, 0777);
			break;
		case OPT_GROUP:
			cfg->sock_gid = parse_group(optarg);
			break;
		case OPT_CTL_MODE:
			cfg->ctl_mode = parse_uint("--ctl-mode", optarg, 8, 0, 0777);
			break;
		case OPT_CTL_GROUP:
			cfg->ctl_gid = parse_group(optarg);
			break;
		case OPT_MAX_FRAME:
			cfg->max_frame = parse_uint("--max-frame", optarg, 10,
						    ETH_HLEN_MIN + 46,
						    VS_MAX_FRAME_LIMIT);
			break;
		case OPT_AGE:
			cfg->age = parse_uint("--age", optarg, 10, 0, 86400 * 365);
			break;
		case OPT_FLOOD:
			cfg->flood_unknown = true;
			break;
		case OPT_NO_FLOOD:
			cfg->flood_unknown = false;
			break;
		case OPT_MAC_LOCK:
			cfg->mac_lock = true;
			break;
		case OPT_ISOLATE:
			cfg->isolate = true;
			break;
		case OPT_FDB_MAX:
			cfg->fdb_max = parse_uint("--fdb-max", optarg, 10, 1,
						  1 << 20);
			break;
		case OPT_FDB_PORT_MAX:
			cfg->fdb_port_max = parse_uint("--fdb-port-max", optarg,
						       10, 1, 1 << 20);
			break;
		case OPT_QUEUE:
			cfg->queue_len = parse_uint("--queue", optarg, 10, 1,
						    65536);
			break;
		case OPT_MAX_PORTS:
			cfg->max_ports = parse_uint("--max-ports", optarg, 10, 1,
						    4096);
			break;
		case OPT_NO_URING:
			cfg->no_uring = true;
			break;
		case OPT_ALLOW_UID:
			parse_ids("--allow-uid", optarg, true, cfg->allow_uid,
				  &cfg->n_allow_uid);
			break;
		case OPT_ALLOW_GID:
			parse_ids("--allow-gid", optarg, false, cfg->allow_gid,
				  &cfg->n_allow_gid);
			break;
		case 'v':
			cfg->verbose++;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf("vecswitch %s\n", VS_VERSION);
			exit(0);
		case ':':
			bad_opt(name, "needs an argument");
		default:
			/* getopt leaves a bad short option in optopt */
			if (optopt && optopt < 256)
				fprintf(stderr, "vecswitch: -%c: unknown option\n",
					optopt);
			else
				fprintf(stderr, "vecswitch: %s: unknown option\n",
					name);
			exit(EXIT_USAGE);
		}
	}
	if (optind < argc)
		bad_opt(argv[optind], "unexpected argument");
	if (!cfg->dgram_path && !cfg->vnet_path && !cfg->stream_path &&
	    !cfg->seqpacket_path && !cfg->tap_name)
		bad_opt("--dgram", "no port given (--dgram, --vnet, --stream, --seqpacket or --tap)");
}

/* ---- event dispatch -------------------------------------------------------- */

int vs_epoll_add(struct vs_switch *sw, int fd, uint64_t tag, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.u64 = tag };

	if (epoll_ctl(sw->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		vs_log(sw, 0, "epoll_ctl: %s", strerror(errno));
		return -1;
	}
	return 0;
}

void vs_dispatch(struct vs_switch *sw, uint64_t tag, uint32_t events)
{
	unsigned int idx = tag >> 8;
	struct vs_port *p;

	switch ((enum vs_ev_kind)(tag & 0xff)) {
	case VS_EV_SIGNAL: {
		struct signalfd_siginfo si;

		if (read(sw->sigfd, &si, sizeof(si)) == sizeof(si)) {
			vs_log(sw, 1, "signal %u, stopping", si.ssi_signo);
			sw->stop = true;
		}
		break;
	}
	case VS_EV_DGRAM:
		vs_mmsg_dgram_rx(sw, false);
		break;
	case VS_EV_VNET:
		vs_mmsg_dgram_rx(sw, true);
		break;
	case VS_EV_STREAM_LISTEN:
		vs_accept(sw, sw->stream_fd, VS_PORT_STREAM);
		break;
	case VS_EV_SEQPACKET_LISTEN:
		vs_accept(sw, sw->seqpacket_fd, VS_PORT_SEQPACKET);
		break;
	case VS_EV_CTL_LISTEN:
		vs_ctl_accept(sw);
		break;
	case VS_EV_CTL_CONN:
		vs_ctl_event(sw, idx, events);
		break;
	case VS_EV_PORT:
	case VS_EV_PROBE:
		/* a port removed earlier in this batch may still have events */
		p = idx < sw->nports ? sw->ports[idx] : NULL;
		if (!p || p->dead)
			break;
		if ((tag & 0xff) == VS_EV_PROBE)
			vs_dgram_probe_event(sw, p);
		else
			vs_port_event(sw, p, events);
		break;
	}
}

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

	*fdp = vs_listen_unix(path, type,
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
	int fds[] = { sw->dgram_fd, sw->vnet_fd };
	socklen_t len;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(fds); i++) {
		len = sizeof(sw->sndbuf[i].size);
		if (fds[i] < 0 ||
		    getsockopt(fds[i], SOL_SOCKET, SO_SNDBUF,
			       &sw->sndbuf[i].size, &len) < 0)
			sw->sndbuf[i].size = 0;
	}
}

static int setup_listeners(struct vs_switch *sw)
{
	const struct vs_config *cfg = &sw->cfg;

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

static int next_timeout(struct vs_switch *sw)
{
	int t = sw->next_sweep_ms > sw->now_ms ?
		(int)(sw->next_sweep_ms - sw->now_ms) : 0;
	int r = vs_next_retry_ms(sw);

	return r >= 0 && r < t ? r : t;
}

static void run(struct vs_switch *sw)
{
	sw->now_ms = vs_now_ms();
	sw->next_sweep_ms = sw->now_ms + HOUSEKEEP_MS;
	while (!sw->stop) {
		if (sw->io->wait(sw, next_timeout(sw)) < 0) {
			vs_log(sw, 0, "wait: %s", strerror(errno));
			break;
		}
		sw->now_ms = vs_now_ms();
		vs_flush_all(sw);
		if (sw->now_ms >= sw->next_sweep_ms) {
			vs_fdb_sweep(sw);
			vs_ctl_expire(sw);
			if (sw->tap)
				vs_tap_mtu(sw->tap);
			sw->next_sweep_ms = sw->now_ms + HOUSEKEEP_MS;
		}
		vs_port_reap(sw);
	}
}

int main(int argc, char **argv)
{
	struct vs_switch sw = {
		.cfg = {
			.sock_mode	= 0600,
			.sock_gid	= -1,
			.ctl_mode	= 0600,
			.ctl_gid	= -1,
			.max_frame	= 9216,
			.age		= 300,
			.fdb_max	= 4096,
			.fdb_port_max	= 256,
			.queue_len	= 1024,
			.max_ports	= 256,
			.unread_limit	= 4u << 20,
			.flood_unknown	= true,
		},
		.epfd = -1, .sigfd = -1, .dgram_fd = -1, .vnet_fd = -1,
		.stream_fd = -1,
		.seqpacket_fd = -1, .ctl_fd = -1, .diag.fd = -1,
		.spare_fd = -1,
	};
	int ret = 1;
	unsigned int i;

	if (argc > 1 && !strcmp(argv[1], "ctl"))
		return vs_ctl_client(argc - 1, argv + 1);
	parse_args(&sw.cfg, argc, argv);
	if (vs_fd_budget(&sw.cfg) < 0)
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
	sw.rxmem = malloc((size_t)VS_BATCH * vs_dgram_slot(&sw));
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

	vs_log(NULL, 0, "running (io %s%s%s)", sw.io->name,
	       sw.cfg.hub ? ", hub" : "", sw.cfg.isolate ? ", isolate" : "");
	run(&sw);
	ret = 0;
	sw.io->fini(&sw);

out_listen:
	vs_diag_close(&sw);
	vs_ctl_close_all(&sw);
	unlink_own(&sw);
	vs_port_free_all(&sw);
out_fds:
	{
		int *fds[] = { &sw.dgram_fd, &sw.vnet_fd, &sw.stream_fd,
			       &sw.seqpacket_fd,
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
