/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vsw_frame.h - the test frames the vecswitch selftests send: a guest's
 * MAC address, a frame of the local experimental EtherType carrying a
 * tag and a pattern the tag seeds, and the checks of both on receipt.
 */
#ifndef VSW_FRAME_H
#define VSW_FRAME_H

#include "vsw_base.h"

#define VSW_ETYPE	0x88b5		/* IEEE local experimental */

static const uint8_t vsw_bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

static inline void vsw_mac(uint8_t *mac, unsigned int idx)
{
	mac[0] = 0x02;		/* locally administered, unicast */
	mac[1] = 0x76;
	mac[2] = 0x73;
	mac[3] = 0x77;
	mac[4] = idx >> 8;
	mac[5] = idx;
}

static inline size_t vsw_frame(uint8_t *buf, const uint8_t *dst,
			       const uint8_t *src, uint32_t tag, size_t len)
{
	size_t i;

	if (len < 60)
		len = 60;
	memcpy(buf, dst, 6);
	memcpy(buf + 6, src, 6);
	buf[12] = VSW_ETYPE >> 8;
	buf[13] = VSW_ETYPE & 0xff;
	buf[14] = tag >> 24;
	buf[15] = tag >> 16;
	buf[16] = tag >> 8;
	buf[17] = tag;
	for (i = 18; i < len; i++)
		buf[i] = (uint8_t)(i * 7 + tag);
	return len;
}

static inline uint32_t vsw_tag(const uint8_t *buf)
{
	return (uint32_t)buf[14] << 24 | buf[15] << 16 | buf[16] << 8 | buf[17];
}

static inline bool vsw_frame_ok(const uint8_t *buf, size_t len)
{
	uint32_t tag = vsw_tag(buf);
	size_t i;

	for (i = 18; i < len; i++)
		if (buf[i] != (uint8_t)(i * 7 + tag))
			return false;
	return true;
}

#endif /* VSW_FRAME_H */
