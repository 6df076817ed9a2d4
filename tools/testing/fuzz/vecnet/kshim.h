/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kshim.h - just enough of the kernel's interfaces to build the vecnet
 * driver's option parser (vecnet_parse.c) and tunnel header checks
 * (vecnet_encap.c) as ordinary host code for libFuzzer. Every
 * include/linux/ header here is this file. The helpers keep the kernel's
 * contracts (return values, what they accept) as far as these two files
 * rely on them.
 */
#ifndef VECNET_FUZZ_KSHIM_H
#define VECNET_FUZZ_KSHIM_H

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int32_t s32;
typedef u64 netdev_features_t;
typedef struct { u64 v; } u64_stats_t;
typedef struct { int unused; } spinlock_t;
typedef struct { long v; } atomic_long_t;
typedef int netdev_tx_t;

struct u64_stats_sync { int unused; };
struct list_head { struct list_head *next, *prev; };
struct napi_struct { int unused; };
struct hrtimer { int unused; };
struct delayed_work { int unused; };
struct work_struct { int unused; };
struct net_device;
struct sk_buff;

/* vecnet.h's inline wake-up, never called by the parsers */
static inline void atomic_long_or(long v, atomic_long_t *a)
{
	a->v |= v;
}

static inline void napi_schedule(struct napi_struct *n)
{
	(void)n;
}

/* the newest series the driver builds for: vecnet_compat.h adds nothing */
#define KERNEL_VERSION(a, b, c)	(((a) << 16) + ((b) << 8) + (c))
#define LINUX_VERSION_CODE	KERNEL_VERSION(7, 3, 0)
#define U32_MAX			UINT32_MAX
#define ETH_ALEN		6
#define ETH_HLEN		14
#define ETH_MIN_MTU		68
#define ETH_DATA_LEN		1500
#define ETH_GSTRING_LEN		32
#define VLAN_HLEN		4
#define USEC_PER_SEC		1000000L
#define MAX_SKB_FRAGS		17
#define GSO_LEGACY_MAX_SIZE	65536
#ifndef IPPROTO_L2TP
#define IPPROTO_L2TP		115
#endif
#define GFP_KERNEL		0
#define BIT(n)			(1UL << (n))
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define __counted_by(m)
#define __printf(a, b)		__attribute__((format(printf, a, b)))
#define min_t(t, a, b)		((t)(a) < (t)(b) ? (t)(a) : (t)(b))
/* the guest the parser runs in: two CPUs, so queues= above 2 is refused */
#define num_possible_cpus()	2U
#define struct_size(p, m, n)	(sizeof(*(p)) + (n) * sizeof((p)->m[0]))
#define netdev_err(dev, ...)	((void)(dev))

static inline void *kzalloc(size_t n, int gfp)
{
	(void)gfp;
	return calloc(1, n);
}

static inline char *kstrdup(const char *s, int gfp)
{
	(void)gfp;
	return strdup(s);
}

static inline void kfree(const void *p)
{
	free((void *)p);
}

/*
 * The kernel's kstrtoull: an optional '+', for base 16 an optional "0x",
 * at least one digit, one trailing newline at most; -ERANGE on overflow,
 * -EINVAL for anything else.
 */
static inline int kstrtou64(const char *s, unsigned int base, u64 *res)
{
	u64 v = 0;
	int d, n = 0;

	if (*s == '+')
		s++;
	if (base == 16 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	for (; *s; s++, n++) {
		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			break;
		if (d >= (int)base)
			break;
		if (v > (UINT64_MAX - d) / base)
			return -ERANGE;
		v = v * base + d;
	}
	if (*s == '\n')
		s++;
	if (!n || *s)
		return -EINVAL;
	*res = v;
	return 0;
}

static inline int kstrtou32(const char *s, unsigned int base, u32 *res)
{
	u64 v;
	int ret = kstrtou64(s, base, &v);

	if (ret)
		return ret;
	if (v > UINT32_MAX)
		return -ERANGE;
	*res = v;
	return 0;
}

/* Only the way vecnet calls them: whole NUL-terminated strings */
static inline int in4_pton(const char *s, int len, u8 *dst, int delim,
			   const char **end)
{
	(void)len; (void)delim; (void)end;
	return inet_pton(AF_INET, s, dst) == 1;
}

static inline int in6_pton(const char *s, int len, u8 *dst, int delim,
			   const char **end)
{
	(void)len; (void)delim; (void)end;
	return inet_pton(AF_INET6, s, dst) == 1;
}

static inline int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* "xx:xx:xx:xx:xx:xx"; like the kernel's, it reads no further */
static inline bool mac_pton(const char *s, u8 *mac)
{
	int i, hi, lo;

	if (strnlen(s, 17) < 17)
		return false;
	for (i = 0; i < ETH_ALEN; i++) {
		hi = hex_digit(s[i * 3]);
		lo = hex_digit(s[i * 3 + 1]);
		if (hi < 0 || lo < 0)
			return false;
		if (i != ETH_ALEN - 1 && s[i * 3 + 2] != ':')
			return false;
	}
	for (i = 0; i < ETH_ALEN; i++)
		mac[i] = hex_digit(s[i * 3]) << 4 | hex_digit(s[i * 3 + 1]);
	return true;
}

static inline bool is_valid_ether_addr(const u8 *a)
{
	return !(a[0] & 1) && (a[0] | a[1] | a[2] | a[3] | a[4] | a[5]);
}

static inline u16 get_unaligned_be16(const void *p)
{
	const u8 *b = p;

	return b[0] << 8 | b[1];
}

static inline u32 get_unaligned_be32(const void *p)
{
	const u8 *b = p;

	return (u32)b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3];
}

static inline u64 get_unaligned_be64(const void *p)
{
	return (u64)get_unaligned_be32(p) << 32 |
	       get_unaligned_be32((const u8 *)p + 4);
}

static inline void put_unaligned_be16(u16 v, void *p)
{
	u8 *b = p;

	b[0] = v >> 8;
	b[1] = v;
}

static inline void put_unaligned_be32(u32 v, void *p)
{
	put_unaligned_be16(v >> 16, p);
	put_unaligned_be16(v, (u8 *)p + 2);
}

static inline void put_unaligned_be64(u64 v, void *p)
{
	put_unaligned_be32(v >> 32, p);
	put_unaligned_be32(v, (u8 *)p + 4);
}

#endif
