// SPDX-License-Identifier: GPL-2.0
/*
 * capture.c - copies of the frames the switch forwards, for `vecswitch ctl
 * capture` (ctl_client.c writes them as pcap).
 *
 * A capture lives on a control connection: the request names ports and
 * addresses to follow, a frame count and a snap length; the switch then
 * appends a record for each frame it forwards that matches (see struct
 * vs_cap_rec) to the connection's output buffer, which the end of each
 * loop turn sends as far as the socket takes it.  The switch never waits
 * for a reader: a frame that finds the buffer full (VS_CAP_BUF behind) is
 * not captured and is counted as lost, and forwarding goes on as before.
 * Nothing is done for frames while no capture runs but one test of
 * sw->ncap.
 *
 * Unicast between two guests on a shortcut channel never crosses the
 * switch.  While a capture holds a port (names it, or names an address,
 * which may sit behind any port, or names nothing), the port's channels
 * are withdrawn and none is offered to it (chan.c reads chan.cap_hold and
 * cap_all); they come back as before once the capture ends.
 *
 * The capture ends when the client shuts down its side, after count
 * frames, or when the connection goes; an END record with the counts is
 * the last thing the client reads.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vecswitch.h"

struct vs_capture {
	unsigned int port[VS_CAP_FILTERS];
	unsigned int nport;
	uint8_t mac[VS_CAP_FILTERS][6];
	unsigned int nmac;
	uint64_t left;			/* frames still to take, 0: no limit */
	uint32_t snaplen;
	uint64_t captured;
	uint64_t lost;
	bool holds_all;			/* counted in sw->cap_all */
	bool said_gso;			/* the note on super-frames is out */
	bool ended;			/* END queued: close once sent */
};

/* Room the END record needs, kept free by every frame */
#define END_ROOM	(sizeof(struct vs_cap_rec) + 2 * sizeof(uint64_t))

static struct vs_port *port_by_id(struct vs_switch *sw, unsigned int id)
{
	unsigned int i;

	for (i = 0; i < sw->nports; i++)
		if (sw->ports[i] && !sw->ports[i]->dead && sw->ports[i]->id == id)
			return sw->ports[i];
	return NULL;
}

/* Append a record and its payload; false if the reader is too far behind */
static bool put(struct vs_ctl_conn *c, const struct vs_cap_rec *r,
		const void *data, size_t room)
{
	size_t n = sizeof(*r) + r->len;

	if (!vs_ctl_room(c, n, room))
		return false;
	memcpy(c->out + c->outlen, r, sizeof(*r));
	memcpy(c->out + c->outlen + sizeof(*r), data, r->len);
	c->outlen += n;
	return true;
}

static void note(struct vs_ctl_conn *c, const char *text)
{
	struct vs_cap_rec r = { .type = VS_CAP_NOTE, .len = strlen(text) };

	put(c, &r, text, VS_CAP_BUF - END_ROOM);
}

/* Withdraw @p's channels and offer it none while the capture runs */
static void hold(struct vs_switch *sw, struct vs_ctl_conn *c, struct vs_port *p)
{
	char text[VS_NAME_LEN + 96];

	p->chan.cap_hold++;
	if (!p->chan.n)
		return;
	vs_chan_forget(sw, p, NULL);
	snprintf(text, sizeof(text),
		 "port %u (%s): shortcut channels withdrawn while the capture runs",
		 p->id, p->name);
	note(c, text);
}

static void release(struct vs_switch *sw, struct vs_capture *k)
{
	struct vs_port *p;
	unsigned int i;

	if (k->holds_all) {
		sw->cap_all--;
		k->holds_all = false;
	}
	for (i = 0; i < k->nport; i++) {
		p = port_by_id(sw, k->port[i]);
		if (p && p->chan.cap_hold)
			p->chan.cap_hold--;
	}
	k->nport = 0;
}

static const char *parse_num(const char *tok, uint64_t min, uint64_t max,
			     uint64_t *v)
{
	char *end;

	if (!tok)
		return "a number is missing";
	errno = 0;
	*v = strtoull(tok, &end, 10);
	if (tok[0] < '0' || tok[0] > '9' || *end || errno || *v < min || *v > max)
		return "a number out of range";
	return NULL;
}

static const char *parse(struct vs_switch *sw, struct vs_capture *k,
			 char *args)
{
	char *save = NULL, *tok;
	const char *err;
	unsigned int m[6], i;
	uint64_t v;

	k->snaplen = VS_CAP_SNAP_MAX;
	for (tok = strtok_r(args, " \t\r\n", &save); tok;
	     tok = strtok_r(NULL, " \t\r\n", &save)) {
		char *arg = strtok_r(NULL, " \t\r\n", &save);

		if (!strcmp(tok, "port")) {
			if (k->nport == VS_CAP_FILTERS)
				return "too many ports (8 at most)";
			err = parse_num(arg, 1, UINT32_MAX, &v);
			if (err)
				return "port: want a port id (see ctl ports)";
			if (!port_by_id(sw, v))
				return "port: no such port";
			for (i = 0; i < k->nport && k->port[i] != v; i++)
				;
			if (i == k->nport)
				k->port[k->nport++] = v;
		} else if (!strcmp(tok, "mac")) {
			if (k->nmac == VS_CAP_FILTERS)
				return "too many addresses (8 at most)";
			if (!arg || strlen(arg) != 17 ||
			    sscanf(arg, "%2x:%2x:%2x:%2x:%2x:%2x", &m[0], &m[1],
				   &m[2], &m[3], &m[4], &m[5]) != 6)
				return "mac: want an address as 02:00:00:00:00:01";
			for (i = 0; i < 6; i++)
				k->mac[k->nmac][i] = m[i];
			k->nmac++;
		} else if (!strcmp(tok, "count")) {
			err = parse_num(arg, 1, UINT64_MAX, &k->left);
			if (err)
				return "count: want a number of frames, 1 or more";
		} else if (!strcmp(tok, "snaplen")) {
			err = parse_num(arg, 64, VS_CAP_SNAP_MAX, &v);
			if (err)
				return "snaplen: want 64 to 262144 bytes";
			k->snaplen = v;
		} else {
			return "unknown capture option (port, mac, count, snaplen)";
		}
	}
	return NULL;
}

/*
 * Start capture @args ("port ID", "mac MAC", "count N", "snaplen N",
 * each as often as allowed) on control connection @c.  NULL when it runs
 * (the connection's output then holds the answer), else what was wrong.
 */
const char *vs_capture_start(struct vs_switch *sw, struct vs_ctl_conn *c,
			     char *args)
{
	struct vs_capture *k;
	const char *err;
	unsigned int i;

	if (sw->ncap == VS_CAP_MAX)
		return "too many captures running (4 at most)";
	k = calloc(1, sizeof(*k));
	if (!k)
		return "out of memory";
	err = parse(sw, k, args);
	if (!err) {
		c->out = malloc(VS_CAP_BUF);
		if (!c->out)
			err = "out of memory";
	}
	if (err) {
		free(k);
		return err;
	}
	c->cap = k;
	c->outoff = 0;
	memcpy(c->out, "capture\n", 8);
	c->outlen = 8;
	sw->ncap++;
	vs_ev_capture(sw, c - sw->ctl, true, 0, 0);
	if (!k->nport || k->nmac) {
		/* an address can be behind any port, and move */
		bool had = false;

		k->holds_all = true;
		sw->cap_all++;
		for (i = 0; i < sw->nports; i++) {
			struct vs_port *p = sw->ports[i];

			if (p && !p->dead && p->chan.n) {
				vs_chan_forget(sw, p, NULL);
				had = true;
			}
		}
		if (had)
			note(c, "shortcut channels withdrawn while the capture runs");
	}
	for (i = 0; i < k->nport; i++)
		hold(sw, c, port_by_id(sw, k->port[i]));
	return NULL;
}

static bool match(struct vs_switch *sw, const struct vs_capture *k,
		  const struct vs_port *in, const struct vs_port *out,
		  const uint8_t *frame)
{
	bool ok = !k->nport;
	unsigned int i;

	for (i = 0; i < k->nport && !ok; i++) {
		const struct vs_port *p;

		if (k->port[i] == in->id || (out && k->port[i] == out->id)) {
			ok = true;
		} else if (!out) {
			/* flooded: to every port it may reach */
			p = port_by_id(sw, k->port[i]);
			ok = p && p != in && vs_may_reach(sw, in, p);
		}
	}
	if (!ok || !k->nmac)
		return ok;
	for (i = 0; i < k->nmac; i++)
		if (!memcmp(frame, k->mac[i], 6) ||
		    !memcmp(frame + 6, k->mac[i], 6))
			return true;
	return false;
}

/*
 * A frame from @in forwarded to @out (NULL: flooded), @len bytes at
 * @frame without a virtio-net header: a copy for each capture it matches.
 */
void vs_capture_frame(struct vs_switch *sw, const struct vs_port *in,
		      const struct vs_port *out, const uint8_t *frame,
		      unsigned int len)
{
	struct vs_cap_rec r = { .type = VS_CAP_FRAME, .port = in->id,
				.origlen = len };
	struct timespec ts;
	unsigned int i;

	clock_gettime(CLOCK_REALTIME, &ts);
	r.ts_ns = (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
	for (i = 0; i < VS_CTL_MAX_CONN; i++) {
		struct vs_ctl_conn *c = &sw->ctl[i];
		struct vs_capture *k = c->cap;

		if (c->fd < 0 || !k || k->ended || !match(sw, k, in, out, frame))
			continue;
		if (len > sw->cfg.max_frame && !k->said_gso) {
			k->said_gso = true;
			note(c, "super-frames (TSO/GSO) are written whole, as the guests sent them, up to 64 KiB; their checksums may be partial");
		}
		r.len = len < k->snaplen ? len : k->snaplen;
		if (!put(c, &r, frame, VS_CAP_BUF - END_ROOM)) {
			k->lost++;
			continue;
		}
		k->captured++;
		if (k->left && !--k->left)
			vs_capture_end(sw, c);
	}
}

/* End the capture of @c: the END record, then the connection closes */
void vs_capture_end(struct vs_switch *sw, struct vs_ctl_conn *c)
{
	struct vs_capture *k = c->cap;
	struct vs_cap_rec r = { .type = VS_CAP_END, .len = 2 * sizeof(uint64_t) };
	uint64_t n[2];

	if (!k || k->ended)
		return;
	n[0] = k->captured;
	n[1] = k->lost;
	put(c, &r, n, VS_CAP_BUF);
	k->ended = true;
	release(sw, k);
	vs_ev_capture(sw, c - sw->ctl, false, k->captured, k->lost);
}

/* Has @c's capture said all it will? Then it closes once its output is out */
bool vs_capture_done(const struct vs_ctl_conn *c)
{
	return c->cap->ended;
}

/* The connection of a capture goes: its holds go with it */
void vs_capture_free(struct vs_switch *sw, struct vs_ctl_conn *c)
{
	if (!c->cap)
		return;
	if (!c->cap->ended)
		vs_ev_capture(sw, c - sw->ctl, false, c->cap->captured,
			      c->cap->lost);
	release(sw, c->cap);
	free(c->cap);
	c->cap = NULL;
	sw->ncap--;
}
