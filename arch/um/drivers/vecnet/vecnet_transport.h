/* SPDX-License-Identifier: GPL-2.0 */
/* vecnet: what a transport offers the core, and the transports */
#ifndef __UM_VECNET_TRANSPORT_H
#define __UM_VECNET_TRANSPORT_H

#include "vecnet.h"

/* probe_peer: the peer answers, and is not the one seen before */
#define VECNET_PEER_NEW		1
/* probe_peer: the peer cannot be asked, but the connection to it holds */
#define VECNET_PEER_HELD	2

struct vecnet_dev;

struct vecnet_transport {
	const char *name;
	/* Keys this transport takes besides the common ones */
	const struct vecnet_key *keys;
	u32 flags;
	/* Frames the transport can carry, headers excluded */
	u32 max_mtu;

	/* Store the options; may reject combinations the key table cannot */
	int (*setup)(struct vecnet_dev *vn, const struct vecnet_args *args,
		     struct vecnet_err *err);
	/*
	 * Create vn->host.fd (queue 0) and, with VECNET_TF_MQ, vn->q[i].fd for
	 * the vn->nq - 1 queues after it; the carrier starts off if the
	 * peer is not there
	 */
	int (*open)(struct vecnet_dev *vn);
	void (*close)(struct vecnet_dev *vn);
	/* Device removal: free what setup allocated */
	void (*destroy)(struct vecnet_dev *vn);
	/* Optional, host exit: remove host objects; no sleeping, no allocation */
	void (*shutdown)(struct vecnet_dev *vn);
	/*
	 * Optional: 0 when the peer takes frames, VECNET_PEER_NEW when a
	 * different peer does now, VECNET_PEER_HELD when it cannot be asked
	 * and the carrier stays as it is, else a negative errno
	 */
	int (*probe_peer)(struct vecnet_dev *vn);
	/* Optional: fill vn->host.tx_hdr_len bytes in front of a frame */
	int (*build_header)(struct vecnet_dev *vn, struct sk_buff *skb,
			    void *hdr);
	/*
	 * Optional: check a received packet of @len bytes, its first
	 * rx_hdr_len in @hdr and the rest at @frame, sent from @src (with
	 * name_len set).  Returns how many header bytes (options, keys,
	 * counters) still lead the frame at @frame, or a negative errno to
	 * drop the packet into rx_encaps_errors.
	 */
	int (*verify_header)(struct vecnet_dev *vn, const void *hdr,
			     const void *frame, unsigned int len,
			     const void *src);
	/* Optional: tell the host which offloads the guest now takes */
	int (*set_features)(struct vecnet_dev *vn, netdev_features_t features);
	/* Optional: the device's address changed while it is up */
	int (*mac_changed)(struct vecnet_dev *vn);
	/* Optional: ethtool -f hands over a filter program (raw, hybrid) */
	int (*load_filter)(struct vecnet_dev *vn, const void *data, size_t len);
	/*
	 * Optional: the most queues the host end takes as far as known, when
	 * that may be fewer than cfg.max_queues (a single-queue tap: 1)
	 */
	u32 (*max_queues)(struct vecnet_dev *vn);
};

extern const struct vecnet_transport vecnet_unixdgram;
extern const struct vecnet_transport vecnet_tap;
extern const struct vecnet_transport vecnet_raw;
extern const struct vecnet_transport vecnet_hybrid;
extern const struct vecnet_transport vecnet_bess;
extern const struct vecnet_transport vecnet_fd;
extern const struct vecnet_transport vecnet_gre;
extern const struct vecnet_transport vecnet_l2tpv3;

#endif
