# SPDX-License-Identifier: GPL-2.0
# What the libFuzzer trees (tools/testing/fuzz/vecswitch, tools/testing/fuzz/vecnet)
# share.  A tree's Makefile sets
#   TARGETS      its fuzz_*.c programs, one binary each
#   SRCS         the files of the code under test they link with
#   DEPS         further files a change of which rebuilds them
#   FUZZ_FLAGS   its own compiler flags
# and includes this file, which gives
#   make [O=/abs/outdir]                  -> $(O)/<target>...
#   make run [O=...] [FUZZ_SECONDS=60]    -> each target for that long,
#                                            from the tree's corpus/ seeds
#   make clean
# Needs clang with libFuzzer (Debian: clang-14 libclang-rt-14-dev).

O ?= $(CURDIR)/build
FUZZ_OUT := $(abspath $(O))
FUZZ_MK_DIR := $(dir $(lastword $(MAKEFILE_LIST)))

# the first clang that exists, newest first
CLANG ?= $(firstword $(foreach v,-16 -15 -14 '',$(shell command -v clang$(v) 2>/dev/null)))

FUZZ_CFLAGS := -std=gnu11 -O1 -g -D_GNU_SOURCE -Wall -Wextra -Werror \
	-Wno-missing-field-initializers $(FUZZ_FLAGS) \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-fno-omit-frame-pointer

BINS := $(addprefix $(FUZZ_OUT)/,$(TARGETS))

all: $(BINS)

$(FUZZ_OUT)/%: %.c fuzz_common.c fuzz_common.h $(SRCS) $(DEPS) Makefile $(FUZZ_MK_DIR)fuzz.mk
	@test -n "$(CLANG)" || { echo "fuzz: no clang found" >&2; exit 1; }
	@mkdir -p $(FUZZ_OUT)
	$(CLANG) $(FUZZ_CFLAGS) -o $@ $< fuzz_common.c $(SRCS)

run: all
	$(FUZZ_MK_DIR)run-fuzz.sh --src $(CURDIR) --bin-dir $(FUZZ_OUT) \
		--seconds $(or $(FUZZ_SECONDS),60)

clean:
	rm -f $(BINS)

.PHONY: all run clean
