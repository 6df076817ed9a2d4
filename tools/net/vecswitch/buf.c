// SPDX-License-Identifier: GPL-2.0
/*
 * buf.c - frame buffers and the bounded per-port queues: a received frame
 * is stored once, in a reference-counted buffer that every port it is
 * queued on shares, and the memory of all of them is held to --max-memory.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "vecswitch.h"

/*
 * Frame memory of the whole switch, against --max-memory: each port's
 * queue is bounded, but 256 queues of 1024 super-frames would be 16 GiB.
 */
static size_t buf_bytes, buf_limit = SIZE_MAX;
static uint64_t buf_refused;

void vs_buf_set_limit(size_t bytes)
{
	buf_limit = bytes;
}

void vs_buf_account(struct vs_sw_stats *st)
{
	st->mem_bytes = buf_bytes;
	st->mem_refused = buf_refused;
}

struct vs_buf *vs_buf_alloc(unsigned int len)
{
	struct vs_buf *b;

	if (len > buf_limit - buf_bytes) {
		buf_refused++;
		return NULL;
	}
	b = malloc(sizeof(*b) + len);
	if (!b)
		return NULL;
	buf_bytes += len;
	memset(b, 0, sizeof(*b));
	b->refcnt = 1;
	b->len = len;
	b->hdr[0] = len >> 24;
	b->hdr[1] = len >> 16;
	b->hdr[2] = len >> 8;
	b->hdr[3] = len;
	return b;
}

/* A frame, and for one from a --vnet port its header and what it says */
struct vs_buf *vs_buf_new(const void *data, unsigned int len,
			  const uint8_t *vnet, const struct vs_gso *gso)
{
	struct vs_buf *b = vs_buf_alloc(len);

	if (!b)
		return NULL;
	if (vnet) {
		memcpy(b->vnet, vnet, sizeof(b->vnet));
		b->gso = *gso;
	}
	memcpy(b->data, data, len);
	return b;
}

void vs_buf_drop_segs(struct vs_buf *b)
{
	struct vs_buf *s, *next;

	for (s = b->seg; s; s = next) {
		next = s->next;
		vs_buf_put(s);
	}
	b->seg = NULL;
	b->nseg = 0;
}

void vs_buf_put(struct vs_buf *b)
{
	if (--b->refcnt)
		return;
	vs_buf_drop_segs(b);
	buf_bytes -= b->len;
	free(b);
}

/* Queue @b for @p's socket @to (0 for every port but a multiqueue guest) */
bool vs_queue_push_to(struct vs_port *p, struct vs_buf *b, unsigned int to)
{
	struct vs_queue *q = &p->txq;
	unsigned int i;

	if (q->count >= q->cap) {
		p->st.tx_queue_full++;
		return false;
	}
	i = (q->head + q->count) % q->cap;
	q->slot[i] = b;
	q->to[i] = to;
	q->count++;
	b->refcnt++;
	return true;
}

bool vs_queue_push(struct vs_port *p, struct vs_buf *b)
{
	return vs_queue_push_to(p, b, 0);
}

/*
 * Queue control message @m for @p's socket @to: sent as it is, never
 * behind a header, and counted as every frame meant for a port is
 * (tx_wanted, then sent, tx_queue_full or tx_errors).  False if it was
 * not queued.
 */
bool vs_queue_msg(struct vs_switch *sw, struct vs_port *p,
		  const struct vecnet_msg *m, unsigned int to)
{
	struct vs_buf *b;
	bool ok;

	sw->st.tx_wanted++;
	if (p->txq.count >= p->txq.cap) {
		p->st.tx_queue_full++;
		return false;
	}
	b = vs_buf_alloc(sizeof(*m));
	if (!b) {
		p->st.tx_errors++;
		return false;
	}
	memcpy(b->data, m, sizeof(*m));
	b->ctl = true;
	ok = vs_queue_push_to(p, b, to);
	vs_buf_put(b);
	return ok;
}

struct vs_buf *vs_queue_peek(const struct vs_port *p, unsigned int i)
{
	const struct vs_queue *q = &p->txq;

	return q->slot[(q->head + i) % q->cap];
}

/* The socket entry @i of @p's queue goes to */
unsigned int vs_queue_to(const struct vs_port *p, unsigned int i)
{
	const struct vs_queue *q = &p->txq;

	return q->to[(q->head + i) % q->cap];
}

void vs_queue_pop(struct vs_port *p)
{
	struct vs_queue *q = &p->txq;

	vs_buf_put(q->slot[q->head]);
	q->slot[q->head] = NULL;
	q->to[q->head] = 0;
	if (p->nego.tx_plain)
		p->nego.tx_plain--;
	q->head = (q->head + 1) % q->cap;
	q->count--;
}

/*
 * Socket @k of @p has gone: what was queued for it is dropped (tx_errors)
 * and the entries of the sockets after it follow them down by one, the
 * order of the rest kept.
 */
void vs_queue_drop_to(struct vs_port *p, unsigned int k)
{
	struct vs_queue *q = &p->txq;
	unsigned int i, n = 0, plain = p->nego.tx_plain;

	for (i = 0; i < q->count; i++) {
		unsigned int from = (q->head + i) % q->cap;
		unsigned int at = (q->head + n) % q->cap;
		unsigned int to = q->to[from];

		if (to == k) {
			p->st.tx_errors++;
			vs_buf_put(q->slot[from]);
			if (i < plain && p->nego.tx_plain)
				p->nego.tx_plain--;
			continue;
		}
		q->slot[at] = q->slot[from];
		q->to[at] = to > k ? to - 1 : to;
		n++;
	}
	for (i = n; i < q->count; i++) {
		q->slot[(q->head + i) % q->cap] = NULL;
		q->to[(q->head + i) % q->cap] = 0;
	}
	q->count = n;
}

/* A frame of @len bytes sent on @p's socket @to */
void vs_port_count_tx(struct vs_port *p, unsigned int len, unsigned int to)
{
	struct vs_queue_stats *qs = &p->qst[to];

	p->st.tx_frames++;
	p->st.tx_bytes += len;
	qs->tx_packets++;
	qs->tx_bytes += len;
	p->dgram.unanswered += len;
}

/* The head frame went out: count it and drop it from the queue. */
void vs_port_sent(struct vs_port *p)
{
	vs_port_count_tx(p, vs_queue_peek(p, 0)->len, vs_queue_to(p, 0));
	vs_queue_pop(p);
}

void vs_queue_drain(struct vs_port *p)
{
	while (p->txq.count)
		vs_queue_pop(p);
	p->stream.tx_off = 0;
}
