/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ctl.h - the control socket: its connections, captures and event
 * streams (ctl.c, capture.c, events.c), the NAT process it talks to
 * (nat.c) and the client side, `vecswitch ctl` (ctl_client.c).
 * Included by vecswitch.h, after its constants and configuration; not
 * on its own.
 */
#ifndef VECSWITCH_CTL_H
#define VECSWITCH_CTL_H

/* ---- control connections ----------------------------------------------- */

struct vs_ctl_conn {
	int fd;
	char req[512];
	size_t reqlen;
	char *out;
	size_t outlen;
	size_t outoff;
	uint64_t deadline_ms;
	uint64_t serial;		/* which client this is, never reused */
	bool want_out;			/* EPOLLOUT armed: the client is behind */
	bool nat_wait;			/* its answer is the NAT process's (nat.c) */
	struct vs_capture *cap;		/* a capture it streams (capture.c) */
	struct {			/* an event stream (events.c) */
		bool on;
		bool json;
		uint64_t lost;		/* events not written since the last said */
	} ev;
};

/*
 * Room for @n more bytes in the output of a streaming connection @c
 * (a capture or events), whose buffer holds @room: what the client read
 * is dropped from the front first.  False if the client is too far behind.
 */
static inline bool vs_ctl_room(struct vs_ctl_conn *c, size_t n, size_t room)
{
	if (c->outlen + n > room && c->outoff) {
		memmove(c->out, c->out + c->outoff, c->outlen - c->outoff);
		c->outlen -= c->outoff;
		c->outoff = 0;
	}
	return c->outlen + n <= room;
}

/*
 * ctl capture: the switch answers "capture\n", then a stream of records,
 * each this header and len bytes: a frame (its first bytes, up to the
 * snap length), a note for the user (text), and last the end (two
 * uint64_t: frames captured, frames lost because the reader was behind).
 * Native byte order: the client runs on the switch's host.
 */
enum vs_cap_type {
	VS_CAP_FRAME = 1,
	VS_CAP_NOTE,
	VS_CAP_END,
};

struct vs_cap_rec {
	uint16_t type;			/* enum vs_cap_type */
	uint16_t pad;
	uint32_t port;			/* FRAME: the port it came in by */
	uint32_t len;			/* bytes after this header */
	uint32_t origlen;		/* FRAME: its whole length */
	uint64_t ts_ns;			/* FRAME: CLOCK_REALTIME, forwarded at */
};

#define VS_CAP_MAX		4	/* captures at once */
#define VS_CAP_FILTERS		8	/* ports, and addresses, a capture names */
#define VS_CAP_BUF		(4u << 20) /* what its reader may be behind */
#define VS_CAP_SNAP_MAX		262144

#define VS_EV_MAX		4	/* events clients at once */
#define VS_EV_BUF		(256u << 10) /* what an events reader may be behind */

/* room for every capture and events client, and 4 one-shot requests */
#define VS_CTL_MAX_CONN		(VS_CAP_MAX + VS_EV_MAX + 4)
/* a control request and its answer, each way, client and switch */
#define VS_CTL_TIMEOUT_MS	5000

/* report.c */
ssize_t vs_report(struct vs_switch *sw, const char *cmd, bool json, char **out);

/* ctl.c */
void vs_ctl_accept(struct vs_switch *sw);
void vs_ctl_event(struct vs_switch *sw, unsigned int idx, uint32_t events);
void vs_ctl_expire(struct vs_switch *sw);
void vs_ctl_close_all(struct vs_switch *sw);
bool vs_ctl_req_done(const struct vs_ctl_conn *c);
void vs_ctl_flush(struct vs_switch *sw);
void vs_ctl_answer(struct vs_switch *sw, struct vs_ctl_conn *c);

/* capture.c */
const char *vs_capture_start(struct vs_switch *sw, struct vs_ctl_conn *c,
			     char *args);
void vs_capture_frame(struct vs_switch *sw, const struct vs_port *in,
		      const struct vs_port *out, const uint8_t *frame,
		      unsigned int len);
void vs_capture_end(struct vs_switch *sw, struct vs_ctl_conn *c);
void vs_capture_free(struct vs_switch *sw, struct vs_ctl_conn *c);
bool vs_capture_done(const struct vs_ctl_conn *c);

/* events.c */
const char *vs_events_start(struct vs_switch *sw, struct vs_ctl_conn *c,
			    const char *args);
void vs_events_free(struct vs_switch *sw, struct vs_ctl_conn *c);
void vs_ev_port(struct vs_switch *sw, const struct vs_port *p,
		const char *why);
void vs_ev_fdb(struct vs_switch *sw, const uint8_t *mac, uint16_t vlan,
	       const struct vs_port *from, const struct vs_port *to);
void vs_ev_chan(struct vs_switch *sw, bool open, const struct vs_port *a,
		const uint8_t *ma, const struct vs_port *b, const uint8_t *mb,
		unsigned int queues);
void vs_ev_capture(struct vs_switch *sw, unsigned int id, bool start,
		   uint64_t captured, uint64_t lost);

/* nat.c */
int vs_nat_start(struct vs_switch *sw);
void vs_nat_tick(struct vs_switch *sw);
void vs_nat_stop(struct vs_switch *sw);
void vs_nat_input(struct vs_switch *sw);
char *vs_nat_forward(struct vs_switch *sw, struct vs_ctl_conn *c,
		     const char *args);
char *vs_nat_guests(struct vs_switch *sw, struct vs_ctl_conn *c, bool json);
bool vs_nat_name(struct vs_switch *sw, pid_t pid, char *name);

/* ctl_client.c */
int vs_ctl_client(int argc, char **argv);

#endif /* VECSWITCH_CTL_H */
