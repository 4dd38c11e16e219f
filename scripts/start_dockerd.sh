#!/usr/bin/env bash
# Start a Docker daemon by hand when none answers (no systemd here): no iptables, no bridge,
# vfs storage. Idempotent; waits until `docker info` answers.
set -euo pipefail
docker version --format '{{.Server.Version}}' >/dev/null 2>&1 && exit 0
command -v dockerd >/dev/null || { echo "dockerd is missing; apt-get install docker.io" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "starting dockerd needs root; start a Docker daemon yourself" >&2; exit 1; }
mkdir -p /var/lib/flab-docker
setsid dockerd --iptables=false --ip-forward=false --bridge=none --storage-driver=vfs \
  --data-root /var/lib/flab-docker >/var/log/flab-dockerd.log 2>&1 < /dev/null &
for _ in $(seq 1 120); do docker version --format '{{.Server.Version}}' >/dev/null 2>&1 && exit 0; sleep 0.5; done
echo "dockerd did not come up; see /var/log/flab-dockerd.log" >&2
exit 1
