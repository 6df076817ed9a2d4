// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_guard - frames from a guest through vecnat's guard (guard.c), the
 * check before libslirp.  The input is a series of frames, each a
 * 2-byte length and its bytes, a few ms apart.  What passes must be an
 * IPv4 header that fits its frame, a fragment that passes must start
 * where the last one of its datagram ended, or be a first one, and a
 * DHCP request must be whole and name its sender's MAC.
 */
#include <stdint.h>
#include <string.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* where each datagram's next fragment must start, as seen here */
static struct {
	uint8_t key[11];
	unsigned int next;
} seen[256];

static void check_passed(const uint8_t *f, size_t len)
{
	const uint8_t *ip = f + 14;
	unsigned int ihl, tot, frag, off, i;

	if (len < 14 || f[12] != 0x08 || f[13] != 0x00)
		return;
	FZ_ASSERT(len >= 34);
	ihl = (ip[0] & 0x0f) * 4;
	tot = ip[2] << 8 | ip[3];
	FZ_ASSERT(ip[0] >> 4 == 4 && ihl >= 20 && tot >= ihl && tot <= len - 14);
	frag = ip[6] << 8 | ip[7];
	/* a DHCP request passes whole, and for its sender's own MAC */
	if (ip[9] == 17 && !(frag & 0x1fff) && tot >= ihl + 4 &&
	    (ip[ihl + 2] << 8 | ip[ihl + 3]) == 67) {
		FZ_ASSERT(!(frag & 0x2000));
		if (tot >= ihl + 8 + 34 && ip[ihl + 8] == 1)
			FZ_ASSERT(!memcmp(ip + ihl + 8 + 28, f + 6, 6));
	}
	if (!(frag & 0x3fff))
		return;
	FZ_ASSERT(tot > ihl);
	off = (frag & 0x1fff) * 8;
	i = (ip[4] ^ ip[5] ^ ip[9] ^ ip[15] ^ ip[19]) & 0xff;
	if (off) {
		/* an entry it may have evicted is not ours to judge */
		if (!memcmp(seen[i].key, ip + 12, 8) &&
		    !memcmp(seen[i].key + 8, ip + 4, 2) && seen[i].key[10] == ip[9])
			FZ_ASSERT(seen[i].next == off);
	}
	memcpy(seen[i].key, ip + 12, 8);
	memcpy(seen[i].key + 8, ip + 4, 2);
	seen[i].key[10] = ip[9];
	seen[i].next = off + tot - ihl;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint64_t now = 1;
	size_t len;

	memset(seen, 0, sizeof(seen));
	while (size >= 2) {
		len = data[0] << 8 | data[1];
		data += 2;
		size -= 2;
		if (len > size)
			len = size;
		now += 3;
		if (!nat_frame_check(data, len, now))
			check_passed(data, len);
		data += len;
		size -= len;
	}
	/* the guard's entries of this input expire before the next one's */
	now += 20000;
	return 0;
}
