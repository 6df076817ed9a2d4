// SPDX-License-Identifier: GPL-2.0
/*
 * vecnet: device specifications, "N:transport=T,key=value,...".
 *
 * Everything is checked here, before a device exists: unknown and
 * repeated keys, numbers, ranges, addresses and required keys.  The
 * first problem found is reported once, naming the device, the option
 * and the reason, and the device is not created.
 */

#include <linux/cpumask.h>
#include <linux/hex.h>
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/inet.h>
#include "vecnet.h"
#include "vecnet_parse.h"
#include "vecnet_transport.h"

static const struct vecnet_key vecnet_common_keys[] = {
	{ .name = "transport", .type = VECNET_KEY_STR, .max = 16,
	  .required = true },
	{ .name = "depth", .type = VECNET_KEY_U32,
	  .min = 1, .max = VECNET_DEPTH_MAX },
	{ .name = "mtu", .type = VECNET_KEY_U32,
	  .min = ETH_MIN_MTU, .max = VECNET_MTU_MAX },
	{ .name = "headroom", .type = VECNET_KEY_U32,
	  .min = 0, .max = VECNET_HEADROOM_MAX },
	{ .name = "vec", .type = VECNET_KEY_BOOL, .max = 1 },
	{ .name = "queues", .type = VECNET_KEY_U32,
	  .min = 1, .max = VECNET_QUEUES_MAX },
	{ .name = "mac", .type = VECNET_KEY_MAC },
	{ }
};

static const struct vecnet_transport * const vecnet_transports[] = {
	&vecnet_unixdgram,
	&vecnet_tap,
	&vecnet_raw,
	&vecnet_hybrid,
	&vecnet_bess,
	&vecnet_fd,
	&vecnet_gre,
	&vecnet_l2tpv3,
};

/* Names the bundled driver knows; they arrive here as they are written */
static const char * const vecnet_transports_later[] = {
	"vde",
};

void vecnet_err_set(struct vecnet_err *err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
}

void vecnet_args_free(struct vecnet_args *args)
{
	if (!args)
		return;
	kfree(args->buf);
	kfree(args);
}

static const struct vecnet_kv *vecnet_arg_find(const struct vecnet_args *args,
					       const char *key)
{
	unsigned int i;

	for (i = 0; i < args->n; i++)
		if (!strcmp(args->kv[i].key, key))
			return &args->kv[i];
	return NULL;
}

/* Hex with 0x, else decimal: a leading zero does not mean octal here */
static int vecnet_strtou64(const char *s, u64 *val)
{
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		return kstrtou64(s + 2, 16, val);
	return kstrtou64(s, 10, val);
}

static int vecnet_strtou32(const char *s, u32 *val)
{
	u64 v;
	int ret = vecnet_strtou64(s, &v);

	if (ret)
		return ret;
	if (v > U32_MAX)
		return -ERANGE;
	*val = v;
	return 0;
}

/* The address in network order into @addr; 4 or 16 (its size), else 0 */
static int vecnet_pton(const char *s, u8 *addr)
{
	if (in4_pton(s, -1, addr, -1, NULL))
		return 4;
	if (in6_pton(s, -1, addr, -1, NULL))
		return 16;
	return 0;
}

const char *vecnet_arg_str(const struct vecnet_args *args, const char *key)
{
	const struct vecnet_kv *kv = vecnet_arg_find(args, key);

	return kv ? kv->val : NULL;
}

/* Only for keys vecnet_parse() has already checked */
u32 vecnet_arg_u32(const struct vecnet_args *args, const char *key, u32 def)
{
	const struct vecnet_kv *kv = vecnet_arg_find(args, key);
	u32 val;

	if (!kv || vecnet_strtou32(kv->val, &val))
		return def;
	return val;
}

/* Only for keys vecnet_parse() has already checked */
u64 vecnet_arg_u64(const struct vecnet_args *args, const char *key, u64 def)
{
	const struct vecnet_kv *kv = vecnet_arg_find(args, key);
	u64 val;

	if (!kv || vecnet_strtou64(kv->val, &val))
		return def;
	return val;
}

/* Only for keys vecnet_parse() has already checked: 4, 16, or 0 if absent */
int vecnet_arg_ip(const struct vecnet_args *args, const char *key, u8 *addr)
{
	const struct vecnet_kv *kv = vecnet_arg_find(args, key);

	return kv ? vecnet_pton(kv->val, addr) : 0;
}

static const struct vecnet_key *vecnet_key_find(const struct vecnet_key *tbl,
						const char *name)
{
	for (; tbl && tbl->name; tbl++)
		if (!strcmp(tbl->name, name))
			return tbl;
	return NULL;
}

/* The message for a number that did not parse (@ret from kstrtou64) */
static int vecnet_number_err(int ret, unsigned int bits,
			     const struct vecnet_key *k, const char *val,
			     const char *dev, struct vecnet_err *err)
{
	if (ret == -ERANGE)
		vecnet_err_set(err, "%s: option '%s': '%s' does not fit in %u bits",
			       dev, k->name, val, bits);
	else if (ret)
		vecnet_err_set(err,
			       "%s: option '%s': '%s' is not a number (decimal or 0x hex)",
			       dev, k->name, val);
	return ret;
}

static int vecnet_check_value(const struct vecnet_key *k, const char *val,
			      const char *dev, struct vecnet_err *err)
{
	u8 mac[ETH_ALEN], ip[16];
	u64 num64;
	u32 num;
	int ret;

	switch (k->type) {
	case VECNET_KEY_U64:
		ret = vecnet_strtou64(val, &num64);
		return vecnet_number_err(ret, 64, k, val, dev, err);
	case VECNET_KEY_IP:
		if (!vecnet_pton(val, ip)) {
			vecnet_err_set(err,
				       "%s: option '%s': '%s' is not an IPv4 or IPv6 address",
				       dev, k->name, val);
			return -EINVAL;
		}
		return 0;
	case VECNET_KEY_U32:
	case VECNET_KEY_BOOL:
		ret = vecnet_strtou32(val, &num);
		if (ret)
			return vecnet_number_err(ret, 32, k, val, dev, err);
		if (num < k->min || num > k->max) {
			vecnet_err_set(err, "%s: option '%s': %u is out of range %u..%u",
				       dev, k->name, num, k->min, k->max);
			return -ERANGE;
		}
		return 0;
	case VECNET_KEY_STR:
		if (strlen(val) > k->max) {
			vecnet_err_set(err, "%s: option '%s': longer than %u bytes",
				       dev, k->name, k->max);
			return -ENAMETOOLONG;
		}
		return 0;
	case VECNET_KEY_MAC:
		if (strlen(val) != 17 || !mac_pton(val, mac)) {
			vecnet_err_set(err,
				       "%s: option '%s': '%s' is not an address like 02:00:00:00:00:01",
				       dev, k->name, val);
			return -EINVAL;
		}
		if (!is_valid_ether_addr(mac)) {
			vecnet_err_set(err, "%s: option '%s': %s is not a unicast address",
				       dev, k->name, val);
			return -EINVAL;
		}
		return 0;
	}
	return -EINVAL;
}

/* Split "k=v,k=v" in place; no limit on the number of pairs */
static struct vecnet_args *vecnet_split(const char *opts, const char *dev,
					struct vecnet_err *err)
{
	struct vecnet_args *args;
	unsigned int n = 1, i;
	char *buf, *p, *tok;

	buf = kstrdup(opts, GFP_KERNEL);
	if (!buf)
		goto nomem;
	for (p = buf; *p; p++)
		n += *p == ',';

	args = kzalloc(struct_size(args, kv, n), GFP_KERNEL);
	if (!args) {
		kfree(buf);
		goto nomem;
	}
	args->buf = buf;
	args->n = n;

	p = buf;
	for (i = 0; i < n; i++) {
		char *eq;

		tok = strsep(&p, ",");
		eq = strchr(tok, '=');
		if (!*tok) {
			vecnet_err_set(err, "%s: empty option (two commas, or one at the end)",
				       dev);
			goto bad;
		}
		if (!eq || eq == tok) {
			vecnet_err_set(err, "%s: option '%s' is not key=value",
				       dev, tok);
			goto bad;
		}
		*eq = '\0';
		if (!eq[1]) {
			vecnet_err_set(err, "%s: option '%s': no value", dev, tok);
			goto bad;
		}
		args->kv[i].key = tok;
		args->kv[i].val = eq + 1;
	}
	return args;

bad:
	vecnet_args_free(args);
	return NULL;
nomem:
	vecnet_err_set(err, "%s: out of memory", dev);
	return NULL;
}

static int vecnet_find_transport(const char *name, const char *dev,
				 struct vecnet_config *cfg,
				 struct vecnet_err *err)
{
	unsigned int i;

	/* Whole names only: "unix" is not "unixdgram", "tapx" is not "tap" */
	for (i = 0; i < ARRAY_SIZE(vecnet_transports); i++) {
		if (!strcmp(vecnet_transports[i]->name, name)) {
			cfg->transport = vecnet_transports[i];
			return 0;
		}
	}
	for (i = 0; i < ARRAY_SIZE(vecnet_transports_later); i++) {
		if (!strcmp(vecnet_transports_later[i], name)) {
			vecnet_err_set(err,
				       "%s: option 'transport': '%s' is not supported by this driver yet",
				       dev, name);
			return -EOPNOTSUPP;
		}
	}
	vecnet_err_set(err, "%s: option 'transport': unknown transport '%s'",
		       dev, name);
	return -EINVAL;
}

static int vecnet_check_args(const struct vecnet_args *args, const char *dev,
			     const struct vecnet_transport *t,
			     struct vecnet_err *err)
{
	const struct vecnet_key *k;
	unsigned int i, j;
	int ret;

	for (i = 0; i < args->n; i++) {
		const char *key = args->kv[i].key;

		for (j = 0; j < i; j++) {
			if (!strcmp(args->kv[j].key, key)) {
				vecnet_err_set(err, "%s: option '%s': given more than once",
					       dev, key);
				return -EINVAL;
			}
		}
		k = vecnet_key_find(vecnet_common_keys, key);
		if (!k)
			k = vecnet_key_find(t->keys, key);
		if (!k) {
			vecnet_err_set(err, "%s: option '%s': unknown for transport %s",
				       dev, key, t->name);
			return -EINVAL;
		}
		ret = vecnet_check_value(k, args->kv[i].val, dev, err);
		if (ret)
			return ret;
	}
	for (k = t->keys; k && k->name; k++) {
		if (k->required && !vecnet_arg_find(args, k->name)) {
			vecnet_err_set(err, "%s: option '%s': required by transport %s",
				       dev, k->name, t->name);
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * @spec is "N:options" from the command line or "N=options" from
 * mconsole's "config vecN=options"; both separators are taken.
 */
int vecnet_parse(const char *spec, struct vecnet_config *cfg,
		 struct vecnet_err *err)
{
	const struct vecnet_transport *t;
	struct vecnet_args *args;
	size_t idx_len;
	char idx[12];
	char dev[16];
	int ret;

	memset(cfg, 0, sizeof(*cfg));
	idx_len = strcspn(spec, ":=");
	if (!spec[idx_len]) {
		vecnet_err_set(err, "vec%s: expected vecN:transport=...", spec);
		return -EINVAL;
	}
	if (!idx_len || idx_len >= sizeof(idx)) {
		vecnet_err_set(err, "vec%.*s: bad device number",
			       (int)min_t(size_t, idx_len, 16), spec);
		return -EINVAL;
	}
	memcpy(idx, spec, idx_len);
	idx[idx_len] = '\0';
	if (kstrtou32(idx, 10, &cfg->index) || cfg->index > 99999) {
		vecnet_err_set(err, "vec%s: bad device number (0..99999)", idx);
		return -EINVAL;
	}
	snprintf(dev, sizeof(dev), "vec%u", cfg->index);

	if (!spec[idx_len + 1]) {
		vecnet_err_set(err, "%s: no options, expected transport=...", dev);
		return -EINVAL;
	}
	args = vecnet_split(spec + idx_len + 1, dev, err);
	if (!args)
		return -EINVAL;

	if (!vecnet_arg_find(args, "transport")) {
		vecnet_err_set(err, "%s: option 'transport': required", dev);
		ret = -EINVAL;
		goto bad;
	}
	ret = vecnet_find_transport(vecnet_arg_str(args, "transport"), dev,
				    cfg, err);
	if (ret)
		goto bad;
	t = cfg->transport;
	ret = vecnet_check_args(args, dev, t, err);
	if (ret)
		goto bad;

	cfg->args = args;
	cfg->rx_depth = vecnet_arg_u32(args, "depth", VECNET_DEPTH_DEFAULT);
	cfg->tx_depth = cfg->rx_depth;
	cfg->mtu = vecnet_arg_u32(args, "mtu", ETH_DATA_LEN);
	cfg->headroom = vecnet_arg_u32(args, "headroom",
				       VECNET_HEADROOM_DEFAULT);
	cfg->vec = vecnet_arg_u32(args, "vec", 1);
	if (vecnet_arg_str(args, "mac")) {
		mac_pton(vecnet_arg_str(args, "mac"), cfg->mac);
		cfg->have_mac = true;
	}
	cfg->queues = vecnet_arg_u32(args, "queues", 1);
	cfg->max_queues = 1;
	if (t->flags & VECNET_TF_MQ)
		cfg->max_queues = min_t(u32, num_possible_cpus(),
					VECNET_QUEUES_MAX);
	if (cfg->queues > 1 && !(t->flags & VECNET_TF_MQ)) {
		vecnet_err_set(err, "%s: option 'queues': transport %s has one queue",
			       dev, t->name);
		ret = -EINVAL;
		goto bad;
	}
	if (cfg->queues > cfg->max_queues) {
		vecnet_err_set(err, "%s: option 'queues': %u is more than the guest's %u CPUs",
			       dev, cfg->queues, cfg->max_queues);
		ret = -ERANGE;
		goto bad;
	}
	if (cfg->mtu > t->max_mtu) {
		vecnet_err_set(err, "%s: option 'mtu': %u is out of range %u..%u for transport %s",
			       dev, cfg->mtu, ETH_MIN_MTU, t->max_mtu, t->name);
		ret = -ERANGE;
		goto bad;
	}
	return 0;

bad:
	vecnet_args_free(args);
	cfg->args = NULL;
	return ret;
}
