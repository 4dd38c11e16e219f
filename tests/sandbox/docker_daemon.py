"""Start a local Docker daemon and build the sandbox image, for the docker backend's tests; stop the
daemon again at the end of the session when these tests were the ones that started it."""

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PIDFILE = Path("/var/run/docker.pid")  # dockerd's default --pidfile


def daemon_answers() -> bool:
    return subprocess.run(["docker", "version", "--format", "{{.Server.Version}}"], capture_output=True).returncode == 0


def stop_daemon(timeout: float = 60) -> None:
    """SIGTERM the daemon scripts/start_dockerd.sh started (it stops its containers), and wait until it is gone."""
    try:
        pid = int(PIDFILE.read_text().strip())
        os.kill(pid, signal.SIGTERM)
    except (OSError, ValueError):
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.2)
    pytest.fail(f"dockerd (pid {pid}) did not stop within {timeout:.0f} s of SIGTERM")


def ensure_daemon_and_image() -> tuple[str, bool]:
    """The sandbox image's tag, and whether this call started the daemon (then the caller stops it)."""
    was_running = daemon_answers()
    started = subprocess.run([ROOT / "scripts/start_dockerd.sh"], capture_output=True, text=True, timeout=120)
    if started.returncode != 0:
        pytest.fail(f"could not start a Docker daemon: {started.stderr.strip()}")
    from backend.sandbox.docker_backend import IMAGE

    have = subprocess.run(["docker", "image", "inspect", IMAGE], capture_output=True)
    if have.returncode != 0:
        built = subprocess.run(
            [ROOT / "scripts/build_sandbox_image.sh", IMAGE], capture_output=True, text=True, timeout=600
        )
        if built.returncode != 0:
            pytest.fail(f"could not build the sandbox image: {built.stderr.strip()[-500:]}")
    return IMAGE, not was_running
