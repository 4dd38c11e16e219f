"""Isolation backends. Each opens a Session: one launcher (launcher.py) behind a wall.

- bwrap (default): a fresh namespace set per program, run as `nobody` when we are root, so
  RLIMIT_NPROC is enforced (the kernel never enforces it for uid 0).
- docker: one long-lived container per worker (see docker_backend.py).
- none: rlimits only, refused unless chosen explicitly, and loud about it.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from backend.errors import UserError

LAUNCHER_SOURCE = (Path(__file__).parent / "launcher.py").read_text()
SANDBOX_PYTHON = "/usr/bin/python3"  # Debian's interpreter: readable by nobody, outside our venv
NOBODY = 65534
BACKENDS = ("bwrap", "docker", "none")


class SandboxError(RuntimeError):
    """The sandbox itself failed (not the program): verdict SE, retried by the judge."""


class Session:
    """Host end of the launcher's length-prefixed JSON protocol over a pipe pair."""

    def __init__(self, proc: subprocess.Popen | None, cleanup=None):
        self.proc = proc
        self._cleanup = cleanup
        self.broken = False
        self._await_ready()

    def _await_ready(self) -> None:
        hello = self._recv(timeout=60)
        if not hello.get("ready"):
            raise SandboxError(f"launcher did not start: {hello}")

    def call(self, msg: dict, timeout: float) -> dict:
        data = json.dumps(msg).encode()
        try:
            self._send_bytes(struct.pack(">I", len(data)) + data)
            reply = self._recv(timeout)
        except SandboxError:
            self.broken = True
            raise
        if "sandbox_error" in reply:
            raise SandboxError(reply["sandbox_error"])
        return reply

    def _send_bytes(self, data: bytes) -> None:
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise SandboxError(f"launcher is gone: {self._stderr_tail()}") from exc

    def _read_some(self, n: int, timeout: float) -> bytes:
        fd = self.proc.stdout.fileno()
        if not select.select([fd], [], [], timeout)[0]:
            raise SandboxError("launcher did not answer in time")
        chunk = os.read(fd, n)
        if not chunk:
            raise SandboxError(f"launcher exited: {self._stderr_tail()}")
        return chunk

    def _recv(self, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        size = struct.unpack(">I", self._read_exact(4, deadline))[0]
        return json.loads(self._read_exact(size, deadline))

    def _read_exact(self, n: int, deadline: float) -> bytes:
        chunks = []
        while n:
            left = deadline - time.monotonic()
            if left <= 0:
                raise SandboxError("launcher did not answer in time")
            chunk = self._read_some(min(n, 1 << 20), left)
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)

    def _stderr_tail(self) -> str:
        if self.proc.poll() is None or self.proc.stderr is None:
            return "still running"
        return self.proc.stderr.read()[-500:].decode("utf-8", "replace") or f"exit {self.proc.returncode}"

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.call({"op": "exit"}, timeout=0.01)
            except SandboxError:
                pass
            self.proc.kill()
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream:
                try:
                    stream.close()
                except OSError:  # unflushed bytes to a launcher that is already gone
                    pass
        if self._cleanup:
            self._cleanup()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _drop_to_nobody() -> dict:
    if os.geteuid() != 0:
        return {}
    return {"user": NOBODY, "group": NOBODY, "extra_groups": []}


def _popen(argv: list[str], cwd: str = "/", **kw) -> subprocess.Popen:
    return subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env={}, **kw
    )


def bwrap_argv(tmpfs_mb: int) -> list[str]:
    """A read-only /usr, fresh /proc and /dev, a size-capped private tmpfs, nothing else of the host."""
    argv = [
        "bwrap",
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        "--as-pid-1",
    ]
    argv += ["--clearenv", "--cap-drop", "ALL", "--hostname", "sandbox"]
    argv += ["--ro-bind", "/usr", "/usr", "--proc", "/proc", "--dev", "/dev"]
    for link in ("bin", "lib", "lib64", "sbin"):
        target = os.readlink(f"/{link}") if os.path.islink(f"/{link}") else None
        if target:
            argv += ["--symlink", target, f"/{link}"]
        elif os.path.isdir(f"/{link}"):
            argv += ["--ro-bind", f"/{link}", f"/{link}"]
    argv += ["--size", str(tmpfs_mb << 20), "--tmpfs", "/work", "--symlink", "/work/run", "/tmp"]
    argv += ["--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", "/work/run", "--setenv", "LANG", "C.UTF-8"]
    argv += ["--remount-ro", "/", "--chdir", "/work"]
    return [*argv, SANDBOX_PYTHON, "-I", "-S", "-c", LAUNCHER_SOURCE, "/work", "--pid1"]


def check_backend(name: str) -> None:
    if name not in BACKENDS:
        raise UserError(f"unknown sandbox backend {name!r}; choose one of {', '.join(BACKENDS)}")
    if name == "bwrap" and not shutil.which("bwrap"):
        raise UserError("bubblewrap is not installed; run `make test` as root or `apt-get install bubblewrap`")
    if not os.path.exists(SANDBOX_PYTHON):
        raise UserError(f"{SANDBOX_PYTHON} is missing; install Debian's python3-minimal")


def open_session(backend: str = "bwrap", *, tmpfs_mb: int = 128, allow_none: bool = False) -> Session:
    check_backend(backend)
    if backend == "bwrap":
        return Session(_popen(bwrap_argv(tmpfs_mb), **_drop_to_nobody()))
    if backend == "docker":
        from backend.sandbox.docker_backend import open_docker_session

        return open_docker_session(tmpfs_mb=tmpfs_mb)
    if not allow_none:
        raise UserError("backend 'none' has no isolation; pass --backend none explicitly to accept that")
    print("WARNING: sandbox backend 'none' gives NO isolation; never use it on untrusted code", file=sys.stderr)
    workdir = tempfile.mkdtemp(prefix="flab-none-")
    os.chmod(workdir, 0o777)
    argv = [SANDBOX_PYTHON, "-I", "-S", "-c", LAUNCHER_SOURCE, workdir]
    return Session(_popen(argv, **_drop_to_nobody()), cleanup=lambda: shutil.rmtree(workdir, ignore_errors=True))
