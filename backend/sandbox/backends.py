"""Isolation backends. Each opens a Session: one launcher (launcher.py) behind a wall.

- bwrap (default): a fresh namespace set per program, run as `nobody` when we are root, so
  RLIMIT_NPROC is enforced (the kernel never enforces it for uid 0).
- docker: one long-lived container per worker (see docker_backend.py).
- none: no isolation, refused unless chosen explicitly, and loud about it.

Accounting (cgroups.py): where cgroups can be made, each bwrap/none session gets its own, and a
docker session uses its container's; every test's CPU and memory are then those of all its
processes. Elsewhere the judge says so once and falls back to per-process rlimits.
"""

from __future__ import annotations

import base64
import contextlib
import functools
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
from backend.sandbox import admission, cgroups

LAUNCHER_SOURCE = (Path(__file__).parent / "launcher.py").read_text()
SANDBOX_PYTHON = "/usr/bin/python3"  # Debian's interpreter: readable by nobody, outside our venv
NOBODY = 65534
BACKENDS = ("bwrap", "docker", "none")


class SandboxError(RuntimeError):
    """The sandbox itself failed (not the program): verdict SE, retried by the judge."""


class Session:
    """Host end of the launcher's length-prefixed JSON protocol over a pipe pair."""

    def __init__(
        self, proc: subprocess.Popen | None, cleanup=None, cgroup: cgroups.SandboxCgroup | None = None,
        launcher_pid: int | None = None,
    ):  # fmt: skip
        self.proc = proc
        self._cleanup = cleanup
        self.cgroup = cgroup
        self.accounting = cgroup.layout.accounting if cgroup else "rlimits"
        self.broken = False
        self._admission: contextlib.ExitStack | None = None
        self._admitted_cap = 0
        if cgroup and cgroup.owned:
            # The launcher joins while its interpreter is still starting (a v1 migration waits for
            # an RCU grace period, which this overlaps), and before it runs any program.
            cgroup.add(launcher_pid or proc.pid)
        self._await_ready()

    def _await_ready(self) -> None:
        hello = self._recv(timeout=60)
        if not hello.get("ready"):
            raise SandboxError(f"launcher did not start: {hello}")

    def load(
        self, language: str, source: str, compile_limits: dict, headers: dict | None = None, *,
        return_binary: bool = False, binary: bytes | None = None,
    ) -> dict:  # fmt: skip
        """Compile (C++) or parse (Python) the program, under the compile limits; or load a binary
        compiled earlier (`binary`); `return_binary` sends the compiled binary back."""
        msg = {"op": "load", "language": language, "source": source, "compile_limits": compile_limits}
        if headers:
            msg["headers"] = headers
        if return_binary:
            msg["return_binary"] = True
        if binary is not None:
            msg.update(language="binary", binary_b64=base64.b64encode(binary).decode())
        with self._capped(compile_limits) as usage:
            reply = self.call(msg, timeout=2 * compile_limits["cpu_s"] + 10)
        if usage.get("oom_killed") and not reply["ok"]:
            reply["error"] = f"compilation exceeded its memory limit ({compile_limits['memory_mb']} MB)"
        return reply

    def run(
        self, limits: dict, input: str = "", *, files: dict | None = None, args: list | None = None,
        cmd: str | None = None, keep_dir: bool = False,
    ) -> dict:  # fmt: skip
        """One test: stage its input, run it under its cap, return the measurements and output.
        `cmd` runs a shell command instead of the loaded program (agentic rollouts)."""
        self.call({"op": "stage", "input": input, "files": files or {}, "keep_dir": keep_dir or cmd is not None}, 30)
        msg = (
            {"op": "shell", "cmd": cmd, "limits": limits}
            if cmd
            else {"op": "run", "limits": limits, "args": args or []}
        )
        with self._capped(limits) as usage:
            try:
                reply = self.call(msg, timeout=limits["wall_s"] + 10)
            except SandboxError:
                usage.update(self.cgroup.end() if self.cgroup else {})
                if not usage.get("oom_killed"):
                    raise
                # the kernel's OOM killer took the launcher itself: still the program's memory
                reply = {"exit_code": None, "signal": 9, "cpu_s": 0.0, "wall_s": 0.0, "mem_mb": 0.0,
                         "timed_out": False, "stdout_bytes": 0, "stderr": ""}  # fmt: skip
            reply["stdout"] = self._read_stdout(reply.pop("stdout_bytes"))
        reply["accounting"] = self.accounting
        reply["oom_killed"] = bool(usage.get("oom_killed"))
        reply["cap_hit"] = bool(usage.get("cap_hit"))
        if usage.get("mem_mb") is not None:
            reply["mem_mb"] = usage["mem_mb"]
        return reply

    @contextlib.contextmanager
    def _capped(self, limits: dict):
        """Admit the test to the host's memory, cap its cgroup, and collect what it used."""
        usage: dict = {}
        if self.cgroup is None:
            yield usage
            return
        self._admit((limits["memory_mb"] + cgroups.LAUNCHER_SLACK_MB) << 20)
        self.cgroup.begin(limits["memory_mb"], limits["max_procs"])
        yield usage
        if not usage:
            usage.update(self.cgroup.end())

    def _admit(self, cap_bytes: int) -> None:
        """Hold the host's admission for this cap while consecutive tests share it."""
        if self._admission and self._admitted_cap == cap_bytes:
            return
        self._release()
        stack = contextlib.ExitStack()
        stack.enter_context(admission.admitted(f"{os.getpid()}:{id(self)}", cap_bytes, str(self.cgroup.usage_file())))
        self._admission, self._admitted_cap = stack, cap_bytes

    def _release(self) -> None:
        if self._admission:
            self._admission.close()
            self._admission = None

    def _read_stdout(self, size: int) -> str:
        if not size:
            return ""
        try:
            return self._read_exact(size, time.monotonic() + 60).decode("utf-8", "replace")
        except SandboxError:
            if self.broken:
                return ""
            raise

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
        self._release()
        if self.cgroup:
            self.cgroup.remove()

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


def _only_child(pid: int, timeout_s: float = 5.0) -> int:
    """bwrap's one child: the launcher, as the host sees it."""
    deadline = time.monotonic() + timeout_s
    while True:
        kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        if kids:
            return int(kids[0])
        if time.monotonic() > deadline:
            raise SandboxError("bwrap started no launcher")
        time.sleep(0.001)


@functools.cache
def cgroup_layout() -> cgroups.Layout | None:
    """Detected once per process; a fallback is announced once, plainly."""
    layout = cgroups.detect()
    if isinstance(layout, str):
        print(
            f"frontier-lab judge: no cgroup accounting ({layout}); falling back to per-process rlimits, "
            "so a program that starts several processes can use more CPU and memory than its limits",
            file=sys.stderr,
        )
        return None
    return layout


def bwrap_argv(tmpfs_mb: int, counter_arg: list[str] | None = None) -> list[str]:
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
    return [*argv, SANDBOX_PYTHON, "-I", "-S", "-c", LAUNCHER_SOURCE, "/work", "--pid1", *(counter_arg or [])]


def check_backend(name: str) -> None:
    if name not in BACKENDS:
        raise UserError(f"unknown sandbox backend {name!r}; choose one of {', '.join(BACKENDS)}")
    if name == "bwrap" and not shutil.which("bwrap"):
        raise UserError("bubblewrap is not installed; run `make test` as root or `apt-get install bubblewrap`")
    if not os.path.exists(SANDBOX_PYTHON):
        raise UserError(f"{SANDBOX_PYTHON} is missing; install Debian's python3-minimal")


def open_session(backend: str = "bwrap", *, tmpfs_mb: int = 128, allow_none: bool = False) -> Session:
    check_backend(backend)
    if backend == "docker":
        from backend.sandbox.docker_backend import open_docker_session

        return open_docker_session(tmpfs_mb=tmpfs_mb)
    if backend == "none" and not allow_none:
        raise UserError("backend 'none' has no isolation; pass --backend none explicitly to accept that")
    layout = cgroup_layout()
    group = cgroups.SandboxCgroup.create(layout) if layout else None
    try:
        return _open_local(backend, tmpfs_mb, group)
    except BaseException:
        if group:
            group.remove()
        raise


def _open_local(backend: str, tmpfs_mb: int, group: cgroups.SandboxCgroup | None) -> Session:
    """bwrap or none, with the cgroup's CPU counter opened read-only for the launcher."""
    counter_fd = os.open(group.cpu_counter()[0], os.O_RDONLY) if group else None
    counter_arg = ["--cpu-counter", f"{counter_fd}:{group.cpu_counter()[1]}"] if group else []
    pass_fds = (counter_fd,) if group else ()
    try:
        if backend == "bwrap":
            proc = _popen(bwrap_argv(tmpfs_mb, counter_arg), pass_fds=pass_fds, **_drop_to_nobody())
            launcher_pid = _only_child(proc.pid) if group else None  # bwrap's child is the launcher
            cleanup = None
        else:
            print("WARNING: sandbox backend 'none' gives NO isolation; never use it on untrusted code", file=sys.stderr)
            workdir = tempfile.mkdtemp(prefix="flab-none-")
            os.chmod(workdir, 0o777)
            argv = [SANDBOX_PYTHON, "-I", "-S", "-c", LAUNCHER_SOURCE, workdir, *counter_arg]
            proc = _popen(argv, pass_fds=pass_fds, **_drop_to_nobody())
            launcher_pid = proc.pid
            cleanup = functools.partial(shutil.rmtree, workdir, ignore_errors=True)
    finally:
        if counter_fd is not None:
            os.close(counter_fd)
    return Session(proc, cleanup=cleanup, cgroup=group, launcher_pid=launcher_pid)
