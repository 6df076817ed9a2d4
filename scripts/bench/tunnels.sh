#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench, suite tunnels: gre, l2tpv3 and bess guest to guest, ours against the bundled driver.
# Sourced by scripts/bench.sh, after scripts/bench/lib.sh.
# shellcheck shell=bash
# shellcheck disable=SC2154  # the globals and helpers are bench.sh's and lib.sh's

# gre and l2tpv3: two guests tunnel to each other between two addresses
# of the namespace's loopback; bess: both guests on vecswitch
# --seqpacket.  The pair runs TCP through that.
bench_tunnels() {
	local t variant kernel r vals a b gcpu scpu sw

	[ -x "$baseline" ] || die "no $baseline (run 'make baseline')"
	for t in gre l2tpv3 bess; do
		case "$t" in
		bess)
			# both guests on vecswitch --seqpacket
			a="transport=bess,dst=$work/sp.sock,src=$work/a.sock"
			b="transport=bess,dst=$work/sp.sock,src=$work/b.sock" ;;
		gre)
			a="transport=gre,src=198.18.30.1,dst=198.18.30.2"
			b="transport=gre,src=198.18.30.2,dst=198.18.30.1" ;;
		l2tpv3)
			a="transport=l2tpv3,udp=1,src=198.18.30.1,dst=198.18.30.2,srcport=1701,dstport=1702,rx_session=1,tx_session=2"
			b="transport=l2tpv3,udp=1,src=198.18.30.2,dst=198.18.30.1,srcport=1702,dstport=1701,rx_session=2,tx_session=1" ;;
		esac
		for variant in baseline ours; do
			kernel=$ours
			[ "$variant" = baseline ] && kernel=$baseline
			vals=() gcpu=() scpu=()
			for r in $(seq 1 "$runs"); do
				say "$t $variant guest to guest run $r/$runs"
				netns_fresh
				rm -rf "${work:?}"/*
				ip -n "$ns" addr add 198.18.30.1/32 dev lo
				ip -n "$ns" addr add 198.18.30.2/32 dev lo
				sw=
				if [ "$t" = bess ]; then
					bench_switch "$ns" --seqpacket "$work/sp.sock"
					sw=${pids[-1]}
				fi
				pair_switch=$sw pair_run "$kernel" 198.18.31 "$a,mtu=1400" "$b,mtu=1400"
				[ -z "$sw" ] || kill "$sw" 2>/dev/null || true
				vals+=("$pair_bps") gcpu+=("$pair_gcpu") scpu+=("$pair_scpu")
			done
			record transports "$t-g2g" "$variant" bit/s \
				"$(printf '%s\n' "${vals[@]}" | median)" "" "${vals[*]}" \
				"$(median_of "${gcpu[@]}")" "$(median_of "${scpu[@]}")"
		done
	done
}
