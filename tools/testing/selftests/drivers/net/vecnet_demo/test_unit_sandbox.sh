#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The example unit's sandbox, with guests where users put them.  systemd
# is not the init here, so the switch runs under what the unit's
# settings do, made with unshare: PrivateTmp (a /tmp of its own, also
# whenever DynamicUser is on, which implies it for good),
# ProtectHome (home directories hidden, or read-only), PrivateNetwork (a
# network namespace of its own).  Two guests bind their sockets where
# guests do: one under /tmp (as scripts/vecnet-guest does), one in a home
# directory (UML's default uml_dir is ~/.uml).  They must reach each
# other through the sandboxed switch, and the switch must keep the unix
# socket diagnostics that RestrictAddressFamilies could take away.
#
# vecswitch@.service, the template unit of one switch a network, must
# carry the same settings but for its command line (with the network's
# --config file), runtime directory (a network's, inside the unit's)
# and description.
#
# The switch also runs under the unit's seccomp filter, put in place by a
# few lines of Python: SystemCallFilter= (groups as systemd-analyze lists
# them, @default added as systemd adds it), SystemCallErrorNumber=,
# SystemCallArchitectures=native and RestrictAddressFamilies= for socket().
# It must run with io_uring (not fall back to recvmmsg), with its
# diagnostics, raise its open-file limit from systemd's soft 1024 and give
# its sockets their group (--group), while a call the filter leaves out
# fails with the unit's errno.  With --nat, the NAT process must say at
# once that the unit's address families leave the guests nothing
# outside, and still answer.  ProtectHostname is a UTS namespace here,
# ProtectKernelTunables and ProtectControlGroups read-only mounts.  Not
# emulated: what those settings and ProtectClock, ProtectKernelModules,
# ProtectKernelLogs, RestrictNamespaces, RestrictRealtime and
# RestrictSUIDSGID take from a process without capabilities (the switch
# here is root) or filter by argument: the switch never needs them.  The
# unit must not set PrivateUsers, nor ProtectProc=invisible (noaccess,
# ptraceable): they would hide whose guests are whose from the switch.

source "$(dirname "$(readlink -f "$0")")/../lib.sh"
require_cmd unshare python3 systemd-analyze cc
# the build the unit runs: the sanitized one's LeakSanitizer needs
# ptrace at exit, which the filter refuses
switch=$VECNET_BUILD/vecswitch
[ -x "$switch" ] || { echo "SKIP: no $switch (make tools builds it)"; exit "$ksft_skip"; }
[ "$(uname -m)" = x86_64 ] || { echo "SKIP: the filter below is written for x86_64"; exit "$ksft_skip"; }

unit=$VECNET_SRC/tools/net/vecswitch/vecswitch.service
# unit_get KEY: its value in the unit, or nothing
unit_get() { sed -n "s/^$1=//p" "$unit" | tail -n 1; }

# The template unit, one switch a network, has this unit's sandbox line
# for line: every setting the same and in the same order, but for its
# description, its runtime directory (a network's, inside this unit's)
# and its command line (the same, with the network's --config file and
# its sockets in that directory), so that the filter applied below
# holds for it too
template=$VECNET_SRC/tools/net/vecswitch/vecswitch@.service
# settings FILE: its settings, less those three and comments
settings() {
	grep -v -e '^[[:space:]]*#' -e '^[[:space:]]*$' -e '^[[:space:]]' \
		-e '^ExecStart=' -e '^RuntimeDirectory=' -e '^Description=' "$1"
}
# exec_line FILE: its ExecStart= on one line
exec_line() { sed -n '/^ExecStart=/,/[^\\]$/p' "$1" | tr -d '\\\n\t' | tr -s ' '; }
out=$(diff <(settings "$unit") <(settings "$template") 2>&1)
check_err $? "vecswitch@.service's settings are not vecswitch.service's: $out"
[ "$(sed -n 's/^RuntimeDirectory=//p' "$template")" = "$(unit_get RuntimeDirectory)/%i" ]
check_err $? "vecswitch@.service's RuntimeDirectory= is not a network's inside vecswitch.service's"
net_exec=$(exec_line "$template")
[[ "$net_exec" == *" --config /etc/vecswitch/%i.conf "* ]] &&
	[ "$(sed 's| --config /etc/vecswitch/%i\.conf||; s|/run/vecswitch/%i/|/run/vecswitch/|g' <<<"$net_exec")" = \
	  "$(exec_line "$unit")" ]
check_err $? "vecswitch@.service's command line is not vecswitch.service's with the network's file and directory: $net_exec"

# What the sandbox does, as mounts in a mount namespace of the switch's
sandbox=()
mounts=""
# DynamicUser=yes implies PrivateTmp=yes and ProtectHome=read-only,
# whatever the unit says of them (systemd.exec(5))
private_tmp=$(unit_get PrivateTmp)
protect_home=$(unit_get ProtectHome)
case $(unit_get DynamicUser) in
yes|true|1) private_tmp=yes; [ "$protect_home" = yes ] || protect_home=read-only ;;
esac
case $private_tmp in
yes|true|1) mounts+="mount -t tmpfs vecnet-tmp /tmp && mount -t tmpfs vecnet-tmp /var/tmp && " ;;
esac
for d in /home /root /run/user; do
	[ -d "$d" ] || continue
	case $protect_home in
	yes|true|1) mounts+="mount -t tmpfs -o mode=0755 vecnet-home $d && " ;;
	read-only) mounts+="mount --bind $d $d && mount -o remount,bind,ro $d && " ;;
	tmpfs) mounts+="mount -t tmpfs -o mode=0755 vecnet-home $d && " ;;
	esac
done
case $(unit_get PrivateNetwork) in
yes|true|1) sandbox+=(--net) ;;
esac
case $(unit_get ProtectHostname) in
yes|true|1) sandbox+=(--uts) ;;
esac
case $(unit_get ProtectKernelTunables) in
yes|true|1) mounts+="mount --bind /proc/sys /proc/sys && mount -o remount,bind,ro /proc/sys && "
	mounts+="mount --bind /sys /sys && mount -o remount,bind,ro /sys && " ;;
esac
case $(unit_get ProtectControlGroups) in
yes|true|1) mounts+="mount --bind /sys/fs/cgroup /sys/fs/cgroup && mount -o remount,bind,ro /sys/fs/cgroup && " ;;
esac
# systemd's default soft limit on open files, unless the unit sets one
[ -n "$(unit_get LimitNOFILE)" ] || mounts+="ulimit -Sn 1024 && "
echo "# the unit's sandbox: unshare --mount ${sandbox[*]} with: ${mounts:-no mounts}"

# unix_diag answers over AF_NETLINK
families=$(unit_get RestrictAddressFamilies)
if [ -n "$families" ]; then
	grep -qw AF_NETLINK <<<"$families"
	check_err $? "RestrictAddressFamilies=$families takes the unix socket diagnostics away"
fi
case $(unit_get PrivateUsers) in
yes|true|1|self|identity)
	check_err 1 "PrivateUsers: other users' guests and socket files would all look like nobody's" ;;
esac
case $(unit_get ProtectProc) in
invisible|noaccess|ptraceable)
	check_err 1 "ProtectProc=$(unit_get ProtectProc): the switch could not read the effective ids of other users' guests" ;;
esac

# syscalls NAME|@GROUP: the system calls NAME or GROUP stands for
syscalls() {
	local s

	if [ "${1#@}" = "$1" ]; then
		echo "$1"
		return
	fi
	systemd-analyze syscall-filter "$1" 2>/dev/null | sed 1,2d | tr -s ' \t' '\n' |
		grep -v '^#' | while read -r s; do
			[ -n "$s" ] && syscalls "$s"
		done
}

# The unit's SystemCallFilter= lines in order: the first decides whether
# they list what is allowed (then with @default) or what is not; later
# ones add to that list, or with ~ take from it; an empty one resets it
declare -A listed=()
filter_mode=
while read -r line; do
	if [ -z "$line" ]; then
		listed=() filter_mode=
		continue
	fi
	invert=0
	[ "${line#\~}" = "$line" ] || { invert=1; line=${line#\~}; }
	if [ -z "$filter_mode" ]; then
		filter_mode=allow
		[ "$invert" = 0 ] || filter_mode=deny
		if [ "$filter_mode" = allow ]; then
			for c in $(syscalls @default); do listed[$c]=1; done
		fi
	fi
	for item in $line; do
		for c in $(syscalls "${item%%:*}"); do
			if [ "$invert:$filter_mode" = 0:allow ] ||
			   [ "$invert:$filter_mode" = 1:deny ]; then
				listed[$c]=1
			else
				unset "listed[$c]"
			fi
		done
	done
done < <(sed -n 's/^SystemCallFilter=//p' "$unit")
# their numbers on this machine (what it has not, systemd leaves out too)
nrs=$(printf '#include <sys/syscall.h>\n' | cc -dM -E - |
	sed -n 's/^#define __NR_\([a-z0-9_]*\) \([0-9]*\)$/\1 \2/p' |
	while read -r c n; do [ -z "${listed[$c]:-}" ] || printf '%s,' "$n"; done)
[ -n "$filter_mode" ] && [ -n "$nrs" ]
check_err $? "the unit has no SystemCallFilter= this test can put in place"
errno=$(unit_get SystemCallErrorNumber)
[ "$(unit_get SystemCallArchitectures)" = native ]
check_err $? "SystemCallArchitectures is not native"
# socket() families allowed; a list of those refused (~) is not emulated
fams=${families// /,}
[ "${fams#\~}" = "$fams" ] || fams=

# seccomp_exec.py MODE ERRNO NRS FAMILIES -- PROG ARGS...: run PROG under a
# filter that lets only the system calls NRS (comma-separated numbers)
# through (MODE allow), or all but them (deny), the rest failing with
# ERRNO (a name; none: the process is killed), and socket() only for
# FAMILIES (AF_ names; none: any).  With --probe for --, it says instead
# how an AF_INET socket() and a setuid() fare under that filter.
cat >"$TEST_TMP/seccomp_exec.py" <<'EOF'
import ctypes, errno, os, socket, struct, sys
mode, err, nrs, fams = sys.argv[1:5]
nrs = sorted({int(n) for n in nrs.split(",") if n})
fams = sorted({getattr(socket, f) for f in fams.split(",") if f})
LD, JEQ, RET = 0x20, 0x15, 0x06
ALLOW, ERRNO, KILL = 0x7fff0000, 0x00050000, 0x80000000
refuse = ERRNO | (int(err) if err.isdigit() else getattr(errno, err)) if err else KILL
hit, miss = (ALLOW, refuse) if mode == "allow" else (refuse, ALLOW)
# the architecture, then socket()'s family, then the number
f = [(LD, 0, 0, 4), (JEQ, 1, 0, 0xC000003E), (RET, 0, 0, KILL), (LD, 0, 0, 0)]
if fams:
    f += [(JEQ, 0, len(fams) + 2, 41), (LD, 0, 0, 16)]
    f += [(JEQ, len(fams) - i, 0, fam) for i, fam in enumerate(fams)]
    f += [(RET, 0, 0, ERRNO | errno.EAFNOSUPPORT), (LD, 0, 0, 0)]
for nr in nrs:
    f += [(JEQ, 0, 1, nr), (RET, 0, 0, hit)]
f += [(RET, 0, 0, miss)]
class Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]
prog = Prog(len(f), b"".join(struct.pack("HBBI", *i) for i in f))
libc = ctypes.CDLL(None, use_errno=True)
one, zero = ctypes.c_ulong(1), ctypes.c_ulong(0)
# PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP with SECCOMP_MODE_FILTER
if libc.prctl(38, one, zero, zero, zero) or \
   libc.prctl(22, ctypes.c_ulong(2), ctypes.byref(prog), zero, zero):
    sys.exit("seccomp: " + os.strerror(ctypes.get_errno()))
if sys.argv[5] == "--probe":
    for what, call in (("AF_INET", lambda: socket.socket(socket.AF_INET)),
                       ("setuid", lambda: os.setuid(os.getuid()))):
        try:
            call()
            print(what, "allowed")
        except OSError as e:
            print(what, errno.errorcode[e.errno])
    sys.exit(0)
os.execvp(sys.argv[6], sys.argv[6:])
EOF
seccomp=(python3 "$TEST_TMP/seccomp_exec.py" "$filter_mode" "$errno" "$nrs" "$fams")
echo "# the unit's filter: $filter_mode $(tr -cd , <<<"$nrs" | wc -c) system calls, errno ${errno:-none (killed)}, families ${fams:-any}"
# set*id is never the switch's: the filter must refuse it as the unit says
probe=$("${seccomp[@]}" --probe 2>&1)
rc=$?
[ -z "$fams" ] || grep -qx "AF_INET EAFNOSUPPORT" <<<"$probe"
check_err $? "an AF_INET socket() under the unit's filter was not refused: $probe"
if [ -n "$errno" ]; then
	grep -qx "setuid $errno" <<<"$probe"
else
	[ "$rc" -eq $((128 + 31)) ]
fi
check_err $? "setuid() under the unit's filter did not fail (${errno:-SIGSYS}): $probe"

ns=$(netns_add sandbox)
# the switch's socket where its RuntimeDirectory would be
rundir=$(mktemp -d /run/vecnet-sandbox.XXXXXX)
homedir=$(mktemp -d "$HOME/.vecnet-sandbox.XXXXXX")
on_exit "rm -rf $rundir $homedir"
sock=$rundir/switch.sock
# shellcheck disable=SC2016  # expanded by that sh
ip netns exec "$ns" unshare --mount --propagation private "${sandbox[@]}" \
	sh -c "${mounts}"'exec "$@"' sh env -u LD_PRELOAD "${seccomp[@]}" -- \
	"$switch" --dgram "$sock" --ctl "$rundir/ctl.sock" --mode 0660 --group 65534 \
	2>"$TEST_TMP/switch.log" &
swpid=$!
on_exit "kill $swpid 2>/dev/null"
if ! wait_for 10 test -S "$rundir/ctl.sock"; then
	check_err 1 "vecswitch did not start in the sandbox: $(tail -n 3 "$TEST_TMP/switch.log")"
	log_test "the unit's sandbox"
	exit "$RET"
fi
grep -q '^Seccomp:[[:space:]]*2' "/proc/$swpid/status"
check_err $? "the switch does not run under a seccomp filter"
grep -q 'running (io uring' "$TEST_TMP/switch.log"
check_err $? "the switch does not use io_uring under the unit's filter: $(head -n 3 "$TEST_TMP/switch.log")"
! grep -q 'diagnostics unavailable' "$TEST_TMP/switch.log"
check_err $? "the unit's sandbox takes the unix socket diagnostics away: $(grep diagnostics "$TEST_TMP/switch.log")"
[ "$(stat -c %g "$sock")" = 65534 ]
check_err $? "the switch's socket did not get its --group (chown)"
if [ -z "$(unit_get LimitNOFILE)" ]; then
	[ "$(awk '/^Max open files/ { print $4 }' "/proc/$swpid/limits")" -gt 1024 ]
	check_err $? "the switch did not raise its open-file limit under the unit's filter"
fi

# --nat as the unit runs it: an unprivileged user (vecnat, started as
# root, would drop to nobody, which the filter forbids), the unit's filter
# and address families.  The NAT process starts and says at once that
# the guests reach nothing outside, and why; the switch answers for it.
if [ -z "$fams" ] || [[ ",$fams," == *,AF_INET,* ]]; then
	echo "# not run: --nat where the unit takes no address family away"
elif ! command -v setpriv >/dev/null; then
	echo "# SKIP of its part: --nat as nobody needs setpriv (util-linux)"
elif ! setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$switch"; then
	echo "# SKIP of its part: nobody cannot run $switch (a directory on its path is closed)"
else
	natdir=$(mktemp -d /run/vecnet-sandbox-nat.XXXXXX)
	on_exit "rm -rf $natdir"
	cp "$TEST_TMP/seccomp_exec.py" "$natdir/"
	chown -R 65534:65534 "$natdir"
	ip netns exec "$ns" setpriv --reuid=65534 --regid=65534 --clear-groups \
		env -u LD_PRELOAD python3 "$natdir/seccomp_exec.py" "$filter_mode" "$errno" \
		"$nrs" "$fams" -- "$switch" --dgram "$natdir/sw.sock" --ctl "$natdir/ctl.sock" \
		--nat 2>"$TEST_TMP/nat-switch.log" &
	natpid=$!
	on_exit "kill $natpid 2>/dev/null"
	wait_for 10 test -S "$natdir/ctl.sock"
	check_err $? "vecswitch --nat did not start in the sandbox: $(tail -n 3 "$TEST_TMP/nat-switch.log")"
	wait_for 10 grep -q "vecnat: cannot open AF_INET sockets.*RestrictAddressFamilies" \
		"$TEST_TMP/nat-switch.log"
	check_err $? "the NAT process did not say that the unit's sandbox takes AF_INET away: $(grep -m 3 -i nat "$TEST_TMP/nat-switch.log")"
	env -u LD_PRELOAD "$switch" ctl --ctl "$natdir/ctl.sock" nat >"$TEST_TMP/nat.txt" 2>&1
	check_err $? "ctl nat failed in the sandbox: $(cat "$TEST_TMP/nat.txt")"
	# its own filter on top of the unit's, loaded without seccomp()
	nat=$(pgrep -P "$natpid" -x vecnat | head -n 1)
	[ -n "$nat" ]
	check_err $? "no NAT process under the sandboxed switch: $(grep -m 3 -i nat "$TEST_TMP/nat-switch.log")"
	! grep -q "NAT process \(died\|exited\)" "$TEST_TMP/nat-switch.log"
	check_err $? "the NAT process died in the sandbox: $(grep -m 3 -i nat "$TEST_TMP/nat-switch.log")"
	filters=$(awk '$1 == "Seccomp_filters:" { print $2 }' "/proc/${nat:-0}/status" 2>/dev/null)
	# the field is there since Linux 5.9
	[ -z "$filters" ] || [ "$filters" -ge 2 ]
	check_err $? "the NAT process runs under ${filters:-no} seccomp filters, not the unit's and its own"
	echo "# the NAT process ${nat:-?} runs under ${filters:-?} seccomp filters"
	kill "$natpid" 2>/dev/null
fi

declare -A local=([t]="$TEST_TMP/t.sock" [h]="$homedir/h.sock")
declare -A addr=([t]=198.18.13.1 [h]=198.18.13.2)
for g in t h; do
	"$UML_RUN" -k "$VMLINUX" -n "$ns" -N "sandbox-$g-$$" -t 300 -q -o "$TEST_TMP/$g" \
		-a "vec0:transport=unixdgram,path=$sock,local=${local[$g]}" --agent &
	on_exit "$VECNET_SRC/scripts/uml-exec --stop $TEST_TMP/$g"
done
for g in t h; do
	"$VECNET_SRC/scripts/uml-exec" -t 120 "$TEST_TMP/$g" -- \
		sh -c "ip addr add ${addr[$g]}/24 dev vec0 && ip link set vec0 up"
	check_err $? "guest $g did not boot or bring vec0 up"
done
"$VECNET_SRC/scripts/uml-exec" -t 120 "$TEST_TMP/t" -- sh -c \
	"for i in \$(seq 1 20); do ping -c 1 -W 1 ${addr[h]} >/dev/null && exit 0; done; exit 1"
check_err $? "the guests (sockets in /tmp and in a home directory) did not reach each other through the sandboxed switch: $(grep -m 3 'refus\|removed' "$TEST_TMP/switch.log")"
dumps=$(env -u LD_PRELOAD "$switch" ctl --ctl "$rundir/ctl.sock" stats |
	awk '$1 == "diag_failed" { print $2 }')
echo "# unix socket diagnostics that failed in the sandbox: ${dumps:-?}"

log_test "the unit's sandbox keeps guests under /tmp and in home directories reachable"
exit "$RET"
