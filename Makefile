# SPDX-License-Identifier: GPL-2.0
#
# vecnet: vector network drivers for User Mode Linux and the host switch
# they plug into.  See README.md.
#
#   make            install missing packages, build build/vmlinux and tools
#   make check      build what is needed and run every test
#   make demo       the guided tour
#   make bench      benchmarks against the bundled driver (build/bench/)
#   make baseline   UML with the kernel's own vector driver (for bench)
#   make fuzz       run every fuzz target (FUZZ_SECONDS each, default 60)
#   make soak       10 minutes of traffic through the sanitized switch
#   make clean      remove build/

BUILD := $(CURDIR)/build
SELFTESTS := tools/testing/selftests
# Test directories make check runs, in order
TEST_DIRS := um drivers/net/vecnet drivers/net/vecswitch drivers/net/vecnet_demo

export VECNET_SRC := $(CURDIR)
export VECNET_BUILD := $(BUILD)
# The switch's tests run its AddressSanitizer/UBSan build
export VECSWITCH := $(BUILD)/vecswitch-asan

all: kernel tools

deps:
	@scripts/deps.sh

kernel: deps
	@scripts/kbuild.sh $(BUILD)

baseline: deps
	@scripts/kbuild.sh --baseline $(BUILD)

tools: deps
	@$(MAKE) -s -C tools/net/vecswitch O=$(BUILD)
	@$(MAKE) -s -C tools/net/vecswitch O=$(BUILD) SANITIZE=1

check: all
	@scripts/run-selftests.sh $(TEST_DIRS)

demo: all
	@scripts/demo.sh

bench: all baseline
	@scripts/deps.sh bench
	@$(MAKE) -s -C tools/net/vswblast O=$(BUILD)
	@scripts/bench.sh

fuzz: tools
	@$(MAKE) -s -C tools/net/vecswitch/fuzz O=$(BUILD)/fuzz run FUZZ_SECONDS=$(or $(FUZZ_SECONDS),60)
	@$(MAKE) -s -C tools/testing/vecnet-fuzz O=$(BUILD)/fuzz run FUZZ_SECONDS=$(or $(FUZZ_SECONDS),60)

soak: all
	@scripts/soak.sh

clean:
	rm -rf $(BUILD)

.PHONY: all deps kernel baseline tools check demo bench fuzz soak clean
