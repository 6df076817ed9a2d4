/* SPDX-License-Identifier: GPL-2.0 */
/* vecnet: vecN: options (vecnet_parse.c) */
#ifndef __UM_VECNET_PARSE_H
#define __UM_VECNET_PARSE_H

#include <linux/if_ether.h>
#include <linux/types.h>

enum vecnet_key_type {
	VECNET_KEY_U32,		/* decimal or 0x hex, full unsigned range */
	VECNET_KEY_BOOL,	/* 0 or 1 */
	VECNET_KEY_STR,		/* up to max bytes, not empty */
	VECNET_KEY_MAC,		/* xx:xx:xx:xx:xx:xx, unicast */
	VECNET_KEY_U64,		/* decimal or 0x hex, full unsigned range */
	VECNET_KEY_IP,		/* an IPv4 or IPv6 address */
};

struct vecnet_key {
	const char *name;
	enum vecnet_key_type type;
	u32 min;
	u32 max;
	bool required;
};

struct vecnet_kv {
	char *key;
	char *val;
};

/* key=value pairs of one device, validated against the key tables */
struct vecnet_args {
	char *buf;
	unsigned int n;
	struct vecnet_kv kv[] __counted_by(n);
};

/* Error text for the console and for mconsole replies */
struct vecnet_err {
	char msg[160];
};

struct vecnet_transport;

struct vecnet_config {
	u32 index;
	const struct vecnet_transport *transport;
	struct vecnet_args *args;
	/* slots of the receive and transmit rings: depth= sets both */
	u32 rx_depth;
	u32 tx_depth;
	u32 mtu;
	u32 headroom;
	/* queue pairs while up; the most the device can have */
	u32 queues;
	u32 max_queues;
	bool vec;
	bool have_mac;
	u8 mac[ETH_ALEN];
};

int vecnet_parse(const char *spec, struct vecnet_config *cfg,
		 struct vecnet_err *err);
void vecnet_args_free(struct vecnet_args *args);
const char *vecnet_arg_str(const struct vecnet_args *args, const char *key);
u32 vecnet_arg_u32(const struct vecnet_args *args, const char *key, u32 def);
u64 vecnet_arg_u64(const struct vecnet_args *args, const char *key, u64 def);
int vecnet_arg_ip(const struct vecnet_args *args, const char *key, u8 *addr);
void vecnet_err_set(struct vecnet_err *err, const char *fmt, ...) __printf(2, 3);

#endif
