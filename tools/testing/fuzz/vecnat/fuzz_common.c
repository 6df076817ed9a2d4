// SPDX-License-Identifier: GPL-2.0
/* What the vecnat fuzz targets share: vecnat's configuration as parsed */
#include <string.h>

#include "fuzz_common.h"

/* vecnat's defaults, as its command line leaves them: 10.0.2.0/24 */
void fz_nat_config(struct nat_config *cfg)
{
	char *argv[] = { "vecnat", "--fd", "3", NULL };

	memset(cfg, 0, sizeof(*cfg));
	cfg->fd = -1;
	cfg->ready_fd = -1;
	cfg->ctl_fd = -1;
	cfg->net.s_addr = htonl(0x0a000200);
	cfg->mask.s_addr = htonl(0xffffff00);
	cfg->prefix = 24;
	nat_conf_parse(cfg, 3, argv);
}
