// SPDX-License-Identifier: GPL-2.0
/*
 * events.c - `vecswitch ctl events`: a line for each thing that happens
 * to the switch's ports, forwarding table, shortcut channels and
 * captures, as it happens, for as long as the client stays.
 *
 * An events client is a control connection that asked "events" (or
 * "events json"); the switch answers "events\n" and from then on appends
 * one line per event to the connection's output, which the end of each
 * loop turn sends as far as the socket takes it (ctl.c).  The switch
 * never waits for a reader: an event that finds the reader nearly
 * VS_EV_BUF behind (less than the longest line free) is not written,
 * only counted, and the next line that fits is a
 * "lost" event with that count.  With no events client, each event
 * costs one test of sw->nev.
 *
 * A line is the time (UTC), the event's name and its fields as
 * key=value, a value with a space or a quote in quotes; in JSON, one
 * object a line with "ts" (seconds since the epoch, to the microsecond),
 * "event" and the same fields.  vecswitch(8) lists the events and their
 * fields.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vecswitch.h"

#define EV_LINE		2048	/* the longest line: names are VS_NAME_LEN */

struct ev_field {
	const char *key;
	const char *s;			/* a string, or NULL: the number u */
	uint64_t u;
};

#define EV_U(k, v)	{ .key = (k), .u = (v) }
#define EV_S(k, v)	{ .key = (k), .s = (v) }

struct ev_line {
	char buf[EV_LINE];
	size_t len;
};

static void __attribute__((format(printf, 2, 3)))
line_add(struct ev_line *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (l->len >= sizeof(l->buf))
		return;
	va_start(ap, fmt);
	n = vsnprintf(l->buf + l->len, sizeof(l->buf) - l->len, fmt, ap);
	va_end(ap);
	l->len += n > 0 ? n : 0;
}

/* A string value: in JSON always quoted, in text only when it must be */
static void line_str(struct ev_line *l, const char *s, bool json)
{
	bool quote = json || !*s || strpbrk(s, " \t\"\\=");

	if (quote)
		line_add(l, "\"");
	for (; *s; s++) {
		unsigned char c = *s;

		/* names are escaped already (vs_name_escape): UTF-8 stays */
		if (quote && (c == '"' || c == '\\'))
			line_add(l, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			line_add(l, json ? "\\u%04x" : "\\x%02x", c);
		else
			line_add(l, "%c", c);
	}
	if (quote)
		line_add(l, "\"");
}

static void render(struct ev_line *l, bool json, const struct timespec *ts,
		   const char *event, const struct ev_field *f, unsigned int n)
{
	unsigned int i;
	struct tm tm;

	l->len = 0;
	if (json) {
		line_add(l, "{\"ts\":%lld.%06ld,\"event\":\"%s\"",
			 (long long)ts->tv_sec, ts->tv_nsec / 1000, event);
	} else {
		gmtime_r(&ts->tv_sec, &tm);
		line_add(l, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ %s",
			 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
			 tm.tm_hour, tm.tm_min, tm.tm_sec, ts->tv_nsec / 1000,
			 event);
	}
	for (i = 0; i < n; i++) {
		line_add(l, json ? ",\"%s\":" : " %s=", f[i].key);
		if (f[i].s)
			line_str(l, f[i].s, json);
		else
			line_add(l, "%llu", (unsigned long long)f[i].u);
	}
	line_add(l, json ? "}\n" : "\n");
	if (l->len >= sizeof(l->buf)) {
		/* cannot happen with today's fields; never send half a line */
		l->len = 0;
	}
}

/* Append @n bytes to @c's output, if its reader is not VS_EV_BUF behind */
static bool put(struct vs_ctl_conn *c, const char *text, size_t n)
{
	if (!n || !vs_ctl_room(c, n, VS_EV_BUF))
		return false;
	memcpy(c->out + c->outlen, text, n);
	c->outlen += n;
	return true;
}

/* Say how many events @c's reader lost, once there is room for it */
static bool put_lost(struct vs_ctl_conn *c, const struct timespec *ts)
{
	const struct ev_field f[] = { EV_U("count", c->ev.lost) };
	struct ev_line l;

	render(&l, c->ev.json, ts, "lost", f, ARRAY_SIZE(f));
	if (!put(c, l.buf, l.len))
		return false;
	c->ev.lost = 0;
	return true;
}

static void emit(struct vs_switch *sw, const char *event,
		 const struct ev_field *f, unsigned int n)
{
	struct ev_line text = { .len = 0 }, json = { .len = 0 };
	struct timespec ts;
	unsigned int i;

	clock_gettime(CLOCK_REALTIME, &ts);
	for (i = 0; i < VS_CTL_MAX_CONN; i++) {
		struct vs_ctl_conn *c = &sw->ctl[i];
		struct ev_line *l = c->ev.json ? &json : &text;

		if (!c->ev.on)
			continue;
		/* a reader that far behind costs a count, not a line */
		if (VS_EV_BUF - (c->outlen - c->outoff) < EV_LINE) {
			c->ev.lost++;
			continue;
		}
		if (!l->len)
			render(l, c->ev.json, &ts, event, f, n);
		if ((c->ev.lost && !put_lost(c, &ts)) || !put(c, l->buf, l->len))
			c->ev.lost++;
	}
}

/*
 * Start the event stream on control connection @c; @args is what
 * followed "events" on the request line ("json" or nothing).  NULL when
 * it runs (the connection's output then holds the answer), else what
 * was wrong.
 */
const char *vs_events_start(struct vs_switch *sw, struct vs_ctl_conn *c,
			    const char *args)
{
	char word[8] = "", extra[2] = "";
	int n = sscanf(args, "%7s %1s", word, extra);

	if (n > 1 || (n == 1 && strcmp(word, "json")))
		return "want events [json]";
	if (sw->nev == VS_EV_MAX)
		return "too many event clients (4 at most)";
	c->out = malloc(VS_EV_BUF);
	if (!c->out)
		return "out of memory";
	memcpy(c->out, "events\n", 7);
	c->outlen = 7;
	c->outoff = 0;
	c->ev.on = true;
	c->ev.json = n == 1;
	c->ev.lost = 0;
	sw->nev++;
	return NULL;
}

/* The connection of an events client goes */
void vs_events_free(struct vs_switch *sw, struct vs_ctl_conn *c)
{
	if (!c->ev.on)
		return;
	c->ev.on = false;
	sw->nev--;
}

/* Port @p was made (@why NULL), or removed for @why ("" if it left) */
void vs_ev_port(struct vs_switch *sw, const struct vs_port *p,
		const char *why)
{
	struct ev_field f[6] = {
		EV_U("port", p->id),
		EV_S("kind", p->ops->name),
		EV_S("name", p->name),
	};
	unsigned int n = 3;

	if (!sw->nev)
		return;
	if (why) {
		f[n++] = (struct ev_field)EV_S("reason", *why ? why : "left");
		emit(sw, "detach", f, n);
		return;
	}
	if (p->has_owner) {
		f[n++] = (struct ev_field)EV_U("uid", p->owner_uid);
		if (p->owner_pid > 0)
			f[n++] = (struct ev_field)EV_U("pid", p->owner_pid);
	}
	emit(sw, "attach", f, n);
}

/*
 * Forwarding entry @mac on @vlan: learned on @to (@from NULL), moved from
 * @from to @to, or aged out of @from (@to NULL)
 */
void vs_ev_fdb(struct vs_switch *sw, const uint8_t *mac, uint16_t vlan,
	       const struct vs_port *from, const struct vs_port *to)
{
	struct ev_field f[4];
	unsigned int n = 0;
	char m[18];

	if (!sw->nev)
		return;
	vs_mac_str(m, mac);
	f[n++] = (struct ev_field)EV_S("mac", m);
	f[n++] = (struct ev_field)EV_U("vlan", vlan);
	if (from && to) {
		f[n++] = (struct ev_field)EV_U("from", from->id);
		f[n++] = (struct ev_field)EV_U("to", to->id);
		emit(sw, "move", f, n);
	} else {
		f[n++] = (struct ev_field)EV_U("port", (from ? from : to)->id);
		emit(sw, from ? "age" : "learn", f, n);
	}
}

/* A shortcut channel between @a (address @ma) and @b (@mb) opened or closed */
void vs_ev_chan(struct vs_switch *sw, bool open, const struct vs_port *a,
		const uint8_t *ma, const struct vs_port *b, const uint8_t *mb,
		unsigned int queues)
{
	char m[2][18];
	struct ev_field f[5] = {
		EV_U("port", a->id),
		EV_S("mac", m[0]),
		EV_U("peer", b->id),
		EV_S("peer_mac", m[1]),
		EV_U("queues", queues),
	};

	if (!sw->nev)
		return;
	vs_mac_str(m[0], ma);
	vs_mac_str(m[1], mb);
	emit(sw, open ? "channel-open" : "channel-close", f,
	     open ? ARRAY_SIZE(f) : ARRAY_SIZE(f) - 1);
}

/*
 * Capture @id (its control connection) started, or stopped having
 * taken @captured frames and lost @lost
 */
void vs_ev_capture(struct vs_switch *sw, unsigned int id, bool start,
		   uint64_t captured, uint64_t lost)
{
	const struct ev_field f[] = {
		EV_U("capture", id),
		EV_U("frames", captured),
		EV_U("lost", lost),
	};

	if (!sw->nev)
		return;
	emit(sw, start ? "capture-start" : "capture-stop", f,
	     start ? 1 : ARRAY_SIZE(f));
}
