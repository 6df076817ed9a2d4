// SPDX-License-Identifier: GPL-2.0
/*
 * conf.c - vecnat's command line: the guest network, its IPv6 prefix, the
 * DNS address and the port forwards.  Every bad value ends the program
 * here, before anything is opened, with a line naming the option and
 * exit status 2; vecswitch passes its --nat-* options on as they are.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vecnat.h"

static void usage(FILE *f)
{
	fprintf(f,
"usage: vecnat (--fd N | --connect PATH) [options]\n"
"\n"
"One port of vecswitch that NATs its guests to the host's network.\n"
"  --fd N               a datagram socket already connected to the switch\n"
"  --connect PATH       connect to the switch's --dgram socket PATH instead\n"
"The guest network, with the same options as vecswitch's:\n"
"  --nat-net CIDR       IPv4 network, /8 to /27 (default 10.0.2.0/24);\n"
"                       gateway .2, DNS .3, leases from .15\n"
"  --nat-net6 PREFIX/64 IPv6 prefix (default fd00::/64), or off\n"
"  --nat-dns ADDR       the DNS forwarder's address in the network\n"
"  --nat-host-loopback  guests reach the host's 127.0.0.1 at the gateway\n"
"  --nat-forward SPEC   tcp|udp:[HOSTADDR:]HOSTPORT:GUESTADDR:GUESTPORT,\n"
"                       HOSTADDR 127.0.0.1 unless given, [::1] for an IPv6\n"
"                       GUESTADDR; IPv6 in brackets (repeatable)\n"
"  --ready-fd N         write one byte to N once running\n"
"  --ctl-fd N           a socket taking 'add|del SPEC', 'list', 'stats'\n"
"  --again              a restart: a forward that cannot listen is left out\n"
"  -v, --verbose        log more\n"
"  -h, --help           this text\n");
}

static void __attribute__((noreturn, format(printf, 2, 3)))
bad_opt(const char *opt, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "vecnat: %s: ", opt);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(NAT_EXIT_USAGE);
}

static unsigned long parse_num(const char *opt, const char *s,
			       unsigned long min, unsigned long max)
{
	unsigned long v;
	char *end;

	errno = 0;
	if (s[0] < '0' || s[0] > '9')
		bad_opt(opt, "'%s' is not a number", s);
	v = strtoul(s, &end, 10);
	if (*end || errno || v < min || v > max)
		bad_opt(opt, "'%s' is not a number in %lu..%lu", s, min, max);
	return v;
}

static uint32_t host_of(struct in_addr a)
{
	return ntohl(a.s_addr);
}

static struct in_addr addr_of(uint32_t h)
{
	struct in_addr a = { .s_addr = htonl(h) };

	return a;
}

static bool in_net(const struct nat_config *cfg, struct in_addr a)
{
	return (a.s_addr & cfg->mask.s_addr) == cfg->net.s_addr;
}

static bool net_edge(const struct nat_config *cfg, struct in_addr a)
{
	return a.s_addr == cfg->net.s_addr ||
	       a.s_addr == (cfg->net.s_addr | ~cfg->mask.s_addr);
}

/* "A.B.C.D/N": a /27 at the widest, so that .15 and 16 leases fit */
static void parse_net(struct nat_config *cfg, const char *arg)
{
	char buf[32], *slash;

	if (strlen(arg) >= sizeof(buf))
		bad_opt("--nat-net", "'%s' is not A.B.C.D/PREFIX", arg);
	strcpy(buf, arg);
	slash = strchr(buf, '/');
	if (!slash)
		bad_opt("--nat-net", "'%s' has no /PREFIX", arg);
	*slash = '\0';
	if (inet_pton(AF_INET, buf, &cfg->net) != 1)
		bad_opt("--nat-net", "'%s' is not an IPv4 address", buf);
	if (slash[1] < '0' || slash[1] > '9' || strtoul(slash + 1, NULL, 10) < 8 ||
	    strtoul(slash + 1, NULL, 10) > 27)
		bad_opt("--nat-net", "'%s': the prefix must be 8..27 (16 leases from .15 must fit)",
			arg);
	cfg->prefix = parse_num("--nat-net", slash + 1, 8, 27);
	cfg->mask = addr_of(~0u << (32 - cfg->prefix));
	if (cfg->net.s_addr & ~cfg->mask.s_addr)
		bad_opt("--nat-net", "'%s' has host bits set", arg);
}

static void parse_net6(struct nat_config *cfg, const char *arg)
{
	char buf[64], *slash;
	unsigned int i;

	if (!strcmp(arg, "off")) {
		cfg->v6 = false;
		return;
	}
	if (strlen(arg) >= sizeof(buf))
		bad_opt("--nat-net6", "'%s' is not PREFIX/64", arg);
	strcpy(buf, arg);
	slash = strchr(buf, '/');
	if (!slash || strcmp(slash, "/64"))
		bad_opt("--nat-net6",
			"'%s': give a /64 prefix (guests configure themselves by SLAAC)",
			arg);
	*slash = '\0';
	if (inet_pton(AF_INET6, buf, &cfg->net6) != 1)
		bad_opt("--nat-net6", "'%s' is not an IPv6 address", buf);
	for (i = 8; i < 16; i++)
		if (cfg->net6.s6_addr[i])
			bad_opt("--nat-net6", "'%s' has host bits set", arg);
	if (cfg->net6.s6_addr[0] == 0xff || IN6_IS_ADDR_UNSPECIFIED(&cfg->net6) ||
	    IN6_IS_ADDR_LINKLOCAL(&cfg->net6))
		bad_opt("--nat-net6", "'%s' cannot be a guest network", arg);
	cfg->v6 = true;
}

/* The addresses the network implies, once the options are all read */
static void derive(struct nat_config *cfg, const char *dns)
{
	uint32_t net = host_of(cfg->net);

	cfg->gw = addr_of(net + 2);
	cfg->dhcp_start = addr_of(net + 15);
	if (!dns) {
		cfg->dns = addr_of(net + 3);
	} else {
		if (inet_pton(AF_INET, dns, &cfg->dns) != 1)
			bad_opt("--nat-dns", "'%s' is not an IPv4 address", dns);
		if (!in_net(cfg, cfg->dns) || net_edge(cfg, cfg->dns) ||
		    cfg->dns.s_addr == cfg->gw.s_addr)
			bad_opt("--nat-dns", "%s is not a free address of the guest network", dns);
	}
	cfg->gw6 = cfg->net6;
	cfg->gw6.s6_addr[15] = 2;
	cfg->dns6 = cfg->net6;
	cfg->dns6.s6_addr[15] = 3;
}

/*
 * Split @buf at the colons that are not inside brackets, in place; the
 * number of fields, or -1 for more than @max or a bracket not closed
 * before a colon or the end
 */
static int split_spec(char *buf, char **field, int max)
{
	char *p = buf;
	int n = 0;

	for (;;) {
		if (n == max)
			return -1;
		field[n++] = p;
		if (*p == '[') {
			p = strchr(p, ']');
			if (!p || (p[1] && p[1] != ':'))
				return -1;
			p++;
		} else {
			p += strcspn(p, ":");
		}
		if (!*p)
			return n;
		*p++ = '\0';
	}
}

/*
 * An address of a spec: "[IPv6]" or IPv4.  1 for IPv6, 0 for IPv4, -1
 * for neither
 */
static int spec_addr(char *s, struct in_addr *a, struct in6_addr *a6)
{
	size_t len = strlen(s);

	if (s[0] != '[')
		return inet_pton(AF_INET, s, a) == 1 ? 0 : -1;
	if (len < 3 || s[len - 1] != ']')
		return -1;
	s[len - 1] = '\0';
	return inet_pton(AF_INET6, s + 1, a6) == 1 ? 1 : -1;
}

/*
 * tcp|udp:[HOSTADDR:]HOSTPORT:GUESTADDR:GUESTPORT into @f; NULL, or what
 * is wrong with it
 */
const char *nat_fwd_parse(const struct nat_config *cfg, const char *spec,
			  struct nat_fwd *f)
{
	char buf[NAT_SPEC_LEN], *field[6], *end;
	unsigned long port[2];
	int n, i, host = -1, guest;

	if (strlen(spec) >= sizeof(buf))
		return "too long";
	strcpy(buf, spec);
	n = split_spec(buf, field, ARRAY_LEN(field));
	if (n != 4 && n != 5)
		return "not tcp|udp:[HOSTADDR:]HOSTPORT:GUESTADDR:GUESTPORT";
	memset(f, 0, sizeof(*f));
	if (!strcmp(field[0], "udp"))
		f->udp = true;
	else if (strcmp(field[0], "tcp"))
		return "the protocol must be tcp or udp";
	if (n == 5) {
		host = spec_addr(field[1], &f->host, &f->host6);
		if (host < 0)
			return "the host address is not IPv4 or [IPv6]";
	}
	guest = spec_addr(field[n - 2], &f->guest, &f->guest6);
	if (guest < 0)
		return "the guest address is not IPv4 or [IPv6]";
	if (host >= 0 && host != guest)
		return "the host and guest addresses must both be IPv4 or both IPv6";
	f->v6 = guest;
	/* the host's own loopback by default: a forward is for its users */
	if (host < 0 && f->v6)
		f->host6 = in6addr_loopback;
	else if (host < 0)
		f->host.s_addr = htonl(INADDR_LOOPBACK);
	for (i = 0; i < 2; i++) {
		const char *s = field[i ? n - 1 : n - 3];

		errno = 0;
		port[i] = strtoul(s, &end, 10);
		if (s[0] < '0' || s[0] > '9' || *end || errno || !port[i] ||
		    port[i] > 65535)
			return i ? "the guest port is not 1..65535" :
				   "the host port is not 1..65535";
	}
	f->host_port = port[0];
	f->guest_port = port[1];
	return nat_fwd_check(cfg, f);
}

/* Is @f's guest an address a guest of the network may have? */
const char *nat_fwd_check(const struct nat_config *cfg,
			  const struct nat_fwd *f)
{
	static const uint8_t zero_iid[8];

	if (f->v6) {
		if (!cfg->v6)
			return "the NAT network has no IPv6 (--nat-net6 off)";
		/* the prefix is a /64: the first 8 bytes */
		if (memcmp(&f->guest6, &cfg->net6, 8))
			return "the guest address is outside the NAT network's IPv6 prefix";
		/* the prefix itself (the routers' anycast), gateway, DNS */
		if (!memcmp(f->guest6.s6_addr + 8, zero_iid, sizeof(zero_iid)) ||
		    !memcmp(&f->guest6, &cfg->gw6, sizeof(f->guest6)) ||
		    !memcmp(&f->guest6, &cfg->dns6, sizeof(f->guest6)))
			return "the guest address is the network's own, not a guest's";
		return NULL;
	}
	if (!in_net(cfg, f->guest))
		return "the guest address is outside the NAT network";
	if (net_edge(cfg, f->guest) || f->guest.s_addr == cfg->gw.s_addr ||
	    f->guest.s_addr == cfg->dns.s_addr)
		return "the guest address is the network's own, not a guest's";
	return NULL;
}

void nat_fwd_str(const struct nat_fwd *f, char *out, size_t len)
{
	char h[INET6_ADDRSTRLEN], g[INET6_ADDRSTRLEN];

	if (f->v6) {
		inet_ntop(AF_INET6, &f->host6, h, sizeof(h));
		inet_ntop(AF_INET6, &f->guest6, g, sizeof(g));
		snprintf(out, len, "%s:[%s]:%u:[%s]:%u", f->udp ? "udp" : "tcp",
			 h, f->host_port, g, f->guest_port);
		return;
	}
	inet_ntop(AF_INET, &f->host, h, sizeof(h));
	inet_ntop(AF_INET, &f->guest, g, sizeof(g));
	snprintf(out, len, "%s:%s:%u:%s:%u", f->udp ? "udp" : "tcp", h,
		 f->host_port, g, f->guest_port);
}

/*
 * The index of the forward that holds @f's host port (the same protocol,
 * family and port, on the same address or where either is every
 * address); -1.  IPv6 forwards listen on IPv6 alone.
 */
int nat_fwd_find(const struct nat_config *cfg, const struct nat_fwd *f)
{
	unsigned int i;

	for (i = 0; i < cfg->nfwd; i++) {
		const struct nat_fwd *o = &cfg->fwd[i];

		if (o->udp != f->udp || o->v6 != f->v6 ||
		    o->host_port != f->host_port)
			continue;
		if (f->v6 ? !memcmp(&o->host6, &f->host6, sizeof(f->host6)) ||
			    IN6_IS_ADDR_UNSPECIFIED(&o->host6) ||
			    IN6_IS_ADDR_UNSPECIFIED(&f->host6) :
			    o->host.s_addr == f->host.s_addr || !o->host.s_addr ||
			    !f->host.s_addr)
			return i;
	}
	return -1;
}

enum {
	OPT_FD = 256,
	OPT_CONNECT,
	OPT_NET,
	OPT_NET6,
	OPT_DNS,
	OPT_HOST_LOOPBACK,
	OPT_FORWARD,
	OPT_READY_FD,
	OPT_CTL_FD,
	OPT_AGAIN,
};

static const struct option long_opts[] = {
	{ "fd",			required_argument,	NULL, OPT_FD },
	{ "connect",		required_argument,	NULL, OPT_CONNECT },
	{ "nat-net",		required_argument,	NULL, OPT_NET },
	{ "nat-net6",		required_argument,	NULL, OPT_NET6 },
	{ "nat-dns",		required_argument,	NULL, OPT_DNS },
	{ "nat-host-loopback",	no_argument,		NULL, OPT_HOST_LOOPBACK },
	{ "nat-forward",		required_argument,	NULL, OPT_FORWARD },
	{ "ready-fd",		required_argument,	NULL, OPT_READY_FD },
	{ "ctl-fd",		required_argument,	NULL, OPT_CTL_FD },
	{ "again",		no_argument,		NULL, OPT_AGAIN },
	{ "verbose",		no_argument,		NULL, 'v' },
	{ "help",		no_argument,		NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

void nat_conf_parse(struct nat_config *cfg, int argc, char **argv)
{
	const char *specs[NAT_FWD_MAX], *dns = NULL;
	unsigned int nspec = 0, i;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":vh", long_opts, NULL)) != -1) {
		const char *name = argv[optind - 1];

		switch (c) {
		case OPT_FD:
			cfg->fd = parse_num("--fd", optarg, 0, 65535);
			break;
		case OPT_CONNECT:
			cfg->connect_path = optarg;
			break;
		case OPT_NET:
			parse_net(cfg, optarg);
			break;
		case OPT_NET6:
			parse_net6(cfg, optarg);
			break;
		case OPT_DNS:
			dns = optarg;
			break;
		case OPT_HOST_LOOPBACK:
			cfg->host_loopback = true;
			break;
		case OPT_FORWARD:
			if (nspec == NAT_FWD_MAX)
				bad_opt("--nat-forward", "more than %d forwards", NAT_FWD_MAX);
			specs[nspec++] = optarg;
			break;
		case OPT_READY_FD:
			cfg->ready_fd = parse_num("--ready-fd", optarg, 0, 65535);
			break;
		case OPT_CTL_FD:
			cfg->ctl_fd = parse_num("--ctl-fd", optarg, 0, 65535);
			break;
		case OPT_AGAIN:
			cfg->again = true;
			break;
		case 'v':
			cfg->verbose++;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case ':':
			bad_opt(name, "needs an argument");
		default:
			bad_opt(name, "unknown option");
		}
	}
	if (optind < argc)
		bad_opt(argv[optind], "unexpected argument");
	if (cfg->fd < 0 ? !cfg->connect_path : !!cfg->connect_path)
		bad_opt("--fd", "give one of --fd and --connect");
	derive(cfg, dns);
	/* forwards last: their guest addresses are checked against --net */
	for (i = 0; i < nspec; i++) {
		struct nat_fwd *f = &cfg->fwd[cfg->nfwd];
		const char *why = nat_fwd_parse(cfg, specs[i], f);

		if (!why && nat_fwd_find(cfg, f) >= 0)
			why = "its host port is forwarded already";
		if (why)
			bad_opt("--nat-forward", "%s: %s", specs[i], why);
		cfg->nfwd++;
	}
}
