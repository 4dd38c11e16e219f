"""OpenAI-compatible servers a job starts itself (`--serve "COMMAND"`), one per checkpoint.

The command is a template: `{model}` (the checkpoint folder), `{port}`, and optionally `{host}`,
`{seed}` and `{tensor_parallel_size}` are filled in, e.g. `vllm serve {model} --port {port}`.
A server runs on a free loopback port, in a process group of its own, with the environment of the
job: CUDA_VISIBLE_DEVICES is the job's GPU lease (backend/gpus.py), so the server sees those GPUs
alone. It is ready once `/v1/models` (or `/health`) answers; one that exits or stays silent past
the timeout is refused in one line ending with its last log lines. `stop()` ends the whole group
and returns only when none of its processes is left, so the next checkpoint's server never starts
beside the memory of the last. If the job's process dies without stopping it (kill -9), the kernel
sends the server SIGTERM (PR_SET_PDEATHSIG).
"""

from __future__ import annotations

import collections
import ctypes
import os
import shlex
import signal
import socket
import string
import subprocess
import threading
import time
import urllib.error
import urllib.request

import psutil

from backend.errors import UserError

HOST = "127.0.0.1"
REQUIRED = ("model", "port")
PLACEHOLDERS = (*REQUIRED, "host", "seed", "tensor_parallel_size")
TAIL_LINES = 6  # of the server's log, in the one-line refusal
POLL_S = 0.5
STOP_GRACE_S = 30.0  # SIGTERM, then SIGKILL
PORT_TRIES = 3  # a port taken between our pick and the server's bind: another port


def check_template(template: str) -> str:
    """The template's placeholders, checked: {model} and {port} required, nothing unknown."""
    try:
        names = {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}
    except ValueError as exc:
        raise UserError(f"serve {template!r}: {exc}; write literal braces as {{{{ and }}}}") from None
    unknown = sorted(names - set(PLACEHOLDERS))
    if unknown:
        raise UserError(
            f"serve: unknown placeholder {{{unknown[0]}}}; the command may use "
            + ", ".join(f"{{{p}}}" for p in PLACEHOLDERS)
        )
    missing = [p for p in REQUIRED if p not in names]
    if missing:
        raise UserError(
            f"serve needs {{{missing[0]}}} in the command (the job fills in the checkpoint folder and a free port), "
            "e.g. 'vllm serve {model} --port {port}'"
        )
    if not shlex.split(template):
        raise UserError(
            "serve is empty; give the command that starts the server, e.g. 'vllm serve {model} --port {port}'"
        )
    return template


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def _parent_death_signal():
    """A preexec_fn that asks the kernel to SIGTERM the server when the job's process dies (Linux);
    resolved here, in the parent, so the forked child calls into libc without importing anything."""
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    pr_set_pdeathsig = 1

    def arm() -> None:
        prctl(pr_set_pdeathsig, signal.SIGTERM)

    return arm


def group_members(pgid: int) -> list[psutil.Process]:
    out = []
    for p in psutil.process_iter():
        try:
            if os.getpgid(p.pid) == pgid and p.status() != psutil.STATUS_ZOMBIE:
                out.append(p)
        except (psutil.NoSuchProcess, ProcessLookupError, PermissionError):
            continue
    return out


class ServerProcess:
    """One server for one checkpoint: start() → ready at `url`; stop() → its processes are gone."""

    def __init__(
        self,
        template: str,
        model: str,
        *,
        seed: int = 0,
        tensor_parallel_size: int = 1,
        start_timeout_s: float = 900.0,
        echo: bool = True,
    ):
        self.template, self.model, self.seed = check_template(template), model, seed
        self.tensor_parallel_size, self.start_timeout_s, self.echo = tensor_parallel_size, start_timeout_s, echo
        self.proc: subprocess.Popen | None = None
        self.port: int | None = None
        self.lines: collections.deque[str] = collections.deque(maxlen=200)
        self.starts = 0

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def argv(self) -> list[str]:
        fields = {"model": self.model, "port": self.port, "host": HOST, "seed": self.seed}
        fields["tensor_parallel_size"] = self.tensor_parallel_size
        return [part.format(**fields) for part in shlex.split(self.template)]

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> ServerProcess:
        """Start the server and wait until it answers; a port lost to another process is picked again."""
        for attempt in range(1, PORT_TRIES + 1):
            self.port = free_port()
            self._spawn()
            try:
                self._wait_ready()
                return self
            except UserError:
                port_taken = any("address already in use" in line.lower() for line in self.lines)
                self.stop()
                if not port_taken or attempt == PORT_TRIES:
                    raise
        raise AssertionError("unreachable")

    def _spawn(self) -> None:
        argv = self.argv
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        self._say(f"starting {shlex.join(argv)}" + (f" on GPU(s) {visible}" if visible is not None else ""))
        try:
            self.proc = subprocess.Popen(
                argv,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # its own process group: stop() ends every process it started
                preexec_fn=_parent_death_signal(),
                env=dict(os.environ),  # the job's lease: CUDA_VISIBLE_DEVICES names its GPUs
            )
        except OSError as exc:
            raise UserError(f"serve: cannot start {argv[0]!r}: {exc.strerror}") from None
        self.starts += 1
        self.lines.clear()
        threading.Thread(target=self._read, args=(self.proc,), name=f"server-log-{self.proc.pid}", daemon=True).start()

    def _read(self, proc: subprocess.Popen) -> None:
        for raw in iter(proc.stdout.readline, b""):
            line = raw.decode(errors="replace").rstrip()
            self.lines.append(line)
            if self.echo:  # into the job's log
                print(f"[server] {line}", flush=True)

    def _say(self, line: str) -> None:
        if self.echo:
            print(f"[server] {line}", flush=True)

    def tail(self, n: int = TAIL_LINES) -> str:
        lines = [line.strip() for line in self.lines if line.strip()][-n:]
        return " | ".join(lines) if lines else "(it printed nothing)"

    def _wait_ready(self) -> None:
        began = time.monotonic()
        while time.monotonic() - began < self.start_timeout_s:
            if not self.alive():
                code = self.proc.wait()
                time.sleep(0.2)  # the last lines of its pipe
                raise UserError(
                    f"serve: the server exited with code {code} before it answered on {self.url}; "
                    f"its log ends: {self.tail()}"
                )
            if ready(self.url):
                self._say(f"ready on {self.url} after {time.monotonic() - began:.1f} s")
                return
            time.sleep(POLL_S)
        raise UserError(
            f"serve: the server did not answer on {self.url}/v1/models within {self.start_timeout_s:g} s "
            f"(raise server_start_timeout_s for a large model); its log ends: {self.tail()}"
        )

    def stop(self) -> None:
        """SIGTERM to the whole group, SIGKILL after STOP_GRACE_S; returns when none of it is left."""
        if self.proc is None:
            return
        pgid = self.proc.pid  # start_new_session: the group is named after its leader
        for sig, wait_s in ((signal.SIGTERM, STOP_GRACE_S), (signal.SIGKILL, STOP_GRACE_S)):
            try:
                os.killpg(pgid, sig)
            except ProcessLookupError:
                pass
            deadline = time.monotonic() + wait_s
            while time.monotonic() < deadline and (self.proc.poll() is None or group_members(pgid)):
                time.sleep(0.1)
            if self.proc.poll() is not None and not group_members(pgid):
                break
        left = group_members(pgid)
        self.proc = None
        if left:
            raise UserError(f"serve: processes {[p.pid for p in left]} of the stopped server would not end")
        self._say("stopped")


def ready(url: str, timeout: float = 5.0) -> bool:
    """Whether an OpenAI-compatible server at `url` lists a model (`/v1/models`) or says it is healthy."""
    for path in ("/v1/models", "/health"):
        try:
            with urllib.request.urlopen(url + path, timeout=timeout) as r:
                if r.status == 200:
                    return True
        except (urllib.error.URLError, OSError, ValueError):
            continue
    return False


def root_url(url: str) -> str:
    """`http://host:8000/v1/` → `http://host:8000`: the server's root, as users write it either way."""
    url = url.strip().rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url
