// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_conf.c - a --config file's lines through the command line's table
 * and checks.  A file is refused or taken; one that is taken leaves every
 * value within its option's range, every socket path one a unix socket can
 * have, and every string value a piece of one line of the file, without
 * the blanks around it.
 *
 * Input: the file's bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"

/* a string value: inside the text, on one line, no blank at either end */
static void check_value(const char *v, const char *text, size_t len)
{
	size_t n;

	if (!v)
		return;
	FZ_ASSERT(v >= text && v < text + len);
	n = strlen(v);
	FZ_ASSERT(n > 0 && v + n <= text + len);
	FZ_ASSERT(!memchr(v, '\n', n));
	FZ_ASSERT(v[0] != ' ' && v[0] != '\t');
	FZ_ASSERT(v[n - 1] != ' ' && v[n - 1] != '\t' && v[n - 1] != '\r');
}

static void check_path(const char *path, const char *text, size_t len)
{
	struct sockaddr_un sa;
	socklen_t salen;

	check_value(path, text, len);
	FZ_ASSERT(!path || vs_sockaddr_un(&sa, &salen, path) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *quiet;
	struct vs_config cfg;
	char *text;
	unsigned int i;

	/* every refused line says why: not the fuzzer's business */
	if (!quiet)
		quiet = fopen("/dev/null", "w");
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	vs_conf_defaults(&cfg);
	if (vs_conf_lines(&cfg, "fuzz.conf", text, size, quiet) == 0) {
		check_path(cfg.dgram_path, text, size);
		check_path(cfg.vnet_path, text, size);
		check_path(cfg.stream_path, text, size);
		check_path(cfg.seqpacket_path, text, size);
		check_path(cfg.vhost_path, text, size);
		check_path(cfg.ctl_path, text, size);
		check_value(cfg.tap_name, text, size);
		FZ_ASSERT(!cfg.tap_name || strlen(cfg.tap_name) < 16);
		FZ_ASSERT(cfg.sock_mode <= 0777 && cfg.ctl_mode <= 0777);
		FZ_ASSERT(cfg.max_frame >= 60 && cfg.max_frame <= VS_MAX_FRAME_LIMIT);
		FZ_ASSERT(cfg.queue_len >= 1 && cfg.queue_len <= 65536);
		FZ_ASSERT(cfg.max_ports >= 1 && cfg.max_ports <= 4096);
		FZ_ASSERT(cfg.fdb_max >= 1 && cfg.fdb_max <= 1 << 20);
		FZ_ASSERT(cfg.max_memory >= 1);
		FZ_ASSERT(cfg.n_allow_uid <= VS_ALLOW_MAX &&
			  cfg.n_allow_gid <= VS_ALLOW_MAX);
		for (i = 0; i < cfg.n_allow_uid; i++)
			FZ_ASSERT(cfg.allow_uid[i] != 0xffffffffu);
		FZ_ASSERT(cfg.n_nat_args <= VS_NAT_ARGS_MAX);
		/* --nat-* names, each with its value but the one flag */
		for (i = 0; i < cfg.n_nat_args; i++) {
			FZ_ASSERT(!strncmp(cfg.nat_args[i], "--nat-", 6));
			if (strcmp(cfg.nat_args[i], "--nat-host-loopback"))
				check_value(cfg.nat_args[++i], text, size);
		}
	}
	free(text);
	return 0;
}
