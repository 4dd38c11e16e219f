"""A user's own Ray cluster for the tests that join one: `ray start --head --block` on 127.0.0.1
in a temp dir of its own, on a free port, as a child of this process; stopped by pid (its process
and the Ray processes it started), never by `ray stop`, which stops every Ray of the machine."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psutil

RAY = str(Path(sys.executable).with_name("ray"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def loopback_cluster(cpus: int = 2, timeout: float = 180.0, env: dict | None = None) -> Iterator[tuple[str, str]]:
    """(address HOST:PORT, temp dir) of a running cluster whose every node is 127.0.0.1; `env`:
    the environment `ray start` runs in (this process's by default)."""
    temp = tempfile.mkdtemp(prefix="ray-", dir="/tmp")  # short: Ray's unix sockets live under it
    port = free_port()
    env = (env or dict(os.environ)) | {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_TMPDIR": temp}  # loopback
    argv = [RAY, "start", "--head", "--block", "--node-ip-address", "127.0.0.1", "--port", str(port),
            "--temp-dir", temp, "--num-cpus", str(cpus), "--include-dashboard", "false",
            "--disable-usage-stats"]  # fmt: skip
    log = open(Path(temp) / "ray-start.log", "w")  # noqa: SIM115 (closed at teardown)
    proc = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    address = f"127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while not (Path(temp) / "ray_current_cluster").is_file():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"ray start failed: {(Path(temp) / 'ray-start.log').read_text()[-2000:]}")
            time.sleep(0.5)
        yield address, temp
    finally:
        _stop(proc)
        log.close()
        shutil.rmtree(temp, ignore_errors=True)


def _stop(proc: subprocess.Popen) -> None:
    """SIGTERM to `ray start --block` (it stops what it started), then SIGKILL to whatever of its
    process tree is left: only processes this fixture started."""
    try:
        tree = psutil.Process(proc.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        tree = []
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    _, alive = psutil.wait_procs(tree, timeout=10)
    for p in alive:
        with contextlib.suppress(psutil.NoSuchProcess):
            p.kill()
