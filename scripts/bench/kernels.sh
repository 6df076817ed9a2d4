#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench, suite kernels: tap both ways, both drivers on each kernel series.
# Sourced by scripts/bench.sh, after scripts/bench/lib.sh.
# shellcheck shell=bash
# shellcheck disable=SC2154  # the globals and helpers are bench.sh's and lib.sh's

# tap both ways with 1 MiB reads, the bundled driver and ours, on 6.12 and
# on 7.3.  The bundled driver is built without SMP: with SMP it takes a
# lock inside a queue tap never allocates when the device comes up.
bench_kernels() {
	local k v kernel

	for k in 6.12 7.3; do
		for v in bundled ours; do
			kernel=$build/kernel-$k/vmlinux
			[ "$v" = bundled ] && kernel=$build/baseline-$k/vmlinux
			[ -x "$kernel" ] || die "no $kernel (make baseline other-kernel, or KERNEL=$k)"
			transport_runs kernels tap-1M "$v-$k" "$kernel"
		done
	done
}
