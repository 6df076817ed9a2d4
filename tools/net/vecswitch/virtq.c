// SPDX-License-Identifier: GPL-2.0
/*
 * virtq.c - a frontend's split virtqueues (virtio 1.x, "Split
 * Virtqueues"): chains taken off the available ring and mapped, frames
 * copied into receive buffers, used entries put back, and when to tell
 * the guest (EVENT_IDX, or its no-interrupt flag) and to be told by it.
 *
 * The guest writes its rings while the switch reads them.  Each field is
 * read once, into a local, and checked there: an index past the table, a
 * chain longer than its table (a loop), a buffer outside the regions, a
 * table inside a table, a buffer of the wrong direction, an available
 * index further ahead than the ring is long.  Any of them breaks the
 * device (v->broken) and its port goes; nothing is read past a check.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "vhost.h"

static uint16_t load16(const volatile uint16_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static int broke(struct vs_vhost *v, const char *why)
{
	if (!v->broken)
		v->broken = why;
	return -1;
}

/* avail->ring[num] and used->ring[num]: the EVENT_IDX words */
static volatile uint16_t *used_event(const struct vs_vq *vq)
{
	return &vq->avail->ring[vq->num];
}

static volatile uint16_t *avail_event(const struct vs_vq *vq)
{
	return (volatile uint16_t *)&vq->used->ring[vq->num];
}

/* @len bytes at guest address @gpa, as iovecs in @f (regions may split it) */
static int map_buf(struct vs_vhost *v, uint64_t gpa, uint32_t len,
		   struct vs_vh_frame *f)
{
	if (gpa + len < gpa)
		return broke(v, "a buffer past the end of the address space");
	while (len) {
		const struct vs_vh_region *r = NULL;
		uint64_t off = 0, chunk;
		unsigned int i;

		for (i = 0; i < v->nregions; i++) {
			off = gpa - v->r[i].gpa;
			if (gpa >= v->r[i].gpa && off < v->r[i].size) {
				r = &v->r[i];
				break;
			}
		}
		if (!r)
			return broke(v, "a buffer outside the guest's memory");
		if (f->niov == VS_VH_IOV_MAX)
			return broke(v, "a frame in more than 1024 buffers");
		chunk = r->size - off < len ? r->size - off : len;
		f->iov[f->niov].iov_base = r->host + off;
		f->iov[f->niov].iov_len = chunk;
		f->niov++;
		gpa += chunk;
		len -= chunk;
	}
	return 0;
}

/*
 * The chain at @head, mapped into @f; @writable: a receive buffer.
 * Every descriptor read takes one from *@budget, the frame's: a chain of
 * empty descriptors costs as much as one of full ones.
 */
static int walk(struct vs_vhost *v, struct vs_vq *vq, uint16_t head,
		struct vs_vh_frame *f, bool writable, unsigned int *budget)
{
	const volatile struct vring_desc *table = vq->desc;
	unsigned int size = vq->num, i = head, steps = 0;
	bool indirect = false;
	uint64_t total = 0;

	f->niov = 0;
	f->head = head;
	for (;;) {
		uint64_t addr;
		uint32_t len;
		uint16_t flags, next;

		if (i >= size)
			return broke(v, "a descriptor index past its table");
		if (++steps > size)
			return broke(v, "a descriptor chain longer than its table (a loop)");
		if (!*budget)
			return broke(v, "a frame in more than 1024 descriptors");
		(*budget)--;
		addr = table[i].addr;
		len = table[i].len;
		flags = table[i].flags;
		next = table[i].next;
		if (flags & VRING_DESC_F_INDIRECT) {
			if (!vs_vh_has(v, VN_F_RING_INDIRECT))
				return broke(v, "an indirect descriptor, not negotiated");
			if (indirect || steps > 1 || (flags & VRING_DESC_F_NEXT))
				return broke(v, "an indirect descriptor inside a chain or table");
			/* a chain, tables included, is no longer than the queue */
			if (!len || len % 16 || len / 16 > vq->num)
				return broke(v, "an indirect table of a bad length");
			table = vs_vh_xlate(v, addr, len);
			if (!table)
				return broke(v, "an indirect table outside the guest's memory");
			size = len / 16;
			i = 0;
			steps = 0;
			indirect = true;
			continue;
		}
		if (!!(flags & VRING_DESC_F_WRITE) != writable)
			return broke(v, writable ?
				     "a read-only buffer in the receive queue" :
				     "a device-writable buffer in the transmit queue");
		if (map_buf(v, addr, len, f) < 0)
			return -1;
		total += len;
		if (!(flags & VRING_DESC_F_NEXT))
			break;
		i = next;
	}
	/* room for nothing: it could only be taken and put back, for ever */
	if (writable && !total)
		return broke(v, "a receive buffer of no length");
	f->len = total > UINT32_MAX ? UINT32_MAX : total;
	return 0;
}

/*
 * The next chain of queue @q, mapped: 1, or 0 when there is none (or the
 * queue does not run), -1 when the guest broke the ring.  A transmit
 * queue that was started but is disabled is still emptied (its frames
 * are dropped by the caller), as the protocol asks; a receive queue is
 * not filled then.  *@budget: descriptors the frame may still take
 * (VS_VH_DESC_BUDGET for a frame in one chain).
 */
int vs_vq_pop(struct vs_vhost *v, unsigned int q, struct vs_vh_frame *f,
	      bool writable, unsigned int *budget)
{
	struct vs_vq *vq = &v->vq[q];
	uint16_t avail, head;

	if (!vq->started || v->broken || (writable && !vq->enabled))
		return 0;
	avail = load16(&vq->avail->idx);
	if ((uint16_t)(avail - vq->last_avail) > vq->num)
		return broke(v, "an available index further ahead than the ring");
	if (avail == vq->last_avail)
		return 0;
	head = vq->avail->ring[vq->last_avail & (vq->num - 1)];
	if (walk(v, vq, head, f, writable, budget) < 0)
		return -1;
	vq->last_avail++;
	return 1;
}

/* Give back the last @n chains taken, unused */
static void vs_vq_unpop(struct vs_vhost *v, unsigned int q, unsigned int n)
{
	v->vq[q].last_avail -= n;
}

/* Chain @head is done with, @len bytes written into it; seen at notify */
void vs_vq_push(struct vs_vhost *v, unsigned int q, uint16_t head,
		uint32_t len)
{
	struct vs_vq *vq = &v->vq[q];
	volatile struct vring_used_elem *e;

	e = &vq->used->ring[vq->used_idx & (vq->num - 1)];
	e->id = head;
	e->len = len;
	vq->used_idx++;
}

/* virtio's rule: has the used index passed @event since @old? */
static bool need_event(uint16_t event, uint16_t now, uint16_t old)
{
	return (uint16_t)(now - event - 1) < (uint16_t)(now - old);
}

/* Publish the used entries, and tell the guest if it wants to know */
void vs_vq_notify(struct vs_vhost *v, unsigned int q)
{
	struct vs_vq *vq = &v->vq[q];
	uint64_t one = 1;
	uint16_t old;
	bool valid;

	if (!vq->started || (vq->signalled_valid &&
			     vq->signalled == vq->used_idx))
		return;
	__atomic_store_n(&vq->used->idx, vq->used_idx, __ATOMIC_RELEASE);
	/* the guest's flags and used_event after the index it will read */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	old = vq->signalled;
	valid = vq->signalled_valid;
	vq->signalled = vq->used_idx;
	vq->signalled_valid = true;
	if (vs_vh_has(v, VN_F_RING_EVENT_IDX)) {
		if (valid && !need_event(load16(used_event(vq)), vq->used_idx,
					 old))
			return;
	} else if (load16(&vq->avail->flags) & VRING_AVAIL_F_NO_INTERRUPT) {
		return;
	}
	if (vq->call_fd < 0)
		return;
	/* an eventfd at its limit or a full pipe: the guest has a call due */
	if (write(vq->call_fd, &one, sizeof(one)) == sizeof(one))
		v->st.calls++;
}

/*
 * Ask the guest for a kick once it adds to queue @q, then look again:
 * true if there is something no kick will come for.  @rx: the receive
 * queue, where chains the switch left (too few for a frame) do not count.
 */
bool vs_vq_rearm(struct vs_vhost *v, unsigned int q, bool rx)
{
	struct vs_vq *vq = &v->vq[q];
	uint16_t a;

	if (!vq->started || v->broken)
		return false;
	a = load16(&vq->avail->idx);
	if (vs_vh_has(v, VN_F_RING_EVENT_IDX))
		__atomic_store_n(avail_event(vq), a, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (rx)
		return load16(&vq->avail->idx) != a;
	return load16(&vq->avail->idx) != vq->last_avail;
}

/*
 * A kick descriptor that woke the loop this many times in a row with
 * nothing to read is always ready: it would keep the loop spinning
 */
#define KICK_IDLE_MAX	8

/*
 * Empty queue @q's kick descriptor, which the loop found ready; true if
 * the guest had kicked
 */
bool vs_vq_drain_kick(struct vs_vhost *v, unsigned int q)
{
	struct vs_vq *vq = &v->vq[q];
	uint8_t buf[64];
	bool kicked = false;
	int i;

	if (vq->kick_fd < 0)
		return false;
	/*
	 * An eventfd gives its count at once, in 8 bytes (the switch takes
	 * none in semaphore mode, see fd_is_notifier); a pipe holds up to
	 * 64 KiB.  A read shorter than the buffer emptied it: no second one
	 * to hear EAGAIN (a system call a kick).  A kick that comes after
	 * it leaves the descriptor ready for the next turn.
	 */
	for (i = 0; i < 16; i++) {
		ssize_t r = read(vq->kick_fd, buf, sizeof(buf));

		/*
		 * the other end closed: the descriptor would wake the loop
		 * for ever, and no kick can come by it any more
		 */
		if (!r)
			broke(v, "its kick descriptor's other end was closed");
		if (r < 0 && errno != EAGAIN && errno != EINTR)
			broke(v, "its kick descriptor fails to read");
		if (r <= 0)
			break;
		kicked = true;
		if ((size_t)r < sizeof(buf))
			break;
	}
	if (kicked) {
		v->st.kicks++;
		vq->kick_idle = 0;
	} else if (++vq->kick_idle >= KICK_IDLE_MAX) {
		broke(v, "its kick descriptor is always ready with nothing to read");
	}
	return kicked;
}

/* Copy @len bytes from @src into the buffers of @f, from the start */
static unsigned int copy_in(const struct vs_vh_frame *f,
			    const struct iovec *src, unsigned int nsrc,
			    unsigned int *si, size_t *soff, unsigned int len)
{
	unsigned int d = 0, done = 0;
	size_t doff = 0;

	while (done < len && d < f->niov && *si < nsrc) {
		size_t n = f->iov[d].iov_len - doff;
		size_t s = src[*si].iov_len - *soff;

		if (s < n)
			n = s;
		if (len - done < n)
			n = len - done;
		memcpy((uint8_t *)f->iov[d].iov_base + doff,
		       (const uint8_t *)src[*si].iov_base + *soff, n);
		done += n;
		doff += n;
		*soff += n;
		if (doff == f->iov[d].iov_len) {
			d++;
			doff = 0;
		}
		if (*soff == src[*si].iov_len) {
			(*si)++;
			*soff = 0;
		}
	}
	return done;
}

/*
 * One frame of @len bytes, its virtio-net header first (hdr_len bytes,
 * num_buffers still 0), into the receive queue: one chain, or with
 * MRG_RXBUF as many as it takes.  0; -EAGAIN: the guest has not posted
 * room for it yet (nothing taken); -EMSGSIZE: it never will; -ENOTCONN:
 * the queue does not run; -EIO: the guest broke the ring.  The used
 * entries are published by vs_vq_notify.
 */
int vs_vq_deliver(struct vs_vhost *v, const struct iovec *src,
		  unsigned int nsrc, unsigned int len)
{
	struct { uint16_t head; uint32_t len; } used[VS_VH_IOV_MAX];
	bool mrg = vs_vh_has(v, VN_F_MRG_RXBUF);
	unsigned int nbuf = 0, done = 0, si = 0, i;
	unsigned int budget = VS_VH_DESC_BUDGET;
	struct vs_vh_frame f;
	uint8_t *hdr = NULL;
	size_t soff = 0;
	uint16_t nb;
	int r;

	if (!vs_vh_ready(v, VS_VH_RXQ))
		return -ENOTCONN;
	while (done < len) {
		if (nbuf == VS_VH_IOV_MAX) {
			vs_vq_unpop(v, VS_VH_RXQ, nbuf);
			return -EMSGSIZE;
		}
		r = vs_vq_pop(v, VS_VH_RXQ, &f, true, &budget);
		if (r < 0)
			return -EIO;
		if (!r) {
			vs_vq_unpop(v, VS_VH_RXQ, nbuf);
			v->st.rx_no_room++;
			return -EAGAIN;
		}
		if (!nbuf && (!f.niov || f.iov[0].iov_len < v->hdr_len ||
			      (!mrg && f.len < len))) {
			/* the guest's buffers are too small for this frame */
			vs_vq_unpop(v, VS_VH_RXQ, 1);
			return -EMSGSIZE;
		}
		if (!nbuf)
			hdr = f.iov[0].iov_base;
		used[nbuf].head = f.head;
		used[nbuf].len = copy_in(&f, src, nsrc, &si, &soff, len - done);
		done += used[nbuf].len;
		nbuf++;
	}
	if (v->hdr_len == 12) {
		nb = nbuf;
		memcpy(hdr + 10, &nb, sizeof(nb));
	}
	for (i = 0; i < nbuf; i++)
		vs_vq_push(v, VS_VH_RXQ, used[i].head, used[i].len);
	v->st.rx_bufs += nbuf;
	return 0;
}
