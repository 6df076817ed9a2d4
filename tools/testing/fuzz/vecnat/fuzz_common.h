/* SPDX-License-Identifier: GPL-2.0 */
/* What the vecnat fuzz targets share: see fuzz_common.c */
#ifndef VECNAT_FUZZ_COMMON_H
#define VECNAT_FUZZ_COMMON_H

#include <stdio.h>
#include <stdlib.h>

#include "vecnat.h"

/* An invariant of the code under test broke: report and crash */
#define FZ_ASSERT(c) do {						\
	if (!(c)) {							\
		fprintf(stderr, "invariant failed: %s (%s:%d)\n", #c,	\
			__FILE__, __LINE__);				\
		abort();						\
	}								\
} while (0)

void fz_nat_config(struct nat_config *cfg);

#endif
