"""The messages that cross the launcher boundary, typed, and the record of one run in the sandbox (a
judged test, a checker, an agent's command, a reference build) as it crosses launcher → session → its
reader. Declared here once.

launcher.py runs inside the sandbox and cannot import this package, so what crosses the pipe is JSON:
the host encodes `TestLimits` with `encode()` and decodes every reply with `decode()` into
`LoadReply` or `RunReply`, which refuses a missing, unexpected or mistyped key (`WireError`) at the
first reply, not as a KeyError somewhere downstream. tests/sandbox/test_run_record.py runs a real
program in a real sandbox and checks the keys it sent. The session adds what the host measures (the
cgroup's `MemoryUsage`) and the output, and hands on one `RunResult`.
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import typing
from dataclasses import dataclass

# The launcher's reply also says how many bytes of output follow it on the pipe; the session reads
# them into `RunResult.stdout` and drops the count.
STDOUT_SIZE = "stdout_bytes"


class WireError(TypeError):
    """A message across the launcher boundary that does not have its type's keys: a renamed or
    missing field on one side. A bug in frontier-lab, never the program's fault, so not SE."""


@functools.cache
def _wire_types(cls: type) -> dict[str, tuple[type, ...]]:
    """Each field's accepted JSON types (an int is a float on the wire; None where the field is optional)."""
    out = {}
    for name, hint in typing.get_type_hints(cls).items():
        args = typing.get_args(hint) or (hint,)
        types = tuple(type(None) if a is None else a for a in args)
        out[name] = (*types, int) if float in types else types
    return out


def _decode(cls: type, data: dict):
    names = {f.name for f in dataclasses.fields(cls)}
    required = {f.name for f in dataclasses.fields(cls) if f.default is dataclasses.MISSING}
    missing, unexpected = sorted(required - data.keys()), sorted(data.keys() - names)
    if missing or unexpected:
        raise WireError(f"{cls.__name__}: missing {missing}, unexpected {unexpected} in {sorted(data)}")
    types = _wire_types(cls)
    wrong = [k for k, v in data.items() if not isinstance(v, types[k])]
    if wrong:
        raise WireError(f"{cls.__name__}: {', '.join(f'{k}={data[k]!r}' for k in wrong)} of the wrong type")
    return cls(**data)


def _encode(message) -> dict:
    return {f.name: getattr(message, f.name) for f in dataclasses.fields(message)}


@dataclass(frozen=True, slots=True)
class TestLimits:
    """One run's limits as the launcher applies them (launcher_limits.rlimits, launcher.run_child):
    JudgeLimits.for_test() and for_compile() make them."""

    __test__ = False  # not a pytest class

    cpu_s: float  # CPU seconds, all the run's processes (the launcher's clock)
    wall_s: float  # the wall backstop for sleepers
    memory_mb: int  # the cgroup's cap (RLIMIT_AS without a cgroup)
    output_mb: int  # the output file's cap (RLIMIT_FSIZE): more is OLE
    max_procs: int  # processes and threads (RLIMIT_NPROC)

    def encode(self) -> dict:
        return _encode(self)

    @classmethod
    def decode(cls, data: dict) -> TestLimits:
        return _decode(cls, data)


def _request(op: str, message, optional: tuple[str, ...] = ()) -> dict:
    """A request's JSON: its op, its fields (limits encoded), optional fields only when set."""
    data = {"op": op}
    for f in dataclasses.fields(message):
        value = getattr(message, f.name)
        if f.name in optional and value in (None, False):
            continue
        data[f.name] = value.encode() if isinstance(value, TestLimits) else value
    return data


@dataclass(frozen=True, slots=True)
class LoadRequest:
    """`load`: parse (Python) or compile (C++) a program under its compile limits, or load a binary
    compiled earlier (language "binary", binary_b64)."""

    language: str  # python | cpp | binary
    source: str
    compile_limits: TestLimits
    headers: dict[str, str] | None = None  # files beside the source, e.g. testlib.h
    return_binary: bool = False  # send the compiled binary back (LoadReply.binary_b64)
    binary_b64: str | None = None
    prelude: str | None = None  # Python: our own code run once in the program's module before any test

    def encode(self) -> dict:
        return _request("load", self, ("headers", "return_binary", "binary_b64", "prelude"))


@dataclass(frozen=True, slots=True)
class StageRequest:
    """`stage`: the input and files in place before the host takes its memory baseline."""

    input: str
    files: dict[str, str]
    keep_dir: bool  # keep the work folder's files from the last run (an agent's terminal)

    def encode(self) -> dict:
        return _request("stage", self)


@dataclass(frozen=True, slots=True)
class TestRequest:
    """`test`: one test in one round trip; `input_bytes` raw bytes of input follow the message."""

    __test__ = False  # not a pytest class

    limits: TestLimits
    args: list[str]
    input_bytes: int

    def encode(self) -> dict:
        return _request("test", self)


@dataclass(frozen=True, slots=True)
class RunRequest:
    """`run`: the loaded program on the staged input."""

    limits: TestLimits
    args: list[str]

    def encode(self) -> dict:
        return _request("run", self)


@dataclass(frozen=True, slots=True)
class ShellRequest:
    """`shell`: a shell command in the kept work folder (agentic rollouts)."""

    cmd: str
    limits: TestLimits

    def encode(self) -> dict:
        return _request("shell", self)


@dataclass(frozen=True, slots=True)
class Ready:
    """The launcher's first message, once it is up."""

    ready: bool
    pid: int  # the launcher's pid, as its namespace sees it

    @classmethod
    def decode(cls, data: dict) -> Ready:
        return _decode(cls, data)


@dataclass(frozen=True, slots=True)
class Staged:
    """The launcher's answer to `stage`: the input and files are in place."""

    ok: bool

    @classmethod
    def decode(cls, data: dict) -> Staged:
        return _decode(cls, data)


@dataclass(frozen=True, slots=True)
class LoadReply:
    """The launcher's answer to `load`: the program parsed or compiled (`ok`), else why not."""

    ok: bool
    error: str | None  # the compiler's or parser's message; None when ok
    binary_b64: str | None = None  # the compiled binary, base64, when `return_binary` asked for it

    @property
    def binary(self) -> bytes | None:
        return None if self.binary_b64 is None else base64.b64decode(self.binary_b64)

    def encode(self) -> dict:
        data = _encode(self)
        return data if self.binary_b64 is not None else {k: v for k, v in data.items() if k != "binary_b64"}

    @classmethod
    def decode(cls, data: dict) -> LoadReply:
        return _decode(cls, data)


@dataclass(frozen=True, slots=True)
class LauncherReply:
    """What the launcher measures of one run (launcher.run_child), under these JSON keys."""

    exit_code: int | None  # the exit status; None when a signal ended the run
    # the signal that ended it: SIGKILL (the launcher's CPU clock or wall backstop, the OOM killer),
    # SIGXCPU, SIGXFSZ (the output cap), a crash; None after a normal exit
    signal: int | None
    # CPU seconds: of every process of the run (the cgroup's counter less the launcher's own), or,
    # under rlimits accounting, of the direct child alone (wait4)
    cpu_s: float
    wall_s: float  # wall-clock seconds from the fork to the reap
    # peak memory, MB. Sent by the launcher as the largest single process's peak resident set
    # (wait4's ru_maxrss, the interpreter's pages included); where a cgroup reads a peak, the
    # session replaces it with that peak above the baseline (MemoryUsage.mem_mb). `accounting` says which.
    mem_mb: float
    # the launcher killed the run at its wall limit (limits["wall_s"], less the time its main process
    # waited for a CPU): a sleeper. A run over its CPU limit is killed too but leaves this False.
    wall_backstop_fired: bool
    stderr: str  # the last 8 kB of its standard error, decoded (errors replaced)


@dataclass(frozen=True, slots=True)
class RunReply(LauncherReply):
    """The launcher's reply to `test`, `run` or `shell`, as it arrives: its measures and how many bytes
    of output follow it on the pipe."""

    stdout_bytes: int

    def encode(self) -> dict:
        return _encode(self)

    @classmethod
    def decode(cls, data: dict) -> RunReply:
        return _decode(cls, data)

    def measures(self) -> dict:
        """The launcher's measures, by LauncherReply's field names (what RunResult takes from it)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(LauncherReply)}


@dataclass(frozen=True, slots=True)
class RunResult(LauncherReply):
    """One run as the session hands it on: the launcher's measures, then the host's."""

    stdout: str  # its standard output, up to the output cap + 1 byte, decoded (errors replaced)
    # how cpu_s and mem_mb were measured: cgroup-v1, cgroup-v2, cgroup-v2-per-test,
    # cgroup-v2-largest-process (cgroup_detect.PEAK_ACCOUNTING) or rlimits… (no cgroup: mem_mb is ru_maxrss)
    accounting: str
    oom_killed: bool  # the kernel's OOM killer fired in the sandbox's cgroup during the run
    cap_hit: bool  # the run reached its cgroup's memory cap (a limit hit, or a peak within a huge page of it)


@dataclass(frozen=True, slots=True)
class MemoryUsage:
    """What the sandbox's cgroup saw of one run (cgroups.SandboxCgroup.end), copied by the session
    into RunResult's fields of the same names."""

    # the cgroup's peak above the baseline (its use when the run began, launcher and staged input
    # included), over all the run's processes; None where no peak can be read (the launcher's stands)
    mem_mb: float | None
    oom_killed: bool
    cap_hit: bool


NO_CGROUP = MemoryUsage(None, False, False)  # a session without a cgroup (rlimits accounting)


def launcher_oom_killed() -> RunReply:
    """The launcher's reply for a run whose launcher the OOM killer took: signal 9, nothing measured
    (the cgroup's peak, when there is one, replaces mem_mb)."""
    return RunReply(
        exit_code=None,
        signal=9,
        cpu_s=0.0,
        wall_s=0.0,
        mem_mb=0.0,
        wall_backstop_fired=False,
        stderr="",
        stdout_bytes=0,
    )
