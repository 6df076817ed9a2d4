// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_fwd - a port forward spec, as a user or a ctl client gives it to
 * vecnat.  A spec it takes must be one it can spell out again and read
 * back to the same forward, and must name a guest address of the
 * network; the forward table must refuse it twice.
 */
#include <stdint.h>
#include <string.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct nat_config cfg;
	static bool ready;
	struct nat_fwd f, g;
	char spec[128], back[NAT_SPEC_LEN];

	if (!ready) {
		fz_nat_config(&cfg);
		ready = true;
	}
	if (size >= sizeof(spec))
		return 0;
	memcpy(spec, data, size);
	spec[size] = '\0';
	if (nat_fwd_parse(&cfg, spec, &f))
		return 0;
	FZ_ASSERT(!nat_fwd_check(&cfg, &f));
	FZ_ASSERT(f.host_port && f.guest_port);
	nat_fwd_str(&f, back, sizeof(back));
	FZ_ASSERT(!nat_fwd_parse(&cfg, back, &g));
	FZ_ASSERT(!memcmp(&f, &g, sizeof(f)));
	cfg.nfwd = 0;
	cfg.fwd[cfg.nfwd++] = f;
	FZ_ASSERT(nat_fwd_find(&cfg, &g) == 0);
	cfg.nfwd = 0;
	return 0;
}
