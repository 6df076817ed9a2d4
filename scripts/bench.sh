#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: every measurement runs inside a private network namespace,
# each figure is the median of RUNS runs, and every comparison is made
# against a baseline measured in the same run.  Results go to
# build/bench/results.json, report.md and PNG plots (scripts/bench-report.py).
#
#   RUNS=3 SECS=5 scripts/bench.sh [SUITE...]     (make bench SUITES="...")
#   IDLE="0 4" limits the idle suite to those numbers of idle guests,
#   TRANSPORTS="tap tap-1M" the transports suite to those cases.
#
# Suites: transports (tap, raw and hybrid, ours against the kernel's
# bundled vector driver, both ways; tap also with iperf3 -l 1M), tunnels (gre, l2tpv3 and bess guest
# to guest, ours against the bundled driver), g2g (the same two guests on
# a Linux bridge with two taps, through vecswitch with default options,
# and through vecswitch with plain frames, vnet=0, and the same two on
# the stock virtio-net driver through virtio_uml and --vhost-user;
# iperf3's default reads
# and 1 MiB ones; with super-frames up to 256 KiB (gso_max=262144) on
# vecswitch and on a direct link with no switch; the bridge and vecswitch
# again with guests and switch capped at one CPU together; medians of
# G2G_RUNS=5; G2G_BASE=VMLINUX adds vecswitch's paths with both
# guests on that kernel, a build of the driver before a change), small (the same guests and paths and --hub, 64-byte
# UDP: frames a second received and the loss), idle (one pair's
# throughput with idle guests attached, switch against --hub, and as a
# control the most idle guests on a second switch), rate (port
# to port forwarding with 2 idle ports: vecswitch, --hub, vde_switch,
# taking turns; RATE_BASE=DIR adds the vecswitch built in DIR),
# kernels (tap both ways with 1 MiB reads, the bundled driver and ours, each
# on 6.12 and on 7.3), vxlan (a pair on two "hosts" joined by VXLAN against the same pair on
# one host), faults (a pair next to guests that are stopped, killed, or
# lose the switch's socket file, each against the same load without the
# fault), flood (a pinging pair beside a host process flooding the
# switch's socket with broadcasts, against no flood, with and without
# shortcut channels), mq (two-CPU guests with queues=1 against queues=2,
# TCP and 64-byte UDP with four flows, on the bridge and vecswitch), light
# (two QEMU light guests under TCG, TCP between them on a Linux bridge with
# taps, on vecswitch's --dgram, --stream and --vhost-user, with the
# switch's CPU per Gbit and on vhost-user its kicks and calls a frame;
# about 3.5 minutes at RUNS=3 SECS=5, skipped where QEMU is missing), plain (the
# switch's CPU per plain 1514-byte frame on --dgram against --stream), rr
# (round trips with vswrr between the g2g guests on the g2g paths and
# between the light guests on the light paths: TCP 1-byte and 1 KiB, 1
# and 8 in flight, and UDP; transactions a second and p50/p99/p99.9,
# medians of RR_RUNS, against the bridge of the same kind in the same
# run; RR_CASES, RR_VARIANTS pick some),
# nat (a QEMU light guest's TCP out to a server in a second namespace and
# in through a port forward, on vecswitch --nat by vhost-user and by
# -netdev stream against QEMU's -netdev user and passt, with the NAT
# process's CPU per Gbit; NAT_BASE=DIR adds the vecswitch and vecnat
# built in DIR; about 8 minutes at RUNS=5 SECS=5), scale (the switch's CPU
# and wake-ups per 1514-byte frame as 2 to 64 synthetic plain peers share
# a fixed rate on --dgram and --stream, against 2 peers, and its cost
# split into a part per frame and a part per wake-up; SCALE_PEERS,
# SCALE_RATE).
#
# Read size: with iperf3's default 128 KiB reads a receiving UML guest is
# bound by its own iperf3's system calls (each one a round of ptrace
# stops between the guest's process and its kernel), whatever the driver.
# The -1M cases read and write 1 MiB at a time, which leaves the driver
# and the stack as the limit; both sides of every ratio use the same size.
#
# CPU: for every flow the guests' host processes (each guest's whole
# process group) and the switch are sampled when the client guest starts
# its flow and when it ends it; the report gives CPU seconds per Gbit.

set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${VECNET_BUILD:-$top/build}
out=$build/bench
ours=${VMLINUX:-$build/vmlinux}
baseline=${VECNET_BASELINE:-$build/baseline-7.3/vmlinux}
vecswitch=$build/vecswitch
runs=${RUNS:-3}
secs=${SECS:-5}
suites=("$@")
all_suites="rate transports tunnels g2g small kernels idle vxlan faults flood mq light plain rr nat scale"
# shellcheck disable=SC2206  # the list splits into names
[ ${#suites[@]} -gt 0 ] || suites=($all_suites)
vswblast=$build/vswblast
vswrr=$build/vswrr
# BIG TCP's gso_max_size and gso_ipv4_max_size, for iproute2 before 6.3
gso_size=$top/tools/testing/selftests/drivers/net/vecnet/gso_size.py

# every name first, so that a typo does not end a run an hour in; then
# the UML kernel, which only the suites that boot UML guests need
need_uml=no
for s in "${suites[@]}"; do
	[[ " $all_suites " == *" $s "* ]] ||
		{ echo "bench: unknown suite '$s' (${all_suites// /, })" >&2; exit 2; }
	case $s in
	rate|light|plain|nat|scale) ;;
	rr)
		for v in ${RR_VARIANTS:-bridge}; do
			[[ $v == light-* ]] || need_uml=yes
		done ;;
	*) need_uml=yes ;;
	esac
	if [ "$s" = g2g ] && [ -n "${G2G_BASE:-}" ] && [ ! -x "$G2G_BASE" ]; then
		echo "bench: G2G_BASE=$G2G_BASE: no UML kernel there" >&2
		exit 2
	fi
done

mkdir -p "$out"
raw=$out/raw.jsonl
: >"$raw"
ns=vecnet-bench-$$
nsb=$ns-b		# the second host of the vxlan suite
work=$(mktemp -d /tmp/vecnet-bench.XXXXXX)
pids=()

# the tests' library, without their harness: its clean-up on exit, also
# on Ctrl-C, kills what the suites started, removes both namespaces and
# the work directory
VECNET_SRC=$top
VECNET_BUILD=$build
VMLINUX=$ours
VECSWITCH=$vecswitch
# shellcheck disable=SC2034  # read by the library
VECNET_LIB_NO_HARNESS=1
SAY_TAG=BENCH
DIE_PREFIX="bench: "
TEST_TMP=$work
# shellcheck source=../tools/testing/selftests/drivers/net/lib.sh
source "$top/tools/testing/selftests/drivers/net/lib.sh"
TEST_NETNS+=("$ns" "$nsb")
# shellcheck disable=SC2016  # expanded when the hook runs
on_exit 'for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done'

# the bench's helpers, then each suite's bench_SUITE (scripts/bench/SUITE.sh)
# shellcheck source=bench/lib.sh
source "$top/scripts/bench/lib.sh"
# shellcheck source=bench/rate.sh
source "$top/scripts/bench/rate.sh"
# shellcheck source=bench/transports.sh
source "$top/scripts/bench/transports.sh"
# shellcheck source=bench/tunnels.sh
source "$top/scripts/bench/tunnels.sh"
# shellcheck source=bench/g2g.sh
source "$top/scripts/bench/g2g.sh"
# shellcheck source=bench/kernels.sh
source "$top/scripts/bench/kernels.sh"
# shellcheck source=bench/idle.sh
source "$top/scripts/bench/idle.sh"
# shellcheck source=bench/vxlan.sh
source "$top/scripts/bench/vxlan.sh"
# shellcheck source=bench/faults.sh
source "$top/scripts/bench/faults.sh"
# shellcheck source=bench/small.sh
source "$top/scripts/bench/small.sh"
# shellcheck source=bench/flood.sh
source "$top/scripts/bench/flood.sh"
# shellcheck source=bench/mq.sh
source "$top/scripts/bench/mq.sh"
# shellcheck source=bench/light.sh
source "$top/scripts/bench/light.sh"
# shellcheck source=bench/plain.sh
source "$top/scripts/bench/plain.sh"
# shellcheck source=bench/rr.sh
source "$top/scripts/bench/rr.sh"
# shellcheck source=bench/nat.sh
source "$top/scripts/bench/nat.sh"
# shellcheck source=bench/scale.sh
source "$top/scripts/bench/scale.sh"

[ "$(id -u)" -eq 0 ] || die "needs root (namespaces, tap devices)"
[ "$need_uml" = no ] || [ -x "$ours" ] || die "no $ours (run 'make'; the suites rate, light, plain, nat and scale run without it)"

: >"$out/rate.jsonl"
for s in "${suites[@]}"; do
	"bench_$s"
done

/usr/bin/python3 "$top/scripts/bench-report.py" "$raw" "$out"
