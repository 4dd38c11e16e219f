"""Docker backend: one long-lived container per worker process, the launcher as its PID 1.

The container has no network, a read-only root, a size-capped tmpfs at /work, memory and pids
limits, no capabilities, and runs as nobody. Between programs the launcher kills every other
process in the container (kill(-1) as PID 1) and wipes the run folder, so one container serves
many programs without one seeing another's processes or files.

Accounting: the container's own cgroup. The host sets its memory cap and pids limit per test
(the container limit *is* the test's cap, so an OOM kill in it is MLE), reads its memory events
and peak after every test (on v2 kernels that cannot reset the peak, a fresh child cgroup's per
test: SandboxCgroup.of_process), and the launcher reads the container's CPU counter, mounted read-only
at /sys/fs/cgroup inside it. Where the host cannot read the container's cgroup (another cgroup
driver's layout, a rootless daemon), containers run under per-process rlimits instead and
`accounting` says why: the MLE/TLE split is then best-effort.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import socket
import struct
import sys
from pathlib import Path

from backend.errors import UserError
from backend.sandbox import cgroups
from backend.sandbox.boot import launcher_command
from backend.sandbox.session import SandboxError, Session, cgroup_layout

BUILD_SCRIPT = Path(__file__).resolve().parents[2] / "scripts/build_sandbox_image.sh"
# tagged by the build script's hash, as the script tags it: a changed recipe means a rebuild
IMAGE = (
    os.environ.get("FLAB_SANDBOX_IMAGE")
    or f"frontier-lab-sandbox:{hashlib.sha256(BUILD_SCRIPT.read_bytes()).hexdigest()[:12]}"
)
_idle: list[DockerSession] = []  # healthy containers of this process, ready for the next program
_all: list[DockerSession] = []
_unreadable: list[str] = []  # why the host cannot read containers' cgroups, once found out
# where the container's own cgroup counter appears inside it (runc mounts the container's cgroup)
IN_CONTAINER_COUNTER = {1: "/sys/fs/cgroup/cpuacct/cpuacct.usage:v1", 2: "/sys/fs/cgroup/cpu.stat:v2"}


class ContainerCgroupUnreadable(Exception):
    """The host sees no usable cgroup for a started container."""


def container_cgroup(layout: cgroups.Layout, pid: int) -> cgroups.SandboxCgroup:
    """The container's cgroup, with every file the judge reads per test read once."""
    try:
        group = cgroups.SandboxCgroup.of_process(layout, pid)
        group.usage_bytes()
        group.end()
        return group
    except (OSError, StopIteration, KeyError, ValueError) as exc:
        raise ContainerCgroupUnreadable(f"{type(exc).__name__}: {exc}"[:200]) from exc


class DockerSession(Session):
    def __init__(self, client, tmpfs_mb: int):
        layout = None if _unreadable else cgroup_layout()
        counter = ["--cpu-counter", IN_CONTAINER_COUNTER[layout.version]] if layout else []
        self.container = client.containers.create(
            IMAGE,
            command=launcher_command("/usr/bin/python3", "/work", "--pid1", *counter),
            user="65534:65534",
            network_mode="none",
            read_only=True,
            tmpfs={"/work": f"size={tmpfs_mb}m,mode=1777,exec"},
            mem_limit="3g",
            pids_limit=128,
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            stdin_open=True,
            working_dir="/work",
            environment={"PATH": "/usr/bin:/bin", "HOME": "/work/run"},
            hostname="sandbox",
        )
        self._attached = self.container.attach_socket(params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1})
        # a socket of our own on the same connection, through the public fileno(): sendall, timeouts
        # and recv of exact sizes, which the SDK's file-like wrapper does not offer
        self._sock = socket.socket(fileno=os.dup(self._attached.fileno()))
        self._frame_left = 0  # bytes left of the current multiplexed stdout frame
        self._stream = 1
        try:
            self.container.start()
            self.container.reload()
            group = container_cgroup(layout, self.container.attrs["State"]["Pid"]) if layout else None
            super().__init__(None, cgroup=group)
        except ContainerCgroupUnreadable:
            self.destroy()
            raise
        except Exception as exc:
            self.destroy()
            raise SandboxError(f"sandbox container did not start: {str(exc)[-300:]}") from exc
        if _unreadable:
            self.accounting = f"rlimits (docker: the container's cgroup is unreadable here; {_unreadable[0]})"

    def _send_bytes(self, data: bytes) -> None:
        try:
            self._sock.sendall(data)
        except OSError as exc:
            raise SandboxError(f"container is gone: {exc}") from exc

    def _read_some(self, n: int, timeout: float) -> bytes:
        """Docker multiplexes stdout/stderr in frames: 8-byte header (stream, size), then payload."""
        self._sock.settimeout(timeout)
        try:
            while True:
                if self._frame_left == 0:
                    header = self._recv_exact(8)
                    self._stream, self._frame_left = header[0], struct.unpack(">I", header[4:])[0]
                    continue
                chunk = self._recv_exact(min(n, self._frame_left))
                self._frame_left -= len(chunk)
                if self._stream == 1:
                    return chunk
        except TimeoutError as exc:
            raise SandboxError("launcher did not answer in time") from exc

    def _recv_exact(self, n: int) -> bytes:
        buf = b""
        while len(buf) < n:
            chunk = self._sock.recv(n - len(buf))
            if not chunk:
                raise SandboxError("container exited")
            buf += chunk
        return buf

    def close(self) -> None:
        """Back to the idle pool when healthy; a broken container is removed."""
        self._release()  # an idle container holds no admission
        try:
            self._await_marker()  # the next program starts from the last test's cleanup
        except SandboxError:
            pass  # marked broken
        if self.broken:
            self.destroy()
        elif self not in _idle:
            _idle.append(self)

    def destroy(self) -> None:
        if self in _idle:
            _idle.remove(self)
        if self in _all:
            _all.remove(self)
        try:
            self._sock.close()
            self._attached.close()
            self.container.remove(force=True)
        except Exception:  # the daemon may already be gone at interpreter exit
            pass


def _client():
    try:
        import docker

        client = docker.from_env()
        client.ping()
    except Exception as exc:
        raise UserError("no Docker daemon answers; run `scripts/start_dockerd.sh` as root or start Docker") from exc
    try:
        client.images.get(IMAGE)
    except Exception as exc:
        raise UserError(f"docker image {IMAGE} is missing; build it with `make sandbox-image`") from exc
    return client


def open_docker_session(tmpfs_mb: int = 128) -> DockerSession:
    while _idle:
        idle = _idle.pop()
        if idle.cgroup is None or all(d.is_dir() for d in idle.cgroup.dirs.values()):
            return idle
        idle.broken = True  # its container went away while idle (its cgroup with it): a fresh one instead
        idle.destroy()
    client = _client()
    try:
        session = DockerSession(client, max(tmpfs_mb, 128))
    except ContainerCgroupUnreadable as exc:
        _unreadable.append(str(exc))
        print(
            f"frontier-lab judge: cannot read the docker container's cgroup ({exc}); containers run under "
            "per-process rlimits, so the MLE/TLE split is best-effort",
            file=sys.stderr,
        )
        session = DockerSession(client, max(tmpfs_mb, 128))
    _all.append(session)
    return session


@atexit.register
def remove_containers() -> None:
    for session in list(_all):
        session.destroy()
