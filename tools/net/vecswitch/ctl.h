/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ctl.h - the control socket: its connections and captures (ctl.c,
 * capture.c), the NAT process it talks to (nat.c) and the client side,
 * `vecswitch ctl` (ctl_client.c).
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
	struct vs_capture *cap;		/* a capture it streams (capture.c) */
};

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

#define VS_CTL_MAX_CONN		8
/* a control request and its answer, each way, client and switch */
#define VS_CTL_TIMEOUT_MS	5000

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

/* nat.c */
int vs_nat_start(struct vs_switch *sw);
void vs_nat_tick(struct vs_switch *sw);
void vs_nat_stop(struct vs_switch *sw);
char *vs_nat_forward(struct vs_switch *sw, const char *args);
char *vs_nat_guests(struct vs_switch *sw, bool json);
void vs_nat_port(struct vs_switch *sw, struct vs_port *p);

/* ctl_client.c */
int vs_ctl_client(int argc, char **argv);

#endif /* VECSWITCH_CTL_H */
