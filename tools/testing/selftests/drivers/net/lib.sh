#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What the net tests beside this file share: the switch, guests booted in
# agent mode and the commands run in them, reachability, iperf3 results
# and the switch's counters.  Sourced, never run: each test sources
# ../lib.sh, which brings the generic guest harness (um/lib.sh: RET,
# check_err, log_test, netns_add, on_exit, wait_for, guest, the iperf3
# results and the clean-up on exit) with it.  That harness is found
# through VECNET_SRC, which make check exports, so that no test climbs
# the tree to reach it.  The scripts (demo, soak, bench) source it too,
# without the harness's verdicts (see VECNET_LIB_NO_HARNESS in um/lib.sh).
#
# A guest G lives in $TEST_TMP/G.  The switch is $VECSWITCH, its standard
# error goes to $TEST_TMP/switch.log; ctl talks to it at $CTL (default
# $TEST_TMP/ctl).

if [ -z "${VECNET_SRC:-}" ]; then
	echo "SKIP: VECNET_SRC and VECNET_BUILD are not set (run through 'make check')"
	exit 4
fi
# shellcheck source-path=SCRIPTDIR/../.. source-path=SCRIPTDIR/../../.. source=um/lib.sh
source "$VECNET_SRC/tools/testing/selftests/um/lib.sh"

NET_LIB_DIR=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
# the driver's tests keep their helper programs beside them
VECNET_TEST_DIR=$NET_LIB_DIR/vecnet

declare -A GUEST_PID

# --- guests -----------------------------------------------------------------

# guest_bg NAME TIMEOUT [uml-run options] -- CMD...: boot a guest in the
# background; guest_wait NAME returns its status, guest_done records it
guest_bg() {
	guest "$@" &
	GUEST_PID[$1]=$!
	on_exit "kill ${GUEST_PID[$1]} 2>/dev/null"
}

guest_wait() {
	wait "${GUEST_PID[$1]}"
}

# guest_done NAME TEXT: guest_wait; a guest that failed is recorded as
# TEXT with the last lines of its output
guest_done() {
	guest_wait "$1"
	check_err $? "$2: $(tail -n 3 "$TEST_TMP/$1/output.log" 2>/dev/null)"
}

# guest_out NAME FILE: a file the guest left in its output directory
guest_out() {
	echo "$TEST_TMP/$1/$2"
}

# no_crash NAME: the guest's kernel reported nothing bad
no_crash() {
	! grep -E "Kernel panic|BUG:|Oops|WARNING:|Segmentation fault" \
		"$TEST_TMP/$1/console.log"
}

# guest_script NAME < SCRIPT: store a guest-side shell script and print
# its path (uml-run's init is dash, which cannot take multi-line
# commands quoted by bash)
guest_script() {
	{
		printf '. %q\n' "$VECNET_TEST_DIR/guest_lib.sh"
		cat
	} >"$TEST_TMP/$1.sh"
	echo "$TEST_TMP/$1.sh"
}

# agent NS PREFIX NAME [uml-run options]: boot guest NAME in namespace NS
# in agent mode (output in $TEST_TMP/NAME), stopped when the test ends;
# it powers off after AGENT_TIMEOUT (400) seconds.  exec_in NAME CMD...
# runs a command in it, for EXEC_TIMEOUT (120) seconds at most
agent() {
	local ns=$1 prefix=$2 g=$3

	shift 3
	"$UML_RUN" -k "$VMLINUX" -n "$ns" -N "$prefix-$g-$$" -t "${AGENT_TIMEOUT:-400}" -q \
		-o "$TEST_TMP/$g" "$@" --agent &
	on_exit "$VECNET_SRC/scripts/uml-exec --stop $TEST_TMP/$g"
}

exec_in() {
	local g=$1

	shift
	"$VECNET_SRC/scripts/uml-exec" -t "${EXEC_TIMEOUT:-120}" "$TEST_TMP/$g" -- "$@"
}

# agents_ready NAME GUEST...: each GUEST's agent answers within 120 s; a
# guest that did not boot ends the test NAME
agents_ready() {
	local name=$1 g

	shift
	for g in "$@"; do
		wait_for 120 test -e "$TEST_TMP/$g/agent/ready"
		check_err $? "guest $g did not boot"
	done
	[ "$RET" -eq 0 ] || { log_test "$name"; exit "$RET"; }
}

# shellcheck disable=SC2154  # ip and mac are the sourcing test's
# guests_up NAME GUEST...: vec0 up with ${ip[GUEST]} in each; a guest that
# did not boot ends the test NAME
guests_up() {
	local name=$1 g

	shift
	for g in "$@"; do
		exec_in "$g" sh -c "ip addr add ${ip[$g]}/24 dev vec0 && ip link set vec0 up"
		check_err $? "guest $g did not boot or bring vec0 up"
	done
	[ "$RET" -eq 0 ] || { log_test "$name"; exit "$RET"; }
}

# --- QEMU light guests ---------------------------------------------------

# has_line SECONDS FILE PATTERN: true once PATTERN shows up in FILE (a
# light guest's console: VSW_INIT, VSW_UP, VSW_PING_OK)
has_line() {
	wait_for "$1" grep -q -- "$3" "$2"
}

# qemu_boot NAME ACCEL NETDEV MAC IP PEER [QEMU OPTION...]: a QEMU light
# guest (scripts/qemu-initrd.sh: $VSW_KERNEL with $TEST_TMP/initrd.gz) in
# namespace $ns, its console in $TEST_TMP/NAME.log, its pid added to
# qemu_pids; IP is VSW_IP (an address, or dhcp), PEER VSW_PEER, and
# $append_extra goes on its command line too.  An empty NETDEV: the
# options bring the network device (and MAC) themselves
qemu_boot() {
	local qnet=()

	[ -z "$3" ] || qnet=(-netdev "$3" -device "virtio-net-pci,netdev=n0,mac=$4")
	ip netns exec "$ns" "${QEMU:-qemu-system-x86_64}" -accel "$2" -m 256 -smp 1 -nodefaults \
		-no-reboot "${@:7}" \
		-display none -monitor none -serial "file:$TEST_TMP/$1.log" \
		-kernel "$VSW_KERNEL" -initrd "$TEST_TMP/initrd.gz" \
		-append "console=ttyS0 panic=-1 loglevel=4 VSW_IP=$5 VSW_PEER=$6 ${append_extra:-}" \
		"${qnet[@]}" 2> "$TEST_TMP/$1.qemu.log" &
	qemu_pids+=("$!")
	on_exit "kill_job $!"
}

# vhost_example MAC SOCK: the options after qemu-system-x86_64 of
# vecswitch(8)'s vhost-user QEMU example, one a line, as the document has
# them (its memory, its device with vectors=0, which QEMU 7.2 under TCG
# needs), with what "..." leaves out left out, and the switch's socket
# SOCK and the guest's MAC put in
vhost_example() {
	local w words example

	example=$VECNET_SRC/Documentation/networking/vecswitch-examples/vhost-user-qemu.txt
	read -ra words < <(sed 's/\\$//' "$example" | tr '\n' ' ')
	for w in "${words[@]:1}"; do
		w=${w//\/run\/vecswitch\/vhost.sock/$2}
		[ "$w" = ... ] || echo "${w//mac=52:54:00:12:34:56/mac=$1}"
	done
}

# --- reachability -----------------------------------------------------------

# reach NAME ADDR [TRIES]: guest NAME pings ADDR until an answer comes,
# one try a second, TRIES (15) at most
reach() {
	# shellcheck disable=SC2016  # expanded in the guest
	exec_in "$1" sh -c 'for i in $(seq 1 "$2"); do ping -c 1 -W 1 "$1" >/dev/null && exit 0; done; exit 1' \
		sh "$2" "${3:-15}"
}

# reach_guest FROM TO: FROM reaches ${ip[TO]} within 30 tries; a failure
# is recorded
reach_guest() {
	reach "$1" "${ip[$2]}" 30
	check_err $? "$1 never reached $2"
}

# --- the switch -------------------------------------------------------------

# require_vecswitch: skip the test (exit 4) unless $VECSWITCH is a switch
# to run (make check sets it to the sanitizer build)
require_vecswitch() {
	[ -x "${VECSWITCH:-}" ] && return 0
	echo "SKIP: no vecswitch binary in \$VECSWITCH"
	exit "$ksft_skip"
}

# start_switch NS ARGS...: $VECSWITCH with ARGS in namespace NS, in the
# background, stopped when the test ends; its pid goes to SWITCH_PID, its
# standard error to $SWITCH_LOG (default $TEST_TMP/switch.log).
# True once its control socket (--ctl), or when it has none the first
# socket it was told to make, is there, within 10 s.  Call it directly,
# not as $(start_switch ...): SWITCH_PID would stay in the subshell.
start_switch() {
	local ns=$1 a prev='' ctl='' first=''

	shift
	for a; do
		case $prev in
		--ctl) ctl=$a ;;
		--dgram | --stream | --seqpacket | --vnet | --vhost-user) first=${first:-$a} ;;
		esac
		prev=$a
	done
	# (no LD_PRELOAD: the kselftest runner's stdbuf upsets the ASan build)
	ip netns exec "$ns" env -u LD_PRELOAD "$VECSWITCH" "$@" \
		2>>"${SWITCH_LOG:-$TEST_TMP/switch.log}" &
	SWITCH_PID=$!
	on_exit "kill_job $SWITCH_PID"
	wait_for 10 test -S "${ctl:-$first}"
}

# kill_job PID: kill PID if it is still a job of this shell; once reaped,
# its number may be another process's
# shellcheck disable=SC2317  # run by the cleanup hooks
kill_job() {
	local j

	for j in $(jobs -p); do
		[ "$j" = "$1" ] && kill "$1" 2>/dev/null
	done
	return 0
}

# switch_at NS SOCK CTL [FLAGS...]: start_switch on the datagram socket
# SOCK with the control socket CTL, the socket file of a switch before it
# removed first; true once both sockets are there
switch_at() {
	local ns=$1 sock=$2 ctl=$3

	shift 3
	rm -f "$sock"
	start_switch "$ns" --dgram "$sock" --ctl "$ctl" "$@" && wait_for 5 test -S "$sock"
}

# stop_switch: the switch start_switch started last, sent SIGTERM and
# reaped; its exit status, or 124 when it had not gone 10 s later (it
# is then killed)
# shellcheck disable=SC2317  # run by the cleanup hooks too
stop_switch() {
	kill "$SWITCH_PID" 2>/dev/null || return 1
	if ! timeout 10 tail --pid="$SWITCH_PID" -f /dev/null; then
		kill -KILL "$SWITCH_PID" 2>/dev/null
		wait "$SWITCH_PID" 2>/dev/null
		return 124
	fi
	wait "$SWITCH_PID"
}

# require_vecnat: skip the test unless the NAT program the switch starts
# for --nat (vecnat, or vecnat-asan for vecswitch-asan) is beside it
require_vecnat() {
	local nat

	nat=$(dirname "$VECSWITCH")/$(basename "$VECSWITCH" | sed 's/vecswitch/vecnat/')
	[ -x "$nat" ] && return 0
	echo "SKIP: no vecnat beside the switch at $nat (make tools)"
	exit "$ksft_skip"
}

ctl() { env -u LD_PRELOAD "$VECSWITCH" ctl --ctl "${CTL:-$TEST_TMP/ctl}" "$@"; }

# sw_stat COUNTER: a counter of the whole switch (ctl stats)
sw_stat() {
	ctl stats --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["switch"][sys.argv[1]])' "$1"
}

# sw_stat_is COUNTER VALUE: true when the switch's counter has that value
# shellcheck disable=SC2317  # called through wait_for
sw_stat_is() {
	[ "$(sw_stat "$1")" = "$2" ]
}

# sw_stat_ge COUNTER MIN: true when the switch's counter is at least MIN
# shellcheck disable=SC2317  # called through wait_for
sw_stat_ge() {
	[ "$(sw_stat "$1")" -ge "$2" ]
}

# port_stat GUEST COUNTER: that counter of the port named after the guest's
# socket, or "gone" when the switch has no such port
port_stat() {
	ctl stats --json | python3 -c 'import json,sys
s = json.load(sys.stdin)
m = [p[sys.argv[2]] for p in s["ports"] if p["name"] == sys.argv[1]]
print(sum(m) if m else "gone")' "$TEST_TMP/$1.sock" "$2"
}

# --- counters and results ---------------------------------------------------

# xstat FILE NAME: one counter from a saved "ethtool -S" listing
xstat() {
	awk -v n="$2:" '$1 == n { print $2; f = 1 } END { if (!f) print -1 }' "$1"
}

# guest_xstat GUEST COUNTER: a counter of the guest's ethtool -S vec0 now
guest_xstat() {
	exec_in "$1" ethtool -S vec0 | awk -v k="$2:" '$1 == k { print $2 }'
}

# link_stat FILE FIELD: rx_packets, tx_dropped, ... from "ip -s -j link"
link_stat() {
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))[0]["stats64"]
k = sys.argv[2]
print(d["rx" if k.startswith("rx") else "tx"][k[3:]])' "$1" "$2" 2>/dev/null ||
		echo -1
}

# no_drops NAME: the guest's tx_dropped and rx_dropped did not move
# between its before.link and after.link snapshots.  Frames the stack
# drops while the carrier waits for the peer are outside that window.
no_drops() {
	local f v

	for f in tx_dropped rx_dropped; do
		v=$(( $(link_stat "$(guest_out "$1" after.link)" $f) -
		      $(link_stat "$(guest_out "$1" before.link)" $f) ))
		[ "$v" -eq 0 ] || { echo "$1: $f moved by $v"; return 1; }
	done
}

# guest_iperf NAME TEXT EXEC NS ADDR [-R]: 5 s of iperf3 from a guest
# (commands run through the function EXEC) to a server on ADDR in
# namespace NS, or back with -R.  The guest retries while the path comes
# up.  Prints "iperf3 NAME TEXT: N Mbit/s"; fails the test when iperf3
# fails or moves nothing.
guest_iperf() {
	local name=$1 text=$2 exec=$3 ns=$4 addr=$5 bps server

	shift 5
	ip netns exec "$ns" timeout 60 iperf3 -s -1 -B "$addr" >/dev/null 2>&1 &
	server=$!
	# shellcheck disable=SC2016  # expanded in the guest
	"$exec" sh -c 'a=$1; shift; f=$(mktemp); for i in $(seq 1 50); do
		iperf3 -c "$a" -t 5 -J "$@" >"$f" && { cat "$f"; rm -f "$f"; exit 0; }
		sleep 0.2; done; rm -f "$f"; exit 1' sh "$addr" "$@" >"$TEST_TMP/$name.json"
	check_err $? "iperf3 $name failed"
	wait "$server"
	bps=$(iperf_bps "$TEST_TMP/$name.json")
	echo "# iperf3 $name $text: $((bps / 1000000)) Mbit/s"
	[ "$bps" -gt 0 ]
	check_err $? "iperf3 $name moved nothing"
}

# --- frames on packet sockets and the datagram peer -------------------------

# flow_counted FROM TO COUNTERS...: frame counters on a packet socket in
# each guest of COUNTERS (TO among them) count the frames addressed to
# FROM's or TO's MAC (${mac[G]}) while FROM pings TO and runs a 5 s iperf3
# to it (TO's server must be running). TO must count the flow; what the
# others count is left in $TEST_TMP/G.count for flow_seen.
# shellcheck disable=SC2154  # ip and mac are the sourcing test's
flow_counted() {
	local from=$1 to=$2 g p bps sniffers=()

	shift 2
	for g in "$@"; do
		exec_in "$g" env FRAME_COUNT_READY="$TEST_TMP/$g/ready" \
			python3 "$FRAMES" count vec0 30 "${mac[$from]}" "${mac[$to]}" \
			>"$TEST_TMP/$g.count" &
		sniffers+=($!)
	done
	for g in "$@"; do
		wait_for 30 test -e "$TEST_TMP/$g/ready"
		check_err $? "the frame counter in $g did not start"
	done
	exec_in "$from" ping -c 5 -i 0.2 "${ip[$to]}" >"$TEST_TMP/ping.log"
	check_err $? "ping $from -> $to lost packets: $(tail -n 2 "$TEST_TMP/ping.log")"
	exec_in "$from" iperf3 -c "${ip[$to]}" -t 5 -J >"$TEST_TMP/iperf.json"
	check_err $? "iperf3 $from -> $to failed"
	for p in "${sniffers[@]}"; do
		wait "$p"
	done
	bps=$(iperf_bps "$TEST_TMP/iperf.json")
	echo "# iperf3 $from -> $to: $((bps / 1000000)) Mbit/s"
	[ "$bps" -gt 0 ]
	check_err $? "iperf3 $from -> $to moved nothing"
	p=$(flow_seen "$to" "$to")
	echo "# $to received $p frames addressed to it"
	[ "$p" -gt 1000 ]
	check_err $? "the frame counter in $to saw only $p frames of the flow"
}

# flow_seen GUEST MAC_OF...: frames GUEST counted addressed to those guests
flow_seen() {
	local g=$1 m n=0 k

	shift
	for k in "$@"; do
		m=$(awk -v k="${mac[$k]}" '$1 == k { print $2 }' "$TEST_TMP/$g.count")
		n=$((n + ${m:-0}))
	done
	echo "$n"
}

# peer_start NAME NS ARGS...: the host-side datagram peer (dgram_peer.py)
# in namespace NS, where its receive queue limit is taken from
peer_start() {
	local name=$1 ns=$2

	shift 2
	ip netns exec "$ns" python3 "$VECNET_TEST_DIR/dgram_peer.py" --out "$TEST_TMP/$name.count" "$@" \
		>"$TEST_TMP/$name.log" 2>&1 &
	on_exit "kill $! 2>/dev/null"
	wait_for 10 test -s "$TEST_TMP/$name.count"
}

# peer_count NAME KEY: frames, ipv4, icmp or udp received by the peer
peer_count() {
	awk -v k="$2" '$1 == k { print $2 }' "$TEST_TMP/$1.count"
}

# --- vhost-user ports and QEMU light guests ---------------------------------

# eventfds: how many eventfds the switch holds (its io_uring backend has
# one of its own; vhost-user frontends hand over their kicks and calls)
eventfds() {
	find "/proc/$SWITCH_PID/fd" -lname 'anon_inode:\[eventfd\]' | wc -l
}

# vhost_stat COUNTER: that counter summed over the vhost-user ports, or
# "gone" when the switch has none
vhost_stat() {
	ctl stats --json | python3 -c 'import json,sys
m = [p[sys.argv[1]] for p in json.load(sys.stdin)["ports"] if p["type"] == "vhost-user"]
print(sum(m) if m else "gone")' "$1"
}

# shellcheck disable=SC2317  # run by wait_for
vhost_gone() {
	[ "$(vhost_stat rx_frames)" = gone ]
}

# let_go OWN: the switch maps no memfd (a QEMU guest's memory) and holds
# no eventfd beyond OWN, the number it had before any frontend came
# shellcheck disable=SC2317  # run by wait_for
let_go() {
	! grep -q "memfd:" "/proc/$SWITCH_PID/maps" && [ "$(eventfds)" -eq "$1" ]
}

# sanitized: the switch's log has no sanitizer report
sanitized() {
	! grep -qE 'Sanitizer|runtime error' "$TEST_TMP/switch.log"
}

# light_initrd OUT: the QEMU light guests' initramfs built at OUT
# (scripts/qemu-initrd.sh) and the kernel image they boot in VSW_KERNEL.
# The test is skipped when the host lacks either; a failed build is
# recorded and returns false.
light_initrd() {
	# shellcheck disable=SC2034  # the sourcing test boots it
	VSW_KERNEL=$("$VECNET_SRC/scripts/qemu-initrd.sh" "$1")
	case $? in
	0) ;;
	4) echo "SKIP: no light guest kernel or initramfs tools (see above)"; exit "$ksft_skip" ;;
	*) check_err 1 "building the initramfs failed"; return 1 ;;
	esac
}

# console_md5 CONSOLE PATH: the MD5 sum a light guest's md5sum printed
# for PATH on its console (the last one); file_md5 FILE: a host file's
console_md5() {
	tr -d '\r' <"$1" | awk -v f="$2" '$2 == f && length($1) == 32 { print $1 }' | tail -n 1
}

file_md5() {
	md5sum <"$1" 2>/dev/null | cut -d' ' -f1
}

# tail_logs FILE...: the last 25 lines of each FILE there is, to show
# what the guests and the switch said before a failure
tail_logs() {
	local f

	for f; do
		[ -f "$f" ] || continue
		echo "# ---- $(basename "$f") (last lines)"
		tail -n 25 "$f" | sed 's/^/#   /'
	done
}

# --- shared by several tests, written once ---------------------------------

# xstat_ge GUEST COUNTER N: the guest's ethtool -S counter is N or more
xstat_ge() { [ "$(guest_xstat "$1" "$2")" -ge "$3" ]; }

# dgram_link DEV ME PEER [OPTS]: the vecN: option of a direct unixdgram
# link DEV between guests ME and PEER (sockets $TEST_TMP/<guest><DEV>.sock),
# with ",OPTS" appended as given
dgram_link() {
	echo "$1:transport=unixdgram,local=$TEST_TMP/$2$1.sock,path=$TEST_TMP/$3$1.sock$4"
}

# vsw ARGS...: the switch under test, without the sanitizer's preload
vsw() { env -u LD_PRELOAD "$VECSWITCH" "$@"; }

# exits_with STATUS TEXT CMD...: CMD exits with STATUS and says TEXT (on
# its standard output or error)
exits_with() {
	local want=$1 text=$2 out rc

	shift 2
	out=$("$@" 2>&1)
	rc=$?
	[ "$rc" = "$want" ] && grep -qF -- "$text" <<<"$out"
	check_err $? "'$*': status $rc (want $want), said: $out"
}

# finish: the test's verdict under $NAME, after the last lines of its logs
# ($TEST_TMP/*.log and the files in FINISH_LOGS) when it failed; exits
finish() {
	[ "$RET" -eq 0 ] || tail_logs "$TEST_TMP"/*.log "${FINISH_LOGS[@]}"
	log_test "${NAME:?the test names itself in NAME}"
	exit "$RET"
}

# --- the scripts' messages --------------------------------------------------

# say TEXT: a progress line of the soak or the bench, tagged $SAY_TAG
say() {
	printf '  %-7s %s\n' "${SAY_TAG:-}" "$*"
}

# die TEXT: a script's fatal error, after $DIE_PREFIX, on standard error;
# the script ends with status 1
die() {
	echo "${DIE_PREFIX:-}$*" >&2
	exit 1
}
