#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A guest whose console input is a pipe survives the end of that input.
# The console's interrupts are then freed, which may sleep, and must not
# be done in the SIGIO handler that saw the end: UML 7.3 (and 6.12, with
# the same code) died there with "Segfault with no mm" when the signal
# came in on the idle task.  Each round boots a guest whose console
# reads a fifo, pings it 200 times a second from the namespace, through
# its tap device, so that network interrupts keep coming in on a mostly
# idle guest, closes the fifo in the middle of that, and expects the
# guest to finish its command and power off cleanly.  The console's
# output ends with its input, so a guest that died shows only as one
# that stopped without a result.  ROUNDS overrides the count (default 6).

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "$0")/lib.sh"
require_cmd ping

rounds=${ROUNDS:-6}
ns=$(netns_add coneof)
ip -n "$ns" tuntap add dev cvec0 mode tap
ip -n "$ns" addr add 198.18.7.1/24 dev cvec0
ip -n "$ns" link set cvec0 up

failed=0
for i in $(seq 1 "$rounds"); do
	g=eof$i
	fifo=$TEST_TMP/$g.in
	mkfifo "$fifo"
	# con0 reads the fifo (fd 3), writes console.log; the guest waits
	# for the test to say that input has ended, idles a little more
	# and powers off
	guest "$g" 40 -n "$ns" -a vec0:transport=tap,ifname=cvec0 \
		-a con0=fd:3,fd:1 -- sh -c "
		ip addr add 198.18.7.2/24 dev vec0 && ip link set vec0 up &&
		touch up &&
		for n in \$(seq 1 100); do [ -e closed ] && break; sleep 0.1; done &&
		sleep 1 && echo round-$i-ok" 3<"$fifo" &
	pid=$!
	on_exit "kill $pid 2>/dev/null"
	# the guest opened the fifo before this: it alone holds the write end
	exec {w}>"$fifo"
	if wait_for 30 test -e "$TEST_TMP/$g/up"; then
		ip netns exec "$ns" ping -q -i 0.005 -c 600 -w 4 198.18.7.2 \
			>/dev/null 2>&1 {w}>&- &
		flood=$!
		printf 'type-ahead\n' >&"$w"
		sleep 1
		# end of input while the guest takes the flood's interrupts
		exec {w}>&-
		touch "$TEST_TMP/$g/closed"
		wait "$flood"
	else
		exec {w}>&-
	fi
	wait "$pid"
	rc=$?
	if [ "$rc" -ne 0 ] || ! grep -qx "round-$i-ok" "$TEST_TMP/$g/output.log" ||
	   grep -E "Segfault with no mm|Kernel panic|BUG:|Oops" "$TEST_TMP/$g/console.log"; then
		echo "# round $i: the guest ended with status $rc; console tail:"
		tail -n 8 "$TEST_TMP/$g/console.log" | sed 's/^/# /'
		failed=$((failed + 1))
	fi
	rm -rf "${TEST_TMP:?}/$g" "$fifo"
done
[ "$failed" -eq 0 ]
check_err $? "$failed of $rounds guests did not survive the end of their console's input"

log_test "console input ends under network interrupts, $rounds rounds"
exit "$RET"
