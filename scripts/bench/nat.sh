#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench, suite nat: one QEMU light guest (the light suite's: TCG, 1
# vCPU, 256 MB, qemu-initrd.sh's initramfs with iperf3, a virtio-net-pci
# device with vectors=0 and shared memory on every path, so that the
# guest is the same on all of them) reaches "outside" through a user-mode
# NAT, takes its address by DHCP, and moves TCP both ways:
#   out  the guest's iperf3 client to a server in a second namespace (the
#        outside: $nsb, one route away over a veth pair), through the
#        NAT's own sockets in the first;
#   in   a client in the outside to the guest's iperf3 server, through a
#        port forward on the first namespace's veth address.
# The NATs:
#   vecnat  -netdev vhost-user to vecswitch --vhost-user --nat (the NAT
#           process, vecnat, on libslirp, on the switch's --dgram socket)
#   vecnat-stream  the same NAT, the guest on -netdev stream to the
#           switch's --stream socket: QEMU's own virtio-net device, as
#           for user and passt, instead of vhost-user's
#   user    QEMU's -netdev user (the same library, inside QEMU's process)
#   vecnat-base  with NAT_BASE=DIR, the vecnat path again with the
#           vecswitch and vecnat built in DIR (another commit's build):
#           a change to either measured against what it changed, in the
#           same run
#   passt   -netdev stream to passt (skipped where passt is missing), its
#           MTU held at 1500 (-m) as the others'
# The NATs take turns within each run, each flow on a freshly booted
# guest; medians of RUNS, and each run's rate against -netdev user's in
# the same run.  CPU seconds per Gbit over each flow: of the QEMU process
# (the guest's TCG, and for user the NAT too), of the NAT process where
# it is one (vecnat, passt) and of the switch.  NAT_PATHS="user vecnat"
# limits the NATs (user must stay for the ratios).
# Sourced by scripts/bench.sh, after scripts/bench/lib.sh and light.sh
# (light_prepare, light_qemu, light_mark, light_client_cmd).
# shellcheck shell=bash
# shellcheck disable=SC2154,SC2034  # the globals and helpers are bench.sh's, lib.sh's and light.sh's

declare -A nat_bps nat_cpus
nat_in=198.18.12.1	# the first namespace's end of the veth pair
nat_out=198.18.12.2	# the outside's, the first one's default route
nat_srv=203.0.113.80	# the outside's server (not the gateway: passt
			# takes the gateway's address for the host's own)

# nat_net PATH: the QEMU options of the guest on PATH
nat_net() {
	echo "-object memory-backend-memfd,id=mem,size=256M,share=on -numa node,memdev=mem"
	case $1 in
	vecnat|vecnat-base) echo "-chardev socket,id=c0,path=$light_dir/sw.sock,reconnect=1 -netdev vhost-user,id=n0,chardev=c0" ;;
	vecnat-stream) echo "-netdev stream,id=n0,server=off,addr.type=unix,addr.path=$light_dir/stream.sock" ;;
	user) echo "-netdev user,id=n0,hostfwd=tcp:0.0.0.0:15201-:5201" ;;
	passt) echo "-netdev stream,id=n0,server=off,addr.type=unix,addr.path=$nat_passt/passt.sock" ;;
	esac
	echo "-device virtio-net-pci,netdev=n0,mac=52:54:00:6e:00:01,vectors=0"
}

# nat_cpu: "QEMU NAT SWITCH" CPU seconds so far (0 for what a path lacks)
nat_cpu() {
	echo "$(procs_cpu "$nat_qemu") $(procs_cpu ${nat_proc:+"$nat_proc"}) $(procs_cpu ${nat_sw:+"$nat_sw"})"
}

# nat_used BEFORE AFTER BPS: CPU seconds per Gbit of QEMU, the NAT
# process and the switch between the two nat_cpu samples, into nat_g,
# nat_n, nat_s (empty where a path has no such process)
nat_used() {
	local -a a b

	read -ra a <<<"$1"
	read -ra b <<<"$2"
	nat_g=$(per_gbit "$(awk -v x="${b[0]}" -v y="${a[0]}" 'BEGIN { printf "%.2f\n", x - y }')" "$3")
	nat_n='' nat_s=''
	[ -z "$nat_proc" ] ||
		nat_n=$(per_gbit "$(awk -v x="${b[1]}" -v y="${a[1]}" 'BEGIN { printf "%.2f\n", x - y }')" "$3")
	[ -z "$nat_sw" ] ||
		nat_s=$(per_gbit "$(awk -v x="${b[2]}" -v y="${a[2]}" 'BEGIN { printf "%.2f\n", x - y }')" "$3")
}

# nat_once PATH: one guest on PATH, its out flow then its in flow; sets
# nat_bps[out|in] and, per direction, nat_cpus[DIR] as "QEMU NAT SWITCH"
# CPU seconds per Gbit ("-" where not measured)
nat_once() {
	local path=$1 c0 c1 i cmd
	local -a args

	netns_fresh
	netns_fresh "$nsb"
	rm -rf "$light_dir"
	mkdir -p "$light_dir"
	ip link add natb0 netns "$ns" type veth peer name natb1 netns "$nsb"
	ip -n "$ns" addr add "$nat_in/30" dev natb0
	ip -n "$nsb" addr add "$nat_out/30" dev natb1
	ip -n "$ns" link set natb0 up
	ip -n "$nsb" link set natb1 up
	# passt takes its addresses from the interface of the default route
	ip -n "$ns" route add default via "$nat_out"
	ip -n "$nsb" addr add "$nat_srv/32" dev lo
	ip netns exec "$nsb" iperf3 -s -B "$nat_srv" >/dev/null 2>&1 &
	pids+=($!)
	nat_sw='' nat_proc=''
	case $path in
	vecnat*)
		VECSWITCH=$vecswitch
		[ "$path" != vecnat-base ] || VECSWITCH=$NAT_BASE/vecswitch
		bench_switch "$ns" --dgram "$light_dir/dgram.sock" --vhost-user "$light_dir/sw.sock" \
			--stream "$light_dir/stream.sock" --ctl "$light_dir/ctl.sock" --nat --nat-forward "tcp:0.0.0.0:15201:10.0.2.15:5201"
		VECSWITCH=$vecswitch
		nat_sw=${pids[-1]}
		wait_for 10 pgrep -P "$nat_sw" >/dev/null || true
		nat_proc=$(pgrep -P "$nat_sw" | head -n 1) ;;
	passt)
		# (in the foreground, passt is the process started; it gives up
		# root for nobody before it makes its socket, in a directory of
		# nobody's, $nat_passt)
		rm -f "$nat_passt/passt.sock"
		ip netns exec "$ns" passt -f -q -s "$nat_passt/passt.sock" -m 1500 -t 15201:5201 \
			>"$light_dir/passt.log" 2>&1 &
		pids+=($!)
		nat_proc=$!
		wait_for 10 test -S "$nat_passt/passt.sock" || true ;;
	esac
	read -ra args <<<"$(nat_net "$path" | tr '\n' ' ')"
	cmd="$(light_client_cmd "$nat_srv"); iperf3 -s -1 >/dev/null 2>&1 & echo VSW_SERVING"
	light_qemu cli dhcp "VSW_RUN=\"$cmd\"" "${args[@]}"
	nat_qemu=${pids[-1]}
	nat_bps=([out]=0 [in]=0)
	nat_cpus=([out]='' [in]='')
	# out: between the guest's marks
	if light_mark cli VSW_RUNNING 240; then
		c0=$(nat_cpu)
		if light_mark cli VSW_DONE $((secs + 60)); then
			c1=$(nat_cpu)
			light_mark cli VSW_RESULT 30 || true
			nat_bps[out]=$(iperf_bps "$light_dir/cli.out")
			nat_used "$c0" "$c1" "${nat_bps[out]}"
			nat_cpus[out]="${nat_g:--} ${nat_n:--} ${nat_s:--}"
		fi
	fi
	# in: the outside's client through the forward, a few tries while
	# the guest's server starts
	if light_mark cli VSW_SERVING 30; then
		for i in $(seq 10); do
			c0=$(nat_cpu)
			ip netns exec "$nsb" timeout $((secs + 30)) iperf3 -c "$nat_in" -p 15201 -t "$secs" -J \
				>"$light_dir/in.json" 2>/dev/null && break
			sleep 1
		done
		c1=$(nat_cpu)
		nat_bps[in]=$(iperf_bps "$light_dir/in.json")
		nat_used "$c0" "$c1" "${nat_bps[in]}"
		nat_cpus[in]="${nat_g:--} ${nat_n:--} ${nat_s:--}"
	fi
	{ [ "${nat_bps[out]}" -gt 0 ] && [ "${nat_bps[in]}" -gt 0 ]; } ||
		say "nat $path: a flow moved nothing; the guest's console ended: $(grep -v '^.$' "$light_dir/cli.log" 2>/dev/null | tail -n 3 | tr '\r\n' '  ')"
	if [ -n "$nat_sw" ]; then
		{ CTL=$light_dir/ctl.sock ctl stats; } >"$out/nat/$path-r$nat_run.txt" 2>&1 || true
	fi
	for i in "$nat_qemu" ${nat_sw:+"$nat_sw"} "${pids[@]}"; do
		kill "$i" 2>/dev/null || true
	done
	wait "$nat_qemu" 2>/dev/null || true
	[ -z "$nat_sw" ] || wait "$nat_sw" 2>/dev/null || true
	[ "$path" != passt ] || kill "$nat_proc" 2>/dev/null || true
}

bench_nat() {
	local r p d ratio k
	local -a paths
	local -A nbps=() ncpu=() nratio=() now=()

	read -ra paths <<<"${NAT_PATHS:-user vecnat vecnat-stream passt}"
	if [ -n "${NAT_BASE:-}" ]; then
		{ [ -x "$NAT_BASE/vecswitch" ] && [ -x "$NAT_BASE/vecnat" ]; } ||
			die "NAT_BASE=$NAT_BASE: no vecswitch and vecnat there"
		[[ " ${paths[*]} " == *" vecnat-base "* ]] || paths+=(vecnat-base)
	fi
	command -v "$light_qemu_bin" >/dev/null || { say "nat: skipped, no $light_qemu_bin"; return 0; }
	{ [ -x "$vecswitch" ] && [ -x "$build/vecnat" ]; } || die "no $vecswitch or $build/vecnat (run 'make tools')"
	if ! command -v passt >/dev/null; then
		say "nat: no passt (scripts/deps.sh bench installs it): its turns are left out"
		read -ra paths <<<"${paths[*]/passt/}"
	elif [[ " ${paths[*]} " == *" passt "* ]]; then
		nat_passt=$(mktemp -d /tmp/vecnet-bench-passt.XXXXXX)
		on_exit "rm -rf $nat_passt"
		chown nobody "$nat_passt"
	fi
	light_prepare nat || return 0
	for r in $(seq 1 "$runs"); do
		nat_run=$r
		now=()
		for p in "${paths[@]}"; do
			nat_once "$p"
			say "nat $p run $r/$runs: out $(awk -v b="${nat_bps[out]}" 'BEGIN { printf "%.2f", b / 1e9 }')," \
				"in $(awk -v b="${nat_bps[in]}" 'BEGIN { printf "%.2f", b / 1e9 }') Gbit/s;" \
				"CPU s/Gbit (QEMU NAT switch) out ${nat_cpus[out]:-n/a}, in ${nat_cpus[in]:-n/a}"
			for d in out in; do
				nbps[$p-$d]+=" ${nat_bps[$d]}"
				ncpu[$p-$d]+=",${nat_cpus[$d]}"
				now[$p-$d]=${nat_bps[$d]}
			done
		done
		# each NAT against -netdev user in this same run
		for p in "${paths[@]}"; do
			for d in out in; do
				ratio=$(awk -v a="${now[$p-$d]}" -v b="${now[user-$d]:-0}" 'BEGIN { if (b > 0) printf "%.3f\n", a / b }')
				nratio[$p-$d]+=" $ratio"
			done
		done
	done
	for p in "${paths[@]}"; do
		for d in out in; do
			k=$p-$d
			# the medians of QEMU's, the NAT process's and the switch's
			# CPU per Gbit, each over the runs
			local -a q=() n=() s=()
			local row
			while IFS=' ' read -r a b c; do
				q+=("${a#-}") n+=("${b#-}") s+=("${c#-}")
			done < <(tr ',' '\n' <<<"${ncpu[$k]#,}")
			# shellcheck disable=SC2086  # the lists split into numbers
			record nat "tcp-$d" "$p" bit/s "$(printf '%s\n' ${nbps[$k]} | median)" "" \
				"${nbps[$k]}" "$(median_of "${q[@]}")" "$(median_of "${s[@]}")"
			row=$(median_of "${n[@]}")
			[ "$row" = null ] || record nat "tcp-$d-nat-cpu" "$p" "CPU s/Gbit" "$row" "" "${n[*]}"
			{ [ "$p" != user ] && [[ ${nratio[$k]} =~ [0-9] ]]; } || continue
			# shellcheck disable=SC2086
			record nat "tcp-$d-per-user" "$p" ratio "$(median_of ${nratio[$k]})" "" "${nratio[$k]}"
		done
	done
}
