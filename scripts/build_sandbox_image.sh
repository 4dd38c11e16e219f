#!/usr/bin/env bash
# Build the docker sandbox image offline: a minimal root filesystem made of this machine's own
# Debian files (python3.11, g++ and what they load), imported with `docker import`.
set -euo pipefail
# The tag is this script's own hash, so a changed recipe never runs on a stale image
# (backend/sandbox/docker_backend.py derives the same tag).
IMAGE=${1:-frontier-lab-sandbox:$(sha256sum "$0" | cut -c1-12)}
root=$(mktemp -d /tmp/flab-rootfs.XXXXXX)
trap 'rm -rf "$root"' EXIT
chmod 755 "$root"  # mktemp makes it 0700; nobody must be able to traverse the container's /
pkgs="python3.11-minimal libpython3.11-minimal libpython3.11-stdlib libc6 libc6-dev libc-dev-bin linux-libc-dev
  g++-12 gcc-12 cpp-12 libstdc++-12-dev libgcc-12-dev libstdc++6 libgcc-s1 binutils binutils-x86-64-linux-gnu
  libbinutils libctf0 libctf-nobfd0 libisl23 libmpc3 libmpfr6 libgmp10 libzstd1 zlib1g libjansson4 libgomp1
  libitm1 libatomic1 libquadmath0 libasan8 liblsan0 libtsan2 libubsan1 libcc1-0 libffi8 libexpat1 libbz2-1.0
  liblzma5 libuuid1 libcrypt1 dash coreutils libselinux1 libacl1 libattr1 libpcre2-8-0 libgprofng0"
list=$(mktemp)
for p in $pkgs; do dpkg -L "$p" 2>/dev/null || true; done | while read -r f; do [ -f "$f" ] || [ -L "$f" ] && echo "$f"; done > "$list"
# shared libraries of every executable in the list (covers packages the list forgot)
grep -E '^/usr/(bin|libexec)/' "$list" | xargs -r ldd 2>/dev/null | awk '/=> \//{print $3} /^\t\/lib/{print $1}' | sort -u >> "$list" || true
sed -Ei 's#^/(lib|lib64|bin|sbin)/#/usr/\1/#' "$list"  # merged /usr: keep the real paths
sort -u -o "$list" "$list"
tar -cf - --ignore-failed-read -T "$list" 2>/dev/null | tar -xf - -C "$root"
for link in bin lib lib64 sbin; do ln -sfn "usr/$link" "$root/$link"; done
ln -sf python3.11 "$root/usr/bin/python3"
ln -sf g++-12 "$root/usr/bin/g++"; ln -sf gcc-12 "$root/usr/bin/gcc"; ln -sf dash "$root/usr/bin/sh"
# /tmp is the run folder, as in the bwrap sandbox: writable, and wiped between tests with it
mkdir -p "$root"/{work,proc,dev,etc} && chmod 1777 "$root/work" && ln -s /work/run "$root/tmp" && cp /etc/ld.so.cache "$root/etc/" 2>/dev/null || true
tar -C "$root" -cf - . | docker import --change "ENV PATH=/usr/bin:/bin" --change "WORKDIR /work" - "$IMAGE" >/dev/null
echo "built $IMAGE ($(du -sh "$root" | cut -f1))"
