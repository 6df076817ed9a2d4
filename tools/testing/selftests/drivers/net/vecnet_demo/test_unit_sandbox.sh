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

source "$(dirname "$(readlink -f "$0")")/../lib.sh"
require_cmd unshare
[ -x "${VECSWITCH:-}" ] || { echo "SKIP: no vecswitch binary in \$VECSWITCH"; exit "$ksft_skip"; }

unit=$VECNET_SRC/tools/net/vecswitch/vecswitch.service
# unit_get KEY: its value in the unit, or nothing
unit_get() { sed -n "s/^$1=//p" "$unit" | tail -n 1; }

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
echo "# the unit's sandbox: unshare --mount ${sandbox[*]} with: ${mounts:-no mounts}"

# unix_diag answers over AF_NETLINK
families=$(unit_get RestrictAddressFamilies)
if [ -n "$families" ]; then
	grep -qw AF_NETLINK <<<"$families"
	check_err $? "RestrictAddressFamilies=$families takes the unix socket diagnostics away"
fi

ns=$(netns_add sandbox)
# the switch's socket where its RuntimeDirectory would be
rundir=$(mktemp -d /run/vecnet-sandbox.XXXXXX)
homedir=$(mktemp -d "$HOME/.vecnet-sandbox.XXXXXX")
on_exit "rm -rf $rundir $homedir"
sock=$rundir/switch.sock
ip netns exec "$ns" unshare --mount --propagation private "${sandbox[@]}" \
	sh -c "${mounts}exec env -u LD_PRELOAD \"\$0\" --dgram \"\$1\" --ctl \"\$2\"" \
	"$VECSWITCH" "$sock" "$rundir/ctl.sock" 2>"$TEST_TMP/switch.log" &
on_exit "kill $! 2>/dev/null"
if ! wait_for 10 test -S "$rundir/ctl.sock"; then
	check_err 1 "vecswitch did not start in the sandbox: $(tail -n 3 "$TEST_TMP/switch.log")"
	log_test "the unit's sandbox"
	exit "$RET"
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
dumps=$(env -u LD_PRELOAD "$VECSWITCH" ctl --ctl "$rundir/ctl.sock" stats |
	awk '$1 == "diag_failed" { print $2 }')
echo "# unix socket diagnostics that failed in the sandbox: ${dumps:-?}"

log_test "the unit's sandbox keeps guests under /tmp and in home directories reachable"
exit "$RET"
