#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run-fuzz.sh - run each libFuzzer target of a fuzz directory for a
# bounded time: vecswitch's (tools/testing/fuzz/vecswitch) or the vecnet
# driver's (tools/testing/fuzz/vecnet), named by --src (default: the
# current directory; scripts/fuzz.mk passes it). First every file under
# regress/TARGET/ (inputs that once crashed) is replayed, then the target
# fuzzes from the seed corpus in corpus/TARGET/ (copied, so the
# repository's seeds stay as they are). One progress line per target;
# exit 1 when any target crashes, with the input kept.
#
#   run-fuzz.sh [--src DIR] [--bin-dir DIR] [--seconds N] [--keep DIR] [TARGET...]
#
# TARGET is one of the directories under DIR/corpus (default: all of
# them). FUZZ_SECONDS sets the default
# time per target (60).
set -u

bin_dir=
src=$PWD
seconds=${FUZZ_SECONDS:-60}
keep=
targets=()

while [ $# -gt 0 ]; do
	case $1 in
	--src) src=$(cd "$2" && pwd) || exit 2; shift 2 ;;
	--bin-dir) bin_dir=$2; shift 2 ;;
	--seconds) seconds=$2; shift 2 ;;
	--keep) keep=$2; shift 2 ;;
	-h|--help) sed -n '3,16p' "$0"; exit 0 ;;
	-*) echo "run-fuzz.sh: unknown option $1" >&2; exit 2 ;;
	*) targets+=("$1"); shift ;;
	esac
done
[ -n "$bin_dir" ] || bin_dir=$src/build
if [ ${#targets[@]} -eq 0 ]; then
	for t in "$src"/corpus/*/; do
		t=${t%/}
		targets+=("${t##*/}")
	done
fi
case $seconds in
''|*[!0-9]*) echo "run-fuzz.sh: --seconds wants a whole number" >&2; exit 2 ;;
esac

work=$(mktemp -d /tmp/vsw-fuzz.XXXXXX) || exit 1
trap 'rm -rf -- "$work"' EXIT

failed=0
for t in "${targets[@]}"; do
	bin=$bin_dir/fuzz_$t
	if [ ! -x "$bin" ]; then
		echo "fuzz: $t: $bin missing (make -C $src)" >&2
		failed=1
		continue
	fi
	log=$work/$t.log
	art=$work/$t-artifacts/
	mkdir -p "$art" "$work/$t-corpus"
	cp -- "$src/corpus/$t/"* "$work/$t-corpus/" 2>/dev/null

	# inputs that crashed once must never crash again
	regress=("$src/regress/$t/"*)
	if [ -e "${regress[0]}" ] &&
	   ! timeout 120 "$bin" -runs=1 "${regress[@]}" >"$log" 2>&1; then
		echo "fuzz: $t: FAIL replaying regress/$t"
		grep -E 'ERROR|runtime error|invariant' "$log" | head -5
		failed=1
		continue
	fi

	echo "fuzz: $t: fuzzing for ${seconds}s from $(find "$work/$t-corpus" -type f | wc -l) seeds"
	# the time limit is libFuzzer's; timeout only guards against a hang
	timeout $((seconds + 120)) "$bin" -max_total_time="$seconds" \
		-timeout=10 -rss_limit_mb=2048 -max_len=8192 \
		-artifact_prefix="$art" -print_final_stats=1 \
		"$work/$t-corpus" >"$log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1)
	if [ $rc -eq 0 ]; then
		echo "fuzz: $t: ok, ${runs:-?} runs, ${cov:-cov: ?}, corpus $(find "$work/$t-corpus" -type f | wc -l)"
		continue
	fi
	failed=1
	echo "fuzz: $t: FAIL (exit $rc)"
	grep -E 'ERROR|runtime error|invariant|SUMMARY' "$log" | head -5
	if [ -n "$keep" ]; then
		mkdir -p "$keep" && cp -- "$art"* "$log" "$keep/" 2>/dev/null
		echo "fuzz: $t: crash input and log kept in $keep"
	else
		for f in "$art"*; do
			[ -e "$f" ] && echo "fuzz: $t: input (base64): $(base64 -w0 "$f" | head -c 2000)"
		done
	fi
done
exit $failed
