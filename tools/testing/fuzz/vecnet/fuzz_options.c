// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_options.c - the driver's device specifications ("N:transport=T,
 * key=value,...", from the command line or mconsole) through
 * vecnet_parse(). A spec is accepted with every value in range, or
 * refused with one message that names the device; nothing leaks either
 * way.
 */
#include <string.h>

#include "kshim.h"
#include "vecnet.h"
#include "vecnet_transport.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vecnet_config cfg;
	struct vecnet_err err;
	char *spec;
	int ret;

	spec = malloc(size + 1);
	if (!spec)
		return 0;
	memcpy(spec, data, size);
	spec[size] = '\0';
	memset(&err, 0, sizeof(err));

	ret = vecnet_parse(spec, &cfg, &err);
	if (ret) {
		FZ_ASSERT(ret < 0);
		FZ_ASSERT(!cfg.args);
		FZ_ASSERT(!strncmp(err.msg, "vec", 3));
		FZ_ASSERT(memchr(err.msg, '\0', sizeof(err.msg)));
	} else {
		FZ_ASSERT(cfg.transport && cfg.args);
		FZ_ASSERT(cfg.index <= 99999);
		/* depth= sets both rings alike */
		FZ_ASSERT(cfg.rx_depth >= 1 && cfg.rx_depth <= VECNET_DEPTH_MAX);
		FZ_ASSERT(cfg.tx_depth == cfg.rx_depth);
		FZ_ASSERT(cfg.mtu >= ETH_MIN_MTU &&
			  cfg.mtu <= cfg.transport->max_mtu);
		FZ_ASSERT(cfg.headroom <= VECNET_HEADROOM_MAX);
		FZ_ASSERT(vecnet_arg_str(cfg.args, "transport"));
		FZ_ASSERT(!cfg.have_mac || !(cfg.mac[0] & 1));
		/* queues: at least one, at most the CPUs, several only where taken */
		FZ_ASSERT(cfg.queues >= 1 && cfg.queues <= cfg.max_queues);
		FZ_ASSERT(cfg.max_queues <= num_possible_cpus() &&
			  cfg.max_queues <= VECNET_QUEUES_MAX);
		FZ_ASSERT(cfg.max_queues == 1 ||
			  (cfg.transport->flags & VECNET_TF_MQ));
		vecnet_args_free(cfg.args);
	}
	free(spec);
	return 0;
}
