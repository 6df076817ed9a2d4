// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_stream.c - the stream framer (4-byte big-endian length + frame) fed
 * an arbitrary byte stream cut into arbitrary reads, as recv() would hand
 * it over. A reference parser walks the same bytes in one piece; the
 * framer must hand vs_forward() exactly the frames it finds, and drop the
 * port exactly when it finds a length over --max-frame.
 *
 * Input: one byte of switch options, then records of one byte (the size of
 * the next read, 0 meaning 256) followed by that many stream bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"

/* Whole frames in buf[0..len), and whether a bad length ends the stream. */
static uint64_t ref_frames(const struct vs_switch *sw, const uint8_t *buf,
			   size_t len, bool *bad)
{
	uint64_t n = 0;
	size_t off = 0;

	*bad = false;
	while (len - off >= 4) {
		uint32_t flen = (uint32_t)buf[off] << 24 |
				(uint32_t)buf[off + 1] << 16 |
				(uint32_t)buf[off + 2] << 8 | buf[off + 3];

		if (flen > sw->cfg.max_frame) {
			*bad = true;
			break;
		}
		if (len - off - 4 < flen)
			break;
		n++;
		off += 4 + flen;
	}
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };
	uint8_t *seen = NULL;
	struct vs_switch sw;
	struct vs_port *p;
	size_t seen_len = 0;
	uint64_t want;
	bool bad;

	fz_switch_init(&sw, fz_u8(&in));
	p = fz_port(&sw, &vs_stream_ops);
	/* the peer a good frame goes to */
	fz_port(&sw, &vs_seqpacket_ops);
	seen = malloc(size ? size : 1);
	if (!p || !seen)
		abort();

	while (in.left && !p->dead) {
		size_t n = fz_u8(&in), got;
		const uint8_t *chunk;

		if (!n)
			n = 256;
		/* recv() never reads more than the room left */
		if (n > p->stream.rxcap - p->stream.rxlen)
			n = p->stream.rxcap - p->stream.rxlen;
		FZ_ASSERT(n > 0);
		chunk = fz_bytes(&in, n, &got);
		memcpy(p->stream.rxbuf + p->stream.rxlen, chunk, got);
		memcpy(seen + seen_len, chunk, got);
		seen_len += got;
		p->stream.rxlen += got;
		vs_stream_rx(&sw, p);
		fz_check(&sw);
		fz_drain(&sw);
	}
	want = ref_frames(&sw, seen, seen_len, &bad);
	FZ_ASSERT(fz_forwarded(p) == want);
	FZ_ASSERT(p->dead == bad);
	FZ_ASSERT(p->st.rx_bad_len == bad);
	/* what is left over is the partial frame at the end, no more */
	if (!bad)
		FZ_ASSERT(p->stream.rxlen < 4 + sw.cfg.max_frame);
	free(seen);
	fz_switch_fini(&sw);
	return 0;
}
