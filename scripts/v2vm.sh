#!/usr/bin/env bash
# Run COMMAND as root in a QEMU guest whose only cgroup hierarchy is v2, and return its exit status.
#
#   scripts/v2vm.sh [--kernel 6.1|6.12] [--leaf] [--mem MB] [--cpus N] COMMAND...
#
# The guest boots a stock Debian kernel (6.1 from bookworm, 6.12 from bookworm-backports: the two
# memory.peak behaviours, docs/sandbox.md) with `cgroup_no_v1=all` and cgroup2 at /sys/fs/cgroup.
# Its root is this host's `/`, read-only over 9p, under a tmpfs overlay that takes the writes, so
# the checkout and its venv are where they are here; COMMAND runs in the current folder.
# --leaf starts COMMAND inside a leaf cgroup with controllers enabled above it, as a systemd service
# or a container is started (the judge must delegate for itself there).
#
# Needs root, qemu-system-x86 and busybox-static (the Makefile's V2VM_PACKAGES). The kernel is
# fetched from Debian's registry with apt into a cache folder (dpkg-deb -x: nothing is installed
# on the host). KVM when /dev/kvm runs stock kernels, QEMU's TCG emulation otherwise: a PVM
# /dev/kvm (kvm_pvm loaded, no vmx/svm flags) hangs a stock kernel. V2VM_ACCEL=kvm|tcg overrides.
set -euo pipefail

KERNEL=6.1 LEAF=0 MEM_MB=8192 CPUS=2
while [ $# -gt 0 ]; do
  case "$1" in
    --kernel) KERNEL=$2; shift 2 ;;
    --leaf) LEAF=1; shift ;;
    --mem) MEM_MB=$2; shift 2 ;;
    --cpus) CPUS=$2; shift 2 ;;
    --) shift; break ;;
    -*) echo "v2vm: unknown option $1 (see the top of $0)" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || { echo "v2vm: usage: $0 [--kernel 6.1|6.12] [--leaf] COMMAND..." >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "v2vm: run as root (the 9p export of / passes ownership through)" >&2; exit 2; }
for tool in qemu-system-x86_64 busybox dpkg-deb apt-get; do
  command -v "$tool" >/dev/null || { echo "v2vm: $tool is missing; run 'make v2vm-debs'" >&2; exit 2; }
done

CACHE=${V2VM_CACHE:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/frontier-lab/v2vm}
MIRROR=${V2VM_MIRROR:-http://deb.debian.org/debian}
case "$KERNEL" in
  6.1) SOURCES="deb $MIRROR bookworm main
deb ${MIRROR}-security bookworm-security main" ;;
  6.12) SOURCES="deb $MIRROR bookworm-backports main" ;;
  *) echo "v2vm: --kernel is 6.1 or 6.12" >&2; exit 2 ;;
esac

# The kernel package linux-image-amd64 points to in that suite, unpacked once into the cache.
fetch_kernel() {
  local apt="$CACHE/apt-$KERNEL"
  mkdir -p "$apt/lists/partial" "$apt/debs"
  printf '%s\n' "$SOURCES" >"$apt/sources.list"
  APT=(-o "Dir::Etc::SourceList=$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null -o "Dir::State::Lists=$apt/lists"
    -o APT::Sandbox::User=root)
  if [ -z "$(ls "$apt/lists" | grep Packages || true)" ] || [ -n "$(find "$apt/lists" -name '*Packages*' -mtime +7)" ]; then
    apt-get "${APT[@]}" update -qq >&2
  fi
  PKG=$(apt-cache "${APT[@]}" depends linux-image-amd64 | awk '/Depends: linux-image-/ {print $2; exit}')
  [ -n "$PKG" ] || { echo "v2vm: no linux-image-amd64 in '$SOURCES'" >&2; exit 2; }
  KDIR="$CACHE/$PKG"
  if [ ! -f "$KDIR/.unpacked" ]; then
    echo "v2vm: fetching $PKG" >&2
    (cd "$apt/debs" && apt-get "${APT[@]}" download -qq "$PKG" >&2)
    rm -rf "$KDIR" && dpkg-deb -x "$apt/debs/${PKG}"_*.deb "$KDIR"
    busybox depmod -b "$KDIR" "$(ls "$KDIR/lib/modules")"  # the package leaves modules.dep to its postinst
    touch "$KDIR/.unpacked"
  fi
}

# busybox, the init below, and the modules 9p-over-virtio and overlayfs need, in load order.
build_initramfs() {
  INITRD="$KDIR/v2vm-initrd.$(sha256sum "$0" | cut -c1-12).cpio.gz"
  [ -f "$INITRD" ] && return
  local kver root mods
  kver=$(ls "$KDIR/lib/modules")
  root=$(mktemp -d)
  mkdir -p "$root"/{bin,dev,proc,sys,lower,rw,newroot,lib/modules}
  cp /bin/busybox "$root/bin/busybox"
  ln -s busybox "$root/bin/sh"
  mods=$(module_order "$KDIR/lib/modules/$kver" 9pnet_virtio 9p overlay virtio_pci)
  local i=0 m
  for m in $mods; do  # numbered, so that the init loads them in dependency order
    i=$((i + 1))
    case "$m" in
      *.xz) xz -dc "$KDIR/lib/modules/$kver/$m" >"$root/lib/modules/$(printf %02d $i).ko" ;;
      *.zst) zstd -qdc "$KDIR/lib/modules/$kver/$m" >"$root/lib/modules/$(printf %02d $i).ko" ;;
      *) cp "$KDIR/lib/modules/$kver/$m" "$root/lib/modules/$(printf %02d $i).ko" ;;
    esac
  done
  sed -n '/^#INIT$/,$p' "$0" | tail -n +2 >"$root/init"
  chmod +x "$root/init"
  rm -f "$KDIR"/v2vm-initrd.*
  (cd "$root" && find . | busybox cpio -o -H newc 2>/dev/null | gzip -1 >"$INITRD.tmp") && mv "$INITRD.tmp" "$INITRD"
  rm -rf "$root"
}

# The .ko paths of the named modules and everything they depend on, dependencies first (modules.dep;
# built-in names are skipped).
module_order() {
  local dir=$1; shift
  awk -v want="$*" '
    { sub(":", "", $1); deps[$1] = ""; for (i = 2; i <= NF; i++) deps[$1] = deps[$1] " " $i
      n = $1; sub(".*/", "", n); sub("\\.ko.*", "", n); gsub("-", "_", n); path[n] = $1 }
    function visit(p,   d, k, i) { if (p in seen) return; seen[p] = 1
      k = split(deps[p], d, " "); for (i = k; i >= 1; i--) visit(d[i]); print p }
    END { split(want, w, " "); for (j in w) if (w[j] in path) visit(path[w[j]]) }
  ' "$dir/modules.dep"
}

accel() {
  case "${V2VM_ACCEL:-}" in kvm | tcg) echo "$V2VM_ACCEL"; return ;; esac
  if [ -w /dev/kvm ] && [ ! -d /sys/module/kvm_pvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo; then
    echo kvm
  else
    echo tcg
  fi
}

fetch_kernel
build_initramfs
JOB=$(mktemp -d /tmp/v2vm.XXXXXX)
trap 'rm -rf "$JOB"' EXIT
{
  printf 'cd %q || exit 125\n' "$PWD"
  printf 'export PATH=%q HOME=/root LANG=C.UTF-8 V2VM_KERNEL=%q\n' "$PATH" "$KERNEL"
  [ -n "${CI:-}" ] && printf 'export CI=%q\n' "$CI"
  printf '%q ' "$@"
  echo
} >"$JOB/cmd"
echo "$LEAF" >"$JOB/leaf"
ACCEL=$(accel)
WORK=  # the guest's /tmp is a fresh tmpfs: a checkout under /tmp (a CI clone) is shared on its own
case "$PWD/" in /tmp/*) WORK=" v2vm_work=$PWD" ;; esac
echo "v2vm: $(basename "$KDIR") on ${ACCEL}, ${CPUS} vCPUs, ${MEM_MB} MB, $([ "$LEAF" = 1 ] && echo 'in a leaf cgroup' || echo 'in the root cgroup')" >&2
QEMU=(qemu-system-x86_64 -machine q35,accel="$ACCEL" -cpu "$([ "$ACCEL" = kvm ] && echo host || echo max)"
  -smp "$CPUS" -m "$MEM_MB" -display none -monitor none -no-reboot -nodefaults -serial stdio
  -kernel "$KDIR"/boot/vmlinuz-* -initrd "$INITRD"
  -append "console=ttyS0 quiet loglevel=3 panic=-1 cgroup_no_v1=all systemd.unified_cgroup_hierarchy=1 v2vm_job=$JOB$WORK"
  -virtfs "local,path=/,mount_tag=hostroot,security_model=passthrough,readonly=on,multidevs=remap"
  -virtfs "local,path=$JOB,mount_tag=job,security_model=passthrough,multidevs=remap"
  -device virtio-rng-pci)
[ -n "$WORK" ] && QEMU+=(-virtfs "local,path=$PWD,mount_tag=work,security_model=passthrough,readonly=on,multidevs=remap")
"${QEMU[@]}" </dev/null | stdbuf -o0 tr -d '\r'  # unbuffered: a long run shows its progress
[ -f "$JOB/rc" ] || { echo "v2vm: the guest stopped without an exit status" >&2; exit 125; }
exit "$(cat "$JOB/rc")"

# What follows is the guest's /init (busybox sh), copied into the initramfs.
#INIT
#!/bin/sh
export PATH=/bin
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs dev /dev
for m in /lib/modules/*.ko; do insmod "$m" 2>/dev/null; done
job=$(sed 's/.*v2vm_job=\([^ ]*\).*/\1/' /proc/cmdline)
opts=trans=virtio,version=9p2000.L,msize=512000
mount -t 9p -o "$opts,ro,cache=loose" hostroot /lower || { echo "v2vm: no 9p root"; poweroff -f; }
mount -t tmpfs -o mode=755 rw /rw
mkdir -p /rw/upper /rw/work
mount -t overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work overlay /newroot
r=/newroot
mount -t proc proc $r/proc
mount -t sysfs sysfs $r/sys
mount -t cgroup2 cgroup2 $r/sys/fs/cgroup
mount -t devtmpfs dev $r/dev
mkdir -p $r/dev/pts $r/dev/shm && mount -t devpts devpts $r/dev/pts && mount -t tmpfs shm $r/dev/shm
mount -t tmpfs -o mode=1777 tmp $r/tmp
# The host's daemon state is not the guest's: a fresh /run (no stale docker.sock or docker.pid) and
# an empty data-root for scripts/start_dockerd.sh (the docker tests build the image there).
mount -t tmpfs -o mode=755 run $r/run && mkdir -m 1777 $r/run/lock
mkdir -p $r/var/lib/flab-docker && mount -t tmpfs -o mode=711 docker $r/var/lib/flab-docker
mkdir -p $r$job && mount -t 9p -o "$opts" job $r$job
work=$(sed -n 's/.*v2vm_work=\([^ ]*\).*/\1/p' /proc/cmdline)
if [ -n "$work" ]; then  # the checkout under /tmp: read-only from the host, writes to the tmpfs
  mkdir -p /wl /rw/wu /rw/ww $r$work && mount -t 9p -o "$opts,ro,cache=loose" work /wl &&
    mount -t overlay -o lowerdir=/wl,upperdir=/rw/wu,workdir=/rw/ww overlay $r$work
fi
mkdir -p $r/.v2vm && cp /bin/busybox $r/.v2vm/busybox
cat >$r/.v2vm-stage2 <<EOF
#!/.v2vm/busybox sh
/.v2vm/busybox hostname v2vm
/.v2vm/busybox ip link set lo up
if [ "\$(cat $job/leaf)" = 1 ]; then  # as systemd starts a service: controllers enabled down to its leaf
  c=/sys/fs/cgroup
  echo "+cpu +memory +pids" >\$c/cgroup.subtree_control
  mkdir \$c/system.slice && echo "+cpu +memory +pids" >\$c/system.slice/cgroup.subtree_control
  mkdir \$c/system.slice/flab.service && echo \$\$ >\$c/system.slice/flab.service/cgroup.procs
fi
/bin/bash $job/cmd </dev/null
echo \$? >$job/rc
sync
echo 0 >/proc/sys/kernel/printk  # no "Power down" after the command's last line (CI reads it)
/.v2vm/busybox poweroff -f
sleep 10
EOF
chmod +x $r/.v2vm-stage2
exec switch_root $r /.v2vm-stage2
