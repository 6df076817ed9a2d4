/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fuzz_common.h - what the libFuzzer targets share: a switch built in
 * memory with no sockets, a reader over the fuzzer's bytes, and checks of
 * the switch's invariants that abort (a crash to the fuzzer) when broken.
 */
#ifndef VS_FUZZ_COMMON_H
#define VS_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "vecswitch.h"

/* the entry point libFuzzer calls, one per target */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fz_in {
	const uint8_t *p;
	size_t left;
};

uint8_t fz_u8(struct fz_in *in);
uint16_t fz_u16(struct fz_in *in);
/* Up to n bytes; *got says how many there were. */
const uint8_t *fz_bytes(struct fz_in *in, size_t n, size_t *got);

/* A switch with no sockets; flags (a byte of input) pick its options. */
void fz_switch_init(struct vs_switch *sw, uint8_t flags);
void fz_switch_fini(struct vs_switch *sw);
/* Move the switch's clock forward. */
void fz_advance(struct vs_switch *sw, unsigned int ms);
/* A connected-type port with no fd: frames are fed to it by hand. */
struct vs_port *fz_port(struct vs_switch *sw, const struct vs_port_ops *ops);
/* Take every queued frame off every port as if it had been sent. */
void fz_drain(struct vs_switch *sw);
/* abort() when counters, queues or the table disagree with each other. */
void fz_check(struct vs_switch *sw);
/* Frames that reached vs_forward on p: each is counted exactly once. */
uint64_t fz_forwarded(const struct vs_port *p);

#define FZ_ASSERT(c) do { if (!(c)) fz_fail(#c, __FILE__, __LINE__); } while (0)
void fz_fail(const char *what, const char *file, int line)
	__attribute__((noreturn));

#endif /* VS_FUZZ_COMMON_H */
