/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vhost.h - the vhost-user backend: one frontend (QEMU, UML's virtio_uml)
 * per connection, its guest memory and its two split virtqueues.
 *
 *	vhost.c		the messages on the connection: features, memory
 *			table, ring set-up, configuration space
 *	virtq.c		the rings: frames out of the transmit queue, frames
 *			into the receive queue's buffers, notifications
 *	vhost_port.c	the connection as a switch port
 *
 * Nothing here trusts the frontend: every address it names is checked
 * against the regions it handed over before a byte is read, every ring
 * index it writes is checked against the ring, and every descriptor it
 * passes is checked for its kind before the switch touches it.
 */
#ifndef VECSWITCH_VHOST_H
#define VECSWITCH_VHOST_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>
#include <linux/virtio_ring.h>

/* requests (QEMU's docs/interop/vhost-user.rst) */
enum {
	VHU_GET_FEATURES = 1,
	VHU_SET_FEATURES = 2,
	VHU_SET_OWNER = 3,
	VHU_RESET_OWNER = 4,
	VHU_SET_MEM_TABLE = 5,
	VHU_SET_LOG_BASE = 6,
	VHU_SET_LOG_FD = 7,
	VHU_SET_VRING_NUM = 8,
	VHU_SET_VRING_ADDR = 9,
	VHU_SET_VRING_BASE = 10,
	VHU_GET_VRING_BASE = 11,
	VHU_SET_VRING_KICK = 12,
	VHU_SET_VRING_CALL = 13,
	VHU_SET_VRING_ERR = 14,
	VHU_GET_PROTOCOL_FEATURES = 15,
	VHU_SET_PROTOCOL_FEATURES = 16,
	VHU_GET_QUEUE_NUM = 17,
	VHU_SET_VRING_ENABLE = 18,
	VHU_SEND_RARP = 19,
	VHU_NET_SET_MTU = 20,
	VHU_GET_CONFIG = 24,
	VHU_SET_CONFIG = 25,
	VHU_RESET_DEVICE = 34,
	VHU_GET_MAX_MEM_SLOTS = 36,
	VHU_REQ_MAX,
};

#define VHU_FLAG_VERSION	0x1
#define VHU_FLAG_REPLY		0x4
#define VHU_FLAG_NEED_REPLY	0x8
#define VHU_HDR_LEN		12
/* the largest payload: a memory table of 8 regions (8 + 8 * 32 bytes) */
#define VHU_PAYLOAD_MAX		264
#define VHU_FDS_MAX		8
/*
 * descriptors one receive makes room for: the kernel's SCM_MAX_FD, all a
 * message can carry, so that none is ever left for the kernel to release
 * inside recvmsg() on the switch's thread
 */
#define VHU_FDS_ROOM		253
#define VHU_VRING_IDX_MASK	0xffu
#define VHU_VRING_NOFD		(1u << 8)

/* protocol features */
#define VHU_PF_MQ		0
#define VHU_PF_REPLY_ACK	3
#define VHU_PF_CONFIG		9

/* device features: virtio, virtio-net and vhost's own */
#define VN_F_CSUM		0
#define VN_F_GUEST_CSUM		1
#define VN_F_MAC		5
#define VN_F_GUEST_TSO4		7
#define VN_F_GUEST_TSO6		8
#define VN_F_GUEST_ECN		9
#define VN_F_HOST_TSO4		11
#define VN_F_HOST_TSO6		12
#define VN_F_HOST_ECN		13
#define VN_F_MRG_RXBUF		15
#define VN_F_STATUS		16
#define VN_F_RING_INDIRECT	28
#define VN_F_RING_EVENT_IDX	29
#define VHU_F_PROTOCOL_FEATURES	30
#define VN_F_VERSION_1		32

#define VS_VH_RXQ		0	/* the switch fills it: frames to the guest */
#define VS_VH_TXQ		1	/* the guest fills it: frames from it */
#define VS_VH_QUEUES		2
#define VS_VH_QSIZE_MAX		32768
#define VS_VH_REGIONS		8
/*
 * buffers one frame may take: a chain, or the receive buffers it spans
 * (a 64 KiB frame in 64-byte buffers)
 */
#define VS_VH_IOV_MAX		1024
/*
 * descriptors the switch reads for one frame, zero-length ones and
 * indirect table pointers included, over every chain the frame spans:
 * past it the guest is breaking the ring, not posting buffers
 */
#define VS_VH_DESC_BUDGET	VS_VH_IOV_MAX
/* the configuration space a virtio-net device shows: mac, status, pairs, mtu */
#define VS_VH_CONFIG_LEN	12

struct vs_vh_region {
	uint64_t gpa;			/* guest physical address */
	uint64_t uva;			/* the frontend's own address of it */
	uint64_t size;
	uint8_t *host;			/* where the switch sees it */
	void *map;			/* the whole mapping, and its length */
	size_t maplen;
};

struct vs_vq {
	unsigned int num;		/* 0: not set */
	uint64_t desc_uva, avail_uva, used_uva;
	bool addr_set;
	/* the ring in the switch's memory, once the queue starts */
	volatile struct vring_desc *desc;
	volatile struct vring_avail *avail;
	volatile struct vring_used *used;
	uint16_t last_avail;		/* next chain the switch takes */
	uint16_t used_idx;		/* next used entry it writes */
	uint16_t signalled;		/* used_idx when the guest was last told */
	bool signalled_valid;
	bool enabled;
	bool started;
	int kick_fd;
	int call_fd;
	bool call_sock;			/* call_fd is a unix socket (virtio_uml) */
	uint8_t kick_idle;		/* wake-ups in a row with nothing to read */
};

/* a frontend's counters, shown by ctl stats (vs_vhost_stat_desc) */
struct vs_vh_stats {
	uint64_t msgs;			/* protocol messages handled */
	uint64_t kicks;			/* kicks read */
	uint64_t calls;			/* calls written */
	uint64_t rx_no_room;		/* times a frame found no guest buffer */
	uint64_t rx_bufs;		/* receive buffers filled */
	uint64_t mapped;		/* bytes of its memory mapped now */
};

struct vs_vhost {
	int fd;
	uint64_t features;		/* acked by SET_FEATURES */
	uint64_t protocol;		/* acked protocol features */
	bool owner;
	bool features_set;
	unsigned int hdr_len;		/* 10, or 12 with num_buffers */
	unsigned int nregions;
	struct vs_vh_region r[VS_VH_REGIONS];
	struct vs_vq vq[VS_VH_QUEUES];
	uint8_t config[VS_VH_CONFIG_LEN];
	/* a message being read: header and payload, and its descriptors */
	uint8_t msg[VHU_HDR_LEN + VHU_PAYLOAD_MAX];
	unsigned int msglen;
	int msgfd[VHU_FDS_MAX];
	unsigned int nmsgfd;
	const char *broken;		/* why the frontend must go, or NULL */
	uint32_t broken_req;		/* the request that broke it, or 0 */
	bool sigbus;			/* its memory vanished under the switch */
	struct vs_vh_stats st;
	struct vs_vhost *next_all;	/* every frontend, for the SIGBUS handler */
};

/*
 * Guest memory the switch maps: at most @max bytes for one frontend,
 * @all_max for all together (*@all now); *@refused counts the memory
 * tables turned away for it.
 */
struct vs_vh_mem {
	uint64_t max;
	uint64_t all_max;
	uint64_t *all;
	uint64_t *refused;
};

/*
 * The switch side of a connection: descriptors the switch may not close
 * itself (a close can wait for ever on some files) go to @drop_fd.
 */
struct vs_vh_env {
	void (*drop_fd)(void *arg, int fd);
	/* wait on queue @q's kick descriptor @fd, or no longer (@add false) */
	int (*kick)(void *arg, unsigned int q, int fd, bool add);
	void *arg;
	const struct vs_vh_mem *mem;	/* caps on guest memory, or NULL */
};

/* vhost.c */
void vs_vh_init(struct vs_vhost *v, int fd);
void vs_vh_fini(struct vs_vhost *v, const struct vs_vh_env *env);
int vs_vh_input(struct vs_vhost *v, const struct vs_vh_env *env);
void *vs_vh_xlate(const struct vs_vhost *v, uint64_t gpa, uint64_t len);
bool vs_vh_ready(const struct vs_vhost *v, unsigned int q);
bool vs_vh_has(const struct vs_vhost *v, unsigned int bit);
void vs_vh_sigbus_init(void);
bool vs_vh_sigbus_seen(struct vs_vhost *v);
extern const uint64_t vs_vh_features;

/* virtq.c */
struct vs_vh_frame {
	struct iovec iov[VS_VH_IOV_MAX];
	unsigned int niov;
	unsigned int len;		/* header included */
	uint16_t head;
};
int vs_vq_pop(struct vs_vhost *v, unsigned int q, struct vs_vh_frame *f,
	      bool writable, unsigned int *budget);
void vs_vq_push(struct vs_vhost *v, unsigned int q, uint16_t head,
		uint32_t len);
void vs_vq_notify(struct vs_vhost *v, unsigned int q);
int vs_vq_deliver(struct vs_vhost *v, const struct iovec *src,
		  unsigned int nsrc, unsigned int len);
bool vs_vq_drain_kick(struct vs_vhost *v, unsigned int q);
bool vs_vq_rearm(struct vs_vhost *v, unsigned int q, bool rx);

#endif /* VECSWITCH_VHOST_H */
