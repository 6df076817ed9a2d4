#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Several networks, each a switch started from a --config file, no guest
# booted (host-side peers stand in for guests):
#
#  1. a file with an unknown option, a value missing, a value too many, a
#     bad value, an option twice (within the file, or in the file and on
#     the command line) or one path for two sockets is refused with its
#     file name and line number, status 2, and leaves no socket behind;
#  2. two switches started from two files (the first the man page's
#     example) run side by side with what the files say (the forwarding
#     table's size and age, hub mode); peers on
#     each network receive each other's broadcasts and nothing of the
#     other network's;
#  3. a third file naming a socket of a running network is refused
#     (status 1) before it made any socket of its own;
#  4. the template unit vecswitch@.service passes systemd-analyze verify
#     (with vecswitch.service), and its command line, run by hand for two
#     networks (one with the man page's /etc/vecswitch example, one with
#     an empty file), makes two networks in /run/vecswitch/NAME that are
#     isolated, whose control sockets 'vecswitch ctl --network NAME'
#     finds, whose dgram and vhost-user sockets 'vecnet-guest --network
#     NAME' hands the guest's kernel, and which run with what their
#     files say.

LIB_NO_GUEST=1
source "$(dirname "$(readlink -f "$0")")/../lib.sh"
require_cmd python3
require_vecswitch

ns=$(netns_add nets)
etc=$TEST_TMP/etc
mkdir -p "$etc" "$TEST_TMP/run"

# config_refused STATUS TEXT FILE [ARGS...]: the switch, given --config
# FILE and ARGS in $etc, stops with STATUS saying TEXT, and no socket is
# left in run/
config_refused() {
	local out

	exits_with "$1" "$2" env -C "$etc" timeout 10 ip netns exec "$ns" \
		env -u LD_PRELOAD "$VECSWITCH" --config "${@:3}"
	out=$(find "$TEST_TMP/run" -type s)
	[ -z "$out" ]
	check_err $? "--config ${*:3}: a refused start left sockets: $out"
}

# conf NAME LINE...: $etc/NAME.conf holding the lines
conf() {
	local f=$etc/$1.conf

	shift
	printf '%s\n' "$@" >"$f"
}

run=$TEST_TMP/run
conf bad1 "dgram $run/b.sock" "foo bar"
config_refused 2 "bad1.conf:2: unknown option 'foo'" bad1.conf
conf bad2 "# a comment" "" "dgram $run/b.sock" "mode 999"
config_refused 2 "bad2.conf:4: mode: '999' is not an octal mode" bad2.conf
conf bad3 "dgram $run/b.sock" "age"
config_refused 2 "bad3.conf:2: age: needs a value" bad3.conf
conf bad4 "dgram $run/b.sock" "mac-lock yes"
config_refused 2 "bad4.conf:2: mac-lock: takes no value, but has 'yes'" bad4.conf
conf bad5 "dgram $run/b.sock" "ctl $run/c.sock" "dgram $run/b2.sock"
config_refused 2 "bad5.conf:3: dgram: given twice (first at bad5.conf:1)" bad5.conf
conf bad6 "dgram $run/b.sock" "ctl $run/b.sock"
config_refused 2 "bad6.conf:2: ctl: $run/b.sock is the path of dgram too" bad6.conf
conf bad7 "dgram $run/b.sock" "max-ports 0"
config_refused 2 "bad7.conf:2: max-ports: '0' is out of range 1..4096" bad7.conf
conf bad8 "dgram $run/b.sock"
config_refused 2 "--dgram: given twice (first at bad8.conf:1)" bad8.conf \
	--dgram "$run/b.sock"
config_refused 2 "--config: nothing.conf: No such file or directory" nothing.conf

# peers.py SW1 SW2 DIR1 DIR2: peers a1 and a2 bound in DIR1 on the switch
# socket SW1, b1 and b2 in DIR2 on SW2, each sending a broadcast once all
# are ports; a line a peer: its name and whose broadcasts it heard
cat >"$TEST_TMP/peers.py" <<'EOF'
import os, select, socket, sys, time
sys.path.insert(0, os.path.join(os.environ["VECNET_SRC"], "tools/testing/selftests/drivers/net"))
import vecnet_wire as w

sw1, sw2, dir1, dir2 = sys.argv[1:5]
peers = {}
for i, name in enumerate(("a1", "a2", "b1", "b2")):
    sw, d = (sw1, dir1) if name[0] == "a" else (sw2, dir2)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(f"{d}/{name}.sock")
    s.setblocking(False)
    peers[name] = (s, sw, bytes([2, 0, 0, 0, 0, i + 1]))

def send_all(tag):
    for name, (s, sw, mac) in peers.items():
        s.sendto(w.eth(b"\xff" * 6, mac, 0x88B5, (tag + name).encode().ljust(46, b"\0")), sw)

def recv_all(secs, tag):
    seen = {name: set() for name in peers}
    end = time.monotonic() + secs
    while time.monotonic() < end:
        r, _, _ = select.select([p[0] for p in peers.values()], [], [], 0.05)
        for name, (s, _, _) in peers.items():
            if s in r:
                text = s.recv(65536)[14:].rstrip(b"\0").decode(errors="replace")
                if text.startswith(tag):
                    seen[name].add(text[len(tag):])
    return seen

send_all("hello-")
recv_all(0.5, "hello-")
send_all("tag-")
seen = recv_all(1.5, "tag-")
for name in peers:
    print(name, ",".join(sorted(seen[name])) or "-")
EOF
heard="a1 a2
a2 a1
b1 b2
b2 b1"

# two networks, each in a directory of its own as the template unit has
mkdir "$run/lab1" "$run/lab2"
# the first the man page's example, its sockets moved
sed "s|/run/lab/|$run/lab1/|" "$VECNET_SRC/Documentation/networking/vecswitch-examples/switch.conf" \
	>"$etc/lab1.conf"
printf '%s\n' "" "fdb-max 1000" "age   60  " >>"$etc/lab1.conf"
conf lab2 "dgram $run/lab2/switch.sock" "ctl $run/lab2/ctl.sock" "hub"
for n in lab1 lab2; do
	ip netns exec "$ns" env -u LD_PRELOAD "$VECSWITCH" --config "$etc/$n.conf" \
		2>"$TEST_TMP/$n.log" &
	on_exit "kill_job $!"
	wait_for 10 test -S "$run/$n/ctl.sock"
	check_err $? "the switch of $n.conf did not start: $(tail -n 3 "$TEST_TMP/$n.log")"
done
[ "$RET" = 0 ] || { log_test "two networks from two config files"; exit "$RET"; }
out=$(vsw ctl --ctl "$run/lab1/ctl.sock" fdb --json)
python3 -c 'import json, sys; d = json.loads(sys.argv[1]); sys.exit(d["max"] != 1000 or d["age"] != 60)' "$out"
check_err $? "lab1.conf's fdb-max 1000 and age 60 are not the switch's: $out"
grep -q 'running (io [a-z]*, hub)' "$TEST_TMP/lab2.log"
check_err $? "lab2.conf's hub is not the switch's: $(grep running "$TEST_TMP/lab2.log")"

# two peers a network; each sends a broadcast once all are ports, and
# says whose it received
out=$(ip netns exec "$ns" python3 "$TEST_TMP/peers.py" "$run/lab1/switch.sock" \
	"$run/lab2/switch.sock" "$run/lab1" "$run/lab2")
check_err $? "the peers failed: $out"
[ "$out" = "$heard" ]
check_err $? "each peer should hear its own network only; peer and whose broadcasts it heard: $(tr '\n' ' ' <<<"$out")"
for n in lab1 lab2; do
	ports=$(vsw ctl --ctl "$run/$n/ctl.sock" ports | grep -c '\.sock$')
	[ "$ports" = 2 ]
	check_err $? "$n has $ports ports, not its 2 peers: $(vsw ctl --ctl "$run/$n/ctl.sock" ports)"
done

# a third network whose file names lab1's socket: refused before it made
# its own (its control socket comes first in the file)
mkdir "$run/lab3"
conf lab3 "ctl $run/lab3/ctl.sock" "dgram $run/lab1/switch.sock"
out=$(timeout 10 ip netns exec "$ns" env -u LD_PRELOAD "$VECSWITCH" --config "$etc/lab3.conf" 2>&1)
rc=$?
[ "$rc" = 1 ] && grep -qF "$run/lab1/switch.sock: in use by a running switch" <<<"$out"
check_err $? "lab3.conf naming lab1's socket: status $rc, said: $out"
[ ! -e "$run/lab3/ctl.sock" ] && [ -S "$run/lab1/switch.sock" ]
check_err $? "the refused lab3 left its control socket, or took lab1's: $(ls -l "$run/lab3" "$run/lab1")"

# ---- the template unit, vecswitch@.service --------------------------------

template=$VECNET_SRC/tools/net/vecswitch/vecswitch@.service
if command -v systemd-analyze >/dev/null; then
	mkdir "$TEST_TMP/units"
	sed "s|/usr/local/bin/vecswitch|$VECNET_BUILD/vecswitch|" "$template" \
		>"$TEST_TMP/units/vecswitch@.service"
	sed "s|/usr/local/bin/vecswitch|$VECNET_BUILD/vecswitch|" "${template%@.service}.service" \
		>"$TEST_TMP/units/vecswitch.service"
	out=$(systemd-analyze verify --man=no "$TEST_TMP/units/vecswitch.service" \
		"$TEST_TMP/units/vecswitch@lab1.service" 2>&1)
	[ -z "$out" ]
	check_err $? "systemd-analyze verify of the units: $out"
else
	echo "# no systemd-analyze: the units are not verified"
fi

# Where systemd is not the init, the template's command line for two
# networks, run by hand in a mount namespace whose /run is the test's
# (with the networks' directories, as RuntimeDirectory= makes them) and
# with the networks' files in $etc: lab1's the man page's example, lab2's
# empty.  The groups of the sockets are root's.
ip netns exec "$ns" unshare -m --propagation private sh -c '
	mount -t tmpfs -o mode=0755 tmpfs /run &&
	mkdir -p /run/vecswitch/lab1 /run/vecswitch/lab2 &&
	touch /run/.vecnet-nets && exec sleep 300' >/dev/null 2>&1 &
holder=$!
on_exit "kill $holder 2>/dev/null"
wait_for 10 nsenter -t "$holder" -m test -e /run/.vecnet-nets
check_err $? "no mount namespace for the networks"
in_run() { nsenter -t "$holder" -m -n -- "$@"; }
cp "$VECNET_SRC/Documentation/networking/vecswitch-examples/lab1.conf" "$etc/lab1.conf"
: >"$etc/lab2.conf"
read -ra cmd < <(sed -n '/^ExecStart=/,/[^\\]$/p' "$template" |
	sed 's/^ExecStart=//; s/\\$//' | tr '\n\t' '  ')
for n in lab1 lab2; do
	args=("$VECSWITCH")
	for a in "${cmd[@]:1}"; do
		case $a in
		vecnet | vecnet-admin) a=root ;;
		*) a=${a//%i/$n}; a=${a/#\/etc\/vecswitch\//$etc/} ;;
		esac
		args+=("$a")
	done
	echo "# $n: ${args[*]}"
	in_run env -u LD_PRELOAD "${args[@]}" 2>"$TEST_TMP/unit-$n.log" &
	on_exit "kill_job $!"
	wait_for 10 in_run test -S "/run/vecswitch/$n/ctl.sock"
	check_err $? "the template's command line for $n did not start: $(tail -n 3 "$TEST_TMP/unit-$n.log")"
done
# the sockets' modes are the unit's: the groups' (vecnet, vecnet-admin)
modes=$(in_run stat -c '%n %a' /run/vecswitch/lab1/switch.sock /run/vecswitch/lab1/vhost.sock \
	/run/vecswitch/lab1/stream.sock /run/vecswitch/lab1/ctl.sock)
[ "$(grep -c ' 660$' <<<"$modes")" = 4 ]
check_err $? "the template's sockets are not mode 0660: $modes"
mkdir "$TEST_TMP/p1" "$TEST_TMP/p2"
out=$(in_run python3 "$TEST_TMP/peers.py" /run/vecswitch/lab1/switch.sock \
	/run/vecswitch/lab2/switch.sock "$TEST_TMP/p1" "$TEST_TMP/p2")
check_err $? "the peers on the template's networks failed: $out"
[ "$out" = "$heard" ]
check_err $? "on the template's networks, each peer should hear its own network only: $(tr '\n' ' ' <<<"$out")"
# ctl --network finds a network's control socket; lab1's file locked the
# peers' MACs (mac-lock), lab2's empty one did not
for n in lab1 lab2; do
	out=$(in_run env -u LD_PRELOAD "$VECSWITCH" ctl --network "$n" ports --json)
	check_err $? "ctl --network $n ports: $out"
	locked=$(python3 -c 'import json, sys
print(sum(p["locked_mac"] is not None for p in json.loads(sys.argv[1])["ports"]))' "$out")
	want=0
	[ "$n" = lab2 ] || want=2
	[ "$locked" = "$want" ]
	check_err $? "$n: $locked ports with a locked MAC, not $want: $out"
done
out=$(in_run env -u LD_PRELOAD "$VECSWITCH" ctl --network lab9 ports 2>&1)
[ $? = 1 ] && grep -qF "no control socket /run/vecswitch/lab9/ctl.sock (is vecswitch@lab9.service running?)" <<<"$out"
check_err $? "ctl --network of a network not running: $out"

# vecnet-guest --network finds a network's sockets: a stand-in for the
# kernel records the command line it is given (and has the string by
# which vecnet-guest knows a kernel with virtio_uml)
kernel=$TEST_TMP/fake-vmlinux
printf '%s\n' '#!/bin/sh' ": <<'END'" 'virtio_uml.' END \
	"printf '%s\\n' \"\$@\" >$TEST_TMP/kernel.args" >"$kernel"
chmod 755 "$kernel"
guest=$VECNET_SRC/scripts/vecnet-guest
for mode in dgram vhost-user; do
	opt=() want="vec0:transport=unixdgram,path=/run/vecswitch/lab2/switch.sock,local="
	[ "$mode" = dgram ] || { opt=(--vhost-user); want="virtio_uml.device=/run/vecswitch/lab2/vhost.sock:1"; }
	rm -f "$TEST_TMP/kernel.args"
	out=$(in_run "$guest" -k "$kernel" --network lab2 "${opt[@]}" g </dev/null 2>&1)
	check_err $? "vecnet-guest --network lab2 ${opt[*]}: $out"
	grep -qF -- "$want" "$TEST_TMP/kernel.args" 2>/dev/null
	check_err $? "vecnet-guest --network lab2 ${opt[*]} did not hand the kernel $want: $(cat "$TEST_TMP/kernel.args" 2>&1)"
done
out=$(in_run "$guest" -k "$kernel" --network lab9 g </dev/null 2>&1)
[ $? = 2 ] && grep -qF "no socket /run/vecswitch/lab9/switch.sock (is vecswitch@lab9.service running?)" <<<"$out"
check_err $? "vecnet-guest --network of a network not running: $out"

log_test "networks from config files: refused lines, two side by side, isolated"
exit "$RET"
