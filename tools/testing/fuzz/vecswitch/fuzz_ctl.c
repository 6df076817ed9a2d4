// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_ctl.c - the control protocol's request parser and its reports:
 * arbitrary request bytes arriving in arbitrary pieces into a connection's
 * buffer, answered against a switch that has ports, locked MACs, learned
 * entries and counters. Every answer must be text without NUL bytes, end
 * in a newline, and a JSON answer must at least balance its brackets.
 * A request that starts a capture is answered "capture", then takes the
 * frames forwarded after it as whole records, ends with an END record,
 * and leaves no hold on a port once freed.  A request for events is
 * answered "events", then takes the events of frames forwarded and a port
 * removed after it as whole lines (JSON ones balanced), and leaves no
 * events client once freed.
 *
 * Input: one byte of switch options, one byte of setup (ports and frames),
 * then records of one byte (piece size, low 7 bits) and that many bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"

static void populate(struct vs_switch *sw, uint8_t setup)
{
	uint8_t frame[60] = { 0 };
	unsigned int i, n = setup & 7;

	for (i = 0; i < n; i++) {
		struct vs_port *p = vs_port_new(sw, i & 1 ? &vs_seqpacket_ops :
						&vs_stream_ops, -1,
						i & 2 ? "g\"\\\x01\xff" : "guest",
						NULL);

		if (!p)
			return;
		memset(frame, 0xff, 6);
		frame[6] = 0x02;
		frame[11] = i;
		vs_forward(sw, p, frame, sizeof(frame));
		if (setup & 0x80)
			vs_port_remove(sw, p, "fuzz");
	}
	if (setup & 0x40)
		fz_advance(sw, 400000);
}

/* @len bytes of text at @out: no NUL, a newline last; JSON balanced */
static void check_text(const char *out, size_t len)
{
	int depth = 0;
	bool str = false;
	size_t i;

	FZ_ASSERT(out && len > 0);
	FZ_ASSERT(!memchr(out, '\0', len));
	FZ_ASSERT(out[len - 1] == '\n');
	if (out[0] != '{')
		return;
	for (i = 0; i < len; i++) {
		char ch = out[i];

		if (str) {
			FZ_ASSERT((unsigned char)ch >= 0x20 && ch != 0x7f);
			if (ch == '\\')
				i++;
			else if (ch == '"')
				str = false;
			continue;
		}
		if (ch == '"')
			str = true;
		else if (ch == '{' || ch == '[')
			depth++;
		else if (ch == '}' || ch == ']')
			FZ_ASSERT(--depth >= 0);
	}
	FZ_ASSERT(!str && depth == 0);
}

static void check_answer(const struct vs_ctl_conn *c)
{
	check_text(c->out, c->outlen);
}

static void check_events(struct vs_switch *sw, struct vs_ctl_conn *c)
{
	uint8_t frame[60] = { 0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2 };
	size_t at = 7;
	unsigned int i;

	FZ_ASSERT(sw->nev == 1);
	FZ_ASSERT(c->outlen >= 7 && !memcmp(c->out, "events\n", 7));
	for (i = 0; i < sw->nports; i++)
		if (sw->ports[i] && !sw->ports[i]->dead)
			vs_forward(sw, sw->ports[i], frame, sizeof(frame));
	for (i = 0; i < sw->nports; i++)
		if (sw->ports[i] && !sw->ports[i]->dead) {
			vs_port_remove(sw, sw->ports[i], i & 1 ? NULL : "fuzz");
			break;
		}
	/* each line on its own: text, or one balanced JSON object */
	while (at < c->outlen) {
		const char *nl = memchr(c->out + at, '\n', c->outlen - at);

		FZ_ASSERT(nl);
		check_text(c->out + at, nl + 1 - (c->out + at));
		FZ_ASSERT(c->ev.json == (c->out[at] == '{'));
		at = nl + 1 - c->out;
	}
	vs_events_free(sw, c);
	FZ_ASSERT(!sw->nev);
}

static void check_capture(struct vs_switch *sw, struct vs_ctl_conn *c)
{
	uint8_t frame[60] = { 0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2 };
	struct vs_cap_rec r = { 0 };
	size_t at = 8;
	unsigned int i;

	FZ_ASSERT(sw->ncap == 1);
	FZ_ASSERT(c->outlen >= 8 && !memcmp(c->out, "capture\n", 8));
	for (i = 0; i < sw->nports; i++)
		if (sw->ports[i] && !sw->ports[i]->dead)
			vs_forward(sw, sw->ports[i], frame, sizeof(frame));
	vs_capture_end(sw, c);
	while (at < c->outlen) {
		FZ_ASSERT(c->outlen - at >= sizeof(r));
		memcpy(&r, c->out + at, sizeof(r));
		FZ_ASSERT(r.type >= VS_CAP_FRAME && r.type <= VS_CAP_END);
		FZ_ASSERT(c->outlen - at - sizeof(r) >= r.len);
		if (r.type == VS_CAP_FRAME)
			FZ_ASSERT(r.len <= r.origlen && r.origlen == sizeof(frame));
		at += sizeof(r) + r.len;
	}
	FZ_ASSERT(r.type == VS_CAP_END);
	vs_capture_free(sw, c);
	FZ_ASSERT(!sw->ncap && !sw->cap_all);
	for (i = 0; i < sw->nports; i++)
		FZ_ASSERT(!sw->ports[i] || !sw->ports[i]->chan.cap_hold);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };
	struct vs_ctl_conn *c;
	struct vs_switch sw;

	fz_switch_init(&sw, fz_u8(&in));
	populate(&sw, fz_u8(&in));
	c = &sw.ctl[0];

	/* as vs_ctl_event: pieces until a newline, a full buffer or the end */
	while (in.left) {
		size_t room = sizeof(c->req) - 1 - c->reqlen, n, got;
		const uint8_t *piece;

		n = fz_u8(&in) & 0x7f;
		if (n > room)
			n = room;
		piece = fz_bytes(&in, n, &got);
		memcpy(c->req + c->reqlen, piece, got);
		c->reqlen += got;
		if (vs_ctl_req_done(c))
			break;
	}
	vs_ctl_answer(&sw, c);
	if (c->cap)
		check_capture(&sw, c);
	else if (c->ev.on)
		check_events(&sw, c);
	else
		check_answer(c);
	free(c->out);
	fz_switch_fini(&sw);
	return 0;
}
