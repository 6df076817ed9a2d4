/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * The control messages of vecnet's unixdgram transport: what a UML guest's
 * vecN: device (arch/um/drivers/vecnet) and the vecswitch daemon
 * (tools/net/vecswitch), or two guests on a direct link, say to each other
 * on the socket their frames use.  This header is the one definition both
 * sides build from; Documentation/networking/vecnet-protocol.rst describes
 * the messages' order and what each side does with a bad one.
 *
 * A message is 12 bytes, shorter than any Ethernet frame, so that it never
 * reads as one: the magic "VECN", the version, the type, then six bytes
 * whose meaning the type gives.  A receiver takes a message only when all
 * 12 bytes are there and the version is its own; anything else that
 * starts with the magic is counted and dropped.
 *
 *   HELLO   guest -> peer: (re)start; frames are plain until MODE.  flags:
 *           what the sender takes (F_VNET, F_CHAN, F_MQ, F_CHANQ),
 *           max_frame: the longest frame it takes with a header, from
 *           its Ethernet header on (65554 for 64 KiB super-frames; more
 *           with BIG TCP, which the peer may then send it).
 *   MODE    either way: the sender's frames carry a struct virtio_net_hdr
 *           from the next one on (F_VNET), or not; F_CHAN: the switch
 *           will offer shortcut channels; F_CHANQ: on further queue
 *           sockets too.  max_frame as in HELLO.  A guest that takes
 *           frames beyond 64 KiB also sends its MODE into each shortcut
 *           channel as its end opens.
 *   CHAN    switch -> guest, with one descriptor (SCM_RIGHTS): a datagram
 *           socket that reaches the guest with address mac directly.  It
 *           comes on queue socket 0, and with F_CHANQ agreed one more on
 *           each further queue socket k that both guests have joined:
 *           queue k of one guest reaches queue k of the other.
 *   UNCHAN  either way: the channel to mac is withdrawn, or was closed;
 *           on socket 0 only, and it means the channel of every queue.
 *   QUEUES  switch -> guest: the cookie its further queue sockets join with.
 *   JOIN    guest -> switch on a further queue socket, with the cookie;
 *           the switch acks with the same message on that socket.
 */
#ifndef _UAPI_LINUX_VECNET_H
#define _UAPI_LINUX_VECNET_H

#include <linux/types.h>

#define VECNET_MSG_MAGIC	"VECN"
#define VECNET_MSG_MAGIC_LEN	4
#define VECNET_MSG_VERSION	1
#define VECNET_MSG_LEN		12
#define VECNET_MSG_COOKIE_LEN	6

enum vecnet_msg_type {
	VECNET_MSG_HELLO = 1,
	VECNET_MSG_MODE,
	VECNET_MSG_CHAN,
	VECNET_MSG_UNCHAN,
	VECNET_MSG_QUEUES,
	VECNET_MSG_JOIN,

	VECNET_MSG_TYPE_MAX = VECNET_MSG_JOIN,
};

/* HELLO and MODE flags */
#define VECNET_MSG_F_VNET	0x0001	/* frames lead with a virtio_net_hdr */
#define VECNET_MSG_F_CHAN	0x0002	/* shortcut channels taken / offered */
#define VECNET_MSG_F_MQ		0x0004	/* HELLO: can add queue sockets */
#define VECNET_MSG_F_CHANQ	0x0008	/* a channel per queue taken / offered */

struct vecnet_msg {
	__u8 magic[VECNET_MSG_MAGIC_LEN];
	__u8 version;
	__u8 type;			/* enum vecnet_msg_type */
	union {
		struct {		/* HELLO, MODE */
			__be16 flags;
			__be32 max_frame;
		} __attribute__((packed)) mode;
		__u8 mac[6];		/* CHAN, UNCHAN */
		__u8 cookie[VECNET_MSG_COOKIE_LEN];	/* QUEUES, JOIN */
	};
} __attribute__((packed));

#endif /* _UAPI_LINUX_VECNET_H */
