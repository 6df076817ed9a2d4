#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench, suite transports: tap, raw and hybrid, ours against the bundled driver, both ways.
# Sourced by scripts/bench.sh, after scripts/bench/lib.sh.
# shellcheck shell=bash
# shellcheck disable=SC2154  # the globals and helpers are bench.sh's and lib.sh's

bench_transports() {
	local t

	[ -x "$baseline" ] || die "no $baseline (run 'make baseline')"
	# tap-1M: tap again with 1 MiB reads and writes (see the header)
	for t in ${TRANSPORTS:-tap tap-1M raw hybrid}; do
		case "$t" in
		tap|tap-1M|raw|hybrid) ;;
		*) die "TRANSPORTS: no case '$t' (tap, tap-1M, raw, hybrid)" ;;
		esac
		transport_runs transports "$t" baseline "$baseline"
		transport_runs transports "$t" ours "$ours"
	done
}
