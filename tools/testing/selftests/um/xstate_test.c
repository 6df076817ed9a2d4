// SPDX-License-Identifier: GPL-2.0
/*
 * Vector register state must survive everything a UML guest's process can
 * go through: system calls (each one a round trip through ptrace), being
 * preempted and switched out, and signal delivery and return.
 *
 * Several workers load AVX2 (ymm0-15) or AVX-512 (zmm0-31, k0-7) registers
 * with a pattern of their own, make system calls and spin, and compare the
 * registers afterwards.  A sender process fires SIGUSR1 at them all the
 * while; the handler overwrites every vector register, so a signal frame
 * that does not carry the whole XSAVE area lets the handler's values leak
 * into the interrupted code.  The handler also checks the frame's layout:
 * magic1 in the fxsave software area and magic2 right after the
 * xstate_size bytes, as on native x86_64.
 *
 * --self-test proves the checker sees corruption: it clobbers the
 * registers in the middle of a round on purpose and expects a mismatch.
 *
 * Exit: 0 all rounds intact, 1 corruption or bad frame, 4 no AVX2.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include <ucontext.h>

#define KSFT_SKIP 4

/* x86_64 signal frame: software words at the end of the fxsave area */
#define FX_SW_MAGIC1		464
#define FX_SW_EXTENDED_SIZE	468
#define FX_SW_XSTATE_SIZE	480
#define XSTATE_MAGIC1		0x46505853U
#define XSTATE_MAGIC2		0x46505845U
#define XSTATE_MAGIC2_SIZE	4

#define ZMM_BYTES	(32 * 64)
#define K_BYTES		(8 * 8)
#define STATE_BYTES	(ZMM_BYTES + K_BYTES)
#define YMM_BYTES	(16 * 32)

struct opts {
	int workers;
	int rounds;
	int spins;
	int self_test;
};

static volatile sig_atomic_t signals_seen;
static volatile sig_atomic_t bad_frame;
static volatile sig_atomic_t frame_size;
static int have_avx512;

#define LOAD_Z(n)  "vmovdqu64 " #n "*64(%[in]), %%zmm" #n "\n\t"
#define STORE_Z(n) "vmovdqu64 %%zmm" #n ", " #n "*64(%[out])\n\t"
#define LOAD_K(n)  "kmovq 2048+" #n "*8(%[in]), %%k" #n "\n\t"
#define STORE_K(n) "kmovq %%k" #n ", 2048+" #n "*8(%[out])\n\t"
#define LOAD_Y(n)  "vmovdqu " #n "*32(%[in]), %%ymm" #n "\n\t"
#define STORE_Y(n) "vmovdqu %%ymm" #n ", " #n "*32(%[out])\n\t"

#define ALL_Z(op) op(0) op(1) op(2) op(3) op(4) op(5) op(6) op(7) \
	op(8) op(9) op(10) op(11) op(12) op(13) op(14) op(15) \
	op(16) op(17) op(18) op(19) op(20) op(21) op(22) op(23) \
	op(24) op(25) op(26) op(27) op(28) op(29) op(30) op(31)
#define ALL_K(op) op(0) op(1) op(2) op(3) op(4) op(5) op(6) op(7)
#define ALL_Y(op) op(0) op(1) op(2) op(3) op(4) op(5) op(6) op(7) \
	op(8) op(9) op(10) op(11) op(12) op(13) op(14) op(15)

#define ZMM_CLOBBERS "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", \
	"xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", \
	"xmm14", "xmm15", "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", \
	"xmm21", "xmm22", "xmm23", "xmm24", "xmm25", "xmm26", "xmm27", \
	"xmm28", "xmm29", "xmm30", "xmm31", \
	"k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7"
#define YMM_CLOBBERS "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", \
	"xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", \
	"xmm14", "xmm15"

/*
 * Load the registers, then 'spins' times: sched_yield() and a short busy
 * loop (where timer preemption and signals land), optionally clobbering
 * everything half way (self test), then store the registers.
 */
__attribute__((target("avx512f,avx512bw")))
static void round_avx512(const uint8_t *in, uint8_t *out, long spins,
			 const uint8_t *junk)
{
	long half = spins / 2;

	asm volatile(ALL_Z(LOAD_Z) ALL_K(LOAD_K)
		     "1:\n\t"
		     "mov $24, %%eax\n\t"	/* __NR_sched_yield */
		     "syscall\n\t"
		     "mov $2000, %%ecx\n\t"
		     "2: dec %%ecx\n\t"
		     "jnz 2b\n\t"
		     "test %[junk], %[junk]\n\t"
		     "jz 3f\n\t"
		     "cmp %[half], %[n]\n\t"
		     "jne 3f\n\t"
		     "vpternlogd $0xff, %%zmm17, %%zmm17, %%zmm17\n\t"
		     "kxnorq %%k3, %%k3, %%k3\n\t"
		     "vpxor %%xmm5, %%xmm5, %%xmm5\n\t"
		     "3: dec %[n]\n\t"
		     "jnz 1b\n\t"
		     ALL_Z(STORE_Z) ALL_K(STORE_K)
		     : [n] "+r" (spins)
		     : [in] "r" (in), [out] "r" (out), [junk] "r" (junk),
		       [half] "r" (half)
		     : "rax", "rcx", "r11", "memory", "cc", ZMM_CLOBBERS);
}

__attribute__((target("avx2")))
static void round_avx2(const uint8_t *in, uint8_t *out, long spins,
		       const uint8_t *junk)
{
	long half = spins / 2;

	asm volatile(ALL_Y(LOAD_Y)
		     "1:\n\t"
		     "mov $24, %%eax\n\t"
		     "syscall\n\t"
		     "mov $2000, %%ecx\n\t"
		     "2: dec %%ecx\n\t"
		     "jnz 2b\n\t"
		     "test %[junk], %[junk]\n\t"
		     "jz 3f\n\t"
		     "cmp %[half], %[n]\n\t"
		     "jne 3f\n\t"
		     "vpcmpeqd %%ymm9, %%ymm9, %%ymm9\n\t"
		     "3: dec %[n]\n\t"
		     "jnz 1b\n\t"
		     ALL_Y(STORE_Y)
		     : [n] "+r" (spins)
		     : [in] "r" (in), [out] "r" (out), [junk] "r" (junk),
		       [half] "r" (half)
		     : "rax", "rcx", "r11", "memory", "cc", YMM_CLOBBERS);
}

/* The handler's own values: all ones, the likeliest to leak visibly. */
__attribute__((target("avx512f,avx512bw")))
static void clobber_avx512(void)
{
	asm volatile("vpternlogd $0xff, %%zmm0, %%zmm0, %%zmm0\n\t"
		     "vmovdqa64 %%zmm0, %%zmm1\n\t"  "vmovdqa64 %%zmm0, %%zmm2\n\t"
		     "vmovdqa64 %%zmm0, %%zmm3\n\t"  "vmovdqa64 %%zmm0, %%zmm4\n\t"
		     "vmovdqa64 %%zmm0, %%zmm5\n\t"  "vmovdqa64 %%zmm0, %%zmm6\n\t"
		     "vmovdqa64 %%zmm0, %%zmm7\n\t"  "vmovdqa64 %%zmm0, %%zmm8\n\t"
		     "vmovdqa64 %%zmm0, %%zmm9\n\t"  "vmovdqa64 %%zmm0, %%zmm10\n\t"
		     "vmovdqa64 %%zmm0, %%zmm11\n\t" "vmovdqa64 %%zmm0, %%zmm12\n\t"
		     "vmovdqa64 %%zmm0, %%zmm13\n\t" "vmovdqa64 %%zmm0, %%zmm14\n\t"
		     "vmovdqa64 %%zmm0, %%zmm15\n\t" "vmovdqa64 %%zmm0, %%zmm16\n\t"
		     "vmovdqa64 %%zmm0, %%zmm17\n\t" "vmovdqa64 %%zmm0, %%zmm18\n\t"
		     "vmovdqa64 %%zmm0, %%zmm19\n\t" "vmovdqa64 %%zmm0, %%zmm20\n\t"
		     "vmovdqa64 %%zmm0, %%zmm21\n\t" "vmovdqa64 %%zmm0, %%zmm22\n\t"
		     "vmovdqa64 %%zmm0, %%zmm23\n\t" "vmovdqa64 %%zmm0, %%zmm24\n\t"
		     "vmovdqa64 %%zmm0, %%zmm25\n\t" "vmovdqa64 %%zmm0, %%zmm26\n\t"
		     "vmovdqa64 %%zmm0, %%zmm27\n\t" "vmovdqa64 %%zmm0, %%zmm28\n\t"
		     "vmovdqa64 %%zmm0, %%zmm29\n\t" "vmovdqa64 %%zmm0, %%zmm30\n\t"
		     "vmovdqa64 %%zmm0, %%zmm31\n\t"
		     "kxnorq %%k0, %%k0, %%k0\n\t"   "kxnorq %%k1, %%k1, %%k1\n\t"
		     "kxnorq %%k2, %%k2, %%k2\n\t"   "kxnorq %%k3, %%k3, %%k3\n\t"
		     "kxnorq %%k4, %%k4, %%k4\n\t"   "kxnorq %%k5, %%k5, %%k5\n\t"
		     "kxnorq %%k6, %%k6, %%k6\n\t"   "kxnorq %%k7, %%k7, %%k7\n\t"
		     ::: ZMM_CLOBBERS);
}

__attribute__((target("avx2")))
static void clobber_avx2(void)
{
	asm volatile("vpcmpeqd %%ymm0, %%ymm0, %%ymm0\n\t"
		     "vmovdqa %%ymm0, %%ymm1\n\t"  "vmovdqa %%ymm0, %%ymm2\n\t"
		     "vmovdqa %%ymm0, %%ymm3\n\t"  "vmovdqa %%ymm0, %%ymm4\n\t"
		     "vmovdqa %%ymm0, %%ymm5\n\t"  "vmovdqa %%ymm0, %%ymm6\n\t"
		     "vmovdqa %%ymm0, %%ymm7\n\t"  "vmovdqa %%ymm0, %%ymm8\n\t"
		     "vmovdqa %%ymm0, %%ymm9\n\t"  "vmovdqa %%ymm0, %%ymm10\n\t"
		     "vmovdqa %%ymm0, %%ymm11\n\t" "vmovdqa %%ymm0, %%ymm12\n\t"
		     "vmovdqa %%ymm0, %%ymm13\n\t" "vmovdqa %%ymm0, %%ymm14\n\t"
		     "vmovdqa %%ymm0, %%ymm15\n\t"
		     ::: YMM_CLOBBERS);
}

static uint32_t frame_word(const void *fx, size_t off)
{
	uint32_t v;

	memcpy(&v, (const char *)fx + off, sizeof(v));
	return v;
}

static void on_usr1(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	const void *fx = uc->uc_mcontext.fpregs;
	uint32_t size;

	(void)sig;
	(void)si;
	signals_seen++;

	if (!fx || frame_word(fx, FX_SW_MAGIC1) != XSTATE_MAGIC1) {
		bad_frame = 1;
	} else {
		size = frame_word(fx, FX_SW_XSTATE_SIZE);
		frame_size = size;
		if (frame_word(fx, size) != XSTATE_MAGIC2 ||
		    frame_word(fx, FX_SW_EXTENDED_SIZE) != size + XSTATE_MAGIC2_SIZE)
			bad_frame = 2;
	}

	if (have_avx512)
		clobber_avx512();
	else
		clobber_avx2();
}

static uint64_t rng_next(uint64_t *s)
{
	/* xorshift64*: enough to make every register of every round differ */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

static int worker(int id, const struct opts *o)
{
	static uint8_t in[STATE_BYTES] __attribute__((aligned(64)));
	static uint8_t out[STATE_BYTES] __attribute__((aligned(64)));
	uint64_t seed = 0x9e3779b97f4a7c15ULL * (id + 1);
	int wide = have_avx512 && (id % 2 == 0);
	size_t len = wide ? STATE_BYTES : YMM_BYTES;
	const uint8_t *junk = o->self_test ? in : NULL;
	int r;

	/*
	 * Keep going past the requested rounds until signals have landed
	 * (bounded), so that a pass always includes signal delivery.
	 */
	for (r = 0; r < o->rounds || (signals_seen < 10 && r < 100 * o->rounds); r++) {
		for (size_t i = 0; i < len; i += 8) {
			uint64_t v = rng_next(&seed);

			memcpy(in + i, &v, 8);
		}
		memset(out, 0, sizeof(out));
		if (wide)
			round_avx512(in, out, o->spins, junk);
		else
			round_avx2(in, out, o->spins, junk);

		if (memcmp(in, out, len)) {
			size_t i = 0;

			while (in[i] == out[i])
				i++;
			if (o->self_test)
				return 0;
			if (i >= ZMM_BYTES)
				fprintf(stderr, "worker %d round %d: k%zu corrupted\n",
					id, r, (i - ZMM_BYTES) / 8);
			else
				fprintf(stderr, "worker %d round %d: %s%zu byte %zu corrupted\n",
					id, r, wide ? "zmm" : "ymm",
					i / (wide ? 64 : 32), i % (wide ? 64 : 32));
			return 1;
		}
		if (bad_frame) {
			fprintf(stderr, "worker %d: bad signal frame (%d)\n",
				id, (int)bad_frame);
			return 1;
		}
	}
	if (o->self_test) {
		fprintf(stderr, "worker %d: self test: deliberate clobber went unseen\n",
			id);
		return 1;
	}
	if (signals_seen == 0) {
		fprintf(stderr, "worker %d: no signal arrived in %d rounds\n", id, r);
		return 1;
	}
	printf("worker %d (%s): %d rounds intact, %d signals, frame xstate_size %d\n",
	       id, wide ? "avx512" : "avx2", r, (int)signals_seen,
	       (int)frame_size);
	fflush(stdout);
	return 0;
}

static int parse_int(const char *s, const char *what, int lo, int hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || end == s || v < lo || v > hi) {
		fprintf(stderr, "xstate_test: %s must be %d..%d, got '%s'\n",
			what, lo, hi, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	struct opts o = { .workers = 4, .rounds = 100, .spins = 50 };
	struct timespec gap = { 0, 200 * 1000 };
	struct sigaction sa = { 0 };
	pid_t pids[64];
	int i, opt, failed = 0, live;

	while ((opt = getopt(argc, argv, "w:r:s:t")) != -1) {
		switch (opt) {
		case 'w': o.workers = parse_int(optarg, "-w workers", 1, 64); break;
		case 'r': o.rounds = parse_int(optarg, "-r rounds", 1, 1000000); break;
		case 's': o.spins = parse_int(optarg, "-s spins", 2, 1000000); break;
		case 't': o.self_test = 1; break;
		default:
			fprintf(stderr, "usage: xstate_test [-w workers] [-r rounds] [-s spins] [-t]\n");
			return 2;
		}
	}

	__builtin_cpu_init();
	if (!__builtin_cpu_supports("avx2")) {
		printf("xstate_test: no AVX2 on this CPU\n");
		return KSFT_SKIP;
	}
	have_avx512 = __builtin_cpu_supports("avx512f") &&
		      __builtin_cpu_supports("avx512bw");
	printf("xstate_test: avx2%s, %d workers, %d rounds of %d syscalls%s\n",
	       have_avx512 ? " avx512" : "", o.workers, o.rounds, o.spins,
	       o.self_test ? " (self test)" : "");
	fflush(stdout);

	sa.sa_sigaction = on_usr1;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL)) {
		perror("sigaction");
		return 1;
	}

	for (i = 0; i < o.workers; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			perror("fork");
			return 1;
		}
		if (pids[i] == 0)
			_exit(worker(i, &o));
	}

	/* Signal every live worker until all have finished. */
	live = o.workers;
	while (live > 0) {
		int status;
		pid_t p;

		for (i = 0; i < o.workers; i++)
			if (pids[i] > 0)
				kill(pids[i], SIGUSR1);
		nanosleep(&gap, NULL);

		while ((p = waitpid(-1, &status, WNOHANG)) > 0) {
			for (i = 0; i < o.workers; i++)
				if (pids[i] == p)
					pids[i] = 0;
			live--;
			if (!WIFEXITED(status) || WEXITSTATUS(status)) {
				fprintf(stderr, "xstate_test: worker %d failed (status 0x%x)\n",
					(int)p, status);
				failed = 1;
			}
		}
	}

	printf("xstate_test: %s\n", failed ? "FAIL" : "PASS");
	return failed;
}
