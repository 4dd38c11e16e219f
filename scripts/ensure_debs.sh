#!/usr/bin/env bash
# Install the Debian packages the product needs. As root: apt-get installs what is missing.
# Not root: one clear line naming what is missing, and exit 1.
set -euo pipefail
missing=()
for pkg in "$@"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "frontier-lab needs Debian packages: ${missing[*]}; run 'sudo apt-get install -y ${missing[*]}' (or run make as root)" >&2
  exit 1
fi
echo "installing Debian packages: ${missing[*]}"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
