"""A sandbox session: one launcher (launcher.py) behind a wall, spoken to over pipes. The isolation
backends (backends.py: bwrap and none; docker_backend.py) each open one."""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import functools
import json
import os
import select
import struct
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

from backend.sandbox import admission, cgroups
from backend.sandbox.boot import launcher_image
from backend.sandbox.result import (
    NO_CGROUP,
    LoadReply,
    LoadRequest,
    MemoryUsage,
    Ready,
    RunReply,
    RunRequest,
    RunResult,
    ShellRequest,
    Staged,
    StageRequest,
    TestLimits,
    TestRequest,
    launcher_oom_killed,
)

NOBODY = 65534
# Host-side seconds spent in each phase of every test run in this process (setup: the last test's
# cleanup awaited, input staged, memory admitted and the cgroup armed; run: the launcher's fork,
# run and wait; teardown: output read, usage collected), and the number of tests.
# bench/judge_speed.py reads it.
PHASES: Counter = Counter()
# CPU seconds of every sandbox this process closed (its cgroup's counter, read as it closes: the
# launcher and every test's processes) and how many: bench/judge_speed.py and judge_scale.py read it.
SANDBOX_CPU: Counter = Counter()


class SandboxError(RuntimeError):
    """The sandbox itself failed (not the program): verdict SE, retried by the judge."""


class _Reading:
    """What `_capped` yields: the cgroup's reading of one run, taken once, when the run ends (or
    as soon as the launcher is found dead)."""

    __slots__ = ("cgroup", "usage")

    def __init__(self, cgroup: cgroups.SandboxCgroup | None):
        self.cgroup, self.usage = cgroup, None if cgroup else NO_CGROUP

    def read(self) -> MemoryUsage:
        if self.usage is None:
            self.usage = self.cgroup.end()
        return self.usage


class Session:
    """Host end of the launcher's length-prefixed JSON protocol over a pipe pair."""

    def __init__(
        self,
        proc: subprocess.Popen | None,
        cleanup=None,
        cgroup: cgroups.SandboxCgroup | None = None,
        launcher_pid: int | None = None,
    ):
        self.proc = proc
        self._cleanup = cleanup
        self.cgroup = cgroup
        self.accounting = cgroup.accounting if cgroup else "rlimits"
        self.broken = False
        self._admission: contextlib.ExitStack | None = None
        self._admitted_cap = 0
        self._in_test = threading.Lock()  # held from admission to usage read: not yieldable then
        self._marker_due = False  # a `test`'s closing byte, read only when the next step needs it
        if cgroup and cgroup.owned:
            # The launcher joins while its interpreter is still starting (a v1 migration waits for
            # an RCU grace period, which this overlaps), and before it runs any program.
            cgroup.add(launcher_pid or proc.pid)
        self._send_bytes(launcher_image())
        self._await_ready()

    def _await_ready(self) -> None:
        hello = self._recv(timeout=60)
        if "launcher_error" in hello or not Ready.decode(hello).ready:
            raise SandboxError(f"launcher did not start: {hello}")

    def load(
        self,
        language: str,
        source: str,
        compile_limits: TestLimits,
        headers: dict | None = None,
        *,
        return_binary: bool = False,
        binary: bytes | None = None,
        prelude: str | None = None,
    ) -> LoadReply:
        """Compile (C++) or parse (Python) the program, under the compile limits; or load a binary
        compiled earlier (`binary`); `return_binary` sends the compiled binary back. `prelude`
        (Python): code of ours that the program runs after, e.g. LiveCodeBench's imports, run once
        in the program's module in the launcher, so no test pays for it; never the program's code."""
        if binary is not None:
            language, binary_b64 = "binary", base64.b64encode(binary).decode()
        else:
            binary_b64 = None
        request = LoadRequest(language, source, compile_limits, headers or None, return_binary, binary_b64, prelude)
        msg = request.encode()
        with self._capped(compile_limits) as reading:
            reply = LoadReply.decode(self.call(msg, timeout=2 * compile_limits.cpu_s + 10))
        if reading.read().oom_killed and not reply.ok:
            error = f"compilation exceeded its memory limit ({compile_limits.memory_mb} MB)"
            reply = dataclasses.replace(reply, error=error)
        return reply

    def run(
        self,
        limits: TestLimits,
        input: str = "",
        *,
        files: dict | None = None,
        args: list | None = None,
        cmd: str | None = None,
        keep_dir: bool = False,
    ) -> RunResult:
        """One test: its input in place, run under its cap; the measurements and the output.
        `cmd` runs a shell command instead of the loaded program (agentic rollouts). A plain
        test (input only) is one round trip, `test`; files, kept folders and commands are staged
        first, `stage` + `run`/`shell`."""
        t0 = time.perf_counter()
        if cmd is None and not files and not keep_dir:
            data = input.encode("utf-8", "surrogateescape")
            msg, staged = TestRequest(limits, args or [], len(data)).encode(), len(data)
        else:
            Staged.decode(self.call(StageRequest(input, files or {}, keep_dir or cmd is not None).encode(), 30))
            msg = ShellRequest(cmd, limits).encode() if cmd else RunRequest(limits, args or []).encode()
            data, staged = b"", 0
        with self._capped(limits, staged) as reading:
            t1 = time.perf_counter()
            try:
                reply = RunReply.decode(self.call(msg, timeout=limits.wall_s + 10, payload=data))
            except SandboxError:
                if not reading.read().oom_killed:
                    raise
                # the kernel's OOM killer took the launcher itself: still the program's memory
                reply = launcher_oom_killed()
                msg["op"] = "killed"
            t2 = time.perf_counter()
            stdout = self._read_stdout(reply.stdout_bytes)
            # A `test` ends with one byte, sent once its input, output and files are freed. The next
            # baseline must wait for it, not this test's accounting and checking.
            self._marker_due = msg["op"] == "test" and not self.broken
        usage = reading.read()
        measures = reply.measures() | ({} if usage.mem_mb is None else {"mem_mb": usage.mem_mb})
        result = RunResult(
            **measures, stdout=stdout, accounting=self.accounting, oom_killed=usage.oom_killed, cap_hit=usage.cap_hit
        )
        PHASES.update(setup=t1 - t0, run=t2 - t1, teardown=time.perf_counter() - t2, tests=1)
        return result

    @contextlib.contextmanager
    def _capped(self, limits: TestLimits, staged_bytes: int = 0):
        """Admit the test to the host's memory, cap its cgroup, and collect what it used.
        `staged_bytes`: input the launcher writes to its tmpfs after this, counted as baseline."""
        reading = _Reading(self.cgroup)
        self._await_marker()
        if self.cgroup is None:
            yield reading
            return
        with self._in_test:
            try:
                self._admit((limits.memory_mb + cgroups.LAUNCHER_SLACK_MB) << 20)
                self.cgroup.begin(limits.memory_mb, limits.max_procs, staged_bytes)
            except OSError as exc:  # the container (and its cgroup) went away while idle: retried afresh
                self.broken = True
                raise SandboxError(f"the sandbox's cgroup is gone: {exc}") from exc
            yield reading
            reading.read()

    def _admit(self, cap_bytes: int) -> None:
        """Hold the host's admission for this cap while consecutive tests share it."""
        if self._admission and self._admitted_cap == cap_bytes:
            return
        self._release()
        stack = contextlib.ExitStack()
        key, usage_file = f"{os.getpid()}:{id(self)}", str(self.cgroup.usage_file())
        stack.enter_context(admission.admitted(key, cap_bytes, usage_file, holder=self))
        self._admission, self._admitted_cap = stack, cap_bytes

    def yield_admission(self) -> bool:
        """Between tests, give the admission back to another sandbox of this process that waits
        for host memory (admission.py); the next test is admitted afresh."""
        if self._admission is None or not self._in_test.acquire(blocking=False):
            return False
        try:
            self._release()
        finally:
            self._in_test.release()
        return True

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

    def _await_marker(self) -> None:
        """The last `test`'s closing byte: the launcher has freed what that test left."""
        if self._marker_due:
            self._marker_due = False
            try:
                self._read_exact(1, time.monotonic() + 60)
            except SandboxError:
                self.broken = True
                raise

    def call(self, msg: dict, timeout: float, payload: bytes = b"") -> dict:
        """One message (and `payload`, raw bytes after it, in the same write); its reply."""
        data = json.dumps(msg).encode()
        try:
            self._await_marker()
            self._send_bytes(struct.pack(">I", len(data)) + data + payload)
            reply = self._recv(timeout)
        except SandboxError:
            self.broken = True
            raise
        if "launcher_error" in reply:
            self.broken = self.broken or bool(payload)  # no reuse (docker) after a failed `test`
            raise SandboxError(reply["launcher_error"])
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
            if self.cgroup.owned:  # a docker container's group outlives this session: not counted
                with contextlib.suppress(OSError):
                    SANDBOX_CPU.update(cpu_s=self.cgroup.cpu_seconds(), sandboxes=1)
            self.cgroup.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def drop_to_nobody() -> dict:
    if os.geteuid() != 0:
        return {}
    return {"user": NOBODY, "group": NOBODY, "extra_groups": []}


def popen(argv: list[str], cwd: str = "/", **kw) -> subprocess.Popen:
    return subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env={}, **kw
    )


def only_child(pid: int, timeout_s: float = 5.0) -> int:
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
