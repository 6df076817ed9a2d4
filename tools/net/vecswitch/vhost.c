// SPDX-License-Identifier: GPL-2.0
/*
 * vhost.c - the vhost-user messages of one frontend: what it may ask,
 * the guest memory it hands over, and the set-up of its two rings.
 *
 * A message is read without ever blocking the switch: a frontend that
 * sends half of one and stops holds only its own connection.  Whatever
 * breaks the protocol ends the connection (v->broken says why); the
 * frontend can connect again.  Descriptors are checked for their kind
 * in constant time, and no file system is asked: memory must be shared
 * memory (a memfd, or a file on tmpfs or hugetlbfs), a kick an eventfd
 * or a pipe, a call one of those or a unix socket.  Anything else could
 * make a read, a write, a page fault or even a close wait on a file
 * server for ever.  Every descriptor a message brings is received, and
 * those the switch does not keep (and any it keeps that could hold others,
 * a unix socket) are closed by the switch's closer thread, never on the
 * loop: the last reference to a file can wait as long as its owner likes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <linux/virtio_ring.h>

#include "vhost.h"

#ifndef F_GET_SEALS
#define F_GET_SEALS	1034
#endif
#ifndef SO_PASSRIGHTS
#define SO_PASSRIGHTS	83
#endif

const uint64_t vs_vh_features =
	1ull << VN_F_CSUM | 1ull << VN_F_GUEST_CSUM |
	1ull << VN_F_GUEST_TSO4 | 1ull << VN_F_GUEST_TSO6 |
	1ull << VN_F_GUEST_ECN | 1ull << VN_F_HOST_TSO4 |
	1ull << VN_F_HOST_TSO6 | 1ull << VN_F_HOST_ECN |
	1ull << VN_F_MRG_RXBUF | 1ull << VN_F_STATUS |
	1ull << VN_F_RING_INDIRECT | 1ull << VN_F_RING_EVENT_IDX |
	1ull << VHU_F_PROTOCOL_FEATURES | 1ull << VN_F_VERSION_1;

static const uint64_t protocol_features =
	1ull << VHU_PF_REPLY_ACK | 1ull << VHU_PF_CONFIG;

/* the link is up: VIRTIO_NET_S_LINK_UP in the status word */
#define VN_S_LINK_UP	1

/* ---- the memory of every frontend, for the SIGBUS handler -------------- */

/*
 * A frontend can shrink the file behind its memory after handing it
 * over; the switch's next access there would die of SIGBUS.  The handler
 * puts zero pages in place of that frontend's region and marks it: the
 * access completes, reads zeros, and the port is removed when the loop
 * looks.  The list changes only in the loop, never while it copies.
 */
static struct vs_vhost *all_frontends;

static void sigbus(int sig, siginfo_t *si, void *uc)
{
	uint8_t *a = si->si_addr;
	struct vs_vhost *v;
	unsigned int k;

	(void)uc;
	for (v = all_frontends; v; v = v->next_all) {
		for (k = 0; k < v->nregions; k++) {
			uint8_t *m = v->r[k].map;

			if (a < m || a >= m + v->r[k].maplen)
				continue;
			if (mmap(m, v->r[k].maplen, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
				 -1, 0) == MAP_FAILED)
				break;
			v->sigbus = true;
			return;
		}
	}
	/* not guest memory: die of it as without the handler */
	signal(sig, SIG_DFL);
}

void vs_vh_sigbus_init(void)
{
	struct sigaction sa = {
		.sa_sigaction = sigbus,
		.sa_flags = SA_SIGINFO | SA_NODEFER,
	};

	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
}

bool vs_vh_sigbus_seen(struct vs_vhost *v)
{
	if (v->sigbus && !v->broken)
		v->broken = "its memory file shrank under the switch";
	return v->sigbus;
}

static void track(struct vs_vhost *v, bool on)
{
	struct vs_vhost **pp;

	for (pp = &all_frontends; *pp && *pp != v; pp = &(*pp)->next_all)
		;
	if (on && !*pp) {
		v->next_all = all_frontends;
		all_frontends = v;
	} else if (!on && *pp) {
		*pp = v->next_all;
	}
}

/* ---- descriptors --------------------------------------------------------- */

/* The name /proc gives descriptor @fd; no file system is asked */
static bool fd_link(int fd, char *buf, size_t len)
{
	char path[64];
	ssize_t r;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	r = readlink(path, buf, len - 1);
	if (r < 0)
		return false;
	buf[r] = 0;
	return true;
}

/*
 * Is @fd shared memory the switch may map?  NULL if so, else why not.
 * Only shmem (memfds, tmpfs files) and hugetlbfs files keep seals, so
 * F_GET_SEALS answers in constant time, without a name (any file can be
 * called "memfd:x") and without a walk of a mount table (one a frontend
 * can make as long as it likes).  A file on any other file system could
 * make a page fault wait on its server for ever.
 */
static const char *fd_is_memory(int fd)
{
	if (fcntl(fd, F_GET_SEALS) < 0)
		return "memory that is not shared memory (a memfd, or a file on tmpfs or hugetlbfs)";
	return NULL;
}

enum notifier { KICK, CALL, ERR };

/* Is the unix socket @fd one that could be a notifier?  NULL if so */
static const char *sock_notifier(int fd, enum notifier kind)
{
	static const char *const not_unix[] = {
		[KICK] = "a kick descriptor that is a socket but not a unix one",
		[CALL] = "a call descriptor that is a socket but not a unix one",
		[ERR] = "an error descriptor that is a socket but not a unix one",
	};
	int domain = 0, listening = 0, off = 0;
	socklen_t len = sizeof(domain);
	struct sockaddr_un peer;

	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) < 0 ||
	    domain != AF_UNIX)
		return not_unix[kind];
	/*
	 * QEMU kicks and is called through eventfds; virtio_uml kicks through
	 * an eventfd and is called through a socket pair.  The switch only
	 * writes a call socket, and a socket it read could bring descriptors
	 * in whose release waits (a lingering TCP socket, a FUSE file):
	 * kicks are never sockets.
	 */
	if (kind == KICK)
		return "a kick descriptor that is a socket (only an eventfd or a pipe)";
	len = sizeof(listening);
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) < 0 ||
	    listening)
		return "a call or error descriptor that is a listening socket";
	/*
	 * one end of a socket pair: connected to a socket with no name.
	 * Every socket of the switch has one, so a call cannot be aimed at
	 * the switch itself (its writes would arrive as the switch's own).
	 */
	len = sizeof(peer);
	if (getpeername(fd, (struct sockaddr *)&peer, &len) < 0 ||
	    len > offsetof(struct sockaddr_un, sun_path))
		return "a call or error socket that is not one end of a socket pair";
	/* no more descriptors in; those queued already go with the closer */
	(void)setsockopt(fd, SOL_SOCKET, SO_PASSRIGHTS, &off, sizeof(off));
	return NULL;
}

/*
 * Whether eventfd @fd is in semaphore mode: each read then takes 1 and
 * it stays readable, so a frontend that put a count near 2^64 on its
 * kick once would have the switch read it every turn for ever.  The
 * kernel says so in the descriptor's fdinfo (since 6.3; an older one
 * cannot be asked, and its eventfds pass).
 */
static bool efd_semaphore(int fd)
{
	char path[64], line[128];
	bool sem = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "eventfd-semaphore:", 18)) {
			sem = strtol(line + 18, NULL, 10) != 0;
			break;
		}
	}
	fclose(f);
	return sem;
}

/*
 * Is @fd an eventfd, a pipe or (for calls) a unix socket, open the way
 * the switch uses it?  NULL if so, else why not.  @sock: it is a socket.
 */
static const char *fd_is_notifier(int fd, enum notifier kind, bool *sock)
{
	int fl, acc;
	char name[256];
	const char *why;

	*sock = false;
	if (!fd_link(fd, name, sizeof(name)))
		return "a descriptor /proc cannot name";
	if (!strncmp(name, "socket:[", 8)) {
		why = sock_notifier(fd, kind);
		if (why)
			return why;
		*sock = true;
	} else if (!strcmp(name, "anon_inode:[eventfd]")) {
		if (kind == KICK && efd_semaphore(fd))
			return "a kick eventfd in semaphore mode (it would stay ready)";
	} else if (strncmp(name, "pipe:[", 6)) {
		return "a kick or call descriptor that is no eventfd, pipe or unix socket";
	}
	fl = fcntl(fd, F_GETFL);
	if (fl < 0)
		return "a kick or call descriptor the switch cannot look at";
	/* a kick the switch cannot read, or a call it cannot write */
	acc = fl & O_ACCMODE;
	if (kind == KICK && acc != O_RDONLY && acc != O_RDWR)
		return "a kick descriptor not open for reading";
	if (kind == CALL && acc != O_WRONLY && acc != O_RDWR)
		return "a call descriptor not open for writing";
	/* the switch never waits on one, whatever the frontend does */
	if (fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return "a kick or call descriptor that cannot be non-blocking";
	return NULL;
}

/* Take the message's descriptor @i: the caller owns it now */
static int take_fd(struct vs_vhost *v, unsigned int i)
{
	int fd = v->msgfd[i];

	v->msgfd[i] = -1;
	return fd;
}

static void drop_msg_fds(struct vs_vhost *v, const struct vs_vh_env *env)
{
	unsigned int i;

	for (i = 0; i < v->nmsgfd; i++)
		if (v->msgfd[i] >= 0)
			env->drop_fd(env->arg, take_fd(v, i));
	v->nmsgfd = 0;
}

/* A descriptor the switch checked and kept: closing it cannot wait */
static void close_own(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* ---- memory -------------------------------------------------------------- */

static void unmap_all(struct vs_vh_region *r, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (r[i].map)
			munmap(r[i].map, r[i].maplen);
}

static uint64_t mapped_of(const struct vs_vh_region *r, unsigned int n)
{
	uint64_t sum = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		sum += r[i].maplen;
	return sum;
}

/* @v's mappings are @bytes now: the switch's total follows */
static void set_mapped(struct vs_vhost *v, const struct vs_vh_env *env,
		       uint64_t bytes)
{
	if (env->mem)
		*env->mem->all = *env->mem->all - v->st.mapped + bytes;
	v->st.mapped = bytes;
}

/*
 * @len bytes at @addr in one region, as the switch sees them; @uva: an
 * address in the frontend's own address space, else a guest physical one
 */
static void *xlate(const struct vs_vhost *v, uint64_t addr, uint64_t len,
		   bool uva)
{
	unsigned int i;

	for (i = 0; i < v->nregions; i++) {
		const struct vs_vh_region *r = &v->r[i];
		uint64_t base = uva ? r->uva : r->gpa, off = addr - base;

		if (addr >= base && off < r->size && len <= r->size - off)
			return r->host + off;
	}
	return NULL;
}

void *vs_vh_xlate(const struct vs_vhost *v, uint64_t gpa, uint64_t len)
{
	return xlate(v, gpa, len, false);
}

static void *xlate_uva(const struct vs_vhost *v, uint64_t uva, uint64_t len)
{
	return xlate(v, uva, len, true);
}

static bool overlap(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	return a < b + blen && b < a + alen;
}

/*
 * Region @i of a SET_MEM_TABLE payload, checked against those before it;
 * *@pstart: the file offset its mapping starts at, a multiple of @page
 * (the file's: hugetlbfs maps only whole huge pages), *@off: the region's
 */
static const char *region_of(const uint8_t *pl, unsigned int i,
			     uint64_t page, struct vs_vh_region *r,
			     uint64_t *pstart, uint64_t *off)
{
	uint64_t f[4], end, start;
	unsigned int k;

	memcpy(f, pl + 8 + i * 32, sizeof(f));
	r[i] = (struct vs_vh_region){ .gpa = f[0], .size = f[1], .uva = f[2] };
	if (!f[1] || f[0] + f[1] < f[0] || f[2] + f[1] < f[2] ||
	    __builtin_add_overflow(f[3], f[1], &end) || end > (uint64_t)INT64_MAX)
		return "memory region of no size or past the end";
	for (k = 0; k < i; k++)
		if (overlap(r[k].gpa, r[k].size, f[0], f[1]) ||
		    overlap(r[k].uva, r[k].size, f[2], f[1]))
			return "memory regions that overlap";
	/* only the region is mapped, from the page its offset is in */
	start = f[3] & ~(page - 1);
	if (end - start > (uint64_t)SIZE_MAX)
		return "memory region larger than the switch can map";
	r[i].maplen = end - start;
	*pstart = start;
	*off = f[3];
	return NULL;
}

/*
 * Would @bytes of mappings for @v (instead of what it has now) stay
 * within the caps?  NULL if so, else which one it passes
 */
static const char *mem_capped(struct vs_vhost *v, const struct vs_vh_mem *mem,
			      uint64_t bytes)
{
	if (!mem)
		return NULL;
	if (bytes > mem->max)
		return "guest memory beyond --vhost-mem-max";
	if (bytes > mem->all_max || *mem->all - v->st.mapped > mem->all_max - bytes)
		return "guest memory beyond --vhost-mem-total (all frontends together)";
	return NULL;
}

/* The region table of a SET_MEM_TABLE, checked and mapped, or why not */
static const char *map_regions(struct vs_vhost *v, const struct vs_vh_env *env,
			       const uint8_t *pl, unsigned int size,
			       struct vs_vh_region *r, unsigned int *nr)
{
	uint64_t total = 0, start[VS_VH_REGIONS], off[VS_VH_REGIONS];
	unsigned int n, i;
	const char *why;
	uint32_t n32;

	if (size < 8)
		return "memory table too short";
	memcpy(&n32, pl, 4);
	n = n32;
	if (!n || n > VS_VH_REGIONS)
		return "memory table with no regions or more than 8";
	if (size < 8 + n * 32)
		return "memory table shorter than its regions";
	if (v->nmsgfd != n)
		return "memory table without one descriptor a region";
	/* everything checked, the caps too, before anything is mapped */
	for (i = 0; i < n; i++) {
		uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
		struct stat st;

		why = fd_is_memory(v->msgfd[i]);
		if (why)
			return why;
		if (fstat(v->msgfd[i], &st) < 0)
			return "memory the switch cannot look at";
		/* a hugetlbfs file's block is its huge page */
		if (st.st_blksize > 0 && (uint64_t)st.st_blksize > page &&
		    !(st.st_blksize & (st.st_blksize - 1)))
			page = st.st_blksize;
		why = region_of(pl, i, page, r, &start[i], &off[i]);
		if (why)
			return why;
		if ((uint64_t)st.st_size < start[i] + r[i].maplen)
			return "memory region past the end of its file";
		total += r[i].maplen;
	}
	why = mem_capped(v, env->mem, total);
	if (why) {
		(*env->mem->refused)++;
		return why;
	}
	for (i = 0; i < n; i++) {
		void *m;

		m = mmap(NULL, r[i].maplen, PROT_READ | PROT_WRITE, MAP_SHARED,
			 v->msgfd[i], (off_t)start[i]);
		if (m == MAP_FAILED)
			return "memory region the switch cannot map";
		r[i].map = m;
		r[i].host = (uint8_t *)m + (off[i] - start[i]);
		*nr = i + 1;
	}
	return NULL;
}

/* ---- rings --------------------------------------------------------------- */

static void vq_stop(struct vs_vq *vq)
{
	vq->started = false;
	vq->desc = NULL;
	vq->avail = NULL;
	vq->used = NULL;
}

/* The ring's three parts in the switch's memory, or why not */
static const char *vq_map(struct vs_vhost *v, struct vs_vq *vq)
{
	uint64_t n = vq->num;

	vq->desc = xlate_uva(v, vq->desc_uva, 16 * n);
	/* flags, idx, the ring, used_event */
	vq->avail = xlate_uva(v, vq->avail_uva, 4 + 2 * n + 2);
	/* flags, idx, the ring, avail_event */
	vq->used = xlate_uva(v, vq->used_uva, 4 + 8 * n + 2);
	if (!vq->desc || !vq->avail || !vq->used) {
		vq_stop(vq);
		return "ring outside the guest's memory";
	}
	return NULL;
}

/* A queue runs once it has a size, addresses, memory and a kick */
static const char *vq_start(struct vs_vhost *v, struct vs_vq *vq)
{
	const char *why;

	if (!vq->num || !vq->addr_set || !v->nregions)
		return "a kick before the ring's size, addresses and memory";
	why = vq_map(v, vq);
	if (why)
		return why;
	vq->started = true;
	vq->signalled_valid = false;
	/* without protocol features a ring runs as soon as it starts */
	if (!(v->features & 1ull << VHU_F_PROTOCOL_FEATURES))
		vq->enabled = true;
	return NULL;
}

bool vs_vh_ready(const struct vs_vhost *v, unsigned int q)
{
	return v->vq[q].started && v->vq[q].enabled && !v->broken;
}

bool vs_vh_has(const struct vs_vhost *v, unsigned int bit)
{
	return v->features & 1ull << bit;
}

/* ---- replies ------------------------------------------------------------- */

static void reply(struct vs_vhost *v, const void *pl, uint32_t size)
{
	uint8_t out[VHU_HDR_LEN + VHU_PAYLOAD_MAX];
	uint32_t h[3];
	ssize_t r;

	memcpy(h, v->msg, 4);
	h[1] = VHU_FLAG_VERSION | VHU_FLAG_REPLY;
	h[2] = size;
	memcpy(out, h, VHU_HDR_LEN);
	memcpy(out + VHU_HDR_LEN, pl, size);
	/* a frontend that does not take a few bytes of reply is gone */
	r = send(v->fd, out, VHU_HDR_LEN + size, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (r != (ssize_t)(VHU_HDR_LEN + size) && !v->broken)
		v->broken = "the frontend does not read its replies";
}

static void reply_u64(struct vs_vhost *v, uint64_t x)
{
	reply(v, &x, sizeof(x));
}

/* ---- requests ------------------------------------------------------------ */

static struct vs_vq *vq_of(struct vs_vhost *v, uint32_t idx, const char **why)
{
	if (idx >= VS_VH_QUEUES) {
		*why = "a queue this device does not have";
		return NULL;
	}
	return &v->vq[idx];
}

/* A new kick descriptor for queue @q (-1: none); the switch waits on it */
static const char *set_kick(struct vs_vhost *v, const struct vs_vh_env *env,
			    unsigned int q, int fd)
{
	struct vs_vq *vq = &v->vq[q];

	if (vq->kick_fd >= 0) {
		env->kick(env->arg, q, vq->kick_fd, false);
		close_own(&vq->kick_fd);
	}
	vq->kick_fd = fd;
	vq->kick_idle = 0;
	if (fd >= 0 && env->kick(env->arg, q, fd, true) < 0)
		return "a kick descriptor the switch cannot wait on";
	return NULL;
}

/*
 * The call descriptor goes: a socket by the closer (descriptors may wait
 * in it), an eventfd or a pipe here
 */
static void drop_call(struct vs_vq *vq, const struct vs_vh_env *env)
{
	if (vq->call_fd >= 0 && vq->call_sock)
		env->drop_fd(env->arg, vq->call_fd);
	else
		close_own(&vq->call_fd);
	vq->call_fd = -1;
	vq->call_sock = false;
}

static void vq_reset(struct vs_vhost *v, const struct vs_vh_env *env,
		     unsigned int q)
{
	struct vs_vq *vq = &v->vq[q];

	set_kick(v, env, q, -1);
	drop_call(vq, env);
	memset(vq, 0, sizeof(*vq));
	vq->kick_fd = -1;
	vq->call_fd = -1;
}

static const char *set_mem_table(struct vs_vhost *v,
				 const struct vs_vh_env *env,
				 const uint8_t *pl, uint32_t size)
{
	struct vs_vh_region r[VS_VH_REGIONS], old[VS_VH_REGIONS];
	unsigned int nr = 0, nold = v->nregions, q;
	const char *why;

	memset(r, 0, sizeof(r));
	why = map_regions(v, env, pl, size, r, &nr);
	if (why) {
		unmap_all(r, nr);
		return why;
	}
	set_mapped(v, env, mapped_of(r, nr));
	/* shared memory, checked: closing it cannot wait */
	for (q = 0; q < v->nmsgfd; q++)
		close_own(&v->msgfd[q]);
	memcpy(old, v->r, sizeof(old));
	memcpy(v->r, r, sizeof(r));
	v->nregions = nr;
	/* running rings move with the memory they live in */
	for (q = 0; q < VS_VH_QUEUES && !why; q++)
		if (v->vq[q].started)
			why = vq_map(v, &v->vq[q]);
	unmap_all(old, nold);
	return why;
}

static const char *set_vring_fd(struct vs_vhost *v, const struct vs_vh_env *env,
				uint32_t req, const uint8_t *pl, uint32_t size)
{
	enum notifier kind = req == VHU_SET_VRING_KICK ? KICK :
			     req == VHU_SET_VRING_CALL ? CALL : ERR;
	const char *why = NULL;
	bool sock = false;
	struct vs_vq *vq;
	uint64_t u;
	int fd = -1;

	if (size < 8)
		return "ring descriptor message too short";
	memcpy(&u, pl, 8);
	vq = vq_of(v, u & VHU_VRING_IDX_MASK, &why);
	if (!vq)
		return why;
	if (u & VHU_VRING_NOFD) {
		if (v->nmsgfd)
			return "a descriptor with a message that says none";
		/* the switch does not poll rings: it waits for kicks */
		if (req == VHU_SET_VRING_KICK)
			return "a ring without a kick descriptor (polling)";
	} else {
		if (v->nmsgfd != 1)
			return "a ring message without exactly one descriptor";
		why = fd_is_notifier(v->msgfd[0], kind, &sock);
		if (why)
			return why;
		/* SET_VRING_ERR: the switch reports no ring errors (dropped) */
		if (kind == ERR)
			return NULL;
		fd = take_fd(v, 0);
	}
	switch (kind) {
	case KICK:
		why = set_kick(v, env, vq - v->vq, fd);
		return why ? why : vq_start(v, vq);
	case CALL:
		drop_call(vq, env);
		vq->call_fd = fd;
		vq->call_sock = sock;
		return NULL;
	default:
		return NULL;
	}
}

static const char *vring_state(struct vs_vhost *v, const struct vs_vh_env *env,
			       uint32_t req, const uint8_t *pl, uint32_t size)
{
	const char *why = NULL;
	struct vs_vq *vq;
	uint32_t s[2];

	if (size < 8)
		return "ring state message too short";
	memcpy(s, pl, 8);
	vq = vq_of(v, s[0], &why);
	if (!vq)
		return why;
	switch (req) {
	case VHU_SET_VRING_NUM:
		if (vq->started)
			return "a new ring size on a running ring";
		if (!s[1] || s[1] > VS_VH_QSIZE_MAX || (s[1] & (s[1] - 1)))
			return "a ring size that is no power of two up to 32768";
		vq->num = s[1];
		return NULL;
	case VHU_SET_VRING_BASE:
		if (vq->started)
			return "a new ring base on a running ring";
		vq->last_avail = s[1];
		vq->used_idx = s[1];
		return NULL;
	case VHU_GET_VRING_BASE:
		/* the ring stops; its kick descriptor is no longer waited on */
		s[1] = vq->last_avail;
		vq_stop(vq);
		vq->enabled = false;
		set_kick(v, env, s[0], -1);
		reply(v, s, sizeof(s));
		return NULL;
	default:
		/* SET_VRING_ENABLE */
		vq->enabled = s[1] != 0;
		return NULL;
	}
}

static const char *set_vring_addr(struct vs_vhost *v, const uint8_t *pl,
				  uint32_t size)
{
	const char *why = NULL;
	struct vs_vq *vq;
	uint32_t idx;
	uint64_t a[4];

	if (size < 40)
		return "ring address message too short";
	memcpy(&idx, pl, 4);
	memcpy(a, pl + 8, sizeof(a));
	vq = vq_of(v, idx, &why);
	if (!vq)
		return why;
	if (vq->started)
		return "new ring addresses on a running ring";
	/* desc, used, avail: the alignment the virtio split ring asks */
	if ((a[0] & 15) || (a[1] & 3) || (a[2] & 1))
		return "misaligned ring addresses";
	vq->desc_uva = a[0];
	vq->used_uva = a[1];
	vq->avail_uva = a[2];
	vq->addr_set = true;
	return NULL;
}

static const char *get_config(struct vs_vhost *v, const uint8_t *pl,
			      uint32_t size)
{
	uint8_t out[VHU_PAYLOAD_MAX] = { 0 };
	uint32_t c[3];

	if (size < 12)
		return "config message too short";
	memcpy(c, pl, sizeof(c));
	memcpy(out, c, sizeof(c));
	/* a part the space does not have: an empty answer, as the spec says */
	if (c[0] > VS_VH_CONFIG_LEN || c[1] > VS_VH_CONFIG_LEN - c[0] ||
	    size != 12 + c[1]) {
		reply(v, out, 12);
		return NULL;
	}
	memcpy(out + 12, v->config + c[0], c[1]);
	reply(v, out, 12 + c[1]);
	return NULL;
}

/*
 * One whole message: do what it asks.  Returns why the frontend must go,
 * or NULL; *replied says whether it was answered already (REPLY_ACK).
 */
static const char *handle(struct vs_vhost *v, const struct vs_vh_env *env,
			  uint32_t req, const uint8_t *pl, uint32_t size,
			  bool *replied)
{
	uint64_t u;

	*replied = false;
	if (req != VHU_GET_FEATURES && req != VHU_SET_FEATURES &&
	    req != VHU_SET_OWNER && req != VHU_GET_PROTOCOL_FEATURES &&
	    req != VHU_SET_PROTOCOL_FEATURES && !v->owner)
		return "a request before SET_OWNER";
	/* requests that carry descriptors: the rest must carry none */
	if (v->nmsgfd && req != VHU_SET_MEM_TABLE && req != VHU_SET_VRING_KICK &&
	    req != VHU_SET_VRING_CALL && req != VHU_SET_VRING_ERR)
		return "descriptors with a request that takes none";
	switch (req) {
	case VHU_GET_FEATURES:
		reply_u64(v, vs_vh_features);
		*replied = true;
		return NULL;
	case VHU_GET_PROTOCOL_FEATURES:
		reply_u64(v, protocol_features);
		*replied = true;
		return NULL;
	case VHU_GET_QUEUE_NUM:
		reply_u64(v, 1);
		*replied = true;
		return NULL;
	case VHU_SET_FEATURES:
	case VHU_SET_PROTOCOL_FEATURES:
		if (size < 8)
			return "features message too short";
		memcpy(&u, pl, 8);
		if (req == VHU_SET_PROTOCOL_FEATURES) {
			if (u & ~protocol_features)
				return "protocol features the switch did not offer";
			v->protocol = u;
			return NULL;
		}
		if (u & ~vs_vh_features)
			return "features the switch did not offer";
		v->features = u;
		v->features_set = true;
		v->hdr_len = u & (1ull << VN_F_MRG_RXBUF | 1ull << VN_F_VERSION_1) ?
			     12 : 10;
		return NULL;
	case VHU_SET_OWNER:
		v->owner = true;
		return NULL;
	case VHU_RESET_OWNER:
	case VHU_RESET_DEVICE:
		vq_reset(v, env, 0);
		vq_reset(v, env, 1);
		v->features = 0;
		v->features_set = false;
		return NULL;
	case VHU_SET_MEM_TABLE:
		return set_mem_table(v, env, pl, size);
	case VHU_SET_VRING_NUM:
	case VHU_SET_VRING_BASE:
	case VHU_SET_VRING_ENABLE:
		return vring_state(v, env, req, pl, size);
	case VHU_GET_VRING_BASE:
		*replied = true;
		return vring_state(v, env, req, pl, size);
	case VHU_SET_VRING_ADDR:
		return set_vring_addr(v, pl, size);
	case VHU_SET_VRING_KICK:
	case VHU_SET_VRING_CALL:
	case VHU_SET_VRING_ERR:
		return set_vring_fd(v, env, req, pl, size);
	case VHU_GET_CONFIG:
		*replied = true;
		return get_config(v, pl, size);
	case VHU_SET_CONFIG:
		/* nothing in a virtio-net device's space is the guest's to set */
		return NULL;
	default:
		return "a request the switch does not know or did not offer";
	}
}

static void message(struct vs_vhost *v, const struct vs_vh_env *env)
{
	uint32_t h[3];
	const char *why;
	bool replied;

	memcpy(h, v->msg, sizeof(h));
	v->st.msgs++;
	why = handle(v, env, h[0], v->msg + VHU_HDR_LEN, h[2], &replied);
	/* REPLY_ACK: 0 for done, 1 for refused, then the frontend goes */
	if (!replied && (h[1] & VHU_FLAG_NEED_REPLY) &&
	    (v->protocol & 1ull << VHU_PF_REPLY_ACK))
		reply_u64(v, why ? 1 : 0);
	if (why && !v->broken) {
		v->broken = why;
		v->broken_req = h[0];
	}
	drop_msg_fds(v, env);
}

/*
 * Descriptors that came with a piece of the message: the first 8 are the
 * message's, any more go to the closer at once and end the frontend.
 * There is room for all a message can carry (VHU_FDS_ROOM), so the
 * kernel never has to release one itself; if it did (MSG_CTRUNC), that
 * is the end too.
 */
static void collect_fds(struct vs_vhost *v, const struct vs_vh_env *env,
			struct msghdr *mh)
{
	struct cmsghdr *c;

	if (mh->msg_flags & MSG_CTRUNC)
		v->broken = "descriptors the switch had no room for";
	for (c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		unsigned int n, i;
		int fd;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < n; i++) {
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (v->nmsgfd < VHU_FDS_MAX) {
				v->msgfd[v->nmsgfd++] = fd;
			} else {
				env->drop_fd(env->arg, fd);
				v->broken = "more than 8 descriptors with one message";
			}
		}
	}
}

/*
 * The connection is readable: read and act on what came, at most a few
 * messages at a time.  Returns -1 once the frontend must go (v->broken).
 */
int vs_vh_input(struct vs_vhost *v, const struct vs_vh_env *env)
{
	int budget = 32;

	while (!v->broken && budget--) {
		union {
			struct cmsghdr align;
			uint8_t buf[CMSG_SPACE(VHU_FDS_ROOM * sizeof(int))];
		} ctl;
		uint32_t h[3];
		unsigned int need = VHU_HDR_LEN;
		struct iovec iov;
		struct msghdr mh = {
			.msg_iov = &iov,
			.msg_iovlen = 1,
			.msg_control = ctl.buf,
			.msg_controllen = sizeof(ctl.buf),
		};
		ssize_t r;

		if (v->msglen >= VHU_HDR_LEN) {
			memcpy(h, v->msg, sizeof(h));
			need += h[2];
		}
		iov.iov_base = v->msg + v->msglen;
		iov.iov_len = need - v->msglen;
		r = recvmsg(v->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (r > 0 || (r == 0 && mh.msg_controllen))
			collect_fds(v, env, &mh);
		if (r == 0) {
			v->broken = v->msglen ? "closed in the middle of a message" :
				    "closed";
			break;
		}
		if (r < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return 0;
			v->broken = "connection error";
			break;
		}
		v->msglen += r;
		if (v->msglen == VHU_HDR_LEN) {
			memcpy(h, v->msg, sizeof(h));
			if ((h[1] & 3) != VHU_FLAG_VERSION)
				v->broken = "a message of another protocol version";
			else if (h[2] > VHU_PAYLOAD_MAX)
				v->broken = "a message longer than any request";
			if (v->broken || h[2])
				continue;
		} else if (v->msglen < need) {
			continue;
		}
		message(v, env);
		v->msglen = 0;
	}
	if (v->broken)
		drop_msg_fds(v, env);
	return v->broken ? -1 : 0;
}

void vs_vh_init(struct vs_vhost *v, int fd)
{
	unsigned int q;

	memset(v, 0, sizeof(*v));
	v->fd = fd;
	v->hdr_len = 10;
	for (q = 0; q < VS_VH_QUEUES; q++) {
		v->vq[q].kick_fd = -1;
		v->vq[q].call_fd = -1;
	}
	/* no MAC of its own (VIRTIO_NET_F_MAC is not offered); link up */
	v->config[6] = VN_S_LINK_UP;
	v->config[8] = 1;		/* one queue pair */
	track(v, true);
}

/* Everything the frontend handed over goes; the connection is the caller's */
void vs_vh_fini(struct vs_vhost *v, const struct vs_vh_env *env)
{
	unsigned int q;

	drop_msg_fds(v, env);
	for (q = 0; q < VS_VH_QUEUES; q++)
		vq_reset(v, env, q);
	unmap_all(v->r, v->nregions);
	v->nregions = 0;
	set_mapped(v, env, 0);
	track(v, false);
}
