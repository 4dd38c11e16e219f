#!/usr/bin/env bash
# `make run`: the dashboard on HOST:PORT. On 127.0.0.1 (the default) only this machine reaches it.
# Any other HOST opens it to the network, and then every page asks for a token: FLAB_TOKEN from the
# environment, or one generated here and printed with the link to open (app.py checks it first).
# The file watcher is off: a user's server has no source to reload, and watching .venv/ and the
# database overflowed inotify's queue.
set -euo pipefail
HOST=${HOST:-127.0.0.1}
PORT=${PORT:-8501}
PY=${PY:-.venv/bin/python}
case "$HOST" in
  127.0.0.1 | localhost | ::1) ;;
  *)
    FLAB_TOKEN=${FLAB_TOKEN:-$("$PY" -c 'import secrets; print(secrets.token_urlsafe(24))')}
    export FLAB_TOKEN
    echo "frontier-lab listens on $HOST:$PORT, open to the network; every page needs its token. Open:"
    echo "  http://$(hostname -f 2>/dev/null || hostname):$PORT/?token=$FLAB_TOKEN"
    ;;
esac
# A user on a v2-only host under systemd cannot delegate the cgroup systemd gave them: the judge
# then starts in a delegated scope (docs/sandbox.md); the prefix is empty everywhere else.
read -r -a SCOPE <<<"$("$PY" -m backend.sandbox.cgroup_detect)"
# dashboard/serve.py: Streamlit's command line, after loading what the pages import (so the first
# page opened does not wait for pandas, SciPy and Plotly). APP and any arguments (`-- ARGS` reach the
# script) let bench/dashboard_speed.py serve its floor page exactly as the dashboard is served.
exec "${SCOPE[@]}" "$PY" -m dashboard.serve run "${APP:-app.py}" --server.address "$HOST" --server.port "$PORT" \
  --server.headless true --server.fileWatcherType none --browser.gatherUsageStats false "$@"
