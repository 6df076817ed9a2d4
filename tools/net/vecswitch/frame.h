/* SPDX-License-Identifier: GPL-2.0 */
/*
 * frame.h - a frame's way through the switch: its buffer and the port
 * queues that hold it (buf.c), segmentation (gso.c), the forwarding
 * decision (forward.c) and the forwarding table (fdb.c).
 * Included by vecswitch.h, after its constants and configuration; not
 * on its own.
 */
#ifndef VECSWITCH_FRAME_H
#define VECSWITCH_FRAME_H

struct vs_port;
struct vs_sw_stats;

/* ---- frames and queues ------------------------------------------------ */

/* What a --vnet port's header says, and where the frame's headers are */
struct vs_gso {
	uint8_t flags;			/* VIRTIO_NET_HDR_F_* */
	uint8_t type;			/* VIRTIO_NET_HDR_GSO_*, ECN bit off */
	bool tcp;
	bool v6;
	uint16_t gso_size;
	uint16_t csum_start;
	uint16_t csum_offset;
	uint16_t l3;			/* offsets, for super-frames only */
	uint16_t l4;
	uint16_t hlen;
};

/*
 * One received frame, shared by every port it is queued on (a flood queues
 * the same buffer N times). hdr holds the stream framing so that a stream
 * port can write header and frame with one writev; vnet the virtio-net
 * header a --vnet port gets (all zero for frames from other ports). A
 * frame that still needs its checksum or cutting into segments gets its
 * plain form made once, the first time a port without headers wants it:
 * seg, a list through next, holding a reference on each.
 */
struct vs_buf {
	unsigned int refcnt;
	unsigned int len;
	bool ctl;			/* a negotiation message, not a frame */
	uint8_t hdr[4];
	uint8_t vnet[VS_VNET_HDR_LEN];
	struct vs_gso gso;
	struct vs_buf *seg;
	struct vs_buf *next;
	unsigned int nseg;
	unsigned int seg_size;		/* the payload size seg was cut at */
	uint8_t data[];
};

/*
 * A port's frames, in order; to[] says which of a multiqueue guest's
 * sockets each one goes to (0: its main one, k: its queue socket k).
 */
struct vs_queue {
	struct vs_buf **slot;
	uint8_t *to;
	unsigned int cap;
	unsigned int head;
	unsigned int count;
};

/* ---- forwarding table ---------------------------------------------------- */

struct vs_fdb_entry {
	uint8_t mac[6];
	uint16_t vlan;
	struct vs_port *port;
	uint64_t seen_ms;
	int next;			/* chain / free list index, -1 ends */
	bool used;
};

struct vs_fdb {
	struct vs_fdb_entry *ent;
	int *bucket;
	unsigned int nbuckets;		/* power of two */
	unsigned int max;
	unsigned int count;
	int free_head;
	uint64_t moved_log_ms;		/* last "possible duplicate" message */
};

/* buf.c */
struct vs_buf *vs_buf_alloc(unsigned int len);
void vs_buf_set_limit(size_t bytes);
void vs_buf_account(struct vs_sw_stats *st);
struct vs_buf *vs_buf_new(const void *data, unsigned int len,
			  const uint8_t *vnet, const struct vs_gso *gso);
void vs_buf_drop_segs(struct vs_buf *b);
void vs_buf_put(struct vs_buf *b);
bool vs_queue_push(struct vs_port *p, struct vs_buf *b);
bool vs_queue_push_to(struct vs_port *p, struct vs_buf *b, unsigned int to);
bool vs_queue_msg(struct vs_switch *sw, struct vs_port *p,
		  const struct vecnet_msg *m, unsigned int to);
unsigned int vs_queue_to(const struct vs_port *p, unsigned int i);
void vs_queue_drop_to(struct vs_port *p, unsigned int k);
struct vs_buf *vs_queue_peek(const struct vs_port *p, unsigned int i);
void vs_queue_pop(struct vs_port *p);
void vs_queue_drain(struct vs_port *p);
void vs_port_sent(struct vs_port *p);
void vs_port_count_tx(struct vs_port *p, unsigned int len, unsigned int to);

/* forward.c */
void vs_forward(struct vs_switch *sw, struct vs_port *in,
		const uint8_t *frame, unsigned int len);
void vs_forward_vnet(struct vs_switch *sw, struct vs_port *in,
		     unsigned int k, const uint8_t *hdr, unsigned int len);
/* what vs_forward_decide() found: the one port of a unicast, or a flood */
struct vs_fwd {
	struct vs_port *out;		/* NULL: every port the frame may reach */
	uint16_t vlan;
	bool learned;			/* the source is on the ingress port now */
	uint8_t dst[6];
	uint8_t src[6];
};
/* a frame's first bytes: every header vs_forward_decide and gso.c read */
#define VS_FWD_HEAD_LEN		128
bool vs_forward_decide(struct vs_switch *sw, struct vs_port *in,
		       unsigned int k, const uint8_t *frame, unsigned int len,
		       const struct vs_gso *gso, struct vs_fwd *f);
void vs_forward_deliver(struct vs_switch *sw, struct vs_port *in,
			const struct vs_fwd *f, struct vs_buf *b);
bool vs_forward_direct_ok(const struct vs_port *out, const struct vs_gso *gso);

/* gso.c */
int vs_vnet_parse(const uint8_t *hdr, const uint8_t *frame, unsigned int len,
		  unsigned int max_frame, struct vs_gso *g);
bool vs_buf_needs_plain(const struct vs_buf *b);
int vs_buf_plain(struct vs_switch *sw, struct vs_buf *b, unsigned int size);
unsigned int vs_gso_fit(const struct vs_buf *b, unsigned int room);

/* fdb.c */
int vs_fdb_init(struct vs_fdb *fdb, unsigned int max);
void vs_fdb_fini(struct vs_fdb *fdb);
struct vs_port *vs_fdb_lookup(struct vs_switch *sw, const uint8_t *mac,
			      uint16_t vlan);
bool vs_fdb_learn(struct vs_switch *sw, struct vs_port *p,
		  const uint8_t *mac, uint16_t vlan);
void vs_fdb_flush_port(struct vs_switch *sw, struct vs_port *p);
void vs_fdb_sweep(struct vs_switch *sw);
struct vs_port *vs_fdb_owner(struct vs_switch *sw, const uint8_t *mac);

/* @m as the reports and the log write it, into @out: 18 bytes */
static inline void vs_mac_str(char *out, const uint8_t *m)
{
	static const char hex[] = "0123456789abcdef";
	unsigned int i;

	for (i = 0; i < 6; i++) {
		out[3 * i] = hex[m[i] >> 4];
		out[3 * i + 1] = hex[m[i] & 15];
		out[3 * i + 2] = i < 5 ? ':' : '\0';
	}
}

#endif /* VECSWITCH_FRAME_H */
