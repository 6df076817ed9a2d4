# SPDX-License-Identifier: GPL-2.0
#
# vecnet: vector network drivers for User Mode Linux and the host switch
# they plug into.  See README.md.
#
#   make            install missing packages, build build/vmlinux and tools
#   make check      build what is needed and run every test
#   make debug      the debug kernel make check also boots (build/debug-7.3)
#
# KERNEL=6.12 builds and tests the 6.12 LTS kernel instead of the default
# 7.3 (build/kernel-6.12/vmlinux); build/vmlinux is always the default one.
#   make demo       the guided tour
#   make bench      benchmarks against the bundled driver (build/bench/)
#   make baseline   UML with the kernel's own vector driver (for bench)
#   make fuzz       run every fuzz target (FUZZ_SECONDS each, default 60)
#   make soak       10 minutes of traffic through the sanitized switch
#   make clean      remove build/

BUILD := $(CURDIR)/build
DEFAULT_KERNEL := 7.3
KERNEL ?= $(DEFAULT_KERNEL)
# The series the debug kernel is built from: the one with SMP guests
DEBUG_KERNEL := 7.3
SELFTESTS := tools/testing/selftests
# Test directories make check runs, in order
TEST_DIRS := um drivers/net/vecnet drivers/net/vecswitch drivers/net/vecnet_demo
# Then the driver's guest tests again on the debug kernel, two CPUs a
# guest, and the other kernel series: it boots, its XSAVE state is right,
# the driver builds clean there and a pair of guests talk
TEST_DIRS += drivers/net/vecnet@debug
export VECNET_DEBUG_VMLINUX := $(BUILD)/debug-$(DEBUG_KERNEL)/vmlinux
export VECNET_DEBUG_CPUS := 2
export VECNET_DEBUG_TESTS := test_pair.sh test_burst.sh test_updown.sh \
	test_mconsole.sh test_peer_restart.sh test_tap.sh test_raw.sh test_smp.sh
OTHER_KERNEL := $(if $(filter 6.12,$(KERNEL)),7.3,6.12)
TEST_DIRS += um@other drivers/net/vecnet@other
export VECNET_OTHER_VMLINUX := $(BUILD)/kernel-$(OTHER_KERNEL)/vmlinux
export VECNET_OTHER_CPUS := 1
export VECNET_OTHER_TESTS := test_harness.sh test_xstate.sh test_style.sh \
	test_pair.sh

export VECNET_SRC := $(CURDIR)
export VECNET_BUILD := $(BUILD)
# The kernel tree and guest kernel the tests and the bench use
export VECNET_KDIR := $(BUILD)/kernel-$(KERNEL)
export VMLINUX := $(VECNET_KDIR)/vmlinux
export VECNET_BASELINE := $(BUILD)/baseline-$(KERNEL)/vmlinux
# The switch's tests run its AddressSanitizer/UBSan build
export VECSWITCH := $(BUILD)/vecswitch-asan

all: kernel tools

deps:
	@scripts/deps.sh

kernel: deps
	@scripts/kbuild.sh -k $(KERNEL) $(BUILD)
ifeq ($(KERNEL),$(DEFAULT_KERNEL))
	@ln -sfn kernel-$(KERNEL)/vmlinux $(BUILD)/vmlinux
endif

baseline: deps
	@scripts/kbuild.sh -k $(KERNEL) -v baseline $(BUILD)

debug: deps
	@scripts/kbuild.sh -k $(DEBUG_KERNEL) -v debug $(BUILD)

other-kernel: deps
	@scripts/kbuild.sh -k $(OTHER_KERNEL) $(BUILD)

tools: deps
	@$(MAKE) -s -C tools/net/vecswitch O=$(BUILD)
	@$(MAKE) -s -C tools/net/vecswitch O=$(BUILD) SANITIZE=1

check: all debug other-kernel
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

.PHONY: all deps kernel baseline debug other-kernel tools check demo bench fuzz soak clean
