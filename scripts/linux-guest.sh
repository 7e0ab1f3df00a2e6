#!/usr/bin/env bash
# The Linux guest of the HCI user channel tests (docs/LINUX-GUEST.md): Debian's kernel, a
# busybox-static initramfs and a Debian 12 (bookworm) minbase root file system with BlueZ,
# D-Bus, Python 3 and kmod, booted under QEMU (software emulation) with hci_vhci bridged to a
# controller on the host.
#
#   scripts/linux-guest.sh build   builds the guest unless it is cached; prints its folder
#   scripts/linux-guest.sh path    prints the cached guest's folder; exit 1 when not built
#   scripts/linux-guest.sh run --port PORT [--bluejay] [--share TAG=DIR]...
#                                  boots it by hand with a shell on the terminal, hci0 bridged
#                                  to the H4 controller on 127.0.0.1:PORT (e.g. the Bumble rig);
#                                  each share is mounted at /mnt/TAG; --bluejay shares this
#                                  build's executables (bluejay, BluejayGuestApp) and the Swift
#                                  runtime, on PATH and LD_LIBRARY_PATH. Ctrl-A X ends QEMU.
#
# Everything comes from Debian's packages, cached under .build/guest/KEY, where KEY is a hash
# of this script and of scripts/linux-guest/ (so a change to either builds a new guest); the
# older folders are removed. Needs root (debootstrap) or passwordless sudo, and apt-get: the
# host packages qemu-system-x86, debootstrap, cpio and kmod are installed when missing.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd)
guest_files=scripts/linux-guest
cache=${BLUEJAY_GUEST_CACHE:-$root/.build/guest}
suite=bookworm
mirror=${BLUEJAY_GUEST_MIRROR:-http://deb.debian.org/debian}
# The root file system's packages beyond minbase (bluetoothd, btmgmt, btmon, bluetoothctl,
# hciconfig; dbus-daemon; the bridge and the agent; modprobe; ps and pkill).
packages=bluez,dbus,python3,kmod,procps
# What the initramfs loads to reach the root file system, in dependency order from depmod.
boot_modules=(virtio_pci 9pnet_virtio 9p overlay)
# What the root file system keeps of the kernel's modules (the rest is never loaded here).
# Bluetooth needs the crypto folders whole ("Unable to create CMAC crypto context" otherwise).
module_folders=(
    kernel/net/bluetooth kernel/drivers/bluetooth kernel/net/rfkill kernel/crypto kernel/arch/x86/crypto kernel/lib
    kernel/drivers/char kernel/drivers/virtio kernel/net/9p kernel/fs/9p kernel/fs/netfs kernel/fs/fscache kernel/fs/overlayfs
)

key() {
    cat "${BASH_SOURCE[0]}" "$guest_files"/* | sha256sum | cut -c1-16
}

say() { echo "==> linux guest: $*" >&2; }

as_root() {
    if [[ $(id -u) -eq 0 ]]; then
        "$@"
    elif command -v sudo > /dev/null && sudo -n true 2> /dev/null; then
        sudo -n "$@"
    else
        echo "error: building the Linux guest needs root or passwordless sudo (debootstrap, apt-get)" >&2
        exit 1
    fi
}

# Installs the host's tools from Debian's packages when a command is missing (as scripts/test.sh
# installs tshark).
ensure_host_tools() {
    local missing=()
    command -v qemu-system-x86_64 > /dev/null || missing+=(qemu-system-x86)
    command -v debootstrap > /dev/null || [[ -x /usr/sbin/debootstrap ]] || missing+=(debootstrap)
    command -v cpio > /dev/null || missing+=(cpio)
    command -v depmod > /dev/null || [[ -x /usr/sbin/depmod || -x /sbin/depmod ]] || missing+=(kmod)
    [[ ${#missing[@]} -eq 0 ]] && return 0
    command -v apt-get > /dev/null || { echo "error: ${missing[*]} missing and no apt-get to install them" >&2; exit 1; }
    say "installing ${missing[*]}"
    local install=(env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}")
    as_root "${install[@]}" > /dev/null 2>&1 || { as_root apt-get update -q > /dev/null && as_root "${install[@]}" > /dev/null; }
}

# apt-get download, after an apt-get update when the package lists are missing or stale.
download() {
    local apt=(apt-get download -q -o APT::Sandbox::User=root "$@")
    "${apt[@]}" > /dev/null 2>&1 || { as_root apt-get update -q > /dev/null && "${apt[@]}" > /dev/null; }
}

build() {
    local key started kernel_package version
    key=$(key)
    if [[ -f $cache/$key/complete ]]; then
        echo "$cache/$key"
        return 0
    fi
    mkdir -p "$cache"
    # One build at a time; another may have finished it meanwhile. Folders of builds that were
    # interrupted are removed.
    exec 9> "$cache/.lock"
    flock 9
    if [[ -f $cache/$key/complete ]]; then
        echo "$cache/$key"
        return 0
    fi
    ensure_host_tools
    export PATH=$PATH:/usr/sbin:/sbin
    for stale in "$cache"/build.*; do
        [[ -d $stale ]] && as_root rm -rf "$stale"
    done
    started=$(date +%s)
    # Global, for the trap: a failed or interrupted build leaves nothing behind.
    work=$(mktemp -d "$cache/build.XXXXXX")
    trap 'as_root rm -rf "$work"' EXIT
    trap 'exit 1' TERM INT HUP

    say "downloading Debian's kernel and busybox-static"
    (
        cd "$work"
        download linux-image-amd64 busybox-static
        # The metapackage names the kernel of the day (linux-image-6.1.0-NN-amd64).
        kernel_package=$(dpkg-deb -f linux-image-amd64_*.deb Depends | tr ',' '\n' | sed -n 's/^ *\(linux-image-[0-9][^ ]*\).*/\1/p' | head -1)
        [[ -n $kernel_package ]] || { echo "error: cannot tell the kernel package from linux-image-amd64" >&2; exit 1; }
        download "$kernel_package"
        dpkg-deb -x "$kernel_package"_*.deb kernel
        dpkg-deb -x busybox-static_*.deb busybox
    )
    version=$(ls "$work/kernel/lib/modules")
    cp "$work/kernel/boot/vmlinuz-$version" "$work/vmlinuz"

    say "debootstrap $suite minbase with $packages (about a minute)"
    as_root debootstrap --variant=minbase --include="$packages" "$suite" "$work/rootfs" "$mirror" > "$work/debootstrap.log" 2>&1 \
        || { tail -20 "$work/debootstrap.log" >&2; echo "error: debootstrap failed (log above)" >&2; exit 1; }
    as_root rm -rf "$work/rootfs/var/cache/apt/archives/"*.deb "$work/rootfs/var/lib/apt/lists/"*

    say "kernel $version: modules and initramfs"
    local modules=$work/rootfs/lib/modules/$version
    as_root mkdir -p "$modules"
    for folder in "${module_folders[@]}"; do
        as_root mkdir -p "$modules/$(dirname "$folder")"
        as_root cp -a "$work/kernel/lib/modules/$version/$folder" "$modules/$folder"
    done
    as_root cp "$work/kernel/lib/modules/$version/"modules.{order,builtin,builtin.modinfo} "$modules/"
    as_root depmod -b "$work/rootfs" "$version"

    local initramfs=$work/initramfs
    mkdir -p "$initramfs"/{bin,dev,proc,sys,modules}
    cp "$work/busybox/bin/busybox" "$initramfs/bin/busybox"
    cp "$guest_files/init" "$initramfs/init"
    for module in "${boot_modules[@]}"; do
        modprobe -d "$work/rootfs" -S "$version" --show-depends "$module" | awk '$1 == "insmod" { print $2 }'
    done | awk '!seen[$0]++' | while read -r path; do
        cp "$path" "$initramfs/modules/"
        basename "$path" >> "$initramfs/modules.list"
    done
    (cd "$initramfs" && find . -print0 | cpio --null -o -H newc --quiet | gzip -6 > "$work/initrd.img")

    say "the guest's own files"
    as_root mkdir -p "$work/rootfs/usr/local/lib/bluejay-guest"
    as_root cp "$guest_files/guest-init" "$guest_files/vhci-bridge.py" "$guest_files/agent.py" "$guest_files/start-bluez" \
        "$work/rootfs/usr/local/lib/bluejay-guest/"
    as_root chmod 0755 "$work/rootfs/usr/local/lib/bluejay-guest/"{guest-init,start-bluez}
    as_root ln -s ../lib/bluejay-guest/start-bluez "$work/rootfs/usr/local/sbin/start-bluez"
    echo bluejay-guest | as_root tee "$work/rootfs/etc/hostname" > /dev/null
    # QEMU's 9p server reads the root as the user who runs QEMU: let anyone read it (a test
    # guest's files; the guest sees them as the host has them).
    as_root chmod -R a+rX "$work/rootfs"

    {
        echo "key $key"
        echo "kernel $version"
        echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) in $(($(date +%s) - started)) s"
        echo "suite $suite"
        as_root chroot "$work/rootfs" dpkg-query -W -f '${Package} ${Version}\n' bluez dbus python3 kmod
        echo "rootfs $(as_root du -sm "$work/rootfs" | cut -f1) MiB"
    } > "$work/manifest.txt"
    rm -rf "$work/kernel" "$work/busybox" "$work/initramfs" "$work"/*.deb

    # Only the newest guest is kept.
    for old in "$cache"/*; do
        [[ -d $old && $old != "$work" ]] && as_root rm -rf "$old"
    done
    chmod 0755 "$work"
    touch "$work/complete"
    mv "$work" "$cache/$key"
    trap - EXIT
    say "built in $(($(date +%s) - started)) s: $cache/$key"
    echo "$cache/$key"
}

path() {
    local key
    key=$(key)
    [[ -f $cache/$key/complete ]] || { echo "error: the Linux guest is not built; run scripts/linux-guest.sh build" >&2; exit 1; }
    echo "$cache/$key"
}

# This build's executables and the folders of the Swift runtime they link (from ldd, outside the
# system's library folders), as TAG=DIR shares: bin, swift0, swift1, …
bluejay_shares() {
    local bin index=0
    bin=$(readlink -f .build/debug)
    echo "bin=$bin"
    ldd "$bin/bluejay" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | xargs -n1 dirname | sort -u \
        | grep -vE '^/(usr/)?lib(64)?(/x86_64-linux-gnu)?$' | while read -r folder; do
        echo "swift$index=$folder"
        index=$((index + 1))
    done
}

run_by_hand() {
    local port="" shares=() dir usage="usage: scripts/linux-guest.sh run --port PORT [--bluejay] [--share TAG=DIR]..."
    while [[ $# -gt 0 ]]; do
        case $1 in
            --port) port=$2; shift 2 ;;
            --share) shares+=("$2"); shift 2 ;;
            --bluejay)
                [[ -x .build/debug/bluejay ]] || { echo "error: no .build/debug/bluejay; run swift build first" >&2; exit 1; }
                mapfile -t -O "${#shares[@]}" shares < <(bluejay_shares)
                shift ;;
            *) echo "$usage" >&2; exit 64 ;;
        esac
    done
    [[ -n $port ]] || { echo "$usage" >&2; exit 64; }
    dir=$(build)
    local arguments=(
        -accel tcg -cpu max -smp 2 -m 1536 -nographic -no-reboot -nic none
        -kernel "$dir/vmlinuz" -initrd "$dir/initrd.img"
        -append "console=ttyS0 quiet cryptomgr.notests panic=-1 bluejay.shell=1"
        -fsdev "local,id=rootfs,path=$dir/rootfs,security_model=none,readonly=on"
        -device virtio-9p-pci,fsdev=rootfs,mount_tag=rootfs
        -device virtio-serial-pci
        -chardev "socket,id=bt0,host=127.0.0.1,port=$port,nodelay=on" -device virtserialport,chardev=bt0,name=bt0
        -chardev null,id=ctl -device virtserialport,chardev=ctl,name=ctl
    )
    local index=0
    for share in "${shares[@]}"; do
        arguments+=(-fsdev "local,id=share$index,path=${share#*=},security_model=none,readonly=on"
                    -device "virtio-9p-pci,fsdev=share$index,mount_tag=${share%%=*}")
        index=$((index + 1))
    done
    exec qemu-system-x86_64 "${arguments[@]}"
}

case ${1:-build} in
    build) build ;;
    path) path ;;
    run) shift; run_by_hand "$@" ;;
    *) echo "usage: scripts/linux-guest.sh build | path | run --port PORT [--share TAG=DIR]..." >&2; exit 64 ;;
esac
