// SPDX-License-Identifier: GPL-2.0
/*
 * nat.c - the NAT port (--nat): vecnat, a program of its own beside this
 * one, run as a child.  It attaches to the --dgram socket like any guest,
 * through a socket this file connects for it, so that it never needs the
 * right to open the switch's socket file and never sees the switch's
 * memory.  A child that dies is counted, logged and started again, after
 * a pause that doubles while it keeps dying young.  The forwards it holds
 * are kept here too, so that a new child starts with all of them; `ctl
 * forward` reaches the child through a socket pair.
 *
 * The switch never waits for the child: a ctl request it must answer is
 * sent tagged ("#SEQ request"), the control connection waits for it
 * (ctl.c's nat_wait), and the tagged answer, when the loop finds it on
 * the pair, becomes the connection's output.  A child that has not
 * answered within NAT_CTL_MS gets its requests answered with an error
 * instead; an answer that comes later is dropped.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "vecswitch.h"

#define NAT_BACKOFF_MIN_MS	500
#define NAT_BACKOFF_MAX_MS	30000
#define NAT_YOUNG_MS		10000	/* dying sooner doubles the pause */
#define NAT_READY_MS		5000
#define NAT_CTL_MS		500	/* the child's answer to a ctl request */
#define NAT_FWD_MAX		64
#define NAT_SPEC_LEN		112
#define NAT_NSTATS		7
#define NAT_PEND		8	/* requests the child has not answered */
#define NAT_INPUT_MAX		64	/* its messages read in one loop turn */
#define NAT_ANSWER_MAX		(NAT_FWD_MAX * NAT_SPEC_LEN + 64)

/* what a tagged request was for */
enum nat_req_kind {
	NAT_REQ_FWD,		/* add or del: then a list, then the client */
	NAT_REQ_LIST,		/* the forwards as the child spells them */
	NAT_REQ_NEIGHBORS,	/* ctl nat */
	NAT_REQ_NEIGHBORS_JSON,	/* ctl nat json */
};

struct nat_req {
	uint32_t seq;
	enum nat_req_kind kind;
	int conn;			/* the ctl connection waiting, or -1 */
	uint64_t serial;		/* ... as long as it is this one */
	uint64_t deadline_ms;
};

/* the descriptors the child is given */
enum { NAT_FD_SWITCH = 3, NAT_FD_READY, NAT_FD_CTL };

static struct {
	char path[PATH_MAX];		/* the vecnat program */
	pid_t pid;			/* 0: not running */
	int ctl_fd;			/* our end of the child's control pair */
	uint64_t started_ms;
	uint64_t restart_ms;		/* when to start it again */
	unsigned int backoff_ms;
	unsigned int nfwd;
	char fwd[NAT_FWD_MAX][NAT_SPEC_LEN];	/* as the child spells them */
	/* counters of the children that died, and of this one so far */
	uint64_t base[NAT_NSTATS];
	uint64_t cur[NAT_NSTATS];
	struct nat_req pend[NAT_PEND];	/* sent, oldest first */
	unsigned int npend;
	uint32_t seq;
} nat = { .ctl_fd = -1 };

/* the child's counters, in the order of its "stats" answer */
static uint64_t *nat_stat(struct vs_sw_stats *st, unsigned int i)
{
	uint64_t *f[NAT_NSTATS] = {
		&st->nat_rx_frames, &st->nat_rx_refused, &st->nat_tx_frames,
		&st->nat_tx_dropped, &st->nat_guest_errors, &st->nat_rx_gso,
		&st->nat_tx_gro,
	};

	return f[i];
}

/* An answer to "stats": the switch's counters follow it */
static bool take_stats(struct vs_switch *sw, const char *msg)
{
	unsigned long long v[NAT_NSTATS];
	unsigned int i;

	if (sscanf(msg, "stats %llu %llu %llu %llu %llu %llu %llu", &v[0],
		   &v[1], &v[2], &v[3], &v[4], &v[5], &v[6]) != NAT_NSTATS)
		return false;
	for (i = 0; i < NAT_NSTATS; i++) {
		nat.cur[i] = v[i];
		*nat_stat(&sw->st, i) = nat.base[i] + v[i];
	}
	return true;
}

/*
 * vecnat is beside this program, its name ours with "vecswitch" replaced
 * (vecswitch-asan starts vecnat-asan)
 */
static int find_helper(void)
{
	char self[PATH_MAX], *base, *at;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		return -1;
	self[n] = '\0';
	base = strrchr(self, '/');
	if (!base)
		return -1;
	*base++ = '\0';
	at = strstr(base, "vecswitch");
	if (!at)
		return -1;
	*at = '\0';
	if (snprintf(nat.path, sizeof(nat.path), "%s/%svecnat%s", self, base,
		     at + strlen("vecswitch")) >= (int)sizeof(nat.path))
		return -1;
	return access(nat.path, X_OK);
}

/* An autobound socket connected to our --dgram socket, for the child */
static int switch_socket(const struct vs_switch *sw)
{
	struct sockaddr_un sa;
	socklen_t len;
	int fd;

	if (vs_sockaddr_un(&sa, &len, sw->cfg.dgram_path) < 0)
		return -1;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa_family_t)) < 0 ||
	    connect(fd, (struct sockaddr *)&sa, len) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int spawn(struct vs_switch *sw, int sfd, int rfd, int cfd, bool again)
{
	const struct vs_config *cfg = &sw->cfg;
	char *argv[8 + VS_NAT_ARGS_MAX + 2 * NAT_FWD_MAX];
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	unsigned int i, n = 0;
	sigset_t none;
	int r;

	argv[n++] = nat.path;
	argv[n++] = "--fd=3";
	argv[n++] = "--ready-fd=4";
	argv[n++] = "--ctl-fd=5";
	if (again)
		argv[n++] = "--again";
	/* the options as given, but the forwards: those kept here */
	for (i = 0; i < cfg->n_nat_args; i++) {
		if (!strcmp(cfg->nat_args[i], "--nat-forward"))
			i++;
		else
			argv[n++] = (char *)cfg->nat_args[i];
	}
	for (i = 0; i < nat.nfwd; i++) {
		argv[n++] = "--nat-forward";
		argv[n++] = nat.fwd[i];
	}
	argv[n] = NULL;
	/* our signals are blocked for the signalfd: the child's are not */
	sigemptyset(&none);
	posix_spawnattr_init(&at);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, sfd, NAT_FD_SWITCH);
	posix_spawn_file_actions_adddup2(&fa, rfd, NAT_FD_READY);
	posix_spawn_file_actions_adddup2(&fa, cfd, NAT_FD_CTL);
	r = posix_spawn(&nat.pid, nat.path, &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	if (r) {
		nat.pid = 0;
		errno = r;
		return -1;
	}
	nat.started_ms = vs_now_ms();
	sw->st.nat_starts++;
	return 0;
}

/*
 * @fd moved above the child's 3, 4 and 5, so that no dup2 of the spawn
 * lands on another one it has still to make (or on itself, which would
 * leave it close-on-exec)
 */
static int high_fd(int fd)
{
	int h;

	if (fd < 0 || fd > NAT_FD_CTL)
		return fd;
	h = fcntl(fd, F_DUPFD_CLOEXEC, NAT_FD_CTL + 1);
	close(fd);
	return h;
}

/*
 * Start the child; with @wait, until it says it runs.  Returns 0, -1, or
 * the child's exit status when it stopped before it ran (2: a bad option)
 */
static int nat_run(struct vs_switch *sw, bool wait)
{
	int sfd, ready[2] = { -1, -1 }, ctl[2] = { -1, -1 }, st = 0, r = -1;
	struct pollfd p;
	char c;

	sfd = high_fd(switch_socket(sw));
	if (sfd < 0 || pipe2(ready, O_CLOEXEC) < 0 ||
	    (ready[1] = high_fd(ready[1])) < 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ctl) < 0 ||
	    (ctl[1] = high_fd(ctl[1])) < 0 ||
	    spawn(sw, sfd, ready[1], ctl[1], !wait) < 0) {
		vs_log(sw, 0, "nat: cannot start %s: %s", nat.path, strerror(errno));
		goto out;
	}
	/*
	 * the NAT process is not trusted either: no descriptors from it,
	 * and any that got through go to the closer (vs_recv_rights)
	 */
	(void)vs_refuse_rights(sw, ctl[0]);
	if (nat.ctl_fd >= 0)
		vs_close_later(sw, nat.ctl_fd);
	nat.ctl_fd = ctl[0];
	ctl[0] = -1;
	/* the answers are read by the loop (vs_nat_input) */
	if (vs_epoll_add(sw, nat.ctl_fd, vs_ev(VS_EV_NAT, 0), EPOLLIN) < 0) {
		kill(nat.pid, SIGKILL);
		waitpid(nat.pid, NULL, 0);
		nat.pid = 0;
		goto out;
	}
	r = 0;
	if (!wait)
		goto out;
	close(ready[1]);
	ready[1] = -1;
	p = (struct pollfd){ .fd = ready[0], .events = POLLIN };
	if (poll(&p, 1, NAT_READY_MS) == 1 && read(ready[0], &c, 1) == 1)
		goto out;
	/* it stopped, having said why, or hangs */
	if (poll(&p, 1, 0) == 0)
		kill(nat.pid, SIGKILL);
	waitpid(nat.pid, &st, 0);
	nat.pid = 0;
	r = WIFEXITED(st) && WEXITSTATUS(st) ? WEXITSTATUS(st) : -1;
out:
	if (sfd >= 0)
		close(sfd);
	if (ready[0] >= 0)
		close(ready[0]);
	if (ready[1] >= 0)
		close(ready[1]);
	if (ctl[0] >= 0)
		close(ctl[0]);
	if (ctl[1] >= 0)
		close(ctl[1]);
	return r;
}

/*
 * The client of control connection @conn (whose serial is @serial) is
 * answered @text; ctl.c sends it at the end of the loop turn.  Nothing
 * if the client went meanwhile.
 */
static void reply(struct vs_switch *sw, int conn, uint64_t serial,
		  const char *text)
{
	struct vs_ctl_conn *c;

	if (conn < 0 || conn >= VS_CTL_MAX_CONN)
		return;
	c = &sw->ctl[conn];
	if (c->fd < 0 || c->serial != serial || !c->nat_wait || c->out)
		return;
	c->out = strdup(text);
	c->outlen = c->out ? strlen(c->out) : 0;
	c->outoff = 0;
	if (!c->out)
		c->nat_wait = false;	/* closed with no answer */
}

/*
 * Send @req to the child, tagged, for the client of control connection
 * @conn (-1: for the switch itself) whose serial is @serial; false if it
 * cannot be sent now
 */
static bool ask(struct vs_switch *sw, enum nat_req_kind kind, int conn,
		uint64_t serial, const char *req)
{
	char msg[NAT_SPEC_LEN + 32];
	struct nat_req *r;
	int n;

	if (!nat.pid || nat.ctl_fd < 0 || nat.npend == NAT_PEND)
		return false;
	n = snprintf(msg, sizeof(msg), "#%u %s", nat.seq + 1, req);
	if (n < 0 || (size_t)n >= sizeof(msg) ||
	    send(nat.ctl_fd, msg, n, MSG_DONTWAIT | MSG_NOSIGNAL) != n)
		return false;
	r = &nat.pend[nat.npend++];
	r->seq = ++nat.seq;
	r->kind = kind;
	r->conn = conn;
	r->serial = serial;
	r->deadline_ms = sw->now_ms + NAT_CTL_MS;
	return true;
}

/* The child's forwards, as it spells them, kept for its next start */
static void take_list(char *list)
{
	char *line, *save = NULL;

	nat.nfwd = 0;
	for (line = strtok_r(list, "\n", &save);
	     line && nat.nfwd < NAT_FWD_MAX;
	     line = strtok_r(NULL, "\n", &save)) {
		/* what a spec is made of, no more: the child is not trusted */
		if (strlen(line) >= NAT_SPEC_LEN ||
		    strspn(line, "abcdefghijklmnopqrstuvwxyz0123456789:.[]") != strlen(line))
			continue;
		snprintf(nat.fwd[nat.nfwd++], NAT_SPEC_LEN, "%s", line);
	}
}

/* only what a MAC or an address is made of: the child's text is not trusted */
static bool addr_chars(const char *s)
{
	return *s && strspn(s, "0123456789abcdefABCDEF:.") == strlen(s);
}

/*
 * The child's table as JSON, {"guests":[{"table","mac","ip"}...]}: its
 * header and any line that is not a table name, a MAC and an address
 * are left out
 */
static char *guests_json(char *text)
{
	char *line, *save = NULL, *out;
	char table[8], mac[24], ip[48], extra[2];
	/* an entry's JSON is at most 30 bytes more than its fields */
	size_t cap = strlen(text) * 8 + 32, used;
	int n;

	out = malloc(cap);
	if (!out)
		return NULL;
	used = snprintf(out, cap, "{\"guests\":[");
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "%7s %23s %47s %1s", table, mac, ip, extra) != 3 ||
		    (strcmp(table, "ARP") && strcmp(table, "NDP")) ||
		    !addr_chars(mac) || !addr_chars(ip))
			continue;
		n = snprintf(out + used, cap - used, "%s{\"table\":\"%s\",\"mac\":\"%s\",\"ip\":\"%s\"}",
			     out[used - 1] == '[' ? "" : ",", table, mac, ip);
		if (n < 0 || (size_t)n >= cap - used - 4)
			break;
		used += n;
	}
	snprintf(out + used, cap - used, "]}\n");
	return out;
}

/* What a client is told when its request failed: @why, as @kind says */
static void reply_err(struct vs_switch *sw, const struct nat_req *r,
		      const char *why)
{
	char text[160];

	snprintf(text, sizeof(text),
		 r->kind == NAT_REQ_NEIGHBORS_JSON ? "{\"error\":\"nat: %s\"}\n" :
		 r->kind == NAT_REQ_NEIGHBORS ? "error: nat: %s\n" :
		 "error: forward: %s\n", why);
	reply(sw, r->conn, r->serial, text);
}

/* The child's answer @text (room for one more byte) to request @r */
static void answered(struct vs_switch *sw, const struct nat_req *r, char *text)
{
	switch (r->kind) {
	case NAT_REQ_FWD:
		if (strncmp(text, "ok", 2)) {
			strcat(text, "\n");
			reply(sw, r->conn, r->serial, text);
		} else if (!ask(sw, NAT_REQ_LIST, r->conn, r->serial, "list")) {
			/* done, but the list here is behind until the next */
			reply(sw, r->conn, r->serial, "ok\n");
		}
		break;
	case NAT_REQ_LIST:
		/* the client hears "ok" once the list says what was done */
		if (!strncmp(text, "ok\n", 3))
			take_list(text + 3);
		reply(sw, r->conn, r->serial, "ok\n");
		break;
	case NAT_REQ_NEIGHBORS:
	case NAT_REQ_NEIGHBORS_JSON:
		if (strncmp(text, "ok\n", 3)) {
			reply_err(sw, r, "the NAT process could not list its guests");
		} else if (r->kind == NAT_REQ_NEIGHBORS) {
			reply(sw, r->conn, r->serial, text + 3);
		} else {
			char *json = guests_json(text + 3);

			if (json)
				reply(sw, r->conn, r->serial, json);
			else
				reply_err(sw, r, "out of memory");
			free(json);
		}
		break;
	}
}

/* Requests the child did not answer in time, or @all of them: failed */
static void expire(struct vs_switch *sw, bool all)
{
	while (nat.npend && (all || sw->now_ms >= nat.pend[0].deadline_ms)) {
		struct nat_req r = nat.pend[0];

		memmove(nat.pend, nat.pend + 1, --nat.npend * sizeof(r));
		reply_err(sw, &r, "the NAT process does not answer (restarting?)");
	}
}

/* The child's control socket is readable: its answers */
void vs_nat_input(struct vs_switch *sw)
{
	static char out[NAT_ANSWER_MAX + 2];
	struct nat_req r;
	unsigned long seq;
	unsigned int i, k;
	char *text;
	ssize_t n = -1;

	/* a bounded number a turn: the child is not trusted to stop */
	for (k = 0; k < NAT_INPUT_MAX &&
	     (n = vs_recv_rights(sw, nat.ctl_fd, out, NAT_ANSWER_MAX)) > 0; k++) {
		out[n] = '\0';
		if (out[0] != '#') {
			take_stats(sw, out);
			continue;
		}
		seq = strtoul(out + 1, &text, 10);
		if (*text != ' ')
			continue;
		for (i = 0; i < nat.npend && nat.pend[i].seq != seq; i++)
			;
		if (i == nat.npend)
			continue;	/* answered already: it came too late */
		/* answers come in order: older ones still due are lost */
		while (i--) {
			r = nat.pend[0];
			memmove(nat.pend, nat.pend + 1, --nat.npend * sizeof(r));
			reply_err(sw, &r, "the NAT process lost the request");
		}
		r = nat.pend[0];
		memmove(nat.pend, nat.pend + 1, --nat.npend * sizeof(r));
		answered(sw, &r, text + 1);
	}
	if (k == NAT_INPUT_MAX || (n < 0 && (errno == EAGAIN || errno == EINTR)))
		return;
	/*
	 * The child closed its end (it is going), sent an empty message
	 * (which no answer is), or the pair failed: watched no more, not to
	 * be woken for nothing, and the child is ended; the tick reaps it
	 * and starts another
	 */
	epoll_ctl(sw->epfd, EPOLL_CTL_DEL, nat.ctl_fd, NULL);
	if (nat.pid)
		kill(nat.pid, SIGKILL);
}

/* Once a second: ask for the child's counters; they come as any answer */
static void poll_stats(void)
{
	send(nat.ctl_fd, "stats", 5, MSG_DONTWAIT | MSG_NOSIGNAL);
}

/* Start the NAT port for --nat; 0, or the exit status the switch ends with */
int vs_nat_start(struct vs_switch *sw)
{
	unsigned int i;
	int r;

	if (find_helper() < 0) {
		vs_log(NULL, 0, "--nat: no NAT program at %s",
		       nat.path[0] ? nat.path : "(unknown: /proc/self/exe)");
		return 1;
	}
	for (i = 0; i + 1 < sw->cfg.n_nat_args && nat.nfwd < NAT_FWD_MAX; i++)
		if (!strcmp(sw->cfg.nat_args[i], "--nat-forward"))
			snprintf(nat.fwd[nat.nfwd++], NAT_SPEC_LEN, "%s",
				 sw->cfg.nat_args[++i]);
	nat.backoff_ms = NAT_BACKOFF_MIN_MS;
	r = nat_run(sw, true);
	if (r) {
		vs_log(NULL, 0, "--nat: the NAT process did not start");
		return r == 2 ? 2 : 1;
	}
	/* the forwards as the child spells them, for its next start */
	ask(sw, NAT_REQ_LIST, -1, 0, "list");
	vs_log(sw, 1, "nat: running, pid %d", (int)nat.pid);
	return 0;
}

/*
 * A new dgram port of process @pid, named @name (VS_NAME_LEN bytes): is
 * it the child's?  Then its name says so, for ctl ports and the events,
 * and the caller makes it an uplink: a router's port, which --isolate
 * leaves the guests, whose several MACs (one per address of libslirp's)
 * --mac-lock allows, and whose broadcasts --bcast-limit does not count.
 */
bool vs_nat_name(struct vs_switch *sw, pid_t pid, char *name)
{
	char was[VS_NAME_LEN];

	if (!sw->cfg.nat || !nat.pid || pid != nat.pid)
		return false;
	memcpy(was, name, sizeof(was));
	snprintf(name, VS_NAME_LEN, "nat pid %d %.100s", (int)nat.pid, was);
	return true;
}

/* Once a second: a child that died is counted, and started again later */
void vs_nat_tick(struct vs_switch *sw)
{
	uint64_t lived;
	unsigned int i;
	int st;

	if (!sw->cfg.nat)
		return;
	if (nat.pid)
		poll_stats();
	expire(sw, !nat.pid);
	if (nat.pid && waitpid(nat.pid, &st, WNOHANG) == nat.pid) {
		lived = sw->now_ms - nat.started_ms;
		sw->st.nat_deaths++;
		nat.pid = 0;
		for (i = 0; i < NAT_NSTATS; i++) {
			nat.base[i] += nat.cur[i];
			nat.cur[i] = 0;
		}
		if (lived < NAT_YOUNG_MS)
			nat.backoff_ms = nat.backoff_ms * 2 > NAT_BACKOFF_MAX_MS ?
					 NAT_BACKOFF_MAX_MS : nat.backoff_ms * 2;
		else
			nat.backoff_ms = NAT_BACKOFF_MIN_MS;
		nat.restart_ms = sw->now_ms + nat.backoff_ms;
		expire(sw, true);
		if (WIFSIGNALED(st))
			vs_log(sw, 0, "nat: the NAT process died (signal %d, %s) after %llu ms; again in %u ms",
			       WTERMSIG(st), strsignal(WTERMSIG(st)),
			       (unsigned long long)lived, nat.backoff_ms);
		else
			vs_log(sw, 0, "nat: the NAT process exited with status %d after %llu ms; again in %u ms",
			       WEXITSTATUS(st), (unsigned long long)lived,
			       nat.backoff_ms);
	}
	if (!nat.pid && sw->now_ms >= nat.restart_ms && nat_run(sw, false) == 0) {
		vs_log(sw, 0, "nat: started again, pid %d", (int)nat.pid);
		/* it may have left out a forward it cannot listen on */
		ask(sw, NAT_REQ_LIST, -1, 0, "list");
	}
}

void vs_nat_stop(struct vs_switch *sw)
{
	int i;

	if (!sw->cfg.nat || !nat.pid)
		return;
	kill(nat.pid, SIGTERM);
	for (i = 0; i < 100 && waitpid(nat.pid, NULL, WNOHANG) == 0; i++)
		usleep(10000);
	if (i == 100) {
		kill(nat.pid, SIGKILL);
		waitpid(nat.pid, NULL, 0);
	}
	nat.pid = 0;
	if (nat.ctl_fd >= 0)
		vs_close_later(sw, nat.ctl_fd);
	nat.ctl_fd = -1;
}

/*
 * Ask the child @req for the client of control connection @c: NULL, and
 * the client waits for the answer (c->nat_wait), or the error to answer
 * at once (allocated)
 */
static char *ask_for(struct vs_switch *sw, struct vs_ctl_conn *c,
		     enum nat_req_kind kind, const char *req)
{
	if (ask(sw, kind, c - sw->ctl, c->serial, req)) {
		c->nat_wait = true;
		return NULL;
	}
	return strdup(kind == NAT_REQ_NEIGHBORS_JSON ?
		      "{\"error\":\"nat: the NAT process does not answer (busy or restarting)\"}\n" :
		      kind == NAT_REQ_NEIGHBORS ?
		      "error: nat: the NAT process does not answer (busy or restarting)\n" :
		      "error: forward: the NAT process does not answer (busy or restarting)\n");
}

/*
 * ctl nat [json]: the guests the NAT process knows (libslirp's ARP and
 * NDP tables), as it lists them or as JSON, for the client of control
 * connection @c: as vs_nat_forward
 */
char *vs_nat_guests(struct vs_switch *sw, struct vs_ctl_conn *c, bool json)
{
	if (!sw->cfg.nat)
		return strdup(json ? "{\"error\":\"nat: the switch runs without --nat\"}\n" :
			      "error: nat: the switch runs without --nat\n");
	return ask_for(sw, c, json ? NAT_REQ_NEIGHBORS_JSON : NAT_REQ_NEIGHBORS,
		       "neighbors");
}

/*
 * ctl forward add|del SPEC, list [json], for the client of control
 * connection @c: the answer (allocated), or NULL when the client waits
 * for the child's (c->nat_wait).  The child checks the spec and opens
 * the port; the list here follows what it did.
 */
char *vs_nat_forward(struct vs_switch *sw, struct vs_ctl_conn *c,
		     const char *args)
{
	/* every forward quoted, with a comma: what a list may take */
	char req[NAT_SPEC_LEN + 8], out[NAT_FWD_MAX * (NAT_SPEC_LEN + 4) + 32];
	char verb[8] = "", spec[NAT_SPEC_LEN] = "", extra[2] = "";
	size_t used = 0;
	unsigned int i;
	int n;

	n = sscanf(args, "%7s %111s %1s", verb, spec, extra);
	if (!sw->cfg.nat)
		return strdup("error: forward: the switch runs without --nat\n");

	if (!strcmp(verb, "list") && (n == 1 || (n == 2 && !strcmp(spec, "json")))) {
		bool json = n == 2;

		used = snprintf(out, sizeof(out), json ? "{\"forwards\":[" : "");
		for (i = 0; i < nat.nfwd && used < sizeof(out); i++)
			used += snprintf(out + used, sizeof(out) - used,
					 json ? "%s\"%s\"" : "%.0s%s\n",
					 i ? "," : "", nat.fwd[i]);
		if (used >= sizeof(out))
			return strdup("error: forward: the list does not fit\n");
		snprintf(out + used, sizeof(out) - used, json ? "]}\n" : "");
		return strdup(out);
	}
	if (n != 2 || (strcmp(verb, "add") && strcmp(verb, "del")))
		return strdup("error: forward: want add SPEC, del SPEC or list [json]\n");
	snprintf(req, sizeof(req), "%s %s", verb, spec);
	return ask_for(sw, c, NAT_REQ_FWD, req);
}
