#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make soak: two pairs of UML guests run TCP on vecswitch for
# SOAK_SECONDS (default 600), in a private namespace, with the switch built
# with AddressSanitizer and UndefinedBehaviorSanitizer: g1 -> g2 with the
# default options (through the shortcut channel the switch hands them),
# g3 -> g4 with shortcut=0 (through the switch). A progress line every
# 30 s. Passes when
#   - the switch reports nothing and exits cleanly at the end,
#   - its resident memory after warm-up (the first 60 s) grows by less
#     than SOAK_RSS_KB (default 4096 KiB): the lowest sample of the last
#     minute against the highest of the first minute after warm-up, as
#     64 KiB super-frames make it swing by several MiB from one 5 s
#     sample to the next while a leak only ever climbs; AddressSanitizer
#     keeps a small quarantine and hands free memory back to the system
#     (ASAN_OPTIONS below): with its defaults (256 MiB held back, nothing
#     returned) the sanitized switch's resident memory drifted up by
#     24 MiB in 600 s, while the same switch unsanitized stayed at
#     20016 KiB to the KiB through 300 s of the same load,
#   - its frame accounting adds up: every frame meant for a port was sent,
#     dropped and counted, or is still queued,
#   - both flows moved data throughout (no empty iperf3 interval).

set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
secs=${SOAK_SECONDS:-600}
rss_slack=${SOAK_RSS_KB:-4096}
warmup=60

# the tests' library, without their harness: the guests, the switch, the
# namespace and the work directory go on exit, also on Ctrl-C
VECNET_SRC=$top
VECNET_BUILD=${VECNET_BUILD:-$top/build}
VMLINUX=${VMLINUX:-$VECNET_BUILD/vmlinux}
VECSWITCH=$VECNET_BUILD/vecswitch-asan
# shellcheck disable=SC2034  # read by the library
VECNET_LIB_NO_HARNESS=1
SAY_TAG=SOAK
DIE_PREFIX="soak: "
TEST_TMP=$(mktemp -d /tmp/vecnet-soak.XXXXXX)
# shellcheck source=../tools/testing/selftests/drivers/net/lib.sh
source "$top/tools/testing/selftests/drivers/net/lib.sh"

[ "$(id -u)" -eq 0 ] || die "needs root (network namespaces)"
[ -x "$VMLINUX" ] || die "no $VMLINUX (run 'make')"
[ -x "$VECSWITCH" ] || die "no $VECSWITCH (run 'make')"
case $secs in ''|*[!0-9]*) die "SOAK_SECONDS wants a whole number" ;; esac
[ "$secs" -ge $((warmup + 30)) ] || die "SOAK_SECONDS must be at least $((warmup + 30))"
# the guests and their commands outlast the flows
AGENT_TIMEOUT=$((secs + 300))
EXEC_TIMEOUT=$((secs + 120))

work=$TEST_TMP
guests=(g1 g2 g3 g4)

rss_kb() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$SWITCH_PID/status"; }

# (the caller's own ASAN_OPTIONS come last and win)
export ASAN_OPTIONS="quarantine_size_mb=16:allocator_release_to_os_interval_ms=1000${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
ns=$(netns_add soak)
ip netns exec "$ns" sysctl -qw net.unix.max_dgram_qlen=512
start_switch "$ns" --dgram "$work/sw.sock" --ctl "$work/ctl" ||
	die "the switch did not start: $(tail -n 3 "$work/switch.log")"

say "booting ${#guests[@]} guests"
for g in "${guests[@]}"; do
	opts="transport=unixdgram,path=$work/sw.sock,depth=128"
	case $g in g3|g4) opts+=",shortcut=0" ;; esac
	agent "$ns" soak "$g" -a "vec0:$opts" >/dev/null 2>&1
done
i=0
for g in "${guests[@]}"; do
	i=$((i + 1))
	exec_in "$g" sh -c "ip addr add 198.18.10.$i/24 dev vec0 && ip link set vec0 up" ||
		die "guest $g did not come up: $(tail -n 5 "$work/$g/console.log")"
done
exec_in g2 iperf3 -s -D >/dev/null
exec_in g4 iperf3 -s -D >/dev/null
for p in "g1 198.18.10.2" "g3 198.18.10.4"; do
	read -r g dst <<<"$p"
	reach "$g" "$dst" 30 || die "$g cannot reach $dst"
done

say "two TCP flows for ${secs}s (g1 -> g2 past the switch, g3 -> g4 through it), switch under ASan/UBSan"
exec_in g1 iperf3 -c 198.18.10.2 -t "$secs" -i 10 -J >"$work/f1.json" &
f1=$!
exec_in g3 iperf3 -c 198.18.10.4 -t "$secs" -i 10 -J >"$work/f2.json" &
f2=$!
# an early end must not wait for the flows' own time-out
on_exit "kill_job $f1; kill_job $f2"
start=$SECONDS
rss_warm=
while kill -0 "$f1" 2>/dev/null || kill -0 "$f2" 2>/dev/null; do
	sleep 5
	t=$((SECONDS - start))
	if [ -z "$rss_warm" ] && [ "$t" -ge "$warmup" ]; then
		rss_warm=$(rss_kb)
		say "warm-up over at ${t}s: switch RSS ${rss_warm} KiB"
	fi
	[ -z "$rss_warm" ] || rss_kb >>"$work/rss"
	if [ $((t % 30)) -lt 5 ]; then
		frames=$(ctl stats --json | python3 -c 'import json,sys
print(sum(p["rx_frames"] for p in json.load(sys.stdin)["ports"]))')
		say "${t}s/${secs}s: switch RSS $(rss_kb) KiB, ${frames} frames in"
	fi
	kill -0 "$SWITCH_PID" 2>/dev/null || die "the switch died: $(tail -n 5 "$work/switch.log")"
	[ "$t" -lt $((secs + 120)) ] || die "the flows did not end"
done
wait "$f1" || die "flow g1 -> g2 failed"
wait "$f2" || die "flow g3 -> g4 failed"
rss_end=$(rss_kb)
sleep 1

fail=0
for f in f1 f2; do
	avg=$(iperf_bps "$work/$f.json")
	low=$(iperf_min "$work/$f.json")
	say "flow $f.json: $(awk -v a="$avg" -v l="$low" \
		'BEGIN { printf "%.2f Gbit/s on average, slowest 10 s %.2f Gbit/s", a / 1e9, l / 1e9 }')"
	if [ "$low" -le 0 ]; then
		echo "soak: a flow stalled" >&2
		fail=1
	fi
done

# 12 samples of 5 s: the first and the last minute after warm-up
read -r rss_first rss_last < <(awk '{ v[NR] = $1 } END {
	n = NR < 12 ? NR : 12; hi = 0; lo = -1
	for (i = 1; i <= n; i++) if (v[i] > hi) hi = v[i]
	for (i = NR - n + 1; i <= NR; i++) if (lo < 0 || v[i] < lo) lo = v[i]
	print hi, lo }' "$work/rss")
growth=$((rss_last - rss_first))
say "switch RSS ${rss_warm} KiB after warm-up, ${rss_end} KiB at the end;" \
	"highest of the first minute ${rss_first} KiB, lowest of the last ${rss_last} KiB (${growth} KiB)"
if [ "$growth" -ge "$rss_slack" ]; then
	echo "soak: FAIL resident memory grew by ${growth} KiB after warm-up" >&2
	fail=1
fi

stats=$(ctl stats --json)
ports=$(ctl ports --json)
python3 - "$stats" "$ports" <<'PY' || fail=1
import json, sys
s = json.loads(sys.argv[1])
queued = sum(p["queue"] for p in json.loads(sys.argv[2])["ports"])
sw = s["switch"]
drop_kinds = ("tx_queue_full", "tx_oversize", "tx_unread", "tx_errors")
drops = sum(p[k] for p in s["ports"] for k in drop_kinds)
out = sum(p["tx_frames"] for p in s["ports"]) + drops
print("  SOAK    frames meant for ports %d = sent or dropped %d + queued %d + "
      "retired %d (%d dropped)" % (sw["tx_wanted"], out, queued, sw["tx_retired"], drops))
if sw["tx_wanted"] != out + queued + sw["tx_retired"]:
    sys.exit("soak: FAIL the switch's frame accounting does not add up")
PY

if ! stop_switch; then
	echo "soak: FAIL the switch did not exit cleanly" >&2
	fail=1
fi
if grep -q "runtime error\|ERROR: AddressSanitizer\|LeakSanitizer" "$work/switch.log"; then
	echo "soak: FAIL sanitizer report:" >&2
	grep -m 5 "runtime error\|AddressSanitizer\|LeakSanitizer" "$work/switch.log" >&2
	fail=1
fi
[ "$fail" -eq 0 ] || exit 1
say "PASS: ${secs}s, no sanitizer report, memory flat, accounting adds up"
