#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# qemu-initrd.sh OUT.gz: build a small initramfs for a QEMU light guest that
# runs the host's distribution kernel (newest /boot/vmlinuz-*, or
# $VSW_KERNEL): static busybox, virtio-net with its dependencies, and an
# init that brings eth0 up as VSW_IP/24 and pings VSW_PEER (both from the
# kernel command line), printing VSW_INIT, VSW_UP and VSW_PING_OK on the
# console.  Prints the kernel image to boot with it.
#
# With VSW_IPERF3=1 in the environment the initramfs also carries the
# host's iperf3 and the shared libraries it loads (as ldd lists them),
# for make bench's light suite; without it, it stays busybox alone.
# VSW_TOOLS="PATH..." adds those programs to /bin the same way, with the
# libraries each loads (make bench's rr suite: vswrr).
# At boot, VSW_IP=dhcp takes eth0's IPv4 address and the default route
# from a DHCP server instead, as on vecswitch --nat (busybox udhcpc with
# scripts/udhcpc-hostfs.sh, which prints "lease ADDR/PREFIX via ROUTER,
# DNS SERVERS" on the console; VSW_NO_LEASE when none came).  VSW_PEER
# may be left out (no ping), and VSW_RUN on the kernel command line
# (quoted, as VSW_RUN="cmd; cmd") is a shell command the init runs in the
# background once eth0 is up and the ping is done.  The guest powers
# itself off VSW_LIFE seconds after that (default 300).
#
# Exit: 0 built, 4 a prerequisite is missing (said on stderr), 1 failure.

set -u

skip() { echo "SKIP: $*" >&2; exit 4; }

out=${1:?usage: qemu-initrd.sh OUT.gz}
for t in cpio gzip modprobe; do
	command -v "$t" >/dev/null || skip "$t not installed"
done

if [ -z "${VSW_KERNEL:-}" ]; then
	VSW_KERNEL=$(find /boot -maxdepth 1 -name 'vmlinuz-*' 2>/dev/null |
		     sort -V | tail -n 1)
fi
if [ -z "$VSW_KERNEL" ] || [ ! -r "$VSW_KERNEL" ]; then
	skip "no guest kernel (install linux-image-amd64 or set VSW_KERNEL)"
fi
kver=${VSW_KERNEL##*/vmlinuz-}
[ -d "/lib/modules/$kver" ] || skip "no modules for $kver"

busybox=${VSW_BUSYBOX:-$(command -v busybox)}
[ -n "$busybox" ] || skip "no busybox (install busybox-static)"
if ldd "$busybox" >/dev/null 2>&1; then
	skip "$busybox is dynamically linked (install busybox-static)"
fi

progs=()
if [ "${VSW_IPERF3:-0}" = 1 ]; then
	iperf3=$(command -v iperf3) || skip "iperf3 not installed"
	progs+=("$iperf3")
fi
for p in ${VSW_TOOLS:-}; do
	[ -x "$p" ] || { echo "no program $p" >&2; exit 1; }
	progs+=("$p")
done
[ ${#progs[@]} -eq 0 ] || command -v ldd >/dev/null || skip "ldd not installed"

dir=$(mktemp -d /tmp/qemu-initrd.XXXXXX) || exit 1
trap 'rm -rf "$dir"' EXIT
root=$dir/root
mkdir -p "$root"/bin "$root"/proc "$root"/sys "$root"/dev "$root"/lib "$root"/tmp
cp "$busybox" "$root/bin/busybox"
cp "$(dirname "$0")/udhcpc-hostfs.sh" "$root/bin/udhcpc-script" || exit 1

# iperf3 and the other programs, and every library each loads, each at
# the path the host has it at (the dynamic loader included); a static
# program lists none
for p in "${progs[@]}"; do
	cp "$p" "$root/bin/${p##*/}" || exit 1
	libs=$(ldd "$p" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }')
	for l in $libs; do
		mkdir -p "$root/${l%/*}"
		cp -L "$l" "$root/$l" || exit 1
	done
done

# virtio-net and what it needs, in load order; compressed modules unpacked
: > "$root/modules.order"
for m in virtio_pci virtio_net; do
	while read -r kind path _; do
		[ "$kind" = insmod ] || continue
		name=$(basename "$path")
		case $name in
		*.xz) xz -dc "$path" > "$root/lib/${name%.xz}"; name=${name%.xz} ;;
		*.zst) zstd -qdc "$path" > "$root/lib/${name%.zst}"; name=${name%.zst} ;;
		*) cp "$path" "$root/lib/$name" ;;
		esac
		grep -qx "$name" "$root/modules.order" ||
			echo "$name" >> "$root/modules.order"
	done < <(modprobe -S "$kver" --show-depends "$m" 2>/dev/null)
done

cat > "$root/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
while read -r m; do
	insmod "/lib/$m" 2>/dev/null
done < /modules.order
echo VSW_INIT
ip link set lo up
ip link set eth0 up
if [ "$VSW_IP" = dhcp ]; then
	udhcpc -i eth0 -f -q -n -t 20 -T 1 -s /bin/udhcpc-script 2>/dev/null ||
		echo VSW_NO_LEASE
else
	ip addr add "$VSW_IP/24" dev eth0
fi
echo VSW_UP
n=0
while [ -n "${VSW_PEER:-}" ] && [ "$n" -lt 90 ]; do
	if ping -c 1 -W 1 "$VSW_PEER" >/dev/null 2>&1; then
		ping -c 3 -W 2 "$VSW_PEER" && echo VSW_PING_OK
		break
	fi
	n=$((n + 1))
done
[ -z "${VSW_RUN:-}" ] || sh -c "$VSW_RUN" &
# stay up for the peer, but not for ever
sleep "${VSW_LIFE:-300}"
poweroff -f
EOF
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$out"
echo "$VSW_KERNEL"

