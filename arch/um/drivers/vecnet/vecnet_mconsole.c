// SPDX-License-Identifier: GPL-2.0
/*
 * vecnet: mconsole "config vecN=..." and "remove vecN".  The same
 * checks and messages as on the command line; the message also goes
 * back to the mconsole client.
 */

#include <linux/init.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <mconsole_kern.h>
#include "vecnet_dev.h"
#include "vecnet_parse.h"

/* mconsole copies the reply after we return and runs one request at a time */
static struct vecnet_err vecnet_mc_err;

static int vecnet_mc_config(char *str, char **error_out)
{
	int ret;

	ret = vecnet_device_add(str, &vecnet_mc_err);
	if (ret) {
		pr_err("vecnet: %s; device not created\n", vecnet_mc_err.msg);
		*error_out = vecnet_mc_err.msg;
	}
	return ret;
}

static int vecnet_mc_id(char **str, int *start_out, int *end_out)
{
	u32 n;

	*start_out = 0;
	*end_out = INT_MAX;
	if (kstrtou32(*str, 10, &n) || n > INT_MAX)
		return -1;
	return n;
}

static int vecnet_mc_remove(int n, char **error_out)
{
	int ret;

	ret = vecnet_device_remove(n, &vecnet_mc_err);
	if (ret)
		*error_out = vecnet_mc_err.msg;
	return ret;
}

static struct mc_device vecnet_mc = {
	.list		= LIST_HEAD_INIT(vecnet_mc.list),
	.name		= "vec",
	.config		= vecnet_mc_config,
	.id		= vecnet_mc_id,
	.remove		= vecnet_mc_remove,
};

static int __init vecnet_mc_init(void)
{
	mconsole_register_dev(&vecnet_mc);
	return 0;
}
device_initcall(vecnet_mc_init);
