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
#   make conformance  the kernel's own drivers/net tests, every one on every
#                   transport (make check runs a quick set of them)
#   make bench      benchmarks against the bundled driver (build/bench/)
#   make baseline   UML with the kernel's own vector driver, 7.3 and 6.12 (bench)
#   make fuzz       run every fuzz target (FUZZ_SECONDS each, default 60)
#   make soak       10 minutes of traffic through the sanitized switch
#   make man        the man pages, from Documentation/ (build/man/)
#   make install    install what 'make' built (PREFIX, DESTDIR)
#   make uninstall  remove what 'make install' installed
#   make deb        Debian packages vecswitch and vecnet-uml (build/*.deb)
#   make clean      remove build/

BUILD := $(CURDIR)/build
DEFAULT_KERNEL := 7.3
KERNEL ?= $(DEFAULT_KERNEL)
# The series the debug kernel is built from: the one with SMP guests
DEBUG_KERNEL := 7.3
SELFTESTS := tools/testing/selftests
# Test directories make check runs, in order
TEST_DIRS := um drivers/net/vecnet drivers/net/vecswitch drivers/net/vecnet_demo \
	drivers/net/vecnet_install
# Then the driver's guest tests again on the debug kernel, two CPUs a
# guest, and the other kernel series: every um/ test (it boots, its XSAVE
# state is right, it takes load), the driver builds clean there, a pair
# of guests talk, and tap and depth-128 bursts work
TEST_DIRS += drivers/net/vecnet@debug
export VECNET_DEBUG_VMLINUX := $(BUILD)/debug-$(DEBUG_KERNEL)/vmlinux
export VECNET_DEBUG_CPUS := 2
export VECNET_DEBUG_TESTS := test_pair.sh test_burst.sh test_updown.sh \
	test_mconsole.sh test_peer_restart.sh test_tap.sh test_raw.sh test_smp.sh \
	test_mq.sh
OTHER_KERNEL := $(if $(filter 6.12,$(KERNEL)),7.3,6.12)
TEST_DIRS += um@other drivers/net/vecnet@other
export VECNET_OTHER_VMLINUX := $(BUILD)/kernel-$(OTHER_KERNEL)/vmlinux
export VECNET_OTHER_CPUS := 1
export VECNET_OTHER_TESTS := test_harness.sh test_xstate.sh test_boot_loop.sh \
	test_tap_load.sh test_console_eof.sh test_style.sh test_pair.sh test_tap.sh \
	test_burst.sh

# make install: where things go
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
VECNETLIBDIR ?= $(PREFIX)/lib/vecnet
MANDIR ?= $(PREFIX)/share/man
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
SYSCTLDIR ?= $(PREFIX)/lib/sysctl.d

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

# The bundled driver on both series (bench compares them in one run)
baseline: deps
	@scripts/kbuild.sh -k $(KERNEL) -v baseline $(BUILD)
	@scripts/kbuild.sh -k $(OTHER_KERNEL) -v baseline $(BUILD)

debug: deps
	@scripts/kbuild.sh -k $(DEBUG_KERNEL) -v debug $(BUILD)

other-kernel: deps
	@scripts/kbuild.sh -k $(OTHER_KERNEL) $(BUILD)

tools: deps
	@$(MAKE) -s -C tools/net/vecswitch O=$(BUILD)
	@$(MAKE) -s -C tools/net/vecswitch O=$(BUILD) SANITIZE=1
	@$(MAKE) -s -C tools/net/vecnat O=$(BUILD)
	@$(MAKE) -s -C tools/net/vecnat O=$(BUILD) SANITIZE=1
	@$(MAKE) -s -C tools/net/vswrr O=$(BUILD)

# The kernel's own drivers/net and drivers/net/hw tests, built from the
# default kernel's tree, and the newer ethtool they need
kselftests: kernel
	@scripts/kselftests.sh $(BUILD)

check: all debug other-kernel kselftests
	@scripts/run-selftests.sh $(TEST_DIRS)

# Every one of them on every transport: longer than one kselftest timeout
conformance: all kselftests
	@KERNEL_TESTS=full TESTS=test_kernel_tests.sh kselftest_override_timeout=7200 \
		scripts/run-selftests.sh drivers/net/vecnet

demo: all
	@scripts/demo.sh

bench: all baseline other-kernel
	@scripts/deps.sh bench
	@$(MAKE) -s -C tools/net/vswblast O=$(BUILD)
	@scripts/bench.sh $(SUITES)

fuzz: tools
	@$(MAKE) -s -C tools/testing/fuzz O=$(BUILD)/fuzz run FUZZ_SECONDS=$(or $(FUZZ_SECONDS),60)

soak: all
	@scripts/soak.sh

# --- man pages, install, packages ------------------------------------------
MAN_PAGES := $(BUILD)/man/vecswitch.8 $(BUILD)/man/vecnet.7 $(BUILD)/man/vecnet-guest.1

man: $(MAN_PAGES)

$(BUILD)/man/%: scripts/mkman.sh
	@mkdir -p $(@D)
	@scripts/mkman.sh Documentation/networking/$(basename $(*F)).rst $@
$(foreach m,$(MAN_PAGES),$(eval $(m): Documentation/networking/$(basename $(notdir $(m))).rst))
# the examples vecswitch.rst includes, which the tests run
$(BUILD)/man/vecswitch.8: $(wildcard Documentation/networking/vecswitch-examples/*)

# What install puts where; uninstall removes exactly these
INSTALLED := $(BINDIR)/vecswitch $(BINDIR)/vecnat $(BINDIR)/vecnet-guest $(VECNETLIBDIR)/vmlinux \
	$(VECNETLIBDIR)/udhcpc-hostfs.sh \
	$(MANDIR)/man8/vecswitch.8 $(MANDIR)/man7/vecnet.7 \
	$(MANDIR)/man1/vecnet-guest.1 $(SYSTEMDUNITDIR)/vecswitch.service \
	$(SYSTEMDUNITDIR)/vecswitch@.service \
	$(SYSCTLDIR)/vecswitch.conf

# install takes what 'make' built and does not rebuild it (as root, from
# a tree another user owns); the version is the one built into vecswitch.
# The kernel is stripped as the package's dh_strip does: its symbols are
# nine tenths of the file, and a stack dump reads the kernel's own
# kallsyms, not them
install: $(BUILD)/vmlinux $(BUILD)/vecswitch $(BUILD)/vecnat man
	@version=$$($(BUILD)/vecswitch --version) && version=$${version#vecswitch } && \
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(VECNETLIBDIR) \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man7 \
		$(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(SYSTEMDUNITDIR) $(DESTDIR)$(SYSCTLDIR) && \
	install -m 755 $(BUILD)/vecswitch $(DESTDIR)$(BINDIR)/vecswitch && \
	install -m 755 $(BUILD)/vecnat $(DESTDIR)$(BINDIR)/vecnat && \
	sed -e 's|^libdir=$$|libdir=$(VECNETLIBDIR)|' -e "s|^version=\$$|version=$$version|" \
		scripts/vecnet-guest >$(DESTDIR)$(BINDIR)/vecnet-guest && \
	chmod 755 $(DESTDIR)$(BINDIR)/vecnet-guest && \
	strip --strip-unneeded --remove-section=.comment --remove-section=.note \
		-o $(DESTDIR)$(VECNETLIBDIR)/vmlinux $(BUILD)/vmlinux && \
	chmod 755 $(DESTDIR)$(VECNETLIBDIR)/vmlinux && \
	install -m 755 scripts/udhcpc-hostfs.sh $(DESTDIR)$(VECNETLIBDIR)/ && \
	install -m 644 $(BUILD)/man/vecswitch.8 $(DESTDIR)$(MANDIR)/man8/ && \
	install -m 644 $(BUILD)/man/vecnet.7 $(DESTDIR)$(MANDIR)/man7/ && \
	install -m 644 $(BUILD)/man/vecnet-guest.1 $(DESTDIR)$(MANDIR)/man1/ && \
	for u in vecswitch.service vecswitch@.service; do \
		sed -e 's|/usr/local/bin/vecswitch|$(BINDIR)/vecswitch|' \
			tools/net/vecswitch/$$u >$(DESTDIR)$(SYSTEMDUNITDIR)/$$u && \
		chmod 644 $(DESTDIR)$(SYSTEMDUNITDIR)/$$u || exit 1; done && \
	install -m 644 debian/sysctl/vecswitch.conf $(DESTDIR)$(SYSCTLDIR)/
	@echo "  INSTALL $(DESTDIR)$(PREFIX): vecswitch, vecnat, vecnet-guest, vmlinux, man pages, units, sysctl.d"

$(BUILD)/vmlinux $(BUILD)/vecswitch $(BUILD)/vecnat:
	@echo "install: $@ is missing: run 'make' first" >&2; exit 1

# With DESTDIR (a staging tree) also the directories left empty go, up to
# DESTDIR; on the live system only vecnet's own directory does
uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	-rmdir $(DESTDIR)$(VECNETLIBDIR) 2>/dev/null
ifneq ($(DESTDIR),)
	@for d in $(sort $(dir $(INSTALLED))); do \
		while [ "$$d" != / ] && rmdir "$(DESTDIR)$$d" 2>/dev/null; do \
			d=$$(dirname "$$d"); done; done
endif

deb: all
	@scripts/mkdeb.sh $(BUILD)

clean:
	rm -rf $(BUILD)

.PHONY: all deps kernel baseline debug other-kernel tools check kselftests conformance demo bench fuzz soak clean \
	man install uninstall deb
