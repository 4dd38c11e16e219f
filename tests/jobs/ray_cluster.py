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


# A worker node as ray.cluster_utils.Cluster.add_node starts one (ray/cluster_utils.py:262-278):
# `ray start --address` refuses a second node while multi-node mode is off (ray/scripts/scripts.py:1170),
# and with it on, 127.0.0.1 becomes the machine's interface address, where this head does not listen.
WORKER_NODE = """
import os, signal, sys, time
import ray._private.node, ray._private.parameter
from ray._private.authentication.authentication_token_setup import maybe_enable_token_auth_if_token_available
maybe_enable_token_auth_if_token_available(warn_if_disabled=False)  # the head's `ray start` rule, the same token
params = ray._private.parameter.RayParams(gcs_address=sys.argv[1], node_ip_address="127.0.0.1", temp_dir=sys.argv[2],
    num_cpus=int(sys.argv[3]), num_gpus=0, object_store_memory=150 * 1024 * 1024, min_worker_port=0, max_worker_port=0,
    include_log_monitor=False, node_manager_port=0)
params.dashboard_agent_listen_port = None
node = ray._private.node.Node(params, head=False, shutdown_at_exit=True, spawn_reaper=True)
signal.signal(signal.SIGTERM, lambda *_: (node.kill_all_processes(check_alive=False, allow_graceful=True), sys.exit(0)))
print("worker node started", flush=True)
while True:
    time.sleep(1)
"""


def venv_python() -> str:
    """The venv's interpreter by its real folder (sys.prefix resolved), as a hiding sandbox runs it."""
    return str(Path(os.path.realpath(sys.prefix)) / "bin" / "python")


def hiding(hide: list[str]) -> list[str]:
    """bubblewrap's arguments for a process that sees each folder of `hide` as an empty tmpfs, but
    still sees the venv (bound back: a fresh clone keeps its .venv inside the checkout it hides)."""
    venv = os.path.realpath(sys.prefix)
    mounts = [arg for folder in hide for arg in ("--tmpfs", folder)]
    return ["bwrap", "--dev-bind", "/", "/", *mounts, "--ro-bind", venv, venv]


@contextlib.contextmanager
def worker_node(address: str, temp: str, hide: list[str], cpus: int = 2, timeout: float = 180.0) -> Iterator[None]:
    """A second node of the cluster at `address`, on 127.0.0.1, in a mount namespace of its own
    (bubblewrap) where each folder of `hide` is an empty tmpfs: its processes cannot read them. Its
    Python is the venv's, bound back, so hiding a checkout does not hide the interpreter (`hiding`)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "RAY_ADDRESS")}
    env |= {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_TMPDIR": temp}
    argv = [*hiding(hide), "--chdir", "/tmp", venv_python(), "-c", WORKER_NODE, address, temp, str(cpus)]
    log_path = Path(temp) / f"ray-worker-{os.getpid()}.log"
    log = open(log_path, "w")  # noqa: SIM115 (closed at teardown)
    proc = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + timeout
        while "worker node started" not in log_path.read_text():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the worker node did not start: {log_path.read_text()[-2000:]}")
            time.sleep(0.5)
        yield
    finally:
        _stop(proc)
        log.close()


# Ray waits a fixed 30 s for a new node's raylet to register (ray/_private/node.py:428): on a
# machine shared by several test runs `ray start` can miss it, and is then simply tried again
STARTUP_TIMEOUTS = ("timed out during startup", "node registration may not be complete")


@contextlib.contextmanager
def loopback_cluster(cpus: int = 2, timeout: float = 180.0, env: dict | None = None,
                     client_port: int | None = None) -> Iterator[tuple[str, str]]:  # fmt: skip
    """(address HOST:PORT, temp dir) of a running cluster whose every node is 127.0.0.1; `env`:
    the environment `ray start` runs in (this process's by default); `client_port`: the Ray Client
    server's port (a free one by default, never Ray's fixed 10001 that another cluster may hold)."""
    for attempt in (1, 2, 3):
        temp = tempfile.mkdtemp(prefix="ray-", dir="/tmp")  # short: Ray's unix sockets live under it
        port = free_port()
        started = (env or dict(os.environ)) | {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_TMPDIR": temp}  # loopback
        argv = [RAY, "start", "--head", "--block", "--node-ip-address", "127.0.0.1", "--port", str(port),
                "--temp-dir", temp, "--num-cpus", str(cpus), "--include-dashboard", "false", "--disable-usage-stats",
                "--ray-client-server-port", str(client_port or free_port())]  # fmt: skip
        log = open(Path(temp) / "ray-start.log", "w")  # noqa: SIM115 (closed at teardown)
        proc = subprocess.Popen(argv, env=started, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + timeout
        while not (Path(temp) / "ray_current_cluster").is_file() and proc.poll() is None:
            if time.monotonic() > deadline:
                break
            time.sleep(0.5)
        if (Path(temp) / "ray_current_cluster").is_file():
            break
        said = (Path(temp) / "ray-start.log").read_text()
        _stop(proc)
        log.close()
        shutil.rmtree(temp, ignore_errors=True)
        if attempt == 3 or not any(t in said for t in STARTUP_TIMEOUTS):
            raise RuntimeError(f"ray start failed: {said[-2000:]}")
    try:
        yield f"127.0.0.1:{port}", temp
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
