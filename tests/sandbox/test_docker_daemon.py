"""The docker tests stop a daemon they started (tests/sandbox/docker_daemon.py): stop_daemon sends
SIGTERM to the pid in dockerd's pidfile and waits until that process is gone. Checked on a stand-in
process, so that no real daemon (perhaps another user's) is touched."""

import os
import subprocess

import pytest

from tests.sandbox import docker_daemon


def test_stop_daemon_terminates_the_pidfile_process_and_waits(tmp_path, monkeypatch):
    # a detached process (not our child, as a setsid'd dockerd is not): init reaps it when it dies
    pid = int(subprocess.run(["sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $!"], capture_output=True, text=True).stdout)
    os.kill(pid, 0)  # it runs
    pidfile = tmp_path / "docker.pid"
    pidfile.write_text(f"{pid}\n")
    monkeypatch.setattr(docker_daemon, "PIDFILE", pidfile)
    docker_daemon.stop_daemon(timeout=20)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
